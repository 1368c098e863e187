// SPDX-License-Identifier: MIT
/* uplink_vxlan_fuzz.c - libFuzzer harness for the VXLAN uplink's datagram checks and specification */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "switch/frame.h"
#include "uplink/vxlan.h"

/*
 * Input layout: byte 0 picks what is fuzzed.
 *
 *   even: a datagram as the remote (or anyone) sends it
 *     1..3   our VNI, big endian
 *     4..5   our MTU, little endian, clamped to 68..UPLINK_VXLAN_MTU_MAX
 *     6..    the UDP payload, given to uplink_vxlan_check() in a heap copy of
 *            exactly its size (the sanitizers see any read past it); with
 *            bit 3 of byte 0 set, its first 8 bytes are replaced by our
 *            own header (uplink_vxlan_hdr()), so that the frames that
 *            should pass are tried as often as the ones that should not
 *   odd: an --uplink argument, 1.. as a NUL-terminated string
 *
 * The promises checked are the ones vxlan.h documents, against a model
 * written here from RFC 7348 and RFC 6040 rather than read off the code.
 * A datagram: the verdict is the model's, reason for reason (runt, then
 * header, then VNI, then a frame over the MTU past its network header,
 * one 802.1Q or 802.1ad tag allowed), an accepted one's length the
 * frame's (and the same bytes as a frame's header go through the flow
 * hash).  Its frame then takes an outer ECN field (bits 1..2 of byte 0),
 * RFC 6040's table: Not-ECT or ECT(0) outside changes nothing; ECT(1)
 * outside makes an ECT(0) packet ECT(1); CE outside makes an ECN-capable
 * packet CE and drops a Not-ECT one, unchanged; a frame that is not IP
 * passes as it is.  Nothing but the ECN field (and the IPv4 checksum)
 * changes, and a right IPv4 header checksum stays right.  A
 * specification: parsed, it has a VNI, port and MTU in range, a unicast
 * remote and a local address of its family (unicast or the wildcard, none
 * of the remotes), both on dstport, a source port range that is none or 1
 * <= MIN <= MAX, its name from its VNI and port, and it clashes with
 * itself (one port); refused, a reason.  A broken promise traps.
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

/* Whether the IPv4 header at @ip (@len bytes there) has a right checksum. */
static int ipv4_csum_ok(const uint8_t *ip, uint32_t len)
{
	uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4;

	return hl >= 20 && hl <= len && sw_csum_fold(ip, hl, 0) == 0xffff;
}

/* The model's IP header of @f: its offset in @l3 and its version (4, 6), or 0 when not IP. */
static int model_ip(const uint8_t *f, uint32_t len, uint32_t *l3)
{
	uint16_t type;

	*l3 = 14;
	if (len >= 18 && ((f[12] == 0x81 && f[13] == 0x00) || (f[12] == 0x88 && f[13] == 0xa8)))
		*l3 = 18;
	if (len < *l3 + 2)
		return 0;
	type = (uint16_t)(f[*l3 - 2] << 8 | f[*l3 - 1]);
	if (type == 0x0800 && f[*l3] >> 4 == 4 && (f[*l3] & 0x0f) >= 5 && len >= *l3 + 20)
		return 4;
	if (type == 0x86dd && f[*l3] >> 4 == 6 && len >= *l3 + 40)
		return 6;
	return 0;
}

/* The ECN field of IP version @v's header at @ip, and the other bits of its byte 1. */
static uint8_t model_ecn(const uint8_t *ip, int v)
{
	return v == 4 ? ip[1] & 3 : (ip[1] >> 4) & 3;
}

static uint8_t model_rest(const uint8_t *ip, int v)
{
	return v == 4 ? ip[1] & 0xfc : ip[1] & 0xcf;
}

