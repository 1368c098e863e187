// SPDX-License-Identifier: MIT
/* main.c - pvnet: the command line of pvnet (status, show, fdb, attach, capture, bench) */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/ctlmsg.h"
#include "bench.h"
#include "attach.h"
#include "capture.h"

static const char *run_dir = "/run/pvnet";

/* How long pvnetd may take to answer a command (it answers in milliseconds). */
#define PVNET_CLI_TIMEOUT_MS 5000

static void usage(FILE *f)
{
	fprintf(f, "Usage: pvnet [-d DIR] COMMAND [ARGS]\n"
		   "\n"
		   "Commands:\n"
		   "  status [--json]   domains, grant and event-channel use, uplinks and their\n"
		   "                    counters, captures running, of a running pvnetd\n"
		   "  show [--json] [VIF]\n"
		   "                    vifs: xenbus state, why a vif was disabled, per-queue\n"
		   "                    counters (ethtool -S style); VIF is e.g. vif1.0\n"
		   "  fdb [--json] [PORT]\n"
		   "                    the switch's MAC table: each learned MAC, its port, and\n"
		   "                    the seconds since it was last seen; PORT: only its own\n"
		   "  bench [OPTIONS]   the main benchmark: the field reports' experiments\n"
		   "                    through pvnetd, with verdicts (pvnet bench --help)\n"
		   "  attach --netns NS --ifname NAME [--mac MAC] [--queues N] [--mtu MTU]\n"
		   "         [--no-offload]\n"
		   "                    a TAP in namespace NS as a frontend domain (docs/tap.md)\n"
		   "  capture PORT [-w FILE] [-c COUNT] [-s SNAPLEN] [-Q in|out|inout] [-t SECS]\n"
		   "                    a switch port's frames into a pcap file (stdout: pipe it\n"
		   "                    into tcpdump -r -; docs/capture.md)\n"
		   "  version           print the version\n"
		   "  help [COMMAND]    this text, or that command's --help\n"
		   "\n"
		   "Options:\n"
		   "  -d, --run-dir DIR  pvnetd's run directory (default /run/pvnet)\n"
		   "  -h, --help         this text; COMMAND --help: that command's\n"
		   "  -V, --version      print the version\n"
		   "\n"
		   "Exit status of status, show, fdb, version and help: 0 done, 1 pvnetd could\n"
		   "not be reached or answered an error, 2 usage (the other commands say\n"
		   "theirs in their --help).\n");
}

/* COMMAND --help, for the commands without options of their own. */
static bool wants_help(int argc, char **argv)
{
	for (int a = 1; a < argc; a++)
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h"))
			return true;
	return false;
}

/* String member @key of @o, or "?" when pvnetd's reply lacks it (never NULL into printf). */
static const char *str_of(const json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "?";
}

static int ctl_open(void)
{
	int fd = ctlmsg_connect(run_dir);

	if (fd == -ENAMETOOLONG)
		fprintf(stderr, "pvnet: run directory path too long\n");
	else if (fd < 0)
		fprintf(stderr, "pvnet: cannot reach pvnetd at %s/%s: %s%s\n", run_dir,
			CTLMSG_SOCK_NAME, strerror(-fd),
			fd == -EACCES
			    ? " (the socket is pvnetd's user's: run as that user, or root)"
			: fd == -ENOENT || fd == -ECONNREFUSED ? " (is pvnetd running?)"
							       : "");
	if (fd >= 0 && ctlmsg_set_timeout(fd, PVNET_CLI_TIMEOUT_MS) < 0) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
}

/*
 * pvnetd's status on @fd: @vif only, or, for "", the page at @cursor of the
 * list of vifs without their counters.  Prints the error and returns NULL
 * when it cannot.
 */
