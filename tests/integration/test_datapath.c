// SPDX-License-Identifier: MIT
/* test_datapath.c - frontend processes through a real pvnetd: death mid-stream, drop accounting, churn */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <pvnet/pvnet.h>
#include <xenstore.h>

#include "common/ctlmsg.h"
#include "../common/group_run.h"
#include "itest.h"

/*
 * Every frontend here is a process of its own, as a guest is: senders are
 * forked children that report through a pipe; receivers live in the test
 * process.  pvnetd's view comes from its control socket ("status"), as
 * `pvnet show` reads it.  Frames are unicast to the receiver's MAC, which
 * the switch learns from one frame the receiver sends first.
 */

static const char *pvnetd_path;
static struct itest T;
#define run_dir T.run_dir

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static json_t *status(void)
{
	return itest_status(&T);
}

static long long status_get(const char *a, const char *b)
{
	return itest_status_get(&T, a, b);
}

/* Sum counter @name over every queue of the vif named @vif ("vif3.0"); -1 if no such vif. */
static long long vif_counter(const char *vif, const char *name)
{
	json_t *s = status(), *v, *q;
	long long sum = -1;
	size_t i, j;

	json_array_foreach(json_object_get(s, "vifs"), i, v)
	{
		if (strcmp(json_string_value(json_object_get(v, "name")), vif))
			continue;
		sum = 0;
		json_array_foreach(json_object_get(v, "queues"), j, q)
		{
			sum += json_integer_value(json_object_get(q, name));
		}
	}
	json_decref(s);
	return sum;
}

struct rx_side {
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	uint8_t mac[6];
	char name[32];
};

static void rx_open(struct rx_side *r)
{
	struct pvnet_vif_config cfg;

	assert_int_equal(pvnet_domain_create(run_dir, 2048, &r->dom), 0);
	pvnet_vif_config_default(&cfg);
	cfg.queues = 1;
	assert_int_equal(pvnet_vif_create(r->dom, &cfg, &r->vif), 0);
	pvnet_vif_mac(r->vif, r->mac);
	snprintf(r->name, sizeof(r->name), "vif%u.0", pvnet_domain_id(r->dom));
}

static void rx_close(struct rx_side *r)
{
	pvnet_vif_destroy(r->vif);
	pvnet_domain_destroy(r->dom);
}

static void make_frame(uint8_t *f, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		       uint32_t seq)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88; /* IEEE local experimental ethertype */
	f[13] = 0xb5;
	memcpy(f + 14, &seq, sizeof(seq));
	for (uint32_t i = 18; i < len; i++)
		f[i] = (uint8_t)(seq * 7 + i);
}

static bool frame_ok(const uint8_t *f, uint32_t len, uint32_t *seq)
{
	if (len < 18)
		return false;
	memcpy(seq, f + 14, sizeof(*seq));
	for (uint32_t i = 18; i < len; i++)
		if (f[i] != (uint8_t)(*seq * 7 + i))
			return false;
	return true;
}

/* Let the switch learn @r's MAC: one broadcast frame from it. */
static void rx_announce(struct rx_side *r)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t f[64];
	struct pvnet_pkt p = {.data = f, .len = sizeof(f)};

	make_frame(f, sizeof(f), bcast, r->mac, 0);
	assert_int_equal(pvnet_send(r->vif, 0, &p, 1), 1);
}

/* Receive what is there now; returns frames received and checks each one. */
static unsigned int rx_drain(struct rx_side *r, unsigned int *bad, uint32_t *last_seq)
{
	static uint8_t buf[64 * 2048];
	struct pvnet_pkt pk[64];
	int n = pvnet_recv(r->vif, 0, pk, 64, buf, sizeof(buf));

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		uint32_t seq;

		if (!frame_ok(pk[i].data, pk[i].len, &seq))
			(*bad)++;
		else if (last_seq)
			*last_seq = seq;
	}
	return (unsigned int)n;
}

struct sender_report {
	uint64_t sent;
	int rc;
	char name[32];
};

/*
 * Child: become a domain, tell the parent the vif name, then send @count
 * frames of @len bytes to @dst (0 = until killed), report, and wait to be
 * ended.
 */
