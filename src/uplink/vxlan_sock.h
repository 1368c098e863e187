/* SPDX-License-Identifier: MIT */
/* vxlan_sock.h - the VXLAN uplink's UDP sockets: one that receives, up to eight that send */
#ifndef PVNET_UPLINK_VXLAN_SOCK_H
#define PVNET_UPLINK_VXLAN_SOCK_H

/*
 * A tunnel receives on one socket, bound to its local address and
 * dstport, and sends from up to UPLINK_VXLAN_SRCPORTS_MAX sockets, each
 * bound to a source port of its own, so that a frame's flow picks its
 * source port (vxlan_port.c).  Without a srcport range the kernel picks
 * the ports; with one, the range is cut into shares and each socket takes
 * the first port of its share it can bind (dstport itself is the
 * receiving socket, which then also sends).  All of them are made in the
 * spec's network namespace and stay there, whatever thread uses them.
 *
 * Uplinks that share their receiving address and port (spec.share, each
 * of another VNI; uplink_vxlan_spec_shares()) still have a socket each,
 * and their own reader threads: the sockets form one SO_REUSEPORT group,
 * and a classic BPF program attached to the group has the kernel give
 * each datagram to the socket of its VNI (the VNI read at bytes 4-6 of the
 * UDP payload; a datagram of another VNI, or too short to have one, goes
 * to the first running uplink's socket, which drops and counts it as
 * rx_bad_vni or rx_runt, as a lone uplink does; the program does not run
 * for broadcast and multicast, which reach every socket, docs/vxlan.md).  The program names sockets by
 * their place in the group, which is the order they were bound in until
 * one closes (the kernel then moves the group's last socket into its
 * place): so the socket of an uplink that stops is kept open, and never
 * picked, until the group's last uplink stops.  The program is made again
 * whenever an uplink joins or leaves.  The first socket of a group binds
 * only if nothing else holds the port (tried first without SO_REUSEPORT),
 * so that a port another program has is refused as a lone uplink's is.
 * Another program of the same user that binds the port with SO_REUSEPORT
 * later joins the group after pvnetd's uplinks and is never picked; one
 * that does so while pvnetd starts them, between two of its binds, takes a
 * place the program gives an uplink, and that uplink's datagrams (what the
 * uplinks receive is safe from anyone else's: each checks the VNI and the
 * source of what it reads).  A lock keeps the groups.
 */

#include <stdbool.h>
#include <stdint.h>

#include "uplink/vxlan.h"

/**
 * struct uplink_vxlan_socks - a tunnel's sockets
 * @fd: bound to dstport: receives, and sends if a source port is dstport
 * @src_fd: the sending sockets, @nsrc of them (one may be @fd)
 * @src_port: the source port each is bound to
 * @nsrc: sending sockets
 * @shared: @fd is in a group of uplinks sharing its port
 */
struct uplink_vxlan_socks {
	int fd;
	int src_fd[UPLINK_VXLAN_SRCPORTS_MAX];
	uint16_t src_port[UPLINK_VXLAN_SRCPORTS_MAX];
	unsigned int nsrc;
	bool shared;
};

/* Uplinks one group (one address and port) may hold, and groups at once. */
#define UPLINK_VXLAN_SHARE_MAX	  16u
#define UPLINK_VXLAN_SHARE_GROUPS 16u

/**
 * uplink_vxlan_socks_open() - make and bind a tunnel's sockets, nonblocking
 * @sp: the tunnel (family, local address, dstport, srcport range, netns)
 * @s: receives the sockets; on failure, those made are in it to close
 *
 * Each failure is logged with the uplink's name.
 *
 * Return: 0, or -errno (-EADDRINUSE: the port, or every port of a share,
 * is taken; -ENOSPC: too many uplinks share a port, or too many ports are
 * shared)
 */
int uplink_vxlan_socks_open(const struct uplink_vxlan_spec *sp, struct uplink_vxlan_socks *s);

/**
 * uplink_vxlan_socks_close() - close every socket in @s (each once), and mark them closed
 * @s: from uplink_vxlan_socks_open(), or with @fd -1 and @nsrc 0
 * @name: the uplink's, for the log
 *
 * A shared socket leaves its group, whose other uplinks go on receiving.
 */
void uplink_vxlan_socks_close(struct uplink_vxlan_socks *s, const char *name);

#endif
