// SPDX-License-Identifier: MIT
/* test_report.c - pvnet bench: sections' statistics, verdicts, JSON shape, tables, grant figures */
#include <errno.h>
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

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (double)(eps))

static void test_stat(void **state)
{
	const double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
	const double with_nan[] = {NAN, 5, 1, NAN};
	struct bench_stat s;

	bench_stat_of(odd, 3, &s);
	assert_near(s.median, 2, 0);
	assert_near(s.min, 1, 0);
	assert_near(s.max, 3, 0);
	assert_int_equal(s.n, 3);
	bench_stat_of(even, 4, &s);
	assert_near(s.median, 2.5, 1e-12); /* the mean of the two middle values */
	assert_near(s.min, 1, 0);
	assert_near(s.max, 4, 0);
	bench_stat_of(one, 1, &s);
	assert_near(s.median, 7, 0);
	assert_near(s.min, 7, 0);
	assert_near(s.max, 7, 0);
	/* Figures a run could not have (nothing received) are left out, not counted as 0. */
	bench_stat_of(with_nan, 4, &s);
	assert_int_equal(s.n, 2);
	assert_near(s.median, 3, 0);
	bench_stat_of(with_nan, 1, &s);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.median) && isnan(s.min) && isnan(s.max));
	bench_stat_of(NULL, 0, &s);
	assert_int_equal(s.n, 0);
}

/* A successful run of @gbit Gbit/s: 1 s window, frames of @size bytes. */
static void run_of(struct bench_result *r, uint32_t size, double gbit, uint64_t ooo)
{
	uint64_t bytes = (uint64_t)(gbit * 1e9 / 8);

	memset(r, 0, sizeof(*r));
	r->frame_size = size;
	r->queues = 1;
	snprintf(r->tx_mode, sizeof(r->tx_mode), "map");
	r->window_s = 1.0;
	r->a1 = (struct bench_counts){.frames = bytes / size, .bytes = bytes, .cpu_us = 500000};
	r->b1 = (struct bench_counts){
	    .frames = bytes / size, .bytes = bytes, .cpu_us = 500000, .out_of_order = ooo};
	r->back0.ok = r->back1.ok = true;
	r->pvnetd_cpu_us = 250000;
	r->sys_busy_us = r->sys_steal_us = -1;
	r->steering = BENCH_STEER_QUEUE;
}

static void test_point(void **state)
{
	struct bench_point p;
	struct bench_result r;
	struct bench_stat s;
	json_t *o;

	bench_point_init(&p, 1514, 2, "map", BENCH_STEER_QUEUE, false);
	assert_true(isnan(p.ratio) && isnan(p.field));
	run_of(&r, 1514, 10, 0);
	bench_point_add(&p, &r, 4);
	run_of(&r, 1514, 30, 0);
	bench_point_add(&p, &r, 9);
	run_of(&r, 1514, 20, 0);
	bench_point_add(&p, &r, 11);
	snprintf(r.error, sizeof(r.error), "vif did not connect");
	bench_point_add(&p, &r, 12);
	assert_int_equal(p.nruns, 3);
	assert_int_equal(p.nfailed, 1);
	assert_int_equal(p.nresults, 4);
	bench_point_stat(&p, BENCH_FIG_GBIT_S, &s);
	assert_near(s.median, 20, 1e-6);
	assert_near(s.min, 10, 1e-6);
	assert_near(s.max, 30, 1e-6);
	/* KByte/s as netio has it: 1024 bytes. */
	bench_point_stat(&p, BENCH_FIG_RX_KBYTE_S, &s);
	assert_near(s.median, 20e9 / 8 / 1024, 1);
	/* No grant counters in this pvnetd's status: unknown, not zero. */
	bench_point_stat(&p, BENCH_FIG_GRANT_OPS_PER_1000, &s);
	assert_int_equal(s.n, 0);

	o = bench_point2json(&p);
	assert_non_null(o);
	for (unsigned int f = 0; f < BENCH_FIG_N; f++) {
		assert_non_null(json_object_get(o, bench_fig_names[f]));
		assert_non_null(json_object_get(json_object_get(o, "min"), bench_fig_names[f]));
		assert_non_null(json_object_get(json_object_get(o, "max"), bench_fig_names[f]));
	}
	assert_near(json_real_value(json_object_get(o, "gbit_s")), 20, 1e-6);
	assert_near(json_real_value(json_object_get(json_object_get(o, "min"), "gbit_s")), 10,
		    1e-6);
	assert_near(json_real_value(json_object_get(json_object_get(o, "max"), "gbit_s")), 30,
		    1e-6);
	assert_true(json_is_null(json_object_get(o, "grant_ops_per_1000")));
	assert_int_equal(json_integer_value(json_object_get(o, "repeats")), 3);
	assert_int_equal(json_integer_value(json_object_get(o, "failed")), 1);
	assert_int_equal(json_array_size(json_object_get(o, "results")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(o, "results"), 1)), 9);
	assert_string_equal(json_string_value(json_object_get(o, "error")), "vif did not connect");
	assert_true(json_is_null(json_object_get(o, "ratio")));
	assert_int_equal(json_integer_value(json_object_get(o, "queues")), 2);
	assert_string_equal(json_string_value(json_object_get(o, "steering")), "queue");
	json_decref(o);
}

