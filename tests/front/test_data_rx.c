// SPDX-License-Identifier: MIT
/* test_data_rx.c - netfront's RX against a fake backend working on the real granted rings */
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

static void test_rx_sizes(void **state)
{
	static const uint32_t sizes[] = {14, 60, 1500, 4096, 4097, 9000, 65535};
	static uint8_t in[PVNET_MAX_FRAME], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(in, sizes[i], (uint32_t)i + 7);
		assert_int_equal(be_rx_frame(&c.be, in, sizes[i], NETRXF_data_validated, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, sizes[i]);
		assert_ptr_equal(pkt.data, out);
		assert_memory_equal(out, in, sizes[i]);
		assert_int_equal(pkt.flags, PVNET_PKT_DATA_VALIDATED);
	}
	/* GSO and HASH extras. */
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};

	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
	ex.u.gso.size = 1440;
	fill(in, 20000, 5);
	assert_int_equal(
	    be_rx_frame(&c.be, in, 20000, NETRXF_csum_blank | NETRXF_data_validated, &ex), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 20000);
	assert_memory_equal(out, in, 20000);
	assert_int_equal(pkt.gso_type, PVNET_GSO_TCPV6);
	assert_int_equal(pkt.gso_size, 1440);
	assert_int_equal(pkt.flags, PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED);
	/* A buffer too small for the next frame: -ENOBUFS, the frame stays. */
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, 999), -ENOBUFS);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, 1000), 1);
	assert_int_equal(queue_stat(c.vif, "rx_packets"), 9);
	ctx_fini(&c);
}

static void test_rx_burst_wrap_and_refill(void **state)
{
	static uint8_t in[1500], out[64 * 1500];
	struct pvnet_pkt pkts[16];
	uint32_t seq = 0, want = 0;
	struct ctx c;

	ctx_init(&c, 32, 40);
	/* 40 buffers posted; each round the backend fills 16 and we take them back. */
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 16; i++) {
			memcpy(in, &seq, sizeof(seq));
			seq++;
			assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
		}
		be_rx_push(&c.be);
		int n = pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out));

		assert_int_equal(n, 16);
		for (int i = 0; i < n; i++) {
			uint32_t v;

			memcpy(&v, pkts[i].data, sizeof(v));
			assert_int_equal(v, want++);
		}
		/* Every buffer is re-posted (40 outstanding >= 19: pushed). */
		assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 40);
	}
	/* Idle: the final check asked for the very next response. */
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	struct pollfd p = {.fd = pvnet_queue_fd(c.vif, 0), .events = POLLIN};

	assert_int_equal(poll(&p, 1, 0), 0);
	/*
	 * A kick with nothing behind it (none was due: no response crossed the
	 * event) wakes the application a few times at most, until an idle call
	 * reads it anyway, and is counted.
	 */
	uint64_t one = 1;
	unsigned int wakeups = 0;

	assert_int_equal(write(c.vif->queues[0].ev_rx.self_fd, &one, sizeof(one)), sizeof(one));
	while (poll(&p, 1, 0) == 1 && wakeups < 100) {
		assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 0);
		wakeups++;
	}
	assert_true(wakeups >= 1 && wakeups <= 8);
	assert_int_equal(queue_stat(c.vif, "rx_spurious"), 1);
	assert_int_equal(poll(&p, 1, 0), 0);
	/* Work that is already there when the application goes idle wakes it at once. */
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	front_queue_idle(&c.vif->queues[0], false);
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 1);
	ctx_fini(&c);
}

/*
 * netif.h lets a response's data start anywhere in its page (offset):
 * both receive calls take it from there, and the counters count what was
 * handed on.
 */