static void sender_main(int wfd, const uint8_t dst[6], uint32_t len, uint64_t count)
{
	struct sender_report rep = {0};
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	static uint8_t f[32][2048];
	struct pvnet_pkt pk[32];
	uint8_t mac[6];
	uint32_t seq = 1;

	rep.rc = pvnet_domain_create(run_dir, 2048, &dom);
	if (rep.rc == 0) {
		pvnet_vif_config_default(&cfg);
		cfg.queues = 1;
		rep.rc = pvnet_vif_create(dom, &cfg, &vif);
	}
	if (rep.rc == 0)
		snprintf(rep.name, sizeof(rep.name), "vif%u.0", pvnet_domain_id(dom));
	/* First report: the vif name (or the failure). */
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep) || rep.rc)
		_exit(1);
	pvnet_vif_mac(vif, mac);
	for (uint64_t deadline = now_ms() + 20000;
	     (!count || rep.sent < count) && now_ms() < deadline;) {
		unsigned int n = 32;
		int k;

		if (count && count - rep.sent < n)
			n = (unsigned int)(count - rep.sent);
		for (unsigned int i = 0; i < n; i++) {
			make_frame(f[i], len, dst, mac, seq + i);
			pk[i] = (struct pvnet_pkt){.data = f[i], .len = len};
		}
		k = pvnet_send(vif, 0, pk, n);
		if (k < 0) {
			rep.rc = k;
			break;
		}
		rep.sent += (unsigned int)k;
		seq += (unsigned int)k;
		if ((unsigned int)k < n) {
			struct pollfd pf = {.fd = pvnet_queue_fd(vif, 0), .events = POLLIN};

			poll(&pf, 1, 5);
		}
	}
	if (write(wfd, &rep, sizeof(rep)) != sizeof(rep))
		_exit(1);
	/*
	 * Frames still on our TX ring when the vif goes away were never sent
	 * (netfront drops them at disconnect, as Linux does): stay until the
	 * parent has seen netback take every one, and it ends us.
	 */
	for (;;)
		pause();
}

static pid_t sender_start(const uint8_t dst[6], uint32_t len, uint64_t count, int *rfd,
			  struct sender_report *first)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		sender_main(p[1], dst, len, count);
	}
	close(p[1]);
	*rfd = p[0];
	assert_int_equal(read(p[0], first, sizeof(*first)), sizeof(*first));
	assert_int_equal(first->rc, 0);
	return pid;
}

/*
 * Wait (bounded) until netback took all @sent frames off the sender's TX
 * ring, then end the sender.  Returns the frames netback dropped on TX.
 */
static long long sender_finish(pid_t pid, int rfd, const struct sender_report *first, uint64_t sent)
{
	long long taken = 0, dropped = 0;
	int st;

	for (int i = 0; i < 1000; i++) {
		dropped = vif_counter(first->name, "tx_dropped");
		taken = vif_counter(first->name, "tx_packets") + dropped;
		if (taken >= (long long)sent)
			break;
		usleep(10000);
	}
	assert_int_equal(taken, (long long)sent);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(rfd);
	return dropped;
}

/* Receive on @r until at least @want frames came or @ms passed. */
static unsigned int rx_until(struct rx_side *r, unsigned int want, unsigned int ms,
			     unsigned int *bad)
{
	unsigned int got = 0;

	for (uint64_t end = now_ms() + ms; got < want && now_ms() < end;) {
		unsigned int n = rx_drain(r, bad, NULL);

		got += n;
		if (!n) {
			struct pollfd pf = {.fd = pvnet_queue_fd(r->vif, 0), .events = POLLIN};

			poll(&pf, 1, 5);
		}
	}
	return got;
}

