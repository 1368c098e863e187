// SPDX-License-Identifier: MIT
/* xenbus.c - netfront's XenbusState machine: vif create, connect, reconnect, destroy */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xen/io/xs_wire.h>

#include "common/mac.h"
#include "front/front.h"
#include "front/xs.h"

/*
 * Theory of Operation
 *
 * A vif mirrors Linux xen-netfront's xenbus driver.  The toolstack (pvnetd,
 * on our "vif-create" request, or whoever prepared the directories) leaves
 *
 *   FE = /local/domain/<domid>/device/vif/<devid>:  backend, backend-id,
 *        handle, mac, state = Initialising
 *   BE = /local/domain/0/backend/vif/<domid>/<devid>: frontend, ..., state
 *
 * and the two ends then talk only through their own state keys:
 *
 *   frontend                           backend
 *   Initialising ───────────────────▶  InitWait (features written)
 *   (sees InitWait) read features, set up queues, write keys in one
 *   transaction, Connected ────────▶  maps rings, binds ports, Connected
 *   Closing ────────────────────────▶ unmaps, Closing
 *   (sees Closing) Closed ──────────▶ Closed
 *
 * With cfg.ctrl_ring and a backend offering feature-ctrl-ring, the same
 * transaction carries ctrl-ring-ref and event-channel-ctrl (ctrl.c).
 *
 * As in Linux, the frontend skips Initialised.  A backend that goes
 * Closing or Closed on its own is answered with Closed (Linux's
 * xenbus_frontend_closed()); the data calls then return -ENOTCONN until
 * pvnet_vif_reconnect() restarts from Initialising.
 *
 * Every wait is on a watch of BE/state, bounded by cfg.timeout_ms; the
 * event only says "look again", the state is always re-read.  The vif's
 * control-plane fields are written by the thread making control calls;
 * the data path reads only vif->status (atomic) and the queue it is given.
 */

/* Watch tokens of the backend's state and carrier nodes. */
#define BE_STATE_TOKEN	 "pvnet-be-state"
#define BE_CARRIER_TOKEN "pvnet-be-carrier"
/* Retries of the key-writing transaction: each EAGAIN means another writer won a race. */
#define TXN_RETRIES 64
/* Default wait for pvnetd and the backend: generous for a loaded machine. */
#define DEFAULT_TIMEOUT_MS 5000
/*
 * Default RX buffers: one ring's worth (256).  Buffers the application holds
 * then leave ring slots empty until it releases them, and every page netback
 * copies into stays among those it wrote last: with twice as many (the
 * default until 2026-12-06) the pages cycled through likely reached past a
 * CPU's L2, and with one ring's worth netback's 9000-byte streams ran 1.08x
 * faster in map mode, 65535-byte 1.13x, 64-byte the same (docs/netfront.md,
 * "Buffers and grants").
 */
#define DEFAULT_RX_BUFFERS PVNET_RING_SIZE
/* Upper bound on RX buffers per queue: 16 MiB of guest memory, far beyond any use. */
#define MAX_RX_BUFFERS 4096u

void pvnet_vif_config_default(struct pvnet_vif_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->queues = 1;
	cfg->features = PVNET_F_ALL;
	cfg->tx_buffers = PVNET_RING_SIZE;
	cfg->rx_buffers = DEFAULT_RX_BUFFERS;
	cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
}

/**
 * front_vif_broken() - mark the vif broken: the backend broke the protocol
 * @vif: the vif
 * @fmt: printf format of the reason
 *
 * The first reason wins; from then on every data call returns -EIO, and
 * threads asleep on the queues' fds are woken to make one.  Safe from any
 * data-path thread.
 */
void front_vif_broken(struct pvnet_vif *vif, const char *fmt, ...)
{
	va_list ap;

	if (atomic_flag_test_and_set(&vif->reason_set))
		return;
	va_start(ap, fmt);
	vsnprintf(vif->reason, sizeof(vif->reason), fmt, ap);
	va_end(ap);
	atomic_store_explicit(&vif->status, -EIO, memory_order_release);
	front_vif_wake(vif);
}

