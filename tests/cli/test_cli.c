// SPDX-License-Identifier: MIT
/* test_cli.c - unit tests of the pvnet command line's pure parts: numbers, output paths,
 * capture records */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "cliarg.h"

static void test_cliarg_ulong(void **state)
{
	unsigned long v = 7;

	(void)state;
	assert_int_equal(cliarg_ulong("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cliarg_ulong("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	v = 7;
	static const char *const bad[] = {
	    "", "11", "-1", "+1", " 1", "1 ", "1x", "0x1", "99999999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cliarg_ulong(bad[i], 0, 10, &v), -EINVAL);
	assert_int_equal(cliarg_ulong("4", 5, 10, &v), -EINVAL);
	assert_int_equal(v, 7); /* untouched by a refusal */
}

/* @dir/@name as a path in @buf. */
static const char *at(char *buf, size_t len, const char *dir, const char *name)
{
	assert_true((size_t)snprintf(buf, len, "%s/%s", dir, name) < len);
	return buf;
}

static void test_cliarg_out_paths(void **state)
{
	char dir[] = "/tmp/pvnet-cli-test.XXXXXX", p[512], cwd[512];
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	f = fopen(at(p, sizeof(p), dir, "old.json"), "w");
	assert_non_null(f);
	assert_int_equal(fputs("{}", f), 1);
	assert_int_equal(fclose(f), 0);

	/* A file: a new one in an existing directory, or one to write over. */
	assert_int_equal(cliarg_out_file(at(p, sizeof(p), dir, "new.json")), 0);
	assert_int_equal(stat(p, &st), -1); /* not created by asking */
	assert_int_equal(cliarg_out_file(at(p, sizeof(p), dir, "old.json")), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 2); /* not truncated by asking */
	assert_int_equal(cliarg_out_file(dir), -EISDIR);
	assert_int_equal(cliarg_out_file(at(p, sizeof(p), dir, "no/such.json")), -ENOENT);
	assert_int_equal(cliarg_out_file(at(p, sizeof(p), dir, "old.json/x.json")), -ENOTDIR);
	assert_int_equal(cliarg_out_file(""), -ENOENT);
	/*
	 * A path stat() refuses for another reason than a missing file is refused
	 * with that reason, though its directory is writable: a symbolic link to
	 * itself, a name longer than NAME_MAX.
	 */
	assert_int_equal(symlink("loop", at(p, sizeof(p), dir, "loop")), 0);
	assert_int_equal(cliarg_out_file(p), -ELOOP);
	assert_int_equal(cliarg_out_dir(p), -ELOOP);
	assert_int_equal(unlink(p), 0);
	char name[300];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(cliarg_out_file(at(p, sizeof(p), dir, name)), -ENAMETOOLONG);
	assert_int_equal(cliarg_out_dir(p), -ENAMETOOLONG);
	/* A bare name is in the working directory. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(cliarg_out_file("bare.json"), 0);
	assert_int_equal(chdir(cwd), 0);

	/* A directory: an existing one, or a new one in an existing parent. */
	assert_int_equal(cliarg_out_dir(dir), 0);
	assert_int_equal(cliarg_out_dir(at(p, sizeof(p), dir, "plot")), 0);
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(cliarg_out_dir(at(p, sizeof(p), dir, "old.json")), -ENOTDIR);
	assert_int_equal(cliarg_out_dir(at(p, sizeof(p), dir, "no/plot")), -ENOENT);
	assert_int_equal(cliarg_out_dir(""), -ENOENT);

	assert_int_equal(unlink(at(p, sizeof(p), dir, "old.json")), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* Append a record at @off: header with @len, @dir and @caplen, bytes 0, 1, 2..., padding. */
static size_t rec(uint8_t *buf, size_t off, uint32_t len, uint8_t dir, uint32_t caplen)
{
	struct sw_capture_hdr h = {
	    .ts_ns = 1234567890123456789ULL, .len = len, .dir = dir, .caplen = caplen};
	size_t n = sizeof(h) + caplen;

	memcpy(buf + off, &h, sizeof(h));
	for (uint32_t i = 0; i < caplen; i++)
		buf[off + sizeof(h) + i] = (uint8_t)i;
	n += -n % SW_CAPTURE_ALIGN;
	memset(buf + off + sizeof(h) + caplen, 0, n - sizeof(h) - caplen);
	return off + n;
}

/* The only record of a datagram of @n bytes: 1, or what capture_next() said. */
static int one(const uint8_t *buf, size_t n, uint32_t snaplen, struct capture_rec *r)
{
	size_t off = 0;
	int rc = capture_next(buf, n, &off, snaplen, r);

	if (rc != 1)
		return rc;
	assert_int_equal(off, n);
	return capture_next(buf, n, &off, snaplen, r) == 0 ? 1 : -1;
}

static void test_capture_records(void **state)
{
	static uint8_t buf[SW_CAPTURE_DGRAM + 70000];
	const size_t H = sizeof(struct sw_capture_hdr);
	struct capture_rec r;
	size_t n, off;

	(void)state;
	/* A whole frame within the snap length; 60 + 24 bytes padded to 88. */
	n = rec(buf, 0, 60, SW_CAPTURE_IN, 60);
	assert_int_equal(n, 88);
	assert_int_equal(one(buf, n, 1500, &r), 1);
	assert_int_equal(r.len, 60);
	assert_int_equal(r.caplen, 60);
	assert_int_equal(r.dir, SW_CAPTURE_IN);
	assert_true(r.ts_ns == 1234567890123456789ULL);
	assert_ptr_equal(r.data, buf + H);
	assert_int_equal(r.data[59], 59);
	/* Cut at the snap length; the length stays whole. */
	n = rec(buf, 0, 65535, SW_CAPTURE_OUT, 96);
	assert_int_equal(one(buf, n, 96, &r), 1);
	assert_int_equal(r.len, 65535);
	assert_int_equal(r.caplen, 96);
	assert_int_equal(r.dir, SW_CAPTURE_OUT);
	/* Fewer bytes than the frame and the snap length: what there was (caplen < len). */
	n = rec(buf, 0, 1000, SW_CAPTURE_IN, 14);
	assert_int_equal(one(buf, n, 100, &r), 1);
	assert_int_equal(r.caplen, 14);
	/* An empty frame is a frame of no bytes: legal as a record. */
	n = rec(buf, 0, 0, SW_CAPTURE_IN, 0);
	assert_int_equal(one(buf, n, 1500, &r), 1);
	assert_int_equal(r.caplen, 0);

	/* Several records in one datagram, in order, each at its padded offset. */
	n = rec(buf, 0, 61, SW_CAPTURE_IN, 61);
	n = rec(buf, n, 1514, SW_CAPTURE_OUT, 1514);
	n = rec(buf, n, 9000, SW_CAPTURE_IN, 128);
	off = 0;
	assert_int_equal(capture_next(buf, n, &off, 65535, &r), 1);
	assert_int_equal(r.len, 61);
	assert_int_equal(off, 88);
	assert_int_equal(capture_next(buf, n, &off, 65535, &r), 1);
	assert_int_equal(r.len, 1514);
	assert_ptr_equal(r.data, buf + 88 + H);
	assert_int_equal(capture_next(buf, n, &off, 65535, &r), 1);
	assert_int_equal(r.caplen, 128);
	assert_int_equal(capture_next(buf, n, &off, 65535, &r), 0);
	assert_int_equal(off, n);
	/* The same datagram cut inside its last record: two records, then refused. */
	off = 0;
	assert_int_equal(capture_next(buf, n - 8, &off, 65535, &r), 1);
	assert_int_equal(capture_next(buf, n - 8, &off, 65535, &r), 1);
	assert_int_equal(capture_next(buf, n - 8, &off, 65535, &r), -EBADMSG);

	/* Shorter than a header. */
	off = 0;
	assert_int_equal(capture_next(buf, H - 1, &off, 96, &r), -EBADMSG);
	/* More bytes than the frame, than the snap length, than the datagram holds. */
	n = rec(buf, 0, 60, SW_CAPTURE_IN, 61);
	assert_int_equal(one(buf, n, 1500, &r), -EBADMSG);
	n = rec(buf, 0, 1000, SW_CAPTURE_IN, 101);
	assert_int_equal(one(buf, n, 100, &r), -EBADMSG);
	n = rec(buf, 0, 1000, SW_CAPTURE_IN, 500);
	assert_int_equal(one(buf, H + 499, 1500, &r), -EBADMSG);
	/* Its padding missing. */
	n = rec(buf, 0, 60, SW_CAPTURE_IN, 60);
	assert_int_equal(one(buf, H + 60, 1500, &r), -EBADMSG);
	/* No direction, or one that is not a single direction. */
	n = rec(buf, 0, 60, 0, 60);
	assert_int_equal(one(buf, n, 1500, &r), -EBADMSG);
	n = rec(buf, 0, 60, SW_CAPTURE_IN | SW_CAPTURE_OUT, 60);
	assert_int_equal(one(buf, n, 1500, &r), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cliarg_ulong),
	    cmocka_unit_test(test_cliarg_out_paths),
	    cmocka_unit_test(test_capture_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
