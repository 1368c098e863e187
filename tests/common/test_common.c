// SPDX-License-Identifier: MIT
/*
 * test_common.c - unit tests of src/common: control-message framing, event loop, log rate limit,
 * ring pushes, bulk copies
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_count.h"
#include "log_capture.h"
#include "test_skip.h"
#include "common/bulkcopy.h"
#include "common/ctlmsg.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/mac.h"
#include "common/xen.h"

static void seqpair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void test_ctlmsg_roundtrip_with_fds(void **state)
{
	int sv[2], p[2], fds[CTLMSG_MAX_FDS];
	unsigned int nfds;
	json_t *msg, *got;
	char c;

	seqpair(sv);
	assert_int_equal(pipe(p), 0);
	msg = json_pack("{s:s, s:i}", "op", "x", "n", 7);
	assert_int_equal(ctlmsg_send(sv[0], msg, &p[1], 1), 0);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), 0);
	assert_int_equal(nfds, 1);
	assert_true(json_equal(msg, got));
	/* The received descriptor is the pipe's write end. */
	assert_int_equal(write(fds[0], "z", 1), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'z');
	close(fds[0]);
	json_decref(msg);
	json_decref(got);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* Send @len bytes of @text as one datagram carrying @fd @n times (SCM_RIGHTS). */
static void send_raw(int sock, const char *text, size_t len, int fd, unsigned int n)
{
	int many[CTLMSG_MAX_FDS + 1];
	union {
		char buf[CMSG_SPACE(sizeof(many))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)text, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	assert_true(n >= 1 && n <= CTLMSG_MAX_FDS + 1);
	for (unsigned int i = 0; i < n; i++)
		many[i] = fd;
	mh.msg_control = u.buf;
	mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), many, n * sizeof(int));
	assert_int_equal(sendmsg(sock, &mh, 0), (ssize_t)len);
}

static void test_ctlmsg_rejects_bad_messages_without_leaking_fds(void **state)
{
	int sv[2], p[2], fds[CTLMSG_MAX_FDS], before;
	char why[256];
	unsigned int nfds;
	json_t *got;

	seqpair(sv);
	assert_int_equal(pipe(p), 0);
	before = fd_count();
	/* Not JSON, with an fd attached: the fd must be closed, not leaked. */
	send_raw(sv[0], "{bad", 4, p[0], 1);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), -EBADMSG);
	assert_null(got);
	assert_int_equal(fd_count(), before);

	/* JSON but not an object; and what ctlmsg_recv_why() says of each. */
	assert_int_equal(send(sv[0], "[1,2]", 5, 0), 5);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), -EBADMSG);
	assert_int_equal(send(sv[0], "[1,2]", 5, 0), 5);
	assert_int_equal(ctlmsg_recv_why(sv[1], &got, fds, &nfds, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "not a JSON object");
	assert_int_equal(send(sv[0], "{\"a\":1,\"a\":2}", 13, 0), 13);
	assert_int_equal(ctlmsg_recv_why(sv[1], &got, fds, &nfds, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "not JSON: duplicate"));
	/* More descriptors than a message may carry: all closed, and said. */
	send_raw(sv[0], "{}", 2, p[0], CTLMSG_MAX_FDS + 1);
	assert_int_equal(ctlmsg_recv_why(sv[1], &got, fds, &nfds, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "more than 8 file descriptors attached");
	assert_int_equal(fd_count(), before);

	/* Too large to be a control message. */
	{
		size_t big = CTLMSG_MAX + 10;
		char *buf = malloc(big);
		int sz = (int)big * 2;

		memset(buf, ' ', big);
		buf[0] = '{';
		buf[big - 1] = '}';
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		assert_int_equal(send(sv[0], buf, big, 0), (ssize_t)big);
		free(buf);
		assert_int_equal(ctlmsg_recv_why(sv[1], &got, fds, &nfds, why, sizeof(why)),
				 -EBADMSG);
		assert_string_equal(why, "longer than 65536 bytes");
	}

	/* Orderly shutdown of the peer. */
	close(sv[0]);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), -ECONNRESET);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

