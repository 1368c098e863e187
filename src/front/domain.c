// SPDX-License-Identifier: MIT
/* domain.c - libpvnet: a process becomes a guest domain of pvnetd */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pvnet/pvnet.h>

#include "common/ctlmsg.h"
#include "front/front.h"
#include "hv/hv.h"

/*
 * Theory of Operation
 *
 * A domain is three things held by this object: the control connection to
 * pvnetd (its life line: pvnetd destroys the domain when it closes), the
 * guest memory (a memfd sealed against resizing, so pvnetd's mapping of it
 * can never fault on truncation), and the grant table pvnetd created,
 * mapped here read-write because the guest writes its own entries, as on
 * Xen.  Grant references come from hv's guest-side allocator; event
 * channels are allocated by a control request and then used directly
 * through their signal sockets (hv/evtchn_guest.c).  Control requests are synchronous and serialised
 * by the caller (objects are not thread safe); notifying and consuming
 * events is.  Every request waits for its answer a bounded time
 * (PVNET_CTL_TIMEOUT_MS unless a vif's timeout_ms says otherwise): a
 * pvnetd that is stopped or stuck must not hang a guest that is shutting
 * down.  After a request timed out the connection is dead to us (a late
 * answer would be taken for the next request's), so later requests fail
 * at once with -EPIPE; closing it at destroy still ends the domain.
 *
 * Guest memory is handed out page by page to the vifs (free_frames, a
 * stack, so allocation is O(1) and no page is given twice).  A page the
 * backend still had mapped when its grant was ended is "abandoned": its
 * ref waits on hv_gntshr's deferred list and the page never returns to the
 * stack (XSA-396: a backend could still read or write it).  Applications
 * granting pages themselves with pvnet_grant_access() should use pages the
 * vifs do not: vifs take pages from the top of memory down.
 */

/* How long pvnetd may take to answer a domain-level request. */
#define PVNET_CTL_TIMEOUT_MS 5000

struct pvnet_domain {
	int ctl;
	bool ctl_dead; /* a request timed out: the connection is out of step */
	uint16_t domid;
	uint32_t pages;
	void *mem;
	int gnttab_fd;
	void *gnttab;
	size_t gnttab_size;
	struct hv_gntshr gs;
	uint32_t *free_frames;
	uint32_t nr_free_frames;
	uint32_t abandoned;
	char store_path[PATH_MAX];
	char vif_error[256]; /* the backend's reason for the last failed pvnet_vif_create() */
};

/* Largest guest memory: enough for many queues of 64 KiB frames, small enough to map at once. */
#define PVNET_DOMAIN_MAX_PAGES (1u << 18) /* 1 GiB */

/*
 * One request with @fds, and its reply with the descriptors it carries
 * (@rfds, CTLMSG_MAX_FDS slots, *@nrfds set; NULL closes any), waiting at
 * most @timeout_ms for the answer.  As ctlmsg_call(): the reply is set on
 * an error reply too, and descriptors received are the caller's to close.
 */
static int domain_call(struct pvnet_domain *d, const json_t *req, const int *fds, unsigned int nfds,
		       json_t **reply, int *rfds, unsigned int *nrfds, int timeout_ms)
{
	struct pollfd p = {.fd = d->ctl, .events = POLLIN};
	unsigned int dummy = 0;
	json_t *e;
	int rc;

	*reply = NULL;
	if (!nrfds)
		nrfds = &dummy;
	*nrfds = 0;
	if (d->ctl_dead)
		return -EPIPE;
	rc = ctlmsg_send(d->ctl, req, fds, nfds);
	if (rc < 0 && !ctlmsg_send_refused(rc))
		return rc;
	do
		rc = poll(&p, 1, timeout_ms);
	while (rc < 0 && errno == EINTR);
	if (rc == 0) {
		d->ctl_dead = true;
		return -ETIMEDOUT;
	}
	if (rc < 0)
		return -errno;
	rc = ctlmsg_recv_reply(d->ctl, reply, rfds, nrfds);
	if (rc < 0)
		return rc;
	if (json_object_get(*reply, "error")) {
		e = json_object_get(*reply, "errno");
		rc = json_is_integer(e) ? (int)json_integer_value(e) : EIO;
		return rc > 0 ? -rc : -EIO;
	}
	return 0;
}

