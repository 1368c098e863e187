// SPDX-License-Identifier: MIT
// evtchn_guest.c - event channel helper for a guest process that holds two eventfds

/*
 * Theory of Operation
 *
 * A frontend in its own process cannot call into pvnetd's hv to notify; the
 * control plane gave it two eventfds instead (hv_evtchn_guest_fds()): it
 * writes the kick fd to notify its peer and polls/reads the wait fd for its
 * own events.  No state here beyond the fds; the caller owns them.  Both
 * calls are non-blocking (the fds are O_NONBLOCK), so a storm of kicks
 * only saturates a counter and the peer still sees one readable fd.
 */

#include <errno.h>
#include <unistd.h>

#include "hv/evtchn.h"

int hv_evtchn_guest_notify(const struct hv_evtchn_guest *g)
{
	static const uint64_t one = 1;

	for (;;) {
		if (write(g->kick_fd, &one, sizeof(one)) == sizeof(one))
			return 0;
		if (errno == EINTR)
			continue;
		/* Counter at its maximum: the peer has an event pending anyway. */
		if (errno == EAGAIN)
			return 0;
		return -errno;
	}
}

int hv_evtchn_guest_pending(const struct hv_evtchn_guest *g)
{
	uint64_t cnt;

	for (;;) {
		if (read(g->wait_fd, &cnt, sizeof(cnt)) == sizeof(cnt))
			return 1;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		return -errno;
	}
}