static void test_ctlmsg_call_maps_error_reply(void **state)
{
	int sv[2], fds[CTLMSG_MAX_FDS];
	unsigned int nfds;
	json_t *req = json_pack("{s:s}", "op", "x"), *reply = NULL, *got, *err;

	seqpair(sv);
	/* Queue the server's answer first: a seqpacket pair buffers it. */
	err = ctlmsg_error(ENOSPC, "full: %d", 3);
	assert_int_equal(ctlmsg_send(sv[1], err, NULL, 0), 0);
	assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -ENOSPC);
	assert_string_equal(json_string_value(json_object_get(reply, "error")), "full: 3");
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), 0);
	assert_true(json_equal(got, req));
	assert_int_equal(ctlmsg_send(sv[0], req, fds, CTLMSG_MAX_FDS + 1), -EINVAL);
	json_decref(got);
	json_decref(err);
	json_decref(reply);
	json_decref(req);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A server that refuses the connection sends why and closes it: the
 * client's request, sent before or after the close, still gets that reason
 * as its reply (not EPIPE, nor the reset the unread request causes).
 */
static void test_ctlmsg_call_reads_a_refusal(void **state)
{
	json_t *req = json_pack("{s:s}", "op", "x"), *reply, *err = ctlmsg_error(EMFILE, "full");
	int sv[2];

	for (int before = 0; before < 2; before++) {
		seqpair(sv);
		if (before) /* the request waits, unread, when the server closes */
			assert_int_equal(ctlmsg_send(sv[0], req, NULL, 0), 0);
		assert_int_equal(ctlmsg_send(sv[1], err, NULL, 0), 0);
		close(sv[1]);
		reply = NULL;
		assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -EMFILE);
		assert_string_equal(json_string_value(json_object_get(reply, "error")), "full");
		json_decref(reply);
		/* Nothing more comes: the peer is gone, and nothing blocks. */
		reply = NULL;
		assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -ECONNRESET);
		close(sv[0]);
	}
	json_decref(err);
	json_decref(req);
}

/*
 * The limits are inclusive: CTLMSG_MAX_FDS descriptors and a message of
 * exactly CTLMSG_MAX bytes go through; and a receiver that takes no
 * descriptors (fds NULL) gets the message, the ones attached closed.
 */
static void test_ctlmsg_limits_inclusive(void **state)
{
	int sv[2], p[2], many[CTLMSG_MAX_FDS], fds[CTLMSG_MAX_FDS], before, sz = 4 * CTLMSG_MAX;
	unsigned int nfds;
	json_t *msg, *got;
	char *pad;

	(void)state;
	seqpair(sv);
	assert_int_equal(pipe(p), 0);
	before = fd_count();
	for (int i = 0; i < CTLMSG_MAX_FDS; i++)
		many[i] = p[1];
	msg = json_pack("{s:s}", "op", "x");
	assert_int_equal(ctlmsg_send(sv[0], msg, many, CTLMSG_MAX_FDS), 0);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), 0);
	assert_int_equal(nfds, CTLMSG_MAX_FDS);
	while (nfds)
		close(fds[--nfds]);
	json_decref(got);
	assert_int_equal(fd_count(), before);

	/* Without room for descriptors: the message still, the descriptor closed. */
	assert_int_equal(ctlmsg_send(sv[0], msg, &p[1], 1), 0);
	assert_int_equal(ctlmsg_recv(sv[1], &got, NULL, &nfds), 0);
	assert_int_equal(nfds, 0);
	assert_true(json_equal(msg, got));
	json_decref(got);
	assert_int_equal(fd_count(), before);
	json_decref(msg);

	/* {"a":"xx...x"}: 8 bytes around the string, CTLMSG_MAX in all. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	pad = malloc(CTLMSG_MAX - 8 + 2);
	assert_non_null(pad);
	memset(pad, 'x', CTLMSG_MAX - 8);
	pad[CTLMSG_MAX - 8] = '\0';
	msg = json_pack("{s:s}", "a", pad);
	assert_int_equal(ctlmsg_send(sv[0], msg, NULL, 0), 0);
	assert_int_equal(ctlmsg_recv(sv[1], &got, fds, &nfds), 0);
	assert_true(json_equal(msg, got));
	json_decref(got);
	json_decref(msg);
	/* One byte more is refused by the sender. */
	strcat(pad, "x");
	msg = json_pack("{s:s}", "a", pad);
	free(pad);
	assert_int_equal(ctlmsg_send(sv[0], msg, NULL, 0), -EMSGSIZE);
	json_decref(msg);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
}

