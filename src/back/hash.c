// SPDX-License-Identifier: MIT
// hash.c - netback RX steering: Toeplitz hash types, mapping table, keyed flow hash

/*
 * Theory of Operation
 *
 * Every frame the switch hands to a vif goes to one of its RX queues; all
 * frames of one flow must go to the same one, or the guest sees them out of
 * order.  The queue is (netif.h's control ring, Linux netback's xenvif_select_queue):
 *
 *   algorithm Toeplitz, table size > 0:  mapping[toeplitz(input) % size]
 *   algorithm Toeplitz, table size 0:    toeplitz(input) % num_queues
 *   algorithm none (the default):        siphash(flow fields) % num_queues
 *
 * The Toeplitz input is chosen by the "maximal type" rule: with the TCP
 * type of the frame's IP version enabled, an unfragmented TCP frame whose
 * ports are in the private header hashes addresses and ports; otherwise,
 * with the L3 type enabled, the addresses alone; otherwise no type applies
 * and the hash is 0 (Linux clears it), so such frames share one queue.
 * IPv6 extension headers are not walked: such frames hash as L3.  Only the
 * private header copy (sw_pkt.hdr) is read, never guest memory.
 *
 * The flow hash used without Toeplitz is SipHash-2-4 (libsodium) over the
 * MAC addresses and, for IPv4/IPv6, the protocol, addresses and TCP/UDP
 * ports, keyed per vif with a random key drawn at connect: a sender cannot
 * aim a flood at one queue of another guest by choosing its headers.
 *
 * Concurrency: see struct back_hash.  The control operations run on the
 * one thread serving the control ring (ctrl.c) and publish with the
 * sequence count; back_hash_snapshot() runs once per xmit() batch.
 */

#define XEN_NETIF_DEFINE_TOEPLITZ 1
#include "common/xen.h"

#include <string.h>

#include "back/hash.h"

/* Ethernet, 802.1Q and the IP offsets the hash reads. */
#define ETH_HLEN	14u
#define VLAN_HLEN	4u
#define ETHERTYPE_IPV4	0x0800u
#define ETHERTYPE_IPV6	0x86ddu
#define ETHERTYPE_VLAN	0x8100u
#define ETHERTYPE_QINQ	0x88a8u /* 802.1ad service tag */
#define IPV4_HLEN_MIN	20u
#define IPV4_FRAG_MASK	0x3fffu /* MF flag and fragment offset: any fragment */
#define IPV6_HLEN	40u
#define IPPROTO_TCP_NUM 6u
#define IPPROTO_UDP_NUM 17u
#define L4_PORTS_LEN	4u
/* Flow-hash input: MACs 12 + protocol 1 + IPv6 addresses 32 + ports 4. */
#define FLOW_INPUT_MAX 49u
/* Reader retries while a writer is inside; the writer never blocks there. */
#define SNAPSHOT_RETRIES 64

static void w_begin(struct back_hash *h)
{
	uint32_t s = atomic_load_explicit(&h->seq, memory_order_relaxed);

	atomic_store_explicit(&h->seq, s + 1, memory_order_relaxed);
}

static void w_end(struct back_hash *h)
{
	uint32_t s = atomic_load_explicit(&h->seq, memory_order_relaxed);

	atomic_store_explicit(&h->seq, s + 1, memory_order_release);
}

/* Data stores are release so a reader that sees one also sees the odd count. */
static void w_store(_Atomic uint32_t *p, uint32_t v)
{
	atomic_store_explicit(p, v, memory_order_release);
}

/**
 * back_hash_reset() - algorithm none, no flags, empty key and table, new flow key
 * @h: the configuration (no reader may run: connect, before the port exists)
 */
void back_hash_reset(struct back_hash *h)
{
	atomic_store(&h->alg, XEN_NETIF_CTRL_HASH_ALGORITHM_NONE);
	atomic_store(&h->flags, 0);
	atomic_store(&h->size, 0);
	for (unsigned int i = 0; i < BACK_HASH_KEY_MAX / 8; i++)
		atomic_store(&h->key[i], 0);
	for (unsigned int i = 0; i < BACK_HASH_MAPPING_MAX; i++)
		atomic_store(&h->mapping[i], 0);
	crypto_shorthash_keygen(h->flow_key);
}

/*
 * Toeplitz by tables (struct back_toeplitz_tab): each thread keeps the
 * tables of the last few keys it hashed with.  A snapshot whose key has
 * none uses the bit-by-bit hash, and a build (0.4-0.6 us here, about as
 * long as 8-15 bit-by-bit hashes of an IPv4 TCP input) happens only once
 * TOEPLITZ_BUILD_FRAMES frames have been hashed bit by bit since the last
 * one: a guest rewriting its key all the time, or a thread sending to more
 * guests than it caches, costs at most about a fifth more than the
 * bit-by-bit hash, never a build per batch.
 */
