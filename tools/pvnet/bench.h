// SPDX-License-Identifier: MIT
/* bench.h - pvnet bench: shared types of the command, its frontend processes and its pure parts */
#ifndef PVNET_TOOLS_BENCH_H
#define PVNET_TOOLS_BENCH_H

#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <jansson.h>

/* Frame sizes the bench accepts: a minimum Ethernet frame (without FCS) up to netif's 16-bit size. */
#define BENCH_MIN_FRAME 60u
#define BENCH_MAX_FRAME 65535u
/* Most values in one --frame-size/--queues/--tx-mode list (a sweep, not a data set). */
#define BENCH_MAX_LIST 32u
/* A tx mode's name: "copy", "map", "persistent" (pvnetd --tx-mode), or "unknown". */
#define BENCH_MODE_LEN 16u
/* Most tx modes one invocation runs: copy, map and persistent (a mode twice measures nothing new). */
#define BENCH_MAX_MODES 3u
/* Most flows (= sender queues) a run can have: PVNET_MAX_QUEUES. */
#define BENCH_MAX_FLOWS 16u
/*
 * --steering: how the sender picks a frame's TX queue.  BENCH_STEER_QUEUE
 * (the default, "queue") is one sender thread per queue, each on its own
 * queue; the others are the library's policies (enum pvnet_steering, same
 * numbers, by name): the vif gets pvnet_vif_set_steering() and every sender
 * thread sends its flow with pvnet_send_flow().
 */
#define BENCH_STEER_QUEUE    (-1)
#define BENCH_STEER_HASH     0
#define BENCH_STEER_XPS	     1
#define BENCH_STEER_XPS_SAFE 2
/* --migrate: a sender thread moves to the next online CPU this often. */
#define BENCH_MIGRATE_US 2000u

/*
 * Frame layout (all multi-byte fields big endian except the bench header):
 *
 *   0  Ethernet: dst (B's MAC), src (A's MAC), type 0x0800
 *  14  IPv4: 10.66.0.1 -> 10.66.0.2, UDP, total length = frame - 14
 *  34  UDP: source port BENCH_UDP_PORT + flow, destination BENCH_UDP_PORT
 *  42  bench header: magic "PVBN", flow (le16), 0 (le16), seq (le64)
 *  58  payload: bench_pattern(flow, seq, offset) for every offset
 *
 * IPv4/UDP makes each flow its own 5-tuple, so netback's RX hash can
 * spread flows over the receiver's queues as it would real traffic.
 */
#define BENCH_L2L4_LEN	  42u
#define BENCH_HDR_LEN	  58u
#define BENCH_MAGIC	  0x4e425650u /* "PVBN" read little endian */
#define BENCH_UDP_PORT	  0xbe00u
#define BENCH_STAMP_SPAN  4096u /* verify=sampled: a stamp around every 4 KiB slot boundary */
#define BENCH_STAMP_LEN	  16u
#define BENCH_ROVER_EVERY 64u /* verify=sampled: every 64th frame of a flow carries a rover line */
#define BENCH_ROVER_LEN	  64u

/**
 * enum bench_verify - how much of each payload the sender writes and the receiver checks
 * @BENCH_VERIFY_SAMPLED: headers, the first 64 payload bytes, 32 bytes around every
 *	4 KiB boundary of the frame (both edges of every slot) and the last 16 bytes
 * @BENCH_VERIFY_FULL: every byte
 */
enum bench_verify {
	BENCH_VERIFY_SAMPLED,
	BENCH_VERIFY_FULL,
};

/**
 * struct bench_tmpl - the constant first 42 bytes of one flow's frames
 * @b: Ethernet + IPv4 + UDP headers
 */
struct bench_tmpl {
	uint8_t b[BENCH_L2L4_LEN];
};

/**
 * struct bench_flow - the receiver's state of one flow
 * @next: the sequence number expected next
 * @seen: a frame of this flow has arrived
 */
struct bench_flow {
	uint64_t next;
	bool seen;
};

/**
 * enum bench_seq - what one sequence number says about its flow
 * @BENCH_SEQ_IN_ORDER: the expected one
 * @BENCH_SEQ_GAP: later than expected: the frames between are missing (or late)
 * @BENCH_SEQ_OUT_OF_ORDER: earlier than one already seen: reordered (or duplicated)
 */
