// SPDX-License-Identifier: MIT
// test_persistent.c - persistent grants: no grant op per packet, cache bounds, release at disconnect

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fx.h"
#include "store/store.h"

static uint64_t stat_of(struct back_vif *vif, const char *name)
{
	return back_vif_stat(vif, 0, name);
}

static uint64_t maps_in_use(struct fx *x)
{
	struct hv_stats st;

	hv_stats(x->w.hv, &st);
	return st.maps_in_use;
}

/* Post buffers on @rx and take frames until @want arrived (or the wait ends); returns the count. */
static unsigned int recv_count(struct fx *x, struct ff *rx, unsigned int want)
{
	uint64_t end = test_now_ms() + WAIT_MS;
	struct ff_rxinfo info;
	unsigned int got = 0;

	while (got < want && test_now_ms() < end) {
		ff_rx_post(rx, 0, FF_RING);
		if (ff_rx_recv(rx, 0, x->rbuf, sizeof(x->rbuf), &info) >= 0)
			got++;
		else
			loop_run_once(x->w.loop, 1);
	}
	return got;
}

/* B posts @gref as its only RX buffer and A sends it a frame: the buffer is refused (-EIO). */
static void rx_buffer_refused(struct fx *x, grant_ref_t gref)
{
	struct ff_rxinfo info;
	int n = -EAGAIN;

	ff_rx_post_gref(&x->b, 0, gref);
	send_only(x, &x->a, mac_a, mac_b, 1, 300, 0);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
	    WAIT_MS));
	assert_int_equal(n, -EIO);
}

/*
 * Both directions: no grant copy and no unmap ever, each page of the pool
 * mapped at most once however many frames pass; the mappings stay until
 * the vifs go away (fx_free checks that none is left).
 */
static void test_steady_state(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_txopt multi = {.slot_max = 4096};
	struct ff_txopt gso4 = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
				.gso_size = 1448,
				.flags = NETTXF_csum_blank | NETTXF_data_validated};
	uint64_t maps_a, maps_b, batches;

	assert_int_equal(back_vif_tx_mode(x->va), BACK_TX_PERSISTENT);
	assert_int_equal(back_vif_tx_mode(x->vb), BACK_TX_PERSISTENT);
	/* Warm-up: all 256 TX ids of A at once, all 256 RX slots of B. */
	send_only(x, &x->a, mac_a, mac_b, FF_RING, 60, 0);
	assert_int_equal(recv_count(x, &x->b, FF_RING), FF_RING);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == FF_RING, WAIT_MS));
	maps_a = stat_of(x->va, "grant_map_ops");
	maps_b = stat_of(x->vb, "grant_map_ops");
	batches = stat_of(x->va, "grant_batches") + stat_of(x->vb, "grant_batches");
	assert_int_equal(maps_a, FF_RING);
	assert_int_equal(maps_b, FF_RING);

	/* Steady state: A to B maps nothing more, whatever the sizes. */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 2000, 60, 1514, NULL, 0);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 60, 1515, 65535, &multi, 3000);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60000, 65535, &gso4, 4000);
	assert_int_equal(stat_of(x->va, "grant_map_ops"), maps_a);
	assert_int_equal(stat_of(x->vb, "grant_map_ops"), maps_b);
	assert_int_equal(stat_of(x->va, "grant_batches") + stat_of(x->vb, "grant_batches"),
			 batches);

	/* The other way: B's TX pages and A's RX pages, each mapped at most once. */
	transfer(x, &x->b, mac_b, &x->a, mac_a, 500, 60, 9000, &multi, 5000);
	maps_a = stat_of(x->va, "grant_map_ops");
	maps_b = stat_of(x->vb, "grant_map_ops");
	assert_true(maps_a > 0 && maps_a <= FF_POOL);
	assert_true(maps_b > 0 && maps_b <= FF_POOL);
	assert_int_equal(stat_of(x->va, "grant_copy_ops"), 0);
	assert_int_equal(stat_of(x->vb, "grant_copy_ops"), 0);
	assert_int_equal(stat_of(x->va, "grant_unmap_ops"), 0);
	assert_int_equal(stat_of(x->vb, "grant_unmap_ops"), 0);
	batches = stat_of(x->va, "grant_batches") + stat_of(x->vb, "grant_batches");
	assert_true(batches <= maps_a + maps_b);
	assert_int_equal(stat_of(x->va, "tx_dropped"), 0);
	assert_int_equal(stat_of(x->vb, "rx_dropped"), 0);
	/* Every mapping is held: the 6 ring pages plus one per page seen. */
	assert_int_equal(maps_in_use(x), 6 + maps_a + maps_b);

	fx_free(x);
}

