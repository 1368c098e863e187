// SPDX-License-Identifier: MIT
/* back_ring_fuzz.c - libFuzzer harness: a hostile frontend drives netback's rings over time */

/*
 * Theory of Operation
 *
 * The pure parsers have their own targets; this one attacks netback as a
 * whole, with state.  Once per process it builds worlds (hv, store,
 * switch, netback made with cfg.no_workers, so that no thread runs a
 * queue behind the fuzzer's back) with three vifs each:
 *
 *   A  the hostile frontend, written here: its own domain, rings, grant
 *      entries, event channels and xenstore keys, all under the input's
 *      control;
 *   B  a well-behaved fake frontend (tests/back/fake_front.c) that A's
 *      frames reach and that sends frames to A, so RX delivery into A's
 *      ring runs;
 *   C  a second well-behaved one (no SG, no GSO: frames for it take the
 *      software offload path).
 *
 * World 0..3 (the input's first byte): persistent-capable or copy mode,
 * and tx_hold_max_us and the no-rx-notify drain timeout 0 (every held
 * frame copied out at once, every frame queued for such a frontend
 * expired, and each guest's hold pools limited to one, so that a second
 * queue's frames are dropped instead) or never.
 * Every timer that would depend on the wall clock (drain, stall) is set
 * far beyond an input's run time, and the random keys (the flow hash's
 * each vif draws at connect, the MAC table's, the persistent-grant
 * cache's) come from a generator of the harness's, seeded again before A
 * connects: an input does the same thing every time it runs, alone or
 * after others (with libsodium's generator, an RX frame for A went to
 * either of its queues as the key fell, so that a saved input could fail
 * once and pass the next time).
 *
 * An input is: a world byte, A's connect options, then operations: write
 * TX requests and extras (arbitrary fields), well-formed frames, move
 * req_prod anywhere, post RX requests (arbitrary ids and grefs), rewrite
 * A's grant entries, write control-ring requests, set event indices, kick
 * event channels, rewrite buffer bytes after netback looked at them, write
 * A's xenstore keys, run rounds of A's and the peers' queues
 * (back_worker_round()), let the peers receive and repost, and run the
 * loop thread's work (a broken vif is disconnected there).
 *
 * After every input A is disconnected and these are checked (a failed
 * check prints why and traps):
 *   - once the peers have drained, no TX frame of A is held by them;
 *   - disconnect leaves no mapping of A's grants and no pin on any of them
 *     (hv's own counts), no event channel open beyond the baseline, and
 *     none of A's hold pools charged;
 *   - B and C are connected, not broken, and a frame C sends to B arrives
 *     intact; B's frames held by A all complete.
 * Sanitizers catch the rest.  The next input reconnects A from scratch.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sodium.h>

#include "back/internal.h"
#include "cursor.h"
#include "fake_front.h"
#include "hv/hv_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define A_PAGES	     64
#define A_NQ_MAX     2
#define A_CTRL_FRAME 4
#define A_TXBUF0     5 /* frames 5..36: TX buffers */
#define A_NTXBUF     32
#define A_RXBUF0     (A_TXBUF0 + A_NTXBUF) /* frames 37..63: RX buffers */
#define A_NRXBUF     (A_PAGES - A_RXBUF0)
#define A_GREF0	     8	 /* A grants frame f as ref A_GREF0 + f (Xen reserves 0..7) */
#define A_NGREF	     128 /* refs an input may rewrite */
#define SETTLE_MAX   64	 /* peer rounds to drain A's frames: each delivers up to 64 */
#define NWORLDS	     4

static const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};
static const uint8_t mac_b[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b};
static const uint8_t mac_c[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0c};

/* The hostile frontend: nothing here is trusted by netback. */
struct hostile {
	domid_t domid;
	uint8_t *mem;
	grant_entry_v1_t *gt;
	size_t gt_size;
	uint32_t nr_grants;
	char fe_path[64];
	unsigned int nq;
	bool split, ctrl, connected;
	evtchn_port_t port_tx[A_NQ_MAX], port_rx[A_NQ_MAX], port_ctrl;
	RING_IDX tx_pvt[A_NQ_MAX], rx_pvt[A_NQ_MAX], ctrl_pvt;
};

struct rf_world {
	struct world w;
	struct ff b, c;
	struct back_vif *va, *vb, *vc;
	struct hostile a;
	uint32_t evtchns_base; /* ports open with A disconnected */
	uint32_t check_seq;
	uint8_t buf[65536], rbuf[65536];
};

static struct rf_world *worlds[NWORLDS];

static void fail(const char *what, unsigned int v)
{
	fprintf(stderr, "back_ring_fuzz: invariant broken: %s (%u)\n", what, v);
	__builtin_trap();
}

#define check(cond, v)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail(#cond, (unsigned int)(v));                                            \
	} while (0)

