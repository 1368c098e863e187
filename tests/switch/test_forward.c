// SPDX-License-Identifier: MIT
/* test_forward.c - unit tests of sw_forward: learning, flooding, drops, references, order */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_port.h"
#include "switch/switch.h"

#define NPORTS 4

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mcast4[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
static const uint8_t mcast6[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};

struct env {
	struct sw *sw;
	struct fake_port fp[NPORTS];
};

static struct env env_storage;

static int setup_cfg(void **state, uint32_t fdb_max, uint32_t mac_limit)
{
	struct env *e = &env_storage;

	fake_reset();
	e->sw = fake_sw(fdb_max, mac_limit);
	for (unsigned int i = 0; i < NPORTS; i++)
		fake_port_add(e->sw, &e->fp[i], i);
	*state = e;
	return 0;
}

static int setup(void **state)
{
	return setup_cfg(state, 0, 0);
}

static int setup_small(void **state)
{
	return setup_cfg(state, 8, 1000);
}

static int teardown(void **state)
{
	struct env *e = *state;

	for (unsigned int i = 0; i < NPORTS; i++)
		fake_port_release(&e->fp[i]);
	sw_destroy(e->sw);
	/* Every frame any test created completed exactly once. */
	for (unsigned int i = 0; i < FAKE_PKTS; i++)
		if (fake_pkts[i].pkt.done)
			assert_int_equal(fake_pkts[i].done_calls, 1);
	return 0;
}

static void test_learn_then_unicast(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6];
	uint16_t num;

	fake_mac(a, 1);
	fake_mac(b, 2);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 1, bcast, a), 1);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), 0);
	assert_int_equal(num, e->fp[0].port->num);

	fake_nlog = 0;
	assert_int_equal(fake_send(e->sw, &e->fp[1], 2, a, b), 1);
	assert_int_equal(fake_nlog, 1);
	assert_true(fake_delivered(0, 2));
	assert_int_equal(fake_stat(&e->fp[0], "tx_packets"), 1); /* its own flood excluded */
	assert_int_equal(fake_stat(&e->fp[0], "tx_bytes"), 60);
	assert_int_equal(fake_stat(&e->fp[1], "rx_packets"), 1);
	assert_int_equal(fake_stat(&e->fp[1], "flood"), 0);
	assert_int_equal(fake_stat(&e->fp[0], "learn_new"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 1);
	assert_int_equal(sw_fdb_count(e->sw), 2);
}

static void test_unknown_unicast_floods(void **state)
{
	struct env *e = *state;
	uint8_t a[6], u[6];

	fake_mac(a, 1);
	fake_mac(u, 99);
	assert_int_equal(fake_send(e->sw, &e->fp[2], 7, u, a), 1);
	assert_int_equal(fake_nlog, NPORTS - 1);
	assert_false(fake_delivered(2, 7));
	for (unsigned int i = 0; i < NPORTS; i++)
		if (i != 2)
			assert_true(fake_delivered(i, 7));
	assert_int_equal(fake_stat(&e->fp[2], "flood"), 1);
}

static void test_broadcast_multicast_flood(void **state)
{
	struct env *e = *state;
	const uint8_t *dsts[] = {bcast, mcast4, mcast6};
	uint8_t a[6];

	fake_mac(a, 1);
	for (unsigned int k = 0; k < 3; k++) {
		fake_nlog = 0;
		assert_int_equal(fake_send(e->sw, &e->fp[1], 10 + k, dsts[k], a), 1);
		assert_int_equal(fake_nlog, NPORTS - 1);
		assert_false(fake_delivered(1, 10 + k));
	}
	assert_int_equal(fake_stat(&e->fp[1], "flood"), 3);
}

static void test_same_port_dropped(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6];

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	fake_nlog = 0;
	assert_int_equal(fake_send(e->sw, &e->fp[0], 2, a, b), 0);
	assert_int_equal(fake_nlog, 0);
	assert_int_equal(fake_stat(&e->fp[0], "same_port"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_dropped"), 1);
	assert_int_equal(fake_pkts[2].done_calls, 1);
}

/*
 * A port alone on the switch: what it floods has nowhere to go, dropped
 * and counted as such (rx_no_dest), so that rx_dropped adds up by reason.
 */
static void test_alone_no_dest(void **state)
{
	struct env *e = *state;
	uint8_t a[6];

	for (unsigned int i = 1; i < NPORTS; i++)
		assert_int_equal(sw_port_del(e->sw, e->fp[i].port), 0);
	fake_mac(a, 1);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 1, bcast, a), 0);
	assert_int_equal(fake_stat(&e->fp[0], "flood"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_no_dest"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_dropped"), 1);
	assert_int_equal(fake_pkts[1].done_calls, 1);
	/* Not alone: flooded, nothing dropped. */
	fake_port_add(e->sw, &e->fp[1], 1);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 2, bcast, a), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_no_dest"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_dropped"), 1);
}

