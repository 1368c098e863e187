// SPDX-License-Identifier: MIT
/* bench_output.c - pvnet bench: the sections as JSON and as text tables; tcp result lines (pure) */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * The other half of bench_report.c: a section whose verdict is computed
 * becomes a JSON object (docs/benchmarks.md, "The document") and a text
 * table with its verdict line.  Functions of their arguments only.
 */

static const char *const tcp_path_name[] = {
    [BENCH_TCP_VETH] = "veth", [BENCH_TCP_PVNET] = "pvnet", [BENCH_TCP_TAPFWD] = "tapfwd"};

static json_t *tcp2json(const struct bench_tcp_case *c)
{
	return json_pack("{s:s, s:s, s:i, s:o, s:o, s:I, s:I}", "case", c->name, "path",
			 tcp_path_name[c->path], "streams", (int)c->streams, "gbit_s",
			 bench_jnum(c->gbit_s), "service_demand_us_per_kb",
			 bench_jnum(c->sd_us_per_kb), "retransmits", (json_int_t)c->retrans,
			 "tcp_ofo_queue", (json_int_t)c->ofo);
}

static json_t *peer2json(const struct bench_section *s, const struct bench_peer_row *r)
{
	const struct bench_point *p = bench_section_find(s, r->frame_size, 0, NULL, -2);
	double m, v;

	bench_peer_ratios(s, r, &m, &v);
	return json_pack(
	    "{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "frame_size", (int)r->frame_size,
	    "pvnet_gbit_s", bench_jnum(p ? bench_point_median(p, BENCH_FIG_GBIT_S) : NAN),
	    "pvnet_mpps", bench_jnum(p ? bench_point_median(p, BENCH_FIG_MPPS) : NAN),
	    "memif_gbit_s", bench_jnum(r->memif_gbit_s), "memif_mpps", bench_jnum(r->memif_mpps),
	    "veth_gbit_s", bench_jnum(r->veth_gbit_s), "veth_mpps", bench_jnum(r->veth_mpps),
	    "pvnet_per_memif", bench_jnum(m), "pvnet_per_veth", bench_jnum(v));
}

/**
 * bench_section2json() - a section as JSON
 * @s: the section, its verdict computed
 *
 * {"title", "field_report", "ratio_of", "runs": [points, tcp cases or peer rows],
 * "verdict", "skipped": null or the reason, "note" (when there is one); peers
 * also has "pvnet": its own points}
 *
 * Return: a new object, or NULL
 */
json_t *bench_section2json(const struct bench_section *s)
{
	json_t *o, *runs = json_array();

	if (!runs)
		return NULL;
	if (s->id == BENCH_SEC_TCP) {
		for (unsigned int i = 0; i < s->ntcp; i++)
			json_array_append_new(runs, tcp2json(&s->tcp[i]));
	} else if (s->id == BENCH_SEC_PEERS) {
		for (unsigned int i = 0; i < s->npeers; i++)
			json_array_append_new(runs, peer2json(s, &s->peers[i]));
	} else {
		for (unsigned int i = 0; i < s->npts; i++)
			json_array_append_new(runs, bench_point2json(&s->pts[i]));
	}
	o = json_pack("{s:s, s:s, s:s, s:o, s:s}", "title", bench_sec_info[s->id].title,
		      "field_report", bench_sec_info[s->id].field, "ratio_of",
		      bench_sec_info[s->id].ratio_of, "runs", runs, "verdict", s->verdict);
	if (!o)
		return NULL;
	json_object_set_new(o, "skipped", s->skipped[0] ? json_string(s->skipped) : json_null());
	if (s->note[0])
		json_object_set_new(o, "note", json_string(s->note));
	if (s->id == BENCH_SEC_TCP) {
		json_t *ns = json_array();
		char buf[sizeof(s->netns)], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", s->netns);
		for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
			json_array_append_new(ns, json_string(t));
		json_object_set_new(o, "namespaces", ns);
		json_object_set_new(o, "placement",
				    s->placement[0] ? json_string(s->placement) : json_null());
	}
	if (s->id != BENCH_SEC_TCP) {
		double lo, hi;
		unsigned int n = bench_section_host(s, &lo, &hi);

		json_object_set_new(o, "host_rtt_ns",
				    n ? json_pack("{s:i, s:i, s:i, s:b}", "min", (int)lo, "max",
						  (int)hi, "samples", (int)n, "moved",
						  bench_host_moved(n, lo, hi))
				      : json_null());
	}
	if (s->id == BENCH_SEC_PEERS) {
		json_t *pv = json_array();

		for (unsigned int i = 0; i < s->npts; i++)
			json_array_append_new(pv, bench_point2json(&s->pts[i]));
		json_object_set_new(o, "pvnet", pv);
	}
	return o;
}