/* A grant reference: mostly one A granted, sometimes a reserved or unused one, or any. */
static grant_ref_t get_gref(struct cur *c)
{
	uint8_t v = get8(c);

	if (v < 0xc0)
		return A_GREF0 + v % A_PAGES;
	if (v < 0xf0)
		return (grant_ref_t)(v - 0xc0) + (v & 1 ? A_GREF0 + A_PAGES : 0);
	return get32(c);
}

static uint8_t *a_page(struct hostile *a, uint32_t frame)
{
	return a->mem + (size_t)frame * HV_PAGE_SIZE;
}

static netif_tx_sring_t *a_txs(struct hostile *a, unsigned int qi)
{
	return (void *)a_page(a, 2 * qi);
}

static netif_rx_sring_t *a_rxs(struct hostile *a, unsigned int qi)
{
	return (void *)a_page(a, 2 * qi + 1);
}

static xen_netif_ctrl_sring_t *a_ctrls(struct hostile *a)
{
	return (void *)a_page(a, A_CTRL_FRAME);
}

static void xs_put(struct store *s, const char *dir, const char *key, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (store_write(s, path, val, strlen(val)) < 0)
		fail("store_write", 0);
}

static void xs_put_u(struct store *s, const char *dir, const char *key, unsigned long v)
{
	char val[24];

	snprintf(val, sizeof(val), "%lu", v);
	xs_put(s, dir, key, val);
}