static void test_runts_dropped(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[5];
	uint8_t a[6];

	fake_mac(a, 1);
	for (unsigned int i = 0; i < 5; i++)
		p[i] = fake_frame(i, bcast, a, 60);
	p[0]->hdr_len = 13;
	p[1]->len = 13;
	p[1]->hdr_len = 13;
	p[2]->hdr_len = 61; /* header copy longer than the frame */
	p[3]->hdr = NULL;
	p[4]->nfrags = SW_PKT_MAX_FRAGS + 1;
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 5), 0);
	assert_int_equal(fake_nlog, 0);
	assert_int_equal(fake_stat(&e->fp[0], "rx_length_errors"), 5);
	assert_int_equal(fake_stat(&e->fp[0], "rx_dropped"), 5);
	assert_int_equal(fake_stat(&e->fp[0], "rx_packets"), 5);
	assert_int_equal(sw_fdb_count(e->sw), 0);
	/* A frame of exactly SW_PKT_MAX_FRAGS pieces is whole, and goes on. */
	p[0] = fake_frame(5, bcast, a, 60);
	p[0]->nfrags = SW_PKT_MAX_FRAGS;
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 1), 1);
	assert_int_equal(fake_nlog, NPORTS - 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_length_errors"), 5);
}

/* Every per-port counter, read by name into @v (for the deltas of one batch). */
static void stats_of(struct fake_port *fp, uint64_t v[64])
{
	unsigned int n;

	sw_port_stats_names(&n);
	assert_true(n <= 64);
	sw_port_stats_get(fp->port, v);
}

/* @name's change between @before and @after. */
static uint64_t delta(const uint64_t *before, const uint64_t *after, const char *name)
{
	unsigned int n;
	const struct sw_stat_desc *d = sw_port_stats_names(&n);

	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return after[i] - before[i];
	fail_msg("no counter %s", name);
	return 0;
}

/*
 * One batch with a frame of each fate, each of its own length: what
 * `pvnet show` and `status` report for it is exact, on the input port
 * (every frame and byte received, each drop under its reason, the sum of
 * those as rx_dropped, the floods) and on each output port (what it took,
 * in frames and bytes).  Tests of one drop reason at a time cannot tell a
 * counter added to the wrong field or from the wrong sum.
 */
static void test_counters_one_batch(void **state)
{
	static const uint8_t lacp[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x02};
	struct env *e = *state;
	uint64_t before[NPORTS][64], after[NPORTS][64];
	uint8_t a[6], b[6], u[6];
	struct sw_pkt *p[7];

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_mac(u, 99);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	fake_send(e->sw, &e->fp[1], 2, bcast, b);
	fake_nlog = 0;
	for (unsigned int i = 0; i < NPORTS; i++)
		stats_of(&e->fp[i], before[i]);
	p[0] = fake_frame(10, b, a, 100);     /* unicast to p1 */
	p[1] = fake_frame(11, bcast, a, 200); /* flooded */
	p[2] = fake_frame(12, a, a, 300);     /* to its own port: same_port */
	p[3] = fake_frame(13, bcast, a, 400); /* a runt header: rx_length_errors */
	p[3]->hdr_len = 13;
	p[4] = fake_frame(14, bcast, mcast4, 500); /* rx_src_invalid */
	p[5] = fake_frame(15, lacp, a, 600);	   /* rx_link_local */
	p[6] = fake_frame(16, u, a, 700);	   /* unknown: flooded */
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 7), 3);
	for (unsigned int i = 0; i < NPORTS; i++)
		stats_of(&e->fp[i], after[i]);

	assert_int_equal(delta(before[0], after[0], "rx_packets"), 7);
	assert_int_equal(delta(before[0], after[0], "rx_bytes"), 2800);
	assert_int_equal(delta(before[0], after[0], "rx_dropped"), 4);
	assert_int_equal(delta(before[0], after[0], "rx_length_errors"), 1);
	assert_int_equal(delta(before[0], after[0], "rx_src_invalid"), 1);
	assert_int_equal(delta(before[0], after[0], "rx_link_local"), 1);
	assert_int_equal(delta(before[0], after[0], "same_port"), 1);
	assert_int_equal(delta(before[0], after[0], "rx_no_dest"), 0);
	assert_int_equal(delta(before[0], after[0], "flood"), 2);
	assert_int_equal(delta(before[0], after[0], "tx_packets"), 0);
	assert_int_equal(delta(before[0], after[0], "learn_new"), 0);
	assert_int_equal(delta(before[1], after[1], "tx_packets"), 3);
	assert_int_equal(delta(before[1], after[1], "tx_bytes"), 100 + 200 + 700);
	for (unsigned int i = 1; i < NPORTS; i++) {
		assert_int_equal(delta(before[i], after[i], "rx_packets"), 0);
		assert_int_equal(delta(before[i], after[i], "tx_dropped"), 0);
		if (i > 1) {
			assert_int_equal(delta(before[i], after[i], "tx_packets"), 2);
			assert_int_equal(delta(before[i], after[i], "tx_bytes"), 200 + 700);
		}
	}
	assert_int_equal(fake_nlog, 1 + 3 + 3);
	for (unsigned int id = 12; id <= 15; id++)
		assert_int_equal(fake_count_pkt(id), 0);
}

