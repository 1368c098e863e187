// SPDX-License-Identifier: MIT
/* tree.c - the node database: paths, permissions, records, and the operations that change them */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/internal.h"

/*
 * Theory of Operation
 *
 * Records are immutable once in a table: a change builds a new record
 * (node_dup() + edit) and puts it in place of the old one, either into the
 * committed tree (store_tree_commit_put(), which assigns the generation and
 * keeps the per-owner node counts) or into a transaction's overlay.  That
 * makes the transaction overlay trivially correct and keeps every record a
 * caller holds valid until the next put of the same path.
 *
 * The operations follow xenstored (tools/xenstored/core.c): the node must
 * grant the needed permission; when it is missing or denied, the error is
 * ENOENT only if the nearest existing ancestor grants that permission too,
 * else EACCES, so a guest cannot probe what it may not see.  A new node
 * inherits its parent's permission list, and a guest becomes the owner of
 * what it creates; missing parents are created the same way.
 *
 * An operation completes or changes nothing.  Creating first reserves the
 * transaction room for every path it will record (quota_check()); RM first
 * looks up, and so records, every path of the subtree and the parent, and
 * builds the parent's new child list (delete_tree()); only then do they
 * put, and puts of recorded paths cannot fail.  So a transaction never
 * holds half an operation, and the tree a commit applies is whole: every
 * child a record lists exists.  Should an operation still fail after a put
 * (a bug), ops.c marks its transaction failed, and it can only be aborted.
 */

/* Write the parent of absolute path @name (not "/") into @out, which is large enough (may be @name). */
static void path_parent(const char *name, char *out)
{
	const char *slash = strrchr(name, '/');
	size_t len = (size_t)(slash - name);

	if (len == 0)
		len = 1; /* parent of "/x" is "/" */
	memmove(out, name, len);
	out[len] = '\0';
}

static const char *path_base(const char *name)
{
	return strrchr(name, '/') + 1;
}

void store_node_free(struct store_node *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->data);
	free(n->children);
	free(n->perms);
	free(n);
}

/* A fresh record named @name, copying @src's contents when @src is not NULL. */
static struct store_node *node_dup(const struct store_node *src, const char *name)
{
	struct store_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strdup(name);
	if (!n->name)
		goto err;
	if (!src)
		return n;
	if (src->datalen) {
		n->data = malloc(src->datalen);
		if (!n->data)
			goto err;
		memcpy(n->data, src->data, src->datalen);
		n->datalen = src->datalen;
	}
	if (src->childlen) {
		n->children = malloc(src->childlen);
		if (!n->children)
			goto err;
		memcpy(n->children, src->children, src->childlen);
		n->childlen = src->childlen;
	}
	n->perms = malloc(src->nperms * sizeof(*n->perms));
	if (!n->perms)
		goto err;
	memcpy(n->perms, src->perms, src->nperms * sizeof(*n->perms));
	n->nperms = src->nperms;
	return n;
err:
	store_node_free(n);
	return NULL;
}

static void owner_adjust(struct store *s, domid_t owner, int delta)
{
	struct store_domain *d = store_domain_get(s, owner);

	if (d)
		d->nodes = (unsigned int)((int)d->nodes + delta);
}

/**
 * store_tree_commit_put() - replace the committed record @name by @n
 * @s: the store
 * @name: absolute path
 * @n: new record (ownership passes to the tree), or NULL to delete
 */
void store_tree_commit_put(struct store *s, const char *name, struct store_node *n)
{
	struct store_node *old;

	HASH_FIND_STR(s->nodes, name, old);
	if (old) {
		HASH_DEL(s->nodes, old);
		owner_adjust(s, old->perms[0].id, -1);
		store_node_free(old);
	}
	if (n) {
		n->gen = ++s->gen;
		owner_adjust(s, n->perms[0].id, 1);
		HASH_ADD_KEYPTR(hh, s->nodes, n->name, strlen(n->name), n);
	}
}

/**
 * store_tree_find() - the record @name as seen inside @t (or committed, if @t is NULL)
 * @s: the store
 * @t: transaction or NULL
 * @name: absolute path
 * @out: set to the record, valid until the next change of @name
 *
 * Return: 0, -ENOENT, or -ENOSPC/-ENOMEM when @t cannot record the access
 */
