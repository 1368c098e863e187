// SPDX-License-Identifier: MIT
/* fakering.c - netfront tests: netback's ring side, played on the frontend's granted pages */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fakering.h"
#include "harness.h"

void be_attach_rings(struct be *b, struct pvnet_domain *dom, uint32_t tx_ref, uint32_t rx_ref)
{
	bool ro = true;
	netif_tx_sring_t *txs = h_grant_page(dom, tx_ref, &ro);
	netif_rx_sring_t *rxs;

	assert_non_null(txs);
	assert_false(ro);
	rxs = h_grant_page(dom, rx_ref, &ro);
	assert_non_null(rxs);
	assert_false(ro);
	b->dom = dom;
	b->rx_offset = 0; /* at the start of each page, as Linux's netback; a test may move it */
	/* Attach at the producer the frontend left, as Linux netback's BACK_RING_ATTACH. */
	BACK_RING_ATTACH(&b->tx, txs, txs->rsp_prod, PVNET_PAGE_SIZE);
	BACK_RING_ATTACH(&b->rx, rxs, rxs->rsp_prod, PVNET_PAGE_SIZE);
}

/* netback TX: consume one frame (slots copied once), copy its payload, answer every slot. */
bool be_tx_frame(struct be *b, struct be_frame *f, int16_t status)
{
	netif_tx_request_t req[XEN_NETIF_NR_SLOTS_MIN];
	uint32_t rest = 0, got = 0;
	unsigned int n = 0;
	bool ro = false, extra = false;

	if (!RING_HAS_UNCONSUMED_REQUESTS(&b->tx))
		return false;
	memset(&f->gso, 0, sizeof(f->gso));
	do {
		assert_true(n < XEN_NETIF_NR_SLOTS_MIN);
		RING_COPY_REQUEST(&b->tx, b->tx.req_cons, &req[n]);
		b->tx.req_cons++;
		if (n == 0 && (req[0].flags & NETTXF_extra_info)) {
			RING_COPY_REQUEST(&b->tx, b->tx.req_cons, (netif_tx_request_t *)&f->gso);
			b->tx.req_cons++;
			extra = true;
		}
		if (n)
			rest += req[n].size;
	} while (req[n++].flags & NETTXF_more_data);
	f->flags = req[0].flags;
	f->slots = n;
	f->first_offset = req[0].offset;
	for (unsigned int i = 0; i < n; i++) {
		/* The first slot's own size is what the others leave of the whole. */
		uint32_t len = i ? req[i].size : req[0].size - rest;
		const uint8_t *page = h_grant_page(b->dom, req[i].gref, &ro);
		netif_tx_response_t *rsp;

		assert_non_null(page);
		assert_true(ro); /* TX buffers are granted read-only */
		assert_true(req[i].offset + len <= PVNET_PAGE_SIZE);
		memcpy(f->data + got, page + req[i].offset, len);
		got += len;
		rsp = RING_GET_RESPONSE(&b->tx, b->tx.rsp_prod_pvt++);
		rsp->id = req[i].id;
		rsp->status = status;
		if (i == 0 && extra) {
			rsp = RING_GET_RESPONSE(&b->tx, b->tx.rsp_prod_pvt++);
			rsp->status = NETIF_RSP_NULL;
		}
	}
	f->len = got;
	assert_int_equal(got, req[0].size);
	return true;
}

/*
 * Publish responses as netback does (RING_PUSH_RESPONSES, then the final
 * check that sets req_event = req_cons + 1).  Sequentially consistent
 * stores instead of ring.h's fences: ThreadSanitizer builds refuse
 * atomic_thread_fence in the test's own code.
 */
void be_tx_push(struct be *b)
{
	__atomic_store_n(&b->tx.sring->rsp_prod, b->tx.rsp_prod_pvt, __ATOMIC_SEQ_CST);
	__atomic_store_n(&b->tx.sring->req_event, b->tx.req_cons + 1, __ATOMIC_SEQ_CST);
}

/* netback RX: write one frame into posted buffers, responses at the requests' indexes. */
int be_rx_frame(struct be *b, const uint8_t *data, uint32_t len, uint16_t flags,
		const struct netif_extra_info *extra)
{
	uint32_t room = PVNET_PAGE_SIZE - b->rx_offset;
	uint32_t slots = (len + room - 1) / room + (extra ? 1 : 0);
	uint32_t off = 0;

	if (b->rx.sring->req_prod - b->rx.req_cons < slots)
		return -ENOSPC;
	for (uint32_t s = 0; off < len || s == 0; s++) {
		netif_rx_request_t req;
		netif_rx_response_t *rsp;
		uint32_t chunk = len - off < room ? len - off : room;
		bool ro = true;
		uint8_t *page;

		RING_COPY_REQUEST(&b->rx, b->rx.req_cons, &req);
		page = h_grant_page(b->dom, req.gref, &ro);
		assert_non_null(page);
		assert_false(ro);
		memcpy(page + b->rx_offset, data + off, chunk);
		rsp = RING_GET_RESPONSE(&b->rx, b->rx.req_cons);
		rsp->id = req.id;
		rsp->offset = b->rx_offset;
		rsp->status = (int16_t)chunk;
		rsp->flags = (off + chunk < len ? NETRXF_more_data : 0) | (s == 0 ? flags : 0) |
			     (s == 0 && extra ? NETRXF_extra_info : 0);
		b->rx.req_cons++;
		b->rx.rsp_prod_pvt = b->rx.req_cons;
		off += chunk;
		if (s == 0 && extra) {
			memcpy(RING_GET_RESPONSE(&b->rx, b->rx.req_cons), extra, sizeof(*extra));
			b->rx.req_cons++;
			b->rx.rsp_prod_pvt = b->rx.req_cons;
		}
	}
	return 0;
}

void be_rx_push(struct be *b)
{
	__atomic_store_n(&b->rx.sring->rsp_prod, b->rx.rsp_prod_pvt, __ATOMIC_SEQ_CST);
}
