// SPDX-License-Identifier: MIT
/* vxlan_port.c - the VXLAN uplink: a switch port of pvnetd whose other side is another VTEP */

/*
 * Theory of Operation
 *
 * One UDP socket, two directions, as the TAP uplink (port.c):
 *
 *   remote -> switch  the port's reader thread (the only thread that calls
 *                     sw_forward() with this port).  Per wakeup one
 *                     recvmmsg() of up to UPLINK_VXLAN_BATCH datagrams,
 *                     each into a free buffer of the port's pool (pool.h):
 *                     the bytes are read once into memory nobody else
 *                     writes, then checked — from a remote's address (any
 *                     source port: Linux spreads its flows over a range),
 *                     not truncated, the VXLAN header exactly ours
 *                     (uplink_vxlan_check()), the frame within the MTU —
 *                     and the frames that pass go to one sw_forward().
 *                     A frame from the wire carries no offload: its
 *                     checksums were filled in by whoever sent it.  With
 *                     several remotes, the reader learns which one each
 *                     source MAC is behind (vxlan_fdb.h).
 *
 *   switch -> remote  xmit(), on whatever data-path thread forwards to us
 *                     (netback workers, the TAP uplink's reader), at once
 *                     for several.  Each frame as an iovec of the VXLAN
 *                     header and the frame's own pieces, no copy, to the
 *                     remote its destination MAC was learnt behind, or to
 *                     every remote (broadcast, multicast, unknown unicast:
 *                     head-end replication, as a Linux device whose
 *                     all-zeroes FDB entry lists several), from the
 *                     source port of the frame's flow: the port keeps up
 *                     to UPLINK_VXLAN_SRCPORTS_MAX sending sockets, each
 *                     bound to its own source port (vxlan_sock.h), and a
 *                     frame goes out of socket flow_hash % n (RFC 7348's
 *                     recommendation, Linux's default), so that the
 *                     network between the VTEPs can spread flows and
 *                     keeps each in order.  One
 *                     sendmmsg() per socket used per call (or per
 *                     UPLINK_VXLAN_MSGS datagrams).  A frame with offloads
 *                     the wire does not have is made whole first, in a
 *                     scratch area: a blank checksum is filled in, a GSO
 *                     frame is cut into gso_size segments with full
 *                     checksums (switch/frame.h), one datagram each.  The
 *                     call takes one of the port's UPLINK_VXLAN_SCRATCH
 *                     scratch areas for the whole batch (a mutex per call,
 *                     not per frame), so that senders on different threads
 *                     rarely wait for each other.  A datagram a socket
 *                     refuses (EAGAIN: its buffer is full; EMSGSIZE) is
 *                     counted and lost, as on a wire.
 *
 * The frames a vif sends are the guest's pages: the kernel copies them
 * into the datagram during sendmmsg(), and they are put (the guest's TX
 * answered) only after it returns.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/log.h"
#include "switch/frame.h"
#include "switch/switch.h"
#include "uplink/pool.h"
#include "uplink/tap.h"
#include "uplink/vxlan_fdb.h"
#include "uplink/vxlan_port.h"
#include "uplink/vxlan_sock.h"

/* Datagrams read per wakeup and handed to one sw_forward(): the switch's batch. */
#define UPLINK_VXLAN_BATCH SW_BATCH_MAX

/* Receive buffers: as the TAP uplink's, each the largest UDP payload. */
#define UPLINK_VXLAN_POOL 128u
#define UPLINK_VXLAN_SLOT 65536u
_Static_assert(UPLINK_VXLAN_SLOT - UPLINK_VXLAN_HLEN <= UINT16_MAX,
	       "an inner frame's length fits sw_pkt.hdr_len");

/* Bytes of frames in flight before the reader waits (pool.h): as the TAP uplink's. */
#define UPLINK_VXLAN_INFLIGHT_MAX (256u * 1024u)

/* Datagrams per sendmmsg(), and the most segments one GSO frame may become. */
#define UPLINK_VXLAN_MSGS 256u

/* Scratch areas for xmit(): senders on different threads each take one. */
#define UPLINK_VXLAN_SCRATCH 4u

/* Pieces of one datagram: VXLAN header, header copy, the frame's fragments. */
#define UPLINK_VXLAN_IOV (SW_PKT_MAX_FRAGS + 2)

/* Pause after a receive error other than EAGAIN, and how long destroy waits for frames. */
#define UPLINK_VXLAN_RETRY_MS 1000
#define UPLINK_VXLAN_DRAIN_MS 2000u

