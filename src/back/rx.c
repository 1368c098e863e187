// SPDX-License-Identifier: MIT
// rx.c - guest RX: the vif's switch port (xmit), direct delivery, the queue, hold, expiry, stalls

/*
 * Theory of Operation
 *
 * xmit() (any thread the switch runs on) picks a queue with hash.c (the
 * guest's Toeplitz mapping when it set one, else a keyed flow hash of the
 * private header: the same flow always lands on the same queue) and
 * records the Toeplitz hash for the guest's HASH extra.  Then, per queue:
 *
 * Direct delivery (run to completion).  If the calling thread gets the
 * queue's rx_lock (see direct_begin()) and nothing is queued for it, it copies
 * the frames into the guest's posted buffers itself (step 4 below), in
 * order, and the frames complete before xmit() returns: no hand-off to
 * another thread, no wake-up, no cache line crossing CPUs per packet, and a
 * mapped sender's pages are released at once.  What the guest's buffers
 * cannot take yet is queued as below, and from then on the queue is not
 * empty, so later frames follow it there.  One lock per queue and call.
 * A caller that finds frames queued first delivers them itself, as the
 * worker would, if the guest has posted buffers for them since
 * (drain_queued()), and then its own: so a receiver that fell behind for a
 * moment does not hand its queue's every later frame to the worker, which
 * would take turns with the forwarding thread and copy each once more.
 *
 * Otherwise xmit() charges the frame's bytes to the queue's byte bound
 * (XSA-392: a guest that stops consuming cannot make pvnetd hold more than
 * rx_queue_max_bytes per queue), pushes (packet, now) onto the queue's
 * bounded MPSC input ring and wakes the worker.  A full queue refuses the
 * frame and, because the switch's contract is "the first k frames are
 * taken", every frame after it in the call: counted as rx_queue_full here
 * and tx_dropped by the switch.  (A frame kept for direct delivery was
 * taken: if neither the buffers nor the queue can take it, it is dropped
 * and counted as rx_direct_full and rx_dropped.)
 *
 * The worker (back_rx_poll) then, per round, holding rx_lock:
 *   1. drops frames at the head that waited longer than the drain timeout
 *      (10 s, or 30 ms for a frontend without feature-rx-notify, as Linux);
 *   2. copies out frames sent by a netback TX queue that have waited longer
 *      than tx_hold_max_us: their payload is still the sender's grant (or
 *      pool page), and a receiver that does not post buffers must not pin
 *      it; the copy goes to the queue's hold pool, bounded by the queue's
 *      byte bound, and the sender's packet is put (its TX completes).
 *      Frames of any other port (an uplink's receive buffers, which every
 *      port the frame reaches shares and which are few) are copied out
 *      after port_hold_max_us, so that a guest that takes nothing cannot
 *      stop an uplink's traffic to everyone else;
 *   3. (steps 3 and 4 are rx_deliver.c's back_rx_deliver(), which direct
 *      delivery calls too) delivers frames in order while the guest has posted enough buffers
 *      for the head frame (slots needed = pages of data + 1 for a GSO
 *      extra).  A frame that needs more waits: req_event is set to
 *      req_cons + needed so the guest's push notifies us exactly when
 *      enough are there (full barrier, re-check); a frontend without
 *      feature-rx-notify never notifies, so we poll it while blocked:
 *      every millisecond at first, every quarter of the head's wait
 *      after, 10 ms at most (back_rx_poll());
 *   4. one grant-copy call for the batch (gnt.c: a memcpy into the mapped
 *      buffers with persistent grants; sources are plain pointers: the
 *      private header, mapped pages, pool pages; destinations the guest's
 *      grefs), responses written at the index of the request each consumed
 *      (netfront relies on it), statuses of failed copies patched to
 *      NETIF_RSP_ERROR, one push with the notify check, then the frames are
 *      put.  This is the one copy of the payload from sender to receiver.
 *      With Toeplitz hashing active a HASH extra follows the first slot
 *      (after the GSO extra, if any): type bit number, algorithm, value
 *      little-endian.
 *
 * Ordering (issue 4): frames taken from one TX queue reach any one RX
 * queue in the order they were sent.  Proof by the paths a frame takes:
 *   - one TX queue is one worker thread, which hands its frames to the
 *     switch in ring order, and the switch calls xmit() once per batch in
 *     input order; xmit() pushes onto the RX queue's MPSC ring, whose
 *     positions one producer claims in program order (a CAS on the tail),
 *     so the ring holds that source's frames in send order, whichever
 *     other threads push between them (several TX workers feeding one RX
 *     queue interleave, never overtake);
 *   - direct delivery happens only while the ring is empty, tail included
 *     (no position claimed, published or not), either found so or made so
 *     by the caller delivering the ring's items from its head under
 *     rx_lock, as the worker does: then no earlier frame of this source
 *     waits anywhere, it delivers in input order, and what it cannot
 *     deliver goes onto the ring before rx_lock is released, ahead of
 *     anything this source sends later;
 *   - the ring is consumed only from its head, in order; a frame that
 *     does not fit the guest's posted buffers blocks the head (nothing
 *     behind it is delivered first); a full ring or byte bound refuses
 *     the frame and every later one of the same call (drop, never a
 *     retry that could pass it);
 *   - copy-out of a long-held frame (step 2) rewrites the item in place:
 *     it keeps its position;
 *   - expiry (step 1) drops only from the head.
 * The only thing that may change the RX queue of a flow is the guest
 * rewriting its mapping table, which is the guest's own choice.
 * test_order.c (tests/back) sends interleaved flows from several TX queues,
 * through both ways, and checks every flow's sequence at the receiver.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "back/rx.h"

/* What precedes each copy in the hold pool: how to release it. */
struct hold_hdr {
	uint32_t skip;	/* bytes left unused at the end of the pool before it */
	uint32_t total; /* this header, the rx_held and the frame, 8-byte aligned */
};

