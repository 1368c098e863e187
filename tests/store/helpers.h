/* SPDX-License-Identifier: MIT */
/* helpers.h - a fake xenstore client for the store tests: build requests, decode replies */
#ifndef PVNET_TESTS_STORE_HELPERS_H
#define PVNET_TESTS_STORE_HELPERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xen/io/xs_wire.h>

#include "store/store.h"

#define TC_MAX_REPLIES 512
#define TC_MAX_EVENTS  512

struct tmsg {
	struct xsd_sockmsg hdr;
	char body[XENSTORE_PAYLOAD_MAX + 1]; /* NUL after the payload, for the tests' ease */
};

/* A client: everything the store sends is split into replies and watch events. */
struct tclient {
	struct store *s;
	struct store_conn *c;
	domid_t domid;
	int refuse; /* send callback answers -EAGAIN */
	unsigned char raw[2 * (XENSTORE_PAYLOAD_MAX + 16)];
	size_t rawlen;
	struct tmsg *rep;
	unsigned int nrep, rephead;
	struct tmsg *ev;
	unsigned int nev, evhead;
};

static inline void tc_parse(struct tclient *tc)
{
	struct xsd_sockmsg h;

	while (tc->rawlen >= sizeof(h)) {
		struct tmsg *m;

		memcpy(&h, tc->raw, sizeof(h));
		assert_true(h.len <= XENSTORE_PAYLOAD_MAX);
		if (tc->rawlen < sizeof(h) + h.len)
			return;
		if (h.type == XS_WATCH_EVENT) {
			assert_true(tc->nev < TC_MAX_EVENTS);
			m = &tc->ev[tc->nev++];
		} else {
			assert_true(tc->nrep < TC_MAX_REPLIES);
			m = &tc->rep[tc->nrep++];
		}
		m->hdr = h;
		memcpy(m->body, tc->raw + sizeof(h), h.len);
		m->body[h.len] = '\0';
		memmove(tc->raw, tc->raw + sizeof(h) + h.len, tc->rawlen - sizeof(h) - h.len);
		tc->rawlen -= sizeof(h) + h.len;
	}
}

static inline int tc_send_cb(void *ctx, const void *buf, size_t len)
{
	struct tclient *tc = ctx;
	const unsigned char *p = buf;

	if (tc->refuse)
		return -EAGAIN;
	while (len) {
		size_t take = sizeof(tc->raw) - tc->rawlen;

		if (take > len)
			take = len;
		memcpy(tc->raw + tc->rawlen, p, take);
		tc->rawlen += take;
		p += take;
		len -= take;
		tc_parse(tc);
	}
	return 0;
}

static inline struct tclient *tc_open(struct store *s, domid_t domid)
{
	struct tclient *tc = calloc(1, sizeof(*tc));

	assert_non_null(tc);
	tc->rep = calloc(TC_MAX_REPLIES, sizeof(*tc->rep));
	tc->ev = calloc(TC_MAX_EVENTS, sizeof(*tc->ev));
	assert_non_null(tc->rep);
	assert_non_null(tc->ev);
	tc->s = s;
	tc->domid = domid;
	tc->c = store_conn_open(s, domid, tc_send_cb, tc);
	assert_non_null(tc->c);
	return tc;
}

/* A store with quotas @cfg and guest 5 in it: its connection. */
static inline struct tclient *guest_store(const struct store_config *cfg, struct store **s)
{
	*s = store_create(cfg);
	assert_non_null(*s);
	assert_int_equal(store_domain_introduce(*s, 5), 0);
	return tc_open(*s, 5);
}

static inline void tc_close(struct tclient *tc)
{
	if (tc->c)
		store_conn_close(tc->c);
	free(tc->rep);
	free(tc->ev);
	free(tc);
}

