// SPDX-License-Identifier: MIT
// domain.c - domain registry: guest memory, grant table memory, life cycle

/*
 * Theory of Operation
 *
 * State.  struct hv holds max_domains slots (hv_internal.h).  Slot 0 is
 * domain 0, pvnetd itself, live from hv_create() to hv_destroy(), with no
 * memory and no grant table.  A frontend domain owns:
 *   - its memory: the sealed memfd it handed over, mapped twice by hv, once
 *     read-write and once read-only (read-only grants are served from the
 *     read-only view, so a backend bug that writes faults here instead of
 *     corrupting the guest);
 *   - its grant table: a memfd hv creates, maps read-write and lends to
 *     the frontend (hv_domain_gnttab_fd()), plus hv-private active entries;
 *   - its event channel ports (evtchn.c).
 *
 * Life cycle.  FREE -> LIVE (hv_domain_create) -> DYING (hv_domain_destroy)
 * -> FREE when the last reference goes.  References: 1 for the registry
 * while LIVE, 1 per grant mapping, 1 per grant batch in progress.  Batches
 * take theirs lock-free (hv_domain_get), so the grant fast path never takes
 * hv->lock.  A DYING domain is a Xen zombie: new grant operations on it fail
 * with GNTST_bad_domain, existing mappings stay valid, and the memory is
 * unmapped by whoever drops the last reference (normally the last unmap).
 *
 * Threads.  Create, destroy and stats run on the control thread and take
 * hv->lock; the last put may run on a worker and takes it too, to free.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/log.h"
#include "hv/hv_internal.h"

/*
 * Upper bounds on the configuration, so that a typo cannot make hv_create()
 * allocate gigabytes: Xen's own hard limits are of this order
 * (gnttab_max_frames 1024 with v1, 2^17 FIFO event channels).
 */
#define HV_CFG_MAX_GNTTAB_FRAMES 1024U
#define HV_CFG_MAX_MAPTRACK	 (1U << 20)

/* Grant v1 entries in one 4 KiB grant frame. */
#define HV_GRANTS_PER_FRAME (HV_PAGE_SIZE / sizeof(grant_entry_v1_t))

void hv_config_default(struct hv_config *cfg)
{
	cfg->max_domains = 64;
	cfg->gnttab_frames = 32;
	cfg->max_evtchns = 1024;
	cfg->dom0_evtchns = 0;
	cfg->max_maptrack = 16384;
	cfg->max_channels = 0;
}

static bool hv_config_is_valid(const struct hv_config *cfg)
{
	/* Dom0 plus at least one guest; ids must stay below DOMID_FIRST_RESERVED. */
	if (cfg->max_domains < 2 || cfg->max_domains >= DOMID_FIRST_RESERVED)
		return false;
	if (cfg->gnttab_frames < 1 || cfg->gnttab_frames > HV_CFG_MAX_GNTTAB_FRAMES)
		return false;
	/* Port 0 is reserved, so at least one more. */
	if (cfg->max_evtchns < 2 || cfg->max_evtchns > HV_CFG_MAX_EVTCHNS)
		return false;
	if (cfg->dom0_evtchns == 1 || cfg->dom0_evtchns > HV_CFG_MAX_EVTCHNS)
		return false;
	return cfg->max_maptrack >= 1 && cfg->max_maptrack <= HV_CFG_MAX_MAPTRACK;
}

static void hv_slot_reset(struct hv_domain *d)
{
	d->memfd = -1;
	d->gnttab_fd = -1;
	d->npages = 0;
	d->nr_grants = 0;
	d->mem_rw = NULL;
	d->mem_ro = NULL;
	d->gnttab = NULL;
	d->active = NULL;
	d->pin_locks = NULL;
	atomic_store(&d->maps, 0);
}

struct hv *hv_create(const struct hv_config *cfg)
{
	struct hv_config def;
	struct hv *hv;
	struct hv_domain *dom0;

	if (!cfg) {
		hv_config_default(&def);
		cfg = &def;
	}
	if (!hv_config_is_valid(cfg)) {
		errno = EINVAL;
		return NULL;
	}
	hv = calloc(1, sizeof(*hv));
	if (!hv)
		return NULL;
	hv->cfg = *cfg;
	hv->doms = calloc(cfg->max_domains, sizeof(*hv->doms));
	if (!hv->doms)
		goto free_hv;
	for (uint32_t i = 0; i < cfg->max_domains; i++)
		hv_slot_reset(&hv->doms[i]);
	if (pthread_mutex_init(&hv->lock, NULL) != 0)
		goto free_doms;

