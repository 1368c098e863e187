/* SPDX-License-Identifier: MIT */
/* hv.h - the emulated hypervisor: domains, their memory, statistics */
#ifndef PVNET_HV_HV_H
#define PVNET_HV_HV_H

/*
 * The hv layer stands in for Xen under netfront and netback.  It owns the
 * domains (a frontend's memory is a sealed memfd it handed to pvnetd), each
 * domain's version 1 grant table, and the event channels between domains.
 * The call names mirror libxengnttab / libxenevtchn so that a real-Xen
 * implementation can be dropped in behind the same interface:
 *
 *   hv.h      domains, configuration, statistics (this file)
 *   gnttab.h  grant map / unmap / copy (backend side) and gntshr (guest side)
 *   evtchn.h  event channels, plus the guest-process helper
 *
 * Domain 0 exists from hv_create() on: it is pvnetd itself, which has no
 * guest memory and works on plain pointers.
 */

#include <stdint.h>
#include <stdbool.h>
#include <xen/xen.h>
#include <xen/grant_table.h>
#include <xen/event_channel.h>

/* Xen's page size; grant frames and domain memory are counted in these. */
#define HV_PAGE_SHIFT 12
#define HV_PAGE_SIZE  (1U << HV_PAGE_SHIFT)

/*
 * Largest guest memory we accept: 1 GiB.  A netfront needs a few thousand
 * pages (rings plus 256 RX and 256 TX buffers per queue, 16 queues is about
 * 8k pages = 32 MiB), so 1 GiB is generous; the bound keeps a guest from
 * making pvnetd map (twice: read-write and read-only views) an arbitrary
 * amount of address space, and frame numbers fit in 18 bits.
 */
#define HV_MAX_DOMAIN_PAGES (1U << (30 - HV_PAGE_SHIFT))

struct hv;

/**
 * struct hv_config - limits of one emulated hypervisor
 * @max_domains: domain slots, dom0 included (ids of live domains are
 *	distinct modulo this number)
 * @gnttab_frames: grant table size per domain, in 4 KiB frames (512 v1
 *	entries each)
 * @max_evtchns: event channel ports of each guest domain, port 0 (reserved)
 *	included: a guest's own channels (charged to it until their last
 *	port closes) are at most max_evtchns - 1, what xl.cfg's
 *	max_event_channels counts
 * @dom0_evtchns: event channel ports of dom0, which binds guests' channels
 *	(a backend: one port per channel it serves), 0 for max_evtchns
 * @max_maptrack: grant mappings one hv_gnttab handle may hold at once
 * @max_channels: event channels open at once over all domains, 0 for no
 *	bound.  Each holds four fds (two signals, evtchn.c), so a process
 *	that must not run out of them because of what guests allocate sets
 *	this from its open-file limit
 */
struct hv_config {
	uint32_t max_domains;
	uint32_t gnttab_frames;
	uint32_t max_evtchns;
	uint32_t dom0_evtchns;
	uint32_t max_maptrack;
	uint32_t max_channels;
};

/* Most event channel ports a domain may have: Xen's FIFO ABI's 2^17. */
#define HV_CFG_MAX_EVTCHNS (1U << 17)

/* The fds one event channel holds in the hypervisor's process. */
#define HV_EVTCHN_CHANNEL_FDS 4

/**
 * struct hv_leak - what a domain still had in use when it was destroyed
 * @maps_in_use: mappings other domains still hold of its grants
 * @grants_active: grant entries that still carried a permit flag
 * @evtchns_open: event channel ports that were still open (now closed)
 */
struct hv_leak {
	uint32_t maps_in_use;
	uint32_t grants_active;
	uint32_t evtchns_open;
};

/**
 * struct hv_stats - hv-wide counters
 * @domains: live domains, dom0 included
 * @zombies: destroyed domains whose memory is still mapped by someone
 * @maps_in_use: live grant mappings, all domains
 * @evtchns_open: open event channel ports, all domains
 * @copy_ops: grant copy segments processed (cumulative)
 * @map_ops: grant map ops processed (cumulative)
 * @unmap_ops: grant unmap ops processed (cumulative)
 * @batches: grant map/unmap/copy calls (cumulative); ops per batch says how
 *	well the callers batch
 */
struct hv_stats {
	uint32_t domains;
	uint32_t zombies;
	uint64_t maps_in_use;
	uint32_t evtchns_open;
	uint64_t copy_ops;
	uint64_t map_ops;
	uint64_t unmap_ops;
	uint64_t batches;
};

