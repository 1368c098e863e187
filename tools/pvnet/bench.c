// SPDX-License-Identifier: MIT
/* bench.c - pvnet bench: stream benchmark between two frontend domains through pvnetd */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/*
 * Theory of Operation
 *
 * Processes.  `pvnet bench` is the conductor; it never touches a ring.
 *
 *   pvnet bench ──fork/exec──▶ pvnetd --run-dir TMP/run-MODE --tx-mode MODE
 *        │                     (one per tx mode, unless -d names a running one)
 *        ├──fork──▶ A: frontend domain, vif of Q queues, Q sender threads
 *        └──fork──▶ B: frontend domain, vif of Q queues, Q receiver threads
 *
 * A and B are forked afresh for every run (so each run starts from clean
 * counters) and talk to the conductor over a socketpair each (struct
 * bench_cmd / struct bench_reply, see bench.h).  A run:
 *
 *   READY (A, B) → B: LEARN_SEND → A: LEARN_WAIT → B: START → A: START
 *   → warm-up → SNAP A, B, pvnetd (t0) → duration → SNAP A, B, pvnetd (t1)
 *   → A: STOP → B: SNAP until its count is still (drain) → status → B: STOP
 *   → EXIT (A, B) → reap
 *
 * "pvnetd" above is its `status` (netback counters of both vifs) and its
 * /proc/PID/stat CPU time; the frontends report their getrusage().  The
 * figures are differences between t1 and t0; the accounting check
 * (unaccounted) uses the totals after draining.
 *
 * Bounds and cleanup.  Every wait is a poll() with a timeout that also
 * watches a signalfd (SIGINT, SIGTERM, SIGHUP are blocked in the
 * conductor) and the children's sockets (a dead child hangs up).  Children
 * die with the conductor (PR_SET_PDEATHSIG) and by their own alarm().  On
 * any failure the run's children are killed and reaped; after the last run
 * (or a signal) pvnetd gets SIGTERM, then SIGKILL after 5 s, and the
 * temporary directory is removed.  Nothing touches the network: frames
 * move in shared memory, control over UNIX sockets.
 */

/* Warm-up before the timed window: rings, caches and the switch's table settle. */
#define WARMUP_S 0.2
/* Control replies: vif set-up is bounded by the vif's 5 s timeout; sanitizers triple it. */
#define READY_TIMEOUT_MS 20000
#define CMD_TIMEOUT_MS	 5000
/* Draining after the sender stopped: still for DRAIN_STILL_MS, at most DRAIN_MAX_MS. */
#define DRAIN_STILL_MS 200
#define DRAIN_MAX_MS   3000
/* Exit status when the vifs never connected: the smoke test maps it to "skipped". */
#define EXIT_NOT_CONNECTED 3

struct child {
	pid_t pid;
	int fd;
	struct bench_reply ready;
};

