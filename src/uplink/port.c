// SPDX-License-Identifier: MIT
/* port.c - the TAP uplink: a switch port of pvnetd whose other side is a kernel stack or bridge */

/*
 * Theory of Operation
 *
 * One TAP queue, two directions, two kinds of thread:
 *
 *   TAP -> switch  the port's reader thread (the only thread that calls
 *                  sw_forward() with this port).  Per wakeup it read()s up
 *                  to UPLINK_BATCH frames, one per read (a TAP returns one
 *                  frame per read), each into a free buffer of the port's
 *                  private pool: the kernel's bytes are read once into
 *                  memory nobody else writes, the virtio header is
 *                  validated and mapped (uplink_vnet2meta), and the buffer's
 *                  struct sw_pkt points its hdr and its single fragment at
 *                  the copy.  Then one sw_forward() for the batch.  The
 *                  buffer is free again when the last consumer puts the
 *                  frame (pool.h: no lock and no system call per frame).
 *
 *   switch -> TAP  xmit(), on whatever data-path thread forwards to us
 *                  (netback TX workers, concurrently).  One writev() per
 *                  frame: the virtio header built from the frame's netif
 *                  flags and GSO info (uplink_meta2vnet on the private
 *                  header copy), then the frame's pieces.  The fd is
 *                  non-blocking; EAGAIN refuses the frame and the rest of
 *                  the call (the switch counts them as tx_dropped, we count
 *                  tx_eagain).  Writes from several threads to one TAP fd
 *                  are atomic per frame in the kernel.
 *
 * Counters of our own (validation drops by reason, write failures) are
 * relaxed atomics, written by the reader or by xmit callers; the switch's
 * per-port counters cover the rest.
 */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "switch/switch.h"
#include "uplink/pool.h"
#include "uplink/port.h"
#include "uplink/tap.h"
#include "uplink/vnet.h"

_Static_assert(SW_PKT_CSUM_BLANK == UPLINK_F_CSUM_BLANK, "flag bits differ");
_Static_assert(SW_PKT_DATA_VALIDATED == UPLINK_F_DATA_VALIDATED, "flag bits differ");
_Static_assert(SW_GSO_TCPV4 == UPLINK_GSO_TCPV4 && SW_GSO_TCPV6 == UPLINK_GSO_TCPV6,
	       "GSO numbering differs");

/* Frames read per wakeup and handed to one sw_forward(): the switch's batch. */
#define UPLINK_BATCH SW_BATCH_MAX

/*
 * Buffers in the pool: 128 of 64 KiB (8 MiB of address space, touched only
 * as far as frames are long).  Frames stay in the pool while vif queues
 * hold them (netback's RX queue takes at most 512 KiB, 8 such frames, per
 * queue), so 128 covers 16 busy vif queues before the reader has to wait.
 */
#define UPLINK_POOL 128u

/*
 * Bytes of frames in flight (read from the TAP, not yet done) before the
 * reader waits: 256 KiB, a small part of netback's per-queue RX bound
 * (8 MiB; 512 KiB when this was chosen).
 * The switch has no backpressure: a vif queue that is full drops.  Waiting
 * here instead leaves the excess in the TAP's queue, where TCP sees it as
 * delay rather than loss.  Four 64 KiB TSO frames keep a receiver busy.
 */
#define UPLINK_INFLIGHT_MAX (256u * 1024u)

/* One buffer: the virtio header and the largest frame. */
#define UPLINK_SLOT (sizeof(struct virtio_net_hdr) + UPLINK_MAX_FRAME)
_Static_assert(UPLINK_MAX_FRAME <= UINT16_MAX, "a frame's length fits sw_pkt.hdr_len");

/* Pause after a TAP read error other than EAGAIN before trying again. */
#define UPLINK_RETRY_MS 1000

/* How long destroy waits for frames still queued at other ports before leaking the pool. */
#define UPLINK_DRAIN_MS 2000

/* Pieces of one frame on the way out: header, hdr copy, SW_PKT_MAX_FRAGS fragments. */
#define XMIT_IOV (SW_PKT_MAX_FRAGS + 2)

struct uplink_tap_port {
	struct sw *sw;
	struct sw_port *sp;
	char name[UPLINK_NETNS_MAX + 1];
	int fd;
	uint32_t mtu; /* the TAP's, followed by the reader thread (link_fd) */
	int link_fd;
	unsigned int ifindex;
	struct uplink_reader reader;
	struct uplink_pool pool;
	struct log_ratelimit rl; /* the reader thread's */
	_Atomic uint64_t drops[UPLINK_DROP_NR];
	_Atomic uint64_t sw_csum;
	_Atomic uint64_t tx_eagain;
	_Atomic uint64_t tx_errors;
	_Atomic uint64_t tx_bad_offload;
	_Atomic bool gone; /* the TAP device was deleted: nothing more is read or written */
};