static int hostile_create(struct rf_world *x)
{
	struct hostile *a = &x->a;
	int fd, gfd;

	fd = memfd_create("rf-hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)A_PAGES * HV_PAGE_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -1;
	a->mem =
	    mmap(NULL, (size_t)A_PAGES * HV_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a->mem == MAP_FAILED || hv_domain_create(x->w.hv, fd, A_PAGES, &a->domid) < 0 ||
	    store_domain_introduce(x->w.store, a->domid) < 0)
		return -1;
	gfd = hv_domain_gnttab_fd(x->w.hv, a->domid);
	a->nr_grants = (uint32_t)hv_domain_nr_grants(x->w.hv, a->domid);
	a->gt_size = (size_t)a->nr_grants * sizeof(grant_entry_v1_t);
	a->gt = mmap(NULL, a->gt_size, PROT_READ | PROT_WRITE, MAP_SHARED, gfd, 0);
	if (a->gt == MAP_FAILED || a->nr_grants < A_NGREF + A_GREF0)
		return -1;
	snprintf(a->fe_path, sizeof(a->fe_path), "/local/domain/%u/device/vif/0", a->domid);
	return back_vif_create(x->w.back, a->domid, 0, mac_a, &x->va);
}

/*
 * world_create() with a smaller maptrack: every connect of A opens two
 * grant handles per queue, and initialising hv's default 16384 entries
 * each was most of an input's time.  2048 still holds a TX ring mapped
 * (256) plus B's whole persistent pool (512 pages) and its rings.
 */
static int world_make(struct world *w, enum back_tx_mode mode, struct back_config *cfg)
{
	struct hv_config hc;

	memset(w, 0, sizeof(*w));
	hv_config_default(&hc);
	hc.max_maptrack = 2048;
	w->hv = hv_create(&hc);
	w->store = store_create(NULL);
	w->loop = loop_create();
	if (!w->hv || !w->store || !w->loop || sw_create(NULL, &w->sw) < 0)
		return -1;
	cfg->loop = w->loop;
	cfg->tx_mode = mode;
	w->back = back_create(cfg, w->hv, w->store, w->sw);
	return w->back ? 0 : -1;
}

/*
 * The keys libsodium would draw at random, from a sequence of the
 * harness's instead (splitmix64): a key no guest knows is what netback
 * needs, not what a fuzzer needs.  Seeded again before every input.
 */
static uint64_t rng_state;
static bool rng_set;

static uint64_t rng_next(void)
{
	uint64_t z = rng_state += 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_random(void)
{
	return (uint32_t)rng_next();
}

static void rng_buf(void *const buf, const size_t size)
{
	uint8_t *b = buf;

	for (size_t i = 0; i < size; i += 8) {
		uint64_t v = rng_next();

		memcpy(b + i, &v, size - i < 8 ? size - i : 8);
	}
}

static const char *rng_name(void)
{
	return "back_ring_fuzz";
}

static struct randombytes_implementation rng_impl = {
    .implementation_name = rng_name,
    .random = rng_random,
    .buf = rng_buf,
};

static void rng_seed(void)
{
	rng_state = 0x70766e6574; /* "pvnet" */
}

static struct rf_world *world_get(unsigned int i)
{
	struct ff_opts ob = FF_OPTS_DEFAULT;
	struct ff_opts oc = {.nq = 1, .rx_notify = true, .no_csum = true};
	struct back_config cfg;
	struct rf_world *x = worlds[i];
	struct hv_stats st;

	if (x)
		return x;
	log_set_level(LOG_ERR);
	/* Before libsodium initialises (the first world's switch does), as it requires. */
	if (!rng_set) {
		if (randombytes_set_implementation(&rng_impl) != 0)
			fail("setting the harness's random keys", 0);
		rng_set = true;
	}
	rng_seed();
	x = calloc(1, sizeof(*x));
	if (!x)
		abort();
	back_config_default(&cfg);
	cfg.no_workers = true;
	cfg.poll_us = 0;
	/* Far beyond one input's run: no wall-clock timer fires while an input runs. */
	cfg.rx_drain_timeout_ms = 3600 * 1000;
	cfg.rx_drain_timeout_nonotify_ms = 3600 * 1000;
	cfg.rx_stall_timeout_ms = 0;
	cfg.tx_hold_max_us = UINT32_MAX;
	if (i & 2) {
		/*
		 * Timers at 0 fire at once, which is as deterministic: every
		 * held frame is copied out, and a frame queued for a frontend
		 * without feature-rx-notify (only A may lack it) expires.
		 */
		cfg.tx_hold_max_us = 0;
		cfg.rx_drain_timeout_nonotify_ms = 0;
		/* One hold pool a guest: A's second queue copies out into none, it drops. */
		cfg.rx_guest_max_bytes = back_hold_pool_bytes(cfg.rx_queue_max_bytes);
	}
	if (world_make(&x->w, (i & 1) ? BACK_TX_COPY : BACK_TX_PERSISTENT, &cfg) < 0 ||
	    ff_create(&x->b, &x->w, 0) < 0 || ff_create(&x->c, &x->w, 0) < 0 ||
	    back_vif_create(x->w.back, x->b.domid, 0, mac_b, &x->vb) < 0 ||
	    back_vif_create(x->w.back, x->c.domid, 0, mac_c, &x->vc) < 0 ||
	    ff_connect(&x->b, &ob) < 0 || ff_connect(&x->c, &oc) < 0 || hostile_create(x) < 0)
		fail("setting up the world", i);
	check(back_vif_state(x->vb) == XenbusStateConnected, back_vif_state(x->vb));
	check(back_vif_state(x->vc) == XenbusStateConnected, back_vif_state(x->vc));
	ff_rx_post(&x->b, 0, FF_RING);
	ff_rx_post(&x->c, 0, FF_RING);
	hv_stats(x->w.hv, &st);
	x->evtchns_base = st.evtchns_open;
	worlds[i] = x;
	return x;
}

/* Grant every page of A as a frontend would: rings and RX buffers writable, TX buffers not. */
static void hostile_grants_reset(struct hostile *a)
{
	memset(a->gt, 0, (size_t)(A_GREF0 + A_NGREF) * sizeof(*a->gt));
	for (uint32_t f = 0; f < A_PAGES; f++) {
		grant_entry_v1_t *e = &a->gt[A_GREF0 + f];
		bool ro = f >= A_TXBUF0 && f < A_RXBUF0;

		e->domid = 0;
		e->frame = f;
		__atomic_store_n(&e->flags, (uint16_t)(GTF_permit_access | (ro ? GTF_readonly : 0)),
				 __ATOMIC_RELEASE);
	}
}

/* Connect A with the options the input chose; it may well fail (that is netback's to judge). */
static void hostile_connect(struct rf_world *x, uint8_t o1, uint8_t o2)
{
	struct hostile *a = &x->a;
	struct store *s = x->w.store;
	char dir[96];

	memset(a->mem, 0, (size_t)A_PAGES * HV_PAGE_SIZE);
	hostile_grants_reset(a);
	a->nq = 1 + (o2 & 1);
	a->split = o1 & 0x20;
	a->ctrl = o1 & 0x40;
	for (unsigned int i = 0; i < a->nq; i++) {
		SHARED_RING_INIT(a_txs(a, i));
		SHARED_RING_INIT(a_rxs(a, i));
		a->tx_pvt[i] = a->rx_pvt[i] = 0;
		if (hv_evtchn_alloc_unbound(x->w.hv, a->domid, 0, &a->port_tx[i]) < 0)
			fail("alloc_unbound", i);
		a->port_rx[i] = a->port_tx[i];
		if (a->split && hv_evtchn_alloc_unbound(x->w.hv, a->domid, 0, &a->port_rx[i]) < 0)
			fail("alloc_unbound", i);
		if (a->nq == 1)
			snprintf(dir, sizeof(dir), "%s", a->fe_path);
		else
			snprintf(dir, sizeof(dir), "%s/queue-%u", a->fe_path, i);
		xs_put_u(s, dir, "tx-ring-ref", A_GREF0 + 2 * i);
		xs_put_u(s, dir, "rx-ring-ref", A_GREF0 + 2 * i + 1);
		if (a->split) {
			xs_put_u(s, dir, "event-channel-tx", a->port_tx[i]);
			xs_put_u(s, dir, "event-channel-rx", a->port_rx[i]);
		} else {
			xs_put_u(s, dir, "event-channel", a->port_tx[i]);
		}
	}
	a->ctrl_pvt = 0;
	if (a->ctrl) {
		SHARED_RING_INIT(a_ctrls(a));
		if (hv_evtchn_alloc_unbound(x->w.hv, a->domid, 0, &a->port_ctrl) < 0)
			fail("alloc_unbound", 9);
		xs_put_u(s, a->fe_path, "ctrl-ring-ref", A_GREF0 + A_CTRL_FRAME);
		xs_put_u(s, a->fe_path, "event-channel-ctrl", a->port_ctrl);
	}
	if (a->nq > 1)
		xs_put_u(s, a->fe_path, "multi-queue-num-queues", a->nq);
	xs_put_u(s, a->fe_path, "request-rx-copy", 1);
	xs_put_u(s, a->fe_path, "feature-sg", o1 & 1);
	xs_put_u(s, a->fe_path, "feature-gso-tcpv4", (o1 >> 1) & 1);
	xs_put_u(s, a->fe_path, "feature-gso-tcpv6", (o1 >> 2) & 1);
	xs_put_u(s, a->fe_path, "feature-rx-notify", (o1 >> 3) & 1);
	xs_put_u(s, a->fe_path, "request-multicast-control", (o1 >> 7) & 1);
	xs_put_u(s, a->fe_path, "feature-ipv6-csum-offload", (o2 >> 7) & 1);
	if (o1 & 0x10) {
		xs_put_u(s, a->fe_path, "feature-persistent", 1);
		if (o2 & 0x7e)
			xs_put_u(s, a->fe_path, "persistent-grants", (o2 & 0x7e) >> 1);
	}
	a->connected = true;
	xs_put_u(s, a->fe_path, "state", XenbusStateConnected);
}

/* Remove every key A wrote, close its ports: the next connect starts clean. */
static void hostile_teardown(struct rf_world *x)
{
	struct hostile *a = &x->a;
	static const char *const keys[] = {"tx-ring-ref",
					   "rx-ring-ref",
					   "event-channel",
					   "event-channel-tx",
					   "event-channel-rx",
					   "ctrl-ring-ref",
					   "event-channel-ctrl",
					   "multi-queue-num-queues",
					   "feature-persistent",
					   "persistent-grants",
					   "queue-0",
					   "queue-1"};
	char path[160];

	for (unsigned int i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", a->fe_path, keys[i]);
		store_rm(x->w.store, path);
	}
	for (unsigned int i = 0; i < a->nq; i++) {
		hv_evtchn_close(x->w.hv, a->domid, a->port_tx[i]);
		if (a->split)
			hv_evtchn_close(x->w.hv, a->domid, a->port_rx[i]);
	}
	if (a->ctrl)
		hv_evtchn_close(x->w.hv, a->domid, a->port_ctrl);
	a->nq = 0;
	a->ctrl = a->split = a->connected = false;
}

/*
 * A's TX frames still held by their consumers (the peers' RX queues): in
 * flight, and not yet on A's completion lists.  Those a broken vif's worker
 * leaves there are completed by the disconnect.
 */
static uint32_t a_held(struct rf_world *x)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < x->va->nq; i++) {
		struct back_queue *q = x->va->q[i];

		n += atomic_load(&q->inflight) - q->ndone_local -
		     (uint32_t)(atomic_load(&q->compl .tail) - q->compl .head);
	}
	return n;
}

