/* SPDX-License-Identifier: MIT */
/* switch.h - the L2 learning bridge inside pvnetd: ports, forwarding, MAC table */
#ifndef PVNET_SWITCH_SWITCH_H
#define PVNET_SWITCH_SWITCH_H

/*
 * Theory of Operation
 *
 * One struct sw is one Ethernet segment.  Ports are vifs, the TAP uplink
 * and the VXLAN uplink; each supplies an xmit() callback.  The threads that
 * own a port (one netback worker per vif queue, so several per port) call
 * sw_forward() with a batch of frames they received; the switch learns the
 * source MACs, looks up the destinations in its MAC table (FDB) and calls
 * the xmit() of each output port once per batch, in input order.
 *
 * Threads:
 *   data path     sw_forward(), from any number of threads at once.  No lock
 *                 and no atomic read-modify-write per packet (except the
 *                 reference a flooded frame needs per extra port); counters
 *                 are summed per batch and added with one relaxed atomic add
 *                 per counter and port.  Learning a new or moved MAC is rare
 *                 and takes the FDB mutex once per batch.
 *   control       sw_create/destroy, sw_port_add/del, sw_port_set_mac_limit,
 *                 sw_fdb_age/report/lookup/count/dump, stats readers.  Any thread; port
 *                 add/del are serialised by a mutex.
 *
 * Port life time (an epoch scheme, see epoch.c): sw_port_del() unpublishes
 * the port and removes its MACs, then waits until every sw_forward() call
 * that might still use it has returned, and only then frees it.  So other
 * ports may keep forwarding while a port goes away.  The rules are:
 *   - the owner of the port stops its own calls of sw_forward(sw, port, ...)
 *     before sw_port_del() (the port pointer is its argument);
 *   - xmit() must not block (it may wait for a lock held for a bounded
 *     stretch of work, never for I/O or another port's progress) and
 *     must not call sw_port_del() (-EDEADLK);
 *   - after sw_port_del() returns, the port's xmit() is never called again,
 *     but packets it accepted earlier are still its to put.
 *
 * Time: the switch reads cfg.clock once per batch; tests pass a fake one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch/pkt.h"

/*
 * Ports per switch: a port number is one byte in the packed FDB entry (see
 * fdb.c), which keeps a lookup to a single 64-bit load, and it bounds the
 * work of flooding one frame (one reference and one xmit per port).  256
 * vifs plus uplinks is more than one pvnetd serves.
 */
#define SW_MAX_PORTS 256

/* Port names: "vif<domid>.<devid>" or an uplink's interface name. */
#define SW_PORT_NAME_MAX 32

/*
 * Most frames sw_forward() looks at per internal batch; its per-batch arrays
 * live on the stack.  64 is NAPI's budget and larger than a netback batch.
 */
#define SW_BATCH_MAX 64

struct sw;
struct sw_port;
struct sw_capture;

/**
 * struct sw_port_ops - what a port type supplies
 * @xmit: send @n packets out of port @p.  Takes ownership of one reference
 *	to each of the first k packets, where k is the return value (0..@n):
 *	it must sw_pkt_put() each of them, now or later, on any thread.  The
 *	switch drops the other @n - k and counts them as tx_dropped.  @pkts is
 *	scratch space the callee may modify.  Called from data path threads,
 *	concurrently for different input ports: must not block (see above).
 */
struct sw_port_ops {
	unsigned int (*xmit)(struct sw_port *p, struct sw_pkt **pkts, unsigned int n);
};

/**
 * struct sw_port_stats - per-port counters, named as Linux names them
 * @rx_packets: frames the port handed to the switch
 * @rx_bytes: their bytes (struct sw_pkt.len)
 * @rx_dropped: of those, dropped before any output (the sum of the reasons
 *	below: rx_length_errors, rx_src_invalid, rx_link_local, same_port,
 *	rx_no_dest)
 * @rx_length_errors: runts (shorter than an Ethernet header), or a header
 *	copy longer than the frame, or too many fragments
 * @rx_src_invalid: source MAC multicast, broadcast or zero (never learned)
 * @rx_link_local: destination 01:80:c2:00:00:0X (802.1D reserved; bridges
 *	must not forward pause, STP, LACP, 802.1X)
 * @same_port: destination learned on the input port itself
 * @flood: frames flooded (broadcast, multicast, unknown unicast)
 * @rx_no_dest: frames flooded with no other port on the switch: nowhere
 *	to go (a port alone on the segment)
 * @tx_packets: frames this port's xmit() accepted; a port that then
 *	cannot send one counts it among its own counters (the TAP uplink's
 *	tx_bad_offload and tx_errors, netback's rx_* drops), not here
 * @tx_bytes: their bytes
 * @tx_dropped: frames this port's xmit() refused (a full queue, a port
 *	whose device is gone)
 * @learn_new: MACs learned on this port
 * @learn_moved: MACs that moved to this port from another
 * @learn_limit: frames whose source was not learned: port at its MAC limit
 * @learn_full: frames whose source was not learned: table or bucket full
 * @fdb_entries: MACs currently learned on this port (a gauge)
 *
 * The rx group is written by the port's own threads, the tx group by every
 * thread that forwards to it: separate cache lines.
 */