/* Every figure of a run reaches its own place in the point; no more runs than there is room for. */
static void test_point_figures(void **state)
{
	struct bench_point p;
	struct bench_result r;

	bench_point_init(&p, 1000, 1, "map", BENCH_STEER_QUEUE, false);
	run_of(&r, 1000, 8, 2); /* 1e9 bytes, 1e6 frames in 1 s */
	r.a1.bytes = 2000000000;
	r.b1.corrupt = 7;
	r.b1.gaps = 9;
	r.b1.front_rx_notify = 3000;
	r.back1.reason[4] = 5; /* rx_queue_full */
	bench_point_add(&p, &r, 0);
	assert_near(bench_point_median(&p, BENCH_FIG_GBIT_S), 8, 1e-9);
	assert_near(bench_point_median(&p, BENCH_FIG_MPPS), 1, 1e-9);
	assert_near(bench_point_median(&p, BENCH_FIG_TX_KBYTE_S), 2e9 / 1024, 1e-6);
	assert_near(bench_point_median(&p, BENCH_FIG_RX_KBYTE_S), 1e9 / 1024, 1e-6);
	/* 0.5 + 0.5 + 0.25 s of CPU per 1e9 / 1024 KB. */
	assert_near(bench_point_median(&p, BENCH_FIG_CPU_US_PER_KB), 1.25e6 / (1e9 / 1024), 1e-9);
	assert_near(bench_point_median(&p, BENCH_FIG_NOTIFICATIONS_PER_1000), 3, 1e-9);
	assert_near(bench_point_median(&p, BENCH_FIG_DROPPED), 5, 0);
	assert_near(bench_point_median(&p, BENCH_FIG_OUT_OF_ORDER), 2, 0);

	/* A 16th run has no room: it is left out, not written past the figures. */
	for (unsigned int i = 1; i <= BENCH_MAX_REPEAT; i++)
		bench_point_add(&p, &r, (int)i);
	assert_int_equal(p.nruns, BENCH_MAX_REPEAT);
	assert_int_equal(p.nresults, BENCH_MAX_REPEAT);
	assert_near(bench_point_median(&p, BENCH_FIG_MPPS), 1, 1e-9);
}

/* A point whose runs had these Gbit/s (and out-of-order counts). */
static void pt(struct bench_point *p, uint32_t size, unsigned int q, const char *mode, int steer,
	       const double *gbit, const double *ooo, unsigned int n)
{
	bench_point_init(p, size, q, mode, steer, steer != BENCH_STEER_QUEUE);
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int f = 0; f < BENCH_FIG_N; f++)
			p->v[f][i] = NAN;
		p->v[BENCH_FIG_GBIT_S][i] = gbit[i];
		p->v[BENCH_FIG_RX_KBYTE_S][i] = gbit[i] * 1e9 / 8 / 1024;
		p->v[BENCH_FIG_CPU_US_PER_KB][i] = 1.0 / gbit[i];
		p->v[BENCH_FIG_OUT_OF_ORDER][i] = ooo ? ooo[i] : 0;
	}
	p->nruns = n;
}

static void sec(struct bench_section *s, enum bench_sec id, unsigned int npts)
{
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->selected = true;
	s->pts = calloc(npts ? npts : 1, sizeof(*s->pts));
	s->npts = npts;
	assert_non_null(s->pts);
}

static void test_verdict_vcpus(void **state)
{
	const double g1[] = {10.0, 9.0, 11.0}, g2[] = {10.5, 10.5, 10.5}, g4[] = {9.8, 9.8, 9.8},
		     g8[] = {4.0, 4.0, 4.0};
	struct bench_section s;

	sec(&s, BENCH_SEC_VCPUS, 4);
	pt(&s.pts[0], 1514, 1, "map", BENCH_STEER_QUEUE, g1, NULL, 3);
	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_QUEUE, g2, NULL, 3);
	pt(&s.pts[2], 1514, 4, "map", BENCH_STEER_QUEUE, g4, NULL, 3);
	pt(&s.pts[3], 1514, 8, "map", BENCH_STEER_QUEUE, g8, NULL, 3);
	bench_section_verdict(&s);
	/* The ratio of medians: 9.8 / 10. */
	assert_near(s.pts[2].ratio, 0.98, 1e-9);
	assert_near(s.pts[0].ratio, 1.0, 1e-9);
	assert_non_null(strstr(s.verdict, "4 vCPUs: 0.98x of 1 vCPU"));
	assert_non_null(strstr(s.verdict, "field report: 0.11x"));
	assert_non_null(strstr(s.verdict, "8: 0.40x"));
	assert_non_null(strstr(s.verdict, "COLLAPSE"));
	/* Without the 8-queue point: the worst is 0.98, no collapse. */
	s.npts = 3;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "no collapse"));
	assert_null(strstr(s.verdict, "COLLAPSE"));
	/* Every 4-queue run failed: what was not measured is not claimed. */
	s.pts[2].nruns = 0;
	s.pts[2].nfailed = 3;
	bench_section_verdict(&s);
	assert_null(strstr(s.verdict, "no collapse"));
	assert_non_null(strstr(s.verdict, "INCOMPLETE: 4 queues failed"));
	/* ... but a collapse measured elsewhere is still one. */
	s.npts = 4;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "COLLAPSE: 0.40x at 8 queues"));
	s.npts = 3;
	s.pts[2].nruns = 3;
	/* No 1-queue run succeeded: nothing to divide by, and it says so. */
	s.pts[0].nruns = 0;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "no successful 1-queue run"));
	free(s.pts);

	/* Without a 4-queue point, the verdict leads with the most queues measured. */
	sec(&s, BENCH_SEC_VCPUS, 3);
	pt(&s.pts[0], 1514, 1, "map", BENCH_STEER_QUEUE, g1, NULL, 3);
	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_QUEUE, g2, NULL, 3);
	pt(&s.pts[2], 1514, 8, "map", BENCH_STEER_QUEUE, g8, NULL, 3);
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "8 vCPUs: 0.40x of 1 vCPU (2: 1.05x)"));
	/* Exactly the target keeps it: every Q >= 0.95x. */
	const double g95[] = {9.5};

	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_QUEUE, g95, NULL, 1);
	s.npts = 2;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "no collapse (every Q >= 0.95x)"));
	free(s.pts);
}

