// SPDX-License-Identifier: MIT
/* test_vnet.c - unit tests of the virtio-net header <-> netif mapping and TAP frame validation */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "../common/frame_builder.h"

#include "switch/frame.h"
#include "switch/pkt.h"
#include "uplink/vnet.h"

#define ALL_OFF (UPLINK_OFF_CSUM4 | UPLINK_OFF_CSUM6 | UPLINK_OFF_TSO4 | UPLINK_OFF_TSO6)
#define MTU	1500u

static struct virtio_net_hdr csum_hdr(const struct fb *f, uint8_t proto)
{
	return (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				       .csum_start = (uint16_t)f->l4,
				       .csum_offset = proto == IPPROTO_TCP ? 16 : 6};
}

static void test_parse(void **state)
{
	static const struct {
		int l3;
		uint8_t proto;
		bool vlan;
		uint32_t off;
	} t[] = {{4, IPPROTO_TCP, false, 34},
		 {4, IPPROTO_UDP, false, 34},
		 {6, IPPROTO_TCP, false, 54},
		 {6, IPPROTO_UDP, true, 58},
		 {4, IPPROTO_TCP, true, 38}};
	struct sw_l4 l4;
	struct fb f;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		fb_build(&f, t[i].l3, t[i].proto, t[i].vlan, 10, 0);
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
		assert_int_equal(l4.l3, t[i].l3);
		assert_int_equal(l4.proto, t[i].proto);
		assert_int_equal(l4.l4_off, t[i].off);
		/* Every truncation before the end of the L4 header fails cleanly. */
		for (uint32_t n = 0; n < t[i].off + (t[i].proto == IPPROTO_TCP ? 20 : 8); n++)
			assert_int_equal(sw_frame_parse(f.b, n, &l4), -EPROTO);
	}
	/* An IPv4 fragment, an ICMP packet, ARP, IPv6 fragment header: not TCP/UDP at a known place. */
	fb_build(&f, 4, IPPROTO_TCP, false, 10, 0);
	f.b[14 + 6] = 0x20; /* MF */
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	fb_build(&f, 4, IPPROTO_ICMP, false, 10, 0);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	fb_build(&f, 4, IPPROTO_TCP, false, 10, 0);
	fb_put16(f.b + 12, 0x0806);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	fb_build(&f, 6, 44, false, 10, 0);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	/* IPv6 with a hop-by-hop header before TCP; and a loop of extension headers is bounded. */
	fb_build(&f, 6, IPPROTO_TCP, false, 0, 0);
	memmove(f.b + 62, f.b + 54, 20);
	memset(f.b + 54, 0, 8);
	f.b[54] = IPPROTO_TCP;
	f.b[20] = 0; /* next header: hop-by-hop */
	f.len += 8;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
	assert_int_equal(l4.l4_off, 62);
	memset(f.b + 54, 0, 200);
	f.len = 254;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	/* A TCP data offset below 5 or past the frame. */
	fb_build(&f, 4, IPPROTO_TCP, false, 0, 0);
	f.b[34 + 12] = 4 << 4;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	f.b[34 + 12] = 15 << 4;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);

	/*
	 * What the L3 header says must be true before its L4 header is trusted:
	 * a wrong version, an IPv4 header shorter than 20 bytes (the "ports"
	 * would be inside it), the last fragment of a datagram (an offset, no
	 * MF: its payload is no TCP header) are refused.
	 */
	fb_build(&f, 4, IPPROTO_TCP, false, 10, 0);
	f.b[14] = 0x65;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	/* With IHL 4 a TCP header would parse at byte 30 (data offset 5 at byte 42). */
	f.b[42] = 5 << 4;
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		f.b[14] = (uint8_t)(0x40 | ihl);
		assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	}
	fb_build(&f, 4, IPPROTO_TCP, false, 10, 0);
	fb_put16(f.b + 14 + 6, 0x0010); /* fragment offset 16 (128 bytes), MF clear */
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	fb_build(&f, 6, IPPROTO_TCP, false, 10, 0);
	f.b[14] = (uint8_t)((f.b[14] & 0x0f) | 0x40);
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), -EPROTO);
	/* IPv6 with a routing header before UDP: walked as the other extension headers. */
	fb_build(&f, 6, IPPROTO_UDP, false, 0, 0);
	memmove(f.b + 62, f.b + 54, 8);
	memset(f.b + 54, 0, 8);
	f.b[54] = IPPROTO_UDP;
	f.b[20] = 43; /* next header: routing */
	f.len += 8;
	assert_int_equal(sw_frame_parse(f.b, f.len, &l4), 0);
	assert_int_equal(l4.l4_off, 62);
	assert_int_equal(l4.proto, IPPROTO_UDP);
}

