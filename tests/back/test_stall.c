// SPDX-License-Identifier: MIT
/* test_stall.c - RX stall detection: a guest that takes no frames loses its carrier, then gets it back */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fx.h"

/* The stall timeout of these tests (Linux's default, 60 s, would make them slow). */
#define STALL_MS 300u

static struct fx *stall_fx(enum back_tx_mode mode, const struct ff_opts *ob)
{
	struct back_config cfg;
	struct ff_rxinfo info;
	struct fx *x;

	back_config_default(&cfg);
	cfg.rx_stall_timeout_ms = STALL_MS;
	x = fx_new(mode, &cfg, NULL, ob);
	/* B speaks first, so that the switch sends A's frames to B alone (not C too). */
	send_only(x, &x->b, mac_b, mac_a, 1, 60, 0);
	ff_rx_post(&x->a, 0, FF_RING);
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->a, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
	return x;
}

static uint64_t stat_b(struct fx *x, const char *name)
{
	return back_vif_stat(x->vb, 0, name);
}

/*
 * B posts no buffers: once its head frame has waited the stall timeout the
 * queue is stalled, what it held is dropped (and A's pages with it), the
 * carrier goes off and later frames are refused at once.  When B posts,
 * the carrier comes back and frames flow, bit-exact, as before.
 */
static void stall_and_recover(enum back_tx_mode mode)
{
	struct fx *x = stall_fx(mode, NULL);
	uint64_t t0 = test_now_ms();

	assert_true(back_vif_carrier(x->vb));
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), WAIT_MS));
	assert_true(test_now_ms() - t0 >= STALL_MS);
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	assert_int_equal(stat_b(x, "rx_stall_flushed"), 20);
	assert_int_equal(stat_b(x, "rx_expired"), 0);
	assert_int_equal(stat_b(x, "rx_packets"), 0);
	/* Nothing of A's stays pinned: every request is answered, and OKAY (the switch dropped them). */
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 20, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_packets"), 20);

	/* Carrier off: refused by xmit, not queued. */
	send_only(x, &x->a, mac_a, mac_b, 10, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, stat_b(x, "rx_carrier_off") == 10, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 30, WAIT_MS));
	assert_int_equal(stat_b(x, "rx_stall_flushed"), 20);
	assert_false(back_vif_carrier(x->vb));

	/* B posts: ready again, carrier on, frames delivered. */
	ff_rx_post(&x->b, 0, FF_RING);
	assert_true(WAIT_UNTIL(&x->w, back_vif_carrier(x->vb), WAIT_MS));
	assert_int_equal(transfer(x, &x->a, mac_a, &x->b, mac_b, 100, 60, 9000, NULL, 300), 100);
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	assert_int_equal(stat_b(x, "rx_carrier_off"), 10);
	fx_free(x);
}

static void test_stall_map(void **state)
{
	(void)state;
	stall_and_recover(BACK_TX_MAP);
}

static void test_stall_copy(void **state)
{
	(void)state;
	stall_and_recover(BACK_TX_COPY);
}

/*
 * XSA-392: a guest that keeps one buffer posted while every frame needs
 * two stalls all the same, and one buffer does not make it ready: the
 * carrier stays off until there are enough for the frame it stalled on.
 */
static void test_stall_one_slot(void **state)
{
	struct fx *x = stall_fx(BACK_TX_MAP, NULL);

	(void)state;
	assert_int_equal(ff_rx_post(&x->b, 0, 1), 1);
	send_only(x, &x->a, mac_a, mac_b, 4, 6000, 400); /* two slots each (sg) */
	assert_true(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), WAIT_MS));
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	assert_int_equal(stat_b(x, "rx_stall_flushed"), 4);
	/* Still one buffer: off, for several stall timeouts. */
	assert_false(WAIT_UNTIL(&x->w, back_vif_carrier(x->vb), 3 * STALL_MS));
	assert_int_equal(ff_rx_post(&x->b, 0, 1), 1);
	assert_true(WAIT_UNTIL(&x->w, back_vif_carrier(x->vb), WAIT_MS));
	assert_int_equal(transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 4097, 12000, NULL, 500), 50);
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	fx_free(x);
}

/*
 * A frontend without feature-rx-notify never tells us of new buffers, so
 * (as in Linux) it is never declared stalled: its frames expire after the
 * short drain timeout and the carrier stays on.
 */
static void test_stall_not_without_rx_notify(void **state)
{
	const struct ff_opts ob = {.nq = 1, .sg = true, .gso4 = true, .gso6 = true};
	struct fx *x = stall_fx(BACK_TX_MAP, &ob);

	(void)state;
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 600);
	assert_true(WAIT_UNTIL(&x->w, stat_b(x, "rx_expired") == 20, WAIT_MS));
	assert_false(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), 3 * STALL_MS));
	assert_int_equal(stat_b(x, "rx_stalls"), 0);
	assert_int_equal(stat_b(x, "rx_carrier_off"), 0);
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stall_map),
	    cmocka_unit_test(test_stall_copy),
	    cmocka_unit_test(test_stall_one_slot),
	    cmocka_unit_test(test_stall_not_without_rx_notify),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
