// SPDX-License-Identifier: MIT
// gnttab.c - grant table v1, hypervisor side: map, unmap and copy batches

/*
 * Theory of Operation
 *
 * Shared memory.  Each domain's grant table is an array of
 * grant_entry_v1_t in a memfd that the guest maps and writes at any time.
 * hv never trusts a field it has read twice: for each op it loads the
 * flags+domid word once (acquire) into a local, validates the local, and
 * then sets GTF_reading (and GTF_writing) with a 32-bit compare-and-swap
 * that expects exactly the flags+domid it validated, as Xen's
 * _set_status_v1() does.  If the guest changed the entry in between, the
 * CAS fails and the op starts over from a fresh read; after
 * HV_GRANT_ATTEMPTS failed attempts the entry is "unstable" and the op fails
 * with GNTST_general_error.  Nothing has been pinned at that point.  Only
 * with the bits set, when the guest can no longer end access, is the frame
 * read (once) and checked, as Xen reads it: read before, it could be the
 * frame of a grant the guest ended and made again with the same ref and
 * flags, which the CAS cannot tell apart.  A bad frame clears the bits
 * again (Xen's unlock_out_clear).
 *
 * hv-private state.  Per entry, struct hv_active (Xen's active entry) holds
 * the pin counts, the pinning domain and the frame snapshot taken at the
 * first pin; later pins use that snapshot, so every mapping of an entry
 * points at the same page whatever the guest rewrites.  The in-use bits are
 * cleared when the last pin of their kind goes, with a locked and of the
 * word, since the guest may change GTF_readonly meanwhile (hv_grant_unpin()).
 * The guest cannot reach this state, so it cannot make hv leak or
 * double-release a pin.
 *
 * Threads.  One hv_gnttab handle is used by one thread at a time; many
 * handles on many threads may work on the same domain.  Entry state
 * changes take the pin lock of the entry's block of HV_PIN_BLOCK refs, a
 * one-word spinlock (no syscall; only handles working on one block
 * contend).  A batch keeps the lock it took (struct hv_pin_hold) while its
 * ops stay in the block: a chunk of copies into a queue's buffers takes it
 * once, where a lock per entry cost a locked instruction for each pin and
 * each unpin, a sixth of netback's time at 64 B.  It is let go before the
 * copies themselves, before taking another block's (a thread holds at most
 * one, so they cannot deadlock) and before the batch lets its domains go;
 * it is held over bookkeeping only.  hv->lock may be taken under it (a
 * batch's lookup dropping the last reference to a destroyed domain), never
 * a pin lock under hv->lock.  A batch takes one
 * lock-free reference per domain it touches (hv_domain_get), not one per
 * op; each mapping holds its own reference, so a destroyed domain's memory
 * stays mapped until the last unmap.  The mappings' references and the
 * domain's map count are added (and on unmap dropped) once per domain per
 * batch, while the batch's own reference still holds the domain; hv-wide
 * counters are updated once per batch.
 */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/bulkcopy.h"
#include "common/log.h"
#include "common/prefetch.h"
#include "hv/gnttab.h"
#include "hv/hv_internal.h"

/*
 * Same bound as Xen's _set_status_v1() (it gives up when its retry count,
 * from 0, is 4 after a failed compare-and-swap: five attempts): a guest
 * that keeps rewriting loses.
 */
#define HV_GRANT_ATTEMPTS 5

/* Busy-wait this long on a pin lock before yielding the CPU. */
#define HV_SPIN_BEFORE_YIELD 128

/* Distinct domains one batch keeps referenced (netback uses one or two). */
#define HV_BATCH_DOMS 4

/*
 * Copy segments pinned ahead of their copies: enough for a batch of small
 * frames to have all its cache misses in flight at once, few enough that
 * the pins are held for microseconds only.
 */
#define HV_COPY_CHUNK 32

void (*hv_gnttab_race_hook)(grant_entry_v1_t *entry);

/* The flags and domid of a v1 entry, updated together (Xen's grant_combo). */
union hv_grant_combo {
	uint32_t raw;
	struct {
		uint16_t flags;
		domid_t domid;
	};
};

