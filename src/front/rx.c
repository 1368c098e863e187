// SPDX-License-Identifier: MIT
/* rx.c - netfront receive: validated reassembly of RX responses, copying and zero-copy receive */
#include <errno.h>
#include <string.h>

#include "common/prefetch.h"
#include "front/front.h"

/*
 * Theory of Operation
 *
 * The backend writes each RX response at the ring index of the request it
 * answers (Linux netback does; Linux netfront relies on it), so the buffer
 * behind a response is rx_slot[index & 255], and the response's id must be
 * that index & 255 too.  A frame is:
 *
 *   first data slot [extra_info: extras follow]  [more_data: data follows]
 *   extra slots (GSO, HASH, ...; XEN_NETIF_EXTRA_FLAG_MORE chains them)
 *   further data slots, more_data on all but the last
 *
 * and its length is the sum of the data slots' statuses.  Extra slots
 * overlay responses; the buffers posted at their indexes carry no data and
 * go straight back to the free list.
 *
 * front_rx_slots2pkt() reassembles one frame from the responses between
 * rsp_cons and the producer, copying each response once (RING_COPY_RESPONSE)
 * and validating the copy.  The backend is trusted only as far as its own
 * memory (XSA-391/396 hardening): a protocol violation - responses beyond
 * what we posted, an id that is not its slot's, a status past the page, a
 * more_data chain longer than any frame can be, an extra of unknown type or
 * too many extras - marks the vif broken (-EIO from then on), with a reason.
 * A negative status (NETIF_RSP_ERROR/DROPPED) is the backend's way to drop a
 * frame: the frame is consumed and counted in rx_errors.
 *
 * A frame whose last slot the backend has not pushed yet is left on the
 * ring until it is complete (the chain bound keeps that finite).
 */

_Static_assert(sizeof(struct netif_extra_info) == sizeof(netif_rx_response_t),
	       "an extra overlays an RX response");
_Static_assert(sizeof(union front_tx_slot) == sizeof(netif_tx_request_t),
	       "an extra fits a TX slot");

/* Check one data slot's response; return NULL or why it is a protocol violation. */
static const char *check_data(const netif_rx_response_t *rsp, RING_IDX idx, RING_IDX mask)
{
	if (rsp->id != (idx & mask))
		return "response id is not its slot's request id";
	if (rsp->status >= 0 && (rsp->offset >= PVNET_PAGE_SIZE ||
				 (uint32_t)rsp->offset + (uint32_t)rsp->status > PVNET_PAGE_SIZE))
		return "data runs past the end of its page";
	return NULL;
}

static void add_frag(struct front_rx_pkt *pkt, const netif_rx_response_t *rsp, RING_IDX idx)
{
	if (rsp->status < 0) {
		pkt->error = true;
		return;
	}
	pkt->frags[pkt->nfrags].idx = idx;
	pkt->frags[pkt->nfrags].offset = rsp->offset;
	pkt->frags[pkt->nfrags].len = (uint16_t)rsp->status;
	pkt->nfrags++;
	pkt->len += (uint32_t)rsp->status;
}

static const char *take_extra(struct front_rx_pkt *pkt, const struct netif_extra_info *ex)
{
	if (ex->type == XEN_NETIF_EXTRA_TYPE_NONE || ex->type >= XEN_NETIF_EXTRA_TYPE_MAX)
		return "extra-info slot of an invalid type";
	if (ex->type == XEN_NETIF_EXTRA_TYPE_GSO) {
		/* As Linux netfront: a bad GSO type or a segment size of 0 drops the frame. */
		if ((ex->u.gso.type != XEN_NETIF_GSO_TYPE_TCPV4 &&
		     ex->u.gso.type != XEN_NETIF_GSO_TYPE_TCPV6) ||
		    ex->u.gso.size == 0)
			pkt->error = true;
		pkt->gso_type = ex->u.gso.type;
		pkt->gso_size = ex->u.gso.size;
	} else if (ex->type == XEN_NETIF_EXTRA_TYPE_HASH) {
		/*
		 * A hash we cannot name (a type past the four netif.h defines,
		 * an algorithm other than Toeplitz) is dropped, not the frame:
		 * the application is told of no hash rather than a bogus one.
		 */
		if (ex->u.hash.type > _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP ||
		    ex->u.hash.algorithm != XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ)
			return NULL;
		pkt->flags |= PVNET_PKT_HASH;
		pkt->hash_type = ex->u.hash.type;
		memcpy(&pkt->hash, ex->u.hash.value, sizeof(pkt->hash));
	}
	/* MCAST_ADD/DEL carry nothing for a receiver: consumed and ignored. */
	return NULL;
}

