// SPDX-License-Identifier: MIT
/*
 * test_offload.c - netback gives a guest only the offloads it negotiated:
 * GSO frames segmented and blank checksums filled in for one that lacks them
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "../common/frame_builder.h"
#include "fx.h"
#include "switch/frame.h"

/* TCP header length of the test frames: 20 bytes and a 12-byte timestamp option. */
#define TCP_HL 32u

static struct fb f;
static uint8_t rbuf[65536], joined[65536];

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/*
 * Where an IPv6 test frame's final destination is (0: the IPv6 header's;
 * a routing header's address otherwise, RFC 8200 8.1).
 */
static uint32_t final_dst;

static uint32_t pseudo(const uint8_t *p, int l3, uint32_t l4_len)
{
	if (l3 == 4)
		return sw_csum_fold(p + 14 + 12, 8, 0) + IPPROTO_TCP + l4_len;
	return sw_csum_fold(p + 14 + 8, 16, 0) +
	       sw_csum_fold(p + (final_dst ? final_dst : 14 + 24), 16, 0) + IPPROTO_TCP + l4_len;
}

/* Bytes of destination options tcp_frame() puts between IPv6 and TCP (0: none). */
static uint32_t dstopts;

/* An IPv6 extension header tcp_frame() puts first after the IPv6 header (ext_len 0: none). */
static uint8_t ext_type, ext_hdr[40];
static uint32_t ext_len;

/*
 * A TCP frame from A to B with @payload bytes (a pseudo-random pattern), its
 * checksum blank as a sender with checksum offload leaves it.
 */
static void tcp_frame(int l3, uint32_t payload, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;
	uint8_t *t;

	fb_build(&f, l3, IPPROTO_TCP, false, payload + TCP_HL - 20, 0);
	if (l3 == 6 && dstopts)
		fb_add_dstopts(&f, dstopts);
	if (l3 == 6 && ext_len)
		fb_add_ext6(&f, ext_type, ext_hdr, ext_len);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
	t = f.b + f.l4;
	t[12] = (TCP_HL / 4) << 4;
	t[13] = 0x10 | 0x08; /* ACK PSH */
	memcpy(t + 4, "\x00\x00\x10\x00", 4);
	memcpy(t + 20, "\x01\x01\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x02", 12);
	for (uint32_t i = 0; i < payload; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		t[TCP_HL + i] = (uint8_t)x;
	}
	fb_put16(t + 16, sw_csum_fold(NULL, 0, pseudo(f.b, l3, f.len - f.l4)));
}

/*
 * Wait until A has every answer to what it sent: an error response to a
 * dropped frame is published after the counter that tells of the drop, and
 * must not arrive inside a later transfer(), which wants none.
 */
static void answered_all(struct fx *x)
{
	assert_true(WAIT_UNTIL(
	    &x->w, (ff_tx_reap(&x->a, 0), x->a.q[0].tx.rsp_cons == x->a.q[0].tx.req_prod_pvt),
	    WAIT_MS));
}

/* Send f from A with @opt. */
static void send_f(struct fx *x, const struct ff_txopt *opt)
{
	assert_int_equal(ff_tx_frame(&x->a, 0, f.b, f.len, opt), 0);
	ff_tx_push(&x->a, 0);
}

/*
 * Receive up to @n frames at B into consecutive slices of @out (lengths in
 * @lens), B posting its buffers again as it goes unless @hold.
 */
static unsigned int recv_n(struct fx *x, unsigned int n, uint8_t (*out)[2048], uint32_t *lens,
			   struct ff_rxinfo *infos, bool hold)
{
	unsigned int got = 0;
	uint64_t end = test_now_ms() + WAIT_MS;

	while (got < n && test_now_ms() < end) {
		int r;

		if (!hold)
			ff_rx_post(&x->b, 0, FF_RING);
		r = ff_rx_recv(&x->b, 0, rbuf, sizeof(rbuf), &infos[got]);
		if (r == -EAGAIN) {
			loop_run_once(x->w.loop, 1);
			continue;
		}
		assert_true(r > 0 && r <= 2048);
		memcpy(out[got], rbuf, (size_t)r);
		lens[got++] = (uint32_t)r;
	}
	return got;
}

