// SPDX-License-Identifier: MIT
/* test_ops.c - every xs_wire operation through store_conn_input, as dom0 and as a guest */
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

static void test_write_read(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	m = tc_write(d0, 0, "/a/b/c", "hello");
	TC_OK(m);
	assert_int_equal(m->hdr.type, XS_WRITE);
	assert_string_equal(m->body, "OK");
	m = tc_read(d0, 0, "/a/b/c");
	assert_int_equal(m->hdr.type, XS_READ);
	assert_int_equal(m->hdr.len, 5);
	assert_memory_equal(m->body, "hello", 5);
	/* implicit parents exist, with empty values */
	m = tc_read(d0, 0, "/a/b");
	TC_OK(m);
	assert_int_equal(m->hdr.len, 0);
	m = tc_read(d0, 0, "/a/x");
	TC_ERR(m, "ENOENT");
	/* binary values, NULs included */
	{
		const char bin[] = "/bin\0x\0y";

		assert_int_equal(tc_send(d0, XS_WRITE, 1, 0, bin, sizeof(bin) - 1), 0);
		TC_OK(tc_reply(d0));
		m = tc_read(d0, 0, "/bin");
		assert_int_equal(m->hdr.len, 3);
		assert_memory_equal(m->body, "x\0y", 3);
	}
	tc_close(d0);
}

static void test_mkdir_directory(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_mkdir(d0, 0, "/d/one"));
	TC_OK(tc_mkdir(d0, 0, "/d/two"));
	TC_OK(tc_write(d0, 0, "/d/one", "v"));
	TC_OK(tc_mkdir(d0, 0, "/d/one")); /* exists: fine, value kept */
	m = tc_read(d0, 0, "/d/one");
	assert_memory_equal(m->body, "v", 1);
	m = tc_call(d0, XS_DIRECTORY, 0, "/d", NULL);
	assert_int_equal(m->hdr.type, XS_DIRECTORY);
	assert_int_equal(m->hdr.len, sizeof("one\0two"));
	assert_memory_equal(m->body, "one\0two", sizeof("one\0two"));
	m = tc_call(d0, XS_DIRECTORY, 0, "/d/one", NULL);
	assert_int_equal(m->hdr.len, 0);
	TC_ERR(tc_call(d0, XS_DIRECTORY, 0, "/nope", NULL), "ENOENT");
	tc_close(d0);
}

static void test_rm(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_write(d0, 0, "/r/a/b", "1"));
	TC_OK(tc_write(d0, 0, "/r/a/c", "2"));
	TC_OK(tc_rm(d0, 0, "/r/a"));
	TC_ERR(tc_read(d0, 0, "/r/a/b"), "ENOENT");
	TC_ERR(tc_read(d0, 0, "/r/a"), "ENOENT");
	m = tc_call(d0, XS_DIRECTORY, 0, "/r", NULL);
	assert_int_equal(m->hdr.len, 0);
	/* missing node, parent exists: OK, as xenstored */
	TC_OK(tc_rm(d0, 0, "/r/a"));
	/* missing node and missing parent: ENOENT */
	TC_ERR(tc_rm(d0, 0, "/r/a/b"), "ENOENT");
	TC_ERR(tc_rm(d0, 0, "/"), "EINVAL");
	tc_close(d0);
}

static void test_perms_ops(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_write(d0, 0, "/p", ""));
	m = tc_call(d0, XS_GET_PERMS, 0, "/p", NULL);
	assert_int_equal(m->hdr.type, XS_GET_PERMS);
	assert_int_equal(m->hdr.len, sizeof("n0"));
	assert_string_equal(m->body, "n0");
	TC_OK(tc_call(d0, XS_SET_PERMS, 0, "/p", "b5", "r7", "w9", NULL));
	m = tc_call(d0, XS_GET_PERMS, 0, "/p", NULL);
	assert_int_equal(m->hdr.len, sizeof("b5\0r7\0w9"));
	assert_memory_equal(m->body, "b5\0r7\0w9", sizeof("b5\0r7\0w9"));
	TC_ERR(tc_call(d0, XS_GET_PERMS, 0, "/nope", NULL), "ENOENT");
	tc_close(d0);
}

