// SPDX-License-Identifier: MIT
/* test_rate.c - the backend's "rate" key limits a guest's TX, as Linux netback's credit does */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fx.h"

/* Frames of this many bytes: the credit counts them exactly. */
#define LEN 1000u

/* Set (or with NULL remove) A's backend "rate" key, as the toolstack would. */
static void set_rate(struct fx *x, const char *rate)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/rate", x->va->be_path);
	if (rate)
		assert_int_equal(store_write(x->w.store, path, rate, strlen(rate)), 0);
	else
		assert_int_equal(store_rm(x->w.store, path), 0);
	loop_run_once(x->w.loop, 0); /* the watch fires on the loop thread */
}

/* Receive at B what has arrived; returns the running total. */
static unsigned int drain_b(struct fx *x, unsigned int got)
{
	struct ff_rxinfo info;

	ff_rx_post(&x->b, 0, FF_RING);
	while (ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info) > 0)
		got++;
	return got;
}

/* Run the loop and receive for @ms. */
static unsigned int receive_for(struct fx *x, unsigned int got, unsigned int ms)
{
	uint64_t end = test_now_ms() + ms;

	while (test_now_ms() < end) {
		got = drain_b(x, got);
		loop_run_once(x->w.loop, 1);
	}
	return drain_b(x, got);
}

/*
 * 100 000 bytes per 16 s: the first window takes exactly 100 frames of
 * 1000 bytes and no more; removing the key lets the rest go at once (the
 * window is longer than any wait here: A's worker, asleep until its
 * credit would come back, is woken by the change).
 */
static void test_rate_window(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;
	uint64_t t0;

	(void)state;
	set_rate(x, "100000,16000000");
	t0 = test_now_ms();
	send_only(x, &x->a, mac_a, mac_b, 150, LEN, 0);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) >= 100, WAIT_MS));
	got = receive_for(x, got, 300);
	if (test_now_ms() - t0 < 16000) { /* still the first window (always, unless very slow) */
		assert_int_equal(got, 100);
		assert_true(back_vif_stat(x->va, 0, "tx_rate_limited") >= 1);
	}
	set_rate(x, NULL);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 150, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	fx_free(x);
}

/*
 * 50 000 bytes per 200 ms and 200 frames: 50 at once, 50 more per window:
 * the last can arrive no sooner than three windows later, and all arrive.
 */
static void test_rate_refill(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	unsigned int got = 0;
	uint64_t t0, took;

	(void)state;
	set_rate(x, "50000,200000");
	t0 = test_now_ms();
	send_only(x, &x->a, mac_a, mac_b, 200, LEN, 7);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 200, WAIT_MS));
	took = test_now_ms() - t0;
	assert_true(took >= 3 * 200 - 20);
	assert_true(back_vif_stat(x->va, 0, "tx_rate_limited") >= 3);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 200);
	fx_free(x);
}

/*
 * 500 bytes per 100 ms and frames of 1000: each frame needs two windows'
 * credit.  Five in a row take at least eight windows; and after an idle
 * spell the window that begins with a frame still has only one window's
 * credit, so that frame waits for the next window, it does not get two.
 */
static void test_rate_small(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;
	uint64_t t0;

	(void)state;
	set_rate(x, "500,100000");
	t0 = test_now_ms();
	send_only(x, &x->a, mac_a, mac_b, 5, LEN, 3);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 5, WAIT_MS));
	assert_true(test_now_ms() - t0 >= 8 * 100 - 20);
	got = receive_for(x, got, 300); /* idle: no credit is saved beyond one window */
	t0 = test_now_ms();
	send_only(x, &x->a, mac_a, mac_b, 1, LEN, 9);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 6, WAIT_MS));
	assert_true(test_now_ms() - t0 >= 100 - 20);
	fx_free(x);
}

/*
 * A window's credit tops up what was left, but never past max(BYTES,
 * 128 KiB) (Linux's tx_add_credit()): 200 000 bytes per second and frames
 * of 55 000 bytes.  The first window takes 3 (35 000 left), the second
 * 3 more, not the 4 that the 235 000 left plus new would pay for.
 */
static void test_rate_burst_capped(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;
	uint64_t t0;

	(void)state;
	t0 = test_now_ms();
	set_rate(x, "200000,1000000");
	send_only(x, &x->a, mac_a, mac_b, 8, 55000, 0);
	assert_true(WAIT_UNTIL(
	    &x->w, (got = drain_b(x, got), back_vif_stat(x->va, 0, "tx_rate_limited") >= 2),
	    WAIT_MS));
	got = receive_for(x, got, 300);
	if (test_now_ms() - t0 < 2000) /* still the second window (always, unless very slow) */
		assert_int_equal(got, 6);
	set_rate(x, NULL);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 8, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	fx_free(x);
}

