// SPDX-License-Identifier: MIT
/* test_ctrl.c - netfront's control ring against a fake backend: late, out-of-order and bad answers */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "front/front.h"
#include "harness.h"

/*
 * pvnetd provides the domain and the store; the test is the toolstack and
 * the backend's state machine (harness.c), which offers feature-ctrl-ring,
 * and plays the backend's side of the control ring on the granted page
 * itself (struct cbe).  It copies each request once (a response may land in
 * the slot of a request not answered yet), answers in whatever order a
 * test asks, and wakes the frontend by writing the wait fd of its
 * event-channel-ctrl, which is what pvnetd's event channel does.  Answers
 * a call waits for come from a thread (struct cbe's script); late answers
 * to calls that gave up come from the test thread between calls.
 */

static struct harness H;

/* Long enough for the answering thread on a loaded sanitizer build; each timeout costs this. */
#define TIMEOUT_MS 400

/* Slots of the control ring: __CONST_RING_SIZE(xen_netif_ctrl, 4096). */
#define CBE_SLOTS 128

/* Most requests a test makes (copies kept by ring index). */
#define CBE_MAX_REQS 512

/* The fake backend's side of the control ring. */
struct cbe {
	xen_netif_ctrl_sring_t *s;
	int wake_fd;
	RING_IDX req_cons, rsp_prod;
	struct xen_netif_ctrl_request req[CBE_MAX_REQS];
	/* The thread's script: answer request order[k] with id[k] and data[k]. */
	pthread_t thread;
	unsigned int n;
	RING_IDX order[4];
	uint16_t id[4];
	uint32_t data[4];
	/* Or, when n == 0: answer requests echo_from..echo_to - 1, each with its own id. */
	RING_IDX echo_from, echo_to;
	uint32_t echo_data;
	/* The status every answer carries (0: XEN_NETIF_CTRL_STATUS_SUCCESS). */
	uint32_t status;
};

struct ctx {
	struct pvnet_domain *dom;
	struct fake_be fb;
	struct pvnet_vif *vif;
	struct cbe be;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void ctx_init(struct ctx *c, uint32_t devid)
{
	struct fake_be_opts opts = {0};
	struct pvnet_vif_config cfg;
	char path[160];
	bool ro = true;