/* Send one request with an explicit payload; returns store_conn_input()'s result. */
static inline int tc_send(struct tclient *tc, uint32_t type, uint32_t req_id, uint32_t tx_id,
			  const void *payload, size_t len)
{
	unsigned char buf[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX + 64];
	struct xsd_sockmsg h = {
	    .type = type, .req_id = req_id, .tx_id = tx_id, .len = (uint32_t)len};

	assert_true(len <= sizeof(buf) - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy(buf + sizeof(h), payload, len);
	return store_conn_input(tc->c, buf, sizeof(h) + len);
}

/* Payload of NUL-terminated strings; the list ends with NULL. */
static inline size_t tc_strings(char *buf, size_t size, va_list ap)
{
	size_t off = 0;
	const char *s;

	while ((s = va_arg(ap, const char *)) != NULL) {
		size_t n = strlen(s) + 1;

		assert_true(off + n <= size);
		memcpy(buf + off, s, n);
		off += n;
	}
	return off;
}

/* The next reply; valid until the next request (slots are reused once all are read). */
static inline struct tmsg *tc_reply(struct tclient *tc)
{
	struct tmsg *m;

	if (tc->rephead == tc->nrep)
		return NULL;
	m = &tc->rep[tc->rephead++];
	if (tc->rephead == tc->nrep)
		tc->rephead = tc->nrep = 0;
	return m;
}

static inline struct tmsg *tc_event(struct tclient *tc)
{
	struct tmsg *m;

	if (tc->evhead == tc->nev)
		return NULL;
	m = &tc->ev[tc->evhead++];
	if (tc->evhead == tc->nev)
		tc->evhead = tc->nev = 0;
	return m;
}

static inline void tc_drain_events(struct tclient *tc)
{
	tc->evhead = tc->nev = 0;
}

/* Send a request made of strings (NULL-terminated list) and return its reply. */
static inline struct tmsg *tc_call(struct tclient *tc, uint32_t type, uint32_t tx_id, ...)
{
	char buf[XENSTORE_PAYLOAD_MAX * 2];
	struct tmsg *m;
	va_list ap;
	size_t len;

	va_start(ap, tx_id);
	len = tc_strings(buf, sizeof(buf), ap);
	va_end(ap);
	assert_int_equal(tc_send(tc, type, 77, tx_id, buf, len), 0);
	m = tc_reply(tc);
	assert_non_null(m);
	assert_int_equal(m->hdr.req_id, 77);
	assert_int_equal(m->hdr.tx_id, tx_id);
	return m;
}

/* The error name of a reply, or "" when it is not an error. */
static inline const char *tc_err(const struct tmsg *m)
{
	return m->hdr.type == XS_ERROR ? m->body : "";
}

#define TC_OK(m)                                                                                   \
	do {                                                                                       \
		const struct tmsg *m_ = (m);                                                       \
		assert_string_equal(tc_err(m_), "");                                               \
	} while (0)

#define TC_ERR(m, name) assert_string_equal(tc_err(m), name)

/* Shortcuts for the common operations. */
static inline struct tmsg *tc_write(struct tclient *tc, uint32_t tx, const char *path,
				    const char *val)
{
	char buf[XENSTORE_PAYLOAD_MAX];
	size_t pl = strlen(path) + 1, vl = strlen(val);
	struct tmsg *m;

	memcpy(buf, path, pl);
	memcpy(buf + pl, val, vl);
	assert_int_equal(tc_send(tc, XS_WRITE, 77, tx, buf, pl + vl), 0);
	m = tc_reply(tc);
	assert_non_null(m);
	return m;
}

#define tc_read(tc, tx, path)  tc_call(tc, XS_READ, tx, path, NULL)
#define tc_rm(tc, tx, path)    tc_call(tc, XS_RM, tx, path, NULL)
#define tc_mkdir(tc, tx, path) tc_call(tc, XS_MKDIR, tx, path, NULL)

static inline uint32_t tc_txn_start(struct tclient *tc)
{
	struct tmsg *m = tc_call(tc, XS_TRANSACTION_START, 0, "", NULL);

	TC_OK(m);
	return (uint32_t)strtoul(m->body, NULL, 10);
}

#endif /* PVNET_TESTS_STORE_HELPERS_H */
