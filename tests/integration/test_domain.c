// SPDX-License-Identifier: MIT
/* test_domain.c - frontend domains against a real pvnetd: create, store access, death, bad requests */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <xenstore.h>

#include <pvnet/pvnet.h>

#include "common/ctlmsg.h"
#include "../common/group_run.h"
#include "itest.h"

/*
 * One pvnetd for the whole file, started in a fresh run directory; each
 * test makes its own domains and checks pvnetd's view through the
 * control socket ("status"), as `pvnet status` does.
 */

static const char *pvnetd_path;
static struct itest T;
#define run_dir T.run_dir

static int ctl_open(void)
{
	return itest_ctl_open(&T);
}

static long long stat_get(const char *a, const char *b)
{
	return itest_status_get(&T, a, b);
}

/* Wait (bounded) until pvnetd has destroyed @n domains in total. */
static void wait_destroyed(long long n)
{
	for (int i = 0; i < 400; i++) {
		if (stat_get("destroyed", "domains") >= n)
			return;
		usleep(10000);
	}
	fail_msg("pvnetd did not destroy the domain within 4 s");
}

static struct xs_handle *xs_as(const char *sock)
{
	struct xs_handle *xs;

	setenv("XENSTORED_PATH", sock, 1);
	xs = xs_open(XS_OPEN_SOCKETONLY);
	assert_non_null(xs);
	return xs;
}

static int group_setup(void **state)
{
	return itest_start(&T, pvnetd_path, "domain", NULL);
}

static int group_teardown(void **state)
{
	return itest_stop(&T);
}

static void test_create_and_store_access(void **state)
{
	struct pvnet_domain *dom;
	struct xs_handle *guest, *dom0;
	char path[64], dom0sock[PATH_MAX + 16];
	unsigned int len;
	long long destroyed;
	char *v;

	assert_int_equal(pvnet_domain_create(run_dir, 64, &dom), 0);
	assert_true(pvnet_domain_id(dom) >= 1);
	assert_int_equal(pvnet_domain_pages(dom), 64);
	assert_non_null(pvnet_domain_page(dom, 63));
	assert_null(pvnet_domain_page(dom, 64));

	snprintf(dom0sock, sizeof(dom0sock), "%s/xenstore.sock", run_dir);
	dom0 = xs_as(dom0sock);
	guest = xs_as(pvnet_domain_store_path(dom));

	/* The guest's home is /local/domain/<domid>, and it owns it. */
	v = xs_get_domain_path(guest, pvnet_domain_id(dom));
	snprintf(path, sizeof(path), "/local/domain/%u", pvnet_domain_id(dom));
	assert_string_equal(v, path);
	free(v);
	assert_true(xs_write(guest, XBT_NULL, "data/x", "42", 2));
	snprintf(path, sizeof(path), "/local/domain/%u/data/x", pvnet_domain_id(dom));
	v = xs_read(dom0, XBT_NULL, path, &len);
	assert_non_null(v);
	assert_string_equal(v, "42");
	free(v);

	/* A node dom0 wrote with default permissions is closed to the guest. */
	assert_true(xs_write(dom0, XBT_NULL, "/secret/key", "s", 1));
	errno = 0;
	assert_null(xs_read(guest, XBT_NULL, "/secret/key", &len));
	assert_int_equal(errno, EACCES);
	assert_false(xs_write(guest, XBT_NULL, "/secret/key", "t", 1));

	xs_close(guest);
	xs_close(dom0);
	assert_int_equal(stat_get("hv", "domains") >= 1, 1);
	/* The domain's store socket goes with it: nobody connects as a dead domain. */
	snprintf(dom0sock, sizeof(dom0sock), "%s", pvnet_domain_store_path(dom));
	assert_int_equal(access(dom0sock, F_OK), 0);
	destroyed = stat_get("destroyed", "domains");
	pvnet_domain_destroy(dom);
	wait_destroyed(destroyed + 1);
	assert_int_equal(access(dom0sock, F_OK), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_grants_and_evtchn(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_evtchn ch;
	uint32_t ref, ref2;

	assert_int_equal(pvnet_domain_create(run_dir, 16, &dom), 0);
	assert_int_equal(pvnet_grant_access(dom, 0, 3, true, &ref), 0);
	assert_true(ref >= 8); /* 0..7 are reserved, as on Xen */
	assert_int_equal(pvnet_grant_access(dom, 0, 4, false, &ref2), 0);
	assert_int_not_equal(ref, ref2);
	assert_int_equal(pvnet_grant_access(dom, 0, 16, false, &ref2 /* out of range */), -EINVAL);
	assert_int_equal(pvnet_grant_end(dom, ref), 0);

	assert_int_equal(pvnet_evtchn_alloc(dom, 0, &ch), 0);
	assert_true(ch.fd >= 0);
	assert_int_equal(pvnet_evtchn_pending(&ch), 0);
	assert_int_equal(pvnet_evtchn_notify(&ch), 0); /* unbound: dropped, as on Xen */
	assert_true(stat_get("hv", "evtchns_open") >= 1);
	assert_int_equal(pvnet_evtchn_close(dom, &ch), 0);
	pvnet_domain_destroy(dom);
}

static void test_killed_frontend_is_released(void **state)
{
	long long before = stat_get("destroyed", "domains");
	long long ev_before = stat_get("destroyed", "evtchns_open");
	long long gr_before = stat_get("destroyed", "grants_active");
	int pipefd[2], st;
	pid_t pid;
	char c;

	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	if (pid == 0) {
		struct pvnet_domain *dom;
		struct pvnet_evtchn ch;
		uint32_t ref;

		if (pvnet_domain_create(run_dir, 32, &dom) || pvnet_evtchn_alloc(dom, 0, &ch) ||
		    pvnet_grant_access(dom, 0, 1, false, &ref))
			_exit(1);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	wait_destroyed(before + 1);
	/* What the dead domain still held is reported, then released. */
	assert_true(stat_get("destroyed", "evtchns_open") >= ev_before + 1);
	assert_true(stat_get("destroyed", "grants_active") >= gr_before + 1);
	assert_int_equal(stat_get("hv", "maps_in_use"), 0);

	/* pvnetd carries on: a new domain attaches. */
	struct pvnet_domain *dom;

	assert_int_equal(pvnet_domain_create(run_dir, 8, &dom), 0);
	pvnet_domain_destroy(dom);
}

/* @req (consumed) is refused with @err, and the reason names @says (NULL: anything). */
static void expect_error_says(int fd, json_t *req, const int *fds, unsigned int nfds, int err,
			      const char *says)
{
	json_t *reply = NULL;
	int rc = ctlmsg_call(fd, req, fds, nfds, &reply, NULL, NULL);
	const char *why = json_string_value(json_object_get(reply, "error"));

	assert_int_equal(rc, -err);
	assert_non_null(why);
	if (says && !strstr(why, says))
		fail_msg("error \"%s\" does not say \"%s\"", why, says);
	json_decref(reply);
	json_decref(req);
}

static void expect_error(int fd, json_t *req, const int *fds, unsigned int nfds, int err)
{
	expect_error_says(fd, req, fds, nfds, err, NULL);
}

/* Send the text @raw as one request: the error reply names @says. */
static void expect_raw_refused(int fd, const char *raw, const char *says)
{
	size_t len = strlen(raw);
	json_t *reply = NULL;
	unsigned int nfds;
	const char *why;

	assert_int_equal(send(fd, raw, len, 0), (ssize_t)len);
	assert_int_equal(ctlmsg_recv(fd, &reply, NULL, &nfds), 0);
	assert_int_equal(json_integer_value(json_object_get(reply, "errno")), EBADMSG);
	why = json_string_value(json_object_get(reply, "error"));
	assert_non_null(why);
	if (!strstr(why, says))
		fail_msg("error \"%s\" does not say \"%s\"", why, says);
	json_decref(reply);
}

static void test_bad_control_requests(void **state)
{
	int fd = ctl_open(), memfd;
	json_t *reply = NULL;

	expect_error(fd, json_pack("{s:s}", "op", "no-such-op"), NULL, 0, EOPNOTSUPP);
	/* An unknown op quoted in the error cut at a character, never through one. */
	{
		char op[2 + 40 * 2 + 1] = "a";

		for (int k = 0; k < 40; k++)
			strcat(op, "\xc3\xa9"); /* e acute, two bytes each: byte 64 is inside one */
		expect_error(fd, json_pack("{s:s}", "op", op), NULL, 0, EOPNOTSUPP);
	}
	expect_error(fd, json_pack("{s:i}", "pages", 3), NULL, 0, EINVAL);
	expect_error(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4), NULL, 0,
		     EINVAL);
	expect_error(fd, json_pack("{s:s, s:s}", "op", "domain-create", "pages", "x"), NULL, 0,
		     EINVAL);
	/* The range is said: 1 page to 1 GiB. */
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 0), NULL, 0,
			  EINVAL, "must be 1..262144");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 262145), NULL,
			  0, EINVAL, "must be 1..262144");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "status", "vifs", "no"), NULL, 0,
			  EINVAL, "true or false");
	/* Every op on a domain this connection does not have: ESRCH, as Xen's for no domain. */
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", 0),
			  NULL, 0, ESRCH, "no domain (send domain-create)");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "evtchn-close", "port", 1), NULL, 0,
			  ESRCH, "no domain");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-create", "devid", 0), NULL, 0,
			  ESRCH, "no domain");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-destroy", "devid", 0), NULL, 0,
			  ESRCH, "no domain");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "x"), NULL, 0,
			  ESRCH, "no domain");

	/* Memory that is not sealed could shrink under pvnetd: refused. */
	memfd = memfd_create("unsealed", MFD_CLOEXEC);
	assert_int_equal(ftruncate(memfd, 4 * 4096), 0);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4), &memfd, 1,
			  EINVAL, "sealed with F_SEAL_SHRINK and F_SEAL_GROW");
	close(memfd);
	/* Sealed but not the size it claims: refused. */
	memfd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_int_equal(ftruncate(memfd, 2 * 4096), 0);
	assert_int_equal(fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4), &memfd, 1,
			  EINVAL, "not a memfd of exactly 4 pages");
	close(memfd);

	/*
	 * Not JSON, a key twice, not an object, an empty message: an error
	 * reply saying which, and the connection still works.
	 */
	expect_raw_refused(fd, "{nope", "not JSON");
	expect_raw_refused(fd, "{\"op\":\"status\",\"op\":\"status\"}", "duplicate");
	expect_raw_refused(fd, "[1]", "not a JSON object");
	expect_raw_refused(fd, "", "empty");
	json_t *req = json_pack("{s:s}", "op", "status");
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	json_decref(reply);
	close(fd);

	/* A client that stops sending (shutdown, no close) is done: closed, not told "empty". */
	{
		unsigned int nfds;

		fd = ctl_open();
		assert_int_equal(ctlmsg_set_timeout(fd, 5000), 0);
		assert_int_equal(shutdown(fd, SHUT_WR), 0);
		reply = NULL;
		assert_int_equal(ctlmsg_recv(fd, &reply, NULL, &nfds), -ECONNRESET);
		assert_null(reply);
		close(fd);
	}
}

