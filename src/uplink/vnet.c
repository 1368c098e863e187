// SPDX-License-Identifier: MIT
/* vnet.c - virtio-net header <-> netif offload mapping and TAP frame validation (pure) */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "uplink/vnet.h"

/* EtherTypes and IPv6 extension headers we walk. */
#define ETH_P_8021Q_ 0x8100u
#define ETH_P_IPV4_  0x0800u
#define ETH_P_IPV6_  0x86ddu
#define IP6_HOPOPTS  0u
#define IP6_ROUTING  43u
#define IP6_FRAGMENT 44u
#define IP6_DSTOPTS  60u

/* Bound on IPv6 extension headers walked: a frame cannot make us loop long. */
#define IP6_MAX_EXT 8u

/* Where the checksum field is inside the transport header (RFC 793, RFC 768). */
#define TCP_CSUM_OFF 16u
#define UDP_CSUM_OFF 6u

/* Smallest headers: IPv4 without options, IPv6 fixed, TCP without options, UDP. */
#define IPV4_MIN_HLEN 20u
#define IPV6_HLEN     40u
#define TCP_MIN_HLEN  20u
#define UDP_HLEN      8u

static const char *const drop_names[UPLINK_DROP_NR] = {
    [UPLINK_DROP_RUNT] = "rx_runt",
    [UPLINK_DROP_OVERSIZE] = "rx_oversize",
    [UPLINK_DROP_GSO] = "rx_bad_gso",
    [UPLINK_DROP_CSUM] = "rx_bad_csum",
};

const char *uplink_drop_name(enum uplink_drop r)
{
	return (unsigned int)r < UPLINK_DROP_NR ? drop_names[r] : "rx_unknown";
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint16_t uplink_csum_fold(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint64_t s = sum;
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The L3 header offset (after an optional 802.1Q tag) and the EtherType. */
static uint32_t l2_parse(const uint8_t *p, uint32_t len, uint16_t *ethertype)
{
	*ethertype = be16(p + 12);
	if (*ethertype == ETH_P_8021Q_ && len >= UPLINK_ETH_HLEN + UPLINK_VLAN_HLEN) {
		*ethertype = be16(p + 16);
		return UPLINK_ETH_HLEN + UPLINK_VLAN_HLEN;
	}
	return UPLINK_ETH_HLEN;
}

int uplink_vnet_parse(const uint8_t *p, uint32_t len, struct uplink_l4 *out)
{
	uint32_t off, hl;
	uint16_t et;
	uint8_t proto;

	memset(out, 0, sizeof(*out));
	if (len < UPLINK_ETH_HLEN)
		return -EPROTO;
	off = l2_parse(p, len, &et);
	if (et == ETH_P_IPV4_) {
		if (len < off + IPV4_MIN_HLEN || (p[off] >> 4) != 4)
			return -EPROTO;
		hl = (p[off] & 0x0fu) * 4u;
		/* MF set or a fragment offset: no transport header to speak of. */
		if (hl < IPV4_MIN_HLEN || off + hl > len || (be16(p + off + 6) & 0x3fffu))
			return -EPROTO;
		proto = p[off + 9];
		out->l3 = 4;
		off += hl;
	} else if (et == ETH_P_IPV6_) {
		unsigned int i;

		if (len < off + IPV6_HLEN || (p[off] >> 4) != 6)
			return -EPROTO;
		proto = p[off + 6];
		off += IPV6_HLEN;
		for (i = 0; i < IP6_MAX_EXT; i++) {
			if (proto != IP6_HOPOPTS && proto != IP6_ROUTING && proto != IP6_DSTOPTS)
				break;
			if (len < off + 8)
				return -EPROTO;
			proto = p[off];
			off +=
			    (p[off + 1] + 1u) * 8u; /* RFC 8200: length in 8-octet units, less 1 */
		}
		if (i == IP6_MAX_EXT || proto == IP6_FRAGMENT)
			return -EPROTO;
		out->l3 = 6;
	} else {
		return -EPROTO;
	}
	out->proto = proto;
	if (proto == IPPROTO_TCP) {
		if (len < off + TCP_MIN_HLEN)
			return -EPROTO;
		hl = (p[off + 12] >> 4) * 4u;
		if (hl < TCP_MIN_HLEN || off + hl > len)
			return -EPROTO;
	} else if (proto == IPPROTO_UDP) {
		hl = UDP_HLEN;
		if (off + hl > len)
			return -EPROTO;
	} else {
		return -EPROTO;
	}
	out->l4_off = (uint16_t)off;
	out->l4_len = (uint16_t)hl;
	return 0;
}

/* Compute a blank checksum in software: the field holds the pseudo-header sum. */
static void csum_in_software(uint8_t *frame, uint32_t len, uint32_t start, uint32_t field)
{
	uint16_t c = (uint16_t)~uplink_csum_fold(frame + start, len - start, 0);

	/* 0 means "no checksum" to UDP; one's complement has two zeroes (RFC 768). */
	if (c == 0)
		c = 0xffff;
	frame[field] = (uint8_t)(c >> 8);
	frame[field + 1] = (uint8_t)c;
}

static int vnet2meta_gso(const struct virtio_net_hdr *vh, const uint8_t *frame, uint32_t len,
			 uint32_t mtu, uint32_t offloads, struct uplink_meta *out)
{
	uint8_t type = vh->gso_type;
	struct uplink_l4 l4;
	uint32_t l3_off, hdrs;
	uint16_t et;

	if (type != VIRTIO_NET_HDR_GSO_TCPV4 && type != VIRTIO_NET_HDR_GSO_TCPV6)
		return uplink_drop_reason(UPLINK_DROP_GSO); /* UDP, ECN (never offered) */
	if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || vh->gso_size == 0)
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (uplink_vnet_parse(frame, len, &l4) < 0 || l4.proto != IPPROTO_TCP)
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (type == VIRTIO_NET_HDR_GSO_TCPV4 ? (l4.l3 != 4 || !(offloads & UPLINK_OFF_TSO4))
					     : (l4.l3 != 6 || !(offloads & UPLINK_OFF_TSO6)))
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (vh->csum_start != l4.l4_off || vh->csum_offset != TCP_CSUM_OFF)
		return uplink_drop_reason(UPLINK_DROP_CSUM);
	hdrs = (uint32_t)l4.l4_off + l4.l4_len;
	if (hdrs >= len)
		return uplink_drop_reason(UPLINK_DROP_GSO); /* nothing to segment */
	l3_off = l2_parse(frame, len, &et);
	if (hdrs - l3_off + vh->gso_size > mtu)
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	out->flags = UPLINK_F_CSUM_BLANK;
	out->gso_type = type == VIRTIO_NET_HDR_GSO_TCPV4 ? UPLINK_GSO_TCPV4 : UPLINK_GSO_TCPV6;
	out->gso_size = vh->gso_size;
	return 0;
}

int uplink_vnet2meta(const struct virtio_net_hdr *vh, uint8_t *frame, uint32_t len, uint32_t mtu,
		     uint32_t offloads, struct uplink_meta *out)
{
	uint32_t start = vh->csum_start, field = start + vh->csum_offset;
	struct uplink_l4 l4;
	uint16_t et;

	memset(out, 0, sizeof(*out));
	if (len < UPLINK_ETH_HLEN)
		return uplink_drop_reason(UPLINK_DROP_RUNT);
	if (len > UPLINK_MAX_FRAME)
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && (start >= len || field + 2 > len))
		return uplink_drop_reason(UPLINK_DROP_CSUM);
	if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		return vnet2meta_gso(vh, frame, len, mtu, offloads, out);
	if (len > l2_parse(frame, len, &et) + mtu)
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		bool ok =
		    uplink_vnet_parse(frame, len, &l4) == 0 && l4.l4_off == start &&
		    vh->csum_offset == (l4.proto == IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF) &&
		    (offloads & (l4.l3 == 4 ? UPLINK_OFF_CSUM4 : UPLINK_OFF_CSUM6));

		if (ok)
			out->flags |= UPLINK_F_CSUM_BLANK;
		else
			csum_in_software(frame, len, start, field);
	}
	if (vh->flags & VIRTIO_NET_HDR_F_DATA_VALID)
		out->flags |= UPLINK_F_DATA_VALIDATED;
	return 0;
}

