// SPDX-License-Identifier: MIT
// test_tx_parse.c - table-driven tests of back_tx_ring2pkt(), netback's TX slot rules

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "back/tx.h"

#define MAXS 32

static netif_tx_request_t rq(uint16_t off, uint16_t flags, uint16_t id, uint16_t size)
{
	return (netif_tx_request_t){
	    .gref = 100u + id, .offset = off, .flags = flags, .id = id, .size = size};
}

static netif_tx_request_t ex(uint8_t type, uint8_t flags, uint16_t gso_size, uint8_t gso_type)
{
	netif_extra_info_t e = {.type = type, .flags = flags};
	netif_tx_request_t r;

	memset(&r, 0, sizeof(r));
	e.u.gso.size = gso_size;
	e.u.gso.type = gso_type;
	memcpy(&r, &e, sizeof(e));
	return r;
}

/* first (size = total) + @more later slots of @each bytes, chained. */
static unsigned int chain(netif_tx_request_t *s, unsigned int more, uint16_t each,
			  uint16_t first_own)
{
	s[0] = rq(0, more ? NETTXF_more_data : 0, 0, (uint16_t)(first_own + more * each));
	for (unsigned int k = 1; k <= more; k++)
		s[k] = rq(0, k < more ? NETTXF_more_data : 0, (uint16_t)k, each);
	return more + 1;
}

struct tcase {
	const char *name;
	unsigned int (*build)(netif_tx_request_t *s);
	int verdict;
	unsigned int nslots; /* OK and DROP */
	int drop;
};

static unsigned int b_single(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_csum_blank | NETTXF_data_validated, 7, 60);
	s[1] = rq(0, 0, 8, 60); /* the next packet: not consumed */
	return 2;
}
static unsigned int b_runt(netif_tx_request_t *s)
{
	s[0] = rq(0, 0, 1, 13);
	return 1;
}
static unsigned int b_first_crosses(netif_tx_request_t *s)
{
	s[0] = rq(4000, 0, 1, 200);
	return 1;
}
static unsigned int b_three(netif_tx_request_t *s)
{
	s[0] = rq(100, NETTXF_more_data, 0, 3000);
	s[1] = rq(0, NETTXF_more_data, 1, 1000);
	s[2] = rq(3596, 0, 2, 500);
	return 3;
}
static unsigned int b_19(netif_tx_request_t *s)
{
	return chain(s, 18, 100, 100);
}
static unsigned int b_20(netif_tx_request_t *s)
{
	return chain(s, 19, 100, 100);
}
static unsigned int b_21(netif_tx_request_t *s)
{
	return chain(s, 20, 100, 100);
}
static unsigned int b_22(netif_tx_request_t *s)
{
	return chain(s, 21, 100, 100);
}
static unsigned int b_zero_later(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 150);
	s[1] = rq(0, NETTXF_more_data, 1, 0); /* XSA-448: never mapped */
	s[2] = rq(0, 0, 2, 50);
	return 3;
}
static unsigned int b_later_crosses(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 1000);
	s[1] = rq(4000, 0, 1, 200);
	return 2;
}
static unsigned int b_later_too_big(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 100);
	s[1] = rq(0, 0, 1, 200);
	return 2;
}
static unsigned int b_size_mismatch(netif_tx_request_t *s)
{
	/* the others take all but 10 bytes: the first slot is a runt */
	s[0] = rq(0, NETTXF_more_data, 0, 100);
	s[1] = rq(0, 0, 1, 90);
	return 2;
}
static unsigned int b_chain_past_end(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 100);
	s[1] = rq(0, NETTXF_more_data, 1, 10);
	return 2;
}
static unsigned int b_gso(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info | NETTXF_more_data | NETTXF_csum_blank, 0, 5000);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_GSO, 0, 1448, XEN_NETIF_GSO_TYPE_TCPV4);
	s[2] = rq(0, 0, 2, 1000);
	return 3;
}
static unsigned int b_extra_missing(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	return 1;
}
static unsigned int b_extra_endless(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	for (unsigned int i = 1; i < MAXS; i++)
		s[i] = ex(XEN_NETIF_EXTRA_TYPE_MCAST_ADD, XEN_NETIF_EXTRA_FLAG_MORE, 0, 0);
	return MAXS;
}
static unsigned int b_extra_more_runs_out(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_GSO, XEN_NETIF_EXTRA_FLAG_MORE, 1448, 1);
	return 2;
}
static unsigned int b_extra_type0(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_NONE, 0, 0, 0);
	return 2;
}
static unsigned int b_extra_type_max(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_MAX, 0, 0, 0);
	return 2;
}
static unsigned int b_gso_size0(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_GSO, 0, 0, XEN_NETIF_GSO_TYPE_TCPV6);
	return 2;
}
static unsigned int b_gso_badtype(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_GSO, 0, 1400, 3);
	return 2;
}
static unsigned int b_hash_ignored(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_HASH, 0, 0, 0);
	return 2;
}
/* An MCAST extra and a HASH one: a filter request, first slot and extras only. */
static unsigned int b_mcast(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_MCAST_ADD, XEN_NETIF_EXTRA_FLAG_MORE, 0, 0);
	s[2] = ex(XEN_NETIF_EXTRA_TYPE_HASH, 0, 0, 0);
	return 3;
}
/* A dummy with more_data and a runt size: its data slots are not its own (as Linux reads it). */
static unsigned int b_mcast_dummy_more(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_extra_info | NETTXF_more_data, 0, 0);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_MCAST_DEL, 0, 0, 0);
	s[2] = rq(0, 0, 2, 60);
	return 3;
}
static unsigned int b_tiny_header_slots(netif_tx_request_t *s)
{
	/* XSA-432 shape: 19 slots holding less than the 128-byte header area */
	return chain(s, 18, 1, 14);
}
static unsigned int b_64k(netif_tx_request_t *s)
{
	/* 65535 bytes: 15 full pages + 4095, the most the u16 size allows */
	s[0] = rq(0, NETTXF_more_data, 0, 65535);
	for (unsigned int k = 1; k <= 15; k++)
		s[k] = rq(0, k < 15 ? NETTXF_more_data : 0, (uint16_t)k, 4096);
	return 16;
}
static unsigned int b_empty_first_chain(netif_tx_request_t *s)
{
	/* zero-size later slots count towards the slot limits too */
	return chain(s, 21, 0, 60);
}

