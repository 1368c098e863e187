// SPDX-License-Identifier: MIT
// test_xenbus.c - netback's toolstack, XenbusState machine and control ring against a fake frontend

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "../common/log_capture.h"
#include "back/internal.h"
#include "fake_front.h"
#include "store/store.h"

static const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};

/* The control ring and its data pages live in queue 3's pages (unused with nq <= 3). */
#define CFRAME (3 * FF_PAGES_PER_Q)
#define DFRAME (3 * FF_PAGES_PER_Q + 1)

struct fx {
	struct world w;
	struct ff f;
	struct back_vif *vif;
	char be_path[96];
	/* the control ring, when a test sets one up (ctrl_setup()) */
	xen_netif_ctrl_front_ring_t cr;
	grant_ref_t cref, dref;
	evtchn_port_t cport;
	uint8_t *data;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	assert_int_equal(world_create(&x->w, BACK_TX_MAP, NULL), 0);
	assert_int_equal(ff_create(&x->f, &x->w, 0), 0);
	assert_int_equal(back_vif_create(x->w.back, x->f.domid, 0, mac_a, &x->vif), 0);
	snprintf(x->be_path, sizeof(x->be_path), "/local/domain/0/backend/vif/%u/0", x->f.domid);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	struct hv_leak leak = {0};
	struct hv_stats st;

	back_vif_destroy(x->vif);
	ff_destroy(&x->f, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.evtchns_open, 0);
	world_destroy(&x->w);
	free(x);
	return 0;
}

static void assert_str_key(struct store *s, const char *dir, const char *key, const char *want)
{
	char path[160], *val = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	assert_int_equal(store_read(s, path, &val, NULL), 0);
	assert_string_equal(val, want);
	free(val);
}

static void assert_perms(struct store *s, const char *path, domid_t owner, domid_t reader)
{
	struct store_perm *p = NULL;
	unsigned int n = 0;

	assert_int_equal(store_get_perms(s, path, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].id, owner);
	assert_int_equal(p[0].perm, STORE_PERM_NONE);
	assert_int_equal(p[1].id, reader);
	assert_int_equal(p[1].perm, STORE_PERM_READ);
	free(p);
}

static void test_toolstack_keys(void **state)
{
	struct fx *x = *state;
	struct store *s = x->w.store;
	char path[160], *val = NULL;

	assert_str_key(s, x->f.fe_path, "backend", x->be_path);
	assert_str_key(s, x->f.fe_path, "backend-id", "0");
	assert_str_key(s, x->f.fe_path, "handle", "0");
	assert_str_key(s, x->f.fe_path, "mac", "00:16:3e:00:00:0a");
	assert_str_key(s, x->f.fe_path, "state", "1");
	assert_perms(s, x->f.fe_path, x->f.domid, 0);
	snprintf(path, sizeof(path), "%s/mac", x->f.fe_path);
	assert_perms(s, path, x->f.domid, 0);

	assert_str_key(s, x->be_path, "frontend", x->f.fe_path);
	assert_int_equal(xs_read_long(s, x->be_path, "frontend-id"), x->f.domid);
	assert_str_key(s, x->be_path, "online", "1");
	assert_str_key(s, x->be_path, "type", "vif");
	assert_str_key(s, x->be_path, "carrier", "0"); /* no link before connecting */
	snprintf(path, sizeof(path), "%s/hotplug-status", x->be_path);
	assert_int_equal(store_read(s, path, &val, NULL), -ENOENT); /* not on the switch yet */
	assert_perms(s, x->be_path, 0, x->f.domid);
	snprintf(path, sizeof(path), "%s/state", x->be_path);
	assert_perms(s, path, 0, x->f.domid);

	/* Features, and InitWait because the frontend is Initialising. */
	assert_int_equal(xs_read_long(s, x->be_path, "feature-sg"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-gso-tcpv4"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-gso-tcpv6"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-ipv6-csum-offload"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-rx-copy"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-rx-flip"), 0);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-split-event-channels"), 1);
	assert_int_equal(xs_read_long(s, x->be_path, "feature-ctrl-ring"), 1);
	assert_true(xs_read_long(s, x->be_path, "multi-queue-max-queues") >= 1);
	assert_int_equal(xs_read_long(s, x->be_path, "state"), XenbusStateInitWait);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);

	/* Duplicates and unknown domains are refused. */
	struct back_vif *dup;

	assert_int_equal(back_vif_create(x->w.back, x->f.domid, 0, mac_a, &dup), -EEXIST);
	assert_int_equal(back_vif_create(x->w.back, 77, 0, mac_a, &dup), -ESRCH);
	assert_int_equal(back_vif_create(x->w.back, 0, 0, mac_a, &dup), -EINVAL);
}

/* A guest's own store connection: what its permissions let it do. */
struct gconn {
	uint32_t last_type;
	char last[256];
};

static int gconn_send(void *ctx, const void *buf, size_t len)
{
	struct gconn *g = ctx;
	struct xsd_sockmsg h;

	if (len >= sizeof(h)) {
		memcpy(&h, buf, sizeof(h));
		g->last_type = h.type;
		memset(g->last, 0, sizeof(g->last));
		memcpy(g->last, (const char *)buf + sizeof(h),
		       h.len < sizeof(g->last) - 1 ? h.len : sizeof(g->last) - 1);
	}
	return 0;
}

static uint32_t gconn_op(struct store_conn *c, struct gconn *g, uint32_t type, const char *path,
			 const char *val)
{
	char buf[512];
	struct xsd_sockmsg h = {.type = type, .req_id = 1};
	size_t plen = strlen(path) + 1, vlen = val ? strlen(val) : 0;

	h.len = (uint32_t)(plen + vlen);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), path, plen);
	if (val)
		memcpy(buf + sizeof(h) + plen, val, vlen);
	g->last_type = UINT32_MAX;
	assert_int_equal(store_conn_input(c, buf, sizeof(h) + h.len), 0);
	return g->last_type;
}

