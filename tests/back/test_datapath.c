// SPDX-License-Identifier: MIT
// test_datapath.c - guest to guest through netback and the switch: delivery, limits, hostile guests

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/log_capture.h"
#include "../hv/hv_test.h"
#include "hv/hv_internal.h"
#include "fx.h"

static void basic(enum back_tx_mode mode)
{
	struct fx *x = fx_new(mode, NULL, NULL, NULL);
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < 300; i++)
		bytes += len_of(i, 60, 1514);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 300, 60, 1514, NULL, 0);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_packets"), 300);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 300);
	/* bytes are whole frames' bytes, at both ends; no slot was empty */
	assert_int_equal(back_vif_stat(x->va, 0, "tx_bytes"), bytes);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_bytes"), bytes);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_empty_slots"), 0);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 0);
	if (mode != BACK_TX_COPY)
		assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_sent"), 300);
	else
		assert_int_equal(back_vif_stat(x->va, 0, "tx_copied"), 300);
	/* Zero-copy counts are map mode's alone: a copied payload is neither kind. */
	if (mode == BACK_TX_COPY) {
		assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_sent"), 0);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_success"), 0);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_fail"), 0);
	} else {
		assert_int_equal(back_vif_stat(x->va, 0, "tx_copied"), 0);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_success") +
				     back_vif_stat(x->va, 0, "tx_zerocopy_fail"),
				 300);
	}
	/* and the other way round */
	transfer(x, &x->b, mac_b, &x->a, mac_a, 50, 60, 200, NULL, 7);
	fx_free(x);
}

static void test_basic_map(void **state)
{
	basic(BACK_TX_MAP);
}

static void test_basic_copy(void **state)
{
	basic(BACK_TX_COPY);
}

static void test_basic_persistent(void **state)
{
	basic(BACK_TX_PERSISTENT);
}

/*
 * The grant operations of one guest frame, exactly: the first 128 bytes
 * are grant-copied into the private header, except in map mode from a slot
 * that is mapped anyway for its payload (copied from the mapping, one
 * operation fewer); then one map (map mode) or one copy (copy mode) per
 * slot's payload, none for a slot the header took whole.
 */
static void grant_ops(enum back_tx_mode mode, uint32_t slot_max, uint32_t len, uint64_t copies,
		      uint64_t maps)
{
	struct fx *x = fx_new(mode, NULL, NULL, NULL);
	struct ff_txopt opt = {.slot_max = slot_max};
	uint64_t copy0 = back_vif_stat(x->va, 0, "grant_copy_ops");
	uint64_t map0 = back_vif_stat(x->va, 0, "grant_map_ops");

	transfer(x, &x->a, mac_a, &x->b, mac_b, 1, len, len, &opt, 0);
	assert_int_equal(back_vif_stat(x->va, 0, "grant_copy_ops") - copy0, copies);
	assert_int_equal(back_vif_stat(x->va, 0, "grant_map_ops") - map0, maps);
	fx_free(x);
}

static void test_tx_grant_ops(void **state)
{
	(void)state;
	/* three slots of 1000: the header is the first slot's start */
	grant_ops(BACK_TX_COPY, 1000, 3000, 1 + 3, 0);
	grant_ops(BACK_TX_MAP, 1000, 3000, 0, 3);
	/* three slots of 100: the header takes the first whole and 28 bytes of the second */
	grant_ops(BACK_TX_COPY, 100, 300, 2 + 2, 0);
	grant_ops(BACK_TX_MAP, 100, 300, 1, 2);
}

static void big(enum back_tx_mode mode)
{
	struct fx *x = fx_new(mode, NULL, NULL, NULL);
	struct ff_txopt multi = {.slot_max = 4096};
	struct ff_txopt small = {.slot_max = 1000, .flags = NETTXF_data_validated};
	struct ff_txopt gso4 = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
				.gso_size = 1448,
				.flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct ff_txopt gso6 = {
	    .gso_type = XEN_NETIF_GSO_TYPE_TCPV6, .gso_size = 1440, .flags = NETTXF_csum_blank};

	transfer(x, &x->a, mac_a, &x->b, mac_b, 60, 1515, 65535, &multi, 0);
	/* 18 slots of 1000: 18000 bytes max without being dropped */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 60, 60, 18000, &small, 100);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 40, 60000, 65535, &gso4, 200);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 40, 2000, 30000, &gso6, 300);
	/* headers split across many tiny slots (XSA-423/432 shape): up to 18 x 14 bytes */
	struct ff_txopt tiny = {.slot_max = 14};

	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 252, &tiny, 500);
	/* exactly the largest frame */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 3, 65535, 65535, &gso4, 400);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	fx_free(x);
}

static void test_big_map(void **state)
{
	big(BACK_TX_MAP);
}

static void test_big_copy(void **state)
{
	big(BACK_TX_COPY);
}

static void test_big_persistent(void **state)
{
	big(BACK_TX_PERSISTENT);
}

/* More than 256 * 10 packets: both rings wrap many times. */
static void wrap(enum back_tx_mode mode)
{
	struct fx *x = fx_new(mode, NULL, NULL, NULL);
	struct ff_txopt two = {.slot_max = 1024};

	transfer(x, &x->a, mac_a, &x->b, mac_b, 3000, 60, 1514, NULL, 0);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 600, 900, 3000, &two, 5000);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 3600);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_packets"), 3600);
	fx_free(x);
}

static void test_wrap_map(void **state)
{
	wrap(BACK_TX_MAP);
}

static void test_wrap_copy(void **state)
{
	wrap(BACK_TX_COPY);
}

static void test_wrap_persistent(void **state)
{
	wrap(BACK_TX_PERSISTENT);
}

/*
 * B posts for all it can and receives @count frames from @src, frame i
 * @len + i * @step bytes with make_frame()'s seed i, each checked byte for
 * byte; returns how many came within WAIT_MS.
 */
static unsigned int recv_in_order(struct fx *x, const uint8_t *src, unsigned int count,
				  uint32_t len, uint32_t step)
{
	uint64_t end = test_now_ms() + WAIT_MS;
	struct ff_rxinfo info;
	unsigned int got = 0;

	ff_rx_post(&x->b, 0, FF_RING);
	while (got < count && test_now_ms() < end) {
		int n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info);

		if (n == -EAGAIN) {
			loop_run_once(x->w.loop, 1);
			continue;
		}
		assert_int_equal(n, len + got * step);
		make_frame(x->buf, (uint32_t)n, mac_b, src, got);
		assert_memory_equal(x->buf, x->rbuf, (size_t)n);
		got++;
	}
	return got;
}