int store_tree_find(struct store *s, struct store_txn *t, const char *name,
		    const struct store_node **out)
{
	struct store_node *committed;

	HASH_FIND_STR(s->nodes, name, committed);
	if (t)
		return store_txn_find(s, t, name, committed, out);
	*out = committed;
	return committed ? 0 : -ENOENT;
}

static int tree_put(struct store *s, struct store_txn *t, const char *name, struct store_node *n)
{
	if (t)
		return store_txn_put(s, t, name, n);
	store_tree_commit_put(s, name, n);
	return 0;
}

/* xenstored's errno_from_parents(): hide ENOENT when the nearest ancestor is not accessible. */
static int errno_from_parents(struct store *s, const struct store_actor *a, const char *name,
			      int err, unsigned int need)
{
	char parent[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node = NULL;
	int r;

	if (err == -ENOMEM || err == -ENOSPC)
		return err;
	snprintf(parent, sizeof(parent), "%s", name);
	while (strcmp(parent, "/") != 0) {
		path_parent(parent, parent);
		r = store_tree_find(s, a->txn, parent, &node);
		if (r == 0)
			break;
		if (r != -ENOENT)
			return r;
	}
	if (!node)
		return -EACCES; /* no root: cannot happen, deny */
	if (store_perm_for(a->domid, node->perms, node->nperms) & need)
		return err;
	return -EACCES;
}

/* xenstored's get_node(): the record if @a has all of @need on it. */
static int tree_get(struct store *s, const struct store_actor *a, const char *name,
		    unsigned int need, const struct store_node **out)
{
	const struct store_node *node;
	int r = store_tree_find(s, a->txn, name, &node);

	if (r == 0) {
		if ((store_perm_for(a->domid, node->perms, node->nperms) & need) == need) {
			*out = node;
			return 0;
		}
		r = -EACCES;
	}
	return errno_from_parents(s, a, name, r, need);
}

/* Count the ancestors of @name (itself included) that are missing; @name is absolute. */
static int count_missing(struct store *s, struct store_txn *t, const char *name,
			 unsigned int *missing)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node;
	int r;

	*missing = 0;
	snprintf(p, sizeof(p), "%s", name);
	for (;;) {
		r = store_tree_find(s, t, p, &node);
		if (r == 0)
			return 0;
		if (r != -ENOENT)
			return r;
		(*missing)++;
		path_parent(p, p);
	}
}

static int quota_check(struct store *s, const struct store_actor *a, unsigned int more)
{
	struct store_domain *d;
	long have;

	if (a->domid == 0)
		return 0;
	d = store_domain_get(s, a->domid);
	if (!d)
		return -ENOMEM;
	have = (long)d->nodes + (a->txn ? store_txn_quota_delta(a->txn) : 0);
	if (have + (long)more > (long)s->cfg.nodes_per_domain)
		return -ENOSPC;
	if (a->txn)
		return store_txn_room(a->txn, 2 * more + 2);
	return 0;
}

/* xenstored's node-size quota: may @a write a record of this size?  0 or -ENOSPC. */
static int size_check(const struct store *s, const struct store_actor *a, size_t datalen,
		      size_t childlen, unsigned int nperms)
{
	if (a->domid == 0)
		return 0;
	if (datalen + childlen + nperms * sizeof(struct store_perm) > s->cfg.node_size_max)
		return -ENOSPC;
	return 0;
}

/*
 * The size checks of tree_create(), all before it creates anything, so
 * that a refused creation leaves no ancestor behind: the deepest existing
 * ancestor gains a child name, each missing node but the last holds the
 * next one's name, the last holds @len bytes; all inherit the ancestor's
 * permission list.  @missing of @name's levels are missing.
 */
static int create_size_check(struct store *s, const struct store_actor *a, const char *name,
			     unsigned int missing, size_t len)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *anc;
	const char *comp;
	unsigned int k;
	int r;

	if (a->domid == 0)
		return 0;
	snprintf(p, sizeof(p), "%s", name);
	for (k = 0; k < missing; k++)
		path_parent(p, p);
	r = store_tree_find(s, a->txn, p, &anc); /* recorded already (count_missing) */
	if (r)
		return r;
	/*
	 * The missing components c0..cm-1 start after the ancestor's path:
	 * the ancestor gains c0, and missing node ck-1 holds the name ck.
	 */
	comp = name + strlen(p) + (strcmp(p, "/") != 0);
	for (k = 0; k < missing && r == 0; k++) {
		const char *end = strchr(comp, '/');
		size_t clen = end ? (size_t)(end - comp) : strlen(comp);

		if (k == 0)
			r = size_check(s, a, anc->datalen, anc->childlen + clen + 1, anc->nperms);
		else
			r = size_check(s, a, 0, clen + 1, anc->nperms);
		comp = end ? end + 1 : comp + clen;
	}
	return r ? r : size_check(s, a, len, 0, anc->nperms);
}

