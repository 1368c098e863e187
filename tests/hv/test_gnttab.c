// SPDX-License-Identifier: MIT
// test_gnttab.c - grant map, unmap and copy: every status, in-use flags, races

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hv/hv.h"
#include "hv/hv_internal.h"
#include "hv_test.h"

#define NPAGES 8

struct fx {
	struct hv *hv;
	struct hv_gnttab *gt;
	struct guest g;
};

static int setup_cfg(void **state, uint32_t max_maptrack)
{
	struct hv_config cfg;
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	hv_config_default(&cfg);
	cfg.max_maptrack = max_maptrack;
	f->hv = hv_create(&cfg);
	if (!f->hv || guest_create(f->hv, NPAGES, &f->g) < 0)
		return -1;
	f->gt = hv_gnttab_open(f->hv, 0);
	if (!f->gt)
		return -1;
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_cfg(state, 16384);
}

static int setup_small_maptrack(void **state)
{
	return setup_cfg(state, 4);
}

/* A maptrack whose entries end exactly on a page, whatever an entry's size. */
#define PAGE_MAPTRACK HV_PAGE_SIZE

static int setup_page_maptrack(void **state)
{
	return setup_cfg(state, PAGE_MAPTRACK);
}

/* Room for a full pin count of each kind on one entry. */
static int setup_pins_maptrack(void **state)
{
	return setup_cfg(state, 2 * (UINT16_MAX + 1u));
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hv_gnttab_race_hook = NULL;
	hv_gnttab_close(f->gt);
	guest_unmap(&f->g);
	hv_destroy(f->hv);
	free(f);
	return 0;
}

static uint64_t maps_in_use(struct fx *f)
{
	struct hv_stats st;

	hv_stats(f->hv, &st);
	return st.maps_in_use;
}

static void test_map_rw(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 5, false);
	uint8_t *p;

	assert_true(r >= HV_GNTSHR_FIRST_REF);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	p = (uint8_t *)(uintptr_t)op.host_addr;
	assert_non_null(p);
	memcpy(p, "backend", 8);
	assert_memory_equal(f->g.mem + 5 * 4096, "backend", 8);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);
	assert_int_equal(maps_in_use(f), 1);

	/* End of access while mapped fails, as on Xen; after the unmap it works. */
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), -EBUSY);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), 0);
	assert_int_equal(gflags(&f->g, r), 0);
}

static void test_map_ro_faults_on_write(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 1, true);
	volatile uint8_t *p;
	int status;
	pid_t pid;

	memcpy(f->g.mem + 4096, "ro", 3);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_readonly | GTF_reading);
	p = (volatile uint8_t *)(uintptr_t)op.host_addr;
	assert_int_equal(p[0], 'r');

	/* A backend writing through a read-only mapping must fault. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Die of the fault; cmocka's handler would run the other tests here. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		p[0] = 'X';
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(f->g.mem[4096], 'r');
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_readonly);
}

/* Each map failure status, and that none of them leaves a pin behind. */
static void test_map_failures(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t ro = guest_grant(&f->g, 0, 1, true);
	grant_ref_t other = guest_grant(&f->g, 7, 1, false);
	grant_ref_t beyond = guest_grant(&f->g, 0, NPAGES, false);
	grant_ref_t unset, xfer;

	assert_int_equal(hv_gntshr_alloc_ref(&f->g.gs, &unset), 0);
	xfer = guest_grant(&f->g, 0, 1, false);
	f->g.gt[xfer].flags = GTF_accept_transfer;

	assert_int_equal(map1(f->gt, f->g.domid, ro, GNTMAP_host_map, &op),
			 GNTST_permission_denied);
	assert_int_equal(op.host_addr, 0);
	assert_int_equal(map1(f->gt, f->g.domid, other, GNTMAP_host_map, &op),
			 GNTST_permission_denied);
	assert_int_equal(map1(f->gt, f->g.domid, beyond, GNTMAP_host_map, &op), GNTST_bad_page);
	assert_int_equal(map1(f->gt, f->g.domid, unset, GNTMAP_host_map, &op), GNTST_general_error);
	assert_int_equal(map1(f->gt, f->g.domid, xfer, GNTMAP_host_map, &op), GNTST_general_error);
	assert_int_equal(map1(f->gt, f->g.domid, 16384, GNTMAP_host_map, &op), GNTST_bad_gntref);
	assert_int_equal(map1(f->gt, f->g.domid, UINT32_MAX, GNTMAP_host_map, &op),
			 GNTST_bad_gntref);
	assert_int_equal(map1(f->gt, 42, ro, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_bad_domain);
	assert_int_equal(map1(f->gt, 0, 8, GNTMAP_host_map, &op), GNTST_bad_gntref); /* dom0 */
	assert_int_equal(map1(f->gt, f->g.domid, ro, GNTMAP_readonly, &op), GNTST_bad_gntref);
	assert_int_equal(map1(f->gt, f->g.domid, ro,
			      GNTMAP_host_map | GNTMAP_readonly | GNTMAP_contains_pte, &op),
			 GNTST_general_error);
	assert_int_equal(
	    map1(f->gt, f->g.domid, ro, GNTMAP_host_map | GNTMAP_readonly | GNTMAP_device_map, &op),
	    GNTST_general_error);
	assert_int_equal(op.host_addr, 0);

	assert_int_equal(gflags(&f->g, ro), GTF_permit_access | GTF_readonly);
	assert_int_equal(gflags(&f->g, other), GTF_permit_access);
	assert_int_equal(gflags(&f->g, beyond), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 1, NULL), -EINVAL);
	assert_int_equal(hv_gnttab_map_grant_refs(NULL, 0, NULL), -EINVAL);
}

static void test_unmap_failures(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	struct gnttab_unmap_grant_ref u;
	grant_ref_t r = guest_grant(&f->g, 0, 2, false);

	assert_int_equal(unmap1(f->gt, 0), GNTST_bad_handle);
	assert_int_equal(unmap1(f->gt, UINT32_MAX), GNTST_bad_handle);
	assert_int_equal(unmap1(f->gt, 16384), GNTST_bad_handle); /* one past the maptrack */
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	u = (struct gnttab_unmap_grant_ref){.handle = op.handle, .host_addr = op.host_addr + 1};
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 1, &u), 0);
	assert_int_equal(u.status, GNTST_bad_virt_addr);
	u.host_addr = op.host_addr;
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 1, &u), 0);
	assert_int_equal(u.status, GNTST_okay);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_bad_handle); /* twice */
	/* ops to do but none given: refused, not read from NULL */
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 1, NULL), -EINVAL);
	assert_int_equal(hv_gnttab_unmap_grant_refs(NULL, 0, NULL), -EINVAL);
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 1, NULL), -EINVAL);
	assert_int_equal(hv_gnttab_grant_copy(NULL, 0, NULL), -EINVAL);
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 0, NULL), 0);
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 0, NULL), 0);
}

