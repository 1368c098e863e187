// SPDX-License-Identifier: MIT
/* test_e2e.c - two netfront domains through a real pvnetd: netback, switch, bit-exact frames */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../common/group_run.h"
#include "harness.h"

/*
 * Nothing faked: pvnetd creates both vifs ("vif-create"), its netback
 * connects them and its switch floods broadcast frames from A to B.
 */

static const char *pvnetd_exe;
static struct harness H;

struct pair {
	struct pvnet_domain *da, *db;
	struct pvnet_vif *a, *b;
};

/* A and B; B asks for @b_features (A for the defaults). */
static int pair_open_features(struct pair *p, unsigned int queues, uint32_t b_features)
{
	struct pvnet_vif_config cfg;
	int rc;

	memset(p, 0, sizeof(*p));
	if (pvnet_domain_create(H.run_dir, 4096, &p->da) ||
	    pvnet_domain_create(H.run_dir, 4096, &p->db))
		return -EIO;
	pvnet_vif_config_default(&cfg);
	cfg.queues = queues;
	rc = pvnet_vif_create(p->da, &cfg, &p->a);
	/* B asks for its MAC; A lets pvnetd choose. */
	memcpy(cfg.mac, "\x00\x16\x3e\x12\x34\x56", 6);
	cfg.features = b_features;
	if (rc == 0)
		rc = pvnet_vif_create(p->db, &cfg, &p->b);
	return rc;
}

static int pair_open(struct pair *p, unsigned int queues)
{
	return pair_open_features(p, queues, PVNET_F_ALL);
}

static void pair_close(struct pair *p)
{
	pvnet_vif_destroy(p->a);
	pvnet_vif_destroy(p->b);
	pvnet_domain_destroy(p->da);
	pvnet_domain_destroy(p->db);
}

/* A broadcast frame from @src's MAC, payload a function of @seq. */
static void make_frame(uint8_t *f, uint32_t len, struct pvnet_vif *src, uint32_t seq)
{
	memset(f, 0xff, 6);
	pvnet_vif_mac(src, f + 6);
	f[12] = 0x88; /* 0x88b5: IEEE local experimental ethertype */
	f[13] = 0xb5;
	memcpy(f + 14, &seq, sizeof(seq));
	for (uint32_t i = 18; i < len; i++)
		f[i] = (uint8_t)(seq * 13 + i);
}

/* Receive on every queue of @vif until @want frames came or 5 s passed. */
static int recv_all(struct pvnet_vif *vif, struct pvnet_pkt *pkts, unsigned int want, void *buf,
		    size_t buflen)
{
	unsigned int nq = pvnet_vif_queues(vif), got = 0;
	size_t used = 0;

	/* 5 s: frames cross pvnetd in microseconds; the bound only ends a broken run. */
	for (int t = 0; t < 500 && got < want; t++) {
		struct pollfd pf[PVNET_MAX_QUEUES];

		for (unsigned int q = 0; q < nq; q++) {
			int n = pvnet_recv(vif, q, pkts + got, want - got, (char *)buf + used,
					   buflen - used);

			if (n < 0)
				return n;
			for (int i = 0; i < n; i++)
				used += pkts[got + (unsigned int)i].len;
			got += (unsigned int)n;
			pf[q] = (struct pollfd){.fd = pvnet_queue_fd(vif, q), .events = POLLIN};
		}
		if (got < want)
			poll(pf, nq, 10);
	}
	return (int)got;
}

static void test_sizes(void **state)
{
	static const uint32_t sizes[] = {60, 1500, 4095, 4096, 4097, 9000, 30000, 65535};
	static uint8_t f[PVNET_MAX_FRAME], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt, r;
	struct pair p;
	int rc = pair_open(&p, 1);

	assert_int_equal(rc, 0);
	uint8_t mac[6];

	pvnet_vif_mac(p.b, mac);
	assert_memory_equal(mac, "\x00\x16\x3e\x12\x34\x56", 6);
	pvnet_vif_mac(p.a, mac);
	assert_memory_equal(mac, "\x00\x16\x3e", 3);
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			make_frame(f, sizes[i], p.a, (uint32_t)i);
			pkt = (struct pvnet_pkt){.data = f, .len = sizes[i]};
			assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
			assert_int_equal(recv_all(p.b, &r, 1, out, sizeof(out)), 1);
			assert_int_equal(r.len, sizes[i]);
			assert_memory_equal(r.data, f, sizes[i]);
		}
	}
	assert_null(pvnet_vif_error(p.a));
	assert_null(pvnet_vif_error(p.b));
	pair_close(&p);
}

