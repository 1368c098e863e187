// SPDX-License-Identifier: MIT
// vif.c - netback's toolstack side: the backend object, vif directories, fatal errors

/*
 * Theory of Operation
 *
 * The toolstack part of pvnetd creates a vif the way libxl does: it writes
 * the frontend directory /local/domain/<domid>/device/vif/<devid>/ owned by
 * the guest (perms n<domid>,r<backend>) and the backend directory
 * /local/domain/<backend>/backend/vif/<domid>/<devid>/ owned by us and
 * readable by the guest (n<backend>,r<domid>), both with state
 * Initialising, then hands the vif to the XenbusState machine (xenbus.c).
 * Nodes created below a directory inherit its permissions.  Destroying the
 * vif removes both directories and each one above them left empty, as
 * libxl does, up to the domain's own /local/domain/<id>.
 *
 * Fatal errors (tier 2).  On the loop thread back_vif_fatal() runs at once.
 * A worker that finds a guest misbehaving calls back_queue_fatal()
 * (worker.c), which claims vif->broken (0 -> 1), writes the reason, marks
 * it ready (2, release) and writes ctl_fd; the loop thread's ctl_ready()
 * then runs back_vif_fatal() for every vif marked ready.  The vif's
 * workers stop doing anything as soon as broken is set.  A worker whose
 * queue stalls or recovers (rx.c) writes ctl_fd too, and ctl_ready()
 * brings every vif's "carrier" key up to date.
 *
 * Everything here runs on the loop thread.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "back/internal.h"
#include "store/store.h"

/*
 * Linux's default for max_queues is min(8, online CPUs), because a queue
 * there is a pair of interrupt vectors.  Ours is a worker thread that polls
 * with a yield and then sleeps, and more queues than cores must not
 * collapse throughput (issue 4: 4 and 8 queues on a 2-core machine), so
 * we offer 8 whatever the CPU count: the guest asks for what it wants, and
 * 8 bounds the memory one vif can make us allocate.
 */
#define BACK_DEFAULT_MAX_QUEUES 8

/*
 * Bytes one RX queue may hold for its guest: 8 MiB.  In map mode a
 * sender's frames hold its TX slots until they are delivered, so a queue
 * that can take what its senders have in flight never drops while their
 * own rings throttle them: they stall on ring space instead of having
 * frames thrown away here.  One sender queue has at most a ring of slots
 * in flight (1 MiB of pages); 8 MiB takes eight flows hashed onto one
 * receiver queue.  Measured with pvnet bench (map): Linux's 512 KiB
 * dropped 29 % and 9 % of the frames at 9000 and 65535 bytes with one
 * queue, 2 MiB none with one queue but 4600..25826 65535-byte frames per
 * run with 8 queues, 8 MiB none (docs/netback.md, Configuration).  Queued
 * frames are mostly the senders' mapped pages; pvnetd's own memory for
 * them is the hold pool of this size, allocated only when a receiver
 * stalls long enough for copy-outs.  The bound still caps what a guest
 * that stops consuming can make us hold (XSA-392).
 */
#define BACK_DEFAULT_RX_QUEUE_BYTES (8u << 20)

void back_config_default(struct back_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->tx_mode = BACK_TX_MAP;
	cfg->max_queues = BACK_DEFAULT_MAX_QUEUES;
	cfg->rx_queue_max_bytes = BACK_DEFAULT_RX_QUEUE_BYTES;
	cfg->rx_guest_max_bytes =
	    BACK_RX_GUEST_POOLS_DEFAULT * back_hold_pool_bytes(BACK_DEFAULT_RX_QUEUE_BYTES);
	cfg->rx_drain_timeout_ms = 10000;
	cfg->rx_drain_timeout_nonotify_ms = 30;
	cfg->rx_stall_timeout_ms = 60000;
	cfg->tx_hold_max_us = 20000;
	cfg->port_hold_max_us = 1000;
	cfg->poll_us = BACK_POLL_US_DEFAULT;
	cfg->persistent_max_grants = BACK_PERSISTENT_MAX_DEFAULT;
	cfg->backend_id = 0;
}

const char *back_tx_mode_name(enum back_tx_mode m)
{
	switch (m) {
	case BACK_TX_MAP:
		return "map";
	case BACK_TX_COPY:
		return "copy";
	case BACK_TX_PERSISTENT:
		return "persistent";
	}
	return "?";
}

