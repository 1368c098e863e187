// SPDX-License-Identifier: MIT
/* test_perms.c - node permissions as xenstored applies them: owner, default, grants, inheritance */
#include "helpers.h"

static int setup(void **state)
{
	struct store *s = store_create(NULL);

	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	assert_int_equal(store_domain_introduce(s, 6), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_destroy(*state);
	return 0;
}

static void test_guest_denied_dom0_node(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);

	TC_OK(tc_write(d0, 0, "/secret/key", "x"));
	TC_ERR(tc_read(g, 0, "/secret/key"), "EACCES");
	TC_ERR(tc_write(g, 0, "/secret/key", "y"), "EACCES");
	TC_ERR(tc_call(g, XS_DIRECTORY, 0, "/secret", NULL), "EACCES");
	TC_ERR(tc_call(g, XS_GET_PERMS, 0, "/secret", NULL), "EACCES");
	TC_ERR(tc_rm(g, 0, "/secret/key"), "EACCES");
	/* a missing node under an unreadable parent: EACCES, not ENOENT */
	TC_ERR(tc_read(g, 0, "/secret/missing"), "EACCES");
	/* creating under a node it cannot write */
	TC_ERR(tc_write(g, 0, "/secret/new/deep", "1"), "EACCES");
	TC_ERR(tc_mkdir(g, 0, "/local/domain/6/x"), "EACCES");
	/* another guest's home is private */
	TC_ERR(tc_read(g, 0, "/local/domain/6"), "EACCES");
	tc_close(d0);
	tc_close(g);
}

static void test_owner_and_inheritance(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);
	struct tmsg *m;

	/* the guest owns what it creates, inheriting the rest of the parent's list */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/local/domain/5", "n5", "r6", NULL));
	TC_OK(tc_write(g, 0, "a/b", "1"));
	m = tc_call(d0, XS_GET_PERMS, 0, "/local/domain/5/a/b", NULL);
	assert_memory_equal(m->body, "n5\0r6", sizeof("n5\0r6"));
	m = tc_call(d0, XS_GET_PERMS, 0, "/local/domain/5/a", NULL);
	assert_memory_equal(m->body, "n5\0r6", sizeof("n5\0r6"));
	/* dom0's nodes inherit the parent's list unchanged, owner included */
	TC_OK(tc_write(d0, 0, "/local/domain/5/backend", "x"));
	m = tc_call(d0, XS_GET_PERMS, 0, "/local/domain/5/backend", NULL);
	assert_memory_equal(m->body, "n5\0r6", sizeof("n5\0r6"));
	/* the owner may change the list */
	TC_OK(tc_call(g, XS_SET_PERMS, 0, "a", "n5", "b6", NULL));
	/* but not give the node away */
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "a", "n6", NULL), "EPERM");
	tc_close(d0);
	tc_close(g);
}

