// SPDX-License-Identifier: MIT
/* test_vxlan.c - the VXLAN uplink: its specification, header checks, and the port on loopback */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/frame_builder.h"
#include "../common/log_capture.h"
#include "../common/test_skip.h"
#include "cap_port.h"
#include "switch/frame.h"
#include "switch/switch.h"
#include "uplink/tap.h"
#include "uplink/vxlan.h"
#include "uplink/vxlan_port.h"
#include "uplink/vxlan_sock.h"

/* ---- the specification ---- */

static void test_spec_defaults(void **state)
{
	struct uplink_vxlan_spec s;
	char err[128];
	const struct sockaddr_in *r = (const struct sockaddr_in *)&s.remote[0];
	const struct sockaddr_in *l = (const struct sockaddr_in *)&s.local;

	(void)state;
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=42,remote=192.0.2.1", &s, err, sizeof(err)), 0);
	assert_int_equal(s.vni, 42);
	assert_int_equal(s.dstport, 4789);
	assert_int_equal(s.mtu, 1500);
	assert_string_equal(s.name, "vxlan42");
	assert_string_equal(s.netns, "");
	assert_int_equal(s.nremotes, 1);
	assert_int_equal(s.srcport_min, 0);
	assert_int_equal(s.srcport_max, 0);
	assert_int_equal(r->sin_family, AF_INET);
	assert_int_equal(ntohl(r->sin_addr.s_addr), 0xc0000201);
	assert_int_equal(ntohs(r->sin_port), 4789);
	assert_int_equal(s.remote_len, sizeof(struct sockaddr_in));
	/* local: the wildcard, on the same port */
	assert_int_equal(l->sin_family, AF_INET);
	assert_int_equal(l->sin_addr.s_addr, 0);
	assert_int_equal(ntohs(l->sin_port), 4789);
	assert_int_equal(s.local_len, sizeof(struct sockaddr_in));
}

static void test_spec_everything(void **state)
{
	struct uplink_vxlan_spec s;
	char err[128];
	const struct sockaddr_in6 *r = (const struct sockaddr_in6 *)&s.remote[0];
	const struct sockaddr_in6 *l = (const struct sockaddr_in6 *)&s.local;
	struct in6_addr want;

	(void)state;
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:mtu=9000,netns=red,dstport=8472,local=2001:"
						 "db8::2,remote=2001:db8::1,srcport=49152-65535,"
						 "id=16777215",
						 &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.vni, 16777215);
	assert_int_equal(s.dstport, 8472);
	assert_int_equal(s.mtu, 9000);
	assert_int_equal(s.srcport_min, 49152);
	assert_int_equal(s.srcport_max, 65535);
	assert_string_equal(s.netns, "red");
	assert_string_equal(s.name, "vxlan16777215:8472");
	assert_int_equal(r->sin6_family, AF_INET6);
	inet_pton(AF_INET6, "2001:db8::1", &want);
	assert_memory_equal(&r->sin6_addr, &want, sizeof(want));
	assert_int_equal(ntohs(r->sin6_port), 8472);
	inet_pton(AF_INET6, "2001:db8::2", &want);
	assert_memory_equal(&l->sin6_addr, &want, sizeof(want));
	assert_int_equal(ntohs(l->sin6_port), 8472);
	/* the limits themselves */
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=0,remote=10.0.0.1,mtu=68,dstport=1", &s,
						 err, sizeof(err)),
			 0);
	assert_int_equal(s.vni, 0);
	assert_int_equal(s.mtu, 68);
	assert_int_equal(s.dstport, 1);
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=1,remote=10.0.0.1,mtu=65501,dstport=65535", &s, err,
				    sizeof(err)),
	    0);
	assert_int_equal(s.mtu, UPLINK_VXLAN_MTU_MAX);
	assert_int_equal(s.dstport, 65535);
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=1,remote=10.0.0.1,srcport=1-1", &s, err, sizeof(err)),
	    0);
	assert_int_equal(s.srcport_min, 1);
	assert_int_equal(s.srcport_max, 1);
	/* A namespace name of UPLINK_NETNS_MAX bytes, the longest. */
	assert_int_equal(uplink_vxlan_spec_parse(
			     "vxlan:id=1,remote=10.0.0.1,netns="
			     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			     &s, err, sizeof(err)),
			 0);
	assert_int_equal(strlen(s.netns), UPLINK_NETNS_MAX);
	/* The wildcard given as local, either family, as if not given. */
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=1,remote=10.0.0.1,local=0.0.0.0", &s,
						 err, sizeof(err)),
			 0);
	assert_true(uplink_vxlan_addr_any(&s.local));
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=1,remote=2001:db8::1,local=::", &s, err, sizeof(err)),
	    0);
	assert_true(uplink_vxlan_addr_any(&s.local));
	assert_int_equal(s.local.ss_family, AF_INET6);
}

/* Several remotes: in the order given, each on dstport; eight at most, each once, one family. */
static void test_spec_remotes(void **state)
{
	struct uplink_vxlan_spec s;
	char err[128];

	(void)state;
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:remote=10.0.0.3,id=7,remote=10.0.0.1,"
						 "dstport=4790,remote=10.0.0.2",
						 &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.nremotes, 3);
	for (unsigned int i = 0; i < 3; i++) {
		const struct sockaddr_in *r = (const struct sockaddr_in *)&s.remote[i];
		static const uint32_t want[] = {0x0a000003, 0x0a000001, 0x0a000002};

		assert_int_equal(r->sin_family, AF_INET);
		assert_int_equal(ntohl(r->sin_addr.s_addr), want[i]);
		assert_int_equal(ntohs(r->sin_port), 4790);
	}
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=10.0.0.1,remote=10.0.0.2,"
						 "remote=10.0.0.3,remote=10.0.0.4,remote=10.0.0.5,"
						 "remote=10.0.0.6,remote=10.0.0.7,remote=10.0.0.8",
						 &s, err, sizeof(err)),
			 0);
	assert_int_equal(s.nremotes, UPLINK_VXLAN_REMOTES_MAX);
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=10.0.0.1,remote=10.0.0.2,"
						 "remote=10.0.0.3,remote=10.0.0.4,remote=10.0.0.5,"
						 "remote=10.0.0.6,remote=10.0.0.7,remote=10.0.0.8,"
						 "remote=10.0.0.9",
						 &s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "at most 8 remotes");
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=10.0.0.1,remote=10.0.0.1", &s,
						 err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "remote 10.0.0.1 given twice");
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=2001:db8::1,remote=2001:db8::1",
						 &s, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=10.0.0.1,remote=2001:db8::1",
						 &s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "remotes must be of one family");
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=10.0.0.1,remote=239.0.0.1", &s,
						 err, sizeof(err)),
			 -EINVAL);
}

static void test_spec_bad(void **state)
{
	static const char *const bad[] = {
	    "tap:eth0",
	    "vxlan:",
	    "vxlan:id=42",
	    "vxlan:remote=10.0.0.1",
	    "vxlan:id=16777216,remote=10.0.0.1",
	    "vxlan:id=-1,remote=10.0.0.1",
	    "vxlan:id=4x,remote=10.0.0.1",
	    "vxlan:id=,remote=10.0.0.1",
	    "vxlan:id=99999999999,remote=10.0.0.1",
	    "vxlan:id=1,remote=",
	    "vxlan:id=1,remote=host.example",
	    "vxlan:id=1,remote=10.0.0.1/24",
	    "vxlan:id=1,remote=0.0.0.0",
	    "vxlan:id=1,remote=255.255.255.255",
	    "vxlan:id=1,remote=239.1.1.1",
	    "vxlan:id=1,remote=::",
	    "vxlan:id=1,remote=ff02::1",
	    "vxlan:id=1,remote=::ffff:10.0.0.1",
	    "vxlan:id=1,remote=fe80::1",
	    "vxlan:id=1,remote=2001:db8::1,local=::ffff:10.0.0.2",
	    "vxlan:id=1,remote=2001:db8::1,local=fe80::2",
	    "vxlan:id=4294967338,remote=10.0.0.1",
	    "vxlan:id=18446744073709551658,remote=10.0.0.1", /* 2^64 + 42 */
	    "vxlan:id=00000000042,remote=10.0.0.1",
	    "vxlan:id=1,remote=10.0.0.1,local=::1",
	    "vxlan:id=1,remote=2001:db8::1,local=10.0.0.2",
	    "vxlan:id=1,remote=10.0.0.1,local=nowhere",
	    "vxlan:id=1,remote=10.0.0.1,dstport=0",
	    "vxlan:id=1,remote=10.0.0.1,dstport=65536",
	    "vxlan:id=1,remote=10.0.0.1,mtu=67",
	    "vxlan:id=1,remote=10.0.0.1,mtu=65502",
	    "vxlan:id=1,remote=10.0.0.1,netns=",
	    "vxlan:id=1,remote=10.0.0.1,netns=a/b",
	    /* One string: a name longer than UPLINK_NETNS_MAX. */
	    ("vxlan:id=1,remote=10.0.0.1,netns="
	     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	    "vxlan:id=1,remote=10.0.0.1,bogus=1",
	    "vxlan:id=1,id=2,remote=10.0.0.1",
	    "vxlan:id=1,remote=10.0.0.1,",
	    "vxlan:id=1,,remote=10.0.0.1",
	    "vxlan:id=1,remote",
	    "vxlan:id=1,remote=10.0.0.1,srcport=",
	    "vxlan:id=1,remote=10.0.0.1,srcport=5000",
	    "vxlan:id=1,remote=10.0.0.1,srcport=0-10",
	    "vxlan:id=1,remote=10.0.0.1,srcport=10-5",
	    "vxlan:id=1,remote=10.0.0.1,srcport=1-65536",
	    "vxlan:id=1,remote=10.0.0.1,srcport=-5",
	    "vxlan:id=1,remote=10.0.0.1,srcport=5-",
	    "vxlan:id=1,remote=10.0.0.1,srcport=a-b",
	    "vxlan:id=1,remote=10.0.0.1,srcport=1-2-3",
	    "vxlan:id=1,remote=10.0.0.1,srcport=1-2,srcport=1-2",
	    /* A local group or broadcast address: what the remote sends is never read. */
	    "vxlan:id=1,remote=10.0.0.1,local=224.0.0.1",
	    "vxlan:id=1,remote=10.0.0.1,local=255.255.255.255",
	    "vxlan:id=1,remote=2001:db8::1,local=ff05::1",
	    /* A remote that is the local address: a loop. */
	    "vxlan:id=1,remote=127.0.0.1,local=127.0.0.1",
	    "vxlan:id=1,remote=10.0.0.9,remote=10.0.0.1,local=10.0.0.1",
	    "vxlan:id=1,local=2001:db8::1,remote=2001:db8::1",
	};
	struct uplink_vxlan_spec s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[128] = "";

		if (uplink_vxlan_spec_parse(bad[i], &s, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
		if (!err[0])
			fail_msg("no reason given for '%s'", bad[i]);
	}
}

/* Two uplinks whose sockets would want one UDP port are refused before anything starts. */
static void test_spec_clash(void **state)
{
	static const struct {
		const char *a, *b;
		bool clash;
		const char *says;
	} cases[] = {
	    /* Two segments on the standard port share it, each its VNI; one VNI twice cannot. */
	    {"vxlan:id=1,remote=10.0.0.1", "vxlan:id=2,remote=10.0.0.2", false, NULL},
	    {"vxlan:id=1,remote=10.0.0.1,local=10.0.0.5",
	     "vxlan:id=2,remote=10.0.0.2,local=10.0.0.5", false, NULL},
	    {"vxlan:id=1,remote=10.0.0.1", "vxlan:id=1,remote=10.0.0.2", true,
	     "VNI 1 is given twice on UDP port 4789 (the VNI is how a datagram finds its uplink"},
	    {"vxlan:id=7,remote=10.0.0.1,local=10.0.0.5,dstport=5000",
	     "vxlan:id=7,remote=10.0.0.2,local=10.0.0.5,dstport=5000,mtu=9000", true,
	     "VNI 7 is given twice on UDP port 5000"},
	    /* An address's socket and the wildcard's, one port: the first takes all its datagrams. */
	    {"vxlan:id=1,remote=10.0.0.1,local=10.0.0.5", "vxlan:id=2,remote=10.0.0.2", true,
	     "vxlan1, on its local address, and vxlan2, on every address, would both receive on "
	     "UDP port 4789"},
	    {"vxlan:id=2,remote=10.0.0.2", "vxlan:id=1,remote=10.0.0.1,local=10.0.0.5", true,
	     "vxlan1, on its local address, and vxlan2, on every address"},
	    /* A range that holds its own, shared, dstport sends from the shared socket. */
	    {"vxlan:id=1,remote=10.0.0.1,dstport=47890,srcport=47880-47899",
	     "vxlan:id=2,remote=10.0.0.2,dstport=47890", false, NULL},
	    /* One's source ports hold the other's port, either way round. */
	    {"vxlan:id=1,remote=10.0.0.1,dstport=47890,srcport=47891-47898",
	     "vxlan:id=2,remote=10.0.0.2,dstport=47891", true,
	     "the srcport range of vxlan1:47890 holds UDP port 47891, where vxlan2:47891 receives"},
	    {"vxlan:id=2,remote=10.0.0.2,dstport=47891",
	     "vxlan:id=1,remote=10.0.0.1,dstport=47890,srcport=47891-47898", true,
	     "the srcport range of vxlan1:47890 holds UDP port 47891"},
	    /* ... at the range's last port too. */
	    {"vxlan:id=1,remote=10.0.0.1,dstport=47890,srcport=47891-47898",
	     "vxlan:id=2,remote=10.0.0.2,dstport=47898", true,
	     "the srcport range of vxlan1:47890 holds UDP port 47898"},
	    /* Apart: other ports, other local addresses, families or namespaces. */
	    {"vxlan:id=1,remote=10.0.0.1", "vxlan:id=2,remote=10.0.0.2,dstport=4790", false, NULL},
	    {"vxlan:id=1,remote=10.0.0.1,local=10.0.0.5",
	     "vxlan:id=2,remote=10.0.0.2,local=10.0.0.6", false, NULL},
	    {"vxlan:id=1,remote=10.0.0.1", "vxlan:id=2,remote=2001:db8::2", false, NULL},
	    {"vxlan:id=1,remote=10.0.0.1,netns=a", "vxlan:id=2,remote=10.0.0.2,netns=b", false,
	     NULL},
	    {"vxlan:id=1,remote=10.0.0.1,dstport=47890,srcport=47891-47898",
	     "vxlan:id=2,remote=10.0.0.2,dstport=47899", false, NULL},
	    /* Kernel-picked source ports come from the ephemeral range, never a bound port. */
	    {"vxlan:id=1,remote=10.0.0.1,dstport=40000", "vxlan:id=2,remote=10.0.0.2", false, NULL},
	};
	struct uplink_vxlan_spec a, b;
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(uplink_vxlan_spec_parse(cases[i].a, &a, err, sizeof(err)), 0);
		assert_int_equal(uplink_vxlan_spec_parse(cases[i].b, &b, err, sizeof(err)), 0);
		err[0] = '\0';
		if (uplink_vxlan_spec_clash(&a, &b, err, sizeof(err)) != cases[i].clash)
			fail_msg("'%s' and '%s': clash %d expected", cases[i].a, cases[i].b,
				 cases[i].clash);
		if (cases[i].says && !strstr(err, cases[i].says))
			fail_msg("'%s' and '%s': \"%s\" does not say \"%s\"", cases[i].a,
				 cases[i].b, err, cases[i].says);
		/* They share a port when they would receive on one, whether they may or not. */
		if (uplink_vxlan_spec_shares(&a, &b) !=
		    (a.dstport == b.dstport && !strcmp(a.netns, b.netns) &&
		     a.local.ss_family == b.local.ss_family &&
		     uplink_vxlan_addr_equal(&a.local, &b.local)))
			fail_msg("'%s' and '%s': shares wrong", cases[i].a, cases[i].b);
	}
}

static void test_spec_same(void **state)
{
	struct uplink_vxlan_spec a, b;
	char err[128];

	(void)state;
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.1", &a, err, sizeof(err)), 0);
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:remote=10.0.0.1,id=5,mtu=9000", &b, err, sizeof(err)),
	    0);
	assert_true(uplink_vxlan_spec_same(&a, &b));
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=6,remote=10.0.0.1", &b, err, sizeof(err)), 0);
	assert_false(uplink_vxlan_spec_same(&a, &b));
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.2", &b, err, sizeof(err)), 0);
	assert_false(uplink_vxlan_spec_same(&a, &b));
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.1,dstport=8472", &b, err,
						 sizeof(err)),
			 0);
	assert_false(uplink_vxlan_spec_same(&a, &b));
	assert_int_equal(
	    uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.1,netns=x", &b, err, sizeof(err)), 0);
	assert_false(uplink_vxlan_spec_same(&a, &b));
	/* one remote in common is one tunnel twice */
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.9,remote=10.0.0.1", &b,
						 err, sizeof(err)),
			 0);
	assert_true(uplink_vxlan_spec_same(&a, &b));
	assert_true(uplink_vxlan_spec_same(&b, &a));
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=5,remote=10.0.0.9,remote=10.0.0.8", &b,
						 err, sizeof(err)),
			 0);
	assert_false(uplink_vxlan_spec_same(&a, &b));
}