/**
 * front_vif_check() - the entry check of every data call
 * @vif: the vif
 * @queue: the queue number the caller gave
 * @q: set to the queue
 *
 * Return: 0, -EINVAL (no such queue), -ENOTCONN or -EIO
 */
int front_vif_check(struct pvnet_vif *vif, unsigned int queue, struct front_queue **q)
{
	int st = atomic_load_explicit(&vif->status, memory_order_acquire);

	if (st)
		return st;
	if (queue >= vif->nr_queues)
		return -EINVAL;
	*q = &vif->queues[queue];
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fe_write_state(struct pvnet_vif *vif, enum xenbus_state st)
{
	char path[FRONT_PATH_MAX + 8];
	int rc;

	snprintf(path, sizeof(path), "%s/state", vif->fe_path);
	rc = front_xs_printf(vif->xs, FRONT_XS_NO_TXN, path, "%d", (int)st);
	if (rc == 0)
		vif->state = st;
	return rc;
}

static int be_read_state(struct pvnet_vif *vif)
{
	char path[FRONT_PATH_MAX + 8];
	unsigned long v;
	int rc;

	snprintf(path, sizeof(path), "%s/state", vif->be_path);
	/* An absent state node is XenbusStateUnknown, as xenbus_read_driver_state() says. */
	rc = front_xs_read_uint(vif->xs, FRONT_XS_NO_TXN, path, XenbusStateUnknown,
				XenbusStateReconfigured, &v);
	if (rc == 0)
		vif->be_state = (enum xenbus_state)v;
	return rc;
}

/*
 * netif.h's link state: the backend's "carrier" node, "0" for no carrier
 * and "1" for carrier; absent means up (backends that do not say), and so
 * does anything unreadable (the backend is trusted, this is only a hint).
 */
static void be_read_carrier(struct pvnet_vif *vif)
{
	char path[FRONT_PATH_MAX + 8];
	unsigned long v;

	snprintf(path, sizeof(path), "%s/carrier", vif->be_path);
	vif->carrier =
	    front_xs_read_uint(vif->xs, FRONT_XS_NO_TXN, path, 1, UINT32_MAX, &v) < 0 || v != 0;
}

/*
 * The reason a backend that closed the vif left in its "error" key (pvnetd
 * writes why it disabled the vif there: docs/netback.md, Fatal errors),
 * into vif->be_error: read once into our memory, cut to fit, and every
 * byte that is not printable ASCII made '?', since it is shown to people.
 * Left empty when there is none or it cannot be read.
 */
static void be_read_error(struct pvnet_vif *vif)
{
	char path[FRONT_PATH_MAX + 8], val[XENSTORE_PAYLOAD_MAX + 1];
	int n;

	vif->be_error[0] = '\0';
	snprintf(path, sizeof(path), "%s/error", vif->be_path);
	n = front_xs_read(vif->xs, FRONT_XS_NO_TXN, path, val, sizeof(val));
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(vif->be_error))
		n = (int)sizeof(vif->be_error) - 1;
	for (int i = 0; i < n; i++)
		vif->be_error[i] = val[i] >= 0x20 && val[i] < 0x7f ? val[i] : '?';
	vif->be_error[n] = '\0';
}

/*
 * Wait until the backend is in one of the states of @want (a bit mask of
 * 1 << state).  Return 0, -ENOTCONN if it is in one of @fail instead, or
 * -ETIMEDOUT / -errno.  The state is re-read on every watch event.
 */
static int be_wait(struct pvnet_vif *vif, unsigned int want, unsigned int fail)
{
	int64_t deadline = now_ms() + vif->cfg.timeout_ms;
	int rc;

	for (;;) {
		rc = be_read_state(vif);
		if (rc < 0)
			return rc;
		if (want & (1u << vif->be_state))
			return 0;
		if (fail & (1u << vif->be_state))
			return -ENOTCONN;
		int64_t left = deadline - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		rc = front_xs_wait_event(vif->xs, BE_STATE_TOKEN, (int)left);
		if (rc < 0)
			return rc;
	}
}