static void test_guest_permissions(void **state)
{
	struct fx *x = *state;
	struct gconn g;
	struct store_conn *c = store_conn_open(x->w.store, x->f.domid, gconn_send, &g);
	char path[160];

	assert_non_null(c);
	/* the guest writes its own keys and reads ours */
	snprintf(path, sizeof(path), "%s/feature-sg", x->f.fe_path);
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "1"), XS_WRITE);
	snprintf(path, sizeof(path), "%s/feature-rx-copy", x->be_path);
	assert_int_equal(gconn_op(c, &g, XS_READ, path, NULL), XS_READ);
	assert_string_equal(g.last, "1");
	/* but cannot write ours */
	snprintf(path, sizeof(path), "%s/state", x->be_path);
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "4"), XS_ERROR);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	/* its state write drives our state machine */
	snprintf(path, sizeof(path), "%s/state", x->f.fe_path);
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "5"), XS_WRITE);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "6"), XS_WRITE);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "1"), XS_WRITE);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	/* garbage in the state node counts as Unknown: Closed */
	assert_int_equal(gconn_op(c, &g, XS_WRITE, path, "4x"), XS_WRITE);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	store_conn_close(c);
}

static void test_connect_defaults(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	struct hv_stats st;
	uint64_t vals[128];
	unsigned int nstats;

	assert_true(back_stats_names(&nstats) != NULL && nstats <= 128);
	/* No carrier before the guest connects: no queue to carry anything. */
	assert_false(back_vif_carrier(x->vif));
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateConnected);
	assert_int_equal(back_vif_num_queues(x->vif), 1);
	assert_true(back_vif_carrier(x->vif));
	/* Counters of queue 0 only: the one past the last is no queue. */
	assert_int_equal(back_vif_stats(x->vif, 0, vals), 0);
	assert_int_equal(back_vif_stats(x->vif, 1, vals), -ENOENT);
	assert_null(back_vif_error(x->vif));
	/* Linux's defaults for absent keys. */
	assert_false(x->vif->fe.sg);
	assert_false(x->vif->fe.gso_tcpv4);
	assert_false(x->vif->fe.gso_tcpv6);
	assert_true(x->vif->fe.csum_ipv4);
	assert_false(x->vif->fe.csum_ipv6);
	assert_false(x->vif->fe.rx_notify);
	assert_false(x->vif->q[0]->split);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 2);  /* the two rings */
	assert_int_equal(st.evtchns_open, 2); /* guest port + our bound port */
}

static void test_connect_multiqueue_split(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 4,
			    .split = true,
			    .sg = true,
			    .gso4 = true,
			    .gso6 = true,
			    .rx_notify = true,
			    .ipv6_csum = true};
	struct hv_stats st;

	if (x->w.back->cfg.max_queues < 4) {
		/* a small machine: ask for what is allowed */
		o.nq = x->w.back->cfg.max_queues;
	}
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_int_equal(back_vif_num_queues(x->vif), o.nq);
	assert_true(x->vif->fe.sg && x->vif->fe.gso_tcpv4 && x->vif->fe.gso_tcpv6);
	assert_true(x->vif->fe.rx_notify && x->vif->fe.csum_ipv6);
	assert_true(x->vif->q[0]->split);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 2 * o.nq);
	assert_int_equal(st.evtchns_open, 4 * o.nq);
}

static void expect_fatal(struct fx *x, const char *needle)
{
	struct hv_stats st;
	char path[160], *val = NULL;

	assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
	assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateClosing);
	assert_non_null(back_vif_error(x->vif));
	assert_non_null(strstr(back_vif_error(x->vif), needle));
	snprintf(path, sizeof(path), "%s/error", x->be_path);
	assert_int_equal(store_read(x->w.store, path, &val, NULL), 0);
	assert_non_null(strstr(val, needle));
	free(val);
	assert_int_equal(back_vif_num_queues(x->vif), 0);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
}

static void test_fatal_no_rx_copy(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .no_rx_copy = true};

	assert_int_equal(ff_connect(&x->f, &o), 0);
	expect_fatal(x, "rx-copy");
}

static void test_fatal_too_many_queues(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .write_nq = BACK_MAX_QUEUES_LIMIT + 1};

	assert_int_equal(ff_connect(&x->f, &o), 0);
	expect_fatal(x, "queues");
}

static void test_fatal_missing_ring_ref(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .omit_tx_ring_ref = true};

	assert_int_equal(ff_connect(&x->f, &o), 0);
	expect_fatal(x, "ring-ref");
}

/*
 * Split event channels, one of them not the guest's to give (a port it
 * never allocated): fatal, whichever it is, and nothing stays bound.
 */
static void test_fatal_split_port(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .split = true};
	static const char *const key[] = {"event-channel-tx", "event-channel-rx"};
	char path[160], val[16];
	struct hv_stats st;

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	for (unsigned int i = 0; i < 2; i++) {
		ff_set_state(&x->f, XenbusStateClosing);
		ff_set_state(&x->f, XenbusStateClosed);
		ff_set_state(&x->f, XenbusStateInitialising);
		snprintf(path, sizeof(path), "%s/%s", x->f.fe_path, key[i]);
		assert_int_equal(store_write(x->w.store, path, "4000", 4), 0);
		ff_set_state(&x->f, XenbusStateConnected);
		expect_fatal(x, "binding event-channel");
		hv_stats(x->w.hv, &st);
		/* the guest's own two ports, nothing of netback's */
		assert_int_equal(st.evtchns_open, 2);
		snprintf(val, sizeof(val), "%u", i ? x->f.q[0].port_rx : x->f.q[0].port_tx);
		assert_int_equal(store_write(x->w.store, path, val, strlen(val)), 0);
	}
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_teardown(&x->f);
}