/*
 * The pool holds a full RX queue of copies: queued frames never exceed
 * rx_queue_max_bytes (xmit() refuses past it), each copy costs its headers
 * and up to 7 bytes of alignment, there are at most BACK_RXQ_CAP of them,
 * and wrapping wastes at most one largest copy.
 */
uint64_t back_hold_pool_bytes(uint32_t rx_queue_max_bytes)
{
	return (uint64_t)rx_queue_max_bytes +
	       (uint64_t)BACK_RXQ_CAP *
		   (sizeof(struct hold_hdr) + sizeof(struct back_rx_held) + 7) +
	       2 * (uint64_t)(XEN_NETIF_MAX_TX_SIZE + 64);
}

/*
 * Charge a pool of @size bytes to the guest, or false if its pools would
 * pass the budget.  A compare-and-swap, so that queues of the guest
 * charging at once never take more than the budget between them, even
 * for a moment.
 */
static bool guest_charge(struct back_guest *g, uint64_t size, uint64_t max)
{
	uint64_t cur = atomic_load_explicit(&g->hold_bytes, memory_order_relaxed);

	do {
		if (cur > max || size > max - cur)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
	    &g->hold_bytes, &cur, cur + size, memory_order_relaxed, memory_order_relaxed));
	return true;
}

/* Free the queue's pool (empty or not: the caller has dropped what was in it) and uncharge it. */
static void hold_free_pool(struct back_queue *q)
{
	if (!q->hold.base)
		return;
	free(q->hold.base);
	atomic_fetch_sub_explicit(&q->vif->guest->hold_bytes, q->hold.size, memory_order_relaxed);
	q->hold = (struct back_hold_pool){0};
}

int back_rx_init(struct back_queue *q)
{
	return back_mpsc_init(&q->rxq, BACK_RXQ_CAP);
}

void back_rx_fini(struct back_queue *q)
{
	back_mpsc_fini(&q->rxq);
	free(q->sw);
	q->sw = NULL;
	q->sw_sent = 0;
	hold_free_pool(q);
}

/*
 * Take room for a copy of @len bytes.  The pool is made at the first
 * copy-out, if the guest's budget has room for it (-EDQUOT: it has none);
 * once made it never refuses for good (back_hold_pool_bytes()): -ENOMEM
 * means "not yet", and the copy-out is retried next round, as for a
 * failed allocation.
 */
static int hold_alloc(struct back_queue *q, uint32_t len, struct back_rx_held **out)
{
	struct back_hold_pool *h = &q->hold;
	uint64_t total = (sizeof(struct hold_hdr) + sizeof(struct back_rx_held) + len + 7) & ~7ULL;
	uint64_t pos, skip = 0;
	struct hold_hdr *hdr;

	if (!h->base) {
		uint64_t size = back_hold_pool_bytes(q->b->cfg.rx_queue_max_bytes);

		if (!guest_charge(q->vif->guest, size, q->b->cfg.rx_guest_max_bytes))
			return -EDQUOT;
		h->base = malloc(size);
		if (!h->base) {
			atomic_fetch_sub_explicit(&q->vif->guest->hold_bytes, size,
						  memory_order_relaxed);
			return -ENOMEM;
		}
		h->size = size;
		h->head = h->tail = 0;
	}
	if (total > h->size)
		return -ENOMEM;
	pos = h->tail % h->size;
	if (pos + total > h->size)
		skip = h->size - pos;
	if (h->tail + skip + total - h->head > h->size)
		return -ENOMEM;
	hdr = (struct hold_hdr *)(h->base + (pos + skip) % h->size);
	hdr->skip = (uint32_t)skip;
	hdr->total = (uint32_t)total;
	h->tail += skip + total;
	*out = (struct back_rx_held *)(hdr + 1);
	return 0;
}

/* Release the oldest copy, @held (copies are released in the order they were taken). */
static void hold_free(struct back_queue *q, struct back_rx_held *held)
{
	struct hold_hdr *hdr = (struct hold_hdr *)held - 1;
	struct back_hold_pool *h = &q->hold;

	/* Our own invariant, not guest input: copies leave in the order they came. */
	if ((uint8_t *)hdr != h->base + (h->head + hdr->skip) % h->size) {
		err("vif%u.%u q%u: hold pool released out of order", q->vif->domid, q->vif->devid,
		    q->id);
		abort();
	}
	h->head += hdr->skip + hdr->total;
	/*
	 * The last copy went, and another queue of the guest went without a
	 * pool for want of budget: this one, idle now, gives way (made again
	 * by its next copy-out, if the budget has room then).  Nothing else
	 * is in it, so the caller may go on releasing its other items.
	 */
	if (h->head == h->tail &&
	    atomic_load_explicit(&q->vif->guest->hold_wanted, memory_order_relaxed) &&
	    atomic_exchange_explicit(&q->vif->guest->hold_wanted, false, memory_order_relaxed))
		hold_free_pool(q);
}

