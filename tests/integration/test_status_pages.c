// SPDX-License-Identifier: MIT
/* test_status_pages.c - a status too large for one message, read a page at a time */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
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

#include <pvnet/pvnet.h>

#include "common/ctlmsg.h"
#include "../common/group_run.h"
#include "itest.h"

/*
 * pvnetd at its largest: 63 guests (every domain slot but dom0's), each of
 * 16 vifs, named with 128 characters.  Guest 0 is a frontend of libpvnet
 * whose vifs connect (a capture needs a switch port, which a vif has while
 * connected); the others' vifs are created and never connected (the list
 * is what is paged, not the counters).  A tool connection captures 8 of
 * guest 0's ports.  The brief list alone is then more than one control
 * message (test_list_too_big_at_once), by some 2 KB: a VXLAN uplink on
 * loopback and a run directory near the longest add to every page.
 */
#define NGUESTS	   63
#define NVIFS	   16
#define DEVID0	   65520 /* the longest names: vifD.655NN */
#define NCAPS	   8
#define PAGE_SLACK 8 /* bytes a page may end early (test_pages_cover_all) */

static const char *pvnetd_path, *pvnet_path;
static struct itest T;
static struct pvnet_domain *dom0;
static struct pvnet_vif *vifs0[NVIFS];
static int guest_fd[NGUESTS], cap_fd, cap_rfd[NCAPS];
static unsigned int domid[NGUESTS];
static char out_path[PATH_MAX], err_path[PATH_MAX];

/* @req (consumed) on @fd: the reply, the caller's; ctlmsg_call()'s result in *@rc. */
static json_t *call(int fd, json_t *req, int *rc, int *rfds, unsigned int *nr, int *fds,
		    unsigned int nfds)
{
	json_t *reply = NULL;

	*rc = ctlmsg_call(fd, req, fds, nfds, &reply, rfds, nr);
	json_decref(req);
	return reply;
}

/* The request @req on a fresh connection: its reply, ctlmsg_call()'s result in *@rc. */
static json_t *ask(json_t *req, int *rc)
{
	int fd = itest_ctl_open(&T);
	json_t *reply = call(fd, req, rc, NULL, NULL, NULL, 0);

	close(fd);
	return reply;
}

/* The 128-character name of guest @g. */
static void guest_name(char name[129], unsigned int g)
{
	memset(name, 'n', 128);
	name[128] = '\0';
	memcpy(name, "guest-", 6);
	name[6] = (char)('0' + g / 10);
	name[7] = (char)('0' + g % 10);
}