	memset(c, 0, sizeof(*c));
	assert_int_equal(pvnet_domain_create(H.run_dir, 1024, &c->dom), 0);
	fb_toolstack(&c->fb, &H, pvnet_domain_id(c->dom), devid, &opts);
	snprintf(path, sizeof(path), "%s/feature-ctrl-ring", c->fb.be);
	assert_true(xs_write(H.dom0, XBT_NULL, path, "1", 1));
	fb_start(&c->fb);
	pvnet_vif_config_default(&cfg);
	cfg.devid = devid;
	cfg.prepared = true;
	cfg.tx_buffers = 32;
	cfg.rx_buffers = 64;
	cfg.ctrl_ring = true;
	cfg.timeout_ms = TIMEOUT_MS;
	assert_int_equal(pvnet_vif_create(c->dom, &cfg, &c->vif), 0);
	assert_true(pvnet_vif_has_ctrl_ring(c->vif));
	c->be.s = h_grant_page(c->dom, (uint32_t)h_read_int(&H, "%s/ctrl-ring-ref", c->fb.fe), &ro);
	assert_non_null(c->be.s);
	assert_false(ro);
	c->be.wake_fd = c->vif->ctrl.ev.self_fd;
}

static void ctx_fini(struct ctx *c)
{
	pvnet_vif_destroy(c->vif);
	fb_stop(&c->fb);
	pvnet_domain_destroy(c->dom);
}

/* Copy the requests up to index @upto (excluded), waiting (bounded) for them; false on timeout. */
static bool cbe_fetch(struct cbe *b, RING_IDX upto)
{
	uint64_t end = now_ms() + 5000;
	RING_IDX prod;

	while ((int32_t)((prod = __atomic_load_n(&b->s->req_prod, __ATOMIC_ACQUIRE)) - upto) < 0) {
		if (now_ms() > end)
			return false;
		usleep(1000);
	}
	for (; b->req_cons != prod && b->req_cons < CBE_MAX_REQS; b->req_cons++)
		b->req[b->req_cons] = b->s->ring[b->req_cons % CBE_SLOTS].req;
	return true;
}

/* Push one response (status b->status) to request @idx carrying @id, and notify. */
static void cbe_answer_id(struct cbe *b, RING_IDX idx, uint16_t id, uint32_t data)
{
	uint64_t one = 1;

	b->s->ring[b->rsp_prod % CBE_SLOTS].rsp = (struct xen_netif_ctrl_response){
	    .id = id, .type = b->req[idx].type, .status = b->status, .data = data};
	b->rsp_prod++;
	__atomic_store_n(&b->s->rsp_prod, b->rsp_prod, __ATOMIC_RELEASE);
	if (write(b->wake_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "cbe: cannot notify the frontend\n");
}

static void cbe_answer(struct cbe *b, RING_IDX idx, uint32_t data)
{
	cbe_answer_id(b, idx, b->req[idx].id, data);
}

static void *cbe_thread(void *arg)
{
	struct cbe *b = arg;

	for (RING_IDX i = b->echo_from; !b->n && i != b->echo_to; i++) {
		if (!cbe_fetch(b, i + 1))
			return NULL;
		cbe_answer(b, i, b->echo_data);
	}
	for (unsigned int k = 0; k < b->n; k++) {
		if (!cbe_fetch(b, b->order[k] + 1))
			return NULL;
		cbe_answer_id(b, b->order[k], b->id[k], b->data[k]);
	}
	return NULL;
}

/* Answer request @idx once it is on the ring (with the id it carries), from a thread. */
static void cbe_run1(struct cbe *b, RING_IDX idx, uint32_t data)
{
	b->n = 0;
	b->echo_from = idx;
	b->echo_to = idx + 1;
	b->echo_data = data;
	assert_int_equal(pthread_create(&b->thread, NULL, cbe_thread, b), 0);
}

static void cbe_run(struct cbe *b)
{
	assert_int_equal(pthread_create(&b->thread, NULL, cbe_thread, b), 0);
}

static void cbe_join(struct cbe *b)
{
	pthread_join(b->thread, NULL);
}

/* A data call still works: the vif is neither broken nor disconnected. */
static void assert_vif_healthy(struct pvnet_vif *vif)
{
	static const char frame[60];
	struct pvnet_pkt pkt = {.data = frame, .len = sizeof(frame)};

	assert_null(pvnet_vif_error(vif));
	assert_int_equal(pvnet_send(vif, 0, &pkt, 1), 1);
}

/*
 * A control call that gives up (-ETIMEDOUT) leaves its request on the ring;
 * its answer, when it comes, is dropped by the next call, not taken for a
 * backend gone mad (the vif used to be broken for good).
 */
static void test_ctrl_late_response(void **state)
{
	uint32_t flags;
	struct ctx c;

	(void)state;
	ctx_init(&c, 13);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT); /* request 0 */
	assert_true(cbe_fetch(&c.be, 1));
	cbe_answer(&c.be, 0, 0);					       /* late */
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT); /* request 1 */
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * netif.h: "there is no requirement that responses are issued in the same
 * order as requests".  Call 1 gives up; the backend answers call 2 first,
 * then call 1: each answer is matched by its id, the late one dropped.
 */
static void test_ctrl_out_of_order(void **state)
{
	uint32_t size = 0;
	struct ctx c;

	(void)state;
	ctx_init(&c, 14);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -ETIMEDOUT); /* id 0 */
	c.be.n = 2;
	c.be.order[0] = 1; /* call 2's request first */
	c.be.id[0] = 1;
	c.be.data[0] = 128;
	c.be.order[1] = 0; /* then call 1's, late, with a value call 2 must not take */
	c.be.id[1] = 0;
	c.be.data[1] = 7;
	cbe_run(&c.be);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), 0); /* id 1 */
	cbe_join(&c.be);
	assert_int_equal(size, 128);
	assert_null(pvnet_vif_error(c.vif));
	/* The late answer to id 0 waits on the ring; the next call drops it and gets its own. */
	cbe_run1(&c.be, 2, 64);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), 0);
	cbe_join(&c.be);
	assert_int_equal(size, 64);
	assert_int_equal(c.vif->ctrl.ring.rsp_cons, 3);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/* An answer to an id never issued, or a second answer to one, is a broken backend. */
