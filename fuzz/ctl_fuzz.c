// SPDX-License-Identifier: MIT
/* ctl_fuzz.c - libFuzzer harness: clients, hostile or not, on pvnetd's control socket */

/*
 * Theory of Operation
 *
 * pvnetd's control socket is where a frontend process becomes a domain
 * (domain-create with its memfd), allocates event channels and has vifs
 * made, and where `pvnet` reads the status and the MAC table and starts
 * captures.  A frontend is a guest: whatever it sends there may be
 * hostile.  Once per process this harness builds the parts of pvnetd the
 * socket drives (loop, hv, store, a switch with two plain ports "up0" and
 * "up1" that have learnt a few MACs, netback without workers) and
 * tools/pvnetd/ctl.c itself, listening in a run directory of its own, and
 * plays up to three clients at once.  The loop runs on the fuzzer's
 * thread, between requests, as pvnetd's control thread would.
 *
 * An input is a list of commands, each a header byte (bits 0-1: the
 * client, modulo 3; bits 2-4: what; bits 5-7: the descriptors sent with
 * it) and what the command reads after it:
 *
 *   raw       a 16-bit length and that many bytes (at most RAW_MAX), sent
 *             as one datagram: JSON or not, anything
 *   template  an op with its members built from an op byte, a 16-bit
 *             number, a string choice and a flags byte: well-formed JSON
 *             always, so that long valid sequences (a domain, its vifs, a
 *             capture beside them) are easy to reach
 *   close     the client hangs up (its domain goes with it)
 *
 * Descriptors: none, a one-page memfd sealed as hv wants a domain's
 * memory, one not sealed, an eventfd, a memfd and an eventfd, nine
 * eventfds (one more than a request may carry), a sealed two-page memfd.
 *
 * Checked for every request (a failed check prints why and traps):
 *   - exactly one reply comes, and it is a JSON object;
 *   - an error reply has a non-empty "error", an "errno" of 1..4095 and no
 *     descriptor;
 *   - what docs/control-socket.md promises, against a model of each
 *     client: a datagram that is empty, not a JSON object or carries more
 *     than 8 descriptors gets EBADMSG; one without an "op" string EINVAL,
 *     an unknown op EOPNOTSUPP, an op that needs a domain before
 *     domain-create ESRCH, a second domain-create or domain 0's name
 *     (Domain-0) EEXIST, domain-create while the connection captures, and
 *     fdb or capture-start on a domain's connection, EPERM;
 *   - a reply that succeeds carries what its op gives: domain-create a
 *     domid and one descriptor (the grant table), evtchn-alloc-unbound a
 *     port and three, capture-start one, every other op none; a
 *     status lists exactly the model's domains, vifs and captures (a
 *     page from its cursor on, and the next page's cursor, 0: everything
 *     here fits one; a cursor with "vif", or not a count, is EINVAL); the MAC table
 *     holds MACs of up0 and up1 only (no vif is ever connected here).
 *
 * After every input all clients hang up, and then hv has no domain but
 * dom0, no event channel, mapping or zombie beyond what it had at first;
 * this process has as many descriptors open as before the first input
 * (nothing pvnetd was sent or made is left open); a status from a fresh
 * client lists no domain, vif or capture; and the store holds as many
 * nodes as it did (a gone domain's and its vifs' directories are gone).  Sanitizers catch the
 * rest.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "back/back.h"
#include "common/ctlmsg.h"
#include "common/log.h"
#include "common/loop.h"
#include "cursor.h"
#include "hv/hv.h"
#include "store/store.h"
#include "switch/pkt.h"
#include "switch/switch.h"
#include "pvnetd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NCLIENTS     3
#define RAW_MAX	     4096  /* bytes of one raw datagram */
#define NNAMES	     8	   /* vif names remembered from vif-create replies */
#define ROUNDS_MAX   10000 /* loop rounds a reply or the clean-up may take (1 ms each, once idle) */
#define SEND_FDS_MAX (CTLMSG_MAX_FDS + 1)

/* What the model knows of one client. */
struct client {
	int fd;		    /* -1: not connected */
	bool domain;	    /* domain-create succeeded on it */
	unsigned int vifs;  /* vifs it has made and not destroyed */
	unsigned int ncaps; /* captures it runs */
};

