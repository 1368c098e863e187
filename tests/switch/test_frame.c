// SPDX-License-Identifier: MIT
/* test_frame.c - software offloads on frames: checksum completion and TCP segmentation */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "../common/frame_builder.h"
#include "switch/frame.h"
#include "switch/pkt.h"

#define MAX_SEGS 256

static struct fb f;
static uint8_t hdrbuf[MAX_SEGS * SW_TSO_MAX_HDRS];
static struct sw_seg segs[MAX_SEGS];
static uint8_t seg[70000], joined[70000];

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* A TCP frame of @payload bytes with TCP options, flags FIN|PSH|CWR|ACK, seq near the wrap. */
static void tcp_frame(int l3, bool vlan, uint32_t payload, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	uint32_t hl = 32; /* 12 bytes of options: NOP NOP timestamp */
	uint8_t *t;

	fb_build(&f, l3, IPPROTO_TCP, vlan, payload + (hl - 20), 0);
	t = f.b + f.l4;
	t[12] = (uint8_t)((hl / 4) << 4);
	t[13] = 0x80 | 0x10 | 0x08 | 0x01;    /* CWR ACK PSH FIN */
	memcpy(t + 4, "\xff\xff\xf0\x00", 4); /* the sequence wraps inside the frame */
	memcpy(t + 20, "\x01\x01\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x02", 12);
	if (l3 == 4)
		fb_put16(f.b + f.l4 - 20 + 4, 0xfffe); /* the IP id wraps too */
	for (uint32_t i = 0; i < payload; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		t[hl + i] = (uint8_t)x;
	}
}

/* The pseudo-header sum of a TCP segment of @tcp_len bytes in @p (IP header at @l3_off). */
static uint32_t pseudo(const uint8_t *p, int l3, uint32_t l3_off, uint32_t tcp_len)
{
	if (l3 == 4)
		return sw_csum_fold(p + l3_off + 12, 8, 0) + IPPROTO_TCP + tcp_len;
	return sw_csum_fold(p + l3_off + 8, 32, 0) + IPPROTO_TCP + tcp_len;
}

/* Segment f with @mss and check every segment as a receiving stack would. */
static void check_segments(int l3, bool vlan, uint32_t payload, uint16_t mss, bool blank)
{
	uint32_t l3_off = vlan ? 18 : 14, hdrs, want, off = 0, seq0;
	uint16_t id0;
	int n;

	tcp_frame(l3, vlan, payload, payload ^ mss);
	hdrs = f.l4 + 32;
	seq0 = get32(f.b + f.l4 + 4);
	id0 = get16(f.b + l3_off + 4);
	want = (payload + mss - 1) / mss;
	n = sw_tso_segment(f.b, f.len, l3 == 4 ? SW_GSO_TCPV4 : SW_GSO_TCPV6, mss, blank, hdrbuf,
			   sizeof(hdrbuf), segs, MAX_SEGS);
	assert_int_equal(n, (int)want);
	for (int i = 0; i < n; i++) {
		const struct sw_seg *g = &segs[i];
		uint32_t len = g->hdr_len + g->len, tcp_len = len - f.l4;
		uint8_t *ip = seg + l3_off, *t = seg + f.l4;
		struct sw_l4 l4;

		assert_int_equal(g->hdr_len, hdrs);
		assert_int_equal(g->off, hdrs + off);
		assert_int_equal(g->len, i + 1 < n ? mss : payload - off);
		memcpy(seg, g->hdr, g->hdr_len);
		memcpy(seg + g->hdr_len, f.b + g->off, g->len);
		/* Still a frame a receiver parses to the same headers. */
		assert_int_equal(sw_frame_parse(seg, len, &l4), 0);
		assert_int_equal(l4.l4_off, f.l4);
		assert_int_equal(l4.l4_len, 32);
		assert_memory_equal(seg, f.b, 12); /* the MACs */
		if (l3 == 4) {
			assert_int_equal(get16(ip + 2), len - l3_off);
			assert_int_equal(get16(ip + 4), (uint16_t)(id0 + i));
			assert_int_equal(sw_csum_fold(ip, 20, 0), 0xffff);
		} else {
			assert_int_equal(get16(ip + 4), len - l3_off - 40);
		}
		assert_int_equal(get32(t + 4), seq0 + off);
		assert_int_equal(t[13] & 0x01, i + 1 == n ? 0x01 : 0); /* FIN */
		assert_int_equal(t[13] & 0x08, i + 1 == n ? 0x08 : 0); /* PSH */
		assert_int_equal(t[13] & 0x80, i == 0 ? 0x80 : 0);     /* CWR */
		assert_int_equal(t[13] & 0x10, 0x10);		       /* ACK */
		assert_memory_equal(t + 20, f.b + f.l4 + 20, 12);      /* options */
		if (blank) {
			/* The field holds the pseudo-header sum: completing it gives a valid one. */
			assert_int_equal(get16(t + 16),
					 sw_csum_fold(NULL, 0, pseudo(seg, l3, l3_off, tcp_len)));
			sw_csum_complete(seg, len, f.l4, f.l4 + 16);
		}
		assert_int_equal(sw_csum_fold(t, tcp_len, pseudo(seg, l3, l3_off, tcp_len)),
				 0xffff);
		memcpy(joined + off, seg + hdrs, g->len);
		off += g->len;
	}
	assert_int_equal(off, payload);
	assert_memory_equal(joined, f.b + hdrs, payload);
}

