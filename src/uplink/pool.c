// SPDX-License-Identifier: MIT
/* pool.c - an uplink's receive side: buffers and reader thread (see pool.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "uplink/pool.h"

int uplink_pool_init(struct uplink_pool *p, unsigned int n, uint32_t slot_size,
		     uint32_t inflight_max)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (n == 0)
		return -EINVAL;
	p->bufs = calloc(n, sizeof(*p->bufs));
	p->slots = malloc((size_t)n * slot_size);
	if (!p->bufs || !p->slots) {
		free(p->bufs);
		free(p->slots);
		memset(p, 0, sizeof(*p));
		p->fd = -1;
		return -ENOMEM;
	}
	p->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->fd < 0) {
		int rc = -errno;

		free(p->bufs);
		free(p->slots);
		memset(p, 0, sizeof(*p));
		p->fd = -1;
		return rc;
	}
	p->n = n;
	p->slot_size = slot_size;
	p->inflight_max = inflight_max;
	for (unsigned int i = 0; i < n; i++) {
		p->bufs[i].pool = p;
		p->bufs[i].slot = p->slots + (size_t)i * slot_size;
	}
	return 0;
}

struct uplink_buf *uplink_pool_get(struct uplink_pool *p)
{
	if (atomic_load_explicit(&p->inflight, memory_order_seq_cst) >= p->inflight_max)
		return NULL;
	for (unsigned int i = 0; i < p->n; i++) {
		struct uplink_buf *b = &p->bufs[(p->cursor + i) % p->n];

		if (!atomic_load_explicit(&b->busy, memory_order_seq_cst)) {
			/* Only the reader sets busy: nobody else can take it meanwhile. */
			atomic_store_explicit(&b->busy, true, memory_order_relaxed);
			p->cursor = (p->cursor + i + 1) % p->n;
			return b;
		}
	}
	return NULL;
}

void uplink_pool_unget(struct uplink_buf *b)
{
	atomic_store_explicit(&b->busy, false, memory_order_relaxed);
}

void uplink_pool_take(struct uplink_buf *b, uint32_t len)
{
	atomic_fetch_add_explicit(&b->pool->inflight, len, memory_order_relaxed);
}

void (*uplink_pool_done_hook)(struct uplink_pool *p);

void uplink_buf_done(struct sw_pkt *pkt)
{
	struct uplink_buf *b = pkt->priv;
	struct uplink_pool *p = b->pool;

	/*
	 * From here to the last line the pool must outlive us although the
	 * buffer is free before the end: uplink_pool_fini() waits for
	 * releasing to fall back to 0, not only for every buffer to be free.
	 */
	atomic_fetch_add_explicit(&p->releasing, 1, memory_order_seq_cst);
	/* seq_cst pairs with the reader's store of starved and its second look (Dekker). */
	atomic_fetch_sub_explicit(&p->inflight, pkt->len, memory_order_seq_cst);
	atomic_store_explicit(&b->busy, false, memory_order_seq_cst);
	if (uplink_pool_done_hook)
		uplink_pool_done_hook(p);
	if (atomic_load_explicit(&p->starved, memory_order_seq_cst) &&
	    write(p->fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
		/* Only on counter overflow: the reader is awake then anyway. */
	}
	atomic_fetch_sub_explicit(&p->releasing, 1, memory_order_release);
}

bool uplink_pool_starve(struct uplink_pool *p)
{
	/* Say so, then look again: a done() in between either sees the flag or left a buffer. */
	struct uplink_buf *b;

	atomic_store_explicit(&p->starved, true, memory_order_seq_cst);
	b = uplink_pool_get(p);
	if (b) {
		uplink_pool_unget(b); /* the next round takes it */
		atomic_store_explicit(&p->starved, false, memory_order_relaxed);
		return true;
	}
	return false;
}

void uplink_pool_fed(struct uplink_pool *p)
{
	atomic_store_explicit(&p->starved, false, memory_order_relaxed);
	if (read(p->fd, &(uint64_t){0}, sizeof(uint64_t)) < 0) {
		/* Nothing pending: a buffer came back before we slept. */
	}
}

/*
 * Every buffer back from the other ports and no done() still at work, or
 * false after @wait_ms.  A done() counts itself in releasing before it
 * frees its buffer, so once the buffer is seen free its count is seen
 * too, until it has made its last access.
 */
static bool pool_drained(struct uplink_pool *p, unsigned int wait_ms)
{
	for (unsigned int ms = 0; ms <= wait_ms; ms++) {
		unsigned int busy = 0;

		for (unsigned int i = 0; i < p->n; i++)
			busy += atomic_load_explicit(&p->bufs[i].busy, memory_order_acquire);
		if (!busy && !atomic_load_explicit(&p->releasing, memory_order_acquire))
			return true;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	return false;
}

bool uplink_pool_fini(struct uplink_pool *p, const char *name, unsigned int wait_ms)
{
	if (!p->bufs)
		return true;
	if (!pool_drained(p, wait_ms)) {
		/* A consumer still holds frames and will call done() on them: keep the pool. */
		err("uplink %s: frames still queued after %u ms; leaking its buffers", name,
		    wait_ms);
		return false;
	}
	free(p->bufs);
	free(p->slots);
	if (p->fd >= 0)
		close(p->fd);
	p->bufs = NULL;
	p->slots = NULL;
	p->fd = -1;
	return true;
}

int uplink_reader_init(struct uplink_reader *r)
{
	r->started = false;
	atomic_init(&r->stop, false);
	r->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return r->stop_fd < 0 ? -errno : 0;
}

int uplink_reader_start(struct uplink_reader *r, void *(*fn)(void *), void *arg, const char *name)
{
	char tname[16];
	int rc = pthread_create(&r->thread, NULL, fn, arg);

	if (rc)
		return -rc;
	r->started = true;
	/* "up-NAME", cut at 15 characters: a failure to name costs nothing else */
	snprintf(tname, sizeof(tname), "up-%.12s", name);
	(void)pthread_setname_np(r->thread, tname);
	return 0;
}

void uplink_reader_stop(struct uplink_reader *r)
{
	if (r->started) {
		atomic_store_explicit(&r->stop, true, memory_order_release);
		if (write(r->stop_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
			/* Counter overflow only: readable already. */
		}
		pthread_join(r->thread, NULL);
		r->started = false;
	}
	if (r->stop_fd >= 0)
		close(r->stop_fd);
	r->stop_fd = -1;
}
