// SPDX-License-Identifier: MIT
/* test_frame.c - pvnet bench frames: fill then check, over every fragment layout; corruption found */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench.h"

static const uint8_t MAC_A[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};
static const uint8_t MAC_B[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b};

static uint8_t frame[BENCH_MAX_FRAME];

/* Cut @frame into fragments of @frag bytes (the last shorter), as RX slots would. */
static unsigned int cut(uint32_t len, uint32_t frag, struct iovec *iov, unsigned int max)
{
	unsigned int n = 0;

	for (uint32_t off = 0; off < len && n < max; off += frag)
		iov[n++] = (struct iovec){frame + off, len - off < frag ? len - off : frag};
	return n;
}

static void tmpls(struct bench_tmpl *t, unsigned int n, uint32_t len)
{
	for (unsigned int f = 0; f < n; f++)
		bench_tmpl_build(&t[f], MAC_B, MAC_A, (uint16_t)f, len);
}

static void test_headers(void **state)
{
	struct bench_tmpl t;

	bench_tmpl_build(&t, MAC_B, MAC_A, 3, 1514);
	assert_memory_equal(t.b, MAC_B, 6);
	assert_memory_equal(t.b + 6, MAC_A, 6);
	assert_int_equal(t.b[12] << 8 | t.b[13], 0x0800);
	assert_int_equal(t.b[14], 0x45);
	assert_int_equal(t.b[16] << 8 | t.b[17], 1500);			      /* IP total length */
	assert_int_equal(t.b[23], 17);					      /* UDP */
	assert_memory_equal(t.b + 26, "\x0a\x42\x01\x03\x0a\x42\x00\x02", 8); /* flow 3's */
	assert_int_equal(t.b[34] << 8 | t.b[35], BENCH_UDP_PORT + 3);
	assert_int_equal(t.b[38] << 8 | t.b[39], 1480); /* UDP length */
	/* A correct IPv4 header checksum sums to 0xffff. */
	uint32_t sum = 0;

	for (int i = 14; i < 34; i += 2)
		sum += (uint32_t)(t.b[i] << 8 | t.b[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);
}

static void test_roundtrip(void **state)
{
	static const uint32_t sizes[] = {60,   64,   100,  1023, 1024,	1025, 1514,
					 4095, 4096, 4097, 9000, 30000, 65535};
	static const uint32_t frags[] = {4096, 2048, 1000, 61, 65535};
	struct bench_tmpl t[4];
	struct iovec iov[2048];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t len = sizes[s];

		tmpls(t, 4, len);
		for (int mode = 0; mode < 2; mode++) {
			for (size_t fi = 0; fi < sizeof(frags) / sizeof(frags[0]); fi++) {
				unsigned int n = cut(len, frags[fi], iov, 2048);
				uint64_t seq = 0;
				uint16_t flow = 0;

				memset(frame, 0xa5, sizeof(frame));
				bench_frame_fill(iov, n, &t[2], 2, 123456789 + fi, len,
						 (enum bench_verify)mode);
				/* The receiver may see other fragment boundaries than the sender. */
				n = cut(len, frags[(fi + 1) % 5], iov, 2048);
				assert_int_equal(bench_frame_check(iov, n, len, t, 4,
								   (enum bench_verify)mode, &flow,
								   &seq),
						 0);
				assert_int_equal(flow, 2);
				assert_int_equal(seq, 123456789 + fi);
			}
		}
	}
}

static int check(uint32_t len, const struct bench_tmpl *t, unsigned int nflows,
		 enum bench_verify mode)
{
	struct iovec iov[64];
	unsigned int n = cut(len, 4096, iov, 64);
	uint64_t seq;
	uint16_t flow;

	return bench_frame_check(iov, n, len, t, nflows, mode, &flow, &seq);
}

static void fill(uint32_t len, const struct bench_tmpl *t, uint16_t flow, uint64_t seq,
		 enum bench_verify mode)
{
	struct iovec iov[64];
	unsigned int n = cut(len, 4096, iov, 64);

	bench_frame_fill(iov, n, &t[flow], flow, seq, len, mode);
}

