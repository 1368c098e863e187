// SPDX-License-Identifier: MIT
// evtchn_guest.c - the signal of an event channel, and a guest process's view of it

/*
 * Theory of Operation
 *
 * A port is signalled through a SOCK_DGRAM socketpair (evtchn.c says why
 * not an eventfd): one datagram sent on the kick end makes the wait end
 * readable, and taking what is queued there consumes the event.  The two
 * primitives below are all anybody does with one, pvnetd and guests
 * alike, and both say MSG_DONTWAIT themselves: whoever else holds the
 * socket, clearing O_NONBLOCK on it cannot make them block.
 *
 * A frontend in its own process cannot call into pvnetd's hv to notify; the
 * control plane gave it three fds instead (hv_evtchn_guest_fds()): it kicks
 * its peer's signal to notify, polls and drains its own port's wait end,
 * and may kick its own signal to stay awake (a self kick).  No state here
 * beyond the fds; the caller owns them.
 */

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>

#include "hv/evtchn.h"

/*
 * Datagrams one recvmmsg() takes, and the most one drain makes.  The
 * kernel's queue limit (max_dgram_qlen) does not apply between the two
 * ends of a socketpair; the sender's buffer does, some hundreds of
 * one-byte datagrams by default.  What is left after the last call keeps
 * the fd readable: the next round takes it.
 */
#define HV_SIG_BATCH 64
#define HV_SIG_CALLS 16

int hv_evtchn_sig_send(int kick_fd)
{
	static const char one = 1;

	for (;;) {
		if (send(kick_fd, &one, sizeof(one), MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(one))
			return 1;
		if (errno == EINTR)
			continue;
		/* A full queue: the waiter has an event pending anyway. */
		return errno == EAGAIN ? 0 : -errno;
	}
}

int hv_evtchn_sig_take(int wait_fd)
{
	char buf[HV_SIG_BATCH];
	struct iovec iov[HV_SIG_BATCH];
	struct mmsghdr msg[HV_SIG_BATCH];
	int n, total = 0;

	for (unsigned int i = 0; i < HV_SIG_BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = &buf[i], .iov_len = 1};
		msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
	}
	for (unsigned int calls = 0; calls < HV_SIG_CALLS;) {
		n = recvmmsg(wait_fd, msg, HV_SIG_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? total : total ? total : -errno;
		total += n;
		calls++;
		if (n < HV_SIG_BATCH)
			break; /* nothing more was queued */
	}
	return total;
}

int hv_evtchn_guest_notify(const struct hv_evtchn_guest *g)
{
	int rc = hv_evtchn_sig_send(g->kick_fd);

	return rc < 0 ? rc : 0;
}

int hv_evtchn_guest_pending(const struct hv_evtchn_guest *g)
{
	int rc = hv_evtchn_sig_take(g->wait_fd);

	return rc < 0 ? rc : rc > 0;
}

int hv_evtchn_guest_self_kick(const struct hv_evtchn_guest *g)
{
	int rc = hv_evtchn_sig_send(g->self_fd);

	return rc < 0 ? rc : 0;
}
