// SPDX-License-Identifier: MIT
// xenbus.c - the backend XenbusState machine: features, frontend keys, connect and disconnect

/*
 * Theory of Operation
 *
 * Everything here runs on the loop thread, from the toolstack calls of
 * vif.c and from the store watch on the frontend's "state" node (the store
 * delivers in-process watch events on the loop thread, after the operation
 * that caused them).
 *
 * State machine (Linux netback's set_backend_state; xen/io/xenbus.h's states): the
 * backend always moves along the shortest legal path
 *
 *	Initialising -> InitWait -> Connected
 *	any -> Closing -> Closed,  Closed -> InitWait (reconnect)
 *
 * and leaving Connected always tears the data path down first.  What the
 * frontend does drives it:
 *
 *	frontend Initialising      -> InitWait (also after a reboot: reconnect)
 *	frontend Connected         -> Connected (read keys, map, bind, start)
 *	frontend Closing           -> Closing
 *	frontend Closed / Unknown  -> Closed (missing or garbage state: Unknown)
 *
 * and so does the toolstack, as libxl detaches a device: it sets our
 * "online" key to 0 (and usually our state to Closing itself); we close
 * (Closing, the data path torn down), the frontend answers Closed, we go
 * Closed and stay there, whatever the frontend does, until "online" is 1
 * again (Linux unregisters the device at that point).
 *
 * Connect reads the frontend's keys with Linux's defaults for absent ones
 * (sg, GSO, IPv6 checksum offload and rx-notify off; IPv4 checksum offload
 * on unless feature-no-csum-offload), refuses a frontend without
 * request-rx-copy, validates multi-queue-num-queues against our maximum,
 * maps both rings of every queue writable with one batched map call,
 * rejects a ring whose req_prod is more than a ring ahead of rsp_prod, binds
 * the event channel(s), sets up the persistent-grant cache when the
 * frontend accepted feature-persistent (gnt.c), maps and binds the control ring when the frontend
 * wrote ctrl-ring-ref and event-channel-ctrl (ctrl.c; served by queue 0's
 * worker), adds the vif to the switch (then writes hotplug-status "connected", as a Xen
 * host's hotplug script does once the vif is on its bridge) and starts one
 * worker per queue.  Any failure is fatal for this vif (back_vif_fatal():
 * reason in the backend's "error" key, state Closing).
 *
 * Link state (netif.h): our "carrier" key is 1 while we are Connected and
 * no queue of the vif is stalled (rx.c), else 0; it is written before the
 * state when we connect or disconnect, and by the loop thread when a
 * worker reports a stall or a recovery (vif.c, ctl_ready()).
 *
 * Disconnect stops the workers first, then removes the switch port (which
 * waits until no other thread is inside our xmit()), unmaps the control
 * ring (through queue 0's grant handle, which a sender's thread may use
 * inside xmit(): gnt.c), drops the packets
 * queued for the guest, waits until every packet this vif sent has been
 * completed by its consumers (each holds it at most tx_hold_max_us before
 * copying it out), and only then unmaps the persistent grants and the
 * rings and closes the ports.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "back/internal.h"
#include "store/store.h"

/*
 * How long disconnect waits for packets this vif sent that other ports
 * still hold: a vif receiver copies them out after tx_hold_max_us, so this
 * is only reached by a stuck consumer.  The queue is then leaked, never
 * freed under a consumer's feet.
 */
#define BACK_DISCONNECT_WAIT_MS 5000

/* Most transitions set_state takes for one request (the longest path is 3). */
#define BACK_STATE_STEPS 8

static int xs_write_str(struct back_vif *vif, const char *key, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", vif->be_path, key);
	return store_write(vif->b->store, path, val, strlen(val));
}

static int xs_write_uint(struct back_vif *vif, const char *key, unsigned long v)
{
	char val[24];

	snprintf(val, sizeof(val), "%lu", v);
	return xs_write_str(vif, key, val);
}

/*
 * Significant digits of @v, a string of @len decimal digits: its length
 * without leading zeros, which any number may have (as kstrtouint() and
 * sscanf() take it).
 */
static size_t significant_digits(const char *v, size_t len)
{
	size_t zeros = 0;

	while (zeros < len && v[zeros] == '0')
		zeros++;
	return len - zeros;
}

/*
 * Read an unsigned decimal key of the frontend.  The value is guest data:
 * decimal digits, nothing else, at most 10 of them after any leading
 * zeros.  0, -ENOENT if absent, -EINVAL if not a number, -ERANGE if above
 * @max.
 */
