// SPDX-License-Identifier: MIT
/* ctl.c - pvnetd's control socket: domains, event channels and status for frontends and pvnet */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/ctlmsg.h"
#include "common/log.h"
#include "common/mac.h"
#include "back/back.h"
#include "hv/hv.h"
#include "store/store.h"
#include "switch/switch.h"
#include "pvnetd.h"

/*
 * Theory of Operation
 *
 * The control socket plays two parts a Xen host splits between the
 * hypervisor and the toolstack.  A frontend process connects and sends
 * "domain-create" with the memfd of its memory: that is its domain, and
 * the connection is its life line — when it closes, for whatever reason
 * (exit, SIGKILL), the domain is destroyed and everything it held is
 * released, as when Xen destroys a guest.  Event channels are allocated
 * here too (the hypercall a guest would make); the reply carries the
 * port's signal fds so that notifications afterwards never pass through
 * this thread.  `pvnet` uses the same socket, without creating a domain, for
 * status.  Everything runs on the control-plane loop thread.
 *
 * Requests are JSON objects (see common/ctlmsg.h); every field is checked
 * before use and every bad request gets an error reply, not a closed
 * connection, so a client can tell what it did wrong.
 */

/* Connections open at once: each frontend domain holds one for its life. */
#define CTL_MAX_CONNS 256

static struct log_ratelimit accept_rl = LOG_RATELIMIT_INIT;

/* Longest domain name: a namespace name (64) and an interface name (15) with room to spare. */
#define CTL_NAME_MAX 128

/* Domain 0's name, as xen-init-dom0 writes it on a Xen host (and `xl list` shows it). */
#define CTL_DOM0_NAME "Domain-0"

static const char *const dom0_keys[][2] = {
    {"/local/domain/0/name", CTL_DOM0_NAME},
    {"/local/domain/0/domid", "0"},
};

/* Captures one connection may run at once (a port has at most one anyway). */
#define CTL_MAX_CAPTURES 8

/*
 * Send buffer of a capture socket: about 60 full-size frames, or 2700
 * small ones, queued for a reader that falls behind (more are dropped and
 * counted).  Root may go past net.core.wmem_max (SO_SNDBUFFORCE).  The
 * kernel doubles the figure for its bookkeeping (ss -xm shows 8 MiB).
 */
#define CTL_CAPTURE_SNDBUF (4 << 20)

/* Capture directions as tcpdump's -Q names them. */
static const char *const dir_names[] = {
    [SW_CAPTURE_IN] = "in", [SW_CAPTURE_OUT] = "out", [SW_CAPTURE_IN | SW_CAPTURE_OUT] = "inout"};

struct ctl_conn {
	struct loop_watch w;
	struct ctl *ctl;
	domid_t domid;		     /* 0 until domain-create succeeded */
	char name[CTL_NAME_MAX + 1]; /* "" until domain-name */
	char store_sock[PATH_MAX];
	struct back_vif *vifs[PVNETD_MAX_VIFS];
	uint32_t vif_devid[PVNETD_MAX_VIFS];
	struct sw_capture *caps[CTL_MAX_CAPTURES]; /* a tool's captures (never a domain's) */
	/*
	 * A reply the client's socket had no room for, with its own copies of
	 * the descriptors it carries: sent when the socket can take it, and no
	 * request is read meanwhile (the client's backlog is its own to drain).
	 */
	json_t *held;
	int held_fds[CTLMSG_MAX_FDS];
	unsigned int nheld_fds;
	struct ctl_conn *next;
	struct ctl_conn **pprev;
};

/**
 * struct ctl - the control socket server
 * @d: the daemon
 * @listen: the listening socket
 * @path: its path
 * @conns: open connections
 * @nconns: how many
 * @destroyed: domains destroyed so far
 * @leaked: what those domains still had in use when destroyed, summed
 */
struct ctl {
	struct pvnetd *d;
	struct loop_watch listen;
	char path[PATH_MAX];
	struct ctl_conn *conns;
	unsigned int nconns;
	uint64_t destroyed;
	struct hv_leak leaked;
};

static void ctl_domain_release(struct ctl_conn *cc)
{
	struct ctl *c = cc->ctl;
	struct hv_leak leak = {0};
	domid_t domid = cc->domid;
	int rc;

	if (!domid)
		return;
	/* vifs first: netback unmaps the rings and closes its ports while the domain exists. */
	for (unsigned int i = 0; i < PVNETD_MAX_VIFS; i++) {
		back_vif_destroy(cc->vifs[i]);
		cc->vifs[i] = NULL;
	}
	if (cc->store_sock[0])
		store_unlisten(c->d->store, cc->store_sock);
	store_domain_release(c->d->store, domid);
	rc = hv_domain_destroy(c->d->hv, domid, &leak);
	if (rc < 0)
		warn("domain %u: destroy: %s", domid, strerror(-rc));
	c->destroyed++;
	c->leaked.maps_in_use += leak.maps_in_use;
	c->leaked.grants_active += leak.grants_active;
	c->leaked.evtchns_open += leak.evtchns_open;
	cc->name[0] = '\0';
	info("domain %u destroyed (still in use: %u mappings, %u grants, %u event channels)", domid,
	     leak.maps_in_use, leak.grants_active, leak.evtchns_open);
	cc->domid = 0;
}

static void ctl_conn_unhold(struct ctl_conn *cc)
{
	json_decref(cc->held);
	cc->held = NULL;
	while (cc->nheld_fds)
		close(cc->held_fds[--cc->nheld_fds]);
}

/* Close @cc: its captures stop and its domain goes, because of @why ("its client went away"). */
static void ctl_conn_close(struct ctl_conn *cc, const char *why)
{
	struct ctl *c = cc->ctl;

	ctl_conn_unhold(cc);
	for (unsigned int i = 0; i < CTL_MAX_CAPTURES; i++) {
		if (cc->caps[i])
			info("capture of %s stopped: %s", sw_capture_port(cc->caps[i]), why);
		sw_capture_stop(c->d->sw, cc->caps[i], NULL);
	}
	ctl_domain_release(cc);
	loop_del(c->d->loop, &cc->w);
	close(cc->w.fd);
	*cc->pprev = cc->next;
	if (cc->next)
		cc->next->pprev = cc->pprev;
	c->nconns--;
	free(cc);
}