/* A worker reported a broken vif or a carrier change: act on it here, on the loop thread. */
static void ctl_ready(struct loop_watch *w, uint32_t events)
{
	struct back *b = w->data;
	struct back_vif *vif, *next;
	uint64_t v;

	if (read(b->ctl_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		warn("back: reading the control eventfd: %s", strerror(errno));
	for (vif = b->vifs; vif; vif = next) {
		next = vif->next;
		if (atomic_load_explicit(&vif->broken, memory_order_acquire) == 2 &&
		    vif->state == XenbusStateConnected)
			back_vif_fatal(vif, "%s", vif->broken_reason);
		back_xenbus_carrier(vif);
	}
}

void *back_zalloc(size_t size)
{
	size_t n = (size + BACK_CACHE_LINE - 1) / BACK_CACHE_LINE * BACK_CACHE_LINE;
	void *p = aligned_alloc(BACK_CACHE_LINE, n);

	if (p)
		memset(p, 0, n);
	return p;
}

struct back *back_create(const struct back_config *cfg, struct hv *hv, struct store *store,
			 struct sw *sw)
{
	struct back *b;
	int rc;

	if (!cfg || !cfg->loop || !hv || !store || !sw || cfg->max_queues == 0 ||
	    cfg->max_queues > BACK_MAX_QUEUES_LIMIT || cfg->tx_mode > BACK_TX_PERSISTENT ||
	    cfg->persistent_max_grants == 0 ||
	    cfg->persistent_max_grants > BACK_PERSISTENT_MAX_LIMIT ||
	    cfg->rx_queue_max_bytes < 2 * 65536 ||
	    cfg->rx_guest_max_bytes < back_hold_pool_bytes(cfg->rx_queue_max_bytes) ||
	    cfg->poll_us > BACK_POLL_US_MAX) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->cfg = *cfg;
	b->hv = hv;
	b->store = store;
	b->sw = sw;
	b->ctl_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->ctl_fd < 0)
		goto fail_free;
	b->ctl_watch = (struct loop_watch){.fd = b->ctl_fd, .cb = ctl_ready, .data = b};
	rc = loop_add(cfg->loop, &b->ctl_watch, EPOLLIN);
	if (rc < 0) {
		errno = -rc;
		goto fail_close;
	}
	return b;

fail_close:
	close(b->ctl_fd);
fail_free:
	free(b);
	return NULL;
}

void back_destroy(struct back *b)
{
	if (!b)
		return;
	while (b->vifs)
		back_vif_destroy(b->vifs);
	loop_del(b->cfg.loop, &b->ctl_watch);
	close(b->ctl_fd);
	free(b);
}

struct back_vif *back_vif_find(struct back *b, domid_t domid, uint32_t devid)
{
	for (struct back_vif *vif = b->vifs; vif; vif = vif->next)
		if (vif->domid == domid && vif->devid == devid)
			return vif;
	return NULL;
}

/* Create @dir with @perms, then write each key=value pair below it. */
static int write_dir(struct store *s, const char *dir, const struct store_perm *perms,
		     const char *const *kv)
{
	char path[160];
	int rc;

	rc = store_mkdir(s, dir);
	if (rc == 0)
		rc = store_set_perms(s, dir, perms, 2);
	for (; rc == 0 && kv[0]; kv += 2) {
		snprintf(path, sizeof(path), "%s/%s", dir, kv[0]);
		rc = store_write(s, path, kv[1], strlen(kv[1]));
	}
	return rc;
}

/*
 * Remove @path, then each directory above it that is left empty, as libxl
 * does when it destroys a device (libxl__xs_path_cleanup), so that a gone
 * guest leaves no empty backend/vif/<domid> behind; never a domain's own
 * directory, /local/domain/<id>, which lives as long as its domain.
 */
static void rm_dir(struct store *s, const char *path)
{
	char dir[sizeof(((struct back_vif *)0)->be_path)];
	unsigned int n;
	char **kids, *slash;

	store_rm(s, path);
	snprintf(dir, sizeof(dir), "%s", path);
	while ((slash = strrchr(dir, '/')) != NULL) {
		unsigned int depth = 0;

		*slash = '\0';
		for (const char *c = dir; *c; c++)
			depth += *c == '/';
		if (depth <= 3 || store_directory(s, dir, &kids, &n) < 0)
			return; /* /local/domain/<id> (or above), or gone already */
		free(kids);
		if (n || store_rm(s, dir) < 0)
			return;
	}
}

static int write_dirs(struct back_vif *vif)
{
	struct back *b = vif->b;
	char mac[18], handle[12], domid[8], beid[8], state[4];
	struct store_perm fe_perms[2] = {{vif->domid, STORE_PERM_NONE},
					 {b->cfg.backend_id, STORE_PERM_READ}};
	struct store_perm be_perms[2] = {{b->cfg.backend_id, STORE_PERM_NONE},
					 {vif->domid, STORE_PERM_READ}};
	int rc;

	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", vif->mac[0], vif->mac[1],
		 vif->mac[2], vif->mac[3], vif->mac[4], vif->mac[5]);
	snprintf(handle, sizeof(handle), "%u", vif->devid);
	snprintf(domid, sizeof(domid), "%u", vif->domid);
	snprintf(beid, sizeof(beid), "%u", b->cfg.backend_id);
	snprintf(state, sizeof(state), "%d", XenbusStateInitialising);

	/* clang-format off */
	const char *const fe_kv[] = {
		"backend", vif->be_path, "backend-id", beid, "handle", handle, "mac", mac,
		"state", state, NULL,
	};
	const char *const be_kv[] = {
		"frontend", vif->fe_path, "frontend-id", domid, "handle", handle, "mac", mac,
		"online", "1", "type", "vif", "state", state,
		"carrier", "0", /* netif.h's link state: up once connected (xenbus.c) */
		NULL,
	};
	/* clang-format on */

	rc = write_dir(b->store, vif->fe_path, fe_perms, fe_kv);
	if (rc == 0)
		rc = write_dir(b->store, vif->be_path, be_perms, be_kv);
	return rc;
}