static json_t *status_call(int fd, const char *cmd, const char *vif, json_int_t cursor)
{
	json_t *req, *reply = NULL;
	int rc;

	if (!*vif)
		req = json_pack("{s:s, s:b, s:I}", "op", "status", "vifs", 0, "cursor", cursor);
	else
		req = json_pack("{s:s, s:s}", "op", "status", "vif", vif);
	rc = req ? ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL) : -EINVAL;
	json_decref(req);
	if (rc == -ETIMEDOUT) {
		fprintf(stderr, "pvnet %s: pvnetd at %s did not answer within %d s\n", cmd, run_dir,
			PVNET_CLI_TIMEOUT_MS / 1000);
		return NULL;
	}
	if (rc < 0) {
		fprintf(stderr, "pvnet %s: %s\n", cmd,
			reply ? str_of(reply, "error") : strerror(-rc));
		json_decref(reply);
		return NULL;
	}
	return reply;
}

/*
 * The list of vifs without their counters, and every capture, on @fd: one
 * page, or (63 guests of 16 vifs) several, asked for until pvnetd's cursor
 * comes back 0 and merged into the first; the cursor is taken out, so the
 * document is the one a single request would have given.  A vif that comes
 * or goes meanwhile may be missed or listed twice, as `pvnet fdb` says.
 */
static json_t *status_list(int fd, const char *cmd)
{
	json_t *reply = status_call(fd, cmd, "", 0), *next;
	json_int_t cursor, last = 0;

	while (reply && (cursor = json_integer_value(json_object_get(reply, "cursor")))) {
		/* Each page starts further on (each holds at least one item). */
		if (cursor <= last) {
			fprintf(stderr, "pvnet %s: pvnetd's answers do not come to an end\n", cmd);
			json_decref(reply);
			return NULL;
		}
		last = cursor;
		next = status_call(fd, cmd, "", cursor);
		if (!next) {
			json_decref(reply);
			return NULL;
		}
		json_array_extend(json_object_get(reply, "vifs"), json_object_get(next, "vifs"));
		json_array_extend(json_object_get(reply, "captures"),
				  json_object_get(next, "captures"));
		json_object_set(reply, "cursor", json_object_get(next, "cursor"));
		json_decref(next);
	}
	if (reply)
		json_object_del(reply, "cursor");
	return reply;
}

/*
 * pvnetd's status; @vif: only that vif, "" for the list of vifs without
 * their counters, NULL for every vif with its counters.  Prints the error
 * and returns NULL when it cannot.
 *
 * Every vif's counters may not fit one control message (64 KiB, some 8
 * vifs of 8 queues; pvnetd answers E2BIG), so for NULL the list comes
 * first and then each vif, on the same connection, merged into the
 * document one request would give: the same keys in the same places.  A
 * vif gone meanwhile is left out.
 */
static json_t *fetch_status(const char *cmd, const char *vif)
{
	json_t *reply, *all, *one, *v;
	size_t i;
	int fd;

	fd = ctl_open();
	if (fd < 0)
		return NULL;
	reply = vif && *vif ? status_call(fd, cmd, vif, 0) : status_list(fd, cmd);
	if (!reply || vif)
		goto out;
	all = json_array();
	json_array_foreach(json_object_get(reply, "vifs"), i, v)
	{
		const char *name = json_string_value(json_object_get(v, "name"));

		if (!name || !*name)
			continue; /* "" would ask for the list again */
		one = status_call(fd, cmd, name, 0);
		if (!one) {
			json_decref(all);
			json_decref(reply);
			reply = NULL;
			goto out;
		}
		if (json_is_array(json_object_get(one, "vifs")))
			json_array_extend(all, json_object_get(one, "vifs"));
		json_decref(one);
	}
	json_object_set_new(reply, "vifs", all); /* in place: the key keeps its place */
out:
	close(fd);
	return reply;
}

/*
 * Whether stdout took everything: a write error (a full disk, /dev/full)
 * is sticky in ferror() and may have been seen before the last fflush(),
 * which then has nothing left to write and succeeds.  Returns @rc, or 1
 * after saying so when stdout failed.
 */
static int stdout_done(int rc)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "pvnet: writing stdout: %s\n", strerror(errno ? errno : EIO));
	return rc ? rc : 1;
}