static void test_verdict_tx_mode(void **state)
{
	const double c1[] = {10}, m1[] = {8}, c64[] = {20}, m64[] = {25}, p64[] = {30};
	struct bench_section s;

	sec(&s, BENCH_SEC_TX_MODE, 5);
	pt(&s.pts[0], 1514, 1, "copy", BENCH_STEER_QUEUE, c1, NULL, 1);
	pt(&s.pts[1], 1514, 1, "map", BENCH_STEER_QUEUE, m1, NULL, 1);
	pt(&s.pts[2], 65535, 1, "copy", BENCH_STEER_QUEUE, c64, NULL, 1);
	pt(&s.pts[3], 65535, 1, "map", BENCH_STEER_QUEUE, m64, NULL, 1);
	pt(&s.pts[4], 65535, 1, "persistent", BENCH_STEER_QUEUE, p64, NULL, 1);
	bench_section_verdict(&s);
	assert_near(s.pts[1].ratio, 0.8, 1e-9);
	assert_near(s.pts[3].ratio, 1.25, 1e-9);
	assert_near(s.pts[4].ratio, 1.5, 1e-9);
	assert_near(s.pts[0].ratio, 1.0, 1e-9);
	/* Largest frame first, where the field report measured. */
	assert_non_null(strstr(s.verdict, "65535 B: map 1.25x copy (us/KB 0.80x)"));
	assert_non_null(strstr(s.verdict, "persistent 1.50x copy"));
	assert_true(strstr(s.verdict, "65535 B") < strstr(s.verdict, "1514 B"));
	assert_non_null(strstr(s.verdict, "field report: map 1.16x copy"));
	/* A failed mode is named, not divided. */
	s.pts[4].nruns = 0;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "persistent failed"));
	assert_true(isnan(s.pts[4].ratio));
	free(s.pts);
}

static void test_verdict_steering(void **state)
{
	const double gh[] = {9}, gx[] = {10}, gs[] = {11};
	const double oh[] = {0}, ox[] = {4000}, os[] = {0}, bad[] = {3};
	struct bench_section s;

	sec(&s, BENCH_SEC_STEERING, 3);
	pt(&s.pts[0], 1514, 2, "map", BENCH_STEER_HASH, gh, oh, 1);
	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_XPS, gx, ox, 1);
	pt(&s.pts[2], 1514, 2, "map", BENCH_STEER_XPS_SAFE, gs, os, 1);
	bench_section_verdict(&s);
	assert_near(s.pts[0].ratio, 0.9, 1e-9);
	assert_near(s.pts[2].ratio, 1.1, 1e-9);
	assert_non_null(strstr(s.verdict, "xps 4000"));
	assert_non_null(strstr(s.verdict, "hash 0"));
	assert_non_null(strstr(s.verdict, "kept every flow in order"));
	assert_non_null(strstr(s.verdict, "1621"));
	/* hash failed: its order is unknown, so it cannot be said to be kept. */
	s.pts[0].nruns = 0;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "hash failed"));
	assert_null(strstr(s.verdict, "kept every flow in order"));
	assert_non_null(strstr(s.verdict, "INCOMPLETE"));
	/* xps failing leaves the claim about hash and xps-safe standing. */
	pt(&s.pts[0], 1514, 2, "map", BENCH_STEER_HASH, gh, oh, 1);
	s.pts[1].nruns = 0;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "kept every flow in order"));
	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_XPS, gx, ox, 1);
	pt(&s.pts[2], 1514, 2, "map", BENCH_STEER_XPS_SAFE, gs, bad, 1);
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "REORDERED"));
	/* One reordering run of three is one: the median is 0, the maximum is not. */
	const double g3[] = {11, 11, 11}, once[] = {0, 3, 0};

	pt(&s.pts[2], 1514, 2, "map", BENCH_STEER_XPS_SAFE, g3, once, 3);
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "xps-safe 0"));
	assert_non_null(strstr(s.verdict, "REORDERED"));
	free(s.pts);
}

