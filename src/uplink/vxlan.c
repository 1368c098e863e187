// SPDX-License-Identifier: MIT
/* vxlan.c - VXLAN (RFC 7348): the uplink's specification and its header (see vxlan.h) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch/frame.h"
#include "uplink/vxlan.h"

__attribute__((format(printf, 3, 4))) static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal number 1..@max (0 allowed if @zero), nothing else. */
static int parse_num(const char *s, size_t len, unsigned long max, bool zero, unsigned long *out)
{
	uint64_t v = 0; /* ten digits fit, whatever the width of long */

	if (len == 0 || len > 10)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max || (!zero && v == 0))
		return -EINVAL;
	*out = v;
	return 0;
}

/* A numeric IPv4 or IPv6 address into @ss (port 0); its length, or 0. */
static socklen_t parse_addr(const char *s, size_t len, struct sockaddr_storage *ss)
{
	char buf[INET6_ADDRSTRLEN + 1];
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, buf, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return sizeof(*in6);
	}
	return 0;
}

/*
 * An IPv6 address our sockets cannot use: IPv4-mapped (they are
 * IPv6-only) or link-local (it needs an interface, and the specification
 * names none).
 */
static bool addr_v6_unusable(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	return ss->ss_family == AF_INET6 && (IN6_IS_ADDR_V4MAPPED(a6) || IN6_IS_ADDR_LINKLOCAL(a6));
}

/* Not an address one datagram can go to and come back from: any, multicast, broadcast. */
static bool addr_unicast(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);

		return a != 0 && a != 0xffffffffu && !IN_MULTICAST(a);
	}
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	return !IN6_IS_ADDR_UNSPECIFIED(a6) && !IN6_IS_ADDR_MULTICAST(a6);
}

bool uplink_vxlan_addr_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == 0;
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