static void test_grants(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g5 = tc_open(*state, 5);
	struct tclient *g6 = tc_open(*state, 6);

	TC_OK(tc_write(d0, 0, "/shared", "v"));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/shared", "n0", "r5", "w6", NULL));
	TC_OK(tc_read(g5, 0, "/shared"));
	TC_ERR(tc_write(g5, 0, "/shared", "x"), "EACCES");
	/* Reading is not writing: a reader may neither remove it nor make nodes under it. */
	TC_ERR(tc_call(g5, XS_RM, 0, "/shared", NULL), "EACCES");
	TC_ERR(tc_call(g5, XS_MKDIR, 0, "/shared/x", NULL), "EACCES");
	TC_ERR(tc_call(g5, XS_MKDIR, 0, "/shared", NULL), "EACCES");
	TC_OK(tc_read(d0, 0, "/shared"));
	TC_ERR(tc_read(d0, 0, "/shared/x"), "ENOENT");
	TC_ERR(tc_read(g6, 0, "/shared"), "EACCES");
	TC_OK(tc_write(g6, 0, "/shared", "x"));
	/* A node a guest creates is the guest's, whoever owns its parent (the rest inherited). */
	{
		struct tmsg *m;

		TC_OK(tc_write(g6, 0, "/shared/c6", "y"));
		m = tc_call(d0, XS_GET_PERMS, 0, "/shared/c6", NULL);
		assert_int_equal(m->hdr.type, XS_GET_PERMS);
		assert_memory_equal(m->body, "n6\0r5\0w6", sizeof("n6\0r5\0w6"));
		TC_OK(tc_call(d0, XS_RM, 0, "/shared/c6", NULL));
	}
	/* write permission is not ownership */
	TC_ERR(tc_call(g6, XS_SET_PERMS, 0, "/shared", "b6", NULL), "EACCES");
	/* the default (entry 0) applies to domains not listed */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/shared", "r0", "n6", NULL));
	TC_OK(tc_read(g5, 0, "/shared"));
	TC_ERR(tc_read(g6, 0, "/shared"), "EACCES");
	/* The same for a special node: write access to @releaseDomain is not ownership. */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n0", "w6", NULL));
	TC_ERR(tc_call(g6, XS_SET_PERMS, 0, "@releaseDomain", "b6", NULL), "EACCES");
	/* GET_PERMS answers whoever may read it, as xenstored does */
	TC_ERR(tc_call(g6, XS_GET_PERMS, 0, "@releaseDomain", NULL), "EACCES");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n0", "r6", NULL));
	{
		struct tmsg *m = tc_call(g6, XS_GET_PERMS, 0, "@releaseDomain", NULL);

		assert_int_equal(m->hdr.type, XS_GET_PERMS);
		assert_memory_equal(m->body, "n0\0r6", sizeof("n0\0r6"));
	}
	TC_ERR(tc_call(g6, XS_GET_PERMS, 0, "@introduceDomain", NULL), "EACCES");
	TC_ERR(tc_call(d0, XS_GET_PERMS, 0, "@other", NULL), "ENOENT");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n0", NULL));
	tc_close(d0);
	tc_close(g5);
	tc_close(g6);
}

static void test_bad_perm_strings(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tclient *g = tc_open(*state, 5);
	static const char *const bad[] = {"x0", "r", "rr", "r-1", "r65536", "r12x", "r123456", ""};
	size_t i;

	TC_OK(tc_write(d0, 0, "/q", ""));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		TC_ERR(tc_call(d0, XS_SET_PERMS, 0, "/q", bad[i], NULL), "EINVAL");
	/* no permission at all */
	TC_ERR(tc_call(d0, XS_SET_PERMS, 0, "/q", NULL), "EINVAL");
	/* not NUL-terminated */
	assert_int_equal(tc_send(d0, XS_SET_PERMS, 1, 0, "/q\0r0", 5), 0);
	TC_ERR(tc_reply(d0), "EINVAL");
	/* guests may list at most 5 entries: 5 are fine, 6 are ENOSPC, dom0 is exempt */
	TC_OK(tc_write(g, 0, "x", ""));
	TC_OK(tc_call(g, XS_SET_PERMS, 0, "x", "n5", "r1", "r2", "r3", "r4", NULL));
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "x", "n5", "r1", "r2", "r3", "r4", "r6", NULL),
	       "ENOSPC");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/q", "n5", "r1", "r2", "r3", "r4", "r6", NULL));
	/* the same on a special node a guest was made owner of: nothing else bounds that list */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n5", NULL));
	TC_OK(tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "n5", "r1", "r2", "r3", "r4", NULL));
	TC_ERR(
	    tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "n5", "r1", "r2", "r3", "r4", "r6", NULL),
	    "ENOSPC");
	/* its owner may not give it away (as a node), dom0 may */
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "n6", NULL), "EPERM");
	TC_OK(tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "b5", NULL));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n6", NULL));
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "@releaseDomain", "n5", NULL), "EACCES");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@releaseDomain", "n0", NULL));
	tc_close(d0);
	tc_close(g);
}

