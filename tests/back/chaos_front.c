// SPDX-License-Identifier: MIT
// chaos_front.c - the campaign's hostile frontend A: its moves, and the checks on what it reads

/*
 * A is a fake frontend (fake_front.h) that does what a guest may do and a
 * netfront would not (see test_chaos.c for the campaign).  Its moves stay
 * inside its own memory and grant table; what makes a check meaningless is
 * tracked instead of avoided:
 *  - taint: A had the backend write into its own ring pages (a ring page
 *    posted as an RX buffer): nothing A reads on its rings is checked until
 *    it reconnects;
 *  - dirt: A wrote over slots that may hold responses it has not read (a
 *    rewrite, a write past its ring, a backwards jump): the responses below
 *    its producer index then are not checked.
 * Under TSan A writes only what the backend cannot be reading (test_chaos.c).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos.h"

/* C's second MAC: it feeds A from it, so A's RX pages never hold C's own. */
static const uint8_t mac_c2[6] = {0x02, 0x16, 0x3e, 0x00, 0x00, 0xc2};

/* Destinations of A's frames: the header on A's TX page p goes to dsts[p % NDST]. */
static const uint8_t dsts[][6] = {
    {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b}, /* B */
    {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0c}, /* C */
    {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a}, /* A itself: dropped by the switch */
    {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, /* broadcast */
    {0x02, 0x00, 0x5e, 0x10, 0x00, 0x01}, /* unknown unicast: flooded */
    {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}, /* link-local: dropped */
    {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb}, /* multicast: flooded */
    {0x02, 0x16, 0x3e, 0x00, 0x00, 0xc2}, /* C's second MAC */
};
#define NDST ((unsigned int)(sizeof(dsts) / sizeof(dsts[0])))

/* A's memory, by fake_front.c's layout: valid whether A is connected or not. */
uint32_t chaos_a_tx_frame(unsigned int qi, unsigned int p)
{
	return qi * FF_PAGES_PER_Q + 2 + p;
}

static uint32_t a_rx_frame(unsigned int qi, unsigned int p)
{
	return qi * FF_PAGES_PER_Q + 2 + FF_RING + p;
}

static uint8_t *a_page(struct chaos *ch, uint32_t frame)
{
	return ch->x->a.mem + (size_t)frame * HV_PAGE_SIZE;
}

static int tx_room(const struct ff_queue *q)
{
	return (int)RING_SIZE(&q->tx) - (int)(q->tx.req_prod_pvt - q->tx.rsp_cons);
}

static int rx_room(const struct ff_queue *q)
{
	return (int)RING_SIZE(&q->rx) - (int)(q->rx.req_prod_pvt - q->rx.rsp_cons);
}

/* Remember the furthest index published (indices wrap: compare by difference). */
static void pub_adv(RING_IDX *pub, RING_IDX v)
{
	if ((int32_t)(v - *pub) > 0)
		*pub = v;
}

/*
 * Is a response producer @prod past @pub, the furthest request producer A
 * published, seen from @cons, the responses A has read?  Measured from
 * @cons, where both are ahead: A's jumps may take @pub more than 2^31
 * past the responses (the backend answers none of them), where a signed
 * difference of @pub and @prod alone would call an idle ring's 0 beyond.
 */
static bool rsp_beyond(RING_IDX pub, RING_IDX cons, RING_IDX prod)
{
	return prod - cons > pub - cons;
}

/*
 * A wrote into slots that may hold responses it has not read (a rewrite, a
 * write past its ring): every such response has an index below A's
 * producer @pvt, so the responses below it go unchecked.
 */
static void dirty(bool *is, RING_IDX *until, RING_IDX pvt)
{
	if (!*is || (int32_t)(pvt - *until) > 0)
		*until = pvt;
	*is = true;
}

/* May A's responses from @cons on be checked?  Dirt ends where A has read past it. */
static bool clean(bool taint, bool *is, RING_IDX until, RING_IDX cons)
{
	if (*is && (int32_t)(cons - until) >= 0)
		*is = false;
	return !taint && !*is;
}

static grant_ref_t a_nr_grants(struct chaos *ch)
{
	return (grant_ref_t)(ch->x->a.gt_size / sizeof(grant_entry_v1_t));
}

/* A ref that must fail: never granted (the top of A's table), reserved, or out of range. */
static grant_ref_t bad_gref(struct chaos *ch)
{
	switch (below(ch, 3)) {
	case 0:
		return a_nr_grants(ch) - 1 - below(ch, 64);
	case 1:
		return below(ch, HV_GNTSHR_FIRST_REF);
	default:
		return a_nr_grants(ch) + (grant_ref_t)below(ch, UINT32_MAX - a_nr_grants(ch));
	}
}

/* A grant ref for TX data: mostly A's own TX pages (never written again, see chaos_a_fill()). */
static grant_ref_t pick_tx_gref(struct chaos *ch, unsigned int qi)
{
	struct ff *a = &ch->x->a;
	unsigned int k = below(ch, 100);

	if (k < 70 || (k >= 90 && CHAOS_TSAN))
		return a->q[qi].tx_gref[below(ch, FF_RING)];
	if (k < 75)
		return a->q[below(ch, a->nq)].tx_gref[below(ch, FF_RING)];
	if (k < 80)
		return ch->foreign;
	if (k < 84)
		return ch->ro;
	if (k < 90)
		return bad_gref(ch);
	/* Pages the backend writes, or anything in the table: racing reads. */
	switch (below(ch, 3)) {
	case 0:
		return a->q[below(ch, a->nq)].rx_gref[below(ch, FF_RING)];
	case 1:
		return chance(ch, 50) ? a->q[qi].tx_ring_ref : a->q[qi].rx_ring_ref;
	default:
		return below(ch, a_nr_grants(ch));
	}
}

/* A grant ref for the RX buffer of ring index @idx: mostly the right one. */
static grant_ref_t pick_rx_gref(struct chaos *ch, unsigned int qi, RING_IDX idx)
{
	struct ff *a = &ch->x->a;
	unsigned int k = below(ch, 100);

	if (k < 70 || (k >= 95 && CHAOS_TSAN))
		return a->q[qi].rx_gref[idx & (FF_RING - 1)];
	if (k < 75)
		return ch->ro;
	if (k < 80)
		return ch->foreign;
	if (k < 85)
		return a->q[qi].tx_gref[below(ch, FF_RING)]; /* read-only */
	if (k < 95)
		return bad_gref(ch);
	if (chance(ch, 80)) /* another buffer's page: two writers, or the reader races */
		return a->q[below(ch, a->nq)].rx_gref[below(ch, FF_RING)];
	/* A's own ring page as a buffer: the backend writes frames into A's rings. */
	for (unsigned int i = 0; i < FF_MAX_QUEUES; i++)
		ch->tx_taint[i] = ch->rx_taint[i] = true;
	return chance(ch, 50) ? a->q[qi].tx_ring_ref : a->q[qi].rx_ring_ref;
}

/* A's TX pages, written once while no backend looks: a frame header on each (see dsts). */
void chaos_a_fill(struct chaos *ch)
{
	for (unsigned int qi = 0; qi < ch->oa.nq; qi++) {
		for (unsigned int p = 0; p < FF_RING; p++) {
			uint8_t src[6];

			memcpy(src, mac_a, sizeof(src));
			if (p % 13 == 12)
				src[0] = 0x03; /* a group source: the switch drops it */
			else if (p % 11 == 10)
				src[0] = 0x02, src[5] = (uint8_t)p; /* MACs A makes up */
			make_frame(a_page(ch, chaos_a_tx_frame(qi, p)), HV_PAGE_SIZE,
				   dsts[p % NDST], src, p);
		}
	}
}

/* Write @n requests at A's req_prod_pvt; under TSan (and mostly) only into slots A owns. */
static bool a_write(struct chaos *ch, unsigned int qi, const netif_tx_request_t *r, unsigned int n)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	bool over = tx_room(q) < (int)n;

	if (over && (CHAOS_TSAN || !chance(ch, 5)))
		return false;
	ff_tx_raw(&ch->x->a, qi, r, n);
	if (over)
		dirty(&ch->tx_dirty[qi], &ch->tx_until[qi], q->tx.req_prod_pvt);
	return true;
}

