// SPDX-License-Identifier: MIT
// rx.h - guest RX inside netback: what rx.c (the queue) and rx_deliver.c (the ring) share

#ifndef PVNET_BACK_RX_H
#define PVNET_BACK_RX_H

#include "back/internal.h"

/**
 * struct back_rx_held - a frame copied out of its sender's memory
 * @len: frame length
 * @flags: SW_PKT_* offload flags
 * @gso_type: enum sw_gso_type
 * @gso_size: MSS
 * @data: the frame
 */
struct back_rx_held {
	uint32_t len;
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
	uint8_t data[];
};

/* One piece of a frame's bytes. */
struct back_rx_piece {
	const uint8_t *base;
	uint32_t len;
};

/**
 * back_rx_pieces() - a queued frame's bytes, as pieces in order
 * @it: the queued item (a switch packet, or a frame copied out of its sender)
 * @pc: receives up to 1 + SW_PKT_MAX_FRAGS pieces
 *
 * Return: the number of pieces, 0 if the packet's lengths do not add up
 */
unsigned int back_rx_pieces(const struct back_mpsc_item *it, struct back_rx_piece *pc);

/**
 * back_rx_item_len() - a queued frame's length in bytes
 * @it: the queued item
 *
 * Return: the length
 */
uint32_t back_rx_item_len(const struct back_mpsc_item *it);

/**
 * back_rx_item_release() - give a queued frame back (to its sender or the hold pool)
 * @q: the queue it was queued on
 * @it: the item, emptied
 *
 * The caller uncharges its bytes.
 */
void back_rx_item_release(struct back_queue *q, struct back_mpsc_item *it);

/**
 * back_rx_avail() - RX requests the guest has posted and we have not taken
 * @q: the queue
 * @seq: load req_prod sequentially consistent (after storing req_event)
 *
 * A producer more than a ring ahead, or behind what a batch consumed, is
 * fatal for the vif.
 *
 * Return: how many, or -1 (the vif is broken)
 */
int back_rx_avail(struct back_queue *q, bool seq);

/**
 * back_rx_deliver() - steps 3 and 4 of rx.c: @items into the guest's posted buffers
 * @q: the queue; the caller holds rx_lock
 * @items: the frames, in order
 * @n: how many
 * @direct: the caller is xmit() delivering itself (counted as rx_direct)
 * @queued: @items are the queue's first, in its cells (not a sender's own)
 *
 * Consumes exactly the first k items, 0 <= k <= @n, one batch at most:
 * each delivered, or dropped as undeliverable.  Item k (if k < @n) did not
 * fit, and the ring's req_event then asks the guest to notify once it has
 * posted enough; or, @queued only, it is a frame segmented in software of
 * which some segments went (@q->sw_sent), the rest in later calls: it
 * stays first, and whoever drops it instead sets @q->sw_sent to 0.
 *
 * Return: k
 */
unsigned int back_rx_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			     unsigned int n, bool direct, bool queued);

#endif /* PVNET_BACK_RX_H */
