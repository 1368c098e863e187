// SPDX-License-Identifier: MIT
/* main.c - pvnetd: the backend domain (hypervisor emulation, xenstore, netback, switch) */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "back/back.h"
#include "hv/hv.h"
#include "store/store.h"
#include "switch/switch.h"
#include "uplink/port.h"
#include "uplink/vxlan_port.h"

#include "cliarg.h"
#include "pvnetd.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pvnetd [OPTIONS]\n"
		"Run the pvnet backend domain in the foreground until SIGTERM, SIGINT or SIGHUP.\n"
		"\n"
		"  -d, --run-dir DIR      sockets go here (default /run/pvnet; made, mode\n"
		"                         0755, if its parent exists):\n"
		"                         DIR/xenstore.sock (domain 0, mode 0600),\n"
		"                         DIR/pvnetd.sock (control), DIR/xenstore-domN.sock;\n"
		"                         DIR/pvnetd.pid, locked, keeps a second pvnetd out;\n"
		"                         made absolute (symbolic links resolved), and at most\n"
		"                         80 bytes then, so its sockets' paths fit sun_path\n"
		"  -t, --tx-mode MODE     how guest TX payloads reach the switch: map (grant-map,\n"
		"                         zero copy; default), copy (grant-copy) or persistent\n"
		"                         (offer feature-persistent: pages mapped once and kept,\n"
		"                         no grant operation per packet; frontends that do not\n"
		"                         accept it get map; docs/persistent-grants.md)\n"
		"  -u, --uplink tap:NAME[@NETNS]\n"
		"                         add a TAP uplink port NAME (in namespace NETNS, which\n"
		"                         must exist) to the switch, with checksum and TSO\n"
		"                         offloads (docs/tap.md); not vif<N>.<M>, a guest's\n"
		"                         vif's name\n"
		"  -u, --uplink "
		"vxlan:id=VNI,remote=ADDR[,remote=ADDR...][,local=ADDR][,dstport=PORT]\n"
		"                         [,srcport=MIN-MAX][,mtu=N][,netns=NS]\n"
		"                         add a VXLAN uplink port: segment VNI tunnelled over\n"
		"                         UDP to the VTEP at ADDR (another pvnetd, or a Linux\n"
		"                         vxlan device; up to 8 remotes, each MAC learnt behind\n"
		"                         one; each flow from one source port), port 4789 and\n"
		"                         MTU 1500 unless given\n"
		"                         (docs/vxlan.md), the port named vxlanVNI (or\n"
		"                         vxlanVNI:PORT); --uplink may be given up to 8 times,\n"
		"                         each uplink's port name its own; uplinks of other\n"
		"                         VNIs may share a local address and port\n"
		"  -q, --max-queues N     queues a vif may have (multi-queue-max-queues),\n"
		"                         1..16, default 8\n"
		"  -p, --poll-us US       the longest an idle netback worker polls before it\n"
		"                         sleeps on its event channel, 0..1000 µs, default 200\n"
		"                         (0: sleep at once; it never polls longer than it\n"
		"                         has recently worked)\n"
		"  -r, --rx-queue-kib KIB frames one guest RX queue may hold waiting for the\n"
		"                         guest's buffers, 128..65536 KiB, default 8192; frames\n"
		"                         held long are copied into pvnetd's memory, so a\n"
		"                         guest that takes nothing costs up to this much per\n"
		"                         queue (docs/netback.md, \"Memory\")\n"
		"  -g, --rx-guest-kib KIB the most pvnetd's memory holds for one guest's RX\n"
		"                         queues at once (all its vifs): frames copied out of\n"
		"                         their senders' pages wait in a pool per queue of\n"
		"                         --rx-queue-kib and 174 KiB; a queue that would need\n"
		"                         a pool past this drops those frames instead; at\n"
		"                         least one pool, at most 16777216 KiB, default 16\n"
		"                         pools (133857 KiB at the default --rx-queue-kib)\n"
		"  -a, --mac-ageing SECS  the switch forgets a MAC not seen for this long,\n"
		"                         1..1000000, default 300 (a Linux bridge's ageing_time)\n"
		"  -m, --vif-mac-limit N  MACs the switch learns on one vif at most, 1..1024,\n"
		"                         default 64 (a guest that bridges containers has\n"
		"                         more than one); the table holds 256 vifs at the\n"
		"                         limit (docs/switch.md)\n"
		"  -s, --rx-stall-timeout MS\n"
		"                         a guest RX queue whose next frame has waited this\n"
		"                         long for buffers is stalled: its frames are dropped\n"
		"                         and the vif's carrier goes off until the guest posts\n"
		"                         again; 0..3600000, 0 never, default 60000 (Linux\n"
		"                         netback's rx_stall_timeout_msecs; docs/netback.md)\n"
		"  -l, --log-level LEVEL  err, warn, info (default) or debug\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n"
		"\n"
		"Exit status: 0 stopped by a signal, 1 it could not start (the reason is\n"
		"logged) or its event loop failed, 2 usage.\n");
}

