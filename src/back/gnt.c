// SPDX-License-Identifier: MIT
// gnt.c - a queue's grant operations: one counted batch per call, and the persistent-grant cache

/*
 * Theory of Operation
 *
 * Every grant operation of a queue's data path goes through here, so that
 * the per-queue counters say what a real Xen host would pay: grant_*_ops
 * are the ops, grant_batches the hypercalls (one per call below that
 * reaches the hypervisor).  Callers already batch: a TX poll makes one copy
 * call and one map call for up to 64 packets, a TX completion round one
 * unmap call, an RX batch one copy call.
 *
 * Persistent grants (BACK_TX_PERSISTENT, docs/persistent-grants.md).  The
 * frontend promised to use only a fixed pool of at most @cap pages per
 * queue, granted once.  So each reference is mapped the first time a
 * request names it and stays mapped in @q->pgnt until the vif disconnects;
 * a copy op becomes a bulk_copy() to or from the mapping, a map op a lookup.
 * In the steady state no call reaches the hypervisor at all.
 *
 * The cache is an open-addressing table with linear probing, at most half
 * full, keyed by the reference through SipHash under a per-queue random
 * key (libsodium's crypto_shorthash, as the switch's MAC table): the guest
 * picks the references, so it must not be able to pick a probe sequence.
 * Entries are never removed while connected, except a miss whose map
 * failed (backward-shift deletion keeps the probe sequences intact).
 *
 * One call resolves in two passes.  Pass 1 looks every op's foreign page
 * up; a miss claims a PENDING entry (so later ops of the batch naming the
 * same page find it) and a map op in @pgnt->miss; a miss beyond @cap
 * entries is a reference outside the pool: that op fails with
 * GNTST_no_space and persistent_overflow counts it (the caller drops the
 * packet with an error response, like any bad reference).  The misses are
 * mapped in one batch: read-only for a page we only read (TX), writable
 * for one we write (RX).  Pass 2 does the ops against the resolved
 * entries, then the failed misses are deleted.  A page first mapped
 * read-only and later named as an RX buffer fails with
 * GNTST_permission_denied: a pool page serves one direction.
 *
 * The foreign side of a copy is checked exactly as the hypervisor checks
 * it (domain, offset + length within the page) before the copy; the
 * local side is ours.
 *
 * Threads.  TX ops come from the queue's worker, RX copies from whoever
 * holds the queue's rx_lock (the worker, or a sender's thread delivering
 * straight into the ring, rx.c).  A grant handle serves one thread at a
 * time, so RX copies use their own handle (gt_rx); the cache is shared by
 * both directions, so its calls take pgnt_lock (one lock per batch, never
 * contended unless the guest sends and receives on the queue at once), and
 * its misses are mapped through the worker's handle (gt), which unmaps
 * them all at disconnect.  The control ring (ctrl.c) is mapped through
 * queue 0's gt too, on the loop thread: before the vif's switch port
 * exists, and unmapped after it is gone, so never while a sender's thread
 * may be mapping a miss; its key and table copies, on queue 0's worker,
 * take pgnt_lock.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "back/internal.h"
#include "common/bulkcopy.h"

enum { PGNT_EMPTY, PGNT_PENDING, PGNT_MAPPED, PGNT_FAILED };

/*
 * Counted hypercalls.  The TX side (the worker) and the RX side (the holder
 * of rx_lock, maybe another thread) both count: one atomic add per batch.
 */
static void count(struct back_queue *q, _Atomic uint64_t *ops, uint32_t n)
{
	atomic_fetch_add_explicit(ops, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&q->stats->grant_batches, 1, memory_order_relaxed);
}

static int hv_copy(struct back_queue *q, struct hv_gnttab *gt, uint32_t n,
		   xengnttab_grant_copy_segment_t *segs)
{
	count(q, &q->stats->grant_copy_ops, n);
	return hv_gnttab_grant_copy(gt, n, segs);
}

static int hv_map(struct back_queue *q, uint32_t n, struct gnttab_map_grant_ref *ops)
{
	count(q, &q->stats->grant_map_ops, n);
	return hv_gnttab_map_grant_refs(q->gt, n, ops);
}

