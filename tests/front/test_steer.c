// SPDX-License-Identifier: MIT
/* test_steer.c - netfront TX steering policies with a fake CPU source: hash, xps, xps-safe */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "front/front.h"

/* The fake CPU the "sending thread" runs on. */
static _Atomic int fake_cpu;

static int cpu_fn(void *arg)
{
	(void)arg;
	return atomic_load(&fake_cpu);
}

/* An IPv4/UDP frame of flow @port. */
static void frame(uint8_t *f, uint16_t port)
{
	memset(f, 0, 64);
	memcpy(f, "\x00\x16\x3e\x00\x00\x01\x00\x16\x3e\x00\x00\x02\x08\x00", 14);
	f[14] = 0x45;
	f[14 + 9] = 17;
	memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	f[34] = (uint8_t)(port >> 8);
	f[35] = (uint8_t)port;
	f[36] = 0x12;
	f[37] = 0x34;
}

static struct front_steer *new_steer(int policy, unsigned int nq)
{
	struct front_steer *st = calloc(1, sizeof(*st));

	assert_non_null(st);
	front_steer_init(st, policy, nq, cpu_fn, NULL);
	atomic_store(&fake_cpu, 0);
	return st;
}

static void test_names(void **state)
{
	assert_int_equal(pvnet_steering_parse("hash"), PVNET_STEER_HASH);
	assert_int_equal(pvnet_steering_parse("xps"), PVNET_STEER_XPS);
	assert_int_equal(pvnet_steering_parse("xps-safe"), PVNET_STEER_XPS_SAFE);
	assert_int_equal(pvnet_steering_parse("XPS"), -EINVAL);
	assert_int_equal(pvnet_steering_parse(""), -EINVAL);
	assert_int_equal(pvnet_steering_parse(NULL), -EINVAL);
	assert_string_equal(pvnet_steering_name(PVNET_STEER_XPS_SAFE), "xps-safe");
	assert_null(pvnet_steering_name(3));
	assert_null(pvnet_steering_name(-1));
}

/* The flow hash reads addresses and ports, not the payload. */
static void test_flow_hash(void **state)
{
	uint8_t a[64], b[64];

	frame(a, 1000);
	frame(b, 1000);
	b[50] = 0x77;
	assert_int_equal(front_steer_flow_hash(a, 64), front_steer_flow_hash(b, 64));
	frame(b, 1001);
	assert_int_not_equal(front_steer_flow_hash(a, 64), front_steer_flow_hash(b, 64));
	assert_int_equal(front_steer_flow_hash(a, 10), 0);
}

/* @f: frame(@port) with a VLAN tag, IP id @id (and so a checksum) of its own. */
static void vlan_frame(uint8_t *f, uint16_t port, uint16_t id)
{
	memset(f, 0, 68);
	memcpy(f, "\x00\x16\x3e\x00\x00\x01\x00\x16\x3e\x00\x00\x02\x81\x00\x00\x05\x08\x00", 18);
	f[18] = 0x45;
	f[18 + 4] = (uint8_t)(id >> 8);
	f[18 + 5] = (uint8_t)id;
	f[18 + 9] = 17;
	f[18 + 10] = (uint8_t)(id * 7);
	memcpy(f + 30, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	f[38] = (uint8_t)(port >> 8);
	f[39] = (uint8_t)port;
}

/*
 * The flow hash finds the ports behind a VLAN tag and IP options, and
 * keeps the fragments of a datagram together: what makes "hash" keep a
 * flow on one queue.
 */
static void test_flow_hash_headers(void **state)
{
	uint8_t a[68], b[68];

	(void)state;
	/* VLAN: one flow whatever the packet's IP id; its ports count. */
	vlan_frame(a, 1000, 1);
	vlan_frame(b, 1000, 2);
	assert_int_equal(front_steer_flow_hash(a, 68), front_steer_flow_hash(b, 68));
	vlan_frame(b, 1001, 1);
	assert_int_not_equal(front_steer_flow_hash(a, 68), front_steer_flow_hash(b, 68));
	/* IP options (IHL 6): the ports are after them. */
	frame(a, 0);
	frame(b, 0);
	a[14] = b[14] = 0x46;
	memset(a + 34, 1, 4); /* four NOPs */
	memset(b + 34, 1, 4);
	a[38] = b[38] = 0x03;
	a[39] = 0xe8;
	b[39] = 0xe9;
	assert_int_not_equal(front_steer_flow_hash(a, 64), front_steer_flow_hash(b, 64));
	/* A datagram's first fragment (MF) and a later one (offset, no ports) hash alike. */
	frame(a, 1000);
	frame(b, 1000);
	a[20] = 0x20;
	b[20] = 0x00;
	b[21] = 0xb9;
	memset(b + 34, 0xaa, 30); /* payload where the ports would be */
	assert_int_equal(front_steer_flow_hash(a, 64), front_steer_flow_hash(b, 64));
	/* A frame that ends with its ports still has them hashed. */
	frame(a, 1000);
	frame(b, 1001);
	assert_int_not_equal(front_steer_flow_hash(a, 38), front_steer_flow_hash(b, 38));
}

/* hash: a flow never moves, wherever the sender runs. */
static void test_hash_never_moves(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_HASH, 4);
	unsigned int used = 0;
	uint8_t f[64];
	uint16_t held;

	for (uint16_t port = 0; port < 64; port++) {
		uint32_t h;
		unsigned int q0;

		frame(f, port);
		h = front_steer_flow_hash(f, 64);
		atomic_store(&fake_cpu, 0);
		q0 = front_steer_pick(st, h, &held);
		assert_int_equal(held, 0);
		for (int cpu = 0; cpu < 8; cpu++) {
			atomic_store(&fake_cpu, cpu);
			assert_int_equal(front_steer_pick(st, h, &held), q0);
		}
		used |= 1u << q0;
	}
	assert_int_equal(used, 0xf);
	free(st);
}

