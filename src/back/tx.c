// SPDX-License-Identifier: MIT
// tx.c - guest TX: snapshot, parse, header copy, payload map or copy, forward, complete

/*
 * Theory of Operation
 *
 * Runs on the queue's worker (and, once the worker is stopped, on the loop
 * thread for the last completions).  One poll:
 *
 *   1. load req_prod once (acquire) and refuse a producer more than a ring
 *      ahead of our responses: fatal, the XSA-39 defence;
 *   2. snapshot every published request once (RING_COPY_REQUEST) into
 *      q->snap; nothing below reads the shared ring again (XSA-155);
 *   3. back_tx_ring2pkt() per packet (tx_parse.c); drops are answered at
 *      once, zero-size later slots too (XSA-448), a fatal verdict stops the
 *      poll and disables the vif;
 *   4. for each accepted packet, a pending slot (256 per queue, the ring
 *      size: in-flight TX is bounded by what the guest can post) and a plan:
 *      the first min(len, 128) bytes go into the pending slot's private
 *      header (even when they span several slots: the plan is bounded by
 *      the 19 data slots, XSA-423/432), the rest of each slot is
 *      grant-MAPPED read-only (map mode) or grant-COPIED into a private
 *      pool page (copy mode).  Header bytes are grant-COPIED, except in
 *      map mode from a slot that also carries payload: that page is mapped
 *      anyway, and step 5 copies them from the mapping, once, as Linux's
 *      netback did when it mapped (one grant operation fewer per frame);
 *   5. one grant-copy call and one map call for the whole batch (gnt.c;
 *      with persistent grants both are served from the queue's cache and
 *      reach the hypervisor only for pages seen the first time); each op's
 *      status is checked, and a packet with any failed op is dropped with
 *      an error response (its successful maps are undone), never a crash;
 *      then its offload flags are checked against its headers, an
 *      offloaded frame whose transport header ends past the header copy
 *      first taking more into it, up to SW_PKT_OFFLOAD_HDR_MAX bytes;
 *   6. sw_forward() of the batch, then the responses pushed with
 *      RING_PUSH_RESPONSES_AND_CHECK_NOTIFY semantics.  In that order: a
 *      copy-mode frame is answered only once it sits in its receivers' RX
 *      queues, so a guest that moves a flow to another queue only after
 *      its frames are answered (xps-safe) can never have the moved frames
 *      overtake them.
 *
 * Completion.  A packet's done() runs when its last consumer drops it, on
 * any thread: it only pushes the pending index onto q->compl (a bounded
 * MPSC ring that cannot overflow: it has a cell per pending slot) and wakes
 * the worker if it sleeps.  On the worker's own thread (it delivered the
 * frame itself, rx.c's direct delivery) it appends the index to a private
 * list instead: no atomic operation at all.  back_tx_complete() then unmaps the batch with
 * one call (nothing to unmap with persistent grants), writes the responses (first slot, a NULL response per extra,
 * then each data slot) and frees the slots.  Copy mode answers in step 6
 * and only frees pool pages at completion.
 *
 * Rate limit (the backend's "rate" key, "BYTES,USEC", as xl writes it for
 * a vif's rate=; Linux netback's credit scheduler): each queue may take
 * BYTES of guest TX per window of USEC.  A packet whose first-slot size
 * exceeds the credit left stops the poll before it is read; the next
 * window's credit comes when the window ends (the worker sleeps until
 * then, back_tx_credit_timeout()), never more than max(BYTES, 128 KiB)
 * at once, so that a 64 KiB frame always fits a window.  Like Linux, the
 * limit is per queue, and a dropped packet uses credit too.  One branch
 * per packet when no rate is set.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "back/internal.h"
#include "common/prefetch.h"
#include "switch/frame.h"

/* Per-packet plan of one poll. */
struct tx_plan {
	struct back_tx_pending *p;
	uint16_t copy0, ncopy;
	uint16_t map0, nmap;
	uint16_t frag_off[BACK_TX_MAX_DATA];
	uint16_t hdr_at[BACK_TX_MAX_DATA];   /* map mode: where in p->hdr this frag's page's */
	uint16_t hdr_take[BACK_TX_MAX_DATA]; /* header bytes go, and how many (0: none) */
};

