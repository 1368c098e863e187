/* SPDX-License-Identifier: MIT */
/* hash.h - netback RX steering: the guest's Toeplitz configuration and the queue of a frame */
#ifndef PVNET_BACK_HASH_H
#define PVNET_BACK_HASH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <sodium.h>

#include "common/xen.h"

/* Longest key: Linux netback's XEN_NETBK_MAX_HASH_KEY_SIZE (the 40-byte RSS key). */
#define BACK_HASH_KEY_MAX 40u
/* Largest mapping table: Linux's XEN_NETBK_MAX_HASH_MAPPING_SIZE. */
#define BACK_HASH_MAPPING_MAX 128u
/* Every hash type we implement (netif.h's XEN_NETIF_CTRL_HASH_TYPE_*: IPv4, IPv4+TCP, IPv6, IPv6+TCP). */
#define BACK_HASH_TYPES_ALL                                                                        \
	(XEN_NETIF_CTRL_HASH_TYPE_IPV4 | XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP |                       \
	 XEN_NETIF_CTRL_HASH_TYPE_IPV6 | XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP)
/* "No hash type applied" in back_hash_result.type (types are bit numbers 0..3). */
#define BACK_HASH_TYPE_NONE 0xffu
/* Longest Toeplitz input: IPv6 source, destination and two ports. */
#define BACK_HASH_INPUT_MAX 36u

/**
 * struct back_hash - one vif's steering configuration
 *
 * Written by one thread (the queue-0 worker serving the control ring, or
 * the loop thread at connect while no worker runs); read by every thread
 * that calls the vif's xmit().  A sequence count (odd while a writer is
 * inside) lets a reader take a consistent snapshot of the scalar fields
 * and the key once per xmit batch; every field is atomic so the readers
 * never race in the C11 sense.  Mapping entries are read one at a time:
 * each one committed is < the vif's queue count, and readers reduce it
 * modulo the queue count again, so a table being rewritten steers some
 * frames by the old and some by the new entry, never out of range.
 */
struct back_hash {
	_Alignas(64) _Atomic uint32_t seq;
	_Atomic uint32_t alg;
	_Atomic uint32_t flags;
	_Atomic uint32_t size;
	_Atomic uint64_t key[BACK_HASH_KEY_MAX / 8];
	_Atomic uint32_t mapping[BACK_HASH_MAPPING_MAX];
	unsigned char flow_key[crypto_shorthash_KEYBYTES];
};

/**
 * struct back_toeplitz_tab - a Toeplitz key as lookup tables
 * @key: the key they were built from (BACK_HASH_KEY_MAX bytes, zero-padded)
 * @nib: nib[2 * i][v] is what high nibble v of input byte i adds to the
 *	hash, nib[2 * i + 1][v] what low nibble v adds
 *
 * Two loads per input byte instead of eight conditional 32-bit window
 * XORs; the same value as back_hash_toeplitz() for every input (tested).
 */
struct back_toeplitz_tab {
	uint8_t key[BACK_HASH_KEY_MAX];
	uint32_t nib[2 * BACK_HASH_INPUT_MAX][16];
};

/**
 * struct back_hash_snap - a reader's consistent copy of the scalar fields and key
 * @size_m: back_hash_mod_m(@size) when @size is a valid mapping size, else 0
 * @tab: the calling thread's tables of @key, or NULL (the bit-by-bit hash)
 */
struct back_hash_snap {
	uint32_t alg, flags, size;
	uint64_t size_m;
	uint8_t key[BACK_HASH_KEY_MAX];
	const struct back_toeplitz_tab *tab;
};

/*
 * @a % @d by two multiplications instead of a division, given
 * @m = back_hash_mod_m(@d) (Lemire, Kaser and Kurz, "Faster remainder by
 * direct computation", 2019): exact for every 32-bit @a and @d >= 1.
 * The queue choice's modulo of the mapping size, once per frame.
 */
static inline uint64_t back_hash_mod_m(uint32_t d)
{
	return UINT64_MAX / d + 1;
}

static inline uint32_t back_hash_mod(uint32_t a, uint64_t m, uint32_t d)
{
	return (uint32_t)(((unsigned __int128)(m * a) * d) >> 64);
}

/**
 * struct back_hash_result - where a frame goes
 * @queue: the RX queue
 * @hash: the Toeplitz value (valid when @type != BACK_HASH_TYPE_NONE)
 * @type: the _XEN_NETIF_CTRL_HASH_TYPE_* bit number used, or BACK_HASH_TYPE_NONE
 */
struct back_hash_result {
	unsigned int queue;
	uint32_t hash;
	uint8_t type;
};

void back_hash_reset(struct back_hash *h);
void back_hash_snapshot(const struct back_hash *h, struct back_hash_snap *s);
uint32_t back_hash_toeplitz(const uint8_t *key, unsigned int keylen, const uint8_t *in,
			    unsigned int len);
void back_toeplitz_tab_build(struct back_toeplitz_tab *t, const uint8_t *key);
uint32_t back_toeplitz_tab_hash(const struct back_toeplitz_tab *t, const uint8_t *in,
				unsigned int len);
uint8_t back_hash_input(const uint8_t *hdr, uint32_t hdr_len, uint32_t flags, uint8_t *in,
			unsigned int *len);
void back_hash_select(const struct back_hash *h, const struct back_hash_snap *s, const uint8_t *hdr,
		      uint32_t hdr_len, unsigned int nq, struct back_hash_result *r);

/* Control-ring operations: each returns a XEN_NETIF_CTRL_STATUS_* value. */
uint32_t back_hash_set_alg(struct back_hash *h, uint32_t alg);
uint32_t back_hash_get_flags(const struct back_hash *h, uint32_t *flags);
uint32_t back_hash_set_flags(struct back_hash *h, uint32_t flags);
uint32_t back_hash_set_key(struct back_hash *h, const uint8_t *key, uint32_t len);
uint32_t back_hash_set_mapping_size(struct back_hash *h, uint32_t size);
uint32_t back_hash_check_mapping(const struct back_hash *h, uint32_t len, uint32_t off);
uint32_t back_hash_set_mapping(struct back_hash *h, const uint32_t *staged, uint32_t len,
			       uint32_t off, unsigned int nq);

#endif /* PVNET_BACK_HASH_H */
