// SPDX-License-Identifier: MIT
// test_gntshr.c - guest side of the grant table: ref lists, grant, end access, deferral

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "hv/gnttab.h"

#define NR 32 /* small table: 8 reserved refs, 24 usable */

struct fx {
	grant_entry_v1_t table[NR];
	struct hv_gntshr gs;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || hv_gntshr_init(&f->gs, f->table, NR) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hv_gntshr_fini(&f->gs);
	free(f);
	return 0;
}

static void test_init_args(void **state)
{
	grant_entry_v1_t t[HV_GNTSHR_FIRST_REF + 1];
	struct hv_gntshr gs;
	grant_ref_t r;

	assert_int_equal(hv_gntshr_init(&gs, NULL, 16), -EINVAL);
	assert_int_equal(hv_gntshr_init(&gs, t, HV_GNTSHR_FIRST_REF), -EINVAL);
	assert_int_equal(hv_gntshr_init(&gs, t, HV_GNTSHR_FIRST_REF + 1), 0);
	assert_int_equal(hv_gntshr_alloc_ref(&gs, &r), 0);
	assert_int_equal(r, HV_GNTSHR_FIRST_REF);
	assert_int_equal(hv_gntshr_alloc_ref(&gs, &r), -ENOSPC);
	hv_gntshr_fini(&gs);
	hv_gntshr_fini(NULL); /* nothing to do, as free(NULL) */
}

static void test_alloc_never_reserved(void **state)
{
	struct fx *f = *state;
	bool seen[NR] = {false};
	grant_ref_t r;

	for (int i = 0; i < NR - HV_GNTSHR_FIRST_REF; i++) {
		assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r), 0);
		assert_true(r >= HV_GNTSHR_FIRST_REF && r < NR);
		assert_false(seen[r]);
		seen[r] = true;
	}
	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r), -ENOSPC);
	assert_int_equal(hv_gntshr_free_ref(&f->gs, 20), 0);
	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r), 0);
	assert_int_equal(r, 20);
}

static void test_free_errors(void **state)
{
	struct fx *f = *state;
	grant_ref_t r;

	assert_int_equal(hv_gntshr_free_ref(&f->gs, 0), -EINVAL);  /* reserved */
	assert_int_equal(hv_gntshr_free_ref(&f->gs, 1), -EINVAL);  /* reserved */
	assert_int_equal(hv_gntshr_free_ref(&f->gs, NR), -EINVAL); /* out of range */
	assert_int_equal(hv_gntshr_free_ref(&f->gs, 10), -EINVAL); /* never allocated */
	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r), 0);
	assert_int_equal(hv_gntshr_free_ref(&f->gs, r), 0);
	assert_int_equal(hv_gntshr_free_ref(&f->gs, r), -EINVAL); /* double free */
	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r), -EINVAL);
}

static void test_grant_and_end(void **state)
{
	struct fx *f = *state;
	grant_ref_t r;

	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r), 0);
	assert_int_equal(hv_gntshr_grant_access(&f->gs, r, 3, 77, false), 0);
	assert_int_equal(f->table[r].flags, GTF_permit_access);
	assert_int_equal(f->table[r].domid, 3);
	assert_int_equal(f->table[r].frame, 77);
	assert_int_equal(hv_gntshr_grant_access(&f->gs, r, 4, 78, true), 0);
	assert_int_equal(f->table[r].flags, GTF_permit_access | GTF_readonly);
	assert_int_equal(hv_gntshr_grant_access(&f->gs, NR, 4, 78, true), -EINVAL);

	/* hv marks it in use: end of access must fail until the bits clear. */
	f->table[r].flags |= GTF_reading;
	assert_int_equal(hv_gntshr_end_access(&f->gs, r), -EBUSY);
	f->table[r].flags |= GTF_writing;
	assert_int_equal(hv_gntshr_end_access(&f->gs, r), -EBUSY);
	f->table[r].flags &= (uint16_t) ~(GTF_reading | GTF_writing);
	assert_int_equal(hv_gntshr_end_access(&f->gs, r), 0);
	assert_int_equal(f->table[r].flags, 0);
	assert_int_equal(hv_gntshr_end_access(&f->gs, NR), -EINVAL);
}