static uint8_t segs[256][2048];
static uint32_t seglens[256];
static struct ff_rxinfo infos[256];

/*
 * A sends one GSO frame of @payload bytes with @mss; B, which did not
 * negotiate that GSO type, must get the segments a TCP stack would have
 * sent: right lengths, sequence numbers and flags, checksums blank where
 * B takes blank ones and valid in full where it does not, payload whole.
 */
static void gso_to(enum back_tx_mode mode, int l3, const struct ff_opts *ob, uint32_t payload,
		   uint16_t mss, bool held)
{
	struct fx *x = fx_new(mode, NULL, NULL, ob);
	struct ff_txopt opt = {.gso_type =
				   l3 == 4 ? XEN_NETIF_GSO_TYPE_TCPV4 : XEN_NETIF_GSO_TYPE_TCPV6,
			       .gso_size = mss,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	bool blank = l3 == 4 ? !ob->no_csum : ob->ipv6_csum;
	unsigned int want = (payload + mss - 1) / mss, got;
	uint32_t hdrs, off = 0;

	tcp_frame(l3, payload, payload + mss);
	hdrs = f.l4 + TCP_HL;
	send_f(x, &opt);
	/* Held: B posts nothing until netback has copied the frame out of A's pages. */
	if (held)
		assert_true(
		    WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_held_copied") == 1, WAIT_MS));
	got = recv_n(x, want, segs, seglens, infos, false);
	if (got != want)
		dump(x, got, want, 0);
	assert_int_equal(got, want);
	for (unsigned int i = 0; i < got; i++) {
		uint8_t *s = segs[i], *t = s + f.l4;
		uint32_t len = seglens[i], l4_len = len - f.l4;

		assert_int_equal(len, hdrs + (i + 1 < got ? mss : payload - off));
		assert_int_equal(infos[i].gso_type, 0);
		assert_memory_equal(s, f.b, 14);
		if (l3 == 4) {
			assert_int_equal(get16(s + 14 + 2), len - 14);
			assert_int_equal(sw_csum_fold(s + 14, 20, 0), 0xffff);
		} else {
			assert_int_equal(get16(s + 14 + 4), len - 14 - 40);
		}
		assert_int_equal(get32(t + 4), 0x1000 + off);
		assert_int_equal(t[13] & 0x08, i + 1 == got ? 0x08 : 0);
		if (blank) {
			assert_int_equal(infos[i].flags &
					     (NETRXF_csum_blank | NETRXF_data_validated),
					 NETRXF_csum_blank | NETRXF_data_validated);
			assert_int_equal(get16(t + 16),
					 sw_csum_fold(NULL, 0, pseudo(s, l3, l4_len)));
		} else {
			assert_int_equal(infos[i].flags & NETRXF_csum_blank, 0);
			assert_int_equal(sw_csum_fold(t, l4_len, pseudo(s, l3, l4_len)), 0xffff);
		}
		memcpy(joined + off, s + hdrs, len - hdrs);
		off += len - hdrs;
	}
	assert_memory_equal(joined, f.b + hdrs, payload);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso"), 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso_segs"), want);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), want);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 0);
	/* A got its answer: the frame completed once, however many segments it made. */
	WAIT_UNTIL(&x->w,
		   (ff_tx_reap(&x->a, 0), x->a.q[0].tx.rsp_cons == x->a.q[0].tx.req_prod_pvt),
		   WAIT_MS);
	assert_int_equal(x->a.q[0].tx_rsp_error, 0);
	fx_free(x);
}

static const struct ff_opts no_gso = {.nq = 1, .sg = true, .rx_notify = true, .ipv6_csum = true};
static const struct ff_opts no_gso_csum = {.nq = 1, .sg = true, .rx_notify = true, .no_csum = true};
static const struct ff_opts no_sg = {.nq = 1, .rx_notify = true, .ipv6_csum = true};
/* GSO offered without scatter-gather: unusable, the guest gets segments. */
static const struct ff_opts gso_no_sg = {
    .nq = 1, .gso4 = true, .gso6 = true, .rx_notify = true, .ipv6_csum = true};