/* A writable and a read-only mapping of one entry: bits go in the right order. */
static void test_map_rw_and_ro_same_ref(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref ops[2] = {
	    {.flags = GNTMAP_host_map, .dom = f->g.domid},
	    {.flags = GNTMAP_host_map | GNTMAP_readonly, .dom = f->g.domid},
	};
	grant_ref_t r = guest_grant(&f->g, 0, 3, false);

	ops[0].ref = ops[1].ref = r;
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 2, ops), 0);
	assert_int_equal(ops[0].status, GNTST_okay);
	assert_int_equal(ops[1].status, GNTST_okay);
	assert_int_not_equal(ops[0].host_addr, ops[1].host_addr); /* rw and ro views */
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);
	assert_int_equal(unmap1(f->gt, ops[0].handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), -EBUSY);
	assert_int_equal(unmap1(f->gt, ops[1].handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);

	/*
	 * The other order, and two writers: each bit stays while a pin that
	 * needs it is left (a read-only unmap does not clear reading under a
	 * writer; the first of two writers does not clear writing).
	 */
	ops[0] = (struct gnttab_map_grant_ref){
	    .flags = GNTMAP_host_map | GNTMAP_readonly, .ref = r, .dom = f->g.domid};
	ops[1] =
	    (struct gnttab_map_grant_ref){.flags = GNTMAP_host_map, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 2, ops), 0);
	assert_int_equal(unmap1(f->gt, ops[0].handle), GNTST_okay); /* the reader goes first */
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);
	ops[0] =
	    (struct gnttab_map_grant_ref){.flags = GNTMAP_host_map, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 1, ops), 0);
	assert_int_equal(unmap1(f->gt, ops[0].handle), GNTST_okay); /* one of two writers */
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);
	assert_int_equal(unmap1(f->gt, ops[1].handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
}

/*
 * Map @r with @flags UINT16_MAX + 1 times in one batch: every map but the
 * last pins it, the last is refused (the pin count of its kind is full).
 */
static void map_to_saturation(struct fx *f, grant_ref_t r, uint32_t flags,
			      struct gnttab_map_grant_ref *ops)
{
	const uint32_t n = UINT16_MAX + 1u;

	for (uint32_t i = 0; i < n; i++)
		ops[i] = (struct gnttab_map_grant_ref){.flags = flags, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, n, ops), 0);
	for (uint32_t i = 0; i + 1 < n; i++)
		if (ops[i].status != GNTST_okay)
			fail_msg("pin %u of %u refused: %d", i + 1, n - 1, ops[i].status);
	assert_int_equal(ops[n - 1].status, GNTST_general_error);
	assert_int_equal(ops[n - 1].host_addr, 0);
}

/* Copy one byte into (@into) or out of @r; its status. */
static int16_t copy1(struct fx *f, grant_ref_t r, bool into)
{
	uint8_t b = 'x';
	xengnttab_grant_copy_segment_t seg = {.len = 1};

	if (into) {
		seg.source.virt = &b;
		seg.dest.foreign = (typeof(seg.dest.foreign)){r, 0, f->g.domid};
		seg.flags = GNTCOPY_dest_gref;
	} else {
		seg.source.foreign = (typeof(seg.source.foreign)){r, 0, f->g.domid};
		seg.dest.virt = &b;
		seg.flags = GNTCOPY_source_gref;
	}
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 1, &seg), 0);
	return seg.status;
}

/*
 * An entry's pins of each kind stop at UINT16_MAX: the next map or copy of
 * that kind is refused with nothing changed (a wrapped count would clear
 * the in-use bits under 65535 live mappings), the other kind is counted
 * apart, and unpinning works as before.
 */
static void test_pin_count_saturates(void **state)
{
	struct fx *f = *state;
	const uint32_t n = UINT16_MAX + 1u;
	struct gnttab_map_grant_ref *rw = calloc(n, sizeof(*rw)), *ro = calloc(n, sizeof(*ro));
	struct gnttab_unmap_grant_ref *u = calloc(n - 1, sizeof(*u));
	grant_ref_t r = guest_grant(&f->g, 0, 4, false);
	struct gnttab_map_grant_ref op;

	assert_non_null(rw);
	assert_non_null(ro);
	assert_non_null(u);
	map_to_saturation(f, r, GNTMAP_host_map, rw);
	assert_int_equal(maps_in_use(f), n - 1);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);
	assert_int_equal(copy1(f, r, true), GNTST_general_error);
	assert_int_equal(copy1(f, r, false), GNTST_okay); /* reading is another count */
	map_to_saturation(f, r, GNTMAP_host_map | GNTMAP_readonly, ro);
	assert_int_equal(copy1(f, r, false), GNTST_general_error);
	assert_int_equal(maps_in_use(f), 2 * (n - 1));
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading | GTF_writing);

	/* One writer goes: the next writer pins, and the count is full again. */
	assert_int_equal(unmap1(f->gt, rw[0].handle), GNTST_okay);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	rw[0] = op;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_general_error);

	/* All writers go: writing clears, reading stays under the readers. */
	for (uint32_t i = 0; i + 1 < n; i++)
		u[i] = (struct gnttab_unmap_grant_ref){.handle = rw[i].handle};
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, n - 1, u), 0);
	for (uint32_t i = 0; i + 1 < n; i++)
		assert_int_equal(u[i].status, GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading);
	for (uint32_t i = 0; i + 1 < n; i++)
		u[i] = (struct gnttab_unmap_grant_ref){.handle = ro[i].handle};
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, n - 1, u), 0);
	for (uint32_t i = 0; i + 1 < n; i++)
		assert_int_equal(u[i].status, GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), 0);
	free(u);
	free(ro);
	free(rw);
}

static void test_maptrack_exhaustion(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref ops[5];
	struct gnttab_unmap_grant_ref u[4];
	grant_ref_t r = guest_grant(&f->g, 0, 0, true);

	for (int i = 0; i < 5; i++)
		ops[i] = (struct gnttab_map_grant_ref){
		    .flags = GNTMAP_host_map | GNTMAP_readonly, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 5, ops), 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ops[i].status, GNTST_okay);
		u[i] = (struct gnttab_unmap_grant_ref){.handle = ops[i].handle};
	}
	assert_int_equal(ops[4].status, GNTST_no_device_space);
	assert_int_equal(maps_in_use(f), 4);
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 4, u), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(u[i].status, GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_readonly);
	/* Handles are reusable. */
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &ops[0]),
			 GNTST_okay);
}

/*
 * Every handle of a maptrack that ends on a page in use: the handle one
 * past the end, and any beyond, is a bad handle, and nothing is read
 * there (the page after the maptrack may not be touched: a check one off
 * faults).  The last handle unmaps, and the maptrack fills again.
 */
static void test_maptrack_full_to_the_page(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref ops[256];
	grant_ref_t r = guest_grant(&f->g, 0, 0, true);
	uint32_t n = 0;

	while (n < PAGE_MAPTRACK) {
		for (int i = 0; i < 256; i++)
			ops[i] = (struct gnttab_map_grant_ref){.flags = GNTMAP_host_map |
									GNTMAP_readonly,
							       .ref = r,
							       .dom = f->g.domid};
		assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 256, ops), 0);
		for (int i = 0; i < 256; i++) {
			assert_int_equal(ops[i].status, GNTST_okay);
			assert_int_equal(ops[i].handle, n++);
		}
	}
	assert_int_equal(maps_in_use(f), PAGE_MAPTRACK);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &ops[0]),
			 GNTST_no_device_space);
	assert_int_equal(unmap1(f->gt, PAGE_MAPTRACK), GNTST_bad_handle);
	assert_int_equal(unmap1(f->gt, PAGE_MAPTRACK + 1), GNTST_bad_handle);
	assert_int_equal(maps_in_use(f), PAGE_MAPTRACK);
	assert_int_equal(unmap1(f->gt, PAGE_MAPTRACK - 1), GNTST_okay);
	assert_int_equal(unmap1(f->gt, PAGE_MAPTRACK - 1), GNTST_bad_handle);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &ops[0]),
			 GNTST_okay);
	assert_int_equal(ops[0].handle, PAGE_MAPTRACK - 1);
	assert_int_equal(maps_in_use(f), PAGE_MAPTRACK);
}

