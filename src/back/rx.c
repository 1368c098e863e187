// SPDX-License-Identifier: MIT
// rx.c - guest RX: the vif's switch port (xmit) and the grant copy into posted buffers

/*
 * Theory of Operation
 *
 * xmit() (any thread the switch runs on) picks a queue with hash.c (the
 * guest's Toeplitz mapping when it set one, else a keyed flow hash of the
 * private header: the same flow always lands on the same queue) and
 * records the Toeplitz hash for the guest's HASH extra.  Then, per queue:
 *
 * Direct delivery (run to completion).  If the calling thread gets the
 * queue's rx_lock (see direct_begin()) and nothing is queued for it, it copies
 * the frames into the guest's posted buffers itself (step 4 below), in
 * order, and the frames complete before xmit() returns: no hand-off to
 * another thread, no wake-up, no cache line crossing CPUs per packet, and a
 * mapped sender's pages are released at once.  What the guest's buffers
 * cannot take yet is queued as below, and from then on the queue is not
 * empty, so later frames follow it there.  One lock per queue and call.
 *
 * Otherwise xmit() charges the frame's bytes to the queue's byte bound
 * (XSA-392: a guest that stops consuming cannot make pvnetd hold more than
 * rx_queue_max_bytes per queue), pushes (packet, now) onto the queue's
 * bounded MPSC input ring and wakes the worker.  A full queue refuses the
 * frame and, because the switch's contract is "the first k frames are
 * taken", every frame after it in the call: counted as rx_queue_full here
 * and tx_dropped by the switch.  (A frame kept for direct delivery was
 * taken: if neither the buffers nor the queue can take it, it is dropped
 * and counted as rx_queue_full and rx_dropped.)
 *
 * The worker (back_rx_poll) then, per round, holding rx_lock:
 *   1. drops frames at the head that waited longer than the drain timeout
 *      (10 s, or 30 ms for a frontend without feature-rx-notify, as Linux);
 *   2. copies out frames sent by a netback TX queue that have waited longer
 *      than tx_hold_max_us: their payload is still the sender's grant (or
 *      pool page), and a receiver that does not post buffers must not pin
 *      it; the copy goes to malloc()ed memory bounded by the queue's byte
 *      bound, and the sender's packet is put (its TX completes);
 *   3. delivers frames in order while the guest has posted enough buffers
 *      for the head frame (slots needed = pages of data + 1 for a GSO
 *      extra).  A frame that needs more waits: req_event is set to
 *      req_cons + needed so the guest's push notifies us exactly when
 *      enough are there (full barrier, re-check); a frontend without
 *      feature-rx-notify never notifies, so we poll it every millisecond
 *      while blocked;
 *   4. one grant-copy call for the batch (gnt.c: a memcpy into the mapped
 *      buffers with persistent grants; sources are plain pointers: the
 *      private header, mapped pages, pool pages; destinations the guest's
 *      grefs), responses written at the index of the request each consumed
 *      (netfront relies on it), statuses of failed copies patched to
 *      NETIF_RSP_ERROR, one push with the notify check, then the frames are
 *      put.  This is the one copy of the payload from sender to receiver.
 *      With Toeplitz hashing active a HASH extra follows the first slot
 *      (after the GSO extra, if any): type bit number, algorithm, value
 *      little-endian.
 *
 * Ordering (issue 4): frames taken from one TX queue reach any one RX
 * queue in the order they were sent.  Proof by the paths a frame takes:
 *   - one TX queue is one worker thread, which hands its frames to the
 *     switch in ring order, and the switch calls xmit() once per batch in
 *     input order; xmit() pushes onto the RX queue's MPSC ring, whose
 *     positions one producer claims in program order (a CAS on the tail),
 *     so the ring holds that source's frames in send order, whichever
 *     other threads push between them (several TX workers feeding one RX
 *     queue interleave, never overtake);
 *   - direct delivery happens only while the ring is empty, tail included
 *     (no position claimed, published or not): then no earlier frame of
 *     this source waits anywhere, it delivers in input order, and what it
 *     cannot deliver goes onto the ring before rx_lock is released, ahead
 *     of anything this source sends later;
 *   - the ring is consumed only from its head, in order; a frame that
 *     does not fit the guest's posted buffers blocks the head (nothing
 *     behind it is delivered first); a full ring or byte bound refuses
 *     the frame and every later one of the same call (drop, never a
 *     retry that could pass it);
 *   - copy-out of a long-held frame (step 2) rewrites the item in place:
 *     it keeps its position;
 *   - expiry (step 1) drops only from the head.
 * The only thing that may change the RX queue of a flow is the guest
 * rewriting its mapping table, which is the guest's own choice.
 * test_order.c (tests/back) sends interleaved flows from several TX queues,
 * through both ways, and checks every flow's sequence at the receiver.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "back/internal.h"
#include "common/prefetch.h"
#include "switch/frame.h"

/**
 * struct rx_held - a frame copied out of its sender's memory
 * @len: frame length
 * @flags: SW_PKT_* offload flags
 * @gso_type: enum sw_gso_type
 * @gso_size: MSS
 * @data: the frame
 */
struct rx_held {
	uint32_t len;
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
	uint8_t data[];
};

/* One piece of a frame's bytes. */
struct rx_piece {
	const uint8_t *base;
	uint32_t len;
};

/* Per-frame bookkeeping of one RX batch (@npkts: frames the guest gets, segments included). */
struct rx_ent {
	uint32_t len;
	uint16_t npkts;
	uint16_t rsp0;
	uint16_t nrsp;
	uint16_t copy0;
	uint16_t ncopy;
	bool drop;
};

/*
 * struct back_rx_sw - scratch for doing what a guest did not negotiate
 * @frame: a private copy of the frame being fixed, read once from its pieces
 * @hdrs: each segment's headers
 * @segs: the segments (or, for a checksum, the frame itself as segs[0])
 * @flags: SW_PKT_* offload flags of every segment (a blank checksum or none)
 *
 * Made on first use (most guests negotiate every offload), used by whoever
 * holds rx_lock, for one frame per batch: the batch's grant copies read it.
 */
struct back_rx_sw {
	uint8_t frame[XEN_NETIF_MAX_TX_SIZE];
	uint8_t hdrs[BACK_RX_RING_SIZE * SW_TSO_MAX_HDRS];
	struct sw_seg segs[BACK_RX_RING_SIZE];
	uint8_t flags;
};

