// SPDX-License-Identifier: MIT
/* attach.c - pvnet attach: set up the domain, vif and TAP, run the queue threads, detach */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "cliarg.h"
#include "common/mac.h"
#include "uplink/tap.h"

/* Default L3 MTU: Ethernet's.  Bigger frames use TSO rather than a big MTU. */
#define ATTACH_DEFAULT_MTU 1500u

/* Largest MTU without feature-sg: one 4 KiB slot holds the whole frame. */
#define ATTACH_MAX_MTU_NO_SG (PVNET_PAGE_SIZE - UPLINK_ETH_HLEN)

/*
 * TX buffers (pages) of the whole vif, split over its queues (each gets at
 * least PVNET_MAX_FRAGS, one largest frame): 256 pages, 1 MiB.  With grant
 * mapping a page is ours again only when the receiver has copied it, so
 * this bounds what we have in flight to half of netback's per-queue RX
 * bound (rx_queue_max_bytes, 2 MiB).  Beyond that bound netback drops
 * (the switch has no backpressure), and TCP sees loss and reordering; the
 * TAP's own queue is a far better place for the excess.  Measured in
 * docs/tap.md: with netback's former 512 KiB bound, 256 pages lost ~4 % of
 * the TSO frames and 64 none; with the 2 MiB bound, 256 pages give 0
 * retransmits and TCPOFOQueue 0 with 1 and 4 streams.  Each queue gets
 * ATTACH_READ_PAGES more for the stash its next readv() fills, which are
 * never in flight (within the ring's 256: with one queue they come out of
 * the budget).
 */
#define ATTACH_TX_BUDGET 256u

/* Guest pages beyond the queues' (2 rings + TX + RX buffers each): slack for grants of our own. */
#define ATTACH_EXTRA_PAGES 64u

static void attach_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: pvnet [-d DIR] attach --netns NS --ifname NAME [--mac MAC] [--queues N]\n"
	    "                            [--mtu MTU] [--no-offload] [--run-dir DIR]\n"
	    "Become a frontend domain of pvnetd whose guest is the kernel stack of network\n"
	    "namespace NS (created if absent): a TAP NAME in NS carries the vif's frames,\n"
	    "with the vif's MAC.  Runs until SIGINT/SIGTERM, then prints its counters.\n"
	    "  --queues N   vif and TAP queues, 1..16 (default 1; one thread each)\n"
	    "  --mtu MTU    the TAP's MTU, 68..65521 (default 1500; over 4082 needs feature-sg)\n"
	    "  --no-offload negotiate no checksum or segmentation offload, as a netfront\n"
	    "               without them: pvnetd then fills in checksums and segments for us\n"
	    "\n"
	    "Exit status: 0 detached on a signal or because NS was deleted, 1 pvnetd could\n"
	    "not be reached or refused, the backend disconnected or a queue failed, 2 usage;\n"
	    "a signal before the TAP exists ends it at once, as the signal's.\n");
}

/*
 * A name the kernel takes for a new interface (its dev_valid_name()), and
 * no '%', which TUNSETIFF would take as a pattern to number.
 */
static bool ifname_ok(const char *n)
{
	size_t len = strlen(n);

	if (!len || len >= IF_NAMESIZE || !strcmp(n, ".") || !strcmp(n, ".."))
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] == '/' || n[i] == ':' || n[i] == '%' || (unsigned char)n[i] <= ' ' ||
		    n[i] == 0x7f)
			return false;
	return true;
}

/* A decimal number of @lo..@hi, digits only (no sign, no spaces); -1 if not. */
static long parse_num(const char *s, unsigned long lo, unsigned long hi)
{
	unsigned long v;

	return cliarg_ulong(s, lo, hi, &v) < 0 ? -1 : (long)v;
}

static uint32_t feats2offloads(uint32_t f)
{
	uint32_t off = 0;

	if (f & PVNET_F_CSUM)
		off |= UPLINK_OFF_CSUM4;
	if (f & PVNET_F_IPV6_CSUM)
		off |= UPLINK_OFF_CSUM6;
	/* GSO frames are bigger than a page: they need scatter-gather too. */
	if ((f & PVNET_F_SG) && (f & PVNET_F_GSO_TCPV4) && (f & PVNET_F_CSUM))
		off |= UPLINK_OFF_TSO4;
	if ((f & PVNET_F_SG) && (f & PVNET_F_GSO_TCPV6) && (f & PVNET_F_IPV6_CSUM))
		off |= UPLINK_OFF_TSO6;
	return off;
}

