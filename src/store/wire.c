// SPDX-License-Identifier: MIT
/* wire.c - connections: framing of the xs_wire byte stream, and the bounded output queue */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "common/log.h"
#include "store/internal.h"

/*
 * Theory of Operation
 *
 * Input: a connection copies the 16-byte header into private memory, checks
 * its length (more than XENSTORE_PAYLOAD_MAX: the stream cannot be trusted
 * any more, so the connection is closed, as xenstored does), then copies
 * the payload into a private buffer with a NUL guard byte after it, and
 * hands the whole message to ops.c.  Bytes may arrive in any split.
 *
 * Output: replies and watch events go into one FIFO per connection and are
 * pushed to the send callback at once; what it does not take stays queued
 * until store_conn_flush().  The queue is bounded for clients that never
 * read: a watch event that would take it past @out_max is dropped and
 * counted (xenstored also drops events for clients far behind); replies are
 * never dropped - the socket server stops reading requests while half of
 * @out_max is queued, and a message-level client whose replies pass twice
 * @out_max is disconnected (-ENOBUFS).
 */

/* The rate limit of warnings about @c's domain (store_domain's @log). */
static struct log_ratelimit *conn_log(struct store_conn *c)
{
	static struct log_ratelimit nomem_rl = LOG_RATELIMIT_INIT;
	struct store_domain *d = store_domain_get(c->s, c->domid);

	/* Its record made at connect: only out of memory finds none. */
	return d ? &d->log : &nomem_rl;
}

/**
 * store_errno_name() - the string xenstored sends in XS_ERROR for @err
 * @err: errno value, either sign
 *
 * Return: the name; errors xs_wire.h does not list become "EINVAL", as in xenstored
 */
const char *store_errno_name(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(xsd_errors) / sizeof(xsd_errors[0]); i++)
		if (xsd_errors[i].errnum == err)
			return xsd_errors[i].errstring;
	return "EINVAL";
}

size_t store_conn_pending(const struct store_conn *c)
{
	return c->out_tail - c->out_head;
}

uint64_t store_conn_dropped(const struct store_conn *c)
{
	return c->dropped;
}

/**
 * store_conn_kill() - the connection is unusable: stop all processing and output
 * @c: the connection
 *
 * Safe from anywhere (also while its watches are being fired): it only marks
 * the connection; watches and transactions go when it is closed or released.
 */
void store_conn_kill(struct store_conn *c)
{
	c->dead = true;
	free(c->out);
	c->out = NULL;
	c->out_head = c->out_tail = c->out_cap = 0;
}

int store_conn_flush(struct store_conn *c)
{
	while (!c->dead && c->out_tail > c->out_head) {
		size_t len = c->out_tail - c->out_head;
		int r = c->send(c->send_ctx, c->out + c->out_head, len);

		if (r == 0 || (r > 0 && (size_t)r >= len)) {
			c->out_head = c->out_tail = 0;
		} else if (r > 0) {
			c->out_head += (size_t)r;
		} else if (r == -EAGAIN || r == -EWOULDBLOCK || r == -EINTR) {
			return -EAGAIN;
		} else {
			store_conn_kill(c);
		}
	}
	return c->dead ? -EPIPE : 0;
}

static int out_reserve(struct store_conn *c, size_t n)
{
	size_t need, cap;
	unsigned char *p;

	if (c->out_head && c->out_cap - c->out_tail < n) {
		memmove(c->out, c->out + c->out_head, c->out_tail - c->out_head);
		c->out_tail -= c->out_head;
		c->out_head = 0;
	}
	need = c->out_tail + n;
	if (need <= c->out_cap)
		return 0;
	cap = c->out_cap ? c->out_cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(c->out, cap);
	if (!p)
		return -ENOMEM;
	c->out = p;
	c->out_cap = cap;
	return 0;
}

/**
 * store_conn_queue() - queue one message (payload @a then @b) and try to send it
 * @c: the connection
 * @type: XS_* message type
 * @req_id: echoed request id (0 for events)
 * @tx_id: echoed transaction id (0 for events)
 * @a: first part of the payload
 * @alen: its length
 * @b: second part, or NULL
 * @blen: its length
 * @is_event: a watch event, which may be dropped when the client is behind
 *
 * Return: 0, -E2BIG (payload too large: dropped), -ENOBUFS (event dropped),
 * -EPIPE (dead) or -ENOMEM
 */