/* A figure's median (and min-max when repeated) into a table cell. */
static void cell(char *b, size_t n, const struct bench_point *p, enum bench_fig f, int prec)
{
	struct bench_stat s;

	bench_point_stat(p, f, &s);
	if (!isfinite(s.median))
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%.*f", prec, s.median);
}

static void range(char *b, size_t n, const struct bench_point *p, enum bench_fig f, int prec)
{
	struct bench_stat s;

	bench_point_stat(p, f, &s);
	if (s.n < 2)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%.*f-%.*f", prec, s.min, prec, s.max);
}

/* The host's round trips around a point's runs, min-max ("-" when none was sampled). */
static void host_cell(char *b, size_t n, const struct bench_point *p)
{
	double lo, hi;

	if (!bench_point_host(p, &lo, &hi))
		snprintf(b, n, "-");
	else if (lo == hi)
		snprintf(b, n, "%.0f", lo);
	else
		snprintf(b, n, "%.0f-%.0f", lo, hi);
}

static void print_point(const struct bench_section *s, const struct bench_point *p,
			unsigned int repeat, FILE *f)
{
	char c[9][24], r[48], x[16];

	if (!p->nruns) {
		/* No run and no reason: the bench stopped (a signal) before this point was measured. */
		fprintf(f, "  %6u %2u %-10s %-8s %s%s\n", p->frame_size, p->queues, p->tx_mode,
			bench_steering_name(p->steering), p->error[0] ? "failed: " : "",
			p->error[0] ? p->error : "not measured: the bench was interrupted");
		return;
	}
	bench_fmt_ratio(x, sizeof(x), p->ratio);
	range(r, sizeof(r), p, BENCH_FIG_GBIT_S, 2);
	switch (s->id) {
	case BENCH_SEC_SIZES:
	case BENCH_SEC_PEERS:
		cell(c[0], 24, p, BENCH_FIG_TX_KBYTE_S, 0);
		cell(c[1], 24, p, BENCH_FIG_RX_KBYTE_S, 0);
		cell(c[2], 24, p, BENCH_FIG_GBIT_S, 3);
		cell(c[3], 24, p, BENCH_FIG_MPPS, 3);
		cell(c[4], 24, p, BENCH_FIG_CPU_US_PER_KB, 4);
		cell(c[5], 24, p, BENCH_FIG_GRANT_OPS_PER_1000, 1);
		cell(c[6], 24, p, BENCH_FIG_DROPPED, 0);
		fprintf(f, "  %6u %12s %12s %8s %7s %8s %7s %9s %8s", p->frame_size, c[0], c[1],
			c[2], c[3], c[4], c[5], c[6], s->id == BENCH_SEC_SIZES ? x : "");
		break;
	case BENCH_SEC_VCPUS:
		cell(c[0], 24, p, BENCH_FIG_GBIT_S, 3);
		cell(c[1], 24, p, BENCH_FIG_MPPS, 3);
		cell(c[2], 24, p, BENCH_FIG_CPU_US_PER_KB, 4);
		cell(c[3], 24, p, BENCH_FIG_DROPPED, 0);
		fprintf(f, "  %6u %6u %8s %7s %8s %9s %8s", p->queues, p->frame_size, c[0], c[1],
			c[2], c[3], x);
		break;
	case BENCH_SEC_TX_MODE:
		cell(c[0], 24, p, BENCH_FIG_GBIT_S, 3);
		cell(c[1], 24, p, BENCH_FIG_MPPS, 3);
		cell(c[2], 24, p, BENCH_FIG_CPU_US_PER_KB, 4);
		cell(c[3], 24, p, BENCH_FIG_GRANT_OPS_PER_1000, 1);
		cell(c[4], 24, p, BENCH_FIG_GRANT_MAP_PER_1000, 1);
		cell(c[5], 24, p, BENCH_FIG_GRANT_BATCHES_PER_1000, 1);
		fprintf(f, "  %6u %-10s %8s %7s %8s %7s %7s %7s %8s", p->frame_size, p->tx_mode,
			c[0], c[1], c[2], c[3], c[4], c[5], x);
		break;
	case BENCH_SEC_STEERING:
		cell(c[0], 24, p, BENCH_FIG_GBIT_S, 3);
		cell(c[1], 24, p, BENCH_FIG_OUT_OF_ORDER, 0);
		cell(c[2], 24, p, BENCH_FIG_DROPPED, 0);
		fprintf(f, "  %-8s %6u %6u %8s %9s %9s %8s", bench_steering_name(p->steering),
			p->queues, p->frame_size, c[0], c[1], c[2], x);
		break;
	default:
		break;
	}
	/* What other processes took meanwhile: a low figure beside a high one says why. */
	cell(c[7], 24, p, BENCH_FIG_OTHERS_CPU_S, 2);
	host_cell(c[8], 24, p);
	fprintf(f, " %6s %9s", c[7], c[8]);
	if (repeat > 1)
		fprintf(f, " %15s", r);
	fprintf(f, "%s\n", p->nfailed ? " (a run failed)" : "");
}