static int fe_read_uint(struct back_vif *vif, const char *dir, const char *key, unsigned long max,
			unsigned long *out)
{
	char path[160], *val = NULL, *end;
	unsigned long v;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	rc = store_read(vif->b->store, path, &val, &len);
	if (rc < 0)
		return rc;
	rc = -EINVAL;
	if (len == 0 || strspn(val, "0123456789") != len)
		goto out;
	rc = -ERANGE;
	if (significant_digits(val, len) > 10)
		goto out;
	v = strtoul(val, &end, 10);
	if (v > max)
		goto out;
	*out = v;
	rc = 0;
out:
	free(val);
	return rc;
}

/* A boolean feature key: absent or malformed means @def (xenbus_read_unsigned). */
static bool fe_feature(struct back_vif *vif, const char *key, bool def)
{
	unsigned long v;

	if (fe_read_uint(vif, vif->fe_path, key, UINT32_MAX, &v) < 0)
		return def;
	return v != 0;
}

void back_xenbus_carrier(struct back_vif *vif)
{
	bool on = vif->state == XenbusStateConnected && back_vif_carrier(vif);
	int rc;

	if (on == vif->carrier_key)
		return;
	rc = xs_write_str(vif, "carrier", on ? "1" : "0");
	if (rc < 0)
		warn("vif%u.%u: writing carrier: %s", vif->domid, vif->devid, strerror(-rc));
	else
		vif->carrier_key = on;
}

void back_xenbus_switch_state(struct back_vif *vif, enum xenbus_state s)
{
	char path[160];
	int rc;

	/*
	 * InitWait: a new connection begins, and the reason the last one was
	 * disabled (back_vif_fatal()) is no longer this vif's: `pvnet show`
	 * must not call a connected vif disabled, nor a frontend read the old
	 * reason when this connection closes.  The fatal count keeps the history.
	 */
	if (s == XenbusStateInitWait && vif->error) {
		free(vif->error);
		vif->error = NULL;
		snprintf(path, sizeof(path), "%s/error", vif->be_path);
		rc = store_rm(vif->b->store, path);
		if (rc < 0 && rc != -ENOENT)
			warn("vif%u.%u: removing %s: %s", vif->domid, vif->devid, path,
			     strerror(-rc));
	}
	vif->state = s;
	/* The carrier first: a frontend that sees Connected finds it up to date. */
	back_xenbus_carrier(vif);
	rc = xs_write_uint(vif, "state", s);
	if (rc < 0)
		warn("vif%u.%u: writing state %d: %s", vif->domid, vif->devid, s, strerror(-rc));
}

/*
 * Our feature keys, written once when the vif is created (Linux writes
 * them at probe).  feature-ctrl-ring: the control ring (ctrl.c) with
 * Toeplitz hashing; multicast control (mcast.c), also changed while
 * connected (we watch request-multicast-control).
 */
static int write_features(struct back_vif *vif)
{
	static const char *const on[] = {
	    "feature-sg",
	    "feature-gso-tcpv4",
	    "feature-gso-tcpv6",
	    "feature-ipv6-csum-offload",
	    "feature-rx-copy",
	    "feature-split-event-channels",
	    "feature-multicast-control",
	    "feature-dynamic-multicast-control",
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]) && rc == 0; i++)
		rc = xs_write_str(vif, on[i], "1");
	if (rc == 0)
		rc = xs_write_str(vif, "feature-rx-flip", "0");
	if (rc == 0)
		rc = xs_write_uint(vif, "multi-queue-max-queues", vif->b->cfg.max_queues);
	if (rc == 0)
		rc = xs_write_str(vif, "feature-ctrl-ring", "1");
	if (rc == 0 && vif->b->cfg.tx_mode == BACK_TX_PERSISTENT)
		rc = xs_write_str(vif, "feature-persistent", "1");
	if (rc == 0 && vif->b->cfg.tx_mode == BACK_TX_PERSISTENT)
		rc = xs_write_uint(vif, "persistent-max-grants", vif->b->cfg.persistent_max_grants);
	return rc;
}

/*
 * pvnet's extension (docs/persistent-grants.md): a frontend that accepts
 * feature-persistent declares persistent-grants, the pages per queue its
 * requests will ever name, at most our persistent-max-grants.
 */