enum bench_seq {
	BENCH_SEQ_IN_ORDER,
	BENCH_SEQ_GAP,
	BENCH_SEQ_OUT_OF_ORDER,
};

/**
 * struct bench_counts - what one side of a run counted (cumulative, since the run started)
 * @frames: frames sent (A) or received intact or not (B)
 * @bytes: their bytes, Ethernet header included
 * @corrupt: B: frames whose length, headers or payload pattern were wrong
 * @out_of_order: B: frames whose flow's sequence went backwards
 * @gaps: B: frames skipped over by a sequence jump (drops, or late frames)
 * @front_tx_notify: netfront event-channel notifications sent for TX (pvnet_queue_stats)
 * @front_rx_notify: ... for RX (new buffers posted, feature-rx-notify)
 * @front_tx_errors: TX requests the backend answered with an error
 * @front_rx_errors: RX frames the backend marked as errors
 * @front_tx_ring_full: sends stopped by a full ring (back-pressure, not a drop)
 * @tx_copy_fallback: A, zero-copy API: frames sent with pvnet_send() because fewer
 *	TX buffers were free than a frame needs (the call that arms the wakeup then)
 * @cpu_us: CPU time (user + system) of the whole process, getrusage(RUSAGE_SELF)
 * @t_ns: CLOCK_MONOTONIC of the snapshot: the midpoint between asking the threads and
 *	the last answer (0: not taken)
 */
struct bench_counts {
	uint64_t frames;
	uint64_t bytes;
	uint64_t corrupt;
	uint64_t out_of_order;
	uint64_t gaps;
	uint64_t front_tx_notify;
	uint64_t front_rx_notify;
	uint64_t front_tx_errors;
	uint64_t front_rx_errors;
	uint64_t front_tx_ring_full;
	uint64_t tx_copy_fallback;
	uint64_t cpu_us;
	uint64_t t_ns;
};

/* Netback drop reasons (pvnetd `status` per-queue counters) reported one by one. */
#define BENCH_BACK_NREASONS 17u
extern const char *const bench_back_reasons[BENCH_BACK_NREASONS];

/**
 * struct bench_back - netback's counters of the two vifs of a run, summed over queues
 * @ok: both vifs were found in the status reply
 * @tx_zerocopy_sent: A's frames forwarded with a mapped payload (map mode)
 * @tx_copied: A's frames grant-copied (copy mode)
 * @notifications: event-channel notifications netback sent to A and B
 * @tx_dropped: netback's total of A's dropped TX frames
 * @rx_dropped: netback's total of B's dropped RX frames
 * @reason: per drop reason, in bench_back_reasons[] order, both vifs
 * @grant_known: every queue of both vifs had the grant counters below (a pvnetd
 *	without them leaves this false and the grant figures are unknown: JSON null)
 * @grant_copy_ops: grant-copy operations netback made for both vifs
 * @grant_map_ops: grant-map operations
 * @grant_unmap_ops: grant-unmap operations
 * @grant_batches: batched grant hypercalls (one batch carries many operations)
 * @t_ns: CLOCK_MONOTONIC at the midpoint of the status call that read them
 */
struct bench_back {
	bool ok;
	uint64_t t_ns;
	bool grant_known;
	uint64_t grant_copy_ops;
	uint64_t grant_map_ops;
	uint64_t grant_unmap_ops;
	uint64_t grant_batches;
	uint64_t tx_zerocopy_sent;
	uint64_t tx_copied;
	uint64_t notifications;
	uint64_t tx_dropped;
	uint64_t rx_dropped;
	uint64_t reason[BENCH_BACK_NREASONS];
};

