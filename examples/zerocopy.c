/* SPDX-License-Identifier: MIT */
/*
 * zerocopy.c - frames built and read in the granted pages themselves:
 * libpvnet's zero-copy calls, with frames of several pages
 *
 * Usage: zerocopy [RUN_DIR [FRAMES [FRAME_SIZE]]]
 *
 * Becomes two domains of the pvnetd serving RUN_DIR (default /run/pvnet),
 * a vif each, and streams FRAMES frames (default 10000) of FRAME_SIZE bytes
 * (default 9000, 60..65535) from A to B.  A writes each frame straight into
 * TX buffer pages (pvnet_tx_alloc(), one page per 4 KiB, chained through
 * ->next; more than one page needs feature-sg) and queues them with
 * pvnet_tx_submit(); B reads each frame where netback put it
 * (pvnet_rx_burst()) and gives the pages back (pvnet_rx_release()).  No
 * byte is copied by the library on either side.  B checks every byte and
 * the order; the program prints the rate (its own, bounded by filling and
 * checking every byte on one thread: pvnet bench measures the data path)
 * and exits 0, or says what went wrong and exits 1.  It stops by itself
 * after 30 s at most, and at once when pvnetd closes a vif or stops.
 *
 *   cc -o zerocopy zerocopy.c $(pkg-config --cflags --libs libpvnet)
 */
#include <errno.h>
#include <poll.h>
#include <pvnet/pvnet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	ETHERTYPE = 0x88b5, /* IEEE 802 local experimental */
	HDR = 18,	    /* Ethernet header, then a 4-byte sequence number */
	BURST = 16,	    /* frames built and submitted at once */
	WINDOW_PAGES = 128, /* pages in flight at most: half of B's RX buffers */
	MAX_FRAMES = 10000000,
	RUN_SECONDS = 30,
};

#define PAGES_PER_FRAME(len) (((len) + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE)

