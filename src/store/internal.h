/* SPDX-License-Identifier: MIT */
/* internal.h - data structures shared by the store's modules; not for users of store.h */
#ifndef PVNET_STORE_INTERNAL_H
#define PVNET_STORE_INTERNAL_H

#include <errno.h> /* before xs_wire.h: it builds xsd_errors[] only when EINVAL is known */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uthash.h>
#include <xen/io/xs_wire.h>

#include "common/log.h"
#include "store/store.h"

/*
 * Theory of Operation
 *
 * The store is xenstored's design on one thread.  The node database
 * (tree.c) is a hash table of records keyed by absolute path; each record
 * holds the value, the permission list and the NUL-separated names of its
 * children, exactly as xenstored keeps them in its TDB.  Every change
 * gives the record a fresh generation number from one counter (a
 * transaction's copy gets one too, and another when it is committed), so
 * equal generations mean the same version of a record (XS_DIRECTORY_PART).
 *
 * A transaction (txn.c) is an overlay of records keyed by path: records it
 * changed (copies, or "deleted") and the generation it first saw of every
 * path it touched.  Reads inside a transaction see the overlay first, then
 * the committed tree.  Commit checks that every touched path still has the
 * generation first seen - otherwise EAGAIN, like xenstored - then applies the
 * changed records and fires the watch events queued while it was open.  Each
 * operation completes or changes nothing (tree.c), so what a commit applies
 * is a whole tree; one that failed half-way anyway makes the commit fail.
 *
 * Watches (watch.c) live on one list for the whole store, whoever owns them
 * (a connection or in-process code).  Firing appends a WATCH_EVENT to the
 * owning connection's output queue, or, for in-process watches, to a
 * pending list that is delivered when the outermost store call returns:
 * callbacks therefore never run inside an operation and may call back into
 * the store.  store_enter()/store_leave() bracket every entry point.
 *
 * Connections (wire.c) parse a byte stream into private buffers, answer
 * each request in order and queue output up to @out_max; a dead connection
 * (broken transport, or its domain released) keeps its memory until its
 * owner closes it, but processes nothing and holds no watch or transaction.
 */

/* One record of the node database, or a transaction's copy of one. */
struct store_node {
	char *name;    /* absolute path; hash key */
	uint8_t *data; /* value, @datalen bytes (NULL when empty) */
	uint32_t datalen;
	char *children;	   /* child names, each NUL-terminated */
	uint32_t childlen; /* bytes in @children */
	struct store_perm *perms;
	uint32_t nperms; /* >= 1; perms[0] is the owner */
	uint64_t gen;	 /* generation of the last change (see above) */
	UT_hash_handle hh;
};

/* Per-domain accounting, created on first use. */
struct store_domain {
	domid_t domid;
	bool introduced;
	unsigned int nodes;   /* nodes owned in the committed tree */
	unsigned int watches; /* watches held by its connections */
	unsigned int txns;    /* transactions open on its connections */
	size_t txn_bytes;     /* what they hold (txn.c, txn_bytes_per_domain) */
	unsigned int conns;   /* connections open */
	/*
	 * Warnings about what its connections send or fail to read: the
	 * domain's own budget (named "store: domain N"), so that one guest's
	 * flood hides no other guest's lines, and kept over reconnects.
	 */
	struct log_ratelimit log;
	UT_hash_handle hh;
};

/* Who performs an operation, and inside which transaction (or NULL). */
struct store_actor {
	domid_t domid;
	struct store_txn *txn;
};

/* Permission lists of which any one granting read lets a watcher see an event. */
struct store_permset {
	const struct store_perm *p;
	unsigned int n;
};

#define STORE_PERMSETS 2

struct store_watch;
struct store_event;

/* Connection: see wire.c. */
struct store_conn {
	struct store *s;
	domid_t domid;
	store_send_fn send;
	void *send_ctx;
	bool dead;

	/* input: header, then body, each in private memory */
	unsigned char hdr_raw[sizeof(struct xsd_sockmsg)];
	size_t hdr_used;
	struct xsd_sockmsg hdr;
	bool in_body;
	size_t body_used;
	char body[XENSTORE_PAYLOAD_MAX + 1]; /* +1: a NUL guard after the payload */

	/* output FIFO: bytes [out_head, out_tail) of @out are pending */
	unsigned char *out;
	size_t out_head, out_tail, out_cap;
	uint64_t dropped;

	struct store_txn *txns; /* open transactions (utlist) */

	/* for the socket server: called when the store closes this connection */
	void (*close_hook)(void *ctx);
	/*
	 * and when output it queued outside the connection's own request (a
	 * watch event another client caused) stays unsent: the server then
	 * watches the socket for room
	 */
	void (*blocked_hook)(void *ctx);
	void *close_ctx;

	struct store_conn *prev, *next; /* in s->conns (utlist) */
};

struct store {
	struct store_config cfg;
	struct store_node *nodes; /* committed tree (uthash by name) */
	uint64_t gen;		  /* last generation handed out */
	struct store_domain *domains;
	struct store_conn *conns;
	struct store_watch *watches;
	struct store_event *pending;	     /* in-process events to deliver */
	struct store_perm *special_perms[2]; /* of @introduceDomain, @releaseDomain */
	unsigned int special_nperms[2];
	uint32_t next_txid;
	int depth;	 /* nesting of store_enter() */
	bool delivering; /* store_leave() is running callbacks */
	struct store_listener *listeners;
};

