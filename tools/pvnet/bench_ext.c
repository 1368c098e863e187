// SPDX-License-Identifier: MIT
/* bench_ext.c - pvnet bench: what runs outside pvnet: the tcp and peers scripts, gnuplot */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_run.h"

/*
 * Theory of Operation
 *
 * The tcp and peers sections measure through programs pvnet does not own:
 * iperf3 over network namespaces (bench/tcp-vs-veth.sh, bench/veth-peer.sh)
 * and DPDK's dpdk-testpmd (bench/memif-peer.sh).  The scripts own their
 * namespaces and processes and remove them in an EXIT trap, which runs on
 * SIGTERM too.  The conductor starts each script in a process group of its
 * own (so a terminal's Ctrl-C reaches the conductor, not the script), with
 * PR_SET_PDEATHSIG, bounded by a timeout; on a signal or the timeout the
 * group gets SIGTERM (the trap cleans up), then SIGKILL after
 * EXT_STOP_MS.  Their results come back as JSON (memif, veth) or
 * tab-separated lines (tcp).  gnuplot draws --plot's charts the same way.
 *
 * Where the scripts are: PVNET_SOURCE_DIR/bench (the source tree this
 * pvnet was built from, set by meson).
 */

#ifndef PVNET_SOURCE_DIR
#define PVNET_SOURCE_DIR "."
#endif
/* A script given SIGTERM removes its namespaces and stops its processes within seconds. */
#define EXT_STOP_MS 15000

/* snprintf() for messages that may be cut short (and may be: they are sentences). */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/**
 * bench_which() - find a program in PATH
 * @name: the program
 * @buf: receives its path
 * @len: size of @buf
 *
 * Return: @buf, or NULL when it is not there
 */
const char *bench_which(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096], *save = NULL;

	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save))
		if ((size_t)snprintf(buf, len, "%s/%s", d, name) < len && access(buf, X_OK) == 0)
			return buf;
	return NULL;
}

static bool script_path(const char *name, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "%s/bench/%s", PVNET_SOURCE_DIR, name) < len &&
	       access(buf, R_OK) == 0;
}

/* Has @pid exited?  Without reaping it: while the zombie holds its pid, its process
 * group id cannot be reused, so kill(-pid) reaches only the script's stragglers. */