/* ---- the header ---- */

static void test_hdr(void **state)
{
	uint8_t h[UPLINK_VXLAN_HLEN];

	(void)state;
	uplink_vxlan_hdr(h, 0x123456);
	assert_memory_equal(h, "\x08\x00\x00\x00\x12\x34\x56\x00", 8);
	uplink_vxlan_hdr(h, 0);
	assert_memory_equal(h, "\x08\x00\x00\x00\x00\x00\x00\x00", 8);
}

/* A datagram on the heap, exactly @len bytes (ASan catches a read past it): header + @frame. */
static uint8_t *dgram(uint32_t vni, const uint8_t *frame, uint32_t flen)
{
	uint8_t *d = malloc(UPLINK_VXLAN_HLEN + flen);

	assert_non_null(d);
	uplink_vxlan_hdr(d, vni);
	memcpy(d + UPLINK_VXLAN_HLEN, frame, flen);
	return d;
}

static void test_check(void **state)
{
	static struct fb f;
	uint8_t *d;

	(void)state;
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 1);
	d = dgram(7, f.b, f.len);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7, 1500), (int)f.len);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 8, 1500), -(UPLINK_VXLAN_DROP_VNI + 1));
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7 | 1 << 16, 1500),
			 -(UPLINK_VXLAN_DROP_VNI + 1));
	/* every bit of the header but the I flag and the VNI must be clear */
	for (unsigned int byte = 0; byte < 8; byte++) {
		if (byte >= 4 && byte <= 6)
			continue;
		for (unsigned int bit = 0; bit < 8; bit++) {
			uint8_t *e = dgram(7, f.b, f.len);

			e[byte] ^= (uint8_t)(1u << bit);
			assert_int_equal(uplink_vxlan_check(e, 8 + f.len, 7, 1500),
					 -(UPLINK_VXLAN_DROP_HEADER + 1));
			free(e);
		}
	}
	free(d);
	/* the shortest: a bare Ethernet header */
	d = dgram(7, f.b, 14);
	assert_int_equal(uplink_vxlan_check(d, 22, 7, 1500), 14);
	free(d);
	d = dgram(7, f.b, 13);
	assert_int_equal(uplink_vxlan_check(d, 21, 7, 1500), -(UPLINK_VXLAN_DROP_RUNT + 1));
	free(d);
	d = dgram(7, f.b, 0);
	assert_int_equal(uplink_vxlan_check(d, 8, 7, 1500), -(UPLINK_VXLAN_DROP_RUNT + 1));
	free(d);
	/* the MTU counts from the network header: 14 + 1500 passes, one more does not */
	fb_build(&f, 4, IPPROTO_UDP, false, 1500 - 28, 2);
	assert_int_equal(f.len, 1514);
	d = dgram(7, f.b, f.len);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7, 1500), 1514);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7, 1499),
			 -(UPLINK_VXLAN_DROP_OVERSIZE + 1));
	free(d);
	/* ... after an 802.1Q tag, 4 more */
	fb_build(&f, 4, IPPROTO_UDP, true, 1500 - 28, 3);
	assert_int_equal(f.len, 1518);
	d = dgram(7, f.b, f.len);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7, 1500), 1518);
	assert_int_equal(uplink_vxlan_check(d, 8 + f.len, 7, 1499),
			 -(UPLINK_VXLAN_DROP_OVERSIZE + 1));
	free(d);
	assert_string_equal(uplink_vxlan_drop_name(UPLINK_VXLAN_DROP_VNI), "rx_bad_vni");
	assert_string_equal(uplink_vxlan_drop_name(UPLINK_VXLAN_DROP_NR), "?");
}

/* uplink_vxlan_flow_hash() on @len bytes copied to an exact-size heap buffer. */
static uint32_t flow_hash(const uint8_t *frame, uint32_t len)
{
	uint8_t *c = malloc(len ? len : 1);
	uint32_t h;

	assert_non_null(c);
	memcpy(c, frame, len);
	h = uplink_vxlan_flow_hash(c, len);
	free(c);
	return h;
}

/*
 * A flow hashes alike whatever its frames carry (payload, length, a VLAN
 * tag); flows that differ in a port or an address spread over the source
 * ports; a frame that is not TCP/UDP hashes by its Ethernet header; a runt
 * is read only within its bytes.
 */
static void test_flow_hash(void **state)
{
	static struct fb a, b;
	unsigned int seen[UPLINK_VXLAN_SRCPORTS_MAX] = {0}, used = 0;

	(void)state;
	for (int l3 = 4; l3 <= 6; l3 += 2) {
		fb_build(&a, l3, IPPROTO_TCP, false, 100, 1);
		fb_build(&b, l3, IPPROTO_TCP, false, 9000, 2);
		assert_int_equal(flow_hash(a.b, 128), flow_hash(b.b, 128));
		assert_int_equal(flow_hash(a.b, a.len), flow_hash(b.b, 128));
		fb_build(&b, l3, IPPROTO_TCP, true, 100, 1);
		assert_int_equal(flow_hash(a.b, 128), flow_hash(b.b, 128));
		b.b[b.l4 + 1] ^= 1; /* another source port */
		assert_int_not_equal(flow_hash(a.b, 128), flow_hash(b.b, 128));
		fb_build(&b, l3, IPPROTO_UDP, false, 100, 1);
		assert_int_not_equal(flow_hash(a.b, 128), flow_hash(b.b, 128));
	}
	/* 64 UDP flows (source ports 1000..1063) over 8 source ports: all of them used. */
	fb_build(&a, 4, IPPROTO_UDP, false, 100, 3);
	for (uint16_t sp = 1000; sp < 1064; sp++) {
		fb_put16(a.b + a.l4, sp);
		seen[flow_hash(a.b, a.len) % UPLINK_VXLAN_SRCPORTS_MAX]++;
	}
	for (unsigned int i = 0; i < UPLINK_VXLAN_SRCPORTS_MAX; i++)
		used += seen[i] > 0;
	assert_int_equal(used, UPLINK_VXLAN_SRCPORTS_MAX);
	/* ARP: the Ethernet header only. */
	fb_build(&a, 4, IPPROTO_UDP, false, 100, 4);
	fb_put16(a.b + 12, 0x0806);
	memcpy(&b, &a, sizeof(a));
	b.b[20] ^= 0xff; /* not hashed */
	assert_int_equal(flow_hash(a.b, 60), flow_hash(b.b, 60));
	b.b[11] ^= 1; /* another source MAC */
	assert_int_not_equal(flow_hash(a.b, 60), flow_hash(b.b, 60));
	for (uint32_t len = 0; len < 40; len++)
		(void)flow_hash(a.b, len);
}

/* ---- the port, on loopback: 127.0.0.1 is the port, 127.0.0.2 its remote ---- */

