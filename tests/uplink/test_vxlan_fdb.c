// SPDX-License-Identifier: MIT
/* test_vxlan_fdb.c - the VXLAN uplink's table of which remote a MAC is behind */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uplink/vxlan_fdb.h"

static struct uplink_vxlan_fdb *fdb_new(uint32_t age_s)
{
	struct uplink_vxlan_fdb *f = aligned_alloc(64, sizeof(*f));

	assert_non_null(f);
	uplink_vxlan_fdb_init(f, age_s);
	return f;
}

static void mac_of(uint8_t mac[6], uint32_t n)
{
	mac[0] = 0x02;
	mac[1] = 0x5e;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

/* Learnt MACs are found behind their remote; a move is followed; group and zero MACs are not learnt. */
static void test_learn_lookup(void **state)
{
	struct uplink_vxlan_fdb *f = fdb_new(300);
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			     mcast[6] = {0x33, 0x33, 0, 0, 0, 1}, zero[6] = {0};
	uint8_t mac[6];

	(void)state;
	for (uint32_t i = 0; i < 200; i++) {
		mac_of(mac, i);
		assert_int_equal(uplink_vxlan_fdb_lookup(f, mac, 1000), -1);
		uplink_vxlan_fdb_learn(f, mac, i % 8, 1000);
	}
	for (uint32_t i = 0; i < 200; i++) {
		mac_of(mac, i);
		assert_int_equal(uplink_vxlan_fdb_lookup(f, mac, 1000), (int)(i % 8));
	}
	mac_of(mac, 7);
	uplink_vxlan_fdb_learn(f, mac, 2, 1001);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, mac, 1001), 2);
	mac_of(mac, 6);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, mac, 1001), 6);
	uplink_vxlan_fdb_learn(f, bcast, 1, 1000);
	uplink_vxlan_fdb_learn(f, mcast, 1, 1000);
	uplink_vxlan_fdb_learn(f, zero, 1, 1000);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, bcast, 1000), -1);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, mcast, 1000), -1);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, zero, 1000), -1);
	free(f);
}

/* An entry lives age_s seconds unseen; seeing it again renews it; a reader one second behind still finds it. */
static void test_ageing(void **state)
{
	struct uplink_vxlan_fdb *f = fdb_new(10);
	uint8_t a[6], b[6];

	(void)state;
	mac_of(a, 1);
	mac_of(b, 2);
	uplink_vxlan_fdb_learn(f, a, 3, 100);
	uplink_vxlan_fdb_learn(f, b, 4, 100);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, a, 99), 3);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, a, 109), 3);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, a, 110), -1);
	uplink_vxlan_fdb_learn(f, b, 4, 105);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, b, 114), 4);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, b, 115), -1);
	/* Aged out, then heard from again behind another remote. */
	uplink_vxlan_fdb_learn(f, a, 5, 200);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, a, 200), 5);
	free(f);
}

/* Find @n MACs that share one bucket of @f. */
static void same_bucket(const struct uplink_vxlan_fdb *f, uint8_t macs[][6], unsigned int n)
{
	uint32_t want = UINT32_MAX;
	unsigned int got = 0;

	for (uint32_t i = 0; got < n && i < 10000000; i++) {
		mac_of(macs[got], i);
		if (want == UINT32_MAX)
			want = uplink_vxlan_fdb_bucket(f, macs[got]);
		if (uplink_vxlan_fdb_bucket(f, macs[got]) == want)
			got++;
	}
	assert_int_equal(got, n);
}

/*
 * A full bucket forgets the MAC seen least recently for a new one; an
 * expired way is taken before any live one; the others stay.
 */
static void test_full_bucket(void **state)
{
	struct uplink_vxlan_fdb *f = fdb_new(300);
	uint8_t macs[UPLINK_VXLAN_FDB_WAYS + 2][6];

	(void)state;
	same_bucket(f, macs, UPLINK_VXLAN_FDB_WAYS + 2);
	for (unsigned int i = 0; i < UPLINK_VXLAN_FDB_WAYS; i++)
		uplink_vxlan_fdb_learn(f, macs[i], 1, 1000 + i);
	uplink_vxlan_fdb_learn(f, macs[0], 1, 1010); /* the first is seen again */
	uplink_vxlan_fdb_learn(f, macs[UPLINK_VXLAN_FDB_WAYS], 2, 1011);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[UPLINK_VXLAN_FDB_WAYS], 1011), 2);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[1], 1011), -1); /* seen at 1001 */
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[0], 1011), 1);
	for (unsigned int i = 2; i < UPLINK_VXLAN_FDB_WAYS; i++)
		assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[i], 1011), 1);
	/* At 1302 the entries seen at 1002 and before have expired: one of those goes, no live one. */
	uplink_vxlan_fdb_learn(f, macs[UPLINK_VXLAN_FDB_WAYS + 1], 3, 1302);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[UPLINK_VXLAN_FDB_WAYS + 1], 1302), 3);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[UPLINK_VXLAN_FDB_WAYS], 1302), 2);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[0], 1302), 1);
	for (unsigned int i = 3; i < UPLINK_VXLAN_FDB_WAYS; i++)
		assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[i], 1302), 1);
	free(f);
}

