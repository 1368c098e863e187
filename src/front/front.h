/* SPDX-License-Identifier: MIT */
/* front.h - libpvnet internals shared by domain, xenbus, queue, tx and rx */
#ifndef PVNET_FRONT_FRONT_H
#define PVNET_FRONT_FRONT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <pvnet/pvnet.h>

#include "common/xen.h"
#include "hv/gnttab.h"

struct front_xs;

/* ---- domain.c: guest memory and control requests ---- */

int front_domain_page_alloc(struct pvnet_domain *d, uint32_t *frame);
void front_domain_page_free(struct pvnet_domain *d, uint32_t frame);
int front_domain_grant_page(struct pvnet_domain *d, uint16_t remote, bool readonly, uint32_t *frame,
			    grant_ref_t *ref);
void front_domain_ungrant_page(struct pvnet_domain *d, uint32_t frame, grant_ref_t ref);
int front_domain_call(struct pvnet_domain *d, const json_t *req, json_t **reply, int timeout_ms);
void front_domain_set_vif_error(struct pvnet_domain *d, const char *why);
/* Make @ch's fd readable, as an event would (the self kick of queue.c); 0 or -errno. */
int front_evtchn_self_kick(const struct pvnet_evtchn *ch);
struct hv_gntshr *front_domain_gntshr(struct pvnet_domain *d);

/* ---- tx.c / rx.c pure stages (no queue state; fuzzers and tests call them) ---- */

/* One data fragment of a TX frame: a piece of a granted page. */
struct front_tx_frag {
	grant_ref_t gref;
	uint16_t offset;
	uint16_t size;
	uint16_t id;
};

/* One TX ring slot as pkt2slots produces it. */
union front_tx_slot {
	netif_tx_request_t req;
	struct netif_extra_info extra;
};

/* Most slots one TX frame takes: PVNET_MAX_FRAGS data slots and one GSO extra. */
#define FRONT_TX_MAX_SLOTS (XEN_NETIF_NR_SLOTS_MIN + 1)

int front_tx_pkt2slots(const struct front_tx_frag *frags, unsigned int nfrags, uint16_t flags,
		       uint8_t gso_type, uint16_t gso_size, uint32_t features,
		       union front_tx_slot *slots);

/*
 * Most data slots of one RX frame: Linux netfront accepts
 * XEN_NETIF_NR_SLOTS_MIN, plus one when the first slot is short; we accept
 * the larger bound always.
 */
#define FRONT_RX_MAX_FRAGS (XEN_NETIF_NR_SLOTS_MIN + 1)
/* Most extra-info slots: one of each valid type (GSO, MCAST_ADD, MCAST_DEL, HASH). */
#define FRONT_RX_MAX_EXTRAS (XEN_NETIF_EXTRA_TYPE_MAX - 1)

/* One frame reassembled from RX responses (all taken from snapshots). */
struct front_rx_pkt {
	unsigned int nslots; /* ring slots the frame used, extras included */
	unsigned int nfrags;
	struct {
		RING_IDX idx; /* ring index of the slot: its buffer is rx_slot[idx & mask] */
		uint16_t offset;
		uint16_t len;
	} frags[FRONT_RX_MAX_FRAGS];
	RING_IDX extra_idx[FRONT_RX_MAX_EXTRAS];
	unsigned int nextras;
	uint32_t len;
	uint16_t flags; /* PVNET_PKT_* */
	bool error;	/* a slot had a negative status: drop and count */
	uint8_t gso_type;
	uint16_t gso_size;
	uint8_t hash_type;
	uint32_t hash;
};

int front_rx_slots2pkt(const netif_rx_front_ring_t *r, RING_IDX cons, RING_IDX prod,
		       struct front_rx_pkt *pkt, const char **why);

/* ---- queue.c: one queue's rings, buffers and event channels ---- */