static void print_header(const struct bench_section *s, unsigned int repeat, FILE *f)
{
	switch (s->id) {
	case BENCH_SEC_SIZES:
	case BENCH_SEC_PEERS:
		fprintf(f, "  %6s %12s %12s %8s %7s %8s %7s %9s %8s", "frame", "Tx KByte/s",
			"Rx KByte/s", "Gbit/s", "Mpps", "us/KB", "gnt/1k", "dropped",
			s->id == BENCH_SEC_SIZES ? "x field" : "");
		break;
	case BENCH_SEC_VCPUS:
		fprintf(f, "  %6s %6s %8s %7s %8s %9s %8s", "queues", "frame", "Gbit/s", "Mpps",
			"us/KB", "dropped", "x 1q");
		break;
	case BENCH_SEC_TX_MODE:
		fprintf(f, "  %6s %-10s %8s %7s %8s %7s %7s %7s %8s", "frame", "mode", "Gbit/s",
			"Mpps", "us/KB", "gnt/1k", "map/1k", "bat/1k", "x copy");
		break;
	case BENCH_SEC_STEERING:
		fprintf(f, "  %-8s %6s %6s %8s %9s %9s %8s", "policy", "queues", "frame", "Gbit/s",
			"ooo", "dropped", "x xps");
		break;
	default:
		return;
	}
	fprintf(f, " %6s %9s", "others", "host ns");
	if (repeat > 1)
		fprintf(f, " %15s", "Gbit/s min-max");
	fprintf(f, "\n");
}

/* Whether the host kept its vCPUs in one place while the section ran. */
static void print_host(const struct bench_section *s, FILE *f)
{
	double lo, hi;
	unsigned int n = bench_section_host(s, &lo, &hi);

	if (!n)
		return;
	if (bench_host_moved(n, lo, hi))
		fprintf(f,
			"  host: round trip %.0f-%.0f ns over %u samples: the host moved the vCPUs "
			"during the section, so its ratios mix host states (docs/benchmarks.md, "
			"\"Where the host puts the vCPUs\")\n",
			lo, hi, n);
	else
		fprintf(f, "  host: round trip %.0f-%.0f ns over %u samples: steady\n", lo, hi, n);
}

/**
 * bench_section_print() - a section as text: title, table, note, verdict
 * @s: the section, its verdict computed
 * @repeat: --repeat (a min-max column of Gbit/s when above 1)
 * @f: where to
 */