struct world {
	struct sw *sw;
	struct capture cap;
	struct uplink_vxlan_port *vx;
	int remote;   /* the remote endpoint: 127.0.0.2, the port's port */
	int remote2;  /* a second one, 127.0.0.4, with setup_two() only, else -1 */
	int stranger; /* 127.0.0.3 */
	uint16_t port;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int udp_bound(const char *addr, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	inet_pton(AF_INET, addr, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* How the port under test picks its source ports. */
enum srcmode {
	SRC_DEFAULT, /* ports the kernel picks */
	SRC_DSTPORT, /* srcport=P-P, P its dstport: the receiving socket sends too */
	SRC_RANGE,   /* srcport= a 64-port range beside its dstport */
	SRC_BIG_MTU, /* ports the kernel picks, mtu=65501: frames IPv4 cannot carry */
};

static int setup_n(void **state, unsigned int nremotes, enum srcmode mode)
{
	struct world *w = calloc(1, sizeof(*w));
	struct sw_config cfg;
	struct uplink_vxlan_spec spec;
	char text[192], err[128], src[48] = "";

	assert_non_null(w);
	sw_config_init(&cfg);
	assert_int_equal(sw_create(&cfg, &w->sw), 0);
	pthread_mutex_init(&w->cap.lock, NULL);
	assert_int_equal(sw_port_add(w->sw, "cap", &cap_ops, &w->cap, &w->cap.port), 0);
	/* A free port on both addresses (tried a few times: another test may take one). */
	for (int tries = 0; tries < 20 && !w->vx; tries++) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int probe = udp_bound("127.0.0.2", 0);

		assert_true(probe >= 0);
		assert_int_equal(getsockname(probe, (struct sockaddr *)&a, &len), 0);
		w->port = ntohs(a.sin_port);
		close(probe);
		w->remote = udp_bound("127.0.0.2", w->port);
		if (w->remote < 0)
			continue;
		w->remote2 = nremotes > 1 ? udp_bound("127.0.0.4", w->port) : -1;
		if (nremotes > 1 && w->remote2 < 0) {
			close(w->remote);
			continue;
		}
		if (mode == SRC_DSTPORT)
			snprintf(src, sizeof(src), ",srcport=%u-%u", w->port, w->port);
		else if (mode == SRC_RANGE)
			snprintf(src, sizeof(src), ",srcport=%u-%u",
				 w->port < 65535 - 64 ? w->port + 1 : w->port - 64,
				 w->port < 65535 - 64 ? w->port + 64 : w->port - 1);
		else if (mode == SRC_BIG_MTU)
			snprintf(src, sizeof(src), ",mtu=65501");
		snprintf(text, sizeof(text),
			 "vxlan:id=4242,remote=127.0.0.2,local=127.0.0.1,dstport=%u%s%s", w->port,
			 nremotes > 1 ? ",remote=127.0.0.4" : "", src);
		assert_int_equal(uplink_vxlan_spec_parse(text, &spec, err, sizeof(err)), 0);
		if (uplink_vxlan_port_create(w->sw, &spec, &w->vx) < 0) {
			close(w->remote);
			if (w->remote2 >= 0)
				close(w->remote2);
			w->vx = NULL;
		}
	}
	assert_non_null(w->vx);
	w->stranger = udp_bound("127.0.0.3", 0);
	assert_true(w->stranger >= 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	uplink_vxlan_port_destroy(w->vx);
	sw_port_del(w->sw, w->cap.port);
	sw_destroy(w->sw);
	close(w->remote);
	if (w->remote2 >= 0)
		close(w->remote2);
	close(w->stranger);
	free(w);
	return 0;
}

static int setup(void **state)
{
	return setup_n(state, 1, SRC_DEFAULT);
}

static int setup_two(void **state)
{
	return setup_n(state, 2, SRC_DEFAULT);
}

static int setup_src_dstport(void **state)
{
	return setup_n(state, 1, SRC_DSTPORT);
}

static int setup_src_range(void **state)
{
	return setup_n(state, 1, SRC_RANGE);
}

/*
 * A remote that is this host's address (127.0.0.2: loopback's /8), to a
 * port taken on every address (no local=): what the port sends would come
 * back to it.  Refused at creation, naming the remote; with local= an
 * address of its own, the same remote is another VTEP on this host.
 */
static void test_port_remote_is_ours(void **state)
{
	struct uplink_vxlan_spec spec;
	struct uplink_vxlan_port *vx = NULL;
	struct log_capture lc;
	struct sw_config cfg;
	struct sw *sw;
	char err[128], *log;

	(void)state;
	sw_config_init(&cfg);
	assert_int_equal(sw_create(&cfg, &sw), 0);
	assert_int_equal(uplink_vxlan_spec_parse("vxlan:id=7,remote=127.0.0.2,dstport=1", &spec,
						 err, sizeof(err)),
			 0);
	log_capture_start(&lc);
	assert_int_equal(uplink_vxlan_port_create(sw, &spec, &vx), -ELOOP);
	log = log_capture_end(&lc);
	assert_null(vx);
	if (!strstr(log, "remote 127.0.0.2 is an address of this host"))
		fail_msg("the loop is not named: \"%s\"", log);
	free(log);
	sw_destroy(sw);
}

static int setup_big_mtu(void **state)
{
	return setup_n(state, 1, SRC_BIG_MTU);
}

static void send_to_port(struct world *w, int fd, const uint8_t *d, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(w->port)};

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	assert_int_equal(sendto(fd, d, len, 0, (struct sockaddr *)&a, sizeof(a)), (ssize_t)len);
}

static unsigned int captured(struct world *w)
{
	return cap_count(&w->cap);
}

/* Wait (2 s at most) until @cond holds; its last value. */
#define WAIT_FOR(w, cond)                                                                          \
	({                                                                                         \
		uint64_t t_end_ = now_ms() + 2000;                                                 \
		while (!(cond) && now_ms() < t_end_)                                               \
			usleep(1000);                                                              \
		(cond);                                                                            \
	})

/*
 * From the remote: a good datagram's frame reaches the switch bit-exact;
 * each bad one is dropped and counted under its reason, and nothing of it
 * reaches the switch; a stranger's datagram too.
 */
static void test_port_rx(void **state)
{
	struct world *w = *state;
	static struct fb f;
	uint8_t *d;

	fb_build(&f, 4, IPPROTO_UDP, false, 200, 9);
	d = dgram(4242, f.b, f.len);
	send_to_port(w, w->remote, d, 8 + f.len);
	assert_true(WAIT_FOR(w, captured(w) == 1));
	assert_int_equal(w->cap.len[0], f.len);
	assert_memory_equal(w->cap.frame[0], f.b, f.len);

	/* Each of these is dropped; then a good one shows that all of them were read. */
	d[0] = 0x0c; /* an unknown flag */
	send_to_port(w, w->remote, d, 8 + f.len);
	d[0] = 0x08;
	d[6] ^= 1; /* VNI 4243 */
	send_to_port(w, w->remote, d, 8 + f.len);
	d[6] ^= 1;
	send_to_port(w, w->remote, d, 8 + 13); /* a runt */
	send_to_port(w, w->stranger, d, 8 + f.len);
	free(d);
	fb_build(&f, 4, IPPROTO_UDP, false, 1500 - 28 + 1, 10); /* one over the MTU */
	d = dgram(4242, f.b, f.len);
	send_to_port(w, w->remote, d, 8 + f.len);
	free(d);
	fb_build(&f, 6, IPPROTO_TCP, true, 1500 - 60, 11); /* the MTU, after a tag */
	d = dgram(4242, f.b, f.len);
	send_to_port(w, w->remote, d, 8 + f.len);
	assert_true(WAIT_FOR(w, captured(w) == 2));
	assert_int_equal(w->cap.len[1], f.len);
	assert_memory_equal(w->cap.frame[1], f.b, f.len);
	free(d);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_bad_header"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_bad_vni"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_runt"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_bad_source"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_oversize"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_truncated"), 0);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "no such counter"), UINT64_MAX);
	usleep(20000);
	assert_int_equal(captured(w), 2);
}

/* Receive one datagram on @fd (@ms at most): its length, or -1. */
static int fd_recv(int fd, uint8_t *buf, size_t cap, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	return (int)recv(fd, buf, cap, 0);
}

/* Receive one datagram at the remote (1 s at most): its length, or -1. */
static int remote_recv(struct world *w, uint8_t *buf, size_t cap)
{
	return fd_recv(w->remote, buf, cap, 1000);
}

/* The pseudo-header sum of @frame's TCP or UDP segment (IPv4 or IPv6, no tag). */
static uint32_t pseudo_sum(const uint8_t *frame, uint32_t len, struct sw_l4 *l4)
{
	uint32_t sum = 0;

	assert_int_equal(sw_frame_parse(frame, len, l4), 0);
	if (l4->l3 == 4) {
		for (int i = 0; i < 8; i += 2)
			sum +=
			    (uint32_t)frame[l4->l3_off + 12 + i] << 8 | frame[l4->l3_off + 13 + i];
	} else {
		for (int i = 0; i < 32; i += 2)
			sum += (uint32_t)frame[l4->l3_off + 8 + i] << 8 | frame[l4->l3_off + 9 + i];
	}
	return sum + l4->proto + (len - l4->l4_off);
}

/* Is the TCP or UDP checksum of @frame right? */
static bool l4_csum_ok(const uint8_t *frame, uint32_t len)
{
	struct sw_l4 l4;
	uint32_t sum = pseudo_sum(frame, len, &l4);

	return sw_csum_fold(frame + l4.l4_off, len - l4.l4_off, sum) == 0xffff;
}

/* Make @frame's TCP checksum blank as netif means it: the field holds the pseudo-header sum. */
static void csum_blank(uint8_t *frame, uint32_t len)
{
	struct sw_l4 l4;
	uint16_t v = sw_csum_fold(NULL, 0, pseudo_sum(frame, len, &l4));

	fb_put16(frame + l4.l4_off + SW_FRAME_TCP_CSUM_OFF, v);
}

/*
 * To the remote: a plain frame (header copy and a fragment) goes as one
 * datagram, the header and the frame's bytes; a blank checksum is filled
 * in; a GSO frame goes as one datagram per segment, each with a right
 * checksum and its own sequence number; a frame over the MTU is dropped
 * and counted.  Every frame's done() runs exactly once.
 */