/* A frontend that does not accept feature-persistent gets map mode, unchanged. */
static void test_not_accepted(void **state)
{
	struct ff_opts plain = {.nq = 1, .sg = true, .rx_notify = true};
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, &plain, NULL);

	assert_int_equal(back_vif_tx_mode(x->va), BACK_TX_MAP);
	assert_int_equal(back_vif_tx_mode(x->vb), BACK_TX_PERSISTENT);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 300, 1000, 1514, NULL, 0);
	/*
	 * A: a map per frame, an unmap at completion, and no grant copy: each
	 * frame is one slot, so its header is copied from that slot's mapping.
	 */
	assert_true(stat_of(x->va, "grant_map_ops") >= 300);
	assert_int_equal(stat_of(x->va, "grant_unmap_ops"), stat_of(x->va, "grant_map_ops"));
	assert_int_equal(stat_of(x->va, "grant_copy_ops"), 0);
	/* and still batched: fewer hypercalls than frames */
	assert_true(stat_of(x->va, "grant_batches") < 3 * 300);
	assert_int_equal(stat_of(x->vb, "grant_copy_ops"), 0);
	assert_int_equal(stat_of(x->vb, "grant_unmap_ops"), 0);
	fx_free(x);
}

/* A pool of 20 pages: the 21st distinct reference is outside it and its packet is dropped. */
static void test_cache_bound(void **state)
{
	struct ff_opts small = {
	    .nq = 1, .sg = true, .rx_notify = true, .persistent = true, .persistent_grants = 20};
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, &small, NULL);
	struct ff_queue *q = &x->a.q[0];

	assert_int_equal(back_vif_tx_mode(x->va), BACK_TX_PERSISTENT);
	/* 64 frames at once: 64 TX ids, 64 distinct pages */
	send_only(x, &x->a, mac_a, mac_b, 64, 100, 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 64, WAIT_MS));
	assert_int_equal(q->tx_rsp_okay, 20);
	assert_int_equal(q->tx_rsp_error, 44);
	assert_int_equal(stat_of(x->va, "persistent_overflow"), 44);
	assert_int_equal(stat_of(x->va, "tx_bad_gref"), 44);
	assert_int_equal(stat_of(x->va, "grant_map_ops"), 20);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);

	/* The same 64 pages again: the 20 cached ones work, nothing more is mapped. */
	send_only(x, &x->a, mac_a, mac_b, 64, 100, 100);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 128, WAIT_MS));
	assert_int_equal(q->tx_rsp_okay, 40);
	assert_int_equal(stat_of(x->va, "grant_map_ops"), 20);
	assert_int_equal(stat_of(x->va, "grant_unmap_ops"), 0);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	/* B receives exactly the frames that were answered OKAY */
	assert_int_equal(recv_count(x, &x->b, 40), 40);
	assert_int_equal(stat_of(x->vb, "rx_packets"), 40);
	fx_free(x);
}

