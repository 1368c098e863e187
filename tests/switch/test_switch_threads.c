// SPDX-License-Identifier: MIT
/* test_switch_threads.c - concurrent forwarding, learning, ageing and port churn (run under TSan) */

/*
 * Four forwarding threads (two of them queues of the same port) switch
 * 200k frames in batches while MACs move between ports, a control thread
 * ages the table on a fast fake clock and adds and deletes a fifth port,
 * and a consumer thread puts the references a "deferred" port queued.
 * The control thread also captures the fifth port (deleted while captured)
 * and the deferred port, starting and stopping captures under traffic.
 * Afterwards: every done() ran exactly once per use, counters add up, and
 * no deleted port's xmit() ran after sw_port_del() returned.
 */

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "switch/internal.h"
#include "switch/switch.h"

#define NFWD	   4
#define PER_THREAD 50000 /* 200k frames in all */
#define BATCH	   32
#define POOL	   (4 * BATCH) /* frames in flight per thread, some held by the consumer */
#define NSRC	   8	       /* own MACs per thread */
#define NSHARED	   4	       /* MACs every thread uses: they keep moving */
#define RING	   256	       /* deferred port's queue */

static atomic_uint failures;
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			atomic_fetch_add(&failures, 1);                                            \
	} while (0)

struct tpkt {
	struct sw_pkt pkt;
	uint8_t hdr[14];
	_Atomic unsigned int done_calls;
	unsigned int uses;
};

/* A port that counts, optionally refuses, optionally defers its puts. */
struct tport {
	struct sw_port *port;
	_Atomic uint64_t offered, accepted;
	unsigned int max_accept;
	bool defer;
	atomic_bool alive;
};

static struct sw *sw;
static _Atomic uint64_t clock_ns;
static struct tport tports[4]; /* 0..2 forward, 3 is added and deleted */
static struct tport dport;     /* defers its puts to the consumer thread */
static atomic_bool fwd_done;
static _Atomic unsigned int ctl_rounds;
static uint64_t captured; /* capture datagrams the control thread read */

static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sw_pkt *ring[RING];
static unsigned int ring_head, ring_tail;

static uint64_t test_clock(void *arg)
{
	return atomic_load_explicit(&clock_ns, memory_order_relaxed);
}

static void tpkt_done(struct sw_pkt *p)
{
	struct tpkt *t = (struct tpkt *)p;

	CHECK(atomic_load_explicit(&p->refs, memory_order_relaxed) == 0);
	atomic_fetch_add_explicit(&t->done_calls, 1, memory_order_release);
}

static unsigned int tport_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	struct tport *tp = p->priv;
	unsigned int ok = n < tp->max_accept ? n : tp->max_accept;

	CHECK(atomic_load(&tp->alive));
	atomic_fetch_add(&tp->offered, n);
	if (tp->defer) {
		pthread_mutex_lock(&ring_lock);
		for (ok = 0; ok < n && ring_head - ring_tail < RING; ok++)
			ring[ring_head++ % RING] = pkts[ok];
		pthread_mutex_unlock(&ring_lock);
	} else {
		for (unsigned int i = 0; i < ok; i++)
			sw_pkt_put(pkts[i]);
	}
	atomic_fetch_add(&tp->accepted, ok);
	return ok;
}

static const struct sw_port_ops tport_ops = {.xmit = tport_xmit};

static void mac_of(uint8_t *m, unsigned int n)
{
	memset(m, 0, 6);
	m[0] = 0x02;
	m[4] = (uint8_t)(n >> 8);
	m[5] = (uint8_t)n;
}

struct fwd_arg {
	unsigned int id;
	struct sw_port *in;
	struct tpkt pool[POOL];
	uint64_t forwarded;
	uint64_t sent;
};

