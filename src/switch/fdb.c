// SPDX-License-Identifier: MIT
/* fdb.c - the switch's MAC table: keyed hashing, lock-free lookup, learning, ageing */

/*
 * Theory of Operation
 *
 * The table is a fixed array allocated at sw_create(): buckets of
 * SW_FDB_BUCKET entries, each bucket one cache line, at least twice as many
 * entries as fdb_max so that buckets rarely fill.  Nothing is allocated or
 * freed afterwards, so a reader can never touch freed memory.  A MAC lives
 * only in the bucket its hash selects (no probing into other buckets): a
 * lookup reads one cache line, and a full bucket simply refuses to learn
 * (counted as learn_full; the frames to that MAC are flooded, as for any
 * unknown MAC).  The hash is SipHash-2-4 (libsodium crypto_shorthash) with
 * a random key per switch, so a guest cannot pick MACs that share a bucket.
 *
 * An entry is ONE 64-bit word, so it is read and written atomically
 * without a seqlock:
 *
 *   63      62..56  55..48   47..0
 *   valid   0       port     MAC (first byte in bits 47..40)
 *
 * plus a separate last-seen time in seconds (seen[]), in its own array so
 * that refreshing it does not dirty the line lookups read.
 *
 * Who reads and writes what:
 *   words[]  written only under fdb->lock: by sw_fdb_learn() (once per
 *            batch that saw a new or moved source), sw_fdb_age() (control
 *            thread) and sw_fdb_flush_port() (sw_port_del).  Read with
 *            seq_cst loads (see epoch.c) by any data path thread, lock-free.
 *   seen[]   written with relaxed stores by data path threads when a known
 *            source is seen again on its port, at most once per second per
 *            entry (the store happens only when the second changed, so the
 *            line is not bounced between cores on every packet), and by
 *            learners under the lock.  Read by sw_fdb_age() under the lock.
 *            A race (an entry refreshed just as it ages out, or a stale
 *            reader refreshing a slot just reused for another MAC) only
 *            moves one expiry by one ageing period: harmless.
 *   counts   the per-port gauge stats.fdb_entries and the switch-wide
 *            stats.fdb_entries are written only under the lock (relaxed
 *            load + store), read lock-free by the data path to skip
 *            learning early when a port or the table is full.
 *
 * A reader may act on an entry that is being removed (it sends one more
 * frame to the old port) or miss one being added (it floods): the same as a
 * hardware bridge during learning.  A port number in an entry is valid
 * while the reader is inside its epoch section: sw_port_del() removes the
 * port's entries before its grace period, so the number is not reused while
 * anyone can still see them.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "switch/internal.h"

#define FDB_VALID      (1ULL << 63)
#define FDB_PORT_SHIFT 48
#define FDB_MAC_MASK   ((1ULL << 48) - 1)

static inline uint64_t fdb_word(uint64_t mac, unsigned int port)
{
	return FDB_VALID | (uint64_t)port << FDB_PORT_SHIFT | mac;
}

static inline unsigned int fdb_word_port(uint64_t w)
{
	return (unsigned int)(w >> FDB_PORT_SHIFT) & 0xff;
}

static inline bool fdb_word_is(uint64_t w, uint64_t mac)
{
	return (w & (FDB_VALID | FDB_MAC_MASK)) == (FDB_VALID | mac);
}

/* Relaxed add to a gauge or counter that only lock holders write. */
static void fdb_gauge_add(_Atomic uint64_t *g, int64_t d)
{
	atomic_store_explicit(g, atomic_load_explicit(g, memory_order_relaxed) + (uint64_t)d,
			      memory_order_relaxed);
}

/**
 * sw_fdb_init() - allocate an empty table and draw its hash key
 * @fdb: the table
 * @cfg: validated configuration
 *
 * Return: 0 or -ENOMEM
 */
int sw_fdb_init(struct sw_fdb *fdb, const struct sw_config *cfg)
{
	/* Twice the entries as slots: buckets of 8 at load 1/2 rarely fill. */
	uint32_t slots = SW_FDB_BUCKET;
	int ret;

	while (slots < 2 * cfg->fdb_max)
		slots <<= 1;
	fdb->mask = slots / SW_FDB_BUCKET - 1;
	fdb->max = cfg->fdb_max;
	fdb->ageing_s = cfg->ageing_s;
	randombytes_buf(fdb->key, sizeof(fdb->key));

	/* 64-byte alignment puts each bucket in exactly one cache line. */
	fdb->words = aligned_alloc(64, slots * sizeof(*fdb->words));
	if (!fdb->words)
		return -ENOMEM;
	fdb->seen = calloc(slots, sizeof(*fdb->seen));
	if (!fdb->seen) {
		ret = -ENOMEM;
		goto err_free_words;
	}
	for (uint32_t i = 0; i < slots; i++)
		atomic_init(&fdb->words[i], 0);
	ret = pthread_mutex_init(&fdb->lock, NULL);
	if (ret) {
		ret = -ret;
		goto err_free_seen;
	}
	return 0;

err_free_seen:
	free(fdb->seen);
err_free_words:
	free(fdb->words);
	return ret;
}