/* Copies to, from and between grants, with per-segment status in a mixed batch. */
static void test_copy_mixed_batch(void **state)
{
	struct fx *f = *state;
	struct guest g2;
	uint8_t in[16] = "hello, guest!", out[16] = {0};
	grant_ref_t src = guest_grant(&f->g, 0, 1, true);
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	grant_ref_t ro_dst = guest_grant(&f->g, 0, 3, true);
	grant_ref_t g2dst;
	xengnttab_grant_copy_segment_t segs[7];
	struct hv_stats st;

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	g2dst = guest_grant(&g2, 0, 1, false);
	memcpy(f->g.mem + 4096 + 100, "from the guest", 15);

	memset(segs, 0, sizeof(segs));
	/* 0: virt -> grant (RX path) */
	segs[0].source.virt = in;
	segs[0].dest.foreign = (typeof(segs[0].dest.foreign)){dst, 10, f->g.domid};
	segs[0].len = 14;
	segs[0].flags = GNTCOPY_dest_gref;
	/* 1: grant -> virt (TX path), read-only grant is fine as a source */
	segs[1].source.foreign = (typeof(segs[1].source.foreign)){src, 100, f->g.domid};
	segs[1].dest.virt = out;
	segs[1].len = 15;
	segs[1].flags = GNTCOPY_source_gref;
	/* 2: grant of one domain -> grant of another (guest to guest) */
	segs[2].source.foreign = (typeof(segs[2].source.foreign)){src, 100, f->g.domid};
	segs[2].dest.foreign = (typeof(segs[2].dest.foreign)){g2dst, 4090, g2.domid};
	segs[2].len = 6;
	segs[2].flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
	/* 3: crosses the page on the granted side */
	segs[3] = segs[0];
	segs[3].dest.foreign.offset = 4095;
	segs[3].len = 2;
	/* 4: into a read-only grant */
	segs[4] = segs[0];
	segs[4].dest.foreign.ref = ro_dst;
	/* 5: bad ref on the source side */
	segs[5] = segs[1];
	segs[5].source.foreign.ref = 99999;
	/* (the page bound of a granted source is tested to the byte below) */
	/* 6: no granted side at all */
	segs[6].source.virt = in;
	segs[6].dest.virt = out;
	segs[6].len = 1;

	assert_int_equal(hv_gnttab_grant_copy(f->gt, 7, segs), 0);
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_okay);
	assert_int_equal(segs[2].status, GNTST_okay);
	assert_int_equal(segs[3].status, GNTST_bad_copy_arg);
	assert_int_equal(segs[4].status, GNTST_permission_denied);
	assert_int_equal(segs[5].status, GNTST_bad_gntref);
	assert_int_equal(segs[6].status, GNTST_bad_copy_arg);

	assert_memory_equal(f->g.mem + 2 * 4096 + 10, "hello, guest!", 14);
	assert_memory_equal(out, "from the guest", 15);
	assert_memory_equal(g2.mem + 4096 + 4090, "from t", 6);

	/* The in-use bits of a copy last only as long as the copy. */
	assert_int_equal(gflags(&f->g, src), GTF_permit_access | GTF_readonly);
	assert_int_equal(gflags(&f->g, dst), GTF_permit_access);
	assert_int_equal(gflags(&g2, g2dst), GTF_permit_access);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, dst), 0);

	hv_stats(f->hv, &st);
	assert_int_equal(st.copy_ops, 7);
	assert_int_equal(st.batches, 1);

	/* A granted source to the byte: its last byte may be read, not one past it. */
	memset(segs, 0, sizeof(segs));
	segs[0].source.foreign = (typeof(segs[0].source.foreign)){src, 4095, f->g.domid};
	segs[0].dest.virt = out;
	segs[0].len = 1;
	segs[0].flags = GNTCOPY_source_gref;
	segs[1] = segs[0];
	segs[1].len = 2;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 2, segs), 0);
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_bad_copy_arg);
	guest_unmap(&g2);
}

static int pin_calls;

/* Counts the pins that reach the guest's entry (one per attempt). */
static void hook_count(grant_entry_v1_t *e)
{
	(void)e;
	pin_calls++;
}

/* Entry @ref of @g holds no pin of either kind: what hv keeps, the guest cannot see. */
static void assert_no_pins(struct fx *f, struct guest *g, grant_ref_t ref)
{
	struct hv_domain *d = hv_domain_get(f->hv, g->domid);

	assert_non_null(d);
	assert_int_equal(d->active[ref].pins, 0);
	hv_domain_put(f->hv, d);
}

/*
 * Consecutive segments naming the same entry in the same direction share
 * one pin, as Xen's grant copy keeps a buffer across such ops (netback's
 * header and the rest of a first slot): every byte still lands, a failed
 * segment in between does not end the sharing, and the entry holds no pin
 * afterwards, neither one too many nor one dropped twice.
 */
static void test_copy_same_ref_shares_pin(void **state)
{
	struct fx *f = *state;
	grant_ref_t src = guest_grant(&f->g, 0, 1, true);
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	uint8_t out[8] = {0};
	xengnttab_grant_copy_segment_t segs[8];

	memcpy(f->g.mem + 4096, "abcdefgh", 8);
	memset(segs, 0, sizeof(segs));
	/* 0, 1: two pieces into one posted page (one pin) */
	segs[0].source.virt = "0123";
	segs[0].dest.foreign = (typeof(segs[0].dest.foreign)){dst, 0, f->g.domid};
	segs[0].len = 4;
	segs[0].flags = GNTCOPY_dest_gref;
	segs[1] = segs[0];
	segs[1].source.virt = "4567";
	segs[1].dest.foreign.offset = 4;
	/* 2, 3: two pieces out of one granted page (one pin) */
	segs[2].source.foreign = (typeof(segs[2].source.foreign)){src, 0, f->g.domid};
	segs[2].dest.virt = out;
	segs[2].len = 4;
	segs[2].flags = GNTCOPY_source_gref;
	segs[3] = segs[2];
	segs[3].source.foreign.offset = 4;
	segs[3].dest.virt = out + 4;
	/* 4: the same page asked for as a source is a pin of its own kind */
	segs[4].source.foreign = (typeof(segs[4].source.foreign)){dst, 0, f->g.domid};
	segs[4].dest.virt = out;
	segs[4].len = 1;
	segs[4].flags = GNTCOPY_source_gref;
	/*
	 * 5: into the page again after a source-only segment (a pin); 6: bad
	 * ref; 7: after a failed segment, a pin of its own (Xen lets its kept
	 * buffers go after a failed op)
	 */
	segs[5] = segs[0];
	segs[5].source.virt = "89";
	segs[5].dest.foreign.offset = 8;
	segs[5].len = 2;
	segs[6] = segs[5];
	segs[6].dest.foreign.ref = 99999;
	segs[7] = segs[5];
	segs[7].source.virt = "AB";
	segs[7].dest.foreign.offset = 10;

	pin_calls = 0;
	hv_gnttab_race_hook = hook_count;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 8, segs), 0);
	hv_gnttab_race_hook = NULL;
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(segs[i].status, i == 6 ? GNTST_bad_gntref : GNTST_okay);
	/* 0, 2, 4, 5, 7: five pins for seven copies */
	assert_int_equal(pin_calls, 5);
	assert_memory_equal(f->g.mem + 2 * 4096, "0123456789AB", 12);
	assert_memory_equal(out, "0bcdefgh", 8);

	assert_no_pins(f, &f->g, dst);
	assert_no_pins(f, &f->g, src);
	assert_int_equal(gflags(&f->g, dst), GTF_permit_access);
	assert_int_equal(gflags(&f->g, src), GTF_permit_access | GTF_readonly);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, dst), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, src), 0);
}

/*
 * An entry pinned for one domain that the guest rewrites to name another:
 * the other is refused while the pin lasts (Xen: "Bad domain" on an
 * active entry), never given the frame pinned for the first.
 */
