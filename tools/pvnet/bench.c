// SPDX-License-Identifier: MIT
/* bench.c - pvnet bench: the conductor of one run (two frontend processes through pvnetd) */
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

#include "bench_run.h"
#include "hostrtt.h"

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
 *   READY (A, B) → B: LEARN_SEND → A: LEARN_WAIT → host → B: START → A: START
 *   → warm-up → SNAP A, B, pvnetd (t0) → duration → SNAP A, B, pvnetd (t1)
 *   → A: STOP → B: SNAP until its count is still (drain) → status → B: STOP
 *   → host → EXIT (A, B) → reap
 *
 * "pvnetd" above is its `status` (netback counters of both vifs) and its
 * CPU time (its process CPU clock, else /proc/PID/stat); the frontends
 * report their getrusage().  The
 * figures are differences between t1 and t0; the accounting check
 * (unaccounted) uses the totals after draining.  "host" is a sample of
 * the cache-line round trip between pvnetd's CPU and the frontends'
 * (hostrtt.h), taken while nothing of the run moves frames: how far apart
 * the host had put those vCPUs when the run began and when it ended.
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

/* Control replies: vif set-up is bounded by the vif's 5 s timeout; sanitizers triple it. */
#define READY_TIMEOUT_MS 20000
#define CMD_TIMEOUT_MS	 5000
/* Draining after the sender stopped: still for DRAIN_STILL_MS, at most DRAIN_MAX_MS. */
#define DRAIN_STILL_MS 200
#define DRAIN_MAX_MS   3000

struct child {
	pid_t pid;
	int fd;
	struct bench_reply ready;
};

/**
 * bench_now_s() - CLOCK_MONOTONIC in seconds
 *
 * Return: the time
 */
double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CLOCK_MONOTONIC in ns, the frontends' clock for their snapshots. */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Remove the temporary directory and what pvnetd left in it. */
static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/**
 * bench_cleanup_tmp() - remove the private directory and what pvnetd left in it
 * @b: the bench
 */