/* What a frame needs done in software before this guest can take it. */
enum rx_sw {
	RX_SW_NONE = 0,
	RX_SW_CSUM, /* a blank checksum, and no csum offload for its family */
	RX_SW_GSO,  /* a GSO type the guest did not negotiate */
	RX_SW_BAD,  /* needs one of those but is not a frame we can do it for */
};

static unsigned int rx_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			       unsigned int n, bool direct);

static struct log_ratelimit rx_rl = LOG_RATELIMIT_INIT;
static pthread_mutex_t rx_rl_lock = PTHREAD_MUTEX_INITIALIZER;

int back_rx_init(struct back_queue *q)
{
	return back_mpsc_init(&q->rxq, BACK_RXQ_CAP);
}

void back_rx_fini(struct back_queue *q)
{
	back_mpsc_fini(&q->rxq);
	free(q->sw);
	q->sw = NULL;
	free(q->hold.base);
	q->hold = (struct back_hold_pool){0};
}

/* What precedes each copy in the hold pool: how to release it. */
struct hold_hdr {
	uint32_t skip;	/* bytes left unused at the end of the pool before it */
	uint32_t total; /* this header, the rx_held and the frame, 8-byte aligned */
};

/*
 * Take room for a copy of @len bytes, or NULL.  The pool holds a full RX
 * queue of copies: queued frames never exceed rx_queue_max_bytes (xmit()
 * refuses past it), each copy costs its headers and up to 7 bytes of
 * alignment, there are at most BACK_RXQ_CAP of them, and wrapping wastes
 * at most one largest copy.  So NULL means "not yet", and the copy-out is
 * retried next round, as for a failed allocation.
 */
static struct rx_held *hold_alloc(struct back_queue *q, uint32_t len)
{
	struct back_hold_pool *h = &q->hold;
	uint64_t total = (sizeof(struct hold_hdr) + sizeof(struct rx_held) + len + 7) & ~7ULL;
	uint64_t pos, skip = 0;
	struct hold_hdr *hdr;

	if (!h->base) {
		uint64_t size = (uint64_t)q->b->cfg.rx_queue_max_bytes +
				(uint64_t)BACK_RXQ_CAP *
				    (sizeof(struct hold_hdr) + sizeof(struct rx_held) + 7) +
				2 * (uint64_t)(XEN_NETIF_MAX_TX_SIZE + 64);

		h->base = malloc(size);
		if (!h->base)
			return NULL;
		h->size = size;
		h->head = h->tail = 0;
	}
	if (total > h->size)
		return NULL;
	pos = h->tail % h->size;
	if (pos + total > h->size)
		skip = h->size - pos;
	if (h->tail + skip + total - h->head > h->size)
		return NULL;
	hdr = (struct hold_hdr *)(h->base + (pos + skip) % h->size);
	hdr->skip = (uint32_t)skip;
	hdr->total = (uint32_t)total;
	h->tail += skip + total;
	return (struct rx_held *)(hdr + 1);
}

/* Release the oldest copy, @held (copies are released in the order they were taken). */
static void hold_free(struct back_queue *q, struct rx_held *held)
{
	struct hold_hdr *hdr = (struct hold_hdr *)held - 1;
	struct back_hold_pool *h = &q->hold;

	/* Our own invariant, not guest input: copies leave in the order they came. */
	if ((uint8_t *)hdr != h->base + (h->head + hdr->skip) % h->size) {
		err("vif%u.%u q%u: hold pool released out of order", q->vif->domid, q->vif->devid,
		    q->id);
		abort();
	}
	h->head += hdr->skip + hdr->total;
}

/*
 * Direct delivery: may the calling thread deliver into @q's ring itself?
 * Only with rx_lock held and nothing queued on @rxq, not even a position a
 * producer has claimed but not yet published: then no frame from any
 * source is waiting for this queue, and delivering now overtakes none.  On
 * true the caller holds rx_lock.
 *
 * A caller that holds no other rx_lock (@may_wait) waits for the lock: its
 * holder is delivering one batch, and waiting costs less than handing the
 * frames to the worker (a wake-up, a thread switch, the completions coming
 * back across CPUs); two senders' workers feeding one queue would
 * otherwise push each other onto the slow path.  A caller that already
 * holds one only tries, so no two threads can wait for each other.
 */
static bool direct_begin(struct back_queue *q, bool may_wait)
{
	if (may_wait)
		pthread_mutex_lock(&q->rx_lock);
	else if (pthread_mutex_trylock(&q->rx_lock) != 0)
		return false;
	if (atomic_load_explicit(&q->rxq.tail, memory_order_seq_cst) == q->rxq.head)
		return true;
	pthread_mutex_unlock(&q->rx_lock);
	return false;
}

/* Queue @it for the worker: charge its bytes and push; false if refused (bound or ring full). */
static bool enqueue(struct back_queue *q, const struct back_mpsc_item *it, uint32_t len,
		    uint32_t max)
{
	uint32_t cur = atomic_fetch_add_explicit(&q->rxq_bytes, len, memory_order_relaxed);

	if (cur + len > max || !back_mpsc_push(&q->rxq, it)) {
		atomic_fetch_sub_explicit(&q->rxq_bytes, len, memory_order_relaxed);
		return false;
	}
	return true;
}

/*
 * Deliver the @n frames the caller kept for @q (it holds rx_lock), in
 * order; queue what the guest's buffers cannot take yet, behind which
 * nothing of this caller can be (its later frames come through @rxq too,
 * which is no longer empty).  A frame refused then was already accepted
 * from the switch: it is dropped here and counted.  Returns true if the
 * worker has frames to look at.
 */
static bool direct_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			   unsigned int n, uint32_t max)
{
	unsigned int done = 0, lost = 0;

	while (done < n) {
		unsigned int m = n - done < BACK_BATCH ? n - done : BACK_BATCH;
		unsigned int k = rx_deliver(q, items + done, m, true);

		done += k;
		if (k < m)
			break;
	}
	for (unsigned int i = done; i < n; i++) {
		if (!enqueue(q, items[i], ((struct sw_pkt *)items[i]->ptr)->len, max)) {
			sw_pkt_put(items[i]->ptr);
			lost++;
		}
	}
	if (lost) {
		atomic_fetch_add_explicit(&q->stats->rx_queue_full, lost, memory_order_relaxed);
		back_stat_add(&q->stats->rx_dropped, lost);
	}
	pthread_mutex_unlock(&q->rx_lock);
	return done < n;
}

