// SPDX-License-Identifier: MIT
/* ops.c - one handler per xs_wire request type: parse the payload, run the operation, reply */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/internal.h"

/*
 * Handlers see a request whose payload sits in private memory with a NUL
 * after it, so string scans cannot run off the end; they still count the
 * NULs inside the payload the way xenstored does (onearg(), get_strings()),
 * because a string that is only terminated by our guard byte was not sent
 * terminated.  A handler returns 0 after queuing its reply, or -errno,
 * which becomes an XS_ERROR reply.  Replies echo req_id and tx_id.
 */

struct req {
	const struct xsd_sockmsg *hdr;
	const char *body;
	size_t len;
	struct store_txn *txn;
	struct store_actor actor;
};

static int reply(struct store_conn *c, const struct req *r, const void *data, size_t len)
{
	if (len > XENSTORE_PAYLOAD_MAX)
		return -E2BIG;
	store_conn_queue(c, r->hdr->type, r->hdr->req_id, r->hdr->tx_id, data, len, NULL, 0, false);
	return 0;
}

static int ack(struct store_conn *c, const struct req *r)
{
	return reply(c, r, "OK", sizeof("OK"));
}

static void reply_error(struct store_conn *c, const struct xsd_sockmsg *hdr, int err)
{
	const char *name = store_errno_name(err);

	store_conn_queue(c, XS_ERROR, hdr->req_id, hdr->tx_id, name, strlen(name) + 1, NULL, 0,
			 false);
}

/* xenstored's onearg(): the payload is exactly one string, NUL at its very end. */
static const char *onearg(const struct req *r)
{
	if (r->len == 0 || memchr(r->body, '\0', r->len) != r->body + r->len - 1)
		return NULL;
	return r->body;
}

/* xenstored's get_strings(): the number of NUL-terminated strings in the payload. */
static unsigned int count_strings(const struct req *r)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < r->len; i++)
		n += r->body[i] == '\0';
	return n;
}

/* Canonical node path of @in for this connection; no special paths. */
static int node_path(const struct store_conn *c, const char *in, char *out)
{
	if (!in || in[0] == '@')
		return -EINVAL;
	return store_path_canon(c->domid, in, out, XENSTORE_ABS_PATH_MAX + 1);
}

/* The node the request's one path argument names, as the requester may read it. */
static int lookup(struct store_conn *c, struct req *r, const struct store_node **node)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e = node_path(c, onearg(r), path);

	if (e)
		return e;
	return store_op_read(c->s, &r->actor, path, node);
}

static int do_read(struct store_conn *c, struct req *r)
{
	const struct store_node *node;
	int e = lookup(c, r, &node);

	if (e)
		return e;
	return reply(c, r, node->data, node->datalen);
}

static int do_directory(struct store_conn *c, struct req *r)
{
	const struct store_node *node;
	int e = lookup(c, r, &node);

	if (e)
		return e;
	/* over a payload: E2BIG, and libxenstore goes on with DIRECTORY_PART */
	return reply(c, r, node->children, node->childlen);
}

