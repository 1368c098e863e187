// SPDX-License-Identifier: MIT
/* test_status.c - `pvnet status` and `pvnet show` against a real pvnetd: many vifs, stdout errors */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <xenstore.h>

#include <pvnet/pvnet.h>

#include "common/ctlmsg.h"
#include "../common/group_run.h"
#include "itest.h"

/*
 * One pvnetd for the whole file, and one domain with enough connected vifs
 * that their counters do not fit one control message (CTLMSG_MAX, 64 KiB):
 * 10 vifs of 8 queues (pvnetd's default maximum), some 7 KB of counters
 * each; the first test checks that pvnetd refuses them in one reply.  Each
 * test runs the pvnet binary as a user does, stdout and stderr into files.
 */
#define NVIFS	10
#define NQUEUES 8

static const char *pvnetd_path, *pvnet_path;
static struct itest T;
/* A second pvnetd, of its own options, for test_fdb_parts (stopped with the group if it fails). */
static struct itest T2;
static struct pvnet_domain *dom;
static struct pvnet_vif *vifs[NVIFS];
static char out_path[PATH_MAX], err_path[PATH_MAX];
static const char *pvnet_dir; /* the run directory pvnet is given: T's but in test_fdb_parts */

static int group_setup(void **state)
{
	struct pvnet_vif_config cfg;

	(void)state;
	/* Each vif may learn 32 MACs (test_fdb fills 30 and tries 5 more on one). */
	if (itest_start(&T, pvnetd_path, "status", "--vif-mac-limit", "32", NULL) < 0)
		return -1;
	if (itest_start(&T2, pvnetd_path, "fdb", "--mac-ageing", "4", "--vif-mac-limit", "1024",
			"--rx-stall-timeout", "500", NULL) < 0)
		return -1;
	pvnet_dir = T.run_dir;
	snprintf(out_path, sizeof(out_path), "%s.out", T.run_dir);
	snprintf(err_path, sizeof(err_path), "%s.err", T.run_dir);
	/* The fewest pages a queue may have: 2 rings + 18 TX + 19 RX buffers. */
	if (pvnet_domain_create(T.run_dir, 4096, &dom) < 0)
		return -1;
	for (unsigned int d = 0; d < NVIFS; d++) {
		pvnet_vif_config_default(&cfg);
		cfg.devid = d;
		cfg.queues = NQUEUES;
		cfg.tx_buffers = PVNET_MAX_FRAGS;
		cfg.rx_buffers = PVNET_MAX_FRAGS + 1;
		if (pvnet_vif_create(dom, &cfg, &vifs[d]) < 0)
			return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	int rc2;

	(void)state;
	for (unsigned int d = 0; d < NVIFS; d++)
		pvnet_vif_destroy(vifs[d]);
	pvnet_domain_destroy(dom);
	unlink(out_path);
	unlink(err_path);
	kill(T2.pid, SIGCONT); /* should test_fdb_parts have failed with it stopped */
	rc2 = itest_stop(&T2);
	return itest_stop(&T) < 0 || rc2 < 0 ? -1 : 0;
}

/*
 * Run `pvnet -d RUN_DIR ARGS...` (NULL-terminated) with stdout into @out
 * (a file it creates, or /dev/full) and stderr into err_path; its exit
 * status, or -1 if it did not exit.
 */
static int run_pvnet(const char *out, ...)
{
	va_list ap;
	int rc;

	va_start(ap, out);
	rc = itest_run_pvnetv(pvnet_path, pvnet_dir, out, err_path, ap);
	va_end(ap);
	return rc;
}

/* Whether the file at @path (pvnet's output, under 1 MiB) contains @s. */
static bool file_has(const char *path, const char *s)
{
	size_t cap = 1 << 20, n;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	bool has;

	assert_non_null(buf);
	assert_non_null(f);
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	has = strstr(buf, s) != NULL;
	free(buf);
	return has;
}

/* pvnetd's reply to @req on a fresh connection, with ctlmsg_call()'s result in @rc. */
static json_t *ask(json_t *req, int *rc)
{
	json_t *reply = NULL;
	int fd = itest_ctl_open(&T);

	*rc = ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL);
	json_decref(req);
	close(fd);
	return reply;
}

/* @a and @b have the same keys in the same order (the JSON output is an interface). */
static void assert_same_keys(const json_t *a, const json_t *b)
{
	void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);

	for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
			 ib = json_object_iter_next((json_t *)b, ib))
		assert_string_equal(json_object_iter_key(ia), json_object_iter_key(ib));
	assert_null(ia);
	assert_null(ib);
}

/*
 * `pvnet status --json` of more vifs than one message holds: exit 0, and
 * the document pvnetd's one-message status would be (the same keys in the
 * same places), every vif with every queue's counters.  It used to ask for
 * everything at once and exit 1 with pvnetd's E2BIG and empty stdout.
 */
static void test_status_json_many_vifs(void **state)
{
	json_t *brief, *doc, *vif, *one;
	json_error_t jerr;
	char name[32];
	size_t i;
	int rc;

	(void)state;
	/* What the test is about: everything at once does not fit. */
	json_decref(ask(json_pack("{s:s}", "op", "status"), &rc));
	assert_int_equal(rc, -E2BIG);

	assert_int_equal(run_pvnet(out_path, "status", "--json", NULL), 0);
	doc = json_load_file(out_path, 0, &jerr);
	assert_non_null(doc);
	brief = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	assert_same_keys(doc, brief);
	assert_true(json_equal(json_object_get(doc, "domains"), json_object_get(brief, "domains")));
	json_decref(brief);

	assert_int_equal(json_array_size(json_object_get(doc, "vifs")), NVIFS);
	json_array_foreach(json_object_get(doc, "vifs"), i, vif)
	{
		snprintf(name, sizeof(name), "vif%u.%zu", pvnet_domain_id(dom), i);
		assert_string_equal(json_string_value(json_object_get(vif, "name")), name);
		assert_string_equal(json_string_value(json_object_get(vif, "state")), "Connected");
		/* The vif as pvnetd gives it alone: the same keys, and its counters. */
		one = ask(json_pack("{s:s, s:s}", "op", "status", "vif", name), &rc);
		assert_int_equal(rc, 0);
		assert_same_keys(vif, json_array_get(json_object_get(one, "vifs"), 0));
		json_decref(one);
		assert_int_equal(json_array_size(json_object_get(vif, "queues")), NQUEUES);
		for (size_t q = 0; q < NQUEUES; q++)
			assert_true(json_is_integer(json_object_get(
			    json_array_get(json_object_get(vif, "queues"), q), "rx_packets")));
		assert_true(
		    json_is_integer(json_object_get(json_object_get(vif, "switch"), "rx_packets")));
	}
	json_decref(doc);
}

/* The text forms of status and show, of the same vifs: exit 0, all there. */
static void test_text_many_vifs(void **state)
{
	char want[64];

	(void)state;
	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	assert_true(file_has(out_path, "domains: 1\n"));
	assert_int_equal(run_pvnet(out_path, "show", NULL), 0);
	snprintf(want, sizeof(want), "vif%u.%u: state Connected, %u queues", pvnet_domain_id(dom),
		 NVIFS - 1, NQUEUES);
	assert_true(file_has(out_path, want) || !"the last vif is not shown");
	assert_int_equal(run_pvnet(out_path, "show", "--json", NULL), 0);
}

