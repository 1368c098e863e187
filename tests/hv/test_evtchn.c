// SPDX-License-Identifier: MIT
// test_evtchn.c - event channel life cycle, edge delivery, masking, guest fds

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hv/hv.h"
#include "hv/hv_internal.h"
#include "hv_test.h"

struct fx {
	struct hv *hv;
	struct guest g;
};

static int setup(void **state)
{
	struct hv_config cfg;
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	hv_config_default(&cfg);
	cfg.max_evtchns = 8; /* small, to reach exhaustion */
	f->hv = hv_create(&cfg);
	if (!f->hv || guest_create(f->hv, 1, &f->g) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	guest_unmap(&f->g);
	hv_destroy(f->hv);
	free(f);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Is @fd readable within @ms milliseconds? */
static bool readable(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, ms) == 1 && (pfd.revents & POLLIN);
}

/* Bind dom0 to a fresh unbound port of the guest; consume the bind's event. */
static void connect_ports(struct fx *f, evtchn_port_t *gp, evtchn_port_t *bp)
{
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, gp), 0);
	assert_int_not_equal(*gp, 0);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, *gp, bp), 0);
	/* Xen sets the binder's port pending, for events lost while unbound. */
	assert_true(readable(hv_evtchn_fd(f->hv, 0, *bp), 0));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, *bp), 1);
}

static void test_lifecycle(void **state)
{
	struct fx *f = *state;
	evtchn_port_t gp, bp;
	struct hv_evtchn_stats st;
	int gfd, bfd;

	connect_ports(f, &gp, &bp);
	gfd = hv_evtchn_fd(f->hv, f->g.domid, gp);
	bfd = hv_evtchn_fd(f->hv, 0, bp);
	assert_true(gfd >= 0 && bfd >= 0 && gfd != bfd);
	assert_false(readable(bfd, 0));

	/* Guest -> backend. */
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_true(readable(bfd, 100));
	assert_false(readable(gfd, 0));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_false(readable(bfd, 0));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0); /* spurious */

	/* Backend -> guest. */
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_true(readable(gfd, 100));
	assert_int_equal(hv_evtchn_pending(f->hv, f->g.domid, gp), 1);

	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp, &st), 0);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.delivered, 2); /* the bind's and the guest's */
	assert_int_equal(st.spurious, 1);
}

/* Pending is a bit, not a count: one signal for a burst of notifies. */
static void test_edge(void **state)
{
	struct fx *f = *state;
	evtchn_port_t gp, bp;
	struct hv_evtchn_stats gs, bs;

	connect_ports(f, &gp, &bp);
	for (int i = 0; i < 100; i++)
		assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_port_stats(f->hv, f->g.domid, gp, &gs), 0);
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp, &bs), 0);
	assert_int_equal(gs.sent, 100);
	assert_int_equal(bs.delivered, 2); /* bind + first notify */
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0);
	/* Consumed: the next notify is an edge again. */
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_true(readable(hv_evtchn_fd(f->hv, 0, bp), 100));
}

/* The guest's notify, made by the hook in the middle of dom0's hv_evtchn_pending(). */
static struct fx *eoi_fx;
static evtchn_port_t eoi_gp;

static void notify_during_eoi(void)
{
	hv_evtchn_eoi_hook = NULL;
	assert_int_equal(hv_evtchn_notify(eoi_fx->hv, eoi_fx->g.domid, eoi_gp), 0);
}

/*
 * A notify that lands while the consumer is taking the pending event: that
 * call reports an event, and the port is left consistent, so the next
 * notify is an edge again and makes the fd readable.  (With the bit
 * cleared before the drain, the racing notify left the bit set and the fd
 * empty, and every later notify was swallowed: a worker slept for good.)
 */
