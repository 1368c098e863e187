// SPDX-License-Identifier: MIT
/*
 * test_rx_ring.c - what netback writes on a guest's RX ring: the slots a
 * frame takes, counted to the one (data pages, GSO and HASH extras, the
 * bound per frame), and the id of the request each response answers
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "../common/frame_builder.h"
#include "back/rx.h"
#include "fx.h"

_Static_assert(BACK_RX_MAX_SLOTS + 1 <= SW_PKT_MAX_FRAGS, "one page a fragment below");

static struct fb f;
static uint8_t rbuf[(BACK_RX_MAX_SLOTS + 1) * BACK_PAGE_SIZE];

/* An IPv4 TCP frame of @len bytes from A to B. */
static void tcp4(uint32_t len, uint8_t seed)
{
	fb_build(&f, 4, IPPROTO_TCP, false, len - 14 - 20 - 20, seed);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
}

static RING_IDX rsp_prod(struct ff *ff)
{
	return __atomic_load_n(&ff->q[0].rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
}

/*
 * A sends f with @opt to B, which hashes; B has @need - 1 buffers posted,
 * one short: the frame must wait, and ask to be woken at exactly @need,
 * then arrive in exactly @need slots with its HASH extra.
 */
static void takes_slots(struct fx *x, const struct ff_txopt *opt, unsigned int need)
{
	struct ff_queue *b = &x->b.q[0];
	uint64_t waits = back_vif_stat(x->vb, 0, "rx_waits");
	RING_IDX prod0 = rsp_prod(&x->b);
	uint8_t in[BACK_HASH_INPUT_MAX], type;
	unsigned int inlen;
	uint32_t hash;
	struct ff_rxinfo info;
	int n = -EAGAIN;

	type = back_hash_input(f.b, f.len, BACK_HASH_TYPES_ALL, in, &inlen);
	assert_int_not_equal(type, BACK_HASH_TYPE_NONE);
	hash = back_hash_toeplitz(fx_hash_key, BACK_HASH_KEY_MAX, in, inlen);
	assert_int_equal(ff_rx_post(&x->b, 0, need - 1), need - 1);
	assert_int_equal(ff_tx_frame(&x->a, 0, f.b, f.len, opt), 0);
	ff_tx_push(&x->a, 0);
	if (!WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_waits") == waits + 1, WAIT_MS)) {
		dump(x, 0, need, 0);
		fail_msg("a frame of %u slots did not wait with %u posted", need, need - 1);
	}
	assert_int_equal(rsp_prod(&x->b), prod0);
	assert_int_equal(__atomic_load_n(&b->rx.sring->req_event, __ATOMIC_SEQ_CST),
			 b->rx.rsp_cons + need);
	assert_int_equal(ff_rx_post(&x->b, 0, 1), 1);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, rbuf, sizeof(rbuf), &info)) != -EAGAIN, WAIT_MS));
	assert_int_equal(n, (int)f.len);
	assert_memory_equal(rbuf, f.b, f.len);
	assert_int_equal(info.slots, need);
	assert_int_equal(rsp_prod(&x->b), prod0 + need);
	assert_true(info.hash);
	assert_int_equal(info.hash_type, type);
	assert_int_equal(info.hash_alg, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
	assert_int_equal(info.hash_value, hash);
	assert_int_equal(info.gso_type, opt ? opt->gso_type : 0);
}

/* A HASH extra takes a slot of its own, with or without a GSO extra before it. */
static void test_hash_extra_slot(void **state)
{
	struct ff_txopt gso = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 1448,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);

	(void)state;
	fx_hash_on(x->vb);
	tcp4(3000, 1);
	takes_slots(x, NULL, 1 + 1);
	tcp4(9000, 2);
	takes_slots(x, NULL, 3 + 1);
	tcp4(5000, 3);
	takes_slots(x, &gso, 2 + 1 + 1);
	tcp4(65535, 4); /* the most pages a frame has */
	takes_slots(x, NULL, 16 + 1);
	/* The extra's type is the type's bit number, whichever type applies. */
	fb_build(&f, 6, IPPROTO_TCP, false, 5000, 5);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
	takes_slots(x, NULL, 2 + 1);
	fb_build(&f, 6, IPPROTO_UDP, false, 100, 6);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
	takes_slots(x, NULL, 1 + 1);
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 7);
	memcpy(f.b, mac_b, 6);
	memcpy(f.b + 6, mac_a, 6);
	takes_slots(x, NULL, 1 + 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 7);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 0);
	fx_free(x);
}

/*
 * The largest TSO frame to a guest that hashes: 16 pages, a GSO and a HASH
 * extra.  Linux's netback sends it so, and netfronts take 18 data slots
 * besides their extras.
 */