/*
 * stdout that cannot be written (a full disk: /dev/full): exit 1 and say
 * so, for the short text and the long JSON alike.  It used to exit 0, an
 * empty file reported as success to the script that redirected it.
 */
static void test_stdout_full(void **state)
{
	static const char *const forms[][2] = {
	    {"status", NULL},	 {"status", "--json"}, {"show", NULL}, {"show", "--json"},
	    {"version", NULL},	 {"help", NULL},       {"fdb", NULL},  {"fdb", "--json"},
	    {"--version", NULL}, {"--help", NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		int rc = run_pvnet("/dev/full", forms[i][0], forms[i][1], NULL);

		if (rc != 1 ||
		    !file_has(err_path, "pvnet: writing stdout: No space left on device"))
			fail_msg("pvnet %s %s > /dev/full: exit %d", forms[i][0],
				 forms[i][1] ? forms[i][1] : "", rc);
	}
}

/* -d after the command: refused (exit 2), saying where it goes, before pvnetd is asked. */
static void test_run_dir_after_command(void **state)
{
	static const char *const forms[][4] = {
	    {"status", "-d", "/nonexistent", NULL},
	    {"show", "--run-dir=/nonexistent", NULL, NULL},
	    {"capture", "vif1.0", "-d", "/nonexistent"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		int rc = run_pvnet("/dev/null", forms[i][0], forms[i][1], forms[i][2], forms[i][3],
				   NULL);

		if (rc != 2 || !file_has(err_path, "-d DIR goes before the command: pvnet -d DIR"))
			fail_msg("pvnet %s %s ...: exit %d", forms[i][0], forms[i][1], rc);
	}
	/* Anything else is still an unknown argument. */
	assert_int_equal(run_pvnet("/dev/null", "status", "--bogus", NULL), 2);
	assert_true(file_has(err_path, "pvnet status: unknown argument '--bogus'"));
}

/* MACs each vif sends from in test_fdb (its own and made-up ones): 300 in all, over a reply's 256. */
#define FDB_PER_VIF 30

/* Source MAC @k of vif @d: its own for 0, else 02:00:00:00:<d>:<k>. */
static void fdb_mac(unsigned int d, unsigned int k, uint8_t mac[6])
{
	if (!k) {
		pvnet_vif_mac(vifs[d], mac);
		return;
	}
	memcpy(mac, (uint8_t[6]){0x02, 0, 0, 0, (uint8_t)d, (uint8_t)k}, 6);
}

static void fdb_mac_str(unsigned int d, unsigned int k, char s[18])
{
	uint8_t m[6];

	fdb_mac(d, k, m);
	snprintf(s, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* A switch-wide counter from status (the brief one: all the vifs' counters do not fit). */
static long long switch_stat(const char *name)
{
	json_t *st;
	long long v;
	int rc;

	st = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	v = json_integer_value(json_object_get(json_object_get(st, "switch"), name));
	json_decref(st);
	return v;
}

/* Send broadcast frames from vif @d, one from each of its MACs @from..@to - 1. */
static void fdb_send(unsigned int d, unsigned int from, unsigned int to)
{
	uint8_t f[64][60];
	struct pvnet_pkt p[64];
	unsigned int sent = 0, n = to - from;

	assert_true(n <= 64);
	for (unsigned int k = 0; k < n; k++) {
		memset(f[k], 0, sizeof(f[k]));
		memset(f[k], 0xff, 6);
		fdb_mac(d, from + k, f[k] + 6);
		f[k][12] = 0x88; /* a local experimental EtherType: nobody answers */
		f[k][13] = 0xb5;
		p[k] = (struct pvnet_pkt){.data = f[k], .len = sizeof(f[k])};
	}
	/* 18 TX buffers a queue: a few bursts, as completions come back. */
	for (int i = 0; sent < n && i < 4000; i++) {
		int r = pvnet_send(vifs[d], 0, p + sent, n - sent);

		assert_true(r >= 0);
		sent += (unsigned int)r;
		if (sent < n)
			usleep(1000);
	}
	assert_int_equal(sent, n);
}

/* Wait (4 s at most) until the switch has learnt @n MACs in all. */
static void fdb_wait(long long n)
{
	for (int i = 0; i < 400; i++) {
		if (switch_stat("fdb_entries") == n)
			return;
		usleep(10000);
	}
	fail_msg("pvnetd learned %lld of %lld MACs in 4 s", switch_stat("fdb_entries"), n);
}

/* Send FDB_PER_VIF broadcast frames from each vif, one per source MAC, and wait for the table. */
static void fdb_fill(void)
{
	for (unsigned int d = 0; d < NVIFS; d++)
		fdb_send(d, 0, FDB_PER_VIF);
	fdb_wait(NVIFS * FDB_PER_VIF);
}

/* The lines of pvnet's output at @path (at most @max, under 1 MiB), each NUL-terminated. */
static unsigned int read_lines(const char *path, char *buf, size_t cap, char **line,
			       unsigned int max)
{
	FILE *f = fopen(path, "r");
	unsigned int n = 0;
	size_t len;

	assert_non_null(f);
	len = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[len] = '\0';
	for (char *s = buf, *nl; *s && n < max; s = nl + 1) {
		nl = strchr(s, '\n');
		assert_non_null(nl);
		*nl = '\0';
		line[n++] = s;
	}
	return n;
}

/*
 * `pvnet fdb` of more MACs than one reply holds (300, a reply 256): every
 * MAC once under its port, sorted by port and MAC, the table's size,
 * room and ageing below; one port's alone; --json the same entries; an
 * unknown port exit 1 saying so; status's switch counters.
 */
static void test_fdb(void **state)
{
	static char buf[1 << 20];
	char *line[NVIFS * FDB_PER_VIF + 8], port[32], mac[18], want[160], path[PATH_MAX];
	unsigned int n, seen[NVIFS][FDB_PER_VIF] = {{0}};
	json_t *doc, *e, *prev = NULL;
	json_error_t jerr;
	size_t i;
	int rc;

	(void)state;
	fdb_fill();
	assert_int_equal(run_pvnet(out_path, "fdb", NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, NVIFS * FDB_PER_VIF + 8);
	assert_int_equal(n, NVIFS * FDB_PER_VIF + 2);
	assert_string_equal(line[0], "port             mac               age");
	for (unsigned int l = 1; l <= NVIFS * FDB_PER_VIF; l++) {
		unsigned int dom_id, d, k, found = 0;
		long age;
		char s[18];

		if (sscanf(line[l], "%31s %17s %ld", port, mac, &age) != 3 ||
		    sscanf(port, "vif%u.%u", &dom_id, &d) != 2 || dom_id != pvnet_domain_id(dom) ||
		    d >= NVIFS || age < 0 || age > 10)
			fail_msg("line %u: \"%s\"", l, line[l]);
		for (k = 0; k < FDB_PER_VIF; k++) {
			fdb_mac_str(d, k, s);
			if (!strcmp(s, mac)) {
				seen[d][k]++;
				found = 1;
			}
		}
		if (!found)
			fail_msg("line %u: %s is not a MAC vif %u sent from", l, mac, d);
		/* Sorted: by port (one digit each here), then by MAC. */
		if (l > 1 && strcmp(line[l - 1], line[l]) >= 0)
			fail_msg("lines %u and %u out of order: \"%s\", \"%s\"", l - 1, l,
				 line[l - 1], line[l]);
	}
	for (unsigned int d = 0; d < NVIFS; d++)
		for (unsigned int k = 0; k < FDB_PER_VIF; k++)
			if (seen[d][k] != 1)
				fail_msg("MAC %u of vif %u shown %u times", k, d, seen[d][k]);
	snprintf(want, sizeof(want), "%d MACs learned, room for 8192; forgotten after 300 s unseen",
		 NVIFS * FDB_PER_VIF);
	assert_string_equal(line[n - 1], want);

	/* One port. */
	snprintf(port, sizeof(port), "vif%u.3", pvnet_domain_id(dom));
	assert_int_equal(run_pvnet(out_path, "fdb", port, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, NVIFS * FDB_PER_VIF + 8);
	assert_int_equal(n, FDB_PER_VIF + 2);
	for (unsigned int l = 1; l <= FDB_PER_VIF; l++)
		assert_true(!strncmp(line[l], port, strlen(port)) && line[l][strlen(port)] == ' ');
	snprintf(want, sizeof(want),
		 "%d MACs on %s; %d MACs learned, room for 8192; "
		 "forgotten after 300 s unseen",
		 FDB_PER_VIF, port, NVIFS * FDB_PER_VIF);
	assert_string_equal(line[n - 1], want);

	/* JSON: the same entries, in the same order. */
	assert_int_equal(run_pvnet(out_path, "fdb", "--json", NULL), 0);
	doc = json_load_file(out_path, 0, &jerr);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "entries")), NVIFS * FDB_PER_VIF);
	assert_int_equal(json_integer_value(json_object_get(doc, "count")), NVIFS * FDB_PER_VIF);
	assert_int_equal(json_integer_value(json_object_get(doc, "max")), 8192); /* 256 x 32 */
	assert_int_equal(json_integer_value(json_object_get(doc, "ageing")), 300);
	json_array_foreach(json_object_get(doc, "entries"), i, e)
	{
		const char *p = json_string_value(json_object_get(e, "port"));
		const char *m = json_string_value(json_object_get(e, "mac"));

		assert_non_null(p);
		assert_non_null(m);
		assert_true(json_is_integer(json_object_get(e, "age")));
		if (prev) {
			int c = strcmp(json_string_value(json_object_get(prev, "port")), p);

			assert_true(
			    c < 0 ||
			    (c == 0 &&
			     strcmp(json_string_value(json_object_get(prev, "mac")), m) < 0));
		}
		prev = e;
	}
	json_decref(doc);

	/* An unknown port, a second one: exit 1, exit 2, each saying why. */
	assert_int_equal(run_pvnet(out_path, "fdb", "nope", NULL), 1);
	assert_true(file_has(err_path, "pvnet fdb: no port \"nope\" on the switch\n"));
	assert_int_equal(run_pvnet(out_path, "fdb", port, "vif0.0", NULL), 2);
	assert_true(file_has(err_path, "pvnet fdb: unknown argument 'vif0.0'"));

	/* status: the table's counters and limits. */
	assert_int_equal(switch_stat("fdb_max"), 8192);
	assert_int_equal(switch_stat("ageing"), 300);
	assert_int_equal(switch_stat("fdb_aged"), 0);
	assert_int_equal(switch_stat("fdb_full"), 0);
	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	snprintf(want, sizeof(want),
		 "switch: %d MACs learned, room for 8192, forgotten after 300 "
		 "s unseen; 0 aged out, 0 not learned (table full)\n",
		 NVIFS * FDB_PER_VIF);
	assert_true(file_has(out_path, want));

	/* --vif-mac-limit 32: of five more sources on vif 0, two are learnt, three not. */
	fdb_send(0, FDB_PER_VIF, FDB_PER_VIF + 5);
	fdb_wait(NVIFS * FDB_PER_VIF + 2);
	snprintf(port, sizeof(port), "vif%u.0", pvnet_domain_id(dom));
	assert_int_equal(run_pvnet(out_path, "fdb", port, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, NVIFS * FDB_PER_VIF + 8);
	assert_int_equal(n, 32 + 2);
	doc = ask(json_pack("{s:s, s:s}", "op", "status", "vif", port), &rc);
	assert_int_equal(rc, 0);
	e = json_object_get(json_array_get(json_object_get(doc, "vifs"), 0), "switch");
	assert_int_equal(json_integer_value(json_object_get(e, "fdb_entries")), 32);
	assert_int_equal(json_integer_value(json_object_get(e, "learn_limit")), 3);
	json_decref(doc);
	assert_int_equal(switch_stat("fdb_full"), 0);
	/* ... and pvnetd says so in its log within a second or two (its ageing tick). */
	snprintf(want, sizeof(want),
		 "switch: port %s is at its limit of 32 MACs: 3 frames from MACs it could not "
		 "learn so far; frames to those are flooded",
		 port);
	snprintf(path, sizeof(path), "%s.log", T.run_dir);
	for (int t = 0; t < 300 && !file_has(path, want); t++)
		usleep(10000);
	if (!file_has(path, want))
		fail_msg("pvnetd's log does not say \"%s\"", want);
}

/* The vif @name from a status reply of that vif alone. */
static json_t *vif_status(const char *name)
{
	json_t *st, *v;
	int rc;

	st = ask(json_pack("{s:s, s:s}", "op", "status", "vif", name), &rc);
	assert_int_equal(rc, 0);
	v = json_incref(json_array_get(json_object_get(st, "vifs"), 0));
	json_decref(st);
	assert_non_null(v);
	return v;
}

/* Wait (4 s at most) until feature @key of vif @name is @want. */
static void wait_feature(const char *name, const char *key, long long want)
{
	long long v = -1;

	for (int i = 0; i < 400; i++) {
		json_t *vif = vif_status(name);

		v = json_integer_value(json_object_get(json_object_get(vif, "features"), key));
		json_decref(vif);
		if (v == want)
			return;
		usleep(10000);
	}
	fail_msg("%s: %s is %lld, not %lld, after 4 s", name, key, v, want);
}

/*
 * What a vif negotiated, in status and in `pvnet show`: two vifs that
 * differ in every feature but a control ring (IPv4 against IPv6 offloads,
 * split event channels or not, the multicast filter or not), one with a
 * rate the toolstack set,
 * the other with a multicast group; each feature from its own bit, each
 * name as show prints it, the rate's bytes and microseconds each in its
 * place.  The domain is named, and show's first line says so, with the
 * transmit mode and carrier, and "1 queue" in the singular.
 */
static void test_show_features(void **state)
{
	static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
	struct pvnet_vif_config cfg;
	struct pvnet_domain *d2;
	struct pvnet_vif *va, *vb;
	struct xs_handle *xs;
	char a[32], b[32], path[PATH_MAX], want[256], *line[64];
	static char buf[1 << 16];
	json_t *v, *f;
	unsigned int n;

	(void)state;
	assert_int_equal(pvnet_domain_create(T.run_dir, 512, &d2), 0);
	assert_int_equal(pvnet_domain_set_name(d2, "features"), 0);
	pvnet_vif_config_default(&cfg);
	cfg.features = PVNET_F_SG | PVNET_F_GSO_TCPV4 | PVNET_F_CSUM | PVNET_F_SPLIT_EVTCHN;
	cfg.ctrl_ring = true; /* without the multicast filter: the two told apart */
	cfg.tx_buffers = cfg.rx_buffers = 32;
	assert_int_equal(pvnet_vif_create(d2, &cfg, &va), 0);
	pvnet_vif_config_default(&cfg);
	cfg.devid = 1;
	cfg.features = PVNET_F_SG | PVNET_F_GSO_TCPV6 | PVNET_F_IPV6_CSUM | PVNET_F_RX_NOTIFY |
		       PVNET_F_MCAST_FILTER;
	cfg.ctrl_ring = true;
	cfg.tx_buffers = cfg.rx_buffers = 32;
	assert_int_equal(pvnet_vif_create(d2, &cfg, &vb), 0);
	snprintf(a, sizeof(a), "vif%u.0", pvnet_domain_id(d2));
	snprintf(b, sizeof(b), "vif%u.1", pvnet_domain_id(d2));

	/* The toolstack's rate for vif A (12500 bytes per 40 ms); a group for vif B. */
	snprintf(path, sizeof(path), "%s/xenstore.sock", T.run_dir);
	setenv("XENSTORED_PATH", path, 1);
	xs = xs_open(XS_OPEN_SOCKETONLY);
	assert_non_null(xs);
	snprintf(path, sizeof(path), "%s/rate", pvnet_vif_backend_path(va));
	assert_true(xs_write(xs, XBT_NULL, path, "12500,40000", 11));
	xs_close(xs);
	wait_feature(a, "rate_bytes", 12500);
	assert_int_equal(pvnet_mcast_add(vb, 0, group), 1);
	wait_feature(b, "mcast_addrs", 1);

	v = vif_status(a);
	f = json_object_get(v, "features");
	assert_true(json_is_true(json_object_get(f, "sg")));
	assert_true(json_is_true(json_object_get(f, "gso_tcpv4")));
	assert_true(json_is_false(json_object_get(f, "gso_tcpv6")));
	assert_true(json_is_true(json_object_get(f, "csum_ipv4")));
	assert_true(json_is_false(json_object_get(f, "csum_ipv6")));
	assert_true(json_is_false(json_object_get(f, "rx_notify")));
	assert_true(json_is_true(json_object_get(f, "split_event_channels")));
	assert_true(json_is_true(json_object_get(f, "ctrl_ring")));
	assert_true(json_is_false(json_object_get(f, "mcast_filter")));
	assert_int_equal(json_integer_value(json_object_get(f, "rate_usec")), 40000);
	assert_string_equal(json_string_value(json_object_get(v, "domain_name")), "features");
	assert_int_equal(json_integer_value(json_object_get(v, "domid")), pvnet_domain_id(d2));
	assert_int_equal(json_integer_value(json_object_get(v, "devid")), 0);
	json_decref(v);
	v = vif_status(b);
	f = json_object_get(v, "features");
	assert_true(json_is_true(json_object_get(f, "sg")));
	assert_true(json_is_true(json_object_get(f, "rx_notify")));
	assert_true(json_is_false(json_object_get(f, "gso_tcpv4")));
	assert_true(json_is_true(json_object_get(f, "gso_tcpv6")));
	assert_true(json_is_false(json_object_get(f, "csum_ipv4")));
	assert_true(json_is_true(json_object_get(f, "csum_ipv6")));
	assert_true(json_is_false(json_object_get(f, "split_event_channels")));
	assert_true(json_is_true(json_object_get(f, "ctrl_ring")));
	assert_true(json_is_true(json_object_get(f, "mcast_filter")));
	assert_int_equal(json_integer_value(json_object_get(f, "rate_bytes")), 0);
	assert_int_equal(json_integer_value(json_object_get(v, "devid")), 1);
	json_decref(v);

	/* pvnet show, of each: its first lines as a user reads them. */
	assert_int_equal(run_pvnet(out_path, "show", a, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 64);
	assert_true(n > 4);
	snprintf(want, sizeof(want),
		 "%s: state Connected, 1 queue, tx map, carrier on, domain features", a);
	assert_string_equal(line[0], want);
	assert_string_equal(line[1], "  features: sg gso-tcpv4 csum-ipv4 split-event-channels "
				     "ctrl-ring, rate 12500 bytes per 40000 us");
	assert_string_equal(line[2], "  switch port:");
	assert_true(file_has(out_path, "\n  queue 0:\n     "));
	assert_false(file_has(out_path, "queue 1:"));
	assert_int_equal(run_pvnet(out_path, "show", b, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 64);
	assert_true(n > 4);
	assert_string_equal(line[1], "  features: sg gso-tcpv6 csum-ipv6 rx-notify ctrl-ring "
				     "multicast-filter (1 addresses)");

	pvnet_vif_destroy(va);
	pvnet_vif_destroy(vb);
	pvnet_domain_destroy(d2);
}

/* Status (the brief one) member @b of object @a. */
static long long status_get(const char *a, const char *b)
{
	json_t *st;
	long long v;
	int rc;

	st = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	v = json_integer_value(json_object_get(json_object_get(st, a), b));
	json_decref(st);
	return v;
}

/* rx_hold_bytes of domain @domid in the status reply @st; 0 if it is not there. */
static long long dom_hold(json_t *st, long long domid)
{
	json_t *d;
	size_t i;

	json_array_foreach(json_object_get(st, "domains"), i, d)
	{
		if (json_integer_value(json_object_get(d, "domid")) == domid)
			return json_integer_value(json_object_get(d, "rx_hold_bytes"));
	}
	return 0;
}

/*
 * `pvnet status`, line by line, against the status it was printed from:
 * every number from its own member (the grant counters differ from each
 * other after test_fdb's traffic), a named domain with its name and
 * store socket.  Before it, a guest killed while it held two event
 * channels and a grant: "destroyed" counts exactly that, each in its own
 * member, and the channels open came and went by two (not by one per
 * domain).  The grant counters agree with each other: every mapping made
 * is in use or was unmapped (none fails here), and no domain is a zombie.
 */
static void test_status_text(void **state)
{
	static char buf[1 << 16];
	char *line[64], want[PATH_MAX + 128];
	struct pvnet_domain *named;
	long long dom0, gr0, ev0, map0, open0, hold, hold0;
	json_t *st, *hv, *sw, *ds, *d, *before;
	int pipefd[2], rc, wst;
	unsigned int n, l;
	size_t i;
	pid_t pid;
	char c;

	(void)state;
	dom0 = status_get("destroyed", "domains");
	gr0 = status_get("destroyed", "grants_active");
	ev0 = status_get("destroyed", "evtchns_open");
	map0 = status_get("destroyed", "maps_in_use");
	open0 = status_get("hv", "evtchns_open");
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pvnet_domain *g;
		struct pvnet_evtchn ch[2];
		uint32_t ref;

		if (pvnet_domain_create(T.run_dir, 16, &g) || pvnet_evtchn_alloc(g, 0, &ch[0]) ||
		    pvnet_evtchn_alloc(g, 0, &ch[1]) || pvnet_grant_access(g, 0, 1, false, &ref) ||
		    write(pipefd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);
	assert_int_equal(status_get("hv", "evtchns_open"), open0 + 2);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &wst, 0), pid);
	for (int t = 0; t < 400 && status_get("destroyed", "domains") == dom0; t++)
		usleep(10000);
	assert_int_equal(status_get("destroyed", "domains"), dom0 + 1);
	assert_int_equal(status_get("destroyed", "grants_active"), gr0 + 1);
	assert_int_equal(status_get("destroyed", "evtchns_open"), ev0 + 2);
	assert_int_equal(status_get("destroyed", "maps_in_use"), map0);
	assert_int_equal(status_get("hv", "evtchns_open"), open0);

	assert_int_equal(pvnet_domain_create(T.run_dir, 16, &named), 0);
	assert_int_equal(pvnet_domain_set_name(named, "text"), 0);
	before = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	st = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);
	assert_int_equal(rc, 0);
	hv = json_object_get(st, "hv");
	sw = json_object_get(st, "switch");
	ds = json_object_get(st, "destroyed");
	assert_int_equal(json_integer_value(json_object_get(hv, "zombies")), 0);
	assert_int_equal(json_integer_value(json_object_get(hv, "maps_in_use")),
			 json_integer_value(json_object_get(hv, "grant_map_ops")) -
			     json_integer_value(json_object_get(hv, "grant_unmap_ops")));
	n = read_lines(out_path, buf, sizeof(buf), line, 64);
	l = 0;
	assert_true(n >= 9);
	snprintf(want, sizeof(want), "pvnetd %s at %s",
		 json_string_value(json_object_get(st, "version")), T.run_dir);
	assert_string_equal(line[l++], want);
	assert_string_equal(line[l++], "domains: 2");
	json_array_foreach(json_object_get(st, "domains"), i, d)
	{
		const char *name = json_string_value(json_object_get(d, "name"));

		snprintf(want, sizeof(want), "  domain %lld%s%s%s  store %s",
			 (long long)json_integer_value(json_object_get(d, "domid")),
			 name ? " (" : "", name ? name : "", name ? ")" : "",
			 json_string_value(json_object_get(d, "store")));
		assert_string_equal(line[l++], want);
		/*
		 * A guest's hold pools, only while it has some: the vifs of the
		 * group's domain take nothing, and frames flooded to them by the
		 * tests before are copied into pools (16 at most, the budget),
		 * which go when those frames expire, maybe between the text
		 * and a status: its figure is before's or after's.
		 */
		hold = json_integer_value(json_object_get(d, "rx_hold_bytes"));
		hold0 = dom_hold(before, json_integer_value(json_object_get(d, "domid")));
		if (!strncmp(line[l], "    rx hold pools: ", 19)) {
			long long kib = strtoll(line[l] + 19, NULL, 10);

			snprintf(want, sizeof(want), "    rx hold pools: %lld KiB", kib);
			assert_string_equal(line[l++], want);
			assert_true(kib > 0 && (kib == hold >> 10 || kib == hold0 >> 10));
		} else {
			assert_true(hold == 0 || hold0 == 0);
		}
	}
	json_decref(before);
	snprintf(want, sizeof(want), "  domain %u (text)  store %s", pvnet_domain_id(named),
		 pvnet_domain_store_path(named));
	assert_true(file_has(out_path, want));
	snprintf(want, sizeof(want),
		 "grants: %lld mapped now; %lld copy, %lld map, %lld unmap ops in %lld batches",
		 (long long)json_integer_value(json_object_get(hv, "maps_in_use")),
		 (long long)json_integer_value(json_object_get(hv, "grant_copy_ops")),
		 (long long)json_integer_value(json_object_get(hv, "grant_map_ops")),
		 (long long)json_integer_value(json_object_get(hv, "grant_unmap_ops")),
		 (long long)json_integer_value(json_object_get(hv, "grant_batches")));
	assert_string_equal(line[l++], want);
	snprintf(want, sizeof(want), "event channels open: %lld",
		 (long long)json_integer_value(json_object_get(hv, "evtchns_open")));
	assert_string_equal(line[l++], want);
	assert_string_equal(line[l++], "uplinks: 0");
	assert_string_equal(line[l++], "captures: 0");
	snprintf(want, sizeof(want),
		 "switch: %lld MACs learned, room for %lld, forgotten after %lld s unseen; "
		 "%lld aged out, %lld not learned (table full)",
		 (long long)json_integer_value(json_object_get(sw, "fdb_entries")),
		 (long long)json_integer_value(json_object_get(sw, "fdb_max")),
		 (long long)json_integer_value(json_object_get(sw, "ageing")),
		 (long long)json_integer_value(json_object_get(sw, "fdb_aged")),
		 (long long)json_integer_value(json_object_get(sw, "fdb_full")));
	assert_string_equal(line[l++], want);
	snprintf(want, sizeof(want),
		 "destroyed domains: %lld (left in use: %lld mappings, %lld grants, %lld event "
		 "channels)",
		 (long long)json_integer_value(json_object_get(ds, "domains")),
		 (long long)json_integer_value(json_object_get(ds, "maps_in_use")),
		 (long long)json_integer_value(json_object_get(ds, "grants_active")),
		 (long long)json_integer_value(json_object_get(ds, "evtchns_open")));
	assert_string_equal(line[l++], want);
	assert_int_equal(l, n);
	json_decref(st);
	pvnet_domain_destroy(named);
}

/* Status member @b of object @a of the pvnetd at @t (the brief status). */
static long long status_get_at(const struct itest *t, const char *a, const char *b)
{
	json_t *req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0), *st = NULL;
	int fd = itest_ctl_open(t);
	long long v;

	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &st, NULL, NULL), 0);
	json_decref(req);
	close(fd);
	v = json_integer_value(json_object_get(json_object_get(st, a), b));
	json_decref(st);
	return v;
}

/* Send one broadcast frame from each source MAC 02:00:00:@tag:<k / 256>:<k % 256>, k < @n. */
static void send_sources(struct pvnet_vif *vif, uint8_t tag, unsigned int n)
{
	static uint8_t f[64][60];
	struct pvnet_pkt p[64];

	for (unsigned int k0 = 0; k0 < n; k0 += 64) {
		unsigned int m = n - k0 < 64 ? n - k0 : 64, sent = 0;

		for (unsigned int j = 0; j < m; j++) {
			unsigned int k = k0 + j;

			memset(f[j], 0, sizeof(f[j]));
			memset(f[j], 0xff, 6);
			memcpy(f[j] + 6,
			       (uint8_t[6]){0x02, 0, 0, tag, (uint8_t)(k >> 8), (uint8_t)k}, 6);
			f[j][12] = 0x88;
			f[j][13] = 0xb5;
			p[j] = (struct pvnet_pkt){.data = f[j], .len = sizeof(f[j])};
		}
		for (int i = 0; sent < m && i < 4000; i++) {
			int r = pvnet_send(vif, 0, p + sent, m - sent);

			assert_true(r >= 0);
			sent += (unsigned int)r;
			if (sent < m)
				usleep(1000);
		}
		assert_int_equal(sent, m);
	}
}

/* The age of the one MAC of port @port at the pvnetd at @t. */
static void fdb_ages(const struct itest *t, const char *port, long long *age)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "fdb", "port", port), *reply = NULL;
	int fd = itest_ctl_open(t);

	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	close(fd);
	assert_int_equal(json_array_size(json_object_get(reply, "entries")), 1);
	*age = json_integer_value(
	    json_object_get(json_array_get(json_object_get(reply, "entries"), 0), "age"));
	json_decref(reply);
}

