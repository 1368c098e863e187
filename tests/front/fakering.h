/* SPDX-License-Identifier: MIT */
/* fakering.h - netfront tests: netback's ring side, played on the frontend's granted pages */
#ifndef PVNET_TESTS_FRONT_FAKERING_H
#define PVNET_TESTS_FRONT_FAKERING_H

#include <stdbool.h>
#include <stdint.h>

#include "front/front.h"

/*
 * The test finds the rings and buffers through the grant references the
 * frontend published, checks each grant (domain 0, read-only for TX
 * buffers, writable for RX buffers and rings), copies every request once
 * and answers as Linux netback does.  It runs in the thread that uses the
 * frontend queue, so the ring is never touched by two threads at once.
 */

/* netback's view of one queue. */
struct be {
	struct pvnet_domain *dom;
	netif_tx_back_ring_t tx;
	netif_rx_back_ring_t rx;
	/* Where be_rx_frame() writes in each page: 0 (be_attach_rings()), or a headroom. */
	uint16_t rx_offset;
};

/* One frame as the fake backend received it. */
struct be_frame {
	uint8_t data[PVNET_MAX_FRAME];
	uint32_t len;
	uint16_t flags;
	unsigned int slots;
	struct netif_extra_info gso;
	uint16_t first_offset;
};

void be_attach_rings(struct be *b, struct pvnet_domain *dom, uint32_t tx_ref, uint32_t rx_ref);
bool be_tx_frame(struct be *b, struct be_frame *f, int16_t status);
void be_tx_push(struct be *b);
int be_rx_frame(struct be *b, const uint8_t *data, uint32_t len, uint16_t flags,
		const struct netif_extra_info *extra);
void be_rx_push(struct be *b);

#endif /* PVNET_TESTS_FRONT_FAKERING_H */