	dom0 = &hv->doms[0];
	if (hv_evtchn_domain_init(hv, dom0) < 0)
		goto destroy_lock;
	atomic_store(&dom0->domid, 0);
	atomic_store(&dom0->refs, 1);
	atomic_store(&dom0->state, HV_DOM_LIVE);
	hv->nr_live = 1;
	hv->next_domid = 1;
	return hv;

destroy_lock:
	pthread_mutex_destroy(&hv->lock);
free_doms:
	free(hv->doms);
free_hv:
	free(hv);
	errno = ENOMEM;
	return NULL;
}

/* Unmap and close everything a domain slot holds (not its ports array). */
static void hv_domain_release_memory(struct hv *hv, struct hv_domain *d)
{
	if (d->mem_rw)
		munmap(d->mem_rw, (size_t)d->npages * HV_PAGE_SIZE);
	if (d->mem_ro)
		munmap((void *)d->mem_ro, (size_t)d->npages * HV_PAGE_SIZE);
	if (d->gnttab)
		munmap(d->gnttab, (size_t)hv->cfg.gnttab_frames * HV_PAGE_SIZE);
	if (d->memfd >= 0)
		close(d->memfd);
	if (d->gnttab_fd >= 0)
		close(d->gnttab_fd);
	free(d->active);
	free(d->pin_locks);
	hv_slot_reset(d);
}

void hv_destroy(struct hv *hv)
{
	if (!hv)
		return;
	pthread_mutex_lock(&hv->lock);
	for (uint32_t i = 0; i < hv->cfg.max_domains; i++) {
		struct hv_domain *d = &hv->doms[i];

		if (atomic_load(&d->state) != HV_DOM_FREE)
			hv_evtchn_domain_close_all(hv, d);
	}
	for (uint32_t i = 0; i < hv->cfg.max_domains; i++) {
		struct hv_domain *d = &hv->doms[i];

		hv_domain_release_memory(hv, d);
		free(d->ports);
	}
	pthread_mutex_unlock(&hv->lock);
	pthread_mutex_destroy(&hv->lock);
	free(hv->doms);
	free(hv);
}

/*
 * Check that @memfd is a memfd that cannot change size and has @npages.
 * Not a hugetlbfs one: the guest may punch holes in its memory at any time
 * (the seals allow it), and a hugetlbfs page punched out and faulted in
 * again by us needs a free huge page; with none left, our access is a
 * SIGBUS.  A shmem page just comes back zeroed.
 */
static int hv_memfd_check(int memfd, uint32_t npages)
{
	const int need = F_SEAL_SHRINK | F_SEAL_GROW;
	struct statfs sfs;
	struct stat st;
	int seals;

	seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0) /* EINVAL: not a memfd (or not created with sealing) */
		return -EINVAL;
	if ((seals & need) != need)
		return -EINVAL;
	if (fstat(memfd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size != (off_t)npages * HV_PAGE_SIZE)
		return -EINVAL;
	if (fstatfs(memfd, &sfs) < 0)
		return -errno;
	if (sfs.f_type == HUGETLBFS_MAGIC)
		return -EINVAL;
	return 0;
}