/* One maptrack entry: a live mapping, or a link in the free list. */
struct hv_maptrack {
	struct hv_domain *d; /* NULL when free */
	uint8_t *addr;
	grant_ref_t ref;
	bool write;
	uint32_t next_free;
};

/*
 * A handle's maptrack is mapped whole but touched only as it is used, as
 * Xen grows a domain's on demand: entries from @fresh on were never used,
 * and the free list holds those given back.  A handle that only copies
 * (netback's RX) costs no memory for it.
 */
struct hv_gnttab {
	struct hv *hv;
	domid_t self;
	uint32_t nr_maptrack;
	uint32_t free_head; /* nr_maptrack when empty */
	uint32_t fresh;
	struct hv_maptrack *maptrack;
};

/* The pin lock a batch holds, if any (see Threads above). */
struct hv_pin_hold {
	atomic_uint *lock;
};

/*
 * Domains referenced by the batch in progress, with negative results, and
 * the mappings made on each: their references and counts are added when
 * the batch lets the domain go, one atomic each instead of two per page.
 * @hold is a pin lock of one of these domains.
 */
struct hv_batch {
	struct hv *hv;
	struct hv_pin_hold hold;
	uint32_t n;
	domid_t id[HV_BATCH_DOMS];
	struct hv_domain *d[HV_BATCH_DOMS];
	uint32_t maps[HV_BATCH_DOMS];
};

/*
 * Domains whose mappings an unmap batch has released: the references and
 * counts are dropped together once the batch is done with the domain.
 */
struct hv_unmap_batch {
	struct hv *hv;
	struct hv_pin_hold hold;
	uint32_t n;
	struct hv_domain *d[HV_BATCH_DOMS];
	uint32_t unmaps[HV_BATCH_DOMS];
};

static inline void hv_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void hv_pin_lock(atomic_uint *lock)
{
	unsigned int spins = 0;

	while (atomic_exchange_explicit(lock, 1, memory_order_acquire)) {
		while (atomic_load_explicit(lock, memory_order_relaxed)) {
			if (++spins < HV_SPIN_BEFORE_YIELD) {
				hv_cpu_relax();
				continue;
			}
			/* The holder may be preempted: let it run. */
			sched_yield();
			spins = 0;
		}
	}
}

/* Let go of the pin lock @h holds, if any. */
static void hv_pin_release(struct hv_pin_hold *h)
{
	if (h->lock)
		atomic_store_explicit(h->lock, 0, memory_order_release);
	h->lock = NULL;
}

/* Hold the pin lock of @ref's block of @d in @h, letting go of another. */
static void hv_pin_hold(struct hv_pin_hold *h, struct hv_domain *d, grant_ref_t ref)
{
	atomic_uint *lock = &d->pin_locks[ref / HV_PIN_BLOCK];

	if (h->lock == lock)
		return;
	hv_pin_release(h);
	hv_pin_lock(lock);
	h->lock = lock;
}

static uint32_t *hv_grant_word(grant_entry_v1_t *e)
{
	return (uint32_t *)(void *)&e->flags;
}

/*
 * Pin entry @ref of @d for domain @self, reading (and writing if @write),
 * with its pin lock in @h.  On GNTST_okay, *@frame is the frame to use and
 * the entry carries GTF_reading (and GTF_writing); on failure nothing has
 * changed.
 */