/* Room for one control message of an int: the outer IP_TOS / IPV6_TCLASS of a datagram. */
union ecn_cmsg {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* One sender's working memory: the datagrams of a batch, and room to make a frame whole. */
struct xmit_scratch {
	pthread_mutex_t lock;
	struct mmsghdr msgs[UPLINK_VXLAN_MSGS];
	struct iovec iov[UPLINK_VXLAN_MSGS][UPLINK_VXLAN_IOV];
	struct sw_pkt *held[UPLINK_VXLAN_MSGS];	  /* put after the datagrams are sent */
	uint8_t src[UPLINK_VXLAN_MSGS];		  /* each datagram's sending socket */
	union ecn_cmsg ctl[UPLINK_VXLAN_MSGS];	  /* the outer ECN field, when not 0 */
	struct mmsghdr sorted[UPLINK_VXLAN_MSGS]; /* @msgs grouped by socket */
	unsigned int nmsgs, nheld;
	bool frame_used; /* @frame holds a frame some queued datagram points into */
	uint8_t frame[65536];
	uint8_t hdrs[UPLINK_VXLAN_MSGS * SW_TSO_MAX_HDRS];
	struct sw_seg segs[UPLINK_VXLAN_MSGS];
	struct log_ratelimit rl; /* refused datagrams' reasons, under @lock */
};

struct uplink_vxlan_port {
	struct sw *sw;
	struct sw_port *sp;
	struct uplink_vxlan_spec spec;
	uint8_t vxh[UPLINK_VXLAN_HLEN];	 /* our header, the same on every datagram */
	struct uplink_vxlan_socks socks; /* receives on socks.fd, sends from socks.src_fd */
	struct uplink_reader reader;
	struct uplink_pool pool;
	struct xmit_scratch *scratch[UPLINK_VXLAN_SCRATCH];
	struct uplink_vxlan_fdb *fdb; /* with several remotes only */
	_Atomic unsigned int next_scratch;
	struct log_ratelimit rl; /* the reader thread's */
	_Atomic uint64_t drops[UPLINK_VXLAN_DROP_NR];
	_Atomic uint64_t tx_segmented; /* GSO frames cut into segments */
	_Atomic uint64_t tx_sw_csum;   /* blank checksums filled in */
	_Atomic uint64_t tx_oversize;  /* frames (or segments) over the MTU */
	_Atomic uint64_t tx_bad_offload;
	_Atomic uint64_t tx_eagain;  /* datagrams the socket had no room for */
	_Atomic uint64_t tx_errors;  /* datagrams it refused otherwise */
	_Atomic uint64_t tx_flooded; /* frames sent to every remote (several only) */
};

static void count(_Atomic uint64_t *c, uint64_t n)
{
	if (n)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Which remote @from (a datagram's source) is, whatever its port: its index, or -1. */
static int remote_index(const struct uplink_vxlan_port *p, const struct sockaddr_storage *from,
			socklen_t len)
{
	for (unsigned int i = 0; i < p->spec.nremotes; i++) {
		const struct sockaddr_storage *r = &p->spec.remote[i];

		if (from->ss_family != r->ss_family)
			return -1;
		if (r->ss_family == AF_INET) {
			if (len >= sizeof(struct sockaddr_in) &&
			    ((const struct sockaddr_in *)from)->sin_addr.s_addr ==
				((const struct sockaddr_in *)r)->sin_addr.s_addr)
				return (int)i;
		} else if (len >= sizeof(struct sockaddr_in6) &&
			   !memcmp(&((const struct sockaddr_in6 *)from)->sin6_addr,
				   &((const struct sockaddr_in6 *)r)->sin6_addr,
				   sizeof(struct in6_addr))) {
			return (int)i;
		}
	}
	return -1;
}

/* A monotonic second, for the remote table (a vDSO call, no system call). */
static uint32_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)ts.tv_sec;
}

/* The outer ECN field of a received datagram, from its IP_TOS or IPV6_TCLASS message (0 if none). */
static uint8_t outer_ecn(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
		    c->cmsg_len >= CMSG_LEN(1))
			return *CMSG_DATA(c) & UPLINK_ECN_MASK;
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			return (uint8_t)(v & UPLINK_ECN_MASK);
		}
	}
	return 0;
}

