// SPDX-License-Identifier: MIT
/* capture_rec.c - pvnet capture: the records of a capture datagram, checked (a pure function) */
#include <errno.h>
#include <string.h>

#include "capture.h"

int capture_next(const uint8_t *dgram, size_t n, size_t *off, uint32_t snaplen,
		 struct capture_rec *out)
{
	struct sw_capture_hdr h;
	size_t left, rec;

	if (*off >= n)
		return 0;
	left = n - *off;
	if (left < sizeof(h))
		return -EBADMSG;
	memcpy(&h, dgram + *off, sizeof(h));
	/* At most min(len, snaplen) bytes, all of them in the datagram, padded. */
	if (h.caplen > h.len || h.caplen > snaplen || h.caplen > left - sizeof(h))
		return -EBADMSG;
	rec = sizeof(h) + h.caplen;
	rec += -rec % SW_CAPTURE_ALIGN;
	if (rec > left)
		return -EBADMSG;
	if (h.dir != SW_CAPTURE_IN && h.dir != SW_CAPTURE_OUT)
		return -EBADMSG;
	*out = (struct capture_rec){.ts_ns = h.ts_ns,
				    .len = h.len,
				    .caplen = h.caplen,
				    .dir = h.dir,
				    .data = dgram + *off + sizeof(h)};
	*off += rec;
	return 1;
}
