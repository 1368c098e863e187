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
 * Per queue thread, per wakeup:
 *   vif -> TAP  pvnet_rx_burst() (zero copy: the granted RX pages), one
 *               virtio header per frame from its netif flags/GSO extra
 *               (uplink_meta2vnet, on a private copy of its first bytes),
 *               one writev() per frame (a TAP takes one frame per write),
 *               pvnet_rx_release();
 *   TAP -> vif  up to ATTACH_BATCH read()s into the thread's private slots
 *               (a TAP returns one frame per read), each validated and
 *               mapped once (uplink_vnet2meta), then one pvnet_send() for
 *               the batch (one notification).  Frames the ring cannot take
 *               yet stay in their slots and the TAP is not read again until
 *               they are sent: the TAP's own queue is the backpressure.
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

/* Frames read from the TAP per wakeup and sent with one pvnet_send(): NAPI's budget. */
#define ATTACH_BATCH 64u

/* One private slot holds a virtio header and the largest frame netif carries. */
#define ATTACH_SLOT (sizeof(struct virtio_net_hdr) + UPLINK_MAX_FRAME)

/* Bytes of a received frame copied aside to find its transport header (as netback's header copy). */
#define ATTACH_HDR_COPY 128u

/**
 * struct attach_stats - one queue's counters (written by its thread only)
 * @tap_rx_packets: frames read from the TAP and sent to the vif
 * @tap_rx_bytes: their bytes (without the virtio header)
 * @tap_rx_drops: frames read from the TAP and dropped, by enum uplink_drop
 * @tap_rx_send_errors: frames libpvnet refused (-EINVAL)
 * @tap_rx_sw_csum: blank checksums computed in software
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
 * @slots: ATTACH_BATCH private slots of ATTACH_SLOT bytes
 * @pend: frames read and validated but not yet taken by the vif
 * @pend_head: first unsent entry of @pend
 * @pend_n: unsent entries
 * @error: the data call error that ended the thread (0 while fine)
 * @st: counters
 */
struct attach_queue {
	struct attach *a;
	unsigned int idx;
	int tap_fd;
	pthread_t thread;
	bool running;
	uint8_t *slots;
	struct pvnet_pkt pend[ATTACH_BATCH];
	unsigned int pend_head;
	unsigned int pend_n;
	int error;
	struct attach_stats st;
};

/**
 * struct attach - one `pvnet attach`
 * @vif: the vif (control calls: main thread only)
 * @nq: queues
 * @mtu: the TAP's L3 MTU
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
	uint32_t mtu;
	uint32_t offloads;
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
 * attach_main() - `pvnet attach`
 * @argc: arguments after the global options, argv[0] = "attach"
 * @argv: them
 * @run_dir: pvnetd's run directory, or NULL for the default
 *
 * Return: the process exit status
 */
int attach_main(int argc, char **argv, const char *run_dir);

#endif /* PVNET_TOOLS_ATTACH_H */