/* B posts late: @n frames of @len bytes wait, the sender's pages are released meanwhile. */
static void slow_receiver(unsigned int n, uint32_t len)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int slots = n * ((len + 4095) / 4096); /* each slot is answered */
	struct hv_stats st;

	send_only(x, &x->a, mac_a, mac_b, n, len, 0);
	/* held longer than tx_hold_max_us (20 ms): copied out, A answered */
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == slots, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, slots);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_held_copied"), n);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_fail"), n);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 6); /* only the three vifs' rings */
	/* now B posts: everything is delivered, in order, bit-exact */
	assert_int_equal(recv_in_order(x, mac_a, n, len, 0), n);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), n);
	/*
	 * B's buffers are posted before A sends, and the switch knows B's
	 * address (C no longer gets the frames flooded, to hold and copy out):
	 * frames that go straight into B's buffers complete without a copy-out,
	 * in the pending slots the held ones used, and count as zero-copy
	 * successes, never as failures.
	 */
	transfer(x, &x->b, mac_b, &x->a, mac_a, 1, 60, 60, NULL, 0);
	ff_rx_post(&x->b, 0, FF_RING);
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 0);
	assert_int_equal(recv_in_order(x, mac_a, 20, 1000, 0), 20);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == slots + 20, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_sent"), n + 20);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_success"), 20);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_fail"), n);
	fx_free(x);
}

static void test_slow_receiver(void **state)
{
	slow_receiver(20, 1000);
}

/* 720 KB held: the worker copies out 256 KiB per hold of the RX lock, round after round. */
static void test_slow_receiver_large(void **state)
{
	slow_receiver(24, 30000);
}

/*
 * The switch learns B's address from a frame B sends A, so that frames to
 * B are no longer flooded to C too; C takes its flooded copy of that frame
 * (which then completes).
 */
static void learn_b(struct fx *x)
{
	struct ff_rxinfo info;

	ff_rx_post(&x->c, 0, FF_RING);
	transfer(x, &x->b, mac_b, &x->a, mac_a, 1, 60, 60, NULL, 0);
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->c, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
}

/*
 * Copy mode's pool: 256 pages per queue, a frame goes on only while a
 * whole packet's worth (19 pages) is free.  B takes nothing and nothing is
 * copied out: 238 one-page frames go (the last leaves 18 pages), then the
 * polls stop, counted as stalls, and the rest wait until completions give
 * pages back, then go, in order.
 */
static void test_copy_pool_exhausted(void **state)
{
	struct back_config cfg;
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.tx_hold_max_us = 10000000; /* no copy-out: B's queue keeps A's pool pages */
	x = fx_new(BACK_TX_COPY, &cfg, NULL, NULL);
	learn_b(x);
	send_only(x, &x->a, mac_a, mac_b, 240, 200, 0);
	assert_true(WAIT_UNTIL(
	    &x->w, back_vif_stat(x->va, 0, "tx_stalls") >= 1 && answered(&x->a) == 238, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_copied"), 238);
	assert_int_equal(recv_in_order(x, mac_a, 240, 200, 0), 240);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 240, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 240);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	fx_free(x);
}

/*
 * A poll that runs out of pool pages after planning some packets is no
 * stall: B takes those as they are forwarded, they complete and give their
 * pages back, and the next poll takes the rest.  13 frames of 19 slots take
 * 247 pages, so the 14th waits for that next poll; no poll stalls.
 */
static void test_copy_pool_no_stall(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct ff_txopt opt = {.slot_max = 200};

	(void)state;
	learn_b(x);
	ff_rx_post(&x->b, 0, FF_RING);
	for (uint32_t i = 0; i < 14; i++) {
		make_frame(x->buf, 3800, mac_b, mac_a, i);
		assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 3800, i < 13 ? &opt : NULL), 0);
	}
	assert_int_equal(x->a.q[0].tx.req_prod_pvt, 13 * 19 + 1);
	ff_tx_push(&x->a, 0);
	assert_int_equal(recv_in_order(x, mac_a, 14, 3800, 0), 14);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 13 * 19 + 1, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 13 * 19 + 1);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_copied"), 14);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_stalls"), 0);
	fx_free(x);
}

/*
 * A whole batch is one of everything: 64 frames published at once are one
 * TX poll, one grant-copy call of A's, one xmit() call, and the forwarding
 * thread delivers every one of them itself (rx_direct) with one grant-copy
 * call of B's, none left to B's worker.
 */
static void test_direct_whole_batch(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	uint64_t batches_a, batches_b;

	(void)state;
	learn_b(x);
	ff_rx_post(&x->b, 0, FF_RING);
	batches_a = back_vif_stat(x->va, 0, "grant_batches");
	batches_b = back_vif_stat(x->vb, 0, "grant_batches");
	send_only(x, &x->a, mac_a, mac_b, BACK_BATCH, 100, 0);
	assert_int_equal(recv_in_order(x, mac_a, BACK_BATCH, 100, 0), BACK_BATCH);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), BACK_BATCH);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_direct"), BACK_BATCH);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_waits"), 0);
	assert_int_equal(back_vif_stat(x->va, 0, "grant_batches") - batches_a, 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "grant_batches") - batches_b, 1);
	fx_free(x);
}

/*
 * rx_waits counts the times a head frame began to wait for buffers, not
 * the looks at it: B, without feature-rx-notify, has its ring polled every
 * few milliseconds while its head frame waits, and that is one wait
 * however many polls find it still short.
 */
static void test_rx_waits_counted_once(void **state)
{
	static const struct ff_opts nonotify = {.nq = 1, .sg = true};
	struct ff_txopt multi = {.slot_max = 4096};
	struct back_config cfg;
	struct ff_rxinfo info;
	uint64_t wakeups0;
	struct fx *x;
	int n = -EAGAIN;

	(void)state;
	back_config_default(&cfg);
	cfg.rx_drain_timeout_nonotify_ms = 10000; /* the frame waits, it does not expire */
	x = fx_new(BACK_TX_COPY, &cfg, NULL, &nonotify);
	make_frame(x->buf, 20000, mac_b, mac_a, 9);
	assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 20000, &multi), 0);
	ff_tx_push(&x->a, 0);
	ff_rx_post(&x->b, 0, 2); /* the frame needs 5 */
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_waits") >= 1, WAIT_MS));
	wakeups0 = back_vif_stat(x->vb, 0, "wakeups");
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "wakeups") >= wakeups0 + 5, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_waits"), 1);
	ff_rx_post(&x->b, 0, 3);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
	    WAIT_MS));
	assert_int_equal(n, 20000);
	assert_memory_equal(x->buf, x->rbuf, 20000);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_waits"), 1);
	fx_free(x);
}

#define LENT 20

/*
 * B posts nothing while frames from a port other than a vif reach it: they
 * are copied out of the lender's buffers within port_hold_max_us (an
 * uplink has few, shared by every port), long before the drain timeout,
 * and B still gets every byte once it posts, although the lender has
 * reused its buffers meanwhile.
 */
static void test_port_frames_released(void **state)
{
	static const uint8_t mac_up[6] = {0x02, 0, 0, 0, 0x0f, 0x01};
	static uint8_t frames[LENT][1200];
	static struct sw_pkt pkts[LENT];
	struct back_config cfg;
	struct sw_pkt *v[LENT];
	struct sw_port *up;
	struct fx *x;

	back_config_default(&cfg);
	cfg.rx_drain_timeout_ms = 60000; /* only the copy-out can give the buffers back */
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	assert_int_equal(sw_port_add(x->w.sw, "lender", &fx_lender_ops, NULL, &up), 0);
	atomic_store(&fx_lent_done, 0);
	for (unsigned int i = 0; i < LENT; i++)
		v[i] = fx_lend(&pkts[i], frames[i], 60 + i * 57, mac_up, i);
	/* B's MAC unknown: flooded to A, B and C, none of which has posted a buffer */
	assert_int_equal(sw_forward(x->w.sw, up, v, LENT), LENT);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&fx_lent_done) == LENT, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_held_copied"), LENT);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_expired"), 0);
	memset(frames, 0xee, sizeof(frames)); /* the lender reuses its buffers */

	assert_int_equal(recv_in_order(x, mac_up, LENT, 60, 57), LENT);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), LENT);
	assert_int_equal(sw_port_del(x->w.sw, up), 0);
	fx_free(x);
}

