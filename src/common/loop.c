// SPDX-License-Identifier: MIT
/* loop.c - epoll event loop for pvnetd's control-plane thread */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/loop.h"

/* Events taken per epoll_wait(); the control plane never has many at once. */
#define LOOP_BATCH 64

struct loop {
	int epfd;
	bool stop;
	int nready; /* entries of @ready still to dispatch, or 0 */
	struct epoll_event ready[LOOP_BATCH];
};

static void spare_ensure(void);

struct loop *loop_create(void)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		free(l);
		return NULL;
	}
	spare_ensure();
	return l;
}

void loop_destroy(struct loop *l)
{
	if (!l)
		return;
	close(l->epfd);
	free(l);
}

int loop_add(struct loop *l, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
		return -errno;
	return 0;
}

int loop_mod(struct loop *l, struct loop_watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	return 0;
}

void loop_del(struct loop *l, struct loop_watch *w)
{
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	/* The watch may be freed once we return: forget its pending events. */
	for (int i = 0; i < l->nready; i++)
		if (l->ready[i].data.ptr == w)
			l->ready[i].data.ptr = NULL;
}

int loop_run_once(struct loop *l, int timeout_ms)
{
	int n;

	do {
		n = epoll_wait(l->epfd, l->ready, LOOP_BATCH, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	l->nready = n;
	for (int i = 0; i < n; i++) {
		struct loop_watch *w = l->ready[i].data.ptr;

		if (w)
			w->cb(w, l->ready[i].events);
	}
	l->nready = 0;
	return n;
}

int loop_run(struct loop *l)
{
	l->stop = false;
	while (!l->stop) {
		int rc = loop_run_once(l, -1);

		if (rc < 0)
			return rc;
	}
	return 0;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

/*
 * The descriptor loop_accept() gives up to shed a connection when none is
 * left.  Made with the first loop, while descriptors are plenty, and again
 * whenever it is missing.
 */
static int accept_spare = -1;

static void spare_ensure(void)
{
	if (accept_spare < 0)
		accept_spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

int loop_accept(int lfd, int flags)
{
	int fd, e;

	spare_ensure();
	fd = accept4(lfd, NULL, NULL, flags);
	if (fd >= 0)
		return fd;
	e = errno;
	if ((e == EMFILE || e == ENFILE) && accept_spare >= 0) {
		close(accept_spare);
		fd = accept(lfd, NULL, NULL);
		if (fd >= 0)
			close(fd);
		accept_spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	return -e;
}
