// SPDX-License-Identifier: MIT
/* xs.c - libpvnet's minimal xenstore client: one request at a time, watch events demultiplexed */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/xen.h"
#include "front/xs.h"

/*
 * Theory of Operation
 *
 * Why not libxenstore: libxenstore finds its socket only through the
 * XENSTORED_PATH environment variable.  A library cannot set that safely in
 * its host process: setenv() is not thread safe (another thread's getenv()
 * may read freed memory) and it would change the application's environment
 * behind its back.  So libpvnet speaks the wire protocol itself, to the
 * socket pvnet_domain_store_path() names, and keeps to the few operations a
 * netfront needs: READ, WRITE, MKDIR, RM, DIRECTORY, WATCH/UNWATCH,
 * TRANSACTION_START/END.
 *
 * Framing (xs_wire.h): a 16-byte struct xsd_sockmsg, then len bytes of
 * payload, len <= XENSTORE_PAYLOAD_MAX.  A request carries a fresh req_id
 * that the reply must echo; the reply type is the request's or XS_ERROR
 * (payload: an errno name from xsd_errors[]).  The store may interleave
 * XS_WATCH_EVENT messages (payload "path\0token\0") at any point; they are
 * queued here by token while a reply is awaited.
 *
 * Trust: the store is pvnetd's and trusted as far as the backend is, but a
 * bug there must not crash us: every length is bounded before it is used,
 * every reply is checked for its id, type and NUL termination, and every
 * wait has a deadline (-ETIMEDOUT).
 *
 * Events are "something changed" signals: users re-read the keys they care
 * about after one.  So what is kept is one flag per watch token: events
 * that come before the user looked coalesce into one, and nothing can
 * overflow or be lost.  The tokens are registered by front_xs_watch() (a
 * few per connection); an event for a token we do not watch (a late one
 * after an unwatch) is dropped.
 *
 * State: the socket, a receive buffer holding at most one message (partial
 * messages survive between calls), the watch tokens and their pending
 * flags.  One thread at a time.
 */

/* Watch tokens one connection registers: a vif has two, so this is ample. */
#define XS_MAX_TOKENS 16

struct front_xs {
	int fd;
	int timeout_ms;
	uint32_t next_req_id;
	size_t rlen;
	unsigned char rbuf[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX + 1];
	unsigned int ntokens;
	struct {
		char name[FRONT_XS_TOKEN_MAX + 1];
		unsigned int watches; /* registered watches with this token */
		bool pending;	      /* an event came that nobody took yet */
	} tokens[XS_MAX_TOKENS];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
	int64_t r = deadline - now_ms();

	return r < 0 ? 0 : (int)r;
}

/**
 * front_xs_open() - connect to a store socket
 * @sock_path: the socket (pvnet_domain_store_path() for the domain itself)
 * @timeout_ms: the bound on every later call's wait for the store
 * @out: set to the client
 *
 * Return: 0 or -errno
 */
