/* SPDX-License-Identifier: MIT */
/* data_ctx.h - what the netfront data tests share: a pvnetd, a vif and a fake backend on its rings */
#ifndef PVNET_TESTS_FRONT_DATA_CTX_H
#define PVNET_TESTS_FRONT_DATA_CTX_H

/*
 * The vif is connected through a real pvnetd (domain, grants, event
 * channels, store) with the harness's fake backend thread answering the
 * XenbusState machine.  The test thread then plays netback's ring side:
 * it finds the rings and buffers through the grant references the frontend
 * published (checking each grant's domain and access), consumes TX
 * requests and produces RX responses, well-formed or hostile.  The tests
 * are split by what they exercise: TX (test_data.c), RX (test_data_rx.c),
 * zero copy (test_zerocopy.c), waits and event channels (test_data_wait.c).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pvnet/pvnet.h>

#include "fakering.h"
#include "harness.h"

/* The pvnetd of the running test program (h_run_group() starts it). */
extern struct harness H;

/**
 * struct ctx - one test's domain, vif and fake backend
 * @dom: the frontend's domain
 * @fb: the backend's xenbus side
 * @vif: the vif under test
 * @be: the backend's ring side, on queue 0
 */
struct ctx {
	struct pvnet_domain *dom;
	struct fake_be fb;
	struct pvnet_vif *vif;
	struct be be;
};

/* The fake backend takes queue 0's rings. */
void be_attach(struct ctx *c, unsigned int queues);
/* A vif of @queues queues with a backend that offers what @opts says. */
void ctx_init_be(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		 unsigned int queues, int timeout_ms, const struct fake_be_opts *opts);
/* As ctx_init_be(), a backend that offers multicast control if @mcast. */
void ctx_init_opts(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		   unsigned int queues, int timeout_ms, bool mcast);
void ctx_init_queues(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		     unsigned int queues, int timeout_ms);
/* One queue, the default timeout. */
void ctx_init(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers);
/* Destroy the vif (no page left behind) and the domain. */
void ctx_fini(struct ctx *c);
/* Queue 0's counter @name (the test fails if there is none). */
uint64_t queue_stat(struct pvnet_vif *vif, const char *name);
/* @len bytes of a pattern of @seed. */
void fill(uint8_t *p, uint32_t len, uint32_t seed);
/* @rc is -EIO, the vif's reason names @text, and every data call says -EIO. */
void expect_broken(struct ctx *c, int rc, const char *text);
/* Datagrams queued on @fd (a stand-in for a channel's kick end), taken. */
int kicks(int fd);

#endif /* PVNET_TESTS_FRONT_DATA_CTX_H */
