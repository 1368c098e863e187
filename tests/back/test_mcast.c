// SPDX-License-Identifier: MIT
/* test_mcast.c - multicast control: MCAST_ADD/DEL requests and the filter a frontend asks for */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fx.h"

static const uint8_t g1[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb}; /* 224.0.0.251 */
static const uint8_t g2[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01}; /* ff02::1 */
static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Not a status the backend writes: "no response yet". */
#define NO_RSP 99

/*
 * @f sends a multicast filter request as a frontend does: a dummy first
 * slot (size 0) with one MCAST_ADD/DEL extra.  Returns the status the
 * backend answered the dummy with.
 */
static int16_t mcast_req(struct fx *x, struct ff *f, uint8_t op, const uint8_t mac[6])
{
	struct ff_queue *q = &f->q[0];
	netif_extra_info_t e = {.type = op};
	netif_tx_request_t r[2];
	uint16_t id;

	ff_tx_reap(f, 0);
	assert_true(q->nid_free > 0);
	id = q->id_free[--q->nid_free];
	q->id_busy[id] = true;
	q->tx_status[id] = NO_RSP;
	r[0] = (netif_tx_request_t){
	    .gref = q->tx_gref[id], .offset = 0, .flags = NETTXF_extra_info, .id = id, .size = 0};
	memcpy(e.u.mcast.addr, mac, 6);
	memset(&r[1], 0, sizeof(r[1]));
	memcpy(&r[1], &e, sizeof(e));
	ff_tx_raw(f, 0, r, 2);
	ff_tx_push(f, 0);
	assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(f, 0), q->tx_status[id] != NO_RSP), WAIT_MS));
	return q->tx_status[id];
}

/* A sends @n frames to @dst. */
static void send_to(struct fx *x, const uint8_t dst[6], unsigned int n, uint32_t seed)
{
	assert_true(WAIT_UNTIL(&x->w, (ff_tx_reap(&x->a, 0), ff_tx_free(&x->a, 0) >= n), WAIT_MS));
	send_only(x, &x->a, mac_a, dst, n, 100, seed);
}

/*
 * B receives until @n frames have come, then for 100 ms more (a frame the
 * filter should have dropped, sent before them, would be there by then);
 * returns how many came.  Every frame must be for @dst.
 */
static unsigned int recv_b(struct fx *x, const uint8_t dst[6], unsigned int n)
{
	uint64_t now, quiet = 0, end = test_now_ms() + WAIT_MS;
	struct ff_rxinfo info;
	unsigned int got = 0;
	int len;

	for (;;) {
		ff_rx_post(&x->b, 0, FF_RING);
		while ((len = ff_rx_recv(&x->b, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN) {
			assert_int_equal(len, 100);
			assert_memory_equal(x->rbuf, dst, 6);
			got++;
		}
		now = test_now_ms();
		if (got >= n && !quiet)
			quiet = now + 100;
		if ((quiet && now >= quiet) || now >= end)
			return got;
		loop_run_once(x->w.loop, 1);
	}
}

static uint64_t stat_b(struct fx *x, const char *name)
{
	return back_vif_stat(x->vb, 0, name);
}

/* We offer the feature, and its dynamic form. */
static void test_mcast_keys(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);

	(void)state;
	assert_int_equal(xs_read_long(x->w.store, x->vb->be_path, "feature-multicast-control"), 1);
	assert_int_equal(
	    xs_read_long(x->w.store, x->vb->be_path, "feature-dynamic-multicast-control"), 1);
	fx_free(x);
}

/*
 * B asks for the filter at connect: multicast it did not subscribe to is
 * dropped, broadcast and unicast pass; subscriptions count (two ADDs need
 * two DELs), and a request is never forwarded as a packet.
 */
static void test_mcast_filter(void **state)
{
	const struct ff_opts ob = {
	    .nq = 1, .sg = true, .gso4 = true, .gso6 = true, .rx_notify = true, .mcast_ctrl = true};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &ob);
	struct back_vif_features f;

	(void)state;
	send_to(x, g1, 5, 0);
	send_to(x, bcast, 4, 10);
	assert_int_equal(recv_b(x, bcast, 4), 4);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 5);

	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g1), NETIF_RSP_OKAY);
	assert_int_equal(back_vif_features(x->vb, &f), 0);
	assert_true(f.mcast_filter);
	assert_int_equal(f.mcast_addrs, 1);
	send_to(x, g1, 5, 20);
	assert_int_equal(recv_b(x, g1, 5), 5);
	send_to(x, g2, 5, 30);
	send_to(x, mac_b, 2, 40);
	assert_int_equal(recv_b(x, mac_b, 2), 2);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 10);

	/* Added twice, removed once: still subscribed; removed again: not. */
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g1), NETIF_RSP_OKAY);
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, g1), NETIF_RSP_OKAY);
	send_to(x, g1, 3, 50);
	assert_int_equal(recv_b(x, g1, 3), 3);
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, g1), NETIF_RSP_OKAY);
	send_to(x, g1, 3, 60);
	send_to(x, bcast, 1, 70);
	assert_int_equal(recv_b(x, bcast, 1), 1);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 13);
	/* Removing what is not there is no error. */
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, g2), NETIF_RSP_OKAY);

	assert_int_equal(stat_b(x, "tx_mcast_add"), 2);
	assert_int_equal(stat_b(x, "tx_mcast_del"), 3);
	assert_int_equal(stat_b(x, "tx_packets"), 0);
	assert_int_equal(stat_b(x, "tx_dropped"), 0);
	assert_int_equal(back_vif_stat(x->va, 0, "rx_packets"), 0);
	fx_free(x);
}