static void test_gso_hash_64k(void **state)
{
	struct ff_txopt gso = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 1448,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	struct fx *x = fx_new(BACK_TX_MAP, NULL, NULL, NULL);

	(void)state;
	fx_hash_on(x->vb);
	tcp4(65535, 5);
	takes_slots(x, &gso, 16 + 1 + 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_oversize"), 0);
	fx_free(x);
}

/*
 * Frames handed to B's port directly, as the switch would: longer than any
 * sender makes (TX and the uplinks stop at 65535 bytes), so that the slot
 * bound per frame is what stands between them and the ring.
 */
static uint8_t big[(BACK_RX_MAX_SLOTS + 1) * BACK_PAGE_SIZE];
static struct sw_pkt big_pkt[2];
static _Atomic unsigned int big_done;

static void big_put(struct sw_pkt *pkt)
{
	(void)pkt;
	atomic_fetch_add(&big_done, 1);
}

static void xmit_big(struct fx *x, struct sw_pkt *pkt, uint32_t len)
{
	*pkt = (struct sw_pkt){.hdr = big, .hdr_len = SW_ETH_HLEN, .len = len};
	for (uint32_t off = 0; off < len; off += BACK_PAGE_SIZE)
		pkt->frag[pkt->nfrags++] = (struct sw_pkt_frag){
		    big + off, len - off < BACK_PAGE_SIZE ? len - off : BACK_PAGE_SIZE};
	sw_pkt_init(pkt, big_put);
	assert_int_equal(x->vb->port->ops->xmit(x->vb->port, &pkt, 1), 1);
}

/* BACK_RX_MAX_SLOTS slots are delivered; a frame needing one more is rx_oversize. */
static void test_max_slots(void **state)
{
	const uint32_t max = BACK_RX_MAX_SLOTS * BACK_PAGE_SIZE;
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct ff_rxinfo info;
	RING_IDX prod;
	int n = -EAGAIN;

	(void)state;
	for (uint32_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + (i >> 12));
	memcpy(big, mac_b, 6);
	memcpy(big + 6, mac_a, 6);
	ff_rx_post(&x->b, 0, FF_RING);
	xmit_big(x, &big_pkt[0], max);
	assert_true(WAIT_UNTIL(
	    &x->w, (n = ff_rx_recv(&x->b, 0, rbuf, sizeof(rbuf), &info)) != -EAGAIN, WAIT_MS));
	assert_int_equal(n, (int)max);
	assert_int_equal(info.slots, BACK_RX_MAX_SLOTS);
	assert_memory_equal(rbuf, big, max);
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&big_done) == 1, WAIT_MS));

	prod = rsp_prod(&x->b);
	xmit_big(x, &big_pkt[1], max + 1);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_oversize") == 1, WAIT_MS));
	assert_true(WAIT_UNTIL(&x->w, atomic_load(&big_done) == 2, WAIT_MS));
	assert_int_equal(rsp_prod(&x->b), prod);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 1);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 1);
	/* B still takes what fits. */
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 9000, NULL, 0);
	fx_free(x);
}

/*
 * A descriptor whose pieces do not add up to its length is dropped and
 * counted rx_malformed, whether it would go as it is or need segmenting
 * for a guest without GSO first; B takes what is well-formed after it.
 */
static void test_malformed_descriptor(void **state)
{
	static const struct ff_opts no_gso = {
	    .nq = 1, .sg = true, .rx_notify = true, .ipv6_csum = true};
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, &no_gso);
	unsigned int done0 = atomic_load(&big_done);
	struct sw_pkt *pkt = &big_pkt[0];

	(void)state;
	tcp4(3000, 9);
	ff_rx_post(&x->b, 0, FF_RING);
	for (unsigned int i = 0; i < 2; i++) {
		/* 54 header bytes and 100 of the frame's: 3000 announced */
		*pkt = (struct sw_pkt){.hdr = f.b, .hdr_len = 54, .len = f.len, .nfrags = 1};
		pkt->frag[0] = (struct sw_pkt_frag){f.b + 54, 100};
		if (i == 1) {
			pkt->gso_type = SW_GSO_TCPV4;
			pkt->gso_size = 1000;
			pkt->flags = SW_PKT_CSUM_BLANK;
		}
		sw_pkt_init(pkt, big_put);
		assert_int_equal(x->vb->port->ops->xmit(x->vb->port, &pkt, 1), 1);
		assert_true(WAIT_UNTIL(&x->w, atomic_load(&big_done) == done0 + i + 1, WAIT_MS));
		assert_int_equal(back_vif_stat(x->vb, 0, "rx_malformed"), i + 1);
	}
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_dropped"), 2);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_packets"), 0);
	assert_int_equal(back_vif_stat(x->vb, 0, "rx_sw_bad"), 0);
	transfer(x, &x->a, mac_a, &x->b, mac_b, 20, 60, 9000, NULL, 0);
	fx_free(x);
}