static void test_relative_paths(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_write(g, 0, "device/vif/0/state", "1"));
	m = tc_read(d0, 0, "/local/domain/5/device/vif/0/state");
	assert_memory_equal(m->body, "1", 1);
	m = tc_read(g, 0, "/local/domain/5/device/vif/0/state");
	TC_OK(m);
	/* dom0's relative paths resolve under /local/domain/0 */
	TC_OK(tc_write(d0, 0, "x", "0"));
	TC_OK(tc_read(d0, 0, "/local/domain/0/x"));
	tc_close(g);
	tc_close(d0);
}

static void test_domain_path(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tmsg *m;

	m = tc_call(g, XS_GET_DOMAIN_PATH, 0, "12", NULL);
	assert_int_equal(m->hdr.type, XS_GET_DOMAIN_PATH);
	assert_string_equal(m->body, "/local/domain/12");
	assert_int_equal(m->hdr.len, sizeof("/local/domain/12"));
	TC_ERR(tc_call(g, XS_GET_DOMAIN_PATH, 0, "x1", NULL), "EINVAL");
	TC_ERR(tc_call(g, XS_GET_DOMAIN_PATH, 0, "", NULL), "EINVAL");
	tc_close(g);
}

/* Domain ids end below DOMID_FIRST_RESERVED (DOMID_SELF and the like), on the wire and in process. */
static void test_reserved_domids(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tmsg *m;

	m = tc_call(g, XS_GET_DOMAIN_PATH, 0, "32751", NULL);
	assert_string_equal(m->body, "/local/domain/32751");
	TC_ERR(tc_call(g, XS_GET_DOMAIN_PATH, 0, "32752", NULL), "EINVAL");
	assert_int_equal(store_domain_introduce(*state, DOMID_FIRST_RESERVED), -EINVAL);
	assert_false(store_domain_is_introduced(*state, DOMID_FIRST_RESERVED));
	assert_int_equal(store_domain_introduce(*state, DOMID_FIRST_RESERVED - 1), 0);
	tc_close(g);
}

static void test_privileged_and_unknown(void **state)
{
	struct tclient *g = tc_open(*state, 5);
	struct tclient *d0 = tc_open(*state, 0);
	static const uint32_t priv[] = {XS_CONTROL, XS_INTRODUCE,
					XS_RELEASE, XS_IS_DOMAIN_INTRODUCED,
					XS_RESUME,  XS_SET_TARGET};
	struct tmsg *m;
	size_t i;

	for (i = 0; i < sizeof(priv) / sizeof(priv[0]); i++) {
		TC_ERR(tc_call(g, priv[i], 0, "5", NULL), "EACCES");
		if (priv[i] != XS_IS_DOMAIN_INTRODUCED)
			TC_ERR(tc_call(d0, priv[i], 0, "5", NULL), "ENOSYS");
	}
	m = tc_call(d0, XS_IS_DOMAIN_INTRODUCED, 0, "5", NULL);
	assert_string_equal(m->body, "T");
	m = tc_call(d0, XS_IS_DOMAIN_INTRODUCED, 0, "6", NULL);
	assert_string_equal(m->body, "F");
	TC_ERR(tc_call(g, XS_WATCH_EVENT, 0, "/", "0", NULL), "ENOSYS");
	TC_ERR(tc_call(g, XS_ERROR, 0, "x", NULL), "ENOSYS");
	TC_ERR(tc_call(g, XS_TYPE_COUNT, 0, "x", NULL), "ENOSYS");
	TC_ERR(tc_call(g, 0xffffffffu, 0, "x", NULL), "ENOSYS");
	m = tc_call(g, 20, 0, NULL); /* the retired XS_RESTRICT */
	TC_ERR(m, "ENOSYS");
	assert_int_equal(m->hdr.type, XS_ERROR);
	tc_close(g);
	tc_close(d0);
}