static void test_tso_v4(void **state)
{
	(void)state;
	check_segments(4, false, 65535 - 14 - 20 - 32, 1448, false);
	check_segments(4, false, 65535 - 14 - 20 - 32, 1448, true);
	check_segments(4, true, 3000, 1000, false); /* exact multiple */
	check_segments(4, false, 1, 1448, true);    /* one short segment */
	check_segments(4, false, 9000, 8948, false);
}

static void test_tso_v6(void **state)
{
	(void)state;
	check_segments(6, false, 65535 - 14 - 40 - 32, 1428, false);
	check_segments(6, true, 65535 - 18 - 40 - 32, 1428, true);
	check_segments(6, false, 7, 3, false); /* odd lengths */
}

/* At the bounds: as many segments as there is room for, and one more. */
static void test_tso_limits(void **state)
{
	(void)state;
	check_segments(4, false, MAX_SEGS * 10, 10, false);
	tcp_frame(4, false, MAX_SEGS * 10 + 1, 1);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 10, false, hdrbuf, sizeof(hdrbuf),
					segs, MAX_SEGS),
			 -E2BIG);
	/* Headers of every segment must fit the caller's buffer. */
	tcp_frame(4, false, 100, 1);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 10, false, hdrbuf,
					9 * (f.l4 + 32), segs, MAX_SEGS),
			 -E2BIG);
	/* One byte short of the last segment's headers is short. */
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 10, false, hdrbuf,
					10 * (f.l4 + 32) - 1, segs, MAX_SEGS),
			 -E2BIG);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 10, false, hdrbuf,
					10 * (f.l4 + 32), segs, MAX_SEGS),
			 10);
}