static void test_fatal_bad_ring(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	char path[160], *val = NULL;

	/* Connect, close, and come back with a TX req_prod far ahead of rsp_prod. */
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	__atomic_store_n(&x->f.q[0].tx.sring->req_prod, 1000, __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_fatal(x, "more than a ring ahead");
	assert_int_equal(back_vif_stat(x->vif, 0, "fatal"), 1);

	/*
	 * The same again, then a good ring: the vif connects, and its fatal
	 * count (the vif's, not the connection's) still says twice.  The
	 * reason goes when a new connection begins: `pvnet show` must not call
	 * the connected vif disabled, nor the guest read it when this one closes.
	 */
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_fatal(x, "more than a ring ahead");
	ff_set_state(&x->f, XenbusStateClosed);
	assert_non_null(back_vif_error(x->vif));
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	assert_null(back_vif_error(x->vif));
	snprintf(path, sizeof(path), "%s/error", x->be_path);
	assert_int_equal(store_read(x->w.store, path, &val, NULL), -ENOENT);
	__atomic_store_n(&x->f.q[0].tx.sring->req_prod, 0, __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_int_equal(back_vif_stat(x->vif, 0, "fatal"), 2);
	assert_null(back_vif_error(x->vif));
}

static void test_disconnect_reconnect(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .split = true};
	struct hv_stats st;

	for (int round = 0; round < 3; round++) {
		assert_int_equal(ff_connect(&x->f, &o), 0);
		assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
		assert_str_key(x->w.store, x->be_path, "hotplug-status", "connected");
		assert_str_key(x->w.store, x->be_path, "carrier", "1");
		ff_set_state(&x->f, XenbusStateClosing);
		assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
		assert_str_key(x->w.store, x->be_path, "carrier", "0");
		hv_stats(x->w.hv, &st);
		assert_int_equal(st.maps_in_use, 0);
		ff_set_state(&x->f, XenbusStateClosed);
		assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
		assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateClosed);
		ff_teardown(&x->f);
		hv_stats(x->w.hv, &st);
		assert_int_equal(st.evtchns_open, 0);
		ff_set_state(&x->f, XenbusStateInitialising);
		assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	}
	/* Reboot without closing: Connected -> Initialising goes straight to InitWait. */
	assert_int_equal(ff_connect(&x->f, &o), 0);
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_teardown(&x->f);
}

/* The frontend's key @key (written as dom0: the test plays the guest). */
static void fe_write(struct fx *x, const char *key, const char *v, size_t len)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", x->f.fe_path, key);
	assert_int_equal(store_write(x->w.store, path, v, len), 0);
}

static void fe_write_ul(struct fx *x, const char *key, unsigned long v)
{
	char val[24];

	snprintf(val, sizeof(val), "%lu", v);
	fe_write(x, key, val, strlen(val));
}

/* The toolstack writes our "online" key (dom0), as libxl does to detach a device. */
static void set_online(struct fx *x, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/online", x->be_path);
	assert_int_equal(store_write(x->w.store, path, v, strlen(v)), 0);
	loop_run_once(x->w.loop, 0);
}

/*
 * Toolstack-initiated close (xl network-detach): online=0 closes a
 * connected vif and keeps it Closed whatever the frontend does; online=1
 * lets it connect again.
 */
static void test_toolstack_close(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 2, .split = true};
	struct log_capture lc;
	struct hv_stats st;
	char *logged;

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	set_online(x, "0");
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
	assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateClosing);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_set_state(&x->f, XenbusStateClosed);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	ff_teardown(&x->f);
	/* The guest tries again: refused while offline. */
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_teardown(&x->f);
	/* Not a number: offline, as xenbus reads it, and said so. */
	log_set_level(LOG_WARN);
	log_capture_start(&lc);
	set_online(x, "yes");
	logged = log_capture_end(&lc);
	log_set_level(LOG_ERR);
	assert_int_equal(log_count(logged, "online 'yes' is not a number"), 1);
	free(logged);
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	set_online(x, "00");
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	/* Online again (any number but 0, as Linux's backends take it): the next attempt connects. */
	set_online(x, "2");
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_teardown(&x->f);
	/* Taken offline while Closed: it stays Closed (libxl's detach waits for 6). */
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	set_online(x, "0");
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateClosed);
}

/*
 * A guest that connects and disconnects in a loop gets a line per burst
 * (10 per 5 s per vif, as its fatal errors), not one per connect.
 */
static void test_reconnect_loop_log(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	struct log_capture lc;
	char *logged;

	log_set_level(LOG_INFO);
	log_capture_start(&lc);
	for (int i = 0; i < 30; i++) {
		assert_int_equal(ff_connect(&x->f, &o), 0);
		assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
		ff_set_state(&x->f, XenbusStateClosing);
		ff_set_state(&x->f, XenbusStateClosed);
		ff_teardown(&x->f);
	}
	logged = log_capture_end(&lc);
	log_set_level(LOG_ERR);
	assert_int_equal(log_count(logged, ": connected, 1 queue(s)"), 10);
	free(logged);
}

static void test_destroy_connected(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 2, .split = true, .sg = true};
	char *val;

	if (x->w.back->cfg.max_queues < 2)
		o.nq = 1;
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	back_vif_destroy(x->vif);
	x->vif = NULL;
	assert_int_equal(store_read(x->w.store, x->be_path, &val, NULL), -ENOENT);
	assert_int_equal(store_read(x->w.store, x->f.fe_path, &val, NULL), -ENOENT);
	/*
	 * The guest writes its keys again after the vif is gone: no watch of
	 * the vif's may fire (its memory is freed; ASan would see the read).
	 */
	fe_write(x, "state", "4", 1);
	fe_write(x, "request-multicast-control", "1", 1);
	loop_run_once(x->w.loop, 0);
	/* teardown() checks that nothing leaked */
}