void bench_cleanup_tmp(struct bench *b)
{
	if (b->tmpdir[0])
		nftw(b->tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	b->tmpdir[0] = '\0';
}

/**
 * bench_check_signal() - a pending SIGINT/SIGTERM/SIGHUP?  Then remember it.
 * @b: the bench
 *
 * Return: true once interrupted
 */
bool bench_check_signal(struct bench *b)
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
	double end = bench_now_s() + secs;

	for (;;) {
		struct pollfd pf[3] = {{.fd = b->sfd, .events = POLLIN},
				       {.fd = a ? a->fd : -1, .events = POLLIN},
				       {.fd = c ? c->fd : -1, .events = POLLIN}};
		double left = end - bench_now_s();

		if (left <= 0)
			return 0;
		if (poll(pf, 3, (int)(left * 1000) + 1) > 0) {
			if (bench_check_signal(b))
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
	double end = bench_now_s() + timeout_ms / 1000.0;

	if (cmd && send(ch->fd, cmd, sizeof(*cmd), MSG_NOSIGNAL) != (ssize_t)sizeof(*cmd)) {
		snprintf(err, errlen, "%s: process gone (%s)", who, strerror(errno));
		return -EPIPE;
	}
	for (;;) {
		struct pollfd pf[2] = {{.fd = b->sfd, .events = POLLIN},
				       {.fd = ch->fd, .events = POLLIN}};
		double left = end - bench_now_s();
		ssize_t n;

		if (left <= 0) {
			snprintf(err, errlen, "%s: no answer within %d ms", who, timeout_ms);
			return -ETIMEDOUT;
		}
		if (poll(pf, 2, (int)(left * 1000) + 1) <= 0)
			continue;
		if (bench_check_signal(b)) {
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

/*
 * Where the run's processes run, as recorded in its result: pvnetd's
 * affinity as the kernel reports it (ours or one given with -d), and the
 * frontends' as spawn() sets it.
 */
static void place(const struct bench *b, const struct bench_pvnetd *pd, bool pin,
		  struct bench_result *r)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN); /* an affinity mask holds online CPUs only */

	r->placement = bench_placement_name(pin ? BENCH_PLACE_SPLIT : BENCH_PLACE_SPREAD);
	r->pvnetd_cpus[0] = r->guest_cpus[0] = '\0';
	if (pin)
		snprintf(r->guest_cpus, sizeof(r->guest_cpus), "%s", b->guest_cpus_s);
	/* A pvnetd that may use every CPU of the machine is not pinned. */
	if (pd && pd->cpu_pid > 0 && sched_getaffinity(pd->cpu_pid, sizeof(set), &set) == 0 &&
	    CPU_COUNT(&set) < n)
		bench_cpus_format(&set, r->pvnetd_cpus, sizeof(r->pvnetd_cpus));
}

/* Fork one frontend process; it answers READY on its own. */
static int spawn(struct bench *b, const struct bench_pvnetd *pd, struct child *ch, bool sender,
		 unsigned int queues, uint32_t size, int steering, bool migrate, bool pin)
{
	struct bench_guest_cfg cfg = {
	    .run_dir = pd->run_dir,
	    .sender = sender,
	    .queues = queues,
	    .frame_size = size,
	    .verify = b->verify,
	    .zerocopy = b->zerocopy,
	    .steering = steering,
	    .migrate = migrate,
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
		/* --placement split: the frontends on their CPUs (place()). */
		if (pin && sched_setaffinity(0, sizeof(b->guest_cpus), &b->guest_cpus) < 0)
			_exit(1);
		/*
		 * exit(), not _exit(): the sanitizers' checks at exit (LeakSanitizer's,
		 * ThreadSanitizer's exit status) run in the frontends too; stdio was
		 * flushed before the fork, so nothing of ours is written twice.
		 */
		exit(bench_guest_main(&cfg));
	}
	close(sv[1]);
	ch->fd = sv[0];
	return 0;
}

/*
 * Stop a frontend: told to exit (@gently), it destroys its vif and domain
 * and exits 0; else SIGKILL.  Return: its wait status, or -1 when there was
 * none to stop or it could not be reaped.
 */
static int kill_child(struct child *ch, bool gently)
{
	struct bench_cmd c = {.op = BENCH_OP_EXIT};
	int st;

	if (ch->pid <= 0)
		return -1;
	if (gently && ch->fd >= 0)
		send(ch->fd, &c, sizeof(c), MSG_NOSIGNAL);
	else
		kill(ch->pid, SIGKILL);
	/* A gentle exit destroys the vif (bounded by its 5 s timeout). */
	st = bench_reap(ch->pid, gently ? 10000 : 1000);
	ch->pid = 0;
	if (ch->fd >= 0)
		close(ch->fd);
	ch->fd = -1;
	return st;
}

/* A frontend told to exit that did not exit 0 fails the run: its teardown went wrong. */
static void check_exit(struct bench_result *r, const char *who, int st)
{
	if (r->error[0] || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
		return;
	if (st == -1)
		snprintf(r->error, sizeof(r->error), "the %s could not be reaped", who);
	else
		snprintf(r->error, sizeof(r->error), "the %s exited badly (%s %d) after the run",
			 who, WIFSIGNALED(st) ? "signal" : "status",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

/* Drain: snapshot B until its frame count stood still for DRAIN_STILL_MS. */
static int drain(struct bench *b, struct child *B, struct bench_reply *r, char *err, size_t el)
{
	uint64_t last = UINT64_MAX;
	double still = bench_now_s(), end = still + DRAIN_MAX_MS / 1000.0;
	int rc;

	for (;;) {
		rc = cmd(b, B, "receiver", BENCH_OP_SNAP, NULL, 0, r, err, el);
		if (rc < 0)
			return rc;
		if (r->c.frames != last) {
			last = r->c.frames;
			still = bench_now_s();
		} else if (bench_now_s() - still >= DRAIN_STILL_MS / 1000.0) {
			return 0;
		}
		if (bench_now_s() > end)
			return 0; /* still trickling: the accounting will say so */
		rc = nap(b, 0.02, NULL, NULL);
		if (rc < 0)
			return rc;
	}
}

/* A sample of the host's round trip may take this long before it is given up. */
#define HOST_RTT_TIMEOUT_MS 1000u

/* Sample the host's round trip into r->host_rtt_ns[@i]; a failed sample is left 0 (unknown). */
static void host_rtt(struct bench *b, struct bench_result *r, unsigned int i)
{
	int rc;

	if (b->rtt_cpu[0] < 0)
		return;
	rc = hostrtt_sample(b->rtt_cpu[0], b->rtt_cpu[1], HOST_RTT_TIMEOUT_MS, &r->host_rtt_ns[i]);
	if (rc < 0 && !b->rtt_warned) {
		b->rtt_warned = true;
		fprintf(stderr,
			"pvnet bench: warning: no round trip between CPU %d and CPU %d: %s "
			"(host_rtt_ns stays null)\n",
			b->rtt_cpu[0], b->rtt_cpu[1], strerror(-rc));
	}
}

/* The measured part of one run; @A and @B are READY. */
static int measure(struct bench *b, struct bench_pvnetd *pd, struct child *A, struct child *B,
		   struct bench_result *r)
{
	unsigned int da = A->ready.domid, db = B->ready.domid;
	struct bench_reply ra, rb;
	int64_t cpu0, cpu1, busy0, busy1, steal0, steal1;
	bool clock0, clock1;
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
	host_rtt(b, r, 0);
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
	cpu0 = bench_pvnetd_cpu_us(pd, &clock0);
	r->pvnetd_cpu_t0_ns = mono_ns();
	bench_sys_cpu_us(&busy0, &steal0);
	t0 = bench_now_s();
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
	t1 = bench_now_s();
	cpu1 = bench_pvnetd_cpu_us(pd, &clock1);
	r->pvnetd_cpu_t1_ns = mono_ns();
	r->pvnetd_cpu_clock = clock0 && clock1;
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
	host_rtt(b, r, 1);
	if (r->error[0])
		return -EIO;
	/* A run with damaged or uncounted frames fails, but A and B stop as usual. */
	bench_run_check(r);
	return 0;
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

/**
 * bench_run_one() - one run: fork A and B, measure, stop and reap them
 * @b: the bench
 * @pd: the pvnetd to run against
 * @mode: its tx mode (as reported)
 * @queues: queues per vif
 * @size: bytes per frame
 * @steering: BENCH_STEER_QUEUE or a policy
 * @migrate: sender threads hop CPUs
 * @r: filled; r->error says why it failed
 */
void bench_run_one(struct bench *b, struct bench_pvnetd *pd, const char *mode, unsigned int queues,
		   uint32_t size, int steering, bool migrate, struct bench_result *r)
{
	struct child A = {.fd = -1}, B = {.fd = -1};
	const char *inferred;
	char why[32];
	bool pin;
	int rc;

	memset(r, 0, sizeof(*r));
	r->frame_size = size;
	r->shared_pvnetd = pd->pid == 0;
	r->queues = queues;
	r->verify = b->verify;
	r->api = b->zerocopy ? "zerocopy" : "copy";
	r->steering = steering;
	r->migrate = migrate;
	r->pvnetd_cpu_us = -1;
	r->sys_busy_us = r->sys_steal_us = -1;
	r->host_rtt_cpus[0] = b->rtt_cpu[0];
	r->host_rtt_cpus[1] = b->rtt_cpu[1];
	snprintf(r->tx_mode, sizeof(r->tx_mode), "%s", mode);
	r->tx_mode_source = !b->ext_run_dir	      ? "pvnetd --tx-mode"
			    : pd && pd->mode[0]	      ? "pvnetd status"
			    : strcmp(mode, "unknown") ? "--tx-mode"
						      : "unknown";

	if (!pd || (!b->ext_run_dir && pd->pid <= 0)) {
		snprintf(r->error, sizeof(r->error), "pvnetd --tx-mode %s is not running%s%s", mode,
			 pd && pd->failed[0] ? ": " : "", pd ? pd->failed : "");
		return;
	}
	/* Migrating senders need CPUs to hop between: they and their receiver keep ours. */
	pin = b->split && !migrate;
	place(b, pd, pin, r);
	rc = spawn(b, pd, &A, true, queues, size, steering, migrate, pin);
	if (!rc)
		rc = spawn(b, pd, &B, false, queues, size, BENCH_STEER_QUEUE, false, pin);
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
	/* A run labelled with more queues than it had would mislead every figure of it. */
	if (r->queues_got != queues) {
		snprintf(r->error, sizeof(r->error),
			 "the vifs have %u of the %u queues asked for (pvnetd --max-queues)",
			 r->queues_got, queues);
		rc = -EINVAL;
		goto out;
	}
	rc = measure(b, pd, &A, &B, r);
	inferred = mode_from_counters(r);
	if (inferred && b->ext_run_dir && !strcmp(r->tx_mode, "unknown")) {
		snprintf(r->tx_mode, sizeof(r->tx_mode), "%s", inferred);
		r->tx_mode_source = "inferred from netback counters (tx_zerocopy_sent, tx_copied)";
	} else if (inferred && strcmp(inferred, r->tx_mode) &&
		   !(!strcmp(r->tx_mode, "persistent") && !strcmp(inferred, "map"))) {
		/* persistent grants are mapped (once): netback counts them as zero-copy. */
		fprintf(stderr,
			"pvnet bench: warning: run in %s mode, but netback's counters say %s "
			"(tx_zerocopy_sent vs tx_copied)\n",
			r->tx_mode, inferred);
	}
out:
	if (rc && !r->error[0])
		snprintf(r->error, sizeof(r->error), "%s", strerror(-rc));
	if (rc == 0) {
		check_exit(r, "sender", kill_child(&A, true));
		check_exit(r, "receiver", kill_child(&B, true));
	} else {
		kill_child(&A, false);
		kill_child(&B, false);
	}
	if (bench_pvnetd_exited(pd, why, sizeof(why)))
		snprintf(r->error, sizeof(r->error), "pvnetd exited (%s) during the run", why);
}
