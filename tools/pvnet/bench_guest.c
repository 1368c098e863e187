// SPDX-License-Identifier: MIT
/* bench_guest.c - pvnet bench: one frontend domain (sender A or receiver B) in its own process */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pvnet/pvnet.h>

#define XEN_NETIF_DEFINE_TOEPLITZ 1 /* rss_setup() hashes as the backend will */
#include <xen/io/netif.h>

#include "bench_guest.h"

/*
 * Theory of Operation
 *
 * The process is a guest domain of pvnetd with one vif of N queues and,
 * once started, one thread per queue: on the sender (A) each thread sends
 * flow q on queue q as fast as the ring takes it; on the receiver (B)
 * each thread receives whatever netback put on RX queue q and checks
 * every frame (bench_frame_check(), bench_seq_check()).  The main thread
 * only answers the parent's commands (struct bench_cmd) on the control
 * socket, so the data path never waits for it.
 *
 * Counters belong to their thread and are plain integers.  A snapshot
 * (BENCH_OP_SNAP) is a handshake: main bumps snap_gen and makes wake_fd
 * readable; every thread, at the top of its loop (or woken from poll by
 * wake_fd), copies its counters and its queue's pvnet_queue_stats() into
 * its snap and publishes snap_ack = snap_gen (release).  Main reads a snap
 * only after seeing its ack (acquire), so no counter is ever read while
 * written, and pvnet_queue_stats() runs on the queue's own thread, as the
 * library requires.  A thread that ended (error or stop) publishes its
 * last snap and done instead.
 *
 * Steering (--steering POLICY, sender only).  The vif gets
 * pvnet_vif_set_steering() and thread q still sends flow q, but through
 * pvnet_send_flow(), so the library picks each frame's queue by the
 * policy; any thread may then send on any queue.  The library's queue
 * counters are written under its queue locks, which the bench cannot take,
 * so a steered sender reads them (pvnet_queue_stats()) only after every
 * sender thread has been joined: snapshots carry zeros for the netfront
 * TX counters, the final counters the real ones.
 *
 * Migration (--migrate, sender only).  Every thread moves itself to the
 * next online CPU of the process's affinity mask every BENCH_MIGRATE_US
 * (sched_setaffinity() on itself, checked between bursts), starting at CPU
 * q modulo their count, so that threads do not move in lockstep onto one
 * CPU.
 *
 * Bounds: every poll() has a timeout, the vif calls are bounded by the
 * vif's timeout_ms, the process dies with its parent (PR_SET_PDEATHSIG,
 * set by the parent before calling us) and by SIGALRM after lifetime_s.
 */

/* How long the sender waits for the receiver's learning broadcast. */
#define LEARN_WAIT_MS 2000

_Static_assert(BENCH_STEER_HASH == PVNET_STEER_HASH && BENCH_STEER_XPS == PVNET_STEER_XPS &&
		   BENCH_STEER_XPS_SAFE == PVNET_STEER_XPS_SAFE,
	       "bench.h steering numbers are enum pvnet_steering's");

