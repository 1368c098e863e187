// SPDX-License-Identifier: MIT
/* test_stats.c - pvnet bench: sequence checker, figures, JSON shape, table, option lists, parsers */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench.h"

/* cmocka's assert_float_equal() works in float; the figures are doubles. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (double)(eps))

static void test_seq_in_order(void **state)
{
	struct bench_flow f = {0};
	uint64_t skipped;

	for (uint64_t s = 0; s < 1000; s++) {
		assert_int_equal(bench_seq_check(&f, s, &skipped), BENCH_SEQ_IN_ORDER);
		assert_int_equal(skipped, 0);
	}
	assert_int_equal(f.next, 1000);
}

static void test_seq_table(void **state)
{
	/* A flow's arrivals and what each one is: gaps count the numbers jumped over. */
	static const struct {
		uint64_t seq;
		enum bench_seq want;
		uint64_t skipped;
	} t[] = {
	    {0, BENCH_SEQ_IN_ORDER, 0},	    {1, BENCH_SEQ_IN_ORDER, 0},
	    {4, BENCH_SEQ_GAP, 2},					    /* 2 and 3 missing */
	    {3, BENCH_SEQ_OUT_OF_ORDER, 0},				    /* 3 late: reordered */
	    {5, BENCH_SEQ_IN_ORDER, 0},	    {5, BENCH_SEQ_OUT_OF_ORDER, 0}, /* duplicate */
	    {6, BENCH_SEQ_IN_ORDER, 0},	    {1000, BENCH_SEQ_GAP, 993},
	    {0, BENCH_SEQ_OUT_OF_ORDER, 0}, {1001, BENCH_SEQ_IN_ORDER, 0},
	};
	struct bench_flow f = {0};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t skipped;

		assert_int_equal(bench_seq_check(&f, t[i].seq, &skipped), t[i].want);
		assert_int_equal(skipped, t[i].skipped);
	}
}

static void test_seq_first_frame_late(void **state)
{
	struct bench_flow f = {0};
	uint64_t skipped;

	/* The receiver runs before the sender: frames 0..2 lost are a gap of 3. */
	assert_int_equal(bench_seq_check(&f, 3, &skipped), BENCH_SEQ_GAP);
	assert_int_equal(skipped, 3);
}

static void test_rates(void **state)
{
	assert_near(bench_gbit_s(1250000000, 1.0), 10.0, 1e-9);
	assert_near(bench_gbit_s(1250000000, 2.0), 5.0, 1e-9);
	assert_true(isnan(bench_gbit_s(100, 0))); /* no window, no rate: null, not 0 */
	assert_true(isnan(bench_mpps(100, 0)));
	assert_near(bench_mpps(3000000, 2.0), 1.5, 1e-9);
	/* netperf: 1 s of CPU for 1 GiB = 1e6 µs / 1048576 KB. */
	assert_near(bench_service_demand(1000000, 1073741824ull), 1e6 / 1048576.0, 1e-12);
	assert_near(bench_service_demand(2048, 2048), 1024.0, 1e-9);
	assert_true(isnan(bench_service_demand(5, 0)));
	assert_near(bench_per_1000(25, 1000), 25.0, 1e-12);
	assert_true(isnan(bench_per_1000(25, 0)));
}

/* A made-up run: 2 s window, 1M frames of 1000 bytes, known CPU, notifications and drops. */
static void sample(struct bench_result *r)
{
	memset(r, 0, sizeof(*r));
	r->frame_size = 1000;
	r->queues = 1;
	r->queues_got = 1;
	snprintf(r->tx_mode, sizeof(r->tx_mode), "map");
	r->tx_mode_source = "pvnetd --tx-mode";
	r->api = "zerocopy";
	r->window_s = 2.0;
	r->a0 = (struct bench_counts){.frames = 500, .cpu_us = 1000, .front_tx_notify = 10};
	r->a1 = (struct bench_counts){
	    .frames = 1000600, .cpu_us = 501000, .front_tx_notify = 30, .front_tx_errors = 3};
	r->b0 = (struct bench_counts){.frames = 400, .bytes = 400000, .cpu_us = 2000, .gaps = 1};
	r->b1 = (struct bench_counts){.frames = 1000400,
				      .bytes = 1000400000,
				      .cpu_us = 702000,
				      .front_rx_notify = 5,
				      .corrupt = 2,
				      .out_of_order = 1,
				      .gaps = 8};
	r->back0.ok = r->back1.ok = true;
	r->back0.notifications = 100;
	r->back1.notifications = 1100;
	r->back1.reason[4] = 7; /* rx_queue_full */
	/* Three frames netback refused with an error response: netfront counts them too. */
	r->back1.reason[3] = 3; /* tx_bad_gref */
	r->back_end.reason[3] = 3;
	r->pvnetd_cpu_us = 300000;
	r->sys_busy_us = 1700000;
	r->sys_steal_us = 10000;
	r->a_end.frames = 1000700;
	r->b_end.frames = 1000690;
	r->back_end.reason[4] = 7;
	r->a_end.front_tx_errors = 3;
	r->learn_seen = true;
	r->steering = BENCH_STEER_QUEUE;
}

