// SPDX-License-Identifier: MIT
/* capture.c - pvnet capture: a switch port's frames into a pcap file (see capture.h) */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "common/ctlmsg.h"
#include "capture.h"
#include "cliarg.h"

/*
 * Datagrams read per recvmmsg() (each holds up to 64 KiB of records, or one
 * larger record), and the size of a buffer: the largest record.
 */
#define CAP_BATCH 16
#define CAP_DGRAM (sizeof(struct sw_capture_hdr) + SW_CAPTURE_SNAPMAX + SW_CAPTURE_ALIGN)
/* How long pvnetd may take to answer (it answers in milliseconds). */
#define CAP_CTL_TIMEOUT_MS 5000
/* Reads of CAP_BATCH datagrams after the stop, at most: far more than a socket buffer holds. */
#define CAP_STOP_DRAIN_MAX 4096

static volatile sig_atomic_t stop_signal;
/*
 * Written by the handler, polled beside the sockets: a signal that comes
 * between the loop's check and its poll does not wait out the poll.
 */
static int stop_fd = -1;

/*
 * SIGINT or SIGTERM stops the capture: the loop sees it.  While frames
 * are written the handler has SA_RESTART, so that a write blocked on a
 * reader that does not read goes on after it and no record is cut short;
 * once stopping, not, so that another signal ends such a wait (the file
 * then fails, exit 1).
 */
static void on_signal(int sig)
{
	int saved = errno;

	stop_signal = sig;
	if (stop_fd >= 0 && write(stop_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0) {
		/* full: already woken */
	}
	errno = saved;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pvnet [-d DIR] capture PORT [-w FILE] [-c COUNT] [-s SNAPLEN]\n"
		"                      [-Q in|out|inout] [-t SECONDS]\n"
		"Write the frames of switch port PORT (a vif such as vif1.0, or an uplink; pvnet\n"
		"status lists them) to a pcap file, until interrupted.\n"
		"\n"
		"  -w, --write FILE     the pcap file; - (the default) is stdout, which must not\n"
		"                       be a terminal: pvnet capture vif1.0 | tcpdump -n -r -\n"
		"  -c, --count COUNT    stop after COUNT frames\n"
		"  -s, --snaplen BYTES  keep at most BYTES of each frame, 1..%u (0 or\n"
		"                       absent: all of it, as tcpdump's -s 0)\n"
		"  -Q, --direction WAY  in (frames the port sends into the switch), out (frames\n"
		"                       the switch gives it) or inout (default)\n"
		"  -t, --duration SECS  stop after SECS whole seconds\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit status: 0 stopped as asked or by itself (the port or pvnetd went away,\n"
		"the reader of the output went away), 1 pvnetd refused or could not be\n"
		"reached, or the capture or the file failed, 2 usage.\n",
		SW_CAPTURE_SNAPMAX);
}

/**
 * enum cap_end - how a read of the capture socket left things
 * @CAP_MORE: go on
 * @CAP_COUNTED: -c frames written
 * @CAP_EOF: end of file: the port or pvnetd went away (or pvnetd stopped the capture)
 * @CAP_READER_GONE: the output is a pipe (or socket) nobody reads any more (EPIPE, or
 *	POLLERR/POLLHUP on it): stop quietly, as tcpdump does
 * @CAP_FAILED: reading the socket or writing the file failed (the reason is printed)
 */
enum cap_end {
	CAP_MORE,
	CAP_COUNTED,
	CAP_EOF,
	CAP_READER_GONE,
	CAP_FAILED,
};

/**
 * struct cap - one run of pvnet capture
 * @ctl: the control connection (the capture lives as long as it)
 * @fd: the capture socket
 * @snaplen: as pvnetd confirmed it
 * @dumper: the pcap output
 * @count: frames to write, 0 for no bound
 * @written: frames written (flushed to the file without an error)
 * @bad: datagrams with a malformed record, or cut short (never expected)
 * @broken: the socket or the output failed, or the reader went away: read and write no more
 */
