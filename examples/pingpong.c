/* SPDX-License-Identifier: MIT */
/*
 * pingpong.c - the smallest whole libpvnet program: two guests, one frame
 * back and forth through pvnetd's switch
 *
 * Usage: pingpong [RUN_DIR [ROUND_TRIPS]]
 *
 * Becomes two domains of the pvnetd serving RUN_DIR (default /run/pvnet),
 * gives each a vif, and bounces a frame between them ROUND_TRIPS times
 * (default 1000): A sends a ping to B's MAC, B answers with a pong to A's,
 * each side checks every byte it got.  Prints the round-trip times and
 * exits 0, or says what went wrong and exits 1.  Every wait is bounded.
 *
 * Build it against an installed libpvnet (the Xen headers of libxen-dev
 * too: pvnet.h includes <xen/io/xenbus.h>):
 *
 *   cc -o pingpong pingpong.c $(pkg-config --cflags --libs libpvnet)
 */
#include <errno.h>
#include <pvnet/pvnet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	FRAME_LEN = 128,    /* an Ethernet header and a payload we can check */
	ETHERTYPE = 0x88b5, /* IEEE 802 local experimental: no stack wants it */
	WAIT_MS = 2000,	    /* the longest a frame may take to arrive */
	PAGES = 1024,	    /* each domain's memory: its vif needs 2 + 64 + 128 */
	MAX_ROUND_TRIPS = 1000000,
};

struct guest {
	const char *name;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	uint8_t mac[6];
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int guest_up(struct guest *g, const char *run_dir)
{
	struct pvnet_vif_config cfg;
	int rc;

	rc = pvnet_domain_create(run_dir, PAGES, &g->dom);
	if (rc < 0) {
		fprintf(stderr, "pingpong: %s: no pvnetd at %s: %s\n", g->name,
			run_dir ? run_dir : PVNET_RUN_DIR_DEFAULT, strerror(-rc));
		return rc;
	}
	pvnet_vif_config_default(&cfg);
	cfg.tx_buffers = 64;
	cfg.rx_buffers = 128;
	rc = pvnet_vif_create(g->dom, &cfg, &g->vif);
	if (rc < 0) {
		/* A backend that refused the vif may have said why. */
		fprintf(stderr, "pingpong: %s: vif: %s%s%s\n", g->name, strerror(-rc),
			pvnet_domain_vif_error(g->dom) ? ": the backend says " : "",
			pvnet_domain_vif_error(g->dom) ? pvnet_domain_vif_error(g->dom) : "");
		return rc;
	}
	pvnet_vif_mac(g->vif, g->mac);
	return 0;
}

static void guest_down(struct guest *g)
{
	pvnet_vif_destroy(g->vif);
	pvnet_domain_destroy(g->dom);
}

/* The frame of round trip @seq from @src to @dst: a pattern only that round trip makes. */
static void frame_fill(uint8_t *f, const struct guest *src, const struct guest *dst, uint32_t seq)
{
	memcpy(f, dst->mac, 6);
	memcpy(f + 6, src->mac, 6);
	f[12] = ETHERTYPE >> 8;
	f[13] = ETHERTYPE & 0xff;
	for (unsigned int i = 14; i < FRAME_LEN; i++)
		f[i] = (uint8_t)(seq * 31 + i + src->mac[5]);
}

static int send_one(struct guest *g, const uint8_t *frame)
{
	struct pvnet_pkt p = {.data = frame, .len = FRAME_LEN};
	int64_t end = now_ns() + (int64_t)WAIT_MS * 1000000;
	int rc;

	/* 0: the ring or the buffers are full until completions come back. */
	while ((rc = pvnet_send(g->vif, 0, &p, 1)) == 0) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		rc = pvnet_queue_wait(g->vif, 0, 0, WAIT_MS);
		if (rc < 0)
			return rc;
	}
	return rc < 0 ? rc : 0;
}

/*
 * Wait for the frame @want at @g.  Frames of other ethertypes (a switch
 * floods what it has not learnt) are passed over; one of ours that differs
 * is an error.
 */
