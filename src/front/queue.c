// SPDX-License-Identifier: MIT
/* queue.c - one netfront queue: ring pages, granted buffer pools, event channels, wakeups */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "common/prefetch.h"
#include "front/front.h"

/*
 * Theory of Operation
 *
 * A queue owns, for its whole life, 2 + nr_tx + nr_rx pages of guest
 * memory, each granted once to the backend at setup and ended at teardown:
 *
 *   TX ring page   rw   req_prod, rsp_event and the requests written here;
 *                       rsp_prod, req_event and the responses by the backend
 *   RX ring page   rw   same split
 *   TX buffer i    ro   TX request id i (the id says which page to free)
 *   RX buffer j    rw   posted at some RX ring index k, request id = k & 255
 *
 * Private state (never shared): the front rings' req_prod_pvt/rsp_cons, who
 * owns each buffer (free list, ring, or application), rx_slot[] (which RX
 * buffer was posted at each ring slot), rx_pushed (our last RX req_prod:
 * responses beyond it are a backend bug), the counters.
 *
 * Wakeups: the queue's fd is its event channel's wait fd (or an epoll fd
 * over the TX and RX channels when they are split).  The data calls never
 * make a system call while they find work.  Only when a call finds nothing
 * to do does it go "idle" (front_queue_idle()): consume the pending events,
 * then RING_FINAL_CHECK_FOR_RESPONSES on RX (rsp_event = rsp_cons + 1) and,
 * if a send was stopped by a full ring, arm TX completions for when half of
 * the in-flight slots are done (NetBSD xennet's rule, so a full ring costs
 * two wakeups, not one per response).  If the final check finds work that
 * arrived meanwhile, the queue kicks its own wait fd so the application's
 * poll() returns at once: no lost wakeup, whichever side won the race.
 *
 * Threads: one thread at a time per queue (the vif's status, and with
 * xps-safe steering the flow table, are the only fields shared between
 * queues, and they are atomic).  Each queue starts on its own cache line.
 * A vif shared by several sender threads (pvnet_vif_set_steering())
 * serialises each queue with q->lock, taken once per data call (steer.c).
 */

/* clang-format off */
const char *const front_queue_stat_names[FRONT_STAT_NR] = {
	[FRONT_STAT_TX_PACKETS]   = "tx_packets",
	[FRONT_STAT_TX_BYTES]     = "tx_bytes",
	[FRONT_STAT_TX_ERRORS]    = "tx_errors",
	[FRONT_STAT_TX_RING_FULL] = "tx_ring_full",
	[FRONT_STAT_TX_NOTIFY]    = "tx_notify",
	[FRONT_STAT_RX_PACKETS]   = "rx_packets",
	[FRONT_STAT_RX_BYTES]     = "rx_bytes",
	[FRONT_STAT_RX_ERRORS]    = "rx_errors",
	[FRONT_STAT_RX_NOTIFY]    = "rx_notify",
	[FRONT_STAT_RX_SPURIOUS]  = "rx_spurious",
	[FRONT_STAT_MCAST_REQUESTS] = "mcast_requests",
	[FRONT_STAT_MCAST_REFUSED] = "mcast_refused",
};
/* clang-format on */

/* The public ring constants are the real ring sizes for a 4 KiB page. */
_Static_assert(__CONST_RING_SIZE(netif_tx, PVNET_PAGE_SIZE) == PVNET_RING_SIZE, "TX ring size");
_Static_assert(__CONST_RING_SIZE(netif_rx, PVNET_PAGE_SIZE) == PVNET_RING_SIZE, "RX ring size");
_Static_assert(PVNET_MAX_FRAGS == XEN_NETIF_NR_SLOTS_MIN, "frags per frame");
_Static_assert(PVNET_MAX_FRAME == XEN_NETIF_MAX_TX_SIZE, "largest frame");
_Static_assert(PVNET_GSO_TCPV4 == XEN_NETIF_GSO_TYPE_TCPV4 &&
		   PVNET_GSO_TCPV6 == XEN_NETIF_GSO_TYPE_TCPV6,
	       "GSO types are Xen's");
/* Request ids are 16 bits and index buffers: both pools must fit. */
_Static_assert(PVNET_RING_SIZE <= UINT16_MAX, "TX ids");

static int grant_ring(struct front_queue *q, uint32_t *frame, grant_ref_t *ref, void **page)
{
	struct pvnet_vif *vif = q->vif;
	int rc = front_domain_grant_page(vif->dom, vif->backend_id, false, frame, ref);

	if (rc < 0)
		return rc;
	*page = pvnet_domain_page(vif->dom, *frame);
	return 0;
}

