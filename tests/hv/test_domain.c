// SPDX-License-Identifier: MIT
// test_domain.c - hv domain life cycle: memfd checks, ids, zombies, leak reports

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "hv/hv.h"
#include "hv/hv_internal.h"
#include "hv_test.h"

static void test_create_defaults(void **state)
{
	struct hv_config cfg;
	struct hv_stats st;
	struct hv *hv;

	hv_config_default(&cfg);
	assert_int_equal(cfg.max_domains, 64);
	assert_int_equal(cfg.gnttab_frames, 32);
	assert_int_equal(cfg.max_evtchns, 1024);

	hv = hv_create(NULL);
	assert_non_null(hv);
	hv_stats(hv, &st);
	assert_int_equal(st.domains, 1); /* dom0 */
	assert_int_equal(st.zombies, 0);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(hv_domain_nr_grants(hv, 0), 0);
	assert_int_equal(hv_domain_gnttab_fd(hv, 0), -ESRCH);
	hv_destroy(hv);
	hv_destroy(NULL);
}

static void test_bad_config(void **state)
{
	struct hv_config cfg;

	hv_config_default(&cfg);
	cfg.max_domains = 1;
	errno = 0;
	assert_null(hv_create(&cfg));
	assert_int_equal(errno, EINVAL);
	hv_config_default(&cfg);
	cfg.max_evtchns = 1;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.gnttab_frames = 0;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.max_maptrack = 0;
	assert_null(hv_create(&cfg));
}

static void expect_rejected(struct hv *hv, int fd, uint32_t npages)
{
	domid_t id = 0;

	assert_true(fd >= 0);
	assert_int_equal(hv_domain_create(hv, fd, npages, &id), -EINVAL);
	/* Not taken on failure: still ours to close. */
	assert_int_equal(close(fd), 0);
}

static void test_memfd_checks(void **state)
{
	struct hv *hv = hv_create(NULL);
	char path[] = "/tmp/hv-test-XXXXXX";
	int fd;

	assert_non_null(hv);
	expect_rejected(hv, make_memfd(4, 0, 0), 4);			  /* unsealed */
	expect_rejected(hv, make_memfd(4, 0, F_SEAL_SHRINK), 4);	  /* may grow */
	expect_rejected(hv, make_memfd(4, 0, F_SEAL_GROW), 4);		  /* may shrink */
	expect_rejected(hv, make_memfd(4, 0, GUEST_SEALS), 5);		  /* size mismatch */
	expect_rejected(hv, make_memfd(4, 4 * 4096 + 1, GUEST_SEALS), 4); /* not whole pages */
	expect_rejected(hv, make_memfd(4, 0, GUEST_SEALS), 0);		  /* no pages */
	expect_rejected(hv, make_memfd(1, 0, GUEST_SEALS), HV_MAX_DOMAIN_PAGES + 1);
	/* Over the bound with a memfd of just that size (sparse: costs no memory). */
	expect_rejected(hv, make_memfd(HV_MAX_DOMAIN_PAGES + 1, 0, GUEST_SEALS),
			HV_MAX_DOMAIN_PAGES + 1);

	/* A regular file is not a memfd. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, 4096), 0);
	expect_rejected(hv, fd, 1);
	assert_int_equal(hv_domain_create(hv, -1, 1, &(domid_t){0}), -EINVAL);

	/* hugetlbfs memory (a punched-out page could SIGBUS us): refused, where it can be made. */
	fd = memfd_create("huge", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (fd >= 0 && ftruncate(fd, 2 << 20) == 0 &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0)
		expect_rejected(hv, fd, (2 << 20) / 4096);
	else if (fd >= 0)
		close(fd);
	hv_destroy(hv);
}

static void test_create_ids_and_gnttab(void **state)
{
	struct hv *hv = hv_create(NULL);
	struct guest a, b;
	struct hv_stats st;
	struct stat sb;
	int gfd;

	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 16, &a), 0);
	assert_int_equal(guest_create(hv, 16, &b), 0);
	assert_int_equal(a.domid, 1);
	assert_int_equal(b.domid, 2);
	hv_stats(hv, &st);
	assert_int_equal(st.domains, 3);

	/* The grant table memfd: 32 frames of 512 entries, sealed against resizing. */
	assert_int_equal(hv_domain_nr_grants(hv, a.domid), 16384);
	gfd = hv_domain_gnttab_fd(hv, a.domid);
	assert_true(gfd >= 0);
	assert_int_equal(fstat(gfd, &sb), 0);
	assert_int_equal(sb.st_size, 32 * 4096);
	assert_int_equal(fcntl(gfd, F_GET_SEALS) & GUEST_SEALS, GUEST_SEALS);
	assert_int_not_equal(ftruncate(gfd, 4096), 0);

	assert_int_equal(hv_domain_destroy(hv, 0, NULL), -EPERM);
	assert_int_equal(hv_domain_destroy(hv, 9, NULL), -ESRCH);
	assert_int_equal(hv_domain_destroy(hv, a.domid, NULL), 0);
	assert_int_equal(hv_domain_destroy(hv, a.domid, NULL), -ESRCH);
	assert_int_equal(hv_domain_gnttab_fd(hv, a.domid), -ESRCH);
	hv_stats(hv, &st);
	assert_int_equal(st.domains, 2);
	assert_int_equal(st.zombies, 0); /* nothing mapped: freed at once */

	guest_unmap(&a);
	guest_unmap(&b);
	hv_destroy(hv);
}

