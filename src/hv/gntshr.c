// SPDX-License-Identifier: MIT
// gntshr.c - grant table v1, guest side: ref allocation, grant and end access

/*
 * Theory of Operation
 *
 * Shared memory.  The guest owns its grant table and writes domid, frame
 * and flags; hv (the hypervisor) only ever sets and clears GTF_reading and
 * GTF_writing in the flags, with atomic operations on the flags+domid word.
 * So the guest publishes an entry with domid and frame first, a release
 * barrier, then the flags (Linux's order), and revokes it with a
 * compare-and-swap of the flags to 0 that fails while hv has the entry in
 * use: the page may only be reused after that CAS succeeds.
 *
 * State.  One array of links, allocated once at init, threads every ref
 * through at most one intrusive list: the free list (LIFO) or the deferred
 * list (FIFO, refs whose revocation waits for the backend to unmap).  A
 * ref handed out is marked HV_GNTSHR_INUSE, which catches double frees.
 * Refs below HV_GNTSHR_FIRST_REF are never on any list.
 *
 * Threads.  None: one hv_gntshr belongs to one thread.
 */

#include <errno.h>
#include <stdlib.h>

#include "hv/gnttab.h"

int hv_gntshr_init(struct hv_gntshr *gs, void *table, uint32_t nr_entries)
{
	if (!gs || !table || nr_entries <= HV_GNTSHR_FIRST_REF || nr_entries >= HV_GNTSHR_INUSE)
		return -EINVAL;
	gs->link = calloc(nr_entries, sizeof(*gs->link));
	if (!gs->link)
		return -ENOMEM;
	gs->table = table;
	gs->nr_entries = nr_entries;
	for (uint32_t r = 0; r < HV_GNTSHR_FIRST_REF; r++)
		gs->link[r] = HV_GNTSHR_INUSE; /* reserved: never free, never freed */
	for (uint32_t r = HV_GNTSHR_FIRST_REF; r < nr_entries; r++)
		gs->link[r] = r + 1 < nr_entries ? r + 1 : HV_GNTSHR_END;
	gs->free_head = HV_GNTSHR_FIRST_REF;
	gs->nr_free = nr_entries - HV_GNTSHR_FIRST_REF;
	gs->def_head = HV_GNTSHR_END;
	gs->def_tail = HV_GNTSHR_END;
	gs->nr_deferred = 0;
	return 0;
}

void hv_gntshr_fini(struct hv_gntshr *gs)
{
	if (!gs)
		return;
	free(gs->link);
	gs->link = NULL;
	gs->nr_free = 0;
	gs->nr_deferred = 0;
}

int hv_gntshr_alloc_ref(struct hv_gntshr *gs, grant_ref_t *ref)
{
	uint32_t r = gs->free_head;

	if (r == HV_GNTSHR_END)
		return -ENOSPC;
	gs->free_head = gs->link[r];
	gs->link[r] = HV_GNTSHR_INUSE;
	gs->nr_free--;
	*ref = r;
	return 0;
}

static bool hv_gntshr_is_allocated(const struct hv_gntshr *gs, grant_ref_t ref)
{
	return ref >= HV_GNTSHR_FIRST_REF && ref < gs->nr_entries &&
	       gs->link[ref] == HV_GNTSHR_INUSE;
}

int hv_gntshr_free_ref(struct hv_gntshr *gs, grant_ref_t ref)
{
	if (!hv_gntshr_is_allocated(gs, ref))
		return -EINVAL;
	gs->link[ref] = gs->free_head;
	gs->free_head = ref;
	gs->nr_free++;
	return 0;
}

int hv_gntshr_grant_access(struct hv_gntshr *gs, grant_ref_t ref, domid_t domid, uint32_t frame,
			   bool readonly)
{
	grant_entry_v1_t *e;

	if (ref >= gs->nr_entries)
		return -EINVAL;
	e = &gs->table[ref];
	__atomic_store_n(&e->domid, domid, __ATOMIC_RELAXED);
	__atomic_store_n(&e->frame, frame, __ATOMIC_RELAXED);
	/* wmb(): hv must see domid and frame before the flags that validate them. */
	__atomic_store_n(&e->flags, (uint16_t)(GTF_permit_access | (readonly ? GTF_readonly : 0)),
			 __ATOMIC_RELEASE);
	return 0;
}

int hv_gntshr_end_access(struct hv_gntshr *gs, grant_ref_t ref)
{
	uint16_t flags;

	if (ref >= gs->nr_entries)
		return -EINVAL;
	flags = __atomic_load_n(&gs->table[ref].flags, __ATOMIC_ACQUIRE);
	do {
		if (flags & (GTF_reading | GTF_writing))
			return -EBUSY;
	} while (!__atomic_compare_exchange_n(&gs->table[ref].flags, &flags, 0, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return 0;
}

int hv_gntshr_end_access_deferred(struct hv_gntshr *gs, grant_ref_t ref)
{
	if (!hv_gntshr_is_allocated(gs, ref))
		return -EINVAL;
	if (hv_gntshr_end_access(gs, ref) == 0)
		return hv_gntshr_free_ref(gs, ref);
	/* Queue at the tail, so the oldest is retried first. */
	gs->link[ref] = HV_GNTSHR_END;
	if (gs->def_tail == HV_GNTSHR_END)
		gs->def_head = ref;
	else
		gs->link[gs->def_tail] = ref;
	gs->def_tail = ref;
	gs->nr_deferred++;
	return 1;
}

uint32_t hv_gntshr_deferred_poll(struct hv_gntshr *gs)
{
	uint32_t prev = HV_GNTSHR_END, r = gs->def_head, released = 0;

	/* Bounded: each step moves along or removes one of nr_deferred refs. */
	while (r != HV_GNTSHR_END) {
		uint32_t next = gs->link[r];

		if (hv_gntshr_end_access(gs, r) != 0) {
			prev = r;
			r = next;
			continue;
		}
		if (prev == HV_GNTSHR_END)
			gs->def_head = next;
		else
			gs->link[prev] = next;
		if (gs->def_tail == r)
			gs->def_tail = prev;
		gs->nr_deferred--;
		gs->link[r] = HV_GNTSHR_INUSE;
		hv_gntshr_free_ref(gs, r);
		released++;
		r = next;
	}
	return released;
}

uint32_t hv_gntshr_deferred_count(const struct hv_gntshr *gs)
{
	return gs->nr_deferred;
}