static void test_ctrl_bad_ids(void **state)
{
	uint32_t size = 0;
	struct ctx c;

	(void)state;
	/* Answered twice: id 0 (abandoned) twice while call 2 (id 1) waits. */
	ctx_init(&c, 15);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -ETIMEDOUT);
	c.be.n = 2;
	c.be.order[0] = 0;
	c.be.id[0] = 0;
	c.be.order[1] = 1; /* in the slot of request 1 ... */
	c.be.id[1] = 0;	   /* ... id 0 again */
	cbe_run(&c.be);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -EIO);
	cbe_join(&c.be);
	assert_non_null(pvnet_vif_error(c.vif));
	assert_non_null(strstr(pvnet_vif_error(c.vif), "ctrl"));
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -EIO);
	ctx_fini(&c);

	/* Never issued. */
	ctx_init(&c, 16);
	c.be.n = 1;
	c.be.order[0] = 0;
	c.be.id[0] = 0x4242;
	cbe_run(&c.be);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -EIO);
	cbe_join(&c.be);
	assert_non_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);

	/* An id a ring's worth past the pending one: same table entry, not its answer. */
	ctx_init(&c, 20);
	c.be.n = 1;
	c.be.order[0] = 0;
	c.be.id[0] = FRONT_CTRL_RING_SIZE;
	cbe_run(&c.be);
	assert_int_equal(pvnet_vif_get_hash_mapping_size(c.vif, &size), -EIO);
	cbe_join(&c.be);
	assert_non_null(pvnet_vif_error(c.vif));
	ctx_fini(&c);
}

/*
 * netif.h, SET_HASH_KEY and SET_HASH_MAPPING: "The grant reference ... must
 * remain valid until the response has been processed."  While a request
 * naming the data page is unanswered (its call timed out), the page is not
 * written again: the calls that would fill it return -EBUSY until the
 * answer comes.
 */
static void test_ctrl_data_page_busy(void **state)
{
	uint32_t table[4] = {1, 0, 1, 0}, flags;
	uint8_t key_a[40], key_b[40];
	void *page, *p2;
	int64_t ref;
	struct ctx c;

	(void)state;
	for (unsigned int i = 0; i < sizeof(key_a); i++) {
		key_a[i] = (uint8_t)(0xa0 + i);
		key_b[i] = (uint8_t)(0x10 + i);
	}
	ctx_init(&c, 17);
	ref = pvnet_vif_ctrl_page_ref(c.vif, &page);
	assert_true(ref >= 0);

	/* Request 0: the key, never answered in time. */
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key_a, 40), -ETIMEDOUT);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key_b, 40), -EBUSY);
	assert_int_equal(pvnet_vif_set_hash_mapping(c.vif, table, 4), -EBUSY);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &p2), -EBUSY);
	assert_int_equal(
	    pvnet_vif_ctrl(c.vif, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY, (uint32_t)ref, 40, 0, NULL),
	    -EBUSY);
	assert_memory_equal(page, key_a, 40); /* what request 0 names is intact */
	assert_int_equal(c.vif->ctrl.ring.req_prod_pvt, 1);

	/* A request that does not name the page still goes (request 1). */
	cbe_run1(&c.be, 1, PVNET_HASH_IPV4);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), 0);
	cbe_join(&c.be);
	assert_int_equal(flags, PVNET_HASH_IPV4);

	/* So does an empty mapping: the size alone, the page untouched (request 2). */
	cbe_run1(&c.be, 2, 0);
	assert_int_equal(pvnet_vif_set_hash_mapping(c.vif, table, 0), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[2].type, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE);
	assert_int_equal(c.be.req[2].data[0], 0);
	assert_memory_equal(page, key_a, 40);

	/* The late answer to request 0 frees the page (request 3). */
	cbe_answer(&c.be, 0, 0);
	cbe_run1(&c.be, 3, 0);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key_b, 40), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[3].type, XEN_NETIF_CTRL_TYPE_SET_HASH_KEY);
	assert_int_equal(c.be.req[3].data[0], (uint32_t)ref);
	assert_memory_equal(page, key_b, 40);

	/* SET_HASH_MAPPING_SIZE answered (4), SET_HASH_MAPPING (5) not: the table holds the page. */
	cbe_run1(&c.be, 4, 0);
	assert_int_equal(pvnet_vif_set_hash_mapping(c.vif, table, 4), -ETIMEDOUT);
	cbe_join(&c.be);
	assert_true(cbe_fetch(&c.be, 6));
	assert_int_equal(c.be.req[5].type, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key_a, 40), -EBUSY);
	assert_int_equal(pvnet_vif_set_hash_mapping(c.vif, table, 4), -EBUSY);
	assert_int_equal(c.vif->ctrl.ring.req_prod_pvt, 6); /* not even the size was sent */
	assert_memory_equal(page, table, sizeof(table));
	cbe_answer(&c.be, 5, 0);
	cbe_run1(&c.be, 6, 0);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key_a, 40), 0);
	cbe_join(&c.be);
	assert_memory_equal(page, key_a, 40);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * An abandoned request that stays unanswered keeps its id through two
 * rings' worth of later calls (ctrl.c's table of pending ids wraps round
 * to its entry), and its answer, when it comes after all those, is still
 * taken for what it is.
 */