static int16_t hv_grant_pin(struct hv_pin_hold *h, struct hv_domain *d, grant_ref_t ref,
			    domid_t self, bool write, uint32_t *frame)
{
	grant_entry_v1_t *e;
	struct hv_active *act;
	uint32_t snap_frame, pins;
	bool pinned;

	if (ref >= d->nr_grants)
		return GNTST_bad_gntref;
	e = &d->gnttab[ref];
	act = &d->active[ref];

	hv_pin_hold(h, d, ref);
	pins = act->pins;
	pinned = pins != 0;
	if (pinned && act->domid != self)
		return GNTST_general_error; /* Xen: "Bad domain" on an active entry */
	/* Xen's pin counts are 8 bits per kind; ours overflow much later. */
	if ((write ? pins >> HV_PIN_WR_SHIFT : pins & HV_PIN_MAX) == HV_PIN_MAX)
		return GNTST_general_error;

	for (int tries = 0;; tries++) {
		union hv_grant_combo cur, want;

		/* One read of the shared word; only the local is used below. */
		cur.raw = __atomic_load_n(hv_grant_word(e), __ATOMIC_ACQUIRE);

		if ((cur.flags & GTF_type_mask) != GTF_permit_access)
			return GNTST_general_error;
		if (cur.domid != self || (write && (cur.flags & GTF_readonly)))
			return GNTST_permission_denied;
		want = cur;
		want.flags |= GTF_reading | (write ? GTF_writing : 0);
		if (hv_gnttab_race_hook)
			hv_gnttab_race_hook(e);
		if (__atomic_compare_exchange_n(hv_grant_word(e), &cur.raw, want.raw, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
		if (tries + 1 == HV_GRANT_ATTEMPTS)
			return GNTST_general_error; /* the guest keeps rewriting it */
	}

	if (!pinned) {
		/*
		 * The frame is read only now, with the in-use bits set, as Xen
		 * does: until then the guest may end access, reuse the page and
		 * grant the same ref for another one with the same flags, which
		 * the compare-and-swap cannot tell from no change at all.
		 */
		snap_frame = __atomic_load_n(&e->frame, __ATOMIC_ACQUIRE);
		if (snap_frame >= d->npages) {
			/* Nothing else pins it: the bits just set go again (Xen's unlock_out_clear). */
			union hv_grant_combo mask = {.raw = UINT32_MAX};

			mask.flags = (uint16_t) ~(GTF_reading | (write ? GTF_writing : 0));
			__atomic_fetch_and(hv_grant_word(e), mask.raw, __ATOMIC_RELEASE);
			return GNTST_bad_page;
		}
		act->domid = self;
		act->frame = snap_frame;
	}
	act->pins = pins + (write ? HV_PIN_WR : HV_PIN_RD);
	*frame = act->frame;
	return GNTST_okay;
}

/*
 * Drop one pin taken by hv_grant_pin(), with the pin lock in @h; clears the
 * in-use bits it owned.
 */
static void hv_grant_unpin(struct hv_pin_hold *h, struct hv_domain *d, grant_ref_t ref, bool write)
{
	grant_entry_v1_t *e = &d->gnttab[ref];
	struct hv_active *act = &d->active[ref];
	union hv_grant_combo mask = {.raw = UINT32_MAX};
	uint16_t clear = 0;
	uint32_t pins;

	hv_pin_hold(h, d, ref);
	pins = act->pins - (write ? HV_PIN_WR : HV_PIN_RD);
	act->pins = pins;
	if (write && !(pins >> HV_PIN_WR_SHIFT))
		clear |= GTF_writing;
	if (!pins)
		clear |= GTF_reading;
	if (clear) {
		/*
		 * A locked and of the whole word, as Xen's: the guest may set
		 * or clear GTF_readonly while the entry is in use (grant_table.h:
		 * a compare-and-swap while !GTF_writing, a bit-set at any time),
		 * and a load and store would undo such a change that fell
		 * between them.
		 */
		mask.flags = (uint16_t)~clear;
		__atomic_fetch_and(hv_grant_word(e), mask.raw, __ATOMIC_RELEASE);
	}
}

/*
 * Let every domain of the batch go: first the references of the mappings
 * made on it (so that they never reach zero), then the batch's own.
 */
static void hv_batch_end(struct hv_batch *b)
{
	hv_pin_release(&b->hold);
	for (uint32_t i = 0; i < b->n; i++) {
		struct hv_domain *d = b->d[i];

		if (!d)
			continue;
		if (b->maps[i]) {
			atomic_fetch_add(&d->refs, b->maps[i]);
			atomic_fetch_add(&d->maps, b->maps[i]);
			b->maps[i] = 0;
		}
		hv_domain_put(b->hv, d);
	}
	b->n = 0;
}

/*
 * The domain @id for this batch (a reference held until hv_batch_end), and
 * in *@slot its place in the batch.
 */
static struct hv_domain *hv_batch_domain(struct hv_batch *b, domid_t id, uint32_t *slot)
{
	struct hv_domain *d;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		if (b->id[i] == id) {
			d = b->d[i];
			goto check_dying;
		}
	}
	if (b->n == HV_BATCH_DOMS)
		hv_batch_end(b);
	d = hv_domain_get(b->hv, id);
	i = b->n++;
	b->id[i] = id;
	b->d[i] = d;
	b->maps[i] = 0;
check_dying:
	*slot = i;
	/* Destroyed since the batch took its reference: refuse new work. */
	if (d && atomic_load_explicit(&d->state, memory_order_relaxed) != HV_DOM_LIVE)
		return NULL;
	return d;
}

/* Whether @b can take the domains of @seg without dropping one it holds. */
static bool hv_batch_room(const struct hv_batch *b, const xengnttab_grant_copy_segment_t *seg)
{
	domid_t id[2];
	uint32_t nid = 0, need = 0;

	if (seg->flags & GNTCOPY_source_gref)
		id[nid++] = seg->source.foreign.domid;
	if (seg->flags & GNTCOPY_dest_gref)
		id[nid++] = seg->dest.foreign.domid;
	for (uint32_t k = 0; k < nid; k++) {
		bool held = k == 1 && id[1] == id[0];

		for (uint32_t i = 0; i < b->n && !held; i++)
			held = b->id[i] == id[k];
		need += !held;
	}
	return b->n + need <= HV_BATCH_DOMS;
}

/*
 * The maptrack's mapping: its entries, to the next page, and one page
 * more that may not be touched.  Handles come from the caller (netback)
 * and are checked against @fresh before use; the guard page makes a check
 * that let one handle past the end through fault at once, wherever the
 * kernel put the next mapping, instead of reading what is there.
 */
static size_t maptrack_bytes(uint32_t n)
{
	size_t b = (size_t)n * sizeof(struct hv_maptrack);

	return (b + HV_PAGE_SIZE - 1) / HV_PAGE_SIZE * HV_PAGE_SIZE + HV_PAGE_SIZE;
}

/* Every maptrack entry holds a mapping. */
static bool maptrack_full(const struct hv_gnttab *gt)
{
	return gt->free_head == gt->nr_maptrack && gt->fresh == gt->nr_maptrack;
}

/* A maptrack entry for a new mapping (the caller saw !maptrack_full()): one given back, else a fresh one. */
static uint32_t maptrack_get(struct hv_gnttab *gt)
{
	uint32_t h = gt->free_head;

	if (h != gt->nr_maptrack) {
		gt->free_head = gt->maptrack[h].next_free;
		return h;
	}
	return gt->fresh++;
}

struct hv_gnttab *hv_gnttab_open(struct hv *hv, domid_t self)
{
	struct hv_gnttab *gt;
	size_t len;

	if (!hv) {
		errno = EINVAL;
		return NULL;
	}
	if (!hv_domain_lookup_live(hv, self)) {
		errno = ESRCH;
		return NULL;
	}
	gt = calloc(1, sizeof(*gt));
	if (!gt)
		return NULL;
	/* Anonymous pages, zero until written: only the entries used cost memory. */
	len = maptrack_bytes(hv->cfg.max_maptrack);
	gt->maptrack = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gt->maptrack == MAP_FAILED) {
		free(gt);
		return NULL;
	}
	if (mprotect((uint8_t *)gt->maptrack + len - HV_PAGE_SIZE, HV_PAGE_SIZE, PROT_NONE) < 0) {
		int e = errno;

		munmap(gt->maptrack, len);
		free(gt);
		errno = e;
		return NULL;
	}
	gt->hv = hv;
	gt->self = self;
	gt->nr_maptrack = hv->cfg.max_maptrack;
	gt->free_head = gt->nr_maptrack;
	gt->fresh = 0;
	return gt;
}