/* Create, size, seal and map the grant table of a new domain. */
static int hv_gnttab_table_create(struct hv *hv, struct hv_domain *d)
{
	size_t size = (size_t)hv->cfg.gnttab_frames * HV_PAGE_SIZE;
	int fd, rc;
	void *p;

	fd = memfd_create("pvnet-gnttab", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail_errno;
	/* The frontend maps it too: it must not be able to shrink it under us. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail_errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail_errno;
	d->active = calloc(size / sizeof(grant_entry_v1_t), sizeof(*d->active));
	_Static_assert(HV_GRANTS_PER_FRAME % HV_PIN_BLOCK == 0, "whole blocks per frame");
	d->pin_locks =
	    calloc(size / sizeof(grant_entry_v1_t) / HV_PIN_BLOCK, sizeof(*d->pin_locks));
	if (!d->active || !d->pin_locks) {
		free(d->active);
		free(d->pin_locks);
		d->active = NULL;
		d->pin_locks = NULL;
		munmap(p, size);
		close(fd);
		return -ENOMEM;
	}
	d->gnttab = p;
	d->gnttab_fd = fd;
	d->nr_grants = hv->cfg.gnttab_frames * HV_GRANTS_PER_FRAME;
	return 0;

fail_errno:
	rc = -errno;
	close(fd);
	return rc;
}

/* Next free domain id whose slot is free (hv->lock held), or 0 if none. */
static domid_t hv_domid_alloc(struct hv *hv)
{
	uint32_t max = hv->cfg.max_domains;

	if (hv->nr_live + hv->nr_zombies >= max)
		return 0;
	/*
	 * Consecutive ids land in consecutive slots, so two laps over the slots
	 * (one may be cut short by the wrap at DOMID_FIRST_RESERVED) find the
	 * free one.  Ids that map to slot 0 belong to dom0's slot: skipped.
	 */
	for (uint32_t i = 0; i < 2 * max + 2; i++) {
		uint32_t cand = hv->next_domid;

		hv->next_domid = cand + 1 >= DOMID_FIRST_RESERVED ? 1 : cand + 1;
		if (cand % max == 0)
			continue;
		if (atomic_load(&hv->doms[cand % max].state) == HV_DOM_FREE)
			return (domid_t)cand;
	}
	return 0;
}

int hv_domain_create(struct hv *hv, int memfd, uint32_t npages, domid_t *domid)
{
	struct hv_domain tmp, *d;
	size_t size;
	domid_t id;
	int rc;

	if (!hv || !domid || memfd < 0 || npages == 0 || npages > HV_MAX_DOMAIN_PAGES)
		return -EINVAL;
	rc = hv_memfd_check(memfd, npages);
	if (rc < 0)
		return rc;

	memset(&tmp, 0, sizeof(tmp));
	hv_slot_reset(&tmp);
	size = (size_t)npages * HV_PAGE_SIZE;
	tmp.npages = npages;
	tmp.mem_rw = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (tmp.mem_rw == MAP_FAILED) {
		tmp.mem_rw = NULL;
		return -errno;
	}
	tmp.mem_ro = mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
	if (tmp.mem_ro == MAP_FAILED) {
		rc = -errno;
		goto unmap_rw;
	}
	rc = hv_gnttab_table_create(hv, &tmp);
	if (rc < 0)
		goto unmap_ro;

	pthread_mutex_lock(&hv->lock);
	id = hv_domid_alloc(hv);
	if (id == 0) {
		rc = -ENOSPC;
		goto unlock;
	}
	d = hv_slot(hv, id);
	rc = hv_evtchn_domain_init(hv, d);
	if (rc < 0)
		goto unlock;
	d->memfd = memfd;
	d->npages = npages;
	d->mem_rw = tmp.mem_rw;
	d->mem_ro = tmp.mem_ro;
	d->gnttab_fd = tmp.gnttab_fd;
	d->gnttab = tmp.gnttab;
	d->nr_grants = tmp.nr_grants;
	d->active = tmp.active;
	d->pin_locks = tmp.pin_locks;
	atomic_store(&d->maps, 0);
	atomic_store(&d->domid, id);
	atomic_store(&d->refs, 1);
	/* Publishes everything above to the lock-free lookups. */
	atomic_store_explicit(&d->state, HV_DOM_LIVE, memory_order_release);
	hv->nr_live++;
	pthread_mutex_unlock(&hv->lock);
	*domid = id;
	debug("hv: domain %u created, %u pages", id, npages);
	return 0;

unlock:
	pthread_mutex_unlock(&hv->lock);
	/* tmp.memfd is -1: the caller keeps @memfd on failure. */
	munmap(tmp.gnttab, (size_t)hv->cfg.gnttab_frames * HV_PAGE_SIZE);
	close(tmp.gnttab_fd);
	free(tmp.active);
	free(tmp.pin_locks);
unmap_ro:
	munmap((void *)tmp.mem_ro, size);
unmap_rw:
	munmap(tmp.mem_rw, size);
	return rc;
}

struct hv_domain *hv_domain_get(struct hv *hv, domid_t domid)
{
	struct hv_domain *d = hv_slot(hv, domid);
	uint32_t r = atomic_load(&d->refs);

	/* Never resurrect a slot whose last reference is gone (being freed). */
	do {
		if (r == 0)
			return NULL;
	} while (!atomic_compare_exchange_weak(&d->refs, &r, r + 1));
	/* The slot may have been reused meanwhile: check what we pinned. */
	if (atomic_load(&d->state) != HV_DOM_LIVE || atomic_load(&d->domid) != domid) {
		hv_domain_put(hv, d);
		return NULL;
	}
	return d;
}

void hv_domain_put(struct hv *hv, struct hv_domain *d)
{
	hv_domain_put_n(hv, d, 1);
}

void hv_domain_put_n(struct hv *hv, struct hv_domain *d, uint32_t n)
{
	if (atomic_fetch_sub(&d->refs, n) != n)
		return;
	/* Last reference: only a destroyed domain can get here. */
	pthread_mutex_lock(&hv->lock);
	debug("hv: domain %u freed", atomic_load(&d->domid));
	hv_domain_release_memory(hv, d);
	if (atomic_load(&d->state) == HV_DOM_DYING)
		hv->nr_zombies--;
	atomic_store(&d->state, HV_DOM_FREE);
	pthread_mutex_unlock(&hv->lock);
}

struct hv_domain *hv_domain_lookup_live(struct hv *hv, domid_t domid)
{
	struct hv_domain *d = hv_slot(hv, domid);

	if (atomic_load_explicit(&d->state, memory_order_acquire) != HV_DOM_LIVE)
		return NULL;
	if (atomic_load_explicit(&d->domid, memory_order_relaxed) != domid)
		return NULL;
	return d;
}

int hv_domain_destroy(struct hv *hv, domid_t domid, struct hv_leak *leak)
{
	struct hv_leak lk = {0};
	struct hv_domain *d;

	if (domid == 0)
		return -EPERM;
	pthread_mutex_lock(&hv->lock);
	d = hv_domain_lookup_live(hv, domid);
	if (!d) {
		pthread_mutex_unlock(&hv->lock);
		return -ESRCH;
	}
	/* From here on hv_domain_get() refuses it: new ops get GNTST_bad_domain. */
	atomic_store(&d->state, HV_DOM_DYING);
	hv->nr_live--;
	hv->nr_zombies++;
	lk.evtchns_open = hv_evtchn_domain_close_all(hv, d);
	for (uint32_t ref = 0; ref < d->nr_grants; ref++) {
		uint16_t flags = __atomic_load_n(&d->gnttab[ref].flags, __ATOMIC_RELAXED);

		if ((flags & GTF_type_mask) != GTF_invalid)
			lk.grants_active++;
	}
	lk.maps_in_use = atomic_load(&d->maps);
	pthread_mutex_unlock(&hv->lock);

	if (lk.maps_in_use || lk.grants_active || lk.evtchns_open)
		info("hv: domain %u destroyed with %u mappings, %u grants, %u ports in use", domid,
		     lk.maps_in_use, lk.grants_active, lk.evtchns_open);
	if (leak)
		*leak = lk;
	hv_domain_put(hv, d); /* the registry's reference */
	return 0;
}

int hv_domain_gnttab_fd(struct hv *hv, domid_t domid)
{
	struct hv_domain *d = hv_domain_lookup_live(hv, domid);

	if (!d || d->gnttab_fd < 0)
		return -ESRCH;
	return d->gnttab_fd;
}

int hv_domain_nr_grants(struct hv *hv, domid_t domid)
{
	struct hv_domain *d = hv_domain_lookup_live(hv, domid);

	if (!d)
		return -ESRCH;
	return (int)d->nr_grants;
}

void hv_stats(struct hv *hv, struct hv_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&hv->lock);
	st->domains = hv->nr_live;
	st->zombies = hv->nr_zombies;
	st->evtchns_open = hv->nr_ports_open;
	pthread_mutex_unlock(&hv->lock);
	st->maps_in_use = atomic_load(&hv->maps_in_use);
	st->copy_ops = atomic_load(&hv->copy_ops);
	st->map_ops = atomic_load(&hv->map_ops);
	st->unmap_ops = atomic_load(&hv->unmap_ops);
	st->batches = atomic_load(&hv->batches);
}