#define TOEPLITZ_CACHED	      4
#define TOEPLITZ_BUILD_FRAMES 64

struct toeplitz_cache {
	struct back_toeplitz_tab tab[TOEPLITZ_CACHED];
	unsigned int used, next;
	uint32_t credit; /* frames hashed bit by bit since the last build */
};

static _Thread_local struct toeplitz_cache tls_toeplitz = {.credit = TOEPLITZ_BUILD_FRAMES};

/* Bits @j..@j + 31 of @key, bit 0 being its first byte's top bit; zeros past its end. */
static uint32_t key_window(const uint8_t *key, unsigned int j)
{
	uint64_t w = 0;

	for (unsigned int k = 0; k < 5; k++) {
		unsigned int b = j / 8 + k;

		w = w << 8 | (b < BACK_HASH_KEY_MAX ? key[b] : 0);
	}
	return (uint32_t)(w >> (8 - j % 8));
}

/**
 * back_toeplitz_tab_build() - the tables of @key
 * @t: receives them
 * @key: BACK_HASH_KEY_MAX bytes (zero-padded, as the snapshot's)
 *
 * Input bit j (bit 0: the first byte's top bit) adds key bits j..j+31 to
 * the hash when set; nibble n of the input holds bits 4n..4n+3.
 */
void back_toeplitz_tab_build(struct back_toeplitz_tab *t, const uint8_t *key)
{
	memcpy(t->key, key, BACK_HASH_KEY_MAX);
	for (unsigned int n = 0; n < 2 * BACK_HASH_INPUT_MAX; n++) {
		uint32_t w[4];

		for (unsigned int b = 0; b < 4; b++)
			w[b] = key_window(key, 4 * n + b);
		t->nib[n][0] = 0;
		/* A nibble's lowest set bit k is input bit 4n + 3 - k. */
		for (unsigned int v = 1; v < 16; v++)
			t->nib[n][v] = t->nib[n][v & (v - 1)] ^ w[3 - __builtin_ctz(v)];
	}
}

/* The Toeplitz hash of @len (<= BACK_HASH_INPUT_MAX) bytes by @t's tables. */
uint32_t back_toeplitz_tab_hash(const struct back_toeplitz_tab *t, const uint8_t *in,
				unsigned int len)
{
	uint32_t h = 0;

	for (unsigned int i = 0; i < len; i++)
		h ^= t->nib[2 * i][in[i] >> 4] ^ t->nib[2 * i + 1][in[i] & 15];
	return h;
}

/* This thread's tables of @key, built now if the budget allows; or NULL. */
static const struct back_toeplitz_tab *toeplitz_tables(const uint8_t *key)
{
	struct toeplitz_cache *c = &tls_toeplitz;
	struct back_toeplitz_tab *t;

	for (unsigned int i = 0; i < c->used; i++)
		if (!memcmp(c->tab[i].key, key, BACK_HASH_KEY_MAX))
			return &c->tab[i];
	if (c->credit < TOEPLITZ_BUILD_FRAMES)
		return NULL;
	t = &c->tab[c->next];
	back_toeplitz_tab_build(t, key);
	c->next = (c->next + 1) % TOEPLITZ_CACHED;
	if (c->used < TOEPLITZ_CACHED)
		c->used++;
	c->credit = 0;
	return t;
}

/**
 * back_hash_snapshot() - a consistent copy of algorithm, flags, size and key
 * @h: the configuration
 * @s: receives the copy, and with Toeplitz this thread's tables of the key
 *	if it has them (valid until the thread's next snapshot)
 *
 * Any thread.  Retries while a writer is inside (bounded: after
 * SNAPSHOT_RETRIES the last values read are used, each one valid by itself).
 */
void back_hash_snapshot(const struct back_hash *h, struct back_hash_snap *s)
{
	struct back_hash *m = (struct back_hash *)h; /* atomics are read through it */

	for (int tries = 0; tries < SNAPSHOT_RETRIES; tries++) {
		uint32_t s1 = atomic_load_explicit(&m->seq, memory_order_acquire);

		s->alg = atomic_load_explicit(&m->alg, memory_order_acquire);
		s->flags = atomic_load_explicit(&m->flags, memory_order_acquire);
		s->size = atomic_load_explicit(&m->size, memory_order_acquire);
		for (unsigned int i = 0; i < BACK_HASH_KEY_MAX / 8; i++) {
			uint64_t w = atomic_load_explicit(&m->key[i], memory_order_acquire);

			memcpy(s->key + 8 * i, &w, 8);
		}
		if (!(s1 & 1) && atomic_load_explicit(&m->seq, memory_order_relaxed) == s1)
			break;
	}
	s->size_m = s->size && s->size <= BACK_HASH_MAPPING_MAX ? back_hash_mod_m(s->size) : 0;
	s->tab = s->alg == XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ ? toeplitz_tables(s->key) : NULL;
}

