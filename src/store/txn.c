// SPDX-License-Identifier: MIT
/* txn.c - optimistic transactions: a per-transaction overlay of records, checked at commit */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "common/log.h"
#include "store/internal.h"

/*
 * Theory of Operation
 *
 * As in xenstored since 4.9, a transaction copies nothing up front.  The
 * first time it touches a path (read, write or delete) it records the
 * committed generation of that path (0 when absent).  Changes go into its
 * overlay as whole records (NULL for deleted).  Reads see the overlay, else
 * the committed tree.  TRANSACTION_END "T" checks that every recorded path
 * still has the generation first seen - any committed change since to a
 * node the transaction read or wrote makes it fail with EAGAIN - and then
 * puts the changed records into the committed tree and fires the watch
 * events queued while it ran.  "F", closing the connection and releasing
 * the domain just free the overlay.
 *
 * A record put in the overlay gets a generation from the store's counter
 * too, though commit ignores it (it compares @seen_gen): XS_DIRECTORY_PART
 * shows a client the generation of the list it reads in parts, and a list
 * the transaction changed must then change its generation as well.
 *
 * An operation that fails after changing the overlay (none should: see
 * tree.c) marks the transaction failed: "T" then answers that error and
 * applies nothing, as xenstored refuses a failed transaction.
 *
 * A guest transaction may touch at most @txn_nodes_max paths, so reading
 * many missing paths cannot grow it without bound, and a guest's open
 * transactions may hold at most @txn_bytes_per_domain bytes together (the
 * paths recorded, the records changed, each bounded by @node_size_max, and
 * the watch events queued): past it they record no new path and take no
 * write, mkdir, rm or set-perms (ENOSPC, before anything changes), so what
 * ten open transactions hold stays near xenstored's memory quota, one
 * operation's worth above it at most.  A put is never refused (see
 * store_txn_put()); it only counts.  (Until 2026-12-06 only new paths were
 * refused, and rewriting paths already recorded with 2 KiB values let a
 * guest's ten transactions hold some 23 MiB.)
 *
 * The domain's node quota counts the nodes it created but has not
 * committed (@own_delta).  Each open transaction sees only its own
 * creations, so the quota is checked again at commit, against what the
 * committed tree holds then: a guest cannot commit its whole quota once per
 * open transaction (xenstored answers ENOSPC there too).
 */

struct store_tnode {
	char *name;
	uint64_t seen_gen; /* committed generation when first touched; 0: absent */
	bool modified;
	struct store_node *node; /* when @modified: the new record, NULL if deleted */
	UT_hash_handle hh;
};

struct store_tevent {
	char *path;
	bool exact;
	struct store_perm *perms; /* the permission sets, concatenated */
	unsigned int n[STORE_PERMSETS];
	struct store_tevent *next;
};

struct store_txn {
	uint32_t id;
	struct store_conn *conn;
	struct store_tnode *nodes;
	unsigned int nnodes;
	struct store_domain *dom; /* the conn's domain: lives as long as the store */
	size_t bytes;		  /* what the overlay holds, counted in dom->txn_bytes */
	int own_delta;		  /* nodes owned by the conn's domain created minus deleted */
	unsigned long changes;	  /* puts into the overlay so far */
	int failed;		  /* -errno of an operation that failed part-way, or 0 */
	struct store_tevent *events;
	struct store_txn *prev, *next;
};

domid_t store_txn_domid(const struct store_txn *t)
{
	return t->conn->domid;
}

int store_txn_quota_delta(const struct store_txn *t)
{
	return t->own_delta;
}

void store_txn_quota_add(struct store_txn *t, int delta)
{
	t->own_delta += delta;
}

/**
 * store_txn_changes() - how often @t's overlay has changed
 * @t: the transaction
 *
 * Return: a count that grows with every put; compare two to see a change
 */
unsigned long store_txn_changes(const struct store_txn *t)
{
	return t->changes;
}

/**
 * store_txn_fail() - an operation failed after changing @t: it may only be aborted
 * @t: the transaction
 * @err: the operation's -errno, which the commit will answer
 */