static void test_notify_during_eoi(void **state)
{
	struct fx *f = *state;
	evtchn_port_t gp, bp;
	int bfd;

	connect_ports(f, &gp, &bp);
	bfd = hv_evtchn_fd(f->hv, 0, bp);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_true(readable(bfd, 100));
	eoi_fx = f;
	eoi_gp = gp;
	hv_evtchn_eoi_hook = notify_during_eoi;
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_null(hv_evtchn_eoi_hook); /* the hook ran */
	/* The consumer found its ring empty and sleeps: the next notify must wake it. */
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_true(readable(bfd, 100));
}

static void test_mask_unmask(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_stats st;
	evtchn_port_t gp, bp;
	int bfd;

	connect_ports(f, &gp, &bp);
	bfd = hv_evtchn_fd(f->hv, 0, bp);
	assert_int_equal(hv_evtchn_mask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_false(readable(bfd, 10));
	/* Late EOI: unmask after the work re-signals what arrived meanwhile. */
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, bp), 0);
	assert_true(readable(bfd, 100));
	/* ...and counts it delivered, as the bind's signal was. */
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp, &st), 0);
	assert_int_equal(st.delivered, 2);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	/* Unmask with nothing pending signals nothing. */
	assert_int_equal(hv_evtchn_mask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, bp), 0);
	assert_false(readable(bfd, 0));
	/* Unmasked, the port takes events again, each on its edge. */
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_true(readable(bfd, 100));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	/* A masked port polled: the event is pending though nothing was signalled. */
	assert_int_equal(hv_evtchn_mask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_false(readable(bfd, 0));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_mask(f->hv, 0, 99), -EINVAL);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, 99), -EINVAL);
}

/* Unmasking a port that was not masked signals nothing, even with an event pending. */
static void test_unmask_unmasked(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_stats st;
	evtchn_port_t gp, bp;

	connect_ports(f, &gp, &bp);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp, &st), 0);
	assert_int_equal(st.delivered, 2); /* the bind's and the notify's */
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_false(readable(hv_evtchn_fd(f->hv, 0, bp), 0));
}

/*
 * A port's counters are the channel's: a port closed and opened again
 * (the lowest free number comes back) starts from zero, not from what the
 * previous channel on that number sent, delivered or found spurious.
 */
static void test_port_stats_reset_on_reuse(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_stats st;
	evtchn_port_t gp, bp, gp2, bp2;

	connect_ports(f, &gp, &bp);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0); /* spurious */
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp, &st), 0);
	assert_int_equal(st.sent, 1);
	assert_int_equal(st.delivered, 2);
	assert_int_equal(st.spurious, 1);
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, gp), 0);

	connect_ports(f, &gp2, &bp2);
	assert_int_equal(gp2, gp);
	assert_int_equal(bp2, bp);
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, bp2, &st), 0);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.delivered, 1); /* the bind's */
	assert_int_equal(st.spurious, 0);
	assert_int_equal(hv_evtchn_port_stats(f->hv, f->g.domid, gp2, &st), 0);
	assert_int_equal(st.sent, 0);
	assert_int_equal(st.delivered, 0);
}

static void test_close_unbinds_peer(void **state)
{
	struct fx *f = *state;
	evtchn_port_t gp, bp, bp2;
	struct hv_stats st;

	connect_ports(f, &gp, &bp);
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
	/* The guest's end is unbound again: notifies are dropped, not errors. */
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), -EINVAL);
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), -EINVAL);
	/* And can be bound again by the same remote domain. */
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, gp, &bp2), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp2), 1);
	assert_int_equal(hv_evtchn_notify(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp2), 1);

	/* Closing the allocating end puts the binder's end back to unbound. */
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp2), 0);
	hv_stats(f->hv, &st);
	assert_int_equal(st.evtchns_open, 1);
	/*
	 * ...for the domain at the other end, as Xen's evtchn_close leaves it:
	 * the guest binds it again, and events flow both ways.
	 */
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, f->g.domid, 0, bp2, &gp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, f->g.domid, gp), 1);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp2), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, f->g.domid, gp), 1);
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, gp), 0);
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp2), 0);
	hv_stats(f->hv, &st);
	assert_int_equal(st.evtchns_open, 0);
}

