/* SPDX-License-Identifier: MIT */
/* pvnetd.h - state shared by the parts of the pvnetd daemon */
#ifndef PVNET_TOOLS_PVNETD_H
#define PVNET_TOOLS_PVNETD_H

#include <limits.h>
#include <stdint.h>

#include "common/ctlmsg.h"
#include "common/loop.h"

struct back;
struct ctl;
struct hv;
struct store;
struct sw;
struct sw_port;

/* vifs one domain may have, as a toolstack would limit NICs per guest (xl: 8 by default + spare). */
#define PVNETD_MAX_VIFS 16

/* --rx-guest-kib at most: 16 GiB, more than 16 vifs of 16 queues' pools at the largest queue bound. */
#define PVNETD_RX_GUEST_KIB_MAX 16777216UL

/* --uplink may be given this many times. */
#define PVNETD_MAX_UPLINKS 8u

/*
 * Most MACs --vif-mac-limit lets one vif have learnt: the table then holds
 * 256 vifs at the limit (262144 MACs in 6 MiB of slots, 12 MiB with an
 * uplink's room on top), inside the switch's bound with every uplink's.
 */
#define PVNETD_VIF_MAC_LIMIT_MAX 1024u

/**
 * struct pvnetd_uplink - one uplink port, as `pvnet status` shows it
 * @type: "tap" or "vxlan"
 * @port: its switch port (name, the switch's counters)
 * @counters: its own counters (the port type's *_port_counters())
 * @up: the port, for @counters
 */
struct pvnetd_uplink {
	const char *type;
	const char *spec; /* the --uplink argument it came from, for pvnet status */
	struct sw_port *port;
	unsigned int (*counters)(void *up, const char **names, uint64_t *vals, unsigned int max);
	void *up;
	const char *(*stopped)(void *up); /* why the uplink stopped, or NULL while it runs */
};

/**
 * struct pvnetd - the daemon: one control-plane thread runs @loop
 * @run_dir: directory of the sockets (DIR of --run-dir)
 * @loop: event loop of the control plane
 * @hv: emulated hypervisor (domains, grant tables, event channels)
 * @store: xenstore-protocol server
 * @sw: the learning switch every vif and uplink is a port of
 * @back: netback: vifs, their xenbus state machines and queue workers
 * @tx_mode: "map", "copy" or "persistent", as --tx-mode chose
 * @ctl: control socket server (domains, event channels, vifs, status)
 * @sig: signalfd for SIGTERM/SIGINT
 * @uplinks: the uplink ports, @nuplinks of them
 */
struct pvnetd {
	char run_dir[PATH_MAX / 2];
	struct loop *loop;
	struct hv *hv;
	struct store *store;
	struct sw *sw;
	struct back *back;
	const char *tx_mode;
	struct ctl *ctl;
	struct loop_watch sig;
	struct loop_watch age; /* a 1 s timerfd: the switch's MAC ageing */
	struct pvnetd_uplink uplinks[PVNETD_MAX_UPLINKS];
	unsigned int nuplinks;
};

/* Names of the sockets inside the run directory. */
#define PVNETD_STORE_SOCK  "xenstore.sock"
#define PVNETD_CTL_SOCK	   CTLMSG_SOCK_NAME
#define PVNETD_DOMAIN_SOCK "xenstore-dom%u.sock"

/**
 * ctl_create() - listen on DIR/pvnetd.sock for frontends and the pvnet tool
 * @d: the daemon, with loop, hv and store ready
 *
 * Return: the server, or NULL (logged)
 */
struct ctl *ctl_create(struct pvnetd *d);

/**
 * ctl_destroy() - close every control connection (destroying their domains) and the socket
 * @c: the server, or NULL
 */
void ctl_destroy(struct ctl *c);

#endif /* PVNET_TOOLS_PVNETD_H */
