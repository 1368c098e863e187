// SPDX-License-Identifier: MIT
/*
 * test_options.c - what `pvnet bench`'s command line makes of a run
 * (bench_cli_parse()): the defaults of the sections and of --section stream,
 * the field each option sets, the placement.  The default run is the
 * project's main job, so its defaults are an interface; a wrong one would
 * only show in the figures of a run of minutes.  Nothing runs here.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench_run.h"

static struct bench b;

/* Parse "bench" and the NULL-terminated rest, as `pvnet [-d DIR] bench ...` would. */
#define PARSE(dir, ...)                                                                            \
	({                                                                                         \
		char *argv_[] = {"bench", ##__VA_ARGS__, NULL};                                    \
		bench_cli_parse(&b, (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, dir);      \
	})

/* May this process use two CPUs or more (then split is the default placement)? */
static bool two_cpus(void)
{
	cpu_set_t s;

	return sched_getaffinity(0, sizeof(s), &s) == 0 && CPU_COUNT(&s) >= 2;
}

/* The default run: the five sections, each over its defaults (docs/benchmarks.md). */
static void test_sections_defaults(void **state)
{
	static const uint32_t sizes[] = {64, 1024, 2048, 4096, 8192, 16384, 32768, 65535};
	static const unsigned int queues[] = {1, 2, 4, 8};
	static const int steering[] = {BENCH_STEER_HASH, BENCH_STEER_XPS, BENCH_STEER_XPS_SAFE};

	(void)state;
	assert_int_equal(PARSE(NULL), 0);
	assert_false(b.stream);
	for (int k = 0; k < BENCH_SEC_N; k++)
		assert_int_equal(b.sel[k], k != BENCH_SEC_PEERS);
	assert_int_equal(b.nsizes, 8);
	assert_memory_equal(b.sizes, sizes, sizeof(sizes));
	assert_int_equal(b.nqueues, 4);
	assert_memory_equal(b.queues, queues, sizeof(queues));
	assert_int_equal(b.nmodes, 3);
	assert_string_equal(b.modes[0], "copy");
	assert_string_equal(b.modes[1], "map");
	assert_string_equal(b.modes[2], "persistent");
	assert_false(b.modes_given);
	assert_int_equal(b.nsteering, 3);
	assert_memory_equal(b.steering, steering, sizeof(steering));
	assert_true(b.duration == 1.0);
	assert_true(b.warmup == BENCH_WARMUP_S);
	assert_int_equal(b.tcp_seconds, 2);
	assert_int_equal(b.peer_seconds, 3);
	assert_int_equal(b.repeat, 1);
	assert_true(b.zerocopy);
	assert_int_equal(b.verify, BENCH_VERIFY_SAMPLED);
	assert_false(b.migrate);
	assert_null(b.json_path);
	assert_null(b.ext_run_dir);
	assert_int_equal(b.placement, two_cpus() ? BENCH_PLACE_SPLIT : BENCH_PLACE_SPREAD);
	assert_int_equal(b.split, two_cpus());
	assert_int_equal(b.sfd, -1);
	/* --peers adds the sixth. */
	assert_int_equal(PARSE(NULL, "--peers"), 0);
	for (int k = 0; k < BENCH_SEC_N; k++)
		assert_true(b.sel[k]);
}

/* --section stream, or a sweep option without --section: the plain sweep's defaults. */
static void test_stream_defaults(void **state)
{
	static const uint32_t sizes[] = {64, 1514, 9000, 65535};

	(void)state;
	assert_int_equal(PARSE(NULL, "--section", "stream"), 0);
	assert_true(b.stream);
	for (int k = 0; k < BENCH_SEC_N; k++)
		assert_false(b.sel[k]);
	assert_int_equal(b.nsizes, 4);
	assert_memory_equal(b.sizes, sizes, sizeof(sizes));
	assert_int_equal(b.nqueues, 1);
	assert_int_equal(b.queues[0], 1);
	assert_int_equal(b.nmodes, 2);
	assert_string_equal(b.modes[0], "copy");
	assert_string_equal(b.modes[1], "map");
	assert_int_equal(b.nsteering, 1);
	assert_int_equal(b.steering[0], BENCH_STEER_QUEUE);
	assert_true(b.duration == 2.0);
	/* A sweep option alone means the stream, its other lists at their defaults. */
	assert_int_equal(PARSE(NULL, "-q", "2,4"), 0);
	assert_true(b.stream);
	assert_int_equal(b.nqueues, 2);
	assert_int_equal(b.queues[1], 4);
	assert_int_equal(b.nsizes, 4);
	assert_int_equal(PARSE(NULL, "--migrate"), 0);
	assert_true(b.stream && b.migrate);
}

/* Each option sets its own field, and only that. */
static void test_fields(void **state)
{
	(void)state;
	assert_int_equal(PARSE(NULL, "-t", "0.5", "--warmup", "0.25", "--tcp-duration", "7",
			       "--peer-duration", "9", "--api", "copy", "--verify", "full",
			       "--repeat", "3", "--json", "out.json", "--pvnetd", "/x/pvnetd"),
			 0);
	assert_true(b.duration == 0.5);
	assert_true(b.warmup == 0.25);
	assert_int_equal(b.tcp_seconds, 7);
	assert_int_equal(b.peer_seconds, 9);
	assert_false(b.zerocopy);
	assert_int_equal(b.verify, BENCH_VERIFY_FULL);
	assert_int_equal(b.repeat, 3);
	assert_string_equal(b.json_path, "out.json");
	assert_string_equal(b.pvnetd_opt, "/x/pvnetd");
	assert_false(b.stream);
	assert_int_equal(PARSE(NULL, "--api", "zerocopy", "-S", "stream", "-m", "persistent", "-s",
			       "128,256", "--steering", "xps"),
			 0);
	assert_true(b.zerocopy);
	assert_true(b.modes_given);
	assert_int_equal(b.nmodes, 1);
	assert_string_equal(b.modes[0], "persistent");
	assert_int_equal(b.nsizes, 2);
	assert_int_equal(b.sizes[1], 256);
	assert_int_equal(b.nsteering, 1);
	assert_int_equal(b.steering[0], BENCH_STEER_XPS);
	assert_true(b.duration == 2.0); /* the stream's default, not the sections' */
	/* -h: the usage, not a run; a bad value: refused. */
	assert_int_equal(PARSE(NULL, "-h"), 1);
	assert_int_equal(PARSE(NULL, "--repeat", "0"), -1);
}

/*
 * With -d (a running pvnetd, its tx mode fixed): one mode unless -m names
 * one, and the placement spread unless asked (pvnetd is not ours to pin).
 */
static void test_run_dir(void **state)
{
	(void)state;
	assert_int_equal(PARSE("/run/pvnet", "--section", "stream"), 0);
	assert_string_equal(b.ext_run_dir, "/run/pvnet");
	assert_int_equal(b.nmodes, 1);
	assert_int_equal(b.placement, BENCH_PLACE_SPREAD);
	assert_false(b.split);
	assert_int_equal(PARSE("/run/pvnet", "-S", "stream", "-m", "map", "--placement", "split"),
			 0);
	assert_int_equal(b.nmodes, 1);
	assert_string_equal(b.modes[0], "map");
	assert_int_equal(b.placement, two_cpus() ? BENCH_PLACE_SPLIT : BENCH_PLACE_SPREAD);
	/* -d as the bench's own option says the same. */
	assert_int_equal(PARSE(NULL, "-d", "/run/other", "-S", "stream"), 0);
	assert_string_equal(b.ext_run_dir, "/run/other");
	assert_int_equal(b.nmodes, 1);
	assert_int_equal(b.placement, BENCH_PLACE_SPREAD);
	/* Without -d: ours, split where two CPUs allow it, unless asked. */
	assert_int_equal(PARSE(NULL, "-S", "stream"), 0);
	assert_int_equal(b.placement, two_cpus() ? BENCH_PLACE_SPLIT : BENCH_PLACE_SPREAD);
	assert_int_equal(PARSE(NULL, "-S", "stream", "--placement", "spread"), 0);
	assert_int_equal(b.placement, BENCH_PLACE_SPREAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sections_defaults),
	    cmocka_unit_test(test_stream_defaults),
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_run_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
