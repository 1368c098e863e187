// SPDX-License-Identifier: MIT
/* bench_pvnetd.c - pvnet bench: pvnetd's life, status and CPU time; the machine's description */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ctlmsg.h"
#include "bench.h"

/*
 * pvnetd is either ours (forked and exec'd, one per tx mode, in a private
 * run directory, dying with us through PR_SET_PDEATHSIG) or someone
 * else's (-d): then we only find its pid, through SO_PEERCRED on its
 * control socket, to read its CPU time.  Everything here is bounded:
 * start-up and shut-down by PVNETD_START_MS / PVNETD_STOP_MS, status
 * requests by a 5 s receive timeout on the socket.
 */

/* pvnetd creates its sockets in milliseconds; 5 s covers a loaded machine and sanitizers. */
#define PVNETD_START_MS 5000
/* pvnetd stops its workers and destroys domains on SIGTERM; after 5 s it gets SIGKILL. */
#define PVNETD_STOP_MS 5000

/**
 * bench_reap() - wait (bounded) for a child to exit, then SIGKILL it
 * @pid: the child
 * @ms: how long to wait before SIGKILL
 *
 * Return: its wait status, or -1 if it could not be reaped
 */
int bench_reap(pid_t pid, int ms)
{
	int st;

	for (int i = 0; i <= ms / 10; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	return waitpid(pid, &st, 0) == pid ? st : -1;
}

/**
 * bench_log_tail() - copy the last 4 KiB of a log to stderr
 * @path: the log
 */
void bench_log_tail(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "r");
	long pos;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	pos = ftell(f);
	fseek(f, pos > 4096 ? pos - 4096 : 0, SEEK_SET);
	fprintf(stderr, "--- end of %s ---\n", path);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

/* Connect to pvnetd's control socket, bounded by a 5 s receive timeout; report its pid. */
static int ctl_connect(const char *dir, pid_t *peer)
{
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fd = ctlmsg_connect(dir);

	if (fd < 0)
		return fd;
	(void)ctlmsg_set_timeout(fd, 5000);
	if (peer && !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen))
		*peer = cr.pid;
	return fd;
}

/**
 * bench_pvnetd_attach() - use a pvnetd someone else runs
 * @p: filled: run directory, the pid whose CPU time is read, and its tx
 *	mode as its status says it (empty when it does not: an older pvnetd)
 * @run_dir: its run directory
 *
 * Return: 0, or -errno when its control socket cannot be reached
 */
int bench_pvnetd_attach(struct bench_pvnetd *p, const char *run_dir)
{
	json_t *req = json_pack("{s:s, s:b}", "op", "status", "vifs", false), *reply = NULL;
	char mode[1][BENCH_MODE_LEN], err[96];
	const char *s;
	int fd;

	memset(p, 0, sizeof(*p));
	snprintf(p->run_dir, sizeof(p->run_dir), "%s", run_dir);
	fd = ctl_connect(run_dir, &p->cpu_pid);
	if (fd < 0) {
		json_decref(req);
		return fd;
	}
	if (req && ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL) == 0) {
		s = json_string_value(json_object_get(reply, "tx_mode"));
		if (s && bench_parse_modes(s, mode, 1, err, sizeof(err)) == 1)
			memcpy(p->mode, mode[0], sizeof(p->mode));
	}
	json_decref(reply);
	json_decref(req);
	close(fd);
	return 0;
}

/**
 * bench_pvnetd_counters() - netback's counters of a run's two vifs
 * @p: the pvnetd
 * @domid_a: the sender's domain
 * @domid_b: the receiver's domain
 * @out: filled (out->ok false when the vifs are not in the status)
 *
 * Return: 0 or -errno
 */
int bench_pvnetd_counters(const struct bench_pvnetd *p, unsigned int domid_a, unsigned int domid_b,
			  struct bench_back *out)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *reply = NULL;
	int fd = ctl_connect(p->run_dir, NULL), rc;
	struct timespec t0, t1;

	memset(out, 0, sizeof(*out));
	if (fd < 0) {
		json_decref(req);
		return fd;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	json_decref(req);
	if (rc == 0) {
		uint64_t a = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
		uint64_t z = (uint64_t)t1.tv_sec * 1000000000u + (uint64_t)t1.tv_nsec;

		bench_back_from_status(reply, domid_a, domid_b, out);
		out->t_ns = a + (z - a) / 2;
	}
	json_decref(reply);
	return rc;
}

/**
 * bench_pvnetd_cpu_us() - pvnetd's CPU time (user + system, all threads) so far
 * @p: the pvnetd
 * @clock: set when it came from the process's CPU clock
 *
 * From pvnetd's process CPU clock (clock_getcpuclockid(): every thread's
 * run time, to the ns), else from /proc/PID/stat, in clock ticks (10 ms
 * where USER_HZ is 100, user and system time each rounded down).
 *
 * Return: µs, or -1 when unknown
 */
