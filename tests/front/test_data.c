// SPDX-License-Identifier: MIT
/* test_data.c - netfront's data path against a fake backend working on the real granted rings */
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
#include <unistd.h>

#include <cmocka.h>

#include "fakering.h"
#include "front/front.h"
#include "harness.h"

/*
 * The vif is connected through a real pvnetd (domain, grants, event
 * channels, store) with the harness's fake backend thread answering the
 * XenbusState machine.  The test thread then plays netback's ring side:
 * it finds the rings and buffers through the grant references the frontend
 * published (checking each grant's domain and access), consumes TX
 * requests and produces RX responses, well-formed or hostile.
 */

static const char *pvnetd_exe;
static struct harness H;
static unsigned int next_devid;

static int group_setup(void **state)
{
	return h_start(&H, pvnetd_exe);
}

static int group_teardown(void **state)
{
	return h_stop(&H);
}

struct ctx {
	struct pvnet_domain *dom;
	struct fake_be fb;
	struct pvnet_vif *vif;
	struct be be;
};

/* The fake backend takes queue 0's rings. */
static void be_attach(struct ctx *c, unsigned int queues)
{
	const char *dir = queues > 1 ? "/queue-0" : "";

	be_attach_rings(&c->be, c->dom, (uint32_t)h_read_int(&H, "%s%s/tx-ring-ref", c->fb.fe, dir),
			(uint32_t)h_read_int(&H, "%s%s/rx-ring-ref", c->fb.fe, dir));
}

/*
 * A vif of @queues queues, whose waits for the backend end after @timeout_ms
 * (0: the default), with a backend that offers multicast control if @mcast.
 */
static void ctx_init_opts(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
			  unsigned int queues, int timeout_ms, bool mcast)
{
	struct fake_be_opts opts = {.max_queues = queues > 1 ? queues : 0, .mcast = mcast};
	struct pvnet_vif_config cfg;

	memset(c, 0, sizeof(*c));
	assert_int_equal(pvnet_domain_create(H.run_dir, 2048, &c->dom), 0);
	fb_toolstack(&c->fb, &H, pvnet_domain_id(c->dom), next_devid, &opts);
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

static void ctx_init_queues(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers,
			    unsigned int queues, int timeout_ms)
{
	ctx_init_opts(c, tx_buffers, rx_buffers, queues, timeout_ms, false);
}

static void ctx_init(struct ctx *c, unsigned int tx_buffers, unsigned int rx_buffers)
{
	ctx_init_queues(c, tx_buffers, rx_buffers, 1, 0);
}

static void ctx_fini(struct ctx *c)
{
	pvnet_vif_destroy(c->vif);
	assert_int_equal(pvnet_domain_abandoned_pages(c->dom), 0);
	fb_stop(&c->fb);
	pvnet_domain_destroy(c->dom);
}

static uint64_t stat(struct pvnet_vif *vif, const char *name)
{
	struct pvnet_stat st[16];
	int n = pvnet_queue_stats(vif, 0, st, 16);

	for (int i = 0; i < n && i < 16; i++)
		if (!strcmp(st[i].name, name))
			return st[i].value;
	fail_msg("no counter %s", name);
	return 0;
}

static void fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static void test_tx_sizes(void **state)
{
	static const uint32_t sizes[] = {14, 60, 1500, 4095, 4096, 4097, 9000, 40000, 65535};
	static uint8_t buf[PVNET_MAX_FRAME];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = buf};
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(buf, sizes[i], (uint32_t)i);
		pkt.len = sizes[i];
		pkt.flags = i & 1 ? PVNET_PKT_CSUM_BLANK : 0;
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
		assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
		assert_int_equal(f.len, sizes[i]);
		assert_int_equal(f.slots, (sizes[i] + 4095) / 4096);
		assert_memory_equal(f.data, buf, sizes[i]);
		assert_int_equal(!!(f.flags & NETTXF_csum_blank), i & 1);
		be_tx_push(&c.be);
	}
	/* GSO: an extra slot after the first. */
	fill(buf, 30000, 99);
	pkt = (struct pvnet_pkt){.data = buf,
				 .len = 30000,
				 .flags = PVNET_PKT_CSUM_BLANK,
				 .gso_type = PVNET_GSO_TCPV4,
				 .gso_size = 1448};
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	assert_int_equal(f.gso.u.gso.size, 1448);
	assert_int_equal(f.gso.u.gso.type, XEN_NETIF_GSO_TYPE_TCPV4);
	assert_memory_equal(f.data, buf, 30000);
	be_tx_push(&c.be);
	/* Malformed frames are refused before anything is queued. */
	pkt.len = 13;
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -EINVAL);
	pkt.len = 100;
	pkt.gso_type = 7;
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -EINVAL);
	assert_int_equal(stat(c.vif, "tx_packets"), 10);
	ctx_fini(&c);
}