/* Fetch a non-negative integer member no larger than @max. */
static int get_uint(const json_t *req, const char *key, uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(req, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static json_t *op_domain_create(struct ctl_conn *cc, const json_t *req, int *fds,
				unsigned int *nfds, int *rfds, unsigned int *nrfds)
{
	struct ctl *c = cc->ctl;
	json_t *reply;
	domid_t domid;
	uint64_t pages;
	int rc;

	if (cc->domid)
		return ctlmsg_error(EEXIST, "this connection already has domain %u", cc->domid);
	for (unsigned int i = 0; i < CTL_MAX_CAPTURES; i++)
		if (cc->caps[i])
			return ctlmsg_error(EPERM,
					    "domain-create: this connection captures %s: a "
					    "domain cannot capture",
					    sw_capture_port(cc->caps[i]));
	if (get_uint(req, "pages", HV_MAX_DOMAIN_PAGES, &pages) < 0 || pages == 0)
		return ctlmsg_error(EINVAL, "domain-create: \"pages\" must be 1..%u (1 GiB)",
				    HV_MAX_DOMAIN_PAGES);
	if (*nfds != 1)
		return ctlmsg_error(EINVAL, "domain-create: pass exactly one memfd (got %u fds)",
				    *nfds);
	rc = hv_domain_create(c->d->hv, fds[0], (uint32_t)pages, &domid);
	if (rc == -EINVAL)
		return ctlmsg_error(EINVAL,
				    "domain-create: the fd is not a memfd of exactly %" PRIu64
				    " pages sealed with F_SEAL_SHRINK and F_SEAL_GROW (nor one of "
				    "hugetlbfs)",
				    pages);
	if (rc == -ENOSPC)
		return ctlmsg_error(ENOSPC, "domain-create: every domain slot of pvnetd is in use");
	if (rc < 0)
		return ctlmsg_error(-rc, "domain-create: %s", strerror(-rc));
	*nfds = 0; /* hv owns the memfd now */
	cc->domid = domid;

	rc = store_domain_introduce(c->d->store, domid);
	if (rc < 0)
		goto release;
	snprintf(cc->store_sock, sizeof(cc->store_sock), "%s/" PVNETD_DOMAIN_SOCK, c->d->run_dir,
		 domid);
	rc = store_listen(c->d->store, c->d->loop, cc->store_sock, domid, 0600);
	if (rc < 0) {
		cc->store_sock[0] = '\0';
		goto release;
	}
	/* A reply that cannot be built (a run directory not in UTF-8): no domain either. */
	reply = json_pack("{s:i, s:s, s:s}", "domid", domid, "store", cc->store_sock, "home",
			  "/local/domain");
	if (!reply) {
		rc = -EILSEQ;
		goto release;
	}
	rfds[0] = hv_domain_gnttab_fd(c->d->hv, domid);
	*nrfds = 1;
	info("domain %u created: %" PRIu64 " pages, store socket %s", domid, pages, cc->store_sock);
	return reply;
release:
	ctl_domain_release(cc);
	return ctlmsg_error(-rc, "domain-create: %s", strerror(-rc));
}

/* A domain name: 1..CTL_NAME_MAX characters from a set that needs no quoting anywhere. */
static bool name_valid(const char *name)
{
	size_t n = strlen(name);

	return n >= 1 && n <= CTL_NAME_MAX &&
	       strspn(name,
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@-") == n;
}

/*
 * Name the domain, as a toolstack does from the guest's configuration:
 * /local/domain/<domid>/name, owned by domain 0 and readable by the guest
 * (libxl's permissions), unique among live domains (xl refuses a second
 * domain of the same name).  Naming again renames.
 */
static json_t *op_domain_name(struct ctl_conn *cc, const json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "name"));
	struct store_perm perms[2] = {{0, STORE_PERM_NONE}, {cc->domid, STORE_PERM_READ}};
	char path[64];
	int rc;

	if (!cc->domid)
		return ctlmsg_error(ESRCH, "domain-name: no domain (send domain-create)");
	if (!name || !name_valid(name))
		return ctlmsg_error(EINVAL,
				    "domain-name: \"name\" must be 1..%d characters of A-Z, a-z, "
				    "0-9, '.', '_', ':', '@' and '-'",
				    CTL_NAME_MAX);
	if (!strcmp(name, CTL_DOM0_NAME))
		return ctlmsg_error(EEXIST, "domain-name: domain 0 is called %s", name);
	for (struct ctl_conn *o = cc->ctl->conns; o; o = o->next)
		if (o != cc && o->domid && !strcmp(o->name, name))
			return ctlmsg_error(EEXIST, "domain-name: domain %u is already called %s",
					    o->domid, name);
	snprintf(path, sizeof(path), "/local/domain/%u/name", cc->domid);
	rc = store_write(cc->ctl->d->store, path, name, strlen(name));
	if (rc == 0)
		rc = store_set_perms(cc->ctl->d->store, path, perms, 2);
	if (rc < 0)
		return ctlmsg_error(-rc, "domain-name: writing %s: %s", path, strerror(-rc));
	snprintf(cc->name, sizeof(cc->name), "%s", name);
	info("domain %u is called %s", cc->domid, name);
	return json_pack("{s:i, s:s}", "domid", cc->domid, "name", cc->name);
}

static json_t *op_evtchn_alloc(struct ctl_conn *cc, const json_t *req, int *rfds,
			       unsigned int *nrfds)
{
	struct ctl *c = cc->ctl;
	evtchn_port_t port;
	uint64_t remote;
	int rc;

	if (!cc->domid)
		return ctlmsg_error(ESRCH, "evtchn-alloc-unbound: no domain (send domain-create)");
	if (get_uint(req, "remote", DOMID_FIRST_RESERVED - 1, &remote) < 0)
		return ctlmsg_error(EINVAL, "evtchn-alloc-unbound: \"remote\" must be a domid");
	rc = hv_evtchn_alloc_unbound(c->d->hv, cc->domid, (domid_t)remote, &port);
	if (rc == -ENOSPC)
		return ctlmsg_error(ENOSPC,
				    "evtchn-alloc-unbound: domain %u has as many event "
				    "channels open as a guest may (pvnetd's log says how many)",
				    cc->domid);
	if (rc == -ENFILE)
		return ctlmsg_error(ENFILE, "evtchn-alloc-unbound: the event channels pvnetd "
					    "allows all guests together are in use");
	if (rc < 0)
		return ctlmsg_error(-rc, "evtchn-alloc-unbound: %s", strerror(-rc));
	rc = hv_evtchn_guest_fds(c->d->hv, cc->domid, port, &rfds[0], &rfds[1], &rfds[2]);
	if (rc < 0) {
		hv_evtchn_close(c->d->hv, cc->domid, port);
		return ctlmsg_error(-rc, "evtchn-alloc-unbound: %s", strerror(-rc));
	}
	*nrfds = 3;
	return json_pack("{s:i}", "port", port);
}

static json_t *op_evtchn_close(struct ctl_conn *cc, const json_t *req)
{
	uint64_t port;
	int rc;

	if (!cc->domid)
		return ctlmsg_error(ESRCH, "evtchn-close: no domain (send domain-create)");
	if (get_uint(req, "port", UINT32_MAX, &port) < 0)
		return ctlmsg_error(EINVAL, "evtchn-close: \"port\" must be a port number");
	rc = hv_evtchn_close(cc->ctl->d->hv, cc->domid, (evtchn_port_t)port);
	if (rc == -EINVAL)
		return ctlmsg_error(EINVAL, "evtchn-close: domain %u has no port %" PRIu64 " open",
				    cc->domid, port);
	if (rc < 0)
		return ctlmsg_error(-rc, "evtchn-close: %s", strerror(-rc));
	return json_object();
}

static json_t *op_vif_create(struct ctl_conn *cc, const json_t *req)
{
	struct back_vif *vif;
	const char *macstr;
	uint64_t devid = 0;
	char path[128], fe[128], be[128], macbuf[18];
	uint8_t mac[6];
	int slot = -1, rc;

	if (!cc->domid)
		return ctlmsg_error(ESRCH, "vif-create: no domain (send domain-create)");
	if (json_object_get(req, "devid") && get_uint(req, "devid", 65535, &devid) < 0)
		return ctlmsg_error(EINVAL, "vif-create: \"devid\" must be 0..65535");
	macstr = json_string_value(json_object_get(req, "mac"));
	if (json_object_get(req, "mac") && (!macstr || mac_parse_guest(macstr, mac) < 0))
		return ctlmsg_error(EINVAL,
				    "vif-create: \"mac\" must be a unicast xx:xx:xx:xx:xx:xx");
	if (!macstr) {
		/* Xen's OUI, random host part, as xl does when no mac= is given. */
		mac[0] = 0x00;
		mac[1] = 0x16;
		mac[2] = 0x3e;
		if (getrandom(&mac[3], 3, 0) != 3)
			return ctlmsg_error(EIO, "vif-create: no random bytes for a MAC");
		mac[3] &= 0x7f;
	}
	for (int i = 0; i < PVNETD_MAX_VIFS; i++) {
		if (cc->vifs[i] && cc->vif_devid[i] == devid)
			return ctlmsg_error(EEXIST, "vif-create: vif %u.%u exists", cc->domid,
					    (unsigned int)devid);
		if (!cc->vifs[i] && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return ctlmsg_error(ENOSPC, "vif-create: domain %u has %d vifs already", cc->domid,
				    PVNETD_MAX_VIFS);
	rc = back_vif_create(cc->ctl->d->back, cc->domid, (uint32_t)devid, mac, &vif);
	if (rc < 0)
		return ctlmsg_error(-rc, "vif-create: %s", strerror(-rc));
	cc->vifs[slot] = vif;
	cc->vif_devid[slot] = (uint32_t)devid;
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vif/%u", cc->domid, (unsigned int)devid);
	snprintf(be, sizeof(be), "/local/domain/0/backend/vif/%u/%u", cc->domid,
		 (unsigned int)devid);
	snprintf(macbuf, sizeof(macbuf), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	snprintf(path, sizeof(path), "vif%u.%u", cc->domid, (unsigned int)devid);
	info("%s created: mac %s", path, macbuf);
	return json_pack("{s:s, s:s, s:s, s:s}", "name", path, "frontend", fe, "backend", be, "mac",
			 macbuf);
}

static json_t *op_vif_destroy(struct ctl_conn *cc, const json_t *req)
{
	uint64_t devid;

	if (!cc->domid)
		return ctlmsg_error(ESRCH, "vif-destroy: no domain (send domain-create)");
	if (get_uint(req, "devid", 65535, &devid) < 0)
		return ctlmsg_error(EINVAL, "vif-destroy: \"devid\" must be 0..65535");
	for (int i = 0; i < PVNETD_MAX_VIFS; i++) {
		if (cc->vifs[i] && cc->vif_devid[i] == devid) {
			back_vif_destroy(cc->vifs[i]);
			cc->vifs[i] = NULL;
			return json_object();
		}
	}
	return ctlmsg_error(ENOENT, "vif-destroy: no vif %u.%u", cc->domid, (unsigned int)devid);
}

static const char *const xenbus_state_names[] = {
    "Unknown", "Initialising", "InitWait",	"Initialised",	"Connected",
    "Closing", "Closed",       "Reconfiguring", "Reconfigured",
};

/* The counters the switch keeps for a port (empty without one: a vif not connected). */
static json_t *port2json(const struct sw_port *p)
{
	const struct sw_stat_desc *names;
	json_t *o = json_object();
	uint64_t vals[64];
	unsigned int n;

	if (!p)
		return o;
	names = sw_port_stats_names(&n);
	if (n > sizeof(vals) / sizeof(vals[0]))
		n = sizeof(vals) / sizeof(vals[0]);
	sw_port_stats_get(p, vals);
	for (unsigned int i = 0; i < n; i++)
		json_object_set_new(o, names[i].name, json_integer((json_int_t)vals[i]));
	return o;
}

/* What the vif's connection negotiated (empty while it is not connected). */
static json_t *features2json(const struct back_vif *vif)
{
	struct back_vif_features f;

	if (back_vif_features(vif, &f) < 0)
		return json_object();
	return json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:i, s:I, s:I}", "sg", f.sg,
			 "gso_tcpv4", f.gso_tcpv4, "gso_tcpv6", f.gso_tcpv6, "csum_ipv4",
			 f.csum_ipv4, "csum_ipv6", f.csum_ipv6, "rx_notify", f.rx_notify,
			 "split_event_channels", f.split, "ctrl_ring", f.ctrl_ring, "mcast_filter",
			 f.mcast_filter, "mcast_addrs", f.mcast_addrs, "rate_bytes",
			 (json_int_t)f.rate_bytes, "rate_usec", (json_int_t)f.rate_usec);
}

/* One vif as `pvnet show` prints it: state, reason, features, and every queue's counters. */
static json_t *vif2json(domid_t domid, const char *dom_name, uint32_t devid,
			const struct back_vif *vif)
{
	const struct back_stat_desc *names;
	unsigned int nstats, nq = back_vif_num_queues(vif);
	enum xenbus_state st = back_vif_state(vif);
	json_t *queues = json_array();
	uint64_t vals[128];
	char name[32];

	names = back_stats_names(&nstats);
	if (nstats > sizeof(vals) / sizeof(vals[0]))
		nstats = sizeof(vals) / sizeof(vals[0]);
	for (unsigned int q = 0; q < nq; q++) {
		json_t *o = json_object();

		if (back_vif_stats(vif, q, vals) == 0)
			for (unsigned int i = 0; i < nstats; i++)
				json_object_set_new(o, names[i].name,
						    json_integer((json_int_t)vals[i]));
		json_array_append_new(queues, o);
	}
	snprintf(name, sizeof(name), "vif%u.%u", domid, devid);
	return json_pack("{s:s, s:i, s:s*, s:i, s:s, s:s*, s:s*, s:s*, s:o, s:o, s:o}", "name",
			 name, "domid", domid, "domain_name", dom_name, "devid", devid, "state",
			 (unsigned int)st <
				 sizeof(xenbus_state_names) / sizeof(xenbus_state_names[0])
			     ? xenbus_state_names[st]
			     : "?",
			 "tx_mode", nq ? back_tx_mode_name(back_vif_tx_mode(vif)) : NULL, "carrier",
			 nq ? (back_vif_carrier(vif) ? "on" : "off") : NULL, "error",
			 back_vif_error(vif), "features", features2json(vif), "queues", queues,
			 "switch", port2json(back_vif_port(vif)));
}

/* Every uplink: its switch port's counters and its own. */
static json_t *uplinks2json(struct pvnetd *d)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < d->nuplinks; i++) {
		const struct pvnetd_uplink *u = &d->uplinks[i];
		const char *names[32];
		uint64_t vals[32];
		unsigned int n = u->counters(u->up, names, vals, 32);
		json_t *own = json_object();

		const char *stopped = u->stopped ? u->stopped(u->up) : NULL;

		for (unsigned int k = 0; k < n; k++)
			json_object_set_new(own, names[k], json_integer((json_int_t)vals[k]));
		json_array_append_new(a, json_pack("{s:s, s:s, s:s*, s:b, s:s*, s:o, s:o}", "name",
						   u->port->name, "type", u->type, "spec", u->spec,
						   "running", !stopped, "stopped", stopped,
						   "switch", port2json(u->port), "counters", own));
	}
	return a;
}