static void test_gso_v4_blank(void **state)
{
	(void)state;
	gso_to(BACK_TX_MAP, 4, &no_gso, 65535 - 14 - 20 - TCP_HL, 1448, false);
	gso_to(BACK_TX_COPY, 4, &no_gso, 30000, 1448, false);
	gso_to(BACK_TX_MAP, 4, &no_gso, 30000, 1448, true); /* from the hold pool */
}

static void test_gso_v4_full(void **state)
{
	(void)state;
	gso_to(BACK_TX_MAP, 4, &no_gso_csum, 65535 - 14 - 20 - TCP_HL, 1448, false);
	gso_to(BACK_TX_PERSISTENT, 4, &no_gso_csum, 4001, 1000, false);
}

static void test_gso_v6(void **state)
{
	(void)state;
	gso_to(BACK_TX_MAP, 6, &no_gso, 60000, 1428, false);
	gso_to(BACK_TX_COPY, 6, &no_gso_csum, 60000, 1428, false); /* no ipv6 csum offload */
}

/*
 * GSO is per family: a guest that takes only TCPv6 GSO gets a TCPv4 GSO
 * frame as segments, and one that takes only TCPv4 GSO a TCPv6 one.
 */
static void test_gso_one_family(void **state)
{
	static const struct ff_opts gso6_only = {
	    .nq = 1, .sg = true, .gso6 = true, .rx_notify = true, .ipv6_csum = true};
	static const struct ff_opts gso4_only = {
	    .nq = 1, .sg = true, .gso4 = true, .rx_notify = true, .ipv6_csum = true};

	(void)state;
	gso_to(BACK_TX_MAP, 4, &gso6_only, 20000, 1448, false);
	gso_to(BACK_TX_MAP, 6, &gso4_only, 20000, 1428, false);
}

/*
 * Checksum offload is per family for segments too: a guest that takes
 * blank IPv4 checksums only gets an IPv4 frame's segments blank and an
 * IPv6 frame's filled in.
 */
static void test_gso_csum_one_family(void **state)
{
	static const struct ff_opts v4_csum_only = {.nq = 1, .sg = true, .rx_notify = true};

	(void)state;
	gso_to(BACK_TX_MAP, 4, &v4_csum_only, 20000, 1448, false);
	gso_to(BACK_TX_MAP, 6, &v4_csum_only, 20000, 1428, false);
}

/* Without feature-sg a segment must fit one page: small MSS yes, jumbo no. */
static void test_gso_no_sg(void **state)
{
	struct ff_txopt opt = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 8000,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x;

	(void)state;
	gso_to(BACK_TX_MAP, 4, &no_sg, 20000, 1448, false);
	gso_to(BACK_TX_MAP, 4, &gso_no_sg, 20000, 1448, false);
	gso_to(BACK_TX_COPY, 6, &gso_no_sg, 20000, 1428, false);
	x = fx_new(BACK_TX_MAP, NULL, NULL, &no_sg);
	tcp_frame(4, 20000, 1);
	send_f(x, &opt);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_oversize") == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 0);
	/* B still takes what fits. */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 1514, NULL, 0);
	fx_free(x);
}

/* Receive one frame at B into rbuf; its length, or -EAGAIN after WAIT_MS. */
static int recv_one(struct fx *x, struct ff_rxinfo *info)
{
	uint64_t end = test_now_ms() + WAIT_MS;
	int r = -EAGAIN;

	while (test_now_ms() < end) {
		ff_rx_post(&x->b, 0, FF_RING);
		r = ff_rx_recv(&x->b, 0, rbuf, sizeof(rbuf), info);
		if (r != -EAGAIN)
			break;
		loop_run_once(x->w.loop, 1);
	}
	return r;
}