#define BIT(s) (1u << (s))

static int read_be_feature(struct pvnet_vif *vif, const char *key, unsigned long *v)
{
	char path[FRONT_PATH_MAX + 48];

	snprintf(path, sizeof(path), "%s/%s", vif->be_path, key);
	/* Absent keys mean "not offered": Linux netfront's defaults. */
	return front_xs_read_uint(vif->xs, FRONT_XS_NO_TXN, path, 0, UINT32_MAX, v);
}

/* Read what the backend offers and decide the vif's features and queue count. */
static int negotiate(struct pvnet_vif *vif, bool *num_queues_key)
{
	static const struct {
		const char *key;
		uint32_t bit;
	} offers[] = {
	    {"feature-sg", PVNET_F_SG},
	    {"feature-gso-tcpv4", PVNET_F_GSO_TCPV4},
	    {"feature-gso-tcpv6", PVNET_F_GSO_TCPV6},
	    {"feature-ipv6-csum-offload", PVNET_F_IPV6_CSUM},
	    {"feature-split-event-channels", PVNET_F_SPLIT_EVTCHN},
	};
	unsigned long v;
	uint32_t offered;
	int rc;

	rc = read_be_feature(vif, "feature-rx-copy", &v);
	if (rc < 0)
		return rc;
	if (!v)
		return -EOPNOTSUPP; /* page flipping is gone from every netback */
	/* IPv4 checksum offload and rx-notify are ours to declare, not the backend's to offer. */
	offered = PVNET_F_CSUM | PVNET_F_RX_NOTIFY;
	for (size_t i = 0; i < sizeof(offers) / sizeof(offers[0]); i++) {
		rc = read_be_feature(vif, offers[i].key, &v);
		if (rc < 0)
			return rc;
		if (v)
			offered |= offers[i].bit;
	}
	vif->features = vif->cfg.features & offered;
	/* A GSO frame is larger than a page: without scatter-gather it cannot be sent. */
	if (!(vif->features & PVNET_F_SG))
		vif->features &= ~(PVNET_F_GSO_TCPV4 | PVNET_F_GSO_TCPV6);
	rc = read_be_feature(vif, "feature-ctrl-ring", &v);
	if (rc < 0)
		return rc;
	vif->ctrl_offered = v != 0;
	rc = read_be_feature(vif, "feature-multicast-control", &v);
	if (rc < 0)
		return rc;
	vif->mcast_offered = v != 0;
	if (vif->mcast_offered && (vif->cfg.features & PVNET_F_MCAST_FILTER))
		vif->features |= PVNET_F_MCAST_FILTER;
	/*
	 * Persistent grants (docs/persistent-grants.md): our buffers are
	 * granted once per queue and are the only pages our requests name, so
	 * we can accept whenever the pool fits the backend's bound.
	 */
	rc = read_be_feature(vif, "feature-persistent", &v);
	if (rc < 0)
		return rc;
	if (v && (vif->cfg.features & PVNET_F_PERSISTENT)) {
		rc = read_be_feature(vif, "persistent-max-grants", &v);
		if (rc < 0)
			return rc;
		if (vif->cfg.tx_buffers + vif->cfg.rx_buffers <= v)
			vif->features |= PVNET_F_PERSISTENT;
	}
	rc = read_be_feature(vif, "multi-queue-max-queues", &v);
	if (rc < 0)
		return rc;
	*num_queues_key = v > 0;
	vif->nr_queues = vif->cfg.queues;
	if (vif->nr_queues > (v ? v : 1))
		vif->nr_queues = v ? (unsigned int)v : 1;
	return 0;
}

static void free_queues(struct pvnet_vif *vif)
{
	front_ctrl_teardown(vif);
	if (!vif->queues)
		return;
	for (unsigned int i = 0; i < vif->nr_queues; i++)
		front_queue_teardown(&vif->queues[i]);
	free(vif->queues);
	vif->queues = NULL;
}