/*
 * With rx_lock held: one batch from the head of @rxq into the guest's
 * buffers (back_rx_deliver()), popped and uncharged.  *@n receives how many
 * were looked at (0: nothing queued), *@moved whether the guest took
 * anything (a frame, or segments of the head frame); returns how many went.
 */
static unsigned int deliver_head(struct back_queue *q, bool direct, unsigned int *n, bool *moved)
{
	struct back_mpsc_item *items[BACK_BATCH], *it;
	uint32_t lens[BACK_BATCH], bytes = 0;
	unsigned int k = 0, done;
	uint16_t sent = q->sw_sent;

	while (k < BACK_BATCH && (it = back_mpsc_peek(&q->rxq, k)) != NULL)
		items[k++] = it;
	*n = k;
	*moved = false;
	if (k == 0)
		return 0;
	for (unsigned int i = 0; i < k; i++)
		lens[i] = back_rx_item_len(items[i]);
	done = back_rx_deliver(q, items, k, direct, true);
	*moved = done || q->sw_sent != sent;
	for (unsigned int i = 0; i < done; i++) {
		bytes += lens[i];
		back_mpsc_pop(&q->rxq);
	}
	atomic_fetch_sub_explicit(&q->rxq_bytes, bytes, memory_order_relaxed);
	return done;
}

/*
 * With rx_lock held: deliver what is queued on @rxq, in order, as the
 * worker would (steps 3 and 4), at most RX_DRAIN_BATCHES batches; true if
 * every published item went.  direct_begin() calls it when xmit() finds
 * frames queued ahead of its own: the guest may have posted buffers since
 * they were queued, and then the thread that is forwarding anyway delivers
 * them, and its own frames behind them, instead of queueing more and
 * waking the queue's worker, which would take turns on a CPU with the
 * forwarding thread and hand each frame over once more.  Expiry, copy-out
 * and stall detection (steps 1 and 2) stay the worker's; a frame that does
 * not fit arms req_event as in the worker's round, and the caller queues
 * its own frames behind it and wakes the worker.
 */
#define RX_DRAIN_BATCHES 8u

/*
 * The most bytes the worker copies out of held frames in one hold of
 * rx_lock (rx_maintain()): a sender delivering straight into the ring
 * waits for that lock, so a receiver with megabytes queued for copy-out
 * holds it up for tens of microseconds a round, not milliseconds.
 */
#define RX_COPY_OUT_MAX_BYTES (256u * 1024u)

/* The longest poll interval of a blocked frontend without feature-rx-notify (back_rx_poll()). */
#define RX_NONOTIFY_POLL_MAX_MS 10

/*
 * Has the guest posted what the blocked head frame waits for (rx_wait_for)?
 * A hint read from the shared ring: back_rx_deliver() takes the requests
 * it uses from its own checked reading.
 */
static bool rx_wait_over(struct back_queue *q)
{
	RING_IDX prod = __atomic_load_n(&q->rx.sring->req_prod, __ATOMIC_SEQ_CST);

	return (int32_t)(prod - atomic_load_explicit(&q->rx_wait_for, memory_order_relaxed)) >= 0;
}

static bool drain_queued(struct back_queue *q)
{
	/* Still blocked: the head would not fit; leave the queue as it is. */
	if (atomic_load_explicit(&q->rx_blocked, memory_order_acquire) && !rx_wait_over(q))
		return false;
	for (unsigned int b = 0; b < RX_DRAIN_BATCHES; b++) {
		bool moved;
		unsigned int n, done = deliver_head(q, true, &n, &moved);

		if (n == 0)
			return true;
		/* The guest took frames: a wait of the head starts again (stall detection). */
		if (moved)
			q->rx_blocked_since = 0;
		if (done < n)
			return false;
	}
	return back_mpsc_peek(&q->rxq, 0) == NULL;
}

/*
 * Direct delivery: may the calling thread deliver into @q's ring itself?
 * Only with rx_lock held and nothing queued on @rxq, not even a position a
 * producer has claimed but not yet published: then no frame from any
 * source is waiting for this queue, and delivering now overtakes none.  On
 * true the caller holds rx_lock.
 *
 * A caller that holds no other rx_lock (@may_wait) waits for the lock: its
 * holder is delivering one batch, and waiting costs less than handing the
 * frames to the worker (a wake-up, a thread switch, the completions coming
 * back across CPUs); two senders' workers feeding one queue would
 * otherwise push each other onto the slow path.  A caller that already
 * holds one only tries, so no two threads can wait for each other.
 */
