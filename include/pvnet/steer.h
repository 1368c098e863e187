/* SPDX-License-Identifier: MIT */
/* steer.h - libpvnet steering: the control ring (RX queues) and TX queue policies */
#ifndef PVNET_STEER_H
#define PVNET_STEER_H

/*
 * Included by <pvnet/pvnet.h>; include that one.  How a vif's frames are
 * spread over its queues, in both directions (docs/steering.md):
 *
 *   guest TX ──policy (hash | xps | xps-safe)──▶ TX queue i ──▶ pvnetd
 *   pvnetd ──Toeplitz + mapping table (control ring) | flow hash──▶ RX queue j
 *
 * Whatever the choice, pvnetd delivers the frames of one TX queue to any one
 * RX queue in the order they were sent; reordering can only come from the
 * TX policy moving a flow between queues while frames of it are in flight,
 * which hash and xps-safe never do.
 */

#include <pvnet/pvnet.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ---------------------------------------------------------------------------
 * Receive-side steering: the control ring (docs/steering.md)
 *
 * With cfg.ctrl_ring and a backend offering feature-ctrl-ring, the vif has a
 * control ring through which it tells the backend how to pick the RX queue
 * of each frame: Xen's Toeplitz hash over the hash types enabled, then a
 * mapping table from hash to queue (Windows RSS; xen/io/netif.h, "Control ring").  These are
 * control calls: one at a time, not concurrently with other control calls;
 * each waits (bounded by timeout_ms) for the backend's answer.  They return
 * -EOPNOTSUPP without a control ring, or when the backend answers
 * NOT_SUPPORTED; -EINVAL when it answers INVALID_PARAMETER.
 */

/* Hash algorithms: the values of XEN_NETIF_CTRL_HASH_ALGORITHM_*. */
#define PVNET_HASH_ALG_NONE	0u
#define PVNET_HASH_ALG_TOEPLITZ 1u
/* Hash types (a mask for the flags; PVNET_PKT_HASH frames carry the bit *number*). */
#define PVNET_HASH_IPV4	    (1u << 0) /* source and destination address */
#define PVNET_HASH_IPV4_TCP (1u << 1) /* addresses and TCP ports */
#define PVNET_HASH_IPV6	    (1u << 2)
#define PVNET_HASH_IPV6_TCP (1u << 3)
/* Longest key the backend takes (Linux netback: 40 bytes, the standard RSS key). */
#define PVNET_HASH_KEY_MAX 40u

/**
 * pvnet_vif_has_ctrl_ring() - whether the vif has a control ring
 * @vif: the vif
 *
 * Return: true when cfg.ctrl_ring was asked for and the backend offered one
 */
bool pvnet_vif_has_ctrl_ring(const struct pvnet_vif *vif);

/**
 * pvnet_vif_ctrl() - one raw control request (XEN_NETIF_CTRL_TYPE_*)
 * @vif: the vif
 * @type: the request type
 * @data0: data[0]
 * @data1: data[1]
 * @data2: data[2]
 * @out: receives the response's data, or NULL
 *
 * For tools and tests; the calls below are built on it.
 *
 * A call that times out leaves its request on the ring.  Responses are
 * matched to requests by id, in whatever order the backend gives them
 * (netif.h does not promise request order): the late answer to a request
 * whose call gave up is consumed and dropped by a later call.  A request
 * that names the data page (pvnet_vif_ctrl_page_ref()'s grant as the page
 * of SET_HASH_KEY, SET_HASH_MAPPING or ADD/DEL_GREF_MAPPING) holds the page
 * until it is answered, timed out or not: netif.h requires the page to
 * stay as it is until then.
 *
 * Return: the response status (XEN_NETIF_CTRL_STATUS_*, >= 0), or
 * -EOPNOTSUPP (no control ring), -ETIMEDOUT, -EBUSY (a ring's worth of
 * requests unanswered, or the request names the data page while an earlier
 * request naming it is unanswered), -EIO (the backend answered an id never
 * asked for, answered one twice, or answered more than was asked: the vif
 * is then broken), -ENOTCONN
 */
int pvnet_vif_ctrl(struct pvnet_vif *vif, uint16_t type, uint32_t data0, uint32_t data1,
		   uint32_t data2, uint32_t *out);