static void test_vnet2meta_csum(void **state)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	struct fb f;

	/* Plain frame, no flags. */
	fb_build(&f, 4, IPPROTO_TCP, false, 100, 0);
	vh = (struct virtio_net_hdr){0};
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, 0);
	assert_int_equal(m.gso_type, UPLINK_GSO_NONE);
	/* NEEDS_CSUM at the TCP header -> csum_blank; DATA_VALID -> data_validated. */
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.flags |= VIRTIO_NET_HDR_F_DATA_VALID;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK | UPLINK_F_DATA_VALIDATED);
	vh = (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_DATA_VALID};
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, UPLINK_F_DATA_VALIDATED);
	/* IPv6 UDP. */
	fb_build(&f, 6, IPPROTO_UDP, true, 100, 0);
	vh = csum_hdr(&f, IPPROTO_UDP);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);
	/* csum_start/offset outside the frame: dropped as a bad checksum request. */
	vh.csum_start = (uint16_t)f.len;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	vh.csum_start = (uint16_t)(f.len - 2);
	vh.csum_offset = 1;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	/*
	 * Starting inside the link header (this frame's is tagged: 18 bytes):
	 * a checksum there would be written into the addresses or the tag.
	 */
	for (uint16_t start = 0; start < 18; start += 6) {
		vh.csum_start = start;
		vh.csum_offset = 12;
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
				 uplink_drop_reason(UPLINK_DROP_CSUM));
	}
	/*
	 * Starting right after it (at the IP header, here its own checksum
	 * field, tagged and not): not a transport's, so computed where asked.
	 */
	for (int vlan = 0; vlan < 2; vlan++) {
		uint16_t l3 = vlan ? 18 : 14;

		fb_build(&f, 4, IPPROTO_UDP, vlan, 100, 0);
		f.b[l3 + 10] = f.b[l3 + 11] = 0;
		vh = (struct virtio_net_hdr){
		    .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = l3, .csum_offset = 10};
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
		assert_int_equal(m.flags, 0);
		assert_int_equal(sw_csum_fold(f.b + l3, f.len - l3, 0), 0xffff);
	}

	/*
	 * csum_offset is not the transport's checksum field (TCP's is at 16;
	 * 18 is its urgent pointer): not a blank netif can carry, so the sum
	 * is written where the peer asked and the field at 16 is left alone.
	 */
	fb_build(&f, 4, IPPROTO_TCP, false, 100, 0);
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.csum_offset = 18;
	f.b[f.l4 + 16] = 0xab;
	f.b[f.l4 + 17] = 0xcd;
	f.b[f.l4 + 18] = f.b[f.l4 + 19] = 0;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, 0);
	assert_int_equal(f.b[f.l4 + 16], 0xab);
	assert_int_equal(f.b[f.l4 + 17], 0xcd);
	assert_int_equal(sw_csum_fold(f.b + f.l4, f.len - f.l4, 0), 0xffff);

	/* A checksum field that ends exactly at the frame's end: UDP without payload. */
	fb_build(&f, 4, IPPROTO_UDP, false, 0, 0);
	vh = csum_hdr(&f, IPPROTO_UDP);
	assert_int_equal(f.l4 + 8, f.len);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);

	/*
	 * A checksum asked for over another range than the transport header
	 * (here from inside the UDP payload) is not the offload netif has: it
	 * is computed here, where the peer asked, and the frame is not flagged.
	 */
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 0);
	vh = (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				     .csum_start = (uint16_t)(f.l4 + 8),
				     .csum_offset = 6};
	f.b[f.l4 + 8 + 6] = f.b[f.l4 + 8 + 7] = 0;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, 0);
	assert_int_equal(sw_csum_fold(f.b + f.l4 + 8, f.len - (f.l4 + 8), 0), 0xffff);
}

