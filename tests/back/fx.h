/* SPDX-License-Identifier: MIT */
/* fx.h - the data-path tests' fixture: three fake frontends on one backend, and a checked transfer */
#ifndef PVNET_TESTS_BACK_FX_H
#define PVNET_TESTS_BACK_FX_H

#include "back/internal.h"
#include "fake_front.h"

extern const uint8_t mac_a[6], mac_b[6], mac_c[6];

/* Bound of every wait in this file: the suite must finish, pass or fail. */
#define WAIT_MS 10000

/* Bytes a sender keeps in flight: half the default RX queue bound (512 KiB). */
#define MAX_INFLIGHT (256 * 1024)

/* A: sender (sometimes hostile), B: receiver, C: an innocent second sender. */
struct fx {
	struct world w;
	struct ff a, b, c;
	struct back_vif *va, *vb, *vc;
	uint8_t buf[65536], rbuf[65536];
};

/*
 * A world with three connected vifs (queue 0 each): A, B and C.  @oa and
 * @ob override A's and B's frontend options (NULL: one queue, sg, GSO,
 * rx-notify, persistent grants accepted with the fake's whole pool).
 */
struct fx *fx_new(enum back_tx_mode mode, const struct back_config *cfg, const struct ff_opts *oa,
		  const struct ff_opts *ob);
/* Destroy the vifs, check nothing stays mapped, destroy the domains and the world. */
void fx_free(struct fx *x);
/* The length of frame @i of a transfer: spread over [min, max]. */
uint32_t len_of(uint32_t i, uint32_t min, uint32_t max);
/* Print the counters of A, B, C and the ring indices (on failure). */
void dump(struct fx *x, unsigned int recvd, uint32_t want, int got);
/*
 * Send @count frames from @tx to @rx (queue 0 each) and check every one
 * arrives bit-exact, in order, with the right GSO/checksum information;
 * every TX request is answered OKAY.  Returns frames received.
 */
unsigned int transfer(struct fx *x, struct ff *tx, const uint8_t *src, struct ff *rx,
		      const uint8_t *dst, unsigned int count, uint32_t min, uint32_t max,
		      const struct ff_txopt *opt, uint32_t seed0);
/* Send @n frames of @len bytes from @tx without receiving; returns once pushed. */
void send_only(struct fx *x, struct ff *tx, const uint8_t *src, const uint8_t *dst, unsigned int n,
	       uint32_t len, uint32_t seed0);
/*
 * @f (the frontend of @vif) reboots: Closing, Closed (checked), its rings
 * and ports released, Initialising, then connected again with @o (checked).
 */
void fx_reconnect(struct ff *f, struct back_vif *vif, const struct ff_opts *o);
/* TX responses @f has read so far (after reaping). */
unsigned int answered(struct ff *f);
/* The Toeplitz key fx_hash_on() sets (the usual RSS key). */
extern const uint8_t fx_hash_key[BACK_HASH_KEY_MAX];
/* Toeplitz hashing of every type for @vif, as its guest would set it over the control ring. */
void fx_hash_on(struct back_vif *vif);

/*
 * Another port that lends its frames (an uplink's receive buffers): its
 * ops take what the switch sends it and give it back at once, and each
 * frame fx_lend() described counts fx_lent_done when its last holder puts
 * it.
 */
extern const struct sw_port_ops fx_lender_ops;
extern _Atomic unsigned int fx_lent_done;
/* Frame @i of a lender's batch: @len bytes to B from @src in @frame, described by @pkt. */
struct sw_pkt *fx_lend(struct sw_pkt *pkt, uint8_t *frame, uint32_t len, const uint8_t *src,
		       uint32_t i);

#endif /* PVNET_TESTS_BACK_FX_H */