/* Bad references are dropped as in map mode, and never enter the cache. */
static void test_bad_refs(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];
	netif_tx_request_t r = {.gref = 999999, .id = 1, .size = 60};
	grant_ref_t ro;

	make_frame(ff_tx_page(&x->a, 0, q->tx.req_prod_pvt), 60, mac_b, mac_a, 0);
	ff_tx_raw(&x->a, 0, &r, 1);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS));
	assert_int_equal(q->tx_rsp_error, 1);
	assert_int_equal(stat_of(x->va, "tx_bad_gref"), 1);
	assert_int_equal(stat_of(x->va, "persistent_overflow"), 0);

	/* RX: a read-only grant cannot be a receive buffer, even from the pool's domain */
	assert_int_equal(hv_gntshr_alloc_ref(&x->b.gs, &ro), 0);
	assert_int_equal(hv_gntshr_grant_access(&x->b.gs, ro, 0, x->b.q[0].rx_buf0, true), 0);
	rx_buffer_refused(x, ro);
	assert_int_equal(stat_of(x->vb, "rx_bad_gref"), 1);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	/* only the good pages are mapped */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 1514, NULL, 10);
	assert_int_equal(maps_in_use(x),
			 6 + stat_of(x->va, "grant_map_ops") + stat_of(x->vb, "grant_map_ops") - 2);
	fx_free(x);
}

/*
 * Misses whose map fails are deleted from the cache's probe sequences in
 * the middle of the mapped pages' clusters: no mapped page may become
 * unreachable (it would be mapped a second time) and every good buffer
 * keeps working.  B posts a bad reference before every good buffer, for
 * more than a ring's worth of frames.
 */
static void test_failed_misses_keep_the_cache(void **state)
{
	/* A pool just large enough (128 good pages, 4 bad ones pending): a dense table. */
	struct ff_opts ob = {
	    .nq = 1, .sg = true, .rx_notify = true, .persistent = true, .persistent_grants = 132};
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, &ob);
	struct ff_queue *qb = &x->b.q[0];
	bool used[FF_RING] = {false};
	unsigned int bad = 0, good = 0, distinct = 0, ok = 0, failed = 0;

	for (unsigned int round = 0; round < 64; round++) {
		for (unsigned int k = 0; k < 4; k++) {
			/* out of the grant table: every one is a failed map */
			ff_rx_post_gref(&x->b, 0, 20000 + bad++);
			unsigned int slot = qb->rx.req_prod_pvt & (FF_RING - 1);

			distinct += !used[slot];
			used[slot] = true;
			ff_rx_post(&x->b, 0, 1);
			good++;
		}
		send_only(x, &x->a, mac_a, mac_b, 8, 100, round * 8);
		for (unsigned int got = 0; got < 8;) {
			struct ff_rxinfo info;
			int n;

			assert_true(WAIT_UNTIL(
			    &x->w,
			    (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN,
			    WAIT_MS));
			if (n == -EIO)
				failed++;
			else if (n == 100)
				ok++;
			got++;
		}
		assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == (round + 1) * 8, WAIT_MS));
	}
	assert_int_equal(ok, good);
	assert_int_equal(failed, bad);
	/* each good page mapped exactly once, each bad reference tried once and forgotten */
	assert_int_equal(stat_of(x->vb, "grant_map_ops"), distinct + bad);
	assert_int_equal(stat_of(x->vb, "rx_bad_gref"), bad);
	assert_int_equal(maps_in_use(x), 6 + stat_of(x->va, "grant_map_ops") + distinct);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	fx_free(x);
}

/*
 * References that share a slot of the cache's memo (gnt.c, pgnt_probe()):
 * B's first six RX buffers are granted under references equal modulo
 * M = BACK_PGNT_MEMO, so each lookup of one of them finds the memo naming
 * another.  Every frame still lands in the page posted for it
 * (transfer() checks each bit), and each page is mapped exactly once: a
 * memo that answered for the wrong reference would write another page,
 * one that lost an entry would map its page again.
 */
