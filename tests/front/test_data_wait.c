// SPDX-License-Identifier: MIT
/* test_data_wait.c - netfront's waits, notifications and event channels against a fake backend */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "data_ctx.h"
#include "fakering.h"
#include "front/front.h"
#include "harness.h"

/* The backend's side of test_wait_arms_late: 20 ms into the window, look, then deliver. */
struct late {
	struct ctx *c;
	RING_IDX event, prod;
	uint8_t frame[200];
};

static void *late_backend(void *arg)
{
	struct late *l = arg;

	usleep(20000);
	l->event = __atomic_load_n(&l->c->be.rx.sring->rsp_event, __ATOMIC_ACQUIRE);
	l->prod = l->c->be.rx.rsp_prod_pvt;
	if (be_rx_frame(&l->c->be, l->frame, sizeof(l->frame), 0, NULL) == 0)
		be_rx_push(&l->c->be);
	return NULL;
}

/*
 * pvnet_queue_wait() with a poll window moves the rings' events out of the
 * backend's reach while it polls (a response then needs no notification),
 * and arms them again when the window ends without work.
 */
static void test_wait_arms_late(void **state)
{
	static uint8_t out[1500];
	static struct late l;
	struct pvnet_pkt pkts[4];
	pthread_t th;
	struct ctx c;

	ctx_init(&c, 32, 40);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 4, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	/* a window with nothing in it: armed again, final check included */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 2000, 0), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);

	/* a frame arriving inside the window: the event was out of reach, no notify was due */
	memset(&l, 0, sizeof(l));
	l.c = &c;
	assert_int_equal(pthread_create(&th, NULL, late_backend, &l), 0);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 1000000, 0), 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(l.event, l.prod + PVNET_RING_SIZE + 1);
	assert_false((RING_IDX)(l.prod + 1 - l.event) < 1u); /* RING_PUSH_..._CHECK_NOTIFY: no */
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 4, out, sizeof(out)), 1);
	assert_int_equal(pkts[0].len, sizeof(l.frame));
	/* and idle again: armed for the very next response */
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 4, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	ctx_fini(&c);
}

/*
 * pvnet_queue_wait() without a poll window sleeps on the armed events: it
 * must leave them armed for the very next response.
 */
static void test_wait_without_window_stays_armed(void **state)
{
	static uint8_t in[100], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 10), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	ctx_fini(&c);
}

/*
 * Half a frame on the ring: the receive call that found it asks to be
 * woken by the very next response (rsp_event one past what it saw), the
 * one that completes the frame.
 */
static void test_half_frame_arms_next(void **state)
{
	static uint8_t in[9000], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	RING_IDX seen;
	struct ctx c;

	ctx_init(&c, 32, 64);
	fill(in, sizeof(in), 18);
	assert_int_equal(be_rx_frame(&c.be, in, 9000, 0, NULL), 0); /* 3 slots */
	seen = c.be.rx.rsp_prod_pvt - 1;
	__atomic_store_n(&c.be.rx.sring->rsp_prod, seen,
			 __ATOMIC_SEQ_CST); /* the last one not yet */
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, seen + 1);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 9000);
	assert_memory_equal(out, in, 9000);
	ctx_fini(&c);
}

/*
 * Going idle while a send is stopped: TX completions that are already
 * there make the queue's fd readable at once, as RX responses do.
 */
static void test_idle_sees_tx_completions(void **state)
{
	static uint8_t frame[60];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = sizeof(frame)};
	struct ctx c;

	ctx_init(&c, 32, 64);
	for (int i = 0; i < 32; i++)
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 0);
	assert_int_equal(h_queue_readable(c.vif, 0), 0);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	be_tx_push(&c.be);
	/* the fake backend does not notify: only the final check can see them */
	front_queue_idle(&c.vif->queues[0], false);
	assert_int_equal(h_queue_readable(c.vif, 0), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	ctx_fini(&c);
}

/*
 * Split event channels (feature-split-event-channels): TX requests notify
 * the TX channel, RX refills the RX channel, and the queue's fd wakes for
 * an event on either.  The channels' kick ends are replaced by sockets the
 * test reads, to see which one each notification took.
 */
