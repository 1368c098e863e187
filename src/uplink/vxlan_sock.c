// SPDX-License-Identifier: MIT
/* vxlan_sock.c - the VXLAN uplink's UDP sockets (vxlan_sock.h) */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "uplink/tap.h"
#include "uplink/vxlan_sock.h"

/* Socket buffers asked for (bursts of 64 KiB frames); the kernel may give less. */
#define UPLINK_VXLAN_SOCKBUF (4u * 1024u * 1024u)

/* Ask for big socket buffers: beyond rmem_max/wmem_max as root (FORCE), else what is allowed. */
static void sockbuf(int fd)
{
	int v = (int)UPLINK_VXLAN_SOCKBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
}

/*
 * A UDP socket of the tunnel's family, nonblocking, bound to @addr (its
 * port included), in a SO_REUSEPORT group if @reuseport.
 */
static int udp_socket(const struct uplink_vxlan_spec *sp, const struct sockaddr_storage *addr,
		      bool reuseport)
{
	int fd = socket(sp->remote[0].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
	    one = 1;

	if (fd < 0)
		return -errno;
	if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	/*
	 * IPv4: no DF bit, as a Linux vxlan device without "df set": a router
	 * on a narrower path may fragment the datagram (RFC 7348, 4.3), and a
	 * datagram over the route's MTU leaves in fragments rather than being
	 * refused (the kernel's default would set DF and follow path MTU).
	 */
	/* And each datagram's outer ECN field comes with it (vxlan.h, ECN). */
	if ((sp->remote[0].ss_family == AF_INET &&
	     (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &(int){IP_PMTUDISC_DONT}, sizeof(int)) <
		  0 ||
	      setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) < 0)) ||
	    (sp->remote[0].ss_family == AF_INET6 &&
	     (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0 ||
	      setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) < 0)) ||
	    bind(fd, (const struct sockaddr *)addr, sp->local_len) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static uint16_t bound_port(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return 0;
	return ntohs(a.ss_family == AF_INET ? ((struct sockaddr_in *)&a)->sin_port
					    : ((struct sockaddr_in6 *)&a)->sin6_port);
}

/*
 * The sending sockets: UPLINK_VXLAN_SRCPORTS_MAX on ports the kernel picks,
 * or one per share of the srcport range (as many as the range has ports,
 * up to the maximum), each on the first port of its share it can bind;
 * dstport is the receiving socket's.
 */
static int open_src_sockets(const struct uplink_vxlan_spec *sp, struct uplink_vxlan_socks *s)
{
	uint32_t lo = sp->srcport_min, span = lo ? (uint32_t)sp->srcport_max - lo + 1 : 0;
	unsigned int n = UPLINK_VXLAN_SRCPORTS_MAX;

	if (span && span < n)
		n = span;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t first = lo + (uint32_t)((uint64_t)span * i / n),
			 end = lo + (uint32_t)((uint64_t)span * (i + 1) / n);
		struct sockaddr_storage a = sp->local;
		int fd = -EADDRINUSE;

		for (uint32_t port = first; fd == -EADDRINUSE && (!span || port < end); port++) {
			if (span && port == sp->dstport) {
				fd = s->fd;
				break;
			}
			if (a.ss_family == AF_INET)
				((struct sockaddr_in *)&a)->sin_port = htons((uint16_t)port);
			else
				((struct sockaddr_in6 *)&a)->sin6_port = htons((uint16_t)port);
			fd = udp_socket(sp, &a, false);
			if (!span)
				break;
		}
		if (fd < 0) {
			err("uplink %s: source ports %u-%u: %s", sp->name, first, end - 1,
			    fd == -EADDRINUSE ? "every one is in use" : strerror(-fd));
			return fd;
		}
		if (fd != s->fd) {
			int v = (int)UPLINK_VXLAN_SOCKBUF, small = 1;

			/* Send-only: little room for what may come to its port. */
			if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)) < 0)
				(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		}
		s->src_fd[s->nsrc] = fd;
		s->src_port[s->nsrc++] = bound_port(fd);
	}
	return 0;
}

/*
 * The groups of uplinks sharing a port (vxlan_sock.h): the sockets in
 * the kernel's order of the group, and the VNI of each.  A socket whose
 * uplink has left stays open, parked (@live false): closing it would move
 * the group's last socket into its place, and the last may be another
 * program's.  The last uplink to leave closes them all, and frees the
 * group (@n 0).
 */