/* xps: the queue follows the CPU at once, in flight or not. */
static void test_xps_moves_with_cpu(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS, 4);
	uint8_t f[64];
	uint16_t held;
	uint32_t h;

	frame(f, 7);
	h = front_steer_flow_hash(f, 64);
	for (int cpu = 0; cpu < 10; cpu++) {
		atomic_store(&fake_cpu, cpu);
		assert_int_equal(front_steer_pick(st, h, &held), (unsigned int)cpu % 4);
		assert_int_equal(held, 0);
	}
	atomic_store(&fake_cpu, -1); /* unknown CPU: queue 0 */
	assert_int_equal(front_steer_pick(st, h, &held), 0);
	free(st);
}

/* xps-safe: a flow moves only when none of its frames is in flight. */
static void test_xps_safe_waits_for_inflight(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS_SAFE, 4);
	uint16_t held[8], other;
	uint8_t f[64], g[64];
	uint32_t h, hg;

	frame(f, 7);
	frame(g, 9);
	h = front_steer_flow_hash(f, 64);
	hg = front_steer_flow_hash(g, 64);
	assert_int_not_equal(h & (PVNET_STEER_FLOWS - 1), hg & (PVNET_STEER_FLOWS - 1));

	atomic_store(&fake_cpu, 1);
	assert_int_equal(front_steer_pick(st, h, &held[0]), 1);
	assert_int_not_equal(held[0], 0);
	assert_int_equal(front_steer_inflight(st, h), 1);
	/* the sender migrates: frames stay on queue 1 while one is in flight */
	atomic_store(&fake_cpu, 2);
	assert_int_equal(front_steer_pick(st, h, &held[1]), 1);
	assert_int_equal(front_steer_pick(st, h, &held[2]), 1);
	assert_int_equal(front_steer_inflight(st, h), 3);
	/* another flow, nothing in flight, goes to CPU 2's queue */
	assert_int_equal(front_steer_pick(st, hg, &other), 2);
	front_steer_release(st, other);
	/* two answered: still one out, still queue 1 */
	front_steer_release(st, held[0]);
	front_steer_release(st, held[1]);
	assert_int_equal(front_steer_inflight(st, h), 1);
	atomic_store(&fake_cpu, 3);
	assert_int_equal(front_steer_pick(st, h, &held[3]), 1);
	front_steer_release(st, held[2]);
	front_steer_release(st, held[3]);
	assert_int_equal(front_steer_inflight(st, h), 0);
	/* all answered: the next frame moves to the CPU's queue, and stays there */
	assert_int_equal(front_steer_pick(st, h, &held[4]), 3);
	atomic_store(&fake_cpu, 0);
	assert_int_equal(front_steer_pick(st, h, &held[5]), 3);
	front_steer_release(st, held[4]);
	front_steer_release(st, held[5]);
	assert_int_equal(front_steer_pick(st, h, &held[6]), 0);
	front_steer_release(st, held[6]);
	/* releasing nothing is harmless */
	front_steer_release(st, 0);
	assert_int_equal(front_steer_inflight(st, h), 0);
	free(st);
}

/* Concurrent senders: every pick counted once and released once (TSan checks the rest). */
struct racer {
	struct front_steer *st;
	uint32_t hash;
	unsigned int moves_while_inflight;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	uint16_t held[4];
	unsigned int last = 0, n = 0;

	for (int i = 0; i < 20000; i++) {
		unsigned int q = front_steer_pick(r->st, r->hash, &held[n]);

		if (n > 0 && q != last)
			r->moves_while_inflight++;
		last = q;
		if (++n == 4) {
			while (n)
				front_steer_release(r->st, held[--n]);
		}
		atomic_store(&fake_cpu, i & 3);
	}
	while (n)
		front_steer_release(r->st, held[--n]);
	return NULL;
}