static int make_memory(uint32_t pages, void **mem)
{
	size_t size = (size_t)pages * PVNET_PAGE_SIZE;
	int fd;

	fd = memfd_create("pvnet-guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto fail;
	*mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*mem == MAP_FAILED)
		goto fail;
	return fd;
fail:;
	int e = errno;

	close(fd);
	return -e;
}

int pvnet_domain_create(const char *run_dir, uint32_t pages, struct pvnet_domain **out)
{
	json_t *req = NULL, *reply = NULL;
	int rfds[CTLMSG_MAX_FDS];
	unsigned int nrfds = 0;
	struct pvnet_domain *d;
	const char *store;
	struct stat st;
	int memfd, rc;

	*out = NULL;
	if (!pages || pages > PVNET_DOMAIN_MAX_PAGES)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->gnttab_fd = -1;
	d->pages = pages;
	d->free_frames = malloc(sizeof(*d->free_frames) * pages);
	if (!d->free_frames) {
		rc = -ENOMEM;
		goto free_dom;
	}
	/* Popped from the end: vifs take the highest frames first. */
	for (uint32_t i = 0; i < pages; i++)
		d->free_frames[i] = i;
	d->nr_free_frames = pages;
	d->ctl = ctlmsg_connect(run_dir ? run_dir : PVNET_RUN_DIR_DEFAULT);
	if (d->ctl < 0) {
		rc = d->ctl;
		goto free_dom;
	}
	memfd = make_memory(pages, &d->mem);
	if (memfd < 0) {
		rc = memfd;
		goto close_ctl;
	}
	req = json_pack("{s:s, s:I}", "op", "domain-create", "pages", (json_int_t)pages);
	rc = req ? domain_call(d, req, &memfd, 1, &reply, rfds, &nrfds, PVNET_CTL_TIMEOUT_MS)
		 : -ENOMEM;
	close(memfd);
	if (rc < 0)
		goto close_rfds;
	store = json_string_value(json_object_get(reply, "store"));
	if (nrfds != 1 || !store || !json_is_integer(json_object_get(reply, "domid"))) {
		rc = -EPROTO;
		goto close_rfds;
	}
	d->domid = (uint16_t)json_integer_value(json_object_get(reply, "domid"));
	snprintf(d->store_path, sizeof(d->store_path), "%s", store);
	d->gnttab_fd = rfds[0];
	nrfds = 0;
	if (fstat(d->gnttab_fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)PVNET_PAGE_SIZE) {
		rc = -EPROTO;
		goto close_rfds;
	}
	d->gnttab_size = (size_t)st.st_size;
	d->gnttab = mmap(NULL, d->gnttab_size, PROT_READ | PROT_WRITE, MAP_SHARED, d->gnttab_fd, 0);
	if (d->gnttab == MAP_FAILED) {
		d->gnttab = NULL;
		rc = -errno;
		goto close_rfds;
	}
	rc = hv_gntshr_init(&d->gs, d->gnttab,
			    (uint32_t)(d->gnttab_size / sizeof(grant_entry_v1_t)));
	if (rc < 0)
		goto close_rfds;
	json_decref(req);
	json_decref(reply);
	*out = d;
	return 0;

close_rfds:
	while (nrfds)
		close(rfds[--nrfds]);
	json_decref(req);
	json_decref(reply);
	pvnet_domain_destroy(d);
	return rc;
close_ctl:
	close(d->ctl);
free_dom:
	free(d->free_frames);
	free(d);
	return rc;
}

void pvnet_domain_destroy(struct pvnet_domain *d)
{
	if (!d)
		return;
	/* Closing the control connection is what destroys the domain in pvnetd. */
	close(d->ctl);
	hv_gntshr_fini(&d->gs);
	if (d->gnttab)
		munmap(d->gnttab, d->gnttab_size);
	if (d->gnttab_fd >= 0)
		close(d->gnttab_fd);
	if (d->mem)
		munmap(d->mem, (size_t)d->pages * PVNET_PAGE_SIZE);
	free(d->free_frames);
	free(d);
}

uint16_t pvnet_domain_id(const struct pvnet_domain *d)
{
	return d->domid;
}