/* What is not a TCP GSO frame of the announced family is refused, never cut. */
static void test_tso_refused(void **state)
{
	(void)state;
	tcp_frame(4, false, 3000, 2);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 0, false, hdrbuf, sizeof(hdrbuf),
					segs, MAX_SEGS),
			 -EINVAL);
	assert_int_equal(
	    sw_tso_segment(f.b, f.len, 3, 1000, false, hdrbuf, sizeof(hdrbuf), segs, MAX_SEGS),
	    -EINVAL);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
	/* headers only: nothing to segment */
	assert_int_equal(sw_tso_segment(f.b, f.l4 + 32, SW_GSO_TCPV4, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
	/* the TCP header cut short */
	assert_int_equal(sw_tso_segment(f.b, f.l4 + 31, SW_GSO_TCPV4, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
	fb_build(&f, 4, IPPROTO_UDP, false, 3000, 1);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
	/* an IPv4 fragment */
	tcp_frame(4, false, 3000, 2);
	fb_put16(f.b + 14 + 6, 0x2000);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
}

/* A blank checksum completed in software verifies, for TCP and UDP, v4 and v6. */
static void test_csum_complete(void **state)
{
	(void)state;
	for (int l3 = 4; l3 <= 6; l3 += 2) {
		for (int udp = 0; udp < 2; udp++) {
			uint8_t proto = udp ? IPPROTO_UDP : IPPROTO_TCP;
			uint32_t l3_off = 14, field;
			struct sw_l4 l4;

			fb_build(&f, l3, proto, false, 1001, (uint8_t)l3);
			assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
			field = l4.l4_off + (udp ? SW_FRAME_UDP_CSUM_OFF : SW_FRAME_TCP_CSUM_OFF);
			fb_put16(f.b + field,
				 sw_csum_fold(NULL, 0,
					      (l3 == 4 ? sw_csum_fold(f.b + l3_off + 12, 8, 0)
						       : sw_csum_fold(f.b + l3_off + 8, 32, 0)) +
						  proto + (f.len - l4.l4_off)));
			sw_csum_complete(f.b, f.len, l4.l4_off, field);
			assert_int_equal(
			    sw_csum_fold(f.b + l4.l4_off, f.len - l4.l4_off,
					 (l3 == 4 ? sw_csum_fold(f.b + l3_off + 12, 8, 0)
						  : sw_csum_fold(f.b + l3_off + 8, 32, 0)) +
					     proto + (f.len - l4.l4_off)),
			    0xffff);
		}
	}

	/*
	 * A sum that comes out 0 is written 0xffff: 0 in a UDP checksum means
	 * "none", and over IPv6 the receiver drops such a datagram (RFC 768,
	 * RFC 8200 8.1).  Here the data sums to 0xffff, so its complement is 0.
	 */
	{
		uint8_t b[4] = {0xff, 0xff, 0, 0};

		sw_csum_complete(b, sizeof(b), 0, 2);
		assert_int_equal(b[2], 0xff);
		assert_int_equal(b[3], 0xff);
	}
}

/*
 * An 802.1Q or 802.1ad EtherType on a frame too short to hold the tag
 * (14..17 bytes): the network header is where an untagged frame's is, and
 * nothing reads past the frame; at 18 bytes the tag is skipped.  Each frame
 * is a heap block of its exact size, so an over-read is an
 * AddressSanitizer error.
 */
static void test_l3_off_short_vlan(void **state)
{
	static const uint16_t tpids[] = {0x8100, 0x88a8};

	(void)state;
	for (uint32_t i = 0; i < 2 * (SW_FRAME_VLAN_HLEN + 1); i++) {
		uint32_t len = SW_FRAME_ETH_HLEN + i / 2;
		uint16_t tpid = tpids[i % 2];
		uint8_t *p = malloc(len);
		struct sw_l4 l4;
		bool tagged = len == SW_FRAME_ETH_HLEN + SW_FRAME_VLAN_HLEN;

		assert_non_null(p);
		memset(p, 0, len);
		fb_put16(p + 12, tpid);
		if (tagged)
			fb_put16(p + 16, 0x0800);
		assert_int_equal(sw_frame_l3_off(p, len), tagged ? 18 : 14);
		assert_int_equal(sw_frame_parse(p, len, &l4), -EPROTO);
		assert_int_equal(sw_tso_segment(p, len, SW_GSO_TCPV4, 1000, false, hdrbuf,
						sizeof(hdrbuf), segs, MAX_SEGS),
				 -EPROTO);
		free(p);
	}
}

/*
 * IPv6 with N destination-options headers of 8 bytes before UDP: up to 8
 * are walked (frame.h), a ninth is refused; each frame is a heap block of
 * its exact size, so a read past it is an AddressSanitizer error.
 */
static void test_ipv6_ext_headers(void **state)
{
	(void)state;
	for (unsigned int n = 0; n <= 9; n++) {
		uint32_t len = 14 + 40 + n * 8 + 8 + 4;
		uint8_t *p = calloc(1, len);
		struct sw_l4 l4;

		assert_non_null(p);
		fb_put16(p + 12, 0x86dd);
		p[14] = 0x60;
		fb_put16(p + 18, (uint16_t)(n * 8 + 8 + 4));
		p[20] = n ? 60 : 17; /* next header */
		for (unsigned int k = 0; k < n; k++)
			p[54 + k * 8] = k + 1 < n ? 60 : 17; /* each 8 bytes: length field 0 */
		fb_put16(p + 54 + n * 8 + 4, 12);	     /* UDP length */
		if (n <= 8) {
			assert_int_equal(sw_frame_parse(p, len, &l4), 0);
			assert_int_equal(l4.l3, 6);
			assert_int_equal(l4.proto, 17);
			assert_int_equal(l4.l4_off, 54 + n * 8);
		} else {
			assert_int_equal(sw_frame_parse(p, len, &l4), -EPROTO);
		}
		/* cut inside the last extension header: refused, nothing read past the end */
		if (n) {
			assert_int_equal(sw_frame_parse(p, 54 + (n - 1) * 8 + 4, &l4), -EPROTO);
		}
		free(p);
	}
}

/* An IPv4 EtherType over something that is not an IPv4 header is refused. */
static void test_ipv4_header_refused(void **state)
{
	static const uint8_t bad[] = {0x65, 0x44, 0x40, 0x41};
	struct sw_l4 l4;

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		tcp_frame(4, false, 100, 3);
		/* an ack number whose first byte would pass as a TCP header length at 16 */
		f.b[f.l4 + 8] = 0x50;
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
		f.b[14] = bad[i]; /* version 6, or a header length under 20 bytes */
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
		assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 10, false, hdrbuf,
						sizeof(hdrbuf), segs, MAX_SEGS),
				 -EPROTO);
	}
}

