// SPDX-License-Identifier: MIT
/* test_poll.c - the worker's polling budget: polling is earned by working (worker.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "back/internal.h"

#define US     1000ull
#define WINDOW (200 * US)

/* Budget earned by a round of @us microseconds, with nothing in store and no poll before. */
static uint64_t earn(uint64_t us)
{
	return back_poll_earn(0, 0, 1000 * US, 1000 * US + us * US, WINDOW);
}

static void test_rounds_earn_their_duration(void **state)
{
	(void)state;
	assert_int_equal(earn(10), 10 * US * BACK_POLL_EARN_PERMILLE / 1000);
	assert_int_equal(earn(0), 0);
	/* the store holds one window, however long the work */
	assert_int_equal(earn(5000), WINDOW);
	assert_int_equal(back_poll_earn(WINDOW - US, 0, 0, 50 * US, WINDOW), WINDOW);
}

static void test_polling_spends(void **state)
{
	uint64_t t0 = 1000 * US;

	(void)state;
	/* 50 us in store, a poll of 30 us found work, the round took 5 us */
	assert_int_equal(back_poll_earn(50 * US, t0 - 30 * US, t0, t0 + 5 * US, WINDOW),
			 20 * US + 5 * US * BACK_POLL_EARN_PERMILLE / 1000);
	/* a poll longer than the store empties it; the round still earns */
	assert_int_equal(back_poll_earn(10 * US, t0 - 30 * US, t0, t0 + 2 * US, WINDOW),
			 2 * US * BACK_POLL_EARN_PERMILLE / 1000);
}

/*
 * The two shapes of traffic worker.c names, run through the rule as the
 * worker applies it: the budget at the start of each idle spell is how
 * long it may poll.
 */
static void test_sparse_work_sleeps_dense_work_polls(void **state)
{
	uint64_t now = 1000 * US, earned = 0, idle_since = 0, polled = 0;

	(void)state;
	/* A paced sender: 6 us of work per 64 KiB frame, one frame every 100 us. */
	for (int i = 0; i < 100; i++) {
		uint64_t allowed, gap = 94 * US;

		earned = back_poll_earn(earned, idle_since, now, now + 6 * US, WINDOW);
		now += 6 * US;
		allowed = earned;
		if (allowed < gap) { /* polls its budget away, then sleeps until the next frame */
			polled += allowed;
			earned = 0;
			idle_since = 0;
		} else { /* the poll finds the next frame */
			polled += gap;
			idle_since = now;
		}
		now += gap;
	}
	/* It polled no longer than it worked (the old rule: the whole gap, 94 us). */
	assert_true(polled <= 100 * 6 * US * BACK_POLL_EARN_PERMILLE / 1000);
	assert_true(polled < 100 * 94 * US / 4);

	/* A stream: 5 us of work, then the next burst 2 us later. */
	earned = 0;
	idle_since = 0;
	for (int i = 0; i < 1000; i++) {
		earned = back_poll_earn(earned, idle_since, now, now + 5 * US, WINDOW);
		now += 5 * US;
		/* the budget outlasts the gap every time: the worker never sleeps */
		assert_true(earned > 2 * US);
		idle_since = now;
		now += 2 * US;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rounds_earn_their_duration),
	    cmocka_unit_test(test_polling_spends),
	    cmocka_unit_test(test_sparse_work_sleeps_dense_work_polls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