int back_tx_init(struct back_queue *q)
{
	int rc;

	q->pending = calloc(BACK_PENDING, sizeof(*q->pending));
	if (!q->pending)
		return -ENOMEM;
	for (unsigned int i = 0; i < BACK_PENDING; i++) {
		q->pending[i].q = q;
		q->pending[i].next_free =
		    i + 1 < BACK_PENDING ? (uint16_t)(i + 1) : BACK_PENDING_NONE;
	}
	q->pending_free = 0;
	rc = back_mpsc_init(&q->compl, BACK_PENDING);
	if (rc < 0)
		return rc;
	if (q->mode == BACK_TX_COPY) {
		q->pool = aligned_alloc(BACK_PAGE_SIZE, (size_t)BACK_PENDING * BACK_PAGE_SIZE);
		q->pool_free = calloc(BACK_PENDING, sizeof(*q->pool_free));
		if (!q->pool || !q->pool_free)
			return -ENOMEM;
		for (unsigned int i = 0; i < BACK_PENDING; i++)
			q->pool_free[i] = (uint16_t)i;
		q->pool_nfree = BACK_PENDING;
	}
	return 0;
}

void back_tx_fini(struct back_queue *q)
{
	back_mpsc_fini(&q->compl );
	free(q->pool);
	free(q->pool_free);
	free(q->pending);
	q->pool = NULL;
	q->pool_free = NULL;
	q->pending = NULL;
}

static void tx_rsp(struct back_queue *q, uint16_t id, int16_t status)
{
	netif_tx_response_t *r = RING_GET_RESPONSE(&q->tx, q->tx.rsp_prod_pvt);

	r->id = id;
	r->status = status;
	q->tx.rsp_prod_pvt++;
}

/* Answer a packet's slots: first, a NULL per extra, then the data slots. */
static void tx_rsp_pkt(struct back_queue *q, const uint16_t *ids, unsigned int nids,
		       unsigned int nextras, int16_t status)
{
	tx_rsp(q, ids[0], status);
	for (unsigned int i = 0; i < nextras; i++)
		tx_rsp(q, 0, NETIF_RSP_NULL);
	for (unsigned int i = 1; i < nids; i++)
		tx_rsp(q, ids[i], status);
}

/* Publish the TX responses made so far; notify if the frontend asked. */
static void tx_push(struct back_queue *q)
{
	if (xen_ring_push(&q->tx.sring->rsp_prod, &q->tx.sring->rsp_event, &q->tx_rsp_pub,
			  q->tx.rsp_prod_pvt))
		back_notify(q, q->port_tx);
}

/* A window's credit, at most max(BYTES, 128 KiB) saved up (Linux's tx_add_credit()). */
#define TX_CREDIT_MIN_BURST (128u * 1024)

static void tx_credit_add(struct back_queue *q)
{
	uint64_t bytes = BACK_RATE_BYTES(q->credit_rate);
	uint64_t burst = bytes > TX_CREDIT_MIN_BURST ? bytes : TX_CREDIT_MIN_BURST;
	uint64_t left = q->credit_left + bytes; /* < 2^41: no wrap */

	q->credit_left = left < burst ? left : burst;
	q->rate_limited = false;
}

/*
 * Before a poll: apply a changed rate, and the credit of a window that has
 * ended while we waited.  Returns false while TX must still wait.
 */
static bool tx_credit_begin(struct back_queue *q, uint64_t now)
{
	uint64_t rate = atomic_load_explicit(&q->vif->rate, memory_order_relaxed);

	if (rate != q->credit_rate) {
		uint64_t bytes = BACK_RATE_BYTES(rate);

		q->credit_rate = rate;
		q->credit_start_ns = now;
		q->rate_limited = false;
		if (q->credit_left > bytes)
			q->credit_left = bytes;
		if (rate && !q->credit_left)
			tx_credit_add(q);
	}
	if (!q->rate_limited)
		return true;
	if (now < q->credit_next_ns)
		return false;
	tx_credit_add(q);
	return true;
}