static int write_queue_keys(struct pvnet_vif *vif, uint32_t txn, struct front_queue *q)
{
	char dir[FRONT_PATH_MAX + 16], path[FRONT_PATH_MAX + 48];
	int rc;

	if (vif->nr_queues == 1)
		snprintf(dir, sizeof(dir), "%s", vif->fe_path);
	else
		snprintf(dir, sizeof(dir), "%s/queue-%u", vif->fe_path, q->index);
#define W(key, fmt, val)                                                                           \
	do {                                                                                       \
		snprintf(path, sizeof(path), "%s/%s", dir, key);                                   \
		rc = front_xs_printf(vif->xs, txn, path, fmt, val);                                \
		if (rc < 0)                                                                        \
			return rc;                                                                 \
	} while (0)
	W("tx-ring-ref", "%u", q->tx_ring_ref);
	W("rx-ring-ref", "%u", q->rx_ring_ref);
	if (q->split) {
		W("event-channel-tx", "%u", q->ev_tx.port);
		W("event-channel-rx", "%u", q->ev_rx.port);
	} else {
		W("event-channel", "%u", q->ev_rx.port);
	}
#undef W
	return 0;
}

/* Keys of the layout we are not using, left over from an earlier connection. */
static void remove_stale_keys(struct pvnet_vif *vif, uint32_t txn, bool num_queues_key)
{
	static const char *const top[] = {"tx-ring-ref", "rx-ring-ref", "event-channel",
					  "event-channel-tx", "event-channel-rx"};
	char path[FRONT_PATH_MAX + 48];

	/* Failures (mostly ENOENT) are harmless: the backend reads only what the layout says. */
	if (vif->nr_queues > 1) {
		for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", vif->fe_path, top[i]);
			front_xs_rm(vif->xs, txn, path);
		}
	} else if (!num_queues_key) {
		snprintf(path, sizeof(path), "%s/multi-queue-num-queues", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
	}
	if (!(vif->features & PVNET_F_PERSISTENT)) {
		snprintf(path, sizeof(path), "%s/feature-persistent", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
		snprintf(path, sizeof(path), "%s/persistent-grants", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
	}
	if (!(vif->features & PVNET_F_MCAST_FILTER)) {
		snprintf(path, sizeof(path), "%s/request-multicast-control", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
	}
	if (!vif->ctrl.active) {
		snprintf(path, sizeof(path), "%s/ctrl-ring-ref", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
		snprintf(path, sizeof(path), "%s/event-channel-ctrl", vif->fe_path);
		front_xs_rm(vif->xs, txn, path);
	}
}

static int write_keys_once(struct pvnet_vif *vif, uint32_t txn, bool num_queues_key)
{
	static const struct {
		const char *key;
		uint32_t bit;
	} ours[] = {
	    {"feature-rx-notify", PVNET_F_RX_NOTIFY},
	    {"feature-sg", PVNET_F_SG},
	    {"feature-gso-tcpv4", PVNET_F_GSO_TCPV4},
	    {"feature-gso-tcpv6", PVNET_F_GSO_TCPV6},
	    {"feature-ipv6-csum-offload", PVNET_F_IPV6_CSUM},
	};
	char path[FRONT_PATH_MAX + 48];
	int rc;

	remove_stale_keys(vif, txn, num_queues_key);
	if (num_queues_key) {
		snprintf(path, sizeof(path), "%s/multi-queue-num-queues", vif->fe_path);
		rc = front_xs_printf(vif->xs, txn, path, "%u", vif->nr_queues);
		if (rc < 0)
			return rc;
	}
	for (unsigned int i = 0; i < vif->nr_queues; i++) {
		rc = write_queue_keys(vif, txn, &vif->queues[i]);
		if (rc < 0)
			return rc;
	}
	if (vif->ctrl.active) {
		snprintf(path, sizeof(path), "%s/ctrl-ring-ref", vif->fe_path);
		rc = front_xs_printf(vif->xs, txn, path, "%u", vif->ctrl.ring_ref);
		if (rc < 0)
			return rc;
		snprintf(path, sizeof(path), "%s/event-channel-ctrl", vif->fe_path);
		rc = front_xs_printf(vif->xs, txn, path, "%u", vif->ctrl.ev.port);
		if (rc < 0)
			return rc;
	}
	snprintf(path, sizeof(path), "%s/request-rx-copy", vif->fe_path);
	rc = front_xs_write(vif->xs, txn, path, "1");
	if (rc < 0)
		return rc;
	if (vif->features & PVNET_F_PERSISTENT) {
		snprintf(path, sizeof(path), "%s/persistent-grants", vif->fe_path);
		rc = front_xs_printf(vif->xs, txn, path, "%u",
				     vif->cfg.tx_buffers + vif->cfg.rx_buffers);
		if (rc < 0)
			return rc;
		snprintf(path, sizeof(path), "%s/feature-persistent", vif->fe_path);
		rc = front_xs_write(vif->xs, txn, path, "1");
		if (rc < 0)
			return rc;
	}
	/* What we can receive is ours to say, whatever the backend can take from us. */
	for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		if (!(vif->cfg.features & ours[i].bit))
			continue;
		snprintf(path, sizeof(path), "%s/%s", vif->fe_path, ours[i].key);
		rc = front_xs_write(vif->xs, txn, path, "1");
		if (rc < 0)
			return rc;
	}
	if (!(vif->cfg.features & PVNET_F_CSUM)) {
		snprintf(path, sizeof(path), "%s/feature-no-csum-offload", vif->fe_path);
		rc = front_xs_write(vif->xs, txn, path, "1");
		if (rc < 0)
			return rc;
	}
	if (vif->features & PVNET_F_MCAST_FILTER) {
		snprintf(path, sizeof(path), "%s/request-multicast-control", vif->fe_path);
		rc = front_xs_write(vif->xs, txn, path, "1");
	}
	return rc;
}

/* Linux's talk_to_netback() transaction: all keys at once, retried while it races. */
static int write_keys(struct pvnet_vif *vif, bool num_queues_key)
{
	uint32_t txn;
	int rc = -EAGAIN;

	for (int i = 0; i < TXN_RETRIES && rc == -EAGAIN; i++) {
		rc = front_xs_txn_start(vif->xs, &txn);
		if (rc < 0)
			return rc;
		rc = write_keys_once(vif, txn, num_queues_key);
		if (rc < 0) {
			front_xs_txn_end(vif->xs, txn, false);
			return rc;
		}
		rc = front_xs_txn_end(vif->xs, txn, true);
	}
	return rc;
}

/* Initialising -> (backend InitWait) -> keys -> Connected -> (backend Connected). */
static int vif_connect(struct pvnet_vif *vif)
{
	bool num_queues_key = false;
	int rc;

	vif->be_error[0] = '\0';
	rc = fe_write_state(vif, XenbusStateInitialising);
	if (rc < 0)
		return rc;
	rc = be_wait(vif, BIT(XenbusStateInitWait), 0);
	if (rc == -ETIMEDOUT &&
	    (BIT(vif->be_state) & (BIT(XenbusStateClosing) | BIT(XenbusStateClosed)))) {
		rc = -ENOTCONN;
		be_read_error(vif);
	}
	if (rc < 0)
		return rc;
	rc = negotiate(vif, &num_queues_key);
	if (rc < 0)
		return rc;
	vif->queues = aligned_alloc(FRONT_CACHE_LINE, vif->nr_queues * sizeof(*vif->queues));
	if (!vif->queues)
		return -ENOMEM;
	memset(vif->queues, 0, vif->nr_queues * sizeof(*vif->queues));
	front_steer_init(&vif->steer, vif->steer.policy, vif->nr_queues, vif->steer.cpu,
			 vif->steer.cpu_arg);
	for (unsigned int i = 0; i < vif->nr_queues; i++) {
		rc = front_queue_setup(&vif->queues[i], vif, i);
		if (rc < 0) {
			/* teardown copes with partly set-up queues; later ones are still zeroed */
			goto free_queues;
		}
	}
	if (vif->cfg.ctrl_ring && vif->ctrl_offered) {
		rc = front_ctrl_setup(vif);
		if (rc < 0)
			goto free_queues;
	}
	rc = write_keys(vif, num_queues_key);
	if (rc < 0)
		goto free_queues;
	rc = fe_write_state(vif, XenbusStateConnected);
	if (rc < 0)
		goto free_queues;
	/* Linux xennet_connect(): post RX buffers and kick, then let traffic flow. */
	for (unsigned int i = 0; i < vif->nr_queues; i++)
		front_queue_rx_refill(&vif->queues[i]);
	rc = be_wait(vif, BIT(XenbusStateConnected),
		     BIT(XenbusStateClosing) | BIT(XenbusStateClosed));
	if (rc == -ENOTCONN)
		be_read_error(vif); /* the backend refused the connection: why */
	if (rc < 0)
		goto close;
	be_read_carrier(vif);
	atomic_store_explicit(&vif->status, 0, memory_order_release);
	return 0;

close:
	/* Our keys are out there: tell the backend not to use them, then take them back. */
	fe_write_state(vif, XenbusStateClosed);
free_queues:
	free_queues(vif);
	return rc;
}

/* Frontend-initiated close: Closing, wait, Closed, wait.  Bounded; never fails. */
static void vif_close(struct pvnet_vif *vif)
{
	int expected = 0;

	/* A broken vif keeps its -EIO; a working one stops taking data. */
	atomic_compare_exchange_strong(&vif->status, &expected, -ENOTCONN);
	if (vif->state != XenbusStateClosed) {
		if (fe_write_state(vif, XenbusStateClosing) == 0)
			be_wait(vif,
				BIT(XenbusStateClosing) | BIT(XenbusStateClosed) |
				    BIT(XenbusStateUnknown) | BIT(XenbusStateInitWait) |
				    BIT(XenbusStateInitialising),
				0);
		fe_write_state(vif, XenbusStateClosed);
	}
	be_wait(vif,
		BIT(XenbusStateClosed) | BIT(XenbusStateUnknown) | BIT(XenbusStateInitWait) |
		    BIT(XenbusStateInitialising),
		0);
}

/* Tell pvnetd the device we asked for is gone; a pvnetd without the op has nothing to undo. */
static void release_vif(struct pvnet_vif *vif)
{
	json_t *req, *reply = NULL;

	req = json_pack("{s:s, s:I}", "op", "vif-destroy", "devid", (json_int_t)vif->cfg.devid);
	if (!req)
		return;
	front_domain_call(vif->dom, req, &reply, vif->cfg.timeout_ms);
	json_decref(req);
	json_decref(reply);
}

/* Ask pvnetd, as a guest's toolstack would have at boot, to create the device. */
static int request_vif(struct pvnet_vif *vif)
{
	json_t *req, *reply = NULL;
	const char *fe;
	int rc;

	static const uint8_t none[6];
	const uint8_t *m = vif->cfg.mac;

	req = json_pack("{s:s, s:I}", "op", "vif-create", "devid", (json_int_t)vif->cfg.devid);
	if (req && memcmp(m, none, sizeof(none))) {
		char mac[18]; /* "xx:xx:xx:xx:xx:xx" and its NUL */

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
			 m[4], m[5]);
		if (json_object_set_new(req, "mac", json_string(mac)) < 0) {
			json_decref(req);
			req = NULL;
		}
	}
	if (!req)
		return -ENOMEM;
	rc = front_domain_call(vif->dom, req, &reply, vif->cfg.timeout_ms);
	json_decref(req);
	if (rc == 0) {
		fe = json_string_value(json_object_get(reply, "frontend"));
		if (!fe || fe[0] != '/' || strlen(fe) >= sizeof(vif->fe_path) ||
		    !json_is_string(json_object_get(reply, "backend")) ||
		    !json_is_string(json_object_get(reply, "mac")))
			rc = -EPROTO;
		else
			snprintf(vif->fe_path, sizeof(vif->fe_path), "%s", fe);
	}
	json_decref(reply);
	return rc;
}

/* Read the toolstack's keys from our own directory: backend, backend-id, mac. */
static int read_device(struct pvnet_vif *vif)
{
	/* mac: 17 characters; more room only to tell "too long" from "fits". */
	char path[FRONT_PATH_MAX + 16], mac[32];
	unsigned long id;
	int rc;

	snprintf(path, sizeof(path), "%s/backend", vif->fe_path);
	rc = front_xs_read(vif->xs, FRONT_XS_NO_TXN, path, vif->be_path, sizeof(vif->be_path));
	if (rc == -ENOENT)
		return -ENODEV;
	if (rc < 0)
		return rc == -E2BIG ? -EPROTO : rc;
	if (vif->be_path[0] != '/')
		return -EPROTO;
	snprintf(path, sizeof(path), "%s/backend-id", vif->fe_path);
	rc =
	    front_xs_read_uint(vif->xs, FRONT_XS_NO_TXN, path, ~0ul, DOMID_FIRST_RESERVED - 1, &id);
	if (rc == 0 && id == ~0ul)
		rc = -ENODEV;
	if (rc < 0)
		return rc;
	vif->backend_id = (uint16_t)id;
	snprintf(path, sizeof(path), "%s/mac", vif->fe_path);
	rc = front_xs_read(vif->xs, FRONT_XS_NO_TXN, path, mac, sizeof(mac));
	if (rc < 0)
		return rc == -ENOENT ? -ENODEV : rc;
	return mac_parse(mac, vif->mac);
}

static int check_config(const struct pvnet_vif_config *cfg)
{
	if (!cfg->queues || cfg->queues > PVNET_MAX_QUEUES ||
	    (cfg->features & ~(PVNET_F_ALL | PVNET_F_MCAST_FILTER)) ||
	    cfg->tx_buffers < PVNET_MAX_FRAGS || cfg->tx_buffers > PVNET_RING_SIZE ||
	    cfg->rx_buffers < PVNET_MAX_FRAGS + 1 || cfg->rx_buffers > MAX_RX_BUFFERS ||
	    cfg->timeout_ms <= 0)
		return -EINVAL;
	return 0;
}

int pvnet_vif_create(struct pvnet_domain *dom, const struct pvnet_vif_config *cfg,
		     struct pvnet_vif **out)
{
	char path[FRONT_PATH_MAX + 8];
	struct pvnet_vif *vif;
	int rc;

	*out = NULL;
	front_domain_set_vif_error(dom, "");
	rc = check_config(cfg);
	if (rc < 0)
		return rc;
	vif = calloc(1, sizeof(*vif));
	if (!vif)
		return -ENOMEM;
	vif->dom = dom;
	vif->cfg = *cfg;
	vif->state = XenbusStateInitialising;
	vif->be_state = XenbusStateUnknown;
	vif->carrier = true;
	atomic_init(&vif->status, -ENOTCONN);
	atomic_flag_clear(&vif->reason_set);
	if (cfg->prepared) {
		snprintf(vif->fe_path, sizeof(vif->fe_path), "/local/domain/%u/device/vif/%u",
			 pvnet_domain_id(dom), cfg->devid);
	} else {
		rc = request_vif(vif);
		if (rc < 0)
			goto free_vif;
	}
	rc = front_xs_open(pvnet_domain_store_path(dom), cfg->timeout_ms, &vif->xs);
	if (rc < 0)
		goto release;
	rc = read_device(vif);
	if (rc < 0)
		goto close_xs;
	snprintf(path, sizeof(path), "%s/state", vif->be_path);
	rc = front_xs_watch(vif->xs, path, BE_STATE_TOKEN);
	if (rc < 0)
		goto close_xs;
	snprintf(path, sizeof(path), "%s/carrier", vif->be_path);
	rc = front_xs_watch(vif->xs, path, BE_CARRIER_TOKEN);
	if (rc < 0)
		goto close_xs;
	rc = vif_connect(vif);
	if (rc < 0) {
		front_domain_set_vif_error(dom, vif->be_error);
		goto close_xs;
	}
	*out = vif;
	return 0;

close_xs:
	front_xs_close(vif->xs);
release:
	if (!cfg->prepared)
		release_vif(vif);
free_vif:
	free(vif);
	return rc;
}

void pvnet_vif_destroy(struct pvnet_vif *vif)
{
	if (!vif)
		return;
	vif_close(vif);
	/* The backend has let go (or the wait ran out): grants still in use are deferred. */
	free_queues(vif);
	front_xs_close(vif->xs);
	if (!vif->cfg.prepared)
		release_vif(vif);
	free(vif);
}

int pvnet_vif_reconnect(struct pvnet_vif *vif)
{
	vif_close(vif);
	free_queues(vif);
	/* Not connected until vif_connect() says so: a broken vif's reason goes with its -EIO. */
	atomic_store_explicit(&vif->status, -ENOTCONN, memory_order_release);
	vif->reason[0] = '\0';
	atomic_flag_clear(&vif->reason_set);
	return vif_connect(vif);
}

int pvnet_vif_process(struct pvnet_vif *vif)
{
	int rc = front_xs_poll_events(vif->xs);

	if (rc < 0)
		return rc;
	if (front_xs_take_event(vif->xs, BE_CARRIER_TOKEN)) {
		while (front_xs_take_event(vif->xs, BE_CARRIER_TOKEN))
			; /* one read answers them all */
		be_read_carrier(vif);
	}
	if (!front_xs_take_event(vif->xs, BE_STATE_TOKEN))
		return vif->state;
	rc = be_read_state(vif);
	if (rc < 0)
		return rc;
	/*
	 * Closing/Closed: the backend disconnects.  Unknown while we are
	 * connected: its directory is gone (the toolstack removed the device),
	 * which Linux handles as the device going away.
	 */
	if ((vif->be_state == XenbusStateClosing || vif->be_state == XenbusStateClosed ||
	     (vif->be_state == XenbusStateUnknown && vif->state == XenbusStateConnected)) &&
	    vif->state != XenbusStateClosed) {
		/* Keep a broken vif's -EIO: it says more than -ENOTCONN. */
		int expected = 0;

		be_read_error(vif);
		if (atomic_compare_exchange_strong(&vif->status, &expected, -ENOTCONN))
			front_vif_wake(vif);
		rc = fe_write_state(vif, XenbusStateClosed);
		if (rc < 0) {
			/* Our directory may be gone too: we are closed all the same. */
			vif->state = XenbusStateClosed;
		}
	}
	return vif->state;
}

int pvnet_vif_control_fd(const struct pvnet_vif *vif)
{
	return front_xs_fd(vif->xs);
}

enum xenbus_state pvnet_vif_state(const struct pvnet_vif *vif)
{
	return vif->state;
}

enum xenbus_state pvnet_vif_backend_state(const struct pvnet_vif *vif)
{
	return vif->be_state;
}

bool pvnet_vif_carrier(const struct pvnet_vif *vif)
{
	return vif->state == XenbusStateConnected && vif->carrier;
}

const char *pvnet_vif_backend_error(const struct pvnet_vif *vif)
{
	return vif->be_error[0] ? vif->be_error : NULL;
}

const char *pvnet_vif_error(const struct pvnet_vif *vif)
{
	/* Cast: atomic loads take non-const pointers in C11. */
	int st = atomic_load_explicit((atomic_int *)&vif->status, memory_order_acquire);

	return st == -EIO ? vif->reason : NULL;
}

unsigned int pvnet_vif_queues(const struct pvnet_vif *vif)
{
	return vif->nr_queues;
}

uint32_t pvnet_vif_features(const struct pvnet_vif *vif)
{
	return vif->features;
}

void pvnet_vif_mac(const struct pvnet_vif *vif, uint8_t mac[6])
{
	memcpy(mac, vif->mac, 6);
}

const char *pvnet_vif_frontend_path(const struct pvnet_vif *vif)
{
	return vif->fe_path;
}

const char *pvnet_vif_backend_path(const struct pvnet_vif *vif)
{
	return vif->be_path;
}