struct sw_port_stats {
	_Atomic uint64_t rx_packets;
	_Atomic uint64_t rx_bytes;
	_Atomic uint64_t rx_dropped;
	_Atomic uint64_t rx_length_errors;
	_Atomic uint64_t rx_src_invalid;
	_Atomic uint64_t rx_link_local;
	_Atomic uint64_t same_port;
	_Atomic uint64_t flood;
	_Atomic uint64_t rx_no_dest;
	_Alignas(64) _Atomic uint64_t tx_packets;
	_Atomic uint64_t tx_bytes;
	_Atomic uint64_t tx_dropped;
	_Alignas(64) _Atomic uint64_t learn_new;
	_Atomic uint64_t learn_moved;
	_Atomic uint64_t learn_limit;
	_Atomic uint64_t learn_full;
	_Atomic uint64_t fdb_entries;
};

/**
 * struct sw_report - what sw_fdb_report() said last about one limit
 * @seen: the refusal counter when it last said so (learn_limit, fdb_full)
 * @said_s: when, in seconds of the switch's clock
 * @said: whether it has said so at all
 */
struct sw_report {
	uint64_t seen;
	uint32_t said_s;
	bool said;
};

/**
 * struct sw_port - one port of the switch
 * @ops: the port type's callbacks (caller of sw_port_add; read-only)
 * @priv: the port type's private pointer (caller of sw_port_add)
 * @sw: the switch (read-only)
 * @num: port number, 0..SW_MAX_PORTS-1, reused after deletion (read-only)
 * @name: NUL-terminated name (read-only)
 * @mac_limit: most MACs the FDB learns on this port (sw_port_set_mac_limit)
 * @capture: the capture of this port, or NULL (sw_capture_start(); readers
 *	inside sw_forward() only)
 * @stats: counters; read them with sw_port_stats_get()
 * @limit_report: sw_fdb_report()'s about @mac_limit (under the ports' lock)
 */
struct sw_port {
	const struct sw_port_ops *ops;
	void *priv;
	struct sw *sw;
	uint16_t num;
	char name[SW_PORT_NAME_MAX];
	_Atomic uint32_t mac_limit;
	_Atomic(struct sw_capture *) capture;
	struct sw_port_stats stats;
	struct sw_report limit_report;
};

/**
 * struct sw_config - limits of one switch; sw_config_init() sets defaults
 * @fdb_max: MACs the table holds in total (all ports).  Default
 *	SW_MAX_PORTS * SW_DEFAULT_MAC_LIM (16384): every port at its limit
 *	still fits, so guests together cannot fill the table and have a later
 *	guest's frames flooded (pvnetd adds its uplinks' larger limits on top);
 *	the table is preallocated at twice this size or more, a power of
 *	two (384 KiB for the default).
 * @port_mac_limit: default per-port limit.  Default 64: a guest has one MAC,
 *	or a few dozen when it bridges containers; 64 lets one port take at
 *	most 1/256 of the default table.  Uplinks carry a whole segment: raise
 *	theirs with sw_port_set_mac_limit() and the table by as much.
 * @ageing_s: seconds after which an unrefreshed MAC is forgotten.  Default
 *	300, as Linux bridges and 802.1D.
 * @clock: monotonic time in ns, read once per batch; NULL means
 *	CLOCK_MONOTONIC_COARSE (tests pass a fake clock)
 * @clock_arg: argument for @clock
 */
struct sw_config {
	uint32_t fdb_max;
	uint32_t port_mac_limit;
	uint32_t ageing_s;
	uint64_t (*clock)(void *arg);
	void *clock_arg;
};

/* Bounds sw_create() accepts, so a bad config cannot ask for absurd memory. */
#define SW_FDB_MAX_LIMIT   (1U << 20)
#define SW_AGEING_MAX_S	   1000000U /* Linux caps ageing_time at 1e6 s, too */
#define SW_DEFAULT_MAC_LIM 64
#define SW_DEFAULT_FDB_MAX (SW_MAX_PORTS * SW_DEFAULT_MAC_LIM)
#define SW_DEFAULT_AGEING  300