void bench_section_print(const struct bench_section *s, unsigned int repeat, FILE *f)
{
	bool partial = false;

	fprintf(f, "\n%u. %s: %s\n", (unsigned int)s->id + 1, bench_sec_names[s->id],
		bench_sec_info[s->id].title);
	/* A section cut short (interrupted) still shows the points it measured. */
	for (unsigned int i = 0; i < s->npts; i++)
		partial |= s->pts[i].nruns > 0;
	if (s->skipped[0] && !partial && !s->ntcp) {
		fprintf(f, "  verdict: skipped: %s\n", s->skipped);
		return;
	}
	if (s->id == BENCH_SEC_TCP) {
		fprintf(f, "  %-12s %7s %8s %10s %8s %11s\n", "case", "streams", "Gbit/s",
			"SD us/KB", "retrans", "TCPOFOQueue");
		for (unsigned int i = 0; i < s->ntcp; i++)
			fprintf(f, "  %-12s %7u %8.2f %10.3f %8lld %11lld\n", s->tcp[i].name,
				s->tcp[i].streams, s->tcp[i].gbit_s, s->tcp[i].sd_us_per_kb,
				s->tcp[i].retrans, s->tcp[i].ofo);
	} else if (s->id == BENCH_SEC_PEERS) {
		fprintf(f, "  %6s %12s %12s %12s %12s %12s\n", "frame", "pvnet Gbit/s",
			"memif Gbit/s", "veth Gbit/s", "pvnet/memif", "pvnet/veth");
		for (unsigned int i = 0; i < s->npeers; i++) {
			const struct bench_peer_row *r = &s->peers[i];
			const struct bench_point *p =
			    bench_section_find(s, r->frame_size, 0, NULL, -2);
			char g[24], m[24], v[24], xm[16], xv[16];
			double rm, rv;

			bench_peer_ratios(s, r, &rm, &rv);
			if (p)
				cell(g, sizeof(g), p, BENCH_FIG_GBIT_S, 3);
			else
				snprintf(g, sizeof(g), "-");
			snprintf(m, sizeof(m), isfinite(r->memif_gbit_s) ? "%.3f" : "-",
				 r->memif_gbit_s);
			snprintf(v, sizeof(v), isfinite(r->veth_gbit_s) ? "%.3f" : "-",
				 r->veth_gbit_s);
			bench_fmt_ratio(xm, sizeof(xm), rm);
			bench_fmt_ratio(xv, sizeof(xv), rv);
			fprintf(f, "  %6u %12s %12s %12s %12s %12s\n", r->frame_size, g, m, v, xm,
				xv);
		}
	} else {
		print_header(s, repeat, f);
		for (unsigned int i = 0; i < s->npts; i++)
			print_point(s, &s->pts[i], repeat, f);
	}
	if (s->id != BENCH_SEC_TCP && s->id != BENCH_SEC_PEERS && s->npts)
		fprintf(
		    f, "  (others: CPU seconds other processes used in the window; more than a "
		       "few hundredths: the machine was shared.  host ns: the cache-line round "
		       "trip between pvnetd's CPU and the frontends' before and after the runs)\n");
	print_host(s, f);
	if (s->note[0])
		fprintf(f, "  note: %s\n", s->note);
	fprintf(f, "  verdict: %s\n", s->verdict);
}

/**
 * bench_tcp_parse_line() - one result line of bench/tcp-vs-veth.sh
 * @line: "CASE<TAB>Gbit/s<TAB>SD<TAB>snd_cpu%<TAB>rcv_cpu%<TAB>retrans<TAB>TCPOFOQueue"
 *	where CASE is veth-P, pvnet-Qq-P or tapfwd-P (P parallel streams)
 * @c: filled
 *
 * Return: 0, or -EINVAL for any other line (comments, the heading)
 */
int bench_tcp_parse_line(const char *line, struct bench_tcp_case *c)
{
	char name[24];
	double g, sd, scpu, rcpu;
	long long re, ofo;
	const char *dash;
	unsigned int streams;

	memset(c, 0, sizeof(*c));
	if (sscanf(line, "%23[^\t]\t%lf\t%lf\t%lf\t%lf\t%lld\t%lld", name, &g, &sd, &scpu, &rcpu,
		   &re, &ofo) != 7)
		return -EINVAL;
	dash = strrchr(name, '-');
	if (!dash || sscanf(dash + 1, "%u", &streams) != 1 || !streams)
		return -EINVAL;
	if (!strncmp(name, "veth-", 5))
		c->path = BENCH_TCP_VETH;
	else if (!strncmp(name, "pvnet-", 6))
		c->path = BENCH_TCP_PVNET;
	else if (!strncmp(name, "tapfwd-", 7))
		c->path = BENCH_TCP_TAPFWD;
	else
		return -EINVAL;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->streams = streams;
	c->gbit_s = g;
	c->sd_us_per_kb = sd;
	c->retrans = re;
	c->ofo = ofo;
	return 0;
}
