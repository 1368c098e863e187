// SPDX-License-Identifier: MIT
/* bench_cli.c - pvnet bench: options, the pvnetds of a sweep, the plain sweep and the document */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "bench_run.h"
#include "cliarg.h"

/*
 * `pvnet bench` runs either the sections of the default run (sizes,
 * vcpus, tx_mode, steering, tcp; peers with --peers; bench_section.c) or,
 * with --section stream, the plain sweep of --frame-size x --queues x
 * --tx-mode x --steering that earlier versions ran by default (one table
 * row per run).  Both write one JSON document: machine, command, results
 * (every run), and sections (section mode only).
 */

/* Defaults of the sections (docs/benchmarks.md says why each). */
static const uint32_t sec_sizes[] = {64, 1024, 2048, 4096, 8192, 16384, 32768, 65535};
static const unsigned int sec_queues[] = {1, 2, 4, 8};
static const char *const sec_modes[] = {"copy", "map", "persistent"};
static const int sec_steering[] = {BENCH_STEER_HASH, BENCH_STEER_XPS, BENCH_STEER_XPS_SAFE};
/* Defaults of --section stream (as before the sections existed). */
static const uint32_t stream_sizes[] = {64, 1514, 9000, 65535};
/* Timed window per run: 1 s keeps the default run near a minute on 2 CPUs; stream: 2 s. */
#define SECTION_DURATION_S 1.0
#define STREAM_DURATION_S  2.0
/* iperf3 seconds per tcp case (5 cases) and per peer frame size (memif needs >= 3). */
#define TCP_SECONDS  2u
#define PEER_SECONDS 3u

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: pvnet bench [OPTIONS]\n"
	    "The main job: the field reports' experiments (docs/field-reports.md), each\n"
	    "with pvnet's answer and a one-line verdict, about 80 s on 2 CPUs.  Frames\n"
	    "stream from one frontend domain (A) to another (B) through a pvnetd the bench\n"
	    "starts itself.\n"
	    "\n"
	    "Sections (--section LIST; default sizes,vcpus,tx_mode,steering,tcp):\n"
	    "  sizes     frame sizes 64 B..64 KiB: Tx/Rx KByte/s, Gbit/s, Mpps, CPU us/KB\n"
	    "  vcpus     1,2,4,8 queues, a sender and a receiver thread each: collapse ratio\n"
	    "  tx_mode   copy vs map (vs persistent, if pvnetd takes it) at 1514 and 65535 B\n"
	    "  steering  hash, xps, xps-safe with migrating senders: out-of-order frames\n"
	    "  tcp       iperf3 through pvnet attach vs a veth pair (root and iperf3)\n"
	    "  peers     DPDK memif and kernel veth at the sizes' frame sizes (or --peers)\n"
	    "  stream    instead of sections: one run per frame size x queues x tx mode x\n"
	    "            steering, a table row each (defaults 64,1514,9000,65535; 1; copy,map).\n"
	    "            Without --section, any of -s, -q, -m, --steering, --migrate selects\n"
	    "            it, as before the sections; with --section they set the sections' lists\n"
	    "\n"
	    "  -S, --section LIST    sections to run (above; 'all' = the default five)\n"
	    "  -s, --frame-size LIST bytes per frame, 60..65535, of sizes and peers (65535 is\n"
	    "                        the 64 KiB frame: netif sizes are 16 bits)\n"
	    "  -q, --queues LIST     queue counts of vcpus (default 1,2,4,8)\n"
	    "  -m, --tx-mode LIST    copy,map,persistent: modes of tx_mode (pvnetd --tx-mode)\n"
	    "      --steering LIST   hash,xps,xps-safe: policies of steering (stream: default\n"
	    "                        queue, a sender thread per queue on its own queue)\n"
	    "  -t, --duration SECS   timed window per run (default %.0f; stream %.0f)\n"
	    "      --warmup SECS     warm-up before each window (default %.1f)\n"
	    "  -r, --repeat N        run every point N times, rounds interleaved; tables\n"
	    "                        and JSON give the median and min-max (1..%u; default\n"
	    "                        1, and %u for vcpus and tx_mode, whose verdicts\n"
	    "                        compare their points)\n"
	    "      --tcp-duration S  iperf3 seconds per tcp case (1..10, default %u)\n"
	    "      --peers           add the peers section\n"
	    "      --peer-duration S seconds per peer and frame size (3..30, default %u)\n"
	    "  -j, --json FILE       every figure as JSON (machine, results, sections)\n"
	    "      --plot DIR        PNG charts of the sweeps (gnuplot)\n"
	    "  -d, --run-dir DIR     use the pvnetd running there (only its tx mode)\n"
	    "      --pvnetd PATH     pvnetd to start (default: next to this pvnet in the\n"
	    "                        build tree, else in ../sbin of an installed one,\n"
	    "                        else pvnetd in PATH)\n"
	    "      --api API         zerocopy (pvnet_tx_alloc/rx_burst, default) or copy\n"
	    "      --verify MODE     sampled (default: headers, 4 KiB stamps, tail, and a\n"
	    "                        line moving through every 64th frame) or full\n"
	    "      --migrate         stream: sender threads hop to the next CPU every %u ms\n"
	    "                        (the steering section always migrates)\n"
	    "      --placement P     split (default with 2+ CPUs): pvnetd on the first half\n"
	    "                        of the CPUs, the frontend domains on the rest, as a Xen\n"
	    "                        host pins dom0 (migrating senders use every CPU);\n"
	    "                        spread: no affinity, the scheduler places everything\n"
	    "  -h, --help            this text\n"
	    "\n"
	    "Exit status: 0 all runs passed, 1 a run failed, 2 usage, 3 the vifs never\n"
	    "connected, 130 interrupted.\n",
	    SECTION_DURATION_S, STREAM_DURATION_S, BENCH_WARMUP_S, BENCH_MAX_REPEAT,
	    BENCH_COMPARE_REPEAT, TCP_SECONDS, PEER_SECONDS, BENCH_MIGRATE_US / 1000u);
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out)
{
	unsigned long v;

	if (cliarg_ulong(s, lo, hi, &v) < 0)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* Lists not given take the defaults of the kind of run (sections or stream). */
static void defaults(struct bench *b, bool sizes, bool queues, bool steering)
{
	if (!sizes) {
		const uint32_t *d = b->stream ? stream_sizes : sec_sizes;
		size_t n = b->stream ? 4 : sizeof(sec_sizes) / sizeof(sec_sizes[0]);

		memcpy(b->sizes, d, n * sizeof(d[0]));
		b->nsizes = (unsigned int)n;
	}
	if (!queues) {
		b->queues[0] = 1;
		b->nqueues = 1;
		if (!b->stream) {
			memcpy(b->queues, sec_queues, sizeof(sec_queues));
			b->nqueues = sizeof(sec_queues) / sizeof(sec_queues[0]);
		}
	}
	if (!b->modes_given) {
		b->nmodes = b->stream ? 2 : 3;
		for (unsigned int m = 0; m < b->nmodes; m++)
			snprintf(b->modes[m], BENCH_MODE_LEN, "%s", sec_modes[m]);
	}
	if (!steering) {
		b->steering[0] = BENCH_STEER_QUEUE;
		b->nsteering = 1;
		if (!b->stream) {
			memcpy(b->steering, sec_steering, sizeof(sec_steering));
			b->nsteering = 3;
		}
	}
	if (b->duration <= 0)
		b->duration = b->stream ? STREAM_DURATION_S : SECTION_DURATION_S;
}

static int parse_opts(struct bench *b, int argc, char **argv)
{
	enum {
		O_WARMUP = 256,
		O_PVNETD,
		O_API,
		O_VERIFY,
		O_STEER,
		O_MIGRATE,
		O_TCPDUR,
		O_PEERS,
		O_PEERDUR,
		O_PLOT,
		O_PLACE
	};
	static const struct option opts[] = {
	    {"run-dir", required_argument, NULL, 'd'},
	    {"frame-size", required_argument, NULL, 's'},
	    {"queues", required_argument, NULL, 'q'},
	    {"tx-mode", required_argument, NULL, 'm'},
	    {"duration", required_argument, NULL, 't'},
	    {"warmup", required_argument, NULL, O_WARMUP},
	    {"json", required_argument, NULL, 'j'},
	    {"pvnetd", required_argument, NULL, O_PVNETD},
	    {"api", required_argument, NULL, O_API},
	    {"verify", required_argument, NULL, O_VERIFY},
	    {"steering", required_argument, NULL, O_STEER},
	    {"migrate", no_argument, NULL, O_MIGRATE},
	    {"section", required_argument, NULL, 'S'},
	    {"repeat", required_argument, NULL, 'r'},
	    {"tcp-duration", required_argument, NULL, O_TCPDUR},
	    {"peers", no_argument, NULL, O_PEERS},
	    {"peer-duration", required_argument, NULL, O_PEERDUR},
	    {"plot", required_argument, NULL, O_PLOT},
	    {"placement", required_argument, NULL, O_PLACE},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	bool sizes = false, queues = false, steering = false, sections = false, peers = false;
	bool sel[BENCH_SEC_N + 1];
	char err[256];
	int c, n, rc;

	optind = 0; /* GNU getopt: start afresh (main parsed with "+"; a test parses again) */
	while ((c = getopt_long(argc, argv, "d:s:q:m:t:j:S:r:h", opts, NULL)) != -1) {
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
			sizes = true;
			break;
		case 'q':
			n = bench_parse_queues(optarg, b->queues, BENCH_MAX_LIST, err, sizeof(err));
			if (n < 0)
				goto bad;
			b->nqueues = (unsigned int)n;
			queues = true;
			break;
		case 'm':
			n = bench_parse_modes(optarg, b->modes, BENCH_MAX_MODES, err, sizeof(err));
			if (n < 0)
				goto bad;
			b->nmodes = (unsigned int)n;
			b->modes_given = true;
			break;
		case 't':
		case O_WARMUP:
			if (bench_parse_seconds(optarg, c == 't' ? &b->duration : &b->warmup)) {
				snprintf(err, sizeof(err), "--%s: '%s' is not 0.01..3600 seconds",
					 c == 't' ? "duration" : "warmup", optarg);
				goto bad;
			}
			break;
		case 'j':
			b->json_path = optarg;
			break;
		case O_PVNETD:
			b->pvnetd_opt = optarg;
			break;
		case O_API:
			if (strcmp(optarg, "zerocopy") && strcmp(optarg, "copy")) {
				snprintf(err, sizeof(err), "--api: '%s' is not zerocopy or copy",
					 optarg);
				goto bad;
			}
			b->zerocopy = !strcmp(optarg, "zerocopy");
			break;
		case O_VERIFY:
			if (strcmp(optarg, "sampled") && strcmp(optarg, "full")) {
				snprintf(err, sizeof(err), "--verify: '%s' is not sampled or full",
					 optarg);
				goto bad;
			}
			b->verify =
			    !strcmp(optarg, "full") ? BENCH_VERIFY_FULL : BENCH_VERIFY_SAMPLED;
			break;
		case O_STEER:
			n = bench_parse_steering(optarg, b->steering, BENCH_MAX_LIST, err,
						 sizeof(err));
			if (n < 0) {
				fprintf(stderr, "pvnet bench: --steering: %s\n", err);
				return -1;
			}
			b->nsteering = (unsigned int)n;
			steering = true;
			break;
		case O_MIGRATE:
			b->migrate = true;
			break;
		case 'S':
			if (bench_parse_sections(optarg, sel, err, sizeof(err)) < 0)
				goto bad;
			sections = true;
			memcpy(b->sel, sel, sizeof(b->sel));
			b->stream = sel[BENCH_SEC_N];
			break;
		case 'r':
			if (parse_uint(optarg, 1, BENCH_MAX_REPEAT, &b->repeat)) {
				snprintf(err, sizeof(err), "--repeat: '%s' is not 1..%u", optarg,
					 BENCH_MAX_REPEAT);
				goto bad;
			}
			b->repeat_given = true;
			break;
		case O_TCPDUR:
		case O_PEERDUR:
			if (parse_uint(optarg, c == O_TCPDUR ? 1 : 3, c == O_TCPDUR ? 10 : 30,
				       c == O_TCPDUR ? &b->tcp_seconds : &b->peer_seconds)) {
				snprintf(err, sizeof(err), "--%s: '%s' is not %s whole seconds",
					 c == O_TCPDUR ? "tcp-duration" : "peer-duration", optarg,
					 c == O_TCPDUR ? "1..10" : "3..30");
				goto bad;
			}
			break;
		case O_PEERS:
			peers = true;
			break;
		case O_PLOT:
			b->plot_dir = optarg;
			break;
		case O_PLACE:
			if (bench_parse_placement(optarg, &b->placement) < 0) {
				snprintf(err, sizeof(err),
					 "--placement: '%s' is not split or spread", optarg);
				goto bad;
			}
			b->placement_given = true;
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
	/*
	 * Without --section, a sweep option keeps its meaning from before the
	 * sections (one run per combination: the interface scripts use);
	 * with none of them the five sections run.
	 */
	if (!sections && (sizes || queues || b->modes_given || steering || b->migrate)) {
		memset(b->sel, 0, sizeof(b->sel));
		b->stream = true;
	} else if (!sections) {
		for (unsigned int k = 0; k <= BENCH_SEC_TCP; k++)
			b->sel[k] = true;
	}
	if (peers && !b->stream)
		b->sel[BENCH_SEC_PEERS] = true;
	if (b->stream && (peers || b->repeat > 1 || b->plot_dir)) {
		fprintf(stderr, "pvnet bench: --peers, --repeat and --plot belong to the sections; "
				"not with --section stream\n");
		return -1;
	}
	if (b->stream && b->ext_run_dir && b->modes_given && b->nmodes > 1) {
		fprintf(stderr, "pvnet bench: with -d the running pvnetd's tx mode is fixed; "
				"--tx-mode cannot sweep\n");
		return -1;
	}
	/* Said now, not after minutes of runs whose figures it would lose. */
	if (b->json_path && (rc = cliarg_out_file(b->json_path)) < 0) {
		fprintf(stderr, "pvnet bench: --json: cannot write %s: %s\n", b->json_path,
			strerror(-rc));
		return -1;
	}
	if (b->plot_dir && (rc = cliarg_out_dir(b->plot_dir)) < 0) {
		fprintf(stderr, "pvnet bench: --plot: cannot write in %s: %s\n", b->plot_dir,
			strerror(-rc));
		return -1;
	}
	defaults(b, sizes, queues, steering);
	return 0;
bad:
	fprintf(stderr, "pvnet bench: %s\n", err);
	return -1;
}

/* --section stream: queues, then frame size, then tx mode, then steering innermost, so that
 * the modes of one size, and the policies of one mode, are adjacent in time on a machine
 * whose speed drifts. */
static void sweep(struct bench *b)
{
	unsigned int nm = b->ext_run_dir ? 1 : b->nmodes;

	b->total = b->nqueues * b->nsizes * nm * b->nsteering;
	for (unsigned int qi = 0; qi < b->nqueues; qi++)
		for (unsigned int si = 0; si < b->nsizes; si++)
			for (unsigned int n = 0; n < nm * b->nsteering; n++) {
				unsigned int m = n / b->nsteering;
				int steer = b->steering[n % b->nsteering];
				const char *mode = b->ext_run_dir ? b->ext_mode : b->modes[m];
				struct bench_result r;

				if (b->interrupted)
					return;
				if (b->progress)
					fprintf(stderr,
						"[%u/%u] %s, %u queue%s, %u bytes, %s%s ...\n",
						++b->done, b->total, mode, b->queues[qi],
						b->queues[qi] == 1 ? "" : "s", b->sizes[si],
						bench_steering_name(steer),
						b->migrate ? ", migrating" : "");
				bench_run_one(b, bench_pd_of(b, mode), mode, b->queues[qi],
					      b->sizes[si], steer, b->migrate, &r);
				if (b->interrupted)
					return;
				bench_record(b, &r, true);
			}
}

static int write_json(struct bench *b, json_t *machine, json_t *sections)
{
	char command[4096];
	json_t *doc;
	int rc;

	bench_command_line(command, sizeof(command));
	doc = bench_doc2json(machine, command, json_incref(b->results), sections);
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

/* The modes whose pvnetd the invocation needs: the stream's list, or map for the frame
 * sections and the tx_mode section's list. */
static void needed_modes(struct bench *b)
{
	b->npd = 0;
	if (!b->stream && (b->sel[BENCH_SEC_SIZES] || b->sel[BENCH_SEC_VCPUS] ||
			   b->sel[BENCH_SEC_STEERING] || b->sel[BENCH_SEC_PEERS]))
		snprintf(b->pd_mode[b->npd++], BENCH_MODE_LEN, "map");
	if (b->stream || b->sel[BENCH_SEC_TX_MODE])
		for (unsigned int m = 0; m < b->nmodes; m++) {
			bool have = false;

			for (unsigned int i = 0; i < b->npd; i++)
				have |= !strcmp(b->pd_mode[i], b->modes[m]);
			if (!have && b->npd < BENCH_MAX_MODES)
				memcpy(b->pd_mode[b->npd++], b->modes[m], BENCH_MODE_LEN);
		}
}

/*
 * The private directory outlives a conductor killed with SIGKILL, which can
 * clean nothing up.  A janitor, forked when the directory is made, waits on
 * a pipe whose write end only the conductor holds (every child of the bench
 * closes its descriptors): a byte then end of file means the conductor
 * cleaned up itself; end of file alone means it died, and the janitor
 * removes the directory.  pvnetd (SIGTERM) and the frontends (SIGKILL) die
 * with the conductor through PR_SET_PDEATHSIG, the scripts' groups through
 * theirs; JANITOR_GRACE_MS lets them go first, and the removal is tried
 * again while one of them still writes there.  The janitor has a process
 * group of its own, so that `timeout -s KILL` and Ctrl-C, which signal the
 * conductor's group, leave it to do its work.
 */
#define JANITOR_GRACE_MS 200
#define JANITOR_TRIES	 50 /* 100 ms apart */

static void janitor(struct bench *b, int rfd)
{
	char c, dir[sizeof(b->tmpdir)];
	ssize_t n;

	do
		n = read(rfd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 0)
		_exit(0); /* the conductor said it is done, or the pipe failed: leave it */
	memcpy(dir, b->tmpdir, sizeof(dir));
	usleep(JANITOR_GRACE_MS * 1000);
	for (int i = 0; i < JANITOR_TRIES; i++) {
		memcpy(b->tmpdir, dir, sizeof(dir)); /* bench_cleanup_tmp() clears it */
		bench_cleanup_tmp(b);
		if (access(dir, F_OK) < 0)
			_exit(0);
		usleep(100000);
	}
	_exit(1);
}

static int start_janitor(struct bench *b)
{
	int pfd[2], nul;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	b->tmp_janitor = fork();
	if (b->tmp_janitor < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (b->tmp_janitor == 0) {
		setpgid(0, 0);
		prctl(PR_SET_NAME, "pvnet-janitor");
		nul = open("/dev/null", O_RDWR);
		if (nul < 0 || dup2(pfd[0], 3) < 0)
			_exit(1);
		dup2(nul, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		close_range(4, ~0u, 0);
		janitor(b, 3);
	}
	close(pfd[0]);
	b->tmp_keeper = pfd[1];
	return 0;
}

/* After bench_cleanup_tmp(): the janitor is told so, and reaped. */
static void stop_janitor(struct bench *b)
{
	if (b->tmp_keeper >= 0) {
		(void)!write(b->tmp_keeper, "", 1);
		close(b->tmp_keeper);
		b->tmp_keeper = -1;
	}
	if (b->tmp_janitor > 0)
		bench_reap(b->tmp_janitor, 1000);
	b->tmp_janitor = 0;
}

/* The private directory: pvnetds' run directories and logs, the scripts' output. */
static int make_tmpdir(struct bench *b)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	/* Short enough that pvnetd's socket paths fit in sun_path (108 bytes). */
	if (!tmp || !*tmp || strlen(tmp) > 40)
		tmp = "/tmp";
	snprintf(b->tmpdir, sizeof(b->tmpdir), "%s/pvnet-bench.XXXXXX", tmp);
	if (!mkdtemp(b->tmpdir)) {
		int e = errno;

		fprintf(stderr, "pvnet bench: mkdtemp: %s\n", strerror(e));
		b->tmpdir[0] = '\0';
		return -e;
	}
	rc = start_janitor(b);
	if (rc < 0) {
		fprintf(stderr, "pvnet bench: cannot start the temporary directory's janitor: %s\n",
			strerror(-rc));
		bench_cleanup_tmp(b);
		return rc;
	}
	return 0;
}

/*
 * --placement: split unless asked otherwise (or with -d, where pvnetd is not
 * ours to place: there split pins the frontends only, and only if asked),
 * over the CPUs this process may use; with fewer than two, spread.
 */
static void placement_decide(struct bench *b)
{
	cpu_set_t allowed;
	bool have = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;

	if (!b->placement_given)
		b->placement = b->ext_run_dir ? BENCH_PLACE_SPREAD : BENCH_PLACE_SPLIT;
	b->split = false;
	b->rtt_cpu[0] = b->rtt_cpu[1] = -1;
	if (b->placement == BENCH_PLACE_SPLIT &&
	    (!have || bench_placement_split(&allowed, &b->pd_cpus, &b->guest_cpus) < 0)) {
		if (b->placement_given)
			fprintf(stderr, "pvnet bench: --placement split needs two CPUs; spread\n");
		b->placement = BENCH_PLACE_SPREAD;
	}
	if (b->placement == BENCH_PLACE_SPLIT) {
		b->split = true;
		bench_cpus_format(&b->pd_cpus, b->pd_cpus_s, sizeof(b->pd_cpus_s));
		bench_cpus_format(&b->guest_cpus, b->guest_cpus_s, sizeof(b->guest_cpus_s));
		b->rtt_cpu[0] = bench_cpus_first(&b->pd_cpus);
		b->rtt_cpu[1] = bench_cpus_first(&b->guest_cpus);
	} else if (have) {
		b->rtt_cpu[0] = bench_cpus_first(&allowed);
		if (b->rtt_cpu[0] >= 0)
			CPU_CLR(b->rtt_cpu[0], &allowed);
		b->rtt_cpu[1] = bench_cpus_first(&allowed);
		if (b->rtt_cpu[1] < 0)
			b->rtt_cpu[0] = -1;
	}
}

int bench_cli_parse(struct bench *b, int argc, char **argv, const char *run_dir)
{
	int rc;

	memset(b, 0, sizeof(*b));
	b->warmup = BENCH_WARMUP_S;
	b->zerocopy = true;
	b->repeat = 1;
	b->tcp_seconds = TCP_SECONDS;
	b->peer_seconds = PEER_SECONDS;
	b->ext_run_dir = run_dir;
	b->sfd = -1;
	b->tmp_keeper = -1;
	rc = parse_opts(b, argc, argv);
	if (rc)
		return rc;
	if (b->ext_run_dir && !b->modes_given)
		b->nmodes = 1;
	placement_decide(b);
	return 0;
}

/* Start our pvnetds (one per mode, all first: they sleep while another one works). */
static int start_pvnetds(struct bench *b)
{
	bench_pvnetd_find(b->pvnetd_opt, b->pvnetd_path, sizeof(b->pvnetd_path));
	needed_modes(b);
	for (unsigned int m = 0; m < b->npd; m++) {
		int rc = bench_pvnetd_start(&b->pd[m], b->pvnetd_path, b->tmpdir, b->pd_mode[m],
					    b->split ? &b->pd_cpus : NULL, &b->oldmask, b->sfd);

		if (rc == -EINTR) {
			bench_check_signal(b);
			b->interrupted = true;
			return rc;
		}
		/* A pvnetd that cannot run at all would fail every run alike: stop here. */
		if (rc == -ENOEXEC) {
			fprintf(stderr,
				"pvnet bench: %s; --pvnetd PATH names the pvnetd to start\n",
				b->pd[m].failed);
			return rc;
		}
		/* A mode pvnetd rejects fails its runs; persistent in tx_mode is left out. */
		if (rc < 0 && (b->stream || strcmp(b->pd_mode[m], "persistent")))
			fprintf(stderr, "pvnet bench: %s\n",
				b->pd[m].failed[0] ? b->pd[m].failed : strerror(-rc));
	}
	return 0;
}

/**
 * bench_main() - `pvnet bench`: the sections of the default run, or the plain sweep
 * @argc: arguments, from "bench" on
 * @argv: the arguments
 * @run_dir: the global `pvnet -d DIR`, or NULL when not given
 *
 * Return: the exit status (see usage())
 */
int bench_main(int argc, char **argv, const char *run_dir)
{
	struct bench b;
	struct bench_section *secs = NULL;
	json_t *machine, *sections = NULL;
	char hdr[256];
	sigset_t mask;
	int rc = bench_cli_parse(&b, argc, argv, run_dir);

	if (rc)
		return rc > 0 ? 0 : 2;
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

	if (make_tmpdir(&b) < 0) {
		rc = 1;
		goto out;
	}
	if (b.ext_run_dir) {
		rc = bench_pvnetd_attach(&b.pd[0], b.ext_run_dir);
		if (rc < 0) {
			fprintf(stderr, "pvnet bench: cannot reach pvnetd at %s/pvnetd.sock: %s\n",
				b.ext_run_dir, strerror(-rc));
			rc = 1;
			goto out;
		}
		b.npd = 1;
		/*
		 * Its status says its tx mode; -m must agree.  A pvnetd whose
		 * status does not say (an older one): trust -m, else infer it
		 * from netback's counters after each run.
		 */
		if (b.pd[0].mode[0] && b.modes_given && strcmp(b.pd[0].mode, b.modes[0])) {
			fprintf(stderr,
				"pvnet bench: the pvnetd at %s runs --tx-mode %s, not the %s "
				"--tx-mode asks for\n",
				b.ext_run_dir, b.pd[0].mode, b.modes[0]);
			rc = 1;
			goto out;
		}
		if (b.pd[0].mode[0])
			memcpy(b.ext_mode, b.pd[0].mode, BENCH_MODE_LEN);
		else if (b.modes_given)
			memcpy(b.ext_mode, b.modes[0], BENCH_MODE_LEN);
		else
			strcpy(b.ext_mode, "unknown");
	} else if (start_pvnetds(&b) < 0) {
		rc = b.interrupted ? 130 : 1;
		goto out;
	}
	if (b.stream) {
		bench_table_header(hdr, sizeof(hdr));
		printf("%s\n", hdr);
		sweep(&b);
	} else {
		secs = calloc(BENCH_SEC_N, sizeof(*secs));
		if (!secs) {
			rc = 1;
			goto out;
		}
		printf("pvnet bench: %s, %d CPUs, kernel %s; %g s per run after %g s warm-up",
		       json_string_value(json_object_get(machine, "cpu")),
		       (int)json_integer_value(json_object_get(machine, "cores")),
		       json_string_value(json_object_get(machine, "kernel")), b.duration, b.warmup);
		if (b.repeat > 1)
			printf(", median (min-max) of %u runs", b.repeat);
		if (b.split)
			printf("; pvnetd on CPU %s, the frontends on CPU %s", b.pd_cpus_s,
			       b.guest_cpus_s);
		printf("\n");
		fflush(stdout);
		bench_sections_run(&b, secs);
		sections = json_object();
		for (unsigned int k = 0; k < BENCH_SEC_N; k++)
			if (b.sel[k])
				json_object_set_new(sections, bench_sec_names[k],
						    bench_section2json(&secs[k]));
		if (b.plot_dir && !b.interrupted)
			bench_plot(&b, secs);
	}
	if (b.json_path && write_json(&b, json_incref(machine), sections) < 0)
		b.runs_failed++;
	else if (!b.json_path)
		json_decref(sections);
	sections = NULL; /* write_json() took it */
	if (b.interrupted)
		rc = 130;
	else if (b.never_connected && !b.runs_ok)
		rc = BENCH_EXIT_NOT_CONNECTED;
	else
		rc = b.runs_failed ? 1 : 0;
	if (rc == BENCH_EXIT_NOT_CONNECTED)
		fprintf(stderr, "pvnet bench: the vifs never connected\n");
out:
	/* A pvnetd that does not stop cleanly (a crash, a sanitizer's report) fails the bench. */
	for (unsigned int m = 0; m < BENCH_MAX_MODES; m++)
		if (bench_pvnetd_stop(&b.pd[m]) < 0 && rc == 0)
			rc = 1;
	bench_cleanup_tmp(&b);
	stop_janitor(&b);
	if (secs)
		for (unsigned int k = 0; k < BENCH_SEC_N; k++)
			free(secs[k].pts);
	free(secs);
	json_decref(sections);
	json_decref(machine);
	json_decref(b.results);
	close(b.sfd);
	sigprocmask(SIG_SETMASK, &b.oldmask, NULL);
	return rc;
}