static void test_ctrl_abandoned_id_kept(void **state)
{
	unsigned int calls;
	uint32_t flags;
	struct ctx c;

	(void)state;
	ctx_init(&c, 18);
	calls = 2 * RING_SIZE(&c.vif->ctrl.ring);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT); /* id 0 */
	c.be.echo_from = 1;
	c.be.echo_to = 1 + calls;
	c.be.echo_data = PVNET_HASH_IPV6;
	cbe_run(&c.be);
	for (unsigned int i = 0; i < calls; i++) {
		flags = 0;
		assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), 0);
		assert_int_equal(flags, PVNET_HASH_IPV6);
	}
	cbe_join(&c.be);
	for (unsigned int i = 1; i <= calls; i++)
		assert_int_not_equal(c.be.req[i].id, 0); /* still id 0's */
	cbe_answer(&c.be, 0, 0);			 /* at last */
	cbe_run1(&c.be, 1 + calls, 0);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), 0);
	cbe_join(&c.be);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * The backend's status codes reach the caller: as errno values from the
 * typed calls, as they are (clamped to int) from pvnet_vif_ctrl().
 */
static void test_ctrl_status_codes(void **state)
{
	static const struct {
		uint32_t status;
		int rc;
	} map[] = {
	    {XEN_NETIF_CTRL_STATUS_SUCCESS, 0},
	    {XEN_NETIF_CTRL_STATUS_NOT_SUPPORTED, -EOPNOTSUPP},
	    {XEN_NETIF_CTRL_STATUS_INVALID_PARAMETER, -EINVAL},
	    {XEN_NETIF_CTRL_STATUS_BUFFER_OVERFLOW, -ENOSPC},
	    {77, -EINVAL},
	};
	RING_IDX idx = 0;
	uint32_t out;
	struct ctx c;

	(void)state;
	ctx_init(&c, 21);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		c.be.status = map[i].status;
		cbe_run1(&c.be, idx, 0);
		assert_int_equal(pvnet_vif_set_hash_flags(c.vif, PVNET_HASH_IPV4_TCP), map[i].rc);
		cbe_join(&c.be);
		assert_int_equal(c.be.req[idx].type, XEN_NETIF_CTRL_TYPE_SET_HASH_FLAGS);
		assert_int_equal(c.be.req[idx].data[0], PVNET_HASH_IPV4_TCP);
		idx++;
	}
	/* A status past INT32_MAX is not taken for -errno. */
	c.be.status = 0x80000001u;
	cbe_run1(&c.be, idx, 5);
	assert_int_equal(pvnet_vif_ctrl(c.vif, XEN_NETIF_CTRL_TYPE_GET_HASH_FLAGS, 0, 0, 0, &out),
			 INT32_MAX);
	cbe_join(&c.be);
	assert_int_equal(out, 5);
	idx++;
	/* The typed calls pass their arguments as netif.h says. */
	c.be.status = 0;
	cbe_run1(&c.be, idx, 0);
	assert_int_equal(pvnet_vif_set_hash_algorithm(c.vif, PVNET_HASH_ALG_TOEPLITZ), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[idx].type, XEN_NETIF_CTRL_TYPE_SET_HASH_ALGORITHM);
	assert_int_equal(c.be.req[idx].data[0], XEN_NETIF_CTRL_HASH_ALGORITHM_TOEPLITZ);
	idx++;
	cbe_run1(&c.be, idx, 0);
	/* (bits netif.h does not define too: the backend judges them) */
	assert_int_equal(pvnet_vif_set_hash_flags(c.vif, PVNET_HASH_IPV6 | 0x100), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[idx].data[0], PVNET_HASH_IPV6 | 0x100);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * The largest key (a page) and the largest mapping table (a page of
 * entries) are accepted and sent; one entry or byte more is refused.
 */
