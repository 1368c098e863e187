// SPDX-License-Identifier: MIT
/* test_hash.c - RX steering rules: Toeplitz RSS vectors and tables, hash types, mapping table (XSA-270) */
#include <arpa/inet.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "back/hash.h"

/* The standard 40-byte RSS key (Microsoft's "Verifying the RSS Hash Calculation"). */
static const uint8_t rss_key[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vec {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t l3, l4;
};

static const struct vec v4[] = {
    {"66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2, 0x51ccc178},
    {"199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea},
    {"24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de, 0x5c2b394a},
    {"38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176, 0xafc7327f},
    {"153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5, 0x10e828a2},
};

static const struct vec v6[] = {
    {"3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5, 0x40207d3d},
    {"3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c, 0xdde51bbf},
    {"3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024, 0x4b61e985,
     0x02d1feef},
};

/* Ethernet + IPv4 (20 bytes, @frag_off) + TCP/UDP ports; returns the length. */
static uint32_t frame4(uint8_t *f, const struct vec *v, uint8_t proto, uint16_t frag_off)
{
	memset(f, 0, 64);
	memcpy(f, "\x00\x16\x3e\x00\x00\x01\x00\x16\x3e\x00\x00\x02", 12);
	f[12] = 0x08;
	f[13] = 0x00;
	f[14] = 0x45;
	f[14 + 6] = (uint8_t)(frag_off >> 8);
	f[14 + 7] = (uint8_t)frag_off;
	f[14 + 9] = proto;
	assert_int_equal(inet_pton(AF_INET, v->src, f + 14 + 12), 1);
	assert_int_equal(inet_pton(AF_INET, v->dst, f + 14 + 16), 1);
	f[34] = (uint8_t)(v->sport >> 8);
	f[35] = (uint8_t)v->sport;
	f[36] = (uint8_t)(v->dport >> 8);
	f[37] = (uint8_t)v->dport;
	return 54;
}

static uint32_t frame6(uint8_t *f, const struct vec *v, uint8_t next)
{
	memset(f, 0, 96);
	memcpy(f, "\x00\x16\x3e\x00\x00\x01\x00\x16\x3e\x00\x00\x02", 12);
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[14 + 6] = next;
	assert_int_equal(inet_pton(AF_INET6, v->src, f + 14 + 8), 1);
	assert_int_equal(inet_pton(AF_INET6, v->dst, f + 14 + 24), 1);
	f[54] = (uint8_t)(v->sport >> 8);
	f[55] = (uint8_t)v->sport;
	f[56] = (uint8_t)(v->dport >> 8);
	f[57] = (uint8_t)v->dport;
	return 74;
}

static struct back_hash *new_hash(void)
{
	struct back_hash *h = aligned_alloc(64, (sizeof(*h) + 63) / 64 * 64);

	assert_non_null(h);
	memset(h, 0, sizeof(*h));
	back_hash_reset(h);
	return h;
}

/* The RSS verification vectors through Xen's function, on raw inputs. */
static void test_toeplitz_vectors(void **state)
{
	uint8_t in[36];

	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		inet_pton(AF_INET, v4[i].src, in);
		inet_pton(AF_INET, v4[i].dst, in + 4);
		in[8] = (uint8_t)(v4[i].sport >> 8);
		in[9] = (uint8_t)v4[i].sport;
		in[10] = (uint8_t)(v4[i].dport >> 8);
		in[11] = (uint8_t)v4[i].dport;
		assert_int_equal(back_hash_toeplitz(rss_key, 40, in, 8), v4[i].l3);
		assert_int_equal(back_hash_toeplitz(rss_key, 40, in, 12), v4[i].l4);
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		inet_pton(AF_INET6, v6[i].src, in);
		inet_pton(AF_INET6, v6[i].dst, in + 16);
		in[32] = (uint8_t)(v6[i].sport >> 8);
		in[33] = (uint8_t)v6[i].sport;
		in[34] = (uint8_t)(v6[i].dport >> 8);
		in[35] = (uint8_t)v6[i].dport;
		assert_int_equal(back_hash_toeplitz(rss_key, 40, in, 32), v6[i].l3);
		assert_int_equal(back_hash_toeplitz(rss_key, 40, in, 36), v6[i].l4);
	}
}

/* A pseudo-random byte stream, the same on every run. */
static uint8_t next_byte(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return (uint8_t)(*x >> 16);
}

/*
 * The tables give Xen's reference value for every key and input: 300
 * random keys (some with a zero tail, as shorter keys are padded), every
 * input length 0..36, plus the RSS vectors.
 */
static void test_toeplitz_tables_exact(void **state)
{
	static struct back_toeplitz_tab t;
	uint8_t key[BACK_HASH_KEY_MAX], in[BACK_HASH_INPUT_MAX];
	uint32_t x = 1;

	(void)state;
	for (int k = 0; k < 300; k++) {
		unsigned int keylen = k % 3 ? BACK_HASH_KEY_MAX : next_byte(&x) % BACK_HASH_KEY_MAX;

		memset(key, 0, sizeof(key));
		for (unsigned int i = 0; i < keylen; i++)
			key[i] = next_byte(&x);
		back_toeplitz_tab_build(&t, key);
		assert_memory_equal(t.key, key, sizeof(key));
		for (unsigned int len = 0; len <= BACK_HASH_INPUT_MAX; len++) {
			for (unsigned int i = 0; i < len; i++)
				in[i] = next_byte(&x);
			assert_int_equal(back_toeplitz_tab_hash(&t, in, len),
					 back_hash_toeplitz(key, keylen, in, len));
		}
	}
	back_toeplitz_tab_build(&t, rss_key);
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		uint16_t sp = htons(v4[i].sport), dp = htons(v4[i].dport);

		assert_int_equal(inet_pton(AF_INET, v4[i].src, in), 1);
		assert_int_equal(inet_pton(AF_INET, v4[i].dst, in + 4), 1);
		memcpy(in + 8, &sp, 2);
		memcpy(in + 10, &dp, 2);
		assert_int_equal(back_toeplitz_tab_hash(&t, in, 12), v4[i].l4);
	}
}

/*
 * The cache test runs on a thread of its own (so that the cache starts
 * empty), where cmocka's assertions cannot be used: CHECK() records the
 * first failing line for the test's thread to assert on.
 */
static int budget_fail_line;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond) && !budget_fail_line)                                                  \
			budget_fail_line = __LINE__;                                               \
	} while (0)

/* Snapshot @h's configuration after setting the RSS key with its first byte @key0. */
static const struct back_toeplitz_tab *snap_key(struct back_hash *h, uint8_t key0,
						struct back_hash_snap *s)
{
	uint8_t key[BACK_HASH_KEY_MAX];

	memcpy(key, rss_key, sizeof(key));
	key[0] = key0;
	CHECK(back_hash_set_key(h, key, sizeof(key)) == 0);
	back_hash_snapshot(h, s);
	return s->tab;
}

/* Hash @n IPv4 TCP frames with snapshot @s; check each against Xen's function. */
static void hash_frames(struct back_hash *h, const struct back_hash_snap *s, unsigned int n)
{
	struct back_hash_result r;
	uint8_t f[96], in[BACK_HASH_INPUT_MAX];
	uint32_t len = frame4(f, &v4[0], 6, 0);
	unsigned int inlen;

	CHECK(back_hash_input(f, len, s->flags, in, &inlen) == _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
	for (unsigned int i = 0; i < n; i++) {
		back_hash_select(h, s, f, len, 4, &r);
		CHECK(r.hash == back_hash_toeplitz(s->key, BACK_HASH_KEY_MAX, in, inlen));
	}
}

/*
 * The per-thread cache: the first key is built at once; a new key is
 * hashed bit by bit until 64 frames have been, and only then built; four
 * keys are kept, a fifth replaces the oldest.  Keys rewritten all the time
 * get a build per 64 frames hashed bit by bit, never one per batch.
 */
static void *table_budget(void *arg)
{
	struct back_hash *h = arg;
	const struct back_toeplitz_tab *t1, *t;
	struct back_hash_snap s;
	unsigned int built = 0;

	t1 = snap_key(h, 1, &s);
	CHECK(t1 != NULL);
	hash_frames(h, &s, 10);
	CHECK(snap_key(h, 2, &s) == NULL);
	hash_frames(h, &s, 63);
	CHECK(snap_key(h, 2, &s) == NULL);
	hash_frames(h, &s, 1);
	t = snap_key(h, 2, &s);
	CHECK(t != NULL && t != t1 && t->key[0] == 2);
	hash_frames(h, &s, 10);
	CHECK(snap_key(h, 1, &s) == t1); /* still cached */
	/* keys 3 and 4 fill the cache, key 5 replaces key 1 */
	for (uint8_t k = 3; k <= 5; k++) {
		CHECK(snap_key(h, k, &s) == NULL);
		hash_frames(h, &s, 64);
		CHECK(snap_key(h, k, &s) != NULL);
	}
	CHECK(snap_key(h, 5, &s) == t1 && t1->key[0] == 5);
	CHECK(snap_key(h, 2, &s) == t);
	/* a key new on every batch of 32 frames: a build per 64 frames hashed bit by bit */
	for (unsigned int k = 0; k < 100; k++) {
		built += snap_key(h, (uint8_t)(10 + k), &s) != NULL;
		hash_frames(h, &s, 32);
	}
	/* each build's own batch hashes by its tables: one build every third batch */
	CHECK(built >= 32 && built <= 34);
	return NULL;
}

static void test_toeplitz_table_budget(void **state)
{
	struct back_hash *h = new_hash();
	pthread_t th;

	(void)state;
	assert_int_equal(back_hash_set_alg(h, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ), 0);
	assert_int_equal(back_hash_set_flags(h, BACK_HASH_TYPES_ALL), 0);
	assert_int_equal(pthread_create(&th, NULL, table_budget, h), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(budget_fail_line, 0);
	free(h);
}

/*
 * The modulo by multiplication equals %, for every mapping size: edge
 * values, random hashes, and the multiples of the size around them.
 */
static void test_hash_mod(void **state)
{
	static const uint32_t edge[] = {0,   1,		  2,	       127,	    128,
					129, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
	uint32_t x = 7;

	(void)state;
	for (uint32_t d = 1; d <= BACK_HASH_MAPPING_MAX; d++) {
		uint64_t m = back_hash_mod_m(d);

		for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
			assert_int_equal(back_hash_mod(edge[i], m, d), edge[i] % d);
		for (int i = 0; i < 20000; i++) {
			uint32_t a = (uint32_t)next_byte(&x) << 24 | (uint32_t)next_byte(&x) << 16 |
				     (uint32_t)next_byte(&x) << 8 | next_byte(&x);
			uint32_t k = a / d * d; /* a multiple of d, at most a */

			assert_int_equal(back_hash_mod(a, m, d), a % d);
			assert_int_equal(back_hash_mod(k, m, d), 0);
			if (k)
				assert_int_equal(back_hash_mod(k - 1, m, d), d - 1);
		}
	}
}

/* The same vectors from frames, through the maximal-type rule and the key op. */
static void test_select_vectors(void **state)
{
	struct back_hash *h = new_hash();
	struct back_hash_snap s;
	struct back_hash_result r;
	uint8_t f[96];
	uint32_t len;

	assert_int_equal(back_hash_set_alg(h, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ), 0);
	assert_int_equal(back_hash_set_key(h, rss_key, 40), 0);
	assert_int_equal(back_hash_set_flags(h, BACK_HASH_TYPES_ALL), 0);
	back_hash_snapshot(h, &s);
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		len = frame4(f, &v4[i], 6, 0);
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
		assert_int_equal(r.hash, v4[i].l4);
		assert_int_equal(r.queue, v4[i].l4 % 4);
		/* UDP: the maximal type is L3 */
		len = frame4(f, &v4[i], 17, 0);
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
		assert_int_equal(r.hash, v4[i].l3);
		/* fragments never use L4 (MF set, then an offset) */
		len = frame4(f, &v4[i], 6, 0x2000);
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
		assert_int_equal(r.hash, v4[i].l3);
		len = frame4(f, &v4[i], 6, 0x0010);
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		len = frame6(f, &v6[i], 6);
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP);
		assert_int_equal(r.hash, v6[i].l4);
		len = frame6(f, &v6[i], 44); /* fragment header: L3 only */
		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.type, _XEN_NETIF_CTRL_HASH_TYPE_IPV6);
		assert_int_equal(r.hash, v6[i].l3);
	}
	free(h);
}

/* Which type applies for each combination of enabled flags. */
static void test_type_rules(void **state)
{
	uint8_t f[96], in[36];
	unsigned int n;

	frame4(f, &v4[0], 6, 0);
	assert_int_equal(back_hash_input(f, 54, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
	assert_int_equal(n, 12);
	assert_int_equal(back_hash_input(f, 54, XEN_NETIF_CTRL_HASH_TYPE_IPV4, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
	assert_int_equal(n, 8);
	/* only IPv6 types enabled: an IPv4 frame has no type */
	assert_int_equal(back_hash_input(f, 54, XEN_NETIF_CTRL_HASH_TYPE_IPV6, in, &n),
			 BACK_HASH_TYPE_NONE);
	assert_int_equal(back_hash_input(f, 54, 0, in, &n), BACK_HASH_TYPE_NONE);
	/* only L4 enabled: UDP has no type */
	frame4(f, &v4[0], 17, 0);
	assert_int_equal(back_hash_input(f, 54, XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP, in, &n),
			 BACK_HASH_TYPE_NONE);
	/* ports beyond the private header: L3 */
	frame4(f, &v4[0], 6, 0);
	assert_int_equal(back_hash_input(f, 36, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
	/* truncated IP header, non-IP, runt: none */
	assert_int_equal(back_hash_input(f, 30, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	f[12] = 0x88;
	f[13] = 0xb5;
	assert_int_equal(back_hash_input(f, 54, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	assert_int_equal(back_hash_input(f, 10, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	/* a VLAN tag is skipped */
	frame4(f + 4, &v4[0], 6, 0);
	memmove(f, f + 4, 12);
	f[12] = 0x81;
	f[13] = 0x00;
	f[14] = 0;
	f[15] = 5;
	f[16] = 0x08;
	f[17] = 0x00;
	assert_int_equal(back_hash_input(f, 58, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
	assert_int_equal(back_hash_toeplitz(rss_key, 40, in, n), v4[0].l4);
	/* so is an 802.1ad service tag */
	f[12] = 0x88;
	f[13] = 0xa8;
	assert_int_equal(back_hash_input(f, 58, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
	assert_int_equal(back_hash_toeplitz(rss_key, 40, in, n), v4[0].l4);
	/* A tag but not its EtherType within the header: none (never a byte past it). */
	assert_int_equal(back_hash_input(f, 17, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);

	/* Each bound to the byte: the IPv4 header, then the ports after it. */
	frame4(f, &v4[0], 6, 0);
	assert_int_equal(back_hash_input(f, 34, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
	assert_int_equal(back_hash_input(f, 33, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	assert_int_equal(back_hash_input(f, 38, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP);
	assert_int_equal(back_hash_input(f, 37, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV4);
	/* An IPv4 header length under 20 bytes: the "ports" would be inside it. */
	f[14] = 0x44;
	assert_int_equal(back_hash_input(f, 54, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	/* The same for IPv6: 40 bytes of header, then the ports. */
	frame6(f, &v6[0], 6);
	assert_int_equal(back_hash_input(f, 54, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV6);
	assert_int_equal(back_hash_input(f, 53, BACK_HASH_TYPES_ALL, in, &n), BACK_HASH_TYPE_NONE);
	assert_int_equal(back_hash_input(f, 58, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP);
	assert_int_equal(back_hash_input(f, 57, BACK_HASH_TYPES_ALL, in, &n),
			 _XEN_NETIF_CTRL_HASH_TYPE_IPV6);
}

/* Control operations: algorithm, flags, key. */
static void test_ctrl_ops(void **state)
{
	struct back_hash *h = new_hash();
	uint8_t key[41] = {1, 2, 3};
	uint32_t flags = 0;
	struct back_hash_snap s;

	/* no algorithm yet: flags not supported, none can be set (Linux's statuses) */
	assert_int_equal(back_hash_get_flags(h, &flags), XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED);
	assert_int_equal(back_hash_set_flags(h, XEN_NETIF_CTRL_HASH_TYPE_IPV4),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_set_alg(h, 2), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_set_alg(h, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ), 0);
	assert_int_equal(back_hash_get_flags(h, &flags), 0);
	assert_int_equal(flags, BACK_HASH_TYPES_ALL);
	assert_int_equal(back_hash_set_flags(h, 1u << 4), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_set_flags(h, BACK_HASH_TYPES_ALL), 0);
	/* key: too long refused, short zero-padded, 0 clears */
	assert_int_equal(back_hash_set_key(h, key, 41), XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW);
	assert_int_equal(back_hash_set_key(h, rss_key, 40), 0);
	assert_int_equal(back_hash_set_key(h, key, 3), 0);
	back_hash_snapshot(h, &s);
	assert_memory_equal(s.key, "\x01\x02\x03\x00\x00", 5);
	for (unsigned int i = 3; i < 40; i++)
		assert_int_equal(s.key[i], 0);
	assert_int_equal(s.flags, BACK_HASH_TYPES_ALL);
	assert_int_equal(s.alg, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
	free(h);
}

/* Mapping table: size bound, range checks without overflow, entries < queues, commit. */
static void test_mapping_rules(void **state)
{
	struct back_hash *h = new_hash();
	uint32_t staged[BACK_HASH_MAPPING_MAX];
	struct back_hash_snap s;
	struct back_hash_result r;
	uint8_t f[96];

	assert_int_equal(back_hash_set_alg(h, XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ), 0);
	assert_int_equal(back_hash_set_key(h, rss_key, 40), 0);
	assert_int_equal(back_hash_set_flags(h, BACK_HASH_TYPES_ALL), 0);
	assert_int_equal(back_hash_set_mapping_size(h, BACK_HASH_MAPPING_MAX + 1),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_set_mapping_size(h, 8), 0);
	for (unsigned int i = 0; i < 8; i++)
		staged[i] = 3 - i % 4;
	/* ranges: past the end, wrapping offsets, length beyond the size */
	assert_int_equal(back_hash_check_mapping(h, 2, 7), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_check_mapping(h, 2, UINT32_MAX),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_check_mapping(h, UINT32_MAX, 2),
			 XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW);
	assert_int_equal(back_hash_check_mapping(h, BACK_HASH_MAPPING_MAX + 1, 0),
			 XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW);
	assert_int_equal(back_hash_check_mapping(h, BACK_HASH_MAPPING_MAX, 0),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER); /* fits ours, not this one's 8 */
	assert_int_equal(back_hash_check_mapping(h, 9, 0), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	assert_int_equal(back_hash_check_mapping(h, 8, 0), 0);
	assert_int_equal(back_hash_check_mapping(h, 0, 8), 0);
	assert_int_equal(back_hash_set_mapping(h, staged, 2, UINT32_MAX - 1, 4),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	/* an entry >= num_queues: nothing is committed */
	staged[5] = 4;
	assert_int_equal(back_hash_set_mapping(h, staged, 8, 0, 4),
			 XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(atomic_load(&h->mapping[i]), 0);
	staged[5] = 3 - 5 % 4;
	assert_int_equal(back_hash_set_mapping(h, staged, 8, 0, 4), 0);
	/* a partial update at an offset */
	staged[0] = 1;
	assert_int_equal(back_hash_set_mapping(h, staged, 1, 7, 4), 0);
	assert_int_equal(atomic_load(&h->mapping[7]), 1);
	/* steering follows the table: queue = mapping[hash % 8] */
	back_hash_snapshot(h, &s);
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		uint32_t len = frame4(f, &v4[i], 6, 0);
		unsigned int slot = v4[i].l4 % 8;

		back_hash_select(h, &s, f, len, 4, &r);
		assert_int_equal(r.queue, slot == 7 ? 1 : 3 - slot % 4);
	}
	/* size 0: hash % num_queues; resizing zeroes the table */
	assert_int_equal(back_hash_set_mapping_size(h, 0), 0);
	assert_int_equal(back_hash_check_mapping(h, 1, 0), XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER);
	back_hash_snapshot(h, &s);
	frame4(f, &v4[1], 6, 0);
	back_hash_select(h, &s, f, 54, 3, &r);
	assert_int_equal(r.queue, v4[1].l4 % 3);
	assert_int_equal(back_hash_set_mapping_size(h, 4), 0);
	assert_int_equal(atomic_load(&h->mapping[7]), 0);
	/* a frame no type applies to: hash 0, entry 0, no HASH extra */
	back_hash_snapshot(h, &s);
	f[12] = 0x88;
	back_hash_select(h, &s, f, 54, 4, &r);
	assert_int_equal(r.type, BACK_HASH_TYPE_NONE);
	assert_int_equal(r.queue, 0);
	free(h);
}

/* Without Toeplitz: a keyed flow hash, stable per flow, spreading flows. */
static void test_flow_hash(void **state)
{
	struct back_hash *h = new_hash();
	struct back_hash_snap s;
	struct back_hash_result r, r2;
	unsigned int used = 0;
	uint8_t f[96];

	back_hash_snapshot(h, &s);
	for (uint16_t port = 1000; port < 1064; port++) {
		struct vec v = v4[0];

		v.sport = port;
		frame4(f, &v, 17, 0);
		back_hash_select(h, &s, f, 54, 4, &r);
		assert_int_equal(r.type, BACK_HASH_TYPE_NONE);
		assert_true(r.queue < 4);
		/* the same flow again, and a different payload: same queue */
		f[50] = 0x55;
		back_hash_select(h, &s, f, 54, 4, &r2);
		assert_int_equal(r.queue, r2.queue);
		used |= 1u << r.queue;
	}
	assert_int_equal(used, 0xf); /* 64 flows reach every one of 4 queues */
	/*
	 * IPv4 fragments carry no ports (a later fragment's bytes there are
	 * payload): every fragment of a flow goes where its first does, the
	 * ports' place counting for none of them.
	 */
	frame4(f, &v4[0], 17, 0x2000); /* MF: the first fragment */
	back_hash_select(h, &s, f, 54, 4, &r);
	for (uint16_t port = 1000; port < 1064; port++) {
		struct vec v = v4[0];

		v.sport = port;
		frame4(f, &v, 17, port & 1 ? 0x2000 | 185 : 185);
		back_hash_select(h, &s, f, 54, 4, &r2);
		assert_int_equal(r2.queue, r.queue);
	}
	/*
	 * A bare Ethernet header (14 bytes, the shortest frame) hashes its
	 * addresses, as the same frame one byte longer does: no queue of its own.
	 */
	used = 0;
	for (unsigned int i = 0; i < 64; i++) {
		memset(f, 0, sizeof(f));
		f[5] = (uint8_t)i;
		f[11] = (uint8_t)(i * 7 + 1);
		f[12] = 0x88;
		f[13] = 0xb5;
		back_hash_select(h, &s, f, 14, 4, &r);
		back_hash_select(h, &s, f, 15, 4, &r2);
		assert_int_equal(r.queue, r2.queue);
		used |= 1u << r.queue;
	}
	assert_int_equal(used, 0xf);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_toeplitz_vectors),
	    cmocka_unit_test(test_toeplitz_tables_exact),
	    cmocka_unit_test(test_toeplitz_table_budget),
	    cmocka_unit_test(test_hash_mod),
	    cmocka_unit_test(test_select_vectors),
	    cmocka_unit_test(test_type_rules),
	    cmocka_unit_test(test_ctrl_ops),
	    cmocka_unit_test(test_mapping_rules),
	    cmocka_unit_test(test_flow_hash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
