// SPDX-License-Identifier: MIT
// rx_deliver.c - guest RX, steps 3 and 4: frames into the buffers the guest posted, by grant copy

/*
 * Theory of Operation
 *
 * rx.c's Theory of Operation describes the queue: direct delivery, the
 * bounded input ring, expiry, copy-out of long-held frames, stalls.  This
 * file is what both ways of delivering end in: back_rx_deliver(), called
 * with rx_lock held by xmit() (direct) or by the queue's worker, takes
 * frames in order while the guest's posted requests hold the head frame:
 *
 *   - slots: pages of data, plus one for a GSO extra and one for a HASH
 *     extra (rx_slots_needed(); Linux's XEN_NETIF_NR_SLOTS_MIN bound);
 *   - a frame with offloads the guest did not negotiate is first made
 *     whole in the queue's scratch (rx_sw_*: a blank checksum filled in,
 *     a GSO frame cut into segments), one such frame per batch; its
 *     segments go as the posted buffers take them, over several batches
 *     if need be, so that it never waits for more than one segment's
 *     slots (a guest keeping fewer buffers posted than a 64 KiB frame
 *     makes segments would otherwise block its queue with it);
 *   - each request used is copied once (RING_COPY_REQUEST) and only the
 *     copy is read; the grant copies of the whole batch go in one call
 *     (gnt.c); responses are written at the index of the request each
 *     consumed, statuses of failed copies patched to NETIF_RSP_ERROR,
 *     pushed once with the notify check, then the frames are put;
 *   - a head frame that does not fit sets req_event to req_cons + what it
 *     needs (full barrier, re-check), so the guest's push notifies us
 *     exactly when it has posted enough.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "back/rx.h"
#include "common/prefetch.h"
#include "switch/frame.h"

/* Per-frame bookkeeping of one RX batch (@npkts: frames the guest gets, segments included). */
struct rx_ent {
	uint32_t len;
	uint16_t npkts;
	uint16_t rsp0;
	uint16_t nrsp;
	uint16_t copy0;
	uint16_t ncopy;
	bool drop;
	bool partial; /* some of q->sw's segments: the frame stays at the head */
};

/*
 * struct back_rx_sw - scratch for doing what a guest did not negotiate
 * @frame: a private copy of the frame being fixed, read once from its pieces
 * @hdrs: each segment's headers
 * @segs: the segments (or, for a checksum, the frame itself as segs[0])
 * @need: each segment's slots on the guest's ring
 * @nseg: how many segments
 * @len: the length of the frame they came from
 * @item: the queue's cell that frame is in, while it goes in parts
 * @flags: SW_PKT_* offload flags of every segment (a blank checksum or none)
 *
 * Made on first use (most guests negotiate every offload), used by whoever
 * holds rx_lock, for one frame per batch: the batch's grant copies read it.
 * The segments of a frame go as the guest's buffers take them, over
 * several batches if need be, as the separate frames Linux's core would
 * have made of it: q->sw_sent counts those gone, and while it is not 0 the
 * frame stays at the head of the queue and q->sw keeps it.  Only a frame
 * already in the queue goes in parts: one a sender is delivering directly
 * is queued whole when it does not fit, since other senders (the trylock
 * of xmit() into another of the vif's queues) may push onto the queue
 * meanwhile, and what goes in parts must be first.
 */
struct back_rx_sw {
	uint8_t frame[XEN_NETIF_MAX_TX_SIZE];
	uint8_t hdrs[BACK_RX_RING_SIZE * SW_TSO_MAX_HDRS];
	struct sw_seg segs[BACK_RX_RING_SIZE];
	uint8_t need[BACK_RX_RING_SIZE];
	uint16_t nseg;
	uint32_t len;
	const struct back_mpsc_item *item;
	uint8_t flags;
};

