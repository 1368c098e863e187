// SPDX-License-Identifier: MIT
/* frame_builder.c - test frames for the uplink, switch and netback tests */
#include <netinet/in.h>
#include <string.h>

#include "frame_builder.h"

void fb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void fb_build(struct fb *f, int l3, uint8_t proto, bool vlan, uint32_t payload, uint8_t seed)
{
	uint32_t o = 12, l4len = proto == IPPROTO_TCP ? 20 : 8;

	memset(f, 0, sizeof(*f));
	memcpy(f->b, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	if (vlan) {
		fb_put16(f->b + 12, 0x8100);
		fb_put16(f->b + 14, 7);
		o = 16;
	}
	fb_put16(f->b + o, l3 == 4 ? 0x0800 : 0x86dd);
	o += 2;
	if (l3 == 4) {
		f->b[o] = 0x45;
		fb_put16(f->b + o + 2, (uint16_t)(20 + l4len + payload));
		f->b[o + 8] = 64;
		f->b[o + 9] = proto;
		memcpy(f->b + o + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		o += 20;
	} else {
		f->b[o] = 0x60;
		fb_put16(f->b + o + 4, (uint16_t)(l4len + payload));
		f->b[o + 6] = proto;
		f->b[o + 7] = 64;
		f->b[o + 23] = 1;
		f->b[o + 39] = 2;
		o += 40;
	}
	f->l4 = o;
	fb_put16(f->b + o, 1234);
	fb_put16(f->b + o + 2, 80);
	if (proto == IPPROTO_TCP)
		f->b[o + 12] = 5 << 4;
	else
		fb_put16(f->b + o + 4, (uint16_t)(8 + payload));
	for (uint32_t i = 0; i < payload; i++)
		f->b[o + l4len + i] = (uint8_t)(i * 7 + seed);
	f->len = o + l4len + payload;
}

void fb_add_ext6(struct fb *f, uint8_t type, const uint8_t *hdr, uint32_t len)
{
	uint8_t next = f->b[20];

	memmove(f->b + 54 + len, f->b + 54, f->len - 54);
	memcpy(f->b + 54, hdr, len);
	f->b[54] = next; /* next header: what followed IPv6 */
	f->b[20] = type;
	fb_put16(f->b + 18, (uint16_t)(f->len - 54 + len));
	f->len += len;
	f->l4 += len;
}

void fb_add_dstopts(struct fb *f, uint32_t opt)
{
	uint8_t h[256] = {0};

	h[1] = (uint8_t)(opt / 8 - 1); /* length in 8-byte units, less one */
	h[2] = 1;		       /* PadN ... */
	h[3] = (uint8_t)(opt - 4);     /* ... over the rest */
	fb_add_ext6(f, 60, h, opt);    /* destination options */
}