/* "  features: sg gso-tcpv4 ..., rate 62500 bytes per 50000 us": what a vif negotiated. */
static void print_features(const json_t *f)
{
	static const char *const flags[][2] = {
	    {"sg", "sg"},
	    {"gso_tcpv4", "gso-tcpv4"},
	    {"gso_tcpv6", "gso-tcpv6"},
	    {"csum_ipv4", "csum-ipv4"},
	    {"csum_ipv6", "csum-ipv6"},
	    {"rx_notify", "rx-notify"},
	    {"split_event_channels", "split-event-channels"},
	    {"ctrl_ring", "ctrl-ring"},
	    {"mcast_filter", "multicast-filter"},
	};
	json_int_t rate = json_integer_value(json_object_get(f, "rate_bytes"));

	printf("  features:");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (json_is_true(json_object_get(f, flags[i][0])))
			printf(" %s", flags[i][1]);
	if (json_is_true(json_object_get(f, "mcast_filter")))
		printf(" (%lld addresses)",
		       (long long)json_integer_value(json_object_get(f, "mcast_addrs")));
	if (rate)
		printf(", rate %lld bytes per %lld us", (long long)rate,
		       (long long)json_integer_value(json_object_get(f, "rate_usec")));
	putchar('\n');
}

/* An unknown argument of @cmd; -d (--run-dir) is pvnet's, before the command: say so. */
static int bad_argument(const char *cmd, const char *arg)
{
	if (!strcmp(arg, "-d") || !strncmp(arg, "--run-dir", 9))
		fprintf(stderr, "pvnet %s: -d DIR goes before the command: pvnet -d DIR %s\n", cmd,
			cmd);
	else
		fprintf(stderr, "pvnet %s: unknown argument '%s'\n", cmd, arg);
	return 2;
}

/* The arguments of `pvnet show` and `pvnet fdb`: [--json] [NAME].  0, or 2 after saying why. */
static int json_and_name(const char *cmd, int argc, char **argv, bool *as_json, const char **name)
{
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--json"))
			*as_json = true;
		else if (!*name && argv[a][0] != '-')
			*name = argv[a];
		else
			return bad_argument(cmd, argv[a]);
	}
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	const char *only = NULL;
	bool as_json = false;
	json_t *reply, *vif, *out;
	size_t i, shown = 0;

	if (json_and_name("show", argc, argv, &as_json, &only))
		return 2;
	reply = fetch_status("show", only);
	if (!reply)
		return 1;
	out = json_array();
	json_array_foreach(json_object_get(reply, "vifs"), i, vif)
	{
		const char *name = str_of(vif, "name");
		const char *error = json_string_value(json_object_get(vif, "error"));
		const char *mode = json_string_value(json_object_get(vif, "tx_mode"));
		const char *carrier = json_string_value(json_object_get(vif, "carrier"));
		const char *dom = json_string_value(json_object_get(vif, "domain_name"));
		json_t *q, *queues = json_object_get(vif, "queues");
		size_t qi;

		shown++;
		json_array_append(out, vif);
		if (as_json)
			continue;
		printf("%s: state %s, %zu queue%s%s%s%s%s%s%s%s%s\n", name, str_of(vif, "state"),
		       json_array_size(queues), json_array_size(queues) == 1 ? "" : "s",
		       mode ? ", tx " : "", mode ? mode : "", carrier ? ", carrier " : "",
		       carrier ? carrier : "", dom ? ", domain " : "", dom ? dom : "",
		       error ? ", disabled: " : "", error ? error : "");
		if (json_object_size(json_object_get(vif, "features")))
			print_features(json_object_get(vif, "features"));
		if (json_object_size(json_object_get(vif, "switch"))) {
			const char *key;
			json_t *v;

			printf("  switch port:\n");
			json_object_foreach(json_object_get(vif, "switch"), key, v)
			{
				printf("     %s: %lld\n", key, (long long)json_integer_value(v));
			}
		}
		json_array_foreach(queues, qi, q)
		{
			const char *key;
			json_t *v;

			printf("  queue %zu:\n", qi);
			json_object_foreach(q, key, v)
			{
				printf("     %s: %lld\n", key, (long long)json_integer_value(v));
			}
		}
	}
	if (as_json) {
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
	}
	json_decref(out);
	json_decref(reply);
	if (only && !shown) {
		fprintf(stderr, "pvnet show: no vif named %s\n", only);
		return 1;
	}
	if (!as_json && !shown)
		printf("no vifs\n");
	return 0;
}

