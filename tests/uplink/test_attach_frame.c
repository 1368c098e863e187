// SPDX-License-Identifier: MIT
/* test_attach_frame.c - pvnet attach's validation of frames read into TX pages, against uplink_vnet2meta */
#include <errno.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

/*
 * A chain over pages that are not in memory order (as the stash hands them
 * out): a software checksum whose field starts exactly at a page boundary
 * goes into the second page, not past the end of the first.
 */
static void test_pages_out_of_order(void **state)
{
	static struct fb f, ref;
	struct pages *p = *state;
	struct virtio_net_hdr vh = {
	    .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 4094, .csum_offset = 2};
	struct pvnet_buf *head;
	struct uplink_meta m, m_ref;
	uint32_t off = 0;
	bool lin;

	fb_build(&f, 4, IPPROTO_ICMP, false, 8000, 3);
	memcpy(&ref, &f, sizeof(f));
	assert_int_equal(uplink_vnet2meta(&vh, ref.b, ref.len, 9000, ALL_OFF, &m_ref), 0);
	/* The frame's first page in buffer 2, its second in buffer 1, before it in memory. */
	p->b[2] = (struct pvnet_buf){
	    .data = p->b[2].page, .len = PVNET_PAGE_SIZE, .next = &p->b[1], .page = p->b[2].page};
	p->b[1] = (struct pvnet_buf){
	    .data = p->b[1].page, .len = f.len - PVNET_PAGE_SIZE, .page = p->b[1].page};
	memcpy(p->b[2].data, f.b, PVNET_PAGE_SIZE);
	memcpy(p->b[1].data, f.b + PVNET_PAGE_SIZE, f.len - PVNET_PAGE_SIZE);
	memset(p->b[3].page, 0xee, PVNET_PAGE_SIZE); /* right after the first page */
	head = &p->b[2];
	assert_int_equal(attach_frame_check(&vh, head, f.len, 9000, ALL_OFF, p->lin, &m, &lin), 0);
	assert_true(lin);
	assert_int_equal(m.flags, m_ref.flags);
	for (const struct pvnet_buf *b = head; b; b = b->next) {
		assert_memory_equal(b->data, ref.b + off, b->len);
		off += b->len;
	}
	assert_int_equal(off, f.len);
	assert_int_equal(((uint8_t *)p->b[3].page)[0], 0xee);
}

/*
 * pvnet attach's queue thread, attach_queue_thread(), against a stand-in
 * vif: the data calls below take the place of libpvnet's (the program's
 * own definitions come first), and a SOCK_SEQPACKET pair stands for the
 * TAP queue (one frame per read and per write, as a TAP).  The thread runs
 * until the stand-in's pvnet_rx_burst() has been called stop_after times
 * (the stop fd stays readable, so it never sleeps), or a data call fails.
 */
#define POOL	 64u
#define MAX_SENT 32u

struct sent {
	uint8_t *b;
	uint32_t len;
	unsigned int nbufs;
	uint32_t buflen[PVNET_MAX_FRAGS + 2];
	uint16_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
};

struct stand_in {
	struct attach a;
	int peer;		    /* the namespace's end of the "TAP" */
	struct pvnet_buf tx[POOL];  /* TX buffers, each with a page of its own */
	bool held[POOL];	    /* the application holds it */
	bool flight[POOL];	    /* submitted (never completed here) */
	unsigned int avail;	    /* buffers pvnet_tx_alloc() may still give */
	unsigned int submit_max;    /* frames one pvnet_tx_submit() queues */
	unsigned int submit_room;   /* frames the ring takes in all */
	int submit_err;		    /* the next pvnet_tx_submit() fails so, once */
	struct sent sent[MAX_SENT]; /* frames queued, copied as submitted */
	unsigned int nsent;
	struct pvnet_buf *rx[8]; /* frames the first pvnet_rx_burst() gives */
	unsigned int nrx;
	unsigned int rx_released; /* frames given back by pvnet_rx_release() */
	int rx_err;		  /* pvnet_rx_burst() after the first */
	unsigned int bursts, stop_after;
	bool foreign;	     /* a call got a buffer that was not the caller's */
	bool stop_when_sent; /* the thread stops once a frame was queued */
	int qfd;
	_Atomic pid_t tid; /* the queue thread's */
};

