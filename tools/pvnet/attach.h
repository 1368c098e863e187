// SPDX-License-Identifier: MIT
/* attach.h - pvnet attach: a frontend domain whose guest stack is a TAP in a network namespace */
#ifndef PVNET_TOOLS_ATTACH_H
#define PVNET_TOOLS_ATTACH_H

/*
 * Theory of Operation
 *
 *   namespace NS                     pvnet attach (this process = domain D)        pvnetd
 *   ┌──────────────┐  TAP queue i   ┌───────────────────────────────────┐  vif   ┌────────┐
 *   │ kernel stack │◀─────────────▶│ queue thread i: TAP <-> vif queue i │◀──────▶│netback │
 *   │ NAME (TAP)   │  virtio hdr    │ main thread: signals, vif control │        │ switch │
 *   └──────────────┘                └───────────────────────────────────┘        └────────┘
 *
 * Threads: one per vif queue (attach_queue.c), each owning TAP queue fd i
 * and vif queue i exclusively, as libpvnet requires (one thread per queue).
 * The main thread (attach.c) owns every control call: it waits for
 * SIGINT/SIGTERM and for the vif's control fd.  libpvnet forbids control
 * calls concurrently with data calls on the same vif, so before calling
 * pvnet_vif_process() the main thread stops the queue threads (stop flag +
 * eventfd, join) and restarts them afterwards; these events happen only on
 * state changes, never per packet.
 *
 * Per queue thread, per wakeup (no allocation, no copy of the payload):
 *   vif -> TAP  pvnet_rx_burst() (zero copy: the granted RX pages), one
 *               virtio header per frame from its netif flags/GSO extra
 *               (uplink_meta2vnet, on a private copy of its first bytes),
 *               one writev() per frame straight from the RX pages (a TAP
 *               takes one frame per write), one pvnet_rx_release() for the
 *               burst (re-posted in batches, at most one notification);
 *   TAP -> vif  up to ATTACH_BATCH readv()s (a TAP returns one frame per
 *               read), each straight into TX buffers of the vif: the virtio
 *               header into a private struct, the frame over
 *               ATTACH_READ_PAGES pages taken from the queue's stash of
 *               buffers from pvnet_tx_alloc().  The pages the frame filled
 *               are chained (pvnet_buf.next) and validated once
 *               (attach_frame_check(): uplink_vnet2meta on the first page,
 *               on a private linear copy only for rare frames); a dropped
 *               frame's pages stay in the stash for the next read.  Then
 *               one pvnet_tx_submit() for the batch (one notification).
 *               When the stash cannot hold a largest frame (most pages
 *               in flight), the next frame is read into the private
 *               buffer @lin instead and copied into TX pages as soon as
 *               there are enough for it ("held"), so that what is in
 *               flight can still reach the whole budget.  Frames the ring
 *               cannot take yet stay pending and the TAP is not read again
 *               until they are submitted, nor while a held frame waits
 *               (pvnet_tx_alloc() found no buffer and armed the completion
 *               event): the TAP's own queue is the backpressure.
 *
 * The TX pages are this process's memory, granted read-only: between
 * pvnet_tx_alloc() and pvnet_tx_submit() only the kernel (readv) writes
 * them and only this thread reads them, so validating in place is
 * validating a private copy, as before.
 *
 * Counters are per queue, written only by its thread, and read by the
 * main thread after the threads are joined (printed on exit).
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_net.h>

#include "pvnet/pvnet.h"
#include "uplink/vnet.h"

/* Frames read from the TAP per wakeup and submitted with one pvnet_tx_submit(): NAPI's budget. */
#define ATTACH_BATCH 64u

/*
 * TX pages one readv() offers: the largest frame netif carries (65535
 * bytes) in whole pages, so a frame is never cut (a longer one makes
 * read() return more than it copied: counted rx_oversize).
 */
#define ATTACH_READ_PAGES ((UPLINK_MAX_FRAME + PVNET_PAGE_SIZE - 1) / PVNET_PAGE_SIZE)
_Static_assert(ATTACH_READ_PAGES <= PVNET_MAX_FRAGS, "a frame must fit libpvnet's chain");

/**
 * struct attach_stats - one queue's counters (written by its thread only)
 * @tap_rx_packets: frames read from the TAP and sent to the vif
 * @tap_rx_bytes: their bytes (without the virtio header)
 * @tap_rx_drops: frames read from the TAP and dropped, by enum uplink_drop
 * @tap_rx_send_errors: frames libpvnet refused (-EINVAL)
 * @tap_rx_sw_csum: blank checksums computed in software
 * @tap_rx_linearized: frames over a page validated on a private linear copy
 *	(not a TSO frame with its headers in the first page: rare)
 * @tap_rx_held: frames read into the private buffer because the stash was
 *	short (most TX pages in flight), copied into TX pages later
 * @tap_tx_packets: frames received from the vif and written to the TAP
 * @tap_tx_bytes: their bytes
 * @tap_tx_dropped: frames the TAP write refused (EAGAIN, ENOBUFS, ...)
 * @tap_tx_bad_offload: frames from the vif whose offloads could not be
 *	expressed as a virtio header (dropped)
 */
struct attach_stats {
	uint64_t tap_rx_packets;
	uint64_t tap_rx_bytes;
	uint64_t tap_rx_drops[UPLINK_DROP_NR];
	uint64_t tap_rx_send_errors;
	uint64_t tap_rx_sw_csum;
	uint64_t tap_rx_linearized;
	uint64_t tap_rx_held;
	uint64_t tap_tx_packets;
	uint64_t tap_tx_bytes;
	uint64_t tap_tx_dropped;
	uint64_t tap_tx_bad_offload;
};

