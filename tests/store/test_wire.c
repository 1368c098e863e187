// SPDX-License-Identifier: MIT
/* test_wire.c - framing, malformed messages, output bounds, and the UNIX socket server */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/log_capture.h"
#include "common/loop.h"
#include "helpers.h"
#include "store/internal.h"

static int setup(void **state)
{
	struct store *s = store_create(NULL);

	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_destroy(*state);
	return 0;
}

static size_t build(unsigned char *buf, uint32_t type, uint32_t req_id, const void *p, size_t len)
{
	struct xsd_sockmsg h = {.type = type, .req_id = req_id, .len = (uint32_t)len};

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), p, len);
	return sizeof(h) + len;
}

static void test_split_and_batched(void **state)
{
	struct tclient *tc = tc_open(*state, 0);
	unsigned char buf[256];
	size_t n = 0, i;
	struct tmsg *m;

	n += build(buf + n, XS_WRITE, 1, "/s\0v", 4);
	n += build(buf + n, XS_READ, 2, "/s", 3);
	n += build(buf + n, XS_GET_DOMAIN_PATH, 3, "5", 2);
	/* one byte at a time: a short header just waits */
	for (i = 0; i < n; i++)
		assert_int_equal(store_conn_input(tc->c, buf + i, 1), 0);
	m = tc_reply(tc);
	assert_int_equal(m->hdr.req_id, 1);
	m = tc_reply(tc);
	assert_int_equal(m->hdr.req_id, 2);
	assert_memory_equal(m->body, "v", 1);
	m = tc_reply(tc);
	assert_int_equal(m->hdr.req_id, 3);
	assert_null(tc_reply(tc));
	/* all at once */
	assert_int_equal(store_conn_input(tc->c, buf, n), 0);
	assert_int_equal(tc->nrep - tc->rephead, 3);
	tc_close(tc);
}

static void test_oversized_closes(void **state)
{
	struct tclient *tc = tc_open(*state, 5);
	struct xsd_sockmsg h = {.type = XS_READ, .len = XENSTORE_PAYLOAD_MAX + 1};

	assert_int_equal(store_conn_input(tc->c, &h, 8), 0);
	assert_int_equal(store_conn_input(tc->c, (char *)&h + 8, 8), -EPROTO);
	assert_null(tc_reply(tc));
	assert_int_equal(tc_send(tc, XS_READ, 1, 0, "/", 2), -EPIPE);
	tc_close(tc);
	/* exactly the maximum is fine (and a bad path) */
	tc = tc_open(*state, 5);
	{
		static char big[XENSTORE_PAYLOAD_MAX];

		memset(big, 'a', sizeof(big) - 1);
		assert_int_equal(tc_send(tc, XS_READ, 1, 0, big, sizeof(big)), 0);
		TC_ERR(tc_reply(tc), "EINVAL");
	}
	tc_close(tc);
}

/*
 * Warnings about a domain's connections are rate-limited per domain: domain
 * 5 closed for oversized messages again and again (a new connection each
 * time) gets its 10 lines, and domain 6's one offence after that is still
 * logged.  Read back from stderr, redirected to a file.
 */
static void test_warnings_limited_per_domain(void **state)
{
	struct xsd_sockmsg h = {.type = XS_READ, .len = XENSTORE_PAYLOAD_MAX + 1};
	struct log_capture cap;
	struct tclient *tc;
	char *text;

	assert_int_equal(store_domain_introduce(*state, 6), 0);
	log_capture_start(&cap);
	for (int i = 0; i < 30; i++) {
		tc = tc_open(*state, 5);
		assert_int_equal(store_conn_input(tc->c, &h, sizeof(h)), -EPROTO);
		tc_close(tc);
	}
	tc = tc_open(*state, 6);
	assert_int_equal(store_conn_input(tc->c, &h, sizeof(h)), -EPROTO);
	tc_close(tc);
	text = log_capture_end(&cap);

	assert_int_equal(log_count(text, "store: domain 5 sent a"), 10);
	assert_int_equal(log_count(text, "store: domain 6 sent a"), 1);
	free(text);
}