/*
 * A status of many connected vifs does not fit one control message (64
 * KiB): the reply says so and the connection stays (it used to be closed,
 * which for a guest means its domain); one vif, or the vifs without their
 * counters, can be asked for.  16 vifs of 6 queues: some 85 KiB.
 */
static void test_status_too_big(void **state)
{
	struct pvnet_vif_config cfg;
	struct pvnet_vif *v[16];
	struct pvnet_domain *dom;
	json_t *req, *reply = NULL;
	char name[32];
	int fd, rc;

	(void)state;
	assert_int_equal(pvnet_domain_create(run_dir, 8192, &dom), 0);
	for (unsigned int d = 0; d < 16; d++) {
		pvnet_vif_config_default(&cfg);
		cfg.devid = d;
		cfg.queues = 6;
		cfg.tx_buffers = 32;
		cfg.rx_buffers = 32;
		assert_int_equal(pvnet_vif_create(dom, &cfg, &v[d]), 0);
	}
	fd = ctl_open();
	req = json_pack("{s:s}", "op", "status");
	rc = ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL);
	json_decref(req);
	assert_int_equal(rc, -E2BIG);
	assert_non_null(strstr(json_string_value(json_object_get(reply, "error")), "exceed"));
	json_decref(reply);
	reply = NULL;

	/* The same connection: the list without counters, then one vif whole. */
	req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	assert_int_equal(json_array_size(json_object_get(reply, "vifs")), 16);
	json_decref(reply);
	reply = NULL;
	snprintf(name, sizeof(name), "vif%u.3", pvnet_domain_id(dom));
	req = json_pack("{s:s, s:s}", "op", "status", "vif", name);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	assert_int_equal(json_array_size(json_object_get(reply, "vifs")), 1);
	assert_int_equal(json_array_size(json_object_get(
			     json_array_get(json_object_get(reply, "vifs"), 0), "queues")),
			 6);
	json_decref(reply);
	close(fd);
	for (unsigned int d = 0; d < 16; d++)
		pvnet_vif_destroy(v[d]);
	pvnet_domain_destroy(dom);
}

/* domain-create on @fd with a sealed memfd of @pages pages: the connection becomes a domain. */
static int raw_domain_create(int fd, unsigned int pages)
{
	int mfd, rfds[CTLMSG_MAX_FDS], rc;
	unsigned int nr = 0;
	json_t *req, *reply = NULL;

	mfd = memfd_create("raw-domain", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, (off_t)pages * 4096), 0);
	assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	req = json_pack("{s:s, s:i}", "op", "domain-create", "pages", pages);
	rc = ctlmsg_call(fd, req, &mfd, 1, &reply, rfds, &nr);
	close(mfd);
	while (nr)
		close(rfds[--nr]);
	json_decref(req);
	json_decref(reply);
	return rc;
}

/* @req (consumed) on @fd: the reply, the caller's to json_decref(); ctlmsg_call()'s result in *@rc. */
static json_t *raw_call(int fd, json_t *req, int *rc)
{
	json_t *reply = NULL;

	*rc = ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL);
	json_decref(req);
	return reply;
}

/*
 * What a domain's connection asks is checked: one domain per connection,
 * made of exactly one memfd; its store socket is its own (mode 0600).
 * vif-create takes devids 0..65535, each once, and a "mac" that is a
 * string of a unicast address; it answers with the MAC in lower case, and
 * makes one up as xl does (Xen's OUI, then a byte below 0x80); a domain
 * has at most 16 vifs; vif-destroy takes a vif once.
 */