struct cap {
	int ctl;
	int fd;
	uint32_t snaplen;
	pcap_dumper_t *dumper;
	uint64_t count;
	uint64_t written;
	uint64_t bad;
	bool broken;
};

/*
 * Flush the pcap output and say whether everything written since the last
 * flush reached it (@err: an errno already seen while writing, or 0).  A
 * record larger than stdio's buffer is written inside pcap_dump() itself:
 * if that write fails, stdio sets the stream's error flag and drops the
 * buffer, and the flush that follows has nothing to write and succeeds.
 * So the error flag is checked as well as the flush.
 */
static enum cap_end cap_flush(struct cap *c, int err)
{
	FILE *f = pcap_dump_file(c->dumper);

	if (!err) {
		errno = 0;
		if (pcap_dump_flush(c->dumper) < 0 || ferror(f))
			err = errno ? errno : EIO;
	}
	if (!err)
		return CAP_MORE;
	c->broken = true;
	if (err == EPIPE)
		return CAP_READER_GONE;
	fprintf(stderr, "pvnet capture: writing the pcap file: %s\n", strerror(err));
	return CAP_FAILED;
}

/*
 * Read and write what is there.  Frames count as written once the flush
 * after their batch succeeded: a batch that failed to be written is not
 * counted, although some of it may be in the file.
 */
static enum cap_end cap_drain(struct cap *c, uint8_t (*bufs)[CAP_DGRAM])
{
	FILE *f = pcap_dump_file(c->dumper);
	struct mmsghdr msg[CAP_BATCH];
	struct iovec iov[CAP_BATCH];
	uint64_t batch = 0; /* frames dumped in this batch */
	enum cap_end end;
	bool eof = false;
	int n, err = 0;

	for (unsigned int i = 0; i < CAP_BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i])};
		msg[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
	}
	n = recvmmsg(c->fd, msg, CAP_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return CAP_MORE;
		perror("pvnet capture: reading the capture socket");
		c->broken = true;
		return CAP_FAILED;
	}
	if (n == 0)
		return CAP_EOF;
	for (int i = 0; i < n && !err && !(c->count && c->written + batch >= c->count); i++) {
		struct capture_rec r;
		size_t off = 0;
		int rc;

		if (msg[i].msg_len == 0 && !(msg[i].msg_hdr.msg_flags & MSG_TRUNC)) {
			eof = true; /* end of file (recvmmsg counts it as an empty message) */
			break;
		}
		if (msg[i].msg_hdr.msg_flags & MSG_TRUNC) {
			c->bad++;
			continue;
		}
		while ((rc = capture_next(bufs[i], msg[i].msg_len, &off, c->snaplen, &r)) > 0) {
			struct pcap_pkthdr ph;

			ph.ts.tv_sec = (time_t)(r.ts_ns / 1000000000ULL);
			ph.ts.tv_usec =
			    (suseconds_t)(r.ts_ns % 1000000000ULL); /* nanosecond pcap */
			ph.caplen = r.caplen;
			ph.len = r.len;
			pcap_dump((u_char *)c->dumper, &ph, r.data);
			if (ferror(f)) { /* errno is the failed write's */
				err = errno ? errno : EIO;
				break;
			}
			if (c->written + ++batch == c->count)
				break;
		}
		if (rc < 0)
			c->bad++;
	}
	end = cap_flush(c, err);
	if (end != CAP_MORE)
		return end;
	c->written += batch;
	if (c->count && c->written >= c->count)
		return CAP_COUNTED;
	return eof ? CAP_EOF : CAP_MORE;
}

/* Say why the capture of @port ended, unless it is by -c or already said. */
static void cap_say_end(const char *port, enum cap_end end)
{
	if (end == CAP_EOF)
		fprintf(stderr,
			"pvnet capture: the capture of %s ended (the port or pvnetd went away)\n",
			port);
	else if (end == CAP_READER_GONE)
		fprintf(
		    stderr,
		    "pvnet capture: the capture of %s ended (the reader of its output went away)\n",
		    port);
}

