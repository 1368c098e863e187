// SPDX-License-Identifier: MIT
/* test_zerocopy.c - netfront's zero-copy buffers against a fake backend on the real rings */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "data_ctx.h"
#include "fakering.h"
#include "front/front.h"
#include "harness.h"

/* A zero-copy sender out of buffers is woken when they come back. */
static void test_zero_copy_out_of_buffers_wakes(void **state)
{
	struct pvnet_buf *bufs[40];
	static struct be_frame f;
	struct pollfd p;
	struct ctx c;
	int n;

	ctx_init(&c, 32, 64);
	p = (struct pollfd){.fd = pvnet_queue_fd(c.vif, 0), .events = POLLIN};
	n = pvnet_tx_alloc(c.vif, 0, bufs, 40);
	assert_int_equal(n, 32);
	for (int i = 0; i < n; i++) {
		fill(bufs[i]->data, 100, (unsigned int)i);
		bufs[i]->len = 100;
	}
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, (unsigned int)n), n);
	/* No buffer left: nothing allocated, and completions are armed for half in flight. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 0);
	assert_int_equal(c.be.tx.sring->rsp_event, c.be.tx.rsp_prod_pvt + 16);
	assert_int_equal(poll(&p, 1, 0), 0);
	/*
	 * The backend completes them, crossing rsp_event (a real netback then
	 * notifies the queue's event channel; this fake one does not), and the
	 * buffers are there again.
	 */
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	be_tx_push(&c.be);
	assert_true(c.be.tx.rsp_prod_pvt - c.be.tx.sring->rsp_event < c.be.tx.rsp_prod_pvt);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 40), 32);
	pvnet_tx_free(c.vif, 0, bufs, 32);
	ctx_fini(&c);
}

static void test_zero_copy(void **state)
{
	static uint8_t in[6000];
	static struct be_frame f;
	struct pvnet_buf *bufs[4], *rx[4];
	struct ctx c;

	ctx_init(&c, 32, 64);
	/* TX: two buffers chained, the first with headroom. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 2), 2);
	assert_ptr_equal(bufs[0]->data, bufs[0]->page);
	bufs[0]->data = (char *)bufs[0]->page + 128;
	fill(bufs[0]->data, 1000, 1);
	bufs[0]->len = 1000;
	fill(bufs[1]->data, 500, 2);
	bufs[1]->len = 500;
	bufs[0]->next = bufs[1];
	bufs[0]->flags = PVNET_PKT_DATA_VALIDATED;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 1500);
	assert_int_equal(f.slots, 2);
	assert_int_equal(f.first_offset, 128);
	assert_int_equal(f.flags & NETTXF_data_validated, NETTXF_data_validated);
	be_tx_push(&c.be);
	/* A buffer whose data leaves its page is refused; unsent buffers go back. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	bufs[0]->data = (char *)bufs[0]->page + 4000;
	bufs[0]->len = 200;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), -EINVAL);
	/* So is one whose data starts before its page, even ending inside it. */
	bufs[0]->data = (char *)bufs[0]->page - 16;
	bufs[0]->len = 64;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), -EINVAL);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	/* A buffer of a whole page is a fragment (a slot may end at the page's end). */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	fill(bufs[0]->data, PVNET_PAGE_SIZE, 4);
	memcpy(in, bufs[0]->data, PVNET_PAGE_SIZE);
	bufs[0]->len = PVNET_PAGE_SIZE;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, PVNET_PAGE_SIZE);
	assert_memory_equal(f.data, in, PVNET_PAGE_SIZE);
	be_tx_push(&c.be);
	/* A buffer that is not ours is refused too. */
	struct pvnet_buf fake = {.data = in, .len = 100, .page = in, .id = 0};
	struct pvnet_buf *fp = &fake;

	assert_int_equal(pvnet_tx_submit(c.vif, 0, &fp, 1), -EINVAL);

	/* RX: frames land in the granted pages, handed over as they are. */
	fill(in, 6000, 3);
	assert_int_equal(be_rx_frame(&c.be, in, 6000, 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	be_rx_push(&c.be);
	uint32_t posted_before = c.be.rx.sring->req_prod;

	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 4), 2);
	assert_int_equal(rx[0]->pkt_len, 6000);
	assert_int_equal(rx[0]->len, 4096);
	assert_non_null(rx[0]->next);
	assert_int_equal(rx[0]->next->len, 6000 - 4096);
	assert_null(rx[0]->next->next);
	assert_memory_equal(rx[0]->data, in, 4096);
	assert_memory_equal(rx[0]->next->data, in + 4096, 6000 - 4096);
	assert_int_equal(rx[1]->pkt_len, 100);
	/* The pages are the guest's own memory, not copies. */
	uintptr_t lo = (uintptr_t)pvnet_domain_page(c.dom, 0);
	uintptr_t hi = lo + (uintptr_t)pvnet_domain_pages(c.dom) * PVNET_PAGE_SIZE;

	assert_true((uintptr_t)rx[0]->data >= lo && (uintptr_t)rx[0]->data < hi);
	/* Held buffers are not re-posted; released ones are. */
	assert_int_equal(c.be.rx.sring->req_prod, posted_before);
	pvnet_rx_release(c.vif, 0, rx, 2);
	assert_int_equal(c.be.rx.sring->req_prod, posted_before + 3);
	ctx_fini(&c);
}

