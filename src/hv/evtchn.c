// SPDX-License-Identifier: MIT
// evtchn.c - interdomain event channels: Xen's port life cycle over socketpairs

/*
 * Theory of Operation
 *
 * State.  Each domain slot has max_evtchns ports (dom0's: dom0_evtchns),
 * allocated once and kept until hv_destroy() (type-stable, see
 * hv_internal.h); port 0 is reserved as on Xen.  A port is FREE, UNBOUND
 * (allocated for one remote domain to bind) or INTERDOMAIN (bound to a
 * peer port).  Per port: a pending bit and a mask bit in one atomic word,
 * a signal (struct hv_evtchn_sig) whose wait end is readable while an
 * event is pending, and counters.  A channel is charged to the domain
 * that allocated it until its last port closes (the port's owner), and a
 * domain allocates no more than its ports less one.
 *
 * Signals are a SOCK_DGRAM socketpair each, not eventfds, because a guest
 * process holds some of their fds (hv_evtchn_guest_fds()), and an fd
 * passed over SCM_RIGHTS shares its open file description, O_NONBLOCK
 * included: a guest that cleared O_NONBLOCK on an eventfd and filled its
 * counter (or drained it) made pvnetd's next write (or read) block for
 * ever, with hv->lock held when it was the raise of a bind.  On a socket
 * every call here says MSG_DONTWAIT itself, whatever the description's
 * flags, and MSG_NOSIGNAL, whatever the guest shut down.  A wait end is
 * shut down for writing, so nothing but its kick end can make it
 * readable; the sender's socket buffer bounds what a guest's kick storm
 * queues on it (some hundreds of datagrams), so the storm costs a bounded
 * drain.  What a guest can do to the sockets it holds (shut them down,
 * reconnect a kick end to a socket of its own) only loses its own events.
 * Unlike an eventfd a socket can carry fds: hv_sig_open(),
 * hv_sig_take_checked() and hv_sig_close() keep a guest's files out of
 * our threads.
 *
 * Signals belong to the channel, not to the port.  alloc_unbound creates
 * two: the port's own, and a spare that the binder's port will own.  When
 * one end of a bound channel closes, its signal goes back to the survivor
 * as the spare for the next binder.  So the fds a guest process got from
 * hv_evtchn_guest_fds() (wait on its own, kick the other) stay valid
 * across binds and closes of the other end; the fds are closed only when
 * the last port of the channel closes.
 *
 * Delivery.  notify sets the peer's pending bit and signals the peer only
 * on the 0->1 edge of pending and only if not masked; an event storm costs
 * one atomic per notify, not a syscall.  pending() drains the wait end (a
 * cross-process guest kicks it directly, so that is where its kicks are
 * seen; any number of them reads as one event) and clears the bit.
 * unmask re-signals an event that arrived while masked.  A port whose
 * owner is another process ("external") cannot be seen to consume, so
 * every notify to it signals it.
 *
 * Threads.  The control plane (alloc, bind, close, guest_fds, domain
 * destroy) holds hv->lock.  notify, pending, mask, unmask, fd are
 * lock-free: they look the domain up in its type-stable slot, and notify
 * brackets its use of the peer pointer with the sending port's inflight
 * count.  Whoever unbinds a channel first clears the peer pointer and then
 * waits for the inflight count of the port(s) that pointed at it to reach 0
 * (a few instructions: a notify never blocks), so no notify can still
 * signal a socket that has moved or been closed.  The sequentially
 * consistent ordering of those two atomics is what makes this safe (the
 * store of the peer pointer versus the load of inflight, Dekker style).
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "hv/evtchn.h"
#include "hv/hv_internal.h"

static void hv_evtchn_port_reset(struct hv_evtchn_port *p)
{
	atomic_store(&p->state, HV_ECS_FREE);
	atomic_store(&p->flags, 0);
	atomic_store(&p->external, false);
	atomic_store(&p->peer, NULL);
	atomic_store(&p->sent, 0);
	atomic_store(&p->delivered, 0);
	atomic_store(&p->spurious, 0);
	p->remote_dom = 0;
	p->remote_port = 0;
	p->sig = p->spare = HV_EVTCHN_SIG_NONE;
	p->owner = NULL;
	p->owner_gen = 0;
}

/* Linux 6.16's option; Debian 12's headers predate it. */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

