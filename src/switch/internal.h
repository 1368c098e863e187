/* SPDX-License-Identifier: MIT */
/* internal.h - the switch's private state, shared by switch.c, fdb.c and epoch.c */
#ifndef PVNET_SWITCH_INTERNAL_H
#define PVNET_SWITCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <sodium.h>

#include "switch/switch.h"

/*
 * Threads that may be inside sw_forward() at once, over the whole process
 * (epoch.c gives each thread a slot on first use).  One per vif queue plus
 * uplink threads: 1024 covers 64 vifs with 16 queues; a thread beyond that
 * has its frames dropped and counted, never mis-handled.  Each slot is one
 * cache line, so 64 KiB per switch.
 */
#define SW_MAX_THREADS 1024

/* Entries per FDB bucket: 8 x 8-byte words are one 64-byte cache line. */
#define SW_FDB_BUCKET 8

/**
 * struct sw_fdb - the MAC table (see fdb.c for the Theory of Operation)
 * @words: packed entries, SW_FDB_BUCKET per bucket; 0 is an empty slot
 * @seen: last-seen time in seconds per entry (relaxed atomics)
 * @mask: number of buckets - 1 (a power of two)
 * @max: most entries in total (config fdb_max)
 * @ageing_s: config ageing_s
 * @key: SipHash key, random per switch
 * @lock: serialises every writer of @words (learning, ageing, port deletion)
 */
struct sw_fdb {
	_Atomic uint64_t *words;
	_Atomic uint32_t *seen;
	uint32_t mask;
	uint32_t max;
	uint32_t ageing_s;
	unsigned char key[crypto_shorthash_KEYBYTES];
	pthread_mutex_t lock;
};

/**
 * struct sw_reader - one thread's epoch slot
 * @epoch: 0 when the thread is outside sw_forward(), else the global epoch
 *	it saw on entry (written by the thread, read by sw_port_del)
 */
struct sw_reader {
	_Alignas(64) _Atomic uint64_t epoch;
};

/**
 * struct sw - one switch
 * @cfg: configuration (read-only after sw_create)
 * @fdb: MAC table
 * @ports: published ports by number; NULL when free (writers: ctl_lock and
 *	fdb.lock both held; readers: anyone inside an epoch section)
 * @port_hi: 1 + highest number ever used, bounds loops over @ports
 * @ctl_lock: serialises sw_port_add/del
 * @epoch: global epoch, incremented by each grace period
 * @readers: SW_MAX_THREADS epoch slots
 * @stats: switch-wide counters
 * @full_report: sw_fdb_report()'s about a full table (under @ctl_lock)
 */
struct sw {
	struct sw_config cfg;
	struct sw_fdb fdb;
	_Atomic(struct sw_port *) ports[SW_MAX_PORTS];
	_Atomic unsigned int port_hi;
	pthread_mutex_t ctl_lock;
	_Atomic uint64_t epoch;
	struct sw_reader *readers;
	struct sw_stats stats;
	struct sw_report full_report;
};

/**
 * struct sw_learn - a learning request collected during a batch
 * @mac: the source MAC, packed (see sw_mac_pack)
 * @hash: its keyed hash
 * @frames: the batch's frames from it: what learn_limit or learn_full
 *	count should it not be learnt
 */
struct sw_learn {
	uint64_t mac;
	uint64_t hash;
	uint32_t frames;
};

/* Pack 6 MAC bytes into the low 48 bits of an integer, first byte highest. */
static inline uint64_t sw_mac_pack(const uint8_t *m)
{
	return (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 | (uint64_t)m[2] << 24 |
	       (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | (uint64_t)m[5];
}

/* switch.c */
struct sw_port *sw_port_by_name(struct sw *sw, const char *name);

/* fdb.c */
int sw_fdb_init(struct sw_fdb *fdb, const struct sw_config *cfg);
void sw_fdb_fini(struct sw_fdb *fdb);
uint64_t sw_fdb_hash(const struct sw *sw, const uint8_t mac[SW_ETH_ALEN]);
uint32_t sw_fdb_bucket(const struct sw *sw, uint64_t hash);
int sw_fdb_find(const struct sw *sw, uint64_t mac, uint64_t hash, unsigned int *port_num);
void sw_fdb_touch(struct sw *sw, int slot, uint32_t now_s);
void sw_fdb_learn(struct sw *sw, struct sw_port *in, const struct sw_learn *req, unsigned int n,
		  uint32_t now_s);
void sw_fdb_flush_port(struct sw *sw, struct sw_port *p);

/* capture.c */
void sw_capture_batch(struct sw_capture *cap, struct sw_pkt *const *pkts, unsigned int n,
		      unsigned int dir);
struct sw_capture *sw_capture_detach(struct sw_port *p);
void sw_capture_gone(struct sw_capture *cap);

/* epoch.c */
#define SW_EPOCH_NESTED SW_MAX_THREADS /* sw_epoch_enter() inside a section */
int sw_epoch_enter(struct sw *sw);
void sw_epoch_exit(struct sw *sw, int slot);
bool sw_epoch_is_inside(const struct sw *sw);
void sw_epoch_synchronize(struct sw *sw);

#endif /* PVNET_SWITCH_INTERNAL_H */