/*
 * A vif's frames are held in its pages, not copied out, until
 * tx_hold_max_us (a receiver merely waiting for a CPU must not cost a
 * copy): with it at 10 s, A's frames wait for B, which posts 50 ms later,
 * long past port_hold_max_us, and complete as zero-copy successes.
 */
static void test_vif_frames_held_until_tx_hold(void **state)
{
	struct back_config cfg;
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.tx_hold_max_us = 10000000;
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	learn_b(x);
	send_only(x, &x->a, mac_a, mac_b, 5, 1000, 0);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->rxq_bytes) == 5 * 1000, WAIT_MS));
	(void)WAIT_UNTIL(&x->w, false, 50);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_held_copied"), 0);
	assert_int_equal(recv_in_order(x, mac_a, 5, 1000, 0), 5);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 5, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_held_copied"), 0);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_success"), 5);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_fail"), 0);
	fx_free(x);
}

/*
 * A vif's frame queued for B ahead of a lender's: the lender's are due
 * first (port_hold_max_us), and copying them out takes the vif's frame
 * before them too, so that B's hold pool gets its copies in queue order
 * and releases them in that order (copying the vif's frame later, at
 * tx_hold_max_us, and releasing it first aborted pvnetd).
 */
static void test_port_frames_behind_vif_frame(void **state)
{
	static const uint8_t mac_up[6] = {0x02, 0, 0, 0, 0x0f, 0x03};
	static uint8_t frames[3][1000];
	static struct sw_pkt pkts[3];
	struct back_config cfg;
	struct sw_pkt *v[3];
	struct sw_port *up;
	struct ff_rxinfo info;
	unsigned int got = 0;
	struct fx *x;
	int n;

	(void)state;
	back_config_default(&cfg);
	cfg.tx_hold_max_us = 50000; /* the vif's own bound: after the lender's */
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	assert_int_equal(sw_port_add(x->w.sw, "lender", &fx_lender_ops, NULL, &up), 0);
	atomic_store(&fx_lent_done, 0);
	send_only(x, &x->a, mac_a, mac_b, 1, 1000, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_zerocopy_sent") == 1, WAIT_MS));
	for (unsigned int i = 0; i < 3; i++)
		v[i] = fx_lend(&pkts[i], frames[i], 1000, mac_up, i);
	assert_int_equal(sw_forward(x->w.sw, up, v, 3), 3);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&fx_lent_done) == 3, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_zerocopy_fail"), 1);
	/* past the vif's own bound too, then B takes all four, in order */
	usleep(100000);
	ff_rx_post(&x->b, 0, FF_RING);
	uint64_t end = test_now_ms() + WAIT_MS;

	while (got < 4 && test_now_ms() < end) {
		n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info);
		if (n == -EAGAIN) {
			loop_run_once(x->w.loop, 1);
			continue;
		}
		assert_int_equal(n, 1000);
		if (got == 0)
			make_frame(x->buf, 1000, mac_b, mac_a, 0);
		else
			make_frame(x->buf, 1000, mac_b, mac_up, got - 1);
		assert_memory_equal(x->buf, x->rbuf, 1000);
		got++;
	}
	assert_int_equal(got, 4);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_held_copied"), 4);
	assert_int_equal(sw_port_del(x->w.sw, up), 0);
	fx_free(x);
}

/*
 * A batch kept for direct delivery to a guest with buffers for 4 frames
 * and a queue bound of 4 frames: 4 delivered, 4 queued, the rest dropped, each frame
 * counted once (rx_direct_full, in rx_dropped; not rx_queue_full, which
 * is what xmit refuses and the switch counts as the port's tx_dropped).
 */
#define DL_LEN 32768
static void test_direct_leftovers_counted_once(void **state)
{
	static const uint8_t mac_up[6] = {0x02, 0, 0, 0, 0x0f, 0x02};
	static uint8_t frames[LENT][DL_LEN];
	static struct sw_pkt pkts[LENT];
	struct back_config cfg;
	struct sw_pkt *v[LENT];
	struct sw_port *up;
	struct fx *x;
	uint16_t num;

	(void)state;
	back_config_default(&cfg);
	cfg.rx_queue_max_bytes = 4 * DL_LEN; /* the least allowed */
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	transfer(x, &x->b, mac_b, &x->c, mac_c, 1, 60, 60, NULL, 0); /* the switch learns B */
	assert_int_equal(sw_fdb_lookup(x->w.sw, mac_b, &num), 0);
	assert_int_equal(sw_port_add(x->w.sw, "lender", &fx_lender_ops, NULL, &up), 0);
	atomic_store(&fx_lent_done, 0);
	for (unsigned int i = 0; i < LENT; i++)
		v[i] = fx_lend(&pkts[i], frames[i], DL_LEN, mac_up, i);
	ff_rx_post(&x->b, 0, 4 * DL_LEN / 4096);
	assert_int_equal(sw_forward(x->w.sw, up, v, LENT), LENT);
	assert_int_equal(recv_in_order(x, mac_up, 8, DL_LEN, 0), 8);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&fx_lent_done) == LENT, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_direct_full"), LENT - 8);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), LENT - 8);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_queue_full"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 8);
	/* the switch: every frame taken by B's port, none refused */
	assert_int_equal(atomic_load(&x->vb->port->stats.tx_packets), LENT);
	assert_int_equal(atomic_load(&x->vb->port->stats.tx_dropped), 0);
	assert_int_equal(sw_port_del(x->w.sw, up), 0);
	fx_free(x);
}

/* Packets needing more slots than posted wait for buffers, then go. */
static void test_wait_for_slots(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct ff_txopt multi = {.slot_max = 4096};
	struct ff_rxinfo info;
	int n = -EAGAIN;

	make_frame(x->buf, 20000, mac_b, mac_a, 9);
	assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 20000, &multi), 0);
	ff_tx_push(&x->a, 0);
	ff_rx_post(&x->b, 0, 2); /* the frame needs 5 */
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_waits") >= 1, WAIT_MS));
	assert_int_equal(ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info), -EAGAIN);
	ff_rx_post(&x->b, 0, 3);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
	    WAIT_MS));
	assert_int_equal(n, 20000);
	assert_int_equal(info.slots, 5);
	assert_memory_equal(x->buf, x->rbuf, 20000);
	fx_free(x);
}

/*
 * Frames queued for B while it had no buffers go out with the next frame
 * forwarded to B once it has: the forwarding thread delivers the backlog,
 * then its own frame behind it, all counted rx_direct, and B's worker is
 * not woken (B posts without an event, once its worker sleeps, so only
 * the forwarding thread can find the buffers).  On a busy machine B's
 * worker may still be on its way to sleep and take the buffers itself
 * (correct too: then rx_direct counts only the new frame), so the test
 * tries up to ATTEMPTS times and asks for the forwarding thread's delivery
 * once; without it none can pass, since only the worker would deliver the
 * backlog.
 */
