/* SPDX-License-Identifier: MIT */
/* log_capture.h - what the code under test logs, read back: stderr redirected to a file */
#ifndef PVNET_TESTS_COMMON_LOG_CAPTURE_H
#define PVNET_TESTS_COMMON_LOG_CAPTURE_H

/**
 * struct log_capture - stderr while a capture runs
 * @fd: the file stderr goes to (unlinked at once)
 * @saved: the stderr before
 */
struct log_capture {
	int fd;
	int saved;
};

/* Send stderr (fd 2) to a new file until log_capture_end(); asserts on failure. */
void log_capture_start(struct log_capture *c);

/*
 * Put stderr back and return what was written meanwhile, NUL-terminated
 * (free() it); it is also written to stderr, so that the test's log keeps
 * it (a sanitizer's report, say).  Asserts on failure.
 */
char *log_capture_end(struct log_capture *c);

/* How many times @what occurs in @text (not overlapping). */
unsigned int log_count(const char *text, const char *what);

#endif /* PVNET_TESTS_COMMON_LOG_CAPTURE_H */
