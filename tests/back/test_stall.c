// SPDX-License-Identifier: MIT
/* test_stall.c - RX stall detection: a guest that takes no frames loses its carrier, then gets it back */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fx.h"

/* The stall timeout of these tests (Linux's default, 60 s, would make them slow). */
#define STALL_MS 300u

/* A world whose queues stall after @stall_ms and drop what waited @drain_ms (0: defaults). */
static struct fx *stall_fx_cfg(enum back_tx_mode mode, const struct ff_opts *ob,
			       unsigned int stall_ms, unsigned int drain_ms)
{
	struct back_config cfg;
	struct ff_rxinfo info;
	struct fx *x;

	back_config_default(&cfg);
	cfg.rx_stall_timeout_ms = stall_ms;
	if (drain_ms)
		cfg.rx_drain_timeout_ms = drain_ms;
	x = fx_new(mode, &cfg, NULL, ob);
	/*
	 * B speaks first, so that the switch sends A's frames to B alone (not
	 * C too).  A posts before: else, on a loaded machine, A's queue could
	 * stall on that frame before A posts, and the frame would be flushed.
	 */
	ff_rx_post(&x->a, 0, FF_RING);
	send_only(x, &x->b, mac_b, mac_a, 1, 60, 0);
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->a, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
	return x;
}

static struct fx *stall_fx(enum back_tx_mode mode, const struct ff_opts *ob)
{
	return stall_fx_cfg(mode, ob, STALL_MS, 0);
}

static uint64_t stat_b(struct fx *x, const char *name)
{
	return back_vif_stat(x->vb, 0, name);
}

/* Whether queue @queue of @vif has its hold pool (read under its lock). */
static bool has_pool(struct back_vif *vif, unsigned int queue)
{
	struct back_queue *q = vif->q[queue];
	bool has;

	pthread_mutex_lock(&q->rx_lock);
	has = q->hold.base != NULL;
	pthread_mutex_unlock(&q->rx_lock);
	return has;
}

/*
 * Without stall detection, B's frames wait out the drain timeout (200 ms
 * here) after being copied out of A's pages: the pool they were copied
 * into is given back with the last of them.
 */
static void test_expiry_gives_pool_back(void **state)
{
	struct fx *x = stall_fx_cfg(BACK_TX_MAP, NULL, 0, 200);

	(void)state;
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 700);
	assert_true(WAIT_UNTIL(&x->w, stat_b(x, "rx_expired") == 20, WAIT_MS));
	assert_int_equal(stat_b(x, "rx_dropped"), 20);
	assert_true(stat_b(x, "rx_held_copied") > 0);
	assert_int_equal(stat_b(x, "rx_stalls"), 0);
	assert_false(has_pool(x->vb, 0));
	/* B posts: frames flow again, through a pool made again if they wait. */
	assert_int_equal(transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 9000, NULL, 800), 50);
	fx_free(x);
}

/* B's backend "carrier" key (netif.h's link state), as the guest reads it. */
static long carrier_key(struct fx *x)
{
	return xs_read_long(x->w.store, x->vb->be_path, "carrier");
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
	assert_int_equal(carrier_key(x), 1);
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), WAIT_MS));
	assert_true(test_now_ms() - t0 >= STALL_MS);
	/* The guest is told: the store's key follows (the loop thread writes it). */
	assert_true(WAIT_UNTIL(&x->w, carrier_key(x) == 0, WAIT_MS));
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	assert_int_equal(stat_b(x, "rx_stall_flushed"), 20);
	assert_int_equal(stat_b(x, "rx_dropped"), 20); /* flushed frames are dropped ones */
	assert_int_equal(stat_b(x, "rx_expired"), 0);
	assert_int_equal(stat_b(x, "rx_packets"), 0);
	/*
	 * A's frames were copied out of its pages into B's hold pool while they
	 * waited; the stall gives that memory back (docs/netback.md, Memory).
	 */
	assert_true(stat_b(x, "rx_held_copied") > 0);
	assert_false(has_pool(x->vb, 0));
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
	assert_true(WAIT_UNTIL(&x->w, carrier_key(x) == 1, WAIT_MS));
	assert_int_equal(transfer(x, &x->a, mac_a, &x->b, mac_b, 100, 60, 9000, NULL, 300), 100);
	assert_int_equal(stat_b(x, "rx_stalls"), 1);
	assert_int_equal(stat_b(x, "rx_carrier_off"), 10);
	assert_int_equal(stat_b(x, "rx_dropped"), 20); /* refused at xmit is not dropped */
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

static void test_stall_persistent(void **state)
{
	(void)state;
	stall_and_recover(BACK_TX_PERSISTENT);
}

