// SPDX-License-Identifier: MIT
/* test_txn.c - optimistic transactions: isolation, commit, conflicts, abort, limits */
#include "helpers.h"
#include "store/internal.h"

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

static void test_isolation_commit(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	struct tclient *b = tc_open(*state, 0);
	uint32_t t = tc_txn_start(a);
	struct tmsg *m;

	assert_true(t != 0);
	TC_OK(tc_write(a, t, "/x/y", "in"));
	m = tc_read(a, t, "/x/y");
	assert_memory_equal(m->body, "in", 2);
	TC_ERR(tc_read(b, 0, "/x/y"), "ENOENT");
	TC_ERR(tc_read(a, 0, "/x/y"), "ENOENT"); /* outside the transaction */
	m = tc_call(a, XS_DIRECTORY, t, "/x", NULL);
	assert_string_equal(m->body, "y");
	m = tc_call(a, XS_TRANSACTION_END, t, "T", NULL);
	TC_OK(m);
	assert_int_equal(m->hdr.type, XS_TRANSACTION_END);
	m = tc_read(b, 0, "/x/y");
	assert_memory_equal(m->body, "in", 2);
	/* the id is gone */
	TC_ERR(tc_read(a, t, "/x/y"), "ENOENT");
	TC_ERR(tc_call(a, XS_TRANSACTION_END, t, "T", NULL), "ENOENT");
	tc_close(a);
	tc_close(b);
}

static void test_conflict(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	struct tclient *b = tc_open(*state, 5);
	uint32_t t;

	TC_OK(tc_write(a, 0, "/local/domain/5/k", "0"));
	/* write-write */
	t = tc_txn_start(b);
	TC_OK(tc_write(b, t, "k", "1"));
	TC_OK(tc_write(a, 0, "/local/domain/5/k", "2"));
	TC_ERR(tc_call(b, XS_TRANSACTION_END, t, "T", NULL), "EAGAIN");
	assert_memory_equal(tc_read(a, 0, "/local/domain/5/k")->body, "2", 1);
	/* read-write: what the transaction read changed */
	t = tc_txn_start(b);
	TC_OK(tc_read(b, t, "k"));
	TC_OK(tc_write(b, t, "other", "1"));
	TC_OK(tc_write(a, 0, "/local/domain/5/k", "3"));
	TC_ERR(tc_call(b, XS_TRANSACTION_END, t, "T", NULL), "EAGAIN");
	TC_ERR(tc_read(b, 0, "other"), "ENOENT");
	/* a node created meanwhile that the transaction saw as missing */
	t = tc_txn_start(b);
	TC_ERR(tc_read(b, t, "late"), "ENOENT");
	TC_OK(tc_write(a, 0, "/local/domain/5/late", "x"));
	TC_ERR(tc_call(b, XS_TRANSACTION_END, t, "T", NULL), "EAGAIN");
	/* unrelated changes do not conflict */
	t = tc_txn_start(b);
	TC_OK(tc_write(b, t, "k", "4"));
	TC_OK(tc_write(a, 0, "/unrelated", "x"));
	TC_OK(tc_call(b, XS_TRANSACTION_END, t, "T", NULL));
	assert_memory_equal(tc_read(a, 0, "/local/domain/5/k")->body, "4", 1);
	tc_close(a);
	tc_close(b);
}

