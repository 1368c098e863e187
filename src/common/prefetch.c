// SPDX-License-Identifier: MIT
/* prefetch.c - whether this CPU has PREFETCHW (see common/prefetch.h) */
#include "common/prefetch.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

bool prefetchw_ok;

__attribute__((constructor)) static void prefetch_probe(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	/* CPUID 0x80000001, ECX bit 8: 3DNowPrefetch, i.e. PREFETCH and PREFETCHW. */
	if (__get_cpuid(0x80000001u, &a, &b, &c, &d))
		prefetchw_ok = (c & bit_PRFCHW) != 0;
#endif
}
