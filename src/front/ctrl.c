// SPDX-License-Identifier: MIT
/* ctrl.c - netfront's control ring: Toeplitz algorithm, flags, key and mapping table */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "front/front.h"

/*
 * Theory of Operation
 *
 * When the application asks for it (cfg.ctrl_ring) and the backend offers
 * feature-ctrl-ring, connect sets up, before the keys are written:
 *
 *   ring page   rw   a xen_netif_ctrl ring (SHARED_RING_INIT); requests
 *                    and req_prod/rsp_event are ours, responses and
 *                    rsp_prod/req_event the backend's
 *   data page   ro   the key or mapping table of the request in progress
 *   channel          event-channel-ctrl, both directions
 *
 * and writes ctrl-ring-ref and event-channel-ctrl in the same transaction
 * as the queues' keys (netif.h, "Control ring").  Both pages stay granted until the
 * vif is torn down, like every other page of the vif.
 *
 * Calls are synchronous: each pushes one request with the notify check,
 * then awaits its response (poll on the channel, bounded by timeout_ms;
 * rsp_event re-armed before each sleep).  A call that gives up
 * (-ETIMEDOUT) leaves its request on the ring, so several may be
 * unanswered, and netif.h lets the backend answer them in any order
 * ("there is no requirement that responses are issued in the same order
 * as requests").  Responses are therefore matched by id:
 *
 *   pending[id % ring size]   one entry per unanswered request; a new
 *                             request takes an id whose entry is free
 *                             (one is: the ring is not full)
 *   answer to the call        returned to it
 *   answer to an abandoned    consumed and dropped, by whichever call
 *   request                   finds it first; its entry is freed
 *   id not pending            never asked for, or answered twice: the
 *                             backend is broken (so is a response
 *                             producer beyond our requests)
 *
 * Each response is copied once and only the copy is used.
 *
 * The data page: netif.h says the grant a SET_HASH_KEY or SET_HASH_MAPPING
 * names "must remain valid until the response has been processed", and
 * the backend reads the page when it processes the request, which may be
 * after the call gave up.  So while a request naming the page is
 * unanswered (page_busy) nothing writes it again: the calls that would
 * (pvnet_vif_ctrl_page_ref() and the key and mapping calls built on it, a
 * raw pvnet_vif_ctrl() naming the page) return -EBUSY until its answer
 * is taken.
 *
 * These are control calls: the caller serialises them (steer.h).
 */

/* The status codes of the control ring as errno values. */
static int status2errno(uint32_t st)
{
	switch (st) {
	case XEN_NETIF_CTRL_STATUS_SUCCESS:
		return 0;
	case XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW:
		return -ENOSPC;
	default:
		return -EINVAL;
	}
}

/* Ids wrap at 65536; the table must index them the same way across the wrap. */
_Static_assert(65536 % FRONT_CTRL_RING_SIZE == 0, "ctrl ring size divides the id space");

_Static_assert(PVNET_HASH_ALG_TOEPLITZ == XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ &&
		   PVNET_HASH_IPV4 == XEN_NETIF_CTRL_HASH_TYPE_IPV4 &&
		   PVNET_HASH_IPV4_TCP == XEN_NETIF_CTRL_HASH_TYPE_IPV4_TCP &&
		   PVNET_HASH_IPV6 == XEN_NETIF_CTRL_HASH_TYPE_IPV6 &&
		   PVNET_HASH_IPV6_TCP == XEN_NETIF_CTRL_HASH_TYPE_IPV6_TCP,
	       "hash constants are Xen's");

/**
 * front_ctrl_setup() - grant the ring and data pages, allocate the channel
 * @vif: the vif (control thread), before the keys are written
 *
 * On failure the state is left for front_ctrl_teardown().
 *
 * Return: 0, -ENOMEM, -ENOSPC or -errno
 */
int front_ctrl_setup(struct pvnet_vif *vif)
{
	struct front_ctrl *c = &vif->ctrl;
	xen_netif_ctrl_sring_t *s;
	int rc;

	memset(c, 0, sizeof(*c));
	rc =
	    front_domain_grant_page(vif->dom, vif->backend_id, false, &c->ring_frame, &c->ring_ref);
	if (rc < 0)
		return rc;
	c->ring_granted = true;
	s = pvnet_domain_page(vif->dom, c->ring_frame);
	SHARED_RING_INIT(s);
	FRONT_RING_INIT(&c->ring, s, PVNET_PAGE_SIZE);
	rc = front_domain_grant_page(vif->dom, vif->backend_id, true, &c->data_frame, &c->data_ref);
	if (rc < 0)
		return rc;
	c->data_granted = true;
	rc = pvnet_evtchn_alloc(vif->dom, vif->backend_id, &c->ev);
	if (rc < 0)
		return rc;
	c->active = true;
	return 0;
}

/**
 * front_ctrl_teardown() - close the channel and end both grants (idempotent)
 * @vif: the vif, once the backend has disconnected
 */