/* Offload not negotiated (or not expressible): the checksum is computed in the frame. */
static void test_vnet2meta_sw_csum(void **state)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	uint32_t pseudo;
	struct fb f;

	fb_build(&f, 4, IPPROTO_TCP, false, 333, 0);
	/* Pseudo-header sum in the field, as the kernel leaves it. */
	pseudo = sw_csum_fold(f.b + 26, 8, 0) + IPPROTO_TCP + (f.len - f.l4);
	fb_put16(f.b + f.l4 + 16, sw_csum_fold(NULL, 0, pseudo));
	vh = csum_hdr(&f, IPPROTO_TCP);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, UPLINK_OFF_CSUM6, &m), 0);
	assert_int_equal(m.flags, 0);
	/* Receiver's check: pseudo header + segment sums to 0xffff. */
	assert_int_equal(sw_csum_fold(f.b + f.l4, f.len - f.l4,
				      sw_csum_fold(f.b + 26, 8, 0) + IPPROTO_TCP + (f.len - f.l4)),
			 0xffff);
	/* ICMP with a checksum request: not TCP/UDP, computed too. */
	fb_build(&f, 4, IPPROTO_ICMP, false, 40, 0);
	f.b[34] = 8; /* echo request; the checksum field starts at 0 */
	f.b[36] = f.b[37] = 0;
	vh = (struct virtio_net_hdr){
	    .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 2};
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, 0);
	assert_int_equal(sw_csum_fold(f.b + 34, f.len - 34, 0), 0xffff);
}

/*
 * A TCP header that ends past the first SW_PKT_OFFLOAD_HDR_MAX bytes (IPv6
 * options) is where no receiver's copy of the headers reaches: its checksum
 * is computed here rather than left blank (and verifies), and such a TSO
 * frame is dropped; 16 and 80 bytes of options (past netback's 128-byte
 * copy of every frame) and 192 still fit and stay offloaded.
 */
static void test_vnet2meta_headers_past_copy(void **state)
{
	static const uint32_t opts[] = {16, 80, 192, 200};
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	unsigned int past = 0;
	uint32_t pseudo;
	struct fb f;

	for (unsigned int i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		uint32_t opt = opts[i];

		fb_build(&f, 6, IPPROTO_TCP, false, 500, 3);
		fb_add_dstopts(&f, opt);
		pseudo = sw_csum_fold(f.b + 22, 32, 0) + IPPROTO_TCP + (f.len - f.l4);
		fb_put16(f.b + f.l4 + 16, sw_csum_fold(NULL, 0, pseudo));
		vh = csum_hdr(&f, IPPROTO_TCP);
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
		if (f.l4 + 20 <= SW_PKT_OFFLOAD_HDR_MAX) {
			assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);
			continue;
		}
		assert_int_equal(f.l4, 254); /* the last only: 254 + 20 > 14 + 256 */
		past++;
		assert_int_equal(m.flags, 0);
		assert_int_equal(sw_csum_fold(f.b + f.l4, f.len - f.l4, pseudo), 0xffff);
		/* As a TSO frame: dropped, not passed on to be dropped later. */
		fb_build(&f, 6, IPPROTO_TCP, false, 3000, 3);
		fb_add_dstopts(&f, opt);
		vh = csum_hdr(&f, IPPROTO_TCP);
		vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
		vh.gso_size = 1000;
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
				 uplink_drop_reason(UPLINK_DROP_GSO));
	}
	assert_int_equal(past, 1);
}

/*
 * Headers that end exactly at SW_PKT_OFFLOAD_HDR_MAX (14 + 40 + 192 bytes
 * of IPv6 options + a TCP header of 24 bytes with its options = 270) are
 * in every receiver's copy: the checksum stays blank, and as a TSO frame
 * it is offloaded, not dropped.
 */
static void test_vnet2meta_headers_end_at_copy(void **state)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	struct fb f;

	(void)state;
	for (int tso = 0; tso < 2; tso++) {
		fb_build(&f, 6, IPPROTO_TCP, false, tso ? 3000 : 500, 3);
		fb_add_dstopts(&f, 192);
		f.b[f.l4 + 12] = 6 << 4;			     /* data offset: 24 bytes */
		memset(f.b + f.l4 + 20, 1, 4);			     /* four NOP options */
		assert_int_equal(f.l4 + 24, SW_PKT_OFFLOAD_HDR_MAX); /* 270 */
		vh = csum_hdr(&f, IPPROTO_TCP);
		if (tso) {
			vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
			vh.gso_size = 1000;
		}
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
		assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);
		assert_int_equal(m.gso_type, tso ? UPLINK_GSO_TCPV6 : UPLINK_GSO_NONE);
		assert_int_equal(m.gso_size, tso ? 1000 : 0);
	}
}

/*
 * From the TAP, IPv6 TCP behind an atomic fragment header (offset 0, M 0)
 * or AH: a blank checksum stays blank for the guests (they find the TCP
 * header behind it, as Linux's netback does); as a TSO frame it is dropped,
 * since nothing could cut it into segments for a guest without GSO.
 */
