// SPDX-License-Identifier: MIT
/* test_xs.c - libpvnet's xenstore client against a scripted store: framing and validation */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/xen.h"
#include "../common/group_run.h"
#include "front/xs.h"

/*
 * A fake store in a thread: it accepts one connection at a time, reads each
 * request and answers as the current script says - correctly, or with the
 * mistakes a buggy store could make.  The client must accept the former
 * and refuse every one of the latter without crashing or hanging.
 */

enum script {
	S_OK,	       /* echo type and id; payload from reply[] */
	S_EVENT_FIRST, /* a watch event, then the reply */
	S_BAD_ID,      /* req_id + 1 */
	S_BAD_TYPE,    /* XS_WRITE whatever was asked */
	S_ERROR,       /* XS_ERROR with reply[] as the errno name */
	S_HUGE,	       /* len = XENSTORE_PAYLOAD_MAX + 1 */
	S_SILENT,      /* never answer */
	S_CLOSE,       /* close the connection */
	S_BYTEWISE,    /* the correct reply, one byte per write */
	S_BAD_EVENT,   /* a watch event without its NULs */
	S_LATE,	       /* the S_OK reply, 400 ms late (the client waits 200) */
	S_MAX,	       /* a reply of XENSTORE_PAYLOAD_MAX bytes of 'v', the largest allowed */
	S_EVENT_RAW,   /* a watch event with reply[] as its payload, then the reply "v" */
	S_EVENT_ID,    /* a watch event carrying the request's req_id, then the reply */
	S_EXTRA,       /* the S_OK reply, then one more with the next req_id: nobody asked */
};

static struct {
	char path[108];
	int lfd;
	pthread_t thread;
	pthread_mutex_t lock; /* the script: set by the test, read by the server */
	enum script script;
	char reply[64];
	size_t reply_len;
	atomic_bool stop;
} S;

static bool read_full(int fd, void *buf, size_t len)
{
	char *b = buf;

	while (len) {
		ssize_t n = read(fd, b, len);

		if (n <= 0)
			return false;
		b += n;
		len -= (size_t)n;
	}
	return true;
}

