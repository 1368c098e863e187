// SPDX-License-Identifier: MIT
/* fake_port.c - test ports that record what they were given, and test packets */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_port.h"

struct fake_rec fake_log[FAKE_LOG];
unsigned int fake_nlog;
struct fake_pkt fake_pkts[FAKE_PKTS];
uint64_t fake_now_ns;

void fake_reset(void)
{
	memset(fake_pkts, 0, sizeof(fake_pkts));
	fake_nlog = 0;
	fake_now_ns = 1000ULL * 1000000000ULL;
}

uint64_t fake_clock(void *arg)
{
	return fake_now_ns;
}

struct sw *fake_sw(uint32_t fdb_max, uint32_t mac_limit)
{
	struct sw_config cfg;
	struct sw *sw = NULL;

	sw_config_init(&cfg);
	cfg.clock = fake_clock;
	if (fdb_max)
		cfg.fdb_max = fdb_max;
	if (mac_limit)
		cfg.port_mac_limit = mac_limit;
	assert_int_equal(sw_create(&cfg, &sw), 0);
	return sw;
}

static void fake_done(struct sw_pkt *pkt)
{
	struct fake_pkt *fp = (struct fake_pkt *)pkt;

	assert_int_equal(atomic_load(&pkt->refs), 0);
	fp->done_calls++;
}

struct sw_pkt *fake_frame(unsigned int id, const uint8_t *dst, const uint8_t *src, uint32_t len)
{
	struct fake_pkt *fp;

	assert_true(id < FAKE_PKTS);
	fp = &fake_pkts[id];
	memset(fp, 0, sizeof(*fp));
	fp->id = id;
	memcpy(fp->hdr, dst, 6);
	memcpy(fp->hdr + 6, src, 6);
	fp->hdr[12] = 0x08; /* IPv4 */
	fp->pkt.hdr = fp->hdr;
	fp->pkt.hdr_len = 14;
	fp->pkt.len = len;
	fp->pkt.priv = fp;
	sw_pkt_init(&fp->pkt, fake_done);
	return &fp->pkt;
}

static unsigned int fake_xmit(struct sw_port *p, struct sw_pkt **pkts, unsigned int n)
{
	struct fake_port *fp = p->priv;
	unsigned int ok = n < fp->accept ? n : fp->accept;

	fp->calls++;
	for (unsigned int i = 0; i < ok; i++) {
		struct fake_pkt *pk = pkts[i]->priv;

		assert_true(fake_nlog < FAKE_LOG);
		fake_log[fake_nlog++] = (struct fake_rec){.port = fp->id, .pkt = pk->id};
		assert_int_equal(pk->done_calls, 0);
		if (fp->hold) {
			assert_true(fp->nheld < FAKE_HOLD);
			fp->held[fp->nheld++] = pkts[i];
		} else {
			sw_pkt_put(pkts[i]);
		}
	}
	return ok;
}

static const struct sw_port_ops fake_ops = {.xmit = fake_xmit};

void fake_port_add(struct sw *sw, struct fake_port *fp, unsigned int id)
{
	char name[16];

	memset(fp, 0, sizeof(*fp));
	fp->id = id;
	fp->accept = ~0U;
	snprintf(name, sizeof(name), "p%u", id);
	assert_int_equal(sw_port_add(sw, name, &fake_ops, fp, &fp->port), 0);
}

void fake_port_release(struct fake_port *fp)
{
	for (unsigned int i = 0; i < fp->nheld; i++)
		sw_pkt_put(fp->held[i]);
	fp->nheld = 0;
}

unsigned int fake_send(struct sw *sw, struct fake_port *in, unsigned int id, const uint8_t *dst,
		       const uint8_t *src)
{
	struct sw_pkt *p = fake_frame(id, dst, src, 60);

	return sw_forward(sw, in->port, &p, 1);
}

unsigned int fake_count_pkt(unsigned int id)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < fake_nlog; i++)
		n += fake_log[i].pkt == id;
	return n;
}

unsigned int fake_count_port(unsigned int port)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < fake_nlog; i++)
		n += fake_log[i].port == port;
	return n;
}

bool fake_delivered(unsigned int port, unsigned int id)
{
	for (unsigned int i = 0; i < fake_nlog; i++)
		if (fake_log[i].port == port && fake_log[i].pkt == id)
			return true;
	return false;
}

uint64_t fake_stat(struct fake_port *fp, const char *name)
{
	unsigned int n;
	const struct sw_stat_desc *d = sw_port_stats_names(&n);

	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(d[i].name, name))
			return sw_stat_read(&fp->port->stats, &d[i]);
	fail_msg("no counter %s", name);
	return 0;
}

void fake_mac(uint8_t mac[6], unsigned int n)
{
	mac[0] = 0x02; /* locally administered unicast */
	mac[1] = 0;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}