/* The switch-wide counters (the MAC table's), with its limits. */
static json_t *switch2json(struct sw *sw)
{
	const struct sw_stat_desc *names;
	json_t *o = json_object();
	struct sw_config cfg;
	uint64_t *vals;
	unsigned int n;

	names = sw_stats_names(&n);
	vals = calloc(n, sizeof(*vals));
	if (!o || !vals) {
		free(vals);
		json_decref(o);
		return NULL; /* json_pack() fails on it: an "out of memory" reply */
	}
	sw_stats_get(sw, vals);
	for (unsigned int i = 0; i < n; i++)
		json_object_set_new(o, names[i].name, json_integer((json_int_t)vals[i]));
	free(vals);
	sw_get_config(sw, &cfg);
	json_object_set_new(o, "fdb_max", json_integer(cfg.fdb_max));
	json_object_set_new(o, "ageing", json_integer(cfg.ageing_s));
	return o;
}

/*
 * Every capture running (of port @only, if not NULL), with its counters so
 * far: who looks at which port is no secret.
 */
static json_t *captures2json(struct ctl *c, const char *only)
{
	json_t *a = json_array();

	for (struct ctl_conn *cc = c->conns; cc; cc = cc->next) {
		for (unsigned int i = 0; i < CTL_MAX_CAPTURES; i++) {
			struct sw_capture_stats st;
			unsigned int dir;
			uint32_t snaplen;

			if (!cc->caps[i] || (only && strcmp(only, sw_capture_port(cc->caps[i]))))
				continue;
			sw_capture_stats_get(cc->caps[i], &st);
			sw_capture_info(cc->caps[i], &dir, &snaplen);
			json_array_append_new(
			    a, json_pack("{s:s, s:s, s:I, s:I, s:I, s:b}", "port",
					 sw_capture_port(cc->caps[i]), "direction", dir_names[dir],
					 "snaplen", (json_int_t)snaplen, "captured",
					 (json_int_t)st.captured, "dropped", (json_int_t)st.dropped,
					 "running", !sw_capture_ended(c->d->sw, cc->caps[i])));
		}
	}
	return a;
}

