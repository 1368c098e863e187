// SPDX-License-Identifier: MIT
/* bench_stats.c - pvnet bench: sequence checking, figures, JSON and table output (pure functions) */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/*
 * Everything here is a function of its arguments, so that the unit tests
 * can drive it with made-up counters.  Definitions (docs/benchmarks.md):
 *
 *   gbit_s        = received bytes (Ethernet header included, no FCS,
 *                   preamble or gap) * 8 / window / 1e9
 *   mpps          = received frames / window / 1e6
 *   cpu_us_per_kb = CPU µs of every pvnet process in the window (both
 *                   frontends and pvnetd) per KB (1024 bytes) received:
 *                   netperf's service demand
 *   notifications_per_1000 = event-channel notifications sent by both
 *                   frontends and by netback, per 1000 received frames
 */

const char *const bench_back_reasons[BENCH_BACK_NREASONS] = {
    "tx_frag_overflow", "tx_bad_size",	  "tx_runt",	      "tx_bad_gref",	"rx_queue_full",
    "rx_direct_full",	"rx_expired",	  "rx_bad_gref",      "rx_oversize",	"rx_nomem",
    "rx_malformed",	"rx_sw_bad",	  "rx_stall_flushed", "rx_carrier_off", "rx_mcast_filtered",
    "tx_bad_offload",	"rx_hold_budget",
};

/**
 * bench_seq_check() - account one sequence number of a flow
 * @f: the flow's state (zeroed before its first frame)
 * @seq: the frame's sequence number
 * @skipped: receives how many sequence numbers were jumped over (BENCH_SEQ_GAP), else 0
 *
 * A flow's frames are numbered 0, 1, 2, ...  A number below one already
 * seen is out of order (reordered, or duplicated) and does not move the
 * expectation; a number above the expected one skips the numbers between,
 * which were dropped or will come late (then counted out of order too).
 *
 * Return: what @seq says (enum bench_seq)
 */
enum bench_seq bench_seq_check(struct bench_flow *f, uint64_t seq, uint64_t *skipped)
{
	*skipped = 0;
	if (f->seen && seq < f->next)
		return BENCH_SEQ_OUT_OF_ORDER;
	if (!f->seen)
		f->seen = true;
	if (seq > f->next) {
		*skipped = seq - f->next;
		f->next = seq + 1;
		return BENCH_SEQ_GAP;
	}
	f->next = seq + 1;
	return BENCH_SEQ_IN_ORDER;
}

/**
 * bench_gbit_s() - throughput in Gbit/s
 * @bytes: bytes received
 * @secs: over this many seconds
 *
 * Return: the rate, or NAN when @secs is not positive (a run that measured no window)
 */
double bench_gbit_s(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes * 8.0 / secs / 1e9 : NAN;
}

/**
 * bench_mpps() - frame rate in millions of frames per second
 * @frames: frames received
 * @secs: over this many seconds
 *
 * Return: the rate, or NAN when @secs is not positive
 */
double bench_mpps(uint64_t frames, double secs)
{
	return secs > 0 ? (double)frames / secs / 1e6 : NAN;
}

/**
 * bench_service_demand() - netperf's service demand: CPU µs per KB received
 * @cpu_us: CPU time of every process involved, in µs
 * @bytes: bytes received (a KB is 1024 bytes, as netperf has it)
 *
 * Return: µs per KB, or NAN when nothing was received
 */
double bench_service_demand(uint64_t cpu_us, uint64_t bytes)
{
	return bytes ? (double)cpu_us / ((double)bytes / 1024.0) : NAN;
}

/**
 * bench_per_1000() - events per 1000 frames
 * @events: e.g. notifications
 * @frames: frames received
 *
 * Return: the ratio, or NAN when no frame was received
 */
double bench_per_1000(uint64_t events, uint64_t frames)
{
	return frames ? (double)events * 1000.0 / (double)frames : NAN;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static uint64_t back_drops(const struct bench_back *b)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < BENCH_BACK_NREASONS; i++)
		n += b->reason[i];
	return n;
}

/**
 * bench_figures() - the figures of one run
 * @r: the run's raw counters
 * @f: filled
 *
 * Rates, service demand, notifications, drops, corrupt and out-of-order
 * frames are over the timed window (end minus start snapshots).  The
 * window of the rates is the receiver's own, between the times of its two
 * snapshots (a loaded machine can delay a snapshot by many milliseconds);
 * without them, the conductor's.  The sender's own rate (tx_kbyte_s) is
 * over the sender's window, its snapshots' times: the two start a
 * handshake apart, so in a very short run tx_frames and rx_frames differ
 * by what each window holds that the other does not.  A run that measured
 * no window has no rates (NAN: null in JSON, "-" in tables).
 * unaccounted is over the whole run, after draining: frames sent minus
 * frames received minus frames counted as dropped by someone.
 */