/* Guest @g (1..): a domain of one page, its name, its 16 vifs, none connected. */
static int guest_make(unsigned int g)
{
	int mfd, rfds[CTLMSG_MAX_FDS], rc;
	unsigned int nr = 0;
	char name[129];
	json_t *reply;

	guest_fd[g] = itest_ctl_open(&T);
	mfd = memfd_create("guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || ftruncate(mfd, 4096) < 0 ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -1;
	reply = call(guest_fd[g], json_pack("{s:s, s:i}", "op", "domain-create", "pages", 1), &rc,
		     rfds, &nr, &mfd, 1);
	close(mfd);
	while (nr)
		close(rfds[--nr]);
	if (rc < 0)
		return -1;
	domid[g] = (unsigned int)json_integer_value(json_object_get(reply, "domid"));
	json_decref(reply);
	guest_name(name, g);
	json_decref(call(guest_fd[g], json_pack("{s:s, s:s}", "op", "domain-name", "name", name),
			 &rc, NULL, NULL, NULL, 0));
	for (unsigned int v = 0; v < NVIFS && rc == 0; v++)
		json_decref(call(guest_fd[g],
				 json_pack("{s:s, s:i}", "op", "vif-create", "devid", DEVID0 + v),
				 &rc, NULL, NULL, NULL, 0));
	return rc;
}

/* Guest 0: a frontend whose 16 vifs of one queue connect. */
static int guest0_make(void)
{
	struct pvnet_vif_config cfg;
	char name[129];

	/* A queue needs 2 ring pages, 18 TX and 19 RX buffers: 39 pages. */
	if (pvnet_domain_create(T.run_dir, 1024, &dom0) < 0)
		return -1;
	domid[0] = pvnet_domain_id(dom0);
	guest_name(name, 0);
	if (pvnet_domain_set_name(dom0, name) < 0)
		return -1;
	for (unsigned int v = 0; v < NVIFS; v++) {
		pvnet_vif_config_default(&cfg);
		cfg.devid = DEVID0 + v;
		cfg.tx_buffers = PVNET_MAX_FRAGS;
		cfg.rx_buffers = PVNET_MAX_FRAGS + 1;
		if (pvnet_vif_create(dom0, &cfg, &vifs0[v]) < 0)
			return -1;
	}
	return 0;
}

/* Guest @g's vif @v. */
static void port_name(char *buf, size_t len, unsigned int g, unsigned int v)
{
	snprintf(buf, len, "vif%u.%u", domid[g], DEVID0 + v);
}

static int group_setup(void **state)
{
	int rc = 0;

	(void)state;
	/* A run directory of 78 bytes, near the longest pvnetd takes: long store paths. */
	if (itest_start(&T, pvnetd_path, "pages-in-a-run-directory-as-long-as-its-sockets-allow-x",
			"--uplink", "vxlan:id=42,remote=127.0.0.2,local=127.0.0.1,dstport=47981",
			NULL) < 0)
		return -1;
	if (strlen(T.run_dir) != 78)
		return -1;
	snprintf(out_path, sizeof(out_path), "%s.out", T.run_dir);
	snprintf(err_path, sizeof(err_path), "%s.err", T.run_dir);
	if (guest0_make() < 0) {
		fprintf(stderr, "guest 0 could not be made\n");
		return -1;
	}
	for (unsigned int g = 1; g < NGUESTS; g++)
		if (guest_make(g) < 0) {
			fprintf(stderr, "guest %u could not be made\n", g);
			return -1;
		}
	cap_fd = itest_ctl_open(&T);
	for (unsigned int v = 0; v < NCAPS; v++) {
		unsigned int nr = 0;
		char port[32];

		port_name(port, sizeof(port), 0, v);
		json_decref(call(cap_fd,
				 json_pack("{s:s, s:s}", "op", "capture-start", "port", port), &rc,
				 &cap_rfd[v], &nr, NULL, 0));
		if (rc < 0 || nr != 1) {
			fprintf(stderr, "%s could not be captured (%s)\n", port, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	for (unsigned int v = 0; v < NCAPS; v++)
		close(cap_rfd[v]);
	close(cap_fd);
	for (unsigned int g = 1; g < NGUESTS; g++)
		close(guest_fd[g]);
	for (unsigned int v = 0; v < NVIFS; v++)
		pvnet_vif_destroy(vifs0[v]);
	pvnet_domain_destroy(dom0);
	unlink(out_path);
	unlink(err_path);
	return itest_stop(&T);
}

/* The list in one reply does not fit: pvnetd says E2BIG (what the pages are for). */
static void test_list_too_big_at_once(void **state)
{
	int rc;
	json_t *reply = ask(json_pack("{s:s, s:b}", "op", "status", "vifs", 0), &rc);

	(void)state;
	assert_int_equal(rc, -E2BIG);
	assert_non_null(strstr(json_string_value(json_object_get(reply, "error")), "\"cursor\""));
	json_decref(reply);
}

/* Compact JSON length of @j, as a control message carries it. */
static size_t text_len(const json_t *j)
{
	return json_dumpb(j, NULL, 0, JSON_COMPACT);
}

/*
 * Page by page on one connection: every vif once, then every capture once,
 * each page as full as a message allows (the next page's first item would
 * not have fitted), every page with all the domains and the cursor growing
 * until it comes back 0; @brief: the vifs without their counters.
 */
static void pages_cover_all(bool brief)
{
	int fd = itest_ctl_open(&T), rc;
	static unsigned char seen[NGUESTS][NVIFS], caught[NCAPS];
	json_int_t cursor = 0;
	json_t *prev = NULL, *page, *v;
	unsigned int pages = 0, nvifs = 0, ncaps = 0;
	size_t i;

	memset(seen, 0, sizeof(seen));
	memset(caught, 0, sizeof(caught));
	do {
		/* The page asked for starts after every item read so far. */
		assert_int_equal(cursor, nvifs + ncaps);
		page = call(
		    fd,
		    json_pack("{s:s, s:b, s:I}", "op", "status", "vifs", !brief, "cursor", cursor),
		    &rc, NULL, NULL, NULL, 0);
		assert_int_equal(rc, 0);
		pages++;
		assert_true(text_len(page) <= CTLMSG_MAX);
		assert_int_equal(json_array_size(json_object_get(page, "domains")), NGUESTS);
		if (prev) {
			/*
			 * The last page was full: this one's first item would not have
			 * fitted.  pvnetd sizes a page as if its cursor had as many
			 * digits as the count of items, and each item with a comma:
			 * a page may end those few bytes early (PAGE_SLACK).
			 */
			json_t *first = json_array_size(json_object_get(page, "vifs"))
					    ? json_array_get(json_object_get(page, "vifs"), 0)
					    : json_array_get(json_object_get(page, "captures"), 0);

			assert_non_null(first);
			assert_true(text_len(prev) + text_len(first) + 1 + PAGE_SLACK > CTLMSG_MAX);
			json_decref(prev);
		}
		json_array_foreach(json_object_get(page, "vifs"), i, v)
		{
			unsigned int d =
			    (unsigned int)json_integer_value(json_object_get(v, "domid"));
			unsigned int dev =
			    (unsigned int)json_integer_value(json_object_get(v, "devid"));
			unsigned int g = 0;
			char want[32];

			while (g < NGUESTS && domid[g] != d)
				g++;
			assert_true(g < NGUESTS);
			assert_true(dev >= DEVID0 && dev < DEVID0 + NVIFS);
			snprintf(want, sizeof(want), "vif%u.%u", d, dev);
			assert_string_equal(json_string_value(json_object_get(v, "name")), want);
			/* Only the full entry has the vif's state. */
			assert_int_equal(json_object_get(v, "state") != NULL, !brief);
			/* Vifs all come before captures. */
			assert_int_equal(ncaps, 0);
			assert_int_equal(seen[g][dev - DEVID0]++, 0);
			nvifs++;
		}
		json_array_foreach(json_object_get(page, "captures"), i, v)
		{
			const char *port = json_string_value(json_object_get(v, "port"));
			unsigned int c = 0;
			char want[32];

			assert_int_equal(nvifs, NGUESTS * NVIFS);
			for (; c < NCAPS; c++) {
				port_name(want, sizeof(want), 0, c);
				if (port && !strcmp(port, want))
					break;
			}
			assert_true(c < NCAPS);
			assert_int_equal(caught[c]++, 0);
			ncaps++;
		}
		assert_true(json_is_integer(json_object_get(page, "cursor")));
		cursor = json_integer_value(json_object_get(page, "cursor"));
		/* The next page starts after every item read so far, or there is none. */
		if (cursor)
			assert_int_equal(cursor, nvifs + ncaps);
		prev = page;
		assert_true(pages < 50);
	} while (cursor);
	json_decref(prev);
	close(fd);
	assert_true(pages >= 2);
	assert_int_equal(nvifs, NGUESTS * NVIFS);
	assert_int_equal(ncaps, NCAPS);
}

static void test_pages_cover_all(void **state)
{
	(void)state;
	pages_cover_all(true);
}

/* The same with every vif's state and counters: more pages, each as full. */
static void test_pages_cover_all_counters(void **state)
{
	(void)state;
	pages_cover_all(false);
}

/*
 * A cursor past the end (vifs went away since the last page) gives an
 * empty page and 0; a cursor that is not a count, or one with "vif", is
 * refused; one vif's status carries the captures of its port only.
 */
static void test_cursor_checked(void **state)
{
	static const char *const bad[] = {"{\"op\":\"status\",\"vifs\":false,\"cursor\":-1}",
					  "{\"op\":\"status\",\"vifs\":false,\"cursor\":\"1\"}",
					  "{\"op\":\"status\",\"cursor\":4294967296}",
					  "{\"op\":\"status\",\"vif\":\"vif1.0\",\"cursor\":0}"};
	char port[32];
	json_t *r;
	int rc;

	(void)state;
	r = ask(json_pack("{s:s, s:b, s:I}", "op", "status", "vifs", 0, "cursor",
			  (json_int_t)4000000000LL),
		&rc);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(json_object_get(r, "vifs")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "captures")), 0);
	assert_int_equal(json_array_size(json_object_get(r, "domains")), NGUESTS);
	assert_int_equal(json_integer_value(json_object_get(r, "cursor")), 0);
	json_decref(r);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = ask(json_loads(bad[i], 0, NULL), &rc);
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(json_string_value(json_object_get(r, "error")), "cursor"));
		json_decref(r);
	}

	/* Guest 0's vif 5 is captured, its vif 9 (connected too) is not. */
	for (unsigned int v = 5; v <= 9; v += 4) {
		port_name(port, sizeof(port), 0, v);
		r = ask(json_pack("{s:s, s:s}", "op", "status", "vif", port), &rc);
		assert_int_equal(rc, 0);
		assert_int_equal(json_array_size(json_object_get(r, "vifs")), 1);
		assert_null(json_object_get(r, "cursor"));
		if (v == 9) {
			assert_int_equal(json_array_size(json_object_get(r, "captures")), 0);
		} else {
			json_t *cap = json_array_get(json_object_get(r, "captures"), 0);

			assert_int_equal(json_array_size(json_object_get(r, "captures")), 1);
			assert_string_equal(json_string_value(json_object_get(cap, "port")), port);
		}
		json_decref(r);
	}
}

