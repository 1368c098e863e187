/* SPDX-License-Identifier: MIT */
/* chaos.h - the hostile-frontend campaign: one seed's state, its PRNG, its checks, A's moves */
#ifndef PVNET_TESTS_BACK_CHAOS_H
#define PVNET_TESTS_BACK_CHAOS_H

/*
 * test_chaos.c runs the campaign (see there); chaos_front.c plays the
 * hostile frontend A: every move it makes and every check on what A reads.
 * One thread (the test's, which also runs the loop) does all of it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "fx.h"

#if defined(__SANITIZE_THREAD__)
#define CHAOS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHAOS_TSAN 1
#endif
#endif
#ifndef CHAOS_TSAN
#define CHAOS_TSAN 0
#endif

/* Responses A may find between two looks: a ring outstanding plus what one step publishes. */
#define CHAOS_RSP_MAX (4 * FF_RING)
/* Frames a receiver takes per look: bounded, whatever the ring says. */
#define CHAOS_READ_MAX (2 * FF_RING)

/* What A does in one step (test_chaos.c picks, chaos_front.c does). */
enum chaos_step {
	S_FRAMES,
	S_RAW,
	S_EXTRAS,
	S_TX_JUMP,
	S_REWRITE,
	S_STORM,
	S_RX_POST,
	S_RX_JUMP,
	S_FEED,
	S_READ,
	S_STATE,
	S_GRANT,
	S_PAUSE,
	S_RECONNECT,
	S_N
};

/* A's counters the summary adds up (test_chaos.c names them). */
#define CHAOS_NCTR 15

/* What one mode's seeds did, printed at the end. */
struct chaos_tally {
	unsigned long seeds, steps[S_N], fatals, refused, strays, healthy, fed;
	uint64_t ctr[CHAOS_NCTR];
	struct {
		char why[40];
		unsigned long n;
	} why[32];
	unsigned int nwhy;
};

/**
 * struct chaos - one seed's campaign
 * @x: the world (vifs a, b, c)
 * @t: the tally of this mode
 * @rng: splitmix64 state
 * @mode: the backend's TX mode
 * @seed: the seed (0: a reduced test, not the campaign)
 * @step: the step running
 * @steps: the steps of this seed (for the replay command)
 * @what: its name
 * @oa: A's frontend options (every reconnect uses them again)
 * @foreign: a ref A granted to C, never to the backend
 * @ro: a read-only ref of one of A's TX pages
 * @reconnects: connects so far
 * @a_conn: A was Connected at the last look
 * @a_self: A wrote its own state since it last connected
 * @sampled: A's counters of this connection are in the tally
 * @tx_taint: A had the backend write into its ring pages: no ring checks
 * @rx_taint: the same for the RX ring
 * @tx_dirty: A wrote over TX responses it had not read: unchecked below @tx_until
 * @rx_dirty: the same for RX, below @rx_until
 * @tx_pub: the furthest TX req_prod A published, per queue
 * @rx_pub: the same for RX
 * @hseq: next healthy frame's pattern seed
 * @fseq: next frame C feeds A
 */
struct chaos {
	struct fx *x;
	struct chaos_tally *t;
	uint64_t rng;
	enum back_tx_mode mode;
	unsigned int seed, step, steps;
	const char *what;
	struct ff_opts oa;
	grant_ref_t foreign, ro;
	unsigned int reconnects;
	bool a_conn, a_self, sampled;
	bool tx_taint[FF_MAX_QUEUES], rx_taint[FF_MAX_QUEUES];
	bool tx_dirty[FF_MAX_QUEUES], rx_dirty[FF_MAX_QUEUES];
	RING_IDX tx_until[FF_MAX_QUEUES], rx_until[FF_MAX_QUEUES];
	RING_IDX tx_pub[FF_MAX_QUEUES], rx_pub[FF_MAX_QUEUES];
	uint32_t hseq, fseq;
};

/* Fail the test, naming mode, seed and step (test_chaos.c). */
void chaos_fail(struct chaos *ch, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Check @cond; on failure name mode, seed and step, so that the seed can be replayed. */
#define CHK(ch, cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			chaos_fail(ch, __LINE__, #cond, __VA_ARGS__);                              \
	} while (0)

/* Count a fatal error of A's by its reason (test_chaos.c). */
void chaos_note_fatal(struct chaos *ch, const char *why);

/* splitmix64: the whole campaign is a function of the seed. */
static inline uint64_t rnd(struct chaos *ch)
{
	uint64_t z = (ch->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t below(struct chaos *ch, uint32_t n)
{
	return n ? (uint32_t)(rnd(ch) % n) : 0;
}

static inline bool chance(struct chaos *ch, unsigned int pct)
{
	return below(ch, 100) < pct;
}

/* chaos_front.c: A's memory and life cycle. */

/* Frame number of A's TX buffer page @p of queue @qi (fake_front.c's layout). */
uint32_t chaos_a_tx_frame(unsigned int qi, unsigned int p);
/* Fill A's TX pages once with frame headers, while no backend looks. */
void chaos_a_fill(struct chaos *ch);
/* A closes; checks that none of its grants is still in use; tears its rings down. */
void chaos_a_down(struct chaos *ch);
/* A connects with fresh rings (with @may_fail, sometimes with keys that must be refused). */
void chaos_a_up(struct chaos *ch, bool may_fail);
/* A takes its TX responses of queue @qi, checked first. */
void chaos_a_reap(struct chaos *ch, unsigned int qi);
/* None of A's grants is in use (after its vif let go). */
void chaos_a_check_released(struct chaos *ch);

/* chaos_front.c: one step of A's on queue @qi. */
void chaos_step_frames(struct chaos *ch, unsigned int qi);
void chaos_step_raw(struct chaos *ch, unsigned int qi);
void chaos_step_extras(struct chaos *ch, unsigned int qi);
void chaos_step_tx_jump(struct chaos *ch, unsigned int qi);
void chaos_step_rewrite(struct chaos *ch, unsigned int qi);
void chaos_step_storm(struct chaos *ch, unsigned int qi);
void chaos_step_rx_post(struct chaos *ch, unsigned int qi);
void chaos_step_rx_jump(struct chaos *ch, unsigned int qi);
void chaos_step_grant(struct chaos *ch, unsigned int qi);
/* C feeds A a few frames (from its second MAC). */
void chaos_step_feed(struct chaos *ch);
/* A reads its rings, every queue, checked. */
void chaos_step_read(struct chaos *ch);
/* A writes its xenbus state, legal or garbage. */
void chaos_step_state(struct chaos *ch);

#endif /* PVNET_TESTS_BACK_CHAOS_H */