struct bench {
	/* options */
	uint32_t sizes[BENCH_MAX_LIST];
	unsigned int nsizes;
	unsigned int queues[BENCH_MAX_LIST];
	unsigned int nqueues;
	char modes[2][8]; /* copy and map at most: a mode twice would measure nothing new */
	unsigned int nmodes;
	bool modes_given;
	double duration, warmup;
	const char *json_path;
	const char *pvnetd_opt;
	const char *ext_run_dir;
	bool zerocopy;
	enum bench_verify verify;
	int steering[BENCH_MAX_LIST]; /* BENCH_STEER_QUEUE or policies */
	unsigned int nsteering;
	bool migrate;
	/* state */
	int sfd;
	sigset_t oldmask;
	bool interrupted;
	bool progress;
	char pvnetd_path[PATH_MAX];
	char tmpdir[64];	   /* $TMPDIR/pvnet-bench.XXXXXX: short, as socket paths must be */
	struct bench_pvnetd pd[2]; /* one per mode, all running during the sweep */
	char ext_mode[8];	   /* -d: the mode given with -m, or "unknown" */
	bool never_connected;
	unsigned int runs_ok, runs_failed;
	json_t *results;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pvnet bench [OPTIONS]\n"
		"Stream frames from one frontend domain (A) to another (B) through pvnetd and\n"
		"report throughput, frame rate, CPU service demand, notifications, drops,\n"
		"corrupt and out-of-order frames.  One run per frame size x queues x tx mode.\n"
		"\n"
		"  -d, --run-dir DIR     use the pvnetd running there (only its tx mode)\n"
		"      --pvnetd PATH     pvnetd to start (default: next to this pvnet in the\n"
		"                        build tree, else pvnetd in PATH)\n"
		"  -s, --frame-size LIST bytes per frame, 60..65535 (default 64,1514,9000,65535;\n"
		"                        65535 is the 64 KiB frame: netif sizes are 16 bits)\n"
		"  -q, --queues LIST     queues (= sender and receiver threads) (default 1)\n"
		"  -m, --tx-mode LIST    copy,map: pvnetd --tx-mode (default both)\n"
		"  -t, --duration SECS   timed window per run (default 2), after %.1f s warm-up\n"
		"      --warmup SECS     warm-up before the window\n"
		"      --api API         zerocopy (pvnet_tx_alloc/rx_burst, default) or copy\n"
		"                        (pvnet_send/recv)\n"
		"      --verify MODE     sampled (default: headers, 1 KiB stamps, tail) or full\n"
		"                        (every payload byte written and checked)\n"
		"      --steering LIST   hash,xps,xps-safe: the sender vif's TX steering policy;\n"
		"                        each sender thread sends its flow with pvnet_send_flow()\n"
		"                        (default queue: thread q sends on queue q)\n"
		"      --migrate         sender threads hop to the next CPU every %u ms\n"
		"  -j, --json FILE       write every figure as JSON\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 all runs passed, 1 a run failed, 2 usage, 3 the vifs never\n"
		"connected, 130 interrupted.\n",
		WARMUP_S, BENCH_MIGRATE_US / 1000u);
}

