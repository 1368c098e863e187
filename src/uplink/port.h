/* SPDX-License-Identifier: MIT */
/* port.h - the TAP uplink: a switch port of pvnetd whose other side is a kernel stack or bridge */
#ifndef PVNET_UPLINK_PORT_H
#define PVNET_UPLINK_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "uplink/tap.h"

struct sw;
struct uplink_tap_port;

/**
 * uplink_tap_spec_parse() - split "tap:NAME[@NETNS]"
 * @spec: the --uplink argument
 * @name: receives NAME (IFNAMSIZ = 16 bytes)
 * @netns: receives NETNS, or "" for pvnetd's own namespace (UPLINK_NETNS_MAX + 1 bytes)
 *
 * Return: 0 or -EINVAL
 */
int uplink_tap_spec_parse(const char *spec, char *name, char *netns);

/**
 * uplink_tap_port_create() - open the TAP and plug it into the switch
 * @sw: the switch
 * @name: the TAP's name (created, or joined if it exists with the same flags)
 * @netns: the namespace to create it in, or "" for the caller's
 * @out: receives the port
 *
 * The TAP gets every offload netif has (checksum, TSO4, TSO6) and is set
 * up; the reader follows its MTU (rtnetlink), and frames from it above the
 * MTU are dropped.
 * The port's MAC limit is raised to UPLINK_TAP_MAC_LIMIT: a whole segment
 * may be behind it.  A reader thread starts at once.  Control thread only.
 *
 * Return: 0 or -errno (logged)
 */
int uplink_tap_port_create(struct sw *sw, const char *name, const char *netns,
			   struct uplink_tap_port **out);

/**
 * uplink_tap_port_destroy() - stop the reader, leave the switch, close the TAP
 * @p: the port, or NULL
 *
 * Logs the port's own counters (validation drops, write failures).  Call it
 * after the other ports are gone (back_destroy()) so that nobody holds our
 * frames any more; it still waits (bounded) for frames queued elsewhere.
 */
void uplink_tap_port_destroy(struct uplink_tap_port *p);

/**
 * uplink_tap_port_sw() - the port's switch port (its name and the switch's counters)
 * @p: the port
 *
 * Return: the switch port
 */
struct sw_port *uplink_tap_port_sw(const struct uplink_tap_port *p);

/**
 * uplink_tap_port_running() - is the port still reading and writing its TAP?
 * @p: the port
 *
 * Return: false once its TAP device was deleted (the uplink stops then)
 */
bool uplink_tap_port_running(const struct uplink_tap_port *p);

/**
 * uplink_tap_port_counters() - the port's own counters (drops by reason, write failures)
 * @p: the port
 * @names: receives up to @max names (static strings)
 * @vals: receives their values
 * @max: room at @names and @vals
 *
 * Return: how many were filled in
 */
unsigned int uplink_tap_port_counters(struct uplink_tap_port *p, const char **names, uint64_t *vals,
				      unsigned int max);

/* MACs the uplink port may learn: a segment behind a bridge (a quarter of the default FDB). */
#define UPLINK_TAP_MAC_LIMIT 1024u

#endif /* PVNET_UPLINK_PORT_H */