/* A run directory whose socket path would not fit sun_path (107 bytes and a NUL). */
static void test_ctlmsg_connect_path_too_long(void **state)
{
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)];
	size_t fit = sizeof(sa.sun_path) - 1 - strlen("/" CTLMSG_SOCK_NAME);

	(void)state;
	memset(dir, 'd', sizeof(dir));
	dir[0] = '/';
	dir[fit + 1] = '\0'; /* one byte too many: the path would have no room for its NUL */
	assert_int_equal(ctlmsg_connect(dir), -ENAMETOOLONG);
	dir[fit] = '\0'; /* fits: no such socket */
	assert_int_equal(ctlmsg_connect(dir), -ENOENT);
}

/*
 * ctlmsg_set_timeout() bounds both directions (1.5 s: whole ticks at any
 * HZ), and a call that runs into the bound is -ETIMEDOUT, whether the
 * request could not be sent (the peer's queue full) or no reply came.  An
 * error reply without a usable errno is -EIO, never success.
 */
static void test_ctlmsg_call_timeouts_and_errnos(void **state)
{
	json_t *req = json_pack("{s:s}", "op", "x"), *reply = NULL, *err;
	struct timeval tv;
	socklen_t len = sizeof(tv);
	int sv[2];

	(void)state;
	seqpair(sv);
	assert_int_equal(ctlmsg_set_timeout(sv[0], 1500), 0);
	assert_int_equal(getsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, &len), 0);
	assert_int_equal(tv.tv_sec, 1);
	assert_int_equal(tv.tv_usec, 500000);
	assert_int_equal(getsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, &len), 0);
	assert_int_equal(tv.tv_sec, 1);
	assert_int_equal(tv.tv_usec, 500000);

	assert_int_equal(ctlmsg_set_timeout(sv[0], 20), 0);
	/* Nobody answers. */
	assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -ETIMEDOUT);
	assert_null(reply);
	/* Nobody reads: the peer's queue fills up. */
	while (send(sv[0], "{}", 2, MSG_DONTWAIT) == 2)
		;
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -ETIMEDOUT);
	close(sv[0]);
	close(sv[1]);

	seqpair(sv);
	err = json_pack("{s:s, s:i}", "error", "no errno", "errno", 0);
	assert_int_equal(ctlmsg_send(sv[1], err, NULL, 0), 0);
	assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -EIO);
	json_decref(reply);
	json_decref(err);
	err = json_pack("{s:s}", "error", "none at all");
	assert_int_equal(ctlmsg_send(sv[1], err, NULL, 0), 0);
	assert_int_equal(ctlmsg_call(sv[0], req, NULL, 0, &reply, NULL, NULL), -EIO);
	json_decref(reply);
	json_decref(err);
	json_decref(req);
	close(sv[0]);
	close(sv[1]);
}

struct loop_fixture {
	struct loop *l;
	struct loop_watch a, b;
	int pa[2], pb[2];
	int fired_a, fired_b;
};

static void on_a(struct loop_watch *w, uint32_t ev)
{
	struct loop_fixture *f = w->data;
	char c;

	f->fired_a++;
	assert_int_equal(read(w->fd, &c, 1), 1);
	/* Removing the other watch in the same batch must cancel its pending event. */
	loop_del(f->l, &f->b);
	loop_stop(f->l);
}

