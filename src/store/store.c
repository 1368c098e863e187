// SPDX-License-Identifier: MIT
/* store.c - store life cycle, domains, and the in-process API used by pvnetd as domain 0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "common/log.h"
#include "store/internal.h"

/* xenstored's defaults (docs/misc/xenstore.txt, xenstored --help) */
#define DEFAULT_NODES_PER_DOMAIN   1000
#define DEFAULT_WATCHES_PER_DOMAIN 128
#define DEFAULT_TXNS_PER_DOMAIN	   10
#define DEFAULT_PERMS_PER_NODE	   5
/* xenstored's; a netfront setup touches a few dozen nodes */
#define DEFAULT_TXN_NODES_MAX 1024
/* of the order of xenstored's per-domain memory quota, which bounds the same */
#define DEFAULT_TXN_BYTES_PER_DOMAIN (2u << 20)
#define DEFAULT_NODE_SIZE_MAX	     2048
/* 32 full-size messages: a slow client may lag this far before losing events */
#define DEFAULT_OUT_MAX (32 * (XENSTORE_PAYLOAD_MAX + sizeof(struct xsd_sockmsg)))
/* a frontend needs one or two; each costs ~12 KiB of buffers */
#define DEFAULT_CONNS_PER_DOMAIN 32

void store_config_default(struct store_config *cfg)
{
	*cfg = (struct store_config){
	    .nodes_per_domain = DEFAULT_NODES_PER_DOMAIN,
	    .watches_per_domain = DEFAULT_WATCHES_PER_DOMAIN,
	    .txns_per_domain = DEFAULT_TXNS_PER_DOMAIN,
	    .perms_per_node = DEFAULT_PERMS_PER_NODE,
	    .txn_nodes_max = DEFAULT_TXN_NODES_MAX,
	    .txn_bytes_per_domain = DEFAULT_TXN_BYTES_PER_DOMAIN,
	    .node_size_max = DEFAULT_NODE_SIZE_MAX,
	    .out_max = DEFAULT_OUT_MAX,
	    .conns_per_domain = DEFAULT_CONNS_PER_DOMAIN,
	};
}

/**
 * store_enter() - start of a store entry point (see store_leave())
 * @s: the store
 */
void store_enter(struct store *s)
{
	s->depth++;
}

/**
 * store_leave() - end of an entry point: the outermost one delivers in-process events
 * @s: the store
 */
void store_leave(struct store *s)
{
	if (--s->depth > 0 || s->delivering)
		return;
	s->delivering = true;
	store_watch_deliver(s);
	s->delivering = false;
}

/**
 * store_domain_get() - the accounting record of @domid, created on first use
 * @s: the store
 * @domid: the domain
 *
 * Return: the record, or NULL when out of memory
 */
struct store_domain *store_domain_get(struct store *s, domid_t domid)
{
	struct store_domain *d;

	HASH_FIND(hh, s->domains, &domid, sizeof(domid), d);
	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->domid = domid;
	d->log = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	log_ratelimit_name(&d->log, "store: domain %u", domid);
	HASH_ADD(hh, s->domains, domid, sizeof(d->domid), d);
	return d;
}

/**
 * store_home_path() - "/local/domain/<domid>"
 * @domid: the domain
 * @buf: output
 * @size: bytes in @buf (32 is enough)
 *
 * Return: the length written
 */
int store_home_path(domid_t domid, char *buf, size_t size)
{
	return snprintf(buf, size, "/local/domain/%u", domid);
}

struct store *store_create(const struct store_config *cfg)
{
	struct store *s = calloc(1, sizeof(*s));
	int i;

	if (!s)
		return NULL;
	if (cfg)
		s->cfg = *cfg;
	else
		store_config_default(&s->cfg);
	for (i = 0; i < 2; i++) {
		/* special nodes start as "n0": dom0 only, as in xenstored */
		s->special_perms[i] = calloc(1, sizeof(struct store_perm));
		if (!s->special_perms[i])
			goto err;
		s->special_nperms[i] = 1;
	}
	if (!store_domain_get(s, 0) || store_tree_init(s))
		goto err;
	return s;
err:
	store_destroy(s);
	errno = ENOMEM;
	return NULL;
}