static void test_corruption(void **state)
{
	struct bench_tmpl t[2];
	uint8_t other[9000];

	tmpls(t, 2, 9000);
	/* Every checked region catches a flipped byte: header, bench header, head, stamps, tail. */
	static const uint32_t offs[] = {0,  6,	13,  20,   40,	 42,   46,   50,
					57, 58, 100, 4080, 4090, 4100, 8191, 8999};

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED);
		assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), 0);
		frame[offs[i]] ^= 0x01;
		assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);
	}
	/* Between stamps only the full check sees it. */
	fill(9000, t, 1, 7, BENCH_VERIFY_FULL);
	frame[2000] ^= 0x80;
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), 0);
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_FULL), -EBADMSG);

	/* A frame with another frame's payload (stale buffer): seq 7 header, seq 8 bytes. */
	fill(9000, t, 1, 8, BENCH_VERIFY_FULL);
	memcpy(other, frame, sizeof(other));
	fill(9000, t, 1, 7, BENCH_VERIFY_FULL);
	memcpy(frame + BENCH_HDR_LEN, other + BENCH_HDR_LEN, 9000 - BENCH_HDR_LEN);
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);

	/* A slot shifted by a page: second 4 KiB repeated. */
	fill(9000, t, 1, 7, BENCH_VERIFY_FULL);
	memcpy(frame + 8192, frame + 4096, 9000 - 8192);
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);

	/* A copy cut short within a page: the rest of that page stale, up to the next stamp. */
	fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED);
	memset(frame + 5000, 0x5a, 8192 - 5000);
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);

	/* Wrong length, unknown flow, foreign frame. */
	fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED);
	assert_int_equal(check(8999, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);
	assert_int_equal(check(9000, t, 1, BENCH_VERIFY_SAMPLED), -EBADMSG);
	memset(frame, 0xff, 64);
	assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);
	/* No fragments at all. */
	uint64_t seq;
	uint16_t flow;

	assert_int_equal(bench_frame_check(NULL, 0, 9000, t, 2, BENCH_VERIFY_SAMPLED, &flow, &seq),
			 -EBADMSG);
	/* An intact frame in fragments that hold a byte more, or a byte less, than a frame. */
	struct iovec iov[64];

	fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED);
	assert_int_equal(bench_frame_check(iov, cut(9001, 4096, iov, 64), 9000, t, 2,
					   BENCH_VERIFY_SAMPLED, &flow, &seq),
			 -EBADMSG);
	assert_int_equal(bench_frame_check(iov, cut(8999, 4096, iov, 64), 9000, t, 2,
					   BENCH_VERIFY_SAMPLED, &flow, &seq),
			 -EBADMSG);
	assert_int_equal(bench_frame_check(iov, cut(9000, 4096, iov, 64), 9000, t, 2,
					   BENCH_VERIFY_SAMPLED, &flow, &seq),
			 0);
}

/* A sampled check reads BENCH_STAMP_LEN bytes either side of every 4 KiB slot boundary. */
static void test_stamps_span_the_boundaries(void **state)
{
	struct bench_tmpl t[2];

	tmpls(t, 2, 9000);
	for (uint32_t m = BENCH_STAMP_SPAN; m < 9000; m += BENCH_STAMP_SPAN) {
		const uint32_t in[] = {m - BENCH_STAMP_LEN, m - 1, m, m + BENCH_STAMP_LEN - 1};
		const uint32_t out[] = {m - BENCH_STAMP_LEN - 1, m + BENCH_STAMP_LEN};

		for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
			fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED); /* 7: no rover line */
			frame[in[i]] ^= 0x04;
			assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), -EBADMSG);
		}
		for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
			fill(9000, t, 1, 7, BENCH_VERIFY_SAMPLED);
			frame[out[i]] ^= 0x04;
			assert_int_equal(check(9000, t, 2, BENCH_VERIFY_SAMPLED), 0);
		}
	}
}

static void test_small_frames_every_byte_checked(void **state)
{
	static const uint32_t sizes[] = {60, 64, 121, 122, 123, 137, 138, 139, 200};
	struct bench_tmpl t[2];

	/* Up to 122 bytes the sampled check covers every byte; past it, the tail's 16. */
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t len = sizes[s];

		tmpls(t, 2, len);
		for (uint32_t off = 0; off < len; off++) {
			bool checked = off < 122 || off >= len - 16;

			fill(len, t, 1, 99, BENCH_VERIFY_SAMPLED);
			frame[off] ^= 0x10;
			assert_int_equal(check(len, t, 2, BENCH_VERIFY_SAMPLED),
					 checked ? -EBADMSG : 0);
		}
	}
}

static bool in_spans(uint32_t off, uint32_t r[BENCH_FRAME_MAX_SPANS][2], unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (off >= r[i][0] && off < r[i][1])
			return true;
	return false;
}

/*
 * bench_frame_spans() names exactly the bytes a sampled fill writes and a
 * sampled check reads (the bench prefetches them by it): a byte flipped
 * inside a span is caught, one outside is not, and the fill leaves every
 * byte outside the spans as it was.
 */