static void on_b(struct loop_watch *w, uint32_t ev)
{
	struct loop_fixture *f = w->data;
	char c;

	f->fired_b++;
	assert_int_equal(read(w->fd, &c, 1), 1);
	loop_del(f->l, &f->a);
	loop_stop(f->l);
}

/* A loop and two pipes, watch a on the first's read end, b on the second's (not added). */
static void loop_fixture_open(struct loop_fixture *f)
{
	f->l = loop_create();
	assert_non_null(f->l);
	assert_int_equal(pipe(f->pa), 0);
	assert_int_equal(pipe(f->pb), 0);
	f->a = (struct loop_watch){.fd = f->pa[0], .cb = on_a, .data = f};
	f->b = (struct loop_watch){.fd = f->pb[0], .cb = on_b, .data = f};
}

static void test_loop_delete_during_dispatch(void **state)
{
	struct loop_fixture f = {0};

	loop_fixture_open(&f);
	assert_int_equal(loop_add(f.l, &f.a, EPOLLIN), 0);
	assert_int_equal(loop_add(f.l, &f.b, EPOLLIN), 0);
	assert_int_equal(loop_add(f.l, &f.b, EPOLLIN), -EEXIST);
	assert_int_equal(write(f.pa[1], "x", 1), 1);
	assert_int_equal(write(f.pb[1], "y", 1), 1);
	assert_int_equal(loop_run(f.l), 0);
	/* Exactly one of the two ran: whichever came first removed the other. */
	assert_int_equal(f.fired_a + f.fired_b, 1);
	assert_int_equal(loop_run_once(f.l, 0), 0);
	loop_destroy(f.l);
	for (int i = 0; i < 2; i++) {
		close(f.pa[i]);
		close(f.pb[i]);
	}
}

static void test_loop_timeout_and_mod(void **state)
{
	struct loop_fixture f = {0};

	f.l = loop_create();
	assert_int_equal(pipe(f.pa), 0);
	f.a = (struct loop_watch){.fd = f.pa[0], .cb = on_a, .data = &f};
	assert_int_equal(loop_add(f.l, &f.a, 0), 0);
	assert_int_equal(write(f.pa[1], "x", 1), 1);
	/* Watching for nothing: the readable pipe does not fire. */
	assert_int_equal(loop_run_once(f.l, 10), 0);
	assert_int_equal(loop_mod(f.l, &f.a, EPOLLIN), 0);
	f.b.fd = -1;
	assert_int_equal(loop_run_once(f.l, 1000), 1);
	assert_int_equal(f.fired_a, 1);
	loop_destroy(f.l);
	close(f.pa[0]);
	close(f.pa[1]);
}

/* A loop stopped once runs again: loop_run() starts afresh each time. */
static void test_loop_runs_again(void **state)
{
	struct loop_fixture f = {0};

	(void)state;
	loop_fixture_open(&f);
	assert_int_equal(loop_add(f.l, &f.a, EPOLLIN), 0);
	assert_int_equal(write(f.pa[1], "x", 1), 1);
	assert_int_equal(loop_run(f.l), 0); /* on_a stops it */
	assert_int_equal(f.fired_a, 1);
	assert_int_equal(write(f.pa[1], "x", 1), 1);
	assert_int_equal(loop_run(f.l), 0);
	assert_int_equal(f.fired_a, 2);
	loop_destroy(f.l);
	for (int i = 0; i < 2; i++) {
		close(f.pa[i]);
		close(f.pb[i]);
	}
}