static void test_tx_ring_full_and_wrap(void **state)
{
	static uint8_t frames[64][60];
	static struct be_frame f;
	struct pvnet_pkt pkts[64];
	unsigned int sent = 0, got = 0, bursts = 0;
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	/* Fill the ring without completions: exactly 256 one-slot frames fit. */
	while (sent < PVNET_RING_SIZE + 64) {
		for (int i = 0; i < 64; i++)
			frames[i][0] = (uint8_t)(sent + (unsigned int)i);
		int n = pvnet_send(c.vif, 0, pkts, 64);

		assert_true(n >= 0);
		if (n == 0)
			break;
		sent += (unsigned int)n;
	}
	assert_int_equal(sent, PVNET_RING_SIZE);
	assert_int_equal(stat(c.vif, "tx_ring_full"), 1);
	/* Stopped: completions are armed for half the ring. */
	assert_int_equal(c.be.tx.sring->rsp_event, PVNET_RING_SIZE / 2);
	/* Many rounds: the indices wrap the ring 20 times; every payload arrives intact. */
	for (int round = 0; round < 20 * 4; round++) {
		while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY)) {
			assert_int_equal(f.len, 60);
			assert_int_equal(f.data[0], (uint8_t)got);
			got++;
		}
		be_tx_push(&c.be);
		for (int i = 0; i < 64; i++)
			frames[i][0] = (uint8_t)(sent + (unsigned int)i);
		int n = pvnet_send(c.vif, 0, pkts, 64);

		assert_int_equal(n, 64);
		sent += 64;
		bursts++;
	}
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		got++;
	assert_int_equal(got, sent);
	/* The backend asked for a kick per burst at most (req_event = req_cons + 1). */
	assert_true(stat(c.vif, "tx_notify") <= bursts + 1);
	assert_int_equal(stat(c.vif, "tx_errors"), 0);
	ctx_fini(&c);
}

static void test_tx_errors_counted(void **state)
{
	static uint8_t frame[100];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 100};
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_DROPPED));
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(stat(c.vif, "tx_errors"), 1);
	/* A frame of three slots, every slot answered with an error: one frame, one error. */
	static uint8_t big[9000];
	struct pvnet_pkt three = {.data = big, .len = sizeof(big)};

	assert_int_equal(pvnet_send(c.vif, 0, &three, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_ERROR));
	assert_int_equal(f.slots, 3);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(stat(c.vif, "tx_errors"), 2);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * A GSO frame takes two slots (its extra after the first): with one slot
 * left it waits, whether copied or zero-copy, and the requests already on
 * the ring are not overwritten.
 */