static void test_pinned_entry_other_domain(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op, op2;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	struct hv_gnttab *gt2;
	struct guest g2;

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	gt2 = hv_gnttab_open(f->hv, g2.domid);
	assert_non_null(gt2);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	__atomic_store_n(&f->g.gt[r].domid, g2.domid, __ATOMIC_RELEASE);
	assert_int_equal(map1(gt2, f->g.domid, r, GNTMAP_host_map, &op2), GNTST_general_error);
	/* a read-only map by the other domain is refused the same way */
	assert_int_equal(map1(gt2, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op2),
			 GNTST_general_error);
	assert_int_equal(maps_in_use(f), 1);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	/* Unpinned, the entry is the other domain's to map. */
	assert_int_equal(map1(gt2, f->g.domid, r, GNTMAP_host_map, &op2), GNTST_okay);
	assert_int_equal(unmap1(gt2, op2.handle), GNTST_okay);
	hv_gnttab_close(gt2);
	guest_unmap(&g2);
}

/*
 * A backend in a driver domain (not dom0): the entry is pinned for it, so
 * it may map it again, while dom0, which the guest names once the entry is
 * in use, is refused the frame pinned for the driver domain.
 */
static void test_driver_domain_backend(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref ops[2], op0;
	struct hv_gnttab *gt2;
	struct guest g2;
	grant_ref_t r;

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	gt2 = hv_gnttab_open(f->hv, g2.domid);
	assert_non_null(gt2);
	r = guest_grant(&f->g, g2.domid, 3, false);
	for (int i = 0; i < 2; i++)
		ops[i] = (struct gnttab_map_grant_ref){
		    .flags = GNTMAP_host_map, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(gt2, 2, ops), 0);
	assert_int_equal(ops[0].status, GNTST_okay);
	assert_int_equal(ops[1].status, GNTST_okay);
	assert_int_equal(ops[0].host_addr, ops[1].host_addr);
	__atomic_store_n(&f->g.gt[r].domid, 0, __ATOMIC_RELEASE);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op0), GNTST_general_error);
	assert_int_equal(op0.host_addr, 0);
	assert_int_equal(maps_in_use(f), 2);
	assert_int_equal(unmap1(gt2, ops[0].handle), GNTST_okay);
	assert_int_equal(unmap1(gt2, ops[1].handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	hv_gnttab_close(gt2);
	guest_unmap(&g2);
}

/*
 * A batch over more domains than one batch keeps referenced, with copies
 * that read what an earlier copy of the same batch wrote: every byte lands
 * as if the segments ran one by one, and no pin outlives the batch.
 */
static void test_copy_long_batch(void **state)
{
	enum { NDOM = 6, NSEG = 100 };
	struct fx *f = *state;
	struct guest g[NDOM];
	grant_ref_t ref[NDOM];
	xengnttab_grant_copy_segment_t segs[NSEG];
	uint8_t in[NSEG + 8], out[NSEG][8];

	g[0] = f->g;
	for (int d = 1; d < NDOM; d++)
		assert_int_equal(guest_create(f->hv, 2, &g[d]), 0);
	for (int d = 0; d < NDOM; d++)
		ref[d] = guest_grant(&g[d], 0, 1, false);
	for (int i = 0; i < (int)sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 1);
	memset(segs, 0, sizeof(segs));
	memset(out, 0, sizeof(out));
	for (int k = 0; k < NSEG; k++) {
		int d = k % NDOM;

		if (k % 2 == 0) { /* into a grant, each domain in turn */
			segs[k].source.virt = in + k;
			segs[k].dest.foreign =
			    (typeof(segs[k].dest.foreign)){ref[d], (uint16_t)(k * 8), g[d].domid};
			segs[k].flags = GNTCOPY_dest_gref;
		} else { /* back out of the grant the segment before filled */
			d = (k - 1) % NDOM;
			segs[k].source.foreign = (typeof(segs[k].source.foreign)){
			    ref[d], (uint16_t)((k - 1) * 8), g[d].domid};
			segs[k].dest.virt = out[k];
			segs[k].flags = GNTCOPY_source_gref;
		}
		segs[k].len = 8;
	}

	assert_int_equal(hv_gnttab_grant_copy(f->gt, NSEG, segs), 0);
	for (int k = 0; k < NSEG; k++) {
		assert_int_equal(segs[k].status, GNTST_okay);
		if (k % 2 == 0)
			assert_memory_equal(g[k % NDOM].mem + 4096 + k * 8, in + k, 8);
		else
			assert_memory_equal(out[k], in + k - 1, 8);
	}
	for (int d = 0; d < NDOM; d++)
		assert_int_equal(gflags(&g[d], ref[d]), GTF_permit_access);
	for (int d = 1; d < NDOM; d++)
		guest_unmap(&g[d]);
}

static struct hv *hv_under_test;
static int destroy_at_call;
static domid_t destroy_domid;

/* Destroy a domain while hv pins one of its entries (the @destroy_at_call'th pin). */
static void destroy_during_pin(grant_entry_v1_t *e)
{
	(void)e;
	if (--destroy_at_call == 0)
		assert_int_equal(hv_domain_destroy(hv_under_test, destroy_domid, NULL), 0);
}

/*
 * A segment whose source is the fourth domain of the batch and whose
 * destination is a fifth, the source's domain destroyed while its entry is
 * being pinned: the batch's reference must keep that domain's memory until
 * the copy is done (dropping the batch's references to make room for the
 * fifth domain used to free it between the pin and the copy).
 */
static void test_copy_source_domain_destroyed(void **state)
{
	enum { NDOM = 5 };
	struct fx *f = *state;
	struct guest g[NDOM];
	grant_ref_t ref[NDOM];
	xengnttab_grant_copy_segment_t segs[NDOM];
	uint8_t in[8] = "abcdefg";

	g[0] = f->g;
	for (int d = 1; d < NDOM; d++)
		assert_int_equal(guest_create(f->hv, 2, &g[d]), 0);
	for (int d = 0; d < NDOM; d++)
		ref[d] = guest_grant(&g[d], 0, 1, false);
	memset(segs, 0, sizeof(segs));
	for (int d = 0; d < NDOM - 1; d++) { /* four domains into the batch */
		segs[d].source.virt = in;
		segs[d].dest.foreign = (typeof(segs[d].dest.foreign)){ref[d], 0, g[d].domid};
		segs[d].flags = GNTCOPY_dest_gref;
		segs[d].len = 8;
	}
	segs[4].source.foreign = (typeof(segs[4].source.foreign)){ref[3], 0, g[3].domid};
	segs[4].dest.foreign = (typeof(segs[4].dest.foreign)){ref[4], 100, g[4].domid};
	segs[4].flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
	segs[4].len = 8;

	hv_under_test = f->hv;
	destroy_domid = g[3].domid;
	destroy_at_call = 5; /* segment 4's source */
	hv_gnttab_race_hook = destroy_during_pin;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, NDOM, segs), 0);
	hv_gnttab_race_hook = NULL;
	for (int k = 0; k < NDOM; k++)
		assert_int_equal(segs[k].status, GNTST_okay);
	assert_memory_equal(g[4].mem + 4096 + 100, in, 8);
	for (int d = 1; d < NDOM; d++)
		guest_unmap(&g[d]);
}

/* A copy may pin an entry that is also mapped; the mapping keeps its bits. */
static void test_copy_while_mapped(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	uint8_t out[4];
	grant_ref_t r = guest_grant(&f->g, 0, 4, false);
	xengnttab_grant_copy_segment_t seg = {.source.foreign = {r, 0, f->g.domid},
					      .dest.virt = out,
					      .len = 4,
					      .flags = GNTCOPY_source_gref};

	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_okay);
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 1, &seg), 0);
	assert_int_equal(seg.status, GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
}