static void test_domain_requests_checked(void **state)
{
	int fd = ctl_open(), rc;
	unsigned int domid = 0, d;
	long long destroyed;
	char path[PATH_MAX];
	struct stat st;
	const char *mac;
	json_t *reply;

	(void)state;
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4), NULL, 0,
			  EINVAL, "pass exactly one memfd (got 0 fds)");
	assert_int_equal(raw_domain_create(fd, 4), 0);
	assert_int_equal(raw_domain_create(fd, 4), -EEXIST);

	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-create", "devid", 65536), NULL, 0,
			  EINVAL, "\"devid\" must be 0..65535");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-create", "mac", 5), NULL, 0,
			  EINVAL, "\"mac\" must be");
	expect_error_says(fd,
			  json_pack("{s:s, s:s}", "op", "vif-create", "mac", "01:00:5e:00:00:01"),
			  NULL, 0, EINVAL, "\"mac\" must be");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "status", "vif", 5), NULL, 0, EINVAL,
			  "\"vif\" must be a name");

	/* devid 65535, then 0..13: MACs made up; 14 with its own, in upper case. */
	for (d = 0; d < 15; d++) {
		unsigned int dev = d ? d - 1 : 65535, got;

		reply =
		    raw_call(fd, json_pack("{s:s, s:i}", "op", "vif-create", "devid", dev), &rc);
		assert_int_equal(rc, 0);
		assert_int_equal(sscanf(json_string_value(json_object_get(reply, "name")),
					"vif%u.%u", &domid, &got),
				 2);
		assert_int_equal(got, dev);
		mac = json_string_value(json_object_get(reply, "mac"));
		assert_non_null(mac);
		assert_int_equal(strlen(mac), 17);
		assert_memory_equal(mac, "00:16:3e:", 9);
		if (strtoul(mac + 9, NULL, 16) >= 0x80)
			fail_msg("vif-create made up MAC %s: its fourth byte is 0x80 or more", mac);
		json_decref(reply);
	}
	reply = raw_call(fd,
			 json_pack("{s:s, s:i, s:s}", "op", "vif-create", "devid", 14, "mac",
				   "0A:16:3E:AB:CD:EF"),
			 &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(json_string_value(json_object_get(reply, "mac")), "0a:16:3e:ab:cd:ef");
	json_decref(reply);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-create", "devid", 65535), NULL, 0,
			  EEXIST, "exists");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-create", "devid", 15), NULL, 0,
			  ENOSPC, "has 16 vifs already");
	reply = raw_call(fd, json_pack("{s:s, s:i}", "op", "vif-destroy", "devid", 65535), &rc);
	assert_int_equal(rc, 0);
	json_decref(reply);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "vif-destroy", "devid", 65535), NULL, 0,
			  ENOENT, "no vif");

	snprintf(path, sizeof(path), "%s/xenstore-dom%u.sock", run_dir, domid);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	/* The domain goes with the connection, before the next test counts vifs. */
	destroyed = stat_get("destroyed", "domains");
	close(fd);
	wait_destroyed(destroyed + 1);
}

/*
 * What the control socket says when it refuses: a port that is not open is
 * named; a domain not named has no "name" key in the status (documented as
 * absent, not null); and a connection past the most pvnetd keeps open gets
 * an error reply saying so before it is closed, not a bare reset.
 */
static void test_refusals_said(void **state)
{
	int fd = ctl_open(), conns[300];
	unsigned int n = 0, ok = 0;
	json_t *req = json_pack("{s:s}", "op", "status"), *reply = NULL, *d;
	size_t i;
	bool found = false;

	assert_int_equal(raw_domain_create(fd, 4), 0);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "evtchn-close", "port", 999), NULL, 0,
			  EINVAL, "has no port 999 open");
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_array_foreach(json_object_get(reply, "domains"), i, d)
	{
		assert_non_null(json_object_get(d, "domid"));
		assert_null(json_object_get(d, "name"));
		found = true;
	}
	assert_true(found);
	json_decref(reply);
	for (n = 0; n < sizeof(conns) / sizeof(conns[0]); n++) {
		int rc;

		conns[n] = ctl_open();
		reply = NULL;
		rc = ctlmsg_call(conns[n], req, NULL, 0, &reply, NULL, NULL);
		if (rc == 0) {
			ok++;
			json_decref(reply);
			continue;
		}
		assert_int_equal(rc, -EMFILE);
		/* Refused at exactly the documented most, not one before or after it. */
		assert_string_equal(json_string_value(json_object_get(reply, "error")),
				    "pvnetd has 256 control connections open, its most");
		json_decref(reply);
		n++;
		break;
	}
	/* ours and those: the most it keeps (256), whatever else was open */
	assert_in_range(ok, 200, 255);
	/* libpvnet reads the refusal too: a domain that cannot be made says why. */
	{
		struct pvnet_domain *dom = NULL;

		assert_int_equal(pvnet_domain_create(run_dir, 8, &dom), -EMFILE);
		assert_null(dom);
	}
	assert_true(n <= sizeof(conns) / sizeof(conns[0]));
	while (n)
		close(conns[--n]);
	/* pvnetd sees the hang-ups in its own time: the tests after this one need room. */
	for (int tries = 0; tries < 200; tries++) {
		int c = ctl_open(), rc;

		reply = NULL;
		rc = ctlmsg_call(c, req, NULL, 0, &reply, NULL, NULL);
		json_decref(reply);
		close(c);
		if (rc == 0)
			break;
		assert_int_equal(rc, -EMFILE);
		usleep(10000);
	}
	json_decref(req);
	close(fd);
}

/*
 * A client that sends requests without reading the replies: once its
 * socket takes no more, pvnetd keeps the next reply, with its
 * descriptors, and reads no request until it is sent; so every reply
 * arrives, in order, a port with its three descriptors.  The requests
 * alternate between allocating port @p and closing it, so that the ports
 * never run out; the replies are of one size, and which of them finds the
 * socket full is the same each time: the second round starts with one
 * request more (its reply an error of the same size), so that one round
 * has a port's reply kept.  A client that goes away meanwhile is
 * forgotten, and pvnetd carries on.
 */
static void test_unread_replies_kept(void **state)
{
	int rfds[CTLMSG_MAX_FDS], fd, rc;
	json_t *alloc = json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", 0);
	json_t *req, *reply, *close_req;
	long long destroyed, p;
	unsigned int nr;

	(void)state;
	for (int round = 0; round < 2; round++) {
		int sent = 0;

		fd = ctl_open();
		assert_int_equal(raw_domain_create(fd, 16), 0);
		reply = NULL;
		assert_int_equal(ctlmsg_call(fd, alloc, NULL, 0, &reply, rfds, &nr), 0);
		p = json_integer_value(json_object_get(reply, "port"));
		json_decref(reply);
		while (nr)
			close(rfds[--nr]);
		close_req = json_pack("{s:s, s:I}", "op", "evtchn-close", "port", (json_int_t)p);
		json_decref(raw_call(fd, json_incref(close_req), &rc));
		assert_int_equal(rc, 0);
		/* Blocking sends, each bounded: they stop once pvnetd reads no more. */
		assert_int_equal(ctlmsg_set_timeout(fd, 200), 0);
		if (round == 1 && ctlmsg_send(fd, close_req, NULL, 0) == 0)
			sent++;
		while (sent < 4000 &&
		       ctlmsg_send(fd, sent % 2 == round ? alloc : close_req, NULL, 0) == 0)
			sent++;
		assert_in_range(sent, 2, 3999);
		for (int i = 0; i < sent; i++) {
			reply = NULL;
			assert_int_equal(ctlmsg_recv(fd, &reply, rfds, &nr), 0);
			if (i == 0 && round == 1) {
				assert_int_equal(
				    json_integer_value(json_object_get(reply, "errno")), EINVAL);
			} else if (i % 2 == round) {
				if (json_integer_value(json_object_get(reply, "port")) != p ||
				    nr != 3)
					fail_msg("round %d, reply %d of %d: port %lld with %u fds",
						 round, i, sent,
						 json_integer_value(json_object_get(reply, "port")),
						 nr);
			} else {
				assert_null(json_object_get(reply, "error"));
				assert_int_equal(nr, 0);
			}
			while (nr)
				close(rfds[--nr]);
			json_decref(reply);
		}
		json_decref(close_req);
		destroyed = stat_get("destroyed", "domains");
		close(fd);
		wait_destroyed(destroyed + 1);
	}
	json_decref(alloc);

	/* A tool asks for status again and again, reads nothing, and goes. */
	fd = ctl_open();
	assert_int_equal(ctlmsg_set_timeout(fd, 200), 0);
	req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0);
	for (int sent = 0; sent < 4000 && ctlmsg_send(fd, req, NULL, 0) == 0; sent++)
		assert_true(sent < 3999);
	close(fd);
	fd = ctl_open();
	reply = NULL;
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(reply);
	json_decref(req);
	close(fd);
	assert_int_equal(kill(T.pid, 0), 0);
}