static void test_abort_and_rm(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	uint32_t t;

	TC_OK(tc_write(a, 0, "/ab/c", "1"));
	t = tc_txn_start(a);
	TC_OK(tc_rm(a, t, "/ab"));
	TC_ERR(tc_read(a, t, "/ab/c"), "ENOENT");
	TC_OK(tc_read(a, 0, "/ab/c"));
	TC_OK(tc_call(a, XS_TRANSACTION_END, t, "F", NULL));
	TC_OK(tc_read(a, 0, "/ab/c"));
	t = tc_txn_start(a);
	TC_OK(tc_rm(a, t, "/ab"));
	TC_OK(tc_call(a, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_read(a, 0, "/ab"), "ENOENT");
	tc_close(a);
}

static void test_bad_use(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	uint32_t t = tc_txn_start(a);

	TC_ERR(tc_call(a, XS_TRANSACTION_END, t, "X", NULL), "EINVAL");
	TC_ERR(tc_call(a, XS_TRANSACTION_END, t, "T", "T", NULL), "EINVAL");
	TC_ERR(tc_call(a, XS_TRANSACTION_END, 0, "T", NULL), "ENOENT");
	TC_ERR(tc_call(a, XS_TRANSACTION_START, t, "", NULL), "EBUSY");
	TC_ERR(tc_call(a, XS_TRANSACTION_START, 999, "", NULL), "ENOENT");
	TC_ERR(tc_read(a, 12345, "/"), "ENOENT");
	/* another connection cannot use it */
	{
		struct tclient *b = tc_open(*state, 0);

		TC_ERR(tc_read(b, t, "/"), "ENOENT");
		tc_close(b);
	}
	TC_OK(tc_call(a, XS_TRANSACTION_END, t, "T", NULL));
	tc_close(a);
}

static void test_limit(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tclient *g2 = tc_open(*state, 5);
	struct tclient *d0 = tc_open(*state, 0);
	uint32_t ids[10];
	int i;

	for (i = 0; i < 5; i++)
		ids[i] = tc_txn_start(g);
	for (; i < 10; i++)
		ids[i] = tc_txn_start(g2); /* the limit is per domain */
	TC_ERR(tc_call(g, XS_TRANSACTION_START, 0, "", NULL), "ENOSPC");
	TC_ERR(tc_call(g2, XS_TRANSACTION_START, 0, "", NULL), "ENOSPC");
	for (i = 0; i < 20; i++)
		tc_txn_start(d0); /* dom0 is exempt */
	TC_OK(tc_call(g, XS_TRANSACTION_END, ids[0], "F", NULL));
	tc_txn_start(g);
	/* closing a connection frees its transactions */
	tc_close(g2);
	for (i = 0; i < 5; i++)
		tc_txn_start(g);
	tc_close(g);
	tc_close(d0);
}

/*
 * A guest's open transactions share one byte budget (txn_bytes_per_domain):
 * long paths reach it long before the path count bound, a second
 * transaction finds it spent, and ending the first gives it back.
 */
static void test_txn_bytes_bound(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	char path[1100];
	uint32_t t1, t2;
	int i, taken = 0;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_bytes_per_domain = 64 * 1024;
	g = guest_store(&cfg, &s);
	t1 = tc_txn_start(g);
	memset(path, 'p', 1000);
	for (i = 0; i < 200; i++) {
		struct tmsg *m;

		snprintf(path + 1000, sizeof(path) - 1000, "%d", i);
		m = tc_read(g, t1, path);
		if (strcmp(tc_err(m), "ENOSPC") == 0)
			break;
		TC_ERR(m, "ENOENT");
		taken++;
	}
	/* about 64 KiB of 1 KiB paths: far below the 1024 paths of the count bound */
	assert_in_range(taken, 50, 70);
	t2 = tc_txn_start(g);
	TC_ERR(tc_read(g, t2, "other"), "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t1, "F", NULL));
	TC_ERR(tc_read(g, t2, "other"), "ENOENT");
	TC_OK(tc_write(g, t2, "other", "x"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t2, "T", NULL));
	TC_OK(tc_read(g, 0, "other"));
	tc_close(g);
	store_destroy(s);
}

/*
 * Rewriting paths a transaction has recorded already is held to the same
 * budget: values of nearly the node-size quota written to nodes read
 * first (each read records a path cheaply) stop with ENOSPC at the bound,
 * in every transaction of the guest; the refused writes change nothing,
 * so the transaction still commits what it took.
 */
static void test_txn_rewrites_bounded(void **state)
{
	static char val[2001];
	struct store_config cfg;
	struct tclient *g;
	struct store *s;
	uint32_t t, t2;
	char path[32];
	int i, taken = 0;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_bytes_per_domain = 64 * 1024;
	g = guest_store(&cfg, &s);
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		TC_OK(tc_write(g, 0, path, "x"));
	}
	t = tc_txn_start(g);
	for (i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		TC_OK(tc_read(g, t, path));
	}
	memset(val, 'v', sizeof(val) - 1);
	for (i = 0; i < 100; i++) {
		struct tmsg *m;

		snprintf(path, sizeof(path), "n%d", i);
		m = tc_write(g, t, path, val);
		if (strcmp(tc_err(m), "ENOSPC") == 0)
			break;
		TC_OK(m);
		taken++;
	}
	/* 64 KiB of about 2 KiB records, less the paths recorded first */
	assert_in_range(taken, 20, 32);
	TC_ERR(tc_mkdir(g, t, "n0"), "ENOSPC");
	TC_ERR(tc_rm(g, t, "n1"), "ENOSPC");
	/* another transaction of the guest finds the budget spent too */
	t2 = tc_txn_start(g);
	TC_ERR(tc_write(g, t2, "n99", "y"), "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t2, "F", NULL));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_OK(tc_read(g, 0, "n0"));
	TC_OK(tc_write(g, 0, "n99", "y")); /* outside a transaction: no such budget */
	tc_close(g);
	store_destroy(s);
}

static void test_txn_size_bound(void **state)
{
	struct store_config cfg;

	store_config_default(&cfg);
	struct store *s;
	struct tclient *g;
	char path[32];
	uint32_t t;
	int i;

	cfg.txn_nodes_max = 16;
	g = guest_store(&cfg, &s);
	t = tc_txn_start(g);
	/* 15 missing paths + their parent, the home, recorded once */
	for (i = 0; i < 15; i++) {
		snprintf(path, sizeof(path), "missing%d", i);
		TC_ERR(tc_read(g, t, path), "ENOENT");
	}
	TC_ERR(tc_read(g, t, "one-too-many"), "ENOSPC");
	/* dom0's transactions are not bounded */
	{
		struct tclient *d0 = tc_open(s, 0);

		t = tc_txn_start(d0);
		for (i = 0; i < 40; i++) {
			snprintf(path, sizeof(path), "/missing%d", i);
			TC_ERR(tc_read(d0, t, path), "ENOENT");
		}
		TC_OK(tc_write(d0, t, "/a/b/c", "x"));
		TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
		tc_close(d0);
	}
	tc_close(g);
	store_destroy(s);
}

/*
 * A guest transaction (bound 16) that has recorded the home and @reads
 * missing paths writes a/b/c; the reply must be @want ("" for none).  It
 * commits; a/b/c's top exists exactly when the write was taken.
 */
static void create_after_reads(unsigned int reads, const char *want)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	char path[32];
	uint32_t t;

	store_config_default(&cfg);
	cfg.txn_nodes_max = 16;
	g = guest_store(&cfg, &s);
	t = tc_txn_start(g);
	for (unsigned int i = 0; i < reads; i++) {
		snprintf(path, sizeof(path), "missing%u", i);
		TC_ERR(tc_read(g, t, path), "ENOENT");
	}
	TC_ERR(tc_write(g, t, "a/b/c", "x"), want);
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_read(g, 0, "a"), *want ? "ENOENT" : "");
	tc_close(g);
	store_destroy(s);
}

