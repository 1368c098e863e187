/* SPDX-License-Identifier: MIT */
/* back.h - netback inside pvnetd: toolstack calls, vif life cycle, counters */
#ifndef PVNET_BACK_BACK_H
#define PVNET_BACK_BACK_H

/*
 * Theory of Operation (the whole of src/back; each file has its own part)
 *
 * One struct back serves every vif of one pvnetd.  Its control plane runs on
 * the loop thread only: the toolstack calls (back_vif_create/destroy), the
 * xenstore watch callbacks that run the XenbusState machine (xenbus.c), and
 * every store access.  Its data plane is one worker thread per connected
 * vif queue (worker.c) that owns that queue's rings, event channels and
 * grant handle: TX (guest -> switch, tx.c) and RX (switch -> guest, rx.c);
 * queue 0's worker also serves the vif's control ring (ctrl.c), whose
 * Toeplitz configuration (hash.c) picks the RX queue of every frame.
 * Workers poll briefly (poll_us, yielding) before they sleep.
 *
 * Threads meet in four places only:
 *   - the switch calls a vif port's xmit() from any worker (ours or an
 *     uplink's): it enqueues into a queue's bounded lock-free RX input ring;
 *   - xmit() reads the vif's steering configuration, which queue 0's
 *     worker writes (a sequence count and atomics, struct back_hash);
 *   - a TX packet's done() runs on whichever thread drops its last
 *     reference: it enqueues the packet's pending index into the sending
 *     queue's bounded lock-free completion ring;
 *   - a worker that finds a guest misbehaving records a reason and wakes the
 *     loop thread (an eventfd on cfg->loop), which disconnects the vif.
 * Workers never touch the store; the loop thread never touches a ring while
 * a worker runs.
 *
 * Direction names follow the guest: "tx" is the guest's TX ring (guest to
 * pvnetd), "rx" the guest's RX ring (pvnetd to guest), as in netif.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/xen.h"

struct back;
struct back_vif;
struct hv;
struct loop;
struct store;
struct sw;
struct sw_port;

/**
 * enum back_tx_mode - how a guest's TX payload reaches the switch
 * @BACK_TX_MAP: grant-map the payload (zero copy); the TX response and the
 *	unmap wait until every consumer is done with the packet
 * @BACK_TX_COPY: grant-copy the payload into pvnetd's own pages and answer
 *	the guest at once
 * @BACK_TX_PERSISTENT: offer feature-persistent (docs/persistent-grants.md);
 *	a frontend that accepts it has every buffer page mapped once, at first
 *	use, and kept mapped until it disconnects: no grant operation per
 *	packet, TX and RX.  A frontend that does not gets BACK_TX_MAP.
 */
enum back_tx_mode {
	BACK_TX_MAP = 0,
	BACK_TX_COPY = 1,
	BACK_TX_PERSISTENT = 2,
};

/*
 * Hold pools one guest's RX queues may have at once by default: 16, two
 * vifs of 8 queues that all wait for a guest taking nothing, about 130 MiB
 * at the default queue bound.  Without a budget per guest, a guest's 16
 * vifs of 8 queues could make pvnetd hold 16 x 8 pools, over 1 GiB; past
 * it a queue drops what it would copy out, so a guest that takes nothing
 * on many queues loses frames sooner and costs no more (docs/netback.md,
 * Memory).
 */
#define BACK_RX_GUEST_POOLS_DEFAULT 16u

/**
 * back_hold_pool_bytes() - the memory one RX queue's hold pool takes
 * @rx_queue_max_bytes: the queue bound (struct back_config)
 *
 * Room for a full queue of copies and their bookkeeping: what a queue
 * costs pvnetd once frames for its guest wait longer than the hold bounds,
 * and what each pool charges to its guest's @rx_guest_max_bytes.
 */
uint64_t back_hold_pool_bytes(uint32_t rx_queue_max_bytes);

/* The names of the modes, as pvnetd --tx-mode and the status show them. */
const char *back_tx_mode_name(enum back_tx_mode m);