/*
 * `pvnet fdb` of a pvnetd of its own (T2: --mac-ageing 4, --vif-mac-limit
 * 1024, --rx-stall-timeout 500): 601 MACs, three parts of pvnetd's answer (256 each at most, as
 * the raw request shows), all printed; ports in version order (vifD.2
 * before vifD.10, which strcmp() would reverse); "1 MAC" in the singular;
 * the ageing time as set; a MAC's age counts the seconds since it was
 * seen, and the MACs are forgotten once unseen for 4 s, counted as aged
 * (status's switch line says how many).  Before any frame, the grant
 * counters are those of four rings mapped.  A vif that takes none of the
 * frames sent to it is stalled (carrier off) after the 500 ms given.
 * Without a vif, show says so.  A
 * pvnetd that does not answer (stopped): exit 1 after 5 s, saying so.
 */
static void test_fdb_parts(void **state)
{
	static char buf[1 << 16];
	char *line[700], p2[32], p10[32], want[PATH_MAX + 128];
	struct pvnet_vif_config cfg;
	struct pvnet_domain *d;
	struct pvnet_vif *v2, *v10;
	json_t *req, *reply = NULL;
	unsigned int n, l, cursor = 0;
	long long age0, age1;
	int fd, rc;

	(void)state;
	/* No vif yet: show says so, and a vif asked for by name is not there (exit 1). */
	pvnet_dir = T2.run_dir;
	assert_int_equal(run_pvnet(out_path, "show", NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 700);
	assert_int_equal(n, 1);
	assert_string_equal(line[0], "no vifs");
	assert_int_equal(run_pvnet(out_path, "show", "vif1.0", NULL), 1);
	assert_true(file_has(err_path, "pvnet show: no vif named vif1.0\n"));
	pvnet_dir = T.run_dir;

	assert_int_equal(pvnet_domain_create(T2.run_dir, 512, &d), 0);
	pvnet_vif_config_default(&cfg);
	cfg.tx_buffers = cfg.rx_buffers = 64;
	cfg.devid = 2;
	assert_int_equal(pvnet_vif_create(d, &cfg, &v2), 0);
	cfg.devid = 10;
	assert_int_equal(pvnet_vif_create(d, &cfg, &v10), 0);
	snprintf(p2, sizeof(p2), "vif%u.2", pvnet_domain_id(d));
	snprintf(p10, sizeof(p10), "vif%u.10", pvnet_domain_id(d));
	/*
	 * The grant counters of two connected vifs of one queue, before any
	 * frame: their four rings mapped, in one batch each, nothing copied
	 * or unmapped yet.
	 */
	assert_int_equal(status_get_at(&T2, "hv", "maps_in_use"), 4);
	assert_int_equal(status_get_at(&T2, "hv", "grant_map_ops"), 4);
	assert_int_equal(status_get_at(&T2, "hv", "grant_batches"), 2);
	assert_int_equal(status_get_at(&T2, "hv", "grant_copy_ops"), 0);
	assert_int_equal(status_get_at(&T2, "hv", "grant_unmap_ops"), 0);
	send_sources(v10, 10, 600);
	send_sources(v2, 2, 1);
	for (int i = 0; i < 300 && status_get_at(&T2, "switch", "fdb_entries") != 601; i++)
		usleep(10000);
	assert_int_equal(status_get_at(&T2, "switch", "fdb_entries"), 601);

	/* The raw parts: 256, 256, 89, the last with cursor 0. */
	fd = itest_ctl_open(&T2);
	for (unsigned int part = 0; part < 3; part++) {
		req = json_pack("{s:s, s:i}", "op", "fdb", "cursor", cursor);
		assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
		json_decref(req);
		assert_int_equal(json_array_size(json_object_get(reply, "entries")),
				 part < 2 ? 256 : 89);
		cursor = (unsigned int)json_integer_value(json_object_get(reply, "cursor"));
		assert_true(part < 2 ? cursor != 0 : cursor == 0);
		json_decref(reply);
		reply = NULL;
	}
	close(fd);

	/*
	 * The text, between two readings of the ages: each line in its columns
	 * (port 16 wide, MAC 17), with an age no less than the first reading's
	 * and no more than the second's.
	 */
	pvnet_dir = T2.run_dir;
	fdb_ages(&T2, p2, &age0);
	assert_int_equal(run_pvnet(out_path, "fdb", NULL), 0);
	fdb_ages(&T2, p2, &age1);
	n = read_lines(out_path, buf, sizeof(buf), line, 700);
	assert_int_equal(n, 601 + 2);
	for (l = 1; l <= 601; l++) {
		char mac[18], col[128];
		long age;

		if (sscanf(line[l] + 17, "%17s %ld", mac, &age) != 2)
			fail_msg("line %u: \"%s\"", l, line[l]);
		snprintf(col, sizeof(col), "%-16s %-17s %ld", l == 1 ? p2 : p10, mac, age);
		if (strcmp(line[l], col))
			fail_msg("line %u: \"%s\", not \"%s\"", l, line[l], col);
		if (l == 1 && (age < age0 || age > age1))
			fail_msg("%s's MAC of age %ld, read before as %lld and after as %lld", p2,
				 age, age0, age1);
	}
	assert_string_equal(line[n - 1],
			    "601 MACs learned, room for 262144; forgotten after 4 s unseen");
	assert_int_equal(run_pvnet(out_path, "fdb", p2, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 700);
	assert_int_equal(n, 3);
	snprintf(want, sizeof(want),
		 "1 MAC on %s; 601 MACs learned, room for 262144; forgotten after 4 s unseen", p2);
	assert_string_equal(line[2], want);
	assert_int_equal(status_get_at(&T2, "switch", "ageing"), 4);

	/* Ages count up, from what a frame last refreshed; then the MACs go. */
	fd = itest_ctl_open(&T2);
	for (int i = 0;; i++) {
		json_int_t age;

		req = json_pack("{s:s, s:s}", "op", "fdb", "port", p2);
		assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
		json_decref(req);
		assert_int_equal(json_array_size(json_object_get(reply, "entries")), 1);
		assert_int_equal(json_integer_value(json_object_get(reply, "ageing")), 4);
		age = json_integer_value(
		    json_object_get(json_array_get(json_object_get(reply, "entries"), 0), "age"));
		json_decref(reply);
		reply = NULL;
		if (age >= 1)
			break;
		if (i >= 250)
			fail_msg("%s's MAC is still of age %lld after 2.5 s", p2, (long long)age);
		usleep(10000);
	}
	close(fd);
	for (int i = 0; i < 800 && status_get_at(&T2, "switch", "fdb_entries"); i++)
		usleep(10000);
	assert_int_equal(status_get_at(&T2, "switch", "fdb_entries"), 0);
	assert_int_equal(status_get_at(&T2, "switch", "fdb_aged"), 601);
	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	assert_true(file_has(out_path,
			     "\nswitch: 0 MACs learned, room for 262144, forgotten after 4 "
			     "s unseen; 601 aged out, 0 not learned (table full)\n"));

	/*
	 * vif.2 took none of the 600 broadcasts from vif.10 (its 64 buffers
	 * filled, the rest waiting): stalled after --rx-stall-timeout's 500 ms,
	 * its carrier off.
	 */
	{
		json_t *st = NULL, *vj;
		const char *carrier = NULL;
		int fd2 = itest_ctl_open(&T2);

		for (int i = 0; i < 400; i++) {
			req = json_pack("{s:s, s:s}", "op", "status", "vif", p2);
			json_decref(st);
			st = NULL;
			assert_int_equal(ctlmsg_call(fd2, req, NULL, 0, &st, NULL, NULL), 0);
			json_decref(req);
			vj = json_array_get(json_object_get(st, "vifs"), 0);
			carrier = json_string_value(json_object_get(vj, "carrier"));
			if (carrier && !strcmp(carrier, "off"))
				break;
			usleep(10000);
		}
		assert_non_null(carrier);
		assert_string_equal(carrier, "off");
		json_decref(st);
		close(fd2);
	}

	/* Stopped: no answer within pvnet's 5 s. */
	assert_int_equal(kill(T2.pid, SIGSTOP), 0);
	rc = run_pvnet(out_path, "fdb", NULL);
	assert_int_equal(kill(T2.pid, SIGCONT), 0);
	assert_int_equal(rc, 1);
	snprintf(want, sizeof(want), "pvnet fdb: pvnetd at %s did not answer within 5 s\n",
		 T2.run_dir);
	assert_true(file_has(err_path, want));
	pvnet_dir = T.run_dir;

	pvnet_vif_destroy(v2);
	pvnet_vif_destroy(v10);
	pvnet_domain_destroy(d);
}

/*
 * A capture in status and in `pvnet status`: its port, direction and snap
 * length as asked, and its counters, each its own (three frames into the
 * switch from the port it captures "in", none dropped; none of the frames
 * flooded out of it, which "out" would be); capture-stop's reply the same.
 */
static void test_capture_status(void **state)
{
	int fd = itest_ctl_open(&T), rfds[CTLMSG_MAX_FDS], rc;
	json_t *req, *reply = NULL, *cap = NULL;
	char port[32], want[160];
	unsigned int nr = 0;

	(void)state;
	snprintf(port, sizeof(port), "vif%u.0", pvnet_domain_id(dom));
	req = json_pack("{s:s, s:s, s:s, s:i}", "op", "capture-start", "port", port, "direction",
			"in", "snaplen", 128);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, rfds, &nr), 0);
	json_decref(req);
	assert_int_equal(nr, 1);
	assert_string_equal(json_string_value(json_object_get(reply, "direction")), "in");
	assert_int_equal(json_integer_value(json_object_get(reply, "snaplen")), 128);
	json_decref(reply);
	fdb_send(0, 0, 3);
	for (int i = 0; i < 400; i++) {
		json_t *st = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);

		assert_int_equal(rc, 0);
		json_decref(cap);
		cap = json_incref(json_array_get(json_object_get(st, "captures"), 0));
		json_decref(st);
		assert_non_null(cap);
		if (json_integer_value(json_object_get(cap, "captured")) >= 3)
			break;
		usleep(10000);
	}
	assert_string_equal(json_string_value(json_object_get(cap, "port")), port);
	assert_string_equal(json_string_value(json_object_get(cap, "direction")), "in");
	assert_int_equal(json_integer_value(json_object_get(cap, "snaplen")), 128);
	assert_int_equal(json_integer_value(json_object_get(cap, "captured")), 3);
	assert_int_equal(json_integer_value(json_object_get(cap, "dropped")), 0);
	assert_true(json_is_true(json_object_get(cap, "running")));
	json_decref(cap);

	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	assert_true(file_has(out_path, "\nuplinks: 0\ncaptures: 1\n"));
	snprintf(want, sizeof(want), "\n  %s (in, snap length 128): 3 frames captured, 0 dropped\n",
		 port);
	assert_true(file_has(out_path, want));

	req = json_pack("{s:s, s:s}", "op", "capture-stop", "port", port);
	reply = NULL;
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	assert_string_equal(json_string_value(json_object_get(reply, "port")), port);
	assert_int_equal(json_integer_value(json_object_get(reply, "captured")), 3);
	assert_int_equal(json_integer_value(json_object_get(reply, "dropped")), 0);
	json_decref(reply);
	close(rfds[0]);
	close(fd);
}

