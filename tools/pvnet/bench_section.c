// SPDX-License-Identifier: MIT
/* bench_section.c - pvnet bench: the sections of the default run (points, rounds, output) */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"

/*
 * Theory of Operation
 *
 * A frame-level section (sizes, vcpus, tx_mode, steering, and pvnet's side
 * of peers) is a list of points; --repeat N runs the whole list N times,
 * round after round (A B C A B C, not A A B B C C), so that a machine whose
 * speed drifts moves every point alike.  Every run is appended to the
 * document's `results` (its index kept in the point) and accounted in its
 * point; bench_report.c turns the points into medians, ratios, a verdict,
 * JSON and a table, printed when the section ends.  The sections run in
 * order; a signal stops the current run and skips the rest.
 */

/* vcpus and steering: 1514 B, an Ethernet MTU frame, as the field's iperf3 and netperf ran. */
#define VCPU_FRAME  1514u
#define STEER_FRAME 1514u
/* steering: as many queues as this machine class has CPUs, senders hopping between them. */
#define STEER_QUEUES 2u
/* tx_mode: an MTU frame and the 64 KiB frame (the field report's GSO-sized packets). */
static const uint32_t txm_sizes[] = {1514, 65535};

/**
 * bench_pd_of() - the pvnetd that runs with a tx mode
 * @b: the bench
 * @mode: the mode
 *
 * Return: it (with -d: the one pvnetd), or NULL when none was started for @mode
 */
struct bench_pvnetd *bench_pd_of(struct bench *b, const char *mode)
{
	if (b->ext_run_dir)
		return &b->pd[0];
	for (unsigned int i = 0; i < b->npd; i++)
		if (!strcmp(b->pd_mode[i], mode))
			return &b->pd[i];
	return NULL;
}

/**
 * bench_record() - append a run to the document's results and count it
 * @b: the bench
 * @r: the run
 * @print_row: also print its table row on stdout (--section stream)
 *
 * Return: its index in `results`
 */
int bench_record(struct bench *b, struct bench_result *r, bool print_row)
{
	int idx = (int)json_array_size(b->results);
	char row[512];

	if (r->error[0])
		b->runs_failed++;
	else
		b->runs_ok++;
	json_array_append_new(b->results, bench_result2json(r));
	if (print_row) {
		bench_table_row(r, row, sizeof(row));
		printf("%s\n", row);
		fflush(stdout);
	}
	return idx;
}

static struct bench_point *add_point(struct bench_section *s, unsigned int cap)
{
	if (!s->pts)
		s->pts = calloc(cap, sizeof(*s->pts));
	if (!s->pts || s->npts >= cap)
		return NULL;
	return &s->pts[s->npts++];
}

/* The map-mode pvnetd's name for the frame sections (with -d: whatever it runs). */
static const char *frame_mode(const struct bench *b)
{
	return b->ext_run_dir ? b->ext_mode : "map";
}

/* A section's points from the options; 0, or -ENOMEM. */
static int make_points(struct bench *b, struct bench_section *s)
{
	struct bench_point *p;

	switch (s->id) {
	case BENCH_SEC_SIZES:
	case BENCH_SEC_PEERS:
		for (unsigned int i = 0; i < b->nsizes; i++) {
			if (!(p = add_point(s, b->nsizes)))
				return -ENOMEM;
			bench_point_init(p, b->sizes[i], 1, frame_mode(b), BENCH_STEER_QUEUE,
					 false);
		}
		break;
	case BENCH_SEC_VCPUS:
		for (unsigned int i = 0; i < b->nqueues; i++) {
			if (!(p = add_point(s, b->nqueues)))
				return -ENOMEM;
			bench_point_init(p, VCPU_FRAME, b->queues[i], frame_mode(b),
					 BENCH_STEER_QUEUE, false);
		}
		break;
	case BENCH_SEC_TX_MODE:
		for (unsigned int k = 0; k < 2; k++)
			for (unsigned int m = 0; m < b->nmodes; m++) {
				const struct bench_pvnetd *pd = bench_pd_of(b, b->modes[m]);

				/* Only the modes this pvnetd takes (issue 7's persistent is new). */
				if (!strcmp(b->modes[m], "persistent") && (!pd || pd->pid <= 0)) {
					if (!k)
						snprintf(s->note, sizeof(s->note),
							 "persistent left out: %s",
							 pd && pd->failed[0] ? pd->failed
									     : "no pvnetd for it");
					continue;
				}
				if (!(p = add_point(s, 2 * BENCH_MAX_MODES)))
					return -ENOMEM;
				bench_point_init(p, txm_sizes[k], 1, b->modes[m], BENCH_STEER_QUEUE,
						 false);
			}
		break;
	case BENCH_SEC_STEERING:
		for (unsigned int i = 0; i < b->nsteering; i++) {
			if (!(p = add_point(s, b->nsteering)))
				return -ENOMEM;
			bench_point_init(p, STEER_FRAME, STEER_QUEUES, frame_mode(b),
					 b->steering[i], true);
		}
		break;
	default:
		break;
	}
	return 0;
}