/* A strict decimal offset: xenstored's atoi() would take garbage as 0. */
static int parse_offset(const char *s, uint32_t *out)
{
	size_t n = strlen(s);
	uint64_t v = 0;

	/* 10 digits hold any uint32_t; libxenstore sends at most 7 */
	if (n == 0 || n > 10 || strspn(s, "0123456789") != n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/*
 * XS_DIRECTORY_PART "<path>\0<offset>\0", for child lists longer than a
 * payload (libxenstore's xs_directory() falls back to it on E2BIG), as
 * xenstored answers it: "<generation>\0", then the whole names from byte
 * <offset> of the child list that fit in the payload, and an empty name
 * ("\0") once the list is complete; an offset at or past the end gets the
 * empty name alone.  An offset inside a name is not refused: a client
 * whose list changed between parts may send one, and the new generation
 * tells it to start again.  The generation is the record's (tree.c,
 * txn.c): it changes whenever the list does, inside a transaction too.
 * Permissions as XS_DIRECTORY.
 */
static int do_directory_part(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	char out[XENSTORE_PAYLOAD_MAX];
	const struct store_node *node;
	size_t glen, len = 0;
	uint32_t off;
	int e;

	if (count_strings(r) != 2 || r->body[r->len - 1] != '\0')
		return -EINVAL;
	e = parse_offset(r->body + strlen(r->body) + 1, &off);
	if (e)
		return e;
	e = node_path(c, r->body, path);
	if (e)
		return e;
	e = store_op_read(c->s, &r->actor, path, &node);
	if (e)
		return e;
	glen = (size_t)snprintf(out, sizeof(out), "%llu", (unsigned long long)node->gen) + 1;
	if (off < node->childlen) {
		const char *list = node->children + off;
		size_t left = node->childlen - off;
		/* one byte stays free for the empty name that ends the list */
		size_t room = sizeof(out) - glen - 1;

		while (len < left) {
			size_t n = strnlen(list + len, left - len) + 1;

			if (len + n > room)
				break;
			len += n;
		}
		/* a name is shorter than a path: the first always fits */
		if (len == 0)
			return -E2BIG;
		memcpy(out + glen, list, len);
		if (len < left)
			return reply(c, r, out, glen + len);
	}
	out[glen + len] = '\0';
	return reply(c, r, out, glen + len + 1);
}

static int do_get_perms(struct store_conn *c, struct req *r)
{
	char buf[XENSTORE_PAYLOAD_MAX];
	const struct store_perm *perms;
	const struct store_node *node;
	unsigned int n;
	int e;

	if (onearg(r) && onearg(r)[0] == '@') {
		e = store_op_get_perms_special(c->s, c->domid, onearg(r), &perms, &n);
	} else {
		e = lookup(c, r, &node);
		if (!e) {
			perms = node->perms;
			n = node->nperms;
		}
	}
	if (e)
		return e;
	e = store_perms_format(perms, n, buf, sizeof(buf));
	if (e < 0)
		return e;
	return reply(c, r, buf, (size_t)e);
}

static int do_write(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	size_t plen;
	int e;

	if (count_strings(r) < 1)
		return -EINVAL;
	e = node_path(c, r->body, path);
	if (e)
		return e;
	plen = strlen(r->body) + 1;
	e = store_op_write(c->s, &r->actor, path, r->body + plen, r->len - plen);
	return e ? e : ack(c, r);
}

static int do_mkdir(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e = node_path(c, onearg(r), path);

	if (e)
		return e;
	e = store_op_mkdir(c->s, &r->actor, path);
	return e ? e : ack(c, r);
}

static int do_rm(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e = node_path(c, onearg(r), path);

	if (e)
		return e;
	e = store_op_rm(c->s, &r->actor, path);
	return e ? e : ack(c, r);
}

static int do_set_perms(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	struct store_perm *p;
	unsigned int n;
	size_t plen;
	int e;

	if (count_strings(r) < 2)
		return -EINVAL;
	plen = strlen(r->body) + 1;
	if (c->domid != 0 && count_strings(r) - 1 > c->s->cfg.perms_per_node)
		return -ENOSPC;
	e = store_perms_parse(r->body + plen, r->len - plen, &p, &n);
	if (e)
		return e;
	if (r->body[0] == '@') {
		e = store_op_set_perms_special(c->s, c->domid, r->body, p, n);
	} else {
		e = node_path(c, r->body, path);
		if (!e)
			e = store_op_set_perms(c->s, &r->actor, path, p, n);
	}
	free(p);
	return e ? e : ack(c, r);
}

static int do_watch(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	struct store_watch *w;
	const char *token;
	bool relative;
	int e;

	if (count_strings(r) != 2)
		return -EINVAL;
	token = r->body + strlen(r->body) + 1;
	e = store_path_canon(c->domid, r->body, path, sizeof(path));
	if (e)
		return e;
	relative = r->body[0] != '/' && r->body[0] != '@';
	e = store_watch_register(c->s, c, path, token, relative, NULL, NULL, &w);
	if (e)
		return e;
	ack(c, r);
	/* We fire once up front: simplifies clients (xenstored's words). */
	store_watch_fire_initial(c->s, w);
	return 0;
}

static int do_unwatch(struct store_conn *c, struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	const char *token;
	int e;

	if (count_strings(r) != 2)
		return -EINVAL;
	token = r->body + strlen(r->body) + 1;
	/* a path that cannot be canonical matches no watch */
	if (store_path_canon(c->domid, r->body, path, sizeof(path)))
		return -ENOENT;
	e = store_watch_unregister(c->s, c, path, token, NULL, NULL);
	return e ? e : ack(c, r);
}

static int do_transaction_start(struct store_conn *c, struct req *r)
{
	char buf[16];
	uint32_t id;
	int e;

	if (r->txn)
		return -EBUSY; /* no nested transactions */
	e = store_txn_start(c, &id);
	if (e)
		return e;
	snprintf(buf, sizeof(buf), "%u", id);
	return reply(c, r, buf, strlen(buf) + 1);
}

static int do_transaction_end(struct store_conn *c, struct req *r)
{
	const char *arg = onearg(r);
	bool commit;
	int e;

	if (!arg || (strcmp(arg, "T") != 0 && strcmp(arg, "F") != 0))
		return -EINVAL;
	if (!r->txn)
		return -ENOENT;
	commit = arg[0] == 'T';
	e = store_txn_end(c, r->txn, commit);
	r->txn = NULL;
	r->actor.txn = NULL;
	return e ? e : ack(c, r);
}

/* A decimal domid, strictly: xenstored's atoi() would take garbage as 0. */
static int parse_domid(const char *s, domid_t *out)
{
	size_t n = s ? strlen(s) : 0;
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5 || strspn(s, "0123456789") != n)
		return -EINVAL;
	for (i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v >= DOMID_FIRST_RESERVED)
		return -EINVAL;
	*out = (domid_t)v;
	return 0;
}

static int do_get_domain_path(struct store_conn *c, struct req *r)
{
	char buf[32];
	domid_t domid;
	int e = parse_domid(onearg(r), &domid);

	if (e)
		return e;
	e = store_home_path(domid, buf, sizeof(buf));
	return reply(c, r, buf, (size_t)e + 1);
}

static int do_is_domain_introduced(struct store_conn *c, struct req *r)
{
	domid_t domid;
	int e = parse_domid(onearg(r), &domid);

	if (e)
		return e;
	/* dom0 is always there */
	return reply(c, r, domid == 0 || store_domain_is_introduced(c->s, domid) ? "T" : "F", 2);
}

static int do_reset_watches(struct store_conn *c, struct req *r)
{
	store_watch_drop_conn(c->s, c);
	store_txn_abort_all(c);
	r->txn = NULL;
	r->actor.txn = NULL;
	return ack(c, r);
}

/* Privileged operations pvnet does not implement (domains come through store.h). */
static int do_enosys(struct store_conn *c, struct req *r)
{
	return -ENOSYS;
}

#define F_NOTID	 (1u << 0) /* ignores the transaction id */
#define F_PRIV	 (1u << 1) /* domain 0 only: EACCES for guests */
#define F_CHANGE (1u << 2) /* changes nodes: refused in a spent transaction (txn.c) */

static const struct {
	int (*fn)(struct store_conn *c, struct req *r);
	unsigned int flags;
} handlers[XS_TYPE_COUNT] = {
    [XS_CONTROL] = {do_enosys, F_PRIV},
    [XS_DIRECTORY] = {do_directory, 0},
    [XS_READ] = {do_read, 0},
    [XS_GET_PERMS] = {do_get_perms, 0},
    [XS_WATCH] = {do_watch, F_NOTID},
    [XS_UNWATCH] = {do_unwatch, F_NOTID},
    [XS_TRANSACTION_START] = {do_transaction_start, 0},
    [XS_TRANSACTION_END] = {do_transaction_end, 0},
    [XS_INTRODUCE] = {do_enosys, F_PRIV},
    [XS_RELEASE] = {do_enosys, F_PRIV},
    [XS_GET_DOMAIN_PATH] = {do_get_domain_path, 0},
    [XS_WRITE] = {do_write, F_CHANGE},
    [XS_MKDIR] = {do_mkdir, F_CHANGE},
    [XS_RM] = {do_rm, F_CHANGE},
    [XS_SET_PERMS] = {do_set_perms, F_CHANGE},
    [XS_IS_DOMAIN_INTRODUCED] = {do_is_domain_introduced, F_PRIV},
    [XS_RESUME] = {do_enosys, F_PRIV},
    [XS_SET_TARGET] = {do_enosys, F_PRIV},
    [XS_RESET_WATCHES] = {do_reset_watches, 0},
    [XS_DIRECTORY_PART] = {do_directory_part, 0},
    /* WATCH_EVENT, ERROR and unknown types: ENOSYS */
};

/**
 * store_ops_dispatch() - answer one request
 * @c: the connection
 * @hdr: the request header (private copy)
 * @body: the payload (private copy, hdr->len bytes plus a NUL guard)
 */
void store_ops_dispatch(struct store_conn *c, const struct xsd_sockmsg *hdr, const char *body)
{
	struct req r = {.hdr = hdr, .body = body, .len = hdr->len};
	unsigned long changes;
	int e;

	if (hdr->type >= XS_TYPE_COUNT || !handlers[hdr->type].fn) {
		reply_error(c, hdr, ENOSYS);
		return;
	}
	if ((handlers[hdr->type].flags & F_PRIV) && c->domid != 0) {
		reply_error(c, hdr, EACCES);
		return;
	}
	if (!(handlers[hdr->type].flags & F_NOTID) && hdr->tx_id) {
		r.txn = store_txn_lookup(c, hdr->tx_id);
		if (!r.txn) {
			reply_error(c, hdr, ENOENT);
			return;
		}
	}
	if ((handlers[hdr->type].flags & F_CHANGE) && r.txn && store_txn_spent(r.txn)) {
		reply_error(c, hdr, ENOSPC);
		return;
	}
	r.actor.domid = c->domid;
	r.actor.txn = r.txn;
	changes = r.txn ? store_txn_changes(r.txn) : 0;
	e = handlers[hdr->type].fn(c, &r);
	if (!e)
		return;
	/* An error after a change leaves half an operation: never commit it (tree.c). */
	if (r.txn && store_txn_changes(r.txn) != changes)
		store_txn_fail(r.txn, e);
	reply_error(c, hdr, e);
}