static bool direct_begin(struct back_queue *q, bool may_wait)
{
	if (may_wait)
		pthread_mutex_lock(&q->rx_lock);
	else if (pthread_mutex_trylock(&q->rx_lock) != 0)
		return false;
	if (atomic_load_explicit(&q->rxq.tail, memory_order_seq_cst) == back_mpsc_head(&q->rxq) ||
	    (drain_queued(q) &&
	     atomic_load_explicit(&q->rxq.tail, memory_order_seq_cst) == back_mpsc_head(&q->rxq)))
		return true;
	pthread_mutex_unlock(&q->rx_lock);
	return false;
}

/* Queue @it for the worker: charge its bytes and push; false if refused (bound or ring full). */
static bool enqueue(struct back_queue *q, const struct back_mpsc_item *it, uint32_t len,
		    uint32_t max)
{
	uint32_t cur = atomic_fetch_add_explicit(&q->rxq_bytes, len, memory_order_relaxed);

	if (cur + len > max || !back_mpsc_push(&q->rxq, it)) {
		atomic_fetch_sub_explicit(&q->rxq_bytes, len, memory_order_relaxed);
		return false;
	}
	return true;
}

/*
 * Deliver the @n frames the caller kept for @q (it holds rx_lock), in
 * order; queue what the guest's buffers cannot take yet, behind which
 * nothing of this caller can be (its later frames come through @rxq too,
 * which is no longer empty).  A frame refused then was already accepted
 * from the switch: it is dropped here and counted.  Returns true if the
 * worker has frames to look at.
 */
static bool direct_deliver(struct back_queue *q, struct back_mpsc_item *const *items,
			   unsigned int n, uint32_t max)
{
	unsigned int done = 0, lost = 0;

	while (done < n) {
		unsigned int m = n - done < BACK_BATCH ? n - done : BACK_BATCH;
		unsigned int k = back_rx_deliver(q, items + done, m, true, false);

		done += k;
		if (k < m)
			break;
	}
	for (unsigned int i = done; i < n; i++) {
		if (!enqueue(q, items[i], ((struct sw_pkt *)items[i]->ptr)->len, max)) {
			sw_pkt_put(items[i]->ptr);
			lost++;
		}
	}
	if (lost) {
		/* Taken from the switch: not rx_queue_full, which the switch counts as refused. */
		back_stat_add(&q->stats->rx_direct_full, lost);
		back_stat_add(&q->stats->rx_dropped, lost);
	}
	pthread_mutex_unlock(&q->rx_lock);
	return done < n;
}

static unsigned int back_rx_xmit(struct sw_port *port, struct sw_pkt **pkts, unsigned int n)
{
	struct back_vif *vif = port->priv;
	unsigned int nq = vif->nq, i, ndirect = 0;
	uint32_t wake = 0, direct = 0, tried = 0, max = vif->b->cfg.rx_queue_max_bytes,
		 filtered = 0;
	bool filter = atomic_load_explicit(&vif->mcast_filter, memory_order_relaxed);
	uint64_t now = back_now_ns();
	struct back_hash_snap snap;
	struct back_mpsc_item kept[SW_BATCH_MAX];
	uint8_t kept_q[SW_BATCH_MAX];

	_Static_assert(BACK_MAX_QUEUES_LIMIT <= 32, "queue bit masks");
	if (nq == 0 || n > SW_BATCH_MAX || atomic_load_explicit(&vif->broken, memory_order_relaxed))
		return 0;
	if (atomic_load_explicit(&vif->rx_stalled_queues, memory_order_relaxed)) {
		/* Carrier off (stall detection below): no queueing for a guest that takes nothing. */
		atomic_fetch_add_explicit(&vif->q[0]->stats->rx_carrier_off, n,
					  memory_order_relaxed);
		return 0;
	}
	back_hash_snapshot(&vif->hash, &snap);
	/*
	 * Pass 1, in input order: pick each frame's queue; keep it for direct
	 * delivery if that queue's ring is ours (see direct_begin()), else
	 * queue it for the worker.  The switch takes "the first k": stop at
	 * the first frame refused, the switch puts it and every frame after it.
	 */
	for (i = 0; i < n; i++) {
		struct sw_pkt *pkt = pkts[i];
		struct back_hash_result r;

		if (filter && pkt->hdr_len >= 6 && back_mcast_drop(vif, pkt->hdr)) {
			sw_pkt_put(pkt); /* taken: the guest asked not to get it */
			filtered++;
			continue;
		}
		back_hash_select(&vif->hash, &snap, pkt->hdr, pkt->hdr_len, nq, &r);
		unsigned int qi = r.queue;
		uint32_t bit = 1u << qi;
		struct back_queue *q = vif->q[qi];
		struct back_mpsc_item it;

		if (!(tried & bit)) {
			tried |= bit;
			if (direct_begin(q, direct == 0))
				direct |= bit;
		}
		/*
		 * Field by field into where the item goes (the direct array, or a
		 * local that enqueue() copies): building a direct item on the
		 * stack and copying it into the array read it back in 16-byte
		 * pieces its narrower stores could not be forwarded to.
		 */
		struct back_mpsc_item *dst = (direct & bit) ? &kept[ndirect] : &it;

		dst->ptr = pkt;
		dst->u64 = now;
		dst->aux = NULL;
		dst->hash = r.hash;
		dst->hash_type = r.type;
		if (direct & bit) {
			kept_q[ndirect++] = (uint8_t)qi;
			continue;
		}
		if (!enqueue(q, &it, pkt->len, max)) {
			atomic_fetch_add_explicit(&q->stats->rx_queue_full, n - i,
						  memory_order_relaxed);
			break;
		}
		wake |= bit;
	}
	if (filtered)
		atomic_fetch_add_explicit(&vif->q[0]->stats->rx_mcast_filtered, filtered,
					  memory_order_relaxed);
	/* Pass 2, per queue kept: deliver its frames in their order, then release the ring. */
	for (unsigned int j = 0; j < nq; j++) {
		struct back_mpsc_item *mine[SW_BATCH_MAX];
		unsigned int m = 0;

		if (!(direct & (1u << j)))
			continue;
		for (unsigned int k = 0; k < ndirect; k++)
			if (kept_q[k] == j)
				mine[m++] = &kept[k];
		if (direct_deliver(vif->q[j], mine, m, max))
			wake |= 1u << j;
	}
	/*
	 * Tell each worker that there is input its last round did not see
	 * (seq_cst, before reading whether it sleeps; see back_rx_has_input()).
	 */
	for (unsigned int j = 0; j < nq; j++) {
		if (wake & (1u << j)) {
			atomic_fetch_add_explicit(&vif->q[j]->rx_gen, 1, memory_order_seq_cst);
			back_worker_wake(vif->q[j]);
		}
	}
	return i;
}