void bench_figures(const struct bench_result *r, struct bench_figures *f)
{
	uint64_t cpu_us, end_drops;
	double k, kc;

	memset(f, 0, sizeof(*f));
	f->window_s = r->window_s;
	if (r->b0.t_ns && r->b1.t_ns > r->b0.t_ns)
		f->window_s = (double)(r->b1.t_ns - r->b0.t_ns) / 1e9;
	f->tx_frames = sub(r->a1.frames, r->a0.frames);
	f->rx_frames = sub(r->b1.frames, r->b0.frames);
	f->bytes = sub(r->b1.bytes, r->b0.bytes);
	f->tx_bytes = sub(r->a1.bytes, r->a0.bytes);
	f->gbit_s = bench_gbit_s(f->bytes, f->window_s);
	f->tx_window_s = f->window_s;
	if (r->a0.t_ns && r->a1.t_ns > r->a0.t_ns)
		f->tx_window_s = (double)(r->a1.t_ns - r->a0.t_ns) / 1e9;
	f->tx_kbyte_s = f->tx_window_s > 0 ? (double)f->tx_bytes / 1024.0 / f->tx_window_s : NAN;
	f->rx_kbyte_s = f->window_s > 0 ? (double)f->bytes / 1024.0 / f->window_s : NAN;
	f->mpps = bench_mpps(f->rx_frames, f->window_s);
	f->cpu_s_tx = (double)sub(r->a1.cpu_us, r->a0.cpu_us) / 1e6;
	f->cpu_s_rx = (double)sub(r->b1.cpu_us, r->b0.cpu_us) / 1e6;
	cpu_us = sub(r->a1.cpu_us, r->a0.cpu_us) + sub(r->b1.cpu_us, r->b0.cpu_us);
	/*
	 * Service demand is over every pvnet process: with pvnetd's time
	 * unknown (-d, neither its CPU clock nor /proc readable) there is none, rather than
	 * a frontends-only figure under the same name.
	 */
	/*
	 * pvnetd's time and the machine's are read just outside the frontends'
	 * snapshots (a few ms more than the receiver's window): counted at the
	 * rate of their own window.
	 */
	kc = 1.0;
	if (r->pvnetd_cpu_t1_ns > r->pvnetd_cpu_t0_ns && r->b0.t_ns && r->b1.t_ns > r->b0.t_ns &&
	    r->pvnetd_cpu_t1_ns - r->pvnetd_cpu_t0_ns > r->b1.t_ns - r->b0.t_ns)
		kc = (double)(r->b1.t_ns - r->b0.t_ns) /
		     (double)(r->pvnetd_cpu_t1_ns - r->pvnetd_cpu_t0_ns);
	f->cpu_s_pvnetd = f->cpu_us_per_kb = NAN;
	if (r->pvnetd_cpu_us >= 0) {
		uint64_t pvnetd_us = (uint64_t)((double)r->pvnetd_cpu_us * kc);

		f->cpu_s_pvnetd = (double)pvnetd_us / 1e6;
		cpu_us += pvnetd_us;
		f->cpu_us_per_kb = bench_service_demand(cpu_us, f->bytes);
	}
	f->cpu_s_busy = f->cpu_s_steal = f->cpu_s_others = NAN;
	if (r->sys_busy_us >= 0 && r->sys_steal_us >= 0) {
		f->cpu_s_busy = (double)r->sys_busy_us * kc / 1e6;
		f->cpu_s_steal = (double)r->sys_steal_us * kc / 1e6;
		/* What else ran: other sessions' builds, the conductor; tick rounding can go below 0. */
		if (r->pvnetd_cpu_us >= 0)
			f->cpu_s_others = f->cpu_s_busy - (double)cpu_us / 1e6;
	}
	f->notify_front_tx = sub(r->a1.front_tx_notify, r->a0.front_tx_notify) +
			     sub(r->b1.front_tx_notify, r->b0.front_tx_notify);
	f->notify_front_rx = sub(r->a1.front_rx_notify, r->a0.front_rx_notify) +
			     sub(r->b1.front_rx_notify, r->b0.front_rx_notify);
	f->notify_back = sub(r->back1.notifications, r->back0.notifications);
	f->notifications = f->notify_front_tx + f->notify_front_rx + f->notify_back;
	/*
	 * netback's counters come from pvnetd's status, read just outside the
	 * frontends' snapshots: over a slightly longer window than the frames
	 * they are divided by (a few ms; 10 % of a 50 ms window).  Per 1000
	 * frames, they count at the rate of their own window over the
	 * receiver's.
	 */
	k = 1.0;
	if (r->back0.t_ns && r->back1.t_ns > r->back0.t_ns && r->b0.t_ns && r->b1.t_ns > r->b0.t_ns)
		k = (double)(r->b1.t_ns - r->b0.t_ns) / (double)(r->back1.t_ns - r->back0.t_ns);
	f->notifications_per_1000 =
	    bench_per_1000(f->notify_front_tx + f->notify_front_rx, f->rx_frames) +
	    bench_per_1000(f->notify_back, f->rx_frames) * k;
	/*
	 * A steered sender's queue counters are read only after its threads
	 * are joined (docs/benchmarks.md, Limits): the window has none, so no
	 * figure that would need them, rather than one missing their share.
	 */
	if (r->steering != BENCH_STEER_QUEUE)
		f->notifications_per_1000 = NAN;
	f->grant_ops_per_1000 = f->grant_map_per_1000 = f->grant_unmap_per_1000 =
	    f->grant_batches_per_1000 = NAN;
	if (r->back0.grant_known && r->back1.grant_known) {
		uint64_t cp = sub(r->back1.grant_copy_ops, r->back0.grant_copy_ops);
		uint64_t map = sub(r->back1.grant_map_ops, r->back0.grant_map_ops);
		uint64_t unmap = sub(r->back1.grant_unmap_ops, r->back0.grant_unmap_ops);

		f->grant_ops_per_1000 = bench_per_1000(cp + map + unmap, f->rx_frames) * k;
		f->grant_map_per_1000 = bench_per_1000(map, f->rx_frames) * k;
		f->grant_unmap_per_1000 = bench_per_1000(unmap, f->rx_frames) * k;
		f->grant_batches_per_1000 =
		    bench_per_1000(sub(r->back1.grant_batches, r->back0.grant_batches),
				   f->rx_frames) *
		    k;
	}
	/*
	 * netback's reasons only: a frame it refuses with an error response is
	 * counted there and again in netfront's tx_errors or rx_errors, which
	 * the JSON gives apart.  A frame netfront drops on its own (a bad
	 * response) has no netback reason and shows as unaccounted: a bug.
	 */
	f->dropped = sub(back_drops(&r->back1), back_drops(&r->back0));
	f->corrupt = sub(r->b1.corrupt, r->b0.corrupt);
	f->out_of_order = sub(r->b1.out_of_order, r->b0.out_of_order);
	f->gaps = sub(r->b1.gaps, r->b0.gaps);
	end_drops = back_drops(&r->back_end);
	f->unaccounted = (int64_t)r->a_end.frames - (int64_t)r->b_end.frames - (int64_t)end_drops;
}