/*
 * Buffers B posts without an event are found by the next frame forwarded
 * to it, whose thread delivers the waiting frame first (drain_queued()):
 * B took a frame, so the wait of its head frame starts again and the
 * stall timeout (1 s here) runs from then, not from when the first frame
 * began to wait 700 ms earlier.
 */
static void test_stall_wait_restarts_on_drain(void **state)
{
	struct fx *x = stall_fx_cfg(BACK_TX_MAP, NULL, 1000, 0);
	struct ff_rxinfo info;
	uint64_t t1;

	(void)state;
	send_only(x, &x->a, mac_a, mac_b, 1, 1000, 900);
	assert_true(WAIT_UNTIL(&x->w, stat_b(x, "rx_waits") == 1, WAIT_MS));
	(void)WAIT_UNTIL(&x->w, false, 700);
	assert_int_equal(ff_rx_post_quiet(&x->b, 0, 1), 1);
	t1 = test_now_ms();
	send_only(x, &x->a, mac_a, mac_b, 1, 1000, 901);
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info) == 1000,
			       WAIT_MS));
	(void)WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), 500);
	if (test_now_ms() - t1 < 900) /* the second frame's wait is not over (unless very slow) */
		assert_true(back_vif_carrier(x->vb));
	/* It is over a second later: the queue stalls on the second frame. */
	assert_true(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), WAIT_MS));
	assert_true(test_now_ms() - t1 >= 1000 - 20);
	assert_int_equal(stat_b(x, "rx_stall_flushed"), 1);
	assert_int_equal(stat_b(x, "rx_packets"), 1);
	fx_free(x);
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
	/*
	 * Frames copied out before they expired made B's hold pool; a guest we
	 * poll keeps it when its queue empties (its timeout is 30 ms: made and
	 * freed over and over, it would cost more than it saves).
	 */
	if (stat_b(x, "rx_held_copied") > 0)
		assert_true(has_pool(x->vb, 0));
	assert_false(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), 3 * STALL_MS));
	assert_int_equal(stat_b(x, "rx_stalls"), 0);
	assert_int_equal(stat_b(x, "rx_carrier_off"), 0);
	fx_free(x);
}

/*
 * The same with frames that wait longer than the stall timeout (a long
 * no-rx-notify drain timeout): still no stall, the carrier stays on, and
 * the frames are there when the guest posts.
 */
static void test_stall_not_without_rx_notify_long_wait(void **state)
{
	const struct ff_opts ob = {.nq = 1, .sg = true, .gso4 = true, .gso6 = true};
	struct back_config cfg;
	struct ff_rxinfo info;
	unsigned int got = 0;
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.rx_stall_timeout_ms = STALL_MS;
	cfg.rx_drain_timeout_nonotify_ms = 20 * STALL_MS;
	x = fx_new(BACK_TX_MAP, &cfg, NULL, &ob);
	send_only(x, &x->a, mac_a, mac_b, 20, 1000, 600);
	assert_false(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), 3 * STALL_MS));
	assert_int_equal(carrier_key(x), 1);
	assert_int_equal(stat_b(x, "rx_stalls"), 0);
	assert_int_equal(stat_b(x, "rx_expired"), 0);
	ff_rx_post(&x->b, 0, FF_RING);
	assert_true(WAIT_UNTIL(
	    &x->w, (got += ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info) == 1000) == 20,
	    WAIT_MS));
	fx_free(x);
}

/* Frame @seed of the flapping test: make_frame()'s, its seed in bytes 14..17. */
static uint32_t flap_frame(uint8_t *buf, uint32_t seed)
{
	uint32_t len = len_of(seed, 60, 9000);

	make_frame(buf, len, mac_b, mac_a, seed);
	memcpy(buf + 14, &seed, sizeof(seed));
	return len;
}