static void test_memo_shared_slots(void **state)
{
	enum { NSHARED = 6 };
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_queue *qb = &x->b.q[0];
	grant_ref_t keep[NSHARED], spare[NSHARED * BACK_PGNT_MEMO];
	unsigned int nkeep = 0, nspare = 0;
	uint64_t maps;

	while (nkeep < NSHARED) {
		grant_ref_t r;

		assert_int_equal(hv_gntshr_alloc_ref(&x->b.gs, &r), 0);
		if (nkeep == 0 || r % BACK_PGNT_MEMO == keep[0] % BACK_PGNT_MEMO)
			keep[nkeep++] = r;
		else
			spare[nspare++] = r;
		assert_true(nspare < NSHARED * BACK_PGNT_MEMO);
	}
	for (unsigned int i = 0; i < nspare; i++)
		assert_int_equal(hv_gntshr_free_ref(&x->b.gs, spare[i]), 0);
	for (unsigned int k = 0; k < NSHARED; k++) {
		assert_int_equal(hv_gntshr_end_access(&x->b.gs, qb->rx_gref[k]), 0);
		assert_int_equal(
		    hv_gntshr_grant_access(&x->b.gs, keep[k], 0, qb->rx_buf0 + k, false), 0);
		qb->rx_gref[k] = keep[k];
	}
	/* Four times round B's ring: the shared slots looked up in turn, over and over. */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 4 * FF_RING, 60, 1514, NULL, 0);
	maps = stat_of(x->vb, "grant_map_ops");
	assert_int_equal(maps, FF_RING);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 4 * FF_RING, 60, 1514, NULL, 7000);
	assert_int_equal(stat_of(x->vb, "grant_map_ops"), maps);
	assert_int_equal(stat_of(x->vb, "rx_dropped"), 0);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	fx_free(x);
}

/* The frontend tries to revoke a page the backend keeps mapped: Xen's -EBUSY, the vif carries on. */
static void test_end_access_of_mapped_page(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);

	transfer(x, &x->a, mac_a, &x->b, mac_b, 100, 60, 1514, NULL, 0);
	assert_int_equal(hv_gntshr_end_access(&x->a.gs, x->a.q[0].tx_gref[0]), -EBUSY);
	assert_int_equal(hv_gntshr_end_access(&x->b.gs, x->b.q[0].rx_gref[0]), -EBUSY);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 100, 60, 1514, NULL, 100);
	fx_free(x);
}

/* persistent-grants missing or above persistent-max-grants: the vif is disabled with a reason. */
static void test_bad_pool_size(void **state)
{
	const long sizes[] = {-1, 0, BACK_PERSISTENT_MAX_DEFAULT + 1};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct ff_opts o = {
		    .nq = 1, .rx_notify = true, .persistent = true, .persistent_grants = sizes[i]};
		struct world w;
		struct back_vif *vif;
		struct hv_leak leak;
		struct ff f;

		assert_int_equal(world_create(&w, BACK_TX_PERSISTENT, NULL), 0);
		assert_int_equal(ff_create(&f, &w, 0), 0);
		assert_int_equal(back_vif_create(w.back, f.domid, 0, mac_a, &vif), 0);
		assert_int_equal(ff_connect(&f, &o), 0);
		assert_int_equal(back_vif_state(vif), XenbusStateClosing);
		assert_non_null(strstr(back_vif_error(vif), "persistent-grants"));
		back_vif_destroy(vif);
		ff_teardown(&f);
		ff_destroy(&f, &leak);
		assert_int_equal(leak.maps_in_use, 0);
		world_destroy(&w);
	}
}

/* One batch of read-only maps of @refs through @vif's queue 0 cache; the statuses in @st. */
static void cache_map(struct back_vif *vif, domid_t dom, const grant_ref_t *refs, unsigned int n,
		      int16_t *st)
{
	struct gnttab_map_grant_ref ops[16];

	assert_true(n <= 16);
	for (unsigned int i = 0; i < n; i++)
		ops[i] = (struct gnttab_map_grant_ref){
		    .flags = GNTMAP_host_map | GNTMAP_readonly, .ref = refs[i], .dom = dom};
	assert_int_equal(back_gnt_map(vif->q[0], n, ops), 0);
	for (unsigned int i = 0; i < n; i++)
		st[i] = ops[i].status;
}

/*
 * The cache's deletions (pgnt_delete(), Knuth's Algorithm R) keep every
 * entry reachable: pages enter a small cache (64 pages, 128 slots) each
 * behind 12 failed misses of the same batch, which are deleted from
 * under them, and every page is found again afterwards with its memo
 * slot taken by another reference: each page mapped exactly once.
 */