static void test_tx_gso_needs_room_for_its_extra(void **state)
{
	static uint8_t frames[64][60], gso[1000];
	static struct be_frame f;
	struct pvnet_pkt pkts[64], g = {.data = gso,
					.len = sizeof(gso),
					.flags = PVNET_PKT_CSUM_BLANK,
					.gso_type = PVNET_GSO_TCPV4,
					.gso_size = 500};
	struct pvnet_buf *b;
	unsigned int sent = 0, got = 0;
	struct ctx c;

	ctx_init(&c, PVNET_RING_SIZE, 64);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	while (sent < PVNET_RING_SIZE - 1) {
		unsigned int n = PVNET_RING_SIZE - 1 - sent < 64 ? PVNET_RING_SIZE - 1 - sent : 64;

		for (unsigned int i = 0; i < n; i++)
			frames[i][0] = (uint8_t)(sent + i);
		assert_int_equal(pvnet_send(c.vif, 0, pkts, n), (int)n);
		sent += n;
	}
	assert_int_equal(pvnet_send(c.vif, 0, &g, 1), 0);
	assert_int_equal(stat(c.vif, "tx_ring_full"), 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, &b, 1), 1);
	b->len = sizeof(gso);
	b->flags = PVNET_PKT_CSUM_BLANK;
	b->gso_type = PVNET_GSO_TCPV4;
	b->gso_size = 500;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, &b, 1), 0);
	pvnet_tx_free(c.vif, 0, &b, 1);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY)) {
		assert_int_equal(f.len, 60);
		assert_int_equal(f.slots, 1);
		assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_NONE);
		assert_int_equal(f.data[0], (uint8_t)got);
		got++;
	}
	assert_int_equal(got, PVNET_RING_SIZE - 1);
	be_tx_push(&c.be);
	/* Room again: the frame goes, extra and all. */
	assert_int_equal(pvnet_send(c.vif, 0, &g, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, sizeof(gso));
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_GSO);
	be_tx_push(&c.be);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/* A multicast filter request is two slots too (a first slot and its MCAST_ADD extra). */
	static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};

	ctx_init_opts(&c, PVNET_RING_SIZE, 64, 1, 0, true);
	for (int i = 0; i < 64; i++)
		pkts[i] = (struct pvnet_pkt){.data = frames[i], .len = 60};
	for (sent = 0; sent < PVNET_RING_SIZE - 1;) {
		unsigned int n = PVNET_RING_SIZE - 1 - sent < 64 ? PVNET_RING_SIZE - 1 - sent : 64;

		assert_int_equal(pvnet_send(c.vif, 0, pkts, n), (int)n);
		sent += n;
	}
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 0);
	for (got = 0; be_tx_frame(&c.be, &f, NETIF_RSP_OKAY); got++)
		assert_int_equal(f.len, 60);
	assert_int_equal(got, PVNET_RING_SIZE - 1);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_mcast_add(c.vif, 0, group), 1);
	/* Answered with a status other than OKAY: counted as refused, whichever it is. */
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_DROPPED));
	assert_int_equal(f.len, 0);
	assert_int_equal(f.gso.type, XEN_NETIF_EXTRA_TYPE_MCAST_ADD);
	be_tx_push(&c.be);
	assert_int_equal(pvnet_send(c.vif, 0, pkts, 1), 1);
	assert_int_equal(stat(c.vif, "mcast_requests"), 1);
	assert_int_equal(stat(c.vif, "mcast_refused"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * A send that gets through again ends the stop: TX completions nobody
 * waits for are then no work, or a receive-only wait would return at once
 * for ever.
 */
static void test_tx_stop_ends(void **state)
{
	static uint8_t frame[60];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 60};
	struct ctx c;

	ctx_init(&c, 32, 64);
	for (int i = 0; i < 32; i++)
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 0);
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	be_tx_push(&c.be);
	/* Stopped, completions waiting: that is work. */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	/* Not stopped: the completion waits for the next send, nobody wakes for it. */
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
	assert_int_equal(pvnet_queue_wait(c.vif, 0, 50, 0), 0);
	ctx_fini(&c);
}

static void test_rx_sizes(void **state)
{
	static const uint32_t sizes[] = {14, 60, 1500, 4096, 4097, 9000, 65535};
	static uint8_t in[PVNET_MAX_FRAME], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	struct ctx c;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(in, sizes[i], (uint32_t)i + 7);
		assert_int_equal(be_rx_frame(&c.be, in, sizes[i], NETRXF_data_validated, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, sizes[i]);
		assert_ptr_equal(pkt.data, out);
		assert_memory_equal(out, in, sizes[i]);
		assert_int_equal(pkt.flags, PVNET_PKT_DATA_VALIDATED);
	}
	/* GSO and HASH extras. */
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};

	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
	ex.u.gso.size = 1440;
	fill(in, 20000, 5);
	assert_int_equal(
	    be_rx_frame(&c.be, in, 20000, NETRXF_csum_blank | NETRXF_data_validated, &ex), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 20000);
	assert_memory_equal(out, in, 20000);
	assert_int_equal(pkt.gso_type, PVNET_GSO_TCPV6);
	assert_int_equal(pkt.gso_size, 1440);
	assert_int_equal(pkt.flags, PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED);
	/* A buffer too small for the next frame: -ENOBUFS, the frame stays. */
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, 999), -ENOBUFS);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, 1000), 1);
	assert_int_equal(stat(c.vif, "rx_packets"), 9);
	ctx_fini(&c);
}