static void test_in_process(void **state)
{
	struct store *s = *state;
	struct store_perm p[2] = {{.id = 5, .perm = STORE_PERM_NONE},
				  {.id = 7, .perm = STORE_PERM_READ}};
	struct store_perm *got;
	unsigned int n;
	char **names;
	char *val;
	size_t len;

	assert_int_equal(store_write(s, "/t/x", "abc", 3), 0);
	assert_int_equal(store_read(s, "/t/x", &val, &len), 0);
	assert_int_equal(len, 3);
	assert_string_equal(val, "abc");
	free(val);
	assert_int_equal(store_mkdir(s, "/t/y"), 0);
	assert_int_equal(store_directory(s, "/t", &names, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "x");
	assert_string_equal(names[1], "y");
	assert_null(names[2]);
	free(names);
	assert_int_equal(store_set_perms(s, "/t/x", p, 2), 0);
	assert_int_equal(store_get_perms(s, "/t/x", &got, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(got[1].id, 7);
	assert_int_equal(got[1].perm, STORE_PERM_READ);
	free(got);
	assert_int_equal(store_rm(s, "/t"), 0);
	assert_int_equal(store_read(s, "/t/x", &val, &len), -ENOENT);
	assert_int_equal(store_read(s, "bad//path", &val, &len), -EINVAL);
	assert_int_equal(store_write(s, "/big", "x", XENSTORE_PAYLOAD_MAX), -E2BIG);
	/* to the byte: the value fits a WRITE message with its path and NUL, so READ returns it */
	{
		static char v[XENSTORE_PAYLOAD_MAX];
		const size_t fit = XENSTORE_PAYLOAD_MAX - sizeof("/big");

		memset(v, 'v', sizeof(v));
		assert_int_equal(store_write(s, "/big", v, fit + 1), -E2BIG);
		assert_int_equal(store_write(s, "/big", v, fit), 0);
		assert_int_equal(store_read(s, "/big", &val, &len), 0);
		assert_int_equal(len, fit);
		free(val);
	}
	assert_int_equal(store_set_perms(s, "/", p, 0), -EINVAL);
}

static void test_domain_introduce_release(void **state)
{
	struct store *s = *state;
	struct store_perm *got;
	unsigned int n;
	char *val;

	assert_int_equal(store_domain_introduce(s, 5), -EEXIST);
	assert_int_equal(store_domain_introduce(s, 0), -EINVAL);
	assert_true(store_domain_is_introduced(s, 5));
	assert_int_equal(store_get_perms(s, "/local/domain/5", &got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].id, 5);
	assert_int_equal(got[0].perm, STORE_PERM_NONE);
	free(got);
	assert_int_equal(store_write(s, "/local/domain/5/x", "1", 1), 0);
	/* a node the guest owns outside its home goes to dom0 */
	assert_int_equal(store_write(s, "/elsewhere", "1", 1), 0);
	{
		struct store_perm p = {.id = 5, .perm = STORE_PERM_NONE};

		assert_int_equal(store_set_perms(s, "/elsewhere", &p, 1), 0);
	}
	assert_int_equal(store_domain_release(s, 5), 0);
	assert_false(store_domain_is_introduced(s, 5));
	assert_int_equal(store_read(s, "/local/domain/5", &val, NULL), -ENOENT);
	assert_int_equal(store_get_perms(s, "/elsewhere", &got, &n), 0);
	assert_int_equal(got[0].id, 0);
	free(got);
	assert_int_equal(store_domain_release(s, 5), -ENOENT);
	assert_int_equal(store_domain_introduce(s, 5), 0);
}

/* One XS_DIRECTORY_PART: @off as sent, and its reply. */
static struct tmsg *dir_part(struct tclient *tc, uint32_t tx, const char *path, const char *off)
{
	return tc_call(tc, XS_DIRECTORY_PART, tx, path, off, NULL);
}

/* The generation a DIRECTORY_PART reply starts with: decimal digits, then NUL. */
static const char *part_gen(const struct tmsg *m)
{
	size_t n = strlen(m->body);

	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	assert_true(n > 0 && n < m->hdr.len);
	assert_int_equal(strspn(m->body, "0123456789"), n);
	return m->body;
}

/*
 * Read @path's whole child list part by part, as libxenstore's
 * xs_directory() does after E2BIG; @list gets the names (each with its
 * NUL), @gen the generation.  Return: the number of parts.
 */
static int read_parts(struct tclient *tc, uint32_t tx, const char *path, char *list, size_t size,
		      size_t *len, char *gen)
{
	char off[16];
	int parts = 0;

	*len = 0;
	for (;;) {
		struct tmsg *m;
		size_t glen, n;

		snprintf(off, sizeof(off), "%zu", *len);
		m = dir_part(tc, tx, path, off);
		TC_OK(m);
		assert_true(m->hdr.len <= XENSTORE_PAYLOAD_MAX);
		glen = strlen(part_gen(m)) + 1;
		if (parts == 0)
			strcpy(gen, m->body);
		else
			assert_string_equal(m->body, gen); /* nothing changed meanwhile */
		parts++;
		n = m->hdr.len - glen;
		assert_true(n > 0);
		/* every part is whole names */
		assert_int_equal(m->body[m->hdr.len - 1], '\0');
		assert_true(*len + n <= size);
		memcpy(list + *len, m->body + glen, n);
		*len += n;
		/* the last part ends with an empty name */
		if (n == 1 || (n >= 2 && m->body[m->hdr.len - 2] == '\0'))
			break;
	}
	(*len)--; /* the empty name */
	return parts;
}

/*
 * XS_DIRECTORY_PART (review finding 2), as xenstored answers it: request
 * "<path>\0<offset>\0", reply "<generation>\0" and the whole names from
 * byte <offset> of the child list that fit, with an empty name after the
 * last one; an offset at or past the end gets the empty name alone.
 */
static void test_directory_part(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	struct tclient *g = tc_open(s, 5);
	static char want[16384], got[16384];
	char path[80], gen[32], gen2[32], off[32];
	size_t wlen = 0, glen;
	struct tmsg *m;
	int i, parts;

	for (i = 0; i < 200; i++) {
		int n = snprintf(path, sizeof(path), "/big/child-with-a-long-name-%04d", i);

		assert_int_equal(store_mkdir(s, path), 0);
		memcpy(want + wlen, path + 5, (size_t)n - 5 + 1);
		wlen += (size_t)n - 5 + 1;
	}
	TC_ERR(tc_call(d0, XS_DIRECTORY, 0, "/big", NULL), "E2BIG");
	parts = read_parts(d0, 0, "/big", got, sizeof(got), &glen, gen);
	assert_int_equal(parts, 2); /* 6600 bytes of names */
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
	/* the first part is as full as whole names allow */
	m = dir_part(d0, 0, "/big", "0");
	assert_true(m->hdr.len + 33 >= XENSTORE_PAYLOAD_MAX); /* 33: a name and its NUL */
	assert_int_not_equal(m->body[m->hdr.len - 2], '\0');

	/* at the end, or past it: the empty name alone */
	for (i = 0; i < 3; i++) {
		snprintf(off, sizeof(off), "%zu", wlen + (size_t)(i == 2 ? 1000000 : i));
		m = dir_part(d0, 0, "/big", off);
		TC_OK(m);
		assert_string_equal(part_gen(m), gen);
		assert_int_equal(m->hdr.len, strlen(gen) + 2);
		assert_int_equal(m->body[m->hdr.len - 1], '\0');
	}
	/* an offset inside a name gives the rest of the list from there, as xenstored */
	m = dir_part(d0, 0, "/big", "1");
	TC_OK(m);
	assert_string_equal(m->body + strlen(part_gen(m)) + 1, "hild-with-a-long-name-0000");

	/* a small list: one part with its end */
	assert_int_equal(store_mkdir(s, "/small/a"), 0);
	assert_int_equal(store_mkdir(s, "/small/bc"), 0);
	m = dir_part(d0, 0, "/small", "0");
	glen = strlen(part_gen(m)) + 1;
	assert_int_equal(m->hdr.len, glen + 6);
	assert_memory_equal(m->body + glen, "a\0bc\0", 6);

	/* the generation changes with the children, and only then */
	m = dir_part(d0, 0, "/big", "0");
	assert_string_equal(part_gen(m), gen);
	assert_int_equal(store_mkdir(s, "/big/one-more"), 0);
	m = dir_part(d0, 0, "/big", "0");
	assert_string_not_equal(part_gen(m), gen);
	strcpy(gen2, m->body);
	assert_int_equal(store_rm(s, "/big/one-more"), 0);
	m = dir_part(d0, 0, "/big", "0");
	assert_string_not_equal(part_gen(m), gen2);
	assert_string_not_equal(m->body, gen);

	/* bad requests */
	static const char *const bad[] = {"",	"x",  "-1",   "+1",
					  " 1", "1x", "0x10", "99999999999999999999"};
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
		TC_ERR(dir_part(d0, 0, "/big", bad[i]), "EINVAL");
	TC_ERR(tc_call(d0, XS_DIRECTORY_PART, 0, "/big", NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_DIRECTORY_PART, 0, "/big", "0", "0", NULL), "EINVAL");
	assert_int_equal(tc_send(d0, XS_DIRECTORY_PART, 9, 0,
				 "/big\0"
				 "0",
				 6),
			 0);
	TC_ERR(tc_reply(d0), "EINVAL"); /* the offset is not terminated */
	TC_ERR(dir_part(d0, 0, "@releaseDomain", "0"), "EINVAL");
	TC_ERR(dir_part(d0, 0, "/nothing", "0"), "ENOENT");

	/* permissions as XS_DIRECTORY: the guest may not read /big, may its home */
	TC_ERR(tc_call(g, XS_DIRECTORY, 0, "/big", NULL), "EACCES");
	TC_ERR(dir_part(g, 0, "/big", "0"), "EACCES");
	TC_OK(tc_write(g, 0, "k", "v"));
	m = dir_part(g, 0, "", "0");
	TC_ERR(m, "EINVAL"); /* "" is no path */
	m = dir_part(g, 0, "/local/domain/5", "0");
	glen = strlen(part_gen(m)) + 1;
	assert_int_equal(m->hdr.len, glen + 3);
	assert_memory_equal(m->body + glen, "k\0", 3);
	tc_close(g);
	tc_close(d0);
}

/*
 * Inside a transaction, DIRECTORY_PART sees the transaction's children,
 * and the generation of a list the transaction changed still tells each
 * version apart: a client reading parts learns of its own changes too.
 */
/* DIRECTORY_PART is exactly "<path>\0<offset>\0": a byte after the offset's NUL is refused. */
static void test_directory_part_trailing(void **state)
{
	static const char req[] = "/local\0"
				  "0\0"
				  "x";
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	assert_int_equal(tc_send(d0, XS_DIRECTORY_PART, 77, 0, req, sizeof(req) - 2), 0);
	m = tc_reply(d0);
	assert_non_null(m);
	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	assert_int_equal(tc_send(d0, XS_DIRECTORY_PART, 77, 0, req, sizeof(req) - 1), 0);
	m = tc_reply(d0);
	assert_non_null(m);
	TC_ERR(m, "EINVAL");
	tc_close(d0);
}

static void test_directory_part_txn(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	static char got[16384];
	char path[80], gen[32], gen_t[32], gen_t2[32];
	size_t glen;
	uint32_t t;
	int i;

	for (i = 0; i < 150; i++) {
		snprintf(path, sizeof(path), "/big/child-with-a-long-name-%04d", i);
		assert_int_equal(store_mkdir(s, path), 0);
	}
	read_parts(d0, 0, "/big", got, sizeof(got), &glen, gen);
	t = tc_txn_start(d0);
	read_parts(d0, t, "/big", got, sizeof(got), &glen, gen_t);
	assert_string_equal(gen_t, gen); /* unchanged: the committed list */
	TC_OK(tc_mkdir(d0, t, "/big/in-txn"));
	read_parts(d0, t, "/big", got, sizeof(got), &glen, gen_t);
	assert_string_not_equal(gen_t, gen);
	assert_memory_equal(got + glen - sizeof("in-txn"), "in-txn", sizeof("in-txn"));
	/* outside, the committed list is unchanged */
	read_parts(d0, 0, "/big", got, sizeof(got), &glen, gen_t2);
	assert_string_equal(gen_t2, gen);
	TC_OK(tc_rm(d0, t, "/big/in-txn"));
	read_parts(d0, t, "/big", got, sizeof(got), &glen, gen_t2);
	assert_string_not_equal(gen_t2, gen_t);
	assert_string_not_equal(gen_t2, gen);
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "F", NULL));
	tc_close(d0);
}

/*
 * Replies to the byte, as xenstored sends them: "OK" and an error's name
 * each with its NUL, a transaction id and "T"/"F" as NUL-terminated strings.
 */
static void test_reply_bytes(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;
	uint32_t t;

	m = tc_write(d0, 0, "/rb", "v");
	assert_int_equal(m->hdr.type, XS_WRITE);
	assert_int_equal(m->hdr.len, sizeof("OK"));
	assert_memory_equal(m->body, "OK", sizeof("OK"));
	m = tc_read(d0, 0, "/rb/none");
	assert_int_equal(m->hdr.type, XS_ERROR);
	assert_int_equal(m->hdr.len, sizeof("ENOENT"));
	assert_memory_equal(m->body, "ENOENT", sizeof("ENOENT"));
	m = tc_call(d0, XS_TRANSACTION_START, 0, "", NULL);
	assert_int_equal(m->hdr.type, XS_TRANSACTION_START);
	assert_true(m->hdr.len >= 2);
	assert_int_equal(m->body[m->hdr.len - 1], '\0');
	assert_int_equal(strspn(m->body, "0123456789"), m->hdr.len - 1);
	t = (uint32_t)strtoul(m->body, NULL, 10);
	TC_OK(tc_call(d0, XS_TRANSACTION_END, t, "F", NULL));
	/* domain 0 always exists */
	m = tc_call(d0, XS_IS_DOMAIN_INTRODUCED, 0, "0", NULL);
	assert_int_equal(m->hdr.type, XS_IS_DOMAIN_INTRODUCED);
	assert_int_equal(m->hdr.len, sizeof("T"));
	assert_memory_equal(m->body, "T", sizeof("T"));
	m = tc_call(d0, XS_IS_DOMAIN_INTRODUCED, 0, "6", NULL);
	assert_int_equal(m->hdr.len, sizeof("F"));
	assert_memory_equal(m->body, "F", sizeof("F"));
	tc_close(d0);
}

/* Numbers are read whole: 2^64 + 5 is no domid 5 and no offset 5, and 2^32 - 1 is an offset. */
static void test_numbers_do_not_wrap(void **state)
{
	static const char wraps_to_5[] = "18446744073709551621";
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;
	size_t glen;

	TC_ERR(tc_call(d0, XS_GET_DOMAIN_PATH, 0, wraps_to_5, NULL), "EINVAL");
	TC_ERR(tc_call(d0, XS_IS_DOMAIN_INTRODUCED, 0, wraps_to_5, NULL), "EINVAL");
	assert_int_equal(store_mkdir(*state, "/n/abcdefgh"), 0);
	TC_ERR(tc_call(d0, XS_DIRECTORY_PART, 0, "/n", wraps_to_5, NULL), "EINVAL");
	/* the largest offset there is: past the end, so the empty name alone */
	m = tc_call(d0, XS_DIRECTORY_PART, 0, "/n", "4294967295", NULL);
	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	glen = strlen(m->body) + 1;
	assert_int_equal(m->hdr.len, glen + 1);
	assert_int_equal(m->body[glen], '\0');
	tc_close(d0);
}

/*
 * Requests other than WATCH and UNWATCH look their transaction id up, as
 * in xenstored: one that names no open transaction of the connection is
 * ENOENT, and the request does nothing.
 */
static void test_unknown_tx_id(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_call(d0, XS_WATCH, 0, "/u", "t", NULL));
	tc_drain_events(d0);
	TC_ERR(tc_call(d0, XS_GET_DOMAIN_PATH, 999, "5", NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_GET_PERMS, 999, "/", NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_DIRECTORY_PART, 999, "/", "0", NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_RESET_WATCHES, 999, NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_WRITE, 999, "/u", NULL), "ENOENT");
	/* the watch is still there, and nothing was written */
	TC_ERR(tc_read(d0, 0, "/u"), "ENOENT");
	TC_OK(tc_write(d0, 0, "/u", "1"));
	m = tc_event(d0);
	assert_non_null(m);
	assert_string_equal(m->body, "/u");
	assert_null(tc_event(d0));
	tc_close(d0);
}