/* The page bounds to the byte: a slot may end at its page's end, not one past it. */
static unsigned int b_later_one_past(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 1001);
	s[1] = rq(3596, 0, 1, 501);
	return 2;
}
static unsigned int b_first_at_end(netif_tx_request_t *s)
{
	s[0] = rq(4036, 0, 1, 60);
	return 1;
}
static unsigned int b_first_one_past(netif_tx_request_t *s)
{
	s[0] = rq(4037, 0, 1, 60);
	return 1;
}
/* As many extras as there are types (4), and one more. */
static unsigned int extras(netif_tx_request_t *s, unsigned int n)
{
	s[0] = rq(0, NETTXF_extra_info, 0, 100);
	for (unsigned int i = 1; i <= n; i++)
		s[i] = ex(XEN_NETIF_EXTRA_TYPE_HASH, i < n ? XEN_NETIF_EXTRA_FLAG_MORE : 0, 0, 0);
	return n + 1;
}
static unsigned int b_four_extras(netif_tx_request_t *s)
{
	return extras(s, 4);
}
static unsigned int b_five_extras(netif_tx_request_t *s)
{
	return extras(s, 5);
}
/* A later slot taking exactly what remains leaves the first slot a runt, not too big. */
static unsigned int b_later_takes_all(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 100);
	s[1] = rq(0, 0, 1, 100);
	return 2;
}
/* Two reasons to drop: the first one found is the one counted. */
static unsigned int b_size_then_slots(netif_tx_request_t *s)
{
	s[0] = rq(0, NETTXF_more_data, 0, 100);
	s[1] = rq(0, NETTXF_more_data, 1, 200);
	for (unsigned int k = 2; k <= 20; k++)
		s[k] = rq(0, k < 20 ? NETTXF_more_data : 0, (uint16_t)k, 0);
	return 21;
}
static unsigned int b_slots_then_size(netif_tx_request_t *s)
{
	unsigned int n = chain(s, 19, 100, 100);

	s[19].size = 300;
	return n;
}

