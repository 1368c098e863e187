// SPDX-License-Identifier: MIT
/* bench_guest.h - pvnet bench: a frontend process's state, shared by its control and data threads */
#ifndef PVNET_TOOLS_BENCH_GUEST_H
#define PVNET_TOOLS_BENCH_GUEST_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pvnet/pvnet.h>

#include "bench.h"

/* Frames per burst: enough to amortise a ring push; the ring has 256 slots. */
#define BURST 32u
/*
 * Slots a sender fills before it submits them: a quarter of the ring.
 * netback copies a submission's frames while the sender fills the next
 * one; a sender that filled the whole ring before submitting left the
 * worker idle meanwhile (64 KiB frames, 16 to a ring: the worker waited a
 * third of the time, and map mode ran at 0.7x of what quarter-ring
 * submissions give).
 */
#define SUBMIT_SLOTS (PVNET_RING_SIZE / 4u)

/* Frames per submission of frames @per slots long: 1..BURST, at most SUBMIT_SLOTS slots. */
static inline unsigned int bench_burst(unsigned int per)
{
	unsigned int b = SUBMIT_SLOTS / per;

	return b < 1 ? 1 : b > BURST ? BURST : b;
}
/* Most fragments of a received frame: 65535 bytes in 4 KiB pages, plus slack for offsets. */
#define MAX_IOV 24u
/* Idle wait of a data thread: short enough to see stop quickly when the ring is dead. */
#define IDLE_POLL_MS 50
/*
 * Before sleeping, a worker looks at its rings for this long, as pvnetd's
 * workers do (pvnetd --poll-us, same default): a stream that pauses for a
 * few microseconds then costs no event channel notification either way.
 */
#define BENCH_POLL_US 200
/* Wait of a steered sender on a full queue: others may consume its event, so poll briefly. */
#define STEER_WAIT_MS 1

struct guest;

struct worker {
	struct guest *g;
	unsigned int q;
	pthread_t th;
	bool created;	/* the thread ran: its snap is meaningful */
	bool started;	/* the thread is joinable */
	bool stats_due; /* steered: joined, final lacks the queue counters */
	/* Owned by the thread. */
	struct bench_counts c;
	uint64_t seq;
	struct bench_flow flows[BENCH_MAX_FLOWS];
	unsigned int snap_seen;
	/* --migrate: index into guest.cpus of the CPU now, and when to move on. */
	unsigned int cpu_i;
	uint64_t hop_ns;
	/*
	 * Published by the thread: snap for main once snap_ack equals the
	 * generation main asked for (acquire), final once done is set (acquire).
	 * snap is written only for a new generation, which main asks for only
	 * after it has read the previous one; final is written once.
	 */
	struct bench_counts snap, final;
	char error[160];
	_Atomic unsigned int snap_ack;
	_Atomic bool done;
};

struct guest {
	const struct bench_guest_cfg *cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	unsigned int nq;
	unsigned int nflows;
	uint8_t mac[6], peer[6];
	bool steered; /* sender with a --steering policy: pvnet_send_flow() */
	/* --migrate: the online CPUs of the process's affinity mask. */
	unsigned int ncpus;
	int cpus[CPU_SETSIZE];
	struct bench_tmpl tmpl[BENCH_MAX_FLOWS];
	/*
	 * PVNET_BENCH_FAULT (tests): every fault_every-th frame sent damaged, or
	 * reordered; each receiver thread failing once it has received
	 * fail_after frames; or sleeping slow_us microseconds after each burst
	 * it took.  0: not asked for.
	 */
	unsigned int fault_every;
	bool fault_reorder;
	unsigned int fail_after;
	unsigned int slow_us;
	int wake_fd;
	_Atomic bool stop;
	_Atomic unsigned int snap_gen;
	struct worker w[PVNET_MAX_QUEUES];
};

/* bench_guest_data.c: the data threads (see bench_guest.c, Theory of Operation) */
uint64_t bench_guest_mono_ns(void);
void bench_guest_queue_stats(struct guest *g, unsigned int q, struct bench_counts *c);
void *bench_guest_sender_zerocopy(void *arg);
void *bench_guest_sender_copy(void *arg);
void *bench_guest_receiver(void *arg);

#endif /* PVNET_TOOLS_BENCH_GUEST_H */