static void test_cache_deletions_keep_entries(void **state)
{
	enum { NGOOD = 48, NBAD = 12 };
	struct ff_opts o = {
	    .nq = 1, .sg = true, .rx_notify = true, .persistent = true, .persistent_grants = 64};
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, &o, &o);
	struct ff *fs[2] = {&x->a, &x->b};
	struct back_vif *vs[2] = {x->va, x->vb};

	(void)state;
	for (unsigned int v = 0; v < 2; v++) {
		const grant_ref_t *good = fs[v]->q[0].tx_gref;
		uint64_t maps = 0;
		grant_ref_t refs[NBAD + 1];
		int16_t st[NBAD + 1];

		for (unsigned int g = 0; g < NGOOD; g++) {
			/* never granted: each map fails, and the entry is deleted */
			for (unsigned int k = 0; k < NBAD; k++)
				refs[k] = 20000 + (g * NBAD + k) * 7;
			refs[NBAD] = good[g];
			cache_map(vs[v], fs[v]->domid, refs, NBAD + 1, st);
			for (unsigned int k = 0; k < NBAD; k++)
				assert_int_not_equal(st[k], GNTST_okay);
			assert_int_equal(st[NBAD], GNTST_okay);
			maps += NBAD + 1;
			assert_int_equal(stat_of(vs[v], "grant_map_ops"), maps);
		}
		for (unsigned int round = 0; round < 2; round++) {
			for (unsigned int g = 0; g < NGOOD; g++) {
				/* a failed reference that shares the page's memo slot */
				refs[0] = good[g] + BACK_PGNT_MEMO * (40 + round);
				cache_map(vs[v], fs[v]->domid, refs, 1, st);
				assert_int_not_equal(st[0], GNTST_okay);
				maps++;
				cache_map(vs[v], fs[v]->domid, &good[g], 1, st);
				assert_int_equal(st[0], GNTST_okay);
				assert_int_equal(stat_of(vs[v], "grant_map_ops"), maps);
			}
		}
		assert_int_equal(stat_of(vs[v], "persistent_overflow"), 0);
		/* one map hypercall per batch with misses, none for a batch of hits */
		assert_int_equal(stat_of(vs[v], "grant_batches"), 3 * NGOOD);
	}
	fx_free(x);
}

/*
 * A cache holding its whole pool (FF_POOL pages, a power of two: every TX
 * and RX page of A) still answers a reference beyond it: the table keeps
 * an empty slot to end every probe.
 */
static void test_full_cache(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_queue *q = &x->a.q[0];
	netif_tx_request_t r = {.gref = 999999, .size = 60};

	(void)state;
	send_only(x, &x->a, mac_a, mac_b, FF_RING, 60, 0);
	assert_int_equal(recv_count(x, &x->b, FF_RING), FF_RING);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == FF_RING, WAIT_MS));
	send_only(x, &x->b, mac_b, mac_a, FF_RING, 60, 1000);
	assert_int_equal(recv_count(x, &x->a, FF_RING), FF_RING);
	assert_int_equal(stat_of(x->va, "grant_map_ops"), FF_POOL);
	r.id = (uint16_t)(q->tx.req_prod_pvt & (FF_RING - 1));
	make_frame(ff_tx_page(&x->a, 0, q->tx.req_prod_pvt), 60, mac_b, mac_a, 0);
	ff_tx_raw(&x->a, 0, &r, 1);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->a) == FF_RING + 1, WAIT_MS));
	assert_int_equal(q->tx_rsp_error, 1);
	assert_int_equal(stat_of(x->va, "persistent_overflow"), 1);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	fx_free(x);
}

/*
 * A page the cache holds read-only (one of B's TX pages, mapped for B's
 * frames) posted as an RX buffer: refused, and the page keeps its bytes.
 */