/**
 * sw_fdb_fini() - free the table
 * @fdb: the table; no reader or writer may remain
 */
void sw_fdb_fini(struct sw_fdb *fdb)
{
	pthread_mutex_destroy(&fdb->lock);
	free(fdb->seen);
	free(fdb->words);
	sodium_memzero(fdb->key, sizeof(fdb->key));
}

/**
 * sw_fdb_hash() - the keyed hash of a MAC address
 * @sw: the switch (its key)
 * @mac: the address
 *
 * Return: SipHash-2-4 of the 6 bytes under the switch's random key
 */
uint64_t sw_fdb_hash(const struct sw *sw, const uint8_t mac[SW_ETH_ALEN])
{
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t h;

	crypto_shorthash(out, mac, SW_ETH_ALEN, sw->fdb.key);
	memcpy(&h, out, sizeof(h));
	return h;
}

/**
 * sw_fdb_bucket() - the bucket a hash selects
 * @sw: the switch
 * @hash: from sw_fdb_hash()
 *
 * Return: bucket index, 0..number of buckets - 1
 */
uint32_t sw_fdb_bucket(const struct sw *sw, uint64_t hash)
{
	return (uint32_t)hash & sw->fdb.mask;
}

/**
 * sw_fdb_find() - look a MAC up, lock-free
 * @sw: the switch
 * @mac: packed MAC (sw_mac_pack)
 * @hash: its hash
 * @port_num: set to the entry's port number when found
 *
 * Return: the entry's slot index, or -ENOENT
 */
int sw_fdb_find(const struct sw *sw, uint64_t mac, uint64_t hash, unsigned int *port_num)
{
	uint32_t base = sw_fdb_bucket(sw, hash) * SW_FDB_BUCKET;

	for (unsigned int i = 0; i < SW_FDB_BUCKET; i++) {
		/* seq_cst pairs with sw_port_del(), see epoch.c */
		uint64_t w = atomic_load(&sw->fdb.words[base + i]);

		if (fdb_word_is(w, mac)) {
			*port_num = fdb_word_port(w);
			return (int)(base + i);
		}
	}
	return -ENOENT;
}

/**
 * sw_fdb_touch() - refresh an entry's last-seen time from the data path
 * @sw: the switch
 * @slot: from sw_fdb_find()
 * @now_s: current time in seconds
 *
 * Stores only when the second changed: one write per entry per second.
 */
void sw_fdb_touch(struct sw *sw, int slot, uint32_t now_s)
{
	if (atomic_load_explicit(&sw->fdb.seen[slot], memory_order_relaxed) != now_s)
		atomic_store_explicit(&sw->fdb.seen[slot], now_s, memory_order_relaxed);
}

/* Learn one source MAC on @in; fdb->lock held. */
static void fdb_learn_one(struct sw *sw, struct sw_port *in, const struct sw_learn *req,
			  uint32_t now_s)
{
	struct sw_fdb *fdb = &sw->fdb;
	uint32_t base = sw_fdb_bucket(sw, req->hash) * SW_FDB_BUCKET;
	uint64_t limit = atomic_load_explicit(&in->mac_limit, memory_order_relaxed);
	uint64_t mine = atomic_load_explicit(&in->stats.fdb_entries, memory_order_relaxed);
	int free_slot = -1;

	for (unsigned int i = 0; i < SW_FDB_BUCKET; i++) {
		uint64_t w = atomic_load_explicit(&fdb->words[base + i], memory_order_relaxed);
		unsigned int old;
		struct sw_port *op;

		if (!(w & FDB_VALID)) {
			if (free_slot < 0)
				free_slot = (int)(base + i);
			continue;
		}
		if (!fdb_word_is(w, req->mac))
			continue;
		old = fdb_word_port(w);
		atomic_store_explicit(&fdb->seen[base + i], now_s, memory_order_relaxed);
		if (old == in->num)
			return; /* another queue of @in learned it meanwhile */
		if (mine >= limit) {
			/* A port at its limit cannot take MACs from others either. */
			atomic_fetch_add_explicit(&in->stats.learn_limit, req->frames,
						  memory_order_relaxed);
			return;
		}
		atomic_store(&fdb->words[base + i], fdb_word(req->mac, in->num));
		op = atomic_load_explicit(&sw->ports[old], memory_order_relaxed);
		if (op)
			fdb_gauge_add(&op->stats.fdb_entries, -1);
		fdb_gauge_add(&in->stats.fdb_entries, 1);
		atomic_fetch_add_explicit(&in->stats.learn_moved, 1, memory_order_relaxed);
		return;
	}

	if (mine >= limit) {
		atomic_fetch_add_explicit(&in->stats.learn_limit, req->frames,
					  memory_order_relaxed);
		return;
	}
	if (free_slot < 0 ||
	    atomic_load_explicit(&sw->stats.fdb_entries, memory_order_relaxed) >= fdb->max) {
		atomic_fetch_add_explicit(&in->stats.learn_full, req->frames, memory_order_relaxed);
		atomic_fetch_add_explicit(&sw->stats.fdb_full, req->frames, memory_order_relaxed);
		return;
	}
	/* seen first, so an ager never sees the new word with a stale time. */
	atomic_store_explicit(&fdb->seen[free_slot], now_s, memory_order_relaxed);
	atomic_store(&fdb->words[free_slot], fdb_word(req->mac, in->num));
	fdb_gauge_add(&in->stats.fdb_entries, 1);
	fdb_gauge_add(&sw->stats.fdb_entries, 1);
	atomic_fetch_add_explicit(&in->stats.learn_new, 1, memory_order_relaxed);
}

