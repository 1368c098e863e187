// SPDX-License-Identifier: MIT
/* watch.c - watches of connections and of in-process code, and the firing of their events */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utlist.h>

#include "common/log.h"
#include "store/internal.h"

/*
 * Theory of Operation
 *
 * All watches of the store are on one list, in the order they were added;
 * a watch belongs to a connection or (conn == NULL) to in-process code
 * acting as domain 0.  An operation that changes a path fires every watch
 * at or above it (or, for the descendants of a removed node, exactly on
 * it), as xenstored's fire_watches() does; inside a transaction the event
 * is queued on the transaction instead (txn.c) and fired at commit.
 *
 * Who is told: xenstored's watch_permitted() - the watcher must be able to
 * read the node (with its permissions before and after the change) or its
 * parent; special paths (@introduceDomain, @releaseDomain) go only to dom0
 * and to domains their SET_PERMS list lets read them.  The initial event of
 * a new watch goes out unconditionally, as in xenstored.
 *
 * Delivery: a connection's event is queued on its output at once (wire.c
 * drops it if the client is too far behind).  An in-process event is copied
 * to s->pending and delivered by store_leave() once the outermost store call
 * is done, so callbacks never run inside an operation; removing a watch
 * drops its undelivered events.
 */

struct store_watch {
	char *path; /* canonical: absolute or special */
	char *token;
	bool relative;		 /* events carry paths relative to the domain's home */
	struct store_conn *conn; /* NULL: in-process */
	store_watch_cb cb;
	void *ctx;
	struct store_watch *prev, *next;
};

struct store_event {
	struct store_watch *w;
	store_watch_cb cb;
	void *ctx;
	char *path;
	char *token;
	struct store_event *prev, *next;
};

static const char *const special_names[2] = {"@introduceDomain", "@releaseDomain"};

/**
 * store_watch_special_index() - which special node @name is
 * @name: a path
 *
 * Return: 0 for @introduceDomain, 1 for @releaseDomain, -1 otherwise
 */
int store_watch_special_index(const char *name)
{
	int i;

	for (i = 0; i < 2; i++)
		if (strcmp(name, special_names[i]) == 0)
			return i;
	return -1;
}

static bool perms_grant_read(domid_t domid, const struct store_perm *p, unsigned int n)
{
	return n && (store_perm_for(domid, p, n) & STORE_PERM_READ);
}