/**
 * back_hash_toeplitz() - Xen's reference Toeplitz hash (netif.h)
 * @key: the key; bytes past @keylen count as zero
 * @keylen: its length
 * @in: the input bytes, network order
 * @len: their number
 *
 * Return: the 32-bit hash
 */
uint32_t back_hash_toeplitz(const uint8_t *key, unsigned int keylen, const uint8_t *in,
			    unsigned int len)
{
	return xen_netif_toeplitz_hash(key, keylen, in, len);
}

/* Offset of the L3 header and its EtherType (one 802.1Q or 802.1ad tag skipped); 0 if none. */
static uint32_t l3_offset(const uint8_t *hdr, uint32_t hdr_len, uint16_t *etype)
{
	uint32_t off = ETH_HLEN;

	if (hdr_len < ETH_HLEN)
		return 0;
	*etype = (uint16_t)(hdr[12] << 8 | hdr[13]);
	if (*etype == ETHERTYPE_VLAN || *etype == ETHERTYPE_QINQ) {
		if (hdr_len < ETH_HLEN + VLAN_HLEN)
			return 0;
		*etype = (uint16_t)(hdr[16] << 8 | hdr[17]);
		off += VLAN_HLEN;
	}
	return off;
}

/**
 * back_hash_input() - the Toeplitz input of a frame under the maximal-type rule
 * @hdr: the frame's private header copy
 * @hdr_len: its length
 * @flags: the enabled XEN_NETIF_CTRL_HASH_TYPE_* mask
 * @in: receives up to BACK_HASH_INPUT_MAX bytes
 * @len: receives their number
 *
 * Pure.  Return: the _XEN_NETIF_CTRL_HASH_TYPE_* bit number used, or
 * BACK_HASH_TYPE_NONE when no enabled type applies
 */
uint8_t back_hash_input(const uint8_t *hdr, uint32_t hdr_len, uint32_t flags, uint8_t *in,
			unsigned int *len)
{
	uint16_t etype = 0;
	uint32_t l3 = l3_offset(hdr, hdr_len, &etype);

	*len = 0;
	if (l3 == 0)
		return BACK_HASH_TYPE_NONE;
	if (etype == ETHERTYPE_IPV4 && hdr_len >= l3 + IPV4_HLEN_MIN && (hdr[l3] >> 4) == 4 &&
	    (hdr[l3] & 0x0f) * 4u >= IPV4_HLEN_MIN) {
		uint32_t l4 = l3 + (hdr[l3] & 0x0f) * 4u;
		bool frag = ((hdr[l3 + 6] << 8 | hdr[l3 + 7]) & IPV4_FRAG_MASK) != 0;

		memcpy(in, hdr + l3 + 12, 8); /* source, destination */
		if ((flags & XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP) && !frag &&
		    hdr[l3 + 9] == IPPROTO_TCP_NUM && l4 + L4_PORTS_LEN <= hdr_len) {
			memcpy(in + 8, hdr + l4, L4_PORTS_LEN);
			*len = 12;
			return _XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP;
		}
		if (flags & XEN_NETIF_CTRL_HASH_TYPE_IPV4) {
			*len = 8;
			return _XEN_NETIF_CTRL_HASH_TYPE_IPV4;
		}
	} else if (etype == ETHERTYPE_IPV6 && hdr_len >= l3 + IPV6_HLEN && (hdr[l3] >> 4) == 6) {
		uint32_t l4 = l3 + IPV6_HLEN;

		memcpy(in, hdr + l3 + 8, 32); /* source, destination */
		if ((flags & XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP) && hdr[l3 + 6] == IPPROTO_TCP_NUM &&
		    l4 + L4_PORTS_LEN <= hdr_len) {
			memcpy(in + 32, hdr + l4, L4_PORTS_LEN);
			*len = 36;
			return _XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP;
		}
		if (flags & XEN_NETIF_CTRL_HASH_TYPE_IPV6) {
			*len = 32;
			return _XEN_NETIF_CTRL_HASH_TYPE_IPV6;
		}
	}
	*len = 0;
	return BACK_HASH_TYPE_NONE;
}

