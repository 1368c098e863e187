// SPDX-License-Identifier: MIT
/* hostrtt.c - one cache line's round trip between two CPUs (hostrtt.h) */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostrtt.h"

/* Spins between looks at the clock: a look costs about as much as a round trip. */
#define SPINS_PER_CLOCK 1024u

struct probe {
	/* The line: the initiator writes odd values, the responder answers with the next even one. */
	_Alignas(64) _Atomic uint64_t line;
	_Alignas(64) atomic_bool abort;
	pthread_barrier_t start;
	int cpu[2];
	int err[2];
	uint64_t deadline_ns;
	uint64_t best_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wait until the line holds @v; false when the sample was given up. */
static bool await(struct probe *p, uint64_t v)
{
	unsigned int spins = 0;

	while (atomic_load_explicit(&p->line, memory_order_acquire) != v) {
		if (++spins < SPINS_PER_CLOCK)
			continue;
		spins = 0;
		if (atomic_load_explicit(&p->abort, memory_order_relaxed))
			return false;
		if (mono_ns() >= p->deadline_ns) {
			atomic_store_explicit(&p->abort, true, memory_order_relaxed);
			return false;
		}
	}
	return true;
}

/* Pin the calling thread as side @side, then meet the other side; false if either failed. */
static bool meet(struct probe *p, int side)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu[side], &set);
	p->err[side] = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(&p->start);
	return !p->err[0] && !p->err[1];
}

static void *responder(void *arg)
{
	struct probe *p = arg;
	uint64_t v = 1;

	if (!meet(p, 1))
		return NULL;
	for (unsigned int i = 0; i < HOSTRTT_BLOCKS * HOSTRTT_ROUND_TRIPS; i++, v += 2) {
		if (!await(p, v))
			return NULL;
		atomic_store_explicit(&p->line, v + 1, memory_order_release);
	}
	return NULL;
}

static void *initiator(void *arg)
{
	struct probe *p = arg;
	uint64_t v = 0, best = UINT64_MAX;

	if (!meet(p, 0))
		return NULL;
	for (unsigned int b = 0; b < HOSTRTT_BLOCKS; b++) {
		uint64_t t0 = mono_ns(), t;

		for (unsigned int i = 0; i < HOSTRTT_ROUND_TRIPS; i++, v += 2) {
			atomic_store_explicit(&p->line, v + 1, memory_order_release);
			if (!await(p, v + 2))
				return NULL;
		}
		t = (mono_ns() - t0) / HOSTRTT_ROUND_TRIPS;
		if (t < best)
			best = t;
	}
	p->best_ns = best ? best : 1;
	return NULL;
}

int hostrtt_sample(int cpu_a, int cpu_b, unsigned int timeout_ms, unsigned int *ns)
{
	struct probe *p;
	pthread_t th[2];
	int rc;

	if (cpu_a == cpu_b || cpu_a < 0 || cpu_b < 0 || cpu_a >= CPU_SETSIZE ||
	    cpu_b >= CPU_SETSIZE || timeout_ms < 1 || timeout_ms > 60000)
		return -EINVAL;
	p = aligned_alloc(64, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->cpu[0] = cpu_a;
	p->cpu[1] = cpu_b;
	p->deadline_ns = mono_ns() + (uint64_t)timeout_ms * 1000000u;
	rc = pthread_barrier_init(&p->start, NULL, 2);
	if (rc) {
		free(p);
		return -rc;
	}
	rc = pthread_create(&th[1], NULL, responder, p);
	if (!rc) {
		rc = pthread_create(&th[0], NULL, initiator, p);
		if (rc) {
			/* The responder waits at the barrier for a partner: be one, failed. */
			p->err[0] = rc;
			pthread_barrier_wait(&p->start);
		} else {
			pthread_join(th[0], NULL);
		}
		pthread_join(th[1], NULL);
	}
	if (!rc)
		rc = p->err[0] ? p->err[0] : p->err[1];
	rc = rc ? -rc : p->best_ns ? 0 : -ETIMEDOUT;
	if (!rc)
		*ns = p->best_ns > 0xffffffffu ? 0xffffffffu : (unsigned int)p->best_ns;
	pthread_barrier_destroy(&p->start);
	free(p);
	return rc;
}