/* B receives what is there: every frame bit-exact and later than the last; returns the count. */
static unsigned int flap_receive(struct fx *x, uint32_t *next_seed)
{
	struct ff_rxinfo info;
	unsigned int n = 0;
	uint32_t seed;
	int len;

	while ((len = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN) {
		assert_true(len >= 18);
		memcpy(&seed, x->rbuf + 14, sizeof(seed));
		assert_true(seed >= *next_seed); /* dropped ones skipped, none reordered */
		assert_int_equal(len, flap_frame(x->buf, seed));
		assert_memory_equal(x->rbuf, x->buf, (size_t)len);
		*next_seed = seed + 1;
		n++;
	}
	return n;
}

/* Frames for B that netback counted as dropped, by reason; the others must stay 0. */
static uint64_t flap_dropped(struct fx *x)
{
	static const char *const none[] = {"rx_bad_gref", "rx_oversize", "rx_malformed",
					   "rx_sw_bad",	  "rx_nomem",	 "rx_hold_budget"};

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_int_equal(stat_b(x, none[i]), 0);
	return stat_b(x, "rx_queue_full") + stat_b(x, "rx_direct_full") + stat_b(x, "rx_expired") +
	       stat_b(x, "rx_stall_flushed") + stat_b(x, "rx_carrier_off");
}

/*
 * A 5 ms stall timeout and a receiver that comes and goes (100 ms away
 * first, then 0-30 ms away, 0-10 ms present) while A streams: the queue
 * stalls and recovers again and again, racing A's worker delivering
 * straight into B's ring.  Whatever B gets is bit-exact and in order;
 * every frame A sent is received or counted under a drop reason; at the
 * end B's carrier is on and nothing of A's is pinned.
 */
static void flap(enum back_tx_mode mode)
{
	struct back_config cfg;
	struct ff_rxinfo info;
	struct fx *x;
	uint64_t end, rng = 0x5ee0 + mode, phase_end;
	uint32_t sent = 0, next_seed = 0;
	unsigned int got = 0;
	bool present = false;

	back_config_default(&cfg);
	cfg.rx_stall_timeout_ms = 5;
	x = fx_new(mode, &cfg, NULL, NULL);
	ff_rx_post(&x->a, 0, FF_RING); /* first: A's queue stalls 5 ms after a frame waits */
	send_only(x, &x->b, mac_b, mac_a, 1, 60, 0); /* the switch learns B */
	assert_true(WAIT_UNTIL(&x->w, ff_rx_recv(&x->a, 0, x->rbuf, sizeof(x->rbuf), &info) == 60,
			       WAIT_MS));
	end = test_now_ms() + 1000;
	phase_end = test_now_ms() + 100;
	while (test_now_ms() < end) {
		ff_tx_reap(&x->a, 0);
		for (int i = 0; i < 8 && ff_tx_free(&x->a, 0) >= 3; i++) {
			uint32_t len = flap_frame(x->buf, sent);

			assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, len, NULL), 0);
			sent++;
		}
		ff_tx_push(&x->a, 0);
		if (present) {
			ff_rx_post(&x->b, 0, FF_RING);
			got += flap_receive(x, &next_seed);
		}
		if (test_now_ms() >= phase_end) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			present = !present;
			phase_end = test_now_ms() + (rng >> 33) % (present ? 10 : 30);
		}
		loop_run_once(x->w.loop, 0);
	}
	/* B stays: everything settles, received or counted. */
	if (!WAIT_UNTIL(&x->w,
			(ff_rx_post(&x->b, 0, FF_RING), got += flap_receive(x, &next_seed),
			 ff_tx_reap(&x->a, 0),
			 x->a.q[0].tx.rsp_cons == x->a.q[0].tx.req_prod_pvt &&
			     got + flap_dropped(x) == sent && back_vif_carrier(x->vb)),
			WAIT_MS)) {
		dump(x, got, sent, (int)flap_dropped(x));
		fail_msg("did not settle: sent %u, received %u", sent, got);
	}
	assert_true(stat_b(x, "rx_stalls") >= 1);
	assert_true(got > 0);
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	fx_free(x);
}

static void test_stall_flap_map(void **state)
{
	(void)state;
	flap(BACK_TX_MAP);
}

static void test_stall_flap_copy(void **state)
{
	(void)state;
	flap(BACK_TX_COPY);
}

static void test_stall_flap_persistent(void **state)
{
	(void)state;
	flap(BACK_TX_PERSISTENT);
}

/*
 * The budget over a guest's queues (docs/netback.md, Memory): a world
 * of @cfg whose guests may each have one hold pool, no stall detection,
 * and a B of two queues.  B and C speak first (to A, which takes their
 * frames), so that A's frames to either go to it alone.
 */
static struct fx *budget_fx_cfg(enum back_tx_mode mode, struct back_config *cfg)
{
	struct ff_opts def = FF_OPTS_DEFAULT, ob = FF_OPTS_DEFAULT;
	struct fx *x = calloc(1, sizeof(*x));
	struct ff_rxinfo info;