/*
 * The transport header must be whole: a TCP data offset under 5 words, or
 * one reaching past the frame, and a UDP header cut short are refused; a
 * header ending exactly at the frame's end is not.
 */
static void test_l4_header_bounds(void **state)
{
	struct sw_l4 l4;

	(void)state;
	for (uint8_t doff = 0; doff < 5; doff++) {
		tcp_frame(4, false, 100, 4);
		f.b[f.l4 + 12] = (uint8_t)(doff << 4);
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	}
	/* 32 header bytes and no payload: whole; one byte less: cut. */
	tcp_frame(4, false, 0, 5);
	assert_int_equal(f.len, f.l4 + 32);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
	assert_int_equal(sw_frame_parse(f.b, f.len - 1, &l4), -EPROTO);
	/* a data offset of 15 words (60 bytes) in a frame with 40 after the IP header */
	tcp_frame(6, true, 8, 6);
	f.b[f.l4 + 12] = 0xf0;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	/* UDP: 8 bytes, to the byte */
	fb_build(&f, 4, IPPROTO_UDP, false, 0, 7);
	assert_int_equal(sw_frame_parse(f.b, f.l4 + 8, &l4), 0);
	assert_int_equal(sw_frame_parse(f.b, f.l4 + 7, &l4), -EPROTO);
}

/*
 * IPv4 with options and a valid header checksum: every segment's header
 * checksum covers the options and replaces the one the frame carried.
 */
static void test_tso_v4_options(void **state)
{
	uint32_t hdrs, off = 0;
	int n;

	(void)state;
	fb_build(&f, 4, IPPROTO_TCP, false, 3000, 9);
	memmove(f.b + 38, f.b + 34, f.len - 34);
	memcpy(f.b + 34, "\x94\x04\x00\x00", 4); /* router alert */
	f.b[14] = 0x46;
	fb_put16(f.b + 16, (uint16_t)(f.len + 4 - 14));
	f.len += 4;
	f.l4 += 4;
	fb_put16(f.b + 14 + 10, (uint16_t)~sw_csum_fold(f.b + 14, 24, 0));
	assert_int_equal(sw_csum_fold(f.b + 14, 24, 0), 0xffff);
	hdrs = f.l4 + 20;
	n = sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 1000, false, hdrbuf, sizeof(hdrbuf), segs,
			   MAX_SEGS);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		const struct sw_seg *g = &segs[i];
		uint32_t len = g->hdr_len + g->len;
		struct sw_l4 l4;

		assert_int_equal(g->hdr_len, hdrs);
		memcpy(seg, g->hdr, g->hdr_len);
		memcpy(seg + g->hdr_len, f.b + g->off, g->len);
		assert_int_equal(sw_frame_parse(seg, len, &l4), 0);
		assert_int_equal(l4.l4_off, 38);
		assert_memory_equal(seg + 34, "\x94\x04\x00\x00", 4);
		assert_int_equal(get16(seg + 16), len - 14);
		assert_int_equal(sw_csum_fold(seg + 14, 24, 0), 0xffff);
		assert_int_equal(sw_csum_fold(seg + 38, len - 38, pseudo(seg, 4, 14, len - 38)),
				 0xffff);
		off += g->len;
	}
	assert_int_equal(off, 3000);
}

