// SPDX-License-Identifier: MIT
// test_chaos.c - a seeded, bounded, randomized hostile-frontend campaign against netback

/*
 * The campaign.  For each TX mode and seed, a world of three vifs (fx.h):
 * A hostile, B and C healthy.  A runs a few hundred steps drawn by a PRNG
 * seeded with the seed: well-formed frames (14..65535 bytes, any slot
 * size, GSO extras), raw TX requests with random fields and grant refs
 * (its own, granted to another domain, read-only, never granted, out of
 * range), extra-info chains of random types and lengths, TX and RX
 * req_prod jumps (near, past a ring, far, backwards), event storms, RX
 * buffers with bad, foreign and read-only refs, its grant entries rewritten
 * under the backend, xenbus state writes and reconnects (some with keys the
 * backend must refuse), pauses.  C feeds A frames so that A's RX side has
 * work.  Between steps B and C exchange checked frames.  The campaign ends
 * with A's domain destroyed, abruptly (vif still up) or after the
 * toolstack removed the vif, by seed.
 *
 * Asserted for every seed, besides "no crash, no sanitizer report":
 *  - every frame B and C send each other arrives once, in order,
 *    bit-exact, and all their TX requests are answered OKAY; what A gets
 *    through the bridge to them (strays: a learning bridge floods and
 *    forwards whatever A sends) is well formed (14..65535 bytes, no error
 *    status) and never has B's or C's MAC as its source;
 *  - A is Connected with no fatal error pending, or the backend disabled it
 *    with a reason and a fatal count, or A closed itself or began a new
 *    connection (which takes the last one's reason away); a connect with
 *    bad keys is refused in the same way;
 *  - what A reads is bounded: no TX or RX response beyond the furthest
 *    req_prod A published, TX statuses from netif.h, RX slots within their
 *    page, RX extras GSO or HASH (unless A had the backend write into its
 *    own ring pages);
 *  - after each disconnect none of A's grants is still in use; once A's
 *    domain and vif are gone there is no zombie and no port of A's, and the
 *    mappings left are exactly B's and C's; then there are none.
 *
 * A's memory never holds B's or C's MAC: its TX pages are filled once with
 * frame headers from A (to B, C, itself, broadcast, multicast, unknown and
 * link-local destinations), B and C learn their MACs while A is down, and C
 * feeds A from a second MAC.  So a stray with B's or C's source can only be
 * netback mixing up frames.
 *
 * ThreadSanitizer.  A guest writing what the backend reads at the same time
 * is the threat model, and TSan reports every such write as a race.  Under
 * TSan, A writes only ring slots it owns (free by its own rsp_cons), its
 * grant entries (with atomics, as hv reads them) and ring indices; the
 * racing behaviours (requests and pages rewritten after the push, ring
 * overflows, pages reached both as TX source and RX target) run in the
 * other builds.
 *
 * chaos_front.c plays A; this file runs the campaign, the healthy pair and
 * the checks of the end, and a test reduced from a bug the campaign found.
 *
 * Replay: a failure names mode, seed and step, and prints the command that
 * runs just that seed (PVNET_CHAOS_MODE=<map|copy|persistent>
 * PVNET_CHAOS_FIRST=<seed> PVNET_CHAOS_SEEDS=1 PVNET_CHAOS_STEPS=<steps>).
 * PVNET_CHAOS_SEEDS=N runs N seeds per mode and PVNET_CHAOS_STEPS sets the
 * steps; without either, 4 seeds of 300 steps and one of 1500.  The steps
 * are a function of the seed, the backend's thread timing is not: a
 * failure that depends on timing may take a few runs.
 */

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "chaos.h"

/* Seeds per mode and steps per seed by default: with the long seed, 30 s on 2 CPUs (plain). */
#define CHAOS_SEEDS 4
#define CHAOS_STEPS 300
/*
 * And by default one seed per mode of this many steps after them: the two
 * faults of the campaign's model found on 2026-12-07 showed only past 300
 * steps (a producer jumped more than 2^31 ahead, in 1 seed of 450; an A
 * that began again after a disable, in up to two fifths of the seeds).
 * About 6 s a mode.
 */
#define CHAOS_LONG_STEPS 1500
/* Reconnects per seed: each is a full connect (refs and ports are recycled). */
#define CHAOS_RECONNECTS 100