void store_txn_fail(struct store_txn *t, int err)
{
	if (!t->failed)
		t->failed = err;
	warn("store: domain %u: transaction %u left half-done (%s), it can only be aborted",
	     t->conn->domid, t->id, store_errno_name(-err));
}

/**
 * store_txn_spent() - do the open transactions of @t's guest hold their bytes' worth?
 * @t: the transaction
 *
 * Past @txn_bytes_per_domain a guest's transactions record no new path and
 * take no operation that changes something (store_ops_dispatch()), so what
 * they hold stays within the bound plus one operation's worth.
 *
 * Return: true past the bound (never for domain 0)
 */
bool store_txn_spent(const struct store_txn *t)
{
	return t->conn->domid != 0 && t->dom->txn_bytes > t->conn->s->cfg.txn_bytes_per_domain;
}

/**
 * store_txn_room() - may @t record @n more paths?
 * @t: the transaction
 * @n: paths about to be recorded
 *
 * Return: 0, or -ENOSPC past the per-transaction bound (guests only)
 */
int store_txn_room(const struct store_txn *t, unsigned int n)
{
	const struct store *s = t->conn->s;

	if (t->conn->domid == 0)
		return 0;
	if ((unsigned long)t->nnodes + n > s->cfg.txn_nodes_max)
		return -ENOSPC;
	return store_txn_spent(t) ? -ENOSPC : 0;
}

/* What a record held by a transaction costs: its struct and everything it points to. */
static size_t node_bytes(const struct store_node *n)
{
	return sizeof(*n) + strlen(n->name) + 1 + n->datalen + n->childlen +
	       n->nperms * sizeof(*n->perms);
}

static void charge(struct store_txn *t, size_t add, size_t sub)
{
	t->bytes = t->bytes + add - sub;
	t->dom->txn_bytes = t->dom->txn_bytes + add - sub;
}

static struct store_tnode *tnode_add(struct store_txn *t, const char *name,
				     const struct store_node *committed)
{
	struct store_tnode *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->name = strdup(name);
	if (!e->name) {
		free(e);
		return NULL;
	}
	e->seen_gen = committed ? committed->gen : 0;
	HASH_ADD_KEYPTR(hh, t->nodes, e->name, strlen(e->name), e);
	t->nnodes++;
	charge(t, sizeof(*e) + strlen(name) + 1, 0);
	return e;
}

/**
 * store_txn_find() - the record @name as @t sees it, recording the access
 * @s: the store
 * @t: the transaction
 * @name: absolute path
 * @committed: the committed record, or NULL
 * @out: set to the record seen
 *
 * Return: 0, -ENOENT, -ENOSPC (too many paths touched) or -ENOMEM
 */
int store_txn_find(struct store *s, struct store_txn *t, const char *name,
		   const struct store_node *committed, const struct store_node **out)
{
	struct store_tnode *e;

	(void)s;
	HASH_FIND_STR(t->nodes, name, e);
	if (!e) {
		if (store_txn_room(t, 1))
			return -ENOSPC;
		e = tnode_add(t, name, committed);
		if (!e)
			return -ENOMEM;
	}
	*out = e->modified ? e->node : committed;
	return *out ? 0 : -ENOENT;
}

/**
 * store_txn_put() - change @name inside @t
 * @s: the store
 * @t: the transaction
 * @name: absolute path
 * @n: new record (ownership passes), or NULL to delete
 *
 * Not bounded by store_txn_room(): callers record every path they put
 * before the first put (tree.c), so a put finds its path recorded and
 * cannot fail.  @n gets a fresh generation (see the Theory of Operation).
 *
 * Return: 0 or -ENOMEM (a path not recorded)
 */