static void test_bursts_in_order(void **state)
{
	enum { FRAMES = 2000, BURST = 32, LEN = 1500 };
	static uint8_t f[BURST][LEN], out[BURST * LEN];
	struct pvnet_pkt pkts[BURST], r[BURST];
	uint32_t sent = 0, want = 0;
	struct pair p;
	int rc = pair_open(&p, 1);

	assert_int_equal(rc, 0);
	while (sent < FRAMES) {
		int n, got;

		for (int i = 0; i < BURST; i++) {
			make_frame(f[i], LEN, p.a, sent + (uint32_t)i);
			pkts[i] = (struct pvnet_pkt){.data = f[i], .len = LEN};
		}
		n = pvnet_send(p.a, 0, pkts, BURST);
		assert_true(n > 0);
		got = recv_all(p.b, r, (unsigned int)n, out, sizeof(out));
		assert_int_equal(got, n);
		for (int i = 0; i < got; i++) {
			uint32_t seq;

			memcpy(&seq, (const uint8_t *)r[i].data + 14, sizeof(seq));
			assert_int_equal(seq, want);
			assert_memory_equal(r[i].data, f[i], LEN);
			want++;
		}
		sent += (uint32_t)n;
	}
	pair_close(&p);
}

static void test_zero_copy(void **state)
{
	static uint8_t ref[6000];
	struct pvnet_buf *tx[2], *rx[2];
	struct pair p;
	int rc = pair_open(&p, 1), got = 0;

	assert_int_equal(rc, 0);
	make_frame(ref, sizeof(ref), p.a, 77);
	assert_int_equal(pvnet_tx_alloc(p.a, 0, tx, 2), 2);
	memcpy(tx[0]->data, ref, 4000);
	tx[0]->len = 4000;
	memcpy(tx[1]->data, ref + 4000, 2000);
	tx[1]->len = 2000;
	tx[0]->next = tx[1];
	assert_int_equal(pvnet_tx_submit(p.a, 0, tx, 1), 1);
	for (int t = 0; t < 500 && !got; t++) {
		struct pollfd pf = {.fd = pvnet_queue_fd(p.b, 0), .events = POLLIN};

		got = pvnet_rx_burst(p.b, 0, rx, 2);
		if (!got)
			poll(&pf, 1, 10);
	}
	assert_int_equal(got, 1);
	assert_int_equal(rx[0]->pkt_len, sizeof(ref));
	uint32_t off = 0;

	for (struct pvnet_buf *b = rx[0]; b; b = b->next) {
		assert_memory_equal(b->data, ref + off, b->len);
		off += b->len;
	}
	assert_int_equal(off, sizeof(ref));
	pvnet_rx_release(p.b, 0, rx, 1);
	pair_close(&p);
}

static void test_multi_queue(void **state)
{
	enum { PER_QUEUE = 100, LEN = 800 };
	static uint8_t f[LEN], out[4 * PER_QUEUE * LEN];
	struct pvnet_pkt pkt = {.data = f, .len = LEN}, r[4 * PER_QUEUE];
	unsigned int nq, seen[4 * PER_QUEUE] = {0};
	struct pair p;
	int rc = pair_open(&p, 4);

	assert_int_equal(rc, 0);
	nq = pvnet_vif_queues(p.a);
	assert_true(nq >= 1 && nq <= 4);
	for (unsigned int i = 0; i < PER_QUEUE * nq; i++) {
		make_frame(f, LEN, p.a, i);
		assert_int_equal(pvnet_send(p.a, i % nq, &pkt, 1), 1);
	}
	assert_int_equal(recv_all(p.b, r, PER_QUEUE * nq, out, sizeof(out)), (int)(PER_QUEUE * nq));
	for (unsigned int i = 0; i < PER_QUEUE * nq; i++) {
		uint32_t seq;

		memcpy(&seq, (const uint8_t *)r[i].data + 14, sizeof(seq));
		assert_true(seq < PER_QUEUE * nq);
		seen[seq]++;
	}
	for (unsigned int i = 0; i < PER_QUEUE * nq; i++)
		assert_int_equal(seen[i], 1);
	pair_close(&p);
}

/* The frontend closes and reconnects; pvnetd's netback goes Closed -> InitWait -> Connected. */
static void test_reconnect(void **state)
{
	static uint8_t f[1000], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt = {.data = f, .len = sizeof(f)}, r;
	struct pair p;
	int rc = pair_open(&p, 1);

	assert_int_equal(rc, 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(pvnet_vif_reconnect(round & 1 ? p.a : p.b), 0);
		make_frame(f, sizeof(f), p.a, (uint32_t)round);
		assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
		assert_int_equal(recv_all(p.b, &r, 1, out, sizeof(out)), 1);
		assert_memory_equal(r.data, f, sizeof(f));
	}
	assert_int_equal(pvnet_domain_abandoned_pages(p.da), 0);
	assert_int_equal(pvnet_domain_abandoned_pages(p.db), 0);
	pair_close(&p);
}