/* Weights: A lives long enough between fatal errors to be busy when it is up. */
static const struct {
	const char *name;
	unsigned int weight;
} kinds[S_N] = {
    [S_FRAMES] = {"frames", 18},   [S_RAW] = {"raw", 7},
    [S_EXTRAS] = {"extras", 6},	   [S_TX_JUMP] = {"tx-jump", 3},
    [S_REWRITE] = {"rewrite", 5},  [S_STORM] = {"storm", 3},
    [S_RX_POST] = {"rx-post", 12}, [S_RX_JUMP] = {"rx-jump", 2},
    [S_FEED] = {"feed", 12},	   [S_READ] = {"read", 14},
    [S_STATE] = {"state", 2},	   [S_GRANT] = {"grant", 4},
    [S_PAUSE] = {"pause", 8},	   [S_RECONNECT] = {"reconnect", 0},
};

/* A's counters the summary adds up: which defences the campaign reached. */
static const char *const a_ctr[] = {"tx_packets",      "tx_dropped",	   "tx_bad_gref",
				    "tx_bad_offload",  "tx_frag_overflow", "tx_bad_size",
				    "tx_runt",	       "tx_empty_slots",   "rx_packets",
				    "rx_bad_gref",     "rx_dropped",	   "persistent_overflow",
				    "evtchn_spurious", "rx_held_copied",   "tx_zerocopy_fail"};
#define NCTR (sizeof(a_ctr) / sizeof(a_ctr[0]))
_Static_assert(NCTR == CHAOS_NCTR, "the tally has room for every counter");

static struct chaos_tally tally[3];

/* PVNET_CHAOS_TRACE=1: print every step (for a replay). */
static bool trace;

/* On failure: every non-zero counter of the vifs still there, and what they hold. */
static void chaos_dump(struct chaos *ch)
{
	struct back_vif *v[3] = {ch->x->va, ch->x->vb, ch->x->vc};
	unsigned int ns;
	const struct back_stat_desc *d = back_stats_names(&ns);

	for (unsigned int i = 0; i < 3; i++) {
		if (!v[i])
			continue;
		print_message("vif %c: state %d, error '%s'\n", 'A' + i, back_vif_state(v[i]),
			      back_vif_error(v[i]) ? back_vif_error(v[i]) : "");
		for (unsigned int qi = 0; qi < back_vif_num_queues(v[i]); qi++)
			print_message("  q%u: inflight %u, rx queued %u bytes, worker %s, rx %s\n",
				      qi, atomic_load(&v[i]->q[qi]->inflight),
				      atomic_load(&v[i]->q[qi]->rxq_bytes),
				      atomic_load(&v[i]->q[qi]->sleeping) ? "asleep" : "awake",
				      atomic_load(&v[i]->q[qi]->rx_blocked) ? "blocked"
									    : "not blocked");
		for (unsigned int k = 0; k < ns; k++)
			for (unsigned int qi = 0; qi < FF_MAX_QUEUES; qi++)
				if (back_vif_stat(v[i], qi, d[k].name))
					print_message(
					    "  q%u %-20s %lu\n", qi, d[k].name,
					    (unsigned long)back_vif_stat(v[i], qi, d[k].name));
	}
}

void chaos_fail(struct chaos *ch, int line, const char *cond, const char *fmt, ...)
{
	const char *mode = back_tx_mode_name(ch->mode);
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ch->x)
		chaos_dump(ch);
	print_error("chaos %s seed %u step %u (%s): %s\n  [line %d: %s]\n", mode, ch->seed,
		    ch->step, ch->what, msg, line, cond);
	if (ch->seed) /* the campaign's; the reduced tests have none */
		print_error(
		    "  replay: PVNET_CHAOS_MODE=%s PVNET_CHAOS_FIRST=%u PVNET_CHAOS_SEEDS=1 "
		    "PVNET_CHAOS_STEPS=%u\n",
		    mode, ch->seed, ch->steps);
	fail();
}

/* Count a fatal reason, up to its first digit (the numbers differ every time). */
void chaos_note_fatal(struct chaos *ch, const char *why)
{
	struct chaos_tally *t = ch->t;
	char key[40];
	size_t n = strcspn(why, "0123456789");

	snprintf(key, sizeof(key), "%.*s", (int)(n < sizeof(key) - 1 ? n : sizeof(key) - 1), why);
	t->fatals++;
	for (unsigned int i = 0; i < t->nwhy; i++) {
		if (strcmp(t->why[i].why, key) == 0) {
			t->why[i].n++;
			return;
		}
	}
	if (t->nwhy < sizeof(t->why) / sizeof(t->why[0])) {
		memcpy(t->why[t->nwhy].why, key, sizeof(key));
		t->why[t->nwhy++].n = 1;
	}
}