static void test_malformed(void **state)
{
	struct tclient *tc = tc_open(*state, 5);
	char path[XENSTORE_ABS_PATH_MAX + 16];

	/* missing NUL */
	assert_int_equal(tc_send(tc, XS_READ, 1, 0, "/local", 6), 0);
	TC_ERR(tc_reply(tc), "EINVAL");
	assert_int_equal(tc_send(tc, XS_WRITE, 1, 0, "/local/domain/5/x", 17), 0);
	TC_ERR(tc_reply(tc), "EINVAL");
	assert_int_equal(tc_send(tc, XS_WATCH, 1, 0, "x\0tok", 5), 0);
	TC_ERR(tc_reply(tc), "EINVAL");
	/* empty payload */
	assert_int_equal(tc_send(tc, XS_READ, 1, 0, "", 0), 0);
	TC_ERR(tc_reply(tc), "EINVAL");
	/* two strings where one is expected */
	assert_int_equal(tc_send(tc, XS_READ, 1, 0, "a\0b", 4), 0);
	TC_ERR(tc_reply(tc), "EINVAL");
	/* bad characters, double and trailing slashes */
	TC_ERR(tc_read(tc, 0, "/local/domain/5/a b"), "EINVAL");
	TC_ERR(tc_read(tc, 0, "/local/domain/5/a.b"), "EINVAL");
	TC_ERR(tc_write(tc, 0, "/local//domain", "x"), "EINVAL");
	TC_ERR(tc_write(tc, 0, "x/", "x"), "EINVAL");
	TC_ERR(tc_read(tc, 0, ""), "EINVAL");
	TC_ERR(tc_read(tc, 0, "@releaseDomain"), "EINVAL");
	/* too long: relative > 2048, absolute > 3072 */
	memset(path, 'a', XENSTORE_REL_PATH_MAX + 1);
	path[XENSTORE_REL_PATH_MAX + 1] = '\0';
	TC_ERR(tc_write(tc, 0, path, "x"), "EINVAL");
	path[0] = '/';
	memset(path + 1, 'a', XENSTORE_ABS_PATH_MAX);
	path[XENSTORE_ABS_PATH_MAX + 1] = '\0';
	TC_ERR(tc_read(tc, 0, path), "EINVAL");
	/*
	 * A relative path at the limit is fine (in components of 100
	 * characters: one of 2048 would pass the node-size quota of its parent).
	 */
	memset(path, 'b', XENSTORE_REL_PATH_MAX);
	for (int i = 100; i < XENSTORE_REL_PATH_MAX - 1; i += 101)
		path[i] = '/';
	path[XENSTORE_REL_PATH_MAX] = '\0';
	TC_OK(tc_write(tc, 0, path, "x"));
	tc_close(tc);
}

static void test_directory_too_big(void **state)
{
	struct store *s = *state;
	struct tclient *tc = tc_open(s, 0);
	char path[80];
	int i;

	for (i = 0; i < 200; i++) {
		snprintf(path, sizeof(path), "/big/child-with-a-long-name-%04d", i);
		assert_int_equal(store_mkdir(s, path), 0);
	}
	TC_ERR(tc_call(tc, XS_DIRECTORY, 0, "/big", NULL), "E2BIG");

	/* To the byte: 64 names of 63 characters, NULs included, are a whole payload. */
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/full/%063d", i);
		assert_int_equal(store_mkdir(s, path), 0);
	}
	{
		struct tmsg *m = tc_call(tc, XS_DIRECTORY, 0, "/full", NULL);

		assert_int_equal(m->hdr.type, XS_DIRECTORY);
		assert_int_equal(m->hdr.len, XENSTORE_PAYLOAD_MAX);
	}
	snprintf(path, sizeof(path), "/full/%063d", 63);
	assert_int_equal(store_rm(s, path), 0);
	snprintf(path, sizeof(path), "/full/%064d", 63);
	assert_int_equal(store_mkdir(s, path), 0);
	TC_ERR(tc_call(tc, XS_DIRECTORY, 0, "/full", NULL), "E2BIG");
	tc_close(tc);
}

