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

static const char *pvnetd_exe;
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

static int group_setup(void **state)
{
	return h_start(&H, pvnetd_exe);
}

static int group_teardown(void **state)
{
	return h_stop(&H);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_queues_in_parallel),
	    cmocka_unit_test(test_broken_under_load),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	pvnetd_exe = argv[1];
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