/* Send f with a blank checksum; B must get it whole with the checksum filled in. */
static void csum_filled(struct fx *x, uint8_t proto, int l3)
{
	struct ff_txopt opt = {.flags = NETTXF_csum_blank | NETTXF_data_validated};
	uint32_t field = f.l4 + (proto == IPPROTO_TCP ? 16 : 6);
	struct ff_rxinfo info;
	int r;

	send_f(x, &opt);
	r = recv_one(x, &info);
	assert_int_equal(r, (int)f.len);
	/* filled in: neither blank nor validated, as Linux's core leaves such a frame */
	assert_int_equal(info.flags & (NETRXF_csum_blank | NETRXF_data_validated), 0);
	assert_memory_equal(rbuf, f.b, field);
	assert_memory_equal(rbuf + field + 2, f.b + field + 2, f.len - field - 2);
	assert_int_equal(sw_csum_fold(rbuf + f.l4, f.len - f.l4,
				      pseudo(rbuf, l3, f.len - f.l4) - IPPROTO_TCP + proto),
			 0xffff);
}

/* A guest without checksum offload for a family gets TCP and UDP checksums filled in. */
static void test_csum_fill(void **state)
{
	struct ff_txopt opt = {.flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &no_gso_csum);

	(void)state;
	tcp_frame(4, 9000, 3); /* over several slots */
	csum_filled(x, IPPROTO_TCP, 4);
	tcp_frame(6, 1001, 4); /* no feature-ipv6-csum-offload either */
	csum_filled(x, IPPROTO_TCP, 6);
	fb_build(&f, 4, IPPROTO_UDP, false, 777, 9);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
	fb_put16(f.b + f.l4 + 6,
		 sw_csum_fold(NULL, 0, pseudo(f.b, 4, f.len - f.l4) - IPPROTO_TCP + IPPROTO_UDP));
	csum_filled(x, IPPROTO_UDP, 4);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 3);
	/*
	 * A blank checksum on what is not TCP or UDP fits no receiver: dropped
	 * at the sender's TX with an error response, counted (as Linux's
	 * netback drops what checksum_setup() cannot parse).
	 */
	make_frame(x->buf, 100, mac_b, mac_a, 1);
	assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 100, &opt), 0);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_bad"), 0);
	/* Frames without offloads pass untouched, and B is still up. */
	answered_all(x);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 9000, NULL, 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 3);
	fx_free(x);
}

/*
 * Checksum offload is per family: a guest that takes blank IPv4 checksums
 * but did not write feature-ipv6-csum-offload gets an IPv6 frame's filled
 * in, while an IPv4 frame's stays blank for it to leave to its stack.
 */
static void test_csum_fill_one_family(void **state)
{
	static const struct ff_opts v4_only = {.nq = 1, .sg = true, .rx_notify = true};
	struct ff_txopt opt = {.flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &v4_only);
	struct ff_rxinfo info;

	(void)state;
	tcp_frame(6, 1001, 7);
	csum_filled(x, IPPROTO_TCP, 6);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 1);
	tcp_frame(4, 1001, 8);
	send_f(x, &opt);
	assert_int_equal(recv_one(x, &info), (int)f.len);
	assert_true(info.flags & NETRXF_csum_blank);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 1);
	fx_free(x);
}

/*
 * GSO frames that cannot be segmented are dropped and counted; nothing else
 * suffers.  Those whose headers do not fit their GSO type go at the
 * sender's TX, as in Linux's netback; one netback cannot cut for this
 * receiver goes at its RX.
 */
static void test_gso_refused(void **state)
{
	struct ff_txopt opt = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 1448,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &no_gso);

	(void)state;
	/* not TCP at all */
	make_frame(x->buf, 30000, mac_b, mac_a, 1);
	assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 30000, &opt), 0);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 1, WAIT_MS));
	/* IPv6 announced as TCPv4 */
	tcp_frame(6, 30000, 2);
	send_f(x, &opt);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 2, WAIT_MS));
	/* GSO without a blank checksum over what is not TCP: no fix-up makes it one */
	opt.flags = NETTXF_data_validated;
	make_frame(x->buf, 30000, mac_b, mac_a, 2);
	assert_int_equal(ff_tx_frame(&x->a, 0, x->buf, 30000, &opt), 0);
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 3, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_gso_checksum_fixup"), 0);
	opt.flags = NETTXF_csum_blank | NETTXF_data_validated;
	/* more segments than netback's scratch holds (one per ring slot): at B's RX */
	opt.gso_size = 100;
	tcp_frame(4, 60000, 3);
	send_f(x, &opt);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_sw_bad") == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 3);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 1);
	answered_all(x);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 9000, NULL, 0);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	fx_free(x);
}