static void test_output_bound(void **state)
{
	struct store_config cfg;

	store_config_default(&cfg);
	struct store *s;
	struct tclient *w, *d0;
	char val[16];
	int i, r = 0;

	cfg.out_max = 4096;
	s = store_create(&cfg);
	w = tc_open(s, 0);
	d0 = tc_open(s, 0);
	TC_OK(tc_call(w, XS_WATCH, 0, "/flood", "t", NULL));
	tc_drain_events(w);
	w->refuse = 1; /* stops reading */
	for (i = 0; i < 1000; i++) {
		snprintf(val, sizeof(val), "%d", i);
		TC_OK(tc_write(d0, 0, "/flood", val));
	}
	assert_true(store_conn_pending(w->c) <= cfg.out_max);
	assert_true(store_conn_dropped(w->c) > 800); /* 25-byte events, 4 KiB kept */
	/* reading again delivers what was kept, in order */
	w->refuse = 0;
	assert_int_equal(store_conn_flush(w->c), 0);
	assert_non_null(tc_event(w));
	assert_int_equal(store_conn_pending(w->c), 0);
	/*
	 * A client that sends requests but never reads replies is cut off, and
	 * before that never holds more than twice out_max of queued replies.
	 */
	w->refuse = 1;
	for (i = 0; i < 1000 && r == 0; i++) {
		r = tc_send(w, XS_READ, 1, 0, "/", 2);
		if (r == 0)
			assert_true(store_conn_pending(w->c) <= 2 * cfg.out_max);
	}
	assert_int_equal(r, -ENOBUFS);
	assert_true(store_conn_pending(w->c) == 0); /* freed on kill */
	tc_close(w);
	tc_close(d0);
	store_destroy(s);
}

/*
 * Events fill the output bound to the byte: with 100 bytes four events of
 * 25 fit and a fifth is dropped; with 99 the fourth is.
 */
static void test_output_bound_exact(void **state)
{
	(void)state;
	for (size_t cap = 99; cap <= 100; cap++) {
		struct store_config cfg;
		struct store *s;
		struct tclient *w, *d0;
		unsigned int fit = (unsigned int)(cap / 25);

		store_config_default(&cfg);
		cfg.out_max = cap;
		s = store_create(&cfg);
		w = tc_open(s, 0);
		d0 = tc_open(s, 0);
		TC_OK(tc_call(w, XS_WATCH, 0, "/flood", "t", NULL));
		tc_drain_events(w);
		w->refuse = 1;
		for (unsigned int i = 0; i < fit; i++)
			TC_OK(tc_write(d0, 0, "/flood", "x"));
		assert_int_equal(store_conn_pending(w->c), fit * 25);
		assert_int_equal(store_conn_dropped(w->c), 0);
		TC_OK(tc_write(d0, 0, "/flood", "x"));
		assert_int_equal(store_conn_pending(w->c), fit * 25);
		assert_int_equal(store_conn_dropped(w->c), 1);
		tc_close(w);
		tc_close(d0);
		store_destroy(s);
	}
}

static int null_send(void *ctx, const void *buf, size_t len)
{
	return 0;
}

/* A message's payload is at most XENSTORE_PAYLOAD_MAX bytes, to the byte: the protocol's limit. */
static void test_payload_limit(void **state)
{
	static char a[XENSTORE_PAYLOAD_MAX + 1];
	struct store *s = *state;
	struct store_conn *c = store_conn_open(s, 5, null_send, NULL);

	assert_non_null(c);
	memset(a, 'a', sizeof(a));
	assert_int_equal(store_conn_queue(c, XS_WATCH_EVENT, 0, 0, a, 2000, a, 2096, true), 0);
	assert_int_equal(store_conn_dropped(c), 0);
	assert_int_equal(store_conn_queue(c, XS_WATCH_EVENT, 0, 0, a, 2000, a, 2097, true), -E2BIG);
	assert_int_equal(store_conn_dropped(c), 1);
	assert_int_equal(
	    store_conn_queue(c, XS_READ, 1, 0, a, XENSTORE_PAYLOAD_MAX, NULL, 0, false), 0);
	assert_int_equal(
	    store_conn_queue(c, XS_READ, 1, 0, a, XENSTORE_PAYLOAD_MAX + 1, NULL, 0, false),
	    -E2BIG);
	store_conn_close(c);
}

static void test_conn_limit(void **state)
{
	struct store *s = *state;
	struct store_conn *c[40];
	int i;

	for (i = 0; i < 32; i++) {
		c[i] = store_conn_open(s, 5, null_send, NULL);
		assert_non_null(c[i]);
	}
	assert_null(store_conn_open(s, 5, null_send, NULL));
	assert_int_equal(errno, EMFILE);
	store_conn_close(c[0]);
	c[0] = store_conn_open(s, 5, null_send, NULL);
	assert_non_null(c[0]);
	/* dom0 (the toolstack, pvnetd's own tools) is exempt: more than a domain's 32. */
	struct store_conn *d0[40];

	for (int k = 0; k < 40; k++) {
		d0[k] = store_conn_open(s, 0, null_send, NULL);
		assert_non_null(d0[k]);
	}
	for (int k = 0; k < 40; k++)
		store_conn_close(d0[k]);
	for (i = 0; i < 32; i++)
		store_conn_close(c[i]);
}