/**
 * bench_run_check() - fail a measured run whose frames were damaged, reordered or lost uncounted
 * @r: the run, measured to the end (drain included); its error is set on failure
 *
 * Throughput figures of a run that delivered corrupt frames, or lost frames
 * no counter explains, are not figures of a working data path: the run
 * fails, so that tables, verdicts and the exit status say so.  The
 * unaccounted check needs netback's counters after the drain.
 *
 * Return: true when the run stands
 */
bool bench_run_check(struct bench_result *r)
{
	struct bench_figures f;

	if (r->error[0])
		return false;
	bench_figures(r, &f);
	if (r->b_end.corrupt) {
		snprintf(r->error, sizeof(r->error),
			 "%" PRIu64 " corrupt frames: the receiver's payload check failed",
			 r->b_end.corrupt);
		return false;
	}
	/*
	 * One sender thread per queue, one flow per queue: netback keeps a TX
	 * queue's frames in order to any RX queue (rx.c, Ordering), so a frame
	 * out of order is a fault of the data path, or a receive buffer that
	 * came back holding an older frame whole, which the payload check
	 * cannot tell from a new one.  (Policies that move a flow between
	 * queues, xps, may reorder: that is what they are measured for.)
	 */
	if (r->steering == BENCH_STEER_QUEUE && r->b_end.out_of_order) {
		snprintf(r->error, sizeof(r->error),
			 "%" PRIu64 " frames out of order where every flow has a queue of its own",
			 r->b_end.out_of_order);
		return false;
	}
	if (!r->back_end.ok) {
		snprintf(r->error, sizeof(r->error),
			 "pvnetd's counters after the drain could not be read: the frames "
			 "cannot be accounted for");
		return false;
	}
	/*
	 * Negative: more drops counted than frames missing, which on a shared
	 * pvnetd (-d) is other guests' frames dropped at the receiver's vif.
	 */
	if (f.unaccounted > 0 || (f.unaccounted < 0 && !r->shared_pvnetd)) {
		snprintf(r->error, sizeof(r->error),
			 "%" PRId64 " frames unaccounted for (sent - received - counted drops)",
			 f.unaccounted);
		return false;
	}
	return true;
}