static void test_invalid_ports(void **state)
{
	struct fx *f = *state;
	evtchn_port_t gp, bp, p;
	struct guest g2;

	connect_ports(f, &gp, &bp);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, 0), -EINVAL); /* reserved */
	assert_int_equal(hv_evtchn_notify(f->hv, 0, 8), -EINVAL); /* out of range */
	assert_int_equal(hv_evtchn_notify(f->hv, 0, UINT32_MAX), -EINVAL);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp + 1), -EINVAL); /* not ours */
	assert_int_equal(hv_evtchn_notify(f->hv, 9, 1), -EINVAL);      /* no such domain */
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp + 1), -EINVAL);
	assert_int_equal(hv_evtchn_fd(f->hv, 0, bp + 1), -EINVAL);
	assert_int_equal(hv_evtchn_close(f->hv, 0, 0), -EINVAL);
	/* The first port past dom0's 8, for every call that takes a port. */
	assert_int_equal(hv_evtchn_fd(f->hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_mask(f->hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_port_stats(f->hv, 0, 8, &(struct hv_evtchn_stats){0}), -EINVAL);
	assert_int_equal(hv_evtchn_close(f->hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, f->g.domid, 0, 8, &p), -EINVAL);

	/* Binding: only an unbound port allocated for the binder. */
	assert_int_equal(guest_create(f->hv, 1, &g2), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, g2.domid, &p), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, p, &bp), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, gp, &bp), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, 0, &bp), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, 100, &bp), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, 9, 1, &bp), -ESRCH);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, 9, 0, &p), -ESRCH);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, g2.domid, f->g.domid, p, &bp), 0);
	guest_unmap(&g2);
}

static void test_exhaustion_and_loopback(void **state)
{
	struct fx *f = *state;
	evtchn_port_t p[7], q;

	/* Ports 1..7 of 8; port 0 is reserved. */
	for (int i = 0; i < 7; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(f->hv, 0, DOMID_SELF, &p[i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, 0, 0, &q), -ENOSPC);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, 0, p[0], &q), -ENOSPC);
	assert_int_equal(hv_evtchn_close(f->hv, 0, p[6]), 0);
	/* Loopback within one domain, as Xen allows. */
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, DOMID_SELF, p[0], &q), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, q), 1);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, q), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, p[0]), 1);
}