/* The socket server, with a tiny blocking client. */
static void sock_roundtrip(struct loop *l, int fd, uint32_t type, const char *payload, size_t len,
			   struct tmsg *out)
{
	unsigned char buf[256];
	size_t n = build(buf, type, 42, payload, len), got = 0;
	int rounds = 0;
	ssize_t r;

	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	while (got < sizeof(out->hdr) || got < sizeof(out->hdr) + out->hdr.len) {
		r = recv(fd, (char *)out + got,
			 got < sizeof(out->hdr) ? sizeof(out->hdr) - got
						: sizeof(out->hdr) + out->hdr.len - got,
			 MSG_DONTWAIT);
		if (r > 0)
			got += (size_t)r;
		else
			assert_true(loop_run_once(l, 100) >= 0); /* let the server run */
		assert_true(++rounds < 100);
	}
	out->body[out->hdr.len] = '\0';
}

static void test_socket(void **state)
{
	struct store *s = *state;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/pvnet-store-XXXXXX";
	char path[sizeof(a.sun_path)];
	struct loop *l = loop_create();
	struct stat st;
	struct tmsg m;
	int fd, fd2;

	assert_non_null(l);
	assert_non_null(mkdtemp(dir));
	assert_true(snprintf(path, sizeof(path), "%s/xenstore.sock", dir) < (int)sizeof(path));
	/* a stale file is replaced */
	fclose(fopen(path, "w"));
	assert_int_equal(store_listen(s, l, path, 5, 0600), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(a.sun_path, path, sizeof(path));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	sock_roundtrip(l, fd, XS_WRITE, "key\0val", 7, &m);
	assert_int_equal(m.hdr.type, XS_WRITE);
	assert_int_equal(m.hdr.req_id, 42);
	sock_roundtrip(l, fd, XS_READ, "/local/domain/5/key", 20, &m);
	assert_int_equal(m.hdr.type, XS_READ);
	assert_string_equal(m.body, "val");
	sock_roundtrip(l, fd, XS_READ, "/", 2, &m);
	assert_int_equal(m.hdr.type, XS_ERROR);
	assert_string_equal(m.body, "EACCES");
	sock_roundtrip(l, fd, XS_WATCH, "key\0tk", 7, &m);
	assert_int_equal(m.hdr.type, XS_WATCH);
	sock_roundtrip(l, fd, XS_READ, "key", 4, &m); /* the initial event comes first */
	assert_int_equal(m.hdr.type, XS_WATCH_EVENT);
	assert_string_equal(m.body, "key");

	/* a second client, closed by its peer */
	fd2 = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd2, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_true(loop_run_once(l, 100) >= 0);
	close(fd2);
	assert_true(loop_run_once(l, 100) >= 0);

	/* releasing the domain shuts its sockets down */
	assert_int_equal(store_domain_release(s, 5), 0);
	{
		char c;
		ssize_t r;
		int i;

		for (i = 0; i < 10; i++)
			loop_run_once(l, 10);
		do {
			r = read(fd, &c, 1);
		} while (r > 0);
		assert_int_equal(r, 0);
	}
	close(fd);
	assert_int_equal(store_unlisten(s, path), 0);
	assert_int_equal(store_unlisten(s, path), -ENOENT);
	assert_int_not_equal(access(path, F_OK), 0);
	/* store_destroy() closes what is still listening */
	assert_int_equal(store_listen(s, l, path, 0, 0600), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_true(loop_run_once(l, 100) >= 0);
	store_destroy(s);
	*state = store_create(NULL);
	close(fd);
	unlink(path);
	rmdir(dir);
	loop_destroy(l);
}

/* Read whatever @fd holds without blocking; count the complete messages. */
static unsigned int sock_count(int fd, unsigned char *buf, size_t cap, size_t *have)
{
	unsigned int n = 0;
	ssize_t r;

	while ((r = recv(fd, buf + *have, cap - *have, MSG_DONTWAIT)) > 0) {
		*have += (size_t)r;
		for (;;) {
			struct xsd_sockmsg h;

			if (*have < sizeof(h))
				break;
			memcpy(&h, buf, sizeof(h));
			if (*have < sizeof(h) + h.len)
				break;
			n++;
			*have -= sizeof(h) + h.len;
			memmove(buf, buf + sizeof(h) + h.len, *have);
		}
	}
	return n;
}

/* Domain 5's socket in a fresh directory @dir (a template), listened on by @l: a client's fd. */
static int guest_socket(struct store *s, struct loop *l, char *dir, struct sockaddr_un *a)
{
	int fd;

	assert_non_null(l);
	assert_non_null(mkdtemp(dir));
	assert_true(snprintf(a->sun_path, sizeof(a->sun_path), "%s/g.sock", dir) <
		    (int)sizeof(a->sun_path));
	assert_int_equal(store_listen(s, l, a->sun_path, 5, 0600), 0);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)a, sizeof(*a)), 0);
	return fd;
}

