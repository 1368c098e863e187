// SPDX-License-Identifier: MIT
// tx_parse.c - guest TX slot rules: a pure function from request snapshots to a packet verdict

/*
 * Theory of Operation
 *
 * The worker snapshots every unconsumed TX request once (RING_COPY_REQUEST)
 * into private memory and hands the snapshots here.  Nothing in this file
 * touches shared memory, so every check is made on data the guest can no
 * longer change (XSA-155) and a fuzzer can drive it directly.
 *
 * The rules are Linux netback's (xenvif_get_extras, xenvif_count_requests
 * and the checks of xenvif_tx_build_gops), in the same order, so that a
 * frontend sees the same verdicts from pvnet as from Linux:
 *
 *   1. extras (first slot has NETTXF_extra_info): each must exist (else
 *      fatal), have a type in 1 .. XEN_NETIF_EXTRA_TYPE_MAX-1 (else fatal),
 *      and the chain is bounded by BACK_TX_MAX_EXTRAS (else fatal).  GSO
 *      must carry a size and a TCPv4/TCPv6 type (else fatal, checked last
 *      as Linux does); HASH is ignored.  An MCAST_ADD or MCAST_DEL extra
 *      makes the request a multicast filter request, not a packet: it
 *      consumes the first slot and its extras only (data slots are not
 *      looked at: a "dummy" request, as Linux handles it), ADD before DEL
 *      when both are there, the last extra of a type counting.
 *   2. data slots after the first (NETTXF_more_data chain), with a counter k
 *      checked before each slot is read: k == n left is fatal (the chain runs
 *      past what the frontend published); k >= 20 is fatal (malicious);
 *      k >= 18 drops the packet but keeps consuming; a slot larger than
 *      what remains of the first slot's size drops; offset + size past the
 *      page is fatal.  Zero-size slots are noted for an immediate answer
 *      and never mapped (XSA-448).
 *   3. the first slot's own size (total minus the others) must be at least
 *      an Ethernet header (else drop) and fit its page (else fatal).
 */

#include <string.h>

#include "back/tx.h"

/* Fatal verdict: nothing consumed. */
static int tx_fatal(struct back_tx_parse *out, const char *reason)
{
	out->verdict = BACK_TX_FATAL;
	out->reason = reason;
	out->nslots = 0;
	out->ndata = 0;
	out->nempty = 0;
	return BACK_TX_FATAL;
}

/* Drop verdict: @nslots consumed, all answered with errors. */
static int tx_drop(struct back_tx_parse *out, enum back_tx_drop why, const char *reason,
		   unsigned int nslots)
{
	out->verdict = BACK_TX_DROP;
	out->drop = (uint8_t)why;
	out->reason = reason;
	out->nslots = (uint16_t)nslots;
	out->ndata = 0;
	out->nempty = 0;
	return BACK_TX_DROP;
}

/*
 * Step 1: the extra-info chain after the first slot.  Returns the number of
 * extra slots, or -1 after filling a fatal verdict.
 */
static int tx_extras(const netif_tx_request_t *slots, unsigned int n, struct back_tx_parse *out,
		     netif_extra_info_t *gso, netif_extra_info_t *mcast)
{
	unsigned int i = 1, count = 0;
	netif_extra_info_t ex;

	for (;;) {
		if (i >= n)
			return tx_fatal(out, "missing extra info"), -1;
		if (count >= BACK_TX_MAX_EXTRAS)
			return tx_fatal(out, "extra info chain too long"), -1;
		_Static_assert(sizeof(ex) <= sizeof(slots[i]), "an extra fits a TX slot");
		memcpy(&ex, &slots[i], sizeof(ex));
		if (ex.type == XEN_NETIF_EXTRA_TYPE_NONE || ex.type >= XEN_NETIF_EXTRA_TYPE_MAX)
			return tx_fatal(out, "bad extra info type"), -1;
		if (ex.type == XEN_NETIF_EXTRA_TYPE_GSO)
			*gso = ex;
		else if (ex.type == XEN_NETIF_EXTRA_TYPE_MCAST_ADD)
			mcast[0] = ex;
		else if (ex.type == XEN_NETIF_EXTRA_TYPE_MCAST_DEL)
			mcast[1] = ex;
		i++;
		count++;
		if (!(ex.flags & XEN_NETIF_EXTRA_FLAG_MORE))
			return (int)count;
	}
}