/* Drop what an unmap batch released; may free zombies (after every unpin). */
static void hv_unmap_batch_end(struct hv_unmap_batch *ub)
{
	hv_pin_release(&ub->hold);
	for (uint32_t i = 0; i < ub->n; i++) {
		atomic_fetch_sub(&ub->d[i]->maps, ub->unmaps[i]);
		hv_domain_put_n(ub->hv, ub->d[i], ub->unmaps[i]);
	}
	ub->n = 0;
}

/* Undo one mapping: unpin and release the maptrack entry; @ub drops the domain. */
static void hv_gnttab_unmap_one(struct hv_gnttab *gt, grant_handle_t h, struct hv_unmap_batch *ub)
{
	struct hv_maptrack *mt = &gt->maptrack[h];
	struct hv_domain *d = mt->d;
	uint32_t i;

	hv_grant_unpin(&ub->hold, d, mt->ref, mt->write);
	mt->d = NULL;
	mt->addr = NULL;
	mt->next_free = gt->free_head;
	gt->free_head = h;
	for (i = 0; i < ub->n && ub->d[i] != d; i++)
		;
	if (i == HV_BATCH_DOMS) {
		hv_unmap_batch_end(ub);
		i = 0;
	}
	if (i == ub->n) {
		ub->d[i] = d;
		ub->unmaps[i] = 0;
		ub->n++;
	}
	ub->unmaps[i]++;
}