static void test_port_tx(void **state)
{
	struct world *w = *state;
	static struct fb f;
	static uint8_t buf[70000];
	struct tpkt t[4];
	struct sw_pkt *pp;
	uint32_t seq0;
	int n;

	/* Plain: the first 40 bytes as the header copy, the rest as a fragment. */
	fb_build(&f, 4, IPPROTO_UDP, false, 300, 21);
	pp = tpkt_init(&t[0], f.b, f.len, 40, true, 0);
	sw_forward(w->sw, w->cap.port, &pp, 1); /* unknown unicast: flooded to the tunnel */
	n = remote_recv(w, buf, sizeof(buf));
	assert_int_equal(n, 8 + (int)f.len);
	assert_memory_equal(buf, "\x08\x00\x00\x00\x00\x10\x92\x00", 8); /* VNI 4242 */
	assert_memory_equal(buf + 8, f.b, f.len);
	assert_int_equal(t[0].done, 1);

	/* A blank TCP checksum (the pseudo-header sum in the field): filled in. */
	fb_build(&f, 6, IPPROTO_TCP, false, 500, 22);
	pp = tpkt_init(&t[1], f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	csum_blank(f.b, f.len);
	assert_false(l4_csum_ok(f.b, f.len));
	sw_forward(w->sw, w->cap.port, &pp, 1);
	n = remote_recv(w, buf, sizeof(buf));
	assert_int_equal(n, 8 + (int)f.len);
	assert_true(l4_csum_ok(buf + 8, f.len));
	assert_memory_equal(buf + 8 + f.l4 + 20, f.b + f.l4 + 20, 500); /* payload untouched */
	assert_int_equal(t[1].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_sw_csum"), 1);

	/* A blank UDP checksum, the field the frame's last two bytes (no payload): filled in. */
	{
		struct tpkt u;
		struct sw_l4 l4;

		fb_build(&f, 4, IPPROTO_UDP, false, 0, 25);
		assert_int_equal(f.len, f.l4 + 8);
		fb_put16(f.b + f.l4 + SW_FRAME_UDP_CSUM_OFF,
			 sw_csum_fold(NULL, 0, pseudo_sum(f.b, f.len, &l4)));
		assert_false(l4_csum_ok(f.b, f.len));
		pp = tpkt_init(&u, f.b, f.len, (uint16_t)f.len, false, SW_PKT_CSUM_BLANK);
		sw_forward(w->sw, w->cap.port, &pp, 1);
		n = remote_recv(w, buf, sizeof(buf));
		assert_int_equal(n, 8 + (int)f.len);
		assert_true(l4_csum_ok(buf + 8, f.len));
		assert_int_equal(u.done, 1);
		assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_sw_csum"), 2);
	}

	/* GSO: 10000 payload bytes in segments of 1448: 7 datagrams. */
	fb_build(&f, 4, IPPROTO_TCP, false, 10000, 23);
	seq0 = 1000;
	f.b[f.l4 + 4] = 0, f.b[f.l4 + 5] = 0, f.b[f.l4 + 6] = 0x03, f.b[f.l4 + 7] = 0xe8;
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t[2], f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	pp->gso_type = SW_GSO_TCPV4;
	pp->gso_size = 1448;
	sw_forward(w->sw, w->cap.port, &pp, 1);
	for (uint32_t k = 0, off = 0; k < 7; k++) {
		uint32_t want = k < 6 ? 1448 : 10000 - 6 * 1448, seq;
		const uint8_t *seg = buf + 8;

		n = remote_recv(w, buf, sizeof(buf));
		assert_int_equal(n, 8 + 14 + 20 + 20 + (int)want);
		assert_true(l4_csum_ok(seg, (uint32_t)n - 8));
		seq = (uint32_t)seg[f.l4 + 4] << 24 | (uint32_t)seg[f.l4 + 5] << 16 |
		      (uint32_t)seg[f.l4 + 6] << 8 | seg[f.l4 + 7];
		assert_int_equal(seq, seq0 + off);
		assert_memory_equal(seg + f.l4 + 20, f.b + f.l4 + 20 + off, want);
		off += want;
	}
	assert_int_equal(t[2].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_segmented"), 1);

	/* Over the MTU, no GSO: dropped, counted, done. */
	fb_build(&f, 4, IPPROTO_UDP, false, 1500 - 28 + 1, 24);
	pp = tpkt_init(&t[3], f.b, f.len, 128, false, 0);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);
	assert_int_equal(t[3].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_oversize"), 1);

	/* Over the MTU with a blank checksum, and GSO segments over it: dropped, counted. */
	fb_build(&f, 4, IPPROTO_TCP, false, 1500 - 40 + 1, 26);
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t[3], f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);
	assert_int_equal(t[3].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_oversize"), 2);
	fb_build(&f, 4, IPPROTO_TCP, false, 3000, 27);
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t[3], f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	pp->gso_type = SW_GSO_TCPV4;
	pp->gso_size = 1500 - 40 + 1;
	sw_forward(w->sw, w->cap.port, &pp, 1);
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);
	assert_int_equal(t[3].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_oversize"), 3);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_bad_offload"), 0);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_errors"), 0);
}

/*
 * A datagram the socket refuses (here one over IPv4's 65507 bytes, which
 * an MTU of 65501 lets through) is counted under tx_errors and its reason
 * logged, naming the remote; the frame is done once, the next one sent.
 */
static void test_port_tx_refused_logged(void **state)
{
	struct world *w = *state;
	static struct fb f;
	static uint8_t buf[70000];
	struct tpkt t[2];
	struct log_capture lc;
	struct sw_pkt *pp;
	char *log;
	int n;

	/* 65507 bytes, within the MTU; with the VXLAN header a UDP payload of 65515. */
	fb_build(&f, 4, IPPROTO_UDP, false, 65465, 5);
	assert_int_equal(f.len, 65507);
	pp = tpkt_init(&t[0], f.b, f.len, 128, true, 0);
	log_capture_start(&lc);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	log = log_capture_end(&lc);
	assert_int_equal(t[0].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_errors"), 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_oversize"), 0);
	if (!strstr(log, "a datagram to 127.0.0.2 refused: Message too long"))
		fail_msg("the refusal's reason is not logged: \"%s\"", log);
	free(log);
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);

	/* One that fits goes out as before. */
	fb_build(&f, 4, IPPROTO_UDP, false, 60000, 6);
	pp = tpkt_init(&t[1], f.b, f.len, 128, true, 0);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	n = remote_recv(w, buf, sizeof(buf));
	assert_int_equal(n, 8 + (int)f.len);
	assert_memory_equal(buf + 8, f.b, f.len);
	assert_int_equal(t[1].done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_errors"), 1);
}

/*
 * Two frames with blank checksums in one batch: each is made whole in the
 * same scratch area, so the first must be sent before the second is
 * copied there; each datagram carries its own frame.
 */
static void test_port_tx_batch(void **state)
{
	struct world *w = *state;
	static struct fb f[2];
	static uint8_t buf[2048];
	struct tpkt t[2];
	struct sw_pkt *pp[2];

	for (int i = 0; i < 2; i++) {
		fb_build(&f[i], 4, IPPROTO_TCP, false, 400 + 100 * (uint32_t)i, (uint8_t)(40 + i));
		csum_blank(f[i].b, f[i].len);
		pp[i] = tpkt_init(&t[i], f[i].b, f[i].len, 128, false, SW_PKT_CSUM_BLANK);
	}
	sw_forward(w->sw, w->cap.port, pp, 2);
	for (int i = 0; i < 2; i++) {
		int n = remote_recv(w, buf, sizeof(buf));

		assert_int_equal(n, 8 + (int)f[i].len);
		assert_true(l4_csum_ok(buf + 8, f[i].len));
		assert_memory_equal(buf + 8 + f[i].l4 + 20, f[i].b + f[i].l4 + 20,
				    f[i].len - f[i].l4 - 20);
		assert_int_equal(t[i].done, 1);
	}
}

/* A blank checksum on a frame that is not TCP or UDP cannot be filled in: dropped, counted. */
static void test_port_tx_bad_offload(void **state)
{
	struct world *w = *state;
	static struct fb f;
	static uint8_t buf[2048];
	struct tpkt t;
	struct sw_pkt *pp = &t.pkt;

	fb_build(&f, 4, IPPROTO_UDP, false, 100, 31);
	f.b[f.l4 - 20 + 9] = 47; /* GRE */
	tpkt_init(&t, f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);
	assert_int_equal(t.done, 1);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_bad_offload"), 1);
}

/* Frame @f (built by fb_build()) with destination @dst and source @src. */
static void set_macs(struct fb *f, const uint8_t dst[6], const uint8_t src[6])
{
	memcpy(f->b, dst, 6);
	memcpy(f->b + 6, src, 6);
}

/* Both remotes get @f's datagram (and nothing more); the frame's done() ran. */
static void expect_at(struct world *w, const struct fb *f, bool one, bool two)
{
	static uint8_t buf[2048];
	int fds[2] = {w->remote, w->remote2};
	bool want[2] = {one, two};

	for (int i = 0; i < 2; i++) {
		if (!want[i])
			continue;
		assert_int_equal(fd_recv(fds[i], buf, sizeof(buf), 1000), 8 + (int)f->len);
		assert_memory_equal(buf + 8, f->b, f->len);
	}
	/* Nothing at a remote that should not have it (nor a second copy at one that should). */
	for (int i = 0; i < 2; i++)
		assert_int_equal(fd_recv(fds[i], buf, sizeof(buf), 100), -1);
}

/* Remote @fd sends a frame from @src to @dst; the switch has it (the @nth captured). */
static void heard_from(struct world *w, int fd, const uint8_t dst[6], const uint8_t src[6],
		       uint8_t seed, unsigned int nth)
{
	static struct fb f;
	uint8_t *d;

	fb_build(&f, 4, IPPROTO_UDP, false, 100, seed);
	set_macs(&f, dst, src);
	d = dgram(4242, f.b, f.len);
	send_to_port(w, fd, d, 8 + f.len);
	free(d);
	assert_true(WAIT_FOR(w, captured(w) == nth));
}

/* The switch's other port sends a frame from @src to @dst: it reaches remote 1 and/or 2 only. */
static void sent_to(struct world *w, const uint8_t dst[6], const uint8_t src[6], uint8_t seed,
		    bool one, bool two)
{
	static struct fb f;
	struct tpkt t;
	struct sw_pkt *pp;

	fb_build(&f, 4, IPPROTO_UDP, false, 100, seed);
	set_macs(&f, dst, src);
	pp = tpkt_init(&t, f.b, f.len, 128, false, 0);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	expect_at(w, &f, one, two);
	assert_int_equal(t.done, 1);
}

/*
 * Two remotes: broadcast and unknown unicast go to both; once a MAC has
 * been heard behind one remote, frames to it go to that remote alone, and
 * follow it when it is heard behind the other.
 */
static void test_port_remotes(void **state)
{
	struct world *w = *state;
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			     guest[6] = {0x02, 0, 0, 0, 0, 0x01}, far[6] = {0x02, 0, 0, 0, 0, 0x99},
			     nobody[6] = {0x02, 0, 0, 0, 0, 0x77};

	sent_to(w, bcast, guest, 51, true, true);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_flooded"), 1);
	/* "far" speaks from behind the second remote, then moves behind the first. */
	heard_from(w, w->remote2, guest, far, 52, 1);
	sent_to(w, far, guest, 53, false, true);
	heard_from(w, w->remote, guest, far, 54, 2);
	sent_to(w, far, guest, 55, true, false);
	/* A MAC nobody has heard: both. */
	sent_to(w, nobody, guest, 56, true, true);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "tx_flooded"), 2);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_bad_source"), 0);
}

/* A GSO frame to every remote: each gets every segment. */
static void test_port_remotes_gso(void **state)
{
	struct world *w = *state;
	static struct fb f;
	static uint8_t buf[2048];
	struct tpkt t;
	struct sw_pkt *pp;
	int fds[2] = {w->remote, w->remote2};

	fb_build(&f, 4, IPPROTO_TCP, false, 10000, 57);
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t, f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	pp->gso_type = SW_GSO_TCPV4;
	pp->gso_size = 1448;
	sw_forward(w->sw, w->cap.port, &pp, 1);
	for (int r = 0; r < 2; r++) {
		for (uint32_t k = 0, off = 0; k < 7; k++) {
			uint32_t want = k < 6 ? 1448 : 10000 - 6 * 1448;
			int n = fd_recv(fds[r], buf, sizeof(buf), 1000);

			assert_int_equal(n, 8 + 14 + 20 + 20 + (int)want);
			assert_true(l4_csum_ok(buf + 8, (uint32_t)n - 8));
			assert_memory_equal(buf + 8 + f.l4 + 20, f.b + f.l4 + 20 + off, want);
			off += want;
		}
		assert_int_equal(fd_recv(fds[r], buf, sizeof(buf), 100), -1);
	}
	assert_int_equal(t.done, 1);
}

/*
 * Send @n UDP flows (inner source ports 2000..) through the port, twice:
 * the UDP source port each flow's datagrams left from, the same both times.
 */
