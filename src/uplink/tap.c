// SPDX-License-Identifier: MIT
/* tap.c - TAP devices: multi-queue open with virtio-net headers, link setup, namespaces */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <linux/virtio_net.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uplink/tap.h"
#include "uplink/vnet.h"

extern char **environ;

/* One RTM_NEWLINK request or its ACK: a few attributes, far below a page. */
#define NL_BUF 8192

/* The index of @name in the calling thread's namespace (ifreq ioctl: linux/if.h, not net/if.h). */
static int ifindex(const char *name, unsigned int *idx)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0)
		rc = -errno;
	else
		*idx = (unsigned int)ifr.ifr_ifindex;
	close(fd);
	return rc;
}

int uplink_tap_open(const char *name, unsigned int queues, bool excl, int *fds)
{
	struct ifreq ifr;
	int hdrsz = (int)sizeof(struct virtio_net_hdr);
	unsigned int i;
	int rc = 0;

	if (!name || !*name || strlen(name) >= IFNAMSIZ || queues == 0 ||
	    queues > UPLINK_TAP_MAX_QUEUES)
		return -EINVAL;
	for (i = 0; i < queues; i++)
		fds[i] = -1;
	for (i = 0; i < queues; i++) {
		fds[i] = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fds[i] < 0) {
			rc = -errno;
			break;
		}
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
		if (excl && i == 0)
			ifr.ifr_flags |= IFF_TUN_EXCL; /* the other queues join this one */
		if (ioctl(fds[i], TUNSETIFF, &ifr) < 0 ||
		    ioctl(fds[i], TUNSETVNETHDRSZ, &hdrsz) < 0) {
			rc = -errno;
			break;
		}
	}
	if (rc < 0)
		uplink_tap_close(fds, queues);
	return rc;
}

void uplink_tap_close(int *fds, unsigned int queues)
{
	for (unsigned int i = 0; i < queues; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int uplink_tap_carrier(int fd, bool on)
{
	int v = on;

	return ioctl(fd, TUNSETCARRIER, &v) < 0 ? -errno : 0;
}

int uplink_tap_offloads(int fd, uint32_t uplink_off)
{
	unsigned long off = TUN_F_CSUM;

	if (uplink_off & UPLINK_OFF_TSO4)
		off |= TUN_F_TSO4;
	if (uplink_off & UPLINK_OFF_TSO6)
		off |= TUN_F_TSO6;
	return ioctl(fd, TUNSETOFFLOAD, off) < 0 ? -errno : 0;
}

int uplink_tap_link_set(const char *name, const uint8_t *mac, uint32_t mtu)
{
	char buf[NL_BUF];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned int seq = (unsigned int)time(NULL), portid, idx = 0;
	ssize_t n;
	int rc;

	rc = ifindex(name, &idx);
	if (rc < 0)
		return rc;
	nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out_close;
	}
	portid = mnl_socket_get_portid(nl);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = (int)idx;
	ifm->ifi_flags = IFF_UP;
	ifm->ifi_change = IFF_UP;
	if (mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		rc = -errno;
		goto out_close;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0) {
		rc = -errno;
		goto out_close;
	}
	/* The ACK is an NLMSG_ERROR with error 0; mnl_cb_run turns a nonzero one into errno. */
	rc = mnl_cb_run(buf, (size_t)n, seq, portid, NULL, NULL) < 0 ? -errno : 0;
out_close:
	mnl_socket_close(nl);
	return rc;
}

int uplink_tap_mtu(const char *name, uint32_t *mtu)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		rc = -errno;
	else
		*mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return rc;
}

int uplink_link_watch(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int uplink_link_watch_mtu(int fd, unsigned int ifindex, uint32_t *mtu)
{
	struct ifreq ifr = {0};
	char buf[NL_BUF];

	/*
	 * The messages only say that something changed: asking the kernel
	 * afterwards is simpler than parsing them, and an overrun (ENOBUFS)
	 * loses nothing.
	 */
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0 || (n < 0 && (errno == EINTR || errno == ENOBUFS)))
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		break;
	}
	/* Any socket answers the interface ioctls of its own namespace. */
	ifr.ifr_ifindex = (int)ifindex;
	if (ioctl(fd, SIOCGIFNAME, &ifr) < 0 || ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		return -errno;
	*mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

int uplink_link_index(const char *name, unsigned int *idx)
{
	return ifindex(name, idx);
}

bool uplink_netns_name_ok(const char *ns)
{
	size_t n = strlen(ns);

	if (n == 0 || n > UPLINK_NETNS_MAX || !strcmp(ns, ".") || !strcmp(ns, ".."))
		return false;
	/* Unsigned: UTF-8 names are fine, as for `ip netns`. */
	for (size_t i = 0; i < n; i++)
		if (ns[i] == '/' || (unsigned char)ns[i] <= ' ' || ns[i] == 0x7f)
			return false;
	return true;
}

/*
 * Creating a named namespace is `ip netns add`: make /run/netns a shared
 * mount point (so the bind mounts propagate to other mount namespaces),
 * create the file, unshare a new network namespace and bind-mount it there.
 * We run iproute2 itself rather than copy that sequence: the namespaces it
 * makes are exactly the ones `ip netns exec|del` (and the tests) expect.
 */
static int run_ip_netns(const char *verb, const char *ns)
{
	char *argv[] = {"ip", "netns", (char *)verb, (char *)ns, NULL};
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	pid_t pid;
	int st, rc;

	/*
	 * Our caller may block SIGINT and SIGTERM (it reads them from a
	 * signalfd): `ip` gets an empty mask and default actions, so that it
	 * can be interrupted as any command.
	 */
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	rc = posix_spawnattr_init(&attr);
	if (rc)
		return -rc;
	rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&attr, &dfl);
	if (!rc)
		rc = posix_spawnp(&pid, "ip", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (rc)
		return -rc;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

int uplink_netns_delete(const char *ns)
{
	if (!uplink_netns_name_ok(ns))
		return -EINVAL;
	return run_ip_netns("del", ns);
}

int uplink_netns_enter(const char *ns, bool *created, int *saved)
{
	char path[sizeof("/run/netns/") + UPLINK_NETNS_MAX];
	int fd, cur, rc;

	if (created)
		*created = false;
	if (!uplink_netns_name_ok(ns))
		return -EINVAL;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && created) {
		rc = run_ip_netns("add", ns);
		if (rc < 0)
			return rc;
		*created = true;
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	cur = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cur < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = setns(fd, CLONE_NEWNET) < 0 ? -errno : 0;
	close(fd);
	if (rc < 0) {
		close(cur);
		return rc;
	}
	*saved = cur;
	return 0;
}

int uplink_netns_leave(int saved)
{
	int rc = setns(saved, CLONE_NEWNET) < 0 ? -errno : 0;

	close(saved);
	return rc;
}