static void test_domain_slots_exhausted(void **state)
{
	struct hv_config cfg;
	struct guest g1, g2, g3;
	struct hv *hv;
	domid_t id;
	int fd;

	hv_config_default(&cfg);
	cfg.max_domains = 3;
	hv = hv_create(&cfg);
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 1, &g1), 0);
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	fd = make_memfd(1, 0, GUEST_SEALS);
	assert_int_equal(hv_domain_create(hv, fd, 1, &id), -ENOSPC);
	close(fd);
	assert_int_equal(hv_domain_destroy(hv, g1.domid, NULL), 0);
	/* Ids go upwards: 3 maps to dom0's slot and is skipped, 4 takes slot 1. */
	assert_int_equal(guest_create(hv, 1, &g3), 0);
	assert_int_equal(g3.domid, 4);
	guest_unmap(&g1);
	guest_unmap(&g2);
	guest_unmap(&g3);
	hv_destroy(hv);
}

/* Destroy with a mapping held: zombie until the unmap, memory valid meanwhile. */
static void test_destroy_with_mappings(void **state)
{
	struct hv *hv = hv_create(NULL);
	struct gnttab_map_grant_ref op, op2;
	xengnttab_grant_copy_segment_t seg;
	struct hv_leak leak;
	struct hv_stats st;
	struct hv_gnttab *gt;
	struct guest g, g2;
	grant_ref_t r1, r2;
	uint8_t buf[8];
	uint8_t *p;

	assert_non_null(hv);
	gt = hv_gnttab_open(hv, 0);
	assert_non_null(gt);
	assert_int_equal(guest_create(hv, 4, &g), 0);
	memcpy(g.mem + 2 * 4096, "zombie!", 8);
	r1 = guest_grant(&g, 0, 2, false);
	r2 = guest_grant(&g, 0, 3, true);
	assert_int_equal(map1(gt, g.domid, r1, GNTMAP_host_map, &op), GNTST_okay);
	p = (uint8_t *)(uintptr_t)op.host_addr;

	assert_int_equal(hv_domain_destroy(hv, g.domid, &leak), 0);
	assert_int_equal(leak.maps_in_use, 1);
	assert_int_equal(leak.grants_active, 2);
	assert_int_equal(leak.evtchns_open, 0);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, 1);
	assert_int_equal(st.maps_in_use, 1);

	/* New operations on the dead domain's refs fail... */
	assert_int_equal(map1(gt, g.domid, r2, GNTMAP_host_map | GNTMAP_readonly, &op2),
			 GNTST_bad_domain);
	seg = (xengnttab_grant_copy_segment_t){.source.foreign = {.ref = r1, .domid = g.domid},
					       .dest.virt = buf,
					       .len = 8,
					       .flags = GNTCOPY_source_gref};
	assert_int_equal(hv_gnttab_grant_copy(gt, 1, &seg), 0);
	assert_int_equal(seg.status, GNTST_bad_domain);

	/* ...but the mapping still works, and the id is not reused meanwhile. */
	assert_memory_equal(p, "zombie!", 8);
	p[0] = 'Z';
	assert_int_equal(g.mem[2 * 4096], 'Z');
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	assert_int_not_equal(g2.domid, g.domid);

	assert_int_equal(unmap1(gt, op.handle), GNTST_okay);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, 0);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.domains, 2);

	hv_gnttab_close(gt);
	guest_unmap(&g);
	guest_unmap(&g2);
	hv_destroy(hv);
}

