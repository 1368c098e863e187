// SPDX-License-Identifier: MIT
// test_stress.c - two threads on one domain: map/unmap vs copy, copies across pin-lock
// blocks both ways, a guest changing GTF_readonly under copies, notify vs consume

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "hv/hv.h"
#include "hv/hv_internal.h"
#include "hv_test.h"

/* Bounded so that the test stays well under a second even under TSan. */
#define ROUNDS	 2000
#define NREFS	 16
#define NOTIFIES 20000
#define POLL_MS	 100

struct grant_stress {
	struct hv *hv;
	struct guest *g;
	domid_t dom;
	grant_ref_t refs[NREFS];
	grant_ref_t rx_refs[NREFS];
	int errors;
};

/* Worker 1 (netback TX style): map a batch of refs read-only, check, unmap. */
static void *mapper(void *arg)
{
	struct grant_stress *s = arg;
	struct gnttab_map_grant_ref ops[NREFS];
	struct gnttab_unmap_grant_ref u[NREFS];
	struct hv_gnttab *gt = hv_gnttab_open(s->hv, 0);

	if (!gt)
		return (void *)1;
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < NREFS; i++)
			ops[i] = (struct gnttab_map_grant_ref){.flags = GNTMAP_host_map |
									GNTMAP_readonly,
							       .ref = s->refs[i],
							       .dom = s->dom};
		if (hv_gnttab_map_grant_refs(gt, NREFS, ops) != 0)
			s->errors++;
		for (int i = 0; i < NREFS; i++) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)ops[i].host_addr;

			if (ops[i].status != GNTST_okay || p[0] != (uint8_t)i)
				s->errors++;
			u[i] = (struct gnttab_unmap_grant_ref){.handle = ops[i].handle};
		}
		if (hv_gnttab_unmap_grant_refs(gt, NREFS, u) != 0)
			s->errors++;
		for (int i = 0; i < NREFS; i++)
			if (u[i].status != GNTST_okay)
				s->errors++;
	}
	hv_gnttab_close(gt);
	return NULL;
}

/* Refs of one domain to copy from and to, @n of each, for a copier thread. */
struct copy_job {
	struct hv *hv;
	domid_t dom;
	const grant_ref_t *src, *dst;
	int n;
};

/* Worker 2 (netback RX style): copy from @src refs into the @dst refs' pages. */
static void *copier(void *arg)
{
	struct copy_job *c = arg;
	xengnttab_grant_copy_segment_t segs[NREFS];
	struct hv_gnttab *gt = hv_gnttab_open(c->hv, 0);
	int errors = 0;

	if (!gt || c->n > NREFS)
		return (void *)1;
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < c->n; i++)
			segs[i] = (xengnttab_grant_copy_segment_t){
			    .source.foreign = {c->src[i], 0, c->dom},
			    .dest.foreign = {c->dst[i], (uint16_t)(round % 64), c->dom},
			    .len = 64,
			    .flags = GNTCOPY_source_gref | GNTCOPY_dest_gref};
		if (hv_gnttab_grant_copy(gt, (uint32_t)c->n, segs) != 0)
			errors++;
		for (int i = 0; i < c->n; i++)
			if (segs[i].status != GNTST_okay)
				errors++;
	}
	hv_gnttab_close(gt);
	return errors ? (void *)1 : NULL;
}

