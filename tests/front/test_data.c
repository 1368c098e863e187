// SPDX-License-Identifier: MIT
/* test_data.c - netfront's TX against a fake backend working on the real granted rings */
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

static void test_tx_sizes(void **state)
{
	static const uint32_t sizes[] = {14, 60, 1500, 4095, 4096, 4097, 9000, 40000, 65535};
	static uint8_t buf[PVNET_MAX_FRAME];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = buf};
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(buf, sizes[i], (uint32_t)i);
		pkt.len = sizes[i];
		pkt.flags = i & 1 ? PVNET_PKT_CSUM_BLANK : 0;
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
		assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
		assert_int_equal(f.len, sizes[i]);
		assert_int_equal(f.slots, (sizes[i] + 4095) / 4096);
		assert_memory_equal(f.data, buf, sizes[i]);
		assert_int_equal(!!(f.flags & NETTXF_csum_blank), i & 1);
		be_tx_push(&c.be);
	}
	/* GSO: an extra slot after the first. */
	fill(buf, 30000, 99);
	pkt = (struct pvnet_pkt){.data = buf,
				 .len = 30000,
				 .flags = PVNET_PKT_CSUM_BLANK,
				 .gso_type = PVNET_GSO_TCPV4,
				 .gso_size = 1448};
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	assert_int_equal(f.gso.u.gso.size, 1448);
	assert_int_equal(f.gso.u.gso.type, XEN_NETIF_GSO_TYPE_TCPV4);
	assert_memory_equal(f.data, buf, 30000);
	be_tx_push(&c.be);
	/* Malformed frames are refused before anything is queued. */
	pkt.len = 13;
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -EINVAL);
	pkt.len = 100;
	pkt.gso_type = 7;
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -EINVAL);
	assert_int_equal(queue_stat(c.vif, "tx_packets"), 10);
	ctx_fini(&c);
}

static void test_tx_ring_full_and_wrap(void **state)
{
	static uint8_t frames[64][60];
	static struct be_frame f;
	struct pvnet_pkt pkts[64];
	unsigned int sent = 0, got = 0, bursts = 0;
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	/* Fill the ring without completions: exactly 256 one-slot frames fit. */
	while (sent < PVNET_RING_SIZE + 64) {
		for (int i = 0; i < 64; i++)
			frames[i][0] = (uint8_t)(sent + (unsigned int)i);
		int n = pvnet_send(c.vif, 0, pkts, 64);

		assert_true(n >= 0);
		if (n == 0)
			break;
		sent += (unsigned int)n;
	}
	assert_int_equal(sent, PVNET_RING_SIZE);
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 1);
	/* Stopped: completions are armed for half the ring. */
	assert_int_equal(c.be.tx.sring->rsp_event, PVNET_RING_SIZE / 2);
	/* Many rounds: the indices wrap the ring 20 times; every payload arrives intact. */
	for (int round = 0; round < 20 * 4; round++) {
		while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY)) {
			assert_int_equal(f.len, 60);
			assert_int_equal(f.data[0], (uint8_t)got);
			got++;
		}
		be_tx_push(&c.be);
		for (int i = 0; i < 64; i++)
			frames[i][0] = (uint8_t)(sent + (unsigned int)i);
		int n = pvnet_send(c.vif, 0, pkts, 64);

		assert_int_equal(n, 64);
		sent += 64;
		bursts++;
	}
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		got++;
	assert_int_equal(got, sent);
	/* The backend asked for a kick per burst at most (req_event = req_cons + 1). */
	assert_true(queue_stat(c.vif, "tx_notify") <= bursts + 1);
	assert_int_equal(queue_stat(c.vif, "tx_errors"), 0);
	ctx_fini(&c);
}

static void test_tx_errors_counted(void **state)
{
	static uint8_t frame[100];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 100};
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_DROPPED));
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_errors"), 1);
	/* A frame of three slots, every slot answered with an error: one frame, one error. */
	static uint8_t big[9000];
	struct pvnet_pkt three = {.data = big, .len = sizeof(big)};

	assert_int_equal(pvnet_send(c.vif, 0, &three, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_ERROR));
	assert_int_equal(f.slots, 3);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_errors"), 2);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * A GSO frame takes two slots (its extra after the first): with one slot
 * left it waits, whether copied or zero-copy, and the requests already on
 * the ring are not overwritten.
 */