static void test_cached_read_only_page_as_rx_buffer(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_queue *qb = &x->b.q[0];
	uint8_t before[4096], *page = x->b.mem + (size_t)qb->tx_buf0 * 4096;

	(void)state;
	/* every TX page of B enters B's cache read-only */
	send_only(x, &x->b, mac_b, mac_a, FF_RING, 60, 0);
	assert_int_equal(recv_count(x, &x->a, FF_RING), FF_RING);
	assert_true(WAIT_UNTIL(&x->w, answered(&x->b) == FF_RING, WAIT_MS));
	assert_int_equal(stat_of(x->vb, "grant_map_ops"), FF_RING);
	memcpy(before, page, sizeof(before));
	rx_buffer_refused(x, qb->tx_gref[0]);
	assert_int_equal(stat_of(x->vb, "rx_bad_gref"), 1);
	assert_memory_equal(page, before, sizeof(before));
	assert_int_equal(stat_of(x->vb, "grant_map_ops"), FF_RING);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	fx_free(x);
}

/*
 * A pool of exactly persistent-max-grants pages is allowed, up to the
 * largest limit the backend takes (BACK_PERSISTENT_MAX_LIMIT).
 */
static void test_pool_size_at_limit(void **state)
{
	const uint32_t limits[] = {FF_POOL, BACK_PERSISTENT_MAX_LIMIT};

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct ff_opts oa = FF_OPTS_DEFAULT;
		struct back_config cfg;
		struct fx *x;

		back_config_default(&cfg);
		cfg.persistent_max_grants = limits[i];
		oa.persistent_grants = limits[i];
		x = fx_new(BACK_TX_PERSISTENT, &cfg, &oa, NULL);
		assert_int_equal(xs_read_long(x->w.store, x->va->be_path, "persistent-max-grants"),
				 limits[i]);
		assert_int_equal(back_vif_tx_mode(x->va), BACK_TX_PERSISTENT);
		assert_null(back_vif_error(x->va));
		transfer(x, &x->a, mac_a, &x->b, mac_b, 100, 60, 1514, NULL, 0);
		assert_int_equal(stat_of(x->va, "grant_copy_ops"), 0);
		fx_free(x);
	}
	(void)state;
}

/*
 * Disconnect with every mapping held releases them all; a reconnect with
 * a new pool maps the new pages and works bit-exact.
 */
static void test_disconnect_reconnect(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct ff_opts o = {.nq = 1,
			    .sg = true,
			    .gso4 = true,
			    .rx_notify = true,
			    .persistent = true,
			    .persistent_grants = FF_POOL};
	uint64_t before, held_a;

	transfer(x, &x->a, mac_a, &x->b, mac_b, 500, 60, 1514, NULL, 0);
	transfer(x, &x->b, mac_b, &x->a, mac_a, 500, 60, 1514, NULL, 0);
	held_a = stat_of(x->va, "grant_map_ops");
	before = maps_in_use(x);
	assert_true(held_a > 2);

	ff_set_state(&x->a, XenbusStateClosing);
	assert_int_equal(back_vif_state(x->va), XenbusStateClosing);
	/* A's two rings and every page of its pool are unmapped */
	assert_int_equal(maps_in_use(x), before - 2 - held_a);
	assert_int_equal(stat_of(x->va, "grant_unmap_ops"), held_a);
	ff_set_state(&x->a, XenbusStateClosed);
	assert_int_equal(back_vif_state(x->va), XenbusStateClosed);
	/* nothing is mapped any more: the frontend can revoke its pages */
	assert_int_equal(hv_gntshr_end_access(&x->a.gs, x->a.q[0].tx_gref[0]), 0);
	assert_int_equal(hv_gntshr_end_access(&x->a.gs, x->a.q[0].rx_gref[0]), 0);
	ff_teardown(&x->a);

	/* reconnect with freshly granted pages */
	ff_set_state(&x->a, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->va), XenbusStateInitWait);
	assert_int_equal(ff_connect(&x->a, &o), 0);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	assert_int_equal(back_vif_tx_mode(x->va), BACK_TX_PERSISTENT);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 500, 60, 1514, NULL, 900);
	transfer(x, &x->b, mac_b, &x->a, mac_a, 500, 60, 1514, NULL, 900);
	assert_true(stat_of(x->va, "grant_map_ops") > 2);
	assert_int_equal(stat_of(x->va, "grant_copy_ops"), 0);
	fx_free(x);
}