/* Counters of one queue, in the order of front_queue_stat_names[]. */
enum front_stat {
	FRONT_STAT_TX_PACKETS,
	FRONT_STAT_TX_BYTES,
	FRONT_STAT_TX_ERRORS,
	FRONT_STAT_TX_RING_FULL,
	FRONT_STAT_TX_NOTIFY,
	FRONT_STAT_RX_PACKETS,
	FRONT_STAT_RX_BYTES,
	FRONT_STAT_RX_ERRORS,
	FRONT_STAT_RX_NOTIFY,
	FRONT_STAT_RX_SPURIOUS,
	FRONT_STAT_MCAST_REQUESTS,
	FRONT_STAT_MCAST_REFUSED,
	FRONT_STAT_NR,
};
extern const char *const front_queue_stat_names[FRONT_STAT_NR];

/* Owner of a TX buffer (one per TX request id). */
enum front_tx_owner {
	FRONT_TX_FREE,	   /* on the free list */
	FRONT_TX_APP,	   /* given out by pvnet_tx_alloc() */
	FRONT_TX_INFLIGHT, /* its request is on the ring, no response yet */
	FRONT_TX_MCAST,	   /* its id carries a multicast filter request, no response yet */
};

/* Owner of an RX buffer. */
enum front_rx_owner {
	FRONT_RX_FREE,	 /* on the free list */
	FRONT_RX_POSTED, /* its request is on the ring */
	FRONT_RX_APP,	 /* given out by pvnet_rx_burst() */
};

/* A cache line: each queue starts on its own, so two queues' owners never share one. */
#define FRONT_CACHE_LINE 64

struct front_queue {
	_Alignas(FRONT_CACHE_LINE) struct pvnet_vif *vif;
	unsigned int index;

	/* Rings: the shared pages are written as ring.h says; the rest is private. */
	netif_tx_front_ring_t tx;
	netif_rx_front_ring_t rx;
	uint32_t tx_ring_frame, rx_ring_frame;
	grant_ref_t tx_ring_ref, rx_ring_ref;
	bool tx_ring_granted, rx_ring_granted;

	/* Event channels: ev_tx only when split (else ev_rx serves both). */
	struct pvnet_evtchn ev_rx, ev_tx;
	bool split;
	int epoll_fd; /* when split: both wait fds, so the queue has one fd */

	/* TX: buffer i is request id i. */
	unsigned int nr_tx;
	struct pvnet_buf *tx_buf;
	void **tx_page; /* buffer i's page: tx_buf[i].page is the application's to spoil */
	uint32_t *tx_frame;
	grant_ref_t *tx_ref;
	uint8_t *tx_owner; /* enum front_tx_owner */
	uint8_t *tx_head;  /* 1 if the request was a frame's first slot */
	uint16_t *tx_flow; /* first slot: xps-safe flow entry + 1, or 0 (steer.c) */
	uint16_t *tx_free; /* stack of free ids */
	unsigned int tx_nfree;
	unsigned int tx_nulls_due; /* extra slots pushed, not yet answered (NETIF_RSP_NULL) */
	unsigned int tx_granted;   /* buffers granted so far (teardown bound) */

	/* RX: buffers posted by ring index; request id = index & mask. */
	unsigned int nr_rx;
	struct pvnet_buf *rx_buf;
	void **rx_page; /* likewise */
	uint32_t *rx_frame;
	grant_ref_t *rx_ref;
	uint8_t *rx_owner; /* enum front_rx_owner */
	uint16_t *rx_free;
	unsigned int rx_nfree;
	unsigned int rx_granted;
	uint16_t rx_slot[PVNET_RING_SIZE]; /* buffer posted at each ring slot */
	RING_IDX rx_pushed;	/* our own last req_prod: the backend may scribble on it */
	RING_IDX rx_prefetched; /* RX responses up to here were prefetched (rx.c, rx_avail) */
	bool tx_stopped;	/* a send found no room: TX completions are armed */
	/*
	 * What may be pending on the wait fd(s), so that going idle reads an
	 * eventfd only when an event can be there (queue.c, front_queue_idle):
	 * the rsp_event values we wrote, whether the backend's responses have
	 * crossed them since we last read, and our own kicks.
	 */
	RING_IDX rx_armed, tx_armed;
	bool rx_crossed_read, tx_crossed_read; /* that crossing's event was read */
	bool kicked_rx, kicked_tx;	       /* we kicked the RX / TX channel's fd */
	unsigned int idle_skips;	       /* idle calls since the last read */
	bool rx_incomplete;		       /* the last idle call saw half a frame */
	RING_IDX rx_seen;		       /* ... and the RX producer index it saw */