static void test_vnet2meta_frag_ah(void **state)
{
	static const uint8_t frag[8] = {0, 0, 0, 0, 0, 0, 0, 7};
	static const uint8_t ah[16] = {0, 2, 0, 0, 0, 0, 0, 1};
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	struct fb f;

	(void)state;
	for (int k = 0; k < 2; k++) {
		fb_build(&f, 6, IPPROTO_TCP, false, 3000, 4);
		fb_add_ext6(&f, k ? 51 : 44, k ? ah : frag, k ? sizeof(ah) : sizeof(frag));
		vh = csum_hdr(&f, IPPROTO_TCP);
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, 9000, ALL_OFF, &m), 0);
		assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);
		vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
		vh.gso_size = 1000;
		assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
				 uplink_drop_reason(UPLINK_DROP_GSO));
	}
	/* A fragment proper: no TCP header to leave a checksum to, computed here. */
	fb_build(&f, 6, IPPROTO_TCP, false, 1000, 4);
	fb_add_ext6(&f, 44, (const uint8_t *)"\0\0\0\x01\0\0\0\x07", 8);
	vh = csum_hdr(&f, IPPROTO_TCP);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, 0);
}

static void test_vnet2meta_gso(void **state)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	struct fb f;

	fb_build(&f, 4, IPPROTO_TCP, false, 60000, 0);
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.gso_size = 1448;
	vh.hdr_len = 54;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.flags, UPLINK_F_CSUM_BLANK);
	assert_int_equal(m.gso_type, UPLINK_GSO_TCPV4);
	assert_int_equal(m.gso_size, 1448);
	/* Segments over the MTU: 20 + 20 + 1461 > 1500. */
	vh.gso_size = 1461;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
	vh.gso_size = 1460;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	/* Size 0, ECN, UDP, type v6 on a v4 frame, TSO4 not negotiated, no NEEDS_CSUM. */
	vh.gso_size = 0;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.gso_size = 1448;
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, UPLINK_OFF_TSO6, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.flags = 0;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	/* csum_start not at the TCP header; csum_offset not TCP's checksum field. */
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.gso_size = 1448;
	vh.csum_start = 14;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.gso_size = 1448;
	vh.csum_offset = 6;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	/* GSO on a UDP frame, and on a frame without payload. */
	fb_build(&f, 4, IPPROTO_UDP, false, 5000, 0);
	vh = csum_hdr(&f, IPPROTO_UDP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.gso_size = 1400;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	fb_build(&f, 6, IPPROTO_TCP, false, 0, 0);
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	vh.gso_size = 1400;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	/* TCPv6 that fits. */
	fb_build(&f, 6, IPPROTO_TCP, false, 30000, 0);
	vh = csum_hdr(&f, IPPROTO_TCP);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	vh.gso_size = 1440;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.gso_type, UPLINK_GSO_TCPV6);
	/* ...but not without TSO6 negotiated, nor as UDP (or UFO) segmentation of TCP. */
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, UPLINK_OFF_TSO4, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	assert_int_equal(m.gso_type, UPLINK_GSO_NONE);
}

static void test_vnet2meta_size(void **state)
{
	struct virtio_net_hdr vh = {0};
	struct uplink_meta m;
	struct fb f;

	fb_build(&f, 4, IPPROTO_UDP, false, 1472, 0); /* exactly 1500 bytes of IP */
	/* The shortest frame taken is an Ethernet header. */
	assert_int_equal(uplink_vnet2meta(&vh, f.b, 14, MTU, ALL_OFF, &m), 0);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, 13, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_RUNT));
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len + 1, MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
	fb_build(&f, 4, IPPROTO_UDP, true, 1472, 0); /* a VLAN tag is allowed on top */
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	/* Runts: less than an Ethernet header. */
	for (uint32_t n = 0; n < UPLINK_ETH_HLEN; n++)
		assert_int_equal(uplink_vnet2meta(&vh, f.b, n, MTU, ALL_OFF, &m),
				 uplink_drop_reason(UPLINK_DROP_RUNT));
	/* Over netif's 65535 even with the largest MTU. */
	assert_int_equal(uplink_vnet2meta(&vh, f.b, 65536, UPLINK_MAX_MTU, ALL_OFF, &m),
			 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
	assert_int_equal(uplink_vnet2meta(&vh, f.b, 65535, UPLINK_MAX_MTU, ALL_OFF, &m), 0);
	assert_string_equal(uplink_drop_name(UPLINK_DROP_RUNT), "rx_runt");
	assert_string_equal(uplink_drop_name(UPLINK_DROP_NR), "rx_unknown");
}

