/* SPDX-License-Identifier: MIT */
/* log.h - levelled logging to stderr, with a rate limit for peer-caused events */
#ifndef PVNET_COMMON_LOG_H
#define PVNET_COMMON_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level { LOG_ERR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/**
 * log_set_level() - set the most verbose level that is printed
 * @level: one of enum log_level
 */
void log_set_level(enum log_level level);

/**
 * log_level_parse() - turn "err", "warn", "info" or "debug" into a level
 * @s: the name
 *
 * Return: the level, or -EINVAL for an unknown name
 */
int log_level_parse(const char *s);

/**
 * log_enabled() - whether a message at @level would be printed
 * @level: severity
 */
bool log_enabled(enum log_level level);

/**
 * log_msg() - print one line to stderr if @level is enabled
 * @level: severity
 * @fmt: printf format, no trailing newline
 */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * struct log_ratelimit - state for logging events a peer can trigger at will
 * @interval_ns: length of one window
 * @burst: messages allowed per window
 * @window_start: start of the current window (CLOCK_MONOTONIC ns)
 * @printed: messages printed in the current window
 * @suppressed: messages dropped since the last one printed
 * @name: what the messages are about, named in the count of those
 *	suppressed (log_ratelimit_name(); empty: unnamed)
 *
 * A guest that sends garbage must not be able to flood the log, as in
 * Linux's net_ratelimit().  Not thread safe: one per thread or per object.
 * One per guest (netback's per vif, the store's per domain), so that one
 * guest using up its budget cannot hide another guest's messages.
 */
struct log_ratelimit {
	uint64_t interval_ns;
	uint32_t burst;
	uint64_t window_start;
	uint32_t printed;
	uint32_t suppressed;
	char name[32];
};

#define LOG_RATELIMIT_INIT                                                                         \
	{                                                                                          \
		.interval_ns = 5000000000ULL, .burst = 10                                          \
	}

/**
 * log_ratelimit_ok() - may one more message be printed now?
 * @rl: the rate limit state
 *
 * Return: true if the caller should print; false if it is suppressed
 */
bool log_ratelimit_ok(struct log_ratelimit *rl);

/**
 * log_ratelimit_name() - name what @rl's messages are about
 * @rl: the rate limit state
 * @fmt: printf format of the name (cut to fit)
 */
void log_ratelimit_name(struct log_ratelimit *rl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * Log at @level only if @rl allows it.  A message of a level not printed
 * takes nothing from @rl: debug lines must not use up an error's budget.
 */
#define log_ratelimited(rl, level, ...)                                                            \
	do {                                                                                       \
		if (log_enabled(level) && log_ratelimit_ok(rl))                                    \
			log_msg(level, __VA_ARGS__);                                               \
	} while (0)

/**
 * die() - print an error and exit(1); for start-up errors only
 * @fmt: printf format
 */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* PVNET_COMMON_LOG_H */