/**
 * front_rx_slots2pkt() - reassemble one frame from RX responses
 * @r: the front ring (only ->sring and the ring size are used)
 * @cons: index of the frame's first response
 * @prod: the producer index, read once by the caller and checked to be
 *	within what was posted
 * @pkt: receives the frame
 * @why: receives the reason on -EPROTO
 *
 * Copies each response once and uses only the copies.  Consumes exactly
 * 0 or 1 frame.
 *
 * Return: slots used by the frame (> 0), 0 if the frame is not complete
 * yet (or @cons == @prod), or -EPROTO for a protocol violation
 */
int front_rx_slots2pkt(const netif_rx_front_ring_t *r, RING_IDX cons, RING_IDX prod,
		       struct front_rx_pkt *pkt, const char **why)
{
	const RING_IDX mask = RING_SIZE(r) - 1;
	RING_IDX avail = prod - cons, pos = 0;
	unsigned int ndata = 1;
	netif_rx_response_t rsp;
	uint16_t first_flags;

	pkt->nslots = 0;
	pkt->nfrags = 0;
	pkt->nextras = 0;
	pkt->len = 0;
	pkt->flags = 0;
	pkt->error = false;
	pkt->gso_type = PVNET_GSO_NONE;
	pkt->gso_size = 0;
	pkt->hash_type = 0;
	pkt->hash = 0;
	if (!avail)
		return 0;
	RING_COPY_RESPONSE(r, cons, &rsp);
	*why = check_data(&rsp, cons, mask);
	if (*why)
		return -EPROTO;
	first_flags = rsp.flags;
	add_frag(pkt, &rsp, cons);
	if (first_flags & NETRXF_data_validated)
		pkt->flags |= PVNET_PKT_DATA_VALIDATED;
	if (first_flags & NETRXF_csum_blank)
		pkt->flags |= PVNET_PKT_CSUM_BLANK;
	pos = 1;
	if (first_flags & NETRXF_extra_info) {
		struct netif_extra_info ex;

		do {
			if (pos == avail)
				return 0;
			if (pkt->nextras == FRONT_RX_MAX_EXTRAS) {
				*why = "extra-info chain longer than the number of extra types";
				return -EPROTO;
			}
			RING_COPY_RESPONSE(r, cons + pos, &rsp);
			memcpy(&ex, &rsp, sizeof(ex));
			*why = take_extra(pkt, &ex);
			if (*why)
				return -EPROTO;
			pkt->extra_idx[pkt->nextras++] = cons + pos;
			pos++;
		} while (ex.flags & XEN_NETIF_EXTRA_FLAG_MORE);
	}
	for (uint16_t more = first_flags & NETRXF_more_data; more; pos++) {
		if (ndata == FRONT_RX_MAX_FRAGS) {
			*why = "more_data chain longer than a frame may be";
			return -EPROTO;
		}
		if (pos == avail)
			return 0;
		RING_COPY_RESPONSE(r, cons + pos, &rsp);
		*why = check_data(&rsp, cons + pos, mask);
		if (*why)
			return -EPROTO;
		add_frag(pkt, &rsp, cons + pos);
		ndata++;
		more = rsp.flags & NETRXF_more_data;
	}
	pkt->nslots = pos;
	/* Frames we cannot hand on: dropped and counted, not a protocol violation. */
	if (pkt->len < PVNET_MIN_FRAME || pkt->len > PVNET_MAX_FRAME)
		pkt->error = true;
	return (int)pos;
}

