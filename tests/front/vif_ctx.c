// SPDX-License-Identifier: MIT
/* vif_ctx.c - what the netfront xenbus tests share: a pvnetd, a domain and a fake backend's xenbus side */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "front/front.h"
#include "front/xs.h"
#include "vif_ctx.h"

struct harness H;

void ctx_init(struct ctx *c, uint32_t devid, const struct fake_be_opts *opts)
{
	assert_int_equal(pvnet_domain_create(H.run_dir, 4096, &c->dom), 0);
	fb_toolstack(&c->fb, &H, pvnet_domain_id(c->dom), devid, opts);
	fb_start(&c->fb);
	pvnet_vif_config_default(&c->cfg);
	c->cfg.devid = devid;
	c->cfg.prepared = true;
	c->cfg.tx_buffers = 32;
	c->cfg.rx_buffers = 64;
}

void ctx_fini(struct ctx *c)
{
	fb_stop(&c->fb);
	pvnet_domain_destroy(c->dom);
}

/* Wait (bounded) for the vif's control fd and process what came. */
int process_until(struct pvnet_vif *vif, enum xenbus_state want)
{
	struct pollfd p = {.fd = pvnet_vif_control_fd(vif), .events = POLLIN};
	int st = pvnet_vif_process(vif);

	for (int i = 0; i < 100 && st != (int)want; i++) {
		poll(&p, 1, 50);
		st = pvnet_vif_process(vif);
	}
	return st;
}

/* The toolstack side writes the backend's "carrier" key (NULL: removes it). */
void set_carrier(struct ctx *c, const char *v)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/carrier", c->fb.be);
	if (v)
		assert_true(xs_write(H.dom0, XBT_NULL, path, v, strlen(v)));
	else
		assert_true(xs_rm(H.dom0, XBT_NULL, path));
}

/* Process watch events (bounded) until pvnet_vif_carrier() says @want. */
bool carrier_until(struct pvnet_vif *vif, bool want)
{
	struct pollfd p = {.fd = pvnet_vif_control_fd(vif), .events = POLLIN};

	for (int i = 0; i < 100; i++) {
		pvnet_vif_process(vif);
		if (pvnet_vif_carrier(vif) == want)
			return true;
		poll(&p, 1, 50);
	}
	return false;
}
