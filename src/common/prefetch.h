/* SPDX-License-Identifier: MIT */
/* prefetch.h - cache prefetch hints for the lines of another CPU's frames */
#ifndef PVNET_COMMON_PREFETCH_H
#define PVNET_COMMON_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The line size prefetch_range() steps by (x86-64, and most others). */
#define PREFETCH_LINE 64u

/**
 * prefetch_range() - start fetching every cache line of [@p, @p + @len)
 * @p: the first byte (a hint: nothing faults)
 * @len: bytes
 * @write: the bytes will be written: fetch the lines owned
 */
static inline void prefetch_range(const void *p, size_t len, bool write)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(PREFETCH_LINE - 1), end = (uintptr_t)p + len;

	for (; a < end; a += PREFETCH_LINE) {
		if (write)
			prefetch_write((const void *)a);
		else
			prefetch_read((const void *)a);
	}
}

/**
 * prefetch_ring() - prefetch the cache lines of slots [first, first + n) of a ring
 * @ring: the ring's first slot (a shared ring's sring->ring)
 * @slot_size: bytes per slot
 * @size: slots in the ring, a power of two
 * @first: the first slot's index (free running: taken modulo @size)
 * @n: how many slots (no more than @size are fetched)
 * @write: the slots will be written (responses over requests): fetch them owned
 *
 * The slots a batch reads were written on the peer's CPU, and the ones it
 * answers in were read there: a line of them is a miss served by another
 * core.  Asking for all of a batch's lines first puts those misses in
 * flight together.
 */
static inline void prefetch_ring(const void *ring, size_t slot_size, unsigned int size,
				 unsigned int first, unsigned int n, bool write)
{
	if (n > size)
		n = size;
	while (n) {
		unsigned int i = first & (size - 1), run = size - i < n ? size - i : n;

		prefetch_range((const uint8_t *)ring + (size_t)i * slot_size,
			       (size_t)run * slot_size, write);
		first += run;
		n -= run;
	}
}

#endif /* PVNET_COMMON_PREFETCH_H */