/*
 * pvnetd refusing pvnet's connection (it keeps 256 open at most): status,
 * show and fdb exit 1 with pvnetd's own words, not just an errno's.
 */
static void test_refused_said(void **state)
{
	static const char *const cmds[] = {"status", "show", "fdb"};
	int conns[300];
	unsigned int n;
	char want[160];

	(void)state;
	for (n = 0; n < sizeof(conns) / sizeof(conns[0]); n++) {
		json_t *req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0), *reply = NULL;
		int rc;

		conns[n] = itest_ctl_open(&T);
		rc = ctlmsg_call(conns[n], req, NULL, 0, &reply, NULL, NULL);
		json_decref(req);
		json_decref(reply);
		if (rc < 0) {
			assert_int_equal(rc, -EMFILE);
			close(conns[n]);
			break;
		}
	}
	assert_true(n < sizeof(conns) / sizeof(conns[0]));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int rc = run_pvnet(out_path, cmds[i], NULL);

		snprintf(want, sizeof(want),
			 "pvnet %s: pvnetd has 256 control connections open, its most\n", cmds[i]);
		if (rc != 1 || !file_has(err_path, want))
			fail_msg(
			    "pvnet %s with pvnetd's connections full: exit %d, not saying \"%s\"",
			    cmds[i], rc, want);
	}
	while (n)
		close(conns[--n]);
	/* pvnetd sees the hang-ups in its own time: the tests after this one need room. */
	for (int tries = 0; tries < 200; tries++) {
		json_t *req = json_pack("{s:s, s:b}", "op", "status", "vifs", 0), *reply = NULL;
		int c = itest_ctl_open(&T), rc = ctlmsg_call(c, req, NULL, 0, &reply, NULL, NULL);

		json_decref(req);
		json_decref(reply);
		close(c);
		if (rc == 0)
			break;
		usleep(10000);
	}
}