/* Add A's counters of its current (or last) connection to the tally, once. */
static void a_sample(struct chaos *ch)
{
	if (ch->sampled)
		return;
	for (unsigned int k = 0; k < NCTR; k++)
		for (unsigned int qi = 0; qi < FF_MAX_QUEUES; qi++)
			ch->t->ctr[k] += back_vif_stat(ch->x->va, qi, a_ctr[k]);
	ch->sampled = true;
}

/* Did the backend take A down?  Then with a reason and a fatal count, unless A did it. */
static void observe(struct chaos *ch)
{
	struct back_vif *va = ch->x->va;
	bool up = back_vif_state(va) == XenbusStateConnected;

	if (ch->a_conn && !up && !ch->a_self) {
		const char *e = back_vif_error(va);

		CHK(ch, back_vif_state(va) == XenbusStateClosing,
		    "A left Connected for state %d by itself", back_vif_state(va));
		CHK(ch, e && *e, "A was disabled without a reason");
		CHK(ch, back_vif_stat(va, 0, "fatal") >= 1,
		    "A was disabled (%s) with no fatal count", e);
		chaos_note_fatal(ch, e);
	}
	if (!ch->a_conn && up) { /* A's state write connected it again */
		ch->a_self = false;
		ch->sampled = false;
	}
	ch->a_conn = up;
}

/* A frame B or C received: false if it is @flow's, true if a stray of A's (checked). */
static bool is_stray(struct chaos *ch, const struct ff *f, int n, const uint8_t *flow)
{
	const uint8_t *src = ch->x->rbuf + 6;
	const char *who = f == &ch->x->b ? "B" : "C";

	CHK(ch, n >= 14 && n <= 65535, "%s received a frame of %d bytes", who, n);
	if (flow && memcmp(src, flow, 6) == 0)
		return false;
	CHK(ch, memcmp(src, mac_b, 6) != 0 && memcmp(src, mac_c, 6) != 0,
	    "%s received %d bytes from %s that are not the next frame of that flow", who, n,
	    src[5] == mac_b[5] ? "B" : "C");
	ch->t->strays++;
	return true;
}

/* B or C takes what is waiting (strays only: the healthy flows were complete). */
static void drain(struct chaos *ch, struct ff *f)
{
	struct ff_rxinfo info;

	ff_rx_post(f, 0, FF_RING);
	for (unsigned int i = 0; i < CHAOS_READ_MAX; i++) {
		int n = ff_rx_recv(f, 0, ch->x->rbuf, sizeof(ch->x->rbuf), &info);

		if (n == -EAGAIN)
			break;
		is_stray(ch, f, n, NULL);
	}
	ff_rx_post(f, 0, FF_RING);
}

/*
 * The healthy pair: @count frames from C to B (or B to C) must arrive in
 * order, bit-exact, with their offloads, among whatever A sends them; every
 * TX request of the sender is answered OKAY (C's feeds to A included).
 * transfer() (fx.c) with the strays set aside.
 */
