/* SPDX-License-Identifier: MIT */
/* hv_internal.h - state shared by the hv modules; not for use outside src/hv */
#ifndef PVNET_HV_HV_INTERNAL_H
#define PVNET_HV_HV_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv/hv.h"

/*
 * Domain slots are type-stable: all max_domains of them are allocated in
 * hv_create() and only freed by hv_destroy(), and a slot's port array,
 * once allocated, stays until hv_destroy() too.  That is what lets the
 * event channel fast path look a domain and a peer port up without a lock
 * (compare Linux's SLAB_TYPESAFE_BY_RCU): the memory it reads is always a
 * port, and the per-port inflight count (evtchn.c) tells the control plane
 * when no notify can still be using an old binding.
 *
 * A live domain with id d sits in slot d % max_domains; hv_domain_create()
 * picks the next id upwards whose slot is free, so ids are not reused while
 * the previous holder of the slot is a zombie.
 */

enum hv_dom_state {
	HV_DOM_FREE = 0,
	HV_DOM_LIVE,
	HV_DOM_DYING, /* destroyed, memory still mapped by someone (zombie) */
};

/*
 * struct hv_active - hv-private state of one grant entry (Xen's active
 * entry); the guest cannot touch it.  Its fields are protected by the pin
 * lock of its block (struct hv_domain @pin_locks).
 */
struct hv_active {
	/*
	 * HV_PIN_RD per read-only map or copy source, HV_PIN_WR per writable
	 * map or copy destination: one word, read and written whole, since a
	 * load of two counts just after a store to one could not be forwarded
	 * from the store and would wait until every older store, the copy just
	 * made, is written.
	 */
	uint32_t pins;
	domid_t domid;	/* the domain pinning it */
	uint32_t frame; /* frame snapshot taken at the first pin */
};

/* One pin of each kind in struct hv_active's @pins: 16 bits each. */
#define HV_PIN_WR_SHIFT 16
#define HV_PIN_MAX	0xffffu /* most pins of one kind */
#define HV_PIN_RD	1u
#define HV_PIN_WR	(1u << HV_PIN_WR_SHIFT)

/*
 * Grant entries per pin lock: a queue's buffers are granted together, so
 * the refs of one batch of ops mostly share a block, while different
 * queues' buffers mostly do not.
 */
#define HV_PIN_BLOCK 64

/* Event channel port states (Xen's ECS_*, the subset we model). */
enum hv_ecs {
	HV_ECS_FREE = 0,
	HV_ECS_RESERVED, /* port 0 */
	HV_ECS_UNBOUND,
	HV_ECS_INTERDOMAIN,
};

#define HV_EVTCHN_PENDING 1U
#define HV_EVTCHN_MASKED  2U

/*
 * struct hv_evtchn_sig - how a port is signalled (evtchn.c): the two ends
 * of a SOCK_DGRAM socketpair, @wait readable while a datagram is queued,
 * @kick sent on to queue one; -1 when not open.
 */
struct hv_evtchn_sig {
	int wait;
	int kick;
	bool guest;  /* some of its fds went to a guest process: closed later (evtchn.c) */
	bool rights; /* the wait end can receive fds (no SO_PASSRIGHTS): drained with care */
};

/* No signal: a free port's. */
#define HV_EVTCHN_SIG_NONE ((struct hv_evtchn_sig){.wait = -1, .kick = -1})

/*
 * struct hv_evtchn_port - one port.  @state, @peer, @remote_*, @sig,
 * @spare and @external are written by the control plane under hv->lock;
 * the fast path reads @state/@peer/@external atomically and @sig, which does
 * not change while the port is open.  @flags and the counters are atomics
 * any thread may update.
 */
struct hv_evtchn_port {
	_Atomic uint32_t state;
	_Atomic uint32_t flags;	   /* HV_EVTCHN_PENDING | HV_EVTCHN_MASKED */
	_Atomic uint32_t inflight; /* notifies currently reading @peer */
	_Atomic bool external;	   /* the owner consumes its signal itself */
	struct hv_evtchn_port *_Atomic peer;
	domid_t remote_dom;	    /* unbound: may bind; interdomain: peer's domain */
	evtchn_port_t remote_port;  /* interdomain: peer's port */
	struct hv_evtchn_sig sig;   /* own signal, -1 when free */
	struct hv_evtchn_sig spare; /* unbound: the signal the binder's port will own */
	struct hv_domain *owner;    /* the channel's allocator, charged until its last port */
	uint32_t owner_gen;	    /* ... in that incarnation of its slot (@evtchn_gen) */
	_Atomic uint64_t sent;
	_Atomic uint64_t delivered;
	_Atomic uint64_t spurious;
};