/* A double as JSON: null when it is not a number (nothing received). */
static json_t *jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/*
 * @t_ns, a CLOCK_MONOTONIC time (every process's), as seconds since the
 * epoch: the realtime clock now less the time since; NAN for 0 (not taken).
 */
static double mono_to_unix(uint64_t t_ns)
{
	struct timespec m, u;

	if (!t_ns || clock_gettime(CLOCK_MONOTONIC, &m) < 0 ||
	    clock_gettime(CLOCK_REALTIME, &u) < 0)
		return NAN;
	return (double)u.tv_sec + (double)u.tv_nsec / 1e9 -
	       ((double)m.tv_sec + (double)m.tv_nsec / 1e9 - (double)t_ns / 1e9);
}

static json_t *jint(uint64_t v)
{
	return json_integer((json_int_t)v);
}

/* {"before", "after", "cpus"}: the host's round trips of a run, null when none was sampled. */
static json_t *host_rtt2json(const struct bench_result *r)
{
	if (r->host_rtt_cpus[0] < 0 || (!r->host_rtt_ns[0] && !r->host_rtt_ns[1]))
		return json_null();
	return json_pack("{s:o, s:o, s:[i, i]}", "before",
			 r->host_rtt_ns[0] ? json_integer(r->host_rtt_ns[0]) : json_null(), "after",
			 r->host_rtt_ns[1] ? json_integer(r->host_rtt_ns[1]) : json_null(), "cpus",
			 r->host_rtt_cpus[0], r->host_rtt_cpus[1]);
}

/**
 * bench_result2json() - one run as a JSON object (the `results` entries)
 * @r: the run
 *
 * Return: a new object, or NULL when out of memory
 */