static void test_figures(void **state)
{
	struct bench_result r;
	struct bench_figures f;

	sample(&r);
	bench_figures(&r, &f);
	assert_int_equal(f.tx_frames, 1000100);
	assert_int_equal(f.rx_frames, 1000000);
	assert_int_equal(f.bytes, 1000000000);
	assert_near(f.gbit_s, 4.0, 1e-9);
	assert_near(f.mpps, 0.5, 1e-9);
	/* CPU: 0.5 s sender + 0.7 s receiver + 0.3 s pvnetd = 1.5e6 µs per 976562.5 KB. */
	assert_near(f.cpu_us_per_kb, 1.5e6 / (1e9 / 1024.0), 1e-9);
	assert_near(f.cpu_s_pvnetd, 0.3, 1e-9);
	assert_near(f.cpu_s_tx, 0.5, 1e-9);
	assert_near(f.cpu_s_rx, 0.7, 1e-9);
	/* The machine was busy 1.7 s: 0.2 s of it was not ours. */
	assert_near(f.cpu_s_others, 0.2, 1e-9);
	assert_near(f.cpu_s_steal, 0.01, 1e-9);
	/* 20 + 5 + 1000 notifications for 1e6 frames. */
	assert_int_equal(f.notifications, 1025);
	assert_int_equal(f.notify_front_tx, 20);
	assert_int_equal(f.notify_front_rx, 5);
	assert_int_equal(f.notify_back, 1000);
	assert_near(f.notifications_per_1000, 1.025, 1e-9);
	/* Each drop once: netfront's tx_errors are the frames of tx_bad_gref. */
	assert_int_equal(f.dropped, 7 + 3);
	assert_int_equal(f.corrupt, 2);
	assert_int_equal(f.out_of_order, 1);
	assert_int_equal(f.gaps, 7);
	assert_int_equal(f.unaccounted, 0);

	/*
	 * pvnetd's CPU read over 2.02 s around the receiver's 2 s window:
	 * counted at the rate of its own window.
	 */
	r.b0.t_ns = 1000000000;
	r.b1.t_ns = 3000000000;
	r.pvnetd_cpu_t0_ns = 990000000;
	r.pvnetd_cpu_t1_ns = 3010000000;
	bench_figures(&r, &f);
	assert_near(f.gbit_s, 4.0, 1e-9);
	assert_near(f.cpu_s_pvnetd, 0.3 * 2.0 / 2.02, 1e-6);
	assert_near(f.cpu_s_busy, 1.7 * 2.0 / 2.02, 1e-6); /* the machine's, likewise */
	assert_near(f.cpu_s_steal, 0.01 * 2.0 / 2.02, 1e-9);
	assert_near(f.cpu_us_per_kb, (1.2e6 + 0.3e6 * 2.0 / 2.02) / (1e9 / 1024.0), 1e-6);
	r.pvnetd_cpu_t0_ns = r.pvnetd_cpu_t1_ns = 0;

	/*
	 * pvnetd's CPU unknown (-d with a pvnetd we cannot see): no service
	 * demand and no "others", rather than figures missing pvnetd's share.
	 */
	r.pvnetd_cpu_us = -1;
	bench_figures(&r, &f);
	assert_true(isnan(f.cpu_s_pvnetd));
	assert_true(isnan(f.cpu_us_per_kb));
	assert_true(isnan(f.cpu_s_others));
	assert_near(f.cpu_s_busy, 1.7, 1e-9);
	/* pvnetd known to have used no CPU (a short run, clock ticks): 0 s, not unknown. */
	r.pvnetd_cpu_us = 0;
	bench_figures(&r, &f);
	assert_near(f.cpu_s_pvnetd, 0.0, 0);
	assert_near(f.cpu_us_per_kb, 1.2e6 / (1e9 / 1024.0), 1e-9);
	assert_near(f.cpu_s_others, 0.5, 1e-9);
	r.pvnetd_cpu_us = 300000;

	/* The receiver's own snapshot times, when there, set the window of the rates. */
	r.b0.t_ns = 1000000000;
	r.b1.t_ns = 5000000000;
	bench_figures(&r, &f);
	assert_near(f.window_s, 4.0, 1e-12);
	assert_near(f.mpps, 0.25, 1e-9);
	assert_near(f.gbit_s, 2.0, 1e-9);
	/*
	 * netback's counters read over 5 s around the receiver's 4 s: its 1000
	 * notifications count as 800 per 1e6 frames, with the frontends' 25.
	 */
	r.back0.t_ns = 500000000;
	r.back1.t_ns = 5500000000;
	r.back0.grant_known = r.back1.grant_known = true;
	r.back1.grant_copy_ops = 2000000;
	r.back1.grant_map_ops = 500000;
	r.back1.grant_unmap_ops = 250000;
	r.back1.grant_batches = 100000;
	bench_figures(&r, &f);
	assert_near(f.notifications_per_1000, (25 + 800) / 1000.0, 1e-9);
	assert_near(f.grant_ops_per_1000, 2750 * 0.8, 1e-9);
	assert_near(f.grant_map_per_1000, 500 * 0.8, 1e-9);
	assert_near(f.grant_unmap_per_1000, 250 * 0.8, 1e-9);
	assert_near(f.grant_batches_per_1000, 100 * 0.8, 1e-9);
	assert_int_equal(f.notify_back, 1000); /* the count itself stays the count */
	r.back0.t_ns = r.back1.t_ns = 0;
	r.back1.grant_copy_ops = r.back1.grant_map_ops = r.back1.grant_unmap_ops = 0;
	r.back1.grant_batches = 0;
	r.back0.grant_known = r.back1.grant_known = false;
	r.b0.t_ns = r.b1.t_ns = 0;

	/*
	 * The sender's rate is over the sender's own window (1 s between its
	 * snapshots), not the receiver's (0.9 s): 1.25e9 bytes a second.
	 */
	r.a0.t_ns = 1000000000;
	r.a1.t_ns = 2000000000;
	r.b0.t_ns = 1050000000;
	r.b1.t_ns = 1950000000;
	r.a1.bytes = r.a0.bytes + 1250000000;
	bench_figures(&r, &f);
	assert_near(f.tx_window_s, 1.0, 1e-12);
	assert_near(f.window_s, 0.9, 1e-12);
	assert_near(f.tx_kbyte_s, 1250000000 / 1024.0, 1e-6);
	assert_near(f.rx_kbyte_s, 1e9 / 1024.0 / 0.9, 1e-6);
	r.a0.t_ns = r.a1.t_ns = r.b0.t_ns = r.b1.t_ns = 0;

	/* No window measured (a run that failed first): no rates, null rather than 0. */
	r.window_s = 0;
	bench_figures(&r, &f);
	assert_true(isnan(f.gbit_s) && isnan(f.mpps));
	assert_true(isnan(f.tx_kbyte_s) && isnan(f.rx_kbyte_s));
	r.window_s = 2.0;

	/* Nothing received: rates 0, per-frame figures undefined, never a division by zero. */
	r.b1 = r.b0;
	bench_figures(&r, &f);
	assert_int_equal(f.rx_frames, 0);
	assert_near(f.gbit_s, 0.0, 0);
	assert_true(isnan(f.cpu_us_per_kb));
	assert_true(isnan(f.notifications_per_1000));
}

