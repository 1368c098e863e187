/* SPDX-License-Identifier: MIT */
/* vxlan_fdb.h - which remote VTEP a MAC is behind: the VXLAN uplink's learning table */
#ifndef PVNET_UPLINK_VXLAN_FDB_H
#define PVNET_UPLINK_VXLAN_FDB_H

/*
 * Theory of Operation
 *
 * A VXLAN uplink with several remotes learns, as a Linux vxlan device
 * does, behind which remote each MAC lives: a datagram from remote R
 * whose inner frame comes from MAC M teaches M -> R.  A frame to a known M
 * then goes to R alone; broadcast, multicast and unknown unicast go to
 * every remote (head-end replication).
 *
 * The table is fixed at init: UPLINK_VXLAN_FDB_BUCKETS buckets of
 * UPLINK_VXLAN_FDB_WAYS entries, a bucket one cache line; a MAC lives only
 * in the bucket its keyed hash (SipHash-2-4, libsodium, a random key per
 * table) selects, so a remote cannot pick MACs that share one.  An entry
 * is one 64-bit word (valid bit, remote index, MAC), read and written
 * atomically, plus a last-seen second in its own array.
 *
 *   writer   one thread: the port's reader, the only one that learns.  A
 *            new MAC takes a free or expired way, else the way seen least
 *            recently (the table forgets the quietest MAC, which costs one
 *            flood when it speaks again).
 *   readers  any number, lock-free (the senders of the port's frames).  A
 *            reader racing a replacement sees the old word or the new one,
 *            each whole; with a last-seen time of the other it may treat
 *            an entry as expired or alive for one frame: a flood or one
 *            frame to where the MAC was, as a hardware bridge that learns.
 *
 * Entries unseen for the ageing time read as absent; nothing else ages
 * them (a stale word is overwritten when its way is needed).
 */

#include <sodium.h>
#include <stdatomic.h>
#include <stdint.h>

#define UPLINK_VXLAN_FDB_BUCKETS 512u
#define UPLINK_VXLAN_FDB_WAYS	 8u
#define UPLINK_VXLAN_FDB_SIZE	 (UPLINK_VXLAN_FDB_BUCKETS * UPLINK_VXLAN_FDB_WAYS)
/* Linux's vxlan default ageing (and a bridge's): five minutes. */
#define UPLINK_VXLAN_FDB_AGE_S 300u

/**
 * struct uplink_vxlan_fdb - the table (embed it; no allocation)
 * @word: entries, UPLINK_VXLAN_FDB_WAYS per bucket
 * @seen: each entry's last-seen second
 * @age_s: seconds an entry lives unseen
 * @key: the hash key
 */
struct uplink_vxlan_fdb {
	_Alignas(64) _Atomic uint64_t word[UPLINK_VXLAN_FDB_SIZE];
	_Atomic uint32_t seen[UPLINK_VXLAN_FDB_SIZE];
	uint32_t age_s;
	unsigned char key[crypto_shorthash_KEYBYTES];
};

/**
 * uplink_vxlan_fdb_init() - empty the table and draw its key
 * @f: the table
 * @age_s: seconds an entry lives unseen, at least 1
 */
void uplink_vxlan_fdb_init(struct uplink_vxlan_fdb *f, uint32_t age_s);

/**
 * uplink_vxlan_fdb_learn() - @mac was seen behind remote @remote at second @now_s
 * @f: the table
 * @mac: a frame's source MAC; group addresses and all-zeroes are not learnt
 * @remote: the remote's index, 0..UPLINK_VXLAN_REMOTES_MAX - 1
 * @now_s: a monotonic second
 *
 * The table's one writer only.
 */
void uplink_vxlan_fdb_learn(struct uplink_vxlan_fdb *f, const uint8_t mac[6], unsigned int remote,
			    uint32_t now_s);

/**
 * uplink_vxlan_fdb_lookup() - the remote @mac is behind, lock-free
 * @f: the table
 * @mac: a frame's destination MAC
 * @now_s: a monotonic second
 *
 * Return: the remote's index, or -1 (a group address, unknown, or aged out)
 */
int uplink_vxlan_fdb_lookup(const struct uplink_vxlan_fdb *f, const uint8_t mac[6], uint32_t now_s);

/**
 * uplink_vxlan_fdb_bucket() - the bucket @mac's keyed hash selects
 * @f: the table (its key)
 * @mac: the address
 *
 * Return: 0..UPLINK_VXLAN_FDB_BUCKETS - 1
 */
uint32_t uplink_vxlan_fdb_bucket(const struct uplink_vxlan_fdb *f, const uint8_t mac[6]);

#endif /* PVNET_UPLINK_VXLAN_FDB_H */
