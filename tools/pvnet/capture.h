/* SPDX-License-Identifier: MIT */
/* capture.h - pvnet capture: a switch port's frames into a pcap file */
#ifndef PVNET_TOOLS_CAPTURE_H
#define PVNET_TOOLS_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "switch/switch.h"

/*
 * Theory of Operation
 *
 * `pvnet capture PORT` asks pvnetd for a capture of the switch port PORT
 * (control op "capture-start") and gets a socket back; each datagram on it
 * holds the records of one or more frames (switch.h: a struct
 * sw_capture_hdr, the frame's first bytes, padding).  This process checks
 * each record (capture_next()), writes it to a
 * pcap file with libpcap (Ethernet link type, nanosecond timestamps),
 * flushes after every batch so that a reader of a pipe
 * (`pvnet capture vif1.0 | tcpdump -r -`) sees frames as they come, and
 * stops on SIGINT/SIGTERM, after -c frames, after -t seconds, when the
 * port goes away, or when the reader of its output goes away (EPIPE, or
 * POLLERR on the output polled beside the socket, so an idle port's
 * capture ends too).  A frame counts as written once the flush after its
 * batch succeeded and the stream's error flag is clear (a write that fails
 * inside pcap_dump() leaves the flush nothing to fail on).  It then asks
 * pvnetd to stop ("capture-stop") and prints how many frames were written
 * and how many pvnetd dropped because this process fell behind.
 */

/**
 * struct capture_rec - one checked capture record
 * @ts_ns: CLOCK_REALTIME of the frame, ns
 * @len: the frame's length
 * @caplen: bytes of it at @data
 * @dir: SW_CAPTURE_IN or SW_CAPTURE_OUT
 * @data: the frame's first @caplen bytes (inside the datagram)
 */
struct capture_rec {
	uint64_t ts_ns;
	uint32_t len;
	uint32_t caplen;
	uint8_t dir;
	const uint8_t *data;
};

/**
 * capture_next() - the next record of a datagram from a capture socket
 * @dgram: its bytes
 * @n: its length
 * @off: where the record starts (0 for the first); moved past it
 * @snaplen: the capture's snap length
 * @out: filled when a record is returned
 *
 * Return: 1 (a record), 0 (no more records), or -EBADMSG when what is left
 * is shorter than a header, or the record holds more bytes than its frame,
 * the snap length or the datagram, or names no direction (the rest of the
 * datagram cannot be trusted)
 */
int capture_next(const uint8_t *dgram, size_t n, size_t *off, uint32_t snaplen,
		 struct capture_rec *out);

/**
 * capture_main() - `pvnet capture`
 * @argc: arguments from "capture" on
 * @argv: them
 * @run_dir: pvnetd's run directory
 *
 * Return: exit status (0, 1 failure, 2 usage)
 */
int capture_main(int argc, char **argv, const char *run_dir);

#endif