/*
 * Maps and unmaps in batches over more domains than a batch keeps
 * referenced: each destroyed domain stays until its own last mapping goes,
 * whichever batch made or released the others.
 */
static void test_destroy_with_batched_mappings(void **state)
{
	enum { NDOM = 5, PER = 2 };
	struct hv *hv = hv_create(NULL);
	struct gnttab_map_grant_ref map[NDOM * PER];
	struct gnttab_unmap_grant_ref unmap[NDOM * PER];
	struct hv_leak leak;
	struct hv_stats st;
	struct hv_gnttab *gt;
	struct guest g[NDOM];

	assert_non_null(hv);
	gt = hv_gnttab_open(hv, 0);
	assert_non_null(gt);
	for (int d = 0; d < NDOM; d++) {
		assert_int_equal(guest_create(hv, PER, &g[d]), 0);
		for (int k = 0; k < PER; k++) {
			g[d].mem[k * 4096] = (uint8_t)(16 * d + k);
			/* domains interleaved: op i is page i / NDOM of domain i % NDOM */
			map[k * NDOM + d] = (struct gnttab_map_grant_ref){
			    .flags = GNTMAP_host_map,
			    .ref = guest_grant(&g[d], 0, (uint32_t)k, false),
			    .dom = g[d].domid};
		}
	}
	assert_int_equal(hv_gnttab_map_grant_refs(gt, NDOM * PER, map), 0);
	for (int i = 0; i < NDOM * PER; i++)
		assert_int_equal(map[i].status, GNTST_okay);
	for (int d = 0; d < NDOM; d++) {
		assert_int_equal(hv_domain_destroy(hv, g[d].domid, &leak), 0);
		assert_int_equal(leak.maps_in_use, PER);
	}
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, NDOM);

	/* The first page of every domain: each keeps one mapping, and lives. */
	for (int d = 0; d < NDOM; d++)
		unmap[d] = (struct gnttab_unmap_grant_ref){.handle = map[d].handle};
	assert_int_equal(hv_gnttab_unmap_grant_refs(gt, NDOM, unmap), 0);
	for (int d = 0; d < NDOM; d++)
		assert_int_equal(unmap[d].status, GNTST_okay);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, NDOM);
	assert_int_equal(st.maps_in_use, NDOM);
	for (int d = 0; d < NDOM; d++)
		assert_int_equal(*(uint8_t *)(uintptr_t)map[NDOM + d].host_addr, 16 * d + 1);

	/* The last ones: every zombie goes. */
	for (int d = 0; d < NDOM; d++)
		unmap[d] = (struct gnttab_unmap_grant_ref){.handle = map[NDOM + d].handle};
	assert_int_equal(hv_gnttab_unmap_grant_refs(gt, NDOM, unmap), 0);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, 0);
	assert_int_equal(st.maps_in_use, 0);

	hv_gnttab_close(gt);
	for (int d = 0; d < NDOM; d++)
		guest_unmap(&g[d]);
	hv_destroy(hv);
}