/* Keyed flow hash over MACs, protocol, addresses and TCP/UDP ports. */
static uint32_t flow_hash(const struct back_hash *h, const uint8_t *hdr, uint32_t hdr_len)
{
	uint8_t in[FLOW_INPUT_MAX], out[crypto_shorthash_BYTES];
	uint16_t etype = 0;
	uint32_t l3 = l3_offset(hdr, hdr_len, &etype), l4 = 0, n = 12;
	uint8_t proto = 0;
	uint32_t v;

	if (l3 == 0)
		return 0;
	memcpy(in, hdr, 12);
	if (etype == ETHERTYPE_IPV4 && hdr_len >= l3 + IPV4_HLEN_MIN) {
		proto = hdr[l3 + 9];
		in[n++] = proto;
		memcpy(in + n, hdr + l3 + 12, 8);
		n += 8;
		l4 = l3 + (hdr[l3] & 0x0f) * 4u;
		if ((hdr[l3 + 6] << 8 | hdr[l3 + 7]) & IPV4_FRAG_MASK)
			proto = 0; /* fragments carry no ports: keep them with their flow's L3 */
	} else if (etype == ETHERTYPE_IPV6 && hdr_len >= l3 + IPV6_HLEN) {
		proto = hdr[l3 + 6];
		in[n++] = proto;
		memcpy(in + n, hdr + l3 + 8, 32);
		n += 32;
		l4 = l3 + IPV6_HLEN;
	}
	if ((proto == IPPROTO_TCP_NUM || proto == IPPROTO_UDP_NUM) &&
	    l4 + L4_PORTS_LEN <= hdr_len) {
		memcpy(in + n, hdr + l4, L4_PORTS_LEN);
		n += L4_PORTS_LEN;
	}
	crypto_shorthash(out, in, n, h->flow_key);
	memcpy(&v, out, sizeof(v));
	return v;
}

/**
 * back_hash_select() - the RX queue of a frame, and its Toeplitz hash
 * @h: the vif's configuration (for the mapping table and the flow key)
 * @s: a snapshot of it taken for this batch
 * @hdr: the frame's private header copy
 * @hdr_len: its length
 * @nq: the vif's queue count (>= 1)
 * @r: receives the queue (< @nq), hash and hash type
 */
void back_hash_select(const struct back_hash *h, const struct back_hash_snap *s, const uint8_t *hdr,
		      uint32_t hdr_len, unsigned int nq, struct back_hash_result *r)
{
	struct back_hash *m = (struct back_hash *)h;
	uint8_t in[BACK_HASH_INPUT_MAX];
	unsigned int len;

	r->type = BACK_HASH_TYPE_NONE;
	r->hash = 0;
	if (s->alg != XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ) {
		/* one queue: nothing to choose, no hash to compute */
		r->queue = nq > 1 ? flow_hash(h, hdr, hdr_len) % nq : 0;
		return;
	}
	r->type = back_hash_input(hdr, hdr_len, s->flags, in, &len);
	if (r->type != BACK_HASH_TYPE_NONE && s->tab) {
		r->hash = back_toeplitz_tab_hash(s->tab, in, len);
	} else if (r->type != BACK_HASH_TYPE_NONE) {
		r->hash = back_hash_toeplitz(s->key, BACK_HASH_KEY_MAX, in, len);
		if (tls_toeplitz.credit < TOEPLITZ_BUILD_FRAMES)
			tls_toeplitz.credit++;
	}
	if (s->size == 0 || s->size > BACK_HASH_MAPPING_MAX) {
		r->queue = r->hash % nq;
	} else {
		/* Committed entries are < nq; the modulo keeps any other value in range. */
		uint32_t q = atomic_load_explicit(
		    &m->mapping[back_hash_mod(r->hash, s->size_m, s->size)], memory_order_relaxed);

		r->queue = q < nq ? q : q % nq;
	}
}

/**
 * back_hash_set_alg() - XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM
 * @h: the configuration
 * @alg: XEN_NETIF_CTRL_HASH_ALGORITHM_NONE or _TOEPLITZ
 *
 * Return: SUCCESS, or INVALID_PARAMETER for another algorithm
 */