/* Check datagram @i of a recvmmsg() in @b; 1 if its frame is ready to forward, else 0 (dropped). */
static int rx_one(struct uplink_vxlan_port *p, struct uplink_buf *b, struct mmsghdr *m,
		  const struct sockaddr_storage *from, uint32_t now)
{
	uint8_t *frame = b->slot + UPLINK_VXLAN_HLEN;
	int rc, remote = remote_index(p, from, m->msg_hdr.msg_namelen);

	if (remote < 0)
		rc = -(UPLINK_VXLAN_DROP_SOURCE + 1);
	else if (m->msg_hdr.msg_flags & MSG_TRUNC)
		rc = -(UPLINK_VXLAN_DROP_TRUNC + 1);
	else
		rc = uplink_vxlan_check(b->slot, m->msg_len, p->spec.vni, p->spec.mtu);
	if (rc >= 0) {
		int e = uplink_vxlan_ecn_decap(frame, (uint32_t)rc, outer_ecn(&m->msg_hdr));

		if (e < 0)
			rc = e;
	}
	if (rc < 0) {
		count(&p->drops[-rc - 1], 1);
		log_ratelimited(&p->rl, LOG_DEBUG, "uplink %s: dropped a datagram: %s",
				p->spec.name,
				uplink_vxlan_drop_name((enum uplink_vxlan_drop)(-rc - 1)));
		return 0;
	}
	if (p->fdb) /* the frame's source MAC is behind this remote */
		uplink_vxlan_fdb_learn(p->fdb, frame + 6, (unsigned int)remote, now);
	memset(&b->pkt, 0, offsetof(struct sw_pkt, refs));
	b->pkt.hdr = frame; /* private: all of it may be parsed (port.c) */
	b->pkt.hdr_len = (uint16_t)rc;
	b->pkt.nfrags = 1;
	b->pkt.len = (uint32_t)rc;
	b->pkt.priv = b;
	b->pkt.frag[0] = (struct sw_pkt_frag){.base = frame, .len = (uint32_t)rc};
	sw_pkt_init(&b->pkt, uplink_buf_done);
	uplink_pool_take(b, (uint32_t)rc);
	return 1;
}

static void *reader_thread(void *arg)
{
	struct uplink_vxlan_port *p = arg;
	struct mmsghdr msgs[UPLINK_VXLAN_BATCH];
	struct iovec iov[UPLINK_VXLAN_BATCH];
	struct sockaddr_storage from[UPLINK_VXLAN_BATCH];
	union ecn_cmsg ctl[UPLINK_VXLAN_BATCH];
	struct uplink_buf *bufs[UPLINK_VXLAN_BATCH];
	struct sw_pkt *pkts[UPLINK_VXLAN_BATCH];

	while (!uplink_reader_stopping(&p->reader)) {
		struct pollfd pfd[2] = {{.fd = p->reader.stop_fd, .events = POLLIN}, {.fd = -1}};
		unsigned int nb = 0, n = 0;
		uint32_t now;
		int r, e;

		while (nb < UPLINK_VXLAN_BATCH && (bufs[nb] = uplink_pool_get(&p->pool)) != NULL) {
			iov[nb] = (struct iovec){.iov_base = bufs[nb]->slot,
						 .iov_len = p->pool.slot_size};
			msgs[nb] = (struct mmsghdr){.msg_hdr = {.msg_name = &from[nb],
								.msg_namelen = sizeof(from[nb]),
								.msg_iov = &iov[nb],
								.msg_iovlen = 1,
								.msg_control = ctl[nb].buf,
								.msg_controllen = sizeof(ctl[nb])}};
			nb++;
		}
		if (nb == 0) {
			if (uplink_pool_starve(&p->pool))
				continue;
			pfd[1] = (struct pollfd){.fd = p->pool.fd, .events = POLLIN};
			if (poll(pfd, 2, -1) < 0 && errno != EINTR)
				break;
			uplink_pool_fed(&p->pool);
			continue;
		}
		r = recvmmsg(p->socks.fd, msgs, nb, MSG_DONTWAIT, NULL);
		e = r < 0 ? errno : 0;
		now = r > 0 && p->fdb ? now_s() : 0;
		for (unsigned int i = 0; i < nb; i++) {
			if (r > 0 && i < (unsigned int)r &&
			    rx_one(p, bufs[i], &msgs[i], &from[i], now))
				pkts[n++] = &bufs[i]->pkt;
			else
				uplink_pool_unget(bufs[i]);
		}
		if (n)
			sw_forward(p->sw, p->sp, pkts, n);
		if (r == (int)nb)
			continue; /* there may be more */
		if (r < 0 && e != EAGAIN && e != EINTR) {
			/* Not expected of a bound UDP socket: say so, retry once a second, never spin. */
			log_ratelimited(&p->rl, LOG_ERR, "uplink %s: recvmmsg: %s", p->spec.name,
					strerror(e));
			if (poll(pfd, 1, UPLINK_VXLAN_RETRY_MS) < 0 && errno != EINTR)
				break;
			continue;
		}
		/* Fewer than asked, or none: poll() returns at once if more came meanwhile. */
		pfd[1] = (struct pollfd){.fd = p->socks.fd, .events = POLLIN};
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			break;
	}
	return NULL;
}