/* Exactly six pairs of hex digits with colons between: nothing sscanf would also take. */
static void test_mac_parse(void **state)
{
	static const char *const bad[] = {
	    "",
	    "00:16:3e:00:00:0",
	    "00:16:3e:00:00:012",
	    "00:16:3e:00:00:01:",
	    "00:16:3e:00:00:01 ",
	    " 0:16:3e:00:00:01",
	    "+0:16:3e:00:00:01",
	    "-2:+1: 3:04:05:06",
	    "0x:16:3e:00:00:01",
	    "00-16-3e-00-00-01",
	    "00:16:3g:00:00:01",
	    "0:16:3e:00:00:01a",
	};
	uint8_t mac[6] = {9, 9, 9, 9, 9, 9};

	(void)state;
	assert_int_equal(mac_parse("00:16:3E:aB:Cd:ff", mac), 0);
	assert_memory_equal(mac, "\x00\x16\x3e\xab\xcd\xff", 6);
	assert_true(mac_is_unicast(mac));
	/* Every digit, both cases. */
	assert_int_equal(mac_parse("98:76:54:32:10:AF", mac), 0);
	assert_memory_equal(mac, "\x98\x76\x54\x32\x10\xaf", 6);
	assert_int_equal(mac_parse("ab:cd:ef:AB:CD:EF", mac), 0);
	assert_memory_equal(mac, "\xab\xcd\xef\xab\xcd\xef", 6);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t m[6] = {7, 7, 7, 7, 7, 7};

		assert_int_equal(mac_parse(bad[i], m), -EINVAL);
		assert_memory_equal(m, "\x07\x07\x07\x07\x07\x07", 6); /* untouched */
	}
	assert_int_equal(mac_parse("01:00:5e:00:00:01", mac), 0);
	assert_false(mac_is_unicast(mac));
	assert_int_equal(mac_parse_guest("01:00:5e:00:00:01", mac), -EINVAL);
	assert_int_equal(mac_parse("00:00:00:00:00:00", mac), 0);
	assert_false(mac_is_unicast(mac));
	assert_int_equal(mac_parse_guest("00:00:00:00:00:00", mac), -EINVAL);
	assert_int_equal(mac_parse_guest("00:16:3e:00:00:01", mac), 0);
}

static void test_ratelimit_burst(void **state)
{
	struct log_ratelimit rl = {.interval_ns = 60ULL * 1000000000ULL, .burst = 3};
	int printed = 0;

	for (int i = 0; i < 100; i++)
		printed += log_ratelimit_ok(&rl);
	assert_int_equal(printed, 3);
	assert_int_equal(rl.suppressed, 97);
	assert_int_equal(log_level_parse("debug"), LOG_DEBUG);
	assert_int_equal(log_level_parse("loud"), -EINVAL);
}

/*
 * When a window ends, the count of the messages suppressed in it is
 * printed with the limit's name (which guest they were about), once.
 */
static void test_ratelimit_names_suppressed(void **state)
{
	struct log_ratelimit rl = {.interval_ns = 60ULL * 1000000000ULL, .burst = 1};
	const char *count = "vif7.0: 2 messages suppressed\n", *line;
	struct log_capture cap;
	char *text;

	(void)state;
	log_ratelimit_name(&rl, "vif%u.%u", 7u, 0u);
	log_capture_start(&cap);
	log_set_level(LOG_INFO);
	for (int i = 0; i < 3; i++)
		log_ratelimited(&rl, LOG_WARN, "bad packet %d", i);
	rl.window_start -= rl.interval_ns; /* the window is over, without a timed wait */
	log_ratelimited(&rl, LOG_WARN, "bad packet %d", 3);
	log_ratelimited(&rl, LOG_WARN, "bad packet %d", 4);
	text = log_capture_end(&cap);

	assert_int_equal(log_count(text, "bad packet 0\n"), 1);
	assert_int_equal(log_count(text, "bad packet 1"), 0);
	assert_int_equal(log_count(text, "bad packet 2"), 0);
	assert_int_equal(log_count(text, "suppressed"), 1);
	line = strstr(text, count);
	assert_non_null(line);
	assert_non_null(strstr(line + strlen(count), "bad packet 3\n"));
	assert_int_equal(log_count(text, "bad packet 4"), 0);
	free(text);
}

/*
 * Messages of a level not printed take nothing from a rate limit (a peer
 * driving debug lines must not use up an error's budget), and a line cut
 * at the buffer's end still ends with its newline (the next line is not
 * glued on).  Both read back from stderr (log_capture).
 */