uint32_t pvnet_domain_pages(const struct pvnet_domain *d)
{
	return d->pages;
}

void *pvnet_domain_page(struct pvnet_domain *d, uint32_t frame)
{
	if (frame >= d->pages)
		return NULL;
	return (char *)d->mem + (size_t)frame * PVNET_PAGE_SIZE;
}

const char *pvnet_domain_store_path(const struct pvnet_domain *d)
{
	return d->store_path;
}

int pvnet_grant_access(struct pvnet_domain *d, uint16_t remote, uint32_t frame, bool readonly,
		       uint32_t *ref)
{
	grant_ref_t r;
	int rc;

	if (frame >= d->pages)
		return -EINVAL;
	rc = hv_gntshr_alloc_ref(&d->gs, &r);
	if (rc < 0)
		return rc;
	rc = hv_gntshr_grant_access(&d->gs, r, remote, frame, readonly);
	if (rc < 0) {
		hv_gntshr_free_ref(&d->gs, r);
		return rc;
	}
	*ref = r;
	return 0;
}

int pvnet_grant_end(struct pvnet_domain *d, uint32_t ref)
{
	int rc = hv_gntshr_end_access(&d->gs, ref);

	if (rc < 0)
		return rc;
	hv_gntshr_free_ref(&d->gs, ref);
	return 0;
}

int pvnet_domain_set_name(struct pvnet_domain *d, const char *name)
{
	json_t *req, *reply = NULL;
	int rc;

	if (!name)
		return -EINVAL;
	req = json_pack("{s:s, s:s}", "op", "domain-name", "name", name);
	if (!req)
		return -EINVAL; /* not UTF-8 */
	rc = domain_call(d, req, NULL, 0, &reply, NULL, NULL, PVNET_CTL_TIMEOUT_MS);
	json_decref(req);
	json_decref(reply);
	return rc;
}

int pvnet_evtchn_alloc(struct pvnet_domain *d, uint16_t remote, struct pvnet_evtchn *ch)
{
	json_t *req, *reply = NULL;
	int rfds[CTLMSG_MAX_FDS];
	unsigned int nrfds = 0;
	json_t *port;
	int rc;

	req = json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", remote);
	if (!req)
		return -ENOMEM;
	rc = domain_call(d, req, NULL, 0, &reply, rfds, &nrfds, PVNET_CTL_TIMEOUT_MS);
	json_decref(req);
	port = json_object_get(reply, "port");
	if (rc == 0 && (nrfds != 3 || !json_is_integer(port)))
		rc = -EPROTO;
	if (rc < 0) {
		while (nrfds)
			close(rfds[--nrfds]);
		json_decref(reply);
		return rc;
	}
	ch->port = (uint32_t)json_integer_value(port);
	ch->fd = rfds[0];
	ch->kick_fd = rfds[1];
	ch->self_fd = rfds[2];
	json_decref(reply);
	return 0;
}

int pvnet_evtchn_notify(const struct pvnet_evtchn *ch)
{
	struct hv_evtchn_guest g = {.port = ch->port, .wait_fd = ch->fd, .kick_fd = ch->kick_fd};

	return hv_evtchn_guest_notify(&g);
}

int front_evtchn_self_kick(const struct pvnet_evtchn *ch)
{
	struct hv_evtchn_guest g = {.port = ch->port, .self_fd = ch->self_fd};

	return hv_evtchn_guest_self_kick(&g);
}

int pvnet_evtchn_pending(const struct pvnet_evtchn *ch)
{
	struct hv_evtchn_guest g = {.port = ch->port, .wait_fd = ch->fd, .kick_fd = ch->kick_fd};

	return hv_evtchn_guest_pending(&g);
}

int pvnet_evtchn_close(struct pvnet_domain *d, struct pvnet_evtchn *ch)
{
	json_t *req, *reply = NULL;
	int rc;

	req = json_pack("{s:s, s:I}", "op", "evtchn-close", "port", (json_int_t)ch->port);
	if (!req)
		return -ENOMEM;
	rc = domain_call(d, req, NULL, 0, &reply, NULL, NULL, PVNET_CTL_TIMEOUT_MS);
	json_decref(req);
	json_decref(reply);
	close(ch->fd);
	close(ch->kick_fd);
	close(ch->self_fd);
	ch->fd = ch->kick_fd = ch->self_fd = -1;
	return rc;
}