void hv_gnttab_close(struct hv_gnttab *gt)
{
	struct hv_unmap_batch ub = {.hv = gt ? gt->hv : NULL};
	uint64_t n = 0;

	if (!gt)
		return;
	for (uint32_t h = 0; h < gt->fresh; h++) {
		if (gt->maptrack[h].d) {
			hv_gnttab_unmap_one(gt, h, &ub);
			n++;
		}
	}
	hv_unmap_batch_end(&ub);
	atomic_fetch_sub(&gt->hv->maps_in_use, n);
	munmap(gt->maptrack, maptrack_bytes(gt->nr_maptrack));
	free(gt);
}

static int16_t hv_gnttab_map_one(struct hv_gnttab *gt, struct hv_batch *b,
				 struct gnttab_map_grant_ref *op)
{
	bool write = !(op->flags & GNTMAP_readonly);
	struct hv_maptrack *mt;
	struct hv_domain *d;
	uint32_t frame, slot;
	int16_t rc;

	/* As Xen: a map op must ask for a host mapping. */
	if (!(op->flags & GNTMAP_host_map))
		return GNTST_bad_gntref;
	/* No device (IOMMU) mappings and no PTE updates to emulate. */
	if (op->flags & (GNTMAP_device_map | GNTMAP_contains_pte))
		return GNTST_general_error;
	d = hv_batch_domain(b, op->dom, &slot);
	if (!d)
		return GNTST_bad_domain;
	if (maptrack_full(gt))
		return GNTST_no_device_space;
	rc = hv_grant_pin(&b->hold, d, op->ref, gt->self, write, &frame);
	if (rc != GNTST_okay)
		return rc;

	op->handle = maptrack_get(gt);
	mt = &gt->maptrack[op->handle];
	mt->d = d;
	mt->ref = op->ref;
	mt->write = write;
	mt->addr = (write ? d->mem_rw : (uint8_t *)d->mem_ro) + (size_t)frame * HV_PAGE_SIZE;
	b->maps[slot]++; /* a reference of its own at hv_batch_end: the memory lives on */
	op->host_addr = (uint64_t)(uintptr_t)mt->addr;
	return GNTST_okay;
}

int hv_gnttab_map_grant_refs(struct hv_gnttab *gt, uint32_t count, struct gnttab_map_grant_ref *ops)
{
	struct hv_batch b = {.hv = gt ? gt->hv : NULL};
	uint64_t mapped = 0;

	if (!gt || (count && !ops))
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++) {
		struct gnttab_map_grant_ref *op = &ops[i];

		op->dev_bus_addr = 0;
		op->status = hv_gnttab_map_one(gt, &b, op);
		if (op->status == GNTST_okay)
			mapped++;
		else
			op->host_addr = 0;
	}
	hv_batch_end(&b);
	atomic_fetch_add(&gt->hv->maps_in_use, mapped);
	atomic_fetch_add(&gt->hv->map_ops, count);
	atomic_fetch_add(&gt->hv->batches, 1);
	return 0;
}

int hv_gnttab_unmap_grant_refs(struct hv_gnttab *gt, uint32_t count,
			       struct gnttab_unmap_grant_ref *ops)
{
	struct hv_unmap_batch ub = {.hv = gt ? gt->hv : NULL};
	uint64_t unmapped = 0;