static bool watch_permitted(struct store *s, domid_t domid, const char *name,
			    const struct store_permset *sets)
{
	char parent[XENSTORE_ABS_PATH_MAX + 1];
	struct store_node *pn;
	const char *slash;
	unsigned int i;
	int idx;

	if (domid == 0)
		return true;
	if (name[0] == '@') {
		idx = store_watch_special_index(name);
		return idx >= 0 &&
		       perms_grant_read(domid, s->special_perms[idx], s->special_nperms[idx]);
	}
	for (i = 0; i < STORE_PERMSETS; i++)
		if (sets && perms_grant_read(domid, sets[i].p, sets[i].n))
			return true;
	slash = strrchr(name, '/');
	if (!slash || slash == name)
		snprintf(parent, sizeof(parent), "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - name), name);
	HASH_FIND_STR(s->nodes, parent, pn);
	return pn && perms_grant_read(domid, pn->perms, pn->nperms);
}

/* The path as the watcher sees it: relative watches get paths relative to the home. */
static const char *event_path(const struct store_watch *w, const char *name)
{
	char home[32];
	int n;

	if (!w->relative)
		return name;
	n = store_home_path(w->conn->domid, home, sizeof(home));
	if (n <= 0 || strncmp(name, home, (size_t)n) != 0)
		return name;
	name += n;
	if (*name == '/')
		name++;
	return name;
}

static void deliver(struct store *s, struct store_watch *w, const char *name)
{
	const char *path = event_path(w, name);
	struct store_event *ev;

	if (w->conn) {
		store_conn_queue(w->conn, XS_WATCH_EVENT, 0, 0, path, strlen(path) + 1, w->token,
				 strlen(w->token) + 1, true);
		return;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		goto err;
	ev->w = w;
	ev->cb = w->cb;
	ev->ctx = w->ctx;
	ev->path = strdup(path);
	ev->token = strdup(w->token);
	if (!ev->path || !ev->token)
		goto err;
	DL_APPEND(s->pending, ev);
	return;
err:
	if (ev) {
		free(ev->path);
		free(ev->token);
		free(ev);
	}
	warn("store: watch event %s for in-process watch lost: out of memory", path);
}

/**
 * store_watch_fire() - tell the watchers of @name that it changed
 * @s: the store
 * @t: the transaction the change happened in (queued until commit), or NULL
 * @name: the absolute or special path that changed
 * @exact: only watches on exactly @name (descendants of a removed node)
 * @sets: permission lists deciding who may hear of it
 */
void store_watch_fire(struct store *s, struct store_txn *t, const char *name, bool exact,
		      const struct store_permset *sets)
{
	struct store_watch *w;

	if (t) {
		store_txn_queue_event(t, name, exact, sets);
		return;
	}
	DL_FOREACH(s->watches, w)
	{
		bool match =
		    exact ? strcmp(name, w->path) == 0 : store_path_is_child(name, w->path);

		if (!match)
			continue;
		if (w->conn && w->conn->dead)
			continue;
		if (!watch_permitted(s, w->conn ? w->conn->domid : 0, name, sets))
			continue;
		deliver(s, w, name);
	}
}

/**
 * store_watch_fire_initial() - the event every new watch gets at once
 * @s: the store
 * @w: the watch just registered (and, for a connection, acknowledged)
 */
void store_watch_fire_initial(struct store *s, struct store_watch *w)
{
	deliver(s, w, w->path);
}

/**
 * store_watch_register() - add a watch
 * @s: the store
 * @c: the owning connection, or NULL for in-process code (domain 0)
 * @path: canonical path
 * @token: the client's token
 * @relative: the client gave a relative path
 * @cb: in-process callback (when @c is NULL)
 * @ctx: for @cb
 * @out: set to the new watch
 *
 * Return: 0, -EEXIST for a duplicate, -E2BIG past the guest's watch quota
 * (xenstored's answer), or -ENOMEM
 */
int store_watch_register(struct store *s, struct store_conn *c, const char *path, const char *token,
			 bool relative, store_watch_cb cb, void *ctx, struct store_watch **out)
{
	struct store_domain *d = NULL;
	struct store_watch *w;

	DL_FOREACH(s->watches, w)
	{
		if (w->conn == c && strcmp(w->path, path) == 0 && strcmp(w->token, token) == 0 &&
		    (c || (w->cb == cb && w->ctx == ctx)))
			return -EEXIST;
	}
	if (c) {
		d = store_domain_get(s, c->domid);
		if (!d)
			return -ENOMEM;
		if (c->domid != 0 && d->watches >= s->cfg.watches_per_domain)
			return -E2BIG;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	w->token = strdup(token);
	if (!w->path || !w->token) {
		free(w->path);
		free(w->token);
		free(w);
		return -ENOMEM;
	}
	w->relative = relative && c;
	w->conn = c;
	w->cb = cb;
	w->ctx = ctx;
	DL_APPEND(s->watches, w);
	if (d)
		d->watches++;
	*out = w;
	return 0;
}

static void watch_free(struct store *s, struct store_watch *w)
{
	struct store_event *ev, *tmp;

	DL_FOREACH_SAFE(s->pending, ev, tmp)
	{
		if (ev->w != w)
			continue;
		DL_DELETE(s->pending, ev);
		free(ev->path);
		free(ev->token);
		free(ev);
	}
	if (w->conn) {
		struct store_domain *d = store_domain_get(s, w->conn->domid);

		if (d && d->watches)
			d->watches--;
	}
	DL_DELETE(s->watches, w);
	free(w->path);
	free(w->token);
	free(w);
}

/**
 * store_watch_unregister() - remove one watch
 * @s: the store
 * @c: the owning connection, or NULL for in-process
 * @path: canonical path
 * @token: token
 * @cb: in-process callback (ignored for connections)
 * @ctx: for @cb
 *
 * Return: 0 or -ENOENT
 */
int store_watch_unregister(struct store *s, struct store_conn *c, const char *path,
			   const char *token, store_watch_cb cb, void *ctx)
{
	struct store_watch *w;

	DL_FOREACH(s->watches, w)
	{
		if (w->conn == c && strcmp(w->path, path) == 0 && strcmp(w->token, token) == 0 &&
		    (c || (w->cb == cb && w->ctx == ctx))) {
			watch_free(s, w);
			return 0;
		}
	}
	return -ENOENT;
}

/**
 * store_watch_drop_conn() - remove every watch of @c
 * @s: the store
 * @c: the connection
 */
void store_watch_drop_conn(struct store *s, struct store_conn *c)
{
	struct store_watch *w, *tmp;

	DL_FOREACH_SAFE(s->watches, w, tmp)
	{
		if (w->conn == c)
			watch_free(s, w);
	}
}

/**
 * store_watch_deliver() - run the callbacks of queued in-process events, oldest first
 * @s: the store
 *
 * A callback may add or remove watches and call any store function; events
 * those calls cause are appended and delivered by this same loop.
 */
void store_watch_deliver(struct store *s)
{
	struct store_event *ev;

	while ((ev = s->pending) != NULL) {
		DL_DELETE(s->pending, ev);
		ev->cb(ev->ctx, ev->path, ev->token);
		free(ev->path);
		free(ev->token);
		free(ev);
	}
}

/**
 * store_watch_destroy() - free every watch and undelivered event
 * @s: the store
 */
void store_watch_destroy(struct store *s)
{
	struct store_watch *w, *tmp;

	DL_FOREACH_SAFE(s->watches, w, tmp)
	{
		watch_free(s, w);
	}
}