/*
 * Creating in a transaction first reserves room for twice the paths it
 * creates and two more, so that it never stops halfway: with the home and
 * 4 missing paths recorded, a/b/c (3 paths, recorded as found missing: 8)
 * fits in 16 with its 8; with 5 it is ENOSPC and makes nothing.
 */
static void test_txn_create_room(void **state)
{
	(void)state;
	create_after_reads(4, "");
	create_after_reads(5, "ENOSPC");
}

static void test_quota_in_txn(void **state)
{
	struct store_config cfg;

	store_config_default(&cfg);
	struct store *s;
	struct tclient *g;
	uint32_t t;

	cfg.nodes_per_domain = 3;
	g = guest_store(&cfg, &s);
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "a", "1"));
	TC_OK(tc_write(g, t, "b", "1"));
	TC_ERR(tc_write(g, t, "c", "1"), "ENOSPC");
	TC_OK(tc_rm(g, t, "b"));
	TC_OK(tc_write(g, t, "c", "1"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_write(g, 0, "d", "1"), "ENOSPC");
	tc_close(g);
	store_destroy(s);
}

/*
 * The node quota at commit, to the node: what the domain holds when the
 * transaction ends plus what it creates may reach the quota, not pass it
 * by one.  The transaction works under t/, the rest of the guest under o/,
 * so that neither touches what the other recorded (no EAGAIN).  Dom0,
 * which owns more than that, is exempt there too.
 */
static void test_commit_quota(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g, *d0;
	char path[32];
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 5;
	g = guest_store(&cfg, &s);
	d0 = tc_open(s, 0);
	TC_OK(tc_write(g, 0, "t", ""));
	TC_OK(tc_write(g, 0, "o", "")); /* with the home: 3 */
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "t/a", "1"));
	TC_OK(tc_write(g, 0, "o/x", "1"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL)); /* 4 + 1: the quota */
	TC_OK(tc_read(g, 0, "t/a"));
	TC_OK(tc_rm(g, 0, "o/x"));
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "t/b", "1")); /* it sees 5 */
	TC_OK(tc_write(g, 0, "o/x", "1"));
	TC_ERR(tc_call(g, XS_TRANSACTION_END, t, "T", NULL), "ENOSPC"); /* 5 + 1 */
	TC_ERR(tc_read(g, 0, "t/b"), "ENOENT");

	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "/d0/%d", i);
		TC_OK(tc_write(d0, 0, path, "x"));
	}
	t = tc_txn_start(d0);
	TC_OK(tc_write(d0, t, "/d0/more", "x"));
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	TC_OK(tc_read(d0, 0, "/d0/more"));
	tc_close(d0);
	tc_close(g);
	store_destroy(s);
}

