// SPDX-License-Identifier: MIT
/* test_watch.c - watches: initial event, firing rules, permissions, specials, in-process watches */
#include "helpers.h"

static int setup(void **state)
{
	struct store *s = store_create(NULL);

	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_destroy(*state);
	return 0;
}

static void expect_event(struct tclient *tc, const char *path, const char *token)
{
	struct tmsg *m = tc_event(tc);

	assert_non_null(m);
	assert_int_equal(m->hdr.type, XS_WATCH_EVENT);
	assert_int_equal(m->hdr.req_id, 0);
	assert_int_equal(m->hdr.tx_id, 0);
	assert_string_equal(m->body, path);
	assert_string_equal(m->body + strlen(path) + 1, token);
	assert_int_equal(m->hdr.len, strlen(path) + strlen(token) + 2);
}

static void test_initial_and_fire(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	m = tc_call(d0, XS_WATCH, 0, "/w", "tok", NULL);
	TC_OK(m);
	assert_int_equal(m->hdr.type, XS_WATCH);
	expect_event(d0, "/w", "tok"); /* the initial event, even for a missing node */
	assert_null(tc_event(d0));
	TC_OK(tc_write(d0, 0, "/w", "1"));
	expect_event(d0, "/w", "tok");
	TC_OK(tc_write(d0, 0, "/w/a/b", "1"));
	expect_event(d0, "/w/a/b", "tok");
	TC_OK(tc_mkdir(d0, 0, "/w/m"));
	expect_event(d0, "/w/m", "tok");
	TC_OK(tc_mkdir(d0, 0, "/w/m")); /* exists: nothing changes */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/w/m", "r0", NULL));
	expect_event(d0, "/w/m", "tok");
	/* unrelated paths, including a sibling prefix */
	TC_OK(tc_write(d0, 0, "/wx", "1"));
	TC_OK(tc_write(d0, 0, "/other", "1"));
	assert_null(tc_event(d0));
	/* rm below, and rm of the watched node's parent */
	TC_OK(tc_rm(d0, 0, "/w/a"));
	expect_event(d0, "/w/a", "tok");
	assert_null(tc_event(d0));
	TC_OK(tc_call(d0, XS_WATCH, 0, "/p/q/r", "deep", NULL));
	expect_event(d0, "/p/q/r", "deep");
	TC_OK(tc_write(d0, 0, "/p/q/r", "1"));
	expect_event(d0, "/p/q/r", "deep");
	TC_OK(tc_rm(d0, 0, "/p"));
	expect_event(d0, "/p/q/r", "deep");
	assert_null(tc_event(d0));
	/* duplicate */
	TC_ERR(tc_call(d0, XS_WATCH, 0, "/w", "tok", NULL), "EEXIST");
	/* same path, other token: both fire */
	TC_OK(tc_call(d0, XS_WATCH, 0, "/w", "tok2", NULL));
	expect_event(d0, "/w", "tok2");
	TC_OK(tc_write(d0, 0, "/w", "2"));
	expect_event(d0, "/w", "tok");
	expect_event(d0, "/w", "tok2");
	/* unwatch */
	TC_OK(tc_call(d0, XS_UNWATCH, 0, "/w", "tok", NULL));
	TC_ERR(tc_call(d0, XS_UNWATCH, 0, "/w", "tok", NULL), "ENOENT");
	TC_OK(tc_write(d0, 0, "/w", "3"));
	expect_event(d0, "/w", "tok2");
	assert_null(tc_event(d0));
	/* reset_watches drops them all */
	TC_OK(tc_call(d0, XS_RESET_WATCHES, 0, NULL));
	TC_OK(tc_write(d0, 0, "/w", "4"));
	assert_null(tc_event(d0));
	/* malformed */
	TC_ERR(tc_call(d0, XS_WATCH, 0, "/w", NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_WATCH, 0, "/w//x", "t", NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_WATCH, 0, "/w", "t", "extra", NULL), "EINVAL");
	tc_close(d0);
}