/*
 * Every count of the window is its end snapshot minus its start: what a
 * counter held before the window is not the window's.  Both frontends count
 * notifications on both of their rings, and every netback reason is a drop.
 */
static void test_figures_window_counts(void **state)
{
	struct bench_result r;
	struct bench_figures f;

	sample(&r);
	r.b0.corrupt = 1;
	r.b1.corrupt = 3;
	r.b0.out_of_order = 4;
	r.b1.out_of_order = 6;
	r.back0.reason[4] = 5;
	r.back1.reason[4] = 12; /* rx_queue_full: 7 in the window */
	r.a0.front_rx_notify = 2;
	r.a1.front_rx_notify = 6;
	r.b0.front_tx_notify = 1;
	r.b1.front_tx_notify = 8;
	bench_figures(&r, &f);
	assert_int_equal(f.corrupt, 2);
	assert_int_equal(f.out_of_order, 2);
	assert_int_equal(f.dropped, 7 + 3);
	assert_int_equal(f.notify_front_tx, 20 + 7);
	assert_int_equal(f.notify_front_rx, 4 + 5);
	assert_int_equal(f.notifications, 27 + 9 + 1000);
	assert_near(f.notifications_per_1000, 1.036, 1e-9);

	/* The last of netback's reasons is a drop like the others, in the window and the total. */
	r.back1.reason[BENCH_BACK_NREASONS - 1] = 4;
	r.back_end.reason[BENCH_BACK_NREASONS - 1] = 4;
	r.a_end.frames += 4;
	bench_figures(&r, &f);
	assert_int_equal(f.dropped, 7 + 3 + 4);
	assert_int_equal(f.unaccounted, 0);
}

