// SPDX-License-Identifier: MIT
/* server.c - UNIX stream sockets over the loop, one listener per domain, built on store_conn */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <utlist.h>

#include "common/log.h"
#include "common/loop.h"
#include "store/internal.h"

/*
 * Theory of Operation
 *
 * Runs on the loop thread.  A listener accepts connections that all act as
 * its domain.  Each socket connection reads into a private buffer of one
 * maximal message and feeds it to its store_conn with back-pressure: while
 * half of @out_max is queued for a client that does not read, its requests
 * stay unread in the socket (xenstored too stops answering such a client),
 * so neither buffer can grow.  Output the socket does not take stays in the
 * store_conn queue; EPOLLOUT is watched only while some is queued, set
 * after each of the connection's own callbacks and, for watch events other
 * clients cause, as soon as one is left queued (sconn_blocked_hook()).
 *
 * A callback answers at most SCONN_MSGS_PER_EVENT requests; one that
 * stops for that, with input read but not answered, watches EPOLLOUT (a
 * socket with room is writable) to be called again once the loop has
 * served the other ready fds.
 *
 * Closing is deferred while a connection's own callback runs (a watch
 * callback it triggered may release its domain or unlisten its socket):
 * the connection is marked and freed when its callback returns.  Domain
 * release only shuts the socket down; the loop then reports the hang-up.
 */

/*
 * Per callback, before yielding to other fds (fairness between clients):
 * reads, and requests answered.  A request costs up to a few ms (creating
 * a path 1000 levels deep hashes every level's full path), and one read
 * may bring dozens: without a bound of their own, one guest's pipelined
 * requests held every other connection for a quarter of a second.
 */
#define SCONN_READS_PER_EVENT 16
#define SCONN_MSGS_PER_EVENT  8

struct sconn {
	struct store_listener *ls;
	struct loop *l;
	struct loop_watch lw;
	struct store_conn *c;
	uint32_t events;
	bool busy;
	bool doomed;
	bool more; /* requests left unanswered for the budget: call again (EPOLLOUT) */
	size_t in_len;
	unsigned char in[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];
	struct sconn *prev, *next;
};

struct store_listener {
	struct store *s;
	struct loop *l;
	char *path;
	domid_t domid;
	struct loop_watch lw;
	struct sconn *conns;
	struct store_listener *prev, *next;
};

static struct log_ratelimit accept_rl = LOG_RATELIMIT_INIT;