/*
 * pvnetd runs 63 guests at most (64 domains, dom0 one of them): the next
 * domain-create is refused with ENOSPC, saying so.
 */
static void test_domain_slots_run_out(void **state)
{
	int fds[70], n, rc = 0;
	long long destroyed = stat_get("destroyed", "domains"), made = 0;

	(void)state;
	for (n = 0; n < 70; n++) {
		fds[n] = ctl_open();
		rc = raw_domain_create(fds[n], 1);
		if (rc < 0)
			break;
		made++;
	}
	assert_int_equal(rc, -ENOSPC);
	assert_true(made >= 1 && made <= 63);
	{
		int mfd = memfd_create("one-more", MFD_CLOEXEC | MFD_ALLOW_SEALING);

		assert_int_equal(ftruncate(mfd, 4096), 0);
		assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
		expect_error_says(fds[n],
				  json_pack("{s:s, s:i}", "op", "domain-create", "pages", 1), &mfd,
				  1, ENOSPC, "every domain slot of pvnetd is in use");
		close(mfd);
	}
	for (n++; n > 0; n--)
		close(fds[n - 1]);
	wait_destroyed(destroyed + made);
}

/*
 * A client that sends many requests before reading any reply: no reply is
 * lost (pvnetd holds one the socket cannot take and reads no more requests
 * until it is sent), so every port allocated is one the client learns of.
 * A guest's share of channels is at most 1023, the rest refused: ENOSPC,
 * or ENFILE where pvnetd's budget for all guests is less (at least 64).
 */
static void test_pipelined_requests(void **state)
{
	enum { N = 1100 };
	int fd = ctl_open(), rfds[CTLMSG_MAX_FDS], sent = 0, got = 0, ok = 0, full = 0, idle = 0;
	long long before, why;
	unsigned int nr;
	json_t *req, *reply = NULL;

	(void)state;
	assert_int_equal(raw_domain_create(fd, 16), 0);
	before = stat_get("hv", "evtchns_open");

	/*
	 * Send whatever the socket takes, then give pvnetd time to answer
	 * more than our socket holds before reading what came.
	 */
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	req = json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", 0);
	while (got < N && idle < 50) {
		int before_round = got;

		while (sent < N && ctlmsg_send(fd, req, NULL, 0) == 0)
			sent++;
		usleep(100000);
		while (ctlmsg_recv(fd, &reply, rfds, &nr) == 0) {
			got++;
			ok += !json_object_get(reply, "error") && nr == 3 &&
			      json_is_integer(json_object_get(reply, "port"));
			why = json_integer_value(json_object_get(reply, "errno"));
			full += (why == ENOSPC || why == ENFILE) && nr == 0;
			while (nr)
				close(rfds[--nr]);
			json_decref(reply);
		}
		idle = got == before_round ? idle + 1 : 0;
	}
	json_decref(req);
	assert_int_equal(sent, N);
	assert_int_equal(got, N);
	assert_in_range(ok, 64, 1023);
	assert_int_equal(ok + full, N);
	assert_int_equal(stat_get("hv", "evtchns_open"), before + ok);
	close(fd); /* the domain goes, with its ports */
}

/* The descriptors pvnetd has open. */
static int pvnetd_fds(void)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)T.pid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

/* capture-start on @fd; returns the reply (its error checked by the caller) and the socket. */
static int capture_start(int fd, json_t *req, int *sock)
{
	int rfds[CTLMSG_MAX_FDS], rc;
	unsigned int nr = 0;
	json_t *reply = NULL;

	rc = ctlmsg_call(fd, req, NULL, 0, &reply, rfds, &nr);
	json_decref(req);
	if (rc < 0)
		assert_non_null(json_string_value(json_object_get(reply, "error")));
	json_decref(reply);
	*sock = nr ? rfds[0] : -1;
	assert_int_equal(nr, rc < 0 ? 0 : 1);
	return rc;
}

/*
 * The control requests of `pvnet capture`: a guest's connection may not
 * capture (it would see other guests' frames) and a capturing connection
 * may not become a guest; bad arguments are refused with a reason; one
 * capture per port; a capture ends with its connection.
 */
/* A new domain with one vif (32 buffers each way); @name: its switch port's name. */
static void one_vif(struct pvnet_domain **dom, struct pvnet_vif **vif, char name[32])
{
	struct pvnet_vif_config cfg;

	assert_int_equal(pvnet_domain_create(run_dir, 256, dom), 0);
	pvnet_vif_config_default(&cfg);
	cfg.tx_buffers = cfg.rx_buffers = 32;
	assert_int_equal(pvnet_vif_create(*dom, &cfg, vif), 0);
	snprintf(name, 32, "vif%u.0", pvnet_domain_id(*dom));
}

static void test_capture_requests(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	int fd, guest, sock, nfds;
	json_t *req, *reply = NULL;
	char name[32];

	(void)state;
	one_vif(&dom, &vif, name);

	/* A guest's connection. */
	guest = ctl_open();
	assert_int_equal(raw_domain_create(guest, 4), 0);
	assert_int_equal(capture_start(guest,
				       json_pack("{s:s, s:s}", "op", "capture-start", "port", name),
				       &sock),
			 -EPERM);

	fd = ctl_open();
	assert_int_equal(capture_start(fd, json_pack("{s:s}", "op", "capture-start"), &sock),
			 -EINVAL);
	assert_int_equal(
	    capture_start(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", ""), &sock),
	    -EINVAL);
	assert_int_equal(capture_start(fd,
				       json_pack("{s:s, s:s, s:s}", "op", "capture-start", "port",
						 name, "direction", "sideways"),
				       &sock),
			 -EINVAL);
	assert_int_equal(capture_start(fd,
				       json_pack("{s:s, s:s, s:i}", "op", "capture-start", "port",
						 name, "snaplen", 0),
				       &sock),
			 -EINVAL);
	assert_int_equal(capture_start(fd,
				       json_pack("{s:s, s:s, s:i}", "op", "capture-start", "port",
						 name, "snaplen", 262145),
				       &sock),
			 -EINVAL);
	/* A refused capture-start leaves pvnetd nothing open (the socket pair it made goes). */
	nfds = pvnetd_fds();
	for (int k = 0; k < 8; k++)
		assert_int_equal(capture_start(fd,
					       json_pack("{s:s, s:s}", "op", "capture-start",
							 "port", "vif999.0"),
					       &sock),
				 -ENOENT);
	assert_int_equal(pvnetd_fds(), nfds);
	assert_int_equal(capture_start(fd,
				       json_pack("{s:s, s:s, s:s, s:i}", "op", "capture-start",
						 "port", name, "direction", "in", "snaplen", 128),
				       &sock),
			 0);
	assert_true(sock >= 0);
	/* The reader's end only reads: pvnetd's end takes nothing. */
	assert_int_equal(send(sock, "x", 1, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EPIPE);
	close(sock);
	assert_int_equal(
	    capture_start(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name), &sock),
	    -EBUSY);
	/* A capturing connection does not become a domain. */
	assert_int_equal(raw_domain_create(fd, 4), -EPERM);
	expect_error(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", "up0"), NULL, 0,
		     ENOENT);
	/* A name quoted in the error cut at a character, never through one (byte 32 is inside). */
	{
		char port[31 + 2 + 1];

		memset(port, 'a', 31);
		strcpy(port + 31, "\xc3\xa9");
		expect_error(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", port), NULL,
			     0, ENOENT);
	}
	req = json_pack("{s:s, s:s}", "op", "capture-stop", "port", name);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	assert_true(json_is_integer(json_object_get(reply, "captured")));
	assert_true(json_is_integer(json_object_get(reply, "dropped")));
	json_decref(reply);
	expect_error(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", name), NULL, 0,
		     ENOENT);

	/* A capture whose connection closes is gone: the port can be captured again. */
	assert_int_equal(
	    capture_start(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name), &sock),
	    0);
	close(sock);
	close(fd);
	fd = ctl_open();
	for (int tries = 0;; tries++) { /* pvnetd may see the new request before the hang-up */
		int rc = capture_start(
		    fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name), &sock);

		if (rc == 0)
			break;
		assert_int_equal(rc, -EBUSY);
		assert_true(tries < 100);
		usleep(10000);
	}

	/*
	 * Its port goes away (the domain with it): the reader sees end of file,
	 * the status says the capture no longer runs, and the next
	 * capture-start of the connection frees it (its slot, its name).
	 */
	close(guest);
	pvnet_vif_destroy(vif);
	pvnet_domain_destroy(dom);
	{
		json_t *sreq = json_pack("{s:s}", "op", "status"), *cap = NULL;
		char c;

		assert_int_equal(read(sock, &c, 1), 0);
		for (int tries = 0; tries < 100; tries++) {
			reply = NULL;
			assert_int_equal(ctlmsg_call(fd, sreq, NULL, 0, &reply, NULL, NULL), 0);
			cap = json_array_get(json_object_get(reply, "captures"), 0);
			assert_non_null(cap);
			assert_string_equal(json_string_value(json_object_get(cap, "port")), name);
			if (json_is_false(json_object_get(cap, "running")))
				break;
			assert_true(json_is_true(json_object_get(cap, "running")));
			json_decref(reply);
			reply = NULL;
			usleep(10000);
		}
		assert_non_null(reply);
		json_decref(reply);
		expect_error(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name), NULL,
			     0, ENOENT);
		reply = NULL;
		assert_int_equal(ctlmsg_call(fd, sreq, NULL, 0, &reply, NULL, NULL), 0);
		assert_int_equal(json_array_size(json_object_get(reply, "captures")), 0);
		json_decref(reply);
		json_decref(sreq);
	}
	close(sock);
	close(fd);
}