void store_destroy(struct store *s)
{
	struct store_domain *d, *dtmp;
	struct store_conn *c, *ctmp;
	int i;

	if (!s)
		return;
	s->depth++; /* nothing is delivered any more */
	store_server_destroy_all(s);
	DL_FOREACH_SAFE(s->conns, c, ctmp)
	{
		store_conn_close(c);
	}
	store_watch_destroy(s);
	store_tree_destroy(s);
	HASH_ITER(hh, s->domains, d, dtmp)
	{
		HASH_DEL(s->domains, d);
		free(d);
	}
	for (i = 0; i < 2; i++)
		free(s->special_perms[i]);
	free(s);
}

static const struct store_actor dom0 = {.domid = 0, .txn = NULL};

bool store_domain_is_introduced(struct store *s, domid_t domid)
{
	struct store_domain *d;

	HASH_FIND(hh, s->domains, &domid, sizeof(domid), d);
	return d && d->introduced;
}

/**
 * store_perms_mark_absent() - mark the entries of a list being set that name no domain
 * @s: the store
 * @p: the list (a private copy about to be stored)
 * @n: entries
 *
 * An entry for a domain that is not introduced now grants nothing, ever
 * (STORE_PERM_IGNORE), as xenstored ignores one naming a domain that did
 * not exist when it was set: domids are handed out in order, so a guest
 * could otherwise grant access to the next domain created.
 */
void store_perms_mark_absent(struct store *s, struct store_perm *p, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (p[i].id != 0 && !store_domain_is_introduced(s, p[i].id))
			p[i].perm |= STORE_PERM_IGNORE;
}

int store_domain_introduce(struct store *s, domid_t domid)
{
	struct store_perm perm = {.id = domid, .perm = STORE_PERM_NONE};
	struct store_domain *d;
	char home[32];
	int r;

	if (domid == 0 || domid >= DOMID_FIRST_RESERVED)
		return -EINVAL;
	d = store_domain_get(s, domid);
	if (!d)
		return -ENOMEM;
	if (d->introduced)
		return -EEXIST;
	store_home_path(domid, home, sizeof(home));
	store_enter(s);
	/*
	 * What xl does: mkdir the home, then hand it to the domain, private.
	 * The domain exists from here on, or its ownership would be ignored.
	 */
	d->introduced = true;
	r = store_op_mkdir(s, &dom0, home);
	if (!r)
		r = store_op_set_perms(s, &dom0, home, &perm, 1);
	if (!r)
		/* exact, as xenstored: a watch on "/" is not told of domains */
		store_watch_fire(s, NULL, "@introduceDomain", true, NULL);
	else
		d->introduced = false;
	store_leave(s);
	return r;
}

int store_domain_release(struct store *s, domid_t domid)
{
	struct store_domain *d = store_domain_get(s, domid);
	struct store_conn *c, *ctmp;
	bool was;
	char home[32];
	int r;

	if (!d)
		return -ENOMEM;
	if (domid == 0)
		return -EINVAL;
	was = d->introduced;
	store_enter(s);
	DL_FOREACH_SAFE(s->conns, c, ctmp)
	{
		if (c->domid != domid)
			continue;
		store_watch_drop_conn(s, c);
		store_txn_abort_all(c);
		store_conn_kill(c);
		if (c->close_hook)
			c->close_hook(c->close_ctx);
	}
	if (was)
		store_watch_fire(s, NULL, "@releaseDomain", true, NULL);
	/*
	 * An RM completes or changes nothing (tree.c), so the only failure
	 * left is memory: the home then stays, handed to dom0 by the revoke
	 * below like anything else the domain owned, and we say so.
	 */
	store_home_path(domid, home, sizeof(home));
	r = store_op_rm(s, &dom0, home);
	if (r)
		warn("store: domain %u released, but %s stays: %s", domid, home,
		     store_errno_name(r));
	store_tree_revoke(s, domid);
	d->introduced = false;
	store_leave(s);
	if (r)
		return r;
	return was ? 0 : -ENOENT;
}

static int canon0(const char *path, char *out, bool special)
{
	if (!path || (!special && path[0] == '@'))
		return -EINVAL;
	return store_path_canon(0, path, out, XENSTORE_ABS_PATH_MAX + 1);
}

