/* SPDX-License-Identifier: MIT */
/* store.h - the xenstore-protocol server inside pvnetd: API for pvnetd, its toolstack and tests */
#ifndef PVNET_STORE_STORE_H
#define PVNET_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <xen/xen.h>

/*
 * The store speaks the xenstore wire protocol of <xen/io/xs_wire.h> to
 * clients that connect over a UNIX socket (store_listen()) or that hand it
 * bytes directly (store_conn_open()).  pvnetd's own code (toolstack,
 * netback) uses the in-process calls below, which act as domain 0 outside
 * any transaction.  Everything - sockets, callbacks, in-process calls - runs
 * on one thread, pvnetd's loop thread; nothing here is thread safe.
 *
 * What a guest's connection does wrong (an oversized message, replies or
 * events it does not read) is logged at most 10 lines per 5 s per domain,
 * over all its connections: one guest's flood hides no other's lines.
 */

struct loop;
struct store;
struct store_conn;

/**
 * struct store_config - per-domain quotas and buffer bounds
 * @nodes_per_domain: nodes a guest may own (xenstored: quota-nb-entry-per-domain)
 * @watches_per_domain: watches a guest may hold (xenstored: quota-nb-watch-per-domain)
 * @txns_per_domain: transactions a guest may have open (xenstored: quota-max-transaction)
 * @perms_per_node: entries a guest may put in one node's permission list
 *	(xenstored: quota-nb-perms-per-node)
 * @txn_nodes_max: distinct nodes one guest transaction may touch
 *	(xenstored: quota transaction-nodes).  A write that creates N nodes
 *	first asks for room for 2 * N + 2 more, counting paths it already
 *	touched again, so that it never fails half done: near the bound a
 *	creation is refused a few paths early
 * @txn_bytes_per_domain: bytes a guest's open transactions may hold
 *	together: the paths they touched, the records they changed and the
 *	watch events they queued.  Past it they may touch no new path and
 *	change nothing (ENOSPC) until one ends; xenstored bounds the same
 *	memory by its per-domain memory quota
 * @node_size_max: bytes of one node a guest may write: its value, the
 *	names of its children and its permission entries (4 bytes each here)
 *	together (xenstored: quota node-size; ENOSPC past it)
 * @out_max: bytes of replies and watch events queued for one connection
 *	that has stopped reading; beyond it watch events are dropped
 * @conns_per_domain: connections a guest may have open at once (a guest
 *	socket is its only way in; libxenstore needs one per xs_open())
 *
 * Domain 0 is exempt from every per-domain quota, as in xenstored.
 */
struct store_config {
	unsigned int nodes_per_domain;
	unsigned int watches_per_domain;
	unsigned int txns_per_domain;
	unsigned int perms_per_node;
	unsigned int txn_nodes_max;
	size_t txn_bytes_per_domain;
	size_t node_size_max;
	size_t out_max;
	unsigned int conns_per_domain;
};

/* Permission bits of one struct store_perm, as in xenstored ('n', 'r', 'w', 'b'). */
enum store_perm_bits {
	STORE_PERM_NONE = 0,
	STORE_PERM_READ = 1,
	STORE_PERM_WRITE = 2,
	STORE_PERM_BOTH = 3,
};

/**
 * struct store_perm - one entry of a node's permission list
 * @id: the domain; entry 0 names the owner
 * @perm: enum store_perm_bits; in entry 0, the access of every domain not listed
 */
struct store_perm {
	domid_t id;
	uint8_t perm;
};

/**
 * store_config_default() - fill @cfg with the quotas xenstored uses by default
 * @cfg: the config to fill
 *
 * 1000 nodes, 128 watches, 10 transactions, 5 permission entries per guest,
 * 1024 nodes per guest transaction, 2 MiB held by a guest's transactions,
 * 2048-byte nodes, 32 maximal messages (~128 KiB) of queued output per
 * connection, and 32 connections per guest.
 */
void store_config_default(struct store_config *cfg);

/**
 * store_create() - make a store holding "/", "/local" and "/local/domain"
 * @cfg: quotas, or NULL for store_config_default()
 *
 * Return: the store, or NULL with errno set
 */
struct store *store_create(const struct store_config *cfg);

/**
 * store_destroy() - close every listener and connection and free the store
 * @s: the store, or NULL
 *
 * Connections from store_conn_open() still open are freed too; their
 * pointers become invalid.
 */
