/* SPDX-License-Identifier: MIT */
/* prefetch.h - cache prefetch hints for the lines of another CPU's frames */
#ifndef PVNET_COMMON_PREFETCH_H
#define PVNET_COMMON_PREFETCH_H

#include <stdbool.h>

/*
 * Frames cross CPUs: the sender writes a line on one, netback copies it on
 * another, the receiver reads it on a third.  Each such line is a cache
 * miss served by another core, and issued one at a time they serialise.
 * A batch's prefetches put its misses in flight together.
 *
 * For a line about to be written, a plain prefetch (PREFETCHT0, what
 * __builtin_prefetch(p, 1) emits for the baseline x86-64 target) fetches it
 * shared, and the store still waits for the other core to give it up;
 * PREFETCHW fetches it owned.  It exists on every AMD64 CPU with the
 * 3DNowPrefetch CPUID flag (AMD since K8, Intel since Broadwell), which
 * prefetch.c reads once at start-up; elsewhere the plain hint is used.
 */
extern bool prefetchw_ok;

/**
 * prefetch_read() - start fetching the cache line at @p for reading
 * @p: any address (a hint: nothing faults)
 */
static inline void prefetch_read(const void *p)
{
	__builtin_prefetch(p, 0);
}

/**
 * prefetch_write() - start fetching the cache line at @p, owned, for writing
 * @p: any address (a hint: nothing faults)
 */
static inline void prefetch_write(const void *p)
{
#if defined(__x86_64__)
	if (prefetchw_ok) {
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
		return;
	}
#endif
	__builtin_prefetch(p, 1);
}

#endif /* PVNET_COMMON_PREFETCH_H */