int back_tx_ring2pkt(const netif_tx_request_t *slots, unsigned int n, struct back_tx_parse *out)
{
	netif_tx_request_t first = slots[0], txp;
	netif_extra_info_t gso = {.type = XEN_NETIF_EXTRA_TYPE_NONE}, mcast[2] = {{0}};
	enum back_tx_drop drop = BACK_TX_DROP_NONE;
	const char *drop_reason = NULL;
	unsigned int k, idx, remaining;
	bool more;
	int nextras = 0;

	/*
	 * Field by field, not memset(): the arrays are read only below @ndata
	 * and @nempty, and the whole struct's memset was a rep stos whose
	 * stores the caller's first read of a count then waited for.
	 */
	out->verdict = BACK_TX_OK;
	out->drop = BACK_TX_DROP_NONE;
	out->reason = NULL;
	out->nslots = 0;
	out->nextras = 0;
	out->len = 0;
	out->txflags = 0;
	out->gso_type = XEN_NETIF_GSO_TYPE_NONE;
	out->gso_size = 0;
	out->ndata = 0;
	out->nempty = 0;
	out->mcast_op = 0;
	memset(out->mcast_addr, 0, sizeof(out->mcast_addr));
	if (n == 0)
		return tx_fatal(out, "no slot");

	if (first.flags & NETTXF_extra_info) {
		nextras = tx_extras(slots, n, out, &gso, mcast);
		if (nextras < 0)
			return BACK_TX_FATAL;
	}
	out->nextras = (uint8_t)nextras;
	for (int m = 0; m < 2; m++) {
		if (mcast[m].type == XEN_NETIF_EXTRA_TYPE_NONE)
			continue;
		out->verdict = BACK_TX_MCAST;
		out->mcast_op = mcast[m].type;
		memcpy(out->mcast_addr, mcast[m].u.mcast.addr, sizeof(out->mcast_addr));
		out->nslots = (uint16_t)(1 + nextras);
		return BACK_TX_MCAST;
	}
	out->len = first.size;
	out->txflags = first.flags & (NETTXF_csum_blank | NETTXF_data_validated);
	idx = 1 + (unsigned int)nextras;
	remaining = first.size;

	/* Step 2: the more_data chain; k counts the slots after the first. */
	more = first.flags & NETTXF_more_data;
	for (k = 0; more; k++, idx++) {
		if (idx >= n)
			return tx_fatal(out, "more_data chain runs past the published requests");
		if (k >= BACK_TX_FATAL_SLOTS)
			return tx_fatal(out, "malicious frontend: too many slots in one packet");
		if (drop == BACK_TX_DROP_NONE && k >= BACK_TX_MAX_MORE_SLOTS) {
			drop = BACK_TX_DROP_SLOTS;
			drop_reason = "too many slots";
		}
		txp = slots[idx];
		if (drop == BACK_TX_DROP_NONE && txp.size > remaining) {
			drop = BACK_TX_DROP_SIZE;
			drop_reason = "slot larger than the remaining size";
		}
		remaining -= txp.size <= remaining ? txp.size : remaining;
		if ((uint32_t)txp.offset + txp.size > BACK_PAGE_SIZE)
			return tx_fatal(out, "slot crosses its page");
		more = txp.flags & NETTXF_more_data;
		if (drop != BACK_TX_DROP_NONE)
			continue;
		if (txp.size == 0) {
			out->empty[out->nempty++] = (uint8_t)idx;
		} else {
			out->data[1 + out->ndata] = (uint8_t)idx;
			out->data_len[1 + out->ndata] = txp.size;
			out->ndata++;
		}
	}
	if (drop != BACK_TX_DROP_NONE)
		return tx_drop(out, drop, drop_reason, idx);

	/* Step 3: what is left is the first slot's own fragment. */
	if (remaining < BACK_TX_MIN_FIRST)
		return tx_drop(out, BACK_TX_DROP_RUNT, "first slot shorter than an Ethernet header",
			       idx);
	if ((uint32_t)first.offset + remaining > BACK_PAGE_SIZE)
		return tx_fatal(out, "first slot crosses its page");
	out->data[0] = 0;
	out->data_len[0] = (uint16_t)remaining;
	out->ndata++;

	if (gso.type == XEN_NETIF_EXTRA_TYPE_GSO) {
		if (gso.u.gso.size == 0)
			return tx_fatal(out, "GSO size must not be zero");
		if (gso.u.gso.type != XEN_NETIF_GSO_TYPE_TCPV4 &&
		    gso.u.gso.type != XEN_NETIF_GSO_TYPE_TCPV6)
			return tx_fatal(out, "bad GSO type");
		out->gso_type = gso.u.gso.type;
		out->gso_size = gso.u.gso.size;
	}
	out->verdict = BACK_TX_OK;
	out->nslots = (uint16_t)idx;
	return BACK_TX_OK;
}