/**
 * struct bench_result - one run, as measured (inputs of the pure report functions)
 * @frame_size: bytes per frame
 * @queues: queues asked for (and flows sent)
 * @queues_got: queues the vifs negotiated
 * @tx_mode: "map", "copy", "persistent", or "unknown"
 * @tx_mode_source: how @tx_mode is known ("pvnetd --tx-mode", "pvnetd status", "--tx-mode",
 *	"inferred from netback counters ...", "unknown")
 * @api: "zerocopy" or "copy"
 * @verify: how much payload was checked
 * @window_s: length of the timed window in seconds, as the conductor saw it
 * @a0: sender counters at the start of the window, @a1 at its end, @a_end after the run
 * @b0: receiver counters at the start, @b1 at the end, @b_end after draining
 * @back0: netback counters at the start, @back1 at the end, @back_end after draining
 * @pvnetd_cpu_us: pvnetd's CPU time between its two reads, or -1 if unknown
 * @pvnetd_cpu_t0_ns: CLOCK_MONOTONIC of the first read (0 if not taken)
 * @pvnetd_cpu_t1_ns: ... of the second
 * @pvnetd_cpu_clock: read from pvnetd's process CPU clock (ns), not /proc (ticks)
 * @shared_pvnetd: a pvnetd the bench did not start (-d): other guests' frames may
 *	be dropped at the receiver's vif and counted with the stream's
 * @sys_busy_us: CPU time all CPUs spent busy in the window (/proc/stat), or -1 if unknown
 * @sys_steal_us: CPU time the hypervisor stole from this VM in the window, or -1
 * @learn_seen: A received B's learning broadcast before sending
 * @steering: BENCH_STEER_QUEUE or a policy (BENCH_STEER_*)
 * @migrate: sender threads hopped between CPUs (--migrate)
 * @host_rtt_cpus: the CPUs @host_rtt_ns was sampled between, -1 when not sampled
 * @host_rtt_ns: the cache-line round trip between them (hostrtt.h) just before
 *	the senders started and just after the run, 0 when not sampled
 * @error: why the run failed, or "" when it did not
 */
struct bench_result {
	uint32_t frame_size;
	unsigned int queues;
	unsigned int queues_got;
	char tx_mode[BENCH_MODE_LEN];
	const char *tx_mode_source;
	const char *api;
	enum bench_verify verify;
	double window_s;
	struct bench_counts a0, a1, a_end, b0, b1, b_end;
	struct bench_back back0, back1, back_end;
	int64_t pvnetd_cpu_us;
	uint64_t pvnetd_cpu_t0_ns, pvnetd_cpu_t1_ns;
	bool pvnetd_cpu_clock;
	bool shared_pvnetd;
	int64_t sys_busy_us, sys_steal_us;
	bool learn_seen;
	int steering;
	bool migrate;
	const char *placement; /* "split" or "spread" (bench_place.h) */
	char pvnetd_cpus[64];  /* pvnetd's CPUs as it ran ("0"), "" if not pinned */
	char guest_cpus[64];   /* the frontends' CPUs ("1"), "" if not pinned */
	int host_rtt_cpus[2];
	unsigned int host_rtt_ns[2];
	char error[256];
};

/**
 * struct bench_figures - the figures of one run derived from a struct bench_result
 *
 * The grant figures are per 1000 received frames, over both vifs' queues, NaN
 * when pvnetd's status lacks the counters.  KByte/s use netio's KByte (1024 bytes).
 */
struct bench_figures {
	double window_s, tx_window_s; /* the receiver's, the sender's (tx_kbyte_s) */
	uint64_t tx_frames, rx_frames, bytes, tx_bytes;
	double gbit_s, mpps, cpu_us_per_kb, notifications_per_1000;
	double tx_kbyte_s, rx_kbyte_s;
	double grant_ops_per_1000, grant_map_per_1000, grant_unmap_per_1000, grant_batches_per_1000;
	double cpu_s_tx, cpu_s_rx, cpu_s_pvnetd;
	double cpu_s_busy, cpu_s_steal, cpu_s_others;
	uint64_t notifications, notify_front_tx, notify_front_rx, notify_back;
	uint64_t dropped, corrupt, out_of_order, gaps;
	int64_t unaccounted;
};

/* bench_stats.c: pure */
enum bench_seq bench_seq_check(struct bench_flow *f, uint64_t seq, uint64_t *skipped);
double bench_gbit_s(uint64_t bytes, double secs);
double bench_mpps(uint64_t frames, double secs);
double bench_service_demand(uint64_t cpu_us, uint64_t bytes);
double bench_per_1000(uint64_t events, uint64_t frames);
void bench_figures(const struct bench_result *r, struct bench_figures *f);
bool bench_run_check(struct bench_result *r);
json_t *bench_result2json(const struct bench_result *r);
json_t *bench_doc2json(json_t *machine, const char *command, json_t *results, json_t *sections);
void bench_table_header(char *buf, size_t len);
void bench_table_row(const struct bench_result *r, char *buf, size_t len);
int bench_parse_sizes(const char *s, uint32_t *out, unsigned int max, char *err, size_t errlen);
int bench_parse_queues(const char *s, unsigned int *out, unsigned int max, char *err,
		       size_t errlen);