/**
 * sw_fdb_learn() - apply the learning requests one batch collected
 * @sw: the switch
 * @in: the port the batch came from (its caller keeps it alive)
 * @req: requests, at most one per MAC
 * @n: number of requests
 * @now_s: current time in seconds
 *
 * Takes fdb->lock once.  Limits are checked again here: the data path's
 * early checks read the gauges without the lock.
 */
void sw_fdb_learn(struct sw *sw, struct sw_port *in, const struct sw_learn *req, unsigned int n,
		  uint32_t now_s)
{
	pthread_mutex_lock(&sw->fdb.lock);
	/* Never resurrect entries of a port sw_port_del() already flushed. */
	if (atomic_load_explicit(&sw->ports[in->num], memory_order_relaxed) == in)
		for (unsigned int i = 0; i < n; i++)
			fdb_learn_one(sw, in, &req[i], now_s);
	pthread_mutex_unlock(&sw->fdb.lock);
}

/**
 * sw_fdb_flush_port() - remove every entry of a port; fdb->lock held
 * @sw: the switch
 * @p: the port
 */
void sw_fdb_flush_port(struct sw *sw, struct sw_port *p)
{
	uint32_t slots = (sw->fdb.mask + 1) * SW_FDB_BUCKET;
	int64_t removed = 0;

	for (uint32_t i = 0; i < slots; i++) {
		uint64_t w = atomic_load_explicit(&sw->fdb.words[i], memory_order_relaxed);

		if ((w & FDB_VALID) && fdb_word_port(w) == p->num) {
			atomic_store(&sw->fdb.words[i], 0);
			removed++;
		}
	}
	fdb_gauge_add(&sw->stats.fdb_entries, -removed);
	atomic_store_explicit(&p->stats.fdb_entries, 0, memory_order_relaxed);
}

unsigned int sw_fdb_age(struct sw *sw, uint64_t now_ns)
{
	uint32_t slots = (sw->fdb.mask + 1) * SW_FDB_BUCKET;
	uint32_t now_s = (uint32_t)(now_ns / 1000000000ULL);
	unsigned int removed = 0;

	pthread_mutex_lock(&sw->fdb.lock);
	for (uint32_t i = 0; i < slots; i++) {
		uint64_t w = atomic_load_explicit(&sw->fdb.words[i], memory_order_relaxed);
		uint32_t seen = atomic_load_explicit(&sw->fdb.seen[i], memory_order_relaxed);
		struct sw_port *p;

		/* Signed difference: a refresh racing ahead of @now_s is "not old". */
		if (!(w & FDB_VALID) || (int32_t)(now_s - seen) < (int32_t)sw->fdb.ageing_s)
			continue;
		atomic_store(&sw->fdb.words[i], 0);
		p = atomic_load_explicit(&sw->ports[fdb_word_port(w)], memory_order_relaxed);
		if (p)
			fdb_gauge_add(&p->stats.fdb_entries, -1);
		removed++;
	}
	fdb_gauge_add(&sw->stats.fdb_entries, -(int64_t)removed);
	atomic_fetch_add_explicit(&sw->stats.fdb_aged, removed, memory_order_relaxed);
	pthread_mutex_unlock(&sw->fdb.lock);
	return removed;
}

int sw_fdb_lookup(struct sw *sw, const uint8_t mac[SW_ETH_ALEN], uint16_t *port_num)
{
	unsigned int num;

	if (sw_fdb_find(sw, sw_mac_pack(mac), sw_fdb_hash(sw, mac), &num) < 0)
		return -ENOENT;
	*port_num = (uint16_t)num;
	return 0;
}