static int alloc_pools(struct front_queue *q)
{
	const struct pvnet_vif_config *cfg = &q->vif->cfg;

	q->nr_tx = cfg->tx_buffers;
	q->nr_rx = cfg->rx_buffers;
	q->tx_buf = calloc(q->nr_tx, sizeof(*q->tx_buf));
	q->tx_page = calloc(q->nr_tx, sizeof(*q->tx_page));
	q->tx_frame = calloc(q->nr_tx, sizeof(*q->tx_frame));
	q->tx_ref = calloc(q->nr_tx, sizeof(*q->tx_ref));
	q->tx_owner = calloc(q->nr_tx, sizeof(*q->tx_owner));
	q->tx_head = calloc(q->nr_tx, sizeof(*q->tx_head));
	q->tx_flow = calloc(q->nr_tx, sizeof(*q->tx_flow));
	q->tx_free = calloc(q->nr_tx, sizeof(*q->tx_free));
	q->rx_buf = calloc(q->nr_rx, sizeof(*q->rx_buf));
	q->rx_page = calloc(q->nr_rx, sizeof(*q->rx_page));
	q->rx_frame = calloc(q->nr_rx, sizeof(*q->rx_frame));
	q->rx_ref = calloc(q->nr_rx, sizeof(*q->rx_ref));
	q->rx_owner = calloc(q->nr_rx, sizeof(*q->rx_owner));
	q->rx_free = calloc(q->nr_rx, sizeof(*q->rx_free));
	if (!q->tx_buf || !q->tx_page || !q->tx_frame || !q->tx_ref || !q->tx_owner ||
	    !q->tx_head || !q->tx_flow || !q->tx_free || !q->rx_buf || !q->rx_page ||
	    !q->rx_frame || !q->rx_ref || !q->rx_owner || !q->rx_free)
		return -ENOMEM;
	return 0;
}

static int grant_pools(struct front_queue *q)
{
	struct pvnet_vif *vif = q->vif;
	int rc;

	/* TX pages are read-only for the backend: it has no business writing our frames. */
	for (; q->tx_granted < q->nr_tx; q->tx_granted++) {
		unsigned int i = q->tx_granted;

		rc = front_domain_grant_page(vif->dom, vif->backend_id, true, &q->tx_frame[i],
					     &q->tx_ref[i]);
		if (rc < 0)
			return rc;
		q->tx_page[i] = pvnet_domain_page(vif->dom, q->tx_frame[i]);
		q->tx_buf[i].page = q->tx_page[i];
		q->tx_buf[i].id = i;
		/* Stack order: id 0 is handed out first. */
		q->tx_free[q->nr_tx - 1 - i] = (uint16_t)i;
	}
	q->tx_nfree = q->nr_tx;
	for (; q->rx_granted < q->nr_rx; q->rx_granted++) {
		unsigned int i = q->rx_granted;

		rc = front_domain_grant_page(vif->dom, vif->backend_id, false, &q->rx_frame[i],
					     &q->rx_ref[i]);
		if (rc < 0)
			return rc;
		q->rx_page[i] = pvnet_domain_page(vif->dom, q->rx_frame[i]);
		q->rx_buf[i].page = q->rx_page[i];
		q->rx_buf[i].id = i;
		q->rx_free[q->nr_rx - 1 - i] = (uint16_t)i;
	}
	q->rx_nfree = q->nr_rx;
	return 0;
}

static int open_evtchns(struct front_queue *q)
{
	struct pvnet_vif *vif = q->vif;
	struct epoll_event ev = {.events = EPOLLIN};
	int rc;

	rc = pvnet_evtchn_alloc(vif->dom, vif->backend_id, &q->ev_rx);
	if (rc < 0)
		return rc;
	if (!q->split)
		return 0;
	rc = pvnet_evtchn_alloc(vif->dom, vif->backend_id, &q->ev_tx);
	if (rc < 0)
		return rc;
	q->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (q->epoll_fd < 0)
		return -errno;
	if (epoll_ctl(q->epoll_fd, EPOLL_CTL_ADD, q->ev_rx.fd, &ev) < 0 ||
	    epoll_ctl(q->epoll_fd, EPOLL_CTL_ADD, q->ev_tx.fd, &ev) < 0)
		return -errno;
	return 0;
}