static void test_verdict_sizes(void **state)
{
	/* 1 Gbit/s = 122070 KByte/s: about the field report's 1k..32k figures. */
	const double g64[] = {0.5}, g1k[] = {1.0}, g32k[] = {2.0}, g64k[] = {30};
	struct bench_section s;

	sec(&s, BENCH_SEC_SIZES, 4);
	pt(&s.pts[0], 64, 1, "map", BENCH_STEER_QUEUE, g64, NULL, 1);
	pt(&s.pts[1], 1024, 1, "map", BENCH_STEER_QUEUE, g1k, NULL, 1);
	pt(&s.pts[2], 32768, 1, "map", BENCH_STEER_QUEUE, g32k, NULL, 1);
	pt(&s.pts[3], 65535, 1, "map", BENCH_STEER_QUEUE, g64k, NULL, 1);
	bench_section_verdict(&s);
	assert_near(s.pts[1].field, 92083, 0);
	assert_near(s.pts[1].ratio, 1e9 / 8 / 1024 / 92083, 1e-9);
	assert_near(s.pts[2].field, 123743, 0);
	assert_true(isnan(s.pts[0].ratio) && isnan(s.pts[3].ratio));
	assert_non_null(strstr(s.verdict, "1k..32k frames"));
	assert_non_null(strstr(s.verdict, "92083..126248"));
	assert_non_null(strstr(s.verdict, "64 KiB: 30.0 Gbit/s"));
	/* The Rx range of the netio sizes, and the 64 B frame rate. */
	assert_non_null(strstr(s.verdict, "Rx 122070..244141 KByte/s"));
	s.pts[0].v[BENCH_FIG_MPPS][0] = 0.98;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "64 B: 0.98 Mpps"));
	free(s.pts);
}

static void test_tcp(void **state)
{
	struct bench_section s;
	struct bench_tcp_case c;
	json_t *o, *runs;

	assert_int_equal(bench_tcp_parse_line("pvnet-4q-4\t4.27\t4.163\t90\t80\t0\t3", &c), 0);
	assert_int_equal(c.path, BENCH_TCP_PVNET);
	assert_int_equal(c.streams, 4);
	assert_near(c.gbit_s, 4.27, 1e-12);
	assert_near(c.sd_us_per_kb, 4.163, 1e-12);
	assert_int_equal(c.ofo, 3);
	assert_int_equal(bench_tcp_parse_line("veth-1\t8\t2\t50\t50\t12\t0", &c), 0);
	assert_int_equal(c.path, BENCH_TCP_VETH);
	assert_int_equal(c.streams, 1);
	assert_int_equal(c.retrans, 12);
	assert_int_equal(bench_tcp_parse_line("tapfwd-1\t6.0\t1.5\t60\t30\t0\t0\t640", &c), 0);
	assert_int_equal(c.path, BENCH_TCP_TAPFWD);
	assert_int_equal(c.streams, 1);
	/* Columns the script may add later (adapters_ms/GB) are ignored. */
	assert_int_equal(bench_tcp_parse_line("pvnet-1q-1\t5.0\t3.0\t50\t50\t1\t2\t312", &c), 0);
	assert_near(c.gbit_s, 5.0, 1e-12);
	assert_int_equal(c.ofo, 2);
	assert_int_equal(bench_tcp_parse_line("veth-4\t8\t2\t50\t50\t0\t0\t-", &c), 0);
	assert_int_equal(bench_tcp_parse_line("case\tGbit/s\tSD_us/KB", &c), -EINVAL);
	assert_int_equal(bench_tcp_parse_line("# 2 CPUs", &c), -EINVAL);
	assert_int_equal(bench_tcp_parse_line("other-1\t1\t1\t1\t1\t1\t1", &c), -EINVAL);

	memset(&s, 0, sizeof(s));
	s.id = BENCH_SEC_TCP;
	bench_tcp_parse_line("veth-1\t8.0\t2.0\t50\t50\t0\t0", &s.tcp[0]);
	bench_tcp_parse_line("pvnet-1q-1\t4.0\t5.0\t50\t50\t0\t0", &s.tcp[1]);
	s.ntcp = 2;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "1 stream: pvnet 4.00 Gbit/s, 0.50x veth"));
	assert_non_null(strstr(s.verdict, "service demand 2.50x veth"));
	assert_non_null(strstr(s.verdict, "TCPOFOQueue 0"));
	assert_non_null(strstr(s.verdict, "902 Mbit/s"));
	assert_null(strstr(s.verdict, "tapfwd"));
	/* With the TAP forwarder measured: pvnet against it, it against veth. */
	bench_tcp_parse_line("tapfwd-1\t4.8\t1.5\t50\t50\t0\t0", &s.tcp[2]);
	s.ntcp = 3;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "(0.83x tapfwd, the cheapest TAP-to-TAP path, itself "
					  "0.60x veth)"));
	/* A line whose stream count is 0 is no case. */
	assert_int_equal(bench_tcp_parse_line("veth-0\t8\t2\t50\t50\t0\t0", &c), -EINVAL);
	/* With 4 streams through 4 queues: pvnet 4 over pvnet 1. */
	bench_tcp_parse_line("pvnet-4q-4\t6.0\t4.0\t90\t80\t7\t2", &s.tcp[3]);
	s.ntcp = 4;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "4 streams: pvnet 6.00 Gbit/s"));
	assert_non_null(strstr(s.verdict, "pvnet 4 queues/4 streams vs 1: 1.50x"));
	o = bench_section2json(&s);
	runs = json_object_get(o, "runs");
	assert_int_equal(json_array_size(runs), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 2), "path")),
			    "tapfwd");
	assert_near(json_real_value(json_object_get(json_array_get(runs, 3), "gbit_s")), 6.0,
		    1e-12);
	assert_near(
	    json_real_value(json_object_get(json_array_get(runs, 3), "service_demand_us_per_kb")),
	    4.0, 1e-12);
	assert_int_equal(
	    json_integer_value(json_object_get(json_array_get(runs, 3), "retransmits")), 7);
	assert_int_equal(
	    json_integer_value(json_object_get(json_array_get(runs, 3), "tcp_ofo_queue")), 2);
	json_decref(o);
	/* The table: case, streams, Gbit/s, SD, retransmits, TCPOFOQueue. */
	{
		char *buf = NULL, name[24];
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		unsigned int streams;
		double g, sd;
		long long re, ofo;

		assert_non_null(f);
		bench_section_print(&s, 1, f);
		fclose(f);
		assert_non_null(strstr(buf, "pvnet-4q-4"));
		assert_int_equal(sscanf(strstr(buf, "pvnet-4q-4"), "%23s %u %lf %lf %lld %lld",
					name, &streams, &g, &sd, &re, &ofo),
				 6);
		assert_int_equal(streams, 4);
		assert_near(g, 6.0, 1e-9);
		assert_near(sd, 4.0, 1e-9);
		assert_int_equal(re, 7);
		assert_int_equal(ofo, 2);
		free(buf);
	}
}

