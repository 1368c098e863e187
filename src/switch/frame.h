/* SPDX-License-Identifier: MIT */
/* frame.h - pure functions on Ethernet frames: transport header, checksums, TCP segmentation */
#ifndef PVNET_SWITCH_FRAME_H
#define PVNET_SWITCH_FRAME_H

/*
 * Theory of Operation
 *
 * Offloads travel with a frame as netif describes them (pkt.h): a "blank"
 * checksum (the L4 checksum field holds the folded pseudo-header sum, the
 * rest is left to whoever puts the frame on a real wire) and a GSO type and
 * size (one TCP segment of up to 64 KiB standing for many of at most
 * gso_size payload bytes each).  A port whose far side did not negotiate an
 * offload must be given what that side can take, as Linux's core does
 * before a driver's transmit (skb_checksum_help(), skb_gso_segment()):
 *
 *   sw_frame_parse()     finds the transport header of a frame
 *   sw_csum_complete()   fills in a blank TCP/UDP checksum
 *   sw_tcp_pseudo()      the blank TCP checksum a sender with offload leaves
 *   sw_tso_segment()     cuts a TCP GSO frame into gso_size segments, each
 *                        with its own IP and TCP headers, and either a full
 *                        checksum or a blank one
 *
 * They work on private copies only: the caller copies a guest's or a TAP's
 * bytes once into memory nobody else writes, then parses, then uses.
 * Nothing here allocates, blocks or keeps state, so the unit tests and the
 * fuzzers call it directly, and netback and the uplinks share it (it is
 * the switch's model of a frame; no port owns it).
 */

#include <stdbool.h>
#include <stdint.h>

/* Ethernet header and one 802.1Q tag. */
#define SW_FRAME_ETH_HLEN  14u
#define SW_FRAME_VLAN_HLEN 4u

/* Where the checksum field is inside the transport header (RFC 793, RFC 768). */
#define SW_FRAME_TCP_CSUM_OFF 16u
#define SW_FRAME_UDP_CSUM_OFF 6u

/**
 * struct sw_l4 - where a frame's network and transport headers are
 * @l3: 4 or 6 (0 if neither IPv4 nor IPv6)
 * @proto: IPPROTO_TCP, IPPROTO_UDP, or another protocol number
 * @l3_off: offset of the IP header (after an optional 802.1Q tag)
 * @l4_off: offset of the transport header in the frame
 * @l4_len: its length (TCP data offset * 4, or 8 for UDP); 0 for others
 * @dst_off: offset of the destination address a transport checksum's
 *           pseudo-header holds: the IP header's, or for IPv6 with a
 *           routing header that has segments left, the final destination
 *           it lists (RFC 8200 8.1)
 * @gso_ok: the frame can be cut into segments: false after an IPv6
 *          fragment or AH header, or a routing header with segments left
 *          whose final destination is not found (RPL's)
 */
struct sw_l4 {
	uint8_t l3;
	uint8_t proto;
	uint16_t l3_off;
	uint16_t l4_off;
	uint16_t l4_len;
	uint16_t dst_off;
	bool gso_ok;
};

/**
 * sw_frame_l3_off() - where the network header of an Ethernet frame starts
 * @p: the frame's first bytes (a private copy)
 * @len: bytes at @p, at least SW_FRAME_ETH_HLEN
 *
 * Return: SW_FRAME_ETH_HLEN, or that plus SW_FRAME_VLAN_HLEN after an
 * 802.1Q or 802.1ad tag
 */
uint32_t sw_frame_l3_off(const uint8_t *p, uint32_t len);

/**
 * sw_frame_parse() - find the transport header of an Ethernet frame
 * @p: the frame's first bytes (a private copy)
 * @len: bytes at @p
 * @out: filled on success
 *
 * Understands one optional 802.1Q or 802.1ad tag, IPv4 (options, not fragments) and
 * IPv6 with at most 8 extension headers: hop-by-hop, routing, destination
 * options, AH, and a fragment header of an atomic fragment (offset 0, no
 * more fragments: RFC 6946), as Linux's checksum set-up takes them; no
 * fragments.  A TCP or UDP header must lie entirely within @len.
 *
 * Return: 0, or -EPROTO when the frame is not a whole-header TCP/UDP packet
 */
int sw_frame_parse(const uint8_t *p, uint32_t len, struct sw_l4 *out);

