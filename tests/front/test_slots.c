// SPDX-License-Identifier: MIT
/* test_slots.c - netfront's pure stages: frame to TX slots, RX responses to frame (hostile too) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "front/front.h"

/* ---- front_tx_pkt2slots ---- */

#define SGF (PVNET_F_SG | PVNET_F_GSO_TCPV4 | PVNET_F_GSO_TCPV6)

static struct front_tx_frag frag(uint16_t id, uint16_t off, uint16_t size)
{
	return (struct front_tx_frag){.gref = 100u + id, .offset = off, .size = size, .id = id};
}

static void test_tx_single(void **state)
{
	union front_tx_slot s[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag f = frag(7, 0, 60);

	assert_int_equal(front_tx_pkt2slots(&f, 1, 0, 0, 0, 0, s), 1);
	assert_int_equal(s[0].req.gref, 107);
	assert_int_equal(s[0].req.id, 7);
	assert_int_equal(s[0].req.size, 60);
	assert_int_equal(s[0].req.offset, 0);
	assert_int_equal(s[0].req.flags, 0);

	assert_int_equal(front_tx_pkt2slots(&f, 1, PVNET_PKT_CSUM_BLANK, 0, 0, 0, s), 1);
	assert_int_equal(s[0].req.flags, NETTXF_csum_blank | NETTXF_data_validated);
	assert_int_equal(front_tx_pkt2slots(&f, 1, PVNET_PKT_DATA_VALIDATED, 0, 0, 0, s), 1);
	assert_int_equal(s[0].req.flags, NETTXF_data_validated);
}

static void test_tx_multi_and_gso(void **state)
{
	union front_tx_slot s[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag f[3] = {frag(1, 10, 4086), frag(2, 0, 4096), frag(3, 0, 18)};

	assert_int_equal(front_tx_pkt2slots(f, 3, 0, 0, 0, PVNET_F_SG, s), 3);
	assert_int_equal(s[0].req.size, 4086 + 4096 + 18); /* the first slot says the whole */
	assert_int_equal(s[0].req.offset, 10);
	assert_int_equal(s[0].req.flags, NETTXF_more_data);
	assert_int_equal(s[1].req.size, 4096);
	assert_int_equal(s[1].req.flags, NETTXF_more_data);
	assert_int_equal(s[2].req.size, 18);
	assert_int_equal(s[2].req.flags, 0);
	assert_int_equal(s[2].req.id, 3);

	/* Without scatter-gather a frame must fit one slot. */
	assert_int_equal(front_tx_pkt2slots(f, 3, 0, 0, 0, 0, s), -EOPNOTSUPP);

	/* GSO: the extra comes right after the first slot. */
	assert_int_equal(
	    front_tx_pkt2slots(f, 3, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV6, 1448, SGF, s), 4);
	assert_int_equal(s[0].req.flags, NETTXF_csum_blank | NETTXF_data_validated |
					     NETTXF_extra_info | NETTXF_more_data);
	assert_int_equal(s[1].extra.type, XEN_NETIF_EXTRA_TYPE_GSO);
	assert_int_equal(s[1].extra.flags, 0);
	assert_int_equal(s[1].extra.u.gso.size, 1448);
	assert_int_equal(s[1].extra.u.gso.type, XEN_NETIF_GSO_TYPE_TCPV6);
	assert_int_equal(s[2].req.id, 2);
	assert_int_equal(s[3].req.flags, 0);
}

static void test_tx_refused(void **state)
{
	union front_tx_slot s[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag f[XEN_NETIF_NR_SLOTS_MIN + 1];
	struct front_tx_frag one = frag(1, 0, 1000);

	for (unsigned int i = 0; i < XEN_NETIF_NR_SLOTS_MIN + 1; i++)
		f[i] = frag((uint16_t)i, 0, 3000);
	/* 18 data slots is the most; 18 * 3000 < 65535. */
	assert_int_equal(front_tx_pkt2slots(f, 18, 0, 0, 0, SGF, s), 18);
	assert_int_equal(front_tx_pkt2slots(f, 19, 0, 0, 0, SGF, s), -EINVAL);
	assert_int_equal(front_tx_pkt2slots(f, 0, 0, 0, 0, SGF, s), -EINVAL);
	/* More than 65535 bytes in all. */
	for (unsigned int i = 0; i < 17; i++)
		f[i] = frag((uint16_t)i, 0, 4096);
	assert_int_equal(front_tx_pkt2slots(f, 17, 0, 0, 0, SGF, s), -EINVAL);
	/* A fragment crossing its page, an empty fragment, a runt. */
	f[0] = frag(0, 4000, 200);
	assert_int_equal(front_tx_pkt2slots(f, 1, 0, 0, 0, SGF, s), -EINVAL);
	f[0] = frag(0, 0, 100);
	f[1] = frag(1, 0, 0);
	assert_int_equal(front_tx_pkt2slots(f, 2, 0, 0, 0, SGF, s), -EINVAL);
	f[0] = frag(0, 0, 13);
	assert_int_equal(front_tx_pkt2slots(f, 1, 0, 0, 0, SGF, s), -EINVAL);
	/* GSO: unknown type, no MSS, not negotiated. */
	assert_int_equal(front_tx_pkt2slots(&one, 1, 0, 3, 1000, SGF, s), -EINVAL);
	assert_int_equal(front_tx_pkt2slots(&one, 1, 0, PVNET_GSO_TCPV4, 0, SGF, s), -EINVAL);
	assert_int_equal(front_tx_pkt2slots(&one, 1, 0, PVNET_GSO_TCPV4, 1000, PVNET_F_SG, s),
			 -EOPNOTSUPP);
}

/*
 * Each fragment past the first needs feature-sg, from the second on; a
 * GSO type needs its own feature, not the other one's.
 */
static void test_tx_needs_what_was_negotiated(void **state)
{
	union front_tx_slot s[FRONT_TX_MAX_SLOTS];
	struct front_tx_frag f[2] = {frag(1, 0, 1000), frag(2, 0, 500)};

	assert_int_equal(front_tx_pkt2slots(f, 2, 0, 0, 0, 0, s), -EOPNOTSUPP);
	assert_int_equal(front_tx_pkt2slots(f, 2, 0, 0, 0, PVNET_F_GSO_TCPV4, s), -EOPNOTSUPP);
	assert_int_equal(front_tx_pkt2slots(f, 2, 0, 0, 0, PVNET_F_SG, s), 2);
	assert_int_equal(front_tx_pkt2slots(f, 2, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV4, 1000,
					    PVNET_F_SG | PVNET_F_GSO_TCPV6, s),
			 -EOPNOTSUPP);
	assert_int_equal(front_tx_pkt2slots(f, 2, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV6, 1000,
					    PVNET_F_SG | PVNET_F_GSO_TCPV4, s),
			 -EOPNOTSUPP);
	assert_int_equal(front_tx_pkt2slots(f, 2, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV4, 1000,
					    PVNET_F_SG | PVNET_F_GSO_TCPV4, s),
			 3);
	assert_int_equal(s[1].extra.u.gso.type, XEN_NETIF_GSO_TYPE_TCPV4);
	assert_int_equal(front_tx_pkt2slots(f, 2, PVNET_PKT_CSUM_BLANK, PVNET_GSO_TCPV6, 1000,
					    PVNET_F_SG | PVNET_F_GSO_TCPV6, s),
			 3);
	assert_int_equal(s[1].extra.u.gso.type, XEN_NETIF_GSO_TYPE_TCPV6);
}

/* ---- front_rx_slots2pkt on a ring in heap memory ---- */

struct rxring {
	netif_rx_sring_t *s;
	netif_rx_front_ring_t r;
};

static int rx_setup(void **state)
{
	struct rxring *x = calloc(1, sizeof(*x));

	assert_int_equal(posix_memalign((void **)&x->s, PVNET_PAGE_SIZE, PVNET_PAGE_SIZE), 0);
	SHARED_RING_INIT(x->s);
	FRONT_RING_INIT(&x->r, x->s, PVNET_PAGE_SIZE);
	*state = x;
	return 0;
}

static int rx_teardown(void **state)
{
	struct rxring *x = *state;

	free(x->s);
	free(x);
	return 0;
}

static void put(struct rxring *x, RING_IDX idx, uint16_t off, uint16_t flags, int16_t status)
{
	netif_rx_response_t *r = RING_GET_RESPONSE(&x->r, idx);

	r->id = (uint16_t)(idx & (PVNET_RING_SIZE - 1));
	r->offset = off;
	r->flags = flags;
	r->status = status;
}

static void put_extra(struct rxring *x, RING_IDX idx, uint8_t type, uint8_t flags)
{
	struct netif_extra_info ex = {.type = type, .flags = flags};

	if (type == XEN_NETIF_EXTRA_TYPE_GSO) {
		ex.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
		ex.u.gso.size = 1460;
	} else if (type == XEN_NETIF_EXTRA_TYPE_HASH) {
		ex.u.hash.type = 3;
		ex.u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ;
		memcpy(ex.u.hash.value, "\x78\x56\x34\x12", 4);
	}
	memcpy(RING_GET_RESPONSE(&x->r, idx), &ex, sizeof(ex));
}

static void test_rx_simple(void **state)
{
	struct rxring *x = *state;
	struct front_rx_pkt p;
	const char *why = NULL;

	assert_int_equal(front_rx_slots2pkt(&x->r, 0, 0, &p, &why), 0);
	put(x, 0, 0, NETRXF_csum_blank | NETRXF_data_validated, 1500);
	assert_int_equal(front_rx_slots2pkt(&x->r, 0, 1, &p, &why), 1);
	assert_int_equal(p.len, 1500);
	assert_int_equal(p.nfrags, 1);
	assert_int_equal(p.frags[0].idx, 0);
	assert_false(p.error);
	assert_int_equal(p.flags, PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED);

	/* Three slots, data at an offset: length is the sum of the statuses. */
	put(x, 1, 64, NETRXF_more_data, 4032);
	put(x, 2, 0, NETRXF_more_data, 4096);
	put(x, 3, 0, 0, 100);
	assert_int_equal(front_rx_slots2pkt(&x->r, 1, 4, &p, &why), 3);
	assert_int_equal(p.len, 4032 + 4096 + 100);
	assert_int_equal(p.nfrags, 3);
	assert_int_equal(p.frags[0].offset, 64);
	assert_int_equal(p.flags, 0);
	/* Not all pushed yet: wait, consume nothing. */
	assert_int_equal(front_rx_slots2pkt(&x->r, 1, 3, &p, &why), 0);
}

static void test_rx_extras(void **state)
{
	struct rxring *x = *state;
	struct front_rx_pkt p;
	const char *why = NULL;

	put(x, 10, 0, NETRXF_extra_info | NETRXF_more_data, 4096);
	put_extra(x, 11, XEN_NETIF_EXTRA_TYPE_GSO, XEN_NETIF_EXTRA_FLAG_MORE);
	put_extra(x, 12, XEN_NETIF_EXTRA_TYPE_HASH, 0);
	put(x, 13, 0, 0, 904);
	assert_int_equal(front_rx_slots2pkt(&x->r, 10, 14, &p, &why), 4);
	assert_int_equal(p.len, 5000);
	assert_int_equal(p.nextras, 2);
	assert_int_equal(p.extra_idx[0], 11);
	assert_int_equal(p.frags[1].idx, 13);
	assert_int_equal(p.gso_type, PVNET_GSO_TCPV4);
	assert_int_equal(p.gso_size, 1460);
	assert_true(p.flags & PVNET_PKT_HASH);
	assert_int_equal(p.hash_type, 3);
	assert_int_equal(p.hash, 0x12345678);
	/* Extra chain cut by the producer: wait. */
	assert_int_equal(front_rx_slots2pkt(&x->r, 10, 12, &p, &why), 0);

	/* A hash of a type or an algorithm netif.h does not define: frame kept, hash not. */
	for (int bad = 0; bad < 2; bad++) {
		netif_extra_info_t *ex = (netif_extra_info_t *)RING_GET_RESPONSE(&x->r, 21);

		put(x, 20, 0, NETRXF_extra_info, 60);
		put_extra(x, 21, XEN_NETIF_EXTRA_TYPE_HASH, 0);
		if (bad)
			ex->u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_NONE;
		else
			ex->u.hash.type = _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP + 1;
		assert_int_equal(front_rx_slots2pkt(&x->r, 20, 22, &p, &why), 2);
		assert_false(p.error);
		assert_int_equal(p.len, 60);
		assert_false(p.flags & PVNET_PKT_HASH);
	}
}

/* A hash extra of an algorithm netif.h does not define (neither NONE nor Toeplitz): no hash. */
static void test_rx_hash_unknown_algorithm(void **state)
{
	struct rxring *x = *state;
	netif_extra_info_t *ex = (netif_extra_info_t *)RING_GET_RESPONSE(&x->r, 31);
	struct front_rx_pkt p;
	const char *why = NULL;

	put(x, 30, 0, NETRXF_extra_info, 60);
	put_extra(x, 31, XEN_NETIF_EXTRA_TYPE_HASH, 0);
	ex->u.hash.algorithm = XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ + 1;
	assert_int_equal(front_rx_slots2pkt(&x->r, 30, 32, &p, &why), 2);
	assert_false(p.error);
	assert_int_equal(p.len, 60);
	assert_false(p.flags & PVNET_PKT_HASH);
}

static void test_rx_dropped_frames(void **state)
{
	struct rxring *x = *state;
	struct front_rx_pkt p;
	const char *why = NULL;

	/* The backend's own drop: consumed, flagged, not a violation. */
	put(x, 0, 0, NETRXF_more_data, 1000);
	put(x, 1, 0, 0, NETIF_RSP_ERROR);
	assert_int_equal(front_rx_slots2pkt(&x->r, 0, 2, &p, &why), 2);
	assert_true(p.error);
	/* A runt: 13 bytes, one short of an Ethernet header; 14 is a frame. */
	put(x, 2, 0, 0, 13);
	assert_int_equal(front_rx_slots2pkt(&x->r, 2, 3, &p, &why), 1);
	assert_true(p.error);
	put(x, 2, 0, 0, 14);
	assert_int_equal(front_rx_slots2pkt(&x->r, 2, 3, &p, &why), 1);
	assert_false(p.error);
	/* Bad GSO type inside a valid GSO extra. */
	struct netif_extra_info ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};

	ex.u.gso.type = 9;
	ex.u.gso.size = 100;
	put(x, 3, 0, NETRXF_extra_info, 100);
	memcpy(RING_GET_RESPONSE(&x->r, 4), &ex, sizeof(ex));
	assert_int_equal(front_rx_slots2pkt(&x->r, 3, 5, &p, &why), 2);
	assert_true(p.error);
}

static void expect_violation(struct rxring *x, RING_IDX cons, RING_IDX prod, const char *text)
{
	struct front_rx_pkt p;
	const char *why = NULL;

	assert_int_equal(front_rx_slots2pkt(&x->r, cons, prod, &p, &why), -EPROTO);
	assert_non_null(why);
	assert_non_null(strstr(why, text));
}

static void test_rx_hostile(void **state)
{
	struct rxring *x = *state;

	/* An id that is not the request posted at that index. */
	put(x, 0, 0, 0, 100);
	RING_GET_RESPONSE(&x->r, 0)->id = 5;
	expect_violation(x, 0, 1, "id");
	/* Data past the page, from an offset or from a huge status. */
	put(x, 0, 100, 0, 4000);
	expect_violation(x, 0, 1, "past the end");
	put(x, 0, 4096, 0, 0);
	expect_violation(x, 0, 1, "past the end");
	put(x, 0, 0, 0, 0x7fff);
	expect_violation(x, 0, 1, "past the end");
	/* Endless more_data over the whole ring. */
	for (RING_IDX i = 0; i < PVNET_RING_SIZE; i++)
		put(x, i, 0, NETRXF_more_data, 100);
	expect_violation(x, 0, PVNET_RING_SIZE, "more_data");
	/* Bad extra types, and an extra chain that never ends. */
	put(x, 0, 0, NETRXF_extra_info, 100);
	put_extra(x, 1, XEN_NETIF_EXTRA_TYPE_NONE, 0);
	expect_violation(x, 0, 2, "type");
	put_extra(x, 1, XEN_NETIF_EXTRA_TYPE_MAX, 0);
	expect_violation(x, 0, 2, "type");
	for (RING_IDX i = 1; i < PVNET_RING_SIZE; i++)
		put_extra(x, i, XEN_NETIF_EXTRA_TYPE_GSO, XEN_NETIF_EXTRA_FLAG_MORE);
	expect_violation(x, 0, PVNET_RING_SIZE, "extra-info chain");

	/* As many extras as there are types (4) is a frame; a fifth is a violation. */
	{
		struct front_rx_pkt p;
		const char *why = NULL;

		put(x, 0, 0, NETRXF_extra_info, 100);
		for (RING_IDX i = 1; i <= 4; i++)
			put_extra(x, i, XEN_NETIF_EXTRA_TYPE_HASH,
				  i < 4 ? XEN_NETIF_EXTRA_FLAG_MORE : 0);
		assert_int_equal(front_rx_slots2pkt(&x->r, 0, 5, &p, &why), 5);
		assert_int_equal(p.nextras, 4);
		put_extra(x, 4, XEN_NETIF_EXTRA_TYPE_HASH, XEN_NETIF_EXTRA_FLAG_MORE);
		put_extra(x, 5, XEN_NETIF_EXTRA_TYPE_HASH, 0);
		expect_violation(x, 0, 6, "extra-info chain");
	}
}

static void test_rx_slot_limit_and_wrap(void **state)
{
	struct rxring *x = *state;
	RING_IDX base = UINT32_MAX - 5; /* free-running indices wrap inside the frame */
	struct front_rx_pkt p;
	const char *why = NULL;

	for (RING_IDX i = 0; i < FRONT_RX_MAX_FRAGS; i++)
		put(x, base + i, 0, i + 1 < FRONT_RX_MAX_FRAGS ? NETRXF_more_data : 0, 3000);
	assert_int_equal(front_rx_slots2pkt(&x->r, base, base + FRONT_RX_MAX_FRAGS, &p, &why),
			 FRONT_RX_MAX_FRAGS);
	assert_int_equal(p.nfrags, FRONT_RX_MAX_FRAGS);
	assert_int_equal(p.frags[10].idx, base + 10);
	assert_false(p.error);
	assert_int_equal(p.len, 3000 * FRONT_RX_MAX_FRAGS);
	/* 19 slots of 3500 bytes: a frame longer than 65535 is dropped, not a violation. */
	for (RING_IDX i = 0; i < FRONT_RX_MAX_FRAGS; i++)
		RING_GET_RESPONSE(&x->r, base + i)->status = 3500;
	assert_int_equal(front_rx_slots2pkt(&x->r, base, base + FRONT_RX_MAX_FRAGS, &p, &why),
			 FRONT_RX_MAX_FRAGS);
	assert_true(p.error);
}

static void test_rx_slot_limit(void **state)
{
	struct rxring *x = *state;
	struct front_rx_pkt p;
	const char *why = NULL;

	for (RING_IDX i = 0; i < FRONT_RX_MAX_FRAGS + 1; i++)
		put(x, i, 0, i + 1 < FRONT_RX_MAX_FRAGS + 1 ? NETRXF_more_data : 0, 1000);
	expect_violation(x, 0, FRONT_RX_MAX_FRAGS + 1, "more_data");
	put(x, FRONT_RX_MAX_FRAGS - 1, 0, 0, 1000);
	assert_int_equal(front_rx_slots2pkt(&x->r, 0, FRONT_RX_MAX_FRAGS, &p, &why),
			 FRONT_RX_MAX_FRAGS);
	assert_false(p.error);
	assert_int_equal(p.len, 1000 * FRONT_RX_MAX_FRAGS);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

/* xorshift64: a fixed seed, so a failure replays exactly. */
static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 32);
}

/*
 * A backend writing random responses, mostly plausible: whatever it writes,
 * reassembly never reports more slots than were there, nor a fragment
 * outside its page, nor more fragments or extras than the bounds.
 */
static void test_rx_random(void **state)
{
	struct rxring *x = *state;
	unsigned int frames = 0, violations = 0;

	for (int round = 0; round < 2000; round++) {
		RING_IDX cons = rnd(), prod = cons + rnd() % (PVNET_RING_SIZE + 1);

		for (RING_IDX i = cons; i != prod; i++) {
			uint32_t r = rnd();

			put(x, i, (uint16_t)(r % 8 ? 0 : rnd() % 4200),
			    (uint16_t)((r >> 3) % 4 ? (r >> 5) & 0x1f : 0),
			    (int16_t)(r % 16 ? (int)(rnd() % 4100) : -(int)(rnd() % 3)));
			if (r % 64 == 1)
				RING_GET_RESPONSE(&x->r, i)->id = (uint16_t)rnd();
		}
		while (cons != prod) {
			struct front_rx_pkt p;
			const char *why = NULL;
			int rc = front_rx_slots2pkt(&x->r, cons, prod, &p, &why);
			uint32_t len = 0;

			if (rc < 0) {
				assert_int_equal(rc, -EPROTO);
				assert_non_null(why);
				violations++;
				break;
			}
			if (rc == 0)
				break;
			assert_true((RING_IDX)rc <= prod - cons);
			assert_true(p.nfrags <= FRONT_RX_MAX_FRAGS);
			assert_true(p.nextras <= FRONT_RX_MAX_EXTRAS);
			for (unsigned int f = 0; f < p.nfrags; f++) {
				assert_true(p.frags[f].offset + p.frags[f].len <= PVNET_PAGE_SIZE);
				assert_true(p.frags[f].idx - cons < (RING_IDX)rc);
				len += p.frags[f].len;
			}
			assert_int_equal(len, p.len);
			frames++;
			cons += (RING_IDX)rc;
		}
	}
	/* The mix exercises both outcomes. */
	assert_true(frames > 1000);
	assert_true(violations > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tx_single),
	    cmocka_unit_test(test_tx_multi_and_gso),
	    cmocka_unit_test(test_tx_refused),
	    cmocka_unit_test(test_tx_needs_what_was_negotiated),
	    cmocka_unit_test_setup_teardown(test_rx_simple, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_extras, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_hash_unknown_algorithm, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_dropped_frames, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_hostile, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_slot_limit_and_wrap, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_slot_limit, rx_setup, rx_teardown),
	    cmocka_unit_test_setup_teardown(test_rx_random, rx_setup, rx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