static void test_peers(void **state)
{
	const double g64[] = {1.0}, g9k[] = {20};
	struct bench_section s;
	json_t *o, *row;

	sec(&s, BENCH_SEC_PEERS, 2);
	pt(&s.pts[0], 64, 1, "map", BENCH_STEER_QUEUE, g64, NULL, 1);
	pt(&s.pts[1], 9000, 1, "map", BENCH_STEER_QUEUE, g9k, NULL, 1);
	s.peers[0] = (struct bench_peer_row){64, 4.0, 8.0, 0.5, 1.0};
	s.peers[1] = (struct bench_peer_row){9000, 10.0, 0.1, NAN, NAN};
	s.npeers = 2;
	bench_section_verdict(&s);
	assert_non_null(strstr(s.verdict, "pvnet/memif Gbit/s: 0.25x (64 B) .. 2.00x (9000 B)"));
	assert_non_null(strstr(s.verdict, "pvnet/veth Gbit/s: 2.00x (64 B)"));
	/* The median of the ratios: of 0.25 and 2 for memif, of the one ratio for veth. */
	assert_non_null(strstr(s.verdict, "(9000 B), median 1.12x"));
	assert_non_null(strstr(s.verdict, "2.00x (64 B) .. 2.00x (64 B), median 2.00x"));
	s.pts[1].v[BENCH_FIG_MPPS][0] = 0.28;
	o = bench_section2json(&s);
	row = json_array_get(json_object_get(o, "runs"), 1);
	assert_near(json_real_value(json_object_get(row, "pvnet_gbit_s")), 20, 1e-9);
	assert_near(json_real_value(json_object_get(row, "pvnet_mpps")), 0.28, 1e-9);
	assert_near(json_real_value(json_object_get(row, "memif_mpps")), 0.1, 1e-9);
	assert_near(json_real_value(json_object_get(row, "pvnet_per_memif")), 2.0, 1e-9);
	assert_true(json_is_null(json_object_get(row, "veth_gbit_s")));
	assert_true(json_is_null(json_object_get(row, "pvnet_per_veth")));
	assert_int_equal(json_array_size(json_object_get(o, "pvnet")), 2);
	json_decref(o);
	free(s.pts);
}

static void test_section_json(void **state)
{
	static const char *const keys[] = {"title", "field_report", "ratio_of",
					   "runs",  "verdict",	    "skipped"};
	const double g[] = {5, 6};
	struct bench_section s;
	json_t *o, *doc;
	char *text;

	sec(&s, BENCH_SEC_VCPUS, 2);
	pt(&s.pts[0], 1514, 1, "map", BENCH_STEER_QUEUE, g, NULL, 2);
	pt(&s.pts[1], 1514, 2, "map", BENCH_STEER_QUEUE, g, NULL, 2);
	bench_section_verdict(&s);
	o = bench_section2json(&s);
	assert_non_null(o);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(json_object_get(o, keys[i]));
	assert_true(json_is_null(json_object_get(o, "skipped")));
	assert_string_equal(json_string_value(json_object_get(o, "verdict")), s.verdict);
	assert_int_equal(json_array_size(json_object_get(o, "runs")), 2);
	assert_near(json_real_value(
			json_object_get(json_array_get(json_object_get(o, "runs"), 1), "ratio")),
		    1.0, 1e-9);

	/* The document: sections beside machine, command and results; no NaN anywhere. */
	doc = bench_doc2json(json_pack("{s:s, s:i, s:s}", "cpu", "x", "cores", 2, "kernel", "6"),
			     "pvnet bench", json_array(), json_pack("{s:o}", "vcpus", o));
	assert_non_null(json_object_get(json_object_get(doc, "sections"), "vcpus"));
	text = json_dumps(doc, 0);
	assert_null(strstr(text, "nan"));
	free(text);
	json_decref(doc);

	/* A skipped section: the reason, and a verdict that says it. */
	free(s.pts);
	memset(&s, 0, sizeof(s));
	s.id = BENCH_SEC_TCP;
	snprintf(s.skipped, sizeof(s.skipped), "not root");
	bench_section_verdict(&s);
	assert_string_equal(s.verdict, "skipped: not root");
	o = bench_section2json(&s);
	assert_string_equal(json_string_value(json_object_get(o, "skipped")), "not root");
	assert_int_equal(json_array_size(json_object_get(o, "runs")), 0);
	assert_int_equal(json_array_size(json_object_get(o, "namespaces")), 0);
	assert_true(json_is_null(json_object_get(o, "placement")));
	json_decref(o);
	/* The namespaces the tcp script created, for whoever checks they are gone. */
	s.skipped[0] = '\0';
	snprintf(s.netns, sizeof(s.netns), "vth-a7 vth-b7 pvn-a7 pvn-b7");
	snprintf(s.placement, sizeof(s.placement), "split: pvnetd on CPU 0, their iperf3 on CPU 1");
	bench_section_verdict(&s);
	o = bench_section2json(&s);
	assert_string_equal(json_string_value(json_object_get(o, "placement")),
			    "split: pvnetd on CPU 0, their iperf3 on CPU 1");
	assert_int_equal(json_array_size(json_object_get(o, "namespaces")), 4);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "namespaces"), 3)),
			    "pvn-b7");
	json_decref(o);
}