int bench_parse_modes(const char *s, char (*out)[BENCH_MODE_LEN], unsigned int max, char *err,
		      size_t errlen);
int bench_parse_seconds(const char *s, double *out);
int bench_parse_steering(const char *s, int *out, unsigned int max, char *err, size_t errlen);
const char *bench_steering_name(int steering);
int bench_procstat_ticks(const char *text, uint64_t *ticks);
int bench_procstat_cpu(const char *text, uint64_t *busy, uint64_t *steal);
void bench_back_from_status(const json_t *status, unsigned int domid_a, unsigned int domid_b,
			    struct bench_back *out);

/*
 * bench_report.c and bench_output.c: pure.  The sections of the default run (docs/benchmarks.md):
 * each repeats its points (configurations) --repeat times, reports the
 * median and min..max of every figure, and a one-line verdict against the
 * field report it answers (docs/field-reports.md).
 */
/*
 * Rounds of the vcpus and tx_mode sections without --repeat: their
 * verdicts compare their points with each other, and one 1 s run of a
 * point can fall to half when the host moves a vCPU (docs/benchmarks.md,
 * "Where the host puts the vCPUs"); the median of three interleaved
 * rounds does not.
 */
#define BENCH_COMPARE_REPEAT 3u
/* Most repetitions of one point (--repeat). */
#define BENCH_MAX_REPEAT 15u

/**
 * struct bench_stat - median and range of repeated figures
 * @median: the middle value (mean of the two middle ones for an even count), NaN when @n is 0
 * @min: the smallest, NaN when @n is 0
 * @max: the largest, NaN when @n is 0
 * @n: how many values were numbers (NaN values are left out)
 */
struct bench_stat {
	double median, min, max;
	unsigned int n;
};

/* The figures a point keeps per run, in this order; their JSON keys are bench_fig_names[]. */
enum bench_fig {
	BENCH_FIG_GBIT_S,
	BENCH_FIG_MPPS,
	BENCH_FIG_TX_KBYTE_S,
	BENCH_FIG_RX_KBYTE_S,
	BENCH_FIG_CPU_US_PER_KB,
	BENCH_FIG_NOTIFICATIONS_PER_1000,
	BENCH_FIG_GRANT_OPS_PER_1000,
	BENCH_FIG_GRANT_MAP_PER_1000,
	BENCH_FIG_GRANT_UNMAP_PER_1000,
	BENCH_FIG_GRANT_BATCHES_PER_1000,
	BENCH_FIG_DROPPED,
	BENCH_FIG_OUT_OF_ORDER,
	BENCH_FIG_OTHERS_CPU_S, /* machine_cpu_s.others: CPU other processes took in the window */
	BENCH_FIG_HOST_RTT_BEFORE_NS, /* host_rtt_ns.before, NaN when not sampled */
	BENCH_FIG_HOST_RTT_AFTER_NS,  /* host_rtt_ns.after */
	BENCH_FIG_N,
};
extern const char *const bench_fig_names[BENCH_FIG_N];

/**
 * struct bench_point - one configuration of a section, run --repeat times
 * @frame_size: bytes per frame
 * @queues: queues (= sender and receiver threads)
 * @tx_mode: pvnetd --tx-mode
 * @steering: BENCH_STEER_QUEUE or a policy
 * @migrate: senders hop CPUs
 * @nruns: runs that succeeded (their figures are in @v)
 * @nfailed: runs that failed (@error holds the last reason)
 * @results: indices of every run of this point in the document's `results`
 * @nresults: entries in @results
 * @v: per figure, the value of each successful run
 * @ratio: the section's ratio for this point (vcpus: to 1 queue; tx_mode: to copy;
 *	steering: to xps; sizes: to the field report), NaN when it has none
 * @field: the field report's figure this point is compared with, NaN when none
 * @error: why the last failed run failed
 */
struct bench_point {
	uint32_t frame_size;
	unsigned int queues;
	char tx_mode[BENCH_MODE_LEN];
	int steering;
	bool migrate;
	unsigned int nruns, nfailed;
	int results[BENCH_MAX_REPEAT];
	unsigned int nresults;
	double v[BENCH_FIG_N][BENCH_MAX_REPEAT];
	double ratio;
	double field;
	char error[256];
};