static void test_ctrl_largest_key_and_table(void **state)
{
	static uint8_t key[PVNET_PAGE_SIZE + 1];
	static uint32_t table[PVNET_PAGE_SIZE / sizeof(uint32_t) + 1];
	void *page;
	int64_t ref;
	struct ctx c;

	(void)state;
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 13);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		table[i] = (uint32_t)(i % 4);
	ctx_init(&c, 22);
	ref = pvnet_vif_ctrl_page_ref(c.vif, &page);
	assert_true(ref >= 0);
	/* the data page is granted to the backend read-only */
	{
		bool ro = false;

		assert_ptr_equal(h_grant_page(c.dom, (uint32_t)ref, &ro), page);
		assert_true(ro);
	}
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key, PVNET_PAGE_SIZE + 1), -EINVAL);
	cbe_run1(&c.be, 0, 0);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key, PVNET_PAGE_SIZE), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[0].data[1], PVNET_PAGE_SIZE);
	assert_memory_equal(page, key, PVNET_PAGE_SIZE);
	assert_int_equal(
	    pvnet_vif_set_hash_mapping(c.vif, table, PVNET_PAGE_SIZE / sizeof(uint32_t) + 1),
	    -EINVAL);
	c.be.echo_from = 1;
	c.be.echo_to = 3;
	c.be.echo_data = 0;
	cbe_run(&c.be);
	assert_int_equal(
	    pvnet_vif_set_hash_mapping(c.vif, table, PVNET_PAGE_SIZE / sizeof(uint32_t)), 0);
	cbe_join(&c.be);
	assert_int_equal(c.be.req[1].type, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING_SIZE);
	assert_int_equal(c.be.req[1].data[0], PVNET_PAGE_SIZE / sizeof(uint32_t));
	assert_int_equal(c.be.req[2].type, XEN_NETIF_CTRL_TYPE_SET_HASH_MAPPING);
	assert_int_equal(c.be.req[2].data[1], PVNET_PAGE_SIZE / sizeof(uint32_t));
	assert_memory_equal(page, table, PVNET_PAGE_SIZE);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * The data page stays busy while any request naming it is unanswered,
 * whatever requests that do not name it come and go; a request naming it
 * as ADD_GREF_MAPPING does (data[1]) holds it too; and answers that came
 * while no call waited are all taken by the next look at the page.
 */