static int recv_one(struct guest *g, const uint8_t *want)
{
	static uint8_t buf[PVNET_MAX_FRAME];
	int64_t end = now_ns() + (int64_t)WAIT_MS * 1000000;
	struct pvnet_pkt in[8];

	for (;;) {
		int n = pvnet_recv(g->vif, 0, in, 8, buf, sizeof(buf)), rc;
		bool found = false;

		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			const uint8_t *f = in[i].data;

			if (in[i].len < 14 || f[12] != ETHERTYPE >> 8 ||
			    f[13] != (ETHERTYPE & 0xff))
				continue;
			if (in[i].len != FRAME_LEN || memcmp(f, want, FRAME_LEN)) {
				fprintf(stderr,
					"pingpong: %s: a frame of %u bytes is not the one sent\n",
					g->name, in[i].len);
				return -EBADMSG;
			}
			found = true;
		}
		if (found)
			return 0;
		if (now_ns() > end)
			return -ETIMEDOUT;
		/* Nothing waiting: pvnet_recv() armed the queue's event; sleep on it. */
		rc = pvnet_queue_wait(g->vif, 0, 20, WAIT_MS);
		if (rc < 0)
			return rc;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct guest a = {.name = "A"}, b = {.name = "B"};
	const char *run_dir = argc > 1 ? argv[1] : NULL;
	uint8_t ping[FRAME_LEN], pong[FRAME_LEN];
	unsigned long n = 1000;
	int64_t *rtt = NULL;
	int rc = 1;

	if (argc > 3 || (argc > 1 && !strcmp(argv[1], "--help"))) {
		fprintf(stderr, "usage: pingpong [RUN_DIR [ROUND_TRIPS]]\n");
		return 2;
	}
	if (argc > 2) {
		char *end;

		errno = 0;
		n = strtoul(argv[2], &end, 10);
		if (errno || *end || end == argv[2] || n < 1 || n > MAX_ROUND_TRIPS) {
			fprintf(stderr, "pingpong: ROUND_TRIPS '%s' is not a number in 1..%d\n",
				argv[2], MAX_ROUND_TRIPS);
			return 2;
		}
	}
	rtt = calloc(n, sizeof(*rtt));
	if (!rtt || guest_up(&a, run_dir) < 0 || guest_up(&b, run_dir) < 0)
		goto out;
	printf("A: domain %u, vif mac %02x:%02x:%02x:%02x:%02x:%02x\n", pvnet_domain_id(a.dom),
	       a.mac[0], a.mac[1], a.mac[2], a.mac[3], a.mac[4], a.mac[5]);
	printf("B: domain %u, vif mac %02x:%02x:%02x:%02x:%02x:%02x\n", pvnet_domain_id(b.dom),
	       b.mac[0], b.mac[1], b.mac[2], b.mac[3], b.mac[4], b.mac[5]);
	for (unsigned long i = 0; i < n; i++) {
		int64_t t0 = now_ns();
		int err;

		frame_fill(ping, &a, &b, (uint32_t)i);
		frame_fill(pong, &b, &a, (uint32_t)i);
		if ((err = send_one(&a, ping)) < 0 || (err = recv_one(&b, ping)) < 0 ||
		    (err = send_one(&b, pong)) < 0 || (err = recv_one(&a, pong)) < 0) {
			fprintf(stderr, "pingpong: round trip %lu of %lu: %s\n", i + 1, n,
				err == -ETIMEDOUT ? "no frame within 2 s" : strerror(-err));
			if (err == -EIO)
				fprintf(stderr, "pingpong: the vif is broken: A: %s; B: %s\n",
					pvnet_vif_error(a.vif) ? pvnet_vif_error(a.vif) : "-",
					pvnet_vif_error(b.vif) ? pvnet_vif_error(b.vif) : "-");
			goto out;
		}
		rtt[i] = now_ns() - t0;
	}
	qsort(rtt, n, sizeof(*rtt), cmp_i64);
	printf("%lu round trips of %d-byte frames, every byte checked: "
	       "min %.1f us, median %.1f us, max %.1f us\n",
	       n, FRAME_LEN, rtt[0] / 1e3, rtt[n / 2] / 1e3, rtt[n - 1] / 1e3);
	rc = 0;
out:
	guest_down(&b);
	guest_down(&a);
	free(rtt);
	return rc;
}