static int hv_unmap(struct back_queue *q, uint32_t n, struct gnttab_unmap_grant_ref *ops)
{
	count(q, &q->stats->grant_unmap_ops, n);
	return hv_gnttab_unmap_grant_refs(q->gt, n, ops);
}

int back_gnt_init(struct back_queue *q, uint32_t cap)
{
	struct back_pgnt *c;
	uint32_t size = 2;

	if (q->mode != BACK_TX_PERSISTENT)
		return 0;
	if (cap == 0 || cap > BACK_PERSISTENT_MAX_LIMIT)
		return -EINVAL;
	if (sodium_init() < 0)
		return -ENOMEM;
	while (size < 2 * cap)
		size *= 2;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->tab = calloc(size, sizeof(*c->tab));
	if (!c->tab) {
		free(c);
		return -ENOMEM;
	}
	c->mask = size - 1;
	c->cap = cap;
	randombytes_buf(c->key, sizeof(c->key));
	q->pgnt = c;
	return 0;
}

void back_gnt_fini(struct back_queue *q)
{
	struct back_pgnt *c = q->pgnt;
	uint32_t n = 0;

	if (!c)
		return;
	for (uint32_t i = 0; i <= c->mask; i++) {
		struct back_pgnt_ent *e = &c->tab[i];

		if (e->state != PGNT_MAPPED)
			continue;
		q->tx_unmap[n++] =
		    (struct gnttab_unmap_grant_ref){.handle = e->handle, .host_addr = e->addr};
		if (n == BACK_TX_RING_SIZE) {
			if (hv_unmap(q, n, q->tx_unmap) < 0)
				err("vif%u.%u q%u: unmapping persistent grants failed",
				    q->vif->domid, q->vif->devid, q->id);
			n = 0;
		}
	}
	if (n && hv_unmap(q, n, q->tx_unmap) < 0)
		err("vif%u.%u q%u: unmapping persistent grants failed", q->vif->domid,
		    q->vif->devid, q->id);
	free(c->tab);
	free(c);
	q->pgnt = NULL;
}

static uint32_t pgnt_hash(const struct back_pgnt *c, grant_ref_t ref)
{
	unsigned char in[4] = {(uint8_t)ref, (uint8_t)(ref >> 8), (uint8_t)(ref >> 16),
			       (uint8_t)(ref >> 24)};
	unsigned char out[crypto_shorthash_BYTES];

	_Static_assert(sizeof(((struct back_pgnt *)0)->key) == crypto_shorthash_KEYBYTES,
		       "SipHash key size");
	crypto_shorthash(out, in, sizeof(in), c->key);
	return (uint32_t)out[0] | (uint32_t)out[1] << 8 | (uint32_t)out[2] << 16 |
	       (uint32_t)out[3] << 24;
}

/*
 * The entry of @ref, or the empty slot where it belongs.
 *
 * The memo first: a frontend names the same few hundred references over
 * and over (libpvnet numbers its pool's grants in a row), and SipHash with
 * its probe took 12 % of the worker's samples at 64 B.  A memo slot is only a
 * hint: the slot of @tab it names is used only if it holds @ref, which
 * nothing else can (references are unique in the table), so a slot left
 * stale by pgnt_delete()'s shifts, or two references that share a memo
 * slot, cost a probe, never a wrong entry.  A guest whose references all
 * share one memo slot pays the hash on every lookup, as without a memo.
 */
static struct back_pgnt_ent *pgnt_probe(struct back_pgnt *c, grant_ref_t ref)
{
	uint32_t *memo = &c->memo[ref % BACK_PGNT_MEMO];
	struct back_pgnt_ent *e = &c->tab[*memo & c->mask];
	uint32_t i;

	if (e->state != PGNT_EMPTY && e->ref == ref)
		return e;
	i = pgnt_hash(c, ref) & c->mask;
	/* The table is at most half full: an empty slot ends every probe. */
	while (c->tab[i].state != PGNT_EMPTY && c->tab[i].ref != ref)
		i = (i + 1) & c->mask;
	if (c->tab[i].state != PGNT_EMPTY)
		*memo = i;
	return &c->tab[i];
}