	uint64_t stats[FRONT_STAT_NR];
	/* Taken once per data call when the vif is shared (steer.c); set up with the queue. */
	pthread_mutex_t lock;
	bool lock_init;
};

int front_queue_setup(struct front_queue *q, struct pvnet_vif *vif, unsigned int index);
void front_queue_teardown(struct front_queue *q);
void front_queue_rx_refill(struct front_queue *q);
int front_queue_tx_reap(struct front_queue *q);
int front_queue_idle(struct front_queue *q, bool rx_incomplete);
void front_vif_wake(struct pvnet_vif *vif);

/* ---- tx.c / rx.c: the lock-free bodies of the public data calls (steer.c wraps them) ---- */

/*
 * pvnet_mcast_add()/_del() without the queue lock: @op is
 * XEN_NETIF_EXTRA_TYPE_MCAST_ADD or _DEL.
 */
int front_mcast(struct pvnet_vif *vif, unsigned int queue, uint8_t op, const uint8_t mac[6]);
int front_send(struct pvnet_vif *vif, unsigned int queue, const struct pvnet_pkt *pkts,
	       unsigned int n, const uint16_t *flows);
int front_recv(struct pvnet_vif *vif, unsigned int queue, struct pvnet_pkt *pkts, unsigned int n,
	       void *buf, size_t buflen);
int front_tx_alloc(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);
int front_tx_submit(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		    unsigned int n);
void front_tx_free(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);
int front_rx_burst(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		   unsigned int n);
void front_rx_release(struct pvnet_vif *vif, unsigned int queue, struct pvnet_buf **bufs,
		      unsigned int n);

/* ---- steer.c: TX steering policies (pure parts usable without a vif) ---- */

/*
 * One xps-safe flow entry: the queue in the top 8 bits, the frames in
 * flight on it in the low 24 (at most PVNET_MAX_QUEUES * PVNET_RING_SIZE).
 */
#define FRONT_FLOW_QSHIFT   24
#define FRONT_FLOW_INFLIGHT ((1u << FRONT_FLOW_QSHIFT) - 1)

/**
 * struct front_steer - a vif's TX steering state
 * @policy: enum pvnet_steering (control calls write it, senders read it)
 * @nq: queues to spread over
 * @cpu: where the calling thread runs (sched_getcpu unless replaced)
 * @cpu_arg: its argument
 * @flows: xps-safe flow table, indexed by flow hash; every sender thread
 *	updates it with compare-and-swap (one per frame, xps-safe only)
 */
struct front_steer {
	int policy;
	unsigned int nq;
	pvnet_cpu_fn cpu;
	void *cpu_arg;
	_Atomic uint32_t flows[PVNET_STEER_FLOWS];
};

pthread_mutex_t *front_queue_lock(struct pvnet_vif *vif, unsigned int queue);
void front_queue_unlock(pthread_mutex_t *m);
void front_steer_init(struct front_steer *st, int policy, unsigned int nq, pvnet_cpu_fn cpu,
		      void *cpu_arg);
uint32_t front_steer_flow_hash(const void *frame, uint32_t len);
unsigned int front_steer_pick(struct front_steer *st, uint32_t hash, uint16_t *held);
void front_steer_release(struct front_steer *st, uint16_t held);
uint32_t front_steer_inflight(struct front_steer *st, uint32_t hash);

/* ---- ctrl.c: the control ring ---- */

/* Requests the control ring holds (one page): at most this many are unanswered. */
#define FRONT_CTRL_RING_SIZE __CONST_RING_SIZE(xen_netif_ctrl, PVNET_PAGE_SIZE)