static bool exited(pid_t pid)
{
	siginfo_t si = {0};

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* Kill what is left of the group, then reap the leader; its wait status. */
static int reap_group(pid_t pid)
{
	int st = -1;

	kill(-pid, SIGKILL); /* stragglers that outlived their script */
	waitpid(pid, &st, 0);
	return st;
}

/* Stop a process group: SIGTERM, then SIGKILL after EXT_STOP_MS; reap its leader. */
static void stop_group(pid_t pid)
{
	kill(-pid, SIGTERM);
	for (int i = 0; i < EXT_STOP_MS / 10 && !exited(pid); i++)
		usleep(10000);
	reap_group(pid);
}

/*
 * Run @argv with stdout to @out and stderr to @errf (appended), in its own process
 * group, with @env ("NAME=value" strings, NULL-terminated, or NULL) added.
 * Return: its exit status, 128 + signal, -EINTR (we were signalled), -ETIMEDOUT, -errno.
 */
static int run_ext(struct bench *b, char *const argv[], char *const env[], const char *out,
		   const char *errf, double timeout_s)
{
	double end = bench_now_s() + timeout_s;
	pid_t parent = getpid(), pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(errf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent || o < 0 || e < 0 || nul < 0)
			_exit(126);
		sigprocmask(SIG_SETMASK, &b->oldmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		dup2(nul, 0);
		dup2(o, 1);
		dup2(e, 2);
		close_range(3, ~0u, 0);
		for (unsigned int i = 0; env && env[i]; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no window in which a signal misses the group */
	for (;;) {
		struct pollfd pf = {.fd = b->sfd, .events = POLLIN};

		if (exited(pid)) {
			st = reap_group(pid);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		if (poll(&pf, 1, 100) > 0 && bench_check_signal(b)) {
			stop_group(pid);
			return -EINTR;
		}
		if (bench_now_s() > end) {
			stop_group(pid);
			return -ETIMEDOUT;
		}
	}
}

/* The first non-empty line of a file (the scripts say what failed first, then logs). */
static void first_line(const char *path, char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	say(buf, len, "no message");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0]) {
			say(buf, len, "%s", line);
			break;
		}
	}
	if (f)
		fclose(f);
}

static void ext_failed(char *note, size_t len, const char *what, int rc, const char *errf)
{
	char last[256];

	first_line(errf, last, sizeof(last));
	if (rc == -ETIMEDOUT)
		snprintf(note, len, "%s did not finish in time and was stopped", what);
	else if (rc < 0)
		snprintf(note, len, "%s: %s", what, strerror(-rc));
	else
		say(note, len, "%s exited with %d: %s", what, rc, last);
}

/**
 * bench_tcp_run() - the tcp section: bench/tcp-vs-veth.sh, iperf3 through pvnet, tapfwd, veth
 * @b: the bench (tcp_seconds per case; pvnetd in map mode, or -m's first mode)
 * @s: filled: its cases, or why it was skipped or failed (s->note)
 */
void bench_tcp_run(struct bench *b, struct bench_section *s)
{
	char script[PATH_MAX], self[PATH_MAX], pvnetd[PATH_MAX], secs[16], tool[PATH_MAX];
	char out[PATH_MAX], errf[PATH_MAX], envp[4][PATH_MAX + 16], line[512];
	char *env[5] = {envp[0], envp[1], envp[2], envp[3], NULL};
	const char *mode = "map";
	bool failed_case = false;
	ssize_t n;
	FILE *f;
	int rc;

	/* First what the command line rules out, which no host could change. */
	if (b->ext_run_dir) {
		snprintf(s->skipped, sizeof(s->skipped),
			 "with -d: the tcp section starts a pvnetd of its own; run without -d");
		return;
	}
	if (geteuid() != 0) {
		snprintf(s->skipped, sizeof(s->skipped),
			 "not root: network namespaces and pvnet attach need root");
		return;
	}
	for (const char *const *t = (const char *const[]){"iperf3", "ip", "jq", NULL}; *t; t++)
		if (!bench_which(*t, tool, sizeof(tool))) {
			snprintf(s->skipped, sizeof(s->skipped), "%s is not installed (Debian: %s)",
				 *t, !strcmp(*t, "ip") ? "iproute2" : *t);
			return;
		}
	if (!script_path("tcp-vs-veth.sh", script, sizeof(script))) {
		say(s->skipped, sizeof(s->skipped), "%s not found", script);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(s->skipped, sizeof(s->skipped), "cannot find this pvnet (/proc/self/exe)");
		return;
	}
	self[n] = '\0';
	if (!strchr(b->pvnetd_path, '/') && bench_which(b->pvnetd_path, pvnetd, sizeof(pvnetd)))
		;
	else if (!realpath(b->pvnetd_path, pvnetd))
		snprintf(pvnetd, sizeof(pvnetd), "%s", b->pvnetd_path);
	snprintf(envp[0], sizeof(envp[0]), "PVNETD=%s", pvnetd);
	snprintf(envp[1], sizeof(envp[1]), "PVNET=%s", self);
	/* One round of the five cases, whatever the caller's environment says. */
	snprintf(envp[2], sizeof(envp[2]), "ROUNDS=1");
	/* The TAP forwarder of this build (the script skips its case when it is missing). */
	snprintf(envp[3], sizeof(envp[3]), "TAPFWD=%s", PVNET_TAPFWD);
	snprintf(secs, sizeof(secs), "%u", b->tcp_seconds);
	snprintf(out, sizeof(out), "%s/tcp.out", b->tmpdir);
	snprintf(errf, sizeof(errf), "%s/tcp.err", b->tmpdir);
	if (b->progress)
		fprintf(stderr, "tcp: iperf3 through pvnet, tapfwd and veth, 5 cases of %u s ...\n",
			b->tcp_seconds);
	{
		char *argv[] = {"bash", script, "-", secs, (char *)mode, NULL};

		/* 5 cases of tcp_seconds, three set-ups (each bounded at about 20 s). */
		rc = run_ext(b, argv, env, out, errf, 5.0 * (b->tcp_seconds + 20) + 60);
	}
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f) && s->ntcp < BENCH_MAX_TCP) {
		line[strcspn(line, "\n")] = '\0';
		if (!bench_tcp_parse_line(line, &s->tcp[s->ntcp]))
			s->ntcp++;
		else if (!strncmp(line, "# namespaces: ", 14))
			say(s->netns, sizeof(s->netns), "%s", line + 14);
		else if (!strncmp(line, "# placement: ", 13))
			say(s->placement, sizeof(s->placement), "%s", line + 13);
		else if (!strncmp(line, "# queues negotiated", 19))
			/* Added to the note: the failed cases' lines come before it. */
			say(s->note + strlen(s->note), sizeof(s->note) - strlen(s->note),
			    "%spvnet attach, %s (4-stream case)", s->note[0] ? "; " : "", line + 2);
		else if (!strncmp(line, "# ", 2) && strstr(line, " failed: ")) {
			/* A case iperf3 could not run: said, and a failure of the bench. */
			say(s->note + strlen(s->note), sizeof(s->note) - strlen(s->note), "%s%s",
			    s->note[0] ? "; " : "", line + 2);
			failed_case = true;
		}
	}
	if (f)
		fclose(f);
	if (rc == -EINTR)
		return;
	if (rc != 0 && !failed_case)
		ext_failed(s->note, sizeof(s->note), "bench/tcp-vs-veth.sh", rc, errf);
	if (rc != 0 || failed_case)
		b->runs_failed++;
}