static void test_rx_data_at_offset(void **state)
{
	static uint8_t in[6000], out[PVNET_MAX_FRAME];
	struct pvnet_buf *rx[2];
	struct pvnet_pkt pkt;
	struct ctx c;

	ctx_init(&c, 32, 64);
	c.be.rx_offset = 256;
	fill(in, sizeof(in), 11);
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 100);
	assert_memory_equal(out, in, 100);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(queue_stat(c.vif, "rx_packets"), 2);
	assert_int_equal(queue_stat(c.vif, "rx_bytes"), 100 + sizeof(in));

	/* Zero-copy: each buffer's data points at its offset, the rest of its page is not data. */
	fill(in, sizeof(in), 12);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 2), 1);
	assert_ptr_equal(rx[0]->data, (char *)rx[0]->page + 256);
	assert_int_equal(rx[0]->len, PVNET_PAGE_SIZE - 256);
	assert_int_equal(rx[0]->pkt_len, sizeof(in));
	assert_memory_equal(rx[0]->data, in, PVNET_PAGE_SIZE - 256);
	assert_non_null(rx[0]->next);
	assert_ptr_equal(rx[0]->next->data, (char *)rx[0]->next->page + 256);
	assert_int_equal(rx[0]->next->len, sizeof(in) - (PVNET_PAGE_SIZE - 256));
	assert_memory_equal(rx[0]->next->data, in + PVNET_PAGE_SIZE - 256,
			    sizeof(in) - (PVNET_PAGE_SIZE - 256));
	assert_null(rx[0]->next->next);
	assert_int_equal(queue_stat(c.vif, "rx_packets"), 3);
	assert_int_equal(queue_stat(c.vif, "rx_bytes"), 100 + 2 * sizeof(in));
	pvnet_rx_release(c.vif, 0, rx, 1);
	ctx_fini(&c);
}

/*
 * A frame the frontend drops (too short to be Ethernet, a bad GSO extra)
 * gives every buffer it took back to the ring: after it, all of them are
 * posted again.
 */
static void test_rx_dropped_frames_give_buffers_back(void **state)
{
	static uint8_t in[9000], out[PVNET_MAX_FRAME];
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};
	struct pvnet_buf *rx[2];
	struct pvnet_pkt pkt;
	struct ctx c;

	ctx_init(&c, 32, 64);
	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
	ex.u.gso.size = 0;
	fill(in, sizeof(in), 13);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, &ex), 0); /* 3 data slots */
		assert_int_equal(be_rx_frame(&c.be, in, 10, 0, NULL), 0);	 /* a runt */
		assert_int_equal(be_rx_frame(&c.be, in, 60, 0, NULL), 0);
		be_rx_push(&c.be);
		if (round == 0) {
			assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
			assert_int_equal(pkt.len, 60);
		} else {
			assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 2), 1);
			assert_int_equal(rx[0]->pkt_len, 60);
			pvnet_rx_release(c.vif, 0, rx, 1);
		}
		assert_int_equal(queue_stat(c.vif, "rx_errors"), 2 * (round + 1));
		/* all 64 buffers are on the ring again */
		assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 64);
	}
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * The backend breaks the protocol after some good frames of a burst: the
 * call returns those frames (the application has them), and the next call
 * returns -EIO.
 */
static void test_rx_good_frames_before_a_violation(void **state)
{
	static uint8_t in[200], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkts[3];
	struct pvnet_buf *rx[3];
	struct ctx c;

	for (int zc = 0; zc < 2; zc++) {
		ctx_init(&c, 32, 64);
		fill(in, sizeof(in), 14);
		assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
		assert_int_equal(be_rx_frame(&c.be, in, 200, 0, NULL), 0);
		assert_int_equal(be_rx_frame(&c.be, in, 150, 0, NULL), 0);
		RING_GET_RESPONSE(&c.be.rx, 2)->id = 40; /* not slot 2's request */
		be_rx_push(&c.be);
		if (!zc) {
			assert_int_equal(pvnet_recv(c.vif, 0, pkts, 3, out, sizeof(out)), 2);
			assert_int_equal(pkts[0].len, 100);
			assert_int_equal(pkts[1].len, 200);
			assert_memory_equal(pkts[1].data, in, 200);
		} else {
			assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 3), 2);
			assert_int_equal(rx[0]->pkt_len, 100);
			assert_int_equal(rx[1]->pkt_len, 200);
			assert_memory_equal(rx[1]->data, in, 200);
			pvnet_rx_release(c.vif, 0, rx, 2);
		}
		assert_int_equal(queue_stat(c.vif, "rx_packets"), 2);
		expect_broken(&c, pvnet_recv(c.vif, 0, pkts, 3, out, sizeof(out)), "id");
		ctx_fini(&c);
	}
}