json_t *bench_result2json(const struct bench_result *r)
{
	bool steered = r->steering != BENCH_STEER_QUEUE; /* no netfront TX counters in the window */
	struct bench_figures f;
	json_t *o, *drops;

	bench_figures(r, &f);
	drops = json_object();
	for (unsigned int i = 0; i < BENCH_BACK_NREASONS; i++) {
		char key[48];

		snprintf(key, sizeof(key), "netback_%s", bench_back_reasons[i]);
		json_object_set_new(drops, key, jint(sub(r->back1.reason[i], r->back0.reason[i])));
	}
	json_object_set_new(drops, "netfront_tx_errors",
			    steered ? json_null()
				    : jint(sub(r->a1.front_tx_errors, r->a0.front_tx_errors)));
	json_object_set_new(drops, "netfront_rx_errors",
			    jint(sub(r->b1.front_rx_errors, r->b0.front_rx_errors)));
	o = json_pack("{s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
		      "frame_size", (int)r->frame_size, "queues", (int)r->queues,
		      "queues_negotiated", (int)r->queues_got, "tx_mode", r->tx_mode,
		      "tx_mode_source", r->tx_mode_source ? r->tx_mode_source : "", "api",
		      r->api ? r->api : "", "verify",
		      r->verify == BENCH_VERIFY_FULL ? "full" : "sampled", "window_s",
		      jreal(f.window_s), "tx_frames", jint(f.tx_frames), "rx_frames",
		      jint(f.rx_frames), "bytes", jint(f.bytes), "gbit_s", jreal(f.gbit_s), "mpps",
		      jreal(f.mpps), "cpu_us_per_kb", jreal(f.cpu_us_per_kb));
	if (!o) {
		json_decref(drops);
		return NULL;
	}
	json_object_set_new(
	    o, "cpu_method",
	    json_string(r->pvnetd_cpu_us < 0
			    ? "rusage, frontends only: getrusage(RUSAGE_SELF) of both frontend "
			      "processes; pvnetd's CPU could not be read, so no service demand"
			: r->pvnetd_cpu_clock
			    ? "rusage+cpuclock, all pvnet processes: getrusage(RUSAGE_SELF) "
			      "of both frontend processes, pvnetd's process CPU clock "
			      "(clock_getcpuclockid), over the timed window"
			    : "rusage+procstat, all pvnet processes: getrusage(RUSAGE_SELF) "
			      "of both frontend processes, /proc/PID/stat utime+stime of "
			      "pvnetd, over the timed window"));
	json_object_set_new(o, "cpu_s",
			    json_pack("{s:o, s:o, s:o}", "frontend_tx", jreal(f.cpu_s_tx),
				      "frontend_rx", jreal(f.cpu_s_rx), "pvnetd",
				      jreal(f.cpu_s_pvnetd)));
	json_object_set_new(o, "machine_cpu_s",
			    json_pack("{s:o, s:o, s:o}", "busy", jreal(f.cpu_s_busy), "steal",
				      jreal(f.cpu_s_steal), "others", jreal(f.cpu_s_others)));
	json_object_set_new(o, "notifications", steered ? json_null() : jint(f.notifications));
	json_object_set_new(o, "notifications_per_1000", jreal(f.notifications_per_1000));
	json_object_set_new(o, "notifications_by",
			    json_pack("{s:o, s:o, s:o}", "netfront_tx",
				      steered ? json_null() : jint(f.notify_front_tx),
				      "netfront_rx", jint(f.notify_front_rx), "netback",
				      jint(f.notify_back)));
	json_object_set_new(o, "grant_ops_per_1000", jreal(f.grant_ops_per_1000));
	json_object_set_new(o, "grant_map_per_1000", jreal(f.grant_map_per_1000));
	json_object_set_new(o, "grant_unmap_per_1000", jreal(f.grant_unmap_per_1000));
	json_object_set_new(o, "grant_batches_per_1000", jreal(f.grant_batches_per_1000));
	json_object_set_new(o, "dropped", jint(f.dropped));
	json_object_set_new(o, "drops", drops);
	json_object_set_new(o, "corrupt", jint(f.corrupt));
	json_object_set_new(o, "out_of_order", jint(f.out_of_order));
	json_object_set_new(o, "gaps", jint(f.gaps));
	json_object_set_new(
	    o, "tx_ring_full",
	    steered ? json_null() : jint(sub(r->a1.front_tx_ring_full, r->a0.front_tx_ring_full)));
	json_object_set_new(o, "tx_copy_fallback",
			    jint(sub(r->a1.tx_copy_fallback, r->a0.tx_copy_fallback)));
	json_object_set_new(o, "run_totals",
			    json_pack("{s:o, s:o, s:o, s:o, s:o}", "tx_frames",
				      jint(r->a_end.frames), "rx_frames", jint(r->b_end.frames),
				      "corrupt", jint(r->b_end.corrupt), "out_of_order",
				      jint(r->b_end.out_of_order), "unaccounted",
				      json_integer((json_int_t)f.unaccounted)));
	json_object_set_new(o, "tx_window_s", jreal(f.tx_window_s));
	json_object_set_new(o, "window_start_unix", jreal(mono_to_unix(r->b0.t_ns)));
	json_object_set_new(o, "learn_frame_seen", json_boolean(r->learn_seen));
	json_object_set_new(o, "steering", json_string(bench_steering_name(r->steering)));
	json_object_set_new(o, "migrate", json_boolean(r->migrate));
	json_object_set_new(o, "placement", r->placement ? json_string(r->placement) : json_null());
	json_object_set_new(o, "pvnetd_cpus",
			    r->pvnetd_cpus[0] ? json_string(r->pvnetd_cpus) : json_null());
	json_object_set_new(o, "guest_cpus",
			    r->guest_cpus[0] ? json_string(r->guest_cpus) : json_null());
	json_object_set_new(o, "host_rtt_ns", host_rtt2json(r));
	if (r->error[0])
		json_object_set_new(o, "error", json_string(r->error));
	return o;
}

/**
 * bench_doc2json() - the whole JSON document
 * @machine: {cpu, cores, kernel}; the reference is stolen
 * @command: the command line, argv joined by spaces
 * @results: array of bench_result2json() objects; the reference is stolen
 * @sections: {"sizes": ..., ...} of bench_section2json() objects, or NULL (a plain
 *	sweep, --section stream); the reference is stolen
 *
 * Return: a new object {"machine", "command", "results"[, "sections"]}, or NULL
 */
json_t *bench_doc2json(json_t *machine, const char *command, json_t *results, json_t *sections)
{
	if (!sections)
		return json_pack("{s:o, s:s, s:o}", "machine", machine, "command", command,
				 "results", results);
	return json_pack("{s:o, s:s, s:o, s:o}", "machine", machine, "command", command, "results",
			 results, "sections", sections);
}

/**
 * bench_table_header() - the text table's heading line
 * @buf: receives it, NUL terminated
 * @len: size of @buf
 */
