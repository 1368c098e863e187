// SPDX-License-Identifier: MIT
/* log.c - levelled logging to stderr, with a rate limit for peer-caused events */
#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"

/* Read by every thread that logs; set at start-up, and by tests while threads run. */
static _Atomic int log_threshold = LOG_INFO;

static const char *const log_names[] = {"err", "warn", "info", "debug"};

void log_set_level(enum log_level level)
{
	atomic_store_explicit(&log_threshold, (int)level, memory_order_relaxed);
}

bool log_enabled(enum log_level level)
{
	return (int)level <= atomic_load_explicit(&log_threshold, memory_order_relaxed);
}

int log_level_parse(const char *s)
{
	for (unsigned int i = 0; i < sizeof(log_names) / sizeof(log_names[0]); i++)
		if (!strcmp(s, log_names[i]))
			return (int)i;
	return -EINVAL;
}

__attribute__((format(printf, 2, 0))) static void log_vmsg(enum log_level level, const char *fmt,
							   va_list ap)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	/* Local time of day, as tcpdump prints a capture's frames: the two line up. */
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %-5s ", tm.tm_hour, tm.tm_min,
		     tm.tm_sec, ts.tv_nsec / 1000000, log_names[level]);
	if (n < 0)
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* Cut if need be, but always a whole line: the next one must not be glued on. */
	n = (int)strlen(line);
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n] = '\n';
	line[n + 1] = '\0';
	/* One fputs per line so lines from several threads do not interleave. */
	fputs(line, stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

bool log_ratelimit_ok(struct log_ratelimit *rl)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	if (now - rl->window_start >= rl->interval_ns) {
		if (rl->suppressed)
			log_msg(LOG_WARN, "%s%s%u messages suppressed", rl->name,
				rl->name[0] ? ": " : "", rl->suppressed);
		rl->window_start = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed < rl->burst) {
		rl->printed++;
		return true;
	}
	rl->suppressed++;
	return false;
}

void log_ratelimit_name(struct log_ratelimit *rl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rl->name, sizeof(rl->name), fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}
