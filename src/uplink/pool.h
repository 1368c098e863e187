/* SPDX-License-Identifier: MIT */
/* pool.h - an uplink's receive side: its buffers, held until every port is done, and its reader thread */
#ifndef PVNET_UPLINK_POOL_H
#define PVNET_UPLINK_POOL_H

/*
 * Theory of Operation
 *
 * An uplink's reader thread reads frames from the outside (a TAP, a UDP
 * socket) into buffers of its own pool: the bytes are read once into memory
 * nobody else writes, then validated, then forwarded.  A buffer is busy
 * from the read until the last consumer puts the frame (sw_pkt_put(), on
 * any thread): uplink_buf_done() marks it free again with a release store,
 * and the reader finds free buffers by scanning from a cursor.
 *
 * Only when the whole pool (or inflight_max bytes) is in flight does the
 * reader sleep, on the pool's eventfd, which done() writes only while the
 * reader says it is starved (uplink_pool_starve(), a Dekker handshake on
 * seq_cst atomics): no lock and no system call per frame.
 *
 * Bounding the bytes in flight is the uplink's back-pressure: the switch
 * has none (a full vif queue drops), so waiting here leaves the excess in
 * the kernel's queue (the TAP's, the socket's), where TCP sees it as delay
 * rather than loss.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "switch/pkt.h"

struct uplink_pool;

/**
 * struct uplink_buf - one receive buffer
 * @pkt: the frame's descriptor while it is in flight
 * @pool: its pool
 * @busy: in flight (read, not yet done)
 * @slot: its bytes (the pool's slot_size)
 */
struct uplink_buf {
	struct sw_pkt pkt;
	struct uplink_pool *pool;
	atomic_bool busy;
	uint8_t *slot;
};

/**
 * struct uplink_pool - the buffers and the reader's handshake
 * @bufs: @n buffers
 * @n: how many
 * @slot_size: bytes per buffer
 * @inflight_max: bytes in flight before the reader waits
 * @inflight: bytes in flight now
 * @starved: the reader waits on @fd for a buffer
 * @releasing: done() calls between their first and last access to the pool
 * @fd: eventfd written by done() while @starved
 * @cursor: where the reader's next scan starts (reader only)
 * @slots: the memory of every slot
 */
struct uplink_pool {
	struct uplink_buf *bufs;
	unsigned int n;
	uint32_t slot_size;
	uint32_t inflight_max;
	_Atomic uint32_t inflight;
	atomic_bool starved;
	_Atomic uint32_t releasing;
	int fd;
	unsigned int cursor;
	uint8_t *slots;
};

/**
 * uplink_pool_init() - allocate @n buffers of @slot_size bytes
 * @p: the pool (zeroed by the caller or not: every field is set)
 * @n: buffers, at least 1
 * @slot_size: bytes each
 * @inflight_max: bytes in flight before uplink_pool_get() says no
 *
 * The slots are address space until frames touch them.
 *
 * Return: 0 or -ENOMEM / -errno of eventfd(); on failure nothing is left
 */
int uplink_pool_init(struct uplink_pool *p, unsigned int n, uint32_t slot_size,
		     uint32_t inflight_max);

/**
 * uplink_pool_get() - a free buffer for the reader, or NULL
 * @p: the pool
 *
 * The buffer is the reader's until it gives it back (uplink_pool_unget())
 * or forwards it (uplink_pool_take()), so a reader may hold several at
 * once (a batch read).  NULL when every buffer, or inflight_max bytes, is
 * in flight; bytes are charged when taken, so one batch may go over by
 * its own size.  Reader only.
 */
struct uplink_buf *uplink_pool_get(struct uplink_pool *p);

/**
 * uplink_pool_unget() - give back a buffer the reader did not fill (or dropped)
 * @b: a buffer from uplink_pool_get()
 */
void uplink_pool_unget(struct uplink_buf *b);

/**
 * uplink_pool_take() - @b now holds a frame of @len bytes that is being forwarded
 * @b: a buffer from uplink_pool_get(), its pkt filled (sw_pkt_init() with
 *	uplink_buf_done(), pkt.priv = @b)
 * @len: the frame's bytes, charged against inflight_max until done
 */
void uplink_pool_take(struct uplink_buf *b, uint32_t len);

/**
 * uplink_buf_done() - the sw_pkt done() of pool frames: the buffer is free again
 * @pkt: &buf->pkt, its priv the buffer
 */
void uplink_buf_done(struct sw_pkt *pkt);

/*
 * Tests only: called by uplink_buf_done() right after it freed the buffer,
 * while it still uses the pool (NULL otherwise).
 */
extern void (*uplink_pool_done_hook)(struct uplink_pool *p);

/**
 * uplink_pool_starve() - the reader found no buffer: say so before it sleeps
 * @p: the pool
 *
 * Return: true if a buffer came back meanwhile (do not sleep: the next
 * uplink_pool_get() finds it), false if the reader should poll @p->fd
 * and then call uplink_pool_fed()
 */
bool uplink_pool_starve(struct uplink_pool *p);

/**
 * uplink_pool_fed() - the reader woke after uplink_pool_starve() returned false
 * @p: the pool
 */
void uplink_pool_fed(struct uplink_pool *p);

/**
 * uplink_pool_fini() - free the pool once every frame has come back
 * @p: the pool (initialised, or zeroed)
 * @name: the uplink, for the log
 * @wait_ms: how long to wait for frames other ports still hold
 *
 * If some are still out after @wait_ms, their done() will still come:
 * the buffers are leaked (logged), never freed under a consumer, and so
 * must be @p itself (and whatever holds it).
 *
 * Return: true if freed, false if leaked
 */
bool uplink_pool_fini(struct uplink_pool *p, const char *name, unsigned int wait_ms);

/**
 * struct uplink_reader - an uplink's reader thread and how it is told to stop
 * @thread: the thread
 * @started: @thread runs
 * @stop: set once, by uplink_reader_stop()
 * @stop_fd: an eventfd readable once @stop is set: the reader polls it
 *	beside its other descriptors
 */
struct uplink_reader {
	pthread_t thread;
	bool started;
	atomic_bool stop;
	int stop_fd;
};

/**
 * uplink_reader_init() - make @r's eventfd (nothing runs yet)
 * @r: the reader
 *
 * Return: 0 or -errno; @r->stop_fd is -1 on failure
 */
int uplink_reader_init(struct uplink_reader *r);

/**
 * uplink_reader_start() - start the thread, named "up-" and the first 12 bytes of @name
 * @r: the reader (uplink_reader_init())
 * @fn: its body: loops until uplink_reader_stopping()
 * @arg: its argument
 * @name: the uplink's name (top -H and perf show it)
 *
 * Return: 0 or -errno
 */
int uplink_reader_start(struct uplink_reader *r, void *(*fn)(void *), void *arg, const char *name);

/* Has the reader been told to stop?  The reader itself, once per wakeup. */
static inline bool uplink_reader_stopping(struct uplink_reader *r)
{
	return atomic_load_explicit(&r->stop, memory_order_acquire);
}

/**
 * uplink_reader_stop() - tell the reader to stop, wait for it, close the eventfd
 * @r: the reader (initialised or not started: then only the eventfd goes)
 */
void uplink_reader_stop(struct uplink_reader *r);

#endif /* PVNET_UPLINK_POOL_H */