struct share_group {
	char netns[UPLINK_NETNS_MAX + 1];
	struct sockaddr_storage local;
	uint16_t dstport;
	unsigned int n, nlive;
	int fd[UPLINK_VXLAN_SHARE_MAX];
	uint32_t vni[UPLINK_VXLAN_SHARE_MAX];
	bool live[UPLINK_VXLAN_SHARE_MAX];
};

static struct share_group groups[UPLINK_VXLAN_SHARE_GROUPS];
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;

/* The group of @sp's address and port, else a free one (NULL: none); under groups_lock. */
static struct share_group *group_of(const struct uplink_vxlan_spec *sp)
{
	struct share_group *free_g = NULL;

	for (unsigned int i = 0; i < UPLINK_VXLAN_SHARE_GROUPS; i++) {
		struct share_group *g = &groups[i];

		if (!g->n) {
			free_g = free_g ? free_g : g;
			continue;
		}
		if (g->dstport == sp->dstport && !strcmp(g->netns, sp->netns) &&
		    uplink_vxlan_addr_equal(&g->local, &sp->local))
			return g;
	}
	return free_g;
}

/*
 * Attach to @g's sockets the program that picks a datagram's socket: the
 * index, in the group, of its VNI's; for another VNI, or a datagram too
 * short for a VXLAN header, the first live socket's.  Under groups_lock,
 * with a live socket in @g.
 */
static int group_program(const struct share_group *g)
{
	struct sock_filter code[6 + 2 * UPLINK_VXLAN_SHARE_MAX];
	struct sock_fprog prog = {.filter = code};
	unsigned int n = 0, first = 0;

	while (!g->live[first])
		first++;
	/* The UDP payload's length: a runt goes to the first (a failed load would return 0). */
	code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0);
	code[n++] =
	    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, UPLINK_VXLAN_HLEN, 1, 0);
	code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, first);
	/* Its bytes 4-7, big endian: the VNI and the reserved byte after it. */
	code[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4);
	code[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 8);
	for (unsigned int i = 0; i < g->n; i++) {
		if (!g->live[i])
			continue;
		code[n++] =
		    (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, g->vni[i], 0, 1);
		code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, i);
	}
	code[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, first);
	prog.len = (unsigned short)n;
	if (setsockopt(g->fd[first], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

/* Close every socket of @g and free it; under groups_lock. */
static void group_free(struct share_group *g)
{
	for (unsigned int i = 0; i < g->n; i++)
		close(g->fd[i]);
	g->n = g->nlive = 0;
}

/* @sp's receiving socket, joined to the group of its address and port. */
static int shared_socket(const struct uplink_vxlan_spec *sp, struct uplink_vxlan_socks *s)
{
	struct share_group *g;
	int fd, rc;

	pthread_mutex_lock(&groups_lock);
	g = group_of(sp);
	if (!g || g->n == UPLINK_VXLAN_SHARE_MAX) {
		err("uplink %s: %s", sp->name,
		    g ? "too many uplinks have shared its port" : "too many ports are shared");
		fd = -ENOSPC;
		goto out;
	}
	if (!g->n) {
		/* Only if nothing else has the port: a bind outside any group says so. */
		fd = udp_socket(sp, &sp->local, false);
		if (fd < 0)
			goto out;
		close(fd);
		snprintf(g->netns, sizeof(g->netns), "%s", sp->netns);
		g->local = sp->local;
		g->dstport = sp->dstport;
	}
	fd = udp_socket(sp, &sp->local, true);
	if (fd < 0)
		goto out; /* a group without a socket is free */
	g->fd[g->n] = fd;
	g->vni[g->n] = sp->vni;
	g->live[g->n++] = true;
	g->nlive++;
	rc = group_program(g);
	if (rc < 0) {
		/* Parked: the old program, still attached, never picks it. */
		g->live[g->n - 1] = false;
		if (!--g->nlive)
			group_free(g);
		err("uplink %s: the program that sorts its port's datagrams by VNI: %s", sp->name,
		    strerror(-rc));
		fd = rc;
		goto out;
	}
	s->shared = true;
out:
	pthread_mutex_unlock(&groups_lock);
	return fd;
}

/* @fd's uplink leaves its group: parked, the datagrams sorted among the others. */
static void shared_leave(int fd, const char *name)
{
	pthread_mutex_lock(&groups_lock);
	for (unsigned int i = 0; i < UPLINK_VXLAN_SHARE_GROUPS; i++) {
		struct share_group *g = &groups[i];

		for (unsigned int j = 0; j < g->n; j++) {
			if (g->fd[j] != fd || !g->live[j])
				continue;
			g->live[j] = false;
			if (!--g->nlive) {
				group_free(g);
			} else {
				int rc = group_program(g), small = 1;

				if (rc < 0)
					err("uplink %s: its port's other uplinks' program: %s",
					    name, strerror(-rc));
				(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
			}
			goto out;
		}
	}
	close(fd); /* not in a group: cannot be, but closed all the same */
out:
	pthread_mutex_unlock(&groups_lock);
}

/* Does @a, an IPv4 or IPv6 address, belong to this namespace (an interface's, or loopback's)? */
static bool addr_is_ours(const struct sockaddr_storage *a, const struct ifaddrs *ifs)
{
	if (a->ss_family == AF_INET) {
		uint32_t v = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);

		if ((v >> 24) == 127) /* the loopback route covers 127.0.0.0/8 */
			return true;
	} else if (IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr)) {
		return true;
	}
	for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == a->ss_family &&
		    uplink_vxlan_addr_equal(
			a, (const struct sockaddr_storage *)(const void *)i->ifa_addr))
			return true;
	return false;
}