/*
 * One page of a status (a request with "cursor"): its lists of vifs and of
 * captures are read as one sequence, vifs first, and @r keeps of it, from
 * item @cursor on, as many as fit one control message beside everything
 * else @r holds; its "cursor" is where the next page starts, 0 after the
 * last.  A cursor past the end (vifs went away since the last page) gives
 * empty lists and 0.  Returns @r, an E2BIG error when not even one item
 * fits (and drops @r), or NULL without memory.
 */
static json_t *status_page(json_t *r, uint32_t cursor)
{
	static const char *const keys[2] = {"vifs", "captures"};
	json_t *all[2] = {NULL, NULL}, *page[2] = {NULL, NULL};
	size_t n[2], total, len, room, used = 0;
	uint32_t at = cursor;
	json_t *ret = NULL;

	for (int k = 0; k < 2; k++) {
		all[k] = json_incref(json_object_get(r, keys[k]));
		n[k] = json_array_size(all[k]);
		page[k] = json_array();
		if (!all[k] || !page[k] || json_object_set(r, keys[k], page[k]) < 0)
			goto out;
	}
	total = n[0] + n[1];
	/* Sized with the longest cursor the reply may carry (it is at most total). */
	if (json_object_set_new(r, "cursor", json_integer((json_int_t)total)) < 0)
		goto out;
	len = json_dumpb(r, NULL, 0, JSON_COMPACT);
	if (!len)
		goto out;
	room = len < CTLMSG_MAX ? CTLMSG_MAX - len : 0;
	while (at < total) {
		int k = at >= n[0];
		json_t *item = json_array_get(all[k], k ? at - n[0] : at);
		/* Each item with its comma: one too many for the first of a list. */
		size_t sz = json_dumpb(item, NULL, 0, JSON_COMPACT) + 1;

		if (sz == 1)
			goto out;
		if (used + sz > room)
			break;
		if (json_array_append(page[k], item) < 0)
			goto out;
		used += sz;
		at++;
	}
	if (at == cursor && at < total) {
		ret = ctlmsg_error(E2BIG, "status: item %" PRIu32 " alone would exceed %d bytes",
				   cursor, CTLMSG_MAX);
		goto out;
	}
	if (json_object_set_new(r, "cursor", json_integer(at < total ? at : 0)) < 0)
		goto out;
	ret = json_incref(r);
out:
	for (int k = 0; k < 2; k++) {
		json_decref(all[k]);
		json_decref(page[k]);
	}
	json_decref(r);
	return ret;
}