unsigned int sw_fdb_count(struct sw *sw)
{
	return (unsigned int)atomic_load_explicit(&sw->stats.fdb_entries, memory_order_relaxed);
}

int sw_fdb_dump(struct sw *sw, const char *port, uint32_t *cursor, struct sw_fdb_entry *out,
		unsigned int max)
{
	uint32_t slots = (sw->fdb.mask + 1) * SW_FDB_BUCKET, i = *cursor;
	uint32_t now_s = (uint32_t)(sw_now(sw) / 1000000000ULL);
	struct sw_port *only = NULL;
	unsigned int n = 0;

	if (i >= slots || !max)
		return -EINVAL;
	/*
	 * ctl_lock keeps every port an entry names published: sw_port_del()
	 * flushes a port's entries before it lets go of the lock, and learning
	 * checks under the table's lock that its port is still published.
	 */
	pthread_mutex_lock(&sw->ctl_lock);
	if (port) {
		only = sw_port_by_name(sw, port);
		if (!only) {
			pthread_mutex_unlock(&sw->ctl_lock);
			return -ENOENT;
		}
	}
	for (; i < slots && n < max; i++) {
		uint64_t w = atomic_load(&sw->fdb.words[i]); /* seq_cst: see epoch.c */
		uint32_t seen = atomic_load_explicit(&sw->fdb.seen[i], memory_order_relaxed);
		unsigned int num = fdb_word_port(w);
		struct sw_port *p;

		if (!(w & FDB_VALID) || (only && num != only->num))
			continue;
		p = atomic_load_explicit(&sw->ports[num], memory_order_relaxed);
		if (!p)
			continue; /* not reached (see above); never a name of a freed port */
		for (unsigned int b = 0; b < SW_ETH_ALEN; b++)
			out[n].mac[b] = (uint8_t)(w >> (8 * (SW_ETH_ALEN - 1 - b)));
		out[n].port = (uint16_t)num;
		/* Signed, as the ager reads it: a refresh racing ahead of @now_s is age 0. */
		out[n].age_s = (int32_t)(now_s - seen) > 0 ? now_s - seen : 0;
		memcpy(out[n].port_name, p->name, sizeof(out[n].port_name));
		n++;
	}
	pthread_mutex_unlock(&sw->ctl_lock);
	*cursor = i < slots ? i : 0;
	return (int)n;
}

/* Is there a refusal to say in @r now, the counter being @count? */
static bool report_due(const struct sw_report *r, uint64_t count, uint32_t now_s)
{
	return count != r->seen &&
	       (!r->said || (int32_t)(now_s - r->said_s) >= (int32_t)SW_REPORT_EVERY_S);
}

/* The refusals since @r last said so ("since the last report", or ever); @r says them now. */
static uint64_t report_take(struct sw_report *r, uint64_t count, uint32_t now_s, const char **since)
{
	uint64_t d = count - r->seen;

	*since = r->said ? "since the last report" : "so far";
	*r = (struct sw_report){.seen = count, .said_s = now_s, .said = true};
	return d;
}

void sw_fdb_report(struct sw *sw, uint64_t now_ns)
{
	uint32_t now_s = (uint32_t)(now_ns / 1000000000ULL);
	uint64_t full = atomic_load_explicit(&sw->stats.fdb_full, memory_order_relaxed);
	const char *since;
	unsigned int hi;

	/* The ports' lock: no port is freed while it is read, and one reporter at a time. */
	pthread_mutex_lock(&sw->ctl_lock);
	hi = atomic_load_explicit(&sw->port_hi, memory_order_relaxed);
	for (unsigned int i = 0; i < hi && i < SW_MAX_PORTS; i++) {
		struct sw_port *p = atomic_load_explicit(&sw->ports[i], memory_order_relaxed);
		uint64_t n, d;

		if (!p)
			continue;
		n = atomic_load_explicit(&p->stats.learn_limit, memory_order_relaxed);
		if (!report_due(&p->limit_report, n, now_s))
			continue;
		d = report_take(&p->limit_report, n, now_s, &since);
		warn("switch: port %s is at its limit of %u MACs: %" PRIu64
		     " frame%s from MACs it could not learn %s; frames to those are flooded",
		     p->name, atomic_load_explicit(&p->mac_limit, memory_order_relaxed), d,
		     d == 1 ? "" : "s", since);
	}
	if (report_due(&sw->full_report, full, now_s)) {
		uint64_t d = report_take(&sw->full_report, full, now_s, &since);

		warn("switch: the MAC table (room for %u) or a bucket of it is full: %" PRIu64
		     " frame%s from MACs not learnt %s; frames to those are flooded",
		     sw->fdb.max, d, d == 1 ? "" : "s", since);
	}
	pthread_mutex_unlock(&sw->ctl_lock);
}

void sw_get_config(const struct sw *sw, struct sw_config *cfg)
{
	*cfg = sw->cfg;
}