static void test_rx_burst_wrap_and_refill(void **state)
{
	static uint8_t in[1500], out[64 * 1500];
	struct pvnet_pkt pkts[16];
	uint32_t seq = 0, want = 0;
	struct ctx c;

	ctx_init(&c, 32, 40);
	/* 40 buffers posted; each round the backend fills 16 and we take them back. */
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 16; i++) {
			memcpy(in, &seq, sizeof(seq));
			seq++;
			assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
		}
		be_rx_push(&c.be);
		int n = pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out));

		assert_int_equal(n, 16);
		for (int i = 0; i < n; i++) {
			uint32_t v;

			memcpy(&v, pkts[i].data, sizeof(v));
			assert_int_equal(v, want++);
		}
		/* Every buffer is re-posted (40 outstanding >= 19: pushed). */
		assert_int_equal(c.be.rx.sring->req_prod - c.be.rx.req_cons, 40);
	}
	/* Idle: the final check asked for the very next response. */
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 0);
	assert_int_equal(c.be.rx.sring->rsp_event, c.be.rx.rsp_prod_pvt + 1);
	struct pollfd p = {.fd = pvnet_queue_fd(c.vif, 0), .events = POLLIN};

	assert_int_equal(poll(&p, 1, 0), 0);
	/*
	 * A kick with nothing behind it (none was due: no response crossed the
	 * event) wakes the application a few times at most, until an idle call
	 * reads it anyway, and is counted.
	 */
	uint64_t one = 1;
	unsigned int wakeups = 0;

	assert_int_equal(write(c.vif->queues[0].ev_rx.self_fd, &one, sizeof(one)), sizeof(one));
	while (poll(&p, 1, 0) == 1 && wakeups < 100) {
		assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 0);
		wakeups++;
	}
	assert_true(wakeups >= 1 && wakeups <= 8);
	assert_int_equal(stat(c.vif, "rx_spurious"), 1);
	assert_int_equal(poll(&p, 1, 0), 0);
	/* Work that is already there when the application goes idle wakes it at once. */
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	front_queue_idle(&c.vif->queues[0], false);
	assert_int_equal(poll(&p, 1, 0), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, pkts, 16, out, sizeof(out)), 1);
	ctx_fini(&c);
}

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

/* A zero-copy sender out of buffers is woken when they come back. */
static void test_zero_copy_out_of_buffers_wakes(void **state)
{
	struct pvnet_buf *bufs[40];
	static struct be_frame f;
	struct pollfd p;
	struct ctx c;
	int n;

	ctx_init(&c, 32, 64);
	p = (struct pollfd){.fd = pvnet_queue_fd(c.vif, 0), .events = POLLIN};
	n = pvnet_tx_alloc(c.vif, 0, bufs, 40);
	assert_int_equal(n, 32);
	for (int i = 0; i < n; i++) {
		fill(bufs[i]->data, 100, (unsigned int)i);
		bufs[i]->len = 100;
	}
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, (unsigned int)n), n);
	/* No buffer left: nothing allocated, and completions are armed for half in flight. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 0);
	assert_int_equal(c.be.tx.sring->rsp_event, c.be.tx.rsp_prod_pvt + 16);
	assert_int_equal(poll(&p, 1, 0), 0);
	/*
	 * The backend completes them, crossing rsp_event (a real netback then
	 * notifies the queue's event channel; this fake one does not), and the
	 * buffers are there again.
	 */
	while (be_tx_frame(&c.be, &f, NETIF_RSP_OKAY))
		;
	be_tx_push(&c.be);
	assert_true(c.be.tx.rsp_prod_pvt - c.be.tx.sring->rsp_event < c.be.tx.rsp_prod_pvt);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 40), 32);
	pvnet_tx_free(c.vif, 0, bufs, 32);
	ctx_fini(&c);
}

