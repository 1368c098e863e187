// SPDX-License-Identifier: MIT
/* test_tree.c - the pure helpers of the node database: path rules and permission strings */
#include "helpers.h"
#include "store/internal.h"

static void test_path_canon(void **state)
{
	char out[XENSTORE_ABS_PATH_MAX + 1];
	static const char *const bad[] = {"/a/",   "/a//b", "//", "/a b",     "/a.b",
					  "/a\tb", "x/",    "",	  "/\xc3\xa9"};
	size_t i;

	assert_int_equal(store_path_canon(7, "/", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(store_path_canon(7, "/a-b/c_d/@e/0", out, sizeof(out)), 0);
	assert_int_equal(store_path_canon(7, "device/vif", out, sizeof(out)), 0);
	assert_string_equal(out, "/local/domain/7/device/vif");
	assert_int_equal(store_path_canon(7, "@releaseDomain", out, sizeof(out)), 0);
	assert_string_equal(out, "@releaseDomain");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(store_path_canon(7, bad[i], out, sizeof(out)), -EINVAL);

	/*
	 * Lengths to the character, as xenstored counts them: 2048 past
	 * /local/domain/<id>/ (the domid of any width up to 5 digits), a
	 * special path of 2048 in all.
	 */
	{
		static char p[XENSTORE_ABS_PATH_MAX + 2];
		int n;

		n = snprintf(p, sizeof(p), "/local/domain/12345/");
		memset(p + n, 'a', XENSTORE_REL_PATH_MAX);
		p[n + XENSTORE_REL_PATH_MAX] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), 0);
		p[n + XENSTORE_REL_PATH_MAX] = 'a';
		p[n + XENSTORE_REL_PATH_MAX + 1] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), -EINVAL);
		/* A six-digit "domid" is no domain's home: the quota counts from the root. */
		n = snprintf(p, sizeof(p), "/local/domain/123456/");
		memset(p + n, 'a', XENSTORE_REL_PATH_MAX - n);
		p[XENSTORE_REL_PATH_MAX] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), 0);
		memset(p + n, 'a', XENSTORE_REL_PATH_MAX + 1 - n);
		p[XENSTORE_REL_PATH_MAX + 1] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), -EINVAL);
		p[0] = '@';
		memset(p + 1, 'a', XENSTORE_REL_PATH_MAX - 1);
		p[XENSTORE_REL_PATH_MAX] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), 0);
		p[XENSTORE_REL_PATH_MAX] = 'a';
		p[XENSTORE_REL_PATH_MAX + 1] = '\0';
		assert_int_equal(store_path_canon(7, p, out, sizeof(out)), -EINVAL);
	}
}

static void test_is_child(void **state)
{
	assert_true(store_path_is_child("/a/b", "/a"));
	assert_true(store_path_is_child("/a", "/a"));
	assert_true(store_path_is_child("/a", "/"));
	assert_false(store_path_is_child("/ab", "/a"));
	assert_false(store_path_is_child("/a", "/a/b"));
}

static void test_perm_for(void **state)
{
	const struct store_perm p[] = {
	    {5, STORE_PERM_NONE}, {6, STORE_PERM_READ}, {7, STORE_PERM_BOTH}};

	assert_int_equal(store_perm_for(0, p, 3), STORE_PERM_BOTH | STORE_PERM_OWNER);
	assert_int_equal(store_perm_for(5, p, 3), STORE_PERM_BOTH | STORE_PERM_OWNER);
	assert_int_equal(store_perm_for(6, p, 3), STORE_PERM_READ);
	assert_int_equal(store_perm_for(7, p, 3), STORE_PERM_BOTH);
	assert_int_equal(store_perm_for(8, p, 3), STORE_PERM_NONE);
}

static void test_perm_strings(void **state)
{
	static const char in[] = "b5\0r7\0w9\0n32751";
	struct store_perm *p;
	unsigned int n;
	char out[64];

	assert_int_equal(store_perms_parse(in, sizeof(in), &p, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(p[0].id, 5);
	assert_int_equal(p[0].perm, STORE_PERM_BOTH);
	assert_int_equal(p[3].id, 32751);
	assert_int_equal(store_perms_format(p, n, out, sizeof(out)), (int)sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	assert_int_equal(store_perms_format(p, n, out, 5), -E2BIG);
	free(p);
	assert_int_equal(store_perms_parse("r1", 2, &p, &n), -EINVAL);	   /* no NUL */
	assert_int_equal(store_perms_parse("r32752", 7, &p, &n), -EINVAL); /* reserved id */
	assert_int_equal(store_perms_parse("", 0, &p, &n), -EINVAL);
	/* Every digit counts, up to five: a longer number is refused before it can wrap. */
	assert_int_equal(store_perms_parse("w00012", 7, &p, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].id, 12);
	assert_int_equal(p[0].perm, STORE_PERM_WRITE);
	free(p);
	assert_int_equal(store_perms_parse("w000012", 8, &p, &n), -EINVAL);
	/* 2^64 + 5: read without the bound, it would wrap to domain 5 */
	assert_int_equal(store_perms_parse("r18446744073709551621", 22, &p, &n), -EINVAL);
}

static void test_errno_names(void **state)
{
	assert_string_equal(store_errno_name(ENOENT), "ENOENT");
	assert_string_equal(store_errno_name(-EAGAIN), "EAGAIN");
	assert_string_equal(store_errno_name(ENOSPC), "ENOSPC");
	assert_string_equal(store_errno_name(ETIMEDOUT), "EINVAL"); /* not in xs_wire.h */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_canon),	cmocka_unit_test(test_is_child),
	    cmocka_unit_test(test_perm_for),	cmocka_unit_test(test_perm_strings),
	    cmocka_unit_test(test_errno_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