/*
 * Port names travel to pvnetd as JSON strings, which are UTF-8: a name that
 * is not cannot name a port.  json_string() refuses it, as json_pack() would
 * (which could only say NULL); json_string_nocheck() tells that apart from
 * running out of memory.
 */
static bool cap_port_is_utf8(const char *port)
{
	json_t *s = json_string(port);

	if (!s) {
		s = json_string_nocheck(port);
		if (!s)
			return true; /* out of memory: cap_start() says so */
		json_decref(s);
		return false;
	}
	json_decref(s);
	return true;
}

/* Ask pvnetd for the capture; fills c->fd and c->snaplen. */
static int cap_start(struct cap *c, const char *port, const char *dir, uint32_t snaplen)
{
	json_t *req, *reply = NULL;
	int rfds[CTLMSG_MAX_FDS];
	unsigned int nrfds = 0;
	int rc;

	req = json_pack("{s:s, s:s, s:s, s:I}", "op", "capture-start", "port", port, "direction",
			dir, "snaplen", (json_int_t)snaplen);
	rc = req ? ctlmsg_call(c->ctl, req, NULL, 0, &reply, rfds, &nrfds) : -ENOMEM;
	json_decref(req);
	if (rc == 0 && nrfds != 1)
		rc = -EPROTO;
	if (rc < 0) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		fprintf(stderr, "pvnet capture: %s\n", e ? e : strerror(-rc));
		while (nrfds)
			close(rfds[--nrfds]);
		json_decref(reply);
		return -1;
	}
	c->fd = rfds[0];
	c->snaplen = (uint32_t)json_integer_value(json_object_get(reply, "snaplen"));
	json_decref(reply);
	if (c->snaplen != snaplen) {
		fprintf(stderr, "pvnet capture: pvnetd took snap length %u for %u\n", c->snaplen,
			snaplen);
		return -1;
	}
	return 0;
}

/*
 * Stop the capture, write what pvnetd captured before it stopped, and say
 * what it did (as tcpdump does, on stderr).  pvnetd answers once no frame
 * can be captured any more and closes its end: the frames still in the
 * socket come before the end of file, and none is lost to the stop.
 */
static int cap_stop(struct cap *c, const char *port, uint8_t (*bufs)[CAP_DGRAM], bool ended)
{
	enum cap_end end = CAP_MORE;
	json_t *req, *reply = NULL;
	int rc;

	req = json_pack("{s:s, s:s}", "op", "capture-stop", "port", port);
	rc = req ? ctlmsg_call(c->ctl, req, NULL, 0, &reply, NULL, NULL) : -ENOMEM;
	json_decref(req);
	/*
	 * The capture ended by itself and pvnetd is gone (it stopped): every
	 * frame it captured was read to the end of file, as when a port goes
	 * away; only its count of dropped frames went with it.
	 */
	if (ended && (rc == -ECONNRESET || rc == -EPIPE || rc == -ENOTCONN)) {
		fprintf(stderr,
			"%" PRIu64 " frames written\npvnetd went away: its count of "
			"frames dropped is not known\n",
			c->written);
		json_decref(reply);
		return 0;
	}
	if (rc < 0) {
		const char *e = json_string_value(json_object_get(reply, "error"));

		fprintf(stderr, "pvnet capture: %" PRIu64 " frames written; stopping: %s\n",
			c->written, e ? e : strerror(-rc));
		json_decref(reply);
		return -1;
	}
	/*
	 * Bounded: a socket buffer's worth, then the end of file (or the count,
	 * or an error).  Nothing to read or write once either side failed.
	 */
	for (unsigned int i = 0; c->dumper && !c->broken && i < CAP_STOP_DRAIN_MAX; i++) {
		end = cap_drain(c, bufs);
		if (end != CAP_MORE)
			break;
	}
	if (end == CAP_READER_GONE)
		cap_say_end(port, end);
	fprintf(stderr, "%" PRIu64 " frames written\n%lld frames dropped by pvnetd\n", c->written,
		(long long)json_integer_value(json_object_get(reply, "dropped")));
	if (c->bad)
		fprintf(stderr, "%" PRIu64 " malformed capture datagrams skipped\n", c->bad);
	json_decref(reply);
	return end == CAP_FAILED ? -1 : 0;
}

