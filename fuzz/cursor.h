/* SPDX-License-Identifier: MIT */
/* cursor.h - the stateful harnesses' input, read front to back */
#ifndef PVNET_FUZZ_CURSOR_H
#define PVNET_FUZZ_CURSOR_H

#include <stddef.h>
#include <stdint.h>

/* What is left of the input; every read past its end gives zeros. */
struct cur {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t get8(struct cur *c)
{
	if (c->n == 0)
		return 0;
	c->n--;
	return *c->p++;
}

/* Little-endian; the bytes are read in order (not as one expression's operands, whose order C leaves open). */
static inline uint16_t get16(struct cur *c)
{
	uint16_t lo = get8(c);

	return (uint16_t)(lo | get8(c) << 8);
}

static inline uint32_t get32(struct cur *c)
{
	uint32_t lo = get16(c);

	return lo | (uint32_t)get16(c) << 16;
}

#endif /* PVNET_FUZZ_CURSOR_H */