/* Delete @e, shifting back later entries of its cluster (Knuth 6.4, Algorithm R). */
static void pgnt_delete(struct back_pgnt *c, struct back_pgnt_ent *e)
{
	uint32_t hole = (uint32_t)(e - c->tab), i = hole;

	c->tab[hole].state = PGNT_EMPTY;
	c->n--;
	for (;;) {
		uint32_t home;

		i = (i + 1) & c->mask;
		if (c->tab[i].state == PGNT_EMPTY)
			return;
		home = pgnt_hash(c, c->tab[i].ref) & c->mask;
		/* Move it into the hole unless its home lies cyclically in (hole, i]. */
		if (((i - home) & c->mask) >= ((i - hole) & c->mask)) {
			c->tab[hole] = c->tab[i];
			c->tab[i].state = PGNT_EMPTY;
			hole = i;
		}
	}
}

/*
 * Pass 1 for one foreign page: its entry, claiming a PENDING one (and a
 * map op) on a miss.  NULL with *status set when the op fails outright.
 */
static struct back_pgnt_ent *pgnt_resolve(struct back_queue *q, grant_ref_t ref, domid_t dom,
					  bool write, uint32_t *nmiss, int16_t *status)
{
	struct back_pgnt *c = q->pgnt;
	struct back_pgnt_ent *e;

	if (dom != q->vif->domid) {
		*status = GNTST_bad_domain;
		return NULL;
	}
	e = pgnt_probe(c, ref);
	if (e->state != PGNT_EMPTY)
		return e;
	if (c->n >= c->cap || *nmiss >= BACK_PGNT_MISS_MAX) {
		back_stat_add(&q->stats->persistent_overflow, c->n >= c->cap);
		*status = GNTST_no_space;
		return NULL;
	}
	*e = (struct back_pgnt_ent){.ref = ref, .state = PGNT_PENDING, .writable = write};
	c->n++;
	c->miss[(*nmiss)++] = (struct gnttab_map_grant_ref){
	    .flags = GNTMAP_host_map | (write ? 0 : GNTMAP_readonly), .ref = ref, .dom = dom};
	return e;
}

/* Map the batch's misses and settle their entries (MAPPED or FAILED). */
static void pgnt_map_misses(struct back_queue *q, uint32_t nmiss)
{
	struct back_pgnt *c = q->pgnt;

	if (nmiss == 0)
		return;
	if (hv_map(q, nmiss, c->miss) < 0)
		for (uint32_t i = 0; i < nmiss; i++)
			c->miss[i].status = GNTST_general_error;
	for (uint32_t i = 0; i < nmiss; i++) {
		struct back_pgnt_ent *e = pgnt_probe(c, c->miss[i].ref);

		if (c->miss[i].status == GNTST_okay) {
			e->state = PGNT_MAPPED;
			e->handle = c->miss[i].handle;
			e->addr = c->miss[i].host_addr;
		} else {
			e->state = PGNT_FAILED;
			e->status = c->miss[i].status;
		}
	}
}

/* After pass 2: forget the misses that could not be mapped. */
static void pgnt_drop_failed(struct back_queue *q, uint32_t nmiss)
{
	struct back_pgnt *c = q->pgnt;

	for (uint32_t i = 0; i < nmiss; i++) {
		if (c->miss[i].status == GNTST_okay)
			continue;
		struct back_pgnt_ent *e = pgnt_probe(c, c->miss[i].ref);

		if (e->state == PGNT_FAILED)
			pgnt_delete(c, e);
	}
}

/* Pass 2 check of one op's entry: 0, or the status the op gets. */
static int16_t pgnt_usable(const struct back_pgnt_ent *e, bool write)
{
	if (e->state == PGNT_FAILED)
		return e->status;
	if (write && !e->writable)
		return GNTST_permission_denied;
	return GNTST_okay;
}