int store_txn_put(struct store *s, struct store_txn *t, const char *name, struct store_node *n)
{
	struct store_tnode *e;

	HASH_FIND_STR(t->nodes, name, e);
	if (!e) {
		struct store_node *committed;

		HASH_FIND_STR(s->nodes, name, committed);
		e = tnode_add(t, name, committed);
		if (!e) {
			store_node_free(n);
			return -ENOMEM;
		}
	}
	if (e->modified && e->node) {
		charge(t, 0, node_bytes(e->node));
		store_node_free(e->node);
	}
	if (n) {
		n->gen = ++s->gen;
		charge(t, node_bytes(n), 0);
	}
	e->node = n;
	e->modified = true;
	t->changes++;
	return 0;
}

/* What a queued event costs: its struct, its path and its permission sets. */
static size_t event_bytes(const struct store_tevent *ev)
{
	size_t n = 0;

	for (unsigned int i = 0; i < STORE_PERMSETS; i++)
		n += ev->n[i];
	return sizeof(*ev) + strlen(ev->path) + 1 + (n ? n : 1) * sizeof(*ev->perms);
}

/**
 * store_txn_queue_event() - keep a watch event until @t commits
 * @t: the transaction
 * @name: the path that changed
 * @exact: fire only watches on exactly @name
 * @sets: permission lists that decide who may see the event (copied)
 *
 * Return: 0 or -ENOMEM (the event is lost and logged)
 */