static struct stand_in *si;

static int own(const struct pvnet_buf *b)
{
	return b >= si->tx && b < si->tx + POOL ? (int)(b - si->tx) : -1;
}

int pvnet_tx_alloc(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	unsigned int k = 0;

	assert_ptr_equal(vif, (struct pvnet_vif *)si);
	assert_int_equal(queue, 0);
	for (unsigned int i = 0; i < POOL && k < n && si->avail; i++) {
		struct pvnet_buf *b = &si->tx[i];

		if (si->held[i] || si->flight[i])
			continue;
		si->held[i] = true;
		si->avail--;
		*b = (struct pvnet_buf){.data = b->page, .page = b->page, .id = i};
		bufs[k++] = b;
	}
	return (int)k;
}

int pvnet_tx_submit(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		    unsigned int n)
{
	unsigned int k;

	(void)vif;
	(void)queue;
	if (si->submit_err) {
		int rc = si->submit_err;

		si->submit_err = 0;
		return rc;
	}
	for (k = 0; k < n && k < si->submit_max && si->submit_room; k++, si->submit_room--) {
		struct sent *s = &si->sent[si->nsent++];

		assert_true(si->nsent <= MAX_SENT);
		s->b = malloc(UPLINK_MAX_FRAME + 1);
		assert_non_null(s->b);
		for (struct pvnet_buf *b = bufs[k]; b; b = b->next) {
			int i = own(b);

			if (i < 0 || !si->held[i] || s->nbufs == PVNET_MAX_FRAGS + 2) {
				si->foreign = true;
				break;
			}
			s->buflen[s->nbufs++] = b->len;
			if (s->len + b->len <= UPLINK_MAX_FRAME + 1)
				memcpy(s->b + s->len, b->data, b->len);
			s->len += b->len;
			si->held[i] = false;
			si->flight[i] = true;
		}
		s->flags = bufs[k]->flags;
		s->gso_type = bufs[k]->gso_type;
		s->gso_size = bufs[k]->gso_size;
	}
	if (k && si->stop_when_sent)
		atomic_store(&si->a.stop, true);
	return (int)k;
}

void pvnet_tx_free(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	(void)vif;
	(void)queue;
	for (unsigned int k = 0; k < n; k++) {
		unsigned int steps = 0;

		/* As libpvnet: a buffer not held is skipped, a foreign one ends the chain. */
		for (struct pvnet_buf *b = bufs[k]; b && steps++ < POOL; b = b->next) {
			int i = own(b);

			if (i < 0) {
				si->foreign = true;
				break;
			}
			if (si->held[i]) {
				si->held[i] = false;
				si->avail++;
			}
		}
	}
}

int pvnet_rx_burst(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n)
{
	(void)vif;
	(void)queue;
	if (++si->bursts >= si->stop_after)
		atomic_store(&si->a.stop, true);
	if (si->bursts > 1)
		return si->rx_err;
	assert_true(si->nrx <= n);
	memcpy(bufs, si->rx, si->nrx * sizeof(bufs[0]));
	return (int)si->nrx;
}

void pvnet_rx_release(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		      unsigned int n)
{
	(void)vif;
	(void)queue;
	for (unsigned int k = 0; k < n; k++) {
		bool ours = false;

		for (unsigned int i = 0; i < si->nrx; i++)
			ours |= bufs[k] == si->rx[i];
		si->foreign |= !ours;
	}
	si->rx_released += n;
}

int pvnet_queue_fd(struct pvnet_vif *vif, unsigned int queue)
{
	(void)vif;
	(void)queue;
	atomic_store(&si->tid, gettid());
	return si->qfd;
}

