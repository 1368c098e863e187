// SPDX-License-Identifier: MIT
/* test_fdb.c - unit tests of the MAC table: keyed hashing, buckets, learning, ageing */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fake_port.h"
#include "switch/internal.h"

#define NMACS 64
#define S     1000000000ULL

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Two switches hash the same MACs differently: the key is random per switch. */
static void test_hash_keyed(void **state)
{
	struct sw *s1 = fake_sw(0, 0), *s2 = fake_sw(0, 0);
	unsigned int same_hash = 0, same_bucket = 0;
	uint8_t m[6];

	for (unsigned int i = 0; i < NMACS; i++) {
		uint64_t h1, h2;

		fake_mac(m, i);
		h1 = sw_fdb_hash(s1, m);
		h2 = sw_fdb_hash(s2, m);
		assert_int_equal(h1, sw_fdb_hash(s1, m)); /* stable within one switch */
		same_hash += h1 == h2;
		same_bucket += sw_fdb_bucket(s1, h1) == sw_fdb_bucket(s2, h2);
	}
	/* 1024 buckets: about 0.06 of 64 collide by chance; all 64 never do. */
	assert_int_equal(same_hash, 0);
	assert_true(same_bucket < NMACS / 2);
	sw_destroy(s1);
	sw_destroy(s2);
}

/* Consecutive MACs spread over the buckets (no trivially chosen collisions). */
static void test_hash_spreads(void **state)
{
	struct sw *sw = fake_sw(0, 0);
	static uint8_t used[4096];
	unsigned int distinct = 0;
	uint8_t m[6];

	memset(used, 0, sizeof(used));
	for (unsigned int i = 0; i < 256; i++) {
		uint32_t b;

		fake_mac(m, i);
		b = sw_fdb_bucket(sw, sw_fdb_hash(sw, m));
		assert_true(b < 4096); /* 16384 entries -> 32768 slots -> 4096 buckets */
		distinct += !used[b];
		used[b] = 1;
	}
	/* Expected about 248 distinct buckets for 256 random throws into 4096. */
	assert_true(distinct > 225);
	sw_destroy(sw);
}

/* A full bucket refuses to learn, counts it, and keeps the others working. */
static void test_bucket_full(void **state)
{
	struct sw *sw;
	struct fake_port a, b;
	uint8_t macs[SW_FDB_BUCKET + 1][6], m[6];
	unsigned int found = 0;
	uint32_t target = 0;
	uint64_t v[3];
	uint16_t num;

	fake_reset();
	sw = fake_sw(0, 1000);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	/* Search MACs that share one bucket (we know the key; a guest does not). */
	for (unsigned int n = 1; found < SW_FDB_BUCKET + 1 && n < 1000000; n++) {
		uint32_t bk;

		fake_mac(m, n);
		bk = sw_fdb_bucket(sw, sw_fdb_hash(sw, m));
		if (!found)
			target = bk;
		if (bk != target)
			continue;
		memcpy(macs[found++], m, 6);
	}
	assert_int_equal(found, SW_FDB_BUCKET + 1);
	for (unsigned int i = 0; i < found; i++)
		assert_int_equal(fake_send(sw, &a, i, bcast, macs[i]), 1);
	assert_int_equal(sw_fdb_count(sw), SW_FDB_BUCKET);
	assert_int_equal(fake_stat(&a, "learn_full"), 1);
	sw_stats_get(sw, v);
	assert_int_equal(v[2], 1);
	for (unsigned int i = 0; i < SW_FDB_BUCKET; i++) {
		assert_int_equal(sw_fdb_lookup(sw, macs[i], &num), 0);
		assert_int_equal(num, a.port->num);
	}
	assert_int_equal(sw_fdb_lookup(sw, macs[SW_FDB_BUCKET], &num), -ENOENT);
	/* Moving within a full bucket works: no new slot is needed. */
	fake_send(sw, &b, 20, bcast, macs[0]);
	assert_int_equal(sw_fdb_lookup(sw, macs[0], &num), 0);
	assert_int_equal(num, b.port->num);
	sw_destroy(sw);
}