static void *fwd_thread(void *arg)
{
	struct fwd_arg *a = arg;
	uint32_t rng = 0x9e3779b9u * (a->id + 1);
	struct sw_pkt *batch[BATCH];
	unsigned int next = 0;

	/* Start once the control thread churns, so the two really overlap. */
	while (atomic_load(&ctl_rounds) < 2)
		sched_yield();

	for (unsigned int done = 0; done < PER_THREAD; done += BATCH) {
		for (unsigned int i = 0; i < BATCH; i++) {
			struct tpkt *t = &a->pool[next++ % POOL];
			unsigned int r, src, dst;

			/* Reuse a frame only after its previous use completed. */
			while (atomic_load_explicit(&t->done_calls, memory_order_acquire) !=
			       t->uses)
				sched_yield();
			rng ^= rng << 13;
			rng ^= rng >> 17;
			rng ^= rng << 5;
			r = rng;
			src = (r & 15) == 0 ? 1000 + ((r >> 4) % NSHARED)
					    : a->id * 16 + (r >> 4) % NSRC;
			dst = (r >> 8) % (NFWD * 16 + 8);
			if ((r & 0x70000) == 0)
				memset(t->hdr, 0xff, 6);
			else
				mac_of(t->hdr, dst);
			mac_of(t->hdr + 6, src);
			t->pkt.hdr = t->hdr;
			t->pkt.hdr_len = (r & 0x3ff00000) ? 14 : 10; /* a few runts */
			t->pkt.len = 60 + (r >> 24);
			sw_pkt_init(&t->pkt, tpkt_done);
			t->uses++;
			batch[i] = &t->pkt;
		}
		a->forwarded += sw_forward(sw, a->in, batch, BATCH);
		a->sent += BATCH;
	}
	/* Wait for the consumer to finish our frames before the pool goes. */
	for (unsigned int i = 0; i < POOL; i++)
		while (atomic_load_explicit(&a->pool[i].done_calls, memory_order_acquire) !=
		       a->pool[i].uses)
			sched_yield();
	return NULL;
}

static void *consumer_thread(void *arg)
{
	for (;;) {
		struct sw_pkt *p = NULL;
		bool stop = atomic_load(&fwd_done);

		pthread_mutex_lock(&ring_lock);
		if (ring_head != ring_tail)
			p = ring[ring_tail++ % RING];
		pthread_mutex_unlock(&ring_lock);
		if (p)
			sw_pkt_put(p);
		else if (stop)
			return NULL;
		else
			sched_yield();
	}
}

/* A capture of port @name into a new socket pair; *@rd is the reader's end. */
static struct sw_capture *capture(const char *name, int *rd)
{
	struct sw_capture *cap = NULL;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	CHECK(sw_capture_start(sw, name, SW_CAPTURE_IN | SW_CAPTURE_OUT, 64, sv[1], &cap) == 0);
	*rd = sv[0];
	return cap;
}

/* Read what a capture sent; with @eof, until the end of file its port's removal made. */
static void drain(int rd, bool eof)
{
	char buf[128];
	ssize_t n;

	while ((n = recv(rd, buf, sizeof(buf), eof ? 0 : MSG_DONTWAIT)) > 0)
		captured++;
	CHECK(eof ? n == 0 : n < 0);
}

