// SPDX-License-Identifier: MIT
/* bulkcopy.c - memmove for page-sized pieces: a 32-byte vector loop where AVX2 exists */
#include "common/bulkcopy.h"

bool bulk_copy_avx2;

#if defined(__x86_64__)
__attribute__((constructor)) static void bulk_copy_probe(void)
{
	__builtin_cpu_init();
	bulk_copy_avx2 = __builtin_cpu_supports("avx2");
}

/* Unaligned 32-byte loads and stores that may alias anything. */
typedef uint8_t bulk_vec __attribute__((vector_size(32), aligned(1), may_alias));

/*
 * Four vectors (two cache lines) loaded, then stored, per step; the last
 * partial vector is the final 32 bytes, copied again in part.  @len is at
 * least 32 and the ranges do not overlap.
 */
__attribute__((target("avx2"))) void bulk_copy_avx2_loop(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t i = 0;

	for (; i + 128 <= len; i += 128) {
		bulk_vec a = *(const bulk_vec *)(s + i), b = *(const bulk_vec *)(s + i + 32),
			 c = *(const bulk_vec *)(s + i + 64), e = *(const bulk_vec *)(s + i + 96);
		*(bulk_vec *)(d + i) = a;
		*(bulk_vec *)(d + i + 32) = b;
		*(bulk_vec *)(d + i + 64) = c;
		*(bulk_vec *)(d + i + 96) = e;
	}
	for (; i + 32 <= len; i += 32)
		*(bulk_vec *)(d + i) = *(const bulk_vec *)(s + i);
	if (i < len)
		*(bulk_vec *)(d + len - 32) = *(const bulk_vec *)(s + len - 32);
}
#else
void bulk_copy_avx2_loop(void *dst, const void *src, size_t len)
{
	memmove(dst, src, len);
}
#endif
