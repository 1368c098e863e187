/* SPDX-License-Identifier: MIT */
/* internal.h - netback's private structures: backend, vif, queue, pending TX packet */
#ifndef PVNET_BACK_INTERNAL_H
#define PVNET_BACK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "back/back.h"
#include "back/hash.h"
#include "back/mpsc.h"
#include "back/tx.h"
#include "common/log.h"
#include "common/loop.h"
#include "hv/hv.h"
#include "switch/switch.h"

/* Both netif rings hold 256 entries in a 4 KiB page (ring.h's __CONST_RING_SIZE). */
#define BACK_TX_RING_SIZE __CONST_RING_SIZE(netif_tx, BACK_PAGE_SIZE)
#define BACK_RX_RING_SIZE __CONST_RING_SIZE(netif_rx, BACK_PAGE_SIZE)
_Static_assert(BACK_TX_RING_SIZE == 256 && BACK_RX_RING_SIZE == 256, "netif ring sizes");

/*
 * Pending TX packets per queue: a packet holds at least one ring slot until
 * it is answered, so the ring size bounds what a guest can have in flight
 * (Linux: MAX_PENDING_REQS).  Copy mode answers at once but keeps private
 * pages until done(): the same bound applies to its page pool.
 */
#define BACK_PENDING	  BACK_TX_RING_SIZE
#define BACK_PENDING_NONE UINT16_MAX

/* Packets per TX or RX poll: NAPI's weight, and SW_BATCH_MAX. */
#define BACK_BATCH 64

/*
 * Header bytes grant-copied into private memory from every frame: Linux's
 * XEN_NETBACK_TX_COPY_LEN.  Enough for Ethernet + VLAN + IPv6 + TCP with
 * options, what the switch parses.  An offloaded frame whose transport
 * header ends later has more taken into the copy, up to
 * SW_PKT_OFFLOAD_HDR_MAX (tx.c), as Linux's netback pulls more for it.
 */
#define BACK_TX_HDR_LEN 128
_Static_assert(BACK_TX_HDR_LEN <= SW_PKT_OFFLOAD_HDR_MAX, "the header copy holds the first bytes");

/*
 * Grant-copy ops of one TX poll: a packet needs at most one header op and
 * one payload op per data slot (2 * 19); 512 lets a batch of 64 typical
 * packets through, and a poll stops adding packets when fewer than
 * BACK_TX_OPS_PER_PKT remain.
 */
#define BACK_TX_OPS_PER_PKT (2 * BACK_TX_MAX_DATA)
#define BACK_TX_COPY_OPS    512

/*
 * RX: a packet of up to 65535 bytes fills 16 pages, plus a GSO and a HASH
 * extra: 18 slots, as Linux's netback sends it.  Netfronts count only data
 * slots against their bound (Linux's 18, or 19 when the first is short;
 * libpvnet's 19) and take the extras besides.  Copy ops per packet: one per
 * source piece (private header + 19 fragments) plus one per page boundary.
 */
#define BACK_RX_MAX_SLOTS   XEN_NETIF_NR_SLOTS_MIN
#define BACK_RX_OPS_PER_PKT (1 + SW_PKT_MAX_FRAGS + BACK_RX_MAX_SLOTS)
#define BACK_RX_COPY_OPS    512
#define BACK_RXQ_CAP	    2048 /* items; bytes are bounded separately */
#define BACK_ETH_MIN_FRAME  60
/* Multicast addresses one frontend's filter holds: Linux's XEN_NETBK_MCAST_MAX. */
#define BACK_MCAST_MAX 64

/* A cache line: per-queue and cross-thread fields are aligned to it (no false sharing). */
#define BACK_CACHE_LINE 64

/**
 * struct back_queue_stats - per-queue counters (see stats.c for the meaning)
 *
 * Written with a relaxed load + store by their one writer at a time (no
 * read-modify-write on the data path): the tx_ and worker counters by the
 * queue's worker, the rx_ counters by the holder of the queue's rx_lock.
 * Counters both sides add to (notifications, grant_*) and rx_queue_full,
 * which every thread calling xmit() may add to, take one atomic add per
 * batch or event.  Each queue's
 * block starts on its own cache line, so two workers never write one line.
 */
