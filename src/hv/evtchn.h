/* SPDX-License-Identifier: MIT */
/* evtchn.h - interdomain event channels over socketpairs, Xen semantics */
#ifndef PVNET_HV_EVTCHN_H
#define PVNET_HV_EVTCHN_H

#include <stdint.h>

#include "hv/hv.h"

/*
 * Life cycle as on Xen: one side allocates an unbound port for a named
 * remote domain, the remote domain binds to it (bind_interdomain), either
 * side notifies, and closing one end puts the other back to unbound.
 *
 * Each port has a pending bit, a mask bit and a signal (a SOCK_DGRAM
 * socketpair, evtchn.c) whose wait end is readable while an event is
 * pending.  The consumer polls the fd, calls
 * hv_evtchn_pending(), does its work, and may mask/unmask around the work:
 * an event that arrives while masked is signalled at unmask.
 *
 * A frontend in another process gets three fds instead
 * (hv_evtchn_guest_fds()): its port's wait end, its peer's kick end and
 * its own kick end.  They exist from alloc_unbound on, so they can be
 * handed over before the backend binds.  Such a port is "external": hv
 * cannot see the guest consume its events, so every notify towards it
 * signals it (no edge suppression; the ring protocol's event indices keep
 * that rare).
 *
 * Threads: alloc/bind/close/guest_fds/destroy are control-plane calls
 * (serialised inside hv).  notify/pending/mask/unmask/fd are lock-free and
 * may run concurrently from worker threads, each on its own ports.  A port's
 * owner must not close it while its own threads still use it; the remote
 * end closing at any time is safe.
 */

/**
 * struct hv_evtchn_stats - per-port counters
 * @sent: notifications sent through this port
 * @delivered: datagrams queued on this port's wait end
 * @spurious: hv_evtchn_pending() calls that found nothing
 */
struct hv_evtchn_stats {
	uint64_t sent;
	uint64_t delivered;
	uint64_t spurious;
};

/**
 * hv_evtchn_alloc_unbound() - allocate a port that @remote_dom may bind to
 * @hv: the hypervisor
 * @dom: the domain that owns the new port
 * @remote_dom: the only domain allowed to bind (may be @dom)
 * @port: receives the port (never 0: reserved, as on Xen)
 *
 * Return: 0, -ESRCH (no such live domain), -ENOSPC (no free port),
 * -ENFILE (struct hv_config's max_channels are open), or the -errno of
 * socketpair()
 */
int hv_evtchn_alloc_unbound(struct hv *hv, domid_t dom, domid_t remote_dom, evtchn_port_t *port);

/**
 * hv_evtchn_bind_interdomain() - bind a new port of @dom to a remote unbound port
 * @hv: the hypervisor
 * @dom: the binding domain
 * @remote_dom: the domain that allocated @remote_port
 * @remote_port: an unbound port allocated for @dom
 * @local_port: receives the new port
 *
 * As on Xen, the new local port is set pending straight away, because
 * notifications sent to the unbound port before the bind were lost.
 *
 * Return: 0, -ESRCH (no such domain), -EINVAL (@remote_port not unbound or
 * not allocated for @dom), -ENOSPC
 */
int hv_evtchn_bind_interdomain(struct hv *hv, domid_t dom, domid_t remote_dom,
			       evtchn_port_t remote_port, evtchn_port_t *local_port);

/**
 * hv_evtchn_close() - close a port
 * @hv: the hypervisor
 * @dom: its domain
 * @port: the port
 *
 * A bound peer goes back to unbound (bindable again by @dom), as Xen's
 * evtchn_close does.  The peer's signal stays valid for a guest process
 * that holds its fds.
 *
 * Return: 0, -ESRCH, -EINVAL (not an open port of @dom)
 */