/*
 * struct hv_domain - one domain slot.  @state and @domid are written under
 * hv->lock and read atomically by the fast paths; @refs counts the registry
 * (1 while live), each grant mapping and each batch in progress; the
 * domain's memory is freed when it drops to 0.
 */
struct hv_domain {
	_Atomic uint32_t state;
	_Atomic uint32_t domid;
	_Atomic uint32_t refs;
	_Atomic uint32_t maps; /* live mappings of this domain's grants */

	/* Guest memory: read-write and read-only views of the memfd. */
	int memfd;
	uint32_t npages;
	uint8_t *mem_rw;
	const uint8_t *mem_ro;

	/* Grant table: shared (guest-written) entries and hv-private state. */
	int gnttab_fd;
	uint32_t nr_grants;
	grant_entry_v1_t *gnttab;
	struct hv_active *active;
	atomic_uint *pin_locks; /* one-word spinlocks, one per HV_PIN_BLOCK entries */

	/* Event channels: nr_ports ports, allocated once per slot (slot 0: dom0's). */
	struct hv_evtchn_port *ports;
	uint32_t nr_ports;
	uint32_t evtchn_gen; /* domains this slot has held */
	uint32_t nr_owned;   /* channels this domain allocated that are still open */
};

struct hv {
	struct hv_config cfg;
	pthread_mutex_t lock; /* control plane: domain and port life cycles */
	struct hv_domain *doms;
	uint32_t next_domid;
	uint32_t nr_live;
	uint32_t nr_zombies;
	uint32_t nr_ports_open;
	uint32_t nr_channels; /* made by alloc_unbound, until their last port closes */
	_Atomic uint64_t maps_in_use;
	_Atomic uint64_t copy_ops;
	_Atomic uint64_t map_ops;
	_Atomic uint64_t unmap_ops;
	_Atomic uint64_t batches;
};

/* Slot of @domid (it may hold another domain or none). */
static inline struct hv_domain *hv_slot(struct hv *hv, domid_t domid)
{
	return &hv->doms[domid % hv->cfg.max_domains];
}

/**
 * hv_domain_get() - take a reference on a live domain
 * @hv: the hypervisor
 * @domid: the domain
 *
 * Once per batch, not per op: one mutex round trip.
 *
 * Return: the domain, or NULL if it does not exist or is dying
 */
struct hv_domain *hv_domain_get(struct hv *hv, domid_t domid);

/**
 * hv_domain_put() - drop a reference; the last one frees a zombie's memory
 * @hv: the hypervisor
 * @d: the domain
 */
void hv_domain_put(struct hv *hv, struct hv_domain *d);

/**
 * hv_domain_put_n() - drop @n references at once (a batch of unmaps)
 * @hv: the hypervisor
 * @d: the domain
 * @n: references to drop, all held by the caller
 */
void hv_domain_put_n(struct hv *hv, struct hv_domain *d, uint32_t n);

/**
 * hv_domain_lookup_live() - lock-free lookup for the event channel fast path
 * @hv: the hypervisor
 * @domid: the domain
 *
 * Return: the slot if it holds live @domid, else NULL.  The slot memory is
 * type-stable, so a racing destroy cannot make this a use-after-free.
 */
struct hv_domain *hv_domain_lookup_live(struct hv *hv, domid_t domid);

/**
 * hv_evtchn_domain_init() - prepare a slot's ports for a new domain
 * @hv: the hypervisor
 * @d: the slot, its ports array allocated if needed
 *
 * Return: 0 or -ENOMEM
 */
int hv_evtchn_domain_init(struct hv *hv, struct hv_domain *d);

/**
 * hv_evtchn_domain_close_all() - close every port of a domain (hv->lock held)
 * @hv: the hypervisor
 * @d: the domain
 *
 * Return: the number of ports that were open
 */
uint32_t hv_evtchn_domain_close_all(struct hv *hv, struct hv_domain *d);

/*
 * Test hook: if set, called by the grant code between its snapshot of a
 * shared entry and the compare-and-swap that marks it in use, so that a
 * test can play a guest rewriting the entry at the worst moment.  NULL in
 * production; one predictable branch per op.
 */
extern void (*hv_gnttab_race_hook)(grant_entry_v1_t *entry);

/*
 * Test hook: if set, called by hv_evtchn_pending() between draining the
 * eventfd and clearing the pending bit, so that a test can notify at that
 * moment.  NULL in production.
 */
extern void (*hv_evtchn_eoi_hook)(void);

/*
 * Test hook: signals made while this is set leave their wait ends able to
 * receive fds, as every signal is on a kernel before 6.16 (no SO_PASSRIGHTS).
 */
extern bool hv_evtchn_test_rights;

#endif /* PVNET_HV_HV_INTERNAL_H */
