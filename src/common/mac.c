// SPDX-License-Identifier: MIT
/* mac.c - Ethernet addresses written as text */
#include <errno.h>

#include "common/mac.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	for (int i = 0; i < 6; i++, s += 3) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		/* s[1] is read only after s[0] was a digit, s[2] after s[1]: never past the NUL */
		if (lo < 0 || s[2] != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		m[i] = (uint8_t)(hi << 4 | lo);
	}
	for (int i = 0; i < 6; i++)
		mac[i] = m[i];
	return 0;
}