int64_t bench_pvnetd_cpu_us(const struct bench_pvnetd *p, bool *clock)
{
	char path[64], text[1024];
	struct timespec ts;
	uint64_t ticks;
	clockid_t cid;
	ssize_t n;
	int fd;

	*clock = false;
	if (p->cpu_pid <= 0)
		return -1;
	if (clock_getcpuclockid(p->cpu_pid, &cid) == 0 && clock_gettime(cid, &ts) == 0) {
		*clock = true;
		return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->cpu_pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	if (bench_procstat_ticks(text, &ticks) < 0)
		return -1;
	return (int64_t)(ticks * 1000000u / (uint64_t)sysconf(_SC_CLK_TCK));
}

/**
 * bench_sys_cpu_us() - busy and stolen CPU time of the whole machine so far (/proc/stat)
 * @busy: receives µs busy, summed over CPUs, or -1
 * @steal: receives µs stolen by the hypervisor, or -1
 *
 * Return: 0 or -errno
 */
int bench_sys_cpu_us(int64_t *busy, int64_t *steal)
{
	uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK), b, s;
	char text[256];
	ssize_t n;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);

	*busy = *steal = -1;
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1); /* the first line is all we need */
	close(fd);
	if (n <= 0)
		return -EIO;
	text[n] = '\0';
	if (bench_procstat_cpu(text, &b, &s) < 0)
		return -EINVAL;
	*busy = (int64_t)(b * 1000000u / hz);
	*steal = (int64_t)(s * 1000000u / hz);
	return 0;
}

/**
 * bench_pvnetd_find() - which pvnetd to start
 * @opt: --pvnetd, or NULL
 * @path: receives @opt, else ../pvnetd/pvnetd next to this executable (the
 *	build tree) if it is there, else ../sbin/pvnetd (an installed tree:
 *	pvnet in PREFIX/bin, pvnetd in PREFIX/sbin, which a user's PATH may
 *	lack), else "pvnetd" (searched in PATH)
 * @len: size of @path
 */
void bench_pvnetd_find(const char *opt, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;

	if (opt) {
		snprintf(path, len, "%s", opt);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			if ((size_t)snprintf(path, len, "%s/../pvnetd/pvnetd", self) < len &&
			    access(path, X_OK) == 0)
				return;
			if ((size_t)snprintf(path, len, "%s/../sbin/pvnetd", self) < len &&
			    access(path, X_OK) == 0)
				return;
		}
	}
	snprintf(path, len, "pvnetd");
}

/**
 * bench_pvnetd_stop() - SIGTERM our pvnetd, SIGKILL after PVNETD_STOP_MS; reap it
 * @p: the pvnetd; nothing happens unless we started it
 *
 * An unclean exit is reported with the end of its log.
 *
 * Return: 0, or -1 if it did not exit 0 (or could not be reaped)
 */