static unsigned int back_rx_xmit(struct sw_port *port, struct sw_pkt **pkts, unsigned int n)
{
	struct back_vif *vif = port->priv;
	unsigned int nq = vif->nq, i, ndirect = 0;
	uint32_t wake = 0, direct = 0, tried = 0, max = vif->b->cfg.rx_queue_max_bytes,
		 filtered = 0;
	bool filter = atomic_load_explicit(&vif->mcast_filter, memory_order_relaxed);
	uint64_t now = back_now_ns();
	struct back_hash_snap snap;
	struct back_mpsc_item kept[SW_BATCH_MAX];
	uint8_t kept_q[SW_BATCH_MAX];

	_Static_assert(BACK_MAX_QUEUES_LIMIT <= 32, "queue bit masks");
	if (nq == 0 || n > SW_BATCH_MAX || atomic_load_explicit(&vif->broken, memory_order_relaxed))
		return 0;
	if (atomic_load_explicit(&vif->rx_stalled_queues, memory_order_relaxed)) {
		/* Carrier off (stall detection below): no queueing for a guest that takes nothing. */
		atomic_fetch_add_explicit(&vif->q[0]->stats->rx_carrier_off, n,
					  memory_order_relaxed);
		return 0;
	}
	back_hash_snapshot(&vif->hash, &snap);
	/*
	 * Pass 1, in input order: pick each frame's queue; keep it for direct
	 * delivery if that queue's ring is ours (see direct_begin()), else
	 * queue it for the worker.  The switch takes "the first k": stop at
	 * the first frame refused, the switch puts it and every frame after it.
	 */
	for (i = 0; i < n; i++) {
		struct sw_pkt *pkt = pkts[i];
		struct back_hash_result r;

		if (filter && pkt->hdr_len >= 6 && back_mcast_drop(vif, pkt->hdr)) {
			sw_pkt_put(pkt); /* taken: the guest asked not to get it */
			filtered++;
			continue;
		}
		back_hash_select(&vif->hash, &snap, pkt->hdr, pkt->hdr_len, nq, &r);
		unsigned int qi = r.queue;
		uint32_t bit = 1u << qi;
		struct back_queue *q = vif->q[qi];
		struct back_mpsc_item it = {
		    .ptr = pkt, .u64 = now, .hash = r.hash, .hash_type = r.type};

		if (!(tried & bit)) {
			tried |= bit;
			if (direct_begin(q, direct == 0))
				direct |= bit;
		}
		if (direct & bit) {
			kept[ndirect] = it;
			kept_q[ndirect++] = (uint8_t)qi;
			continue;
		}
		if (!enqueue(q, &it, pkt->len, max)) {
			atomic_fetch_add_explicit(&q->stats->rx_queue_full, n - i,
						  memory_order_relaxed);
			break;
		}
		wake |= bit;
	}
	if (filtered)
		atomic_fetch_add_explicit(&vif->q[0]->stats->rx_mcast_filtered, filtered,
					  memory_order_relaxed);
	/* Pass 2, per queue kept: deliver its frames in their order, then release the ring. */
	for (unsigned int j = 0; j < nq; j++) {
		struct back_mpsc_item *mine[SW_BATCH_MAX];
		unsigned int m = 0;

		if (!(direct & (1u << j)))
			continue;
		for (unsigned int k = 0; k < ndirect; k++)
			if (kept_q[k] == j)
				mine[m++] = &kept[k];
		if (direct_deliver(vif->q[j], mine, m, max))
			wake |= 1u << j;
	}
	/*
	 * Tell each worker that there is input its last round did not see
	 * (seq_cst, before reading whether it sleeps; see back_rx_has_input()).
	 */
	for (unsigned int j = 0; j < nq; j++) {
		if (wake & (1u << j)) {
			atomic_fetch_add_explicit(&vif->q[j]->rx_gen, 1, memory_order_seq_cst);
			back_worker_wake(vif->q[j]);
		}
	}
	return i;
}

const struct sw_port_ops back_rx_port_ops = {.xmit = back_rx_xmit};

bool back_rx_has_input(struct back_queue *q)
{
	RING_IDX prod;

	/*
	 * Frames queued since our last round, blocked or not: that round did
	 * not arm the timers they need (drain timeout, copy-out of a held
	 * sender), so sleeping without another round could hold them, and
	 * their senders' pages, until the guest posts.  Their producer bumped
	 * rx_gen before reading sleeping: if we do not see the bump here,
	 * after setting sleeping, it sees us asleep and wakes us.
	 */
	if (atomic_load_explicit(&q->rx_gen, memory_order_seq_cst) != q->rx_gen_seen)
		return true;
	if (!atomic_load_explicit(&q->rx_stalled, memory_order_acquire)) {
		if (back_mpsc_peek(&q->rxq, 0) == NULL)
			return false;
		if (!atomic_load_explicit(&q->rx_blocked, memory_order_acquire))
			return true;
	}
	/*
	 * Blocked on the guest's buffers, or stalled (nothing queued, waiting
	 * to turn the carrier on): have they come?  The event that said so
	 * may have been consumed already (late EOI, or while another thread
	 * set the block), so the ring is the authority.
	 */
	prod = __atomic_load_n(&q->rx.sring->req_prod, __ATOMIC_SEQ_CST);
	return (int32_t)(prod - atomic_load_explicit(&q->rx_wait_for, memory_order_relaxed)) >= 0;
}