/* Remove the temporary directory and what pvnetd left in it. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void cleanup_tmp(struct bench *b)
{
	if (b->tmpdir[0])
		nftw(b->tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	b->tmpdir[0] = '\0';
}

/* A pending SIGINT/SIGTERM/SIGHUP?  Then remember it. */
static bool check_signal(struct bench *b)
{
	struct signalfd_siginfo si;

	if (read(b->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		b->interrupted = true;
		fprintf(stderr, "pvnet bench: signal %u: stopping\n", si.ssi_signo);
	}
	return b->interrupted;
}

/* Sleep @secs, but wake for a signal or a child's socket event.  Return -EINTR, -EPIPE or 0. */
static int nap(struct bench *b, double secs, const struct child *a, const struct child *c)
{
	double end = now_s() + secs;

	for (;;) {
		struct pollfd pf[3] = {{.fd = b->sfd, .events = POLLIN},
				       {.fd = a ? a->fd : -1, .events = POLLIN},
				       {.fd = c ? c->fd : -1, .events = POLLIN}};
		double left = end - now_s();

		if (left <= 0)
			return 0;
		if (poll(pf, 3, (int)(left * 1000) + 1) > 0) {
			if (check_signal(b))
				return -EINTR;
			if (pf[1].revents || pf[2].revents)
				return -EPIPE; /* a child spoke unasked or died */
		}
	}
}

/* Send @op to @ch and wait for its reply. */
static int call(struct bench *b, struct child *ch, const char *who, struct bench_cmd *cmd,
		struct bench_reply *r, int timeout_ms, char *err, size_t errlen)
{
	double end = now_s() + timeout_ms / 1000.0;

	if (cmd && send(ch->fd, cmd, sizeof(*cmd), MSG_NOSIGNAL) != (ssize_t)sizeof(*cmd)) {
		snprintf(err, errlen, "%s: process gone (%s)", who, strerror(errno));
		return -EPIPE;
	}
	for (;;) {
		struct pollfd pf[2] = {{.fd = b->sfd, .events = POLLIN},
				       {.fd = ch->fd, .events = POLLIN}};
		double left = end - now_s();
		ssize_t n;

		if (left <= 0) {
			snprintf(err, errlen, "%s: no answer within %d ms", who, timeout_ms);
			return -ETIMEDOUT;
		}
		if (poll(pf, 2, (int)(left * 1000) + 1) <= 0)
			continue;
		if (check_signal(b)) {
			snprintf(err, errlen, "interrupted");
			return -EINTR;
		}
		if (!pf[1].revents)
			continue;
		n = recv(ch->fd, r, sizeof(*r), MSG_DONTWAIT);
		if (n != (ssize_t)sizeof(*r)) {
			snprintf(err, errlen, "%s: process died", who);
			return -EPIPE;
		}
		if (r->status < 0) {
			snprintf(err, errlen, "%s: %s", who,
				 r->error[0] ? r->error : strerror(-r->status));
			return r->status;
		}
		return 0;
	}
}

static int cmd(struct bench *b, struct child *ch, const char *who, uint32_t op, const uint8_t *peer,
	       uint32_t nflows, struct bench_reply *r, char *err, size_t errlen)
{
	struct bench_cmd c = {.op = op, .nflows = nflows};

	if (peer)
		memcpy(c.peer_mac, peer, 6);
	return call(b, ch, who, &c, r, CMD_TIMEOUT_MS, err, errlen);
}

/* Fork one frontend process; it answers READY on its own. */
static int spawn(struct bench *b, const struct bench_pvnetd *pd, struct child *ch, bool sender,
		 unsigned int queues, uint32_t size, int steering)
{
	struct bench_guest_cfg cfg = {
	    .run_dir = pd->run_dir,
	    .sender = sender,
	    .queues = queues,
	    .frame_size = size,
	    .verify = b->verify,
	    .zerocopy = b->zerocopy,
	    .steering = steering,
	    .migrate = b->migrate,
	    .ctl_fd = 3,
	    /* Whatever happens, gone 60 s after the run should have ended. */
	    .lifetime_s = (unsigned int)(b->warmup + b->duration) + 60,
	};
	pid_t parent = getpid();
	int sv[2];

	ch->pid = 0;
	ch->fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	fflush(NULL);
	ch->pid = fork();
	if (ch->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (ch->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		sigprocmask(SIG_SETMASK, &b->oldmask, NULL);
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		close_range(4, ~0u, 0);
		_exit(bench_guest_main(&cfg));
	}
	close(sv[1]);
	ch->fd = sv[0];
	return 0;
}

static void kill_child(struct child *ch, bool gently)
{
	struct bench_cmd c = {.op = BENCH_OP_EXIT};

	if (ch->pid <= 0)
		return;
	if (gently && ch->fd >= 0)
		send(ch->fd, &c, sizeof(c), MSG_NOSIGNAL);
	else
		kill(ch->pid, SIGKILL);
	/* A gentle exit destroys the vif (bounded by its 5 s timeout). */
	bench_reap(ch->pid, gently ? 10000 : 1000);
	ch->pid = 0;
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
}

/* Drain: snapshot B until its frame count stood still for DRAIN_STILL_MS. */
static int drain(struct bench *b, struct child *B, struct bench_reply *r, char *err, size_t el)
{
	uint64_t last = UINT64_MAX;
	double still = now_s(), end = still + DRAIN_MAX_MS / 1000.0;
	int rc;

	for (;;) {
		rc = cmd(b, B, "receiver", BENCH_OP_SNAP, NULL, 0, r, err, el);
		if (rc < 0)
			return rc;
		if (r->c.frames != last) {
			last = r->c.frames;
			still = now_s();
		} else if (now_s() - still >= DRAIN_STILL_MS / 1000.0) {
			return 0;
		}
		if (now_s() > end)
			return 0; /* still trickling: the accounting will say so */
		rc = nap(b, 0.02, NULL, NULL);
		if (rc < 0)
			return rc;
	}
}

/* The measured part of one run; @A and @B are READY. */
static int measure(struct bench *b, struct bench_pvnetd *pd, struct child *A, struct child *B,
		   struct bench_result *r)
{
	unsigned int da = A->ready.domid, db = B->ready.domid;
	struct bench_reply ra, rb;
	int64_t cpu0, cpu1, busy0, busy1, steal0, steal1;
	double t0, t1;
	char *err = r->error;
	size_t el = sizeof(r->error);
	int rc;

	rc = cmd(b, B, "receiver", BENCH_OP_LEARN_SEND, NULL, 0, &rb, err, el);
	if (!rc)
		rc = cmd(b, A, "sender", BENCH_OP_LEARN_WAIT, B->ready.mac, 0, &ra, err, el);
	if (rc)
		return rc;
	r->learn_seen = ra.learn_seen;
	rc = cmd(b, B, "receiver", BENCH_OP_START, A->ready.mac, A->ready.queues, &rb, err, el);
	if (!rc)
		rc = cmd(b, A, "sender", BENCH_OP_START, B->ready.mac, 0, &ra, err, el);
	if (!rc)
		rc = nap(b, b->warmup, A, B);
	if (rc)
		return rc == -EPIPE ? (snprintf(err, el, "a frontend process died"), rc) : rc;

	/* t0: pvnetd's status first (a control-socket round trip), then the frontends. */
	if (bench_pvnetd_counters(pd, da, db, &r->back0) < 0 || !r->back0.ok)
		snprintf(err, el, "pvnetd status lacks the run's vifs");
	cpu0 = bench_pvnetd_cpu_us(pd);
	bench_sys_cpu_us(&busy0, &steal0);
	t0 = now_s();
	rc = cmd(b, A, "sender", BENCH_OP_SNAP, NULL, 0, &ra, err, el);
	if (!rc)
		rc = cmd(b, B, "receiver", BENCH_OP_SNAP, NULL, 0, &rb, err, el);
	if (rc)
		return rc;
	r->a0 = ra.c;
	r->b0 = rb.c;
	rc = nap(b, b->duration, A, B);
	if (rc)
		return rc == -EPIPE ? (snprintf(err, el, "a frontend process died"), rc) : rc;
	rc = cmd(b, A, "sender", BENCH_OP_SNAP, NULL, 0, &ra, err, el);
	if (!rc)
		rc = cmd(b, B, "receiver", BENCH_OP_SNAP, NULL, 0, &rb, err, el);
	if (rc)
		return rc;
	t1 = now_s();
	cpu1 = bench_pvnetd_cpu_us(pd);
	bench_sys_cpu_us(&busy1, &steal1);
	r->sys_busy_us = busy0 >= 0 && busy1 >= busy0 ? busy1 - busy0 : -1;
	r->sys_steal_us = steal0 >= 0 && steal1 >= steal0 ? steal1 - steal0 : -1;
	r->a1 = ra.c;
	r->b1 = rb.c;
	if (bench_pvnetd_counters(pd, da, db, &r->back1) < 0 || !r->back1.ok)
		snprintf(err, el, "pvnetd status lacks the run's vifs");
	r->window_s = t1 - t0;
	r->pvnetd_cpu_us = cpu0 >= 0 && cpu1 >= cpu0 ? cpu1 - cpu0 : -1;

	/* Whole-run accounting: stop A, let B drain, then read everything once more. */
	rc = cmd(b, A, "sender", BENCH_OP_STOP, NULL, 0, &ra, err, el);
	if (rc)
		return rc;
	r->a_end = ra.c;
	rc = drain(b, B, &rb, err, el);
	if (rc)
		return rc;
	bench_pvnetd_counters(pd, da, db, &r->back_end);
	rc = cmd(b, B, "receiver", BENCH_OP_STOP, NULL, 0, &rb, err, el);
	if (rc)
		return rc;
	r->b_end = rb.c;
	return r->error[0] ? -EIO : 0;
}

/* What the counters say pvnetd's TX mode was (for -d, and as a check of our own). */
static const char *mode_from_counters(const struct bench_result *r)
{
	uint64_t zc = r->back1.tx_zerocopy_sent - r->back0.tx_zerocopy_sent;
	uint64_t cp = r->back1.tx_copied - r->back0.tx_copied;

	if (!r->back0.ok || !r->back1.ok || (!zc && !cp))
		return NULL;
	return zc > cp ? "map" : "copy";
}

static void run_one(struct bench *b, struct bench_pvnetd *pd, const char *mode, unsigned int queues,
		    uint32_t size, int steering, struct bench_result *r)
{
	struct child A = {.fd = -1}, B = {.fd = -1};
	const char *inferred;
	char why[32];
	int rc;

	memset(r, 0, sizeof(*r));
	r->frame_size = size;
	r->queues = queues;
	r->verify = b->verify;
	r->api = b->zerocopy ? "zerocopy" : "copy";
	r->steering = steering;
	r->migrate = b->migrate;
	r->pvnetd_cpu_us = -1;
	r->sys_busy_us = r->sys_steal_us = -1;
	snprintf(r->tx_mode, sizeof(r->tx_mode), "%s", mode);
	r->tx_mode_source = b->ext_run_dir ? "unknown" : "pvnetd --tx-mode";

	if (!b->ext_run_dir && pd->pid <= 0) {
		snprintf(r->error, sizeof(r->error), "pvnetd (%s) is not running", mode);
		return;
	}
	rc = spawn(b, pd, &A, true, queues, size, steering);
	if (!rc)
		rc = spawn(b, pd, &B, false, queues, size, BENCH_STEER_QUEUE);
	if (rc) {
		snprintf(r->error, sizeof(r->error), "fork: %s", strerror(-rc));
		goto out;
	}
	rc = call(b, &A, "sender", NULL, &A.ready, READY_TIMEOUT_MS, r->error, sizeof(r->error));
	if (!rc)
		rc = call(b, &B, "receiver", NULL, &B.ready, READY_TIMEOUT_MS, r->error,
			  sizeof(r->error));
	if (rc) {
		b->never_connected |= A.ready.never_connected || B.ready.never_connected;
		goto out;
	}
	r->queues_got = A.ready.queues < B.ready.queues ? A.ready.queues : B.ready.queues;
	rc = measure(b, pd, &A, &B, r);
	inferred = mode_from_counters(r);
	if (inferred && b->ext_run_dir && !strcmp(r->tx_mode, "unknown")) {
		snprintf(r->tx_mode, sizeof(r->tx_mode), "%s", inferred);
		r->tx_mode_source = "inferred from netback counters (tx_zerocopy_sent, tx_copied)";
	} else if (inferred && strcmp(inferred, r->tx_mode)) {
		fprintf(stderr,
			"pvnet bench: warning: run in %s mode, but netback's counters say %s "
			"(tx_zerocopy_sent vs tx_copied)\n",
			r->tx_mode, inferred);
	}
out:
	if (rc && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", strerror(-rc));
	kill_child(&A, rc == 0);
	kill_child(&B, rc == 0);
	if (bench_pvnetd_exited(pd, why, sizeof(why)))
		snprintf(r->error, sizeof(r->error), "pvnetd exited (%s) during the run", why);
}

/* Every run: queues, then frame size, then tx mode, then steering innermost, so that the
 * copy and map runs of one size, and the policies of one mode, are adjacent in time on a
 * machine whose speed drifts. */
static void sweep(struct bench *b, unsigned int npd)
{
	unsigned int done = 0, total = b->nqueues * b->nsizes * npd * b->nsteering;
	char row[512];

	for (unsigned int qi = 0; qi < b->nqueues; qi++)
		for (unsigned int si = 0; si < b->nsizes; si++)
			for (unsigned int n = 0; n < npd * b->nsteering; n++) {
				unsigned int m = n / b->nsteering;
				int steer = b->steering[n % b->nsteering];
				const char *mode = b->ext_run_dir ? b->ext_mode : b->modes[m];
				struct bench_result r;

				if (b->interrupted)
					return;
				if (b->progress)
					fprintf(stderr,
						"[%u/%u] %s, %u queue%s, %u bytes, %s%s ...\n",
						++done, total, mode, b->queues[qi],
						b->queues[qi] == 1 ? "" : "s", b->sizes[si],
						bench_steering_name(steer),
						b->migrate ? ", migrating" : "");
				run_one(b, &b->pd[m], mode, b->queues[qi], b->sizes[si], steer, &r);
				if (b->interrupted)
					return;
				if (r.error[0])
					b->runs_failed++;
				else
					b->runs_ok++;
				json_array_append_new(b->results, bench_result2json(&r));
				bench_table_row(&r, row, sizeof(row));
				printf("%s\n", row);
				fflush(stdout);
			}
}

static int parse_opts(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"run-dir", required_argument, NULL, 'd'},
	    {"frame-size", required_argument, NULL, 's'},
	    {"queues", required_argument, NULL, 'q'},
	    {"tx-mode", required_argument, NULL, 'm'},
	    {"duration", required_argument, NULL, 't'},
	    {"warmup", required_argument, NULL, 'w'},
	    {"json", required_argument, NULL, 'j'},
	    {"pvnetd", required_argument, NULL, 'p'},
	    {"api", required_argument, NULL, 'a'},
	    {"verify", required_argument, NULL, 'v'},
	    {"steering", required_argument, NULL, 'S'},
	    {"migrate", no_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	char err[256];
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:s:q:m:t:j:h", opts, NULL)) != -1) {
		err[0] = '\0';
		switch (c) {
		case 'd':
			b->ext_run_dir = optarg;
			break;
		case 's':
			n = bench_parse_sizes(optarg, b->sizes, BENCH_MAX_LIST, err, sizeof(err));
			if (n < 0)
				goto bad;
			b->nsizes = (unsigned int)n;
			break;
		case 'q':
			n = bench_parse_queues(optarg, b->queues, BENCH_MAX_LIST, err, sizeof(err));
			if (n < 0)
				goto bad;
			b->nqueues = (unsigned int)n;
			break;
		case 'm':
			n = bench_parse_modes(optarg, b->modes, 2, err, sizeof(err));
			if (n < 0)
				goto bad;
			b->nmodes = (unsigned int)n;
			b->modes_given = true;
			break;
		case 't':
		case 'w':
			if (bench_parse_seconds(optarg, c == 't' ? &b->duration : &b->warmup)) {
				snprintf(err, sizeof(err), "--%s: '%s' is not 0.01..3600 seconds",
					 c == 't' ? "duration" : "warmup", optarg);
				goto bad;
			}
			break;
		case 'j':
			b->json_path = optarg;
			break;
		case 'p':
			b->pvnetd_opt = optarg;
			break;
		case 'a':
			if (strcmp(optarg, "zerocopy") && strcmp(optarg, "copy")) {
				snprintf(err, sizeof(err), "--api: '%s' is not zerocopy or copy",
					 optarg);
				goto bad;
			}
			b->zerocopy = !strcmp(optarg, "zerocopy");
			break;
		case 'v':
			if (strcmp(optarg, "sampled") && strcmp(optarg, "full")) {
				snprintf(err, sizeof(err), "--verify: '%s' is not sampled or full",
					 optarg);
				goto bad;
			}
			b->verify =
			    !strcmp(optarg, "full") ? BENCH_VERIFY_FULL : BENCH_VERIFY_SAMPLED;
			break;
		case 'S':
			n = bench_parse_steering(optarg, b->steering, BENCH_MAX_LIST, err,
						 sizeof(err));
			if (n < 0) {
				fprintf(stderr, "pvnet bench: --steering: %s\n", err);
				return -1;
			}
			b->nsteering = (unsigned int)n;
			break;
		case 'M':
			b->migrate = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pvnet bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (b->ext_run_dir && b->modes_given && b->nmodes > 1) {
		fprintf(stderr, "pvnet bench: with -d the running pvnetd's tx mode is fixed; "
				"--tx-mode cannot sweep\n");
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "pvnet bench: %s\n", err);
	return -1;
}

static int write_json(struct bench *b, json_t *machine)
{
	char command[4096];
	json_t *doc;
	int rc;

	bench_command_line(command, sizeof(command));
	doc = bench_doc2json(machine, command, json_incref(b->results));
	if (!doc)
		return -ENOMEM;
	rc = json_dump_file(doc, b->json_path, JSON_INDENT(2));
	json_decref(doc);
	if (rc) {
		fprintf(stderr, "pvnet bench: cannot write %s: %s\n", b->json_path,
			strerror(errno));
		return -EIO;
	}
	return 0;
}

/**
 * bench_main() - `pvnet bench`: run the stream benchmark sweep
 * @argc: arguments, from "bench" on
 * @argv: the arguments
 * @run_dir: the global `pvnet -d DIR`, or NULL when not given
 *
 * Return: the exit status (see usage())
 */
int bench_main(int argc, char **argv, const char *run_dir)
{
	struct bench b = {
	    .sizes = {64, 1514, 9000, 65535},
	    .nsizes = 4,
	    .queues = {1},
	    .nqueues = 1,
	    .modes = {"copy", "map"},
	    .nmodes = 2,
	    .duration = 2.0,
	    .warmup = WARMUP_S,
	    .zerocopy = true,
	    .steering = {BENCH_STEER_QUEUE},
	    .nsteering = 1,
	    .ext_run_dir = run_dir,
	    .sfd = -1,
	};
	json_t *machine;
	char hdr[256];
	sigset_t mask;
	int rc = parse_opts(&b, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (b.ext_run_dir && !b.modes_given)
		b.nmodes = 1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, &b.oldmask);
	b.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (b.sfd < 0) {
		fprintf(stderr, "pvnet bench: signalfd: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	b.progress = isatty(2);
	b.results = json_array();
	machine = bench_machine_json();
	bench_table_header(hdr, sizeof(hdr));

	if (b.ext_run_dir) {
		rc = bench_pvnetd_attach(&b.pd[0], b.ext_run_dir);
		if (rc < 0) {
			fprintf(stderr, "pvnet bench: cannot reach pvnetd at %s/pvnetd.sock: %s\n",
				b.ext_run_dir, strerror(-rc));
			rc = 1;
			goto out;
		}
		/* pvnetd's status does not say its tx mode: trust -m if given, else infer. */
		snprintf(b.ext_mode, sizeof(b.ext_mode), "%s",
			 b.modes_given ? b.modes[0] : "unknown");
		printf("%s\n", hdr);
		sweep(&b, 1);
	} else {
		const char *tmp = getenv("TMPDIR");

		/* Short enough that pvnetd's socket paths fit in sun_path (108 bytes). */
		if (!tmp || !*tmp || strlen(tmp) > 40)
			tmp = "/tmp";
		snprintf(b.tmpdir, sizeof(b.tmpdir), "%s/pvnet-bench.XXXXXX", tmp);
		if (!mkdtemp(b.tmpdir)) {
			fprintf(stderr, "pvnet bench: mkdtemp: %s\n", strerror(errno));
			b.tmpdir[0] = '\0';
			rc = 1;
			goto out;
		}
		bench_pvnetd_find(b.pvnetd_opt, b.pvnetd_path, sizeof(b.pvnetd_path));
		/* One pvnetd per mode, all started first: they sleep while another one runs. */
		for (unsigned int m = 0; m < b.nmodes; m++) {
			rc = bench_pvnetd_start(&b.pd[m], b.pvnetd_path, b.tmpdir, b.modes[m],
						&b.oldmask, b.sfd);
			if (rc == -EINTR)
				check_signal(&b);
			if (rc < 0) {
				rc = b.interrupted ? 130 : 1;
				goto out;
			}
		}
		printf("%s\n", hdr);
		sweep(&b, b.nmodes);
	}
	if (b.json_path && write_json(&b, json_incref(machine)) < 0)
		b.runs_failed++;
	if (b.interrupted)
		rc = 130;
	else if (b.never_connected && !b.runs_ok)
		rc = EXIT_NOT_CONNECTED;
	else
		rc = b.runs_failed ? 1 : 0;
	if (rc == EXIT_NOT_CONNECTED)
		fprintf(stderr, "pvnet bench: the vifs never connected\n");
out:
	for (unsigned int m = 0; m < 2; m++)
		bench_pvnetd_stop(&b.pd[m]);
	cleanup_tmp(&b);
	json_decref(machine);
	json_decref(b.results);
	close(b.sfd);
	sigprocmask(SIG_SETMASK, &b.oldmask, NULL);
	return rc;
}