/* Undo guest_socket(): close the client, stop listening, remove @dir, free @l. */
static void guest_socket_close(struct store *s, struct loop *l, int fd, const char *dir,
			       const struct sockaddr_un *a)
{
	close(fd);
	assert_int_equal(store_unlisten(s, a->sun_path), 0);
	rmdir(dir);
	loop_destroy(l);
}

/*
 * One callback answers a bounded number of a client's requests, then lets
 * the loop serve other fds, and comes back for the rest by itself: 100
 * requests sent in one write are not all answered in the first round, and
 * all are answered while the client sends nothing more.
 */
static void test_socket_request_budget(void **state)
{
	struct store *s = *state;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/pvnet-store-XXXXXX";
	static unsigned char buf[1 << 16], req[100 * 64];
	struct loop *l = loop_create();
	unsigned int got, rounds = 0;
	size_t have = 0, n = 0;
	int fd;

	fd = guest_socket(s, l, dir, &a);
	loop_run_once(l, 100); /* accept */
	for (int i = 0; i < 100; i++)
		n += build(req + n, XS_READ, (uint32_t)i, "/local/domain/5", 16);
	assert_int_equal(write(fd, req, n), (ssize_t)n);
	assert_true(loop_run_once(l, 100) >= 0);
	got = sock_count(fd, buf, sizeof(buf), &have);
	assert_in_range(got, 1, 99);
	while (got < 100 && ++rounds < 100) {
		assert_true(loop_run_once(l, 100) >= 0);
		got += sock_count(fd, buf, sizeof(buf), &have);
	}
	assert_int_equal(got, 100);
	guest_socket_close(s, l, fd, dir, &a);
}

/*
 * Watch events another client causes reach a guest that only waits for
 * them, however many: domain 0 writes 600 keys under a watched directory
 * in one go, more than the socket buffer holds, and the guest, which sends
 * nothing more, gets all 600 while it reads (the server watches its socket
 * for room; it used to do so only after the guest's own requests).
 */
static void test_socket_event_burst(void **state)
{
	struct store *s = *state;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/pvnet-store-XXXXXX";
	static unsigned char buf[1 << 16];
	size_t have = 0;
	struct loop *l = loop_create();
	unsigned int got = 0;
	struct tmsg m;
	char key[64];
	int fd;

	fd = guest_socket(s, l, dir, &a);
	sock_roundtrip(l, fd, XS_WATCH, "/local/domain/5\0tk", 19, &m);
	assert_int_equal(m.hdr.type, XS_WATCH);
	sock_roundtrip(l, fd, XS_READ, "/local/domain/5", 16, &m); /* the initial event first */
	assert_int_equal(m.hdr.type, XS_WATCH_EVENT);
	for (int i = 0; i < 10; i++)
		loop_run_once(l, 0);
	sock_count(fd, buf, sizeof(buf), &have); /* READ's reply */
	for (int i = 0; i < 600; i++) {
		snprintf(key, sizeof(key), "/local/domain/5/k%d", i);
		assert_int_equal(store_write(s, key, "v", 1), 0);
	}
	for (int i = 0; i < 200 && got < 600; i++) {
		got += sock_count(fd, buf, sizeof(buf), &have);
		loop_run_once(l, 10);
	}
	got += sock_count(fd, buf, sizeof(buf), &have);
	assert_int_equal(got, 600);
	guest_socket_close(s, l, fd, dir, &a);
}

