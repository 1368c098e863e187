// SPDX-License-Identifier: MIT
/* bench_guest_data.c - pvnet bench: a frontend process's data threads (senders, receivers) */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_guest.h"
#include "common/prefetch.h"

/*
 * One thread per queue (bench_guest.c starts them): senders fill their TX
 * buffers in place (or copy, for --api copy and steered senders) and submit
 * bursts; receivers check every frame and account its flow's sequence.
 * Each answers snapshot requests at the top of its loop (worker_snap()) and
 * never blocks longer than IDLE_POLL_MS; bench_guest.c's Theory of
 * Operation has the handshake.
 */

uint64_t bench_guest_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Copy the queue's netfront counters into @c (called on the queue's thread). */
void bench_guest_queue_stats(struct guest *g, unsigned int q, struct bench_counts *c)
{
	struct pvnet_stat st[32];
	int n = pvnet_queue_stats(g->vif, q, st, 32);

	for (int i = 0; i < n && i < 32; i++) {
		if (!strcmp(st[i].name, "tx_notify"))
			c->front_tx_notify = st[i].value;
		else if (!strcmp(st[i].name, "rx_notify"))
			c->front_rx_notify = st[i].value;
		else if (!strcmp(st[i].name, "tx_errors"))
			c->front_tx_errors = st[i].value;
		else if (!strcmp(st[i].name, "rx_errors"))
			c->front_rx_errors = st[i].value;
		else if (!strcmp(st[i].name, "tx_ring_full"))
			c->front_tx_ring_full = st[i].value;
	}
}

/* Top of every loop iteration: answer a pending snapshot request. */
static void worker_snap(struct worker *w)
{
	unsigned int gen = atomic_load_explicit(&w->g->snap_gen, memory_order_acquire);

	if (gen == w->snap_seen)
		return;
	w->snap = w->c;
	if (!w->g->steered)
		bench_guest_queue_stats(w->g, w->q, &w->snap);
	w->snap_seen = gen;
	atomic_store_explicit(&w->snap_ack, gen, memory_order_release);
}

/* The thread ends: publish its last counters in final, then done (release). */
static void worker_end(struct worker *w)
{
	w->final = w->c;
	if (!w->g->steered)
		bench_guest_queue_stats(w->g, w->q,
					&w->final); /* steered: after every join, stop_workers() */
	atomic_store_explicit(&w->done, true, memory_order_release);
}

static void worker_fail(struct worker *w, const char *what, int rc)
{
	snprintf(w->error, sizeof(w->error), "queue %u: %s: %s%s%s", w->q, what, strerror(-rc),
		 pvnet_vif_error(w->g->vif) ? ": " : "",
		 pvnet_vif_error(w->g->vif) ? pvnet_vif_error(w->g->vif) : "");
}

/* Wait until the queue may have work, a snapshot is asked for, or IDLE_POLL_MS passed. */
static void worker_wait(struct worker *w)
{
	struct pollfd pf[2] = {
	    {.fd = pvnet_queue_fd(w->g->vif, w->q), .events = POLLIN},
	    {.fd = w->g->wake_fd, .events = POLLIN},
	};

	if (pvnet_queue_wait(w->g->vif, w->q, BENCH_POLL_US, 0) > 0)
		return;
	poll(pf, 2, IDLE_POLL_MS);
}

static bool stopping(struct worker *w)
{
	return atomic_load_explicit(&w->g->stop, memory_order_acquire);
}

/* --migrate: move the calling thread to its next CPU when its time has come. */
static void maybe_migrate(struct worker *w)
{
	struct guest *g = w->g;
	uint64_t now;
	cpu_set_t set;

	if (!g->cfg->migrate || g->ncpus < 2)
		return;
	now = bench_guest_mono_ns();
	if (w->hop_ns && now < w->hop_ns)
		return;
	w->cpu_i = w->hop_ns ? (w->cpu_i + 1) % g->ncpus : w->q % g->ncpus;
	w->hop_ns = now + BENCH_MIGRATE_US * 1000ull;
	CPU_ZERO(&set);
	CPU_SET(g->cpus[w->cpu_i], &set);
	sched_setaffinity(0, sizeof(set), &set); /* a CPU gone offline: stay, try the next */
}

/*
 * Start fetching the lines of the frame in chain @b (data and len set)
 * that bench_frame_fill() writes (@write) or bench_frame_check() reads.
 * The other side of each line is netback's worker on another CPU, which
 * last copied it: asked for together, a burst's misses overlap instead of
 * each one stalling its fill or check.
 */
