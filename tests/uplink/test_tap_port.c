// SPDX-License-Identifier: MIT
/* test_tap_port.c - the TAP uplink's port on a real TAP, in a network namespace of its own */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/fd_count.h"
#include "../common/log_capture.h"
#include "../common/test_skip.h"
#include "cap_port.h"
#include "switch/switch.h"
#include "uplink/port.h"
#include "uplink/tap.h"
#include "uplink/vnet.h"

/*
 * The process unshares its network namespace first (root only: skipped
 * otherwise), so the TAP it makes, and everything sent on it, is its own
 * and goes with it.  IPv6 is off there, so the kernel sends nothing on the
 * TAP unasked.  A switch holds the TAP port and "cap", a port that keeps
 * what it is given; a packet socket on the TAP sees what the port writes
 * (as frames the device received) and sends what the port reads.
 */
#define TAP	  "pvt0"
#define ETHERTYPE 0x88b5 /* IEEE local experimental: nothing of the kernel's */
struct world {
	struct sw *sw;
	struct capture cap;
	struct uplink_tap_port *tap;
	int ps; /* packet socket on the TAP */
};

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	struct sw_config cfg;

	assert_non_null(w);
	sw_config_init(&cfg);
	assert_int_equal(sw_create(&cfg, &w->sw), 0);
	pthread_mutex_init(&w->cap.lock, NULL);
	assert_int_equal(sw_port_add(w->sw, "cap", &cap_ops, &w->cap, &w->cap.port), 0);
	assert_int_equal(uplink_tap_port_create(w->sw, TAP, "", &w->tap), 0);
	w->ps = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	assert_true(w->ps >= 0);
	sll.sll_ifindex = (int)if_nametoindex(TAP);
	assert_true(sll.sll_ifindex > 0);
	assert_int_equal(bind(w->ps, (struct sockaddr *)&sll, sizeof(sll)), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	close(w->ps);
	uplink_tap_port_destroy(w->tap);
	sw_port_del(w->sw, w->cap.port);
	sw_destroy(w->sw);
	pthread_mutex_destroy(&w->cap.lock);
	free(w);
	return 0;
}

/* The TAP port's own counter @name. */
static uint64_t counter(struct world *w, const char *name)
{
	const char *names[16];
	uint64_t vals[16];
	unsigned int n = uplink_tap_port_counters(w->tap, names, vals, 16);

	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return vals[i];
	fail_msg("no counter %s", name);
	return 0;
}

/* A broadcast frame of ours, @len bytes, its payload counting from @seed. */
static void frame_fill(uint8_t *f, uint32_t len, uint8_t seed)
{
	memset(f, 0xff, 6);
	memcpy(f + 6, (const uint8_t[]){0x02, 0, 0, 0, 0, 0x01}, 6);
	f[12] = ETHERTYPE >> 8;
	f[13] = ETHERTYPE & 0xff;
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seed + i);
}

/*
 * The next frame of ours the device received (the port wrote it), within
 * two seconds, into @buf: its length, or 0 if none came.
 */
