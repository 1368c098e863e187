// SPDX-License-Identifier: MIT
/* test_capture.c - unit tests of port capture: what a capture socket receives, and when */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_port.h"
#include "switch/switch.h"

#define NPORTS 3
#define HDR    sizeof(struct sw_capture_hdr)

static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct env {
	struct sw *sw;
	struct fake_port fp[NPORTS];
	int rd;			  /* the reader's end */
	int wr;			  /* the capture's end, until sw_capture_start() takes it */
	uint8_t payload[4][4096]; /* fragment bytes of the test frames */
	uint8_t dgram[SW_CAPTURE_DGRAM + 4096]; /* the datagram being read */
	size_t dlen, doff;			/* its length, the next record */
	unsigned int ndgrams;			/* datagrams read */
};

static struct env env_storage;

static int setup(void **state)
{
	struct env *e = &env_storage;
	int sv[2];

	fake_reset();
	e->sw = fake_sw(0, 0);
	for (unsigned int i = 0; i < NPORTS; i++)
		fake_port_add(e->sw, &e->fp[i], i);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	e->rd = sv[0];
	e->wr = sv[1];
	e->dlen = e->doff = 0;
	e->ndgrams = 0;
	for (unsigned int f = 0; f < 4; f++)
		for (unsigned int i = 0; i < sizeof(e->payload[f]); i++)
			e->payload[f][i] = (uint8_t)(f * 61 + i * 7 + 1);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	for (unsigned int i = 0; i < NPORTS; i++)
		fake_port_release(&e->fp[i]);
	sw_destroy(e->sw);
	close(e->rd);
	if (e->wr >= 0)
		close(e->wr);
	for (unsigned int i = 0; i < FAKE_PKTS; i++)
		if (fake_pkts[i].pkt.done)
			assert_int_equal(fake_pkts[i].done_calls, 1);
	return 0;
}

static struct sw_capture *start(struct env *e, unsigned int port, unsigned int dir, uint32_t snap)
{
	struct sw_capture *cap = NULL;
	char name[8];

	snprintf(name, sizeof(name), "p%u", port);
	assert_int_equal(sw_capture_start(e->sw, name, dir, snap, e->wr, &cap), 0);
	e->wr = -1; /* the capture's now */
	return cap;
}

/* Frame @id from @src to @dst: the 14-byte header copy, then @nfrags payload pieces of @flen. */
static struct sw_pkt *frame(struct env *e, unsigned int id, const uint8_t *dst, const uint8_t *src,
			    unsigned int nfrags, uint32_t flen)
{
	struct sw_pkt *p = fake_frame(id, dst, src, 14 + nfrags * flen);

	p->nfrags = (uint8_t)nfrags;
	for (unsigned int f = 0; f < nfrags; f++)
		p->frag[f] = (struct sw_pkt_frag){.base = e->payload[f], .len = flen};
	return p;
}

/*
 * The next record: its header, and its frame bytes into @buf; returns the
 * frame bytes, or -EAGAIN when nothing more came.  Checks each record's
 * layout: caplen bytes, then zeros up to the alignment, records back to
 * back filling the datagram.
 */
static ssize_t read_one(struct env *e, struct sw_capture_hdr *h, uint8_t *buf, size_t size)
{
	size_t rec;

	if (e->doff == e->dlen) {
		ssize_t n = recv(e->rd, e->dgram, sizeof(e->dgram), MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0)
			return -errno;
		assert_true((size_t)n <= sizeof(e->dgram));
		assert_true((size_t)n >= HDR);
		e->dlen = (size_t)n;
		e->doff = 0;
		e->ndgrams++;
	}
	assert_true(e->dlen - e->doff >= HDR);
	memcpy(h, e->dgram + e->doff, HDR);
	rec = HDR + h->caplen;
	rec += -rec % SW_CAPTURE_ALIGN;
	assert_true(rec <= e->dlen - e->doff);
	assert_true(h->caplen <= size);
	memcpy(buf, e->dgram + e->doff + HDR, h->caplen);
	for (size_t i = HDR + h->caplen; i < rec; i++)
		assert_int_equal(e->dgram[e->doff + i], 0);
	assert_int_equal(h->reserved, 0);
	e->doff += rec;
	return h->caplen;
}

