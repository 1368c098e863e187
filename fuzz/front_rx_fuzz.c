// SPDX-License-Identifier: MIT
/* front_rx_fuzz.c - libFuzzer harness for netfront's RX reassembly (front_rx_slots2pkt) */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "front/front.h"

/*
 * Input layout (a hostile backend controls every byte of the RX ring page):
 *
 *   0..3   the ring index of our first posted request (rsp_cons), little endian
 *   4..5   how many requests we keep posted: value % (PVNET_RING_SIZE + 1)
 *   6..11  three rsp_prod values the backend publishes one after the other,
 *          each a 16-bit offset from the first index (so beyond what was
 *          posted, and behind our consumer, are both reachable)
 *   12..   RX responses, 8 bytes each, written to the ring slots of indexes
 *          first, first + 1, ... (at most a ring's worth)
 *
 * The harness receives as rx.c does: it loads rsp_prod once, refuses one
 * beyond what was posted, then calls front_rx_slots2pkt() from rsp_cons
 * until it returns 0 (nothing, or half a frame: wait for the next rsp_prod)
 * or -EPROTO (the vif is broken: stop), consuming what each frame used,
 * dropped frames included; after each rsp_prod it re-posts what it consumed.
 *
 * Checked against docs/netfront.md ("Validation of the backend's
 * responses") and front.h: a frame uses no slot at or beyond rsp_prod and
 * at most one frame's bound of slots, its fragments are slots it used,
 * each within one page, its length is their sum, a dropped frame is one
 * with a negative status, an unknown GSO type, a GSO size of 0 or a
 * length outside 14..65535, a hash is reported only for the types and
 * the algorithm netif.h defines; and a frame is accepted, waited for or
 * refused as a walk of the same slots by those rules says (refused only
 * for a real violation, never waited for when complete).  A broken
 * promise traps.
 */

/* One frame's most slots: every data slot and every extra. */
#define RX_MAX_SLOTS (FRONT_RX_MAX_FRAGS + FRONT_RX_MAX_EXTRAS)
#define RX_HDR_BYTES 12u
#define RX_MASK	     (PVNET_RING_SIZE - 1)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

