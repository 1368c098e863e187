// SPDX-License-Identifier: MIT
/* test_attach_frame.c - pvnet attach's validation of frames read into TX pages, against uplink_vnet2meta */
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

#include "attach.h"

/*
 * attach_frame_check() must give, for a frame laid over whole pages as
 * readv() leaves it in TX buffers, exactly the verdict, the offload state
 * and the bytes (a software checksum written into the chain) that
 * uplink_vnet2meta() gives for the same frame in one piece.  Every case
 * here runs both and compares; the reference is the linear call.
 */

#define ALL_OFF (UPLINK_OFF_CSUM4 | UPLINK_OFF_CSUM6 | UPLINK_OFF_TSO4 | UPLINK_OFF_TSO6)

/* TX buffers as pvnet_tx_alloc() hands them out: one page each. */
struct pages {
	struct pvnet_buf b[ATTACH_READ_PAGES];
	uint8_t *mem;
	uint8_t *lin;
};

static int pages_setup(void **state)
{
	struct pages *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->mem = aligned_alloc(PVNET_PAGE_SIZE, (size_t)ATTACH_READ_PAGES * PVNET_PAGE_SIZE);
	p->lin = malloc(UPLINK_MAX_FRAME);
	assert_non_null(p->mem);
	assert_non_null(p->lin);
	for (unsigned int i = 0; i < ATTACH_READ_PAGES; i++)
		p->b[i] = (struct pvnet_buf){.page = p->mem + (size_t)i * PVNET_PAGE_SIZE, .id = i};
	*state = p;
	return 0;
}

static int pages_teardown(void **state)
{
	struct pages *p = *state;

	free(p->mem);
	free(p->lin);
	free(p);
	return 0;
}

/* Lay @len bytes of @src over the pages as tap_read_one() does: whole pages, in order. */
static struct pvnet_buf *scatter(struct pages *p, const uint8_t *src, uint32_t len)
{
	unsigned int np = (len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;

	for (unsigned int k = 0; k < np; k++) {
		struct pvnet_buf *b = &p->b[k];

		b->data = b->page;
		b->len = k + 1 < np ? PVNET_PAGE_SIZE : len - k * PVNET_PAGE_SIZE;
		b->next = k + 1 < np ? &p->b[k + 1] : NULL;
		memcpy(b->data, src + (size_t)k * PVNET_PAGE_SIZE, b->len);
	}
	return &p->b[0];
}

/* Run both on frame @f with header @vh; compare; return the verdict and whether it linearized. */
static int check_same(struct pages *p, const struct fb *f, const struct virtio_net_hdr *vh,
		      uint32_t mtu, uint32_t off, bool *linearized)
{
	static struct fb ref;
	struct uplink_meta m_ref, m;
	struct pvnet_buf *head;
	int rc_ref, rc;

	memcpy(ref.b, f->b, f->len);
	rc_ref = uplink_vnet2meta(vh, ref.b, f->len, mtu, off, &m_ref);
	head = scatter(p, f->b, f->len);
	rc = attach_frame_check(vh, head, f->len, mtu, off, p->lin, &m, linearized);
	assert_int_equal(rc, rc_ref);
	if (rc == 0) {
		assert_int_equal(m.flags, m_ref.flags);
		assert_int_equal(m.gso_type, m_ref.gso_type);
		assert_int_equal(m.gso_size, m_ref.gso_size);
		/* The chain holds what the linear frame holds (software checksum included). */
		for (const struct pvnet_buf *b = head; b; b = b->next) {
			size_t at = (size_t)((const uint8_t *)b->data - p->mem);

			assert_memory_equal(b->data, ref.b + at, b->len);
		}
	}
	return rc;
}

static struct virtio_net_hdr tso_hdr(const struct fb *f, int l3, uint16_t mss)
{
	return (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				       .gso_type = l3 == 4 ? VIRTIO_NET_HDR_GSO_TCPV4
							   : VIRTIO_NET_HDR_GSO_TCPV6,
				       .gso_size = mss,
				       .hdr_len = (uint16_t)(f->l4 + 20),
				       .csum_start = (uint16_t)f->l4,
				       .csum_offset = 16};
}

/* TSO frames of every page count: accepted without a copy, same verdict as in one piece. */
static void test_tso_fast(void **state)
{
	static const uint32_t payloads[] = {1, 100, 1448, 4000, 4042, 4043, 8192, 20000, 65000};
	static struct fb f;
	struct pages *p = *state;
	bool lin;

	for (int l3 = 4; l3 <= 6; l3 += 2) {
		for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
			struct virtio_net_hdr vh;
			uint32_t pl = payloads[i];

			fb_build(&f, l3, IPPROTO_TCP, i & 1, pl, 3);
			if (f.len > UPLINK_MAX_FRAME)
				continue;
			vh = tso_hdr(&f, l3, 1400);
			assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin), 0);
			assert_false(lin);
		}
	}
	/* The largest frame netif carries. */
	fb_build(&f, 4, IPPROTO_TCP, false, UPLINK_MAX_FRAME - 54, 3);
	assert_int_equal(f.len, UPLINK_MAX_FRAME);
	f.b[16] = 0xff; /* IPv4 total length is not looked at: it would overflow here */
	struct virtio_net_hdr vh = tso_hdr(&f, 4, 1448);
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin), 0);
	assert_false(lin);
}