bool uplink_vxlan_addr_equal(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return IN6_ARE_ADDR_EQUAL(&((const struct sockaddr_in6 *)a)->sin6_addr,
				  &((const struct sockaddr_in6 *)b)->sin6_addr);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

int uplink_vxlan_spec_parse(const char *spec, struct uplink_vxlan_spec *out, char *err,
			    size_t errlen)
{
	enum { K_ID, K_REMOTE, K_LOCAL, K_DSTPORT, K_SRCPORT, K_MTU, K_NETNS, K_NR };
	static const char *const keys[K_NR] = {"id",	  "remote", "local", "dstport",
					       "srcport", "mtu",    "netns"};
	bool seen[K_NR] = {false};
	unsigned long v;
	const char *p;

	memset(out, 0, sizeof(*out));
	out->dstport = UPLINK_VXLAN_PORT;
	out->mtu = UPLINK_VXLAN_MTU;
	if (strncmp(spec, "vxlan:", 6))
		return bad(err, errlen, "not vxlan:...");
	p = spec + 6;
	for (;;) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p), klen, vlen;
		const char *val;
		int k;

		eq = memchr(p, '=', len);
		if (!eq)
			return bad(err, errlen, "'%.*s' is not KEY=VALUE", (int)len, p);
		klen = (size_t)(eq - p);
		val = eq + 1;
		vlen = len - klen - 1;
		for (k = 0; k < K_NR; k++)
			if (strlen(keys[k]) == klen && !memcmp(p, keys[k], klen))
				break;
		if (k == K_NR)
			return bad(err, errlen,
				   "unknown key '%.*s' (id, remote, local, dstport, srcport, mtu, "
				   "netns)",
				   (int)klen, p);
		if (seen[k] && k != K_REMOTE)
			return bad(err, errlen, "%s given twice", keys[k]);
		seen[k] = true;
		switch (k) {
		case K_ID:
			if (parse_num(val, vlen, UPLINK_VXLAN_VNI_MAX, true, &v) < 0)
				return bad(err, errlen, "id must be 0..%u", UPLINK_VXLAN_VNI_MAX);
			out->vni = (uint32_t)v;
			break;
		case K_REMOTE: {
			struct sockaddr_storage *r = &out->remote[out->nremotes];
			socklen_t rlen;

			if (out->nremotes == UPLINK_VXLAN_REMOTES_MAX)
				return bad(err, errlen, "at most %u remotes",
					   UPLINK_VXLAN_REMOTES_MAX);
			rlen = parse_addr(val, vlen, r);
			if (!rlen || !addr_unicast(r) || addr_v6_unusable(r))
				return bad(err, errlen,
					   "remote must be a unicast IPv4 or IPv6 address (not "
					   "IPv4-mapped, not link-local)");
			if (out->nremotes && r->ss_family != out->remote[0].ss_family)
				return bad(err, errlen, "remotes must be of one family");
			for (unsigned int i = 0; i < out->nremotes; i++)
				if (!memcmp(&out->remote[i], r, rlen))
					return bad(err, errlen, "remote %.*s given twice",
						   (int)vlen, val);
			out->remote_len = rlen;
			out->nremotes++;
			break;
		}
		case K_LOCAL:
			out->local_len = parse_addr(val, vlen, &out->local);
			if (!out->local_len || addr_v6_unusable(&out->local))
				return bad(
				    err, errlen,
				    "local must be an IPv4 or IPv6 address (not IPv4-mapped, "
				    "not link-local)");
			/*
			 * A group or broadcast address binds, but what the remote
			 * sends to this host's own address would never be read.
			 */
			if (!uplink_vxlan_addr_any(&out->local) && !addr_unicast(&out->local))
				return bad(err, errlen,
					   "local must be a unicast address of this host or the "
					   "wildcard (not multicast, not broadcast)");
			break;
		case K_DSTPORT:
			if (parse_num(val, vlen, 65535, false, &v) < 0)
				return bad(err, errlen, "dstport must be 1..65535");
			out->dstport = (uint16_t)v;
			break;
		case K_SRCPORT: {
			const char *dash = memchr(val, '-', vlen);
			unsigned long lo, hi;

			if (!dash || parse_num(val, (size_t)(dash - val), 65535, false, &lo) < 0 ||
			    parse_num(dash + 1, vlen - (size_t)(dash - val) - 1, 65535, false,
				      &hi) < 0 ||
			    lo > hi)
				return bad(err, errlen,
					   "srcport must be MIN-MAX, 1 <= MIN <= MAX <= 65535");
			out->srcport_min = (uint16_t)lo;
			out->srcport_max = (uint16_t)hi;
			break;
		}
		case K_MTU:
			if (parse_num(val, vlen, UPLINK_VXLAN_MTU_MAX, false, &v) < 0 || v < 68)
				return bad(err, errlen, "mtu must be 68..%u", UPLINK_VXLAN_MTU_MAX);
			out->mtu = (uint32_t)v;
			break;
		case K_NETNS:
			if (vlen == 0 || vlen > UPLINK_NETNS_MAX || memchr(val, '/', vlen))
				return bad(err, errlen, "netns must be a namespace name");
			memcpy(out->netns, val, vlen);
			out->netns[vlen] = '\0';
			break;
		}
		if (!end)
			break;
		p = end + 1;
	}
	if (!seen[K_ID] || !seen[K_REMOTE])
		return bad(err, errlen, "id and remote are required");
	if (seen[K_LOCAL] && out->local.ss_family != out->remote[0].ss_family)
		return bad(err, errlen, "local and remote must be of one family");
	/* Datagrams to our own address and port would come back to us: a loop. */
	for (unsigned int i = 0; seen[K_LOCAL] && i < out->nremotes; i++)
		if (uplink_vxlan_addr_equal(&out->remote[i], &out->local))
			return bad(err, errlen,
				   "a remote is the local address: what is sent to it would come "
				   "back");
	if (!seen[K_LOCAL]) {
		/* The wildcard of remote's family: all zeroes either way. */
		out->local.ss_family = out->remote[0].ss_family;
		out->local_len = out->remote_len;
	}
	for (unsigned int i = 0; i < out->nremotes; i++)
		set_port(&out->remote[i], out->dstport);
	set_port(&out->local, out->dstport);
	if (out->dstport == UPLINK_VXLAN_PORT)
		snprintf(out->name, sizeof(out->name), "vxlan%u", out->vni);
	else
		snprintf(out->name, sizeof(out->name), "vxlan%u:%u", out->vni, out->dstport);
	return 0;
}

bool uplink_vxlan_spec_same(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b)
{
	if (a->vni != b->vni || a->dstport != b->dstport || strcmp(a->netns, b->netns) ||
	    a->remote_len != b->remote_len)
		return false;
	for (unsigned int i = 0; i < a->nremotes; i++)
		for (unsigned int j = 0; j < b->nremotes; j++)
			if (!memcmp(&a->remote[i], &b->remote[j], a->remote_len))
				return true;
	return false;
}