static void a_push(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];

	ff_tx_push(&ch->x->a, qi);
	pub_adv(&ch->tx_pub[qi], q->tx.req_prod_pvt);
	if (chance(ch, 10)) /* and a notification it was not asked for */
		hv_evtchn_notify(ch->x->w.hv, ch->x->a.domid, q->port_tx);
}

/* A frame length: mostly Ethernet sizes, some runts, jumbo and GSO sizes, the edges. */
static uint32_t pick_len(struct chaos *ch)
{
	static const uint32_t edge[] = {14, 60, 4095, 4096, 4097, 8192, 65534, 65535};

	switch (below(ch, 10)) {
	case 0:
	case 1:
	case 2:
	case 3:
	case 4:
		return 60 + below(ch, 1455);
	case 5:
		return 14 + below(ch, 46);
	case 6:
	case 7:
		return 1515 + below(ch, 7486);
	case 8:
		return 9001 + below(ch, 56535);
	default:
		return edge[below(ch, sizeof(edge) / sizeof(edge[0]))];
	}
}

/* A header page of A's queue @qi: its frame goes to a random one of dsts. */
static unsigned int pick_hdr_page(struct chaos *ch)
{
	return below(ch, NDST) + NDST * below(ch, FF_RING / NDST);
}

static void put_extra(netif_tx_request_t *slot, const netif_extra_info_t *ex)
{
	_Static_assert(sizeof(*ex) <= sizeof(*slot), "an extra fits a TX slot");
	memset(slot, 0, sizeof(*slot));
	memcpy(slot, ex, sizeof(*ex));
}