static int hook_calls;
static domid_t hook_domid;

/* The guest points the entry at another domain between hv's read and its CAS. */
static void hook_rewrite_domid(grant_entry_v1_t *e)
{
	hook_calls++;
	if (hook_calls == 1)
		__atomic_store_n(&e->domid, hook_domid, __ATOMIC_RELAXED);
}

/* The guest keeps flipping a harmless bit: every CAS fails. */
static void hook_flip(grant_entry_v1_t *e)
{
	hook_calls++;
	__atomic_fetch_xor(&e->flags, GTF_PWT, __ATOMIC_RELAXED);
}

/* The same, four times: Xen's fifth attempt succeeds. */
static void hook_flip4(grant_entry_v1_t *e)
{
	if (hook_calls++ < 4)
		__atomic_fetch_xor(&e->flags, GTF_PWT, __ATOMIC_RELAXED);
}

static void test_guest_rewrites_during_pin(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	uint8_t out[1];
	xengnttab_grant_copy_segment_t seg = {.source.foreign = {r, 0, f->g.domid},
					      .dest.virt = out,
					      .len = 1,
					      .flags = GNTCOPY_source_gref};

	/* CAS fails, the retry sees the new domid: refused, nothing pinned. */
	hook_calls = 0;
	hook_domid = 5;
	hv_gnttab_race_hook = hook_rewrite_domid;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_permission_denied);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);

	/* An entry that never holds still: bounded retries, then general error. */
	f->g.gt[r].domid = 0;
	hook_calls = 0;
	hv_gnttab_race_hook = hook_flip;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_general_error);
	assert_int_equal(hook_calls, 5);
	assert_int_equal(gflags(&f->g, r) & (GTF_reading | GTF_writing), 0);
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 1, &seg), 0);
	assert_int_equal(seg.status, GNTST_general_error);
	assert_int_equal(gflags(&f->g, r) & (GTF_reading | GTF_writing), 0);
	/* Four rewrites, then still: the fifth attempt pins, as Xen's does. */
	hook_calls = 0;
	hv_gnttab_race_hook = hook_flip4;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	assert_int_equal(hook_calls, 5);
	hv_gnttab_race_hook = NULL;
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), 0);
}

static struct guest *regrant_guest;
static grant_ref_t regrant_ref;
static uint32_t regrant_frame;

/*
 * A correct guest between hv's read of the entry and its CAS: it ends
 * access (nothing is in use yet, so that succeeds), reuses the page and
 * grants the same ref for another page with the same flags.
 */
static void hook_regrant(grant_entry_v1_t *e)
{
	(void)e;
	if (hook_calls++)
		return;
	assert_int_equal(hv_gntshr_end_access(&regrant_guest->gs, regrant_ref), 0);
	memcpy(regrant_guest->mem + 1 * HV_PAGE_SIZE, "the guest's again", 18);
	assert_int_equal(
	    hv_gntshr_grant_access(&regrant_guest->gs, regrant_ref, 0, regrant_frame, false), 0);
}

/* Map and copy use the frame the entry names once it is in use, never the ended grant's. */
static void test_regrant_during_pin(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	uint8_t in[4] = {1, 2, 3, 4};
	xengnttab_grant_copy_segment_t seg = {.source.virt = in,
					      .dest.foreign = {r, 8, f->g.domid},
					      .len = 4,
					      .flags = GNTCOPY_dest_gref};

	regrant_guest = &f->g;
	regrant_ref = r;
	regrant_frame = 2;
	hook_calls = 0;
	hv_gnttab_race_hook = hook_regrant;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	hv_gnttab_race_hook = NULL;
	memcpy((void *)(uintptr_t)op.host_addr, "backend", 8);
	assert_string_equal((char *)f->g.mem + 2 * HV_PAGE_SIZE, "backend");
	assert_string_equal((char *)f->g.mem + HV_PAGE_SIZE, "the guest's again");
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);

	/* a grant copy's destination the same way: the write lands in the new page */
	regrant_frame = 3;
	hook_calls = 0;
	hv_gnttab_race_hook = hook_regrant;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 1, &seg), 0);
	hv_gnttab_race_hook = NULL;
	assert_int_equal(seg.status, GNTST_okay);
	assert_memory_equal(f->g.mem + 3 * HV_PAGE_SIZE + 8, in, 4);
	assert_memory_equal(f->g.mem + 2 * HV_PAGE_SIZE + 8, (uint8_t[4]){0}, 4);

	/* re-granted for a frame past the domain's memory: refused, the in-use bits cleared */
	regrant_frame = 1000000;
	hook_calls = 0;
	hv_gnttab_race_hook = hook_regrant;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_bad_page);
	hv_gnttab_race_hook = NULL;
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), 0);
}

/* The guest rewrites a mapped entry: the mapping keeps its frame, new maps are checked. */
static void test_guest_rewrites_mapped_entry(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op, op2;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);

	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	/* Blind rewrite, as a hostile guest would: other frame, other domain. */
	f->g.gt[r].frame = 6;
	__atomic_store_n(&f->g.gt[r].domid, 3, __ATOMIC_RELEASE);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op2),
			 GNTST_permission_denied);
	/* Back to us but at another frame: the pinned frame wins. */
	__atomic_store_n(&f->g.gt[r].domid, 0, __ATOMIC_RELEASE);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op2), GNTST_okay);
	assert_int_equal(op2.host_addr, op.host_addr);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(unmap1(f->gt, op2.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(maps_in_use(f), 0);
}

/*
 * grant_table.h lets a guest make an entry read-only (a compare-and-swap
 * while GTF_writing is clear) or writable again while it is mapped: the
 * change outlives the unmap, and the next map obeys it.
 */
static void test_readonly_changed_while_mapped(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op, op2;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	uint16_t *flags = &f->g.gt[r].flags;

	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_reading);
	__atomic_fetch_or(flags, GTF_readonly, __ATOMIC_ACQ_REL); /* no GTF_writing: allowed */
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op2),
			 GNTST_permission_denied);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access | GTF_readonly);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op2),
			 GNTST_permission_denied);

	/* And back to writable while mapped read-only. */
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_okay);
	__atomic_fetch_and(flags, (uint16_t)~GTF_readonly, __ATOMIC_ACQ_REL);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op2), GNTST_okay);
	assert_int_equal(unmap1(f->gt, op2.handle), GNTST_okay);
	assert_int_equal(maps_in_use(f), 0);
}

static void test_deferred_release_after_unmap(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 2, false);

	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	assert_int_equal(hv_gntshr_end_access_deferred(&f->g.gs, r), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->g.gs), 1);
	assert_int_equal(hv_gntshr_deferred_poll(&f->g.gs), 0);
	assert_int_equal(unmap1(f->gt, op.handle), GNTST_okay);
	assert_int_equal(hv_gntshr_deferred_poll(&f->g.gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->g.gs), 0);
	assert_int_equal(gflags(&f->g, r), 0);
}

static void test_close_unmaps(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	struct hv_stats st;
	grant_ref_t r = guest_grant(&f->g, 0, 2, false);

	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
	hv_gnttab_close(f->gt);
	f->gt = hv_gnttab_open(f->hv, 0);
	assert_non_null(f->gt);
	assert_int_equal(gflags(&f->g, r), GTF_permit_access);
	hv_stats(f->hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.map_ops, 2);
	assert_int_equal(st.batches, 2);
	assert_null(hv_gnttab_open(f->hv, 77));
}

/*
 * A segment whose source rides on the previous segment's pin and whose
 * destination fails must not drop the shared pin (its owner still copies);
 * the segment after the failed one pins again: every pin dropped once.
 */
