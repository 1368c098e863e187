// SPDX-License-Identifier: MIT
/* test_tap_spec.c - pvnetd --uplink tap:NAME[@NETNS], netns names: what is taken at each bound */
#include <errno.h>
#include <net/if.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "uplink/port.h"
#include "uplink/tap.h"

/*
 * A name of up to IFNAMSIZ - 1 bytes and a namespace of up to
 * UPLINK_NETNS_MAX: taken whole, each into a buffer of exactly its
 * documented size (ASan sees a byte written past either); one byte more,
 * an empty part, a '/' or another prefix: refused.
 */
static void test_bounds(void **state)
{
	char spec[128], want_ns[UPLINK_NETNS_MAX + 2], want_name[IFNAMSIZ + 1];
	char name[IFNAMSIZ], netns[UPLINK_NETNS_MAX + 1];

	(void)state;
	memset(want_name, 'n', IFNAMSIZ - 1);
	want_name[IFNAMSIZ - 1] = '\0';
	memset(want_ns, 's', UPLINK_NETNS_MAX);
	want_ns[UPLINK_NETNS_MAX] = '\0';
	snprintf(spec, sizeof(spec), "tap:%s@%s", want_name, want_ns);
	assert_int_equal(uplink_tap_spec_parse(spec, name, netns), 0);
	assert_string_equal(name, want_name);
	assert_string_equal(netns, want_ns);
	assert_int_equal(uplink_tap_spec_parse("tap:up0", name, netns), 0);
	assert_string_equal(name, "up0");
	assert_string_equal(netns, "");

	want_name[IFNAMSIZ - 1] = 'n'; /* IFNAMSIZ bytes: no room for its NUL */
	want_name[IFNAMSIZ] = '\0';
	snprintf(spec, sizeof(spec), "tap:%s", want_name);
	assert_int_equal(uplink_tap_spec_parse(spec, name, netns), -EINVAL);
	want_ns[UPLINK_NETNS_MAX] = 's';
	want_ns[UPLINK_NETNS_MAX + 1] = '\0';
	snprintf(spec, sizeof(spec), "tap:up0@%s", want_ns);
	assert_int_equal(uplink_tap_spec_parse(spec, name, netns), -EINVAL);
	assert_int_equal(uplink_tap_spec_parse("tap:", name, netns), -EINVAL);
	assert_int_equal(uplink_tap_spec_parse("tap:@ns", name, netns), -EINVAL);
	assert_int_equal(uplink_tap_spec_parse("tap:up0@", name, netns), -EINVAL);
	assert_int_equal(uplink_tap_spec_parse("tap:a/b", name, netns), -EINVAL);
	assert_int_equal(uplink_tap_spec_parse("vxlan:up0", name, netns), -EINVAL);
}

/*
 * uplink_netns_name_ok(), the check of `pvnet attach --netns` and of
 * pvnetd's VXLAN netns=: 1..UPLINK_NETNS_MAX bytes are taken, the longest
 * too, one byte more is not; "." and ".." (the directory /run/netns and
 * its parent) are refused, names merely starting with dots are not; a
 * '/', a space, a control character or DEL anywhere is refused; bytes
 * past 0x7f (UTF-8) and '~' (the last printable byte) are taken.
 */
static void test_netns_names(void **state)
{
	char ns[UPLINK_NETNS_MAX + 2];

	(void)state;
	memset(ns, 's', UPLINK_NETNS_MAX);
	ns[UPLINK_NETNS_MAX] = '\0';
	assert_true(uplink_netns_name_ok(ns));
	ns[UPLINK_NETNS_MAX] = 's';
	ns[UPLINK_NETNS_MAX + 1] = '\0';
	assert_false(uplink_netns_name_ok(ns));
	assert_true(uplink_netns_name_ok("a"));
	assert_false(uplink_netns_name_ok(""));
	assert_false(uplink_netns_name_ok("."));
	assert_false(uplink_netns_name_ok(".."));
	assert_true(uplink_netns_name_ok("..."));
	assert_true(uplink_netns_name_ok(".a"));
	assert_false(uplink_netns_name_ok("a/b"));
	assert_false(uplink_netns_name_ok("/"));
	assert_false(uplink_netns_name_ok("a b"));
	assert_false(uplink_netns_name_ok("a\tb"));
	assert_false(uplink_netns_name_ok("a\x01"));
	assert_false(uplink_netns_name_ok("a\x7f"));
	assert_true(uplink_netns_name_ok("a~"));
	assert_true(uplink_netns_name_ok("caf\xc3\xa9"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_netns_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
