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
 * once: four TX workers of A feed B's single RX queue, each delivering
 * straight into B's ring when it can (rx_direct) and queueing otherwise.
 * The test runs in cycles, each taking B's queue from empty to backed up
 * and back: B posts fewer buffers than a burst of A's needs (the burst is
 * delivered directly until the buffers run out mid-batch, the rest is
 * queued, and so is everything A sends after it), then a trickle of
 * buffers while A keeps sending (frames wait for slots, rx_waits, and the
 * ones held longer than tx_hold_max_us are copied out, rx_held_copied; the
 * byte bound refuses some: drops, never retries), then plenty until the
 * queue is drained and direct delivery can resume.  Each frame carries
 * (source queue, sequence); B checks that every source's sequence only
 * grows.
 */

static const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};
static const uint8_t mac_b[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b};

#define WAIT_MS	  20000
#define NQ	  4u
#define PER_Q	  400u
#define HOLD_US	  200u /* copy-out after 200 us: frames waiting for slots take that path */
#define BURST	  8u   /* frames per queue A sends at the start of a cycle, */
#define POST_FEW  8u   /* into this many RX buffers (the burst needs about 58) */
#define TRICKLE	  10u  /* then rounds of: */
#define PER_ROUND 2u   /* frames A sends per queue, */
#define POST_MAX  6u   /* RX buffers B posts: fewer than that needs */
#define POST_BIG  64u  /* at the end of a cycle, until nothing came for QUIET_MS */
#define QUIET_MS  20u

static uint32_t frame_len(uint32_t seq)
{
	return 200 + (seq % 5) * 2000; /* 1 to 3 slots */
}

struct ord {
	struct ff *a, *b;
	uint32_t next[NQ];
	int64_t last[NQ];
	unsigned int got, ooo, sent;
	uint8_t buf[65536], rbuf[65536];
};

/* A: up to @per frames on every queue, round robin, each queue pushed. */
static void send_some(struct ord *o, unsigned int per)
{
	for (unsigned int q = 0; q < NQ; q++) {
		ff_tx_reap(o->a, q);
		for (unsigned int k = 0; k < per && o->next[q] < PER_Q; k++) {
			uint32_t len = frame_len(o->next[q]);

			make_frame(o->buf, len, mac_b, mac_a, o->next[q]);
			memcpy(o->buf + 14, &q, 4);
			memcpy(o->buf + 18, &o->next[q], 4);
			if (ff_tx_frame(o->a, q, o->buf, len, NULL) < 0)
				break;
			o->next[q]++;
			o->sent++;
		}
		ff_tx_push(o->a, q);
	}
}

/* B: take what arrived, checking each source's order; returns how many. */
static unsigned int take(struct ord *o)
{
	struct ff_rxinfo info;
	unsigned int n0 = o->got;
	int n;

	while ((n = ff_rx_recv(o->b, 0, o->rbuf, sizeof(o->rbuf), &info)) != -EAGAIN) {
		uint32_t q, seq;

		if (n < 22 || memcmp(o->rbuf + 6, mac_a, 6) != 0)
			continue;
		memcpy(&q, o->rbuf + 14, 4);
		memcpy(&seq, o->rbuf + 18, 4);
		assert_true(q < NQ);
		assert_int_equal((uint32_t)n, frame_len(seq));
		if ((int64_t)seq <= o->last[q])
			o->ooo++;
		else
			o->last[q] = seq;
		o->got++;
	}
	return o->got - n0;
}

static void pause_round(struct world *w)
{
	loop_run_once(w->loop, 0);
	nanosleep(&(struct timespec){.tv_nsec = 200000}, NULL);
}