/* The pvnetd the clients talk to, and what it had open before the first input. */
struct world {
	char dir[64];
	struct pvnetd d;
	struct sw_port *up[2];
	struct hv_stats base;
	unsigned int base_fds;
	unsigned int base_nodes;
};

static struct world *W;

static struct client clients[NCLIENTS];
static char names[NNAMES][32];
static unsigned int nnames;

static unsigned int model_vifs(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NCLIENTS; i++)
		n += clients[i].vifs;
	return n;
}

static unsigned int model_captures(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NCLIENTS; i++)
		n += clients[i].ncaps;
	return n;
}

static unsigned int model_domains(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < NCLIENTS; i++)
		n += clients[i].domain;
	return n;
}

static void fail(const char *what, const char *detail) __attribute__((noreturn));
static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "ctl_fuzz: invariant broken: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	__builtin_trap();
}

#define check(cond, detail)                                                                        \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fail(#cond, detail);                                                       \
	} while (0)

static unsigned int up_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	(void)p;
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n;
}

static const struct sw_port_ops up_ops = {.xmit = up_xmit};

static void frame_done(struct sw_pkt *pkt)
{
	(void)pkt;
}

/* A broadcast from 02:00:00:00:00:@last on @port: the switch learns the MAC there. */
static void learn(struct sw *sw, struct sw_port *port, uint8_t last)
{
	uint8_t hdr[14] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, last, 0x08, 0x00};
	struct sw_pkt pkt = {.hdr = hdr, .hdr_len = sizeof(hdr), .len = 60};
	struct sw_pkt *p = &pkt;

	sw_pkt_init(&pkt, frame_done);
	sw_forward(sw, port, &p, 1);
}

/* Descriptors open in this process; with @say, each is printed with what it is. */
static unsigned int open_fds(bool say)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int n = 0;

	if (!dir)
		fail("opendir /proc/self/fd", strerror(errno));
	while ((de = readdir(dir))) {
		char path[300], what[256];
		ssize_t len;

		n++;
		if (!say || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, what, sizeof(what) - 1);
		what[len > 0 ? len : 0] = '\0';
		fprintf(stderr, "ctl_fuzz: fd %s: %s\n", de->d_name, what);
	}
	closedir(dir);
	return n;
}

/* Nodes of the store's tree under @path, @path included. */
static unsigned int store_nodes(const char *path)
{
	unsigned int n = 0, count = 1;
	char **kids, sub[512];

	if (store_directory(W->d.store, path, &kids, &n) < 0)
		fail("listing the store", path);
	for (unsigned int i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "", kids[i]);
		count += store_nodes(sub);
	}
	free(kids);
	return count;
}

static int client_fd(struct client *c)
{
	if (c->fd < 0) {
		*c = (struct client){.fd = ctlmsg_connect(W->dir)};
		if (c->fd < 0)
			fail("connecting to the control socket", strerror(-c->fd));
		if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0)
			fail("O_NONBLOCK", strerror(errno));
	}
	return c->fd;
}

/* Hang up, and run the loop until pvnetd has destroyed the client's domain. */
static void client_close(struct client *c)
{
	struct hv_stats st;

	if (c->fd < 0)
		return;
	close(c->fd);
	*c = (struct client){.fd = -1};
	for (unsigned int i = 0; i < ROUNDS_MAX; i++) {
		loop_run_once(W->d.loop, i < 8 ? 0 : 1);
		hv_stats(W->d.hv, &st);
		if (st.domains == W->base.domains + model_domains())
			return;
	}
	fail("a client's domain outlived its connection", NULL);
}

static int memfd(unsigned int pages, bool sealed)
{
	int fd = memfd_create("ctl_fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)pages * HV_PAGE_SIZE) < 0 ||
	    (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0))
		fail("memfd", strerror(errno));
	return fd;
}

static int evfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd < 0)
		fail("eventfd", strerror(errno));
	return fd;
}