static void test_meta2vnet(void **state)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	struct fb f;

	fb_build(&f, 4, IPPROTO_TCP, false, 60000, 0);
	m = (struct uplink_meta){
	    .flags = UPLINK_F_CSUM_BLANK, .gso_type = UPLINK_GSO_TCPV4, .gso_size = 1448};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), 0);
	assert_int_equal(vh.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(vh.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
	assert_int_equal(vh.gso_size, 1448);
	assert_int_equal(vh.hdr_len, 54);
	assert_int_equal(vh.csum_start, 34);
	assert_int_equal(vh.csum_offset, 16);
	/* Round trip back through the validation. */
	assert_int_equal(uplink_vnet2meta(&vh, f.b, f.len, MTU, ALL_OFF, &m), 0);
	assert_int_equal(m.gso_type, UPLINK_GSO_TCPV4);
	/* GSO without csum_blank, GSO v6 on v4, GSO on UDP: refused. */
	m = (struct uplink_meta){.gso_type = UPLINK_GSO_TCPV4, .gso_size = 1448};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	m = (struct uplink_meta){
	    .flags = UPLINK_F_CSUM_BLANK, .gso_type = UPLINK_GSO_TCPV6, .gso_size = 1448};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	m.gso_size = 0;
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	/* Size 0 with a type that matches the frame: still nothing to segment by. */
	m.gso_type = UPLINK_GSO_TCPV4;
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	/* A header copy longer than the frame: only the frame's bytes are parsed. */
	m = (struct uplink_meta){.flags = UPLINK_F_CSUM_BLANK};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, 40, &vh), -EPROTO);
	/* Header copy too short to reach the TCP header. */
	m = (struct uplink_meta){.flags = UPLINK_F_CSUM_BLANK};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 40, f.len, &vh), -EPROTO);
	/* csum_blank on IPv6 UDP; data_validated alone. */
	fb_build(&f, 6, IPPROTO_UDP, false, 100, 0);
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), 0);
	assert_int_equal(vh.csum_start, 54);
	assert_int_equal(vh.csum_offset, 6);
	assert_int_equal(vh.gso_type, VIRTIO_NET_HDR_GSO_NONE);
	m = (struct uplink_meta){.flags = UPLINK_F_DATA_VALIDATED};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), 0);
	assert_int_equal(vh.flags, VIRTIO_NET_HDR_F_DATA_VALID);
	/* TCP segmentation asked of a UDP datagram (v4 and v6 alike): refused. */
	fb_build(&f, 4, IPPROTO_UDP, false, 5000, 0);
	m = (struct uplink_meta){
	    .flags = UPLINK_F_CSUM_BLANK, .gso_type = UPLINK_GSO_TCPV4, .gso_size = 1448};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	fb_build(&f, 6, IPPROTO_UDP, false, 5000, 0);
	m.gso_type = UPLINK_GSO_TCPV6;
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EINVAL);
	/* A blank checksum on something that is not TCP/UDP cannot be expressed. */
	fb_build(&f, 4, IPPROTO_ICMP, false, 10, 0);
	m = (struct uplink_meta){.flags = UPLINK_F_CSUM_BLANK};
	assert_int_equal(uplink_meta2vnet(&m, f.b, 128, f.len, &vh), -EPROTO);
}

/* RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
static void test_csum_reference(void **state)
{
	static const uint8_t ex[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	static const uint8_t odd[] = {0x01, 0x02, 0x03};

	assert_int_equal(sw_csum_fold(ex, sizeof(ex), 0), 0xddf2);
	assert_int_equal(sw_csum_fold(odd, sizeof(odd), 0), 0x0402);
	assert_int_equal(sw_csum_fold(NULL, 0, 0x1ffff), 0x0001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_vnet2meta_csum),
	    cmocka_unit_test(test_vnet2meta_sw_csum),
	    cmocka_unit_test(test_vnet2meta_gso),
	    cmocka_unit_test(test_vnet2meta_headers_past_copy),
	    cmocka_unit_test(test_vnet2meta_headers_end_at_copy),
	    cmocka_unit_test(test_vnet2meta_frag_ah),
	    cmocka_unit_test(test_vnet2meta_size),
	    cmocka_unit_test(test_meta2vnet),
	    cmocka_unit_test(test_csum_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