/*
 * capture-start's defaults and limits as documented: no direction or snap
 * length is "inout" of 262144 bytes, the most taken; a bad direction or
 * snap length refused, saying which and what is allowed.  capture-stop
 * stops the port named, not one whose name it begins ("vif3" is not
 * "vif3.0"), and wants a "port".  What a request brings or a capture
 * leaves is closed: descriptors attached to a status, the reading end a
 * capture hands out (its copy in pvnetd); pvnetd has as many open after
 * as before.
 */
static void test_capture_details(void **state)
{
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	char name[32], prefix[32];
	json_t *req, *reply;
	int fd = ctl_open(), sock, rc, nfds, mfd[3];

	(void)state;
	one_vif(&dom, &vif, name);
	req = json_pack("{s:s, s:s}", "op", "capture-start", "port", name);
	reply = NULL;
	{
		int rfds[CTLMSG_MAX_FDS];
		unsigned int nr = 0;

		assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, rfds, &nr), 0);
		assert_int_equal(nr, 1);
		close(rfds[0]);
	}
	json_decref(req);
	assert_string_equal(json_string_value(json_object_get(reply, "direction")), "inout");
	assert_int_equal(json_integer_value(json_object_get(reply, "snaplen")), 262144);
	json_decref(reply);
	snprintf(prefix, sizeof(prefix), "vif%u", pvnet_domain_id(dom));
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", prefix), NULL,
			  0, ENOENT, "does not capture");
	expect_error_says(fd, json_pack("{s:s}", "op", "capture-stop"), NULL, 0, EINVAL,
			  "\"port\" must be a port name");
	reply = raw_call(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", name), &rc);
	assert_int_equal(rc, 0);
	json_decref(reply);

	expect_error_says(fd,
			  json_pack("{s:s, s:s, s:s}", "op", "capture-start", "port", name,
				    "direction", "sideways"),
			  NULL, 0, EINVAL, "\"direction\" must be \"in\", \"out\" or \"inout\"");
	expect_error_says(
	    fd, json_pack("{s:s, s:s, s:i}", "op", "capture-start", "port", name, "snaplen", 0),
	    NULL, 0, EINVAL, "\"snaplen\" must be 1..262144");
	assert_int_equal(
	    capture_start(fd,
			  json_pack("{s:s, s:s, s:i, s:s}", "op", "capture-start", "port", name,
				    "snaplen", 262144, "direction", "out"),
			  &sock),
	    0);
	close(sock);
	reply = raw_call(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", name), &rc);
	assert_int_equal(rc, 0);
	json_decref(reply);

	/* Nothing left open: captures started and stopped, descriptors nobody asked for. */
	nfds = pvnetd_fds();
	for (int k = 0; k < 4; k++) {
		assert_int_equal(
		    capture_start(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name),
				  &sock),
		    0);
		close(sock);
		reply =
		    raw_call(fd, json_pack("{s:s, s:s}", "op", "capture-stop", "port", name), &rc);
		assert_int_equal(rc, 0);
		json_decref(reply);
	}
	for (int k = 0; k < 3; k++) {
		mfd[k] = memfd_create("extra", MFD_CLOEXEC);
		assert_true(mfd[k] >= 0);
	}
	for (int k = 0; k < 4; k++) {
		req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0);
		reply = NULL;
		assert_int_equal(ctlmsg_call(fd, req, mfd, 3, &reply, NULL, NULL), 0);
		json_decref(req);
		json_decref(reply);
	}
	for (int k = 0; k < 3; k++)
		close(mfd[k]);
	assert_int_equal(pvnetd_fds(), nfds);

	close(fd);
	pvnet_vif_destroy(vif);
	pvnet_domain_destroy(dom);
}

/* A connection runs 8 captures at most: the ninth is refused (EMFILE), saying so. */
static void test_capture_limit(void **state)
{
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *vif[9];
	int fd, socks[9];
	char name[32];

	(void)state;
	assert_int_equal(pvnet_domain_create(run_dir, 2048, &dom), 0);
	for (unsigned int d = 0; d < 9; d++) {
		pvnet_vif_config_default(&cfg);
		cfg.devid = d;
		cfg.tx_buffers = cfg.rx_buffers = 32;
		assert_int_equal(pvnet_vif_create(dom, &cfg, &vif[d]), 0);
	}
	fd = ctl_open();
	for (unsigned int d = 0; d < 8; d++) {
		snprintf(name, sizeof(name), "vif%u.%u", pvnet_domain_id(dom), d);
		assert_int_equal(
		    capture_start(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name),
				  &socks[d]),
		    0);
	}
	snprintf(name, sizeof(name), "vif%u.8", pvnet_domain_id(dom));
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "capture-start", "port", name), NULL, 0,
			  EMFILE, "runs 8 captures already");
	close(fd);
	for (unsigned int d = 0; d < 8; d++)
		close(socks[d]);
	for (unsigned int d = 0; d < 9; d++)
		pvnet_vif_destroy(vif[d]);
	pvnet_domain_destroy(dom);
}

/* The fdb entries pvnetd gives for @port in one request (no cursor), or NULL on an error. */
static json_t *fdb_of(int fd, const char *port)
{
	json_t *reply;
	int rc;

	reply = raw_call(fd, json_pack("{s:s, s:s}", "op", "fdb", "port", port), &rc);
	if (rc < 0) {
		const char *why = json_string_value(json_object_get(reply, "error"));

		fail_msg("fdb of %s: %s", port, why ? why : strerror(-rc));
	}
	return reply;
}

/*
 * The MAC table through the control socket (`pvnet fdb`): a vif's MAC is
 * there once the vif sent a frame, under its port, with an age of
 * seconds, and gone with the vif; one port's alone; the request's members
 * checked; a guest's connection refused, as for captures.
 */