int bench_pvnetd_stop(struct bench_pvnetd *p)
{
	int st;

	if (p->pid <= 0)
		return 0;
	kill(p->pid, SIGTERM);
	st = bench_reap(p->pid, PVNETD_STOP_MS);
	if (st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		fprintf(stderr, "pvnet bench: pvnetd did not stop cleanly (%s %d)\n",
			WIFSIGNALED(st) ? "signal" : "status",
			WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		bench_log_tail(p->log_path);
	}
	p->pid = 0;
	p->cpu_pid = 0;
	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/**
 * bench_pvnetd_exited() - has our pvnetd died?  Reap it if so.
 * @p: the pvnetd
 * @why: receives "signal N" or "status N"
 * @len: size of @why
 *
 * Return: true if it exited (its log tail is printed)
 */
bool bench_pvnetd_exited(struct bench_pvnetd *p, char *why, size_t len)
{
	int st;

	if (p->pid <= 0 || waitpid(p->pid, &st, WNOHANG) != p->pid)
		return false;
	snprintf(why, len, "%s %d", WIFSIGNALED(st) ? "signal" : "status",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	bench_log_tail(p->log_path);
	p->pid = 0;
	p->cpu_pid = 0;
	return true;
}

/* The last non-empty line of a log, without its newline ("" when there is none). */
static void log_last_line(const char *path, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	snprintf(out, len, "(no log)");
	while (f && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		if (!n)
			continue;
		/* Cut to fit: the sentence's start says what went wrong. */
		if (n >= len)
			n = len - 1;
		memcpy(out, line, n);
		out[n] = '\0';
	}
	if (f)
		fclose(f);
}

/**
 * bench_pvnetd_start() - start pvnetd in TMPDIR/run-MODE and wait for its control socket
 * @p: filled
 * @exe: the pvnetd to run (a path, or a name searched in PATH)
 * @tmpdir: the bench's private directory (run directory and log go there)
 * @mode: "copy", "map" or "persistent" (pvnetd --tx-mode)
 * @cpus: the CPUs pvnetd may run on (--placement split), or NULL for any
 * @child_mask: the signal mask pvnetd starts with (ours blocks SIGINT/SIGTERM)
 * @sfd: our signalfd: start-up is abandoned when it becomes readable
 *
 * A pvnetd that exits at start-up (e.g. one that rejects --tx-mode persistent)
 * is not an error of the bench: @p->failed says why, with its log's last line,
 * and the caller decides.
 *
 * Return: 0; -EINTR (signal); -ENOEXEC (pvnetd could not be run, pinned or
 *	executed); -ECHILD (pvnetd exited); -ETIMEDOUT; -errno
 */
int bench_pvnetd_start(struct bench_pvnetd *p, const char *exe, const char *tmpdir,
		       const char *mode, const cpu_set_t *cpus, const sigset_t *child_mask, int sfd)
{
	char sock[PATH_MAX + 16], maxq[16];
	pid_t parent = getpid();
	int st;

	memset(p, 0, sizeof(*p));
	snprintf(p->mode, sizeof(p->mode), "%s", mode);
	snprintf(p->run_dir, sizeof(p->run_dir), "%s/run-%s", tmpdir, mode);
	snprintf(p->log_path, sizeof(p->log_path), "%s/pvnetd-%s.log", tmpdir, mode);
	snprintf(sock, sizeof(sock), "%s/pvnetd.sock", p->run_dir);
	/* Every queue count --queues takes (pvnetd's default is 8). */
	snprintf(maxq, sizeof(maxq), "%u", BENCH_MAX_FLOWS);
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		int fd = open(p->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		/* SIGTERM, not SIGKILL: pvnetd shuts down cleanly if we die. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent || fd < 0 || nul < 0)
			_exit(126);
		sigprocmask(SIG_SETMASK, child_mask, NULL);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close_range(3, ~0u, 0);
		/* --placement split: pvnetd and every thread it starts on its own CPUs. */
		if (cpus && sched_setaffinity(0, sizeof(*cpus), cpus) < 0) {
			fprintf(stderr, "cannot pin pvnetd to its CPUs: %s\n", strerror(errno));
			_exit(125);
		}
		execlp(exe, "pvnetd", "--run-dir", p->run_dir, "--tx-mode", mode, "--max-queues",
		       maxq, "--log-level", "warn", (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	for (int i = 0; i < PVNETD_START_MS / 10; i++) {
		struct pollfd pf = {.fd = sfd, .events = POLLIN};

		if (access(sock, F_OK) == 0) {
			p->cpu_pid = p->pid;
			return 0;
		}
		if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
			char last[160];

			p->pid = 0;
			log_last_line(p->log_path, last, sizeof(last));
			snprintf(p->failed, sizeof(p->failed),
				 "%s --tx-mode %s exited at start-up: %s", exe, mode, last);
			/* 125..127: never ran (not pinned, not executed): no mode would. */
			return WIFEXITED(st) && WEXITSTATUS(st) >= 125 ? -ENOEXEC : -ECHILD;
		}
		if (poll(&pf, 1, 10) > 0) {
			bench_pvnetd_stop(p);
			return -EINTR;
		}
	}
	snprintf(p->failed, sizeof(p->failed), "%s did not create its control socket within %d ms",
		 exe, PVNETD_START_MS);
	fprintf(stderr, "pvnet bench: %s\n", p->failed);
	bench_log_tail(p->log_path);
	bench_pvnetd_stop(p);
	return -ETIMEDOUT;
}

/**
 * bench_machine_json() - the machine the figures come from
 *
 * Return: {"cpu": model name, "cores": online CPUs, "kernel": release,
 * "machine": architecture}, or NULL
 */
json_t *bench_machine_json(void)
{
	char line[512], model[256] = "unknown";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(model, sizeof(model), "%s", c + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	return json_pack("{s:s, s:i, s:s, s:s}", "cpu", model, "cores",
			 (int)sysconf(_SC_NPROCESSORS_ONLN), "kernel", u.release, "machine",
			 u.machine);
}

/**
 * bench_command_line() - this process's argv joined by spaces (/proc/self/cmdline)
 * @buf: receives it, NUL terminated (truncated to fit)
 * @len: size of @buf
 */
void bench_command_line(char *buf, size_t len)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "pvnet bench");
		return;
	}
	buf[n] = '\0';
	for (ssize_t i = 0; i < n - 1; i++)
		if (!buf[i])
			buf[i] = ' ';
}