static void test_copy_shared_src_dest_fails(void **state)
{
	struct fx *f = *state;
	grant_ref_t src = guest_grant(&f->g, 0, 1, true);
	grant_ref_t ro = guest_grant(&f->g, 0, 2, true); /* read-only: a bad destination */
	uint8_t out[8] = {0}, out2[4] = {0};
	xengnttab_grant_copy_segment_t segs[3];

	memcpy(f->g.mem + 4096, "abcdefgh", 8);
	memset(segs, 0, sizeof(segs));
	segs[0].source.foreign = (typeof(segs[0].source.foreign)){src, 0, f->g.domid};
	segs[0].dest.virt = out;
	segs[0].len = 4;
	segs[0].flags = GNTCOPY_source_gref;
	segs[1].source.foreign = (typeof(segs[1].source.foreign)){src, 4, f->g.domid};
	segs[1].dest.foreign = (typeof(segs[1].dest.foreign)){ro, 0, f->g.domid};
	segs[1].len = 4;
	segs[1].flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
	segs[2] = segs[0];
	segs[2].source.foreign.offset = 4;
	segs[2].dest.virt = out2;

	assert_int_equal(hv_gnttab_grant_copy(f->gt, 3, segs), 0);
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_permission_denied);
	assert_int_equal(segs[2].status, GNTST_okay);
	assert_memory_equal(out, "abcd", 4);
	assert_memory_equal(out2, "efgh", 4);
	assert_no_pins(f, &f->g, src);
	assert_no_pins(f, &f->g, ro);
	assert_int_equal(gflags(&f->g, src), GTF_permit_access | GTF_readonly);
	assert_int_equal(gflags(&f->g, ro), GTF_permit_access | GTF_readonly);
}

/* Same, the source fresh this time: the failed destination drops it at once. */
static void test_copy_fresh_src_dest_fails(void **state)
{
	struct fx *f = *state;
	grant_ref_t src = guest_grant(&f->g, 0, 1, true);
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	uint8_t in[4] = "WXYZ";
	xengnttab_grant_copy_segment_t segs[3];

	memset(segs, 0, sizeof(segs));
	segs[0].source.virt = in;
	segs[0].dest.foreign = (typeof(segs[0].dest.foreign)){dst, 0, f->g.domid};
	segs[0].len = 4;
	segs[0].flags = GNTCOPY_dest_gref;
	/* fresh source pin, destination ref out of range */
	segs[1].source.foreign = (typeof(segs[1].source.foreign)){src, 0, f->g.domid};
	segs[1].dest.foreign = (typeof(segs[1].dest.foreign)){99999, 0, f->g.domid};
	segs[1].len = 4;
	segs[1].flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
	/* after the failed segment: a pin of its own, not segment 0's */
	segs[2] = segs[0];
	segs[2].dest.foreign.offset = 4;

	assert_int_equal(hv_gnttab_grant_copy(f->gt, 3, segs), 0);
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_bad_gntref);
	assert_int_equal(segs[2].status, GNTST_okay);
	assert_memory_equal(f->g.mem + 2 * 4096, "WXYZWXYZ", 8);
	assert_no_pins(f, &f->g, src);
	assert_no_pins(f, &f->g, dst);
	assert_int_equal(gflags(&f->g, src), GTF_permit_access | GTF_readonly);
	assert_int_equal(gflags(&f->g, dst), GTF_permit_access);
}

/* Sharing never crosses a chunk: 40 segments on one entry, pins balanced. */
static void test_copy_sharing_within_chunk(void **state)
{
	struct fx *f = *state;
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	xengnttab_grant_copy_segment_t segs[40];

	memset(segs, 0, sizeof(segs));
	pin_calls = 0;
	for (unsigned int i = 0; i < 40; i++) {
		segs[i].source.virt = "x";
		segs[i].dest.foreign = (typeof(segs[i].dest.foreign)){dst, (uint16_t)i, f->g.domid};
		segs[i].len = 1;
		segs[i].flags = GNTCOPY_dest_gref;
	}
	hv_gnttab_race_hook = hook_count;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 40, segs), 0);
	hv_gnttab_race_hook = NULL;
	for (unsigned int i = 0; i < 40; i++)
		assert_int_equal(segs[i].status, GNTST_okay);
	assert_int_equal(pin_calls, 2); /* one per HV_COPY_CHUNK (32) */
	assert_no_pins(f, &f->g, dst);
	assert_int_equal(gflags(&f->g, dst), GTF_permit_access);
}

/*
 * A domain destroyed fails further grant ops with GNTST_bad_domain
 * (docs/hv.md), a segment that would ride on the previous one's pin too:
 * destroyed while segment 0 pins, segment 1 (same entry) copies nothing.
 */
static void test_copy_shared_pin_domain_destroyed(void **state)
{
	struct fx *f = *state;
	struct guest g2;
	grant_ref_t r;
	xengnttab_grant_copy_segment_t segs[2];

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	r = guest_grant(&g2, 0, 1, false);
	memset(segs, 0, sizeof(segs));
	segs[0].source.virt = "ab";
	segs[0].dest.foreign = (typeof(segs[0].dest.foreign)){r, 0, g2.domid};
	segs[0].len = 2;
	segs[0].flags = GNTCOPY_dest_gref;
	segs[1] = segs[0];
	segs[1].source.virt = "cd";
	segs[1].dest.foreign.offset = 2;

	hv_under_test = f->hv;
	destroy_domid = g2.domid;
	destroy_at_call = 1; /* segment 0's pin */
	hv_gnttab_race_hook = destroy_during_pin;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 2, segs), 0);
	hv_gnttab_race_hook = NULL;
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_bad_domain);
	guest_unmap(&g2);
}

/* Resident memory of this process, in bytes. */
static uint64_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *fp = fopen("/proc/self/statm", "r");

	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%lu %lu", &size, &resident), 2);
	fclose(fp);
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * A handle's maptrack costs memory only as it is used, as Xen grows one:
 * 64 handles of 16384 entries each (32 bytes an entry, 32 MiB if touched
 * whole at open, as before) add less than 4 MiB, and each still maps.
 */
static void test_maptrack_lazy(void **state)
{
	struct fx *f = *state;
	struct hv_gnttab *gts[64];
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	uint64_t before = rss_bytes();

	for (unsigned int i = 0; i < 64; i++)
		assert_non_null(gts[i] = hv_gnttab_open(f->hv, 0));
	assert_true(rss_bytes() < before + (4u << 20)); /* (RSS may also shrink meanwhile) */
	for (unsigned int i = 0; i < 64; i++) {
		assert_int_equal(map1(gts[i], f->g.domid, r, GNTMAP_host_map, &op), GNTST_okay);
		assert_int_equal(op.handle, 0);
		assert_int_equal(unmap1(gts[i], op.handle), GNTST_okay);
		/* a handle never given out is refused, not read from the untouched part */
		assert_int_equal(unmap1(gts[i], 1), GNTST_bad_handle);
		hv_gnttab_close(gts[i]);
	}
	assert_int_equal(maps_in_use(f), 0);
	assert_int_equal(hv_gntshr_end_access(&f->g.gs, r), 0);
}

/*
 * Only a GTF_permit_access entry may be mapped: a transitive one (type 3,
 * which has GTF_permit_access's bit) is refused as Xen's _set_status_v1()
 * refuses any other type, with GNTST_general_error, and left untouched.
 */
static void test_map_transitive_refused(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);

	f->g.gt[r].flags = GTF_transitive;
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map, &op), GNTST_general_error);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_general_error);
	assert_int_equal(gflags(&f->g, r), GTF_transitive);
	assert_int_equal(maps_in_use(f), 0);
}