/* The remote a queued datagram goes to, as text in @buf. */
static const char *dgram_to(const struct mmsghdr *m, char buf[INET6_ADDRSTRLEN])
{
	uplink_vxlan_addr_str(m->msg_hdr.msg_name, buf);
	return buf;
}

/* Does a datagram refused with @err say its remote cannot be reached now (so would the next)? */
static bool remote_refused(int err)
{
	return err == ENETUNREACH || err == EHOSTUNREACH || err == ENETDOWN || err == EACCES ||
	       err == EPERM || err == EADDRNOTAVAIL;
}

/*
 * Send @n datagrams through @fd, counting the ones it refuses; why, once
 * in a while, to the log (no route, a firewall, a datagram over the
 * path's limit: what tx_errors alone cannot say).  sendmmsg() stops at a
 * refused datagram, and the next call starts after it; when the refusal
 * is the remote's (no route to it, a firewall), the batch's later
 * datagrams to that remote are counted and dropped with it, so that a
 * remote that cannot be reached costs a system call per batch, not one
 * per datagram.  The others keep their order.
 */
static void send_all(struct uplink_vxlan_port *p, struct xmit_scratch *s, int fd,
		     struct mmsghdr *msgs, unsigned int n)
{
	char to[INET6_ADDRSTRLEN];
	unsigned int done = 0;

	while (done < n) {
		int r = sendmmsg(fd, msgs + done, n - done, MSG_DONTWAIT), err = errno;

		if (r > 0) {
			done += (unsigned int)r;
			continue;
		}
		if (r < 0 && err == EINTR)
			continue;
		/* This datagram is refused (EAGAIN: the socket is full, so are the rest). */
		if (r < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			count(&p->tx_eagain, n - done);
			break;
		}
		count(&p->tx_errors, 1);
		log_ratelimited(&s->rl, LOG_WARN, "uplink %s: a datagram to %s refused: %s",
				p->spec.name, dgram_to(&msgs[done], to), strerror(err));
		if (r < 0 && remote_refused(err)) {
			/* Every datagram to one remote names the same address (spec.remote[]). */
			const void *remote = msgs[done].msg_hdr.msg_name;
			unsigned int kept = done + 1;

			for (unsigned int i = done + 1; i < n; i++)
				if (msgs[i].msg_hdr.msg_name != remote)
					msgs[kept++] = msgs[i];
			count(&p->tx_errors, n - kept);
			n = kept;
		}
		done++;
	}
}

/* Send the datagrams queued in @s, one sendmmsg() per socket, then put the frames they came from. */
static void xmit_flush(struct uplink_vxlan_port *p, struct xmit_scratch *s)
{
	if (p->socks.nsrc == 1) {
		send_all(p, s, p->socks.src_fd[0], s->msgs, s->nmsgs);
	} else if (s->nmsgs) {
		/* A stable counting sort: each socket's datagrams keep their order. */
		unsigned int start[UPLINK_VXLAN_SRCPORTS_MAX + 1] = {0};
		unsigned int at[UPLINK_VXLAN_SRCPORTS_MAX];

		for (unsigned int i = 0; i < s->nmsgs; i++)
			start[s->src[i] + 1]++;
		for (unsigned int k = 0; k < p->socks.nsrc; k++) {
			start[k + 1] += start[k];
			at[k] = start[k];
		}
		for (unsigned int i = 0; i < s->nmsgs; i++)
			s->sorted[at[s->src[i]]++] = s->msgs[i];
		for (unsigned int k = 0; k < p->socks.nsrc; k++)
			if (start[k + 1] > start[k])
				send_all(p, s, p->socks.src_fd[k], s->sorted + start[k],
					 start[k + 1] - start[k]);
	}
	for (unsigned int i = 0; i < s->nheld; i++)
		sw_pkt_put(s->held[i]);
	s->nmsgs = s->nheld = 0;
	s->frame_used = false;
}