#define ATTEMPTS 5

static bool backlog_attempt(struct fx *x, unsigned int a)
{
	struct ff_rxinfo info;
	uint64_t direct0, wakeups0, waits0 = back_vif_stat(x->vb, 0, "rx_waits");
	uint32_t seed = 1000 * (a + 1);
	unsigned int got = 0;
	int n;

	send_only(x, &x->a, mac_a, mac_b, 5, 300, seed);
	assert_true(WAIT_UNTIL(&x->w,
			       atomic_load(&x->vb->q[0]->rxq_bytes) == 1500 &&
				   back_vif_stat(x->vb, 0, "rx_waits") > waits0,
			       WAIT_MS));
	/* Let B's worker get past its last look at the ring, into its sleep. */
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->sleeping), WAIT_MS));
	(void)WAIT_UNTIL(&x->w, false, 20);
	direct0 = back_vif_stat(x->vb, 0, "rx_direct");
	wakeups0 = back_vif_stat(x->vb, 0, "wakeups");
	assert_int_equal(ff_rx_post_quiet(&x->b, 0, 6), 6); /* one slot each: all six */
	send_only(x, &x->a, mac_a, mac_b, 1, 300, seed + 500);
	while (got < 6 &&
	       WAIT_UNTIL(&x->w,
			  (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
			  WAIT_MS)) {
		assert_int_equal(n, 300);
		/* in order: the five queued ones, then the new one */
		make_frame(x->buf, 300, mac_b, mac_a, got < 5 ? seed + got : seed + 500);
		assert_memory_equal(x->buf, x->rbuf, 300);
		got++;
	}
	assert_int_equal(got, 6);
	assert_int_equal(atomic_load(&x->vb->q[0]->rxq_bytes), 0);
	return back_vif_stat(x->vb, 0, "rx_direct") - direct0 == 6 &&
	       back_vif_stat(x->vb, 0, "wakeups") == wakeups0;
}

static void test_backlog_goes_direct(void **state)
{
	struct back_config cfg;
	struct ff_rxinfo info;
	bool direct = false;
	struct fx *x;

	back_config_default(&cfg);
	cfg.tx_hold_max_us = 10000000; /* no copy-out, so no timer of B's worker, meanwhile */
	cfg.poll_us = 0;	       /* an idle worker sleeps at once */
	x = fx_new(BACK_TX_COPY, &cfg, NULL, NULL);
	/* The switch learns B; its frame to A is flooded to C too, so both take it. */
	ff_rx_post(&x->a, 0, 1);
	ff_rx_post(&x->c, 0, 1);
	send_only(x, &x->b, mac_b, mac_a, 1, 60, 0);
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->a, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->c, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
	for (unsigned int a = 0; a < ATTEMPTS && !direct; a++)
		direct = backlog_attempt(x, a);
	assert_true(direct);
	fx_free(x);
}

/* A receiver that never posts and lacks rx-notify: frames expire after 30 ms. */
static void test_receiver_never_posts(void **state)
{
	struct ff_opts ob = {.nq = 1, .sg = true}; /* no feature-rx-notify */
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &ob);
	struct hv_stats st;

	send_only(x, &x->a, mac_a, mac_b, 10, 500, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_expired") == 10, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 10);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 10, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 10);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 6);
	assert_int_equal(atomic_load(&x->vb->q[0]->rxq_bytes), 0);
	fx_free(x);
}

/*
 * A receiver without rx-notify that posts nothing, sent a frame every 20
 * ms for 600 ms: its worker polls it, but backs off while it takes nothing
 * (it woke 1000 times a second); frames that arrive still wake it, and
 * once it posts buffers the frames queued reach it.
 */
static void test_nonotify_poll_backs_off(void **state)
{
	struct ff_opts ob = {.nq = 1, .sg = true}; /* no feature-rx-notify */
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &ob);
	struct ff_rxinfo info;
	uint64_t w0, t0, ms, wakes;

	(void)state;
	w0 = back_vif_stat(x->vb, 0, "wakeups");
	t0 = test_now_ms();
	for (uint32_t i = 0; i < 30; i++) {
		uint64_t end;

		send_only(x, &x->a, mac_a, mac_b, 1, 1000, i);
		end = test_now_ms() + 20;
		while (test_now_ms() < end)
			loop_run_once(x->w.loop, 1);
	}
	ms = test_now_ms() - t0;
	wakes = back_vif_stat(x->vb, 0, "wakeups") - w0;
	print_message("receiver without rx-notify, posting nothing: %llu wake-ups in %llu ms\n",
		      (unsigned long long)wakes, (unsigned long long)ms);
	/* At 1 ms it would be one a millisecond; a third of that is a generous bound. */
	assert_true(wakes < ms / 3);
	/* Posting (without a kick) is still seen: the last frame, not yet expired, arrives. */
	send_only(x, &x->a, mac_a, mac_b, 1, 1000, 99);
	ff_rx_post(&x->b, 0, FF_RING);
	assert_true(
	    WAIT_UNTIL(&x->w, ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info) > 0, WAIT_MS));
	fx_free(x);
}

/* The RX queue is bounded in bytes: a flood beyond it is refused and counted. */
/* Frames for @vif its queue had no room for: refused by xmit, or left over from a direct delivery. */
static uint64_t refused(struct back_vif *vif)
{
	return back_vif_stat(vif, 0, "rx_queue_full") + back_vif_stat(vif, 0, "rx_direct_full");
}

static void test_rx_queue_bound(void **state)
{
	struct back_config cfg;
	struct ff_txopt multi = {.slot_max = 4096};
	struct fx *x;
	unsigned int i;

	back_config_default(&cfg);
	cfg.rx_queue_max_bytes = 2 * 65536;
	x = fx_new(BACK_TX_COPY, &cfg, NULL, NULL);
	for (i = 0; i < 6; i++) {
		make_frame(x->buf, 60000, mac_b, mac_a, i);
		assert_true(
		    WAIT_UNTIL(&x->w, (answered(&x->a), ff_tx_free(&x->a, 0) >= 20), WAIT_MS));
		assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 60000, &multi), 0);
		ff_tx_push(&x->a, 0);
	}
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 6 * 15, WAIT_MS));
	/* copy mode answers before forwarding: wait for the switch to be done */
	assert_true(WAIT_UNTIL(&x->w, refused(x->vb) >= 4, WAIT_MS));
	assert_int_equal(refused(x->vb), 4); /* two of 60000 bytes fit */
	assert_true(atomic_load(&x->vb->q[0]->rxq_bytes) <= cfg.rx_queue_max_bytes);
	fx_free(x);
}

/*
 * A queue that refuses a frame refuses every later one of the same xmit()
 * call (the switch takes "the first k"), and counts them all as
 * rx_queue_full: B, with no buffers and room for ten frames of 13000
 * bytes (the smallest bound, 128 KiB), holds five; of a batch of twenty
 * more five are taken, fifteen refused.  B then gets the ten, in order.
 */
