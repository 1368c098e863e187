// SPDX-License-Identifier: MIT
/* epoch.c - grace periods, so a port can be freed while other ports forward */

/*
 * Theory of Operation
 *
 * This is userspace RCU's "memory barrier" flavour reduced to what the
 * switch needs.  Every thread that calls sw_forward() gets, on its first
 * call, a slot number 0..SW_MAX_THREADS-1 that is the same for every switch
 * (a process-wide bitmap; the slot is given back when the thread exits,
 * through a pthread key destructor).  Each switch has one cache line per
 * slot holding that thread's epoch:
 *
 *   reader (data path)                    writer (sw_port_del)
 *   e = load(sw->epoch)                   ports[n] = NULL; flush FDB entries
 *   store(slot, e)                        target = ++sw->epoch
 *   ... load ports[], FDB, call xmit ...  for each slot:
 *   store(slot, 0)   (release)              wait while 0 < slot < target
 *                                         free the port
 *
 * All of these, and the data path's loads of ports[] and FDB words, are
 * seq_cst: in the single total order either the writer sees the reader's
 * slot (and waits for it) or the reader's loads come after the writer's
 * unpublishing (and cannot find the port).  A reader that enters again
 * stores the new epoch, so a busy reader never starves the writer.  The
 * cost per sw_forward() call is two stores to a line only this thread
 * writes; seq_cst loads compile to the same instructions as acquire loads
 * on x86-64 and AArch64.
 *
 * Nesting (an xmit() that forwards into the same switch) is allowed: the
 * inner call sees its slot busy and leaves it alone.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "common/log.h"
#include "switch/internal.h"

#define SLOT_WORDS (SW_MAX_THREADS / 64)

static _Atomic uint64_t slot_map[SLOT_WORDS];
static _Thread_local int slot_mine = -1;
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static int slot_key_err;
static atomic_bool slot_warned;

static void slot_release(void *v)
{
	unsigned int s = (unsigned int)((uintptr_t)v - 1);

	atomic_fetch_and(&slot_map[s / 64], ~(1ULL << (s % 64)));
}

static void slot_key_create(void)
{
	slot_key_err = pthread_key_create(&slot_key, slot_release);
}

/* This thread's slot, allocated on first use; -EAGAIN when none is free. */
static int slot_get(void)
{
	if (slot_mine >= 0)
		return slot_mine;
	pthread_once(&slot_once, slot_key_create);
	if (slot_key_err)
		return -EAGAIN;
	for (unsigned int w = 0; w < SLOT_WORDS; w++) {
		uint64_t v = atomic_load(&slot_map[w]);

		while (~v) {
			unsigned int bit = (unsigned int)__builtin_ctzll(~v);

			if (!atomic_compare_exchange_weak(&slot_map[w], &v, v | 1ULL << bit))
				continue;
			slot_mine = (int)(w * 64 + bit);
			if (pthread_setspecific(slot_key, (void *)(uintptr_t)(slot_mine + 1))) {
				slot_release((void *)(uintptr_t)(slot_mine + 1));
				slot_mine = -1;
				return -EAGAIN;
			}
			return slot_mine;
		}
	}
	if (!atomic_exchange(&slot_warned, true))
		warn("switch: more than %u forwarding threads, frames dropped", SW_MAX_THREADS);
	return -EAGAIN;
}

/**
 * sw_epoch_enter() - start a read-side section on this thread
 * @sw: the switch
 *
 * Return: a token for sw_epoch_exit() (the slot, or SW_EPOCH_NESTED), or
 * -EAGAIN when every slot is taken (the caller must not touch ports)
 */
int sw_epoch_enter(struct sw *sw)
{
	int s = slot_get();

	if (s < 0)
		return s;
	if (atomic_load_explicit(&sw->readers[s].epoch, memory_order_relaxed))
		return SW_EPOCH_NESTED;
	atomic_store(&sw->readers[s].epoch, atomic_load(&sw->epoch));
	return s;
}

/**
 * sw_epoch_exit() - end the section sw_epoch_enter() started
 * @sw: the switch
 * @token: its return value (not negative)
 */
void sw_epoch_exit(struct sw *sw, int token)
{
	if (token != SW_EPOCH_NESTED)
		atomic_store_explicit(&sw->readers[token].epoch, 0, memory_order_release);
}

/**
 * sw_epoch_is_inside() - is this thread inside a section of @sw?
 * @sw: the switch
 *
 * Return: true if so (a grace period would then wait for itself)
 */
bool sw_epoch_is_inside(const struct sw *sw)
{
	return slot_mine >= 0 &&
	       atomic_load_explicit(&sw->readers[slot_mine].epoch, memory_order_relaxed);
}

/**
 * sw_epoch_synchronize() - wait until every section that began earlier ended
 * @sw: the switch
 *
 * Call after unpublishing something and before freeing it; not from inside
 * a section.  Sections are short (one sw_forward() call, xmit() does not
 * block), so yielding is enough.
 */
void sw_epoch_synchronize(struct sw *sw)
{
	uint64_t target = atomic_fetch_add(&sw->epoch, 1) + 1;

	for (unsigned int i = 0; i < SW_MAX_THREADS; i++) {
		uint64_t e;

		while ((e = atomic_load(&sw->readers[i].epoch)) != 0 && e < target)
			sched_yield();
	}
}