/**
 * struct front_ctrl_req - a request on the control ring, not answered yet
 * @id: its id; it sits at index id % FRONT_CTRL_RING_SIZE of the table
 * @busy: it is unanswered (the entry is in use)
 * @page: it names the data page, which must stay as it is until the answer
 */
struct front_ctrl_req {
	uint16_t id;
	bool busy;
	bool page;
};

/**
 * struct front_ctrl - the vif's control ring and its data page
 * @ring: the front ring (shared page written as ring.h says)
 * @ring_frame: @ring's page
 * @ring_ref: its grant (rw)
 * @data_frame: the page keys and tables are passed in
 * @data_ref: its grant (read-only)
 * @ev: the event channel (event-channel-ctrl)
 * @next_id: where the search for the next request's id starts
 * @pending: the unanswered requests, by id % FRONT_CTRL_RING_SIZE: one
 *	per request between rsp_cons and req_prod_pvt, so an entry is
 *	always free when the ring is not full
 * @page_busy: an unanswered request names the data page
 * @active: both grants and the channel exist and the keys were written
 */
struct front_ctrl {
	xen_netif_ctrl_front_ring_t ring;
	uint32_t ring_frame, data_frame;
	grant_ref_t ring_ref, data_ref;
	bool ring_granted, data_granted;
	struct pvnet_evtchn ev;
	uint16_t next_id;
	struct front_ctrl_req pending[FRONT_CTRL_RING_SIZE];
	bool page_busy;
	bool active;
};

int front_ctrl_setup(struct pvnet_vif *vif);
void front_ctrl_teardown(struct pvnet_vif *vif);

/* ---- xenbus.c: the vif and its state machine ---- */

/* Longest xenstore path we build: device dirs are short, XENSTORE_ABS_PATH_MAX bounds the rest. */
#define FRONT_PATH_MAX 256

struct pvnet_vif {
	struct pvnet_domain *dom;
	struct pvnet_vif_config cfg;
	struct front_xs *xs;
	uint16_t backend_id;
	uint8_t mac[6];
	char fe_path[FRONT_PATH_MAX];
	char be_path[FRONT_PATH_MAX];
	enum xenbus_state state, be_state;
	bool carrier;	   /* the backend's "carrier" key as last read (netif.h's link state) */
	uint32_t features; /* negotiated PVNET_F_* */
	unsigned int nr_queues;
	struct front_queue *queues;
	/* 0 connected, -ENOTCONN disconnected, -EIO broken; written once per failure. */
	atomic_int status;
	atomic_flag reason_set;
	char reason[160];	/* one line: "queue N: RX slot I: what was wrong" */
	char be_error[256];	/* the closing backend's "error" key, printable; "" none */
	bool ctrl_offered;	/* the backend wrote feature-ctrl-ring = 1 */
	bool mcast_offered;	/* the backend wrote feature-multicast-control = 1 */
	struct front_ctrl ctrl; /* set up when cfg.ctrl_ring && ctrl_offered */
	atomic_bool shared;	/* pvnet_vif_set_steering() called: data calls lock */
	struct front_steer steer;
};

void front_vif_broken(struct pvnet_vif *vif, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int front_vif_check(struct pvnet_vif *vif, unsigned int queue, struct front_queue **q);

/**
 * front_buf_id() - which of a queue's buffers @b is, by its address alone
 * @bufs: the queue's tx_buf or rx_buf
 * @n: entries in @bufs
 * @b: a pointer the application handed in
 *
 * The application may spoil any field of a buffer it holds (id and page
 * included) and may pass a pointer that is none of ours: the index comes
 * from the address, compared as an integer, before anything is read
 * through it.
 *
 * Return: the index, or -1 if @b is not an element of @bufs
 */
static inline int front_buf_id(const struct pvnet_buf *bufs, unsigned int n,
			       const struct pvnet_buf *b)
{
	uintptr_t p = (uintptr_t)b, base = (uintptr_t)bufs;

	if (p < base || p - base >= (uintptr_t)n * sizeof(*b) || (p - base) % sizeof(*b))
		return -1;
	return (int)((p - base) / sizeof(*b));
}

#endif /* PVNET_FRONT_FRONT_H */