/* The frame's bytes as pieces; returns the count, 0 if malformed. */
static unsigned int rx_pieces(const struct back_mpsc_item *it, struct rx_piece *pc)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct rx_held *held = it->aux;
	uint64_t sum = 0;
	unsigned int n = 0;

	if (held) {
		pc[0] = (struct rx_piece){held->data, held->len};
		return 1;
	}
	if (pkt->nfrags > SW_PKT_MAX_FRAGS)
		return 0;
	for (unsigned int i = 0; i < pkt->nfrags; i++)
		sum += pkt->frag[i].len;
	/* pkt.h: hdr + frags, unless frag 0 repeats the header (frags alone). */
	if (sum + pkt->hdr_len == pkt->len && pkt->hdr_len)
		pc[n++] = (struct rx_piece){pkt->hdr, pkt->hdr_len};
	else if (sum != pkt->len)
		return 0;
	for (unsigned int i = 0; i < pkt->nfrags; i++)
		if (pkt->frag[i].len)
			pc[n++] = (struct rx_piece){pkt->frag[i].base, pkt->frag[i].len};
	return n;
}

static uint32_t item_len(const struct back_mpsc_item *it)
{
	return it->aux ? ((const struct rx_held *)it->aux)->len : ((struct sw_pkt *)it->ptr)->len;
}

/* Give an item's frame back (to its sender or the allocator); the caller uncharges its bytes. */
static void item_release(struct back_queue *q, struct back_mpsc_item *it)
{
	if (it->aux)
		hold_free(q, it->aux);
	if (it->ptr)
		sw_pkt_put(it->ptr);
	it->ptr = it->aux = NULL;
}

/* Drop every queued frame, counted as rx_dropped; the caller holds rx_lock.  Returns how many. */
static unsigned int rx_purge(struct back_queue *q)
{
	struct back_mpsc_item *it;
	unsigned int n = 0;
	uint32_t bytes = 0;

	while ((it = back_mpsc_peek(&q->rxq, 0)) != NULL) {
		bytes += item_len(it);
		item_release(q, it);
		back_mpsc_pop(&q->rxq);
		n++;
	}
	back_stat_add(&q->stats->rx_dropped, n);
	atomic_fetch_sub_explicit(&q->rxq_bytes, bytes, memory_order_relaxed);
	return n;
}

unsigned int back_rx_drop_all(struct back_queue *q)
{
	unsigned int n;

	if (!q->rxq.cells)
		return 0;
	pthread_mutex_lock(&q->rx_lock);
	n = rx_purge(q);
	pthread_mutex_unlock(&q->rx_lock);
	return n;
}

/* Copy a held frame out of its sender's memory and release the sender. */
static int rx_copy_out(struct back_queue *q, struct back_mpsc_item *it)
{
	struct sw_pkt *pkt = it->ptr;
	struct rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	unsigned int n = rx_pieces(it, pc), off = 0;
	struct rx_held *held;

	if (n == 0)
		return 0; /* malformed: dropped when it reaches the head */
	held = hold_alloc(q, pkt->len);
	if (!held) {
		back_stat_add(&q->stats->rx_nomem, 1);
		return -ENOMEM;
	}
	held->len = pkt->len;
	held->flags = pkt->flags;
	held->gso_type = pkt->gso_type;
	held->gso_size = pkt->gso_size;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(held->data + off, pc[i].base, pc[i].len);
		off += pc[i].len;
	}
	if (pkt->done == back_tx_done) {
		struct back_tx_pending *p = pkt->priv;

		atomic_store_explicit(&p->copied_out, true, memory_order_release);
	}
	it->aux = held;
	it->ptr = NULL;
	sw_pkt_put(pkt);
	back_stat_add(&q->stats->rx_held_copied, 1);
	return 0;
}

/* See internal.h: an item queued after @now was read is new. */
uint64_t back_rx_age(const struct back_mpsc_item *it, uint64_t now)
{
	return now > it->u64 ? now - it->u64 : 0;
}

/*
 * Steps 1 and 2: expire the head, copy out frames held too long.  Returns
 * true if it changed anything; *due_ns receives the next deadline.
 */
static bool rx_maintain(struct back_queue *q, uint64_t now, uint64_t *due_ns)
{
	uint64_t hold = (uint64_t)q->b->cfg.tx_hold_max_us * 1000, timeout = q->vif->rx_timeout_ns;
	struct back_mpsc_item *it;
	bool did = false;

	*due_ns = UINT64_MAX;
	while ((it = back_mpsc_peek(&q->rxq, 0)) != NULL && back_rx_age(it, now) >= timeout) {
		atomic_fetch_sub_explicit(&q->rxq_bytes, item_len(it), memory_order_relaxed);
		item_release(q, it);
		back_mpsc_pop(&q->rxq);
		back_stat_add(&q->stats->rx_expired, 1);
		back_stat_add(&q->stats->rx_dropped, 1);
		did = true;
	}
	if (it)
		*due_ns = it->u64 + timeout;
	if (q->rx_scan < q->rxq.head)
		q->rx_scan = q->rxq.head;
	while ((it = back_mpsc_peek(&q->rxq, q->rx_scan - q->rxq.head)) != NULL) {
		struct sw_pkt *pkt = it->ptr;

		if (pkt && pkt->done == back_tx_done) {
			if (back_rx_age(it, now) < hold) {
				if (it->u64 + hold < *due_ns)
					*due_ns = it->u64 + hold;
				break;
			}
			if (rx_copy_out(q, it) < 0)
				break;
			did = true;
		}
		q->rx_scan++;
	}
	return did;
}

/* Slots a frame needs on the guest's RX ring (extras included), or 0 if it cannot be delivered. */
static unsigned int rx_slots_needed(const struct back_vif *vif, uint32_t len, uint8_t gso_type,
				    uint8_t hash_type)
{
	unsigned int n = (len + BACK_PAGE_SIZE - 1) / BACK_PAGE_SIZE;

	/* A GSO type the guest lacks never gets here (rx_sw_need()). */
	if (len == 0 || (n > 1 && !vif->fe.sg))
		return 0;
	if (gso_type != SW_GSO_NONE)
		n++;
	if (hash_type != BACK_HASH_TYPE_NONE)
		n++;
	return n <= BACK_RX_MAX_SLOTS ? n : 0;
}

