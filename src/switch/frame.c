// SPDX-License-Identifier: MIT
/* frame.c - pure functions on Ethernet frames: transport header, checksums, TCP segmentation */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "switch/frame.h"
#include "switch/pkt.h"

_Static_assert(SW_TSO_MAX_HDRS >= SW_PKT_OFFLOAD_HDR_MAX,
	       "an offloaded frame's headers can be cut into segments");

/* EtherTypes and IPv6 extension headers we walk. */
#define ETH_P_8021Q_  0x8100u
#define ETH_P_8021AD_ 0x88a8u
#define ETH_P_IPV4_   0x0800u
#define ETH_P_IPV6_   0x86ddu
#define IP6_HOPOPTS   0u
#define IP6_ROUTING   43u
#define IP6_FRAGMENT  44u
#define IP6_DSTOPTS   60u
#define IP6_AH	      51u

/* Routing header types whose final destination we can find (RFC 5095, RFC 6275, RFC 8754). */
#define IP6_RT_TYPE0 0u
#define IP6_RT_TYPE2 2u
#define IP6_RT_SRH   4u

/* Bound on IPv6 extension headers walked: a frame cannot make us loop long. */
#define IP6_MAX_EXT 8u

/* Smallest headers: IPv4 without options, IPv6 fixed, TCP without options, UDP. */
#define IPV4_MIN_HLEN 20u
#define IPV6_HLEN     40u
#define TCP_MIN_HLEN  20u
#define UDP_HLEN      8u

/* TCP flags (RFC 793, RFC 3168) in header byte 13. */
#define TCP_FIN 0x01u
#define TCP_PSH 0x08u
#define TCP_CWR 0x80u

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

uint16_t sw_csum_fold(const uint8_t *p, uint32_t len, uint32_t sum)
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

void sw_csum_complete(uint8_t *frame, uint32_t len, uint32_t start, uint32_t field)
{
	uint16_t c = (uint16_t)~sw_csum_fold(frame + start, len - start, 0);

	/* 0 means "no checksum" to UDP; one's complement has two zeroes (RFC 768). */
	put_be16(frame + field, c ? c : 0xffff);
}

uint32_t sw_frame_l3_off(const uint8_t *p, uint32_t len)
{
	uint16_t tpid = be16(p + 12);

	/* one tag, as Linux allows one past the MTU (a service tag too: 802.1ad) */
	if ((tpid == ETH_P_8021Q_ || tpid == ETH_P_8021AD_) &&
	    len >= SW_FRAME_ETH_HLEN + SW_FRAME_VLAN_HLEN)
		return SW_FRAME_ETH_HLEN + SW_FRAME_VLAN_HLEN;
	return SW_FRAME_ETH_HLEN;
}

/*
 * Where a routing header at @rh, @n 8-octet units after its first 8 and
 * with segments left, says the packet's final destination is: the address
 * a transport checksum's pseudo-header holds (RFC 8200 8.1).  0 if it does
 * not say in a way we read (RPL's compressed addresses, an empty list).
 */
static uint32_t ip6_rt_final(const uint8_t *p, uint32_t rh, uint32_t n)
{
	uint8_t type = p[rh + 2];

	if ((type == IP6_RT_TYPE0 || type == IP6_RT_TYPE2) && n >= 2)
		return rh + 8 + (n / 2 - 1) * 16; /* the last address listed */
	if (type == IP6_RT_SRH && n >= 2)
		return rh + 8; /* Segment List[0], the last segment */
	return 0;
}

/*
 * Walk IPv6 extension headers from *@off, where header *@proto starts, as
 * Linux's checksum set-up does: hop-by-hop, routing and destination options,
 * AH, and a fragment header that is not a fragment (offset 0, M 0: an atomic
 * fragment, RFC 6946).  At most IP6_MAX_EXT.  Leaves *@off and *@proto at the
 * first other header; a routing header may move @out->dst_off, and a
 * fragment or AH header, or a routing header whose final destination we do
 * not know, clears @out->gso_ok.
 */
static int ip6_walk(const uint8_t *p, uint32_t len, uint32_t *off, uint8_t *proto,
		    struct sw_l4 *out)
{
	uint32_t o = *off;
	uint8_t nh = *proto;

	for (unsigned int i = 0;; i++) {
		uint32_t hl;

		if (nh != IP6_HOPOPTS && nh != IP6_ROUTING && nh != IP6_DSTOPTS &&
		    nh != IP6_FRAGMENT && nh != IP6_AH)
			break;
		if (i == IP6_MAX_EXT || len < o + 8)
			return -EPROTO; /* a ninth, or one cut short */
		if (nh == IP6_FRAGMENT) {
			/* An offset or more to come: the transport header is elsewhere or cut. */
			if (be16(p + o + 2) & 0xfff9u)
				return -EPROTO;
			hl = 8;
			out->gso_ok = false; /* Linux's GSO does not cut these either */
		} else if (nh == IP6_AH) {
			hl = (p[o + 1] + 2u) * 4u; /* RFC 4302: in 4-octet units, less 2 */
			out->gso_ok = false;	   /* its ICV covers the payload */
		} else {
			hl = (p[o + 1] + 1u) * 8u; /* RFC 8200: in 8-octet units, less 1 */
			if (nh == IP6_ROUTING && p[o + 3] != 0) {
				uint32_t fin = ip6_rt_final(p, o, p[o + 1]);

				if (fin)
					out->dst_off = (uint16_t)fin;
				else
					out->gso_ok = false;
			}
		}
		nh = p[o];
		o += hl;
	}
	*off = o;
	*proto = nh;
	return 0;
}