/* May a packet of @size bytes go now?  Takes its credit if so (Linux's tx_credit_exceeded()). */
static bool tx_credit_take(struct back_queue *q, uint32_t size, uint64_t now)
{
	uint64_t window = BACK_RATE_USEC(q->credit_rate) * 1000;

	if (size > q->credit_left && now >= q->credit_start_ns + window) {
		q->credit_start_ns = now;
		tx_credit_add(q);
	}
	if (size <= q->credit_left) {
		q->credit_left -= size;
		return true;
	}
	/* A whole window from now if it just began: a packet over BYTES takes several. */
	q->credit_next_ns = q->credit_start_ns + window;
	q->credit_start_ns = q->credit_next_ns;
	q->rate_limited = true;
	back_stat_add(&q->stats->tx_rate_limited, 1);
	return false;
}

void back_tx_credit_timeout(struct back_queue *q, uint64_t now, int *timeout_ms)
{
	uint64_t ms;

	if (!q->rate_limited)
		return;
	ms = q->credit_next_ns > now ? (q->credit_next_ns - now + 999999) / 1000000 : 0;
	if (*timeout_ms < 0 || ms < (uint64_t)*timeout_ms)
		*timeout_ms = (int)ms;
}

bool back_tx_has_work(struct back_queue *q)
{
	netif_tx_sring_t *s = q->tx.sring;

	/* seq_cst, as the watch's store: it reads `sleeping` after storing (back_worker_wake()). */
	if (atomic_load_explicit(&q->vif->rate, memory_order_seq_cst) != q->credit_rate)
		return true; /* a new rate to apply */
	if (q->tx_stalled)
		return false; /* a completion wakes us */
	if (q->rate_limited && back_now_ns() < q->credit_next_ns)
		return false; /* the credit timeout wakes us */
	if (__atomic_load_n(&s->req_prod, __ATOMIC_ACQUIRE) != q->tx.req_cons)
		return true;
	/* RING_FINAL_CHECK_FOR_REQUESTS: store event, full barrier, re-read. */
	__atomic_store_n(&s->req_event, q->tx.req_cons + 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&s->req_prod, __ATOMIC_SEQ_CST) != q->tx.req_cons;
}

static struct back_tx_pending *pending_get(struct back_queue *q)
{
	struct back_tx_pending *p;

	if (q->pending_free == BACK_PENDING_NONE)
		return NULL;
	p = &q->pending[q->pending_free];
	q->pending_free = p->next_free;
	p->nids = p->nextras = p->nmaps = p->npages = 0;
	p->responded = false;
	atomic_store_explicit(&p->copied_out, false, memory_order_relaxed);
	return p;
}

static void pending_put(struct back_queue *q, struct back_tx_pending *p)
{
	for (unsigned int i = 0; i < p->npages; i++)
		q->pool_free[q->pool_nfree++] = p->pages[i];
	p->npages = 0;
	p->next_free = q->pending_free;
	q->pending_free = (uint16_t)(p - q->pending);
}

void back_tx_done(struct sw_pkt *pkt)
{
	struct back_tx_pending *p = back_tx_pending_of(pkt);
	struct back_queue *q = p->q;
	struct back_mpsc_item it = {.u64 = (uint64_t)(p - q->pending)};

	if (q == back_self) {
		/*
		 * Our own worker put the frame's last reference (it delivered
		 * the frame itself, rx.c): a private list, no atomics.  Each
		 * pending slot completes once, so it cannot overflow.
		 */
		q->done_local[q->ndone_local++] = (uint16_t)it.u64;
		return;
	}
	atomic_fetch_add_explicit(&q->done_busy, 1, memory_order_seq_cst);
	if (!back_mpsc_push(&q->compl, &it))
		err("vif%u.%u q%u: completion ring full (bug)", q->vif->domid, q->vif->devid,
		    q->id);
	back_worker_wake(q);
	atomic_fetch_sub_explicit(&q->done_busy, 1, memory_order_seq_cst);
}