static uint32_t tap_received(struct world *w, uint8_t *buf, size_t cap)
{
	for (int tries = 0; tries < 200; tries++) {
		struct pollfd pfd = {.fd = w->ps, .events = POLLIN};
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t r;

		if (poll(&pfd, 1, 10) <= 0)
			continue;
		r = recvfrom(w->ps, buf, cap, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (r < 14 || from.sll_pkttype == PACKET_OUTGOING || buf[12] != ETHERTYPE >> 8 ||
		    buf[13] != (ETHERTYPE & 0xff))
			continue;
		return (uint32_t)r;
	}
	return 0;
}

/*
 * A frame of the most pieces a switch frame has (SW_PKT_MAX_FRAGS, a
 * guest's 19 slots) and a header copy: the port writes it whole, each
 * piece in place, and completes it once.
 */
static void test_most_fragments_written(void **state)
{
	struct world *w = *state;
	static uint8_t f[14 + SW_PKT_MAX_FRAGS * 60], got[4096];
	struct tpkt t = {0};
	struct sw_pkt *pp = &t.pkt;

	frame_fill(f, sizeof(f), 7);
	t.pkt.hdr = f;
	t.pkt.hdr_len = 14;
	t.pkt.len = sizeof(f);
	t.pkt.nfrags = SW_PKT_MAX_FRAGS;
	for (unsigned int i = 0; i < SW_PKT_MAX_FRAGS; i++)
		t.pkt.frag[i] = (struct sw_pkt_frag){.base = f + 14 + i * 60, .len = 60};
	sw_pkt_init(&t.pkt, tpkt_done);
	assert_int_equal(sw_forward(w->sw, w->cap.port, &pp, 1), 1);
	assert_int_equal(tap_received(w, got, sizeof(got)), sizeof(f));
	assert_memory_equal(got, f, sizeof(f));
	assert_int_equal(t.done, 1);
	assert_int_equal(counter(w, "tx_bad_offload"), 0);
	assert_int_equal(counter(w, "tx_errors"), 0);
}

/*
 * An offload the TAP cannot be told (segmentation without a segment
 * size) is dropped and counted, not written; the frame after it is.
 */
static void test_bad_offload_counted(void **state)
{
	struct world *w = *state;
	static uint8_t bad[200], good[100], got[4096];
	struct sw_pkt *pp[2];
	struct tpkt t[2];

	frame_fill(bad, sizeof(bad), 1);
	frame_fill(good, sizeof(good), 2);
	pp[0] = tpkt_init(&t[0], bad, sizeof(bad), 14, false, UPLINK_F_CSUM_BLANK);
	t[0].pkt.gso_type = UPLINK_GSO_TCPV4; /* and no gso_size */
	pp[1] = tpkt_init(&t[1], good, sizeof(good), 14, false, 0);
	assert_int_equal(sw_forward(w->sw, w->cap.port, pp, 2), 2);
	assert_int_equal(tap_received(w, got, sizeof(got)), sizeof(good));
	assert_memory_equal(got, good, sizeof(good));
	assert_int_equal(counter(w, "tx_bad_offload"), 1);
	assert_int_equal(counter(w, "tx_errors"), 0);
	assert_int_equal(t[0].done, 1);
	assert_int_equal(t[1].done, 1);
}

/* `ip ARGS` in our namespace; its exit status. */
static int ip(const char *args)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip %s >/dev/null 2>&1", args);
	return system(cmd);
}

/*
 * A TAP set down refuses what is written to it (EIO): each frame is
 * counted in tx_errors and completed, none is a tx_eagain (which would
 * have the switch try it again); set up again, it takes frames.
 */
static void test_down_tap_counts_errors(void **state)
{
	struct world *w = *state;
	static uint8_t f[3][80], got[4096];
	struct tpkt t[3];
	struct sw_pkt *pp[3];

	test_need_tool("ip");
	for (unsigned int i = 0; i < 3; i++) {
		frame_fill(f[i], sizeof(f[i]), (uint8_t)(10 + i));
		pp[i] = tpkt_init(&t[i], f[i], 80, 14, false, 0);
	}
	assert_int_equal(ip("link set " TAP " down"), 0);
	assert_int_equal(sw_forward(w->sw, w->cap.port, pp, 2), 2);
	assert_int_equal(counter(w, "tx_errors"), 2);
	assert_int_equal(counter(w, "tx_eagain"), 0);
	assert_int_equal(t[0].done + t[1].done, 2);
	assert_int_equal(ip("link set " TAP " up"), 0);
	assert_int_equal(sw_forward(w->sw, w->cap.port, &pp[2], 1), 1);
	assert_int_equal(tap_received(w, got, sizeof(got)), 80);
	assert_memory_equal(got, f[2], 80);
	assert_int_equal(counter(w, "tx_errors"), 2);
}