static void send_msg(int fd, uint32_t type, uint32_t id, const void *body, uint32_t len,
		     bool bytewise)
{
	struct xsd_sockmsg h = {.type = type, .req_id = id, .len = len};
	char buf[sizeof(h) + 128];
	size_t total = sizeof(h) + (len < 128 ? len : 0);

	memcpy(buf, &h, sizeof(h));
	if (len < 128)
		memcpy(buf + sizeof(h), body, len);
	for (size_t off = 0; off < total;) {
		/* MSG_NOSIGNAL: a client that gave up on a reply may have closed already. */
		ssize_t n = send(fd, buf + off, bytewise ? 1 : total - off, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

static void serve(int fd)
{
	struct xsd_sockmsg h;
	char body[XENSTORE_PAYLOAD_MAX];

	while (read_full(fd, &h, sizeof(h)) && h.len <= sizeof(body) &&
	       read_full(fd, body, h.len)) {
		char reply[sizeof(S.reply)];
		enum script sc;
		uint32_t len;

		pthread_mutex_lock(&S.lock);
		sc = S.script;
		len = (uint32_t)S.reply_len;
		memcpy(reply, S.reply, sizeof(reply));
		pthread_mutex_unlock(&S.lock);
		switch (sc) {
		case S_OK:
			send_msg(fd, h.type, h.req_id, reply, len, false);
			break;
		case S_EVENT_FIRST:
			send_msg(fd, XS_WATCH_EVENT, 0, "/a/b\0tok", 9, false);
			send_msg(fd, h.type, h.req_id, reply, len, false);
			break;
		case S_BAD_ID:
			send_msg(fd, h.type, h.req_id + 1, reply, len, false);
			break;
		case S_BAD_TYPE:
			send_msg(fd, XS_WRITE, h.req_id, reply, len, false);
			break;
		case S_ERROR:
			send_msg(fd, XS_ERROR, h.req_id, reply, len, false);
			break;
		case S_HUGE:
			send_msg(fd, h.type, h.req_id, "", XENSTORE_PAYLOAD_MAX + 1, false);
			break;
		case S_SILENT:
			break;
		case S_CLOSE:
			return;
		case S_BYTEWISE:
			send_msg(fd, h.type, h.req_id, reply, len, true);
			break;
		case S_BAD_EVENT:
			send_msg(fd, XS_WATCH_EVENT, 0, "/a/b", 4, false);
			break;
		case S_LATE:
			usleep(400 * 1000);
			send_msg(fd, h.type, h.req_id, reply, len, false);
			break;
		case S_EVENT_RAW:
			send_msg(fd, XS_WATCH_EVENT, 0, reply, len, false);
			send_msg(fd, h.type, h.req_id, "v", 1, false);
			break;
		case S_EVENT_ID:
			send_msg(fd, XS_WATCH_EVENT, h.req_id, "/a/b\0tok", 9, false);
			send_msg(fd, h.type, h.req_id, reply, len, false);
			break;
		case S_EXTRA:
			send_msg(fd, h.type, h.req_id, reply, len, false);
			send_msg(fd, h.type, h.req_id + 1, reply, len, false);
			break;
		case S_MAX: {
			static char max[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];
			struct xsd_sockmsg r = {
			    .type = h.type, .req_id = h.req_id, .len = XENSTORE_PAYLOAD_MAX};

			memcpy(max, &r, sizeof(r));
			memset(max + sizeof(r), 'v', XENSTORE_PAYLOAD_MAX);
			if (send(fd, max, sizeof(max), MSG_NOSIGNAL) != (ssize_t)sizeof(max))
				return;
			break;
		}
		}
	}
}

static void *server(void *arg)
{
	while (!atomic_load(&S.stop)) {
		int fd = accept(S.lfd, NULL, NULL);

		if (fd < 0)
			break;
		serve(fd);
		close(fd);
	}
	return NULL;
}

static int group_setup(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(S.path, sizeof(S.path), "/tmp/pvnet-test-xs-%d.sock", getpid());
	unlink(S.path);
	memcpy(sa.sun_path, S.path, strlen(S.path) + 1);
	S.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (S.lfd < 0 || bind(S.lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(S.lfd, 4))
		return -1;
	atomic_init(&S.stop, false);
	pthread_mutex_init(&S.lock, NULL);
	return pthread_create(&S.thread, NULL, server, NULL) ? -1 : 0;
}

static int group_teardown(void **state)
{
	atomic_store(&S.stop, true);
	/* accept() returns once we connect; the loop then sees stop. */
	struct front_xs *xs;

	if (front_xs_open(S.path, 100, &xs) == 0)
		front_xs_close(xs);
	pthread_join(S.thread, NULL);
	close(S.lfd);
	unlink(S.path);
	return 0;
}

static void script(enum script s, const void *reply, size_t len)
{
	pthread_mutex_lock(&S.lock);
	memcpy(S.reply, reply, len);
	S.reply_len = len;
	S.script = s;
	pthread_mutex_unlock(&S.lock);
}

static struct front_xs *conn(void)
{
	struct front_xs *xs;

	/* 200 ms per call: enough for a thread on this machine, short for the silent case. */
	assert_int_equal(front_xs_open(S.path, 200, &xs), 0);
	return xs;
}

static void test_good_replies(void **state)
{
	struct front_xs *xs = conn();
	unsigned long v = 0;
	unsigned int count;
	uint32_t txn = 0;
	char buf[64];

	script(S_OK, "value", 5);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 5);
	assert_string_equal(buf, "value");
	script(S_OK, "42", 2);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 41, &v), -EINVAL);
	script(S_OK, "4x", 2);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 100, &v), -EINVAL);
	script(S_OK, "OK", 3);
	assert_int_equal(front_xs_write(xs, 0, "/x", "1"), 0);
	assert_int_equal(front_xs_mkdir(xs, 0, "/x"), 0);
	assert_int_equal(front_xs_watch(xs, "/x", "tok"), 0);
	script(S_OK, "a\0bb\0c", 7);
	assert_int_equal(front_xs_directory(xs, 0, "/x", buf, sizeof(buf), &count), 0);
	assert_int_equal(count, 3);
	script(S_OK, "17", 3);
	assert_int_equal(front_xs_txn_start(xs, &txn), 0);
	assert_int_equal(txn, 17);
	script(S_BYTEWISE, "slow", 4);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 4);
	assert_string_equal(buf, "slow");
	/* An event that arrives before the reply is kept for its token. */
	script(S_EVENT_FIRST, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	assert_false(front_xs_take_event(xs, "other"));
	assert_true(front_xs_take_event(xs, "tok"));
	assert_false(front_xs_take_event(xs, "tok"));
	front_xs_close(xs);
}