void front_ctrl_teardown(struct pvnet_vif *vif)
{
	struct front_ctrl *c = &vif->ctrl;

	if (c->ev.port)
		pvnet_evtchn_close(vif->dom, &c->ev);
	if (c->data_granted)
		front_domain_ungrant_page(vif->dom, c->data_frame, c->data_ref);
	if (c->ring_granted)
		front_domain_ungrant_page(vif->dom, c->ring_frame, c->ring_ref);
	memset(c, 0, sizeof(*c));
}

bool pvnet_vif_has_ctrl_ring(const struct pvnet_vif *vif)
{
	return vif->ctrl.active;
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Take one response (one is there: rsp_prod was checked).  Its id must be
 * pending: the request of the call waiting, or one whose call gave up
 * (-ETIMEDOUT) and whose answer came late, in any order.  Returns 0 with
 * the request's entry freed, or -EIO (the vif is broken) for an id never
 * asked for or answered already.
 */
static int take_response(struct pvnet_vif *vif, struct xen_netif_ctrl_response *rsp)
{
	struct front_ctrl *c = &vif->ctrl;
	struct front_ctrl_req *p;

	RING_COPY_RESPONSE(&c->ring, c->ring.rsp_cons, rsp);
	c->ring.rsp_cons++;
	p = &c->pending[rsp->id % FRONT_CTRL_RING_SIZE];
	if (!p->busy || p->id != rsp->id) {
		front_vif_broken(vif, "ctrl: response id %u answers no pending request", rsp->id);
		return -EIO;
	}
	p->busy = false;
	if (p->page)
		c->page_busy = false; /* at most one request names the page at a time */
	p->page = false;
	return 0;
}

/* The responses there are, 0 if none, or -EIO for a producer beyond our requests. */
static int responses(struct pvnet_vif *vif, RING_IDX *prod)
{
	struct front_ctrl *c = &vif->ctrl;

	*prod = __atomic_load_n(&c->ring.sring->rsp_prod, __ATOMIC_ACQUIRE);
	if (*prod - c->ring.rsp_cons > c->ring.req_prod_pvt - c->ring.rsp_cons) {
		front_vif_broken(vif, "ctrl: response producer %u beyond requests %u", *prod,
				 c->ring.req_prod_pvt);
		return -EIO;
	}
	return *prod != c->ring.rsp_cons;
}

/* Wait for the response to request @id, dropping answers to abandoned ones; 0, -ETIMEDOUT, -EIO. */
static int wait_response(struct pvnet_vif *vif, uint16_t id, struct xen_netif_ctrl_response *rsp)
{
	struct front_ctrl *c = &vif->ctrl;
	int64_t end = ms_now() + vif->cfg.timeout_ms;
	RING_IDX prod;
	int more, rc;

	for (;;) {
		rc = responses(vif, &prod);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			rc = take_response(vif, rsp);
			if (rc < 0)
				return rc;
			if (rsp->id == id)
				return 0;
			continue; /* the late answer to a call that gave up */
		}
		/*
		 * RING_FINAL_CHECK_FOR_RESPONSES with the index fields as
		 * atomics (the backend writes them concurrently): arm
		 * rsp_event, full fence, look at rsp_prod again.
		 */
		__atomic_store_n(&c->ring.sring->rsp_event, c->ring.rsp_cons + 1, __ATOMIC_RELAXED);
		xen_mb();
		more =
		    __atomic_load_n(&c->ring.sring->rsp_prod, __ATOMIC_ACQUIRE) != c->ring.rsp_cons;
		if (more)
			continue;
		int64_t left = end - ms_now();

		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = c->ev.fd, .events = POLLIN};

		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		pvnet_evtchn_pending(&c->ev);
	}
}

/* Take the answers that came while no call waited: all to abandoned requests; 0 or -EIO. */
static int reap(struct pvnet_vif *vif)
{
	struct xen_netif_ctrl_response rsp;
	RING_IDX prod;
	int rc;

	while ((rc = responses(vif, &prod)) > 0)
		if (take_response(vif, &rsp) < 0)
			return -EIO;
	return rc;
}

/* Does a request of @type with @data name the grant @ref as a page the backend reads? */
static bool names_page(uint16_t type, const uint32_t data[3], grant_ref_t ref)
{
	switch (type) {
	case XEN_NETIF_CTRL_TYPE_SET_HASH_KEY:
	case XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING:
		return data[0] == ref;
	case XEN_NETIF_CTRL_TYPE_ADD_GREF_MAPPING:
	case XEN_NETIF_CTRL_TYPE_DEL_GREF_MAPPING:
		return data[1] == ref;
	default:
		return false;
	}
}

/* A free id for a new request (the ring is not full, so there is one), or -EBUSY. */
static int new_id(struct front_ctrl *c)
{
	for (unsigned int i = 0; i < FRONT_CTRL_RING_SIZE; i++) {
		uint16_t id = c->next_id++;

		if (!c->pending[id % FRONT_CTRL_RING_SIZE].busy)
			return id;
	}
	return -EBUSY; /* NEVER: an entry per unanswered request, fewer than a ring's worth */
}

