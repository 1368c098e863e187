// SPDX-License-Identifier: MIT
/* test_vif.c - netfront's xenbus side against a real pvnetd: keys, states, close, reconnect */
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

static void test_connect_single_queue(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	uint8_t mac[6];
	struct ctx c;
	bool ro = true;
	const char *fe;

	ctx_init(&c, 0, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	fe = c.fb.fe;
	assert_string_equal(pvnet_vif_frontend_path(vif), fe);
	assert_string_equal(pvnet_vif_backend_path(vif), c.fb.be);
	assert_int_equal(pvnet_vif_state(vif), XenbusStateConnected);
	assert_int_equal(pvnet_vif_backend_state(vif), XenbusStateConnected);
	assert_int_equal(h_read_int(&H, "%s/state", fe), XenbusStateConnected);
	assert_int_equal(pvnet_vif_queues(vif), 1);
	/* Backend offers sg, gso v4/v6, ipv6 csum; no split channels, no persistent grants. */
	assert_int_equal(pvnet_vif_features(vif),
			 PVNET_F_ALL & ~(PVNET_F_SPLIT_EVTCHN | PVNET_F_PERSISTENT));
	assert_false(h_exists(&H, "%s/feature-persistent", c.fb.fe));
	assert_false(h_exists(&H, "%s/persistent-grants", c.fb.fe));
	pvnet_vif_mac(vif, mac);
	assert_int_equal(mac[0], 0x00);
	assert_int_equal(mac[2], 0x3e);
	assert_int_equal(mac[4], pvnet_domain_id(c.dom) & 0xff);

	/* One queue: keys at the top level, no num-queues (backend did not advertise). */
	assert_true(h_exists(&H, "%s/tx-ring-ref", fe));
	assert_true(h_exists(&H, "%s/rx-ring-ref", fe));
	assert_true(h_exists(&H, "%s/event-channel", fe));
	assert_false(h_exists(&H, "%s/event-channel-tx", fe));
	assert_false(h_exists(&H, "%s/multi-queue-num-queues", fe));
	assert_false(h_exists(&H, "%s/queue-0", fe));
	assert_int_equal(h_read_int(&H, "%s/request-rx-copy", fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-rx-notify", fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-sg", fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-gso-tcpv4", fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-gso-tcpv6", fe), 1);
	assert_int_equal(h_read_int(&H, "%s/feature-ipv6-csum-offload", fe), 1);
	assert_false(h_exists(&H, "%s/feature-no-csum-offload", fe));

	/* The ring refs name writable grants to domain 0 of freshly initialised rings. */
	int ref = h_read_int(&H, "%s/tx-ring-ref", fe);
	netif_tx_sring_t *txs = h_grant_page(c.dom, (uint32_t)ref, &ro);

	assert_non_null(txs);
	assert_false(ro);
	assert_int_equal(txs->req_prod, 0);
	assert_int_equal(txs->rsp_event, 1);
	ref = h_read_int(&H, "%s/rx-ring-ref", fe);
	netif_rx_sring_t *rxs = h_grant_page(c.dom, (uint32_t)ref, &ro);

	assert_non_null(rxs);
	/* RX buffers were posted at connect: all 64, pushed at once. */
	assert_int_equal(rxs->req_prod, 64);
	assert_true(pvnet_queue_fd(vif, 0) >= 0);
	assert_int_equal(pvnet_queue_fd(vif, 1), -EINVAL);

	pvnet_vif_destroy(vif);
	/* Through Closing (the backend disconnects there) to Closed, as Linux netfront. */
	assert_int_equal(atomic_load(&c.fb.closings), 1);
	assert_int_equal(h_read_int(&H, "%s/state", fe), XenbusStateClosed);
	assert_int_equal(h_read_int(&H, "%s/state", c.fb.be), XenbusStateClosed);
	assert_int_equal(pvnet_domain_abandoned_pages(c.dom), 0);
	ctx_fini(&c);
}

static void test_multi_queue_split(void **state)
{
	struct fake_be_opts opts = {.split = true, .max_queues = 4};
	struct pvnet_vif *vif;
	struct ctx c;
	const char *fe;

	ctx_init(&c, 1, &opts);
	c.cfg.queues = 8;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	fe = c.fb.fe;
	assert_int_equal(pvnet_vif_queues(vif), 4);
	assert_true(pvnet_vif_features(vif) & PVNET_F_SPLIT_EVTCHN);
	assert_int_equal(h_read_int(&H, "%s/multi-queue-num-queues", fe), 4);
	for (int i = 0; i < 4; i++) {
		assert_true(h_exists(&H, "%s/queue-%d/tx-ring-ref", fe, i));
		assert_true(h_exists(&H, "%s/queue-%d/rx-ring-ref", fe, i));
		assert_true(h_exists(&H, "%s/queue-%d/event-channel-tx", fe, i));
		assert_true(h_exists(&H, "%s/queue-%d/event-channel-rx", fe, i));
		assert_false(h_exists(&H, "%s/queue-%d/event-channel", fe, i));
		assert_int_not_equal(h_read_int(&H, "%s/queue-%d/event-channel-tx", fe, i),
				     h_read_int(&H, "%s/queue-%d/event-channel-rx", fe, i));
		assert_true(pvnet_queue_fd(vif, (unsigned int)i) >= 0);
	}
	assert_false(h_exists(&H, "%s/queue-4", fe));
	assert_false(h_exists(&H, "%s/tx-ring-ref", fe));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

static void test_features_not_wanted(void **state)
{
	struct fake_be_opts opts = {.max_queues = 2};
	struct pvnet_vif *vif;
	struct ctx c;

	ctx_init(&c, 2, &opts);
	c.cfg.features = PVNET_F_RX_NOTIFY; /* no sg, no gso, no checksum offload */
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_int_equal(pvnet_vif_features(vif), PVNET_F_RX_NOTIFY);
	/* Backend advertised max-queues: num-queues is written even for one queue. */
	assert_int_equal(h_read_int(&H, "%s/multi-queue-num-queues", c.fb.fe), 1);
	assert_true(h_exists(&H, "%s/tx-ring-ref", c.fb.fe));
	assert_false(h_exists(&H, "%s/feature-sg", c.fb.fe));
	assert_int_equal(h_read_int(&H, "%s/feature-no-csum-offload", c.fb.fe), 1);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/*
 * feature-persistent: accepted, with the pool size, when the pool fits the
 * backend's bound; not accepted when it does not, or when not wanted.
 */
static void test_persistent_negotiation(void **state)
{
	struct fake_be_opts fits = {.persistent_max = 4352}, small = {.persistent_max = 90};
	struct pvnet_vif *vif;
	struct ctx c;

	ctx_init(&c, 9, &fits);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_true(pvnet_vif_features(vif) & PVNET_F_PERSISTENT);
	assert_int_equal(h_read_int(&H, "%s/feature-persistent", c.fb.fe), 1);
	assert_int_equal(h_read_int(&H, "%s/persistent-grants", c.fb.fe),
			 (int)(c.cfg.tx_buffers + c.cfg.rx_buffers));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);

	/* A bound the pool meets exactly is a fit. */
	fits.persistent_max = c.cfg.tx_buffers + c.cfg.rx_buffers;
	ctx_init(&c, 17, &fits);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_true(pvnet_vif_features(vif) & PVNET_F_PERSISTENT);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);

	ctx_init(&c, 10, &small);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_false(pvnet_vif_features(vif) & PVNET_F_PERSISTENT);
	assert_false(h_exists(&H, "%s/feature-persistent", c.fb.fe));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);

	ctx_init(&c, 11, &fits);
	c.cfg.features = PVNET_F_ALL & ~PVNET_F_PERSISTENT;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_false(pvnet_vif_features(vif) & PVNET_F_PERSISTENT);
	assert_false(h_exists(&H, "%s/feature-persistent", c.fb.fe));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

static void test_backend_without_rx_copy(void **state)
{
	struct fake_be_opts opts = {.no_rx_copy = true};
	struct pvnet_vif *vif = (void *)1;
	struct ctx c;

	ctx_init(&c, 3, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -EOPNOTSUPP);
	assert_null(vif);
	ctx_fini(&c);
}

static void test_backend_silent(void **state)
{
	struct fake_be_opts opts = {.no_initwait = true};
	struct fake_be_opts opts2 = {.no_connect = true};
	struct pvnet_vif *vif;
	struct ctx c;

	ctx_init(&c, 4, &opts);
	c.cfg.timeout_ms = 200;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ETIMEDOUT);
	ctx_fini(&c);

	/* InitWait but never Connected: everything granted is given back. */
	ctx_init(&c, 5, &opts2);
	c.cfg.timeout_ms = 200;
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ETIMEDOUT);
	assert_int_equal(pvnet_domain_abandoned_pages(c.dom), 0);
	ctx_fini(&c);
}