bool back_tx_complete(struct back_queue *q)
{
	struct back_tx_pending *done[BACK_PENDING];
	struct back_mpsc_item *it;
	unsigned int n = 0, nunmap = 0;
	bool map = q->mode != BACK_TX_COPY;

	for (unsigned int i = 0; i < q->ndone_local; i++)
		done[n++] = &q->pending[q->done_local[i]];
	q->ndone_local = 0;
	while (n < BACK_PENDING && (it = back_mpsc_peek(&q->compl, 0)) != NULL) {
		done[n++] = &q->pending[it->u64 % BACK_PENDING];
		back_mpsc_pop(&q->compl );
	}
	if (n == 0)
		return false;
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < done[i]->nmaps; j++)
			q->tx_unmap[nunmap++] = (struct gnttab_unmap_grant_ref){
			    .handle = done[i]->handles[j], .host_addr = done[i]->addrs[j]};
	if (nunmap && back_gnt_unmap(q, nunmap, q->tx_unmap) < 0)
		err("vif%u.%u q%u: unmap batch refused", q->vif->domid, q->vif->devid, q->id);
	for (unsigned int i = 0; i < n; i++) {
		struct back_tx_pending *p = done[i];

		if (!p->responded)
			tx_rsp_pkt(q, p->ids, p->nids, p->nextras, NETIF_RSP_OKAY);
		if (map && atomic_load_explicit(&p->copied_out, memory_order_acquire))
			back_stat_add(&q->stats->tx_zerocopy_fail, 1);
		else if (map)
			back_stat_add(&q->stats->tx_zerocopy_success, 1);
		p->nmaps = 0;
		pending_put(q, p);
	}
	atomic_fetch_sub_explicit(&q->inflight, n, memory_order_seq_cst);
	tx_push(q);
	q->tx_stalled = false;
	return true;
}

/* Drop a parsed packet: every consumed slot gets an error (extras NULL). */
static void tx_drop_slots(struct back_queue *q, const netif_tx_request_t *slots,
			  const struct back_tx_parse *pp)
{
	tx_rsp(q, slots[0].id, NETIF_RSP_ERROR);
	for (unsigned int i = 1; i <= pp->nextras; i++)
		tx_rsp(q, 0, NETIF_RSP_NULL);
	for (unsigned int i = 1 + pp->nextras; i < pp->nslots; i++)
		tx_rsp(q, slots[i].id, NETIF_RSP_ERROR);
}

/* A multicast filter request: apply it, answer it (no packet, nothing mapped). */
static void tx_mcast(struct back_queue *q, const netif_tx_request_t *slots,
		     const struct back_tx_parse *pp)
{
	int16_t st = back_mcast_apply(q->vif, pp->mcast_op, pp->mcast_addr);

	tx_rsp(q, slots[0].id, st);
	for (unsigned int i = 1; i <= pp->nextras; i++)
		tx_rsp(q, 0, NETIF_RSP_NULL);
	if (pp->mcast_op == XEN_NETIF_EXTRA_TYPE_MCAST_DEL)
		back_stat_add(&q->stats->tx_mcast_del, 1);
	else if (st == NETIF_RSP_OKAY)
		back_stat_add(&q->stats->tx_mcast_add, 1);
	else
		back_stat_add(&q->stats->tx_mcast_full, 1);
}

static void tx_count_drop(struct back_queue *q, const struct back_tx_parse *pp)
{
	static const size_t off[] = {
	    [BACK_TX_DROP_SLOTS] = offsetof(struct back_queue_stats, tx_frag_overflow),
	    [BACK_TX_DROP_SIZE] = offsetof(struct back_queue_stats, tx_bad_size),
	    [BACK_TX_DROP_RUNT] = offsetof(struct back_queue_stats, tx_runt),
	};

	back_stat_add(&q->stats->tx_dropped, 1);
	if (pp->drop > BACK_TX_DROP_NONE && pp->drop <= BACK_TX_DROP_RUNT)
		back_stat_add((_Atomic uint64_t *)((char *)q->stats + off[pp->drop]), 1);
	back_queue_warn(q, "dropping packet: %s", pp->reason);
}

