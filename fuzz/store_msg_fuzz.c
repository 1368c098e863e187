// SPDX-License-Identifier: MIT
/* store_msg_fuzz.c - libFuzzer harness: arbitrary byte streams from dom0 and a guest into the store */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/log.h"
#include "store/store.h"

/*
 * Input layout: byte 0 picks the speaker and the delivery:
 *   bit 0    the stream comes from the guest (domain 5) rather than dom0;
 *   bits 1-6 the stream is fed in chunks of 1..64 bytes (partial headers);
 *   bit 7    the client reads slowly (its send callback takes at most a few
 *            bytes, or none), to exercise the output queue and its bound.
 * The rest is the xs_wire byte stream.  A second connection (the other
 * domain) holds watches, and an in-process watch writes from its callback,
 * so events, permissions checks and re-entrancy run on every input.
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct peer {
	unsigned int calls;
	int slow;
};

static int fuzz_send(void *ctx, const void *buf, size_t len)
{
	struct peer *p = ctx;

	(void)buf;
	if (!p->slow)
		return 0;
	/* take nothing, then a few bytes, alternately */
	if (p->calls++ % 2 == 0)
		return -EAGAIN;
	return len > 7 ? 7 : 0;
}

static void fuzz_watch_cb(void *ctx, const char *path, const char *token)
{
	struct store *s = ctx;

	/* re-entrancy: a change seen by an in-process watch causes another (bounded: one key) */
	if (strcmp(token, "echo") == 0 && strcmp(path, "/echo") != 0)
		store_write(s, "/echo", path, strlen(path));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t watch_all[] = {4, 0, 0, 0, 1, 0, 0,   0, 0,   0,
					    0, 0, 4, 0, 0, 0, '/', 0, 'w', 0};
	struct peer pa = {0}, pb = {0};
	struct store_conn *a, *b;
	struct store *s;
	size_t chunk, off;
	uint8_t mode;

	if (size < 1)
		return 0;
	log_set_level(LOG_ERR);
	mode = data[0];
	chunk = 1 + ((mode >> 1) & 0x3f);
	pa.slow = mode >> 7;
	s = store_create(NULL);
	if (!s)
		return 0;
	store_domain_introduce(s, 5);
	store_write(s, "/local/domain/5/device/vif/0/state", "1", 1);
	store_watch_add(s, "/", "echo", fuzz_watch_cb, s);
	a = store_conn_open(s, (mode & 1) ? 5 : 0, fuzz_send, &pa);
	b = store_conn_open(s, (mode & 1) ? 0 : 5, fuzz_send, &pb);
	if (b)
		store_conn_input(b, watch_all, sizeof(watch_all));
	for (off = 1; a && off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (store_conn_input(a, data + off, n) < 0) {
			store_conn_close(a);
			a = NULL;
		}
		if (a && (off / chunk) % 8 == 0)
			store_conn_flush(a);
	}
	store_domain_release(s, 5);
	store_conn_close(a);
	store_conn_close(b);
	store_destroy(s);
	return 0;
}