static void test_relative_and_perms(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);

	TC_OK(tc_call(g, XS_WATCH, 0, "device", "rel", NULL));
	expect_event(g, "device", "rel");
	TC_OK(tc_write(d0, 0, "/local/domain/5/device/vif/0", "x"));
	expect_event(g, "device/vif/0", "rel");
	/* absolute watch on something the guest cannot read: initial event only */
	TC_OK(tc_write(d0, 0, "/hidden/a", "x"));
	TC_OK(tc_call(g, XS_WATCH, 0, "/hidden", "abs", NULL));
	expect_event(g, "/hidden", "abs");
	TC_OK(tc_write(d0, 0, "/hidden/a", "y"));
	TC_OK(tc_write(d0, 0, "/hidden/a/b", "y"));
	assert_null(tc_event(g));
	/* readable node: the event comes */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/hidden/a", "n0", "r5", NULL));
	expect_event(g, "/hidden/a", "abs");
	TC_OK(tc_write(d0, 0, "/hidden/a", "z"));
	expect_event(g, "/hidden/a", "abs");
	/* losing access is still told once (old permissions count) */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/hidden/a", "n0", NULL));
	expect_event(g, "/hidden/a", "abs");
	TC_OK(tc_write(d0, 0, "/hidden/a", "w"));
	assert_null(tc_event(g));
	tc_close(d0);
	tc_close(g);
}

static void test_watch_limit(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tclient *d0 = tc_open(*state, 0);
	char tok[16];
	int i;

	for (i = 0; i < 128; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		TC_OK(tc_call(g, XS_WATCH, 0, "x", tok, NULL));
	}
	TC_ERR(tc_call(g, XS_WATCH, 0, "x", "more", NULL), "E2BIG");
	TC_OK(tc_call(g, XS_UNWATCH, 0, "x", "t0", NULL));
	TC_OK(tc_call(g, XS_WATCH, 0, "x", "more", NULL));
	for (i = 0; i < 200; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		TC_OK(tc_call(d0, XS_WATCH, 0, "/x", tok, NULL)); /* dom0 exempt */
	}
	tc_close(g);
	tc_close(d0);
}

static void test_txn_events_on_commit(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *w = tc_open(*state, 0);
	uint32_t t;

	TC_OK(tc_call(w, XS_WATCH, 0, "/tx", "t", NULL));
	tc_drain_events(w);
	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/tx/a", "1"));
	assert_null(tc_event(w));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(w, "/tx/a", "t");
	/* a key rewritten many times in a transaction fires once */
	t = tc_txn_start(d0);
	for (int i = 0; i < 100; i++)
		TC_OK(tc_write(d0, t, "/tx/a", "2"));
	TC_OK(tc_write(d0, t, "/tx/c", "2"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(w, "/tx/a", "t");
	expect_event(w, "/tx/c", "t");
	assert_null(tc_event(w));
	/* aborted or failed: no events */
	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/tx/b", "1"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "F", NULL));
	assert_null(tc_event(w));
	tc_close(d0);
	tc_close(w);
}

static void test_special(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	struct tclient *g = tc_open(s, 5);

	TC_OK(tc_call(d0, XS_WATCH, 0, "@introduceDomain", "i", NULL));
	TC_OK(tc_call(d0, XS_WATCH, 0, "@releaseDomain", "r", NULL));
	TC_OK(tc_call(g, XS_WATCH, 0, "@releaseDomain", "gr", NULL));
	expect_event(d0, "@introduceDomain", "i");
	expect_event(d0, "@releaseDomain", "r");
	expect_event(g, "@releaseDomain", "gr");
	assert_int_equal(store_domain_introduce(s, 9), 0);
	expect_event(d0, "@introduceDomain", "i");
	assert_null(tc_event(d0));
	assert_int_equal(store_domain_release(s, 9), 0);
	expect_event(d0, "@releaseDomain", "r");
	assert_null(tc_event(g)); /* guests are not told, by default */
	/* a guest may be let in with SET_PERMS on the special node */
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "n5", NULL), "EACCES");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n0", "r5", NULL));
	assert_int_equal(store_domain_introduce(s, 9), 0);
	assert_int_equal(store_domain_release(s, 9), 0);
	expect_event(g, "@releaseDomain", "gr");
	{
		struct tmsg *m = tc_call(d0, XS_GET_PERMS, 0, "@releaseDomain", NULL);

		assert_int_equal(m->hdr.type, XS_GET_PERMS);
		assert_memory_equal(m->body, "n0\0r5", sizeof("n0\0r5"));
	}
	tc_close(d0);
	tc_close(g);
}