/*
 * xenstored's node-size quota: a guest's node holds at most node_size_max
 * bytes of value, child names and permission entries; dom0 is exempt, and
 * a refused creation leaves no ancestor behind.
 */
static void test_node_size_quota(void **state)
{
	struct store *s = *state;
	struct tclient *g = tc_open(s, 5), *d0 = tc_open(s, 0);
	struct store_config cfg;
	char val[3001], path[2100];
	size_t fits;

	store_config_default(&cfg);
	/* a node of the guest's home: one permission entry */
	fits = cfg.node_size_max - sizeof(struct store_perm);
	memset(val, 'v', sizeof(val));
	val[fits] = '\0';
	TC_OK(tc_write(g, 0, "big", val));
	val[fits] = 'v';
	val[fits + 1] = '\0';
	TC_ERR(tc_write(g, 0, "big", val), "ENOSPC");
	TC_ERR(tc_write(g, 0, "new", val), "ENOSPC");
	TC_ERR(tc_read(g, 0, "new"), "ENOENT");
	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = '\0';
	TC_OK(tc_write(d0, 0, "/local/domain/5/big", val));
	/* a child name too long for its new parent: neither is made */
	memcpy(path, "a/", 2);
	memset(path + 2, 'c', cfg.node_size_max - 3); /* "a" would hold 2046 + 4 bytes */
	path[2 + cfg.node_size_max - 3] = '\0';
	TC_ERR(tc_write(g, 0, path, "x"), "ENOSPC");
	TC_ERR(tc_read(g, 0, "a"), "ENOENT");
	tc_close(g);
	tc_close(d0);
}

static void test_node_quota(void **state)
{
	struct store_config cfg;

	store_config_default(&cfg);
	struct store *s;
	struct tclient *g;
	char path[32];
	int i;

	cfg.nodes_per_domain = 4;
	s = store_create(&cfg);
	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g = tc_open(s, 5);
	/* the home counts as one node of the guest */
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "n%d", i);
		TC_OK(tc_write(g, 0, path, "x"));
	}
	TC_ERR(tc_write(g, 0, "n3", "x"), "ENOSPC");
	/* creating several missing parents is all or nothing */
	TC_OK(tc_rm(g, 0, "n2"));
	TC_ERR(tc_write(g, 0, "a/b/c", "x"), "ENOSPC");
	TC_ERR(tc_read(g, 0, "a"), "ENOENT");
	TC_OK(tc_write(g, 0, "n2", "x"));
	/* rewriting an existing node needs no quota */
	TC_OK(tc_write(g, 0, "n2", "y"));
	/* dom0 is exempt */
	for (i = 0; i < 10; i++) {
		snprintf(path, sizeof(path), "/d0/%d", i);
		assert_int_equal(store_write(s, path, "x", 1), 0);
	}
	tc_close(g);
	store_destroy(s);
}

/*
 * Each open transaction sees only the nodes it creates itself: the quota
 * is checked again at commit, so ten transactions cannot each commit the
 * whole quota.  Quota 50: the home and d0..d9 are 11 nodes, each
 * transaction creates 39 under its own directory; the first commit fits
 * exactly, the others are refused and change nothing.
 */
