/* SPDX-License-Identifier: MIT */
/* pkt.h - the packet descriptor shared by netback, the uplinks and the switch */
#ifndef PVNET_SWITCH_PKT_H
#define PVNET_SWITCH_PKT_H

/*
 * Theory of Operation
 *
 * A struct sw_pkt describes one Ethernet frame without owning its bytes.
 * The producer (a netback TX worker, an uplink's receive thread) fills it
 * in, sets refs to 1 with sw_pkt_init() and hands it to sw_forward(); from
 * then on the descriptor is read-only for everybody except refs.
 *
 *   hdr/hdr_len   a PRIVATE copy of the first bytes of the frame, made by the
 *                 producer into memory the guest cannot write, so parsing it
 *                 cannot be raced (no double fetch).  The switch reads only
 *                 these bytes, and only after checking hdr_len.
 *   frag[]        the whole frame as (base, len) pieces; the switch never
 *                 reads them.  Fragment 0 may start after the header copy
 *                 (the producer decides; consumers use hdr + frags, in that
 *                 order, if frag 0 does not repeat the header).
 *   refs, done    completion.  Every consumer holds one reference; the last
 *                 sw_pkt_put() calls done() exactly once, on whichever thread
 *                 dropped it.  Netback's done() unmaps the guest's pages and
 *                 sends the TX response, so a flooded frame completes only
 *                 after every port has copied it out.
 *
 * Who writes what: the producer writes every field before sw_forward(); the
 * switch writes in_port during sw_forward() before passing the packet on;
 * consumers may write enq_ns while they hold it queued (only one consumer
 * may do so per packet: a flooded packet is shared, so consumers that want a
 * timestamp of their own keep it in their own queue entry instead).
 * Handing the pointer to another thread (a queue with a lock or a
 * release/acquire pair) publishes those writes.
 */

#include <stdatomic.h>
#include <stdint.h>

/*
 * Fragments per frame: netif.h lets a guest chain at most
 * XEN_NETBK_LEGACY_SLOTS_MAX = 18 data slots per packet (MAX_SKB_FRAGS + 1 in
 * Linux's netback), plus one for a header split off into its own buffer.
 */
#define SW_PKT_MAX_FRAGS 19

/* Ethernet header: destination MAC, source MAC, EtherType (no VLAN tag). */
#define SW_ETH_ALEN 6
#define SW_ETH_HLEN 14

/*
 * Where an offloaded frame's headers can be found: consumers that act on a
 * blank checksum or GSO (the TAP uplink, the adapter, netback segmenting or
 * checksumming for a guest without the offload) look for the transport
 * header, options included, in the producer's private copy of the first
 * @hdr_len bytes, and drop, counted, a frame whose header ends past
 * SW_PKT_OFFLOAD_HDR_MAX: the Ethernet header and 256 bytes more, as far as
 * Linux's netback and netfront look into an IPv6 header chain for the
 * transport header of a blank checksum (skb_checksum_setup(),
 * MAX_IPV6_HDR_LEN; IPv4 with options always fits).  netback copies 128
 * bytes of every frame, and more, up to this bound, only for an offloaded
 * frame whose header ends later.  A producer that can complete the checksum
 * itself (the TAP uplink) does so for a frame past the bound instead;
 * netback passes a guest's frames on as the guest flagged them.
 */
#define SW_PKT_OFFLOAD_HDR_MAX (SW_ETH_HLEN + 256u)

/* Offload flags (XEN_NETTXF_csum_blank / XEN_NETTXF_data_validated). */
#define SW_PKT_CSUM_BLANK     (1U << 0)
#define SW_PKT_DATA_VALIDATED (1U << 1)

/* GSO types, numbered as XEN_NETIF_GSO_TYPE_* so netback can copy them. */
enum sw_gso_type {
	SW_GSO_NONE = 0,
	SW_GSO_TCPV4 = 1,
	SW_GSO_TCPV6 = 2,
};