/*
 * A vif no frontend connected (a domain made and its vif created over the
 * control socket, nothing more): show gives its state and "0 queues", and
 * nothing it does not have (features, switch port, queues).  --json given
 * twice is still JSON.
 */
static void test_show_unconnected(void **state)
{
	static char buf[1 << 16];
	int fd = itest_ctl_open(&T), mfd, rfds[CTLMSG_MAX_FDS], rc;
	char name[32], want[128], *line[8];
	json_t *req, *reply = NULL, *doc, *v;
	json_error_t jerr;
	unsigned int nr = 0, n;

	(void)state;
	mfd = memfd_create("unconnected", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4 * 4096), 0);
	assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	req = json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4);
	assert_int_equal(ctlmsg_call(fd, req, &mfd, 1, &reply, rfds, &nr), 0);
	json_decref(req);
	json_decref(reply);
	close(mfd);
	while (nr)
		close(rfds[--nr]);
	reply = NULL;
	req = json_pack("{s:s, s:i}", "op", "vif-create", "devid", 0);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(reply, "name")));
	json_decref(reply);

	reply = ask(json_pack("{s:s, s:s}", "op", "status", "vif", name), &rc);
	assert_int_equal(rc, 0);
	v = json_array_get(json_object_get(reply, "vifs"), 0);
	assert_non_null(v);
	snprintf(want, sizeof(want), "%s: state %s, 0 queues", name,
		 json_string_value(json_object_get(v, "state")));
	json_decref(reply);
	assert_int_equal(run_pvnet(out_path, "show", name, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 8);
	assert_int_equal(n, 1);
	assert_string_equal(line[0], want);

	assert_int_equal(run_pvnet(out_path, "show", "--json", "--json", name, NULL), 0);
	doc = json_load_file(out_path, 0, &jerr);
	assert_non_null(doc);
	assert_int_equal(json_array_size(doc), 1);
	json_decref(doc);
	close(fd);
}