/*
 * Plan one accepted packet into the batch's op arrays: header copy ops,
 * then per slot remainder a map op (map mode) or a copy op into a pool page.
 */
static void tx_plan_pkt(struct back_queue *q, const netif_tx_request_t *slots,
			const struct back_tx_parse *pp, struct tx_plan *pl, unsigned int *ncopy,
			unsigned int *nmap)
{
	struct back_tx_pending *p = pl->p;
	uint32_t hdr_len = pp->len < BACK_TX_HDR_LEN ? pp->len : BACK_TX_HDR_LEN, got = 0;
	domid_t dom = q->vif->domid;
	bool map = q->mode != BACK_TX_COPY;

	pl->copy0 = (uint16_t)*ncopy;
	pl->map0 = (uint16_t)*nmap;
	p->ids[p->nids++] = slots[0].id;
	p->nextras = pp->nextras;
	p->pkt.nfrags = 0;
	for (unsigned int j = 0; j < pp->ndata; j++) {
		const netif_tx_request_t *s = &slots[pp->data[j]];
		uint32_t len = pp->data_len[j], h = 0, r;

		if (j > 0)
			p->ids[p->nids++] = s->id;
		pl->hdr_take[p->pkt.nfrags] = 0;
		if (got < hdr_len) {
			h = hdr_len - got < len ? hdr_len - got : len;
			if (map && h < len) {
				/* Mapped anyway for its payload: tx_check_pkt() copies the header from it. */
				pl->hdr_at[p->pkt.nfrags] = (uint16_t)got;
				pl->hdr_take[p->pkt.nfrags] = (uint16_t)h;
			} else {
				q->tx_copy[(*ncopy)++] = (xengnttab_grant_copy_segment_t){
				    .source.foreign = {.ref = s->gref,
						       .offset = s->offset,
						       .domid = dom},
				    .dest.virt = p->hdr + got,
				    .len = (uint16_t)h,
				    .flags = GNTCOPY_source_gref};
			}
			got += h;
		}
		r = len - h;
		if (r == 0)
			continue;
		if (map) {
			q->tx_map[(*nmap)++] = (struct gnttab_map_grant_ref){
			    .flags = GNTMAP_host_map | GNTMAP_readonly, .ref = s->gref, .dom = dom};
			pl->frag_off[p->pkt.nfrags] = (uint16_t)(s->offset + h);
		} else {
			uint16_t pg = q->pool_free[--q->pool_nfree];

			p->pages[p->npages++] = pg;
			q->tx_copy[(*ncopy)++] = (xengnttab_grant_copy_segment_t){
			    .source.foreign = {.ref = s->gref,
					       .offset = (uint16_t)(s->offset + h),
					       .domid = dom},
			    .dest.virt = q->pool[pg],
			    .len = (uint16_t)r,
			    .flags = GNTCOPY_source_gref};
			p->pkt.frag[p->pkt.nfrags].base = q->pool[pg];
		}
		p->pkt.frag[p->pkt.nfrags++].len = r;
	}
	p->pkt.hdr = p->hdr;
	p->pkt.hdr_len = (uint16_t)hdr_len;
	p->pkt.len = pp->len;
	p->pkt.flags =
	    (uint8_t)(((pp->txflags & NETTXF_csum_blank) ? SW_PKT_CSUM_BLANK : 0) |
		      ((pp->txflags & NETTXF_data_validated) ? SW_PKT_DATA_VALIDATED : 0));
	p->pkt.gso_type = pp->gso_type;
	p->pkt.gso_size = pp->gso_size;
	p->pkt.priv = p;
	pl->ncopy = (uint16_t)(*ncopy - pl->copy0);
	pl->nmap = (uint16_t)(*nmap - pl->map0);
}

/*
 * Do a frame's offload flags fit its headers, as read into private memory?
 * A blank checksum needs a TCP or UDP header within the header copy; GSO
 * a blank checksum and a TCP header of its family, with payload after it,
 * that segmentation can cut (Linux's netback: checksum_setup() at TX, a
 * frame it fails dropped; it takes a GSO frame with an IPv6 fragment or
 * AH header there and drops it only where it must be cut).
 * Without such a check a guest could hand another's netfront offload
 * flags laid over any bytes.  @l4: where the headers are, when it parsed
 * them (a frame with offload flags).
 */
