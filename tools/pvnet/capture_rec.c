// SPDX-License-Identifier: MIT
/* capture_rec.c - pvnet capture: checking one capture datagram (a pure function) */
#include <errno.h>
#include <string.h>

#include "capture.h"

int capture_record(const uint8_t *dgram, size_t n, uint32_t snaplen, struct capture_rec *out)
{
	struct sw_capture_hdr h;
	size_t caplen;

	if (n < sizeof(h))
		return -EBADMSG;
	memcpy(&h, dgram, sizeof(h));
	caplen = n - sizeof(h);
	/* Exactly min(len, snaplen) bytes follow: no more, and no fewer. */
	if (caplen != (h.len < snaplen ? h.len : snaplen))
		return -EBADMSG;
	if (h.dir != SW_CAPTURE_IN && h.dir != SW_CAPTURE_OUT)
		return -EBADMSG;
	*out = (struct capture_rec){.ts_ns = h.ts_ns,
				    .len = h.len,
				    .caplen = (uint32_t)caplen,
				    .dir = h.dir,
				    .data = dgram + sizeof(h)};
	return 0;
}