static void test_log_levels_and_long_lines(void **state)
{
	struct log_ratelimit rl = {.interval_ns = 60ULL * 1000000000ULL, .burst = 3};
	struct log_capture cap;
	static char big[1500];
	char *buf, *nl;

	(void)state;
	log_capture_start(&cap);
	log_set_level(LOG_INFO);
	for (int i = 0; i < 10; i++)
		log_ratelimited(&rl, LOG_DEBUG, "debug %d", i);
	assert_int_equal(rl.printed, 0);
	assert_int_equal(rl.suppressed, 0);
	log_ratelimited(&rl, LOG_ERR, "the error");
	memset(big, 'A', sizeof(big) - 1);
	err("%s", big);
	err("second line");
	buf = log_capture_end(&cap);

	assert_non_null(strstr(buf, "the error\n"));
	assert_null(strstr(buf, "debug"));
	nl = strstr(buf, "AAAA");
	assert_non_null(nl);
	nl = strchr(nl, '\n');
	assert_non_null(nl);
	assert_non_null(strstr(nl + 1, "second line\n"));
	assert_null(strstr(nl + 1, "AAAA")); /* the long line ended where it was cut */
	free(buf);
}

/*
 * A line is the local time of day to the millisecond (HH:MM:SS.mmm, as
 * tcpdump prints a frame's), the level padded to five, the message.  A
 * message at the threshold is printed (info at info), one past it not; a
 * rate limit without a name says just its count.
 */
static void test_log_line_format(void **state)
{
	struct log_ratelimit rl = {.interval_ns = 60ULL * 1000000000ULL, .burst = 1};
	static const char shape[] = "dd:dd:dd.ddd ";
	struct log_capture cap;
	char *text;

	(void)state;
	log_capture_start(&cap);
	log_set_level(LOG_INFO);
	info("at the threshold");
	log_msg(LOG_DEBUG, "past it");
	for (int i = 0; i < 3; i++)
		log_ratelimited(&rl, LOG_WARN, "nameless %d", i);
	rl.window_start -= rl.interval_ns; /* the window is over */
	log_ratelimited(&rl, LOG_WARN, "nameless %d", 3);
	text = log_capture_end(&cap);

	assert_true(strlen(text) > sizeof(shape));
	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == 'd')
			assert_true(text[i] >= '0' && text[i] <= '9');
		else
			assert_int_equal(text[i], shape[i]);
	assert_int_equal(strncmp(text + sizeof(shape) - 1, "info  at the threshold\n", 23), 0);
	assert_null(strstr(text, "past it"));
	assert_int_equal(log_count(text, " warn  2 messages suppressed\n"), 1);
	free(text);
}

/* die() says why, as an error line, and exits with status 1. */
static void test_die(void **state)
{
	char out[256] = "";
	int pfd[2], st;
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	fflush(NULL); /* else the child's exit() would print our buffered output again */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		die("cannot go on: %d", 7);
	}
	close(pfd[1]);
	n = read(pfd[0], out, sizeof(out) - 1);
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_true(n > 0);
	assert_non_null(strstr(out, " err   cannot go on: 7\n"));
}

/*
 * Out of file descriptors, loop_accept() sheds the waiting connection, so
 * that the listener is no longer readable (a level-triggered loop would
 * otherwise call it back for ever) and the client learns at once.
 */