static void test_rx_queue_full_counts_the_rest(void **state)
{
	struct back_config cfg;
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.rx_queue_max_bytes = 2 * 65536;
	x = fx_new(BACK_TX_COPY, &cfg, NULL, NULL);
	learn_b(x);
	send_only(x, &x->a, mac_a, mac_b, 5, 13000, 0);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->rxq_bytes) == 5 * 13000, WAIT_MS));
	send_only(x, &x->a, mac_a, mac_b, 20, 13000, 5);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_queue_full") >= 15, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_queue_full"), 15);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_direct_full"), 0);
	assert_int_equal(recv_in_order(x, mac_a, 10, 13000, 0), 10);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 10);
	fx_free(x);
}

static void expect_vif_fatal(struct fx *x, struct back_vif *vif, const char *needle)
{
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(vif) == XenbusStateClosing, WAIT_MS));
	assert_non_null(back_vif_error(vif));
	if (!strstr(back_vif_error(vif), needle))
		fail_msg("reason '%s' lacks '%s'", back_vif_error(vif), needle);
	/* the others carry on */
	transfer(x, &x->c, mac_c, &x->b, mac_b, 50, 60, 1514, NULL, 1000);
}

static void test_hostile_prod_far_ahead(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];

	transfer(x, &x->a, mac_a, &x->b, mac_b, 10, 60, 100, NULL, 0);
	__atomic_store_n(&q->tx.sring->req_prod, q->tx.req_prod_pvt + 1000, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->a.domid, q->port_tx);
	expect_vif_fatal(x, x->va, "more than a ring ahead");
	assert_int_equal(back_vif_stat(x->va, 0, "fatal"), 1);
	fx_free(x);
}

/*
 * In map mode requests are consumed before they are answered: while A's
 * frames wait in B's queue, a req_prod moved back between A's responses
 * and req_cons passed the "more than a ring ahead" check and made
 * prod - req_cons wrap, and the snapshot loop wrote past its 256 entries.
 * Now it is fatal for A alone.
 */
static void test_hostile_prod_behind_cons(void **state)
{
	struct back_config cfg;
	struct fx *x;
	struct ff_queue *q;

	back_config_default(&cfg);
	/* B posts nothing: A's frames stay mapped for a second, then B copies them out. */
	cfg.tx_hold_max_us = 1000000;
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	q = &x->a.q[0];
	send_only(x, &x->a, mac_a, mac_b, 5, 300, 0);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->rxq_bytes) == 1500, WAIT_MS));
	assert_int_equal(answered(&x->a), 0);
	__atomic_store_n(&q->tx.sring->req_prod, q->tx.req_prod_pvt - 1, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->a.domid, q->port_tx);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->va) == XenbusStateClosing, WAIT_MS));
	assert_non_null(strstr(back_vif_error(x->va), "went back behind req_cons"));
	assert_int_equal(back_vif_stat(x->va, 0, "fatal"), 1);
	fx_free(x);
}

/*
 * rsp_prod is on a page the guest writes.  A guest that wrote there the
 * index netback was about to publish made netback skip that publication
 * and its notification (the old index was read back from the page, as
 * Xen's RING_PUSH_RESPONSES_AND_CHECK_NOTIFY does); now netback decides
 * from what it last published itself: each side still gets the
 * notification it asked for.
 */
static void test_hostile_rsp_prod_ahead(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct ff_queue *qa = &x->a.q[0], *qb = &x->b.q[0];
	uint64_t na, nb;
	RING_IDX ta, rb;

	transfer(x, &x->a, mac_a, &x->b, mac_b, 10, 60, 100, NULL, 0);
	assert_int_equal(answered(&x->a), 10);
	ff_rx_post(&x->b, 0, 1);
	na = back_vif_stat(x->va, 0, "notifications");
	nb = back_vif_stat(x->vb, 0, "notifications");
	ta = __atomic_load_n(&qa->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	rb = __atomic_load_n(&qb->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	/* Each asks to hear of its next response, and writes its index in advance. */
	__atomic_store_n(&qa->tx.sring->rsp_event, ta + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&qa->tx.sring->rsp_prod, ta + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&qb->rx.sring->rsp_event, rb + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&qb->rx.sring->rsp_prod, rb + 1, __ATOMIC_SEQ_CST);

	send_only(x, &x->a, mac_a, mac_b, 1, 100, 10);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "notifications") == na + 1, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "notifications") == nb + 1, WAIT_MS));
	assert_int_equal(answered(&x->a), 11);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 11);
	assert_int_equal(back_vif_stat(x->va, 0, "fatal"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "fatal"), 0);
	fx_free(x);
}

/* Two vifs broken at once while holding a third one's frames: none is pinned. */
static void test_broken_vifs_release_frames(void **state)
{
	struct back_config cfg;
	struct fx *x;
	struct hv_stats st;
	uint64_t t0;

	back_config_default(&cfg);
	cfg.tx_hold_max_us = 10000000; /* no copy-out during this test */
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	send_only(x, &x->c, mac_c, mac_b, 5, 300, 0); /* flooded: A and B hold them */
	assert_true(WAIT_UNTIL(&x->w,
			       atomic_load(&x->va->q[0]->rxq_bytes) == 1500 &&
				   atomic_load(&x->vb->q[0]->rxq_bytes) == 1500,
			       WAIT_MS));
	assert_int_equal(answered(&x->c), 0);
	t0 = test_now_ms();
	__atomic_store_n(&x->a.q[0].tx.sring->req_prod, 3000, __ATOMIC_SEQ_CST);
	__atomic_store_n(&x->b.q[0].tx.sring->req_prod, 3000, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->a.domid, x->a.q[0].port_tx);
	hv_evtchn_notify(x->w.hv, x->b.domid, x->b.q[0].port_tx);
	assert_true(WAIT_UNTIL(&x->w,
			       back_vif_state(x->va) == XenbusStateClosing &&
				   back_vif_state(x->vb) == XenbusStateClosing,
			       WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, answered(&x->c) == 5, WAIT_MS));
	assert_true(test_now_ms() - t0 < 4000); /* well before the hold bound */
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 2); /* C's rings only */
	fx_free(x);
}

static void test_hostile_rx_prod_far_ahead(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_queue *q = &x->b.q[0];

	__atomic_store_n(&q->rx.sring->req_prod, 5000, __ATOMIC_SEQ_CST);
	send_only(x, &x->a, mac_a, mac_b, 1, 100, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->vb) == XenbusStateClosing, WAIT_MS));
	assert_non_null(strstr(back_vif_error(x->vb), "rx: req_prod"));
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS));
	fx_free(x);
}

/* A chain of @more slots after a first of @first_own bytes, 10 bytes each. */
static void raw_chain(struct fx *x, unsigned int more)
{
	netif_tx_request_t r[32];
	struct ff_queue *q = &x->a.q[0];
	RING_IDX idx = q->tx.req_prod_pvt;

	make_frame(ff_tx_page(&x->a, 0, idx), 60, mac_b, mac_a, 0);
	r[0] = (netif_tx_request_t){.gref = q->tx_gref[idx & 255],
				    .offset = 0,
				    .flags = NETTXF_more_data,
				    .id = (uint16_t)(idx & 255),
				    .size = (uint16_t)(60 + 10 * more)};
	for (unsigned int k = 1; k <= more; k++)
		r[k] = (netif_tx_request_t){.gref = q->tx_gref[(idx + k) & 255],
					    .offset = 0,
					    .flags = k < more ? NETTXF_more_data : 0,
					    .id = (uint16_t)((idx + k) & 255),
					    .size = 10};
	ff_tx_raw(&x->a, 0, r, more + 1);
	ff_tx_push(&x->a, 0);
}