/* The names below the store directory @path: -errno, or how many (@kid the first, if any). */
static int dir_list(struct fx *x, const char *path, char *kid, size_t kidlen)
{
	unsigned int n;
	char **kids;
	int rc = store_directory(x->w.store, path, &kids, &n);

	if (rc < 0)
		return rc;
	if (kid)
		snprintf(kid, kidlen, "%s", n ? kids[0] : "");
	free(kids);
	return (int)n;
}

/*
 * Destroying a vif removes its directories and each one above them that
 * is left empty, as libxl does: the domain's backend/vif/<domid> stays
 * while another vif of it does and goes with the last (a pvnetd that ran
 * many guests kept an empty one for each), and the domain's own directory
 * and dom0's stay.
 */
static void test_destroy_cleans_up(void **state)
{
	struct fx *x = *state;
	char be_dom[64], fe_dev[64], fe_vif[80], dom[32], kid[16];
	struct back_vif *v1;

	snprintf(be_dom, sizeof(be_dom), "/local/domain/0/backend/vif/%u", x->f.domid);
	snprintf(dom, sizeof(dom), "/local/domain/%u", x->f.domid);
	snprintf(fe_dev, sizeof(fe_dev), "%s/device", dom);
	snprintf(fe_vif, sizeof(fe_vif), "%s/vif", fe_dev);
	assert_int_equal(store_write(x->w.store, "/local/domain/0/name", "Domain-0", 8), 0);
	assert_int_equal(back_vif_create(x->w.back, x->f.domid, 1, mac_a, &v1), 0);
	back_vif_destroy(x->vif);
	x->vif = NULL;
	assert_int_equal(dir_list(x, be_dom, kid, sizeof(kid)), 1);
	assert_string_equal(kid, "1");
	assert_int_equal(dir_list(x, fe_vif, kid, sizeof(kid)), 1);
	assert_string_equal(kid, "1");

	back_vif_destroy(v1);
	assert_int_equal(dir_list(x, be_dom, NULL, 0), -ENOENT);
	assert_int_equal(dir_list(x, "/local/domain/0/backend", NULL, 0), -ENOENT);
	assert_int_equal(dir_list(x, fe_dev, NULL, 0), -ENOENT);
	assert_true(dir_list(x, dom, NULL, 0) >= 0);
	assert_int_equal(dir_list(x, "/local/domain/0", kid, sizeof(kid)), 1);
	assert_string_equal(kid, "name");
}

static void test_domain_dies(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	struct hv_leak leak = {0};
	struct hv_stats st;

	assert_int_equal(ff_connect(&x->f, &o), 0);
	/* xl destroy: the domain goes first, its store directory with it. */
	assert_int_equal(hv_domain_destroy(x->w.hv, x->f.domid, &leak), 0);
	assert_int_equal(leak.maps_in_use, 2); /* our ring mappings, still valid */
	assert_int_equal(store_domain_release(x->w.store, x->f.domid), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	back_vif_destroy(x->vif);
	x->vif = NULL;
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	assert_int_equal(st.evtchns_open, 0);
	assert_int_equal(st.zombies, 0);
	/* the test's views */
	hv_gntshr_fini(&x->f.gs);
	munmap(x->f.gt, x->f.gt_size);
	munmap(x->f.mem, (size_t)x->f.npages * HV_PAGE_SIZE);
	world_destroy(&x->w);
	free(x);
	*state = NULL;
}

static int teardown_maybe(void **state)
{
	return *state ? teardown(state) : 0;
}

/* The control ring (ctrl.c): served by queue 0's worker, set up at connect. */

static grant_ref_t grant(struct fx *x, uint32_t frame, bool ro)
{
	grant_ref_t ref = 0;

	assert_int_equal(hv_gntshr_alloc_ref(&x->f.gs, &ref), 0);
	assert_int_equal(hv_gntshr_grant_access(&x->f.gs, ref, 0, frame, ro), 0);
	return ref;
}

/* A control ring and its keys, before the frontend connects. */
static void ctrl_setup(struct fx *x)
{
	xen_netif_ctrl_sring_t *s = (void *)(x->f.mem + (size_t)CFRAME * HV_PAGE_SIZE);

	SHARED_RING_INIT(s);
	FRONT_RING_INIT(&x->cr, s, HV_PAGE_SIZE);
	x->cref = grant(x, CFRAME, false);
	x->dref = grant(x, DFRAME, true);
	x->data = x->f.mem + (size_t)DFRAME * HV_PAGE_SIZE;
	assert_int_equal(hv_evtchn_alloc_unbound(x->w.hv, x->f.domid, 0, &x->cport), 0);
	fe_write_ul(x, "ctrl-ring-ref", x->cref);
	fe_write_ul(x, "event-channel-ctrl", x->cport);
}

static void ctrl_req(struct fx *x, uint16_t id, uint16_t type, uint32_t d0, uint32_t d1,
		     uint32_t d2)
{
	struct xen_netif_ctrl_request *r = RING_GET_REQUEST(&x->cr, x->cr.req_prod_pvt++);

	r->id = id;
	r->type = type;
	r->data[0] = d0;
	r->data[1] = d1;
	r->data[2] = d2;
}

static void ctrl_push(struct fx *x)
{
	__atomic_store_n(&x->cr.sring->req_prod, x->cr.req_prod_pvt, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->f.domid, x->cport);
}

/* Wait for @n responses; their status and data by request id. */
static unsigned int ctrl_wait(struct fx *x, unsigned int n, uint32_t *st, uint32_t *data)
{
	uint64_t end = test_now_ms() + 5000;
	unsigned int got = 0;

	while (got < n && test_now_ms() < end) {
		RING_IDX prod = __atomic_load_n(&x->cr.sring->rsp_prod, __ATOMIC_ACQUIRE);

		for (; x->cr.rsp_cons != prod; x->cr.rsp_cons++, got++) {
			struct xen_netif_ctrl_response r;

			RING_COPY_RESPONSE(&x->cr, x->cr.rsp_cons, &r);
			st[r.id] = r.status;
			data[r.id] = r.data;
		}
		loop_run_once(x->w.loop, 1);
	}
	return got;
}

static void expect_closing(struct fx *x, const char *needle)
{
	struct hv_stats st;

	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->vif) == XenbusStateClosing, 5000));
	assert_non_null(back_vif_error(x->vif));
	assert_non_null(strstr(back_vif_error(x->vif), needle));
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
}