/* How many RX requests are there; -1 (fatal) if the producer is absurd. */
static int rx_avail(struct back_queue *q, bool seq)
{
	RING_IDX prod =
	    __atomic_load_n(&q->rx.sring->req_prod, seq ? __ATOMIC_SEQ_CST : __ATOMIC_ACQUIRE);

	if (RING_REQUEST_PROD_OVERFLOW(&q->rx, prod)) {
		back_queue_fatal(q, "rx: req_prod %u is more than a ring ahead of %u", prod,
				 q->rx.rsp_prod_pvt);
		return -1;
	}
	/* Nor behind what a batch has consumed (req_cons runs ahead of the responses). */
	if ((RING_IDX)(prod - q->rx.req_cons) > (RING_IDX)(prod - q->rx.rsp_prod_pvt)) {
		back_queue_fatal(q, "rx: req_prod %u went back behind req_cons %u", prod,
				 q->rx.req_cons);
		return -1;
	}
	return (int)(prod - q->rx.req_cons);
}

/* One frame to plan: its bytes, and what its first response and extras say. */
struct rx_src {
	const struct rx_piece *pc;
	unsigned int np;
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
	uint8_t hash_type;
	uint32_t hash;
};

/* Plan one frame into @need slots starting at the ring's req_cons; consumes them. */
static void rx_plan_src(struct back_queue *q, const struct rx_src *s, unsigned int need,
			unsigned int nrsp, unsigned int *ncopy)
{
	const struct rx_piece *pc = s->pc;
	uint8_t flags = s->flags, gso_type = s->gso_type;
	uint16_t gso_size = s->gso_size;
	netif_rx_request_t req[BACK_RX_MAX_SLOTS];
	unsigned int np = s->np, slot = 0, doff = 0;
	netif_rx_response_t *rsp = &q->rx_rsp[nrsp];
	bool hash = s->hash_type != BACK_HASH_TYPE_NONE;
	/* Extra-info slots follow the first data slot: GSO first, then HASH. */
	unsigned int nextra = (gso_type != SW_GSO_NONE) + hash;
	unsigned int last_data = need - 1 == nextra ? 0 : need - 1;

	for (unsigned int i = 0; i < need; i++)
		RING_COPY_REQUEST(&q->rx, q->rx.req_cons + i, &req[i]);
	q->rx.req_cons += need;
	for (unsigned int i = 0; i < need; i++)
		rsp[i] =
		    (netif_rx_response_t){.id = req[i].id, .offset = 0, .flags = 0, .status = 0};

	for (unsigned int i = 0; i < np; i++) {
		const uint8_t *src = pc[i].base;
		uint32_t left = pc[i].len;

		while (left) {
			uint32_t chunk =
			    BACK_PAGE_SIZE - doff < left ? BACK_PAGE_SIZE - doff : left;

			q->rx_copy[*ncopy] = (xengnttab_grant_copy_segment_t){
			    .source.virt = (void *)(uintptr_t)src,
			    .dest.foreign = {.ref = req[slot].gref,
					     .offset = (uint16_t)doff,
					     .domid = q->vif->domid},
			    .len = (uint16_t)chunk,
			    .flags = GNTCOPY_dest_gref};
			q->rx_copy_slot[(*ncopy)++] = (uint16_t)(nrsp + slot);
			rsp[slot].status = (int16_t)(rsp[slot].status + chunk);
			src += chunk;
			left -= chunk;
			doff += chunk;
			if (doff == BACK_PAGE_SIZE && (left || i + 1 < np)) {
				/* next data slot; slots 1..nextra hold the extras */
				slot = slot == 0 ? 1 + nextra : slot + 1;
				doff = 0;
			}
		}
	}

	/* Flags: offloads on the first slot, more_data on every data slot but the last. */
	if (flags & SW_PKT_CSUM_BLANK)
		rsp[0].flags |= NETRXF_csum_blank | NETRXF_data_validated;
	else if (flags & SW_PKT_DATA_VALIDATED)
		rsp[0].flags |= NETRXF_data_validated;
	for (unsigned int i = 0; i < need; i++)
		if ((i == 0 || i > nextra) && i != last_data)
			rsp[i].flags |= NETRXF_more_data;
	if (nextra) {
		netif_extra_info_t ex[2];
		unsigned int k = 0;

		_Static_assert(sizeof(ex[0]) == sizeof(rsp[1]), "RX extra overlays a response");
		rsp[0].flags |= NETRXF_extra_info;
		if (gso_type != SW_GSO_NONE) {
			ex[k] = (netif_extra_info_t){.type = XEN_NETIF_EXTRA_TYPE_GSO};
			ex[k].u.gso.size = gso_size;
			ex[k].u.gso.type = gso_type;
			k++;
		}
		if (hash) {
			uint32_t v = s->hash; /* little-endian on the wire, as on x86 */

			ex[k] = (netif_extra_info_t){.type = XEN_NETIF_EXTRA_TYPE_HASH};
			ex[k].u.hash.type = s->hash_type;
			ex[k].u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
			ex[k].u.hash.value[0] = (uint8_t)v;
			ex[k].u.hash.value[1] = (uint8_t)(v >> 8);
			ex[k].u.hash.value[2] = (uint8_t)(v >> 16);
			ex[k].u.hash.value[3] = (uint8_t)(v >> 24);
			k++;
		}
		for (unsigned int i = 0; i < k; i++) {
			if (i + 1 < k)
				ex[i].flags |= XEN_NETIF_EXTRA_FLAG_MORE;
			memcpy(&rsp[1 + i], &ex[i], sizeof(ex[i]));
		}
	}
}

/* Plan a queued frame as it is. */
static void rx_plan(struct back_queue *q, const struct back_mpsc_item *it, unsigned int need,
		    unsigned int nrsp, unsigned int *ncopy, struct rx_ent *e)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct rx_held *held = it->aux;
	struct rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	struct rx_src s = {
	    .pc = pc,
	    .np = rx_pieces(it, pc),
	    .flags = held ? held->flags : pkt->flags,
	    .gso_type = held ? held->gso_type : pkt->gso_type,
	    .gso_size = held ? held->gso_size : pkt->gso_size,
	    .hash_type = it->hash_type,
	    .hash = it->hash,
	};

	e->rsp0 = (uint16_t)nrsp;
	e->nrsp = (uint16_t)need;
	e->copy0 = (uint16_t)*ncopy;
	rx_plan_src(q, &s, need, nrsp, ncopy);
	e->ncopy = (uint16_t)(*ncopy - e->copy0);
}

