// SPDX-License-Identifier: MIT
// worker.c - one event-driven thread per vif queue: TX, completions, RX, sleep and wake

/*
 * Theory of Operation
 *
 * Each connected queue has one worker thread that owns its rings, its grant
 * handle and its private state.  A round does, in order:
 *
 *   1. completions: TX packets whose last consumer finished (tx.c);
 *   2. TX: the guest's new requests, one batch (tx.c);
 *   3. RX: frames queued for the guest, into the buffers it posted (rx.c, rx_deliver.c).
 *
 *   4. queue 0 only: the control ring, at most 32 requests (ctrl.c).
 *
 * Rounds repeat while any of them made progress; no syscall is made per
 * packet (grant operations are batched per round, notifications are
 * suppressed by the ring's event indices).
 *
 * Adaptive waiting (cfg.poll_us): after the last productive round the
 * worker keeps running rounds for a while before it goes to sleep,
 * calling sched_yield() after each empty one.  While it polls, the ring's
 * req_event is left behind req_cons, so a guest streaming into the ring
 * sends no events at all and we take no wake-ups: the window turns a
 * syscall pair per burst into a few cheap index reads.  The yield bounds
 * the cost when there are more busy queues than cores: a polling worker
 * gives its core to any runnable worker at once, so polling never steals
 * time from a queue with work (the collapse of seed 1 came from exactly
 * such contention).  Counted as poll_rounds.
 *
 * How long: at most poll_us, and at most the polling the worker has
 * earned by working.  Each productive round earns BACK_POLL_EARN_PERMILLE /
 * 1000 of its own duration (up to poll_us in store); polling spends it.
 * A busy queue (a stream, work arriving faster than it is done) earns
 * more than it can spend and polls the whole window; a queue that works
 * a few microseconds per frame with long gaps between (a paced TCP
 * sender: one 64 KiB frame every 100 us or so) polls only briefly and
 * sleeps, instead of spending most of a core on sched_yield().  On a
 * machine with fewer cores than busy threads that core is what the other
 * threads of the path were waiting for: a spinning thread looks runnable,
 * so the scheduler does not move a waiting one onto its core.
 *
 * Going to sleep (the ring.h discipline, plus late EOI):
 *   - consume the event channel's pending event only now, after the work
 *     it announced has been drained (late EOI: a guest that notifies in a
 *     loop gets one wake-up per round of ours, never more, and each one that
 *     brings no work is counted as evtchn_spurious);
 *   - set sleeping (seq_cst), then RING_FINAL_CHECK_FOR_REQUESTS (req_event
 *     = req_cons + 1, full fence, re-read req_prod), then look at the
 *     completion and RX input rings, and for an RX queue blocked on the
 *     guest's buffers at the guest's RX req_prod (the event announcing
 *     them may be the one just consumed): any work found cancels the sleep;
 *   - poll() the event channel fd(s) and wake_fd, with a timeout when RX
 *     frames wait (drain timeout, copy-out deadline).
 * Other threads that queue work (xmit, done()) publish it with a seq_cst
 * store and then read sleeping (seq_cst): either they see the worker asleep
 * and write wake_fd once (the exchange makes it once), or the worker sees
 * their item before it sleeps.  For RX input "sees" means "sees that its
 * last round predates it" (xmit bumps rx_gen): a frame queued blocked on
 * the guest's buffers is no work until the guest posts, but it needs the
 * timers a round arms (drain timeout, copy-out of a held sender), and
 * without that round the worker would sleep with no timeout at all.
 *
 * A worker that finds the guest misbehaving marks the vif broken (once,
 * with a reason) and wakes the loop thread; from then on it only drops the
 * frames queued for its guest (so that it pins no other vif's memory) and
 * waits to be stopped.  Ring access uses __atomic builtins on the index fields with
 * the orders ring.h's fences give, so ThreadSanitizer sees them.
 */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "back/internal.h"

_Thread_local struct back_queue *back_self;

uint64_t back_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void back_notify(struct back_queue *q, evtchn_port_t port)
{
	hv_evtchn_notify(q->b->hv, q->b->cfg.backend_id, port);
	/* TX notifies from the worker, RX from whoever holds rx_lock */
	atomic_fetch_add_explicit(&q->stats->notifications, 1, memory_order_relaxed);
}