/*
 * The application spoils the page and id of every buffer it holds before
 * giving them back (the header says not to): the library goes by its own
 * record, so the copying calls still copy into and out of the granted
 * pages, and the next hand-out shows the true page again.  A chain that
 * runs into a pointer that is none of the queue's buffers ends there,
 * unread.
 */
static void test_zero_copy_spoiled_fields(void **state)
{
	enum { NTX = 32, NRX = PVNET_MAX_FRAGS + 1 };
	static uint8_t junk[2 * PVNET_PAGE_SIZE], in[200], out[200];
	static struct be_frame f;
	struct pvnet_buf *bufs[NTX], *rx[NRX];
	struct pvnet_pkt pkt;
	struct ctx c;
	int n;

	ctx_init(&c, NTX, NRX);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, NTX), NTX);
	for (int i = 0; i < NTX; i++) {
		bufs[i]->page = bufs[i]->data = junk;
		bufs[i]->id = 7;
	}
	pvnet_tx_free(c.vif, 0, bufs, NTX);
	for (int i = 0; i < NTX; i++) {
		fill(in, sizeof(in), (uint32_t)i);
		pkt = (struct pvnet_pkt){.data = in, .len = sizeof(in)};
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
		assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
		assert_memory_equal(f.data, in, sizeof(in));
	}
	be_tx_push(&c.be);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, NTX), NTX);
	for (int i = 0; i < NTX; i++) {
		assert_ptr_equal(bufs[i]->data, bufs[i]->page);
		assert_ptr_not_equal(bufs[i]->page, junk);
	}
	/* a foreign pointer after a buffer of ours: ours goes back, the other is not read */
	bufs[0]->next = (struct pvnet_buf *)(uintptr_t)0x10;
	pvnet_tx_free(c.vif, 0, bufs, 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs + NTX - 1, 1), 1);
	pvnet_tx_free(c.vif, 0, bufs, NTX);

	/* RX: every buffer spoiled and released, then frames copied out of them */
	fill(in, sizeof(in), 50);
	for (int i = 0; i < NRX; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	n = pvnet_rx_burst(c.vif, 0, rx, NRX);
	assert_int_equal(n, NRX);
	for (int i = 0; i < n; i++) {
		rx[i]->page = rx[i]->data = junk;
		rx[i]->id = 99;
	}
	pvnet_rx_release(c.vif, 0, rx, (unsigned int)n);
	for (int i = 0; i < NRX; i++) {
		fill(in, sizeof(in), 60 + (uint32_t)i);
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, sizeof(in));
		assert_memory_equal(out, in, sizeof(in));
	}
	ctx_fini(&c);
}