static void test_node_quota_across_transactions(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g;
	uint32_t t[10];
	char p[32];

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 50;
	s = store_create(&cfg);
	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g = tc_open(s, 5);
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof(p), "d%d", i);
		TC_OK(tc_write(g, 0, p, ""));
	}
	for (int i = 0; i < 10; i++)
		t[i] = tc_txn_start(g);
	for (int i = 0; i < 10; i++) {
		for (int k = 0; k < 39; k++) {
			snprintf(p, sizeof(p), "d%d/n%d", i, k);
			TC_OK(tc_write(g, t[i], p, "x"));
		}
	}
	TC_OK(tc_call(g, XS_TRANSACTION_END, t[0], "T", NULL));
	for (int i = 1; i < 10; i++)
		TC_ERR(tc_call(g, XS_TRANSACTION_END, t[i], "T", NULL), "ENOSPC");
	TC_OK(tc_read(g, 0, "d0/n38"));
	TC_ERR(tc_read(g, 0, "d1/n0"), "ENOENT");
	TC_ERR(tc_write(g, 0, "more", "x"), "ENOSPC");
	/* Room made outside: a transaction that fits commits. */
	TC_OK(tc_rm(g, 0, "d0"));
	t[0] = tc_txn_start(g);
	TC_OK(tc_write(g, t[0], "d1/n0", "x"));
	TC_OK(tc_call(g, XS_TRANSACTION_END, t[0], "T", NULL));
	tc_close(g);
	store_destroy(s);
}

/*
 * XSA-322: a released domain keeps no grant anywhere.  Guest 6 grants 5
 * read access to one of its nodes, and @releaseDomain too; 5 goes away and
 * a new, unrelated guest gets domid 5: it can read neither, and the
 * entries are gone from the permissions (6's own stay).
 */
static void test_released_domain_grants_revoked(void **state)
{
	struct store *s = *state;
	struct tclient *g6, *g5;
	struct store_perm *got;
	unsigned int n;

	g6 = tc_open(s, 6);
	TC_OK(tc_write(g6, 0, "secret", "for 5 only"));
	TC_OK(tc_call(g6, XS_SET_PERMS, 0, "secret", "n6", "r5", NULL));
	{
		struct store_perm p[2] = {{0, STORE_PERM_NONE}, {5, STORE_PERM_READ}};

		assert_int_equal(store_set_perms(s, "@releaseDomain", p, 2), 0);
	}
	g5 = tc_open(s, 5);
	TC_OK(tc_read(g5, 0, "/local/domain/6/secret"));
	tc_close(g5);

	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g5 = tc_open(s, 5);
	TC_ERR(tc_read(g5, 0, "/local/domain/6/secret"), "EACCES");
	/* The new 5 may watch @releaseDomain, but is not told of a release. */
	TC_OK(tc_call(g5, XS_WATCH, 0, "@releaseDomain", "t", NULL));
	tc_drain_events(g5); /* the one a new watch fires */
	assert_int_equal(store_domain_introduce(s, 7), 0);
	assert_int_equal(store_domain_release(s, 7), 0);
	assert_null(tc_event(g5));
	assert_int_equal(store_get_perms(s, "/local/domain/6/secret", &got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].id, 6);
	free(got);
	TC_OK(tc_read(g6, 0, "secret"));
	tc_close(g5);
	tc_close(g6);
}

/*
 * The same when 5 is released while a transaction that grants it access
 * is open: the list 6 sets inside it grants the next domain 5 nothing once
 * the transaction commits.  A node created inside one, under a parent that
 * granted 5 access, inherits nothing either: the release changed the
 * parent, so that transaction fails (EAGAIN) and its retry sees the parent
 * as it is now.
 */
static void test_released_during_transaction(void **state)
{
	struct store *s = *state;
	struct tclient *g6 = tc_open(s, 6), *g5;
	uint32_t t1, t2;

	TC_OK(tc_write(g6, 0, "secret", "for 5 only"));
	TC_OK(tc_write(g6, 0, "shared", ""));
	TC_OK(tc_call(g6, XS_SET_PERMS, 0, "shared", "n6", "r5", NULL));
	t1 = tc_txn_start(g6);
	TC_OK(tc_call(g6, XS_SET_PERMS, t1, "secret", "n6", "r5", NULL));
	t2 = tc_txn_start(g6);
	TC_OK(tc_write(g6, t2, "shared/child", "inherits r5"));
	assert_int_equal(store_domain_release(s, 5), 0);
	TC_OK(tc_call(g6, XS_TRANSACTION_END, t1, "T", NULL));
	TC_ERR(tc_call(g6, XS_TRANSACTION_END, t2, "T", NULL), "EAGAIN");
	TC_OK(tc_write(g6, 0, "shared/child", "inherits nothing"));
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g5 = tc_open(s, 5);
	TC_ERR(tc_read(g5, 0, "/local/domain/6/secret"), "EACCES");
	TC_ERR(tc_read(g5, 0, "/local/domain/6/shared/child"), "EACCES");
	TC_OK(tc_read(g6, 0, "secret"));
	tc_close(g5);
	tc_close(g6);
}