struct attach;

/**
 * struct attach_queue - one vif queue and its TAP queue
 * @a: the attachment
 * @idx: queue number
 * @tap_fd: the TAP queue fd (non-blocking)
 * @thread: the thread moving its frames
 * @running: @thread was started and not yet joined
 * @stash: free TX buffers of the vif queue, taken with pvnet_tx_alloc(),
 *	that the next readv() fills (a stack: the top ones are used first)
 * @nstash: buffers in @stash
 * @starved: a frame is held and the stash cannot take it yet (the
 *	completion event is armed): do not read the TAP until the vif wakes us
 * @held: a frame read into @lin (the stash was short) waits for TX pages
 * @held_vh: its virtio header
 * @held_len: its length
 * @held_meta: its offload state, validated
 * @pend: first buffers of frames read and validated, not yet submitted
 * @pend_len: their lengths
 * @pend_head: first unsent entry of @pend
 * @pend_n: unsent entries
 * @lin: UPLINK_MAX_FRAME bytes: the private linear copy of a rare frame, or
 *	the held frame
 * @error: the data call error that ended the thread (0 while fine)
 * @st: counters
 */
struct attach_queue {
	struct attach *a;
	unsigned int idx;
	int tap_fd;
	pthread_t thread;
	bool running;
	struct pvnet_buf *stash[ATTACH_READ_PAGES];
	unsigned int nstash;
	bool starved;
	bool held;
	struct virtio_net_hdr held_vh;
	uint32_t held_len;
	struct uplink_meta held_meta;
	struct pvnet_buf *pend[ATTACH_BATCH];
	uint32_t pend_len[ATTACH_BATCH];
	unsigned int pend_head;
	unsigned int pend_n;
	int error;
	uint8_t *lin;
	struct attach_stats st;
};

/**
 * struct attach - one `pvnet attach`
 * @vif: the vif (control calls: main thread only)
 * @nq: queues
 * @mtu: the TAP's L3 MTU, as the namespace sets it now (the main thread follows it)
 * @max_mtu: the largest MTU the vif carries (feature-sg or not)
 * @link_fd: link changes in the namespace (uplink_link_watch()), or -1
 * @ifindex: the TAP's index in the namespace
 * @netns: the namespace's name
 * @ns_fd: inotify on /run/netns, to see the namespace deleted; or -1
 * @ns_created: this attach created the namespace (removed again if it fails)
 * @offloads: UPLINK_OFF_* the vif negotiated
 * @stop: set by the main thread to make the queue threads return
 * @stop_fd: eventfd written with @stop, polled by the queue threads
 * @fail_fd: eventfd a queue thread writes when a data call fails (the
 *	vif disconnected or broke): the main thread then looks at the vif
 * @q: the queues
 */
struct attach {
	struct pvnet_vif *vif;
	unsigned int nq;
	_Atomic uint32_t mtu;
	uint32_t max_mtu;
	int link_fd;
	unsigned int ifindex;
	const char *netns;
	int ns_fd;
	bool ns_created;
	/* The namespace entered (its nsfs inode), to tell it from one of the same name later. */
	dev_t ns_dev;
	ino_t ns_ino;
	uint32_t offloads;
	bool carrier; /* the TAP's carrier, as the backend last said (netif.h's link state) */
	atomic_bool stop;
	int stop_fd;
	int fail_fd;
	struct attach_queue q[PVNET_MAX_QUEUES];
};

/**
 * attach_queue_thread() - a queue thread's body (pthread start routine)
 * @arg: its struct attach_queue
 *
 * Return: NULL; the reason it stopped early is in attach_queue.error
 */
void *attach_queue_thread(void *arg);

/**
 * attach_queue_release() - give the queue's stashed and unsent TX buffers back to the vif
 * @q: the queue; its thread is not running
 *
 * Frames still pending (read, not yet taken by the ring) are dropped
 * uncounted, as frames still in the TAP's queue are.  Called once, after
 * the last stop of the threads and before the vif is destroyed.
 */
void attach_queue_release(struct attach_queue *q);

/**
 * attach_frame_check() - validate a frame read into a chain of TX buffers and map its header
 * @vh: the virtio header (private)
 * @head: the frame's first buffer; the frame fills whole pages, in order
 * @len: the frame's length, PVNET_MIN_FRAME..UPLINK_MAX_FRAME
 * @mtu: the L3 MTU
 * @offloads: UPLINK_OFF_* negotiated
 * @lin: UPLINK_MAX_FRAME bytes of scratch for the linear copy
 * @out: the netif offload state
 * @linearized: set when the linear copy was used
 *
 * Gives exactly uplink_vnet2meta()'s verdict on the whole frame (and, when
 * it computes a checksum in software, writes it into the chain), but looks
 * only at the first page for a frame within one page and for a TSO frame
 * whose checksum field and headers lie in it; any other frame over a page
 * is copied into @lin first.
 *
 * Return: 0, or the negative enum uplink_drop reason (-1 - reason)
 */
int attach_frame_check(const struct virtio_net_hdr *vh, struct pvnet_buf *head, uint32_t len,
		       uint32_t mtu, uint32_t offloads, uint8_t *lin, struct uplink_meta *out,
		       bool *linearized);

/**
 * attach_main() - `pvnet attach`
 * @argc: arguments after the global options, argv[0] = "attach"
 * @argv: them
 * @run_dir: pvnetd's run directory, or NULL for the default
 *
 * Return: the process exit status
 */
int attach_main(int argc, char **argv, const char *run_dir);

#endif /* PVNET_TOOLS_ATTACH_H */
