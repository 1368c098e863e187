// SPDX-License-Identifier: MIT
/* test_pool.c - an uplink's receive buffers: the bound in flight, the reader's wake-up, teardown */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "uplink/pool.h"

/* The reader's part for one frame of @len bytes in @b. */
static void forward(struct uplink_buf *b, uint32_t len)
{
	memset(&b->pkt, 0, offsetof(struct sw_pkt, refs));
	b->pkt.len = len;
	b->pkt.priv = b;
	sw_pkt_init(&b->pkt, uplink_buf_done);
	uplink_pool_take(b, len);
}

static bool eventfd_readable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, 0) == 1;
}

/* Frames in flight are bounded in bytes; a starved reader is woken by the first one back. */
static void test_bound_and_wakeup(void **state)
{
	struct uplink_pool p;
	struct uplink_buf *b[3];

	(void)state;
	assert_int_equal(uplink_pool_init(&p, 4, 2048, 3000), 0);
	b[0] = uplink_pool_get(&p);
	b[1] = uplink_pool_get(&p);
	assert_non_null(b[0]);
	assert_non_null(b[1]);
	assert_ptr_not_equal(b[0], b[1]);
	forward(b[0], 1500);
	forward(b[1], 1500);
	assert_null(uplink_pool_get(&p)); /* 3000 bytes out: at the bound */
	assert_false(uplink_pool_starve(&p));
	assert_false(eventfd_readable(p.fd));
	sw_pkt_put(&b[0]->pkt);
	assert_true(eventfd_readable(p.fd));
	uplink_pool_fed(&p);
	b[2] = uplink_pool_get(&p);
	assert_non_null(b[2]);
	uplink_pool_unget(b[2]);
	sw_pkt_put(&b[1]->pkt);
	assert_false(eventfd_readable(p.fd)); /* nobody starved: no system call */
	assert_true(uplink_pool_fini(&p, "test", 0));
}

/*
 * The race starving closes: the reader finds no buffer, a frame comes
 * back before it says it is starved (so that done() writes nothing), and
 * its second look finds that buffer: "not starved after all", and the
 * flag is down again (else every later done() would write the eventfd).
 */
static void test_starve_finds_a_late_buffer(void **state)
{
	struct uplink_pool p;
	struct uplink_buf *b;

	(void)state;
	assert_int_equal(uplink_pool_init(&p, 1, 2048, 4096), 0);
	b = uplink_pool_get(&p);
	assert_non_null(b);
	forward(b, 1000);
	assert_null(uplink_pool_get(&p)); /* the reader's first look */
	sw_pkt_put(&b->pkt);		  /* back before it says so: nobody to wake */
	assert_false(eventfd_readable(p.fd));
	assert_true(uplink_pool_starve(&p)); /* its second look: it goes on, it does not sleep */
	b = uplink_pool_get(&p);
	assert_non_null(b);
	forward(b, 1000);
	sw_pkt_put(&b->pkt);
	assert_false(eventfd_readable(p.fd)); /* not starved: done() wrote nothing */
	assert_true(uplink_pool_fini(&p, "test", 0));
}

/* A pool of no buffers is refused, and leaves nothing to free. */
static void test_init_empty(void **state)
{
	struct uplink_pool p;

	(void)state;
	assert_int_equal(uplink_pool_init(&p, 0, 2048, 4096), -EINVAL);
	assert_null(p.bufs);
	assert_int_equal(p.fd, -1);
	assert_true(uplink_pool_fini(&p, "test", 0));
}

/* A pool whose owner frees it as an uplink's port does: together with the pool. */
struct owner {
	struct uplink_pool pool;
	bool tried, freed;
};

static struct owner *racing;

/*
 * The uplink torn down at the worst moment: the last frame's done() has
 * freed its buffer but still uses the pool.  Teardown must wait (here it
 * may not: 0 ms) rather than free the pool under it.
 */
static void teardown_now(struct uplink_pool *p)
{
	struct owner *o = racing;

	assert_ptr_equal(p, &o->pool);
	o->tried = true;
	if (uplink_pool_fini(p, "test", 0)) {
		o->freed = true;
		free(o); /* what the port's destroy does next */
	}
}

static void test_fini_waits_for_done(void **state)
{
	struct owner *o = calloc(1, sizeof(*o));
	struct uplink_buf *b;

	(void)state;
	assert_non_null(o);
	assert_int_equal(uplink_pool_init(&o->pool, 1, 2048, 4096), 0);
	b = uplink_pool_get(&o->pool);
	assert_non_null(b);
	forward(b, 100);
	assert_false(uplink_pool_starve(&o->pool)); /* done() will write the eventfd too */
	racing = o;
	uplink_pool_done_hook = teardown_now;
	sw_pkt_put(&b->pkt);
	uplink_pool_done_hook = NULL;
	assert_true(o->tried);
	assert_false(o->freed); /* done() was still using it */
	assert_true(uplink_pool_fini(&o->pool, "test", 0));
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bound_and_wakeup),
	    cmocka_unit_test(test_starve_finds_a_late_buffer),
	    cmocka_unit_test(test_init_empty),
	    cmocka_unit_test(test_fini_waits_for_done),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