/*
 * An RM that runs out of transaction room (review finding 1) changes
 * nothing: not the node, not its parent's child list.  Guest 5 records
 * 1022 missing paths and its home (1023 of the default 1024), so RM d/x
 * has room to record d/x but not its parent d.  Whatever the RM answers,
 * the tree the transaction commits must be whole: either d/x is still
 * there and listed, or it is gone and unlisted.  Releasing the domain then
 * removes its home (before the fix, the phantom "x" in d made the rm fail
 * and the home outlived the domain).
 */
static void test_rm_out_of_room(void **state)
{
	struct store *s = *state;
	struct tclient *g = tc_open(s, 5);
	struct tclient *d0 = tc_open(s, 0);
	char path[32];
	struct tmsg *m;
	bool taken;
	char *val;
	uint32_t t;

	struct store_config cfg;

	store_config_default(&cfg);
	assert_int_equal(cfg.txn_nodes_max, 1024);
	TC_OK(tc_write(g, 0, "d/x", "1"));
	t = tc_txn_start(g);
	for (int i = 0; i < 1022; i++) {
		snprintf(path, sizeof(path), "m%d", i);
		TC_ERR(tc_read(g, t, path), "ENOENT");
	}
	m = tc_rm(g, t, "d/x");
	taken = m->hdr.type != XS_ERROR;
	if (!taken)
		TC_ERR(m, "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	m = tc_call(g, XS_DIRECTORY, 0, "d", NULL);
	TC_OK(m);
	if (taken) {
		assert_int_equal(m->hdr.len, 0);
		TC_ERR(tc_read(g, 0, "d/x"), "ENOENT");
	} else {
		assert_int_equal(m->hdr.len, 2);
		assert_memory_equal(m->body, "x", 2);
		m = tc_read(g, 0, "d/x");
		TC_OK(m);
		assert_int_equal(m->hdr.len, 1);
		assert_memory_equal(m->body, "1", 1);
	}
	/* the tree is whole: the guest can remove what it sees */
	TC_OK(tc_write(g, 0, "d/x", "2"));
	m = tc_call(g, XS_DIRECTORY, 0, "d", NULL);
	assert_int_equal(m->hdr.len, 2);
	TC_OK(tc_rm(g, 0, "d"));
	TC_OK(tc_write(g, 0, "d/x", "3"));

	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(store_read(s, "/local/domain/5", &val, NULL), -ENOENT);
	m = tc_call(d0, XS_DIRECTORY, 0, "/local/domain", NULL);
	TC_OK(m);
	assert_int_equal(m->hdr.len, 0);
	tc_close(g);
	tc_close(d0);
}

/*
 * The same when the room runs out part-way through the children: with a
 * bound of 16, the home and 12 missing paths recorded, RM d/x records d/x
 * and could delete two of its six children before the third could not be
 * recorded.  The RM must delete none, and a commit keep all six.
 */
static void test_rm_out_of_room_in_children(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	char path[32];
	struct tmsg *m;
	uint32_t t;
	int i;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_nodes_max = 16;
	g = guest_store(&cfg, &s);
	for (i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "d/x/c%d", i);
		TC_OK(tc_write(g, 0, path, "v"));
	}
	t = tc_txn_start(g);
	for (i = 0; i < 12; i++) {
		snprintf(path, sizeof(path), "m%d", i);
		TC_ERR(tc_read(g, t, path), "ENOENT");
	}
	TC_ERR(tc_rm(g, t, "d/x"), "ENOSPC");
	/* inside the transaction too, nothing is gone */
	m = tc_call(g, XS_DIRECTORY, t, "d/x", NULL);
	TC_OK(m);
	assert_int_equal(m->hdr.len, 6 * 3);
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	m = tc_call(g, XS_DIRECTORY, 0, "d/x", NULL);
	assert_int_equal(m->hdr.len, 6 * 3);
	for (i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "d/x/c%d", i);
		TC_OK(tc_read(g, 0, path));
	}
	/* with room, the same RM removes the subtree whole */
	t = tc_txn_start(g);
	TC_OK(tc_rm(g, t, "d/x"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_read(g, 0, "d/x"), "ENOENT");
	m = tc_call(g, XS_DIRECTORY, 0, "d", NULL);
	assert_int_equal(m->hdr.len, 0);
	tc_close(g);
	store_destroy(s);
}