static void test_invalid_source_never_learned(void **state)
{
	struct env *e = *state;
	uint8_t zero[6] = {0};
	uint16_t num;

	assert_int_equal(fake_send(e->sw, &e->fp[0], 1, bcast, mcast4), 0);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 2, bcast, bcast), 0);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 3, bcast, zero), 0);
	assert_int_equal(fake_nlog, 0);
	assert_int_equal(fake_stat(&e->fp[0], "rx_src_invalid"), 3);
	assert_int_equal(sw_fdb_lookup(e->sw, mcast4, &num), -ENOENT);
	assert_int_equal(sw_fdb_count(e->sw), 0);
}

static void test_link_local_not_forwarded(void **state)
{
	struct env *e = *state;
	const uint8_t stp[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x00};
	const uint8_t pause[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	const uint8_t lldp[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
	const uint8_t last[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0f};
	const uint8_t not_ll[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x10};
	uint8_t a[6];

	fake_mac(a, 1);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 1, stp, a), 0);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 2, pause, a), 0);
	assert_int_equal(sw_fdb_count(e->sw), 0); /* a link-local frame's source is not learnt */
	assert_int_equal(fake_send(e->sw, &e->fp[0], 3, not_ll, a), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_link_local"), 2);
	/* The upper half of the range too: LLDP, and the last reserved group. */
	assert_int_equal(fake_send(e->sw, &e->fp[0], 4, lldp, a), 0);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 5, last, a), 0);
	assert_int_equal(fake_stat(&e->fp[0], "rx_link_local"), 4);
	assert_int_equal(fake_nlog, NPORTS - 1); /* only not_ll went out */
}

/*
 * Destinations the table cannot hold, the all-zero MAC (never a valid
 * source), matches no entry, not even a free slot: flooded like any
 * unknown unicast.  A MAC whose first byte has its top bit set is learnt
 * once and found like any other (the table keeps all 48 bits).
 */
static void test_mac_edges(void **state)
{
	struct env *e = *state;
	const uint8_t zero[6] = {0};
	const uint8_t high[6] = {0x82, 0x00, 0x00, 0x00, 0x00, 0x01};
	uint8_t a[6];
	uint16_t num;

	fake_mac(a, 1);
	fake_send(e->sw, &e->fp[1], 1, bcast, a);
	fake_nlog = 0;
	assert_int_equal(sw_fdb_lookup(e->sw, zero, &num), -ENOENT);
	assert_int_equal(fake_send(e->sw, &e->fp[1], 2, zero, a), 1);
	assert_int_equal(fake_nlog, NPORTS - 1);
	assert_int_equal(fake_stat(&e->fp[1], "flood"), 2);
	assert_int_equal(fake_stat(&e->fp[1], "same_port"), 0);

	for (unsigned int i = 0; i < 3; i++)
		fake_send(e->sw, &e->fp[2], 10 + i, bcast, high);
	assert_int_equal(fake_stat(&e->fp[2], "learn_new"), 1);
	assert_int_equal(fake_stat(&e->fp[2], "fdb_entries"), 1);
	assert_int_equal(sw_fdb_count(e->sw), 2);
	assert_int_equal(sw_fdb_lookup(e->sw, high, &num), 0);
	assert_int_equal(num, e->fp[2].port->num);
	fake_nlog = 0;
	assert_int_equal(fake_send(e->sw, &e->fp[1], 20, high, a), 1);
	assert_int_equal(fake_nlog, 1);
	assert_true(fake_delivered(2, 20));
}

static void test_mac_moves(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6];
	uint16_t num;

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	fake_send(e->sw, &e->fp[2], 2, bcast, a);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), 0);
	assert_int_equal(num, e->fp[2].port->num);
	assert_int_equal(fake_stat(&e->fp[2], "learn_moved"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 0);
	assert_int_equal(fake_stat(&e->fp[2], "fdb_entries"), 1);
	assert_int_equal(sw_fdb_count(e->sw), 1);

	fake_nlog = 0;
	fake_send(e->sw, &e->fp[1], 3, a, b);
	assert_int_equal(fake_nlog, 1);
	assert_true(fake_delivered(2, 3));
}

static void test_ageing(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6], c[6];
	uint64_t t0 = fake_now_ns, s = 1000000000ULL;
	uint16_t num;

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_mac(c, 3);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	fake_send(e->sw, &e->fp[1], 2, bcast, b);
	/* b is seen again at +200 s, a is not. */
	fake_now_ns = t0 + 200 * s;
	fake_send(e->sw, &e->fp[1], 3, c, b);
	assert_int_equal(sw_fdb_age(e->sw, t0 + 299 * s), 0);
	assert_int_equal(sw_fdb_age(e->sw, t0 + 300 * s), 1);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), -ENOENT);
	assert_int_equal(sw_fdb_lookup(e->sw, b, &num), 0);
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 0);

	/* Traffic to the aged MAC floods again. */
	fake_nlog = 0;
	fake_now_ns = t0 + 300 * s;
	fake_send(e->sw, &e->fp[2], 4, a, c);
	assert_int_equal(fake_nlog, NPORTS - 1);

	assert_int_equal(sw_fdb_age(e->sw, t0 + 500 * s), 1); /* b */
	assert_int_equal(sw_fdb_count(e->sw), 1);	      /* c, seen at +300 */
	uint64_t v[3];
	sw_stats_get(e->sw, v);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 2);
}