/**
 * pvnet_vif_ctrl_page_ref() - the grant of the vif's control data page
 * @vif: the vif
 * @page: receives the page (4096 bytes, granted read-only to the backend)
 *
 * What pvnet_vif_set_hash_key() and _mapping() fill before their request;
 * pvnet_vif_ctrl() callers may fill it too, after this call succeeded and
 * before their request.  While a request naming the page is unanswered
 * (its call timed out) the page is the backend's to read and is not given
 * out: answers already on the ring are taken first, so -EBUSY lasts until
 * the backend answers that request.
 *
 * Return: the grant reference, -EOPNOTSUPP without a control ring, -EBUSY
 * (a request naming the page is unanswered; -ENOTCONN or -EIO instead
 * when the vif is down)
 */
int64_t pvnet_vif_ctrl_page_ref(struct pvnet_vif *vif, void **page);

/**
 * pvnet_vif_set_hash_algorithm() - PVNET_HASH_ALG_NONE or _TOEPLITZ
 * @vif: the vif
 * @alg: the algorithm; NONE gives the backend's own flow hash back
 *
 * Return: 0 or -errno (see above)
 */
int pvnet_vif_set_hash_algorithm(struct pvnet_vif *vif, uint32_t alg);

/**
 * pvnet_vif_get_hash_flags() - the hash types the backend supports
 * @vif: the vif
 * @flags: receives the PVNET_HASH_* mask
 *
 * Return: 0 or -errno (-EOPNOTSUPP before an algorithm is set)
 */
int pvnet_vif_get_hash_flags(struct pvnet_vif *vif, uint32_t *flags);

/**
 * pvnet_vif_set_hash_flags() - enable hash types
 * @vif: the vif
 * @flags: PVNET_HASH_* mask; TCP frames use the TCP type when it is
 *	enabled, everything else the address type; 0 disables hashing
 *
 * Return: 0 or -errno (-EINVAL before an algorithm is set: pvnetd and
 * Linux's netback answer INVALID_PARAMETER)
 */
int pvnet_vif_set_hash_flags(struct pvnet_vif *vif, uint32_t flags);

/**
 * pvnet_vif_set_hash_key() - set the Toeplitz key
 * @vif: the vif
 * @key: the key
 * @len: its length, at most PVNET_HASH_KEY_MAX (shorter keys are zero-padded)
 *
 * The key goes in the data page (pvnet_vif_ctrl_page_ref()).
 *
 * Return: 0 or -errno; -ENOSPC for a key longer than the backend takes
 * (pvnetd: 40 bytes; Linux's netback refuses one with INVALID_PARAMETER,
 * -EINVAL); -EBUSY while an earlier key or mapping request that timed out
 * is unanswered (the page is not written then)
 */
int pvnet_vif_set_hash_key(struct pvnet_vif *vif, const uint8_t *key, uint32_t len);

/**
 * pvnet_vif_get_hash_mapping_size() - the largest mapping table the backend takes
 * @vif: the vif
 * @size: receives it (128 for pvnetd and Linux)
 *
 * Return: 0 or -errno
 */
int pvnet_vif_get_hash_mapping_size(struct pvnet_vif *vif, uint32_t *size);

/**
 * pvnet_vif_set_hash_mapping() - set the table from hash to RX queue
 * @vif: the vif
 * @table: @n queue numbers, each below pvnet_vif_queues(); frame with hash
 *	h goes to queue table[h % n]
 * @n: entries, 0..pvnet_vif_get_hash_mapping_size(); 0 means h % queues
 *
 * Sends SET_HASH_MAPPING_SIZE then one SET_HASH_MAPPING of the whole table,
 * passed in the data page (pvnet_vif_ctrl_page_ref()).
 *
 * Return: 0 or -errno; -EBUSY (nothing sent) when @n > 0 while an
 * earlier key or mapping request that timed out is unanswered
 */
int pvnet_vif_set_hash_mapping(struct pvnet_vif *vif, const uint32_t *table, uint32_t n);