static void test_map_vs_copy(void **state)
{
	struct grant_stress s = {0};
	struct copy_job job;
	struct hv_stats st;
	struct guest g;
	pthread_t t1, t2;
	void *r1, *r2;

	s.hv = hv_create(NULL);
	assert_non_null(s.hv);
	assert_int_equal(guest_create(s.hv, 2 * NREFS, &g), 0);
	s.g = &g;
	s.dom = g.domid;
	for (int i = 0; i < NREFS; i++) {
		g.mem[(size_t)i * 4096] = (uint8_t)i;
		s.refs[i] = guest_grant(&g, 0, (uint32_t)i, true);
		s.rx_refs[i] = guest_grant(&g, 0, (uint32_t)(NREFS + i), false);
	}
	job = (struct copy_job){s.hv, s.dom, s.refs, s.rx_refs, NREFS};
	assert_int_equal(pthread_create(&t1, NULL, mapper, &s), 0);
	assert_int_equal(pthread_create(&t2, NULL, copier, &job), 0);
	assert_int_equal(pthread_join(t1, &r1), 0);
	assert_int_equal(pthread_join(t2, &r2), 0);
	assert_null(r1);
	assert_null(r2);
	assert_int_equal(s.errors, 0);

	/* Nothing left pinned: every grant can be revoked. */
	hv_stats(s.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.map_ops, (uint64_t)ROUNDS * NREFS);
	assert_int_equal(st.copy_ops, (uint64_t)ROUNDS * NREFS);
	for (int i = 0; i < NREFS; i++) {
		/* The last round copied page i's first byte to offset (ROUNDS - 1) % 64. */
		assert_int_equal(g.mem[(size_t)(NREFS + i) * 4096 + (ROUNDS - 1) % 64], (uint8_t)i);
		assert_int_equal(hv_gntshr_end_access(&g.gs, s.refs[i]), 0);
		assert_int_equal(hv_gntshr_end_access(&g.gs, s.rx_refs[i]), 0);
	}
	guest_unmap(&g);
	hv_destroy(s.hv);
}

/*
 * Two copiers on one domain, each segment's source in one block of
 * HV_PIN_BLOCK refs and its destination in the other, one thread one way
 * and the other the other way: a batch that held one block's pin lock while
 * it took the other's would deadlock them (the test would time out).  The
 * pages each thread writes are its own.
 */
#define XB_REFS 8

static void test_copies_across_blocks(void **state)
{
	/* Frames: sources in block A, then B; destinations in B, then A. */
	grant_ref_t a_src[XB_REFS], a_dst[XB_REFS], b_src[XB_REFS], b_dst[XB_REFS], r;
	struct copy_job c1, c2;
	struct hv_stats st;
	struct guest g;
	pthread_t t1, t2;
	void *r1, *r2;
	struct hv *hv = hv_create(NULL);

	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 4 * XB_REFS, &g), 0);
	for (int i = 0; i < XB_REFS; i++) {
		g.mem[(size_t)i * 4096] = (uint8_t)(0x10 + i);
		g.mem[(size_t)(2 * XB_REFS + i) * 4096] = (uint8_t)(0x80 + i);
		a_src[i] = guest_grant(&g, 0, (uint32_t)i, true);
		a_dst[i] = guest_grant(&g, 0, (uint32_t)(XB_REFS + i), false);
		assert_true(a_src[i] < HV_PIN_BLOCK && a_dst[i] < HV_PIN_BLOCK);
	}
	/* Fill block A so that the next refs fall in block B. */
	do
		r = guest_grant(&g, 0, 0, true);
	while (r + 1 < HV_PIN_BLOCK);
	for (int i = 0; i < XB_REFS; i++) {
		b_src[i] = guest_grant(&g, 0, (uint32_t)(2 * XB_REFS + i), true);
		b_dst[i] = guest_grant(&g, 0, (uint32_t)(3 * XB_REFS + i), false);
		assert_true(b_src[i] >= HV_PIN_BLOCK && b_src[i] < 2 * HV_PIN_BLOCK);
		assert_true(b_dst[i] >= HV_PIN_BLOCK && b_dst[i] < 2 * HV_PIN_BLOCK);
	}
	c1 = (struct copy_job){hv, g.domid, a_src, b_dst, XB_REFS};
	c2 = (struct copy_job){hv, g.domid, b_src, a_dst, XB_REFS};
	assert_int_equal(pthread_create(&t1, NULL, copier, &c1), 0);
	assert_int_equal(pthread_create(&t2, NULL, copier, &c2), 0);
	assert_int_equal(pthread_join(t1, &r1), 0);
	assert_int_equal(pthread_join(t2, &r2), 0);
	assert_null(r1);
	assert_null(r2);

	hv_stats(hv, &st);
	assert_int_equal(st.copy_ops, (uint64_t)2 * ROUNDS * XB_REFS);
	for (int i = 0; i < XB_REFS; i++) {
		/* The last round wrote each source's first byte at (ROUNDS - 1) % 64. */
		assert_int_equal(g.mem[(size_t)(3 * XB_REFS + i) * 4096 + (ROUNDS - 1) % 64],
				 0x10 + i);
		assert_int_equal(g.mem[(size_t)(XB_REFS + i) * 4096 + (ROUNDS - 1) % 64], 0x80 + i);
		/* Nothing left pinned. */
		assert_int_equal(hv_gntshr_end_access(&g.gs, a_src[i]), 0);
		assert_int_equal(hv_gntshr_end_access(&g.gs, a_dst[i]), 0);
		assert_int_equal(hv_gntshr_end_access(&g.gs, b_src[i]), 0);
		assert_int_equal(hv_gntshr_end_access(&g.gs, b_dst[i]), 0);
	}
	guest_unmap(&g);
	hv_destroy(hv);
}

