// SPDX-License-Identifier: MIT
// stats.c - netback's per-queue counters as a table of name + offset, ethtool style

/*
 * Theory of Operation
 *
 * Counters live in struct back_queue_stats, one per queue, inside the vif
 * (so they outlive the queue until the next connect).  The queue's worker
 * writes them (relaxed load + store, one writer); rx_queue_full is added to
 * atomically by whichever thread runs xmit().  Readers on any thread load
 * them relaxed: a snapshot may be a batch old.
 *
 * Names follow the guest's rings ("tx" = guest TX ring, "rx" = guest RX
 * ring); tx_zerocopy_* and tx_frag_overflow mean what they mean in Linux
 * netback's ethtool statistics.
 */

#include <errno.h>
#include <string.h>

#include "back/internal.h"

#define STAT(n)                                                                                    \
	{                                                                                          \
#n, offsetof(struct back_queue_stats, n)                                           \
	}

static const struct back_stat_desc back_stats[] = {
    STAT(tx_packets),		 /* guest frames handed to the switch */
    STAT(tx_bytes),		 /* their bytes */
    STAT(tx_dropped),		 /* guest frames dropped: sum of the tx reasons below */
    STAT(tx_frag_overflow),	 /* 20 or 21 slots in one packet */
    STAT(tx_bad_size),		 /* a slot larger than what remains of the packet */
    STAT(tx_runt),		 /* first slot shorter than an Ethernet header */
    STAT(tx_bad_gref),		 /* grant map or copy failed for a slot */
    STAT(tx_bad_offload),	 /* csum_blank or GSO that the frame's headers do not fit */
    STAT(tx_gso_checksum_fixup), /* GSO without csum_blank, taken as blank (Linux does) */
    STAT(tx_empty_slots),	 /* zero-size later slots answered at once (XSA-448) */
    STAT(tx_zerocopy_sent),	 /* frames forwarded with a mapped payload */
    STAT(tx_zerocopy_success),	 /* of those, completed without a copy-out */
    STAT(tx_zerocopy_fail),	 /* of those, copied out by a slow consumer */
    STAT(tx_copied),		 /* frames whose payload was grant-copied (copy mode) */
    STAT(tx_stalls),		 /* polls stopped: every pending slot in flight */
    STAT(tx_rate_limited),	 /* times TX waited for credit (the backend's "rate" key) */
    STAT(tx_mcast_add),		 /* multicast filter requests: addresses added */
    STAT(tx_mcast_del),		 /* addresses removed (or not there) */
    STAT(tx_mcast_full),	 /* additions refused: the filter holds BACK_MCAST_MAX */
    STAT(rx_packets),		 /* frames delivered into the guest's buffers */
    STAT(rx_bytes),		 /* their bytes */
    STAT(rx_direct),		 /* of rx_packets, delivered by the forwarding thread itself */
    STAT(rx_dropped),	  /* dropped after queueing: the rx_ reasons but queue_full, carrier_off */
    STAT(rx_queue_full),  /* refused by xmit: queue full in items or bytes */
    STAT(rx_direct_full), /* taken for direct delivery; no buffers, queue full: dropped */
    STAT(rx_expired),	  /* waited longer than the drain timeout */
    STAT(rx_bad_gref),	  /* grant copy into a posted buffer failed */
    STAT(rx_oversize),	  /* needs more slots or sg than the guest has */
    STAT(rx_malformed),	  /* descriptor whose pieces do not add up to its length */
    STAT(rx_held_copied), /* held payloads copied out to free the sender */
    STAT(rx_nomem),	  /* no memory: copy-out's pool (retried later), sw scratch (dropped) */
    STAT(rx_hold_budget), /* to copy out, but the guest's hold pools are at its budget */
    STAT(rx_waits),	  /* times the head frame waited for RX buffers */
    STAT(rx_mcast_filtered),   /* multicast frames the guest's filter does not take */
    STAT(rx_stalls),	       /* times the queue stalled (no buffers for the stall timeout) */
    STAT(rx_stall_flushed),    /* frames queued when it stalled, dropped then */
    STAT(rx_carrier_off),      /* refused by xmit while the carrier was off (queue 0 only) */
    STAT(rx_sw_csum),	       /* blank checksums filled in for a guest without that offload */
    STAT(rx_sw_gso),	       /* GSO frames segmented for a guest without that GSO type */
    STAT(rx_sw_gso_segs),      /* the segments they became (each counted in rx_packets) */
    STAT(rx_sw_bad),	       /* frames needing one of those that were not TCP/UDP it fits */
    STAT(notifications),       /* event channel notifications sent to the guest */
    STAT(wakeups),	       /* worker wake-ups */
    STAT(evtchn_spurious),     /* wake-ups by an event that brought no work */
    STAT(fatal),	       /* fatal errors (queue 0 only), kept across reconnects */
    STAT(ctrl_requests),       /* control-ring requests answered (queue 0 only) */
    STAT(poll_rounds),	       /* empty rounds spent polling inside the poll window */
    STAT(grant_copy_ops),      /* grant copy ops issued to the hypervisor (gnt.c) */
    STAT(grant_map_ops),       /* grant map ops, persistent first-time maps included */
    STAT(grant_unmap_ops),     /* grant unmap ops */
    STAT(grant_batches),       /* grant hypercalls: batches of the ops above */
    STAT(persistent_overflow), /* references past the frontend's persistent-grants */
};

const struct back_stat_desc *back_stats_names(unsigned int *n)
{
	*n = sizeof(back_stats) / sizeof(back_stats[0]);
	return back_stats;
}

bool back_vif_carrier(const struct back_vif *vif)
{
	return vif->nq && atomic_load_explicit(&vif->rx_stalled_queues, memory_order_relaxed) == 0;
}

int back_vif_stats(const struct back_vif *vif, unsigned int queue, uint64_t *vals)
{
	const struct back_queue_stats *st;

	if (queue >= vif->nq_stats || queue >= BACK_MAX_QUEUES_LIMIT)
		return -ENOENT;
	st = &vif->stats[queue];
	for (size_t i = 0; i < sizeof(back_stats) / sizeof(back_stats[0]); i++)
		vals[i] = atomic_load_explicit(
		    (const _Atomic uint64_t *)((const char *)st + back_stats[i].offset),
		    memory_order_relaxed);
	return 0;
}

uint64_t back_vif_stat(const struct back_vif *vif, unsigned int queue, const char *name)
{
	const struct back_queue_stats *st;

	if (queue >= vif->nq_stats || queue >= BACK_MAX_QUEUES_LIMIT)
		return 0;
	st = &vif->stats[queue];
	for (size_t i = 0; i < sizeof(back_stats) / sizeof(back_stats[0]); i++)
		if (strcmp(back_stats[i].name, name) == 0)
			return atomic_load_explicit(
			    (const _Atomic uint64_t *)((const char *)st + back_stats[i].offset),
			    memory_order_relaxed);
	return 0;
}