static void test_xps_safe_threads(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS_SAFE, 4);
	struct racer r[4];
	pthread_t t[4];
	uint8_t f[64];

	for (int i = 0; i < 4; i++) {
		frame(f, (uint16_t)(100 + i));
		r[i] = (struct racer){.st = st, .hash = front_steer_flow_hash(f, 64)};
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(r[i].moves_while_inflight, 0);
		assert_int_equal(front_steer_inflight(st, r[i].hash), 0);
	}
	free(st);
}

/*
 * A policy change starts the flow table afresh while frames picked before
 * are in flight: their release must not take an entry below zero (it used
 * to wrap into the queue bits and pin the flow's entry for good).
 */
static void test_release_after_policy_change(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS_SAFE, 4);
	uint16_t held, h2;

	(void)state;
	front_steer_pick(st, 1234, &held);
	assert_int_equal(front_steer_inflight(st, 1234), 1);
	front_steer_init(st, PVNET_STEER_HASH, 4, cpu_fn, NULL);
	front_steer_init(st, PVNET_STEER_XPS_SAFE, 4, cpu_fn, NULL);
	front_steer_release(st, held);
	assert_int_equal(front_steer_inflight(st, 1234), 0);
	front_steer_pick(st, 1234, &h2);
	assert_int_equal(front_steer_inflight(st, 1234), 1);
	front_steer_release(st, h2);
	assert_int_equal(front_steer_inflight(st, 1234), 0);
	/* Nothing in flight: the flow may move to the CPU's queue again. */
	atomic_store(&fake_cpu, 3);
	assert_int_equal(front_steer_pick(st, 1234, &h2), 3);
	front_steer_release(st, h2);
	free(st);
}

/*
 * The same with the entry's queue bits set and its count at 0 when the
 * frame picked before the change is answered, and for an entry in the
 * upper half of the table: the change forgets every entry.
 */
static void test_policy_change_whole_table(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS_SAFE, 4);
	uint16_t old, old_hi, h2;

	(void)state;
	atomic_store(&fake_cpu, 3);
	assert_int_equal(front_steer_pick(st, 1234, &old), 3);
	assert_int_equal(front_steer_pick(st, PVNET_STEER_FLOWS - 100, &old_hi), 3);
	front_steer_init(st, PVNET_STEER_HASH, 4, cpu_fn, NULL);
	front_steer_init(st, PVNET_STEER_XPS_SAFE, 4, cpu_fn, NULL);
	assert_int_equal(front_steer_inflight(st, PVNET_STEER_FLOWS - 100), 0);
	atomic_store(&fake_cpu, 1);
	assert_int_equal(front_steer_pick(st, PVNET_STEER_FLOWS - 100, &h2), 1);
	front_steer_release(st, h2);
	front_steer_release(st, old_hi);
	atomic_store(&fake_cpu, 3);
	assert_int_equal(front_steer_pick(st, 1234, &h2), 3);
	front_steer_release(st, h2); /* queue 3, none in flight */
	front_steer_release(st, old);
	assert_int_equal(front_steer_inflight(st, 1234), 0);
	atomic_store(&fake_cpu, 1);
	assert_int_equal(front_steer_pick(st, 1234, &h2), 1);
	front_steer_release(st, h2);
	free(st);
}

/* The last entry of the table is counted out like any other. */
static void test_last_entry(void **state)
{
	struct front_steer *st = new_steer(PVNET_STEER_XPS_SAFE, 4);
	uint32_t last = PVNET_STEER_FLOWS - 1;
	uint16_t held;

	(void)state;
	atomic_store(&fake_cpu, 2);
	assert_int_equal(front_steer_pick(st, last, &held), 2);
	assert_int_equal(held, PVNET_STEER_FLOWS);
	assert_int_equal(front_steer_inflight(st, last), 1);
	front_steer_release(st, held);
	assert_int_equal(front_steer_inflight(st, last), 0);
	atomic_store(&fake_cpu, 1);
	assert_int_equal(front_steer_pick(st, last, &held), 1);
	front_steer_release(st, held);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_release_after_policy_change),
	    cmocka_unit_test(test_flow_hash),
	    cmocka_unit_test(test_flow_hash_headers),
	    cmocka_unit_test(test_policy_change_whole_table),
	    cmocka_unit_test(test_last_entry),
	    cmocka_unit_test(test_hash_never_moves),
	    cmocka_unit_test(test_xps_moves_with_cpu),
	    cmocka_unit_test(test_xps_safe_waits_for_inflight),
	    cmocka_unit_test(test_xps_safe_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