static void frame_prefetch(enum bench_verify verify, const struct pvnet_buf *b, uint32_t len,
			   uint64_t seq, bool write)
{
	uint32_t r[BENCH_FRAME_MAX_SPANS][2], base = 0;
	unsigned int nr, i = 0;

	if (len < BENCH_HDR_LEN)
		return; /* neither touches more than its length check */
	nr = bench_frame_spans(verify, len, seq, r);
	for (; b && i < nr; base += b->len, b = b->next) {
		uint32_t end = base + b->len;

		/* The spans, or their parts, that lie in this fragment. */
		for (; i < nr && r[i][0] < end; i++) {
			uint32_t from = r[i][0] > base ? r[i][0] : base;
			uint32_t to = r[i][1] < end ? r[i][1] : end;

			prefetch_range((const uint8_t *)b->data + (from - base), to - from, write);
			if (r[i][1] > end)
				break; /* continues in the next fragment */
		}
	}
}

/* Point @iov at the pages of a TX chain, filling each page from its start. */
static unsigned int chain_iov(struct pvnet_buf *h, uint32_t frame, struct iovec *iov)
{
	unsigned int n = 0;

	for (struct pvnet_buf *b = h; b; b = b->next) {
		uint32_t l = frame > PVNET_PAGE_SIZE ? PVNET_PAGE_SIZE : frame;

		b->data = b->page;
		b->len = l;
		frame -= l;
		iov[n++] = (struct iovec){.iov_base = b->data, .iov_len = l};
	}
	return n;
}

/*
 * Send one frame through pvnet_send(): used when the free TX buffers are
 * fewer than one frame needs.  pvnet_tx_alloc() arms the TX-completion
 * wakeup only when it finds none at all; a multi-page frame can find some
 * but too few, which arms nothing, and a sender sleeping then would wait
 * for its poll timeout.  pvnet_send() either sends or stops the queue and
 * arms it.  Return 1 if it went, 0 if the queue is stopped (wait on its
 * fd), or -errno.
 */
/*
 * Fill frame @seq of @w's flow into @iov (@n pieces).  With
 * PVNET_BENCH_FAULT set (tests only: docs/benchmarks.md), every
 * fault_every-th frame goes damaged, its first payload byte flipped, or
 * written as the frame two before it, so that a test sees the receiver
 * count what its checks are there to find.
 */
static void fill(struct worker *w, const struct iovec *iov, unsigned int n, uint64_t seq)
{
	struct guest *g = w->g;
	bool fault = g->fault_every && seq % g->fault_every == g->fault_every - 1;

	bench_frame_fill(iov, n, &g->tmpl[w->q], (uint16_t)w->q,
			 fault && g->fault_reorder && seq >= 2 ? seq - 2 : seq, g->cfg->frame_size,
			 g->cfg->verify);
	if (fault && !g->fault_reorder && iov[0].iov_len > BENCH_HDR_LEN)
		((uint8_t *)iov[0].iov_base)[BENCH_HDR_LEN] ^= 1;
}

static int send_one_copy(struct worker *w, uint8_t *frame)
{
	struct guest *g = w->g;
	uint32_t len = g->cfg->frame_size;
	struct iovec iov = {.iov_base = frame, .iov_len = len};
	struct pvnet_pkt pkt = {.data = frame, .len = len};
	int rc;

	fill(w, &iov, 1, w->seq);
	rc = pvnet_send(g->vif, w->q, &pkt, 1);
	if (rc == 1) {
		w->seq++;
		w->c.frames++;
		w->c.bytes += len;
		w->c.tx_copy_fallback++;
	}
	return rc;
}