/* Give the buffers behind a consumed frame's extra slots (and, if @all, data slots) back. */
static void free_slots(struct front_queue *q, const struct front_rx_pkt *pkt, bool all)
{
	const RING_IDX mask = PVNET_RING_SIZE - 1;

	for (RING_IDX i = 0; i < pkt->nslots; i++) {
		uint16_t b = q->rx_slot[(q->rx.rsp_cons + i) & mask];
		bool data = false;

		for (unsigned int f = 0; f < pkt->nfrags && !all; f++)
			data |= pkt->frags[f].idx == q->rx.rsp_cons + i;
		if (data)
			continue;
		q->rx_owner[b] = FRONT_RX_FREE;
		q->rx_free[q->rx_nfree++] = b;
	}
}

/*
 * Read the producer once and check it.  Return the number of responses
 * waiting, or -EIO (vif broken).
 */
static int rx_avail(struct front_queue *q, RING_IDX *prod)
{
	RING_IDX cons = q->rx.rsp_cons;

	*prod = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	if (*prod - cons > q->rx_pushed - cons) {
		front_vif_broken(q->vif,
				 "queue %u: RX response producer %u beyond the %u requests posted",
				 q->index, *prod, q->rx_pushed);
		return -EIO;
	}
	/*
	 * Written by the backend on its CPU: the burst's misses together.
	 * Each line once: a call that takes a frame at a time would otherwise
	 * fetch every waiting response again (a mark outside [cons, prod] is
	 * stale, from a reconnect or a wrap, and starts over at cons).
	 */
	if ((RING_IDX)(q->rx_prefetched - cons) > (RING_IDX)(*prod - cons))
		q->rx_prefetched = cons;
	prefetch_ring(q->rx.sring->ring, sizeof(q->rx.sring->ring[0]), PVNET_RING_SIZE,
		      q->rx_prefetched, *prod - q->rx_prefetched, false);
	q->rx_prefetched = *prod;
	return (int)(*prod - cons);
}

/* The next whole frame: > 0 slots, 0 none (or incomplete: *incomplete set), -EIO. */
static int next_frame(struct front_queue *q, RING_IDX prod, struct front_rx_pkt *pkt,
		      bool *incomplete)
{
	const char *why = NULL;
	int rc;

	for (;;) {
		rc = front_rx_slots2pkt(&q->rx, q->rx.rsp_cons, prod, pkt, &why);
		if (rc < 0) {
			front_vif_broken(q->vif, "queue %u: RX slot %u: %s", q->index,
					 q->rx.rsp_cons, why);
			return -EIO;
		}
		*incomplete = rc == 0 && q->rx.rsp_cons != prod;
		if (rc == 0 || !pkt->error)
			return rc;
		q->stats[FRONT_STAT_RX_ERRORS]++;
		free_slots(q, pkt, true);
		q->rx.rsp_cons += pkt->nslots;
	}
}

/*
 * After a receive call: refill, and go idle if it found nothing.  An event
 * consumed then woke the application for nothing: counted (XSA-391, a
 * backend kicking without work, shows up here).
 */
static void rx_done(struct front_queue *q, int got, bool incomplete, RING_IDX prod)
{
	front_queue_rx_refill(q);
	if (got) {
		q->rx_incomplete = false;
	} else if (!incomplete) {
		q->stats[FRONT_STAT_RX_SPURIOUS] += (uint64_t)front_queue_idle(q, false);
	} else {
		/* Half a frame up to @prod: only a response past it is news. */
		q->rx_seen = prod;
		front_queue_idle(q, true);
	}
}