enum {
	INVALID = XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER,
	NOT_SUPPORTED = XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED,
	OVERFLOW = XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW
};

/*
 * Every request type with the parameters a guest may get wrong, each
 * answered as netif.h says, and what succeeded is what netback now uses.
 * A mapping range past the table (200 entries of 128) is refused before
 * the grant copy: copied first, 800 bytes would land in a 512-byte buffer
 * (ASan sees it; the later check alone would not).
 */
static void test_ctrl_requests(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 2, .split = true};
	struct back_hash_snap snap;
	uint32_t st[32], data[32], *ent;
	unsigned int n = 0;

	ctrl_setup(x);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_true(x->vif->ctrl.mapped);
	ent = (uint32_t *)(void *)x->data;
	for (unsigned int i = 0; i < 1024; i++)
		ent[i] = i % 2;
	memset(st, 0xee, sizeof(st));

	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 1, 0, 0);			 /* 0 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, 2, 0, 0);		 /* 1 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, 1, 0, 0);		 /* 2 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, x->dref, 41, 0);		 /* 3 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, x->dref, 0xffffffffu, 0);	 /* 4 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, 99999, 40, 0);		 /* 5 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, x->dref, 40, 0);		 /* 6 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 129, 0, 0);		 /* 7 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, 128, 0, 0);		 /* 8 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 1, 0xffffffffu); /* 9 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 0x40000001u, 0); /* 10 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 200, 0);	 /* 11 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 2, 127);	 /* 12 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, 99999, 1, 0);		 /* 13 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 128, 0);	 /* 14 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0);		 /* 15 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_GET_GREF_MAPPING_SIZE, 0, 0, 0);		 /* 16 */
	ctrl_req(x, n++, 0xffff, 0, 0, 0);						 /* 17 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0xffffffffu, 0, 0);	 /* 18 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, 0xf, 0, 0);		 /* 19 */
	ctrl_req(x, n++, XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS, 0, 0, 0);			 /* 20 */
	ctrl_push(x);
	assert_int_equal(ctrl_wait(x, n, st, data), n);

	assert_int_equal(st[0], INVALID); /* flags before an algorithm (as Linux) */
	assert_int_equal(st[1], INVALID); /* no such algorithm */
	assert_int_equal(st[2], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(st[3], OVERFLOW); /* key longer than 40 */
	assert_int_equal(st[4], OVERFLOW);
	assert_int_equal(st[5], INVALID); /* a ref the guest never granted */
	assert_int_equal(st[6], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(st[7], INVALID); /* mapping larger than 128 */
	assert_int_equal(st[8], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(st[9], INVALID);   /* offset past the table */
	assert_int_equal(st[10], OVERFLOW); /* entries * 4 wraps: more than any table */
	assert_int_equal(st[11], OVERFLOW); /* more entries than any table (128) */
	assert_int_equal(st[12], INVALID);  /* offset + entries past the table */
	assert_int_equal(st[13], INVALID);  /* bad ref */
	assert_int_equal(st[14], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(st[15], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(data[15], BACK_HASH_MAPPING_MAX);
	assert_int_equal(st[16], NOT_SUPPORTED);
	assert_int_equal(st[17], NOT_SUPPORTED);
	assert_int_equal(st[18], INVALID); /* unknown hash type bits */
	assert_int_equal(st[19], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(st[20], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(data[20], 0xf);
	assert_int_equal(back_vif_stat(x->vif, 0, "ctrl_requests"), n);

	/* What succeeded is in force: the key (the page's first 40 bytes), flags, the table. */
	back_hash_snapshot(&x->vif->hash, &snap);
	assert_memory_equal(snap.key, x->data, 40);
	assert_int_equal(snap.flags, 0xf);
	assert_int_equal(snap.size, BACK_HASH_MAPPING_MAX);
	for (unsigned int i = 0; i < BACK_HASH_MAPPING_MAX; i++)
		assert_int_equal(atomic_load(&x->vif->hash.mapping[i]), i % 2);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);

	/* A table naming a queue the vif does not have changes nothing. */
	memset(st, 0xee, sizeof(st));
	ctrl_req(x, 0, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, x->dref, 128, 0);
	for (unsigned int i = 0; i < 128; i++)
		ent[i] = 1;
	ent[5] = 2;
	ctrl_push(x);
	assert_int_equal(ctrl_wait(x, 1, st, data), 1);
	assert_int_equal(st[0], INVALID);
	for (unsigned int i = 0; i < BACK_HASH_MAPPING_MAX; i++)
		assert_int_equal(atomic_load(&x->vif->hash.mapping[i]), i % 2);
}

/*
 * Each control response echoes its request's id and type (netif.h: "id:
 * the corresponding request's identifier", "type: the type of the
 * corresponding request"), in request order, for known and unknown types
 * alike: a frontend matches responses by them.
 */
static void test_ctrl_echo(void **state)
{
	static const struct {
		uint16_t id, type;
		uint32_t status;
	} req[] = {
	    {0x7007, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, XEN_NETIF_CTRL_STATUS_SUCCESS},
	    {0x0300, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, XEN_NETIF_CTRL_STATUS_SUCCESS},
	    {0xfffe, XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS, XEN_NETIF_CTRL_STATUS_SUCCESS},
	    {0x0001, 0x4242, NOT_SUPPORTED},
	};
	const unsigned int n = sizeof(req) / sizeof(req[0]);
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	uint64_t end;

	ctrl_setup(x);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	for (unsigned int i = 0; i < n; i++)
		ctrl_req(x, req[i].id, req[i].type, 1, 0, 0);
	ctrl_push(x);
	end = test_now_ms() + 5000;
	while (__atomic_load_n(&x->cr.sring->rsp_prod, __ATOMIC_ACQUIRE) != n &&
	       test_now_ms() < end)
		loop_run_once(x->w.loop, 1);
	assert_int_equal(__atomic_load_n(&x->cr.sring->rsp_prod, __ATOMIC_ACQUIRE), n);
	for (unsigned int i = 0; i < n; i++) {
		struct xen_netif_ctrl_response r;

		RING_COPY_RESPONSE(&x->cr, i, &r);
		assert_int_equal(r.id, req[i].id);
		assert_int_equal(r.type, req[i].type);
		assert_int_equal(r.status, req[i].status);
	}
}

/* Push as netfront does (RING_PUSH_REQUESTS_AND_CHECK_NOTIFY): an event only where req_event asks. */
static bool ctrl_push_checked(struct fx *x)
{
	int notify;

	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&x->cr, notify);
	if (notify)
		hv_evtchn_notify(x->w.hv, x->f.domid, x->cport);
	return notify;
}

/*
 * A guest that sets its hashing up a request at a time, queue 0's worker
 * asleep before each: a frontend that notifies only where req_event asks
 * (netfront's RING_PUSH_REQUESTS_AND_CHECK_NOTIFY) gets each answered,
 * because netback's last check before sleeping asks for the next
 * request's event, and a worker with nothing to do sleeps.  A key of
 * length 0 clears the key without reading a page (any ref, as Linux's
 * netback).  A reconnect starts from no hashing, whatever the last
 * connection set.
 */
static void test_ctrl_idle_and_reconnect(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 2, .split = true};
	struct xen_netif_ctrl_request req[] = {
	    {.type = XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM,
	     .data = {XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ}},
	    {.type = XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, .data = {0xf}},
	    {.type = XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, .data = {0, 40}},
	    {.type = XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, .data = {99999, 0}},
	};
	static const uint8_t zero[BACK_HASH_KEY_MAX];
	struct back_hash_snap snap;
	uint32_t st[4], data[4];

	ctrl_setup(x);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_true(x->vif->ctrl.mapped);
	req[2].data[0] = x->dref;
	for (unsigned int i = 0; i < BACK_HASH_KEY_MAX; i++)
		x->data[i] = (uint8_t)(i + 1);
	for (unsigned int i = 0; i < 4; i++) {
		assert_true(WAIT_UNTIL(&x->w, atomic_load(&x->vif->q[0]->sleeping), 5000));
		(void)WAIT_UNTIL(&x->w, false, 20); /* past its last check, in poll() */
		ctrl_req(x, 0, req[i].type, req[i].data[0], req[i].data[1], 0);
		assert_true(ctrl_push_checked(x));
		memset(st, 0xee, sizeof(st));
		assert_int_equal(ctrl_wait(x, 1, st, data), 1);
		assert_int_equal(st[0], XEN_NETIF_CTRL_STATUS_SUCCESS);
		back_hash_snapshot(&x->vif->hash, &snap);
		if (i == 2)
			assert_memory_equal(snap.key, x->data, BACK_HASH_KEY_MAX);
	}
	assert_int_equal(snap.alg, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
	assert_int_equal(snap.flags, 0xf);
	assert_memory_equal(snap.key, zero, sizeof(zero));

	/* The guest reboots and connects again: hashing is off until it asks. */
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	ff_teardown(&x->f);
	SHARED_RING_INIT(x->cr.sring);
	FRONT_RING_INIT(&x->cr, x->cr.sring, HV_PAGE_SIZE);
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	back_hash_snapshot(&x->vif->hash, &snap);
	assert_int_equal(snap.alg, XEN_NETIF_CTRL_HASH_ALGORITHM_NONE);
	assert_int_equal(snap.flags, 0);
	ctrl_req(x, 0, XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS, 0, 0, 0);
	ctrl_push(x);
	assert_int_equal(ctrl_wait(x, 1, st, data), 1);
	assert_int_equal(st[0], NOT_SUPPORTED);
}

/* A req_prod more than a ring ahead, then one moved back behind req_cons: fatal, this vif only. */
static void test_ctrl_bad_prod(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	uint32_t st[8], data[8];

	ctrl_setup(x);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	__atomic_store_n(&x->cr.sring->req_prod, 100000, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->f.domid, x->cport);
	expect_closing(x, "ctrl");

	/* Back with a sane ring: served again. */
	__atomic_store_n(&x->cr.sring->req_prod, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&x->cr.sring->rsp_prod, 0, __ATOMIC_SEQ_CST);
	x->cr.req_prod_pvt = 0;
	x->cr.rsp_cons = 0;
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	for (uint16_t i = 0; i < 5; i++)
		ctrl_req(x, i, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0);
	ctrl_push(x);
	assert_int_equal(ctrl_wait(x, 5, st, data), 5);
	__atomic_store_n(&x->cr.sring->req_prod, 3, __ATOMIC_SEQ_CST);
	hv_evtchn_notify(x->w.hv, x->f.domid, x->cport);
	expect_closing(x, "ctrl");
}

/*
 * A guest that writes on its control ring the rsp_prod netback is about to
 * publish, and asks for an event there, still gets the event: netback's
 * old index is its own (xen_ring_push()), not the one on the page.
 */
static void test_ctrl_rsp_prod_ahead(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	uint32_t st[8], data[8];
	uint64_t n0;

	ctrl_setup(x);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	ctrl_req(x, 0, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0);
	ctrl_push(x);
	assert_int_equal(ctrl_wait(x, 1, st, data), 1);
	n0 = back_vif_stat(x->vif, 0, "notifications");
	__atomic_store_n(&x->cr.sring->rsp_event, 2, __ATOMIC_SEQ_CST);
	__atomic_store_n(&x->cr.sring->rsp_prod, 2, __ATOMIC_SEQ_CST);
	ctrl_req(x, 1, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0);
	ctrl_push(x);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vif, 0, "notifications") == n0 + 1, 5000));
	assert_int_equal(ctrl_wait(x, 1, st, data), 1);
	assert_int_equal(st[1], XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
}

/*
 * A port without a ring is no control ring, as in Linux's netback: the
 * ring ref decides, and event-channel-ctrl is not even read (here not a
 * number).
 */
static void test_ctrl_port_without_ring(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};

	fe_write(x, "event-channel-ctrl", "x", 1);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->vif) == XenbusStateConnected, 5000));
	assert_null(back_vif_error(x->vif));
	assert_false(x->vif->ctrl.mapped);
}