	assert_non_null(x);
	cfg->rx_stall_timeout_ms = 0;
	cfg->rx_guest_max_bytes = back_hold_pool_bytes(cfg->rx_queue_max_bytes);
	ob.nq = 2;
	/*
	 * fx_new()'s world, but A speaks before B and C have ports, so that
	 * the switch learns A without flooding: B's and C's frames to A then
	 * reach A alone, and nothing waits for B or C before the test sends.
	 */
	assert_int_equal(world_create(&x->w, mode, cfg), 0);
	assert_int_equal(ff_create(&x->a, &x->w, 0), 0);
	assert_int_equal(ff_create(&x->b, &x->w, 0), 0);
	assert_int_equal(ff_create(&x->c, &x->w, 0), 0);
	assert_int_equal(back_vif_create(x->w.back, x->a.domid, 0, mac_a, &x->va), 0);
	assert_int_equal(ff_connect(&x->a, &def), 0);
	send_only(x, &x->a, mac_a, mac_a, 1, 60, 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS));
	assert_int_equal(back_vif_create(x->w.back, x->b.domid, 0, mac_b, &x->vb), 0);
	assert_int_equal(back_vif_create(x->w.back, x->c.domid, 0, mac_c, &x->vc), 0);
	assert_int_equal(ff_connect(&x->b, &ob), 0);
	assert_int_equal(ff_connect(&x->c, &def), 0);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vc), XenbusStateConnected);
	assert_int_equal(x->vb->nq, 2);
	ff_rx_post(&x->a, 0, FF_RING);
	send_only(x, &x->b, mac_b, mac_a, 1, 60, 0);
	send_only(x, &x->c, mac_c, mac_a, 1, 60, 0);
	for (int i = 0; i < 2; i++)
		assert_true(WAIT_UNTIL(
		    &x->w, ff_rx_recv(&x->a, 0, x->rbuf, sizeof(x->rbuf), &info) == 60, WAIT_MS));
	/* Nothing was flooded to B or C (the switch forwarded those frames before A got them). */
	assert_int_equal(atomic_load(&x->vb->q[0]->rxq_bytes), 0);
	assert_int_equal(atomic_load(&x->vb->q[1]->rxq_bytes), 0);
	assert_int_equal(atomic_load(&x->vc->q[0]->rxq_bytes), 0);
	return x;
}

/* budget_fx_cfg() with @drain_ms the drain timeout (0: the default, 10 s). */
static struct fx *budget_fx(enum back_tx_mode mode, unsigned int drain_ms)
{
	struct back_config cfg;

	back_config_default(&cfg);
	if (drain_ms)
		cfg.rx_drain_timeout_ms = drain_ms;
	return budget_fx_cfg(mode, &cfg);
}

/*
 * A source MAC (@base with its fifth byte changed) whose frames to B
 * land on B's queue @queue: B's flow hash has a random key, so the test
 * asks netback's own choice.  The switch learns it on the port that
 * sends from it.
 */
static void src_for_queue(struct fx *x, const uint8_t base[6], unsigned int queue, uint8_t src[6])
{
	struct back_hash_snap snap;
	struct back_hash_result r;
	uint8_t hdr[60];

	back_hash_snapshot(&x->vb->hash, &snap);
	for (unsigned int i = 1; i < 256; i++) {
		memcpy(src, base, 6);
		src[4] = (uint8_t)i;
		make_frame(hdr, sizeof(hdr), mac_b, src, 0);
		back_hash_select(&x->vb->hash, &snap, hdr, sizeof(hdr), x->vb->nq, &r);
		if (r.queue == queue)
			return;
	}
	fail_msg("no source MAC of 255 lands on B's queue %u", queue);
}

static uint64_t stat_bq(struct fx *x, unsigned int queue, const char *name)
{
	return back_vif_stat(x->vb, queue, name);
}

static uint64_t guest_hold(struct back_vif *vif)
{
	return atomic_load(&vif->guest->hold_bytes);
}

/* Receive @n frames on B's queue @queue: each the one make_frame() gives for @src and seed0 + i. */
static void recv_from(struct fx *x, unsigned int queue, const uint8_t *src, unsigned int n,
		      uint32_t len, uint32_t seed0)
{
	struct ff_rxinfo info;

	for (unsigned int i = 0; i < n; i++) {
		assert_true(WAIT_UNTIL(
		    &x->w, ff_rx_recv(&x->b, queue, x->rbuf, sizeof(x->rbuf), &info) == (int)len,
		    WAIT_MS));
		make_frame(x->buf, len, mac_b, src, seed0 + i);
		assert_memory_equal(x->rbuf, x->buf, len);
	}
}

/*
 * B takes nothing on either queue, and its budget has room for one pool:
 * A's frames for queue 0 wait out the hold and are copied into queue 0's
 * pool; A's frames for queue 1 then find the budget spent and are
 * dropped instead, counted as rx_hold_budget, and A gets every slot back
 * all the same.  C, another guest, has a budget of its own.  When B
 * posts on queue 0, its copies arrive bit-exact and its pool, empty,
 * gives way to queue 1's next copies; both queues carry frames as before.
 */