/* Special events go to watches on the special node only, as in xenstored: not to "/". */
static void test_special_not_under_root(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	struct tmsg *ev;
	int events = 0;

	TC_OK(tc_call(d0, XS_WATCH, 0, "/", "root", NULL));
	expect_event(d0, "/", "root");
	assert_int_equal(store_domain_introduce(s, 9), 0);
	assert_int_equal(store_domain_release(s, 9), 0);
	while ((ev = tc_event(d0)) != NULL) {
		/* the home's mkdir and rm are seen; the special events are not */
		assert_int_equal(ev->body[0], '/');
		events++;
	}
	assert_true(events > 0);
	tc_close(d0);
}

static void test_release_closes(void **state)
{
	struct store *s = *state;
	struct tclient *g = tc_open(s, 5);
	uint32_t t = tc_txn_start(g);

	(void)t;
	TC_OK(tc_call(g, XS_WATCH, 0, "x", "t", NULL));
	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(tc_send(g, XS_READ, 1, 0, "x", 2), -EPIPE);
	tc_close(g);
}

/* In-process watches. */
struct rec {
	struct store *s;
	int n;
	char path[8][64];
	char token[8][16];
	int action;
};

static void rec_cb(void *ctx, const char *path, const char *token)
{
	struct rec *r = ctx;

	if (r->n < 8) {
		snprintf(r->path[r->n], sizeof(r->path[0]), "%s", path);
		snprintf(r->token[r->n], sizeof(r->token[0]), "%s", token);
	}
	r->n++;
	if (r->action == 1 && strcmp(path, "/ip/trigger") == 0) {
		/* re-entrant: write from inside a callback, and delete ourselves */
		assert_int_equal(store_write(r->s, "/ip/reply", "1", 1), 0);
	}
	if (r->action == 2)
		assert_int_equal(store_watch_del(r->s, "/ip", "tok", rec_cb, r), 0);
}

static void test_in_process(void **state)
{
	struct store *s = *state;
	struct rec r = {.s = s};
	struct tclient *g = tc_open(s, 5);

	assert_int_equal(store_watch_add(s, "/ip", "tok", rec_cb, &r), 0);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.path[0], "/ip");
	assert_string_equal(r.token[0], "tok");
	assert_int_equal(store_watch_add(s, "/ip", "tok", rec_cb, &r), -EEXIST);
	r.action = 1;
	assert_int_equal(store_write(s, "/ip/trigger", "x", 1), 0);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.path[1], "/ip/trigger");
	assert_string_equal(r.path[2], "/ip/reply");
	/* a guest's change fires dom0's in-process watch */
	r.action = 0;
	TC_OK(tc_call(g, XS_WATCH, 0, "@releaseDomain", "t", NULL)); /* unrelated */
	assert_int_equal(
	    store_set_perms(s, "/ip", (struct store_perm[]){{.id = 5, .perm = STORE_PERM_NONE}}, 1),
	    0);
	assert_int_equal(r.n, 4);
	TC_OK(tc_write(g, 0, "/ip/g", "1"));
	assert_int_equal(r.n, 5);
	assert_string_equal(r.path[4], "/ip/g");
	/* deleting itself from its callback drops further events */
	r.action = 2;
	assert_int_equal(store_rm(s, "/ip"), 0);
	assert_int_equal(r.n, 6);
	assert_int_equal(store_write(s, "/ip", "x", 1), 0);
	assert_int_equal(r.n, 6);
	assert_int_equal(store_watch_del(s, "/ip", "tok", rec_cb, &r), -ENOENT);
	r.action = 0;
	assert_int_equal(store_watch_add(s, "@introduceDomain", "i", rec_cb, &r), 0);
	assert_int_equal(r.n, 7);
	assert_int_equal(store_domain_introduce(s, 11), 0);
	assert_int_equal(r.n, 8);
	tc_close(g);
}

/*
 * xenstored's watch_permitted(): a node the watcher may not read is still
 * reported when its parent is readable, and only then.
 */