static void test_port_mac_limit(void **state)
{
	struct env *e = *state;
	uint8_t m[6];

	sw_port_set_mac_limit(e->fp[0].port, 4);
	for (unsigned int i = 0; i < 10; i++) {
		fake_mac(m, 100 + i);
		/* Not learned, but still forwarded. */
		assert_int_equal(fake_send(e->sw, &e->fp[0], i, bcast, m), 1);
	}
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 4);
	assert_int_equal(fake_stat(&e->fp[0], "learn_new"), 4);
	assert_int_equal(fake_stat(&e->fp[0], "learn_limit"), 6);
	/* A full port cannot take a MAC from another port either. */
	fake_mac(m, 500);
	fake_send(e->sw, &e->fp[1], 20, bcast, m);
	fake_send(e->sw, &e->fp[0], 21, bcast, m);
	assert_int_equal(fake_stat(&e->fp[1], "fdb_entries"), 1);
	assert_int_equal(fake_stat(&e->fp[0], "learn_limit"), 7);
	/* Other ports still learn. */
	for (unsigned int i = 0; i < 10; i++) {
		fake_mac(m, 200 + i);
		fake_send(e->sw, &e->fp[2], 30 + i, bcast, m);
	}
	assert_int_equal(fake_stat(&e->fp[2], "fdb_entries"), 10);
	assert_int_equal(sw_fdb_count(e->sw), 15);
}

/*
 * The limits hold inside one batch too: learning is applied after the
 * batch was classified, so the early, lock-free checks alone would let a
 * batch of new sources through.
 */
static void test_port_mac_limit_one_batch(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[10];
	uint8_t m[6], n[6];
	uint16_t num;

	sw_port_set_mac_limit(e->fp[0].port, 4);
	for (unsigned int i = 0; i < 10; i++) {
		fake_mac(m, 100 + i);
		p[i] = fake_frame(i, bcast, m, 60);
	}
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 10), 10);
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 4);
	assert_int_equal(fake_stat(&e->fp[0], "learn_new"), 4);
	assert_int_equal(fake_stat(&e->fp[0], "learn_limit"), 6);
	assert_int_equal(sw_fdb_count(e->sw), 4);

	/* A batch that fills the port first cannot then take another port's MAC. */
	fake_mac(m, 500);
	fake_send(e->sw, &e->fp[1], 20, bcast, m);
	sw_port_set_mac_limit(e->fp[2].port, 1);
	fake_mac(n, 501);
	p[0] = fake_frame(21, bcast, n, 60);
	p[1] = fake_frame(22, bcast, m, 60);
	assert_int_equal(sw_forward(e->sw, e->fp[2].port, p, 2), 2);
	assert_int_equal(sw_fdb_lookup(e->sw, m, &num), 0);
	assert_int_equal(num, e->fp[1].port->num);
	assert_int_equal(fake_stat(&e->fp[1], "fdb_entries"), 1);
	assert_int_equal(fake_stat(&e->fp[2], "fdb_entries"), 1);
	assert_int_equal(fake_stat(&e->fp[2], "learn_moved"), 0);
	assert_int_equal(fake_stat(&e->fp[2], "learn_limit"), 1);
}

/* setup_small's 8 entries in total are a bound for one batch of new sources as well. */
static void test_table_full_one_batch(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[20];
	uint8_t m[6];
	uint64_t v[3];

	for (unsigned int i = 0; i < 20; i++) {
		fake_mac(m, 100 + i);
		p[i] = fake_frame(i, bcast, m, 60);
	}
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 20), 20);
	assert_int_equal(sw_fdb_count(e->sw), 8);
	sw_stats_get(e->sw, v);
	assert_int_equal(v[0], 8);
	assert_int_equal(v[2], 12);
	assert_int_equal(fake_stat(&e->fp[0], "fdb_entries"), 8);
	assert_int_equal(fake_stat(&e->fp[0], "learn_full"), 12);
}