static void test_ctrl_page_busy_across_calls(void **state)
{
	uint8_t key[40] = {1, 2, 3};
	uint32_t flags;
	void *page;
	int64_t ref;
	struct ctx c;

	(void)state;
	ctx_init(&c, 23);
	ref = pvnet_vif_ctrl_page_ref(c.vif, &page);
	assert_true(ref >= 0);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key, sizeof(key)), -ETIMEDOUT); /* 0 */
	cbe_run1(&c.be, 1, 0);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), 0); /* 1 */
	cbe_join(&c.be);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key, sizeof(key)), -EBUSY);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &page), -EBUSY);
	/* a request that does not name the page, abandoned too (2) */
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT);
	/* both late answers come while no call waits, the page's last */
	assert_true(cbe_fetch(&c.be, 3));
	cbe_answer(&c.be, 2, 0);
	cbe_answer(&c.be, 0, 0);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &page), ref);

	/* ADD_GREF_MAPPING names the page in data[1] (3, abandoned) */
	assert_int_equal(
	    pvnet_vif_ctrl(c.vif, XEN_NETIF_CTRL_TYPE_ADD_GREF_MAPPING, 0, (uint32_t)ref, 1, NULL),
	    -ETIMEDOUT);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &page), -EBUSY);
	assert_true(cbe_fetch(&c.be, 4));
	cbe_answer(&c.be, 3, 0);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &page), ref);
	assert_vif_healthy(c.vif);
	ctx_fini(&c);
}

/*
 * Going to sleep on the channel, a call asks for the very next response
 * (rsp_event = rsp_cons + 1); the first request notifies the backend
 * (SHARED_RING_INIT's req_event = 1).  The channel's kick end is replaced
 * by a socket the test reads.
 */
static void test_ctrl_events(void **state)
{
	uint32_t flags;
	int sv[2], kick;
	char d[64];
	struct ctx c;

	(void)state;
	ctx_init(&c, 24);
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	kick = c.vif->ctrl.ev.kick_fd;
	c.vif->ctrl.ev.kick_fd = sv[0];
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT);
	assert_true(recv(sv[1], d, sizeof(d), MSG_DONTWAIT) >= 0);
	assert_int_equal(c.be.s->rsp_event, 1);
	assert_true(cbe_fetch(&c.be, 1));
	cbe_answer(&c.be, 0, 0);
	cbe_run1(&c.be, 1, 0);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), 0);
	cbe_join(&c.be);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -ETIMEDOUT);
	assert_int_equal(c.be.s->rsp_event, 3);
	c.vif->ctrl.ev.kick_fd = kick;
	close(sv[0]);
	close(sv[1]);
	ctx_fini(&c);
}

/* The data page busy and the vif broken: the page call says broken, not busy. */
static void test_ctrl_page_busy_then_broken(void **state)
{
	uint8_t key[40] = {0};
	uint32_t flags;
	void *page;
	struct ctx c;

	(void)state;
	ctx_init(&c, 25);
	assert_int_equal(pvnet_vif_set_hash_key(c.vif, key, sizeof(key)), -ETIMEDOUT);
	c.be.n = 1;
	c.be.order[0] = 1;
	c.be.id[0] = 0x4242; /* never issued */
	cbe_run(&c.be);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -EIO);
	cbe_join(&c.be);
	assert_int_equal(pvnet_vif_ctrl_page_ref(c.vif, &page), -EIO);
	ctx_fini(&c);
}

/* A response producer beyond the requests made is a broken backend, whatever the slots hold. */
static void test_ctrl_producer_beyond(void **state)
{
	uint32_t flags;
	struct ctx c;

	(void)state;
	ctx_init(&c, 26);
	__atomic_store_n(&c.be.s->rsp_prod, 1, __ATOMIC_RELEASE);
	assert_int_equal(pvnet_vif_get_hash_flags(c.vif, &flags), -EIO);
	assert_non_null(pvnet_vif_error(c.vif));
	assert_non_null(strstr(pvnet_vif_error(c.vif), "beyond"));
	ctx_fini(&c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ctrl_late_response),
	    cmocka_unit_test(test_ctrl_out_of_order),
	    cmocka_unit_test(test_ctrl_bad_ids),
	    cmocka_unit_test(test_ctrl_data_page_busy),
	    cmocka_unit_test(test_ctrl_abandoned_id_kept),
	    cmocka_unit_test(test_ctrl_status_codes),
	    cmocka_unit_test(test_ctrl_largest_key_and_table),
	    cmocka_unit_test(test_ctrl_page_busy_across_calls),
	    cmocka_unit_test(test_ctrl_events),
	    cmocka_unit_test(test_ctrl_page_busy_then_broken),
	    cmocka_unit_test(test_ctrl_producer_beyond),
	};

	return h_run_group(&H, argc, argv, tests, sizeof(tests) / sizeof(tests[0]));
}