static void pair(struct chaos *ch, bool c2b, unsigned int count)
{
	struct fx *x = ch->x;
	struct ff *tx = c2b ? &x->c : &x->b, *rx = c2b ? &x->b : &x->c;
	const uint8_t *src = c2b ? mac_c : mac_b, *dst = c2b ? mac_b : mac_c;
	struct ff_txopt opt = {0};
	uint32_t min = 60, max = 1514, seed0 = ch->hseq, inflight = 0, err0;
	unsigned int sent = 0, recvd = 0, k = below(ch, 20);
	uint64_t end = test_now_ms() + WAIT_MS;
	struct ff_rxinfo info;
	int n;

	if (k < 5) {
		opt.slot_max = k < 3 ? HV_PAGE_SIZE : 1000;
		min = 1515, max = 18000;
	} else if (k < 8) {
		opt = (struct ff_txopt){.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
					.gso_size = 1448,
					.flags = NETTXF_csum_blank | NETTXF_data_validated};
		min = 2000, max = 65535;
	}
	ff_tx_reap(tx, 0);
	err0 = tx->q[0].tx_rsp_error;
	while ((recvd < count || tx->q[0].tx.rsp_cons != tx->q[0].tx.req_prod_pvt) &&
	       test_now_ms() < end) {
		bool progress = false;

		ff_tx_reap(tx, 0);
		while (sent < count) {
			uint32_t len = len_of(seed0 + sent, min, max);

			if (inflight + len > MAX_INFLIGHT && sent > recvd)
				break;
			make_frame_opt(x->buf, len, dst, src, seed0 + sent, &opt);
			if (ff_tx_frame(tx, 0, x->buf, len, &opt) < 0)
				break;
			inflight += len;
			sent++;
			progress = true;
		}
		ff_tx_push(tx, 0);
		ff_rx_post(rx, 0, FF_RING);
		while ((n = ff_rx_recv(rx, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN) {
			uint32_t len = len_of(seed0 + recvd, min, max);

			progress = true;
			if (is_stray(ch, rx, n, src))
				continue;
			CHK(ch, recvd < sent,
			    "a healthy frame arrived that was not sent (%d bytes)", n);
			CHK(ch, n == (int)len, "healthy frame %u: %d bytes, sent %u", recvd, n,
			    len);
			make_frame_opt(x->buf, len, dst, src, seed0 + recvd, &opt);
			CHK(ch, memcmp(x->buf, x->rbuf, len) == 0,
			    "healthy frame %u (%u bytes, %u slots) corrupt", recvd, len,
			    info.slots);
			if (opt.gso_type)
				CHK(ch,
				    info.gso_type == opt.gso_type && info.gso_size == opt.gso_size,
				    "healthy frame %u: GSO %u/%u", recvd, info.gso_type,
				    info.gso_size);
			if (opt.flags & NETTXF_csum_blank)
				CHK(ch, info.flags & NETRXF_csum_blank,
				    "healthy frame %u: flags %#x", recvd, info.flags);
			inflight -= len;
			recvd++;
		}
		if (!progress)
			loop_run_once(x->w.loop, 1);
	}
	ff_tx_reap(tx, 0);
	CHK(ch, recvd == count, "%s -> %s: %u of %u frames arrived", c2b ? "C" : "B",
	    c2b ? "B" : "C", recvd, count);
	CHK(ch, tx->q[0].tx_rsp_error == err0, "%s: %u TX requests answered with an error",
	    c2b ? "C" : "B", tx->q[0].tx_rsp_error - err0);
	CHK(ch, tx->q[0].tx.rsp_cons == tx->q[0].tx.req_prod_pvt, "%s: %u TX requests unanswered",
	    c2b ? "C" : "B", tx->q[0].tx.req_prod_pvt - tx->q[0].tx.rsp_cons);
	ch->hseq += count;
	ch->t->healthy += count;
}

static enum chaos_step pick_step(struct chaos *ch)
{
	unsigned int total = 0, r;

	for (unsigned int s = 0; s < S_N; s++)
		total += kinds[s].weight;
	r = below(ch, total);
	for (unsigned int s = 0; s < S_N; s++) {
		if (r < kinds[s].weight)
			return (enum chaos_step)s;
		r -= kinds[s].weight;
	}
	return S_PAUSE;
}

static void run_step(struct chaos *ch)
{
	struct fx *x = ch->x;
	bool up = back_vif_state(x->va) == XenbusStateConnected;
	enum chaos_step s = pick_step(ch);
	unsigned int qi;

	/* A down: mostly connect again; else carry on writing its rings, nobody reads them. */
	if (!x->a.nq || (!up && chance(ch, 50)))
		s = ch->reconnects < CHAOS_RECONNECTS ? S_RECONNECT : S_PAUSE;
	ch->what = kinds[s].name;
	ch->t->steps[s]++;
	qi = x->a.nq ? below(ch, x->a.nq) : 0;
	if (trace)
		print_message("step %u: %s q%u (backend state %d)\n", ch->step, ch->what, qi,
			      back_vif_state(x->va));
	switch (s) {
	case S_FRAMES:
		chaos_step_frames(ch, qi);
		break;
	case S_RAW:
		chaos_step_raw(ch, qi);
		break;
	case S_EXTRAS:
		chaos_step_extras(ch, qi);
		break;
	case S_TX_JUMP:
		chaos_step_tx_jump(ch, qi);
		break;
	case S_REWRITE:
		chaos_step_rewrite(ch, qi);
		break;
	case S_STORM:
		chaos_step_storm(ch, qi);
		break;
	case S_RX_POST:
		chaos_step_rx_post(ch, qi);
		break;
	case S_RX_JUMP:
		chaos_step_rx_jump(ch, qi);
		break;
	case S_FEED:
		chaos_step_feed(ch);
		break;
	case S_READ:
		chaos_step_read(ch);
		break;
	case S_STATE:
		chaos_step_state(ch);
		break;
	case S_GRANT:
		for (unsigned int i = 1 + below(ch, 3); i > 0; i--)
			chaos_step_grant(ch, qi);
		break;
	case S_RECONNECT:
		a_sample(ch);
		chaos_a_down(ch);
		chaos_a_up(ch, true);
		break;
	default:
		(void)WAIT_UNTIL(&x->w, false, below(ch, 30));
		break;
	}
	for (qi = 0; qi < x->a.nq; qi++)
		chaos_a_reap(ch, qi);
	drain(ch, &x->b);
	drain(ch, &x->c);
	ff_tx_reap(&x->b, 0);
	ff_tx_reap(&x->c, 0);
	CHK(ch, x->b.q[0].tx_rsp_error == 0 && x->c.q[0].tx_rsp_error == 0,
	    "healthy TX requests answered with errors: B %u, C %u", x->b.q[0].tx_rsp_error,
	    x->c.q[0].tx_rsp_error);
	observe(ch);
	if (chance(ch, 30))
		pair(ch, chance(ch, 50), 4 + below(ch, 21));
}

/* No frame waits for B or C and both have taken what they got. */
static void quiesce(struct chaos *ch)
{
	struct fx *x = ch->x;

	CHK(ch,
	    WAIT_UNTIL(&x->w,
		       (drain(ch, &x->b), drain(ch, &x->c),
			atomic_load(&x->vb->q[0]->rxq_bytes) == 0 &&
			    atomic_load(&x->vc->q[0]->rxq_bytes) == 0),
		       WAIT_MS),
	    "frames stay queued for B (%u bytes) or C (%u bytes)",
	    atomic_load(&x->vb->q[0]->rxq_bytes), atomic_load(&x->vc->q[0]->rxq_bytes));
	drain(ch, &x->b);
	drain(ch, &x->c);
}

/*
 * The end: A's domain dies, abruptly or after its vif was removed; then
 * nothing of A's is left, and B and C hold exactly what they report.
 */
static void finish(struct chaos *ch)
{
	struct fx *x = ch->x;
	struct hv_leak la = {0}, lb = {0}, lc = {0};
	struct hv_stats st;
	unsigned int a_ports = x->a.nq * (x->a.split ? 2 : 1);
	bool abrupt = chance(ch, 50);
	uint64_t maps;

	ch->what = "finish";
	CHK(ch,
	    WAIT_UNTIL(&x->w,
		       back_vif_state(x->va) != XenbusStateConnected ||
			   atomic_load(&x->va->broken) == 0,
		       WAIT_MS),
	    "A is broken (%s) but stays Connected", x->va->broken_reason);
	observe(ch);
	CHK(ch, ch->a_conn || ch->a_self || (back_vif_error(x->va) && *back_vif_error(x->va)),
	    "A ends in state %d without a reason", back_vif_state(x->va));
	a_sample(ch);
	pair(ch, true, 40);
	pair(ch, false, 40);
	if (abrupt) {
		/* A dies with its vif up: its memory is a zombie while the vif maps it. */
		CHK(ch, hv_domain_destroy(x->w.hv, x->a.domid, &la) == 0, "destroying A");
		pair(ch, true, 20);
		back_vif_destroy(x->va);
	} else {
		back_vif_destroy(x->va);
		chaos_a_check_released(ch);
		CHK(ch, hv_domain_destroy(x->w.hv, x->a.domid, &la) == 0, "destroying A");
		CHK(ch, la.maps_in_use == 0,
		    "A's domain died with %u pages mapped after its vif went", la.maps_in_use);
	}
	x->va = NULL;
	CHK(ch, la.evtchns_open == a_ports, "A died with %u ports open, it had %u", la.evtchns_open,
	    a_ports);
	ff_destroy(&x->a, NULL); /* the store's and the test's views; the domain is gone */
	x->a.mem = NULL;
	CHK(ch,
	    WAIT_UNTIL(&x->w,
		       (ff_tx_reap(&x->c, 0), x->c.q[0].tx.rsp_cons == x->c.q[0].tx.req_prod_pvt),
		       WAIT_MS),
	    "C's frames to A stay unanswered");
	quiesce(ch);
	hv_stats(x->w.hv, &st);
	CHK(ch, st.zombies == 0, "%u zombie domains (A's memory still mapped)", st.zombies);
	CHK(ch, st.domains == 3, "%u domains, want dom0, B and C", st.domains);
	CHK(ch, st.evtchns_open == 4, "%u ports open, want B's and C's 2 + 2", st.evtchns_open);
	maps = st.maps_in_use;
	if (ch->mode != BACK_TX_PERSISTENT)
		CHK(ch, maps == 4, "%lu pages mapped, want B's and C's rings", (unsigned long)maps);
	/* What B and C report held when they die is all that was mapped. */
	CHK(ch, hv_domain_destroy(x->w.hv, x->b.domid, &lb) == 0, "destroying B");
	CHK(ch, hv_domain_destroy(x->w.hv, x->c.domid, &lc) == 0, "destroying C");
	CHK(ch, (uint64_t)lb.maps_in_use + lc.maps_in_use == maps,
	    "%lu pages mapped, but B held %u and C %u", (unsigned long)maps, lb.maps_in_use,
	    lc.maps_in_use);
	back_vif_destroy(x->vb);
	back_vif_destroy(x->vc);
	x->vb = x->vc = NULL;
	hv_stats(x->w.hv, &st);
	CHK(ch, st.maps_in_use == 0 && st.zombies == 0 && st.evtchns_open == 0 && st.domains == 1,
	    "left: %lu mappings, %u zombies, %u ports, %u domains", (unsigned long)st.maps_in_use,
	    st.zombies, st.evtchns_open, st.domains);
	ff_destroy(&x->b, NULL);
	ff_destroy(&x->c, NULL);
	world_destroy(&x->w);
	free(x);
	ch->x = NULL;
}

/**
 * struct chaos_case - one cmocka test: a seed of a mode, or the reduced test
 * @mode: TX mode
 * @seed: the seed
 * @steps: steps per seed
 * @x: its world while it runs (so that the teardown can free it after a failure)
 * @name: the test's name, mode and seed
 */
struct chaos_case {
	enum back_tx_mode mode;
	unsigned int seed, steps;
	struct fx *x;
	char name[48];
};

/*
 * After a failure (cmocka jumps out of the test): take the world down with
 * no checks, so that the failure is the report, not a leak on top of it.
 * finish() marks what it already freed.
 */
static int chaos_teardown(void **state)
{
	struct chaos_case *c = *state;
	struct fx *x = c->x;
	struct ff *f[3];

	if (!x)
		return 0;
	f[0] = &x->a, f[1] = &x->b, f[2] = &x->c;
	back_vif_destroy(x->va);
	back_vif_destroy(x->vb);
	back_vif_destroy(x->vc);
	for (unsigned int i = 0; i < 3; i++)
		if (f[i]->mem)
			ff_destroy(f[i], NULL);
	world_destroy(&x->w);
	free(x);
	c->x = NULL;
	return 0;
}

static void run_seed(struct chaos_case *c)
{
	enum back_tx_mode mode = c->mode;
	unsigned int seed = c->seed;
	struct chaos ch = {.t = &tally[mode],
			   .mode = mode,
			   .seed = seed,
			   .steps = c->steps,
			   .what = "setup",
			   .rng = (uint64_t)seed << 8 | mode};
	struct back_config cfg;
	struct ff *a;

	ch.oa = (struct ff_opts){.nq = chance(&ch, 30) ? 2 : 1,
				 .split = chance(&ch, 50),
				 .sg = chance(&ch, 85),
				 .gso4 = chance(&ch, 70),
				 .gso6 = chance(&ch, 50),
				 .rx_notify = chance(&ch, 80),
				 .ipv6_csum = chance(&ch, 50),
				 .persistent = chance(&ch, 85),
				 .persistent_grants =
				     chance(&ch, 80) ? FF_POOL : 1 + (long)below(&ch, FF_POOL)};
	back_config_default(&cfg);
	if (chance(&ch, 50))
		cfg.poll_us = 0;
	if (chance(&ch, 50))
		cfg.tx_hold_max_us = 2000;
	c->x = ch.x = fx_new(mode, &cfg, &ch.oa, NULL);
	a = &ch.x->a;
	ch.t->seeds++;
	/* Refs A abuses: one granted to C (not the backend), one read-only. */
	CHK(&ch,
	    hv_gntshr_alloc_ref(&a->gs, &ch.foreign) == 0 &&
		hv_gntshr_grant_access(&a->gs, ch.foreign, ch.x->c.domid, chaos_a_tx_frame(0, 254),
				       true) == 0 &&
		hv_gntshr_alloc_ref(&a->gs, &ch.ro) == 0 &&
		hv_gntshr_grant_access(&a->gs, ch.ro, 0, chaos_a_tx_frame(0, 255), true) == 0,
	    "granting A's extra refs");
	/* B and C learn their MACs while A is down: nothing of theirs floods into A's memory. */
	chaos_a_down(&ch);
	pair(&ch, true, 4);
	pair(&ch, false, 4);
	chaos_a_fill(&ch);
	chaos_a_up(&ch, false);
	for (ch.step = 0; ch.step < c->steps; ch.step++)
		run_step(&ch);
	finish(&ch);
	c->x = NULL;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* How long the reduced race below tries (PVNET_CHAOS_REPRO_MS). */
static unsigned int repro_ms = 6000;

/*
 * Reduced from the campaign (C's frames to A unanswered for the whole 10 s
 * wait, e.g. persistent seed 3 of a 20-seed run): a worker that went to
 * sleep just as another thread queued frames for it, while its guest had
 * posted no RX buffer, slept with no timeout.
 *
 * The worker's last round found its RX queue empty (back_rx_poll() leaves
 * the timeout at -1).  Before it set "sleeping", another worker delivered
 * straight into its ring (rx.c, direct_begin(): the queue is empty): the
 * guest had no buffer, so rx_deliver() marked the queue blocked, the frames
 * were queued, and back_worker_wake() did nothing, the worker not being
 * asleep yet.  The worker then found has_work() false, blocked input
 * counting only once the guest posts, and poll()ed with timeout -1: the
 * frames were neither copied out (tx_hold_max_us) nor dropped (drain
 * timeout) and pinned their sender's slots until the guest posted or more
 * traffic came.  Now xmit() bumps rx_gen after queueing, and
 * back_rx_has_input() counts input queued since the worker's last round,
 * blocked or not, so that round's successor arms the timers first.
 *
 * The window is the few instructions between back_rx_poll() and the
 * "sleeping" store; it opens wide when the worker is preempted at the
 * eventfd read of eoi().  So A kicks its own TX channel (a wake-up with no
 * work: eoi() then reads that channel) and C's frame follows a few
 * microseconds later.  A (no rx-notify, 1 ms drain timeout, 1 ms hold) must
 * let go of every frame within a millisecond; 300 ms are allowed.
 */
static void test_rx_blocked_lost_wake(void **state)
{
	struct chaos_case *c = *state;
	struct chaos_tally none = {0};
	struct chaos ch = {.t = &none, .mode = BACK_TX_MAP, .what = "frame to A", .rng = 0x5eed};
	struct ff_opts oa = {.nq = 1, .sg = true};
	struct back_config cfg;
	struct back_queue *aq;
	struct fx *x;
	uint64_t end;

	back_config_default(&cfg);
	cfg.poll_us = 0;
	cfg.tx_hold_max_us = 1000;
	cfg.rx_drain_timeout_nonotify_ms = 1;
	c->x = x = ch.x = fx_new(BACK_TX_MAP, &cfg, &oa, NULL);
	aq = x->va->q[0];
	/* The switch learns A (B and C take the flood); A never posts an RX buffer. */
	ff_rx_post(&x->b, 0, FF_RING);
	ff_rx_post(&x->c, 0, FF_RING);
	send_only(x, &x->a, mac_a, mac_b, 1, 60, 0);
	CHK(&ch, WAIT_UNTIL(&x->w, answered(&x->a) == 1, WAIT_MS), "A's first frame");
	end = test_now_ms() + repro_ms;
	for (ch.step = 0; test_now_ms() < end; ch.step++) {
		uint64_t t0 = now_us(), d = below(&ch, 40);

		make_frame(x->buf, 60, mac_a, mac_c, ch.step);
		CHK(&ch, ff_tx_frame(&x->c, 0, x->buf, 60, NULL) == 0, "C's ring is full");
		hv_evtchn_notify(x->w.hv, x->a.domid, x->a.q[0].port_tx);
		while (now_us() - t0 < d) /* bounded: d < 40 us */
			;
		ff_tx_push(&x->c, 0);
		CHK(&ch,
		    WAIT_UNTIL(
			&x->w,
			(ff_tx_reap(&x->c, 0), x->c.q[0].tx.rsp_cons == x->c.q[0].tx.req_prod_pvt),
			300),
		    "C's frame %u to A (sent %lu us after A's kick) held for 300 ms: A's worker "
		    "%s, %u bytes queued, RX %s",
		    ch.step, (unsigned long)d, atomic_load(&aq->sleeping) ? "asleep" : "awake",
		    atomic_load(&aq->rxq_bytes),
		    atomic_load(&aq->rx_blocked) ? "blocked on A's buffers" : "not blocked");
		CHK(&ch, WAIT_UNTIL(&x->w, atomic_load(&aq->rxq_bytes) == 0, WAIT_MS),
		    "A's RX queue does not drain");
	}
	c->x = NULL;
	fx_free(x);
}

static void test_seed(void **state)
{
	run_seed(*state);
}

static unsigned int env_uint(const char *name, unsigned int def, unsigned int max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	n = strtoul(v, &end, 10);
	if (*end || n > max) {
		fprintf(stderr, "%s=%s: want 0..%u; using %u\n", name, v, max, def);
		return def;
	}
	return (unsigned int)n;
}

static void report(void)
{
	for (unsigned int m = 0; m < 3; m++) {
		const struct chaos_tally *t = &tally[m];

		if (!t->seeds)
			continue;
		print_message("chaos %s: %lu seeds, %lu healthy frames checked, %lu strays, %lu "
			      "frames fed to A, %lu fatal (%lu connects refused)\n",
			      back_tx_mode_name((enum back_tx_mode)m), t->seeds, t->healthy,
			      t->strays, t->fed, t->fatals, t->refused);
		print_message("  steps:");
		for (unsigned int s = 0; s < S_N; s++)
			print_message(" %s %lu", kinds[s].name, t->steps[s]);
		print_message("\n  A:");
		for (unsigned int k = 0; k < NCTR; k++)
			print_message(" %s %lu", a_ctr[k], (unsigned long)t->ctr[k]);
		print_message("\n");
		for (unsigned int i = 0; i < t->nwhy; i++)
			print_message("  %6lu x %s\n", t->why[i].n, t->why[i].why);
	}
}

int main(void)
{
	static const enum back_tx_mode modes[] = {BACK_TX_MAP, BACK_TX_COPY, BACK_TX_PERSISTENT};
	unsigned int nseeds = env_uint("PVNET_CHAOS_SEEDS", CHAOS_SEEDS, 1000000);
	unsigned int first = env_uint("PVNET_CHAOS_FIRST", 1, UINT_MAX / 2);
	unsigned int steps = env_uint("PVNET_CHAOS_STEPS", CHAOS_STEPS, 1000000);
	/* The long seed only in the default run: a campaign or a replay says what it wants. */
	bool long_seed = !getenv("PVNET_CHAOS_SEEDS") && !getenv("PVNET_CHAOS_STEPS");
	const char *only = getenv("PVNET_CHAOS_MODE");
	struct chaos_case *cases = calloc(3 * ((size_t)nseeds + 1) + 1, sizeof(*cases));
	struct CMUnitTest *tests = calloc(3 * ((size_t)nseeds + 1) + 1, sizeof(*tests));
	size_t n = 0;
	int rc;

	if (!cases || !tests)
		return 1;
	if (first == 0) /* seed 0 means "not the campaign" in the messages */
		first = 1;
	repro_ms = env_uint("PVNET_CHAOS_REPRO_MS", repro_ms, 3600000);
	if (repro_ms) { /* 0: the campaign alone, e.g. to replay a seed */
		snprintf(cases[n].name, sizeof(cases[n].name), "rx_blocked_lost_wake");
		tests[n] = (struct CMUnitTest){.name = cases[n].name,
					       .test_func = test_rx_blocked_lost_wake,
					       .teardown_func = chaos_teardown,
					       .initial_state = &cases[n]};
		n++;
	}
	for (unsigned int m = 0; m < 3; m++) {
		if (only && *only && strcmp(only, back_tx_mode_name(modes[m])) != 0)
			continue;
		for (unsigned int s = 0; s < nseeds + long_seed; s++, n++) {
			cases[n] =
			    (struct chaos_case){.mode = modes[m],
						.seed = first + s,
						.steps = s < nseeds ? steps : CHAOS_LONG_STEPS};
			snprintf(cases[n].name, sizeof(cases[n].name), "chaos_%s_seed_%u",
				 back_tx_mode_name(modes[m]), first + s);
			tests[n] = (struct CMUnitTest){.name = cases[n].name,
						       .test_func = test_seed,
						       .teardown_func = chaos_teardown,
						       .initial_state = &cases[n]};
		}
	}
	if (n == 0) {
		fprintf(stderr, "nothing to run (PVNET_CHAOS_MODE=%s: map, copy or persistent)\n",
			only ? only : "");
		return 1;
	}
	trace = getenv("PVNET_CHAOS_TRACE") != NULL;
	log_set_level(LOG_ERR);
	rc = _cmocka_run_group_tests("back_chaos", tests, n, NULL, NULL);
	report();
	free(tests);
	free(cases);
	return rc;
}