/*
 * A GSO frame without csum_blank, its checksum field holding anything:
 * GSO needs a blank checksum, and Linux's netback takes such a frame as
 * blank (some frontends send GSO so; checksum_setup() writes the
 * pseudo-header sum, counted as rx_gso_checksum_fixup).  So does pvnetd:
 * a guest with GSO gets the frame whole, blank, the field holding the
 * pseudo-header sum over the whole TCP length; one without gets segments
 * whose checksums verify.  Until 2026-12-07 such a frame was dropped as
 * tx_bad_offload.
 */
static void test_gso_not_blank(void **state)
{
	struct ff_txopt opt = {.gso_size = 1448, .flags = NETTXF_data_validated};
	struct ff_rxinfo info;
	struct fx *x;

	(void)state;
	for (int l3 = 4; l3 <= 6; l3 += 2) {
		uint32_t hdrs, field;

		opt.gso_type = l3 == 4 ? XEN_NETIF_GSO_TYPE_TCPV4 : XEN_NETIF_GSO_TYPE_TCPV6;
		x = fx_new(l3 == 4 ? BACK_TX_MAP : BACK_TX_COPY, NULL, NULL, NULL);
		tcp_frame(l3, 20000, 30 + l3);
		field = f.l4 + 16;
		fb_put16(f.b + field, 0x1234); /* not the pseudo-header sum */
		send_f(x, &opt);
		assert_int_equal(recv_one(x, &info), (int)f.len);
		assert_int_equal(info.gso_type, opt.gso_type);
		assert_int_equal(info.gso_size, 1448);
		assert_int_equal(info.flags & NETRXF_csum_blank, NETRXF_csum_blank);
		assert_memory_equal(rbuf, f.b, field);
		assert_int_equal(get16(rbuf + field),
				 sw_csum_fold(NULL, 0, pseudo(rbuf, l3, f.len - f.l4)));
		assert_memory_equal(rbuf + field + 2, f.b + field + 2, f.len - field - 2);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_gso_checksum_fixup"), 1);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_offload"), 0);
		fx_free(x);

		/* For a guest without GSO: segments, each checksum valid in full. */
		x = fx_new(BACK_TX_MAP, NULL, NULL, &no_gso_csum);
		fb_put16(f.b + field, 0x1234);
		hdrs = f.l4 + TCP_HL;
		send_f(x, &opt);
		{
			unsigned int want = (20000 + 1447) / 1448;
			unsigned int got = recv_n(x, want, segs, seglens, infos, false);
			uint32_t off = 0;

			assert_int_equal(got, want);
			for (unsigned int i = 0; i < got; i++) {
				uint32_t l4_len = seglens[i] - f.l4;

				assert_int_equal(infos[i].flags & NETRXF_csum_blank, 0);
				assert_int_equal(sw_csum_fold(segs[i] + f.l4, l4_len,
							      pseudo(segs[i], l3, l4_len)),
						 0xffff);
				assert_memory_equal(segs[i] + hdrs, f.b + hdrs + off,
						    seglens[i] - hdrs);
				off += seglens[i] - hdrs;
			}
			assert_int_equal(off, 20000);
		}
		assert_int_equal(back_vif_stat(x->va, 0, "tx_gso_checksum_fixup"), 1);
		fx_free(x);
	}
	/*
	 * IPv6 with its TCP header ending at byte 270, past netback's first
	 * 128-byte copy: fixed up once the rest of the headers are taken in.
	 */
	x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	dstopts = 184;
	opt.gso_type = XEN_NETIF_GSO_TYPE_TCPV6;
	tcp_frame(6, 20000, 40);
	assert_int_equal(f.l4 + TCP_HL, SW_PKT_OFFLOAD_HDR_MAX);
	fb_put16(f.b + f.l4 + 16, 0x1234);
	send_f(x, &opt);
	assert_int_equal(recv_one(x, &info), (int)f.len);
	assert_int_equal(info.flags & NETRXF_csum_blank, NETRXF_csum_blank);
	assert_int_equal(get16(rbuf + f.l4 + 16),
			 sw_csum_fold(NULL, 0, pseudo(rbuf, 6, f.len - f.l4)));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_gso_checksum_fixup"), 1);
	fx_free(x);
}