/* Queue one well-formed frame on A's queue @qi (unpublished); false if the ring was full. */
static bool a_frame(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	netif_tx_request_t r[48];
	uint32_t len = pick_len(ch), smax = HV_PAGE_SIZE, own, left;
	unsigned int p = pick_hdr_page(ch), ndata, n = 0;
	bool gso = chance(ch, 25);

	if (chance(ch, 40))
		smax = 14 + below(ch, HV_PAGE_SIZE - 13);
	ndata = (len + smax - 1) / smax;
	if (chance(ch,
		   5)) { /* at the slot limits: 18..22 data slots, dropped from 20, fatal at 22 */
		ndata = 18 + below(ch, 5);
		smax = 14 + below(ch, 200);
		len = ndata * smax;
	} else if (ndata > BACK_TX_MAX_DATA) { /* else at most 19 */
		smax = (len + BACK_TX_MAX_DATA - 1) / BACK_TX_MAX_DATA;
	}
	ndata = (len + smax - 1) / smax;
	own = ndata > 1 ? smax : len;
	r[n++] = (netif_tx_request_t){
	    .gref = q->tx_gref[p],
	    .offset = (uint16_t)(chance(ch, 10) ? below(ch, HV_PAGE_SIZE - own + 1) : 0),
	    .flags = (uint16_t)((ndata > 1 ? NETTXF_more_data : 0) | (gso ? NETTXF_extra_info : 0) |
				below(ch, 4)),
	    .id = (uint16_t)p,
	    .size = (uint16_t)len};
	if (gso) {
		netif_extra_info_t ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};

		ex.u.gso.type =
		    chance(ch, 50) ? XEN_NETIF_GSO_TYPE_TCPV4 : XEN_NETIF_GSO_TYPE_TCPV6;
		ex.u.gso.size = (uint16_t)(1 + below(ch, 9000));
		put_extra(&r[n++], &ex);
	}
	left = len - own;
	for (unsigned int k = 1; k < ndata; k++) {
		uint32_t sz = left < smax ? left : smax;
		unsigned int pg = below(ch, FF_RING);

		if (chance(ch, 3) &&
		    n < 22) /* a zero-size slot: answered, never mapped (XSA-448) */
			r[n++] = (netif_tx_request_t){.gref = pick_tx_gref(ch, qi),
						      .flags = NETTXF_more_data,
						      .id = (uint16_t)rnd(ch)};
		r[n++] = (netif_tx_request_t){
		    .gref = q->tx_gref[pg],
		    .offset = (uint16_t)(chance(ch, 30) ? below(ch, HV_PAGE_SIZE - sz + 1) : 0),
		    .flags = (uint16_t)(k + 1 < ndata ? NETTXF_more_data : 0),
		    .id = (uint16_t)pg,
		    .size = (uint16_t)sz};
		left -= sz;
	}
	CHK(ch, n <= sizeof(r) / sizeof(r[0]) && left == 0, "frame of %u slots, %u bytes left", n,
	    left);
	return a_write(ch, qi, r, n);
}

/* A raw request: plausible most of the time, any field wild now and then. */
static netif_tx_request_t rand_req(struct chaos *ch, unsigned int qi)
{
	netif_tx_request_t r = {.gref = pick_tx_gref(ch, qi), .id = (uint16_t)rnd(ch)};
	unsigned int k = below(ch, 10);

	r.size = (uint16_t)(k < 5    ? 14 + below(ch, 1501)
			    : k == 5 ? below(ch, 14)
			    : k == 6 ? 1515 + below(ch, 2582)
			    : k == 7 ? 4097 + below(ch, 61439)
			    : k == 8 ? 0
				     : rnd(ch));
	k = below(ch, 10);
	r.offset = (uint16_t)(k < 7 ? 0 : k < 9 ? below(ch, HV_PAGE_SIZE) : rnd(ch));
	r.flags = (uint16_t)below(ch, 4);
	if (chance(ch, 30))
		r.flags |= NETTXF_more_data;
	if (chance(ch, 5))
		r.flags |= NETTXF_extra_info;
	if (chance(ch, 3))
		r.flags = (uint16_t)rnd(ch);
	return r;
}

void chaos_step_frames(struct chaos *ch, unsigned int qi)
{
	unsigned int n = 1 + below(ch, 6);

	for (unsigned int i = 0; i < n && a_frame(ch, qi); i++)
		;
	a_push(ch, qi);
}