/*
 * A rate written again while credit is left keeps that credit (at most
 * the new BYTES), as Linux's xen_net_rate_changed(): setting the rate
 * again is no fresh window.  100 000 bytes per 5 s: 50 frames of 1000
 * go, the rate becomes 100 000 per 4 s, and 50 more go, not 100.
 */
static void test_rate_change_keeps_credit(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;
	uint64_t t0;

	(void)state;
	t0 = test_now_ms();
	set_rate(x, "100000,5000000");
	send_only(x, &x->a, mac_a, mac_b, 50, LEN, 0);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 50, WAIT_MS));
	set_rate(x, "100000,4000000");
	assert_true(
	    WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), ff_tx_free(&x->a, 0) >= 100), WAIT_MS));
	send_only(x, &x->a, mac_a, mac_b, 100, LEN, 50);
	got = receive_for(x, got, 300);
	if (test_now_ms() - t0 < 4000) /* still the first window (always, unless very slow) */
		assert_int_equal(got, 100);
	set_rate(x, NULL);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 150, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 0);
	fx_free(x);
}

/* A rate that is not BYTES,USEC limits nothing; a later good one does. */
static void test_rate_malformed(void **state)
{
	static const char *const bad[] = {"abc",     "1000",	"1000,", ",1000",	 "0,1000",
					  "10 00,5", "1000,5x", "-1,5",	 "1000,99999999"};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set_rate(x, bad[i]);
		assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), ff_tx_free(&x->a, 0) >= 120),
				       WAIT_MS));
		send_only(x, &x->a, mac_a, mac_b, 120, LEN, (uint32_t)i * 1000);
		got = 0;
		assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 120, WAIT_MS));
	}
	assert_int_equal(back_vif_stat(x->va, 0, "tx_rate_limited"), 0);
	set_rate(x, "10000,5000000");
	assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), ff_tx_free(&x->a, 0) >= 50), WAIT_MS));
	send_only(x, &x->a, mac_a, mac_b, 50, LEN, 99);
	got = receive_for(x, 0, 300);
	assert_int_equal(got, 10);
	set_rate(x, NULL);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 50, WAIT_MS));
	fx_free(x);
}

/*
 * The bounds of BYTES,USEC: up to 2^40 - 1 bytes (13 digits) per up to
 * 2^24 - 1 us is a limit; one more of either, or 0 us, is none.  Leading
 * zeros, any number of them, are taken, as Linux's simple_strtoul() takes
 * them: the bounds are on the value and its significant digits.
 */
static void test_rate_bounds_of_bytes_and_usec(void **state)
{
	static const struct {
		const char *v;
		uint64_t rate;
	} cases[] = {
	    {"1099511627775,16777215", BACK_RATE(BACK_RATE_MAX_BYTES, BACK_RATE_MAX_USEC)},
	    {"1099511627776,1000", 0},
	    {"1000,16777216", 0},
	    {"0000000001000,00001000", BACK_RATE(1000, 1000)},
	    {"00000000000001000,000000001000", BACK_RATE(1000, 1000)},
	    {"0001099511627775,00016777215", BACK_RATE(BACK_RATE_MAX_BYTES, BACK_RATE_MAX_USEC)},
	    {"00010000000000000,1000", 0},
	    {"1000,000100000000", 0},
	    {"1000,0", 0},
	};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	unsigned int got = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_rate(x, cases[i].v);
		assert_int_equal(atomic_load(&x->va->rate), cases[i].rate);
	}
	/* 0 us: frames go at once */
	send_only(x, &x->a, mac_a, mac_b, 120, LEN, 5);
	assert_true(WAIT_UNTIL(&x->w, (got = drain_b(x, got)) == 120, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_rate_limited"), 0);
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rate_window),
	    cmocka_unit_test(test_rate_refill),
	    cmocka_unit_test(test_rate_small),
	    cmocka_unit_test(test_rate_burst_capped),
	    cmocka_unit_test(test_rate_change_keeps_credit),
	    cmocka_unit_test(test_rate_malformed),
	    cmocka_unit_test(test_rate_bounds_of_bytes_and_usec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