const struct sw_port_ops back_rx_port_ops = {.xmit = back_rx_xmit};

bool back_rx_has_input(struct back_queue *q)
{
	/*
	 * Frames queued since our last round, blocked or not: that round did
	 * not arm the timers they need (drain timeout, copy-out of a held
	 * sender), so sleeping without another round could hold them, and
	 * their senders' pages, until the guest posts.  Their producer bumped
	 * rx_gen before reading sleeping: if we do not see the bump here,
	 * after setting sleeping, it sees us asleep and wakes us.
	 */
	if (atomic_load_explicit(&q->rx_gen, memory_order_seq_cst) != q->rx_gen_seen)
		return true;
	if (!atomic_load_explicit(&q->rx_stalled, memory_order_acquire)) {
		if (back_mpsc_peek(&q->rxq, 0) == NULL)
			return false;
		if (!atomic_load_explicit(&q->rx_blocked, memory_order_acquire))
			return true;
	}
	/*
	 * Blocked on the guest's buffers, or stalled (nothing queued, waiting
	 * to turn the carrier on): have they come?  The event that said so
	 * may have been consumed already (late EOI, or while another thread
	 * set the block), so the ring is the authority.
	 */
	return rx_wait_over(q);
}

/* The frame's bytes as pieces; returns the count, 0 if malformed. */
unsigned int back_rx_pieces(const struct back_mpsc_item *it, struct back_rx_piece *pc)
{
	const struct sw_pkt *pkt = it->ptr;
	const struct back_rx_held *held = it->aux;
	uint64_t sum = 0;
	unsigned int n = 0;

	if (held) {
		pc[0] = (struct back_rx_piece){held->data, held->len};
		return 1;
	}
	if (pkt->nfrags > SW_PKT_MAX_FRAGS)
		return 0;
	for (unsigned int i = 0; i < pkt->nfrags; i++)
		sum += pkt->frag[i].len;
	/* pkt.h: hdr + frags, unless frag 0 repeats the header (frags alone). */
	if (sum + pkt->hdr_len == pkt->len && pkt->hdr_len)
		pc[n++] = (struct back_rx_piece){pkt->hdr, pkt->hdr_len};
	else if (sum != pkt->len)
		return 0;
	for (unsigned int i = 0; i < pkt->nfrags; i++)
		if (pkt->frag[i].len)
			pc[n++] = (struct back_rx_piece){pkt->frag[i].base, pkt->frag[i].len};
	return n;
}

uint32_t back_rx_item_len(const struct back_mpsc_item *it)
{
	return it->aux ? ((const struct back_rx_held *)it->aux)->len
		       : ((struct sw_pkt *)it->ptr)->len;
}

/* Give an item's frame back (to its sender or the allocator); the caller uncharges its bytes. */
void back_rx_item_release(struct back_queue *q, struct back_mpsc_item *it)
{
	if (it->aux)
		hold_free(q, it->aux);
	if (it->ptr)
		sw_pkt_put(it->ptr);
	it->ptr = it->aux = NULL;
}

/*
 * Give the hold pool back while nothing is in it: made at the queue's
 * first copy-out and as large as the queue's bound, it is pvnetd's memory
 * that a guest taking no frames made it fill (docs/netback.md, Memory).
 * hold_alloc() makes it again when a copy-out needs it.  The caller holds
 * rx_lock.
 */
static void hold_release(struct back_queue *q)
{
	if (q->hold.base && q->hold.head == q->hold.tail)
		hold_free_pool(q);
}

/*
 * Drop the queued frames before position @end (UINT64_MAX: all), from the
 * head, counted as rx_dropped; the caller holds rx_lock.  Returns how many.
 */