/* The id B gives the request at ring index @i: never i & mask, never the same twice. */
static uint16_t id_at(RING_IDX i)
{
	return (uint16_t)(0xa000u + i * 37u);
}

/* Each response carries the id of the request it consumed (extra slots excepted). */
static void test_response_ids(void **state)
{
	struct ff_txopt gso = {.gso_type = XEN_NETIF_GSO_TYPE_TCPV4,
			       .gso_size = 1448,
			       .flags = NETTXF_csum_blank | NETTXF_data_validated};
	static const uint32_t lens[] = {100, 9000, 5000, 60, 4096};
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct ff_queue *b = &x->b.q[0];
	const unsigned int nframes = sizeof(lens) / sizeof(lens[0]);
	unsigned int got = 0, data = 0;
	RING_IDX i, prod;

	(void)state;
	for (i = 0; i < 40; i++)
		ff_rx_post_req(&x->b, 0, id_at(i), b->rx_gref[i & (FF_RING - 1)]);
	for (unsigned int k = 0; k < nframes; k++) {
		tcp4(lens[k], (uint8_t)k);
		assert_int_equal(ff_tx_frame(&x->a, 0, f.b, f.len, lens[k] == 5000 ? &gso : NULL),
				 0);
	}
	ff_tx_push(&x->a, 0);
	assert_true(WAIT_UNTIL(&x->w, back_vif_stat(x->vb, 0, "rx_packets") == nframes, WAIT_MS));
	prod = rsp_prod(&x->b);
	for (i = b->rx.rsp_cons; i != prod; got++) {
		netif_rx_response_t r = *RING_GET_RESPONSE(&b->rx, i);

		assert_int_equal(r.id, id_at(i++));
		data++;
		if (r.flags & NETRXF_extra_info) {
			netif_extra_info_t ex;

			do
				memcpy(&ex, RING_GET_RESPONSE(&b->rx, i++), sizeof(ex));
			while (ex.flags & XEN_NETIF_EXTRA_FLAG_MORE);
		}
		while (r.flags & NETRXF_more_data) {
			r = *RING_GET_RESPONSE(&b->rx, i);
			assert_int_equal(r.id, id_at(i++));
			data++;
		}
	}
	assert_int_equal(got, nframes);
	assert_int_equal(data, 1 + 3 + 2 + 1 + 1);
	/* and the frames are whole */
	for (unsigned int k = 0; k < nframes; k++) {
		struct ff_rxinfo info;

		tcp4(lens[k], (uint8_t)k);
		assert_int_equal(ff_rx_recv(&x->b, 0, rbuf, sizeof(rbuf), &info), (int)f.len);
		assert_memory_equal(rbuf, f.b, f.len);
	}
	fx_free(x);
}

/*
 * A req_prod the guest moved back behind requests netback has taken in a
 * batch (req_cons ahead of the responses) is refused, fatal for the vif,
 * never read as ~2^32 posted buffers.  The window is inside one batch
 * (back_rx_deliver()'s re-check after arming req_event), so the test
 * opens it by hand, holding the queue's rx_lock as a batch does.
 */
static void test_rx_prod_behind_batch(void **state)
{
	struct fx *x = fx_new(BACK_TX_COPY, NULL, NULL, NULL);
	struct back_queue *q = x->vb->q[0];
	struct ff_queue *b = &x->b.q[0];
	RING_IDX cons;
	int avail;

	(void)state;
	assert_int_equal(ff_rx_post(&x->b, 0, 4), 4);
	pthread_mutex_lock(&q->rx_lock);
	cons = q->rx.req_cons;
	assert_int_equal(cons, q->rx.rsp_prod_pvt);
	q->rx.req_cons = cons + 3; /* a batch took three, not answered yet */
	__atomic_store_n(&b->rx.sring->req_prod, cons + 1, __ATOMIC_SEQ_CST);
	avail = back_rx_avail(q, true);
	q->rx.req_cons = cons;
	pthread_mutex_unlock(&q->rx_lock);
	assert_int_equal(avail, -1);
	assert_true(WAIT_UNTIL(&x->w, back_vif_state(x->vb) == XenbusStateClosing, WAIT_MS));
	assert_non_null(strstr(back_vif_error(x->vb), "behind req_cons"));
	fx_free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hash_extra_slot), cmocka_unit_test(test_gso_hash_64k),
	    cmocka_unit_test(test_max_slots),	    cmocka_unit_test(test_malformed_descriptor),
	    cmocka_unit_test(test_response_ids),    cmocka_unit_test(test_rx_prod_behind_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