static void test_hostile_slots(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);

	raw_chain(x, 19); /* 20 slots: dropped, every slot answered with an error */
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 20, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 20);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_frag_overflow"), 1);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 1);
	raw_chain(x, 18); /* 19 slots: accepted */
	ff_rx_post(&x->b, 0, 4);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 39, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 19);
	{
		struct ff_rxinfo info;

		assert_int_equal(ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info), 240);
	}
	raw_chain(x, 21); /* 22 slots: fatal */
	expect_vif_fatal(x, x->va, "too many slots");
	fx_free(x);
}

/* One raw request list from A must end with A disabled for @needle. */
static void hostile_fatal(const netif_tx_request_t *r, unsigned int n, const char *needle)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);

	make_frame(ff_tx_page(&x->a, 0, 0), 100, mac_b, mac_a, 0);
	ff_tx_raw(&x->a, 0, r, n);
	ff_tx_push(&x->a, 0);
	expect_vif_fatal(x, x->va, needle);
	fx_free(x);
}

static void test_hostile_page_overflow(void **state)
{
	netif_tx_request_t r[2] = {
	    {.gref = 8, .offset = 4000, .flags = 0, .id = 0, .size = 200},
	};

	hostile_fatal(r, 1, "crosses its page");
	r[0] = (netif_tx_request_t){.gref = 8, .flags = NETTXF_more_data, .id = 0, .size = 300};
	r[1] = (netif_tx_request_t){.gref = 9, .offset = 4090, .id = 1, .size = 100};
	hostile_fatal(r, 2, "crosses its page");
}

static void test_hostile_endless_extras(void **state)
{
	netif_tx_request_t r[12];
	netif_extra_info_t ex = {.type = XEN_NETIF_EXTRA_TYPE_MCAST_ADD,
				 .flags = XEN_NETIF_EXTRA_FLAG_MORE};

	r[0] = (netif_tx_request_t){.gref = 8, .flags = NETTXF_extra_info, .id = 0, .size = 100};
	for (unsigned int i = 1; i < 12; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		memcpy(&r[i], &ex, sizeof(ex));
	}
	hostile_fatal(r, 12, "extra info chain too long");
	/* and a chain that runs off the end of what was published */
	hostile_fatal(r, 3, "missing extra info");
}

static void test_hostile_zero_size_slot(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];
	RING_IDX idx = q->tx.req_prod_pvt;
	netif_tx_request_t r[3];
	struct ff_rxinfo info;
	int n = -EAGAIN;

	make_frame(ff_tx_page(&x->a, 0, idx), 100, mac_b, mac_a, 3);
	make_frame(x->buf, 100, mac_b, mac_a, 3);
	memcpy(ff_tx_page(&x->a, 0, idx + 2), x->buf + 60, 40);
	r[0] = (netif_tx_request_t){
	    .gref = q->tx_gref[idx & 255], .flags = NETTXF_more_data, .id = 0, .size = 100};
	r[1] = (netif_tx_request_t){.gref = 999999, .flags = NETTXF_more_data, .id = 1, .size = 0};
	r[2] = (netif_tx_request_t){.gref = q->tx_gref[(idx + 2) & 255], .id = 2, .size = 40};
	ff_tx_raw(&x->a, 0, r, 3);
	ff_tx_push(&x->a, 0);
	ff_rx_post(&x->b, 0, 4);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
	    WAIT_MS));
	assert_int_equal(n, 100);
	assert_memory_equal(x->buf, x->rbuf, 100);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 3, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 3);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_empty_slots"), 1);
	fx_free(x);
}

/*
 * What a dropped packet's slots are answered with, request by request
 * (Linux's xenvif_tx_err()): NETIF_RSP_ERROR, never DROPPED, for the first
 * and every data slot, NETIF_RSP_NULL for each extra, one response per
 * request, whether the parser drops it (too big a later slot, a runt) or a
 * grant fails after it was accepted.
 */
static void test_hostile_drop_statuses(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];
	RING_IDX idx = q->tx.req_prod_pvt;
	netif_extra_info_t ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};
	netif_tx_request_t r[4];

	(void)state;
	for (unsigned int i = 0; i < FF_RING; i++)
		q->tx_status[i] = 99;
	ex.u.gso.size = 1448;
	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
	make_frame(ff_tx_page(&x->a, 0, idx), 100, mac_b, mac_a, 0);
	/* first slot, a GSO extra, a data slot larger than what remains of 100 */
	r[0] = (netif_tx_request_t){.gref = q->tx_gref[idx & 255],
				    .flags = NETTXF_extra_info | NETTXF_more_data,
				    .id = 10,
				    .size = 100};
	memset(&r[1], 0, sizeof(r[1]));
	memcpy(&r[1], &ex, sizeof(ex));
	r[2] = (netif_tx_request_t){.gref = q->tx_gref[(idx + 2) & 255], .id = 12, .size = 200};
	/* then a runt */
	r[3] = (netif_tx_request_t){.gref = q->tx_gref[(idx + 3) & 255], .id = 13, .size = 13};
	ff_tx_raw(&x->a, 0, r, 4);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), q->tx_rsp_count >= 4), WAIT_MS));
	assert_int_equal(q->tx_rsp_count, 4);
	assert_int_equal(q->tx_rsp_null, 1);
	assert_int_equal(q->tx_rsp_error, 3);
	assert_int_equal(q->tx_status[10], NETIF_RSP_ERROR);
	assert_int_equal(q->tx_status[12], NETIF_RSP_ERROR);
	assert_int_equal(q->tx_status[13], NETIF_RSP_ERROR);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_size"), 1);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_runt"), 1);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 2);

	/* accepted, then its grant fails: ERROR as well */
	r[0] = (netif_tx_request_t){.gref = 999999, .id = 20, .size = 60};
	ff_tx_raw(&x->a, 0, r, 1);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), q->tx_rsp_count >= 5), WAIT_MS));
	assert_int_equal(q->tx_status[20], NETIF_RSP_ERROR);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_gref"), 1);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	fx_free(x);
}

static void hostile_tx_gref(enum back_tx_mode mode)
{
	struct fx *x = fx_new(mode, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];
	grant_ref_t foreign, bad = 999999;
	netif_tx_request_t r[2];
	RING_IDX idx;

	/* a grant A gave to another domain (C), not to the backend */
	assert_int_equal(hv_gntshr_alloc_ref(&x->a.gs, &foreign), 0);
	assert_int_equal(hv_gntshr_grant_access(&x->a.gs, foreign, x->c.domid, 0, true), 0);

	idx = q->tx.req_prod_pvt;
	make_frame(ff_tx_page(&x->a, 0, idx), 60, mac_b, mac_a, 0);
	r[0] = (netif_tx_request_t){.gref = bad, .id = 1, .size = 60};
	r[1] = (netif_tx_request_t){.gref = foreign, .id = 2, .size = 300};
	ff_tx_raw(&x->a, 0, r, 2);
	/* a header-plus-payload packet whose payload slot is bad */
	idx = q->tx.req_prod_pvt;
	make_frame(ff_tx_page(&x->a, 0, idx), 200, mac_b, mac_a, 0);
	r[0] = (netif_tx_request_t){
	    .gref = q->tx_gref[idx & 255], .flags = NETTXF_more_data, .id = 3, .size = 1200};
	r[1] = (netif_tx_request_t){.gref = bad, .id = 4, .size = 1000};
	ff_tx_raw(&x->a, 0, r, 2);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 4, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 4);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_gref"), 3);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	/* the vif still works */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 1514, NULL, 0);
	fx_free(x);
}