/* fds this process has open now. */
static unsigned int open_fds(void)
{
	unsigned int n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * open_fds() once hv's closing thread is done with what earlier tests
 * handed it (signals that went to a guest are closed there): the same
 * count 20 ms apart, within 2 s.
 */
static unsigned int settled_fds(void)
{
	unsigned int n = open_fds(), m;

	for (int i = 0; i < 100; i++) {
		usleep(20000);
		m = open_fds();
		if (m == n)
			break;
		n = m;
	}
	return n;
}

/*
 * Channels over all domains are bounded (max_channels), so guests together
 * cannot make the process run out of fds: each channel holds exactly
 * HV_EVTCHN_CHANNEL_FDS of them, binding adds none, and a channel's fds go
 * with its last port.
 */
static void test_channel_budget(void **state)
{
	struct hv_config cfg;
	struct guest g1, g2;
	evtchn_port_t p1[3], p2, bp, extra;
	unsigned int fds0;
	struct hv *hv;

	(void)state;
	hv_config_default(&cfg);
	cfg.max_channels = 4;
	hv = hv_create(&cfg);
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 1, &g1), 0);
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	fds0 = settled_fds(); /* none of this test's signals go to a guest: closed at once */
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(hv, g1.domid, 0, &p1[i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &p2), 0);
	assert_int_equal(open_fds() - fds0, 4 * HV_EVTCHN_CHANNEL_FDS);
	/* the budget is everybody's: the other guest and dom0 are refused too */
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENFILE);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, 0, g1.domid, &extra), -ENFILE);
	/* binding takes no budget and no fd */
	assert_int_equal(hv_evtchn_bind_interdomain(hv, 0, g2.domid, p2, &bp), 0);
	assert_int_equal(open_fds() - fds0, 4 * HV_EVTCHN_CHANNEL_FDS);
	/* a channel comes back when its last port closes, not before */
	assert_int_equal(hv_evtchn_close(hv, g2.domid, p2), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENFILE);
	assert_int_equal(hv_evtchn_close(hv, 0, bp), 0);
	assert_int_equal(open_fds() - fds0, 3 * HV_EVTCHN_CHANNEL_FDS);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &p2), 0);
	/* a destroyed domain's channels go with it (and its memory's fds) */
	assert_int_equal(hv_domain_destroy(hv, g1.domid, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &p1[i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENFILE);
	fds0 = open_fds();
	assert_int_equal(hv_domain_destroy(hv, g2.domid, NULL), 0);
	assert_true(fds0 - open_fds() >= 4 * HV_EVTCHN_CHANNEL_FDS);
	guest_unmap(&g1);
	guest_unmap(&g2);
	hv_destroy(hv);
}

/*
 * A guest has max_evtchns ports, dom0 dom0_evtchns: a guest's own channels
 * are bounded (its next alloc is -ENOSPC, other guests' are not refused),
 * and dom0, which binds every guest's channels, has room for all of them.
 * Port numbers past a domain's own count are invalid, whatever another
 * domain's count.
 */
static void test_port_counts(void **state)
{
	struct hv_config cfg;
	struct guest g1, g2;
	evtchn_port_t gp[2][3], bp[6], extra;
	struct hv_evtchn_stats st;
	struct hv *hv;

	(void)state;
	hv_config_default(&cfg);
	cfg.max_evtchns = 4;
	cfg.dom0_evtchns = 8;
	hv = hv_create(&cfg);
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 1, &g1), 0);
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(hv, g1.domid, 0, &gp[0][i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g1.domid, 0, &extra), -ENOSPC);
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &gp[1][i]), 0);
	/* dom0 binds all six: more than a guest's four ports */
	for (int i = 0; i < 6; i++) {
		domid_t dom = i < 3 ? g1.domid : g2.domid;

		assert_int_equal(hv_evtchn_bind_interdomain(hv, 0, dom, gp[i / 3][i % 3], &bp[i]),
				 0);
		assert_int_equal(hv_evtchn_pending(hv, 0, bp[i]), 1);
	}
	assert_true(bp[5] >= 4 && bp[5] < 8);
	assert_int_equal(hv_evtchn_notify(hv, 0, bp[5]), 0);
	assert_int_equal(hv_evtchn_pending(hv, g2.domid, gp[1][2]), 1);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, 0, g1.domid, &extra), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, 0, g1.domid, &extra), -ENOSPC);
	/* a guest's port 4..7 does not exist, though dom0's does */
	assert_int_equal(hv_evtchn_notify(hv, g1.domid, bp[5]), -EINVAL);
	assert_int_equal(hv_evtchn_fd(hv, g1.domid, bp[5]), -EINVAL);
	assert_int_equal(hv_evtchn_close(hv, g1.domid, bp[5]), -EINVAL);
	assert_int_equal(hv_evtchn_port_stats(hv, g1.domid, bp[5], &st), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(hv, g1.domid, 0, extra, &extra), -ENOSPC);
	/* nor is a port past dom0's */
	assert_int_equal(hv_evtchn_notify(hv, 0, 8), -EINVAL);
	assert_int_equal(hv_evtchn_bind_interdomain(hv, g1.domid, 0, 8, &extra), -EINVAL);
	/*
	 * A guest that closes its ends of bound channels frees its ports, but
	 * the channels, which dom0's ends keep open, stay charged to it.
	 */
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_close(hv, g2.domid, gp[1][i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENOSPC);
	assert_int_equal(hv_evtchn_close(hv, 0, bp[3]), 0); /* that channel's last port */
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENOSPC);
	assert_int_equal(hv_domain_destroy(hv, g1.domid, NULL), 0);
	assert_int_equal(hv_domain_destroy(hv, g2.domid, NULL), 0);
	guest_unmap(&g1);
	guest_unmap(&g2);
	hv_destroy(hv);

	hv_config_default(&cfg);
	cfg.dom0_evtchns = 1;
	assert_null(hv_create(&cfg));
	cfg.dom0_evtchns = (1U << 17) + 1;
	assert_null(hv_create(&cfg));
}