static unsigned int rx_drop_head(struct back_queue *q, uint64_t end)
{
	struct back_mpsc_item *it;
	unsigned int n = 0;
	uint32_t bytes = 0;

	while (back_mpsc_head(&q->rxq) < end && (it = back_mpsc_peek(&q->rxq, 0)) != NULL) {
		bytes += back_rx_item_len(it);
		back_rx_item_release(q, it);
		back_mpsc_pop(&q->rxq);
		n++;
	}
	if (n)
		q->sw_sent = 0; /* the head went: any segments gone were its */
	back_stat_add(&q->stats->rx_dropped, n);
	atomic_fetch_sub_explicit(&q->rxq_bytes, bytes, memory_order_relaxed);
	return n;
}

/* Drop every queued frame, counted as rx_dropped; the caller holds rx_lock.  Returns how many. */
static unsigned int rx_purge(struct back_queue *q)
{
	return rx_drop_head(q, UINT64_MAX);
}

/*
 * The pool goes too, empty now, and its charge with it: a broken vif, or
 * a disconnecting one whose queue may yet be leaked (a stuck consumer of
 * its TX frames), must not keep its guest's budget.
 */
unsigned int back_rx_drop_all(struct back_queue *q)
{
	unsigned int n;

	if (!q->rxq.cells)
		return 0;
	pthread_mutex_lock(&q->rx_lock);
	n = rx_purge(q);
	hold_release(q);
	pthread_mutex_unlock(&q->rx_lock);
	return n;
}

/*
 * Copy a held frame out of its sender's memory and release the sender.
 * -ENOMEM: not now; -EDQUOT: the guest's budget has no room for the pool.
 */
static int rx_copy_out(struct back_queue *q, struct back_mpsc_item *it)
{
	struct sw_pkt *pkt = it->ptr;
	struct back_rx_piece pc[1 + SW_PKT_MAX_FRAGS];
	unsigned int n = back_rx_pieces(it, pc), off = 0;
	struct back_rx_held *held = NULL;
	int rc;

	if (n == 0)
		return 0; /* malformed: dropped when it reaches the head */
	rc = hold_alloc(q, pkt->len, &held);
	if (rc == -ENOMEM)
		back_stat_add(&q->stats->rx_nomem, 1);
	if (rc < 0)
		return rc;
	held->len = pkt->len;
	held->flags = pkt->flags;
	held->gso_type = pkt->gso_type;
	held->gso_size = pkt->gso_size;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(held->data + off, pc[i].base, pc[i].len);
		off += pc[i].len;
	}
	if (pkt->done == back_tx_done) {
		struct back_tx_pending *p = pkt->priv;

		atomic_store_explicit(&p->copied_out, true, memory_order_release);
	}
	it->aux = held;
	it->ptr = NULL;
	back_stat_add(&q->stats->rx_held_copied, 1); /* before the lender can see it done */
	sw_pkt_put(pkt);
	return 0;
}

/*
 * Step 2 for a queue without a pool whose guest's budget has no room for
 * one: the frames it would copy out (from the head up to rx_copy_to; with
 * no pool, none of the queue's frames is a copy) are dropped instead, from
 * the head, so that their senders are released all the same.  Counted as
 * rx_hold_budget and rx_dropped.  The caller holds rx_lock.
 */
static void rx_drop_unheld(struct back_queue *q)
{
	unsigned int n = rx_drop_head(q, q->rx_copy_to);

	if (n == 0)
		return;
	back_stat_add(&q->stats->rx_hold_budget, n);
	atomic_store_explicit(&q->vif->guest->hold_wanted, true, memory_order_relaxed);
	back_queue_warn(q,
			"guest %u's RX hold pools are at its budget (%llu KiB): %u frames dropped",
			q->vif->domid, (unsigned long long)(q->b->cfg.rx_guest_max_bytes >> 10), n);
}

/* See internal.h: an item queued after @now was read is new. */
uint64_t back_rx_age(const struct back_mpsc_item *it, uint64_t now)
{
	return now > it->u64 ? now - it->u64 : 0;
}

/*
 * Step 2's search for one kind of frame, from *@scan on (@ours: frames
 * sent by a netback TX queue; else any other port's, an uplink's): the
 * position just past the last frame of that kind that has waited @hold
 * ns, or 0 if none has.  Frames of the other kind are skipped (the other
 * search's).  Frames queue in arrival order, so the first of the kind
 * that is not due ends the search, and its deadline lowers *@due_ns; each
 * search passes a frame once.
 */
static uint64_t rx_due_end(struct back_queue *q, uint64_t *scan, bool ours, uint64_t hold,
			   uint64_t now, uint64_t *due_ns)
{
	uint64_t head = back_mpsc_head(&q->rxq), end = 0;
	struct back_mpsc_item *it;

	if (*scan < head)
		*scan = head;
	while ((it = back_mpsc_peek(&q->rxq, *scan - head)) != NULL) {
		struct sw_pkt *pkt = it->ptr;

		if (pkt && (pkt->done == back_tx_done) == ours) {
			if (back_rx_age(it, now) < hold) {
				if (it->u64 + hold < *due_ns)
					*due_ns = it->u64 + hold;
				break;
			}
			end = *scan + 1;
		}
		(*scan)++;
	}
	return end;
}