/* Run `pvnet -d RUN_DIR ARGS...` (NULL-terminated), stdout into @out: its exit status. */
static int run_pvnet(const char *out, ...)
{
	va_list ap;
	int rc;

	va_start(ap, out);
	rc = itest_run_pvnetv(pvnet_path, T.run_dir, out, err_path, ap);
	va_end(ap);
	return rc;
}

/*
 * `pvnet status --json` reads the pages and then each vif: one document
 * with every vif (with its state: the full entry) and every capture, and
 * no cursor; `pvnet status` counts the captures of all pages.
 */
static void test_pvnet_status_reads_pages(void **state)
{
	json_t *doc, *v;
	FILE *f;
	size_t i;

	(void)state;
	assert_int_equal(run_pvnet(out_path, "status", "--json", NULL), 0);
	doc = json_load_file(out_path, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "vifs")), NGUESTS * NVIFS);
	json_array_foreach(json_object_get(doc, "vifs"), i, v)
	{
		bool guest0 = json_integer_value(json_object_get(v, "domid")) == domid[0];

		assert_string_equal(json_string_value(json_object_get(v, "state")),
				    guest0 ? "Connected" : "InitWait");
		assert_int_equal(json_array_size(json_object_get(v, "queues")), guest0 ? 1 : 0);
	}
	assert_int_equal(json_array_size(json_object_get(doc, "captures")), NCAPS);
	assert_int_equal(json_array_size(json_object_get(doc, "domains")), NGUESTS);
	assert_null(json_object_get(doc, "cursor"));
	json_decref(doc);

	assert_int_equal(run_pvnet(out_path, "status", NULL), 0);
	f = fopen(out_path, "r");
	assert_non_null(f);
	{
		char line[512];
		bool said = false;
		unsigned int listed = 0;

		while (fgets(line, sizeof(line), f)) {
			said |= !strcmp(line, "captures: 8\n");
			listed += !strncmp(line, "  vif", 5) && strstr(line, "frames captured");
		}
		assert_true(said);
		assert_int_equal(listed, NCAPS);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_list_too_big_at_once),     cmocka_unit_test(test_pages_cover_all),
	    cmocka_unit_test(test_pages_cover_all_counters), cmocka_unit_test(test_cursor_checked),
	    cmocka_unit_test(test_pvnet_status_reads_pages),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s PVNETD PVNET\n", argv[0]);
		return 2;
	}
	pvnetd_path = argv[1];
	pvnet_path = argv[2];
	return group_run_tests(tests, group_setup, group_teardown);
}