/**
 * sw_csum_fold() - the Internet checksum of @len bytes at @p (RFC 1071)
 * @p: the bytes
 * @len: how many
 * @sum: a partial 32-bit sum to start from (0, or a pseudo-header sum)
 *
 * Return: the one's complement sum, folded to 16 bits (not inverted)
 */
uint16_t sw_csum_fold(const uint8_t *p, uint32_t len, uint32_t sum);

/**
 * sw_csum_complete() - fill in a blank checksum
 * @frame: the whole frame (private and writable)
 * @len: its length
 * @start: where the checksummed part starts (the transport header)
 * @field: where the 16-bit checksum field is; it holds the pseudo-header sum
 *
 * The caller checked that @start < @len and @field + 2 <= @len.  A result
 * of 0 is written as 0xffff (0 means "no checksum" to UDP, RFC 768).
 */
void sw_csum_complete(uint8_t *frame, uint32_t len, uint32_t start, uint32_t field);

/**
 * sw_tcp_pseudo() - what a TCP sender with checksum offload leaves in the field
 * @frame: the frame's headers, as sw_frame_parse() found them in @l4
 * @l4: a TCP frame's (@l4->proto IPPROTO_TCP)
 * @tcp_len: bytes from the TCP header to the frame's end
 *
 * Return: the folded pseudo-header sum (RFC 793; RFC 8200 8.1, over the
 * final destination @l4->dst_off names), not inverted
 */
uint16_t sw_tcp_pseudo(const uint8_t *frame, const struct sw_l4 *l4, uint32_t tcp_len);

/*
 * Longest headers sw_tso_segment() copies into each segment (Ethernet to TCP
 * options): at least SW_PKT_OFFLOAD_HDR_MAX (switch/pkt.h), the most any
 * offloaded frame has.
 */
#define SW_TSO_MAX_HDRS 272u

/**
 * struct sw_seg - one segment made by sw_tso_segment()
 * @hdr: its headers (Ethernet to TCP), in the caller's @hdrbuf
 * @hdr_len: bytes at @hdr (the same for every segment)
 * @off: where its payload starts in the original frame
 * @len: payload bytes, at most the GSO size
 */
struct sw_seg {
	uint8_t *hdr;
	uint16_t hdr_len;
	uint32_t off;
	uint32_t len;
};

/**
 * sw_tso_segment() - cut a TCP GSO frame into segments of @mss payload bytes
 * @frame: the whole frame (a private copy; not modified)
 * @len: its length
 * @gso_type: SW_GSO_TCPV4 or SW_GSO_TCPV6 (pkt.h); the frame must match it
 * @mss: payload bytes per segment (the GSO size), at least 1
 * @blank: true: leave each TCP checksum blank (the pseudo-header sum, for a
 *	receiver that takes csum_blank); false: compute it in full
 * @hdrbuf: room for every segment's headers
 * @hdrbuf_len: bytes at @hdrbuf
 * @segs: filled, one per segment, in order
 * @max_segs: room at @segs
 *
 * Each segment gets the frame's headers with, as a TCP stack would have
 * sent them one by one: IPv4 total length, identification (+1 per segment)
 * and header checksum, or IPv6 payload length; the TCP sequence number
 * advanced by the payload before it; FIN and PSH only on the last segment,
 * CWR only on the first.  The payload is not copied: segment i is its
 * headers followed by @frame[@segs[i].off, + @segs[i].len).
 *
 * Everything after the TCP header is payload (the frame's IP length field
 * is rewritten, not trusted).  Checksums cover the final destination's
 * pseudo-header (struct sw_l4's @dst_off).
 *
 * Return: the number of segments, or -EPROTO (not a TCP frame of that
 * family, no payload, headers over SW_TSO_MAX_HDRS, not @gso_ok), -EINVAL
 * (@mss 0 or an unknown @gso_type),
 * -E2BIG (more than @max_segs segments, or their headers exceed
 * @hdrbuf_len)
 */
int sw_tso_segment(const uint8_t *frame, uint32_t len, uint8_t gso_type, uint16_t mss, bool blank,
		   uint8_t *hdrbuf, uint32_t hdrbuf_len, struct sw_seg *segs,
		   unsigned int max_segs);

#endif /* PVNET_SWITCH_FRAME_H */
