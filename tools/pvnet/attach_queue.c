// SPDX-License-Identifier: MIT
/* attach_queue.c - pvnet attach: one queue thread moving frames between a TAP queue and a vif queue */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach.h"

_Static_assert(PVNET_PKT_CSUM_BLANK == UPLINK_F_CSUM_BLANK, "flag bits differ");
_Static_assert(PVNET_PKT_DATA_VALIDATED == UPLINK_F_DATA_VALIDATED, "flag bits differ");
_Static_assert(PVNET_GSO_TCPV4 == UPLINK_GSO_TCPV4 && PVNET_GSO_TCPV6 == UPLINK_GSO_TCPV6,
	       "GSO numbering differs");

/* Frames taken from the vif per pvnet_rx_burst(): the same budget. */
#define RX_BURST ATTACH_BATCH

/* One writev: the virtio header and at most PVNET_MAX_FRAGS + 1 buffers (a GSO frame's pages). */
#define WRITE_IOV (PVNET_MAX_FRAGS + 2u)

/* Write one frame received from the vif to the TAP (refusals are counted). */
static void vif2tap_one(struct attach_queue *q, struct pvnet_buf *b)
{
	struct iovec iov[WRITE_IOV];
	uint8_t hdr[ATTACH_HDR_COPY];
	struct virtio_net_hdr vh;
	struct uplink_meta m = {
	    .flags = (uint8_t)(b->flags & (PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED)),
	    .gso_type = b->gso_type,
	    .gso_size = b->gso_size};
	uint32_t hl = 0, n = 1;
	struct pvnet_buf *f;
	ssize_t w;

	/* Private copy of the first bytes: the parse below is not raced by anyone. */
	for (f = b; f; f = f->next) {
		uint32_t take = f->len < sizeof(hdr) - hl ? f->len : (uint32_t)sizeof(hdr) - hl;

		if (n == WRITE_IOV) { /* longer than libpvnet's chain bound: never written cut */
			q->st.tap_tx_bad_offload++;
			return;
		}
		memcpy(hdr + hl, f->data, take);
		hl += take;
		iov[n++] = (struct iovec){.iov_base = f->data, .iov_len = f->len};
	}
	if (uplink_meta2vnet(&m, hdr, hl, b->pkt_len, &vh) < 0) {
		q->st.tap_tx_bad_offload++;
		return;
	}
	iov[0] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
	w = writev(q->tap_fd, iov, (int)n);
	if (w < 0) {
		q->st.tap_tx_dropped++;
		return;
	}
	q->st.tap_tx_packets++;
	q->st.tap_tx_bytes += b->pkt_len;
}

/* vif -> TAP; returns frames moved or a negative data-call error. */
static int vif2tap(struct attach_queue *q)
{
	struct pvnet_buf *bufs[RX_BURST];
	int n = pvnet_rx_burst(q->a->vif, q->idx, bufs, RX_BURST);

	if (n <= 0)
		return n;
	for (int i = 0; i < n; i++)
		vif2tap_one(q, bufs[i]);
	pvnet_rx_release(q->a->vif, q->idx, bufs, (unsigned int)n);
	return n;
}

/* Read up to ATTACH_BATCH frames from the TAP into the private slots, validated. */
static int tap_read(struct attach_queue *q)
{
	unsigned int got = 0;

	for (unsigned int i = 0; i < ATTACH_BATCH; i++) {
		uint8_t *slot = q->slots + (size_t)i * ATTACH_SLOT;
		struct virtio_net_hdr vh;
		struct uplink_meta m;
		uint8_t *frame = slot + sizeof(vh);
		ssize_t r = read(q->tap_fd, slot, ATTACH_SLOT);
		uint32_t len;
		int rc;

		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return -errno;
		}
		if ((size_t)r < sizeof(vh) + UPLINK_ETH_HLEN) {
			q->st.tap_rx_drops[UPLINK_DROP_RUNT]++;
			continue;
		}
		/* The slot is ours: one copy of the header, validated, then used. */
		memcpy(&vh, slot, sizeof(vh));
		len = (uint32_t)((size_t)r - sizeof(vh));
		rc = uplink_vnet2meta(&vh, frame, len, q->a->mtu, q->a->offloads, &m);
		if (rc < 0) {
			q->st.tap_rx_drops[-rc - 1]++;
			continue;
		}
		if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(m.flags & UPLINK_F_CSUM_BLANK))
			q->st.tap_rx_sw_csum++;
		q->pend[got++] = (struct pvnet_pkt){.data = frame,
						    .len = len,
						    .flags = m.flags,
						    .gso_type = m.gso_type,
						    .gso_size = m.gso_size};
	}
	q->pend_head = 0;
	q->pend_n = got;
	return (int)got;
}

/* Push pending frames to the vif; returns frames sent or a negative data-call error. */
static int tap2vif_send(struct attach_queue *q)
{
	int sent = 0;

	while (q->pend_n) {
		int rc = pvnet_send(q->a->vif, q->idx, q->pend + q->pend_head, q->pend_n);

		if (rc == -EINVAL) { /* validated above; libpvnet disagrees: drop it, counted */
			q->st.tap_rx_send_errors++;
			rc = 1;
		} else if (rc < 0) {
			return rc;
		} else if (rc == 0) {
			break;
		} else {
			for (int i = 0; i < rc; i++) {
				q->st.tap_rx_packets++;
				q->st.tap_rx_bytes += q->pend[q->pend_head + (unsigned int)i].len;
			}
		}
		q->pend_head += (unsigned int)rc;
		q->pend_n -= (unsigned int)rc;
		sent += rc;
	}
	return sent;
}

void *attach_queue_thread(void *arg)
{
	struct attach_queue *q = arg;
	struct attach *a = q->a;
	int vfd = pvnet_queue_fd(a->vif, q->idx), rc = 0;

	while (!atomic_load_explicit(&a->stop, memory_order_acquire)) {
		struct pollfd pfd[3] = {{.fd = vfd, .events = POLLIN},
					{.fd = a->stop_fd, .events = POLLIN},
					{.fd = q->tap_fd, .events = POLLIN}};
		int moved = 0;

		rc = vif2tap(q);
		if (rc < 0)
			goto fail;
		moved += rc;
		if (!q->pend_n) {
			rc = tap_read(q);
			if (rc < 0)
				goto fail;
		}
		rc = tap2vif_send(q);
		if (rc < 0)
			goto fail;
		moved += rc;
		if (moved)
			continue;
		/* Nothing to do: sleep.  With frames pending, only the vif (completions) matters. */
		if (poll(pfd, q->pend_n ? 2 : 3, -1) < 0 && errno != EINTR) {
			rc = -errno;
			goto fail;
		}
	}
	return NULL;
fail:
	q->error = rc;
	if (write(a->fail_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
		/* An eventfd write fails only on overflow: the main thread is awake anyway. */
	}
	return NULL;
}