static void flows_sent(struct world *w, unsigned int n, uint16_t *src_of)
{
	static struct fb f;
	static uint8_t buf[2048];

	for (unsigned int i = 0; i < n; i++)
		src_of[i] = 0;
	for (int round = 0; round < 2; round++) {
		static struct tpkt t[32];
		static uint8_t frames[32][256];
		struct sw_pkt *pp[32];

		assert_true(n <= 32);
		for (unsigned int i = 0; i < n; i++) {
			fb_build(&f, 4, IPPROTO_UDP, false, 100, (uint8_t)i);
			fb_put16(f.b + f.l4, (uint16_t)(2000 + i));
			assert_true(f.len <= sizeof(frames[i]));
			memcpy(frames[i], f.b, f.len);
			pp[i] = tpkt_init(&t[i], frames[i], f.len, 128, false, 0);
		}
		sw_forward(w->sw, w->cap.port, pp, n);
		for (unsigned int k = 0; k < n; k++) {
			struct sockaddr_in from;
			socklen_t flen = sizeof(from);
			struct pollfd pfd = {.fd = w->remote, .events = POLLIN};
			unsigned int flow;
			int len;

			assert_int_equal(poll(&pfd, 1, 1000), 1);
			len = (int)recvfrom(w->remote, buf, sizeof(buf), 0,
					    (struct sockaddr *)&from, &flen);
			assert_true(len >= 8 + (int)f.l4 + 2);
			flow = ((unsigned int)buf[8 + f.l4] << 8 | buf[8 + f.l4 + 1]) - 2000;
			assert_true(flow < n);
			if (round == 0 && !src_of[flow])
				src_of[flow] = ntohs(from.sin_port);
			else
				assert_int_equal(ntohs(from.sin_port), src_of[flow]);
		}
		for (unsigned int i = 0; i < n; i++)
			assert_int_equal(t[i].done, 1);
	}
	assert_int_equal(remote_recv(w, buf, sizeof(buf)), -1);
}

static unsigned int distinct(const uint16_t *v, unsigned int n)
{
	unsigned int d = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int j = 0;

		while (j < i && v[j] != v[i])
			j++;
		d += j == i;
	}
	return d;
}

/* By default each flow leaves from one source port the kernel picked, the flows from several. */
static void test_port_srcports(void **state)
{
	struct world *w = *state;
	uint16_t src[32];

	flows_sent(w, 32, src);
	assert_true(distinct(src, 32) >= 4);
	for (unsigned int i = 0; i < 32; i++)
		assert_int_not_equal(src[i], w->port);
}

/* srcport=P-P with P the tunnel's port: every datagram from P, as before flows had ports. */
static void test_port_srcport_dstport(void **state)
{
	struct world *w = *state;
	uint16_t src[32];

	flows_sent(w, 32, src);
	for (unsigned int i = 0; i < 32; i++)
		assert_int_equal(src[i], w->port);
}

/* srcport=MIN-MAX: every datagram from within the range, the flows spread over it. */
static void test_port_srcport_range(void **state)
{
	struct world *w = *state;
	unsigned int lo = w->port < 65535 - 64 ? w->port + 1u : w->port - 64u;
	uint16_t src[32];

	flows_sent(w, 32, src);
	assert_true(distinct(src, 32) >= 4);
	for (unsigned int i = 0; i < 32; i++)
		assert_true(src[i] >= lo && src[i] < lo + 64);
}

/*
 * srcport=L-(L+7): eight sockets, one port each.  With the last port
 * taken, its share has no free port: the port is refused (not bound past
 * the range's end), and the taken port is named in the reason.
 */
static void test_port_srcport_busy(void **state)
{
	struct sw *sw;
	struct sw_config cfg;
	struct uplink_vxlan_spec spec;
	struct uplink_vxlan_port *vx = NULL;
	char text[192], err[128];
	struct log_capture lc;
	char *log;
	uint16_t lo = 0, dst = 0;
	int blocker = -1, rc;

	(void)state;
	sw_config_init(&cfg);
	assert_int_equal(sw_create(&cfg, &sw), 0);
	/* Nine free ports in a row on 127.0.0.1 (tried a few times), and a dstport apart. */
	for (int tries = 0; tries < 50 && blocker < 0; tries++) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int probe = udp_bound("127.0.0.1", 0), fds[9];
		unsigned int n = 0;
		bool all;

		assert_true(probe >= 0);
		assert_int_equal(getsockname(probe, (struct sockaddr *)&a, &len), 0);
		close(probe);
		lo = ntohs(a.sin_port);
		if (lo > 65535 - 9)
			continue;
		while (n < 9 && (fds[n] = udp_bound("127.0.0.1", (uint16_t)(lo + n))) >= 0)
			n++;
		all = n == 9;
		while (n > 0)
			close(fds[--n]);
		if (!all)
			continue;
		probe = udp_bound("127.0.0.1", 0);
		assert_true(probe >= 0);
		len = sizeof(a);
		assert_int_equal(getsockname(probe, (struct sockaddr *)&a, &len), 0);
		close(probe);
		dst = ntohs(a.sin_port);
		if (dst >= lo && dst <= lo + 8)
			continue;
		blocker = udp_bound("127.0.0.1", (uint16_t)(lo + 7));
	}
	assert_true(blocker >= 0);
	snprintf(text, sizeof(text),
		 "vxlan:id=1,remote=127.0.0.2,local=127.0.0.1,dstport=%u,srcport=%u-%u", dst, lo,
		 lo + 7);
	assert_int_equal(uplink_vxlan_spec_parse(text, &spec, err, sizeof(err)), 0);
	log_capture_start(&lc);
	rc = uplink_vxlan_port_create(sw, &spec, &vx);
	log = log_capture_end(&lc);
	assert_int_equal(rc, -EADDRINUSE);
	snprintf(text, sizeof(text), "source ports %u-%u: every one is in use", lo + 7, lo + 7);
	assert_int_equal(log_count(log, text), 1);
	free(log);
	assert_null(vx);
	close(blocker);
	sw_destroy(sw);
}

/* Set the ECN field of @f's IP header (no tag), its IPv4 header checksum made right. */
static void set_ecn(struct fb *f, int l3, uint8_t ecn)
{
	if (l3 == 4) {
		f->b[15] = (uint8_t)((f->b[15] & ~3u) | ecn);
		f->b[24] = f->b[25] = 0;
		fb_put16(f->b + 24, (uint16_t)~sw_csum_fold(f->b + 14, 20, 0));
	} else {
		f->b[15] = (uint8_t)((f->b[15] & ~0x30u) | ecn << 4);
	}
}

/* Receive one datagram on @fd (1 s at most) with its IP_TOS: its length, or -1. */
static int recv_tos(int fd, uint8_t *buf, size_t cap, int *tos)
{
	union {
		struct cmsghdr align;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr h = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof(ctl)};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	ssize_t n;

	*tos = -1;
	if (poll(&pfd, 1, 1000) != 1)
		return -1;
	n = recvmsg(fd, &h, 0);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			*tos = *CMSG_DATA(c);
	return (int)n;
}

/*
 * ECN through the tunnel (RFC 6040, as Linux's vxlan).  Out: a datagram's
 * outer ECN field is its frame's (Not-ECT, ECT(0), CE over IPv4, ECT(1)
 * over IPv6), the DSCP 0.  In: the remote's CE marks an ECN-capable IPv4
 * or IPv6 packet CE (the IPv4 checksum right), ECT(1) over ECT(0) makes
 * it ECT(1), nothing else changes a frame; CE over a packet that is not
 * ECN-capable is dropped (rx_ce_not_ect), over a frame that is not IP it
 * passes as it is.
 */