static void test_zero_copy(void **state)
{
	static uint8_t in[6000];
	static struct be_frame f;
	struct pvnet_buf *bufs[4], *rx[4];
	struct ctx c;

	ctx_init(&c, 32, 64);
	/* TX: two buffers chained, the first with headroom. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 2), 2);
	assert_ptr_equal(bufs[0]->data, bufs[0]->page);
	bufs[0]->data = (char *)bufs[0]->page + 128;
	fill(bufs[0]->data, 1000, 1);
	bufs[0]->len = 1000;
	fill(bufs[1]->data, 500, 2);
	bufs[1]->len = 500;
	bufs[0]->next = bufs[1];
	bufs[0]->flags = PVNET_PKT_DATA_VALIDATED;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 1500);
	assert_int_equal(f.slots, 2);
	assert_int_equal(f.first_offset, 128);
	assert_int_equal(f.flags & NETTXF_data_validated, NETTXF_data_validated);
	be_tx_push(&c.be);
	/* A buffer whose data leaves its page is refused; unsent buffers go back. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	bufs[0]->data = (char *)bufs[0]->page + 4000;
	bufs[0]->len = 200;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), -EINVAL);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	/* A buffer of a whole page is a fragment (a slot may end at the page's end). */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	fill(bufs[0]->data, PVNET_PAGE_SIZE, 4);
	memcpy(in, bufs[0]->data, PVNET_PAGE_SIZE);
	bufs[0]->len = PVNET_PAGE_SIZE;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, PVNET_PAGE_SIZE);
	assert_memory_equal(f.data, in, PVNET_PAGE_SIZE);
	be_tx_push(&c.be);
	/* A buffer that is not ours is refused too. */
	struct pvnet_buf fake = {.data = in, .len = 100, .page = in, .id = 0};
	struct pvnet_buf *fp = &fake;

	assert_int_equal(pvnet_tx_submit(c.vif, 0, &fp, 1), -EINVAL);

	/* RX: frames land in the granted pages, handed over as they are. */
	fill(in, 6000, 3);
	assert_int_equal(be_rx_frame(&c.be, in, 6000, 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	be_rx_push(&c.be);
	uint32_t posted_before = c.be.rx.sring->req_prod;

	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 4), 2);
	assert_int_equal(rx[0]->pkt_len, 6000);
	assert_int_equal(rx[0]->len, 4096);
	assert_non_null(rx[0]->next);
	assert_int_equal(rx[0]->next->len, 6000 - 4096);
	assert_null(rx[0]->next->next);
	assert_memory_equal(rx[0]->data, in, 4096);
	assert_memory_equal(rx[0]->next->data, in + 4096, 6000 - 4096);
	assert_int_equal(rx[1]->pkt_len, 100);
	/* The pages are the guest's own memory, not copies. */
	uintptr_t lo = (uintptr_t)pvnet_domain_page(c.dom, 0);
	uintptr_t hi = lo + (uintptr_t)pvnet_domain_pages(c.dom) * PVNET_PAGE_SIZE;

	assert_true((uintptr_t)rx[0]->data >= lo && (uintptr_t)rx[0]->data < hi);
	/* Held buffers are not re-posted; released ones are. */
	assert_int_equal(c.be.rx.sring->req_prod, posted_before);
	pvnet_rx_release(c.vif, 0, rx, 2);
	assert_int_equal(c.be.rx.sring->req_prod, posted_before + 3);
	ctx_fini(&c);
}

/*
 * The application spoils the page and id of every buffer it holds before
 * giving them back (the header says not to): the library goes by its own
 * record, so the copying calls still copy into and out of the granted
 * pages, and the next hand-out shows the true page again.  A chain that
 * runs into a pointer that is none of the queue's buffers ends there,
 * unread.
 */
static void test_zero_copy_spoiled_fields(void **state)
{
	enum { NTX = 32, NRX = PVNET_MAX_FRAGS + 1 };
	static uint8_t junk[2 * PVNET_PAGE_SIZE], in[200], out[200];
	static struct be_frame f;
	struct pvnet_buf *bufs[NTX], *rx[NRX];
	struct pvnet_pkt pkt;
	struct ctx c;
	int n;

	ctx_init(&c, NTX, NRX);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, NTX), NTX);
	for (int i = 0; i < NTX; i++) {
		bufs[i]->page = bufs[i]->data = junk;
		bufs[i]->id = 7;
	}
	pvnet_tx_free(c.vif, 0, bufs, NTX);
	for (int i = 0; i < NTX; i++) {
		fill(in, sizeof(in), (uint32_t)i);
		pkt = (struct pvnet_pkt){.data = in, .len = sizeof(in)};
		assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
		assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
		assert_memory_equal(f.data, in, sizeof(in));
	}
	be_tx_push(&c.be);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, NTX), NTX);
	for (int i = 0; i < NTX; i++) {
		assert_ptr_equal(bufs[i]->data, bufs[i]->page);
		assert_ptr_not_equal(bufs[i]->page, junk);
	}
	/* a foreign pointer after a buffer of ours: ours goes back, the other is not read */
	bufs[0]->next = (struct pvnet_buf *)(uintptr_t)0x10;
	pvnet_tx_free(c.vif, 0, bufs, 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs + NTX - 1, 1), 1);
	pvnet_tx_free(c.vif, 0, bufs, NTX);

	/* RX: every buffer spoiled and released, then frames copied out of them */
	fill(in, sizeof(in), 50);
	for (int i = 0; i < NRX; i++)
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	n = pvnet_rx_burst(c.vif, 0, rx, NRX);
	assert_int_equal(n, NRX);
	for (int i = 0; i < n; i++) {
		rx[i]->page = rx[i]->data = junk;
		rx[i]->id = 99;
	}
	pvnet_rx_release(c.vif, 0, rx, (unsigned int)n);
	for (int i = 0; i < NRX; i++) {
		fill(in, sizeof(in), 60 + (uint32_t)i);
		assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, sizeof(in));
		assert_memory_equal(out, in, sizeof(in));
	}
	ctx_fini(&c);
}

