/* SPDX-License-Identifier: MIT */
/* test_skip.h - a cmocka test this host cannot run, skipped with its reason said */
#ifndef PVNET_TESTS_COMMON_TEST_SKIP_H
#define PVNET_TESTS_COMMON_TEST_SKIP_H

/*
 * Meson sees a program one of whose tests was skipped as passed, so a skip
 * says why on a line of its own, "SKIP: <reason>", which scripts/test.sh
 * lists after the run.  A skip is for what this host lacks (IPv6, a second
 * CPU, root); a tool scripts/install-deps.sh installs is no reason under
 * scripts/test.sh (test_need_tool()).
 */

/* test_skip() - say why, then skip the running test (cmocka's skip()) */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * test_need_tool() - go on only if the command @tool is installed
 *
 * Without it the running test is skipped, or, under scripts/test.sh
 * (PVNET_TEST_DEPS=1: scripts/install-deps.sh ran), it fails: there a
 * missing tool is a package that script does not install.
 */
void test_need_tool(const char *tool);

#endif