/*
 * A receive refused for want of room (-ENOBUFS) did find work: it does not
 * go idle, so an event the backend sent for that frame is not consumed and
 * counted as a spurious wakeup.
 */
static void test_rx_nobufs_is_not_idle(void **state)
{
	static uint8_t in[1000], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	uint64_t one = 1;
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	/* the notification netback sends, as pvnetd's event channel delivers it */
	assert_int_equal(write(c.vif->queues[0].ev_rx.self_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, 999), -ENOBUFS);
	assert_int_equal(h_queue_readable(c.vif, 0), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, sizeof(in));
	assert_int_equal(queue_stat(c.vif, "rx_spurious"), 0);
	ctx_fini(&c);
}

/*
 * What the backend says of a frame (checksum flags, GSO type and size, the
 * flow hash) reaches the application through either receive call.
 */
static void test_rx_offloads_both_calls(void **state)
{
	static uint8_t in[3000], out[PVNET_MAX_FRAME];
	struct netif_extra_info gso = {.type = XEN_NETIF_EXTRA_TYPE_GSO},
				hash = {.type = XEN_NETIF_EXTRA_TYPE_HASH};
	struct pvnet_buf *rx[1];
	struct pvnet_pkt pkt;
	struct ctx c;

	gso.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
	gso.u.gso.size = 1448;
	hash.u.hash.type = _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
	hash.u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
	memcpy(hash.u.hash.value, "\x21\x43\x65\x87", 4);
	ctx_init(&c, 32, 64);
	fill(in, sizeof(in), 15);
	for (int zc = 0; zc < 2; zc++) {
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in),
					     NETRXF_csum_blank | NETRXF_data_validated, &gso),
				 0);
		assert_int_equal(be_rx_frame(&c.be, in, 80, NETRXF_data_validated, &hash), 0);
		be_rx_push(&c.be);
		for (int f = 0; f < 2; f++) {
			uint16_t flags;
			uint8_t gso_type, hash_type;
			uint16_t gso_size;
			uint32_t h;

			if (!zc) {
				assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)),
						 1);
				flags = pkt.flags;
				gso_type = pkt.gso_type;
				gso_size = pkt.gso_size;
				hash_type = pkt.hash_type;
				h = pkt.hash;
			} else {
				assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 1), 1);
				flags = rx[0]->flags;
				gso_type = rx[0]->gso_type;
				gso_size = rx[0]->gso_size;
				hash_type = rx[0]->hash_type;
				h = rx[0]->hash;
				pvnet_rx_release(c.vif, 0, rx, 1);
			}
			if (f == 0) {
				assert_int_equal(flags,
						 PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED);
				assert_int_equal(gso_type, PVNET_GSO_TCPV4);
				assert_int_equal(gso_size, 1448);
			} else {
				assert_int_equal(flags, PVNET_PKT_DATA_VALIDATED | PVNET_PKT_HASH);
				assert_int_equal(gso_type, PVNET_GSO_NONE);
				assert_int_equal(hash_type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
				assert_int_equal(h, 0x87654321);
			}
		}
	}
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * Zero-copy receive: every frame's chain ends at its own last buffer, even
 * when that buffer last carried the head of a longer frame.
 */
static void test_rx_burst_chain_ends(void **state)
{
	static uint8_t in[6000];
	struct pvnet_buf *rx[1];
	struct ctx c;

	ctx_init(&c, 32, PVNET_MAX_FRAGS + 2);
	fill(in, sizeof(in), 16);
	for (unsigned int i = 0; i < 4 * (PVNET_MAX_FRAGS + 2); i++) {
		uint32_t len = i % 3 ? 100 : sizeof(in);

		assert_int_equal(be_rx_frame(&c.be, in, len, 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 1), 1);
		assert_int_equal(rx[0]->pkt_len, len);
		if (len == 100) {
			assert_null(rx[0]->next);
		} else {
			assert_non_null(rx[0]->next);
			assert_null(rx[0]->next->next);
		}
		pvnet_rx_release(c.vif, 0, rx, 1);
	}
	ctx_fini(&c);
}

/*
 * rx_notify counts the notifications RX refills sent: one at connect
 * (SHARED_RING_INIT's req_event = 1), none while the backend asks for
 * none, one once it sets req_event as netback's final check does.
 */
