// SPDX-License-Identifier: MIT
/* test_skip.c - a cmocka test this host cannot run, skipped with its reason said */
#include "test_skip.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

void test_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("SKIP: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	skip();
}

void test_need_tool(const char *tool)
{
	char cmd[128];
	const char *deps = getenv("PVNET_TEST_DEPS");

	snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", tool);
	if (system(cmd) == 0)
		return;
	if (deps && !strcmp(deps, "1"))
		fail_msg("%s is not installed, though scripts/install-deps.sh ran", tool);
	test_skip("%s is not installed", tool);
}
