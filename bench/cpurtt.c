// SPDX-License-Identifier: MIT
/* cpurtt.c - how far apart the host has put two of this machine's CPUs, sampled over time */

/*
 * On a virtual machine the two vCPUs are threads of the host, and the host
 * moves them: sometimes onto cores that share a cache (a cache line goes
 * from one vCPU to the other in tens of nanoseconds), sometimes onto cores
 * of different dies (hundreds).  Anything that passes data between CPUs,
 * pvnet and its peers alike, changes speed with it, so bench/compare.sh
 * runs this beside its runs and sorts each run by the placement it ran in.
 *
 * A sample is hostrtt_sample() (tools/pvnet/hostrtt.h, which pvnet bench
 * uses too): two threads, one pinned on each CPU, pass one cache line back
 * and forth, HOSTRTT_BLOCKS blocks of HOSTRTT_ROUND_TRIPS round trips; the
 * sample is the lowest block mean, so that a block in which the scheduler
 * preempted one of them does not count.  Between samples nothing runs: a
 * sample is its 256 round trips, 15-100 us of each CPU at the round trips
 * this machine shows.
 *
 * Output, one line per sample: the realtime clock in seconds and the
 * round trip in nanoseconds, e.g. "1796168002.036781 61".
 *
 * usage: cpurtt [--cpus A,B] [--interval-ms MS] [--count N] [--duration S]
 */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cliarg.h"
#include "hostrtt.h"

/* A sample that takes longer than this: the host did not run one of the CPUs. */
#define SAMPLE_TIMEOUT_MS 10000u

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cpurtt [--cpus A,B] [--interval-ms MS] [--count N] [--duration S]\n"
		   "  Samples the cache-line round trip between CPUs A and B (default 0,1)\n"
		   "  every MS milliseconds (1..10000, default 200), N times (default: no\n"
		   "  limit) or for S seconds (1..86400, default 3600), whichever ends first.\n"
		   "  Prints \"UNIX_TIME ROUND_TRIP_NS\" per sample.\n");
}

/* A whole number in [lo, hi] from @s (cliarg_ulong()), or -1 with a message naming @what. */
static long number(const char *s, const char *what, long lo, long hi)
{
	unsigned long v;

	if (cliarg_ulong(s, (unsigned long)lo, (unsigned long)hi, &v) < 0) {
		fprintf(stderr, "cpurtt: %s: '%s' is not a whole number in %ld..%ld\n", what, s, lo,
			hi);
		return -1;
	}
	return (long)v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"cpus", required_argument, NULL, 'c'},  {"interval-ms", required_argument, NULL, 'i'},
	    {"count", required_argument, NULL, 'n'}, {"duration", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0},
	};
	long cpu_a = 0, cpu_b = 1, interval_ms = 200, count = -1, duration = 3600;
	cpu_set_t allowed;
	uint64_t end;
	int o, rc;

	while ((o = getopt_long(argc, argv, "c:i:n:t:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': {
			char *comma = strchr(optarg, ',');

			if (!comma) {
				fprintf(stderr, "cpurtt: --cpus: '%s' is not A,B\n", optarg);
				return 2;
			}
			*comma = '\0';
			cpu_a = number(optarg, "--cpus", 0, CPU_SETSIZE - 1);
			cpu_b = number(comma + 1, "--cpus", 0, CPU_SETSIZE - 1);
			if (cpu_a < 0 || cpu_b < 0)
				return 2;
			if (cpu_a == cpu_b) {
				fprintf(stderr, "cpurtt: --cpus: two different CPUs are needed\n");
				return 2;
			}
			break;
		}
		case 'i':
			if ((interval_ms = number(optarg, "--interval-ms", 1, 10000)) < 0)
				return 2;
			break;
		case 'n':
			if ((count = number(optarg, "--count", 1, LONG_MAX)) < 0)
				return 2;
			break;
		case 't':
			if ((duration = number(optarg, "--duration", 1, 86400)) < 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cpurtt: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	/* Said plainly here rather than as hostrtt_sample()'s EINVAL. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
		const long cpus[2] = {cpu_a, cpu_b};

		for (unsigned int i = 0; i < 2; i++) {
			if (!CPU_ISSET((int)cpus[i], &allowed)) {
				fprintf(stderr, "cpurtt: CPU %ld: not online, or not ours to use\n",
					cpus[i]);
				return 1;
			}
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	end = now_ns(CLOCK_MONOTONIC) + (uint64_t)duration * 1000000000u;
	for (long n = 0; count < 0 || n < count; n++) {
		struct timespec gap = {.tv_sec = interval_ms / 1000,
				       .tv_nsec = (interval_ms % 1000) * 1000000};
		unsigned int rtt;
		uint64_t wall;

		rc = hostrtt_sample((int)cpu_a, (int)cpu_b, SAMPLE_TIMEOUT_MS, &rtt);
		if (rc < 0) {
			fprintf(stderr, "cpurtt: a sample between CPU %ld and CPU %ld: %s\n", cpu_a,
				cpu_b, strerror(-rc));
			return 1;
		}
		wall = now_ns(CLOCK_REALTIME);
		printf("%llu.%06llu %u\n", (unsigned long long)(wall / 1000000000u),
		       (unsigned long long)(wall % 1000000000u / 1000u), rtt);
		if (now_ns(CLOCK_MONOTONIC) >= end)
			break;
		nanosleep(&gap, NULL);
	}
	return 0;
}