static void test_destroy_with_ports(void **state)
{
	struct hv *hv = hv_create(NULL);
	evtchn_port_t p1, p2, q;
	struct hv_leak leak;
	struct hv_stats st;
	struct guest g;

	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 1, &g), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g.domid, 0, &p1), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g.domid, 0, &p2), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(hv, 0, g.domid, p2, &q), 0);
	hv_stats(hv, &st);
	assert_int_equal(st.evtchns_open, 3);

	assert_int_equal(hv_domain_destroy(hv, g.domid, &leak), 0);
	assert_int_equal(leak.evtchns_open, 2);
	assert_int_equal(leak.maps_in_use, 0);
	assert_int_equal(leak.grants_active, 0);
	hv_stats(hv, &st);
	assert_int_equal(st.evtchns_open, 1);		 /* dom0's end, back to unbound */
	assert_int_equal(hv_evtchn_notify(hv, 0, q), 0); /* dropped, as on Xen */
	assert_int_equal(hv_evtchn_close(hv, 0, q), 0);
	hv_stats(hv, &st);
	assert_int_equal(st.evtchns_open, 0);
	guest_unmap(&g);
	hv_destroy(hv);
}

/*
 * Each configuration bound is inclusive where hv.h says so and refused one
 * past it: the largest grant table, port count, dom0 port count and
 * maptrack are taken, domain ids stop below DOMID_FIRST_RESERVED.
 */
static void test_config_upper_bounds(void **state)
{
	struct hv_config cfg;
	struct hv *hv;

	(void)state;
	hv_config_default(&cfg);
	cfg.max_domains = DOMID_FIRST_RESERVED;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.gnttab_frames = 1024;
	assert_non_null(hv = hv_create(&cfg));
	hv_destroy(hv);
	cfg.gnttab_frames = 1025;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.max_evtchns = HV_CFG_MAX_EVTCHNS;
	assert_non_null(hv = hv_create(&cfg));
	hv_destroy(hv);
	cfg.max_evtchns = HV_CFG_MAX_EVTCHNS + 1;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.dom0_evtchns = HV_CFG_MAX_EVTCHNS;
	assert_non_null(hv = hv_create(&cfg));
	hv_destroy(hv);
	cfg.dom0_evtchns = HV_CFG_MAX_EVTCHNS + 1;
	assert_null(hv_create(&cfg));
	hv_config_default(&cfg);
	cfg.max_maptrack = 1u << 20;
	assert_non_null(hv = hv_create(&cfg));
	hv_destroy(hv);
	cfg.max_maptrack = (1u << 20) + 1;
	assert_null(hv_create(&cfg));
}

/* The largest domain hv.h allows (1 GiB, sparse here) is taken. */
static void test_largest_domain(void **state)
{
	struct hv *hv = hv_create(NULL);
	int fd = make_memfd(HV_MAX_DOMAIN_PAGES, 0, GUEST_SEALS);
	domid_t id = 0;

	(void)state;
	assert_non_null(hv);
	assert_true(fd >= 0);
	assert_int_equal(hv_domain_create(hv, fd, HV_MAX_DOMAIN_PAGES, &id), 0);
	assert_int_equal(hv_domain_destroy(hv, id, NULL), 0);
	hv_destroy(hv);
}

/*
 * Domain ids wrap below DOMID_FIRST_RESERVED: the id after 0x7fef is 1
 * (or the next free one), never 0x7ff0, which is DOMID_SELF.
 */
static void test_domid_wraps_below_reserved(void **state)
{
	struct hv *hv = hv_create(NULL);
	struct guest g1, g2;

	(void)state;
	assert_non_null(hv);
	hv->next_domid = DOMID_FIRST_RESERVED - 1;
	assert_int_equal(guest_create(hv, 1, &g1), 0);
	assert_int_equal(g1.domid, DOMID_FIRST_RESERVED - 1);
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	assert_true(g2.domid >= 1 && g2.domid < DOMID_FIRST_RESERVED);
	assert_int_equal(g2.domid, 1);
	guest_unmap(&g1);
	guest_unmap(&g2);
	hv_destroy(hv);
}

