/* SPDX-License-Identifier: MIT */
/* vif_ctx.h - what the netfront xenbus tests share: a pvnetd, a domain and a fake backend's xenbus side */
#ifndef PVNET_TESTS_FRONT_VIF_CTX_H
#define PVNET_TESTS_FRONT_VIF_CTX_H

/*
 * A real pvnetd for the test program, a domain per test, and the
 * harness's fake backend answering the XenbusState machine through the
 * store; the rings are not served.  The tests are split by what they
 * exercise: connecting, features and closing (test_vif.c), the state
 * machine and the keys at their edges (test_vif_states.c).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pvnet/pvnet.h>

#include "harness.h"

/* The pvnetd of the running test program (h_run_group() starts it). */
extern struct harness H;

/**
 * struct ctx - one test's domain and fake backend, and the vif it will make
 * @dom: the frontend's domain
 * @fb: the backend's xenbus side
 * @cfg: the vif's configuration (32 TX and 64 RX buffers, prepared)
 */
struct ctx {
	struct pvnet_domain *dom;
	struct fake_be fb;
	struct pvnet_vif_config cfg;
};

/* A domain and a fake backend for vif @devid offering what @opts says. */
void ctx_init(struct ctx *c, uint32_t devid, const struct fake_be_opts *opts);
/* Stop the backend, destroy the domain. */
void ctx_fini(struct ctx *c);
/* Wait (bounded) for the vif's control fd and process what came, until state @want. */
int process_until(struct pvnet_vif *vif, enum xenbus_state want);
/* The toolstack side writes the backend's "carrier" key (NULL: removes it). */
void set_carrier(struct ctx *c, const char *v);
/* Process watch events (bounded) until pvnet_vif_carrier() says @want. */
bool carrier_until(struct pvnet_vif *vif, bool want);

#endif /* PVNET_TESTS_FRONT_VIF_CTX_H */
