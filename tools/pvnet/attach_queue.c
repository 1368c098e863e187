// SPDX-License-Identifier: MIT
/* attach_queue.c - pvnet attach: one queue thread moving frames between a TAP queue and a vif queue */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "attach.h"
#include "switch/frame.h"
#include "switch/pkt.h"

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
	uint8_t hdr[SW_PKT_OFFLOAD_HDR_MAX];
	struct virtio_net_hdr vh;
	struct uplink_meta m = {
	    .flags = (uint8_t)(b->flags & (PVNET_PKT_CSUM_BLANK | PVNET_PKT_DATA_VALIDATED)),
	    .gso_type = b->gso_type,
	    .gso_size = b->gso_size};
	uint32_t want = 0, hl = 0, n = 1;
	struct pvnet_buf *f;
	ssize_t w;

	/* Only an offloaded frame's headers are parsed, in a private copy of them. */
	if ((m.flags & UPLINK_F_CSUM_BLANK) || m.gso_type != UPLINK_GSO_NONE)
		want = sizeof(hdr);
	for (f = b; f; f = f->next) {
		uint32_t take = f->len < want - hl ? f->len : want - hl;

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

/* Copy a chain's first @len bytes into @dst. */
static void chain2lin(const struct pvnet_buf *b, uint32_t len, uint8_t *dst)
{
	for (uint32_t off = 0; b && off < len; b = b->next) {
		uint32_t take = b->len < len - off ? b->len : len - off;

		memcpy(dst + off, b->data, take);
		off += take;
	}
}

/* Byte @off of a frame laid over whole pages. */
static uint8_t *chain_byte(struct pvnet_buf *b, uint32_t off)
{
	for (; b && off >= b->len; b = b->next)
		off -= b->len;
	return b ? (uint8_t *)b->data + off : NULL;
}

int attach_frame_check(const struct virtio_net_hdr *vh, struct pvnet_buf *head, uint32_t len,
		       uint32_t mtu, uint32_t offloads, uint8_t *lin, struct uplink_meta *out,
		       bool *linearized)
{
	uint32_t field = (uint32_t)vh->csum_start + vh->csum_offset;
	uint8_t *first = head->data;
	struct sw_l4 l4;
	int rc;

	*linearized = false;
	if (len > UPLINK_MAX_FRAME) {
		memset(out, 0, sizeof(*out));
		return uplink_drop_reason(UPLINK_DROP_OVERSIZE);
	}
	/* Within one page: the page is the whole frame, contiguous and private. */
	if (len <= head->len)
		return uplink_vnet2meta(vh, first, len, mtu, offloads, out);
	/*
	 * A TSO frame whose checksum field and headers lie in the first page:
	 * uplink_vnet2meta() then reads nothing past them (the GSO checks
	 * look at the headers, the flags and the MTU, and "payload present"
	 * holds since the headers end within the first page of a longer
	 * frame), and writes nothing, so the first page gives the verdict
	 * the whole frame would.
	 */
	if ((vh->gso_type == VIRTIO_NET_HDR_GSO_TCPV4 ||
	     vh->gso_type == VIRTIO_NET_HDR_GSO_TCPV6) &&
	    (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && field + 2 <= head->len &&
	    sw_frame_parse(first, head->len, &l4) == 0)
		return uplink_vnet2meta(vh, first, head->len, mtu, offloads, out);
	/* Anything else over a page (jumbo frames without TSO, odd headers): a linear copy. */
	*linearized = true;
	chain2lin(head, len, lin);
	rc = uplink_vnet2meta(vh, lin, len, mtu, offloads, out);
	if (rc == 0 && (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
	    !(out->flags & UPLINK_F_CSUM_BLANK)) {
		/* The checksum was computed in the copy: its two bytes go into the frame. */
		for (uint32_t i = field; i < field + 2; i++) {
			uint8_t *p = chain_byte(head, i);

			if (p)
				*p = lin[i];
		}
	}
	return rc;
}

/*
 * Fill the stash up to ATTACH_READ_PAGES buffers.  Return 0, -ENOBUFS when
 * it stays short (pvnet_tx_alloc() found none and armed the completion
 * event), or a data-call error.
 */
static int stash_fill(struct attach_queue *q)
{
	while (q->nstash < ATTACH_READ_PAGES) {
		int n = pvnet_tx_alloc(q->a->vif, q->idx, q->stash + q->nstash,
				       ATTACH_READ_PAGES - q->nstash);

		if (n < 0)
			return n;
		if (n == 0)
			return -ENOBUFS;
		q->nstash += (unsigned int)n;
	}
	return 0;
}

/*
 * The frame length of a readv() of a virtio-net header and a frame from the
 * TAP: 1 with *len set, 0 when the frame was dropped (counted), -EAGAIN when
 * the TAP is empty, or -errno.  read() says how long the frame was even
 * when it copied less: checked before anything is used.
 */
static int tap_read_len(struct attach_queue *q, ssize_t r, uint32_t *len)
{
	if (r < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if ((size_t)r < sizeof(struct virtio_net_hdr) + UPLINK_ETH_HLEN) {
		q->st.tap_rx_drops[UPLINK_DROP_RUNT]++;
		return 0;
	}
	if ((size_t)r - sizeof(struct virtio_net_hdr) > UPLINK_MAX_FRAME) {
		q->st.tap_rx_drops[UPLINK_DROP_OVERSIZE]++;
		return 0;
	}
	*len = (uint32_t)((size_t)r - sizeof(struct virtio_net_hdr));
	return 1;
}

/*
 * Read one frame into the top of the stash.  Return 1 with *head and *len
 * set when a frame passed validation (its buffers left the stash), 0 when
 * one was dropped, -EAGAIN when the TAP is empty, or -errno.
 */
static int tap_read_one(struct attach_queue *q, struct pvnet_buf **head, uint32_t *len)
{
	struct iovec iov[1 + ATTACH_READ_PAGES];
	struct virtio_net_hdr vh;
	struct pvnet_buf *b;
	struct uplink_meta m;
	unsigned int np;
	bool lin;
	int rc;

	iov[0] = (struct iovec){.iov_base = &vh, .iov_len = sizeof(vh)};
	for (unsigned int k = 0; k < ATTACH_READ_PAGES; k++)
		iov[1 + k] = (struct iovec){.iov_base = q->stash[q->nstash - 1 - k]->page,
					    .iov_len = PVNET_PAGE_SIZE};
	rc = tap_read_len(q, readv(q->tap_fd, iov, 1 + ATTACH_READ_PAGES), len);
	if (rc <= 0)
		return rc;
	/* Chain the pages the frame filled (every field set: a stashed buffer may be stale). */
	np = (*len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;
	for (unsigned int k = 0; k < np; k++) {
		b = q->stash[q->nstash - 1 - k];
		b->data = b->page;
		b->len = k + 1 < np ? PVNET_PAGE_SIZE : *len - k * PVNET_PAGE_SIZE;
		b->next = k + 1 < np ? q->stash[q->nstash - 2 - k] : NULL;
	}
	b = q->stash[q->nstash - 1];
	rc =
	    attach_frame_check(&vh, b, *len, atomic_load_explicit(&q->a->mtu, memory_order_relaxed),
			       q->a->offloads, q->lin, &m, &lin);
	q->st.tap_rx_linearized += lin;
	if (rc < 0) {
		q->st.tap_rx_drops[-rc - 1]++;
		return 0; /* the pages stay in the stash */
	}
	if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(m.flags & UPLINK_F_CSUM_BLANK))
		q->st.tap_rx_sw_csum++;
	b->flags = m.flags;
	b->gso_type = m.gso_type;
	b->gso_size = m.gso_size;
	q->nstash -= np;
	*head = b;
	return 1;
}

/*
 * The stash is short of a largest frame (the vif has most TX pages in
 * flight): read one frame into the private buffer instead, validated there
 * as the copying adapter did, so that what is in flight can still grow to
 * the whole budget.  Return 1 when a frame is now held, 0 when one was
 * dropped, -EAGAIN when the TAP is empty, or -errno.
 */
static int tap_read_held(struct attach_queue *q)
{
	struct iovec iov[2] = {{.iov_base = &q->held_vh, .iov_len = sizeof(q->held_vh)},
			       {.iov_base = q->lin, .iov_len = UPLINK_MAX_FRAME}};
	struct virtio_net_hdr vh;
	int rc = tap_read_len(q, readv(q->tap_fd, iov, 2), &q->held_len);

	if (rc <= 0)
		return rc;
	vh = q->held_vh;
	rc = uplink_vnet2meta(&vh, q->lin, q->held_len,
			      atomic_load_explicit(&q->a->mtu, memory_order_relaxed),
			      q->a->offloads, &q->held_meta);
	if (rc < 0) {
		q->st.tap_rx_drops[-rc - 1]++;
		return 0;
	}
	if ((vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !(q->held_meta.flags & UPLINK_F_CSUM_BLANK))
		q->st.tap_rx_sw_csum++;
	q->st.tap_rx_held++;
	q->held = true;
	return 1;
}

/*
 * Copy the held frame into TX pages once the stash has enough of them.
 * Return 1 with *head and *len set, -ENOBUFS while pages are short (the
 * completion event is armed), or a data-call error.
 */
static int held_place(struct attach_queue *q, struct pvnet_buf **head, uint32_t *len)
{
	unsigned int np = (q->held_len + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE;
	struct pvnet_buf *b = NULL;
	int rc = stash_fill(q);

	if (rc < 0 && (rc != -ENOBUFS || q->nstash < np))
		return rc;
	for (unsigned int k = np; k-- > 0;) {
		struct pvnet_buf *p = q->stash[q->nstash - 1 - k];
		uint32_t off = k * PVNET_PAGE_SIZE;

		p->data = p->page;
		p->len = k + 1 < np ? PVNET_PAGE_SIZE : q->held_len - off;
		p->next = b;
		memcpy(p->data, q->lin + off, p->len);
		b = p;
	}
	b->flags = q->held_meta.flags;
	b->gso_type = q->held_meta.gso_type;
	b->gso_size = q->held_meta.gso_size;
	q->nstash -= np;
	q->held = false;
	*head = b;
	*len = q->held_len;
	return 1;
}

/*
 * Read up to ATTACH_BATCH frames from the TAP straight into TX buffers,
 * validated; with the stash short, one frame into the private buffer,
 * placed in TX pages as soon as there are enough.
 */
static int tap_read(struct attach_queue *q)
{
	unsigned int got = 0;

	q->starved = false;
	for (unsigned int i = 0; i < ATTACH_BATCH; i++) {
		int rc;

		if (q->held) {
			rc = held_place(q, &q->pend[got], &q->pend_len[got]);
			if (rc == -ENOBUFS) {
				q->starved = true;
				break;
			}
			if (rc < 0)
				return rc;
			got++;
			continue;
		}
		rc = stash_fill(q);
		if (rc == -ENOBUFS)
			rc = tap_read_held(q);
		else if (rc == 0)
			rc = tap_read_one(q, &q->pend[got], &q->pend_len[got]);
		else
			return rc;
		if (rc == -EAGAIN)
			break;
		if (rc < 0)
			return rc;
		if (!q->held)
			got += (unsigned int)rc;
	}
	q->pend_head = 0;
	q->pend_n = got;
	return (int)got;
}

/* Submit pending frames to the vif; returns frames sent or a negative data-call error. */
static int tap2vif_send(struct attach_queue *q)
{
	int sent = 0;

	while (q->pend_n) {
		int rc = pvnet_tx_submit(q->a->vif, q->idx, q->pend + q->pend_head, q->pend_n);

		/* Validated above; libpvnet disagrees (or the vif cannot carry it): drop it, counted. */
		if (rc == -EINVAL || rc == -EOPNOTSUPP) {
			q->st.tap_rx_send_errors++;
			pvnet_tx_free(q->a->vif, q->idx, q->pend + q->pend_head, 1);
			rc = 1;
		} else if (rc < 0) {
			return rc;
		} else if (rc == 0) {
			break;
		} else {
			for (int i = 0; i < rc; i++) {
				q->st.tap_rx_packets++;
				q->st.tap_rx_bytes += q->pend_len[q->pend_head + (unsigned int)i];
			}
		}
		q->pend_head += (unsigned int)rc;
		q->pend_n -= (unsigned int)rc;
		sent += rc;
	}
	return sent;
}

void attach_queue_release(struct attach_queue *q)
{
	if (!q->a->vif)
		return;
	pvnet_tx_free(q->a->vif, q->idx, q->pend + q->pend_head, q->pend_n);
	q->pend_n = 0;
	/* Stashed buffers are single pages: ->next may be stale, cut it first. */
	for (unsigned int i = 0; i < q->nstash; i++)
		q->stash[i]->next = NULL;
	pvnet_tx_free(q->a->vif, q->idx, q->stash, q->nstash);
	q->nstash = 0;
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
		/*
		 * Nothing to do: sleep.  With frames pending or no buffers for
		 * the next read, only the vif (completions) matters.
		 */
		if (poll(pfd, q->pend_n || q->starved ? 2 : 3, -1) < 0 && errno != EINTR) {
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