static void test_rx_notify_exact(void **state)
{
	static uint8_t in[100], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkts[32];
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(queue_stat(c.vif, "rx_notify"), 1);
	for (int i = 0; i < 32; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 32, out, sizeof(out)), 32);
	assert_int_equal(c.be.rx.sring->req_prod, 96);
	assert_int_equal(queue_stat(c.vif, "rx_notify"), 1);
	/* netback out of requests: its final check asks for the one after the last posted */
	c.be.rx.sring->req_event = c.be.rx.sring->req_prod + 1;
	for (int i = 0; i < 32; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 32, out, sizeof(out)), 32);
	assert_int_equal(c.be.rx.sring->req_prod, 128);
	assert_int_equal(queue_stat(c.vif, "rx_notify"), 2);
	ctx_fini(&c);
}

/*
 * The largest RX frame (19 slots: data at an offset leaves less than a
 * page per slot) comes as a chain of 19 buffers, and releasing it gives all
 * 19 back; a foreign pointer in a chain ends it, unread.
 */
static void test_rx_longest_chain_released(void **state)
{
	static uint8_t in[PVNET_MAX_FRAME];
	struct pvnet_buf *rx[1], *b;
	unsigned int n = 0;
	struct ctx c;

	ctx_init(&c, 32, 64);
	c.be.rx_offset = 512;
	fill(in, sizeof(in), 19);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 1), 1);
	for (b = rx[0]; b; b = b->next) {
		assert_memory_equal(b->data, in + n * (PVNET_PAGE_SIZE - 512), b->len);
		n++;
	}
	assert_int_equal(n, PVNET_MAX_FRAGS + 1);
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 64);

	/* a pointer that is none of ours after a buffer of ours */
	c.be.rx_offset = 0;
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 1), 1);
	rx[0]->next = (struct pvnet_buf *)(uintptr_t)0x10;
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 64);
	/* a queue that does not exist: nothing happens to queue 0's buffers */
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 1), 1);
	pvnet_rx_release(c.vif, 1, rx, 1);
	pvnet_tx_free(c.vif, 1, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 63);
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 64);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * RX refills are pushed once a largest frame's worth (19) of requests is
 * outstanding, not before; and a pool of a ring's worth fills the ring.
 */
static void test_rx_push_threshold(void **state)
{
	static uint8_t in[100];
	struct pvnet_buf *held[50];
	struct ctx c;

	ctx_init(&c, 32, 64);
	for (int i = 0; i < 50; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, held, 50), 50);
	assert_int_equal(c.be.rx.sring->req_prod, 64); /* 14 outstanding */
	pvnet_rx_release(c.vif, 0, held, 4);
	assert_int_equal(c.be.rx.sring->req_prod, 64); /* 18 would be: not pushed */
	pvnet_rx_release(c.vif, 0, held + 4, 1);
	assert_int_equal(c.be.rx.sring->req_prod, 69); /* 19: pushed, all five */
	pvnet_rx_release(c.vif, 0, held + 5, 45);
	assert_int_equal(c.be.rx.sring->req_prod, 114);
	ctx_fini(&c);

	ctx_init(&c, 32, PVNET_RING_SIZE);
	assert_int_equal(c.be.rx.sring->req_prod, PVNET_RING_SIZE);
	ctx_fini(&c);
}

