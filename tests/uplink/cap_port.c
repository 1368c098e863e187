// SPDX-License-Identifier: MIT
/* cap_port.c - for the uplink ports' tests: a switch port that keeps what it is given, test frames */
#include <string.h>

#include "cap_port.h"

static unsigned int cap_xmit(struct sw_port *sp, struct sw_pkt **pkts, unsigned int n)
{
	struct capture *c = sp->priv;

	pthread_mutex_lock(&c->lock);
	for (unsigned int i = 0; i < n; i++) {
		struct sw_pkt *pkt = pkts[i];
		uint32_t off = 0;

		if (c->n < CAP_MAX && pkt->len <= sizeof(c->frame[0]) && pkt->nfrags == 1 &&
		    pkt->frag[0].len == pkt->len) {
			memcpy(c->frame[c->n], pkt->frag[0].base, pkt->len);
			off = pkt->len;
		}
		c->len[c->n < CAP_MAX ? c->n : CAP_MAX - 1] = off;
		c->n += c->n < CAP_MAX;
		sw_pkt_put(pkt);
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}

const struct sw_port_ops cap_ops = {.xmit = cap_xmit};

unsigned int cap_count(struct capture *c)
{
	unsigned int n;

	pthread_mutex_lock(&c->lock);
	n = c->n;
	pthread_mutex_unlock(&c->lock);
	return n;
}

void tpkt_done(struct sw_pkt *pkt)
{
	((struct tpkt *)pkt)->done++;
}

struct sw_pkt *tpkt_init(struct tpkt *t, const uint8_t *frame, uint32_t len, uint16_t hdr_len,
			 bool split, uint8_t flags)
{
	memset(t, 0, sizeof(*t));
	t->pkt.hdr = frame;
	t->pkt.hdr_len = hdr_len;
	t->pkt.nfrags = 1;
	t->pkt.len = len;
	t->pkt.flags = flags;
	t->pkt.frag[0] = split ? (struct sw_pkt_frag){.base = frame + hdr_len, .len = len - hdr_len}
			       : (struct sw_pkt_frag){.base = frame, .len = len};
	sw_pkt_init(&t->pkt, tpkt_done);
	return &t->pkt;
}