int sw_frame_parse(const uint8_t *p, uint32_t len, struct sw_l4 *out)
{
	uint32_t off, hl;
	uint16_t et;
	uint8_t proto;

	memset(out, 0, sizeof(*out));
	out->gso_ok = true;
	if (len < SW_FRAME_ETH_HLEN)
		return -EPROTO;
	off = sw_frame_l3_off(p, len);
	et = be16(p + off - 2);
	out->l3_off = (uint16_t)off;
	if (et == ETH_P_IPV4_) {
		if (len < off + IPV4_MIN_HLEN || (p[off] >> 4) != 4)
			return -EPROTO;
		hl = (p[off] & 0x0fu) * 4u;
		/* MF set or a fragment offset: no transport header to speak of. */
		if (hl < IPV4_MIN_HLEN || off + hl > len || (be16(p + off + 6) & 0x3fffu))
			return -EPROTO;
		proto = p[off + 9];
		out->l3 = 4;
		out->dst_off = (uint16_t)(off + 16);
		off += hl;
	} else if (et == ETH_P_IPV6_) {
		if (len < off + IPV6_HLEN || (p[off] >> 4) != 6)
			return -EPROTO;
		proto = p[off + 6];
		out->dst_off = (uint16_t)(off + 24);
		off += IPV6_HLEN;
		if (ip6_walk(p, len, &off, &proto, out) < 0)
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

/* The pseudo-header sum of a TCP segment of @tcp_len bytes (RFC 793, RFC 8200 8.1). */
static uint32_t pseudo_sum(const uint8_t *hdr, const struct sw_l4 *l4, uint32_t tcp_len)
{
	const uint8_t *ip = hdr + l4->l3_off;

	if (l4->l3 == 4)
		return sw_csum_fold(ip + 12, 8, 0) + IPPROTO_TCP + tcp_len;
	return sw_csum_fold(ip + 8, 16, 0) + sw_csum_fold(hdr + l4->dst_off, 16, 0) + IPPROTO_TCP +
	       (tcp_len >> 16) + (tcp_len & 0xffff);
}

uint16_t sw_tcp_pseudo(const uint8_t *frame, const struct sw_l4 *l4, uint32_t tcp_len)
{
	return sw_csum_fold(NULL, 0, pseudo_sum(frame, l4, tcp_len));
}

/*
 * Rewrite segment @i's headers (a copy of the frame's) for @seglen payload
 * bytes from sequence number @seq; the TCP checksum is left blank.
 */
static void seg_headers(uint8_t *h, const struct sw_l4 *l4, uint32_t hdrs, uint32_t i, uint32_t seq,
			uint32_t seglen, bool last)
{
	uint8_t *ip = h + l4->l3_off, *tcp = h + l4->l4_off;
	uint32_t tcp_len = l4->l4_len + seglen;

	if (l4->l3 == 4) {
		uint32_t ihl = (ip[0] & 0x0fu) * 4u;

		put_be16(ip + 2, (uint16_t)(hdrs - l4->l3_off + seglen));
		put_be16(ip + 4, (uint16_t)(be16(ip + 4) + i));
		put_be16(ip + 10, 0);
		put_be16(ip + 10, (uint16_t)~sw_csum_fold(ip, ihl, 0));
	} else {
		put_be16(ip + 4, (uint16_t)(hdrs - l4->l3_off - IPV6_HLEN + seglen));
	}
	put_be32(tcp + 4, seq);
	if (!last)
		tcp[13] &= (uint8_t) ~(TCP_FIN | TCP_PSH);
	if (i)
		tcp[13] &= (uint8_t)~TCP_CWR;
	put_be16(tcp + SW_FRAME_TCP_CSUM_OFF, sw_csum_fold(NULL, 0, pseudo_sum(h, l4, tcp_len)));
}

int sw_tso_segment(const uint8_t *frame, uint32_t len, uint8_t gso_type, uint16_t mss, bool blank,
		   uint8_t *hdrbuf, uint32_t hdrbuf_len, struct sw_seg *segs, unsigned int max_segs)
{
	struct sw_l4 l4;
	uint32_t hdrs, payload, nseg, seq;

	if (mss == 0 || (gso_type != SW_GSO_TCPV4 && gso_type != SW_GSO_TCPV6))
		return -EINVAL;
	if (sw_frame_parse(frame, len, &l4) < 0 || l4.proto != IPPROTO_TCP || !l4.gso_ok ||
	    l4.l3 != (gso_type == SW_GSO_TCPV4 ? 4 : 6))
		return -EPROTO;
	hdrs = (uint32_t)l4.l4_off + l4.l4_len;
	if (hdrs >= len || hdrs > SW_TSO_MAX_HDRS)
		return -EPROTO;
	payload = len - hdrs;
	nseg = (payload + mss - 1) / mss;
	if (nseg > max_segs || (uint64_t)nseg * hdrs > hdrbuf_len)
		return -E2BIG;
	seq = be32(frame + l4.l4_off + 4);
	for (uint32_t i = 0; i < nseg; i++) {
		uint8_t *h = hdrbuf + i * hdrs;
		uint32_t off = hdrs + i * mss;
		uint32_t seglen = len - off < mss ? len - off : mss;

		memcpy(h, frame, hdrs);
		seg_headers(h, &l4, hdrs, i, seq + i * (uint32_t)mss, seglen, i + 1 == nseg);
		if (!blank) {
			uint8_t *field = h + l4.l4_off + SW_FRAME_TCP_CSUM_OFF;
			uint32_t sum = sw_csum_fold(h + l4.l4_off, l4.l4_len, 0);

			put_be16(field, (uint16_t)~sw_csum_fold(frame + off, seglen, sum));
		}
		segs[i] =
		    (struct sw_seg){.hdr = h, .hdr_len = (uint16_t)hdrs, .off = off, .len = seglen};
	}
	return (int)nseg;
}