/* A run that delivered damaged frames, or lost frames no counter explains, fails. */
static void test_run_check(void **state)
{
	struct bench_result r;

	sample(&r);
	r.back_end.ok = true;
	assert_true(bench_run_check(&r));
	assert_string_equal(r.error, "");

	/* Five frames sent that were neither received nor counted as dropped. */
	r.a_end.frames += 5;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "5 frames unaccounted for"));
	/* A single frame is one too many. */
	sample(&r);
	r.back_end.ok = true;
	r.a_end.frames += 1;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "1 frames unaccounted for"));
	/*
	 * More drops counted than frames missing: a double count on our own
	 * pvnetd (fails), other guests' frames dropped at B on a shared one.
	 */
	sample(&r);
	r.back_end.ok = true;
	r.back_end.reason[4] += 2;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "-2 frames unaccounted for"));
	sample(&r);
	r.back_end.ok = true;
	r.back_end.reason[4] += 2;
	r.shared_pvnetd = true;
	assert_true(bench_run_check(&r));
	r.a_end.frames += 5;
	assert_false(bench_run_check(&r));

	/* Without netback's counters after the drain, the sum cannot be made: the run fails. */
	sample(&r);
	r.back_end.ok = false;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "cannot be accounted for"));

	sample(&r);
	r.back_end.ok = true;
	r.b_end.corrupt = 1;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "1 corrupt frames"));

	/*
	 * Out of order with a queue per flow: a fault (or a stale buffer), the
	 * run fails; with a policy that may move flows (here hash) it is a figure.
	 */
	sample(&r);
	r.back_end.ok = true;
	r.b_end.out_of_order = 3;
	r.steering = BENCH_STEER_HASH;
	assert_true(bench_run_check(&r));
	r.steering = BENCH_STEER_QUEUE;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "3 frames out of order where every flow has a queue"));
	r.error[0] = '\0';
	r.b_end.out_of_order = 1;
	assert_false(bench_run_check(&r));
	assert_non_null(strstr(r.error, "1 frames out of order"));
	sample(&r);
	r.back_end.ok = true;
	r.steering = BENCH_STEER_QUEUE;
	assert_true(bench_run_check(&r));

	/* A run that failed already keeps its own reason. */
	sample(&r);
	snprintf(r.error, sizeof(r.error), "fork: boom");
	r.b_end.corrupt = 1;
	assert_false(bench_run_check(&r));
	assert_string_equal(r.error, "fork: boom");
}