bool hv_evtchn_test_rights;

/*
 * Does SO_PASSRIGHTS work here?  Asked once, by trying: the option's
 * number is the generic one, which a kernel before 6.16 refuses, and an
 * architecture that numbers its options apart (alpha, parisc, sparc)
 * might take for another option; so only a refused fd counts as yes.
 */
static bool hv_passrights;
static pthread_once_t hv_passrights_once = PTHREAD_ONCE_INIT;

static void hv_passrights_probe(void)
{
	static const int no = 0;
	char one = 1;
	struct iovec iov = {.iov_base = &one, .iov_len = 1};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int sv[2], pfd[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	if (pipe2(pfd, O_CLOEXEC) == 0) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pfd[0], sizeof(int));
		hv_passrights =
		    setsockopt(sv[0], SOL_SOCKET, SO_PASSRIGHTS, &no, sizeof(no)) == 0 &&
		    sendmsg(sv[1], &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPERM;
		close(pfd[0]);
		close(pfd[1]);
	}
	close(sv[0]);
	close(sv[1]);
}

/*
 * A new signal: both ends non-blocking; the wait end can neither send nor
 * take fds (SCM_RIGHTS: a datagram holding the last reference to a file
 * a guest chose would release it, maybe slowly, in whichever thread of
 * ours drains or closes the socket); nothing can be sent to the kick end.
 * A kernel before 6.16 lacks SO_PASSRIGHTS: there such a datagram is never
 * received (hv_sig_take_checked()) and the deferred close below releases
 * it.
 */
static int hv_sig_open(struct hv_evtchn_sig *sig)
{
	static const int no = 0;
	bool rights = true;
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if (shutdown(sv[0], SHUT_WR) < 0 || shutdown(sv[1], SHUT_RD) < 0) {
		rc = -errno;
		close(sv[0]);
		close(sv[1]);
		return rc;
	}
	pthread_once(&hv_passrights_once, hv_passrights_probe);
	if (hv_passrights && !hv_evtchn_test_rights)
		rights = setsockopt(sv[0], SOL_SOCKET, SO_PASSRIGHTS, &no, sizeof(no)) < 0;
	*sig = (struct hv_evtchn_sig){.wait = sv[0], .kick = sv[1], .rights = rights};
	return 0;
}

/*
 * Closing later, on a thread of its own.  A guest holds its own port's
 * wait end and may allow fds on it again, send one through its self kick
 * and drop its copies: our close is then the last, and releases that
 * file, which a guest can make take as long as it likes (a TCP socket
 * lingering on unsent data).  So the signals of a port whose fds went to
 * a guest are closed by this thread, never under hv->lock or on a worker;
 * should it be stuck, closes wait in its pipe, and past that they are
 * made inline.
 */
static int hv_closer_fd[2] = {-1, -1};
static pthread_once_t hv_closer_once = PTHREAD_ONCE_INIT;

static void *hv_closer_main(void *arg)
{
	int fd;

	(void)arg;
	while (read(hv_closer_fd[0], &fd, sizeof(fd)) == sizeof(fd))
		close(fd);
	return NULL;
}

static void hv_closer_start(void)
{
	pthread_t t;

	if (pipe2(hv_closer_fd, O_CLOEXEC) < 0)
		return;
	/* The write end only: ours alone, and never to block when the thread is stuck. */
	if (fcntl(hv_closer_fd[1], F_SETFL, O_NONBLOCK) < 0 ||
	    pthread_create(&t, NULL, hv_closer_main, NULL) != 0) {
		close(hv_closer_fd[0]);
		close(hv_closer_fd[1]);
		hv_closer_fd[0] = hv_closer_fd[1] = -1;
		return;
	}
	pthread_detach(t);
}

static void hv_close_later(int fd)
{
	pthread_once(&hv_closer_once, hv_closer_start);
	if (hv_closer_fd[1] < 0 || write(hv_closer_fd[1], &fd, sizeof(fd)) != sizeof(fd))
		close(fd);
}

/* Close @sig: later (above) if a guest has had its fds. */
static void hv_sig_close(struct hv_evtchn_sig *sig)
{
	int fds[2] = {sig->wait, sig->kick};

	for (unsigned int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		if (sig->guest)
			hv_close_later(fds[i]);
		else
			close(fds[i]);
	}
	*sig = HV_EVTCHN_SIG_NONE;
}

