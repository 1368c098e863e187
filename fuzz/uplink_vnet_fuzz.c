// SPDX-License-Identifier: MIT
/* uplink_vnet_fuzz.c - libFuzzer harness for the TAP frame validation and virtio-net header mapping */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "switch/frame.h"
#include "switch/pkt.h"
#include "uplink/vnet.h"

/*
 * Input layout (what a hostile TAP peer controls, and the port's settings):
 *
 *   0..9   struct virtio_net_hdr, native endian, as read from the TAP
 *   10..11 the port's MTU, little endian, clamped to UPLINK_MIN_MTU..UPLINK_MAX_MTU
 *   12     bits 0-3: UPLINK_OFF_* negotiated;
 *          bits 4-7: that many 4 KiB pages of zeros appended to the frame, so
 *          short inputs reach full-size TSO frames and oversized ones
 *   13     a netif offload state for the other direction (a guest's frame
 *          going out to the TAP): bits 0-1 flags, bits 2-3 GSO type (3 is
 *          invalid); its gso_size is the virtio header's, its header copy
 *          the virtio header's hdr_len bytes of the frame
 *   14..   the frame
 *
 * Each call gets private heap copies of exactly the bytes it may touch, so
 * the sanitizers see any access outside them.  The promises checked are the
 * ones vnet.h documents: a drop reason is one of enum uplink_drop; an
 * accepted frame fits the MTU (a GSO frame: headers plus one segment), its
 * GSO is TCP of the announced, negotiated family with a blank checksum at
 * its TCP header, and headers segmentation can cut; the frame is only written to compute a checksum in
 * software, which then verifies; an accepted frame maps back through
 * uplink_meta2vnet() to the same GSO type, size and checksum position, and
 * that header is accepted again.  A broken promise traps.
 */

#define HDR_BYTES (sizeof(struct virtio_net_hdr) + 4) /* + MTU, offloads/padding, netif state */
#define PAD_PAGE  4096u /* zero padding unit: 15 of them and a 4 KiB input pass UPLINK_MAX_FRAME */

/* TCP/UDP checksum field offsets in their headers (RFC 793, RFC 768). */
#define TCP_CSUM_OFF 16u
#define UDP_CSUM_OFF 6u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The virtio GSO type of a netif one. */
static uint8_t gso2vnet(uint8_t netif_type)
{
	if (netif_type == UPLINK_GSO_TCPV4)
		return VIRTIO_NET_HDR_GSO_TCPV4;
	if (netif_type == UPLINK_GSO_TCPV6)
		return VIRTIO_NET_HDR_GSO_TCPV6;
	return VIRTIO_NET_HDR_GSO_NONE;
}

/* Where L3 starts, as vnet.h defines it: after one optional 802.1Q or 802.1ad tag. */
static uint32_t l3_offset(const uint8_t *f, uint32_t len)
{
	if ((be16(f + 12) == 0x8100 || be16(f + 12) == 0x88a8) &&
	    len >= UPLINK_ETH_HLEN + UPLINK_VLAN_HLEN)
		return UPLINK_ETH_HLEN + UPLINK_VLAN_HLEN;
	return UPLINK_ETH_HLEN;
}

/* sw_frame_parse() on its own: a found header lies within @len, and only its bytes matter. */
static void check_parse(const uint8_t *f, uint32_t len)
{
	struct sw_l4 l4, again;
	uint32_t end;

	if (sw_frame_parse(f, len, &l4) < 0)
		return;
	check(l4.l3 == 4 || l4.l3 == 6);
	check(l4.l4_off >= UPLINK_ETH_HLEN + (l4.l3 == 4 ? 20u : 40u));
	if (l4.proto == IPPROTO_TCP)
		check(l4.l4_len >= 20 && l4.l4_len <= 60 && l4.l4_len % 4 == 0);
	else
		check(l4.proto == IPPROTO_UDP && l4.l4_len == 8);
	end = (uint32_t)l4.l4_off + l4.l4_len;
	check(end <= len);
	/* The same frame cut right after the L4 header parses the same; one byte less does not. */
	check(sw_frame_parse(f, end, &again) == 0);
	check(l4.l3 == again.l3 && l4.proto == again.proto && l4.l3_off == again.l3_off &&
	      l4.l4_off == again.l4_off && l4.l4_len == again.l4_len &&
	      l4.dst_off == again.dst_off && l4.gso_ok == again.gso_ok);
	check(sw_frame_parse(f, end - 1, &again) == -EPROTO);
}