/* The section as bench_section_print() writes it; the caller frees it. */
static char *printed(const struct bench_section *s, unsigned int repeat)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	bench_section_print(s, repeat, f);
	fclose(f);
	assert_non_null(buf);
	return buf;
}

static void test_section_print(void **state)
{
	const double g[] = {5, 7, 6};
	struct bench_section s;
	char *buf;

	sec(&s, BENCH_SEC_VCPUS, 2);
	pt(&s.pts[0], 1514, 1, "map", BENCH_STEER_QUEUE, g, NULL, 3);
	pt(&s.pts[1], 1514, 4, "map", BENCH_STEER_QUEUE, g, NULL, 3);
	snprintf(s.pts[1].error, sizeof(s.pts[1].error), "boom");
	bench_section_verdict(&s);
	buf = printed(&s, 3);
	assert_non_null(strstr(buf, "2. vcpus"));
	assert_non_null(strstr(buf, "Gbit/s min-max"));
	assert_non_null(strstr(buf, "5.00-7.00"));
	assert_non_null(strstr(buf, "6.000"));
	assert_non_null(strstr(buf, "verdict: 4 vCPUs: 1.00x of 1 vCPU"));
	free(buf);
	/* One run per point: no range column; a failed point says why. */
	s.pts[1].nruns = 0;
	buf = printed(&s, 1);
	assert_null(strstr(buf, "min-max"));
	assert_non_null(strstr(buf, "failed: boom"));
	free(buf);
	/* Interrupted after the first point: what was measured is shown, then why it stopped. */
	snprintf(s.skipped, sizeof(s.skipped), "interrupted");
	bench_section_verdict(&s);
	buf = printed(&s, 1);
	assert_non_null(strstr(buf, "6.000"));
	assert_non_null(strstr(buf, "verdict: skipped: interrupted"));
	free(buf);
	free(s.pts);
}

/* Give run @k of @p the host round trips @before and @after (0: not sampled). */
static void host_of(struct bench_point *p, unsigned int k, double before, double after)
{
	p->v[BENCH_FIG_HOST_RTT_BEFORE_NS][k] = before ? before : NAN;
	p->v[BENCH_FIG_HOST_RTT_AFTER_NS][k] = after ? after : NAN;
}

static void test_host(void **state)
{
	const double g[] = {5, 7, 6};
	struct bench_section s;
	struct bench_result r;
	double lo, hi;
	json_t *o, *h;
	char *buf;

	/* A run's samples reach its point's figures; 0 (not sampled) is unknown, not 0 ns. */
	sec(&s, BENCH_SEC_VCPUS, 2);
	bench_point_init(&s.pts[0], 1514, 1, "map", BENCH_STEER_QUEUE, false);
	run_of(&r, 1514, 10, 0);
	r.host_rtt_ns[0] = 120;
	r.host_rtt_ns[1] = 140;
	bench_point_add(&s.pts[0], &r, 0);
	run_of(&r, 1514, 10, 0);
	r.host_rtt_ns[1] = 110;
	bench_point_add(&s.pts[0], &r, 1);
	assert_int_equal(bench_point_host(&s.pts[0], &lo, &hi), 3);
	assert_near(lo, 110, 0);
	assert_near(hi, 140, 0);
	pt(&s.pts[1], 1514, 4, "map", BENCH_STEER_QUEUE, g, NULL, 3);
	assert_int_equal(bench_point_host(&s.pts[1], &lo, &hi), 0);
	assert_true(isnan(lo) && isnan(hi));

	/* Steady: 110..150 ns over the section. */
	host_of(&s.pts[1], 0, 150, 130);
	assert_int_equal(bench_section_host(&s, &lo, &hi), 5);
	assert_near(lo, 110, 0);
	assert_near(hi, 150, 0);
	assert_false(bench_host_moved(5, lo, hi));
	bench_section_verdict(&s);
	o = bench_section2json(&s);
	h = json_object_get(o, "host_rtt_ns");
	assert_int_equal(json_integer_value(json_object_get(h, "min")), 110);
	assert_int_equal(json_integer_value(json_object_get(h, "max")), 150);
	assert_int_equal(json_integer_value(json_object_get(h, "samples")), 5);
	assert_true(json_is_false(json_object_get(h, "moved")));
	json_decref(o);
	buf = printed(&s, 3);
	assert_non_null(strstr(buf, "host ns"));
	assert_non_null(strstr(buf, "110-140")); /* the 1-queue point's column */
	assert_non_null(strstr(buf, "host: round trip 110-150 ns over 5 samples: steady"));
	free(buf);

	/* The host moved the vCPUs apart during a later run: 2x the smallest sample. */
	host_of(&s.pts[1], 2, 0, 220);
	assert_int_equal(bench_section_host(&s, &lo, &hi), 6);
	assert_true(bench_host_moved(6, lo, hi));
	assert_false(bench_host_moved(6, lo, 219));
	assert_false(bench_host_moved(0, NAN, NAN));
	o = bench_section2json(&s);
	assert_true(json_is_true(json_object_get(json_object_get(o, "host_rtt_ns"), "moved")));
	json_decref(o);
	buf = printed(&s, 3);
	assert_non_null(strstr(buf, "host: round trip 110-220 ns over 6 samples: the host moved"));
	free(buf);

	/* Never sampled (one CPU): JSON null, and no line. */
	for (unsigned int i = 0; i < 2; i++)
		for (unsigned int k = 0; k < 3; k++)
			host_of(&s.pts[i], k, 0, 0);
	o = bench_section2json(&s);
	assert_true(json_is_null(json_object_get(o, "host_rtt_ns")));
	json_decref(o);
	buf = printed(&s, 1);
	assert_null(strstr(buf, "host: round trip"));
	free(buf);
	free(s.pts);
}