/* Fill f's blank TCP checksum from the pseudo-header over @dst (16 bytes); check it verifies. */
static void csum_over(const uint8_t *dst)
{
	uint32_t tcp_len = f.len - f.l4;
	uint32_t sum =
	    sw_csum_fold(f.b + 22, 16, 0) + sw_csum_fold(dst, 16, 0) + IPPROTO_TCP + tcp_len;

	fb_put16(f.b + f.l4 + 16, sw_csum_fold(NULL, 0, sum));
	sw_csum_complete(f.b, f.len, f.l4, f.l4 + 16);
	assert_int_equal(sw_csum_fold(f.b + f.l4, tcp_len, sum), 0xffff);
}

/*
 * IPv6 headers Linux's checksum set-up walks besides options: a fragment
 * header of an atomic fragment (offset 0, M 0, RFC 6946; the two reserved
 * bits ignored) and AH, whose length counts 4-octet units.  The TCP header
 * is found behind them and a blank checksum can be filled in, but the
 * frame is not cut into segments (Linux's GSO refuses it too).  A fragment
 * proper (an offset, or more to come) is refused.
 */
static void test_ipv6_frag_ah(void **state)
{
	static const struct {
		uint8_t type;
		uint8_t hdr[24];
		uint32_t len;
		bool ok;
	} cases[] = {
	    {44, {0, 0, 0x00, 0x00, 1, 2, 3, 4}, 8, true},	  /* atomic */
	    {44, {0, 0, 0x00, 0x06, 1, 2, 3, 4}, 8, true},	  /* reserved bits set */
	    {44, {0, 0, 0x00, 0x01, 1, 2, 3, 4}, 8, false},	  /* M: a first fragment */
	    {44, {0, 0, 0x00, 0x08, 1, 2, 3, 4}, 8, false},	  /* offset 1 (8 bytes) */
	    {44, {0, 0, 0x80, 0x00, 1, 2, 3, 4}, 8, false},	  /* the offset's top bit */
	    {51, {0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9}, 16, true}, /* AH, 4-byte ICV */
	    {51, {0, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9}, 24, true}, /* AH, 12-byte ICV */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sw_l4 l4;

		tcp_frame(6, false, 3000, (uint32_t)i);
		fb_add_ext6(&f, cases[i].type, cases[i].hdr, cases[i].len);
		if (!cases[i].ok) {
			assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
			continue;
		}
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
		assert_int_equal(l4.proto, IPPROTO_TCP);
		assert_int_equal(l4.l4_off, 54 + cases[i].len);
		assert_int_equal(l4.l4_len, 32);
		assert_int_equal(l4.dst_off, 14 + 24);
		assert_false(l4.gso_ok);
		csum_over(f.b + 38);
		assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, false, hdrbuf,
						sizeof(hdrbuf), segs, MAX_SEGS),
				 -EPROTO);
		/* behind destination options too; a header cut short is refused */
		fb_add_dstopts(&f, 16);
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
		assert_int_equal(l4.l4_off, 54 + 16 + cases[i].len);
		assert_int_equal(sw_frame_parse(f.b, 54 + 16 + 7, &l4), -EPROTO);
	}
}

/*
 * A TCP sender with a routing header that has segments left sums its
 * checksum over the final destination (RFC 8200 8.1), an address the IPv6
 * header does not hold yet; segments cut from its frame must be summed
 * over the same, or the receiver drops every one.  Type 2 (Mobile IPv6's
 * home address), type 0 (the last address), a segment routing header
 * (Segment List[0], the last segment); with no segments left the IPv6
 * destination is final.  RPL's compressed list (type 3) is not read: such
 * a frame is not cut.  A segment list of one is that last segment; a type 0
 * or 2 header with 8 bytes after its first 8 holds half an address, no final
 * destination to read: not cut either.  Each segment's payload length counts
 * the routing header.
 */