static void test_table_full(void **state)
{
	struct env *e = *state;
	uint8_t m[6], x[6];
	uint64_t v[3];
	uint16_t num;

	/* setup_small: 8 entries in total, per-port limit out of the way. */
	for (unsigned int i = 0; i < 20; i++) {
		fake_mac(m, 100 + i);
		assert_int_equal(fake_send(e->sw, &e->fp[i % NPORTS], i, bcast, m), 1);
	}
	assert_int_equal(sw_fdb_count(e->sw), 8);
	sw_stats_get(e->sw, v);
	assert_int_equal(v[0], 8);
	assert_int_equal(v[2], 12);
	assert_int_equal(fake_stat(&e->fp[0], "learn_full") + fake_stat(&e->fp[1], "learn_full") +
			     fake_stat(&e->fp[2], "learn_full") +
			     fake_stat(&e->fp[3], "learn_full"),
			 12);
	/* A known MAC may still move while the table is full. */
	fake_mac(m, 100);
	fake_send(e->sw, &e->fp[3], 30, bcast, m);
	assert_int_equal(sw_fdb_lookup(e->sw, m, &num), 0);
	assert_int_equal(num, e->fp[3].port->num);
	/* Unlearned destinations flood. */
	fake_mac(x, 119);
	fake_nlog = 0;
	fake_send(e->sw, &e->fp[0], 31, x, m);
	assert_int_equal(fake_nlog, NPORTS - 1);
}

static void test_flood_refcount_deferred(void **state)
{
	struct env *e = *state;
	uint8_t a[6];

	fake_mac(a, 1);
	e->fp[2].hold = true;
	e->fp[3].hold = true;
	assert_int_equal(fake_send(e->sw, &e->fp[0], 5, bcast, a), 1);
	assert_int_equal(fake_nlog, 3);
	assert_int_equal(fake_pkts[5].done_calls, 0);
	assert_int_equal(atomic_load(&fake_pkts[5].pkt.refs), 2);
	fake_port_release(&e->fp[3]);
	assert_int_equal(fake_pkts[5].done_calls, 0);
	fake_port_release(&e->fp[2]);
	assert_int_equal(fake_pkts[5].done_calls, 1);
}

static void test_xmit_partial(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[3];
	uint8_t a[6];

	fake_mac(a, 1);
	e->fp[1].accept = 1;
	e->fp[2].accept = 0;
	e->fp[3].hold = true;
	for (unsigned int i = 0; i < 3; i++)
		p[i] = fake_frame(i, bcast, a, 100);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 3), 3); /* port 3 took all */
	assert_int_equal(fake_stat(&e->fp[1], "tx_packets"), 1);
	assert_int_equal(fake_stat(&e->fp[1], "tx_dropped"), 2);
	assert_int_equal(fake_stat(&e->fp[2], "tx_dropped"), 3);
	assert_int_equal(fake_stat(&e->fp[3], "tx_packets"), 3);
	assert_int_equal(fake_stat(&e->fp[3], "tx_bytes"), 300);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(fake_pkts[i].done_calls, 0);
	fake_port_release(&e->fp[3]);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(fake_pkts[i].done_calls, 1);

	/* Nobody accepts: not forwarded, still completed once. */
	e->fp[1].accept = 0;
	e->fp[3].accept = 0;
	p[0] = fake_frame(10, bcast, a, 100);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 1), 0);
	assert_int_equal(fake_pkts[10].done_calls, 1);
}

/* A port whose xmit() claims more frames than it was given. */
static unsigned int overclaim_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n + 5;
}

static uint64_t port_stat(struct sw_port *p, const char *name)
{
	unsigned int n;
	const struct sw_stat_desc *d = sw_port_stats_names(&n);

	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return sw_stat_read(&p->stats, &d[i]);
	fail_msg("no counter %s", name);
	return 0;
}

/* A broken xmit() cannot make the counters claim what it never got. */
static void test_xmit_overclaim(void **state)
{
	static const struct sw_port_ops ops = {.xmit = overclaim_xmit};
	struct env *e = *state;
	struct sw_port *liar;
	struct sw_pkt *p[3];
	uint8_t a[6];

	assert_int_equal(sw_port_add(e->sw, "liar", &ops, NULL, &liar), 0);
	fake_mac(a, 1);
	for (unsigned int i = 0; i < 3; i++)
		p[i] = fake_frame(i, bcast, a, 100);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 3), 3);
	assert_int_equal(port_stat(liar, "tx_packets"), 3);
	assert_int_equal(port_stat(liar, "tx_bytes"), 300);
	assert_int_equal(port_stat(liar, "tx_dropped"), 0);
	assert_int_equal(sw_port_del(e->sw, liar), 0);
}

/* Frames of one batch, to B, to C and flooded, arrive per port in input order. */
static void test_order_per_port(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[150];
	uint8_t a[6], b[6], c[6];
	unsigned int last[NPORTS], n = 0;

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_mac(c, 3);
	fake_send(e->sw, &e->fp[1], 1, bcast, b);
	fake_send(e->sw, &e->fp[2], 2, bcast, c);
	fake_nlog = 0;
	/* Two calls; the second is longer than one internal batch. */
	for (unsigned int round = 0; round < 2; round++) {
		unsigned int cnt = round ? 150 : 40;

		for (unsigned int i = 0; i < cnt; i++, n++) {
			const uint8_t *d = (n % 3 == 0) ? b : (n % 3 == 1) ? c : bcast;

			p[i] = fake_frame(100 + n, d, a, 60);
		}
		assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, cnt), cnt);
	}
	for (unsigned int i = 0; i < NPORTS; i++)
		last[i] = 0;
	for (unsigned int i = 0; i < fake_nlog; i++) {
		assert_true(fake_log[i].pkt > last[fake_log[i].port]);
		last[fake_log[i].port] = fake_log[i].pkt;
	}
	assert_int_equal(fake_count_port(0), 0);
	assert_int_equal(fake_count_port(1), 64 + 63); /* n % 3 == 0 to b, == 2 flooded */
	assert_int_equal(fake_count_port(2), 63 + 63);
	assert_int_equal(fake_count_port(3), 63);    /* floods only */
	assert_int_equal(e->fp[1].calls, 1 + 1 + 3); /* one xmit per internal batch */
}