static void test_readable_parent(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);

	TC_OK(tc_write(d0, 0, "/pub", "x"));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/pub", "n0", "r5", NULL));
	TC_OK(tc_write(d0, 0, "/pub/secret", "x"));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/pub/secret", "n0", NULL));
	TC_OK(tc_write(d0, 0, "/pub/secret/deeper", "x"));
	TC_OK(tc_call(g, XS_WATCH, 0, "/pub", "t", NULL));
	expect_event(g, "/pub", "t");
	TC_ERR(tc_read(g, 0, "/pub/secret"), "EACCES");
	TC_OK(tc_write(d0, 0, "/pub/secret", "y"));
	expect_event(g, "/pub/secret", "t");
	/* neither the node nor its parent readable: nothing */
	TC_OK(tc_write(d0, 0, "/pub/secret/deeper", "y"));
	assert_null(tc_event(g));
	tc_close(d0);
	tc_close(g);
}

/*
 * WATCH and UNWATCH ignore the transaction id (xenstored's XS_FLAG_NOTID):
 * one that names no transaction is no error, and a watch set with the id
 * of an open one hears of changes outside it at once.
 */
static void test_watch_ignores_tx_id(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *w = tc_open(*state, 0);
	uint32_t t = tc_txn_start(w);

	TC_OK(tc_call(w, XS_WATCH, 999, "/nt", "a", NULL));
	expect_event(w, "/nt", "a");
	TC_OK(tc_call(w, XS_WATCH, t, "/nt", "b", NULL));
	expect_event(w, "/nt", "b");
	TC_OK(tc_write(d0, 0, "/nt", "1"));
	expect_event(w, "/nt", "a");
	expect_event(w, "/nt", "b");
	TC_OK(tc_call(w, XS_UNWATCH, 999, "/nt", "a", NULL));
	TC_OK(tc_call(w, XS_UNWATCH, t, "/nt", "b", NULL));
	TC_OK(tc_write(d0, 0, "/nt", "2"));
	assert_null(tc_event(w));
	TC_OK(tc_call(w, XS_TRANSACTION_END, t, "F", NULL));
	tc_close(d0);
	tc_close(w);
}

/*
 * UNWATCH is exactly "<path>\0<token>\0" (EINVAL otherwise), and a path
 * that cannot be canonical names no watch: ENOENT, as xenstored answers.
 */
static void test_unwatch_malformed(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);

	TC_OK(tc_call(d0, XS_WATCH, 0, "/uw", "t", NULL));
	tc_drain_events(d0);
	TC_ERR(tc_call(d0, XS_UNWATCH, 0, "/uw", "t", "extra", NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_UNWATCH, 0, "/uw", NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_UNWATCH, 0, "/uw//x", "t", NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_UNWATCH, 0, "/uw/", "t", NULL), "ENOENT");
	/* the watch is still there */
	TC_OK(tc_write(d0, 0, "/uw", "1"));
	expect_event(d0, "/uw", "t");
	TC_OK(tc_call(d0, XS_UNWATCH, 0, "/uw", "t", NULL));
	tc_close(d0);
}

/*
 * Watches belong to their connection: two may set the same path and
 * token, and one's UNWATCH or RESET_WATCHES leaves the other's in place.
 */
static void test_watches_per_connection(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	struct tclient *b = tc_open(*state, 0);

	TC_OK(tc_call(a, XS_WATCH, 0, "/pc", "t", NULL));
	TC_OK(tc_call(b, XS_WATCH, 0, "/pc", "t", NULL));
	expect_event(a, "/pc", "t");
	expect_event(b, "/pc", "t");
	TC_OK(tc_call(a, XS_UNWATCH, 0, "/pc", "t", NULL));
	TC_ERR(tc_call(a, XS_UNWATCH, 0, "/pc", "t", NULL), "ENOENT");
	TC_OK(tc_write(a, 0, "/pc", "1"));
	assert_null(tc_event(a));
	expect_event(b, "/pc", "t");
	TC_OK(tc_call(a, XS_WATCH, 0, "/pc", "t", NULL));
	expect_event(a, "/pc", "t");
	TC_OK(tc_call(a, XS_RESET_WATCHES, 0, NULL));
	TC_OK(tc_write(a, 0, "/pc", "2"));
	assert_null(tc_event(a));
	expect_event(b, "/pc", "t");
	assert_null(tc_event(b));
	tc_close(a);
	tc_close(b);
}

