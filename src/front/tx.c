// SPDX-License-Identifier: MIT
/* tx.c - netfront transmit: frames to TX ring slots, copying and zero-copy sends */
#include <errno.h>
#include <string.h>

#include "common/prefetch.h"
#include "front/front.h"

/*
 * Theory of Operation
 *
 * A frame becomes ring slots in one pure step, front_tx_pkt2slots(), from a
 * list of fragments (grant, offset, size, request id).  Slot layout (netif.h):
 *
 *   first request: size = whole frame, csum flags, extra_info if GSO,
 *                  more_data if more fragments follow
 *   GSO extra:     type GSO, MSS, TCPv4/v6 (only when asked and negotiated)
 *   more requests: size = this fragment, more_data on all but the last
 *
 * The copying send fills TX buffer pages (one page per fragment, offset 0)
 * from the application's frame; the zero-copy submit takes the fragments
 * from buffers the application filled in place.  Both then write the slots
 * at req_prod_pvt and, once per call, push with xen_ring_push() (the ring
 * macro's check, the old producer from our own copy) and notify at most once.
 *
 * Ids: TX buffer i is request id i, so the free list of buffers is the free
 * list of ids (always < ring size) and a response's id says exactly which
 * page the backend is done with.  Completions are reaped at the start of
 * every send (as Linux does after each transmit), so a busy sender needs no
 * TX interrupts at all; a send that finds no room sets tx_stopped and arms
 * the completion event (front_queue_idle()).
 *
 * Multicast filter requests (pvnet_mcast_add()/_del()) are netif's
 * "dummy" requests: a first slot of size 0 with one MCAST_ADD/DEL extra.
 * They take a TX id like a frame (its buffer is not sent: the backend
 * reads no data), marked FRONT_TX_MCAST so that reaping counts their
 * answers apart from frames'.
 *
 * The functions here are the lock-free bodies of the public data calls;
 * steer.c wraps them (taking the queue's lock when the vif is shared by
 * several sender threads) and adds pvnet_send_flow().
 */

/* Largest data fragment: a whole page (a slot may not cross a page). */
#define FRAG_MAX PVNET_PAGE_SIZE

static unsigned int frame_frags(uint32_t len)
{
	return (len + FRAG_MAX - 1) / FRAG_MAX;
}

/**
 * front_tx_pkt2slots() - lay out one frame as TX ring slots
 * @frags: the data fragments, in order; frags[0] is the head
 * @nfrags: how many, 1..XEN_NETIF_NR_SLOTS_MIN
 * @flags: PVNET_PKT_CSUM_BLANK / PVNET_PKT_DATA_VALIDATED
 * @gso_type: PVNET_GSO_* (PVNET_GSO_NONE: no extra slot)
 * @gso_size: the MSS when @gso_type is set
 * @features: negotiated PVNET_F_* (SG for several fragments, GSO types)
 * @slots: receives the slots, room for FRONT_TX_MAX_SLOTS
 *
 * Pure: touches only its arguments.
 *
 * Return: the number of slots, -EINVAL for a malformed frame (a fragment
 * that is empty or crosses its page, a length outside 14..65535, a bad GSO
 * request) or -EOPNOTSUPP for what the backend did not negotiate
 */
int front_tx_pkt2slots(const struct front_tx_frag *frags, unsigned int nfrags, uint16_t flags,
		       uint8_t gso_type, uint16_t gso_size, uint32_t features,
		       union front_tx_slot *slots)
{
	uint16_t txflags = 0;
	uint32_t total = 0;
	unsigned int n = 0;