static void rounds(struct back_vif *vif, unsigned int n)
{
	for (unsigned int r = 0; r < n; r++)
		for (unsigned int i = 0; i < vif->nq; i++)
			back_worker_round(vif->q[i]);
}

/* A well-behaved frontend takes everything it got and gives its buffers back. */
static void peer_consume(struct rf_world *x, struct ff *f)
{
	struct ff_rxinfo info;

	ff_tx_reap(f, 0);
	while (ff_rx_recv(f, 0, x->rbuf, sizeof(x->rbuf), &info) != -EAGAIN)
		;
	ff_rx_post(f, 0, FF_RING);
}

static void peers_run(struct rf_world *x, unsigned int n)
{
	for (unsigned int r = 0; r < n; r++) {
		rounds(x->vb, 1);
		rounds(x->vc, 1);
		peer_consume(x, &x->b);
		peer_consume(x, &x->c);
	}
}

/*
 * Let the peers take what A sent them, as their workers would, before the
 * loop thread may disconnect A (it waits for A's frames to complete).
 */
static void settle(struct rf_world *x)
{
	for (unsigned int i = 0; i < SETTLE_MAX && a_held(x); i++) {
		peers_run(x, 1);
		rounds(x->va, 1);
	}
}

/* Frame bytes: a pattern, with up to 64 bytes after the MACs from the input. */
static uint32_t frame_build(struct cur *c, uint8_t *buf, uint32_t len, const uint8_t *dst,
			    const uint8_t *src, uint32_t seed)
{
	unsigned int k = get8(c) % 65;

	if (len < 14)
		len = 14;
	make_frame(buf, len, dst, src, seed);
	for (unsigned int i = 0; i < k && 12 + i < len; i++)
		buf[12 + i] = get8(c);
	return len;
}