/*
 * A NULL entry in bufs[] is a malformed frame: refused with -EINVAL when it
 * comes first, else the call stops there and counts the frames before it
 * (pvnet_tx_submit() used to dereference it).
 */
/*
 * Buffers given back twice go back once: to the free list (TX), to the
 * ring (RX, where the same page at two slots would take two frames), a
 * chain looped back on itself included.
 */
static void test_zero_copy_given_back_twice(void **state)
{
	static uint8_t in[100];
	struct pvnet_buf *bufs[40], *chain[PVNET_MAX_FRAGS + 1], *rx[2];
	RING_IDX posted;
	struct ctx c;
	int n;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 2), 2);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	bufs[1]->next = bufs[1];
	pvnet_tx_free(c.vif, 0, bufs + 1, 1);
	n = pvnet_tx_alloc(c.vif, 0, bufs, 40);
	assert_int_equal(n, 32);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(bufs[i], bufs[j]);
	pvnet_tx_free(c.vif, 0, bufs, (unsigned int)n);

	/* A chain of 19 buffers is more fragments than a frame may have: refused, nothing sent. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, chain, PVNET_MAX_FRAGS + 1), PVNET_MAX_FRAGS + 1);
	for (unsigned int i = 0; i <= PVNET_MAX_FRAGS; i++) {
		chain[i]->len = 100;
		chain[i]->next = i < PVNET_MAX_FRAGS ? chain[i + 1] : NULL;
	}
	assert_int_equal(pvnet_tx_submit(c.vif, 0, chain, 1), -EINVAL);
	assert_int_equal(c.be.tx.sring->req_prod, 0);
	pvnet_tx_free(c.vif, 0, chain, 1);

	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 2), 2);
	posted = c.be.rx.sring->req_prod;
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 1);
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 1);
	rx[1]->next = rx[1];
	pvnet_rx_release(c.vif, 0, rx + 1, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 2);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

static void test_zero_copy_null_entry(void **state)
{
	static struct be_frame f;
	struct pvnet_buf *bufs[3];
	RING_IDX prod;
	struct ctx c;

	ctx_init(&c, 32, 64);
	prod = c.be.tx.sring->req_prod;
	bufs[0] = NULL;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), -EINVAL);
	assert_int_equal(c.be.tx.sring->req_prod, prod);

	/* {valid, NULL, valid}: one frame goes, the third stays the application's. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, &bufs[2], 1), 1);
	fill(bufs[0]->data, 100, 1);
	bufs[0]->len = 100;
	bufs[1] = NULL;
	fill(bufs[2]->data, 200, 2);
	bufs[2]->len = 200;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 3), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 100);
	assert_false(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	bufs[0] = bufs[2];
	bufs[1] = NULL;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 2), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 200);
	be_tx_push(&c.be);
	assert_null(pvnet_vif_error(c.vif));
	assert_int_equal(queue_stat(c.vif, "tx_packets"), 2);
	ctx_fini(&c);
}

/*
 * Zero-copy TX: a frame of the most fragments (18) goes, each fragment
 * from where its data starts in its page; freeing such a chain gives all
 * 18 back.
 */
static void test_zero_copy_longest_chain(void **state)
{
	static uint8_t want[PVNET_MAX_FRAGS * 100];
	static struct be_frame f;
	struct pvnet_buf *b[32];
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, PVNET_MAX_FRAGS), PVNET_MAX_FRAGS);
	for (unsigned int i = 0; i < PVNET_MAX_FRAGS; i++) {
		b[i]->data = (char *)b[i]->page + 64 * i;
		fill(b[i]->data, 100, 20 + i);
		memcpy(want + 100 * i, b[i]->data, 100);
		b[i]->len = 100;
		b[i]->next = i + 1 < PVNET_MAX_FRAGS ? b[i + 1] : NULL;
	}
	assert_int_equal(pvnet_tx_submit(c.vif, 0, b, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.slots, PVNET_MAX_FRAGS);
	assert_int_equal(f.len, sizeof(want));
	assert_memory_equal(f.data, want, sizeof(want));
	be_tx_push(&c.be);

	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, PVNET_MAX_FRAGS), PVNET_MAX_FRAGS);
	for (unsigned int i = 0; i < PVNET_MAX_FRAGS; i++)
		b[i]->next = i + 1 < PVNET_MAX_FRAGS ? b[i + 1] : NULL;
	pvnet_tx_free(c.vif, 0, b, 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 32), 32);
	pvnet_tx_free(c.vif, 0, b, 32);
	ctx_fini(&c);
}