static void test_fdb_requests(void **state)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct pvnet_domain *dom;
	struct pvnet_vif *vif;
	struct pvnet_pkt p;
	uint8_t f[60] = {0}, mac[6];
	char name[32], smac[18];
	json_t *reply = NULL, *e;
	int fd, guest, rc;

	(void)state;
	one_vif(&dom, &vif, name);
	pvnet_vif_mac(vif, mac);
	snprintf(smac, sizeof(smac), "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);

	fd = ctl_open();
	reply = fdb_of(fd, name);
	assert_int_equal(json_array_size(json_object_get(reply, "entries")), 0);
	assert_int_equal(json_integer_value(json_object_get(reply, "cursor")), 0);
	assert_int_equal(json_integer_value(json_object_get(reply, "max")), 16384);
	assert_int_equal(json_integer_value(json_object_get(reply, "ageing")), 300);
	json_decref(reply);

	memcpy(f, bcast, 6);
	memcpy(f + 6, mac, 6);
	f[12] = 0x88; /* a local experimental EtherType: nobody answers it */
	f[13] = 0xb5;
	p = (struct pvnet_pkt){.data = f, .len = sizeof(f)};
	assert_int_equal(pvnet_send(vif, 0, &p, 1), 1);
	for (int i = 0; i < 400; i++) {
		reply = fdb_of(fd, name);
		if (json_array_size(json_object_get(reply, "entries")))
			break;
		json_decref(reply);
		reply = NULL;
		usleep(10000);
	}
	if (!reply)
		fail_msg("pvnetd did not learn %s's MAC within 4 s", name);
	assert_int_equal(json_array_size(json_object_get(reply, "entries")), 1);
	e = json_array_get(json_object_get(reply, "entries"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "mac")), smac);
	assert_string_equal(json_string_value(json_object_get(e, "port")), name);
	assert_true(json_integer_value(json_object_get(e, "age")) <= 2);
	assert_true(json_integer_value(json_object_get(reply, "count")) >= 1);
	json_decref(reply);

	/* The whole table (no "port"): the MAC is there too, once. */
	reply = raw_call(fd, json_pack("{s:s, s:i}", "op", "fdb", "cursor", 0), &rc);
	assert_int_equal(rc, 0);
	{
		size_t i, found = 0;

		json_array_foreach(json_object_get(reply, "entries"), i, e)
		{
			found += !strcmp(json_string_value(json_object_get(e, "mac")), smac);
		}
		assert_int_equal(found, 1);
	}
	json_decref(reply);

	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "fdb", "port", 5), NULL, 0, EINVAL,
			  "\"port\" must be a port name");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "fdb", "port", ""), NULL, 0, EINVAL,
			  "\"port\" must be a port name");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "fdb", "port", "nope"), NULL, 0, ENOENT,
			  "fdb: no port \"nope\" on the switch");
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "fdb", "cursor", -1), NULL, 0, EINVAL,
			  "\"cursor\" must be 0 or the \"cursor\" of the last reply");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "fdb", "cursor", "1"), NULL, 0, EINVAL,
			  "\"cursor\" must be 0");
	expect_error_says(fd, json_pack("{s:s, s:I}", "op", "fdb", "cursor", (json_int_t)1 << 32),
			  NULL, 0, EINVAL, "\"cursor\" must be 0");
	expect_error_says(fd,
			  json_pack("{s:s, s:I}", "op", "fdb", "cursor", (json_int_t)UINT32_MAX),
			  NULL, 0, EINVAL, "fdb: \"cursor\" 4294967295 is past the table");

	/* A guest's connection may not read it. */
	guest = ctl_open();
	assert_int_equal(raw_domain_create(guest, 4), 0);
	expect_error_says(guest, json_pack("{s:s}", "op", "fdb"), NULL, 0, EPERM,
			  "may not read the MAC table");
	close(guest);

	/* Gone with its vif's port. */
	pvnet_vif_destroy(vif);
	pvnet_domain_destroy(dom);
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "fdb", "port", name), NULL, 0, ENOENT,
			  "no port");
	reply = raw_call(fd, json_pack("{s:s}", "op", "fdb"), &rc);
	assert_int_equal(rc, 0);
	{
		size_t i;

		json_array_foreach(json_object_get(reply, "entries"), i, e)
		{
			assert_string_not_equal(json_string_value(json_object_get(e, "mac")), smac);
		}
	}
	json_decref(reply);
	close(fd);
}

/* A sealed memfd of @pages pages, as domain-create takes. */
static int sealed_memfd(unsigned int pages)
{
	int mfd = memfd_create("domain", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, (off_t)pages * 4096), 0);
	assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	return mfd;
}

/*
 * domain-create's reply, member by member (docs/control-socket.md): the
 * domid, the domain's store socket in the run directory, the root of its
 * store directory ("home", /local/domain), and one descriptor, the grant
 * table; and exactly one memfd taken, two refused saying how many came.
 */
static void test_domain_create_reply(void **state)
{
	int fd = ctl_open(), mfd[2], rfds[CTLMSG_MAX_FDS], rc;
	json_t *req, *reply = NULL;
	char want[PATH_MAX + 32];
	long long destroyed;
	unsigned int nr = 0;
	json_int_t domid;

	(void)state;
	mfd[0] = sealed_memfd(4);
	mfd[1] = sealed_memfd(4);
	expect_error_says(fd, json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4), mfd, 2,
			  EINVAL, "pass exactly one memfd (got 2 fds)");
	req = json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4);
	rc = ctlmsg_call(fd, req, mfd, 1, &reply, rfds, &nr);
	json_decref(req);
	close(mfd[0]);
	close(mfd[1]);
	assert_int_equal(rc, 0);
	domid = json_integer_value(json_object_get(reply, "domid"));
	assert_true(domid >= 1);
	snprintf(want, sizeof(want), "%s/xenstore-dom%lld.sock", run_dir, (long long)domid);
	assert_string_equal(json_string_value(json_object_get(reply, "store")), want);
	assert_string_equal(json_string_value(json_object_get(reply, "home")), "/local/domain");
	assert_int_equal(nr, 1);
	/* The grant table: memory of some pages the guest maps. */
	{
		struct stat st;

		assert_int_equal(fstat(rfds[0], &st), 0);
		assert_true(st.st_size >= 4096);
		close(rfds[0]);
	}
	json_decref(reply);
	destroyed = stat_get("destroyed", "domains");
	close(fd);
	wait_destroyed(destroyed + 1);
}

/* The "error" of @req's (consumed) reply on @fd, which must be refused with @err; freed by the caller. */
static char *error_of(int fd, json_t *req, int err)
{
	json_t *reply = NULL;
	int rc = ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL);
	char *why;

	assert_int_equal(rc, -err);
	assert_non_null(json_string_value(json_object_get(reply, "error")));
	why = strdup(json_string_value(json_object_get(reply, "error")));
	json_decref(reply);
	json_decref(req);
	return why;
}

/*
 * The control socket's limits at their exact values, and what its replies
 * say (docs/control-socket.md): a "remote" is a domid (up to 32751, the
 * last before DOMID_FIRST_RESERVED), an event channel "port" any 32-bit
 * number (one not open is named); vif-create's "devid" defaults to 0 and
 * its reply names the vif's frontend and backend directories; a port name
 * is under 32 bytes (SW_PORT_NAME_MAX) for fdb and capture-start; a status of
 * one vif is of that vif only (vif1.1 is not vif1.10), and "vifs": true is
 * the list with counters, as no "vifs" at all.  An unknown op, and a port
 * capture-stop does not know, are quoted up to their limit (63 bytes of
 * an op, 31 of a port name here), cut before a character, not through it.
 */