/*
 * Removing a subtree tells a watch above it and one on it of the removed
 * node, once each; the descendants' events are exact, for watches on
 * them only, down to the last one - also when the removal is committed
 * from a transaction.
 */
static void test_rm_subtree_events(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *w = tc_open(*state, 0);
	uint32_t t;

	TC_OK(tc_call(w, XS_WATCH, 0, "/st", "top", NULL));
	TC_OK(tc_call(w, XS_WATCH, 0, "/st/a", "node", NULL));
	TC_OK(tc_call(w, XS_WATCH, 0, "/st/a/b/c", "leaf", NULL));
	TC_OK(tc_call(w, XS_WATCH, 0, "/st/a/x", "last", NULL));
	tc_drain_events(w);
	for (int round = 0; round < 2; round++) {
		TC_OK(tc_write(d0, 0, "/st/a/b/c", "1"));
		TC_OK(tc_write(d0, 0, "/st/a/x", "1"));
		tc_drain_events(w);
		t = round ? tc_txn_start(d0) : 0;
		TC_OK(tc_rm(d0, t, "/st/a"));
		if (t)
			TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
		expect_event(w, "/st/a", "top");
		expect_event(w, "/st/a", "node");
		expect_event(w, "/st/a/b/c", "leaf");
		expect_event(w, "/st/a/x", "last");
		assert_null(tc_event(w));
	}
	tc_close(d0);
	tc_close(w);
}

/*
 * The events a transaction queues for one path are merged, and the merged
 * event still reaches every watcher one of them would have reached: the
 * permissions before the first change and after the last decide.  Guest 5
 * watches nodes it may read before or after a transaction, and each
 * changes twice in one: granted, then written; written, then revoked;
 * revoked, then written.  Each commit tells the guest once.
 */