/*
 * Software offloads.  A guest that did not negotiate an offload must not
 * be given a frame that uses it, as Linux's core resolves a partial
 * checksum or segments a GSO skb for a netback vif whose features lack
 * them.  The frame is copied once into q->sw (so what is checked is what
 * is delivered, whatever its sender does to its pages meanwhile), fixed
 * there, and planned from there: one frame with its checksum filled in, or
 * gso_size segments with their own headers (switch/frame.h), blank
 * checksums where the guest takes those.  At most one such frame per
 * batch; a guest that negotiated everything (Linux's netfront, libpvnet)
 * never gets here, and pays one flag test per frame.
 */
static enum rx_sw rx_sw_need(const struct back_vif *vif, const struct back_mpsc_item *it)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct rx_held *held = it->aux;
	uint8_t flags = held ? held->flags : pkt->flags;
	uint8_t gso = held ? held->gso_type : pkt->gso_type;
	struct sw_l4 l4;

	if (gso == SW_GSO_TCPV4)
		return vif->fe.gso_tcpv4 ? RX_SW_NONE : RX_SW_GSO;
	if (gso == SW_GSO_TCPV6)
		return vif->fe.gso_tcpv6 ? RX_SW_NONE : RX_SW_GSO;
	if (!(flags & SW_PKT_CSUM_BLANK) || (vif->fe.csum_ipv4 && vif->fe.csum_ipv6))
		return RX_SW_NONE;
	/* The family, from private bytes: the header copy, or a held frame whole. */
	if (sw_frame_parse(held ? held->data : pkt->hdr, held ? held->len : pkt->hdr_len, &l4) < 0)
		return RX_SW_BAD;
	return (l4.l3 == 4 ? vif->fe.csum_ipv4 : vif->fe.csum_ipv6) ? RX_SW_NONE : RX_SW_CSUM;
}

/*
 * Do @kind for @it into q->sw.  Returns the frames the guest will get (1,
 * or the segments), with the slots and copy operations they take in
 * *@need and *@nops and their bytes in *@bytes; 0 if it cannot be done
 * (counted; the caller drops the frame).
 */
static unsigned int rx_sw_prepare(struct back_queue *q, const struct back_mpsc_item *it,
				  enum rx_sw kind, unsigned int *need, unsigned int *nops,
				  uint32_t *bytes)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct rx_held *held = it->aux;
	struct rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	unsigned int np = rx_pieces(it, pc), nseg;
	struct back_rx_sw *sw = q->sw;
	uint32_t len = 0;
	struct sw_l4 l4;
	int rc;

	if (np == 0) {
		back_stat_add(&q->stats->rx_malformed, 1);
		return 0;
	}
	if (!sw && !(sw = q->sw = malloc(sizeof(*sw)))) {
		back_stat_add(&q->stats->rx_nomem, 1);
		return 0;
	}
	for (unsigned int i = 0; i < np; i++) {
		if (pc[i].len > sizeof(sw->frame) - len) {
			back_stat_add(&q->stats->rx_malformed, 1);
			return 0;
		}
		memcpy(sw->frame + len, pc[i].base, pc[i].len);
		len += pc[i].len;
	}
	if (kind == RX_SW_CSUM) {
		uint32_t field;

		/* Parsed again on the copy: the header may not be the one rx_sw_need() saw. */
		if (sw_frame_parse(sw->frame, len, &l4) < 0)
			goto bad;
		field = l4.l4_off +
			(l4.proto == IPPROTO_TCP ? SW_FRAME_TCP_CSUM_OFF : SW_FRAME_UDP_CSUM_OFF);
		sw_csum_complete(sw->frame, len, l4.l4_off, field);
		sw->segs[0] = (struct sw_seg){.off = 0, .len = len};
		sw->flags = 0;
		nseg = 1;
	} else {
		uint8_t gso = held ? held->gso_type : pkt->gso_type;
		uint16_t mss = held ? held->gso_size : pkt->gso_size;
		bool blank = gso == SW_GSO_TCPV4 ? q->vif->fe.csum_ipv4 : q->vif->fe.csum_ipv6;

		rc = sw_tso_segment(sw->frame, len, gso, mss, blank, sw->hdrs, sizeof(sw->hdrs),
				    sw->segs, BACK_RX_RING_SIZE);
		if (rc <= 0)
			goto bad;
		nseg = (unsigned int)rc;
		sw->flags = blank ? SW_PKT_CSUM_BLANK : 0;
	}
	*need = *nops = 0;
	*bytes = 0;
	for (unsigned int i = 0; i < nseg; i++) {
		uint32_t b = sw->segs[i].hdr_len + sw->segs[i].len;
		unsigned int n = rx_slots_needed(q->vif, b, SW_GSO_NONE, it->hash_type);

		if (n == 0) {
			back_stat_add(&q->stats->rx_oversize, 1);
			return 0;
		}
		*need += n;
		*nops += n + 1; /* two pieces: a page boundary splits at most one more */
		*bytes += b;
	}
	/* More than the ring or one batch's copies can ever take: it would wait forever. */
	if (*need > BACK_RX_RING_SIZE || *nops > BACK_RX_COPY_OPS)
		goto bad;
	return nseg;
bad:
	back_stat_add(&q->stats->rx_sw_bad, 1);
	return 0;
}

/*
 * Plan the @nseg frames rx_sw_prepare() left in q->sw, as one entry.  The
 * counters count here: a frame that waited for buffers was prepared again.
 */
static void rx_plan_sw(struct back_queue *q, const struct back_mpsc_item *it, enum rx_sw kind,
		       unsigned int nseg, unsigned int nrsp, unsigned int *ncopy, struct rx_ent *e)
{
	const struct back_rx_sw *sw = q->sw;
	unsigned int at = nrsp;

	e->rsp0 = (uint16_t)nrsp;
	e->copy0 = (uint16_t)*ncopy;
	e->npkts = (uint16_t)nseg;
	for (unsigned int i = 0; i < nseg; i++) {
		const struct sw_seg *g = &sw->segs[i];
		struct rx_piece pc[2];
		unsigned int np = 0, n = rx_slots_needed(q->vif, g->hdr_len + g->len, SW_GSO_NONE,
							 it->hash_type);
		struct rx_src s = {
		    .pc = pc,
		    .flags = sw->flags,
		    .gso_type = SW_GSO_NONE,
		    .hash_type = it->hash_type,
		    .hash = it->hash,
		};

		if (g->hdr_len)
			pc[np++] = (struct rx_piece){g->hdr, g->hdr_len};
		pc[np++] = (struct rx_piece){sw->frame + g->off, g->len};
		s.np = np;
		rx_plan_src(q, &s, n, at, ncopy);
		at += n;
	}
	e->nrsp = (uint16_t)(at - nrsp);
	e->ncopy = (uint16_t)(*ncopy - e->copy0);
	if (kind == RX_SW_GSO) {
		back_stat_add(&q->stats->rx_sw_gso, 1);
		back_stat_add(&q->stats->rx_sw_gso_segs, nseg);
	} else {
		back_stat_add(&q->stats->rx_sw_csum, 1);
	}
}