/*
 * A channel outlives the domain that allocated it (the binder's end stays
 * open): when its last port closes after the domain's slot went to a new
 * domain, the new one's share is not what gets the channel back.
 */
static void test_channel_of_destroyed_domain(void **state)
{
	struct hv_config cfg;
	struct guest g1, g2;
	evtchn_port_t gp, bp, p[3], extra;
	struct hv *hv;

	(void)state;
	hv_config_default(&cfg);
	cfg.max_domains = 2; /* one guest slot: the next guest reuses it */
	cfg.max_evtchns = 4;
	hv = hv_create(&cfg);
	assert_non_null(hv);
	assert_int_equal(guest_create(hv, 1, &g1), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g1.domid, 0, &gp), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(hv, 0, g1.domid, gp, &bp), 0);
	assert_int_equal(hv_domain_destroy(hv, g1.domid, NULL), 0);
	guest_unmap(&g1);
	assert_int_equal(guest_create(hv, 1, &g2), 0);
	assert_int_not_equal(g2.domid, g1.domid);
	assert_int_equal(hv_evtchn_close(hv, 0, bp), 0);
	/* the new guest has its whole share: three channels, not one more or less */
	for (int i = 0; i < 3; i++)
		assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &p[i]), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(hv, g2.domid, 0, &extra), -ENOSPC);
	guest_unmap(&g2);
	hv_destroy(hv);
}

/* A guest process with only its three fds, from before the bind to after a rebind. */
static void test_guest_fds(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	evtchn_port_t bp, bp2;
	int wait_fd, kick_fd, self_fd;

	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	assert_int_not_equal(g.wait_fd, g.kick_fd);
	assert_int_not_equal(g.wait_fd, g.self_fd);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0); /* before the bind: harmless */

	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);

	/* A kick storm: the backend sees one readable fd and one event. */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_true(readable(hv_evtchn_fd(f->hv, 0, bp), 100));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0);
	assert_false(readable(hv_evtchn_fd(f->hv, 0, bp), 0));

	/* Backend -> guest: every notify reaches an external port. */
	assert_int_equal(hv_evtchn_guest_pending(&g), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_true(readable(g.wait_fd, 100));
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);
	assert_int_equal(hv_evtchn_guest_pending(&g), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);

	/* The guest's self kick: its own fd readable, one event, the backend's untouched. */
	assert_int_equal(hv_evtchn_guest_self_kick(&g), 0);
	assert_true(readable(g.wait_fd, 100));
	assert_false(readable(hv_evtchn_fd(f->hv, 0, bp), 0));
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);
	assert_int_equal(hv_evtchn_guest_pending(&g), 0);

	/* The backend goes away and comes back: the guest's fds stay right. */
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &wait_fd, &kick_fd, &self_fd), 0);
	assert_int_equal(wait_fd, g.wait_fd);
	assert_int_equal(kick_fd, g.kick_fd);
	assert_int_equal(self_fd, g.self_fd);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp2), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp2), 1);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_true(readable(hv_evtchn_fd(f->hv, 0, bp2), 100));
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp2), 0);
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);
	assert_int_equal(hv_evtchn_guest_fds(f->hv, f->g.domid, 7, &wait_fd, &kick_fd, &self_fd),
			 -EINVAL);
}