/*
 * Where the copy-out must reach for the frames of TX queues being torn
 * down (their @leaving set): just past the last such frame queued, which
 * takes every borrowed frame before it along (the pool is a FIFO); 0 if
 * none.  The sender's frame is in flight, so its queue is still there.
 */
static uint64_t rx_leaving_end(struct back_queue *q)
{
	uint64_t head = back_mpsc_head(&q->rxq), i = q->rx_copied > head ? q->rx_copied : head;
	uint64_t end = 0;
	struct back_mpsc_item *it;

	for (; (it = back_mpsc_peek(&q->rxq, i - head)) != NULL; i++) {
		struct sw_pkt *pkt = it->ptr;

		if (pkt && pkt->done == back_tx_done &&
		    atomic_load_explicit(&back_tx_pending_of(pkt)->q->leaving,
					 memory_order_relaxed))
			end = i + 1;
	}
	return end;
}

/*
 * Steps 1 and 2: expire the head, copy out frames held too long.  Returns
 * true if it changed anything; *due_ns receives the next deadline.
 *
 * Copies go to the hold pool, a FIFO that must get them in queue order:
 * so every borrowed frame before a due one is copied out with it (a vif
 * frame behind a due uplink frame goes early, which only frees its sender
 * sooner), from rx_copied on, up to rx_copy_to, which stays set if a copy
 * fails for now.
 */
static bool rx_maintain(struct back_queue *q, uint64_t now, uint64_t *due_ns)
{
	const struct back_config *cfg = &q->b->cfg;
	uint64_t timeout = q->vif->rx_timeout_ns, head, end;
	struct back_mpsc_item *it;
	uint32_t copied = 0;
	bool did = false;
	int rc;

	*due_ns = UINT64_MAX;
	while ((it = back_mpsc_peek(&q->rxq, 0)) != NULL && back_rx_age(it, now) >= timeout) {
		atomic_fetch_sub_explicit(&q->rxq_bytes, back_rx_item_len(it),
					  memory_order_relaxed);
		back_rx_item_release(q, it);
		back_mpsc_pop(&q->rxq);
		q->sw_sent = 0; /* the head went: any segments gone were its */
		back_stat_add(&q->stats->rx_expired, 1);
		back_stat_add(&q->stats->rx_dropped, 1);
		did = true;
	}
	/*
	 * All of it waited out the drain timeout: the pool goes back as at a
	 * stall (not for a frontend we poll, whose timeout is 30 ms: its pool
	 * would be made and freed over and over).
	 */
	if (!it && did && q->vif->fe.rx_notify)
		hold_release(q);
	if (it)
		*due_ns = it->u64 + timeout;
	end = rx_due_end(q, &q->rx_scan, true, (uint64_t)cfg->tx_hold_max_us * 1000, now, due_ns);
	/* A sender being torn down waits for its frames: they go now (xenbus.c). */
	if (atomic_load_explicit(&q->b->rx_release_now, memory_order_relaxed)) {
		uint64_t leaving = rx_leaving_end(q);

		if (leaving > end)
			end = leaving;
	}
	if (end > q->rx_copy_to)
		q->rx_copy_to = end;
	end = rx_due_end(q, &q->rx_scan_port, false, (uint64_t)cfg->port_hold_max_us * 1000, now,
			 due_ns);
	if (end > q->rx_copy_to)
		q->rx_copy_to = end;
	head = back_mpsc_head(&q->rxq);
	if (q->rx_copied < head)
		q->rx_copied = head;
	while (q->rx_copied < q->rx_copy_to &&
	       (it = back_mpsc_peek(&q->rxq, q->rx_copied - head)) != NULL) {
		if (it->ptr) {
			/*
			 * Enough for one hold of rx_lock, which senders delivering
			 * straight into this ring wait for: the next round, at
			 * once, goes on.
			 */
			if (copied >= RX_COPY_OUT_MAX_BYTES) {
				*due_ns = now;
				break;
			}
			rc = rx_copy_out(q, it);
			if (rc == -EDQUOT) {
				rx_drop_unheld(q);
				did = true;
				break;
			}
			if (rc < 0)
				break; /* the pool is full for now: the next round goes on */
			copied += back_rx_item_len(it);
			did = true;
		}
		q->rx_copied++;
	}
	return did;
}

/*
 * Stall detection (Linux netback's, with its XSA-392 fix): a queue whose
 * head frame has waited rx_stall_timeout_ms for enough buffers, however
 * many it has, is stalled: what it holds is dropped and the vif's carrier
 * goes off, so that frames for a guest that takes none are refused at once
 * instead of each waiting out the drain timeout (and being copied out of
 * its sender's pages meanwhile).  The ring's req_event still asks the
 * guest to notify once it has posted enough for that head frame
 * (@rx_wait_for); then the queue is ready, and the carrier comes back on
 * when no queue of the vif is stalled.  The caller holds rx_lock.
 */