/* A peer script's JSON {"results": [{frame_size, mpps, gbit_s}]} into the rows. */
static int read_peer_json(const char *path, struct bench_section *s, bool memif)
{
	json_error_t je;
	json_t *doc = json_load_file(path, 0, &je), *r;
	size_t i;
	int got = 0;

	json_array_foreach(json_object_get(doc, "results"), i, r)
	{
		uint32_t size = (uint32_t)json_integer_value(json_object_get(r, "frame_size"));
		double g = json_number_value(json_object_get(r, "gbit_s"));
		double m = json_number_value(json_object_get(r, "mpps"));

		for (unsigned int k = 0; k < s->npeers; k++) {
			if (s->peers[k].frame_size != size)
				continue;
			if (memif) {
				s->peers[k].memif_gbit_s = g;
				s->peers[k].memif_mpps = m;
			} else {
				s->peers[k].veth_gbit_s = g;
				s->peers[k].veth_mpps = m;
			}
			got++;
		}
	}
	json_decref(doc);
	return got;
}

/* One peer script over the frame sizes; a sentence into @why when it was not measured. */
static bool run_peer(struct bench *b, struct bench_section *s, bool memif, char *why, size_t wl)
{
	const char *name = memif ? "memif-peer.sh" : "veth-peer.sh";
	char script[PATH_MAX], sizes[512] = "", secs[16], out[PATH_MAX], json[PATH_MAX];
	char errf[PATH_MAX], tool[PATH_MAX];
	int rc;

	if (memif && !bench_which("dpdk-testpmd", tool, sizeof(tool))) {
		snprintf(why, wl, "memif: dpdk-testpmd is not installed (Debian: dpdk-dev)");
		return false;
	}
	if (!memif && geteuid() != 0) {
		snprintf(why, wl, "veth: not root (network namespaces need root)");
		return false;
	}
	if (!memif && !bench_which("iperf3", tool, sizeof(tool))) {
		snprintf(why, wl, "veth: iperf3 is not installed (Debian: iperf3)");
		return false;
	}
	if (!script_path(name, script, sizeof(script))) {
		say(why, wl, "%s not found", script);
		return false;
	}
	for (unsigned int i = 0; i < b->nsizes; i++)
		snprintf(sizes + strlen(sizes), sizeof(sizes) - strlen(sizes), "%s%u", i ? "," : "",
			 b->sizes[i]);
	snprintf(secs, sizeof(secs), "%u", b->peer_seconds);
	snprintf(out, sizeof(out), "%s/%s.out", b->tmpdir, name);
	snprintf(json, sizeof(json), "%s/%s.json", b->tmpdir, name);
	snprintf(errf, sizeof(errf), "%s/%s.err", b->tmpdir, name);
	if (b->progress)
		fprintf(stderr, "peers: %s, %u frame sizes of %u s ...\n", name, b->nsizes,
			b->peer_seconds);
	{
		char *argv[] = {"bash", script,	  "--frame-size", sizes, "--duration",
				secs,	"--json", json,		  NULL};

		/* Per size: the server up (10 s at most), the link (20 s), the duration. */
		rc = run_ext(b, argv, NULL, out, errf, b->nsizes * (b->peer_seconds + 35.0) + 30);
	}
	if (rc == -EINTR)
		return false;
	if (rc == 77) {
		first_line(errf, why, wl);
		return false;
	}
	if (read_peer_json(json, s, memif) > 0) {
		if (rc)
			ext_failed(why, wl, name, rc, errf);
		return true;
	}
	ext_failed(why, wl, name, rc, errf);
	return false;
}