/**
 * front_queue_setup() - grant a queue's rings and buffers, allocate its event channel(s)
 * @q: the queue, zeroed
 * @vif: its vif (dom, backend_id, cfg, negotiated features)
 * @index: its number
 *
 * On failure the queue is left for front_queue_teardown() to undo.
 *
 * Return: 0, -ENOMEM (guest memory), -ENOSPC (grant refs) or -errno
 */
int front_queue_setup(struct front_queue *q, struct pvnet_vif *vif, unsigned int index)
{
	netif_tx_sring_t *txs;
	netif_rx_sring_t *rxs;
	void *page;
	int rc;

	q->vif = vif;
	q->index = index;
	q->epoll_fd = -1;
	rc = pthread_mutex_init(&q->lock, NULL);
	if (rc)
		return -rc;
	q->lock_init = true;
	q->split = vif->features & PVNET_F_SPLIT_EVTCHN;
	rc = grant_ring(q, &q->tx_ring_frame, &q->tx_ring_ref, &page);
	if (rc < 0)
		return rc;
	q->tx_ring_granted = true;
	txs = page;
	SHARED_RING_INIT(txs);
	FRONT_RING_INIT(&q->tx, txs, PVNET_PAGE_SIZE);
	rc = grant_ring(q, &q->rx_ring_frame, &q->rx_ring_ref, &page);
	if (rc < 0)
		return rc;
	q->rx_ring_granted = true;
	rxs = page;
	SHARED_RING_INIT(rxs);
	FRONT_RING_INIT(&q->rx, rxs, PVNET_PAGE_SIZE);
	/* SHARED_RING_INIT's rsp_event: the first response of each ring notifies. */
	q->rx_armed = q->tx_armed = 1;
	rc = alloc_pools(q);
	if (rc < 0)
		return rc;
	rc = grant_pools(q);
	if (rc < 0)
		return rc;
	return open_evtchns(q);
}

/**
 * front_queue_teardown() - close the channels and end every grant of a queue
 * @q: the queue, set up fully, partly or not at all (zeroed)
 *
 * Call only once the backend has disconnected (or given up waiting for
 * it): a grant still mapped is deferred and its page abandoned.
 */
void front_queue_teardown(struct front_queue *q)
{
	struct pvnet_domain *dom;

	if (!q->vif)
		return;
	dom = q->vif->dom;
	if (q->epoll_fd >= 0)
		close(q->epoll_fd);
	/* Port 0 is never allocated (reserved, as on Xen): it marks "not open". */
	if (q->ev_tx.port)
		pvnet_evtchn_close(dom, &q->ev_tx);
	if (q->ev_rx.port)
		pvnet_evtchn_close(dom, &q->ev_rx);
	for (unsigned int i = 0; i < q->tx_granted; i++)
		front_domain_ungrant_page(dom, q->tx_frame[i], q->tx_ref[i]);
	for (unsigned int i = 0; i < q->rx_granted; i++)
		front_domain_ungrant_page(dom, q->rx_frame[i], q->rx_ref[i]);
	if (q->tx_ring_granted)
		front_domain_ungrant_page(dom, q->tx_ring_frame, q->tx_ring_ref);
	if (q->rx_ring_granted)
		front_domain_ungrant_page(dom, q->rx_ring_frame, q->rx_ring_ref);
	free(q->tx_buf);
	free(q->tx_page);
	free(q->tx_frame);
	free(q->tx_ref);
	free(q->tx_owner);
	free(q->tx_head);
	free(q->tx_flow);
	free(q->tx_free);
	if (q->lock_init)
		pthread_mutex_destroy(&q->lock);
	free(q->rx_buf);
	free(q->rx_page);
	free(q->rx_frame);
	free(q->rx_ref);
	free(q->rx_owner);
	free(q->rx_free);
	memset(q, 0, sizeof(*q));
}

/* RX requests that must be outstanding before we push: one largest frame (Linux NET_RX_SLOTS_MIN). */
#define RX_PUSH_MIN (XEN_NETIF_NR_SLOTS_MIN + 1)

/**
 * front_queue_rx_refill() - post free RX buffers and push them in one batch
 * @q: the queue
 *
 * Pushes (and notifies, if the backend asked) only once at least
 * RX_PUSH_MIN requests would be outstanding, as Linux netfront does: fewer
 * may not hold the next frame, and a push per buffer would cost a
 * notification each.
 */
