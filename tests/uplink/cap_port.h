/* SPDX-License-Identifier: MIT */
/* cap_port.h - for the uplink ports' tests: a switch port that keeps what it is given, test frames */
#ifndef PVNET_TESTS_UPLINK_CAP_PORT_H
#define PVNET_TESTS_UPLINK_CAP_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "switch/switch.h"

#define CAP_MAX 64

/**
 * struct capture - a switch port that keeps a copy of every frame it is given
 * @port: the switch port (sw_port_add() with cap_ops and the capture as priv)
 * @lock: taken by the switch's xmit() and by readers
 * @n: frames given, at most CAP_MAX (later ones overwrite the last)
 * @len: each frame's length, 0 for one not kept (several pieces, or over 2048 bytes)
 * @frame: their bytes
 */
struct capture {
	struct sw_port *port;
	pthread_mutex_t lock;
	unsigned int n;
	uint32_t len[CAP_MAX];
	uint8_t frame[CAP_MAX][2048];
};

extern const struct sw_port_ops cap_ops;

/* Frames given to @c so far. */
unsigned int cap_count(struct capture *c);

/**
 * struct tpkt - a frame a test hands the switch
 * @pkt: its descriptor
 * @done: how often its done() ran (must end at exactly 1)
 */
struct tpkt {
	struct sw_pkt pkt;
	unsigned int done;
};

/* The done() of a struct tpkt: counts. */
void tpkt_done(struct sw_pkt *pkt);

/*
 * @t describes @frame (@len bytes, private and whole): its first @hdr_len
 * bytes as the header copy (at most 128), the rest, or all of it when
 * @split is false, as one fragment; @flags as netif's.
 */
struct sw_pkt *tpkt_init(struct tpkt *t, const uint8_t *frame, uint32_t len, uint16_t hdr_len,
			 bool split, uint8_t flags);

#endif