static json_int_t geti(const json_t *o, const char *a, const char *b)
{
	return json_integer_value(json_object_get(json_object_get(o, a), b));
}

/* Order of `pvnet fdb`'s lines: by port (vif2.0 before vif10.0), then by MAC. */
static int fdb_order(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	int c = strverscmp(str_of(x, "port"), str_of(y, "port"));

	return c ? c : strcmp(str_of(x, "mac"), str_of(y, "mac"));
}

/*
 * The MAC table, as `bridge fdb show` and `ovs-appctl fdb/show` give a
 * bridge's: pvnetd answers a part at a time (a control message holds a
 * few hundred entries), so the parts are asked for on one connection
 * until pvnetd's cursor comes back 0, then sorted.
 */
static int cmd_fdb(int argc, char **argv)
{
	const char *only = NULL;
	bool as_json = false;
	json_t *all, *reply = NULL, *req, *e, **v = NULL;
	json_int_t cursor = 0, pages = 0;
	size_t i, n;
	int fd, rc;

	if (json_and_name("fdb", argc, argv, &as_json, &only))
		return 2;
	fd = ctl_open();
	if (fd < 0)
		return 1;
	all = json_array();
	do {
		json_decref(reply);
		reply = NULL;
		req = json_pack("{s:s, s:I, s:s*}", "op", "fdb", "cursor", cursor, "port", only);
		rc = req ? ctlmsg_call(fd, req, NULL, 0, &reply, NULL, NULL) : -ENOMEM;
		json_decref(req);
		if (rc == -ETIMEDOUT) {
			fprintf(stderr, "pvnet fdb: pvnetd at %s did not answer within %d s\n",
				run_dir, PVNET_CLI_TIMEOUT_MS / 1000);
			goto out;
		}
		if (rc < 0) {
			const char *why = reply ? str_of(reply, "error") : strerror(-rc);

			/* Most of pvnetd's begin "fdb: ": "pvnet fdb: no port ...". */
			fprintf(stderr, "pvnet %s%s\n", strncmp(why, "fdb: ", 5) ? "fdb: " : "",
				why);
			goto out;
		}
		json_array_extend(all, json_object_get(reply, "entries"));
		cursor = json_integer_value(json_object_get(reply, "cursor"));
		/* The table has at most 2^21 slots, a part some hundred entries. */
		if (++pages > 1 << 21) {
			fprintf(stderr, "pvnet fdb: pvnetd's answers do not come to an end\n");
			rc = -EPROTO;
			goto out;
		}
	} while (cursor);

	n = json_array_size(all);
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		fprintf(stderr, "pvnet fdb: %s\n", strerror(ENOMEM));
		rc = -ENOMEM;
		goto out;
	}
	json_array_foreach(all, i, e)
	{
		v[i] = e;
	}
	qsort(v, n, sizeof(*v), fdb_order);
	if (as_json) {
		json_t *sorted = json_array(), *doc;

		for (i = 0; i < n; i++)
			json_array_append(sorted, v[i]);
		doc =
		    json_pack("{s:o, s:O*, s:O*, s:O*}", "entries", sorted, "count",
			      json_object_get(reply, "count"), "max", json_object_get(reply, "max"),
			      "ageing", json_object_get(reply, "ageing"));
		if (!doc) {
			fprintf(stderr, "pvnet fdb: %s\n", strerror(ENOMEM));
			rc = -ENOMEM;
			goto out;
		}
		json_dumpf(doc, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(doc);
	} else {
		printf("%-16s %-17s %s\n", "port", "mac", "age");
		for (i = 0; i < n; i++)
			printf("%-16s %-17s %lld\n", str_of(v[i], "port"), str_of(v[i], "mac"),
			       (long long)json_integer_value(json_object_get(v[i], "age")));
		if (only)
			printf("%zu MAC%s on %s; ", n, n == 1 ? "" : "s", only);
		printf("%lld MACs learned, room for %lld; forgotten after %lld s unseen\n",
		       (long long)json_integer_value(json_object_get(reply, "count")),
		       (long long)json_integer_value(json_object_get(reply, "max")),
		       (long long)json_integer_value(json_object_get(reply, "ageing")));
	}
	rc = 0;
out:
	free(v);
	json_decref(reply);
	json_decref(all);
	close(fd);
	return rc ? 1 : 0;
}