/*
 * A GSO frame that is all headers, no payload after its TCP header, is
 * nothing to segment: dropped at the sender's TX with an error, never
 * handed to a receiver that takes GSO as it is.
 */
static void test_gso_no_payload(void **state)
{
	struct ff_txopt opt = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 1448,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);

	(void)state;
	tcp_frame(4, 0, 5); /* Ethernet, IPv4, TCP with options: f.len is headers alone */
	assert_int_equal(f.len, f.l4 + TCP_HL);
	ff_rx_post(&x->b, 0, FF_RING);
	send_f(x, &opt);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_dropped"), 1);
	assert_int_equal(back_vif_stat(x->va, 0, "tx_packets"), 0);
	/* one byte of payload is a frame */
	tcp_frame(4, 1, 6);
	send_f(x, &opt);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_packets") == 1, WAIT_MS));
	assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_offload"), 1);
	fx_free(x);
}

/*
 * An offloaded frame whose TCP header ends past netback's 128-byte copy of
 * every frame (IPv6 extension headers) has more taken into that copy, up
 * to SW_PKT_OFFLOAD_HDR_MAX bytes, as Linux's netback pulls them: it is
 * delivered whole with its checksum blank (the header over several small
 * slots, in each TX mode; a frame shorter than the bound taken whole), has
 * its checksum filled in for a guest without IPv6 checksum offload, and is
 * cut into segments for one without GSO.  Eight bytes more of options:
 * past the bound, dropped at the sender's TX.
 */
static void test_headers_past_copy(void **state)
{
	static const struct ff_opts v4_csum_only = {.nq = 1, .sg = true, .rx_notify = true};
	static const enum back_tx_mode modes[] = {BACK_TX_MAP, BACK_TX_COPY, BACK_TX_PERSISTENT};
	struct ff_txopt opt = {.slot_max = 100, .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct ff_opts every = FF_OPTS_DEFAULT;
	struct ff_rxinfo info;
	struct fx *x;

	(void)state;
	every.ipv6_csum = true;
	for (unsigned int i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		x = fx_new(modes[i], NULL, NULL, &every);
		dstopts = 184;
		tcp_frame(6, 1000, i);
		assert_int_equal(f.l4 + TCP_HL, SW_PKT_OFFLOAD_HDR_MAX);
		send_f(x, &opt);
		assert_int_equal(recv_one(x, &info), (int)f.len);
		assert_memory_equal(rbuf, f.b, f.len);
		assert_int_equal(info.flags & NETRXF_csum_blank, NETRXF_csum_blank);
		dstopts = 80; /* 176 bytes in all: every slot's bytes go into the copy */
		tcp_frame(6, 10, i);
		send_f(x, &opt);
		assert_int_equal(recv_one(x, &info), (int)f.len);
		assert_memory_equal(rbuf, f.b, f.len);
		dstopts = 192;
		tcp_frame(6, 1000, i);
		send_f(x, &opt);
		assert_true(
		    WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 1, WAIT_MS));
		assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 2);
		fx_free(x);
	}
	x = fx_new(BACK_TX_MAP, NULL, NULL, &v4_csum_only);
	dstopts = 184;
	tcp_frame(6, 3000, 9);
	csum_filled(x, IPPROTO_TCP, 6);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 1);
	fx_free(x);
	gso_to(BACK_TX_MAP, 6, &no_gso, 20000, 1200, false);
	gso_to(BACK_TX_COPY, 6, &no_gso_csum, 20000, 1200, false);
	gso_to(BACK_TX_MAP, 6, &no_gso, 20000, 1200, true); /* from the hold pool */
}

/* The next test's frames are without options, also after a failed assertion here. */
static int no_dstopts(void **state)
{
	(void)state;
	dstopts = 0;
	ext_len = 0;
	final_dst = 0;
	return 0;
}

