/* SPDX-License-Identifier: MIT */
/* fake_front.h - an in-process netfront played by the tests: domain, rings, grants, keys */
#ifndef PVNET_TESTS_BACK_FAKE_FRONT_H
#define PVNET_TESTS_BACK_FAKE_FRONT_H

/*
 * A fake frontend is a domain made from a sealed memfd, whose grant table
 * the test maps and writes with the hv_gntshr_* guest API.  Per queue, in
 * guest memory: one TX ring page, one RX ring page, 256 TX buffer pages
 * (buffer i belongs to TX request id i, ids come from a free list because
 * map-mode responses come back out of order) and 256 RX buffer pages
 * (buffer i belongs to RX ring slot i, responses come back in order), all granted to the backend up front (TX
 * read-only, RX writable).  Ring indices are read and written with
 * __atomic builtins (the orders of ring.h's fences) so TSan sees them.
 */

#include <stdbool.h>
#include <stdint.h>

#include "back/back.h"
#include "common/loop.h"
#include "hv/hv.h"
#include "store/store.h"
#include "switch/switch.h"

#define FF_MAX_QUEUES  4
#define FF_RING	       256
#define FF_PAGES_PER_Q (2 + 2 * FF_RING)

struct ff_queue {
	netif_tx_front_ring_t tx;
	netif_rx_front_ring_t rx;
	uint32_t tx_ring_frame, rx_ring_frame, tx_buf0, rx_buf0;
	grant_ref_t tx_ring_ref, rx_ring_ref;
	grant_ref_t tx_gref[FF_RING];
	grant_ref_t rx_gref[FF_RING];
	evtchn_port_t port_tx, port_rx;
	int16_t tx_status[FF_RING]; /* last response status per request id */
	/* TX ids (= buffer page numbers) in flight: a real netfront's free list */
	uint16_t id_free[FF_RING];
	unsigned int nid_free;
	bool id_busy[FF_RING];
	uint32_t tx_rsp_count, tx_rsp_okay, tx_rsp_error, tx_rsp_null;
};

struct ff {
	struct hv *hv;
	struct store *store;
	domid_t domid;
	uint32_t devid;
	uint32_t npages;
	uint8_t *mem;
	grant_entry_v1_t *gt;
	size_t gt_size;
	struct hv_gntshr gs;
	char fe_path[64];
	unsigned int nq;
	bool split;
	struct ff_queue q[FF_MAX_QUEUES];
};

/* Keys the frontend writes at connect; false/0 leaves a key out. */
struct ff_opts {
	unsigned int nq; /* 1..FF_MAX_QUEUES; >1 writes multi-queue keys */
	bool split;	 /* event-channel-tx/-rx instead of event-channel */
	bool no_rx_copy; /* omit request-rx-copy */
	bool sg, gso4, gso6, rx_notify, ipv6_csum;
	bool no_csum;		/* feature-no-csum-offload = 1: no blank IPv4 checksums */
	bool mcast_ctrl;	/* request-multicast-control = 1 */
	unsigned int write_nq;	/* if not 0, the multi-queue-num-queues value */
	bool omit_tx_ring_ref;	/* leave tx-ring-ref out */
	bool persistent;	/* write feature-persistent = 1 (whatever the backend offers) */
	long persistent_grants; /* with it: persistent-grants, -1 leaves the key out */
};

/* The fake's pool per queue: every TX and RX buffer page. */
#define FF_POOL (2 * FF_RING)

/*
 * The frontend most tests want, as a Linux netfront: one queue, SG, GSO
 * for both families, rx-notify, persistent grants accepted with the whole
 * pool.
 */
#define FF_OPTS_DEFAULT                                                                            \
	((struct ff_opts){.nq = 1,                                                                 \
			  .sg = true,                                                              \
			  .gso4 = true,                                                            \
			  .gso6 = true,                                                            \
			  .rx_notify = true,                                                       \
			  .persistent = true,                                                      \
			  .persistent_grants = FF_POOL})

/* The test's world: hypervisor, store, switch, loop, backend. */
struct world {
	struct hv *hv;
	struct store *store;
	struct sw *sw;
	struct loop *loop;
	struct back *back;
};

int world_create(struct world *w, enum back_tx_mode mode, const struct back_config *override);
void world_destroy(struct world *w);