/*
 * One batch whose frames repeat and change source and destination (the
 * switch remembers the last of each within a batch): every frame still
 * goes where its own addresses say, and both sources are learned.
 */
static void test_batch_repeats_and_changes(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6], c[6], d[6], u[6];
	struct sw_pkt *p[7];
	uint16_t num;

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_mac(c, 3);
	fake_mac(d, 4);
	fake_mac(u, 99);
	fake_send(e->sw, &e->fp[1], 1, bcast, b);
	fake_send(e->sw, &e->fp[2], 2, bcast, c);
	fake_nlog = 0;
	p[0] = fake_frame(10, b, a, 60);
	p[1] = fake_frame(11, b, a, 60);
	p[2] = fake_frame(12, u, a, 60); /* unknown: flooded */
	p[3] = fake_frame(13, b, a, 60);
	p[4] = fake_frame(14, b, d, 60); /* a second source */
	p[5] = fake_frame(15, b, d, 60);
	p[6] = fake_frame(16, c, a, 60);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 7), 7);
	for (unsigned int id = 10; id <= 15; id++)
		assert_true(fake_delivered(1, id));
	assert_true(fake_delivered(2, 12));
	assert_true(fake_delivered(3, 12));
	assert_true(fake_delivered(2, 16));
	assert_false(fake_delivered(2, 10));
	assert_false(fake_delivered(3, 16));
	assert_int_equal(fake_nlog, 6 + 2 + 1);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), 0);
	assert_int_equal(num, e->fp[0].port->num);
	assert_int_equal(sw_fdb_lookup(e->sw, d, &num), 0);
	assert_int_equal(num, e->fp[0].port->num);
}

static void test_port_del_removes_macs(void **state)
{
	struct env *e = *state;
	uint8_t a[6], b[6];
	uint16_t num;

	fake_mac(a, 1);
	fake_mac(b, 2);
	fake_send(e->sw, &e->fp[3], 1, bcast, a);
	assert_int_equal(sw_fdb_count(e->sw), 1);
	assert_int_equal(sw_port_del(e->sw, e->fp[3].port), 0);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), -ENOENT);
	assert_int_equal(sw_fdb_count(e->sw), 0);
	fake_nlog = 0;
	fake_send(e->sw, &e->fp[0], 2, a, b);
	assert_int_equal(fake_nlog, 2);
	assert_false(fake_delivered(3, 2));
	assert_int_equal(sw_port_del(e->sw, e->fp[1].port), 0);
	assert_int_equal(sw_port_del(e->sw, e->fp[2].port), 0);
	/* Alone: nothing to flood to, dropped and completed. */
	fake_nlog = 0;
	assert_int_equal(fake_send(e->sw, &e->fp[0], 3, bcast, b), 0);
	assert_int_equal(fake_nlog, 0);
	assert_int_equal(fake_pkts[3].done_calls, 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_dropped"), 1);
	/* Numbers are reused; the teardown wants four ports again. */
	fake_port_add(e->sw, &e->fp[1], 1);
	fake_port_add(e->sw, &e->fp[2], 2);
	fake_port_add(e->sw, &e->fp[3], 3);
	assert_int_equal(e->fp[3].port->num, 3);
	/* Port 0 goes with its MACs only (an empty slot is no entry of port 0). */
	fake_send(e->sw, &e->fp[2], 4, bcast, a);
	assert_int_equal(sw_fdb_count(e->sw), 2); /* b on port 0, a on port 2 */
	assert_int_equal(sw_port_del(e->sw, e->fp[0].port), 0);
	assert_int_equal(sw_fdb_count(e->sw), 1);
	assert_int_equal(sw_fdb_lookup(e->sw, b, &num), -ENOENT);
	assert_int_equal(sw_fdb_lookup(e->sw, a, &num), 0);
	fake_port_add(e->sw, &e->fp[0], 0);
	assert_int_equal(e->fp[0].port->num, 0);
}

static struct fake_port more_ports[SW_MAX_PORTS - NPORTS];

/*
 * A switch with every port number in use: a flood reaches each other port
 * once, and frames to MACs on ports past 63 and past 127 (another word of
 * the batch's port bitmap, the high bit of the table's port field) go to
 * those ports alone, in one batch with others to ports 32 and 64 below
 * them.
 */