/*
 * IPv6 TCP behind a fragment header that is not a fragment (offset 0, M 0:
 * some Windows drivers put one on every IPv6 packet) or behind AH, with a
 * blank checksum: delivered as it is to a guest with IPv6 checksum
 * offload, filled in for one without, as Linux's netback takes them (until
 * 2026-12-06 dropped at the sender as tx_bad_offload).  GSO over either
 * cannot be cut, for any receiver: refused at the sender's TX.
 */
static void test_frag_ah_offload(void **state)
{
	static const struct ff_opts v4_csum_only = {.nq = 1, .sg = true, .rx_notify = true};
	static const uint8_t frag[8] = {0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78};
	static const uint8_t ah[24] = {0, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
	struct ff_txopt opt = {.flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct ff_txopt gso = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV6,
			       .gso_size = 1428,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct ff_opts every = FF_OPTS_DEFAULT;
	struct ff_rxinfo info;
	struct fx *x;

	(void)state;
	every.ipv6_csum = true;
	for (int k = 0; k < 2; k++) {
		ext_type = k ? 51 : 44;
		ext_len = k ? sizeof(ah) : sizeof(frag);
		memcpy(ext_hdr, k ? ah : frag, ext_len);
		x = fx_new(BACK_TX_MAP, NULL, NULL, &every);
		tcp_frame(6, 3000, 20 + k); /* over several slots */
		assert_int_equal(f.l4, 54 + ext_len);
		send_f(x, &opt);
		assert_int_equal(recv_one(x, &info), (int)f.len);
		assert_memory_equal(rbuf, f.b, f.len);
		assert_int_equal(info.flags & NETRXF_csum_blank, NETRXF_csum_blank);
		tcp_frame(6, 20000, 22 + k);
		send_f(x, &gso);
		assert_true(
		    WAIT_UNTIL(&x->w, back_vif_stat(x->va, 0, "tx_bad_offload") == 1, WAIT_MS));
		assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 1);
		fx_free(x);
		x = fx_new(BACK_TX_COPY, NULL, NULL, &v4_csum_only);
		tcp_frame(6, 1001, 24 + k);
		csum_filled(x, IPPROTO_TCP, 6);
		assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_csum"), 1);
		assert_int_equal(back_vif_stat(x->va, 0, "tx_bad_offload"), 0);
		fx_free(x);
	}
}

/*
 * A TCP sender with a routing header that has segments left (Mobile IPv6's
 * type 2 here) sums its checksums over the final destination, the address
 * in that header (RFC 8200 8.1): the segments cut for a guest without GSO
 * are summed over it too, blank or in full (until 2026-12-06 over the IPv6
 * header's destination: every segment failed its receiver's check).
 */
static void test_gso_routing_header(void **state)
{
	(void)state;
	memset(ext_hdr, 0, sizeof(ext_hdr));
	ext_type = 43;
	ext_len = 24;
	ext_hdr[1] = 2; /* length: 2 units past the first 8 bytes */
	ext_hdr[2] = 2; /* type 2 */
	ext_hdr[3] = 1; /* segments left */
	memcpy(ext_hdr + 8, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xaa",
	       16); /* the home address */
	final_dst = 54 + 8;
	gso_to(BACK_TX_MAP, 6, &no_gso, 20000, 1428, false);
	gso_to(BACK_TX_COPY, 6, &no_gso_csum, 20000, 1428, false);
}

/* Check segs[first..first+n-1] as @n segments of f cut at @mss from payload byte @off on. */
static void check_segs(unsigned int first, unsigned int n, uint16_t mss, uint32_t off)
{
	uint32_t hdrs = f.l4 + TCP_HL;

	for (unsigned int i = first; i < first + n; i++, off += mss) {
		assert_int_equal(seglens[i], hdrs + mss);
		assert_int_equal(get32(segs[i] + f.l4 + 4), 0x1000 + off);
		assert_memory_equal(segs[i] + hdrs, f.b + hdrs + off, mss);
	}
}

/* Receive exactly @n frames at B into segs (see recv_n()). */
static void recv_all(struct fx *x, unsigned int n, bool hold)
{
	unsigned int got = recv_n(x, n, segs, seglens, infos, hold);

	if (got != n)
		dump(x, got, n, 0);
	assert_int_equal(got, n);
}

/*
 * A HASH extra follows every segment, so each takes two slots: 128 segments
 * fill B's ring to the last slot; 200 take more slots than the ring has and
 * arrive all the same, as B posts buffers again: the segments go as the
 * separate frames Linux's core would have made of the frame.
 */
static void test_gso_over_ring(void **state)
{
	struct ff_txopt opt = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 100,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &no_gso);
	const unsigned int fill = BACK_RX_RING_SIZE / 2, over = 200;

	(void)state;
	_Static_assert(BACK_RX_RING_SIZE == FF_RING, "B's ring is netback's");
	fx_hash_on(x->vb);
	tcp_frame(4, fill * 100, 5);
	send_f(x, &opt);
	recv_all(x, fill, false);
	for (unsigned int i = 0; i < fill; i++) {
		assert_int_equal(seglens[i], f.l4 + TCP_HL + 100);
		assert_true(infos[i].hash);
		assert_int_equal(infos[i].slots, 2);
	}
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso_segs"), fill);

	tcp_frame(4, over * 100, 6);
	send_f(x, &opt);
	recv_all(x, over, false);
	check_segs(0, over, 100, 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso"), 2);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso_segs"), fill + over);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), fill + over);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_bad"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 0);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 50, 60, 9000, NULL, 0);
	fx_free(x);
}