static void test_loop_accept_out_of_fds(void **state)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[] = "/tmp/pvnet-accept-XXXXXX";
	int lfd, cfd, cfd2, fill[64], nfill = 0, fd;
	struct rlimit old, low;
	char c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/s", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	cfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(cfd >= 0);
	cfd2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(cfd2 >= 0);
	/* Nothing waiting: -EAGAIN (and the spare is made). */
	assert_int_equal(loop_accept(lfd, SOCK_CLOEXEC), -EAGAIN);

	/* Leave no descriptor free. */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	low = old;
	low.rlim_cur = (rlim_t)fd + 16;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < 64 && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		fill[nfill++] = fd;
	assert_true(nfill < 64);

	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(loop_accept(lfd, SOCK_CLOEXEC), -EMFILE);
	assert_int_equal(poll(&(struct pollfd){.fd = lfd, .events = POLLIN}, 1, 0), 0);
	assert_true(recv(cfd, &c, 1, 0) <= 0); /* shed: end of file or reset */
	/* Still out of descriptors: the next one is shed too (the spare was made again). */
	assert_int_equal(connect(cfd2, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(loop_accept(lfd, SOCK_CLOEXEC), -EMFILE);
	assert_int_equal(poll(&(struct pollfd){.fd = lfd, .events = POLLIN}, 1, 0), 0);
	assert_true(recv(cfd2, &c, 1, 0) <= 0);

	while (nfill)
		close(fill[--nfill]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	close(cfd);
	close(cfd2);
	close(lfd);
	unlink(a.sun_path);
	rmdir(dir);
}

/*
 * xen_ring_push() decides from the index we published, whatever the other
 * end wrote on the shared page: RING_PUSH_*_AND_CHECK_NOTIFY read it back,
 * and a peer that wrote the coming index there was never notified.
 */
static void test_ring_push_ignores_shared_old(void **state)
{
	netif_tx_sring_t sring = {0};
	RING_IDX pushed = 10;

	(void)state;
	/* The peer asks for an event at 11 and writes 11 as the producer in advance. */
	sring.req_event = 11;
	sring.req_prod = 11;
	assert_true(xen_ring_push(&sring.req_prod, &sring.req_event, &pushed, 11));
	assert_int_equal(sring.req_prod, 11);
	assert_int_equal(pushed, 11);
	/* Nothing new: no store, no event, whatever the page says. */
	sring.req_prod = 5;
	assert_false(xen_ring_push(&sring.req_prod, &sring.req_event, &pushed, 11));
	assert_int_equal(sring.req_prod, 5);
	/* An event asked beyond what is published: none yet; then reached. */
	sring.req_event = 20;
	assert_false(xen_ring_push(&sring.req_prod, &sring.req_event, &pushed, 15));
	assert_int_equal(sring.req_prod, 15);
	assert_true(xen_ring_push(&sring.req_prod, &sring.req_event, &pushed, 20));
	/* Across the index's wrap. */
	pushed = UINT32_MAX - 1;
	sring.req_event = 1;
	assert_true(xen_ring_push(&sring.req_prod, &sring.req_event, &pushed, 2));
	assert_int_equal(sring.req_prod, 2);
}

/* A byte pattern no two nearby places share (period 251). */
static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i + seed) % 251);
}

/*
 * bulk_copy() is memmove: every length around the vector sizes and the
 * threshold, every alignment of either side within a line, nothing written
 * outside the destination.
 */
static void test_bulk_copy_matches_memmove(void **state)
{
	static const size_t lens[] = {0,   1,	31,  32,   33,	 127,  128,  129,  511,
				      512, 513, 544, 1386, 2047, 2112, 4095, 4096, 9000};
	enum { PAD = 64, MAXLEN = 9000 };
	static uint8_t src[MAXLEN + 2 * PAD], got[MAXLEN + 3 * PAD], want[MAXLEN + 3 * PAD];

	(void)state;
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (size_t so = 0; so < PAD; so += 7) {
			for (size_t dof = 0; dof < PAD; dof += 5) {
				size_t n = lens[l];

				fill_pattern(src, sizeof(src), (unsigned int)(n + so));
				memset(got, 0xa5, sizeof(got));
				memset(want, 0xa5, sizeof(want));
				bulk_copy(got + PAD + dof, src + so, n);
				memmove(want + PAD + dof, src + so, n);
				if (memcmp(got, want, sizeof(got)) != 0)
					fail_msg("len %zu, source offset %zu, dest offset %zu", n,
						 so, dof);
			}
		}
	}
}

/*
 * Overlapping ranges, either way round, come out as memmove's: lengths
 * with and without a partial last vector (a forward copy with the
 * destination below the source goes wrong only in that last piece).
 */