static void test_all_ports(void **state)
{
	static const unsigned int dests[] = {32, 63, 64, 96, 127, 128, 160, 255};
	const unsigned int nd = sizeof(dests) / sizeof(dests[0]);
	struct env *e = *state;
	struct sw_pkt *p[sizeof(dests) / sizeof(dests[0]) + 1];
	struct fake_port *fp[SW_MAX_PORTS];
	uint8_t a[6], m[6];
	uint16_t num;

	for (unsigned int i = 0; i < NPORTS; i++)
		fp[i] = &e->fp[i];
	for (unsigned int i = NPORTS; i < SW_MAX_PORTS; i++) {
		fp[i] = &more_ports[i - NPORTS];
		fake_port_add(e->sw, fp[i], i);
		assert_int_equal(fp[i]->port->num, i);
	}
	fake_mac(a, 1);
	assert_int_equal(fake_send(e->sw, fp[0], 1, bcast, a), 1);
	assert_int_equal(fake_nlog, SW_MAX_PORTS - 1);
	for (unsigned int i = 1; i < SW_MAX_PORTS; i++)
		assert_true(fake_delivered(i, 1));

	for (unsigned int k = 0; k < nd; k++) {
		fake_mac(m, 1000 + dests[k]);
		fake_send(e->sw, fp[dests[k]], 100 + k, bcast, m);
		assert_int_equal(sw_fdb_lookup(e->sw, m, &num), 0);
		assert_int_equal(num, dests[k]);
	}
	fake_nlog = 0;
	for (unsigned int k = 0; k < nd; k++) {
		fake_mac(m, 1000 + dests[k]);
		p[k] = fake_frame(200 + k, m, a, 60);
	}
	p[nd] = fake_frame(300, bcast, a, 60);
	assert_int_equal(sw_forward(e->sw, fp[0]->port, p, nd + 1), nd + 1);
	assert_int_equal(fake_nlog, nd + SW_MAX_PORTS - 1);
	for (unsigned int k = 0; k < nd; k++) {
		assert_int_equal(fake_count_pkt(200 + k), 1);
		assert_true(fake_delivered(dests[k], 200 + k));
		assert_int_equal(fake_count_port(dests[k]), 2); /* its own and the flood */
	}
	for (unsigned int i = NPORTS; i < SW_MAX_PORTS; i++)
		assert_int_equal(sw_port_del(e->sw, fp[i]->port), 0);
}

static struct sw *deadlock_sw;
static int deadlock_ret;

static unsigned int xmit_del_self(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	deadlock_ret = sw_port_del(deadlock_sw, p);
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n;
}

static void test_port_add_errors(void **state)
{
	static const struct sw_port_ops ops = {.xmit = xmit_del_self};
	static const struct sw_port_ops noops = {.xmit = NULL};
	struct env *e = *state;
	struct sw_port *ports[SW_MAX_PORTS], *p;
	char name[SW_PORT_NAME_MAX];
	uint8_t a[6];
	unsigned int n = 0;

	assert_int_equal(sw_port_add(e->sw, "0123456789012345678901234567890123", &ops, NULL, &p),
			 -ENAMETOOLONG);
	/* The name and its NUL fill SW_PORT_NAME_MAX at most: 31 characters, not 32. */
	assert_int_equal(sw_port_add(e->sw, "01234567890123456789012345678901", &ops, NULL, &p),
			 -ENAMETOOLONG);
	assert_int_equal(sw_port_add(e->sw, "0123456789012345678901234567890", &ops, NULL, &p), 0);
	assert_string_equal(p->name, "0123456789012345678901234567890");
	assert_int_equal(sw_port_del(e->sw, p), 0);
	assert_int_equal(sw_port_add(e->sw, "", &ops, NULL, &p), -EINVAL);
	assert_int_equal(sw_port_add(e->sw, "x", &noops, NULL, &p), -EINVAL);
	for (;;) {
		snprintf(name, sizeof(name), "many%u", n);
		if (sw_port_add(e->sw, name, &ops, NULL, &ports[n]) < 0)
			break;
		n++;
	}
	assert_int_equal(n, SW_MAX_PORTS - NPORTS);
	assert_int_equal(sw_port_add(e->sw, "more", &ops, NULL, &p), -ENOSPC);
	for (unsigned int i = 1; i < n; i++)
		assert_int_equal(sw_port_del(e->sw, ports[i]), 0);
	struct sw_port fake = {.sw = e->sw, .num = 200};
	assert_int_equal(sw_port_del(e->sw, &fake), -EINVAL);
	/* Nor is one that claims the number of a port that is there: that port stays. */
	fake.num = e->fp[1].port->num;
	assert_int_equal(sw_port_del(e->sw, &fake), -EINVAL);
	fake_mac(a, 2);
	fake_nlog = 0;
	assert_int_equal(fake_send(e->sw, &e->fp[0], 2, bcast, a), 1);
	assert_true(fake_delivered(1, 2));

	/* sw_port_del from inside xmit must refuse, not wait for itself. */
	deadlock_sw = e->sw;
	fake_mac(a, 1);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	assert_int_equal(deadlock_ret, -EDEADLK);
	assert_int_equal(sw_port_del(e->sw, ports[0]), 0);
}