static void test_result_json(void **state)
{
	static const char *const required[] = {
	    "frame_size", "queues",  "tx_mode",	      "tx_frames",
	    "rx_frames",  "dropped", "corrupt",	      "out_of_order",
	    "gbit_s",	  "mpps",    "cpu_us_per_kb", "notifications_per_1000",
	    "bytes",	  "drops",   "cpu_method",    "api",
	};
	struct bench_result r;
	json_t *o, *doc, *machine;

	sample(&r);
	o = bench_result2json(&r);
	assert_non_null(o);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		assert_non_null(json_object_get(o, required[i]));
	assert_int_equal(json_integer_value(json_object_get(o, "frame_size")), 1000);
	assert_string_equal(json_string_value(json_object_get(o, "tx_mode")), "map");
	assert_int_equal(json_integer_value(json_object_get(o, "rx_frames")), 1000000);
	assert_int_equal(json_integer_value(json_object_get(o, "dropped")), 10);
	assert_near(json_real_value(json_object_get(o, "gbit_s")), 4.0, 1e-9);
	assert_int_equal(json_integer_value(
			     json_object_get(json_object_get(o, "drops"), "netback_rx_queue_full")),
			 7);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "drops"), "netfront_tx_errors")),
	    3);
	assert_true(strstr(json_string_value(json_object_get(o, "cpu_method")), "rusage+procstat"));
	/* The interface's figures, each from its own counter (test_figures has the sums). */
	assert_int_equal(json_integer_value(json_object_get(o, "tx_frames")), 1000100);
	assert_int_equal(json_integer_value(json_object_get(o, "bytes")), 1000000000);
	assert_near(json_real_value(json_object_get(o, "mpps")), 0.5, 1e-9);
	assert_near(json_real_value(json_object_get(o, "cpu_us_per_kb")), 1.5e6 / (1e9 / 1024.0),
		    1e-9);
	assert_near(json_real_value(json_object_get(o, "notifications_per_1000")), 1.025, 1e-9);
	assert_int_equal(json_integer_value(json_object_get(o, "notifications")), 1025);
	assert_int_equal(json_integer_value(json_object_get(o, "corrupt")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "out_of_order")), 1);
	assert_int_equal(json_integer_value(json_object_get(o, "gaps")), 7);
	assert_near(json_real_value(json_object_get(json_object_get(o, "cpu_s"), "frontend_tx")),
		    0.5, 1e-9);
	assert_near(json_real_value(json_object_get(json_object_get(o, "cpu_s"), "frontend_rx")),
		    0.7, 1e-9);
	assert_near(json_real_value(json_object_get(json_object_get(o, "cpu_s"), "pvnetd")), 0.3,
		    1e-9);
	assert_near(json_real_value(json_object_get(json_object_get(o, "machine_cpu_s"), "others")),
		    0.2, 1e-9);
	assert_null(json_object_get(o, "error"));
	assert_string_equal(json_string_value(json_object_get(o, "steering")), "queue");
	assert_non_null(json_object_get(json_object_get(o, "run_totals"), "out_of_order"));
	assert_true(json_is_false(json_object_get(o, "migrate")));
	/* No sample of the host's round trip: null, not 0 ns. */
	assert_true(json_is_null(json_object_get(o, "host_rtt_ns")));
	json_decref(o);
	/* pvnetd's CPU unreadable: the method says the frontends only, and no service demand. */
	r.pvnetd_cpu_us = -1;
	o = bench_result2json(&r);
	assert_true(strstr(json_string_value(json_object_get(o, "cpu_method")), "frontends only"));
	assert_true(json_is_null(json_object_get(o, "cpu_us_per_kb")));
	json_decref(o);
	r.pvnetd_cpu_us = 300000;
	/* Queues asked for and negotiated apart; the run's totals from the end snapshots. */
	r.queues = 4;
	r.queues_got = 2;
	r.b_end.corrupt = 1;
	r.b_end.out_of_order = 5;
	o = bench_result2json(&r);
	assert_int_equal(json_integer_value(json_object_get(o, "queues")), 4);
	assert_int_equal(json_integer_value(json_object_get(o, "queues_negotiated")), 2);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "run_totals"), "tx_frames")),
	    1000700);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "run_totals"), "rx_frames")),
	    1000690);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "run_totals"), "corrupt")), 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "run_totals"), "out_of_order")),
	    5);
	json_decref(o);
	r.queues = r.queues_got = 1;
	r.b_end.corrupt = r.b_end.out_of_order = 0;
	r.host_rtt_cpus[0] = 0;
	r.host_rtt_cpus[1] = 1;
	r.host_rtt_ns[0] = 120;
	r.host_rtt_ns[1] = 410;
	o = bench_result2json(&r);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "host_rtt_ns"), "before")), 120);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "host_rtt_ns"), "after")), 410);
	assert_int_equal(json_integer_value(json_array_get(
			     json_object_get(json_object_get(o, "host_rtt_ns"), "cpus"), 1)),
			 1);
	json_decref(o);
	/* A failed sample is unknown on its own. */
	r.host_rtt_ns[0] = 0;
	o = bench_result2json(&r);
	assert_true(json_is_null(json_object_get(json_object_get(o, "host_rtt_ns"), "before")));
	json_decref(o);
	r.host_rtt_ns[0] = r.host_rtt_ns[1] = 0;
	r.steering = BENCH_STEER_XPS_SAFE;
	r.migrate = true;
	o = bench_result2json(&r);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "steering")), "xps-safe");
	assert_true(json_is_true(json_object_get(o, "migrate")));
	/* A steered sender has no netfront TX counters in the window: null, not 0. */
	assert_true(json_is_null(json_object_get(o, "notifications_per_1000")));
	assert_true(json_is_null(json_object_get(o, "notifications")));
	assert_true(
	    json_is_null(json_object_get(json_object_get(o, "notifications_by"), "netfront_tx")));
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "notifications_by"), "netback")),
	    1000);
	assert_true(json_is_null(json_object_get(o, "tx_ring_full")));
	assert_true(
	    json_is_null(json_object_get(json_object_get(o, "drops"), "netfront_tx_errors")));
	r.steering = BENCH_STEER_QUEUE;
	r.migrate = false;

	machine = json_pack("{s:s, s:i, s:s}", "cpu", "x", "cores", 2, "kernel", "6");
	doc = bench_doc2json(machine, "pvnet bench", json_pack("[o]", o), NULL);
	assert_non_null(doc);
	assert_true(json_is_object(json_object_get(doc, "machine")));
	assert_string_equal(json_string_value(json_object_get(doc, "command")), "pvnet bench");
	assert_int_equal(json_array_size(json_object_get(doc, "results")), 1);

	/* Undefined figures are JSON null, not NaN (which is not JSON). */
	r.b1 = r.b0;
	snprintf(r.error, sizeof(r.error), "vif of domain 3 did not connect");
	o = bench_result2json(&r);
	assert_true(json_is_null(json_object_get(o, "cpu_us_per_kb")));
	assert_string_equal(json_string_value(json_object_get(o, "error")),
			    "vif of domain 3 did not connect");
	char *text = json_dumps(o, 0);

	assert_non_null(text);
	assert_null(strstr(text, "nan"));
	free(text);
	json_decref(o);
	json_decref(doc);
}