/**
 * struct back_config - netback settings; back_config_default() fills them
 * @loop: the control loop (required): workers wake it to disable a vif
 * @tx_mode: enum back_tx_mode, default BACK_TX_MAP
 * @max_queues: multi-queue-max-queues; default 8 (Linux caps it at the
 *	online CPUs; see vif.c for why we do not)
 * @rx_queue_max_bytes: bytes one RX queue may hold waiting for the guest;
 *	default 8 MiB, eight senders' TX rings of pages (see vif.c; Linux
 *	holds 512 KiB but has a qdisc in front of it) (XSA-392)
 * @rx_guest_max_bytes: pvnetd's own memory that the RX queues of one guest
 *	(all its vifs) may have at once for frames copied out of their
 *	senders (hold pools, each back_hold_pool_bytes() of the queue bound);
 *	a queue that would need a pool past it drops the frames it would
 *	copy out instead.  At least one pool; default
 *	BACK_RX_GUEST_POOLS_DEFAULT pools
 * @rx_drain_timeout_ms: a packet waiting longer for RX buffers is dropped;
 *	default 10000, Linux's rx_drain_timeout_msecs
 * @rx_drain_timeout_nonotify_ms: the same for a frontend without
 *	feature-rx-notify, which we must poll; default 30, as Linux
 * @rx_stall_timeout_ms: a queue whose head frame has waited this long for
 *	RX buffers is stalled: its frames are dropped and the vif's carrier
 *	goes off until the guest posts enough; default 60000, Linux's
 *	rx_stall_timeout_msecs; 0 never; only for frontends with
 *	feature-rx-notify (without it we could not learn of new buffers)
 * @tx_hold_max_us: a mapped guest payload waiting in an RX queue longer than
 *	this is copied out and the sender's grant released; default 20000.
 *	Until then the waiting frames hold their sender's ring slots, which is
 *	the backpressure that slows a sender to its receiver's pace.  The bound
 *	is above a scheduler's usual latency on a busy host (a receiver that is
 *	merely descheduled is not stuck): 2 ms copied out frames of receivers
 *	that were only waiting for a CPU, and the senders thus released
 *	overflowed the RX queue (docs/netback.md, Configuration)
 * @port_hold_max_us: the same for a frame from any other port than a vif
 *	(an uplink's receive buffer); default 1000.  Such a buffer is shared
 *	by every port the frame reaches and an uplink has few (pool.h): held
 *	for long by a guest that takes nothing, they would stop the uplink's
 *	traffic to every other port.  Held 1-2 ms (the worker's timer has
 *	millisecond steps), an uplink's 256 KiB of buffers stay full only
 *	while more than 1 Gbit/s is sent to that guest
 * @poll_us: adaptive waiting: a worker whose last round found work keeps
 *	polling its rings for up to this many microseconds (and no longer
 *	than it has recently worked), yielding the CPU (sched_yield) after
 *	every empty round, before it sleeps on its event channel; 0 disables
 *	polling.  Default BACK_POLL_US_DEFAULT (see worker.c for why that
 *	value)
 * @persistent_max_grants: in BACK_TX_PERSISTENT mode, the most pages one
 *	queue of a frontend may use in its requests (persistent-max-grants);
 *	default BACK_PERSISTENT_MAX_DEFAULT
 * @backend_id: our domain id (0: pvnetd is dom0)
 * @no_workers: tests and fuzzers only: a connect starts no worker threads,
 *	and the caller runs each queue's rounds on its own thread with
 *	back_worker_round() (internal.h), so that what a hostile frontend
 *	makes netback do does not depend on how threads are scheduled;
 *	false (the default) in pvnetd
 */
struct back_config {
	struct loop *loop;
	enum back_tx_mode tx_mode;
	unsigned int max_queues;
	uint32_t rx_queue_max_bytes;
	uint64_t rx_guest_max_bytes;
	uint32_t rx_drain_timeout_ms;
	uint32_t rx_drain_timeout_nonotify_ms;
	uint32_t rx_stall_timeout_ms;
	uint32_t tx_hold_max_us;
	uint32_t port_hold_max_us;
	uint32_t poll_us;
	uint32_t persistent_max_grants;
	domid_t backend_id;
	bool no_workers;
};

/*
 * Default persistent-max-grants: a pvnet frontend's largest pool, 256 TX
 * pages plus 4096 RX pages per queue (pvnet_vif_config), so that every
 * frontend libpvnet can configure fits.  Each declared page costs two
 * cache slots (24 bytes each: the table is at most half full) and, once
 * used, a mapping; all released at disconnect.
 */
