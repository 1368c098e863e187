/* SPDX-License-Identifier: MIT */
/* frame_builder.h - test frames (Ethernet [+ 802.1Q] + IPv4/IPv6 + L4 + payload) for several suites */
#ifndef PVNET_TESTS_COMMON_FRAME_BUILDER_H
#define PVNET_TESTS_COMMON_FRAME_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

/**
 * struct fb - one test frame
 * @b: the bytes (room for the largest frame and some)
 * @len: the frame's length
 * @l4: offset of its L4 header
 */
struct fb {
	uint8_t b[70000];
	uint32_t len;
	uint32_t l4;
};

/**
 * fb_build() - write a frame into @f (zeroed first)
 * @f: the frame
 * @l3: 4 or 6
 * @proto: IPPROTO_TCP (a 20-byte header), else an 8-byte UDP-shaped header
 * @vlan: insert an 802.1Q tag (VID 7)
 * @payload: bytes after the L4 header
 * @seed: payload byte i is i * 7 + @seed
 */
void fb_build(struct fb *f, int l3, uint8_t proto, bool vlan, uint32_t payload, uint8_t seed);

/**
 * fb_add_dstopts() - put an IPv6 destination-options header before the L4 one
 * @f: an IPv6 frame without a VLAN tag, as fb_build() made it
 * @opt: its length, a multiple of 8 from 8 to 256 (one PadN option over it)
 *
 * The L4 header and payload move @opt bytes on; the payload length grows.
 */
void fb_add_dstopts(struct fb *f, uint32_t opt);

/**
 * fb_add_ext6() - put an IPv6 extension header first after the IPv6 header
 * @f: an IPv6 frame without a VLAN tag, as fb_build() made it
 * @type: its protocol number, the IPv6 header's next header from now on
 * @hdr: its bytes; the first, its next header, becomes what followed IPv6
 * @len: their count (the caller sets the length field in @hdr)
 *
 * The L4 header and payload move @len bytes on; the payload length grows.
 * Headers added one after another end up in the reverse order.
 */
void fb_add_ext6(struct fb *f, uint8_t type, const uint8_t *hdr, uint32_t len);

/* Store @v big-endian at @p. */
void fb_put16(uint8_t *p, uint16_t v);

#endif /* PVNET_TESTS_COMMON_FRAME_BUILDER_H */
