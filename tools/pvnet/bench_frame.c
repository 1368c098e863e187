// SPDX-License-Identifier: MIT
/* bench_frame.c - pvnet bench: build, fill and check benchmark frames (pure functions) */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "bench.h"

/*
 * A frame is seen through an iovec array, because it lives in granted
 * pages: the sender fills the TX buffer pages of its chain, the receiver
 * checks the RX buffer pages the backend wrote, and neither copies the
 * frame into one piece first.  Offsets below are frame offsets.
 *
 * The payload pattern is a function of (flow, seq, offset) only, so the
 * receiver recomputes it: 64-bit word w of the payload is
 * seed(flow, seq) ^ (w + 1) * golden, stored little endian.  A frame that
 * carries another frame's bytes, stale bytes, bytes shifted by a slot or
 * a page from the wrong grant fails the check.
 */

#define GOLDEN 0x9e3779b97f4a7c15ull
/* Bytes generated at a time while filling or checking (a stack buffer). */
#define CHUNK 1024u

static uint64_t seed_of(uint16_t flow, uint64_t seq)
{
	/* splitmix64's finaliser: neighbouring (flow, seq) give unrelated seeds. */
	uint64_t z = seq ^ ((uint64_t)flow << 48) ^ 0x5056424e00000000ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The pattern bytes of frame offsets [from, from + len), from >= BENCH_HDR_LEN:
 * a partial first word, whole words, a partial last one, each stored where
 * it goes.  (Built in a stack buffer and copied out with one memcpy, the
 * copy's length bounded by the buffer made GCC inline it as rep movsq, a
 * tenth of the frontends' CPU at 1514 B.)
 */
static void pattern(uint8_t *out, uint64_t seed, uint32_t from, uint32_t len)
{
	uint32_t p0 = from - BENCH_HDR_LEN, w = p0 / 8, skip = p0 % 8;
	uint64_t v;

	if (skip && len) {
		uint32_t n = 8 - skip < len ? 8 - skip : len;

		v = htole64(seed ^ ((uint64_t)w++ + 1) * GOLDEN);
		for (uint32_t i = 0; i < n; i++)
			out[i] = ((const uint8_t *)&v)[skip + i];
		out += n;
		len -= n;
	}
	for (; len >= 8; len -= 8, out += 8) {
		v = htole64(seed ^ ((uint64_t)w++ + 1) * GOLDEN);
		memcpy(out, &v, 8);
	}
	if (len) {
		v = htole64(seed ^ ((uint64_t)w + 1) * GOLDEN);
		for (uint32_t i = 0; i < len; i++)
			out[i] = ((const uint8_t *)&v)[i];
	}
}

/* Copy frame bytes [off, off + len) into (@write false) or out of (@write true) @buf. */
static void iov_xfer(const struct iovec *iov, unsigned int niov, uint32_t off, uint8_t *buf,
		     uint32_t len, bool write)
{
	size_t base = 0;

	for (unsigned int i = 0; i < niov && len; i++) {
		size_t l = iov[i].iov_len;

		if (off < base + l) {
			size_t in = off - base, n = l - in < len ? l - in : len;
			uint8_t *p = (uint8_t *)iov[i].iov_base + in;

			if (write)
				memcpy(p, buf, n);
			else
				memcpy(buf, p, n);
			buf += n;
			off += (uint32_t)n;
			len -= (uint32_t)n;
		}
		base += l;
	}
}

static uint16_t csum16(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/**
 * bench_tmpl_build() - the Ethernet/IPv4/UDP headers of one flow's frames
 * @t: filled
 * @dst: the receiver's MAC
 * @src: the sender's MAC
 * @flow: the flow (sender queue)
 * @frame_len: the frame length, BENCH_MIN_FRAME..BENCH_MAX_FRAME
 *
 * Flow f goes from 10.66.1.f:(BENCH_UDP_PORT + f) to 10.66.0.2:BENCH_UDP_PORT:
 * the addresses differ too, so that a receiver's Toeplitz mapping (which
 * hashes IPv4 UDP by its addresses only) can tell the flows apart.
 */
void bench_flow_addrs(uint16_t flow, uint8_t saddr[4], uint8_t daddr[4])
{
	memcpy(saddr, "\x0a\x42\x01", 3);
	saddr[3] = (uint8_t)flow;
	memcpy(daddr, "\x0a\x42\x00\x02", 4);
}

void bench_tmpl_build(struct bench_tmpl *t, const uint8_t dst[6], const uint8_t src[6],
		      uint16_t flow, uint32_t frame_len)
{
	uint8_t *ip = t->b + 14, *udp = t->b + 34;

	memset(t, 0, sizeof(*t));
	memcpy(t->b, dst, 6);
	memcpy(t->b + 6, src, 6);
	put16(t->b + 12, 0x0800);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(frame_len - 14));
	ip[6] = 0x40; /* don't fragment */
	ip[8] = 64;
	ip[9] = 17;
	bench_flow_addrs(flow, ip + 12, ip + 16);
	put16(ip + 10, csum16(ip, 20));
	put16(udp, (uint16_t)(BENCH_UDP_PORT + flow));
	put16(udp + 2, BENCH_UDP_PORT);
	put16(udp + 4, (uint16_t)(frame_len - 34));
	/* UDP checksum 0: none, as IPv4 allows. */
}

/*
 * The head: the headers and the first payload bytes, written and read in
 * one piece (at 64 B, the whole frame in one copy).
 */
#define HEAD_PAYLOAD 64u
#define HEAD_LEN     (BENCH_HDR_LEN + HEAD_PAYLOAD)

/* Most ranges past the head: one stamp per 4 KiB of a 64 KiB frame, the tail, the rover. */
#define MAX_RANGES (2 + BENCH_MAX_FRAME / BENCH_STAMP_SPAN)

/* Add [from, to) clipped to what the ranges before it cover; none if empty. */
static unsigned int range_add(uint32_t r[MAX_RANGES][2], unsigned int n, uint32_t from, uint32_t to)
{
	uint32_t covered = n ? r[n - 1][1] : HEAD_LEN;

	if (from < covered)
		from = covered;
	if (from >= to || n == MAX_RANGES)
		return n;
	r[n][0] = from;
	r[n][1] = to;
	return n + 1;
}

/**
 * bench_frame_rover() - the rover line a sampled frame carries, if any
 * @mode: the run's verify mode
 * @frame_len: the frame's length
 * @seq: the frame's sequence number in its flow
 * @from: receives the line's first frame offset
 * @to: receives the offset past its last byte
 *
 * Sampled frames are stamped at fixed places, so a copy that skips a
 * stretch between two stamps would go unseen in every frame.  Every
 * BENCH_ROVER_EVERY-th frame of a flow (@seq a multiple) also carries one
 * line of its pattern past the head, one line further on each time, so that
 * over a run every byte place of the payload is written and checked: at
 * 1514 B every 22nd rover frame comes back to a place, at 65535 B every
 * 1023rd.  One line in 64 frames costs nothing measurable, where a moving
 * line in every frame cost the vcpus section a tenth (docs/benchmarks.md).
 *
 * Return: true if the frame carries one
 */
bool bench_frame_rover(enum bench_verify mode, uint32_t frame_len, uint64_t seq, uint32_t *from,
		       uint32_t *to)
{
	uint32_t lines;

	if (mode != BENCH_VERIFY_SAMPLED || seq % BENCH_ROVER_EVERY || frame_len <= HEAD_LEN)
		return false;
	lines = (frame_len - HEAD_LEN + BENCH_ROVER_LEN - 1) / BENCH_ROVER_LEN;
	*from = HEAD_LEN + (uint32_t)(seq / BENCH_ROVER_EVERY % lines) * BENCH_ROVER_LEN;
	*to = frame_len - *from < BENCH_ROVER_LEN ? frame_len : *from + BENCH_ROVER_LEN;
	return true;
}

/*
 * The payload ranges past the head that @mode covers in frame @seq:
 * [r[i][0], r[i][1]), ascending, disjoint, within [HEAD_LEN, len); their
 * count.  The rover goes in before the first stamp that starts after it,
 * so that the ranges stay ascending (range_add() clips the overlaps).
 */
static unsigned int ranges(enum bench_verify mode, uint32_t len, uint64_t seq,
			   uint32_t r[MAX_RANGES][2])
{
	uint32_t ra = 0, rb = 0, tail = len > BENCH_STAMP_LEN ? len - BENCH_STAMP_LEN : 0;
	bool rover = bench_frame_rover(mode, len, seq, &ra, &rb);
	unsigned int n = 0;

	if (mode == BENCH_VERIFY_FULL)
		return range_add(r, 0, HEAD_LEN, len);
	for (uint32_t m = BENCH_STAMP_SPAN; m < len; m += BENCH_STAMP_SPAN) {
		if (rover && ra < m - BENCH_STAMP_LEN) {
			n = range_add(r, n, ra, rb);
			rover = false;
		}
		n = range_add(r, n, m - BENCH_STAMP_LEN,
			      m + BENCH_STAMP_LEN < len ? m + BENCH_STAMP_LEN : len);
	}
	if (rover && ra < tail) {
		n = range_add(r, n, ra, rb);
		rover = false;
	}
	n = range_add(r, n, tail, len);
	return rover ? range_add(r, n, ra, rb) : n;
}

/**
 * bench_frame_spans() - the byte ranges of a frame its fill writes and its check reads
 * @mode: the run's verify mode
 * @frame_len: the frame's length, at least BENCH_HDR_LEN
 * @seq: the frame's sequence number (only a rover frame's spans depend on it)
 * @r: receives [r[i][0], r[i][1]) for each range: ascending, disjoint, within
 *     [0, @frame_len)
 *
 * Return: the number of ranges, at most BENCH_FRAME_MAX_SPANS
 */
unsigned int bench_frame_spans(enum bench_verify mode, uint32_t frame_len, uint64_t seq,
			       uint32_t r[BENCH_FRAME_MAX_SPANS][2])
{
	_Static_assert(BENCH_FRAME_MAX_SPANS == 1 + MAX_RANGES, "the head and its ranges");
	uint32_t rest[MAX_RANGES][2];
	unsigned int n = ranges(mode, frame_len, seq, rest);

	r[0][0] = 0;
	r[0][1] = frame_len < HEAD_LEN ? frame_len : HEAD_LEN;
	memcpy(r + 1, rest, n * sizeof(rest[0]));
	return n + 1;
}

/**
 * bench_frame_fill() - write one frame: headers, bench header and payload pattern
 * @iov: where the frame lives (e.g. its TX buffer pages), at least @frame_len bytes
 * @niov: entries in @iov
 * @t: the flow's headers (bench_tmpl_build())
 * @flow: the flow
 * @seq: the frame's sequence number in its flow
 * @frame_len: the frame length, BENCH_MIN_FRAME..BENCH_MAX_FRAME
 * @mode: BENCH_VERIFY_SAMPLED writes only the bytes the receiver will check
 */
void bench_frame_fill(const struct iovec *iov, unsigned int niov, const struct bench_tmpl *t,
		      uint16_t flow, uint64_t seq, uint32_t frame_len, enum bench_verify mode)
{
	uint8_t head[HEAD_LEN], chunk[CHUNK];
	uint32_t hl = frame_len < HEAD_LEN ? frame_len : HEAD_LEN, r[MAX_RANGES][2];
	uint64_t seed = seed_of(flow, seq);
	unsigned int nr;

	memcpy(head, t->b, BENCH_L2L4_LEN);
	for (int i = 0; i < 4; i++)
		head[42 + i] = (uint8_t)(BENCH_MAGIC >> (8 * i));
	head[46] = (uint8_t)flow;
	head[47] = (uint8_t)(flow >> 8);
	head[48] = head[49] = 0;
	for (int i = 0; i < 8; i++)
		head[50 + i] = (uint8_t)(seq >> (8 * i));
	if (hl > BENCH_HDR_LEN)
		pattern(head + BENCH_HDR_LEN, seed, BENCH_HDR_LEN, hl - BENCH_HDR_LEN);
	iov_xfer(iov, niov, 0, head, hl, true);
	nr = ranges(mode, frame_len, seq, r);
	for (unsigned int i = 0; i < nr; i++) {
		for (uint32_t o = r[i][0]; o < r[i][1]; o += CHUNK) {
			uint32_t n = r[i][1] - o < CHUNK ? r[i][1] - o : CHUNK;

			pattern(chunk, seed, o, n);
			iov_xfer(iov, niov, o, chunk, n, true);
		}
	}
}

/**
 * bench_frame_check() - is a received frame one the sender built, intact?
 * @iov: the frame's fragments, in order
 * @niov: entries in @iov
 * @frame_len: the length every frame of the run has
 * @tmpls: the headers of each flow, @nflows entries
 * @nflows: flows in the run
 * @mode: how much payload to check (as the sender filled it)
 * @flow: receives the frame's flow (valid when 0 is returned)
 * @seq: receives its sequence number (valid when 0 is returned)
 *
 * Return: 0 if intact, -EBADMSG if the length, a header, the flow or a
 * checked payload byte is wrong
 */
int bench_frame_check(const struct iovec *iov, unsigned int niov, uint32_t frame_len,
		      const struct bench_tmpl *tmpls, unsigned int nflows, enum bench_verify mode,
		      uint16_t *flow, uint64_t *seq)
{
	uint8_t head[HEAD_LEN], want[CHUNK], got[CHUNK];
	uint32_t magic = 0, hl = frame_len < HEAD_LEN ? frame_len : HEAD_LEN, r[MAX_RANGES][2];
	unsigned int nr;
	size_t total = 0;
	uint64_t s = 0, seed;
	uint16_t f;

	for (unsigned int i = 0; i < niov; i++)
		total += iov[i].iov_len;
	if (total != frame_len || frame_len < BENCH_HDR_LEN)
		return -EBADMSG;
	iov_xfer(iov, niov, 0, head, hl, false);
	for (int i = 0; i < 4; i++)
		magic |= (uint32_t)head[42 + i] << (8 * i);
	f = (uint16_t)(head[46] | head[47] << 8);
	if (magic != BENCH_MAGIC || f >= nflows || head[48] || head[49] ||
	    memcmp(head, tmpls[f].b, BENCH_L2L4_LEN))
		return -EBADMSG;
	for (int i = 0; i < 8; i++)
		s |= (uint64_t)head[50 + i] << (8 * i);
	seed = seed_of(f, s);
	if (hl > BENCH_HDR_LEN) {
		pattern(want, seed, BENCH_HDR_LEN, hl - BENCH_HDR_LEN);
		if (memcmp(want, head + BENCH_HDR_LEN, hl - BENCH_HDR_LEN))
			return -EBADMSG;
	}
	nr = ranges(mode, frame_len, s, r);
	for (unsigned int i = 0; i < nr; i++) {
		for (uint32_t o = r[i][0]; o < r[i][1]; o += CHUNK) {
			uint32_t n = r[i][1] - o < CHUNK ? r[i][1] - o : CHUNK;

			pattern(want, seed, o, n);
			iov_xfer(iov, niov, o, got, n, false);
			if (memcmp(want, got, n))
				return -EBADMSG;
		}
	}
	*flow = f;
	*seq = s;
	return 0;
}
