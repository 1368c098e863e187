// SPDX-License-Identifier: MIT
/* data_ctx.c - what the netfront data tests share: a pvnetd, a vif and a fake backend on its rings */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "data_ctx.h"
#include "front/front.h"

struct harness H;
static unsigned int next_devid; /* each test's vif its own */

/* The fake backend takes queue 0's rings. */
void be_attach(struct ctx *c, unsigned int queues)
{
	const char *dir = queues > 1 ? "/queue-0" : "";

	be_attach_rings(&c->be, c->dom, (uint32_t)h_read_int(&H, "%s%s/tx-ring-ref", c->fb.fe, dir),
			(uint32_t)h_read_int(&H, "%s%s/rx-ring-ref", c->fb.fe, dir));
}

/* A vif of @queues queues with a backend that offers what @opts says. */
void ctx_init_be(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		 unsigned int queues, int timeout_ms, const struct fake_be_opts *opts)
{
	struct pvnet_vif_config cfg;

	memset(c, 0, sizeof(*c));
	assert_int_equal(pvnet_domain_create(H.run_dir, 2048, &c->dom), 0);
	fb_toolstack(&c->fb, &H, pvnet_domain_id(c->dom), next_devid, opts);
	fb_start(&c->fb);
	pvnet_vif_config_default(&cfg);
	cfg.devid = next_devid++;
	cfg.prepared = true;
	cfg.tx_buffers = tx_buffers;
	cfg.rx_buffers = rx_buffers;
	cfg.queues = queues;
	if (timeout_ms)
		cfg.timeout_ms = timeout_ms;
	assert_int_equal(pvnet_vif_create(c->dom, &cfg, &c->vif), 0);
	assert_int_equal(pvnet_vif_queues(c->vif), queues);
	be_attach(c, queues);
}

/*
 * A vif of @queues queues, whose waits for the backend end after @timeout_ms
 * (0: the default), with a backend that offers multicast control if @mcast.
 */
void ctx_init_opts(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		   unsigned int queues, int timeout_ms, bool mcast)
{
	struct fake_be_opts opts = {.max_queues = queues > 1 ? queues : 0, .mcast = mcast};

	ctx_init_be(c, tx_buffers, rx_buffers, queues, timeout_ms, &opts);
}

void ctx_init_queues(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
		     unsigned int queues, int timeout_ms)
{
	ctx_init_opts(c, tx_buffers, rx_buffers, queues, timeout_ms, false);
}

void ctx_init(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers)
{
	ctx_init_queues(c, tx_buffers, rx_buffers, 1, 0);
}

void ctx_fini(struct ctx *c)
{
	pvnet_vif_destroy(c->vif);
	assert_int_equal(pvnet_domain_abandoned_pages(c->dom), 0);
	fb_stop(&c->fb);
	pvnet_domain_destroy(c->dom);
}

uint64_t queue_stat(struct pvnet_vif *vif, const char *name)
{
	struct pvnet_stat st[16];
	int n = pvnet_queue_stats(vif, 0, st, 16);

	for (int i = 0; i < n && i < 16; i++)
		if (!strcmp(st[i].name, name))
			return st[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

void expect_broken(struct ctx *c, int rc, const char *text)
{
	static uint8_t out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt = {.data = out, .len = 60};
	struct pvnet_buf *b;

	assert_int_equal(rc, -EIO);
	assert_non_null(pvnet_vif_error(c->vif));
	if (!strstr(pvnet_vif_error(c->vif), text))
		fail_msg("reason \"%s\" does not mention \"%s\"", pvnet_vif_error(c->vif), text);
	/* Final: every data call says so. */
	assert_int_equal(pvnet_send(c->vif, 0, &pkt, 1), -EIO);
	assert_int_equal(pvnet_recv(c->vif, 0, &pkt, 1, out, sizeof(out)), -EIO);
	assert_int_equal(pvnet_rx_burst(c->vif, 0, &b, 1), -EIO);
	assert_int_equal(pvnet_tx_alloc(c->vif, 0, &b, 1), -EIO);
}

/* Datagrams queued on @fd (a stand-in for a channel's kick end), taken. */
int kicks(int fd)
{
	char d[64];
	int n = 0;

	while (recv(fd, d, sizeof(d), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}
