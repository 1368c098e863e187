// SPDX-License-Identifier: MIT
/* frame_fuzz.c - libFuzzer harness for switch/frame.c: segmentation and checksums of any bytes */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "switch/frame.h"
#include "switch/pkt.h"

/*
 * Input layout (what a hostile guest controls when netback segments for a
 * receiver without GSO, or fills in a checksum: the frame and its GSO extra):
 *
 *   0      bits 0-1: GSO type (0..3; only 1 and 2 are valid); bit 2: blank
 *          checksums; bits 4-7: that many 4 KiB pages of pseudo-random
 *          payload appended, so short inputs reach 64 KiB frames
 *   1..2   the GSO size, little endian
 *   3..    the frame
 *
 * The frame is a private heap copy of exactly its length, so the sanitizers
 * see any read past it.  Checked: sw_tso_segment() either refuses with one
 * of its documented errors or returns segments that cover the payload once,
 * in order, each of at most gso_size bytes, with headers inside the
 * caller's buffer; each segment parses to the same transport header, its
 * IP length fields say its length, and its TCP checksum verifies (full) or
 * holds the pseudo-header sum (blank), over the final destination where a
 * routing header names one; a frame whose headers forbid cutting (an IPv6
 * fragment or AH header) is refused.  sw_csum_complete() on any frame
 * sw_frame_parse() accepts gives a checksum that verifies.
 */

#define MAX_SEGS  256u
#define FRAME_MAX 65535u

#define check(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			abort();                                                                   \
	} while (0)

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The pseudo-header sum; its destination is where sw_frame_parse() says:
 * checked to be the IP header's, or for IPv6 an address wholly inside the
 * extension headers (a routing header's final destination).
 */
static uint32_t pseudo(const uint8_t *f, const struct sw_l4 *l4, uint32_t l4_len, uint8_t proto)
{
	if (l4->l3 == 4) {
		check(l4->dst_off == l4->l3_off + 16u);
		return sw_csum_fold(f + l4->l3_off + 12, 8, 0) + proto + l4_len;
	}
	check(l4->dst_off == l4->l3_off + 24u ||
	      (l4->dst_off >= l4->l3_off + 48u && l4->dst_off + 16u <= l4->l4_off));
	return sw_csum_fold(f + l4->l3_off + 8, 16, 0) + sw_csum_fold(f + l4->dst_off, 16, 0) +
	       proto + (l4_len >> 16) + (l4_len & 0xffff);
}

static void check_segments(const uint8_t *f, uint32_t len, uint8_t type, uint16_t mss, bool blank)
{
	static uint8_t hdrbuf[MAX_SEGS * SW_TSO_MAX_HDRS], seg[FRAME_MAX + SW_TSO_MAX_HDRS];
	static struct sw_seg segs[MAX_SEGS];
	int n = sw_tso_segment(f, len, type, mss, blank, hdrbuf, sizeof(hdrbuf), segs, MAX_SEGS);
	struct sw_l4 l4;
	uint32_t off;

	if (n < 0) {
		check(n == -EINVAL || n == -EPROTO || n == -E2BIG);
		check(n != -EINVAL || mss == 0 || (type != SW_GSO_TCPV4 && type != SW_GSO_TCPV6));
		return;
	}
	/* Cut: then nothing in its headers forbids it (IPv6 fragment or AH headers). */
	check(n > 0 && (unsigned int)n <= MAX_SEGS && mss > 0);
	check(sw_frame_parse(f, len, &l4) == 0 && l4.proto == IPPROTO_TCP && l4.gso_ok);
	check(l4.l3 == (type == SW_GSO_TCPV4 ? 4 : 6));
	off = (uint32_t)l4.l4_off + l4.l4_len;
	for (int i = 0; i < n; i++) {
		const struct sw_seg *g = &segs[i];
		uint32_t slen = (uint32_t)g->hdr_len + g->len, tcp_len = slen - l4.l4_off;
		uint8_t *t = seg + l4.l4_off;
		struct sw_l4 s4;

		check(g->hdr >= hdrbuf && g->hdr + g->hdr_len <= hdrbuf + sizeof(hdrbuf));
		check(g->hdr_len == l4.l4_off + l4.l4_len && g->off == off);
		check(g->len > 0 && g->len <= mss && (i + 1 == n || g->len == mss));
		memcpy(seg, g->hdr, g->hdr_len);
		memcpy(seg + g->hdr_len, f + g->off, g->len);
		check(sw_frame_parse(seg, slen, &s4) == 0);
		check(s4.l3 == l4.l3 && s4.l4_off == l4.l4_off && s4.l4_len == l4.l4_len);
		if (l4.l3 == 4)
			check(be16(seg + l4.l3_off + 2) == slen - l4.l3_off);
		else
			check(be16(seg + l4.l3_off + 4) == slen - l4.l3_off - 40);
		if (blank)
			check(be16(t + SW_FRAME_TCP_CSUM_OFF) ==
			      sw_csum_fold(NULL, 0, pseudo(seg, &l4, tcp_len, IPPROTO_TCP)));
		else
			check(sw_csum_fold(t, tcp_len, pseudo(seg, &l4, tcp_len, IPPROTO_TCP)) ==
			      0xffff);
		off += g->len;
	}
	check(off == len);
}

/* A blank checksum filled in verifies (whatever the field held: it is the seed). */
static void check_csum(uint8_t *f, uint32_t len)
{
	struct sw_l4 l4;
	uint32_t field, l4_len;

	if (sw_frame_parse(f, len, &l4) < 0)
		return;
	field =
	    l4.l4_off + (l4.proto == IPPROTO_TCP ? SW_FRAME_TCP_CSUM_OFF : SW_FRAME_UDP_CSUM_OFF);
	l4_len = len - l4.l4_off;
	/* The seed a sender with checksum offload leaves: the pseudo-header sum. */
	f[field] = f[field + 1] = 0;
	{
		uint16_t seed = sw_csum_fold(NULL, 0, pseudo(f, &l4, l4_len, l4.proto));

		f[field] = (uint8_t)(seed >> 8);
		f[field + 1] = (uint8_t)seed;
	}
	sw_csum_complete(f, len, l4.l4_off, field);
	check(sw_csum_fold(f + l4.l4_off, l4_len, pseudo(f, &l4, l4_len, l4.proto)) == 0xffff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len, pages, x = 0x9e3779b9u;
	uint8_t type, *f;
	uint16_t mss;
	bool blank;

	if (size < 3)
		return 0;
	type = data[0] & 3u;
	blank = data[0] & 4u;
	pages = data[0] >> 4;
	mss = (uint16_t)(data[1] | data[2] << 8);
	len = (uint32_t)(size - 3) + pages * 4096u;
	if (len > FRAME_MAX)
		len = FRAME_MAX;
	f = malloc(len ? len : 1);
	if (!f)
		return 0;
	for (uint32_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		f[i] = i < size - 3 ? data[3 + i] : (uint8_t)x;
	}
	check_segments(f, len, type, mss, blank);
	check_csum(f, len);
	free(f);
	return 0;
}