/*
 * A NULL entry in bufs[] is a malformed frame: refused with -EINVAL when it
 * comes first, else the call stops there and counts the frames before it
 * (pvnet_tx_submit() used to dereference it).
 */
/*
 * Buffers given back twice go back once: to the free list (TX), to the
 * ring (RX, where the same page at two slots would take two frames), a
 * chain looped back on itself included.
 */
static void test_zero_copy_given_back_twice(void **state)
{
	static uint8_t in[100];
	struct pvnet_buf *bufs[40], *chain[PVNET_MAX_FRAGS + 1], *rx[2];
	RING_IDX posted;
	struct ctx c;
	int n;

	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 2), 2);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	pvnet_tx_free(c.vif, 0, bufs, 1);
	bufs[1]->next = bufs[1];
	pvnet_tx_free(c.vif, 0, bufs + 1, 1);
	n = pvnet_tx_alloc(c.vif, 0, bufs, 40);
	assert_int_equal(n, 32);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(bufs[i], bufs[j]);
	pvnet_tx_free(c.vif, 0, bufs, (unsigned int)n);

	/* A chain of 19 buffers is more fragments than a frame may have: refused, nothing sent. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, chain, PVNET_MAX_FRAGS + 1), PVNET_MAX_FRAGS + 1);
	for (unsigned int i = 0; i <= PVNET_MAX_FRAGS; i++) {
		chain[i]->len = 100;
		chain[i]->next = i < PVNET_MAX_FRAGS ? chain[i + 1] : NULL;
	}
	assert_int_equal(pvnet_tx_submit(c.vif, 0, chain, 1), -EINVAL);
	assert_int_equal(c.be.tx.sring->req_prod, 0);
	pvnet_tx_free(c.vif, 0, chain, 1);

	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, sizeof(in), 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_rx_burst(c.vif, 0, rx, 2), 2);
	posted = c.be.rx.sring->req_prod;
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 1);
	pvnet_rx_release(c.vif, 0, rx, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 1);
	rx[1]->next = rx[1];
	pvnet_rx_release(c.vif, 0, rx + 1, 1);
	assert_int_equal(c.be.rx.sring->req_prod, posted + 2);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

static void test_zero_copy_null_entry(void **state)
{
	static struct be_frame f;
	struct pvnet_buf *bufs[3];
	RING_IDX prod;
	struct ctx c;

	ctx_init(&c, 32, 64);
	prod = c.be.tx.sring->req_prod;
	bufs[0] = NULL;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 1), -EINVAL);
	assert_int_equal(c.be.tx.sring->req_prod, prod);

	/* {valid, NULL, valid}: one frame goes, the third stays the application's. */
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, bufs, 1), 1);
	assert_int_equal(pvnet_tx_alloc(c.vif, 0, &bufs[2], 1), 1);
	fill(bufs[0]->data, 100, 1);
	bufs[0]->len = 100;
	bufs[1] = NULL;
	fill(bufs[2]->data, 200, 2);
	bufs[2]->len = 200;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 3), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 100);
	assert_false(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	be_tx_push(&c.be);
	bufs[0] = bufs[2];
	bufs[1] = NULL;
	assert_int_equal(pvnet_tx_submit(c.vif, 0, bufs, 2), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_int_equal(f.len, 200);
	be_tx_push(&c.be);
	assert_null(pvnet_vif_error(c.vif));
	assert_int_equal(stat(c.vif, "tx_packets"), 2);
	ctx_fini(&c);
}

/* ---- hostile backends: the vif breaks with a reason, nothing crashes ---- */

static void expect_broken(struct ctx *c, int rc, const char *text)
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

static void test_hostile_tx(void **state)
{
	static uint8_t frame[60], out[PVNET_MAX_FRAME];
	static struct be_frame f;
	struct pvnet_pkt pkt = {.data = frame, .len = 60}, rx;
	struct ctx c;

	/* A response for an id that is not in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31; /* never sent */
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/*
	 * Broken, then a reconnect that fails (the backend no longer
	 * answers): the vif is not connected, and has no reason to give.
	 */
	ctx_init_queues(&c, 32, 64, 1, 200);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	fb_stop(&c.fb);
	assert_int_equal(pvnet_vif_reconnect(c.vif), -ETIMEDOUT);
	assert_null(pvnet_vif_error(c.vif));
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), -ENOTCONN);
	fb_start(&c.fb);
	ctx_fini(&c);

	/* An id past the TX buffers (tx_buffers 32: ids 0..31). */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 32;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/* Broken, then the backend closes: we answer Closed, and the vif keeps its -EIO and reason. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	fb_set_state(&c.fb, XenbusStateClosing);
	for (int i = 0; i < 100 && pvnet_vif_process(c.vif) != XenbusStateClosed; i++)
		poll(&(struct pollfd){.fd = pvnet_vif_control_fd(c.vif), .events = POLLIN}, 1, 50);
	assert_int_equal(pvnet_vif_state(c.vif), XenbusStateClosed);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/* A data slot answered NULL, as only an extra may be: its id would stay in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_NULL));
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "answered NULL");
	ctx_fini(&c);

	/* The same id answered twice. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	*RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt) =
	    *RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1);
	c.be.tx.rsp_prod_pvt++;
	c.be.tx.req_cons++;
	/* (the frontend pushed only one request: the second response is also beyond it) */
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "beyond");
	ctx_fini(&c);

	/* Two frames in flight, the first one's id answered for both: the second is not in flight. */
	ctx_init(&c, 32, 64);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id =
	    RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 2)->id;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	ctx_fini(&c);

	/*
	 * Broken on queue 0 while queue 1 is idle, its events armed: queue 1's
	 * fd is readable at once, so that a thread asleep on it wakes and
	 * learns, rather than at its timeout or never.
	 */
	ctx_init_queues(&c, 32, 64, 2, 0);
	assert_int_equal(pvnet_recv(c.vif, 1, &rx, 1, out, sizeof(out)), 0);
	assert_int_equal(h_queue_readable(c.vif, 1), 0);
	assert_int_equal(pvnet_send(c.vif, 0, &pkt, 1), 1);
	assert_true(be_tx_frame(&c.be, &f, NETIF_RSP_OKAY));
	RING_GET_RESPONSE(&c.be.tx, c.be.tx.rsp_prod_pvt - 1)->id = 31;
	be_tx_push(&c.be);
	expect_broken(&c, pvnet_send(c.vif, 0, &pkt, 1), "not in flight");
	assert_int_equal(h_queue_readable(c.vif, 1), 1);
	assert_int_equal(pvnet_queue_wait(c.vif, 1, 0, -1), -EIO);
	ctx_fini(&c);

	/* rsp_prod far ahead of anything sent. */
	ctx_init(&c, 32, 64);
	c.be.tx.sring->rsp_prod = 1000;
	expect_broken(&c, pvnet_tx_alloc(c.vif, 0, (struct pvnet_buf *[1]){0}, 1), "beyond");
	ctx_fini(&c);
}

