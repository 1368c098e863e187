// SPDX-License-Identifier: MIT
/* back_tx_fuzz.c - libFuzzer harness for netback's TX slot parser (back_tx_ring2pkt) */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "back/tx.h"

/*
 * The input is a run of 12-byte TX requests as a frontend would write them
 * to its ring; the harness parses packet after packet, as the TX worker
 * does on its snapshot, and checks the parser's promises: it consumes
 * between 1 and BACK_TX_MAX_SLOTS slots, never more than it was given,
 * describes only slots it consumed, an accepted packet's data slots add
 * up to its length, each within one page, and a multicast filter request
 * is its first slot and extras only.  A broken promise traps.
 */

#define FUZZ_MAX_SLOTS 256 /* one ring's worth */

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	netif_tx_request_t slots[FUZZ_MAX_SLOTS];
	unsigned int n = (unsigned int)(size / sizeof(slots[0])), pos = 0;

	if (n > FUZZ_MAX_SLOTS)
		n = FUZZ_MAX_SLOTS;
	memcpy(slots, data, n * sizeof(slots[0]));
	while (pos < n) {
		struct back_tx_parse p;
		int rc = back_tx_ring2pkt(slots + pos, n - pos, &p);

		(void)rc;
		if (p.verdict == BACK_TX_FATAL)
			break;
		check(p.verdict == BACK_TX_OK || p.verdict == BACK_TX_DROP ||
		      p.verdict == BACK_TX_MCAST);
		check(p.nslots >= 1 && p.nslots <= n - pos && p.nslots <= BACK_TX_MAX_SLOTS);
		if (p.verdict == BACK_TX_MCAST)
			check(p.nslots == 1u + p.nextras &&
			      (p.mcast_op == XEN_NETIF_EXTRA_TYPE_MCAST_ADD ||
			       p.mcast_op == XEN_NETIF_EXTRA_TYPE_MCAST_DEL));
		if (p.verdict == BACK_TX_OK) {
			uint32_t sum = 0;

			check(p.ndata >= 1 && p.ndata <= BACK_TX_MAX_DATA);
			check(p.len >= 14 && p.len <= 65535);
			for (unsigned int i = 0; i < p.ndata; i++) {
				const netif_tx_request_t *s = &slots[pos + p.data[i]];

				check(p.data[i] < p.nslots);
				check(p.data_len[i] > 0);
				check((uint32_t)s->offset + p.data_len[i] <= 4096);
				sum += p.data_len[i];
			}
			check(sum == p.len);
			/*
			 * Every consumed slot is the first, an extra (right after it),
			 * a data slot or an empty one (answered at once, never
			 * mapped: XSA-448), and none is two of them.
			 */
			check(p.data[0] == 0);
			check((unsigned int)p.ndata + p.nempty + p.nextras == p.nslots);
			for (unsigned int j = 0; j < p.nempty; j++) {
				check(p.empty[j] > p.nextras && p.empty[j] < p.nslots);
				check(slots[pos + p.empty[j]].size == 0);
				for (unsigned int i = 0; i < p.ndata; i++)
					check(p.data[i] != p.empty[j]);
				for (unsigned int k = 0; k < j; k++)
					check(p.empty[k] != p.empty[j]);
			}
			for (unsigned int i = 1; i < p.ndata; i++)
				check(p.data[i] > p.nextras && p.data[i] > p.data[i - 1]);
		}
		pos += p.nslots;
	}
	return 0;
}