static bool tx_offload_ok(const struct sw_pkt *pkt, struct sw_l4 *l4)
{
	if (!(pkt->flags & SW_PKT_CSUM_BLANK) && pkt->gso_type == SW_GSO_NONE)
		return true;
	if (!(pkt->flags & SW_PKT_CSUM_BLANK) || sw_frame_parse(pkt->hdr, pkt->hdr_len, l4) < 0)
		return false;
	if (pkt->gso_type == SW_GSO_NONE)
		return l4->proto == IPPROTO_TCP || l4->proto == IPPROTO_UDP;
	return l4->proto == IPPROTO_TCP && l4->l3 == (pkt->gso_type == SW_GSO_TCPV4 ? 4 : 6) &&
	       l4->gso_ok && (uint32_t)l4->l4_off + l4->l4_len < pkt->len;
}

/*
 * A GSO frame whose sender left csum_blank off: GSO needs a blank checksum,
 * but some frontends send it so, and Linux's netback and netfront take such
 * a frame as blank, writing the pseudo-header sum into its TCP checksum
 * field (checksum_setup(), counted as rx_gso_checksum_fixup).  pvnetd does
 * the same in the private header copy, if the frame is otherwise a GSO
 * frame tx_offload_ok() takes; the field's old value is not used.
 */
static bool tx_gso_fixup(struct back_queue *q, struct back_tx_pending *p)
{
	struct sw_pkt *pkt = &p->pkt;
	uint8_t *field;
	struct sw_l4 l4;
	uint16_t seed;

	if (pkt->gso_type == SW_GSO_NONE || (pkt->flags & SW_PKT_CSUM_BLANK))
		return false;
	pkt->flags |= SW_PKT_CSUM_BLANK;
	if (!tx_offload_ok(pkt, &l4)) {
		pkt->flags &= (uint8_t)~SW_PKT_CSUM_BLANK;
		return false;
	}
	/* tx_offload_ok(): TCP, its header within the copy, payload after it. */
	seed = sw_tcp_pseudo(p->hdr, &l4, pkt->len - l4.l4_off);
	field = p->hdr + l4.l4_off + SW_FRAME_TCP_CSUM_OFF;
	field[0] = (uint8_t)(seed >> 8);
	field[1] = (uint8_t)seed;
	back_stat_add(&q->stats->tx_gso_checksum_fixup, 1);
	return true;
}

/*
 * An offloaded frame whose transport header ends past the first
 * BACK_TX_HDR_LEN bytes (IPv6 extension headers, IP and TCP options):
 * take the following bytes, up to SW_PKT_OFFLOAD_HDR_MAX, into the header
 * copy, read once from the payload pieces, which then start that much
 * later (a piece left empty goes), as Linux's netback pulls them into its
 * linear area.  The pieces hold the frame's bytes after the header copy,
 * in order (tx_plan_pkt()).
 */
static void tx_pull_hdr(struct back_tx_pending *p)
{
	struct sw_pkt *pkt = &p->pkt;
	uint32_t want = pkt->len < SW_PKT_OFFLOAD_HDR_MAX ? pkt->len : SW_PKT_OFFLOAD_HDR_MAX;
	unsigned int gone = 0;

	while (pkt->hdr_len < want && gone < pkt->nfrags) {
		struct sw_pkt_frag *fr = &pkt->frag[gone];
		uint32_t take = want - pkt->hdr_len < fr->len ? want - pkt->hdr_len : fr->len;

		memcpy(p->hdr + pkt->hdr_len, fr->base, take);
		pkt->hdr_len = (uint16_t)(pkt->hdr_len + take);
		fr->base = (const uint8_t *)fr->base + take;
		fr->len -= take;
		if (fr->len == 0)
			gone++;
	}
	pkt->nfrags = (uint8_t)(pkt->nfrags - gone);
	memmove(pkt->frag, pkt->frag + gone, pkt->nfrags * sizeof(pkt->frag[0]));
}

