/* SPDX-License-Identifier: MIT */
/* evtchn.h - interdomain event channels over eventfds, Xen semantics */
#ifndef PVNET_HV_EVTCHN_H
#define PVNET_HV_EVTCHN_H

#include <stdint.h>

#include "hv/hv.h"

/*
 * Life cycle as on Xen: one side allocates an unbound port for a named
 * remote domain, the remote domain binds to it (bind_interdomain), either
 * side notifies, and closing one end puts the other back to unbound.
 *
 * Each port has a pending bit, a mask bit and an eventfd that is readable
 * while an event is pending.  The consumer polls the fd, calls
 * hv_evtchn_pending(), does its work, and may mask/unmask around the work:
 * an event that arrives while masked is signalled at unmask.
 *
 * A frontend in another process gets two eventfds instead
 * (hv_evtchn_guest_fds()): one it waits on, one it writes to kick its peer.
 * Both exist from alloc_unbound on, so they can be handed over before the
 * backend binds.  Such a port is "external": hv cannot see the guest
 * consume its events, so every notify towards it writes the eventfd (no
 * edge suppression; the ring protocol's event indices keep that rare).
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
 * @delivered: eventfd writes into this port's eventfd
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
 * Return: 0, -ESRCH (no such live domain), -ENOSPC (no free port), or the
 * -errno of eventfd()
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
 * evtchn_close does.  The peer's kick eventfd stays valid for a guest
 * process that holds it.
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
 * Sets the peer port pending and writes its eventfd on the 0->1 edge of
 * pending if it is not masked.  On an unbound port the event is dropped
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
 * Return: the eventfd (borrowed, O_NONBLOCK), or -EINVAL
 */
int hv_evtchn_fd(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_pending() - consume the pending event of @port
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Drains the eventfd (a cross-process peer writes it directly), then
 * clears the pending bit.  Never blocks.  An event raised while it runs is
 * either reported by it or leaves the fd readable, so a caller that looks
 * at its ring after this call, and polls the fd when it finds nothing,
 * misses none.
 *
 * Return: 1 if there was an event, 0 if not (counted as spurious), -EINVAL
 */
int hv_evtchn_pending(struct hv *hv, domid_t dom, evtchn_port_t port);

/**
 * hv_evtchn_mask() - hold back delivery of events on @port
 * @hv: the hypervisor
 * @dom: the port's domain
 * @port: an open port
 *
 * Events still set the pending bit (one bit, not a count).  Kicks from a
 * cross-process peer reach the eventfd directly and are not held back.
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
 * hv_evtchn_guest_fds() - the two eventfds a guest process needs for @port
 * @hv: the hypervisor
 * @dom: the guest domain that owns @port
 * @port: an unbound or bound port of @dom
 * @wait_fd: receives the fd the guest polls and reads (its port's eventfd)
 * @kick_fd: receives the fd the guest writes to notify its peer
 *
 * Both fds are borrowed: the control plane sends them (SCM_RIGHTS) and
 * keeps ownership with hv.  From this call on the port is external (see
 * above).  The kick fd stays the same across the peer binding, closing and
 * rebinding.
 *
 * Return: 0, or -EINVAL
 */
int hv_evtchn_guest_fds(struct hv *hv, domid_t dom, evtchn_port_t port, int *wait_fd, int *kick_fd);

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
 * struct hv_evtchn_guest - an event channel as a guest process sees it
 * @port: the guest's port number (informational)
 * @wait_fd: readable while an event is pending for the guest
 * @kick_fd: written to notify the peer
 */
struct hv_evtchn_guest {
	evtchn_port_t port;
	int wait_fd;
	int kick_fd;
};

/**
 * hv_evtchn_guest_notify() - notify the peer: one write to @g->kick_fd
 * @g: the channel
 *
 * A saturated eventfd counter (EAGAIN) means an event is pending anyway.
 *
 * Return: 0, or -errno of write()
 */
int hv_evtchn_guest_notify(const struct hv_evtchn_guest *g);

/**
 * hv_evtchn_guest_pending() - consume the guest's pending event, never blocking
 * @g: the channel
 *
 * Return: 1 if there was an event, 0 if not, or -errno of read()
 */
int hv_evtchn_guest_pending(const struct hv_evtchn_guest *g);

#endif /* PVNET_HV_EVTCHN_H */