/* Fill the queue of the signal @kick_fd feeds; returns the datagrams it took. */
static unsigned int fill(int kick_fd)
{
	unsigned int n = 0;

	while (hv_evtchn_sig_send(kick_fd) == 1 && n < 100000)
		n++;
	return n;
}

static void set_blocking(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK), 0);
}

/*
 * A guest that clears O_NONBLOCK on the fds it was given (they share their
 * open file descriptions with hv's, as SCM_RIGHTS passes them) and then
 * fills or drains the queues: nothing hv does may block.  With eventfds a
 * bind raising a full counter blocked for ever with hv->lock held; the
 * alarm turns any such hang into a failure.
 */
static void test_guest_blocking_fds(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	evtchn_port_t bp;

	alarm(20);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	set_blocking(g.wait_fd);
	set_blocking(g.kick_fd);
	set_blocking(g.self_fd);

	/* The binder's signal full before the bind, which raises it. */
	assert_true(fill(g.kick_fd) > 0);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0); /* full: pending anyway */
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	/* drained by the guest behind the backend's back: pending finds nothing, at once */
	fill(g.kick_fd);
	while (hv_evtchn_sig_take(hv_evtchn_fd(f->hv, 0, bp)) > 0)
		;
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0);

	/* The guest's own queue full: notifies towards it and unmask return at once. */
	assert_true(fill(g.self_fd) > 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_mask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_unmask(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);

	/* Its own signal sockets shut down by the guest: only its events are lost. */
	assert_int_equal(shutdown(g.self_fd, SHUT_WR), 0);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, g.port), 0);
	alarm(0);
}

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif

/* Does this kernel have SO_PASSRIGHTS (Linux 6.16)? */
static bool have_passrights(void)
{
	int sv[2], no = 0;
	bool ok;

	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	ok = setsockopt(sv[0], SOL_SOCKET, SO_PASSRIGHTS, &no, sizeof(no)) == 0;
	close(sv[0]);
	close(sv[1]);
	return ok;
}

/*
 * A guest cannot park a file of its choosing in a signal pvnetd drains or
 * closes: the wait ends refuse fds, before and after the bind, and
 * nothing can be sent to a kick end.
 */
static void test_guest_cannot_pass_fds(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	evtchn_port_t bp;
	int pfd[2], third[2];

	assert_int_equal(pipe(pfd), 0);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	if (have_passrights()) {
		assert_int_equal(send_fd(g.kick_fd, pfd[0]), -EPERM);
		assert_int_equal(send_fd(g.self_fd, pfd[0]), -EPERM);
		assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
		assert_int_equal(send_fd(g.kick_fd, pfd[0]), -EPERM);
	} else {
		print_message("no SO_PASSRIGHTS in this kernel: the wait ends take fds\n");
		assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
	}
	/* a kick end is shut for reading: a socket of the guest's cannot queue on it */
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, third), 0);
	{
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		socklen_t len;

		/* give the kick end an (abstract, autobound) address, then send to it */
		assert_int_equal(bind(g.kick_fd, (struct sockaddr *)&a, sizeof(sa_family_t)), 0);
		len = sizeof(a);
		assert_int_equal(getsockname(g.kick_fd, (struct sockaddr *)&a, &len), 0);
		assert_true(sendto(third[0], "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL,
				   (struct sockaddr *)&a, len) < 0);
	}
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	close(third[0]);
	close(third[1]);
	close(pfd[0]);
	close(pfd[1]);
}