static int pgnt_copy(struct back_queue *q, uint32_t n, xengnttab_grant_copy_segment_t *segs)
{
	struct back_pgnt_ent *ent[BACK_PGNT_MISS_MAX];
	uint32_t nmiss = 0;

	if (n > BACK_PGNT_MISS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		xengnttab_grant_copy_segment_t *s = &segs[i];
		bool src = s->flags & GNTCOPY_source_gref, dst = s->flags & GNTCOPY_dest_gref;

		s->status = GNTST_okay;
		ent[i] = NULL;
		if (src == dst) /* both foreign, or neither: never made by netback */
			s->status = GNTST_general_error;
		else if (src)
			ent[i] = pgnt_resolve(q, s->source.foreign.ref, s->source.foreign.domid,
					      false, &nmiss, &s->status);
		else
			ent[i] = pgnt_resolve(q, s->dest.foreign.ref, s->dest.foreign.domid, true,
					      &nmiss, &s->status);
	}
	pgnt_map_misses(q, nmiss);
	for (uint32_t i = 0; i < n; i++) {
		xengnttab_grant_copy_segment_t *s = &segs[i];
		bool src = s->flags & GNTCOPY_source_gref;
		uint16_t off = src ? s->source.foreign.offset : s->dest.foreign.offset;
		uint8_t *page;

		if (!ent[i])
			continue;
		s->status = pgnt_usable(ent[i], !src);
		if (s->status != GNTST_okay)
			continue;
		if ((uint32_t)off + s->len > BACK_PAGE_SIZE) {
			s->status = GNTST_bad_copy_arg;
			continue;
		}
		page = (uint8_t *)(uintptr_t)ent[i]->addr;
		/*
		 * The hypervisor's copy (AVX2 for a page's pieces).  A memcpy
		 * here, its length bounded by the check above, was inlined as
		 * rep movsq and cost a 64 B frame a third of its rate
		 * (docs/persistent-grants.md; meson.build now forbids that).
		 */
		if (src)
			bulk_copy(s->dest.virt, page + off, s->len);
		else
			bulk_copy(page + off, s->source.virt, s->len);
	}
	pgnt_drop_failed(q, nmiss);
	return 0;
}

static int pgnt_map(struct back_queue *q, uint32_t n, struct gnttab_map_grant_ref *ops)
{
	struct back_pgnt_ent *ent[BACK_PGNT_MISS_MAX];
	uint32_t nmiss = 0;

	if (n > BACK_PGNT_MISS_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		ops[i].status = GNTST_okay;
		ent[i] = pgnt_resolve(q, ops[i].ref, ops[i].dom, !(ops[i].flags & GNTMAP_readonly),
				      &nmiss, &ops[i].status);
	}
	pgnt_map_misses(q, nmiss);
	for (uint32_t i = 0; i < n; i++) {
		if (!ent[i])
			continue;
		ops[i].status = pgnt_usable(ent[i], !(ops[i].flags & GNTMAP_readonly));
		if (ops[i].status != GNTST_okay)
			continue;
		ops[i].handle = ent[i]->handle;
		ops[i].host_addr = ent[i]->addr;
	}
	pgnt_drop_failed(q, nmiss);
	return 0;
}

static int copy(struct back_queue *q, struct hv_gnttab *gt, uint32_t n,
		xengnttab_grant_copy_segment_t *segs)
{
	int rc;

	if (q->pgnt) {
		pthread_mutex_lock(&q->pgnt_lock);
		rc = pgnt_copy(q, n, segs);
		pthread_mutex_unlock(&q->pgnt_lock);
	} else {
		rc = hv_copy(q, gt, n, segs);
	}
	if (rc < 0)
		for (uint32_t i = 0; i < n; i++)
			segs[i].status = GNTST_general_error;
	return rc;
}

int back_gnt_copy(struct back_queue *q, uint32_t n, xengnttab_grant_copy_segment_t *segs)
{
	return copy(q, q->gt, n, segs);
}

int back_gnt_rx_copy(struct back_queue *q, uint32_t n, xengnttab_grant_copy_segment_t *segs)
{
	return copy(q, q->gt_rx, n, segs);
}

int back_gnt_map(struct back_queue *q, uint32_t n, struct gnttab_map_grant_ref *ops)
{
	int rc;

	if (q->pgnt) {
		pthread_mutex_lock(&q->pgnt_lock);
		rc = pgnt_map(q, n, ops);
		pthread_mutex_unlock(&q->pgnt_lock);
	} else {
		rc = hv_map(q, n, ops);
	}

	if (rc < 0)
		for (uint32_t i = 0; i < n; i++)
			ops[i].status = GNTST_general_error;
	return rc;
}

int back_gnt_unmap(struct back_queue *q, uint32_t n, struct gnttab_unmap_grant_ref *ops)
{
	return hv_unmap(q, n, ops);
}