static void test_table(void **state)
{
	struct bench_result r;
	char line[512];

	bench_table_header(line, sizeof(line));
	assert_non_null(strstr(line, "Gbit/s"));
	sample(&r);
	bench_table_row(&r, line, sizeof(line));
	assert_non_null(strstr(line, "1000"));
	assert_non_null(strstr(line, "4.000"));
	assert_non_null(strstr(line, "map"));
	assert_non_null(strstr(line, " queue "));
	assert_non_null(strstr(line, " no"));
	assert_non_null(strstr(line, " -/-"));
	/* Each column its own figure: tx_frames rx_frames Gbit/s Mpps ... dropped corrupt ooo. */
	{
		uint64_t tx, rx, dropped, corrupt, ooo;
		double gbit, mpps;

		assert_int_equal(sscanf(line,
					"%*u %*u %*s %*s %" SCNu64 " %" SCNu64
					" %lf %lf %*s %*s %*s %" SCNu64 " %" SCNu64 " %" SCNu64,
					&tx, &rx, &gbit, &mpps, &dropped, &corrupt, &ooo),
				 7);
		assert_int_equal(tx, 1000100);
		assert_int_equal(rx, 1000000);
		assert_near(gbit, 4.0, 1e-9);
		assert_near(mpps, 0.5, 1e-9);
		assert_int_equal(dropped, 10);
		assert_int_equal(corrupt, 2);
		assert_int_equal(ooo, 1);
	}
	r.host_rtt_ns[0] = 120;
	r.host_rtt_ns[1] = 410;
	bench_table_row(&r, line, sizeof(line));
	assert_non_null(strstr(line, " 120/410"));
	r.steering = BENCH_STEER_HASH;
	r.migrate = true;
	bench_table_row(&r, line, sizeof(line));
	assert_non_null(strstr(line, " hash "));
	assert_non_null(strstr(line, " yes"));
	bench_table_header(line, sizeof(line));
	assert_non_null(strstr(line, "steering"));
	assert_non_null(strstr(line, "mig"));
	assert_non_null(strstr(line, "host ns"));
	snprintf(r.error, sizeof(r.error), "boom");
	bench_table_row(&r, line, sizeof(line));
	assert_non_null(strstr(line, "failed: boom"));
	assert_non_null(strstr(line, "hash migrate"));
}