/* The sections, in the order they run and print. */
enum bench_sec {
	BENCH_SEC_SIZES,
	BENCH_SEC_VCPUS,
	BENCH_SEC_TX_MODE,
	BENCH_SEC_STEERING,
	BENCH_SEC_TCP,
	BENCH_SEC_PEERS,
	BENCH_SEC_N,
};
extern const char *const bench_sec_names[BENCH_SEC_N];

/**
 * enum bench_tcp_path - what an iperf3 case of the tcp section goes through
 * @BENCH_TCP_VETH: a veth pair (the kernel's own path: the reference)
 * @BENCH_TCP_PVNET: pvnet attach, pvnetd, pvnet attach
 * @BENCH_TCP_TAPFWD: bench/tapfwd between two TAPs (the cheapest user-space TAP path)
 */
enum bench_tcp_path { BENCH_TCP_VETH, BENCH_TCP_PVNET, BENCH_TCP_TAPFWD };

/**
 * struct bench_tcp_case - one iperf3 case of the tcp section (bench/tcp-vs-veth.sh)
 * @name: "veth-1", "pvnet-1q-1", "tapfwd-1", "veth-4", "pvnet-4q-4"
 * @streams: iperf3 -P
 * @path: what it went through
 * @gbit_s: receiver throughput
 * @sd_us_per_kb: service demand: busy CPU µs of the whole machine per KB received
 * @retrans: TCP retransmits (sender)
 * @ofo: TCPOFOQueue of the receiving namespace during the case
 */
struct bench_tcp_case {
	char name[24];
	unsigned int streams;
	enum bench_tcp_path path;
	double gbit_s, sd_us_per_kb;
	long long retrans, ofo;
};

/**
 * struct bench_peer_row - the peers at one frame size (--peers)
 * @frame_size: bytes per frame
 * @memif_gbit_s: DPDK memif between two dpdk-testpmd, NaN when not measured
 * @memif_mpps: the same in Mpps
 * @veth_gbit_s: kernel veth, iperf3 UDP at this frame size, received, NaN when not measured
 * @veth_mpps: the same in Mpps
 */
struct bench_peer_row {
	uint32_t frame_size;
	double memif_gbit_s, memif_mpps, veth_gbit_s, veth_mpps;
};

#define BENCH_MAX_TCP 8u

/**
 * struct bench_section - one section's points, verdict and fate
 * @id: which section
 * @selected: asked for (--section, or the default set)
 * @skipped: why it did not run ("" when it ran)
 * @pts: its points (frame-level sections), @npts of them
 * @tcp: the tcp section's cases, @ntcp of them
 * @peers: the peers section's rows (one per frame size), @npeers of them; pvnet's own
 *	figures for them are @pts
 * @netns: tcp: the network namespaces it created (and removed), space-separated
 * @placement: tcp: where its script ran the datapath and iperf3 ("split: ...", "spread: ...")
 * @note: a remark printed under the table (e.g. a tx mode pvnetd rejected)
 * @verdict: one line against the field report
 */
struct bench_section {
	enum bench_sec id;
	bool selected;
	unsigned int repeat; /* rounds of its points: --repeat, or the section's default */
	char skipped[256];
	struct bench_point *pts;
	unsigned int npts;
	struct bench_tcp_case tcp[BENCH_MAX_TCP];
	unsigned int ntcp;
	struct bench_peer_row peers[BENCH_MAX_LIST];
	unsigned int npeers;
	char netns[128];
	char placement[128];
	char note[512];
	char verdict[512];
};

/**
 * struct bench_sec_info - what a section is, for people and the JSON
 * @title: one line
 * @field: the field report's figure it answers
 * @ratio_of: what its points' ratio divides
 * @rounds: rounds of its points without --repeat (0: one); BENCH_COMPARE_REPEAT
 *	for a section whose verdict compares its points with each other
 */
struct bench_sec_info {
	const char *title;
	const char *field;
	const char *ratio_of;
	unsigned int rounds;
};
extern const struct bench_sec_info bench_sec_info[BENCH_SEC_N];