void front_queue_rx_refill(struct front_queue *q)
{
	const RING_IDX mask = PVNET_RING_SIZE - 1;
	unsigned int room = RING_FREE_REQUESTS(&q->rx);

	/* The backend answered in these slots, on its CPU: fetch them owned. */
	prefetch_ring(q->rx.sring->ring, sizeof(q->rx.sring->ring[0]), PVNET_RING_SIZE,
		      q->rx.req_prod_pvt, q->rx_nfree < room ? q->rx_nfree : room, true);
	while (q->rx_nfree && RING_FREE_REQUESTS(&q->rx)) {
		RING_IDX idx = q->rx.req_prod_pvt;
		uint16_t b = q->rx_free[--q->rx_nfree];
		netif_rx_request_t *req = RING_GET_REQUEST(&q->rx, idx);

		req->id = (uint16_t)(idx & mask);
		req->gref = q->rx_ref[b];
		q->rx_slot[idx & mask] = b;
		q->rx_owner[b] = FRONT_RX_POSTED;
		q->rx.req_prod_pvt = idx + 1;
	}
	if (q->rx.req_prod_pvt == q->rx_pushed || q->rx.req_prod_pvt - q->rx.rsp_cons < RX_PUSH_MIN)
		return;
	/* The old req_prod is ours (rx_pushed), never read back from the shared page. */
	if (xen_ring_push(&q->rx.sring->req_prod, &q->rx.sring->req_event, &q->rx_pushed,
			  q->rx.req_prod_pvt)) {
		pvnet_evtchn_notify(&q->ev_rx);
		q->stats[FRONT_STAT_RX_NOTIFY]++;
	}
}

/**
 * front_queue_tx_reap() - consume TX responses, freeing their request ids
 * @q: the queue
 *
 * Return: the number of buffers freed, or -EIO if the backend broke the
 * protocol (the vif is then marked broken)
 */
int front_queue_tx_reap(struct front_queue *q)
{
	RING_IDX cons = q->tx.rsp_cons, prod;
	int freed = 0;

	prod = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	/* Responses only to requests we pushed: stronger than RING_RESPONSE_PROD_OVERFLOW. */
	if (prod - cons > q->tx.req_prod_pvt - cons) {
		front_vif_broken(q->vif, "queue %u: TX response producer %u beyond requests %u",
				 q->index, prod, q->tx.req_prod_pvt);
		return -EIO;
	}
	prefetch_ring(q->tx.sring->ring, sizeof(q->tx.sring->ring[0]), PVNET_RING_SIZE, cons,
		      prod - cons, false);
	for (; cons != prod; cons++) {
		netif_tx_response_t rsp;

		RING_COPY_RESPONSE(&q->tx, cons, &rsp);
		if (rsp.status == NETIF_RSP_NULL) {
			/*
			 * The answer to an extra-info slot.  One more than we sent
			 * extras answers a data slot so, and would leave its id in
			 * flight for ever (Linux's netfront leaks it): broken.
			 */
			if (!q->tx_nulls_due) {
				front_vif_broken(q->vif,
						 "queue %u: TX slot %u answered NULL, not an extra",
						 q->index, cons);
				return -EIO;
			}
			q->tx_nulls_due--;
			continue;
		}
		if (rsp.id < q->nr_tx && q->tx_owner[rsp.id] == FRONT_TX_MCAST) {
			/* pvnet_mcast_add()/_del(): no frame, no flow, only the outcome */
			q->stats[FRONT_STAT_MCAST_REQUESTS]++;
			if (rsp.status != NETIF_RSP_OKAY)
				q->stats[FRONT_STAT_MCAST_REFUSED]++;
			q->tx_owner[rsp.id] = FRONT_TX_FREE;
			q->tx_free[q->tx_nfree++] = rsp.id;
			freed++;
			continue;
		}
		if (rsp.id >= q->nr_tx || q->tx_owner[rsp.id] != FRONT_TX_INFLIGHT) {
			front_vif_broken(q->vif, "queue %u: TX response id %u not in flight",
					 q->index, rsp.id);
			return -EIO;
		}
		if (rsp.status != NETIF_RSP_OKAY && q->tx_head[rsp.id])
			q->stats[FRONT_STAT_TX_ERRORS]++;
		if (q->tx_head[rsp.id] && q->tx_flow[rsp.id]) {
			/* xps-safe: this frame of its flow is no longer in flight */
			front_steer_release(&q->vif->steer, q->tx_flow[rsp.id]);
			q->tx_flow[rsp.id] = 0;
		}
		q->tx_owner[rsp.id] = FRONT_TX_FREE;
		q->tx_free[q->tx_nfree++] = rsp.id;
		freed++;
	}
	q->tx.rsp_cons = cons;
	return freed;
}

