// SPDX-License-Identifier: MIT
/* test_steer_e2e.c - steering through a real pvnetd: control ring, Toeplitz RX queues, flow order */
#define XEN_NETIF_DEFINE_TOEPLITZ 1
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "front/front.h"
#include "../common/group_run.h"
#include "harness.h"

/*
 * Two frontend domains through pvnetd's netback and switch, nothing faked:
 * A sends, B receives.  B configures its RX steering over its control ring
 * (Toeplitz key, flags, mapping table) and checks where each flow lands
 * and the HASH extra it carries; hostile control requests are answered
 * without harm; and frames of flows sent by threads that hop between CPUs
 * arrive in order with the hash and xps-safe policies.
 */

static const char *pvnetd_exe;
static struct harness H;

static const uint8_t rss_key[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

#define NQ	  4u
#define FRAME_LEN 128u

struct pair {
	struct pvnet_domain *da, *db;
	struct pvnet_vif *a, *b;
	uint8_t mac_a[6], mac_b[6];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int pair_open(struct pair *p, bool ctrl)
{
	struct pvnet_vif_config cfg;
	int rc;

	memset(p, 0, sizeof(*p));
	if (pvnet_domain_create(H.run_dir, 4096, &p->da) ||
	    pvnet_domain_create(H.run_dir, 4096, &p->db))
		return -EIO;
	pvnet_vif_config_default(&cfg);
	cfg.queues = NQ;
	rc = pvnet_vif_create(p->da, &cfg, &p->a);
	cfg.ctrl_ring = ctrl;
	if (rc == 0)
		rc = pvnet_vif_create(p->db, &cfg, &p->b);
	if (rc == 0) {
		pvnet_vif_mac(p->a, p->mac_a);
		pvnet_vif_mac(p->b, p->mac_b);
	}
	return rc;
}

static void pair_close(struct pair *p)
{
	pvnet_vif_destroy(p->a);
	pvnet_vif_destroy(p->b);
	pvnet_domain_destroy(p->da);
	pvnet_domain_destroy(p->db);
}

/* An IPv4 frame of flow @flow (TCP when @tcp) carrying @seq, from A to B. */
static void make_frame(uint8_t *f, const struct pair *p, bool tcp, uint32_t flow, uint32_t seq)
{
	uint16_t sport = (uint16_t)(5000 + flow), dport = 80;

	memset(f, 0, FRAME_LEN);
	memcpy(f, p->mac_b, 6);
	memcpy(f + 6, p->mac_a, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = 0;
	f[17] = FRAME_LEN - 14;
	f[22] = 64;
	f[23] = tcp ? 6 : 17;
	memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	memcpy(f + 60, &flow, 4);
	memcpy(f + 64, &seq, 4);
}

/* B tells the switch where its MAC is. */
static void announce(struct pair *p)
{
	uint8_t f[64] = {0};
	struct pvnet_pkt pk = {.data = f, .len = sizeof(f)};

	memset(f, 0xff, 6);
	memcpy(f + 6, p->mac_b, 6);
	f[12] = 0x88;
	f[13] = 0xb5;
	assert_int_equal(pvnet_send(p->b, 0, &pk, 1), 1);
}

/* One received frame and the queue it came on. */
struct got {
	uint32_t flow, seq, hash;
	unsigned int queue;
	uint16_t flags;
	uint8_t hash_type;
};

/* recv_n() takes frames with pvnet_rx_burst() (zero copy), not pvnet_recv(). */
static bool recv_zerocopy;

/* Up to @max frames of queue @q as pvnet_pkts, zero copy or not (recv_zerocopy). */
static int recv_some(struct pair *p, unsigned int q, struct pvnet_pkt *pk, unsigned int max)
{
	static uint8_t buf[64 * 2048];
	static uint8_t copy[64][FRAME_LEN];
	struct pvnet_buf *b[64];
	int n;

	if (!recv_zerocopy)
		return pvnet_recv(p->b, q, pk, max, buf, sizeof(buf));
	n = pvnet_rx_burst(p->b, q, b, max);
	for (int i = 0; i < n; i++) {
		/* every frame here fits one buffer; the first bytes are all we read */
		pk[i] = (struct pvnet_pkt){.data = copy[i],
					   .len = b[i]->pkt_len,
					   .flags = b[i]->flags,
					   .hash_type = b[i]->hash_type,
					   .hash = b[i]->hash};
		memcpy(copy[i], b[i]->data, b[i]->len < FRAME_LEN ? b[i]->len : FRAME_LEN);
	}
	if (n > 0)
		pvnet_rx_release(p->b, q, b, (unsigned int)n);
	return n;
}

/* Receive @want frames on all of B's queues (5 s at most); returns how many. */
static unsigned int recv_n(struct pair *p, struct got *g, unsigned int want)
{
	unsigned int got = 0;

	for (uint64_t end = now_ms() + 5000; got < want && now_ms() < end;) {
		struct pollfd pf[NQ];

		for (unsigned int q = 0; q < NQ; q++) {
			struct pvnet_pkt pk[64];
			int n = recv_some(p, q, pk, 64);

			assert_true(n >= 0);
			for (int i = 0; i < n && got < want; i++) {
				const uint8_t *d = pk[i].data;

				if (pk[i].len != FRAME_LEN)
					continue; /* not ours (A's broadcasts) */
				memcpy(&g[got].flow, d + 60, 4);
				memcpy(&g[got].seq, d + 64, 4);
				g[got].queue = q;
				g[got].flags = pk[i].flags;
				g[got].hash = pk[i].hash;
				g[got].hash_type = pk[i].hash_type;
				got++;
			}
			pf[q] = (struct pollfd){.fd = pvnet_queue_fd(p->b, q), .events = POLLIN};
		}
		if (got < want)
			poll(pf, NQ, 10);
	}
	return got;
}

/* Toeplitz over the frame's addresses (and ports for TCP), as the backend must. */
static uint32_t expect_hash(bool tcp, uint32_t flow)
{
	uint8_t in[12] = {10, 0, 0, 1, 10, 0, 0, 2};
	uint16_t sport = (uint16_t)(5000 + flow);

	in[8] = (uint8_t)(sport >> 8);
	in[9] = (uint8_t)sport;
	in[10] = 0;
	in[11] = 80;
	return xen_netif_toeplitz_hash(rss_key, sizeof(rss_key), in, tcp ? 12 : 8);
}

static void test_toeplitz_steering(void **state)
{
	enum { FLOWS = 16, PER_FLOW = 8 };
	static uint8_t f[FLOWS * PER_FLOW][FRAME_LEN];
	static struct got g[FLOWS * PER_FLOW];
	struct pvnet_pkt pk[FLOWS * PER_FLOW];
	uint32_t table[128], flags = 0, size = 0;
	unsigned int n = 0, first_q[FLOWS];
	struct pair p;

	assert_int_equal(pair_open(&p, true), 0);
	assert_true(pvnet_vif_has_ctrl_ring(p.b));
	assert_false(pvnet_vif_has_ctrl_ring(p.a));
	assert_int_equal(pvnet_vif_set_hash_algorithm(p.a, PVNET_HASH_ALG_TOEPLITZ), -EOPNOTSUPP);
	assert_int_equal(pvnet_vif_queues(p.b), NQ);

	assert_int_equal(pvnet_vif_get_hash_flags(p.b, &flags), -EOPNOTSUPP);
	assert_int_equal(pvnet_vif_set_hash_algorithm(p.b, PVNET_HASH_ALG_TOEPLITZ), 0);
	assert_int_equal(pvnet_vif_get_hash_flags(p.b, &flags), 0);
	assert_int_equal(flags, PVNET_HASH_IPV4 | PVNET_HASH_IPV4_TCP | PVNET_HASH_IPV6 |
				    PVNET_HASH_IPV6_TCP);
	assert_int_equal(pvnet_vif_set_hash_key(p.b, rss_key, sizeof(rss_key)), 0);
	assert_int_equal(pvnet_vif_set_hash_flags(p.b, PVNET_HASH_IPV4 | PVNET_HASH_IPV4_TCP), 0);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(p.b, &size), 0);
	assert_int_equal(size, 128);
	for (unsigned int i = 0; i < 128; i++)
		table[i] = (i * 7 + 1) % NQ;
	assert_int_equal(pvnet_vif_set_hash_mapping(p.b, table, 128), 0);

	announce(&p);
	for (uint32_t s = 0; s < PER_FLOW; s++)
		for (uint32_t fl = 0; fl < FLOWS; fl++, n++) {
			make_frame(f[n], &p, fl % 2 == 0, fl, s);
			pk[n] = (struct pvnet_pkt){.data = f[n], .len = FRAME_LEN};
		}
	for (unsigned int sent = 0; sent < n;) {
		int rc = pvnet_send(p.a, sent % NQ, pk + sent, n - sent > 32 ? 32 : n - sent);

		assert_true(rc > 0);
		sent += (unsigned int)rc;
	}
	/* the hash reaches the application through both receive calls */
	for (int zc = 0; zc < 2; zc++) {
		if (zc) {
			for (unsigned int sent = 0; sent < n;) {
				int rc = pvnet_send(p.a, sent % NQ, pk + sent,
						    n - sent > 32 ? 32 : n - sent);

				assert_true(rc > 0);
				sent += (unsigned int)rc;
			}
		}
		recv_zerocopy = zc;
		assert_int_equal(recv_n(&p, g, n), n);
		recv_zerocopy = false;
		for (unsigned int i = 0; i < n; i++) {
			bool tcp = g[i].flow % 2 == 0;
			uint32_t h = expect_hash(tcp, g[i].flow);

			assert_true(g[i].flags & PVNET_PKT_HASH);
			assert_int_equal(g[i].hash, h);
			/* bit numbers: IPV4_TCP 1, IPV4 0 */
			assert_int_equal(g[i].hash_type, tcp ? 1 : 0);
			assert_int_equal(g[i].queue, table[h % 128]);
		}
	}

	/* Back to the backend's own flow hash: no HASH extra, each flow on one queue. */
	assert_int_equal(pvnet_vif_set_hash_algorithm(p.b, PVNET_HASH_ALG_NONE), 0);
	for (unsigned int sent = 0; sent < n;) {
		int rc = pvnet_send(p.a, 0, pk + sent, n - sent > 32 ? 32 : n - sent);

		assert_true(rc > 0);
		sent += (unsigned int)rc;
	}
	assert_int_equal(recv_n(&p, g, n), n);
	memset(first_q, 0xff, sizeof(first_q));
	for (unsigned int i = 0; i < n; i++) {
		assert_false(g[i].flags & PVNET_PKT_HASH);
		if (first_q[g[i].flow] == UINT32_MAX)
			first_q[g[i].flow] = g[i].queue;
		assert_int_equal(g[i].queue, first_q[g[i].flow]);
	}
	assert_null(pvnet_vif_error(p.b));
	pair_close(&p);
}

/* Hostile or malformed control requests: refused, the vif lives on. */
static void test_ctrl_bad_input(void **state)
{
	uint32_t data = 0, *page;
	int64_t ref;
	struct pair p;

	assert_int_equal(pair_open(&p, true), 0);
	ref = pvnet_vif_ctrl_page_ref(p.b, (void **)&page);
	assert_true(ref >= 0);
#define CTRL(t, d0, d1, d2) pvnet_vif_ctrl(p.b, XEN_NETIF_CTRL_TYPE_##t, d0, d1, d2, &data)
	/* flags before an algorithm; unknown algorithm; unknown flag bits */
	assert_int_equal(CTRL(SET_HASH_FLAGS, 1, 0, 0), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_ALGORITHM, 7, 0, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_ALGORITHM, 1, 0, 0), 0);
	assert_int_equal(CTRL(SET_HASH_FLAGS, 0x10, 0, 0), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	/* key: too long (netif.h's overflow), bad gref, gref of another domain's numbering */
	assert_int_equal(CTRL(SET_HASH_KEY, (uint32_t)ref, 41, 0),
			 XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW);
	assert_int_equal(CTRL(SET_HASH_KEY, 0xfffff, 40, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_KEY, UINT32_MAX, 4, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_KEY, (uint32_t)ref, 40, 0), 0);
	/* through libpvnet's call: the backend's overflow as -ENOSPC */
	{
		uint8_t long_key[41] = {0};

		assert_int_equal(pvnet_vif_set_hash_key(p.b, long_key, sizeof(long_key)), -ENOSPC);
	}
	/* mapping: size bound, then offsets and lengths that overflow or overrun */
	assert_int_equal(CTRL(GET_HASH_MAPPING_SIZE, 0, 0, 0), 0);
	assert_int_equal(data, 128);
	assert_int_equal(CTRL(SET_HASH_MAPPING_SIZE, 129, 0, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_MAPPING_SIZE, 8, 0, 0), 0);
	for (unsigned int i = 0; i < 8; i++)
		page[i] = i % NQ;
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 2, 7),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 2, UINT32_MAX),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, UINT32_MAX, 2),
			 XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW);
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 9, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(CTRL(SET_HASH_MAPPING, 0xfffff, 8, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	/* a queue number out of range */
	page[3] = NQ;
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 8, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	page[3] = UINT32_MAX;
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 8, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	page[3] = 3;
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 8, 0), 0);
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 1, 7), 0);
	assert_int_equal(CTRL(SET_HASH_MAPPING, (uint32_t)ref, 0, 8), 0);
	/* types we do not implement, and garbage */
	assert_int_equal(CTRL(INVALID, 0, 0, 0), XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
	assert_int_equal(CTRL(GET_GREF_MAPPING_SIZE, 0, 0, 0), XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
	assert_int_equal(CTRL(ADD_GREF_MAPPING, 0, (uint32_t)ref, 1),
			 XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
	assert_int_equal(CTRL(DEL_GREF_MAPPING, 0, (uint32_t)ref, 1),
			 XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
	assert_int_equal(pvnet_vif_ctrl(p.b, 0xffff, 1, 2, 3, &data),
			 XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
#undef CTRL
	assert_null(pvnet_vif_error(p.b));
	assert_int_equal(pvnet_vif_state(p.b), XenbusStateConnected);
	pair_close(&p);
}

/* A full ring of requests at once, then a producer far ahead (fatal for the vif only). */
static void test_ctrl_flood(void **state)
{
	struct pair p;
	struct front_ctrl *c;
	unsigned int n;
	uint32_t data = 0;
	RING_IDX prod;
	uint64_t end;

	assert_int_equal(pair_open(&p, true), 0);
	c = &p.b->ctrl;
	n = RING_SIZE(&c->ring);
	assert_int_equal(n, 128);
	for (unsigned int i = 0; i < n; i++) {
		struct xen_netif_ctrl_request *r = RING_GET_REQUEST(&c->ring, c->ring.req_prod_pvt);

		*r = (struct xen_netif_ctrl_request){
		    .id = (uint16_t)(1000 + i),
		    .type = i % 2 ? 99 : XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE};
		c->ring.req_prod_pvt++;
	}
	__atomic_store_n(&c->ring.sring->req_prod, c->ring.req_prod_pvt, __ATOMIC_SEQ_CST);
	pvnet_evtchn_notify(&c->ev);
	end = now_ms() + 5000;
	do {
		prod = __atomic_load_n(&c->ring.sring->rsp_prod, __ATOMIC_ACQUIRE);
	} while (prod != c->ring.req_prod_pvt && now_ms() < end && (usleep(1000), 1));
	assert_int_equal(prod, c->ring.req_prod_pvt);
	for (unsigned int i = 0; i < n; i++) {
		struct xen_netif_ctrl_response r;

		RING_COPY_RESPONSE(&c->ring, c->ring.rsp_cons, &r);
		c->ring.rsp_cons++;
		assert_int_equal(r.id, 1000 + i);
		assert_int_equal(r.type, i % 2 ? 99 : XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE);
		assert_int_equal(r.status, i % 2 ? XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED
						 : XEN_NETIF_CTRL_STATUS_SUCCESS);
		if (i % 2 == 0)
			assert_int_equal(r.data, 128);
	}
	/* the ring still works after the flood */
	assert_int_equal(pvnet_vif_get_hash_mapping_size(p.b, &data), 0);

	/* a producer more than a ring ahead: the backend disables this vif */
	__atomic_store_n(&c->ring.sring->req_prod, c->ring.req_prod_pvt + 1000, __ATOMIC_SEQ_CST);
	pvnet_evtchn_notify(&c->ev);
	end = now_ms() + 5000;
	while (now_ms() < end && pvnet_vif_backend_state(p.b) != XenbusStateClosing &&
	       pvnet_vif_backend_state(p.b) != XenbusStateClosed) {
		struct pollfd pf = {.fd = pvnet_vif_control_fd(p.b), .events = POLLIN};

		poll(&pf, 1, 50);
		pvnet_vif_process(p.b);
	}
	assert_true(pvnet_vif_backend_state(p.b) == XenbusStateClosing ||
		    pvnet_vif_backend_state(p.b) == XenbusStateClosed);
	/* A is untouched */
	assert_int_equal(pvnet_vif_backend_state(p.a), XenbusStateConnected);
	pair_close(&p);
}

/* Adaptive waiting on a queue: nothing there -> 0; a frame -> 1 on its queue. */
static void test_queue_wait(void **state)
{
	static uint8_t f[FRAME_LEN], buf[64 * 2048];
	struct pvnet_pkt pk = {.data = f, .len = FRAME_LEN}, in[4];
	int found = -1;
	struct pair p;
	uint64_t end;

	assert_int_equal(pair_open(&p, false), 0);
	announce(&p);
	/* reap the announcement's TX response: a pending response also counts as work */
	for (end = now_ms() + 5000;
	     p.b->queues[0].tx.req_prod_pvt != p.b->queues[0].tx.rsp_cons && now_ms() < end;)
		if (pvnet_send(p.b, 0, &pk, 0) == 0)
			usleep(1000);
	for (unsigned int q = 0; q < NQ; q++) {
		while (pvnet_recv(p.b, q, in, 4, buf, sizeof(buf)) > 0)
			;
		assert_int_equal(pvnet_queue_wait(p.b, q, 200, 0), 0);
	}
	assert_int_equal(pvnet_queue_wait(p.b, NQ, 0, 0), -EINVAL);
	make_frame(f, &p, true, 1, 0);
	assert_int_equal(pvnet_send(p.a, 0, &pk, 1), 1);
	for (end = now_ms() + 5000; found < 0 && now_ms() < end;)
		for (unsigned int q = 0; q < NQ && found < 0; q++)
			if (pvnet_queue_wait(p.b, q, 1000, 0) == 1)
				found = (int)q;
	assert_true(found >= 0);
	assert_int_equal(pvnet_recv(p.b, (unsigned int)found, in, 4, buf, sizeof(buf)), 1);
	assert_int_equal(in[0].len, FRAME_LEN);
	pair_close(&p);
}

/* ---- flows from CPU-hopping sender threads, sequence checked per flow ---- */

enum { SENDERS = 4, FLOWS_PER = 2, PER_FLOW = 3000, BURST = 8, HOP_MS = 2 };

struct sender {
	struct pair *p;
	unsigned int index;
	int rc;
	pthread_t thread;
};

static _Atomic unsigned int senders_done;

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	static _Thread_local uint8_t f[BURST][FRAME_LEN];
	struct pvnet_pkt pk[BURST];
	uint32_t seq[FLOWS_PER] = {0};
	uint64_t hop = now_ms() + HOP_MS, end = now_ms() + 60000;
	unsigned int cpu = s->index & 1;

	while (seq[FLOWS_PER - 1] < PER_FLOW && now_ms() < end) {
		unsigned int n = 0, sent = 0;

		if (now_ms() >= hop) {
			cpu_set_t set;

			cpu ^= 1;
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set); /* one CPU only: harmless */
			hop = now_ms() + HOP_MS;
		}
		for (; n < BURST; n++) {
			uint32_t k = n % FLOWS_PER, flow = s->index * FLOWS_PER + k;

			make_frame(f[n], s->p, k == 0, flow, seq[k]++);
			pk[n] = (struct pvnet_pkt){.data = f[n], .len = FRAME_LEN};
		}
		while (sent < n && now_ms() < end) {
			int rc = pvnet_send_flow(s->p->a, pk + sent, n - sent);

			if (rc < 0) {
				s->rc = rc;
				goto out;
			}
			sent += (unsigned int)rc;
			if (sent < n)
				sched_yield(); /* ring full: completions come back shortly */
		}
	}
out:
	atomic_fetch_add(&senders_done, 1);
	return NULL;
}

/* Run the senders with @policy; returns out-of-order frames, *got the frames received. */
static unsigned int run_order(int policy, unsigned int *got)
{
	static uint8_t buf[64 * 2048];
	struct sender s[SENDERS];
	int64_t last[SENDERS * FLOWS_PER];
	unsigned int ooo = 0;
	uint64_t quiet;
	struct pair p;

	*got = 0;
	assert_int_equal(pair_open(&p, false), 0);
	assert_int_equal(pvnet_vif_queues(p.a), NQ);
	assert_int_equal(pvnet_vif_set_steering(p.a, policy), 0);
	assert_int_equal(pvnet_vif_steering(p.a), policy);
	announce(&p);
	for (unsigned int i = 0; i < SENDERS * FLOWS_PER; i++)
		last[i] = -1;
	atomic_store(&senders_done, 0);
	for (unsigned int i = 0; i < SENDERS; i++) {
		s[i] = (struct sender){.p = &p, .index = i};
		assert_int_equal(pthread_create(&s[i].thread, NULL, sender_main, &s[i]), 0);
	}
	quiet = now_ms() + 500;
	while (atomic_load(&senders_done) < SENDERS || now_ms() < quiet) {
		struct pollfd pf[NQ];

		for (unsigned int q = 0; q < NQ; q++) {
			struct pvnet_pkt pk[64];
			int n = pvnet_recv(p.b, q, pk, 64, buf, sizeof(buf));

			assert_true(n >= 0);
			for (int i = 0; i < n; i++) {
				uint32_t flow, seq;

				if (pk[i].len != FRAME_LEN)
					continue;
				memcpy(&flow, (const uint8_t *)pk[i].data + 60, 4);
				memcpy(&seq, (const uint8_t *)pk[i].data + 64, 4);
				assert_true(flow < SENDERS * FLOWS_PER);
				if ((int64_t)seq <= last[flow])
					ooo++;
				else
					last[flow] = seq;
				(*got)++;
			}
			if (n > 0)
				quiet = now_ms() + 500;
			pf[q] = (struct pollfd){.fd = pvnet_queue_fd(p.b, q), .events = POLLIN};
		}
		poll(pf, NQ, 5);
	}
	for (unsigned int i = 0; i < SENDERS; i++) {
		pthread_join(s[i].thread, NULL);
		assert_int_equal(s[i].rc, 0);
	}
	assert_null(pvnet_vif_error(p.a));
	pair_close(&p);
	return ooo;
}

static void test_order_hash(void **state)
{
	unsigned int got, ooo = run_order(PVNET_STEER_HASH, &got);

	fprintf(stderr, "# hash: %u frames received, %u out of order\n", got, ooo);
	assert_true(got > 0);
	assert_int_equal(ooo, 0);
}

static void test_order_xps_safe(void **state)
{
	unsigned int got, ooo = run_order(PVNET_STEER_XPS_SAFE, &got);

	fprintf(stderr, "# xps-safe: %u frames received, %u out of order\n", got, ooo);
	assert_true(got > 0);
	assert_int_equal(ooo, 0);
}

/* xps may reorder: a benchmark figure, not an assertion. */
static void test_order_xps(void **state)
{
	unsigned int got, ooo = run_order(PVNET_STEER_XPS, &got);

	fprintf(stderr, "# xps: %u frames received, %u out of order\n", got, ooo);
	assert_true(got > 0);
}

static int group_setup(void **state)
{
	return h_start(&H, pvnetd_exe);
}

/* The ordering tests again with pvnetd answering TX at once (copy mode). */
static int group_setup_copy(void **state)
{
	return h_start_mode(&H, pvnetd_exe, "copy");
}

static int group_teardown(void **state)
{
	return h_stop(&H);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_toeplitz_steering), cmocka_unit_test(test_ctrl_bad_input),
	    cmocka_unit_test(test_ctrl_flood),	      cmocka_unit_test(test_queue_wait),
	    cmocka_unit_test(test_order_hash),	      cmocka_unit_test(test_order_xps_safe),
	    cmocka_unit_test(test_order_xps),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	const struct CMUnitTest copy_tests[] = {
	    cmocka_unit_test(test_order_hash),
	    cmocka_unit_test(test_order_xps_safe),
	    cmocka_unit_test(test_order_xps),
	};
	int rc;

	pvnetd_exe = argv[1];
	rc = group_run_tests_name("map", tests, group_setup, group_teardown);
	return rc | group_run_tests_name("copy", copy_tests, group_setup_copy, group_teardown);
}