void store_destroy(struct store *s);

/**
 * store_listen() - serve the protocol on a UNIX stream socket
 * @s: the store
 * @l: the loop that runs the socket (the loop thread)
 * @path: socket path; a stale socket there is unlinked first
 * @domid: the domain every connection on this socket acts as
 * @mode: permission bits for the socket file, e.g. 0600 for dom0's socket
 *
 * Return: 0 or -errno
 */
int store_listen(struct store *s, struct loop *l, const char *path, domid_t domid, mode_t mode);

/**
 * store_unlisten() - close a listener, its connections, and unlink @path
 * @s: the store
 * @path: the path given to store_listen()
 *
 * Return: 0, or -ENOENT when nothing listens on @path
 */
int store_unlisten(struct store *s, const char *path);

/**
 * store_domain_introduce() - a domain exists: give it a home and tell the watchers
 * @s: the store
 * @domid: the domain (not 0: dom0 always exists)
 *
 * Creates /local/domain/<domid> owned by @domid (readable by nobody else),
 * as the toolstack and xenstored do, and fires @introduceDomain.
 *
 * Return: 0, -EEXIST if already introduced, -EINVAL for domain 0, or -errno
 */
int store_domain_introduce(struct store *s, domid_t domid);

/**
 * store_domain_release() - a domain is gone: drop all it held
 * @s: the store
 * @domid: the domain
 *
 * Closes the domain's connections (socket connections are shut down;
 * store_conn_open() connections turn dead until their owner closes them),
 * drops their watches and transactions, fires @releaseDomain, removes
 * /local/domain/<domid> and hands any other node the domain owned to
 * domain 0 (as xenstored does since XSA-322).
 *
 * Return: 0, -ENOENT if not introduced, or -errno (-ENOMEM: the domain is
 * released all the same, but its home could not be removed and now
 * belongs to domain 0)
 */
int store_domain_release(struct store *s, domid_t domid);

/**
 * store_domain_is_introduced() - has @domid been introduced and not released?
 * @s: the store
 * @domid: the domain
 *
 * Return: true if introduced
 */
bool store_domain_is_introduced(struct store *s, domid_t domid);

/*
 * In-process access, as domain 0 outside any transaction.  Relative paths
 * resolve under /local/domain/0.  Each returns 0 or the -errno xenstored
 * would answer (-ENOENT, -EINVAL, -EACCES, -E2BIG, -ENOSPC ...).
 */

/**
 * store_read() - read a node's value
 * @s: the store
 * @path: the node
 * @val: set to a malloc()ed copy of the value with a NUL appended; free() it
 * @len: if not NULL, set to the value's length without that NUL
 *
 * Return: 0 or -errno
 */
int store_read(struct store *s, const char *path, char **val, size_t *len);

/**
 * store_write() - set a node's value, creating it and missing parents
 * @s: the store
 * @path: the node
 * @val: the value (any bytes)
 * @len: its length, less than XENSTORE_PAYLOAD_MAX minus the path
 *
 * Return: 0 or -errno
 */
int store_write(struct store *s, const char *path, const void *val, size_t len);

/**
 * store_mkdir() - create a node with an empty value if it does not exist
 * @s: the store
 * @path: the node
 *
 * Return: 0 or -errno
 */
int store_mkdir(struct store *s, const char *path);

/**
 * store_rm() - remove a node and everything below it
 * @s: the store
 * @path: the node; removing a missing node whose parent exists succeeds
 *
 * Return: 0 or -errno
 */
int store_rm(struct store *s, const char *path);

/**
 * store_directory() - list a node's children
 * @s: the store
 * @path: the node
 * @names: set to a malloc()ed NULL-terminated array of names, one block:
 *	a single free(*names) releases it all
 * @n: if not NULL, set to the number of names
 *
 * Return: 0 or -errno
 */
int store_directory(struct store *s, const char *path, char ***names, unsigned int *n);

/**
 * store_set_perms() - replace a node's permission list
 * @s: the store
 * @path: the node, or "@introduceDomain" / "@releaseDomain"
 * @perms: the list; entry 0 is the owner and the default for others
 * @n: entries in @perms, at least 1
 *
 * Return: 0 or -errno
 */
int store_set_perms(struct store *s, const char *path, const struct store_perm *perms,
		    unsigned int n);