static void test_sender_killed_mid_stream(void **state)
{
	struct rx_side b, d;
	struct sender_report ra, rc_, fin;
	unsigned int bad = 0, got;
	long long destroyed, ev_before, maps_before;
	int fa, fc, st;
	pid_t a, c;

	rx_open(&b);
	rx_open(&d);
	rx_announce(&b);
	rx_announce(&d);
	ev_before = status_get("hv", "evtchns_open");
	maps_before = status_get("hv", "maps_in_use");
	destroyed = status_get("destroyed", "domains");

	a = sender_start(b.mac, 1000, 0, &fa, &ra);  /* A streams to B until told to stop */
	c = sender_start(d.mac, 1000, 0, &fc, &rc_); /* C streams to D, and will be killed */
	assert_true(rx_until(&b, 2000, 5000, &bad) >= 2000);
	assert_true(rx_until(&d, 2000, 5000, &bad) >= 2000);

	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	close(fc);
	/* pvnetd notices the closed control connection and destroys C's domain. */
	for (int i = 0; i < 500 && status_get("destroyed", "domains") < destroyed + 1; i++)
		usleep(10000);
	assert_int_equal(status_get("destroyed", "domains"), destroyed + 1);
	assert_int_equal(vif_counter(rc_.name, "tx_packets"), -1);
	/* Nothing of C stays mapped or bound: only A's, B's and D's rings and ports remain. */
	assert_int_equal(status_get("hv", "zombies"), 0);
	assert_int_equal(status_get("destroyed", "maps_in_use"), 0);

	/* A's traffic carries on after C's death. */
	rx_drain(&b, &bad, NULL);
	got = rx_until(&b, 2000, 5000, &bad);
	assert_true(got >= 2000);

	/* A new frontend attaches and reaches D: all it sent is delivered or counted. */
	{
		struct sender_report re;
		long long d_drops, e_drops;
		unsigned int e_got = 0;
		int fe;
		pid_t e;

		/* C's last frames, until 200 ms of quiet. */
		while (rx_until(&d, 1000000, 200, &bad))
			;
		d_drops = vif_counter(d.name, "rx_dropped") + vif_counter(d.name, "rx_queue_full");
		e = sender_start(d.mac, 1000, 500, &fe, &re);
		assert_int_equal(read(fe, &fin, sizeof(fin)), sizeof(fin));
		assert_int_equal(fin.rc, 0);
		assert_int_equal(fin.sent, 500);
		e_drops = sender_finish(e, fe, &re, fin.sent);
		while ((got = rx_until(&d, 1000000, 200, &bad)))
			e_got += got;
		d_drops = vif_counter(d.name, "rx_dropped") + vif_counter(d.name, "rx_queue_full") -
			  d_drops;
		if ((long long)e_got + d_drops + e_drops != 500) {
			json_t *js = status();

			fprintf(stderr, "# E: got %u, dropped at D %lld, at E %lld; vifs:\n", e_got,
				d_drops, e_drops);
			json_dumpf(json_object_get(js, "vifs"), stderr, JSON_INDENT(1));
			json_decref(js);
		}
		assert_true(e_got > 0);
		assert_int_equal((long long)e_got + d_drops + e_drops, 500);
	}

	kill(a, SIGTERM);
	waitpid(a, &st, 0);
	close(fa);
	assert_int_equal(bad, 0);
	rx_close(&b);
	rx_close(&d);
	for (int i = 0; i < 500 && status_get("hv", "evtchns_open") > ev_before - 4; i++)
		usleep(10000);
	/* Back to where we started, less B's and D's ports and mappings. */
	assert_true(status_get("hv", "maps_in_use") <= maps_before);
	assert_int_equal(status_get("hv", "zombies"), 0);
}

/*
 * A sender that outruns a slow receiver: every frame it got accepted is
 * either delivered or counted under a named drop counter somewhere.
 */