void *bench_guest_sender_zerocopy(void *arg)
{
	struct worker *w = arg;
	struct guest *g = w->g;
	uint32_t len = g->cfg->frame_size;
	unsigned int per = (len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;
	unsigned int burst = bench_burst(per);
	struct pvnet_buf *held[BURST], *pages[BURST * PVNET_MAX_FRAGS];
	struct iovec iov[PVNET_MAX_FRAGS];
	unsigned int nheld = 0;
	uint8_t *frame = malloc(len);
	int rc = 0;

	if (!frame) {
		worker_fail(w, "sender buffer", -ENOMEM);
		goto out;
	}
	while (!stopping(w)) {
		worker_snap(w);
		maybe_migrate(w);
		if (nheld < burst) {
			int got = pvnet_tx_alloc(g->vif, w->q, pages, (burst - nheld) * per);
			unsigned int whole;

			if (got < 0) {
				rc = got;
				worker_fail(w, "pvnet_tx_alloc", rc);
				break;
			}
			whole = (unsigned int)got / per;
			if ((unsigned int)got > whole * per)
				pvnet_tx_free(g->vif, w->q, pages + whole * per,
					      (unsigned int)got - whole * per);
			/* Every line the fills write, fetched owned before the first fill. */
			for (unsigned int f = 0; f < whole; f++) {
				struct pvnet_buf **p = pages + f * per;

				for (unsigned int i = 0; i + 1 < per; i++)
					p[i]->next = p[i + 1];
				chain_iov(p[0], len, iov);
				frame_prefetch(g->cfg->verify, p[0], len, w->seq + f, true);
			}
			for (unsigned int f = 0; f < whole; f++) {
				struct pvnet_buf **p = pages + f * per;
				unsigned int n = chain_iov(p[0], len, iov);

				fill(w, iov, n, w->seq++);
				held[nheld++] = p[0];
			}
		}
		if (!nheld) {
			/* Not one frame's buffers free: one copying send, which arms the wakeup. */
			rc = send_one_copy(w, frame);
			if (rc < 0) {
				worker_fail(w, "pvnet_send", rc);
				break;
			}
			if (rc == 0)
				worker_wait(w);
			continue;
		}
		rc = pvnet_tx_submit(g->vif, w->q, held, nheld);
		if (rc < 0) {
			worker_fail(w, "pvnet_tx_submit", rc);
			break;
		}
		w->c.frames += (unsigned int)rc;
		w->c.bytes += (uint64_t)rc * len;
		if ((unsigned int)rc < nheld) {
			memmove(held, held + rc, (nheld - (unsigned int)rc) * sizeof(held[0]));
			nheld -= (unsigned int)rc;
			worker_wait(w); /* the ring is full: submit armed the wakeup */
		} else {
			nheld = 0;
		}
	}
	if (nheld)
		pvnet_tx_free(g->vif, w->q, held, nheld);
out:
	free(frame);
	worker_end(w);
	return NULL;
}

/*
 * Copying sender: flow q through pvnet_send() on queue q, or, when the vif
 * is steered, through pvnet_send_flow() on whatever queue the policy picks.
 * On a full queue a steered sender waits briefly on the fd of the queue the
 * next frame would take (another thread may consume that queue's event).
 */
void *bench_guest_sender_copy(void *arg)
{
	struct worker *w = arg;
	struct guest *g = w->g;
	uint32_t len = g->cfg->frame_size;
	unsigned int per = (len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;
	unsigned int burst = bench_burst(per);
	struct pvnet_pkt pkts[BURST];
	unsigned int nheld = 0;
	uint8_t *frames = malloc((size_t)burst * len);

	if (!frames) {
		worker_fail(w, "sender buffer", -ENOMEM);
		goto out;
	}
	while (!stopping(w)) {
		int rc;

		worker_snap(w);
		maybe_migrate(w);
		/* Frames keep their slot in @frames until sent: refill only the free tail. */
		for (; nheld < burst; nheld++) {
			uint8_t *f = frames + (size_t)((w->seq) % burst) * len;
			struct iovec iov = {.iov_base = f, .iov_len = len};

			fill(w, &iov, 1, w->seq++);
			pkts[nheld] = (struct pvnet_pkt){.data = f, .len = len};
		}
		rc = g->steered ? pvnet_send_flow(g->vif, pkts, nheld)
				: pvnet_send(g->vif, w->q, pkts, nheld);
		if (rc < 0) {
			worker_fail(w, g->steered ? "pvnet_send_flow" : "pvnet_send", rc);
			break;
		}
		w->c.frames += (unsigned int)rc;
		w->c.bytes += (uint64_t)rc * len;
		memmove(pkts, pkts + rc, (nheld - (unsigned int)rc) * sizeof(pkts[0]));
		nheld -= (unsigned int)rc;
		if (nheld && !g->steered) {
			worker_wait(w); /* stopped: pvnet_send armed the wakeup */
		} else if (nheld) {
			int q = pvnet_vif_pick_queue(g->vif, pkts[0].data, pkts[0].len);
			struct pollfd pf[2] = {
			    {.fd = q < 0 ? -1 : pvnet_queue_fd(g->vif, (unsigned int)q),
			     .events = POLLIN},
			    {.fd = g->wake_fd, .events = POLLIN},
			};

			poll(pf, 2, STEER_WAIT_MS);
		}
	}
out:
	free(frames);
	worker_end(w);
	return NULL;
}

/* Account one received frame. */
static void rx_account(struct worker *w, const struct iovec *iov, unsigned int niov, uint32_t len)
{
	struct guest *g = w->g;
	uint64_t seq, skipped;
	uint16_t flow;

	w->c.frames++;
	w->c.bytes += len;
	if (bench_frame_check(iov, niov, g->cfg->frame_size, g->tmpl, g->nflows, g->cfg->verify,
			      &flow, &seq) < 0) {
		w->c.corrupt++;
		return;
	}
	switch (bench_seq_check(&w->flows[flow], seq, &skipped)) {
	case BENCH_SEQ_OUT_OF_ORDER:
		w->c.out_of_order++;
		break;
	case BENCH_SEQ_GAP:
		w->c.gaps += skipped;
		break;
	case BENCH_SEQ_IN_ORDER:
		break;
	}
}

/* Frames of a burst whose checked lines are being fetched ahead of the check. */
#define RX_AHEAD 4
/* A sequence number that carries no rover line, for frames not read yet. */
#define RX_SEQ_UNKNOWN 1u
_Static_assert(RX_SEQ_UNKNOWN % BENCH_ROVER_EVERY, "RX_SEQ_UNKNOWN carries no rover line");

/* The fragments of a received frame as an iovec: their count, 0 if more than MAX_IOV. */
static unsigned int rx_iov(const struct pvnet_buf *b, struct iovec iov[MAX_IOV])
{
	unsigned int niov = 0;

	for (; b; b = b->next) {
		if (niov == MAX_IOV)
			return 0; /* more fragments than a frame can have */
		iov[niov++] = (struct iovec){.iov_base = b->data, .iov_len = b->len};
	}
	return niov;
}

void *bench_guest_receiver(void *arg)
{
	struct worker *w = arg;
	struct guest *g = w->g;
	/* The copying call: room for a burst of whole frames, at least one 64 KiB frame. */
	size_t buflen = (size_t)BURST * g->cfg->frame_size < PVNET_MAX_FRAME
			    ? PVNET_MAX_FRAME
			    : (size_t)BURST * g->cfg->frame_size;
	uint8_t *buf = g->cfg->zerocopy ? NULL : malloc(buflen);
	struct pvnet_buf *bufs[BURST];
	struct pvnet_pkt pkts[BURST];
	struct iovec iov[MAX_IOV];

	if (!g->cfg->zerocopy && !buf) {
		worker_fail(w, "receive buffer", -ENOMEM);
		goto out;
	}
	while (!stopping(w)) {
		int n;

		worker_snap(w);
		if (g->cfg->zerocopy)
			n = pvnet_rx_burst(g->vif, w->q, bufs, BURST);
		else
			n = pvnet_recv(g->vif, w->q, pkts, BURST, buf, buflen);
		if (n < 0) {
			worker_fail(w, g->cfg->zerocopy ? "pvnet_rx_burst" : "pvnet_recv", n);
			break;
		}
		/*
		 * netback wrote the frames on its CPU: ask for the checked lines
		 * of RX_AHEAD frames before checking the first, then one more
		 * frame each, so that the misses overlap.  Their sequence
		 * numbers are not read yet: the lines of a frame without a
		 * rover (RX_SEQ_UNKNOWN; the one frame in BENCH_ROVER_EVERY
		 * with one has its rover line fetched by the check itself).
		 */
		for (int i = 0; g->cfg->zerocopy && i < n && i < RX_AHEAD; i++)
			frame_prefetch(g->cfg->verify, bufs[i], bufs[i]->pkt_len, RX_SEQ_UNKNOWN,
				       false);
		for (int i = 0; i < n; i++) {
			unsigned int niov;

			if (!g->cfg->zerocopy) {
				iov[0] = (struct iovec){.iov_base = (void *)pkts[i].data,
							.iov_len = pkts[i].len};
				rx_account(w, iov, 1, pkts[i].len);
				continue;
			}
			if (i + RX_AHEAD < n)
				frame_prefetch(g->cfg->verify, bufs[i + RX_AHEAD],
					       bufs[i + RX_AHEAD]->pkt_len, RX_SEQ_UNKNOWN, false);
			niov = rx_iov(bufs[i], iov);
			if (niov)
				rx_account(w, iov, niov, bufs[i]->pkt_len);
			else
				rx_account(w, iov, 0, 0); /* counted as corrupt */
		}
		if (g->cfg->zerocopy && n > 0)
			pvnet_rx_release(g->vif, w->q, bufs, (unsigned int)n);
		if (g->fail_after && w->c.frames >= g->fail_after) {
			/* PVNET_BENCH_FAULT=fail:N (tests): a receiver that fails, as on an error. */
			worker_fail(w, "PVNET_BENCH_FAULT", -EIO);
			break;
		}
		if (g->slow_us && n > 0) {
			/* PVNET_BENCH_FAULT=slow:N (tests): a receiver slower than its sender. */
			struct timespec ts = {.tv_sec = g->slow_us / 1000000,
					      .tv_nsec = (long)(g->slow_us % 1000000) * 1000};

			nanosleep(&ts, NULL);
		}
		if (n == 0)
			worker_wait(w);
	}
out:
	free(buf);
	worker_end(w);
	return NULL;
}