/*
 * A grant to a domain that does not exist yet grants nothing, also once a
 * domain of that id is created (as xenstored's XS_PERM_IGNORE): domids are
 * handed out in order, so a guest could name the next one.  GET_PERMS shows
 * the list as set; a list set again once the domain exists does grant.
 */
static void test_grant_to_absent_domain_ignored(void **state)
{
	struct store *s = *state;
	struct tclient *g6 = tc_open(s, 6), *g9;
	struct tmsg *m;

	TC_OK(tc_write(g6, 0, "early", "for 9"));
	TC_OK(tc_call(g6, XS_SET_PERMS, 0, "early", "n6", "r9", NULL));
	{
		struct store_perm p[2] = {{0, STORE_PERM_NONE}, {9, STORE_PERM_READ}};

		assert_int_equal(store_set_perms(s, "@releaseDomain", p, 2), 0);
	}
	assert_int_equal(store_domain_introduce(s, 9), 0);
	g9 = tc_open(s, 9);
	TC_ERR(tc_read(g9, 0, "/local/domain/6/early"), "EACCES");
	m = tc_call(g6, XS_GET_PERMS, 0, "early", NULL);
	assert_int_equal(m->hdr.type, XS_GET_PERMS);
	assert_memory_equal(m->body, "n6\0r9", sizeof("n6\0r9"));
	/* nor may 9 hear of releases through the early grant */
	TC_OK(tc_call(g9, XS_WATCH, 0, "@releaseDomain", "t", NULL));
	tc_drain_events(g9);
	assert_int_equal(store_domain_introduce(s, 7), 0);
	assert_int_equal(store_domain_release(s, 7), 0);
	assert_null(tc_event(g9));
	/* set again now that 9 exists: granted */
	TC_OK(tc_call(g6, XS_SET_PERMS, 0, "early", "n6", "r9", NULL));
	TC_OK(tc_read(g9, 0, "/local/domain/6/early"));
	tc_close(g9);
	tc_close(g6);
}

/*
 * The owner entry counts for the same rule: a node dom0 hands to a domain
 * that does not exist yet is not that domain's once it is introduced.
 */
static void test_owner_absent_domain_ignored(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0), *g8;

	TC_OK(tc_write(d0, 0, "/early", "for 8"));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/early", "n8", NULL));
	assert_int_equal(store_domain_introduce(s, 8), 0);
	g8 = tc_open(s, 8);
	TC_ERR(tc_read(g8, 0, "/early"), "EACCES");
	TC_ERR(tc_write(g8, 0, "/early", "mine"), "EACCES");
	TC_ERR(tc_call(g8, XS_SET_PERMS, 0, "/early", "b8", NULL), "EACCES");
	/* set again now that 8 exists: it owns the node */
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/early", "n8", NULL));
	TC_OK(tc_read(g8, 0, "/early"));
	tc_close(g8);
	tc_close(d0);
}

/* @prefix, then a last component of @n characters (the same for each @n). */
static void long_name(char *buf, const char *prefix, size_t n)
{
	size_t plen = strlen(prefix);

	memcpy(buf, prefix, plen);
	memset(buf + plen, 'c', n);
	buf[plen + n] = '\0';
}