/* Our own port's signal: makes the queue fd readable again (a full queue: it already is). */
static void self_kick(const struct pvnet_evtchn *ch)
{
	front_evtchn_self_kick(ch);
}

/**
 * front_queue_idle() - consume pending events and re-arm, without losing a wakeup
 * @q: the queue
 * @rx_incomplete: RX responses are waiting but do not make a whole frame
 *	yet: ask to be woken by the next one instead of the first
 *
 * Called by a data call that found nothing to do.  See Theory of Operation.
 *
 * Return: the number of pending events it consumed
 */
/*
 * Going idle reads the wait fd(s) only when an event can be pending: the
 * backend notifies a channel only when its responses cross the rsp_event we
 * wrote (RING_PUSH_RESPONSES_AND_CHECK_NOTIFY), and we know our own kicks.
 * A sender at a full ring that went idle after each frame otherwise made
 * one read() per frame or two.  Skipping a read can never lose a wakeup (the
 * ring check below does not depend on it); an event we did not predict (a
 * backend that kicks without work, XSA-391, or one racing our re-arming)
 * only makes the next poll() return early, and every FRONT_IDLE_READ_EVERY-th
 * idle call reads anyway, so such events cannot keep the fd readable.
 */
#define FRONT_IDLE_READ_EVERY 8u

/* Has the backend's response producer reached the event index @armed? */
static bool crossed(const RING_IDX *prod, RING_IDX armed)
{
	return (RING_IDX)(__atomic_load_n(prod, __ATOMIC_ACQUIRE) - armed) < (1u << 31);
}

int front_queue_idle(struct front_queue *q, bool rx_incomplete)
{
	const struct pvnet_evtchn *tx_ch = q->split ? &q->ev_tx : &q->ev_rx;
	int rx_more = 0, tx_more = 0, events = 0;
	bool rx_x = crossed(&q->rx.sring->rsp_prod, q->rx_armed);
	bool tx_x = crossed(&q->tx.sring->rsp_prod, q->tx_armed);
	bool rx_may = q->kicked_rx || (rx_x && !q->rx_crossed_read);
	bool tx_may = q->kicked_tx || (tx_x && !q->tx_crossed_read);
	bool force = ++q->idle_skips >= FRONT_IDLE_READ_EVERY;

	q->rx_incomplete = rx_incomplete;

	/* Without split channels both directions share the RX channel's fd. */
	if (force || rx_may || (!q->split && tx_may)) {
		events = pvnet_evtchn_pending(&q->ev_rx) == 1;
		q->kicked_rx = false;
		q->rx_crossed_read = rx_x;
		if (!q->split) {
			q->kicked_tx = false;
			q->tx_crossed_read = tx_x;
		}
	}
	if (q->split && (force || tx_may)) {
		events += pvnet_evtchn_pending(&q->ev_tx) == 1;
		q->kicked_tx = false;
		q->tx_crossed_read = tx_x;
	}
	if (force)
		q->idle_skips = 0;
	if (!rx_incomplete) {
		RING_FINAL_CHECK_FOR_RESPONSES(&q->rx, rx_more);
		q->rx_armed = q->rx.rsp_cons + 1;
	} else {
		/*
		 * RING_FINAL_CHECK_FOR_RESPONSES, with the event one past what
		 * the data call saw (a response that came since is found below).
		 */
		RING_IDX seen = q->rx_seen;

		q->rx.sring->rsp_event = seen + 1;
		q->rx_armed = seen + 1;
		xen_mb();
		rx_more = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE) != seen;
	}
	q->rx_crossed_read = false;
	if (q->tx_stopped) {
		RING_IDX inflight = q->tx.req_prod_pvt - q->tx.rsp_cons;

		q->tx_armed = q->tx.rsp_cons + (inflight + 1) / 2;
		q->tx.sring->rsp_event = q->tx_armed;
		q->tx_crossed_read = false;
		xen_mb();
		tx_more = RING_HAS_UNCONSUMED_RESPONSES(&q->tx);
	}
	if (rx_more) {
		self_kick(&q->ev_rx);
		q->kicked_rx = true;
	}
	if (tx_more) {
		self_kick(tx_ch);
		q->kicked_tx = true;
	}
	return events;
}

/**
 * front_vif_wake() - make every queue's fd readable: the vif stopped taking data
 * @vif: the vif, whose status the caller has just made an error
 *
 * A thread asleep on a queue's fd (pvnet_queue_wait(), or the application's
 * own poll()) would otherwise sleep until its timeout, or for ever, when the
 * vif broke on another queue or the backend went away; woken, its next data
 * call returns the error.  Only our own ports' signals are written: the
 * queues' owner state is not touched, so any thread may call it.
 */