/*
 * ---------------------------------------------------------------------------
 * Transmit-side steering: which TX queue a frame goes out on (docs/steering.md)
 *
 * Policies, by name (pvnet_steering_parse()):
 *   "hash"      the flow hash of the frame's L2/L3/L4 header, modulo the
 *               queue count: a flow never changes queue (the default);
 *   "xps"       the queue of the CPU the sending thread runs on,
 *               sched_getcpu() % queues, as Linux XPS does for traffic
 *               without a socket: a flow follows its sender from CPU to
 *               CPU and may be reordered when it does;
 *   "xps-safe"  XPS with in-flight tracking: a flow moves to its CPU's
 *               queue only when none of its frames is still outstanding
 *               (no TX response yet) on the old one - Linux's ooo_okay
 *               rule applied to the ring.  Flows are tracked in a bounded
 *               hashed table (PVNET_STEER_FLOWS entries); flows that share
 *               an entry move together, which is never less safe.
 *
 * Threads: pvnet_send_flow() is the one data call several threads may make
 * at once on one vif.  It sends each run of consecutive frames bound for
 * one queue under that queue's lock (once per run, never per frame), so a
 * queue is still driven by one thread at a time.  Once
 * pvnet_vif_set_steering() has been called, every other data call on the
 * vif takes the same per-queue lock once per call, so receiving on a queue
 * (or using pvnet_send() on it) may run alongside pvnet_send_flow() senders.
 * Without pvnet_vif_set_steering() the vif keeps the lock-free
 * one-thread-per-queue contract above and pvnet_send_flow() returns -EINVAL.
 */

/* Steering policies (pvnet_steering_parse(), pvnet_vif_set_steering()). */
enum pvnet_steering {
	PVNET_STEER_HASH = 0,
	PVNET_STEER_XPS = 1,
	PVNET_STEER_XPS_SAFE = 2,
};
/* Flow-table entries of xps-safe: a power of two, 16 KiB per vif. */
#define PVNET_STEER_FLOWS 4096u

/**
 * pvnet_steering_parse() - a policy from its name
 * @name: "hash", "xps" or "xps-safe"
 *
 * Return: the enum pvnet_steering value, or -EINVAL
 */
int pvnet_steering_parse(const char *name);

/**
 * pvnet_steering_name() - the name of a policy
 * @policy: an enum pvnet_steering value
 *
 * Return: "hash", "xps", "xps-safe", or NULL for an unknown value
 */
const char *pvnet_steering_name(int policy);

/**
 * pvnet_vif_set_steering() - choose the TX steering policy; enables pvnet_send_flow()
 * @vif: the vif (a control call: no data call may run meanwhile)
 * @policy: an enum pvnet_steering value
 *
 * Forgets every flow's in-flight state when the policy changes.
 *
 * Return: 0, or -EINVAL for an unknown policy
 */
int pvnet_vif_set_steering(struct pvnet_vif *vif, int policy);

/**
 * pvnet_vif_steering() - the current TX steering policy
 * @vif: the vif
 *
 * Return: an enum pvnet_steering value (PVNET_STEER_HASH by default)
 */
int pvnet_vif_steering(const struct pvnet_vif *vif);

/**
 * typedef pvnet_cpu_fn - where the calling thread runs (for xps, xps-safe)
 * @arg: the argument given with it
 *
 * Return: a CPU number (>= 0), or negative if unknown (then queue 0)
 */
typedef int (*pvnet_cpu_fn)(void *arg);

/**
 * pvnet_vif_set_cpu_source() - replace sched_getcpu() (tests, simulations)
 * @vif: the vif (a control call)
 * @fn: the function, or NULL for sched_getcpu()
 * @arg: its argument
 */
void pvnet_vif_set_cpu_source(struct pvnet_vif *vif, pvnet_cpu_fn fn, void *arg);

/**
 * pvnet_vif_pick_queue() - the TX queue the policy picks for one frame now
 * @vif: the vif
 * @frame: the frame (its Ethernet, IP and TCP/UDP headers are read)
 * @len: its length
 *
 * For applications that call pvnet_send() themselves.  Thread safe.  For
 * xps-safe it returns the flow's current queue while frames that
 * pvnet_send_flow() sent are in flight, else the CPU's queue; it does not
 * track frames sent with pvnet_send().
 *
 * Return: a queue below pvnet_vif_queues(), or -ENOTCONN
 */
int pvnet_vif_pick_queue(struct pvnet_vif *vif, const void *frame, uint32_t len);

/**
 * pvnet_send_flow() - copy and queue frames, each on the queue its policy picks
 * @vif: the vif (pvnet_vif_set_steering() called)
 * @pkts: the frames
 * @n: how many
 *
 * Thread safe (see above).  Frames go out in order per queue; it stops at
 * the first frame whose queue is full.
 *
 * Return: the number of frames queued, or -EINVAL (bad first frame, or no
 * pvnet_vif_set_steering()), -ENOTCONN, -EIO
 */
int pvnet_send_flow(struct pvnet_vif *vif, const struct pvnet_pkt *pkts, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* PVNET_STEER_H */