static void test_parse_steering(void **state)
{
	int st[BENCH_MAX_LIST];
	char err[256];

	assert_int_equal(bench_parse_steering("xps,hash,xps-safe", st, BENCH_MAX_LIST, err, 256),
			 3);
	assert_int_equal(st[0], BENCH_STEER_XPS);
	assert_int_equal(st[1], BENCH_STEER_HASH);
	assert_int_equal(st[2], BENCH_STEER_XPS_SAFE);
	assert_int_equal(bench_parse_steering("queue", st, BENCH_MAX_LIST, err, 256), 1);
	assert_int_equal(st[0], BENCH_STEER_QUEUE);
	assert_int_equal(bench_parse_steering("rss", st, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_non_null(strstr(err, "rss"));
	assert_int_equal(bench_parse_steering("hash,hash", st, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(bench_parse_steering("xps-saf", st, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_steering("hash,", st, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_steering("", st, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_steering("hash,xps", st, 1, err, 256), -E2BIG);
	/* Same numbers as enum pvnet_steering, and names that pvnet_steering_parse() takes. */
	assert_string_equal(bench_steering_name(BENCH_STEER_HASH), "hash");
	assert_string_equal(bench_steering_name(BENCH_STEER_XPS), "xps");
	assert_string_equal(bench_steering_name(BENCH_STEER_XPS_SAFE), "xps-safe");
	assert_string_equal(bench_steering_name(BENCH_STEER_QUEUE), "queue");
	assert_string_equal(bench_steering_name(7), "unknown");
	assert_string_equal(bench_steering_name(-2), "unknown");
}

static void test_parse_sizes(void **state)
{
	uint32_t s[BENCH_MAX_LIST];
	char err[256];

	assert_int_equal(bench_parse_sizes("64,1514,9000,65535", s, BENCH_MAX_LIST, err, 256), 4);
	assert_int_equal(s[0], 64);
	assert_int_equal(s[3], 65535);
	assert_int_equal(bench_parse_sizes("60", s, BENCH_MAX_LIST, err, 256), 1);
	assert_int_equal(bench_parse_sizes("65536", s, BENCH_MAX_LIST, err, 256), -ERANGE);
	assert_non_null(strstr(err, "16 bits"));
	assert_non_null(strstr(err, "65535"));
	assert_int_equal(bench_parse_sizes("59", s, BENCH_MAX_LIST, err, 256), -ERANGE);
	assert_int_equal(bench_parse_sizes("64,,128", s, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_sizes("64,", s, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_sizes("", s, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_sizes("1k", s, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_sizes("-64", s, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_int_equal(bench_parse_sizes("64,64,64", s, 2, err, 256), -E2BIG);
}

static void test_parse_other(void **state)
{
	unsigned int q[BENCH_MAX_LIST];
	char m[BENCH_MAX_LIST][BENCH_MODE_LEN], err[256];
	double d;

	assert_int_equal(bench_parse_queues("1,2,4,8", q, BENCH_MAX_LIST, err, 256), 4);
	assert_int_equal(q[3], 8);
	assert_int_equal(bench_parse_queues("0", q, BENCH_MAX_LIST, err, 256), -ERANGE);
	assert_int_equal(bench_parse_queues("17", q, BENCH_MAX_LIST, err, 256), -ERANGE);
	assert_int_equal(bench_parse_modes("copy,map", m, BENCH_MAX_LIST, err, 256), 2);
	assert_string_equal(m[0], "copy");
	assert_string_equal(m[1], "map");
	assert_int_equal(bench_parse_modes("zero", m, BENCH_MAX_LIST, err, 256), -EINVAL);
	assert_non_null(strstr(err, "zero"));
	/* Issue 7's persistent grants: a third mode, passed to pvnetd like the others. */
	assert_int_equal(bench_parse_modes("copy,map,persistent", m, BENCH_MAX_MODES, err, 256), 3);
	assert_string_equal(m[2], "persistent");
	assert_int_equal(bench_parse_modes("map,map", m, BENCH_MAX_MODES, err, 256), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(
	    bench_parse_modes("copy,map,persistent,copy", m, BENCH_MAX_MODES, err, 256), -E2BIG);
	assert_int_equal(bench_parse_seconds("0.3", &d), 0);
	assert_near(d, 0.3, 1e-12);
	assert_int_equal(bench_parse_seconds("2", &d), 0);
	assert_int_equal(bench_parse_seconds("0", &d), -EINVAL);
	assert_int_equal(bench_parse_seconds("x", &d), -EINVAL);
	assert_int_equal(bench_parse_seconds("1s", &d), -EINVAL);
	assert_int_equal(bench_parse_seconds("nan", &d), -EINVAL);
}

static void test_procstat(void **state)
{
	uint64_t t;

	assert_int_equal(bench_procstat_ticks("1234 (pvnetd) S 1 1234 1234 0 -1 4194560 100 0 0 0 "
					      "250 50 0 0 20 0 3 0 100 0 0",
					      &t),
			 0);
	assert_int_equal(t, 300);
	/* A name with spaces and ')' inside. */
	assert_int_equal(bench_procstat_ticks("7 (a) b) R 1 7 7 0 -1 0 0 0 0 0 11 22 0", &t), 0);
	assert_int_equal(t, 33);
	assert_int_equal(bench_procstat_ticks("garbage", &t), -EINVAL);

	uint64_t busy, steal;

	assert_int_equal(
	    bench_procstat_cpu("cpu  100 5 50 9000 7 3 2 11 0 0\ncpu0 1 2 3\n", &busy, &steal), 0);
	assert_int_equal(busy, 100 + 5 + 50 + 3 + 2);
	assert_int_equal(steal, 11);
	assert_int_equal(bench_procstat_cpu("cpu0 1 2 3 4 5 6 7 8\n", &busy, &steal), -EINVAL);
	assert_int_equal(bench_procstat_ticks("1 (x) S 1", &t), -EINVAL);
}

static void test_back_from_status(void **state)
{
	json_t *st =
	    json_pack("{s:[{s:i, s:[{s:i, s:i, s:i, s:i}, {s:i, s:i}]},"
		      "    {s:i, s:[{s:i, s:i, s:i}]},"
		      "    {s:i, s:[{s:i, s:i}]}]}",
		      "vifs", "domid", 1, "queues", "tx_zerocopy_sent", 10, "notifications", 3,
		      "tx_bad_gref", 1, "tx_dropped", 1, "tx_zerocopy_sent", 5, "notifications", 2,
		      "domid", 2, "queues", "notifications", 40, "rx_queue_full", 6, "rx_dropped",
		      6, "domid", 9, "queues", "notifications", 1000, "rx_queue_full", 1000);
	/* The sender's RX and the receiver's TX drops are no part of the stream. */
	json_t *other = json_pack("{s:[{s:i, s:[{s:i}]}, {s:i, s:[{s:i}]}]}", "vifs", "domid", 1,
				  "queues", "rx_queue_full", 4, "domid", 2, "queues", "tx_runt", 2);
	struct bench_back b;

	bench_back_from_status(st, 1, 2, &b);
	assert_true(b.ok);
	assert_int_equal(b.tx_zerocopy_sent, 15);
	assert_int_equal(b.notifications, 45);
	assert_int_equal(b.reason[3], 1); /* tx_bad_gref */
	assert_int_equal(b.reason[4], 6); /* rx_queue_full: domain 9 not counted */
	assert_int_equal(b.tx_dropped, 1);
	assert_int_equal(b.rx_dropped, 6);
	assert_string_equal(bench_back_reasons[3], "tx_bad_gref");
	assert_string_equal(bench_back_reasons[4], "rx_queue_full");
	bench_back_from_status(st, 1, 5, &b);
	assert_false(b.ok);
	json_decref(st);
	bench_back_from_status(other, 1, 2, &b);
	assert_true(b.ok);
	assert_int_equal(b.reason[4], 0);
	assert_int_equal(b.reason[2], 0); /* tx_runt */
	json_decref(other);
	/* Both vifs, but no queue to read grant counters from: unknown, not zero. */
	other = json_pack("{s:[{s:i, s:[]}, {s:i, s:[]}]}", "vifs", "domid", 1, "queues", "domid",
			  2, "queues");
	bench_back_from_status(other, 1, 2, &b);
	assert_true(b.ok);
	assert_false(b.grant_known);
	json_decref(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seq_in_order),
	    cmocka_unit_test(test_seq_table),
	    cmocka_unit_test(test_seq_first_frame_late),
	    cmocka_unit_test(test_rates),
	    cmocka_unit_test(test_figures),
	    cmocka_unit_test(test_figures_window_counts),
	    cmocka_unit_test(test_run_check),
	    cmocka_unit_test(test_result_json),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_parse_sizes),
	    cmocka_unit_test(test_parse_other),
	    cmocka_unit_test(test_parse_steering),
	    cmocka_unit_test(test_procstat),
	    cmocka_unit_test(test_back_from_status),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
