// SPDX-License-Identifier: MIT
// mcast.c - the frontend's multicast filter: MCAST_ADD/DEL requests in, a verdict per frame out

/*
 * Theory of Operation
 *
 * netif.h's multicast control: a frontend that sets request-multicast-
 * control (sampled at connect and, since we advertise
 * feature-dynamic-multicast-control, whenever it changes) receives only the
 * multicast frames whose destination it subscribed to, plus broadcasts.  It
 * subscribes and unsubscribes with "dummy" TX requests carrying an
 * MCAST_ADD or MCAST_DEL extra (tx_parse.c), on any of its queues, and may
 * do so before or without turning the filter on.
 *
 * The filter is BACK_MCAST_MAX words, each 0 (free) or an address with
 * MCAST_USED set.  Writers (the vif's TX workers, on a request) serialise
 * on mcast_lock and store one word at a time; readers (xmit(), on any
 * thread, for each multicast frame while the filter is on) scan the words
 * without a lock.  A reader racing a change sees the filter just before or
 * just after it, as a frame crossing an IGMP join would on a real NIC.
 */

#include <string.h>

#include "back/internal.h"

#define MCAST_USED (1ULL << 48)

static uint64_t mcast_word(const uint8_t a[6])
{
	uint64_t w = MCAST_USED;

	for (int i = 0; i < 6; i++)
		w |= (uint64_t)a[i] << (8 * i);
	return w;
}

int16_t back_mcast_apply(struct back_vif *vif, uint8_t op, const uint8_t addr[6])
{
	uint64_t want = mcast_word(addr), find = op == XEN_NETIF_EXTRA_TYPE_MCAST_ADD ? 0 : want;
	int16_t st = op == XEN_NETIF_EXTRA_TYPE_MCAST_ADD ? NETIF_RSP_ERROR : NETIF_RSP_OKAY;

	pthread_mutex_lock(&vif->mcast_lock);
	for (unsigned int i = 0; i < BACK_MCAST_MAX; i++) {
		if (atomic_load_explicit(&vif->mcast[i], memory_order_relaxed) != find)
			continue;
		atomic_store_explicit(&vif->mcast[i],
				      op == XEN_NETIF_EXTRA_TYPE_MCAST_ADD ? want : 0,
				      memory_order_relaxed);
		st = NETIF_RSP_OKAY;
		break;
	}
	pthread_mutex_unlock(&vif->mcast_lock);
	return st;
}

bool back_mcast_drop(struct back_vif *vif, const uint8_t dst[6])
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint64_t want;

	if (!(dst[0] & 1) || !memcmp(dst, bcast, sizeof(bcast)))
		return false;
	want = mcast_word(dst);
	for (unsigned int i = 0; i < BACK_MCAST_MAX; i++)
		if (atomic_load_explicit(&vif->mcast[i], memory_order_relaxed) == want)
			return false;
	return true;
}

unsigned int back_mcast_count(const struct back_vif *vif)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < BACK_MCAST_MAX; i++)
		n += atomic_load_explicit(&vif->mcast[i], memory_order_relaxed) != 0;
	return n;
}

void back_mcast_reset(struct back_vif *vif)
{
	for (unsigned int i = 0; i < BACK_MCAST_MAX; i++)
		atomic_store_explicit(&vif->mcast[i], 0, memory_order_relaxed);
}