struct guest {
	const char *name;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	uint8_t mac[6];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int guest_up(struct guest *g, const char *run_dir)
{
	struct pvnet_vif_config cfg;
	int rc;

	pvnet_vif_config_default(&cfg); /* 256 TX and 256 RX buffer pages */
	rc = pvnet_domain_create(run_dir, 2 + cfg.tx_buffers + cfg.rx_buffers + 64, &g->dom);
	if (rc < 0) {
		fprintf(stderr, "zerocopy: %s: no pvnetd at %s: %s\n", g->name,
			run_dir ? run_dir : PVNET_RUN_DIR_DEFAULT, strerror(-rc));
		return rc;
	}
	rc = pvnet_vif_create(g->dom, &cfg, &g->vif);
	if (rc < 0) {
		fprintf(stderr, "zerocopy: %s: vif: %s\n", g->name, strerror(-rc));
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

/*
 * Has @g's backend gone (pvnetd closing the vif, or stopping)?  Its store
 * watches say so through the control fd; pvnet_vif_process() reads them.
 * Checked when nothing moves, so it costs nothing while frames flow.
 */
static bool backend_gone(struct guest *g)
{
	struct pollfd p = {.fd = pvnet_vif_control_fd(g->vif), .events = POLLIN};
	int st;

	if (poll(&p, 1, 0) <= 0)
		return false;
	st = pvnet_vif_process(g->vif);
	if (st == XenbusStateConnected)
		return false;
	if (st < 0)
		fprintf(stderr, "zerocopy: %s: the store: %s\n", g->name, strerror(-st));
	else
		fprintf(stderr, "zerocopy: %s: the backend closed the vif (xenbus state %d)\n",
			g->name, st);
	return true;
}

/* Byte @off of frame @seq's payload (after HDR): different for every frame and offset. */
static inline uint8_t pattern(uint32_t seq, uint32_t off)
{
	return (uint8_t)(seq * 7 + off + (off >> 8));
}

/*
 * Build frame @seq of @len bytes in the @n pages of @b (as pvnet_tx_alloc()
 * gave them: data at the page, len 0), chained into one frame.
 */
static void frame_build(struct pvnet_buf **b, unsigned int n, uint32_t len, uint32_t seq,
			const struct guest *src, const struct guest *dst)
{
	uint32_t off = 0; /* of the whole frame */

	for (unsigned int i = 0; i < n; i++) {
		uint8_t *p = b[i]->data;
		uint32_t chunk = len - off < PVNET_PAGE_SIZE ? len - off : PVNET_PAGE_SIZE;

		for (uint32_t j = 0; j < chunk; j++, off++)
			p[j] = off >= HDR ? pattern(seq, off - HDR) : 0;
		b[i]->len = chunk;
		b[i]->next = i + 1 < n ? b[i + 1] : NULL;
	}
	uint8_t *h = b[0]->data;

	memcpy(h, dst->mac, 6);
	memcpy(h + 6, src->mac, 6);
	h[12] = ETHERTYPE >> 8;
	h[13] = ETHERTYPE & 0xff;
	h[14] = (uint8_t)(seq >> 24);
	h[15] = (uint8_t)(seq >> 16);
	h[16] = (uint8_t)(seq >> 8);
	h[17] = (uint8_t)seq;
	b[0]->flags = 0;
	b[0]->gso_type = PVNET_GSO_NONE;
}

/*
 * Check a received frame: its length, its sequence number (@want: one
 * queue keeps order) and every byte, fragment by fragment.  Returns 1 for
 * a frame of ours that is right, 0 for one that is not ours (a switch
 * floods what it has not learnt), -1 after saying what is wrong.
 */
static int frame_check(const struct pvnet_buf *b, uint32_t len, uint32_t want)
{
	const uint8_t *h = b->data;
	uint32_t seq, off = 0, total = 0;

	if (b->len < HDR || h[12] != ETHERTYPE >> 8 || h[13] != (ETHERTYPE & 0xff))
		return 0;
	seq = (uint32_t)h[14] << 24 | (uint32_t)h[15] << 16 | (uint32_t)h[16] << 8 | h[17];
	if (b->pkt_len != len) {
		fprintf(stderr, "zerocopy: frame %u is %u bytes, not %u\n", seq, b->pkt_len, len);
		return -1;
	}
	if (seq != want) {
		fprintf(stderr, "zerocopy: frame %u arrived where %u was due\n", seq, want);
		return -1;
	}
	for (; b; b = b->next) {
		const uint8_t *p = b->data;

		for (uint32_t j = 0; j < b->len; j++, off++)
			if (off >= HDR && p[j] != pattern(seq, off - HDR)) {
				fprintf(stderr, "zerocopy: frame %u: byte %u is wrong\n", seq, off);
				return -1;
			}
		total += b->len;
	}
	if (total != len) {
		fprintf(stderr, "zerocopy: frame %u: fragments hold %u of its %u bytes\n", seq,
			total, len);
		return -1;
	}
	return 1;
}

static int parse(const char *s, const char *what, unsigned long lo, unsigned long hi,
		 unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || *end || end == s || *v < lo || *v > hi) {
		fprintf(stderr, "zerocopy: %s '%s' is not a number in %lu..%lu\n", what, s, lo, hi);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct guest a = {.name = "A"}, b = {.name = "B"};
	const char *run_dir = argc > 1 ? argv[1] : NULL;
	unsigned long frames = 10000, len = 9000;
	struct pvnet_buf *tx[BURST * PAGES_PER_FRAME(PVNET_MAX_FRAME)], *first[BURST], *rx[32];
	uint32_t sent = 0, received = 0;
	double t0, end;
	int rc = 1;

	if (argc > 4 || (argc > 1 && !strcmp(argv[1], "--help"))) {
		fprintf(stderr, "usage: zerocopy [RUN_DIR [FRAMES [FRAME_SIZE]]]\n");
		return 2;
	}
	if ((argc > 2 && parse(argv[2], "FRAMES", 1, MAX_FRAMES, &frames) < 0) ||
	    (argc > 3 && parse(argv[3], "FRAME_SIZE", 60, PVNET_MAX_FRAME, &len) < 0))
		return 2;
	if (guest_up(&a, run_dir) < 0 || guest_up(&b, run_dir) < 0)
		goto out;
	if (len > PVNET_PAGE_SIZE && !(pvnet_vif_features(a.vif) & PVNET_F_SG)) {
		fprintf(stderr, "zerocopy: %lu-byte frames need feature-sg, not negotiated\n", len);
		goto out;
	}
	t0 = now_s();
	end = t0 + RUN_SECONDS;
	while (received < frames) {
		unsigned int pages = PAGES_PER_FRAME((unsigned int)len), built = 0;
		unsigned int window = WINDOW_PAGES / pages; /* B keeps up: nothing waits long */
		bool progress = false;
		int n;

		/* A: as many frames as the window allows, built in free TX pages. */
		while (built < BURST && sent + built < frames && sent + built - received < window) {
			struct pvnet_buf **fb = &tx[built * pages];

			n = pvnet_tx_alloc(a.vif, 0, fb, pages);
			if (n < 0) {
				fprintf(stderr, "zerocopy: A: tx_alloc: %s\n", strerror(-n));
				goto out;
			}
			if ((unsigned int)n < pages) { /* none free until completions come back */
				pvnet_tx_free(a.vif, 0, fb, (unsigned int)n);
				break;
			}
			frame_build(fb, pages, (uint32_t)len, sent + built, &a, &b);
			first[built++] = fb[0];
		}
		if (built) {
			n = pvnet_tx_submit(a.vif, 0, first, built);
			if (n < 0) {
				fprintf(stderr, "zerocopy: A: tx_submit: %s\n", strerror(-n));
				pvnet_tx_free(a.vif, 0, first, built);
				goto out;
			}
			/* Those the ring had no room for are still ours: built again next time. */
			pvnet_tx_free(a.vif, 0, first + n, built - (unsigned int)n);
			sent += (uint32_t)n;
			progress |= n > 0;
		}

		/* B: every frame waiting, read where it landed, then its pages re-posted. */
		n = pvnet_rx_burst(b.vif, 0, rx, 32);
		if (n < 0) {
			fprintf(stderr, "zerocopy: B: rx_burst: %s\n", strerror(-n));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			int c = frame_check(rx[i], (uint32_t)len, received);

			if (c < 0) {
				pvnet_rx_release(b.vif, 0, rx, (unsigned int)n);
				goto out;
			}
			received += (uint32_t)c;
		}
		pvnet_rx_release(b.vif, 0, rx, (unsigned int)n);
		progress |= n > 0;

		if (now_s() > end) {
			fprintf(stderr,
				"zerocopy: %u of %lu frames received after %d s (%u sent)\n",
				received, frames, RUN_SECONDS, sent);
			goto out;
		}
		if (progress)
			continue;
		/* Nothing moved: pvnetd is still at it, or gone; sleep on B's queue (1 ms at most). */
		if (backend_gone(&a) || backend_gone(&b))
			goto out;
		n = pvnet_queue_wait(b.vif, 0, 50, 1);
		if (n < 0) {
			fprintf(stderr, "zerocopy: B: wait: %s\n", strerror(-n));
			goto out;
		}
	}
	double secs = now_s() - t0;

	printf("%u frames of %lu bytes A -> B in %.3f s, built and read in granted pages, "
	       "every byte checked: %.3f Mpps, %.2f Gbit/s\n",
	       received, len, secs, received / secs / 1e6, received * (double)len * 8 / secs / 1e9);
	rc = 0;
out:
	guest_down(&b);
	guest_down(&a);
	return rc;
}