/* Privileged requests are domain 0's alone: any other domid, the lowest and the highest, is EACCES. */
static void test_privileged_only_dom0(void **state)
{
	static const domid_t guests[] = {1, DOMID_FIRST_RESERVED - 1};

	for (size_t i = 0; i < sizeof(guests) / sizeof(guests[0]); i++) {
		struct tclient *g = tc_open(*state, guests[i]);

		TC_ERR(tc_call(g, XS_IS_DOMAIN_INTRODUCED, 0, "0", NULL), "EACCES");
		TC_ERR(tc_call(g, XS_CONTROL, 0, "x", NULL), "EACCES");
		tc_close(g);
	}
}

/*
 * Make @dir's child list 62 names of 63 characters and a last one such
 * that the generation (with its NUL), the list and @extra more bytes come
 * to a whole payload; the list is one creation away from done, so the
 * generation it will have is the current one plus 2.  Returns that
 * generation's length with its NUL.
 */
static size_t fill_dir_to(struct store *s, struct tclient *tc, const char *dir, size_t extra)
{
	char path[256], gen[32];
	struct tmsg *m;
	size_t glen, last;
	int i;

	for (i = 0; i < 62; i++) {
		snprintf(path, sizeof(path), "%s/%063d", dir, i);
		assert_int_equal(store_mkdir(s, path), 0);
	}
	m = tc_call(tc, XS_DIRECTORY_PART, 0, dir, "0", NULL);
	TC_OK(m);
	snprintf(gen, sizeof(gen), "%llu", strtoull(m->body, NULL, 10) + 2);
	glen = strlen(gen) + 1;
	last = XENSTORE_PAYLOAD_MAX - glen - 62 * 64 - 1 - extra;
	i = snprintf(path, sizeof(path), "%s/", dir);
	memset(path + i, 'z', last);
	path[(size_t)i + last] = '\0';
	assert_int_equal(store_mkdir(s, path), 0);
	m = tc_call(tc, XS_DIRECTORY_PART, 0, dir, "99999", NULL);
	assert_string_equal(m->body, gen);
	return glen;
}