void bench_table_header(char *buf, size_t len)
{
	snprintf(buf, len,
		 "%6s %2s %-4s %-8s %10s %10s %8s %7s %8s %8s %7s %7s %7s %5s %-8s %3s %9s",
		 "frame", "q", "tx", "api", "tx_frames", "rx_frames", "Gbit/s", "Mpps", "us/KB",
		 "ntf/1k", "gnt/1k", "dropped", "corrupt", "ooo", "steering", "mig", "host ns");
}

static void fmt_real(char *b, size_t n, double v, int prec)
{
	if (isfinite(v))
		snprintf(b, n, "%.*f", prec, v);
	else
		snprintf(b, n, "-");
}

/* The host's round trips before/after a run ("120/402"; "-" unknown): two that differ, it moved. */
static void fmt_host(char *b, size_t n, const struct bench_result *r)
{
	char x[2][12];

	for (unsigned int i = 0; i < 2; i++)
		fmt_real(x[i], sizeof(x[i]), r->host_rtt_ns[i] ? r->host_rtt_ns[i] : NAN, 0);
	snprintf(b, n, "%s/%s", x[0], x[1]);
}

/**
 * bench_table_row() - one run as a line of the text table
 * @r: the run
 * @buf: receives the line, NUL terminated
 * @len: size of @buf
 */
void bench_table_row(const struct bench_result *r, char *buf, size_t len)
{
	struct bench_figures f;
	char sd[24], ntf[24], gnt[24], host[24];

	if (r->error[0]) {
		snprintf(buf, len, "%6u %2u %-4s %s%s failed: %s", r->frame_size, r->queues,
			 r->tx_mode, bench_steering_name(r->steering), r->migrate ? " migrate" : "",
			 r->error);
		return;
	}
	bench_figures(r, &f);
	fmt_real(sd, sizeof(sd), f.cpu_us_per_kb, 4);
	fmt_real(ntf, sizeof(ntf), f.notifications_per_1000, 2);
	fmt_real(gnt, sizeof(gnt), f.grant_ops_per_1000, 1);
	fmt_host(host, sizeof(host), r);
	snprintf(buf, len,
		 "%6u %2u %-4s %-8s %10" PRIu64 " %10" PRIu64 " %8.3f %7.3f %8s %8s %7s %7" PRIu64
		 " %7" PRIu64 " %5" PRIu64 " %-8s %3s %9s",
		 r->frame_size, r->queues, r->tx_mode, r->api ? r->api : "-", f.tx_frames,
		 f.rx_frames, f.gbit_s, f.mpps, sd, ntf, gnt, f.dropped, f.corrupt, f.out_of_order,
		 bench_steering_name(r->steering), r->migrate ? "yes" : "no", host);
}

/* Split @s at commas; call @one on every item; count them.  Empty items are errors. */
static int parse_list(const char *s, unsigned int max, char *err, size_t errlen, void *ctx,
		      int (*one)(const char *item, unsigned int i, void *ctx, char *err,
				 size_t errlen))
{
	char item[64];
	unsigned int n = 0;

	if (!s || !*s) {
		snprintf(err, errlen, "empty list");
		return -EINVAL;
	}
	for (const char *p = s;;) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		int rc;

		if (!l || l >= sizeof(item)) {
			snprintf(err, errlen, "'%s': empty or overlong item", s);
			return -EINVAL;
		}
		if (n == max) {
			snprintf(err, errlen, "'%s': more than %u items", s, max);
			return -E2BIG;
		}
		memcpy(item, p, l);
		item[l] = '\0';
		rc = one(item, n, ctx, err, errlen);
		if (rc < 0)
			return rc;
		n++;
		if (!c)
			break;
		p = c + 1;
	}
	return (int)n;
}

