// SPDX-License-Identifier: MIT
/* test_vif_states.c - netfront's XenbusState machine and keys at their edges, against a real pvnetd */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "front/front.h"
#include "front/xs.h"
#include "harness.h"
#include "vif_ctx.h"

/* The backend's "error" key, written as dom0 writes it. */
static void set_be_error(struct ctx *c, const char *why)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/error", c->fb.be);
	assert_true(xs_write(H.dom0, XBT_NULL, path, why, strlen(why)));
}

/* The bounds of struct pvnet_vif_config are inclusive: the largest and smallest values pass. */
static void test_config_bounds(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_vif_config cfg;
	struct pvnet_vif *vif;

	(void)state;
	assert_int_equal(pvnet_domain_create(H.run_dir, 1024, &dom), 0);
	pvnet_vif_config_default(&cfg);
	cfg.prepared = true;
	cfg.devid = 43; /* no such device: a config that passes the checks gets -ENODEV */
	cfg.queues = PVNET_MAX_QUEUES;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -ENODEV);
	cfg.queues = PVNET_MAX_QUEUES + 1;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.queues = 1;
	cfg.tx_buffers = PVNET_MAX_FRAGS;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -ENODEV);
	cfg.tx_buffers = PVNET_MAX_FRAGS - 1;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.tx_buffers = PVNET_RING_SIZE;
	cfg.rx_buffers = 4096;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -ENODEV);
	cfg.rx_buffers = 4097;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.rx_buffers = PVNET_RING_SIZE;
	cfg.timeout_ms = 0;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	pvnet_domain_destroy(dom);
}

/* Process (bounded) until the backend's state as the vif read it is @want; the last return. */
static int process_until_be(struct pvnet_vif *vif, enum xenbus_state want)
{
	struct pollfd p = {.fd = pvnet_vif_control_fd(vif), .events = POLLIN};
	int st = pvnet_vif_process(vif);

	for (int i = 0; i < 100 && pvnet_vif_backend_state(vif) != want; i++) {
		poll(&p, 1, 50);
		st = pvnet_vif_process(vif);
	}
	return st;
}

/*
 * Every XenbusState the backend may be in is read as it is: Reconfiguring
 * and Reconfigured (7, 8) leave a connected vif connected, and a state
 * node that is gone is Unknown (the device went away: we close).
 */
static void test_backend_states(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	char path[160];
	struct ctx c;

	(void)state;
	ctx_init(&c, 40, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	fb_set_state(&c.fb, XenbusStateReconfiguring);
	assert_int_equal(process_until_be(vif, XenbusStateReconfiguring), XenbusStateConnected);
	assert_int_equal(pvnet_vif_backend_state(vif), XenbusStateReconfiguring);
	fb_set_state(&c.fb, XenbusStateReconfigured);
	assert_int_equal(process_until_be(vif, XenbusStateReconfigured), XenbusStateConnected);
	assert_int_equal(pvnet_vif_backend_state(vif), XenbusStateReconfigured);
	fb_set_state(&c.fb, XenbusStateConnected);
	assert_int_equal(process_until_be(vif, XenbusStateConnected), XenbusStateConnected);
	snprintf(path, sizeof(path), "%s/state", c.fb.be);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(process_until_be(vif, XenbusStateUnknown), XenbusStateClosed);
	assert_int_equal(pvnet_vif_backend_state(vif), XenbusStateUnknown);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * A backend already Closed (or Closing) that never offers InitWait: the
 * create gives up with -ENOTCONN, not -ETIMEDOUT (it is gone, not slow).
 */
static void test_backend_closed_before_connect(void **state)
{
	struct fake_be_opts opts = {.no_initwait = true};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 41, &opts);
	fb_set_state(&c.fb, XenbusStateClosed);
	c.cfg.timeout_ms = 200;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ENOTCONN);
	assert_null(vif);
	assert_null(pvnet_domain_vif_error(c.dom));
	/* A reason in its "error" key is the domain's to read. */
	set_be_error(&c, "guest requested 99 queues, exceeding the maximum of 8");
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ENOTCONN);
	assert_string_equal(pvnet_domain_vif_error(c.dom),
			    "guest requested 99 queues, exceeding the maximum of 8");
	ctx_fini(&c);
}

