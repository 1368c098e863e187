/* SPDX-License-Identifier: MIT */
/* vxlan_port.h - the VXLAN uplink: a switch port of pvnetd whose other side is another VTEP */
#ifndef PVNET_UPLINK_VXLAN_PORT_H
#define PVNET_UPLINK_VXLAN_PORT_H

#include <stdint.h>

#include "uplink/vxlan.h"

struct sw;
struct uplink_vxlan_port;

/**
 * uplink_vxlan_port_create() - open the tunnel's socket and plug it into the switch
 * @sw: the switch
 * @spec: the tunnel (uplink_vxlan_spec_parse())
 * @out: receives the port
 *
 * A UDP socket bound to the spec's local address and port (in its
 * namespace, if it names one) carries the segment's frames to and from
 * the remote endpoint.  The port's MAC limit is raised to
 * UPLINK_VXLAN_MAC_LIMIT: a whole segment may be behind it.  A reader
 * thread starts at once.  Control thread only.
 *
 * Return: 0 or -errno (logged)
 */
int uplink_vxlan_port_create(struct sw *sw, const struct uplink_vxlan_spec *spec,
			     struct uplink_vxlan_port **out);

/**
 * uplink_vxlan_port_destroy() - stop the reader, leave the switch, close the socket
 * @p: the port, or NULL
 *
 * Logs the port's own counters (drops by reason, send failures).  Call it
 * after the vifs are gone (back_destroy()), as the TAP uplink's.
 */
void uplink_vxlan_port_destroy(struct uplink_vxlan_port *p);

/**
 * uplink_vxlan_port_stat() - one of the port's own counters by name
 * @p: the port
 * @name: a drop reason's name (uplink_vxlan_drop_name()), or tx_segmented,
 *	tx_sw_csum, tx_oversize, tx_bad_offload, tx_eagain, tx_errors, tx_flooded
 *
 * Return: its value, or UINT64_MAX for an unknown name
 */
uint64_t uplink_vxlan_port_stat(struct uplink_vxlan_port *p, const char *name);

/**
 * uplink_vxlan_port_sw() - the port's switch port (its name and the switch's counters)
 * @p: the port
 *
 * Return: the switch port
 */
struct sw_port *uplink_vxlan_port_sw(const struct uplink_vxlan_port *p);

/**
 * uplink_vxlan_port_counters() - every one of the port's own counters
 * @p: the port
 * @names: receives up to @max names (static strings, as uplink_vxlan_port_stat() takes)
 * @vals: receives their values
 * @max: room at @names and @vals
 *
 * Return: how many were filled in
 */
unsigned int uplink_vxlan_port_counters(struct uplink_vxlan_port *p, const char **names,
					uint64_t *vals, unsigned int max);

/* MACs the port may learn: as the TAP uplink's. */
#define UPLINK_VXLAN_MAC_LIMIT 1024u

#endif /* PVNET_UPLINK_VXLAN_PORT_H */
