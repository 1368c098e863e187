// SPDX-License-Identifier: MIT
/* test_cli.c - unit tests of the pvnet command line's pure parts: numbers, capture records */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* A datagram: header with @len and @dir, then @caplen bytes 0, 1, 2... */
static size_t dgram(uint8_t *buf, uint32_t len, uint8_t dir, uint32_t caplen)
{
	struct sw_capture_hdr h = {.ts_ns = 1234567890123456789ULL, .len = len, .dir = dir};

	memcpy(buf, &h, sizeof(h));
	for (uint32_t i = 0; i < caplen; i++)
		buf[sizeof(h) + i] = (uint8_t)i;
	return sizeof(h) + caplen;
}

static void test_capture_record(void **state)
{
	static uint8_t buf[sizeof(struct sw_capture_hdr) + 70000];
	struct capture_rec r;
	size_t n;

	(void)state;
	/* Whole frame, within the snap length. */
	n = dgram(buf, 60, SW_CAPTURE_IN, 60);
	assert_int_equal(capture_record(buf, n, 1500, &r), 0);
	assert_int_equal(r.len, 60);
	assert_int_equal(r.caplen, 60);
	assert_int_equal(r.dir, SW_CAPTURE_IN);
	assert_true(r.ts_ns == 1234567890123456789ULL);
	assert_ptr_equal(r.data, buf + sizeof(struct sw_capture_hdr));
	assert_int_equal(r.data[59], 59);
	/* Cut at the snap length; the length stays whole. */
	n = dgram(buf, 65535, SW_CAPTURE_OUT, 96);
	assert_int_equal(capture_record(buf, n, 96, &r), 0);
	assert_int_equal(r.len, 65535);
	assert_int_equal(r.caplen, 96);
	assert_int_equal(r.dir, SW_CAPTURE_OUT);

	/* Shorter than a header; the header alone of a non-empty frame. */
	assert_int_equal(capture_record(buf, sizeof(struct sw_capture_hdr) - 1, 96, &r), -EBADMSG);
	n = dgram(buf, 60, SW_CAPTURE_IN, 0);
	assert_int_equal(capture_record(buf, n, 96, &r), -EBADMSG);
	/* More than the frame, more than the snap length, fewer than both. */
	n = dgram(buf, 60, SW_CAPTURE_IN, 61);
	assert_int_equal(capture_record(buf, n, 1500, &r), -EBADMSG);
	n = dgram(buf, 1000, SW_CAPTURE_IN, 101);
	assert_int_equal(capture_record(buf, n, 100, &r), -EBADMSG);
	n = dgram(buf, 1000, SW_CAPTURE_IN, 99);
	assert_int_equal(capture_record(buf, n, 100, &r), -EBADMSG);
	/* No direction, or one that is not a single direction. */
	n = dgram(buf, 60, 0, 60);
	assert_int_equal(capture_record(buf, n, 1500, &r), -EBADMSG);
	n = dgram(buf, 60, SW_CAPTURE_IN | SW_CAPTURE_OUT, 60);
	assert_int_equal(capture_record(buf, n, 1500, &r), -EBADMSG);
	/* An empty frame is a frame of no bytes: legal as a record. */
	n = dgram(buf, 0, SW_CAPTURE_IN, 0);
	assert_int_equal(capture_record(buf, n, 1500, &r), 0);
	assert_int_equal(r.caplen, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cliarg_ulong),
	    cmocka_unit_test(test_capture_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