static uint64_t rusage_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Collect every thread's snapshot (or last counters) into @c. */
static int snapshot(struct guest *g, struct bench_counts *c, char *err, size_t errlen)
{
	unsigned int gen = atomic_load_explicit(&g->snap_gen, memory_order_relaxed) + 1;
	uint64_t one = 1;
	struct timespec ts = {0, 20000}; /* 20 µs between looks: threads answer within a burst */
	uint64_t t0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	t0 = bench_guest_mono_ns();
	atomic_store_explicit(&g->snap_gen, gen, memory_order_release);
	if (write(g->wake_fd, &one, sizeof(one)) < 0)
		return -errno;
	for (unsigned int q = 0; q < g->nq; q++) {
		struct worker *w = &g->w[q];
		const struct bench_counts *s = &w->snap;
		/* 2 s: a thread answers within one burst or one IDLE_POLL_MS wait. */
		int spins = 100000;

		if (!w->created)
			continue;
		while (atomic_load_explicit(&w->snap_ack, memory_order_acquire) != gen &&
		       !atomic_load_explicit(&w->done, memory_order_acquire) && --spins)
			nanosleep(&ts, NULL);
		if (!spins) {
			snprintf(err, errlen, "queue %u thread did not answer a snapshot", q);
			rc = -ETIMEDOUT;
			continue;
		}
		if (atomic_load_explicit(&w->done, memory_order_acquire)) {
			s = &w->final;
			if (w->error[0] && !err[0])
				snprintf(err, errlen, "%s", w->error);
		}
		c->frames += s->frames;
		c->bytes += s->bytes;
		c->corrupt += s->corrupt;
		c->out_of_order += s->out_of_order;
		c->gaps += s->gaps;
		c->front_tx_notify += s->front_tx_notify;
		c->front_rx_notify += s->front_rx_notify;
		c->front_tx_errors += s->front_tx_errors;
		c->front_rx_errors += s->front_rx_errors;
		c->front_tx_ring_full += s->front_tx_ring_full;
		c->tx_copy_fallback += s->tx_copy_fallback;
	}
	if (read(g->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		rc = rc ? rc : -errno;
	c->cpu_us = rusage_us();
	c->t_ns = t0 + (bench_guest_mono_ns() - t0) / 2;
	return rc;
}

static void stop_workers(struct guest *g)
{
	uint64_t one = 1;

	atomic_store_explicit(&g->stop, true, memory_order_release);
	if (write(g->wake_fd, &one, sizeof(one)) < 0)
		return;
	for (unsigned int q = 0; q < g->nq; q++)
		if (g->w[q].started) {
			pthread_join(g->w[q].th, NULL);
			g->w[q].started = false;
			g->w[q].stats_due = g->steered;
		}
	/* Steered: every sender is joined, so the queue counters are still now. */
	for (unsigned int q = 0; q < g->nq; q++)
		if (g->w[q].stats_due) {
			bench_guest_queue_stats(g, q, &g->w[q].final);
			g->w[q].stats_due = false;
		}
}

/*
 * Receiver with several queues: what an RSS guest sets up, so that flow f
 * lands on RX queue f % queues, whose thread expects it, rather than where
 * pvnetd's keyed flow hash puts it (two flows on one of two queues half the
 * time, one receiver thread then carrying both).  Toeplitz over the IPv4
 * addresses (the hash types have no UDP: bench_tmpl_build() gives each flow
 * its own source address), the standard RSS key, and a mapping table whose
 * entry for each flow's hash names the flow's queue.  Without a control
 * ring the flow hash stays in charge.
 */
static int rss_setup(struct guest *g, char *err, size_t errlen)
{
	static const uint8_t key[PVNET_HASH_KEY_MAX] = {
	    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};
	uint32_t table[256], size = 0;
	int rc;

	if (g->nq < 2 || !pvnet_vif_has_ctrl_ring(g->vif))
		return 0;
	rc = pvnet_vif_get_hash_mapping_size(g->vif, &size);
	if (rc == 0 && (size == 0 || size > 256))
		rc = -EINVAL;
	if (rc == 0)
		rc = pvnet_vif_set_hash_algorithm(g->vif, PVNET_HASH_ALG_TOEPLITZ);
	if (rc == 0)
		rc = pvnet_vif_set_hash_flags(g->vif, PVNET_HASH_IPV4);
	if (rc == 0)
		rc = pvnet_vif_set_hash_key(g->vif, key, sizeof(key));
	if (rc < 0) {
		snprintf(err, errlen, "receive-side scaling: %s", strerror(-rc));
		return rc;
	}
	for (uint32_t i = 0; i < size; i++)
		table[i] = i % g->nq;
	for (unsigned int f = 0; f < g->nflows; f++) {
		uint8_t in[8];

		bench_flow_addrs((uint16_t)f, in, in + 4);
		table[xen_netif_toeplitz_hash(key, sizeof(key), in, sizeof(in)) % size] = f % g->nq;
	}
	rc = pvnet_vif_set_hash_mapping(g->vif, table, size);
	if (rc < 0)
		snprintf(err, errlen, "receive-side scaling mapping: %s", strerror(-rc));
	return rc;
}

static int start_workers(struct guest *g, const struct bench_cmd *cmd, char *err, size_t errlen)
{
	void *(*fn)(void *) = !g->cfg->sender ? bench_guest_receiver
			      : g->steered ? bench_guest_sender_copy /* pvnet_send_flow() copies */
			      : g->cfg->zerocopy ? bench_guest_sender_zerocopy
						 : bench_guest_sender_copy;

	g->nflows = g->cfg->sender ? g->nq : cmd->nflows;
	if (g->nflows < 1 || g->nflows > BENCH_MAX_FLOWS) {
		snprintf(err, errlen, "bad flow count %u", g->nflows);
		return -EINVAL;
	}
	memcpy(g->peer, cmd->peer_mac, 6);
	for (unsigned int f = 0; f < g->nflows; f++) {
		if (g->cfg->sender)
			bench_tmpl_build(&g->tmpl[f], g->peer, g->mac, (uint16_t)f,
					 g->cfg->frame_size);
		else
			bench_tmpl_build(&g->tmpl[f], g->mac, g->peer, (uint16_t)f,
					 g->cfg->frame_size);
	}
	if (!g->cfg->sender) {
		int rc = rss_setup(g, err, errlen);

		if (rc < 0)
			return rc;
	}
	for (unsigned int q = 0; q < g->nq; q++) {
		struct worker *w = &g->w[q];
		int rc;

		w->g = g;
		w->q = q;
		rc = pthread_create(&w->th, NULL, fn, w);
		if (rc) {
			snprintf(err, errlen, "pthread_create: %s", strerror(rc));
			stop_workers(g);
			return -rc;
		}
		w->started = true;
		w->created = true;
	}
	return 0;
}

/* Receiver: one broadcast frame from our MAC, so that the switch learns where we are. */
static int learn_send(struct guest *g, char *err, size_t errlen)
{
	uint8_t f[BENCH_MIN_FRAME] = {0};
	struct pvnet_pkt pkt = {.data = f, .len = sizeof(f)};
	int rc;

	memset(f, 0xff, 6);
	memcpy(f + 6, g->mac, 6);
	f[12] = 0x88; /* 0x88b5: IEEE local experimental ethertype */
	f[13] = 0xb5;
	rc = pvnet_send(g->vif, 0, &pkt, 1);
	if (rc == 1)
		return 0;
	snprintf(err, errlen, "sending the learning broadcast: %s",
		 rc < 0 ? strerror(-rc) : "TX ring full");
	return rc < 0 ? rc : -EAGAIN;
}

/* Sender: wait (bounded) for the receiver's broadcast, proof that the switch has learnt it. */
static bool learn_wait(struct guest *g, const uint8_t peer[6])
{
	uint8_t *buf = malloc(PVNET_MAX_FRAME);
	struct pvnet_pkt pkts[8];
	bool seen = false;

	for (int t = 0; buf && !seen && t < LEARN_WAIT_MS / 10; t++) {
		struct pollfd pf[PVNET_MAX_QUEUES];

		for (unsigned int q = 0; q < g->nq && !seen; q++) {
			int n = pvnet_recv(g->vif, q, pkts, 8, buf, PVNET_MAX_FRAME);

			for (int i = 0; i < n; i++)
				if (pkts[i].len >= 12 &&
				    !memcmp((const uint8_t *)pkts[i].data + 6, peer, 6))
					seen = true;
			pf[q] = (struct pollfd){.fd = pvnet_queue_fd(g->vif, q), .events = POLLIN};
		}
		if (!seen)
			poll(pf, g->nq, 10);
	}
	free(buf);
	return seen;
}

static int reply(int fd, struct bench_reply *r)
{
	return send(fd, r, sizeof(*r), MSG_NOSIGNAL) == (ssize_t)sizeof(*r) ? 0 : -1;
}

static int guest_up(struct guest *g, struct bench_reply *r)
{
	struct pvnet_vif_config vc;
	uint32_t pages;
	int rc;

	pvnet_vif_config_default(&vc);
	vc.queues = g->cfg->queues;
	vc.ctrl_ring = !g->cfg->sender && g->cfg->queues > 1; /* rss_setup() */
	/* Ring pages + one page per TX and RX buffer per queue, plus slack for the library. */
	pages = g->cfg->queues * (2 + vc.tx_buffers + vc.rx_buffers) + 64;
	rc = pvnet_domain_create(g->cfg->run_dir, pages, &g->dom);
	if (rc < 0) {
		snprintf(r->error, sizeof(r->error), "cannot become a domain of pvnetd in %s: %s",
			 g->cfg->run_dir, strerror(-rc));
		return rc;
	}
	r->domid = pvnet_domain_id(g->dom);
	rc = pvnet_vif_create(g->dom, &vc, &g->vif);
	if (rc < 0) {
		r->never_connected = rc == -ETIMEDOUT || rc == -ENOTCONN || rc == -EOPNOTSUPP;
		snprintf(r->error, sizeof(r->error), "vif of domain %u did not connect: %s%s%s",
			 r->domid, strerror(-rc),
			 pvnet_domain_vif_error(g->dom) ? ": the backend says " : "",
			 pvnet_domain_vif_error(g->dom) ? pvnet_domain_vif_error(g->dom) : "");
		return rc;
	}
	g->nq = pvnet_vif_queues(g->vif);
	r->queues = g->nq;
	r->features = pvnet_vif_features(g->vif);
	pvnet_vif_mac(g->vif, g->mac);
	memcpy(r->mac, g->mac, 6);
	if (g->cfg->frame_size > PVNET_PAGE_SIZE && !(r->features & PVNET_F_SG)) {
		snprintf(r->error, sizeof(r->error),
			 "frames of %u bytes need feature-sg, which the backend did not offer",
			 g->cfg->frame_size);
		return -EOPNOTSUPP;
	}
	if (g->cfg->sender && g->cfg->steering != BENCH_STEER_QUEUE) {
		const char *name = bench_steering_name(g->cfg->steering);
		int policy = pvnet_steering_parse(name);

		rc = policy < 0 ? policy : pvnet_vif_set_steering(g->vif, policy);
		if (rc < 0) {
			snprintf(r->error, sizeof(r->error), "steering %s: %s", name,
				 strerror(-rc));
			return rc;
		}
		g->steered = true;
	}
	if (g->cfg->sender && g->cfg->migrate) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) < 0) {
			rc = -errno;
			snprintf(r->error, sizeof(r->error), "sched_getaffinity: %s",
				 strerror(-rc));
			return rc;
		}
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				g->cpus[g->ncpus++] = c;
	}
	return 0;
}