/* Step 4: copy, write responses at their request's index, push, release @items. */
static void rx_flush(struct back_queue *q, struct back_mpsc_item *const *items, struct rx_ent *ents,
		     unsigned int nent, unsigned int ncopy, unsigned int nrsp, bool direct)
{
	unsigned int delivered = 0;
	RING_IDX old, new;

	if (ncopy)
		back_gnt_rx_copy(q, ncopy, q->rx_copy);
	for (unsigned int i = 0; i < ncopy; i++)
		if (q->rx_copy[i].status != GNTST_okay)
			q->rx_rsp[q->rx_copy_slot[i]].status = NETIF_RSP_ERROR;

	for (unsigned int i = 0; i < nent; i++) {
		struct rx_ent *e = &ents[i];
		bool bad = false;

		for (unsigned int c = 0; c < e->ncopy; c++)
			bad |= q->rx_copy[e->copy0 + c].status != GNTST_okay;
		if (e->drop) {
			back_stat_add(&q->stats->rx_dropped, 1);
		} else if (bad) {
			back_stat_add(&q->stats->rx_bad_gref, 1);
			back_stat_add(&q->stats->rx_dropped, 1);
			pthread_mutex_lock(&rx_rl_lock);
			log_ratelimited(&rx_rl, LOG_WARN,
					"vif%u.%u q%u: grant copy into RX buffer failed",
					q->vif->domid, q->vif->devid, q->id);
			pthread_mutex_unlock(&rx_rl_lock);
		} else {
			back_stat_add(&q->stats->rx_bytes, e->len);
			delivered += e->npkts;
		}
		item_release(q, items[i]);
	}
	back_stat_add(&q->stats->rx_packets, delivered);
	if (direct)
		back_stat_add(&q->stats->rx_direct, delivered);

	for (unsigned int i = 0; i < nrsp; i++)
		*RING_GET_RESPONSE(&q->rx, q->rx.rsp_prod_pvt + i) = q->rx_rsp[i];
	q->rx.rsp_prod_pvt += nrsp;
	old = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_RELAXED);
	new = q->rx.rsp_prod_pvt;
	if (new == old)
		return;
	__atomic_store_n(&q->rx.sring->rsp_prod, new, __ATOMIC_SEQ_CST);
	if ((RING_IDX)(new - __atomic_load_n(&q->rx.sring->rsp_event, __ATOMIC_SEQ_CST)) <
	    (RING_IDX)(new - old))
		back_notify(q, q->port_rx);
}

/*
 * Step 3: deliver @items in order while the guest's posted buffers take
 * them, one batch at most.  Returns how many were consumed (delivered, or
 * dropped as undeliverable); the first one not consumed did not fit, and
 * the ring's req_event then asks the guest to notify once it has posted
 * enough.  The caller holds rx_lock.
 */
static unsigned int rx_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			       unsigned int n, bool direct)
{
	struct rx_ent ents[BACK_BATCH];
	unsigned int nent = 0, ncopy = 0, nrsp = 0;
	int avail = rx_avail(q, false);
	bool sw_used = false;

	if (avail < 0)
		return 0;
	/*
	 * The posted requests this batch takes are answered in their own
	 * slots: fetch those lines owned now (the guest wrote them on its
	 * CPU), as many as @n one-slot frames take.
	 */
	prefetch_ring(q->rx.sring->ring, sizeof(q->rx.sring->ring[0]), RING_SIZE(&q->rx),
		      q->rx.req_cons, (unsigned int)avail < n ? (unsigned int)avail : n, true);
	while (nent < n && nent < BACK_BATCH && ncopy + BACK_RX_OPS_PER_PKT <= BACK_RX_COPY_OPS) {
		struct back_mpsc_item *it = items[nent];
		struct rx_ent *e = &ents[nent];
		uint32_t len = item_len(it);
		struct rx_piece pc[1 + SW_PKT_MAX_FRAGS];
		const struct rx_held *held = it->aux;
		uint8_t gso = held ? held->gso_type : ((struct sw_pkt *)it->ptr)->gso_type;
		enum rx_sw kind = rx_sw_need(q->vif, it);
		unsigned int need = 0, nops = 0, nseg = 0;

		*e = (struct rx_ent){.len = len, .npkts = 1};
		if (kind == RX_SW_NONE) {
			need = rx_slots_needed(q->vif, len, gso, it->hash_type);
			if (need == 0 || rx_pieces(it, pc) == 0) {
				back_stat_add(need == 0 ? &q->stats->rx_oversize
							: &q->stats->rx_malformed,
					      1);
				e->drop = true;
				nent++;
				continue;
			}
		} else {
			if (sw_used)
				break; /* q->sw holds an earlier frame of this batch */
			if (kind != RX_SW_BAD)
				nseg = rx_sw_prepare(q, it, kind, &need, &nops, &e->len);
			else
				back_stat_add(&q->stats->rx_sw_bad, 1);
			if (nseg == 0) {
				e->drop = true;
				nent++;
				continue;
			}
			if (ncopy + nops > BACK_RX_COPY_OPS)
				break; /* not with this batch's copies: first in the next */
			sw_used = true;
		}
		if ((unsigned int)avail - nrsp < need) {
			/* Ask to be notified when enough are posted, then re-check. */
			__atomic_store_n(&q->rx.sring->req_event, q->rx.req_cons + need,
					 __ATOMIC_SEQ_CST);
			avail = rx_avail(q, true);
			if (avail < 0)
				return 0;
			avail += (int)nrsp; /* req_cons already moved past this batch */
			if ((unsigned int)avail - nrsp < need) {
				if (!atomic_load_explicit(&q->rx_blocked, memory_order_relaxed))
					back_stat_add(&q->stats->rx_waits, 1);
				atomic_store_explicit(&q->rx_wait_for, q->rx.req_cons + need,
						      memory_order_relaxed);
				atomic_store_explicit(&q->rx_blocked, true, memory_order_release);
				break;
			}
		}
		atomic_store_explicit(&q->rx_blocked, false, memory_order_relaxed);
		if (nseg)
			rx_plan_sw(q, it, kind, nseg, nrsp, &ncopy, e);
		else
			rx_plan(q, it, need, nrsp, &ncopy, e);
		nrsp += need;
		nent++;
	}
	if (nent)
		rx_flush(q, items, ents, nent, ncopy, nrsp, direct);
	return nent;
}