/* An option pvnetd cannot take: said plainly, exit status 2 as for any usage error. */
static void bad_option(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bad_option(const char *fmt, ...)
{
	va_list ap;

	fputs("pvnetd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

_Static_assert((SW_MAX_PORTS * PVNETD_VIF_MAC_LIMIT_MAX) +
		       (PVNETD_MAX_UPLINKS * (UPLINK_TAP_MAC_LIMIT > UPLINK_VXLAN_MAC_LIMIT
						  ? UPLINK_TAP_MAC_LIMIT
						  : UPLINK_VXLAN_MAC_LIMIT)) <=
		   SW_FDB_MAX_LIMIT,
	       "a table of vifs at --vif-mac-limit's most and every uplink fits the switch");

/* Is @s UTF-8 (jansson, which builds the control socket's replies, says)? */
static bool utf8_ok(const char *s)
{
	json_t *j = json_string(s);

	if (!j)
		return false;
	json_decref(j);
	return true;
}

/* vif<DOMID>.<DEVID>: the switch port name netback gives a guest's vif, as Linux's does. */
static bool name_is_vif(const char *name)
{
	size_t dom, dev;

	if (strncmp(name, "vif", 3))
		return false;
	dom = strspn(name + 3, "0123456789");
	if (!dom || name[3 + dom] != '.')
		return false;
	dev = strspn(name + 4 + dom, "0123456789");
	return dev && !name[4 + dom + dev];
}

/*
 * The uplinks' switch port names, each with the --uplink argument it came
 * from: a name is one port's (sw_port_add() refuses a second), and
 * `pvnet capture NAME` and `pvnet status` know a port by it, so a name that
 * could be taken twice is refused before anything starts.
 */
struct uplink_names {
	const char *name[PVNETD_MAX_UPLINKS];
	const char *spec[PVNETD_MAX_UPLINKS];
	unsigned int n;
};

static void uplink_name_add(struct uplink_names *un, const char *name, const char *spec)
{
	for (unsigned int i = 0; i < un->n; i++)
		if (!strcmp(un->name[i], name))
			bad_option("--uplink: '%s' would be switch port %s, which '%s' is already: "
				   "port names must differ",
				   spec, name, un->spec[i]);
	un->name[un->n] = name;
	un->spec[un->n++] = spec;
}

/* The uplink port types' counters, for `pvnet status` (struct pvnetd_uplink). */
static unsigned int tap_counters(void *up, const char **names, uint64_t *vals, unsigned int max)
{
	return uplink_tap_port_counters(up, names, vals, max);
}

static unsigned int vxlan_counters(void *up, const char **names, uint64_t *vals, unsigned int max)
{
	return uplink_vxlan_port_counters(up, names, vals, max);
}

/* Why an uplink stopped (struct pvnetd_uplink): a VXLAN uplink's socket never goes away. */
static const char *tap_stopped(void *up)
{
	return uplink_tap_port_running(up) ? NULL : "its TAP device is gone";
}

static void on_signal(struct loop_watch *w, uint32_t events)
{
	struct pvnetd *d = w->data;
	struct signalfd_siginfo si;

	if (read(w->fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		info("signal %u: shutting down", si.ssi_signo);
	loop_stop(d->loop);
}

/*
 * Every second: the switch forgets the MACs it has not seen for its ageing
 * time, and says which ports could not learn (at most once a minute each).
 */
static void on_age(struct loop_watch *w, uint32_t events)
{
	struct pvnetd *d = w->data;
	uint64_t ticks, now;
	unsigned int n;

	if (read(w->fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		warn("switch: MAC ageing timer: %s", strerror(errno));
	now = sw_now(d->sw);
	n = sw_fdb_age(d->sw, now);
	if (n)
		debug("switch: %u MAC%s aged out", n, n == 1 ? "" : "s");
	sw_fdb_report(d->sw, now);
}

static int ageing_start(struct pvnetd *d)
{
	const struct itimerspec every_s = {.it_interval = {.tv_sec = 1}, .it_value = {.tv_sec = 1}};
	int rc;

	d->age = (struct loop_watch){.cb = on_age, .data = d};
	d->age.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->age.fd < 0)
		return -errno;
	if (timerfd_settime(d->age.fd, 0, &every_s, NULL) < 0) {
		rc = -errno;
		close(d->age.fd);
		return rc;
	}
	rc = loop_add(d->loop, &d->age, EPOLLIN);
	if (rc < 0)
		close(d->age.fd);
	return rc;
}

/* Make @dir unless it exists; 1 if this made it, 0 if it was there, or -errno. */
static int make_run_dir(const char *dir)
{
	struct stat st;
	int made = 1;

	if (mkdir(dir, 0755) < 0) {
		if (errno != EEXIST)
			return -errno;
		made = 0;
	}
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return made;
}

/*
 * The longest socket path pvnetd will ever bind in @dir: each of its
 * sockets is bound as NAME.new and renamed once listening (store_listen(),
 * ctl_create()), and the per-domain ones carry the largest domid hv can
 * hand out (ids wrap below DOMID_FIRST_RESERVED).  Written to @buf, a
 * sockaddr_un's sun_path or longer; returns its length.  A run directory
 * whose longest path does not fit sun_path would start, and then fail the
 * first domain whose id is long enough with EINVAL, logging nothing.
 */
static size_t run_dir_longest_sock(const char *dir, char *buf, size_t size)
{
	char name[64];
	const char *names[] = {PVNETD_STORE_SOCK, PVNETD_CTL_SOCK, name};
	size_t longest = 0;
	char sock[PATH_MAX];

	snprintf(name, sizeof(name), PVNETD_DOMAIN_SOCK, (unsigned int)DOMID_FIRST_RESERVED - 1);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = (size_t)snprintf(sock, sizeof(sock), "%s/%s.new", dir, names[i]);

		if (n >= longest) {
			longest = n;
			snprintf(buf, size, "%s", sock);
		}
	}
	return longest;
}

/*
 * @dir, made if absent, as the absolute path without symbolic links that
 * every socket path pvnetd binds, hands out (a domain's store socket, sent
 * to a frontend that may run in another directory) and logs is made of; its
 * sockets' longest path fits a sockaddr_un.  Dies (status 1) otherwise,
 * removing the directory if it made it.
 */
static void run_dir_resolve(char *dir, size_t size)
{
	struct sockaddr_un sa;
	char abs[PATH_MAX], longest[PATH_MAX];
	size_t n;
	int made;

	made = make_run_dir(dir);
	if (made < 0)
		die("run directory %s: %s", dir, strerror(-made));
	if (!realpath(dir, abs)) {
		int e = errno;

		if (made)
			rmdir(dir);
		die("run directory %s: cannot make it absolute: %s", dir, strerror(e));
	}
	n = run_dir_longest_sock(abs, longest, sizeof(longest));
	if (n >= sizeof(sa.sun_path) || strlen(abs) >= size) {
		if (made)
			rmdir(dir);
		die("run directory %s is too long for its sockets: %s would be %zu bytes, a "
		    "socket path holds at most %zu; use a run directory of at most %zu bytes",
		    abs, longest, n, sizeof(sa.sun_path) - 1,
		    sizeof(sa.sun_path) - 1 - (n - strlen(abs)));
	}
	snprintf(dir, size, "%s", abs);
}

/* DIR/pvnetd.pid once pvnetd holds it: removed at exit, a failed start included. */
static char pid_file[PATH_MAX];

static void pid_file_remove(void)
{
	if (*pid_file)
		unlink(pid_file);
}

/*
 * Hold DIR/pvnetd.pid, locked, for as long as pvnetd runs: a second pvnetd
 * on the same directory would unlink the first one's sockets and bind its
 * own, leaving the first running but out of reach (and, as it stopped,
 * unlinking the second one's).  The lock goes with the process, so a pvnetd
 * that was killed leaves nothing that stops the next one.  Returns the
 * locked descriptor; -EBUSY with the holder's pid in *@holder (0 if it has
 * not written it yet); or another negative errno.
 */
static int run_dir_lock(const char *path, long *holder)
{
	*holder = 0;
	for (int tries = 0; tries < 8; tries++) {
		struct stat fst, pst;
		char buf[24];
		ssize_t n;
		int fd, e;

		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			e = errno;
			n = e == EWOULDBLOCK ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
			if (n > 0) {
				buf[n] = '\0';
				*holder = strtol(buf, NULL, 10);
			}
			close(fd);
			return e == EWOULDBLOCK ? -EBUSY : -e;
		}
		/* A pvnetd stopping removes the file it held: lock the one at the path. */
		if (fstat(fd, &fst) == 0 && stat(path, &pst) == 0 && fst.st_dev == pst.st_dev &&
		    fst.st_ino == pst.st_ino) {
			n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
			errno = 0;
			if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
				e = errno ? errno : EIO;
				close(fd);
				return -e;
			}
			return fd;
		}
		close(fd);
	}
	return -EAGAIN;
}

/*
 * Event channels.  Each holds four fds of pvnetd's (HV_EVTCHN_CHANNEL_FDS),
 * so guests together get what a quarter of the open-file limit (at least
 * PVNETD_FD_RESERVE) leaves, and the rest stays pvnetd's own (store and
 * control connections, domains' memory, vif queues, uplinks, captures):
 * what guests allocate can refuse only their own next channel (ENFILE).
 * Of that budget one guest gets a share, so that it cannot take all of it
 * from the others: the ports a guest needs for PVNETD_MAX_VIFS vifs of
 * --max-queues split queues and a control ring each, or an even share
 * among max_domains - 1 guests if that is more, up to Xen's default of
 * 1023 channels (xl.cfg's max_event_channels).  dom0's ports are
 * netback's, one for each guest channel it binds: room for every guest's,
 * or for the whole budget if that is less.
 */
#define PVNETD_FD_RESERVE    1024u
#define PVNETD_MIN_CHANNELS  64u
#define PVNETD_GUEST_EVTCHNS 1024u

static void evtchn_limits(struct hv_config *hcfg, unsigned int max_queues)
{
	uint64_t guests = hcfg->max_domains - 1, budget = 0, limit = 0, reserve, ports, dom0;
	struct rlimit nofile;

	ports = PVNETD_GUEST_EVTCHNS;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
		limit = nofile.rlim_cur;
		reserve = limit / 4 > PVNETD_FD_RESERVE ? limit / 4 : PVNETD_FD_RESERVE;
		budget = limit > reserve ? (limit - reserve) / HV_EVTCHN_CHANNEL_FDS : 0;
		if (budget < PVNETD_MIN_CHANNELS)
			budget = PVNETD_MIN_CHANNELS;
		if (budget > UINT32_MAX)
			budget = UINT32_MAX;
		if (budget / guests + 1 < ports)
			ports = budget / guests + 1;
	}
	if (ports < PVNETD_MAX_VIFS * (2 * max_queues + 1) + 1)
		ports = PVNETD_MAX_VIFS * (2 * max_queues + 1) + 1;
	/* dom0's ports are each one end of a guest's channel: no more than the budget */
	dom0 = guests * (ports - 1) + 1;
	if (budget && budget + 1 < dom0)
		dom0 = budget + 1;
	if (dom0 > HV_CFG_MAX_EVTCHNS)
		dom0 = HV_CFG_MAX_EVTCHNS;
	hcfg->max_channels = (uint32_t)budget;
	hcfg->max_evtchns = (uint32_t)ports;
	hcfg->dom0_evtchns = (uint32_t)dom0;
	if (budget)
		info("event channels: at most %llu open at once, %llu per guest (open-file limit "
		     "%llu)",
		     (unsigned long long)budget, (unsigned long long)ports - 1,
		     (unsigned long long)limit);
	else
		info("event channels: %llu per guest (no open-file limit)",
		     (unsigned long long)ports - 1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"run-dir", required_argument, NULL, 'd'},
	    {"log-level", required_argument, NULL, 'l'},
	    {"tx-mode", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {"uplink", required_argument, NULL, 'u'},
	    {"max-queues", required_argument, NULL, 'q'},
	    {"poll-us", required_argument, NULL, 'p'},
	    {"rx-stall-timeout", required_argument, NULL, 's'},
	    {"rx-queue-kib", required_argument, NULL, 'r'},
	    {"rx-guest-kib", required_argument, NULL, 'g'},
	    {"mac-ageing", required_argument, NULL, 'a'},
	    {"vif-mac-limit", required_argument, NULL, 'm'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	struct pvnetd d = {0};
	struct uplink_tap_port *uplink[PVNETD_MAX_UPLINKS] = {0};
	struct uplink_vxlan_port *vxlan[PVNETD_MAX_UPLINKS] = {0};
	struct uplink_vxlan_spec vx[PVNETD_MAX_UPLINKS];
	const char *up_spec[PVNETD_MAX_UPLINKS], *vx_spec[PVNETD_MAX_UPLINKS];
	char up_name[PVNETD_MAX_UPLINKS][16 /* IFNAMSIZ */],
	    up_ns[PVNETD_MAX_UPLINKS][UPLINK_NETNS_MAX + 1], why[128];
	unsigned int nup = 0, nvx = 0;
	struct uplink_names un = {0};
	struct store_config scfg;
	struct back_config bcfg;
	struct sw_config swcfg;
	struct hv_config hcfg;
	char path[PATH_MAX];
	unsigned long v, rx_guest_kib = 0;
	uint64_t pool, pools;
	long holder;
	int lock_fd;
	sigset_t mask;
	int c, rc;

	snprintf(d.run_dir, sizeof(d.run_dir), "%s", "/run/pvnet");
	back_config_default(&bcfg);
	sw_config_init(&swcfg);
	while ((c = getopt_long(argc, argv, "d:l:t:u:q:p:s:r:g:a:m:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (strlen(optarg) >= sizeof(d.run_dir) - 32 || !*optarg)
				bad_option("--run-dir: path is empty or too long");
			snprintf(d.run_dir, sizeof(d.run_dir), "%s", optarg);
			break;
		case 'l':
			rc = log_level_parse(optarg);
			if (rc < 0)
				bad_option("--log-level: '%s' is not one of err, warn, info, debug",
					   optarg);
			log_set_level((enum log_level)rc);
			break;
		case 't':
			if (!strcmp(optarg, "map"))
				bcfg.tx_mode = BACK_TX_MAP;
			else if (!strcmp(optarg, "copy"))
				bcfg.tx_mode = BACK_TX_COPY;
			else if (!strcmp(optarg, "persistent"))
				bcfg.tx_mode = BACK_TX_PERSISTENT;
			else
				bad_option("--tx-mode: '%s' is not map, copy or persistent",
					   optarg);
			break;
		/* Numbers are decimal digits and nothing else: no sign, no blank (cliarg.c). */
		case 'q':
			if (cliarg_ulong(optarg, 1, BACK_MAX_QUEUES_LIMIT, &v) < 0)
				bad_option("--max-queues: '%s' is not 1..%u", optarg,
					   BACK_MAX_QUEUES_LIMIT);
			bcfg.max_queues = (unsigned int)v;
			break;
		case 'p':
			if (cliarg_ulong(optarg, 0, 1000, &v) < 0)
				bad_option("--poll-us: '%s' is not 0..1000", optarg);
			bcfg.poll_us = (unsigned int)v;
			break;
		case 'a':
			if (cliarg_ulong(optarg, 1, SW_AGEING_MAX_S, &v) < 0)
				bad_option("--mac-ageing: '%s' is not 1..%u (s)", optarg,
					   SW_AGEING_MAX_S);
			swcfg.ageing_s = (unsigned int)v;
			break;
		case 'm':
			if (cliarg_ulong(optarg, 1, PVNETD_VIF_MAC_LIMIT_MAX, &v) < 0)
				bad_option("--vif-mac-limit: '%s' is not 1..%u", optarg,
					   PVNETD_VIF_MAC_LIMIT_MAX);
			swcfg.port_mac_limit = (unsigned int)v;
			break;
		case 's':
			if (cliarg_ulong(optarg, 0, 3600000, &v) < 0)
				bad_option("--rx-stall-timeout: '%s' is not 0..3600000 (ms)",
					   optarg);
			bcfg.rx_stall_timeout_ms = (unsigned int)v;
			break;
		case 'r':
			if (cliarg_ulong(optarg, 128, 65536, &v) < 0)
				bad_option("--rx-queue-kib: '%s' is not 128..65536 (KiB)", optarg);
			bcfg.rx_queue_max_bytes = (uint32_t)v * 1024u;
			break;
		case 'g':
			/* Checked against --rx-queue-kib once every option is read. */
			if (cliarg_ulong(optarg, 1, PVNETD_RX_GUEST_KIB_MAX, &v) < 0)
				bad_option("--rx-guest-kib: '%s' is not 1..%lu (KiB)", optarg,
					   PVNETD_RX_GUEST_KIB_MAX);
			rx_guest_kib = v;
			break;
		case 'u':
			if (nup + nvx == PVNETD_MAX_UPLINKS)
				bad_option("--uplink: at most %u uplinks", PVNETD_MAX_UPLINKS);
			/*
			 * The argument and the port name in it are JSON strings in
			 * `pvnet status`: the kernel takes any bytes in a TAP's name,
			 * but an uplink pvnetd could not show would be unseen there.
			 */
			if (!utf8_ok(optarg))
				bad_option("--uplink: an argument that is not UTF-8 text (pvnet "
					   "status shows it, and its port's name, as text)");
			if (!strncmp(optarg, "vxlan:", 6)) {
				if (uplink_vxlan_spec_parse(optarg, &vx[nvx], why, sizeof(why)) < 0)
					bad_option("--uplink: '%s': %s", optarg, why);
				/* The same tunnel twice: two ports on one wire, a loop. */
				for (unsigned int i = 0; i < nvx; i++)
					if (uplink_vxlan_spec_same(&vx[i], &vx[nvx]))
						bad_option(
						    "--uplink: '%s' is a tunnel given before "
						    "(same VNI, port, namespace and a remote)",
						    optarg);
				for (unsigned int i = 0; i < nvx; i++) {
					if (uplink_vxlan_spec_clash(&vx[i], &vx[nvx], why,
								    sizeof(why)))
						bad_option("--uplink: '%s': %s", optarg, why);
					/* One port, each its VNI: sorted in the kernel. */
					if (uplink_vxlan_spec_shares(&vx[i], &vx[nvx]))
						vx[i].share = vx[nvx].share = true;
				}
				/* Checked here, as for a TAP's, before anything starts. */
				if (*vx[nvx].netns && !uplink_netns_name_ok(vx[nvx].netns))
					bad_option("--uplink: '%s': '%s' is not a namespace name",
						   optarg, vx[nvx].netns);
				uplink_name_add(&un, vx[nvx].name, optarg);
				vx_spec[nvx++] = optarg;
				break;
			}
			if (uplink_tap_spec_parse(optarg, up_name[nup], up_ns[nup]) < 0)
				bad_option("--uplink: '%s' is not tap:NAME[@NETNS] or "
					   "vxlan:id=VNI,remote=ADDR,...",
					   optarg);
			/* The same TAP twice would be two ports on one wire: a loop. */
			for (unsigned int i = 0; i < nup; i++)
				if (!strcmp(up_name[i], up_name[nup]) &&
				    !strcmp(up_ns[i], up_ns[nup]))
					bad_option("--uplink: '%s' is given twice", optarg);
			/* Checked here, before the namespace is looked for at start-up. */
			if (name_is_vif(up_name[nup]))
				bad_option("--uplink: '%s': %s is how a guest's vif is named "
					   "(vif<DOMID>.<DEVID>): a TAP uplink must be named "
					   "otherwise",
					   optarg, up_name[nup]);
			uplink_name_add(&un, up_name[nup], optarg);
			up_spec[nup++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pvnetd %s\n", PVNET_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "pvnetd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	pool = back_hold_pool_bytes(bcfg.rx_queue_max_bytes);
	if (!rx_guest_kib)
		bcfg.rx_guest_max_bytes = BACK_RX_GUEST_POOLS_DEFAULT * pool;
	else if ((uint64_t)rx_guest_kib * 1024u < pool)
		bad_option(
		    "--rx-guest-kib: %lu KiB is less than one RX queue's hold pool, %llu KiB "
		    "at --rx-queue-kib %u",
		    rx_guest_kib, (unsigned long long)(pool + 1023) / 1024u,
		    bcfg.rx_queue_max_bytes / 1024u);
	else
		bcfg.rx_guest_max_bytes = (uint64_t)rx_guest_kib * 1024u;

	/*
	 * Every event channel is four fds (two socketpairs) and every domain a few more
	 * descriptors: take the hard limit, not the usual soft 1024.
	 */
	{
		struct rlimit nofile;

		if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
			nofile.rlim_cur = nofile.rlim_max;
			if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
				warn("cannot raise the open-file limit: %s", strerror(errno));
		}
	}
	run_dir_resolve(d.run_dir, sizeof(d.run_dir));
	snprintf(path, sizeof(path), "%s/pvnetd.pid", d.run_dir);
	lock_fd = run_dir_lock(path, &holder);
	if (lock_fd == -EBUSY && holder > 0)
		die("run directory %s is in use by pvnetd pid %ld (%s)", d.run_dir, holder, path);
	if (lock_fd == -EBUSY)
		die("run directory %s is in use by another pvnetd (%s is locked)", d.run_dir, path);
	if (lock_fd < 0)
		die("run directory %s: lock file %s: %s", d.run_dir, path, strerror(-lock_fd));
	/* Removed while the lock is still held: exit closes the descriptor after the handlers. */
	snprintf(pid_file, sizeof(pid_file), "%s", path);
	atexit(pid_file_remove);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);

	d.loop = loop_create();
	if (!d.loop)
		die("event loop: %s", strerror(errno));
	d.sig.fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d.sig.fd < 0)
		die("signalfd: %s", strerror(errno));
	d.sig.cb = on_signal;
	d.sig.data = &d;
	/* Signals are blocked: without this watch nothing could stop pvnetd. */
	rc = loop_add(d.loop, &d.sig, EPOLLIN);
	if (rc < 0)
		die("event loop: signalfd: %s", strerror(-rc));

	hv_config_default(&hcfg);
	evtchn_limits(&hcfg, bcfg.max_queues);
	d.hv = hv_create(&hcfg);
	if (!d.hv)
		die("hypervisor emulation: %s", strerror(errno));
	store_config_default(&scfg);
	d.store = store_create(&scfg);
	if (!d.store)
		die("store: %s", strerror(errno));
	/*
	 * An uplink learns the MACs of a whole segment, up to its own limit:
	 * room for them comes on top of the table the vifs share, so that a
	 * busy segment cannot keep a guest's MAC from being learnt (its
	 * frames would then be flooded to every port).
	 */
	swcfg.fdb_max = SW_MAX_PORTS * swcfg.port_mac_limit + nup * UPLINK_TAP_MAC_LIMIT +
			nvx * UPLINK_VXLAN_MAC_LIMIT;
	rc = sw_create(&swcfg, &d.sw);
	if (rc < 0)
		die("switch: %s", strerror(-rc));
	if (nup + nvx || swcfg.port_mac_limit != SW_DEFAULT_MAC_LIM)
		info("switch: room for %u MACs, %u of them for the uplinks; up to %u on one vif",
		     swcfg.fdb_max, nup * UPLINK_TAP_MAC_LIMIT + nvx * UPLINK_VXLAN_MAC_LIMIT,
		     swcfg.port_mac_limit);
	rc = ageing_start(&d);
	if (rc < 0)
		die("switch: MAC ageing timer: %s", strerror(-rc));
	for (unsigned int i = 0; i < nup; i++) {
		rc = uplink_tap_port_create(d.sw, up_name[i], up_ns[i], &uplink[i]);
		if (rc < 0)
			die("uplink tap:%s: %s", up_name[i], strerror(-rc));
		d.uplinks[d.nuplinks++] =
		    (struct pvnetd_uplink){.type = "tap",
					   .spec = up_spec[i],
					   .port = uplink_tap_port_sw(uplink[i]),
					   .counters = tap_counters,
					   .up = uplink[i],
					   .stopped = tap_stopped};
	}
	for (unsigned int i = 0; i < nvx; i++) {
		rc = uplink_vxlan_port_create(d.sw, &vx[i], &vxlan[i]);
		/* -ELOOP: a remote of this host's, said in full by the port; no strerror() for it. */
		if (rc < 0)
			die("uplink %s: %s", vx[i].name,
			    rc == -ELOOP ? "not started" : strerror(-rc));
		d.uplinks[d.nuplinks++] =
		    (struct pvnetd_uplink){.type = "vxlan",
					   .spec = vx_spec[i],
					   .port = uplink_vxlan_port_sw(vxlan[i]),
					   .counters = vxlan_counters,
					   .up = vxlan[i]};
	}
	bcfg.loop = d.loop;
	d.tx_mode = back_tx_mode_name(bcfg.tx_mode);
	d.back = back_create(&bcfg, d.hv, d.store, d.sw);
	if (!d.back)
		die("netback: %s", strerror(errno));

	snprintf(path, sizeof(path), "%s/%s", d.run_dir, PVNETD_STORE_SOCK);
	rc = store_listen(d.store, d.loop, path, 0, 0600);
	if (rc < 0)
		die("store socket %s: %s", path, strerror(-rc));
	d.ctl = ctl_create(&d);
	if (!d.ctl)
		die("control socket in %s failed", d.run_dir);

	info("pvnetd %s: store at %s, control at %s/%s, tx mode %s", PVNET_VERSION, path, d.run_dir,
	     PVNETD_CTL_SOCK, d.tx_mode);
	/* What a guest that takes no frames can make pvnetd hold (docs/netback.md, Memory). */
	pools = bcfg.rx_guest_max_bytes / pool;
	if (pools > (uint64_t)bcfg.max_queues * PVNETD_MAX_VIFS)
		pools = (uint64_t)bcfg.max_queues * PVNETD_MAX_VIFS;
	info("guest RX: up to %u KiB waiting per queue, %u queues per vif, %u vifs per guest; "
	     "copies of frames held for one guest: up to %llu KiB (%llu hold pool%s)",
	     bcfg.rx_queue_max_bytes / 1024u, bcfg.max_queues, PVNETD_MAX_VIFS,
	     (unsigned long long)(pools * pool) >> 10, (unsigned long long)pools,
	     pools == 1 ? "" : "s");
	rc = loop_run(d.loop);
	if (rc < 0)
		err("event loop: %s", strerror(-rc));

	ctl_destroy(d.ctl);
	back_destroy(d.back);
	/* After the vifs: nobody holds their frames (an uplink's xmit writes them and lets go). */
	for (unsigned int i = 0; i < nup; i++)
		uplink_tap_port_destroy(uplink[i]);
	for (unsigned int i = 0; i < nvx; i++)
		uplink_vxlan_port_destroy(vxlan[i]);
	loop_del(d.loop, &d.age);
	close(d.age.fd);
	sw_destroy(d.sw);
	store_unlisten(d.store, path);
	store_destroy(d.store);
	hv_destroy(d.hv);
	loop_del(d.loop, &d.sig);
	close(d.sig.fd);
	loop_destroy(d.loop);
	info("pvnetd stopped");
	/* pid_file_remove() at exit, after every socket is gone, then the lock goes. */
	return rc < 0 ? 1 : 0;
}