/* What a frame needs done in software before this guest can take it. */
enum rx_sw {
	RX_SW_NONE = 0,
	RX_SW_CSUM, /* a blank checksum, and no csum offload for its family */
	RX_SW_GSO,  /* a GSO type the guest did not negotiate */
	RX_SW_BAD,  /* needs one of those but is not a frame we can do it for */
};

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
int back_rx_avail(struct back_queue *q, bool seq)
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
	const struct back_rx_piece *pc;
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
	const struct back_rx_piece *pc = s->pc;
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
	const struct back_rx_held *held = it->aux;
	struct back_rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	struct rx_src s = {
	    .pc = pc,
	    .np = back_rx_pieces(it, pc),
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
	const struct back_rx_held *held = it->aux;
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
 * or the segments), each segment's slots in q->sw->need; 0 if it cannot be
 * done (counted; the caller drops the frame).
 */
static unsigned int rx_sw_prepare(struct back_queue *q, const struct back_mpsc_item *it,
				  enum rx_sw kind)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct back_rx_held *held = it->aux;
	struct back_rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	unsigned int np = back_rx_pieces(it, pc), nseg;
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
	for (unsigned int i = 0; i < nseg; i++) {
		unsigned int n = rx_slots_needed(q->vif, sw->segs[i].hdr_len + sw->segs[i].len,
						 SW_GSO_NONE, it->hash_type);

		if (n == 0) {
			back_stat_add(&q->stats->rx_oversize, 1);
			return 0;
		}
		sw->need[i] = (uint8_t)n;
	}
	sw->nseg = (uint16_t)nseg;
	sw->len = len;
	return nseg;
bad:
	back_stat_add(&q->stats->rx_sw_bad, 1);
	return 0;
}

/*
 * How many of q->sw's segments from @from on fit in @slots posted buffers
 * and @ops copy operations; their slots in *@need and bytes in *@bytes.
 */
static unsigned int rx_sw_fit(const struct back_queue *q, unsigned int from, unsigned int slots,
			      unsigned int ops, unsigned int *need, uint32_t *bytes)
{
	const struct back_rx_sw *sw = q->sw;
	unsigned int k = 0, nops = 0;

	*need = 0;
	*bytes = 0;
	for (unsigned int i = from; i < sw->nseg; i++, k++) {
		unsigned int n = sw->need[i];

		/* two pieces: a page boundary splits at most one more */
		if (*need + n > slots || nops + n + 1 > ops)
			break;
		*need += n;
		nops += n + 1;
		*bytes += sw->segs[i].hdr_len + sw->segs[i].len;
	}
	return k;
}

/*
 * Plan q->sw's segments @from .. @from + @nseg - 1 as one entry.  The
 * counters count here: a frame that waited for buffers was prepared again.
 */
static void rx_plan_sw(struct back_queue *q, const struct back_mpsc_item *it, enum rx_sw kind,
		       unsigned int from, unsigned int nseg, unsigned int nrsp, unsigned int *ncopy,
		       struct rx_ent *e)
{
	const struct back_rx_sw *sw = q->sw;
	unsigned int at = nrsp;

	e->rsp0 = (uint16_t)nrsp;
	e->copy0 = (uint16_t)*ncopy;
	e->npkts = (uint16_t)nseg;
	for (unsigned int i = from; i < from + nseg; i++) {
		const struct sw_seg *g = &sw->segs[i];
		struct back_rx_piece pc[2];
		unsigned int np = 0, n = sw->need[i];
		struct rx_src s = {
		    .pc = pc,
		    .flags = sw->flags,
		    .gso_type = SW_GSO_NONE,
		    .hash_type = it->hash_type,
		    .hash = it->hash,
		};

		if (g->hdr_len)
			pc[np++] = (struct back_rx_piece){g->hdr, g->hdr_len};
		pc[np++] = (struct back_rx_piece){sw->frame + g->off, g->len};
		s.np = np;
		rx_plan_src(q, &s, n, at, ncopy);
		at += n;
	}
	e->nrsp = (uint16_t)(at - nrsp);
	e->ncopy = (uint16_t)(*ncopy - e->copy0);
	if (kind == RX_SW_GSO) {
		if (from == 0)
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
			back_queue_warn(q, "grant copy into RX buffer failed");
		} else {
			back_stat_add(&q->stats->rx_bytes, e->len);
			delivered += e->npkts;
		}
		if (!e->partial)
			back_rx_item_release(q, items[i]);
	}
	back_stat_add(&q->stats->rx_packets, delivered);
	if (direct)
		back_stat_add(&q->stats->rx_direct, delivered);

	for (unsigned int i = 0; i < nrsp; i++)
		*RING_GET_RESPONSE(&q->rx, q->rx.rsp_prod_pvt + i) = q->rx_rsp[i];
	q->rx.rsp_prod_pvt += nrsp;
	if (xen_ring_push(&q->rx.sring->rsp_prod, &q->rx.sring->rsp_event, &q->rx_rsp_pub,
			  q->rx.rsp_prod_pvt))
		back_notify(q, q->port_rx);
}