uint32_t back_hash_set_alg(struct back_hash *h, uint32_t alg)
{
	if (alg != XEN_NETIF_CTRL_HASH_ALGORITHM_NONE &&
	    alg != XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ)
		return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	w_begin(h);
	w_store(&h->alg, alg);
	w_end(h);
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_get_flags() - XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS
 * @h: the configuration
 * @flags: receives the supported types
 *
 * Return: SUCCESS, or NOT_SUPPORTED while no algorithm is selected
 */
uint32_t back_hash_get_flags(const struct back_hash *h, uint32_t *flags)
{
	struct back_hash *m = (struct back_hash *)h;

	if (atomic_load(&m->alg) == XEN_NETIF_CTRL_HASH_ALGORITHM_NONE)
		return XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED;
	*flags = BACK_HASH_TYPES_ALL;
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_set_flags() - XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS
 * @h: the configuration
 * @flags: XEN_NETIF_CTRL_HASH_TYPE_* mask; 0 disables hashing
 *
 * Return: SUCCESS, or INVALID_PARAMETER for an unknown type bit or while
 * no algorithm is selected (as Linux's netback; GET_HASH_FLAGS answers
 * NOT_SUPPORTED then, as Linux's too)
 */
uint32_t back_hash_set_flags(struct back_hash *h, uint32_t flags)
{
	if (flags & ~(uint32_t)BACK_HASH_TYPES_ALL)
		return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	if (atomic_load(&h->alg) == XEN_NETIF_CTRL_HASH_ALGORITHM_NONE)
		return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	w_begin(h);
	w_store(&h->flags, flags);
	w_end(h);
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_set_key() - XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, key already copied
 * @h: the configuration
 * @key: the key, in private memory
 * @len: its length, <= BACK_HASH_KEY_MAX; shorter keys are zero-padded
 *
 * Return: SUCCESS, or BUFFER_OVERFLOW when @len is longer than we take
 * (netif.h; Linux's netback says INVALID_PARAMETER)
 */
uint32_t back_hash_set_key(struct back_hash *h, const uint8_t *key, uint32_t len)
{
	uint8_t k[BACK_HASH_KEY_MAX] = {0};

	if (len > BACK_HASH_KEY_MAX)
		return XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW;
	if (len)
		memcpy(k, key, len);
	w_begin(h);
	for (unsigned int i = 0; i < BACK_HASH_KEY_MAX / 8; i++) {
		uint64_t w;

		memcpy(&w, k + 8 * i, 8);
		atomic_store_explicit(&h->key[i], w, memory_order_release);
	}
	w_end(h);
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_set_mapping_size() - XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE
 * @h: the configuration
 * @size: entries, <= BACK_HASH_MAPPING_MAX; 0 means hash % num_queues
 *
 * The table is zeroed (every entry queue 0), as Linux does.
 *
 * Return: SUCCESS, or INVALID_PARAMETER when @size is too large
 */
uint32_t back_hash_set_mapping_size(struct back_hash *h, uint32_t size)
{
	if (size > BACK_HASH_MAPPING_MAX)
		return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	w_begin(h);
	for (unsigned int i = 0; i < BACK_HASH_MAPPING_MAX; i++)
		w_store(&h->mapping[i], 0);
	w_store(&h->size, size);
	w_end(h);
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_check_mapping() - may @len entries be written at @off? (before any copy)
 * @h: the configuration
 * @len: entries
 * @off: first entry
 *
 * XSA-270: off + len is checked without overflow against the current size.
 *
 * Return: SUCCESS, BUFFER_OVERFLOW for more entries than any table of ours
 * has (netif.h: "larger than the backend supports"), else
 * INVALID_PARAMETER for a range outside the current table
 */
uint32_t back_hash_check_mapping(const struct back_hash *h, uint32_t len, uint32_t off)
{
	struct back_hash *m = (struct back_hash *)h;
	uint32_t size = atomic_load(&m->size);

	if (len > BACK_HASH_MAPPING_MAX)
		return XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW;
	if (len > size || off > size - len)
		return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}

/**
 * back_hash_set_mapping() - validate staged entries, then commit them
 * @h: the configuration
 * @staged: @len entries already copied into private memory
 * @len: entries
 * @off: where they go
 * @nq: the vif's queue count
 *
 * Nothing is written unless the range fits and every entry is < @nq.
 *
 * Return: SUCCESS, back_hash_check_mapping()'s refusal, or
 * INVALID_PARAMETER for an entry >= @nq
 */
uint32_t back_hash_set_mapping(struct back_hash *h, const uint32_t *staged, uint32_t len,
			       uint32_t off, unsigned int nq)
{
	uint32_t st = back_hash_check_mapping(h, len, off);

	if (st != XEN_NETIF_CTRL_STATUS_SUCCESS)
		return st;
	for (uint32_t i = 0; i < len; i++)
		if (staged[i] >= nq)
			return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
	w_begin(h);
	for (uint32_t i = 0; i < len; i++)
		w_store(&h->mapping[off + i], staged[i]);
	w_end(h);
	return XEN_NETIF_CTRL_STATUS_SUCCESS;
}
