// SPDX-License-Identifier: MIT
/* switch.c - the learning bridge: switch and port life cycle, forwarding, statistics */

/*
 * Theory of Operation
 *
 * sw_forward() runs on the threads that own the input port, any number at
 * once, and takes no lock except the FDB mutex once per batch that saw a
 * new or moved source MAC.  It works SW_BATCH_MAX frames at a time, in
 * three passes over a batch kept on its own stack:
 *
 *   1. classify   each frame, in order: validate the header copy, collect a
 *                 learning request or refresh the source's entry, and pick
 *                 the destination: one port, "flood" or "drop".  Dropped
 *                 frames are put at once.
 *   2. reference  the output ports are the distinct unicast destinations,
 *                 plus, if any frame floods, every other published port.
 *                 A flooded frame gets one reference per output port
 *                 (sw_pkt_get once, for all of them) before any xmit(), so
 *                 it cannot complete while the switch still looks at it.
 *   3. transmit   per output port, one xmit() with its frames in input
 *                 order; frames it refuses are put and counted.  Lengths
 *                 were copied in pass 1: after its last xmit() a frame may
 *                 already be completed and must not be read.
 *
 * A port being captured (capture.c) has its frames copied to the capture's
 * socket before pass 1 (input) and before its xmit() (output).
 *
 * Then the learning requests are applied (fdb.c) and the counters are added,
 * one relaxed atomic add per non-zero counter and port.
 *
 * The whole call is one epoch section (epoch.c): ports found in ports[] or
 * through the FDB stay allocated until it returns, even if sw_port_del()
 * runs meanwhile.  Port add/del are serialised by ctl_lock; ports[] is
 * written with ctl_lock and the FDB lock held, so learning (under the FDB
 * lock) can tell whether its port is still published.
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "switch/internal.h"

/* Destinations in pass 1 besides a port number (which is < SW_MAX_PORTS). */
#define DEST_DROP  0xfffeU
#define DEST_FLOOD 0xffffU

/* 802.1D reserved group addresses 01:80:c2:00:00:00..0f, packed. */
#define MAC_LINK_LOCAL	    0x0180c2000000ULL
#define MAC_LINK_LOCAL_MASK 0xfffffffffff0ULL

#define NS_PER_S 1000000000ULL

/* clang-format cannot lay out a braced initialiser in a macro. */
// clang-format off
#define PSTAT(n) { #n, offsetof(struct sw_port_stats, n) }
#define SSTAT(n) { #n, offsetof(struct sw_stats, n) }
// clang-format on

static const struct sw_stat_desc port_stat_descs[] = {
    PSTAT(rx_packets),	   PSTAT(rx_bytes),	 PSTAT(rx_dropped), PSTAT(rx_length_errors),
    PSTAT(rx_src_invalid), PSTAT(rx_link_local), PSTAT(same_port),  PSTAT(flood),
    PSTAT(tx_packets),	   PSTAT(tx_bytes),	 PSTAT(tx_dropped), PSTAT(learn_new),
    PSTAT(learn_moved),	   PSTAT(learn_limit),	 PSTAT(learn_full), PSTAT(fdb_entries),
    PSTAT(rx_no_dest),
};