/*
 * PVNET_BENCH_FAULT=corrupt:N, reorder:N, fail:N or slow:N, for tests of the
 * receiver's checks, of a failing data thread and of the accounting of
 * drops (docs/benchmarks.md): the sender damages every Nth frame
 * (bench_guest_data.c, fill()), each receiver thread fails after N frames,
 * or each sleeps N microseconds (at most a second) after every burst it
 * took, so that netback must drop.  Anything else in it is refused.
 */
static int fault_setup(struct guest *g, struct bench_reply *r)
{
	static const char *const kinds[] = {"corrupt:", "reorder:", "fail:", "slow:"};
	const char *v = getenv("PVNET_BENCH_FAULT");
	size_t k, len = 0;
	unsigned long n;
	char *end;

	if (!v || !*v)
		return 0;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		len = strlen(kinds[k]);
		if (!strncmp(v, kinds[k], len))
			break;
	}
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		goto bad;
	errno = 0;
	n = strtoul(v + len, &end, 10); /* digits only: no sign or space for strtoul to take */
	if (!isdigit((unsigned char)v[len]) || errno || *end || n == 0 || n > UINT32_MAX)
		goto bad;
	if (k == 2) {
		g->fail_after = (unsigned int)n;
		return 0;
	}
	if (k == 3) {
		if (n > 1000000)
			goto bad;
		g->slow_us = (unsigned int)n;
		return 0;
	}
	g->fault_reorder = k == 1;
	g->fault_every = (unsigned int)n;
	return 0;