/* pvnetd --tx-mode persistent: both vifs accept feature-persistent. */
static void test_persistent_negotiated(void **state)
{
	struct pvnet_pkt pkt, r;
	uint8_t f[1514], out[2048];
	struct pair p;

	assert_int_equal(pair_open(&p, 1), 0);
	assert_true(pvnet_vif_features(p.a) & PVNET_F_PERSISTENT);
	assert_true(pvnet_vif_features(p.b) & PVNET_F_PERSISTENT);
	pkt = (struct pvnet_pkt){.data = f, .len = sizeof(f)};
	for (uint32_t i = 0; i < 100; i++) {
		make_frame(f, sizeof(f), p.a, i);
		assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
		assert_int_equal(recv_all(p.b, &r, 1, out, sizeof(out)), 1);
		assert_memory_equal(r.data, f, sizeof(f));
	}
	pair_close(&p);
}

/* One counter of queue 0 by name. */
static uint64_t qstat(struct pvnet_vif *vif, const char *name)
{
	struct pvnet_stat st[32];
	int n = pvnet_queue_stats(vif, 0, st, 32);

	for (int i = 0; i < n && i < 32; i++)
		if (!strcmp(st[i].name, name))
			return st[i].value;
	return UINT64_MAX;
}

/* Let @vif reap its TX answers until @name reaches @want (5 s at most). */
static bool wait_stat(struct pvnet_vif *vif, const char *name, uint64_t want)
{
	struct pvnet_pkt none = {0};

	for (int t = 0; t < 500 && qstat(vif, name) != want; t++) {
		pvnet_send(vif, 0, &none, 0); /* reaps, sends nothing */
		poll(NULL, 0, 10);
	}
	return qstat(vif, name) == want;
}

/*
 * B asks for the multicast filter (PVNET_F_MCAST_FILTER): a group it has
 * not joined stays away, broadcast does not; pvnet_mcast_add() lets the
 * group in and pvnet_mcast_del() shuts it out again.
 */
static void test_mcast_filter(void **state)
{
	static const uint8_t g[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
	static uint8_t f[100], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt = {.data = f, .len = sizeof(f)}, r;
	uint8_t unicast[6];
	struct pair p;

	assert_int_equal(pair_open_features(&p, 1, PVNET_F_ALL | PVNET_F_MCAST_FILTER), 0);
	assert_true(pvnet_vif_features(p.b) & PVNET_F_MCAST_FILTER);
	assert_false(pvnet_vif_features(p.a) & PVNET_F_MCAST_FILTER);
	pvnet_vif_mac(p.a, unicast);
	assert_int_equal(pvnet_mcast_add(p.b, 0, unicast), -EINVAL);
	assert_int_equal(pvnet_mcast_add(p.b, 0, (const uint8_t *)"\xff\xff\xff\xff\xff\xff"),
			 -EINVAL);

	for (uint32_t round = 0; round < 2; round++) {
		/* Not joined (yet, or any more): the group's frame is dropped, the broadcast comes. */
		make_frame(f, sizeof(f), p.a, 10 * round + 1);
		memcpy(f, g, 6);
		assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
		make_frame(f, sizeof(f), p.a, 10 * round + 2);
		assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
		assert_int_equal(recv_all(p.b, &r, 1, out, sizeof(out)), 1);
		assert_memory_equal(r.data, f, sizeof(f));

		if (round == 1)
			break;
		assert_int_equal(pvnet_mcast_add(p.b, 0, g), 1);
		assert_true(wait_stat(p.b, "mcast_requests", 1));
		make_frame(f, sizeof(f), p.a, 3);
		memcpy(f, g, 6);
		assert_int_equal(pvnet_send(p.a, 0, &pkt, 1), 1);
		assert_int_equal(recv_all(p.b, &r, 1, out, sizeof(out)), 1);
		assert_memory_equal(r.data, f, sizeof(f));
		assert_int_equal(pvnet_mcast_del(p.b, 0, g), 1);
		assert_true(wait_stat(p.b, "mcast_requests", 2));
	}
	assert_int_equal(qstat(p.b, "mcast_refused"), 0);
	assert_int_equal(qstat(p.b, "tx_errors"), 0);
	assert_int_equal(qstat(p.b, "tx_packets"), 0);
	assert_null(pvnet_vif_error(p.b));
	pair_close(&p);
}

static int group_setup(void **state)
{
	return h_start(&H, pvnetd_exe);
}

static int group_setup_persistent(void **state)
{
	return h_start_mode(&H, pvnetd_exe, "persistent");
}

static int group_teardown(void **state)
{
	return h_stop(&H);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes),     cmocka_unit_test(test_bursts_in_order),
	    cmocka_unit_test(test_zero_copy), cmocka_unit_test(test_multi_queue),
	    cmocka_unit_test(test_reconnect), cmocka_unit_test(test_mcast_filter),
	};
	/* The same through persistent grants, and the negotiation itself. */
	const struct CMUnitTest persistent[] = {
	    cmocka_unit_test(test_persistent_negotiated), cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_bursts_in_order),	  cmocka_unit_test(test_zero_copy),
	    cmocka_unit_test(test_multi_queue),		  cmocka_unit_test(test_reconnect),
	};
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	pvnetd_exe = argv[1];
	rc = group_run_tests_name("map", tests, group_setup, group_teardown);
	return rc | group_run_tests_name("persistent", persistent, group_setup_persistent,
					 group_teardown);
}