static int queue_setup(void **state)
{
	int sv[2], big = 4 << 20;

	si = calloc(1, sizeof(*si));
	assert_non_null(si);
	for (unsigned int i = 0; i < POOL; i++) {
		si->tx[i].page = aligned_alloc(PVNET_PAGE_SIZE, PVNET_PAGE_SIZE);
		assert_non_null(si->tx[i].page);
	}
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
	for (int i = 0; i < 2; i++)
		if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0)
			setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	si->peer = sv[1];
	si->avail = POOL;
	si->submit_max = ATTACH_BATCH;
	si->submit_room = MAX_SENT;
	si->stop_after = 16;
	si->qfd = eventfd(1, 0); /* always readable: the thread never sleeps */
	si->a.vif = (struct pvnet_vif *)si;
	si->a.nq = 1;
	si->a.mtu = 9000;
	si->a.offloads = ALL_OFF;
	si->a.stop_fd = eventfd(1, 0);
	si->a.fail_fd = eventfd(0, EFD_NONBLOCK);
	assert_true(si->qfd >= 0 && si->a.stop_fd >= 0 && si->a.fail_fd >= 0);
	si->a.q[0] = (struct attach_queue){.a = &si->a, .tap_fd = sv[0]};
	si->a.q[0].lin = malloc(UPLINK_MAX_FRAME);
	assert_non_null(si->a.q[0].lin);
	*state = si;
	return 0;
}

static int queue_teardown(void **state)
{
	(void)state;
	close(si->a.q[0].tap_fd);
	close(si->peer);
	close(si->qfd);
	close(si->a.stop_fd);
	close(si->a.fail_fd);
	free(si->a.q[0].lin);
	for (unsigned int i = 0; i < POOL; i++)
		free(si->tx[i].page);
	for (unsigned int i = 0; i < si->nsent; i++)
		free(si->sent[i].b);
	free(si);
	si = NULL;
	return 0;
}

/* Write a frame with its virtio header into the TAP, from the namespace's side. */
static void tap_put(const struct virtio_net_hdr *vh, const uint8_t *frame, uint32_t len)
{
	struct iovec iov[2] = {{.iov_base = (void *)vh, .iov_len = sizeof(*vh)},
			       {.iov_base = (void *)frame, .iov_len = len}};

	assert_int_equal(writev(si->peer, iov, 2), (ssize_t)(sizeof(*vh) + len));
}

/* Run the queue thread to its end, then give its buffers back as pvnet attach does. */
static void queue_run(void)
{
	assert_null(attach_queue_thread(&si->a.q[0]));
	attach_queue_release(&si->a.q[0]);
	assert_false(si->foreign);
}

/* Buffers the application still holds (none, once released). */
static unsigned int still_held(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < POOL; i++)
		n += si->held[i];
	return n;
}

/*
 * Frame @k as submitted: what uplink_vnet2meta() makes of @f with @vh (the
 * bytes, a software checksum included, and the offload state), over
 * buffers of whole pages.
 */