static void test_start_refusals(void **state)
{
	struct env *e = *state;
	struct sw_capture *cap = NULL;

	assert_int_equal(sw_capture_start(e->sw, "nope", SW_CAPTURE_IN, 100, e->wr, &cap), -ENOENT);
	assert_int_equal(sw_capture_start(e->sw, "p1", 0, 100, e->wr, &cap), -EINVAL);
	assert_int_equal(sw_capture_start(e->sw, "p1", 4, 100, e->wr, &cap), -EINVAL);
	assert_int_equal(sw_capture_start(e->sw, "p1", SW_CAPTURE_IN, 0, e->wr, &cap), -EINVAL);
	assert_int_equal(
	    sw_capture_start(e->sw, "p1", SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX + 1, e->wr, &cap),
	    -EINVAL);
	assert_null(cap);
	cap = start(e, 1, SW_CAPTURE_IN | SW_CAPTURE_OUT, SW_CAPTURE_SNAPMAX);
	assert_string_equal(sw_capture_port(cap), "p1");
	{
		struct sw_capture *two = NULL;
		int sv[2];

		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		assert_int_equal(sw_capture_start(e->sw, "p1", SW_CAPTURE_IN, 100, sv[1], &two),
				 -EBUSY);
		/* Another port can be captured meanwhile. */
		assert_int_equal(sw_capture_start(e->sw, "p2", SW_CAPTURE_IN, 100, sv[1], &two), 0);
		sw_capture_stop(e->sw, two, NULL);
		close(sv[0]);
	}
	sw_capture_stop(e->sw, cap, NULL);
}

/* In and out of one port, with the bytes of header copy and fragments in order. */
static void test_in_and_out(void **state)
{
	struct env *e = *state;
	struct sw_capture_stats st;
	struct sw_capture_hdr h;
	struct sw_capture *cap;
	uint8_t a[6], b[6], buf[8192];
	struct sw_pkt *p;
	ssize_t n;

	fake_mac(a, 1);
	fake_mac(b, 2);
	cap = start(e, 1, SW_CAPTURE_IN | SW_CAPTURE_OUT, SW_CAPTURE_SNAPMAX);
	/* p1 sends (in), learning b; then p0 sends to b (out of p1). */
	p = frame(e, 1, bcast, b, 2, 100);
	assert_int_equal(sw_forward(e->sw, e->fp[1].port, &p, 1), 1);
	p = frame(e, 2, b, a, 3, 500);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, &p, 1), 1);

	n = read_one(e, &h, buf, sizeof(buf));
	assert_int_equal(n, 14 + 200);
	assert_int_equal(h.dir, SW_CAPTURE_IN);
	assert_int_equal(h.len, 214);
	assert_int_equal(h.port, e->fp[1].port->num);
	assert_memory_equal(buf, fake_pkts[1].hdr, 14);
	assert_memory_equal(buf + 14, e->payload[0], 100);
	assert_memory_equal(buf + 114, e->payload[1], 100);

	n = read_one(e, &h, buf, sizeof(buf));
	assert_int_equal(n, 14 + 1500);
	assert_int_equal(h.dir, SW_CAPTURE_OUT);
	assert_int_equal(h.len, 1514);
	assert_memory_equal(buf, fake_pkts[2].hdr, 14);
	for (unsigned int f = 0; f < 3; f++)
		assert_memory_equal(buf + 14 + f * 500, e->payload[f], 500);
	{
		struct timespec now;
		uint64_t ns;

		clock_gettime(CLOCK_REALTIME, &now);
		ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
		assert_true(h.ts_ns <= ns && h.ts_ns + 10000000000ULL > ns);
	}
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), -EAGAIN); /* nothing else */
	/* Both frames went where the switch sends them, capture or not. */
	assert_true(fake_delivered(0, 1));
	assert_true(fake_delivered(1, 2));

	sw_capture_stats_get(cap, &st);
	assert_int_equal(st.captured, 2);
	assert_int_equal(st.dropped, 0);
	sw_capture_stop(e->sw, cap, &st);
	assert_int_equal(st.captured, 2);
}

/* Frames the switch drops are still what the port received; other ports' traffic is not. */
static void test_in_sees_drops_not_others(void **state)
{
	struct env *e = *state;
	struct sw_capture_hdr h;
	struct sw_capture *cap;
	uint8_t a[6], c[6], zero[6] = {0}, buf[256];
	struct sw_pkt *p[2];

	fake_mac(a, 1);
	fake_mac(c, 3);
	cap = start(e, 0, SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX);
	p[0] = frame(e, 1, bcast, zero, 1, 50); /* invalid source: dropped */
	p[1] = frame(e, 2, bcast, a, 1, 50);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, 2), 1);
	assert_int_equal(fake_stat(&e->fp[0], "rx_src_invalid"), 1);
	/* p2 talks to a (out of p0): not captured, the capture takes only "in". */
	p[0] = frame(e, 3, a, c, 1, 50);
	assert_int_equal(sw_forward(e->sw, e->fp[2].port, p, 1), 1);
	assert_true(fake_delivered(0, 3));

	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 64);
	assert_memory_equal(buf + 6, zero, 6);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 64);
	assert_memory_equal(buf + 6, a, 6);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), -EAGAIN);
	sw_capture_stop(e->sw, cap, NULL);
}