uint32_t pvnet_domain_abandoned_pages(const struct pvnet_domain *d)
{
	return d->abandoned;
}

/**
 * front_domain_set_vif_error() - record why a pvnet_vif_create() failed, as its backend said
 * @d: the domain
 * @why: the backend's reason (already made printable), "" for none
 */
void front_domain_set_vif_error(struct pvnet_domain *d, const char *why)
{
	snprintf(d->vif_error, sizeof(d->vif_error), "%s", why);
}

const char *pvnet_domain_vif_error(const struct pvnet_domain *d)
{
	return d->vif_error[0] ? d->vif_error : NULL;
}

/**
 * front_domain_page_alloc() - take one page of guest memory for a vif
 * @d: the domain
 * @frame: receives the page number
 *
 * Return: 0, or -ENOMEM when every page is taken
 */
int front_domain_page_alloc(struct pvnet_domain *d, uint32_t *frame)
{
	if (!d->nr_free_frames)
		return -ENOMEM;
	*frame = d->free_frames[--d->nr_free_frames];
	return 0;
}

/**
 * front_domain_page_free() - give a page back
 * @d: the domain
 * @frame: a page from front_domain_page_alloc() that nobody can access any more
 */
void front_domain_page_free(struct pvnet_domain *d, uint32_t frame)
{
	d->free_frames[d->nr_free_frames++] = frame;
}

/**
 * front_domain_grant_page() - take a page, zero it and grant it to @remote
 * @d: the domain
 * @remote: the backend's domid
 * @readonly: grant read access only
 * @frame: receives the page number
 * @ref: receives the grant reference
 *
 * The page is zeroed so that no stale data of ours is ever shown to the
 * backend (the XSA-403 concern: only what we put there is visible).
 *
 * Return: 0, -ENOMEM (no page) or -ENOSPC (no grant reference)
 */
int front_domain_grant_page(struct pvnet_domain *d, uint16_t remote, bool readonly, uint32_t *frame,
			    grant_ref_t *ref)
{
	uint32_t r;
	int rc = front_domain_page_alloc(d, frame);

	if (rc < 0)
		return rc;
	memset(pvnet_domain_page(d, *frame), 0, PVNET_PAGE_SIZE);
	rc = pvnet_grant_access(d, remote, *frame, readonly, &r);
	if (rc < 0) {
		front_domain_page_free(d, *frame);
		return rc;
	}
	*ref = r;
	return 0;
}

/**
 * front_domain_ungrant_page() - end a grant; reuse the page only if the backend let go
 * @d: the domain
 * @frame: the page
 * @ref: its grant
 *
 * Like Linux's gnttab_end_foreign_access(): a grant still in use is left
 * on hv_gntshr's deferred list and the page is abandoned, never reused.
 */
void front_domain_ungrant_page(struct pvnet_domain *d, uint32_t frame, grant_ref_t ref)
{
	int rc = hv_gntshr_end_access_deferred(&d->gs, ref);

	if (rc == 0)
		front_domain_page_free(d, frame);
	else if (rc == 1)
		d->abandoned++;
	/* -EINVAL: not our ref; the page is in an unknown state, so abandon it too. */
	else
		d->abandoned++;
}

/**
 * front_domain_gntshr() - the domain's grant table state
 * @d: the domain
 *
 * Return: the state (tests read entries through it)
 */
struct hv_gntshr *front_domain_gntshr(struct pvnet_domain *d)
{
	return &d->gs;
}

/**
 * front_domain_call() - one control request on the domain's connection, bounded in time
 * @d: the domain
 * @req: the request
 * @reply: set to the reply (caller json_decref()s it), also for error replies
 * @timeout_ms: how long pvnetd may take to answer
 *
 * Return: 0, -errno from pvnetd's error reply, -ETIMEDOUT, -EPIPE (an
 * earlier request timed out), or -errno
 */
int front_domain_call(struct pvnet_domain *d, const json_t *req, json_t **reply, int timeout_ms)
{
	return domain_call(d, req, NULL, 0, reply, NULL, NULL, timeout_ms);
}