/* The descriptor of the port's TAP queue: the process's only one on /dev/net/tun. */
static int port_tun_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1, n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char target[64];
		ssize_t len = readlinkat(dirfd(d), e->d_name, target, sizeof(target) - 1);

		if (len < 0)
			continue;
		target[len] = '\0';
		if (!strcmp(target, "/dev/net/tun")) {
			found = atoi(e->d_name);
			n++;
		}
	}
	closedir(d);
	assert_int_equal(n, 1);
	return found;
}

/*
 * A TAP whose queue is full says EAGAIN to a write: the port takes no
 * frame from there on, counts the rest of the batch in tx_eagain (not
 * tx_errors), and the switch, told so, drops them (tx_dropped) and
 * completes each once.  To fill it: the TAP's send buffer made small
 * (TUNSETSNDBUF on the port's own descriptor), and each frame the TAP
 * takes held, charged to that buffer, in a queue that barely sends: the
 * TAP is in a bridge whose other port is a veth under a token bucket of
 * 100 kbit/s, and the frames go to a MAC nobody has (unknown unicast: the
 * bridge forwards the frame itself, not a copy).  Frames of 5000 bytes:
 * the TAP charges only frames over a page to the buffer.  The veth goes in
 * the teardown, whatever the test did: a frame held in its queue holds the
 * TAP's socket and so this network namespace, which would never end (the
 * bucket would drain in seconds anyway).
 */
static void test_full_tap_counts_eagain(void **state)
{
	struct world *w = *state;
	static uint8_t f[8][5000];
	struct tpkt t[8];
	struct sw_pkt *pp[8];
	int sndbuf = 4096;
	unsigned int ok, done = 0;

	test_need_tool("ip");
	test_need_tool("tc");
	if (ip("link add pvbr0 type bridge") != 0 ||
	    ip("link add pvq0 type veth peer name pvq1") != 0)
		test_skip("a TAP that blocks: no bridge or veth in this kernel");
	assert_int_equal(ip("link set " TAP " mtu 9000 master pvbr0"), 0);
	assert_int_equal(ip("link set pvq0 mtu 9000 master pvbr0 up"), 0);
	assert_int_equal(ip("link set pvq1 mtu 9000 up"), 0);
	assert_int_equal(ip("link set pvbr0 up"), 0);
	assert_int_equal(system("tc qdisc add dev pvq0 root tbf rate 100kbit burst 16k limit 10m"),
			 0);
	assert_int_equal(ioctl(port_tun_fd(), TUNSETSNDBUF, &sndbuf), 0);
	for (unsigned int i = 0; i < 8; i++) {
		frame_fill(f[i], sizeof(f[i]), (uint8_t)i);
		f[i][0] = 0x02; /* to 02:ff:ff:ff:ff:99, unicast, unknown */
		f[i][5] = 0x99;
		pp[i] = tpkt_init(&t[i], f[i], sizeof(f[i]), 14, false, 0);
	}
	ok = sw_forward(w->sw, w->cap.port, pp, 8);
	assert_true(ok >= 1 && ok < 8);
	assert_int_equal(counter(w, "tx_eagain"), 8 - ok);
	assert_int_equal(counter(w, "tx_errors"), 0);
	for (unsigned int i = 0; i < 8; i++)
		done += t[i].done;
	assert_int_equal(done, 8);
	assert_int_equal(atomic_load(&uplink_tap_port_sw(w->tap)->stats.tx_dropped), 8 - ok);
}

static int teardown_bridge(void **state)
{
	ip("link del pvq0");
	ip("link del pvbr0");
	return teardown(state);
}