/* The outer ECN field of datagram @h: @ecn, its frame's (vxlan.h, ECN), as a control message. */
static void ecn_encap(const struct uplink_vxlan_port *p, struct msghdr *h, union ecn_cmsg *ctl,
		      uint8_t ecn)
{
	struct cmsghdr *c;
	int v = ecn;

	h->msg_control = ctl->buf;
	h->msg_controllen = sizeof(ctl->buf);
	c = CMSG_FIRSTHDR(h);
	c->cmsg_len = CMSG_LEN(sizeof(int));
	if (p->spec.remote[0].ss_family == AF_INET) {
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_TOS;
	} else {
		c->cmsg_level = IPPROTO_IPV6;
		c->cmsg_type = IPV6_TCLASS;
	}
	memcpy(CMSG_DATA(c), &v, sizeof(v));
}

/*
 * Queue one datagram, our header then @n pieces, to remote @to, or to
 * every remote if @to < 0.  Sends what is queued first when there is no
 * room: the frame being queued is not among the frames put then, and the
 * scratch frame it may point into stays as it is until the next frame.
 */
static void xmit_queue(struct uplink_vxlan_port *p, struct xmit_scratch *s,
		       const struct iovec *pieces, unsigned int n, int to, unsigned int src,
		       uint8_t ecn)
{
	unsigned int first = to < 0 ? 0 : (unsigned int)to,
		     last = to < 0 ? p->spec.nremotes : (unsigned int)to + 1;

	for (unsigned int r = first; r < last; r++) {
		struct iovec *iov;

		if (s->nmsgs == UPLINK_VXLAN_MSGS)
			xmit_flush(p, s);
		s->src[s->nmsgs] = (uint8_t)src;
		iov = s->iov[s->nmsgs];
		iov[0] = (struct iovec){.iov_base = p->vxh, .iov_len = UPLINK_VXLAN_HLEN};
		memcpy(iov + 1, pieces, n * sizeof(*pieces));
		s->msgs[s->nmsgs] = (struct mmsghdr){.msg_hdr = {.msg_name = &p->spec.remote[r],
								 .msg_namelen = p->spec.remote_len,
								 .msg_iov = iov,
								 .msg_iovlen = n + 1}};
		if (ecn)
			ecn_encap(p, &s->msgs[s->nmsgs].msg_hdr, &s->ctl[s->nmsgs], ecn);
		s->nmsgs++;
	}
}

/* Where a frame goes: the remote its destination is behind, or -1 for every remote. */
static int xmit_to(const struct uplink_vxlan_port *p, const struct sw_pkt *pkt, uint32_t now)
{
	if (!p->fdb)
		return 0;
	return pkt->hdr_len >= 6 ? uplink_vxlan_fdb_lookup(p->fdb, pkt->hdr, now) : -1;
}

/* Over the MTU: its payload past the network header (Linux's rule for a device's MTU). */
static bool over_mtu(const struct uplink_vxlan_port *p, const uint8_t *hdr, uint32_t hdr_len,
		     uint32_t len)
{
	return hdr_len >= SW_FRAME_ETH_HLEN && len > sw_frame_l3_off(hdr, hdr_len) + p->spec.mtu;
}

/* Copy @pkt's bytes into the scratch frame; its length, or 0 if its pieces do not add up. */
static uint32_t linearise(struct xmit_scratch *s, const struct sw_pkt *pkt)
{
	uint64_t sum = 0;
	uint32_t off = 0;

	for (unsigned int f = 0; f < pkt->nfrags; f++)
		sum += pkt->frag[f].len;
	if (pkt->len > sizeof(s->frame) || (sum != pkt->len && sum + pkt->hdr_len != pkt->len))
		return 0;
	if (sum != pkt->len) {
		memcpy(s->frame, pkt->hdr, pkt->hdr_len);
		off = pkt->hdr_len;
	}
	for (unsigned int f = 0; f < pkt->nfrags; f++) {
		memcpy(s->frame + off, pkt->frag[f].base, pkt->frag[f].len);
		off += pkt->frag[f].len;
	}
	return off;
}

/*
 * A frame with offloads: made whole in the scratch frame, then queued as
 * one datagram or one per segment.  False if it cannot be (counted).
 */