void front_vif_wake(struct pvnet_vif *vif)
{
	if (!vif->queues)
		return;
	for (unsigned int i = 0; i < vif->nr_queues; i++)
		if (vif->queues[i].ev_rx.port) /* port 0: the queue's channel is not open */
			self_kick(&vif->queues[i].ev_rx);
}

int pvnet_queue_fd(struct pvnet_vif *vif, unsigned int queue)
{
	struct front_queue *q;

	if (queue >= vif->nr_queues || !vif->queues)
		return -EINVAL;
	q = &vif->queues[queue];
	return q->split ? q->epoll_fd : q->ev_rx.fd;
}

int pvnet_queue_stats(struct pvnet_vif *vif, unsigned int queue, struct pvnet_stat *stats,
		      unsigned int n)
{
	struct front_queue *q;

	if (queue >= vif->nr_queues || !vif->queues)
		return -EINVAL;
	q = &vif->queues[queue];
	for (unsigned int i = 0; i < n && i < FRONT_STAT_NR; i++) {
		stats[i].name = front_queue_stat_names[i];
		stats[i].value = q->stats[i];
	}
	return FRONT_STAT_NR;
}

/*
 * Responses waiting, in the owner's view (its own consumer indices), that
 * are work the caller waits for: RX responses, or TX completions while a send
 * is stopped on a full ring.  TX responses nobody waits for are not work:
 * the next send reaps them, and a receive-only thread whose queue once sent
 * a frame would otherwise find "work" for ever and spin without yielding.
 * Likewise half an RX frame is not work until a response past it comes
 * (a backend that never finishes the frame must not make us spin).
 */
static bool has_responses(struct front_queue *q)
{
	RING_IDX rx_done = q->rx_incomplete ? q->rx_seen : q->rx.rsp_cons;

	return __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE) != rx_done ||
	       (q->tx_stopped &&
		__atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE) != q->tx.rsp_cons);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Late arming.  The data call that found nothing to do armed the rings'
 * rsp_event (front_queue_idle()).  While pvnet_queue_wait() polls the
 * rings it needs no event, so for the window it moves both indices out of
 * the backend's reach: responses never run more than a ring ahead of
 * rsp_cons (they answer requests we posted), so rsp_cons + ring size + 1
 * is never crossed, and the backend pushes without notifying.  When the
 * window ends without work, front_queue_idle() arms them again, with its
 * final check, before the caller sleeps.  A busy queue then costs no event
 * channel notification either way, and no read() of its fd.
 */
static void disarm(struct front_queue *q)
{
	RING_IDX rx = q->rx.rsp_cons + PVNET_RING_SIZE + 1,
		 tx = q->tx.rsp_cons + PVNET_RING_SIZE + 1;

	__atomic_store_n(&q->rx.sring->rsp_event, rx, __ATOMIC_RELAXED);
	__atomic_store_n(&q->tx.sring->rsp_event, tx, __ATOMIC_RELAXED);
	q->rx_armed = rx;
	q->tx_armed = tx;
	q->rx_crossed_read = q->tx_crossed_read = false;
}

int pvnet_queue_wait(struct pvnet_vif *vif, unsigned int queue, unsigned int poll_us,
		     int timeout_ms)
{
	struct front_queue *q;
	uint64_t end = poll_us ? mono_us() + poll_us : 0;
	struct pollfd pfd;
	pthread_mutex_t *m;
	bool work;
	int rc = front_vif_check(vif, queue, &q);

	if (rc < 0)
		return rc;
	m = front_queue_lock(vif, queue);
	work = has_responses(q);
	if (!work && poll_us)
		disarm(q);
	front_queue_unlock(m);
	if (work)
		return 1;
	while (poll_us) {
		m = front_queue_lock(vif, queue);
		work = has_responses(q);
		if (!work && mono_us() >= end) {
			/* the window is over: arm again (final check included) */
			front_queue_idle(q, q->rx_incomplete);
			work = has_responses(q);
			poll_us = 0;
		}
		front_queue_unlock(m);
		if (work)
			return 1;
		if (poll_us)
			sched_yield();
	}
	pfd = (struct pollfd){.fd = pvnet_queue_fd(vif, queue), .events = POLLIN};
	rc = poll(&pfd, 1, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	return rc > 0;
}