/* The toolstack's keys are checked: a reserved backend-id, a relative backend path, none. */
static void test_device_keys_checked(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	char path[160];
	struct ctx c;

	(void)state;
	ctx_init(&c, 42, &opts);
	/* No backend answers: a create that got past the keys would wait for InitWait. */
	fb_stop(&c.fb);
	fb_set_state(&c.fb, XenbusStateInitialising);
	c.cfg.timeout_ms = 300;
	snprintf(path, sizeof(path), "%s/backend-id", c.fb.fe);
	assert_true(xs_write(H.dom0, XBT_NULL, path, "32752", 5)); /* DOMID_FIRST_RESERVED */
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -EINVAL);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ENODEV);
	assert_true(xs_write(H.dom0, XBT_NULL, path, "0", 1));
	snprintf(path, sizeof(path), "%s/backend", c.fb.fe);
	assert_true(xs_write(H.dom0, XBT_NULL, path, "local/domain/0", 14));
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -EPROTO);
	fb_start(&c.fb);
	ctx_fini(&c);
}

/* Write (or, @v NULL, remove) the key @key of the backend's directory, as a toolstack would. */
static void be_key(struct ctx *c, const char *key, const char *v)
{
	char path[200];

	snprintf(path, sizeof(path), "%s/%s", c->fb.be, key);
	if (v)
		assert_true(xs_write(H.dom0, XBT_NULL, path, v, strlen(v)));
	else
		assert_true(xs_rm(H.dom0, XBT_NULL, path));
}

/*
 * A reconnect to a backend that offers less than before takes back the
 * keys of what is no longer used (num-queues, persistent grants, the
 * multicast and control-ring requests); one that offers queues again
 * takes back the single queue's top-level keys.
 */