static bool xmit_offloaded(struct uplink_vxlan_port *p, struct xmit_scratch *s,
			   const struct sw_pkt *pkt, int to, unsigned int src)
{
	uint32_t len;
	struct sw_l4 l4;
	uint8_t ecn;
	int nseg;

	if (s->frame_used)
		xmit_flush(p, s); /* the scratch frame is in a queued datagram */
	len = linearise(s, pkt);
	if (len == 0)
		goto bad;
	if (pkt->gso_type == SW_GSO_NONE) {
		struct iovec one = {.iov_base = s->frame, .iov_len = len};
		uint32_t field;

		if (sw_frame_parse(s->frame, len, &l4) < 0 ||
		    (l4.proto != 6 /* TCP */ && l4.proto != 17 /* UDP */))
			goto bad;
		field = l4.l4_off + (l4.proto == 6 ? SW_FRAME_TCP_CSUM_OFF : SW_FRAME_UDP_CSUM_OFF);
		if (field + 2 > len)
			goto bad;
		sw_csum_complete(s->frame, len, l4.l4_off, field);
		count(&p->tx_sw_csum, 1);
		if (over_mtu(p, s->frame, len, len)) {
			count(&p->tx_oversize, 1);
			return false;
		}
		xmit_queue(p, s, &one, 1, to, src, uplink_vxlan_ecn_inner(s->frame, len));
		s->frame_used = true;
		return true;
	}
	nseg = sw_tso_segment(s->frame, len, pkt->gso_type, pkt->gso_size, false, s->hdrs,
			      sizeof(s->hdrs), s->segs, UPLINK_VXLAN_MSGS);
	if (nseg <= 0)
		goto bad;
	/* Room for every segment (what is queued points at frames, not at the scratch). */
	if (s->nmsgs + (unsigned int)nseg > UPLINK_VXLAN_MSGS)
		xmit_flush(p, s);
	if (over_mtu(p, s->segs[0].hdr, s->segs[0].hdr_len, s->segs[0].hdr_len + s->segs[0].len)) {
		count(&p->tx_oversize, 1);
		return false;
	}
	ecn = uplink_vxlan_ecn_inner(s->segs[0].hdr, s->segs[0].hdr_len);
	for (int i = 0; i < nseg; i++) {
		struct iovec two[2] = {
		    {.iov_base = s->segs[i].hdr, .iov_len = s->segs[i].hdr_len},
		    {.iov_base = s->frame + s->segs[i].off, .iov_len = s->segs[i].len}};

		xmit_queue(p, s, two, 2, to, src, ecn);
	}
	s->frame_used = true;
	count(&p->tx_segmented, 1);
	return true;
bad:
	count(&p->tx_bad_offload, 1);
	return false;
}

/* Take a scratch area: a free one if there is, else wait for ours in turn. */
static struct xmit_scratch *scratch_get(struct uplink_vxlan_port *p)
{
	unsigned int first = atomic_fetch_add_explicit(&p->next_scratch, 1, memory_order_relaxed);

	for (unsigned int i = 0; i < UPLINK_VXLAN_SCRATCH; i++) {
		struct xmit_scratch *s = p->scratch[(first + i) % UPLINK_VXLAN_SCRATCH];

		if (pthread_mutex_trylock(&s->lock) == 0)
			return s;
	}
	/* Every one busy: wait (its holder sends one batch, a bounded stretch of work). */
	struct xmit_scratch *s = p->scratch[first % UPLINK_VXLAN_SCRATCH];

	pthread_mutex_lock(&s->lock);
	return s;
}