static void test_errors_mapped(void **state)
{
	struct front_xs *xs = conn();
	char buf[64];

	script(S_ERROR, "ENOENT", 7);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), -ENOENT);
	script(S_ERROR, "EAGAIN", 7);
	assert_int_equal(front_xs_txn_end(xs, 5, true), -EAGAIN);
	script(S_ERROR, "EPERM", 6); /* the last of xsd_errors[] */
	assert_int_equal(front_xs_mkdir(xs, 0, "/x"), -EPERM);
	script(S_ERROR, "EWHATEVER", 10);
	assert_int_equal(front_xs_write(xs, 0, "/x", "1"), -EIO);
	front_xs_close(xs);
}

static void test_bad_replies(void **state)
{
	struct front_xs *xs;
	unsigned int count;
	uint32_t txn;
	char buf[8];

	/* Each mistake on a fresh connection: after one the stream is not trusted. */
	struct {
		enum script s;
		const char *reply;
		size_t len;
		int want;
	} cases[] = {
	    {S_BAD_ID, "v", 1, -EPROTO},
	    {S_BAD_TYPE, "v", 1, -EPROTO},
	    {S_HUGE, "", 0, -EPROTO},
	    {S_OK, "a\0b", 3, -EPROTO},
	    {S_OK, "too long!", 9, -E2BIG},
	    {S_SILENT, "", 0, -ETIMEDOUT},
	    {S_CLOSE, "", 0, -ECONNRESET},
	    {S_BAD_EVENT, "", 0, -EPROTO},
	    /* A value of buflen bytes has no room for its NUL. */
	    {S_OK, "12345678", 8, -E2BIG},
	    /* Watch events: a token missing, or without its NUL. */
	    {S_EVENT_RAW, "/a/b\0", 5, -EPROTO},
	    {S_EVENT_RAW, "/a/b\0tok", 8, -EPROTO},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		xs = conn();
		script(cases[i].s, cases[i].reply, cases[i].len);
		assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), cases[i].want);
		front_xs_close(xs);
	}
	xs = conn();
	script(S_OK, "NO", 3);
	assert_int_equal(front_xs_write(xs, 0, "/x", "1"), -EPROTO);
	script(S_OK, "OK\0x", 4); /* "OK" and more */
	assert_int_equal(front_xs_write(xs, 0, "/x", "1"), -EPROTO);
	script(S_OK, "OKX", 3); /* "OK" without its NUL */
	assert_int_equal(front_xs_write(xs, 0, "/x", "1"), -EPROTO);
	script(S_OK, "a\0b", 3); /* directory without its final NUL */
	assert_int_equal(front_xs_directory(xs, 0, "/x", buf, sizeof(buf), &count), -EPROTO);
	script(S_OK, "abc", 4);
	assert_int_equal(front_xs_txn_start(xs, &txn), -EPROTO);
	script(S_OK, "0", 2);
	assert_int_equal(front_xs_txn_start(xs, &txn), -EPROTO);
	script(S_OK, "4294967296", 11); /* not a 32-bit id */
	assert_int_equal(front_xs_txn_start(xs, &txn), -EPROTO);
	script(S_OK, "1234567890123456", 17); /* longer than any id */
	assert_int_equal(front_xs_txn_start(xs, &txn), -EPROTO);
	front_xs_close(xs);
}

