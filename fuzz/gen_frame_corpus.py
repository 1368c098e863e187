#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_frame_corpus.py - write the seed corpus of frame_fuzz: GSO frames as a guest sends them to netback.
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "frame")
os.makedirs(out, exist_ok=True)

TCP, UDP = 6, 17
MAC = bytes.fromhex("00163e00000b") + bytes.fromhex("00163e00000a")


def frame(l3, proto, payload, vlan=False, opts=b"", exthdr=False, ext6=None):
    """Ethernet [+ 802.1Q] + IPv4/IPv6 [+ hop-by-hop, or @ext6 = (protocol number, the
    header's bytes after its next-header byte)] + TCP (with @opts) or UDP + @payload bytes."""
    eth = MAC + (struct.pack(">HH", 0x8100, 7) if vlan else b"")
    if proto == TCP:
        l4 = struct.pack(">HHIIBBHHH", 40000, 80, 0xFFFFF000, 1, (5 + len(opts) // 4) << 4, 0x99, 65535, 0, 0) + opts
    else:
        l4 = struct.pack(">HHHH", 40000, 53, 8 + payload, 0)
    body = l4 + bytes((i * 7 + 3) & 0xFF for i in range(payload))
    if l3 == 4:
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 0xFFFE, 0x4000, 64, proto, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        return eth + struct.pack(">H", 0x0800) + ip + body
    nh = 0 if exthdr else proto
    ext = bytes([proto, 0, 1, 4, 0, 0, 0, 0]) if exthdr else b""
    if ext6:
        nh, ext = ext6[0], bytes([proto]) + ext6[1]
    ip = struct.pack(">IHBB16s16s", 6 << 28, len(ext) + len(body), nh, 64, b"\xfd" + b"\0" * 14 + b"\x01",
                     b"\xfd" + b"\0" * 14 + b"\x02")
    return eth + struct.pack(">H", 0x86DD) + ip + ext + body


def seed(name, gso, blank, pages, mss, f):
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(bytes([gso | (4 if blank else 0) | pages << 4]) + struct.pack("<H", mss) + f)


ts = b"\x01\x01\x08\x0a" + b"\0\0\0\1\0\0\0\2"
seed("v4-1448", 1, False, 0, 1448, frame(4, TCP, 3000, opts=ts))
seed("v4-blank-vlan", 1, True, 0, 1000, frame(4, TCP, 2500, vlan=True))
seed("v4-pages", 1, False, 15, 1448, frame(4, TCP, 100, opts=ts))
seed("v6-1428", 2, False, 0, 1428, frame(6, TCP, 5000, opts=ts))
seed("v6-ext-blank", 2, True, 3, 700, frame(6, TCP, 200, exthdr=True))
seed("v4-tiny-mss", 1, False, 0, 1, frame(4, TCP, 255))
seed("v4-too-many", 1, False, 1, 10, frame(4, TCP, 50))
seed("v4-as-v6", 2, False, 0, 1000, frame(4, TCP, 3000))
seed("udp", 1, False, 0, 1000, frame(4, UDP, 3000))
seed("mss0", 1, False, 0, 0, frame(4, TCP, 3000))
seed("hdrs-only", 1, False, 0, 1000, frame(4, TCP, 0))
seed("v6-udp-csum", 0, False, 0, 0, frame(6, UDP, 333))
# Behind an atomic fragment or AH: refused; behind routing headers with segments left:
# cut, summed over the final destination (type 2's home address, Segment List[0]).
home = bytes([0x20, 1, 0xD, 0xB8]) + bytes(11) + b"\xaa"
seed("v6-atomic-frag", 2, False, 0, 1000, frame(6, TCP, 3000, ext6=(44, bytes(7))))
seed("v6-ah", 2, True, 0, 1000, frame(6, TCP, 3000, ext6=(51, bytes([4]) + bytes(22))))
seed("v6-rthdr2", 2, False, 0, 1000, frame(6, TCP, 3000, opts=ts, ext6=(43, bytes([2, 2, 1]) + bytes(4) + home)))
seed("v6-srh", 2, True, 0, 1000, frame(6, TCP, 3000, ext6=(43, bytes([4, 4, 1, 1]) + bytes(3) + home + bytes(16))))
seed("v6-rpl", 2, False, 0, 1000, frame(6, TCP, 3000, ext6=(43, bytes([2, 3, 1]) + bytes(20))))