/* Ages on a clock running 1 s per round, churns a fifth port, captures it and another. */
static void *control_thread(void *arg)
{
	struct tport *extra = &tports[3];
	struct sw_capture *cap_extra = NULL, *cap_def = NULL;
	int rd_extra = -1, rd_def = -1;
	unsigned int round = 0;
	uint64_t vals[64];

	while (!atomic_load(&fwd_done)) {
		atomic_fetch_add_explicit(&clock_ns, 1000000000ULL, memory_order_relaxed);
		sw_fdb_age(sw, atomic_load(&clock_ns));
		if (round % 2 == 0) {
			atomic_store(&extra->alive, true);
			CHECK(sw_port_add(sw, "extra", &tport_ops, extra, &extra->port) == 0);
			cap_extra = capture("extra", &rd_extra);
			cap_def = capture("deferred", &rd_def);
		} else {
			CHECK(sw_port_del(sw, extra->port) == 0);
			/* After del returns, its xmit must never run again. */
			atomic_store(&extra->alive, false);
			drain(rd_extra, true); /* the removal ended the capture */
			sw_capture_stop(sw, cap_extra, NULL);
			close(rd_extra);
			drain(rd_def, false);
			sw_capture_stop(sw, cap_def, NULL);
			close(rd_def);
		}
		sw_port_stats_get(tports[0].port, vals);
		round++;
		atomic_store(&ctl_rounds, round);
		sched_yield();
	}
	if (round % 2) {
		CHECK(sw_port_del(sw, extra->port) == 0);
		sw_capture_stop(sw, cap_extra, NULL);
		sw_capture_stop(sw, cap_def, NULL);
		close(rd_extra);
		close(rd_def);
	}
	return NULL;
}

static struct fwd_arg fargs[NFWD];

static void test_concurrent_forwarding(void **state)
{
	struct sw_config cfg;
	pthread_t fwd[NFWD], ctl, cons;
	uint64_t rx = 0, sent = 0, fwded = 0, v[64];
	const struct sw_stat_desc *d;
	unsigned int nstat, i_rx = 0, i_txp = 0, i_txd = 0;
	/* Ports 0 (two queues), 1, 2 forward; 2 also refuses beyond 16 per call. */
	static const unsigned int in_of[NFWD] = {0, 0, 1, 2};

	sw_config_init(&cfg);
	cfg.clock = test_clock;
	cfg.ageing_s = 5; /* the fake clock runs fast: entries age during the run */
	atomic_store(&clock_ns, 1000000000000ULL);
	assert_int_equal(sw_create(&cfg, &sw), 0);
	for (unsigned int i = 0; i < 3; i++) {
		char name[8];

		tports[i].max_accept = i == 2 ? 16 : ~0U;
		atomic_store(&tports[i].alive, true);
		snprintf(name, sizeof(name), "t%u", i); /* a name is one port's */
		assert_int_equal(sw_port_add(sw, name, &tport_ops, &tports[i], &tports[i].port), 0);
	}
	/* The deferred port: the consumer thread puts its references. */
	dport.max_accept = ~0U;
	dport.defer = true;
	atomic_store(&dport.alive, true);
	assert_int_equal(sw_port_add(sw, "deferred", &tport_ops, &dport, &dport.port), 0);
	tports[3].max_accept = ~0U; /* the extra port the control thread churns */

	assert_int_equal(pthread_create(&cons, NULL, consumer_thread, NULL), 0);
	for (unsigned int i = 0; i < NFWD; i++) {
		fargs[i].id = i;
		fargs[i].in = tports[in_of[i]].port;
		assert_int_equal(pthread_create(&fwd[i], NULL, fwd_thread, &fargs[i]), 0);
	}
	assert_int_equal(pthread_create(&ctl, NULL, control_thread, NULL), 0);
	/* Frames still in the ring are drained by the consumer meanwhile. */
	for (unsigned int i = 0; i < NFWD; i++)
		assert_int_equal(pthread_join(fwd[i], NULL), 0);
	atomic_store(&fwd_done, true);
	assert_int_equal(pthread_join(ctl, NULL), 0);
	assert_int_equal(pthread_join(cons, NULL), 0);
	assert_int_equal(atomic_load(&failures), 0);
	print_message(
	    "control rounds (port add/del + ageing + captures): %u, capture datagrams %llu\n",
	    atomic_load(&ctl_rounds), (unsigned long long)captured);
	assert_true(captured > 0);

	d = sw_port_stats_names(&nstat);
	for (unsigned int i = 0; i < nstat; i++) {
		if (!strcmp(d[i].name, "rx_packets"))
			i_rx = i;
		if (!strcmp(d[i].name, "tx_packets"))
			i_txp = i;
		if (!strcmp(d[i].name, "tx_dropped"))
			i_txd = i;
	}
	for (unsigned int i = 0; i < NFWD; i++) {
		sent += fargs[i].sent;
		fwded += fargs[i].forwarded;
		for (unsigned int k = 0; k < POOL; k++)
			assert_int_equal(atomic_load(&fargs[i].pool[k].done_calls),
					 fargs[i].pool[k].uses);
	}
	assert_int_equal(sent, NFWD * ((PER_THREAD + BATCH - 1) / BATCH) * BATCH);
	assert_true(fwded > sent / 2);
	for (unsigned int i = 0; i < 3; i++) {
		sw_port_stats_get(tports[i].port, v);
		rx += v[i_rx];
		assert_int_equal(v[i_txp], atomic_load(&tports[i].accepted));
		assert_int_equal(v[i_txp] + v[i_txd], atomic_load(&tports[i].offered));
	}
	assert_int_equal(rx, sent);
	sw_port_stats_get(dport.port, v);
	assert_int_equal(v[i_txp], atomic_load(&dport.accepted));
	assert_int_equal(v[i_txp] + v[i_txd], atomic_load(&dport.offered));
	assert_true(sw_fdb_count(sw) <= SW_DEFAULT_FDB_MAX);
	sw_destroy(sw);
}