/*
 * Only buffers the application holds can be submitted or freed: one in
 * flight (submitted already) is refused by submit and ignored by free, so
 * its id is never in flight twice nor handed out while the backend reads
 * it.
 */
static void test_zero_copy_in_flight_buffer(void **state)
{
	static struct be_frame f;
	struct pvnet_buf *b[32], *sent;
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 1), 1);
	sent = b[0];
	sent->len = 100;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, &sent, 1), 1);
	assert_int_equal(pvnet_tx_submit(c.vif, 0, &sent, 1), -EINVAL);
	pvnet_tx_free(c.vif, 0, &sent, 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 32), 31);
	for (int i = 0; i < 31; i++)
		assert_ptr_not_equal(b[i], sent);
	pvnet_tx_free(c.vif, 0, b, 31);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_false(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 32), 32);
	pvnet_tx_free(c.vif, 0, b, 32);
	assert_null(pvnet_vif_error(c.vif));
	/* Asking for no buffer is not running out of them. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 0), 0);
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 0);
	ctx_fini(&c);
}

/*
 * Zero-copy submit at a nearly full ring: a frame that needs exactly the
 * room left goes; the next stops the call, and what was queued before it
 * is on the ring (pushed) at once.  A later submit that gets through ends
 * the stop.
 */
static void test_zero_copy_ring_full(void **state)
{
	static uint8_t frames[64][60];
	static struct be_frame f;
	struct pvnet_pkt pkts[64];
	struct pvnet_buf *b[5], *frame[3];
	unsigned int sent = 0;
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 5), 5);
	for (int i = 0; i < 5; i++)
		b[i]->len = 1000;
	b[0]->next = b[1];
	b[1]->next = b[2];
	b[3]->flags = PVNET_PKT_CSUM_BLANK;
	b[3]->gso_type = PVNET_GSO_TCPV4;
	b[3]->gso_size = 500;
	frame[0] = b[0]; /* 3 slots */
	frame[1] = b[3]; /* 2 slots: the data and its GSO extra */
	frame[2] = b[4]; /* 1 slot */
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	while (sent < PVNET_RING_SIZE - 5) {
		unsigned int n = PVNET_RING_SIZE - 5 - sent < 64 ? PVNET_RING_SIZE - 5 - sent : 64;

		assert_int_equal(pvnet_send(c.vif, 0, pkts, n), (int)n);
		sent += n;
	}
	/* five slots left: the first two frames fill them exactly, the third waits */
	assert_int_equal(pvnet_tx_submit(c.vif, 0, frame, 3), 2);
	assert_int_equal(c.be.tx.sring->req_prod, PVNET_RING_SIZE);
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 1);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	assert_int_equal(f.len, 1000);
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 1); /* stopped: completions are work */
	assert_int_equal(pvnet_tx_submit(c.vif, 0, frame + 2, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	/* not stopped any more: a completion nobody waits for is no work */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zero_copy),
	    cmocka_unit_test(test_zero_copy_spoiled_fields),
	    cmocka_unit_test(test_zero_copy_out_of_buffers_wakes),
	    cmocka_unit_test(test_zero_copy_given_back_twice),
	    cmocka_unit_test(test_zero_copy_null_entry),
	    cmocka_unit_test(test_zero_copy_longest_chain),
	    cmocka_unit_test(test_zero_copy_in_flight_buffer),
	    cmocka_unit_test(test_zero_copy_ring_full),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