/*
 * A remote that is this namespace's own address, while our socket takes
 * every address's dstport (the wildcard): what we send it comes back to
 * us, each frame looping once and moving its source MAC to the tunnel.
 * (A remote equal to a given local address is refused by the parser; a
 * given local address of another's leaves the remote's datagrams to the
 * socket bound there, another VTEP on this host.)  Looked up in the
 * namespace at start-up: an address added later is not seen.
 */
static int remote_loops(const struct uplink_vxlan_spec *sp)
{
	struct ifaddrs *ifs = NULL;
	int rc = 0;

	if (getifaddrs(&ifs) < 0)
		return 0; /* not known: nothing refused */
	for (unsigned int i = 0; i < sp->nremotes && !rc; i++) {
		char addr[INET6_ADDRSTRLEN];

		if (!addr_is_ours(&sp->remote[i], ifs))
			continue;
		uplink_vxlan_addr_str(&sp->remote[i], addr);
		err("uplink %s: remote %s is an address of this host%s%s, and this uplink receives "
		    "on every address's port %u: what it sends there would come back (give local= "
		    "another address, or the remote another dstport)",
		    sp->name, addr, *sp->netns ? " in namespace " : "", sp->netns, sp->dstport);
		rc = -ELOOP;
	}
	freeifaddrs(ifs);
	return rc;
}

int uplink_vxlan_socks_open(const struct uplink_vxlan_spec *sp, struct uplink_vxlan_socks *s)
{
	int saved = -1, rc = 0;

	s->fd = -1;
	s->nsrc = 0;
	s->shared = false;
	if (*sp->netns) {
		rc = uplink_netns_enter(sp->netns, NULL, &saved);
		if (rc < 0) {
			err("uplink %s: namespace %s: %s", sp->name, sp->netns, strerror(-rc));
			return rc;
		}
	}
	/* Made in the namespace: they stay there whatever thread uses them. */
	rc = uplink_vxlan_addr_any(&sp->local) ? remote_loops(sp) : 0;
	if (rc == 0) {
		rc = sp->share ? shared_socket(sp, s) : udp_socket(sp, &sp->local, false);
		if (rc >= 0) {
			s->fd = rc;
			sockbuf(s->fd);
			rc = open_src_sockets(sp, s);
		} else {
			char local[INET6_ADDRSTRLEN];

			uplink_vxlan_addr_str(&sp->local, local);
			err("uplink %s: UDP %s port %u: %s", sp->name, local, sp->dstport,
			    strerror(-rc));
		}
	}
	if (saved >= 0 && uplink_netns_leave(saved) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

void uplink_vxlan_socks_close(struct uplink_vxlan_socks *s, const char *name)
{
	for (unsigned int i = 0; i < s->nsrc; i++)
		if (s->src_fd[i] != s->fd)
			close(s->src_fd[i]);
	if (s->fd >= 0 && s->shared)
		shared_leave(s->fd, name);
	else if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->nsrc = 0;
	s->shared = false;
}