void chaos_step_raw(struct chaos *ch, unsigned int qi)
{
	netif_tx_request_t r[16];
	unsigned int n = 1 + below(ch, 16);

	for (unsigned int i = 0; i < n; i++)
		r[i] = rand_req(ch, qi);
	a_write(ch, qi, r, n);
	if (chance(ch, 90)) /* else a later push publishes them */
		a_push(ch, qi);
}

/* A frame with an extra-info chain: types, flags and GSO fields at random. */
void chaos_step_extras(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	netif_tx_request_t r[16];
	unsigned int p = pick_hdr_page(ch), n = 0;
	unsigned int nex = 1 + (chance(ch, 70) ? below(ch, 3) : below(ch, 8));
	unsigned int ndata = chance(ch, 30) ? 1 + below(ch, 3) : 0;

	r[n++] = (netif_tx_request_t){
	    .gref = q->tx_gref[p],
	    .flags = (uint16_t)(NETTXF_extra_info | (ndata ? NETTXF_more_data : 0)),
	    .id = (uint16_t)p,
	    .size = (uint16_t)(60 + below(ch, 1455) + 100 * ndata)};
	for (unsigned int k = 0; k < nex; k++) {
		netif_extra_info_t ex;
		unsigned int t = below(ch, 20);
		uint64_t v = rnd(ch);

		memset(&ex, 0, sizeof(ex));
		memcpy(&ex.u, &v, sizeof(ex.u));
		ex.type = (uint8_t)(t < 7    ? XEN_NETIF_EXTRA_TYPE_GSO
				    : t < 10 ? XEN_NETIF_EXTRA_TYPE_MCAST_ADD
				    : t < 13 ? XEN_NETIF_EXTRA_TYPE_MCAST_DEL
				    : t < 16 ? XEN_NETIF_EXTRA_TYPE_HASH
				    : t < 18 ? XEN_NETIF_EXTRA_TYPE_NONE
					     : XEN_NETIF_EXTRA_TYPE_MAX + below(ch, 251));
		ex.flags = (uint8_t)(k + 1 < nex || chance(ch, 10) ? XEN_NETIF_EXTRA_FLAG_MORE : 0);
		if (ex.type == XEN_NETIF_EXTRA_TYPE_GSO) {
			ex.u.gso.size = (uint16_t)(chance(ch, 90) ? 1 + below(ch, 9000) : 0);
			ex.u.gso.type = (uint8_t)(chance(ch, 85) ? 1 + below(ch, 2) : rnd(ch));
		}
		put_extra(&r[n++], &ex);
	}
	for (unsigned int k = 0; k < ndata; k++) {
		unsigned int pg = below(ch, FF_RING);

		r[n++] =
		    (netif_tx_request_t){.gref = q->tx_gref[pg],
					 .flags = (uint16_t)(k + 1 < ndata ? NETTXF_more_data : 0),
					 .id = (uint16_t)pg,
					 .size = 100};
	}
	a_write(ch, qi, r, n);
	a_push(ch, qi);
}

/* Move a ring's req_prod: near, past a ring, far ahead, or backwards; then notify. */
static void jump(struct chaos *ch, RING_IDX *shared, RING_IDX *pvt, RING_IDX *pub, bool *dirt,
		 RING_IDX *until, evtchn_port_t port)
{
	unsigned int k = below(ch, 10);
	RING_IDX to = k < 6   ? *pvt + 1 + below(ch, 64)
		      : k < 8 ? *pvt + 65 + below(ch, 236)
		      : k < 9 ? *pvt + 1000 + below(ch, 1u << 30)
			      : *pvt - 1 - below(ch, 300);

	__atomic_store_n(shared, to, __ATOMIC_SEQ_CST);
	if (k < 9)
		pub_adv(pub, to);
	if (k == 9 && !CHAOS_TSAN) /* A then writes over slots the backend read and answered */
		dirty(dirt, until, *pvt);
	if (k < 9 || !CHAOS_TSAN)
		*pvt = to;
	hv_evtchn_notify(ch->x->w.hv, ch->x->a.domid, port);
}

void chaos_step_tx_jump(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];

	jump(ch, &q->tx.sring->req_prod, &q->tx.req_prod_pvt, &ch->tx_pub[qi], &ch->tx_dirty[qi],
	     &ch->tx_until[qi], q->port_tx);
}

void chaos_step_rx_jump(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];

	jump(ch, &q->rx.sring->req_prod, &q->rx.req_prod_pvt, &ch->rx_pub[qi], &ch->rx_dirty[qi],
	     &ch->rx_until[qi], q->port_rx);
}