/*
 * The node-size quota to the byte for every record a change touches.
 * With the default 2048 bytes and one permission entry (4 bytes): a
 * parent holding a 2000-character name (2001 bytes with its NUL) takes a
 * second of 42 characters (2001 + 43 + 4 = 2048), not one of 43, and its
 * children then count against a value written to it; a missing parent
 * holds its child's name and NUL (2043 characters fit, 2044 not).  With
 * three entries (12 bytes) a missing parent holds a name of 2035, a new
 * node a value of 2036 bytes, and one with two one-character children 2032.
 */
static void test_node_size_every_record(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	static char path[2100], val[2100];

	TC_OK(tc_write(g, 0, "p", ""));
	long_name(path, "p/", 2000);
	TC_OK(tc_write(g, 0, path, ""));
	long_name(path, "p/", 43);
	TC_ERR(tc_write(g, 0, path, ""), "ENOSPC");
	long_name(path, "p/", 42);
	TC_OK(tc_write(g, 0, path, ""));
	TC_ERR(tc_write(g, 0, "p", "x"), "ENOSPC");
	TC_OK(tc_write(g, 0, "p", ""));

	long_name(path, "m/", 2044);
	TC_ERR(tc_write(g, 0, path, ""), "ENOSPC");
	TC_ERR(tc_read(g, 0, "m"), "ENOENT");
	long_name(path, "m/", 2043);
	TC_OK(tc_write(g, 0, path, ""));

	/* an existing parent's value counts too: 2041 + "ab" + 4 fit, "c" more not */
	memset(val, 'v', 2041);
	val[2041] = '\0';
	TC_OK(tc_write(g, 0, "v", val));
	TC_OK(tc_write(g, 0, "v/ab", ""));
	TC_ERR(tc_write(g, 0, "v/c", ""), "ENOSPC");

	TC_OK(tc_write(g, 0, "q", ""));
	TC_OK(tc_call(g, XS_SET_PERMS, 0, "q", "n5", "r6", "w6", NULL));
	long_name(path, "q/x/", 2036);
	TC_ERR(tc_write(g, 0, path, ""), "ENOSPC");
	TC_ERR(tc_read(g, 0, "q/x"), "ENOENT");
	long_name(path, "q/x/", 2035);
	TC_OK(tc_write(g, 0, path, ""));
	memset(val, 'v', 2037);
	val[2037] = '\0';
	TC_ERR(tc_write(g, 0, "q/n", val), "ENOSPC");
	val[2036] = '\0';
	TC_OK(tc_write(g, 0, "q/n", val));
	val[2033] = '\0';
	TC_ERR(tc_write(g, 0, "q", val), "ENOSPC");
	val[2032] = '\0';
	TC_OK(tc_write(g, 0, "q", val));
	tc_close(g);
}

/*
 * A released domain's count of nodes goes with it: a node it owned
 * outside its home is domain 0's, and a new domain of that id starts
 * with its home alone.  Quota 3: the new 5 makes two more nodes.
 */
static void test_released_domain_count_reset(void **state)
{
	struct store_config cfg;
	struct store *s;
	struct tclient *g, *d0;

	(void)state;
	store_config_default(&cfg);
	cfg.nodes_per_domain = 3;
	s = store_create(&cfg);
	assert_non_null(s);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	d0 = tc_open(s, 0);
	TC_OK(tc_write(d0, 0, "/pub", ""));
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/pub", "b0", NULL));
	g = tc_open(s, 5);
	TC_OK(tc_write(g, 0, "/pub/x", "1"));
	TC_OK(tc_write(g, 0, "/pub/y", "1"));
	TC_ERR(tc_write(g, 0, "/pub/z", "1"), "ENOSPC");
	tc_close(g);
	assert_int_equal(store_domain_release(s, 5), 0);
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g = tc_open(s, 5);
	TC_OK(tc_write(g, 0, "a", "1"));
	TC_OK(tc_write(g, 0, "b", "1"));
	TC_ERR(tc_write(g, 0, "c", "1"), "ENOSPC");
	tc_close(g);
	tc_close(d0);
	store_destroy(s);
}