static void sent_is(unsigned int k, const struct fb *f, const struct virtio_net_hdr *vh)
{
	static struct fb ref;
	struct uplink_meta m;
	const struct sent *s = &si->sent[k];
	unsigned int np = (f->len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;

	memcpy(&ref, f, sizeof(ref));
	assert_int_equal(
	    uplink_vnet2meta(vh, ref.b, ref.len, atomic_load(&si->a.mtu), si->a.offloads, &m), 0);
	assert_true(k < si->nsent);
	assert_int_equal(s->len, f->len);
	assert_memory_equal(s->b, ref.b, f->len);
	assert_int_equal(s->nbufs, np);
	for (unsigned int i = 0; i < np; i++)
		assert_int_equal(s->buflen[i],
				 i + 1 < np ? PVNET_PAGE_SIZE : f->len - i * PVNET_PAGE_SIZE);
	assert_int_equal(s->flags, m.flags);
	assert_int_equal(s->gso_type, m.gso_type);
	assert_int_equal(s->gso_size, m.gso_size);
}

static struct virtio_net_hdr csum_hdr(const struct fb *f, uint16_t offset)
{
	return (struct virtio_net_hdr){.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				       .csum_start = (uint16_t)f->l4,
				       .csum_offset = offset};
}

/*
 * TAP -> vif: every frame read whole into TX pages, validated, sent with
 * its offload state; the refused ones counted by reason, their pages kept.
 */
static void test_queue_tap2vif(void **state)
{
	static struct fb f[12];
	struct virtio_net_hdr vh[12] = {0};
	const struct attach_stats *st = &si->a.q[0].st;
	static const int sent_of[] = {0, 1, 2, 3, 5, 6, 8};
	uint64_t bytes = 0;

	(void)state;
	fb_build(&f[0], 4, IPPROTO_UDP, false, 100, 1); /* blank checksum: kept */
	vh[0] = csum_hdr(&f[0], 6);
	fb_build(&f[1], 4, IPPROTO_TCP, false, 20000, 2); /* TSO over five pages */
	vh[1] = tso_hdr(&f[1], 4, 1448);
	fb_build(&f[2], 6, IPPROTO_UDP, true, 8192 - 66, 3); /* two whole pages */
	assert_int_equal(f[2].len, 2 * PVNET_PAGE_SIZE);
	vh[2].flags = VIRTIO_NET_HDR_F_DATA_VALID;
	fb_build(&f[3], 4, IPPROTO_UDP, false, 0, 4); /* the shortest: an Ethernet header */
	f[3].len = UPLINK_ETH_HLEN;
	fb_build(&f[4], 4, IPPROTO_UDP, false, 0, 5); /* a runt */
	f[4].len = UPLINK_ETH_HLEN - 1;
	fb_build(&f[5], 4, IPPROTO_ICMP, false, 200, 6); /* checksum computed here */
	vh[5] = csum_hdr(&f[5], 2);
	fb_build(&f[6], 4, IPPROTO_ICMP, false, 6000, 7); /* ... over two pages */
	vh[6] = csum_hdr(&f[6], 2);
	fb_build(&f[7], 4, IPPROTO_UDP, false, 100, 8); /* checksum past the frame */
	vh[7] = csum_hdr(&f[7], 6);
	vh[7].csum_start = 5000;
	fb_build(&f[8], 4, IPPROTO_TCP, false, UPLINK_MAX_FRAME - 54, 9); /* the largest */
	f[8].b[16] = 0xff;
	vh[8] = tso_hdr(&f[8], 4, 1448);
	fb_build(&f[9], 4, IPPROTO_TCP, false, UPLINK_MAX_FRAME + 1 - 54, 10); /* too long */
	vh[9] = tso_hdr(&f[9], 4, 1448);
	fb_build(&f[10], 4, IPPROTO_UDP, false, 9000, 11); /* over the MTU */
	fb_build(&f[11], 4, IPPROTO_TCP, false, 1000, 12); /* GSO UDP: not netif's */
	vh[11] = tso_hdr(&f[11], 4, 536);
	vh[11].gso_type = VIRTIO_NET_HDR_GSO_UDP;
	for (int i = 0; i < 12; i++)
		tap_put(&vh[i], f[i].b, f[i].len);
	queue_run();

	assert_int_equal(si->a.q[0].error, 0);
	assert_int_equal(si->nsent, 7);
	for (unsigned int k = 0; k < 7; k++) {
		sent_is(k, &f[sent_of[k]], &vh[sent_of[k]]);
		bytes += f[sent_of[k]].len;
	}
	assert_int_equal(si->sent[0].flags, PVNET_PKT_CSUM_BLANK);
	assert_int_equal(si->sent[1].gso_type, PVNET_GSO_TCPV4);
	assert_int_equal(si->sent[1].gso_size, 1448);
	assert_int_equal(si->sent[2].flags, PVNET_PKT_DATA_VALIDATED);
	assert_int_equal(st->tap_rx_packets, 7);
	assert_int_equal(st->tap_rx_bytes, bytes);
	assert_int_equal(st->tap_rx_drops[UPLINK_DROP_RUNT], 1);
	assert_int_equal(st->tap_rx_drops[UPLINK_DROP_OVERSIZE], 2);
	assert_int_equal(st->tap_rx_drops[UPLINK_DROP_GSO], 1);
	assert_int_equal(st->tap_rx_drops[UPLINK_DROP_CSUM], 1);
	assert_int_equal(st->tap_rx_sw_csum, 2);
	assert_int_equal(st->tap_rx_linearized, 3); /* two pages of UDP, of ICMP, over the MTU */
	assert_int_equal(st->tap_rx_held, 0);
	assert_int_equal(st->tap_rx_send_errors, 0);
	assert_int_equal(still_held(), 0);
}

/*
 * TAP -> vif when the ring refuses: a frame libpvnet will not take
 * (-EOPNOTSUPP) is dropped, counted, its buffers given back; a full ring
 * keeps the rest pending, given back on release; bytes are each frame's.
 */
static void test_queue_submit(void **state)
{
	static struct fb f[5];
	static const struct virtio_net_hdr vh;
	const struct attach_stats *st = &si->a.q[0].st;
	unsigned int flight = 0;

	(void)state;
	si->submit_err = -EOPNOTSUPP;
	si->submit_max = 1;
	si->submit_room = 3;
	for (int i = 0; i < 5; i++) {
		fb_build(&f[i], 4, IPPROTO_UDP, false, 18u + 100u * (unsigned int)i, (uint8_t)i);
		tap_put(&vh, f[i].b, f[i].len);
	}
	queue_run();

	assert_int_equal(si->a.q[0].error, 0);
	assert_int_equal(si->nsent, 3);
	for (unsigned int k = 0; k < 3; k++)
		sent_is(k, &f[k + 1], &vh);
	assert_int_equal(st->tap_rx_send_errors, 1);
	assert_int_equal(st->tap_rx_packets, 3);
	assert_int_equal(st->tap_rx_bytes, f[1].len + f[2].len + f[3].len);
	/* The three sent are in flight; every other buffer is back. */
	for (unsigned int i = 0; i < POOL; i++)
		flight += si->flight[i];
	assert_int_equal(flight, 3);
	assert_int_equal(still_held(), 0);
	assert_int_equal(si->avail, POOL - 3);
}

/*
 * TAP -> vif with most TX pages in flight (ten left): each frame is read
 * into the private buffer, then copied into TX pages, the last one when
 * exactly as many pages as it needs are left.
 */
static void test_queue_held(void **state)
{
	static struct fb f[5];
	struct virtio_net_hdr vh[5] = {0};
	const struct attach_stats *st = &si->a.q[0].st;
	uint64_t bytes = 0;

	(void)state;
	si->avail = 10;
	atomic_store(&si->a.mtu, 16000);
	fb_build(&f[0], 4, IPPROTO_ICMP, false, 5000, 1); /* two pages, checksum computed */
	vh[0] = csum_hdr(&f[0], 2);
	fb_build(&f[1], 6, IPPROTO_UDP, false, 300, 2); /* one page, blank checksum */
	vh[1] = csum_hdr(&f[1], 6);
	fb_build(&f[2], 4, IPPROTO_TCP, false, 3000, 3); /* TSO in one page */
	vh[2] = tso_hdr(&f[2], 4, 1448);
	fb_build(&f[3], 4, IPPROTO_UDP, false, 8000, 4);  /* two pages */
	fb_build(&f[4], 4, IPPROTO_UDP, false, 14000, 5); /* four pages: the four left */
	for (int i = 0; i < 5; i++)
		tap_put(&vh[i], f[i].b, f[i].len);
	queue_run();

	assert_int_equal(si->a.q[0].error, 0);
	assert_int_equal(si->nsent, 5);
	for (unsigned int k = 0; k < 5; k++) {
		sent_is(k, &f[k], &vh[k]);
		bytes += f[k].len;
	}
	assert_int_equal(si->sent[1].flags, PVNET_PKT_CSUM_BLANK);
	assert_int_equal(si->sent[2].gso_size, 1448);
	assert_int_equal(st->tap_rx_held, 5);
	assert_int_equal(st->tap_rx_sw_csum, 1);
	assert_int_equal(st->tap_rx_packets, 5);
	assert_int_equal(st->tap_rx_bytes, bytes);
	assert_int_equal(still_held(), 0);
	assert_int_equal(si->avail, 0);
}

/* The state letter of thread @tid ('S': asleep, here only in poll()). */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	assert_non_null(f);
	if (fgets(buf, sizeof(buf), f))
		p = strrchr(buf, ')');
	fclose(f);
	assert_non_null(p);
	return p[2];
}