	if (!nfrags || nfrags > XEN_NETIF_NR_SLOTS_MIN)
		return -EINVAL;
	if (nfrags > 1 && !(features & PVNET_F_SG))
		return -EOPNOTSUPP;
	for (unsigned int i = 0; i < nfrags; i++) {
		if (!frags[i].size || (uint32_t)frags[i].offset + frags[i].size > FRAG_MAX)
			return -EINVAL;
		total += frags[i].size;
	}
	if (total < PVNET_MIN_FRAME || total > XEN_NETIF_MAX_TX_SIZE)
		return -EINVAL;
	if (gso_type != PVNET_GSO_NONE) {
		uint32_t need = gso_type == PVNET_GSO_TCPV4   ? PVNET_F_GSO_TCPV4
				: gso_type == PVNET_GSO_TCPV6 ? PVNET_F_GSO_TCPV6
							      : 0;

		if (!need || !gso_size)
			return -EINVAL;
		if (!(features & need))
			return -EOPNOTSUPP;
	}
	if (flags & PVNET_PKT_CSUM_BLANK)
		txflags |= NETTXF_csum_blank | NETTXF_data_validated; /* Linux: CHECKSUM_PARTIAL */
	else if (flags & PVNET_PKT_DATA_VALIDATED)
		txflags |= NETTXF_data_validated;
	if (gso_type != PVNET_GSO_NONE)
		txflags |= NETTXF_extra_info;
	if (nfrags > 1)
		txflags |= NETTXF_more_data;
	memset(&slots[n], 0, sizeof(slots[n]));
	slots[n].req.gref = frags[0].gref;
	slots[n].req.offset = frags[0].offset;
	slots[n].req.flags = txflags;
	slots[n].req.id = frags[0].id;
	slots[n].req.size = (uint16_t)total; /* the first slot carries the whole length */
	n++;
	if (gso_type != PVNET_GSO_NONE) {
		memset(&slots[n], 0, sizeof(slots[n]));
		slots[n].extra.type = XEN_NETIF_EXTRA_TYPE_GSO;
		slots[n].extra.u.gso.size = gso_size;
		slots[n].extra.u.gso.type = gso_type;
		n++;
	}
	for (unsigned int i = 1; i < nfrags; i++) {
		memset(&slots[n], 0, sizeof(slots[n]));
		slots[n].req.gref = frags[i].gref;
		slots[n].req.offset = frags[i].offset;
		slots[n].req.flags = i + 1 < nfrags ? NETTXF_more_data : 0;
		slots[n].req.id = frags[i].id;
		slots[n].req.size = frags[i].size;
		n++;
	}
	return (int)n;
}

/*
 * The slots a burst of @n frames writes its first requests into: the
 * backend wrote its responses there, on its CPU.  Fetch them owned now.
 */
static void tx_prefetch_slots(struct front_queue *q, unsigned int n)
{
	unsigned int room = RING_FREE_REQUESTS(&q->tx);

	prefetch_ring(q->tx.sring->ring, sizeof(q->tx.sring->ring[0]), PVNET_RING_SIZE,
		      q->tx.req_prod_pvt, n < room ? n : room, true);
}

/* Copy the slots onto the ring and mark their ids in flight; @flow: xps-safe entry + 1, or 0. */
static void put_slots(struct front_queue *q, const union front_tx_slot *slots, unsigned int n,
		      const struct front_tx_frag *frags, unsigned int nfrags, uint32_t len,
		      uint16_t flow)
{
	for (unsigned int i = 0; i < n; i++) {
		void *dst = RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt + i);

		/* An extra slot overlays a request: both are written as the 12-byte entry. */
		memcpy(dst, &slots[i], sizeof(netif_tx_request_t));
	}
	q->tx.req_prod_pvt += n;
	q->tx_nulls_due += n - nfrags; /* the extras */
	for (unsigned int i = 0; i < nfrags; i++) {
		q->tx_owner[frags[i].id] = FRONT_TX_INFLIGHT;
		q->tx_head[frags[i].id] = i == 0;
	}
	q->tx_flow[frags[0].id] = flow;
	q->stats[FRONT_STAT_TX_PACKETS]++;
	q->stats[FRONT_STAT_TX_BYTES] += len;
}

static void push(struct front_queue *q, RING_IDX pushed)
{
	const struct pvnet_evtchn *ch = q->split ? &q->ev_tx : &q->ev_rx;

	/* The old producer is ours (@pushed), never read back from the shared page. */
	if (xen_ring_push(&q->tx.sring->req_prod, &q->tx.sring->req_event, &pushed,
			  q->tx.req_prod_pvt)) {
		pvnet_evtchn_notify(ch);
		q->stats[FRONT_STAT_TX_NOTIFY]++;
	}
}

/* Reap, then tell whether a frame of @nfrags fragments (+@extra slots) fits now. */
static bool has_room(struct front_queue *q, unsigned int nfrags, unsigned int extra)
{
	return RING_FREE_REQUESTS(&q->tx) >= nfrags + extra && q->tx_nfree >= nfrags;
}

/* Arm the TX completion event; half an RX frame seen stays no work (front_queue_idle()). */
static int stop(struct front_queue *q, int queued)
{
	q->tx_stopped = true;
	q->stats[FRONT_STAT_TX_RING_FULL]++;
	front_queue_idle(q, q->rx_incomplete);
	return queued;
}