/**
 * struct sw_stat_desc - one counter in a statistics table
 * @name: Linux-style name, e.g. "rx_packets"
 * @offset: offset of its _Atomic uint64_t in the statistics structure
 */
struct sw_stat_desc {
	const char *name;
	size_t offset;
};

/**
 * struct sw_stats - switch-wide counters
 * @fdb_entries: MACs in the table (a gauge)
 * @fdb_aged: entries removed by sw_fdb_age()
 * @fdb_full: learn attempts refused because the table or a bucket was full
 */
struct sw_stats {
	_Atomic uint64_t fdb_entries;
	_Atomic uint64_t fdb_aged;
	_Atomic uint64_t fdb_full;
};

/**
 * sw_config_init() - fill @cfg with the defaults
 * @cfg: the configuration to fill
 */
void sw_config_init(struct sw_config *cfg);

/**
 * sw_create() - create a switch with no ports
 * @cfg: limits, or NULL for the defaults
 * @out: the new switch
 *
 * Draws a random SipHash key for the FDB so a guest cannot choose MACs that
 * collide.
 *
 * Return: 0, -EINVAL for a configuration out of bounds, -ENOMEM, or -EIO if
 * libsodium cannot initialise.
 */
int sw_create(const struct sw_config *cfg, struct sw **out);

/**
 * sw_destroy() - free a switch and the ports still on it
 * @sw: the switch, or NULL
 *
 * No sw_forward() may run or start.  The ports' xmit() is not called.
 */
void sw_destroy(struct sw *sw);

/**
 * sw_port_add() - add a port
 * @sw: the switch
 * @name: its name, shorter than SW_PORT_NAME_MAX, and no other port's:
 *	`pvnet capture` and `pvnet status` find a port by its name
 * @ops: callbacks, valid until sw_port_del() returns
 * @priv: the port type's pointer, stored in the port
 * @out: the new port; it may receive frames as soon as this returns
 *
 * Return: 0, -EINVAL (no name, no xmit), -ENAMETOOLONG, -EEXIST (a port
 * of that name is on the switch; a deleted port's name is free again once
 * sw_port_del() returned), -ENOSPC (all SW_MAX_PORTS numbers in use) or
 * -ENOMEM.
 */
int sw_port_add(struct sw *sw, const char *name, const struct sw_port_ops *ops, void *priv,
		struct sw_port **out);

/**
 * sw_port_del() - remove a port, its MACs, and free it
 * @sw: the switch
 * @p: the port; its owner no longer calls sw_forward() with it
 *
 * Waits for the sw_forward() calls in progress on other threads (a grace
 * period), so that none of them still uses @p, then frees it.  Its number
 * may then be reused.
 *
 * Return: 0, -EINVAL if @p is not a port of @sw, or -EDEADLK when called
 * from inside sw_forward() (an xmit callback).
 */
int sw_port_del(struct sw *sw, struct sw_port *p);

/**
 * sw_port_set_mac_limit() - change how many MACs one port may have learned
 * @p: the port
 * @limit: new limit; MACs already above it stay until they age out
 */
void sw_port_set_mac_limit(struct sw_port *p, uint32_t limit);

/**
 * sw_forward() - switch a batch of frames that entered by port @in
 * @sw: the switch
 * @in: the input port; the caller is one of its threads
 * @pkts: the frames; the caller's reference to each is consumed
 * @n: number of frames (any number; handled SW_BATCH_MAX at a time)
 *
 * Drops (and counts) runts, frames with an invalid source MAC and frames
 * to 802.1D link-local groups; learns each source MAC on @in within the
 * port's and the table's limits; sends known unicast to its port (dropped
 * if that is @in), and floods broadcast, multicast and unknown unicast to
 * every other port.  Each output port's xmit() is called once per internal
 * batch with its frames in input order, so frames from one caller thread
 * never reorder on any output port.
 *
 * Return: the number of frames at least one port accepted.
 */
unsigned int sw_forward(struct sw *sw, struct sw_port *in, struct sw_pkt **pkts, unsigned int n);

/**
 * sw_now() - the time on the switch's clock (struct sw_config, @clock)
 * @sw: the switch
 *
 * Return: nanoseconds, for sw_fdb_age()
 */
uint64_t sw_now(const struct sw *sw);

/**
 * sw_fdb_age() - forget MACs not seen for the ageing time
 * @sw: the switch
 * @now_ns: current time on the switch's clock (sw_now())
 *
 * Called periodically (e.g. every second) by the control thread: nothing
 * else forgets a MAC but removing its port.
 *
 * Return: the number of entries removed.
 */
