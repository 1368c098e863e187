// SPDX-License-Identifier: MIT
/* test_place.c - pvnet bench placement: names, the split of a CPU set, CPU lists */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "bench_place.h"

static void set_of(cpu_set_t *s, const int *cpus, size_t n)
{
	CPU_ZERO(s);
	for (size_t i = 0; i < n; i++)
		CPU_SET(cpus[i], s);
}

static void test_names(void **state)
{
	enum bench_placement p = BENCH_PLACE_SPREAD;

	(void)state;
	assert_int_equal(bench_parse_placement("split", &p), 0);
	assert_int_equal(p, BENCH_PLACE_SPLIT);
	assert_string_equal(bench_placement_name(p), "split");
	assert_int_equal(bench_parse_placement("spread", &p), 0);
	assert_int_equal(p, BENCH_PLACE_SPREAD);
	assert_string_equal(bench_placement_name(p), "spread");
	assert_int_equal(bench_parse_placement("Split", &p), -EINVAL);
	assert_int_equal(bench_parse_placement("", &p), -EINVAL);
	assert_int_equal(bench_parse_placement("one", &p), -EINVAL);
	assert_int_equal(p, BENCH_PLACE_SPREAD); /* untouched by a refusal */
}

static void test_split(void **state)
{
	static const struct {
		int allowed[8];
		size_t n;
		const char *pvnetd, *guests;
	} cases[] = {
	    {{0, 1}, 2, "0", "1"},	     {{0, 1, 2}, 3, "0", "1-2"},
	    {{0, 1, 2, 3}, 4, "0-1", "2-3"}, {{1, 3, 5}, 3, "1", "3,5"},
	    {{2, 7}, 2, "2", "7"},	     {{0, 1, 2, 3, 4, 5, 6, 7}, 8, "0-3", "4-7"},
	};
	char a[64], b[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cpu_set_t allowed, pd, g, both;

		set_of(&allowed, cases[i].allowed, cases[i].n);
		assert_int_equal(bench_placement_split(&allowed, &pd, &g), 0);
		bench_cpus_format(&pd, a, sizeof(a));
		bench_cpus_format(&g, b, sizeof(b));
		assert_string_equal(a, cases[i].pvnetd);
		assert_string_equal(b, cases[i].guests);
		/* Disjoint, and together the CPUs allowed. */
		CPU_AND(&both, &pd, &g);
		assert_int_equal(CPU_COUNT(&both), 0);
		CPU_OR(&both, &pd, &g);
		assert_true(CPU_EQUAL(&both, &allowed));
	}
}

static void test_split_needs_two(void **state)
{
	cpu_set_t allowed, pd, g;
	int one = 3;

	(void)state;
	set_of(&allowed, &one, 1);
	assert_int_equal(bench_placement_split(&allowed, &pd, &g), -EINVAL);
	CPU_ZERO(&allowed);
	assert_int_equal(bench_placement_split(&allowed, &pd, &g), -EINVAL);
}

static void test_format(void **state)
{
	static const int many[] = {0, 1, 2, 5, 7, 8, 10};
	cpu_set_t s;
	char buf[64];

	(void)state;
	CPU_ZERO(&s);
	bench_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
	set_of(&s, many, sizeof(many) / sizeof(many[0]));
	bench_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "0-2,5,7-8,10");
	/* Cut after the last whole item, never in the middle of one. */
	bench_cpus_format(&s, buf, 8);
	assert_string_equal(buf, "0-2,5");
	bench_cpus_format(&s, buf, 1);
	assert_string_equal(buf, "");
	/* An item that would fill the buffer to its last byte leaves no room for the NUL. */
	memset(buf, 'x', sizeof(buf));
	bench_cpus_format(&s, buf, 5);
	assert_string_equal(buf, "0-2");
	assert_int_equal(buf[5], 'x');
	bench_cpus_format(&s, buf, 6);
	assert_string_equal(buf, "0-2,5");
	/* The last CPU a set can hold. */
	char want[16];

	CPU_ZERO(&s);
	CPU_SET(CPU_SETSIZE - 1, &s);
	snprintf(want, sizeof(want), "%d", CPU_SETSIZE - 1);
	bench_cpus_format(&s, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_first(void **state)
{
	static const int some[] = {3, 5, 9};
	cpu_set_t s;

	(void)state;
	CPU_ZERO(&s);
	assert_int_equal(bench_cpus_first(&s), -1);
	set_of(&s, some, sizeof(some) / sizeof(some[0]));
	assert_int_equal(bench_cpus_first(&s), 3);
	CPU_CLR(3, &s);
	assert_int_equal(bench_cpus_first(&s), 5);
	CPU_ZERO(&s);
	CPU_SET(CPU_SETSIZE - 1, &s);
	assert_int_equal(bench_cpus_first(&s), CPU_SETSIZE - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),	    cmocka_unit_test(test_split),
	    cmocka_unit_test(test_split_needs_two), cmocka_unit_test(test_first),
	    cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