static const uint8_t *dst_of(uint8_t v)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t mcast4[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
	static const uint8_t mcast6[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t unknown[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};
	const uint8_t *const d[] = {mac_b, mac_c, bcast, mcast4, mcast6, unknown, mac_a};

	return d[v % 7];
}

static netif_tx_request_t *a_tx_slot(struct hostile *a, unsigned int qi)
{
	netif_tx_sring_t *s = a_txs(a, qi);

	return &s->ring[a->tx_pvt[qi]++ & (BACK_TX_RING_SIZE - 1)].req;
}

/* A well-formed frame on A's TX ring: slots of slot_max bytes in TX buffer pages. */
static void op_tx_frame(struct rf_world *x, struct cur *c, unsigned int qi)
{
	struct hostile *a = &x->a;
	uint32_t len = get16(c), slot_max, off = 0, nd;
	uint8_t sel = get8(c), opt = get8(c);
	static const uint32_t smax[] = {4096, 2048, 1500, 60};

	len = frame_build(c, x->buf, len, dst_of(sel), mac_a, a->tx_pvt[qi]);
	slot_max = smax[(sel >> 3) & 3];
	nd = (len + slot_max - 1) / slot_max;
	for (uint32_t k = 0; k < nd; k++) {
		uint32_t chunk = len - off < slot_max ? len - off : slot_max;
		uint32_t page = (a->tx_pvt[qi] + k) % A_NTXBUF;
		netif_tx_request_t *r = a_tx_slot(a, qi);

		memcpy(a_page(a, A_TXBUF0 + page), x->buf + off, chunk);
		r->gref = A_GREF0 + A_TXBUF0 + page;
		r->offset = 0;
		r->id = (uint16_t)(a->tx_pvt[qi] - 1);
		r->size = (uint16_t)(k == 0 ? len : chunk);
		r->flags = (k + 1 < nd ? NETTXF_more_data : 0) |
			   (k == 0 ? (opt & (NETTXF_csum_blank | NETTXF_data_validated)) : 0);
		if (k == 0 && (opt & 0x30)) {
			netif_extra_info_t *ex = (void *)a_tx_slot(a, qi);

			r->flags |= NETTXF_extra_info;
			memset(ex, 0, sizeof(*ex));
			ex->type = XEN_NETIF_EXTRA_TYPE_GSO;
			ex->u.gso.type = (opt >> 4) & 3;
			ex->u.gso.size = (uint16_t)(get8(c) * 8);
		}
		off += chunk;
	}
}

static void a_push(struct rf_world *x, RING_IDX *prod, RING_IDX new, RING_IDX *event,
		   evtchn_port_t port)
{
	RING_IDX old = __atomic_load_n(prod, __ATOMIC_RELAXED);

	__atomic_store_n(prod, new, __ATOMIC_SEQ_CST);
	if ((RING_IDX)(new - __atomic_load_n(event, __ATOMIC_SEQ_CST)) < (RING_IDX)(new - old))
		hv_evtchn_notify(x->w.hv, x->a.domid, port);
}

static void op_rx_post(struct rf_world *x, struct cur *c, unsigned int qi, bool raw)
{
	struct hostile *a = &x->a;
	netif_rx_sring_t *s = a_rxs(a, qi);
	unsigned int n = raw ? 1 : 1 + get8(c) % 64;

	for (unsigned int i = 0; i < n; i++) {
		RING_IDX idx = a->rx_pvt[qi]++;
		netif_rx_request_t *r = &s->ring[idx & (BACK_RX_RING_SIZE - 1)].req;

		r->id = raw ? get16(c) : (uint16_t)idx;
		r->gref = raw ? get_gref(c) : A_GREF0 + A_RXBUF0 + idx % A_NRXBUF;
	}
	a_push(x, &s->req_prod, a->rx_pvt[qi], &s->req_event, a->port_rx[qi]);
}

static void op_gnt(struct rf_world *x, struct cur *c)
{
	struct hostile *a = &x->a;
	uint8_t sel = get8(c);
	/* refs 8..135 (A's and unused ones), or 0..127 (the reserved ones too) */
	grant_entry_v1_t *e = &a->gt[(sel & 0x7f) + (sel & 0x80 ? 0 : A_GREF0)];
	uint16_t flags = get16(c);
	uint8_t dsel = get8(c), fsel = get8(c);

	e->domid = dsel < 0xf0 ? 0 : (domid_t)get16(c);
	e->frame = fsel < 0xf0 ? fsel % A_PAGES : get32(c);
	__atomic_store_n(&e->flags, flags, __ATOMIC_RELEASE);
}

static void op_ctrl(struct rf_world *x, struct cur *c)
{
	struct hostile *a = &x->a;
	xen_netif_ctrl_sring_t *s = a_ctrls(a);
	struct xen_netif_ctrl_request *r;

	if (!a->ctrl)
		return;
	r = &s->ring[a->ctrl_pvt++ & (__CONST_RING_SIZE(xen_netif_ctrl, BACK_PAGE_SIZE) - 1)].req;
	r->id = get16(c);
	r->type = get8(c) % 12;
	r->data[0] = r->type == XEN_NETIF_CTRL_TYPE_SET_HASH_KEY ||
			     r->type == XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING
			 ? get_gref(c)
			 : get32(c);
	r->data[1] = get16(c);
	r->data[2] = get16(c);
	a_push(x, &s->req_prod, a->ctrl_pvt, &s->req_event, a->port_ctrl);
}

/* An index near where A's own count is, or anywhere. */
static RING_IDX near(struct cur *c, RING_IDX base)
{
	uint8_t v = get8(c);

	if (v < 0xf0)
		return base + (RING_IDX)(int8_t)(v * 3);
	return get32(c);
}

static void op_event(struct rf_world *x, struct cur *c, unsigned int qi)
{
	struct hostile *a = &x->a;
	uint8_t which = get8(c) % 5;

	switch (which) {
	case 0:
		__atomic_store_n(&a_txs(a, qi)->req_event, near(c, a->tx_pvt[qi]),
				 __ATOMIC_SEQ_CST);
		break;
	case 1:
		__atomic_store_n(&a_txs(a, qi)->rsp_event, near(c, a->tx_pvt[qi]),
				 __ATOMIC_SEQ_CST);
		break;
	case 2:
		__atomic_store_n(&a_rxs(a, qi)->req_event, near(c, a->rx_pvt[qi]),
				 __ATOMIC_SEQ_CST);
		break;
	case 3:
		__atomic_store_n(&a_rxs(a, qi)->rsp_event, near(c, a->rx_pvt[qi]),
				 __ATOMIC_SEQ_CST);
		break;
	default:
		__atomic_store_n(&a_ctrls(a)->rsp_event, near(c, a->ctrl_pvt), __ATOMIC_SEQ_CST);
		break;
	}
}

/* B sends A (or everyone) a frame: RX delivery into A's ring. */
static void op_peer_send(struct rf_world *x, struct cur *c)
{
	uint32_t len = get16(c) % 65536;
	uint8_t sel = get8(c), opt = get8(c);
	struct ff_txopt txo = {0};

	len = frame_build(c, x->buf, len, dst_of(sel % 4 == 0 ? 6 : sel), mac_b, x->check_seq++);
	txo.flags = opt & (NETTXF_csum_blank | NETTXF_data_validated);
	/* B is well-behaved: a GSO type it has, an MSS that is not 0 (Linux: fatal). */
	txo.gso_type = (uint8_t)((opt >> 4) % 3);
	txo.gso_size = txo.gso_type ? (uint16_t)((get8(c) + 1) * 8) : 0;
	ff_tx_reap(&x->b, 0);
	if (ff_tx_frame(&x->b, 0, x->buf, len, &txo) == 0)
		ff_tx_push(&x->b, 0);
}

/* A rewrites one of its frontend keys (the backend watches some of them). */
static void op_xs(struct rf_world *x, struct cur *c)
{
	static const char *const keys[] = {
	    "state",	     "request-multicast-control", "tx-ring-ref", "rx-ring-ref",
	    "event-channel", "multi-queue-num-queues",	  "feature-sg",	 "persistent-grants",
	    "ctrl-ring-ref"};
	uint8_t k = get8(c) % (sizeof(keys) / sizeof(keys[0]));
	uint8_t v = get8(c);
	char val[24];

	settle(x);
	if (v < 0xf0)
		snprintf(val, sizeof(val), "%u", k == 0 ? v % 8u : v);
	else
		snprintf(val, sizeof(val), "%s", v & 1 ? "-1" : "0x10 junk");
	xs_put(x->w.store, x->a.fe_path, keys[k], val);
}

enum {
	OP_TX_REQ,
	OP_TX_EXTRA,
	OP_TX_FRAME,
	OP_TX_PUSH,
	OP_TX_PROD,
	OP_RX_POST,
	OP_RX_RAW,
	OP_RX_PROD,
	OP_GNT,
	OP_CTRL,
	OP_CTRL_PROD,
	OP_EVENT,
	OP_KICK,
	OP_ROUND_A,
	OP_ROUND_PEERS,
	OP_PEER_SEND,
	OP_PEER_CONSUME,
	OP_BUF_WRITE,
	OP_LOOP,
	OP_XS,
	OP_MAX
};

static void run_op(struct rf_world *x, struct cur *c)
{
	struct hostile *a = &x->a;
	uint8_t op = get8(c);
	unsigned int qi = a->nq > 1 ? (op >> 7) : 0;
	netif_tx_request_t *r;

	switch (op % OP_MAX) {
	case OP_TX_REQ:
		r = a_tx_slot(a, qi);
		r->id = get16(c);
		r->gref = get_gref(c);
		r->offset = get16(c);
		r->flags = get8(c);
		r->size = get16(c);
		break;
	case OP_TX_EXTRA: {
		netif_extra_info_t *ex = (void *)a_tx_slot(a, qi);

		ex->type = get8(c) % 6;
		ex->flags = get8(c);
		for (unsigned int i = 0; i < 6; i++)
			ex->u.mcast.addr[i] = get8(c);
		break;
	}
	case OP_TX_FRAME:
		op_tx_frame(x, c, qi);
		break;
	case OP_TX_PUSH:
		a_push(x, &a_txs(a, qi)->req_prod, a->tx_pvt[qi], &a_txs(a, qi)->req_event,
		       a->port_tx[qi]);
		break;
	case OP_TX_PROD:
		__atomic_store_n(&a_txs(a, qi)->req_prod, near(c, a->tx_pvt[qi]), __ATOMIC_SEQ_CST);
		break;
	case OP_RX_POST:
		op_rx_post(x, c, qi, false);
		break;
	case OP_RX_RAW:
		op_rx_post(x, c, qi, true);
		break;
	case OP_RX_PROD:
		__atomic_store_n(&a_rxs(a, qi)->req_prod, near(c, a->rx_pvt[qi]), __ATOMIC_SEQ_CST);
		break;
	case OP_GNT:
		op_gnt(x, c);
		break;
	case OP_CTRL:
		op_ctrl(x, c);
		break;
	case OP_CTRL_PROD:
		if (a->ctrl)
			__atomic_store_n(&a_ctrls(a)->req_prod, near(c, a->ctrl_pvt),
					 __ATOMIC_SEQ_CST);
		break;
	case OP_EVENT:
		op_event(x, c, qi);
		break;
	case OP_KICK:
		hv_evtchn_notify(x->w.hv, a->domid, get8(c) & 1 ? a->port_rx[qi] : a->port_tx[qi]);
		break;
	case OP_ROUND_A:
		if (x->va->nq > qi) {
			unsigned int n = 1 + get8(c) % 8;

			for (unsigned int i = 0; i < n; i++)
				back_worker_round(x->va->q[qi]);
		}
		break;
	case OP_ROUND_PEERS:
		rounds(x->vb, 1 + get8(c) % 4);
		rounds(x->vc, 1);
		break;
	case OP_PEER_SEND:
		op_peer_send(x, c);
		break;
	case OP_PEER_CONSUME:
		peer_consume(x, &x->b);
		peer_consume(x, &x->c);
		break;
	case OP_BUF_WRITE: {
		uint8_t *p = a_page(a, A_TXBUF0 + get8(c) % (A_PAGES - A_TXBUF0));
		unsigned int off = get16(c) % HV_PAGE_SIZE, n = get8(c) % 16;

		for (unsigned int i = 0; i < n && off + i < HV_PAGE_SIZE; i++)
			p[off + i] = get8(c);
		break;
	}
	case OP_LOOP:
		settle(x);
		loop_run_once(x->w.loop, 0);
		break;
	case OP_XS:
		op_xs(x, c);
		break;
	}
}

/* A is gone: nothing of its may stay mapped, pinned or open, and B and C still talk. */
static void check_after(struct rf_world *x)
{
	struct hv_domain *d = hv_slot(x->w.hv, x->a.domid);
	struct ff_rxinfo info;
	struct hv_stats st;
	uint32_t len, seq = 0x5eed0000u + x->check_seq++;
	bool got = false;
	int n;

	check(x->va->nq == 0, x->va->nq);
	check(back_guest_rx_hold(x->w.back, x->a.domid) == 0,
	      back_guest_rx_hold(x->w.back, x->a.domid));
	check(atomic_load(&d->maps) == 0, atomic_load(&d->maps));
	for (uint32_t ref = 0; ref < d->nr_grants; ref++)
		check(d->active[ref].pins == 0, ref);
	hv_stats(x->w.hv, &st);
	check(st.evtchns_open == x->evtchns_base, st.evtchns_open);
	check(back_vif_state(x->vb) == XenbusStateConnected, back_vif_state(x->vb));
	check(back_vif_state(x->vc) == XenbusStateConnected, back_vif_state(x->vc));
	check(atomic_load(&x->vb->broken) == 0, 0);
	check(atomic_load(&x->vc->broken) == 0, 0);

	/* Frames B sent A were dropped with A: B's ring must be all answered again. */
	peers_run(x, 4);
	check(atomic_load(&x->vb->q[0]->inflight) == 0, atomic_load(&x->vb->q[0]->inflight));
	check(x->b.q[0].tx.rsp_cons == x->b.q[0].tx.req_prod_pvt,
	      x->b.q[0].tx.req_prod_pvt - x->b.q[0].tx.rsp_cons);

	len = 60 + seq % 3000;
	make_frame(x->buf, len, mac_b, mac_c, seq);
	check(ff_tx_frame(&x->c, 0, x->buf, len, NULL) == 0, 0);
	ff_tx_push(&x->c, 0);
	for (unsigned int i = 0; i < 8 && !got; i++) {
		rounds(x->vc, 1);
		rounds(x->vb, 1);
		ff_tx_reap(&x->c, 0);
		while (!got &&
		       (n = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN) {
			if (n == (int)len && memcmp(x->buf, x->rbuf, len) == 0)
				got = true;
		}
		ff_rx_post(&x->b, 0, FF_RING);
	}
	check(got, seq);
	peers_run(x, 2);
}

/* BACK_RING_FUZZ_DEBUG set: what the input made each vif do (to check what seeds reach). */
static void debug_counters(struct rf_world *x)
{
	struct back_vif *v[3] = {x->va, x->vb, x->vc};
	unsigned int ns;
	const struct back_stat_desc *d = back_stats_names(&ns);

	if (!getenv("BACK_RING_FUZZ_DEBUG"))
		return;
	fprintf(stderr, "A: state %d nq %u error %s\n", back_vif_state(x->va), x->va->nq,
		back_vif_error(x->va) ? back_vif_error(x->va) : "-");
	for (unsigned int i = 0; i < 3; i++)
		for (unsigned int j = 0; j < v[i]->nq; j++) {
			struct back_queue *q = v[i]->q[j];

			fprintf(stderr,
				"%c q%u: inflight %u rxq %lu..%lu blocked %d wait_for %u "
				"rx req_cons %u prod %u ndone_local %u compl %lu..%lu pending_free "
				"%u\n",
				'A' + i, j, atomic_load(&q->inflight), (unsigned long)q->rxq.head,
				(unsigned long)atomic_load(&q->rxq.tail),
				(int)atomic_load(&q->rx_blocked), atomic_load(&q->rx_wait_for),
				q->rx.req_cons, q->rx.sring->req_prod, q->ndone_local,
				(unsigned long)q->compl .head,
				(unsigned long)atomic_load(&q->compl .tail), q->pending_free);
		}
	for (unsigned int k = 0; k < ns; k++) {
		uint64_t s[3];

		for (unsigned int i = 0; i < 3; i++)
			s[i] =
			    back_vif_stat(v[i], 0, d[k].name) + back_vif_stat(v[i], 1, d[k].name);
		if (s[0] || s[1] || s[2])
			fprintf(stderr, "  %-20s A %6lu B %6lu C %6lu\n", d[k].name,
				(unsigned long)s[0], (unsigned long)s[1], (unsigned long)s[2]);
	}
}

/* End of an input: drain, let the loop act, disconnect A, check. */
static void finish(struct rf_world *x)
{
	for (unsigned int i = 0; i < 4; i++) {
		rounds(x->va, 1);
		peers_run(x, 1);
	}
	settle(x);
	debug_counters(x);
	check(a_held(x) == 0, a_held(x));
	loop_run_once(x->w.loop, 0); /* a broken A is disconnected here */
	xs_put_u(x->w.store, x->a.fe_path, "state", XenbusStateClosing);
	xs_put_u(x->w.store, x->a.fe_path, "state", XenbusStateClosed);
	loop_run_once(x->w.loop, 0);
	hostile_teardown(x);
	check_after(x);
	xs_put_u(x->w.store, x->a.fe_path, "state", XenbusStateInitialising);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cur c = {data, size};
	struct rf_world *x;
	uint8_t w, o1, o2;

	if (size < 3)
		return 0;
	w = get8(&c);
	o1 = get8(&c);
	o2 = get8(&c);
	x = world_get(w % NWORLDS);
	rng_seed();
	hostile_connect(x, o1, o2);
	/* Bounded: every op reads at least one byte. */
	while (c.n > 0)
		run_op(x, &c);
	finish(x);
	return 0;
}
