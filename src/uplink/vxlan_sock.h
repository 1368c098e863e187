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
 */

#include <stdint.h>

#include "uplink/vxlan.h"

/**
 * struct uplink_vxlan_socks - a tunnel's sockets
 * @fd: bound to dstport: receives, and sends if a source port is dstport
 * @src_fd: the sending sockets, @nsrc of them (one may be @fd)
 * @src_port: the source port each is bound to
 * @nsrc: sending sockets
 */
struct uplink_vxlan_socks {
	int fd;
	int src_fd[UPLINK_VXLAN_SRCPORTS_MAX];
	uint16_t src_port[UPLINK_VXLAN_SRCPORTS_MAX];
	unsigned int nsrc;
};

/**
 * uplink_vxlan_socks_open() - make and bind a tunnel's sockets, nonblocking
 * @sp: the tunnel (family, local address, dstport, srcport range, netns)
 * @s: receives the sockets; on failure, those made are in it to close
 *
 * Each failure is logged with the uplink's name.
 *
 * Return: 0, or -errno (-EADDRINUSE: every port of a share is taken)
 */
int uplink_vxlan_socks_open(const struct uplink_vxlan_spec *sp, struct uplink_vxlan_socks *s);

/**
 * uplink_vxlan_socks_close() - close every socket in @s (each once), and mark them closed
 * @s: from uplink_vxlan_socks_open(), or with @fd -1 and @nsrc 0
 */
void uplink_vxlan_socks_close(struct uplink_vxlan_socks *s);

#endif