struct back_queue_stats {
	_Alignas(BACK_CACHE_LINE) _Atomic uint64_t tx_packets;
	_Atomic uint64_t tx_bytes;
	_Atomic uint64_t tx_dropped;
	_Atomic uint64_t tx_frag_overflow;
	_Atomic uint64_t tx_bad_size;
	_Atomic uint64_t tx_runt;
	_Atomic uint64_t tx_bad_gref;
	_Atomic uint64_t tx_bad_offload;
	_Atomic uint64_t tx_gso_checksum_fixup;
	_Atomic uint64_t tx_empty_slots;
	_Atomic uint64_t tx_zerocopy_sent;
	_Atomic uint64_t tx_zerocopy_success;
	_Atomic uint64_t tx_zerocopy_fail;
	_Atomic uint64_t tx_copied;
	_Atomic uint64_t tx_stalls;
	_Atomic uint64_t tx_rate_limited;
	_Atomic uint64_t tx_mcast_add;
	_Atomic uint64_t tx_mcast_del;
	_Atomic uint64_t tx_mcast_full;
	_Atomic uint64_t rx_packets;
	_Atomic uint64_t rx_bytes;
	_Atomic uint64_t rx_direct;
	_Atomic uint64_t rx_dropped;
	_Atomic uint64_t rx_queue_full;
	_Atomic uint64_t rx_direct_full;
	_Atomic uint64_t rx_expired;
	_Atomic uint64_t rx_bad_gref;
	_Atomic uint64_t rx_oversize;
	_Atomic uint64_t rx_malformed;
	_Atomic uint64_t rx_held_copied;
	_Atomic uint64_t rx_nomem;
	_Atomic uint64_t rx_hold_budget;
	_Atomic uint64_t rx_waits;
	_Atomic uint64_t rx_mcast_filtered;
	_Atomic uint64_t rx_stalls;
	_Atomic uint64_t rx_stall_flushed;
	_Atomic uint64_t rx_carrier_off;
	_Atomic uint64_t rx_sw_csum;
	_Atomic uint64_t rx_sw_gso;
	_Atomic uint64_t rx_sw_gso_segs;
	_Atomic uint64_t rx_sw_bad;
	_Atomic uint64_t notifications;
	_Atomic uint64_t wakeups;
	_Atomic uint64_t evtchn_spurious;
	_Atomic uint64_t fatal;
	_Atomic uint64_t ctrl_requests;
	_Atomic uint64_t poll_rounds;
	_Atomic uint64_t grant_copy_ops;
	_Atomic uint64_t grant_map_ops;
	_Atomic uint64_t grant_unmap_ops;
	_Atomic uint64_t grant_batches;
	_Atomic uint64_t persistent_overflow;
};