static int threads_start(struct attach *a)
{
	uint64_t v;

	atomic_store_explicit(&a->stop, false, memory_order_release);
	while (read(a->stop_fd, &v, sizeof(v)) > 0) /* drain (non-blocking) */
		;
	for (unsigned int i = 0; i < a->nq; i++) {
		int rc = pthread_create(&a->q[i].thread, NULL, attach_queue_thread, &a->q[i]);
		char name[24];

		if (rc)
			return -rc;
		a->q[i].running = true;
		/* "attach-q0": which queue a thread serves, in top -H and perf (15 characters) */
		snprintf(name, sizeof(name), "attach-q%u", i);
		name[15] = '\0';
		(void)pthread_setname_np(a->q[i].thread, name);
	}
	return 0;
}

static void threads_stop(struct attach *a)
{
	atomic_store_explicit(&a->stop, true, memory_order_release);
	if (write(a->stop_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
		/* Only on counter overflow, and then it is readable already. */
	}
	for (unsigned int i = 0; i < a->nq; i++) {
		if (a->q[i].running)
			pthread_join(a->q[i].thread, NULL);
		a->q[i].running = false;
	}
}

/* Most counters pvnet_queue_stats() reports (it has 10; room to grow). */
#define ATTACH_VIF_STATS 32u

/* libpvnet's per-queue counters, summed over the queues. */
static void print_vif_stats(struct attach *a)
{
	struct pvnet_stat st[ATTACH_VIF_STATS];
	uint64_t sum[ATTACH_VIF_STATS] = {0};
	int n = 0;

	for (unsigned int i = 0; i < a->nq; i++) {
		n = pvnet_queue_stats(a->vif, i, st, ATTACH_VIF_STATS);
		if (n < 0)
			return;
		if (n > (int)ATTACH_VIF_STATS)
			n = (int)ATTACH_VIF_STATS;
		for (int k = 0; k < n; k++)
			sum[k] += st[k].value;
	}
	for (int k = 0; k < n; k++)
		printf("     vif_%s: %llu\n", st[k].name, (unsigned long long)sum[k]);
}

static void print_stats(struct attach *a)
{
	struct attach_stats t = {0};

	for (unsigned int i = 0; i < a->nq; i++) {
		const struct attach_stats *s = &a->q[i].st;

		t.tap_rx_packets += s->tap_rx_packets;
		t.tap_rx_bytes += s->tap_rx_bytes;
		for (unsigned int r = 0; r < UPLINK_DROP_NR; r++)
			t.tap_rx_drops[r] += s->tap_rx_drops[r];
		t.tap_rx_send_errors += s->tap_rx_send_errors;
		t.tap_rx_sw_csum += s->tap_rx_sw_csum;
		t.tap_rx_linearized += s->tap_rx_linearized;
		t.tap_rx_held += s->tap_rx_held;
		t.tap_tx_packets += s->tap_tx_packets;
		t.tap_tx_bytes += s->tap_tx_bytes;
		t.tap_tx_dropped += s->tap_tx_dropped;
		t.tap_tx_bad_offload += s->tap_tx_bad_offload;
	}
	printf("counters (%s%u queue%s):\n", a->nq > 1 ? "all " : "", a->nq, a->nq > 1 ? "s" : "");
	printf("     tap_rx_packets: %llu\n     tap_rx_bytes: %llu\n",
	       (unsigned long long)t.tap_rx_packets, (unsigned long long)t.tap_rx_bytes);
	for (unsigned int r = 0; r < UPLINK_DROP_NR; r++)
		printf("     tap_%s: %llu\n", uplink_drop_name((enum uplink_drop)r),
		       (unsigned long long)t.tap_rx_drops[r]);
	printf("     tap_rx_send_errors: %llu\n     tap_rx_sw_csum: %llu\n"
	       "     tap_rx_linearized: %llu\n     tap_rx_held: %llu\n",
	       (unsigned long long)t.tap_rx_send_errors, (unsigned long long)t.tap_rx_sw_csum,
	       (unsigned long long)t.tap_rx_linearized, (unsigned long long)t.tap_rx_held);
	printf("     tap_tx_packets: %llu\n     tap_tx_bytes: %llu\n     tap_tx_dropped: %llu\n"
	       "     tap_tx_bad_offload: %llu\n",
	       (unsigned long long)t.tap_tx_packets, (unsigned long long)t.tap_tx_bytes,
	       (unsigned long long)t.tap_tx_dropped, (unsigned long long)t.tap_tx_bad_offload);
	print_vif_stats(a);
	fflush(stdout);
}

/*
 * The backend's link state (its "carrier" key, netif.h) onto the TAP's
 * carrier, so that the namespace sees the link go down (NO-CARRIER) while
 * pvnetd has it off, e.g. after this vif's RX stalled, and come back.
 */
static void follow_carrier(struct attach *a)
{
	bool on = pvnet_vif_carrier(a->vif);
	int rc;

	if (on == a->carrier)
		return;
	rc = uplink_tap_carrier(a->q[0].tap_fd, on);
	if (rc < 0) {
		fprintf(stderr, "pvnet attach: setting the TAP's carrier %s: %s\n",
			on ? "on" : "off", strerror(-rc));
		return;
	}
	a->carrier = on;
	fprintf(stderr, "pvnet attach: carrier %s (%s)\n", on ? "on" : "off",
		on ? "the backend's link is up again" : "the backend says the link is down");
}

/*
 * The namespace changed the TAP's MTU (ip link set NAME mtu N): frames up
 * to the new MTU are the namespace's to send, as far as the vif carries
 * them; the queue threads read it per frame.
 */
static void follow_mtu(struct attach *a)
{
	uint32_t mtu, old = atomic_load_explicit(&a->mtu, memory_order_relaxed);
	int rc = uplink_link_watch_mtu(a->link_fd, a->ifindex, &mtu);

	if (rc < 0 && rc != -ENODEV) {
		/* Never seen; stop watching rather than spin on a socket that stays readable. */
		fprintf(stderr,
			"pvnet attach: link notifications: %s; the MTU is no longer followed\n",
			strerror(-rc));
		close(a->link_fd);
		a->link_fd = -1;
		return;
	}
	if (rc < 0 || mtu == old)
		return; /* gone: the queue threads see it on their TAP */
	if (mtu > a->max_mtu) {
		fprintf(stderr,
			"pvnet attach: MTU %u set in the namespace; the vif carries frames up to "
			"MTU %u: bigger ones are dropped (tap_rx_oversize)\n",
			mtu, a->max_mtu);
		mtu = a->max_mtu;
		if (mtu == old)
			return;
	}
	atomic_store_explicit(&a->mtu, mtu, memory_order_relaxed);
	fprintf(stderr, "pvnet attach: MTU now %u\n", mtu);
}

/*
 * Whether our namespace's name still names it: after the watch on
 * /run/netns is in place, so that a deletion while we set up (before the
 * watch) is seen too.  Not known (no inode taken): yes.
 */
static bool netns_still_there(const struct attach *a)
{
	char path[sizeof("/run/netns/") + UPLINK_NETNS_MAX];
	struct stat st;

	if (!a->ns_ino)
		return true;
	snprintf(path, sizeof(path), "/run/netns/%s", a->netns);
	return stat(path, &st) == 0 && st.st_dev == a->ns_dev && st.st_ino == a->ns_ino;
}

/* Whether the inotify events on /run/netns say our namespace was deleted. */
static bool netns_deleted(struct attach *a)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool gone = false;
	ssize_t n;

	while ((n = read(a->ns_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			if (ev->len && !strcmp(ev->name, a->netns))
				gone = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return gone;
}

/* Main thread: wait for a signal, a vif control event or a failed queue thread. */
static int attach_run(struct attach *a, int sig_fd)
{
	follow_carrier(a);
	for (;;) {
		struct pollfd pfd[5] = {{.fd = sig_fd, .events = POLLIN},
					{.fd = pvnet_vif_control_fd(a->vif), .events = POLLIN},
					{.fd = a->fail_fd, .events = POLLIN},
					{.fd = a->link_fd, .events = POLLIN},
					{.fd = a->ns_fd, .events = POLLIN}};
		struct signalfd_siginfo si;
		int rc;

		if (poll(pfd, 5, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents) {
			if (read(sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				fprintf(stderr,
					"pvnet attach: signal %u, detaching (again to stop at "
					"once)\n",
					si.ssi_signo);
			return 0;
		}
		if (pfd[4].revents && netns_deleted(a)) {
			fprintf(stderr, "pvnet attach: namespace %s was deleted, detaching\n",
				a->netns);
			return 0;
		}
		if (pfd[3].revents)
			follow_mtu(a);
		if (!pfd[1].revents && !pfd[2].revents)
			continue;
		/* Control calls may not overlap data calls: park the queue threads. */
		threads_stop(a);
		rc = pvnet_vif_process(a->vif);
		if (rc == XenbusStateConnected) {
			/* Still connected: a queue thread that failed hit its TAP (or -EIO). */
			for (unsigned int i = 0; i < a->nq; i++) {
				if (!a->q[i].error)
					continue;
				fprintf(stderr, "pvnet attach: queue %u stopped: %s%s%s\n", i,
					strerror(-a->q[i].error),
					pvnet_vif_error(a->vif) ? ": " : "",
					pvnet_vif_error(a->vif) ? pvnet_vif_error(a->vif) : "");
				return a->q[i].error;
			}
		}
		if (rc < 0 || rc != XenbusStateConnected) {
			fprintf(stderr, "pvnet attach: the backend disconnected (%s)%s%s\n",
				rc < 0 ? strerror(-rc) : "state closed",
				pvnet_vif_backend_error(a->vif) ? ": " : "",
				pvnet_vif_backend_error(a->vif) ? pvnet_vif_backend_error(a->vif)
								: "");
			return rc < 0 ? rc : -ENOTCONN;
		}
		follow_carrier(a);
		if (read(a->fail_fd, &(uint64_t){0}, sizeof(uint64_t)) < 0) {
			/* Not readable: a control event, not a failure. */
		}
		rc = threads_start(a);
		if (rc < 0)
			return rc;
	}
}

/* The command line of `pvnet attach` (see attach_usage()). */
struct attach_opts {
	const char *netns;
	const char *ifname;
	const char *run_dir;
	unsigned int queues;
	uint32_t mtu;
	bool have_mac;
	bool no_offload;
	uint8_t mac[6];
};

static int parse_opts(int argc, char **argv, struct attach_opts *o)
{
	static const struct option opts[] = {
	    {"netns", required_argument, NULL, 'n'},
	    {"ifname", required_argument, NULL, 'i'},
	    {"mac", required_argument, NULL, 'm'},
	    {"queues", required_argument, NULL, 'q'},
	    {"mtu", required_argument, NULL, 'M'},
	    {"run-dir", required_argument, NULL, 'd'},
	    {"no-offload", no_argument, NULL, 'O'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:i:m:q:M:d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->netns = optarg;
			break;
		case 'i':
			o->ifname = optarg;
			break;
		case 'm':
			if (mac_parse_guest(optarg, o->mac) < 0) {
				fprintf(stderr, "pvnet attach: --mac %s: not a unicast MAC\n",
					optarg);
				return 2;
			}
			o->have_mac = true;
			break;
		case 'q':
			v = parse_num(optarg, 1, PVNET_MAX_QUEUES);
			if (v < 0) {
				fprintf(stderr, "pvnet attach: --queues must be 1..%u\n",
					PVNET_MAX_QUEUES);
				return 2;
			}
			o->queues = (unsigned int)v;
			break;
		case 'M':
			v = parse_num(optarg, UPLINK_MIN_MTU, UPLINK_MAX_MTU);
			if (v < 0) {
				fprintf(stderr, "pvnet attach: --mtu must be %u..%u\n",
					UPLINK_MIN_MTU, UPLINK_MAX_MTU);
				return 2;
			}
			o->mtu = (uint32_t)v;
			break;
		case 'd':
			o->run_dir = optarg;
			break;
		case 'O':
			o->no_offload = true;
			break;
		case 'h':
			attach_usage(stdout);
			return 0;
		default:
			attach_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !o->netns || !o->ifname) {
		if (optind != argc)
			fprintf(stderr, "pvnet attach: unexpected argument '%s'\n", argv[optind]);
		else
			fprintf(stderr, "pvnet attach: %s is required\n",
				!o->netns ? "--netns" : "--ifname");
		attach_usage(stderr);
		return 2;
	}
	/* Before pvnetd is asked for anything. */
	if (!uplink_netns_name_ok(o->netns)) {
		fprintf(stderr,
			"pvnet attach: --netns '%s': not a namespace name (1..%u bytes, no '/', "
			"spaces or control characters, not . or ..)\n",
			o->netns, UPLINK_NETNS_MAX);
		return 2;
	}
	if (!ifname_ok(o->ifname)) {
		fprintf(stderr,
			"pvnet attach: --ifname '%s': not an interface name (1..%u bytes, no '/', "
			"':', '%%', spaces or control characters, not . or ..)\n",
			o->ifname, IF_NAMESIZE - 1);
		return 2;
	}
	return -1;
}

/* Create the TAP in the namespace and configure it; the thread comes back out. */
static int tap_setup(struct attach *a, const struct attach_opts *o, const uint8_t mac[6])
{
	int fds[PVNET_MAX_QUEUES], saved, rc;
	struct stat st;

	rc = uplink_netns_enter(o->netns, &a->ns_created, &saved);
	if (rc < 0) {
		fprintf(stderr, "pvnet attach: namespace %s: %s\n", o->netns, strerror(-rc));
		return rc;
	}
	if (stat("/proc/thread-self/ns/net", &st) == 0) {
		a->ns_dev = st.st_dev;
		a->ns_ino = st.st_ino;
	}
	/* Exclusive: never share another adapter's TAP, or take over a device of the namespace. */
	rc = uplink_tap_open(o->ifname, a->nq, true, fds);
	if (rc == -EBUSY)
		fprintf(stderr, "pvnet attach: namespace %s has an interface %s already\n",
			o->netns, o->ifname);
	else if (rc < 0)
		fprintf(stderr, "pvnet attach: TAP %s: %s\n", o->ifname, strerror(-rc));
	if (rc < 0)
		goto out_leave;
	rc = uplink_tap_offloads(fds[0], a->offloads);
	if (rc == 0)
		rc = uplink_tap_link_set(o->ifname, mac, o->mtu);
	if (rc == 0)
		rc = uplink_link_index(o->ifname, &a->ifindex);
	if (rc == 0) {
		/* Created in the namespace, it stays there: the MTU the namespace sets. */
		a->link_fd = uplink_link_watch();
		rc = a->link_fd < 0 ? a->link_fd : 0;
	}
	if (rc < 0) {
		fprintf(stderr, "pvnet attach: configuring %s: %s\n", o->ifname, strerror(-rc));
		uplink_tap_close(fds, a->nq);
		goto out_leave;
	}
	for (unsigned int i = 0; i < a->nq; i++)
		a->q[i].tap_fd = fds[i];
out_leave:
	if (uplink_netns_leave(saved) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* The vif's configuration for @queues queues. */
static void vif_config(struct pvnet_vif_config *cfg, const struct attach_opts *o,
		       unsigned int queues)
{
	pvnet_vif_config_default(cfg);
	cfg->queues = queues;
	/* Each queue's budget in flight, plus the stash its next read fills (never in flight). */
	cfg->tx_buffers = ATTACH_TX_BUDGET / queues > PVNET_MAX_FRAGS ? ATTACH_TX_BUDGET / queues
								      : PVNET_MAX_FRAGS;
	cfg->tx_buffers += ATTACH_READ_PAGES;
	if (cfg->tx_buffers > PVNET_RING_SIZE)
		cfg->tx_buffers = PVNET_RING_SIZE;
	if (o->have_mac)
		memcpy(cfg->mac, o->mac, sizeof(cfg->mac));
	if (o->no_offload)
		cfg->features &= ~(uint32_t)(PVNET_F_CSUM | PVNET_F_IPV6_CSUM | PVNET_F_GSO_TCPV4 |
					     PVNET_F_GSO_TCPV6);
}

/*
 * The vif, with the queues pvnetd gives: the TX budget is split over the
 * queues, so a vif granted fewer than asked for is made again with that
 * many, or each of its queues would have a fraction of the budget.
 */
static int vif_create(struct attach *a, struct pvnet_domain *dom, const struct attach_opts *o)
{
	struct pvnet_vif_config cfg;
	unsigned int got;
	int rc;

	vif_config(&cfg, o, o->queues);
	rc = pvnet_vif_create(dom, &cfg, &a->vif);
	if (rc < 0)
		return rc;
	got = pvnet_vif_queues(a->vif);
	if (got >= o->queues)
		return 0;
	fprintf(stderr, "pvnet attach: pvnetd gives %u of the %u queues asked for\n", got,
		o->queues);
	pvnet_vif_destroy(a->vif);
	a->vif = NULL;
	vif_config(&cfg, o, got);
	return pvnet_vif_create(dom, &cfg, &a->vif);
}

/* After the first signal, or once detaching: another SIGINT or SIGTERM ends us at once. */
static void signals_default(void)
{
	sigset_t mask;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
}

int attach_main(int argc, char **argv, const char *run_dir)
{
	struct attach_opts o = {.run_dir = run_dir, .queues = 1, .mtu = ATTACH_DEFAULT_MTU};
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom = NULL;
	struct attach *a;
	char name[UPLINK_NETNS_MAX + IF_NAMESIZE + 2];
	uint8_t mac[6];
	sigset_t mask;
	bool attached = false;
	int rc, sig_fd = -1, status = 1;

	rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	a = calloc(1, sizeof(*a));
	if (!a)
		return 1;
	a->netns = o.netns;
	a->link_fd = a->ns_fd = -1;
	atomic_init(&a->mtu, o.mtu);
	a->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	a->fail_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	for (unsigned int i = 0; i < PVNET_MAX_QUEUES; i++)
		a->q[i] = (struct attach_queue){.a = a, .idx = i, .tap_fd = -1};
	if (a->stop_fd < 0 || a->fail_fd < 0)
		goto out_free;

	/* Our counters to a closed pipe (| head) must not kill us before we detach. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * SIGINT and SIGTERM go to the signalfd once blocked, before the TAP
	 * and any thread exist (below).  Until then they end us at once, as
	 * any command: there is nothing to detach yet (pvnetd releases the
	 * domain when our connection closes), and a pvnetd that does not
	 * answer must not make an interrupt wait for libpvnet's timeout.
	 * Ignored by whoever started us (a script's background job ignores
	 * SIGINT) or not: they are ours to act on, as the signalfd's later.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0)
		goto out_free;

	vif_config(&cfg, &o, o.queues);
	rc = pvnet_domain_create(
	    o.run_dir, o.queues * (2 + cfg.tx_buffers + cfg.rx_buffers) + ATTACH_EXTRA_PAGES, &dom);
	if (rc < 0) {
		fprintf(stderr, "pvnet attach: cannot become a domain of pvnetd at %s: %s%s\n",
			o.run_dir ? o.run_dir : PVNET_RUN_DIR_DEFAULT, strerror(-rc),
			rc == -EACCES
			    ? " (the socket is pvnetd's user's: run as that user, or root)"
			: rc == -ENOENT || rc == -ECONNREFUSED ? " (is pvnetd running?)"
							       : "");
		goto out_free;
	}
	/*
	 * The domain is called NS:IFNAME (pvnet status, the store's name key).
	 * Taken: another adapter already serves that interface.  A namespace
	 * name outside the characters of a domain name only goes without.
	 */
	snprintf(name, sizeof(name), "%s:%s", o.netns, o.ifname);
	rc = pvnet_domain_set_name(dom, name);
	if (rc == -EEXIST) {
		fprintf(stderr, "pvnet attach: %s is attached already (pvnet status)\n", name);
		goto out_dom;
	}
	if (rc < 0)
		fprintf(stderr, "pvnet attach: the domain goes without a name (%s: %s)\n", name,
			strerror(-rc));
	rc = vif_create(a, dom, &o);
	if (rc < 0) {
		fprintf(stderr, "pvnet attach: vif: %s%s%s\n", strerror(-rc),
			pvnet_domain_vif_error(dom) ? ": the backend says " : "",
			pvnet_domain_vif_error(dom) ? pvnet_domain_vif_error(dom) : "");
		goto out_dom;
	}
	a->nq = pvnet_vif_queues(a->vif);
	a->offloads = feats2offloads(pvnet_vif_features(a->vif));
	a->max_mtu =
	    pvnet_vif_features(a->vif) & PVNET_F_SG ? UPLINK_MAX_MTU : ATTACH_MAX_MTU_NO_SG;
	a->carrier = true; /* a new TAP has carrier */
	if (o.mtu > a->max_mtu) {
		fprintf(stderr, "pvnet attach: MTU %u needs feature-sg, not negotiated\n", o.mtu);
		goto out_vif;
	}
	pvnet_vif_mac(a->vif, mac);
	for (unsigned int i = 0; i < a->nq; i++) {
		a->q[i].lin = malloc(UPLINK_MAX_FRAME);
		if (!a->q[i].lin)
			goto out_vif;
	}
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (tap_setup(a, &o, mac) < 0)
		goto out_vif;
	a->ns_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (a->ns_fd < 0 ||
	    inotify_add_watch(a->ns_fd, "/run/netns", IN_DELETE | IN_MOVED_FROM) < 0)
		fprintf(stderr,
			"pvnet attach: cannot watch /run/netns (%s): deleting namespace %s "
			"will not detach us\n",
			strerror(errno), o.netns);
	if (!netns_still_there(a)) {
		/* As a deletion seen later: detached, exit 0. */
		fprintf(stderr, "pvnet attach: namespace %s was deleted while we attached\n",
			o.netns);
		a->ns_created = false; /* gone already */
		status = 0;
		goto out_threads;
	}
	if (threads_start(a) < 0) {
		fprintf(stderr, "pvnet attach: cannot start the queue threads\n");
		goto out_threads;
	}
	printf("attached: %s in netns %s, domain %u, mac %02x:%02x:%02x:%02x:%02x:%02x, %u "
	       "queue%s, offloads%s%s%s%s, mtu %u\n",
	       o.ifname, o.netns, pvnet_domain_id(dom), mac[0], mac[1], mac[2], mac[3], mac[4],
	       mac[5], a->nq, a->nq == 1 ? "" : "s", a->offloads & UPLINK_OFF_CSUM4 ? " csum4" : "",
	       a->offloads & UPLINK_OFF_CSUM6 ? " csum6" : "",
	       a->offloads & UPLINK_OFF_TSO4 ? " tso4" : "",
	       a->offloads & UPLINK_OFF_TSO6 ? " tso6" : "", o.mtu);
	fflush(stdout);
	attached = true;
	status = attach_run(a, sig_fd) < 0 ? 1 : 0;
	/* Detaching is bounded (libpvnet's timeouts), but nobody need wait for it. */
	signals_default();
out_threads:
	threads_stop(a);
	print_stats(a);
	for (unsigned int i = 0; i < a->nq; i++)
		attach_queue_release(&a->q[i]);
	for (unsigned int i = 0; i < a->nq; i++)
		uplink_tap_close(&a->q[i].tap_fd, 1); /* the last queue closed removes the TAP */
out_vif:
	pvnet_vif_destroy(a->vif);
out_dom:
	pvnet_domain_destroy(dom);
	/* A namespace made for an attach that never ran goes again. */
	if (!attached && a->ns_created && uplink_netns_delete(o.netns) < 0)
		fprintf(stderr, "pvnet attach: could not remove namespace %s again\n", o.netns);
out_free:
	for (unsigned int i = 0; i < PVNET_MAX_QUEUES; i++)
		free(a->q[i].lin);
	if (a->link_fd >= 0)
		close(a->link_fd);
	if (a->ns_fd >= 0)
		close(a->ns_fd);
	if (sig_fd >= 0)
		close(sig_fd);
	if (a->stop_fd >= 0)
		close(a->stop_fd);
	if (a->fail_fd >= 0)
		close(a->fail_fd);
	free(a);
	return status;
}