static void count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

int uplink_tap_spec_parse(const char *spec, char *name, char *netns)
{
	const char *at, *n;
	size_t len;

	if (strncmp(spec, "tap:", 4))
		return -EINVAL;
	n = spec + 4;
	at = strchr(n, '@');
	len = at ? (size_t)(at - n) : strlen(n);
	if (len == 0 || len >= IFNAMSIZ || memchr(n, '/', len))
		return -EINVAL;
	memcpy(name, n, len);
	name[len] = '\0';
	netns[0] = '\0';
	if (at) {
		if (!at[1] || strlen(at + 1) > UPLINK_NETNS_MAX)
			return -EINVAL;
		strcpy(netns, at + 1);
	}
	return 0;
}

/* Read one frame into @b; 1 if it is ready to forward, 0 if dropped, -EAGAIN, -errno. */
static int read_one(struct uplink_tap_port *p, struct uplink_buf *b)
{
	struct virtio_net_hdr vh;
	struct uplink_meta m;
	uint8_t *frame = b->slot + sizeof(vh);
	ssize_t r = read(p->fd, b->slot, UPLINK_SLOT);
	uint32_t len;
	int rc;

	if (r < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if ((size_t)r < sizeof(vh) + UPLINK_ETH_HLEN) {
		count(&p->drops[UPLINK_DROP_RUNT]);
		return 0;
	}
	memcpy(&vh, b->slot, sizeof(vh));
	len = (uint32_t)((size_t)r - sizeof(vh));
	rc = uplink_vnet2meta(
	    &vh, frame, len, p->mtu,
	    UPLINK_OFF_CSUM4 | UPLINK_OFF_CSUM6 | UPLINK_OFF_TSO4 | UPLINK_OFF_TSO6, &m);
	if (rc < 0) {
		count(&p->drops[-rc - 1]);
		log_ratelimited(&p->rl, LOG_DEBUG, "uplink %s: dropped a frame: %s", p->name,
				uplink_drop_name((enum uplink_drop)(-rc - 1)));
		return 0;
	}
	if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(m.flags & UPLINK_F_CSUM_BLANK))
		count(&p->sw_csum);
	memset(&b->pkt, 0, offsetof(struct sw_pkt, refs));
	/*
	 * The pool buffer is ours, not a guest's: the whole frame is private
	 * and may be parsed (an IPv6 header chain longer than netback's header
	 * copy included); len <= UPLINK_MAX_FRAME fits.
	 */
	b->pkt.hdr = frame;
	b->pkt.hdr_len = (uint16_t)len;
	b->pkt.nfrags = 1;
	b->pkt.flags = m.flags;
	b->pkt.gso_type = m.gso_type;
	b->pkt.gso_size = m.gso_size;
	b->pkt.len = len;
	b->pkt.priv = b;
	b->pkt.frag[0] = (struct sw_pkt_frag){.base = frame, .len = len};
	sw_pkt_init(&b->pkt, uplink_buf_done);
	uplink_pool_take(b, len);
	return 1;
}

/* The TAP's MTU changed (ip link set NAME mtu N): frames up to it are the other side's to send. */
static void follow_mtu(struct uplink_tap_port *p)
{
	uint32_t mtu;
	int rc = uplink_link_watch_mtu(p->link_fd, p->ifindex, &mtu);

	if (rc == -ENODEV)
		return; /* gone: read() says so */
	if (rc < 0) {
		/* Never seen; stop watching rather than spin on a socket that stays readable. */
		err("uplink %s: link notifications: %s; the MTU is no longer followed", p->name,
		    strerror(-rc));
		close(p->link_fd);
		p->link_fd = -1;
		return;
	}
	if (mtu > UPLINK_MAX_MTU)
		mtu = UPLINK_MAX_MTU; /* what netif carries: bigger frames are dropped, counted */
	if (mtu == p->mtu)
		return;
	info("uplink %s: mtu %u", p->name, mtu);
	p->mtu = mtu;
}