/*
 * Queue one datagram on @sig's wait end; false if none was queued (a full
 * queue: an event is pending anyway; or a socket its guest shut down).
 */
static bool hv_sig_kick(const struct hv_evtchn_sig *sig)
{
	return hv_evtchn_sig_send(sig->kick) == 1;
}

/* Most fds one datagram carries (Linux's SCM_MAX_FD). */
#define HV_SCM_MAX_FD 253

/* Hand the fds @m received to the closing thread; true if there were any. */
static bool hv_close_rights(struct msghdr *m)
{
	bool any = false;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			hv_close_later(fd);
		}
		any = true;
	}
	return any;
}

/*
 * Most datagrams one hv_sig_take_checked() takes: as many as
 * hv_evtchn_sig_take() does (64 a call, 16 calls), more than a socket
 * buffer of the default size holds (a kick storm queues some hundreds),
 * so that one pending() consumes the kicks queued before it, as on a
 * newer kernel.  A guest that raises its kick end's send buffer can queue
 * more, on either path: the next pending() takes them (a spurious
 * event).  Two system calls a datagram here, against one the guest made
 * to send it: about 2 ms for a full 1024 on this machine, bounded, with
 * no lock held.
 */
#define HV_SIG_CHECKED_MAX 1024

/*
 * Take what is queued on a wait end that can receive fds, one datagram at
 * a time, each looked at before it is received: receiving a datagram that
 * carries fds would release the files in this thread, so such a datagram
 * stays queued (its socket is closed off our threads, hv_sig_close()) and
 * the answer is -EBADMSG.  A peek takes references of its own to the
 * files and drops them at once (MSG_CTRUNC: no room for them), never the
 * last ones.  Only this thread receives from the socket, so what it
 * receives is what it looked at.
 */
static int hv_sig_take_checked(int fd)
{
	union {
		char b[CMSG_SPACE(HV_SCM_MAX_FD * sizeof(int))];
		struct cmsghdr align;
	} cmsg;
	char b;
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	struct msghdr m;
	int n = 0;

	while (n < HV_SIG_CHECKED_MAX) {
		m = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
		if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_PEEK) < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || n ? n : -errno;
		}
		if (m.msg_flags & MSG_CTRUNC)
			return -EBADMSG;
		/*
		 * The peek saw no fds, unless the kernel could not copy their list
		 * (ENOMEM: no MSG_CTRUNC then).  So the receive has room for as
		 * many as a datagram carries, and any it gets go to the closing
		 * thread.
		 */
		m = (struct msghdr){.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cmsg.b,
				    .msg_controllen = sizeof(cmsg.b)};
		if (recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0) {
			if (errno == EINTR)
				continue;
			return n ? n : -errno;
		}
		if (hv_close_rights(&m))
			return -EBADMSG;
		n++;
	}
	return n;
}

/* Take what is queued on @sig's wait end: > 0 if there was something, or -EBADMSG. */
static int hv_sig_drain(const struct hv_evtchn_sig *sig)
{
	if (sig->rights)
		return hv_sig_take_checked(sig->wait);
	return hv_evtchn_sig_take(sig->wait);
}

int hv_evtchn_domain_init(struct hv *hv, struct hv_domain *d)
{
	if (!d->ports) {
		uint32_t n = hv->cfg.max_evtchns;

		if (d == &hv->doms[0] && hv->cfg.dom0_evtchns)
			n = hv->cfg.dom0_evtchns;
		d->ports = calloc(n, sizeof(*d->ports));
		if (!d->ports)
			return -ENOMEM;
		d->nr_ports = n;
	}
	for (uint32_t i = 0; i < d->nr_ports; i++)
		hv_evtchn_port_reset(&d->ports[i]);
	d->evtchn_gen++;
	d->nr_owned = 0;
	atomic_store(&d->ports[0].state, HV_ECS_RESERVED);
	return 0;
}

/* Wait until no notify is reading @p's peer pointer (bounded: notify never blocks). */
static void hv_evtchn_quiesce(struct hv_evtchn_port *p)
{
	while (atomic_load(&p->inflight))
		sched_yield();
}

