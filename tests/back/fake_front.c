// SPDX-License-Identifier: MIT
// fake_front.c - an in-process netfront for the netback tests (see fake_front.h)

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../common/frame_builder.h"
#include "fake_front.h"

uint64_t test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void make_frame(uint8_t *buf, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		uint32_t seed)
{
	memcpy(buf, dst, 6);
	memcpy(buf + 6, src, 6);
	buf[12] = 0x88;
	buf[13] = 0xb5;
	for (uint32_t i = 14; i < len; i++)
		buf[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

void make_frame_opt(uint8_t *buf, uint32_t len, const uint8_t dst[6], const uint8_t src[6],
		    uint32_t seed, const struct ff_txopt *opt)
{
	bool v6 = opt && opt->gso_type == XEN_NETIF_GSO_TYPE_TCPV6;
	uint32_t l4 = v6 ? 54 : 34;

	make_frame(buf, len, dst, src, seed);
	if (!opt || (!(opt->flags & NETTXF_csum_blank) && !opt->gso_type) || len < l4 + 20)
		return;
	if (v6) {
		fb_put16(buf + 12, 0x86dd);
		buf[14] = 0x60;
		buf[15] = buf[16] = buf[17] = 0;
		fb_put16(buf + 18, (uint16_t)(len - 54));
		buf[20] = 6; /* TCP */
		buf[21] = 64;
	} else {
		fb_put16(buf + 12, 0x0800);
		buf[14] = 0x45;
		buf[15] = 0;
		fb_put16(buf + 16, (uint16_t)(len - 14));
		fb_put16(buf + 20, 0x4000); /* don't fragment, no offset */
		buf[22] = 64;
		buf[23] = 6; /* TCP */
	}
	buf[l4 + 12] = 5 << 4; /* a 20-byte TCP header; the rest keeps the pattern */
}

int world_create(struct world *w, enum back_tx_mode mode, const struct back_config *override)
{
	struct back_config cfg;

	memset(w, 0, sizeof(*w));
	w->hv = hv_create(NULL);
	w->store = store_create(NULL);
	w->loop = loop_create();
	if (!w->hv || !w->store || !w->loop || sw_create(NULL, &w->sw) < 0)
		return -1;
	back_config_default(&cfg);
	if (override)
		cfg = *override;
	cfg.loop = w->loop;
	cfg.tx_mode = mode;
	w->back = back_create(&cfg, w->hv, w->store, w->sw);
	return w->back ? 0 : -1;
}

void world_destroy(struct world *w)
{
	back_destroy(w->back);
	sw_destroy(w->sw);
	store_destroy(w->store);
	hv_destroy(w->hv);
	loop_destroy(w->loop);
}

int ff_create(struct ff *f, struct world *w, uint32_t devid)
{
	int fd, gfd, rc;

	memset(f, 0, sizeof(*f));
	f->hv = w->hv;
	f->store = w->store;
	f->devid = devid;
	f->npages = FF_MAX_QUEUES * FF_PAGES_PER_Q;
	fd = memfd_create("ff-guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, (off_t)f->npages * HV_PAGE_SIZE) < 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		return -1;
	f->mem =
	    mmap(NULL, (size_t)f->npages * HV_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (f->mem == MAP_FAILED)
		return -1;
	rc = hv_domain_create(w->hv, fd, f->npages, &f->domid);
	if (rc < 0)
		return rc;
	rc = store_domain_introduce(w->store, f->domid);
	if (rc < 0)
		return rc;
	gfd = hv_domain_gnttab_fd(w->hv, f->domid);
	f->gt_size = (size_t)hv_domain_nr_grants(w->hv, f->domid) * sizeof(grant_entry_v1_t);
	f->gt = mmap(NULL, f->gt_size, PROT_READ | PROT_WRITE, MAP_SHARED, gfd, 0);
	if (f->gt == MAP_FAILED)
		return -1;
	snprintf(f->fe_path, sizeof(f->fe_path), "/local/domain/%u/device/vif/%u", f->domid, devid);
	return hv_gntshr_init(&f->gs, f->gt, (uint32_t)(f->gt_size / sizeof(grant_entry_v1_t)));
}

static grant_ref_t grant(struct ff *f, uint32_t frame, bool ro)
{
	grant_ref_t ref = 0;

	if (hv_gntshr_alloc_ref(&f->gs, &ref) < 0 ||
	    hv_gntshr_grant_access(&f->gs, ref, 0, frame, ro) < 0)
		abort();
	return ref;
}

static void fe_write(struct ff *f, const char *dir, const char *key, unsigned long v)
{
	char path[160], val[24];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	snprintf(val, sizeof(val), "%lu", v);
	if (store_write(f->store, path, val, strlen(val)) < 0)
		abort();
}

void ff_set_state(struct ff *f, enum xenbus_state s)
{
	fe_write(f, f->fe_path, "state", s);
}

int ff_connect(struct ff *f, const struct ff_opts *o)
{
	unsigned int nq = o->nq ? o->nq : 1;
	char dir[96];

	f->nq = nq;
	f->split = o->split;
	for (unsigned int i = 0; i < nq; i++) {
		struct ff_queue *q = &f->q[i];
		uint32_t base = i * FF_PAGES_PER_Q;
		netif_tx_sring_t *txs;
		netif_rx_sring_t *rxs;

		memset(q, 0, sizeof(*q));
		for (unsigned int j = 0; j < FF_RING; j++)
			q->id_free[j] = (uint16_t)(FF_RING - 1 - j);
		q->nid_free = FF_RING;
		q->tx_ring_frame = base;
		q->rx_ring_frame = base + 1;
		q->tx_buf0 = base + 2;
		q->rx_buf0 = base + 2 + FF_RING;
		txs = (void *)(f->mem + (size_t)q->tx_ring_frame * HV_PAGE_SIZE);
		rxs = (void *)(f->mem + (size_t)q->rx_ring_frame * HV_PAGE_SIZE);
		SHARED_RING_INIT(txs);
		FRONT_RING_INIT(&q->tx, txs, HV_PAGE_SIZE);
		SHARED_RING_INIT(rxs);
		FRONT_RING_INIT(&q->rx, rxs, HV_PAGE_SIZE);
		q->tx_ring_ref = grant(f, q->tx_ring_frame, false);
		q->rx_ring_ref = grant(f, q->rx_ring_frame, false);
		for (unsigned int j = 0; j < FF_RING; j++) {
			q->tx_gref[j] = grant(f, q->tx_buf0 + j, true);
			q->rx_gref[j] = grant(f, q->rx_buf0 + j, false);
		}
		if (hv_evtchn_alloc_unbound(f->hv, f->domid, 0, &q->port_tx) < 0)
			return -1;
		q->port_rx = q->port_tx;
		if (o->split && hv_evtchn_alloc_unbound(f->hv, f->domid, 0, &q->port_rx) < 0)
			return -1;

		if (nq == 1)
			snprintf(dir, sizeof(dir), "%s", f->fe_path);
		else
			snprintf(dir, sizeof(dir), "%s/queue-%u", f->fe_path, i);
		if (!o->omit_tx_ring_ref)
			fe_write(f, dir, "tx-ring-ref", q->tx_ring_ref);
		fe_write(f, dir, "rx-ring-ref", q->rx_ring_ref);
		if (o->split) {
			fe_write(f, dir, "event-channel-tx", q->port_tx);
			fe_write(f, dir, "event-channel-rx", q->port_rx);
		} else {
			fe_write(f, dir, "event-channel", q->port_tx);
		}
	}
	if (o->write_nq)
		fe_write(f, f->fe_path, "multi-queue-num-queues", o->write_nq);
	else if (nq > 1)
		fe_write(f, f->fe_path, "multi-queue-num-queues", nq);
	if (!o->no_rx_copy)
		fe_write(f, f->fe_path, "request-rx-copy", 1);
	if (o->sg)
		fe_write(f, f->fe_path, "feature-sg", 1);
	if (o->gso4)
		fe_write(f, f->fe_path, "feature-gso-tcpv4", 1);
	if (o->gso6)
		fe_write(f, f->fe_path, "feature-gso-tcpv6", 1);
	if (o->rx_notify)
		fe_write(f, f->fe_path, "feature-rx-notify", 1);
	if (o->mcast_ctrl)
		fe_write(f, f->fe_path, "request-multicast-control", 1);
	if (o->ipv6_csum)
		fe_write(f, f->fe_path, "feature-ipv6-csum-offload", 1);
	if (o->no_csum)
		fe_write(f, f->fe_path, "feature-no-csum-offload", 1);
	if (o->persistent) {
		fe_write(f, f->fe_path, "feature-persistent", 1);
		if (o->persistent_grants >= 0)
			fe_write(f, f->fe_path, "persistent-grants",
				 (unsigned long)o->persistent_grants);
	}
	ff_set_state(f, XenbusStateConnected);
	return 0;
}

void ff_teardown(struct ff *f)
{
	for (unsigned int i = 0; i < f->nq; i++) {
		struct ff_queue *q = &f->q[i];

		hv_gntshr_end_access(&f->gs, q->tx_ring_ref);
		hv_gntshr_end_access(&f->gs, q->rx_ring_ref);
		for (unsigned int j = 0; j < FF_RING; j++) {
			hv_gntshr_end_access(&f->gs, q->tx_gref[j]);
			hv_gntshr_end_access(&f->gs, q->rx_gref[j]);
		}
		hv_evtchn_close(f->hv, f->domid, q->port_tx);
		if (f->split)
			hv_evtchn_close(f->hv, f->domid, q->port_rx);
	}
	f->nq = 0;
}

void ff_destroy(struct ff *f, struct hv_leak *leak)
{
	hv_domain_destroy(f->hv, f->domid, leak);
	store_domain_release(f->store, f->domid);
	hv_gntshr_fini(&f->gs);
	munmap(f->gt, f->gt_size);
	munmap(f->mem, (size_t)f->npages * HV_PAGE_SIZE);
}

long xs_read_long(struct store *s, const char *dir, const char *key)
{
	char path[160], *val;
	long v;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	if (store_read(s, path, &val, NULL) < 0)
		return -1;
	v = strtol(val, NULL, 10);
	free(val);
	return v;
}

uint8_t *ff_tx_page(struct ff *f, unsigned int qi, RING_IDX idx)
{
	return f->mem + (size_t)(f->q[qi].tx_buf0 + (idx & (FF_RING - 1))) * HV_PAGE_SIZE;
}

static uint8_t *rx_page(struct ff *f, unsigned int qi, RING_IDX idx)
{
	return f->mem + (size_t)(f->q[qi].rx_buf0 + (idx & (FF_RING - 1))) * HV_PAGE_SIZE;
}

unsigned int ff_tx_free(struct ff *f, unsigned int qi)
{
	return RING_FREE_REQUESTS(&f->q[qi].tx);
}

int ff_tx_frame(struct ff *f, unsigned int qi, const uint8_t *frame, uint32_t len,
		const struct ff_txopt *opt)
{
	struct ff_queue *q = &f->q[qi];
	uint32_t slot_max = opt && opt->slot_max ? opt->slot_max : HV_PAGE_SIZE;
	uint32_t ndata = (len + slot_max - 1) / slot_max, off = 0;
	bool gso = opt && opt->gso_type;
	RING_IDX idx = q->tx.req_prod_pvt;

	if (ndata == 0)
		ndata = 1;
	if (ff_tx_free(f, qi) < ndata + gso || q->nid_free < ndata)
		return -ENOSPC;
	for (uint32_t k = 0; k < ndata; k++) {
		uint32_t chunk = len - off < slot_max ? len - off : slot_max;
		netif_tx_request_t *r = RING_GET_REQUEST(&q->tx, idx);
		uint16_t id = q->id_free[--q->nid_free];

		q->id_busy[id] = true;
		memcpy(f->mem + (size_t)(q->tx_buf0 + id) * HV_PAGE_SIZE, frame + off, chunk);
		r->gref = q->tx_gref[id];
		r->offset = 0;
		r->id = id;
		r->size = (uint16_t)(k == 0 ? len : chunk);
		r->flags = k + 1 < ndata ? NETTXF_more_data : 0;
		if (k == 0 && opt)
			r->flags |= opt->flags;
		off += chunk;
		idx++;
		if (k == 0 && gso) {
			netif_extra_info_t ex = {.type = XEN_NETIF_EXTRA_TYPE_GSO};

			r->flags |= NETTXF_extra_info;
			ex.u.gso.size = opt->gso_size;
			ex.u.gso.type = opt->gso_type;
			memcpy(RING_GET_REQUEST(&q->tx, idx), &ex, sizeof(ex));
			idx++;
		}
	}
	q->tx.req_prod_pvt = idx;
	return 0;
}

void ff_tx_raw(struct ff *f, unsigned int qi, const netif_tx_request_t *reqs, unsigned int n)
{
	struct ff_queue *q = &f->q[qi];

	for (unsigned int i = 0; i < n; i++)
		*RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++) = reqs[i];
}

static void push(struct ff *f, RING_IDX *prodp, RING_IDX new, RING_IDX *eventp, evtchn_port_t port)
{
	RING_IDX old = __atomic_load_n(prodp, __ATOMIC_RELAXED);

	__atomic_store_n(prodp, new, __ATOMIC_SEQ_CST);
	if ((RING_IDX)(new - __atomic_load_n(eventp, __ATOMIC_SEQ_CST)) < (RING_IDX)(new - old))
		hv_evtchn_notify(f->hv, f->domid, port);
}

void ff_tx_push(struct ff *f, unsigned int qi)
{
	struct ff_queue *q = &f->q[qi];

	push(f, &q->tx.sring->req_prod, q->tx.req_prod_pvt, &q->tx.sring->req_event, q->port_tx);
}

unsigned int ff_tx_reap(struct ff *f, unsigned int qi)
{
	struct ff_queue *q = &f->q[qi];
	RING_IDX prod = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE), i;
	unsigned int n = 0;

	for (i = q->tx.rsp_cons; i != prod; i++, n++) {
		netif_tx_response_t r;

		RING_COPY_RESPONSE(&q->tx, i, &r);
		q->tx_rsp_count++;
		if (r.status == NETIF_RSP_NULL) {
			q->tx_rsp_null++;
			continue;
		}
		q->tx_status[r.id & (FF_RING - 1)] = r.status;
		if (q->id_busy[r.id & (FF_RING - 1)]) {
			q->id_busy[r.id & (FF_RING - 1)] = false;
			q->id_free[q->nid_free++] = r.id & (FF_RING - 1);
		}
		if (r.status == NETIF_RSP_OKAY)
			q->tx_rsp_okay++;
		else
			q->tx_rsp_error++;
	}
	q->tx.rsp_cons = prod;
	__atomic_store_n(&q->tx.sring->rsp_event, prod + 1, __ATOMIC_SEQ_CST);
	return n;
}

void ff_rx_post_req(struct ff *f, unsigned int qi, uint16_t id, grant_ref_t gref)
{
	struct ff_queue *q = &f->q[qi];
	netif_rx_request_t *r = RING_GET_REQUEST(&q->rx, q->rx.req_prod_pvt++);

	r->id = id;
	r->gref = gref;
	push(f, &q->rx.sring->req_prod, q->rx.req_prod_pvt, &q->rx.sring->req_event, q->port_rx);
}

void ff_rx_post_gref(struct ff *f, unsigned int qi, grant_ref_t gref)
{
	ff_rx_post_req(f, qi, (uint16_t)(f->q[qi].rx.req_prod_pvt & (FF_RING - 1)), gref);
}

/* Write @n RX requests at req_prod_pvt (bounded by free slots); returns how many. */
static unsigned int rx_write(struct ff_queue *q, unsigned int n)
{
	unsigned int room = RING_FREE_REQUESTS(&q->rx);

	if (n > room)
		n = room;
	for (unsigned int i = 0; i < n; i++) {
		RING_IDX idx = q->rx.req_prod_pvt++;
		netif_rx_request_t *r = RING_GET_REQUEST(&q->rx, idx);

		r->id = (uint16_t)(idx & (FF_RING - 1));
		r->gref = q->rx_gref[idx & (FF_RING - 1)];
	}
	return n;
}

unsigned int ff_rx_post_quiet(struct ff *f, unsigned int qi, unsigned int n)
{
	struct ff_queue *q = &f->q[qi];

	n = rx_write(q, n);
	__atomic_store_n(&q->rx.sring->req_prod, q->rx.req_prod_pvt, __ATOMIC_SEQ_CST);
	return n;
}

unsigned int ff_rx_post(struct ff *f, unsigned int qi, unsigned int n)
{
	struct ff_queue *q = &f->q[qi];

	n = rx_write(q, n);
	if (n)
		push(f, &q->rx.sring->req_prod, q->rx.req_prod_pvt, &q->rx.sring->req_event,
		     q->port_rx);
	return n;
}

int ff_rx_recv(struct ff *f, unsigned int qi, uint8_t *buf, uint32_t cap, struct ff_rxinfo *info)
{
	struct ff_queue *q = &f->q[qi];
	RING_IDX prod = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
	RING_IDX i = q->rx.rsp_cons;
	netif_rx_response_t r;
	uint32_t len = 0;
	bool more, error = false, toobig = false;

	memset(info, 0, sizeof(*info));
	if (i == prod)
		return -EAGAIN;
	RING_COPY_RESPONSE(&q->rx, i, &r);
	info->flags = r.flags;
	more = r.flags & NETRXF_more_data;
	for (;;) {
		RING_IDX data_idx = i;

		if (r.status < 0) {
			error = true;
		} else if (len + (uint32_t)r.status > cap ||
			   (uint32_t)r.offset + (uint32_t)r.status > HV_PAGE_SIZE) {
			toobig = true;
		} else {
			memcpy(buf + len, rx_page(f, qi, data_idx) + r.offset, (size_t)r.status);
			len += (uint32_t)r.status;
		}
		info->slots++;
		i++;
		/* Extras follow the first slot, chained by XEN_NETIF_EXTRA_FLAG_MORE. */
		for (bool ex_more = info->slots == 1 && (r.flags & NETRXF_extra_info); ex_more;) {
			netif_extra_info_t ex;

			if (i == prod || info->slots > 20)
				return -EAGAIN;
			memcpy(&ex, RING_GET_RESPONSE(&q->rx, i), sizeof(ex));
			if (ex.type == XEN_NETIF_EXTRA_TYPE_GSO) {
				info->gso_type = ex.u.gso.type;
				info->gso_size = ex.u.gso.size;
			} else if (ex.type == XEN_NETIF_EXTRA_TYPE_HASH) {
				info->hash = true;
				info->hash_type = ex.u.hash.type;
				info->hash_alg = ex.u.hash.algorithm;
				info->hash_value = (uint32_t)ex.u.hash.value[0] |
						   (uint32_t)ex.u.hash.value[1] << 8 |
						   (uint32_t)ex.u.hash.value[2] << 16 |
						   (uint32_t)ex.u.hash.value[3] << 24;
			}
			ex_more = ex.flags & XEN_NETIF_EXTRA_FLAG_MORE;
			info->slots++;
			i++;
		}
		if (!more)
			break;
		if (i == prod || info->slots > 20)
			return -EAGAIN;
		RING_COPY_RESPONSE(&q->rx, i, &r);
		more = r.flags & NETRXF_more_data;
	}
	q->rx.rsp_cons = i;
	__atomic_store_n(&q->rx.sring->rsp_event, i + 1, __ATOMIC_SEQ_CST);
	info->error = error;
	if (error)
		return -EIO;
	return toobig ? -EMSGSIZE : (int)len;
}