/* The snap length cuts the datagram, not the length it reports; a whole-frame fragment list. */
static void test_snaplen_and_whole_frags(void **state)
{
	struct env *e = *state;
	struct sw_capture_hdr h;
	struct sw_capture *cap;
	uint8_t a[6], buf[8192];
	struct sw_pkt *p;

	fake_mac(a, 1);
	cap = start(e, 0, SW_CAPTURE_IN, 40);
	p = frame(e, 1, bcast, a, 2, 1000);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, &p, 1), 1);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 40);
	assert_int_equal(h.len, 2014);
	assert_memory_equal(buf, fake_pkts[1].hdr, 14);
	assert_memory_equal(buf + 14, e->payload[0], 26);
	sw_capture_stop(e->sw, cap, NULL);

	/* Fragments that are the whole frame (they repeat the header copy): no header twice. */
	{
		int sv[2];

		close(e->rd);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		e->rd = sv[0];
		e->wr = sv[1];
	}
	cap = start(e, 0, SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX);
	p = frame(e, 2, bcast, a, 1, 300);
	memcpy(e->payload[0], fake_pkts[2].hdr, 14);
	p->len = 300;
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, &p, 1), 1);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 300);
	assert_int_equal(h.len, 300);
	assert_memory_equal(buf, e->payload[0], 300);
	sw_capture_stop(e->sw, cap, NULL);
}

/* A batch's records share datagrams of at most SW_CAPTURE_DGRAM bytes, in order. */
static void test_packing(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[SW_BATCH_MAX];
	struct sw_capture_hdr h;
	struct sw_capture *cap;
	uint8_t a[6], buf[8192];

	fake_mac(a, 1);
	cap = start(e, 0, SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX);
	/* 64 frames of 61 bytes: one datagram of 64 records of 24 + 61 (+ 3) bytes. */
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++)
		p[i] = frame(e, i, bcast, a, 1, 47);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, SW_BATCH_MAX), SW_BATCH_MAX);
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++) {
		assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 61);
		assert_int_equal(h.len, 61);
		assert_memory_equal(buf, fake_pkts[i].hdr, 14);
		assert_memory_equal(buf + 14, e->payload[0], 47);
	}
	assert_int_equal(e->ndgrams, 1);
	assert_int_equal(e->dlen, SW_BATCH_MAX * 88);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), -EAGAIN);

	/* 64 frames of 3014 bytes: 21 records fit 64 KiB, so 4 datagrams, frames in order. */
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++)
		p[i] = frame(e, 100 + i, bcast, a, 1, 3000);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, p, SW_BATCH_MAX), SW_BATCH_MAX);
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++) {
		assert_int_equal(read_one(e, &h, buf, sizeof(buf)), 3014);
		assert_memory_equal(buf, fake_pkts[100 + i].hdr, 14);
		assert_true(e->dlen <= SW_CAPTURE_DGRAM);
	}
	assert_int_equal(e->ndgrams, 1 + 4);
	sw_capture_stop(e->sw, cap, NULL);
}

/*
 * Frames of many fragments: a datagram takes at most IOV_MAX iovecs (64
 * records of 21 pieces would be 1344), so the batch is split, not lost.
 * The offload fields are in each record's header.
 */
