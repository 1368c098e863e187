// SPDX-License-Identifier: MIT
/* test_threads.c - netfront's threading contract: one thread per queue, a vif broken under load */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "../common/frame_builder.h"
#include "fakering.h"
#include "front/front.h"
#include "harness.h"

/*
 * The library promises that different queues of one vif may be used from
 * different threads at once, and that a backend breaking the protocol on
 * one queue stops all of them with one reason.  Each worker thread owns a
 * queue and plays the backend of that queue itself (so every ring has one
 * thread); run under ThreadSanitizer in the 'threaded' suite.
 */

#define NQUEUES 4
/* Rounds per worker: enough to wrap each ring many times, short under TSan. */
#define ROUNDS 400

static struct harness H;

struct worker {
	struct pvnet_vif *vif;
	struct pvnet_domain *dom;
	unsigned int queue;
	uint32_t tx_ref, rx_ref;
	bool saboteur; /* breaks the protocol half-way */
	int result;    /* 0, or the first unexpected return */
	unsigned int rounds_done;
};

static void *worker_main(void *arg)
{
	static _Thread_local uint8_t frame[1500], out[4 * 1500];
	static _Thread_local struct be_frame f;
	struct worker *w = arg;
	struct pvnet_pkt pkt = {.data = frame, .len = sizeof(frame)}, rx[4];
	struct be b;

	be_attach_rings(&b, w->dom, w->tx_ref, w->rx_ref);
	for (unsigned int r = 0; r < ROUNDS; r++) {
		int n;

		memcpy(frame, &r, sizeof(r));
		frame[4] = (uint8_t)w->queue;
		n = pvnet_send(w->vif, w->queue, &pkt, 1);
		if (n == -EIO)
			break;
		if (n != 1) {
			w->result = n ? n : -ENOSPC;
			break;
		}
		while (be_tx_frame(&b, &f, NETIF_RSP_OKAY))
			;
		be_tx_push(&b);
		if (be_rx_frame(&b, f.data, f.len, 0, NULL) == 0)
			be_rx_push(&b);
		if (w->saboteur && r == ROUNDS / 2) {
			/* An RX producer far beyond anything posted. */
			__atomic_store_n(&b.rx.sring->rsp_prod, b.rx.rsp_prod_pvt + 1000,
					 __ATOMIC_SEQ_CST);
		}
		n = pvnet_recv(w->vif, w->queue, rx, 4, out, sizeof(out));
		if (n == -EIO)
			break;
		if (n != 1 || rx[0].len != sizeof(frame) || memcmp(rx[0].data, &r, sizeof(r)) ||
		    ((const uint8_t *)rx[0].data)[4] != w->queue) {
			w->result = n < 0 ? n : -EBADMSG;
			break;
		}
		w->rounds_done++;
	}
	return NULL;
}

static void run(bool sabotage)
{
	struct fake_be_opts opts = {.max_queues = NQUEUES, .split = true};
	struct worker w[NQUEUES];
	pthread_t t[NQUEUES];
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	struct fake_be fb;

	assert_int_equal(pvnet_domain_create(H.run_dir, 4096, &dom), 0);
	fb_toolstack(&fb, &H, pvnet_domain_id(dom), sabotage, &opts);
	fb_start(&fb);
	pvnet_vif_config_default(&cfg);
	cfg.devid = sabotage;
	cfg.prepared = true;
	cfg.queues = NQUEUES;
	cfg.tx_buffers = 32;
	cfg.rx_buffers = 64;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), 0);
	assert_int_equal(pvnet_vif_queues(vif), NQUEUES);
	for (unsigned int i = 0; i < NQUEUES; i++) {
		w[i] = (struct worker){
		    .vif = vif, .dom = dom, .queue = i, .saboteur = sabotage && i == 1};
		w[i].tx_ref = (uint32_t)h_read_int(&H, "%s/queue-%u/tx-ring-ref", fb.fe, i);
		w[i].rx_ref = (uint32_t)h_read_int(&H, "%s/queue-%u/rx-ring-ref", fb.fe, i);
		assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (unsigned int i = 0; i < NQUEUES; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].result, 0);
		if (!sabotage)
			assert_int_equal(w[i].rounds_done, ROUNDS);
	}
	if (sabotage) {
		assert_non_null(pvnet_vif_error(vif));
		assert_non_null(strstr(pvnet_vif_error(vif), "queue 1"));
		assert_true(w[1].rounds_done == ROUNDS / 2);
	} else {
		assert_null(pvnet_vif_error(vif));
	}
	pvnet_vif_destroy(vif);
	fb_stop(&fb);
	pvnet_domain_destroy(dom);
}

static void test_queues_in_parallel(void **state)
{
	run(false);
}

static void test_broken_under_load(void **state)
{
	run(true);
}

/* The CPU pvnet_send_flow()'s sender runs on, as the test says. */
static _Atomic int flow_cpu;

static int flow_cpu_fn(void *arg)
{
	(void)arg;
	return atomic_load(&flow_cpu);
}

/* An IPv4/UDP frame of 60 bytes, flow @port (its source port). */
static void flow_frame(struct fb *f, uint16_t port)
{
	fb_build(f, 4, IPPROTO_UDP, false, 18, 0);
	fb_put16(f->b + 34, port);
}