/* Bad TSO headers over several pages: the same drop reason as in one piece. */
static void test_tso_bad(void **state)
{
	static struct fb f;
	struct pages *p = *state;
	struct virtio_net_hdr vh;
	bool lin;

	fb_build(&f, 4, IPPROTO_TCP, false, 30000, 3);
	vh = tso_hdr(&f, 4, 1448);
	vh.gso_size = 0;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh = tso_hdr(&f, 4, 1448);
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh = tso_hdr(&f, 4, 1448);
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV6; /* family mismatch */
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh = tso_hdr(&f, 4, 1448);
	vh.flags = 0; /* GSO without NEEDS_CSUM */
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh = tso_hdr(&f, 4, 1448);
	assert_int_equal(check_same(p, &f, &vh, 1500, UPLINK_OFF_CSUM4, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO)); /* TSO4 not negotiated */
	vh = tso_hdr(&f, 4, 1461); /* segments of 20 + 20 + 1461 > 1500 */
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
	vh = tso_hdr(&f, 4, 1448);
	vh.csum_start = (uint16_t)(f.l4 + 1);
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	/* Checksum field in a later page, or past the frame: decided on the whole frame. */
	vh = tso_hdr(&f, 4, 1448);
	vh.csum_start = 5000;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	assert_true(lin);
	vh.gso_type = VIRTIO_NET_HDR_GSO_UDP;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	vh.csum_start = 40000;
	vh.csum_offset = 60000;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_CSUM));
	/* Not TCP (UDP with a TCPv4 GSO type) over pages. */
	fb_build(&f, 4, IPPROTO_UDP, false, 9000, 3);
	vh = tso_hdr(&f, 4, 1448);
	vh.csum_offset = 6;
	assert_int_equal(check_same(p, &f, &vh, 1500, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	/* Longer than netif carries: refused before anything is looked at. */
	f.len = UPLINK_MAX_FRAME + 1;
	struct uplink_meta m;
	assert_int_equal(attach_frame_check(&vh, &p->b[0], f.len, 1500, ALL_OFF, p->lin, &m, &lin),
			 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
}

/*
 * IPv6 extension headers pushing TCP past the first page: parsed on the
 * linear copy.  Past the first SW_PKT_OFFLOAD_HDR_MAX bytes no receiver
 * would find them, so as TSO the frame is dropped; with a blank checksum
 * only, the checksum is computed and written into the pages.
 */
static void test_headers_past_first_page(void **state)
{
	static struct fb f;
	struct pages *p = *state;
	struct virtio_net_hdr vh;
	uint32_t ext = 8 * 256; /* two destination-options headers of 2048 bytes each */
	bool lin;

	fb_build(&f, 6, IPPROTO_TCP, false, 20000, 3);
	memmove(f.b + 54 + 2 * ext, f.b + 54, f.len - 54);
	memset(f.b + 54, 0, 2 * ext);
	f.b[20] = 60; /* next header: destination options */
	f.b[54] = 60;
	f.b[55] = 255;
	f.b[54 + ext] = IPPROTO_TCP;
	f.b[55 + ext] = 255;
	f.len += 2 * ext;
	f.l4 += 2 * ext;
	vh = tso_hdr(&f, 6, 1000);
	assert_int_equal(check_same(p, &f, &vh, 9000, ALL_OFF, &lin),
			 uplink_drop_reason(UPLINK_DROP_GSO));
	assert_true(lin);
	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	vh.gso_size = 0;
	f.len = 54 + 2 * ext + 20 + 4000; /* within a 9000-byte MTU */
	fb_put16(f.b + 18, (uint16_t)(f.len - 54));
	assert_int_equal(check_same(p, &f, &vh, 9000, ALL_OFF, &lin), 0);
	assert_true(lin);
}

/* Jumbo frames without TSO: size checks, blank checksums kept or computed across pages. */
static void test_jumbo(void **state)
{
	static struct fb f;
	struct pages *p = *state;
	struct virtio_net_hdr vh;
	bool lin;

	for (uint32_t pl = 4040; pl < 9000; pl += 997) {
		for (int l3 = 4; l3 <= 6; l3 += 2) {
			fb_build(&f, l3, IPPROTO_UDP, pl & 1, pl, 3);
			vh = (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
						     .csum_start = (uint16_t)f.l4,
						     .csum_offset = 6};
			assert_int_equal(check_same(p, &f, &vh, 9000, ALL_OFF, &lin), 0);
			/* Family not negotiated: computed in software, written into the chain. */
			assert_int_equal(check_same(p, &f, &vh, 9000, 0, &lin), 0);
			/* Over the MTU. */
			assert_int_equal(check_same(p, &f, &vh, 4000, ALL_OFF, &lin),
					 uplink_drop_reason(UPLINK_DROP_OVERSIZE));
			vh.flags = VIRTIO_NET_HDR_F_DATA_VALID;
			assert_int_equal(check_same(p, &f, &vh, 9000, ALL_OFF, &lin), 0);
		}
	}
	/* ICMP with NEEDS_CSUM, the field straddling a page boundary (odd offset). */
	fb_build(&f, 4, IPPROTO_ICMP, false, 8000, 3);
	vh = (struct virtio_net_hdr){
	    .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 3001, .csum_offset = 1094};
	assert_int_equal(check_same(p, &f, &vh, 9000, ALL_OFF, &lin), 0);
	assert_true(lin);
}

/* Within one page nothing is copied; every short length and runt behaves as in one piece. */
static void test_one_page(void **state)
{
	static struct fb f;
	struct pages *p = *state;
	struct virtio_net_hdr vh;
	bool lin;

	fb_build(&f, 4, IPPROTO_TCP, false, 4096 - 54, 3);
	for (uint32_t len = 0; len <= PVNET_PAGE_SIZE; len += len < 80 ? 1 : 401) {
		struct fb *g = &f;
		uint32_t keep = g->len;

		g->len = len ? len : 1;
		vh = (struct virtio_net_hdr){
		    .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16};
		check_same(p, g, &vh, 9000, len & 1 ? ALL_OFF : 0, &lin);
		assert_false(lin);
		g->len = keep;
	}
}

/* Random headers on random frames (fixed seed): never a different verdict or byte. */
static void test_random(void **state)
{
	static struct fb f;
	struct pages *p = *state;
	unsigned int ok = 0, dropped = 0, linearized = 0;
	bool lin;

	srand(5);
	for (int i = 0; i < 3000; i++) {
		int l3 = rand() & 1 ? 4 : 6;
		uint8_t proto = (uint8_t[]){IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP}[rand() % 3];
		uint32_t pl = (uint32_t)rand() % 65000u;
		struct virtio_net_hdr vh;

		fb_build(&f, l3, proto, rand() % 5 == 0, pl, 3);
		if (f.len > UPLINK_MAX_FRAME)
			continue;
		vh = tso_hdr(&f, l3, (uint16_t)(rand() % 2000));
		if (rand() % 4 == 0)
			vh.gso_type = (uint8_t)(rand() % 5);
		if (rand() % 4 == 0)
			vh.flags = (uint8_t)(rand() % 4);
		if (rand() % 4 == 0)
			vh.csum_start = (uint16_t)(rand() % (int)(f.len + 100));
		if (rand() % 4 == 0)
			vh.csum_offset = (uint16_t)(rand() % 40);
		if (check_same(p, &f, &vh, rand() % 2 ? 1500u : 9000u, (uint32_t)rand() % 16u,
			       &lin) == 0)
			ok++;
		else
			dropped++;
		linearized += lin;
	}
	/* The mix covers both verdicts and both ways of looking. */
	assert_true(ok > 100 && dropped > 100 && linearized > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_tso_fast, pages_setup, pages_teardown),
	    cmocka_unit_test_setup_teardown(test_tso_bad, pages_setup, pages_teardown),
	    cmocka_unit_test_setup_teardown(test_headers_past_first_page, pages_setup,
					    pages_teardown),
	    cmocka_unit_test_setup_teardown(test_jumbo, pages_setup, pages_teardown),
	    cmocka_unit_test_setup_teardown(test_one_page, pages_setup, pages_teardown),
	    cmocka_unit_test_setup_teardown(test_random, pages_setup, pages_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
