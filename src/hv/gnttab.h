/* SPDX-License-Identifier: MIT */
/* gnttab.h - grant table v1: map, unmap and copy (backend) and sharing (guest) */
#ifndef PVNET_HV_GNTTAB_H
#define PVNET_HV_GNTTAB_H

#include <stdbool.h>
#include <stdint.h>
#include <xengnttab.h>

#include "hv/hv.h"

/*
 * Backend side: the hypervisor half of GNTTABOP_map_grant_ref,
 * GNTTABOP_unmap_grant_ref and GNTTABOP_copy, on Xen's own op structs.
 * Each op gets a GNTST_* status; a call returns 0 once the batch has been
 * processed, or -errno if the call itself is invalid.
 *
 * Differences from Xen, all of them because there is no MMU to program:
 *  - map: GNTMAP_host_map is required; host_addr is an OUT field that
 *    receives a pointer (through uintptr_t) into hv's view of the page,
 *    the read-only view for GNTMAP_readonly.  dev_bus_addr is set to 0.
 *  - unmap: host_addr, if not 0, must be the address the map returned,
 *    else GNTST_bad_virt_addr.
 *  - a grant given to another domain, or a read-only grant mapped or copied
 *    into, fails with GNTST_permission_denied (Xen says
 *    GNTST_general_error), so that a caller can tell it apart.
 */

struct hv_gnttab;

/**
 * hv_gnttab_open() - open a grant handle for domain @self (like /dev/xen/gntdev)
 * @hv: the hypervisor
 * @self: the domain that maps and copies (normally 0, pvnetd)
 *
 * A handle is used by one thread at a time; several handles may work on
 * the same foreign domain from several threads.
 *
 * Return: the handle, or NULL with errno set (ESRCH, ENOMEM)
 */
struct hv_gnttab *hv_gnttab_open(struct hv *hv, domid_t self);

/**
 * hv_gnttab_close() - close a handle, unmapping whatever it still maps
 * @gt: the handle, may be NULL
 */
void hv_gnttab_close(struct hv_gnttab *gt);

/**
 * hv_gnttab_map_grant_refs() - map a batch of grants
 * @gt: the handle
 * @count: number of ops
 * @ops: the ops; IN: flags (GNTMAP_host_map [| GNTMAP_readonly]), ref, dom;
 *	OUT: status, handle, host_addr
 *
 * Statuses: GNTST_okay; GNTST_bad_domain (no such domain, or dying);
 * GNTST_bad_gntref (ref out of range, or no GNTMAP_host_map);
 * GNTST_general_error (not GTF_permit_access, entry unstable, pin count
 * overflow); GNTST_permission_denied (granted to another domain, or read-only
 * mapped writable); GNTST_bad_page (frame beyond the domain's memory);
 * GNTST_no_device_space (maptrack of this handle full).
 *
 * Return: 0 when the batch was processed, -EINVAL for bad arguments
 */
int hv_gnttab_map_grant_refs(struct hv_gnttab *gt, uint32_t count,
			     struct gnttab_map_grant_ref *ops);

/**
 * hv_gnttab_unmap_grant_refs() - unmap a batch of mappings
 * @gt: the handle that mapped them
 * @count: number of ops
 * @ops: the ops; IN: handle, host_addr (0 or the mapped address); OUT: status
 *
 * Statuses: GNTST_okay; GNTST_bad_handle (not a live mapping of @gt);
 * GNTST_bad_virt_addr (host_addr does not match).  The last unmap of a
 * destroyed domain's page frees the domain.
 *
 * Return: 0 when the batch was processed, -EINVAL for bad arguments
 */
int hv_gnttab_unmap_grant_refs(struct hv_gnttab *gt, uint32_t count,
			       struct gnttab_unmap_grant_ref *ops);

/**
 * hv_gnttab_grant_copy() - copy to, from or between granted frames
 * @gt: the handle
 * @count: number of segments
 * @segs: the segments; flags GNTCOPY_source_gref / GNTCOPY_dest_gref say
 *	which side is a grant (ref, offset, domid), the other is a pointer
 *	(virt) into the caller's own memory
 *
 * A granted side may not cross its page (offset + len <= 4096, else
 * GNTST_bad_copy_arg); a segment with no granted side is refused the same
 * way, as gntdev refuses local-to-local copies.  While the copy runs the
 * entries carry GTF_reading (and GTF_writing on the destination), exactly as
 * on Xen, so a guest's end-of-access racing the copy fails.  Other statuses
 * as for hv_gnttab_map_grant_refs().
 *
 * Return: 0 when the batch was processed, -EINVAL for bad arguments
 */
int hv_gnttab_grant_copy(struct hv_gnttab *gt, uint32_t count,
			 xengnttab_grant_copy_segment_t *segs);