/* Step 5 for one packet: check its ops, then its offload flags; 0 to forward, -EIO dropped. */
static int tx_check_pkt(struct back_queue *q, struct tx_plan *pl, unsigned int *nunmap)
{
	struct back_tx_pending *p = pl->p;
	const uint8_t *page;
	bool ok = true, offload_ok;
	struct sw_l4 l4; /* tx_offload_ok()'s parse, unused here */

	for (unsigned int i = 0; i < pl->ncopy; i++)
		ok &= q->tx_copy[pl->copy0 + i].status == GNTST_okay;
	for (unsigned int i = 0; i < pl->nmap; i++) {
		struct gnttab_map_grant_ref *m = &q->tx_map[pl->map0 + i];

		if (m->status != GNTST_okay) {
			ok = false;
			continue;
		}
		if (q->mode == BACK_TX_MAP) { /* persistent mappings belong to the cache */
			p->handles[p->nmaps] = m->handle;
			p->addrs[p->nmaps++] = m->host_addr;
		}
		page = (const uint8_t *)(uintptr_t)m->host_addr;
		p->pkt.frag[i].base = page + pl->frag_off[i];
		/* The header bytes of this page: read once, into memory the guest cannot write. */
		if (pl->hdr_take[i])
			memcpy(p->hdr + pl->hdr_at[i], page + pl->frag_off[i] - pl->hdr_take[i],
			       pl->hdr_take[i]);
	}
	offload_ok = !ok || tx_offload_ok(&p->pkt, &l4) || tx_gso_fixup(q, p);
	if (!offload_ok && p->pkt.hdr_len < p->pkt.len && p->pkt.hdr_len < SW_PKT_OFFLOAD_HDR_MAX) {
		tx_pull_hdr(p);
		offload_ok = tx_offload_ok(&p->pkt, &l4) || tx_gso_fixup(q, p);
	}
	if (ok && offload_ok)
		return 0;
	for (unsigned int i = 0; i < p->nmaps; i++)
		q->tx_unmap[(*nunmap)++] = (struct gnttab_unmap_grant_ref){
		    .handle = p->handles[i], .host_addr = p->addrs[i]};
	p->nmaps = 0;
	tx_rsp_pkt(q, p->ids, p->nids, p->nextras, NETIF_RSP_ERROR);
	back_stat_add(ok ? &q->stats->tx_bad_offload : &q->stats->tx_bad_gref, 1);
	back_stat_add(&q->stats->tx_dropped, 1);
	if (ok)
		back_queue_warn(q, "dropping packet: offload flags its headers do not fit");
	else
		back_queue_warn(q, "dropping packet: grant %s failed",
				pl->nmap ? "map/copy" : "copy");
	pending_put(q, p);
	return -EIO;
}

