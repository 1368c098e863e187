/* SPDX-License-Identifier: MIT */
/* vnet.h - virtio-net header <-> netif offload mapping and TAP frame validation (pure) */
#ifndef PVNET_UPLINK_VNET_H
#define PVNET_UPLINK_VNET_H

/*
 * Theory of Operation
 *
 * A TAP opened with IFF_VNET_HDR prefixes every frame with a struct
 * virtio_net_hdr (10 bytes, native endian on a legacy little-endian host).
 * Xen's netif protocol carries the same information differently:
 *
 *   virtio_net_hdr                          netif (struct uplink_meta)
 *   flags NEEDS_CSUM + csum_start/offset    csum_blank (the receiver finds
 *                                           the L4 header itself)
 *   flags DATA_VALID                        data_validated
 *   gso_type TCPV4/TCPV6 + gso_size         GSO extra, type TCPV4/TCPV6 + size
 *
 * Both sides mean the same by a "blank" checksum: the L4 checksum field
 * holds the folded pseudo-header sum and the rest is left to whoever
 * transmits on real wire.  So the mapping is a matter of finding the L4
 * header (sw_frame_parse(), switch/frame.h), which both directions need: netif has no
 * csum_start, and a virtio header from a TAP must be checked against the
 * frame it describes before anything trusts it.
 *
 * Everything here is a pure function of its arguments (no I/O, no global
 * state), so the unit tests and a fuzzer call it directly.  Frames from a
 * TAP are untrusted: uplink_vnet2meta() is only ever called on a private
 * copy, which it may modify (a software checksum when the offload cannot
 * be expressed in netif terms).
 */

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_net.h>

/* Offload flags; the same bits as PVNET_PKT_* and SW_PKT_* (checked where used). */
#define UPLINK_F_CSUM_BLANK	(1u << 0)
#define UPLINK_F_DATA_VALIDATED (1u << 1)

/* GSO types, numbered as XEN_NETIF_GSO_TYPE_* (and PVNET_GSO_*, SW_GSO_*). */
#define UPLINK_GSO_NONE	 0u
#define UPLINK_GSO_TCPV4 1u
#define UPLINK_GSO_TCPV6 2u

/* What the netif side can take (uplink_vnet2meta's @offloads). */
#define UPLINK_OFF_CSUM4 (1u << 0) /* IPv4 TCP/UDP csum_blank */
#define UPLINK_OFF_CSUM6 (1u << 1) /* IPv6 TCP/UDP csum_blank */
#define UPLINK_OFF_TSO4	 (1u << 2) /* GSO TCPv4 */
#define UPLINK_OFF_TSO6	 (1u << 3) /* GSO TCPv6 */

/* Ethernet header and one 802.1Q tag. */
#define UPLINK_ETH_HLEN	 14u
#define UPLINK_VLAN_HLEN 4u

/* Largest frame netif carries: the 16-bit size of a TX request. */
#define UPLINK_MAX_FRAME 65535u

/* Largest L3 MTU: what fits a maximal frame after the Ethernet header. */
#define UPLINK_MAX_MTU (UPLINK_MAX_FRAME - UPLINK_ETH_HLEN)

/* Smallest MTU IPv4 allows (RFC 791's 68 bytes). */
#define UPLINK_MIN_MTU 68u

/**
 * enum uplink_drop - why a frame was refused; also the counter index
 * @UPLINK_DROP_RUNT: shorter than the virtio header plus an Ethernet header
 * @UPLINK_DROP_OVERSIZE: longer than UPLINK_MAX_FRAME, or than the MTU
 *	(non-GSO), or a GSO segment (headers + gso_size) longer than the MTU
 * @UPLINK_DROP_GSO: GSO type unknown (UDP, ECN, ...), size 0, not matching
 *	the frame's protocol, not offered to the sender, without NEEDS_CSUM, or
 *	without payload
 * @UPLINK_DROP_CSUM: NEEDS_CSUM whose csum_start/csum_offset lie outside the
 *	frame, or a blank checksum on a frame whose L4 header cannot be found
 * @UPLINK_DROP_NR: number of reasons
 */
enum uplink_drop {
	UPLINK_DROP_RUNT = 0,
	UPLINK_DROP_OVERSIZE,
	UPLINK_DROP_GSO,
	UPLINK_DROP_CSUM,
	UPLINK_DROP_NR,
};

/**
 * struct uplink_meta - a frame's offload state in netif terms
 * @flags: UPLINK_F_*
 * @gso_type: UPLINK_GSO_*
 * @gso_size: the MSS, 0 without GSO
 */
struct uplink_meta {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
};

/**
 * uplink_vnet2meta() - validate a frame read from a TAP and map its virtio header
 * @vh: the virtio header (a private copy)
 * @frame: the frame after the header (private and writable)
 * @len: frame length
 * @mtu: the L3 MTU frames must respect
 * @offloads: UPLINK_OFF_* the receiving side negotiated
 * @out: the netif offload state
 *
 * A NEEDS_CSUM frame whose blank checksum netif cannot express (not
 * TCP/UDP at csum_start, or that family's offload not negotiated) gets its
 * checksum computed here, in @frame.  A GSO frame must be TCP of the
 * announced family with its offload negotiated: there is no software
 * segmentation.
 *
 * Return: 0, or the negative enum uplink_drop reason (-1 - reason)
 */
int uplink_vnet2meta(const struct virtio_net_hdr *vh, uint8_t *frame, uint32_t len, uint32_t mtu,
		     uint32_t offloads, struct uplink_meta *out);

/**
 * uplink_meta2vnet() - build the virtio header for a frame written to a TAP
 * @m: the frame's netif offload state
 * @hdr: the frame's first bytes (a private copy, or the caller's own frame)
 * @hdr_len: bytes at @hdr
 * @len: the whole frame's length
 * @vh: filled
 *
 * Return: 0, or -EPROTO for a blank checksum or GSO on a frame whose
 * TCP/UDP header is not within @hdr, -EINVAL for GSO without a blank
 * checksum or not matching the frame's family
 */
int uplink_meta2vnet(const struct uplink_meta *m, const uint8_t *hdr, uint32_t hdr_len,
		     uint32_t len, struct virtio_net_hdr *vh);

/**
 * uplink_drop_reason() - encode a drop reason as uplink_vnet2meta()'s return value
 * @r: the reason
 *
 * Return: a negative number
 */
static inline int uplink_drop_reason(enum uplink_drop r)
{
	return -1 - (int)r;
}

/**
 * uplink_drop_name() - the counter name of a drop reason
 * @r: the reason
 *
 * Return: e.g. "rx_runt"
 */
const char *uplink_drop_name(enum uplink_drop r);

#endif /* PVNET_UPLINK_VNET_H */