int store_conn_queue(struct store_conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
		     const void *a, size_t alen, const void *b, size_t blen, bool is_event)
{
	struct xsd_sockmsg hdr;
	size_t total = sizeof(hdr) + alen + blen;

	if (c->dead)
		return -EPIPE;
	if (alen + blen > XENSTORE_PAYLOAD_MAX) {
		c->dropped += is_event;
		return -E2BIG;
	}
	if (is_event && store_conn_pending(c) + total > c->s->cfg.out_max) {
		c->dropped++;
		log_ratelimited(
		    conn_log(c), LOG_WARN,
		    "store: domain %u is not reading: watch event dropped (%llu so far)", c->domid,
		    (unsigned long long)c->dropped);
		return -ENOBUFS;
	}
	if (out_reserve(c, total)) {
		c->dropped += is_event;
		return -ENOMEM;
	}
	hdr.type = type;
	hdr.req_id = req_id;
	hdr.tx_id = tx_id;
	hdr.len = (uint32_t)(alen + blen);
	memcpy(c->out + c->out_tail, &hdr, sizeof(hdr));
	if (alen)
		memcpy(c->out + c->out_tail + sizeof(hdr), a, alen);
	if (blen)
		memcpy(c->out + c->out_tail + sizeof(hdr) + alen, b, blen);
	c->out_tail += total;
	if (store_conn_flush(c) == -EAGAIN && c->blocked_hook)
		c->blocked_hook(c->close_ctx);
	return 0;
}

struct store_conn *store_conn_open(struct store *s, domid_t domid, store_send_fn send, void *ctx)
{
	struct store_domain *d;
	struct store_conn *c;

	if (!s || !send) {
		errno = EINVAL;
		return NULL;
	}
	d = store_domain_get(s, domid);
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	if (domid != 0 && d->conns >= s->cfg.conns_per_domain) {
		errno = EMFILE;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	d->conns++;
	c->s = s;
	c->domid = domid;
	c->send = send;
	c->send_ctx = ctx;
	DL_APPEND(s->conns, c);
	return c;
}

void store_conn_close(struct store_conn *c)
{
	struct store_domain *d;
	struct store *s;

	if (!c)
		return;
	s = c->s;
	d = store_domain_get(s, c->domid);
	if (d && d->conns)
		d->conns--;
	store_enter(s);
	store_watch_drop_conn(s, c);
	store_txn_abort_all(c);
	DL_DELETE(s->conns, c);
	free(c->out);
	free(c);
	store_leave(s);
}

/* Handle one complete message in c->hdr / c->body. */
static void conn_message(struct store_conn *c)
{
	struct store *s = c->s;

	c->body[c->hdr.len] = '\0'; /* guard: string scans stop inside the buffer */
	store_enter(s);
	store_ops_dispatch(c, &c->hdr, c->body);
	store_leave(s);
}

/**
 * store_conn_feed() - consume input, optionally stopping while output is backed up
 * @c: the connection
 * @buf: bytes
 * @len: count
 * @backpressure: stop after a message once half of @out_max is queued
 * @budget: messages that may still be answered, decremented per message;
 *	stop at 0 (NULL: no bound)
 * @used: set to the bytes consumed (all of them unless @backpressure or
 *	@budget stopped)
 *
 * Return: 0, -EPROTO, -ENOBUFS or -EPIPE (see store_conn_input())
 */
int store_conn_feed(struct store_conn *c, const void *buf, size_t len, bool backpressure,
		    unsigned int *budget, size_t *used)
{
	const unsigned char *p = buf;
	size_t off = 0, take;

	*used = 0;
	if (c->dead)
		return -EPIPE;
	while (off < len) {
		if (backpressure && store_conn_pending(c) >= c->s->cfg.out_max / 2)
			break;
		if (budget && *budget == 0)
			break;
		if (!c->in_body) {
			take = sizeof(c->hdr_raw) - c->hdr_used;
			if (take > len - off)
				take = len - off;
			memcpy(c->hdr_raw + c->hdr_used, p + off, take);
			c->hdr_used += take;
			off += take;
			if (c->hdr_used < sizeof(c->hdr_raw))
				break;
			memcpy(&c->hdr, c->hdr_raw, sizeof(c->hdr));
			if (c->hdr.len > XENSTORE_PAYLOAD_MAX) {
				log_ratelimited(conn_log(c), LOG_WARN,
						"store: domain %u sent a %u-byte message: closing",
						c->domid, c->hdr.len);
				store_conn_kill(c);
				*used = off;
				return -EPROTO;
			}
			c->in_body = true;
			c->body_used = 0;
		}
		take = c->hdr.len - c->body_used;
		if (take > len - off)
			take = len - off;
		memcpy(c->body + c->body_used, p + off, take);
		c->body_used += take;
		off += take;
		if (c->body_used < c->hdr.len)
			break;
		c->in_body = false;
		c->hdr_used = 0;
		if (budget)
			(*budget)--;
		conn_message(c);
		if (c->dead) {
			*used = off;
			return -EPIPE;
		}
		if (store_conn_pending(c) > 2 * c->s->cfg.out_max) {
			log_ratelimited(conn_log(c), LOG_WARN,
					"store: domain %u does not read its replies: closing",
					c->domid);
			store_conn_kill(c);
			*used = off;
			return -ENOBUFS;
		}
	}
	*used = off;
	return 0;
}

int store_conn_input(struct store_conn *c, const void *buf, size_t len)
{
	size_t used;

	return store_conn_feed(c, buf, len, false, NULL, &used);
}
