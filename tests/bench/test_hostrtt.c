// SPDX-License-Identifier: MIT
/* test_hostrtt.c - pvnet bench: the host's round trip between two CPUs, sampled and refused */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../common/test_skip.h"
#include "hostrtt.h"

/* The first two CPUs this process may use; false when it has fewer. */
static bool two_cpus(int *a, int *b)
{
	cpu_set_t s;
	int n = 0;

	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return false;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &s))
			*(n++ ? b : a) = c;
	return n == 2;
}

static void test_refused(void **state)
{
	unsigned int ns = 12345;

	(void)state;
	assert_int_equal(hostrtt_sample(0, 0, 1000, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(-1, 0, 1000, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(0, -1, 1000, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(0, CPU_SETSIZE, 1000, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(0, 1, 0, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(0, 1, 60001, &ns), -EINVAL);
	/* A refused sample leaves the result alone. */
	assert_int_equal(ns, 12345);
}

static void test_not_ours(void **state)
{
	cpu_set_t s;
	unsigned int ns = 12345;
	int a, b, off = -1;

	(void)state;
	if (!two_cpus(&a, &b) || sched_getaffinity(0, sizeof(s), &s) < 0)
		test_skip("a CPU not ours: fewer than two CPUs to run on");
	for (int c = CPU_SETSIZE - 1; c >= 0 && off < 0; c--)
		if (!CPU_ISSET(c, &s))
			off = c;
	if (off < 0)
		test_skip("a CPU not ours: every CPU is ours");
	/*
	 * Pinning to a CPU we may not use fails; both threads stop at once, the
	 * side that could pin too: nothing waits out the timeout (a minute here,
	 * as long as the test may run).
	 */
	assert_int_equal(hostrtt_sample(a, off, 60000, &ns), -EINVAL);
	assert_int_equal(hostrtt_sample(off, a, 60000, &ns), -EINVAL);
	assert_int_equal(ns, 12345);
}

static void test_sample(void **state)
{
	unsigned int ns = 0, ns2 = 0;
	int a, b;

	(void)state;
	if (!two_cpus(&a, &b))
		test_skip("a sample: fewer than two CPUs to run on");
	assert_int_equal(hostrtt_sample(a, b, 10000, &ns), 0);
	/* More than nothing; less than 1 ms even on a host that preempted every block. */
	assert_true(ns >= 1 && ns < 1000000);
	/* Either CPU may start the round trips, and samples can be taken again and again. */
	assert_int_equal(hostrtt_sample(b, a, 10000, &ns2), 0);
	assert_true(ns2 >= 1 && ns2 < 1000000);
	for (unsigned int i = 0; i < 20; i++)
		assert_int_equal(hostrtt_sample(a, b, 10000, &ns2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_not_ours),
	    cmocka_unit_test(test_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