static void test_tso_routing_final_dst(void **state)
{
	static const struct {
		uint8_t type, left, ext;
		uint32_t final; /* offset of the final destination in the frame */
	} cases[] = {
	    {2, 1, 2, 54 + 8}, {0, 2, 4, 54 + 24}, {4, 1, 4, 54 + 8}, {4, 0, 4, 38}, {3, 0, 2, 38},
	    {3, 1, 2, 0},      {4, 1, 2, 54 + 8},  {0, 1, 1, 0},      {2, 1, 1, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t len = (cases[i].ext + 1u) * 8u, hdrs;
		uint8_t rh[40] = {0};
		struct sw_l4 l4;
		int n;

		rh[1] = cases[i].ext;
		rh[2] = cases[i].type;
		rh[3] = cases[i].left;
		for (uint32_t k = 8; k < len; k++)
			rh[k] = (uint8_t)(0x20 + k * 3); /* addresses unlike the IPv6 header's */
		tcp_frame(6, false, 3000, (uint32_t)i);
		fb_add_ext6(&f, 43, rh, len);
		hdrs = f.l4 + 32;
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
		assert_int_equal(l4.l4_off, f.l4);
		if (!cases[i].final) {
			assert_false(l4.gso_ok);
			assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, false,
							hdrbuf, sizeof(hdrbuf), segs, MAX_SEGS),
					 -EPROTO);
			continue;
		}
		assert_true(l4.gso_ok);
		assert_int_equal(l4.dst_off, cases[i].final);
		for (int blank = 0; blank < 2; blank++) {
			n = sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, blank, hdrbuf,
					   sizeof(hdrbuf), segs, MAX_SEGS);
			assert_int_equal(n, 3);
			for (int k = 0; k < n; k++) {
				const struct sw_seg *g = &segs[k];
				uint32_t slen = g->hdr_len + g->len, tcp_len = slen - f.l4, sum;

				assert_int_equal(g->hdr_len, hdrs);
				memcpy(seg, g->hdr, g->hdr_len);
				memcpy(seg + g->hdr_len, f.b + g->off, g->len);
				/* The payload length counts the routing header too. */
				assert_int_equal(get16(seg + 18), slen - 54);
				sum = sw_csum_fold(seg + 22, 16, 0) +
				      sw_csum_fold(seg + cases[i].final, 16, 0) + IPPROTO_TCP +
				      tcp_len;
				if (blank)
					assert_int_equal(get16(seg + f.l4 + 16),
							 sw_csum_fold(NULL, 0, sum));
				else
					assert_int_equal(sw_csum_fold(seg + f.l4, tcp_len, sum),
							 0xffff);
			}
		}
	}
}

