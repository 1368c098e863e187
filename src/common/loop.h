/* SPDX-License-Identifier: MIT */
/* loop.h - epoll event loop for pvnetd's control-plane thread */
#ifndef PVNET_COMMON_LOOP_H
#define PVNET_COMMON_LOOP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Theory of Operation
 *
 * One loop serves one thread: the control plane (store sockets, control
 * socket, signals).  Data-path workers never use it; they own their own
 * waits.  A caller embeds a struct loop_watch in the object the fd belongs
 * to; the loop calls @cb with the epoll events that fired.  A callback may
 * remove any watch, its own included, and free the object holding it: the
 * loop forgets pending events of a removed watch for the rest of the batch.
 */

struct loop;
struct loop_watch;

typedef void (*loop_cb)(struct loop_watch *w, uint32_t events);

/**
 * struct loop_watch - one fd watched by a loop
 * @fd: the file descriptor
 * @cb: called with the EPOLL* events that fired
 * @data: free for the owner
 */
struct loop_watch {
	int fd;
	loop_cb cb;
	void *data;
};

/**
 * loop_create() - make an empty loop
 *
 * Return: the loop, or NULL with errno set
 */
struct loop *loop_create(void);

/**
 * loop_destroy() - free a loop; watches still added are simply forgotten
 * @l: the loop, or NULL
 */
void loop_destroy(struct loop *l);

/**
 * loop_add() - start watching @w->fd for @events (EPOLLIN, EPOLLOUT, ...)
 * @l: the loop
 * @w: the watch, owned by the caller, which must stay valid until loop_del()
 * @events: epoll event mask
 *
 * Return: 0 or -errno
 */
int loop_add(struct loop *l, struct loop_watch *w, uint32_t events);

/**
 * loop_mod() - change the events watched for @w
 * @l: the loop
 * @w: a watch added before
 * @events: new epoll event mask
 *
 * Return: 0 or -errno
 */
int loop_mod(struct loop *l, struct loop_watch *w, uint32_t events);

/**
 * loop_del() - stop watching @w; safe from inside any callback
 * @l: the loop
 * @w: a watch added before
 */
void loop_del(struct loop *l, struct loop_watch *w);

/**
 * loop_run_once() - wait up to @timeout_ms and dispatch what fired
 * @l: the loop
 * @timeout_ms: as for epoll_wait(); -1 waits for ever
 *
 * Return: number of events dispatched, or -errno (never -EINTR)
 */
int loop_run_once(struct loop *l, int timeout_ms);

/**
 * loop_run() - dispatch until loop_stop() is called
 * @l: the loop
 *
 * Return: 0, or -errno if epoll failed
 */
int loop_run(struct loop *l);

/**
 * loop_accept() - accept4() for a listener a loop watches
 * @lfd: the listening socket
 * @flags: accept4() flags
 *
 * Out of file descriptors (EMFILE, ENFILE), a listener stays readable and
 * a level-triggered loop would call it back at once, for ever.  So the
 * connection is taken with a descriptor kept spare for this and closed:
 * the client sees its connection refused, the loop goes quiet.  One spare
 * per process, made on first use; call it from one thread.
 *
 * Return: the connected fd, or -errno (-EMFILE: a connection was shed)
 */
int loop_accept(int lfd, int flags);

/**
 * loop_stop() - make loop_run() return after the current batch
 * @l: the loop
 */
void loop_stop(struct loop *l);

#endif /* PVNET_COMMON_LOOP_H */