static void test_port_ecn(void **state)
{
	static const struct {
		int l3;
		uint8_t ecn;
	} out[] = {{4, 0}, {4, UPLINK_ECN_ECT0}, {4, UPLINK_ECN_CE}, {6, UPLINK_ECN_ECT1}};
	static const struct {
		int l3;
		uint8_t outer, inner, want;
	} in[] = {
	    {4, UPLINK_ECN_CE, UPLINK_ECN_ECT0, UPLINK_ECN_CE},
	    {4, UPLINK_ECN_CE, UPLINK_ECN_ECT1, UPLINK_ECN_CE},
	    {6, UPLINK_ECN_CE, UPLINK_ECN_ECT0, UPLINK_ECN_CE},
	    {6, UPLINK_ECN_CE, UPLINK_ECN_CE, UPLINK_ECN_CE},
	    {4, UPLINK_ECN_ECT1, UPLINK_ECN_ECT0, UPLINK_ECN_ECT1},
	    {4, UPLINK_ECN_ECT0, UPLINK_ECN_ECT1, UPLINK_ECN_ECT1},
	    {4, 0, UPLINK_ECN_ECT0, UPLINK_ECN_ECT0},
	    {4, UPLINK_ECN_ECT1, 0, 0},
	};
	struct world *w = *state;
	static struct fb f, want;
	static uint8_t buf[4096];
	struct tpkt t;
	struct sw_pkt *pp;
	unsigned int k = 0;
	int one = 1, tos;
	uint8_t *d;

	assert_int_equal(setsockopt(w->remote, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)), 0);
	for (unsigned int i = 0; i < sizeof(out) / sizeof(out[0]); i++) {
		fb_build(&f, out[i].l3, IPPROTO_UDP, false, 100, (uint8_t)(40 + i));
		set_ecn(&f, out[i].l3, out[i].ecn);
		pp = tpkt_init(&t, f.b, f.len, 40, true, 0);
		sw_forward(w->sw, w->cap.port, &pp, 1);
		assert_int_equal(recv_tos(w->remote, buf, sizeof(buf), &tos), 8 + (int)f.len);
		assert_int_equal(tos, out[i].ecn);
		assert_memory_equal(buf + 8, f.b, f.len);
	}
	/* A frame whose blank checksum the port fills in: its field too. */
	fb_build(&f, 4, IPPROTO_TCP, false, 100, 44);
	set_ecn(&f, 4, UPLINK_ECN_ECT0);
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t, f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	sw_forward(w->sw, w->cap.port, &pp, 1);
	assert_int_equal(recv_tos(w->remote, buf, sizeof(buf), &tos), 8 + (int)f.len);
	assert_int_equal(tos, UPLINK_ECN_ECT0);
	/* A GSO frame's segments: each the frame's field (10000 bytes in 7). */
	fb_build(&f, 4, IPPROTO_TCP, false, 10000, 45);
	set_ecn(&f, 4, UPLINK_ECN_ECT0);
	csum_blank(f.b, f.len);
	pp = tpkt_init(&t, f.b, f.len, 128, false, SW_PKT_CSUM_BLANK);
	pp->gso_type = SW_GSO_TCPV4;
	pp->gso_size = 1448;
	sw_forward(w->sw, w->cap.port, &pp, 1);
	for (unsigned int k7 = 0; k7 < 7; k7++) {
		assert_true(recv_tos(w->remote, buf, sizeof(buf), &tos) > 8 + 54);
		assert_int_equal(tos, UPLINK_ECN_ECT0);
		assert_int_equal(buf[8 + 15] & 3, UPLINK_ECN_ECT0);
	}

	for (unsigned int i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		fb_build(&f, in[i].l3, IPPROTO_UDP, false, 100, (uint8_t)(50 + i));
		set_ecn(&f, in[i].l3, in[i].inner);
		want = f;
		set_ecn(&want, in[i].l3, in[i].want);
		tos = in[i].outer;
		assert_int_equal(setsockopt(w->remote, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);
		d = dgram(4242, f.b, f.len);
		send_to_port(w, w->remote, d, 8 + f.len);
		free(d);
		assert_true(WAIT_FOR(w, captured(w) == k + 1));
		assert_int_equal(w->cap.len[k], f.len);
		assert_memory_equal(w->cap.frame[k], want.b, f.len);
		if (in[i].l3 == 4)
			assert_int_equal(sw_csum_fold(w->cap.frame[k] + 14, 20, 0), 0xffff);
		k++;
	}

	/* CE over a packet that is not ECN-capable: dropped; over ARP: as it is. */
	tos = UPLINK_ECN_CE;
	assert_int_equal(setsockopt(w->remote, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 60);
	d = dgram(4242, f.b, f.len);
	send_to_port(w, w->remote, d, 8 + f.len);
	free(d);
	f.b[12] = 0x08, f.b[13] = 0x06; /* an ARP frame's type; the rest does not matter */
	d = dgram(4242, f.b, f.len);
	send_to_port(w, w->remote, d, 8 + f.len);
	free(d);
	assert_true(WAIT_FOR(w, captured(w) == k + 1));
	assert_memory_equal(w->cap.frame[k], f.b, f.len);
	assert_int_equal(uplink_vxlan_port_stat(w->vx, "rx_ce_not_ect"), 1);
}

/* uplink_vxlan_ecn_decap() on an exact-size heap copy of @len bytes of @f; the copy in @out. */
static int decap(const uint8_t *f, uint32_t len, uint8_t outer, uint8_t *out)
{
	uint8_t *c = malloc(len);
	int rc;

	assert_non_null(c);
	memcpy(c, f, len);
	rc = uplink_vxlan_ecn_decap(c, len, outer);
	memcpy(out, c, len);
	free(c);
	return rc;
}

/* @f's IPv4 header (at 14) made to sum to 0xffff without its checksum, which is then @csum. */
static void ipv4_sum_ffff(struct fb *f, uint16_t csum)
{
	f->b[18] = f->b[19] = f->b[24] = f->b[25] = 0; /* the ID and the checksum */
	fb_put16(f->b + 18, (uint16_t)(0xffff - sw_csum_fold(f->b + 14, 20, 0)));
	fb_put16(f->b + 24, csum);
	assert_int_equal(sw_csum_fold(f->b + 14, 20, 0), 0xffff);
}

/*
 * ECN at the edges of what is IP: a frame whose type says IPv4 or IPv6
 * but whose version does not, or whose header is cut short, is not IP (no
 * mark read, none carried, none dropped for), nor are bytes past a frame's
 * end; the IPv4 checksum is right after the carry of the update wraps, and
 * untouched when the field is already the one it should be; an IPv6
 * ECT(0) under ECT(1) becomes ECT(1), its flow label kept.
 */
static void test_ecn_edges(void **state)
{
	static struct fb f, g;
	static uint8_t out[2048];

	(void)state;
	/* One byte of an IP header, the next (past the frame) ECN-marked. */
	memset(&f, 0, sizeof(f));
	f.b[12] = 0x08, f.b[13] = 0x00, f.b[14] = 0x45, f.b[15] = UPLINK_ECN_CE;
	assert_int_equal(uplink_vxlan_ecn_inner(f.b, 15), 0);
	f.b[12] = 0x86, f.b[13] = 0xdd, f.b[14] = 0x60, f.b[15] = UPLINK_ECN_CE << 4;
	assert_int_equal(uplink_vxlan_ecn_inner(f.b, 15), 0);

	/* Type IPv4, version 5: not IP, so CE over its Not-ECT field passes as it is. */
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 70);
	set_ecn(&f, 4, 0);
	f.b[14] = 0x55;
	assert_int_equal(decap(f.b, f.len, UPLINK_ECN_CE, out), 0);
	assert_memory_equal(out, f.b, f.len);
	set_ecn(&f, 4, UPLINK_ECN_ECT0);
	assert_int_equal(uplink_vxlan_ecn_inner(f.b, f.len), 0);
	/* Type IPv6, version 4: likewise. */
	fb_build(&f, 6, IPPROTO_UDP, false, 100, 71);
	set_ecn(&f, 6, 0);
	f.b[14] = (uint8_t)(0x40 | (f.b[14] & 0x0f));
	assert_int_equal(decap(f.b, f.len, UPLINK_ECN_CE, out), 0);
	assert_memory_equal(out, f.b, f.len);
	set_ecn(&f, 6, UPLINK_ECN_ECT0);
	assert_int_equal(uplink_vxlan_ecn_inner(f.b, f.len), 0);

	/* A header one byte short (IPv4 19, IPv6 39): no mark carried. */
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 72);
	set_ecn(&f, 4, UPLINK_ECN_ECT0);
	assert_int_equal(decap(f.b, 14 + 19, UPLINK_ECN_CE, out), 0);
	assert_memory_equal(out, f.b, 14 + 19);
	assert_int_equal(decap(f.b, 14 + 20, UPLINK_ECN_CE, out), 0);
	assert_int_equal(out[15] & 3, UPLINK_ECN_CE);
	fb_build(&f, 6, IPPROTO_UDP, false, 100, 73);
	set_ecn(&f, 6, UPLINK_ECN_ECT0);
	assert_int_equal(decap(f.b, 14 + 39, UPLINK_ECN_CE, out), 0);
	assert_memory_equal(out, f.b, 14 + 39);
	assert_int_equal(decap(f.b, 14 + 40, UPLINK_ECN_CE, out), 0);
	assert_int_equal((out[15] >> 4) & 3, UPLINK_ECN_CE);

	/* IPv4 ECT(0) to CE where the checksum was 0: the update's sum carries twice. */
	fb_build(&f, 4, IPPROTO_UDP, false, 100, 74);
	set_ecn(&f, 4, UPLINK_ECN_ECT0);
	ipv4_sum_ffff(&f, 0x0000);
	assert_int_equal(decap(f.b, f.len, UPLINK_ECN_CE, out), 0);
	assert_int_equal(out[15] & 3, UPLINK_ECN_CE);
	assert_int_equal(sw_csum_fold(out + 14, 20, 0), 0xffff);
	/* CE under CE: nothing to change, not even a checksum written as 0xffff. */
	set_ecn(&f, 4, UPLINK_ECN_CE);
	ipv4_sum_ffff(&f, 0xffff);
	assert_int_equal(decap(f.b, f.len, UPLINK_ECN_CE, out), 0);
	assert_memory_equal(out, f.b, f.len);

	/* IPv6 ECT(0) under ECT(1): ECT(1), the traffic class's other bits and the flow label kept. */
	fb_build(&f, 6, IPPROTO_UDP, false, 100, 75);
	f.b[14] = 0x6a, f.b[15] = 0xaf, f.b[16] = 0x12, f.b[17] = 0x34; /* ECN ECT(0) */
	g = f;
	g.b[15] = 0x9f; /* ECN ECT(1) */
	assert_int_equal(decap(f.b, f.len, UPLINK_ECN_ECT1, out), 0);
	assert_memory_equal(out, g.b, f.len);
}

/* ---- uplinks sharing one port, each its VNI ---- */

/* One uplink of a shared port, on a switch of its own, its frames captured there. */
struct member {
	struct sw *sw;
	struct capture cap;
	struct uplink_vxlan_port *vx;
	uint32_t vni;
};

/* Taking @vni as @text says, its port shared if @share, on a switch of its own. */
static int member_create_spec(struct member *m, uint32_t vni, const char *text, bool share)
{
	struct uplink_vxlan_spec spec;
	struct sw_config cfg;
	char err[128];

	memset(m, 0, sizeof(*m));
	m->vni = vni;
	sw_config_init(&cfg);
	assert_int_equal(sw_create(&cfg, &m->sw), 0);
	pthread_mutex_init(&m->cap.lock, NULL);
	assert_int_equal(sw_port_add(m->sw, "cap", &cap_ops, &m->cap, &m->cap.port), 0);
	assert_int_equal(uplink_vxlan_spec_parse(text, &spec, err, sizeof(err)), 0);
	assert_false(spec.share); /* the parser cannot know the others */
	spec.share = share;
	return uplink_vxlan_port_create(m->sw, &spec, &m->vx);
}

static int member_create_text(struct member *m, uint32_t vni, const char *text)
{
	return member_create_spec(m, vni, text, true);
}

/* Taking @vni on @local, port @port (in namespace @netns, "" for ours), its remote 127.0.0.2. */
static int member_create_at(struct member *m, uint32_t vni, const char *local, uint16_t port,
			    const char *netns)
{
	char text[160];

	snprintf(text, sizeof(text), "vxlan:id=%u,remote=127.0.0.2,local=%s,dstport=%u%s%s", vni,
		 local, port, *netns ? ",netns=" : "", netns);
	return member_create_text(m, vni, text);
}

static int member_create(struct member *m, uint32_t vni, uint16_t port)
{
	return member_create_at(m, vni, "127.0.0.1", port, "");
}

static void member_destroy(struct member *m)
{
	uplink_vxlan_port_destroy(m->vx);
	sw_port_del(m->sw, m->cap.port);
	sw_destroy(m->sw);
	pthread_mutex_destroy(&m->cap.lock);
	m->vx = NULL;
}

/* From the remote to the shared port at @to: a frame of @seed in a datagram of @vni. */
static void send_vni_to(int remote, const char *to, uint16_t port, uint32_t vni, uint8_t seed)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	static struct fb f;
	uint8_t *d;

	fb_build(&f, 4, IPPROTO_UDP, false, 100, seed);
	d = dgram(vni, f.b, f.len);
	inet_pton(AF_INET, to, &a.sin_addr);
	assert_int_equal(sendto(remote, d, 8 + f.len, 0, (struct sockaddr *)&a, sizeof(a)),
			 (ssize_t)(8 + f.len));
	free(d);
}

static void send_vni(int remote, uint16_t port, uint32_t vni, uint8_t seed)
{
	send_vni_to(remote, "127.0.0.1", port, vni, seed);
}

/* @m has captured exactly @n frames, the last of them built from @seed. */
static void member_got(struct member *m, unsigned int n, uint8_t seed)
{
	static struct fb f;

	if (!WAIT_FOR(m, cap_count(&m->cap) == n))
		fail_msg("VNI %u: %u frames, %u expected", m->vni, cap_count(&m->cap), n);
	fb_build(&f, 4, IPPROTO_UDP, false, 100, seed);
	assert_int_equal(m->cap.len[n - 1], f.len);
	assert_memory_equal(m->cap.frame[n - 1], f.b, f.len);
}

/*
 * Three uplinks on one address and port, VNIs 10, 20 and 30, as three
 * vxlan devices on one dstport of a Linux host: each gets the datagrams of
 * its VNI and no other's; another VNI's go to one of them (the first),
 * dropped as rx_bad_vni.  A port another socket holds is refused; another
 * program's socket that joins the group later gets nothing.  When the
 * first uplink leaves, the others go on receiving theirs (had its socket
 * been closed, the kernel would have moved the late socket into its place
 * in the group), another VNI's go to the next; a new uplink joins; the
 * last to leave frees the port.
 */