static void test_bulk_copy_overlap(void **state)
{
	enum { MAXLEN = 4096, BUF = 3 * MAXLEN };
	static uint8_t got[BUF], want[BUF];
	static const long shifts[] = {-2048, -513, -64, -31, -1, 1, 32, 511, 4095};
	static const size_t lens[] = {512, 1000, 4065, 4096};

	(void)state;
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (size_t i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
			size_t from = MAXLEN, to = (size_t)((long)MAXLEN + shifts[i]);

			fill_pattern(got, BUF, (unsigned int)i);
			fill_pattern(want, BUF, (unsigned int)i);
			bulk_copy(got + to, got + from, lens[l]);
			memmove(want + to, want + from, lens[l]);
			if (memcmp(got, want, BUF) != 0)
				fail_msg("len %zu, overlap with shift %ld differs from memmove",
					 lens[l], shifts[i]);
		}
	}
}

/*
 * The vector loop is used wherever the CPU has AVX2, as the kernel reports
 * it: a probe that never said yes would leave every copy on memmove and
 * every other test here green.
 */
static void test_bulk_copy_probe(void **state)
{
	char line[4096];
	bool avx2 = false, seen = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	(void)state;
	if (!f)
		test_skip("the AVX2 probe: no /proc/cpuinfo to check it against");
	while (!seen && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		seen = true;
		avx2 = strstr(line, " avx2 ") || strstr(line, " avx2\n");
	}
	fclose(f);
	if (!seen)
		test_skip("the AVX2 probe: no flags line in /proc/cpuinfo to check it against");
	assert_int_equal(bulk_copy_avx2, avx2);
}

/* The vector loop on its own, where this CPU runs it: every length from 32 to 1 KiB. */
static void test_bulk_copy_avx2_loop(void **state)
{
	static uint8_t src[1024 + 64], got[1024 + 128], want[1024 + 128];

	(void)state;
	if (!bulk_copy_avx2)
		test_skip("the AVX2 copy loop: this CPU has no AVX2");
	for (size_t n = 32; n <= 1024; n++) {
		fill_pattern(src, sizeof(src), (unsigned int)n);
		memset(got, 0x5a, sizeof(got));
		memset(want, 0x5a, sizeof(want));
		bulk_copy_avx2_loop(got + 64 + n % 61, src + n % 37, n);
		memcpy(want + 64 + n % 61, src + n % 37, n);
		if (memcmp(got, want, sizeof(got)) != 0)
			fail_msg("vector loop, len %zu", n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ctlmsg_roundtrip_with_fds),
	    cmocka_unit_test(test_ctlmsg_rejects_bad_messages_without_leaking_fds),
	    cmocka_unit_test(test_ctlmsg_call_maps_error_reply),
	    cmocka_unit_test(test_ctlmsg_call_reads_a_refusal),
	    cmocka_unit_test(test_ctlmsg_limits_inclusive),
	    cmocka_unit_test(test_ctlmsg_connect_path_too_long),
	    cmocka_unit_test(test_ctlmsg_call_timeouts_and_errnos),
	    cmocka_unit_test(test_loop_delete_during_dispatch),
	    cmocka_unit_test(test_loop_timeout_and_mod),
	    cmocka_unit_test(test_loop_runs_again),
	    cmocka_unit_test(test_mac_parse),
	    cmocka_unit_test(test_ratelimit_burst),
	    cmocka_unit_test(test_ratelimit_names_suppressed),
	    cmocka_unit_test(test_log_levels_and_long_lines),
	    cmocka_unit_test(test_log_line_format),
	    cmocka_unit_test(test_die),
	    cmocka_unit_test(test_loop_accept_out_of_fds),
	    cmocka_unit_test(test_ring_push_ignores_shared_old),
	    cmocka_unit_test(test_bulk_copy_matches_memmove),
	    cmocka_unit_test(test_bulk_copy_overlap),
	    cmocka_unit_test(test_bulk_copy_probe),
	    cmocka_unit_test(test_bulk_copy_avx2_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