/* A software checksum verifies: over csum_start.. with the pseudo-header sum it replaced. */
static void check_sw_csum(const struct virtio_net_hdr *vh, const uint8_t *orig,
			  const uint8_t *frame, uint32_t len)
{
	uint32_t field = (uint32_t)vh->csum_start + vh->csum_offset;

	/* An odd csum_offset puts the field across 16-bit words: any value is "right". */
	if (vh->csum_offset % 2)
		return;
	check(sw_csum_fold(frame + vh->csum_start, len - vh->csum_start, be16(orig + field)) ==
	      0xffff);
}

/*
 * What netback does for a guest without TSO: segments that cover the
 * payload once, in order, each within gso_size, each a TCP frame of its own
 * whose full checksum verifies.
 */
static void check_segments(const uint8_t *frame, uint32_t len, const struct uplink_meta *m)
{
	static uint8_t hdrbuf[256 * SW_TSO_MAX_HDRS], seg[UPLINK_MAX_FRAME];
	static struct sw_seg segs[256];
	uint32_t off, ip_sum;
	struct sw_l4 l4;
	int n = sw_tso_segment(frame, len, m->gso_type, m->gso_size, false, hdrbuf, sizeof(hdrbuf),
			       segs, 256);

	check(sw_frame_parse(frame, len, &l4) == 0);
	off = (uint32_t)l4.l4_off + l4.l4_len;
	if (n == -E2BIG || (n == -EPROTO && off > SW_TSO_MAX_HDRS)) {
		check(n == -EPROTO || (len - off + m->gso_size - 1) / m->gso_size > 256);
		return;
	}
	check(n > 0);
	for (int i = 0; i < n; i++) {
		const struct sw_seg *g = &segs[i];
		uint32_t slen = g->hdr_len + g->len, tcp_len = slen - l4.l4_off;
		struct sw_l4 sl4;

		check(g->hdr_len == l4.l4_off + l4.l4_len && g->off == off);
		check(g->len > 0 && g->len <= m->gso_size && (i + 1 == n || g->len == m->gso_size));
		memcpy(seg, g->hdr, g->hdr_len);
		memcpy(seg + g->hdr_len, frame + g->off, g->len);
		check(sw_frame_parse(seg, slen, &sl4) == 0 && sl4.l4_off == l4.l4_off);
		/* IPv6: the destination sw_frame_parse() found (frame_fuzz.c checks where). */
		ip_sum = l4.l3 == 4 ? sw_csum_fold(seg + l4.l3_off + 12, 8, 0)
				    : sw_csum_fold(seg + l4.l3_off + 8, 16, 0) +
					  sw_csum_fold(seg + l4.dst_off, 16, 0);
		check(sw_csum_fold(seg + l4.l4_off, tcp_len, ip_sum + IPPROTO_TCP + tcp_len) ==
		      0xffff);
		off += g->len;
	}
	check(off == len);
}