static void test_no_device(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_vif_config cfg;
	struct pvnet_vif *vif;

	assert_int_equal(pvnet_domain_create(H.run_dir, 1024, &dom), 0);
	pvnet_vif_config_default(&cfg);
	cfg.prepared = true;
	cfg.devid = 42;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -ENODEV);
	cfg.queues = 0;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.queues = 1;
	cfg.tx_buffers = PVNET_RING_SIZE + 1;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.tx_buffers = PVNET_RING_SIZE;
	cfg.rx_buffers = 4;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	/* Fewer than a largest frame's 19 RX buffers would never be pushed (RX_PUSH_MIN). */
	cfg.rx_buffers = PVNET_MAX_FRAGS;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	cfg.rx_buffers = PVNET_MAX_FRAGS + 1;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -ENODEV);
	pvnet_vif_config_default(&cfg);
	cfg.prepared = true;
	cfg.features = 1u << 20;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), -EINVAL);
	pvnet_domain_destroy(dom);
}

static void test_backend_closes_then_reconnect(void **state)
{
	static uint8_t out[PVNET_MAX_FRAME];
	struct fake_be_opts opts = {0};
	struct pvnet_pkt pkt = {0}, rx;
	struct pvnet_vif *vif;
	char frame[60] = {0};
	struct ctx c;

	ctx_init(&c, 6, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	pkt.data = frame;
	pkt.len = sizeof(frame);
	assert_int_equal(pvnet_send(vif, 0, &pkt, 1), 1);
	/* Idle, its events armed: nothing makes the queue's fd readable. */
	assert_int_equal(pvnet_recv(vif, 0, &rx, 1, out, sizeof(out)), 0);
	assert_int_equal(h_queue_readable(vif, 0), 0);

	/* The backend goes away on its own (toolstack detach): we answer Closed. */
	fb_set_state(&c.fb, XenbusStateClosing);
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	/* A thread asleep on the queue wakes to learn it. */
	assert_int_equal(h_queue_readable(vif, 0), 1);
	assert_int_equal(pvnet_send(vif, 0, &pkt, 1), -ENOTCONN);
	assert_null(pvnet_vif_error(vif));

	/* Reconnect: Initialising again, the backend goes InitWait, then Connected. */
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	assert_int_equal(pvnet_vif_state(vif), XenbusStateConnected);
	assert_int_equal(atomic_load(&c.fb.connects), 2);
	assert_int_equal(pvnet_send(vif, 0, &pkt, 1), 1);
	pvnet_vif_destroy(vif);
	assert_int_equal(pvnet_domain_abandoned_pages(c.dom), 0);
	ctx_fini(&c);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GSO offered without scatter-gather: a GSO frame is larger than a page, so no GSO either. */
static void test_gso_needs_sg(void **state)
{
	struct fake_be_opts opts = {.no_sg = true};
	static uint8_t frame[1000];
	struct pvnet_pkt pkt = {.data = frame,
				.len = sizeof(frame),
				.flags = PVNET_PKT_CSUM_BLANK,
				.gso_type = PVNET_GSO_TCPV4,
				.gso_size = 500};
	struct pvnet_vif *vif;
	struct ctx c;

	ctx_init(&c, 15, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_int_equal(
	    pvnet_vif_features(vif) & (PVNET_F_SG | PVNET_F_GSO_TCPV4 | PVNET_F_GSO_TCPV6), 0);
	assert_int_equal(pvnet_send(vif, 0, &pkt, 1), -EOPNOTSUPP);
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

/* A backend that answers our Connected with Closing: refused at once, not at the timeout. */
static void test_backend_refuses_connect(void **state)
{
	struct fake_be_opts opts = {.close_on_connect = true};
	struct pvnet_vif *vif;
	struct ctx c;
	double t;

	ctx_init(&c, 16, &opts);
	c.cfg.timeout_ms = 3000;
	t = now_s();
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), -ENOTCONN);
	assert_true(now_s() - t < 2.0);
	assert_null(vif);
	assert_int_equal(h_read_int(&H, "%s/state", c.fb.fe), XenbusStateClosed);
	assert_int_equal(pvnet_domain_abandoned_pages(c.dom), 0);
	ctx_fini(&c);
}

/*
 * pvnetd stopped (SIGSTOP: alive, not answering): a control request gives
 * up after its timeout instead of waiting for ever, and the requests after
 * it fail at once (a late answer would be taken for theirs), so a guest
 * shutting down is never hung by its pvnetd.
 */
static void test_pvnetd_not_answering(void **state)
{
	struct pvnet_vif_config cfg;
	struct pvnet_domain *a, *b;
	struct pvnet_vif *vif = NULL;
	struct pvnet_evtchn ch;
	double t;

	(void)state;
	assert_int_equal(pvnet_domain_create(H.run_dir, 256, &a), 0);
	pvnet_vif_config_default(&cfg);
	cfg.devid = 7;
	cfg.timeout_ms = 300;
	assert_int_equal(kill(H.pvnetd, SIGSTOP), 0);
	t = now_s();
	assert_int_equal(pvnet_vif_create(a, &cfg, &vif), -ETIMEDOUT);
	assert_true(now_s() - t < 3.0);
	assert_null(vif);
	t = now_s();
	assert_int_equal(pvnet_domain_set_name(a, "late"), -EPIPE);
	assert_int_equal(pvnet_evtchn_alloc(a, 0, &ch), -EPIPE);
	assert_true(now_s() - t < 0.5);
	assert_int_equal(kill(H.pvnetd, SIGCONT), 0);
	pvnet_domain_destroy(a);

	/* pvnetd carries on: the next domain is served, the old one is gone. */
	assert_int_equal(pvnet_domain_create(H.run_dir, 256, &b), 0);
	assert_int_equal(pvnet_domain_set_name(b, "late"), 0);
	pvnet_domain_destroy(b);
}

/*
 * A domain's name, as a toolstack gives it: pvnetd writes it to the store,
 * the guest can read it and not change it, and no two domains share one.
 */
static void test_domain_name(void **state)
{
	struct pvnet_domain *a, *b;
	struct front_xs *xs;
	char path[64], buf[160], longest[130];
	char *v;

	(void)state;
	assert_int_equal(pvnet_domain_create(H.run_dir, 64, &a), 0);
	assert_int_equal(pvnet_domain_create(H.run_dir, 64, &b), 0);
	assert_int_equal(pvnet_domain_set_name(a, "ns-a:eth0"), 0);
	/* Its own name again: no clash with itself. */
	assert_int_equal(pvnet_domain_set_name(a, "ns-a:eth0"), 0);
	v = h_read(&H, "/local/domain/%u/name", pvnet_domain_id(a));
	assert_non_null(v);
	assert_string_equal(v, "ns-a:eth0");
	free(v);

	/* Taken, or not a name: refused, and nothing written. */
	assert_int_equal(pvnet_domain_set_name(b, "ns-a:eth0"), -EEXIST);
	assert_int_equal(pvnet_domain_set_name(b, ""), -EINVAL);
	assert_int_equal(pvnet_domain_set_name(b, "a b"), -EINVAL);
	assert_int_equal(pvnet_domain_set_name(b, "a/b"), -EINVAL);
	assert_int_equal(pvnet_domain_set_name(b, "caf\xc3\xa9"), -EINVAL);
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_int_equal(pvnet_domain_set_name(b, longest), -EINVAL); /* 129 */
	assert_false(h_exists(&H, "/local/domain/%u/name", pvnet_domain_id(b)));
	longest[128] = '\0';
	assert_int_equal(pvnet_domain_set_name(b, longest), 0);

	/* The guest reads its name through its own store connection, and may not change it. */
	assert_int_equal(front_xs_open(pvnet_domain_store_path(a), 2000, &xs), 0);
	snprintf(path, sizeof(path), "/local/domain/%u/name", pvnet_domain_id(a));
	assert_int_equal(front_xs_read(xs, FRONT_XS_NO_TXN, path, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "ns-a:eth0");
	assert_int_equal(front_xs_write(xs, FRONT_XS_NO_TXN, path, "evil"), -EACCES);
	assert_int_equal(front_xs_rm(xs, FRONT_XS_NO_TXN, path), -EACCES);
	front_xs_close(xs);

	/* Renaming frees the old name; so does the end of the domain. */
	assert_int_equal(pvnet_domain_set_name(a, "ns-a:eth1"), 0);
	assert_int_equal(pvnet_domain_set_name(b, "ns-a:eth0"), 0);
	pvnet_domain_destroy(a);
	assert_int_equal(pvnet_domain_create(H.run_dir, 64, &a), 0);
	assert_int_equal(pvnet_domain_set_name(a, "ns-a:eth1"), 0);
	pvnet_domain_destroy(a);
	pvnet_domain_destroy(b);
}

/*
 * netif.h's link state: "0" is no carrier, "1" carrier, and a backend that
 * writes nothing (this fake) or something unreadable leaves the link up.
 */
static void test_backend_carrier(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	struct ctx c;

	(void)state;
	ctx_init(&c, 12, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	assert_true(pvnet_vif_carrier(vif));
	set_carrier(&c, "0");
	assert_true(carrier_until(vif, false));
	set_carrier(&c, "1");
	assert_true(carrier_until(vif, true));
	set_carrier(&c, "0");
	assert_true(carrier_until(vif, false));
	set_carrier(&c, NULL);
	assert_true(carrier_until(vif, true));
	set_carrier(&c, "0");
	assert_true(carrier_until(vif, false));
	set_carrier(&c, "up");
	assert_true(carrier_until(vif, true));

	/* Down at connect: read then, before any event is processed. */
	set_carrier(&c, "0");
	fb_set_state(&c.fb, XenbusStateClosing);
	assert_int_equal(process_until(vif, XenbusStateClosed), XenbusStateClosed);
	assert_false(pvnet_vif_carrier(vif)); /* not connected */
	assert_int_equal(pvnet_vif_reconnect(vif), 0);
	assert_false(pvnet_vif_carrier(vif));
	set_carrier(&c, "1");
	assert_true(carrier_until(vif, true));
	pvnet_vif_destroy(vif);
	ctx_fini(&c);
}

static void test_grant_in_use_is_abandoned(void **state)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif *vif;
	struct hv_gntshr *gs;
	struct ctx c;
	int ref;

	ctx_init(&c, 7, &opts);
	assert_int_equal(pvnet_vif_create(c.dom, &c.cfg, &vif), 0);
	/* Pretend the backend still maps the TX ring (hv sets GTF_reading while mapped). */
	ref = h_read_int(&H, "%s/tx-ring-ref", c.fb.fe);
	gs = front_domain_gntshr(c.dom);
	__atomic_or_fetch(&gs->table[ref].flags, GTF_reading, __ATOMIC_SEQ_CST);
	pvnet_vif_destroy(vif);
	assert_int_equal(pvnet_domain_abandoned_pages(c.dom), 1);
	assert_int_equal(hv_gntshr_deferred_count(gs), 1);
	/* The backend lets go: the ref is released, the page stays out of circulation. */
	__atomic_and_fetch(&gs->table[ref].flags, (uint16_t)~GTF_reading, __ATOMIC_SEQ_CST);
	assert_int_equal(hv_gntshr_deferred_poll(gs), 1);
	ctx_fini(&c);
}

/* Descriptors open in this process. */
static unsigned int open_fds(void)
{
	unsigned int n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * The domain's resources: the largest memory there is, grant references
 * that come back when ended, event channels that leave no descriptor, and
 * pages that are zero whenever they are granted and not lost when a grant
 * fails.
 */
static void test_domain_resources(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_evtchn ch;
	uint32_t ref, last = 0, frame, f2;
	grant_ref_t gref, g2;
	unsigned int fds;
	uint8_t *page;
	int rc;

	assert_int_equal(pvnet_domain_create(H.run_dir, 1u << 18, &dom), 0); /* 1 GiB */
	pvnet_domain_destroy(dom);
	assert_int_equal(pvnet_domain_create(H.run_dir, (1u << 18) + 1, &dom), -EINVAL);

	assert_int_equal(pvnet_domain_create(H.run_dir, 16, &dom), 0);
	/* Many more grants than the table holds, one at a time. */
	for (unsigned int i = 0; i < 40000; i++) {
		assert_int_equal(pvnet_grant_access(dom, 0, 1, true, &ref), 0);
		assert_int_equal(pvnet_grant_end(dom, ref), 0);
	}
	fds = open_fds();
	assert_int_equal(pvnet_evtchn_alloc(dom, 0, &ch), 0);
	assert_int_equal(pvnet_evtchn_close(dom, &ch), 0);
	assert_int_equal(open_fds(), fds);

	/* A page granted again after use is zero again. */
	assert_int_equal(front_domain_grant_page(dom, 0, false, &frame, &gref), 0);
	assert_int_equal(frame, 15); /* from the top */
	page = pvnet_domain_page(dom, frame);
	memset(page, 0xab, PVNET_PAGE_SIZE);
	front_domain_ungrant_page(dom, frame, gref);
	assert_int_equal(front_domain_grant_page(dom, 0, false, &f2, &gref), 0);
	assert_int_equal(f2, frame);
	for (unsigned int i = 0; i < PVNET_PAGE_SIZE; i++)
		assert_int_equal(page[i], 0);
	front_domain_ungrant_page(dom, frame, gref);

	/* No grant reference left: the page is given back, not lost. */
	while ((rc = pvnet_grant_access(dom, 0, 1, true, &ref)) == 0)
		last = ref;
	assert_int_equal(rc, -ENOSPC);
	assert_int_equal(front_domain_grant_page(dom, 0, false, &f2, &g2), -ENOSPC);
	assert_int_equal(pvnet_grant_end(dom, last), 0);
	assert_int_equal(front_domain_grant_page(dom, 0, false, &f2, &g2), 0);
	assert_int_equal(f2, 15);
	assert_int_equal(pvnet_domain_abandoned_pages(dom), 0);
	pvnet_domain_destroy(dom);
}

/* The store client against pvnetd's real store, as the guest. */
static void test_store_client(void **state)
{
	struct front_xs *a, *b;
	struct pvnet_domain *dom;
	char home[64], path[96], path2[96], buf[64];
	unsigned int count;
	uint32_t ta, tb;

	assert_int_equal(pvnet_domain_create(H.run_dir, 64, &dom), 0);
	snprintf(home, sizeof(home), "/local/domain/%u", pvnet_domain_id(dom));
	assert_int_equal(front_xs_open(pvnet_domain_store_path(dom), 2000, &a), 0);
	assert_int_equal(front_xs_open(pvnet_domain_store_path(dom), 2000, &b), 0);
	snprintf(path, sizeof(path), "%s/t/dir", home);
	assert_int_equal(front_xs_mkdir(a, FRONT_XS_NO_TXN, path), 0);
	snprintf(path, sizeof(path), "%s/t/k", home);
	assert_int_equal(front_xs_write(a, FRONT_XS_NO_TXN, path, "v1"), 0);
	assert_int_equal(front_xs_read(b, FRONT_XS_NO_TXN, path, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "v1");
	snprintf(path, sizeof(path), "%s/t", home);
	assert_int_equal(front_xs_directory(a, FRONT_XS_NO_TXN, path, buf, sizeof(buf), &count), 0);
	assert_int_equal(count, 2);
	/* A watch fires once on registration, then on a change by someone else. */
	snprintf(path, sizeof(path), "%s/t/k", home);
	assert_int_equal(front_xs_watch(a, path, "w"), 0);
	assert_int_equal(front_xs_wait_event(a, "w", 2000), 0);
	assert_int_equal(front_xs_write(b, FRONT_XS_NO_TXN, path, "v2"), 0);
	assert_int_equal(front_xs_wait_event(a, "w", 2000), 0);
	assert_int_equal(front_xs_wait_event(a, "w", 50), -ETIMEDOUT);
	assert_int_equal(front_xs_unwatch(a, path, "w"), 0);
	/*
	 * Events coalesce per token: 40 changes of one key are one event, and
	 * they never crowd out another watch's (with a queue of 16, they did).
	 */
	snprintf(path2, sizeof(path2), "%s/t/dir", home);
	assert_int_equal(front_xs_watch(a, path, "w1"), 0);
	assert_int_equal(front_xs_watch(a, path2, "w2"), 0);
	assert_int_equal(front_xs_wait_event(a, "w1", 2000), 0);
	assert_int_equal(front_xs_wait_event(a, "w2", 2000), 0);
	for (int i = 0; i < 40; i++)
		assert_int_equal(front_xs_printf(b, FRONT_XS_NO_TXN, path, "v%d", i), 0);
	assert_int_equal(front_xs_write(b, FRONT_XS_NO_TXN, path2, "d"), 0);
	/* A round trip of a's own: every event queued before its reply has been read. */
	assert_int_equal(front_xs_read(a, FRONT_XS_NO_TXN, path2, buf, sizeof(buf)), 1);
	assert_true(front_xs_take_event(a, "w1"));
	assert_false(front_xs_take_event(a, "w1"));
	assert_true(front_xs_take_event(a, "w2"));
	assert_false(front_xs_take_event(a, "w2"));
	assert_int_equal(front_xs_unwatch(a, path, "w1"), 0);
	assert_int_equal(front_xs_unwatch(a, path2, "w2"), 0);
	assert_int_equal(front_xs_write(b, FRONT_XS_NO_TXN, path, "v1"), 0);
	/* Two transactions racing on one key: the second commit must retry. */
	assert_int_equal(front_xs_txn_start(a, &ta), 0);
	assert_int_equal(front_xs_txn_start(b, &tb), 0);
	assert_int_equal(front_xs_read(a, ta, path, buf, sizeof(buf)), 2);
	assert_int_equal(front_xs_read(b, tb, path, buf, sizeof(buf)), 2);
	assert_int_equal(front_xs_write(a, ta, path, "a"), 0);
	assert_int_equal(front_xs_write(b, tb, path, "b"), 0);
	assert_int_equal(front_xs_txn_end(a, ta, true), 0);
	assert_int_equal(front_xs_txn_end(b, tb, true), -EAGAIN);
	assert_int_equal(front_xs_read(b, FRONT_XS_NO_TXN, path, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "a");
	/* The guest may not read dom0's nodes. */
	assert_int_equal(
	    front_xs_read(a, FRONT_XS_NO_TXN, "/local/domain/0/x", buf, sizeof(buf)) < 0, 1);
	snprintf(path, sizeof(path), "%s/t", home);
	assert_int_equal(front_xs_rm(a, FRONT_XS_NO_TXN, path), 0);
	assert_int_equal(front_xs_read(a, FRONT_XS_NO_TXN, path, buf, sizeof(buf)), -ENOENT);
	front_xs_close(a);
	front_xs_close(b);
	pvnet_domain_destroy(dom);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_client),
	    cmocka_unit_test(test_connect_single_queue),
	    cmocka_unit_test(test_multi_queue_split),
	    cmocka_unit_test(test_features_not_wanted),
	    cmocka_unit_test(test_persistent_negotiation),
	    cmocka_unit_test(test_backend_without_rx_copy),
	    cmocka_unit_test(test_backend_silent),
	    cmocka_unit_test(test_no_device),
	    cmocka_unit_test(test_backend_closes_then_reconnect),
	    cmocka_unit_test(test_gso_needs_sg),
	    cmocka_unit_test(test_backend_refuses_connect),
	    cmocka_unit_test(test_backend_carrier),
	    cmocka_unit_test(test_domain_name),
	    cmocka_unit_test(test_pvnetd_not_answering),
	    cmocka_unit_test(test_grant_in_use_is_abandoned),
	    cmocka_unit_test(test_domain_resources),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