static const struct tcase cases[] = {
    {"later slot one byte past its page", b_later_one_past, BACK_TX_FATAL, 0, 0},
    {"first slot ends at its page's end", b_first_at_end, BACK_TX_OK, 1, 0},
    {"first slot one byte past its page", b_first_one_past, BACK_TX_FATAL, 0, 0},
    {"four extras", b_four_extras, BACK_TX_OK, 5, 0},
    {"five extras", b_five_extras, BACK_TX_FATAL, 0, 0},
    {"later slot takes all", b_later_takes_all, BACK_TX_DROP, 2, BACK_TX_DROP_RUNT},
    {"size, then too many slots", b_size_then_slots, BACK_TX_DROP, 21, BACK_TX_DROP_SIZE},
    {"too many slots, then size", b_slots_then_size, BACK_TX_DROP, 20, BACK_TX_DROP_SLOTS},
    {"single", b_single, BACK_TX_OK, 1, 0},
    {"runt", b_runt, BACK_TX_DROP, 1, BACK_TX_DROP_RUNT},
    {"first crosses page", b_first_crosses, BACK_TX_FATAL, 0, 0},
    {"three slots", b_three, BACK_TX_OK, 3, 0},
    {"19 slots accepted", b_19, BACK_TX_OK, 19, 0},
    {"20 slots dropped", b_20, BACK_TX_DROP, 20, BACK_TX_DROP_SLOTS},
    {"21 slots dropped", b_21, BACK_TX_DROP, 21, BACK_TX_DROP_SLOTS},
    {"22 slots fatal", b_22, BACK_TX_FATAL, 0, 0},
    {"zero-size later slot", b_zero_later, BACK_TX_OK, 3, 0},
    {"later slot crosses page", b_later_crosses, BACK_TX_FATAL, 0, 0},
    {"later slot too big", b_later_too_big, BACK_TX_DROP, 2, BACK_TX_DROP_SIZE},
    {"size mismatch", b_size_mismatch, BACK_TX_DROP, 2, BACK_TX_DROP_RUNT},
    {"chain past the end", b_chain_past_end, BACK_TX_FATAL, 0, 0},
    {"gso", b_gso, BACK_TX_OK, 3, 0},
    {"extra missing", b_extra_missing, BACK_TX_FATAL, 0, 0},
    {"extra chain endless", b_extra_endless, BACK_TX_FATAL, 0, 0},
    {"extra MORE runs out", b_extra_more_runs_out, BACK_TX_FATAL, 0, 0},
    {"extra type 0", b_extra_type0, BACK_TX_FATAL, 0, 0},
    {"extra type MAX", b_extra_type_max, BACK_TX_FATAL, 0, 0},
    {"gso size 0", b_gso_size0, BACK_TX_FATAL, 0, 0},
    {"gso bad type", b_gso_badtype, BACK_TX_FATAL, 0, 0},
    {"hash ignored", b_hash_ignored, BACK_TX_OK, 2, 0},
    {"mcast request", b_mcast, BACK_TX_MCAST, 3, 0},
    {"mcast dummy with more_data", b_mcast_dummy_more, BACK_TX_MCAST, 2, 0},
    {"tiny header slots", b_tiny_header_slots, BACK_TX_OK, 19, 0},
    {"65535 bytes", b_64k, BACK_TX_OK, 16, 0},
    {"22 slots of zero size", b_empty_first_chain, BACK_TX_FATAL, 0, 0},
};

static void test_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];
		netif_tx_request_t s[MAXS];
		struct back_tx_parse out;
		unsigned int n;
		int v;

		memset(s, 0, sizeof(s));
		n = c->build(s);
		v = back_tx_ring2pkt(s, n, &out);
		if (v != c->verdict || out.verdict != v ||
		    (v != BACK_TX_FATAL && out.nslots != c->nslots) ||
		    (v == BACK_TX_FATAL &&
		     (out.nslots != 0 || out.ndata != 0 || out.nempty != 0)) ||
		    (v == BACK_TX_DROP && out.drop != c->drop) ||
		    ((v == BACK_TX_DROP || v == BACK_TX_FATAL) && !out.reason))
			fail_msg("case '%s': verdict %d nslots %u drop %d (%s)", c->name, v,
				 out.nslots, out.drop, out.reason ? out.reason : "-");
		assert_true(out.nslots <= n && out.nslots <= BACK_TX_MAX_SLOTS);
	}
}