static void *reader_thread(void *arg)
{
	struct uplink_tap_port *p = arg;
	struct sw_pkt *pkts[UPLINK_BATCH];

	while (!uplink_reader_stopping(&p->reader)) {
		struct pollfd pfd[3] = {{.fd = p->reader.stop_fd, .events = POLLIN},
					{.fd = -1},
					{.fd = p->link_fd, .events = POLLIN}};
		unsigned int n = 0;
		bool starved = false, again = false;
		int rc = 0;

		/*
		 * At most a batch of reads per round, forwarded or dropped: a
		 * stream of frames that are all dropped must not keep the
		 * reader from seeing that it is asked to stop.
		 */
		for (unsigned int reads = 0; reads < UPLINK_BATCH; reads++) {
			struct uplink_buf *b = uplink_pool_get(&p->pool);

			if (!b) {
				starved = true;
				break;
			}
			rc = read_one(p, b);
			if (rc == 1) {
				pkts[n++] = &b->pkt;
				continue;
			}
			uplink_pool_unget(b);
			if (rc < 0)
				break;
			again = true; /* dropped: the TAP may have more */
		}
		if (n)
			sw_forward(p->sw, p->sp, pkts, n);
		if (rc == -EBADFD) {
			/*
			 * The device was deleted (tun says EBADFD once detached).  As
			 * a Linux bridge loses a deleted port, the uplink stops: its
			 * switch port refuses what it is sent (tx_dropped) and learns
			 * nothing new; a TAP made again is not this one.
			 */
			atomic_store(&p->gone, true);
			err("uplink %s: its TAP device is gone: the uplink stops (restart pvnetd "
			    "to have it again)",
			    p->name);
			while (!uplink_reader_stopping(&p->reader))
				if (poll(pfd, 1, -1) < 0 && errno != EINTR)
					break;
			break;
		}
		if (rc < 0 && rc != -EAGAIN) {
			/* The TAP is broken (e.g. deleted): retry once a second, never spin. */
			log_ratelimited(&p->rl, LOG_ERR, "uplink %s: read: %s", p->name,
					strerror(-rc));
			if (poll(pfd, 1, UPLINK_RETRY_MS) < 0 && errno != EINTR)
				break;
			continue;
		}
		if (n || again)
			continue;
		if (starved) {
			if (uplink_pool_starve(&p->pool))
				continue;
			pfd[1] = (struct pollfd){.fd = p->pool.fd, .events = POLLIN};
		} else {
			pfd[1] = (struct pollfd){.fd = p->fd, .events = POLLIN};
		}
		if (poll(pfd, 3, -1) < 0 && errno != EINTR)
			break;
		if (pfd[2].revents)
			follow_mtu(p);
		if (starved)
			uplink_pool_fed(&p->pool);
	}
	return NULL;
}

static unsigned int tap_xmit(struct sw_port *sp, struct sw_pkt **pkts, unsigned int n)
{
	struct uplink_tap_port *p = sp->priv;
	unsigned int i;

	if (atomic_load_explicit(&p->gone, memory_order_relaxed))
		return 0; /* all refused: the switch counts them tx_dropped */
	for (i = 0; i < n; i++) {
		struct sw_pkt *pkt = pkts[i];
		struct uplink_meta m = {
		    .flags = pkt->flags, .gso_type = pkt->gso_type, .gso_size = pkt->gso_size};
		struct iovec iov[XMIT_IOV];
		struct virtio_net_hdr vh;
		uint64_t sum = 0;
		unsigned int k = 1;

		if (pkt->nfrags > SW_PKT_MAX_FRAGS ||
		    uplink_meta2vnet(&m, pkt->hdr, pkt->hdr_len, pkt->len, &vh) < 0) {
			count(&p->tx_bad_offload);
			sw_pkt_put(pkt);
			continue;
		}
		iov[0] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
		for (unsigned int f = 0; f < pkt->nfrags; f++)
			sum += pkt->frag[f].len;
		/* pkt.h: hdr + frags, unless the frags alone are the whole frame. */
		if (sum != pkt->len)
			iov[k++] =
			    (struct iovec){.iov_base = (void *)pkt->hdr, .iov_len = pkt->hdr_len};
		for (unsigned int f = 0; f < pkt->nfrags; f++)
			iov[k++] = (struct iovec){.iov_base = (void *)pkt->frag[f].base,
						  .iov_len = pkt->frag[f].len};
		if (writev(p->fd, iov, (int)k) < 0) {
			if (errno == EAGAIN) {
				atomic_fetch_add_explicit(&p->tx_eagain, n - i,
							  memory_order_relaxed);
				break;
			}
			count(&p->tx_errors);
		}
		sw_pkt_put(pkt);
	}
	return i;
}

static const struct sw_port_ops tap_port_ops = {.xmit = tap_xmit};