unsigned int sw_fdb_age(struct sw *sw, uint64_t now_ns);

/* sw_fdb_report() says each limit's refusals at most this often. */
#define SW_REPORT_EVERY_S 60

/**
 * sw_fdb_report() - log the ports that could not learn, and a full table
 * @sw: the switch
 * @now_ns: current time on the switch's clock (sw_now())
 *
 * A source a port may not learn (the port at its MAC limit, or the table
 * or its bucket full) is counted, and every frame to it is flooded: a
 * cost nobody sees unless told.  For each port whose learn_limit went up,
 * and for the table when fdb_full did, logs a warning with the count
 * since it last did, at most once every SW_REPORT_EVERY_S seconds each
 * (the count then covers the quiet time too).  Called with sw_fdb_age(),
 * by the control thread.
 */
void sw_fdb_report(struct sw *sw, uint64_t now_ns);

/**
 * sw_fdb_lookup() - where is a MAC?
 * @sw: the switch
 * @mac: the address
 * @port_num: its port's number, if found
 *
 * Return: 0 if found, -ENOENT if not.
 */
int sw_fdb_lookup(struct sw *sw, const uint8_t mac[SW_ETH_ALEN], uint16_t *port_num);

/**
 * sw_fdb_count() - number of MACs in the table
 * @sw: the switch
 *
 * Return: the count
 */
unsigned int sw_fdb_count(struct sw *sw);

/**
 * struct sw_fdb_entry - one learned MAC, as sw_fdb_dump() reads it
 * @mac: the address
 * @port: its port's number
 * @age_s: seconds since a frame from it last entered that port (the table
 *	forgets it at the ageing time; a second or so later, as the ager runs
 *	once a second)
 * @port_name: its port's name
 */
struct sw_fdb_entry {
	uint8_t mac[SW_ETH_ALEN];
	uint16_t port;
	uint32_t age_s;
	char port_name[SW_PORT_NAME_MAX];
};

/**
 * sw_fdb_dump() - read the MAC table, a part at a time
 * @sw: the switch
 * @port: only the MACs of the port of this name, or NULL for every port
 * @cursor: where to read from: 0 at first, then what the previous call
 *	left in it; set to where the next call goes on, or to 0 once the
 *	whole table has been read
 * @out: room for @max entries
 * @max: most entries to read, at least 1
 *
 * The table is read in its own (hash) order, without stopping learning: a
 * MAC learned or moved between two calls may be missed or read twice, as
 * a MAC table read while the bridge forwards is.  Port names are taken
 * with the ports' lock held, so none is freed while it is copied.
 *
 * Return: the number of entries written, 0..@max (a call reads on until
 * @out is full or the table ends), -ENOENT if no port is named @port, or
 * -EINVAL for a cursor past the table or a @max of 0.
 */
int sw_fdb_dump(struct sw *sw, const char *port, uint32_t *cursor, struct sw_fdb_entry *out,
		unsigned int max);

/**
 * sw_get_config() - the limits a switch runs with
 * @sw: the switch
 * @cfg: receives its configuration (@clock: the clock it reads)
 */
void sw_get_config(const struct sw *sw, struct sw_config *cfg);

/**
 * sw_port_stats_names() - the per-port counter table
 * @n: set to the number of counters
 *
 * Return: @n descriptors, offsets into struct sw_port_stats
 */
const struct sw_stat_desc *sw_port_stats_names(unsigned int *n);

/**
 * sw_port_stats_get() - read every per-port counter, in table order
 * @p: the port
 * @vals: room for the number of counters sw_port_stats_names() reports
 */
void sw_port_stats_get(const struct sw_port *p, uint64_t *vals);

/**
 * sw_stats_names() - the switch-wide counter table
 * @n: set to the number of counters
 *
 * Return: @n descriptors, offsets into struct sw_stats
 */
const struct sw_stat_desc *sw_stats_names(unsigned int *n);

/**
 * sw_stats_get() - read every switch-wide counter, in table order
 * @sw: the switch
 * @vals: room for the number of counters sw_stats_names() reports
 */
void sw_stats_get(struct sw *sw, uint64_t *vals);

/**
 * sw_stat_read() - read one counter through its descriptor
 * @base: the statistics structure (struct sw_port_stats or struct sw_stats)
 * @d: the descriptor
 *
 * Return: the counter's value (relaxed load)
 */
uint64_t sw_stat_read(const void *base, const struct sw_stat_desc *d);