/*
 * A name is one port's: `pvnet capture NAME` takes the first port of that
 * name, so a second one (a TAP uplink called like a guest's vif) would hide
 * the first from it.  Refused whatever the port type; free again once the
 * port holding it is deleted.
 */
static void test_port_name_unique(void **state)
{
	static const struct sw_port_ops ops = {.xmit = xmit_del_self};
	struct env *e = *state;
	struct sw_port *p = NULL, *q = NULL;
	uint8_t a[6];

	/* fake_port_add() named the setup's ports p0..p3. */
	assert_int_equal(sw_port_add(e->sw, "p1", &ops, NULL, &p), -EEXIST);
	assert_null(p);
	/* ... and p1 is still the port its name finds, and still forwards. */
	fake_mac(a, 1);
	assert_int_equal(fake_send(e->sw, &e->fp[0], 0, bcast, a), 1);
	assert_true(fake_delivered(1, 0));

	assert_int_equal(sw_port_add(e->sw, "vif1.0", &ops, NULL, &p), 0);
	assert_int_equal(sw_port_add(e->sw, "vif1.0", &ops, NULL, &q), -EEXIST);
	assert_null(q);
	/* Names differ by a byte: not the same name. */
	assert_int_equal(sw_port_add(e->sw, "vif1.00", &ops, NULL, &q), 0);
	assert_int_equal(sw_port_del(e->sw, q), 0);
	q = NULL;
	/* Deleted, its name is free again. */
	assert_int_equal(sw_port_del(e->sw, p), 0);
	assert_int_equal(sw_port_add(e->sw, "vif1.0", &ops, NULL, &q), 0);
	assert_int_equal(sw_port_del(e->sw, q), 0);
}

static void test_stats_table(void **state)
{
	struct env *e = *state;
	const struct sw_stat_desc *d;
	uint64_t v[64];
	unsigned int n;
	uint8_t a[6];

	fake_mac(a, 1);
	fake_send(e->sw, &e->fp[0], 1, bcast, a);
	d = sw_port_stats_names(&n);
	assert_true(n > 10 && n <= 64);
	assert_string_equal(d[0].name, "rx_packets");
	sw_port_stats_get(e->fp[0].port, v);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(v[i], sw_stat_read(&e->fp[0].port->stats, &d[i]));
		for (unsigned int j = 0; j < i; j++)
			assert_string_not_equal(d[i].name, d[j].name);
	}
	assert_int_equal(v[0], 1);
	d = sw_stats_names(&n);
	assert_int_equal(n, 3);
	assert_string_equal(d[0].name, "fdb_entries");
}

static void test_config_bounds(void **state)
{
	struct sw_config cfg;
	struct sw *sw;

	sw_config_init(&cfg);
	/* every port at its limit fits: guests cannot fill the table for a later one */
	assert_int_equal(cfg.port_mac_limit, 64);
	assert_int_equal(cfg.fdb_max, SW_MAX_PORTS * cfg.port_mac_limit);
	assert_int_equal(cfg.ageing_s, 300);
	cfg.fdb_max = 0;
	assert_int_equal(sw_create(&cfg, &sw), -EINVAL);
	cfg.fdb_max = SW_FDB_MAX_LIMIT + 1;
	assert_int_equal(sw_create(&cfg, &sw), -EINVAL);
	sw_config_init(&cfg);
	cfg.ageing_s = 0;
	assert_int_equal(sw_create(&cfg, &sw), -EINVAL);
	cfg.ageing_s = SW_AGEING_MAX_S + 1;
	assert_int_equal(sw_create(&cfg, &sw), -EINVAL);
	assert_int_equal(sw_create(NULL, &sw), 0);
	sw_destroy(sw);
	/*
	 * Each bound itself is a valid setting (pvnetd --mac-ageing 1..1000000):
	 * a table of one MAC or of the most, ageing after a second or after the
	 * longest time.
	 */
	sw_config_init(&cfg);
	cfg.fdb_max = 1;
	cfg.ageing_s = 1;
	assert_int_equal(sw_create(&cfg, &sw), 0);
	sw_destroy(sw);
	cfg.fdb_max = SW_FDB_MAX_LIMIT;
	cfg.ageing_s = SW_AGEING_MAX_S;
	assert_int_equal(sw_create(&cfg, &sw), 0);
	sw_destroy(sw);
	sw_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_learn_then_unicast, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unknown_unicast_floods, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_broadcast_multicast_flood, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_same_port_dropped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_alone_no_dest, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_runts_dropped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_counters_one_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_source_never_learned, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_link_local_not_forwarded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mac_edges, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mac_moves, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ageing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_mac_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_mac_limit_one_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_full, setup_small, teardown),
	    cmocka_unit_test_setup_teardown(test_table_full_one_batch, setup_small, teardown),
	    cmocka_unit_test_setup_teardown(test_flood_refcount_deferred, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_xmit_partial, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_xmit_overclaim, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_order_per_port, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_batch_repeats_and_changes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_del_removes_macs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_add_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_all_ports, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_name_unique, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stats_table, setup, teardown),
	    cmocka_unit_test(test_config_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