/* Rewrite what was published: a TX request, page bytes, an RX request (not under TSan). */
void chaos_step_rewrite(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	RING_IDX idx;
	uint8_t *pg;
	uint32_t off, len;
	uint64_t v = 0;

	if (CHAOS_TSAN)
		return;
	switch (below(ch, 3)) {
	case 0: /* published, maybe not yet read (a response may be racing in: dirty) */
		idx = q->tx.req_prod_pvt - 1 - below(ch, 32);
		*RING_GET_REQUEST(&q->tx, idx) = rand_req(ch, qi);
		dirty(&ch->tx_dirty[qi], &ch->tx_until[qi], q->tx.req_prod_pvt);
		break;
	case 1:
		pg = a_page(ch, chaos_a_tx_frame(qi, below(ch, FF_RING)));
		if (chance(ch, 50)) { /* another header: still from A, never B's or C's source */
			make_frame(pg, 14 + below(ch, HV_PAGE_SIZE - 13), dsts[below(ch, NDST)],
				   mac_a, (uint32_t)rnd(ch));
			break;
		}
		off = below(ch, HV_PAGE_SIZE);
		len = 1 + below(ch, HV_PAGE_SIZE - off);
		CHK(ch, off + len <= HV_PAGE_SIZE, "rewrite of %u bytes at %u", len, off);
		for (uint32_t i = 0; i < len; i++, v >>= 8) {
			if ((i & 7) == 0)
				v = rnd(ch);
			pg[off + i] = (uint8_t)v;
		}
		break;
	default:
		idx = q->rx.req_prod_pvt - 1 - below(ch, 32);
		RING_GET_REQUEST(&q->rx, idx)->gref = pick_rx_gref(ch, qi, idx);
		dirty(&ch->rx_dirty[qi], &ch->rx_until[qi], q->rx.req_prod_pvt);
		break;
	}
	if (chance(ch, 50))
		hv_evtchn_notify(ch->x->w.hv, ch->x->a.domid, q->port_tx);
}

/* Notify in a loop: A's own ports, or any port number. */
void chaos_step_storm(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	evtchn_port_t port = chance(ch, 50) ? q->port_tx : q->port_rx;
	unsigned int n = 200 + below(ch, 3000);

	if (chance(ch, 20))
		port = below(ch, 1100);
	for (unsigned int i = 0; i < n; i++)
		hv_evtchn_notify(ch->x->w.hv, ch->x->a.domid, port);
}

void chaos_step_rx_post(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	bool over = !CHAOS_TSAN && chance(ch, 5); /* past its ring: fatal */
	unsigned int n = over ? 200 + below(ch, 100) : 1 + below(ch, 48);

	for (unsigned int i = 0; i < n && (over || rx_room(q) > 0); i++)
		ff_rx_post_gref(&ch->x->a, qi, pick_rx_gref(ch, qi, q->rx.req_prod_pvt));
	pub_adv(&ch->rx_pub[qi], q->rx.req_prod_pvt);
	if (over)
		dirty(&ch->rx_dirty[qi], &ch->rx_until[qi], q->rx.req_prod_pvt);
}

/* C sends A a few frames from its second MAC: A's RX side has work, C must get answers. */
void chaos_step_feed(struct chaos *ch)
{
	struct fx *x = ch->x;
	unsigned int n = 1 + below(ch, 8);

	ff_tx_reap(&x->c, 0);
	for (unsigned int i = 0; i < n; i++) {
		struct ff_txopt opt = {.slot_max = HV_PAGE_SIZE};
		uint32_t len = chance(ch, 30) ? 1515 + below(ch, 20000) : 60 + below(ch, 1455);

		if (chance(ch, 10)) {
			len = 2000 + below(ch, 63536);
			opt.gso_type = XEN_NETIF_GSO_TYPE_TCPV4;
			opt.gso_size = 1448;
			opt.flags = NETTXF_csum_blank;
		}
		make_frame_opt(x->buf, len, mac_a, mac_c2, ch->fseq, &opt);
		if (ff_tx_frame(&x->c, 0, x->buf, len, &opt) < 0)
			break;
		ch->fseq++;
		ch->t->fed++;
	}
	ff_tx_push(&x->c, 0);
}

/* A reads its TX responses: checked (bounded, netif.h statuses) before they are taken. */
void chaos_a_reap(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	RING_IDX prod = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	RING_IDX n = prod - q->tx.rsp_cons;

	if (ch->tx_taint[qi]) {
		if (n > CHAOS_RSP_MAX) /* its own doing: do not walk garbage */
			q->tx.rsp_cons = prod;
		else
			ff_tx_reap(&ch->x->a, qi);
		return;
	}
	CHK(ch, !rsp_beyond(ch->tx_pub[qi], q->tx.rsp_cons, prod),
	    "A's tx q%u: rsp_prod %u is beyond every req_prod it published (%u)", qi, prod,
	    ch->tx_pub[qi]);
	if (!clean(false, &ch->tx_dirty[qi], ch->tx_until[qi], q->tx.rsp_cons) &&
	    (int32_t)(prod - ch->tx_until[qi]) <= 0) {
		ff_tx_reap(&ch->x->a, qi);
		return;
	}
	CHK(ch, n <= CHAOS_RSP_MAX, "A's tx q%u: %u responses since it last looked", qi, n);
	for (RING_IDX i = 0; i < n; i++) {
		netif_tx_response_t r;

		if (ch->tx_dirty[qi] && (int32_t)(q->tx.rsp_cons + i - ch->tx_until[qi]) < 0)
			continue;
		RING_COPY_RESPONSE(&q->tx, q->tx.rsp_cons + i, &r);
		CHK(ch, r.status >= NETIF_RSP_DROPPED && r.status <= NETIF_RSP_NULL,
		    "A's tx q%u: response %u has status %d", qi, q->tx.rsp_cons + i, r.status);
	}
	ff_tx_reap(&ch->x->a, qi);
}