int capture_main(int argc, char **argv, const char *run_dir)
{
	static const struct option opts[] = {
	    {"write", required_argument, NULL, 'w'},	{"count", required_argument, NULL, 'c'},
	    {"snaplen", required_argument, NULL, 's'},	{"direction", required_argument, NULL, 'Q'},
	    {"duration", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
	    {"run-dir", required_argument, NULL, 'd'},	{0},
	};
	const char *out = "-", *dir = "inout", *port;
	unsigned long snaplen = SW_CAPTURE_SNAPMAX, secs = 0, count = 0;
	struct cap c = {.ctl = -1, .fd = -1};
	uint8_t(*bufs)[CAP_DGRAM] = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	enum cap_end end = CAP_MORE;
	struct timespec t0, t;
	pcap_t *pd = NULL;
	int o, err, rc = 1;

	optind = 0; /* GNU getopt: start afresh (main parsed with "+") */
	while ((o = getopt_long(argc, argv, "w:c:s:Q:t:hd:", opts, NULL)) != -1) {
		switch (o) {
		case 'w':
			out = optarg;
			break;
		case 'c':
			if (cliarg_ulong(optarg, 1, UINT64_MAX >> 1, &count) < 0) {
				fprintf(stderr, "pvnet capture: -c: '%s' is not a count\n", optarg);
				return 2;
			}
			break;
		case 's':
			if (cliarg_ulong(optarg, 0, SW_CAPTURE_SNAPMAX, &snaplen) < 0) {
				fprintf(stderr, "pvnet capture: -s: '%s' is not 0..%u\n", optarg,
					SW_CAPTURE_SNAPMAX);
				return 2;
			}
			if (!snaplen)
				snaplen = SW_CAPTURE_SNAPMAX; /* tcpdump's -s 0 */
			break;
		case 'Q':
			if (strcmp(optarg, "in") && strcmp(optarg, "out") &&
			    strcmp(optarg, "inout")) {
				fprintf(stderr, "pvnet capture: -Q: '%s' is not in, out or inout\n",
					optarg);
				return 2;
			}
			dir = optarg;
			break;
		case 't':
			if (cliarg_ulong(optarg, 1, 86400 * 365, &secs) < 0) {
				fprintf(stderr,
					"pvnet capture: -t: '%s' is not a whole number of seconds, "
					"1..31536000\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'd': /* pvnet's own option, given after the command */
			fprintf(stderr, "pvnet capture: -d DIR goes before the command: pvnet -d "
					"DIR capture PORT ...\n");
			return 2;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "pvnet capture: %s\n",
			optind == argc ? "which port? (pvnet status lists them)"
				       : "one port at a time");
		usage(stderr);
		return 2;
	}
	port = argv[optind];
	if (!cap_port_is_utf8(port)) {
		fprintf(stderr,
			"pvnet capture: the port given is not a port name (not valid UTF-8)\n");
		return 2;
	}
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "pvnet capture: stdout is a terminal: give -w FILE, or pipe it "
				"into tcpdump -r -\n");
		return 2;
	}

	/*
	 * A file that cannot be written fails before pvnetd starts copying, but
	 * is created (or written over) only once pvnetd has the capture: an
	 * unknown or busy port leaves an earlier capture of that name alone.
	 */
	if (strcmp(out, "-") && (err = cliarg_out_file(out)) < 0) {
		fprintf(stderr, "pvnet capture: cannot write %s: %s\n", out, strerror(-err));
		return 1;
	}
	bufs = malloc(CAP_BATCH * sizeof(*bufs));
	if (!bufs) {
		fprintf(stderr, "pvnet capture: out of memory\n");
		goto out;
	}
	c.count = count;
	c.ctl = ctlmsg_connect(run_dir);
	if (c.ctl < 0) {
		fprintf(stderr, "pvnet capture: cannot reach pvnetd at %s/%s: %s\n", run_dir,
			CTLMSG_SOCK_NAME, strerror(-c.ctl));
		goto out;
	}
	if (ctlmsg_set_timeout(c.ctl, CAP_CTL_TIMEOUT_MS) < 0 ||
	    cap_start(&c, port, dir, (uint32_t)snaplen) < 0)
		goto out;
	pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)c.snaplen,
						  PCAP_TSTAMP_PRECISION_NANO);
	if (!pd) {
		fprintf(stderr, "pvnet capture: libpcap: cannot open a capture handle\n");
		cap_stop(&c, port, bufs, false);
		goto out;
	}
	/*
	 * Opening a FIFO waits for its reader: without SA_RESTART, a signal
	 * ends that wait (nothing was written: exit 0).  EPIPE, not SIGPIPE,
	 * for a reader gone.
	 */
	stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	c.dumper = pcap_dump_open(pd, out);
	if (!c.dumper) {
		if (stop_signal) {
			fprintf(stderr, "pvnet capture: stopped before %s was open\n", out);
			rc = cap_stop(&c, port, bufs, false) < 0 ? 1 : 0;
		} else {
			fprintf(stderr, "pvnet capture: %s\n", pcap_geterr(pd));
			cap_stop(&c, port, bufs, false);
		}
		goto out;
	}
	/* From here a signal lets a blocked write finish (whole records), and wakes the poll. */
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fprintf(stderr, "pvnet capture: capturing %s (%s, snap length %u)\n", port, dir, c.snaplen);
	/* The pcap header now: a file that cannot take even that, or a pipe nobody reads, ends it. */
	end = cap_flush(&c, 0);
	while (end == CAP_MORE) {
		/*
		 * The output too, asking for nothing: a pipe's (or FIFO's) write end
		 * reports POLLERR once its last reader has gone, a socket POLLHUP,
		 * so a capture of an idle port ends as soon as its reader does.  A
		 * regular file reports nothing.
		 */
		struct pollfd pf[3] = {
		    {.fd = c.fd, .events = POLLIN},
		    {.fd = fileno(pcap_dump_file(c.dumper)), .events = 0},
		    {.fd = stop_fd, .events = POLLIN},
		};
		int wait_ms = 1000;

		if (secs) {
			int64_t left;

			clock_gettime(CLOCK_MONOTONIC, &t);
			left = (int64_t)secs * 1000 - ((int64_t)(t.tv_sec - t0.tv_sec) * 1000 +
						       (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (left <= 0)
				break;
			wait_ms = left < wait_ms ? (int)left : wait_ms;
		}
		if (stop_signal)
			break;
		if (poll(pf, 3, wait_ms) < 0 && errno != EINTR) {
			perror("pvnet capture: poll");
			end = CAP_FAILED;
			break;
		}
		if (pf[1].revents & (POLLERR | POLLHUP)) {
			c.broken = true; /* what is still in the socket has nowhere to go */
			end = CAP_READER_GONE;
		} else if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			end = cap_drain(&c, bufs);
		}
	}
	sa.sa_flags = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cap_say_end(port, end);
	rc = cap_stop(&c, port, bufs, end == CAP_EOF) < 0 || end == CAP_FAILED ? 1 : 0;
out:
	if (stop_fd >= 0) {
		int fd = stop_fd;

		stop_fd = -1;
		close(fd);
	}
	if (c.fd >= 0)
		close(c.fd);
	if (c.ctl >= 0)
		close(c.ctl);
	if (c.dumper)
		pcap_dump_close(c.dumper);
	if (pd)
		pcap_close(pd);
	free(bufs);
	return rc;
}