/*
 * With nothing pending and nothing to do, the thread sleeps on the TAP too:
 * a frame the namespace sends then wakes it and goes out, though the vif
 * says nothing.  (Waits are bounded: a thread that never wakes fails.)
 */
static void test_queue_wakes(void **state)
{
	static struct fb f;
	static const struct virtio_net_hdr vh;
	struct timespec ms = {0, 1000000}, until;
	pthread_t t;
	pid_t tid;
	int rc, i;

	(void)state;
	close(si->qfd);
	close(si->a.stop_fd);
	si->qfd = eventfd(0, 0); /* the vif stays quiet */
	si->a.stop_fd = eventfd(0, 0);
	si->stop_after = UINT32_MAX;
	si->stop_when_sent = true;
	assert_int_equal(pthread_create(&t, NULL, attach_queue_thread, &si->a.q[0]), 0);
	for (i = 0; i < 10000 && (!(tid = atomic_load(&si->tid)) || thread_state(tid) != 'S'); i++)
		nanosleep(&ms, NULL);
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 1);
	tap_put(&vh, f.b, f.len);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	rc = pthread_timedjoin_np(t, NULL, &until);
	if (rc) { /* never woke: stop it, then fail */
		atomic_store(&si->a.stop, true);
		assert_int_equal(write(si->a.stop_fd, &(uint64_t){1}, sizeof(uint64_t)), 8);
		pthread_join(t, NULL);
	}
	assert_true(i < 10000); /* it went to sleep */
	assert_int_equal(rc, 0);
	assert_int_equal(si->a.q[0].error, 0);
	assert_int_equal(si->nsent, 1);
	sent_is(0, &f, &vh);
	attach_queue_release(&si->a.q[0]);
	assert_int_equal(still_held(), 0);
}