/*
 * A map op's outputs are written whatever the caller left in them: no bus
 * address (no IOMMU here), and no host address for a failed op, so that a
 * caller's stale pointer cannot pass for a mapping.
 */
static void test_map_outputs_written(void **state)
{
	struct fx *f = *state;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	struct gnttab_map_grant_ref ops[2] = {
	    {.flags = GNTMAP_host_map, .ref = r, .dom = f->g.domid},
	    {.flags = GNTMAP_host_map, .ref = 99999, .dom = f->g.domid},
	};

	for (int i = 0; i < 2; i++) {
		ops[i].host_addr = 0xdead000;
		ops[i].dev_bus_addr = 0xbeef000;
	}
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 2, ops), 0);
	assert_int_equal(ops[0].status, GNTST_okay);
	assert_int_equal(ops[0].dev_bus_addr, 0);
	assert_int_not_equal(ops[0].host_addr, 0xdead000);
	assert_int_equal(ops[1].status, GNTST_bad_gntref);
	assert_int_equal(ops[1].host_addr, 0);
	assert_int_equal(ops[1].dev_bus_addr, 0);
	assert_int_equal(unmap1(f->gt, ops[0].handle), GNTST_okay);
}

/*
 * hv_stats() counts the ops asked for, failed ones included, and one batch
 * per call of each kind.
 */
static void test_stats_count_ops_and_batches(void **state)
{
	struct fx *f = *state;
	grant_ref_t r = guest_grant(&f->g, 0, 1, false);
	struct gnttab_map_grant_ref m[3] = {
	    {.flags = GNTMAP_host_map, .ref = r, .dom = f->g.domid},
	    {.flags = GNTMAP_host_map | GNTMAP_readonly, .ref = r, .dom = f->g.domid},
	    {.flags = GNTMAP_host_map, .ref = 99999, .dom = f->g.domid},
	};
	struct gnttab_unmap_grant_ref u[3];
	struct hv_stats st;

	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 3, m), 0);
	assert_int_equal(m[2].status, GNTST_bad_gntref);
	hv_stats(f->hv, &st);
	assert_int_equal(st.map_ops, 3);
	assert_int_equal(st.maps_in_use, 2);
	assert_int_equal(st.batches, 1);

	u[0] = (struct gnttab_unmap_grant_ref){.handle = m[0].handle};
	u[1] = (struct gnttab_unmap_grant_ref){.handle = m[1].handle};
	u[2] = (struct gnttab_unmap_grant_ref){.handle = 12345};
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, 3, u), 0);
	assert_int_equal(u[2].status, GNTST_bad_handle);
	hv_stats(f->hv, &st);
	assert_int_equal(st.unmap_ops, 3);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.batches, 2);
}

/*
 * One unmap batch of many mappings of one domain drops as many mapping
 * counts and domain references as it unmapped: a domain whose mappings
 * are all gone leaks none at destroy, and a zombie goes when its last
 * mappings go, in one batch.
 */
static void test_unmap_batch_counts_per_domain(void **state)
{
	enum { N = 6 };
	struct fx *f = *state;
	struct guest g2;
	struct gnttab_map_grant_ref m[N];
	struct gnttab_unmap_grant_ref u[N];
	struct hv_leak leak;
	struct hv_stats st;
	grant_ref_t r;

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	r = guest_grant(&g2, 0, 1, false);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++)
			m[i] = (struct gnttab_map_grant_ref){
			    .flags = GNTMAP_host_map, .ref = r, .dom = g2.domid};
		assert_int_equal(hv_gnttab_map_grant_refs(f->gt, N, m), 0);
		for (int i = 0; i < N; i++)
			assert_int_equal(m[i].status, GNTST_okay);
		if (round == 1)
			break;
		for (int i = 0; i < N; i++)
			u[i] = (struct gnttab_unmap_grant_ref){.handle = m[i].handle};
		assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, N, u), 0);
	}
	/* N mappings live now, the first N gone: N counted, not more. */
	assert_int_equal(hv_domain_destroy(f->hv, g2.domid, &leak), 0);
	assert_int_equal(leak.maps_in_use, N);
	hv_stats(f->hv, &st);
	assert_int_equal(st.zombies, 1);

	for (int i = 0; i < N; i++)
		u[i] = (struct gnttab_unmap_grant_ref){.handle = m[i].handle};
	assert_int_equal(hv_gnttab_unmap_grant_refs(f->gt, N, u), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(u[i].status, GNTST_okay);
	hv_stats(f->hv, &st);
	assert_int_equal(st.zombies, 0);
	assert_int_equal(st.maps_in_use, 0);
	guest_unmap(&g2);
}

/*
 * The page bound of a granted side is checked on the sum of offset and
 * length, without wrapping at 16 bits: offset 65535 and length 2 is far
 * past the page, not at byte 1 of it.
 */
static void test_copy_offset_does_not_wrap(void **state)
{
	struct fx *f = *state;
	grant_ref_t src = guest_grant(&f->g, 0, 1, true);
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	uint8_t buf[2] = {1, 2};
	xengnttab_grant_copy_segment_t segs[2];

	memset(segs, 0, sizeof(segs));
	segs[0].source.foreign = (typeof(segs[0].source.foreign)){src, UINT16_MAX, f->g.domid};
	segs[0].dest.virt = buf;
	segs[0].len = 2;
	segs[0].flags = GNTCOPY_source_gref;
	segs[1].source.virt = buf;
	segs[1].dest.foreign = (typeof(segs[1].dest.foreign)){dst, UINT16_MAX, f->g.domid};
	segs[1].len = 2;
	segs[1].flags = GNTCOPY_dest_gref;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 2, segs), 0);
	assert_int_equal(segs[0].status, GNTST_bad_copy_arg);
	assert_int_equal(segs[1].status, GNTST_bad_copy_arg);
	assert_int_equal(buf[0], 1);
	assert_int_equal(gflags(&f->g, src), GTF_permit_access | GTF_readonly);
	assert_int_equal(gflags(&f->g, dst), GTF_permit_access);
}

/*
 * A copy batch that must let domains go to take new ones copies what it
 * has pinned first: a domain destroyed just after (here during the next
 * segment's pin) already got its bytes, and no copy touches its memory
 * once the batch's reference, the last, is gone.  The batch is full when
 * a segment's source is a fifth domain, whether its destination is a
 * sixth (@dest_held false) or one the batch holds already.
 */
static void copy_flushes_before_letting_domains_go(struct fx *f, bool dest_held)
{
	enum { NDOM = 6 };
	struct guest g[NDOM];
	grant_ref_t ref[NDOM];
	xengnttab_grant_copy_segment_t segs[NDOM - 1];
	uint8_t in[8] = "abcdefg";

	g[0] = f->g;
	for (int d = 1; d < NDOM; d++)
		assert_int_equal(guest_create(f->hv, 2, &g[d]), 0);
	for (int d = 0; d < NDOM; d++)
		ref[d] = guest_grant(&g[d], 0, 1, false);
	memset(segs, 0, sizeof(segs));
	for (int d = 1; d < 5; d++) { /* four domains fill the batch */
		segs[d - 1].source.virt = in;
		segs[d - 1].dest.foreign = (typeof(segs[0].dest.foreign)){ref[d], 0, g[d].domid};
		segs[d - 1].flags = GNTCOPY_dest_gref;
		segs[d - 1].len = 8;
	}
	/* one more: the batch lets the four go before its source */
	segs[4].source.foreign = (typeof(segs[4].source.foreign)){ref[0], 0, g[0].domid};
	if (dest_held)
		segs[4].dest.foreign = (typeof(segs[4].dest.foreign)){ref[2], 100, g[2].domid};
	else
		segs[4].dest.foreign = (typeof(segs[4].dest.foreign)){ref[5], 100, g[5].domid};
	segs[4].flags = GNTCOPY_source_gref | GNTCOPY_dest_gref;
	segs[4].len = 8;
	memcpy(g[0].mem + 4096, "from g0", 8);

	hv_under_test = f->hv;
	destroy_domid = g[1].domid;
	destroy_at_call = 5; /* segment 4's source pin */
	hv_gnttab_race_hook = destroy_during_pin;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, NDOM - 1, segs), 0);
	hv_gnttab_race_hook = NULL;
	for (int k = 0; k < NDOM - 1; k++)
		assert_int_equal(segs[k].status, GNTST_okay);
	for (int d = 1; d < 5; d++)
		assert_memory_equal(g[d].mem + 4096, in, 8);
	assert_memory_equal(g[dest_held ? 2 : 5].mem + 4096 + 100, "from g0", 8);
	for (int d = 1; d < NDOM; d++)
		guest_unmap(&g[d]);
}