/*
 * The grace period, made to last: a forwarding thread is held inside a
 * flood's first xmit() (port "gate") while another thread deletes port
 * "victim", which the same flood still has to reach.  sw_port_del() must
 * not return (and free the port) before that sw_forward() call returned;
 * the victim's xmit() still runs (its frame was on its way) but never
 * after sw_port_del() returned.  Without the wait the forwarding thread
 * would call a freed port.  The gate's xmit() first forwards a frame of
 * its own (a nested call), which must leave the outer section open.
 */
static atomic_bool gate_inside, gate_open, victim_gone, victim_late;
static _Atomic unsigned int victim_calls, gate_sent;
static struct sw *gsw;
static struct sw_port *g_in, *g_victim;

/*
 * Threads that forwarded once (a runt) and so hold an epoch slot each, a
 * process's slot being its own until it exits (epoch.c), until released.
 */
static atomic_bool slots_release;
static _Atomic unsigned int slots_taken;
static struct tpkt held[SW_MAX_THREADS];
static pthread_t holders[SW_MAX_THREADS];

static void *slot_holder(void *arg)
{
	struct tpkt *t = arg;
	struct sw_pkt *p = &t->pkt;

	sw_forward(gsw, g_in, &p, 1); /* dropped, but the thread has a slot now */
	atomic_fetch_add(&slots_taken, 1);
	while (!atomic_load(&slots_release))
		sched_yield();
	return NULL;
}

/* Start @n slot holders on gsw's port g_in; they hold their slots once this returns. */
static void holders_start(unsigned int n)
{
	pthread_attr_t attr;

	atomic_store(&slots_release, false);
	atomic_store(&slots_taken, 0);
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
	for (unsigned int i = 0; i < n; i++) {
		memset(&held[i], 0, sizeof(held[i]));
		held[i].pkt.hdr = held[i].hdr;
		held[i].pkt.hdr_len = 10;
		held[i].pkt.len = 10;
		sw_pkt_init(&held[i].pkt, tpkt_done);
		assert_int_equal(pthread_create(&holders[i], &attr, slot_holder, &held[i]), 0);
	}
	pthread_attr_destroy(&attr);
	while (atomic_load(&slots_taken) < n)
		sched_yield();
}

/* Let @n holders exit (their slots go back) and check their frames completed. */
static void holders_stop(unsigned int n)
{
	atomic_store(&slots_release, true);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(pthread_join(holders[i], NULL), 0);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(atomic_load(&held[i].done_calls), 1);
}

