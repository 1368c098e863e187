// SPDX-License-Identifier: MIT
/* vnet.c - virtio-net header <-> netif offload mapping and TAP frame validation (pure) */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "switch/frame.h"
#include "switch/pkt.h"
#include "uplink/vnet.h"

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

static int vnet2meta_gso(const struct virtio_net_hdr *vh, const uint8_t *frame, uint32_t len,
			 uint32_t mtu, uint32_t offloads, struct uplink_meta *out)
{
	uint8_t type = vh->gso_type;
	struct sw_l4 l4;
	uint32_t hdrs;

	if (type != VIRTIO_NET_HDR_GSO_TCPV4 && type != VIRTIO_NET_HDR_GSO_TCPV6)
		return uplink_drop_reason(UPLINK_DROP_GSO); /* UDP, ECN (never offered) */
	if (!(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || vh->gso_size == 0)
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (sw_frame_parse(frame, len, &l4) < 0 || l4.proto != IPPROTO_TCP || !l4.gso_ok)
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (type == VIRTIO_NET_HDR_GSO_TCPV4 ? (l4.l3 != 4 || !(offloads & UPLINK_OFF_TSO4))
					     : (l4.l3 != 6 || !(offloads & UPLINK_OFF_TSO6)))
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (vh->csum_start != l4.l4_off || vh->csum_offset != SW_FRAME_TCP_CSUM_OFF)
		return uplink_drop_reason(UPLINK_DROP_CSUM);
	hdrs = (uint32_t)l4.l4_off + l4.l4_len;
	if (hdrs >= len)
		return uplink_drop_reason(UPLINK_DROP_GSO); /* nothing to segment */
	/* Headers no receiver would find in its copy of them (IPv6 options, say). */
	if (hdrs > SW_PKT_OFFLOAD_HDR_MAX)
		return uplink_drop_reason(UPLINK_DROP_GSO);
	if (hdrs - l4.l3_off + vh->gso_size > mtu)
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
	struct sw_l4 l4;

	memset(out, 0, sizeof(*out));
	if (len < UPLINK_ETH_HLEN)
		return uplink_drop_reason(UPLINK_DROP_RUNT);
	if (len > UPLINK_MAX_FRAME)
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	/*
	 * A checksum starts past the link header (the Ethernet header and its
	 * tag): one over them would be written into the addresses or the tag
	 * after the size checks had counted that tag.
	 */
	if ((vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    (start >= len || field + 2 > len || start < sw_frame_l3_off(frame, len)))
		return uplink_drop_reason(UPLINK_DROP_CSUM);
	if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		return vnet2meta_gso(vh, frame, len, mtu, offloads, out);
	if (len > sw_frame_l3_off(frame, len) + mtu)
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	if (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		/* Left blank only where every receiver finds the header it needs: else computed. */
		bool ok = sw_frame_parse(frame, len, &l4) == 0 && l4.l4_off == start &&
			  vh->csum_offset == (l4.proto == IPPROTO_TCP ? SW_FRAME_TCP_CSUM_OFF
								      : SW_FRAME_UDP_CSUM_OFF) &&
			  (offloads & (l4.l3 == 4 ? UPLINK_OFF_CSUM4 : UPLINK_OFF_CSUM6)) &&
			  (uint32_t)l4.l4_off + l4.l4_len <= SW_PKT_OFFLOAD_HDR_MAX;

		if (ok)
			out->flags |= UPLINK_F_CSUM_BLANK;
		else
			sw_csum_complete(frame, len, start, field);
	}
	if (vh->flags & VIRTIO_NET_HDR_F_DATA_VALID)
		out->flags |= UPLINK_F_DATA_VALIDATED;
	return 0;
}

int uplink_meta2vnet(const struct uplink_meta *m, const uint8_t *hdr, uint32_t hdr_len,
		     uint32_t len, struct virtio_net_hdr *vh)
{
	struct sw_l4 l4;

	memset(vh, 0, sizeof(*vh));
	if (hdr_len > len)
		hdr_len = len;
	if (m->gso_type != UPLINK_GSO_NONE) {
		if (!(m->flags & UPLINK_F_CSUM_BLANK) || m->gso_size == 0)
			return -EINVAL;
		if (sw_frame_parse(hdr, hdr_len, &l4) < 0)
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
		vh->csum_offset = SW_FRAME_TCP_CSUM_OFF;
		return 0;
	}
	if (m->flags & UPLINK_F_CSUM_BLANK) {
		if (sw_frame_parse(hdr, hdr_len, &l4) < 0)
			return -EPROTO;
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = l4.l4_off;
		vh->csum_offset =
		    l4.proto == IPPROTO_TCP ? SW_FRAME_TCP_CSUM_OFF : SW_FRAME_UDP_CSUM_OFF;
	} else if (m->flags & UPLINK_F_DATA_VALIDATED) {
		vh->flags = VIRTIO_NET_HDR_F_DATA_VALID;
	}
	return 0;
}