static void guest_budget(enum back_tx_mode mode)
{
	struct fx *x = budget_fx(mode, 0);
	uint64_t pool = back_hold_pool_bytes(x->w.back->cfg.rx_queue_max_bytes);
	uint8_t s0[6], s1[6];

	src_for_queue(x, mac_a, 0, s0);
	src_for_queue(x, mac_a, 1, s1);
	assert_int_equal(guest_hold(x->vb), 0);

	send_only(x, &x->a, s0, mac_b, 10, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 0, "rx_held_copied") == 10, WAIT_MS));
	assert_true(has_pool(x->vb, 0));
	assert_int_equal(guest_hold(x->vb), pool);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 11, WAIT_MS));

	send_only(x, &x->a, s1, mac_b, 10, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 1, "rx_hold_budget") == 10, WAIT_MS));
	assert_int_equal(stat_bq(x, 1, "rx_dropped"), 10);
	assert_int_equal(stat_bq(x, 1, "rx_held_copied"), 0);
	assert_int_equal(stat_bq(x, 1, "rx_nomem"), 0);
	assert_false(has_pool(x->vb, 1));
	assert_int_equal(guest_hold(x->vb), pool);
	assert_int_equal(atomic_load(&x->vb->q[1]->rxq_bytes), 0);
	/* A's pages are not pinned by the frames dropped: every request is answered OKAY. */
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 21, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	/* Queue 0 kept its copies, and dropped nothing. */
	assert_int_equal(stat_bq(x, 0, "rx_dropped"), 0);
	assert_int_equal(stat_bq(x, 0, "rx_hold_budget"), 0);

	/* C's pool is charged to C. */
	send_only(x, &x->a, mac_a, mac_c, 10, 1000, 300);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vc, 0, "rx_held_copied") == 10, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vc, 0, "rx_hold_budget"), 0);
	assert_int_equal(guest_hold(x->vc), pool);
	assert_int_equal(guest_hold(x->vb), pool);

	/*
	 * B posts on queue 0: its copies arrive, and its pool, empty then,
	 * gives way to queue 1, which went without: queue 1's next frames
	 * that wait are copied out, into a pool of its own.
	 */
	ff_rx_post(&x->b, 0, FF_RING);
	recv_from(x, 0, s0, 10, 1000, 100);
	assert_int_equal(stat_bq(x, 0, "rx_packets"), 10);
	assert_true(WAIT_UNTIL(&x->w, !has_pool(x->vb, 0), WAIT_MS));
	assert_int_equal(guest_hold(x->vb), 0);
	send_only(x, &x->a, s1, mac_b, 10, 1000, 400);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 1, "rx_held_copied") == 10, WAIT_MS));
	assert_true(has_pool(x->vb, 1));
	assert_int_equal(guest_hold(x->vb), pool);
	ff_rx_post(&x->b, 1, FF_RING);
	recv_from(x, 1, s1, 10, 1000, 400);
	send_only(x, &x->a, s0, mac_b, 10, 1000, 500);
	recv_from(x, 0, s0, 10, 1000, 500);
	assert_int_equal(stat_bq(x, 1, "rx_hold_budget"), 10);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 51, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	fx_free(x);
}

static void test_guest_budget_map(void **state)
{
	(void)state;
	guest_budget(BACK_TX_MAP);
}

static void test_guest_budget_copy(void **state)
{
	(void)state;
	guest_budget(BACK_TX_COPY);
}

/*
 * A pool given back is the guest's budget back: queue 0's copies expire
 * (the drain timeout, 1 s here), its pool goes and its charge with it,
 * and queue 1 may then copy out what waits for it.  And a vif disabled
 * (a producer index far ahead) gives back what it has.
 */
static void test_guest_budget_given_back(void **state)
{
	struct fx *x = budget_fx(BACK_TX_MAP, 1000);
	uint8_t s0[6], s1[6];

	(void)state;
	src_for_queue(x, mac_a, 0, s0);
	src_for_queue(x, mac_a, 1, s1);
	send_only(x, &x->a, s0, mac_b, 10, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 0, "rx_expired") == 10, WAIT_MS));
	assert_int_equal(stat_bq(x, 0, "rx_held_copied"), 10);
	assert_false(has_pool(x->vb, 0));
	assert_int_equal(guest_hold(x->vb), 0);

	send_only(x, &x->a, s1, mac_b, 10, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 1, "rx_held_copied") == 10, WAIT_MS));
	assert_int_equal(stat_bq(x, 1, "rx_hold_budget"), 0);
	assert_true(has_pool(x->vb, 1));
	assert_int_equal(guest_hold(x->vb),
			 back_hold_pool_bytes(x->w.back->cfg.rx_queue_max_bytes));
	ff_rx_post(&x->b, 1, FF_RING);
	recv_from(x, 1, s1, 10, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 21, WAIT_MS));
	assert_true(has_pool(x->vb, 1)); /* kept: a pause is not a stall */

	/* A vif disabled for breaking the protocol gives its pools back with its queues. */
	__atomic_store_n(&x->b.q[0].tx.sring->req_prod, x->b.q[0].tx.req_prod_pvt + 1000,
			 __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->b.domid, x->b.q[0].port_tx);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->vb) == XenbusStateClosing, WAIT_MS));
	assert_int_equal(guest_hold(x->vb), 0);
	fx_free(x);
}

