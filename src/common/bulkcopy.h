/* SPDX-License-Identifier: MIT */
/* bulkcopy.h - memmove for the page-sized pieces of frames the data path copies */
#ifndef PVNET_COMMON_BULKCOPY_H
#define PVNET_COMMON_BULKCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * A grant copy moves a frame's payload in pieces of up to a page, from the
 * sender's granted page into the buffer the receiver posted.  glibc's memmove
 * hands such copies to REP MOVSB from about 2 KiB on CPUs with fast short
 * REP MOVSB (as the Intel Xeon of 2026-12-06), and uses its own vector code
 * below that.  There a plain loop of 32-byte AVX2 loads and stores did
 * better for every piece of 512 bytes and more: with it in the grant copy,
 * netback's stream went 1.05-1.06x at 9000 and 65535 bytes (4 KiB pieces)
 * and at 1514 bytes (1386-byte pieces, where it replaces glibc's vector
 * code; measured, not explained), docs/hv.md.  Below BULK_COPY_MIN bytes,
 * and wherever AVX2 is missing or the two ranges overlap, bulk_copy() is
 * memmove.
 */
#define BULK_COPY_MIN 512

/* Whether this CPU has AVX2 (read once at start-up, as prefetchw_ok). */
extern bool bulk_copy_avx2;

/* The loop itself: only where bulk_copy_avx2, for @len >= 32 and no overlap. */
void bulk_copy_avx2_loop(void *dst, const void *src, size_t len);

/**
 * bulk_copy() - memmove(@dst, @src, @len), faster for pieces of a page
 * @dst: destination
 * @src: source; may overlap @dst (then memmove does the copy).  Overlap is
 *	judged on these addresses: two mappings of one page (a guest naming
 *	one frame on both sides of a grant copy) count as apart, and what the
 *	page then holds is the guest's problem, as with memmove (which sees
 *	the same two addresses) or Xen
 * @len: bytes
 *
 * Either side may be memory another process writes meanwhile (a guest's
 * granted page): the bytes copied are then some mix of old and new, as
 * with memmove, and nothing is read back.
 */
static inline void bulk_copy(void *dst, const void *src, size_t len)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	if (bulk_copy_avx2 && len >= BULK_COPY_MIN && (d + len <= s || s + len <= d))
		bulk_copy_avx2_loop(dst, src, len);
	else
		memmove(dst, src, len);
}

#endif
