/* SPDX-License-Identifier: MIT */
/* hostrtt.h - how far apart the host has put two CPUs: one cache line's round trip between them */
#ifndef PVNET_TOOLS_HOSTRTT_H
#define PVNET_TOOLS_HOSTRTT_H

/*
 * On a virtual machine each vCPU is a thread of the host, which moves it
 * between its cores: two vCPUs on cores that share a cache pass a line in
 * tens of nanoseconds, on different dies in hundreds, and everything that
 * moves data between CPUs changes speed with it (docs/benchmarks.md,
 * "Where the host puts the vCPUs").  bench/cpurtt samples this over time;
 * pvnet bench takes a sample before and after each run.
 */

/* Round trips per sample: HOSTRTT_BLOCKS blocks of HOSTRTT_ROUND_TRIPS. */
#define HOSTRTT_BLOCKS	    8u
#define HOSTRTT_ROUND_TRIPS 32u

/**
 * hostrtt_sample() - one sample of the cache-line round trip between two CPUs
 * @cpu_a: the CPU of the thread that starts each round trip
 * @cpu_b: the CPU of the thread that answers, another one
 * @timeout_ms: give up after this long (a CPU the host does not run, say), 1..60000
 * @ns: the round trip in nanoseconds, at least 1: the lowest block mean, so
 *	that a block in which the scheduler preempted either thread does not count
 *
 * Two threads, one pinned on each CPU, pass one cache line back and forth
 * (15-100 us of each CPU at the round trips seen here); the caller's own
 * affinity is not touched.  Costs no memory after it returns.
 *
 * Return: 0; -EINVAL for equal CPUs, a CPU number outside the kernel's
 * set or a timeout out of range; the error pinning a thread gave (-EINVAL
 * for a CPU that is not online or not allowed); -ETIMEDOUT; -ENOMEM or
 * another pthread error
 */
int hostrtt_sample(int cpu_a, int cpu_b, unsigned int timeout_ms, unsigned int *ns);

#endif