static int parse_u32(const char *item, unsigned long *v)
{
	char *end;

	if (*item < '0' || *item > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(item, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int one_size(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	unsigned long v;

	if (parse_u32(item, &v) < 0) {
		snprintf(err, errlen, "frame size '%s' is not a number of bytes", item);
		return -EINVAL;
	}
	if (v == 65536) {
		snprintf(err, errlen,
			 "frame size 65536: netif's frame size field is 16 bits, the largest frame "
			 "is 65535 bytes (use 65535 for 64 KiB)");
		return -ERANGE;
	}
	if (v < BENCH_MIN_FRAME || v > BENCH_MAX_FRAME) {
		snprintf(err, errlen, "frame size %lu is outside %u..%u bytes", v, BENCH_MIN_FRAME,
			 BENCH_MAX_FRAME);
		return -ERANGE;
	}
	((uint32_t *)ctx)[i] = (uint32_t)v;
	return 0;
}

static int one_queue(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	unsigned long v;

	if (parse_u32(item, &v) < 0 || v < 1 || v > BENCH_MAX_FLOWS) {
		snprintf(err, errlen, "queue count '%s' is not in 1..%u", item, BENCH_MAX_FLOWS);
		return -ERANGE;
	}
	((unsigned int *)ctx)[i] = (unsigned int)v;
	return 0;
}

static int one_mode(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	static const char *const modes[] = {"copy", "map", "persistent"};
	char(*out)[BENCH_MODE_LEN] = ctx;
	unsigned int k = 0;

	_Static_assert(sizeof("persistent") <= BENCH_MODE_LEN, "tx mode names fit");
	while (k < sizeof(modes) / sizeof(modes[0]) && strcmp(item, modes[k]))
		k++;
	if (k == sizeof(modes) / sizeof(modes[0])) {
		snprintf(err, errlen, "tx mode '%s' is not copy, map or persistent", item);
		return -EINVAL;
	}
	for (unsigned int j = 0; j < i; j++)
		if (!strcmp(out[j], item)) {
			snprintf(err, errlen, "tx mode '%s' given twice", item);
			return -EINVAL;
		}
	/* the table's copy: its length is known, so no truncation to warn about */
	snprintf(out[i], BENCH_MODE_LEN, "%s", modes[k]);
	return 0;
}

/* Names of BENCH_STEER_QUEUE (index 0) and the policies (index policy + 1). */
static const char *const steer_names[] = {"queue", "hash", "xps", "xps-safe"};

/**
 * bench_steering_name() - the name of a --steering value
 * @steering: BENCH_STEER_QUEUE or a BENCH_STEER_* policy
 *
 * Return: "queue", "hash", "xps", "xps-safe", or "unknown"
 */
const char *bench_steering_name(int steering)
{
	if (steering < BENCH_STEER_QUEUE || steering > BENCH_STEER_XPS_SAFE)
		return "unknown";
	return steer_names[steering + 1];
}

static int one_steering(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	int *out = ctx;

	for (int v = BENCH_STEER_QUEUE; v <= BENCH_STEER_XPS_SAFE; v++) {
		if (strcmp(item, steer_names[v + 1]))
			continue;
		for (unsigned int j = 0; j < i; j++)
			if (out[j] == v) {
				snprintf(err, errlen, "steering '%s' given twice", item);
				return -EINVAL;
			}
		out[i] = v;
		return 0;
	}
	snprintf(err, errlen, "steering '%s' is not hash, xps, xps-safe or queue", item);
	return -EINVAL;
}

/**
 * bench_parse_steering() - parse --steering: comma-separated "hash", "xps", "xps-safe", "queue"
 * @s: the list
 * @out: receives BENCH_STEER_* values ("queue": BENCH_STEER_QUEUE, the default's name)
 * @max: room in @out
 * @err: receives a message for people on failure
 * @errlen: size of @err
 *
 * A name given twice is refused: it would measure nothing new.
 *
 * Return: the number of values, or -errno
 */
int bench_parse_steering(const char *s, int *out, unsigned int max, char *err, size_t errlen)
{
	return parse_list(s, max, err, errlen, out, one_steering);
}

/**
 * bench_parse_sizes() - parse --frame-size: comma-separated bytes, 60..65535
 * @s: the list
 * @out: receives the sizes
 * @max: room in @out
 * @err: receives a message for people on failure
 * @errlen: size of @err
 *
 * 65536 is refused with its own message: a netif request's size is 16 bits.
 *
 * Return: the number of sizes, or -errno
 */
int bench_parse_sizes(const char *s, uint32_t *out, unsigned int max, char *err, size_t errlen)
{
	return parse_list(s, max, err, errlen, out, one_size);
}

/**
 * bench_parse_queues() - parse --queues: comma-separated counts, 1..BENCH_MAX_FLOWS
 * @s: the list
 * @out: receives the counts
 * @max: room in @out
 * @err: receives a message for people on failure
 * @errlen: size of @err
 *
 * Return: the number of counts, or -errno
 */
int bench_parse_queues(const char *s, unsigned int *out, unsigned int max, char *err, size_t errlen)
{
	return parse_list(s, max, err, errlen, out, one_queue);
}

/**
 * bench_parse_modes() - parse --tx-mode: comma-separated "copy", "map", "persistent"
 * @s: the list
 * @out: receives the mode names
 * @max: room in @out
 * @err: receives a message for people on failure
 * @errlen: size of @err
 *
 * Return: the number of modes, or -errno
 */
int bench_parse_modes(const char *s, char (*out)[BENCH_MODE_LEN], unsigned int max, char *err,
		      size_t errlen)
{
	return parse_list(s, max, err, errlen, out, one_mode);
}

/**
 * bench_parse_seconds() - parse --duration: positive seconds, fractions allowed, at most 1 hour
 * @s: the text
 * @out: receives the seconds
 *
 * Return: 0 or -EINVAL
 */
int bench_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0.01 || v > 3600)
		return -EINVAL;
	*out = v;
	return 0;
}

/**
 * bench_procstat_ticks() - utime + stime from the text of /proc/PID/stat
 * @text: the file's contents, NUL terminated
 * @ticks: receives fields 14 + 15 (clock ticks, sysconf(_SC_CLK_TCK) per second)
 *
 * The command name (field 2) may contain spaces and parentheses, so
 * fields are counted from the last ')'.
 *
 * Return: 0, or -EINVAL when the text is not a stat line
 */
int bench_procstat_ticks(const char *text, uint64_t *ticks)
{
	const char *p = strrchr(text, ')');
	unsigned long long ut, st;

	/* After ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

/**
 * bench_procstat_cpu() - busy and stolen time of all CPUs from the text of /proc/stat
 * @text: the file's contents, NUL terminated; its first line is the "cpu" total
 * @busy: receives user + nice + system + irq + softirq (clock ticks; guest time is in user)
 * @steal: receives steal: time the hypervisor ran something else while we wanted a CPU
 *
 * Return: 0, or -EINVAL when the first line is not the "cpu" total
 */
int bench_procstat_cpu(const char *text, uint64_t *busy, uint64_t *steal)
{
	unsigned long long us, ni, sy, id, io, irq, sirq, st;

	if (strncmp(text, "cpu ", 4) || sscanf(text + 4, "%llu %llu %llu %llu %llu %llu %llu %llu",
					       &us, &ni, &sy, &id, &io, &irq, &sirq, &st) != 8)
		return -EINVAL;
	*busy = us + ni + sy + irq + sirq;
	*steal = st;
	return 0;
}

static uint64_t jget(const json_t *o, const char *k)
{
	json_int_t v = json_integer_value(json_object_get(o, k));

	return v > 0 ? (uint64_t)v : 0;
}

/**
 * bench_back_from_status() - netback's counters of a run's two vifs from a `status` reply
 * @status: pvnetd's reply to {"op":"status"}
 * @domid_a: the sender's domain
 * @domid_b: the receiver's domain
 * @out: filled; out->ok tells whether both vifs were there
 */
void bench_back_from_status(const json_t *status, unsigned int domid_a, unsigned int domid_b,
			    struct bench_back *out)
{
	static const char *const gkeys[] = {"grant_copy_ops", "grant_map_ops", "grant_unmap_ops",
					    "grant_batches"};
	bool seen_a = false, seen_b = false;
	unsigned int nq = 0, grant_missing = 0;
	json_t *vif;
	size_t i;

	memset(out, 0, sizeof(*out));
	json_array_foreach(json_object_get(status, "vifs"), i, vif)
	{
		json_int_t domid = json_integer_value(json_object_get(vif, "domid"));
		json_t *q;
		size_t qi;

		if (domid != (json_int_t)domid_a && domid != (json_int_t)domid_b)
			continue;
		if (domid == (json_int_t)domid_a)
			seen_a = true;
		else
			seen_b = true;
		json_array_foreach(json_object_get(vif, "queues"), qi, q)
		{
			nq++;
			for (unsigned int g = 0; g < 4; g++)
				grant_missing += !json_is_integer(json_object_get(q, gkeys[g]));
			out->grant_copy_ops += jget(q, gkeys[0]);
			out->grant_map_ops += jget(q, gkeys[1]);
			out->grant_unmap_ops += jget(q, gkeys[2]);
			out->grant_batches += jget(q, gkeys[3]);
			out->notifications += jget(q, "notifications");
			/*
			 * The stream's drops: the sender's on TX, the receiver's on
			 * RX (frames for A, or from B, are no part of it).
			 */
			for (unsigned int r = 0; r < BENCH_BACK_NREASONS; r++)
				if ((domid == (json_int_t)domid_a) ==
				    !strncmp(bench_back_reasons[r], "tx_", 3))
					out->reason[r] += jget(q, bench_back_reasons[r]);
			if (domid == (json_int_t)domid_a) {
				out->tx_zerocopy_sent += jget(q, "tx_zerocopy_sent");
				out->tx_copied += jget(q, "tx_copied");
				out->tx_dropped += jget(q, "tx_dropped");
			} else {
				out->rx_dropped += jget(q, "rx_dropped");
			}
		}
	}
	out->ok = seen_a && seen_b;
	out->grant_known = out->ok && nq && !grant_missing;
}