	if (!gt || (count && !ops))
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++) {
		struct gnttab_unmap_grant_ref *op = &ops[i];
		grant_handle_t h = op->handle;

		if (h >= gt->fresh || !gt->maptrack[h].d) {
			op->status = GNTST_bad_handle;
			continue;
		}
		if (op->host_addr && op->host_addr != (uint64_t)(uintptr_t)gt->maptrack[h].addr) {
			op->status = GNTST_bad_virt_addr;
			continue;
		}
		hv_gnttab_unmap_one(gt, h, &ub);
		op->status = GNTST_okay;
		unmapped++;
	}
	hv_unmap_batch_end(&ub);
	atomic_fetch_sub(&gt->hv->maps_in_use, unmapped);
	atomic_fetch_add(&gt->hv->unmap_ops, count);
	atomic_fetch_add(&gt->hv->batches, 1);
	return 0;
}

/*
 * One side of a copy that is a grant: the pinned domain and page, which
 * entry in which direction, and whether the segment drops the pin after
 * its copy (false when it rides on an earlier segment's pin).
 */
struct hv_copy_side {
	struct hv_domain *d;
	uint8_t *page;
	grant_ref_t ref;
	domid_t domid;
	bool write;
	bool owns;
};

/* Pin one granted side of a copy and return its address in *@p. */
static int16_t hv_copy_pin(struct hv_gnttab *gt, struct hv_batch *b,
			   const union xengnttab_copy_ptr *ptr, bool write,
			   struct hv_copy_side *side, uint8_t **p)
{
	struct hv_domain *d;
	uint32_t frame, slot;
	int16_t rc;

	d = hv_batch_domain(b, ptr->foreign.domid, &slot);
	if (!d)
		return GNTST_bad_domain;
	rc = hv_grant_pin(&b->hold, d, ptr->foreign.ref, gt->self, write, &frame);
	if (rc != GNTST_okay)
		return rc;
	side->d = d;
	side->page = (write ? d->mem_rw : (uint8_t *)d->mem_ro) + (size_t)frame * HV_PAGE_SIZE;
	side->ref = ptr->foreign.ref;
	side->domid = ptr->foreign.domid;
	side->write = write;
	side->owns = true;
	*p = side->page + ptr->foreign.offset;
	return GNTST_okay;
}

/*
 * Whether the segment prepared just before holds, in @prev, the entry @ptr
 * names in the same direction; if so, this segment's side uses that pin.
 * Xen's grant copy keeps a source or destination across consecutive ops on
 * the same ref, and netback makes such pairs on every frame longer than its
 * header: the header and the rest of the first slot go into one posted
 * page, and a copy-mode header and the rest of its slot come from one
 * granted page.  The pin is dropped after the chunk's copies
 * (hv_copy_flush()), so it covers this segment's copy too.  A domain
 * destroyed since gets no new work, as in hv_batch_domain().
 */
static bool hv_copy_reuse(const struct hv_copy_side *prev, const union xengnttab_copy_ptr *ptr,
			  bool write, struct hv_copy_side *side, uint8_t **p)
{
	if (!prev || !prev->d || prev->ref != ptr->foreign.ref ||
	    prev->domid != ptr->foreign.domid || prev->write != write ||
	    atomic_load_explicit(&prev->d->state, memory_order_relaxed) != HV_DOM_LIVE)
		return false;
	*side = *prev;
	side->owns = false;
	*p = side->page + ptr->foreign.offset;
	return true;
}

/* A segment of a copy batch between its pins and its copy. */
struct hv_copy_prep {
	xengnttab_grant_copy_segment_t *seg;
	struct hv_copy_side src, dst;
	uint8_t *s, *dp;
};

/*
 * Check and pin one segment; GNTST_okay with @pp ready to copy, or the
 * segment's status with nothing pinned.
 */
static int16_t hv_copy_prepare(struct hv_gnttab *gt, struct hv_batch *b,
			       xengnttab_grant_copy_segment_t *seg, const struct hv_copy_prep *prev,
			       struct hv_copy_prep *pp)
{
	int16_t rc;