/* Create the guest domain and introduce it; the vif is created separately. */
int ff_create(struct ff *f, struct world *w, uint32_t devid);
/* Set up rings, grants, channels and write the keys + state Connected. */
int ff_connect(struct ff *f, const struct ff_opts *o);
/* Write the frontend state. */
void ff_set_state(struct ff *f, enum xenbus_state s);
/* Release the rings' grants and ports (after the backend let go). */
void ff_teardown(struct ff *f);
/* Destroy the domain (as "xl destroy"), then drop the test's views. */
void ff_destroy(struct ff *f, struct hv_leak *leak);

/* Read an integer key of @dir/@key; -1 if absent. */
long xs_read_long(struct store *s, const char *dir, const char *key);

/* TX options of one frame. */
struct ff_txopt {
	uint32_t slot_max; /* bytes per data slot (0: 4096) */
	uint8_t gso_type;  /* XEN_NETIF_GSO_TYPE_* */
	uint16_t gso_size;
	uint16_t flags; /* NETTXF_csum_blank / data_validated */
};

/* Free TX ring slots. */
unsigned int ff_tx_free(struct ff *f, unsigned int qi);
/* Queue one frame on the TX ring (no push); -ENOSPC if the ring is full. */
int ff_tx_frame(struct ff *f, unsigned int qi, const uint8_t *frame, uint32_t len,
		const struct ff_txopt *opt);
/* Write raw requests (hostile tests) at req_prod_pvt; the data stays as is. */
void ff_tx_raw(struct ff *f, unsigned int qi, const netif_tx_request_t *reqs, unsigned int n);
/* Publish queued TX requests; notify if the backend asked for it. */
void ff_tx_push(struct ff *f, unsigned int qi);
/* Consume TX responses; returns how many were read. */
unsigned int ff_tx_reap(struct ff *f, unsigned int qi);
/* Pointer to TX buffer page @idx & 255 (raw tests use ids = idx & 255). */
uint8_t *ff_tx_page(struct ff *f, unsigned int qi, RING_IDX idx);

/* Post @n RX buffers (bounded by free slots) and push; returns posted. */
unsigned int ff_rx_post(struct ff *f, unsigned int qi, unsigned int n);
/* The same, published without the event the backend may have asked for. */
unsigned int ff_rx_post_quiet(struct ff *f, unsigned int qi, unsigned int n);
/* Post with a specific gref for the next request (hostile RX). */
void ff_rx_post_gref(struct ff *f, unsigned int qi, grant_ref_t gref);
/* Post one request with @id and @gref as they are, and push. */
void ff_rx_post_req(struct ff *f, unsigned int qi, uint16_t id, grant_ref_t gref);

/* Receive info of one frame. */
struct ff_rxinfo {
	uint16_t flags; /* first slot's NETRXF_* */
	uint8_t gso_type;
	uint16_t gso_size;
	bool hash;	   /* a HASH extra came with it: */
	uint8_t hash_type; /* its type's bit number */
	uint8_t hash_alg;  /* its algorithm */
	uint32_t hash_value;
	unsigned int slots; /* extras included */
	bool error;	    /* a negative status */
};

/*
 * Take one complete frame off the RX ring into @buf.  Returns its length,
 * -EAGAIN if no complete frame is there, -EIO for a frame with an error
 * status (consumed), -EMSGSIZE if @cap is too small.
 */
int ff_rx_recv(struct ff *f, unsigned int qi, uint8_t *buf, uint32_t cap, struct ff_rxinfo *info);

/* Wait up to @ms for @cond (evaluated once per try), running the loop. */
#define WAIT_UNTIL(w, cond, ms)                                                                    \
	({                                                                                         \
		uint64_t __end = test_now_ms() + (ms);                                             \
		bool __ok;                                                                         \
		while (!(__ok = (cond)) && test_now_ms() < __end)                                  \
			loop_run_once((w)->loop, 1);                                               \
		__ok;                                                                              \
	})

uint64_t test_now_ms(void);

/* Fill a frame: dst, src MAC, EtherType 0x88b5 (local experimental), pattern. */
void make_frame(uint8_t *buf, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		uint32_t seed);

/*
 * make_frame(), with IPv4 (IPv6 for GSO TCPv6) and TCP headers over its
 * first bytes when @opt asks for a blank checksum or GSO: the headers those
 * flags need (netback drops a frame they do not fit).  @len >= 74.
 */
void make_frame_opt(uint8_t *buf, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		    uint32_t seed, const struct ff_txopt *opt);

#endif /* PVNET_TESTS_BACK_FAKE_FRONT_H */