/* Whether cap got a frame of @len bytes equal to @f within two seconds. */
static bool cap_got(struct world *w, const uint8_t *f, uint32_t len)
{
	for (int tries = 0; tries < 200; tries++) {
		bool found = false;

		pthread_mutex_lock(&w->cap.lock);
		for (unsigned int i = 0; i < w->cap.n && !found; i++)
			found = w->cap.len[i] == len && !memcmp(w->cap.frame[i], f, len);
		pthread_mutex_unlock(&w->cap.lock);
		if (found)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * What the kernel sends on the TAP reaches the switch: a frame of just an
 * Ethernet header (14 bytes, the least a frame is) too; a runt is only
 * what is shorter.
 */
static void test_header_only_frame_read(void **state)
{
	struct world *w = *state;
	uint8_t f[60];

	frame_fill(f, sizeof(f), 3);
	assert_int_equal(send(w->ps, f, 14, 0), 14);
	assert_true(cap_got(w, f, 14));
	assert_int_equal(send(w->ps, f, sizeof(f), 0), (ssize_t)sizeof(f));
	assert_true(cap_got(w, f, sizeof(f)));
	assert_int_equal(counter(w, "rx_runt"), 0);
}

/*
 * The TAP deleted: the uplink stops, saying so once as an error; the link
 * notification of the deletion is no error of its own (it may come before
 * the reader sees the device gone: the MTU watch must take it quietly).
 */
static void test_deleted_tap_stops_quietly(void **state)
{
	struct world *w = *state;
	struct log_capture lc;
	char *log;

	test_need_tool("ip");
	log_capture_start(&lc);
	assert_int_equal(ip("link del " TAP), 0);
	for (int tries = 0; tries < 200 && uplink_tap_port_running(w->tap); tries++)
		usleep(10000);
	usleep(50000); /* a notification read after the device went, logged by now */
	log = log_capture_end(&lc);
	assert_false(uplink_tap_port_running(w->tap));
	assert_int_equal(log_count(log, "its TAP device is gone"), 1);
	assert_int_equal(log_count(log, "link notifications"), 0);
	free(log);
}

/*
 * The TAP helpers of tap.c by themselves, on TAPs of their own (no switch,
 * no port): what `pvnet attach` and the TAP port rely on.  Each test has a
 * name of its own, so that a TAP one leaves behind when it fails fails no
 * other.
 */

/* Interface @name's flags (SIOCGIFFLAGS). */
static unsigned int if_flags(const char *name)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	close(fd);
	return (unsigned short)ifr.ifr_flags;
}

/*
 * uplink_tap_open() at its bounds: a name of IFNAMSIZ - 1 bytes and
 * UPLINK_TAP_MAX_QUEUES queues (`pvnet attach --queues 16`) are taken, each
 * queue an fd of its own; a name of IFNAMSIZ bytes (no room for its NUL: it
 * would be cut short, another interface's name), no queue or one queue too
 * many are -EINVAL, with nothing made.
 */
static void test_open_bounds(void **state)
{
	char name[IFNAMSIZ + 1], cut[IFNAMSIZ];
	int fds[UPLINK_TAP_MAX_QUEUES + 1];

	(void)state;
	memset(name, 't', IFNAMSIZ - 1);
	name[IFNAMSIZ - 1] = '\0';
	assert_int_equal(uplink_tap_open(name, UPLINK_TAP_MAX_QUEUES, true, fds), 0);
	for (unsigned int i = 0; i < UPLINK_TAP_MAX_QUEUES; i++) {
		assert_true(fds[i] >= 0);
		for (unsigned int j = 0; j < i; j++)
			assert_int_not_equal(fds[i], fds[j]);
	}
	assert_int_not_equal(if_nametoindex(name), 0);
	uplink_tap_close(fds, UPLINK_TAP_MAX_QUEUES);
	assert_int_equal(if_nametoindex(name), 0); /* the last queue closed removed it */

	memcpy(cut, name, sizeof(cut));
	name[IFNAMSIZ - 1] = 't';
	name[IFNAMSIZ] = '\0';
	assert_int_equal(uplink_tap_open(name, 1, true, fds), -EINVAL);
	assert_int_equal(if_nametoindex(cut), 0);
	assert_int_equal(uplink_tap_open("pvx0", 0, true, fds), -EINVAL);
	assert_int_equal(uplink_tap_open("pvx0", UPLINK_TAP_MAX_QUEUES + 1, true, fds), -EINVAL);
	assert_int_equal(if_nametoindex("pvx0"), 0);
}

/*
 * An open that fails leaves nothing open: an exclusive open of a name
 * that is there already (pvnet attach in a namespace that has the
 * interface) is -EBUSY, its queues' fds are -1 and the process has no
 * more fds than before.
 */
static void test_open_failure_leaves_nothing(void **state)
{
	int fd, fds[2];
	unsigned int before;

	(void)state;
	assert_int_equal(uplink_tap_open("pvx1", 1, true, &fd), 0);
	before = fd_count();
	assert_int_equal(uplink_tap_open("pvx1", 2, true, fds), -EBUSY);
	assert_int_equal(fd_count(), before);
	assert_int_equal(fds[0], -1);
	assert_int_equal(fds[1], -1);
	uplink_tap_close(&fd, 1);
}

/*
 * A queue that is fd 0 (a caller started with stdin closed) is closed like
 * any other: the TAP goes with it.
 */
static void test_close_fd_zero(void **state)
{
	int saved = dup(0), fd;

	(void)state;
	assert_true(saved >= 0);
	close(0);
	assert_int_equal(uplink_tap_open("pvx2", 1, true, &fd), 0);
	assert_int_equal(fd, 0);
	uplink_tap_close(&fd, 1);
	assert_int_equal(fd, -1);
	assert_int_equal(if_nametoindex("pvx2"), 0);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
}

/*
 * Joining a TAP (not exclusive, as the TAP port does with a persistent
 * one) sets the virtio-net header size again: a device another user left
 * at 12 bytes (mergeable buffers' header) is back at
 * sizeof(struct virtio_net_hdr), else every frame would be read 2 bytes off.
 */
static void test_join_sets_header_size(void **state)
{
	int first, join, sz = 12;

	(void)state;
	assert_int_equal(uplink_tap_open("pvx3", 1, true, &first), 0);
	assert_int_equal(ioctl(first, TUNSETVNETHDRSZ, &sz), 0);
	assert_int_equal(uplink_tap_open("pvx3", 1, false, &join), 0);
	sz = 0;
	assert_int_equal(ioctl(first, TUNGETVNETHDRSZ, &sz), 0);
	assert_int_equal(sz, (int)sizeof(struct virtio_net_hdr));
	uplink_tap_close(&join, 1);
	uplink_tap_close(&first, 1);
}

/*
 * uplink_tap_link_set() sets the MAC and the MTU and brings the link up,
 * changing no other flag (MULTICAST, which the kernel gave the TAP, stays;
 * an ifi_change of 0 would be taken as "all flags" and clear it); an MTU
 * the device refuses (below ETH_MIN_MTU) is the kernel's error, the MTU
 * unchanged.
 */
static void test_link_set(void **state)
{
	static const uint8_t mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
	struct ifreq ifr = {0};
	unsigned int before;
	uint32_t mtu = 0;
	int fd, s;

	(void)state;
	assert_int_equal(uplink_tap_open("pvx4", 1, true, &fd), 0);
	before = if_flags("pvx4");
	assert_true(before & IFF_MULTICAST);
	assert_false(before & IFF_UP);
	assert_int_equal(uplink_tap_link_set("pvx4", mac, 1400), 0);
	/* RUNNING follows UP once the kernel has the carrier on: not ours to set. */
	assert_int_equal(if_flags("pvx4") & ~IFF_RUNNING, before | IFF_UP);
	assert_int_equal(uplink_tap_mtu("pvx4", &mtu), 0);
	assert_int_equal(mtu, 1400);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "pvx4");
	assert_int_equal(ioctl(s, SIOCGIFHWADDR, &ifr), 0);
	close(s);
	assert_memory_equal(ifr.ifr_hwaddr.sa_data, mac, 6);

	assert_int_equal(uplink_tap_link_set("pvx4", NULL, 60), -EINVAL);
	assert_int_equal(uplink_tap_mtu("pvx4", &mtu), 0);
	assert_int_equal(mtu, 1400);
	uplink_tap_close(&fd, 1);
}