void bench_stat_of(const double *v, unsigned int n, struct bench_stat *out);
double bench_point_median(const struct bench_point *p, enum bench_fig fig);
json_t *bench_jnum(double v);
void bench_fmt_ratio(char *b, size_t n, double v);
const struct bench_point *bench_section_find(const struct bench_section *s, uint32_t size,
					     unsigned int queues, const char *mode, int steering);
void bench_peer_ratios(const struct bench_section *s, const struct bench_peer_row *r, double *memif,
		       double *veth);
void bench_point_init(struct bench_point *p, uint32_t frame_size, unsigned int queues,
		      const char *tx_mode, int steering, bool migrate);
void bench_point_add(struct bench_point *p, const struct bench_result *r, int idx);
void bench_point_stat(const struct bench_point *p, enum bench_fig fig, struct bench_stat *s);
json_t *bench_point2json(const struct bench_point *p);
int bench_parse_sections(const char *s, bool *sel, char *err, size_t errlen);
/*
 * The host moved its vCPUs between runs compared with each other when the
 * round trips sampled around them (struct bench_result.host_rtt_ns) span
 * this factor.  Measured near and far: 54-107 and 239-375 ns on one
 * machine, 40-68 and 110-270 ns on another (docs/benchmarks.md, "Where the
 * host puts the vCPUs"); a move between the two states spans 1.6x at the
 * least and 2-4x as a rule, one state alone up to 2.4x: a hint that names
 * the clear moves, which can miss a close one and flag a wide spell.
 */
#define BENCH_HOST_MOVED 2.0
unsigned int bench_point_host(const struct bench_point *p, double *min, double *max);
unsigned int bench_section_host(const struct bench_section *s, double *min, double *max);
bool bench_host_moved(unsigned int n, double min, double max);
void bench_section_verdict(struct bench_section *s);
json_t *bench_section2json(const struct bench_section *s);
void bench_section_print(const struct bench_section *s, unsigned int repeat, FILE *f);
int bench_tcp_parse_line(const char *line, struct bench_tcp_case *c);

/* bench_frame.c: pure */
_Static_assert(BENCH_MAX_FLOWS <= 256, "a flow's source address is 10.66.1.<flow>");
void bench_flow_addrs(uint16_t flow, uint8_t saddr[4], uint8_t daddr[4]);
void bench_tmpl_build(struct bench_tmpl *t, const uint8_t dst[6], const uint8_t src[6],
		      uint16_t flow, uint32_t frame_len);
void bench_frame_fill(const struct iovec *iov, unsigned int niov, const struct bench_tmpl *t,
		      uint16_t flow, uint64_t seq, uint32_t frame_len, enum bench_verify mode);
/* The head, one range per 4 KiB of a 64 KiB frame, the tail, the rover. */
#define BENCH_FRAME_MAX_SPANS (3 + BENCH_MAX_FRAME / BENCH_STAMP_SPAN)
unsigned int bench_frame_spans(enum bench_verify mode, uint32_t frame_len, uint64_t seq,
			       uint32_t r[BENCH_FRAME_MAX_SPANS][2]);
bool bench_frame_rover(enum bench_verify mode, uint32_t frame_len, uint64_t seq, uint32_t *from,
		       uint32_t *to);
int bench_frame_check(const struct iovec *iov, unsigned int niov, uint32_t frame_len,
		      const struct bench_tmpl *tmpls, unsigned int nflows, enum bench_verify mode,
		      uint16_t *flow, uint64_t *seq);

/*
 * The parent (bench.c) and each frontend process (bench_guest.c) talk over
 * a SOCK_SEQPACKET socketpair: one struct per datagram, same binary on
 * both ends.  The child speaks first (BENCH_OP_READY), then answers every
 * command with one struct bench_reply.
 */
enum bench_op {
	BENCH_OP_READY = 1,  /* child -> parent: domain and vif are up (or failed) */
	BENCH_OP_LEARN_SEND, /* receiver: send one broadcast frame so the switch learns its MAC */
	BENCH_OP_LEARN_WAIT, /* sender: wait (bounded) until that broadcast arrives */
	BENCH_OP_START,	     /* start one thread per queue */
	BENCH_OP_SNAP,	     /* reply with the counters now */
	BENCH_OP_STOP,	     /* stop and join the threads; reply with the final counters */
	BENCH_OP_EXIT,	     /* destroy vif and domain, exit */
};