/* Check A's unread RX responses: bounded, data within the page, extras GSO or HASH. */
static void a_rx_check(struct chaos *ch, unsigned int qi)
{
	struct ff_queue *q = &ch->x->a.q[qi];
	RING_IDX prod = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	bool first = true, extras = false;
	unsigned int nex = 0;

	if (!clean(ch->rx_taint[qi], &ch->rx_dirty[qi], ch->rx_until[qi], q->rx.rsp_cons))
		return;
	CHK(ch, !rsp_beyond(ch->rx_pub[qi], q->rx.rsp_cons, prod),
	    "A's rx q%u: rsp_prod %u is beyond every req_prod it published (%u)", qi, prod,
	    ch->rx_pub[qi]);
	/* A reads its RX ring only now and then: look at the oldest CHAOS_RSP_MAX. */
	if (prod - q->rx.rsp_cons > CHAOS_RSP_MAX)
		prod = q->rx.rsp_cons + CHAOS_RSP_MAX;
	for (RING_IDX i = q->rx.rsp_cons; i != prod; i++) {
		netif_rx_response_t r;

		RING_COPY_RESPONSE(&q->rx, i, &r);
		if (extras) {
			netif_extra_info_t ex;

			_Static_assert(sizeof(ex) == sizeof(r), "an RX extra is a response slot");
			memcpy(&ex, &r, sizeof(ex));
			CHK(ch,
			    (ex.type == XEN_NETIF_EXTRA_TYPE_GSO ||
			     ex.type == XEN_NETIF_EXTRA_TYPE_HASH) &&
				++nex <= 2,
			    "A's rx q%u slot %u: extra type %u (#%u)", qi, i, ex.type, nex);
			extras = ex.flags & XEN_NETIF_EXTRA_FLAG_MORE;
			continue;
		}
		CHK(ch,
		    r.status == NETIF_RSP_ERROR ||
			(r.status > 0 && (uint32_t)r.offset + (uint32_t)r.status <= HV_PAGE_SIZE),
		    "A's rx q%u slot %u: status %d at offset %u", qi, i, r.status, r.offset);
		extras = first && (r.flags & NETRXF_extra_info);
		nex = 0;
		first = !(r.flags & NETRXF_more_data);
	}
}

void chaos_step_read(struct chaos *ch)
{
	struct ff *a = &ch->x->a;
	struct ff_rxinfo info;

	for (unsigned int qi = 0; qi < a->nq; qi++) {
		chaos_a_reap(ch, qi);
		a_rx_check(ch, qi);
		for (unsigned int i = 0; i < CHAOS_READ_MAX; i++) {
			int n = ff_rx_recv(a, qi, ch->x->rbuf, sizeof(ch->x->rbuf), &info);

			if (n == -EAGAIN)
				break;
			CHK(ch,
			    ch->rx_taint[qi] || ch->rx_dirty[qi] || n == -EIO ||
				(n >= 14 && n <= 65535),
			    "A's rx q%u: a frame of %d bytes", qi, n);
		}
	}
}

/* A writes its own xenbus state: legal ones, then garbage. */
void chaos_step_state(struct chaos *ch)
{
	static const char *const junk[] = {"abc", "", "99", "-1", "4294967296", "1 ", "6\n"};
	static const enum xenbus_state legal[] = {
	    XenbusStateClosing,	    XenbusStateClosing,	     XenbusStateClosing,
	    XenbusStateClosed,	    XenbusStateInitialising, XenbusStateConnected,
	    XenbusStateInitialised, XenbusStateReconfiguring};
	struct fx *x = ch->x;
	enum xenbus_state before = back_vif_state(x->va);
	unsigned int k = below(ch, 10);
	char path[96];

	if (k < sizeof(legal) / sizeof(legal[0])) {
		ff_set_state(&x->a, legal[k]);
	} else {
		const char *v = junk[below(ch, sizeof(junk) / sizeof(junk[0]))];

		snprintf(path, sizeof(path), "%s/state", x->a.fe_path);
		store_write(x->w.store, path, v, strlen(v));
	}
	/*
	 * A's write took the backend out of Connected, or moved it at all
	 * while A was down: what follows is A's doing.  Initialising after a
	 * disable begins a new connection, which takes the last one's reason
	 * away (back_xenbus_switch_state()).
	 */
	if ((ch->a_conn || back_vif_state(x->va) != before) &&
	    back_vif_state(x->va) != XenbusStateConnected)
		ch->a_self = true;
	/* Connected again on the rings as A left them: refused only with a reason. */
	if (k < sizeof(legal) / sizeof(legal[0]) && legal[k] == XenbusStateConnected &&
	    before != XenbusStateConnected && back_vif_state(x->va) == XenbusStateClosing) {
		CHK(ch, back_vif_error(x->va) && *back_vif_error(x->va),
		    "A's connect on its old rings was refused without a reason");
		chaos_note_fatal(ch, back_vif_error(x->va));
	}
}