/* The descriptors of attachment @kind (header bits 5-7) into @fds; how many. */
static unsigned int attach(unsigned int kind, int *fds)
{
	switch (kind) {
	case 1:
		fds[0] = memfd(1, true);
		return 1;
	case 2:
		fds[0] = memfd(1, false);
		return 1;
	case 3:
		fds[0] = evfd();
		return 1;
	case 4:
		fds[0] = memfd(1, true);
		fds[1] = evfd();
		return 2;
	case 5:
		for (unsigned int i = 0; i < SEND_FDS_MAX; i++)
			fds[i] = evfd();
		return SEND_FDS_MAX;
	case 6:
		fds[0] = memfd(2, true);
		return 1;
	default:
		return 0;
	}
}

static void send_raw(int fd, const void *buf, size_t len, const int *fds, unsigned int nfds)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * SEND_FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	/* pvnetd never closes a connection for what it sent: a refusal here is a bug. */
	if (sendmsg(fd, &mh, MSG_NOSIGNAL) != (ssize_t)len)
		fail("sending a request", strerror(errno));
}

/* Run the loop until @fd's reply is there; exactly one must come. */
static json_t *await_reply(int fd, int *fds, unsigned int *nfds)
{
	json_t *msg, *extra;
	int xfds[CTLMSG_MAX_FDS];
	unsigned int nx;
	int rc;

	for (unsigned int i = 0; i < ROUNDS_MAX; i++) {
		rc = ctlmsg_recv(fd, &msg, fds, nfds);
		if (rc == 0)
			break;
		if (rc != -EAGAIN)
			fail("a reply that is not one JSON object", strerror(-rc));
		loop_run_once(W->d.loop, i < 8 ? 0 : 1);
	}
	if (rc != 0)
		fail("a request got no reply", NULL);
	loop_run_once(W->d.loop, 0);
	rc = ctlmsg_recv(fd, &extra, xfds, &nx);
	if (rc != -EAGAIN)
		fail("a second reply to one request", rc ? strerror(-rc) : "a message");
	return msg;
}