/*
 * A malloc() that refuses some calls: the next fail_left calls for exactly
 * fail_size bytes (a hold pool's size, which nothing else asks for) get
 * NULL.  The build links every call of malloc() in this program here
 * (-Wl,--wrap=malloc); the rest go to the C library's.
 */
static atomic_size_t fail_size;
static atomic_int fail_left;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

void *__wrap_malloc(size_t size)
{
	if (size && size == atomic_load(&fail_size)) {
		int left = atomic_load(&fail_left);

		while (left > 0)
			if (atomic_compare_exchange_weak(&fail_left, &left, left - 1)) {
				errno = ENOMEM;
				return NULL;
			}
	}
	return __real_malloc(size);
}

/*
 * A hold pool that cannot be allocated (malloc() refuses it three times)
 * is "not yet", not "no budget": each failure gives the guest's charge
 * back and counts rx_nomem, the frames keep waiting in A's pages, and a
 * later round's copy-out makes the pool: all ten copied, the guest
 * charged one pool (its budget holds just one, so a charge kept by a
 * failure would have refused it), nothing dropped, and B gets the frames
 * bit-exact when it posts.
 */
static void test_guest_pool_nomem(void **state)
{
	struct fx *x = budget_fx(BACK_TX_MAP, 0);
	uint64_t pool = back_hold_pool_bytes(x->w.back->cfg.rx_queue_max_bytes);
	uint8_t s0[6];

	(void)state;
	src_for_queue(x, mac_a, 0, s0);
	atomic_store(&fail_left, 3);
	atomic_store(&fail_size, (size_t)pool);
	send_only(x, &x->a, s0, mac_b, 10, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 0, "rx_held_copied") == 10, WAIT_MS));
	atomic_store(&fail_size, 0);
	assert_int_equal(atomic_load(&fail_left), 0);
	assert_int_equal(stat_bq(x, 0, "rx_nomem"), 3);
	assert_int_equal(stat_bq(x, 0, "rx_hold_budget"), 0);
	assert_int_equal(stat_bq(x, 0, "rx_dropped"), 0);
	assert_true(has_pool(x->vb, 0));
	assert_int_equal(guest_hold(x->vb), pool);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 11, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	ff_rx_post(&x->b, 0, FF_RING);
	recv_from(x, 0, s0, 10, 1000, 100);
	fx_free(x);
}

/*
 * A guest's vifs share one budget: a second vif of B's domain (devid 1,
 * never connected) takes B's entry, and destroying it leaves the entry
 * to the first, whose copy-outs are still charged to it.
 */
static void test_guest_shared_by_vifs(void **state)
{
	static const uint8_t mac_b1[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x1b};
	struct fx *x = budget_fx(BACK_TX_MAP, 0);
	uint64_t pool = back_hold_pool_bytes(x->w.back->cfg.rx_queue_max_bytes);
	struct back_guest *g = x->vb->guest;
	struct back_vif *vb1;
	unsigned int guests = 0;
	uint8_t s0[6];

	(void)state;
	assert_int_equal(g->vifs, 1);
	assert_int_equal(back_vif_create(x->w.back, x->b.domid, 1, mac_b1, &vb1), 0);
	assert_ptr_equal(vb1->guest, g);
	assert_int_equal(g->vifs, 2);
	back_vif_destroy(vb1);
	assert_int_equal(g->vifs, 1);
	for (struct back_guest *e = x->w.back->guests; e; e = e->next)
		guests++;
	assert_int_equal(guests, 3); /* A, B and C */
	src_for_queue(x, mac_a, 0, s0);
	send_only(x, &x->a, s0, mac_b, 10, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 0, "rx_held_copied") == 10, WAIT_MS));
	assert_int_equal(back_guest_rx_hold(x->w.back, x->b.domid), pool);
	fx_free(x);
}