static void fuzz_ecn(uint8_t *f, uint32_t len, uint8_t outer)
{
	uint32_t ml3;
	int mv = model_ip(f, len, &ml3);
	uint8_t e = mv ? model_ecn(f + ml3, mv) : 0, rest = mv ? model_rest(f + ml3, mv) : 0;
	int model_drop = mv && outer == 3 && e == 0;
	/* RFC 6040, 4.2: the inner field after decapsulation. */
	uint8_t want = !mv ? 0 : outer == 3 ? 3 : outer == 1 && e == 2 ? 1 : e;
	uint8_t *before = malloc(len);
	uint32_t l3 = sw_frame_l3_off(f, len);
	uint8_t inner = uplink_vxlan_ecn_inner(f, len);
	int v4 = len >= l3 + 20 && f[l3 - 2] == 0x08 && f[l3 - 1] == 0x00 && f[l3] >> 4 == 4 &&
		 (f[l3] & 0x0f) >= 5,
	    ok4 = v4 && ipv4_csum_ok(f + l3, len - l3), rc;

	if (!before)
		return;
	memcpy(before, f, len);
	rc = uplink_vxlan_ecn_decap(f, len, outer);
	check((rc < 0) == model_drop);
	if (mv && rc == 0) {
		check(model_ecn(f + ml3, mv) == want);
		check(model_rest(f + ml3, mv) == rest);
	}
	if (!mv)
		check(rc == 0 && !memcmp(before, f, len));
	if (rc < 0) {
		check(rc == -(UPLINK_VXLAN_DROP_ECN + 1));
		check(outer == UPLINK_ECN_CE && inner == 0);
		check(!memcmp(before, f, len));
	} else {
		check(rc == 0);
		for (uint32_t i = 0; i < len; i++)
			check(before[i] == f[i] || i == l3 + 1 ||
			      (v4 && (i == l3 + 10 || i == l3 + 11)));
		if (outer == UPLINK_ECN_CE && inner != 0 && (v4 || len >= l3 + 40))
			check(uplink_vxlan_ecn_inner(f, len) == UPLINK_ECN_CE);
		if (ok4)
			check(ipv4_csum_ok(f + l3, len - l3));
	}
	free(before);
}

