/* SPDX-License-Identifier: MIT */
/* hv_test.h - helpers for the hv tests: guest memfds and a frontend domain fixture */
#ifndef PVNET_TESTS_HV_TEST_H
#define PVNET_TESTS_HV_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hv/hv.h"

/*
 * make_memfd() - a guest memory memfd of @npages pages (@bytes if not 0),
 * with @seals added.  Returns the fd or -1.
 */
static inline int make_memfd(uint32_t npages, off_t bytes, int seals)
{
	int fd = memfd_create("hv-test-guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, bytes ? bytes : (off_t)npages * HV_PAGE_SIZE) < 0 ||
	    (seals && fcntl(fd, F_ADD_SEALS, seals) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

#define GUEST_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

/*
 * struct guest - a frontend domain as a test plays it: its memory and its
 * grant table mapped the way the frontend process would map them.
 */
struct guest {
	domid_t domid;
	uint32_t npages;
	uint8_t *mem;	      /* the guest's own view of its memory */
	grant_entry_v1_t *gt; /* the guest's own mapping of its grant table */
	size_t gt_size;
	struct hv_gntshr gs;
};

/* guest_create() - create a domain of @npages pages; 0 or -errno. */
static inline int guest_create(struct hv *hv, uint32_t npages, struct guest *g)
{
	int fd = make_memfd(npages, 0, GUEST_SEALS), gfd, rc;

	if (fd < 0)
		return -1;
	g->npages = npages;
	g->mem =
	    mmap(NULL, (size_t)npages * HV_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (g->mem == MAP_FAILED) {
		close(fd);
		return -1;
	}
	rc = hv_domain_create(hv, fd, npages, &g->domid);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	gfd = hv_domain_gnttab_fd(hv, g->domid);
	g->gt_size = (size_t)hv_domain_nr_grants(hv, g->domid) * sizeof(grant_entry_v1_t);
	g->gt = mmap(NULL, g->gt_size, PROT_READ | PROT_WRITE, MAP_SHARED, gfd, 0);
	if (g->gt == MAP_FAILED)
		return -1;
	return hv_gntshr_init(&g->gs, g->gt, (uint32_t)(g->gt_size / sizeof(grant_entry_v1_t)));
}

/* guest_unmap() - drop the test's own views (the domain may live on). */
static inline void guest_unmap(struct guest *g)
{
	hv_gntshr_fini(&g->gs);
	munmap(g->gt, g->gt_size);
	munmap(g->mem, (size_t)g->npages * HV_PAGE_SIZE);
}

/* guest_grant() - allocate a ref granting @frame to @to; returns the ref. */
static inline grant_ref_t guest_grant(struct guest *g, domid_t to, uint32_t frame, bool ro)
{
	grant_ref_t ref = 0;

	if (hv_gntshr_alloc_ref(&g->gs, &ref) < 0)
		abort();
	if (hv_gntshr_grant_access(&g->gs, ref, to, frame, ro) < 0)
		abort();
	return ref;
}

/* A one-op map of (@dom, @ref) with @flags; returns the status. */
static inline int16_t map1(struct hv_gnttab *gt, domid_t dom, grant_ref_t ref, uint32_t flags,
			   struct gnttab_map_grant_ref *op)
{
	*op = (struct gnttab_map_grant_ref){.flags = flags, .ref = ref, .dom = dom};
	if (hv_gnttab_map_grant_refs(gt, 1, op) != 0)
		abort();
	return op->status;
}

/* A one-op unmap of @handle; returns the status. */
static inline int16_t unmap1(struct hv_gnttab *gt, grant_handle_t handle)
{
	struct gnttab_unmap_grant_ref op = {.handle = handle};

	if (hv_gnttab_unmap_grant_refs(gt, 1, &op) != 0)
		abort();
	return op.status;
}

/* Current flags of a guest entry, read the way the guest reads them. */
static inline uint16_t gflags(const struct guest *g, grant_ref_t ref)
{
	return __atomic_load_n(&g->gt[ref].flags, __ATOMIC_ACQUIRE);
}

/* Send one datagram carrying @fd over @sock; 0 or -errno. */
static inline int send_fd(int sock, int fd)
{
	char one = 1;
	struct iovec iov = {.iov_base = &one, .iov_len = 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

#endif /* PVNET_TESTS_HV_TEST_H */