int uplink_meta2vnet(const struct uplink_meta *m, const uint8_t *hdr, uint32_t hdr_len,
		     uint32_t len, struct virtio_net_hdr *vh)
{
	struct uplink_l4 l4;

	memset(vh, 0, sizeof(*vh));
	if (hdr_len > len)
		hdr_len = len;
	if (m->gso_type != UPLINK_GSO_NONE) {
		if (!(m->flags & UPLINK_F_CSUM_BLANK) || m->gso_size == 0)
			return -EINVAL;
		if (uplink_vnet_parse(hdr, hdr_len, &l4) < 0)
			return -EPROTO;
		if (l4.proto != IPPROTO_TCP || l4.l3 != (m->gso_type == UPLINK_GSO_TCPV4 ? 4 : 6) ||
		    (m->gso_type != UPLINK_GSO_TCPV4 && m->gso_type != UPLINK_GSO_TCPV6))
			return -EINVAL;
		vh->gso_type = m->gso_type == UPLINK_GSO_TCPV4 ? VIRTIO_NET_HDR_GSO_TCPV4
							       : VIRTIO_NET_HDR_GSO_TCPV6;
		vh->gso_size = m->gso_size;
		vh->hdr_len = (uint16_t)(l4.l4_off + l4.l4_len);
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = l4.l4_off;
		vh->csum_offset = TCP_CSUM_OFF;
		return 0;
	}
	if (m->flags & UPLINK_F_CSUM_BLANK) {
		if (uplink_vnet_parse(hdr, hdr_len, &l4) < 0)
			return -EPROTO;
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = l4.l4_off;
		vh->csum_offset = l4.proto == IPPROTO_TCP ? TCP_CSUM_OFF : UDP_CSUM_OFF;
	} else if (m->flags & UPLINK_F_DATA_VALIDATED) {
		vh->flags = VIRTIO_NET_HDR_F_DATA_VALID;
	}
	return 0;
}