static void test_accounting_slow_receiver(void **state)
{
	const uint64_t count = 20000;
	struct sender_report first, rep;
	unsigned int bad = 0, got = 0, idle = 0, n;
	long long drops, a_drops;
	struct rx_side b;
	int fa;
	pid_t a;

	rx_open(&b);
	rx_announce(&b);
	a = sender_start(b.mac, 1500, count, &fa, &first);
	/* Slow: a few frames per millisecond while the sender runs flat out. */
	for (uint64_t end = now_ms() + 20000; now_ms() < end;) {
		n = rx_drain(&b, &bad, NULL);
		got += n;
		usleep(n ? 2000 : 10000);
		idle = n ? 0 : idle + 1;
		if (idle >= 50) /* 0.5 s without a frame: the stream is over */
			break;
	}
	assert_int_equal(read(fa, &rep, sizeof(rep)), sizeof(rep));
	assert_int_equal(rep.rc, 0);
	assert_int_equal(rep.sent, count);
	a_drops = sender_finish(a, fa, &first, rep.sent);
	while ((n = rx_until(&b, 1000000, 200, &bad)))
		got += n;

	drops = vif_counter(b.name, "rx_dropped") + vif_counter(b.name, "rx_queue_full");
	fprintf(stderr, "# sent %llu, received %u, dropped at B %lld, dropped at A %lld\n",
		(unsigned long long)rep.sent, got, drops, a_drops);
	assert_int_equal(bad, 0);
	assert_true(got > 0);
	assert_int_equal((long long)got + drops + a_drops, (long long)rep.sent);
	rx_close(&b);
}

/* Domain @domid's rx_hold_bytes in status; -1 if status lists no such domain. */
static long long dom_hold(unsigned int domid)
{
	json_t *s = status(), *d;
	long long v = -1;
	size_t i;

	json_array_foreach(json_object_get(s, "domains"), i, d)
	{
		if (json_integer_value(json_object_get(d, "domid")) == domid)
			v = json_integer_value(json_object_get(d, "rx_hold_bytes"));
	}
	json_decref(s);
	return v;
}

/*
 * A guest that takes nothing for a while: the frames for it that wait
 * longer than the hold (20 ms) are copied into a pool of pvnetd's memory,
 * which status shows as the domain's rx_hold_bytes: one queue, one pool,
 * the 8 MiB bound and 174 KiB of bookkeeping (netback.md, Memory).  The
 * pool stays once the guest takes its frames (a pause is not a stall),
 * and goes with the vif.
 */
static void test_rx_hold_in_status(void **state)
{
	struct sender_report first, rep;
	unsigned int bad = 0, domid;
	long long hold = 0;
	struct rx_side b;
	int fa;
	pid_t a;

	(void)state;
	rx_open(&b);
	domid = pvnet_domain_id(b.dom);
	rx_announce(&b);
	assert_int_equal(dom_hold(domid), 0);
	a = sender_start(b.mac, 1000, 3000, &fa, &first);
	/* The pool is charged before the first copy is counted: wait for both. */
	for (int i = 0; i < 500; i++) {
		hold = dom_hold(domid);
		if (hold && vif_counter(b.name, "rx_held_copied") > 0)
			break;
		usleep(10000);
	}
	fprintf(stderr, "# B's hold pools: %lld bytes\n", hold);
	assert_true(vif_counter(b.name, "rx_held_copied") > 0);
	assert_true(hold > 8 << 20 && hold < (8 << 20) + (256 << 10));
	assert_int_equal(read(fa, &rep, sizeof(rep)), sizeof(rep));
	assert_int_equal(rep.rc, 0);
	sender_finish(a, fa, &first, rep.sent);
	while (rx_until(&b, 1000000, 200, &bad))
		;
	assert_int_equal(bad, 0);
	assert_int_equal(vif_counter(b.name, "rx_expired") + vif_counter(b.name, "rx_stalls"), 0);
	assert_int_equal(dom_hold(domid), hold);
	pvnet_vif_destroy(b.vif);
	for (int i = 0; i < 500 && dom_hold(domid) != 0; i++)
		usleep(10000);
	assert_int_equal(dom_hold(domid), 0);
	pvnet_domain_destroy(b.dom);
}

/* What a guest can make pvnetd take, and pvnetd must give back when the guest goes. */
struct held {
	int fds, threads;
	unsigned int nodes;
};

static int dir_entries(const char *path)
{
	struct dirent *e;
	DIR *d = opendir(path);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Nodes of the store below @path, @path included, read as domain 0 reads them. */
static unsigned int store_nodes(struct xs_handle *xs, const char *path)
{
	unsigned int n = 0, count = 1;
	char **kids = xs_directory(xs, XBT_NULL, path, &n), sub[512];

	assert_non_null(kids);
	for (unsigned int i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "", kids[i]);
		count += store_nodes(xs, sub);
	}
	free(kids);
	return count;
}