/*
 * Everything in one reply, which a control message bounds (64 KiB, some 8
 * connected vifs of 8 queues): so a request may ask for one vif only
 * ("vif": "vifD.N", with the captures of its port only), for the vifs
 * without their counters ("vifs": false), and for a page at a time
 * ("cursor", see status_page(): the list of 63 guests' 16 vifs each, with
 * a capture of each, is some 200 KB).  `pvnet show` asks for the list,
 * page by page, then for each vif.
 */
static json_t *op_status(struct ctl *c, const json_t *req)
{
	json_t *doms, *vifs, *r, *want = json_object_get(req, "vif");
	json_t *list = json_object_get(req, "vifs");
	const char *only = json_string_value(want);
	bool brief = json_is_false(list), paged = json_object_get(req, "cursor") != NULL;
	uint64_t cursor = 0;
	struct hv_stats st;
	char name[32];

	if (want && !only)
		return ctlmsg_error(EINVAL, "status: \"vif\" must be a name like vif1.0");
	if (list && !json_is_boolean(list))
		return ctlmsg_error(EINVAL, "status: \"vifs\" must be true or false");
	if (paged && (only || get_uint(req, "cursor", UINT32_MAX, &cursor) < 0))
		return ctlmsg_error(EINVAL, only ? "status: \"cursor\" pages the list of all vifs, "
						   "not one vif"
						 : "status: \"cursor\" must be 0 or the \"cursor\" "
						   "of the last reply");
	doms = json_array();
	vifs = json_array();
	hv_stats(c->d->hv, &st);
	for (struct ctl_conn *cc = c->conns; cc; cc = cc->next) {
		if (!cc->domid)
			continue;
		json_array_append_new(
		    doms,
		    json_pack("{s:i, s:s, s:s*, s:I}", "domid", cc->domid, "store", cc->store_sock,
			      "name", cc->name[0] ? cc->name : NULL, "rx_hold_bytes",
			      (json_int_t)back_guest_rx_hold(c->d->back, cc->domid)));
		for (int i = 0; i < PVNETD_MAX_VIFS; i++) {
			if (!cc->vifs[i])
				continue;
			snprintf(name, sizeof(name), "vif%u.%u", cc->domid, cc->vif_devid[i]);
			if (only && strcmp(only, name))
				continue;
			if (brief)
				json_array_append_new(vifs, json_pack("{s:s, s:i, s:i}", "name",
								      name, "domid", cc->domid,
								      "devid", cc->vif_devid[i]));
			else
				json_array_append_new(
				    vifs, vif2json(cc->domid, cc->name[0] ? cc->name : NULL,
						   cc->vif_devid[i], cc->vifs[i]));
		}
	}
	r = json_pack(
	    "{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, "
	    "s:{s:I, s:I, s:I, s:I}}",
	    "version", PVNET_VERSION, "tx_mode", c->d->tx_mode, "domains", doms, "vifs", vifs,
	    "uplinks", uplinks2json(c->d), "captures", captures2json(c, only), "switch",
	    switch2json(c->d->sw), "hv", "domains", (json_int_t)st.domains, "zombies",
	    (json_int_t)st.zombies, "maps_in_use", (json_int_t)st.maps_in_use, "evtchns_open",
	    (json_int_t)st.evtchns_open, "grant_copy_ops", (json_int_t)st.copy_ops, "grant_map_ops",
	    (json_int_t)st.map_ops, "grant_unmap_ops", (json_int_t)st.unmap_ops, "grant_batches",
	    (json_int_t)st.batches, "destroyed", "domains", (json_int_t)c->destroyed, "maps_in_use",
	    (json_int_t)c->leaked.maps_in_use, "grants_active", (json_int_t)c->leaked.grants_active,
	    "evtchns_open", (json_int_t)c->leaked.evtchns_open);
	return r && paged ? status_page(r, (uint32_t)cursor) : r;
}