void uplink_vxlan_addr_str(const struct sockaddr_storage *ss, char buf[INET6_ADDRSTRLEN])
{
	if (!inet_ntop(ss->ss_family,
		       ss->ss_family == AF_INET
			   ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
			   : (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr,
		       buf, INET6_ADDRSTRLEN))
		snprintf(buf, INET6_ADDRSTRLEN, "?");
}

/* Is @port in @sp's srcport range (never, for ports the kernel picks)? */
static bool srcport_has(const struct uplink_vxlan_spec *sp, uint16_t port)
{
	return sp->srcport_min && port >= sp->srcport_min && port <= sp->srcport_max;
}

/* Sockets of one namespace and family whose local addresses overlap (equal, or either the wildcard). */
static bool local_overlaps(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b)
{
	return !strcmp(a->netns, b->netns) && a->local.ss_family == b->local.ss_family &&
	       (uplink_vxlan_addr_any(&a->local) || uplink_vxlan_addr_any(&b->local) ||
		uplink_vxlan_addr_equal(&a->local, &b->local));
}

bool uplink_vxlan_spec_shares(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b)
{
	return local_overlaps(a, b) && a->dstport == b->dstport &&
	       uplink_vxlan_addr_any(&a->local) == uplink_vxlan_addr_any(&b->local);
}

bool uplink_vxlan_spec_clash(const struct uplink_vxlan_spec *a, const struct uplink_vxlan_spec *b,
			     char *err, size_t errlen)
{
	if (!local_overlaps(a, b))
		return false;
	if (uplink_vxlan_spec_shares(a, b) && a->vni == b->vni)
		bad(err, errlen,
		    "VNI %u is given twice on UDP port %u (the VNI is how a datagram finds its "
		    "uplink: give one uplink every remote of the segment)",
		    a->vni, a->dstport);
	else if (a->dstport == b->dstport && !uplink_vxlan_spec_shares(a, b))
		bad(err, errlen,
		    "%s, on its local address, and %s, on every address, would both receive on UDP "
		    "port %u, and the first would take every datagram sent to its address (give "
		    "both one local address to share the port, or one of them another dstport)",
		    uplink_vxlan_addr_any(&a->local) ? b->name : a->name,
		    uplink_vxlan_addr_any(&a->local) ? a->name : b->name, a->dstport);
	else if (a->dstport != b->dstport &&
		 (srcport_has(a, b->dstport) || srcport_has(b, a->dstport)))
		bad(err, errlen, "the srcport range of %s holds UDP port %u, where %s receives",
		    srcport_has(a, b->dstport) ? a->name : b->name,
		    srcport_has(a, b->dstport) ? b->dstport : a->dstport,
		    srcport_has(a, b->dstport) ? b->name : a->name);
	else
		return false;
	return true;
}

void uplink_vxlan_hdr(uint8_t hdr[UPLINK_VXLAN_HLEN], uint32_t vni)
{
	hdr[0] = UPLINK_VXLAN_FLAG_I;
	hdr[1] = hdr[2] = hdr[3] = 0;
	hdr[4] = (uint8_t)(vni >> 16);
	hdr[5] = (uint8_t)(vni >> 8);
	hdr[6] = (uint8_t)vni;
	hdr[7] = 0;
}

const char *uplink_vxlan_drop_name(enum uplink_vxlan_drop d)
{
	static const char *const names[UPLINK_VXLAN_DROP_NR] = {
	    [UPLINK_VXLAN_DROP_RUNT] = "rx_runt",
	    [UPLINK_VXLAN_DROP_HEADER] = "rx_bad_header",
	    [UPLINK_VXLAN_DROP_VNI] = "rx_bad_vni",
	    [UPLINK_VXLAN_DROP_OVERSIZE] = "rx_oversize",
	    [UPLINK_VXLAN_DROP_SOURCE] = "rx_bad_source",
	    [UPLINK_VXLAN_DROP_TRUNC] = "rx_truncated",
	    [UPLINK_VXLAN_DROP_ECN] = "rx_ce_not_ect",
	};

	return (unsigned int)d < UPLINK_VXLAN_DROP_NR ? names[d] : "?";
}

int uplink_vxlan_check(const uint8_t *dgram, uint32_t len, uint32_t vni, uint32_t mtu)
{
	const uint8_t *frame = dgram + UPLINK_VXLAN_HLEN;
	uint32_t flen;

	if (len < UPLINK_VXLAN_HLEN + SW_FRAME_ETH_HLEN)
		return -(UPLINK_VXLAN_DROP_RUNT + 1);
	if (dgram[0] != UPLINK_VXLAN_FLAG_I || dgram[1] || dgram[2] || dgram[3] || dgram[7])
		return -(UPLINK_VXLAN_DROP_HEADER + 1);
	if (((uint32_t)dgram[4] << 16 | (uint32_t)dgram[5] << 8 | dgram[6]) != vni)
		return -(UPLINK_VXLAN_DROP_VNI + 1);
	flen = len - UPLINK_VXLAN_HLEN;
	if (flen > sw_frame_l3_off(frame, flen) + mtu)
		return -(UPLINK_VXLAN_DROP_OVERSIZE + 1);
	return (int)flen;
}

/*
 * Where @frame's IP header starts and which version it is (4, 6; 0: not
 * IP), from its first two bytes, which hold the ECN field either way.
 */
static int ip_header(const uint8_t *frame, uint32_t len, uint32_t *off)
{
	uint32_t l3;
	uint16_t type;

	if (len < SW_FRAME_ETH_HLEN)
		return 0;
	l3 = sw_frame_l3_off(frame, len);
	if (len < l3 + 2)
		return 0;
	type = (uint16_t)(frame[l3 - 2] << 8 | frame[l3 - 1]);
	*off = l3;
	if (type == 0x0800 && frame[l3] >> 4 == 4 && (frame[l3] & 0x0f) >= 5)
		return 4;
	if (type == 0x86dd && frame[l3] >> 4 == 6)
		return 6;
	return 0;
}

/* The ECN field of the IP header at @ip (version @v). */
static uint8_t ecn_of(const uint8_t *ip, int v)
{
	return v == 4 ? ip[1] & UPLINK_ECN_MASK : (ip[1] >> 4) & UPLINK_ECN_MASK;
}

uint8_t uplink_vxlan_ecn_inner(const uint8_t *frame, uint32_t len)
{
	uint32_t l3;
	int v = ip_header(frame, len, &l3);

	return v ? ecn_of(frame + l3, v) : 0;
}

int uplink_vxlan_ecn_decap(uint8_t *frame, uint32_t len, uint8_t outer)
{
	uint32_t l3;
	int v;
	uint8_t *ip, inner, want;

	outer &= UPLINK_ECN_MASK;
	if (outer != UPLINK_ECN_CE && outer != UPLINK_ECN_ECT1)
		return 0;
	v = ip_header(frame, len, &l3);
	if (!v || (v == 4 && len < l3 + 20) || (v == 6 && len < l3 + 40))
		return 0; /* not IP: nothing to carry the mark (RFC 6040, as Linux) */
	ip = frame + l3;
	inner = ecn_of(ip, v);
	if (outer == UPLINK_ECN_CE && inner == 0)
		return -(UPLINK_VXLAN_DROP_ECN + 1);
	if (outer == UPLINK_ECN_CE)
		want = UPLINK_ECN_CE;
	else if (inner == UPLINK_ECN_ECT0)
		want = UPLINK_ECN_ECT1;
	else
		return 0;
	if (want == inner)
		return 0;
	if (v == 4) {
		/* RFC 1624: the checksum follows the 16-bit word of version, IHL and TOS. */
		uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]), new, sum;
		uint32_t acc;

		ip[1] = (uint8_t)((ip[1] & ~UPLINK_ECN_MASK) | want);
		new = (uint16_t)(ip[0] << 8 | ip[1]);
		acc = (uint16_t) ~(ip[10] << 8 | ip[11]);
		acc += (uint16_t)~old;
		acc += new;
		acc = (acc & 0xffff) + (acc >> 16);
		acc = (acc & 0xffff) + (acc >> 16);
		sum = (uint16_t)~acc;
		ip[10] = (uint8_t)(sum >> 8);
		ip[11] = (uint8_t)sum;
	} else {
		ip[1] = (uint8_t)((ip[1] & ~(UPLINK_ECN_MASK << 4)) | want << 4);
	}
	return 0;
}

/* FNV-1a over @n bytes, continuing from @h. */
static uint32_t fnv1a(uint32_t h, const uint8_t *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

uint32_t uplink_vxlan_flow_hash(const uint8_t *hdr, uint32_t len)
{
	uint32_t h = 2166136261u;
	struct sw_l4 l4;

	if (sw_frame_parse(hdr, len, &l4) == 0) {
		/* Addresses (v4: 12..19 of the header, v6: 8..39), protocol, ports. */
		if (l4.l3 == 4)
			h = fnv1a(h, hdr + l4.l3_off + 12, 8);
		else
			h = fnv1a(h, hdr + l4.l3_off + 8, 32);
		h = fnv1a(h, &l4.proto, 1);
		h = fnv1a(h, hdr + l4.l4_off, 4);
	} else {
		h = fnv1a(h, hdr, len < SW_FRAME_ETH_HLEN ? len : SW_FRAME_ETH_HLEN);
	}
	/* Mix the low bits (a port is picked by h % n). */
	h ^= h >> 16;
	h *= 0x45d9f3bu;
	h ^= h >> 16;
	return h;
}
