/* SPDX-License-Identifier: MIT */
/* itest.h - a real pvnetd for the C integration tests: start, stop, ask for status */
#ifndef PVNET_TESTS_ITEST_H
#define PVNET_TESTS_ITEST_H

#include <limits.h>
#include <stdarg.h>
#include <sys/types.h>

#include <jansson.h>

/*
 * One pvnetd per test file, in a fresh run directory under /tmp; its
 * stderr goes to RUN_DIR.log, which is kept when pvnetd exits badly.
 * pvnetd's view comes from its control socket, as `pvnet status` reads it.
 */
struct itest {
	char run_dir[PATH_MAX / 2];
	pid_t pid;
};

/* Start @pvnetd (extra arguments NULL-terminated) and wait for its control socket; 0 or -1. */
int itest_start(struct itest *t, const char *pvnetd, const char *name, ...);

/* SIGTERM, wait, remove the run directory; 0 if pvnetd exited 0, else -1 (log kept). */
int itest_stop(struct itest *t);

/* A connected control socket (the test fails if pvnetd does not answer). */
int itest_ctl_open(const struct itest *t);

/* pvnetd's "status" reply; the caller json_decref()s it. */
json_t *itest_status(const struct itest *t);

/* Member @b of object @a of the status reply. */
long long itest_status_get(const struct itest *t, const char *a, const char *b);

/*
 * Run `@pvnet -d @run_dir ARGS...` (@ap: at most 4, then NULL) as a user
 * does, stdout into @out (a file it creates, or /dev/full) and stderr into
 * @err: its exit status, or -1 if it did not exit.
 */
int itest_run_pvnetv(const char *pvnet, const char *run_dir, const char *out, const char *err,
		     va_list ap);

#endif /* PVNET_TESTS_ITEST_H */