static void test_fmt_ratio(void **state)
{
	char b[16];

	bench_fmt_ratio(b, sizeof(b), 0.5);
	assert_string_equal(b, "0.50x");
	bench_fmt_ratio(b, sizeof(b), 10);
	assert_string_equal(b, "10x");
	bench_fmt_ratio(b, sizeof(b), 21.4);
	assert_string_equal(b, "21x");
	bench_fmt_ratio(b, sizeof(b), NAN);
	assert_string_equal(b, "-");
}

/* A point of one run with these figures (those not given unknown). */
static void pt_figs(struct bench_point *p, uint32_t size, unsigned int q, int steer, double gbit,
		    double mpps, double dropped, double ooo)
{
	pt(p, size, q, "map", steer, &gbit, NULL, 1);
	p->v[BENCH_FIG_MPPS][0] = mpps;
	p->v[BENCH_FIG_DROPPED][0] = dropped;
	p->v[BENCH_FIG_OUT_OF_ORDER][0] = ooo;
}

/* The line of @buf whose first word is @first, from that word on (a pointer into @buf). */
static const char *row_of(const char *buf, const char *first)
{
	for (const char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *t = l + strspn(l, " ");

		if (!strncmp(t, first, strlen(first)) && t[strlen(first)] == ' ')
			return t;
	}
	fail_msg("no row %s", first);
	return NULL;
}

/* Each column of the sections' tables holds the figure its heading names. */
static void test_section_tables(void **state)
{
	struct bench_section s;
	double tx, rx, g, m, sd, gnt, dr, oo;
	unsigned int q, size;
	char name[16], *buf;

	sec(&s, BENCH_SEC_SIZES, 1);
	pt_figs(&s.pts[0], 1024, 1, BENCH_STEER_QUEUE, 2.0, 0.25, 4, 0);
	s.pts[0].v[BENCH_FIG_TX_KBYTE_S][0] = 111;
	s.pts[0].v[BENCH_FIG_RX_KBYTE_S][0] = 222;
	s.pts[0].v[BENCH_FIG_GRANT_OPS_PER_1000][0] = 3;
	bench_section_verdict(&s);
	buf = printed(&s, 1);
	/* frame, Tx KByte/s, Rx KByte/s, Gbit/s, Mpps, us/KB, gnt/1k, dropped */
	assert_int_equal(sscanf(row_of(buf, "1024"), "%u %lf %lf %lf %lf %lf %lf %lf", &size, &tx,
				&rx, &g, &m, &sd, &gnt, &dr),
			 8);
	assert_near(tx, 111, 0);
	assert_near(rx, 222, 0);
	assert_near(g, 2, 0);
	assert_near(m, 0.25, 0);
	assert_near(sd, 0.5, 0);
	assert_near(gnt, 3, 0);
	assert_near(dr, 4, 0);
	free(buf);
	free(s.pts);

	sec(&s, BENCH_SEC_VCPUS, 2);
	pt_figs(&s.pts[0], 1514, 1, BENCH_STEER_QUEUE, 10, 0.8, 7, 5);
	pt_figs(&s.pts[1], 1514, 2, BENCH_STEER_QUEUE, 9, 0.7, 0, 0);
	bench_section_verdict(&s);
	buf = printed(&s, 3);
	/* queues, frame, Gbit/s, Mpps, us/KB, dropped */
	assert_int_equal(
	    sscanf(row_of(buf, "1"), "%u %u %lf %lf %lf %lf", &q, &size, &g, &m, &sd, &dr), 6);
	assert_int_equal(q, 1);
	assert_near(g, 10, 0);
	assert_near(m, 0.8, 0);
	assert_near(dr, 7, 0);
	/* With --repeat 3, a point of one successful run has no range. */
	assert_null(strstr(buf, "10.00-10.00"));
	free(buf);
	free(s.pts);

	sec(&s, BENCH_SEC_STEERING, 1);
	pt_figs(&s.pts[0], 1514, 2, BENCH_STEER_HASH, 9, 0.7, 7, 5);
	bench_section_verdict(&s);
	buf = printed(&s, 1);
	/* policy, queues, frame, Gbit/s, ooo, dropped */
	assert_int_equal(
	    sscanf(row_of(buf, "hash"), "%15s %u %u %lf %lf %lf", name, &q, &size, &g, &oo, &dr),
	    6);
	assert_near(oo, 5, 0);
	assert_near(dr, 7, 0);
	free(buf);
	free(s.pts);
}

static void test_parse_sections(void **state)
{
	bool sel[BENCH_SEC_N + 1];
	char err[256];

	assert_int_equal(bench_parse_sections("sizes,tcp", sel, err, sizeof(err)), 2);
	assert_true(sel[BENCH_SEC_SIZES] && sel[BENCH_SEC_TCP]);
	assert_false(sel[BENCH_SEC_VCPUS] || sel[BENCH_SEC_PEERS] || sel[BENCH_SEC_N]);
	assert_int_equal(bench_parse_sections("all", sel, err, sizeof(err)), 1);
	for (unsigned int k = 0; k <= BENCH_SEC_TCP; k++)
		assert_true(sel[k]);
	assert_false(sel[BENCH_SEC_PEERS]);
	assert_int_equal(bench_parse_sections("tx_mode,steering,peers", sel, err, sizeof(err)), 3);
	assert_true(sel[BENCH_SEC_TX_MODE] && sel[BENCH_SEC_STEERING] && sel[BENCH_SEC_PEERS]);
	assert_int_equal(bench_parse_sections("stream", sel, err, sizeof(err)), 1);
	assert_true(sel[BENCH_SEC_N]);
	assert_int_equal(bench_parse_sections("stream,sizes", sel, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_parse_sections("vcpu", sel, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "vcpu"));
	assert_int_equal(bench_parse_sections("sizes,", sel, err, sizeof(err)), -EINVAL);
	assert_int_equal(bench_parse_sections("", sel, err, sizeof(err)), -EINVAL);
	assert_string_equal(bench_sec_names[BENCH_SEC_TX_MODE], "tx_mode");
}

static void test_grant_figures(void **state)
{
	/* Issue 7's counters per queue; a pvnetd without them leaves the figures unknown. */
	json_t *with = json_pack("{s:[{s:i, s:[{s:i, s:i, s:i, s:i}]}, {s:i, s:[{s:i, s:i, s:i, "
				 "s:i}]}]}",
				 "vifs", "domid", 1, "queues", "grant_copy_ops", 100,
				 "grant_map_ops", 50, "grant_unmap_ops", 50, "grant_batches", 10,
				 "domid", 2, "queues", "grant_copy_ops", 1000, "grant_map_ops", 0,
				 "grant_unmap_ops", 0, "grant_batches", 20);
	json_t *without =
	    json_pack("{s:[{s:i, s:[{s:i}]}, {s:i, s:[{s:i}]}]}", "vifs", "domid", 1, "queues",
		      "notifications", 1, "domid", 2, "queues", "notifications", 2);
	struct bench_result r;
	struct bench_figures f;
	json_t *o;
	char row[512];

	run_of(&r, 1000, 8, 0);
	r.b0.frames = 0;
	r.b1.frames = 1000; /* 1000 frames received in the window */
	bench_back_from_status(with, 1, 2, &r.back1);
	assert_true(r.back1.grant_known);
	assert_int_equal(r.back1.grant_copy_ops, 1100);
	assert_int_equal(r.back1.grant_map_ops, 50);
	assert_int_equal(r.back1.grant_batches, 30);
	r.back0 = r.back1;
	r.back0.grant_copy_ops = 100;
	r.back0.grant_map_ops = 0;
	r.back0.grant_unmap_ops = 0;
	r.back0.grant_batches = 10;
	bench_figures(&r, &f);
	/* (1000 copy + 50 map + 50 unmap) per 1000 frames. */
	assert_near(f.grant_ops_per_1000, 1100, 1e-9);
	assert_near(f.grant_map_per_1000, 50, 1e-9);
	assert_near(f.grant_unmap_per_1000, 50, 1e-9);
	assert_near(f.grant_batches_per_1000, 20, 1e-9);
	o = bench_result2json(&r);
	assert_near(json_real_value(json_object_get(o, "grant_ops_per_1000")), 1100, 1e-9);
	assert_near(json_real_value(json_object_get(o, "grant_batches_per_1000")), 20, 1e-9);
	json_decref(o);

	bench_back_from_status(without, 1, 2, &r.back1);
	assert_true(r.back1.ok);
	assert_false(r.back1.grant_known);
	bench_figures(&r, &f);
	assert_true(isnan(f.grant_ops_per_1000));
	o = bench_result2json(&r);
	assert_true(json_is_null(json_object_get(o, "grant_ops_per_1000")));
	assert_true(json_is_null(json_object_get(o, "grant_map_per_1000")));
	assert_true(json_is_null(json_object_get(o, "grant_unmap_per_1000")));
	assert_true(json_is_null(json_object_get(o, "grant_batches_per_1000")));
	json_decref(o);
	bench_table_row(&r, row, sizeof(row));
	assert_non_null(strstr(row, " - "));
	bench_table_header(row, sizeof(row));
	assert_non_null(strstr(row, "gnt/1k"));
	json_decref(with);
	json_decref(without);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat),
	    cmocka_unit_test(test_point),
	    cmocka_unit_test(test_point_figures),
	    cmocka_unit_test(test_verdict_vcpus),
	    cmocka_unit_test(test_verdict_tx_mode),
	    cmocka_unit_test(test_verdict_steering),
	    cmocka_unit_test(test_verdict_sizes),
	    cmocka_unit_test(test_tcp),
	    cmocka_unit_test(test_peers),
	    cmocka_unit_test(test_section_json),
	    cmocka_unit_test(test_section_print),
	    cmocka_unit_test(test_section_tables),
	    cmocka_unit_test(test_fmt_ratio),
	    cmocka_unit_test(test_host),
	    cmocka_unit_test(test_parse_sections),
	    cmocka_unit_test(test_grant_figures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