/**
 * bench_peers_run() - the peers section's peers: memif and veth at --frame-size's sizes
 * @b: the bench
 * @s: its rows are filled (NaN where a peer was not measured); skipped when no peer
 *	could be measured, with the reasons
 */
void bench_peers_run(struct bench *b, struct bench_section *s)
{
	char why_m[256] = "", why_v[256] = "";
	bool m, v;

	s->npeers = b->nsizes;
	for (unsigned int i = 0; i < b->nsizes; i++)
		s->peers[i] = (struct bench_peer_row){.frame_size = b->sizes[i],
						      .memif_gbit_s = NAN,
						      .memif_mpps = NAN,
						      .veth_gbit_s = NAN,
						      .veth_mpps = NAN};
	m = run_peer(b, s, true, why_m, sizeof(why_m));
	v = !b->interrupted && run_peer(b, s, false, why_v, sizeof(why_v));
	if (!m && !v && !b->interrupted)
		say(s->skipped, sizeof(s->skipped), "%s; %s", why_m, why_v);
	else if (why_m[0] || why_v[0])
		say(s->note, sizeof(s->note), "%s%s%s", why_m, why_m[0] && why_v[0] ? "; " : "",
		    why_v);
}

static double pmed(const struct bench_point *p, enum bench_fig f, double *lo, double *hi)
{
	struct bench_stat s;

	bench_point_stat(p, f, &s);
	*lo = s.min;
	*hi = s.max;
	return s.median;
}

/* One chart: write DIR/NAME.dat through @data, DIR/NAME.gp from @gp, run gnuplot. */
static int chart(struct bench *b, const char *name, const struct bench_section *s,
		 void (*data)(FILE *f, const struct bench_section *s), const char *gp)
{
	char dat[PATH_MAX], script[PATH_MAX], png[PATH_MAX], log[PATH_MAX], gnuplot[PATH_MAX];
	FILE *f;
	int rc;

	snprintf(dat, sizeof(dat), "%s/%s.dat", b->plot_dir, name);
	snprintf(script, sizeof(script), "%s/%s.gp", b->plot_dir, name);
	snprintf(png, sizeof(png), "%s/%s.png", b->plot_dir, name);
	snprintf(log, sizeof(log), "%s/gnuplot.log", b->plot_dir);
	f = fopen(dat, "w");
	if (!f)
		return -errno;
	data(f, s);
	fclose(f);
	f = fopen(script, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"set terminal pngcairo size 900,560 noenhanced\nset output '%s'\n"
		"set grid\nset key top left\n",
		png);
	fprintf(f, "data = '%s'\n", dat);
	fputs(gp, f);
	fclose(f);
	bench_which("gnuplot", gnuplot, sizeof(gnuplot));
	{
		char *argv[] = {gnuplot, script, NULL};

		rc = run_ext(b, argv, NULL, log, log, 30);
	}
	if (rc)
		fprintf(stderr, "pvnet bench: gnuplot %s failed (%d), see %s\n", script, rc, log);
	else
		printf("  chart: %s\n", png);
	return rc;
}

static void data_sizes(FILE *f, const struct bench_section *s)
{
	fprintf(f, "# frame gbit_s min max cpu_us_per_kb field_gbit_s\n");
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];
		double lo, hi, g = pmed(p, BENCH_FIG_GBIT_S, &lo, &hi), l2, h2;

		fprintf(f, "%u %g %g %g %g %g\n", p->frame_size, g, lo, hi,
			pmed(p, BENCH_FIG_CPU_US_PER_KB, &l2, &h2),
			isfinite(p->field) ? p->field * 1024 * 8 / 1e9 : NAN);
	}
}

static void data_vcpus(FILE *f, const struct bench_section *s)
{
	fprintf(f, "# queues ratio gbit_s min max\n");
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];
		double lo, hi, g = pmed(p, BENCH_FIG_GBIT_S, &lo, &hi);

		fprintf(f, "%u %g %g %g %g\n", p->queues, p->ratio, g, lo, hi);
	}
}

static void data_tx_mode(FILE *f, const struct bench_section *s)
{
	fprintf(f, "# label gbit_s min max\n");
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];
		double lo, hi, g = pmed(p, BENCH_FIG_GBIT_S, &lo, &hi);

		fprintf(f, "\"%u B %s\" %g %g %g\n", p->frame_size, p->tx_mode, g, lo, hi);
	}
}