static uint32_t le(const uint8_t *p, unsigned int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* What a walk of the slots by the documented rules finds. */
enum ref_verdict {
	REF_COMPLETE,
	REF_WAIT,   /* the frame needs slots not pushed yet */
	REF_BROKEN, /* a protocol violation among the slots pushed (or certain to come) */
};

struct ref_frame {
	unsigned int nslots;
	bool error;
	uint32_t len;
	uint16_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
};

static const netif_rx_response_t *slot(const netif_rx_front_ring_t *r, RING_IDX idx)
{
	return &r->sring->ring[idx & RX_MASK].rsp;
}

/* A data slot breaks the vif if its id is not its index's or its data leaves the page. */
static bool data_slot_bad(const netif_rx_response_t *rsp, RING_IDX idx)
{
	if (rsp->id != (idx & RX_MASK))
		return true;
	/* A negative status carries no data: its offset means nothing (Linux netfront alike). */
	if (rsp->status < 0)
		return false;
	return rsp->offset >= PVNET_PAGE_SIZE ||
	       (uint32_t)rsp->offset + (uint32_t)rsp->status > PVNET_PAGE_SIZE;
}

static void ref_data(struct ref_frame *f, const netif_rx_response_t *rsp)
{
	if (rsp->status < 0)
		f->error = true;
	else
		f->len += (uint32_t)rsp->status;
}

/*
 * The reference walk: violations are reported as soon as they are certain
 * (an extra announced after the 4th, a data slot announced after the 19th),
 * so it may say broken where front_rx_slots2pkt() still waits.
 */
static enum ref_verdict ref_walk(const netif_rx_front_ring_t *r, RING_IDX cons, RING_IDX avail,
				 struct ref_frame *f)
{
	const netif_rx_response_t *first = slot(r, cons);
	unsigned int pos = 1, ndata = 1, nextras = 0;
	bool more;

	memset(f, 0, sizeof(*f));
	if (avail == 0)
		return REF_WAIT;
	if (data_slot_bad(first, cons))
		return REF_BROKEN;
	ref_data(f, first);
	if (first->flags & NETRXF_data_validated)
		f->flags |= PVNET_PKT_DATA_VALIDATED;
	if (first->flags & NETRXF_csum_blank)
		f->flags |= PVNET_PKT_CSUM_BLANK;
	more = first->flags & NETRXF_extra_info;
	while (more) {
		struct netif_extra_info ex;

		if (nextras == FRONT_RX_MAX_EXTRAS)
			return REF_BROKEN;
		if (pos == avail)
			return REF_WAIT;
		memcpy(&ex, slot(r, cons + pos), sizeof(ex));
		if (ex.type == XEN_NETIF_EXTRA_TYPE_NONE || ex.type >= XEN_NETIF_EXTRA_TYPE_MAX)
			return REF_BROKEN;
		if (ex.type == XEN_NETIF_EXTRA_TYPE_GSO) {
			f->gso_type = ex.u.gso.type;
			f->gso_size = ex.u.gso.size;
			if ((ex.u.gso.type != XEN_NETIF_GSO_TYPE_TCPV4 &&
			     ex.u.gso.type != XEN_NETIF_GSO_TYPE_TCPV6) ||
			    ex.u.gso.size == 0)
				f->error = true;
		} else if (ex.type == XEN_NETIF_EXTRA_TYPE_HASH &&
			   ex.u.hash.type <= _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP &&
			   ex.u.hash.algorithm == XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ) {
			f->flags |=
			    PVNET_PKT_HASH; /* a hash of another type or algorithm: ignored */
		}
		nextras++;
		pos++;
		more = ex.flags & XEN_NETIF_EXTRA_FLAG_MORE;
	}
	more = first->flags & NETRXF_more_data;
	while (more) {
		const netif_rx_response_t *rsp;

		if (ndata == FRONT_RX_MAX_FRAGS)
			return REF_BROKEN;
		if (pos == avail)
			return REF_WAIT;
		rsp = slot(r, cons + pos);
		if (data_slot_bad(rsp, cons + pos))
			return REF_BROKEN;
		ref_data(f, rsp);
		ndata++;
		pos++;
		more = rsp->flags & NETRXF_more_data;
	}
	if (f->len < PVNET_MIN_FRAME || f->len > PVNET_MAX_FRAME)
		f->error = true;
	f->nslots = pos;
	return REF_COMPLETE;
}

/* A frame front_rx_slots2pkt() returned: its promises, and agreement with the walk. */
static void check_frame(const netif_rx_front_ring_t *r, RING_IDX cons, RING_IDX avail, int rc,
			const struct front_rx_pkt *pkt, const struct ref_frame *ref)
{
	RING_IDX last = 0;
	uint32_t sum = 0;

	check((RING_IDX)rc <= avail && rc <= (int)RX_MAX_SLOTS && pkt->nslots == (unsigned int)rc);
	check(pkt->nfrags <= FRONT_RX_MAX_FRAGS && pkt->nextras <= FRONT_RX_MAX_EXTRAS);
	check(pkt->nfrags + pkt->nextras <= pkt->nslots);
	for (unsigned int i = 0; i < pkt->nfrags; i++) {
		RING_IDX rel = pkt->frags[i].idx - cons;
		const netif_rx_response_t *rsp = slot(r, pkt->frags[i].idx);

		check(rel < pkt->nslots && (i == 0 || rel > last));
		check(pkt->frags[i].offset < PVNET_PAGE_SIZE);
		check((uint32_t)pkt->frags[i].offset + pkt->frags[i].len <= PVNET_PAGE_SIZE);
		check(rsp->id == (pkt->frags[i].idx & RX_MASK) && rsp->status >= 0);
		check(pkt->frags[i].offset == rsp->offset && pkt->frags[i].len == rsp->status);
		sum += pkt->frags[i].len;
		last = rel;
	}
	check(sum == pkt->len);
	for (unsigned int i = 0; i < pkt->nextras; i++) {
		RING_IDX rel = pkt->extra_idx[i] - cons;

		check(rel >= 1 && rel < pkt->nslots);
		for (unsigned int j = 0; j < pkt->nfrags; j++)
			check(pkt->frags[j].idx != pkt->extra_idx[i]);
	}
	if (!pkt->error) {
		check(pkt->len >= PVNET_MIN_FRAME && pkt->len <= PVNET_MAX_FRAME);
		check(pkt->nfrags >= 1 && pkt->nfrags + pkt->nextras == pkt->nslots);
		check(pkt->gso_type == PVNET_GSO_NONE || pkt->gso_type == PVNET_GSO_TCPV4 ||
		      pkt->gso_type == PVNET_GSO_TCPV6);
		check(pkt->gso_type == PVNET_GSO_NONE || pkt->gso_size > 0);
	}
	check(ref->nslots == pkt->nslots && ref->error == pkt->error && ref->len == pkt->len);
	check(ref->flags == pkt->flags);
	if (!pkt->error)
		check(ref->gso_type == pkt->gso_type && ref->gso_size == pkt->gso_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	netif_rx_front_ring_t r;
	netif_rx_sring_t *s;
	RING_IDX first, cons, pushed, depth;
	size_t nrsp;

	if (size < RX_HDR_BYTES)
		return 0;
	if (posix_memalign((void **)&s, PVNET_PAGE_SIZE, PVNET_PAGE_SIZE))
		return 0;
	memset(s, 0, PVNET_PAGE_SIZE);
	SHARED_RING_INIT(s);
	FRONT_RING_INIT(&r, s, PVNET_PAGE_SIZE);
	check(RING_SIZE(&r) == PVNET_RING_SIZE);

	first = le(data, 4);
	depth = le(data + 4, 2) % (PVNET_RING_SIZE + 1);
	nrsp = (size - RX_HDR_BYTES) / sizeof(netif_rx_response_t);
	if (nrsp > PVNET_RING_SIZE)
		nrsp = PVNET_RING_SIZE;
	for (size_t i = 0; i < nrsp; i++)
		memcpy(&s->ring[(first + i) & RX_MASK].rsp,
		       data + RX_HDR_BYTES + i * sizeof(netif_rx_response_t),
		       sizeof(netif_rx_response_t));

	cons = first;
	pushed = first + depth;
	r.rsp_cons = cons;
	r.req_prod_pvt = pushed;
	for (unsigned int step = 0; step < 3; step++) {
		RING_IDX prod;

		s->rsp_prod = first + le(data + 6 + 2 * step, 2); /* the backend's write */
		prod = __atomic_load_n(&s->rsp_prod, __ATOMIC_ACQUIRE);
		if (prod - cons > pushed - cons)
			break; /* beyond what was posted: the vif is broken */
		for (;;) {
			struct front_rx_pkt pkt;
			struct ref_frame ref;
			enum ref_verdict v = ref_walk(&r, cons, prod - cons, &ref);
			const char *why = NULL;
			int rc;

			memset(&pkt, 0xa5, sizeof(pkt)); /* stale output must not show through */
			rc = front_rx_slots2pkt(&r, cons, prod, &pkt, &why);
			if (rc < 0) {
				/* Refused with a reason, and never a well-behaved backend. */
				check(rc == -EPROTO && why && *why);
				check(v == REF_BROKEN);
				goto out;
			}
			if (rc == 0) {
				check(v != REF_COMPLETE); /* a whole frame is never left waiting */
				break;
			}
			check(v == REF_COMPLETE);
			check_frame(&r, cons, prod - cons, rc, &pkt, &ref);
			cons += (RING_IDX)rc;
			r.rsp_cons = cons;
		}
		/* Refill: re-post what was consumed, as front_queue_rx_refill() does. */
		pushed = cons + depth;
		r.req_prod_pvt = pushed;
	}
out:
	free(s);
	return 0;
}