int front_xs_open(const char *sock_path, int timeout_ms, struct front_xs **out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct front_xs *xs;
	int rc;

	*out = NULL;
	if (strlen(sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	xs = calloc(1, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	xs->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
	xs->next_req_id = 1;
	xs->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (xs->fd < 0) {
		rc = -errno;
		goto free_xs;
	}
	/* A local stream socket connects at once or fails: no EINPROGRESS to wait for. */
	if (connect(xs->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = -errno;
		goto close_fd;
	}
	*out = xs;
	return 0;

close_fd:
	close(xs->fd);
free_xs:
	free(xs);
	return rc;
}

/**
 * front_xs_close() - close the connection; the store drops its watches and transactions
 * @xs: the client, or NULL
 */
void front_xs_close(struct front_xs *xs)
{
	if (!xs)
		return;
	close(xs->fd);
	free(xs);
}

/**
 * front_xs_fd() - the socket, pollable for watch events
 * @xs: the client
 *
 * Return: the fd; readable when front_xs_poll_events() has something to read
 */
int front_xs_fd(const struct front_xs *xs)
{
	return xs->fd;
}

static int token_find(const struct front_xs *xs, const char *token)
{
	for (unsigned int i = 0; i < xs->ntokens; i++)
		if (!strcmp(xs->tokens[i].name, token))
			return (int)i;
	return -1;
}

static void queue_event(struct front_xs *xs, const char *token)
{
	int i = token_find(xs, token);

	if (i >= 0)
		xs->tokens[i].pending = true;
}

/* One watch of token @i is gone; the last takes the token and its pending event with it. */
static void token_put(struct front_xs *xs, int i)
{
	if (--xs->tokens[i].watches)
		return;
	xs->tokens[i] = xs->tokens[--xs->ntokens];
}

/**
 * front_xs_take_event() - consume the pending event of @token
 * @xs: the client
 * @token: the watch token
 *
 * Return: true if an event (or several) came for @token since it was last taken
 */
bool front_xs_take_event(struct front_xs *xs, const char *token)
{
	int i = token_find(xs, token);

	if (i < 0 || !xs->tokens[i].pending)
		return false;
	xs->tokens[i].pending = false;
	return true;
}

/* Is there a complete message in rbuf?  Return its total size, 0 if not yet, or -EPROTO. */
static long have_msg(const struct front_xs *xs)
{
	struct xsd_sockmsg h;

	if (xs->rlen < sizeof(h))
		return 0;
	memcpy(&h, xs->rbuf, sizeof(h));
	if (h.len > XENSTORE_PAYLOAD_MAX)
		return -EPROTO;
	if (xs->rlen < sizeof(h) + h.len)
		return 0;
	return (long)(sizeof(h) + h.len);
}

/* Read what the socket has, up to one whole message; wait until @deadline if @wait. */
static int fill(struct front_xs *xs, int64_t deadline, bool wait)
{
	struct pollfd p = {.fd = xs->fd, .events = POLLIN};
	size_t want = sizeof(struct xsd_sockmsg);
	ssize_t n;

	if (xs->rlen >= want) {
		struct xsd_sockmsg h;

		memcpy(&h, xs->rbuf, sizeof(h));
		want += h.len; /* have_msg() bounded h.len already */
	}
	for (;;) {
		n = recv(xs->fd, xs->rbuf + xs->rlen, want - xs->rlen, 0);
		if (n > 0) {
			xs->rlen += (size_t)n;
			return 0;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		if (!wait)
			return -EAGAIN;
		n = poll(&p, 1, remaining(deadline));
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Take a complete message out of rbuf: a watch event is queued and 0 returned. */
static int take_msg(struct front_xs *xs, long size, struct xsd_sockmsg *h, char *body)
{
	memcpy(h, xs->rbuf, sizeof(*h));
	memcpy(body, xs->rbuf + sizeof(*h), h->len);
	body[h->len] = '\0';
	memmove(xs->rbuf, xs->rbuf + size, xs->rlen - (size_t)size);
	xs->rlen -= (size_t)size;
	if (h->type != XS_WATCH_EVENT)
		return 1;
	/* "path\0token\0": both strings present and terminated. */
	size_t plen = strnlen(body, h->len);

	if (plen >= h->len || h->len < plen + 2 || body[h->len - 1] != '\0')
		return -EPROTO;
	queue_event(xs, body + plen + 1);
	return 0;
}

/*
 * Wait (until @deadline) for the next complete message and take it: 0 for
 * a watch event (queued), 1 for a reply (in @h and @body), or -errno.
 */
static int next_msg(struct front_xs *xs, int64_t deadline, struct xsd_sockmsg *h, char *body)
{
	for (;;) {
		long size = have_msg(xs);
		int rc;

		if (size < 0)
			return (int)size;
		if (size > 0)
			return take_msg(xs, size, h, body);
		rc = fill(xs, deadline, true);
		if (rc < 0)
			return rc;
	}
}

/*
 * A reply to a request of ours that timed out: its answer came late.  It
 * is dropped, so that one slow reply does not put every later call one
 * reply behind.  Ids only grow (modulo 2^32); @next is the first not sent.
 */
static bool stale_reply(const struct xsd_sockmsg *r, uint32_t next)
{
	return (int32_t)(next - r->req_id) > 0;
}

/**
 * front_xs_poll_events() - read whatever the socket holds, never blocking
 * @xs: the client
 *
 * Return: 0, or -errno if the connection failed or the store misbehaved
 */
int front_xs_poll_events(struct front_xs *xs)
{
	struct xsd_sockmsg h;
	char body[XENSTORE_PAYLOAD_MAX + 1];
	long size;
	int rc;

	for (;;) {
		size = have_msg(xs);
		if (size < 0)
			return (int)size;
		if (size > 0) {
			rc = take_msg(xs, size, &h, body);
			if (rc < 0)
				return rc;
			if (rc > 0 && !stale_reply(&h, xs->next_req_id))
				return -EPROTO; /* a reply nobody asked for */
			continue;
		}
		rc = fill(xs, 0, false);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
	}
}

/**
 * front_xs_wait_event() - wait until an event for @token is queued, and take it
 * @xs: the client
 * @token: the watch token
 * @timeout_ms: the bound
 *
 * Return: 0, -ETIMEDOUT, or -errno
 */
int front_xs_wait_event(struct front_xs *xs, const char *token, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct xsd_sockmsg h;
	char body[XENSTORE_PAYLOAD_MAX + 1];
	int rc;

	while (!front_xs_take_event(xs, token)) {
		rc = next_msg(xs, deadline, &h, body);
		if (rc < 0)
			return rc;
		if (rc > 0 && !stale_reply(&h, xs->next_req_id))
			return -EPROTO; /* a reply nobody asked for */
	}
	return 0;
}

static int errno_of(const char *name)
{
	for (size_t i = 0; i < sizeof(xsd_errors) / sizeof(xsd_errors[0]); i++)
		if (!strcmp(name, xsd_errors[i].errstring))
			return -xsd_errors[i].errnum;
	return -EIO;
}

static int send_all(struct front_xs *xs, const void *buf, size_t len, int64_t deadline)
{
	struct pollfd p = {.fd = xs->fd, .events = POLLOUT};
	const char *b = buf;
	ssize_t n;

	while (len) {
		n = send(xs->fd, b, len, MSG_NOSIGNAL);
		if (n > 0) {
			b += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		n = poll(&p, 1, remaining(deadline));
		if (n == 0)
			return -ETIMEDOUT;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

/*
 * One request/reply round trip.  @parts are concatenated as the payload
 * (each includes its NUL if the op wants one).  The reply payload is copied
 * NUL-terminated into @out (at most @outlen - 1 bytes, else -E2BIG).
 * Return: the reply's payload length, or -errno.
 */
static int call(struct front_xs *xs, uint32_t type, uint32_t txn, const struct iovec *parts,
		unsigned int nparts, char *out, size_t outlen)
{
	int64_t deadline = now_ms() + xs->timeout_ms;
	struct xsd_sockmsg h = {.type = type, .req_id = xs->next_req_id++, .tx_id = txn};
	char body[XENSTORE_PAYLOAD_MAX + 1];
	struct xsd_sockmsg r;
	int rc;

	for (unsigned int i = 0; i < nparts; i++)
		h.len += (uint32_t)parts[i].iov_len;
	if (h.len > XENSTORE_PAYLOAD_MAX)
		return -E2BIG;
	rc = send_all(xs, &h, sizeof(h), deadline);
	for (unsigned int i = 0; rc == 0 && i < nparts; i++)
		rc = send_all(xs, parts[i].iov_base, parts[i].iov_len, deadline);
	if (rc < 0)
		return rc;
	do {
		rc = next_msg(xs, deadline, &r, body);
		if (rc < 0)
			return rc;
		/* Watch events are queued, late replies dropped: go on until ours. */
	} while (rc == 0 || stale_reply(&r, h.req_id));
	if (r.req_id != h.req_id || (r.type != type && r.type != XS_ERROR))
		return -EPROTO;
	if (r.type == XS_ERROR)
		return errno_of(body);
	if (out) {
		if (r.len >= outlen)
			return -E2BIG;
		memcpy(out, body, r.len + 1);
	}
	return (int)r.len;
}

#define IOV_STR(s)                                                                                 \
	{                                                                                          \
		.iov_base = (void *)(s), .iov_len = strlen(s) + 1                                  \
	}

/* Replies that carry "OK\0". */
static int call_ok(struct front_xs *xs, uint32_t type, uint32_t txn, const struct iovec *parts,
		   unsigned int nparts)
{
	char ok[8]; /* "OK\0", with room to see a longer reply as wrong, not as too big */
	int rc = call(xs, type, txn, parts, nparts, ok, sizeof(ok));

	if (rc < 0)
		return rc;
	return rc == 3 && !memcmp(ok, "OK", 3) ? 0 : -EPROTO;
}

/**
 * front_xs_read() - read a node's value as a string
 * @xs: the client
 * @txn: transaction id or FRONT_XS_NO_TXN
 * @path: the node
 * @buf: receives the value, NUL-terminated
 * @buflen: size of @buf
 *
 * Return: the value's length, -ENOENT, -EACCES, -E2BIG (does not fit), -EPROTO
 * (a NUL inside the value) or -errno
 */
int front_xs_read(struct front_xs *xs, uint32_t txn, const char *path, char *buf, size_t buflen)
{
	struct iovec p[] = {IOV_STR(path)};
	int rc = call(xs, XS_READ, txn, p, 1, buf, buflen);

	if (rc >= 0 && strlen(buf) != (size_t)rc)
		return -EPROTO;
	return rc;
}

/**
 * front_xs_read_uint() - read a node holding a decimal number
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 * @dflt: the value when the node does not exist
 * @max: the largest acceptable value
 * @val: receives the value
 *
 * Return: 0, -EINVAL for garbage or values above @max, or -errno
 */
int front_xs_read_uint(struct front_xs *xs, uint32_t txn, const char *path, unsigned long dflt,
		       unsigned long max, unsigned long *val)
{
	char buf[24], *end; /* a 64-bit decimal has 20 digits */
	unsigned long v;
	int rc = front_xs_read(xs, txn, path, buf, sizeof(buf));

	if (rc == -ENOENT) {
		*val = dflt;
		return 0;
	}
	if (rc < 0)
		return rc == -E2BIG ? -EINVAL : rc;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (!rc || *end || errno || buf[0] == '-' || v > max)
		return -EINVAL;
	*val = v;
	return 0;
}

/**
 * front_xs_write() - write a node, creating it and its parents
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 * @value: the string to store (without its NUL, as xenstore does)
 *
 * Return: 0 or -errno
 */
int front_xs_write(struct front_xs *xs, uint32_t txn, const char *path, const char *value)
{
	struct iovec p[] = {IOV_STR(path), {.iov_base = (void *)value, .iov_len = strlen(value)}};

	return call_ok(xs, XS_WRITE, txn, p, 2);
}

/**
 * front_xs_printf() - write a formatted value
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 * @fmt: printf format of the value
 *
 * Return: 0 or -errno (-E2BIG for values above 255 bytes: ours are numbers)
 */
int front_xs_printf(struct front_xs *xs, uint32_t txn, const char *path, const char *fmt, ...)
{
	char v[256]; /* our values are numbers and short words */
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(v))
		return -E2BIG;
	return front_xs_write(xs, txn, path, v);
}

/**
 * front_xs_mkdir() - create a node (no error if it exists)
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 *
 * Return: 0 or -errno
 */
int front_xs_mkdir(struct front_xs *xs, uint32_t txn, const char *path)
{
	struct iovec p[] = {IOV_STR(path)};

	return call_ok(xs, XS_MKDIR, txn, p, 1);
}

/**
 * front_xs_rm() - remove a node and its children
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 *
 * Return: 0 or -errno
 */
int front_xs_rm(struct front_xs *xs, uint32_t txn, const char *path)
{
	struct iovec p[] = {IOV_STR(path)};

	return call_ok(xs, XS_RM, txn, p, 1);
}

/**
 * front_xs_directory() - list a node's children
 * @xs: the client
 * @txn: transaction id
 * @path: the node
 * @buf: receives the names, each NUL-terminated, one after the other
 * @buflen: size of @buf
 * @count: set to the number of names
 *
 * Return: 0 or -errno (-E2BIG if the list does not fit)
 */
int front_xs_directory(struct front_xs *xs, uint32_t txn, const char *path, char *buf,
		       size_t buflen, unsigned int *count)
{
	struct iovec p[] = {IOV_STR(path)};
	int rc = call(xs, XS_DIRECTORY, txn, p, 1, buf, buflen);

	*count = 0;
	if (rc < 0)
		return rc;
	if (rc > 0 && buf[rc - 1] != '\0')
		return -EPROTO;
	for (int i = 0; i < rc; i++)
		*count += buf[i] == '\0';
	return 0;
}

/**
 * front_xs_watch() - watch @path and its children; the first event comes at once
 * @xs: the client
 * @path: the node
 * @token: our name for the watch, at most FRONT_XS_TOKEN_MAX bytes
 *
 * Return: 0 or -errno
 */
int front_xs_watch(struct front_xs *xs, const char *path, const char *token)
{
	struct iovec p[] = {IOV_STR(path), IOV_STR(token)};
	int i, rc;

	if (strlen(token) > FRONT_XS_TOKEN_MAX)
		return -EINVAL;
	/* Registered before the request: the first event may come before the reply. */
	i = token_find(xs, token);
	if (i < 0) {
		if (xs->ntokens == XS_MAX_TOKENS)
			return -ENOSPC;
		i = (int)xs->ntokens++;
		memcpy(xs->tokens[i].name, token, strlen(token) + 1);
		xs->tokens[i].watches = 0;
		xs->tokens[i].pending = false;
	}
	xs->tokens[i].watches++;
	rc = call_ok(xs, XS_WATCH, FRONT_XS_NO_TXN, p, 2);
	if (rc < 0)
		token_put(xs, i);
	return rc;
}

/**
 * front_xs_unwatch() - remove a watch; with the last of its token, its pending event goes
 * @xs: the client
 * @path: as given to front_xs_watch()
 * @token: as given to front_xs_watch()
 *
 * Return: 0 or -errno
 */
int front_xs_unwatch(struct front_xs *xs, const char *path, const char *token)
{
	struct iovec p[] = {IOV_STR(path), IOV_STR(token)};
	int rc = call_ok(xs, XS_UNWATCH, FRONT_XS_NO_TXN, p, 2);
	int i = token_find(xs, token);

	if (i >= 0)
		token_put(xs, i);
	return rc;
}

/**
 * front_xs_txn_start() - start a transaction
 * @xs: the client
 * @txn: set to its id
 *
 * Return: 0 or -errno
 */
int front_xs_txn_start(struct front_xs *xs, uint32_t *txn)
{
	struct iovec p[] = {IOV_STR("")};
	char id[16], *end; /* a 32-bit transaction id in decimal */
	unsigned long v;
	int rc = call(xs, XS_TRANSACTION_START, FRONT_XS_NO_TXN, p, 1, id, sizeof(id));

	if (rc < 0)
		return rc == -E2BIG ? -EPROTO : rc;
	errno = 0;
	v = strtoul(id, &end, 10);
	if (!rc || *end || errno || !v || v > UINT32_MAX)
		return -EPROTO;
	*txn = (uint32_t)v;
	return 0;
}

/**
 * front_xs_txn_end() - commit or abort a transaction
 * @xs: the client
 * @txn: its id
 * @commit: commit (true) or abort
 *
 * Return: 0, -EAGAIN when the commit lost a race (the caller retries the
 * whole transaction), or -errno
 */
int front_xs_txn_end(struct front_xs *xs, uint32_t txn, bool commit)
{
	struct iovec p[] = {IOV_STR(commit ? "T" : "F")};

	return call_ok(xs, XS_TRANSACTION_END, txn, p, 1);
}
