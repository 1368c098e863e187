// SPDX-License-Identifier: MIT
// ctrl.c - the control ring (feature-ctrl-ring): hash algorithm, flags, key and mapping table

/*
 * Theory of Operation
 *
 * A frontend that wants to configure receive-side steering grants one page,
 * initialises a xen_netif_ctrl ring on it, allocates an event channel and
 * writes ctrl-ring-ref and event-channel-ctrl before it goes Connected
 * (netif.h, "Control ring").  At connect the loop thread maps the page and binds the
 * channel (back_ctrl_connect); from then on the ring is served by the
 * worker of queue 0 (back_ctrl_poll), for three reasons:
 *   - isolation: a guest flooding its control ring burns only its own
 *     queue-0 worker's time, never the loop thread every vif and the store
 *     depend on;
 *   - the flood bound is the TX ring's: at most BACK_CTRL_BATCH requests
 *     per round, then the worker's other work, the same producer sanity
 *     check, the same late EOI;
 *   - life cycle: the worker is stopped before the ring is unmapped, so no
 *     lock is needed between serving and disconnect.
 *
 * Every request is copied once (RING_COPY_REQUEST) and only the copy is
 * used.  A key or mapping table is fetched with ONE grant copy (source:
 * the guest's gref at offset 0, as Linux netback does) into private
 * memory; a mapping update is range-checked (off + len without overflow,
 * against the current size) before the copy, every staged entry is checked
 * against the queue count after it, and only then committed (XSA-270).
 * Unknown types, and the static-grant types 8..10 Linux does not
 * implement either, are answered NOT_SUPPORTED.  Responses echo the
 * request's id and type.
 */

#include <errno.h>
#include <string.h>

#include "back/internal.h"

/*
 * Requests per round.  The ring holds 128 (16-byte entries on one page);
 * a quarter of it per round bounds one round's control work to 32 small
 * grant copies at most, after which TX and RX of queue 0 get their turn,
 * whatever the guest writes.
 */
#define BACK_CTRL_BATCH 32u

/**
 * back_ctrl_connect() - map and bind the control ring if the frontend set one up
 * @vif: the vif (loop thread, no worker running)
 * @ref: the ctrl-ring-ref the frontend wrote
 * @evtchn: its event-channel-ctrl
 *
 * Return: 0, or -EINVAL (fatal for the vif: the caller reports it)
 */
int back_ctrl_connect(struct back_vif *vif, grant_ref_t ref, evtchn_port_t evtchn)
{
	struct back *b = vif->b;
	struct back_ctrl *c = &vif->ctrl;
	struct gnttab_map_grant_ref op = {.flags = GNTMAP_host_map, .ref = ref, .dom = vif->domid};
	xen_netif_ctrl_sring_t *s;
	RING_IDX req_prod, rsp_prod;
	int rc;

	rc = hv_gnttab_map_grant_refs(vif->q[0]->gt, 1, &op);
	if (rc < 0 || op.status != GNTST_okay)
		return -EINVAL;
	c->mapped = true;
	c->handle = op.handle;
	c->addr = op.host_addr;
	s = (void *)(uintptr_t)c->addr;
	rsp_prod = __atomic_load_n(&s->rsp_prod, __ATOMIC_ACQUIRE);
	req_prod = __atomic_load_n(&s->req_prod, __ATOMIC_ACQUIRE);
	BACK_RING_ATTACH(&c->ring, s, rsp_prod, BACK_PAGE_SIZE);
	c->rsp_pub = rsp_prod;
	if (req_prod - rsp_prod > RING_SIZE(&c->ring))
		return -EINVAL;
	rc = hv_evtchn_bind_interdomain(b->hv, b->cfg.backend_id, vif->domid, evtchn, &c->port);
	if (rc < 0)
		return -EINVAL;
	c->bound = true;
	c->fd = hv_evtchn_fd(b->hv, b->cfg.backend_id, c->port);
	return 0;
}

/**
 * back_ctrl_disconnect() - unmap and unbind (workers stopped; idempotent)
 * @vif: the vif
 */