/* A MAC heard again moves where it is, in whichever way of its bucket: no other goes. */
static void test_full_bucket_move(void **state)
{
	struct uplink_vxlan_fdb *f = fdb_new(300);
	uint8_t macs[UPLINK_VXLAN_FDB_WAYS][6];

	(void)state;
	same_bucket(f, macs, UPLINK_VXLAN_FDB_WAYS);
	for (unsigned int i = 0; i < UPLINK_VXLAN_FDB_WAYS; i++)
		uplink_vxlan_fdb_learn(f, macs[i], 1, 1000 + i);
	/* The last learnt (in the bucket's last way) is heard behind another remote. */
	uplink_vxlan_fdb_learn(f, macs[UPLINK_VXLAN_FDB_WAYS - 1], 2, 1010);
	assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[UPLINK_VXLAN_FDB_WAYS - 1], 1010), 2);
	for (unsigned int i = 0; i < UPLINK_VXLAN_FDB_WAYS - 1; i++)
		assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[i], 1010), 1);
	free(f);
}

/*
 * Group MACs are never learnt, so a remote sending frames from made-up
 * group sources cannot push out what a full bucket has learnt.
 */
static void test_group_source_kept_out(void **state)
{
	struct uplink_vxlan_fdb *f = fdb_new(300);
	uint8_t macs[UPLINK_VXLAN_FDB_WAYS][6], group[6];
	uint32_t want, n = 0;

	(void)state;
	same_bucket(f, macs, UPLINK_VXLAN_FDB_WAYS);
	want = uplink_vxlan_fdb_bucket(f, macs[0]);
	do {
		mac_of(group, n++);
		group[0] = 0x03; /* a group address */
	} while (uplink_vxlan_fdb_bucket(f, group) != want && n < 10000000);
	assert_int_equal(uplink_vxlan_fdb_bucket(f, group), want);
	for (unsigned int i = 0; i < UPLINK_VXLAN_FDB_WAYS; i++)
		uplink_vxlan_fdb_learn(f, macs[i], 1, 1000 + i);
	uplink_vxlan_fdb_learn(f, group, 2, 1010);
	for (unsigned int i = 0; i < UPLINK_VXLAN_FDB_WAYS; i++)
		assert_int_equal(uplink_vxlan_fdb_lookup(f, macs[i], 1010), 1);
	free(f);
}

/* Two tables draw different keys: the same MACs fall into different buckets. */
static void test_keyed(void **state)
{
	struct uplink_vxlan_fdb *a = fdb_new(300), *b = fdb_new(300);
	unsigned int same = 0;
	uint8_t mac[6];

	(void)state;
	for (uint32_t i = 0; i < 64; i++) {
		mac_of(mac, i);
		same += uplink_vxlan_fdb_bucket(a, mac) == uplink_vxlan_fdb_bucket(b, mac);
	}
	assert_true(same < 8); /* 1/512 each by chance */
	free(a);
	free(b);
}

/* One writer moving MACs between remotes while readers look them up: every answer is -1 or a remote it was given. */
struct race {
	struct uplink_vxlan_fdb *f;
	_Atomic int stop;
	unsigned int bad;
};

static void *reader(void *arg)
{
	struct race *r = arg;
	uint8_t mac[6];

	while (!atomic_load(&r->stop)) {
		for (uint32_t i = 0; i < 4096; i++) {
			int to;

			mac_of(mac, i);
			to = uplink_vxlan_fdb_lookup(r->f, mac, 1000);
			if (to < -1 || to > 3 || (to >= 0 && (unsigned int)to % 2 != i % 2))
				r->bad++;
		}
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct race r = {.f = fdb_new(300)};
	pthread_t t[2];
	uint8_t mac[6];

	(void)state;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, reader, &r), 0);
	for (uint32_t round = 0; round < 50; round++)
		for (uint32_t i = 0; i < 4096; i++) {
			mac_of(mac, i);
			/* MAC i only ever behind a remote of i's parity: 0/2 or 1/3. */
			uplink_vxlan_fdb_learn(r.f, mac, i % 2 + 2 * (round % 2), 1000);
		}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(r.bad, 0);
	free(r.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_learn_lookup),
	    cmocka_unit_test(test_ageing),
	    cmocka_unit_test(test_full_bucket),
	    cmocka_unit_test(test_full_bucket_move),
	    cmocka_unit_test(test_group_source_kept_out),
	    cmocka_unit_test(test_keyed),
	    cmocka_unit_test(test_concurrent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