static void test_control_limits(void **state)
{
	int fd = ctl_open(), tool = ctl_open(), rc;
	char want[256], op[2 + 40 * 2 + 1] = "a", port[31 + 2 + 1], *why;
	struct pvnet_vif_config cfg;
	struct pvnet_domain *dom;
	struct pvnet_vif *v[12];
	unsigned int domid;
	long long destroyed;
	json_t *reply;

	(void)state;
	assert_int_equal(raw_domain_create(fd, 4), 0);
	expect_error_says(fd,
			  json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", 32752),
			  NULL, 0, EINVAL, "\"remote\" must be a domid");
	reply = raw_call(fd, json_pack("{s:s, s:i}", "op", "evtchn-alloc-unbound", "remote", 32751),
			 &rc);
	assert_int_equal(rc, 0);
	json_decref(reply);
	expect_error_says(
	    fd, json_pack("{s:s, s:I}", "op", "evtchn-close", "port", (json_int_t)UINT32_MAX), NULL,
	    0, EINVAL, "has no port 4294967295 open");
	expect_error_says(
	    fd, json_pack("{s:s, s:I}", "op", "evtchn-close", "port", (json_int_t)UINT32_MAX + 1),
	    NULL, 0, EINVAL, "\"port\" must be a port number");

	/* vif-create without a devid: vif<domid>.0, its directories in the reply. */
	reply = raw_call(fd, json_pack("{s:s}", "op", "vif-create"), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(
	    sscanf(json_string_value(json_object_get(reply, "name")), "vif%u.0", &domid), 1);
	snprintf(want, sizeof(want), "vif%u.0", domid);
	assert_string_equal(json_string_value(json_object_get(reply, "name")), want);
	snprintf(want, sizeof(want), "/local/domain/%u/device/vif/0", domid);
	assert_string_equal(json_string_value(json_object_get(reply, "frontend")), want);
	snprintf(want, sizeof(want), "/local/domain/0/backend/vif/%u/0", domid);
	assert_string_equal(json_string_value(json_object_get(reply, "backend")), want);
	json_decref(reply);
	/* No frontend connects it: no queues, so no tx mode, carrier or features yet. */
	snprintf(want, sizeof(want), "vif%u.0", domid);
	reply = raw_call(tool, json_pack("{s:s, s:s}", "op", "status", "vif", want), &rc);
	assert_int_equal(rc, 0);
	{
		json_t *vj = json_array_get(json_object_get(reply, "vifs"), 0);

		assert_non_null(vj);
		assert_int_equal(json_array_size(json_object_get(vj, "queues")), 0);
		assert_null(json_object_get(vj, "tx_mode"));
		assert_null(json_object_get(vj, "carrier"));
		assert_null(json_object_get(vj, "error"));
		assert_int_equal(json_object_size(json_object_get(vj, "features")), 0);
		assert_int_equal(json_object_size(json_object_get(vj, "switch")), 0);
	}
	json_decref(reply);

	/* One vif by name among vif.0 .. vif.11: vif.1 only, not vif.10 and vif.11. */
	assert_int_equal(pvnet_domain_create(run_dir, 2048, &dom), 0);
	for (unsigned int d = 0; d < 12; d++) {
		pvnet_vif_config_default(&cfg);
		cfg.devid = d;
		cfg.tx_buffers = cfg.rx_buffers = 32;
		assert_int_equal(pvnet_vif_create(dom, &cfg, &v[d]), 0);
	}
	snprintf(want, sizeof(want), "vif%u.1", pvnet_domain_id(dom));
	reply = raw_call(tool, json_pack("{s:s, s:s}", "op", "status", "vif", want), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(json_object_get(reply, "vifs")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(reply, "vifs"), 0), "name")),
			    want);
	json_decref(reply);
	reply = raw_call(tool, json_pack("{s:s, s:b}", "op", "status", "vifs", 1), &rc);
	assert_int_equal(rc, 0);
	assert_true(json_array_size(json_object_get(reply, "vifs")) >= 13);
	{
		json_t *e;
		size_t i;

		json_array_foreach(json_object_get(reply, "vifs"), i, e)
		{
			assert_non_null(json_object_get(e, "queues"));
			assert_non_null(json_object_get(e, "state"));
		}
	}
	json_decref(reply);
	/* "vifs": false: each vif's name, domid and devid only, each its own. */
	reply = raw_call(tool, json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	{
		json_t *e;
		size_t i;

		json_array_foreach(json_object_get(reply, "vifs"), i, e)
		{
			snprintf(want, sizeof(want), "vif%lld.%lld",
				 (long long)json_integer_value(json_object_get(e, "domid")),
				 (long long)json_integer_value(json_object_get(e, "devid")));
			assert_string_equal(json_string_value(json_object_get(e, "name")), want);
			assert_int_equal(json_object_size(e), 3);
		}
	}
	json_decref(reply);
	for (unsigned int d = 0; d < 12; d++)
		pvnet_vif_destroy(v[d]);
	pvnet_domain_destroy(dom);

	/* A port name is under 32 bytes: 31 is looked for, 32 refused as no name. */
	memset(port, 'a', 32);
	port[32] = '\0';
	expect_error_says(tool, json_pack("{s:s, s:s}", "op", "fdb", "port", port), NULL, 0, EINVAL,
			  "\"port\" must be a port name");
	expect_error_says(tool, json_pack("{s:s, s:s}", "op", "capture-start", "port", port), NULL,
			  0, EINVAL, "\"port\" must be a port name");
	port[31] = '\0';
	expect_error_says(tool, json_pack("{s:s, s:s}", "op", "fdb", "port", port), NULL, 0, ENOENT,
			  "no port");
	expect_error_says(tool, json_pack("{s:s, s:s}", "op", "capture-start", "port", port), NULL,
			  0, ENOENT, "no port");

	/* Quoted up to the limit, cut before a character (é is two bytes). */
	for (int k = 0; k < 40; k++)
		strcat(op, "\xc3\xa9");
	why = error_of(tool, json_pack("{s:s}", "op", op), EOPNOTSUPP);
	op[63] = '\0';
	snprintf(want, sizeof(want), "unknown op \"%s\"", op);
	assert_string_equal(why, want);
	free(why);
	memset(port, 'a', 31);
	strcpy(port + 31, "\xc3\xa9");
	why = error_of(tool, json_pack("{s:s, s:s}", "op", "capture-stop", "port", port), ENOENT);
	port[31] = '\0';
	snprintf(want, sizeof(want), "capture-stop: this connection does not capture \"%s\"", port);
	assert_string_equal(why, want);
	free(why);

	close(tool);
	destroyed = stat_get("destroyed", "domains");
	close(fd);
	wait_destroyed(destroyed + 1);
}

/* The "name" of domain @domid in a status reply (NULL: none, or no such domain). */
static const char *status_name(const json_t *status, unsigned int domid)
{
	json_t *d;
	size_t i;

	json_array_foreach(json_object_get(status, "domains"), i, d)
	{
		if (json_integer_value(json_object_get(d, "domid")) == domid)
			return json_string_value(json_object_get(d, "name"));
	}
	return NULL;
}

/*
 * domain-name, as a toolstack names a guest (docs/control-socket.md): 1..128
 * characters of A-Z a-z 0-9 . _ : @ -, each limit and character taken or
 * refused as documented; the name is /local/domain/<domid>/name, domain 0's
 * node the guest may read but not write, and status gives it with the
 * domain and with its vifs.  Naming again renames (the same name included),
 * a name another live domain has is refused (EEXIST), and it is free again
 * once that domain is gone.
 */