static void test_hostile_tx_gref_map(void **state)
{
	hostile_tx_gref(BACK_TX_MAP);
}

static void test_hostile_tx_gref_copy(void **state)
{
	hostile_tx_gref(BACK_TX_COPY);
}

static void test_hostile_tx_gref_persistent(void **state)
{
	hostile_tx_gref(BACK_TX_PERSISTENT);
}

static void test_hostile_rx_gref(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_rxinfo info;
	grant_ref_t ro;
	int n = -EAGAIN;

	/* read-only grant of B's own buffer page, and a ref out of range */
	assert_int_equal(hv_gntshr_alloc_ref(&x->b.gs, &ro), 0);
	assert_int_equal(hv_gntshr_grant_access(&x->b.gs, ro, 0, x->b.q[0].rx_buf0, true), 0);
	ff_rx_post_gref(&x->b, 0, ro);
	ff_rx_post_gref(&x->b, 0, 999999);
	send_only(x, &x->a, mac_a, mac_b, 2, 300, 0);
	for (int i = 0; i < 2; i++) {
		assert_true(WAIT_UNTIL(
		    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
		    WAIT_MS));
		assert_int_equal(n, -EIO);
		/* the status of the slot whose copy failed is ERROR, exactly */
		assert_int_equal(
		    RING_GET_RESPONSE(&x->b.q[0].rx, x->b.q[0].rx.rsp_cons - 1)->status,
		    NETIF_RSP_ERROR);
	}
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_bad_gref"), 2);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 2);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 2, WAIT_MS));
	/* good buffers work again */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 1514, NULL, 0);
	fx_free(x);
}

/* @n one-slot packets from @f whose grant reference is out of range. */
static void send_bad_grefs(struct ff *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		netif_tx_request_t r = {.gref = 999999, .id = (uint16_t)i, .size = 60};

		ff_tx_raw(f, 0, &r, 1);
	}
	ff_tx_push(f, 0);
}

/*
 * Packet-level warnings are rate-limited per vif, not per pvnetd: A
 * sending bad packets at full speed uses up its own budget (10 lines), and
 * C's one bad packet after it is still logged.  Read back from stderr,
 * redirected to a file.
 */
static void test_warnings_limited_per_vif(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	char a_line[64], c_line[64], *text;
	struct log_capture cap;

	(void)state;
	snprintf(a_line, sizeof(a_line), "vif%u.0 q0: dropping packet", x->a.domid);
	snprintf(c_line, sizeof(c_line), "vif%u.0 q0: dropping packet", x->c.domid);
	log_capture_start(&cap);
	log_set_level(LOG_WARN);
	send_bad_grefs(&x->a, 40);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 40, WAIT_MS));
	send_bad_grefs(&x->c, 1);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->c) == 1, WAIT_MS));
	log_set_level(LOG_ERR);
	text = log_capture_end(&cap);

	assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_gref"), 40);
	assert_int_equal(back_vif_stat(x->vc, 0, "tx_bad_gref"), 1);
	assert_int_equal(log_count(text, a_line), 10);
	assert_int_equal(log_count(text, c_line), 1);
	free(text);
	fx_free(x);
}

/* The guest rewrites a request and the header after they were read. */
static void test_hostile_rewrite(void **state)
{
	struct back_config cfg;
	struct fx *x;
	struct ff_queue *q;

	/*
	 * Hold frames 300 ms before copying them out, so that the response
	 * (which shares the ring slot) is not written before the rewrite,
	 * even under a sanitizer.
	 */
	back_config_default(&cfg);
	cfg.tx_hold_max_us = 300000;
	x = fx_new(BACK_TX_MAP, &cfg, NULL, NULL);
	q = &x->a.q[0];
	RING_IDX idx = q->tx.req_prod_pvt;
	struct ff_rxinfo info;
	uint8_t orig[1000];
	int n = -EAGAIN;

	make_frame(orig, 1000, mac_b, mac_a, 42);
	assert_int_equal(ff_tx_frame(&x->a, 0, orig, 1000, NULL), 0);
	ff_tx_push(&x->a, 0);
	/* consumed: the worker asked for the next request */
	assert_true(WAIT_UNTIL(
	    &x->w, __atomic_load_n(&q->tx.sring->req_event, __ATOMIC_ACQUIRE) == idx + 2, WAIT_MS));
	*RING_GET_REQUEST(&q->tx, idx) = (netif_tx_request_t){
	    .gref = 999999, .offset = 4000, .flags = NETTXF_more_data, .id = 77, .size = 65535};
	memset(ff_tx_page(&x->a, 0, idx), 0xee, 64); /* inside the private header copy */
	ff_rx_post(&x->b, 0, 4);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
	    WAIT_MS));
	assert_int_equal(n, 1000);
	assert_memory_equal(x->rbuf, orig, 64);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_okay, 1);
	assert_int_equal(x->a.q[0].tx_status[idx & 255], NETIF_RSP_OKAY);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	fx_free(x);
}

struct storm {
	struct hv *hv;
	domid_t dom;
	evtchn_port_t port;
	_Atomic bool stop;
	unsigned long sent;
};

static void *storm_main(void *arg)
{
	struct storm *s = arg;

	while (!atomic_load(&s->stop) && s->sent < 5000000) {
		hv_evtchn_notify(s->hv, s->dom, s->port);
		s->sent++;
	}
	return NULL;
}

/* A guest notifying in a loop: pvnetd stays responsive, spurious wake-ups counted. */
static void test_event_storm(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct storm s = {.hv = x->w.hv, .dom = x->a.domid, .port = x->a.q[0].port_tx};
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, storm_main, &s), 0);
	transfer(x, &x->c, mac_c, &x->b, mac_b, 500, 60, 1514, NULL, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "evtchn_spurious") > 0, WAIT_MS));
	atomic_store(&s.stop, true);
	pthread_join(t, NULL);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	/* and A itself still works after the storm */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 1514, NULL, 0);
	fx_free(x);
}

/*
 * A frontend that sends a file over its event channel, as a kernel before
 * 6.16 lets it (hv_evtchn_test_rights): its vif is disabled with the
 * reason, the file is not released by the worker (it could make that
 * take as long as it likes), and the other vifs carry on.
 */