static void test_txn_merged_event_perms(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);
	uint32_t t;

	TC_OK(tc_write(d0, 0, "/mp/grant", ""));
	TC_OK(tc_write(d0, 0, "/mp/late", ""));
	TC_OK(tc_write(d0, 0, "/mp/revoke", ""));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/mp/late", "n0", "r5", NULL));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/mp/revoke", "n0", "r5", NULL));
	TC_OK(tc_call(g, XS_WATCH, 0, "/mp", "t", NULL));
	tc_drain_events(g);

	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/mp/grant", "1"));
	TC_OK(tc_call(d0, XS_SET_PERMS, t, "/mp/grant", "n0", "r5", NULL));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(g, "/mp/grant", "t");
	assert_null(tc_event(g));

	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/mp/late", "1"));
	TC_OK(tc_call(d0, XS_SET_PERMS, t, "/mp/late", "n0", NULL));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(g, "/mp/late", "t");
	assert_null(tc_event(g));

	t = tc_txn_start(d0);
	TC_OK(tc_call(d0, XS_SET_PERMS, t, "/mp/revoke", "n0", NULL));
	TC_OK(tc_write(d0, t, "/mp/revoke", "1"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(g, "/mp/revoke", "t");
	assert_null(tc_event(g));
	tc_close(d0);
	tc_close(g);
}

/* A commit fires its events in the order the paths first changed, each once. */
static void test_txn_event_order(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	uint32_t t;

	TC_OK(tc_call(d0, XS_WATCH, 0, "/eo", "t", NULL));
	tc_drain_events(d0);
	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/eo/a", "1"));
	TC_OK(tc_write(d0, t, "/eo/c", "1"));
	TC_OK(tc_write(d0, t, "/eo/a", "2"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(d0, "/eo/a", "t");
	expect_event(d0, "/eo/c", "t");
	assert_null(tc_event(d0));
	tc_close(d0);
}

/*
 * A node written and then removed with its parent in one transaction: at
 * commit a watch on the parent hears of both, the write's event being no
 * exact one (xenstored keeps one entry per node, and a non-exact change
 * makes it non-exact).
 */
static void test_txn_write_then_rm_parent(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	uint32_t t;

	TC_OK(tc_write(d0, 0, "/wr/a", ""));
	TC_OK(tc_call(d0, XS_WATCH, 0, "/wr/a", "t", NULL));
	tc_drain_events(d0);
	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/wr/a/b", "1"));
	TC_OK(tc_rm(d0, t, "/wr/a"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	expect_event(d0, "/wr/a/b", "t");
	expect_event(d0, "/wr/a", "t");
	assert_null(tc_event(d0));
	tc_close(d0);
}

/* Releasing a domain that was never introduced is ENOENT, and tells no watcher. */
static void test_release_unknown_silent(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);

	TC_OK(tc_call(d0, XS_WATCH, 0, "@releaseDomain", "r", NULL));
	expect_event(d0, "@releaseDomain", "r");
	assert_int_equal(store_domain_release(s, 42), -ENOENT);
	assert_null(tc_event(d0));
	tc_close(d0);
}

/* Write access is not read access: a watcher that may only write a node is not told of it. */
static void test_write_only_not_told(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);

	TC_OK(tc_write(d0, 0, "/wo/node", "x"));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/wo", "n0", "w5", NULL));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/wo/node", "n0", "w5", NULL));
	TC_OK(tc_call(g, XS_WATCH, 0, "/wo", "t", NULL));
	expect_event(g, "/wo", "t");
	TC_OK(tc_write(g, 0, "/wo/node", "y"));
	TC_OK(tc_write(d0, 0, "/wo/node", "z"));
	assert_null(tc_event(g));
	tc_close(d0);
	tc_close(g);
}

/* Two in-process watches on /q; the first removes the second from its callback. */
struct pair {
	struct store *s;
	int a, b;
};

static void pair_b(void *ctx, const char *path, const char *token)
{
	struct pair *p = ctx;

	p->b++;
}

static void pair_a(void *ctx, const char *path, const char *token)
{
	struct pair *p = ctx;

	if (++p->a == 2)
		assert_int_equal(store_watch_del(p->s, "/q", "b", pair_b, p), 0);
}

/*
 * Removing a watch drops its own undelivered events and no other's: one
 * write queues an event for each of two watches, and the first callback
 * removes the second watch, whose event then never comes.
 */
static void test_watch_del_drops_its_events(void **state)
{
	struct pair p = {.s = *state};

	assert_int_equal(store_watch_add(p.s, "/q", "a", pair_a, &p), 0);
	assert_int_equal(store_watch_add(p.s, "/q", "b", pair_b, &p), 0);
	assert_int_equal(p.a, 1);
	assert_int_equal(p.b, 1);
	assert_int_equal(store_write(p.s, "/q", "1", 1), 0);
	assert_int_equal(p.a, 2);
	assert_int_equal(p.b, 1);
	assert_int_equal(store_write(p.s, "/q", "2", 1), 0);
	assert_int_equal(p.a, 3);
	assert_int_equal(p.b, 1);
	assert_int_equal(store_watch_del(p.s, "/q", "a", pair_a, &p), 0);
}

/*
 * Releasing a domain gives back what its connections held at once, even
 * before their owner closes them: a new domain of that id may open its
 * ten transactions and its 128 watches.
 */
static void test_release_frees_quota(void **state)
{
	struct store *s = *state;
	struct tclient *old = tc_open(s, 5), *g;
	char tok[16];
	int i;

	for (i = 0; i < 10; i++)
		tc_txn_start(old);
	for (i = 0; i < 128; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		TC_OK(tc_call(old, XS_WATCH, 0, "x", tok, NULL));
	}
	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g = tc_open(s, 5);
	for (i = 0; i < 10; i++)
		tc_txn_start(g);
	for (i = 0; i < 128; i++) {
		snprintf(tok, sizeof(tok), "t%d", i);
		TC_OK(tc_call(g, XS_WATCH, 0, "x", tok, NULL));
	}
	tc_close(g);
	tc_close(old);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_initial_and_fire, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_relative_and_perms, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_txn_events_on_commit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_special, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_special_not_under_root, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_closes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_readable_parent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch_ignores_tx_id, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unwatch_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watches_per_connection, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rm_subtree_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_txn_merged_event_perms, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_txn_event_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_txn_write_then_rm_parent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_unknown_silent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_only_not_told, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watch_del_drops_its_events, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_frees_quota, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