static int sconn_send(void *ctx, const void *buf, size_t len)
{
	struct sconn *sc = ctx;
	ssize_t n = send(sc->lw.fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if ((size_t)n == len)
		return 0;
	return n ? (int)n : -EAGAIN;
}

static void sconn_free(struct sconn *sc)
{
	if (sc->ls)
		DL_DELETE(sc->ls->conns, sc);
	loop_del(sc->l, &sc->lw);
	close(sc->lw.fd);
	store_conn_close(sc->c);
	free(sc);
}

/* Close now, or when the connection's own callback returns. */
static void sconn_close(struct sconn *sc)
{
	if (sc->busy) {
		sc->doomed = true;
		store_conn_kill(sc->c); /* processes nothing more */
		return;
	}
	sconn_free(sc);
}

static void sconn_close_hook(void *ctx)
{
	struct sconn *sc = ctx;

	shutdown(sc->lw.fd, SHUT_RDWR); /* the loop reports the hang-up */
}

static void sconn_update(struct sconn *sc);

/*
 * Output stays queued: an event caused by another client, whose socket
 * did not take it.  Watch for room now; this connection's own callback
 * may not run again before its client sends something, and a client
 * waiting for that event sends nothing.
 */
static void sconn_blocked_hook(void *ctx)
{
	struct sconn *sc = ctx;

	if (!sc->busy)
		sconn_update(sc);
}

static void sconn_update(struct sconn *sc)
{
	const struct store *s = sc->c->s;
	uint32_t ev = 0;

	if (store_conn_pending(sc->c) < s->cfg.out_max / 2)
		ev |= EPOLLIN;
	/* A socket with room is writable: EPOLLOUT brings us back next round. */
	if (store_conn_pending(sc->c) || sc->more)
		ev |= EPOLLOUT;
	if (ev != sc->events && loop_mod(sc->l, &sc->lw, ev) == 0)
		sc->events = ev;
}

/* Feed buffered input within @budget; returns 0, or -errno when the connection must close. */
static int sconn_feed(struct sconn *sc, unsigned int *budget)
{
	size_t used;
	int r;

	if (!sc->in_len)
		return 0;
	r = store_conn_feed(sc->c, sc->in, sc->in_len, true, budget, &used);
	memmove(sc->in, sc->in + used, sc->in_len - used);
	sc->in_len -= used;
	return r;
}

static int sconn_work(struct sconn *sc, uint32_t events)
{
	const struct store *s = sc->c->s;
	unsigned int budget = SCONN_MSGS_PER_EVENT;
	int i, r;
	ssize_t n;

	sc->more = false;
	if (store_conn_flush(sc->c) == -EPIPE)
		return -EPIPE;
	r = sconn_feed(sc, &budget);
	if (r)
		return r;
	for (i = 0; i < SCONN_READS_PER_EVENT; i++) {
		if (sc->doomed || store_conn_pending(sc->c) >= s->cfg.out_max / 2 ||
		    sc->in_len == sizeof(sc->in) || budget == 0)
			break;
		n = recv(sc->lw.fd, sc->in + sc->in_len, sizeof(sc->in) - sc->in_len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		sc->in_len += (size_t)n;
		r = sconn_feed(sc, &budget);
		if (r)
			return r;
	}
	sc->more = budget == 0;
	if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
		return -ECONNRESET;
	return 0;
}

static void sconn_cb(struct loop_watch *w, uint32_t events)
{
	struct sconn *sc = w->data;
	int r;

	sc->busy = true;
	r = sconn_work(sc, events);
	sc->busy = false;
	if (r || sc->doomed) {
		sconn_free(sc);
		return;
	}
	sconn_update(sc);
}

static void listener_cb(struct loop_watch *w, uint32_t events)
{
	struct store_listener *ls = w->data;
	struct sconn *sc;
	int fd;

	fd = loop_accept(ls->lw.fd, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (fd != -EAGAIN && fd != -EINTR)
			log_ratelimited(&accept_rl, LOG_WARN, "store: accept on %s: %s", ls->path,
					strerror(-fd));
		return;
	}
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto err_close;
	sc->ls = ls;
	sc->l = ls->l;
	sc->lw.fd = fd;
	sc->lw.cb = sconn_cb;
	sc->lw.data = sc;
	sc->c = store_conn_open(ls->s, ls->domid, sconn_send, sc);
	if (!sc->c)
		goto err_free;
	sc->c->close_hook = sconn_close_hook;
	sc->c->blocked_hook = sconn_blocked_hook;
	sc->c->close_ctx = sc;
	sc->events = EPOLLIN;
	if (loop_add(ls->l, &sc->lw, sc->events))
		goto err_conn;
	DL_APPEND(ls->conns, sc);
	return;

err_conn:
	store_conn_close(sc->c);
err_free:
	free(sc);
err_close:
	close(fd);
	log_ratelimited(&accept_rl, LOG_WARN, "store: cannot take a connection on %s", ls->path);
}

int store_listen(struct store *s, struct loop *l, const char *path, domid_t domid, mode_t mode)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct store_listener *ls;
	int fd, r;

	/* Room for the ".new" the socket is bound under until it is ready. */
	if (!s || !l || !path || strlen(path) + 4 >= sizeof(addr.sun_path))
		return -EINVAL;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s.new", path);
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	ls->path = strdup(path);
	if (!ls->path) {
		r = -ENOMEM;
		goto err_free;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		goto err_free;
	}
	/*
	 * Bind under a temporary name, set the mode, listen, then rename over
	 * the real path (replacing a stale socket of an earlier run): the path
	 * never exists with a wider mode than asked for, which matters for
	 * domain 0's socket, and never refuses a connect.
	 */
	unlink(addr.sun_path);
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(addr.sun_path, mode) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    rename(addr.sun_path, path) < 0) {
		r = -errno;
		unlink(addr.sun_path);
		goto err_close;
	}
	ls->s = s;
	ls->l = l;
	ls->domid = domid;
	ls->lw.fd = fd;
	ls->lw.cb = listener_cb;
	ls->lw.data = ls;
	r = loop_add(l, &ls->lw, EPOLLIN);
	if (r)
		goto err_unlink;
	DL_APPEND(s->listeners, ls);
	return 0;

err_unlink:
	unlink(path);
err_close:
	close(fd);
err_free:
	free(ls->path);
	free(ls);
	return r;
}

static void listener_free(struct store *s, struct store_listener *ls)
{
	struct sconn *sc, *tmp;

	DL_FOREACH_SAFE(ls->conns, sc, tmp)
	{
		DL_DELETE(ls->conns, sc);
		sc->ls = NULL;
		sconn_close(sc);
	}
	DL_DELETE(s->listeners, ls);
	loop_del(ls->l, &ls->lw);
	close(ls->lw.fd);
	unlink(ls->path);
	free(ls->path);
	free(ls);
}

int store_unlisten(struct store *s, const char *path)
{
	struct store_listener *ls;

	DL_FOREACH(s->listeners, ls)
	{
		if (strcmp(ls->path, path) == 0) {
			listener_free(s, ls);
			return 0;
		}
	}
	return -ENOENT;
}

/**
 * store_server_destroy_all() - close every listener and socket connection
 * @s: the store being destroyed
 */
void store_server_destroy_all(struct store *s)
{
	while (s->listeners)
		listener_free(s, s->listeners);
}