/* Write a grant entry as a guest does: frame, then flags and domid in one word (hv's read). */
static void gt_write(struct ff *a, grant_ref_t ref, uint16_t flags, domid_t dom, uint32_t frame)
{
	grant_entry_v1_t *e = &a->gt[ref];
	union {
		uint32_t raw;
		struct {
			uint16_t flags;
			domid_t domid;
		};
	} w = {.flags = flags, .domid = dom};

	__atomic_store_n(&e->frame, frame, __ATOMIC_RELAXED);
	__atomic_store_n((uint32_t *)(void *)&e->flags, w.raw, __ATOMIC_RELEASE);
}

/*
 * A rewrites one of its buffer grants under the backend: revoke (and maybe
 * re-grant), flags, domain, frame out of range or another page.  Never the
 * in-use bits, never a ring page; under TSan a TX page stays read-only and
 * an RX grant never moves to a page someone else uses.
 */
void chaos_step_grant(struct chaos *ch, unsigned int qi)
{
	struct ff *a = &ch->x->a;
	unsigned int p = below(ch, FF_RING);
	bool tx = chance(ch, 50);
	grant_ref_t ref = tx ? a->q[qi].tx_gref[p] : a->q[qi].rx_gref[p];
	uint32_t frame = tx ? chaos_a_tx_frame(qi, p) : a_rx_frame(qi, p);
	uint16_t flags = (uint16_t)(GTF_permit_access | (tx ? GTF_readonly : 0));
	domid_t dom = 0;

	switch (below(ch, 6)) {
	case 0: /* revoke, as a guest wanting its page back: fails while in use */
		hv_gntshr_end_access(&a->gs, ref);
		if (chance(ch, 50))
			return;
		break;
	case 1:
		flags = chance(ch, 50) ? 0 : GTF_permit_access | GTF_readonly;
		if (!CHAOS_TSAN && chance(ch, 30))
			flags = GTF_permit_access;
		break;
	case 2:
		dom = chance(ch, 50) ? ch->x->c.domid : (domid_t)rnd(ch);
		break;
	case 3:
		frame = chance(ch, 50) ? a->npages + below(ch, 1000) : (uint32_t)rnd(ch);
		break;
	case 4:
		if (tx)
			frame = chaos_a_tx_frame(qi, below(ch, FF_RING));
		if (!CHAOS_TSAN && chance(ch, 50))
			frame = chance(ch, 50)
				    ? chaos_a_tx_frame(below(ch, a->nq), below(ch, FF_RING))
				    : a_rx_frame(below(ch, a->nq), below(ch, FF_RING));
		break;
	default: /* put it back as it was */
		break;
	}
	gt_write(a, ref, flags, dom, frame);
}

/* A grant of A's that the backend must no longer use. */
static void check_released(struct chaos *ch, grant_ref_t ref)
{
	uint16_t flags = __atomic_load_n(&ch->x->a.gt[ref].flags, __ATOMIC_ACQUIRE);

	CHK(ch, !(flags & (GTF_reading | GTF_writing)),
	    "A's grant %u is still in use (flags %#x) after its vif let go", ref, flags);
}

void chaos_a_check_released(struct chaos *ch)
{
	struct ff *a = &ch->x->a;

	for (unsigned int qi = 0; qi < a->nq; qi++) {
		check_released(ch, a->q[qi].tx_ring_ref);
		check_released(ch, a->q[qi].rx_ring_ref);
		for (unsigned int j = 0; j < FF_RING; j++) {
			check_released(ch, a->q[qi].tx_gref[j]);
			check_released(ch, a->q[qi].rx_gref[j]);
		}
	}
	check_released(ch, ch->foreign);
	check_released(ch, ch->ro);
}