/* The control ring's keys and ring, wrong one way at a time: fatal, then fine again. */
static void test_ctrl_connect_failures(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	char path[160];

	ctrl_setup(x);
	snprintf(path, sizeof(path), "%s/event-channel-ctrl", x->f.fe_path);
	assert_int_equal(store_rm(x->w.store, path), 0);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	expect_closing(x, "ctrl"); /* a ring without its port */

	fe_write(x, "event-channel-ctrl", "1 ", 2);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "ctrl");

	fe_write_ul(x, "event-channel-ctrl", x->cport);
	fe_write_ul(x, "ctrl-ring-ref", 4000000000ul);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "control ring");

	/* Not a number, or past 32 bits: fatal, not "no control ring". */
	fe_write(x, "ctrl-ring-ref", "abc", 3);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "ctrl-ring-ref");
	fe_write_ul(x, "ctrl-ring-ref", 4294967296ul);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "ctrl-ring-ref");

	fe_write_ul(x, "ctrl-ring-ref", x->cref);
	fe_write_ul(x, "event-channel-ctrl", x->f.q[0].port_tx); /* the data queue's port */
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "control ring");

	fe_write_ul(x, "event-channel-ctrl", x->cport);
	__atomic_store_n(&x->cr.sring->req_prod, 1000, __ATOMIC_SEQ_CST);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_closing(x, "control ring");

	__atomic_store_n(&x->cr.sring->req_prod, 0, __ATOMIC_SEQ_CST);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_true(x->vif->ctrl.mapped);
}

