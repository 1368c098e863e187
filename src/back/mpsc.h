/* SPDX-License-Identifier: MIT */
/* mpsc.h - bounded lock-free multi-producer single-consumer ring of fixed-size items */
#ifndef PVNET_BACK_MPSC_H
#define PVNET_BACK_MPSC_H

/*
 * Theory of Operation
 *
 * Dmitry Vyukov's bounded queue, with a single consumer.  Each cell has a
 * sequence number: a producer claims position pos when the cell's sequence
 * equals pos (compare-and-swap on the shared tail), writes the item, then
 * publishes it by storing pos + 1.  The consumer owns every cell from its
 * head while the sequence equals position + 1: it may read and even
 * rewrite those items in place (rx.c copies held payloads out that way)
 * before releasing the cell with sequence position + capacity.
 *
 * Producers never wait: a full ring refuses the item.  The consumer never
 * waits either.  The publish store and the consumer's emptiness check are
 * sequentially consistent so the "sleeping" handshake of worker.c works:
 * either the producer sees the worker asleep and wakes it, or the worker
 * sees the item before it sleeps.
 *
 * Item type: struct back_mpsc_item (a pointer and a 64-bit word), enough for
 * both users (RX input: packet + enqueue time; completion: pending index).
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/**
 * struct back_mpsc_item - one queued item
 * @ptr: a packet, or NULL
 * @u64: the enqueue time, or an index
 * @aux: a private copy of a held payload (RX input only), else NULL
 * @hash: RX input: the frame's Toeplitz hash, for the guest's HASH extra
 * @hash_type: RX input: its type bit number, or BACK_HASH_TYPE_NONE (0xff)
 */
struct back_mpsc_item {
	void *ptr;
	uint64_t u64;
	void *aux;
	uint32_t hash;
	uint8_t hash_type;
};

struct back_mpsc_cell {
	_Atomic uint64_t seq;
	struct back_mpsc_item item;
};

/**
 * struct back_mpsc - the ring
 * @cells: @mask + 1 cells
 * @mask: capacity - 1 (capacity is a power of two)
 * @tail: next position producers claim (shared, own cache line)
 * @head: next position the consumer reads: written by one consumer at a
 *	time (the queue's worker or a forwarding thread, under the queue's
 *	rx_lock), read without the lock by the worker's has-input check, a
 *	hint that back_mpsc_peek() makes safe (a stale head finds no item)
 */
struct back_mpsc {
	struct back_mpsc_cell *cells;
	uint64_t mask;
	_Alignas(64) _Atomic uint64_t tail;
	_Alignas(64) _Atomic uint64_t head;
};

/* Create a ring of @cap items (a power of two); 0 or -ENOMEM/-EINVAL. */
static inline int back_mpsc_init(struct back_mpsc *q, uint32_t cap)
{
	if (cap == 0 || (cap & (cap - 1)))
		return -EINVAL;
	q->cells = calloc(cap, sizeof(*q->cells));
	if (!q->cells)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		atomic_init(&q->cells[i].seq, i);
	q->mask = cap - 1;
	atomic_init(&q->tail, 0);
	atomic_init(&q->head, 0);
	return 0;
}

static inline void back_mpsc_fini(struct back_mpsc *q)
{
	free(q->cells);
	q->cells = NULL;
}

/* Producer: enqueue @it; false when the ring is full.  Any thread. */
static inline bool back_mpsc_push(struct back_mpsc *q, const struct back_mpsc_item *it)
{
	uint64_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);

	for (;;) {
		struct back_mpsc_cell *c = &q->cells[pos & q->mask];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);

		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed)) {
				c->item = *it;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_seq_cst);
				return true;
			}
		} else if (dif < 0) {
			return false;
		} else {
			pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
		}
	}
}

/* The consumer's next position. */
static inline uint64_t back_mpsc_head(const struct back_mpsc *q)
{
	return atomic_load_explicit(&q->head, memory_order_relaxed);
}

/* Consumer: the item @i positions after the head, or NULL if not published. */
static inline struct back_mpsc_item *back_mpsc_peek(struct back_mpsc *q, uint64_t i)
{
	uint64_t pos = back_mpsc_head(q) + i;
	struct back_mpsc_cell *c = &q->cells[pos & q->mask];

	if (i > q->mask || atomic_load_explicit(&c->seq, memory_order_seq_cst) != pos + 1)
		return NULL;
	return &c->item;
}

/* Consumer: release the head item (after back_mpsc_peek(q, 0) returned it). */
static inline void back_mpsc_pop(struct back_mpsc *q)
{
	uint64_t head = back_mpsc_head(q);
	struct back_mpsc_cell *c = &q->cells[head & q->mask];

	atomic_store_explicit(&c->seq, head + q->mask + 1, memory_order_release);
	atomic_store_explicit(&q->head, head + 1, memory_order_relaxed);
}

#endif /* PVNET_BACK_MPSC_H */