static void test_hostile_rx(void **state)
{
	static uint8_t in[9000], out[PVNET_MAX_FRAME];
	struct pvnet_pkt pkt;
	struct ctx c;

	/* rsp_prod far ahead of what was posted. */
	ctx_init(&c, 32, 64);
	c.be.rx.sring->rsp_prod = c.be.rx.sring->req_prod + 1;
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
	ctx_fini(&c);

	/*
	 * Responses only to requests we pushed: two buffers given back with 14
	 * requests outstanding are posted but not pushed (fewer than a largest
	 * frame's 19), and a backend answering at their slots, which it can
	 * guess, is beyond them.
	 */
	ctx_init(&c, 32, 64);
	{
		struct pvnet_buf *held[50];
		netif_rx_response_t *r;

		for (int i = 0; i < 50; i++)
			assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_rx_burst(c.vif, 0, held, 50), 50);
		pvnet_rx_release(c.vif, 0, held, 2);
		assert_int_equal(c.be.rx.sring->req_prod, 64);
		for (int i = 0; i < 14; i++)
			assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
		r = RING_GET_RESPONSE(&c.be.rx, 64);
		*r = (netif_rx_response_t){.id = 64, .offset = 0, .flags = 0, .status = 100};
		c.be.rx.rsp_prod_pvt = 65;
		be_rx_push(&c.be);
		expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
		pvnet_rx_release(c.vif, 0, held + 2, 48);
	}
	ctx_fini(&c);

	/* rsp_prod put back behind what was already consumed (index arithmetic wraps). */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	c.be.rx.sring->rsp_prod = 1; /* one behind rsp_cons */
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "beyond");
	ctx_fini(&c);

	/* Status past the page. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->offset = 3500;
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "past the end");
	ctx_fini(&c);

	/* A response id that is not the request's. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 1000, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->id = 17;
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "id");
	ctx_fini(&c);

	/* Endless more_data over every posted buffer. */
	ctx_init(&c, 32, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(be_rx_frame(&c.be, in, 100, NETRXF_more_data, NULL), 0);
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "more_data");
	ctx_fini(&c);

	/* An extra of an invalid type. */
	ctx_init(&c, 32, 64);
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_MAX};

	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, &ex), 0);
	be_rx_push(&c.be);
	expect_broken(&c, pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), "type");
	ctx_fini(&c);

	/* A backend-dropped frame is only counted; the next one arrives. */
	ctx_init(&c, 32, 64);
	assert_int_equal(be_rx_frame(&c.be, in, 100, 0, NULL), 0);
	RING_GET_RESPONSE(&c.be.rx, 0)->status = NETIF_RSP_ERROR;
	assert_int_equal(be_rx_frame(&c.be, in, 200, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 200);
	assert_int_equal(stat(c.vif, "rx_errors"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/*
	 * Half a frame (more_data, and the rest not pushed): nothing to wait
	 * for until a response past it comes, with or without a poll window;
	 * and (@stop) still nothing after a send stops on the TX side (the
	 * backend answers nothing): arming the completions keeps the half
	 * frame no work, or a loop that sends and receives would spin.
	 */
	for (int stop = 0; stop < 2; stop++) {
		struct pvnet_pkt small = {.data = in, .len = 60};

		ctx_init(&c, 32, 64);
		assert_int_equal(be_rx_frame(&c.be, in, 100, NETRXF_more_data, NULL), 0);
		be_rx_push(&c.be);
		for (unsigned int i = 0; stop && i < 32; i++)
			assert_int_equal(pvnet_send(c.vif, 0, &small, 1), 1);
		for (unsigned int round = 0; round < 3; round++) {
			assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
			if (stop)
				assert_int_equal(pvnet_send(c.vif, 0, &small, 1), 0);
			assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
			assert_int_equal(pvnet_queue_wait(c.vif, 0, 50, 0), 0);
		}
		assert_int_equal(be_rx_frame(&c.be, in + 100, 200, 0, NULL), 0);
		be_rx_push(&c.be);
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 1000), 1);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
		assert_int_equal(pkt.len, 300);
		assert_memory_equal(out, in, 300);
		/* Consumed: the queue is idle again, not "incomplete" for ever. */
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
		assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 0);
		assert_int_equal(pvnet_queue_wait(c.vif, 0, 0, 0), 0);
		assert_null(pvnet_vif_error(c.vif));
		ctx_fini(&c);
	}

	/* A GSO extra with segment size 0 (Linux netfront drops it too): counted, not delivered. */
	ctx_init(&c, 32, 64);
	ex = (struct netif_extra_info){.type = XEN_NETIF_EXTRA_TYPE_GSO};
	ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
	ex.u.gso.size = 0;
	fill(in, 3000, 9);
	assert_int_equal(be_rx_frame(&c.be, in, 3000, NETRXF_csum_blank, &ex), 0);
	assert_int_equal(be_rx_frame(&c.be, in, 300, 0, NULL), 0);
	be_rx_push(&c.be);
	assert_int_equal(pvnet_recv(c.vif, 0, &pkt, 1, out, sizeof(out)), 1);
	assert_int_equal(pkt.len, 300);
	assert_int_equal(pkt.gso_type, PVNET_GSO_NONE);
	assert_int_equal(stat(c.vif, "rx_errors"), 1);
	assert_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tx_sizes),
	    cmocka_unit_test(test_tx_ring_full_and_wrap),
	    cmocka_unit_test(test_tx_errors_counted),
	    cmocka_unit_test(test_tx_gso_needs_room_for_its_extra),
	    cmocka_unit_test(test_tx_stop_ends),
	    cmocka_unit_test(test_rx_sizes),
	    cmocka_unit_test(test_rx_burst_wrap_and_refill),
	    cmocka_unit_test(test_zero_copy),
	    cmocka_unit_test(test_zero_copy_spoiled_fields),
	    cmocka_unit_test(test_zero_copy_out_of_buffers_wakes),
	    cmocka_unit_test(test_zero_copy_given_back_twice),
	    cmocka_unit_test(test_zero_copy_null_entry),
	    cmocka_unit_test(test_wait_arms_late),
	    cmocka_unit_test(test_hostile_tx),
	    cmocka_unit_test(test_hostile_rx),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	pvnetd_exe = argv[1];
	next_devid = 0;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