/*
 * Stall detection (Linux netback's, with its XSA-392 fix): a queue whose
 * head frame has waited rx_stall_timeout_ms for enough buffers, however
 * many it has, is stalled: what it holds is dropped and the vif's carrier
 * goes off, so that frames for a guest that takes none are refused at once
 * instead of each waiting out the drain timeout (and being copied out of
 * its sender's pages meanwhile).  The ring's req_event still asks the
 * guest to notify once it has posted enough for that head frame
 * (@rx_wait_for); then the queue is ready, and the carrier comes back on
 * when no queue of the vif is stalled.  The caller holds rx_lock.
 */
static void rx_stall(struct back_queue *q)
{
	struct back_vif *vif = q->vif;
	unsigned int n = rx_purge(q);

	back_stat_add(&q->stats->rx_stall_flushed, n);
	back_stat_add(&q->stats->rx_stalls, 1);
	q->rx_blocked_since = 0;
	atomic_store_explicit(&q->rx_stalled, true, memory_order_seq_cst);
	if (atomic_fetch_add_explicit(&vif->rx_stalled_queues, 1, memory_order_relaxed) == 0) {
		warn("vif%u.%u: guest RX stalled: queue %u had too few buffers for %llu ms; "
		     "carrier off",
		     vif->domid, vif->devid, q->id,
		     (unsigned long long)(vif->rx_stall_ns / 1000000));
		back_ctl_kick(q->b); /* the "carrier" key */
	}
}

/* A stalled queue whose guest has posted enough is ready again; the caller holds rx_lock. */
static bool rx_unstall(struct back_queue *q)
{
	struct back_vif *vif = q->vif;
	int avail = rx_avail(q, true);

	if (avail < 0 || avail < (int)(atomic_load_explicit(&q->rx_wait_for, memory_order_relaxed) -
				       q->rx.req_cons))
		return false;
	atomic_store_explicit(&q->rx_stalled, false, memory_order_seq_cst);
	if (atomic_fetch_sub_explicit(&vif->rx_stalled_queues, 1, memory_order_relaxed) == 1) {
		info("vif%u.%u: guest RX ready again (queue %u); carrier on", vif->domid,
		     vif->devid, q->id);
		back_ctl_kick(q->b);
	}
	return true;
}

bool back_rx_poll(struct back_queue *q, uint64_t now, int *timeout_ms)
{
	struct back_mpsc_item *items[BACK_BATCH], *it;
	uint32_t lens[BACK_BATCH];
	unsigned int n = 0, done = 0;
	uint32_t bytes = 0;
	uint64_t due;
	bool did;

	/* Everything queued before this is seen below (back_rx_has_input()). */
	q->rx_gen_seen = atomic_load_explicit(&q->rx_gen, memory_order_seq_cst);
	/*
	 * Wait (one batch at most) for a thread delivering straight into our
	 * ring: giving up instead could lose the guest's event that woke us.
	 */
	pthread_mutex_lock(&q->rx_lock);
	did = rx_maintain(q, now, &due);
	if (atomic_load_explicit(&q->rx_stalled, memory_order_relaxed) && !rx_unstall(q)) {
		/* What an xmit() racing the stall queued before it saw the carrier off. */
		n = rx_purge(q);
		back_stat_add(&q->stats->rx_stall_flushed, n);
		pthread_mutex_unlock(&q->rx_lock);
		return did || n;
	}
	if (!back_mpsc_peek(&q->rxq, 0)) {
		atomic_store_explicit(&q->rx_blocked, false, memory_order_relaxed);
		q->rx_blocked_since = 0;
		pthread_mutex_unlock(&q->rx_lock);
		return did;
	}
	while (n < BACK_BATCH && (it = back_mpsc_peek(&q->rxq, n)) != NULL)
		items[n++] = it;
	for (unsigned int i = 0; i < n; i++)
		lens[i] = item_len(items[i]);
	done = rx_deliver(q, items, n, false);
	for (unsigned int i = 0; i < done; i++) {
		bytes += lens[i];
		back_mpsc_pop(&q->rxq);
	}
	atomic_fetch_sub_explicit(&q->rxq_bytes, bytes, memory_order_relaxed);
	if (!atomic_load_explicit(&q->rx_blocked, memory_order_relaxed)) {
		q->rx_blocked_since = 0;
	} else if (done || !q->rx_blocked_since) {
		q->rx_blocked_since = now; /* the guest took frames: its wait starts again */
	} else if (q->vif->rx_stall_ns && now - q->rx_blocked_since >= q->vif->rx_stall_ns) {
		rx_stall(q);
		did = true;
	}
	if (q->rx_blocked_since && q->vif->rx_stall_ns &&
	    q->rx_blocked_since + q->vif->rx_stall_ns < due)
		due = q->rx_blocked_since + q->vif->rx_stall_ns;
	if (due != UINT64_MAX && back_mpsc_peek(&q->rxq, 0)) {
		uint64_t ms = due > now ? (due - now + 999999) / 1000000 : 0;

		/* a second at most: a timer, not a promise; re-armed every round */
		*timeout_ms = ms > 1000 ? 1000 : (int)ms;
	}
	/* A frontend without feature-rx-notify never kicks us: poll it every ms. */
	if (atomic_load_explicit(&q->rx_blocked, memory_order_relaxed) && !q->vif->fe.rx_notify &&
	    *timeout_ms != 0)
		*timeout_ms = 1;
	pthread_mutex_unlock(&q->rx_lock);
	return did || done > 0;
}