#define BACK_PERSISTENT_MAX_DEFAULT 4352u
/* Largest persistent-max-grants accepted. */
#define BACK_PERSISTENT_MAX_LIMIT 65536u

/*
 * Default poll window: KVM's halt-polling default (halt_poll_ns, 200 us).
 * Once direct delivery made a sender's worker finish each frame itself, a
 * guest streaming large frames refills its ring some 50-100 us after our
 * last round (one ring of 64 KiB frames is about 15 frames), so a 20 us
 * window slept and was notified once per ring.  Measured
 * (docs/netback.md, Configuration): 200 us takes notifications at 65535 B
 * from ~165 to ~4 per 1000 frames, with no loss at 1-8 queues on 2 cores.
 */
#define BACK_POLL_US_DEFAULT 200u
/* Largest poll window accepted: polling longer than a millisecond only burns CPU. */
#define BACK_POLL_US_MAX 1000u

/* Upper bound of max_queues: a vif's queue-N keys and threads stay few. */
#define BACK_MAX_QUEUES_LIMIT 16

/**
 * back_config_default() - fill @cfg with the defaults (loop left NULL)
 * @cfg: the configuration
 */
void back_config_default(struct back_config *cfg);

/**
 * back_create() - create the netback of one pvnetd
 * @cfg: settings (cfg->loop required)
 * @hv: the hypervisor
 * @store: the xenstore server (loop thread)
 * @sw: the switch vifs are plugged into
 *
 * Return: the backend, or NULL with errno set (EINVAL, ENOMEM, or the
 * errno of eventfd / loop_add)
 */
struct back *back_create(const struct back_config *cfg, struct hv *hv, struct store *store,
			 struct sw *sw);

/**
 * back_destroy() - destroy every vif, then the backend
 * @b: the backend, or NULL
 */
void back_destroy(struct back *b);

/**
 * back_vif_create() - the toolstack adds a vif, as xl/libxl would
 * @b: the backend
 * @domid: the guest, already introduced to the store
 * @devid: the vif's device id (its "handle")
 * @mac: the guest's MAC address
 * @out: receives the vif
 *
 * Writes the frontend directory (owned by the guest) and the backend
 * directory (owned by dom0, readable by the guest), advertises our
 * features and starts watching the frontend's state.  The rest of the life
 * cycle is the XenbusState machine (xenbus.c).  Loop thread.
 *
 * Return: 0, -EINVAL (domid 0 or backend_id), -ESRCH (domain not
 * introduced), -EEXIST (vif exists), -ENOMEM, or a store -errno
 */
int back_vif_create(struct back *b, domid_t domid, uint32_t devid, const uint8_t mac[6],
		    struct back_vif **out);

/**
 * back_vif_destroy() - the toolstack removes a vif (or its domain died)
 * @vif: the vif, or NULL
 *
 * Stops the workers, releases every mapping and port, completes packets in
 * flight, and removes both xenstore directories.  Loop thread.
 */
void back_vif_destroy(struct back_vif *vif);

/**
 * back_vif_find() - look a vif up
 * @b: the backend
 * @domid: guest
 * @devid: device id
 *
 * Return: the vif or NULL
 */
struct back_vif *back_vif_find(struct back *b, domid_t domid, uint32_t devid);

/**
 * back_vif_fatal() - tier-2 error: disable this vif, as xenbus_dev_fatal
 * @vif: the vif
 * @fmt: printf format of the reason
 *
 * Disconnects the vif (only this one), records the reason (see
 * back_vif_error()), writes it to the backend directory's "error" key and
 * switches the backend to Closing.  Loop thread; workers report through
 * their queue instead (they never touch the store).
 */