/* RFC 1071's sum, a byte at a time: what sw_csum_fold() must agree with. */
static uint16_t ref_fold(const uint8_t *p, uint32_t len, uint32_t sum)
{
	uint64_t s = sum;

	for (uint32_t i = 0; i < len; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	while (s > 0xffff)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/*
 * sw_csum_fold() against a sum written independently of it: RFC 1071's
 * example, an odd length (the last byte is the high half of a word, as if
 * padded with zero), and sums that carry more than once (a start of
 * 0xffffffff, runs of 0xff).  The segmentation tests check their result
 * with sw_csum_fold() itself, which a wrong fold would pass.
 */
static void test_csum_fold(void **state)
{
	static const uint8_t rfc1071[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	static const uint32_t starts[] = {0, 1, 0xffff, 0x10000, 0xfffffffe, 0xffffffff};
	uint8_t b[67];
	uint32_t x = 12345;

	(void)state;
	assert_int_equal(sw_csum_fold(rfc1071, 8, 0), 0xddf2);
	assert_int_equal(sw_csum_fold((const uint8_t *)"\x12", 1, 0), 0x1200);
	assert_int_equal(sw_csum_fold(rfc1071, 7, 0), 0xdcfb);
	assert_int_equal(sw_csum_fold(NULL, 0, 0xffffffff), 0xffff);
	for (int fill = 0; fill < 2; fill++) {
		for (uint32_t i = 0; i < sizeof(b); i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[i] = fill ? 0xff : (uint8_t)x;
		}
		for (uint32_t len = 0; len <= sizeof(b); len++)
			for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++)
				assert_int_equal(sw_csum_fold(b, len, starts[k]),
						 ref_fold(b, len, starts[k]));
	}
}

/*
 * Frames cut short anywhere before a header is whole are refused without a
 * read past their end (each a heap block of its exact size, so an
 * over-read is an AddressSanitizer error): under an Ethernet header, and
 * inside the first 8 bytes of each IPv6 extension header the walk reads
 * (hop-by-hop, routing, fragment, destination options, AH).
 */
static void test_cut_short(void **state)
{
	static const uint8_t ext[] = {0, 43, 44, 60, 51};
	struct sw_l4 l4;

	(void)state;
	for (uint32_t len = 0; len < SW_FRAME_ETH_HLEN; len++) {
		uint8_t *p = malloc(len ? len : 1);

		assert_non_null(p);
		memset(p, 0, len);
		if (len >= 14)
			fb_put16(p + 12, 0x0800);
		assert_int_equal(sw_frame_parse(p, len, &l4), -EPROTO);
		free(p);
	}
	for (size_t e = 0; e < sizeof(ext); e++) {
		for (uint32_t cut = 1; cut < 8; cut++) {
			uint32_t len = 54 + cut;
			uint8_t *p = calloc(1, len);

			assert_non_null(p);
			fb_put16(p + 12, 0x86dd);
			p[14] = 0x60;
			fb_put16(p + 18, (uint16_t)cut);
			p[20] = ext[e];
			for (uint32_t k = 54; k < len; k++)
				p[k] =
				    1; /* segments left, a fragment's M bit: whatever is read next */
			p[54] = IPPROTO_TCP;
			assert_int_equal(sw_frame_parse(p, len, &l4), -EPROTO);
			free(p);
		}
	}
}

/*
 * What the IPv4 and IPv6 headers must say: DF set (as most TCP senders
 * send) is no fragment, and such a frame is cut into segments that keep
 * it; an IPv6 EtherType over a header of another version is refused;
 * transport protocols other than TCP and UDP (ICMP, ICMPv6) are refused.
 */
static void test_l3_fields(void **state)
{
	struct sw_l4 l4;
	int n;

	(void)state;
	tcp_frame(4, false, 3000, 11);
	f.b[14 + 6] |= 0x40; /* DF */
	fb_put16(f.b + 14 + 10, 0);
	fb_put16(f.b + 14 + 10, (uint16_t)~sw_csum_fold(f.b + 14, 20, 0));
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
	n = sw_tso_segment(f.b, f.len, SW_GSO_TCPV4, 1000, false, hdrbuf, sizeof(hdrbuf), segs,
			   MAX_SEGS);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		assert_int_equal(segs[i].hdr[14 + 6] & 0xe0, 0x40);
		assert_int_equal(sw_csum_fold(segs[i].hdr + 14, 20, 0), 0xffff);
	}

	tcp_frame(6, false, 100, 12);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
	f.b[14] = 0x40; /* version 4 behind 0x86dd */
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 10, false, hdrbuf, sizeof(hdrbuf),
					segs, MAX_SEGS),
			 -EPROTO);

	fb_build(&f, 4, IPPROTO_ICMP, false, 56, 13);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	fb_build(&f, 6, IPPROTO_ICMPV6, false, 56, 14);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
}

/*
 * Headers longer than SW_TSO_MAX_HDRS (frame.h), here 256 bytes of IPv6
 * destination options, are refused: each segment's headers are copied
 * whole into buffers of that size.  270 bytes (the most headers can be
 * at or under the bound: they are 2 more than a multiple of 4) are cut.
 */
static void test_tso_hdrs_max(void **state)
{
	(void)state;
	tcp_frame(6, false, 3000, 15);
	fb_add_dstopts(&f, 184);
	assert_int_equal(f.l4 + 32, 270);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 3);
	tcp_frame(6, false, 3000, 15);
	fb_add_dstopts(&f, 256);
	assert_true(f.l4 + 32 > SW_TSO_MAX_HDRS);
	assert_int_equal(sw_tso_segment(f.b, f.len, SW_GSO_TCPV6, 1000, false, hdrbuf,
					sizeof(hdrbuf), segs, MAX_SEGS),
			 -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tso_v4),	     cmocka_unit_test(test_tso_v6),
	    cmocka_unit_test(test_tso_limits),	     cmocka_unit_test(test_tso_refused),
	    cmocka_unit_test(test_csum_complete),    cmocka_unit_test(test_l3_off_short_vlan),
	    cmocka_unit_test(test_ipv6_ext_headers), cmocka_unit_test(test_ipv4_header_refused),
	    cmocka_unit_test(test_tso_v4_options),   cmocka_unit_test(test_l4_header_bounds),
	    cmocka_unit_test(test_ipv6_frag_ah),     cmocka_unit_test(test_tso_routing_final_dst),
	    cmocka_unit_test(test_csum_fold),	     cmocka_unit_test(test_cut_short),
	    cmocka_unit_test(test_l3_fields),	     cmocka_unit_test(test_tso_hdrs_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
