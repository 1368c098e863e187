// SPDX-License-Identifier: MIT
/* test_fdb.c - unit tests of the MAC table: keyed hashing, buckets, learning, ageing */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/log_capture.h"
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
	/* And all 4096 are used: twice as many slots as MACs, so buckets rarely fill. */
	assert_int_equal(sw_fdb_bucket(sw, UINT64_MAX), 4095);
	sw_destroy(sw);
}

/* @n MACs that share one bucket of @sw's table, into @macs (we know the key; a guest does not). */
static void bucket_macs(struct sw *sw, uint8_t (*macs)[6], unsigned int n)
{
	unsigned int found = 0;
	uint32_t target = 0;

	for (unsigned int k = 1; found < n && k < 1000000; k++) {
		uint8_t m[6];
		uint32_t bk;

		fake_mac(m, k);
		bk = sw_fdb_bucket(sw, sw_fdb_hash(sw, m));
		if (!found)
			target = bk;
		if (bk == target)
			memcpy(macs[found++], m, 6);
	}
	assert_int_equal(found, n);
}

/* A full bucket refuses to learn, counts it, and keeps the others working. */
static void test_bucket_full(void **state)
{
	struct sw *sw;
	struct fake_port a, b;
	uint8_t macs[SW_FDB_BUCKET + 1][6];
	uint64_t v[3];
	uint16_t num;

	fake_reset();
	sw = fake_sw(0, 1000);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	bucket_macs(sw, macs, SW_FDB_BUCKET + 1);
	for (unsigned int i = 0; i < SW_FDB_BUCKET + 1; i++)
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

/*
 * learn_limit, learn_full and the switch's fdb_full count frames whose
 * source was not learnt (docs/switch.md), one each, also within one batch
 * where a run of frames repeats a source: the batch looks a repeated
 * source up once, and counted the run once (pvnetd's warning said "1
 * frame" for a guest's 64).  Checked for the early refusal (a port at its
 * limit) and for the one under the lock (a full bucket), with the refused
 * sources interleaved with each other and with a known one.
 */
static void test_refusals_count_frames(void **state)
{
	static const uint8_t order[8] = {1, 1, 1, 2, 1, 2, 2, 0};
	uint8_t macs[SW_FDB_BUCKET + 1][6], m[3][6];
	struct sw_pkt *p[8];
	struct fake_port a, b;
	uint64_t v[3];
	struct sw *sw;

	(void)state;
	fake_reset();
	sw = fake_sw(0, 1);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	for (unsigned int i = 0; i < 3; i++)
		fake_mac(m[i], 10 + i);
	assert_int_equal(fake_send(sw, &a, 0, bcast, m[0]), 1); /* a is at its limit of 1 */
	for (unsigned int i = 0; i < 8; i++)
		p[i] = fake_frame(1 + i, bcast, m[order[i]], 64);
	assert_int_equal(sw_forward(sw, a.port, p, 8), 8);
	assert_int_equal(fake_stat(&a, "learn_limit"), 7);
	assert_int_equal(fake_stat(&a, "learn_full"), 0);
	sw_destroy(sw);

	fake_reset();
	sw = fake_sw(0, 1000);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	bucket_macs(sw, macs, SW_FDB_BUCKET + 1);
	for (unsigned int i = 0; i < SW_FDB_BUCKET; i++)
		assert_int_equal(fake_send(sw, &a, i, bcast, macs[i]), 1);
	/* The bucket is full: its next MAC is queued, and refused under the lock. */
	for (unsigned int i = 0; i < 8; i++)
		p[i] = fake_frame(100 + i, bcast, macs[i % 4 == 2 ? 0 : SW_FDB_BUCKET], 64);
	assert_int_equal(sw_forward(sw, a.port, p, 8), 8);
	assert_int_equal(fake_stat(&a, "learn_full"), 6);
	sw_stats_get(sw, v);
	assert_int_equal(v[2], 6);
	assert_int_equal(fake_stat(&a, "learn_limit"), 0);
	sw_destroy(sw);
}

/*
 * The table's first slot (bucket 0, entry 0: slot number 0) is a slot like
 * any other: a MAC learnt there is a known destination (frames to it go to
 * its port alone) and a known source (seen again on its port, it is
 * refreshed, not learnt again: no learn_limit at a port's limit of one).
 */
static void test_first_slot(void **state)
{
	struct sw *sw;
	struct fake_port a, b;
	uint8_t m[6], x[6];
	unsigned int n;
	uint16_t num;

	fake_reset();
	sw = fake_sw(0, 1);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	/* A MAC of bucket 0 (we know the key); the bucket is empty, so it takes entry 0. */
	for (n = 1; n < 10000000; n++) {
		fake_mac(m, n);
		if (sw_fdb_bucket(sw, sw_fdb_hash(sw, m)) == 0)
			break;
	}
	assert_int_equal(sw_fdb_bucket(sw, sw_fdb_hash(sw, m)), 0);
	assert_int_equal(fake_send(sw, &a, 1, bcast, m), 1);
	assert_int_equal(sw_fdb_find(sw, sw_mac_pack(m), sw_fdb_hash(sw, m), &n), 0);
	assert_int_equal(sw_fdb_lookup(sw, m, &num), 0);
	assert_int_equal(num, a.port->num);

	fake_mac(x, 0x1000000); /* another bucket than m's */
	fake_nlog = 0;
	assert_int_equal(fake_send(sw, &b, 2, m, x), 1);
	assert_int_equal(fake_nlog, 1);
	assert_true(fake_delivered(0, 2));
	assert_int_equal(fake_stat(&b, "flood"), 0);

	fake_now_ns += 5 * S;
	assert_int_equal(fake_send(sw, &a, 3, x, m), 1);
	assert_int_equal(fake_stat(&a, "learn_limit"), 0);
	assert_int_equal(fake_stat(&a, "learn_new"), 1);
	assert_int_equal(fake_stat(&a, "fdb_entries"), 1);
	/* Refreshed: at 300 s x, learnt with it and not seen since, ages; m lasts 5 s more. */
	assert_int_equal(sw_fdb_age(sw, fake_now_ns + 295 * S), 1);
	assert_int_equal(sw_fdb_lookup(sw, x, &num), -ENOENT);
	assert_int_equal(sw_fdb_age(sw, fake_now_ns + 299 * S), 0);
	assert_int_equal(sw_fdb_age(sw, fake_now_ns + 300 * S), 1);
	sw_destroy(sw);
}

/* Duplicate requests in one batch learn once; a deleted port learns nothing. */
static void test_learn_requests(void **state)
{
	struct sw *sw;
	struct fake_port a, b;
	struct sw_learn req[3];
	unsigned int n;
	uint8_t m[6];

	fake_reset();
	sw = fake_sw(0, 0);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	fake_mac(m, 7);
	for (unsigned int i = 0; i < 3; i++)
		req[i] = (struct sw_learn){
		    .mac = sw_mac_pack(m), .hash = sw_fdb_hash(sw, m), .frames = 1};
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
	/*
	 * Nor does a request of a port the switch does not publish (the state
	 * of one between sw_port_del()'s flush and its free) learn anything:
	 * its entries would outlive it and send frames to the next port given
	 * its number.
	 */
	struct sw_port stale = {.sw = sw, .num = 5, .mac_limit = 64};
	fake_mac(m, 9);
	req[0] = (struct sw_learn){.mac = sw_mac_pack(m), .hash = sw_fdb_hash(sw, m), .frames = 1};
	sw_fdb_learn(sw, &stale, req, 1, 1000);
	assert_int_equal(sw_fdb_count(sw), 1);
	assert_int_equal(sw_fdb_find(sw, req[0].mac, req[0].hash, &n), -ENOENT);
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
	req = (struct sw_learn){.mac = sw_mac_pack(m), .hash = sw_fdb_hash(sw, m), .frames = 1};
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

/*
 * Read the whole table through sw_fdb_dump() @max entries a call; each
 * entry into @seen[MAC number] (the count of times read) and @got.
 * Returns the number of calls.
 */
static unsigned int dump_all(struct sw *sw, const char *port, unsigned int max,
			     struct sw_fdb_entry *got, unsigned int *ngot)
{
	struct sw_fdb_entry e[8];
	uint32_t cursor = 0;
	unsigned int calls = 0;
	int n;

	assert_true(max <= 8);
	*ngot = 0;
	do {
		n = sw_fdb_dump(sw, port, &cursor, e, max);
		assert_true(n >= 0 && (unsigned int)n <= max);
		/* A call stops early only at the table's end. */
		if (cursor)
			assert_int_equal(n, max);
		for (int i = 0; i < n; i++) {
			assert_true(*ngot < NMACS);
			got[(*ngot)++] = e[i];
		}
		calls++;
		assert_true(calls < 100000);
	} while (cursor);
	return calls;
}

/* The entry of MAC number @m in @got, which must hold it exactly once. */
static const struct sw_fdb_entry *entry_of(const struct sw_fdb_entry *got, unsigned int ngot,
					   unsigned int m)
{
	const struct sw_fdb_entry *found = NULL;
	uint8_t mac[6];

	fake_mac(mac, m);
	for (unsigned int i = 0; i < ngot; i++) {
		if (memcmp(got[i].mac, mac, 6))
			continue;
		assert_null(found);
		found = &got[i];
	}
	assert_non_null(found);
	return found;
}

/*
 * `pvnet fdb` reads the table through sw_fdb_dump(): every learned MAC
 * once, with its port's number and name and its age, in parts of any
 * size; one port's alone; a moved MAC under its new port; a deleted
 * port's MACs gone; bad requests refused and the cursor left alone.
 */
static void test_dump(void **state)
{
	struct sw_fdb_entry got[NMACS], e[8];
	struct fake_port p[3];
	unsigned int ngot, calls;
	uint32_t cursor;
	struct sw *sw;
	uint8_t m[6];
	uint64_t t0;

	fake_reset();
	t0 = fake_now_ns;
	sw = fake_sw(0, 0);
	for (unsigned int i = 0; i < 3; i++)
		fake_port_add(sw, &p[i], i);
	/* MACs 1..5 on p0 at t0, 6..8 on p1 at t0 + 3 s; nothing on p2. */
	for (unsigned int i = 1; i <= 5; i++) {
		fake_mac(m, i);
		fake_send(sw, &p[0], i, bcast, m);
	}
	fake_now_ns = t0 + 3 * S;
	for (unsigned int i = 6; i <= 8; i++) {
		fake_mac(m, i);
		fake_send(sw, &p[1], i, bcast, m);
	}
	fake_now_ns = t0 + 10 * S;
	fake_mac(m, 2);
	fake_send(sw, &p[0], 9, bcast, m); /* refreshed: age 0 */

	for (unsigned int max = 1; max <= 8; max++) {
		calls = dump_all(sw, NULL, max, got, &ngot);
		assert_int_equal(ngot, 8);
		/* One more call finds the end, unless the last entry was in the last slot. */
		assert_true(calls >= (8 + max - 1) / max && calls <= 8 / max + 1);
		for (unsigned int i = 1; i <= 8; i++) {
			const struct sw_fdb_entry *x = entry_of(got, ngot, i);
			unsigned int port = i <= 5 ? 0 : 1;

			assert_int_equal(x->port, p[port].port->num);
			assert_string_equal(x->port_name, port ? "p1" : "p0");
			assert_int_equal(x->age_s, i == 2 ? 0 : i <= 5 ? 10 : 7);
		}
	}
	dump_all(sw, "p1", 2, got, &ngot);
	assert_int_equal(ngot, 3);
	for (unsigned int i = 6; i <= 8; i++)
		assert_string_equal(entry_of(got, ngot, i)->port_name, "p1");
	dump_all(sw, "p2", 8, got, &ngot);
	assert_int_equal(ngot, 0);

	/* MAC 3 moves to p2; p1 goes away with its three. */
	fake_mac(m, 3);
	fake_send(sw, &p[2], 10, bcast, m);
	assert_int_equal(sw_port_del(sw, p[1].port), 0);
	dump_all(sw, NULL, 3, got, &ngot);
	assert_int_equal(ngot, 5);
	assert_string_equal(entry_of(got, ngot, 3)->port_name, "p2");
	assert_int_equal(entry_of(got, ngot, 3)->age_s, 0);
	assert_string_equal(entry_of(got, ngot, 1)->port_name, "p0");
	dump_all(sw, "p2", 8, got, &ngot);
	assert_int_equal(ngot, 1);

	/* Refused: no such port (p1 is gone), a cursor past the table, no room. */
	cursor = 5;
	assert_int_equal(sw_fdb_dump(sw, "p1", &cursor, e, 8), -ENOENT);
	assert_int_equal(cursor, 5);
	cursor = (sw->fdb.mask + 1) * SW_FDB_BUCKET;
	assert_int_equal(sw_fdb_dump(sw, NULL, &cursor, e, 8), -EINVAL);
	cursor = cursor - 1; /* the last slot: a valid place to start */
	assert_true(sw_fdb_dump(sw, NULL, &cursor, e, 8) >= 0);
	assert_int_equal(cursor, 0);
	assert_int_equal(sw_fdb_dump(sw, NULL, &cursor, e, 0), -EINVAL);
	sw_destroy(sw);
}

/*
 * What test_dump's table does not show: entries in neighbouring slots (one
 * bucket) read one a call, each once, the next call starting where the
 * last stopped; an age of exactly 1 s; an entry refreshed at a later
 * second than the dump's clock reads (a frame forwarded meanwhile) shown as
 * age 0, as the ager takes it, not as some 136 years; and a port name
 * longer than a few bytes given whole.
 */
static void test_dump_edges(void **state)
{
	struct sw_fdb_entry got[NMACS];
	uint8_t three[3][6], first[6];
	struct fake_port a, b;
	unsigned int ngot;
	struct sw *sw;
	uint64_t t0;

	fake_reset();
	t0 = fake_now_ns;
	sw = fake_sw(0, 1000);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 123456789); /* named p123456789 */
	/* Three MACs of one bucket, learnt into three neighbouring slots. */
	bucket_macs(sw, three, 3);
	for (unsigned int i = 0; i < 3; i++)
		fake_send(sw, &b, i, bcast, three[i]);
	memcpy(first, three[0], 6);
	assert_int_equal(sw_fdb_count(sw), 3);
	fake_now_ns = t0 + S;
	dump_all(sw, NULL, 1, got, &ngot);
	assert_int_equal(ngot, 3);
	for (unsigned int i = 0; i < 3; i++) {
		for (unsigned int k = 0; k < i; k++)
			assert_memory_not_equal(got[i].mac, got[k].mac, 6);
		assert_string_equal(got[i].port_name, "p123456789");
		assert_int_equal(got[i].port, b.port->num);
		assert_int_equal(got[i].age_s, 1);
	}

	/* Refreshed at t0 + 5 s; the dump's clock reads t0 + 4 s. */
	fake_now_ns = t0 + 5 * S;
	fake_send(sw, &b, 10, bcast, first);
	fake_now_ns = t0 + 4 * S;
	dump_all(sw, "p123456789", 8, got, &ngot);
	assert_int_equal(ngot, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(got[i].age_s, memcmp(got[i].mac, first, 6) ? 4 : 0);
	sw_destroy(sw);
}

/* sw_fdb_report() at @t logs exactly one line, containing @what; or nothing, for NULL. */
static void report_says(struct sw *sw, uint64_t t, const char *what)
{
	struct log_capture lc;
	char *text;

	log_capture_start(&lc);
	sw_fdb_report(sw, t);
	text = log_capture_end(&lc);
	if (!what)
		assert_string_equal(text, "");
	else if (log_count(text, "switch:") != 1 || log_count(text, what) != 1)
		fail_msg("logged \"%s\", not one line with \"%s\"", text, what);
	free(text);
}

/*
 * sw_fdb_report(): a port at its MAC limit, and a full table, are said
 * with the frames refused since the last report, once a minute at most
 * (the count then covering the quiet time), and not at all while nothing
 * more is refused.
 */
static void test_report(void **state)
{
	struct fake_port a, b;
	struct sw *sw;
	uint8_t m[6];
	uint64_t t0;

	fake_reset();
	t0 = fake_now_ns;
	sw = fake_sw(4, 2); /* 4 MACs in all, 2 a port */
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	report_says(sw, t0, NULL); /* nothing refused yet */

	for (unsigned int i = 1; i <= 5; i++) { /* p0: 2 learnt, 3 refused */
		fake_mac(m, i);
		fake_send(sw, &a, i, bcast, m);
	}
	report_says(sw, t0,
		    "switch: port p0 is at its limit of 2 MACs: 3 frames from MACs it "
		    "could not learn so far; frames to those are flooded");
	report_says(sw, t0 + S, NULL); /* said already, nothing new */

	/* One more refused: said a minute after the last report, not before. */
	fake_mac(m, 6);
	fake_send(sw, &a, 6, bcast, m);
	report_says(sw, t0 + 59 * S, NULL);
	report_says(sw, t0 + 60 * S,
		    "switch: port p0 is at its limit of 2 MACs: 1 frame from MACs "
		    "it could not learn since the last report");

	/* p1, with room for 10, fills the table (2 more), and 2 are refused: the table's report. */
	sw_port_set_mac_limit(b.port, 10);
	for (unsigned int i = 11; i <= 14; i++) {
		fake_mac(m, i);
		fake_send(sw, &b, i, bcast, m);
	}
	assert_int_equal(sw_fdb_count(sw), 4);
	assert_int_equal(fake_stat(&b, "learn_full"), 2);
	report_says(sw, t0 + 61 * S,
		    "switch: the MAC table (room for 4) or a bucket of it is full: 2 frames from "
		    "MACs not learnt so far; frames to those are flooded");
	sw_destroy(sw);
}

/*
 * The report names the limit a port has now, not the MACs it holds (a
 * lowered limit leaves those above it until they age), looks at every port
 * up to the last one added, and says a first refusal at once even in the
 * first minute of the clock (CLOCK_MONOTONIC starts at boot: pvnetd may
 * start within it).
 */
static void test_report_edges(void **state)
{
	struct fake_port a, b;
	struct sw *sw;
	uint8_t m[6];

	fake_reset();
	fake_now_ns = 10 * S;
	sw = fake_sw(0, 10);
	fake_port_add(sw, &a, 0);
	fake_port_add(sw, &b, 1);
	for (unsigned int i = 1; i <= 3; i++) {
		fake_mac(m, i);
		fake_send(sw, &b, i, bcast, m);
	}
	assert_int_equal(fake_stat(&b, "fdb_entries"), 3);
	sw_port_set_mac_limit(b.port, 2);
	fake_mac(m, 4);
	fake_send(sw, &b, 4, bcast, m);
	assert_int_equal(fake_stat(&b, "learn_limit"), 1);
	assert_int_equal(fake_stat(&b, "fdb_entries"), 3);
	report_says(sw, fake_now_ns,
		    "switch: port p1 is at its limit of 2 MACs: 1 frame from MACs it "
		    "could not learn so far; frames to those are flooded");
	report_says(sw, fake_now_ns + S, NULL);
	sw_destroy(sw);
}

/* sw_get_config() gives back what the switch was made with. */
static void test_get_config(void **state)
{
	struct sw_config cfg, out;
	struct sw *sw;

	sw_config_init(&cfg);
	cfg.fdb_max = 777;
	cfg.port_mac_limit = 5;
	cfg.ageing_s = 42;
	cfg.clock = fake_clock;
	assert_int_equal(sw_create(&cfg, &sw), 0);
	sw_get_config(sw, &out);
	assert_int_equal(out.fdb_max, 777);
	assert_int_equal(out.port_mac_limit, 5);
	assert_int_equal(out.ageing_s, 42);
	assert_ptr_equal(out.clock, fake_clock);
	sw_destroy(sw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_keyed),
	    cmocka_unit_test(test_hash_spreads),
	    cmocka_unit_test(test_bucket_full),
	    cmocka_unit_test(test_refusals_count_frames),
	    cmocka_unit_test(test_learn_requests),
	    cmocka_unit_test(test_age_configured),
	    cmocka_unit_test(test_relearn_same_port),
	    cmocka_unit_test(test_age_clock_behind),
	    cmocka_unit_test(test_dump),
	    cmocka_unit_test(test_get_config),
	    cmocka_unit_test(test_report),
	    cmocka_unit_test(test_first_slot),
	    cmocka_unit_test(test_dump_edges),
	    cmocka_unit_test(test_report_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