/*
 * A vif netback disabled says why, in status ("error"), in `pvnet show`
 * (", disabled: ..." on its first line) and in the backend's "error" key,
 * which the guest may read: the guest here, written by hand through its
 * own store socket, says Connected without request-rx-copy, which netback
 * refuses as Linux's does.  An uplink's in and out counters aside, the one
 * thing status says that no other test made pvnetd say.  When the guest
 * begins a new connection, the reason goes from all three.
 */
static void test_disabled_vif_said(void **state)
{
	static const char why[] = "frontend does not support request-rx-copy";
	static char buf[1 << 16];
	int fd = itest_ctl_open(&T), mfd, rfds[CTLMSG_MAX_FDS], rc;
	char name[32], want[192], path[160], fe[128], be[128], *line[8], *val;
	json_t *req, *reply = NULL, *v, *doc;
	const char *error = NULL;
	struct xs_handle *guest;
	json_error_t jerr;
	unsigned int nr = 0, n;

	(void)state;
	mfd = memfd_create("disabled", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(mfd >= 0);
	assert_int_equal(ftruncate(mfd, 4 * 4096), 0);
	assert_int_equal(fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	req = json_pack("{s:s, s:i}", "op", "domain-create", "pages", 4);
	assert_int_equal(ctlmsg_call(fd, req, &mfd, 1, &reply, rfds, &nr), 0);
	json_decref(req);
	close(mfd);
	while (nr)
		close(rfds[--nr]);
	setenv("XENSTORED_PATH", json_string_value(json_object_get(reply, "store")), 1);
	json_decref(reply);
	guest = xs_open(XS_OPEN_SOCKETONLY);
	assert_non_null(guest);
	req = json_pack("{s:s, s:i}", "op", "vif-create", "devid", 0);
	assert_int_equal(ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL), 0);
	json_decref(req);
	snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(reply, "name")));
	snprintf(fe, sizeof(fe), "%s", json_string_value(json_object_get(reply, "frontend")));
	snprintf(be, sizeof(be), "%s", json_string_value(json_object_get(reply, "backend")));
	json_decref(reply);

	snprintf(path, sizeof(path), "%s/request-rx-copy", fe);
	assert_true(xs_write(guest, XBT_NULL, path, "0", 1));
	snprintf(path, sizeof(path), "%s/state", fe);
	assert_true(xs_write(guest, XBT_NULL, path, "4", 1));
	for (int i = 0; i < 500 && !error; i++) {
		reply = ask(json_pack("{s:s, s:s}", "op", "status", "vif", name), &rc);
		assert_int_equal(rc, 0);
		v = json_array_get(json_object_get(reply, "vifs"), 0);
		assert_non_null(v);
		error = json_string_value(json_object_get(v, "error"));
		if (error) {
			assert_string_equal(error, why);
			snprintf(want, sizeof(want), "%s: state %s, 0 queues, disabled: %s", name,
				 json_string_value(json_object_get(v, "state")), why);
		}
		json_decref(reply);
		if (!error)
			usleep(10000);
	}
	assert_non_null(error);
	assert_int_equal(run_pvnet(out_path, "show", name, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 8);
	assert_true(n >= 1);
	assert_string_equal(line[0], want);
	assert_int_equal(run_pvnet(out_path, "show", "--json", name, NULL), 0);
	doc = json_load_file(out_path, 0, &jerr);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 0), "error")),
			    why);
	json_decref(doc);
	/* The guest may read the reason in the backend's directory (pvnet_vif_backend_error()). */
	snprintf(path, sizeof(path), "%s/error", be);
	val = xs_read(guest, XBT_NULL, path, &n);
	assert_non_null(val);
	assert_string_equal(val, why);
	free(val);

	/*
	 * The guest closes and begins again: the reason was the last
	 * connection's, and goes, from status, `pvnet show` and the store.
	 */
	snprintf(path, sizeof(path), "%s/state", fe);
	assert_true(xs_write(guest, XBT_NULL, path, "6", 1));
	assert_true(xs_write(guest, XBT_NULL, path, "1", 1));
	for (int i = 0; i < 500 && error; i++) {
		reply = ask(json_pack("{s:s, s:s}", "op", "status", "vif", name), &rc);
		assert_int_equal(rc, 0);
		v = json_array_get(json_object_get(reply, "vifs"), 0);
		assert_non_null(v);
		if (!json_object_get(v, "error")) {
			assert_string_equal(json_string_value(json_object_get(v, "state")),
					    "InitWait");
			error = NULL;
		}
		json_decref(reply);
		if (error)
			usleep(10000);
	}
	assert_null(error);
	assert_int_equal(run_pvnet(out_path, "show", name, NULL), 0);
	n = read_lines(out_path, buf, sizeof(buf), line, 8);
	assert_true(n >= 1);
	assert_null(strstr(line[0], "disabled"));
	snprintf(path, sizeof(path), "%s/error", be);
	assert_null(xs_read(guest, XBT_NULL, path, &n));
	xs_close(guest);
	close(fd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_json_many_vifs),
	    cmocka_unit_test(test_text_many_vifs),
	    cmocka_unit_test(test_stdout_full),
	    cmocka_unit_test(test_run_dir_after_command),
	    cmocka_unit_test(test_fdb),
	    cmocka_unit_test(test_show_features),
	    cmocka_unit_test(test_status_text),
	    cmocka_unit_test(test_capture_status),
	    cmocka_unit_test(test_refused_said),
	    cmocka_unit_test(test_show_unconnected),
	    cmocka_unit_test(test_fdb_parts),
	    cmocka_unit_test(test_disabled_vif_said),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s PVNETD PVNET\n", argv[0]);
		return 2;
	}
	pvnetd_path = argv[1];
	pvnet_path = argv[2];
	signal(SIGPIPE, SIG_IGN);
	return group_run_tests(tests, group_setup, group_teardown);
}
