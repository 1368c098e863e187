// SPDX-License-Identifier: MIT
// test_xenbus.c - netback's toolstack and XenbusState machine against a fake frontend

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "back/internal.h"
#include "fake_front.h"

static const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};

struct fx {
	struct world w;
	struct ff f;
	struct back_vif *vif;
	char be_path[96];
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

	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_int_equal(xs_read_long(x->w.store, x->be_path, "state"), XenbusStateConnected);
	assert_int_equal(back_vif_num_queues(x->vif), 1);
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

static void test_fatal_bad_ring(void **state)
{
	struct fx *x = *state;
	struct ff_opts o = {.nq = 1};

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
	 * count (the vif's, not the connection's) still says twice.
	 */
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	ff_set_state(&x->f, XenbusStateConnected);
	expect_fatal(x, "more than a ring ahead");
	ff_set_state(&x->f, XenbusStateClosed);
	ff_set_state(&x->f, XenbusStateInitialising);
	__atomic_store_n(&x->f.q[0].tx.sring->req_prod, 0, __ATOMIC_RELEASE);
	ff_set_state(&x->f, XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	assert_int_equal(back_vif_stat(x->vif, 0, "fatal"), 2);
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
	struct hv_stats st;

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
	/* A malformed value is not "1": still offline. */
	set_online(x, "yes");
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateClosed);
	/* Online again: the next attempt connects. */
	set_online(x, "1");
	ff_set_state(&x->f, XenbusStateInitialising);
	assert_int_equal(back_vif_state(x->vif), XenbusStateInitWait);
	assert_int_equal(ff_connect(&x->f, &o), 0);
	assert_int_equal(back_vif_state(x->vif), XenbusStateConnected);
	ff_set_state(&x->f, XenbusStateClosing);
	ff_set_state(&x->f, XenbusStateClosed);
	ff_teardown(&x->f);
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
	/* teardown() checks that nothing leaked */
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
	    cmocka_unit_test_setup_teardown(test_disconnect_reconnect, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_toolstack_close, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_destroy_connected, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_domain_dies, setup, teardown_maybe),
	};

	log_set_level(LOG_ERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
