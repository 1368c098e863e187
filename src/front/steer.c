// SPDX-License-Identifier: MIT
/* steer.c - netfront TX steering (hash, xps, xps-safe), pvnet_send_flow and shared-vif locking */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "front/front.h"

/*
 * Theory of Operation
 *
 * Which TX queue a frame takes is a per-vif policy (pvnet.h, docs/steering.md):
 *
 *   hash      queue = flow_hash(frame) % queues.  A flow never changes
 *             queue, so it is never reordered (Linux netfront's choice).
 *   xps       queue = cpu % queues, the sending thread's current CPU.  A
 *             sender that migrates takes its flow along; frames of the
 *             flow still queued on the old ring may then be overtaken by
 *             the new ring's (the field report of seed 3).
 *   xps-safe  as xps, but a flow moves only when none of its frames is in
 *             flight.  A bounded table of PVNET_STEER_FLOWS entries,
 *             indexed by the flow hash, holds per entry the queue and the
 *             number of frames in flight on it, packed in one 32-bit word.
 *             The pick is one compare-and-swap that both chooses the queue
 *             (the recorded one while frames are in flight, else the
 *             CPU's) and counts the frame as in flight; the TX response of
 *             the frame's first slot (front_queue_tx_reap, under the same
 *             queue's ownership) counts it out.  Because choosing and
 *             counting are one atomic step, a second thread sending a flow
 *             that shares the entry can never move it between the two.
 *             Entries shared by several flows move them together, which
 *             only makes moves rarer.
 *
 * Flow hash: FNV-1a over the MAC addresses and, for IPv4/IPv6, protocol,
 * addresses and TCP/UDP ports (not for IPv4 fragments), finished with
 * murmur3's fmix32 so that "% queues" and the table index use well-mixed
 * bits.  The guest hashes its own traffic: no key is needed.
 *
 * Threads.  The data calls of a vif are lock-free as long as each queue
 * has one thread at a time.  pvnet_vif_set_steering() makes the vif
 * "shared": pvnet_send_flow() may then run on any number of threads, and
 * every data call takes its queue's mutex once per call (pvnet_send_flow
 * once per run of frames bound for the same queue), never per frame.  So a
 * queue is still driven by one thread at a time, whichever thread that is.
 * The CPU source (sched_getcpu, or the application's for tests) is read
 * once per frame.
 */

/* Frames of one run of pvnet_send_flow() sent under one lock: a NAPI-sized batch. */
#define FLOW_RUN_MAX 64u

#define ETH_HLEN       14u
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86ddu
#define ETHERTYPE_VLAN 0x8100u
#define IPV4_FRAG_MASK 0x3fffu /* MF and fragment offset */
#define FNV_OFFSET     2166136261u
#define FNV_PRIME      16777619u

_Static_assert((PVNET_STEER_FLOWS & (PVNET_STEER_FLOWS - 1)) == 0, "flow table: power of two");
_Static_assert(PVNET_STEER_FLOWS < UINT16_MAX, "flow entries fit tx_flow");
_Static_assert(PVNET_MAX_QUEUES <= 255 && PVNET_MAX_QUEUES * PVNET_RING_SIZE < FRONT_FLOW_INFLIGHT,
	       "flow entry packs queue and in-flight count");

static const char *const policy_names[] = {
    [PVNET_STEER_HASH] = "hash",
    [PVNET_STEER_XPS] = "xps",
    [PVNET_STEER_XPS_SAFE] = "xps-safe",
};