/*
 * Ids that share a slot are different domains: with 64 slots, id + 64 of
 * a live domain is no domain at all, for the grant path (hv_domain_get())
 * and every lookup of a live domain alike.
 */
static void test_slot_alias_is_no_domain(void **state)
{
	struct hv *hv = hv_create(NULL);
	struct gnttab_map_grant_ref op;
	struct hv_gnttab *gt;
	struct guest g;
	domid_t alias;
	grant_ref_t r;

	(void)state;
	assert_non_null(hv);
	assert_non_null(gt = hv_gnttab_open(hv, 0));
	assert_int_equal(guest_create(hv, 2, &g), 0);
	alias = (domid_t)(g.domid + 64);
	r = guest_grant(&g, 0, 1, false);
	assert_int_equal(map1(gt, alias, r, GNTMAP_host_map, &op), GNTST_bad_domain);
	assert_int_equal(hv_domain_nr_grants(hv, alias), -ESRCH);
	assert_int_equal(hv_domain_gnttab_fd(hv, alias), -ESRCH);
	assert_int_equal(hv_domain_destroy(hv, alias, NULL), -ESRCH);
	assert_int_equal(gflags(&g, r), GTF_permit_access);
	hv_gnttab_close(gt);
	guest_unmap(&g);
	hv_destroy(hv);
}

/*
 * Destroy reports every granted entry, ref 0 included: the reserved refs
 * are a convention of the guest's allocator, and a guest may grant them.
 */
static void test_destroy_counts_every_ref(void **state)
{
	struct hv *hv = hv_create(NULL);
	struct hv_leak leak;
	struct guest g;
	int last;

	(void)state;
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 2, &g), 0);
	last = hv_domain_nr_grants(hv, g.domid) - 1;
	assert_int_equal(hv_gntshr_grant_access(&g.gs, 0, 0, 1, false), 0);
	assert_int_equal(hv_gntshr_grant_access(&g.gs, (grant_ref_t)last, 0, 1, true), 0);
	g.gt[20].flags = GTF_accept_transfer; /* another type than permit_access */
	assert_int_equal(hv_domain_destroy(hv, g.domid, &leak), 0);
	assert_int_equal(leak.grants_active, 3);
	guest_unmap(&g);
	hv_destroy(hv);
}

/* Descriptors this process has open. */
static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * hv_destroy() with domains and channels still there closes every
 * descriptor hv holds: the memfds, the grant tables and the signals of
 * open ports, whether their channel is bound or not.
 */
static void test_destroy_closes_everything(void **state)
{
	int before = open_fds();
	struct hv *hv = hv_create(NULL);
	evtchn_port_t p, q, u;
	struct guest g;

	(void)state;
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 2, &g), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g.domid, 0, &p), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(hv, 0, g.domid, p, &q), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, 0, g.domid, &u), 0);
	assert_true(open_fds() > before);
	guest_unmap(&g);
	hv_destroy(hv);
	assert_int_equal(open_fds(), before);
}

/*
 * A free slot is found wherever the id counter stands: from just below
 * the wrap at DOMID_FIRST_RESERVED (0x7ff0, slot 48 of 64) the ids after
 * it start again at 1, so the one free slot, 63, is the 65th id looked
 * at, past one lap of 64.
 */
static void test_domid_alloc_across_wrap(void **state)
{
	struct hv *hv = hv_create(NULL);
	domid_t id;

	(void)state;
	assert_non_null(hv);
	for (int i = 1; i < 64; i++) {
		int fd = make_memfd(1, 0, GUEST_SEALS);

		assert_true(fd >= 0);
		assert_int_equal(hv_domain_create(hv, fd, 1, &id), 0);
		assert_int_equal(id, i);
	}
	assert_int_equal(hv_domain_destroy(hv, 63, NULL), 0);
	hv->next_domid = DOMID_FIRST_RESERVED - 2;
	{
		int fd = make_memfd(1, 0, GUEST_SEALS);

		assert_true(fd >= 0);
		assert_int_equal(hv_domain_create(hv, fd, 1, &id), 0);
		assert_int_equal(id, 63);
	}
	hv_destroy(hv);
}