/* A sender thread: A streams small frames at B until told to stop. */
struct streamer {
	struct ff *a;
	atomic_bool stop;
	uint8_t buf[256];
};

static void *streamer_main(void *arg)
{
	struct streamer *s = arg;
	uint32_t seed = 0;

	while (!atomic_load(&s->stop)) {
		unsigned int k = 0;

		ff_tx_reap(s->a, 0);
		while (k < 64 && ff_tx_free(s->a, 0) > 0 && s->a->q[0].nid_free > 0) {
			make_frame(s->buf, 200, mac_b, mac_a, seed++);
			if (ff_tx_frame(s->a, 0, s->buf, 200, NULL) < 0)
				break;
			k++;
		}
		if (k)
			ff_tx_push(s->a, 0);
		else
			usleep(50);
	}
	return NULL;
}

/*
 * B, with a control ring, disconnects while A's worker delivers into B's
 * queue 0 and every delivery is a cache miss (RX buffers on fresh refs):
 * those misses are mapped through B's queue 0 grant handle, which the
 * control ring is unmapped through.  Unmapped before B's switch port went,
 * the two raced on the handle's free list (ThreadSanitizer: a data race in
 * hv_gnttab_unmap_one against hv_gnttab_map_one, this suite runs under
 * it), and a lost race left pins and mappings of B for good.  Afterwards
 * every grant of B can be ended and nothing stays mapped.
 */
static void test_disconnect_while_delivering(void **state)
{
	enum { SPARE = FF_PAGES_PER_Q + 10, FRESH = 255 };
	struct ff_opts oa = {.nq = 1,
			     .sg = true,
			     .rx_notify = true,
			     .persistent = true,
			     .persistent_grants = FF_POOL};
	struct ff_opts ob = oa;

	ob.persistent_grants = FF_POOL + FRESH + 1;
	for (unsigned int it = 0; it < 30; it++) {
		struct streamer *s = calloc(1, sizeof(*s));
		grant_ref_t fresh[FRESH], cref;
		xen_netif_ctrl_sring_t *cs;
		struct back_vif *va, *vb;
		evtchn_port_t cport;
		unsigned int busy = 0;
		struct hv_leak leak;
		struct hv_stats st;
		struct world w;
		struct ff a, b;
		pthread_t th;
		char path[160], val[16];

		assert_non_null(s);
		assert_int_equal(world_create(&w, BACK_TX_PERSISTENT, NULL), 0);
		assert_int_equal(ff_create(&a, &w, 0), 0);
		assert_int_equal(ff_create(&b, &w, 0), 0);
		assert_int_equal(back_vif_create(w.back, a.domid, 0, mac_a, &va), 0);
		assert_int_equal(back_vif_create(w.back, b.domid, 0, mac_b, &vb), 0);
		assert_int_equal(ff_connect(&a, &oa), 0);
		/* B's control ring, on a spare page of its memory. */
		cs = (void *)(b.mem + (size_t)SPARE * HV_PAGE_SIZE);
		SHARED_RING_INIT(cs);
		assert_int_equal(hv_gntshr_alloc_ref(&b.gs, &cref), 0);
		assert_int_equal(hv_gntshr_grant_access(&b.gs, cref, 0, SPARE, false), 0);
		assert_int_equal(hv_evtchn_alloc_unbound(w.hv, b.domid, 0, &cport), 0);
		snprintf(path, sizeof(path), "%s/ctrl-ring-ref", b.fe_path);
		snprintf(val, sizeof(val), "%u", cref);
		assert_int_equal(store_write(b.store, path, val, strlen(val)), 0);
		snprintf(path, sizeof(path), "%s/event-channel-ctrl", b.fe_path);
		snprintf(val, sizeof(val), "%u", cport);
		assert_int_equal(store_write(b.store, path, val, strlen(val)), 0);
		assert_int_equal(ff_connect(&b, &ob), 0);
		assert_int_equal(back_vif_state(vb), XenbusStateConnected);

		s->a = &a;
		assert_int_equal(pthread_create(&th, NULL, streamer_main, s), 0);
		usleep(2000);
		for (unsigned int i = 0; i < FRESH; i++) {
			assert_int_equal(hv_gntshr_alloc_ref(&b.gs, &fresh[i]), 0);
			assert_int_equal(
			    hv_gntshr_grant_access(&b.gs, fresh[i], 0, SPARE + 1 + i, false), 0);
			ff_rx_post_gref(&b, 0, fresh[i]);
		}
		usleep(it * 20);
		ff_set_state(&b, XenbusStateClosing);
		atomic_store(&s->stop, true);
		pthread_join(th, NULL);
		ff_set_state(&b, XenbusStateClosed);

		/* B's backend has let go of everything: every grant of B can be ended. */
		for (unsigned int i = 0; i < FRESH; i++)
			busy += hv_gntshr_end_access(&b.gs, fresh[i]) == -EBUSY;
		for (unsigned int j = 0; j < FF_RING; j++) {
			busy += hv_gntshr_end_access(&b.gs, b.q[0].rx_gref[j]) == -EBUSY;
			busy += hv_gntshr_end_access(&b.gs, b.q[0].tx_gref[j]) == -EBUSY;
		}
		busy += hv_gntshr_end_access(&b.gs, cref) == -EBUSY;
		assert_int_equal(busy, 0);
		back_vif_destroy(vb);
		back_vif_destroy(va);
		hv_stats(w.hv, &st);
		assert_int_equal(st.maps_in_use, 0);
		ff_destroy(&a, &leak);
		ff_destroy(&b, &leak);
		hv_stats(w.hv, &st);
		assert_int_equal(st.zombies, 0);
		world_destroy(&w);
		free(s);
	}
}