static void test_port_shared(void **state)
{
	struct member m[4];
	int remote = -1, late, one = 1;
	uint16_t port = 0;
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t alen = sizeof(a);
	uint8_t buf[64];

	(void)state;
	for (int tries = 0; tries < 20 && remote < 0; tries++) {
		int probe = udp_bound("127.0.0.2", 0);

		assert_true(probe >= 0);
		assert_int_equal(getsockname(probe, (struct sockaddr *)&a, &alen), 0);
		port = ntohs(a.sin_port);
		close(probe);
		remote = udp_bound("127.0.0.2", port);
	}
	assert_true(remote >= 0);

	/* Held by another program's socket, even one that would share: refused. */
	a.sin_port = htons(port);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	for (int reuse = 0; reuse < 2; reuse++) {
		late = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		assert_true(late >= 0);
		assert_int_equal(setsockopt(late, SOL_SOCKET, SO_REUSEPORT, &reuse, sizeof(reuse)),
				 0);
		assert_int_equal(bind(late, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(member_create(&m[0], 10, port), -EADDRINUSE);
		member_destroy(&m[0]);
		close(late);
	}

	assert_int_equal(member_create(&m[0], 10, port), 0);
	assert_int_equal(member_create(&m[1], 20, port), 0);
	assert_int_equal(member_create(&m[2], 30, port), 0);
	/* Another program's socket joining the group later is never picked. */
	late = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(late >= 0);
	assert_int_equal(setsockopt(late, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)), 0);
	assert_int_equal(bind(late, (struct sockaddr *)&a, sizeof(a)), 0);

	for (unsigned int round = 0; round < 2; round++) {
		send_vni(remote, port, 30, (uint8_t)(30 + round));
		send_vni(remote, port, 20, (uint8_t)(20 + round));
		send_vni(remote, port, 10, (uint8_t)(10 + round));
		send_vni(remote, port, 99, 99);
		member_got(&m[0], round + 1, (uint8_t)(10 + round));
		member_got(&m[1], round + 1, (uint8_t)(20 + round));
		member_got(&m[2], round + 1, (uint8_t)(30 + round));
	}
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[0].vx, "rx_bad_vni") == 2));
	assert_int_equal(uplink_vxlan_port_stat(m[1].vx, "rx_bad_vni"), 0);
	assert_int_equal(uplink_vxlan_port_stat(m[2].vx, "rx_bad_vni"), 0);

	/* The first leaves (the late socket would take its place if it were closed). */
	member_destroy(&m[0]);
	send_vni(remote, port, 20, 22);
	send_vni(remote, port, 30, 32);
	send_vni(remote, port, 99, 99);
	member_got(&m[1], 3, 22);
	member_got(&m[2], 3, 32);
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[1].vx, "rx_bad_vni") == 1));
	assert_int_equal(uplink_vxlan_port_stat(m[2].vx, "rx_bad_vni"), 0);
	/* A runt too: too short to load a VNI from, it goes to the first running uplink. */
	a.sin_port = htons(port);
	assert_int_equal(sendto(remote, "\x08\0\0", 4, 0, (struct sockaddr *)&a, sizeof(a)), 4);
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[1].vx, "rx_runt") == 1));
	assert_int_equal(uplink_vxlan_port_stat(m[2].vx, "rx_runt"), 0);

	/* The late socket, last in the group, leaves without moving anyone; a new uplink joins. */
	assert_int_equal(recv(late, buf, sizeof(buf), MSG_DONTWAIT), -1);
	close(late);
	assert_int_equal(member_create(&m[3], 40, port), 0);
	send_vni(remote, port, 40, 40);
	send_vni(remote, port, 20, 23);
	send_vni(remote, port, 30, 33);
	member_got(&m[3], 1, 40);
	member_got(&m[1], 4, 23);
	member_got(&m[2], 4, 33);
	usleep(20000);
	assert_int_equal(cap_count(&m[1].cap), 4);
	assert_int_equal(cap_count(&m[2].cap), 4);
	assert_int_equal(cap_count(&m[3].cap), 1);
	assert_int_equal(uplink_vxlan_port_stat(m[1].vx, "rx_bad_vni"), 1);
	assert_int_equal(uplink_vxlan_port_stat(m[2].vx, "rx_bad_vni"), 0);
	assert_int_equal(uplink_vxlan_port_stat(m[3].vx, "rx_bad_vni"), 0);

	/*
	 * The VNI of the uplink that left is another VNI now: to the first
	 * running uplink, not to its parked socket.  So is a runt of 7 bytes
	 * (too short for bytes 4-7); one of 8, a whole header, goes to its VNI's.
	 */
	send_vni(remote, port, 10, 12);
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[1].vx, "rx_bad_vni") == 2));
	assert_int_equal(
	    sendto(remote, "\x08\0\0\0\0\0\x1e", 7, 0, (struct sockaddr *)&a, sizeof(a)), 7);
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[1].vx, "rx_runt") == 2));
	assert_int_equal(
	    sendto(remote, "\x08\0\0\0\0\0\x1e\0", 8, 0, (struct sockaddr *)&a, sizeof(a)), 8);
	assert_true(WAIT_FOR(m, uplink_vxlan_port_stat(m[2].vx, "rx_runt") == 1));
	usleep(20000);
	assert_int_equal(uplink_vxlan_port_stat(m[1].vx, "rx_runt"), 2);
	assert_int_equal(uplink_vxlan_port_stat(m[3].vx, "rx_runt"), 0);
	assert_int_equal(cap_count(&m[1].cap), 4);

	member_destroy(&m[1]);
	member_destroy(&m[2]);
	member_destroy(&m[3]);
	/* Nothing holds the port any more. */
	late = udp_bound("127.0.0.1", port);
	assert_true(late >= 0);
	close(late);
	close(remote);
}

/* A UDP port free on 127.0.0.1 and 127.0.0.2 when asked (another may take it later). */
static uint16_t free_port(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd = udp_bound("127.0.0.2", 0), other;
	uint16_t port;

	assert_true(fd >= 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin_port);
	close(fd);
	other = udp_bound("127.0.0.1", port);
	assert_true(other >= 0);
	close(other);
	return port;
}

/*
 * Two ports of one address shared at once, VNIs 10 and 20 on each: each
 * datagram reaches the uplink of its port and VNI (the groups are told
 * apart by port too).
 */
static void test_port_shared_ports(void **state)
{
	struct member m[2][2];
	uint16_t port[2];
	int remote = udp_bound("127.0.0.2", 0);

	(void)state;
	assert_true(remote >= 0);
	port[0] = free_port();
	do
		port[1] = free_port();
	while (port[1] == port[0]);
	for (unsigned int g = 0; g < 2; g++)
		for (unsigned int v = 0; v < 2; v++)
			assert_int_equal(member_create(&m[g][v], 10 * (v + 1), port[g]), 0);
	for (unsigned int k = 0; k < 3; k++) {
		for (unsigned int g = 0; g < 2; g++)
			for (unsigned int v = 0; v < 2; v++)
				send_vni(remote, port[g], 10 * (v + 1),
					 (uint8_t)(40 * g + 10 * v + k + 1));
		for (unsigned int g = 0; g < 2; g++)
			for (unsigned int v = 0; v < 2; v++)
				member_got(&m[g][v], k + 1, (uint8_t)(40 * g + 10 * v + k + 1));
	}
	for (unsigned int g = 0; g < 2; g++)
		for (unsigned int v = 0; v < 2; v++) {
			assert_int_equal(uplink_vxlan_port_stat(m[g][v].vx, "rx_bad_vni"), 0);
			member_destroy(&m[g][v]);
		}
	close(remote);
}

/*
 * A group takes UPLINK_VXLAN_SHARE_MAX uplinks over its life, the ones
 * that left included (their sockets parked), and refuses the next; once
 * its last uplink leaves, the port makes a new group.
 */
static void test_port_shared_lifetime(void **state)
{
	struct member first, m;
	uint16_t port = free_port();

	(void)state;
	assert_int_equal(member_create(&first, 1, port), 0);
	for (unsigned int i = 1; i < UPLINK_VXLAN_SHARE_MAX; i++) {
		assert_int_equal(member_create(&m, 1 + i, port), 0);
		member_destroy(&m);
	}
	assert_int_equal(member_create(&m, 100, port), -ENOSPC);
	member_destroy(&m);
	member_destroy(&first);
	assert_int_equal(member_create(&m, 100, port), 0);
	member_destroy(&m);
}

/*
 * The first of three uplinks sharing a port sends from it too
 * (srcport=P-P, P its dstport): when it leaves, that socket is parked all
 * the same, not closed, so the others keep their places in the group and
 * each VNI's datagrams, from whatever source port, reach its uplink.
 */
static void test_port_shared_srcport(void **state)
{
	struct member m[3];
	int remote[16];
	uint16_t port = free_port();
	char text[160];

	(void)state;
	snprintf(text, sizeof(text),
		 "vxlan:id=10,remote=127.0.0.2,local=127.0.0.1,dstport=%u,srcport=%u-%u", port,
		 port, port);
	assert_int_equal(member_create_text(&m[0], 10, text), 0);
	assert_int_equal(member_create(&m[1], 20, port), 0);
	assert_int_equal(member_create(&m[2], 30, port), 0);
	member_destroy(&m[0]);
	for (unsigned int i = 0; i < 16; i++) {
		remote[i] = udp_bound("127.0.0.2", 0);
		assert_true(remote[i] >= 0);
		send_vni(remote[i], port, 30, (uint8_t)i);
		send_vni(remote[i], port, 20, (uint8_t)(100 + i));
	}
	member_got(&m[2], 16, 15);
	member_got(&m[1], 16, 115);
	usleep(20000);
	assert_int_equal(uplink_vxlan_port_stat(m[1].vx, "rx_bad_vni"), 0);
	assert_int_equal(uplink_vxlan_port_stat(m[2].vx, "rx_bad_vni"), 0);
	member_destroy(&m[1]);
	member_destroy(&m[2]);
	for (unsigned int i = 0; i < 16; i++)
		close(remote[i]);
}

/*
 * An IPv4 uplink and an IPv6 one on one port, the IPv6 one on the
 * wildcard: apart (its socket is IPv6-only), both start.
 */
static void test_port_families(void **state)
{
	struct member v4, v6;
	uint16_t port = free_port();
	char text[160];
	int probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)state;
	if (probe < 0)
		test_skip("IPv4 and IPv6 uplinks on one port: no IPv6 here");
	close(probe);
	snprintf(text, sizeof(text), "vxlan:id=10,remote=127.0.0.2,local=127.0.0.1,dstport=%u",
		 port);
	assert_int_equal(member_create_text(&v4, 10, text), 0);
	snprintf(text, sizeof(text), "vxlan:id=20,remote=2001:db8::1,dstport=%u", port);
	assert_int_equal(member_create_text(&v6, 20, text), 0);
	member_destroy(&v6);
	member_destroy(&v4);
}