static bool op_needs_domain(const char *op)
{
	static const char *const ops[] = {"domain-name", "evtchn-alloc-unbound", "evtchn-close",
					  "vif-create", "vif-destroy"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return true;
	return false;
}

static bool op_known(const char *op)
{
	return op_needs_domain(op) || !strcmp(op, "domain-create") || !strcmp(op, "status") ||
	       !strcmp(op, "fdb") || !strcmp(op, "capture-start") || !strcmp(op, "capture-stop");
}

/*
 * A status request as docs/control-socket.md has it: "vif" a string,
 * "vifs" a boolean, "cursor" a count and never with "vif" (each optional).
 * Such a status always succeeds here (everything fits one message).
 */
static bool status_well_formed(const json_t *req)
{
	const json_t *vif = json_object_get(req, "vif"), *vifs = json_object_get(req, "vifs");
	const json_t *cur = json_object_get(req, "cursor");

	if ((vif && !json_is_string(vif)) || (vifs && !json_is_boolean(vifs)))
		return false;
	return !cur || (json_is_integer(cur) && json_integer_value(cur) >= 0 &&
			json_integer_value(cur) <= UINT32_MAX && !vif);
}

/*
 * The errno docs/control-socket.md promises @req (NULL: not a JSON object)
 * from client @c with @nfds descriptors, or 0 where either an answer or a
 * refusal may come.
 */
static int expected_errno(const struct client *c, const json_t *req, size_t len, unsigned int nfds)
{
	const char *op, *name;

	if (len == 0 || nfds > CTLMSG_MAX_FDS || !req)
		return EBADMSG;
	op = json_string_value(json_object_get(req, "op"));
	if (!op)
		return EINVAL;
	if (!op_known(op))
		return EOPNOTSUPP;
	if (op_needs_domain(op) && !c->domain)
		return ESRCH;
	name = json_string_value(json_object_get(req, "name"));
	if (!strcmp(op, "domain-name") && name && !strcmp(name, "Domain-0"))
		return EEXIST; /* domain 0's */
	if (!strcmp(op, "domain-create"))
		return c->domain ? EEXIST : c->ncaps ? EPERM : 0;
	if ((!strcmp(op, "fdb") || !strcmp(op, "capture-start")) && c->domain)
		return EPERM;
	if (!strcmp(op, "status") && !status_well_formed(req))
		return EINVAL;
	return 0;
}

static size_t array_size(const json_t *o, const char *key)
{
	const json_t *a = json_object_get(o, key);

	check(json_is_array(a), key);
	return json_array_size(a);
}

/* A reply that succeeded: what its op gives, and what the model learns from it. */
static void check_success(struct client *c, const json_t *req, const json_t *reply,
			  unsigned int nfds)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	json_int_t v;

	if (!strcmp(op, "domain-create")) {
		v = json_integer_value(json_object_get(reply, "domid"));
		check(nfds == 1, op);
		check(v >= 1 && v < DOMID_FIRST_RESERVED, op);
		check(json_is_string(json_object_get(reply, "store")), op);
		c->domain = true;
		return;
	}
	if (!strcmp(op, "evtchn-alloc-unbound")) {
		check(nfds == 3, op);
		check(json_is_integer(json_object_get(reply, "port")), op);
		return;
	}
	if (!strcmp(op, "capture-start")) {
		check(nfds == 1, op);
		c->ncaps++;
		return;
	}
	check(nfds == 0, op);
	if (!strcmp(op, "capture-stop")) {
		check(c->ncaps > 0, op);
		c->ncaps--;
	} else if (!strcmp(op, "vif-create")) {
		const char *name = json_string_value(json_object_get(reply, "name"));

		check(name && strlen(name) < sizeof(names[0]), op);
		check(c->vifs < PVNETD_MAX_VIFS, op);
		c->vifs++;
		snprintf(names[nnames++ % NNAMES], sizeof(names[0]), "%s", name);
	} else if (!strcmp(op, "vif-destroy")) {
		check(c->vifs > 0, op);
		c->vifs--;
	} else if (!strcmp(op, "status") && !json_object_get(req, "vif")) {
		const json_t *doms = json_object_get(reply, "domains");
		const json_t *cur = json_object_get(req, "cursor");
		/* A page from item @at of the vifs, then the captures: here all fit one. */
		json_int_t at = cur ? json_integer_value(cur) : 0;
		json_int_t nv = model_vifs(), items = nv + model_captures();

		check(array_size(reply, "domains") == model_domains(), "status: domains");
		check((json_int_t)array_size(reply, "vifs") == (at < nv ? nv - at : 0),
		      "status: vifs");
		check((json_int_t)array_size(reply, "captures") ==
			  (at < items ? items - (at > nv ? at : nv) : 0),
		      "status: captures");
		check(cur ? json_integer_value(json_object_get(reply, "cursor")) == 0 &&
				json_is_integer(json_object_get(reply, "cursor"))
			  : !json_object_get(reply, "cursor"),
		      "status: the next page's cursor");
		/* No frame moves here: no guest has a hold pool. */
		for (size_t i = 0; i < json_array_size(doms); i++) {
			const json_t *h = json_object_get(json_array_get(doms, i), "rx_hold_bytes");

			check(json_is_integer(h) && json_integer_value(h) == 0,
			      "status: a domain's rx_hold_bytes");
		}
	} else if (!strcmp(op, "fdb")) {
		const json_t *e = json_object_get(reply, "entries");

		check(json_array_size(e) <= 256, op);
		for (size_t i = 0; i < json_array_size(e); i++) {
			const char *p =
			    json_string_value(json_object_get(json_array_get(e, i), "port"));

			check(p && (!strcmp(p, "up0") || !strcmp(p, "up1")), "fdb: a port");
		}
	}
}

/* Send @len bytes with attachment @kind as client @c, and check the reply. */
static void request(struct client *c, const void *buf, size_t len, unsigned int kind)
{
	int fds[SEND_FDS_MAX], rfds[CTLMSG_MAX_FDS];
	unsigned int nfds, nrfds = 0;
	json_t *req = NULL, *reply;
	int fd = client_fd(c), want;
	const char *text;

	nfds = attach(kind, fds);
	send_raw(fd, buf, len, fds, nfds);
	for (unsigned int i = 0; i < nfds; i++)
		close(fds[i]); /* pvnetd has its own copies now */
	if (len)
		req = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (req && !json_is_object(req)) {
		json_decref(req);
		req = NULL;
	}
	want = expected_errno(c, req, len, nfds);
	reply = await_reply(fd, rfds, &nrfds);
	for (unsigned int i = 0; i < nrfds; i++)
		close(rfds[i]);
	text = json_string_value(json_object_get(reply, "error"));
	if (json_object_get(reply, "error")) {
		json_int_t e = json_integer_value(json_object_get(reply, "errno"));

		check(text && text[0], "an error reply without its words");
		check(json_is_integer(json_object_get(reply, "errno")) && e >= 1 && e < 4096, text);
		check(nrfds == 0, text);
		/* Nothing refuses a well-formed status but the rules of every request. */
		check(want || !req ||
			  strcmp(json_string_value(json_object_get(req, "op")) ?: "", "status") ||
			  !status_well_formed(req),
		      text);
		if (want && e != want) {
			char why[256];

			snprintf(why, sizeof(why), "errno %d where %d was due: %s", (int)e, want,
				 text);
			fail("the wrong refusal", why);
		}
	} else {
		check(!want, "a request the rules refuse succeeded");
		check_success(c, req, reply, nrfds);
	}
	json_decref(reply);
	json_decref(req);
}

