/* SPDX-License-Identifier: MIT */
/* group_run.h - cmocka's group runner, with a failed group teardown counted as a failure */
#ifndef PVNET_TESTS_COMMON_GROUP_RUN_H
#define PVNET_TESTS_COMMON_GROUP_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/*
 * cmocka 1.1 prints a group teardown that fails ("[  FAILED  ] GROUP
 * TEARDOWN") but leaves it out of what cmocka_run_group_tests() returns, so
 * a program whose tests passed exits 0 even when its teardown found pvnetd
 * exited badly: a sanitizer's report at exit, a crash while shutting down.
 * group_run() is _cmocka_run_group_tests() with that teardown counted.
 *
 * Return: the tests that failed, plus 1 if the group teardown did
 */
int group_run(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
	      CMFixtureFunction teardown);

#define group_run_tests(tests, setup, teardown)                                                    \
	group_run(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
#define group_run_tests_name(name, tests, setup, teardown)                                         \
	group_run(name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif
