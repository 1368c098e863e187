// SPDX-License-Identifier: MIT
/* bench_report.c - pvnet bench: the sections' statistics, verdicts, JSON and tables (pure) */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * Theory of Operation
 *
 * The default `pvnet bench` runs five sections, each answering one field
 * report of docs/field-reports.md (docs/benchmarks.md):
 *
 *   sizes     netio's frame-size sweep (1 vCPU, same host)
 *   vcpus     xennet's collapse from 1 to 4 vCPUs (to 10 % of 1 vCPU)
 *   tx_mode   netback's TX grant copy vs grant map (6.8 vs 7.9 Gbit/s)
 *   steering  XPS reordering TCP with migrating senders (TCPOFO 1621 vs 174)
 *   tcp       iperf3 TCP through pvnet vs a veth pair (root, iperf3)
 *   peers     (--peers) DPDK memif and kernel veth at the same frame sizes
 *
 * A frame-level section is a list of points (configurations); each point
 * is run --repeat times, rounds interleaved by the caller.  Everything
 * here is a function of the points: the median and min..max of every
 * figure, the section's ratios (to 1 queue, to copy, to xps, to the field
 * report) and a one-line verdict; bench_output.c makes the JSON object and
 * the text table.  The unit tests feed both made-up points.
 */

const char *const bench_fig_names[BENCH_FIG_N] = {
    "gbit_s",
    "mpps",
    "tx_kbyte_s",
    "rx_kbyte_s",
    "cpu_us_per_kb",
    "notifications_per_1000",
    "grant_ops_per_1000",
    "grant_map_per_1000",
    "grant_unmap_per_1000",
    "grant_batches_per_1000",
    "dropped",
    "out_of_order",
    "others_cpu_s",
    "host_rtt_before_ns",
    "host_rtt_after_ns",
};

const char *const bench_sec_names[BENCH_SEC_N] = {
    "sizes", "vcpus", "tx_mode", "steering", "tcp", "peers",
};

/* Per section: its title, the field figure it answers, and what its ratio divides by. */
const struct bench_sec_info bench_sec_info[BENCH_SEC_N] = {
    [BENCH_SEC_SIZES] = {"frame-size sweep, 1 queue, guest to guest through pvnetd",
			 "netio same host, 1 vCPU both ends (xennet, NetBSD 9.99): 1k..32k "
			 "packets 92083..126248 KByte/s Rx",
			 "rx_kbyte_s / the field report's Rx KByte/s at the same packet size", 0},
    [BENCH_SEC_VCPUS] = {"vCPU sweep: Q queues, one sender and one receiver thread per queue",
			 "xennet, 1 -> 4 vCPUs: iperf3 902 -> 103 Mbit/s (0.11x), netio "
			 "about 0.10x at every size",
			 "gbit_s / gbit_s of 1 queue", BENCH_COMPARE_REPEAT},
    [BENCH_SEC_TX_MODE] = {"netback TX: grant copy vs grant map (and persistent grants)",
			   "xen-netback TX grant mapping instead of copy: 6.8 -> 7.9 Gbit/s "
			   "(1.16x), iperf 2, 10 GbE",
			   "gbit_s / gbit_s of copy at the same frame size", BENCH_COMPARE_REPEAT},
    [BENCH_SEC_STEERING] = {"TX steering with migrating senders (xps = the field's cpu steering, "
			    "xps-safe = tracked cpu)",
			    "XPS on vs off, netperf TCP_STREAM: TCPOFO 1621 vs 174 per run, "
			    "throughput 9072 vs 9300 Mbit/s (0.975x)",
			    "gbit_s / gbit_s of xps", 0},
    [BENCH_SEC_TCP] = {"TCP (iperf3) between two namespaces: through pvnet vs a veth pair",
		       "xennet iperf3 same host: 902 Mbit/s at 1 vCPU, 103 Mbit/s at 4 vCPUs",
		       "pvnet gbit_s / veth gbit_s with the same streams", 0},
    [BENCH_SEC_PEERS] = {"peers at the same frame sizes: DPDK memif (2 dpdk-testpmd) and "
			 "kernel veth (iperf3 UDP)",
			 "none: the peers a user would pick instead",
			 "pvnet gbit_s / the peer's gbit_s at the same frame size", 0},
};

/* netio, same host, 1 vCPU both ends (docs/field-reports.md, 1). */
static const struct {
	uint32_t size;
	double tx_kbyte_s, rx_kbyte_s;
} netio_1vcpu[] = {
    {1024, 96509, 92083},   {2048, 124560, 125777},  {4096, 117528, 124900},
    {8192, 123113, 118255}, {16384, 120673, 126248}, {32768, 127362, 123743},
};

/* iperf3 same host, xennet: 1 vCPU 902 Mbit/s, 4 vCPUs 103 Mbit/s. */
#define FIELD_IPERF_1VCPU_MBIT 902.0
#define FIELD_IPERF_4VCPU_MBIT 103.0
/* xen-netback grant copy vs grant map, TX, Gbit/s. */
#define FIELD_COPY_GBIT 6.8
#define FIELD_MAP_GBIT	7.9
/* XPS on vs off: TCPOFO per run, Mbit/s. */
#define FIELD_XPS_OFO	 1621.1
#define FIELD_NOXPS_OFO	 173.9
#define FIELD_XPS_MBIT	 9072.52
#define FIELD_NOXPS_MBIT 9300.48
/* The collapse target of issue 4: Q queues keep at least this share of 1 queue. */
#define VCPU_TARGET 0.95
/* Below this the field report's kind of collapse (it fell to 0.10). */
#define VCPU_COLLAPSE 0.5

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/**
 * bench_stat_of() - median, minimum and maximum of repeated figures
 * @v: the values (NaN values, figures a run could not have, are left out)
 * @n: how many; at most BENCH_MAX_REPEAT are looked at
 * @out: filled; all NaN and n 0 when no value is a number
 */
void bench_stat_of(const double *v, unsigned int n, struct bench_stat *out)
{
	double s[BENCH_MAX_REPEAT];
	unsigned int k = 0;

	for (unsigned int i = 0; i < n && i < BENCH_MAX_REPEAT; i++)
		if (isfinite(v[i]))
			s[k++] = v[i];
	out->n = k;
	if (!k) {
		out->median = out->min = out->max = NAN;
		return;
	}
	qsort(s, k, sizeof(s[0]), cmp_double);
	out->min = s[0];
	out->max = s[k - 1];
	out->median = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2.0;
}

/**
 * bench_point_init() - an empty point
 * @p: filled
 * @frame_size: bytes per frame
 * @queues: queues
 * @tx_mode: pvnetd --tx-mode
 * @steering: BENCH_STEER_QUEUE or a policy
 * @migrate: senders hop CPUs
 */
void bench_point_init(struct bench_point *p, uint32_t frame_size, unsigned int queues,
		      const char *tx_mode, int steering, bool migrate)
{
	memset(p, 0, sizeof(*p));
	p->frame_size = frame_size;
	p->queues = queues;
	snprintf(p->tx_mode, sizeof(p->tx_mode), "%s", tx_mode);
	p->steering = steering;
	p->migrate = migrate;
	p->ratio = NAN;
	p->field = NAN;
}

/**
 * bench_point_add() - account one run of a point
 * @p: the point
 * @r: the run (failed runs count in nfailed and keep their error)
 * @idx: its index in the document's `results`, or -1
 */
void bench_point_add(struct bench_point *p, const struct bench_result *r, int idx)
{
	struct bench_figures f;
	unsigned int k = p->nruns;

	if (idx >= 0 && p->nresults < BENCH_MAX_REPEAT)
		p->results[p->nresults++] = idx;
	if (r->error[0]) {
		p->nfailed++;
		snprintf(p->error, sizeof(p->error), "%s", r->error);
		return;
	}
	if (k >= BENCH_MAX_REPEAT)
		return;
	bench_figures(r, &f);
	p->v[BENCH_FIG_GBIT_S][k] = f.gbit_s;
	p->v[BENCH_FIG_MPPS][k] = f.mpps;
	p->v[BENCH_FIG_TX_KBYTE_S][k] = f.tx_kbyte_s;
	p->v[BENCH_FIG_RX_KBYTE_S][k] = f.rx_kbyte_s;
	p->v[BENCH_FIG_CPU_US_PER_KB][k] = f.cpu_us_per_kb;
	p->v[BENCH_FIG_NOTIFICATIONS_PER_1000][k] = f.notifications_per_1000;
	p->v[BENCH_FIG_GRANT_OPS_PER_1000][k] = f.grant_ops_per_1000;
	p->v[BENCH_FIG_GRANT_MAP_PER_1000][k] = f.grant_map_per_1000;
	p->v[BENCH_FIG_GRANT_UNMAP_PER_1000][k] = f.grant_unmap_per_1000;
	p->v[BENCH_FIG_GRANT_BATCHES_PER_1000][k] = f.grant_batches_per_1000;
	p->v[BENCH_FIG_DROPPED][k] = (double)f.dropped;
	p->v[BENCH_FIG_OUT_OF_ORDER][k] = (double)f.out_of_order;
	p->v[BENCH_FIG_OTHERS_CPU_S][k] = f.cpu_s_others;
	p->v[BENCH_FIG_HOST_RTT_BEFORE_NS][k] = r->host_rtt_ns[0] ? r->host_rtt_ns[0] : NAN;
	p->v[BENCH_FIG_HOST_RTT_AFTER_NS][k] = r->host_rtt_ns[1] ? r->host_rtt_ns[1] : NAN;
	p->nruns = k + 1;
}

/**
 * bench_point_stat() - median and range of one figure of a point
 * @p: the point
 * @fig: the figure
 * @s: filled (NaN when no run succeeded or the figure is unknown)
 */
void bench_point_stat(const struct bench_point *p, enum bench_fig fig, struct bench_stat *s)
{
	bench_stat_of(p->v[fig], p->nruns, s);
}

/**
 * bench_point_median() - the median of one figure of a point
 * @p: the point
 * @fig: the figure
 *
 * Return: the median, NaN when unknown
 */
double bench_point_median(const struct bench_point *p, enum bench_fig fig)
{
	struct bench_stat s;

	bench_point_stat(p, fig, &s);
	return s.median;
}

/**
 * bench_point_host() - the host's round trips around a point's runs
 * @p: the point
 * @min: receives the smallest sample, before or after any of its runs (NaN when none)
 * @max: receives the largest
 *
 * Return: how many samples there were
 */
unsigned int bench_point_host(const struct bench_point *p, double *min, double *max)
{
	unsigned int n = 0;

	*min = *max = NAN;
	for (unsigned int k = 0; k < p->nruns && k < BENCH_MAX_REPEAT; k++) {
		for (int f = BENCH_FIG_HOST_RTT_BEFORE_NS; f <= BENCH_FIG_HOST_RTT_AFTER_NS; f++) {
			double v = p->v[f][k];

			if (!isfinite(v))
				continue;
			if (!n++ || v < *min)
				*min = v;
			if (n == 1 || v > *max)
				*max = v;
		}
	}
	return n;
}

/**
 * bench_section_host() - the host's round trips around all runs of a section
 * @s: the section
 * @min: receives the smallest sample (NaN when none)
 * @max: receives the largest
 *
 * Return: how many samples there were
 */
unsigned int bench_section_host(const struct bench_section *s, double *min, double *max)
{
	unsigned int n = 0;

	*min = *max = NAN;
	for (unsigned int i = 0; i < s->npts; i++) {
		double lo, hi;
		unsigned int k = bench_point_host(&s->pts[i], &lo, &hi);

		if (!k)
			continue;
		if (!n || lo < *min)
			*min = lo;
		if (!n || hi > *max)
			*max = hi;
		n += k;
	}
	return n;
}

/**
 * bench_host_moved() - whether round trips from bench_section_host() say the host moved
 * @n: samples
 * @min: the smallest
 * @max: the largest
 *
 * Return: true when there are samples and the largest is BENCH_HOST_MOVED times the smallest
 */
bool bench_host_moved(unsigned int n, double min, double max)
{
	return n > 0 && max >= BENCH_HOST_MOVED * min;
}

/**
 * bench_jnum() - a double as JSON: null when it is not a number
 * @v: the value
 *
 * Return: a new JSON value
 */
json_t *bench_jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/**
 * bench_point2json() - a point as JSON: its configuration, the median of every
 * figure under the figure's name, "min" and "max" objects with the same keys,
 * "repeats" (successful runs), "failed", "results" (indices into the document's
 * results), "ratio" and "field" (null when the section has none), "error"
 * @p: the point
 *
 * Return: a new object, or NULL
 */
json_t *bench_point2json(const struct bench_point *p)
{
	json_t *o, *mn = json_object(), *mx = json_object(), *idx = json_array();

	o = json_pack("{s:i, s:i, s:s, s:s, s:b, s:i, s:i}", "frame_size", (int)p->frame_size,
		      "queues", (int)p->queues, "tx_mode", p->tx_mode, "steering",
		      bench_steering_name(p->steering), "migrate", p->migrate, "repeats",
		      (int)p->nruns, "failed", (int)p->nfailed);
	if (!o || !mn || !mx || !idx) {
		json_decref(o);
		json_decref(mn);
		json_decref(mx);
		json_decref(idx);
		return NULL;
	}
	for (unsigned int f = 0; f < BENCH_FIG_N; f++) {
		struct bench_stat s;

		bench_point_stat(p, (enum bench_fig)f, &s);
		json_object_set_new(o, bench_fig_names[f], bench_jnum(s.median));
		json_object_set_new(mn, bench_fig_names[f], bench_jnum(s.min));
		json_object_set_new(mx, bench_fig_names[f], bench_jnum(s.max));
	}
	for (unsigned int i = 0; i < p->nresults; i++)
		json_array_append_new(idx, json_integer(p->results[i]));
	json_object_set_new(o, "min", mn);
	json_object_set_new(o, "max", mx);
	json_object_set_new(o, "results", idx);
	json_object_set_new(o, "ratio", bench_jnum(p->ratio));
	json_object_set_new(o, "field", bench_jnum(p->field));
	if (p->nfailed)
		json_object_set_new(o, "error", json_string(p->error));
	return o;
}

static int one_section(const char *item, unsigned int i, bool *sel)
{
	if (!strcmp(item, "all")) {
		for (unsigned int k = 0; k <= BENCH_SEC_TCP; k++)
			sel[k] = true;
		return 0;
	}
	if (!strcmp(item, "stream")) {
		sel[BENCH_SEC_N] = true;
		return 0;
	}
	for (unsigned int k = 0; k < BENCH_SEC_N; k++)
		if (!strcmp(item, bench_sec_names[k])) {
			sel[k] = true;
			return 0;
		}
	return -EINVAL;
}

/**
 * bench_parse_sections() - parse --section: comma-separated section names
 * @s: the list: sizes, vcpus, tx_mode, steering, tcp, peers, "all" (the first five),
 *	or "stream" (the plain sweep of --frame-size x --queues x --tx-mode x --steering)
 * @sel: BENCH_SEC_N + 1 flags: the sections, then "stream"; set for every name given
 * @err: receives a message for people on failure
 * @errlen: size of @err
 *
 * "stream" cannot be mixed with sections: it is another kind of run.
 *
 * Return: the number of names, or -EINVAL
 */
int bench_parse_sections(const char *s, bool *sel, char *err, size_t errlen)
{
	char buf[256], *save = NULL, *tok;
	unsigned int n = 0;
	bool any_sec = false;

	memset(sel, 0, sizeof(bool) * (BENCH_SEC_N + 1));
	if (!s || !*s || strlen(s) >= sizeof(buf) || s[strlen(s) - 1] == ',' || *s == ',' ||
	    strstr(s, ",,")) {
		snprintf(err, errlen, "--section: '%s' is not a list of section names", s ? s : "");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++)
		if (one_section(tok, n, sel) < 0) {
			snprintf(err, errlen,
				 "--section: '%s' is not sizes, vcpus, tx_mode, steering, tcp, "
				 "peers, all or stream",
				 tok);
			return -EINVAL;
		}
	for (unsigned int k = 0; k < BENCH_SEC_N; k++)
		any_sec |= sel[k];
	if (any_sec && sel[BENCH_SEC_N]) {
		snprintf(err, errlen,
			 "--section: stream is a plain sweep; it does not mix with "
			 "sections");
		return -EINVAL;
	}
	return (int)n;
}

/* Append to a fixed buffer; what does not fit is cut. */
static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t l = strlen(buf);
	va_list ap;

	if (l + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + l, len - l, fmt, ap);
	va_end(ap);
}

/**
 * bench_fmt_ratio() - a ratio for people: "0.98x", "21x", or "-" when unknown
 * @b: receives it
 * @n: size of @b
 * @v: the ratio
 */
void bench_fmt_ratio(char *b, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(b, n, "-");
	else if (v >= 10)
		snprintf(b, n, "%.0fx", v);
	else
		snprintf(b, n, "%.2fx", v);
}

static void verdict_sizes(struct bench_section *s)
{
	double lo = INFINITY, hi = -INFINITY, rlo = INFINITY, rhi = -INFINITY;
	unsigned int matched = 0;
	char a[16], b[16];

	for (unsigned int i = 0; i < s->npts; i++) {
		struct bench_point *p = &s->pts[i];

		for (size_t k = 0; k < sizeof(netio_1vcpu) / sizeof(netio_1vcpu[0]); k++) {
			double rx = bench_point_median(p, BENCH_FIG_RX_KBYTE_S);

			if (netio_1vcpu[k].size != p->frame_size)
				continue;
			p->field = netio_1vcpu[k].rx_kbyte_s;
			p->ratio = rx / p->field;
			if (!isfinite(p->ratio))
				continue;
			matched++;
			lo = fmin(lo, rx);
			hi = fmax(hi, rx);
			rlo = fmin(rlo, p->ratio);
			rhi = fmax(rhi, p->ratio);
		}
	}
	if (!matched) {
		snprintf(s->verdict, sizeof(s->verdict),
			 "none of netio's sizes (1024, 2048, ..., 32768 B) measured; field report: "
			 "netio 92083..126248 KByte/s Rx "
			 "(1 vCPU, same host)");
	} else {
		bench_fmt_ratio(a, sizeof(a), rlo);
		bench_fmt_ratio(b, sizeof(b), rhi);
		snprintf(s->verdict, sizeof(s->verdict),
			 "1k..32k frames: Rx %.0f..%.0f KByte/s, %s..%s the field report's; "
			 "field report: netio 92083..126248 KByte/s Rx (xennet, 1 vCPU, same host)",
			 lo, hi, a, b);
	}
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];

		if (p->frame_size == 64 && p->nruns)
			cat(s->verdict, sizeof(s->verdict), "; 64 B: %.2f Mpps",
			    bench_point_median(p, BENCH_FIG_MPPS));
		if (p->frame_size == BENCH_MAX_FRAME && p->nruns)
			cat(s->verdict, sizeof(s->verdict), "; 64 KiB: %.1f Gbit/s",
			    bench_point_median(p, BENCH_FIG_GBIT_S));
	}
}

/**
 * bench_section_find() - the first successful point of a section that matches
 * @s: the section
 * @size: frame size, or 0 for any
 * @queues: queues, or 0 for any
 * @mode: tx mode, or NULL for any
 * @steering: steering, or -2 for any
 *
 * Return: the point, or NULL
 */
const struct bench_point *bench_section_find(const struct bench_section *s, uint32_t size,
					     unsigned int queues, const char *mode, int steering)
{
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];

		if ((!size || p->frame_size == size) && (!queues || p->queues == queues) &&
		    (!mode || !strcmp(p->tx_mode, mode)) &&
		    (steering == -2 || p->steering == steering) && p->nruns)
			return p;
	}
	return NULL;
}

static void verdict_vcpus(struct bench_section *s)
{
	const struct bench_point *one = bench_section_find(s, 0, 1, NULL, -2), *head = NULL;
	double worst = INFINITY, base;
	unsigned int worst_q = 0;
	char x[16], others[256], failed[128];

	if (!one) {
		snprintf(s->verdict, sizeof(s->verdict),
			 "no successful 1-queue run to compare with; field report: 0.11x "
			 "(iperf3 902 -> 103 Mbit/s, 1 -> 4 vCPUs)");
		return;
	}
	base = bench_point_median(one, BENCH_FIG_GBIT_S);
	failed[0] = '\0';
	for (unsigned int i = 0; i < s->npts; i++) {
		struct bench_point *p = &s->pts[i];

		if (!p->nruns)
			cat(failed, sizeof(failed), "%s%u", failed[0] ? ", " : "", p->queues);
		p->ratio = bench_point_median(p, BENCH_FIG_GBIT_S) / base;
		if (p->queues == 1 || !isfinite(p->ratio))
			continue;
		if (p->ratio < worst) {
			worst = p->ratio;
			worst_q = p->queues;
		}
		if (p->queues == 4 || !head || (head->queues != 4 && p->queues > head->queues))
			head = p;
	}
	if (!head) {
		snprintf(s->verdict, sizeof(s->verdict),
			 "only 1 queue measured (%.2f Gbit/s); field report: 0.11x at 4 vCPUs",
			 base);
		return;
	}
	bench_fmt_ratio(x, sizeof(x), head->ratio);
	snprintf(s->verdict, sizeof(s->verdict), "%u vCPUs: %s of 1 vCPU", head->queues, x);
	others[0] = '\0';
	for (unsigned int i = 0; i < s->npts; i++) {
		const struct bench_point *p = &s->pts[i];

		if (p == head || p->queues == 1 || !isfinite(p->ratio))
			continue;
		bench_fmt_ratio(x, sizeof(x), p->ratio);
		cat(others, sizeof(others), "%s%u: %s", others[0] ? ", " : "", p->queues, x);
	}
	if (others[0])
		cat(s->verdict, sizeof(s->verdict), " (%s)", others);
	bench_fmt_ratio(x, sizeof(x), FIELD_IPERF_4VCPU_MBIT / FIELD_IPERF_1VCPU_MBIT);
	cat(s->verdict, sizeof(s->verdict), "; field report: %s", x);
	bench_fmt_ratio(x, sizeof(x), worst);
	/* What was not measured cannot be claimed: a failed point leaves the verdict open. */
	if (failed[0] && worst >= VCPU_COLLAPSE)
		cat(s->verdict, sizeof(s->verdict), " - INCOMPLETE: %s queues failed", failed);
	else if (worst >= VCPU_TARGET)
		cat(s->verdict, sizeof(s->verdict), " - no collapse (every Q >= %.2fx)",
		    VCPU_TARGET);
	else if (worst >= VCPU_COLLAPSE)
		cat(s->verdict, sizeof(s->verdict),
		    " - no collapse of the field's kind (worst %s at %u queues, target %.2fx)", x,
		    worst_q, VCPU_TARGET);
	else
		cat(s->verdict, sizeof(s->verdict), " - COLLAPSE: %s at %u queues", x, worst_q);
}

static void verdict_tx_mode(struct bench_section *s)
{
	uint32_t sizes[BENCH_MAX_LIST];
	unsigned int ns = 0;
	char x[16], y[16];

	for (unsigned int i = 0; i < s->npts; i++) {
		struct bench_point *p = &s->pts[i];
		const struct bench_point *c = bench_section_find(s, p->frame_size, 0, "copy", -2);
		bool known = false;

		p->ratio = c ? bench_point_median(p, BENCH_FIG_GBIT_S) /
				   bench_point_median(c, BENCH_FIG_GBIT_S)
			     : NAN;
		for (unsigned int k = 0; k < ns; k++)
			known |= sizes[k] == p->frame_size;
		if (!known && ns < BENCH_MAX_LIST)
			sizes[ns++] = p->frame_size;
	}
	s->verdict[0] = '\0';
	/* Largest frame first: that is where the field report's 1.16x was measured. */
	for (unsigned int k = ns; k-- > 0;) {
		const struct bench_point *c = bench_section_find(s, sizes[k], 0, "copy", -2);
		bool first = true;

		cat(s->verdict, sizeof(s->verdict), "%s%u B:", s->verdict[0] ? "; " : "", sizes[k]);
		for (unsigned int i = 0; i < s->npts; i++) {
			const struct bench_point *p = &s->pts[i];

			if (p->frame_size != sizes[k] || !strcmp(p->tx_mode, "copy"))
				continue;
			if (!p->nruns) {
				cat(s->verdict, sizeof(s->verdict), "%s %s failed",
				    first ? "" : ",", p->tx_mode);
			} else if (!c) {
				cat(s->verdict, sizeof(s->verdict),
				    "%s %s %.2f Gbit/s (no copy run)", first ? "" : ",", p->tx_mode,
				    bench_point_median(p, BENCH_FIG_GBIT_S));
			} else {
				bench_fmt_ratio(x, sizeof(x), p->ratio);
				bench_fmt_ratio(y, sizeof(y),
						bench_point_median(p, BENCH_FIG_CPU_US_PER_KB) /
						    bench_point_median(c, BENCH_FIG_CPU_US_PER_KB));
				cat(s->verdict, sizeof(s->verdict), "%s %s %s copy (us/KB %s)",
				    first ? "" : ",", p->tx_mode, x, y);
			}
			first = false;
		}
		if (first)
			cat(s->verdict, sizeof(s->verdict), " copy only");
	}
	bench_fmt_ratio(x, sizeof(x), FIELD_MAP_GBIT / FIELD_COPY_GBIT);
	cat(s->verdict, sizeof(s->verdict), "; field report: map %s copy (%.1f vs %.1f Gbit/s)", x,
	    FIELD_MAP_GBIT, FIELD_COPY_GBIT);
}

static void verdict_steering(struct bench_section *s)
{
	const struct bench_point *xps = bench_section_find(s, 0, 0, NULL, BENCH_STEER_XPS);
	bool kept = true, any = false, unknown = false;
	char x[16];

	snprintf(s->verdict, sizeof(s->verdict), "out-of-order frames");
	for (unsigned int i = 0; i < s->npts; i++) {
		struct bench_point *p = &s->pts[i];
		struct bench_stat o;

		bench_point_stat(p, BENCH_FIG_OUT_OF_ORDER, &o);
		p->ratio = xps ? bench_point_median(p, BENCH_FIG_GBIT_S) /
				     bench_point_median(xps, BENCH_FIG_GBIT_S)
			       : NAN;
		if (!p->nruns) {
			cat(s->verdict, sizeof(s->verdict), "%s %s failed", i ? "," : ":",
			    bench_steering_name(p->steering));
			unknown |= p->steering != BENCH_STEER_XPS;
			continue;
		}
		any = true;
		if (p->steering != BENCH_STEER_XPS && o.max > 0)
			kept = false;
		cat(s->verdict, sizeof(s->verdict), "%s %s %.0f", i ? "," : ":",
		    bench_steering_name(p->steering), o.median);
	}
	if (xps) {
		bool first = true;

		for (unsigned int i = 0; i < s->npts; i++) {
			const struct bench_point *p = &s->pts[i];

			if (p == xps || !isfinite(p->ratio))
				continue;
			bench_fmt_ratio(x, sizeof(x), p->ratio);
			cat(s->verdict, sizeof(s->verdict), "%s %s %s",
			    first ? "; Gbit/s vs xps:" : ",", bench_steering_name(p->steering), x);
			first = false;
		}
	}
	if (any)
		cat(s->verdict, sizeof(s->verdict), " - %s",
		    !kept     ? "REORDERED by a policy that must not"
		    : unknown ? "INCOMPLETE: a policy that must keep order failed"
			      : "hash and xps-safe kept every flow in order");
	bench_fmt_ratio(x, sizeof(x), FIELD_XPS_MBIT / FIELD_NOXPS_MBIT);
	cat(s->verdict, sizeof(s->verdict),
	    "; field report: XPS %.0f vs %.0f TCPOFO per run without, throughput %s", FIELD_XPS_OFO,
	    FIELD_NOXPS_OFO, x);
}

static const struct bench_tcp_case *find_tcp(const struct bench_section *s,
					     enum bench_tcp_path path, unsigned int streams)
{
	for (unsigned int i = 0; i < s->ntcp; i++)
		if (s->tcp[i].path == path && s->tcp[i].streams == streams)
			return &s->tcp[i];
	return NULL;
}

static void verdict_tcp(struct bench_section *s)
{
	char x[16], y[16];
	unsigned int streams[] = {1, 4};

	s->verdict[0] = '\0';
	for (unsigned int k = 0; k < 2; k++) {
		const struct bench_tcp_case *p = find_tcp(s, BENCH_TCP_PVNET, streams[k]);
		const struct bench_tcp_case *v = find_tcp(s, BENCH_TCP_VETH, streams[k]);
		const struct bench_tcp_case *t = find_tcp(s, BENCH_TCP_TAPFWD, streams[k]);

		if (!p)
			continue;
		bench_fmt_ratio(x, sizeof(x), v ? p->gbit_s / v->gbit_s : NAN);
		bench_fmt_ratio(y, sizeof(y), v ? p->sd_us_per_kb / v->sd_us_per_kb : NAN);
		cat(s->verdict, sizeof(s->verdict),
		    "%s%u stream%s: pvnet %.2f Gbit/s, %s veth, service demand %s veth, "
		    "TCPOFOQueue %lld",
		    s->verdict[0] ? "; " : "", streams[k], streams[k] == 1 ? "" : "s", p->gbit_s, x,
		    y, p->ofo);
		if (t) {
			/* The floor of any TAP path: how far pvnet is from it, and it from veth. */
			bench_fmt_ratio(x, sizeof(x), p->gbit_s / t->gbit_s);
			bench_fmt_ratio(y, sizeof(y), v ? t->gbit_s / v->gbit_s : NAN);
			cat(s->verdict, sizeof(s->verdict),
			    " (%s tapfwd, the cheapest TAP-to-TAP path, itself %s veth)", x, y);
		}
	}
	if (!s->verdict[0])
		snprintf(s->verdict, sizeof(s->verdict), "no pvnet case measured");
	{
		const struct bench_tcp_case *p1 = find_tcp(s, BENCH_TCP_PVNET, 1),
					    *p4 = find_tcp(s, BENCH_TCP_PVNET, 4);

		if (p1 && p4) {
			bench_fmt_ratio(x, sizeof(x), p4->gbit_s / p1->gbit_s);
			cat(s->verdict, sizeof(s->verdict), "; pvnet 4 queues/4 streams vs 1: %s",
			    x);
		}
	}
	bench_fmt_ratio(x, sizeof(x), FIELD_IPERF_4VCPU_MBIT / FIELD_IPERF_1VCPU_MBIT);
	cat(s->verdict, sizeof(s->verdict),
	    "; field report: xennet %.0f Mbit/s at 1 vCPU, %.0f at 4 (%s)", FIELD_IPERF_1VCPU_MBIT,
	    FIELD_IPERF_4VCPU_MBIT, x);
}

/**
 * bench_peer_ratios() - the peers' ratios at one row: pvnet's median Gbit/s over the peer's
 * @s: the peers section (pvnet's points)
 * @r: the row
 * @memif: receives pvnet / memif, NaN when either is unknown
 * @veth: receives pvnet / veth, NaN when either is unknown
 */
void bench_peer_ratios(const struct bench_section *s, const struct bench_peer_row *r, double *memif,
		       double *veth)
{
	const struct bench_point *p = bench_section_find(s, r->frame_size, 0, NULL, -2);
	double g = p ? bench_point_median(p, BENCH_FIG_GBIT_S) : NAN;

	*memif = g / r->memif_gbit_s;
	*veth = g / r->veth_gbit_s;
}

static void verdict_peers(struct bench_section *s)
{
	const char *name[2] = {"memif", "veth"};

	s->verdict[0] = '\0';
	for (unsigned int w = 0; w < 2; w++) {
		double v[BENCH_MAX_LIST], lo = INFINITY, hi = -INFINITY;
		uint32_t lo_s = 0, hi_s = 0;
		unsigned int n = 0;
		struct bench_stat st;
		char a[16], b[16], c[16];

		for (unsigned int i = 0; i < s->npeers; i++) {
			double m, e, x;

			bench_peer_ratios(s, &s->peers[i], &m, &e);
			x = w ? e : m;
			if (!isfinite(x))
				continue;
			v[n++] = x;
			if (x < lo) {
				lo = x;
				lo_s = s->peers[i].frame_size;
			}
			if (x > hi) {
				hi = x;
				hi_s = s->peers[i].frame_size;
			}
		}
		if (!n) {
			cat(s->verdict, sizeof(s->verdict), "%spvnet/%s: not measured",
			    s->verdict[0] ? "; " : "", name[w]);
			continue;
		}
		bench_stat_of(v, n, &st);
		bench_fmt_ratio(a, sizeof(a), lo);
		bench_fmt_ratio(b, sizeof(b), hi);
		bench_fmt_ratio(c, sizeof(c), st.median);
		cat(s->verdict, sizeof(s->verdict),
		    "%spvnet/%s Gbit/s: %s (%u B) .. %s (%u B), median %s",
		    s->verdict[0] ? "; " : "", name[w], a, lo_s, b, hi_s, c);
	}
}

/**
 * bench_section_verdict() - compute a section's ratios and its one-line verdict
 * @s: the section; its points' ratio and field are set, @s->verdict written
 *
 * A skipped section's verdict is "skipped: REASON".
 */
void bench_section_verdict(struct bench_section *s)
{
	if (s->skipped[0]) {
		snprintf(s->verdict, sizeof(s->verdict), "skipped: %s", s->skipped);
		return;
	}
	switch (s->id) {
	case BENCH_SEC_SIZES:
		verdict_sizes(s);
		break;
	case BENCH_SEC_VCPUS:
		verdict_vcpus(s);
		break;
	case BENCH_SEC_TX_MODE:
		verdict_tx_mode(s);
		break;
	case BENCH_SEC_STEERING:
		verdict_steering(s);
		break;
	case BENCH_SEC_TCP:
		verdict_tcp(s);
		break;
	case BENCH_SEC_PEERS:
		verdict_peers(s);
		break;
	default:
		snprintf(s->verdict, sizeof(s->verdict), "unknown section");
	}
}