static void test_limits(void **state)
{
	static char big[XENSTORE_PAYLOAD_MAX + 16];
	struct front_xs *xs = conn();
	char tok[FRONT_XS_TOKEN_MAX + 2];

	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	/* Requests larger than the protocol allows never leave. */
	assert_int_equal(front_xs_write(xs, 0, "/x", big), -E2BIG);
	memset(tok, 't', sizeof(tok) - 1);
	tok[sizeof(tok) - 1] = '\0';
	assert_int_equal(front_xs_watch(xs, "/x", tok), -EINVAL);
	front_xs_close(xs);
	assert_int_equal(front_xs_open("/nonexistent/pvnet.sock", 100, &xs), -ENOENT);
}

/*
 * A reply that comes after the call gave up is dropped when it arrives:
 * the next calls get their own replies (they used to get the one before,
 * -EPROTO, for ever), and a poll for events does not take it for a reply
 * nobody asked for.
 */
static void test_late_reply(void **state)
{
	struct front_xs *xs = conn();
	char buf[16];

	script(S_LATE, "old", 3);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), -ETIMEDOUT);
	script(S_OK, "new", 3);
	usleep(300 * 1000); /* the late reply is in the socket before ours */
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "new");
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "new");

	script(S_LATE, "old", 3);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), -ETIMEDOUT);
	script(S_OK, "new", 3);
	usleep(300 * 1000);
	assert_int_equal(front_xs_poll_events(xs), 0);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "new");
	front_xs_close(xs);
}

/*
 * Sixteen tokens a connection; a watch the store refused leaves no token
 * behind, so an event for it is not kept.
 */
static void test_tokens(void **state)
{
	struct front_xs *xs = conn();
	char tok[8], buf[16];

	script(S_ERROR, "EACCES", 7);
	assert_int_equal(front_xs_watch(xs, "/a/b", "tok"), -EACCES);
	script(S_EVENT_FIRST, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	assert_false(front_xs_take_event(xs, "tok"));
	script(S_OK, "OK", 3);
	for (int i = 0; i < 16; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		assert_int_equal(front_xs_watch(xs, "/a/b", tok), 0);
	}
	assert_int_equal(front_xs_watch(xs, "/a/b", "t16"), -ENOSPC);
	assert_int_equal(front_xs_watch(xs, "/a/c", "t15"), 0); /* a token already there */
	front_xs_close(xs);
}

/* Numbers: only plain decimals within 0..max; anything else is -EINVAL, not another error. */
static void test_read_uint(void **state)
{
	struct front_xs *xs = conn();
	unsigned long v = 7;

	script(S_OK, "42", 2);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 42, &v), 0); /* max itself */
	assert_int_equal(v, 42);
	script(S_OK, "", 0);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 100, &v), -EINVAL);
	script(S_OK, "-0", 2);
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 100, &v), -EINVAL);
	script(S_OK, "99999999999999999999", 20); /* above ULONG_MAX */
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, ULONG_MAX, &v), -EINVAL);
	script(S_OK, "1234567890123456789012345", 25); /* longer than any number */
	assert_int_equal(front_xs_read_uint(xs, 0, "/x", 0, 100, &v), -EINVAL);
	assert_int_equal(v, 42);
	front_xs_close(xs);
}

/*
 * A reply with an id not yet used is one nobody asked for, and breaks the
 * stream: a poll for events and a wait for one say so.  A late reply (an
 * id already used) is dropped by both, and so is an event's id.
 */
