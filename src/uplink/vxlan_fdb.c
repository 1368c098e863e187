// SPDX-License-Identifier: MIT
/* vxlan_fdb.c - which remote VTEP a MAC is behind (see vxlan_fdb.h) */
#include <stdbool.h>
#include <string.h>

#include "uplink/vxlan_fdb.h"

#define FDB_VALID	 (1ULL << 63)
#define FDB_REMOTE_SHIFT 48
#define FDB_MAC_MASK	 ((1ULL << 48) - 1)

static uint64_t mac_pack(const uint8_t mac[6])
{
	uint64_t v = 0;

	for (int i = 0; i < 6; i++)
		v = v << 8 | mac[i];
	return v;
}

uint32_t uplink_vxlan_fdb_bucket(const struct uplink_vxlan_fdb *f, const uint8_t mac[6])
{
	unsigned char out[crypto_shorthash_BYTES];
	uint32_t h;

	crypto_shorthash(out, mac, 6, f->key);
	memcpy(&h, out, sizeof(h));
	return h % UPLINK_VXLAN_FDB_BUCKETS;
}

/* The first way of @mac's bucket. */
static uint32_t bucket_of(const struct uplink_vxlan_fdb *f, const uint8_t mac[6])
{
	return uplink_vxlan_fdb_bucket(f, mac) * UPLINK_VXLAN_FDB_WAYS;
}

static bool alive(const struct uplink_vxlan_fdb *f, uint32_t i, uint32_t now_s)
{
	/* Signed: a reader's second may lag the writer's by one. */
	return (int32_t)(now_s - atomic_load_explicit(&f->seen[i], memory_order_relaxed)) <
	       (int32_t)f->age_s;
}

void uplink_vxlan_fdb_init(struct uplink_vxlan_fdb *f, uint32_t age_s)
{
	for (uint32_t i = 0; i < UPLINK_VXLAN_FDB_SIZE; i++) {
		atomic_init(&f->word[i], 0);
		atomic_init(&f->seen[i], 0);
	}
	f->age_s = age_s < 1 ? 1 : age_s > INT32_MAX ? INT32_MAX : age_s;
	randombytes_buf(f->key, sizeof(f->key));
}

void uplink_vxlan_fdb_learn(struct uplink_vxlan_fdb *f, const uint8_t mac[6], unsigned int remote,
			    uint32_t now_s)
{
	uint64_t m = mac_pack(mac), want = FDB_VALID | (uint64_t)remote << FDB_REMOTE_SHIFT | m;
	uint32_t b, victim = UINT32_MAX, age = 0;

	if ((mac[0] & 1) || m == 0)
		return;
	b = bucket_of(f, mac);
	for (uint32_t i = b; i < b + UPLINK_VXLAN_FDB_WAYS; i++) {
		uint64_t w = atomic_load_explicit(&f->word[i], memory_order_relaxed);

		if ((w & (FDB_VALID | FDB_MAC_MASK)) == (FDB_VALID | m)) {
			/* Known: refresh (a store only when the second moved), move if it did. */
			if (atomic_load_explicit(&f->seen[i], memory_order_relaxed) != now_s)
				atomic_store_explicit(&f->seen[i], now_s, memory_order_relaxed);
			if (w != want)
				atomic_store_explicit(&f->word[i], want, memory_order_release);
			return;
		}
		if (victim == UINT32_MAX && (!(w & FDB_VALID) || !alive(f, i, now_s)))
			victim = i; /* free or expired; keep looking for the MAC itself */
	}
	if (victim == UINT32_MAX) {
		/* Every way alive: the one seen least recently goes. */
		for (uint32_t i = b; i < b + UPLINK_VXLAN_FDB_WAYS; i++) {
			uint32_t a =
			    now_s - atomic_load_explicit(&f->seen[i], memory_order_relaxed);

			if (victim == UINT32_MAX || a > age) {
				victim = i;
				age = a;
			}
		}
	}
	atomic_store_explicit(&f->seen[victim], now_s, memory_order_relaxed);
	atomic_store_explicit(&f->word[victim], want, memory_order_release);
}

int uplink_vxlan_fdb_lookup(const struct uplink_vxlan_fdb *f, const uint8_t mac[6], uint32_t now_s)
{
	uint64_t m = mac_pack(mac);
	uint32_t b;

	if (mac[0] & 1)
		return -1;
	b = bucket_of(f, mac);
	for (uint32_t i = b; i < b + UPLINK_VXLAN_FDB_WAYS; i++) {
		uint64_t w = atomic_load_explicit(&f->word[i], memory_order_acquire);

		if ((w & (FDB_VALID | FDB_MAC_MASK)) == (FDB_VALID | m))
			return alive(f, i, now_s) ? (int)(w >> FDB_REMOTE_SHIFT & 0xff) : -1;
	}
	return -1;
}