static void test_hostile_rx(void **state)
{
	static uint8_t in[9000], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	struct ctx c;

	/* rsp_prod far ahead of what was posted. */
	ctx_init(&c, 32, 64);
	c.be.rx.sring->rsp_prod = c.be.rx.sring->req_prod + 1;
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
	ctx_fini(&c);

	/*
	 * Responses only to requests we pushed: two buffers given back with 14
	 * requests outstanding are posted but not pushed (fewer than a largest
	 * frame's 19), and a backend answering at their slots, which it can
	 * guess, is beyond them.
	 */
	ctx_init(&c, 32, 64);
	{
		struct pvnet_buf *held[50];
		netif_rx_response_t *r;

		for (int i = 0; i < 50; i++)
			assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_rx_burst(c.vif, 0, held, 50), 50);
		pvnet_rx_release(c.vif, 0, held, 2);
		assert_int_equal(c.be.rx.sring->req_prod, 64);
		for (int i = 0; i < 14; i++)
			assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
		r = RING_GET_RESPONSE(&c.be.rx, 64);
		*r = (netif_rx_response_t){.id = 64, .offset = 0, .flags = 0, .status = 100};
		c.be.rx.rsp_prod_pvt = 65;
		be_rx_push(&c.be);
		expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
		pvnet_rx_release(c.vif, 0, held + 2, 48);
	}
	ctx_fini(&c);

	/* rsp_prod put back behind what was already consumed (index arithmetic wraps). */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	c.be.rx.sring->rsp_prod = 1; /* one behind rsp_cons */
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
	ctx_fini(&c);

	/* Status past the page. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->offset = 3500;
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "past the end");
	ctx_fini(&c);

	/* A response id that is not the request's. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->id = 17;
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "id");
	ctx_fini(&c);

	/* Endless more_data over every posted buffer. */
	ctx_init(&c, 32, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(be_rx_frame(&c.be, in, 100, NETRXF_more_data, NULL), 0);
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "more_data");
	ctx_fini(&c);

	/* An extra of an invalid type. */
	ctx_init(&c, 32, 64);
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_MAX};

	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, &ex), 0);
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "type");
	ctx_fini(&c);

	/* A backend-dropped frame is only counted; the next one arrives. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->status = NETIF_RSP_ERROR;
	assert_int_equal(be_rx_frame(&c.be, in, 200, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 200);
	assert_int_equal(queue_stat(c.vif, "rx_errors"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/*
	 * Half a frame (more_data, and the rest not pushed): nothing to wait
	 * for until a response past it comes, with or without a poll window;
	 * and (@stop) still nothing after a send stops on the TX side (the
	 * backend answers nothing): arming the completions keeps the half
	 * frame no work, or a loop that sends and receives would spin.
	 */
	for (int stop = 0; stop < 2; stop++) {
		struct pvnet_pkt small = {.data = in, .len = 60};

		ctx_init(&c, 32, 64);
		assert_int_equal(be_rx_frame(&c.be, in, 100, NETRXF_more_data, NULL), 0);
		be_rx_push(&c.be);
		for (unsigned int i = 0; stop && i < 32; i++)
			assert_int_equal(pvnet_send(c.vif, 0, &small, 1), 1);
		for (unsigned int round = 0; round < 3; round++) {
			assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
			if (stop)
				assert_int_equal(pvnet_send(c.vif, 0, &small, 1), 0);
			assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
			assert_int_equal(pvnet_queue_wait(c.vif, 0, 50, 0), 0);
		}
		assert_int_equal(be_rx_frame(&c.be, in + 100, 200, 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 1000), 1);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, 300);
		assert_memory_equal(out, in, 300);
		/* Consumed: the queue is idle again, not "incomplete" for ever. */
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
		assert_null(pvnet_vif_error(c.vif));
		ctx_fini(&c);
	}

	/* A GSO extra with segment size 0 (Linux netfront drops it too): counted, not delivered. */
	ctx_init(&c, 32, 64);
	ex = (struct netif_extra_info){.type = XEN_NETIF_EXTRA_TYPE_GSO};
	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
	ex.u.gso.size = 0;
	fill(in, 3000, 9);
	assert_int_equal(be_rx_frame(&c.be, in, 3000, NETRXF_csum_blank, &ex), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 300, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 300);
	assert_int_equal(pkt.gso_type, PVNET_GSO_NONE);
	assert_int_equal(queue_stat(c.vif, "rx_errors"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rx_sizes),
	    cmocka_unit_test(test_rx_burst_wrap_and_refill),
	    cmocka_unit_test(test_hostile_rx),
	    cmocka_unit_test(test_rx_data_at_offset),
	    cmocka_unit_test(test_rx_dropped_frames_give_buffers_back),
	    cmocka_unit_test(test_rx_good_frames_before_a_violation),
	    cmocka_unit_test(test_rx_nobufs_is_not_idle),
	    cmocka_unit_test(test_rx_offloads_both_calls),
	    cmocka_unit_test(test_rx_burst_chain_ends),
	    cmocka_unit_test(test_rx_notify_exact),
	    cmocka_unit_test(test_rx_longest_chain_released),
	    cmocka_unit_test(test_rx_push_threshold),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