static void test_tx_gso_needs_room_for_its_extra(void **state)
{
	static uint8_t frames[64][60], gso[1000];
	static struct be_frame f;
	struct pvnet_pkt pkts[64], g = {.data = gso,
					.len = sizeof(gso),
					.flags = PVNET_PKT_CSUM_BLANK,
					.gso_type = PVNET_GSO_TCPV4,
					.gso_size = 500};
	struct pvnet_buf *b;
	unsigned int sent = 0, got = 0;
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	while (sent < PVNET_RING_SIZE - 1) {
		unsigned int n = PVNET_RING_SIZE - 1 - sent < 64 ? PVNET_RING_SIZE - 1 - sent : 64;

		for (unsigned int i = 0; i < n; i++)
			frames[i][0] = (uint8_t)(sent + i);
		assert_int_equal(pvnet_send(c.vif, 0, pkts, n), (int)n);
		sent += n;
	}
	assert_int_equal(pvnet_send(c.vif, 0, &g, 1), 0);
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, &b, 1), 1);
	b->len = sizeof(gso);
	b->flags = PVNET_PKT_CSUM_BLANK;
	b->gso_type = PVNET_GSO_TCPV4;
	b->gso_size = 500;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, &b, 1), 0);
	pvnet_tx_free(c.vif, 0, &b, 1);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY)) {
		assert_int_equal(f.len, 60);
		assert_int_equal(f.slots, 1);
		assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_NONE);
		assert_int_equal(f.data[0], (uint8_t)got);
		got++;
	}
	assert_int_equal(got, PVNET_RING_SIZE - 1);
	be_tx_push(&c.be);
	/* Room again: the frame goes, extra and all. */
	assert_int_equal(pvnet_send(c.vif, 0, &g, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, sizeof(gso));
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	be_tx_push(&c.be);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/* A multicast filter request is two slots too (a first slot and its MCAST_ADD extra). */
	static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};

	ctx_init_opts(&c, PVNET_RING_SIZE, 64, 1, 0, true);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	for (sent = 0; sent < PVNET_RING_SIZE - 1;) {
		unsigned int n = PVNET_RING_SIZE - 1 - sent < 64 ? PVNET_RING_SIZE - 1 - sent : 64;

		assert_int_equal(pvnet_send(c.vif, 0, pkts, n), (int)n);
		sent += n;
	}
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 0);
	for (got = 0; be_tx_frame(&c.be, &f, NETIF_RSP_OKAY); got++)
		assert_int_equal(f.len, 60);
	assert_int_equal(got, PVNET_RING_SIZE - 1);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 1);
	/* Answered with a status other than OKAY: counted as refused, whichever it is. */
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_DROPPED));
	assert_int_equal(f.len, 0);
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_MCAST_ADD);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, pkts, 1), 1);
	assert_int_equal(queue_stat(c.vif, "mcast_requests"), 1);
	assert_int_equal(queue_stat(c.vif, "mcast_refused"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * A send that gets through again ends the stop: TX completions nobody
 * waits for are then no work, or a receive-only wait would return at once
 * for ever.
 */
static void test_tx_stop_ends(void **state)
{
	static uint8_t frame[60];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 60};
	struct ctx c;

	ctx_init(&c, 32, 64);
	for (int i = 0; i < 32; i++)
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 0);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	be_tx_push(&c.be);
	/* Stopped, completions waiting: that is work. */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	/* Not stopped: the completion waits for the next send, nobody wakes for it. */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 50, 0), 0);
	ctx_fini(&c);
}

/*
 * The TX counters count exactly: frames and bytes queued by either send
 * call, and notifications only when the backend's req_event asked for one.
 */
static void test_tx_counters_exact(void **state)
{
	static uint8_t small[100], big[9000];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = small, .len = sizeof(small)};
	struct pvnet_buf *b[2];
	struct ctx c;

	ctx_init(&c, 32, 64);
	/* SHARED_RING_INIT's req_event = 1: the first request notifies, the second not. */
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_notify"), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_notify"), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be); /* req_event = 3 */
	pkt = (struct pvnet_pkt){.data = big, .len = sizeof(big)};
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_notify"), 2);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.slots, 3);
	be_tx_push(&c.be);
	/* zero copy: a frame of two buffers */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 2), 2);
	b[0]->len = 1000;
	b[1]->len = 500;
	b[0]->next = b[1];
	assert_int_equal(pvnet_tx_submit(c.vif, 0, b, 1), 1);
	assert_int_equal(queue_stat(c.vif, "tx_notify"), 3);
	assert_int_equal(queue_stat(c.vif, "tx_packets"), 4);
	assert_int_equal(queue_stat(c.vif, "tx_bytes"), 2 * sizeof(small) + sizeof(big) + 1500);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 1500);
	be_tx_push(&c.be);
	assert_int_equal(queue_stat(c.vif, "tx_errors"), 0);
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 0);
	ctx_fini(&c);
}

