// SPDX-License-Identifier: MIT
/* log_capture.c - stderr redirected to a file while a test runs, then read back */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log_capture.h"

void log_capture_start(struct log_capture *c)
{
	char path[] = "/tmp/pvnet-log-XXXXXX";

	c->fd = mkstemp(path);
	assert_true(c->fd >= 0);
	unlink(path);
	c->saved = dup(2);
	assert_true(c->saved >= 0);
	fflush(stderr);
	assert_true(dup2(c->fd, 2) == 2);
}

char *log_capture_end(struct log_capture *c)
{
	struct stat st;
	char *text;
	ssize_t n;

	fflush(stderr);
	assert_true(dup2(c->saved, 2) == 2);
	close(c->saved);
	assert_int_equal(fstat(c->fd, &st), 0);
	text = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(text);
	n = pread(c->fd, text, (size_t)st.st_size, 0);
	assert_true(n == st.st_size);
	close(c->fd);
	/* Passed on, so that nothing is lost from the test's log (a sanitizer's report). */
	fputs(text, stderr);
	return text;
}

unsigned int log_count(const char *text, const char *what)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}