/* Create @name (missing) under its parent, which must exist; the record is put in place. */
static int create_one(struct store *s, const struct store_actor *a, const char *name,
		      const void *data, size_t len)
{
	char pname[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *parent;
	struct store_node *np, *n;
	const char *base = path_base(name);
	size_t blen = strlen(base) + 1;
	char *children;
	int r;

	path_parent(name, pname);
	r = store_tree_find(s, a->txn, pname, &parent);
	if (r)
		return r;
	np = node_dup(parent, pname);
	n = node_dup(parent, name); /* inherits the parent's permissions */
	if (!np || !n)
		goto err_nomem;
	children = realloc(np->children, np->childlen + blen);
	if (!children)
		goto err_nomem;
	memcpy(children + np->childlen, base, blen);
	np->children = children;
	np->childlen += (uint32_t)blen;

	free(n->data);
	free(n->children);
	n->data = NULL;
	n->datalen = 0;
	n->children = NULL;
	n->childlen = 0;
	if (len) {
		n->data = malloc(len);
		if (!n->data)
			goto err_nomem;
		memcpy(n->data, data, len);
		n->datalen = (uint32_t)len;
	}
	if (a->domid != 0)
		n->perms[0].id = a->domid; /* guests own what they create */
	if (a->txn && n->perms[0].id == a->domid)
		store_txn_quota_add(a->txn, 1);
	r = tree_put(s, a->txn, name, n);
	if (r) {
		store_node_free(np);
		return r;
	}
	return tree_put(s, a->txn, pname, np);

err_nomem:
	store_node_free(np);
	store_node_free(n);
	return -ENOMEM;
}

/*
 * Create @name and its missing ancestors, top down; @name gets @data.  One
 * walk down the path (each level cut off in place while it is created):
 * a guest's path may be some 1000 levels deep, and cutting it back from
 * the end for every level cost time in the square of that, on the thread
 * that serves every store connection.
 */
static int tree_create(struct store *s, const struct store_actor *a, const char *name,
		       const void *data, size_t len)
{
	char p[XENSTORE_ABS_PATH_MAX + 1];
	unsigned int missing, k;
	size_t at;
	int r;

	r = count_missing(s, a->txn, name, &missing);
	if (r)
		return r;
	r = quota_check(s, a, missing);
	if (!r)
		r = create_size_check(s, a, name, missing, len);
	if (r)
		return r;
	if (!missing)
		return -EEXIST; /* callers create only what they found missing */
	snprintf(p, sizeof(p), "%s", name);
	/* @at: the '/' before the first missing component ("/" itself at worst) */
	at = strlen(p);
	for (k = 0; k < missing && at > 0; k++)
		while (p[--at] != '/')
			;
	for (;;) {
		char *slash = strchr(p + at + 1, '/');

		if (slash)
			*slash = '\0';
		r = slash ? create_one(s, a, p, NULL, 0) : create_one(s, a, p, data, len);
		if (r || !slash)
			return r;
		*slash = '/';
		at = (size_t)(slash - p);
	}
}

static void permsets_of(struct store_permset *sets, const struct store_perm *p, unsigned int n,
			const struct store_perm *old, unsigned int nold)
{
	sets[0].p = p;
	sets[0].n = n;
	sets[1].p = old;
	sets[1].n = nold;
}

int store_op_read(struct store *s, const struct store_actor *a, const char *path,
		  const struct store_node **node)
{
	return tree_get(s, a, path, STORE_PERM_READ, node);
}

int store_op_write(struct store *s, const struct store_actor *a, const char *path, const void *data,
		   size_t len)
{
	struct store_permset sets[STORE_PERMSETS];
	const struct store_node *node;
	struct store_node *n;
	int r;

	r = tree_get(s, a, path, STORE_PERM_WRITE, &node);
	if (r == -ENOENT) {
		r = tree_create(s, a, path, data, len);
	} else if (r == 0) {
		r = size_check(s, a, len, node->childlen, node->nperms);
		if (r)
			return r;
		n = node_dup(node, path);
		if (!n)
			return -ENOMEM;
		free(n->data);
		n->data = NULL;
		n->datalen = 0;
		if (len) {
			n->data = malloc(len);
			if (!n->data) {
				store_node_free(n);
				return -ENOMEM;
			}
			memcpy(n->data, data, len);
			n->datalen = (uint32_t)len;
		}
		r = tree_put(s, a->txn, path, n);
	}
	if (r)
		return r;
	r = store_tree_find(s, a->txn, path, &node);
	if (r)
		return r;
	permsets_of(sets, node->perms, node->nperms, NULL, 0);
	store_watch_fire(s, a->txn, path, false, sets);
	return 0;
}

int store_op_mkdir(struct store *s, const struct store_actor *a, const char *path)
{
	struct store_permset sets[STORE_PERMSETS];
	const struct store_node *node;
	int r;

	r = tree_get(s, a, path, STORE_PERM_WRITE, &node);
	if (r != -ENOENT)
		return r; /* exists already: fine, and nothing fires */
	r = tree_create(s, a, path, NULL, 0);
	if (r)
		return r;
	r = store_tree_find(s, a->txn, path, &node);
	if (r)
		return r;
	permsets_of(sets, node->perms, node->nperms, NULL, 0);
	store_watch_fire(s, a->txn, path, false, sets);
	return 0;
}

/* The paths of a subtree, each child before its parent: what one RM deletes. */
struct subtree {
	char **names;
	size_t len, cap;
};

static void subtree_free(struct subtree *st)
{
	for (size_t i = 0; i < st->len; i++)
		free(st->names[i]);
	free(st->names);
}

/*
 * Append the subtree of @node, named @name (which @st takes, whatever the
 * result), to @st, itself last, as @a's transaction sees it.  Each lookup
 * records its path in the transaction, so this is where an RM runs out of
 * room: before it has changed anything.
 */
static int subtree_collect(struct store *s, const struct store_actor *a, char *name,
			   const struct store_node *node, struct subtree *st)
{
	size_t off, nlen = strlen(name);
	int r;

	for (off = 0; off < node->childlen; off += strlen(node->children + off) + 1) {
		const char *base = node->children + off;
		const struct store_node *child;
		char *cname = malloc(nlen + strlen(base) + 2);

		r = -ENOMEM;
		if (!cname)
			goto err;
		sprintf(cname, "%s/%s", strcmp(name, "/") ? name : "", base);
		r = store_tree_find(s, a->txn, cname, &child);
		if (r) {
			free(cname);
			goto err;
		}
		r = subtree_collect(s, a, cname, child, st);
		if (r)
			goto err;
	}
	if (st->len == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 16;
		char **names = realloc(st->names, cap * sizeof(*names));

		r = -ENOMEM;
		if (!names)
			goto err;
		st->names = names;
		st->cap = cap;
	}
	st->names[st->len++] = name;
	return 0;
err:
	free(name);
	return r;
}

/* Delete the recorded path @name alone, firing an exact event first when @exact. */
static int delete_one(struct store *s, const struct store_actor *a, const char *name, bool exact)
{
	struct store_permset sets[STORE_PERMSETS];
	const struct store_node *n;
	int r = store_tree_find(s, a->txn, name, &n);

	if (r == -ENOENT)
		return 0; /* a name listed twice: gone already */
	if (r)
		return r;
	if (exact) {
		permsets_of(sets, n->perms, n->nperms, NULL, 0);
		store_watch_fire(s, a->txn, name, true, sets);
	}
	if (a->txn && n->perms[0].id == store_txn_domid(a->txn))
		store_txn_quota_add(a->txn, -1);
	return tree_put(s, a->txn, name, NULL);
}

/*
 * Delete @node (at @name, not "/") with its subtree and unlink it from its
 * parent: all of it or, on error, nothing.
 *
 * Everything that can fail comes first: collecting the subtree's paths
 * (each recorded in the transaction, or ENOSPC past its bound), looking up
 * the parent (recorded too) and building its new child list.  Then the
 * deletions cannot fail: inside a transaction every path is recorded, and
 * the committed tree takes any put.  Only the parent of @name needs a new
 * child list; every other parent goes too.  Events: @name's first, for
 * all watchers, then an exact one per descendant, children first, each
 * while its permissions can still be seen, as xenstored fires them.
 */
static int delete_tree(struct store *s, const struct store_actor *a, const char *name,
		       const struct store_node *node)
{
	struct store_permset sets[STORE_PERMSETS];
	char pname[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *parent;
	const char *base = path_base(name);
	size_t i, off, blen = strlen(base) + 1;
	struct subtree st = {0};
	struct store_node *np;
	char *top = strdup(name);
	int r;

	if (!top)
		return -ENOMEM;
	r = subtree_collect(s, a, top, node, &st);
	if (r)
		goto out;
	path_parent(name, pname);
	r = store_tree_find(s, a->txn, pname, &parent);
	if (r)
		goto out;
	np = node_dup(parent, pname);
	if (!np) {
		r = -ENOMEM;
		goto out;
	}
	for (off = 0; off < np->childlen; off += strlen(np->children + off) + 1) {
		if (strcmp(np->children + off, base) == 0) {
			memmove(np->children + off, np->children + off + blen,
				np->childlen - off - blen);
			np->childlen -= (uint32_t)blen;
			break;
		}
	}

	permsets_of(sets, node->perms, node->nperms, NULL, 0);
	store_watch_fire(s, a->txn, name, false, sets);
	for (i = 0; i < st.len && r == 0; i++)
		r = delete_one(s, a, st.names[i], i + 1 < st.len);
	if (r == 0)
		r = tree_put(s, a->txn, pname, np);
	else
		store_node_free(np);
out:
	subtree_free(&st);
	return r;
}

int store_op_rm(struct store *s, const struct store_actor *a, const char *path)
{
	char pname[XENSTORE_ABS_PATH_MAX + 1];
	const struct store_node *node;
	int r;

	r = tree_get(s, a, path, STORE_PERM_WRITE, &node);
	if (r == -ENOENT) {
		/* Did not exist: fine, if the parent exists (xenstored's do_rm). */
		if (strcmp(path, "/") == 0)
			return -ENOENT;
		path_parent(path, pname);
		r = store_tree_find(s, a->txn, pname, &node);
		return r == 0 ? 0 : (r == -ENOMEM ? r : -ENOENT);
	}
	if (r)
		return r;
	if (strcmp(path, "/") == 0)
		return -EINVAL;
	return delete_tree(s, a, path, node);
}

int store_op_set_perms(struct store *s, const struct store_actor *a, const char *path,
		       const struct store_perm *p, unsigned int n)
{
	struct store_permset sets[STORE_PERMSETS];
	const struct store_node *node = NULL; /* set when tree_get() succeeds */
	struct store_perm *old;
	struct store_node *nn;
	unsigned int nold;
	int r;

	if (n == 0)
		return -EINVAL;
	if (a->domid != 0 && n > s->cfg.perms_per_node)
		return -ENOSPC;
	r = tree_get(s, a, path, STORE_PERM_WRITE | STORE_PERM_OWNER, &node);
	if (r)
		return r;
	/* Guests may not give their nodes away. */
	if (a->domid != 0 && p[0].id != node->perms[0].id)
		return -EPERM;
	/* A longer list makes the node bigger: xenstored's write_node() checks every change. */
	r = size_check(s, a, node->datalen, node->childlen, n);
	if (r)
		return r;
	nn = node_dup(node, path);
	if (!nn)
		return -ENOMEM;
	old = nn->perms;
	nold = nn->nperms;
	nn->perms = malloc(n * sizeof(*p));
	if (!nn->perms) {
		nn->perms = old;
		store_node_free(nn);
		return -ENOMEM;
	}
	memcpy(nn->perms, p, n * sizeof(*p));
	store_perms_mark_absent(s, nn->perms, n);
	nn->nperms = n;
	if (a->txn) {
		domid_t me = store_txn_domid(a->txn);

		store_txn_quota_add(a->txn, (p[0].id == me) - (old[0].id == me));
	}
	r = tree_put(s, a->txn, path, nn);
	if (r == 0) {
		/* watchers that lose access must still hear of it (nn is stored: valid) */
		permsets_of(sets, nn->perms, n, old, nold);
		store_watch_fire(s, a->txn, path, false, sets);
	}
	free(old);
	return r;
}

/*
 * SET_PERMS on @introduceDomain / @releaseDomain: who may watch them.  For
 * the wire (ops.c) and the in-process API (store.c, as domain 0) alike.
 */
int store_op_set_perms_special(struct store *s, domid_t domid, const char *name,
			       const struct store_perm *p, unsigned int n)
{
	int idx = store_watch_special_index(name);
	struct store_perm *copy;

	if (idx < 0)
		return -ENOENT;
	if ((store_perm_for(domid, s->special_perms[idx], s->special_nperms[idx]) &
	     (STORE_PERM_WRITE | STORE_PERM_OWNER)) != (STORE_PERM_WRITE | STORE_PERM_OWNER))
		return -EACCES;
	/* Guests may not give it away, as they may not a node (tree.c). */
	if (domid != 0 && p[0].id != s->special_perms[idx][0].id)
		return -EPERM;
	copy = malloc(n * sizeof(*p));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, n * sizeof(*p));
	store_perms_mark_absent(s, copy, n);
	free(s->special_perms[idx]);
	s->special_perms[idx] = copy;
	s->special_nperms[idx] = n;
	return 0;
}

/*
 * GET_PERMS on @introduceDomain / @releaseDomain, as xenstored answers it:
 * to whoever may read the special node.  *@p stays valid until its list is
 * set again.
 */
int store_op_get_perms_special(const struct store *s, domid_t domid, const char *name,
			       const struct store_perm **p, unsigned int *n)
{
	int idx = store_watch_special_index(name);

	if (idx < 0)
		return -ENOENT;
	if (!(store_perm_for(domid, s->special_perms[idx], s->special_nperms[idx]) &
	      STORE_PERM_READ))
		return -EACCES;
	*p = s->special_perms[idx];
	*n = s->special_nperms[idx];
	return 0;
}

/* Drop the entries of @perms[1..] that name @from; returns how many are left. */
static uint32_t perms_drop(struct store_perm *perms, uint32_t n, domid_t from)
{
	uint32_t k = 1;

	for (uint32_t i = 1; i < n; i++)
		if (perms[i].id != from)
			perms[k++] = perms[i];
	return k;
}

/**
 * store_tree_revoke() - nothing of the tree stays granted to a released domain (XSA-322)
 * @s: the store
 * @from: the released domain
 *
 * Every node it owns goes to domain 0, and every entry naming it in another
 * node's permissions (and in those of @introduceDomain/@releaseDomain) is
 * removed: a later domain given the same domid inherits nothing.
 */
void store_tree_revoke(struct store *s, domid_t from)
{
	struct store_node *n, *tmp;

	HASH_ITER(hh, s->nodes, n, tmp)
	{
		uint32_t left = perms_drop(n->perms, n->nperms, from);
		bool changed = left != n->nperms;

		n->nperms = left;
		if (n->perms[0].id == from) {
			owner_adjust(s, from, -1);
			owner_adjust(s, 0, 1);
			n->perms[0].id = 0;
			changed = true;
		}
		if (changed)
			n->gen = ++s->gen; /* transactions that read it must retry */
	}
	for (unsigned int i = 0; i < 2; i++) {
		s->special_nperms[i] = perms_drop(s->special_perms[i], s->special_nperms[i], from);
		if (s->special_perms[i][0].id == from)
			s->special_perms[i][0].id = 0;
	}
}

static struct store_node *manual_node(const char *name, const char *child)
{
	struct store_node *n = node_dup(NULL, name);

	if (!n)
		return NULL;
	n->perms = calloc(1, sizeof(*n->perms)); /* "n0": dom0 only */
	if (!n->perms)
		goto err;
	n->nperms = 1;
	if (child) {
		n->children = strdup(child);
		if (!n->children)
			goto err;
		n->childlen = (uint32_t)strlen(child) + 1;
	}
	return n;
err:
	store_node_free(n);
	return NULL;
}

/**
 * store_tree_init() - create "/", "/local" and "/local/domain", owned by dom0, "n0"
 * @s: the store, with an empty tree
 *
 * Return: 0 or -ENOMEM
 */
int store_tree_init(struct store *s)
{
	static const char *const names[][2] = {
	    {"/", "local"}, {"/local", "domain"}, {"/local/domain", NULL}};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct store_node *n = manual_node(names[i][0], names[i][1]);

		if (!n)
			return -ENOMEM;
		store_tree_commit_put(s, n->name, n);
	}
	return 0;
}

void store_tree_destroy(struct store *s)
{
	struct store_node *n, *tmp;

	HASH_ITER(hh, s->nodes, n, tmp)
	{
		HASH_DEL(s->nodes, n);
		store_node_free(n);
	}
}