/*
 * A transaction in which an operation failed after changing the overlay
 * may only be aborted: "T" answers the operation's error and commits
 * nothing.  (No request can fail that way today - each either completes
 * or changes nothing - so the failure is marked by hand.)
 */
static void test_failed_txn_never_commits(void **state)
{
	struct store *s = *state;
	struct tclient *g = tc_open(s, 5);
	uint32_t t = tc_txn_start(g);
	struct store_txn *txn;

	TC_OK(tc_write(g, t, "half", "1"));
	txn = store_txn_lookup(g->c, t);
	assert_non_null(txn);
	store_txn_fail(txn, -ENOMEM);
	TC_OK(tc_write(g, t, "other", "1")); /* later requests still run */
	TC_ERR(tc_call(g, XS_TRANSACTION_END, t, "T", NULL), "ENOMEM");
	TC_ERR(tc_read(g, 0, "half"), "ENOENT");
	TC_ERR(tc_read(g, 0, "other"), "ENOENT");
	TC_ERR(tc_call(g, XS_TRANSACTION_END, t, "F", NULL), "ENOENT"); /* gone */
	/* "F" of a failed one is fine */
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "half", "1"));
	store_txn_fail(store_txn_lookup(g->c, t), -ENOMEM);
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "F", NULL));
	tc_close(g);
}

/* TRANSACTION_END takes exactly "T" or "F", as xenstored: a longer word is neither. */
static void test_end_word_exact(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	uint32_t t = tc_txn_start(a);

	TC_OK(tc_write(a, t, "/ew", "1"));
	TC_ERR(tc_call(a, XS_TRANSACTION_END, t, "TRUE", NULL), "EINVAL");
	TC_ERR(tc_call(a, XS_TRANSACTION_END, t, "Fx", NULL), "EINVAL");
	TC_ERR(tc_read(a, 0, "/ew"), "ENOENT");
	TC_OK(tc_call(a, XS_TRANSACTION_END, t, "T", NULL));
	TC_OK(tc_read(a, 0, "/ew"));
	tc_close(a);
}

/*
 * RESET_WATCHES ends the connection's transactions too, as xenstored's
 * does: what they held is not committed, their ids are gone, and the
 * guest's transaction quota is free again.
 */
static void test_reset_watches_ends_transactions(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	uint32_t t = tc_txn_start(g);

	TC_OK(tc_write(g, t, "k", "v"));
	for (int i = 1; i < 10; i++)
		tc_txn_start(g);
	TC_OK(tc_call(g, XS_RESET_WATCHES, 0, NULL));
	TC_ERR(tc_read(g, t, "k"), "ENOENT");
	TC_ERR(tc_call(g, XS_TRANSACTION_END, t, "T", NULL), "ENOENT");
	TC_ERR(tc_read(g, 0, "k"), "ENOENT");
	for (int i = 0; i < 10; i++)
		tc_txn_start(g);
	tc_close(g);
}

/*
 * A node the transaction read and another client removed since is a
 * conflict too (its generation is gone): EAGAIN, nothing committed.
 */
static void test_conflict_read_then_removed(void **state)
{
	struct tclient *a = tc_open(*state, 0);
	struct tclient *b = tc_open(*state, 5);
	uint32_t t;

	TC_OK(tc_write(a, 0, "/local/domain/5/gone", "0"));
	TC_OK(tc_write(a, 0, "/local/domain/5/d/x", "0"));
	t = tc_txn_start(b);
	TC_OK(tc_read(b, t, "gone"));
	TC_OK(tc_write(b, t, "d/x", "1")); /* records d/x alone: not the home */
	TC_OK(tc_rm(a, 0, "/local/domain/5/gone"));
	TC_ERR(tc_call(b, XS_TRANSACTION_END, t, "T", NULL), "EAGAIN");
	assert_memory_equal(tc_read(b, 0, "d/x")->body, "0", 1);
	tc_close(a);
	tc_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_isolation_commit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conflict, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_abort_and_rm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_use, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_limit, setup, teardown),
	    cmocka_unit_test(test_txn_size_bound),
	    cmocka_unit_test(test_txn_bytes_bound),
	    cmocka_unit_test(test_txn_rewrites_bounded),
	    cmocka_unit_test(test_txn_create_room),
	    cmocka_unit_test(test_quota_in_txn),
	    cmocka_unit_test(test_commit_quota),
	    cmocka_unit_test_setup_teardown(test_rm_out_of_room, setup, teardown),
	    cmocka_unit_test(test_rm_out_of_room_in_children),
	    cmocka_unit_test_setup_teardown(test_failed_txn_never_commits, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_end_word_exact, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reset_watches_ends_transactions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_conflict_read_then_removed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
