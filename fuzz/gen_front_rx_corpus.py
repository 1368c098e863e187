#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_front_rx_corpus.py - write the seed corpus of front_rx_fuzz: RX ring pages as a backend fills them.
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "front_rx")
os.makedirs(out, exist_ok=True)

DATA_VALIDATED, CSUM_BLANK, MORE_DATA, EXTRA_INFO = 1, 2, 4, 8
EXTRA_GSO, EXTRA_MCAST_ADD, EXTRA_HASH = 1, 2, 4
EXTRA_MORE = 1
GSO_TCPV4, GSO_TCPV6 = 1, 2
RSP_ERROR, RSP_DROPPED = -1, -2
RING = 256


def rsp(idx, offset, flags, status):
    return struct.pack("<HHHh", idx % RING, offset, flags, status)


def gso(size, typ, more=False):
    # netif_extra_info: type, flags, u.gso {size, type, pad, features}
    return struct.pack("<BBHBBH", EXTRA_GSO, EXTRA_MORE if more else 0, size, typ, 0, 0)


def hash_extra(htype, value, more=False):
    return struct.pack("<BBBB4s", EXTRA_HASH, EXTRA_MORE if more else 0, htype, 0, value)


def mcast(more=False):
    return struct.pack("<BB6s", EXTRA_MCAST_ADD, EXTRA_MORE if more else 0, bytes.fromhex("01005e000001"))


def ring(first, slots, prods, depth=RING):
    """@slots: responses (bytes) or (offset, flags, status) for data slots, from index @first;
    @prods: three rsp_prod values as offsets from @first."""
    body = b""
    for i, s in enumerate(slots):
        body += s if isinstance(s, bytes) else rsp(first + i, *s)
    return struct.pack("<IH3H", first & 0xFFFFFFFF, depth, *prods) + body


def multi(total, per):
    """A frame of @total bytes in slots of @per bytes (the last one shorter)."""
    out, left = [], total
    while left:
        n = min(per, left)
        left -= n
        out.append((0, MORE_DATA if left else 0, n))
    return out


seeds = {
    "one_slot": ring(0, [(0, DATA_VALIDATED, 60)], (1, 1, 1)),
    "one_slot_offset": ring(7, [(2048, CSUM_BLANK | DATA_VALIDATED, 1514)], (1, 1, 1)),
    "multi_slot_gso_v4": ring(
        100,
        [(0, CSUM_BLANK | EXTRA_INFO | MORE_DATA, 4096), gso(1448, GSO_TCPV4)]
        + [(0, MORE_DATA, 4096)] * 14 + [(0, 0, 4096 - 1)],
        (17, 17, 17)),
    "multi_slot_gso_v6_hash": ring(
        5,
        [(0, CSUM_BLANK | EXTRA_INFO | MORE_DATA, 4096), gso(1428, GSO_TCPV6, more=True),
         hash_extra(3, b"\x78\x56\x34\x12", more=True), mcast()]
        + [(0, MORE_DATA, 4096)] + [(0, 0, 1000)],
        (6, 6, 6)),
    "error_status": ring(0, [(0, 0, RSP_ERROR), (0, 0, 60)], (2, 2, 2)),
    "error_in_chain": ring(0, [(0, MORE_DATA, 1000), (0, MORE_DATA, RSP_DROPPED), (0, 0, 1000), (0, 0, 60)],
                           (4, 4, 4)),
    "bad_gso_type": ring(0, [(0, EXTRA_INFO, 100), gso(1448, 3), (0, 0, 60)], (3, 3, 3)),
    "gso_size_zero": ring(0, [(0, EXTRA_INFO, 100), gso(0, GSO_TCPV4), (0, 0, 60)], (3, 3, 3)),
    "runt_and_good": ring(0, [(0, 0, 10), (0, 0, 60)], (2, 2, 2)),
    "oversized_frame": ring(0, multi(4096 * 17, 4096), (17, 17, 17)),
    "max_frags": ring(0, multi(19 * 3000, 3000), (19, 19, 19)),
    "chain_too_long": ring(0, [(0, MORE_DATA, 100)] * 20, (20, 20, 20)),
    "too_many_extras": ring(0, [(0, EXTRA_INFO, 100)] + [mcast(more=True)] * 5, (6, 6, 6)),
    "extra_type_none": ring(0, [(0, EXTRA_INFO, 100), struct.pack("<BB6x", 0, 0)], (2, 2, 2)),
    "bad_id": ring(0, [rsp(5, 0, 0, 60)], (1, 1, 1)),
    "past_page": ring(0, [(4000, 0, 200)], (1, 1, 1)),
    "offset_page_end": ring(0, [(4096, 0, 0)], (1, 1, 1)),
    "incomplete_then_complete": ring(0, [(0, MORE_DATA, 3000), (0, MORE_DATA, 3000), (0, 0, 3000), (0, 0, 60)],
                                     (1, 2, 4)),
    "prod_beyond_posted": ring(0, [(0, 0, 60)] * 4, (2, 9, 9), depth=4),
    "prod_behind_cons": ring(0, [(0, 0, 60)] * 4, (4, 2, 4)),
    "index_wrap": ring(0xFFFFFFFC, multi(8 * 1500, 1500), (8, 8, 8)),
    "ring_wrap_refill": ring(250, [(0, 0, 60)] * RING, (100, 256, 300)),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