/* A whole ring of control requests written before the connect: served, every one. */
static void test_ctrl_ring_full_at_connect(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	uint32_t st[256], data[256];
	unsigned int n;

	ctrl_setup(x);
	n = RING_SIZE(&x->cr);
	assert_true(n <= 256);
	for (uint16_t i = 0; i < n; i++)
		ctrl_req(x, i, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0);
	__atomic_store_n(&x->cr.sring->req_prod, x->cr.req_prod_pvt, __ATOMIC_SEQ_CST);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	memset(st, 0xee, sizeof(st));
	assert_int_equal(ctrl_wait(x, n, st, data), n);
	for (unsigned int i = 0; i < n; i++) {
		assert_int_equal(st[i], XEN_NETIF_CTRL_STATUS_SUCCESS);
		assert_int_equal(data[i], BACK_HASH_MAPPING_MAX);
	}
}

/* Numbers in the frontend's keys: only plain decimal digits within range (kstrtouint's). */
static void test_key_parsing(void **state)
{
	static const struct {
		const char *v;
		size_t len;
	} bad[] = {
	    {"-1", 2}, {"4294967296", 10}, {"99999999999", 11}, {" 1", 2}, {"1\n", 2}, {"0x1", 3},
	    {"", 0},   {"1\0", 2},	   {"+1", 2},		{"0", 1}};
	static const char *const padded[] = {"0000000001", "00000000001",
					     "000000000000000000000000000000000000000001"};
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ff_set_state(&x->f, XenbusStateClosing);
		fe_write(x, "multi-queue-num-queues", bad[i].v, bad[i].len);
		ff_set_state(&x->f, XenbusStateConnected);
		assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
		assert_non_null(strstr(back_vif_error(x->vif), "queues"));
	}
	/* Leading zeros, any number of them, as kstrtouint() takes them. */
	for (size_t i = 0; i < sizeof(padded) / sizeof(padded[0]); i++) {
		ff_set_state(&x->f, XenbusStateClosing);
		fe_write(x, "multi-queue-num-queues", padded[i], strlen(padded[i]));
		ff_set_state(&x->f, XenbusStateConnected);
		assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	}
	/* ... and the range is the value's: 10^10 behind them is refused. */
	ff_set_state(&x->f, XenbusStateClosing);
	fe_write(x, "multi-queue-num-queues", "00000000000010000000000", 23);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
}

/*
 * Feature keys read as Linux's xenbus_read_unsigned(): any number but 0 is
 * on (up to 2^32 - 1), 0 is off, garbage is the default; GSO needs SG.
 */