/* store.c */
void store_enter(struct store *s);
void store_leave(struct store *s);
struct store_domain *store_domain_get(struct store *s, domid_t domid);
int store_home_path(domid_t domid, char *buf, size_t size);

/* tree.c: paths */
int store_path_canon(domid_t domid, const char *in, char *out, size_t size);
bool store_path_is_child(const char *child, const char *parent);

/* tree.c: permissions */
unsigned int store_perm_for(domid_t domid, const struct store_perm *p, unsigned int n);
int store_perms_parse(const char *strs, size_t len, struct store_perm **out, unsigned int *n);
int store_perms_format(const struct store_perm *p, unsigned int n, char *buf, size_t size);
#define STORE_PERM_OWNER 8u /* internal: may change the permission list */
/*
 * Internal, in a stored list: the entry names a domain that did not exist
 * when the list was set, and grants nothing (xenstored's XS_PERM_IGNORE).
 * Otherwise the next domain given that domid would inherit it (XSA-322);
 * entries of domains that existed then go when they are released
 * (store_tree_revoke()).
 */
#define STORE_PERM_IGNORE 16u
void store_perms_mark_absent(struct store *s, struct store_perm *p, unsigned int n);

/* tree.c: records */
int store_tree_find(struct store *s, struct store_txn *t, const char *name,
		    const struct store_node **out);
void store_node_free(struct store_node *n);
int store_tree_init(struct store *s);
void store_tree_destroy(struct store *s);
void store_tree_commit_put(struct store *s, const char *name, struct store_node *n);
void store_tree_revoke(struct store *s, domid_t from);

/* tree.c / ops.c: operations with xenstored's semantics; 0 or -errno */
int store_op_read(struct store *s, const struct store_actor *a, const char *path,
		  const struct store_node **node);
int store_op_write(struct store *s, const struct store_actor *a, const char *path, const void *data,
		   size_t len);
int store_op_mkdir(struct store *s, const struct store_actor *a, const char *path);
int store_op_rm(struct store *s, const struct store_actor *a, const char *path);
int store_op_set_perms_special(struct store *s, domid_t domid, const char *name,
			       const struct store_perm *p, unsigned int n);
int store_op_get_perms_special(const struct store *s, domid_t domid, const char *name,
			       const struct store_perm **p, unsigned int *n);
int store_op_set_perms(struct store *s, const struct store_actor *a, const char *path,
		       const struct store_perm *p, unsigned int n);

/* txn.c */
struct store_txn *store_txn_lookup(struct store_conn *c, uint32_t id);
int store_txn_start(struct store_conn *c, uint32_t *id);
int store_txn_end(struct store_conn *c, struct store_txn *t, bool commit);
void store_txn_abort_all(struct store_conn *c);
domid_t store_txn_domid(const struct store_txn *t);
int store_txn_find(struct store *s, struct store_txn *t, const char *name,
		   const struct store_node *committed, const struct store_node **out);
int store_txn_put(struct store *s, struct store_txn *t, const char *name, struct store_node *n);
int store_txn_room(const struct store_txn *t, unsigned int n);
bool store_txn_spent(const struct store_txn *t);
unsigned long store_txn_changes(const struct store_txn *t);
void store_txn_fail(struct store_txn *t, int err);
int store_txn_queue_event(struct store_txn *t, const char *name, bool exact,
			  const struct store_permset *sets);
int store_txn_quota_delta(const struct store_txn *t);
void store_txn_quota_add(struct store_txn *t, int delta);

/* watch.c */
int store_watch_register(struct store *s, struct store_conn *c, const char *path, const char *token,
			 bool relative, store_watch_cb cb, void *ctx, struct store_watch **out);
void store_watch_fire_initial(struct store *s, struct store_watch *w);
int store_watch_unregister(struct store *s, struct store_conn *c, const char *path,
			   const char *token, store_watch_cb cb, void *ctx);
void store_watch_drop_conn(struct store *s, struct store_conn *c);
void store_watch_fire(struct store *s, struct store_txn *t, const char *name, bool exact,
		      const struct store_permset *sets);
void store_watch_deliver(struct store *s);
void store_watch_destroy(struct store *s);
int store_watch_special_index(const char *name);

/* wire.c */
int store_conn_queue(struct store_conn *c, uint32_t type, uint32_t req_id, uint32_t tx_id,
		     const void *a, size_t alen, const void *b, size_t blen, bool is_event);
void store_conn_kill(struct store_conn *c);
int store_conn_feed(struct store_conn *c, const void *buf, size_t len, bool backpressure,
		    unsigned int *budget, size_t *used);
const char *store_errno_name(int err);

/* ops.c */
void store_ops_dispatch(struct store_conn *c, const struct xsd_sockmsg *hdr, const char *body);

/* server.c */
void store_server_destroy_all(struct store *s);

#endif /* PVNET_STORE_INTERNAL_H */
