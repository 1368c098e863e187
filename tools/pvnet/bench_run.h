// SPDX-License-Identifier: MIT
/* bench_run.h - pvnet bench: the conductor's state, shared by its files (not by the frontends) */
#ifndef PVNET_TOOLS_BENCH_RUN_H
#define PVNET_TOOLS_BENCH_RUN_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>

#include "bench.h"
#include "bench_place.h"

/* Warm-up before the timed window: rings, caches and the switch's table settle. */
#define BENCH_WARMUP_S 0.2
/* Exit status when the vifs never connected: the smoke test maps it to "skipped". */
#define BENCH_EXIT_NOT_CONNECTED 3

/**
 * struct bench - one `pvnet bench` invocation: options, then state
 *
 * Options: the lists parametrise the sections (--frame-size the sizes and
 * peers sweep, --queues the vcpus sweep, --tx-mode the tx_mode section,
 * --steering the steering section) or, with --section stream, form the
 * plain cross-product sweep.  State: the pvnetd per tx mode (started once,
 * all running during the sweep), the signalfd every wait watches, the
 * results array of the JSON document.
 */
struct bench {
	/* options */
	uint32_t sizes[BENCH_MAX_LIST];
	unsigned int nsizes;
	unsigned int queues[BENCH_MAX_LIST];
	unsigned int nqueues;
	char modes[BENCH_MAX_MODES][BENCH_MODE_LEN];
	unsigned int nmodes;
	bool modes_given;
	double duration, warmup;
	unsigned int tcp_seconds, peer_seconds;
	unsigned int repeat;
	bool repeat_given; /* --repeat: every section; else each its bench_sec_info.rounds */
	const char *json_path;
	const char *plot_dir;
	const char *pvnetd_opt;
	const char *ext_run_dir;
	bool zerocopy;
	enum bench_verify verify;
	int steering[BENCH_MAX_LIST]; /* BENCH_STEER_QUEUE or policies */
	unsigned int nsteering;
	bool migrate;
	bool stream;	       /* --section stream: the plain sweep */
	bool sel[BENCH_SEC_N]; /* sections to run */
	enum bench_placement placement;
	bool placement_given;
	/* state */
	int sfd;
	sigset_t oldmask;
	bool interrupted;
	bool progress;
	unsigned int done, total; /* runs, for the progress line */
	char pvnetd_path[PATH_MAX];
	char tmpdir[64]; /* $TMPDIR/pvnet-bench.XXXXXX: short, as socket paths must be */
	int tmp_keeper;	 /* write end of the janitor's pipe (make_tmpdir()), or -1 */
	pid_t tmp_janitor;
	struct bench_pvnetd pd[BENCH_MAX_MODES]; /* pd[i] runs with --tx-mode pd_mode[i] */
	char pd_mode[BENCH_MAX_MODES][BENCH_MODE_LEN];
	unsigned int npd;
	char ext_mode[BENCH_MODE_LEN]; /* -d: the mode its status says, else -m's, else "unknown" */
	bool never_connected;
	unsigned int runs_ok, runs_failed;
	json_t *results;
	/* --placement split: the CPUs of our pvnetds and of the frontends (bench_cli.c) */
	bool split;
	cpu_set_t pd_cpus, guest_cpus;
	char pd_cpus_s[64], guest_cpus_s[64];
	/*
	 * The CPUs each run samples the host's round trip between (hostrtt.h):
	 * split, the first of pvnetd's and the first of the frontends'; spread,
	 * the first two we may use; -1 with fewer than two.
	 */
	int rtt_cpu[2];
	bool rtt_warned;
};

/**
 * bench_cli_parse() - `pvnet bench`'s command line into @b, nothing started
 * @b: filled: the options, the defaults of the kind of run (the sections or
 *	--section stream), the placement over the CPUs this process may use
 * @argc: arguments after "bench"'s own name ...
 * @argv: ... argv[0] being that name
 * @run_dir: pvnet's -d (a running pvnetd), or NULL
 *
 * Return: 0 to run; 1 after -h (the usage on stdout); -1 after a message
 * on stderr (bad or conflicting options, a --json or --plot path that
 * cannot be written)
 */
int bench_cli_parse(struct bench *b, int argc, char **argv, const char *run_dir);

/* bench.c: the conductor of one run */
double bench_now_s(void);
bool bench_check_signal(struct bench *b);
void bench_run_one(struct bench *b, struct bench_pvnetd *pd, const char *mode, unsigned int queues,
		   uint32_t size, int steering, bool migrate, struct bench_result *r);
void bench_cleanup_tmp(struct bench *b);

/* bench_section.c: the sections of the default run */
struct bench_pvnetd *bench_pd_of(struct bench *b, const char *mode);
int bench_record(struct bench *b, struct bench_result *r, bool print_row);
void bench_sections_run(struct bench *b, struct bench_section *secs);

/* bench_ext.c: what runs outside pvnet: the tcp and peers sections' scripts, gnuplot */
const char *bench_which(const char *name, char *buf, size_t len);
void bench_tcp_run(struct bench *b, struct bench_section *s);
void bench_peers_run(struct bench *b, struct bench_section *s);
void bench_plot(struct bench *b, const struct bench_section *secs);

#endif /* PVNET_TOOLS_BENCH_RUN_H */