/*
 * DIRECTORY_PART to the byte: a list that fits with its generation and
 * the empty name that ends it comes whole, in a reply of exactly a
 * payload; one byte longer, and its last name waits for the next part.
 */
static void test_directory_part_exact_fit(void **state)
{
	struct store *s = *state;
	struct tclient *d0 = tc_open(s, 0);
	struct tmsg *m;
	size_t glen;

	glen = fill_dir_to(s, d0, "/fit", 1);
	m = tc_call(d0, XS_DIRECTORY_PART, 0, "/fit", "0", NULL);
	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	assert_int_equal(m->hdr.len, XENSTORE_PAYLOAD_MAX);
	assert_int_equal(m->body[glen - 1], '\0');
	assert_int_equal(m->body[XENSTORE_PAYLOAD_MAX - 2], '\0');
	assert_int_equal(m->body[XENSTORE_PAYLOAD_MAX - 3], 'z');

	glen = fill_dir_to(s, d0, "/over", 0);
	m = tc_call(d0, XS_DIRECTORY_PART, 0, "/over", "0", NULL);
	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	assert_int_equal(m->hdr.len, glen + 62 * 64);
	m = tc_call(d0, XS_DIRECTORY_PART, 0, "/over", "3968", NULL);
	assert_int_equal(m->hdr.type, XS_DIRECTORY_PART);
	/* the last name, its NUL and the empty name: the list was one byte over */
	assert_int_equal(m->hdr.len, XENSTORE_PAYLOAD_MAX - 62 * 64 + 1);
	assert_int_equal(m->body[m->hdr.len - 1], '\0');
	assert_int_equal(m->body[m->hdr.len - 2], '\0');
	tc_close(d0);
}