static void test_reconnect_removes_stale_keys(void **state)
{
	struct fake_be_opts opts = {.max_queues = 2, .mcast = true, .persistent_max = 4352};
	struct pvnet_vif *vif;
	const char *fe;
	struct ctx c;

	(void)state;
	ctx_init(&c, 44, &opts);
	be_key(&c, "feature-ctrl-ring", "1");
	fe = c.fb.fe;
	c.cfg.queues = 2;
	c.cfg.ctrl_ring = true;
	c.cfg.features |= PVNET_F_MCAST_FILTER;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_int_equal(pvnet_vif_queues(vif), 2);
	assert_int_equal(h_read_int(&H, "%s/multi-queue-num-queues", fe), 2);
	assert_int_equal(h_read_int(&H, "%s/feature-persistent", fe), 1);
	assert_true(h_exists(&H, "%s/persistent-grants", fe));
	assert_int_equal(h_read_int(&H, "%s/request-multicast-control", fe), 1);
	assert_true(h_exists(&H, "%s/ctrl-ring-ref", fe));
	assert_true(h_exists(&H, "%s/event-channel-ctrl", fe));

	be_key(&c, "multi-queue-max-queues", NULL);
	be_key(&c, "feature-persistent", NULL);
	be_key(&c, "feature-multicast-control", NULL);
	be_key(&c, "feature-ctrl-ring", NULL);
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	assert_int_equal(pvnet_vif_queues(vif), 1);
	assert_false(pvnet_vif_features(vif) & (PVNET_F_PERSISTENT | PVNET_F_MCAST_FILTER));
	assert_false(pvnet_vif_has_ctrl_ring(vif));
	assert_true(h_exists(&H, "%s/tx-ring-ref", fe));
	assert_false(h_exists(&H, "%s/multi-queue-num-queues", fe));
	assert_false(h_exists(&H, "%s/feature-persistent", fe));
	assert_false(h_exists(&H, "%s/persistent-grants", fe));
	assert_false(h_exists(&H, "%s/request-multicast-control", fe));
	assert_false(h_exists(&H, "%s/ctrl-ring-ref", fe));
	assert_false(h_exists(&H, "%s/event-channel-ctrl", fe));

	be_key(&c, "multi-queue-max-queues", "2");
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	assert_int_equal(pvnet_vif_queues(vif), 2);
	assert_int_equal(h_read_int(&H, "%s/multi-queue-num-queues", fe), 2);
	assert_true(h_exists(&H, "%s/queue-1/tx-ring-ref", fe));
	assert_false(h_exists(&H, "%s/tx-ring-ref", fe));
	assert_false(h_exists(&H, "%s/event-channel", fe));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/* More queues asked for than a backend without multi-queue support has: one. */
static void test_queues_without_multi_queue(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 45, &opts);
	c.cfg.queues = 4;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_int_equal(pvnet_vif_queues(vif), 1);
	assert_true(h_exists(&H, "%s/tx-ring-ref", c.fb.fe));
	assert_false(h_exists(&H, "%s/multi-queue-num-queues", c.fb.fe));
	assert_true(pvnet_queue_fd(vif, 0) >= 0);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * What we can receive is ours to say: our feature keys follow our config,
 * not what the backend offers for our sends (a backend without
 * feature-sg still learns we take scatter-gather and GSO).
 */
static void test_our_features_whatever_offered(void **state)
{
	struct fake_be_opts opts = {.no_sg = true};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 46, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_false(pvnet_vif_features(vif) & (PVNET_F_SG | PVNET_F_GSO_TCPV4));
	assert_int_equal(h_read_int(&H, "%s/feature-sg", c.fb.fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-gso-tcpv4", c.fb.fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-gso-tcpv6", c.fb.fe), 1);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/* A backend whose link is down before we connect: read at connect, before any event. */
static void test_carrier_down_at_first_connect(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 47, &opts);
	set_carrier(&c, "0");
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_false(pvnet_vif_carrier(vif));
	set_carrier(&c, "1");
	assert_true(carrier_until(vif, true));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * The backend's directory gone (state node absent: Unknown) closes a
 * connected vif, its carrier with it, and is no news to one that is not
 * connected (here Initialising, after a reconnect the backend never
 * answered).
 */
static void test_backend_gone(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	char path[160];
	struct ctx c;

	(void)state;
	ctx_init(&c, 48, &opts);
	c.cfg.timeout_ms = 300;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_true(pvnet_vif_carrier(vif));
	snprintf(path, sizeof(path), "%s/state", c.fb.be);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_false(pvnet_vif_carrier(vif));

	fb_stop(&c.fb);
	fb_set_state(&c.fb, XenbusStateInitialising);
	assert_int_equal(pvnet_vif_reconnect(vif), -ETIMEDOUT);
	assert_int_equal(pvnet_vif_state(vif), XenbusStateInitialising);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(process_until_be(vif, XenbusStateUnknown), XenbusStateInitialising);
	assert_int_equal(pvnet_vif_state(vif), XenbusStateInitialising);
	assert_int_equal(h_read_int(&H, "%s/state", c.fb.fe), XenbusStateInitialising);
	fb_start(&c.fb);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * A backend that closes a connected vif says why in its "error" key: the
 * vif reads it once it sees the close, with its control characters (a
 * terminal's escape among them) made '?', and forgets it when it connects
 * again.  A close without the key has no reason.
 */
static void test_backend_error_after_connect(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	char path[160], long_why[400];
	struct ctx c;

	(void)state;
	ctx_init(&c, 50, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_null(pvnet_vif_backend_error(vif));
	set_be_error(&c, "tx: slot crosses its page (slot 6)\x1b[2J\n");
	fb_set_state(&c.fb, XenbusStateClosing);
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_non_null(pvnet_vif_backend_error(vif));
	assert_string_equal(pvnet_vif_backend_error(vif),
			    "tx: slot crosses its page (slot 6)?[2J?");
	assert_null(pvnet_vif_error(vif)); /* the backend's word, not a protocol break */

	/* Connected again: no reason.  Then closed without one: none either. */
	snprintf(path, sizeof(path), "%s/error", c.fb.be);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	assert_null(pvnet_vif_backend_error(vif));
	fb_set_state(&c.fb, XenbusStateClosing);
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_null(pvnet_vif_backend_error(vif));

	/* A reason longer than the vif keeps: its first 255 bytes. */
	memset(long_why, 'x', sizeof(long_why) - 1);
	long_why[sizeof(long_why) - 1] = '\0';
	set_be_error(&c, long_why);
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	fb_set_state(&c.fb, XenbusStateClosing);
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_non_null(pvnet_vif_backend_error(vif));
	assert_int_equal(strlen(pvnet_vif_backend_error(vif)), 255);
	assert_int_equal(strspn(pvnet_vif_backend_error(vif), "x"), 255);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * A backend that refuses the connection (Closing where Connected was
 * awaited) fails pvnet_vif_create() with -ENOTCONN, and its reason is the
 * domain's until the next create; a create that fails before the backend
 * speaks has none.
 */
static void test_backend_error_at_create(void **state)
{
	struct fake_be_opts opts = {.close_on_connect = true};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 51, &opts);
	c.cfg.timeout_ms = 1000;
	set_be_error(&c, "starting worker 4: Resource temporarily unavailable");
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ENOTCONN);
	assert_null(vif);
	assert_non_null(pvnet_domain_vif_error(c.dom));
	assert_string_equal(pvnet_domain_vif_error(c.dom),
			    "starting worker 4: Resource temporarily unavailable");
	c.cfg.queues = PVNET_MAX_QUEUES + 1;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -EINVAL);
	assert_null(pvnet_domain_vif_error(c.dom));
	ctx_fini(&c);
}

/*
 * The toolstack takes the device away (the backend's state gone, the
 * frontend's directory no longer the guest's to write): the vif is Closed
 * even though it cannot write its own state key any more.
 */
static void test_device_removed(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	char path[160];
	struct ctx c;

	(void)state;
	ctx_init(&c, 49, &opts);
	c.cfg.timeout_ms = 300;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	fb_stop(&c.fb);
	assert_true(xs_rm(H.dom0, XBT_NULL, c.fb.fe));
	/* the directory back, but dom0's alone: the guest may not write under it */
	assert_true(xs_mkdir(H.dom0, XBT_NULL, c.fb.fe));
	assert_true(xs_set_permissions(H.dom0, XBT_NULL, c.fb.fe,
				       &(struct xs_permissions){.id = 0, .perms = XS_PERM_NONE},
				       1));
	snprintf(path, sizeof(path), "%s/state", c.fb.be);
	assert_true(xs_rm(H.dom0, XBT_NULL, path));
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_int_equal(pvnet_vif_state(vif), XenbusStateClosed);
	assert_false(h_exists(&H, "%s/state", c.fb.fe));
	fb_start(&c.fb);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_bounds),
	    cmocka_unit_test(test_backend_states),
	    cmocka_unit_test(test_backend_closed_before_connect),
	    cmocka_unit_test(test_device_keys_checked),
	    cmocka_unit_test(test_reconnect_removes_stale_keys),
	    cmocka_unit_test(test_queues_without_multi_queue),
	    cmocka_unit_test(test_our_features_whatever_offered),
	    cmocka_unit_test(test_carrier_down_at_first_connect),
	    cmocka_unit_test(test_backend_gone),
	    cmocka_unit_test(test_device_removed),
	    cmocka_unit_test(test_backend_error_after_connect),
	    cmocka_unit_test(test_backend_error_at_create),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