/* The guest's shared state, made with its first vif; NULL if out of memory. */
static struct back_guest *guest_get(struct back *b, domid_t domid)
{
	struct back_guest *g;

	for (g = b->guests; g; g = g->next) {
		if (g->domid == domid) {
			g->vifs++;
			return g;
		}
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->domid = domid;
	g->vifs = 1;
	g->next = b->guests;
	b->guests = g;
	return g;
}

/* One vif of the guest has gone (and its queues with their pools): the last takes the entry. */
static void guest_put(struct back *b, struct back_guest *g)
{
	struct back_guest **pp;

	if (--g->vifs > 0)
		return;
	for (pp = &b->guests; *pp != g; pp = &(*pp)->next)
		;
	*pp = g->next;
	/*
	 * Every pool went back when its queue's frames were dropped at
	 * disconnect (back_rx_drop_all()), before a queue can be leaked: a
	 * charge left is our bug, said, not a reason to stop every guest.
	 */
	if (atomic_load_explicit(&g->hold_bytes, memory_order_relaxed) != 0)
		err("back: guest %u's last vif went with %llu bytes of hold pools charged",
		    g->domid, (unsigned long long)atomic_load(&g->hold_bytes));
	free(g);
}

uint64_t back_guest_rx_hold(struct back *b, domid_t domid)
{
	for (struct back_guest *g = b->guests; g; g = g->next)
		if (g->domid == domid)
			return atomic_load_explicit(&g->hold_bytes, memory_order_relaxed);
	return 0;
}

int back_vif_create(struct back *b, domid_t domid, uint32_t devid, const uint8_t mac[6],
		    struct back_vif **out)
{
	struct back_vif *vif;
	int rc;

	if (domid == b->cfg.backend_id || domid >= DOMID_FIRST_RESERVED)
		return -EINVAL;
	if (!store_domain_is_introduced(b->store, domid))
		return -ESRCH;
	if (back_vif_find(b, domid, devid))
		return -EEXIST;
	vif = back_zalloc(sizeof(*vif));
	if (!vif)
		return -ENOMEM;
	vif->guest = guest_get(b, domid);
	if (!vif->guest) {
		free(vif);
		return -ENOMEM;
	}
	vif->b = b;
	vif->domid = domid;
	vif->devid = devid;
	memcpy(vif->mac, mac, sizeof(vif->mac));
	vif->state = XenbusStateInitialising;
	vif->ctrl.fd = -1;
	vif->mcast_log = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	vif->fatal_log = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	vif->conn_log = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	vif->warn_log = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	log_ratelimit_name(&vif->mcast_log, "vif%u.%u", domid, devid);
	log_ratelimit_name(&vif->fatal_log, "vif%u.%u", domid, devid);
	log_ratelimit_name(&vif->conn_log, "vif%u.%u", domid, devid);
	log_ratelimit_name(&vif->warn_log, "vif%u.%u", domid, devid);
	pthread_mutex_init(&vif->warn_lock, NULL);
	pthread_mutex_init(&vif->mcast_lock, NULL);
	snprintf(vif->fe_path, sizeof(vif->fe_path), "/local/domain/%u/device/vif/%u", domid,
		 devid);
	snprintf(vif->be_path, sizeof(vif->be_path), "/local/domain/%u/backend/vif/%u/%u",
		 b->cfg.backend_id, domid, devid);