/* A TCP socket whose close lingers @secs on unsent data (a loopback peer that never reads). */
static int lingering_socket(int secs, int *keep)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	struct linger lg = {.l_onoff = 1, .l_linger = secs};
	int small = 4096, c;
	static char buf[65536];

	keep[0] = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(keep[0] >= 0);
	assert_int_equal(setsockopt(keep[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	assert_int_equal(bind(keep[0], (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(keep[0], 1), 0);
	assert_int_equal(getsockname(keep[0], (struct sockaddr *)&a, &al), 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	keep[1] = accept(keep[0], NULL, NULL);
	assert_true(keep[1] >= 0);
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	assert_int_equal(fcntl(c, F_SETFL, O_NONBLOCK), 0);
	while (send(c, buf, sizeof(buf), 0) > 0)
		;
	return c;
}

/*
 * The guest allows fds on its own wait end again (it holds it), parks a
 * file whose release takes seconds there through its self kick, and drops
 * its copies: closing the port must not wait for that file (it runs with
 * hv->lock held), the closing thread does.
 */
static void test_close_with_guest_file(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	int yes = 1, keep[2], victim, wait_dup, self_dup;
	uint64_t t0;

	alarm(20);
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	/* the guest's own copies, as SCM_RIGHTS would have given them */
	wait_dup = dup(g.wait_fd);
	self_dup = dup(g.self_fd);
	(void)setsockopt(wait_dup, SOL_SOCKET, SO_PASSRIGHTS, &yes, sizeof(yes));
	victim = lingering_socket(3, keep);
	assert_int_equal(send_fd(self_dup, victim), 0);
	close(victim);
	close(wait_dup);
	close(self_dup);
	t0 = now_ms();
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, g.port), 0);
	assert_true(now_ms() - t0 < 1000);
	close(keep[1]);
	close(keep[0]);
	alarm(0);
}

/*
 * A guest that asks for its fds once bound (a frontend restarted while
 * its backend stays): the kick fd is the bound peer's, so its notify
 * reaches the backend's port.
 */
static void test_guest_fds_while_bound(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	evtchn_port_t bp;

	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	assert_true(g.kick_fd >= 0);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_true(readable(hv_evtchn_fd(f->hv, 0, bp), 100));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_int_equal(hv_evtchn_notify(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_guest_pending(&g), 1);
}

/*
 * The kick fd a guest gets feeds a signal that is not its own port's: the
 * spare while unbound, the peer's once bound.  Where wait ends take fds
 * (a kernel before 6.16, as hv_evtchn_test_rights makes them), the guest
 * can park a file whose release takes seconds on that signal's wait end
 * and drop its copies: closing the channel must leave that file to the
 * closing thread (it runs with hv->lock held) in both cases, the flag
 * having moved with the signal from the peer to the survivor's spare.
 */
static void test_close_with_guest_file_on_kick(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	int keep[2], victim, kick_dup;
	evtchn_port_t bp;
	uint64_t t0;

	alarm(30);
	for (int bound = 0; bound < 2; bound++) {
		hv_evtchn_test_rights = true;
		assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
		hv_evtchn_test_rights = false;
		if (bound) {
			assert_int_equal(
			    hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
			assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
		}
		assert_int_equal(hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd,
						     &g.kick_fd, &g.self_fd),
				 0);
		kick_dup = dup(g.kick_fd); /* the guest's own copy */
		victim = lingering_socket(3, keep);
		assert_int_equal(send_fd(kick_dup, victim), 0);
		close(victim);
		close(kick_dup);
		t0 = now_ms();
		assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, g.port), 0);
		if (bound)
			assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
		assert_true(now_ms() - t0 < 1000);
		close(keep[1]);
		close(keep[0]);
	}
	alarm(0);
}

/* Is @fd's pipe at end of file (every write end released)? Waits up to @ms. */
static bool pipe_eof(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char b;

	/* no writer left: POLLHUP, and read() answers 0 */
	return poll(&pfd, 1, ms) == 1 && read(fd, &b, 1) == 0;
}

/*
 * A kernel before 6.16 (no SO_PASSRIGHTS) lets a guest send fds to the
 * wait end of a channel dom0 drains: pending() must not receive them
 * (that would release the files in the draining thread, maybe for as
 * long as the guest likes) but answer -EBADMSG and leave them queued,
 * after taking the plain kicks before them; closing the channel
 * releases them, on hv's closing thread.
 */
static void test_fds_kept_out_without_passrights(void **state)
{
	struct fx *f = *state;
	struct hv_evtchn_guest g = {0};
	evtchn_port_t bp;
	int pfd[2];

	hv_evtchn_test_rights = true; /* signals as on a kernel before 6.16 */
	assert_int_equal(hv_evtchn_alloc_unbound(f->hv, f->g.domid, 0, &g.port), 0);
	hv_evtchn_test_rights = false;
	assert_int_equal(
	    hv_evtchn_guest_fds(f->hv, f->g.domid, g.port, &g.wait_fd, &g.kick_fd, &g.self_fd), 0);
	/* the guest's own copies (hv's close later on its closing thread) */
	g.wait_fd = dup(g.wait_fd);
	g.kick_fd = dup(g.kick_fd);
	g.self_fd = dup(g.self_fd);
	assert_int_equal(hv_evtchn_bind_interdomain(f->hv, 0, f->g.domid, g.port, &bp), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	/* plain kicks are taken as ever: a storm's worth in one call */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 1);
	assert_false(readable(hv_evtchn_fd(f->hv, 0, bp), 0));
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), 0);

	assert_int_equal(pipe2(pfd, O_NONBLOCK), 0);
	assert_int_equal(hv_evtchn_guest_notify(&g), 0);
	assert_int_equal(send_fd(g.kick_fd, pfd[1]), 0); /* the kernel lets it */
	close(pfd[1]);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), -EBADMSG);
	assert_int_equal(hv_evtchn_pending(f->hv, 0, bp), -EBADMSG);
	assert_true(readable(hv_evtchn_fd(f->hv, 0, bp), 0)); /* still queued */
	assert_false(pipe_eof(pfd[0], 0));		      /* and the file not released */
	/* the channel's last port closes: the file goes, off this thread */
	assert_int_equal(hv_evtchn_close(f->hv, 0, bp), 0);
	assert_int_equal(hv_evtchn_close(f->hv, f->g.domid, g.port), 0);
	close(g.wait_fd);
	close(g.kick_fd);
	close(g.self_fd);
	assert_true(pipe_eof(pfd[0], 2000));
	close(pfd[0]);
}