bool back_tx_poll(struct back_queue *q)
{
	struct tx_plan plan[BACK_BATCH];
	struct sw_pkt *fwd[BACK_BATCH];
	struct back_tx_parse pp;
	unsigned int avail, pos = 0, npl = 0, ncopy = 0, nmap = 0, nunmap = 0, nfwd = 0, i;
	bool map = q->mode != BACK_TX_COPY, progress = false;
	uint64_t now = 0;
	RING_IDX prod;
	int rc;

	if (q->credit_rate || atomic_load_explicit(&q->vif->rate, memory_order_relaxed)) {
		now = back_now_ns();
		if (!tx_credit_begin(q, now))
			return false;
	}
	prod = __atomic_load_n(&q->tx.sring->req_prod, __ATOMIC_ACQUIRE);
	if (RING_REQUEST_PROD_OVERFLOW(&q->tx, prod)) {
		back_queue_fatal(q,
				 "tx: req_prod %u is more than a ring ahead (req_cons %u, rsp %u)",
				 prod, q->tx.req_cons, q->tx.rsp_prod_pvt);
		return false;
	}
	/*
	 * Nor behind what we consumed: in map mode requests are consumed
	 * before they are answered, and a req_prod between our responses
	 * and req_cons would make prod - req_cons wrap to ~2^32.
	 */
	if ((RING_IDX)(prod - q->tx.req_cons) > (RING_IDX)(prod - q->tx.rsp_prod_pvt)) {
		back_queue_fatal(q, "tx: req_prod %u went back behind req_cons %u (rsp %u)", prod,
				 q->tx.req_cons, q->tx.rsp_prod_pvt);
		return false;
	}
	avail = prod - q->tx.req_cons;
	if (avail == 0)
		return false;
	/*
	 * The new requests, written by the guest on its CPU, owned: their
	 * slots take the responses later (answered at once in steady state;
	 * a held frame's slots stay ours, the guest does not touch them).
	 */
	prefetch_ring(q->tx.sring->ring, sizeof(q->tx.sring->ring[0]), RING_SIZE(&q->tx),
		      q->tx.req_cons, avail, true);
	for (i = 0; i < avail; i++)
		RING_COPY_REQUEST(&q->tx, q->tx.req_cons + i, &q->snap[i]);

	while (pos < avail && npl < BACK_BATCH) {
		if (q->pending_free == BACK_PENDING_NONE ||
		    ncopy + BACK_TX_OPS_PER_PKT > BACK_TX_COPY_OPS ||
		    (!map && q->pool_nfree < BACK_TX_MAX_DATA)) {
			q->tx_stalled = npl == 0;
			back_stat_add(&q->stats->tx_stalls, q->tx_stalled);
			break;
		}
		if (q->credit_rate && !tx_credit_take(q, q->snap[pos].size, now))
			break;
		rc = back_tx_ring2pkt(&q->snap[pos], avail - pos, &pp);
		if (rc == BACK_TX_FATAL) {
			back_queue_fatal(q, "tx: %s (slot %u)", pp.reason, q->tx.req_cons);
			break;
		}
		progress = true;
		if (rc == BACK_TX_DROP) {
			tx_drop_slots(q, &q->snap[pos], &pp);
			tx_count_drop(q, &pp);
		} else if (rc == BACK_TX_MCAST) {
			tx_mcast(q, &q->snap[pos], &pp);
		} else {
			for (i = 0; i < pp.nempty; i++)
				tx_rsp(q, q->snap[pos + pp.empty[i]].id, NETIF_RSP_OKAY);
			back_stat_add(&q->stats->tx_empty_slots, pp.nempty);
			plan[npl].p = pending_get(q);
			tx_plan_pkt(q, &q->snap[pos], &pp, &plan[npl], &ncopy, &nmap);
			npl++;
		}
		pos += pp.nslots;
		q->tx.req_cons += pp.nslots;
	}

	/* One grant-copy and one map call for the whole batch (gnt.c: none when persistent). */
	if (ncopy)
		back_gnt_copy(q, ncopy, q->tx_copy);
	if (nmap)
		back_gnt_map(q, nmap, q->tx_map);

	for (i = 0; i < npl; i++) {
		struct back_tx_pending *p = plan[i].p;

		if (tx_check_pkt(q, &plan[i], &nunmap) < 0)
			continue;
		sw_pkt_init(&p->pkt, back_tx_done);
		if (map) {
			back_stat_add(&q->stats->tx_zerocopy_sent, 1);
		} else {
			tx_rsp_pkt(q, p->ids, p->nids, p->nextras, NETIF_RSP_OKAY);
			p->responded = true;
			back_stat_add(&q->stats->tx_copied, 1);
		}
		back_stat_add(&q->stats->tx_packets, 1);
		back_stat_add(&q->stats->tx_bytes, p->pkt.len);
		fwd[nfwd++] = &p->pkt;
	}
	if (nunmap && back_gnt_unmap(q, nunmap, q->tx_unmap) < 0)
		err("vif%u.%u q%u: unmap batch refused", q->vif->domid, q->vif->devid, q->id);
	if (nfwd) {
		atomic_fetch_add_explicit(&q->inflight, nfwd, memory_order_seq_cst);
		sw_forward(q->b->sw, q->vif->port, fwd, nfwd);
	}
	/* After the forward: an answered frame is already in its receivers' queues. */
	tx_push(q);
	return progress;
}