static unsigned int vxlan_xmit(struct sw_port *sp, struct sw_pkt **pkts, unsigned int n)
{
	struct uplink_vxlan_port *p = sp->priv;
	struct xmit_scratch *s = scratch_get(p);
	uint32_t now = p->fdb ? now_s() : 0;

	for (unsigned int i = 0; i < n; i++) {
		struct sw_pkt *pkt = pkts[i];
		unsigned int src;
		int to;

		if (pkt->nfrags > SW_PKT_MAX_FRAGS) {
			count(&p->tx_bad_offload, 1);
			sw_pkt_put(pkt);
			continue;
		}
		if (s->nmsgs == UPLINK_VXLAN_MSGS || s->nheld == UPLINK_VXLAN_MSGS)
			xmit_flush(p, s);
		to = xmit_to(p, pkt, now);
		src = p->socks.nsrc > 1
			  ? uplink_vxlan_flow_hash(pkt->hdr, pkt->hdr_len) % p->socks.nsrc
			  : 0;
		if (pkt->gso_type != SW_GSO_NONE || (pkt->flags & SW_PKT_CSUM_BLANK)) {
			if (!xmit_offloaded(p, s, pkt, to, src)) {
				sw_pkt_put(pkt);
				continue;
			}
		} else if (over_mtu(p, pkt->hdr, pkt->hdr_len, pkt->len)) {
			count(&p->tx_oversize, 1);
			sw_pkt_put(pkt);
			continue;
		} else {
			struct iovec pieces[UPLINK_VXLAN_IOV - 1];
			uint64_t sum = 0;
			unsigned int k = 0;

			for (unsigned int f = 0; f < pkt->nfrags; f++)
				sum += pkt->frag[f].len;
			/* pkt.h: hdr + frags, unless the frags alone are the whole frame. */
			if (sum != pkt->len)
				pieces[k++] = (struct iovec){.iov_base = (void *)pkt->hdr,
							     .iov_len = pkt->hdr_len};
			for (unsigned int f = 0; f < pkt->nfrags; f++)
				pieces[k++] = (struct iovec){.iov_base = (void *)pkt->frag[f].base,
							     .iov_len = pkt->frag[f].len};
			xmit_queue(p, s, pieces, k, to, src,
				   uplink_vxlan_ecn_inner(pkt->hdr, pkt->hdr_len));
		}
		s->held[s->nheld++] = pkt;
		if (to < 0 && p->fdb)
			count(&p->tx_flooded, 1);
	}
	xmit_flush(p, s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

static const struct sw_port_ops vxlan_port_ops = {.xmit = vxlan_xmit};

int uplink_vxlan_port_create(struct sw *sw, const struct uplink_vxlan_spec *spec,
			     struct uplink_vxlan_port **out)
{
	struct uplink_vxlan_port *p = calloc(1, sizeof(*p));
	char addr[INET6_ADDRSTRLEN], local[INET6_ADDRSTRLEN],
	    addrs[UPLINK_VXLAN_REMOTES_MAX * INET6_ADDRSTRLEN] = "",
					     srcs[UPLINK_VXLAN_SRCPORTS_MAX * 6 + 1] = "";
	int rc;

	if (!p)
		return -ENOMEM;
	p->sw = sw;
	p->spec = *spec;
	p->rl = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	p->socks.fd = p->reader.stop_fd = -1;
	p->pool.fd = -1;
	uplink_vxlan_hdr(p->vxh, spec->vni);
	rc = uplink_pool_init(&p->pool, UPLINK_VXLAN_POOL, UPLINK_VXLAN_SLOT,
			      UPLINK_VXLAN_INFLIGHT_MAX);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	for (unsigned int i = 0; i < UPLINK_VXLAN_SCRATCH; i++) {
		p->scratch[i] = calloc(1, sizeof(*p->scratch[i]));
		if (!p->scratch[i])
			goto fail;
		pthread_mutex_init(&p->scratch[i]->lock, NULL);
		p->scratch[i]->rl = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	}
	if (spec->nremotes > 1) {
		p->fdb = aligned_alloc(64, sizeof(*p->fdb));
		if (!p->fdb)
			goto fail;
		uplink_vxlan_fdb_init(p->fdb, UPLINK_VXLAN_FDB_AGE_S);
	}
	rc = uplink_reader_init(&p->reader);
	if (rc < 0)
		goto fail;
	rc = uplink_vxlan_socks_open(&p->spec, &p->socks);
	if (rc < 0)
		goto fail;
	rc = sw_port_add(sw, spec->name, &vxlan_port_ops, p, &p->sp);
	if (rc < 0) {
		err("uplink %s: switch port: %s", spec->name, strerror(-rc));
		goto fail;
	}
	sw_port_set_mac_limit(p->sp, UPLINK_VXLAN_MAC_LIMIT);
	rc = uplink_reader_start(&p->reader, reader_thread, p, spec->name);
	if (rc < 0) {
		sw_port_del(sw, p->sp);
		goto fail;
	}
	for (unsigned int i = 0; i < spec->nremotes; i++) {
		size_t off = strlen(addrs);

		uplink_vxlan_addr_str(&spec->remote[i], addr);
		snprintf(addrs + off, sizeof(addrs) - off, "%s%s", i ? " " : "", addr);
	}
	uplink_vxlan_addr_str(&spec->local, local);
	for (unsigned int i = 0; i < p->socks.nsrc; i++) {
		size_t off = strlen(srcs);

		snprintf(srcs + off, sizeof(srcs) - off, "%s%u", i ? " " : "",
			 p->socks.src_port[i]);
	}
	info("uplink %s%s%s: VXLAN port %u, vni %u, remote%s %s port %u, local %s%s, mtu %u, "
	     "source port%s %s",
	     spec->name, *spec->netns ? " in netns " : "", spec->netns, p->sp->num, spec->vni,
	     spec->nremotes > 1 ? "s" : "", addrs, spec->dstport, local,
	     spec->share ? " (its port shared with other VNIs' uplinks)" : "", spec->mtu,
	     p->socks.nsrc > 1 ? "s" : "", srcs);
	*out = p;
	return 0;
fail:
	p->sp = NULL;
	uplink_vxlan_port_destroy(p);
	return rc;
}

/* The port's transmit counters by name (the receive drops are named by uplink_vxlan_drop_name()). */
static const struct {
	const char *name;
	size_t off;
} tx_counters[] = {
    {"tx_segmented", offsetof(struct uplink_vxlan_port, tx_segmented)},
    {"tx_sw_csum", offsetof(struct uplink_vxlan_port, tx_sw_csum)},
    {"tx_oversize", offsetof(struct uplink_vxlan_port, tx_oversize)},
    {"tx_bad_offload", offsetof(struct uplink_vxlan_port, tx_bad_offload)},
    {"tx_eagain", offsetof(struct uplink_vxlan_port, tx_eagain)},
    {"tx_errors", offsetof(struct uplink_vxlan_port, tx_errors)},
    {"tx_flooded", offsetof(struct uplink_vxlan_port, tx_flooded)},
};

#define NTX (sizeof(tx_counters) / sizeof(tx_counters[0]))

unsigned int uplink_vxlan_port_counters(struct uplink_vxlan_port *p, const char **names,
					uint64_t *vals, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < UPLINK_VXLAN_DROP_NR && n < max; i++, n++) {
		names[n] = uplink_vxlan_drop_name((enum uplink_vxlan_drop)i);
		vals[n] = atomic_load_explicit(&p->drops[i], memory_order_relaxed);
	}
	for (unsigned int i = 0; i < NTX && n < max; i++, n++) {
		names[n] = tx_counters[i].name;
		vals[n] = atomic_load_explicit((_Atomic uint64_t *)((char *)p + tx_counters[i].off),
					       memory_order_relaxed);
	}
	return n;
}

uint64_t uplink_vxlan_port_stat(struct uplink_vxlan_port *p, const char *name)
{
	const char *names[UPLINK_VXLAN_DROP_NR + NTX];
	uint64_t vals[UPLINK_VXLAN_DROP_NR + NTX];
	unsigned int n = uplink_vxlan_port_counters(p, names, vals, UPLINK_VXLAN_DROP_NR + NTX);

	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return vals[i];
	return UINT64_MAX;
}

struct sw_port *uplink_vxlan_port_sw(const struct uplink_vxlan_port *p)
{
	return p->sp;
}

void uplink_vxlan_port_destroy(struct uplink_vxlan_port *p)
{
	if (!p)
		return;
	uplink_reader_stop(&p->reader);
	if (p->sp) {
		const char *names[UPLINK_VXLAN_DROP_NR + NTX];
		uint64_t vals[UPLINK_VXLAN_DROP_NR + NTX];
		unsigned int n =
		    uplink_vxlan_port_counters(p, names, vals, UPLINK_VXLAN_DROP_NR + NTX);
		char line[768];
		int off = 0;

		/* After this, xmit() is never called again: the scratch areas are free. */
		sw_port_del(p->sw, p->sp);
		for (unsigned int i = 0; i < n && off < (int)sizeof(line); i++)
			off += snprintf(line + off, sizeof(line) - (size_t)off, "%s%s %llu",
					i ? " " : "", names[i], (unsigned long long)vals[i]);
		info("uplink %s: %s", p->spec.name, line);
	}
	for (unsigned int i = 0; i < UPLINK_VXLAN_SCRATCH; i++) {
		if (p->scratch[i])
			pthread_mutex_destroy(&p->scratch[i]->lock);
		free(p->scratch[i]);
	}
	uplink_vxlan_socks_close(&p->socks, p->spec.name);
	free(p->fdb);
	/* Frames still out keep the pool, and the port it lives in, alive. */
	if (uplink_pool_fini(&p->pool, p->spec.name, UPLINK_VXLAN_DRAIN_MS))
		free(p);
}