/*
 * pvnet_tx_alloc() hands buffers out fresh (data = page, len 0, next NULL,
 * no offload asked for), whatever the application left in them last time:
 * a frame built with only data and len goes out with no checksum flag and
 * no GSO extra.
 */
static void test_tx_alloc_fields_reset(void **state)
{
	static struct be_frame f;
	struct pvnet_buf *b[2];
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 2), 2);
	for (int i = 0; i < 2; i++) {
		b[i]->data = (char *)b[i]->page + 100;
		b[i]->len = 3000;
		b[i]->flags = PVNET_PKT_CSUM_BLANK;
		b[i]->gso_type = PVNET_GSO_TCPV4;
		b[i]->gso_size = 1000;
	}
	b[0]->next = b[1];
	pvnet_tx_free(c.vif, 0, b, 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 2), 2);
	for (int i = 0; i < 2; i++) {
		assert_ptr_equal(b[i]->data, b[i]->page);
		assert_int_equal(b[i]->len, 0);
		assert_null(b[i]->next);
		assert_int_equal(b[i]->flags, 0);
		assert_int_equal(b[i]->gso_type, PVNET_GSO_NONE);
		assert_int_equal(b[i]->gso_size, 0);
	}
	fill(b[0]->data, 200, 17);
	b[0]->len = 200;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, b, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 200);
	assert_int_equal(f.slots, 1);
	assert_int_equal(f.flags, 0);
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_NONE);
	be_tx_push(&c.be);
	pvnet_tx_free(c.vif, 0, b + 1, 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * A send stopped with a single slot in flight arms TX completions for that
 * very slot (rsp_event = rsp_cons + 1): its completion notifies.
 */
static void test_tx_stop_one_in_flight(void **state)
{
	static uint8_t frame[60];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = sizeof(frame)};
	struct pvnet_buf *held[PVNET_MAX_FRAGS];
	struct ctx c;

	ctx_init(&c, PVNET_MAX_FRAGS, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, held, PVNET_MAX_FRAGS - 1), PVNET_MAX_FRAGS - 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 0); /* no id left */
	assert_int_equal(queue_stat(c.vif, "tx_ring_full"), 1);
	assert_int_equal(c.be.tx.sring->rsp_event, c.be.tx.rsp_prod_pvt + 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	/* RING_PUSH_RESPONSES_AND_CHECK_NOTIFY's test: the completion crossed the event */
	assert_true((RING_IDX)(c.be.tx.rsp_prod_pvt - c.be.tx.sring->rsp_event) <
		    (RING_IDX)(c.be.tx.rsp_prod_pvt - (c.be.tx.rsp_prod_pvt - 1)));
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	pvnet_tx_free(c.vif, 0, held, PVNET_MAX_FRAGS - 1);
	ctx_fini(&c);
}