static unsigned int gate_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	struct tpkt runt = {0};
	struct sw_pkt *r = &runt.pkt;

	/* A nested call first, of a runt the switch drops: its end must not end ours. */
	runt.pkt.hdr = runt.hdr;
	runt.pkt.hdr_len = 10;
	runt.pkt.len = 10;
	sw_pkt_init(&runt.pkt, tpkt_done);
	CHECK(sw_forward(gsw, g_in, &r, 1) == 0);
	CHECK(atomic_load(&runt.done_calls) == 1);
	atomic_store(&gate_inside, true);
	while (!atomic_load(&gate_open))
		sched_yield();
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n;
}

static unsigned int victim_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	if (atomic_load(&victim_gone))
		atomic_store(&victim_late, true);
	atomic_fetch_add(&victim_calls, 1);
	for (unsigned int i = 0; i < n; i++)
		sw_pkt_put(pkts[i]);
	return n;
}

static const struct sw_port_ops gate_ops = {.xmit = gate_xmit};
static const struct sw_port_ops victim_ops = {.xmit = victim_xmit};

static void *gate_fwd_thread(void *arg)
{
	struct tpkt *t = arg;
	struct sw_pkt *p = &t->pkt;

	atomic_store(&gate_sent, sw_forward(gsw, g_in, &p, 1));
	return NULL;
}

static void *victim_del_thread(void *arg)
{
	(void)arg;
	CHECK(sw_port_del(gsw, g_victim) == 0);
	atomic_store(&victim_gone, true);
	return NULL;
}

/* The grace period with @hold other threads holding the lower slots. */
static void del_waits(unsigned int hold)
{
	const struct timespec pause = {.tv_nsec = 200 * 1000 * 1000},
			      tick = {.tv_nsec = 1000 * 1000};
	struct sw_port *gate;
	struct tpkt t = {0};
	pthread_t fwd, del;
	bool early;

	atomic_store(&failures, 0);
	atomic_store(&gate_inside, false);
	atomic_store(&gate_open, false);
	atomic_store(&victim_gone, false);
	atomic_store(&victim_late, false);
	atomic_store(&victim_calls, 0);
	assert_int_equal(sw_create(NULL, &gsw), 0);
	/* Numbers 0, 1, 2: the flood goes to gate, then to victim. */
	assert_int_equal(sw_port_add(gsw, "in", &victim_ops, NULL, &g_in), 0); /* sends only */
	assert_int_equal(sw_port_add(gsw, "gate", &gate_ops, NULL, &gate), 0);
	assert_int_equal(sw_port_add(gsw, "victim", &victim_ops, NULL, &g_victim), 0);
	holders_start(hold);
	memset(t.hdr, 0xff, 6);
	mac_of(t.hdr + 6, 1);
	t.pkt.hdr = t.hdr;
	t.pkt.hdr_len = 14;
	t.pkt.len = 60;
	sw_pkt_init(&t.pkt, tpkt_done);

	assert_int_equal(pthread_create(&fwd, NULL, gate_fwd_thread, &t), 0);
	/* Inside within 10 s, or it never will be (its frame dropped): fail, not hang. */
	for (unsigned int ms = 0; ms < 10000 && !atomic_load(&gate_inside); ms++)
		nanosleep(&tick, NULL);
	if (!atomic_load(&gate_inside)) {
		assert_int_equal(pthread_join(fwd, NULL), 0);
		fail_msg("the forwarding thread never reached the gate");
	}
	assert_int_equal(pthread_create(&del, NULL, victim_del_thread, NULL), 0);
	nanosleep(&pause, NULL);
	early = atomic_load(&victim_gone); /* must still wait for the forwarding thread */
	atomic_store(&gate_open, true);
	assert_int_equal(pthread_join(fwd, NULL), 0);
	assert_int_equal(pthread_join(del, NULL), 0);
	assert_false(early);
	assert_true(atomic_load(&victim_gone));
	assert_int_equal(atomic_load(&victim_calls), 1);
	assert_false(atomic_load(&victim_late));
	assert_int_equal(atomic_load(&gate_sent), 1); /* both ports took it */
	assert_int_equal(atomic_load(&t.done_calls), 1);
	holders_stop(hold);
	assert_int_equal(atomic_load(&failures), 0);
	assert_int_equal(sw_port_del(gsw, gate), 0);
	assert_int_equal(sw_port_del(gsw, g_in), 0);
	sw_destroy(gsw);
}

