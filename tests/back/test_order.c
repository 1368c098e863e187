// SPDX-License-Identifier: MIT
// test_order.c - netback ordering: frames of one TX queue reach an RX queue in send order

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "back/internal.h"
#include "fake_front.h"

/*
 * Every path inside pvnetd that could overtake a frame is exercised at
 * once: four TX workers of A feed B's single RX queue; B posts its RX
 * buffers a few at a time, so frames wait for slots (rx_waits) and the
 * mapped ones are copied out after tx_hold_max_us (rx_held_copied), and the
 * RX queue's byte bound refuses some (drops, never retries).  Each frame
 * carries (source queue, sequence); B checks that every source's sequence
 * only grows.
 */

static const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};
static const uint8_t mac_b[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b};

#define WAIT_MS	 20000
#define NQ	 4u
#define PER_Q	 400u
#define HOLD_US	 200u /* copy-out after 200 us: most waiting frames take that path */
#define POST_MAX 6u   /* RX buffers B posts per round: the ring runs dry constantly */

static uint32_t frame_len(uint32_t seq)
{
	return 200 + (seq % 5) * 2000; /* 1 to 3 slots */
}

static void run(enum back_tx_mode mode)
{
	struct back_config cfg;
	struct ff_opts o = {.nq = NQ, .split = true, .sg = true, .rx_notify = true};
	struct ff_opts ob = {.nq = 1, .sg = true, .rx_notify = true};
	static uint8_t buf[65536], rbuf[65536];
	struct world w;
	struct ff a, b;
	struct back_vif *va, *vb;
	uint32_t next[NQ] = {0};
	int64_t last[NQ];
	unsigned int got = 0, ooo = 0, sent = 0;
	uint64_t end, quiet;
	struct hv_leak leak;
	struct hv_stats st;

	back_config_default(&cfg);
	cfg.max_queues = NQ;
	cfg.tx_hold_max_us = HOLD_US;
	assert_int_equal(world_create(&w, mode, &cfg), 0);
	assert_int_equal(ff_create(&a, &w, 0), 0);
	assert_int_equal(ff_create(&b, &w, 0), 0);
	assert_int_equal(back_vif_create(w.back, a.domid, 0, mac_a, &va), 0);
	assert_int_equal(back_vif_create(w.back, b.domid, 0, mac_b, &vb), 0);
	assert_int_equal(ff_connect(&a, &o), 0);
	assert_int_equal(ff_connect(&b, &ob), 0);
	assert_int_equal(back_vif_num_queues(va), NQ);
	for (unsigned int q = 0; q < NQ; q++)
		last[q] = -1;

	/* B announces its MAC so that A's frames are unicast to B only. */
	make_frame(buf, 60, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", mac_b, 0);
	assert_int_equal(ff_tx_frame(&b, 0, buf, 60, NULL), 0);
	ff_tx_push(&b, 0);

	end = test_now_ms() + WAIT_MS;
	quiet = test_now_ms() + 1000;
	while (test_now_ms() < end && (sent < NQ * PER_Q || test_now_ms() < quiet)) {
		struct ff_rxinfo info;
		int n;

		/* A: a few frames on every queue, round robin, each queue pushed */
		for (unsigned int q = 0; q < NQ; q++) {
			ff_tx_reap(&a, q);
			for (unsigned int k = 0; k < 8 && next[q] < PER_Q; k++) {
				uint32_t len = frame_len(next[q]);

				make_frame(buf, len, mac_b, mac_a, next[q]);
				memcpy(buf + 14, &q, 4);
				memcpy(buf + 18, &next[q], 4);
				if (ff_tx_frame(&a, q, buf, len, NULL) < 0)
					break;
				next[q]++;
				sent++;
			}
			ff_tx_push(&a, q);
		}
		/* B: take what arrived, post a few buffers only */
		while ((n = ff_rx_recv(&b, 0, rbuf, sizeof(rbuf), &info)) != -EAGAIN) {
			uint32_t q, seq;

			if (n < 22 || memcmp(rbuf + 6, mac_a, 6) != 0)
				continue;
			memcpy(&q, rbuf + 14, 4);
			memcpy(&seq, rbuf + 18, 4);
			assert_true(q < NQ);
			assert_int_equal((uint32_t)n, frame_len(seq));
			if ((int64_t)seq <= last[q])
				ooo++;
			else
				last[q] = seq;
			got++;
			quiet = test_now_ms() + 1000;
		}
		ff_rx_post(&b, 0, POST_MAX);
		loop_run_once(w.loop, 0);
		nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
	}
	fprintf(stderr,
		"# %s: sent %u, received %u, out of order %u, held copied %llu, waits %llu\n",
		mode == BACK_TX_MAP ? "map" : "copy", sent, got, ooo,
		(unsigned long long)back_vif_stat(vb, 0, "rx_held_copied"),
		(unsigned long long)back_vif_stat(vb, 0, "rx_waits"));
	assert_int_equal(sent, NQ * PER_Q);
	assert_true(got > 0);
	assert_int_equal(ooo, 0);
	assert_true(back_vif_stat(vb, 0, "rx_waits") > 0);
	if (mode == BACK_TX_MAP)
		assert_true(back_vif_stat(vb, 0, "rx_held_copied") > 0);

	back_vif_destroy(va);
	back_vif_destroy(vb);
	hv_stats(w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_destroy(&a, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	ff_destroy(&b, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	world_destroy(&w);
}

static void test_order_map(void **state)
{
	run(BACK_TX_MAP);
}

static void test_order_copy(void **state)
{
	run(BACK_TX_COPY);
}

/* An item queued after the worker read its clock is new, not 2^64 ns old (it was expired). */
static void test_age_after_now(void **state)
{
	struct back_mpsc_item it = {.u64 = 5000};

	assert_int_equal(back_rx_age(&it, 4000), 0);
	assert_int_equal(back_rx_age(&it, 5000), 0);
	assert_int_equal(back_rx_age(&it, 7500), 2500);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_age_after_now),
	    cmocka_unit_test(test_order_map),
	    cmocka_unit_test(test_order_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