/*
 * The budget drops the frames that are due, not the ones behind them: on
 * B's queue 1, a lender's frame (due after port_hold_max_us, 300 ms
 * here) and then one of A's (due only after tx_hold_max_us, 10 s).
 * Queue 0's pool, made for the lender's frames before, is B's whole
 * budget: the lender's frame is dropped and the lender has it back; A's
 * stays queued, in A's pages, and reaches B when B posts.
 */
static void test_guest_budget_drops_only_due(void **state)
{
	static const uint8_t mac_up[6] = {0x02, 0, 0, 0, 0x0f, 0x04};
	static uint8_t frames[4][1000];
	static struct sw_pkt pkts[4];
	struct back_config cfg;
	uint8_t u0[6], u1[6], s1[6];
	struct sw_pkt *v[3];
	struct sw_port *up;
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.port_hold_max_us = 300000;
	cfg.tx_hold_max_us = 10000000;
	x = budget_fx_cfg(BACK_TX_MAP, &cfg);
	assert_int_equal(sw_port_add(x->w.sw, "lender", &fx_lender_ops, NULL, &up), 0);
	src_for_queue(x, mac_up, 0, u0);
	src_for_queue(x, mac_up, 1, u1);
	src_for_queue(x, mac_a, 1, s1);
	atomic_store(&fx_lent_done, 0);
	for (unsigned int i = 0; i < 3; i++)
		v[i] = fx_lend(&pkts[i], frames[i], 1000, u0, i);
	assert_int_equal(sw_forward(x->w.sw, up, v, 3), 3);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 0, "rx_held_copied") == 3, WAIT_MS));
	assert_true(has_pool(x->vb, 0));

	v[0] = fx_lend(&pkts[3], frames[3], 1000, u1, 3);
	assert_int_equal(sw_forward(x->w.sw, up, v, 1), 1);
	send_only(x, &x->a, s1, mac_b, 1, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[1]->rxq_bytes) == 2 * 1000, WAIT_MS));
	/* Both queued before the lender's was due: else this test shows nothing. */
	assert_int_equal(stat_bq(x, 1, "rx_hold_budget"), 0);
	assert_true(WAIT_UNTIL(&x->w, stat_bq(x, 1, "rx_hold_budget") == 1, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&fx_lent_done) == 4, WAIT_MS));
	assert_int_equal(stat_bq(x, 1, "rx_dropped"), 1);
	assert_int_equal(atomic_load(&x->vb->q[1]->rxq_bytes), 1000);
	assert_false(has_pool(x->vb, 1));
	assert_int_equal(answered(&x->a), 1); /* budget_fx_cfg()'s frame: A's new one is held */

	ff_rx_post(&x->b, 1, FF_RING);
	recv_from(x, 1, s1, 1, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 2, WAIT_MS));
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	assert_int_equal(stat_bq(x, 1, "rx_hold_budget"), 1);
	assert_int_equal(stat_bq(x, 1, "rx_held_copied"), 0);
	assert_int_equal(sw_port_del(x->w.sw, up), 0);
	fx_free(x);
}

/*
 * A sender that disconnects while a receiver holds its frames gets them
 * back at once: B takes nothing, and A's frames would be copied out of
 * A's pages only after the hold (10 s here, longer than a disconnect
 * waits, 5 s), but receivers copy out a sender's frames at once while its
 * queue is being torn down.  So A's queue goes whole (not leaked), every
 * request of A's is answered OKAY before its vif is Closed, and B, posting
 * later, gets the frames bit-exact from its copies.  C's frames, queued
 * behind A's, are not A's: they stay where they are, in C's pages, until
 * B takes them.
 */
static void test_sender_leaves_while_held(void **state)
{
	struct back_config cfg;
	uint8_t s0[6], c0[6];
	struct fx *x;

	(void)state;
	back_config_default(&cfg);
	cfg.tx_hold_max_us = 10000000;
	x = budget_fx_cfg(BACK_TX_MAP, &cfg);
	src_for_queue(x, mac_a, 0, s0);
	src_for_queue(x, mac_c, 0, c0);
	send_only(x, &x->a, s0, mac_b, 1, 1000, 100);
	/* A's frame queued first (the two senders' workers race otherwise), then C's. */
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->rxq_bytes) == 1000, WAIT_MS));
	send_only(x, &x->c, c0, mac_b, 5, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->rxq_bytes) == 6 * 1000, WAIT_MS));
	assert_int_equal(stat_bq(x, 0, "rx_held_copied"), 0);
	/* budget_fx_cfg()'s frames only: A's one and C's five are held */
	assert_int_equal(answered(&x->a), 1);
	assert_int_equal(answered(&x->c), 1);

	ff_set_state(&x->a, XenbusStateClosing);
	ff_set_state(&x->a, XenbusStateClosed);
	assert_int_equal(back_vif_state(x->va), XenbusStateClosed);
	assert_int_equal(answered(&x->a), 2);
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	assert_int_equal(stat_bq(x, 0, "rx_held_copied"), 1);
	assert_int_equal(answered(&x->c), 1);
	assert_int_equal(atomic_load(&x->w.back->rx_release_now), 0);

	ff_rx_post(&x->b, 0, FF_RING);
	recv_from(x, 0, s0, 1, 1000, 100);
	recv_from(x, 0, c0, 5, 1000, 200);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->c) == 6, WAIT_MS));
	assert_int_equal(stat_bq(x, 0, "rx_held_copied"), 1);
	assert_int_equal(stat_bq(x, 0, "rx_dropped"), 0);
	fx_free(x);
}