/*
 * A zombie is freed, descriptors and all, when its last mapping goes; it
 * is no longer a live domain meanwhile (not counted as one, not
 * destroyed twice, no ports for it), and its grant table is sealed so
 * that the frontend cannot change its seals either.
 */
static void test_zombie_lifecycle(void **state)
{
	int before = open_fds();
	struct hv *hv = hv_create(NULL);
	struct gnttab_map_grant_ref op;
	struct hv_stats st;
	struct hv_gnttab *gt;
	evtchn_port_t p;
	struct guest g;
	int gfd;

	(void)state;
	assert_non_null(hv);
	assert_non_null(gt = hv_gnttab_open(hv, 0));
	assert_int_equal(guest_create(hv, 2, &g), 0);
	gfd = hv_domain_gnttab_fd(hv, g.domid);
	assert_int_equal(fcntl(gfd, F_GET_SEALS), F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	assert_int_equal(fcntl(gfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(map1(gt, g.domid, guest_grant(&g, 0, 1, false), GNTMAP_host_map, &op),
			 GNTST_okay);
	assert_int_equal(hv_domain_destroy(hv, g.domid, NULL), 0);
	hv_stats(hv, &st);
	assert_int_equal(st.domains, 1);
	assert_int_equal(st.zombies, 1);
	assert_int_equal(hv_domain_destroy(hv, g.domid, NULL), -ESRCH);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g.domid, 0, &p), -ESRCH);
	assert_int_equal(hv_domain_nr_grants(hv, g.domid), -ESRCH);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, 1);
	assert_int_equal(unmap1(gt, op.handle), GNTST_okay);
	hv_stats(hv, &st);
	assert_int_equal(st.zombies, 0);
	assert_int_equal(st.domains, 1);
	guest_unmap(&g);
	hv_gnttab_close(gt);
	assert_int_equal(open_fds(), before); /* the memfd and grant table closed */
	hv_destroy(hv);
}

/* A create that finds no free id leaves no descriptor of its own open. */
static void test_create_failure_closes(void **state)
{
	struct hv_config cfg;
	struct hv *hv;
	struct guest g;
	domid_t id;
	int before, fd;

	(void)state;
	hv_config_default(&cfg);
	cfg.max_domains = 2;
	assert_non_null(hv = hv_create(&cfg));
	assert_int_equal(guest_create(hv, 1, &g), 0);
	fd = make_memfd(1, 0, GUEST_SEALS);
	assert_true(fd >= 0);
	before = open_fds();
	assert_int_equal(hv_domain_create(hv, fd, 1, &id), -ENOSPC);
	assert_int_equal(open_fds(), before);
	close(fd);
	guest_unmap(&g);
	hv_destroy(hv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_defaults),
	    cmocka_unit_test(test_bad_config),
	    cmocka_unit_test(test_config_upper_bounds),
	    cmocka_unit_test(test_largest_domain),
	    cmocka_unit_test(test_domid_wraps_below_reserved),
	    cmocka_unit_test(test_slot_alias_is_no_domain),
	    cmocka_unit_test(test_destroy_counts_every_ref),
	    cmocka_unit_test(test_destroy_closes_everything),
	    cmocka_unit_test(test_domid_alloc_across_wrap),
	    cmocka_unit_test(test_zombie_lifecycle),
	    cmocka_unit_test(test_create_failure_closes),
	    cmocka_unit_test(test_memfd_checks),
	    cmocka_unit_test(test_create_ids_and_gnttab),
	    cmocka_unit_test(test_domain_slots_exhausted),
	    cmocka_unit_test(test_destroy_with_mappings),
	    cmocka_unit_test(test_destroy_with_batched_mappings),
	    cmocka_unit_test(test_destroy_with_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
