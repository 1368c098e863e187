// SPDX-License-Identifier: MIT
/* cliarg.c - pvnet's command line: checked numeric arguments */
#include <errno.h>
#include <stdlib.h>

#include "cliarg.h"

int cliarg_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}