/*
 * A stalled guest that reboots (disconnects and connects again) starts
 * with its carrier on: the stall was its last connection's queues', and
 * the new ones have waited for nothing.
 */
static void test_stall_then_reconnect(void **state)
{
	struct ff_opts ob = FF_OPTS_DEFAULT;
	struct fx *x = stall_fx(BACK_TX_MAP, NULL);

	(void)state;
	send_only(x, &x->a, mac_a, mac_b, 5, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, !back_vif_carrier(x->vb), WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 5, WAIT_MS));
	fx_reconnect(&x->b, x->vb, &ob);
	assert_true(back_vif_carrier(x->vb));
	assert_true(WAIT_UNTIL(&x->w, carrier_key(x) == 1, WAIT_MS));
	assert_int_equal(transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 9000, NULL, 300), 50);
	assert_true(back_vif_carrier(x->vb));
	fx_free(x);
}

/*
 * With split event channels, buffers a guest posts are announced on its
 * RX channel: a worker asleep with frames waiting for them (copied out
 * of their sender, so no timer of its is due before the drain timeout,
 * a minute here) wakes on that channel and delivers them at once.  Not
 * polling that channel would leave them to the worker's re-check, a
 * second later (rx.c: a second at most): half of that is the bound here,
 * where a woken worker takes about a millisecond.
 */
static void test_split_rx_event_wakes(void **state)
{
	struct ff_opts ob = FF_OPTS_DEFAULT;
	struct back_config cfg;
	struct fx *x;
	uint64_t t0;

	(void)state;
	back_config_default(&cfg);
	cfg.rx_stall_timeout_ms = 0;
	cfg.rx_drain_timeout_ms = 60000;
	ob.split = true;
	x = fx_new(BACK_TX_MAP, &cfg, NULL, &ob);
	assert_true(x->vb->q[0]->split);
	send_only(x, &x->b, mac_b, mac_a, 1, 60,
		  0); /* the switch learns B: A's frames go to B alone */
	send_only(x, &x->a, mac_a, mac_b, 10, 1000, 100);
	assert_true(WAIT_UNTIL(&x->w, stat_b(x, "rx_held_copied") == 10, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vb->q[0]->sleeping), WAIT_MS));
	t0 = test_now_ms();
	ff_rx_post(&x->b, 0, FF_RING);
	recv_from(x, 0, mac_a, 10, 1000, 100);
	assert_true(test_now_ms() - t0 < 500);
	assert_int_equal(stat_b(x, "rx_expired"), 0);
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stall_map),
	    cmocka_unit_test(test_stall_copy),
	    cmocka_unit_test(test_stall_persistent),
	    cmocka_unit_test(test_stall_one_slot),
	    cmocka_unit_test(test_stall_wait_restarts_on_drain),
	    cmocka_unit_test(test_expiry_gives_pool_back),
	    cmocka_unit_test(test_stall_not_without_rx_notify),
	    cmocka_unit_test(test_stall_not_without_rx_notify_long_wait),
	    cmocka_unit_test(test_stall_flap_map),
	    cmocka_unit_test(test_stall_flap_copy),
	    cmocka_unit_test(test_stall_flap_persistent),
	    cmocka_unit_test(test_stall_then_reconnect),
	    cmocka_unit_test(test_split_rx_event_wakes),
	    cmocka_unit_test(test_guest_budget_map),
	    cmocka_unit_test(test_guest_budget_copy),
	    cmocka_unit_test(test_guest_budget_given_back),
	    cmocka_unit_test(test_guest_shared_by_vifs),
	    cmocka_unit_test(test_guest_budget_drops_only_due),
	    cmocka_unit_test(test_guest_pool_nomem),
	    cmocka_unit_test(test_sender_leaves_while_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