/*
 * Guest side (the frontend's own grant table).  Refs below
 * HV_GNTSHR_FIRST_REF are reserved by convention (0 console, 1 xenstore,
 * the rest for the toolstack) and never handed out.
 *
 * The ref lists are intrusive over one array allocated at init: @link[r]
 * is the next ref in whichever list r is on (free or deferred),
 * HV_GNTSHR_END ends a list, HV_GNTSHR_INUSE marks a ref given out.
 * Not thread safe: one hv_gntshr belongs to one thread (or is locked by
 * its user).
 */
#define HV_GNTSHR_FIRST_REF 8
#define HV_GNTSHR_END	    UINT32_MAX
#define HV_GNTSHR_INUSE	    (UINT32_MAX - 1)

/**
 * struct hv_gntshr - a guest's view of its own grant table
 * @table: the mapped table (written by the guest, flags also by hv)
 * @nr_entries: entries in @table
 * @link: per-ref list link (see above)
 * @free_head: first free ref
 * @nr_free: refs on the free list
 * @def_head: oldest deferred ref
 * @def_tail: newest deferred ref
 * @nr_deferred: refs waiting for the backend to stop using them
 */
struct hv_gntshr {
	grant_entry_v1_t *table;
	uint32_t nr_entries;
	uint32_t *link;
	uint32_t free_head;
	uint32_t nr_free;
	uint32_t def_head;
	uint32_t def_tail;
	uint32_t nr_deferred;
};

/**
 * hv_gntshr_init() - start using a mapped grant table
 * @gs: the state to fill
 * @table: the table (mapped from hv_domain_gnttab_fd())
 * @nr_entries: number of v1 entries in @table
 *
 * Return: 0, -EINVAL (no usable ref), -ENOMEM
 */
int hv_gntshr_init(struct hv_gntshr *gs, void *table, uint32_t nr_entries);

/**
 * hv_gntshr_fini() - free the ref lists (the table itself is the caller's)
 * @gs: the state
 */
void hv_gntshr_fini(struct hv_gntshr *gs);

/**
 * hv_gntshr_alloc_ref() - take a free ref
 * @gs: the state
 * @ref: receives the ref (never below HV_GNTSHR_FIRST_REF)
 *
 * Return: 0, or -ENOSPC when every ref is in use or deferred
 */
int hv_gntshr_alloc_ref(struct hv_gntshr *gs, grant_ref_t *ref);

/**
 * hv_gntshr_free_ref() - give a ref back
 * @gs: the state
 * @ref: a ref from hv_gntshr_alloc_ref(); its access must have ended
 *
 * Return: 0, or -EINVAL if @ref is not allocated
 */
int hv_gntshr_free_ref(struct hv_gntshr *gs, grant_ref_t ref);

/**
 * hv_gntshr_grant_access() - let @domid access @frame through @ref
 * @gs: the state
 * @ref: an allocated ref
 * @domid: the domain allowed in
 * @frame: the guest page, 0 .. npages - 1
 * @readonly: forbid writing
 *
 * Writes domid and frame, a write barrier, then the flags, in the order of
 * Linux's gnttab_grant_foreign_access_ref(), so hv never sees the flags
 * before the rest.
 *
 * Return: 0, or -EINVAL for a ref outside the table
 */
int hv_gntshr_grant_access(struct hv_gntshr *gs, grant_ref_t ref, domid_t domid, uint32_t frame,
			   bool readonly);

/**
 * hv_gntshr_end_access() - revoke a grant if nobody is using it
 * @gs: the state
 * @ref: the ref
 *
 * Compare-and-swaps the flags to 0 unless GTF_reading or GTF_writing is
 * set (the Xen/Linux rule: the page may only be reused once this succeeds).
 *
 * Return: 0, -EBUSY while mapped or being copied, -EINVAL for a bad ref
 */
int hv_gntshr_end_access(struct hv_gntshr *gs, grant_ref_t ref);

/**
 * hv_gntshr_end_access_deferred() - end access now or as soon as possible
 * @gs: the state
 * @ref: an allocated ref
 *
 * Like Linux's gnttab_end_foreign_access(): if the grant is not in use it
 * is revoked and @ref freed at once; otherwise @ref is queued and
 * hv_gntshr_deferred_poll() retries it.  No allocation.
 *
 * Return: 0 if released now, 1 if queued, -EINVAL if @ref is not allocated
 */
int hv_gntshr_end_access_deferred(struct hv_gntshr *gs, grant_ref_t ref);

/**
 * hv_gntshr_deferred_poll() - retry every deferred ref once
 * @gs: the state
 *
 * Return: the number of refs released by this call
 */
uint32_t hv_gntshr_deferred_poll(struct hv_gntshr *gs);

/**
 * hv_gntshr_deferred_count() - refs still waiting to be released
 * @gs: the state
 *
 * Return: the count; a count that never drops means a backend that does not
 * unmap (Linux netfront calls that a broken backend)
 */
uint32_t hv_gntshr_deferred_count(const struct hv_gntshr *gs);

#endif /* PVNET_HV_GNTTAB_H */