/*
 * Step 3: deliver @items in order while the guest's posted buffers take
 * them, one batch at most.  Returns how many were consumed (delivered, or
 * dropped as undeliverable); the first one not consumed did not fit, and
 * the ring's req_event then asks the guest to notify once it has posted
 * enough, or went in part (a segmented frame: q->sw_sent).  The caller
 * holds rx_lock.
 */
unsigned int back_rx_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			     unsigned int n, bool direct, bool queued)
{
	struct rx_ent ents[BACK_BATCH];
	unsigned int nent = 0, ncopy = 0, nrsp = 0;
	int avail = back_rx_avail(q, false);
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
		uint32_t len = back_rx_item_len(it);
		struct back_rx_piece pc[1 + SW_PKT_MAX_FRAGS];
		const struct back_rx_held *held = it->aux;
		uint8_t gso = held ? held->gso_type : ((struct sw_pkt *)it->ptr)->gso_type;
		enum rx_sw kind = rx_sw_need(q->vif, it);
		unsigned int need = 0, nseg = 0, from = 0;

		*e = (struct rx_ent){.len = len, .npkts = 1};
		if (kind == RX_SW_NONE) {
			need = rx_slots_needed(q->vif, len, gso, it->hash_type);
			if (need == 0 || back_rx_pieces(it, pc) == 0) {
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
			if (q->sw_sent && nent == 0 && kind == RX_SW_GSO && q->sw->item == it &&
			    q->sw->len == len) {
				/* The head frame, some of its segments gone: the rest. */
				from = q->sw_sent;
				nseg = q->sw->nseg;
			} else {
				q->sw_sent = 0;
				if (kind != RX_SW_BAD)
					nseg = rx_sw_prepare(q, it, kind);
				else
					back_stat_add(&q->stats->rx_sw_bad, 1);
				if (nseg == 0) {
					e->drop = true;
					nent++;
					continue;
				}
			}
			sw_used = true;
			need = q->sw->need[from]; /* its next segment, at least */
		}
		if ((unsigned int)avail - nrsp < need) {
			/* Ask to be notified when enough are posted, then re-check. */
			__atomic_store_n(&q->rx.sring->req_event, q->rx.req_cons + need,
					 __ATOMIC_SEQ_CST);
			avail = back_rx_avail(q, true);
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
		if (nseg) {
			/* As many segments as fit: one at least, the next's slots are there, */
			_Static_assert(BACK_RX_MAX_SLOTS + 1 <= BACK_RX_OPS_PER_PKT,
				       "and the loop's bound leaves a segment's copies");
			unsigned int k = rx_sw_fit(q, from, (unsigned int)avail - nrsp,
						   BACK_RX_COPY_OPS - ncopy, &need, &e->len);

			e->partial = from + k < nseg;
			if (e->partial && !queued)
				break; /* queued whole: the queue's head goes in parts */
			q->sw_sent = e->partial ? (uint16_t)(from + k) : 0;
			if (e->partial)
				q->sw->item = it;
			rx_plan_sw(q, it, kind, from, k, nrsp, &ncopy, e);
		} else {
			rx_plan(q, it, need, nrsp, &ncopy, e);
		}
		nrsp += need;
		nent++;
		if (e->partial)
			break;
	}
	if (nent)
		rx_flush(q, items, ents, nent, ncopy, nrsp, direct);
	/* A frame partly delivered is not consumed: it stays first, for the next call. */
	return nent && ents[nent - 1].partial ? nent - 1 : nent;
}
