/* SPDX-License-Identifier: MIT */
/* tx.h - the pure guest-TX slot parser (ring2pkt), callable by tests and fuzzers */
#ifndef PVNET_BACK_TX_H
#define PVNET_BACK_TX_H

#include <stdbool.h>
#include <stdint.h>

#include "common/xen.h"

/* Xen's page: the unit of a grant; no slot may cross it. */
#define BACK_PAGE_SIZE 4096u

/*
 * Slot limits, Linux netback parity (netif.h's XEN_NETIF_NR_SLOTS_MIN, netback's
 * fatal_skb_slots):
 *  - a packet may have the first slot plus XEN_NETIF_NR_SLOTS_MIN (18) more;
 *  - with 19 or 20 more it is dropped (every slot answered with an error);
 *  - reading a 21st more slot (22 in total) means a malicious frontend:
 *    Linux's fatal_skb_slots default, 20.
 */
#define BACK_TX_MAX_MORE_SLOTS XEN_NETIF_NR_SLOTS_MIN
#define BACK_TX_FATAL_SLOTS    20
#define BACK_TX_MAX_DATA       (1 + BACK_TX_MAX_MORE_SLOTS)

/*
 * One extra of each defined type at most: a longer chain can only be a
 * frontend trying to make us loop (Linux bounds it by the ring only).
 */
#define BACK_TX_MAX_EXTRAS (XEN_NETIF_EXTRA_TYPE_MAX - 1)

/* Most ring slots one accepted or dropped packet can occupy. */
#define BACK_TX_MAX_SLOTS (1 + BACK_TX_MAX_EXTRAS + 1 + BACK_TX_FATAL_SLOTS)

/* Smallest first slot: an Ethernet header (Linux drops shorter ones). */
#define BACK_TX_MIN_FIRST 14

/**
 * enum back_tx_verdict - what to do with the slots back_tx_ring2pkt() consumed
 * @BACK_TX_OK: forward the packet
 * @BACK_TX_DROP: answer every consumed slot with an error, count @drop
 * @BACK_TX_FATAL: the frontend is malicious or broken: disable the vif
 * @BACK_TX_MCAST: not a packet: a multicast filter request (@mcast_op,
 *	@mcast_addr); answer the first slot with its outcome, the extras NULL
 */
enum back_tx_verdict {
	BACK_TX_OK = 0,
	BACK_TX_DROP = 1,
	BACK_TX_FATAL = 2,
	BACK_TX_MCAST = 3,
};

/**
 * enum back_tx_drop - why a packet was dropped (tier 1), one counter each
 * @BACK_TX_DROP_NONE: not dropped
 * @BACK_TX_DROP_SLOTS: 20 or 21 slots (tx_frag_overflow)
 * @BACK_TX_DROP_SIZE: a later slot larger than what remains (tx_bad_size)
 * @BACK_TX_DROP_RUNT: first slot shorter than an Ethernet header (tx_runt)
 */
enum back_tx_drop {
	BACK_TX_DROP_NONE = 0,
	BACK_TX_DROP_SLOTS,
	BACK_TX_DROP_SIZE,
	BACK_TX_DROP_RUNT,
};

/**
 * struct back_tx_parse - the parser's verdict on one packet
 * @verdict: enum back_tx_verdict
 * @drop: enum back_tx_drop when @verdict is BACK_TX_DROP
 * @reason: a static string for BACK_TX_FATAL and BACK_TX_DROP
 * @nslots: ring slots consumed, first included (valid for OK, DROP and MCAST)
 * @nextras: extra-info slots among them (they follow the first slot)
 * @len: packet length (the first slot's size)
 * @txflags: NETTXF_csum_blank / NETTXF_data_validated of the first slot
 * @gso_type: XEN_NETIF_GSO_TYPE_*, NONE without a GSO extra
 * @gso_size: MSS of the GSO extra
 * @ndata: data slots with bytes, first included: entries of @data/@data_len
 * @data: index (into the slots given) of each data slot with bytes
 * @data_len: bytes of each of them (the first slot's is computed)
 * @nempty: later data slots of size 0: answered at once, never mapped (XSA-448)
 * @empty: their indices
 * @mcast_op: BACK_TX_MCAST: XEN_NETIF_EXTRA_TYPE_MCAST_ADD or _DEL
 * @mcast_addr: BACK_TX_MCAST: the address to add to or remove from the filter
 *
 * Entries of the arrays past @ndata and @nempty are stale: the parser
 * does not clear the arrays, only the counts and the other fields.
 */
struct back_tx_parse {
	uint8_t verdict;
	uint8_t drop;
	const char *reason;
	uint16_t nslots;
	uint8_t nextras;
	uint32_t len;
	uint16_t txflags;
	uint8_t gso_type;
	uint16_t gso_size;
	uint8_t ndata;
	uint8_t data[BACK_TX_MAX_DATA];
	uint16_t data_len[BACK_TX_MAX_DATA];
	uint8_t nempty;
	uint8_t empty[BACK_TX_MAX_DATA];
	uint8_t mcast_op;
	uint8_t mcast_addr[6];
};

/**
 * back_tx_ring2pkt() - apply netback's slot rules to the snapshot of one packet
 * @slots: private copies (RING_COPY_REQUEST) of the unconsumed requests,
 *	starting with the packet's first slot; extras are read through a
 *	netif_extra_info_t view of the same 12 bytes
 * @n: number of valid entries in @slots, at least 1
 * @out: the verdict
 *
 * A pure function of @slots: it never reads shared memory, so a fuzzer can
 * call it directly.  Consumes exactly one packet: on OK, DROP and MCAST,
 * @out->nslots slots (<= @n and <= BACK_TX_MAX_SLOTS); on FATAL nothing is
 * consumed and @out->reason says why.  A chain that runs past @n is fatal,
 * as in Linux: a frontend publishes a packet's slots with one req_prod
 * update.
 *
 * Return: @out->verdict
 */
int back_tx_ring2pkt(const netif_tx_request_t *slots, unsigned int n, struct back_tx_parse *out);

#endif /* PVNET_BACK_TX_H */