/* The fake backend answers every frame queued on @q; the next call on it counts them out. */
static unsigned int answer(struct pvnet_vif *vif, struct be *b, unsigned int q)
{
	static struct be_frame f;
	unsigned int n = 0;

	while (be_tx_frame(&b[q], &f, NETIF_RSP_OKAY))
		n++;
	be_tx_push(&b[q]);
	assert_int_equal(pvnet_send(vif, q, NULL, 0), 0);
	return n;
}

/*
 * pvnet_send_flow() on one thread with the backend played here: xps-safe
 * keeps a flow on its queue while a frame of it is in flight, through a
 * policy set again too, and lets it follow the CPU once all are answered,
 * also after a run cut short by another queue's frame or by a full ring;
 * frames sent before a refused one are counted; a bad queue, an unshared
 * vif and a broken one are refused.
 */
static void test_send_flow(void **state)
{
	struct fake_be_opts opts = {.max_queues = NQUEUES, .split = true};
	static struct fb fa, fb2, fc;
	static uint8_t bad[60], rxbuf[4 * 2048];
	struct pvnet_pkt a = {.data = fa.b, .len = 60}, b = {.data = fb2.b, .len = 60}, pk[20];
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	struct be be[NQUEUES];
	struct fake_be fb;
	uint16_t port;
	int n;

	(void)state;
	assert_int_equal(pvnet_domain_create(H.run_dir, 4096, &dom), 0);
	fb_toolstack(&fb, &H, pvnet_domain_id(dom), 2, &opts);
	fb_start(&fb);
	pvnet_vif_config_default(&cfg);
	cfg.devid = 2;
	cfg.prepared = true;
	cfg.queues = NQUEUES;
	cfg.tx_buffers = PVNET_MAX_FRAGS;
	cfg.rx_buffers = 64;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), 0);
	for (unsigned int q = 0; q < NQUEUES; q++)
		be_attach_rings(&be[q], dom,
				(uint32_t)h_read_int(&H, "%s/queue-%u/tx-ring-ref", fb.fe, q),
				(uint32_t)h_read_int(&H, "%s/queue-%u/rx-ring-ref", fb.fe, q));
	flow_frame(&fa, 1000);
	flow_frame(&fb2, 2000);
	flow_frame(&fc, 3000);

	assert_int_equal(pvnet_send_flow(vif, &a, 1), -EINVAL); /* not shared yet */
	pvnet_vif_set_cpu_source(vif, flow_cpu_fn, NULL);
	assert_int_equal(pvnet_vif_set_steering(vif, PVNET_STEER_XPS_SAFE), 0);
	atomic_store(&flow_cpu, 1);
	assert_int_equal(pvnet_send_flow(vif, &a, 1), 1);
	atomic_store(&flow_cpu, 2);
	assert_int_equal(pvnet_vif_pick_queue(vif, fa.b, 60), 1);
	assert_int_equal(pvnet_vif_set_steering(vif, PVNET_STEER_XPS_SAFE), 0);
	assert_int_equal(pvnet_vif_pick_queue(vif, fa.b, 60), 1);
	/* a stays on queue 1, b takes CPU 2's: two runs */
	pk[0] = a;
	pk[1] = b;
	assert_int_equal(pvnet_send_flow(vif, pk, 2), 2);
	assert_int_equal(answer(vif, be, 1), 2);
	assert_int_equal(answer(vif, be, 2), 1);
	assert_int_equal(answer(vif, be, 0) + answer(vif, be, 3), 0);
	atomic_store(&flow_cpu, 3);
	assert_int_equal(pvnet_vif_pick_queue(vif, fa.b, 60), 3);
	assert_int_equal(pvnet_vif_pick_queue(vif, fb2.b, 60), 3);

	/* More frames than CPU 3's queue has buffers: some sent, the rest counted out. */
	for (unsigned int i = 0; i < 20; i++)
		pk[i] = (struct pvnet_pkt){.data = fc.b, .len = 60};
	n = pvnet_send_flow(vif, pk, 20);
	assert_true(n > 0 && n < 20);
	assert_int_equal(answer(vif, be, 3), n);
	atomic_store(&flow_cpu, 0);
	assert_int_equal(pvnet_vif_pick_queue(vif, fc.b, 60), 0);

	/* hash: a frame refused in a later run; the one sent before it is counted. */
	assert_int_equal(pvnet_vif_set_steering(vif, PVNET_STEER_HASH), 0);
	for (port = 1; front_steer_flow_hash(fa.b, 60) % NQUEUES == 0; port++)
		flow_frame(&fa, port);
	pk[0] = a;
	pk[1] = (struct pvnet_pkt){.data = bad, .len = 10}; /* a runt: queue 0 */
	assert_int_equal(pvnet_send_flow(vif, pk, 2), 1);
	assert_int_equal(pvnet_send(vif, NQUEUES, &a, 1), -EINVAL);

	/* A broken vif: the pick says why. */
	__atomic_store_n(&be[0].rx.sring->rsp_prod, be[0].rx.rsp_prod_pvt + 1000, __ATOMIC_SEQ_CST);
	assert_int_equal(pvnet_recv(vif, 0, pk, 1, rxbuf, sizeof(rxbuf)), -EIO);
	assert_int_equal(pvnet_vif_pick_queue(vif, fb2.b, 60), -EIO);
	pvnet_vif_destroy(vif);
	fb_stop(&fb);
	pvnet_domain_destroy(dom);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_queues_in_parallel),
	    cmocka_unit_test(test_broken_under_load),
	    cmocka_unit_test(test_send_flow),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