/* Duplicate requests in one batch learn once; a deleted port learns nothing. */
static void test_learn_requests(void **state)
{
	struct sw *sw;
	struct fake_port a, b;
	struct sw_learn req[3];
	uint8_t m[6];

	fake_reset();
	sw = fake_sw(0, 0);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	fake_mac(m, 7);
	for (unsigned int i = 0; i < 3; i++)
		req[i] = (struct sw_learn){.mac = sw_mac_pack(m), .hash = sw_fdb_hash(sw, m)};
	sw_fdb_learn(sw, a.port, req, 3, 1000);
	assert_int_equal(sw_fdb_count(sw), 1);
	assert_int_equal(fake_stat(&a, "learn_new"), 1);

	/* A batch of the same MAC forwarded at once learns it once as well. */
	struct sw_pkt *p[8];
	fake_mac(m, 8);
	for (unsigned int i = 0; i < 8; i++)
		p[i] = fake_frame(i, bcast, m, 64);
	assert_int_equal(sw_forward(sw, b.port, p, 8), 8);
	assert_int_equal(fake_stat(&b, "learn_new"), 1);
	assert_int_equal(sw_fdb_count(sw), 2);

	/* Learning for a port that is gone is ignored (stale worker). */
	struct sw_port *gone = b.port;
	assert_int_equal(sw_port_del(sw, gone), 0);
	assert_int_equal(sw_fdb_count(sw), 1);
	sw_destroy(sw);
}

/* Ageing with a short configured time; refreshes extend it. */
static void test_age_configured(void **state)
{
	struct sw_config cfg;
	struct fake_port a, b;
	struct sw *sw;
	uint8_t m[6], d[6];
	uint64_t t0;

	fake_reset();
	t0 = fake_now_ns;
	sw_config_init(&cfg);
	cfg.clock = fake_clock;
	cfg.ageing_s = 10;
	assert_int_equal(sw_create(&cfg, &sw), 0);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	fake_mac(m, 1);
	fake_mac(d, 2);
	fake_send(sw, &a, 1, bcast, m);
	for (unsigned int t = 1; t <= 30; t++) {
		fake_now_ns = t0 + t * S;
		fake_send(sw, &a, 2, d, m); /* refreshes every second */
		assert_int_equal(sw_fdb_age(sw, fake_now_ns), 0);
	}
	assert_int_equal(sw_fdb_age(sw, t0 + 39 * S), 0);
	assert_int_equal(sw_fdb_age(sw, t0 + 40 * S), 1);
	assert_int_equal(sw_fdb_count(sw), 0);
	assert_int_equal(fake_stat(&a, "fdb_entries"), 0);
	/* Relearned after ageing. */
	fake_send(sw, &a, 3, d, m);
	assert_int_equal(sw_fdb_count(sw), 1);
	assert_int_equal(fake_stat(&a, "learn_new"), 2);
	sw_destroy(sw);
}

/*
 * Learning a MAC its port already has (another queue of the port learned
 * it meanwhile) is not a move, and is not refused at the port's limit.
 */
static void test_relearn_same_port(void **state)
{
	struct sw *sw;
	struct fake_port a;
	struct sw_learn req;
	uint8_t m[6];

	fake_reset();
	sw = fake_sw(0, 0);
	fake_port_add(sw, &a, 0);
	sw_port_set_mac_limit(a.port, 1);
	fake_mac(m, 7);
	req = (struct sw_learn){.mac = sw_mac_pack(m), .hash = sw_fdb_hash(sw, m)};
	sw_fdb_learn(sw, a.port, &req, 1, 1000);
	sw_fdb_learn(sw, a.port, &req, 1, 1001);
	assert_int_equal(sw_fdb_count(sw), 1);
	assert_int_equal(fake_stat(&a, "fdb_entries"), 1);
	assert_int_equal(fake_stat(&a, "learn_new"), 1);
	assert_int_equal(fake_stat(&a, "learn_moved"), 0);
	assert_int_equal(fake_stat(&a, "learn_limit"), 0);
	sw_destroy(sw);
}

/* An entry refreshed at a later second than the ager's clock is not old (fdb.c). */
static void test_age_clock_behind(void **state)
{
	struct fake_port a;
	struct sw *sw;
	uint8_t m[6];

	fake_reset();
	sw = fake_sw(0, 0);
	fake_port_add(sw, &a, 0);
	fake_mac(m, 1);
	fake_send(sw, &a, 1, bcast, m);
	assert_int_equal(sw_fdb_age(sw, fake_now_ns - S), 0);
	assert_int_equal(sw_fdb_age(sw, fake_now_ns - 100 * S), 0);
	assert_int_equal(sw_fdb_count(sw), 1);
	assert_int_equal(fake_stat(&a, "fdb_entries"), 1);
	sw_destroy(sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_keyed),	     cmocka_unit_test(test_hash_spreads),
	    cmocka_unit_test(test_bucket_full),	     cmocka_unit_test(test_learn_requests),
	    cmocka_unit_test(test_age_configured),   cmocka_unit_test(test_relearn_same_port),
	    cmocka_unit_test(test_age_clock_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