/* A closes (Closing, Closed), checks the backend let go of every page, tears down. */
void chaos_a_down(struct chaos *ch)
{
	struct ff *a = &ch->x->a;
	unsigned int nq = a->nq;

	ff_set_state(a, XenbusStateClosing);
	ff_set_state(a, XenbusStateClosed);
	CHK(ch, back_vif_state(ch->x->va) == XenbusStateClosed,
	    "backend in state %d after A closed", back_vif_state(ch->x->va));
	ch->a_conn = false;
	if (!nq)
		return;
	chaos_a_check_released(ch);
	ff_teardown(a);
	/* The refs are free again (ff_connect() takes fresh ones): reconnects stay unbounded. */
	for (unsigned int qi = 0; qi < nq; qi++) {
		hv_gntshr_free_ref(&a->gs, a->q[qi].tx_ring_ref);
		hv_gntshr_free_ref(&a->gs, a->q[qi].rx_ring_ref);
		for (unsigned int j = 0; j < FF_RING; j++) {
			hv_gntshr_free_ref(&a->gs, a->q[qi].tx_gref[j]);
			hv_gntshr_free_ref(&a->gs, a->q[qi].rx_gref[j]);
		}
	}
}

/* Remove one of A's keys (queue @qi's for a per-queue key, -1 for the device's). */
static void a_rm_key(struct chaos *ch, int qi, const char *key)
{
	struct ff *a = &ch->x->a;
	char path[160];

	if (qi < 0 || ch->oa.nq == 1)
		snprintf(path, sizeof(path), "%s/%s", a->fe_path, key);
	else
		snprintf(path, sizeof(path), "%s/queue-%d/%s", a->fe_path, qi, key);
	store_rm(ch->x->w.store, path);
}

/*
 * A connects again, with fresh rings; sometimes with keys the backend must
 * refuse.  Keys stay in the store from one connection to the next: the
 * ones ff_connect() would leave out are removed first.
 */
void chaos_a_up(struct chaos *ch, bool may_fail)
{
	struct fx *x = ch->x;
	struct ff_opts o = ch->oa;
	const char *bad = NULL, *e;

	ff_set_state(&x->a, XenbusStateInitialising);
	CHK(ch, back_vif_state(x->va) == XenbusStateInitWait, "backend in state %d, not InitWait",
	    back_vif_state(x->va));
	if (may_fail && chance(ch, 12)) {
		switch (below(ch, 4)) {
		case 0:
			o.write_nq = 99, bad = "queues";
			break;
		case 1:
			o.omit_tx_ring_ref = true, bad = "ring-ref";
			for (unsigned int qi = 0; qi < o.nq; qi++)
				a_rm_key(ch, (int)qi, "tx-ring-ref");
			break;
		case 2:
			o.no_rx_copy = true, bad = "request-rx-copy";
			a_rm_key(ch, -1, "request-rx-copy");
			break;
		default:
			if (ch->mode == BACK_TX_PERSISTENT && o.persistent) {
				o.persistent_grants = chance(ch, 50) ? 0 : 100000;
				bad = "persistent-grants";
			}
			break;
		}
	}
	if (!o.write_nq)
		a_rm_key(ch, -1, "multi-queue-num-queues");
	/*
	 * Fresh ring pages, as a netfront allocates them: stale requests of an
	 * earlier connection would name refs that now grant this one's rings.
	 */
	for (unsigned int qi = 0; qi < o.nq; qi++)
		memset(a_page(ch, qi * FF_PAGES_PER_Q), 0, 2 * HV_PAGE_SIZE);
	memset(ch->tx_taint, 0, sizeof(ch->tx_taint));
	memset(ch->rx_taint, 0, sizeof(ch->rx_taint));
	memset(ch->tx_dirty, 0, sizeof(ch->tx_dirty));
	memset(ch->rx_dirty, 0, sizeof(ch->rx_dirty));
	memset(ch->tx_pub, 0, sizeof(ch->tx_pub));
	memset(ch->rx_pub, 0, sizeof(ch->rx_pub));
	CHK(ch, ff_connect(&x->a, &o) == 0, "A's frontend could not set up its rings");
	ch->reconnects++;
	ch->sampled = false;
	ch->a_self = false;
	e = back_vif_error(x->va);
	if (bad) {
		CHK(ch, back_vif_state(x->va) == XenbusStateClosing,
		    "a connect with a bad %s left the backend in state %d", bad,
		    back_vif_state(x->va));
		CHK(ch, e && strstr(e, bad), "a connect with a bad %s was refused for '%s'", bad,
		    e ? e : "(no reason)");
		CHK(ch, back_vif_stat(x->va, 0, "fatal") >= 1, "refused (%s) with no fatal count",
		    e);
		ch->t->refused++;
		chaos_note_fatal(ch, e);
		ch->a_conn = false;
		return;
	}
	CHK(ch, back_vif_state(x->va) == XenbusStateConnected, "A did not connect: state %d, '%s'",
	    back_vif_state(x->va), e ? e : "(no reason)");
	ch->a_conn = true;
}