/* Strings a template's members take: names, ports, MACs, directions, and some that fit none. */
static const char *const strs[] = {
    "",
    "up0",
    "up1",
    "vif1.0",
    "in",
    "out",
    "inout",
    "00:16:3e:00:00:01",
    "01:00:5e:00:00:01",
    "ff:ff:ff:ff:ff:ff",
    "guest-1.a_b:c@d",
    "two words",
    "\xc3\xa9t\xc3\xa9",
    "Domain-0",
};
#define NSTRS (sizeof(strs) / sizeof(strs[0]))

/* String choice @s: a vif name a reply gave (@s >= 0x80, once there is one), one of strs[], or 200 bytes. */
static const char *pick(uint8_t s)
{
	static char longname[201];

	if (s >= 0x80 && nnames)
		return names[s % (nnames < NNAMES ? nnames : NNAMES)];
	if (s % (NSTRS + 1) == NSTRS) {
		memset(longname, 'a', sizeof(longname) - 1);
		return longname;
	}
	return strs[s % (NSTRS + 1)];
}

/* A member's number: @n, or as a string when @f asks (a type the op must refuse). */
static json_t *num(uint16_t n, uint8_t f)
{
	char b[8];

	if (!(f & 1))
		return json_integer(n);
	snprintf(b, sizeof(b), "%u", n);
	return json_string(b);
}

/*
 * Build a request from the template bytes: op byte, number, string
 * choice, flags (bit 0: numbers as strings; bit 1: leave out the main
 * member, or for status and fdb put it in; bit 2: add the optional
 * member; bit 3: the value of a boolean member, or a capture's snap
 * length; bit 4: a status' cursor, of the number if bit 5, else of 0..3).
 * A capture's direction is the string choice's top two bits.
 */
static json_t *templated(struct cur *cur)
{
	static const char *const ops[] = {"domain-create", "domain-name", "evtchn-alloc-unbound",
					  "evtchn-close",  "vif-create",  "vif-destroy",
					  "status",	   "fdb",	  "capture-start",
					  "capture-stop"};
	static const char *const dirs[] = {"in", "out", "inout", "both"};
	uint8_t t = get8(cur), s = get8(cur), f;
	uint16_t n = get16(cur);
	bool main_member, opt;
	json_t *o = json_object();

	f = get8(cur);
	main_member = !(f & 2);
	opt = f & 4;
	if (!o)
		abort();
	t %= (uint8_t)(sizeof(ops) / sizeof(ops[0]) + 1);
	if (t == sizeof(ops) / sizeof(ops[0])) {
		json_object_set_new(o, "op", json_string(pick(s)));
		return o;
	}
	json_object_set_new(o, "op", json_string(ops[t]));
	switch (t) {
	case 0:
		if (main_member)
			json_object_set_new(o, "pages", num(n, f));
		break;
	case 1:
		if (main_member)
			json_object_set_new(o, "name", json_string(pick(s)));
		break;
	case 2:
		if (main_member)
			json_object_set_new(o, "remote", num(n, f));
		break;
	case 3:
		if (main_member)
			json_object_set_new(o, "port", num(n, f));
		break;
	case 4:
		if (main_member)
			json_object_set_new(o, "devid", num(n, f));
		if (opt)
			json_object_set_new(o, "mac", json_string(pick(s)));
		break;
	case 5:
		if (main_member)
			json_object_set_new(o, "devid", num(n, f));
		break;
	case 6:
		if (!main_member)
			json_object_set_new(o, "vif", json_string(pick(s)));
		if (opt)
			json_object_set_new(o, "vifs", json_boolean(f & 8));
		if (f & 16) /* a page: mostly from near the start, where the items are */
			json_object_set_new(o, "cursor", num(f & 32 ? n : n % 4, f));
		break;
	case 7:
		if (!main_member)
			json_object_set_new(o, "port", json_string(pick(s)));
		if (opt)
			json_object_set_new(o, "cursor", num(n, f));
		break;
	case 8:
		if (main_member)
			json_object_set_new(o, "port", json_string(pick(s)));
		if (opt)
			json_object_set_new(o, "direction", json_string(dirs[s >> 6]));
		if (f & 8)
			json_object_set_new(o, "snaplen", num(n, f));
		break;
	default:
		if (main_member)
			json_object_set_new(o, "port", json_string(pick(s)));
		break;
	}
	return o;
}