int front_recv(struct pvnet_vif *vif, unsigned int queue, struct pvnet_pkt *pkts, unsigned int n,
	       void *buf, size_t buflen)
{
	struct front_rx_pkt pkt;
	bool incomplete = false;
	struct front_queue *q;
	unsigned int got = 0;
	size_t used = 0;
	RING_IDX prod;
	int rc;

	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	rc = rx_avail(q, &prod);
	if (rc < 0)
		return rc;
	while (got < n) {
		rc = next_frame(q, prod, &pkt, &incomplete);
		if (rc < 0)
			return got ? (int)got : rc;
		if (rc == 0)
			break;
		if (pkt.len > buflen - used) {
			if (!got) {
				rx_done(q, 1, false, prod); /* not idle: a frame is waiting */
				return -ENOBUFS;
			}
			break;
		}
		char *dst = (char *)buf + used;

		for (unsigned int f = 0; f < pkt.nfrags; f++) {
			uint16_t b = q->rx_slot[pkt.frags[f].idx & (PVNET_RING_SIZE - 1)];

			memcpy((char *)buf + used, (char *)q->rx_page[b] + pkt.frags[f].offset,
			       pkt.frags[f].len);
			used += pkt.frags[f].len;
		}
		pkts[got] = (struct pvnet_pkt){
		    .data = dst,
		    .len = pkt.len,
		    .flags = pkt.flags,
		    .gso_type = pkt.gso_type,
		    .gso_size = pkt.gso_size,
		    .hash_type = pkt.hash_type,
		    .hash = pkt.hash,
		};
		free_slots(q, &pkt, true);
		q->rx.rsp_cons += pkt.nslots;
		q->stats[FRONT_STAT_RX_PACKETS]++;
		q->stats[FRONT_STAT_RX_BYTES] += pkt.len;
		got++;
	}
	rx_done(q, (int)got, incomplete, prod);
	return (int)got;
}

int front_rx_burst(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	struct front_rx_pkt pkt;
	bool incomplete = false;
	struct front_queue *q;
	unsigned int got = 0;
	RING_IDX prod;
	int rc;

	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	rc = rx_avail(q, &prod);
	if (rc < 0)
		return rc;
	while (got < n) {
		struct pvnet_buf *head = NULL, **link = &head;

		rc = next_frame(q, prod, &pkt, &incomplete);
		if (rc < 0)
			return got ? (int)got : rc;
		if (rc == 0)
			break;
		for (unsigned int f = 0; f < pkt.nfrags; f++) {
			uint16_t b = q->rx_slot[pkt.frags[f].idx & (PVNET_RING_SIZE - 1)];
			struct pvnet_buf *pb = &q->rx_buf[b];

			q->rx_owner[b] = FRONT_RX_APP;
			/* whatever the application did to them last time */
			pb->page = q->rx_page[b];
			pb->id = b;
			pb->data = (char *)pb->page + pkt.frags[f].offset;
			/*
			 * The backend just wrote it, from another CPU: start the
			 * fetch of the frame's first line now, so that the
			 * burst's misses overlap before the application reads.
			 */
			if (f == 0)
				prefetch_read(pb->data);
			pb->len = pkt.frags[f].len;
			pb->pkt_len = pkt.len;
			pb->flags = pkt.flags;
			pb->gso_type = pkt.gso_type;
			pb->gso_size = pkt.gso_size;
			pb->hash_type = pkt.hash_type;
			pb->hash = pkt.hash;
			pb->next = NULL;
			*link = pb;
			link = &pb->next;
		}
		free_slots(q, &pkt, false);
		q->rx.rsp_cons += pkt.nslots;
		q->stats[FRONT_STAT_RX_PACKETS]++;
		q->stats[FRONT_STAT_RX_BYTES] += pkt.len;
		bufs[got++] = head;
	}
	rx_done(q, (int)got, incomplete, prod);
	return (int)got;
}

void front_rx_release(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		      unsigned int n)
{
	struct front_queue *q;

	if (queue >= vif->nr_queues || !vif->queues)
		return;
	q = &vif->queues[queue];
	for (unsigned int i = 0; i < n; i++) {
		unsigned int guard = 0;

		for (struct pvnet_buf *b = bufs[i]; b && guard++ <= FRONT_RX_MAX_FRAGS;
		     b = b->next) {
			int id = front_buf_id(q->rx_buf, q->nr_rx, b);

			if (id < 0)
				break; /* not ours: not even its ->next is read */
			if (q->rx_owner[id] != FRONT_RX_APP)
				continue;
			q->rx_owner[id] = FRONT_RX_FREE;
			q->rx_free[q->rx_nfree++] = (uint16_t)id;
		}
	}
	if (atomic_load_explicit(&vif->status, memory_order_acquire) == 0)
		front_queue_rx_refill(q);
}