/* Details of accepted packets: data slot list, lengths, flags, extras. */
static void test_details(void **state)
{
	netif_tx_request_t s[MAXS];
	struct back_tx_parse out;
	uint32_t sum = 0;

	b_three(s);
	assert_int_equal(back_tx_ring2pkt(s, 3, &out), BACK_TX_OK);
	assert_int_equal(out.ndata, 3);
	assert_int_equal(out.data[0], 0);
	assert_int_equal(out.data_len[0], 1500);
	assert_int_equal(out.data[1], 1);
	assert_int_equal(out.data_len[1], 1000);
	assert_int_equal(out.data[2], 2);
	assert_int_equal(out.data_len[2], 500);
	assert_int_equal(out.len, 3000);

	b_single(s);
	assert_int_equal(back_tx_ring2pkt(s, 2, &out), BACK_TX_OK);
	assert_int_equal(out.txflags, NETTXF_csum_blank | NETTXF_data_validated);
	assert_int_equal(out.gso_type, XEN_NETIF_GSO_TYPE_NONE);

	b_gso(s);
	assert_int_equal(back_tx_ring2pkt(s, 3, &out), BACK_TX_OK);
	assert_int_equal(out.nextras, 1);
	assert_int_equal(out.gso_type, XEN_NETIF_GSO_TYPE_TCPV4);
	assert_int_equal(out.gso_size, 1448);
	assert_int_equal(out.ndata, 2);
	assert_int_equal(out.data[1], 2);
	assert_int_equal(out.data_len[0], 4000);

	/* Nothing published: never a slot the frontend has not written (a good one is there). */
	b_single(s);
	assert_int_equal(back_tx_ring2pkt(s, 0, &out), BACK_TX_FATAL);
	assert_non_null(out.reason);

	b_four_extras(s);
	assert_int_equal(back_tx_ring2pkt(s, 5, &out), BACK_TX_OK);
	assert_int_equal(out.nextras, 4);

	b_zero_later(s);
	assert_int_equal(back_tx_ring2pkt(s, 3, &out), BACK_TX_OK);
	assert_int_equal(out.nempty, 1);
	assert_int_equal(out.empty[0], 1);
	assert_int_equal(out.ndata, 2);
	assert_int_equal(out.data[1], 2);
	assert_int_equal(out.data_len[0], 100);

	b_hash_ignored(s);
	assert_int_equal(back_tx_ring2pkt(s, 2, &out), BACK_TX_OK);
	assert_int_equal(out.nextras, 1);
	assert_int_equal(out.gso_type, XEN_NETIF_GSO_TYPE_NONE);

	/* Multicast requests: the address; ADD before DEL; the last extra of a type counts. */
	{
		static const uint8_t g1[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
		static const uint8_t g2[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x01};
		netif_extra_info_t e = {.type = XEN_NETIF_EXTRA_TYPE_MCAST_DEL,
					.flags = XEN_NETIF_EXTRA_FLAG_MORE};

		s[0] = rq(0, NETTXF_extra_info, 0, 0);
		memcpy(e.u.mcast.addr, g1, 6);
		memcpy(&s[1], &e, sizeof(e));
		e.type = XEN_NETIF_EXTRA_TYPE_MCAST_ADD;
		memcpy(e.u.mcast.addr, g2, 6);
		memcpy(&s[2], &e, sizeof(e));
		e.flags = 0;
		memcpy(e.u.mcast.addr, g1, 6);
		memcpy(&s[3], &e, sizeof(e));
		s[4] = rq(0, 0, 4, 60);
		assert_int_equal(back_tx_ring2pkt(s, 5, &out), BACK_TX_MCAST);
		assert_int_equal(out.nslots, 4);
		assert_int_equal(out.nextras, 3);
		assert_int_equal(out.mcast_op, XEN_NETIF_EXTRA_TYPE_MCAST_ADD);
		assert_memory_equal(out.mcast_addr, g1, 6);
		assert_int_equal(back_tx_ring2pkt(s + 4, 1, &out), BACK_TX_OK);
		s[2] = ex(XEN_NETIF_EXTRA_TYPE_GSO, XEN_NETIF_EXTRA_FLAG_MORE, 1448, 1);
		s[3] = ex(XEN_NETIF_EXTRA_TYPE_HASH, 0, 0, 0);
		assert_int_equal(back_tx_ring2pkt(s, 5, &out), BACK_TX_MCAST);
		assert_int_equal(out.mcast_op, XEN_NETIF_EXTRA_TYPE_MCAST_DEL);
		assert_memory_equal(out.mcast_addr, g1, 6);
		/* ADD before DEL whatever their order on the ring: an ADD then a DEL is the ADD. */
		e.type = XEN_NETIF_EXTRA_TYPE_MCAST_ADD;
		e.flags = XEN_NETIF_EXTRA_FLAG_MORE;
		memcpy(e.u.mcast.addr, g2, 6);
		memcpy(&s[1], &e, sizeof(e));
		e.type = XEN_NETIF_EXTRA_TYPE_MCAST_DEL;
		e.flags = 0;
		memcpy(e.u.mcast.addr, g1, 6);
		memcpy(&s[2], &e, sizeof(e));
		s[3] = rq(0, 0, 3, 60);
		assert_int_equal(back_tx_ring2pkt(s, 4, &out), BACK_TX_MCAST);
		assert_int_equal(out.nslots, 3);
		assert_int_equal(out.nextras, 2);
		assert_int_equal(out.mcast_op, XEN_NETIF_EXTRA_TYPE_MCAST_ADD);
		assert_memory_equal(out.mcast_addr, g2, 6);
	}

	b_64k(s);
	assert_int_equal(back_tx_ring2pkt(s, 16, &out), BACK_TX_OK);
	for (unsigned int i = 0; i < out.ndata; i++)
		sum += out.data_len[i];
	assert_int_equal(sum, 65535);
	assert_int_equal(out.data_len[0], 4095);

	b_tiny_header_slots(s);
	assert_int_equal(back_tx_ring2pkt(s, 19, &out), BACK_TX_OK);
	assert_int_equal(out.ndata, 19);
	assert_int_equal(out.len, 32);

	/* A drop consumes the whole chain, extras included, so the next packet parses. */
	s[0] = rq(0, NETTXF_extra_info | NETTXF_more_data, 0, 100);
	s[1] = ex(XEN_NETIF_EXTRA_TYPE_GSO, 0, 1000, 1);
	s[2] = rq(0, 0, 2, 300);
	s[3] = rq(0, 0, 3, 80);
	assert_int_equal(back_tx_ring2pkt(s, 4, &out), BACK_TX_DROP);
	assert_int_equal(out.nslots, 3);
	assert_int_equal(out.nextras, 1);
	assert_int_equal(back_tx_ring2pkt(s + 3, 1, &out), BACK_TX_OK);
}

/* Garbage in: every input terminates with a sane verdict (a mini fuzzer). */
static void test_garbage(void **state)
{
	uint64_t x = 88172645463325252ULL;
	netif_tx_request_t s[MAXS];
	struct back_tx_parse out;

	for (int iter = 0; iter < 200000; iter++) {
		unsigned int n = 1 + (unsigned int)(x % MAXS);

		for (unsigned int i = 0; i < MAXS; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			memcpy(&s[i], &x, sizeof(s[i]) < sizeof(x) ? sizeof(s[i]) : sizeof(x));
			s[i].flags &= 0xf;
			if (x & 0x100000)
				s[i].flags |= NETTXF_more_data;
		}
		int v = back_tx_ring2pkt(s, n, &out);

		assert_true(v == BACK_TX_OK || v == BACK_TX_DROP || v == BACK_TX_FATAL ||
			    v == BACK_TX_MCAST);
		if (v != BACK_TX_FATAL)
			assert_true(out.nslots >= 1 && out.nslots <= n);
		if (v == BACK_TX_OK) {
			uint32_t sum = 0;

			assert_true(out.ndata >= 1 && out.ndata <= BACK_TX_MAX_DATA);
			for (unsigned int i = 0; i < out.ndata; i++) {
				const netif_tx_request_t *d = &s[out.data[i]];

				assert_true(out.data[i] < out.nslots);
				assert_true(d->offset + out.data_len[i] <= BACK_PAGE_SIZE);
				sum += out.data_len[i];
			}
			assert_int_equal(sum, out.len);
			assert_true(out.data_len[0] >= BACK_TX_MIN_FIRST);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_details),
	    cmocka_unit_test(test_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