/*
 * A guest that makes a grant read-only and writable again, over and over,
 * while hv copies from it: grant_table.h lets it set GTF_readonly with a
 * compare-and-swap while GTF_writing is clear, and clear it at any time,
 * whether or not the entry is in use.  hv's unpin clears GTF_reading in the
 * same word; it must not undo the guest's change (a load and a store did,
 * 8000-15500 times in 100000 rounds here, where the change fell between
 * them).  Bounded by DOWNGRADES rounds and DOWNGRADE_NS.
 */
#define DOWNGRADES   100000
#define DOWNGRADE_NS 1000000000ll

struct downgrade {
	struct hv *hv;
	struct guest *g;
	grant_ref_t ref;
	atomic_bool done;
	atomic_ulong copies;
	atomic_int errors;
	unsigned long rounds, lost;
};

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

/*
 * Wait until the copier has finished two more copies (any unpin under way
 * is done); false if it has stopped instead.
 */
static bool downgrade_wait(struct downgrade *r)
{
	unsigned long from = atomic_load(&r->copies);

	for (unsigned int spins = 0; atomic_load(&r->copies) < from + 2; spins++) {
		if (atomic_load(&r->done))
			return false;
		if (spins % 64 == 63)
			sched_yield();
	}
	return true;
}

static void *downgrader(void *arg)
{
	struct downgrade *r = arg;
	uint16_t *flags = &r->g->gt[r->ref].flags;
	long long end = now_ns() + DOWNGRADE_NS;

	for (r->rounds = 0; r->rounds < DOWNGRADES && now_ns() < end; r->rounds++) {
		uint16_t f = __atomic_load_n(flags, __ATOMIC_ACQUIRE);

		do {
			if (f & GTF_writing) {
				atomic_fetch_add(&r->errors, 1); /* the copier only reads */
				goto out;
			}
		} while (!__atomic_compare_exchange_n(flags, &f, f | GTF_readonly, false,
						      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
		if (!downgrade_wait(r))
			goto out;
		if (!(__atomic_load_n(flags, __ATOMIC_ACQUIRE) & GTF_readonly))
			r->lost++;
		__atomic_fetch_and(flags, (uint16_t)~GTF_readonly, __ATOMIC_ACQ_REL);
		if (!downgrade_wait(r))
			goto out;
		if (__atomic_load_n(flags, __ATOMIC_ACQUIRE) & GTF_readonly)
			r->lost++;
	}
out:
	atomic_store(&r->done, true);
	return NULL;
}

static void *downgrade_copier(void *arg)
{
	struct downgrade *r = arg;
	struct hv_gnttab *gt = hv_gnttab_open(r->hv, 0);
	xengnttab_grant_copy_segment_t seg;
	uint8_t buf[64];

	if (!gt) {
		atomic_store(&r->done, true); /* the downgrader must not wait for copies */
		return (void *)1;
	}
	while (!atomic_load(&r->done)) {
		seg = (xengnttab_grant_copy_segment_t){.source.foreign = {r->ref, 0, r->g->domid},
						       .dest.virt = buf,
						       .len = sizeof(buf),
						       .flags = GNTCOPY_source_gref};
		if (hv_gnttab_grant_copy(gt, 1, &seg) != 0 || seg.status != GNTST_okay ||
		    buf[0] != 0x5a)
			atomic_fetch_add(&r->errors, 1);
		atomic_fetch_add(&r->copies, 1);
	}
	hv_gnttab_close(gt);
	return NULL;
}

static void test_guest_changes_readonly_during_copies(void **state)
{
	struct downgrade r = {0};
	struct guest g;
	pthread_t t1, t2;
	void *r2;

	r.hv = hv_create(NULL);
	assert_non_null(r.hv);
	assert_int_equal(guest_create(r.hv, 1, &g), 0);
	g.mem[0] = 0x5a;
	r.g = &g;
	r.ref = guest_grant(&g, 0, 0, false);
	assert_int_equal(pthread_create(&t2, NULL, downgrade_copier, &r), 0);
	assert_int_equal(pthread_create(&t1, NULL, downgrader, &r), 0);
	assert_int_equal(pthread_join(t1, NULL), 0);
	assert_int_equal(pthread_join(t2, &r2), 0);
	assert_null(r2);
	assert_int_equal(atomic_load(&r.errors), 0);
	assert_int_equal(r.lost, 0);
	assert_true(r.rounds > 0);
	/* Nothing left pinned. */
	assert_int_equal(g.gt[r.ref].flags, GTF_permit_access);
	assert_int_equal(hv_gntshr_end_access(&g.gs, r.ref), 0);
	guest_unmap(&g);
	hv_destroy(r.hv);
}

struct evt_stress {
	struct hv *hv;
	domid_t dom;
	evtchn_port_t gp, bp;
	atomic_bool done;
	uint64_t events;
	int errors;
};

static void *notifier(void *arg)
{
	struct evt_stress *s = arg;

	for (int i = 0; i < NOTIFIES; i++)
		if (hv_evtchn_notify(s->hv, s->dom, s->gp) != 0)
			s->errors++;
	atomic_store(&s->done, true);
	/* One last notify after "done": the consumer must not miss it. */
	if (hv_evtchn_notify(s->hv, s->dom, s->gp) != 0)
		s->errors++;
	return NULL;
}

/* Consumer: poll, consume, mask during the "work", unmask (late EOI). */
static void *consumer(void *arg)
{
	struct evt_stress *s = arg;
	struct pollfd pfd = {.fd = hv_evtchn_fd(s->hv, 0, s->bp), .events = POLLIN};
	bool finishing = false;

	for (;;) {
		int n = poll(&pfd, 1, POLL_MS);
		int r;

		if (n < 0) {
			s->errors++;
			return NULL;
		}
		if (n == 0 && finishing)
			return NULL; /* quiet after the last notify: all seen */
		if (hv_evtchn_mask(s->hv, 0, s->bp) != 0)
			s->errors++;
		r = hv_evtchn_pending(s->hv, 0, s->bp);
		if (r < 0)
			s->errors++;
		s->events += (uint64_t)r;
		if (hv_evtchn_unmask(s->hv, 0, s->bp) != 0)
			s->errors++;
		if (atomic_load(&s->done))
			finishing = true;
	}
}

static void test_notify_vs_consume(void **state)
{
	struct evt_stress s = {0};
	struct hv_evtchn_stats st;
	struct guest g;
	pthread_t t1, t2;

	s.hv = hv_create(NULL);
	assert_non_null(s.hv);
	assert_int_equal(guest_create(s.hv, 1, &g), 0);
	s.dom = g.domid;
	assert_int_equal(hv_evtchn_alloc_unbound(s.hv, s.dom, 0, &s.gp), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(s.hv, 0, s.dom, s.gp, &s.bp), 0);
	assert_int_equal(pthread_create(&t2, NULL, consumer, &s), 0);
	assert_int_equal(pthread_create(&t1, NULL, notifier, &s), 0);
	assert_int_equal(pthread_join(t1, NULL), 0);
	assert_int_equal(pthread_join(t2, NULL), 0);
	assert_int_equal(s.errors, 0);
	assert_true(s.events >= 1);

	/* Edge delivery: far fewer eventfd writes than notifies, none lost at the end. */
	assert_int_equal(hv_evtchn_port_stats(s.hv, s.dom, s.gp, &st), 0);
	assert_int_equal(st.sent, NOTIFIES + 1);
	assert_int_equal(hv_evtchn_pending(s.hv, 0, s.bp), 0);
	assert_int_equal(hv_evtchn_port_stats(s.hv, 0, s.bp, &st), 0);
	assert_true(st.delivered <= NOTIFIES + 2);
	guest_unmap(&g);
	hv_destroy(s.hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map_vs_copy),
	    cmocka_unit_test(test_copies_across_blocks),
	    cmocka_unit_test(test_guest_changes_readonly_during_copies),
	    cmocka_unit_test(test_notify_vs_consume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
