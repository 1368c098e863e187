#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_back_tx_corpus.py - write the seed corpus of back_tx_fuzz: TX ring slots as a frontend writes them.
import os
import struct
import sys

MORE, EXTRA, CSUM = 4, 8, 1
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "back_tx")
os.makedirs(out, exist_ok=True)


def req(gref, off, flags, rid, size):
    return struct.pack("<IHHHH", gref, off, flags, rid, size)


def gso(size, typ, more=False):
    # netif_extra_info: type 1 (GSO), flags, size, gso type, pad, features; padded to 12 bytes
    return struct.pack("<BBHBBH", 1, 1 if more else 0, size, typ, 0, 0) + b"\0" * 4


def mcast(typ, mac, more=False):
    # netif_extra_info: type 2 (MCAST_ADD) or 3 (MCAST_DEL), flags, 6-byte address; padded to 12 bytes
    return struct.pack("<BB", typ, 1 if more else 0) + bytes(mac) + b"\0" * 4


def chain(total, nslots, first_extra=None):
    per = total // nslots
    s = req(8, 0, (MORE if nslots > 1 else 0) | (EXTRA if first_extra else 0) | CSUM, 0, total)
    if first_extra:
        s += first_extra
    for i in range(1, nslots):
        last = i == nslots - 1
        s += req(9 + i, 0, 0 if last else MORE, i, per)
    return s


seeds = {
    "single_60": req(8, 0, 0, 0, 60),
    "single_page_overflow": req(8, 4000, 0, 0, 200),
    "runt": req(8, 0, 0, 0, 10),
    "two_slots": req(8, 0, MORE, 0, 6000) + req(9, 0, 0, 1, 2000),
    "gso_v4": req(8, 0, MORE | EXTRA | CSUM, 0, 9000) + gso(1448, 1) + req(9, 0, MORE, 1, 4096)
    + req(10, 0, 0, 2, 904),
    "zero_size_later": req(8, 0, MORE, 0, 100) + req(0xdead, 0, 0, 1, 0),
    "bad_extra_type": req(8, 0, EXTRA, 0, 100) + struct.pack("<BB", 0, 0) + b"\0" * 10,
    "endless_extras": req(8, 0, EXTRA, 0, 100) + (struct.pack("<BBHBBH", 1, 1, 1448, 1, 0, 0) + b"\0" * 4) * 8,
    "size_mismatch": req(8, 0, MORE, 0, 100) + req(9, 0, 0, 1, 4000),
    "max_packet": chain(65535, 17),
    "slots_19": chain(19 * 60, 19),
    "slots_20": chain(20 * 60, 20),
    "slots_22": chain(22 * 60, 22),
    "chain_past_end": req(8, 0, MORE, 0, 200) + req(9, 0, MORE, 1, 100),
    "mcast_add_then_frame": req(8, 0, EXTRA, 0, 0) + mcast(2, [1, 0, 0x5e, 0, 0, 0xfb]) + req(8, 0, 0, 1, 60),
    "mcast_del_more_data": req(8, 0, EXTRA | MORE, 0, 0) + mcast(3, [0x33, 0x33, 0, 0, 0, 1], True)
    + gso(1448, 1) + req(9, 0, 0, 1, 60),
    "back_to_back": req(8, 0, 0, 0, 60) * 4 + req(8, 0, MORE, 4, 3000) + req(9, 0, 0, 5, 1000),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
