/* SPDX-License-Identifier: MIT */
/* fake_port.h - test ports that record what they were given, and test packets */
#ifndef PVNET_TESTS_SWITCH_FAKE_PORT_H
#define PVNET_TESTS_SWITCH_FAKE_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include "switch/switch.h"

/* Frames one test may create, and deliveries the log keeps. */
#define FAKE_PKTS 1024
#define FAKE_LOG  8192
#define FAKE_HOLD 1024

/**
 * struct fake_pkt - a test frame: descriptor, header copy, id, completions
 * @pkt: the descriptor handed to the switch
 * @hdr: its header bytes
 * @id: test-chosen id, recorded in the delivery log
 * @done_calls: how often done() ran (must end at exactly 1)
 */
struct fake_pkt {
	struct sw_pkt pkt;
	uint8_t hdr[64];
	unsigned int id;
	unsigned int done_calls;
};

/**
 * struct fake_port - a port whose xmit() logs (port id, packet id)
 * @port: the switch port
 * @id: test-chosen id
 * @accept: most frames one xmit() accepts
 * @hold: keep the references instead of putting them at once
 * @held: the kept references
 * @nheld: entries of @held
 * @calls: xmit() calls
 */
struct fake_port {
	struct sw_port *port;
	unsigned int id;
	unsigned int accept;
	bool hold;
	struct sw_pkt *held[FAKE_HOLD];
	unsigned int nheld;
	unsigned int calls;
};

struct fake_rec {
	unsigned int port;
	unsigned int pkt;
};

extern struct fake_rec fake_log[FAKE_LOG];
extern unsigned int fake_nlog;
extern struct fake_pkt fake_pkts[FAKE_PKTS];
extern uint64_t fake_now_ns;

/* Forget every packet and log entry; the fake clock goes back to 1000 s. */
void fake_reset(void);
/* The switch clock the tests control. */
uint64_t fake_clock(void *arg);
/* A test switch with the fake clock and the given limits (0: default). */
struct sw *fake_sw(uint32_t fdb_max, uint32_t mac_limit);
/* A frame @id from @src to @dst of @len bytes (header copy of 14 bytes). */
struct sw_pkt *fake_frame(unsigned int id, const uint8_t *dst, const uint8_t *src, uint32_t len);
/* Add @fp as a port named "p<id>" that accepts everything. */
void fake_port_add(struct sw *sw, struct fake_port *fp, unsigned int id);
/* Put every reference @fp holds. */
void fake_port_release(struct fake_port *fp);
/* Forward one frame; returns sw_forward()'s result. */
unsigned int fake_send(struct sw *sw, struct fake_port *in, unsigned int id, const uint8_t *dst,
		       const uint8_t *src);
/* Number of log entries for packet @id (on any port) / delivered to port @port. */
unsigned int fake_count_pkt(unsigned int id);
unsigned int fake_count_port(unsigned int port);
/* Was packet @id delivered to port @port? */
bool fake_delivered(unsigned int port, unsigned int id);
/* A port's counter by name. */
uint64_t fake_stat(struct fake_port *fp, const char *name);
/* A MAC 02:00:00:00:<hi>:<lo>. */
void fake_mac(uint8_t mac[6], unsigned int n);

#endif