/*
 * A special node a released domain owned is domain 0's again: a new
 * domain of that id may not set its permissions.
 */
static void test_released_special_owner(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0), *g;
	struct tmsg *m;

	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "@introduceDomain", "n5", "r6", NULL));
	assert_int_equal(store_domain_release(s, 5), 0);
	m = tc_call(d0, XS_GET_PERMS, 0, "@introduceDomain", NULL);
	assert_int_equal(m->hdr.type, XS_GET_PERMS);
	assert_int_equal(m->hdr.len, sizeof("n0\0r6"));
	assert_memory_equal(m->body, "n0\0r6", sizeof("n0\0r6"));
	assert_int_equal(store_domain_introduce(s, 5), 0);
	g = tc_open(s, 5);
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "@introduceDomain", "n5", NULL), "EACCES");
	tc_close(g);
	tc_close(d0);
}

/*
 * GET_PERMS answers a list of a whole payload: domain 0 may set one that
 * long in process ("n0", 681 entries "r1000" and one "r10000" are 4096
 * bytes), and one byte more is E2BIG.
 */
static void test_get_perms_whole_payload(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	static struct store_perm p[684];
	struct tmsg *m;
	unsigned int i;

	p[0].id = 0;
	for (i = 1; i < 682; i++)
		p[i] = (struct store_perm){.id = 1000, .perm = STORE_PERM_READ};
	p[682] = (struct store_perm){.id = 10000, .perm = STORE_PERM_READ};
	assert_int_equal(store_write(s, "/many", "", 0), 0);
	assert_int_equal(store_set_perms(s, "/many", p, 683), 0);
	m = tc_call(d0, XS_GET_PERMS, 0, "/many", NULL);
	assert_int_equal(m->hdr.type, XS_GET_PERMS);
	assert_int_equal(m->hdr.len, XENSTORE_PAYLOAD_MAX);
	assert_memory_equal(m->body + XENSTORE_PAYLOAD_MAX - sizeof("r10000"), "r10000",
			    sizeof("r10000"));
	p[682].id = 10001;
	p[683] = (struct store_perm){.id = 1, .perm = STORE_PERM_NONE};
	assert_int_equal(store_set_perms(s, "/many", p, 684), 0);
	TC_ERR(tc_call(d0, XS_GET_PERMS, 0, "/many", NULL), "E2BIG");
	tc_close(d0);
}

/*
 * SET_PERMS is held to the node-size quota too, as xenstored's
 * write_node() holds every change of a node: a guest's node with a value
 * of 2044 bytes and one entry is full (2048), so a list of three entries
 * (12 bytes) is ENOSPC and the node keeps its list.
 */
static void test_set_perms_node_size(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	static char val[2045];
	struct tmsg *m;

	memset(val, 'v', sizeof(val) - 1);
	TC_OK(tc_write(g, 0, "full", val));
	TC_ERR(tc_call(g, XS_SET_PERMS, 0, "full", "n5", "r6", "r6", NULL), "ENOSPC");
	m = tc_call(g, XS_GET_PERMS, 0, "full", NULL);
	assert_int_equal(m->hdr.len, sizeof("n5"));
	assert_memory_equal(m->body, "n5", sizeof("n5"));
	tc_close(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_guest_denied_dom0_node, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_and_inheritance, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_grants, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_perm_strings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_node_size_quota, setup, teardown),
	    cmocka_unit_test(test_node_quota),
	    cmocka_unit_test(test_node_quota_across_transactions),
	    cmocka_unit_test_setup_teardown(test_released_domain_grants_revoked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_released_during_transaction, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_grant_to_absent_domain_ignored, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_owner_absent_domain_ignored, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_node_size_every_record, setup, teardown),
	    cmocka_unit_test(test_released_domain_count_reset),
	    cmocka_unit_test_setup_teardown(test_released_special_owner, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_get_perms_whole_payload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_perms_node_size, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