/* Set @q pending and signal its eventfd if that is an edge to deliver. */
void (*hv_evtchn_eoi_hook)(void);

static void hv_evtchn_raise(struct hv_evtchn_port *q)
{
	uint32_t old = atomic_fetch_or(&q->flags, HV_EVTCHN_PENDING);

	if (!atomic_load_explicit(&q->external, memory_order_relaxed) &&
	    (old & (HV_EVTCHN_PENDING | HV_EVTCHN_MASKED)))
		return;
	if (hv_sig_kick(&q->sig))
		atomic_fetch_add_explicit(&q->delivered, 1, memory_order_relaxed);
}

static bool hv_evtchn_is_open(uint32_t state)
{
	return state == HV_ECS_UNBOUND || state == HV_ECS_INTERDOMAIN;
}

/* Fast-path lookup of an open port of a live domain, or NULL. */
static struct hv_evtchn_port *hv_evtchn_port_get(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_domain *d = hv_domain_lookup_live(hv, dom);
	struct hv_evtchn_port *p;

	if (!d || port == 0 || port >= d->nr_ports)
		return NULL;
	p = &d->ports[port];
	if (!hv_evtchn_is_open(atomic_load_explicit(&p->state, memory_order_acquire)))
		return NULL;
	return p;
}

/* A free port of @d other than 0, or 0 if none (hv->lock held). */
static evtchn_port_t hv_evtchn_find_free(const struct hv_domain *d)
{
	for (evtchn_port_t i = 1; i < d->nr_ports; i++)
		if (atomic_load(&d->ports[i].state) == HV_ECS_FREE)
			return i;
	return 0;
}

int hv_evtchn_alloc_unbound(struct hv *hv, domid_t dom, domid_t remote_dom, evtchn_port_t *port)
{
	struct hv_evtchn_port *p;
	struct hv_domain *d;
	evtchn_port_t n;
	int rc = 0;

	if (remote_dom == DOMID_SELF)
		remote_dom = dom;
	pthread_mutex_lock(&hv->lock);
	d = hv_domain_lookup_live(hv, dom);
	if (!d) {
		rc = -ESRCH;
		goto unlock;
	}
	/* The channels' fds are the process's: guests together get a bounded share. */
	if (hv->cfg.max_channels && hv->nr_channels >= hv->cfg.max_channels) {
		rc = -ENFILE;
		goto unlock;
	}
	/*
	 * A domain's own channels are bounded by its ports, and stay charged
	 * to it until their last port closes: closing its ends of bound
	 * channels (the binder's stay open) frees ports, not its share.
	 */
	n = d->nr_owned < d->nr_ports - 1 ? hv_evtchn_find_free(d) : 0;
	if (!n) {
		rc = -ENOSPC;
		goto unlock;
	}
	p = &d->ports[n];
	hv_evtchn_port_reset(p);
	rc = hv_sig_open(&p->sig);
	if (rc < 0)
		goto unlock;
	rc = hv_sig_open(&p->spare);
	if (rc < 0) {
		hv_sig_close(&p->sig);
		goto unlock;
	}
	p->remote_dom = remote_dom;
	p->owner = d;
	p->owner_gen = d->evtchn_gen;
	atomic_store_explicit(&p->state, HV_ECS_UNBOUND, memory_order_release);
	hv->nr_ports_open++;
	hv->nr_channels++;
	d->nr_owned++;
	*port = n;
unlock:
	pthread_mutex_unlock(&hv->lock);
	return rc;
}

