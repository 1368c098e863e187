// SPDX-License-Identifier: MIT
/* capture.c - copies of a port's frames to a socket, for `pvnet capture` */

/*
 * Theory of Operation
 *
 * A capture hangs off its port (struct sw_port.capture).  sw_forward()
 * looks at that pointer once per batch for the input port and once per
 * output port, so a port nobody captures pays one load per batch.  A
 * captured batch is sent with one nonblocking sendmmsg(): each record is a
 * struct sw_capture_hdr and iovecs that point into the frame itself (the
 * private header copy and the fragments), cut at the snap length, and the
 * records are packed into datagrams of up to 64 KiB, so that the kernel
 * allocates one buffer per datagram, not per frame, and makes the only
 * copy.  The bytes of a fragment may be in a guest's
 * memory and change under the copy: a capture shows what was there, and
 * nothing here parses them.
 *
 * Life time: start and stop run on control threads under the switch's
 * ctl_lock, and publish or unpublish the pointer; stop then waits for a
 * grace period (epoch.c) before it closes the socket and frees.  When the
 * port goes first, sw_port_del() unpublishes the capture within its own
 * grace period and shuts the socket down, so the reader sees end of file.
 */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "switch/internal.h"

/**
 * struct sw_capture - one capture (see switch.h)
 * @port: the port, NULL once it went away (ctl_lock)
 * @name: the port's name, for the control plane's replies
 * @num: the port's number (read by the data path, unlike @port)
 * @fd: the socket
 * @dir: SW_CAPTURE_IN and/or SW_CAPTURE_OUT
 * @snaplen: most bytes copied of a frame
 * @captured: frames the socket took
 * @dropped: frames it did not
 */
struct sw_capture {
	struct sw_port *port;
	char name[SW_PORT_NAME_MAX];
	uint16_t num;
	int fd;
	unsigned int dir;
	uint32_t snaplen;
	_Alignas(64) _Atomic uint64_t captured;
	_Atomic uint64_t dropped;
};

/* Pieces of a record: our header, the frame's header copy, its fragments, the padding. */
#define CAP_IOV (3 + SW_PKT_MAX_FRAGS)

int sw_capture_start(struct sw *sw, const char *port, unsigned int dir, uint32_t snaplen, int fd,
		     struct sw_capture **out)
{
	struct sw_capture *cap;
	struct sw_port *p = NULL;
	int rc = 0;

	if (!dir || (dir & ~(SW_CAPTURE_IN | SW_CAPTURE_OUT)) || !snaplen ||
	    snaplen > SW_CAPTURE_SNAPMAX || fd < 0 || !port)
		return -EINVAL;
	cap = calloc(1, sizeof(*cap));
	if (!cap)
		return -ENOMEM;
	cap->fd = fd;
	cap->dir = dir;
	cap->snaplen = snaplen;

	pthread_mutex_lock(&sw->ctl_lock);
	p = sw_port_by_name(sw, port);
	if (!p) {
		rc = -ENOENT;
	} else if (atomic_load_explicit(&p->capture, memory_order_relaxed)) {
		rc = -EBUSY;
	} else {
		cap->port = p;
		cap->num = p->num;
		memcpy(cap->name, p->name, sizeof(cap->name));
		/* Release: a forwarding thread that sees the pointer sees @cap filled in. */
		atomic_store_explicit(&p->capture, cap, memory_order_release);
	}
	pthread_mutex_unlock(&sw->ctl_lock);
	if (rc < 0) {
		free(cap);
		return rc;
	}
	*out = cap;
	return 0;
}

void sw_capture_stats_get(const struct sw_capture *cap, struct sw_capture_stats *st)
{
	st->captured = atomic_load_explicit(&cap->captured, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&cap->dropped, memory_order_relaxed);
}

void sw_capture_info(const struct sw_capture *cap, unsigned int *dir, uint32_t *snaplen)
{
	*dir = cap->dir;
	*snaplen = cap->snaplen;
}

const char *sw_capture_port(const struct sw_capture *cap)
{
	return cap->name;
}

bool sw_capture_ended(struct sw *sw, const struct sw_capture *cap)
{
	bool ended;

	pthread_mutex_lock(&sw->ctl_lock);
	ended = !cap->port;
	pthread_mutex_unlock(&sw->ctl_lock);
	return ended;
}

void sw_capture_stop(struct sw *sw, struct sw_capture *cap, struct sw_capture_stats *st)
{
	if (!cap)
		return;
	pthread_mutex_lock(&sw->ctl_lock);
	if (cap->port) {
		atomic_store(&cap->port->capture, NULL);
		cap->port = NULL;
		sw_epoch_synchronize(sw);
	}
	pthread_mutex_unlock(&sw->ctl_lock);
	if (st)
		sw_capture_stats_get(cap, st);
	close(cap->fd);
	free(cap);
}

/* sw_port_del(), under ctl_lock: unpublish @p's capture; the caller's grace period follows. */
struct sw_capture *sw_capture_detach(struct sw_port *p)
{
	struct sw_capture *cap = atomic_load_explicit(&p->capture, memory_order_relaxed);