/* The frontend's domain dies with its pages mapped: the backend lets go, nothing leaks. */
static void test_frontend_dies(void **state)
{
	struct fx *x = fx_new(BACK_TX_PERSISTENT, NULL, NULL, NULL);
	struct hv_leak leak;
	struct hv_stats st;

	transfer(x, &x->a, mac_a, &x->b, mac_b, 300, 60, 1514, NULL, 0);
	transfer(x, &x->b, mac_b, &x->a, mac_a, 300, 60, 1514, NULL, 0);
	/* A dies: its memory lives on as a zombie while the backend maps it */
	assert_int_equal(hv_domain_destroy(x->w.hv, x->a.domid, &leak), 0);
	assert_true(leak.maps_in_use > 2);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.zombies, 1);
	/* the toolstack releases its store nodes and removes the vif: every mapping goes */
	ff_destroy(&x->a, NULL);
	back_vif_destroy(x->va);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.zombies, 0);
	/* B and C carry on */
	transfer(x, &x->c, mac_c, &x->b, mac_b, 100, 60, 1514, NULL, 0);
	back_vif_destroy(x->vb);
	back_vif_destroy(x->vc);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_destroy(&x->b, &leak);
	ff_destroy(&x->c, &leak);
	world_destroy(&x->w);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_steady_state),
	    cmocka_unit_test(test_not_accepted),
	    cmocka_unit_test(test_cache_bound),
	    cmocka_unit_test(test_bad_refs),
	    cmocka_unit_test(test_failed_misses_keep_the_cache),
	    cmocka_unit_test(test_memo_shared_slots),
	    cmocka_unit_test(test_end_access_of_mapped_page),
	    cmocka_unit_test(test_bad_pool_size),
	    cmocka_unit_test(test_pool_size_at_limit),
	    cmocka_unit_test(test_cache_deletions_keep_entries),
	    cmocka_unit_test(test_full_cache),
	    cmocka_unit_test(test_cached_read_only_page_as_rx_buffer),
	    cmocka_unit_test(test_disconnect_reconnect),
	    cmocka_unit_test(test_frontend_dies),
	    cmocka_unit_test(test_disconnect_while_delivering),
	};

	log_set_level(LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