int hv_evtchn_bind_interdomain(struct hv *hv, domid_t dom, domid_t remote_dom,
			       evtchn_port_t remote_port, evtchn_port_t *local_port)
{
	struct hv_evtchn_port *lp, *rp;
	struct hv_domain *ld, *rd;
	evtchn_port_t n;
	int rc = 0;

	if (remote_dom == DOMID_SELF)
		remote_dom = dom;
	pthread_mutex_lock(&hv->lock);
	ld = hv_domain_lookup_live(hv, dom);
	rd = hv_domain_lookup_live(hv, remote_dom);
	if (!ld || !rd) {
		rc = -ESRCH;
		goto unlock;
	}
	if (remote_port == 0 || remote_port >= rd->nr_ports) {
		rc = -EINVAL;
		goto unlock;
	}
	rp = &rd->ports[remote_port];
	/* Xen: only an unbound port allocated for us. */
	if (atomic_load(&rp->state) != HV_ECS_UNBOUND || rp->remote_dom != dom) {
		rc = -EINVAL;
		goto unlock;
	}
	n = hv_evtchn_find_free(ld);
	if (!n) {
		rc = -ENOSPC;
		goto unlock;
	}
	lp = &ld->ports[n];
	hv_evtchn_port_reset(lp);
	lp->sig = rp->spare;
	rp->spare = HV_EVTCHN_SIG_NONE;
	lp->remote_dom = remote_dom;
	lp->remote_port = remote_port;
	lp->owner = rp->owner;
	lp->owner_gen = rp->owner_gen;
	rp->remote_port = n;
	atomic_store(&lp->peer, rp);
	atomic_store(&rp->peer, lp);
	atomic_store(&lp->state, HV_ECS_INTERDOMAIN);
	atomic_store(&rp->state, HV_ECS_INTERDOMAIN);
	hv->nr_ports_open++;
	/* Xen: events sent to the unbound port were lost; assume there were some. */
	hv_evtchn_raise(lp);
	*local_port = n;
unlock:
	pthread_mutex_unlock(&hv->lock);
	return rc;
}

/* Close one open port (hv->lock held); a bound peer goes back to unbound. */
static void hv_evtchn_close_port(struct hv *hv, struct hv_evtchn_port *p)
{
	if (atomic_load(&p->state) == HV_ECS_INTERDOMAIN) {
		struct hv_evtchn_port *q = atomic_load(&p->peer);

		/* Unlink both directions first, then wait out notifies in flight. */
		atomic_store(&p->peer, NULL);
		atomic_store(&q->peer, NULL);
		atomic_store(&p->state, HV_ECS_FREE);
		atomic_store(&q->state, HV_ECS_UNBOUND);
		hv_evtchn_quiesce(p);
		hv_evtchn_quiesce(q);
		/* As Xen's evtchn_close: the peer may be bound again by p's domain. */
		q->remote_port = 0;
		q->spare = p->sig;
	} else {
		atomic_store(&p->state, HV_ECS_FREE);
		hv_evtchn_quiesce(p);
		hv_sig_close(&p->sig);
		hv_sig_close(&p->spare);
		hv->nr_channels--; /* the channel's last port */
		if (p->owner && p->owner->evtchn_gen == p->owner_gen)
			p->owner->nr_owned--;
	}
	p->sig = p->spare = HV_EVTCHN_SIG_NONE;
	p->owner = NULL;
	atomic_store(&p->flags, 0);
	atomic_store(&p->external, false);
	hv->nr_ports_open--;
}

int hv_evtchn_close(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_domain *d;
	int rc = 0;

	pthread_mutex_lock(&hv->lock);
	d = hv_domain_lookup_live(hv, dom);
	if (!d) {
		rc = -ESRCH;
		goto unlock;
	}
	if (port == 0 || port >= d->nr_ports ||
	    !hv_evtchn_is_open(atomic_load(&d->ports[port].state))) {
		rc = -EINVAL;
		goto unlock;
	}
	hv_evtchn_close_port(hv, &d->ports[port]);
unlock:
	pthread_mutex_unlock(&hv->lock);
	return rc;
}

uint32_t hv_evtchn_domain_close_all(struct hv *hv, struct hv_domain *d)
{
	uint32_t n = 0;

	if (!d->ports)
		return 0;
	for (evtchn_port_t i = 1; i < d->nr_ports; i++) {
		if (hv_evtchn_is_open(atomic_load(&d->ports[i].state))) {
			hv_evtchn_close_port(hv, &d->ports[i]);
			n++;
		}
	}
	return n;
}