static void run_command(struct cur *cur)
{
	uint8_t h = get8(cur);
	struct client *c = &clients[(h & 3) % NCLIENTS];
	unsigned int what = (h >> 2) & 7, kind = h >> 5;

	if (what == 2) {
		client_close(c);
		return;
	}
	if (what == 1) {
		json_t *o = templated(cur);
		char *text = json_dumps(o, JSON_COMPACT);

		if (!text)
			fail("a template that is not JSON", NULL);
		request(c, text, strlen(text), kind);
		free(text);
		json_decref(o);
		return;
	}
	{
		size_t len = get16(cur) % (RAW_MAX + 1);

		if (len > cur->n)
			len = cur->n;
		request(c, cur->p, len, kind);
		cur->p += len;
		cur->n -= len;
	}
}

/* Run the loop until every closed client's domain is gone and its descriptors with it. */
static void settle(void)
{
	struct hv_stats st;
	unsigned int fds = 0;
	char why[160];

	for (unsigned int i = 0; i < ROUNDS_MAX; i++) {
		hv_stats(W->d.hv, &st);
		if (st.domains == W->base.domains && st.evtchns_open == W->base.evtchns_open &&
		    st.maps_in_use == W->base.maps_in_use && st.zombies == 0 &&
		    (fds = open_fds(false)) == W->base_fds)
			return;
		loop_run_once(W->d.loop, i < 8 ? 0 : 1);
	}
	open_fds(true);
	snprintf(why, sizeof(why),
		 "domains %u, event channels %u, mappings %" PRIu64 ", zombies %u, %u fds (at "
		 "first %u, %u, %" PRIu64 ", 0, %u)",
		 st.domains, st.evtchns_open, st.maps_in_use, st.zombies, fds, W->base.domains,
		 W->base.evtchns_open, W->base.maps_in_use, W->base_fds);
	fail("what closed clients held is not released", why);
}

static void finish(void)
{
	static const char status[] = "{\"op\":\"status\"}";
	struct client *c = &clients[0];
	int rfds[CTLMSG_MAX_FDS];
	unsigned int nrfds;
	json_t *reply;

	for (unsigned int i = 0; i < NCLIENTS; i++)
		client_close(&clients[i]);
	settle();
	send_raw(client_fd(c), status, sizeof(status) - 1, NULL, 0);
	reply = await_reply(c->fd, rfds, &nrfds);
	check(nrfds == 0, "status");
	check(array_size(reply, "domains") == 0, "status after every client left: domains");
	check(array_size(reply, "vifs") == 0, "status after every client left: vifs");
	check(array_size(reply, "captures") == 0, "status after every client left: captures");
	json_decref(reply);
	client_close(c);
	settle();
	if (store_nodes("/") != W->base_nodes) {
		char why[64];

		snprintf(why, sizeof(why), "%u nodes, %u at first", store_nodes("/"),
			 W->base_nodes);
		fail("the store keeps what gone domains and vifs wrote", why);
	}
}

