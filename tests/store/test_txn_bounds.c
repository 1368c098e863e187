// SPDX-License-Identifier: MIT
/* test_txn_bounds.c - what a guest's transactions may hold: node quota, room and byte budget */
#include "helpers.h"

/*
 * A node removed in a transaction gives back one node of quota, not two:
 * quota 3, the home and a; b made and removed; c fits, d does not, inside
 * and once committed.
 */
static void test_quota_rm_in_txn(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 3;
	g = guest_store(&cfg, &s);
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "a", "1"));
	TC_OK(tc_write(g, t, "b", "1"));
	TC_OK(tc_rm(g, t, "b"));
	TC_OK(tc_write(g, t, "c", "1"));
	TC_ERR(tc_write(g, t, "d", "1"), "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_write(g, 0, "d", "1"), "ENOSPC");
	tc_close(g);
	store_destroy(s);
}

/*
 * Removing a node the guest does not own gives it no quota: quota 3 is
 * full with the home, a and b; removing domain 0's /pub/o in a
 * transaction leaves c ENOSPC, inside and after the commit.
 */
static void test_quota_rm_others_node(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g, *d0;
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 3;
	g = guest_store(&cfg, &s);
	d0 = tc_open(s, 0);
	TC_OK(tc_write(d0, 0, "/pub/o", ""));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/pub", "b0", NULL));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/pub/o", "b0", NULL));
	TC_OK(tc_write(g, 0, "a", "1"));
	TC_OK(tc_write(g, 0, "b", "1"));
	t = tc_txn_start(g);
	TC_OK(tc_rm(g, t, "/pub/o"));
	TC_ERR(tc_write(g, t, "c", "1"), "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_ERR(tc_read(d0, 0, "/pub/o"), "ENOENT");
	TC_ERR(tc_write(g, 0, "c", "1"), "ENOSPC");
	tc_close(d0);
	tc_close(g);
	store_destroy(s);
}

/*
 * The node quota bounds what a transaction creates, not what it changes:
 * a guest that domain 0 has given more nodes than its quota (3) still
 * commits a transaction that only rewrites one.
 */
static void test_commit_over_quota_no_creation(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	char path[48];
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 3;
	g = guest_store(&cfg, &s);
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "/local/domain/5/n%d", i);
		assert_int_equal(store_write(s, path, "x", 1), 0);
	}
	TC_ERR(tc_write(g, 0, "more", "x"), "ENOSPC");
	t = tc_txn_start(g);
	TC_OK(tc_write(g, t, "n0", "y"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	assert_memory_equal(tc_read(g, 0, "n0")->body, "y", 1);
	tc_close(g);
	store_destroy(s);
}

/*
 * Out of room, a new path is ENOSPC whatever its parent: also under a
 * parent the guest may not read (EACCES would hide that the transaction,
 * not the permission, refused it).
 */
static void test_room_before_permission(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	char path[32];
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_nodes_max = 16;
	g = guest_store(&cfg, &s);
	t = tc_txn_start(g);
	TC_ERR(tc_read(g, t, "/local"), "EACCES"); /* "/local" and "/" recorded */
	for (int i = 0; i < 14; i++) {
		snprintf(path, sizeof(path), "/local/m%d", i);
		TC_ERR(tc_read(g, t, path), "EACCES");
	}
	TC_ERR(tc_read(g, t, "/local/one-too-many"), "ENOSPC");
	TC_ERR(tc_write(g, t, "/local/one-too-many", "x"), "ENOSPC");
	tc_close(g);
	store_destroy(s);
}

/*
 * A transaction whose guest has spent its byte budget takes no change,
 * even of paths it has recorded already (so no new path is needed): RM,
 * SET_PERMS and MKDIR are ENOSPC as WRITE is, and the commit keeps the
 * nodes and their permissions.
 */
static void test_spent_refuses_every_change(void **state)
{
	static char val[2001];
	struct store_config cfg;
	struct tclient *g;
	struct store *s;
	char path[32];
	struct tmsg *m;
	uint32_t t;
	int i;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_bytes_per_domain = 16 * 1024;
	g = guest_store(&cfg, &s);
	for (i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		TC_OK(tc_write(g, 0, path, "x"));
	}
	t = tc_txn_start(g);
	TC_OK(tc_read(g, t, "/local/domain/5"));
	for (i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		TC_OK(tc_read(g, t, path));
	}
	memset(val, 'v', sizeof(val) - 1);
	for (i = 10; i < 20; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		m = tc_write(g, t, path, val);
		if (strcmp(tc_err(m), "ENOSPC") == 0)
			break;
		TC_OK(m);
	}
	assert_true(i < 20);
	TC_ERR(tc_rm(g, t, "n1"), "ENOSPC");
	TC_ERR(tc_call(g, XS_SET_PERMS, t, "n2", "b5", NULL), "ENOSPC");
	TC_ERR(tc_mkdir(g, t, "n3"), "ENOSPC");
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	TC_OK(tc_read(g, 0, "n1"));
	m = tc_call(g, XS_GET_PERMS, 0, "n2", NULL);
	assert_memory_equal(m->body, "n5", sizeof("n5"));
	tc_close(g);
	store_destroy(s);
}

/*
 * What a transaction holds is its records and events as they are now:
 * rewriting one path forty times with 2000 bytes, then 400 times with one,
 * holds one record's and one event's worth, well within a budget of
 * 16 KiB.  And domain 0's transactions have no budget at all.
 */
static void test_txn_bytes_count_current(void **state)
{
	static char val[2001];
	struct store_config cfg;
	struct tclient *g, *d0;
	struct store *s;
	char path[32];
	uint32_t t;

	(void)state;
	store_config_default(&cfg);
	cfg.txn_bytes_per_domain = 16 * 1024;
	g = guest_store(&cfg, &s);
	d0 = tc_open(s, 0);
	memset(val, 'v', sizeof(val) - 1);
	t = tc_txn_start(g);
	for (int i = 0; i < 40; i++)
		TC_OK(tc_write(g, t, "again", val));
	/* and its events one per path: 400 small rewrites are one event */
	for (int i = 0; i < 400; i++)
		TC_OK(tc_write(g, t, "again", "x"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t, "T", NULL));
	t = tc_txn_start(d0);
	for (int i = 0; i < 40; i++) {
		snprintf(path, sizeof(path), "/d0/n%d", i);
		TC_OK(tc_write(d0, t, path, val));
	}
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "T", NULL));
	TC_OK(tc_read(d0, 0, "/d0/n39"));
	tc_close(d0);
	tc_close(g);
	store_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quota_rm_in_txn),
	    cmocka_unit_test(test_quota_rm_others_node),
	    cmocka_unit_test(test_commit_over_quota_no_creation),
	    cmocka_unit_test(test_room_before_permission),
	    cmocka_unit_test(test_spent_refuses_every_change),
	    cmocka_unit_test(test_txn_bytes_count_current),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
