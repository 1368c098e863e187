/* SPDX-License-Identifier: MIT */
/* xs.h - libpvnet's minimal xenstore client for the domain's own store socket */
#ifndef PVNET_FRONT_XS_H
#define PVNET_FRONT_XS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A blocking-with-deadline client of the xenstore wire protocol
 * (xen/io/xs_wire.h) over a UNIX stream socket.  One request is in flight
 * at a time; watch events that arrive meanwhile are queued by token.  Every
 * call waits at most the timeout given to front_xs_open().  Not thread safe.
 */

struct front_xs;

/* Transaction id meaning "no transaction" (XBT_NULL in libxenstore). */
#define FRONT_XS_NO_TXN 0u

/* Longest watch token we register: ours are short fixed strings. */
#define FRONT_XS_TOKEN_MAX 32

int front_xs_open(const char *sock_path, int timeout_ms, struct front_xs **out);
void front_xs_close(struct front_xs *xs);
int front_xs_fd(const struct front_xs *xs);

int front_xs_read(struct front_xs *xs, uint32_t txn, const char *path, char *buf, size_t buflen);
int front_xs_read_uint(struct front_xs *xs, uint32_t txn, const char *path, unsigned long dflt,
		       unsigned long max, unsigned long *val);
int front_xs_write(struct front_xs *xs, uint32_t txn, const char *path, const char *value);
int front_xs_printf(struct front_xs *xs, uint32_t txn, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int front_xs_mkdir(struct front_xs *xs, uint32_t txn, const char *path);
int front_xs_rm(struct front_xs *xs, uint32_t txn, const char *path);
int front_xs_directory(struct front_xs *xs, uint32_t txn, const char *path, char *buf,
		       size_t buflen, unsigned int *count);
int front_xs_watch(struct front_xs *xs, const char *path, const char *token);
int front_xs_unwatch(struct front_xs *xs, const char *path, const char *token);
int front_xs_txn_start(struct front_xs *xs, uint32_t *txn);
int front_xs_txn_end(struct front_xs *xs, uint32_t txn, bool commit);
int front_xs_wait_event(struct front_xs *xs, const char *token, int timeout_ms);
int front_xs_poll_events(struct front_xs *xs);
bool front_xs_take_event(struct front_xs *xs, const char *token);

#endif /* PVNET_FRONT_XS_H */