/**
 * front_send() - pvnet_send(), with the xps-safe flow entry of each frame
 * @vif: the vif
 * @queue: the queue
 * @pkts: the frames
 * @n: how many
 * @flows: NULL, or per frame its flow entry + 1 (0: untracked); the TX
 *	response of the frame's first slot releases it
 *
 * Return: as pvnet_send()
 */
int front_send(struct pvnet_vif *vif, unsigned int queue, const struct pvnet_pkt *pkts,
	       unsigned int n, const uint16_t *flows)
{
	union front_tx_slot slots[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag frags[XEN_NETIF_NR_SLOTS_MIN];
	struct front_queue *q;
	RING_IDX pushed;
	unsigned int i;
	int rc;

	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	rc = front_queue_tx_reap(q);
	if (rc < 0)
		return rc;
	pushed = q->tx.req_prod_pvt;
	tx_prefetch_slots(q, n);
	for (i = 0; i < n; i++) {
		const struct pvnet_pkt *p = &pkts[i];
		unsigned int nf;

		if (p->len < PVNET_MIN_FRAME || p->len > PVNET_MAX_FRAME || !p->data) {
			rc = -EINVAL;
			break;
		}
		nf = frame_frags(p->len);
		if (!has_room(q, nf, p->gso_type != PVNET_GSO_NONE)) {
			push(q, pushed);
			return stop(q, (int)i);
		}
		for (unsigned int f = 0; f < nf; f++) {
			uint16_t id = q->tx_free[q->tx_nfree - 1 - f];
			uint32_t off = f * FRAG_MAX;
			uint32_t sz = p->len - off < FRAG_MAX ? p->len - off : FRAG_MAX;

			frags[f] = (struct front_tx_frag){
			    .gref = q->tx_ref[id], .offset = 0, .size = (uint16_t)sz, .id = id};
		}
		rc = front_tx_pkt2slots(frags, nf, p->flags, p->gso_type, p->gso_size,
					vif->features, slots);
		if (rc < 0)
			break;
		/* Only now take the ids and copy: a refused frame leaves no trace. */
		for (unsigned int f = 0; f < nf; f++)
			memcpy(q->tx_page[frags[f].id], (const char *)p->data + f * FRAG_MAX,
			       frags[f].size);
		q->tx_nfree -= nf;
		put_slots(q, slots, (unsigned int)rc, frags, nf, p->len, flows ? flows[i] : 0);
	}
	push(q, pushed);
	if (i == 0 && n > 0)
		return rc; /* the first frame was refused: say why */
	q->tx_stopped = false;
	return (int)i;
}

int front_tx_alloc(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	struct front_queue *q;
	unsigned int i;
	int rc;

	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	rc = front_queue_tx_reap(q);
	if (rc < 0)
		return rc;
	for (i = 0; i < n && q->tx_nfree; i++) {
		uint16_t id = q->tx_free[--q->tx_nfree];
		struct pvnet_buf *b = &q->tx_buf[id];

		q->tx_owner[id] = FRONT_TX_APP;
		/* whatever the application did to them last time */
		b->page = q->tx_page[id];
		b->id = id;
		b->data = b->page;
		b->len = 0;
		b->pkt_len = 0;
		b->flags = 0;
		b->gso_type = PVNET_GSO_NONE;
		b->gso_size = 0;
		b->hash_type = 0;
		b->hash = 0;
		b->next = NULL;
		/*
		 * The application writes the frame next, into a line the
		 * backend last read on another CPU: ask for it now, so that
		 * the burst's misses overlap instead of each stalling a write.
		 */
		prefetch_write(b->page);
		bufs[i] = b;
	}
	/*
	 * Out of buffers is out of room, as a full ring is for a send: arm the
	 * TX completion event so that pvnet_queue_fd() wakes the application
	 * when buffers come back (otherwise a zero-copy sender would sleep
	 * until its timeout).
	 */
	if (i == 0 && n > 0)
		return stop(q, 0);
	return (int)i;
}

/* @b's id if it is one of our TX buffers, owned by the application, with its data in its page; else -1. */
static int app_buf_id(const struct front_queue *q, const struct pvnet_buf *b)
{
	int id = front_buf_id(q->tx_buf, q->nr_tx, b);
	uintptr_t page, data;

	if (id < 0 || q->tx_owner[id] != FRONT_TX_APP)
		return -1;
	page = (uintptr_t)q->tx_page[id];
	data = (uintptr_t)b->data;
	return data >= page && data - page + b->len <= FRAG_MAX && b->len > 0 ? id : -1;
}

/* Fragments of an application frame (NULL: none, malformed); return their count or -EINVAL. */
static int buf2frags(const struct front_queue *q, struct pvnet_buf *head,
		     struct front_tx_frag *frags, uint32_t *len)
{
	unsigned int nf = 0;

	*len = 0;
	if (!head)
		return -EINVAL;
	for (struct pvnet_buf *b = head; b; b = b->next) {
		/* Also stops a chain the application looped back on itself. */
		int id = nf < XEN_NETIF_NR_SLOTS_MIN ? app_buf_id(q, b) : -1;

		if (id < 0)
			return -EINVAL;
		frags[nf++] = (struct front_tx_frag){
		    .gref = q->tx_ref[id],
		    .offset = (uint16_t)((uintptr_t)b->data - (uintptr_t)q->tx_page[id]),
		    .size = (uint16_t)b->len,
		    .id = (uint16_t)id,
		};
		*len += b->len;
	}
	return (int)nf;
}

int front_tx_submit(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		    unsigned int n)
{
	union front_tx_slot slots[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag frags[XEN_NETIF_NR_SLOTS_MIN];
	struct front_queue *q;
	RING_IDX pushed;
	unsigned int i;
	uint32_t len;
	int rc;

	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	rc = front_queue_tx_reap(q);
	if (rc < 0)
		return rc;
	pushed = q->tx.req_prod_pvt;
	tx_prefetch_slots(q, n);
	for (i = 0; i < n; i++) {
		struct pvnet_buf *h = bufs[i];
		int nf = buf2frags(q, h, frags, &len);

		if (nf < 0) {
			rc = nf;
			break;
		}
		/* Its buffers are already taken from the free list: only ring room matters. */
		if (RING_FREE_REQUESTS(&q->tx) <
		    (unsigned int)nf + (h->gso_type != PVNET_GSO_NONE)) {
			push(q, pushed);
			return stop(q, (int)i);
		}
		rc = front_tx_pkt2slots(frags, (unsigned int)nf, h->flags, h->gso_type, h->gso_size,
					vif->features, slots);
		if (rc < 0)
			break;
		put_slots(q, slots, (unsigned int)rc, frags, (unsigned int)nf, len, 0);
	}
	push(q, pushed);
	if (i == 0 && n > 0)
		return rc;
	q->tx_stopped = false;
	return (int)i;
}

void front_tx_free(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	struct front_queue *q;

	/* Unlike the data calls, freeing works on a disconnected vif too. */
	if (queue >= vif->nr_queues || !vif->queues)
		return;
	q = &vif->queues[queue];
	for (unsigned int i = 0; i < n; i++) {
		unsigned int guard = 0;

		for (struct pvnet_buf *b = bufs[i]; b && guard++ <= XEN_NETIF_NR_SLOTS_MIN;
		     b = b->next) {
			int id = front_buf_id(q->tx_buf, q->nr_tx, b);

			if (id < 0)
				break; /* not ours: not even its ->next is read */
			if (q->tx_owner[id] != FRONT_TX_APP)
				continue;
			q->tx_owner[id] = FRONT_TX_FREE;
			q->tx_free[q->tx_nfree++] = (uint16_t)id;
		}
	}
}

int front_mcast(struct pvnet_vif *vif, unsigned int queue, uint8_t op, const uint8_t mac[6])
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	union front_tx_slot slots[2];
	struct front_queue *q;
	RING_IDX pushed;
	uint16_t id;
	int rc;

	if (!mac || !(mac[0] & 1) || !memcmp(mac, bcast, sizeof(bcast)))
		return -EINVAL;
	rc = front_vif_check(vif, queue, &q);
	if (rc < 0)
		return rc;
	if (!vif->mcast_offered)
		return -EOPNOTSUPP;
	rc = front_queue_tx_reap(q);
	if (rc < 0)
		return rc;
	if (!has_room(q, 1, 1))
		return stop(q, 0);
	id = q->tx_free[--q->tx_nfree];
	memset(slots, 0, sizeof(slots));
	slots[0].req.gref = q->tx_ref[id];
	slots[0].req.flags = NETTXF_extra_info;
	slots[0].req.id = id;
	slots[1].extra.type = op;
	memcpy(slots[1].extra.u.mcast.addr, mac, sizeof(slots[1].extra.u.mcast.addr));
	pushed = q->tx.req_prod_pvt;
	for (unsigned int i = 0; i < 2; i++)
		memcpy(RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt + i), &slots[i],
		       sizeof(netif_tx_request_t));
	q->tx.req_prod_pvt += 2;
	q->tx_nulls_due++;
	q->tx_owner[id] = FRONT_TX_MCAST;
	push(q, pushed);
	return 1;
}