	if (cap) {
		atomic_store(&p->capture, NULL);
		cap->port = NULL;
	}
	return cap;
}

/* sw_port_del(), after its grace period: tell the reader the port is gone. */
void sw_capture_gone(struct sw_capture *cap)
{
	if (cap)
		shutdown(cap->fd, SHUT_RDWR);
}

/* Point @iov at the first @snap bytes of @pkt; returns the entries used, *@bytes their sum. */
static unsigned int frame_iov(const struct sw_pkt *pkt, struct iovec *iov, uint32_t snap,
			      uint32_t *bytes)
{
	unsigned int k = 0,
		     nfrags = pkt->nfrags < SW_PKT_MAX_FRAGS ? pkt->nfrags : SW_PKT_MAX_FRAGS;
	uint32_t left = snap;
	uint64_t sum = 0;

	for (unsigned int f = 0; f < nfrags; f++)
		sum += pkt->frag[f].len;
	/* pkt.h: the header copy, then the fragments, unless these are the whole frame. */
	if (sum != pkt->len && pkt->hdr_len && left) {
		uint32_t l = pkt->hdr_len < left ? pkt->hdr_len : left;

		iov[k++] = (struct iovec){.iov_base = (void *)pkt->hdr, .iov_len = l};
		left -= l;
	}
	for (unsigned int f = 0; f < nfrags && left; f++) {
		uint32_t l = pkt->frag[f].len < left ? pkt->frag[f].len : left;

		if (!l)
			continue;
		iov[k++] = (struct iovec){.iov_base = (void *)pkt->frag[f].base, .iov_len = l};
		left -= l;
	}
	*bytes = snap - left;
	return k;
}

/*
 * From sw_forward(): a record per frame of @pkts, packed into as few
 * datagrams as SW_CAPTURE_DGRAM and the kernel's iovec bound allow (64
 * small frames make one), and one sendmmsg() for all of them.
 */
void sw_capture_batch(struct sw_capture *cap, struct sw_pkt *const *pkts, unsigned int n,
		      unsigned int dir)
{
	static const uint8_t zeros[SW_CAPTURE_ALIGN];
	struct mmsghdr msg[SW_BATCH_MAX];
	struct iovec iov[SW_BATCH_MAX * CAP_IOV];
	struct sw_capture_hdr hdr[SW_BATCH_MAX];
	uint8_t frames[SW_BATCH_MAX]; /* records per datagram */
	unsigned int nmsg = 0, niov = 0, first = 0, captured = 0;
	size_t dlen = 0;
	struct timespec ts;
	uint64_t now;

	if (!(cap->dir & dir) || !n)
		return;
	if (n > SW_BATCH_MAX)
		n = SW_BATCH_MAX; /* sw_forward() hands out at most that many */
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	for (unsigned int i = 0; i < n; i++) {
		const struct sw_pkt *pkt = pkts[i];
		struct iovec piece[CAP_IOV];
		uint32_t caplen;
		unsigned int k = frame_iov(pkt, piece, cap->snaplen, &caplen);
		size_t rec = sizeof(hdr[i]) + caplen, pad = -rec % SW_CAPTURE_ALIGN;

		/* Close the open datagram if this record would overfill it. */
		if (nmsg &&
		    (dlen + rec + pad > SW_CAPTURE_DGRAM || niov - first + k + 2 > IOV_MAX)) {
			msg[nmsg - 1].msg_hdr.msg_iovlen = niov - first;
			first = niov;
			dlen = 0;
		}
		if (!dlen) {
			msg[nmsg] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[niov]}};
			frames[nmsg++] = 0;
		}
		hdr[i] = (struct sw_capture_hdr){.ts_ns = now,
						 .len = pkt->len,
						 .dir = (uint8_t)dir,
						 .flags = pkt->flags,
						 .gso_type = pkt->gso_type,
						 .gso_size = pkt->gso_size,
						 .port = cap->num,
						 .caplen = caplen};
		iov[niov++] = (struct iovec){.iov_base = &hdr[i], .iov_len = sizeof(hdr[i])};
		memcpy(&iov[niov], piece, k * sizeof(piece[0]));
		niov += k;
		if (pad)
			iov[niov++] = (struct iovec){.iov_base = (void *)zeros, .iov_len = pad};
		dlen += rec + pad;
		frames[nmsg - 1]++;
	}
	msg[nmsg - 1].msg_hdr.msg_iovlen = niov - first;
	for (unsigned int sent = 0; sent < nmsg;) {
		int r = sendmmsg(cap->fd, msg + sent, nmsg - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r <= 0)
			break; /* full, or the reader went away: drop the rest */
		for (int j = 0; j < r; j++)
			captured += frames[sent + (unsigned int)j];
		sent += (unsigned int)r;
	}
	if (captured)
		atomic_fetch_add_explicit(&cap->captured, captured, memory_order_relaxed);
	if (n - captured)
		atomic_fetch_add_explicit(&cap->dropped, n - captured, memory_order_relaxed);
}