/*
 * A dead connection processes nothing: once its domain is released, a
 * request it sends is refused (-EPIPE) and changes nothing, even where
 * anyone may write.
 */
static void test_dead_conn_does_nothing(void **state)
{
	struct store *s = *state;
	struct tclient *g = tc_open(s, 5);
	struct store_perm open = {.id = 0, .perm = STORE_PERM_BOTH};
	static const char req[] = "/open/x\0v";
	char *val;

	assert_int_equal(store_write(s, "/open", "", 0), 0);
	assert_int_equal(store_set_perms(s, "/open", &open, 1), 0);
	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(tc_send(g, XS_WRITE, 1, 0, req, sizeof(req) - 1), -EPIPE);
	assert_null(tc_reply(g));
	assert_int_equal(store_read(s, "/open/x", &val, NULL), -ENOENT);
	tc_close(g);
}

/* A transport that takes at most 5 bytes per call: the tclient in @ctx gets them. */
static int trickle_send(void *ctx, const void *buf, size_t len)
{
	size_t take = len < 5 ? len : 5;

	tc_send_cb(ctx, buf, take);
	return take == len ? 0 : (int)take;
}

/* Output a transport takes in pieces arrives whole and in order, byte for byte. */
static void test_partial_sends(void **state)
{
	struct tclient *tc = tc_open(*state, 0);
	struct tmsg *m;

	store_conn_close(tc->c);
	tc->c = store_conn_open(*state, 0, trickle_send, tc);
	assert_non_null(tc->c);
	TC_OK(tc_write(tc, 0, "/trickle", "some value"));
	m = tc_read(tc, 0, "/trickle");
	assert_int_equal(m->hdr.type, XS_READ);
	assert_int_equal(m->hdr.len, 10);
	assert_memory_equal(m->body, "some value", 10);
	assert_int_equal(store_conn_pending(tc->c), 0);
	tc_close(tc);
}

static int broken_send(void *ctx, const void *buf, size_t len)
{
	return -ECONNRESET;
}

/*
 * A connection whose transport breaks while it answers a request is dead
 * at once: the rest of the input it was given is not processed, and the
 * caller hears -EPIPE.
 */
static void test_broken_transport_stops(void **state)
{
	struct store *s = *state;
	struct store_conn *c = store_conn_open(s, 0, broken_send, NULL);
	unsigned char buf[64];
	size_t n = 0;
	char *val;

	assert_non_null(c);
	n += build(buf + n, XS_WRITE, 1, "/br1\0v", 6);
	n += build(buf + n, XS_WRITE, 2, "/br2\0v", 6);
	assert_int_equal(store_conn_input(c, buf, n), -EPIPE);
	assert_int_equal(store_read(s, "/br1", &val, NULL), 0);
	free(val);
	assert_int_equal(store_read(s, "/br2", &val, NULL), -ENOENT);
	assert_int_equal(store_conn_input(c, buf, n), -EPIPE);
	store_conn_close(c);
}

/*
 * A client that hangs up is closed: its connection is not kept, so a
 * guest that connects and hangs up more times than its 32 connections
 * still gets answers.
 */
static void test_socket_hangup_frees(void **state)
{
	struct store *s = *state;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/pvnet-store-XXXXXX";
	struct loop *l = loop_create();
	struct tmsg m;
	int fd;

	fd = guest_socket(s, l, dir, &a);
	close(fd);
	for (int i = 0; i < 40; i++) {
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		loop_run_once(l, 100); /* accept */
		close(fd);
		loop_run_once(l, 100); /* the hang-up */
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	sock_roundtrip(l, fd, XS_GET_DOMAIN_PATH, "5", 2, &m);
	assert_int_equal(m.hdr.type, XS_GET_DOMAIN_PATH);
	assert_string_equal(m.body, "/local/domain/5");
	guest_socket_close(s, l, fd, dir, &a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_split_and_batched, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_oversized_closes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_warnings_limited_per_domain, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_directory_too_big, setup, teardown),
	    cmocka_unit_test(test_output_bound),
	    cmocka_unit_test(test_output_bound_exact),
	    cmocka_unit_test_setup_teardown(test_conn_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_payload_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_event_burst, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_request_budget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dead_conn_does_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_partial_sends, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_broken_transport_stops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_socket_hangup_frees, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