static int read_persistent(struct back_vif *vif)
{
	struct back *b = vif->b;
	unsigned long n;
	int rc;

	vif->mode = b->cfg.tx_mode;
	vif->persistent_grants = 0;
	if (b->cfg.tx_mode != BACK_TX_PERSISTENT)
		return 0;
	if (!fe_feature(vif, "feature-persistent", false)) {
		vif->mode = BACK_TX_MAP;
		return 0;
	}
	rc = fe_read_uint(vif, vif->fe_path, "persistent-grants", UINT32_MAX, &n);
	if (rc < 0 || n == 0 || n > b->cfg.persistent_max_grants) {
		back_vif_fatal(vif, "persistent-grants %s: must be 1..%u (persistent-max-grants)",
			       rc == -ENOENT ? "missing"
			       : rc < 0	     ? "malformed"
					     : "out of range",
			       b->cfg.persistent_max_grants);
		return -EINVAL;
	}
	vif->persistent_grants = (uint32_t)n;
	return 0;
}

/* Wake every worker of every vif (the loop thread's list), sleeping or not. */
static void wake_all_workers(struct back *b)
{
	for (struct back_vif *v = b->vifs; v; v = v->next)
		for (unsigned int i = 0; i < BACK_MAX_QUEUES_LIMIT; i++)
			if (v->q[i])
				back_worker_wake(v->q[i]);
}

/*
 * Wait until no consumer holds a packet of @q's, completing them here.  A
 * receiver that takes nothing would copy ours out only after the hold
 * (tx_hold_max_us), which is there for a sender that stays: so while we
 * wait, receivers copy @q's frames out at once (@leaving, and
 * rx_release_now to have them look), and every worker is woken each
 * millisecond, so that one that was just going to sleep until its next
 * deadline does not keep us.  False if they still hold some after
 * BACK_DISCONNECT_WAIT_MS.
 */