/* Run every point of @s s->repeat times, in rounds. */
static void run_points(struct bench *b, struct bench_section *s)
{
	for (unsigned int rep = 0; rep < s->repeat; rep++)
		for (unsigned int i = 0; i < s->npts; i++) {
			struct bench_point *p = &s->pts[i];
			struct bench_result r;
			int idx;

			if (b->interrupted)
				return;
			if (b->progress)
				fprintf(stderr, "[%u/%u] %s: %u B, %s, %u queue%s, %s%s ...\n",
					++b->done, b->total, bench_sec_names[s->id], p->frame_size,
					p->tx_mode, p->queues, p->queues == 1 ? "" : "s",
					bench_steering_name(p->steering),
					p->migrate ? ", migrating" : "");
			bench_run_one(b, bench_pd_of(b, p->tx_mode), p->tx_mode, p->queues,
				      p->frame_size, p->steering, p->migrate, &r);
			if (b->interrupted)
				return;
			idx = bench_record(b, &r, false);
			bench_point_add(p, &r, idx);
		}
}

/* Peers: pvnet's figures are the sizes section's when it ran the same sizes. */
static bool reuse_sizes(const struct bench_section *sizes, struct bench_section *peers)
{
	if (!sizes->selected || sizes->skipped[0] || !sizes->npts)
		return false;
	peers->pts = calloc(sizes->npts, sizeof(*peers->pts));
	if (!peers->pts)
		return false;
	memcpy(peers->pts, sizes->pts, sizes->npts * sizeof(*peers->pts));
	peers->npts = sizes->npts;
	/* The sizes verdict set these against netio; the peers' ratios are their own. */
	for (unsigned int i = 0; i < peers->npts; i++)
		peers->pts[i].ratio = peers->pts[i].field = NAN;
	return true;
}

/**
 * bench_sections_run() - run the selected sections in order, print each when it ends
 * @b: the bench (b->sel says which)
 * @secs: BENCH_SEC_N sections, zeroed; filled (points, verdicts, skip reasons)
 */
void bench_sections_run(struct bench *b, struct bench_section *secs)
{
	for (unsigned int k = 0; k < BENCH_SEC_N; k++) {
		secs[k].id = (enum bench_sec)k;
		secs[k].selected = b->sel[k];
		secs[k].repeat = b->repeat_given || !bench_sec_info[k].rounds
				     ? b->repeat
				     : bench_sec_info[k].rounds;
	}
	if (b->ext_run_dir && b->sel[BENCH_SEC_TX_MODE])
		snprintf(secs[BENCH_SEC_TX_MODE].skipped, sizeof(secs[0].skipped),
			 "with -d the running pvnetd's tx mode is fixed");
	b->total = 0;
	for (unsigned int k = 0; k < BENCH_SEC_N; k++) {
		if (!b->sel[k] || secs[k].skipped[0] || k == BENCH_SEC_TCP)
			continue;
		if (k == BENCH_SEC_PEERS && b->sel[BENCH_SEC_SIZES])
			continue;
		if (make_points(b, &secs[k]) < 0) {
			snprintf(secs[k].skipped, sizeof(secs[k].skipped), "out of memory");
			continue;
		}
		b->total += secs[k].npts * secs[k].repeat;
	}
	for (unsigned int k = 0; k < BENCH_SEC_N; k++) {
		struct bench_section *s = &secs[k];

		if (!s->selected)
			continue;
		if (b->interrupted) {
			snprintf(s->skipped, sizeof(s->skipped), "interrupted");
		} else if (!s->skipped[0]) {
			if (k == BENCH_SEC_TCP) {
				bench_tcp_run(b, s);
			} else if (k == BENCH_SEC_PEERS) {
				/* The peers first: when none is installed, pvnet's side is moot. */
				bench_peers_run(b, s);
				if (!s->skipped[0] && !b->interrupted &&
				    (s->npts || !reuse_sizes(&secs[BENCH_SEC_SIZES], s))) {
					if (!s->npts)
						make_points(b, s);
					run_points(b, s);
				}
			} else {
				run_points(b, s);
			}
			if (b->interrupted)
				snprintf(s->skipped, sizeof(s->skipped), "interrupted");
		}
		bench_section_verdict(s);
		bench_section_print(s, s->repeat, stdout);
		fflush(stdout);
	}
}