/*
 * The link watch overrun (more link changes than its socket holds, the
 * kernel's ENOBUFS) loses nothing: uplink_link_watch_mtu() takes it and
 * reads the MTU the link has now.
 */
static void test_link_watch_overrun(void **state)
{
	struct ifreq ifr = {0};
	unsigned int idx;
	uint32_t mtu = 0;
	int fd, w, s, small = 1;

	(void)state;
	assert_int_equal(uplink_tap_open("pvx5", 1, true, &fd), 0);
	assert_int_equal(uplink_link_index("pvx5", &idx), 0);
	w = uplink_link_watch();
	assert_true(w >= 0);
	assert_int_equal(setsockopt(w, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "pvx5");
	for (int i = 0; i < 64; i++) {
		ifr.ifr_mtu = 1000 + i;
		assert_int_equal(ioctl(s, SIOCSIFMTU, &ifr), 0);
	}
	close(s);
	assert_int_equal(uplink_link_watch_mtu(w, idx, &mtu), 0);
	assert_int_equal(mtu, 1063);
	close(w);
	uplink_tap_close(&fd, 1);
}

/*
 * `ip netns del` failing (no such namespace) is an error of
 * uplink_netns_delete(), not a success.
 */
static void test_netns_delete_failure(void **state)
{
	char ns[64];

	(void)state;
	test_need_tool("ip");
	snprintf(ns, sizeof(ns), "pvnet-no-such-ns-%d", (int)getpid());
	assert_int_equal(uplink_netns_delete(ns), -EIO);
}

/* Our own network namespace, without IPv6: 0, or 77 (skip) when we may not. */
static int own_netns(void)
{
	static const char *const v6[] = {"/proc/sys/net/ipv6/conf/all/disable_ipv6",
					 "/proc/sys/net/ipv6/conf/default/disable_ipv6"};

	if (unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: unshare(CLONE_NEWNET): %s (needs root)\n", strerror(errno));
		return 77;
	}
	if (access("/dev/net/tun", R_OK | W_OK) < 0) {
		printf("SKIP: /dev/net/tun: %s\n", strerror(errno));
		return 77;
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		int fd = open(v6[i], O_WRONLY | O_CLOEXEC);

		/* A kernel without IPv6 has no such file, and sends nothing of it either. */
		if (fd >= 0) {
			ssize_t n = write(fd, "1", 1);
			int e = errno;

			close(fd);
			if (n != 1) {
				printf("%s: %s\n", v6[i], n < 0 ? strerror(e) : "short write");
				return 1;
			}
		}
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_most_fragments_written, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_offload_counted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_down_tap_counts_errors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_tap_counts_eagain, setup, teardown_bridge),
	    cmocka_unit_test_setup_teardown(test_header_only_frame_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deleted_tap_stops_quietly, setup, teardown),
	    cmocka_unit_test(test_open_bounds),
	    cmocka_unit_test(test_open_failure_leaves_nothing),
	    cmocka_unit_test(test_close_fd_zero),
	    cmocka_unit_test(test_join_sets_header_size),
	    cmocka_unit_test(test_link_set),
	    cmocka_unit_test(test_link_watch_overrun),
	    cmocka_unit_test(test_netns_delete_failure),
	};
	int rc = own_netns();

	if (rc)
		return rc;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