static void rx_stall(struct back_queue *q)
{
	struct back_vif *vif = q->vif;
	unsigned int n = rx_purge(q);

	back_stat_add(&q->stats->rx_stall_flushed, n);
	back_stat_add(&q->stats->rx_stalls, 1);
	hold_release(q); /* the guest takes nothing: what it cost goes back until it does */
	q->rx_blocked_since = 0;
	atomic_store_explicit(&q->rx_stalled, true, memory_order_seq_cst);
	if (atomic_fetch_add_explicit(&vif->rx_stalled_queues, 1, memory_order_relaxed) == 0) {
		warn("vif%u.%u: guest RX stalled: queue %u had too few buffers for %llu ms; "
		     "carrier off",
		     vif->domid, vif->devid, q->id,
		     (unsigned long long)(vif->rx_stall_ns / 1000000));
		back_ctl_kick(q->b); /* the "carrier" key */
	}
}

/* A stalled queue whose guest has posted enough is ready again; the caller holds rx_lock. */
static bool rx_unstall(struct back_queue *q)
{
	struct back_vif *vif = q->vif;
	int avail = back_rx_avail(q, true);

	if (avail < 0 || avail < (int)(atomic_load_explicit(&q->rx_wait_for, memory_order_relaxed) -
				       q->rx.req_cons))
		return false;
	atomic_store_explicit(&q->rx_stalled, false, memory_order_seq_cst);
	if (atomic_fetch_sub_explicit(&vif->rx_stalled_queues, 1, memory_order_relaxed) == 1) {
		info("vif%u.%u: guest RX ready again (queue %u); carrier on", vif->domid,
		     vif->devid, q->id);
		back_ctl_kick(q->b);
	}
	return true;
}

bool back_rx_poll(struct back_queue *q, uint64_t now, int *timeout_ms)
{
	unsigned int n = 0;
	bool moved = false;
	uint64_t due;
	bool did;

	/* Everything queued before this is seen below (back_rx_has_input()). */
	q->rx_gen_seen = atomic_load_explicit(&q->rx_gen, memory_order_seq_cst);
	/*
	 * Wait for a thread delivering straight into our ring (up to
	 * RX_DRAIN_BATCHES batches queued before, then its own): giving up
	 * instead could lose the guest's event that woke us.
	 */
	pthread_mutex_lock(&q->rx_lock);
	did = rx_maintain(q, now, &due);
	if (atomic_load_explicit(&q->rx_stalled, memory_order_relaxed) && !rx_unstall(q)) {
		/*
		 * What an xmit() racing the stall queued before it saw the
		 * carrier off; rx_maintain() above may have copied it out, into
		 * a pool made again for it.
		 */
		n = rx_purge(q);
		hold_release(q);
		back_stat_add(&q->stats->rx_stall_flushed, n);
		pthread_mutex_unlock(&q->rx_lock);
		return did || n;
	}
	if (!back_mpsc_peek(&q->rxq, 0)) {
		atomic_store_explicit(&q->rx_blocked, false, memory_order_relaxed);
		q->rx_blocked_since = 0;
		pthread_mutex_unlock(&q->rx_lock);
		return did;
	}
	deliver_head(q, false, &n, &moved);
	if (!atomic_load_explicit(&q->rx_blocked, memory_order_relaxed)) {
		q->rx_blocked_since = 0;
	} else if (moved || !q->rx_blocked_since) {
		q->rx_blocked_since = now; /* the guest took frames: its wait starts again */
	} else if (q->vif->rx_stall_ns && now - q->rx_blocked_since >= q->vif->rx_stall_ns) {
		rx_stall(q);
		did = true;
	}
	if (q->rx_blocked_since && q->vif->rx_stall_ns &&
	    q->rx_blocked_since + q->vif->rx_stall_ns < due)
		due = q->rx_blocked_since + q->vif->rx_stall_ns;
	if (due != UINT64_MAX && back_mpsc_peek(&q->rxq, 0)) {
		uint64_t ms = due > now ? (due - now + 999999) / 1000000 : 0;

		/* a second at most: a timer, not a promise; re-armed every round */
		*timeout_ms = ms > 1000 ? 1000 : (int)ms;
	}
	/*
	 * A frontend without feature-rx-notify never kicks us: poll it, every
	 * millisecond at first, then every quarter of the time its head frame
	 * has waited, up to RX_NONOTIFY_POLL_MAX_MS (a frame arriving for it
	 * wakes us anyway, as the only wake-up Linux's netback has for such
	 * a guest besides the head's expiry).  So a guest that takes nothing
	 * costs its worker ~100 wake-ups a second, not 1000, and one that
	 * posts buffers is seen within a quarter of its wait.
	 */
	if (atomic_load_explicit(&q->rx_blocked, memory_order_relaxed) && !q->vif->fe.rx_notify) {
		uint64_t waited = q->rx_blocked_since && now > q->rx_blocked_since
				      ? now - q->rx_blocked_since
				      : 0;
		int poll = (int)(waited / 4 / 1000000);

		if (poll < 1)
			poll = 1;
		if (poll > RX_NONOTIFY_POLL_MAX_MS)
			poll = RX_NONOTIFY_POLL_MAX_MS;
		if (*timeout_ms < 0 || *timeout_ms > poll)
			*timeout_ms = poll;
	}
	pthread_mutex_unlock(&q->rx_lock);
	return did || moved;
}