/* RX pages of the stand-in: frames of the vif as chains of buffers. */
static struct pvnet_buf rxb[48];
static uint8_t rxmem[48][PVNET_PAGE_SIZE];

/* Lay @f over buffers from rxb[*@used] on, of the lengths @cut (the last takes the rest). */
static struct pvnet_buf *rx_chain(const struct fb *f, const uint32_t *cut, unsigned int ncut,
				  unsigned int *used, uint16_t flags, uint8_t gso_type,
				  uint16_t gso_size)
{
	struct pvnet_buf *head = &rxb[*used];
	uint32_t off = 0;

	for (unsigned int i = 0; i <= ncut; i++) {
		struct pvnet_buf *b = &rxb[(*used)++];

		b->data = rxmem[b - rxb];
		b->len = i < ncut ? cut[i] : f->len - off;
		assert_true(b->len <= PVNET_PAGE_SIZE);
		memcpy(b->data, f->b + off, b->len);
		off += b->len;
		b->next = i < ncut ? b + 1 : NULL;
	}
	head->pkt_len = f->len;
	head->flags = flags;
	head->gso_type = gso_type;
	head->gso_size = gso_size;
	return head;
}

/* The next frame written to the TAP: its virtio header matches uplink_meta2vnet()'s, its bytes @f's. */
static void tap_got(const struct fb *f, const struct uplink_meta *m, struct virtio_net_hdr *vh)
{
	static uint8_t buf[sizeof(struct virtio_net_hdr) + UPLINK_MAX_FRAME + 1];
	struct virtio_net_hdr want;
	ssize_t r = recv(si->peer, buf, sizeof(buf), 0);

	assert_int_equal(uplink_meta2vnet(m, f->b, f->len, f->len, &want), 0);
	assert_int_equal(r, (ssize_t)(sizeof(*vh) + f->len));
	memcpy(vh, buf, sizeof(*vh));
	assert_memory_equal(vh, &want, sizeof(want));
	assert_memory_equal(buf + sizeof(*vh), f->b, f->len);
}

/*
 * vif -> TAP: one write per frame, its virtio header from the netif flags
 * and GSO state (headers found across buffers), every buffer of a chain as
 * long as libpvnet's bound; a longer chain refused, counted.
 */