static void test_del_waits_for_forwarding(void **state)
{
	(void)state;
	del_waits(0);
}

/*
 * The same with every slot but the last held by other threads: the grace
 * period looks at all SW_MAX_THREADS slots (pvnetd may run 64 vifs of 16
 * queues), not only the low ones.
 */
static void test_del_waits_last_slot(void **state)
{
	(void)state;
	del_waits(SW_MAX_THREADS - 1);
}

/*
 * With every slot taken by a thread that forwarded and lives on, a further
 * thread's frames are dropped and counted as received and dropped on its
 * port, and completed; once those threads are gone their slots serve new
 * threads again (a vif's queue threads come and go for as long as pvnetd
 * runs).
 */
static void test_thread_slots(void **state)
{
	struct tpkt extra[3] = {0};
	struct sw_pkt *p[3];
	uint64_t v[64];
	const struct sw_stat_desc *d;
	unsigned int n, i_rxp = 0, i_rxb = 0, i_rxd = 0;

	(void)state;
	assert_int_equal(sw_create(NULL, &gsw), 0);
	assert_int_equal(sw_port_add(gsw, "in", &victim_ops, NULL, &g_in), 0);
	assert_int_equal(sw_port_add(gsw, "out", &victim_ops, NULL, &g_victim), 0);
	atomic_store(&victim_gone, false);
	atomic_store(&victim_calls, 0);
	holders_start(SW_MAX_THREADS);

	for (unsigned int i = 0; i < 3; i++) {
		memset(extra[i].hdr, 0xff, 6);
		mac_of(extra[i].hdr + 6, 7);
		extra[i].pkt.hdr = extra[i].hdr;
		extra[i].pkt.hdr_len = 14;
		extra[i].pkt.len = 100 + i;
		sw_pkt_init(&extra[i].pkt, tpkt_done);
		p[i] = &extra[i].pkt;
	}
	assert_int_equal(sw_forward(gsw, g_in, p, 3), 0); /* this thread has no slot */
	d = sw_port_stats_names(&n);
	for (unsigned int i = 0; i < n; i++) {
		i_rxp = strcmp(d[i].name, "rx_packets") ? i_rxp : i;
		i_rxb = strcmp(d[i].name, "rx_bytes") ? i_rxb : i;
		i_rxd = strcmp(d[i].name, "rx_dropped") ? i_rxd : i;
	}
	sw_port_stats_get(g_in, v);
	assert_int_equal(v[i_rxp], SW_MAX_THREADS + 3);
	assert_int_equal(v[i_rxb], SW_MAX_THREADS * 10 + 100 + 101 + 102);
	assert_int_equal(v[i_rxd], SW_MAX_THREADS + 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(atomic_load(&extra[i].done_calls), 1);
	assert_int_equal(atomic_load(&victim_calls), 0);

	/* The threads gone, their slots are free for others: this one forwards. */
	holders_stop(SW_MAX_THREADS);
	sw_pkt_init(&extra[0].pkt, tpkt_done);
	assert_int_equal(sw_forward(gsw, g_in, p, 1), 1);
	assert_int_equal(atomic_load(&victim_calls), 1);
	assert_int_equal(atomic_load(&extra[0].done_calls), 2);
	sw_destroy(gsw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_concurrent_forwarding),
	    cmocka_unit_test(test_del_waits_for_forwarding),
	    cmocka_unit_test(test_del_waits_last_slot),
	    cmocka_unit_test(test_thread_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