static void test_spans_are_what_fill_and_check_touch(void **state)
{
	static const uint32_t sizes[] = {60, 122, 123, 200, 4096, 4097, 4111, 4112, 9000, 65535};
	uint32_t r[BENCH_FRAME_MAX_SPANS][2];
	struct bench_tmpl t[2];

	/* A frame without a rover line, and rover frames with theirs at the start, inside a stamp, at the end. */
	static const uint64_t seqs[] = {42, 0, 64 * 5, 64 * 63, 64 * 1022};

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t q = 0; q < sizeof(seqs) / sizeof(seqs[0]); q++) {
			uint32_t len = sizes[s];
			unsigned int n = bench_frame_spans(BENCH_VERIFY_SAMPLED, len, seqs[q], r);

			assert_true(n >= 1 && n <= BENCH_FRAME_MAX_SPANS);
			for (unsigned int i = 0; i < n; i++) {
				assert_true(r[i][0] < r[i][1] && r[i][1] <= len);
				if (i > 0)
					assert_true(r[i][0] >=
						    r[i - 1][1]); /* ascending, disjoint */
			}
			tmpls(t, 2, len);
			memset(frame, 0x3c, sizeof(frame));
			fill(len, t, 1, seqs[q], BENCH_VERIFY_SAMPLED);
			for (uint32_t off = 0; off < len; off++)
				if (!in_spans(off, r, n))
					assert_int_equal(frame[off], 0x3c);
			for (uint32_t off = 0; off < len; off++) {
				frame[off] ^= 0x10;
				assert_int_equal(check(len, t, 2, BENCH_VERIFY_SAMPLED),
						 in_spans(off, r, n) ? -EBADMSG : 0);
				frame[off] ^= 0x10;
			}
		}
	}
	/* The full check reads the whole frame: its spans leave no gap. */
	unsigned int n = bench_frame_spans(BENCH_VERIFY_FULL, 9000, 0, r);

	assert_int_equal(r[0][0], 0);
	for (unsigned int i = 1; i < n; i++)
		assert_int_equal(r[i][0], r[i - 1][1]);
	assert_int_equal(r[n - 1][1], 9000);
}

/*
 * Over a run, sampled verification reaches every byte of the payload: the
 * rover lines of successive rover frames (every BENCH_ROVER_EVERY-th) step
 * through everything past the head, a line at a time, and come back.
 */
static void test_rover_reaches_every_byte(void **state)
{
	static const uint32_t sizes[] = {60, 122, 123, 200, 1514, 4111, 9000, 65535};
	static uint8_t seen[BENCH_MAX_FRAME];
	uint32_t r[BENCH_FRAME_MAX_SPANS][2], a, b;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t len = sizes[s], lines = 0;
		uint64_t seq;

		memset(seen, 0, len);
		/* Frames between rover frames carry none, and full verification none either. */
		assert_false(bench_frame_rover(BENCH_VERIFY_SAMPLED, len, 1, &a, &b));
		assert_false(
		    bench_frame_rover(BENCH_VERIFY_SAMPLED, len, BENCH_ROVER_EVERY + 3, &a, &b));
		assert_false(bench_frame_rover(BENCH_VERIFY_FULL, len, 0, &a, &b));
		for (seq = 0;; seq += BENCH_ROVER_EVERY) {
			unsigned int n = bench_frame_spans(BENCH_VERIFY_SAMPLED, len, seq, r);

			if (!bench_frame_rover(BENCH_VERIFY_SAMPLED, len, seq, &a, &b))
				break; /* nothing past the head: the head is every byte */
			assert_true(a < b && b <= len && b - a <= BENCH_ROVER_LEN);
			/* Back at the first line: every place has been visited. */
			if (seq && a == r[0][1])
				break;
			for (unsigned int i = 0; i < n; i++)
				memset(seen + r[i][0], 1, r[i][1] - r[i][0]);
			lines++;
		}
		if (len <= 122)
			assert_int_equal(lines, 0);
		else
			assert_int_equal(lines,
					 (len - 122 + BENCH_ROVER_LEN - 1) / BENCH_ROVER_LEN);
		for (uint32_t off = 0; off < len && lines; off++)
			assert_int_equal(seen[off], 1);
	}
}

static void test_seq_differs(void **state)
{
	struct bench_tmpl t[1];
	uint8_t a[200];

	tmpls(t, 1, 200);
	/* Neighbouring sequence numbers give payloads that differ from the first byte on. */
	fill(200, t, 0, 1000, BENCH_VERIFY_FULL);
	memcpy(a, frame, sizeof(a));
	fill(200, t, 0, 1001, BENCH_VERIFY_FULL);
	for (int i = BENCH_HDR_LEN; i < 200; i += 8)
		assert_memory_not_equal(a + i, frame + i, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_headers),
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_corruption),
	    cmocka_unit_test(test_stamps_span_the_boundaries),
	    cmocka_unit_test(test_rover_reaches_every_byte),
	    cmocka_unit_test(test_small_frames_every_byte_checked),
	    cmocka_unit_test(test_spans_are_what_fill_and_check_touch),
	    cmocka_unit_test(test_seq_differs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