/**
 * hv_config_default() - fill @cfg with the defaults
 * @cfg: the configuration to fill
 *
 * 64 domains (pvnetd plus a rack's worth of test guests), 32 grant frames
 * (16384 v1 entries, Xen's default for gnttab_max_frames is 64 but a
 * netfront with 16 queues of 256+256 slots needs 8192), 1024 ports (Xen's
 * 2-level ABI gives a 64-bit guest 4096; a vif needs 1..32), 16384
 * maptrack entries per handle (every TX slot of 16 queues mapped twice).
 */
void hv_config_default(struct hv_config *cfg);

/**
 * hv_create() - create an emulated hypervisor with domain 0 in it
 * @cfg: limits, or NULL for hv_config_default()
 *
 * Return: the hypervisor, or NULL with errno set (EINVAL for bad limits,
 * ENOMEM)
 */
struct hv *hv_create(const struct hv_config *cfg);

/**
 * hv_destroy() - tear everything down
 * @hv: the hypervisor, may be NULL
 *
 * Every domain, port and mapping goes, whatever its state.  The caller must
 * have stopped every thread using @hv and closed every hv_gnttab handle
 * (a handle's maptrack points into the domains freed here).
 */
void hv_destroy(struct hv *hv);

/**
 * hv_domain_create() - create a frontend domain on the memory it handed over
 * @hv: the hypervisor
 * @memfd: a memfd sealed with F_SEAL_SHRINK and F_SEAL_GROW, exactly
 *	@npages * 4096 bytes long
 * @npages: guest memory in pages, 1 .. HV_MAX_DOMAIN_PAGES
 * @domid: receives the new domain id (allocated from 1 upwards)
 *
 * hv takes ownership of @memfd on success only.  The seals matter: a guest
 * that could shrink its memfd would make pvnetd fault (SIGBUS) on a page it
 * had mapped.  The domain's grant table is created empty; see
 * hv_domain_gnttab_fd().
 *
 * Return: 0, -EINVAL (not a sealed memfd, wrong size, bad @npages), -ENOSPC
 * (no domain slot), -ENOMEM, or the -errno of a failed mmap/memfd call
 */
int hv_domain_create(struct hv *hv, int memfd, uint32_t npages, domid_t *domid);

/**
 * hv_domain_destroy() - destroy a domain, as "xl destroy" would
 * @hv: the hypervisor
 * @domid: a live domain other than 0
 * @leak: if not NULL, receives what was still in use
 *
 * Every port of the domain is closed (bound peers go back to unbound, as in
 * Xen's evtchn_close), further grant operations on its refs fail with
 * GNTST_bad_domain.  Memory other domains still map stays valid: the domain
 * is a zombie until the last unmap, which frees it.
 *
 * Return: 0, -ESRCH (no such live domain), -EPERM for domain 0
 */
int hv_domain_destroy(struct hv *hv, domid_t domid, struct hv_leak *leak);

/**
 * hv_domain_gnttab_fd() - the memfd holding a domain's grant table
 * @hv: the hypervisor
 * @domid: a live domain
 *
 * The control plane passes it to the frontend, which maps it read-write
 * and writes its grant entries there, as a Xen guest writes its own table.
 * The fd is borrowed: it stays owned by hv.  It is sealed against resizing.
 *
 * Return: the fd, or -ESRCH
 */
int hv_domain_gnttab_fd(struct hv *hv, domid_t domid);

/**
 * hv_domain_nr_grants() - number of v1 entries in a domain's grant table
 * @hv: the hypervisor
 * @domid: a live domain
 *
 * Return: the number of entries (0 for domain 0), or -ESRCH
 */
int hv_domain_nr_grants(struct hv *hv, domid_t domid);

/**
 * hv_stats() - read the hv-wide counters
 * @hv: the hypervisor
 * @st: receives the counters
 *
 * A consistent snapshot of the control-plane counts; the cumulative op
 * counters may be a batch behind concurrent workers.
 */
void hv_stats(struct hv *hv, struct hv_stats *st);

/*
 * Umbrella: "hv/hv.h" gives the whole layer.  Included last, so that they
 * see the declarations above whichever header a user includes first.
 */
#include "hv/gnttab.h"
#include "hv/evtchn.h"

#endif /* PVNET_HV_HV_H */