/**
 * struct sw_pkt_frag - one piece of the frame's payload
 * @base: first byte (may be in guest memory: never trust its contents)
 * @len: bytes at @base
 */
struct sw_pkt_frag {
	const void *base;
	uint32_t len;
};

struct sw_pkt;

/**
 * typedef sw_pkt_done_fn - completion, run once when the last reference goes
 * @pkt: the packet; nobody else references it any more
 */
typedef void (*sw_pkt_done_fn)(struct sw_pkt *pkt);

/**
 * struct sw_pkt - one frame in flight through the switch
 * @hdr: private copy of the first @hdr_len bytes of the frame (producer)
 * @hdr_len: bytes at @hdr; a frame with less than SW_ETH_HLEN is a runt
 * @nfrags: used entries of @frag, at most SW_PKT_MAX_FRAGS (producer)
 * @flags: SW_PKT_CSUM_BLANK, SW_PKT_DATA_VALIDATED (producer)
 * @gso_type: enum sw_gso_type (producer)
 * @gso_size: GSO segment size in bytes, 0 without GSO (producer)
 * @in_port: number of the port the frame entered by (switch)
 * @len: total frame length in bytes (producer)
 * @enq_ns: enqueue time for a consumer's queue (one consumer, see above)
 * @refs: references held; see sw_pkt_get() and sw_pkt_put()
 * @done: completion callback (producer), never NULL
 * @priv: the producer's cookie, e.g. its pending-request slot
 * @frag: the payload pieces (producer)
 */
struct sw_pkt {
	const uint8_t *hdr;
	uint16_t hdr_len;
	uint8_t nfrags;
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
	uint16_t in_port;
	uint32_t len;
	uint64_t enq_ns;
	_Atomic uint32_t refs;
	sw_pkt_done_fn done;
	void *priv;
	struct sw_pkt_frag frag[SW_PKT_MAX_FRAGS];
};

/**
 * sw_pkt_init() - give a freshly filled packet its first reference
 * @pkt: the packet
 * @done: completion callback
 *
 * Call before the packet is visible to any other thread.
 */
static inline void sw_pkt_init(struct sw_pkt *pkt, sw_pkt_done_fn done)
{
	atomic_init(&pkt->refs, 1);
	pkt->done = done;
}

/**
 * sw_pkt_get() - take @n more references for @n more consumers
 * @pkt: a packet the caller holds a reference to
 * @n: references to add
 *
 * Relaxed: the caller already holds a reference, so the packet cannot
 * complete meanwhile, and handing it on publishes the new count.
 */
static inline void sw_pkt_get(struct sw_pkt *pkt, uint32_t n)
{
	atomic_fetch_add_explicit(&pkt->refs, n, memory_order_relaxed);
}

/**
 * sw_pkt_put() - drop one reference; the last one runs done()
 * @pkt: the packet; the caller must not touch it afterwards
 *
 * acq_rel so that everything each consumer did with the frame happens
 * before done() (which may unmap its pages).  No separate fence: TSan does
 * not model atomic_thread_fence.  A count of 1 seen by an acquire load is
 * the caller's own reference: nobody else holds one, so nobody can take or
 * drop one any more, and the caller completes the frame without the locked
 * decrement (the common case: a unicast frame, one consumer; the load
 * synchronizes with the earlier consumers' releases as the decrement would).
 */
static inline void sw_pkt_put(struct sw_pkt *pkt)
{
	if (atomic_load_explicit(&pkt->refs, memory_order_acquire) == 1) {
		atomic_store_explicit(&pkt->refs, 0, memory_order_relaxed);
		pkt->done(pkt);
	} else if (atomic_fetch_sub_explicit(&pkt->refs, 1, memory_order_acq_rel) == 1) {
		pkt->done(pkt);
	}
}

#endif /* PVNET_SWITCH_PKT_H */