static void test_many_fragments_and_offloads(void **state)
{
	struct env *e = *state;
	struct sw_pkt *p[SW_BATCH_MAX];
	struct sw_capture_stats st;
	struct sw_capture_hdr h;
	struct sw_capture *cap;
	uint8_t a[6], buf[256];

	fake_mac(a, 1);
	cap = start(e, 0, SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX);
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++) {
		p[i] = fake_frame(i, bcast, a, 14 + (SW_PKT_MAX_FRAGS - 1) * 4);
		p[i]->nfrags = SW_PKT_MAX_FRAGS - 1;
		for (unsigned int f = 0; f < SW_PKT_MAX_FRAGS - 1; f++)
			p[i]->frag[f] =
			    (struct sw_pkt_frag){.base = e->payload[f % 4] + f, .len = 4};
	}
	p[0]->flags = SW_PKT_CSUM_BLANK;
	p[0]->gso_type = SW_GSO_TCPV4;
	p[0]->gso_size = 1448;
	sw_forward(e->sw, e->fp[0].port, p, SW_BATCH_MAX);
	sw_capture_stats_get(cap, &st);
	assert_int_equal(st.captured, SW_BATCH_MAX);
	assert_int_equal(st.dropped, 0);
	for (unsigned int i = 0; i < SW_BATCH_MAX; i++) {
		assert_int_equal(read_one(e, &h, buf, sizeof(buf)),
				 14 + (SW_PKT_MAX_FRAGS - 1) * 4);
		assert_memory_equal(buf, fake_pkts[i].hdr, 14);
		for (unsigned int f = 0; f < SW_PKT_MAX_FRAGS - 1; f++)
			assert_memory_equal(buf + 14 + f * 4, e->payload[f % 4] + f, 4);
		assert_int_equal(h.flags, i ? 0 : SW_PKT_CSUM_BLANK);
		assert_int_equal(h.gso_type, i ? SW_GSO_NONE : SW_GSO_TCPV4);
		assert_int_equal(h.gso_size, i ? 0 : 1448);
	}
	assert_int_equal(e->ndgrams, 2);
	assert_int_equal(read_one(e, &h, buf, sizeof(buf)), -EAGAIN);
	sw_capture_stop(e->sw, cap, NULL);
}

/*
 * A reader that falls behind loses frames, counted per frame (a datagram
 * holds several); the switch never waits for it.
 */
static void test_full_socket_drops(void **state)
{
	struct env *e = *state;
	struct sw_capture_stats st;
	struct sw_capture *cap;
	int sndbuf = 64 << 10;
	uint8_t a[6];
	unsigned int sent = 0;

	fake_mac(a, 1);
	assert_int_equal(setsockopt(e->wr, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	cap = start(e, 0, SW_CAPTURE_IN, SW_CAPTURE_SNAPMAX);
	for (unsigned int b = 0; b < 100; b++) {
		struct sw_pkt *p[8];

		for (unsigned int i = 0; i < 8; i++)
			p[i] = frame(e, b * 8 + i, bcast, a, 1, 1000);
		sent += sw_forward(e->sw, e->fp[0].port, p, 8);
	}
	assert_int_equal(sent, 800);
	assert_int_equal(fake_count_port(1), 800);
	sw_capture_stats_get(cap, &st);
	assert_int_equal(st.captured + st.dropped, 800);
	assert_true(st.dropped > 0);
	assert_true(st.captured > 0);
	{
		struct sw_capture_hdr h;
		uint8_t buf[2048];
		uint64_t got = 0;

		while (read_one(e, &h, buf, sizeof(buf)) == 1014)
			got++;
		assert_int_equal(got, st.captured);
		assert_true(e->ndgrams < got);
	}
	sw_capture_stop(e->sw, cap, NULL);
}

/* Stopping closes the socket; a port that goes away ends its capture with end of file. */
static void test_stop_and_port_gone(void **state)
{
	struct env *e = *state;
	struct sw_capture_stats st;
	struct sw_capture *cap;
	uint8_t a[6], buf[256];
	struct sw_pkt *p;

	fake_mac(a, 1);
	cap = start(e, 2, SW_CAPTURE_IN | SW_CAPTURE_OUT, SW_CAPTURE_SNAPMAX);
	sw_capture_stop(e->sw, cap, &st);
	assert_int_equal(st.captured, 0);
	assert_int_equal(recv(e->rd, buf, sizeof(buf), MSG_DONTWAIT), 0); /* closed */
	p = frame(e, 1, bcast, a, 1, 50);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, &p, 1), 1);
	{
		int sv[2];

		close(e->rd);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		e->rd = sv[0];
		e->wr = sv[1];
	}
	cap = start(e, 2, SW_CAPTURE_IN | SW_CAPTURE_OUT, SW_CAPTURE_SNAPMAX);
	p = frame(e, 2, bcast, a, 1, 50);
	assert_int_equal(sw_forward(e->sw, e->fp[0].port, &p, 1), 1);
	fake_port_release(&e->fp[2]);
	assert_int_equal(sw_port_del(e->sw, e->fp[2].port), 0);
	e->fp[2].port = NULL;
	assert_int_equal(recv(e->rd, buf, sizeof(buf), MSG_DONTWAIT), 64 + (ssize_t)HDR);
	assert_int_equal(recv(e->rd, buf, sizeof(buf), MSG_DONTWAIT), 0); /* end of file */
	/* The name is free again, and the old capture still stops cleanly. */
	sw_capture_stop(e->sw, cap, &st);
	assert_int_equal(st.captured, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_start_refusals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_and_out, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_sees_drops_not_others, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_snaplen_and_whole_frags, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_packing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_many_fragments_and_offloads, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_socket_drops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stop_and_port_gone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