/* Bring up loopback in the calling thread's namespace. */
static void lo_up(void)
{
	struct ifreq ifr = {0};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	assert_int_equal(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	assert_int_equal(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

/*
 * One port, three groups at once: VNIs 10 and 20 on 127.0.0.1, again on
 * 127.0.0.3, and (as root) again on 127.0.0.1 in a namespace of their own.
 * Each datagram reaches its own group's uplink of its VNI: the groups are
 * told apart by address and namespace, not by port alone.
 */
static char groups_ns[32]; /* the namespace made, "" before: gone again after a failure too */

/* Delete the namespace a test made, named in @ns ("" if none), and forget it. */
static void ns_forget(char *ns)
{
	if (*ns)
		(void)uplink_netns_delete(ns);
	*ns = '\0';
}

static int groups_teardown(void **state)
{
	(void)state;
	ns_forget(groups_ns);
	return 0;
}

static void test_port_shared_groups(void **state)
{
	static const char *const local[] = {"127.0.0.1", "127.0.0.3", "127.0.0.1"};
	const char *ns = groups_ns;
	struct member m[3][2];
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	unsigned int ngroups = geteuid() == 0 ? 3 : 2;
	int remote[3] = {-1, -1, -1}, saved, probe;
	bool created;
	uint16_t port;

	(void)state;
	probe = udp_bound("127.0.0.2", 0);
	assert_true(probe >= 0);
	assert_int_equal(getsockname(probe, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin_port);
	remote[0] = remote[1] = probe; /* the root namespace's remote, on the port */
	if (ngroups == 3) {
		snprintf(groups_ns, sizeof(groups_ns), "pvnet-vxt-%d", (int)getpid());
		assert_int_equal(uplink_netns_enter(ns, &created, &saved), 0);
		assert_true(created);
		lo_up();
		remote[2] = udp_bound("127.0.0.2", port);
		assert_int_equal(uplink_netns_leave(saved), 0);
		assert_true(remote[2] >= 0);
	}
	for (unsigned int g = 0; g < ngroups; g++)
		for (unsigned int v = 0; v < 2; v++)
			assert_int_equal(member_create_at(&m[g][v], 10 * (v + 1), local[g], port,
							  g == 2 ? ns : ""),
					 0);
	for (unsigned int k = 0; k < 3; k++) {
		for (unsigned int g = 0; g < ngroups; g++)
			for (unsigned int v = 0; v < 2; v++)
				send_vni_to(remote[g], local[g], port, 10 * (v + 1),
					    (uint8_t)(40 * g + 10 * v + k + 1));
		for (unsigned int g = 0; g < ngroups; g++)
			for (unsigned int v = 0; v < 2; v++)
				member_got(&m[g][v], k + 1, (uint8_t)(40 * g + 10 * v + k + 1));
	}
	for (unsigned int g = 0; g < ngroups; g++)
		for (unsigned int v = 0; v < 2; v++) {
			assert_int_equal(uplink_vxlan_port_stat(m[g][v].vx, "rx_bad_vni"), 0);
			member_destroy(&m[g][v]);
		}
	close(probe);
	if (ngroups == 3)
		close(remote[2]);
}

/*
 * ECN over an IPv6 underlay (IPV6_TCLASS): the remote's CE marks an
 * ECN-capable frame CE, its ECT(1) makes ECT(0) ECT(1).  As root, in a
 * namespace of the test's, between ::1 and fd00::2 on its loopback.
 */
static char ecn6_ns[32]; /* the namespace made, "" before: gone again after a failure too */

static int ecn6_teardown(void **state)
{
	(void)state;
	ns_forget(ecn6_ns);
	return 0;
}

static void test_port_ecn_ipv6(void **state)
{
	static const uint8_t outer[] = {UPLINK_ECN_CE, UPLINK_ECN_ECT1, UPLINK_ECN_ECT0};
	static const uint8_t want[] = {UPLINK_ECN_CE, UPLINK_ECN_ECT1, UPLINK_ECN_ECT0};
	struct { /* linux/ipv6.h's in6_ifreq */
		struct in6_addr addr;
		uint32_t prefixlen;
		int ifindex;
	} ifr6 = {.prefixlen = 128};
	struct sockaddr_in6 a = {.sin6_family = AF_INET6};
	socklen_t alen = sizeof(a);
	struct member m;
	static struct fb f, g;
	char text[192];
	bool created;
	int saved, fd, remote, one = 1;
	uint16_t port;
	uint8_t *d;

	(void)state;
	if (geteuid() != 0)
		test_skip("ECN over IPv6: needs root (a network namespace)");
	snprintf(ecn6_ns, sizeof(ecn6_ns), "pvnet-vx6-%d", (int)getpid());
	assert_int_equal(uplink_netns_enter(ecn6_ns, &created, &saved), 0);
	assert_true(created);
	lo_up();
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		assert_int_equal(uplink_netns_leave(saved), 0);
		test_skip("ECN over IPv6: no IPv6 here");
	}
	inet_pton(AF_INET6, "fd00::2", &ifr6.addr);
	ifr6.ifindex = (int)if_nametoindex("lo");
	assert_int_equal(ioctl(fd, SIOCSIFADDR, &ifr6), 0);
	close(fd);
	remote = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(remote >= 0);
	assert_int_equal(setsockopt(remote, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)), 0);
	inet_pton(AF_INET6, "fd00::2", &a.sin6_addr);
	/* The new address is tentative for a moment (duplicate address detection). */
	for (int tries = 0; bind(remote, (struct sockaddr *)&a, sizeof(a)) < 0; tries++) {
		assert_int_equal(errno, EADDRNOTAVAIL);
		assert_true(tries < 2000);
		usleep(1000);
	}
	assert_int_equal(getsockname(remote, (struct sockaddr *)&a, &alen), 0);
	port = ntohs(a.sin6_port);
	assert_int_equal(uplink_netns_leave(saved), 0);

	snprintf(text, sizeof(text), "vxlan:id=6,remote=fd00::2,local=::1,dstport=%u,netns=%s",
		 port, ecn6_ns);
	assert_int_equal(member_create_spec(&m, 6, text, false), 0);
	inet_pton(AF_INET6, "::1", &a.sin6_addr);
	a.sin6_port = htons(port);
	for (unsigned int i = 0; i < sizeof(outer); i++) {
		int tc = outer[i];

		fb_build(&f, 4, IPPROTO_UDP, false, 100, (uint8_t)(80 + i));
		set_ecn(&f, 4, UPLINK_ECN_ECT0);
		g = f;
		set_ecn(&g, 4, want[i]);
		assert_int_equal(setsockopt(remote, IPPROTO_IPV6, IPV6_TCLASS, &tc, sizeof(tc)), 0);
		d = dgram(6, f.b, f.len);
		assert_int_equal(sendto(remote, d, 8 + f.len, 0, (struct sockaddr *)&a, sizeof(a)),
				 (ssize_t)(8 + f.len));
		free(d);
		if (!WAIT_FOR(&m, cap_count(&m.cap) == i + 1))
			fail_msg("%u frames, %u expected", cap_count(&m.cap), i + 1);
		assert_int_equal(m.cap.len[i], f.len);
		assert_memory_equal(m.cap.frame[i], g.b, f.len);
	}
	member_destroy(&m);
	close(remote);
}

/*
 * A socket whose send buffer is full refuses the rest of a batch: each
 * datagram refused is counted in tx_eagain, not one per refusal.  As root,
 * in a namespace of the test's whose loopback holds what is sent (a tbf
 * queue of 10 Mbit/s, 100 MB long): 256 datagrams of 60 KB, from one
 * socket, are twice what its 8 MiB of send buffer takes.  Nothing is left
 * queued after: the queue drains in seconds, and the teardown removes it
 * (a namespace lives on while its queue holds what a socket sent); a sink
 * on the remote's port takes what arrives, so no ICMP error is queued
 * behind the datagrams (the kernel's ICMP sockets are every namespace's).
 */
static char eagain_ns[32]; /* the namespace made, "" before: gone again after a failure too */
static int eagain_sink = -1;

static int eagain_teardown(void **state)
{
	int saved;

	(void)state;
	if (eagain_sink >= 0)
		close(eagain_sink);
	eagain_sink = -1;
	if (*eagain_ns && uplink_netns_enter(eagain_ns, NULL, &saved) == 0) {
		/* Fails if none was added. */
		int rc = system("tc qdisc del dev lo root 2>/dev/null");

		(void)rc;
		(void)uplink_netns_leave(saved);
	}
	ns_forget(eagain_ns);
	return 0;
}

static void test_port_tx_eagain(void **state)
{
	static struct fb f;
	static struct tpkt t[SW_BATCH_MAX];
	struct sw_pkt *pp[SW_BATCH_MAX];
	struct member m;
	char text[160];
	bool created;
	int saved, rc;
	uint64_t refused;

	(void)state;
	if (geteuid() != 0)
		test_skip("a full send buffer: needs root (a network namespace)");
	test_need_tool("tc");
	snprintf(eagain_ns, sizeof(eagain_ns), "pvnet-vxq-%d", (int)getpid());
	assert_int_equal(uplink_netns_enter(eagain_ns, &created, &saved), 0);
	assert_true(created);
	lo_up();
	eagain_sink = udp_bound("127.0.0.2", 4789);
	assert_true(eagain_sink >= 0);
	rc = system("tc qdisc add dev lo root tbf rate 10mbit burst 70000 limit 100000000 "
		    "2>/dev/null");
	assert_int_equal(uplink_netns_leave(saved), 0);
	if (rc != 0)
		test_skip("a full send buffer: no tbf queueing discipline in this kernel");

	snprintf(text, sizeof(text),
		 "vxlan:id=9,remote=127.0.0.2,local=127.0.0.1,srcport=4789-4789,mtu=65000,netns=%s",
		 eagain_ns);
	assert_int_equal(member_create_spec(&m, 9, text, false), 0);
	fb_build(&f, 4, IPPROTO_UDP, false, 60000, 90);
	for (unsigned int round = 0; round < 4; round++) {
		for (unsigned int i = 0; i < SW_BATCH_MAX; i++)
			pp[i] = tpkt_init(&t[i], f.b, f.len, 128, true, 0);
		sw_forward(m.sw, m.cap.port, pp, SW_BATCH_MAX);
		for (unsigned int i = 0; i < SW_BATCH_MAX; i++)
			assert_int_equal(t[i].done, 1);
	}
	refused = uplink_vxlan_port_stat(m.vx, "tx_eagain");
	if (refused < 64)
		fail_msg("%llu datagrams refused, 64 at least expected",
			 (unsigned long long)refused);
	assert_int_equal(uplink_vxlan_port_stat(m.vx, "tx_errors"), 0);
	member_destroy(&m);
}

/*
 * Two remotes, one with no route (10.255.255.1, in a namespace of the
 * test's whose only network is its loopback: nothing leaves it): in
 * batches of broadcasts, which go to both, every datagram to that remote
 * is refused and counted once under tx_errors, with the reason logged,
 * while the other remote (127.0.0.2 on that loopback) gets each of its
 * datagrams, once and in order.  The refusal is the remote's, so the send
 * drops the batch's other datagrams to it together (one system call, not
 * one each): what is left of the batch must keep its order.
 */
static char unreach_ns[32]; /* the namespace made, "" before: gone again after a failure too */

static int unreach_teardown(void **state)
{
	(void)state;
	ns_forget(unreach_ns);
	return 0;
}

static void test_port_tx_unreachable(void **state)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
			     guest[6] = {0x02, 0, 0, 0, 0, 0x01};
	static struct fb f[40];
	static uint8_t buf[2048];
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct sw_pkt *pp[40];
	struct tpkt t[40];
	struct log_capture lc;
	struct member m;
	char text[192], *log;
	bool created;
	int saved, remote;

	(void)state;
	if (geteuid() != 0)
		test_skip("a remote with no route: needs root (a network namespace)");
	snprintf(unreach_ns, sizeof(unreach_ns), "pvnet-vxu-%d", (int)getpid());
	assert_int_equal(uplink_netns_enter(unreach_ns, &created, &saved), 0);
	assert_true(created);
	lo_up();
	remote = udp_bound("127.0.0.2", 0);
	assert_int_equal(uplink_netns_leave(saved), 0);
	assert_true(remote >= 0);
	assert_int_equal(getsockname(remote, (struct sockaddr *)&a, &alen), 0);
	snprintf(text, sizeof(text),
		 "vxlan:id=7,remote=10.255.255.1,remote=127.0.0.2,local=127.0.0.1,dstport=%u,"
		 "netns=%s",
		 ntohs(a.sin_port), unreach_ns);
	assert_int_equal(member_create_spec(&m, 7, text, false), 0);

	log_capture_start(&lc);
	for (unsigned int round = 0; round < 2; round++) {
		unsigned int n = round ? 40 : 1;

		for (unsigned int i = 0; i < n; i++) {
			fb_build(&f[i], 4, IPPROTO_UDP, false, 100, (uint8_t)(i + 1));
			set_macs(&f[i], bcast, guest);
			pp[i] = tpkt_init(&t[i], f[i].b, f[i].len, 128, false, 0);
		}
		sw_forward(m.sw, m.cap.port, pp, n);
		for (unsigned int i = 0; i < n; i++) {
			assert_int_equal(fd_recv(remote, buf, sizeof(buf), 1000),
					 8 + (int)f[i].len);
			assert_memory_equal(buf + 8, f[i].b, f[i].len);
			assert_int_equal(t[i].done, 1);
		}
		assert_int_equal(fd_recv(remote, buf, sizeof(buf), 50), -1);
	}
	log = log_capture_end(&lc);
	assert_int_equal(uplink_vxlan_port_stat(m.vx, "tx_errors"), 41);
	assert_int_equal(uplink_vxlan_port_stat(m.vx, "tx_eagain"), 0);
	if (!strstr(log, "a datagram to 10.255.255.1 refused: Network is unreachable"))
		fail_msg("the refusal's reason is not logged: \"%s\"", log);
	free(log);
	member_destroy(&m);
	close(remote);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_defaults),
	    cmocka_unit_test(test_spec_everything),
	    cmocka_unit_test(test_spec_bad),
	    cmocka_unit_test(test_spec_remotes),
	    cmocka_unit_test(test_spec_same),
	    cmocka_unit_test(test_spec_clash),
	    cmocka_unit_test(test_port_remote_is_ours),
	    cmocka_unit_test(test_hdr),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_ecn_edges),
	    cmocka_unit_test(test_flow_hash),
	    cmocka_unit_test_setup_teardown(test_port_rx, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_tx, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_ecn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_tx_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_tx_refused_logged, setup_big_mtu, teardown),
	    cmocka_unit_test_setup_teardown(test_port_tx_bad_offload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_remotes, setup_two, teardown),
	    cmocka_unit_test_setup_teardown(test_port_remotes_gso, setup_two, teardown),
	    cmocka_unit_test_setup_teardown(test_port_srcports, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_srcport_dstport, setup_src_dstport, teardown),
	    cmocka_unit_test_setup_teardown(test_port_srcport_range, setup_src_range, teardown),
	    cmocka_unit_test(test_port_srcport_busy),
	    cmocka_unit_test(test_port_shared),
	    cmocka_unit_test(test_port_shared_ports),
	    cmocka_unit_test(test_port_shared_lifetime),
	    cmocka_unit_test(test_port_shared_srcport),
	    cmocka_unit_test(test_port_families),
	    cmocka_unit_test_teardown(test_port_shared_groups, groups_teardown),
	    cmocka_unit_test_teardown(test_port_ecn_ipv6, ecn6_teardown),
	    cmocka_unit_test_teardown(test_port_tx_eagain, eagain_teardown),
	    cmocka_unit_test_teardown(test_port_tx_unreachable, unreach_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