bad:
	snprintf(r->error, sizeof(r->error),
		 "PVNET_BENCH_FAULT: '%s' is not corrupt:N, reorder:N, fail:N (N >= 1) or slow:N "
		 "(1 <= N <= 1000000)",
		 v);
	return -EINVAL;
}

/**
 * bench_guest_main() - be one frontend domain of a benchmark run until told to exit
 * @cfg: what to be; @cfg->ctl_fd is the socket to the parent
 *
 * Return: the process's exit status (0, or 1 after an error it reported)
 */
int bench_guest_main(const struct bench_guest_cfg *cfg)
{
	struct guest *g = calloc(1, sizeof(*g));
	struct bench_reply r = {.op = BENCH_OP_READY};
	struct bench_cmd cmd;
	int rc, status = 0;

	alarm(cfg->lifetime_s);
	if (!g)
		return 1;
	g->cfg = cfg;
	g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rc = g->wake_fd < 0 ? -errno : fault_setup(g, &r);
	if (rc == 0)
		rc = guest_up(g, &r);
	r.status = rc;
	if (reply(cfg->ctl_fd, &r) < 0 || rc < 0) {
		status = 1;
		goto out;
	}
	for (;;) {
		ssize_t n = recv(cfg->ctl_fd, &cmd, sizeof(cmd), 0);

		if (n != (ssize_t)sizeof(cmd))
			break; /* the parent went away: clean up and go */
		memset(&r, 0, sizeof(r));
		r.op = cmd.op;
		switch (cmd.op) {
		case BENCH_OP_LEARN_SEND:
			r.status = learn_send(g, r.error, sizeof(r.error));
			break;
		case BENCH_OP_LEARN_WAIT:
			r.learn_seen = learn_wait(g, cmd.peer_mac);
			break;
		case BENCH_OP_START:
			r.status = start_workers(g, &cmd, r.error, sizeof(r.error));
			break;
		case BENCH_OP_SNAP:
			r.status = snapshot(g, &r.c, r.error, sizeof(r.error));
			break;
		case BENCH_OP_STOP:
			stop_workers(g);
			r.status = snapshot(g, &r.c, r.error, sizeof(r.error));
			break;
		case BENCH_OP_EXIT:
			reply(cfg->ctl_fd, &r);
			goto out;
		default:
			r.status = -EINVAL;
			snprintf(r.error, sizeof(r.error), "unknown command %u", cmd.op);
		}
		if (r.error[0] && !r.status)
			r.status = -EIO;
		if (reply(cfg->ctl_fd, &r) < 0)
			break;
	}
out:
	stop_workers(g);
	pvnet_vif_destroy(g->vif);
	pvnet_domain_destroy(g->dom);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	free(g);
	return status;
}