int64_t pvnet_vif_ctrl_page_ref(struct pvnet_vif *vif, void **page)
{
	struct front_ctrl *c = &vif->ctrl;
	int st = atomic_load_explicit(&vif->status, memory_order_acquire);

	if (!c->active)
		return -EOPNOTSUPP;
	/* An answer already there frees the page now rather than at the next call. */
	if (!st && reap(vif) < 0)
		return -EIO;
	if (c->page_busy)
		return st ? st : -EBUSY;
	*page = pvnet_domain_page(vif->dom, c->data_frame);
	return c->data_ref;
}

int pvnet_vif_ctrl(struct pvnet_vif *vif, uint16_t type, uint32_t data0, uint32_t data1,
		   uint32_t data2, uint32_t *out)
{
	struct front_ctrl *c = &vif->ctrl;
	struct xen_netif_ctrl_response rsp = {0};
	struct xen_netif_ctrl_request *req;
	int st = atomic_load_explicit(&vif->status, memory_order_acquire);
	const uint32_t data[3] = {data0, data1, data2};
	RING_IDX pushed;
	bool page;
	int id, rc;

	if (st)
		return st;
	if (!c->active)
		return -EOPNOTSUPP;
	/* Late answers to calls that gave up free their slots; a ring of unanswered requests is full. */
	rc = reap(vif);
	if (rc < 0)
		return rc;
	page = names_page(type, data, c->data_ref);
	if (RING_FULL(&c->ring) || (page && c->page_busy))
		return -EBUSY;
	id = new_id(c);
	if (id < 0)
		return id;
	c->pending[id % FRONT_CTRL_RING_SIZE] =
	    (struct front_ctrl_req){.id = (uint16_t)id, .busy = true, .page = page};
	c->page_busy |= page;
	req = RING_GET_REQUEST(&c->ring, c->ring.req_prod_pvt);
	*req = (struct xen_netif_ctrl_request){
	    .id = (uint16_t)id, .type = type, .data = {data0, data1, data2}};
	/* Each request is pushed as it is made: the one before is what was published. */
	pushed = c->ring.req_prod_pvt++;
	if (xen_ring_push(&c->ring.sring->req_prod, &c->ring.sring->req_event, &pushed,
			  c->ring.req_prod_pvt))
		pvnet_evtchn_notify(&c->ev);
	rc = wait_response(vif, (uint16_t)id, &rsp);
	if (rc < 0)
		return rc;
	if (out)
		*out = rsp.data;
	return (int)(rsp.status > INT32_MAX ? INT32_MAX : rsp.status);
}

/* A request whose status becomes 0 or -errno. */
static int ctrl_call(struct pvnet_vif *vif, uint16_t type, uint32_t d0, uint32_t d1, uint32_t d2,
		     uint32_t *out)
{
	int rc = pvnet_vif_ctrl(vif, type, d0, d1, d2, out);

	return rc < 0 ? rc : status2errno((uint32_t)rc);
}

int pvnet_vif_set_hash_algorithm(struct pvnet_vif *vif, uint32_t alg)
{
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM, alg, 0, 0, NULL);
}

int pvnet_vif_get_hash_flags(struct pvnet_vif *vif, uint32_t *flags)
{
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS, 0, 0, 0, flags);
}

int pvnet_vif_set_hash_flags(struct pvnet_vif *vif, uint32_t flags)
{
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS, flags, 0, 0, NULL);
}

int pvnet_vif_set_hash_key(struct pvnet_vif *vif, const uint8_t *key, uint32_t len)
{
	void *page;
	int64_t ref = pvnet_vif_ctrl_page_ref(vif, &page);

	if (ref < 0)
		return (int)ref;
	if (len > PVNET_PAGE_SIZE)
		return -EINVAL;
	if (len)
		memcpy(page, key, len);
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, (uint32_t)ref, len, 0, NULL);
}

int pvnet_vif_get_hash_mapping_size(struct pvnet_vif *vif, uint32_t *size)
{
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE, 0, 0, 0, size);
}

int pvnet_vif_set_hash_mapping(struct pvnet_vif *vif, const uint32_t *table, uint32_t n)
{
	void *page = NULL;
	int64_t ref = 0;
	int rc;

	/* Before the size is sent: a busy page must leave the backend's table as it was. */
	if (n) {
		ref = pvnet_vif_ctrl_page_ref(vif, &page);
		if (ref < 0)
			return (int)ref;
	}
	if (n > PVNET_PAGE_SIZE / sizeof(uint32_t))
		return -EINVAL;
	rc = ctrl_call(vif, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE, n, 0, 0, NULL);
	if (rc < 0 || n == 0)
		return rc;
	memcpy(page, table, n * sizeof(uint32_t));
	return ctrl_call(vif, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING, (uint32_t)ref, n, 0, NULL);
}