static void test_deferred(void **state)
{
	struct fx *f = *state;
	grant_ref_t r[4];
	uint32_t nfree = f->gs.nr_free;

	for (int i = 0; i < 4; i++) {
		assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r[i]), 0);
		assert_int_equal(hv_gntshr_grant_access(&f->gs, r[i], 0, (uint32_t)i, false), 0);
	}
	/* Not in use: released at once. */
	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r[0]), 0);
	assert_int_equal(f->table[r[0]].flags, 0);

	/* In use: queued, retried in order, released as the backend lets go. */
	for (int i = 1; i < 4; i++) {
		f->table[r[i]].flags |= GTF_reading;
		assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r[i]), 1);
	}
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 3);
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 0);

	f->table[r[2]].flags &= (uint16_t)~GTF_reading; /* middle of the list */
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 2);
	f->table[r[3]].flags &= (uint16_t)~GTF_reading; /* tail */
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	f->table[r[1]].flags &= (uint16_t)~GTF_reading; /* head */
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
	assert_int_equal(f->gs.nr_free, nfree);

	/* The list works again after emptying. */
	f->table[r[1]].flags = GTF_permit_access | GTF_writing;
	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r[0]), 0);
	f->table[r[0]].flags = GTF_permit_access | GTF_writing;
	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r[0]), 1);
	f->table[r[0]].flags = GTF_permit_access;
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
}

/* A new table holds every ref but the reserved ones on its free list, none deferred. */
static void test_init_counts_free(void **state)
{
	struct fx *f = *state;

	assert_int_equal(f->gs.nr_free, NR - HV_GNTSHR_FIRST_REF);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
	/* and an empty deferred list: a poll finds nothing to release */
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 0);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
}

/*
 * A deferred end of access takes only a ref the guest holds: one past the
 * table is refused before anything is queued (queuing it would write its
 * link past the array), as is a reserved ref even while hv has it in use.
 */
static void test_deferred_refuses_unallocated(void **state)
{
	struct fx *f = *state;

	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, NR), -EINVAL);
	f->table[1].flags = GTF_permit_access | GTF_reading;
	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, 1), -EINVAL);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 0);
}

/*
 * The head of the deferred list released while the next one stays in
 * use: the next one becomes the head and is released once hv lets it go,
 * not lost with the head.
 */
static void test_deferred_head_released_first(void **state)
{
	struct fx *f = *state;
	grant_ref_t r[2];

	for (int i = 0; i < 2; i++) {
		assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r[i]), 0);
		assert_int_equal(hv_gntshr_grant_access(&f->gs, r[i], 0, (uint32_t)i, false), 0);
		f->table[r[i]].flags |= GTF_reading;
		assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r[i]), 1);
	}
	f->table[r[0]].flags &= (uint16_t)~GTF_reading;
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 1);
	f->table[r[1]].flags &= (uint16_t)~GTF_reading;
	assert_int_equal(hv_gntshr_deferred_poll(&f->gs), 1);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
	assert_int_equal(f->table[r[1]].flags, 0);
	assert_int_equal(f->gs.nr_free, NR - HV_GNTSHR_FIRST_REF);

	/* fini forgets a list still holding refs: nothing counted as deferred after it */
	assert_int_equal(hv_gntshr_alloc_ref(&f->gs, &r[0]), 0);
	f->table[r[0]].flags = GTF_permit_access | GTF_reading;
	assert_int_equal(hv_gntshr_end_access_deferred(&f->gs, r[0]), 1);
	hv_gntshr_fini(&f->gs);
	assert_int_equal(hv_gntshr_deferred_count(&f->gs), 0);
	assert_int_equal(f->gs.nr_free, 0);
	assert_int_equal(hv_gntshr_init(&f->gs, f->table, NR), 0); /* for the teardown */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_args),
	    cmocka_unit_test_setup_teardown(test_alloc_never_reserved, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_grant_and_end, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_init_counts_free, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_refuses_unallocated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deferred_head_released_first, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
