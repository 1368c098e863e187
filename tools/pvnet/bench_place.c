// SPDX-License-Identifier: MIT
/* bench_place.c - pvnet bench: where pvnetd and the frontend domains run (pure) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench_place.h"

int bench_parse_placement(const char *s, enum bench_placement *out)
{
	if (!strcmp(s, "split"))
		*out = BENCH_PLACE_SPLIT;
	else if (!strcmp(s, "spread"))
		*out = BENCH_PLACE_SPREAD;
	else
		return -EINVAL;
	return 0;
}

const char *bench_placement_name(enum bench_placement p)
{
	return p == BENCH_PLACE_SPLIT ? "split" : "spread";
}

int bench_placement_split(const cpu_set_t *allowed, cpu_set_t *pvnetd, cpu_set_t *guests)
{
	int n = CPU_COUNT(allowed), k = 0;

	CPU_ZERO(pvnetd);
	CPU_ZERO(guests);
	if (n < 2)
		return -EINVAL;
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, allowed))
			continue;
		if (k++ < n / 2)
			CPU_SET(c, pvnetd);
		else
			CPU_SET(c, guests);
	}
	return 0;
}

void bench_cpus_format(const cpu_set_t *s, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		int last = c, w;
		char item[32];

		if (!CPU_ISSET(c, s))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, s))
			last++;
		if (last == c)
			w = snprintf(item, sizeof(item), "%s%d", used ? "," : "", c);
		else
			w = snprintf(item, sizeof(item), "%s%d-%d", used ? "," : "", c, last);
		if (used + (size_t)w + 1 > len)
			return;
		memcpy(buf + used, item, (size_t)w + 1);
		used += (size_t)w;
		c = last;
	}
}

int bench_cpus_first(const cpu_set_t *s)
{
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, s))
			return c;
	return -1;
}