/* Single-writer counter update (or one serialised by a lock): no atomic read-modify-write. */
static inline void back_stat_add(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

struct back_queue;

/**
 * struct back_tx_pending - one guest TX packet between its requests and its
 *	responses (worker-owned, except @pkt.refs and @copied_out)
 * @pkt: the descriptor handed to the switch; its done() is back_tx_done()
 * @q: the queue
 * @next_free: free-list link
 * @nids: request ids to answer: @ids[0] the first slot, then data slots
 * @nextras: NULL responses to write after the first slot's
 * @nmaps: grant mappings (map mode)
 * @npages: private pool pages (copy mode)
 * @responded: responses already sent (copy mode)
 * @copied_out: a receiver copied the payload out before putting it
 *	(atomic: set by another thread before its sw_pkt_put())
 * @handles: grant handles of the mappings
 * @addrs: their host addresses
 * @pages: pool page indices
 * @ids: see @nids
 * @hdr: the private header copy (@pkt.hdr points here)
 */
struct back_tx_pending {
	struct sw_pkt pkt;
	struct back_queue *q;
	uint16_t next_free;
	uint8_t nids;
	uint8_t nextras;
	uint8_t nmaps;
	uint8_t npages;
	bool responded;
	_Atomic bool copied_out;
	grant_handle_t handles[BACK_TX_MAX_DATA];
	uint64_t addrs[BACK_TX_MAX_DATA];
	uint16_t pages[BACK_TX_MAX_DATA];
	uint16_t ids[BACK_TX_MAX_DATA];
	uint8_t hdr[SW_PKT_OFFLOAD_HDR_MAX];
};

/**
 * struct back_hold_pool - private memory for frames copied out of a sender
 * @base: @size bytes, allocated at the queue's first copy-out
 * @size: room for a full RX queue of copies (see rx.c)
 * @head: bytes ever released (offset modulo @size of the oldest copy)
 * @tail: bytes ever taken
 *
 * A FIFO allocator: copies are made in queue order and released in queue
 * order (delivered, expired or dropped at the head), so a ring of bytes
 * serves them with no allocation per frame.  Worker-private.
 */
struct back_hold_pool {
	uint8_t *base;
	uint64_t size;
	uint64_t head;
	uint64_t tail;
};

/**
 * struct back_pgnt_ent - one persistently mapped guest page (gnt.c)
 * @ref: the guest's grant reference (the key)
 * @state: empty, pending (a miss of the batch being resolved), mapped, or
 *	failed (its map failed; deleted at the end of the batch)
 * @writable: mapped writable (RX buffers), else read-only (TX buffers)
 * @status: failed: the map's GNTST_* status
 * @handle: mapped: the grant handle
 * @addr: mapped: the host address
 */
struct back_pgnt_ent {
	grant_ref_t ref;
	uint8_t state;
	bool writable;
	int16_t status;
	grant_handle_t handle;
	uint64_t addr;
};

/* Most misses one batch maps: a TX or RX copy batch, or a TX map batch. */
#define BACK_PGNT_MISS_MAX BACK_TX_COPY_OPS

/* Slots of the cache's memo (a power of two): more than libpvnet's default pool. */
#define BACK_PGNT_MEMO 1024u

/**
 * struct back_pgnt - a queue's persistent-grant cache (gnt.c; worker-private)
 * @tab: open-addressing table of @mask + 1 entries, at most half full
 * @mask: table size - 1 (a power of two)
 * @cap: most entries: the frontend's persistent-grants
 * @n: entries in use
 * @key: the keyed hash's key (the guest chooses references: it must not
 *	be able to choose collisions)
 * @miss: map ops of one batch's misses
 * @memo: where in @tab reference r was last found, at r % BACK_PGNT_MEMO
 *	(a hint, checked before use: see pgnt_probe())
 */
struct back_pgnt {
	struct back_pgnt_ent *tab;
	uint32_t mask;
	uint32_t cap;
	uint32_t n;
	uint8_t key[16];
	struct gnttab_map_grant_ref miss[BACK_PGNT_MISS_MAX];
	uint32_t memo[BACK_PGNT_MEMO];
};

/**
 * struct back_queue - one queue of a connected vif
 *
 * Set up and torn down by the loop thread (xenbus.c) while no worker runs;
 * between those, everything but the two MPSC rings, the RX state under
 * @rx_lock, the persistent-grant cache under @pgnt_lock, @rxq_bytes,
 * @inflight, @done_busy and @sleeping belongs to the worker thread.  @inflight counts
 * TX packets handed to the switch and not yet completed; @done_busy counts
 * done() calls still running on other threads (disconnect waits for both);
 * @leaving is set while disconnect waits: receivers then copy this
 * queue's frames out at once (rx.c), not after tx_hold_max_us.
 */
struct back_queue {
	struct back_vif *vif;
	struct back *b;
	unsigned int id;
	struct back_queue_stats *stats;
	struct hv_gnttab *gt;	 /* TX (and, PERSISTENT, every cache miss): the worker's */
	struct hv_gnttab *gt_rx; /* RX grant copies: whoever holds @rx_lock */
	enum back_tx_mode mode;	 /* the vif's: MAP, COPY or PERSISTENT */
	struct back_pgnt *pgnt;	 /* PERSISTENT only, under @pgnt_lock */
	pthread_mutex_t pgnt_lock;

	/* Rings (guest pages mapped writable) and event channels. */
	netif_tx_back_ring_t tx;
	netif_rx_back_ring_t rx;
	RING_IDX tx_rsp_pub, rx_rsp_pub; /* rsp_prod as we last wrote it (xen_ring_push()) */
	grant_handle_t tx_ring_handle, rx_ring_handle;
	uint64_t tx_ring_addr, rx_ring_addr;
	bool tx_ring_mapped, rx_ring_mapped;
	evtchn_port_t port_tx, port_rx;
	bool port_tx_bound, port_rx_bound, split;
	int fd_tx, fd_rx;

	/* Worker. */
	pthread_t thread;
	bool running;
	int wake_fd;
	_Atomic bool stop;
	/*
	 * Written by every thread that queues work for us: a line of their
	 * own.  @rx_gen counts xmit() calls that left frames on @rxq; the
	 * worker's last RX round saw @rx_gen_seen of them.
	 */
	_Alignas(BACK_CACHE_LINE) _Atomic bool sleeping;
	_Atomic uint32_t rx_gen;
	_Alignas(BACK_CACHE_LINE) bool tx_stalled;
	/*
	 * The head frame waits for the guest's buffers until req_prod reaches
	 * @rx_wait_for (the req_event we wrote).  Written under @rx_lock,
	 * read by the worker before it sleeps (worker.c, has_work).
	 * @rx_stalled: it waited rx_stall_timeout_ms; the vif's carrier is off
	 * until req_prod reaches @rx_wait_for (rx.c, stall detection).
	 */
	_Atomic bool rx_blocked;
	_Atomic bool rx_stalled;
	_Atomic RING_IDX rx_wait_for;

	/*
	 * TX credit (tx.c, the vif's @rate): @credit_rate is the rate last
	 * applied; up to @credit_left bytes may go before the window that
	 * started at @credit_start_ns ends; @rate_limited: a packet found too
	 * little, and TX waits until @credit_next_ns.  Worker-private.
	 */
	uint64_t credit_rate;
	uint64_t credit_left;
	uint64_t credit_start_ns;
	uint64_t credit_next_ns;
	bool rate_limited;

	/* TX. */
	struct back_tx_pending *pending;
	uint16_t pending_free;
	uint8_t (*pool)[BACK_PAGE_SIZE];
	uint16_t *pool_free;
	uint32_t pool_nfree;
	/* Changed by consumers' done() on other threads: a line of their own. */
	_Alignas(BACK_CACHE_LINE) _Atomic uint32_t inflight;
	_Atomic uint32_t done_busy;
	_Atomic bool leaving;
	struct back_mpsc compl ;
	/* Completions done() found on our own worker's thread: no atomics (worker-private). */
	uint16_t done_local[BACK_PENDING];
	uint16_t ndone_local;
	netif_tx_request_t snap[BACK_TX_RING_SIZE];
	xengnttab_grant_copy_segment_t tx_copy[BACK_TX_COPY_OPS];
	/*
	 * A ring's worth: every mapping in flight is a request consumed and
	 * not yet answered, and back_tx_poll() refuses a producer more than
	 * a ring ahead of our responses, so a poll's maps and a completion's
	 * unmaps are at most BACK_TX_RING_SIZE.
	 */
	struct gnttab_map_grant_ref tx_map[BACK_TX_RING_SIZE];
	struct gnttab_unmap_grant_ref tx_unmap[BACK_TX_RING_SIZE];

	/*
	 * RX.  The guest's RX ring and everything below but @rxq_bytes belong
	 * to whoever holds @rx_lock: the worker draining @rxq, or a thread in
	 * xmit() delivering straight into the ring (rx.c, direct delivery).
	 * @rxq is consumed by the worker alone.
	 */
	pthread_mutex_t rx_lock;
	struct back_mpsc rxq;
	/* Charged by xmit() on any thread: a line of its own. */
	_Alignas(BACK_CACHE_LINE) _Atomic uint32_t rxq_bytes;
	/*
	 * Step 2 of the RX round (rx.c, rx_maintain()), positions in @rxq:
	 * the next frame the search for our TX's looks at, the same for
	 * other ports' frames, the next frame the copy-out looks at, and the
	 * position before which every borrowed frame is to be copied out.
	 */
	_Alignas(BACK_CACHE_LINE) uint64_t rx_scan;
	uint64_t rx_scan_port;
	uint64_t rx_copied;
	uint64_t rx_copy_to;
	uint32_t rx_gen_seen;	   /* the worker's */
	uint64_t rx_blocked_since; /* when the head began to wait (0: it does not), under rx_lock */
	struct back_hold_pool hold;
	struct back_rx_sw *sw; /* software offloads' scratch (rx_deliver.c), made on first use */
	uint16_t sw_sent;      /* segments of the head frame already delivered from @sw, or 0 */
	xengnttab_grant_copy_segment_t rx_copy[BACK_RX_COPY_OPS];
	uint16_t rx_copy_slot[BACK_RX_COPY_OPS];
	netif_rx_response_t rx_rsp[BACK_RX_RING_SIZE];
};

/**
 * struct back_ctrl - the vif's control ring (ctrl.c); mapped by the loop
 *	thread at connect, then served by queue 0's worker only
 */
struct back_ctrl {
	xen_netif_ctrl_back_ring_t ring;
	RING_IDX rsp_pub; /* rsp_prod as we last wrote it (xen_ring_push()) */
	grant_handle_t handle;
	uint64_t addr;
	bool mapped, bound;
	evtchn_port_t port;
	int fd;
};

/**
 * struct back_frontend - what the frontend asked for (read at connect)
 */
struct back_frontend {
	bool sg, gso_tcpv4, gso_tcpv6, csum_ipv4, csum_ipv6, rx_notify;
};

/*
 * A TX rate limit in one word, so that a worker reads both halves at once:
 * up to 2^40 - 1 bytes per window of up to 2^24 - 1 us (16.7 s).
 */
#define BACK_RATE_USEC_BITS    24
#define BACK_RATE(bytes, usec) ((uint64_t)(bytes) << BACK_RATE_USEC_BITS | (uint64_t)(usec))
#define BACK_RATE_BYTES(r)     ((r) >> BACK_RATE_USEC_BITS)
#define BACK_RATE_USEC(r)      ((r) & ((1ULL << BACK_RATE_USEC_BITS) - 1))
#define BACK_RATE_MAX_BYTES    ((1ULL << (64 - BACK_RATE_USEC_BITS)) - 1)
#define BACK_RATE_MAX_USEC     ((1ULL << BACK_RATE_USEC_BITS) - 1)

/**
 * struct back_guest - what the vifs of one guest share
 * @next: in b->guests (loop thread)
 * @domid: the guest
 * @vifs: its vifs that exist; the entry goes with the last (loop thread)
 * @hold_bytes: memory its RX queues' hold pools have now, at most
 *	cfg.rx_guest_max_bytes (rx.c; any thread holding a queue's rx_lock)
 * @hold_wanted: a queue of it dropped frames for want of budget: the next
 *	of its pools to empty is freed (rx.c; the same threads)
 */
struct back_guest {
	struct back_guest *next;
	domid_t domid;
	unsigned int vifs;
	_Atomic uint64_t hold_bytes;
	_Atomic bool hold_wanted;
};

/**
 * struct back_vif - one vif (loop thread, except where noted)
 * @b: the backend
 * @link: in b->vifs
 * @guest: what it shares with the guest's other vifs
 * @domid: the guest
 * @devid: the device id
 * @mac: the guest's MAC
 * @fe_path: frontend directory
 * @be_path: backend directory
 * @state: backend XenbusState
 * @fe_state: last frontend state seen
 * @watching: the frontend-state watch is registered
 * @watching_rate: the watch on our own "rate" key is registered
 * @watching_online: the watch on our own "online" key is registered
 * @offline: the toolstack set our "online" key to 0 (or removed it): the
 *	vif closes and does not reconnect until it is 1 again
 * @rate: TX rate limit from the backend's "rate" key, BACK_RATE(bytes, usec);
 *	0 unlimited (written on the loop thread, read by workers)
 * @fe: negotiated features (read by workers, written while none runs)
 * @mode: how this connection moves guest pages (enum back_tx_mode)
 * @persistent_grants: PERSISTENT: pages per queue the frontend declared
 * @nq: queues of the current connection, 0 when not connected
 * @nq_stats: queues whose counters are valid (last connection)
 * @q: the queues
 * @port: switch port while connected
 * @rx_timeout_ns: RX drain timeout for this frontend
 * @rx_stall_ns: RX stall timeout for this frontend (0: no stall detection)
 * @rx_stalled_queues: queues stalled now; the carrier is off while > 0
 *	(workers change it, xmit() and the status read it)
 * @carrier_key: what our "carrier" key says now, 0 or 1 (loop thread)
 * @mcast_filter: the frontend's request-multicast-control, sampled:
 *	multicast frames not in @mcast are dropped (loop thread writes,
 *	xmit() reads)
 * @broken: 0, or a worker found the guest misbehaving: 1 while it writes
 *	@broken_reason, 2 once the reason is ready (any thread)
 * @broken_reason: its reason, written by the worker that set @broken
 * @error: why this connection was disabled (back_vif_fatal()), until a new
 *	one begins (InitWait) (loop thread)
 * @ctrl: the control ring, if the frontend set one up
 * @hash: RX steering configuration (hash.c; written by queue 0's worker)
 * @stats: per-queue counters
 * @watching_mcast: the watch on the frontend's request-multicast-control
 * @mcast_log: its changes are logged, but a guest may not flood the log
 * @fatal_log: so are fatal errors: a guest that fails its connect again
 *	and again (rewriting its state) gets a line per burst, not per try
 * @conn_log: and so are its connects (a guest connecting in a loop)
 * @warn_log: the rate limit of the packet-level warnings about this
 *	guest (back_queue_warn()), from any queue, under @warn_lock; it
 *	outlives reconnects, so a guest cannot reset it by reconnecting
 * @mcast_lock: serialises the TX workers that change @mcast
 * @mcast: the frontend's multicast filter (mcast.c), read by xmit()
 */
struct back_vif {
	struct back *b;
	struct back_vif *next;
	struct back_guest *guest;
	domid_t domid;
	uint32_t devid;
	uint8_t mac[6];
	char fe_path[64];
	char be_path[80];
	enum xenbus_state state;
	enum xenbus_state fe_state;
	bool watching;
	bool watching_rate;
	bool watching_online;
	bool offline;
	_Atomic uint64_t rate;
	struct back_frontend fe;
	enum back_tx_mode mode;
	uint32_t persistent_grants;
	unsigned int nq;
	unsigned int nq_stats;
	struct back_queue *q[BACK_MAX_QUEUES_LIMIT];
	struct sw_port *port;
	uint64_t rx_timeout_ns;
	uint64_t rx_stall_ns;
	_Atomic unsigned int rx_stalled_queues;
	bool carrier_key;
	_Atomic bool mcast_filter;
	_Atomic int broken;
	char broken_reason[160];
	char *error;
	struct back_ctrl ctrl;
	struct back_hash hash;
	struct back_queue_stats stats[BACK_MAX_QUEUES_LIMIT];
	bool watching_mcast;
	struct log_ratelimit mcast_log;
	struct log_ratelimit fatal_log;
	struct log_ratelimit conn_log;
	struct log_ratelimit warn_log;
	pthread_mutex_t warn_lock;
	pthread_mutex_t mcast_lock;
	_Atomic uint64_t mcast[BACK_MCAST_MAX];
};

/**
 * back_zalloc() - zeroed memory aligned to a cache line (our structs ask for it)
 * @size: bytes
 *
 * Return: the memory (free() it), or NULL
 */
void *back_zalloc(size_t size);

/**
 * struct back - the netback of one pvnetd
 * @cfg: settings
 * @hv: hypervisor
 * @store: xenstore server
 * @sw: switch
 * @vifs: every vif (loop thread)
 * @guests: every guest that has a vif (loop thread)
 * @ctl_fd: eventfd workers write to report a broken vif
 * @ctl_watch: its loop registration
 * @rx_release_now: queues waiting at teardown for their frames (their
 *	@leaving set; the loop thread writes, workers read): while not 0,
 *	every RX queue looks for those queues' frames among what it holds
 */
struct back {
	struct back_config cfg;
	struct hv *hv;
	struct store *store;
	struct sw *sw;
	struct back_vif *vifs;
	struct back_guest *guests;
	int ctl_fd;
	struct loop_watch ctl_watch;
	_Atomic uint32_t rx_release_now;
};

/* xenbus.c -- loop thread only */

/**
 * back_xenbus_start() - advertise our features and watch the frontend's state
 * @vif: a vif whose directories exist
 *
 * The watch fires once at once, so the vif may reach InitWait before this
 * returns.  Return: 0 or a store -errno
 */
int back_xenbus_start(struct back_vif *vif);

/**
 * back_xenbus_stop() - stop watching the frontend (no more transitions)
 * @vif: the vif
 */
void back_xenbus_stop(struct back_vif *vif);

/**
 * back_xenbus_switch_state() - record and write the backend state
 * @vif: the vif
 * @s: the new state
 */
void back_xenbus_switch_state(struct back_vif *vif, enum xenbus_state s);

/**
 * back_xenbus_carrier() - bring our "carrier" key up to date (loop thread)
 * @vif: the vif
 *
 * netif.h's link state: 1 while the vif is connected and no queue of it
 * is stalled (back_vif_carrier()), else 0.  Written only when it changes.
 */
void back_xenbus_carrier(struct back_vif *vif);

/**
 * back_xenbus_set_state() - move towards @target along the legal path
 * @vif: the vif
 * @target: InitWait, Connected, Closing or Closed
 *
 * Connects or disconnects on the way; a failed connect is fatal and stops
 * in Closing.
 */
void back_xenbus_set_state(struct back_vif *vif, enum xenbus_state target);

/**
 * back_xenbus_disconnect() - tear the data path down (any state, idempotent)
 * @vif: the vif
 *
 * Stops the workers, removes the switch port, drops queued RX frames, waits
 * for this vif's TX frames to complete, unmaps the rings, closes the ports.
 */
void back_xenbus_disconnect(struct back_vif *vif);

/* worker.c */

/**
 * back_worker_start() - start the worker thread of a fully set up queue
 * @q: the queue
 *
 * Return: 0 or -errno of pthread_create()
 */
int back_worker_start(struct back_queue *q);

/**
 * back_worker_stop() - stop and join the worker (no-op if not running)
 * @q: the queue
 */
void back_worker_stop(struct back_queue *q);

/**
 * back_worker_round() - run one worker round of @q on the calling thread
 * @q: a queue of a backend made with cfg.no_workers (no thread serves it)
 *
 * One iteration of the worker's loop without the sleep: completions, TX,
 * RX, the control ring (queue 0), and when that found nothing the final
 * check a worker makes before it sleeps (which sets the rings' req_event).
 * For tests and fuzzers that must choose when each round happens.
 *
 * Return: true if the round did something or work is waiting; false for a
 * queue that has a worker thread (nothing is done)
 */
bool back_worker_round(struct back_queue *q);

/* The queue whose worker runs on the calling thread, or NULL (set by worker.c). */
extern _Thread_local struct back_queue *back_self;

/**
 * back_worker_wake() - wake the worker if it sleeps (any thread)
 * @q: the queue; call after publishing work with a seq_cst store
 */
void back_worker_wake(struct back_queue *q);

/**
 * back_queue_fatal() - a worker found the guest misbehaving (tier 2)
 * @q: the queue
 * @fmt: printf format of the reason
 *
 * Marks the vif broken once (the first reason wins) and wakes the loop
 * thread, which disconnects the vif.  Never touches the store.
 */
void back_queue_fatal(struct back_queue *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * back_queue_warn() - log a packet-level warning about a queue's guest (any thread)
 * @q: the queue
 * @fmt: printf format, after the "vifD.N qQ: " it is given
 *
 * Rate-limited per vif (@warn_log), not per pvnetd: a guest that sends
 * garbage at full speed uses up its own budget only, and another guest's
 * warnings still reach the log.  Takes the vif's @warn_lock, and only when
 * there is something to warn about: never on a good packet's path.
 */
void back_queue_warn(struct back_queue *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * back_ctl_kick() - have the loop thread look at every vif again (any thread)
 * @b: the backend
 *
 * For what only the loop thread may do (the store): a broken vif, a
 * carrier that changed.  One eventfd write; not for the per-packet path.
 */
void back_ctl_kick(struct back *b);

/* Polling a worker earns per unit of its work, in thousandths (worker.c, Adaptive waiting). */
#define BACK_POLL_EARN_PERMILLE 1000u

/**
 * back_poll_earn() - a worker's polling budget after one productive round
 * @earned: the budget before it (ns)
 * @idle_since: when the poll that found the round's work began (ns), 0 if
 *	the worker was not polling (it was working, or woke from a sleep)
 * @t0: when the round began (ns)
 * @t1: when it ended (ns)
 * @window: the most the budget holds (poll_us in ns)
 *
 * The poll spent (@t0 - @idle_since) is taken away, the round earns
 * BACK_POLL_EARN_PERMILLE / 1000 of its duration.  A worker polls an idle
 * spell for at most the budget it has when the spell begins.
 *
 * Return: the new budget, 0..@window
 */
uint64_t back_poll_earn(uint64_t earned, uint64_t idle_since, uint64_t t0, uint64_t t1,
			uint64_t window);

/**
 * back_now_ns() - CLOCK_MONOTONIC in ns (vDSO: no syscall)
 *
 * Return: the time
 */
uint64_t back_now_ns(void);

/**
 * back_notify() - notify the guest through @port and count it
 * @q: the queue
 * @port: our port (TX or RX channel)
 */
void back_notify(struct back_queue *q, evtchn_port_t port);

/* tx.c -- the queue's worker (the loop thread once the worker is stopped) */

/**
 * back_tx_init() - allocate pending slots, completion ring, copy-mode pool
 * @q: the queue
 *
 * Return: 0, -ENOMEM
 */
int back_tx_init(struct back_queue *q);

/**
 * back_tx_fini() - free what back_tx_init() allocated (partial init is fine)
 * @q: the queue
 */
void back_tx_fini(struct back_queue *q);

/**
 * back_tx_poll() - consume one batch of guest TX requests
 * @q: the queue
 *
 * Return: true if any request was consumed
 */
bool back_tx_poll(struct back_queue *q);

/**
 * back_tx_complete() - finish frames whose consumers are done: unmap, answer
 * @q: the queue
 *
 * Return: true if any frame was completed
 */
bool back_tx_complete(struct back_queue *q);

/**
 * back_tx_credit_timeout() - lower a worker's poll timeout to when TX credit returns
 * @q: the queue
 * @now: back_now_ns()
 * @timeout_ms: the timeout so far (-1: none); lowered if TX waits for credit
 */
void back_tx_credit_timeout(struct back_queue *q, uint64_t now, int *timeout_ms);

/**
 * back_tx_has_work() - final check before sleeping (sets req_event)
 * @q: the queue
 *
 * Return: true if requests are waiting and a pending slot is free
 */
bool back_tx_has_work(struct back_queue *q);

/**
 * back_tx_done() - sw_pkt done() of our TX frames (any thread)
 * @pkt: the frame, embedded in a struct back_tx_pending
 */
void back_tx_done(struct sw_pkt *pkt);

/**
 * back_tx_pending_of() - the pending slot a frame of ours is the descriptor of
 * @pkt: a frame whose done() is back_tx_done(), still in flight
 *
 * Return: the slot; its @q, the sending queue, waits for the frame before it goes
 */
static inline struct back_tx_pending *back_tx_pending_of(struct sw_pkt *pkt)
{
	return (struct back_tx_pending *)((char *)pkt - offsetof(struct back_tx_pending, pkt));
}

/* ctrl.c -- connect/disconnect on the loop thread, the rest on queue 0's worker */

int back_ctrl_connect(struct back_vif *vif, grant_ref_t ref, evtchn_port_t evtchn);
void back_ctrl_disconnect(struct back_vif *vif);
bool back_ctrl_poll(struct back_queue *q);
bool back_ctrl_has_work(struct back_queue *q);

/* gnt.c -- grant operations of a queue: counted, batched, cached */

/**
 * back_gnt_init() - set up the persistent-grant cache of a PERSISTENT queue
 * @q: the queue (q->mode set; no-op in the other modes)
 * @cap: most pages the frontend may use in this queue's requests
 *
 * Return: 0, -ENOMEM
 */
int back_gnt_init(struct back_queue *q, uint32_t cap);

/**
 * back_gnt_fini() - unmap every cached page (one batch) and free the cache
 * @q: the queue; its worker is stopped and no TX frame is in flight
 */
void back_gnt_fini(struct back_queue *q);

/**
 * back_gnt_copy() - one batch of grant copies (GNTTABOP_copy)
 * @q: the queue
 * @n: ops
 * @segs: the ops; each gets its status
 *
 * PERSISTENT: the foreign side of each op is looked up in the cache (the
 * misses mapped in one batch) and the copy is a memcpy.  Return: 0, or a
 * negative errno when the whole call failed (every status then set to
 * GNTST_general_error).
 */
int back_gnt_copy(struct back_queue *q, uint32_t n, xengnttab_grant_copy_segment_t *segs);

/**
 * back_gnt_rx_copy() - back_gnt_copy() for the RX side, by the holder of
 *	@q->rx_lock (through the RX grant handle)
 * @q: the queue
 * @n: ops
 * @segs: the ops; each gets its status
 *
 * Return: as back_gnt_copy()
 */
int back_gnt_rx_copy(struct back_queue *q, uint32_t n, xengnttab_grant_copy_segment_t *segs);

/**
 * back_gnt_map() - one batch of grant maps (GNTTABOP_map_grant_ref)
 * @q: the queue
 * @n: ops
 * @ops: the ops; each gets status, handle and host_addr
 *
 * PERSISTENT: answered from the cache (misses mapped in one batch, with
 * the access the op asks for); the mappings belong to the cache and must
 * not be unmapped by the caller.  Return: as back_gnt_copy()
 */
int back_gnt_map(struct back_queue *q, uint32_t n, struct gnttab_map_grant_ref *ops);

/**
 * back_gnt_unmap() - one batch of grant unmaps (GNTTABOP_unmap_grant_ref)
 * @q: the queue
 * @n: ops
 * @ops: the ops
 *
 * Return: 0 or a negative errno
 */
int back_gnt_unmap(struct back_queue *q, uint32_t n, struct gnttab_unmap_grant_ref *ops);

/* rx.c */

/* The vif's switch port type: xmit() delivers or enqueues for the guest (any thread). */
extern const struct sw_port_ops back_rx_port_ops;

/**
 * back_rx_init() - allocate the RX input ring
 * @q: the queue
 *
 * Return: 0, -ENOMEM
 */
int back_rx_init(struct back_queue *q);

/**
 * back_rx_fini() - free the RX input ring (it must be empty)
 * @q: the queue
 */
void back_rx_fini(struct back_queue *q);

/**
 * back_rx_poll() - expire, copy out, deliver one batch into the guest's buffers
 * @q: the queue
 * @now: back_now_ns()
 * @timeout_ms: lowered to the next deadline when frames wait
 *
 * Return: true if anything changed
 */
bool back_rx_poll(struct back_queue *q, uint64_t now, int *timeout_ms);

/**
 * back_rx_drop_all() - release every frame queued for the guest
 * @q: the queue (its worker, or the loop thread once the port is gone)
 *
 * Used when the vif is broken or going away, so that frames of other vifs
 * are never pinned by a vif that will not deliver them.
 *
 * Return: frames dropped (counted in rx_dropped)
 */
unsigned int back_rx_drop_all(struct back_queue *q);

/**
 * back_rx_age() - how long an RX input item has waited
 * @it: the item (u64: its enqueue time)
 * @now: the worker's clock, read at the start of its round
 *
 * A producer may have queued the item since @now was read, with a later
 * clock reading: such an item is new (0), not 2^64 ns old.  (Without this
 * a busy, polling worker expired fresh frames as 10 s old.)
 *
 * Return: the age in ns
 */
uint64_t back_rx_age(const struct back_mpsc_item *it, uint64_t now);

/**
 * back_rx_has_input() - frames queued and not blocked on guest buffers
 * @q: the queue
 *
 * Return: true if an RX round would make progress
 */
bool back_rx_has_input(struct back_queue *q);

/**
 * back_mcast_apply() - a frontend's multicast filter request (a TX "dummy")
 * @vif: the vif
 * @op: XEN_NETIF_EXTRA_TYPE_MCAST_ADD or XEN_NETIF_EXTRA_TYPE_MCAST_DEL
 * @addr: the address
 *
 * Any TX worker of the vif.  ADD adds an entry (an address added twice
 * needs two DELs, as in Linux), DEL removes one; deleting an address that
 * is not there is no error.
 *
 * Return: NETIF_RSP_OKAY, or NETIF_RSP_ERROR when ADD finds the filter full
 */
int16_t back_mcast_apply(struct back_vif *vif, uint8_t op, const uint8_t addr[6]);

/**
 * back_mcast_drop() - does the frontend's filter drop this frame?
 * @vif: the vif
 * @dst: the frame's destination MAC
 *
 * Any thread (xmit(), while @vif->mcast_filter is on).  True for a
 * multicast destination that is not broadcast and not in the filter.
 */
bool back_mcast_drop(struct back_vif *vif, const uint8_t dst[6]);

/* back_mcast_reset() - empty the filter (at connect, while no worker runs). */
void back_mcast_reset(struct back_vif *vif);

/* back_mcast_count() - addresses in the filter now (any thread; a snapshot). */
unsigned int back_mcast_count(const struct back_vif *vif);

#endif /* PVNET_BACK_INTERNAL_H */