/*
 * B keeps fewer buffers posted than A's frame makes segments: the segments
 * that fit go at once, the rest as B posts more, and C's frames, queued
 * behind it, follow.  (Before, the frame waited for all its slots at once,
 * and everything behind it with it: a guest that never posts that many
 * got nothing from anyone until the drain timeout, or its stall.)
 */
static void test_gso_head_in_parts(void **state)
{
	struct ff_txopt opt = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 256,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &no_gso);
	const unsigned int posted = 100, nseg = 250;

	(void)state;
	assert_int_equal(ff_rx_post(&x->b, 0, posted), posted);
	tcp_frame(4, nseg * 256, 9);
	send_f(x, &opt);
	/* What the posted buffers hold arrives without B posting again. */
	recv_all(x, posted, true);
	check_segs(0, posted, 256, 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso_segs"), posted);
	/*
	 * From the queue, not by A's thread directly: while a sender delivers,
	 * another may push onto the queue, and what goes in parts is first.
	 */
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_direct"), 0);
	/* C's frames now queue behind the rest of A's. */
	send_only(x, &x->c, mac_c, mac_b, 5, 100, 1);
	recv_all(x, nseg - posted + 5, false);
	check_segs(0, nseg - posted, 256, posted * 256);
	for (unsigned int i = nseg - posted; i < nseg - posted + 5; i++)
		assert_int_equal(seglens[i], 100);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso"), 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_gso_segs"), nseg);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), nseg + 5);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_stalls"), 0);
	assert_true(back_vif_carrier(x->vb));
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gso_v4_blank),
	    cmocka_unit_test(test_gso_v4_full),
	    cmocka_unit_test(test_gso_v6),
	    cmocka_unit_test(test_gso_csum_one_family),
	    cmocka_unit_test(test_gso_one_family),
	    cmocka_unit_test(test_gso_no_sg),
	    cmocka_unit_test(test_csum_fill),
	    cmocka_unit_test(test_gso_refused),
	    cmocka_unit_test(test_gso_over_ring),
	    cmocka_unit_test(test_gso_head_in_parts),
	    cmocka_unit_test(test_gso_no_payload),
	    cmocka_unit_test(test_csum_fill_one_family),
	    cmocka_unit_test_teardown(test_headers_past_copy, no_dstopts),
	    cmocka_unit_test_teardown(test_gso_not_blank, no_dstopts),
	    cmocka_unit_test_teardown(test_frag_ah_offload, no_dstopts),
	    cmocka_unit_test_teardown(test_gso_routing_header, no_dstopts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