int store_read(struct store *s, const char *path, char **val, size_t *len)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node;
	int r = canon0(path, p, false);

	if (r)
		return r;
	store_enter(s);
	r = store_op_read(s, &dom0, p, &node);
	if (!r) {
		*val = malloc(node->datalen + 1);
		if (*val) {
			if (node->datalen)
				memcpy(*val, node->data, node->datalen);
			(*val)[node->datalen] = '\0';
			if (len)
				*len = node->datalen;
		} else {
			r = -ENOMEM;
		}
	}
	store_leave(s);
	return r;
}

int store_write(struct store *s, const char *path, const void *val, size_t len)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	int r = canon0(path, p, false);

	if (r)
		return r;
	/* what fits in one WRITE message, so that READ can return it */
	if (len + strlen(path) + 1 > XENSTORE_PAYLOAD_MAX)
		return -E2BIG;
	store_enter(s);
	r = store_op_write(s, &dom0, p, val, len);
	store_leave(s);
	return r;
}

int store_mkdir(struct store *s, const char *path)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	int r = canon0(path, p, false);

	if (r)
		return r;
	store_enter(s);
	r = store_op_mkdir(s, &dom0, p);
	store_leave(s);
	return r;
}

int store_rm(struct store *s, const char *path)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	int r = canon0(path, p, false);

	if (r)
		return r;
	store_enter(s);
	r = store_op_rm(s, &dom0, p);
	store_leave(s);
	return r;
}

int store_directory(struct store *s, const char *path, char ***names, unsigned int *n)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node;
	unsigned int count = 0, i = 0;
	size_t off;
	char **arr;
	char *str;
	int r = canon0(path, p, false);

	if (r)
		return r;
	r = store_op_read(s, &dom0, p, &node);
	if (r)
		return r;
	for (off = 0; off < node->childlen; off++)
		count += node->children[off] == '\0';
	arr = malloc((count + 1) * sizeof(*arr) + node->childlen);
	if (!arr)
		return -ENOMEM;
	str = (char *)(arr + count + 1);
	if (node->childlen)
		memcpy(str, node->children, node->childlen);
	for (off = 0; off < node->childlen; off += strlen(str + off) + 1)
		arr[i++] = str + off;
	arr[i] = NULL;
	*names = arr;
	if (n)
		*n = count;
	return 0;
}

int store_set_perms(struct store *s, const char *path, const struct store_perm *perms,
		    unsigned int n)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	unsigned int i;
	int r;

	if (!perms || n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (perms[i].perm > STORE_PERM_BOTH || perms[i].id >= DOMID_FIRST_RESERVED)
			return -EINVAL;
	r = canon0(path, p, true);
	if (r)
		return r;
	if (p[0] == '@')
		return store_op_set_perms_special(s, 0, p, perms, n);
	store_enter(s);
	r = store_op_set_perms(s, &dom0, p, perms, n);
	store_leave(s);
	return r;
}

int store_get_perms(struct store *s, const char *path, struct store_perm **perms, unsigned int *n)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node;
	int r = canon0(path, p, false);

	if (r)
		return r;
	r = store_op_read(s, &dom0, p, &node);
	if (r)
		return r;
	*perms = malloc(node->nperms * sizeof(**perms));
	if (!*perms)
		return -ENOMEM;
	memcpy(*perms, node->perms, node->nperms * sizeof(**perms));
	for (unsigned int i = 0; i < node->nperms; i++)
		(*perms)[i].perm &= STORE_PERM_BOTH; /* as GET_PERMS shows it */
	*n = node->nperms;
	return 0;
}

int store_watch_add(struct store *s, const char *path, const char *token, store_watch_cb cb,
		    void *ctx)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	struct store_watch *w;
	int r;

	if (!token || !cb)
		return -EINVAL;
	r = canon0(path, p, true);
	if (r)
		return r;
	store_enter(s);
	r = store_watch_register(s, NULL, p, token, false, cb, ctx, &w);
	if (!r)
		store_watch_fire_initial(s, w);
	store_leave(s);
	return r;
}

int store_watch_del(struct store *s, const char *path, const char *token, store_watch_cb cb,
		    void *ctx)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];

	if (!token || canon0(path, p, true))
		return -ENOENT;
	return store_watch_unregister(s, NULL, p, token, cb, ctx);
}