static void test_split_channels(void **state)
{
	struct fake_be_opts opts = {.split = true};
	static uint8_t in[100], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt = {.data = in, .len = sizeof(in)}, pkts[32];
	int tx_sv[2], rx_sv[2], tx_kick, rx_kick;
	struct front_queue *q;
	uint64_t one = 1;
	struct ctx c;

	ctx_init_be(&c, 32, 64, 1, 0, &opts);
	q = &c.vif->queues[0];
	assert_true(pvnet_vif_features(c.vif) & PVNET_F_SPLIT_EVTCHN);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, tx_sv), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, rx_sv), 0);
	tx_kick = q->ev_tx.kick_fd;
	rx_kick = q->ev_rx.kick_fd;
	q->ev_tx.kick_fd = tx_sv[0];
	q->ev_rx.kick_fd = rx_sv[0];

	/* SHARED_RING_INIT's req_event = 1: the first TX request notifies, on the TX channel */
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(kicks(tx_sv[1]), 1);
	assert_int_equal(kicks(rx_sv[1]), 0);
	assert_int_equal(queue_stat(c.vif, "tx_notify"), 1);

	/* netback out of RX requests asks for the next: the refill notifies the RX channel */
	c.be.rx.sring->req_event = c.be.rx.sring->req_prod + 1;
	for (int i = 0; i < 32; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 32, out, sizeof(out)), 32);
	assert_int_equal(kicks(rx_sv[1]), 1);
	assert_int_equal(kicks(tx_sv[1]), 0);

	/* idle: an event on the TX channel alone makes the queue's fd readable */
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 32, out, sizeof(out)), 0);
	assert_int_equal(h_queue_readable(c.vif, 0), 0);
	assert_int_equal(write(q->ev_tx.self_fd, &one, sizeof(one)), sizeof(one));
	assert_int_equal(h_queue_readable(c.vif, 0), 1);

	q->ev_tx.kick_fd = tx_kick;
	q->ev_rx.kick_fd = rx_kick;
	for (int i = 0; i < 2; i++) {
		close(tx_sv[i]);
		close(rx_sv[i]);
	}
	ctx_fini(&c);
}

/* A backend without feature-multicast-control gets no filter request. */
static void test_mcast_not_offered(void **state)
{
	static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), -EOPNOTSUPP);
	assert_int_equal(pvnet_mcast_del(c.vif, 0, group), -EOPNOTSUPP);
	assert_int_equal(c.be.tx.sring->req_prod, 0);
	ctx_fini(&c);
}

/* pvnet_queue_stats() fills at most @n entries and says how many there are. */
static void test_stats_bounds(void **state)
{
	struct pvnet_stat st[4];
	struct ctx c;

	ctx_init(&c, 32, 64);
	memset(st, 0xa5, sizeof(st));
	assert_int_equal(pvnet_queue_stats(c.vif, 0, st, 2), 12);
	assert_string_equal(st[0].name, "tx_packets");
	assert_string_equal(st[1].name, "tx_bytes");
	for (size_t i = 0; i < sizeof(st[2]); i++)
		assert_int_equal(((uint8_t *)&st[2])[i], 0xa5);
	assert_int_equal(pvnet_queue_stats(c.vif, 1, st, 2), -EINVAL);
	{
		struct pvnet_stat all[16];

		memset(all, 0xa5, sizeof(all));
		assert_int_equal(pvnet_queue_stats(c.vif, 0, all, 16), 12);
		assert_string_equal(all[11].name, "mcast_refused");
		for (size_t i = 0; i < 4 * sizeof(all[0]); i++)
			assert_int_equal(((uint8_t *)&all[12])[i], 0xa5);
	}
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wait_arms_late),
	    cmocka_unit_test(test_idle_sees_tx_completions),
	    cmocka_unit_test(test_wait_without_window_stays_armed),
	    cmocka_unit_test(test_half_frame_arms_next),
	    cmocka_unit_test(test_stats_bounds),
	    cmocka_unit_test(test_mcast_not_offered),
	    cmocka_unit_test(test_split_channels),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