static void data_peers(FILE *f, const struct bench_section *s)
{
	fprintf(f, "# frame pvnet_gbit_s memif_gbit_s veth_gbit_s\n");
	for (unsigned int i = 0; i < s->npeers; i++) {
		const struct bench_peer_row *r = &s->peers[i];
		double g = NAN, lo, hi;

		for (unsigned int k = 0; k < s->npts; k++)
			if (s->pts[k].frame_size == r->frame_size)
				g = pmed(&s->pts[k], BENCH_FIG_GBIT_S, &lo, &hi);
		fprintf(f, "%u %g %g %g\n", r->frame_size, g, r->memif_gbit_s, r->veth_gbit_s);
	}
}

/**
 * bench_plot() - --plot DIR: PNG charts of the sweeps (sizes, vcpus, tx_mode, peers)
 * @b: the bench
 * @secs: the sections, run
 *
 * gnuplot (Debian: gnuplot-nox) draws them; without it a sentence says so and
 * nothing is written.  Each chart's data (.dat) and script (.gp) stay beside it.
 */
void bench_plot(struct bench *b, const struct bench_section *secs)
{
	char tool[PATH_MAX];
	const struct bench_section *s;

	if (!bench_which("gnuplot", tool, sizeof(tool))) {
		fprintf(stderr,
			"pvnet bench: --plot: gnuplot is not installed (Debian: gnuplot-nox); "
			"no charts written\n");
		return;
	}
	if (mkdir(b->plot_dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "pvnet bench: --plot: mkdir %s: %s\n", b->plot_dir,
			strerror(errno));
		return;
	}
	s = &secs[BENCH_SEC_SIZES];
	if (s->selected && !s->skipped[0] && s->npts)
		chart(b, "sizes", s, data_sizes,
		      "set title 'pvnet bench: frame-size sweep, 1 queue'\n"
		      "set logscale x 2\nset xlabel 'frame size (bytes)'\n"
		      "set ylabel 'Gbit/s received'\nset y2label 'CPU us per KB'\n"
		      "set ytics nomirror\nset y2tics\nset logscale y2\n"
		      "plot data using 1:2:3:4 with yerrorlines title 'pvnet Gbit/s (median, "
		      "min-max)', data using 1:6 with points pt 7 title 'field report: netio, "
		      "xennet 1 vCPU (Gbit/s)', data using 1:5 axes x1y2 with linespoints "
		      "title 'CPU us/KB'\n");
	s = &secs[BENCH_SEC_VCPUS];
	if (s->selected && !s->skipped[0] && s->npts)
		chart(b, "vcpus", s, data_vcpus,
		      "set title 'pvnet bench: vCPU (queue) sweep, 1514 B'\n"
		      "set xlabel 'queues = sender threads'\nset ylabel 'Gbit/s / Gbit/s of 1 "
		      "queue'\nset yrange [0:*]\nset xtics (1,2,4,8,16)\n"
		      "plot data using 1:2 with linespoints lw 2 title 'pvnet', 0.114 with lines "
		      "dt 2 title 'field report: xennet 1 -> 4 vCPUs (0.11x)', 1 with lines "
		      "dt 3 notitle\n");
	s = &secs[BENCH_SEC_TX_MODE];
	if (s->selected && !s->skipped[0] && s->npts)
		chart(b, "tx_mode", s, data_tx_mode,
		      "set title 'pvnet bench: netback TX mode'\nset style fill solid 0.6\n"
		      "set boxwidth 0.6\nset ylabel 'Gbit/s received'\nset yrange [0:*]\n"
		      "set xtics rotate by -20\n"
		      "plot data using 0:2:xtic(1) with boxes title 'median', data using "
		      "0:2:3:4 with yerrorbars lc black title 'min-max'\n");
	s = &secs[BENCH_SEC_PEERS];
	if (s->selected && !s->skipped[0] && s->npeers)
		chart(b, "peers", s, data_peers,
		      "set title 'pvnet bench: pvnet and its peers'\nset logscale x 2\n"
		      "set xlabel 'frame size (bytes)'\nset ylabel 'Gbit/s received'\n"
		      "plot data using 1:2 with linespoints lw 2 title 'pvnet', data using 1:3 "
		      "with linespoints title 'DPDK memif (testpmd)', data using 1:4 with "
		      "linespoints title 'veth (iperf3 UDP)'\n");
}