static void fuzz_datagram(const uint8_t *data, size_t size)
{
	uint32_t vni, mtu, len;
	uint8_t *d;
	int rc;

	if (size < 6)
		return;
	vni = (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
	mtu = (uint32_t)data[4] | (uint32_t)data[5] << 8;
	if (mtu < 68)
		mtu = 68;
	if (mtu > UPLINK_VXLAN_MTU_MAX)
		mtu = UPLINK_VXLAN_MTU_MAX;
	len = (uint32_t)(size - 6);
	d = malloc(len ? len : 1);
	if (!d)
		return;
	memcpy(d, data + 6, len);
	if ((data[0] & 8) && len >= UPLINK_VXLAN_HLEN)
		uplink_vxlan_hdr(d, vni);
	rc = uplink_vxlan_check(d, len, vni, mtu);
	/* The model's verdict, reason for reason, in RFC 7348's order of checks. */
	{
		uint32_t flen = len >= UPLINK_VXLAN_HLEN ? len - UPLINK_VXLAN_HLEN : 0, l3 = 14;
		int want;

		if (flen >= 18 &&
		    ((d[20] == 0x81 && d[21] == 0x00) || (d[20] == 0x88 && d[21] == 0xa8)))
			l3 = 18;
		if (len < UPLINK_VXLAN_HLEN + 14)
			want = -(UPLINK_VXLAN_DROP_RUNT + 1);
		else if (d[0] != 0x08 || d[1] || d[2] || d[3] || d[7])
			want = -(UPLINK_VXLAN_DROP_HEADER + 1);
		else if (((uint32_t)d[4] << 16 | (uint32_t)d[5] << 8 | d[6]) != vni)
			want = -(UPLINK_VXLAN_DROP_VNI + 1);
		else if (flen > l3 + mtu)
			want = -(UPLINK_VXLAN_DROP_OVERSIZE + 1);
		else
			want = (int)flen;
		check(rc == want);
	}
	if (rc < 0) {
		check(-rc - 1 < UPLINK_VXLAN_DROP_NR);
		check(strcmp(uplink_vxlan_drop_name((enum uplink_vxlan_drop)(-rc - 1)), "?") != 0);
	} else {
		const uint8_t *f = d + UPLINK_VXLAN_HLEN;

		check((uint32_t)rc == len - UPLINK_VXLAN_HLEN);
		check((uint32_t)rc >= SW_FRAME_ETH_HLEN);
		check(d[0] == UPLINK_VXLAN_FLAG_I && !d[1] && !d[2] && !d[3] && !d[7]);
		check(((uint32_t)d[4] << 16 | (uint32_t)d[5] << 8 | d[6]) == vni);
		check((uint32_t)rc <= sw_frame_l3_off(f, (uint32_t)rc) + mtu);
		fuzz_ecn(d + UPLINK_VXLAN_HLEN, (uint32_t)rc, (uint8_t)((data[0] >> 1) & 3));
	}
	/* The source port's flow hash reads any bytes, within them (as a frame's header copy). */
	(void)uplink_vxlan_flow_hash(d, len);
	free(d);
}

static void fuzz_spec(const uint8_t *data, size_t size)
{
	struct uplink_vxlan_spec s;
	char err[128] = "";
	char *text = malloc(size);
	int rc;

	if (!text)
		return;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	rc = uplink_vxlan_spec_parse(text, &s, err, sizeof(err));
	if (rc < 0) {
		check(rc == -EINVAL && err[0] != '\0');
	} else {
		check(rc == 0);
		check(s.vni <= UPLINK_VXLAN_VNI_MAX && s.dstport != 0);
		check(s.mtu >= 68 && s.mtu <= UPLINK_VXLAN_MTU_MAX);
		check(s.nremotes >= 1 && s.nremotes <= UPLINK_VXLAN_REMOTES_MAX);
		check(s.srcport_min ? s.srcport_min <= s.srcport_max : !s.srcport_max);
		check(s.local.ss_family == s.remote[0].ss_family && s.local_len == s.remote_len);
		for (unsigned int i = 0; i < s.nremotes; i++) {
			check(s.remote[i].ss_family == s.remote[0].ss_family);
			for (unsigned int j = 0; j < i; j++)
				check(memcmp(&s.remote[i], &s.remote[j], s.remote_len) != 0);
			if (s.remote[i].ss_family == AF_INET) {
				const struct sockaddr_in *r =
				    (const struct sockaddr_in *)&s.remote[i];

				check(s.remote_len == sizeof(*r) && r->sin_addr.s_addr != 0 &&
				      !IN_MULTICAST(ntohl(r->sin_addr.s_addr)) &&
				      ntohs(r->sin_port) == s.dstport &&
				      ntohs(((const struct sockaddr_in *)&s.local)->sin_port) ==
					  s.dstport);
			} else {
				const struct sockaddr_in6 *r =
				    (const struct sockaddr_in6 *)&s.remote[i];

				check(s.remote_len == sizeof(*r) &&
				      s.remote[i].ss_family == AF_INET6 &&
				      !IN6_IS_ADDR_MULTICAST(&r->sin6_addr) &&
				      !IN6_IS_ADDR_UNSPECIFIED(&r->sin6_addr) &&
				      ntohs(r->sin6_port) == s.dstport &&
				      ntohs(((const struct sockaddr_in6 *)&s.local)->sin6_port) ==
					  s.dstport);
			}
		}
		check(!strncmp(s.name, "vxlan", 5) && strlen(s.netns) <= UPLINK_NETNS_MAX &&
		      !strchr(s.netns, '/'));
		check(uplink_vxlan_spec_same(&s, &s));
		{
			char name[40], why[160] = "";

			if (s.dstport == 4789)
				snprintf(name, sizeof(name), "vxlan%u", s.vni);
			else
				snprintf(name, sizeof(name), "vxlan%u:%u", s.vni, s.dstport);
			check(!strcmp(s.name, name));
			check(uplink_vxlan_spec_clash(&s, &s, why, sizeof(why)) && why[0]);
			/* Another VNI on the same address and port shares it, without a clash. */
			struct uplink_vxlan_spec t = s;

			t.vni ^= 1;
			check(!s.share && uplink_vxlan_spec_shares(&s, &t) &&
			      !uplink_vxlan_spec_clash(&s, &t, why, sizeof(why)));
		}
		/* local: unicast or the wildcard, and none of the remotes' addresses. */
		if (s.local.ss_family == AF_INET) {
			uint32_t a = ntohl(((const struct sockaddr_in *)&s.local)->sin_addr.s_addr);

			check(a == 0 || (a != 0xffffffffu && !IN_MULTICAST(a)));
			for (unsigned int i = 0; i < s.nremotes; i++)
				check(((const struct sockaddr_in *)&s.remote[i])->sin_addr.s_addr !=
					  htonl(a) ||
				      a == 0);
		} else {
			const struct in6_addr *a =
			    &((const struct sockaddr_in6 *)&s.local)->sin6_addr;

			check(!IN6_IS_ADDR_MULTICAST(a));
			for (unsigned int i = 0; i < s.nremotes; i++)
				check(!IN6_ARE_ADDR_EQUAL(
				    &((const struct sockaddr_in6 *)&s.remote[i])->sin6_addr, a));
		}
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		fuzz_spec(data, size);
	else
		fuzz_datagram(data, size);
	return 0;
}
