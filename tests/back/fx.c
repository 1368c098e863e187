// SPDX-License-Identifier: MIT
// fx.c - the data-path tests' fixture: three fake frontends on one backend, and a checked transfer

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fx.h"

const uint8_t mac_a[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0a};
const uint8_t mac_b[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0b};
const uint8_t mac_c[6] = {0x00, 0x16, 0x3e, 0x00, 0x00, 0x0c};

struct fx *fx_new(enum back_tx_mode mode, const struct back_config *cfg, const struct ff_opts *oa,
		  const struct ff_opts *ob)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct ff_opts def = FF_OPTS_DEFAULT;

	assert_non_null(x);
	assert_int_equal(world_create(&x->w, mode, cfg), 0);
	assert_int_equal(ff_create(&x->a, &x->w, 0), 0);
	assert_int_equal(ff_create(&x->b, &x->w, 0), 0);
	assert_int_equal(ff_create(&x->c, &x->w, 0), 0);
	assert_int_equal(back_vif_create(x->w.back, x->a.domid, 0, mac_a, &x->va), 0);
	assert_int_equal(back_vif_create(x->w.back, x->b.domid, 0, mac_b, &x->vb), 0);
	assert_int_equal(back_vif_create(x->w.back, x->c.domid, 0, mac_c, &x->vc), 0);
	assert_int_equal(ff_connect(&x->a, oa ? oa : &def), 0);
	assert_int_equal(ff_connect(&x->b, ob ? ob : &def), 0);
	assert_int_equal(ff_connect(&x->c, &def), 0);
	assert_int_equal(back_vif_state(x->va), XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vb), XenbusStateConnected);
	assert_int_equal(back_vif_state(x->vc), XenbusStateConnected);
	return x;
}