	rc = write_dirs(vif);
	if (rc < 0)
		goto fail_rm;
	vif->next = b->vifs;
	b->vifs = vif;
	/* May connect at once: the watch fires on registration. */
	rc = back_xenbus_start(vif);
	if (rc < 0)
		goto fail_unwatch;
	*out = vif;
	return 0;

fail_unwatch:
	/* The watches it did add name this vif: they must go with it. */
	back_xenbus_stop(vif);
	back_xenbus_disconnect(vif);
	b->vifs = vif->next;
fail_rm:
	rm_dir(b->store, vif->fe_path);
	rm_dir(b->store, vif->be_path);
	pthread_mutex_destroy(&vif->warn_lock);
	pthread_mutex_destroy(&vif->mcast_lock);
	guest_put(b, vif->guest);
	free(vif);
	return rc;
}

void back_vif_destroy(struct back_vif *vif)
{
	struct back *b;
	struct back_vif **pp;

	if (!vif)
		return;
	b = vif->b;
	back_xenbus_stop(vif);
	back_xenbus_disconnect(vif);
	/* A vanished domain's directory is already gone: -ENOENT is fine. */
	rm_dir(b->store, vif->fe_path);
	rm_dir(b->store, vif->be_path);
	for (pp = &b->vifs; *pp; pp = &(*pp)->next) {
		if (*pp == vif) {
			*pp = vif->next;
			break;
		}
	}
	free(vif->error);
	pthread_mutex_destroy(&vif->warn_lock);
	pthread_mutex_destroy(&vif->mcast_lock);
	guest_put(b, vif->guest);
	free(vif);
}

void back_queue_warn(struct back_queue *q, const char *fmt, ...)
{
	struct back_vif *vif = q->vif;
	char msg[256];
	va_list ap;
	bool ok;

	if (!log_enabled(LOG_WARN))
		return;
	pthread_mutex_lock(&vif->warn_lock);
	ok = log_ratelimit_ok(&vif->warn_log);
	pthread_mutex_unlock(&vif->warn_lock);
	if (!ok)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_WARN, "vif%u.%u q%u: %s", vif->domid, vif->devid, q->id, msg);
}

void back_vif_fatal(struct back_vif *vif, const char *fmt, ...)
{
	char reason[256], path[160];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	log_ratelimited(&vif->fatal_log, LOG_ERR, "vif%u.%u: fatal error; disabling device: %s",
			vif->domid, vif->devid, reason);
	free(vif->error);
	vif->error = strdup(reason);
	back_stat_add(&vif->stats[0].fatal, 1);
	if (vif->nq_stats == 0)
		vif->nq_stats = 1;

	back_xenbus_disconnect(vif);
	snprintf(path, sizeof(path), "%s/error", vif->be_path);
	rc = store_write(vif->b->store, path, reason, strlen(reason));
	if (rc < 0)
		warn("vif%u.%u: writing %s: %s", vif->domid, vif->devid, path, strerror(-rc));
	back_xenbus_switch_state(vif, XenbusStateClosing);
}

const char *back_vif_error(const struct back_vif *vif)
{
	return vif->error;
}

enum xenbus_state back_vif_state(const struct back_vif *vif)
{
	return vif->state;
}

unsigned int back_vif_num_queues(const struct back_vif *vif)
{
	return vif->nq;
}

enum back_tx_mode back_vif_tx_mode(const struct back_vif *vif)
{
	return vif->mode;
}

int back_vif_features(const struct back_vif *vif, struct back_vif_features *f)
{
	uint64_t rate = atomic_load_explicit(&vif->rate, memory_order_relaxed);

	memset(f, 0, sizeof(*f));
	if (!vif->nq)
		return -ENOTCONN;
	*f = (struct back_vif_features){
	    .sg = vif->fe.sg,
	    .gso_tcpv4 = vif->fe.gso_tcpv4,
	    .gso_tcpv6 = vif->fe.gso_tcpv6,
	    .csum_ipv4 = vif->fe.csum_ipv4,
	    .csum_ipv6 = vif->fe.csum_ipv6,
	    .rx_notify = vif->fe.rx_notify,
	    .split = vif->q[0]->split,
	    .ctrl_ring = vif->ctrl.mapped,
	    .mcast_filter = atomic_load_explicit(&vif->mcast_filter, memory_order_relaxed),
	    .mcast_addrs = back_mcast_count(vif),
	    .rate_bytes = BACK_RATE_BYTES(rate),
	    .rate_usec = BACK_RATE_USEC(rate),
	};
	return 0;
}

struct sw_port *back_vif_port(const struct back_vif *vif)
{
	return vif->port;
}