static void test_hostile_tx(void **state)
{
	static uint8_t frame[60], out[PVNET_MAX_FRAME];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 60}, rx;
	struct ctx c;

	/* A response for an id that is not in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31; /* never sent */
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/*
	 * Broken, then a reconnect that fails (the backend no longer
	 * answers): the vif is not connected, and has no reason to give.
	 */
	ctx_init_queues(&c, 32, 64, 1, 200);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	fb_stop(&c.fb);
	assert_int_equal(pvnet_vif_reconnect(c.vif), -ETIMEDOUT);
	assert_null(pvnet_vif_error(c.vif));
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -ENOTCONN);
	fb_start(&c.fb);
	ctx_fini(&c);

	/* An id past the TX buffers (tx_buffers 32: ids 0..31). */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 32;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/* Broken, then the backend closes: we answer Closed, and the vif keeps its -EIO and reason. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	fb_set_state(&c.fb, XenbusStateClosing);
	for (int i = 0; i < 100 && pvnet_vif_process(c.vif) != XenbusStateClosed; i++)
		poll(&(struct pollfd){.fd = pvnet_vif_control_fd(c.vif), .events = POLLIN}, 1, 50);
	assert_int_equal(pvnet_vif_state(c.vif), XenbusStateClosed);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/* A data slot answered NULL, as only an extra may be: its id would stay in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_NULL));
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "answered NULL");
	ctx_fini(&c);

	/* The same id answered twice. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	*RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt) =
	    *RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1);
	c.be.tx.rsp_prod_pvt++;
	c.be.tx.req_cons++;
	/* (the frontend pushed only one request: the second response is also beyond it) */
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "beyond");
	ctx_fini(&c);

	/* Two frames in flight, the first one's id answered for both: the second is not in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id =
	    RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 2)->id;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/*
	 * Broken on queue 0 while queue 1 is idle, its events armed: queue 1's
	 * fd is readable at once, so that a thread asleep on it wakes and
	 * learns, rather than at its timeout or never.
	 */
	ctx_init_queues(&c, 32, 64, 2, 0);
	assert_int_equal(pvnet_recv(c.vif, 1, &rx, 1, out, sizeof(out)), 0);
	assert_int_equal(h_queue_readable(c.vif, 1), 0);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	assert_int_equal(h_queue_readable(c.vif, 1), 1);
	assert_int_equal(pvnet_queue_wait(c.vif, 1, 0, -1), -EIO);
	ctx_fini(&c);

	/* rsp_prod far ahead of anything sent. */
	ctx_init(&c, 32, 64);
	c.be.tx.sring->rsp_prod = 1000;
	expect_broken(&c, pvnet_tx_alloc(c.vif, 0, (struct pvnet_buf *[1]){0}, 1), "beyond");
	ctx_fini(&c);
}

/*
 * TX responses are checked against what is in flight, multicast requests
 * and extras included: one NULL per extra sent and no more, an id the
 * application holds (allocated, never submitted) or a multicast request's
 * id answered twice is not in flight.  A multicast answer gives its id back.
 */
static void test_hostile_tx_ids(void **state)
{
	static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x02};
	static uint8_t frame[3000];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 60}, gso = {.data = frame,
								  .len = sizeof(frame),
								  .flags = PVNET_PKT_CSUM_BLANK,
								  .gso_type = PVNET_GSO_TCPV4,
								  .gso_size = 1000};
	struct pvnet_buf *b[32];
	uint16_t mcast_id;
	struct ctx c;

	/* One extra sent, two NULLs: the second answers a data slot. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &gso, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_NULL));
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "answered NULL");
	ctx_fini(&c);

	/* An id the application holds, never submitted. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = (uint16_t)b[0]->id;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/* A multicast request answered: its id is free again... */
	ctx_init_opts(&c, 32, 64, 1, 0, true);
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, b, 32), 32);
	pvnet_tx_free(c.vif, 0, b, 32);
	assert_int_equal(queue_stat(c.vif, "mcast_requests"), 1);
	assert_int_equal(queue_stat(c.vif, "mcast_refused"), 0);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/* ... and not in flight any more: answered again (for another frame), the vif breaks. */
	ctx_init_opts(&c, 32, 64, 1, 0, true);
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 1);
	mcast_id = RING_GET_REQUEST(&c.be.tx, 0)->id;
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	/* reaped in ring order: the frame's id is freed last and taken first */
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_not_equal(RING_GET_REQUEST(&c.be.tx, 3)->id, mcast_id);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = mcast_id;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);
}

/*
 * A vif broken, reconnected and broken again says so again: -EIO, with the
 * new reason.
 */
static void test_broken_again_after_reconnect(void **state)
{
	static uint8_t frame[60];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = sizeof(frame)};
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	assert_int_equal(pvnet_vif_reconnect(c.vif), 0);
	assert_null(pvnet_vif_error(c.vif));
	be_attach(&c, 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_NULL));
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "answered NULL");
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tx_sizes),
	    cmocka_unit_test(test_tx_ring_full_and_wrap),
	    cmocka_unit_test(test_tx_errors_counted),
	    cmocka_unit_test(test_tx_gso_needs_room_for_its_extra),
	    cmocka_unit_test(test_tx_stop_ends),
	    cmocka_unit_test(test_hostile_tx),
	    cmocka_unit_test(test_tx_counters_exact),
	    cmocka_unit_test(test_tx_alloc_fields_reset),
	    cmocka_unit_test(test_tx_stop_one_in_flight),
	    cmocka_unit_test(test_broken_again_after_reconnect),
	    cmocka_unit_test(test_hostile_tx_ids),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