static const struct sw_stat_desc sw_stat_descs[] = {
    SSTAT(fdb_entries),
    SSTAT(fdb_aged),
    SSTAT(fdb_full),
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * struct fwd_batch - one batch of sw_forward(), on the caller's stack
 * @pkt: the frames; NULL once dropped
 * @len: their lengths, copied in pass 1
 * @dest: port number, DEST_FLOOD or DEST_DROP
 * @sent: accepted by at least one port
 * @out: output ports: first the @nuni unicast ones, then flood-only ones
 * @nout: entries of @out
 * @nuni: unicast destinations at the head of @out
 * @out_map: bitmap of port numbers in @out
 * @flood: indexes of flooded frames, in order
 * @nflood: entries of @flood
 * @learn: learning requests, one per MAC
 * @nlearn: entries of @learn
 * @c: counters of the input port for this batch
 */
struct fwd_batch {
	struct sw_pkt *pkt[SW_BATCH_MAX];
	uint32_t len[SW_BATCH_MAX];
	uint16_t dest[SW_BATCH_MAX];
	bool sent[SW_BATCH_MAX];
	struct sw_port *out[SW_MAX_PORTS];
	unsigned int nout;
	unsigned int nuni;
	uint64_t out_map[SW_MAX_PORTS / 64];
	uint8_t flood[SW_BATCH_MAX];
	unsigned int nflood;
	struct sw_learn learn[SW_BATCH_MAX];
	unsigned int nlearn;
	/*
	 * The last source learned and the last destination looked up in this
	 * batch (a bulk flow repeats both): frames that repeat them skip the
	 * keyed hash and the table probe.  A result a few frames old is as
	 * good as a fresh one: the table may change under any lookup.
	 */
	uint64_t memo_src, memo_dst;
	int memo_dst_num; /* port number, or -1: not in the table */
	bool memo_src_ok, memo_dst_ok;
	/* What became of the memoised source, so that each frame from it counts alike. */
	enum { SRC_KNOWN, SRC_QUEUED, SRC_LIMIT, SRC_FULL } memo_src_fate;
	unsigned int memo_src_req; /* SRC_QUEUED: its entry in @learn */
	struct {
		uint64_t rx_bytes, rx_dropped, rx_length_errors, rx_src_invalid, rx_link_local;
		uint64_t same_port, flood, no_dest, learn_limit, learn_full;
	} c;
};

static uint64_t clock_monotonic_coarse(void *arg)
{
	struct timespec ts;

	/* Coarse (a few ms) is plenty for second-granularity ageing, and cheap. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t sw_now(const struct sw *sw)
{
	return sw->cfg.clock(sw->cfg.clock_arg);
}

void sw_config_init(struct sw_config *cfg)
{
	*cfg = (struct sw_config){
	    .fdb_max = SW_DEFAULT_FDB_MAX,
	    .port_mac_limit = SW_DEFAULT_MAC_LIM,
	    .ageing_s = SW_DEFAULT_AGEING,
	    .clock = NULL,
	    .clock_arg = NULL,
	};
}

int sw_create(const struct sw_config *cfg, struct sw **out)
{
	struct sw *sw;
	int ret;

	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	if (cfg)
		sw->cfg = *cfg;
	else
		sw_config_init(&sw->cfg);
	if (!sw->cfg.clock)
		sw->cfg.clock = clock_monotonic_coarse;
	if (sw->cfg.fdb_max < 1 || sw->cfg.fdb_max > SW_FDB_MAX_LIMIT || sw->cfg.ageing_s < 1 ||
	    sw->cfg.ageing_s > SW_AGEING_MAX_S) {
		ret = -EINVAL;
		goto err_free_sw;
	}
	if (sodium_init() < 0) {
		ret = -EIO;
		goto err_free_sw;
	}
	sw->readers = aligned_alloc(64, SW_MAX_THREADS * sizeof(*sw->readers));
	if (!sw->readers) {
		ret = -ENOMEM;
		goto err_free_sw;
	}
	for (unsigned int i = 0; i < SW_MAX_THREADS; i++)
		atomic_init(&sw->readers[i].epoch, 0);
	/* Epoch 0 means "outside"; sections start at 1. */
	atomic_init(&sw->epoch, 1);
	ret = sw_fdb_init(&sw->fdb, &sw->cfg);
	if (ret)
		goto err_free_readers;
	ret = -pthread_mutex_init(&sw->ctl_lock, NULL);
	if (ret)
		goto err_fdb_fini;
	*out = sw;
	return 0;

err_fdb_fini:
	sw_fdb_fini(&sw->fdb);
err_free_readers:
	free(sw->readers);
err_free_sw:
	free(sw);
	return ret;
}

void sw_destroy(struct sw *sw)
{
	if (!sw)
		return;
	for (unsigned int i = 0; i < SW_MAX_PORTS; i++)
		free(atomic_load_explicit(&sw->ports[i], memory_order_relaxed));
	pthread_mutex_destroy(&sw->ctl_lock);
	sw_fdb_fini(&sw->fdb);
	free(sw->readers);
	free(sw);
}

/**
 * sw_port_by_name() - the published port of a name; ctl_lock held
 * @sw: the switch
 * @name: the name
 *
 * Return: the port, or NULL if none is named @name
 */
struct sw_port *sw_port_by_name(struct sw *sw, const char *name)
{
	unsigned int hi = atomic_load_explicit(&sw->port_hi, memory_order_relaxed);

	for (unsigned int i = 0; i < hi && i < SW_MAX_PORTS; i++) {
		struct sw_port *q = atomic_load_explicit(&sw->ports[i], memory_order_relaxed);

		if (q && !strcmp(q->name, name))
			return q;
	}
	return NULL;
}

int sw_port_add(struct sw *sw, const char *name, const struct sw_port_ops *ops, void *priv,
		struct sw_port **out)
{
	struct sw_port *p;
	unsigned int num;
	size_t nlen;
	int ret = 0;

	if (!name || !*name || !ops || !ops->xmit)
		return -EINVAL;
	nlen = strlen(name);
	if (nlen >= SW_PORT_NAME_MAX)
		return -ENAMETOOLONG;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = ops;
	p->priv = priv;
	p->sw = sw;
	memcpy(p->name, name, nlen + 1);
	atomic_init(&p->mac_limit, sw->cfg.port_mac_limit);

	pthread_mutex_lock(&sw->ctl_lock);
	/* Names are how `pvnet capture` and `pvnet status` find a port: one port each. */
	if (sw_port_by_name(sw, name)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	for (num = 0; num < SW_MAX_PORTS; num++)
		if (!atomic_load_explicit(&sw->ports[num], memory_order_relaxed))
			break;
	if (num == SW_MAX_PORTS) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	p->num = (uint16_t)num;
	pthread_mutex_lock(&sw->fdb.lock);
	atomic_store(&sw->ports[num], p); /* publishes the initialised port */
	pthread_mutex_unlock(&sw->fdb.lock);
	if (num >= atomic_load_explicit(&sw->port_hi, memory_order_relaxed))
		atomic_store(&sw->port_hi, num + 1);
	*out = p;
	p = NULL;
out_unlock:
	pthread_mutex_unlock(&sw->ctl_lock);
	free(p);
	return ret;
}

int sw_port_del(struct sw *sw, struct sw_port *p)
{
	struct sw_capture *cap;

	if (!p || p->sw != sw || p->num >= SW_MAX_PORTS)
		return -EINVAL;
	if (sw_epoch_is_inside(sw))
		return -EDEADLK;

	pthread_mutex_lock(&sw->ctl_lock);
	if (atomic_load_explicit(&sw->ports[p->num], memory_order_relaxed) != p) {
		pthread_mutex_unlock(&sw->ctl_lock);
		return -EINVAL;
	}
	pthread_mutex_lock(&sw->fdb.lock);
	atomic_store(&sw->ports[p->num], NULL);
	sw_fdb_flush_port(sw, p);
	pthread_mutex_unlock(&sw->fdb.lock);
	cap = sw_capture_detach(p);
	/* Still under ctl_lock: the number is not reused before the grace period. */
	sw_epoch_synchronize(sw);
	sw_capture_gone(cap); /* under ctl_lock: sw_capture_stop() may not free it meanwhile */
	pthread_mutex_unlock(&sw->ctl_lock);
	free(p);
	return 0;
}

void sw_port_set_mac_limit(struct sw_port *p, uint32_t limit)
{
	atomic_store_explicit(&p->mac_limit, limit, memory_order_relaxed);
}

/* Add a port to the batch's output list unless it is there already. */
static void fwd_out_add(struct fwd_batch *b, struct sw_port *p)
{
	uint64_t bit = 1ULL << (p->num % 64);

	if (b->out_map[p->num / 64] & bit)
		return;
	b->out_map[p->num / 64] |= bit;
	b->out[b->nout++] = p;
}

/* Queue a learning request for @mac, or count one more frame for the batch's request. */
static unsigned int fwd_learn_add(struct fwd_batch *b, uint64_t mac, uint64_t hash)
{
	for (unsigned int i = 0; i < b->nlearn; i++)
		if (b->learn[i].mac == mac) {
			b->learn[i].frames++;
			return i;
		}
	b->learn[b->nlearn] = (struct sw_learn){.mac = mac, .hash = hash, .frames = 1};
	return b->nlearn++;
}

/* Pass 1, source half: refresh a known source, or ask to learn it; remember which. */
static void fwd_learn_src(struct sw *sw, struct sw_port *in, struct fwd_batch *b,
			  const uint8_t *smac, uint64_t src, uint32_t now_s)
{
	uint64_t hash = sw_fdb_hash(sw, smac);
	unsigned int num;
	int slot = sw_fdb_find(sw, src, hash, &num);

	if (slot >= 0 && num == in->num) {
		sw_fdb_touch(sw, slot, now_s);
		b->memo_src_fate = SRC_KNOWN;
		return;
	}
	/* Early, lock-free limit checks keep a MAC-spraying guest off the mutex. */
	if (atomic_load_explicit(&in->stats.fdb_entries, memory_order_relaxed) >=
	    atomic_load_explicit(&in->mac_limit, memory_order_relaxed)) {
		b->c.learn_limit++;
		b->memo_src_fate = SRC_LIMIT;
		return;
	}
	if (slot < 0 &&
	    atomic_load_explicit(&sw->stats.fdb_entries, memory_order_relaxed) >= sw->fdb.max) {
		b->c.learn_full++;
		b->memo_src_fate = SRC_FULL;
		return;
	}
	b->memo_src_req = fwd_learn_add(b, src, hash);
	b->memo_src_fate = SRC_QUEUED;
}

/*
 * Pass 1, source half, for a frame from the memoised source: no lookup,
 * but the frame counts as the first did (learn_limit, learn_full, or one
 * more frame of the learning request, which counts them should the
 * request be refused under the lock).
 */
static void fwd_learn_again(struct fwd_batch *b)
{
	switch (b->memo_src_fate) {
	case SRC_LIMIT:
		b->c.learn_limit++;
		break;
	case SRC_FULL:
		b->c.learn_full++;
		break;
	case SRC_QUEUED:
		b->learn[b->memo_src_req].frames++;
		break;
	case SRC_KNOWN:
		break;
	}
}

/* Pass 1 for frame @i: validate, learn, choose the destination. */
static void fwd_classify(struct sw *sw, struct sw_port *in, struct fwd_batch *b, unsigned int i,
			 uint32_t now_s)
{
	struct sw_pkt *pkt = b->pkt[i];
	const uint8_t *h = pkt->hdr;
	uint64_t src, dst;
	struct sw_port *p;
	unsigned int num;

	b->len[i] = pkt->len;
	b->c.rx_bytes += pkt->len;
	pkt->in_port = in->num;
	if (!h || pkt->hdr_len < SW_ETH_HLEN || pkt->len < SW_ETH_HLEN || pkt->hdr_len > pkt->len ||
	    pkt->nfrags > SW_PKT_MAX_FRAGS) {
		b->c.rx_length_errors++;
		goto drop;
	}
	dst = sw_mac_pack(h);
	src = sw_mac_pack(h + SW_ETH_ALEN);
	/* As Linux's br_handle_frame(): group or zero sources are invalid. */
	if ((h[SW_ETH_ALEN] & 1) || !src) {
		b->c.rx_src_invalid++;
		goto drop;
	}
	if ((dst & MAC_LINK_LOCAL_MASK) == MAC_LINK_LOCAL) {
		b->c.rx_link_local++;
		goto drop;
	}
	if (!b->memo_src_ok || b->memo_src != src) {
		fwd_learn_src(sw, in, b, h + SW_ETH_ALEN, src, now_s);
		b->memo_src = src;
		b->memo_src_ok = true;
	} else {
		fwd_learn_again(b);
	}

	if (h[0] & 1)
		goto flood;
	if (!b->memo_dst_ok || b->memo_dst != dst) {
		b->memo_dst_num =
		    sw_fdb_find(sw, dst, sw_fdb_hash(sw, h), &num) < 0 ? -1 : (int)num;
		b->memo_dst = dst;
		b->memo_dst_ok = true;
	}
	if (b->memo_dst_num < 0)
		goto flood;
	num = (unsigned int)b->memo_dst_num;
	p = atomic_load(&sw->ports[num]); /* seq_cst: see epoch.c */
	if (!p)
		goto flood;
	if (p == in) {
		b->c.same_port++;
		goto drop;
	}
	b->dest[i] = (uint16_t)num;
	fwd_out_add(b, p);
	return;

flood:
	b->dest[i] = DEST_FLOOD;
	b->flood[b->nflood++] = (uint8_t)i;
	b->c.flood++;
	return;
drop:
	b->dest[i] = DEST_DROP;
	b->c.rx_dropped++;
	b->pkt[i] = NULL;
	sw_pkt_put(pkt);
}

/* Pass 2: add the flood-only ports and give flooded frames their references. */
static void fwd_reference(struct sw *sw, struct sw_port *in, struct fwd_batch *b)
{
	unsigned int hi = atomic_load(&sw->port_hi);

	b->nuni = b->nout;
	if (!b->nflood)
		return;
	for (unsigned int num = 0; num < hi && num < SW_MAX_PORTS; num++) {
		struct sw_port *p = atomic_load(&sw->ports[num]);

		if (p && p != in)
			fwd_out_add(b, p);
	}
	for (unsigned int k = 0; k < b->nflood; k++) {
		unsigned int i = b->flood[k];

		if (b->nout > 1) {
			sw_pkt_get(b->pkt[i], b->nout - 1);
		} else if (!b->nout) {
			/* Alone on the segment: nowhere to go. */
			b->c.rx_dropped++;
			b->c.no_dest++;
			sw_pkt_put(b->pkt[i]);
			b->pkt[i] = NULL;
		}
	}
}

/* Pass 3 for one output port: gather its frames in order, xmit, account. */
static void fwd_xmit(struct fwd_batch *b, struct sw_port *p, bool unicast, unsigned int n_in)
{
	struct sw_pkt *v[SW_BATCH_MAX];
	struct sw_capture *cap;
	uint8_t idx[SW_BATCH_MAX];
	unsigned int m = 0, ok;
	uint64_t bytes = 0;

	if (unicast) {
		for (unsigned int i = 0; i < n_in; i++)
			if (b->pkt[i] && (b->dest[i] == p->num || b->dest[i] == DEST_FLOOD))
				idx[m++] = (uint8_t)i;
	} else {
		for (unsigned int k = 0; k < b->nflood; k++)
			if (b->pkt[b->flood[k]])
				idx[m++] = b->flood[k];
	}
	if (!m)
		return;
	for (unsigned int k = 0; k < m; k++)
		v[k] = b->pkt[idx[k]];
	cap = atomic_load_explicit(&p->capture, memory_order_acquire);
	if (cap)
		sw_capture_batch(cap, v, m, SW_CAPTURE_OUT);

	ok = p->ops->xmit(p, v, m);
	if (ok > m)
		ok = m; /* a broken xmit must not make us count what it never got */
	for (unsigned int k = 0; k < m; k++) {
		if (k < ok) {
			bytes += b->len[idx[k]];
			b->sent[idx[k]] = true;
		} else {
			/* v[] is the callee's scratch: put from our own array. */
			sw_pkt_put(b->pkt[idx[k]]);
		}
	}
	if (ok) {
		atomic_fetch_add_explicit(&p->stats.tx_packets, ok, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->stats.tx_bytes, bytes, memory_order_relaxed);
	}
	if (m - ok)
		atomic_fetch_add_explicit(&p->stats.tx_dropped, m - ok, memory_order_relaxed);
}

static void stat_add(_Atomic uint64_t *c, uint64_t v)
{
	if (v)
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* Add one batch's input-port counters. */
static void fwd_account(struct sw *sw, struct sw_port *in, const struct fwd_batch *b,
			unsigned int n)
{
	struct sw_port_stats *s = &in->stats;

	stat_add(&s->rx_packets, n);
	stat_add(&s->rx_bytes, b->c.rx_bytes);
	stat_add(&s->rx_dropped, b->c.rx_dropped);
	stat_add(&s->rx_length_errors, b->c.rx_length_errors);
	stat_add(&s->rx_src_invalid, b->c.rx_src_invalid);
	stat_add(&s->rx_link_local, b->c.rx_link_local);
	stat_add(&s->same_port, b->c.same_port);
	stat_add(&s->flood, b->c.flood);
	stat_add(&s->rx_no_dest, b->c.no_dest);
	stat_add(&s->learn_limit, b->c.learn_limit);
	stat_add(&s->learn_full, b->c.learn_full);
	stat_add(&sw->stats.fdb_full, b->c.learn_full);
}

/* One batch of at most SW_BATCH_MAX frames; returns how many were sent. */
static unsigned int fwd_batch(struct sw *sw, struct sw_port *in, struct sw_pkt **pkts,
			      unsigned int n, uint32_t now_s)
{
	struct sw_capture *cap = atomic_load_explicit(&in->capture, memory_order_acquire);
	struct fwd_batch b;
	unsigned int sent = 0;

	/* First: what the port received, whether or not the switch will want it. */
	if (cap)
		sw_capture_batch(cap, pkts, n, SW_CAPTURE_IN);
	b.nout = 0;
	b.nflood = 0;
	b.nlearn = 0;
	b.memo_src_ok = b.memo_dst_ok = false;
	memset(b.out_map, 0, sizeof(b.out_map));
	memset(&b.c, 0, sizeof(b.c));
	memset(b.sent, 0, sizeof(b.sent));
	memcpy(b.pkt, pkts, n * sizeof(*pkts));

	for (unsigned int i = 0; i < n; i++)
		fwd_classify(sw, in, &b, i, now_s);
	fwd_reference(sw, in, &b);
	for (unsigned int k = 0; k < b.nout; k++)
		fwd_xmit(&b, b.out[k], k < b.nuni, n);
	if (b.nlearn)
		sw_fdb_learn(sw, in, b.learn, b.nlearn, now_s);
	fwd_account(sw, in, &b, n);
	for (unsigned int i = 0; i < n; i++)
		sent += b.sent[i];
	return sent;
}

/* Drop a whole call's frames we cannot switch at all. */
static void fwd_drop_all(struct sw_port *in, struct sw_pkt **pkts, unsigned int n)
{
	uint64_t bytes = 0;

	for (unsigned int i = 0; i < n; i++) {
		bytes += pkts[i]->len;
		sw_pkt_put(pkts[i]);
	}
	stat_add(&in->stats.rx_packets, n);
	stat_add(&in->stats.rx_bytes, bytes);
	stat_add(&in->stats.rx_dropped, n);
}

unsigned int sw_forward(struct sw *sw, struct sw_port *in, struct sw_pkt **pkts, unsigned int n)
{
	unsigned int sent = 0;
	uint32_t now_s;
	int token;

	if (!n)
		return 0;
	token = sw_epoch_enter(sw);
	if (token < 0) {
		fwd_drop_all(in, pkts, n);
		return 0;
	}
	/* Our own invariant: @in must be a live port of @sw (its owner calls). */
	if (in->sw != sw || atomic_load(&sw->ports[in->num]) != in) {
		static atomic_bool warned;

		if (!atomic_exchange(&warned, true))
			err("switch: sw_forward() on port %s, which is not on this switch",
			    in->name);
		sw_epoch_exit(sw, token);
		fwd_drop_all(in, pkts, n);
		return 0;
	}
	now_s = (uint32_t)(sw->cfg.clock(sw->cfg.clock_arg) / NS_PER_S);
	for (unsigned int off = 0; off < n; off += SW_BATCH_MAX) {
		unsigned int k = n - off < SW_BATCH_MAX ? n - off : SW_BATCH_MAX;

		sent += fwd_batch(sw, in, pkts + off, k, now_s);
	}
	sw_epoch_exit(sw, token);
	return sent;
}

const struct sw_stat_desc *sw_port_stats_names(unsigned int *n)
{
	*n = ARRAY_SIZE(port_stat_descs);
	return port_stat_descs;
}

uint64_t sw_stat_read(const void *base, const struct sw_stat_desc *d)
{
	const _Atomic uint64_t *c = (const _Atomic uint64_t *)((const char *)base + d->offset);

	return atomic_load_explicit((_Atomic uint64_t *)c, memory_order_relaxed);
}

void sw_port_stats_get(const struct sw_port *p, uint64_t *vals)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(port_stat_descs); i++)
		vals[i] = sw_stat_read(&p->stats, &port_stat_descs[i]);
}

const struct sw_stat_desc *sw_stats_names(unsigned int *n)
{
	*n = ARRAY_SIZE(sw_stat_descs);
	return sw_stat_descs;
}

void sw_stats_get(struct sw *sw, uint64_t *vals)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(sw_stat_descs); i++)
		vals[i] = sw_stat_read(&sw->stats, &sw_stat_descs[i]);
}