/* The filter holds 64 addresses, as Linux's: the 65th is refused until one goes. */
static void test_mcast_full(void **state)
{
	const struct ff_opts ob = {.nq = 1, .sg = true, .rx_notify = true, .mcast_ctrl = true};
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, &ob);
	uint8_t g[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x00};

	(void)state;
	for (unsigned int i = 0; i < 64; i++) {
		g[5] = (uint8_t)i;
		assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g),
				 NETIF_RSP_OKAY);
	}
	g[5] = 64;
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g), NETIF_RSP_ERROR);
	assert_int_equal(stat_b(x, "tx_mcast_full"), 1);
	send_to(x, g, 2, 0); /* not subscribed */
	g[5] = 63;
	send_to(x, g, 2, 10); /* subscribed: the last of the 64 */
	assert_int_equal(recv_b(x, g, 2), 2);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 2);
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, g), NETIF_RSP_OKAY);
	g[5] = 64;
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g), NETIF_RSP_OKAY);
	send_to(x, g, 2, 20);
	assert_int_equal(recv_b(x, g, 2), 2);
	fx_free(x);
}

/*
 * A filter request is answered as its two requests: the dummy first slot
 * with the status, its extra with NETIF_RSP_NULL (Linux's
 * make_tx_response() per extra); and a packet after it still gets its own.
 */
static void test_mcast_responses(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct ff_queue *q = &x->b.q[0];
	uint32_t count0, null0;

	(void)state;
	ff_tx_reap(&x->b, 0);
	count0 = q->tx_rsp_count;
	null0 = q->tx_rsp_null;
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g1), NETIF_RSP_OKAY);
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, g1), NETIF_RSP_OKAY);
	assert_true(
	    WAIT_UNTIL(&x->w, (ff_tx_reap(&x->b, 0), q->tx_rsp_count >= count0 + 4), WAIT_MS));
	assert_int_equal(q->tx_rsp_count, count0 + 4);
	assert_int_equal(q->tx_rsp_null, null0 + 2);
	assert_int_equal(stat_b(x, "tx_mcast_add"), 1);
	assert_int_equal(stat_b(x, "tx_mcast_del"), 1);
	transfer(x, &x->b, mac_b, &x->a, mac_a, 5, 60, 200, NULL, 0);
	fx_free(x);
}

/* A new connection starts with an empty filter: what the guest subscribed to before is gone. */
static void test_mcast_reset_at_reconnect(void **state)
{
	const struct ff_opts ob = {.nq = 1, .sg = true, .rx_notify = true, .mcast_ctrl = true};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, &ob);
	struct back_vif_features f;

	(void)state;
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g1), NETIF_RSP_OKAY);
	send_to(x, g1, 2, 0);
	assert_int_equal(recv_b(x, g1, 2), 2);
	fx_reconnect(&x->b, x->vb, &ob);
	assert_int_equal(back_vif_features(x->vb, &f), 0);
	assert_true(f.mcast_filter);
	assert_int_equal(f.mcast_addrs, 0);
	send_to(x, g1, 3, 10);
	send_to(x, bcast, 1, 20);
	assert_int_equal(recv_b(x, bcast, 1), 1);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 3);
	fx_free(x);
}

/* Write B's request-multicast-control, as the guest would; the watch fires on the loop thread. */
static void set_request(struct fx *x, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/request-multicast-control", x->b.fe_path);
	assert_int_equal(store_write(x->w.store, path, v, strlen(v)), 0);
	loop_run_once(x->w.loop, 0);
}

/*
 * Without the request there is no filter, whatever the list holds; set
 * while connected (feature-dynamic-multicast-control) it applies at once,
 * and cleared it stops.
 */
static void test_mcast_dynamic(void **state)
{
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);
	struct back_vif_features f;

	(void)state;
	assert_int_equal(back_vif_features(x->vb, &f), 0);
	assert_false(f.mcast_filter);
	assert_int_equal(mcast_req(x, &x->b, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, g2), NETIF_RSP_OKAY);
	send_to(x, g1, 3, 0);
	assert_int_equal(recv_b(x, g1, 3), 3);
	set_request(x, "1");
	assert_int_equal(back_vif_features(x->vb, &f), 0);
	assert_true(f.mcast_filter);
	send_to(x, g1, 3, 10);
	send_to(x, g2, 2, 20);
	assert_int_equal(recv_b(x, g2, 2), 2);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 3);
	set_request(x, "0");
	send_to(x, g1, 3, 30);
	assert_int_equal(recv_b(x, g1, 3), 3);
	set_request(x, "1");
	set_request(x, "bogus"); /* malformed: absent, no filter (as a frontend read gives it) */
	send_to(x, g1, 1, 40);
	assert_int_equal(recv_b(x, g1, 1), 1);
	assert_int_equal(stat_b(x, "rx_mcast_filtered"), 3);
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mcast_keys),	  cmocka_unit_test(test_mcast_filter),
	    cmocka_unit_test(test_mcast_full),	  cmocka_unit_test(test_mcast_responses),
	    cmocka_unit_test(test_mcast_dynamic), cmocka_unit_test(test_mcast_reset_at_reconnect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