/**
 * store_get_perms() - read a node's permission list
 * @s: the store
 * @path: the node
 * @perms: set to a malloc()ed copy of the list; free() it
 * @n: set to the number of entries
 *
 * Return: 0 or -errno
 */
int store_get_perms(struct store *s, const char *path, struct store_perm **perms, unsigned int *n);

/* Callback of an in-process watch: @path changed (or the watch was just added). */
typedef void (*store_watch_cb)(void *ctx, const char *path, const char *token);

/**
 * store_watch_add() - watch @path and everything below it, as domain 0
 * @s: the store
 * @path: absolute path, or a special path such as "@releaseDomain"
 * @token: string handed back with each event
 * @cb: called on the loop thread once right away (the initial event) and
 *	after each operation that changes @path or a node below it; it may
 *	call any store_* function, including store_watch_del() on itself
 * @ctx: handed to @cb
 *
 * Events are queued and delivered after the operation that caused them has
 * completed, never from inside it.
 *
 * Return: 0, -EEXIST for a duplicate (path, token, cb, ctx), or -errno
 */
int store_watch_add(struct store *s, const char *path, const char *token, store_watch_cb cb,
		    void *ctx);

/**
 * store_watch_del() - remove a watch added by store_watch_add()
 * @s: the store
 * @path: as given to store_watch_add()
 * @token: as given to store_watch_add()
 * @cb: as given to store_watch_add()
 * @ctx: as given to store_watch_add()
 *
 * Events of this watch not yet delivered are dropped.
 *
 * Return: 0, or -ENOENT if there is no such watch
 */
int store_watch_del(struct store *s, const char *path, const char *token, store_watch_cb cb,
		    void *ctx);

/*
 * Message-level connections: the socket server is built on these, and tests
 * and the fuzzer use them directly.
 */

/**
 * typedef store_send_fn - hand output bytes to the transport
 * @ctx: the ctx given to store_conn_open()
 * @buf: bytes to send
 * @len: how many, at least 1
 *
 * Return: 0 when all @len bytes were taken; a positive count smaller than
 * @len when only that many were taken; -EAGAIN when none was taken (the
 * rest stays queued until store_conn_flush()); any other -errno when the
 * transport is broken (the connection turns dead).
 */
typedef int (*store_send_fn)(void *ctx, const void *buf, size_t len);

/**
 * store_conn_open() - a new client connection acting as @domid
 * @s: the store
 * @domid: the domain the client is; 0 is privileged
 * @send: how to deliver output
 * @ctx: handed to @send
 *
 * Return: the connection, or NULL with errno set (EMFILE past the guest's
 * connection quota)
 */
struct store_conn *store_conn_open(struct store *s, domid_t domid, store_send_fn send, void *ctx);

/**
 * store_conn_input() - consume bytes the client sent
 * @c: the connection
 * @buf: any part of the byte stream: partial headers, several messages
 * @len: bytes in @buf
 *
 * Each complete request is answered through the send callback (reply, or
 * XS_ERROR with xenstored's errno name) before the next is parsed.
 *
 * Return: 0; -EPROTO when a header announces more than XENSTORE_PAYLOAD_MAX
 * bytes; -ENOBUFS when replies the client does not read pass twice
 * @out_max; -EPIPE when the connection is dead (transport broken, or its
 * domain released).  On any error the caller must close the connection.
 */
int store_conn_input(struct store_conn *c, const void *buf, size_t len);

/**
 * store_conn_flush() - retry sending queued output
 * @c: the connection
 *
 * Return: 0 when the queue is empty, -EAGAIN when bytes remain, -EPIPE when dead
 */
int store_conn_flush(struct store_conn *c);

/**
 * store_conn_pending() - bytes of output queued and not yet taken by send
 * @c: the connection
 *
 * Return: the byte count
 */
size_t store_conn_pending(const struct store_conn *c);

/**
 * store_conn_dropped() - watch events dropped because the client did not read
 * @c: the connection
 *
 * Return: the count since the connection opened
 */
uint64_t store_conn_dropped(const struct store_conn *c);

/**
 * store_conn_close() - drop a connection, its watches and its transactions
 * @c: the connection, or NULL
 *
 * Must not be called from inside a store callback while @c is processing input.
 */
void store_conn_close(struct store_conn *c);

#endif /* PVNET_STORE_STORE_H */