void back_worker_wake(struct back_queue *q)
{
	uint64_t one = 1;

	if (atomic_load_explicit(&q->sleeping, memory_order_seq_cst) &&
	    atomic_exchange_explicit(&q->sleeping, false, memory_order_seq_cst)) {
		if (write(q->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			warn("back: waking a worker: %s", strerror(errno));
	}
}

void back_queue_fatal(struct back_queue *q, const char *fmt, ...)
{
	struct back_vif *vif = q->vif;
	int expect = 0;
	va_list ap;

	if (!atomic_compare_exchange_strong(&vif->broken, &expect, 1))
		return; /* another queue of this vif got there first */
	va_start(ap, fmt);
	vsnprintf(vif->broken_reason, sizeof(vif->broken_reason), fmt, ap);
	va_end(ap);
	atomic_store_explicit(&vif->broken, 2, memory_order_release);
	back_ctl_kick(q->b);
}

void back_ctl_kick(struct back *b)
{
	uint64_t one = 1;

	/* An eventfd only fails to count past 2^64 - 2: the loop reads it long before. */
	if (write(b->ctl_fd, &one, sizeof(one)) < 0)
		err("back: cannot wake the loop thread: %s", strerror(errno));
}

/*
 * Late EOI: consume the pending events of the channels that fired.  A
 * frontend that sent fds over a channel is hostile (a kernel before 6.16
 * lets it): the vif is disabled, and until the control thread stops this
 * worker the channel, which stays readable with them, is no longer polled.
 */
static bool eoi(struct back_queue *q, struct pollfd *pfd, const evtchn_port_t *port,
		unsigned int npfd)
{
	bool any = false;
	int rc;

	for (unsigned int i = 1; i < npfd; i++) {
		if (!(pfd[i].revents & POLLIN))
			continue;
		rc = hv_evtchn_pending(q->b->hv, q->b->cfg.backend_id, port[i]);
		if (rc > 0) {
			any = true;
		} else if (rc == -EBADMSG) {
			back_queue_fatal(q, "event channel %u: the frontend sent file descriptors",
					 port[i]);
			pfd[i].fd = -1;
		}
	}
	return any;
}

static bool has_work(struct back_queue *q, bool ctrl)
{
	return q->ndone_local || back_mpsc_peek(&q->compl, 0) != NULL || back_tx_has_work(q) ||
	       back_rx_has_input(q) || (ctrl && back_ctrl_has_work(q));
}

/* One round: completions, TX, RX (and the control ring on queue 0). */
static bool round_once(struct back_queue *q, bool ctrl, int *timeout)
{
	bool did = false;
	uint64_t now;

	*timeout = -1;
	if (atomic_load_explicit(&q->vif->broken, memory_order_relaxed) != 0) {
		/* broken: never pin other vifs' frames while we wait to be stopped */
		back_rx_drop_all(q);
		return false;
	}
	did |= back_tx_complete(q);
	did |= back_tx_poll(q);
	now = back_now_ns();
	did |= back_rx_poll(q, now, timeout);
	back_tx_credit_timeout(q, now, timeout);
	if (ctrl)
		did |= back_ctrl_poll(q);
	return did;
}

uint64_t back_poll_earn(uint64_t earned, uint64_t idle_since, uint64_t t0, uint64_t t1,
			uint64_t window)
{
	uint64_t spent = idle_since ? t0 - idle_since : 0;

	earned = earned > spent ? earned - spent : 0;
	earned += (t1 - t0) * BACK_POLL_EARN_PERMILLE / 1000;
	return earned < window ? earned : window;
}

static void *worker_main(void *arg)
{
	struct back_queue *q = arg;
	struct pollfd pfd[4];
	evtchn_port_t port[4] = {0};
	unsigned int npfd = 0;
	bool ctrl = q->id == 0 && q->vif->ctrl.mapped;
	bool evtchn_woke = false;
	uint64_t window = (uint64_t)q->b->cfg.poll_us * 1000, idle_since = 0, earned = 0;
	uint64_t drain;
	int timeout;

	back_self = q;
	pfd[npfd++] = (struct pollfd){.fd = q->wake_fd, .events = POLLIN};
	port[npfd] = q->port_tx;
	pfd[npfd++] = (struct pollfd){.fd = q->fd_tx, .events = POLLIN};
	if (q->split) {
		port[npfd] = q->port_rx;
		pfd[npfd++] = (struct pollfd){.fd = q->fd_rx, .events = POLLIN};
	}
	if (ctrl) {
		port[npfd] = q->vif->ctrl.port;
		pfd[npfd++] = (struct pollfd){.fd = q->vif->ctrl.fd, .events = POLLIN};
	}

	while (!atomic_load_explicit(&q->stop, memory_order_acquire)) {
		uint64_t t0 = window ? back_now_ns() : 0;

		if (round_once(q, ctrl, &timeout)) {
			if (window)
				earned =
				    back_poll_earn(earned, idle_since, t0, back_now_ns(), window);
			evtchn_woke = false;
			idle_since = 0;
			continue;
		}
		/*
		 * Adaptive waiting: right after productive rounds, keep looking
		 * for as long as the work earned (poll_us at most), giving the
		 * CPU away after each empty round so that more busy queues than
		 * cores still share them fairly.
		 */
		if (window && atomic_load_explicit(&q->vif->broken, memory_order_relaxed) == 0) {
			if (idle_since == 0)
				idle_since = t0;
			if (t0 - idle_since < earned) {
				back_stat_add(&q->stats->poll_rounds, 1);
				sched_yield();
				continue;
			}
			earned = 0; /* spent: the worker sleeps */
		}
		/* Nothing to do: acknowledge the events now (late EOI). */
		if (eoi(q, pfd, port, npfd) && evtchn_woke)
			back_stat_add(&q->stats->evtchn_spurious, 1);
		evtchn_woke = false;
		for (unsigned int i = 0; i < npfd; i++)
			pfd[i].revents = 0;

		atomic_store_explicit(&q->sleeping, true, memory_order_seq_cst);
		if (atomic_load_explicit(&q->vif->broken, memory_order_relaxed) == 0 &&
		    has_work(q, ctrl)) {
			atomic_store_explicit(&q->sleeping, false, memory_order_relaxed);
			continue;
		}
		if (atomic_load_explicit(&q->stop, memory_order_acquire))
			break;
		if (poll(pfd, npfd, timeout) < 0 && errno != EINTR)
			err("vif%u.%u q%u: poll: %s", q->vif->domid, q->vif->devid, q->id,
			    strerror(errno));
		atomic_store_explicit(&q->sleeping, false, memory_order_seq_cst);
		back_stat_add(&q->stats->wakeups, 1);
		idle_since = 0;
		if (pfd[0].revents & POLLIN) {
			if (read(q->wake_fd, &drain, sizeof(drain)) < 0 && errno != EAGAIN)
				warn("back: wake fd: %s", strerror(errno));
		}
		for (unsigned int i = 1; i < npfd; i++)
			if (pfd[i].revents & POLLIN)
				evtchn_woke = true;
	}
	back_self = NULL;
	return NULL;
}

/*
 * cfg.no_workers: the caller is the worker.  back_self is set for the
 * round, as on a worker thread: a frame this round delivers itself
 * completes on the private list (tx.c, back_tx_done()).
 */
bool back_worker_round(struct back_queue *q)
{
	struct back_queue *self = back_self;
	bool ctrl = q->id == 0 && q->vif->ctrl.mapped;
	int timeout;
	bool did;

	if (q->running)
		return false;
	back_self = q;
	did = round_once(q, ctrl, &timeout);
	if (!did && atomic_load_explicit(&q->vif->broken, memory_order_relaxed) == 0)
		did = has_work(q, ctrl);
	back_self = self;
	return did;
}

int back_worker_start(struct back_queue *q)
{
	char name[16];
	int rc;

	if (q->b->cfg.no_workers)
		return 0; /* the caller runs rounds (back_worker_round()) */
	atomic_store(&q->stop, false);
	rc = pthread_create(&q->thread, NULL, worker_main, q);
	if (rc)
		return -rc;
	q->running = true;
	/*
	 * Named as Linux names its netback threads, so that top -H, perf and
	 * /proc/PID/task say which vif queue a thread serves (a longer name is
	 * cut at 15 characters; a failure to name costs nothing else).
	 */
	snprintf(name, sizeof(name), "vif%u.%u-q%u", q->vif->domid, q->vif->devid, q->id);
	(void)pthread_setname_np(q->thread, name);
	return 0;
}

void back_worker_stop(struct back_queue *q)
{
	uint64_t one = 1;

	if (!q->running)
		return;
	atomic_store_explicit(&q->stop, true, memory_order_release);
	if (write(q->wake_fd, &one, sizeof(one)) < 0)
		err("back: cannot wake worker to stop it: %s", strerror(errno));
	pthread_join(q->thread, NULL);
	q->running = false;
}