void back_vif_fatal(struct back_vif *vif, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * back_vif_error() - the last fatal reason of a vif
 * @vif: the vif
 *
 * Return: the reason, or NULL if the vif never failed
 */
const char *back_vif_error(const struct back_vif *vif);

/**
 * back_vif_state() - the backend's XenbusState for this vif
 * @vif: the vif
 *
 * Return: the state last written to the backend directory
 */
enum xenbus_state back_vif_state(const struct back_vif *vif);

/**
 * back_guest_rx_hold() - pvnetd's memory a guest's RX hold pools take now
 * @b: the backend
 * @domid: the guest
 *
 * Loop thread.  What is charged to the guest's budget (rx_guest_max_bytes)
 * over all its vifs.  Return: bytes; 0 for a guest without a vif
 */
uint64_t back_guest_rx_hold(struct back *b, domid_t domid);

/**
 * back_vif_carrier() - is the vif's carrier on?
 * @vif: the vif
 *
 * Off while one of its queues is stalled (the guest posted no RX buffers
 * for the head frame for rx_stall_timeout_ms): frames for it are then
 * dropped at once, not queued; on again when every queue is ready.
 *
 * Return: true when connected and no queue is stalled
 */
bool back_vif_carrier(const struct back_vif *vif);

/**
 * back_vif_port() - the switch port of a vif
 * @vif: the vif
 *
 * Return: the port while the vif is connected, else NULL; valid on the loop
 * thread until the vif disconnects (for reading its counters)
 */
struct sw_port *back_vif_port(const struct back_vif *vif);

/**
 * back_vif_num_queues() - queues of the current connection
 * @vif: the vif
 *
 * Return: the number of queues while Connected, else 0
 */
unsigned int back_vif_num_queues(const struct back_vif *vif);

/**
 * back_vif_tx_mode() - how the current connection moves guest pages
 * @vif: the vif
 *
 * Return: the backend's mode, except BACK_TX_MAP for a frontend that did
 * not accept feature-persistent from a BACK_TX_PERSISTENT backend
 */
enum back_tx_mode back_vif_tx_mode(const struct back_vif *vif);

/**
 * struct back_vif_features - what the current connection negotiated, as
 *	netback applies it (Linux's defaults for absent or malformed keys)
 * @sg: feature-sg: frames over a page reach the guest
 * @gso_tcpv4: feature-gso-tcpv4: TSO frames reach the guest whole
 * @gso_tcpv6: feature-gso-tcpv6
 * @csum_ipv4: blank IPv4 checksums go to the guest as they are
 *	(no feature-no-csum-offload)
 * @csum_ipv6: feature-ipv6-csum-offload
 * @rx_notify: feature-rx-notify (stall detection and the long drain timeout)
 * @split: separate TX and RX event channels
 * @ctrl_ring: a control ring (Toeplitz hashing)
 * @mcast_filter: request-multicast-control, now
 * @mcast_addrs: addresses in the guest's multicast filter
 * @rate_bytes: the backend's "rate" key: bytes per window, 0 unlimited
 * @rate_usec: its window in microseconds
 */
struct back_vif_features {
	bool sg, gso_tcpv4, gso_tcpv6, csum_ipv4, csum_ipv6, rx_notify, split, ctrl_ring,
	    mcast_filter;
	unsigned int mcast_addrs;
	uint64_t rate_bytes, rate_usec;
};

/**
 * back_vif_features() - the negotiated features of a connected vif
 * @vif: the vif
 * @f: filled
 *
 * Loop thread.
 *
 * Return: 0, or -ENOTCONN when the vif is not connected (@f zeroed)
 */
int back_vif_features(const struct back_vif *vif, struct back_vif_features *f);

/**
 * struct back_stat_desc - one per-queue counter
 * @name: Linux/ethtool-style name
 * @offset: offset of its _Atomic uint64_t in the per-queue counters
 */
struct back_stat_desc {
	const char *name;
	size_t offset;
};

/**
 * back_stats_names() - the per-queue counter table
 * @n: receives the number of counters
 *
 * Return: the table, in display order
 */
const struct back_stat_desc *back_stats_names(unsigned int *n);

/**
 * back_vif_stats() - read one queue's counters, in table order
 * @vif: the vif
 * @queue: queue index, < back_vif_num_queues(); counters of a queue survive
 *	until the next connect
 * @vals: room for the number of counters back_stats_names() reports
 *
 * Return: 0, or -ENOENT for a queue that does not exist
 */
int back_vif_stats(const struct back_vif *vif, unsigned int queue, uint64_t *vals);

/**
 * back_vif_stat() - read one counter of one queue by name
 * @vif: the vif
 * @queue: queue index
 * @name: counter name
 *
 * Return: the value, or 0 if there is no such queue or counter
 */
uint64_t back_vif_stat(const struct back_vif *vif, unsigned int queue, const char *name);

#endif /* PVNET_BACK_BACK_H */
