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
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <pvnet/pvnet.h>

#include "common/ctlmsg.h"
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
static struct pvnet_domain *dom;
static struct pvnet_vif *vifs[NVIFS];
static char out_path[PATH_MAX], err_path[PATH_MAX];

static int group_setup(void **state)
{
	struct pvnet_vif_config cfg;

	(void)state;
	/* Each vif may learn 32 MACs (test_fdb fills 30 and tries 5 more on one). */
	if (itest_start(&T, pvnetd_path, "status", "--vif-mac-limit", "32", NULL) < 0)
		return -1;
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
	(void)state;
	for (unsigned int d = 0; d < NVIFS; d++)
		pvnet_vif_destroy(vifs[d]);
	pvnet_domain_destroy(dom);
	unlink(out_path);
	unlink(err_path);
	return itest_stop(&T);
}

/*
 * Run `pvnet -d RUN_DIR ARGS...` (NULL-terminated) with stdout into @out
 * (a file it creates, or /dev/full) and stderr into err_path; its exit
 * status, or -1 if it did not exit.
 */
static int run_pvnet(const char *out, ...)
{
	const char *argv[8] = {"pvnet", "-d", T.run_dir};
	unsigned int argc = 3;
	const char *a;
	va_list ap;
	pid_t pid;
	int st;

	va_start(ap, out);
	while ((a = va_arg(ap, const char *)) && argc < 7)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		execv(pvnet_path, (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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
	    {"status", NULL},  {"status", "--json"}, {"show", NULL}, {"show", "--json"},
	    {"version", NULL}, {"help", NULL},	     {"fdb", NULL},  {"fdb", "--json"},
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_json_many_vifs),
	    cmocka_unit_test(test_text_many_vifs),
	    cmocka_unit_test(test_stdout_full),
	    cmocka_unit_test(test_run_dir_after_command),
	    cmocka_unit_test(test_fdb),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s PVNETD PVNET\n", argv[0]);
		return 2;
	}
	pvnetd_path = argv[1];
	pvnet_path = argv[2];
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