static int cmd_status(int argc, char **argv)
{
	bool as_json = argc > 1 && !strcmp(argv[1], "--json");
	json_t *reply, *dom;
	size_t i;

	for (int a = 1; a < argc; a++) {
		if (a == 1 && as_json)
			continue;
		return bad_argument("status", argv[a]);
	}
	/* The text needs no vif counters (pvnet show has them): the list alone. */
	reply = fetch_status("status", as_json ? NULL : "");
	if (!reply)
		return 1;
	if (as_json) {
		json_dumpf(reply, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("pvnetd %s at %s\n", str_of(reply, "version"), run_dir);
		printf("domains: %zu\n", json_array_size(json_object_get(reply, "domains")));
		json_array_foreach(json_object_get(reply, "domains"), i, dom)
		{
			const char *name = json_string_value(json_object_get(dom, "name"));

			json_int_t hold = json_integer_value(json_object_get(dom, "rx_hold_bytes"));

			printf("  domain %lld%s%s%s  store %s\n",
			       (long long)json_integer_value(json_object_get(dom, "domid")),
			       name ? " (" : "", name ? name : "", name ? ")" : "",
			       str_of(dom, "store"));
			/* Only while frames for it wait in pvnetd's memory (netback.md, Memory). */
			if (hold)
				printf("    rx hold pools: %lld KiB\n", (long long)hold >> 10);
		}
		printf("grants: %lld mapped now; %lld copy, %lld map, %lld unmap ops in %lld "
		       "batches\n",
		       (long long)geti(reply, "hv", "maps_in_use"),
		       (long long)geti(reply, "hv", "grant_copy_ops"),
		       (long long)geti(reply, "hv", "grant_map_ops"),
		       (long long)geti(reply, "hv", "grant_unmap_ops"),
		       (long long)geti(reply, "hv", "grant_batches"));
		printf("event channels open: %lld\n", (long long)geti(reply, "hv", "evtchns_open"));
		printf("uplinks: %zu\n", json_array_size(json_object_get(reply, "uplinks")));
		json_array_foreach(json_object_get(reply, "uplinks"), i, dom)
		{
			const char *key;
			json_t *v;
			bool any = false;

			printf("  %s (%s): %lld frames in, %lld out, %lld dropped in, %lld out",
			       str_of(dom, "name"), str_of(dom, "type"),
			       (long long)geti(dom, "switch", "rx_packets"),
			       (long long)geti(dom, "switch", "tx_packets"),
			       (long long)geti(dom, "switch", "rx_dropped"),
			       (long long)geti(dom, "switch", "tx_dropped"));
			if (json_is_false(json_object_get(dom, "running")))
				printf("; stopped: %s", str_of(dom, "stopped"));
			/* The port's own counters that are not zero: drops by reason, offloads done. */
			json_object_foreach(json_object_get(dom, "counters"), key, v)
			{
				if (json_integer_value(v) == 0)
					continue;
				printf("%s %s %lld", any ? "," : ";", key,
				       (long long)json_integer_value(v));
				any = true;
			}
			putchar('\n');
		}
		printf("captures: %zu\n", json_array_size(json_object_get(reply, "captures")));
		json_array_foreach(json_object_get(reply, "captures"), i, dom)
		{
			printf("  %s (%s, snap length %lld): %lld frames captured, %lld dropped\n",
			       str_of(dom, "port"), str_of(dom, "direction"),
			       (long long)json_integer_value(json_object_get(dom, "snaplen")),
			       (long long)json_integer_value(json_object_get(dom, "captured")),
			       (long long)json_integer_value(json_object_get(dom, "dropped")));
		}
		printf("switch: %lld MACs learned, room for %lld, forgotten after %lld s unseen; "
		       "%lld aged out, %lld not learned (table full)\n",
		       (long long)geti(reply, "switch", "fdb_entries"),
		       (long long)geti(reply, "switch", "fdb_max"),
		       (long long)geti(reply, "switch", "ageing"),
		       (long long)geti(reply, "switch", "fdb_aged"),
		       (long long)geti(reply, "switch", "fdb_full"));
		printf("destroyed domains: %lld (left in use: %lld mappings, %lld grants, %lld "
		       "event channels)\n",
		       (long long)geti(reply, "destroyed", "domains"),
		       (long long)geti(reply, "destroyed", "maps_in_use"),
		       (long long)geti(reply, "destroyed", "grants_active"),
		       (long long)geti(reply, "destroyed", "evtchns_open"));
	}
	json_decref(reply);
	return 0;
}

/* The commands that parse their options with getopt_long(), as it names them. */
static char bench_cmd[] = "pvnet bench", attach_cmd[] = "pvnet attach",
	    capture_cmd[] = "pvnet capture";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"run-dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {0},
	};
	bool run_dir_given = false;
	int c;

	while ((c = getopt_long(argc, argv, "+d:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			run_dir = optarg;
			run_dir_given = true;
			break;
		case 'h':
			usage(stdout);
			return stdout_done(0);
		case 'V':
			printf("pvnet %s\n", PVNET_VERSION);
			return stdout_done(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return 2;
	}
	if ((!strcmp(argv[0], "status") || !strcmp(argv[0], "show") || !strcmp(argv[0], "fdb")) &&
	    wants_help(argc, argv)) {
		usage(stdout);
		return stdout_done(0);
	}
	if (!strcmp(argv[0], "status"))
		return stdout_done(cmd_status(argc, argv));
	if (!strcmp(argv[0], "show"))
		return stdout_done(cmd_show(argc, argv));
	if (!strcmp(argv[0], "fdb"))
		return stdout_done(cmd_fdb(argc, argv));
	/*
	 * getopt_long() names the program by argv[0] in its messages ("bench:
	 * unrecognized option"): the whole command instead, as the commands'
	 * own messages name it.
	 */
	if (!strcmp(argv[0], "bench")) {
		argv[0] = bench_cmd;
		return bench_main(argc, argv, run_dir_given ? run_dir : NULL);
	}
	if (!strcmp(argv[0], "attach")) {
		argv[0] = attach_cmd;
		return attach_main(argc, argv, run_dir_given ? run_dir : NULL);
	}
	if (!strcmp(argv[0], "capture")) {
		argv[0] = capture_cmd;
		return capture_main(argc, argv, run_dir);
	}
	/* `pvnet help COMMAND`: that command's --help (status and show have this one's). */
	if (!strcmp(argv[0], "help") && argc == 2) {
		char *sub[] = {argv[1], "--help", NULL};

		if (!strcmp(argv[1], "bench"))
			return bench_main(2, sub, NULL);
		if (!strcmp(argv[1], "attach"))
			return attach_main(2, sub, NULL);
		if (!strcmp(argv[1], "capture"))
			return capture_main(2, sub, run_dir);
		if (strcmp(argv[1], "status") && strcmp(argv[1], "show") &&
		    strcmp(argv[1], "fdb") && strcmp(argv[1], "version") &&
		    strcmp(argv[1], "help")) {
			fprintf(stderr, "pvnet help: unknown command '%s'\n", argv[1]);
			return 2;
		}
	}
	if (!strcmp(argv[0], "version") || !strcmp(argv[0], "help")) {
		if (argc > 2 || (argc > 1 && strcmp(argv[0], "help"))) {
			fprintf(stderr, "pvnet %s: unexpected argument '%s'\n", argv[0],
				argv[argc - 1]);
			return 2;
		}
		if (!strcmp(argv[0], "version"))
			printf("pvnet %s\n", PVNET_VERSION);
		else
			usage(stdout);
		return stdout_done(0);
	}
	fprintf(stderr, "pvnet: unknown command '%s'\n", argv[0]);
	usage(stderr);
	return 2;
}