/*
 * Entries of the MAC table one `fdb` reply carries.  An entry is some 60
 * bytes of JSON and at most 150 (a TAP uplink's name of 15 bytes, each
 * escaped as \uXXXX): 256 of them stay well inside one control message.
 */
#define CTL_FDB_PAGE 256

/*
 * The switch's MAC table (`pvnet fdb`), CTL_FDB_PAGE entries a request:
 * "cursor" (0, or absent, at first) says where to go on, and the reply's
 * "cursor" is where the next request does, 0 once the table is read.  A
 * tool's connection only, as for captures: which MAC sits behind which
 * port is the host's to know, and a request scans the whole table.
 */
static json_t *op_fdb(struct ctl_conn *cc, const json_t *req)
{
	const char *port = json_string_value(json_object_get(req, "port"));
	struct sw_fdb_entry *e;
	uint64_t cursor = 0;
	struct sw_config cfg;
	uint32_t cur;
	json_t *a;
	int n;

	if (cc->domid)
		return ctlmsg_error(EPERM, "fdb: domain %u's connection may not read the MAC table",
				    cc->domid);
	if (json_object_get(req, "port") && (!port || !*port || strlen(port) >= SW_PORT_NAME_MAX))
		return ctlmsg_error(EINVAL, "fdb: \"port\" must be a port name (e.g. vif1.0; pvnet "
					    "status lists them)");
	if (json_object_get(req, "cursor") && get_uint(req, "cursor", UINT32_MAX, &cursor) < 0)
		return ctlmsg_error(EINVAL, "fdb: \"cursor\" must be 0 or the \"cursor\" of the "
					    "last reply");
	e = calloc(CTL_FDB_PAGE, sizeof(*e));
	if (!e)
		return NULL;
	cur = (uint32_t)cursor;
	n = sw_fdb_dump(cc->ctl->d->sw, port, &cur, e, CTL_FDB_PAGE);
	if (n < 0) {
		free(e);
		if (n == -ENOENT)
			return ctlmsg_error(ENOENT, "fdb: no port \"%s\" on the switch", port);
		return ctlmsg_error(EINVAL, "fdb: \"cursor\" %" PRIu64 " is past the table",
				    cursor);
	}
	a = json_array();
	for (int i = 0; i < n && a; i++) {
		char mac[18];

		snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", e[i].mac[0],
			 e[i].mac[1], e[i].mac[2], e[i].mac[3], e[i].mac[4], e[i].mac[5]);
		if (json_array_append_new(a, json_pack("{s:s, s:s, s:I}", "mac", mac, "port",
						       e[i].port_name, "age",
						       (json_int_t)e[i].age_s)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	free(e);
	if (!a)
		return NULL; /* an "out of memory" error */
	sw_get_config(cc->ctl->d->sw, &cfg);
	return json_pack("{s:o, s:I, s:I, s:I, s:I}", "entries", a, "cursor", (json_int_t)cur,
			 "count", (json_int_t)sw_fdb_count(cc->ctl->d->sw), "max",
			 (json_int_t)cfg.fdb_max, "ageing", (json_int_t)cfg.ageing_s);
}

/*
 * Start a capture of a switch port (`pvnet capture`): the reply carries the
 * reading end of a SOCK_SEQPACKET pair, whose datagrams hold one record per
 * frame (struct sw_capture_hdr, the frame's first bytes, padding to 8),
 * as many as fit in 64 KiB (switch/capture.c).  Only a tool's
 * connection may: a guest must not see other guests' frames.  The capture
 * lives until capture-stop or until the connection closes.
 */
static json_t *op_capture_start(struct ctl_conn *cc, const json_t *req, int *rfds,
				unsigned int *nrfds, bool *owned)
{
	const char *port = json_string_value(json_object_get(req, "port"));
	const char *dirname = json_string_value(json_object_get(req, "direction"));
	unsigned int dir = SW_CAPTURE_IN | SW_CAPTURE_OUT, slot;
	struct sw_capture *cap;
	uint64_t snaplen = SW_CAPTURE_SNAPMAX;
	int sv[2], buf = CTL_CAPTURE_SNDBUF, rc;

	if (cc->domid)
		return ctlmsg_error(EPERM, "capture-start: domain %u's connection may not capture",
				    cc->domid);
	if (!port || !*port || strlen(port) >= SW_PORT_NAME_MAX)
		return ctlmsg_error(EINVAL, "capture-start: \"port\" must be a port name (e.g. "
					    "vif1.0; pvnet status lists them)");
	if (json_object_get(req, "direction")) {
		for (dir = 1; dir < 4; dir++)
			if (dirname && !strcmp(dirname, dir_names[dir]))
				break;
		if (dir == 4)
			return ctlmsg_error(EINVAL, "capture-start: \"direction\" must be \"in\", "
						    "\"out\" or \"inout\"");
	}
	if (json_object_get(req, "snaplen") &&
	    (get_uint(req, "snaplen", SW_CAPTURE_SNAPMAX, &snaplen) < 0 || !snaplen))
		return ctlmsg_error(EINVAL, "capture-start: \"snaplen\" must be 1..%u",
				    SW_CAPTURE_SNAPMAX);
	/* Captures whose port went away have ended: their slots (and names) are free again. */
	for (slot = 0; slot < CTL_MAX_CAPTURES; slot++)
		if (cc->caps[slot] && sw_capture_ended(cc->ctl->d->sw, cc->caps[slot])) {
			sw_capture_stop(cc->ctl->d->sw, cc->caps[slot], NULL);
			cc->caps[slot] = NULL;
		}
	for (slot = 0; slot < CTL_MAX_CAPTURES && cc->caps[slot]; slot++)
		;
	if (slot == CTL_MAX_CAPTURES)
		return ctlmsg_error(EMFILE,
				    "capture-start: this connection runs %d captures already",
				    CTL_MAX_CAPTURES);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ctlmsg_error(errno, "capture-start: socketpair: %s", strerror(errno));
	if (setsockopt(sv[1], SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) < 0)
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	shutdown(sv[1], SHUT_RD);
	rc = sw_capture_start(cc->ctl->d->sw, port, dir, (uint32_t)snaplen, sv[1], &cap);
	if (rc < 0) {
		close(sv[0]);
		close(sv[1]);
		if (rc == -ENOENT)
			return ctlmsg_error(ENOENT, "capture-start: no port \"%s\" on the switch",
					    port);
		if (rc == -EBUSY)
			return ctlmsg_error(
			    EBUSY, "capture-start: port \"%s\" is being captured already", port);
		return ctlmsg_error(-rc, "capture-start: %s", strerror(-rc));
	}
	cc->caps[slot] = cap;
	rfds[0] = sv[0];
	*nrfds = 1;
	*owned = true;
	info("capture of %s started (%s, snap length %" PRIu64 ")", port, dir_names[dir], snaplen);
	return json_pack("{s:s, s:s, s:I}", "port", port, "direction", dir_names[dir], "snaplen",
			 (json_int_t)snaplen);
}

/*
 * How many bytes of @s, at most @max, an error message may quote: cut
 * before a UTF-8 sequence, never through one (the reply is JSON, and a
 * string with half a character in it would not be built at all).
 */
static int quote_len(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return (int)n;
}

/* Stop this connection's capture of a port; the reply has its counters. */
static json_t *op_capture_stop(struct ctl_conn *cc, const json_t *req)
{
	const char *port = json_string_value(json_object_get(req, "port"));
	struct sw_capture_stats st;

	if (!port)
		return ctlmsg_error(EINVAL, "capture-stop: \"port\" must be a port name");
	for (unsigned int i = 0; i < CTL_MAX_CAPTURES; i++) {
		if (!cc->caps[i] || strcmp(sw_capture_port(cc->caps[i]), port))
			continue;
		sw_capture_stop(cc->ctl->d->sw, cc->caps[i], &st);
		cc->caps[i] = NULL;
		info("capture of %s stopped: %" PRIu64 " frames captured, %" PRIu64 " dropped",
		     port, st.captured, st.dropped);
		return json_pack("{s:s, s:I, s:I}", "port", port, "captured",
				 (json_int_t)st.captured, "dropped", (json_int_t)st.dropped);
	}
	return ctlmsg_error(ENOENT, "capture-stop: this connection does not capture \"%.*s\"",
			    quote_len(port, SW_PORT_NAME_MAX), port);
}

static json_t *ctl_dispatch(struct ctl_conn *cc, const json_t *req, int *fds, unsigned int *nfds,
			    int *rfds, unsigned int *nrfds, bool *owned)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (!op)
		return ctlmsg_error(EINVAL, "request has no \"op\" string");
	if (!strcmp(op, "domain-create"))
		return op_domain_create(cc, req, fds, nfds, rfds, nrfds);
	if (!strcmp(op, "domain-name"))
		return op_domain_name(cc, req);
	if (!strcmp(op, "evtchn-alloc-unbound"))
		return op_evtchn_alloc(cc, req, rfds, nrfds);
	if (!strcmp(op, "evtchn-close"))
		return op_evtchn_close(cc, req);
	if (!strcmp(op, "vif-create"))
		return op_vif_create(cc, req);
	if (!strcmp(op, "vif-destroy"))
		return op_vif_destroy(cc, req);
	if (!strcmp(op, "status"))
		return op_status(cc->ctl, req);
	if (!strcmp(op, "fdb"))
		return op_fdb(cc, req);
	if (!strcmp(op, "capture-start"))
		return op_capture_start(cc, req, rfds, nrfds, owned);
	if (!strcmp(op, "capture-stop"))
		return op_capture_stop(cc, req);
	return ctlmsg_error(EOPNOTSUPP, "unknown op \"%.*s\"", quote_len(op, 64), op);
}

/*
 * Send @reply with @rfds (borrowed: the kernel duplicates them into the
 * message); when the socket is full, hold it with copies of the fds and
 * wait for room.  Return 0 (sent or held) or -errno (the connection is done).
 */
static int ctl_reply(struct ctl_conn *cc, json_t *reply, const int *rfds, unsigned int nrfds)
{
	int rc = ctlmsg_send(cc->w.fd, reply, rfds, nrfds);

	if (rc != -EAGAIN)
		return rc;
	for (unsigned int i = 0; i < nrfds; i++) {
		int fd = fcntl(rfds[i], F_DUPFD_CLOEXEC, 0);

		if (fd < 0) {
			rc = -errno;
			ctl_conn_unhold(cc);
			return rc;
		}
		cc->held_fds[cc->nheld_fds++] = fd;
	}
	cc->held = json_incref(reply);
	rc = loop_mod(cc->ctl->d->loop, &cc->w, EPOLLOUT);
	if (rc < 0)
		ctl_conn_unhold(cc);
	return rc;
}

/* The socket has room again: send the held reply, then read requests again. */
static void ctl_send_held(struct ctl_conn *cc)
{
	int rc = ctlmsg_send(cc->w.fd, cc->held, cc->held_fds, cc->nheld_fds);

	if (rc == -EAGAIN)
		return;
	ctl_conn_unhold(cc);
	if (rc < 0 || loop_mod(cc->ctl->d->loop, &cc->w, EPOLLIN | EPOLLRDHUP) < 0)
		ctl_conn_close(cc, "its client went away");
}

static void on_conn(struct loop_watch *w, uint32_t events)
{
	struct ctl_conn *cc = w->data;
	int fds[CTLMSG_MAX_FDS], rfds[CTLMSG_MAX_FDS];
	unsigned int nfds = 0, nrfds = 0;
	bool owned = false; /* rfds are ours to close once replied, not borrowed */
	json_t *req, *reply;
	char why[JSON_ERROR_TEXT_LENGTH + 64] = "";
	int rc;

	if (cc->held) {
		ctl_send_held(cc);
		return;
	}
	rc = ctlmsg_recv_why(w->fd, &req, fds, &nfds, why, sizeof(why));
	if (rc == -EAGAIN)
		return;
	if (rc == -EBADMSG || (rc == -ECONNRESET && !(events & (EPOLLHUP | EPOLLRDHUP)))) {
		/* (ECONNRESET without a hang-up: an empty datagram) */
		reply = ctlmsg_error(EBADMSG, "bad request: %s", why[0] ? why : "empty");
		rc = reply ? ctl_reply(cc, reply, NULL, 0) : -ENOMEM;
		json_decref(reply);
		if (rc < 0)
			ctl_conn_close(cc, "its client went away");
		return;
	}
	if (rc < 0) {
		ctl_conn_close(cc, "its client went away");
		return;
	}
	reply = ctl_dispatch(cc, req, fds, &nfds, rfds, &nrfds, &owned);
	json_decref(req);
	while (nfds)
		close(fds[--nfds]);
	if (!reply) {
		reply = ctlmsg_error(ENOMEM, "out of memory");
		while (owned && nrfds)
			close(rfds[--nrfds]);
		nrfds = 0; /* an error reply carries no descriptor */
	}
	rc = reply ? ctl_reply(cc, reply, rfds, nrfds) : -ENOMEM;
	json_decref(reply);
	/* Sent (the kernel holds its copies) or held (with our copies): ours go. */
	while (owned && nrfds)
		close(rfds[--nrfds]);
	if (rc == -EMSGSIZE) {
		/* Too big for one message (a status of many vifs): say so, keep the connection. */
		reply = ctlmsg_error(E2BIG,
				     "the reply would exceed %d bytes: ask for less "
				     "(status: \"vif\", or \"vifs\": false and \"cursor\")",
				     CTLMSG_MAX);
		rc = reply ? ctl_reply(cc, reply, NULL, 0) : -ENOMEM;
		json_decref(reply);
	}
	/* Other reply fds are borrowed from hv: the kernel duplicated them into the message. */
	if (rc < 0) {
		/* A client that went away needs no word; anything else would be a mystery. */
		if (rc != -EPIPE && rc != -ECONNRESET)
			warn("control socket: a reply%s could not be sent (%s): closing the "
			     "connection%s",
			     cc->domid ? " to a domain's connection" : "", strerror(-rc),
			     cc->domid ? ", which destroys the domain" : "");
		ctl_conn_close(cc, "its client went away");
	}
}

static void on_accept(struct loop_watch *w, uint32_t events)
{
	struct ctl *c = w->data;
	struct ctl_conn *cc;
	int fd;

	fd = loop_accept(w->fd, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (fd == -EMFILE || fd == -ENFILE)
			log_ratelimited(&accept_rl, LOG_WARN,
					"control socket: out of file descriptors, a connection "
					"refused");
		return;
	}
	if (c->nconns >= CTL_MAX_CONNS) {
		json_t *e = ctlmsg_error(EMFILE, "pvnetd has %u control connections open, its most",
					 c->nconns);

		log_ratelimited(&accept_rl, LOG_WARN,
				"control socket: %u connections open, refusing another", c->nconns);
		/* Said before the close, so that the client reads why instead of a reset. */
		if (e)
			ctlmsg_send(fd, e, NULL, 0);
		json_decref(e);
		close(fd);
		return;
	}
	cc = calloc(1, sizeof(*cc));
	if (!cc) {
		close(fd);
		return;
	}
	cc->ctl = c;
	cc->w.fd = fd;
	cc->w.cb = on_conn;
	cc->w.data = cc;
	/* EPOLLRDHUP tells a hang-up from an empty request (both read as 0 bytes). */
	if (loop_add(c->d->loop, &cc->w, EPOLLIN | EPOLLRDHUP) < 0) {
		close(fd);
		free(cc);
		return;
	}
	cc->next = c->conns;
	if (cc->next)
		cc->next->pprev = &cc->next;
	cc->pprev = &c->conns;
	c->conns = cc;
	c->nconns++;
}

struct ctl *ctl_create(struct pvnetd *d)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ctl *c;
	int fd;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->d = d;
	/*
	 * Domain 0's own directory, as xen-init-dom0 writes it when a Xen host
	 * boots: its name and domid, owned by it and hidden from guests (the
	 * store's default for a node dom0 makes).
	 */
	for (size_t i = 0; i < sizeof(dom0_keys) / sizeof(dom0_keys[0]); i++) {
		if (store_write(d->store, dom0_keys[i][0], dom0_keys[i][1],
				strlen(dom0_keys[i][1])) < 0) {
			err("store: %s could not be written", dom0_keys[i][0]);
			goto free_ctl;
		}
	}
	if ((size_t)snprintf(c->path, sizeof(c->path), "%s/%s", d->run_dir, PVNETD_CTL_SOCK) >=
	    sizeof(sa.sun_path)) {
		err("control socket path %s/%s is too long", d->run_dir, PVNETD_CTL_SOCK);
		goto free_ctl;
	}
	/*
	 * Bind under a temporary name and rename once listening, so the path
	 * appears only when connect() can succeed: whoever waits for the file
	 * (a frontend, a test) never sees ECONNREFUSED.
	 */
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.new", c->path) >=
	    sizeof(sa.sun_path)) {
		err("control socket path %s is too long", c->path);
		goto free_ctl;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto free_ctl;
	unlink(sa.sun_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(sa.sun_path, 0600) < 0 ||
	    listen(fd, 64) < 0 || rename(sa.sun_path, c->path) < 0) {
		err("control socket %s: %s", c->path, strerror(errno));
		unlink(sa.sun_path);
		goto close_fd;
	}
	c->listen.fd = fd;
	c->listen.cb = on_accept;
	c->listen.data = c;
	if (loop_add(d->loop, &c->listen, EPOLLIN) < 0)
		goto unlink_path;
	return c;

unlink_path:
	unlink(c->path);
close_fd:
	close(fd);
free_ctl:
	free(c);
	return NULL;
}

void ctl_destroy(struct ctl *c)
{
	if (!c)
		return;
	while (c->conns)
		ctl_conn_close(c->conns, "pvnetd stops");
	loop_del(c->d->loop, &c->listen);
	close(c->listen.fd);
	unlink(c->path);
	free(c);
}
