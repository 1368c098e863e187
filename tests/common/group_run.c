// SPDX-License-Identifier: MIT
/* group_run.c - cmocka's group runner, with a failed group teardown counted as a failure */
#include "group_run.h"

/* The group running now: cmocka's fixtures take no argument of ours. */
static CMFixtureFunction group_teardown;
static int group_teardown_failed;

static int counted_teardown(void **state)
{
	int rc = group_teardown(state);

	if (rc)
		group_teardown_failed = 1;
	return rc;
}

int group_run(const char *name, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
	      CMFixtureFunction teardown)
{
	int rc;

	group_teardown = teardown;
	group_teardown_failed = 0;
	rc = _cmocka_run_group_tests(name, tests, n, setup, teardown ? counted_teardown : NULL);
	group_teardown = NULL;
	return rc + group_teardown_failed;
}