static void test_queue_vif2tap(void **state)
{
	static struct fb f[5];
	static const uint32_t split[] = {40, 3000, 4000};
	uint32_t hundreds[PVNET_MAX_FRAGS + 1];
	const struct attach_stats *st = &si->a.q[0].st;
	struct virtio_net_hdr vh;
	unsigned int used = 0;

	(void)state;
	for (unsigned int i = 0; i < PVNET_MAX_FRAGS + 1; i++)
		hundreds[i] = 100;
	fb_build(&f[0], 4, IPPROTO_UDP, false, 300, 1);
	si->rx[0] = rx_chain(&f[0], NULL, 0, &used, PVNET_PKT_CSUM_BLANK, PVNET_GSO_NONE, 0);
	fb_build(&f[1], 4, IPPROTO_TCP, false, 10000, 2);
	si->rx[1] = rx_chain(&f[1], split, 3, &used, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV4, 1448);
	fb_build(&f[2], 6, IPPROTO_UDP, false, 500, 3);
	si->rx[2] = rx_chain(&f[2], NULL, 0, &used, PVNET_PKT_DATA_VALIDATED, PVNET_GSO_NONE, 0);
	fb_build(&f[3], 4, IPPROTO_UDP, false, 100 * (PVNET_MAX_FRAGS + 1) - 42, 4);
	si->rx[3] = rx_chain(&f[3], hundreds, PVNET_MAX_FRAGS, &used, 0, PVNET_GSO_NONE, 0);
	fb_build(&f[4], 4, IPPROTO_UDP, false, 100 * (PVNET_MAX_FRAGS + 2) - 42, 5);
	si->rx[4] = rx_chain(&f[4], hundreds, PVNET_MAX_FRAGS + 1, &used, 0, PVNET_GSO_NONE, 0);
	si->nrx = 5;
	queue_run();

	assert_int_equal(si->a.q[0].error, 0);
	tap_got(&f[0], &(struct uplink_meta){.flags = UPLINK_F_CSUM_BLANK}, &vh);
	assert_int_equal(vh.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(vh.csum_start, 34);
	assert_int_equal(vh.csum_offset, 6);
	tap_got(&f[1],
		&(struct uplink_meta){
		    .flags = UPLINK_F_CSUM_BLANK, .gso_type = UPLINK_GSO_TCPV4, .gso_size = 1448},
		&vh);
	assert_int_equal(vh.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
	assert_int_equal(vh.gso_size, 1448);
	assert_int_equal(vh.csum_offset, 16);
	tap_got(&f[2], &(struct uplink_meta){.flags = UPLINK_F_DATA_VALIDATED}, &vh);
	assert_int_equal(vh.flags, VIRTIO_NET_HDR_F_DATA_VALID);
	tap_got(&f[3], &(struct uplink_meta){0}, &vh);
	assert_int_equal(recv(si->peer, &vh, sizeof(vh), 0), -1); /* nothing more */
	assert_int_equal(st->tap_tx_packets, 4);
	assert_int_equal(st->tap_tx_bytes, f[0].len + f[1].len + f[2].len + f[3].len);
	assert_int_equal(st->tap_tx_bad_offload, 1);
	assert_int_equal(st->tap_tx_dropped, 0);
	assert_int_equal(si->rx_released, 5);
}

/* A TAP that refuses the write: the frame counted dropped; a failing data call ends the thread. */
static void test_queue_errors(void **state)
{
	static struct fb f;
	const struct attach_stats *st = &si->a.q[0].st;
	unsigned int used = 0;
	uint64_t n = 0;

	(void)state;
	fb_build(&f, 4, IPPROTO_UDP, false, 300, 1);
	si->rx[0] = rx_chain(&f, NULL, 0, &used, 0, PVNET_GSO_NONE, 0);
	si->nrx = 1;
	si->rx_err = -ENOTCONN;
	assert_int_equal(shutdown(si->a.q[0].tap_fd, SHUT_WR), 0);
	queue_run();

	assert_int_equal(si->bursts, 2);
	assert_int_equal(si->a.q[0].error, -ENOTCONN);
	assert_int_equal(read(si->a.fail_fd, &n, sizeof(n)), sizeof(n));
	assert_int_equal(n, 1);
	assert_int_equal(st->tap_tx_dropped, 1);
	assert_int_equal(st->tap_tx_bad_offload, 0);
	assert_int_equal(st->tap_tx_packets, 0);
	assert_int_equal(si->rx_released, 1);
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
	    cmocka_unit_test_setup_teardown(test_pages_out_of_order, pages_setup, pages_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_tap2vif, queue_setup, queue_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_submit, queue_setup, queue_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_held, queue_setup, queue_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_vif2tap, queue_setup, queue_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_errors, queue_setup, queue_teardown),
	    cmocka_unit_test_setup_teardown(test_queue_wakes, queue_setup, queue_teardown),
	};

	/* A TAP write refused (test_queue_errors) is an error, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