static void run(enum back_tx_mode mode)
{
	struct back_config cfg;
	struct ff_opts o = {.nq = NQ, .split = true, .sg = true, .rx_notify = true};
	struct ff_opts ob = {.nq = 1, .sg = true, .rx_notify = true};
	static struct ord x;
	struct world w;
	struct ff a, b;
	struct back_vif *va, *vb;
	uint64_t end;
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
	memset(&x, 0, sizeof(x));
	x.a = &a;
	x.b = &b;
	for (unsigned int q = 0; q < NQ; q++)
		x.last[q] = -1;

	/* B announces its MAC so that A's frames are unicast to B only. */
	make_frame(x.buf, 60, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", mac_b, 0);
	assert_int_equal(ff_tx_frame(&b, 0, x.buf, 60, NULL), 0);
	ff_tx_push(&b, 0);

	end = test_now_ms() + WAIT_MS;
	for (unsigned int cycle = 0; x.sent < NQ * PER_Q && test_now_ms() < end; cycle++) {
		uint64_t quiet;

		ff_rx_post(&b, 0, POST_FEW);
		send_some(&x, BURST);
		/*
		 * The first cycle keeps the burst's queued frames waiting ten
		 * times the hold bound, so that some are copied out whatever the
		 * timing of the trickle (which on a busy machine can feed B fast
		 * enough that none waits that long); in map mode until B's
		 * worker has copied some out (a worker starved of CPU by other
		 * work on the machine may take longer than ten rounds).
		 */
		for (unsigned int r = 0;
		     cycle == 0 && (r < 10 || (mode == BACK_TX_MAP && test_now_ms() < end &&
					       !back_vif_stat(vb, 0, "rx_held_copied")));
		     r++)
			pause_round(&w);
		for (unsigned int r = 0; r < TRICKLE; r++) {
			pause_round(&w);
			take(&x);
			ff_rx_post(&b, 0, POST_MAX);
			send_some(&x, PER_ROUND);
		}
		quiet = test_now_ms() + QUIET_MS;
		while (test_now_ms() < quiet && test_now_ms() < end) {
			ff_rx_post(&b, 0, POST_BIG);
			pause_round(&w);
			if (take(&x))
				quiet = test_now_ms() + QUIET_MS;
		}
	}
	fprintf(stderr,
		"# %s: sent %u, received %u, out of order %u, held copied %llu, waits %llu, "
		"direct %llu\n",
		mode == BACK_TX_MAP ? "map" : "copy", x.sent, x.got, x.ooo,
		(unsigned long long)back_vif_stat(vb, 0, "rx_held_copied"),
		(unsigned long long)back_vif_stat(vb, 0, "rx_waits"),
		(unsigned long long)back_vif_stat(vb, 0, "rx_direct"));
	assert_int_equal(x.sent, NQ * PER_Q);
	assert_true(x.got > 0);
	assert_int_equal(x.ooo, 0);
	/*
	 * Both ways into B's ring were taken: by A's workers directly, and
	 * through the queue (its head waited for B's buffers).  Who delivered
	 * the queued frames is not fixed: B's worker, or a forwarding thread
	 * that found them queued and drained them first (counted as direct).
	 */
	assert_true(back_vif_stat(vb, 0, "rx_waits") > 0);
	assert_true(back_vif_stat(vb, 0, "rx_direct") > 0);
	assert_true(back_vif_stat(vb, 0, "rx_direct") <= back_vif_stat(vb, 0, "rx_packets"));
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

/*
 * The worker's last look before sleeping (back_rx_has_input) must see a
 * blocked queue's buffers in the ring itself: the guest's event that
 * announced them may already have been consumed (late EOI, or while a
 * sender's thread set the block), and nothing would wake the worker again.
 */
static void test_blocked_queue_sees_posted_buffers(void **state)
{
	static _Alignas(4096) uint8_t page[4096];
	netif_rx_sring_t *s = (netif_rx_sring_t *)page;
	struct back_queue *q = calloc(1, sizeof(*q));
	struct back_mpsc_item it = {.u64 = 1};

	assert_non_null(q);
	SHARED_RING_INIT(s);
	BACK_RING_INIT(&q->rx, s, sizeof(page));
	assert_int_equal(back_mpsc_init(&q->rxq, 16), 0);
	assert_false(back_rx_has_input(q)); /* nothing queued */
	assert_true(back_mpsc_push(&q->rxq, &it));
	assert_true(back_rx_has_input(q));

	/* the head frame needs the guest's buffers up to request 10 */
	atomic_store(&q->rx_wait_for, 10);
	atomic_store(&q->rx_blocked, true);
	__atomic_store_n(&s->req_prod, 9, __ATOMIC_RELEASE);
	assert_false(back_rx_has_input(q)); /* still short: sleep until notified */
	__atomic_store_n(&s->req_prod, 10, __ATOMIC_RELEASE);
	assert_true(back_rx_has_input(q)); /* posted: do not sleep, event or not */
	__atomic_store_n(&s->req_prod, 12, __ATOMIC_RELEASE);
	assert_true(back_rx_has_input(q));

	back_mpsc_fini(&q->rxq);
	free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_age_after_now),
	    cmocka_unit_test(test_blocked_queue_sees_posted_buffers),
	    cmocka_unit_test(test_order_map),
	    cmocka_unit_test(test_order_copy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
