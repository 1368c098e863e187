// SPDX-License-Identifier: MIT
/* uplink_vxlan_fuzz.c - libFuzzer harness for the VXLAN uplink's datagram checks and specification */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
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
 *            exactly its size (the sanitizers see any read past it)
 *   odd: an --uplink argument, 1.. as a NUL-terminated string
 *
 * The promises checked are the ones vxlan.h documents.  A datagram: a
 * drop reason is one of enum uplink_vxlan_drop (and the same bytes as a
 * frame's header go through the flow hash); an accepted one has the
 * flags byte 0x08, every reserved bit clear, our VNI, an Ethernet header
 * at least, a frame of the datagram's length less the header, and no
 * more than the MTU past its network header.  Its frame then takes an
 * outer ECN field (bits 1..2 of byte 0): dropped only for CE over an IP
 * packet that is not ECN-capable, and unchanged then; else changed in its
 * IP header's ECN field and IPv4 checksum at most, CE over ECN-capable IP
 * read back as CE, and a right IPv4 header checksum still right.  A specification: parsed,
 * it has a VNI, port and MTU in range, a unicast remote and a local
 * address of its family, both on dstport, a source port range that is
 * none or 1 <= MIN <= MAX, a name; refused, a reason.
 * A broken promise traps.
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

static void fuzz_ecn(uint8_t *f, uint32_t len, uint8_t outer)
{
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
	rc = uplink_vxlan_check(d, len, vni, mtu);
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