static void test_feature_values(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .gso4 = true, .gso6 = true};

	/* GSO without SG: the guest gets segments */
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_false(x->vif->fe.sg);
	assert_false(x->vif->fe.gso_tcpv4);
	assert_false(x->vif->fe.gso_tcpv6);

	ff_set_state(&x->f, XenbusStateClosing);
	fe_write(x, "feature-sg", "2", 1);
	fe_write(x, "feature-gso-tcpv4", "4294967295", 10);
	fe_write(x, "feature-gso-tcpv6", "0", 1);
	fe_write(x, "feature-rx-notify", "yes", 3);
	fe_write(x, "feature-ipv6-csum-offload", "7", 1);
	fe_write(x, "feature-no-csum-offload", "0", 1);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_true(x->vif->fe.sg);
	assert_true(x->vif->fe.gso_tcpv4);
	assert_false(x->vif->fe.gso_tcpv6);
	assert_false(x->vif->fe.rx_notify);
	assert_true(x->vif->fe.csum_ipv6);
	assert_true(x->vif->fe.csum_ipv4);

	/* Reconfiguring and Reconfigured (the largest state) change nothing. */
	fe_write(x, "state", "8", 1);
	loop_run_once(x->w.loop, 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	fe_write(x, "state", "7", 1);
	loop_run_once(x->w.loop, 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	/* A state that is not a number is Unknown: we close. */
	fe_write(x, "state", "x", 1);
	loop_run_once(x->w.loop, 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	ff_teardown(&x->f);
}

/*
 * "online" as Linux's backends read it: a number with a leading zero is
 * still a number (01 is online), and a removed key is 0 (offline).
 */
static void test_online_values(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	char path[128];

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	set_online(x, "01");
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	set_online(x, "10");
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	snprintf(path, sizeof(path), "%s/online", x->be_path);
	assert_int_equal(store_rm(x->w.store, path), 0);
	loop_run_once(x->w.loop, 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	ff_teardown(&x->f);
}

/* request-rx-copy = 0 is as fatal as no request-rx-copy. */
static void test_fatal_rx_copy_zero(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1, .no_rx_copy = true};

	fe_write(x, "request-rx-copy", "0", 1);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	expect_fatal(x, "rx-copy");
}

/* A ring exactly full (req_prod a ring ahead of rsp_prod) is legal; one more is not. */
static void test_ring_full_at_connect(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};
	unsigned int queued = 0, answered = 0;
	netif_rx_sring_t *rxs;
	uint8_t frame[60];

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	rxs = x->f.q[0].rx.sring;
	/* TX: a whole ring of requests waits for the new connection, and is served. */
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	make_frame(frame, sizeof(frame), mac_a, mac_a, 1);
	while (ff_tx_frame(&x->f, 0, frame, sizeof(frame), NULL) == 0)
		queued++;
	assert_int_equal(queued, FF_RING);
	__atomic_store_n(&x->f.q[0].tx.sring->req_prod, x->f.q[0].tx.req_prod_pvt,
			 __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_true(WAIT_UNTIL(&x->w, (answered += ff_tx_reap(&x->f, 0)) == FF_RING, 10000));
	/* RX */
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	__atomic_store_n(&rxs->req_prod, rxs->rsp_prod + FF_RING + 1, __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_fatal(x, "rx ring req_prod");
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	__atomic_store_n(&rxs->req_prod, rxs->rsp_prod + FF_RING, __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_teardown(&x->f);
}

/* back_config_default()'s values (docs/netback.md, Configuration) and back_create()'s bounds. */
static void test_config(void **state)
{
	static const struct {
		uint32_t max_queues, persistent_max_grants, rx_queue_max_bytes, poll_us;
		bool ok;
	} cases[] = {
	    {1, 1, 2 * 65536, 0, true},
	    {BACK_MAX_QUEUES_LIMIT, BACK_PERSISTENT_MAX_LIMIT, 8u << 20, BACK_POLL_US_MAX, true},
	    {0, 4352, 8u << 20, 200, false},
	    {BACK_MAX_QUEUES_LIMIT + 1, 4352, 8u << 20, 200, false},
	    {8, 0, 8u << 20, 200, false},
	    {8, BACK_PERSISTENT_MAX_LIMIT + 1, 8u << 20, 200, false},
	    {8, 4352, 2 * 65536 - 1, 200, false},
	    {8, 4352, 8u << 20, BACK_POLL_US_MAX + 1, false},
	};
	struct fx *x = *state;
	struct back_config cfg;

	back_config_default(&cfg);
	assert_int_equal(cfg.tx_mode, BACK_TX_MAP);
	assert_int_equal(cfg.max_queues, 8);
	assert_int_equal(cfg.rx_queue_max_bytes, 8u << 20);
	assert_int_equal(cfg.rx_drain_timeout_ms, 10000);
	assert_int_equal(cfg.rx_drain_timeout_nonotify_ms, 30);
	assert_int_equal(cfg.rx_stall_timeout_ms, 60000);
	assert_int_equal(cfg.tx_hold_max_us, 20000);
	assert_int_equal(cfg.port_hold_max_us, 1000);
	assert_int_equal(cfg.poll_us, 200);
	assert_int_equal(cfg.persistent_max_grants, 4352);
	assert_int_equal(cfg.backend_id, 0);
	assert_false(cfg.no_workers);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct back *b;

		back_config_default(&cfg);
		cfg.loop = x->w.loop;
		cfg.tx_mode = BACK_TX_PERSISTENT;
		cfg.max_queues = cases[i].max_queues;
		cfg.persistent_max_grants = cases[i].persistent_max_grants;
		cfg.rx_queue_max_bytes = cases[i].rx_queue_max_bytes;
		cfg.poll_us = cases[i].poll_us;
		errno = 0;
		b = back_create(&cfg, x->w.hv, x->w.store, x->w.sw);
		if (cases[i].ok) {
			assert_non_null(b);
			back_destroy(b);
		} else {
			assert_null(b);
			assert_int_equal(errno, EINVAL);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_toolstack_keys, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_permissions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_connect_defaults, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_connect_multiqueue_split, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_no_rx_copy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_too_many_queues, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_missing_ring_ref, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_bad_ring, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_split_port, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disconnect_reconnect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_toolstack_close, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reconnect_loop_log, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_destroy_connected, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_destroy_cleans_up, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_domain_dies, setup, teardown_maybe),
	    cmocka_unit_test_setup_teardown(test_ctrl_requests, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_echo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_idle_and_reconnect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_bad_prod, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_rsp_prod_ahead, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_port_without_ring, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_connect_failures, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ctrl_ring_full_at_connect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_key_parsing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_feature_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_online_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fatal_rx_copy_zero, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_full_at_connect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_config, setup, teardown),
	};

	log_set_level(LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