void back_ctrl_disconnect(struct back_vif *vif)
{
	struct back_ctrl *c = &vif->ctrl;

	if (c->mapped && vif->q[0]) {
		struct gnttab_unmap_grant_ref op = {.handle = c->handle, .host_addr = c->addr};

		if (hv_gnttab_unmap_grant_refs(vif->q[0]->gt, 1, &op) < 0)
			err("vif%u.%u: control ring unmap failed", vif->domid, vif->devid);
	}
	if (c->bound)
		hv_evtchn_close(vif->b->hv, vif->b->cfg.backend_id, c->port);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/*
 * One grant copy of @len bytes from the guest's @gref (offset 0) into @dst,
 * through the worker's handle; with persistent grants a sender's thread may
 * be mapping a cache miss through that handle, under pgnt_lock (gnt.c), so
 * the copy takes it too (never through the cache: a key is fetched once).
 */
static bool fetch(struct back_queue *q, grant_ref_t gref, void *dst, uint32_t len)
{
	xengnttab_grant_copy_segment_t seg = {
	    .source.foreign = {.ref = gref, .offset = 0, .domid = q->vif->domid},
	    .dest.virt = dst,
	    .len = (uint16_t)len,
	    .flags = GNTCOPY_source_gref};
	int rc;

	if (len == 0)
		return true;
	if (q->pgnt)
		pthread_mutex_lock(&q->pgnt_lock);
	rc = hv_gnttab_grant_copy(q->gt, 1, &seg);
	if (q->pgnt)
		pthread_mutex_unlock(&q->pgnt_lock);
	return rc == 0 && seg.status == GNTST_okay;
}

/* Serve one request snapshot; returns the status, *data the response data. */
static uint32_t serve(struct back_queue *q, const struct xen_netif_ctrl_request *req,
		      uint32_t *data)
{
	struct back_vif *vif = q->vif;
	struct back_hash *h = &vif->hash;
	uint8_t key[BACK_HASH_KEY_MAX];
	uint32_t staged[BACK_HASH_MAPPING_MAX], st;

	*data = 0;
	switch (req->type) {
	case XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM:
		return back_hash_set_alg(h, req->data[0]);
	case XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS:
		return back_hash_get_flags(h, data);
	case XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS:
		return back_hash_set_flags(h, req->data[0]);
	case XEN_NETIF_CTRL_TYPE_SET_HASH_KEY:
		if (req->data[1] > BACK_HASH_KEY_MAX)
			return XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW;
		if (!fetch(q, req->data[0], key, req->data[1]))
			return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
		return back_hash_set_key(h, key, req->data[1]);
	case XEN_NETIF_CTRL_TYPE_GET_HASH_MAPPING_SIZE:
		*data = BACK_HASH_MAPPING_MAX;
		return XEN_NETIF_CTRL_STATUS_SUCCESS;
	case XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE:
		return back_hash_set_mapping_size(h, req->data[0]);
	case XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING:
		/* data[0] gref, data[1] entries, data[2] offset: check, copy once, check, commit */
		st = back_hash_check_mapping(h, req->data[1], req->data[2]);
		if (st != XEN_NETIF_CTRL_STATUS_SUCCESS)
			return st;
		if (!fetch(q, req->data[0], staged, req->data[1] * (uint32_t)sizeof(staged[0])))
			return XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER;
		return back_hash_set_mapping(h, staged, req->data[1], req->data[2], vif->nq);
	default:
		return XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED;
	}
}

/**
 * back_ctrl_poll() - answer up to BACK_CTRL_BATCH control requests
 * @q: queue 0 (its worker)
 *
 * Return: true if any request was answered
 */
bool back_ctrl_poll(struct back_queue *q)
{
	struct back_ctrl *c = &q->vif->ctrl;
	RING_IDX prod, cons;
	unsigned int n = 0;

	if (!c->mapped)
		return false;
	prod = __atomic_load_n(&c->ring.sring->req_prod, __ATOMIC_ACQUIRE);
	if (RING_REQUEST_PROD_OVERFLOW(&c->ring, prod)) {
		back_queue_fatal(q, "ctrl: req_prod %u is more than a ring ahead of %u", prod,
				 c->ring.rsp_prod_pvt);
		return false;
	}
	for (cons = c->ring.req_cons; cons != prod && n < BACK_CTRL_BATCH; cons++, n++) {
		struct xen_netif_ctrl_request req;
		struct xen_netif_ctrl_response rsp;

		RING_COPY_REQUEST(&c->ring, cons, &req);
		rsp.id = req.id;
		rsp.type = req.type;
		rsp.status = serve(q, &req, &rsp.data);
		*RING_GET_RESPONSE(&c->ring, c->ring.rsp_prod_pvt) = rsp;
		c->ring.rsp_prod_pvt++;
	}
	c->ring.req_cons = cons;
	if (n == 0)
		return false;
	if (xen_ring_push(&c->ring.sring->rsp_prod, &c->ring.sring->rsp_event, &c->rsp_pub,
			  c->ring.rsp_prod_pvt))
		back_notify(q, c->port);
	back_stat_add(&q->stats->ctrl_requests, n);
	return true;
}

/**
 * back_ctrl_has_work() - final check before sleeping (sets req_event)
 * @q: queue 0
 *
 * Return: true if control requests are waiting
 */
bool back_ctrl_has_work(struct back_queue *q)
{
	struct back_ctrl *c = &q->vif->ctrl;
	RING_IDX prod;

	if (!c->mapped)
		return false;
	__atomic_store_n(&c->ring.sring->req_event, c->ring.req_cons + 1, __ATOMIC_SEQ_CST);
	prod = __atomic_load_n(&c->ring.sring->req_prod, __ATOMIC_SEQ_CST);
	return prod != c->ring.req_cons;
}