/* RM unlinks exactly the name removed from its parent's list, not a sibling it is a prefix of. */
static void test_rm_exact_name(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);
	struct tmsg *m;

	TC_OK(tc_mkdir(d0, 0, "/x/ab"));
	TC_OK(tc_mkdir(d0, 0, "/x/a"));
	TC_OK(tc_rm(d0, 0, "/x/a"));
	m = tc_call(d0, XS_DIRECTORY, 0, "/x", NULL);
	assert_int_equal(m->hdr.len, sizeof("ab"));
	assert_memory_equal(m->body, "ab", sizeof("ab"));
	TC_OK(tc_read(d0, 0, "/x/ab"));
	tc_close(d0);
}

/* SET_PERMS on a special path that names no special node is ENOENT, as GET_PERMS. */
static void test_set_perms_unknown_special(void **state)
{
	struct tclient *d0 = tc_open(*state, 0);

	TC_ERR(tc_call(d0, XS_SET_PERMS, 0, "@other", "n0", NULL), "ENOENT");
	TC_ERR(tc_call(d0, XS_GET_PERMS, 0, "@other", NULL), "ENOENT");
	tc_close(d0);
}

/* In process, a permission list holds only the bits of enum store_perm_bits: others are EINVAL. */
static void test_in_process_perm_bits(void **state)
{
	struct store *s = *state;
	struct store_perm p[2] = {{.id = 0, .perm = STORE_PERM_NONE}, {.id = 5, .perm = 4}};
	struct store_perm *got;
	unsigned int n;

	assert_int_equal(store_write(s, "/pb", "", 0), 0);
	assert_int_equal(store_set_perms(s, "/pb", p, 2), -EINVAL);
	p[1].perm = 16;
	assert_int_equal(store_set_perms(s, "/pb", p, 2), -EINVAL);
	assert_int_equal(store_set_perms(s, "@releaseDomain", p, 2), -EINVAL);
	assert_int_equal(store_get_perms(s, "/pb", &got, &n), 0);
	assert_int_equal(n, 1);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mkdir_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_perms_ops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_relative_paths, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_domain_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reserved_domids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_privileged_and_unknown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_process, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_domain_introduce_release, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_directory_part, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_directory_part_trailing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_directory_part_txn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_reply_bytes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_numbers_do_not_wrap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unknown_tx_id, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_privileged_only_dom0, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_directory_part_exact_fit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rm_exact_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_perms_unknown_special, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_in_process_perm_bits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