/* A request pvnetd must grant: its reply's descriptors are closed. */
static void must_grant(struct client *c, const char *req, int fd)
{
	int rfds[CTLMSG_MAX_FDS];
	unsigned int nrfds;
	json_t *reply;

	send_raw(client_fd(c), req, strlen(req), &fd, fd >= 0);
	if (fd >= 0)
		close(fd);
	reply = await_reply(c->fd, rfds, &nrfds);
	while (nrfds)
		close(rfds[--nrfds]);
	check(!json_object_get(reply, "error"), req);
	json_decref(reply);
}

/*
 * Once, before the baselines: a guest with an event channel and a vif.
 * The channel starts hv's thread that closes the signals a guest had
 * (hv/evtchn.c), whose pipe stays open for the life of the process and is
 * no leak (what it closes, it closes a moment later); the vif leaves dom0's
 * own directory in the store, /local/domain/0, as a Xen host has it.
 */
static void warm_up(void)
{
	unsigned int before = open_fds(false);

	must_grant(&clients[0], "{\"op\":\"domain-create\",\"pages\":1}", memfd(1, true));
	must_grant(&clients[0], "{\"op\":\"evtchn-alloc-unbound\",\"remote\":0}", -1);
	must_grant(&clients[0], "{\"op\":\"vif-create\"}", -1);
	client_close(&clients[0]);
	for (unsigned int i = 0; i < ROUNDS_MAX; i++) {
		W->base_fds = open_fds(false);
		W->base_nodes = store_nodes("/");
		if (W->base_fds == before + 2)
			return;
		loop_run_once(W->d.loop, 1);
	}
	open_fds(true);
	fail("warm-up: not just the closing thread's pipe was left open", NULL);
}

static void world_teardown(void)
{
	for (unsigned int i = 0; i < NCLIENTS; i++)
		if (clients[i].fd >= 0)
			close(clients[i].fd);
	ctl_destroy(W->d.ctl);
	back_destroy(W->d.back);
	sw_destroy(W->d.sw);
	store_destroy(W->d.store);
	hv_destroy(W->d.hv);
	loop_destroy(W->d.loop);
	rmdir(W->dir);
	free(W);
	W = NULL;
}

static void world_get(void)
{
	struct back_config bcfg;
	struct store_config scfg;
	struct hv_config hcfg;
	struct sw_config swcfg;

	if (W)
		return;
	log_set_level(LOG_ERR);
	W = calloc(1, sizeof(*W));
	if (!W)
		abort();
	snprintf(W->dir, sizeof(W->dir), "/tmp/pvnet-ctlfuzz.XXXXXX");
	if (!mkdtemp(W->dir))
		fail("run directory", strerror(errno));
	snprintf(W->d.run_dir, sizeof(W->d.run_dir), "%s", W->dir);
	W->d.loop = loop_create();
	hv_config_default(&hcfg);
	W->d.hv = hv_create(&hcfg);
	store_config_default(&scfg);
	W->d.store = store_create(&scfg);
	sw_config_init(&swcfg);
	if (!W->d.loop || !W->d.hv || !W->d.store || sw_create(&swcfg, &W->d.sw) < 0 ||
	    sw_port_add(W->d.sw, "up0", &up_ops, NULL, &W->up[0]) < 0 ||
	    sw_port_add(W->d.sw, "up1", &up_ops, NULL, &W->up[1]) < 0)
		fail("setting up pvnetd's parts", NULL);
	for (uint8_t m = 1; m <= 3; m++)
		learn(W->d.sw, W->up[0], m);
	learn(W->d.sw, W->up[1], 4);
	back_config_default(&bcfg);
	bcfg.loop = W->d.loop;
	bcfg.no_workers = true;
	W->d.tx_mode = back_tx_mode_name(bcfg.tx_mode);
	W->d.back = back_create(&bcfg, W->d.hv, W->d.store, W->d.sw);
	W->d.ctl = W->d.back ? ctl_create(&W->d) : NULL;
	if (!W->d.ctl)
		fail("setting up netback and the control socket", NULL);
	for (unsigned int i = 0; i < NCLIENTS; i++)
		clients[i].fd = -1;
	hv_stats(W->d.hv, &W->base);
	warm_up();
	atexit(world_teardown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cur c = {data, size};

	world_get();
	nnames = 0;
	/* Bounded: every command reads at least one byte. */
	while (c.n > 0)
		run_command(&c);
	finish();
	return 0;
}