int store_txn_queue_event(struct store_txn *t, const char *name, bool exact,
			  const struct store_permset *sets)
{
	struct store_tevent *ev, *prev = NULL;
	struct store_permset merged[STORE_PERMSETS];
	unsigned int i, total = 0, off = 0;

	/*
	 * One event per path, as xenstored keeps one entry per changed node:
	 * rewriting a key in a loop must not grow the transaction.  The merged
	 * event keeps the first permissions from before the change and the
	 * latest ones after it.
	 */
	LL_FOREACH(t->events, ev)
	{
		if (ev->exact == exact && strcmp(ev->path, name) == 0) {
			prev = ev;
			break;
		}
	}
	if (prev) {
		merged[0] = sets[0];
		merged[1].p = prev->perms + prev->n[0];
		merged[1].n = prev->n[1];
		if (!merged[1].n)
			merged[1] = sets[1];
		sets = merged;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		goto err;
	ev->path = strdup(name);
	for (i = 0; i < STORE_PERMSETS; i++)
		total += sets[i].n;
	ev->perms = calloc(total ? total : 1, sizeof(*ev->perms));
	if (!ev->path || !ev->perms)
		goto err;
	for (i = 0; i < STORE_PERMSETS; i++) {
		if (sets[i].n)
			memcpy(ev->perms + off, sets[i].p, sets[i].n * sizeof(*ev->perms));
		ev->n[i] = sets[i].n;
		off += sets[i].n;
	}
	ev->exact = exact;
	charge(t, event_bytes(ev), 0);
	if (prev) {
		/* same place in the order as the first event for this path */
		LL_REPLACE_ELEM(t->events, prev, ev);
		charge(t, 0, event_bytes(prev));
		free(prev->path);
		free(prev->perms);
		free(prev);
	} else {
		LL_APPEND(t->events, ev);
	}
	return 0;
err:
	if (ev) {
		free(ev->path);
		free(ev->perms);
		free(ev);
	}
	warn("store: transaction watch event for %s lost: out of memory", name);
	return -ENOMEM;
}

static void txn_free(struct store_txn *t)
{
	struct store_tnode *e, *tmp;
	struct store_tevent *ev, *etmp;

	HASH_ITER(hh, t->nodes, e, tmp)
	{
		HASH_DEL(t->nodes, e);
		if (e->modified)
			store_node_free(e->node);
		free(e->name);
		free(e);
	}
	LL_FOREACH_SAFE(t->events, ev, etmp)
	{
		free(ev->path);
		free(ev->perms);
		free(ev);
	}
	t->dom->txn_bytes -= t->bytes;
	free(t);
}

/**
 * store_txn_lookup() - the open transaction @id of @c
 * @c: the connection
 * @id: transaction id from a message header
 *
 * Return: the transaction or NULL
 */
struct store_txn *store_txn_lookup(struct store_conn *c, uint32_t id)
{
	struct store_txn *t;

	DL_FOREACH(c->txns, t)
	{
		if (t->id == id)
			return t;
	}
	return NULL;
}

/**
 * store_txn_start() - open a transaction on @c
 * @c: the connection
 * @id: set to its id (never 0)
 *
 * Return: 0, -ENOSPC past the guest's transaction quota, or -ENOMEM
 */
int store_txn_start(struct store_conn *c, uint32_t *id)
{
	struct store *s = c->s;
	struct store_domain *d = store_domain_get(s, c->domid);
	struct store_txn *t;

	if (!d)
		return -ENOMEM;
	if (c->domid != 0 && d->txns >= s->cfg.txns_per_domain)
		return -ENOSPC;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* ids are unique store-wide; skip 0 (no transaction) and ids in use on @c */
	do {
		t->id = ++s->next_txid;
	} while (t->id == 0 || store_txn_lookup(c, t->id));
	t->conn = c;
	t->dom = d;
	DL_APPEND(c->txns, t);
	d->txns++;
	*id = t->id;
	return 0;
}

static void txn_close(struct store_conn *c, struct store_txn *t)
{
	struct store_domain *d = store_domain_get(c->s, c->domid);

	DL_DELETE(c->txns, t);
	if (d && d->txns)
		d->txns--;
	txn_free(t);
}

/**
 * store_txn_end() - commit or abort @t, and free it either way
 * @c: the connection owning @t
 * @t: the transaction
 * @commit: true for "T", false for "F"
 *
 * Return: 0, -EAGAIN when a node it touched changed since, -ENOSPC when
 * what it creates would take its domain past the node quota, or the error
 * of an operation that left it half-done (store_txn_fail())
 */
int store_txn_end(struct store_conn *c, struct store_txn *t, bool commit)
{
	struct store *s = c->s;
	struct store_domain *d = store_domain_get(s, c->domid);
	struct store_tnode *e, *tmp;
	struct store_tevent *ev;
	struct store_node *cur;

	if (!commit)
		goto out;
	if (t->failed) {
		int err = t->failed;

		txn_close(c, t);
		return err;
	}
	if (c->domid != 0 && t->own_delta > 0 &&
	    (!d || (long)d->nodes + t->own_delta > (long)s->cfg.nodes_per_domain)) {
		txn_close(c, t);
		return -ENOSPC;
	}
	HASH_ITER(hh, t->nodes, e, tmp)
	{
		HASH_FIND_STR(s->nodes, e->name, cur);
		if ((cur ? cur->gen : 0) != e->seen_gen) {
			txn_close(c, t);
			return -EAGAIN;
		}
	}
	HASH_ITER(hh, t->nodes, e, tmp)
	{
		if (!e->modified)
			continue;
		/*
		 * A domain released while @t ran lost its entries in the
		 * committed tree (store_tree_revoke()), not in @t's records: a
		 * list @t set, or one a node @t created inherited, must not
		 * grant them to the next domain given that id (XSA-322).
		 */
		if (e->node)
			store_perms_mark_absent(s, e->node->perms, e->node->nperms);
		store_tree_commit_put(s, e->name, e->node);
		e->node = NULL;
		e->modified = false;
	}
	LL_FOREACH(t->events, ev)
	{
		struct store_permset sets[STORE_PERMSETS];
		unsigned int i, off = 0;

		for (i = 0; i < STORE_PERMSETS; i++) {
			sets[i].p = ev->perms + off;
			sets[i].n = ev->n[i];
			off += ev->n[i];
		}
		store_watch_fire(s, NULL, ev->path, ev->exact, sets);
	}
out:
	txn_close(c, t);
	return 0;
}

/**
 * store_txn_abort_all() - drop every transaction of @c
 * @c: the connection
 */
void store_txn_abort_all(struct store_conn *c)
{
	struct store_txn *t, *tmp;

	DL_FOREACH_SAFE(c->txns, t, tmp)
	{
		txn_close(c, t);
	}
}