int pvnet_steering_parse(const char *name)
{
	for (int i = 0; name && i < (int)(sizeof(policy_names) / sizeof(policy_names[0])); i++)
		if (strcmp(name, policy_names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *pvnet_steering_name(int policy)
{
	if (policy < 0 || policy >= (int)(sizeof(policy_names) / sizeof(policy_names[0])))
		return NULL;
	return policy_names[policy];
}

/**
 * front_steer_init() - set the policy and forget every flow
 * @st: the state
 * @policy: enum pvnet_steering
 * @nq: queues (>= 1)
 * @cpu: CPU source, NULL for sched_getcpu()
 * @cpu_arg: its argument
 */
void front_steer_init(struct front_steer *st, int policy, unsigned int nq, pvnet_cpu_fn cpu,
		      void *cpu_arg)
{
	st->policy = policy;
	st->nq = nq ? nq : 1;
	st->cpu = cpu;
	st->cpu_arg = cpu_arg;
	for (unsigned int i = 0; i < PVNET_STEER_FLOWS; i++)
		atomic_store_explicit(&st->flows[i], 0, memory_order_relaxed);
}

static uint32_t fnv(uint32_t h, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

/**
 * front_steer_flow_hash() - the flow hash of a frame
 * @frame: the frame
 * @len: its length
 *
 * Pure.  Return: the hash (0 for a frame shorter than an Ethernet header)
 */
uint32_t front_steer_flow_hash(const void *frame, uint32_t len)
{
	const uint8_t *f = frame;
	uint32_t h = FNV_OFFSET, l3 = ETH_HLEN, l4 = 0;
	uint16_t et;
	uint8_t proto = 0;

	if (!f || len < ETH_HLEN)
		return 0;
	h = fnv(h, f, 12);
	et = (uint16_t)(f[12] << 8 | f[13]);
	if (et == ETHERTYPE_VLAN && len >= ETH_HLEN + 4) {
		et = (uint16_t)(f[16] << 8 | f[17]);
		l3 += 4;
	}
	if (et == ETHERTYPE_IPV4 && len >= l3 + 20) {
		proto = f[l3 + 9];
		h = fnv(h, &proto, 1);
		h = fnv(h, f + l3 + 12, 8);
		l4 = l3 + (f[l3] & 0x0fu) * 4u;
		if ((f[l3 + 6] << 8 | f[l3 + 7]) & IPV4_FRAG_MASK)
			proto = 0; /* a fragment has no ports: stay with the flow's addresses */
	} else if (et == ETHERTYPE_IPV6 && len >= l3 + 40) {
		proto = f[l3 + 6];
		h = fnv(h, &proto, 1);
		h = fnv(h, f + l3 + 8, 32);
		l4 = l3 + 40;
	}
	if ((proto == 6 || proto == 17) && l4 + 4 <= len)
		h = fnv(h, f + l4, 4);
	/* murmur3 fmix32 */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static unsigned int cpu_queue(const struct front_steer *st)
{
	int c = st->cpu ? st->cpu(st->cpu_arg) : sched_getcpu();

	return c < 0 ? 0 : (unsigned int)c % st->nq;
}

/**
 * front_steer_pick() - the queue of a frame of flow @hash, counted in flight
 * @st: the state
 * @hash: front_steer_flow_hash() of the frame
 * @held: receives the flow entry + 1 the frame now holds (xps-safe), or 0;
 *	give it to front_steer_release() when the frame is answered or not sent
 *
 * Thread safe.  Return: a queue below st->nq
 */
unsigned int front_steer_pick(struct front_steer *st, uint32_t hash, uint16_t *held)
{
	_Atomic uint32_t *e;
	uint32_t old, q;

	*held = 0;
	switch (st->policy) {
	case PVNET_STEER_XPS:
		return cpu_queue(st);
	case PVNET_STEER_XPS_SAFE:
		break;
	default:
		return hash % st->nq;
	}
	e = &st->flows[hash & (PVNET_STEER_FLOWS - 1)];
	q = cpu_queue(st);
	old = atomic_load_explicit(e, memory_order_relaxed);
	for (;;) {
		uint32_t n = old & FRONT_FLOW_INFLIGHT;
		uint32_t use = n ? old >> FRONT_FLOW_QSHIFT : q;

		if (use >= st->nq)
			use = q; /* never: entries only hold queues below nq */
		if (atomic_compare_exchange_weak_explicit(
			e, &old, use << FRONT_FLOW_QSHIFT | (n + 1), memory_order_acq_rel,
			memory_order_relaxed)) {
			*held = (uint16_t)((hash & (PVNET_STEER_FLOWS - 1)) + 1);
			return use;
		}
	}
}

/**
 * front_steer_release() - one frame of a flow is no longer in flight
 * @st: the state
 * @held: what front_steer_pick() gave (0: nothing to do)
 */
void front_steer_release(struct front_steer *st, uint16_t held)
{
	uint32_t v;

	if (held == 0 || held > PVNET_STEER_FLOWS)
		return;
	/*
	 * Never below zero: pvnet_vif_set_steering() starts the table afresh
	 * while frames picked before are still in flight, and their release
	 * must not wrap the count into the queue bits.
	 */
	v = atomic_load_explicit(&st->flows[held - 1], memory_order_acquire);
	while ((v & FRONT_FLOW_INFLIGHT) &&
	       !atomic_compare_exchange_weak_explicit(&st->flows[held - 1], &v, v - 1,
						      memory_order_acq_rel, memory_order_acquire))
		;
}

/**
 * front_steer_inflight() - frames in flight of the entry of flow @hash (tests)
 * @st: the state
 * @hash: the flow hash
 *
 * Return: the count
 */
uint32_t front_steer_inflight(struct front_steer *st, uint32_t hash)
{
	return atomic_load(&st->flows[hash & (PVNET_STEER_FLOWS - 1)]) & FRONT_FLOW_INFLIGHT;
}

int pvnet_vif_set_steering(struct pvnet_vif *vif, int policy)
{
	if (!pvnet_steering_name(policy))
		return -EINVAL;
	if (policy != vif->steer.policy)
		front_steer_init(&vif->steer, policy, vif->nr_queues, vif->steer.cpu,
				 vif->steer.cpu_arg);
	atomic_store(&vif->shared, true);
	return 0;
}

int pvnet_vif_steering(const struct pvnet_vif *vif)
{
	return vif->steer.policy;
}

void pvnet_vif_set_cpu_source(struct pvnet_vif *vif, pvnet_cpu_fn fn, void *arg)
{
	vif->steer.cpu = fn;
	vif->steer.cpu_arg = arg;
}

int pvnet_vif_pick_queue(struct pvnet_vif *vif, const void *frame, uint32_t len)
{
	struct front_steer *st = &vif->steer;
	uint32_t hash = front_steer_flow_hash(frame, len), e;
	int status = atomic_load_explicit(&vif->status, memory_order_acquire);

	if (status)
		return status;
	if (st->policy != PVNET_STEER_XPS_SAFE) {
		uint16_t held;

		return (int)front_steer_pick(st, hash, &held);
	}
	e = atomic_load(&st->flows[hash & (PVNET_STEER_FLOWS - 1)]);
	if ((e & FRONT_FLOW_INFLIGHT) && (e >> FRONT_FLOW_QSHIFT) < st->nq)
		return (int)(e >> FRONT_FLOW_QSHIFT);
	return (int)cpu_queue(st);
}

/**
 * front_queue_lock() - take the queue's lock when the vif is shared
 * @vif: the vif
 * @queue: the queue
 *
 * Return: the mutex taken, or NULL (not shared: one thread per queue, or a bad queue)
 */
pthread_mutex_t *front_queue_lock(struct pvnet_vif *vif, unsigned int queue)
{
	pthread_mutex_t *m;

	if (!atomic_load_explicit(&vif->shared, memory_order_relaxed) || !vif->queues ||
	    queue >= vif->nr_queues)
		return NULL;
	m = &vif->queues[queue].lock;
	pthread_mutex_lock(m);
	return m;
}

/**
 * front_queue_unlock() - release what front_queue_lock() took
 * @m: its result (NULL: nothing)
 */
void front_queue_unlock(pthread_mutex_t *m)
{
	if (m)
		pthread_mutex_unlock(m);
}

int pvnet_send_flow(struct pvnet_vif *vif, const struct pvnet_pkt *pkts, unsigned int n)
{
	int status = atomic_load_explicit(&vif->status, memory_order_acquire);
	unsigned int sent = 0;

	if (!atomic_load_explicit(&vif->shared, memory_order_relaxed))
		return -EINVAL;
	if (status)
		return status;
	while (sent < n) {
		uint16_t held[FLOW_RUN_MAX];
		unsigned int k = 1, queue;
		pthread_mutex_t *m;
		int rc;

		queue = front_steer_pick(
		    &vif->steer, front_steer_flow_hash(pkts[sent].data, pkts[sent].len), &held[0]);
		while (sent + k < n && k < FLOW_RUN_MAX) {
			const struct pvnet_pkt *p = &pkts[sent + k];
			unsigned int q2 = front_steer_pick(
			    &vif->steer, front_steer_flow_hash(p->data, p->len), &held[k]);

			if (q2 != queue) {
				front_steer_release(&vif->steer, held[k]);
				break;
			}
			k++;
		}
		m = front_queue_lock(vif, queue);
		rc = front_send(vif, queue, pkts + sent, k, held);
		front_queue_unlock(m);
		for (unsigned int i = rc < 0 ? 0 : (unsigned int)rc; i < k; i++)
			front_steer_release(&vif->steer, held[i]);
		if (rc < 0)
			return sent ? (int)sent : rc;
		sent += (unsigned int)rc;
		if ((unsigned int)rc < k)
			break;
	}
	return (int)sent;
}

/* ---- the public data calls: the lock-free bodies, locked when the vif is shared ---- */

int pvnet_send(struct pvnet_vif *vif, unsigned int queue, const struct pvnet_pkt *pkts,
	       unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_send(vif, queue, pkts, n, NULL);

	front_queue_unlock(m);
	return rc;
}

static int mcast(struct pvnet_vif *vif, unsigned int queue, uint8_t op, const uint8_t mac[6])
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_mcast(vif, queue, op, mac);

	front_queue_unlock(m);
	return rc;
}

int pvnet_mcast_add(struct pvnet_vif *vif, unsigned int queue, const uint8_t mac[6])
{
	return mcast(vif, queue, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, mac);
}

int pvnet_mcast_del(struct pvnet_vif *vif, unsigned int queue, const uint8_t mac[6])
{
	return mcast(vif, queue, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, mac);
}

int pvnet_recv(struct pvnet_vif *vif, unsigned int queue, struct pvnet_pkt *pkts, unsigned int n,
	       void *buf, size_t buflen)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_recv(vif, queue, pkts, n, buf, buflen);

	front_queue_unlock(m);
	return rc;
}

int pvnet_tx_alloc(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_tx_alloc(vif, queue, bufs, n);

	front_queue_unlock(m);
	return rc;
}

int pvnet_tx_submit(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		    unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_tx_submit(vif, queue, bufs, n);

	front_queue_unlock(m);
	return rc;
}

void pvnet_tx_free(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);

	front_tx_free(vif, queue, bufs, n);
	front_queue_unlock(m);
}

int pvnet_rx_burst(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);
	int rc = front_rx_burst(vif, queue, bufs, n);

	front_queue_unlock(m);
	return rc;
}

void pvnet_rx_release(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		      unsigned int n)
{
	pthread_mutex_t *m = front_queue_lock(vif, queue);

	front_rx_release(vif, queue, bufs, n);
	front_queue_unlock(m);
}