/**
 * struct bench_cmd - parent -> frontend process
 * @op: enum bench_op
 * @nflows: START: flows the sender sends (its negotiated queues)
 * @peer_mac: LEARN_WAIT, START: the other domain's MAC
 */
struct bench_cmd {
	uint32_t op;
	uint32_t nflows;
	uint8_t peer_mac[6];
};

/**
 * struct bench_reply - frontend process -> parent
 * @op: the command answered (BENCH_OP_READY first)
 * @status: 0 or -errno
 * @never_connected: READY failed because the vif did not connect
 * @learn_seen: LEARN_WAIT: the broadcast arrived
 * @domid: the domain pvnetd gave the process
 * @queues: queues the vif negotiated
 * @features: PVNET_F_* negotiated
 * @mac: the vif's MAC
 * @c: counters (SNAP, STOP)
 * @error: a sentence when @status is not 0
 */
struct bench_reply {
	uint32_t op;
	int32_t status;
	bool never_connected;
	bool learn_seen;
	uint16_t domid;
	uint32_t queues;
	uint32_t features;
	uint8_t mac[6];
	struct bench_counts c;
	char error[200];
};

/**
 * struct bench_guest_cfg - what a frontend process is told when it is forked
 * @run_dir: pvnetd's run directory
 * @sender: A (sends) or B (receives)
 * @queues: queues to ask for
 * @frame_size: bytes per frame
 * @verify: how much payload to write / check
 * @zerocopy: use pvnet_tx_alloc/submit and pvnet_rx_burst/release, else pvnet_send/recv
 * @steering: sender: BENCH_STEER_QUEUE (thread q sends on queue q) or a policy
 *	(pvnet_vif_set_steering(), every thread sends its flow with pvnet_send_flow())
 * @migrate: sender: every thread moves to the next online CPU every BENCH_MIGRATE_US
 * @ctl_fd: this process's end of the socketpair
 * @lifetime_s: the process kills itself (SIGALRM) after this long, whatever happens
 */
struct bench_guest_cfg {
	const char *run_dir;
	bool sender;
	unsigned int queues;
	uint32_t frame_size;
	enum bench_verify verify;
	bool zerocopy;
	int steering;
	bool migrate;
	int ctl_fd;
	unsigned int lifetime_s;
};

/* bench_guest.c: runs in the forked frontend process; returns its exit status */
int bench_guest_main(const struct bench_guest_cfg *cfg);

/**
 * struct bench_pvnetd - the pvnetd a sweep runs against
 * @pid: ours (forked), or 0 when it is someone else's (-d) or gone
 * @cpu_pid: whose CPU time is read (its process CPU clock, else /proc/PID/stat), or 0 if
 *	unknown
 * @run_dir: its run directory
 * @log_path: its log (ours only)
 * @mode: the --tx-mode we gave it, or (-d) the one its status says, "" if it says none
 * @failed: why it could not be started ("" when it runs or was never asked to)
 */
struct bench_pvnetd {
	pid_t pid;
	pid_t cpu_pid;
	char run_dir[PATH_MAX];
	char log_path[128];
	char mode[BENCH_MODE_LEN];
	char failed[200];
};

/* bench_pvnetd.c */
int bench_reap(pid_t pid, int ms);
void bench_log_tail(const char *path);
int bench_pvnetd_attach(struct bench_pvnetd *p, const char *run_dir);
int bench_pvnetd_counters(const struct bench_pvnetd *p, unsigned int domid_a, unsigned int domid_b,
			  struct bench_back *out);
int64_t bench_pvnetd_cpu_us(const struct bench_pvnetd *p, bool *clock);
int bench_sys_cpu_us(int64_t *busy, int64_t *steal);
void bench_pvnetd_find(const char *opt, char *path, size_t len);
int bench_pvnetd_stop(struct bench_pvnetd *p);
bool bench_pvnetd_exited(struct bench_pvnetd *p, char *why, size_t len);
int bench_pvnetd_start(struct bench_pvnetd *p, const char *exe, const char *tmpdir,
		       const char *mode, const cpu_set_t *cpus, const sigset_t *child_mask,
		       int sfd);
json_t *bench_machine_json(void);
void bench_command_line(char *buf, size_t len);

/* bench_cli.c: `pvnet bench` */
int bench_main(int argc, char **argv, const char *run_dir);

#endif /* PVNET_TOOLS_BENCH_H */