static bool queue_wait_consumers(struct back_queue *q)
{
	struct back *b = q->b;
	uint64_t deadline = back_now_ns() + (uint64_t)BACK_DISCONNECT_WAIT_MS * 1000000;
	bool urged = false, done = true;

	while (q->pending && (atomic_load(&q->inflight) || atomic_load(&q->done_busy))) {
		if (!urged) {
			atomic_store_explicit(&q->leaving, true, memory_order_seq_cst);
			atomic_fetch_add_explicit(&b->rx_release_now, 1, memory_order_seq_cst);
			urged = true;
		}
		wake_all_workers(b);
		if (!back_tx_complete(q) && back_now_ns() > deadline) {
			done = false;
			break;
		}
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	if (urged)
		atomic_fetch_sub_explicit(&b->rx_release_now, 1, memory_order_seq_cst);
	return done;
}

/* Tear one queue down; the worker is stopped.  Returns false if leaked. */
static bool queue_destroy(struct back_queue *q)
{
	struct back *b = q->b;

	/* Frames waiting for the guest (normally dropped by the caller already). */
	back_rx_drop_all(q);

	/* Packets we sent: wait for their consumers. */
	if (!queue_wait_consumers(q)) {
		err("vif%u.%u q%u: %u packets still held by consumers; leaking the queue",
		    q->vif->domid, q->vif->devid, q->id, atomic_load(&q->inflight));
		return false;
	}

	/* No frame of ours is in flight: the persistent mappings are ours alone. */
	back_gnt_fini(q);
	if (q->tx_ring_mapped || q->rx_ring_mapped) {
		struct gnttab_unmap_grant_ref ops[2];
		uint32_t n = 0;

		if (q->tx_ring_mapped)
			ops[n++] = (struct gnttab_unmap_grant_ref){.handle = q->tx_ring_handle,
								   .host_addr = q->tx_ring_addr};
		if (q->rx_ring_mapped)
			ops[n++] = (struct gnttab_unmap_grant_ref){.handle = q->rx_ring_handle,
								   .host_addr = q->rx_ring_addr};
		if (hv_gnttab_unmap_grant_refs(q->gt, n, ops) < 0)
			err("vif%u.%u q%u: ring unmap failed", q->vif->domid, q->vif->devid, q->id);
	}
	if (q->port_tx_bound)
		hv_evtchn_close(b->hv, b->cfg.backend_id, q->port_tx);
	if (q->port_rx_bound)
		hv_evtchn_close(b->hv, b->cfg.backend_id, q->port_rx);
	back_rx_fini(q);
	back_tx_fini(q);
	hv_gnttab_close(q->gt_rx);
	hv_gnttab_close(q->gt);
	pthread_mutex_destroy(&q->rx_lock);
	pthread_mutex_destroy(&q->pgnt_lock);
	if (q->wake_fd >= 0)
		close(q->wake_fd);
	free(q);
	return true;
}

void back_xenbus_disconnect(struct back_vif *vif)
{
	unsigned int i;

	for (i = 0; i < BACK_MAX_QUEUES_LIMIT; i++)
		if (vif->q[i])
			back_worker_stop(vif->q[i]);
	if (vif->port) {
		sw_port_del(vif->b->sw, vif->port);
		vif->port = NULL;
	}
	/*
	 * Queue 0's worker served it and is stopped.  Only now that no other
	 * thread is inside our xmit(): with persistent grants, a frame
	 * delivered straight into queue 0 maps its cache misses through the
	 * same grant handle, which serves one thread at a time.
	 */
	back_ctrl_disconnect(vif);
	/*
	 * Release what every queue holds for the guest before waiting for any
	 * of our own frames: one of them might be held here.
	 */
	for (i = 0; i < BACK_MAX_QUEUES_LIMIT; i++)
		if (vif->q[i])
			back_rx_drop_all(vif->q[i]);
	for (i = 0; i < BACK_MAX_QUEUES_LIMIT; i++) {
		if (vif->q[i])
			queue_destroy(vif->q[i]);
		vif->q[i] = NULL;
	}
	vif->nq = 0;
}

static struct back_queue *queue_create(struct back_vif *vif, unsigned int id)
{
	struct back_queue *q = back_zalloc(sizeof(*q));

	if (!q)
		return NULL;
	q->vif = vif;
	q->b = vif->b;
	q->id = id;
	q->stats = &vif->stats[id];
	q->mode = vif->mode;
	q->fd_tx = q->fd_rx = -1;
	pthread_mutex_init(&q->rx_lock, NULL);
	pthread_mutex_init(&q->pgnt_lock, NULL);
	q->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q->gt = hv_gnttab_open(vif->b->hv, vif->b->cfg.backend_id);
	q->gt_rx = hv_gnttab_open(vif->b->hv, vif->b->cfg.backend_id);
	if (q->wake_fd < 0 || !q->gt || !q->gt_rx || back_tx_init(q) < 0 || back_rx_init(q) < 0 ||
	    back_gnt_init(q, vif->persistent_grants) < 0)
		goto fail;
	return q;
fail:
	queue_destroy(q);
	return NULL;
}

/* Read one queue's keys under @dir and attach to its rings and channels. */
static int queue_connect(struct back_vif *vif, struct back_queue *q, const char *dir)
{
	struct back *b = vif->b;
	unsigned long txref, rxref, ptx, prx;
	struct gnttab_map_grant_ref ops[2];
	RING_IDX req_prod, rsp_prod;
	int rc;

	if (fe_read_uint(vif, dir, "tx-ring-ref", UINT32_MAX, &txref) < 0 ||
	    fe_read_uint(vif, dir, "rx-ring-ref", UINT32_MAX, &rxref) < 0) {
		back_vif_fatal(vif, "reading %s/ring-ref", dir);
		return -EINVAL;
	}
	if (fe_read_uint(vif, dir, "event-channel-tx", UINT32_MAX, &ptx) == 0 &&
	    fe_read_uint(vif, dir, "event-channel-rx", UINT32_MAX, &prx) == 0) {
		q->split = true;
	} else if (fe_read_uint(vif, dir, "event-channel", UINT32_MAX, &ptx) == 0) {
		prx = ptx;
	} else {
		back_vif_fatal(vif, "reading %s/event-channel(-tx/rx)", dir);
		return -EINVAL;
	}

	ops[0] = (struct gnttab_map_grant_ref){
	    .flags = GNTMAP_host_map, .ref = (grant_ref_t)txref, .dom = vif->domid};
	ops[1] = (struct gnttab_map_grant_ref){
	    .flags = GNTMAP_host_map, .ref = (grant_ref_t)rxref, .dom = vif->domid};
	rc = hv_gnttab_map_grant_refs(q->gt, 2, ops);
	q->tx_ring_mapped = rc == 0 && ops[0].status == GNTST_okay;
	q->rx_ring_mapped = rc == 0 && ops[1].status == GNTST_okay;
	q->tx_ring_handle = ops[0].handle;
	q->tx_ring_addr = ops[0].host_addr;
	q->rx_ring_handle = ops[1].handle;
	q->rx_ring_addr = ops[1].host_addr;
	if (!q->tx_ring_mapped || !q->rx_ring_mapped) {
		back_vif_fatal(vif, "mapping shared-frames %lu/%lu (status %d/%d)", txref, rxref,
			       rc ? rc : ops[0].status, rc ? rc : ops[1].status);
		return -EINVAL;
	}

	/* Attach at the frontend's rsp_prod, read once (BACK_RING_ATTACH). */
	netif_tx_sring_t *txs = (void *)(uintptr_t)q->tx_ring_addr;
	netif_rx_sring_t *rxs = (void *)(uintptr_t)q->rx_ring_addr;

	rsp_prod = __atomic_load_n(&txs->rsp_prod, __ATOMIC_ACQUIRE);
	req_prod = __atomic_load_n(&txs->req_prod, __ATOMIC_ACQUIRE);
	BACK_RING_ATTACH(&q->tx, txs, rsp_prod, BACK_PAGE_SIZE);
	q->tx_rsp_pub = rsp_prod;
	if (req_prod - rsp_prod > RING_SIZE(&q->tx)) {
		back_vif_fatal(vif, "%s: tx ring req_prod %u is more than a ring ahead of %u", dir,
			       req_prod, rsp_prod);
		return -EINVAL;
	}
	rsp_prod = __atomic_load_n(&rxs->rsp_prod, __ATOMIC_ACQUIRE);
	req_prod = __atomic_load_n(&rxs->req_prod, __ATOMIC_ACQUIRE);
	BACK_RING_ATTACH(&q->rx, rxs, rsp_prod, BACK_PAGE_SIZE);
	q->rx_rsp_pub = rsp_prod;
	if (req_prod - rsp_prod > RING_SIZE(&q->rx)) {
		back_vif_fatal(vif, "%s: rx ring req_prod %u is more than a ring ahead of %u", dir,
			       req_prod, rsp_prod);
		return -EINVAL;
	}

	rc = hv_evtchn_bind_interdomain(b->hv, b->cfg.backend_id, vif->domid, (evtchn_port_t)ptx,
					&q->port_tx);
	q->port_tx_bound = rc == 0;
	if (rc == 0 && q->split) {
		rc = hv_evtchn_bind_interdomain(b->hv, b->cfg.backend_id, vif->domid,
						(evtchn_port_t)prx, &q->port_rx);
		q->port_rx_bound = rc == 0;
	} else {
		q->port_rx = q->port_tx;
	}
	if (rc < 0) {
		back_vif_fatal(vif, "binding event-channel %lu/%lu: %s", ptx, prx, strerror(-rc));
		return rc;
	}
	q->fd_tx = hv_evtchn_fd(b->hv, b->cfg.backend_id, q->port_tx);
	q->fd_rx = q->split ? hv_evtchn_fd(b->hv, b->cfg.backend_id, q->port_rx) : -1;
	return 0;
}

/*
 * The control ring is optional, and ctrl-ring-ref says whether there is
 * one: without it event-channel-ctrl is not read, as in Linux's netback;
 * a ring without its port is fatal.  Steering starts from algorithm none
 * (flow hash) with a new flow key at every connect.
 */
static int ctrl_connect(struct back_vif *vif)
{
	unsigned long ref, port;
	int r1, r2;

	back_hash_reset(&vif->hash);
	r1 = fe_read_uint(vif, vif->fe_path, "ctrl-ring-ref", UINT32_MAX, &ref);
	if (r1 == -ENOENT)
		return 0;
	r2 = fe_read_uint(vif, vif->fe_path, "event-channel-ctrl", UINT32_MAX, &port);
	if (r1 < 0 || r2 < 0) {
		back_vif_fatal(vif, "reading ctrl-ring-ref/event-channel-ctrl");
		return -EINVAL;
	}
	if (back_ctrl_connect(vif, (grant_ref_t)ref, (evtchn_port_t)port) < 0) {
		back_vif_fatal(vif, "mapping/binding control ring %lu, port %lu", ref, port);
		return -EINVAL;
	}
	return 0;
}

/*
 * What a Xen host's vif hotplug script writes once it has put the vif on
 * its bridge: here, once the vif's switch port exists (pvnetd is its own
 * hotplug script).  On failure "error", and the reason in hotplug-error.
 */
static void hotplug_status(struct back_vif *vif, const char *status, const char *error)
{
	int rc = xs_write_str(vif, "hotplug-status", status);

	if (rc == 0 && error)
		rc = xs_write_str(vif, "hotplug-error", error);
	if (rc < 0)
		warn("vif%u.%u: writing hotplug-status: %s", vif->domid, vif->devid, strerror(-rc));
}

/* Frontend Connected while we wait: read everything, attach, start. */
static int back_xenbus_connect(struct back_vif *vif)
{
	struct back *b = vif->b;
	unsigned long v, nq = 1;
	char dir[96], name[SW_PORT_NAME_MAX];
	uint64_t fatal;
	unsigned int i;
	int rc;

	if (fe_read_uint(vif, vif->fe_path, "request-rx-copy", UINT32_MAX, &v) < 0 || v == 0) {
		back_vif_fatal(vif, "frontend does not support request-rx-copy");
		return -EOPNOTSUPP;
	}
	vif->fe.sg = fe_feature(vif, "feature-sg", false);
	/*
	 * A GSO frame is several pages: without feature-sg the guest cannot
	 * take one, whatever it says of GSO (Linux's core drops TSO from a
	 * device without SG), so it gets the segments instead.
	 */
	vif->fe.gso_tcpv4 = vif->fe.sg && fe_feature(vif, "feature-gso-tcpv4", false);
	vif->fe.gso_tcpv6 = vif->fe.sg && fe_feature(vif, "feature-gso-tcpv6", false);
	vif->fe.csum_ipv4 = !fe_feature(vif, "feature-no-csum-offload", false);
	vif->fe.csum_ipv6 = fe_feature(vif, "feature-ipv6-csum-offload", false);
	vif->fe.rx_notify = fe_feature(vif, "feature-rx-notify", false);
	vif->rx_timeout_ns = (uint64_t)(vif->fe.rx_notify ? b->cfg.rx_drain_timeout_ms
							  : b->cfg.rx_drain_timeout_nonotify_ms) *
			     1000000;
	/* Linux too: without rx-notify we poll, and a guest that posts nothing is not stalled. */
	vif->rx_stall_ns = vif->fe.rx_notify ? (uint64_t)b->cfg.rx_stall_timeout_ms * 1000000 : 0;
	atomic_store(&vif->rx_stalled_queues, 0);
	/* A new connection starts with an empty filter (Linux frees it at disconnect). */
	back_mcast_reset(vif);
	atomic_store(&vif->mcast_filter, fe_feature(vif, "request-multicast-control", false));

	rc = fe_read_uint(vif, vif->fe_path, "multi-queue-num-queues", UINT32_MAX, &nq);
	if (rc == -ENOENT) {
		nq = 1;
	} else if (rc < 0 || nq == 0 || nq > b->cfg.max_queues) {
		back_vif_fatal(vif, "guest requested %lu queues, exceeding the maximum of %u",
			       rc < 0 ? 0UL : nq, b->cfg.max_queues);
		return -EINVAL;
	}

	rc = read_persistent(vif);
	if (rc < 0)
		return rc;

	/* Counters are the connection's, but fatal errors the vif's: a guest cannot erase them. */
	fatal = atomic_load(&vif->stats[0].fatal);
	memset(vif->stats, 0, sizeof(vif->stats));
	atomic_store(&vif->stats[0].fatal, fatal);
	atomic_store(&vif->broken, 0);
	vif->nq_stats = (unsigned int)nq;
	for (i = 0; i < nq; i++) {
		vif->q[i] = queue_create(vif, i);
		if (!vif->q[i]) {
			back_vif_fatal(vif, "allocating queue %u", i);
			return -ENOMEM;
		}
		if (nq == 1)
			snprintf(dir, sizeof(dir), "%s", vif->fe_path);
		else
			snprintf(dir, sizeof(dir), "%s/queue-%u", vif->fe_path, i);
		rc = queue_connect(vif, vif->q[i], dir);
		if (rc < 0)
			return rc;
	}
	vif->nq = (unsigned int)nq;
	rc = ctrl_connect(vif);
	if (rc < 0)
		return rc;

	snprintf(name, sizeof(name), "vif%u.%u", vif->domid, vif->devid);
	rc = sw_port_add(b->sw, name, &back_rx_port_ops, vif, &vif->port);
	if (rc < 0) {
		vif->port = NULL;
		hotplug_status(vif, "error", strerror(-rc));
		back_vif_fatal(vif, "adding switch port %s: %s", name, strerror(-rc));
		return rc;
	}
	hotplug_status(vif, "connected", NULL);
	for (i = 0; i < nq; i++) {
		rc = back_worker_start(vif->q[i]);
		if (rc < 0) {
			back_vif_fatal(vif, "starting worker %u: %s", i, strerror(-rc));
			return rc;
		}
	}
	back_xenbus_switch_state(vif, XenbusStateConnected);
	/* A guest may connect in a loop (state 1, 4, 1, ...): a line per burst, not per connect. */
	log_ratelimited(&vif->conn_log, LOG_INFO,
			"vif%u.%u: connected, %lu queue(s), %s event channels, tx %s", vif->domid,
			vif->devid, nq, vif->q[0]->split ? "split" : "single",
			back_tx_mode_name(vif->mode));
	return 0;
}

void back_xenbus_set_state(struct back_vif *vif, enum xenbus_state target)
{
	for (int step = 0; vif->state != target && step < BACK_STATE_STEPS; step++) {
		switch (vif->state) {
		case XenbusStateInitialising:
			back_xenbus_switch_state(vif, target == XenbusStateClosed
							  ? XenbusStateClosed
							  : XenbusStateInitWait);
			break;
		case XenbusStateClosed:
			back_xenbus_switch_state(vif, target == XenbusStateClosing
							  ? XenbusStateClosing
							  : XenbusStateInitWait);
			break;
		case XenbusStateInitWait:
			if (target == XenbusStateConnected) {
				if (back_xenbus_connect(vif) < 0)
					return; /* fatal: already Closing */
			} else {
				back_xenbus_switch_state(vif, XenbusStateClosing);
			}
			break;
		case XenbusStateConnected:
			back_xenbus_disconnect(vif);
			back_xenbus_switch_state(vif, target == XenbusStateInitWait
							  ? XenbusStateInitWait
							  : XenbusStateClosing);
			break;
		case XenbusStateClosing:
			back_xenbus_switch_state(vif, XenbusStateClosed);
			break;
		default:
			back_xenbus_switch_state(vif, XenbusStateClosed);
			break;
		}
	}
}

/* Watch callback: the frontend's state node changed (or the watch was added). */
static void fe_state_changed(void *ctx, const char *path, const char *token)
{
	struct back_vif *vif = ctx;
	unsigned long s;

	if (fe_read_uint(vif, vif->fe_path, "state", XenbusStateReconfigured, &s) < 0)
		s = XenbusStateUnknown;
	vif->fe_state = (enum xenbus_state)s;
	debug("vif%u.%u: frontend state %lu, backend %d", vif->domid, vif->devid, s, vif->state);

	if (vif->offline && (s == XenbusStateInitialising || s == XenbusStateConnected)) {
		/* Detached by the toolstack: no new connection until it says online again. */
		back_xenbus_set_state(vif, XenbusStateClosed);
		return;
	}
	switch (s) {
	case XenbusStateInitialising:
		back_xenbus_set_state(vif, XenbusStateInitWait);
		break;
	case XenbusStateConnected:
		back_xenbus_set_state(vif, XenbusStateConnected);
		break;
	case XenbusStateClosing:
		back_xenbus_set_state(vif, XenbusStateClosing);
		break;
	case XenbusStateClosed:
	case XenbusStateUnknown:
		back_xenbus_set_state(vif, XenbusStateClosed);
		break;
	default: /* Initialised, Reconfiguring, Reconfigured: nothing to do */
		break;
	}
}

/*
 * Parse the backend's "rate" key as Linux netback does (xen_net_read_rate()):
 * "BYTES,USEC", decimal, nothing else.  Returns BACK_RATE(), 0 for none.
 */
static uint64_t parse_rate(const char *v, size_t len, bool *bad)
{
	unsigned long long bytes, usec;
	const char *comma = memchr(v, ',', len);
	size_t nb = comma ? (size_t)(comma - v) : 0, nu = comma ? len - nb - 1 : 0;

	*bad = true;
	if (!comma || nb == 0 || nu == 0 || strspn(v, "0123456789") != nb ||
	    strspn(comma + 1, "0123456789") != nu || significant_digits(v, nb) > 13 ||
	    significant_digits(comma + 1, nu) > 8)
		return 0;
	bytes = strtoull(v, NULL, 10);
	usec = strtoull(comma + 1, NULL, 10);
	/* 0 bytes would stop the vif for good; 0 us refills at once (no limit) */
	if (bytes == 0 || bytes > BACK_RATE_MAX_BYTES || usec > BACK_RATE_MAX_USEC)
		return 0;
	*bad = false;
	return usec ? BACK_RATE(bytes, usec) : 0;
}

/* Watch callback: our "rate" key changed (or the watch was added); workers take it next round. */
static void rate_changed(void *ctx, const char *path, const char *token)
{
	struct back_vif *vif = ctx;
	char key[96], *val = NULL;
	uint64_t rate = 0;
	bool bad = false;
	size_t len = 0;

	(void)path;
	(void)token;
	snprintf(key, sizeof(key), "%s/rate", vif->be_path);
	if (store_read(vif->b->store, key, &val, &len) == 0)
		rate = parse_rate(val, len, &bad);
	if (bad)
		warn("vif%u.%u: rate '%.*s' is not BYTES,USEC (1..%llu bytes per 1..%llu us): "
		     "TX unlimited",
		     vif->domid, vif->devid, (int)(len > 40 ? 40 : len), val,
		     (unsigned long long)BACK_RATE_MAX_BYTES,
		     (unsigned long long)BACK_RATE_MAX_USEC);
	free(val);
	if (rate == atomic_load_explicit(&vif->rate, memory_order_relaxed))
		return;
	/* seq_cst: a worker about to sleep either sees it or is woken below. */
	atomic_store_explicit(&vif->rate, rate, memory_order_seq_cst);
	if (rate)
		info("vif%u.%u: TX rate limited to %llu bytes per %llu us per queue", vif->domid,
		     vif->devid, (unsigned long long)BACK_RATE_BYTES(rate),
		     (unsigned long long)BACK_RATE_USEC(rate));
	else
		info("vif%u.%u: TX rate unlimited", vif->domid, vif->devid);
	for (unsigned int i = 0; i < vif->nq; i++)
		if (vif->q[i])
			back_worker_wake(vif->q[i]);
}

/*
 * Watch callback: our "online" key changed (or the watch was added).  The
 * toolstack's word, as libxl writes it to detach a device, read as Linux's
 * backends read it (xenbus_read_unsigned(..., "online", 0)): a number other
 * than 0 is online; 0, absent or not a number is offline.
 */
static void online_changed(void *ctx, const char *path, const char *token)
{
	struct back_vif *vif = ctx;
	char key[96], *val = NULL;
	bool offline = true;
	size_t len = 0;

	(void)path;
	(void)token;
	snprintf(key, sizeof(key), "%s/online", vif->be_path);
	if (store_read(vif->b->store, key, &val, &len) == 0) {
		/* Digits only, as fe_read_uint() takes a number; kept here to name a bad value. */
		if (len && strspn(val, "0123456789") == len)
			offline = strspn(val, "0") == len;
		else
			warn("vif%u.%u: online '%.*s' is not a number: taken as 0 (offline)",
			     vif->domid, vif->devid, (int)(len > 40 ? 40 : len), val);
	}
	free(val);
	if (offline == vif->offline)
		return;
	vif->offline = offline;
	if (!offline) {
		info("vif%u.%u: online again", vif->domid, vif->devid);
		return;
	}
	info("vif%u.%u: taken offline by the toolstack: closing", vif->domid, vif->devid);
	if (vif->state != XenbusStateClosed)
		back_xenbus_set_state(vif, XenbusStateClosing);
}

/* Watch callback: the frontend changed request-multicast-control (feature-dynamic-...). */
static void mcast_changed(void *ctx, const char *path, const char *token)
{
	struct back_vif *vif = ctx;
	bool on = fe_feature(vif, "request-multicast-control", false);

	(void)path;
	(void)token;
	if (on != atomic_exchange(&vif->mcast_filter, on))
		log_ratelimited(&vif->mcast_log, LOG_INFO, "vif%u.%u: multicast filter %s",
				vif->domid, vif->devid, on ? "on" : "off");
}

int back_xenbus_start(struct back_vif *vif)
{
	char path[96];
	int rc;

	rc = write_features(vif);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/state", vif->fe_path);
	rc = store_watch_add(vif->b->store, path, vif->be_path, fe_state_changed, vif);
	if (rc < 0)
		return rc;
	vif->watching = true;
	snprintf(path, sizeof(path), "%s/rate", vif->be_path);
	rc = store_watch_add(vif->b->store, path, "rate", rate_changed, vif);
	if (rc < 0)
		return rc;
	vif->watching_rate = true;
	snprintf(path, sizeof(path), "%s/request-multicast-control", vif->fe_path);
	rc = store_watch_add(vif->b->store, path, "mcast", mcast_changed, vif);
	if (rc < 0)
		return rc;
	vif->watching_mcast = true;
	snprintf(path, sizeof(path), "%s/online", vif->be_path);
	rc = store_watch_add(vif->b->store, path, "online", online_changed, vif);
	if (rc < 0)
		return rc;
	vif->watching_online = true;
	return 0;
}

void back_xenbus_stop(struct back_vif *vif)
{
	char path[96];

	if (!vif->watching)
		return;
	snprintf(path, sizeof(path), "%s/state", vif->fe_path);
	store_watch_del(vif->b->store, path, vif->be_path, fe_state_changed, vif);
	vif->watching = false;
	if (vif->watching_rate) {
		snprintf(path, sizeof(path), "%s/rate", vif->be_path);
		store_watch_del(vif->b->store, path, "rate", rate_changed, vif);
		vif->watching_rate = false;
	}
	if (vif->watching_mcast) {
		snprintf(path, sizeof(path), "%s/request-multicast-control", vif->fe_path);
		store_watch_del(vif->b->store, path, "mcast", mcast_changed, vif);
		vif->watching_mcast = false;
	}
	if (vif->watching_online) {
		snprintf(path, sizeof(path), "%s/online", vif->be_path);
		store_watch_del(vif->b->store, path, "online", online_changed, vif);
		vif->watching_online = false;
	}
}