static void test_unasked_reply(void **state)
{
	struct front_xs *xs = conn();
	char buf[16];

	script(S_EXTRA, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	usleep(100 * 1000);
	assert_int_equal(front_xs_poll_events(xs), -EPROTO);
	front_xs_close(xs);

	xs = conn();
	script(S_OK, "OK", 3);
	assert_int_equal(front_xs_watch(xs, "/a/b", "tok"), 0);
	script(S_EXTRA, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	assert_int_equal(front_xs_wait_event(xs, "tok", 1000), -EPROTO);
	front_xs_close(xs);

	xs = conn();
	script(S_LATE, "old", 3);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), -ETIMEDOUT);
	assert_int_equal(front_xs_wait_event(xs, "tok", 400), -ETIMEDOUT);
	/* An event that carries the request's id is an event all the same. */
	script(S_EVENT_ID, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	front_xs_close(xs);
}

/* Limits met exactly are within them: the largest payloads, a token, a path that just fits. */
static void test_limits_exact(void **state)
{
	static char big[XENSTORE_PAYLOAD_MAX + 1];
	char tok[FRONT_XS_TOKEN_MAX + 1];
	struct sockaddr_un sa;
	char path[sizeof(sa.sun_path) + 1];
	struct front_xs *xs = conn();

	/* A request of XENSTORE_PAYLOAD_MAX bytes: "/x\0" and the value. */
	memset(big, 'a', XENSTORE_PAYLOAD_MAX - 3);
	big[XENSTORE_PAYLOAD_MAX - 3] = '\0';
	script(S_OK, "OK", 3);
	assert_int_equal(front_xs_write(xs, 0, "/x", big), 0);
	memset(tok, 't', sizeof(tok) - 1);
	tok[sizeof(tok) - 1] = '\0';
	assert_int_equal(front_xs_watch(xs, "/x", tok), 0);
	/* A formatted value of 255 bytes is written, one of 256 refused. */
	assert_int_equal(front_xs_printf(xs, 0, "/x", "%0255d", 1), 0);
	assert_int_equal(front_xs_printf(xs, 0, "/x", "%0256d", 1), -E2BIG);

	script(S_MAX, "", 0);
	assert_int_equal(front_xs_read(xs, 0, "/x", big, sizeof(big)), XENSTORE_PAYLOAD_MAX);
	assert_int_equal(big[0], 'v');
	assert_int_equal(big[XENSTORE_PAYLOAD_MAX - 1], 'v');
	assert_int_equal(front_xs_read(xs, 0, "/x", big, XENSTORE_PAYLOAD_MAX), -E2BIG);
	front_xs_close(xs);
	/* A socket path without room for its NUL in sun_path is refused, not cut. */
	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(front_xs_open(path, 100, &xs), -ENAMETOOLONG);
	assert_null(xs);
}

/* The last unwatch of a token takes its pending event with it: nothing comes for it later. */
static void test_unwatch_forgets_token(void **state)
{
	struct front_xs *xs = conn();
	char buf[16];

	script(S_OK, "OK", 3);
	assert_int_equal(front_xs_watch(xs, "/a/b", "tok"), 0);
	assert_int_equal(front_xs_watch(xs, "/a/c", "tok"), 0);
	/* The event comes before the reply to the first unwatch: "tok" still has a watch. */
	script(S_EVENT_FIRST, "OK", 3);
	assert_int_equal(front_xs_unwatch(xs, "/a/b", "tok"), 0);
	assert_true(front_xs_take_event(xs, "tok"));
	/* Now before the reply to the last one: the event goes with the token. */
	assert_int_equal(front_xs_unwatch(xs, "/a/c", "tok"), 0);
	assert_false(front_xs_take_event(xs, "tok"));
	/* And one that comes later is dropped. */
	script(S_EVENT_FIRST, "v", 1);
	assert_int_equal(front_xs_read(xs, 0, "/x", buf, sizeof(buf)), 1);
	assert_false(front_xs_take_event(xs, "tok"));
	front_xs_close(xs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_replies),
	    cmocka_unit_test(test_errors_mapped),
	    cmocka_unit_test(test_bad_replies),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_late_reply),
	    cmocka_unit_test(test_limits_exact),
	    cmocka_unit_test(test_unwatch_forgets_token),
	    cmocka_unit_test(test_read_uint),
	    cmocka_unit_test(test_unasked_reply),
	    cmocka_unit_test(test_tokens),
	};

	return group_run_tests(tests, group_setup, group_teardown);
}
