/* SPDX-License-Identifier: MIT */
/* tap.h - TAP devices: multi-queue open with virtio-net headers, link setup, namespaces */
#ifndef PVNET_UPLINK_TAP_H
#define PVNET_UPLINK_TAP_H

/*
 * Theory of Operation
 *
 * The control-plane helpers shared by `pvnet attach` and pvnetd's TAP
 * uplink.  None of them is on the data path.
 *
 * Network namespaces are per thread: uplink_netns_enter() moves only the
 * calling thread (setns), and a TAP queue fd or a netlink socket stays
 * bound to the namespace it was created in whatever thread uses it later.
 * So a caller enters the namespace, opens its TAP queues and sets the link
 * up, and leaves again (uplink_netns_leave()); its unix sockets to pvnetd
 * are unaffected either way (they are file-system sockets).
 *
 * A TAP created here is not persistent: the kernel removes it when the last
 * queue fd is closed, so even a process killed with SIGKILL leaves no device
 * behind.
 */

#include <stdbool.h>
#include <stdint.h>

/* Longest namespace name we accept: far beyond what `ip netns` users type, and a short path. */
#define UPLINK_NETNS_MAX 64

/* Most TAP queues (the kernel's MAX_TAP_QUEUES is 256; a vif has at most 16). */
#define UPLINK_TAP_MAX_QUEUES 16u

/**
 * uplink_tap_open() - create (or join) a multi-queue TAP with virtio-net headers
 * @name: interface name, shorter than IFNAMSIZ
 * @queues: how many queue fds, 1..UPLINK_TAP_MAX_QUEUES
 * @excl: create only: an interface of that name already there is -EBUSY
 *	(without it, an existing multi-queue TAP is joined, e.g. a persistent
 *	one made with `ip tuntap add`)
 * @fds: receives @queues fds (non-blocking, close-on-exec)
 *
 * Flags IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE (and
 * IFF_TUN_EXCL for the first queue when @excl); the header size is set to
 * sizeof(struct virtio_net_hdr).  The device is created in the calling
 * thread's network namespace.
 *
 * Return: 0, or -errno (nothing left open)
 */
int uplink_tap_open(const char *name, unsigned int queues, bool excl, int *fds);

/**
 * uplink_tap_close() - close queue fds (the last close removes the TAP)
 * @fds: the fds; each is set to -1
 * @queues: how many
 */
void uplink_tap_close(int *fds, unsigned int queues);

/**
 * uplink_tap_carrier() - turn the TAP's carrier on or off (TUNSETCARRIER)
 * @fd: any queue fd
 * @on: carrier on
 *
 * Without carrier the kernel sees the link down (`ip link`: NO-CARRIER)
 * and stops sending on it.
 *
 * Return: 0 or -errno
 */
int uplink_tap_carrier(int fd, bool on);

/**
 * uplink_tap_offloads() - what the TAP may hand us (TUNSETOFFLOAD)
 * @fd: any queue fd
 * @uplink_off: UPLINK_OFF_* the netif side negotiated
 *
 * Always asks for TUN_F_CSUM (a blank checksum netif cannot carry is
 * computed in software), TUN_F_TSO4/6 only when netif negotiated that GSO
 * type; never ECN or UFO (netif has no such GSO types).
 *
 * Return: 0 or -errno
 */
int uplink_tap_offloads(int fd, uint32_t uplink_off);

/**
 * uplink_tap_link_set() - set a link's MAC, MTU and bring it up (rtnetlink)
 * @name: interface name in the calling thread's namespace
 * @mac: new MAC, or NULL to keep it
 * @mtu: new MTU, or 0 to keep it
 *
 * Return: 0 or -errno (from the kernel's netlink ACK)
 */
int uplink_tap_link_set(const char *name, const uint8_t *mac, uint32_t mtu);

/**
 * uplink_tap_mtu() - read a link's MTU
 * @name: interface name in the calling thread's namespace
 * @mtu: receives it
 *
 * Return: 0 or -errno
 */
int uplink_tap_mtu(const char *name, uint32_t *mtu);

/**
 * uplink_link_watch() - a netlink socket told of every link change in the calling thread's namespace
 *
 * The socket stays in that namespace whichever thread uses it later; poll
 * it for POLLIN and call uplink_link_watch_mtu().
 *
 * Return: the fd (non-blocking) or -errno
 */
int uplink_link_watch(void);

/**
 * uplink_link_watch_mtu() - consume @fd's link messages and read link @ifindex's MTU now
 * @fd: from uplink_link_watch()
 * @ifindex: the link, in @fd's namespace (a rename does not lose it)
 * @mtu: receives its MTU
 *
 * Return: 0, -ENODEV (the link is gone) or -errno
 */
int uplink_link_watch_mtu(int fd, unsigned int ifindex, uint32_t *mtu);

/**
 * uplink_link_index() - the index of link @name in the calling thread's namespace
 * @name: interface name
 * @idx: receives it
 *
 * Return: 0 or -errno
 */
int uplink_link_index(const char *name, unsigned int *idx);

/**
 * uplink_netns_name_ok() - whether @ns is a name `ip netns` takes
 * @ns: the name
 *
 * Return: true for 1..UPLINK_NETNS_MAX bytes without '/', control characters
 * or spaces, other than "." and ".."
 */
bool uplink_netns_name_ok(const char *ns);

/**
 * uplink_netns_enter() - move the calling thread into a named network namespace
 * @ns: the name (as `ip netns`: /run/netns/@ns)
 * @created: NULL: the namespace must exist; else create it when absent (runs
 *	`ip netns add`, see tap.c) and set *@created to whether it was
 * @saved: receives an fd of the thread's previous namespace
 *
 * Return: 0, -ENOENT (absent, not created), -EINVAL (bad name) or -errno
 */
int uplink_netns_enter(const char *ns, bool *created, int *saved);

/**
 * uplink_netns_delete() - remove a named network namespace (`ip netns del`)
 * @ns: the name
 *
 * Return: 0 or -errno
 */
int uplink_netns_delete(const char *ns);

/**
 * uplink_netns_leave() - move the calling thread back; closes @saved
 * @saved: from uplink_netns_enter()
 *
 * Return: 0 or -errno
 */
int uplink_netns_leave(int saved);

#endif /* PVNET_UPLINK_TAP_H */