int hv_evtchn_close(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_notify() - send an event to the other end of @port
 * @hv: the hypervisor
 * @dom: the sender's domain
 * @port: the sender's port
 *
 * Sets the peer port pending and signals it on the 0->1 edge of pending if
 * it is not masked.  On an unbound port the event is dropped
 * silently, as on Xen.  Lock-free, never blocks.
 *
 * Return: 0, or -EINVAL for a closed, out-of-range or foreign port
 */
int hv_evtchn_notify(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_fd() - the fd that is readable while @port has an event pending
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Return: the signal's wait end (borrowed, O_NONBLOCK), or -EINVAL
 */
int hv_evtchn_fd(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_pending() - consume the pending event of @port
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Drains the signal (a cross-process peer kicks it directly), then
 * clears the pending bit.  Never blocks.  An event raised while it runs is
 * either reported by it or leaves the fd readable, so a caller that looks
 * at its ring after this call, and polls the fd when it finds nothing,
 * misses none.
 *
 * Return: 1 if there was an event, 0 if not (counted as spurious), -EINVAL,
 * or -EBADMSG: the peer sent fds over the channel (a kernel without
 * SO_PASSRIGHTS lets it), which stay queued, the fd readable; the owner
 * should stop polling it and treat the peer as hostile
 */
int hv_evtchn_pending(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_mask() - hold back delivery of events on @port
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Events still set the pending bit (one bit, not a count).  Kicks from a
 * cross-process peer reach the signal directly and are not held back.
 *
 * Return: 0, or -EINVAL
 */
int hv_evtchn_mask(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_unmask() - allow delivery again, re-signalling a held-back event
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Return: 0, or -EINVAL
 */
int hv_evtchn_unmask(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_guest_fds() - the three fds a guest process needs for @port
 * @hv: the hypervisor
 * @dom: the guest domain that owns @port
 * @port: an unbound or bound port of @dom
 * @wait_fd: receives the fd the guest polls and drains (its port's wait end)
 * @kick_fd: receives the fd the guest sends on to notify its peer
 * @self_fd: receives the fd the guest sends on to signal itself (its
 *	port's kick end)
 *
 * The fds are borrowed: the control plane sends them (SCM_RIGHTS) and
 * keeps ownership with hv.  From this call on the port is external (see
 * above).  The kick fd stays the same across the peer binding, closing and
 * rebinding.
 *
 * Return: 0, or -EINVAL
 */
int hv_evtchn_guest_fds(struct hv *hv, domid_t dom, evtchn_port_t port, int *wait_fd, int *kick_fd,
			int *self_fd);

/**
 * hv_evtchn_port_stats() - read the counters of a port
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 * @st: receives the counters
 *
 * Return: 0, or -EINVAL
 */
int hv_evtchn_port_stats(struct hv *hv, domid_t dom, evtchn_port_t port,
			 struct hv_evtchn_stats *st);

/**
 * hv_evtchn_sig_send() - signal a port: one datagram on its kick end, never blocking
 * @kick_fd: the kick end
 *
 * Return: 1 if queued, 0 if the queue is full (an event is pending
 * anyway), or -errno of send()
 */
int hv_evtchn_sig_send(int kick_fd);

/**
 * hv_evtchn_sig_take() - consume what is queued on a port's wait end, never blocking
 * @wait_fd: the wait end
 *
 * Return: the datagrams taken (0: none), or -errno of recvmmsg()
 */
int hv_evtchn_sig_take(int wait_fd);

/**
 * struct hv_evtchn_guest - an event channel as a guest process sees it
 * @port: the guest's port number (informational)
 * @wait_fd: readable while an event is pending for the guest
 * @kick_fd: sent on to notify the peer
 * @self_fd: sent on to signal the guest's own port
 */
struct hv_evtchn_guest {
	evtchn_port_t port;
	int wait_fd;
	int kick_fd;
	int self_fd;
};

/**
 * hv_evtchn_guest_notify() - notify the peer (hv_evtchn_sig_send() on @g->kick_fd)
 * @g: the channel
 *
 * Return: 0 (a full queue too: an event is pending anyway), or -errno of send()
 */
int hv_evtchn_guest_notify(const struct hv_evtchn_guest *g);

/**
 * hv_evtchn_guest_pending() - consume the guest's pending event, never blocking
 * @g: the channel
 *
 * Return: 1 if there was an event, 0 if not, or -errno of recvmmsg()
 */
int hv_evtchn_guest_pending(const struct hv_evtchn_guest *g);

/**
 * hv_evtchn_guest_self_kick() - make the guest's own wait end readable
 * @g: the channel
 *
 * Return: 0, or -errno of send()
 */
int hv_evtchn_guest_self_kick(const struct hv_evtchn_guest *g);

#endif /* PVNET_HV_EVTCHN_H */