void fx_free(struct fx *x)
{
	struct hv_leak leak;
	struct hv_stats st;

	back_vif_destroy(x->va);
	back_vif_destroy(x->vb);
	back_vif_destroy(x->vc);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.maps_in_use, 0);
	ff_destroy(&x->a, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	ff_destroy(&x->b, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	ff_destroy(&x->c, &leak);
	assert_int_equal(leak.maps_in_use, 0);
	hv_stats(x->w.hv, &st);
	assert_int_equal(st.evtchns_open, 0);
	world_destroy(&x->w);
	free(x);
}

uint32_t len_of(uint32_t i, uint32_t min, uint32_t max)
{
	return min + (uint32_t)((i * 2654435761u) % (max - min + 1));
}

/*
 * netback's side of one queue, read racily from the test thread: what a
 * hang left behind (who sleeps, with what queued, waiting for what).
 */
static void dump_queue(const char *name, struct back_queue *q)
{
	print_message("%s back: sleeping %d tx_stalled %d inflight %u tx cons %u rsp %u event %u | "
		      "rx stalled %d blocked %d wait_for %u cons %u rsp %u event %u rxq %lu..%lu "
		      "gen %u seen %u\n",
		      name, (int)atomic_load(&q->sleeping),
		      (int)__atomic_load_n(&q->tx_stalled, __ATOMIC_RELAXED),
		      atomic_load(&q->inflight), __atomic_load_n(&q->tx.req_cons, __ATOMIC_RELAXED),
		      __atomic_load_n(&q->tx.rsp_prod_pvt, __ATOMIC_RELAXED),
		      __atomic_load_n(&q->tx.sring->req_event, __ATOMIC_RELAXED),
		      (int)atomic_load(&q->rx_stalled), (int)atomic_load(&q->rx_blocked),
		      atomic_load(&q->rx_wait_for),
		      __atomic_load_n(&q->rx.req_cons, __ATOMIC_RELAXED),
		      __atomic_load_n(&q->rx.rsp_prod_pvt, __ATOMIC_RELAXED),
		      __atomic_load_n(&q->rx.sring->req_event, __ATOMIC_RELAXED),
		      (unsigned long)atomic_load_explicit(&q->rxq.head, memory_order_relaxed),
		      (unsigned long)atomic_load(&q->rxq.tail), atomic_load(&q->rx_gen),
		      __atomic_load_n(&q->rx_gen_seen, __ATOMIC_RELAXED));
}

void dump(struct fx *x, unsigned int recvd, uint32_t want, int got)
{
	unsigned int ns;
	const struct back_stat_desc *d = back_stats_names(&ns);

	print_message("frame %u: want %u got %d\n", recvd, want, got);
	for (unsigned int k = 0; k < ns; k++)
		print_message("%-20s a %6lu b %6lu c %6lu\n", d[k].name,
			      (unsigned long)back_vif_stat(x->va, 0, d[k].name),
			      (unsigned long)back_vif_stat(x->vb, 0, d[k].name),
			      (unsigned long)back_vif_stat(x->vc, 0, d[k].name));
	print_message("A tx: pvt %u prod %u rsp %u cons %u | B rx: pvt %u prod %u rsp %u cons %u\n",
		      x->a.q[0].tx.req_prod_pvt, x->a.q[0].tx.sring->req_prod,
		      x->a.q[0].tx.sring->rsp_prod, x->a.q[0].tx.rsp_cons,
		      x->b.q[0].rx.req_prod_pvt, x->b.q[0].rx.sring->req_prod,
		      x->b.q[0].rx.sring->rsp_prod, x->b.q[0].rx.rsp_cons);
	dump_queue("A", x->va->q[0]);
	dump_queue("B", x->vb->q[0]);
}

/*
 * Send @count frames from @tx to @rx (queue 0 each) and check every one
 * arrives bit-exact, in order, with the right GSO/checksum information;
 * every TX request is answered OKAY.  Returns frames received.
 */
unsigned int transfer(struct fx *x, struct ff *tx, const uint8_t *src, struct ff *rx,
		      const uint8_t *dst, unsigned int count, uint32_t min, uint32_t max,
		      const struct ff_txopt *opt, uint32_t seed0)
{
	unsigned int sent = 0, recvd = 0;
	uint64_t end = test_now_ms() + WAIT_MS;
	struct ff_rxinfo info;
	uint32_t ok0, err0, inflight = 0;

	ff_tx_reap(tx, 0);
	ok0 = tx->q[0].tx_rsp_okay;
	err0 = tx->q[0].tx_rsp_error;
	while ((recvd < count || tx->q[0].tx.rsp_cons != tx->q[0].tx.req_prod_pvt) &&
	       test_now_ms() < end) {
		bool progress = false;
		int n;

		ff_tx_reap(tx, 0);
		while (sent < count) {
			uint32_t len = len_of(seed0 + sent, min, max);

			/*
			 * The switch has no backpressure: keep what is in flight
			 * below the receiver's RX queue bound, or frames are
			 * (rightly) dropped as rx_queue_full.
			 */
			if (inflight + len > MAX_INFLIGHT && sent > recvd)
				break;
			inflight += len;

			make_frame_opt(x->buf, len, dst, src, seed0 + sent, opt);
			if (ff_tx_frame(tx, 0, x->buf, len, opt) < 0)
				break;
			sent++;
			progress = true;
		}
		ff_tx_push(tx, 0);
		ff_rx_post(rx, 0, FF_RING);
		while ((n = ff_rx_recv(rx, 0, x->rbuf, sizeof(x->rbuf), &info)) != -EAGAIN) {
			uint32_t len = len_of(seed0 + recvd, min, max);

			if (n != (int)len)
				dump(x, recvd, len, n);
			assert_int_equal(n, (int)len);
			make_frame_opt(x->buf, len, dst, src, seed0 + recvd, opt);
			if (memcmp(x->buf, x->rbuf, len) != 0) {
				uint32_t d = 0;

				while (x->buf[d] == x->rbuf[d])
					d++;
				fail_msg("frame %u (%u bytes, %u slots) corrupt at %u", recvd, len,
					 info.slots, d);
			}
			if (opt && opt->gso_type) {
				assert_int_equal(info.gso_type, opt->gso_type);
				assert_int_equal(info.gso_size, opt->gso_size);
			}
			if (opt && (opt->flags & NETTXF_csum_blank))
				assert_int_equal(info.flags &
						     (NETRXF_csum_blank | NETRXF_data_validated),
						 NETRXF_csum_blank | NETRXF_data_validated);
			/* a checksum the sender validated arrives validated, and not blank */
			else if (opt && (opt->flags & NETTXF_data_validated))
				assert_int_equal(info.flags &
						     (NETRXF_csum_blank | NETRXF_data_validated),
						 NETRXF_data_validated);
			else
				assert_int_equal(
				    info.flags & (NETRXF_csum_blank | NETRXF_data_validated), 0);
			inflight -= len;
			recvd++;
			progress = true;
		}
		if (!progress)
			loop_run_once(x->w.loop, 1);
	}
	ff_tx_reap(tx, 0);
	if (recvd != count)
		dump(x, recvd, 0, 0);
	assert_int_equal(recvd, count);
	assert_int_equal(tx->q[0].tx_rsp_error - err0, 0);
	assert_true(tx->q[0].tx_rsp_okay - ok0 >= sent);
	assert_int_equal(tx->q[0].tx.rsp_cons, tx->q[0].tx.req_prod_pvt);
	return recvd;
}

void send_only(struct fx *x, struct ff *tx, const uint8_t *src, const uint8_t *dst, unsigned int n,
	       uint32_t len, uint32_t seed0)
{
	for (unsigned int i = 0; i < n; i++) {
		make_frame(x->buf, len, dst, src, seed0 + i);
		assert_int_equal(ff_tx_frame(tx, 0, x->buf, len, NULL), 0);
	}
	ff_tx_push(tx, 0);
}

unsigned int answered(struct ff *f)
{
	ff_tx_reap(f, 0);
	return f->q[0].tx_rsp_okay + f->q[0].tx_rsp_error;
}

const uint8_t fx_hash_key[BACK_HASH_KEY_MAX] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

/* The test thread is the configuration's one writer: these tests have no control ring. */
void fx_hash_on(struct back_vif *vif)
{
	assert_int_equal(back_hash_set_alg(&vif->hash, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ),
			 XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(back_hash_set_flags(&vif->hash, BACK_HASH_TYPES_ALL),
			 XEN_NETIF_CTRL_STATUS_SUCCESS);
	assert_int_equal(back_hash_set_key(&vif->hash, fx_hash_key, sizeof(fx_hash_key)),
			 XEN_NETIF_CTRL_STATUS_SUCCESS);
}

_Atomic unsigned int fx_lent_done;

static void lent_put(struct sw_pkt *pkt)
{
	(void)pkt;
	atomic_fetch_add(&fx_lent_done, 1);
}

struct sw_pkt *fx_lend(struct sw_pkt *pkt, uint8_t *frame, uint32_t len, const uint8_t *src,
		       uint32_t i)
{
	make_frame(frame, len, mac_b, src, i);
	*pkt = (struct sw_pkt){.hdr = frame, .hdr_len = 60, .nfrags = 1, .len = len};
	pkt->frag[0] = (struct sw_pkt_frag){.base = frame, .len = len};
	sw_pkt_init(pkt, lent_put);
	return pkt;
}

static unsigned int lent_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	(void)p;
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n;
}

const struct sw_port_ops fx_lender_ops = {.xmit = lent_xmit};

void fx_reconnect(struct ff *f, struct back_vif *vif, const struct ff_opts *o)
{
	ff_set_state(f, XenbusStateClosing);
	ff_set_state(f, XenbusStateClosed);
	assert_int_equal(back_vif_state(vif), XenbusStateClosed);
	ff_teardown(f);
	ff_set_state(f, XenbusStateInitialising);
	assert_int_equal(ff_connect(f, o), 0);
	assert_int_equal(back_vif_state(vif), XenbusStateConnected);
}