static void test_copy_flushes_before_letting_domains_go(void **state)
{
	copy_flushes_before_letting_domains_go(*state, false);
}

static void test_copy_flushes_for_a_new_source(void **state)
{
	copy_flushes_before_letting_domains_go(*state, true);
}

/*
 * A batch keeps one reference per domain however many segments name it:
 * five segments into one domain destroyed during the fourth's pin leave
 * the first four copied (the batch's reference keeps the memory until the
 * copies are done) and refuse the fifth, whose domain is dying.
 */
static void test_copy_one_domain_many_segments_destroyed(void **state)
{
	enum { NSEG = 5 };
	struct fx *f = *state;
	struct guest g2;
	grant_ref_t ref[NSEG];
	xengnttab_grant_copy_segment_t segs[NSEG];
	uint8_t in[8] = "abcdefg";

	assert_int_equal(guest_create(f->hv, 2, &g2), 0);
	memset(segs, 0, sizeof(segs));
	for (int k = 0; k < NSEG; k++) {
		ref[k] = guest_grant(&g2, 0, 1, false);
		segs[k].source.virt = in;
		segs[k].dest.foreign =
		    (typeof(segs[k].dest.foreign)){ref[k], (uint16_t)(8 * k), g2.domid};
		segs[k].flags = GNTCOPY_dest_gref;
		segs[k].len = 8;
	}
	hv_under_test = f->hv;
	destroy_domid = g2.domid;
	destroy_at_call = 4; /* segment 3's pin */
	hv_gnttab_race_hook = destroy_during_pin;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, NSEG, segs), 0);
	hv_gnttab_race_hook = NULL;
	for (int k = 0; k < NSEG - 1; k++) {
		assert_int_equal(segs[k].status, GNTST_okay);
		assert_memory_equal(g2.mem + 4096 + 8 * k, in, 8);
	}
	assert_int_equal(segs[NSEG - 1].status, GNTST_bad_domain);
	guest_unmap(&g2);
}

/*
 * Sharing a pin needs a pin: after a segment whose source is an address,
 * a granted source naming (dom0, ref 0), which is what an unused side
 * holds, is looked up and refused (dom0 has no grant table), not taken
 * for the previous segment's.
 */
static void test_copy_no_sharing_with_virtual_side(void **state)
{
	struct fx *f = *state;
	grant_ref_t dst = guest_grant(&f->g, 0, 2, false);
	uint8_t in[4] = "abc", out[4] = {0};
	xengnttab_grant_copy_segment_t segs[2];

	memset(segs, 0, sizeof(segs));
	segs[0].source.virt = in;
	segs[0].dest.foreign = (typeof(segs[0].dest.foreign)){dst, 0, f->g.domid};
	segs[0].len = 4;
	segs[0].flags = GNTCOPY_dest_gref;
	segs[1].source.foreign = (typeof(segs[1].source.foreign)){0, 0, 0};
	segs[1].dest.virt = out;
	segs[1].len = 4;
	segs[1].flags = GNTCOPY_source_gref;
	assert_int_equal(hv_gnttab_grant_copy(f->gt, 2, segs), 0);
	assert_int_equal(segs[0].status, GNTST_okay);
	assert_int_equal(segs[1].status, GNTST_bad_gntref);
	assert_memory_equal(f->g.mem + 2 * 4096, in, 4);
}

/* A handle is opened on an hv and for a live domain, or not at all. */
static void test_open_args(void **state)
{
	struct fx *f = *state;

	errno = 0;
	assert_null(hv_gnttab_open(NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(hv_gnttab_open(f->hv, 42));
	assert_int_equal(errno, ESRCH);
	hv_gnttab_close(NULL);
}

/* The last entry of the table maps, and its pin is kept like any other. */
static void test_map_last_ref(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref op;
	grant_ref_t last = (grant_ref_t)hv_domain_nr_grants(f->hv, f->g.domid) - 1;

	assert_int_equal(hv_gntshr_grant_access(&f->g.gs, last, 0, 1, false), 0);
	assert_int_equal(map1(f->gt, f->g.domid, last, GNTMAP_host_map, &op), GNTST_okay);
	assert_int_equal(gflags(&f->g, last), GTF_permit_access | GTF_reading | GTF_writing);
	assert_int_equal(map1(f->gt, f->g.domid, last + 1, GNTMAP_host_map, &op), GNTST_bad_gntref);
	assert_int_equal(unmap1(f->gt, 0), GNTST_okay);
	assert_int_equal(gflags(&f->g, last), GTF_permit_access);
}

/*
 * The last maptrack entry given back is reused like any other: with 4
 * entries, handle 3 unmapped is the next handle, and a full maptrack
 * refuses the map after it, not one entry past its end.
 */
static void test_maptrack_reuses_last_entry(void **state)
{
	struct fx *f = *state;
	struct gnttab_map_grant_ref ops[4], op;
	grant_ref_t r = guest_grant(&f->g, 0, 0, true);

	for (int i = 0; i < 4; i++)
		ops[i] = (struct gnttab_map_grant_ref){
		    .flags = GNTMAP_host_map | GNTMAP_readonly, .ref = r, .dom = f->g.domid};
	assert_int_equal(hv_gnttab_map_grant_refs(f->gt, 4, ops), 0);
	assert_int_equal(ops[3].handle, 3);
	assert_int_equal(unmap1(f->gt, 3), GNTST_okay);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_okay);
	assert_int_equal(op.handle, 3);
	assert_int_equal(map1(f->gt, f->g.domid, r, GNTMAP_host_map | GNTMAP_readonly, &op),
			 GNTST_no_device_space);
	assert_int_equal(maps_in_use(f), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_map_rw, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_maptrack_lazy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_ro_faults_on_write, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unmap_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_rw_and_ro_same_ref, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pin_count_saturates, setup_pins_maptrack,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_maptrack_full_to_the_page, setup_page_maptrack,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_maptrack_exhaustion, setup_small_maptrack,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_copy_mixed_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_same_ref_shares_pin, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_long_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_source_domain_destroyed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_while_mapped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_rewrites_during_pin, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_rewrites_mapped_entry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_regrant_during_pin, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pinned_entry_other_domain, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_driver_domain_backend, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_readonly_changed_while_mapped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_release_after_unmap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_close_unmaps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_shared_src_dest_fails, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_fresh_src_dest_fails, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_sharing_within_chunk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_shared_pin_domain_destroyed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_transitive_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_outputs_written, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stats_count_ops_and_batches, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unmap_batch_counts_per_domain, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_offset_does_not_wrap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_flushes_before_letting_domains_go, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_copy_flushes_for_a_new_source, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_one_domain_many_segments_destroyed, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_copy_no_sharing_with_virtual_side, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_open_args, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_map_last_ref, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_maptrack_reuses_last_entry, setup_small_maptrack,
					    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