static void test_hostile_fds_over_evtchn(void **state)
{
	struct fx *x;
	int wait_fd, kick_fd, self_fd, pfd[2];
	char b;

	(void)state;
	hv_evtchn_test_rights = true;
	x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	hv_evtchn_test_rights = false;
	assert_int_equal(hv_evtchn_guest_fds(x->w.hv, x->a.domid, x->a.q[0].port_tx, &wait_fd,
					     &kick_fd, &self_fd),
			 0);
	/* the guest's own copies (hv's close later on its closing thread) */
	wait_fd = dup(wait_fd);
	kick_fd = dup(kick_fd);
	self_fd = dup(self_fd);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 1514, NULL, 0);
	assert_int_equal(pipe2(pfd, O_NONBLOCK), 0);
	assert_int_equal(send_fd(kick_fd, pfd[1]), 0);
	close(pfd[1]);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->va) == XenbusStateClosing, WAIT_MS));
	assert_non_null(strstr(back_vif_error(x->va), "sent file descriptors"));
	assert_int_equal(read(pfd[0], &b, 1), -1); /* EAGAIN: a writer is left, queued */
	assert_int_equal(errno, EAGAIN);
	transfer(x, &x->c, mac_c, &x->b, mac_b, 200, 60, 1514, NULL, 0);
	fx_free(x);
	close(wait_fd);
	close(kick_fd);
	close(self_fd);
	close(pfd[0]);
}

/* Closing a vif whose packets another vif still holds, and vice versa. */
static void test_disconnect_in_flight(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct hv_stats st;

	send_only(x, &x->a, mac_a, mac_b, 30, 800, 0);
	send_only(x, &x->b, mac_b, mac_a, 30, 800, 0);
	/* B goes away while holding A's frames and with its own in flight */
	ff_set_state(&x->b, XenbusStateClosing);
	assert_int_equal(back_vif_state(x->vb), XenbusStateClosing);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 30, WAIT_MS));
	ff_set_state(&x->a, XenbusStateClosing);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 2); /* C's rings only */
	fx_free(x);
}

static void test_multiqueue(void **state)
{
	struct back_config cfg;
	struct ff_opts o = {.nq = 4, .split = true, .sg = true, .rx_notify = true};
	struct fx *x;
	unsigned int got[4] = {0}, total = 0;
	uint64_t end;

	back_config_default(&cfg);
	cfg.max_queues = 4;
	x = fx_new(BACK_TX_MAP, &cfg, &o, &o);
	assert_int_equal(back_vif_num_queues(x->va), 4);
	/* each A queue sends 100 frames; B posts on every queue */
	for (unsigned int qi = 0; qi < 4; qi++) {
		for (unsigned int i = 0; i < 100; i++) {
			make_frame(x->buf, 200, mac_b, mac_a, qi * 1000 + i);
			assert_int_equal(ff_tx_frame(&x->a, qi, x->buf, 200, NULL), 0);
		}
		ff_tx_push(&x->a, qi);
		ff_rx_post(&x->b, qi, FF_RING);
	}
	end = test_now_ms() + WAIT_MS;
	while (total < 400 && test_now_ms() < end) {
		bool progress = false;

		for (unsigned int qi = 0; qi < 4; qi++) {
			struct ff_rxinfo info;
			int n;

			while ((n = ff_rx_recv(&x->b, qi, x->rbuf, sizeof(x->rbuf), &info)) !=
			       -EAGAIN) {
				assert_int_equal(n, 200);
				got[qi]++;
				total++;
				progress = true;
			}
			ff_rx_post(&x->b, qi, FF_RING);
		}
		if (!progress)
			loop_run_once(x->w.loop, 1);
	}
	assert_int_equal(total, 400);
	uint64_t tx = 0;

	for (unsigned int qi = 0; qi < 4; qi++)
		tx += back_vif_stat(x->va, qi, "tx_packets");
	assert_int_equal(tx, 400);
	fx_free(x);
}

/*
 * A sleeping worker woken by its frontend's event counts the wake-up (the
 * "wakeups" counter); before it slept, its rounds with work earned it a
 * poll (poll_us, 200 us by default), whose empty rounds are counted
 * ("poll_rounds": at least the first, which starts the poll).
 */
static void test_wakeup_counted(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	uint64_t w0;

	(void)state;
	transfer(x, &x->a, mac_a, &x->b, mac_b, 10, 60, 1514, NULL, 0);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->va->q[0]->sleeping), WAIT_MS));
	assert_true(back_vif_stat(x->va, 0, "poll_rounds") > 0);
	(void)WAIT_UNTIL(&x->w, false, 20);
	assert_true(atomic_load(&x->va->q[0]->sleeping));
	w0 = back_vif_stat(x->va, 0, "wakeups");
	transfer(x, &x->a, mac_a, &x->b, mac_b, 1, 60, 60, NULL, 100);
	assert_true(back_vif_stat(x->va, 0, "wakeups") > w0);
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic_map),
	    cmocka_unit_test(test_basic_copy),
	    cmocka_unit_test(test_basic_persistent),
	    cmocka_unit_test(test_tx_grant_ops),
	    cmocka_unit_test(test_copy_pool_exhausted),
	    cmocka_unit_test(test_copy_pool_no_stall),
	    cmocka_unit_test(test_direct_whole_batch),
	    cmocka_unit_test(test_rx_waits_counted_once),
	    cmocka_unit_test(test_big_map),
	    cmocka_unit_test(test_big_copy),
	    cmocka_unit_test(test_big_persistent),
	    cmocka_unit_test(test_wrap_map),
	    cmocka_unit_test(test_wrap_copy),
	    cmocka_unit_test(test_wrap_persistent),
	    cmocka_unit_test(test_slow_receiver),
	    cmocka_unit_test(test_slow_receiver_large),
	    cmocka_unit_test(test_port_frames_released),
	    cmocka_unit_test(test_vif_frames_held_until_tx_hold),
	    cmocka_unit_test(test_port_frames_behind_vif_frame),
	    cmocka_unit_test(test_direct_leftovers_counted_once),
	    cmocka_unit_test(test_wait_for_slots),
	    cmocka_unit_test(test_backlog_goes_direct),
	    cmocka_unit_test(test_receiver_never_posts),
	    cmocka_unit_test(test_nonotify_poll_backs_off),
	    cmocka_unit_test(test_rx_queue_bound),
	    cmocka_unit_test(test_rx_queue_full_counts_the_rest),
	    cmocka_unit_test(test_hostile_prod_far_ahead),
	    cmocka_unit_test(test_hostile_prod_behind_cons),
	    cmocka_unit_test(test_hostile_rsp_prod_ahead),
	    cmocka_unit_test(test_hostile_rx_prod_far_ahead),
	    cmocka_unit_test(test_broken_vifs_release_frames),
	    cmocka_unit_test(test_hostile_fds_over_evtchn),
	    cmocka_unit_test(test_hostile_slots),
	    cmocka_unit_test(test_hostile_zero_size_slot),
	    cmocka_unit_test(test_hostile_drop_statuses),
	    cmocka_unit_test(test_hostile_page_overflow),
	    cmocka_unit_test(test_hostile_endless_extras),
	    cmocka_unit_test(test_hostile_tx_gref_map),
	    cmocka_unit_test(test_hostile_tx_gref_copy),
	    cmocka_unit_test(test_hostile_tx_gref_persistent),
	    cmocka_unit_test(test_hostile_rx_gref),
	    cmocka_unit_test(test_warnings_limited_per_vif),
	    cmocka_unit_test(test_hostile_rewrite),
	    cmocka_unit_test(test_event_storm),
	    cmocka_unit_test(test_disconnect_in_flight),
	    cmocka_unit_test(test_multiqueue),
	    cmocka_unit_test(test_wakeup_counted),
	};

	log_set_level(LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