/* An accepted frame (@frame as it was read): what vnet.h promises about it. */
static void check_accepted(const struct virtio_net_hdr *vh, const uint8_t *frame, uint32_t len,
			   uint32_t mtu, uint32_t offloads, const struct uplink_meta *m)
{
	uint32_t l3_off = l3_offset(frame, len);
	struct sw_l4 l4;

	check(len >= UPLINK_ETH_HLEN && len <= UPLINK_MAX_FRAME);
	check(!(m->flags & ~(UPLINK_F_CSUM_BLANK | UPLINK_F_DATA_VALIDATED)));
	check(!(m->flags & UPLINK_F_DATA_VALIDATED) || (vh->flags & VIRTIO_NET_HDR_F_DATA_VALID));
	check(!(m->flags & UPLINK_F_CSUM_BLANK) || (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
	if (vh->gso_type == VIRTIO_NET_HDR_GSO_NONE) {
		check(m->gso_type == UPLINK_GSO_NONE && m->gso_size == 0);
		check(len - l3_off <= mtu);
		if (m->flags & UPLINK_F_CSUM_BLANK) {
			check(sw_frame_parse(frame, len, &l4) == 0);
			check(l4.l4_off == vh->csum_start);
			check(vh->csum_offset ==
			      (l4.proto == IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF));
			check(offloads & (l4.l3 == 4 ? UPLINK_OFF_CSUM4 : UPLINK_OFF_CSUM6));
		}
		return;
	}
	check(vh->gso_type == VIRTIO_NET_HDR_GSO_TCPV4 || vh->gso_type == VIRTIO_NET_HDR_GSO_TCPV6);
	check(m->gso_type != UPLINK_GSO_NONE && gso2vnet(m->gso_type) == vh->gso_type);
	check(m->gso_size == vh->gso_size && m->gso_size != 0);
	check(m->flags & UPLINK_F_CSUM_BLANK);
	check(offloads & (m->gso_type == UPLINK_GSO_TCPV4 ? UPLINK_OFF_TSO4 : UPLINK_OFF_TSO6));
	check(sw_frame_parse(frame, len, &l4) == 0 && l4.proto == IPPROTO_TCP && l4.gso_ok);
	check(l4.l3 == (m->gso_type == UPLINK_GSO_TCPV4 ? 4 : 6));
	check(l4.l4_off == vh->csum_start && vh->csum_offset == TCP_CSUM_OFF);
	/* Payload to segment, and one segment (headers from L3 on, plus gso_size) fits the MTU. */
	check((uint32_t)l4.l4_off + l4.l4_len < len);
	check((uint32_t)l4.l4_off + l4.l4_len - l3_off + m->gso_size <= mtu);
	check_segments(frame, len, m);
}

/* An accepted frame maps back to a virtio header with the same offloads, accepted again. */
static void check_round_trip(const struct virtio_net_hdr *vh, uint8_t *frame, uint32_t len,
			     uint32_t mtu, uint32_t offloads, const struct uplink_meta *m)
{
	uint32_t copy = len < SW_PKT_OFFLOAD_HDR_MAX ? len : SW_PKT_OFFLOAD_HDR_MAX;
	struct virtio_net_hdr back;
	struct uplink_meta again;

	/* As a receiver sees it: from its copy of the first SW_PKT_OFFLOAD_HDR_MAX bytes. */
	check(uplink_meta2vnet(m, frame, copy, len, &back) == 0);
	check(back.gso_type == gso2vnet(m->gso_type) && back.gso_size == m->gso_size);
	if (!(m->flags & UPLINK_F_CSUM_BLANK)) {
		check(!(back.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
		return;
	}
	check(back.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM);
	check(back.csum_start == vh->csum_start && back.csum_offset == vh->csum_offset);
	if (m->gso_type != UPLINK_GSO_NONE)
		check(back.hdr_len > back.csum_start && back.hdr_len < len);
	/* The frame was not written (the checksum is left blank): the header is accepted again. */
	check(uplink_vnet2meta(&back, frame, len, mtu, offloads, &again) == 0);
	check(again.gso_type == m->gso_type && again.gso_size == m->gso_size);
	check(again.flags & UPLINK_F_CSUM_BLANK);
}

/* The other direction on its own: a guest's offload state against a header copy. */
static void check_meta2vnet(uint8_t bits, uint16_t gso_size, const uint8_t *frame, uint32_t len,
			    uint32_t hdr_len)
{
	struct uplink_meta m = {
	    .flags = bits & 3u, .gso_type = (uint8_t)((bits >> 2) & 3u), .gso_size = gso_size};
	uint32_t copied = hdr_len < len ? hdr_len : len; /* a header copy is never longer */
	struct virtio_net_hdr vh;
	uint8_t *hdr;
	int rc;

	hdr = malloc(copied ? copied : 1);
	if (!hdr)
		return;
	memcpy(hdr, frame, copied);
	rc = uplink_meta2vnet(&m, hdr, hdr_len, len, &vh);
	check(rc == 0 || rc == -EPROTO || rc == -EINVAL);
	if (rc == 0) {
		if (m.gso_type != UPLINK_GSO_NONE) {
			check(m.gso_type == UPLINK_GSO_TCPV4 || m.gso_type == UPLINK_GSO_TCPV6);
			check((m.flags & UPLINK_F_CSUM_BLANK) && m.gso_size != 0);
			check(vh.gso_type == gso2vnet(m.gso_type) && vh.gso_size == m.gso_size);
			check(vh.hdr_len <= copied);
			check(vh.csum_offset == TCP_CSUM_OFF);
		} else {
			check(vh.gso_type == VIRTIO_NET_HDR_GSO_NONE && vh.gso_size == 0);
		}
		if (m.flags & UPLINK_F_CSUM_BLANK) {
			check(vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM);
			check((uint32_t)vh.csum_start + vh.csum_offset + 2 <= copied);
		} else {
			check(!(vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
		}
	}
	free(hdr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	uint32_t len, mtu, offloads, field, i;
	uint8_t *frame, *orig;
	size_t given;
	int rc;

	if (size < HDR_BYTES)
		return 0;
	memcpy(&vh, data, sizeof(vh));
	mtu = (uint32_t)data[10] | (uint32_t)data[11] << 8;
	if (mtu < UPLINK_MIN_MTU)
		mtu = UPLINK_MIN_MTU;
	if (mtu > UPLINK_MAX_MTU)
		mtu = UPLINK_MAX_MTU;
	offloads = data[12] & 0x0fu;
	given = size - HDR_BYTES;
	if (given > 2 * UPLINK_MAX_FRAME)
		given = 2 * UPLINK_MAX_FRAME; /* long enough to be oversized */
	len = (uint32_t)given + (uint32_t)(data[12] >> 4) * PAD_PAGE;

	frame = calloc(1, len ? len : 1);
	orig = calloc(1, len ? len : 1);
	if (!frame || !orig)
		goto out;
	memcpy(frame, data + HDR_BYTES, given);
	memcpy(orig, frame, len);

	if (len >= UPLINK_ETH_HLEN)
		check_parse(frame, len);
	check_meta2vnet(data[13], vh.gso_size, frame, len, vh.hdr_len);

	rc = uplink_vnet2meta(&vh, frame, len, mtu, offloads, &m);
	check(rc == 0 || (rc < 0 && rc >= uplink_drop_reason(UPLINK_DROP_NR - 1)));
	if (rc < 0)
		check(strcmp(uplink_drop_name((enum uplink_drop)(-rc - 1)), "rx_unknown") != 0);

	/* Written at most at the checksum field, and only to compute a checksum. */
	field = (uint32_t)vh.csum_start + vh.csum_offset;
	for (i = 0; i < len; i++) {
		if (frame[i] == orig[i])
			continue;
		check(rc == 0 && (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM));
		check(!(m.flags & UPLINK_F_CSUM_BLANK));
		check(i == field || i == field + 1);
	}
	if (rc < 0)
		goto out;

	check_accepted(&vh, orig, len, mtu, offloads, &m);
	if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(m.flags & UPLINK_F_CSUM_BLANK))
		check_sw_csum(&vh, orig, frame, len);
	check_round_trip(&vh, frame, len, mtu, offloads, &m);
out:
	free(orig);
	free(frame);
	return 0;
}