static void test_domain_names(void **state)
{
	char longest[129 + 1], path[64], dom0sock[PATH_MAX + 16];
	struct pvnet_domain *dom;
	struct pvnet_vif_config cfg;
	struct pvnet_vif *vif;
	struct xs_handle *guest, *dom0;
	struct xs_permissions *perms;
	unsigned int domid, n, len;
	json_t *reply, *st;
	long long destroyed;
	int fd, rc;
	char *v;

	(void)state;
	assert_int_equal(pvnet_domain_create(run_dir, 256, &dom), 0);
	domid = pvnet_domain_id(dom);
	pvnet_vif_config_default(&cfg);
	cfg.tx_buffers = cfg.rx_buffers = 32;
	assert_int_equal(pvnet_vif_create(dom, &cfg, &vif), 0);

	/* The longest name, of every character there is room for: taken, whole. */
	for (n = 0; n < 128; n++)
		longest[n] = "Az09._:@-"[n % 9];
	longest[128] = '\0';
	assert_int_equal(pvnet_domain_set_name(dom, longest), 0);
	st = itest_status(&T);
	if (!status_name(st, domid) || strcmp(status_name(st, domid), longest))
		fail_msg("status names domain %u \"%s\"", domid,
			 status_name(st, domid) ? status_name(st, domid) : "(none)");
	{
		json_t *vj, *found = NULL;
		char want[32];
		size_t i;

		snprintf(want, sizeof(want), "vif%u.0", domid);
		json_array_foreach(json_object_get(st, "vifs"), i, vj)
		{
			if (!strcmp(json_string_value(json_object_get(vj, "name")), want))
				found = vj;
		}
		assert_non_null(found);
		assert_string_equal(json_string_value(json_object_get(found, "domain_name")),
				    longest);
	}
	json_decref(st);

	/* In the store: domain 0's node, the guest may read it and not write it. */
	snprintf(dom0sock, sizeof(dom0sock), "%s/xenstore.sock", run_dir);
	dom0 = xs_as(dom0sock);
	guest = xs_as(pvnet_domain_store_path(dom));
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	v = xs_read(guest, XBT_NULL, path, &len);
	assert_non_null(v);
	assert_string_equal(v, longest);
	free(v);
	assert_false(xs_write(guest, XBT_NULL, path, "mine", 4));
	perms = xs_get_permissions(dom0, XBT_NULL, path, &n);
	assert_non_null(perms);
	assert_int_equal(n, 2);
	assert_int_equal(perms[0].id, 0);
	assert_int_equal(perms[0].perms, XS_PERM_NONE);
	assert_int_equal(perms[1].id, domid);
	assert_int_equal(perms[1].perms, XS_PERM_READ);
	free(perms);

	/* One longer, empty, or a character outside the set: refused, the name kept. */
	longest[128] = 'a';
	longest[129] = '\0';
	fd = ctl_open();
	assert_int_equal(raw_domain_create(fd, 4), 0);
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", longest), NULL,
			  0, EINVAL, "\"name\" must be 1..128 characters");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", ""), NULL, 0,
			  EINVAL, "\"name\" must be 1..128 characters");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "a/b"), NULL, 0,
			  EINVAL, "\"name\" must be");
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "a b"), NULL, 0,
			  EINVAL, "\"name\" must be");
	longest[128] = '\0';

	/* Another live domain's name: refused, saying whose it is; domain 0's too. */
	snprintf(path, sizeof(path), "domain %u is already called", domid);
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", longest), NULL,
			  0, EEXIST, path);
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "Domain-0"),
			  NULL, 0, EEXIST, "domain 0 is called Domain-0");
	/* Domain 0's own directory, as xen-init-dom0 writes it: hidden from the guest. */
	v = xs_read(dom0, XBT_NULL, "/local/domain/0/name", &len);
	assert_non_null(v);
	assert_string_equal(v, "Domain-0");
	free(v);
	v = xs_read(dom0, XBT_NULL, "/local/domain/0/domid", &len);
	assert_non_null(v);
	assert_string_equal(v, "0");
	free(v);
	assert_null(xs_read(guest, XBT_NULL, "/local/domain/0/name", &len));
	/* Its own name again, then another: renamed, in the store and in status. */
	assert_int_equal(pvnet_domain_set_name(dom, longest), 0);
	assert_int_equal(pvnet_domain_set_name(dom, "renamed@host"), 0);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	v = xs_read(dom0, XBT_NULL, path, &len);
	assert_non_null(v);
	assert_string_equal(v, "renamed@host");
	free(v);
	st = itest_status(&T);
	assert_string_equal(status_name(st, domid), "renamed@host");
	json_decref(st);
	/* The old name is free now; the new one once its domain is gone. */
	reply = raw_call(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", longest), &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(json_string_value(json_object_get(reply, "name")), longest);
	json_decref(reply);
	expect_error(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "renamed@host"), NULL,
		     0, EEXIST);
	xs_close(guest);
	xs_close(dom0);
	destroyed = stat_get("destroyed", "domains");
	pvnet_vif_destroy(vif);
	pvnet_domain_destroy(dom);
	wait_destroyed(destroyed + 1);
	reply =
	    raw_call(fd, json_pack("{s:s, s:s}", "op", "domain-name", "name", "renamed@host"), &rc);
	assert_int_equal(rc, 0);
	json_decref(reply);
	destroyed = stat_get("destroyed", "domains");
	close(fd);
	wait_destroyed(destroyed + 1);
}

/*
 * A guest killed with a connected vif, as Xen destroys a domain: its vif
 * goes first (the switch port with it, its rings unmapped, so nothing is
 * left in use, and its backend directory in domain 0's store), then its
 * store directory /local/domain/<domid>.
 */
static void test_killed_guest_with_vif(void **state)
{
	long long destroyed = stat_get("destroyed", "domains");
	long long maps = stat_get("destroyed", "maps_in_use");
	char name[32], home[64], dom0sock[PATH_MAX + 16];
	struct xs_handle *dom0;
	unsigned int domid, len;
	int pipefd[2], fd, st;
	json_t *reply;
	char *home_v;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pvnet_domain *dom;
		struct pvnet_vif *vif;
		unsigned int id;

		one_vif(&dom, &vif, name);
		id = pvnet_domain_id(dom);
		if (write(pipefd[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &domid, sizeof(domid)), sizeof(domid));
	close(pipefd[0]);
	snprintf(name, sizeof(name), "vif%u.0", domid);
	snprintf(home, sizeof(home), "/local/domain/%u", domid);
	snprintf(dom0sock, sizeof(dom0sock), "%s/xenstore.sock", run_dir);
	dom0 = xs_as(dom0sock);
	fd = ctl_open();
	reply = fdb_of(fd, name); /* its port is there */
	json_decref(reply);
	home_v = xs_read(dom0, XBT_NULL, home, &len); /* its home is there */
	assert_non_null(home_v);
	free(home_v);

	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	wait_destroyed(destroyed + 1);
	expect_error_says(fd, json_pack("{s:s, s:s}", "op", "fdb", "port", name), NULL, 0, ENOENT,
			  "no port");
	assert_int_equal(stat_get("destroyed", "maps_in_use"), maps);
	assert_int_equal(stat_get("hv", "maps_in_use"), 0);
	errno = 0;
	assert_null(xs_read(dom0, XBT_NULL, home, &len));
	assert_int_equal(errno, ENOENT);
	/* The vif's backend directory, domain 0's, goes with the vif. */
	snprintf(home, sizeof(home), "/local/domain/0/backend/vif/%u/0", domid);
	errno = 0;
	assert_null(xs_read(dom0, XBT_NULL, home, &len));
	assert_int_equal(errno, ENOENT);
	xs_close(dom0);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_and_store_access),
	    cmocka_unit_test(test_grants_and_evtchn),
	    cmocka_unit_test(test_killed_frontend_is_released),
	    cmocka_unit_test(test_bad_control_requests),
	    cmocka_unit_test(test_refusals_said),
	    cmocka_unit_test(test_domain_requests_checked),
	    cmocka_unit_test(test_status_too_big),
	    cmocka_unit_test(test_pipelined_requests),
	    cmocka_unit_test(test_unread_replies_kept),
	    cmocka_unit_test(test_domain_slots_run_out),
	    cmocka_unit_test(test_capture_requests),
	    cmocka_unit_test(test_capture_limit),
	    cmocka_unit_test(test_fdb_requests),
	    cmocka_unit_test(test_domain_names),
	    cmocka_unit_test(test_domain_create_reply),
	    cmocka_unit_test(test_control_limits),
	    cmocka_unit_test(test_capture_details),
	    cmocka_unit_test(test_killed_guest_with_vif),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: %s PVNETD\n", argv[0]);
		return 2;
	}
	pvnetd_path = argv[1];
	signal(SIGPIPE, SIG_IGN);
	return group_run_tests(tests, group_setup, group_teardown);
}