static struct held held_now(struct xs_handle *xs)
{
	char path[64];
	struct held h;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)T.pid);
	h.fds = dir_entries(path);
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)T.pid);
	h.threads = dir_entries(path);
	h.nodes = store_nodes(xs, "/");
	return h;
}

/* One guest's life: it streams to @b, which receives some; then it is killed or ends. */
static void guest_passes(struct rx_side *b, bool killed)
{
	long long destroyed = status_get("destroyed", "domains");
	struct sender_report first, rep;
	unsigned int bad = 0;
	int fd, st;
	pid_t pid;

	pid = sender_start(b->mac, 1000, killed ? 0 : 3000, &fd, &first);
	assert_true(rx_until(b, 500, 5000, &bad) >= 500);
	if (killed) {
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(fd);
	} else {
		assert_int_equal(read(fd, &rep, sizeof(rep)), sizeof(rep));
		sender_finish(pid, fd, &first, rep.sent);
	}
	while (rx_until(b, 1000000, 100, &bad))
		;
	for (int i = 0; i < 500 && status_get("destroyed", "domains") < destroyed + 1; i++)
		usleep(10000);
	assert_int_equal(status_get("destroyed", "domains"), destroyed + 1);
	assert_int_equal(bad, 0);
}

/*
 * Guests come and go and pvnetd keeps nothing of theirs: after ten more
 * guests that connected, streamed and were killed or ended, pvnetd has
 * the descriptors, threads and store nodes it had after the first (which
 * started hv's thread that closes what guests held, and its pipe: those
 * stay), and hv no mapping or event channel of theirs.  Each vif queue's
 * worker is a thread and each event channel descriptors, so a guest that
 * left one behind shows here; the store's nodes count the directories a
 * toolstack must remove (a destroyed vif's empty backend/vif/<domid> did
 * not go until 2026-12-07).
 */
static void test_guests_leave_nothing(void **state)
{
	char sock[PATH_MAX];
	struct xs_handle *xs;
	struct held base, now = {0};
	long long maps, evtchns;
	struct rx_side b;

	snprintf(sock, sizeof(sock), "%s/xenstore.sock", run_dir);
	setenv("XENSTORED_PATH", sock, 1);
	xs = xs_open(XS_OPEN_SOCKETONLY);
	assert_non_null(xs);
	rx_open(&b);
	rx_announce(&b);
	guest_passes(&b, true);
	usleep(200000); /* the closing thread's work, a moment after the domain went */
	base = held_now(xs);
	maps = status_get("hv", "maps_in_use");
	evtchns = status_get("hv", "evtchns_open");

	for (int i = 0; i < 10; i++)
		guest_passes(&b, i % 2 == 0);
	for (int i = 0; i < 500; i++) {
		now = held_now(xs);
		if (now.fds == base.fds && now.threads == base.threads && now.nodes == base.nodes)
			break;
		usleep(10000);
	}
	fprintf(stderr,
		"# pvnetd: %d fds, %d threads, %u store nodes (after one guest: %d, %d, %u)\n",
		now.fds, now.threads, now.nodes, base.fds, base.threads, base.nodes);
	assert_int_equal(now.fds, base.fds);
	assert_int_equal(now.threads, base.threads);
	assert_int_equal(now.nodes, base.nodes);
	assert_int_equal(status_get("hv", "maps_in_use"), maps);
	assert_int_equal(status_get("hv", "evtchns_open"), evtchns);
	assert_int_equal(status_get("hv", "zombies"), 0);
	rx_close(&b);
	xs_close(xs);
}

static int group_setup(void **state)
{
	return itest_start(&T, pvnetd_path, "datapath", "--log-level", "info", NULL);
}

static int group_teardown(void **state)
{
	return itest_stop(&T);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sender_killed_mid_stream),
	    cmocka_unit_test(test_accounting_slow_receiver),
	    cmocka_unit_test(test_rx_hold_in_status),
	    cmocka_unit_test(test_guests_leave_nothing),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	pvnetd_path = argv[1];
	signal(SIGPIPE, SIG_IGN);
	return group_run_tests(tests, group_setup, group_teardown);
}