static int port_open_tap(struct uplink_tap_port *p, const char *name, const char *netns)
{
	int saved = -1, rc;

	if (*netns) {
		rc = uplink_netns_enter(netns, NULL, &saved);
		if (rc < 0) {
			err("uplink %s: namespace %s: %s", name, netns, strerror(-rc));
			return rc;
		}
	}
	rc = uplink_tap_open(name, 1, false, &p->fd);
	if (rc == 0)
		rc = uplink_tap_offloads(p->fd, UPLINK_OFF_CSUM4 | UPLINK_OFF_CSUM6 |
						    UPLINK_OFF_TSO4 | UPLINK_OFF_TSO6);
	if (rc == 0)
		rc = uplink_tap_link_set(name, NULL, 0);
	if (rc == 0)
		rc = uplink_tap_mtu(name, &p->mtu);
	if (rc == 0)
		rc = uplink_link_index(name, &p->ifindex);
	if (rc == 0) {
		/* Made in the TAP's namespace: the reader follows the MTU set there. */
		p->link_fd = uplink_link_watch();
		rc = p->link_fd < 0 ? p->link_fd : 0;
	}
	if (rc < 0)
		err("uplink %s: %s", name, strerror(-rc));
	if (saved >= 0 && uplink_netns_leave(saved) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int uplink_tap_port_create(struct sw *sw, const char *name, const char *netns,
			   struct uplink_tap_port **out)
{
	struct uplink_tap_port *p = calloc(1, sizeof(*p));
	int rc = -ENOMEM;

	if (!p)
		return -ENOMEM;
	p->sw = sw;
	p->rl = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	p->fd = p->link_fd = p->reader.stop_fd = -1;
	p->pool.fd = -1;
	snprintf(p->name, sizeof(p->name), "%s", name);
	rc = uplink_pool_init(&p->pool, UPLINK_POOL, UPLINK_SLOT, UPLINK_INFLIGHT_MAX);
	if (rc < 0)
		goto fail;
	rc = uplink_reader_init(&p->reader);
	if (rc < 0)
		goto fail;
	rc = port_open_tap(p, name, netns);
	if (rc < 0)
		goto fail;
	rc = sw_port_add(sw, name, &tap_port_ops, p, &p->sp);
	if (rc < 0) {
		err("uplink %s: switch port: %s", name, strerror(-rc));
		goto fail;
	}
	sw_port_set_mac_limit(p->sp, UPLINK_TAP_MAC_LIMIT);
	rc = uplink_reader_start(&p->reader, reader_thread, p, name);
	if (rc < 0) {
		sw_port_del(sw, p->sp);
		goto fail;
	}
	info("uplink %s%s%s: TAP port %u, mtu %u, offloads csum tso4 tso6", name,
	     *netns ? " in netns " : "", netns, p->sp->num, p->mtu);
	*out = p;
	return 0;
fail:
	p->sp = NULL;
	uplink_tap_port_destroy(p);
	return rc;
}

struct sw_port *uplink_tap_port_sw(const struct uplink_tap_port *p)
{
	return p->sp;
}

bool uplink_tap_port_running(const struct uplink_tap_port *p)
{
	return !atomic_load_explicit(&p->gone, memory_order_relaxed);
}

unsigned int uplink_tap_port_counters(struct uplink_tap_port *p, const char **names, uint64_t *vals,
				      unsigned int max)
{
	const struct {
		const char *name;
		_Atomic uint64_t *c;
	} all[] = {
	    {"rx_runt", &p->drops[UPLINK_DROP_RUNT]},
	    {"rx_oversize", &p->drops[UPLINK_DROP_OVERSIZE]},
	    {"rx_bad_gso", &p->drops[UPLINK_DROP_GSO]},
	    {"rx_bad_csum", &p->drops[UPLINK_DROP_CSUM]},
	    {"rx_sw_csum", &p->sw_csum},
	    {"tx_eagain", &p->tx_eagain},
	    {"tx_errors", &p->tx_errors},
	    {"tx_bad_offload", &p->tx_bad_offload},
	};
	unsigned int n = 0;

	for (; n < max && n < sizeof(all) / sizeof(all[0]); n++) {
		names[n] = all[n].name;
		vals[n] = atomic_load_explicit(all[n].c, memory_order_relaxed);
	}
	return n;
}

void uplink_tap_port_destroy(struct uplink_tap_port *p)
{
	if (!p)
		return;
	uplink_reader_stop(&p->reader);
	if (p->sp) {
		sw_port_del(p->sw, p->sp);
		info("uplink %s: rx_runt %llu rx_oversize %llu rx_bad_gso %llu rx_bad_csum %llu "
		     "rx_sw_csum %llu tx_eagain %llu tx_errors %llu tx_bad_offload %llu",
		     p->name, (unsigned long long)p->drops[UPLINK_DROP_RUNT],
		     (unsigned long long)p->drops[UPLINK_DROP_OVERSIZE],
		     (unsigned long long)p->drops[UPLINK_DROP_GSO],
		     (unsigned long long)p->drops[UPLINK_DROP_CSUM], (unsigned long long)p->sw_csum,
		     (unsigned long long)p->tx_eagain, (unsigned long long)p->tx_errors,
		     (unsigned long long)p->tx_bad_offload);
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->link_fd >= 0)
		close(p->link_fd);
	/* Frames still out keep the pool, and the port it lives in, alive. */
	if (uplink_pool_fini(&p->pool, p->name, UPLINK_DRAIN_MS))
		free(p);
}