/* The signals' primitives: a full queue is "pending anyway", a bad fd an error. */
static void test_sig_primitives(void **state)
{
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(hv_evtchn_sig_take(sv[0]), 0);
	assert_int_equal(hv_evtchn_sig_send(sv[1]), 1);
	assert_int_equal(hv_evtchn_sig_send(sv[1]), 1);
	assert_int_equal(hv_evtchn_sig_take(sv[0]), 2);
	assert_int_equal(hv_evtchn_sig_take(sv[0]), 0);
	assert_true(fill(sv[1]) > 0);
	assert_int_equal(hv_evtchn_sig_send(sv[1]), 0);
	assert_true(hv_evtchn_sig_take(sv[0]) > 0);
	close(sv[0]);
	assert_true(hv_evtchn_sig_send(sv[1]) < 0); /* no receiver: reported, no SIGPIPE */
	close(sv[1]);
	assert_int_equal(hv_evtchn_sig_send(sv[1]), -EBADF); /* the error itself */
	assert_int_equal(hv_evtchn_sig_take(sv[0]), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_edge, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_notify_during_eoi, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mask_unmask, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unmask_unmasked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_close_unbinds_peer, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_ports, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exhaustion_and_loopback, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_fds, setup, teardown),
	    cmocka_unit_test(test_channel_budget),
	    cmocka_unit_test(test_port_counts),
	    cmocka_unit_test(test_channel_of_destroyed_domain),
	    cmocka_unit_test_setup_teardown(test_guest_cannot_pass_fds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_close_with_guest_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_fds_while_bound, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_stats_reset_on_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_close_with_guest_file_on_kick, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fds_kept_out_without_passrights, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_guest_blocking_fds, setup, teardown),
	    cmocka_unit_test(test_sig_primitives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