int hv_evtchn_notify(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_domain *d = hv_domain_lookup_live(hv, dom);
	struct hv_evtchn_port *p, *q;
	uint32_t state;
	int rc = 0;

	if (!d || port == 0 || port >= d->nr_ports)
		return -EINVAL;
	p = &d->ports[port];
	/* Seq-cst: pairs with the unlink-then-quiesce of hv_evtchn_close_port(). */
	atomic_fetch_add(&p->inflight, 1);
	state = atomic_load(&p->state);
	if (state == HV_ECS_INTERDOMAIN) {
		q = atomic_load(&p->peer);
		if (q) /* NULL: the peer closed just now; dropped like unbound */
			hv_evtchn_raise(q);
	} else if (state != HV_ECS_UNBOUND) {
		rc = -EINVAL; /* Xen drops events on unbound ports silently */
	}
	atomic_fetch_sub(&p->inflight, 1);
	if (rc == 0)
		atomic_fetch_add_explicit(&p->sent, 1, memory_order_relaxed);
	return rc;
}

int hv_evtchn_fd(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_evtchn_port *p = hv_evtchn_port_get(hv, dom, port);

	return p ? p->sig.wait : -EINVAL;
}

int hv_evtchn_pending(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_evtchn_port *p = hv_evtchn_port_get(hv, dom, port);
	uint32_t old;
	bool got;
	int rc;

	if (!p)
		return -EINVAL;
	/*
	 * Drain first (makes the wait end unreadable, and is where a guest's
	 * kicks land), then clear the bit.  The other order loses events for good:
	 * a notify between the two sets the bit again and writes the fd, the
	 * drain empties the fd, and the bit stays set with the fd unreadable,
	 * so every later notify sees it set and writes nothing.  In this order
	 * a notify between the two finds the bit still set and writes nothing:
	 * its event is this call's, and the caller looks at its ring after.
	 */
	rc = hv_sig_drain(&p->sig);
	if (rc == -EBADMSG)
		return rc;
	got = rc > 0;
	if (hv_evtchn_eoi_hook)
		hv_evtchn_eoi_hook();
	old = atomic_fetch_and(&p->flags, ~HV_EVTCHN_PENDING);
	if (old & HV_EVTCHN_PENDING)
		got = true;
	if (!got)
		atomic_fetch_add_explicit(&p->spurious, 1, memory_order_relaxed);
	return got;
}

int hv_evtchn_mask(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_evtchn_port *p = hv_evtchn_port_get(hv, dom, port);

	if (!p)
		return -EINVAL;
	atomic_fetch_or(&p->flags, HV_EVTCHN_MASKED);
	return 0;
}

int hv_evtchn_unmask(struct hv *hv, domid_t dom, evtchn_port_t port)
{
	struct hv_evtchn_port *p = hv_evtchn_port_get(hv, dom, port);
	uint32_t old;

	if (!p)
		return -EINVAL;
	old = atomic_fetch_and(&p->flags, ~HV_EVTCHN_MASKED);
	/* An event arrived while masked and was not signalled: do it now. */
	if ((old & HV_EVTCHN_MASKED) && (old & HV_EVTCHN_PENDING) && hv_sig_kick(&p->sig))
		atomic_fetch_add_explicit(&p->delivered, 1, memory_order_relaxed);
	return 0;
}

int hv_evtchn_guest_fds(struct hv *hv, domid_t dom, evtchn_port_t port, int *wait_fd, int *kick_fd,
			int *self_fd)
{
	struct hv_evtchn_port *p;
	int rc = 0;

	pthread_mutex_lock(&hv->lock);
	p = hv_evtchn_port_get(hv, dom, port);
	if (!p) {
		rc = -EINVAL;
		goto unlock;
	}
	atomic_store(&p->external, true);
	*wait_fd = p->sig.wait;
	*self_fd = p->sig.kick;
	p->sig.guest = true; /* the flag moves with the signal, whichever port ends up with it */
	if (atomic_load(&p->state) == HV_ECS_INTERDOMAIN) {
		*kick_fd = atomic_load(&p->peer)->sig.kick;
		atomic_load(&p->peer)->sig.guest = true;
	} else {
		*kick_fd = p->spare.kick;
		p->spare.guest = true;
	}
unlock:
	pthread_mutex_unlock(&hv->lock);
	return rc;
}

int hv_evtchn_port_stats(struct hv *hv, domid_t dom, evtchn_port_t port, struct hv_evtchn_stats *st)
{
	struct hv_evtchn_port *p = hv_evtchn_port_get(hv, dom, port);

	if (!p)
		return -EINVAL;
	st->sent = atomic_load(&p->sent);
	st->delivered = atomic_load(&p->delivered);
	st->spurious = atomic_load(&p->spurious);
	return 0;
}