	pp->seg = seg;
	pp->src = pp->dst = (struct hv_copy_side){0};
	pp->s = seg->source.virt;
	pp->dp = seg->dest.virt;
	/* gntdev refuses local-to-local copies: nothing for a hypervisor to do. */
	if (!(seg->flags & (GNTCOPY_source_gref | GNTCOPY_dest_gref)))
		return GNTST_bad_copy_arg;
	/* Both page checks before pinning, so a bad segment pins nothing. */
	if ((seg->flags & GNTCOPY_source_gref) &&
	    (uint32_t)seg->source.foreign.offset + seg->len > HV_PAGE_SIZE)
		return GNTST_bad_copy_arg;
	if ((seg->flags & GNTCOPY_dest_gref) &&
	    (uint32_t)seg->dest.foreign.offset + seg->len > HV_PAGE_SIZE)
		return GNTST_bad_copy_arg;

	if (seg->flags & GNTCOPY_source_gref) {
		if (!hv_copy_reuse(prev ? &prev->src : NULL, &seg->source, false, &pp->src,
				   &pp->s)) {
			rc = hv_copy_pin(gt, b, &seg->source, false, &pp->src, &pp->s);
			if (rc != GNTST_okay)
				return rc;
		}
	}
	if (seg->flags & GNTCOPY_dest_gref) {
		rc = GNTST_okay;
		if (!hv_copy_reuse(prev ? &prev->dst : NULL, &seg->dest, true, &pp->dst, &pp->dp))
			rc = hv_copy_pin(gt, b, &seg->dest, true, &pp->dst, &pp->dp);
		if (rc != GNTST_okay) {
			if (pp->src.owns)
				hv_grant_unpin(&b->hold, pp->src.d, pp->src.ref, false);
			return rc;
		}
	}
	return GNTST_okay;
}

/*
 * Copy the prepared segments in order (a later one may read what an
 * earlier one wrote; both sides may be one granted page), then unpin them.
 * No pin lock is held over the copies.
 */
static void hv_copy_flush(struct hv_batch *b, struct hv_copy_prep *pp, uint32_t n)
{
	hv_pin_release(&b->hold);
	for (uint32_t i = 0; i < n; i++)
		bulk_copy(pp[i].dp, pp[i].s, pp[i].seg->len);
	for (uint32_t i = 0; i < n; i++) {
		if (pp[i].dst.owns)
			hv_grant_unpin(&b->hold, pp[i].dst.d, pp[i].dst.ref, true);
		if (pp[i].src.owns)
			hv_grant_unpin(&b->hold, pp[i].src.d, pp[i].src.ref, false);
	}
}

int hv_gnttab_grant_copy(struct hv_gnttab *gt, uint32_t count, xengnttab_grant_copy_segment_t *segs)
{
	struct hv_batch b = {.hv = gt ? gt->hv : NULL};
	struct hv_copy_prep pp[HV_COPY_CHUNK];
	uint32_t n = 0;
	bool share = false; /* pp[n - 1] is the segment just before, and it succeeded */

	if (!gt || (count && !segs))
		return -EINVAL;
	for (uint32_t i = 0; i < count; i++) {
		/*
		 * The source's pin relies on the batch's reference to its
		 * domain: make room for both sides before pinning either, so
		 * that the lookup of the destination never drops it (and
		 * copy what is pinned before the batch lets a domain go).
		 */
		if (!hv_batch_room(&b, &segs[i])) {
			hv_copy_flush(&b, pp, n);
			n = 0;
			hv_batch_end(&b);
		}
		segs[i].status =
		    hv_copy_prepare(gt, &b, &segs[i], share && n ? &pp[n - 1] : NULL, &pp[n]);
		/* As Xen, which lets its kept buffers go after a failed op. */
		share = segs[i].status == GNTST_okay;
		if (!share)
			continue;
		/*
		 * Start fetching both sides now: the guest's lines were last
		 * touched on another CPU, and a chunk's misses then overlap
		 * instead of each stalling its copy (and the unpin after it,
		 * whose locked instructions wait for the copy's stores).
		 */
		prefetch_read(pp[n].s);
		prefetch_write(pp[n].dp);
		if (++n == HV_COPY_CHUNK) {
			hv_copy_flush(&b, pp, n);
			n = 0;
		}
	}
	hv_copy_flush(&b, pp, n);
	hv_batch_end(&b);
	atomic_fetch_add(&gt->hv->copy_ops, count);
	atomic_fetch_add(&gt->hv->batches, 1);
	return 0;
}