/*
 * Capture (`pvnet capture`): a copy of every frame that enters a port
 * (SW_CAPTURE_IN: handed to the switch, before any check, as tcpdump sees
 * what an interface received) or leaves it (SW_CAPTURE_OUT: handed to the
 * port's xmit()), written to a socket as records: a struct sw_capture_hdr,
 * then the frame's first bytes (at most the snap length), then zeros up to
 * a multiple of SW_CAPTURE_ALIGN bytes.  The records of a batch are packed
 * into datagrams of at most SW_CAPTURE_DGRAM bytes (a larger record has
 * one to itself), all sent with one nonblocking sendmmsg() per batch and
 * direction from the thread that forwards them; when the socket is full
 * they are dropped and counted, never waited for.  A port has at most one
 * capture.
 */
#define SW_CAPTURE_IN	   1U
#define SW_CAPTURE_OUT	   2U
#define SW_CAPTURE_SNAPMAX 262144U /* tcpdump's default and largest snap length */
#define SW_CAPTURE_ALIGN   8U
#define SW_CAPTURE_DGRAM   65536U

/**
 * struct sw_capture_hdr - the head of each capture record (host byte order)
 * @ts_ns: when the switch saw the frame, CLOCK_REALTIME nanoseconds
 * @len: the frame's whole length
 * @dir: SW_CAPTURE_IN or SW_CAPTURE_OUT
 * @flags: the frame's offload flags (SW_PKT_CSUM_BLANK: its checksum is
 *	not filled in yet, as tcpdump shows an offloaded frame on Linux)
 * @gso_type: enum sw_gso_type
 * @reserved: 0
 * @gso_size: GSO segment size, 0 without GSO
 * @port: the number of the port captured
 * @caplen: the frame bytes that follow: min(@len, snap length)
 */
struct sw_capture_hdr {
	uint64_t ts_ns;
	uint32_t len;
	uint8_t dir;
	uint8_t flags;
	uint8_t gso_type;
	uint8_t reserved;
	uint16_t gso_size;
	uint16_t port;
	uint32_t caplen;
};

/**
 * struct sw_capture_stats - what a capture did
 * @captured: frames the socket took
 * @dropped: frames it had no room for (or refused: the reader went away)
 */
struct sw_capture_stats {
	uint64_t captured;
	uint64_t dropped;
};

/**
 * sw_capture_start() - start copying the frames of a port to a socket
 * @sw: the switch
 * @port: the port's name
 * @dir: SW_CAPTURE_IN, SW_CAPTURE_OUT or both
 * @snaplen: most bytes of a frame to copy, 1..SW_CAPTURE_SNAPMAX
 * @fd: a connected SOCK_SEQPACKET or SOCK_DGRAM socket; the capture owns it
 *	from a successful return on and closes it in sw_capture_stop()
 * @out: the capture
 *
 * When the port is removed first, the capture stops by itself: the switch
 * shuts @fd down, so its reader sees end of file; sw_capture_stop() is
 * still the one that frees it.
 *
 * Return: 0, -EINVAL (bad @dir or @snaplen), -ENOENT (no such port),
 * -EBUSY (the port is being captured already) or -ENOMEM.
 */
int sw_capture_start(struct sw *sw, const char *port, unsigned int dir, uint32_t snaplen, int fd,
		     struct sw_capture **out);

/**
 * sw_capture_stop() - stop a capture, close its socket and free it
 * @sw: the switch
 * @cap: the capture, or NULL
 * @st: receives its final counters, or NULL
 *
 * Waits until no sw_forward() still uses it (not from inside one).
 */
void sw_capture_stop(struct sw *sw, struct sw_capture *cap, struct sw_capture_stats *st);

/**
 * sw_capture_stats_get() - a capture's counters so far
 * @cap: the capture
 * @st: receives them
 */
void sw_capture_stats_get(const struct sw_capture *cap, struct sw_capture_stats *st);

/**
 * sw_capture_info() - what a capture takes
 * @cap: the capture
 * @dir: receives SW_CAPTURE_IN, SW_CAPTURE_OUT or both
 * @snaplen: receives its snap length
 */
void sw_capture_info(const struct sw_capture *cap, unsigned int *dir, uint32_t *snaplen);

/**
 * sw_capture_port() - the port a capture is on
 * @cap: the capture
 *
 * Return: the port's name as it was when the capture started
 */
const char *sw_capture_port(const struct sw_capture *cap);

/**
 * sw_capture_ended() - has the capture's port gone away?
 * @sw: the switch
 * @cap: the capture
 *
 * Its reader has seen end of file then; the capture still holds its
 * counters until sw_capture_stop().
 *
 * Return: true once the port is gone
 */
bool sw_capture_ended(struct sw *sw, const struct sw_capture *cap);

#endif /* PVNET_SWITCH_SWITCH_H */
