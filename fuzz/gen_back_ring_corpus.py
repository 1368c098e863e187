#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_back_ring_corpus.py - write the seed corpus of back_ring_fuzz: a hostile frontend's programs.
#
# An input is: world byte (bit 0 copy mode, bit 1 tx_hold_max_us 0), two option bytes
# (o1: sg, gso4, gso6, rx-notify, persistent, split, ctrl ring, mcast control;
# o2: bit 0 two queues, bits 1-6 persistent-grants, bit 7 ipv6 csum), then operations
# (fuzz/back_ring_fuzz.c, run_op(): the opcode byte modulo 20, bit 7 picks queue 1).
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "back_ring")
os.makedirs(out, exist_ok=True)

(TX_REQ, TX_EXTRA, TX_FRAME, TX_PUSH, TX_PROD, RX_POST, RX_RAW, RX_PROD, GNT, CTRL, CTRL_PROD, EVENT,
 KICK, ROUND_A, ROUND_PEERS, PEER_SEND, PEER_CONSUME, BUF_WRITE, LOOP, XS) = range(20)
NOPS = 20
SG, GSO4, GSO6, NOTIFY, PERSIST, SPLIT, CTRLRING, MCAST = (1 << i for i in range(8))
DST_B, DST_C, DST_BCAST, DST_MCAST4, DST_MCAST6, DST_UNKNOWN, DST_A = range(7)
MORE, EXTRA, CSUM = 4, 8, 1
A_GREF_RING_TX0, A_GREF_CTRL, A_GREF_TXBUF0 = 8, 12, 13  # refs A grants (fuzz: A_GREF0 + frame)
FULL = SG | GSO4 | GSO6 | NOTIFY


def op(code, q=0):
    v = code if q == 0 else 128 + (code - 128) % NOPS
    return bytes([v])


def u16(v):
    return struct.pack("<H", v & 0xffff)


def u32(v):
    return struct.pack("<I", v & 0xffffffff)


def gref_raw(ref):
    return bytes([0xf0]) + u32(ref)


def gref_frame(frame):
    return bytes([frame])  # < 0xc0: A_GREF0 + frame


def ipv4_tcp(total):
    # 12 bytes overlay from the EtherType: 0x0800, IPv4 header, TCP header (42 bytes)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total - 14, 1, 0x4000, 64, 6, 0, bytes([10, 0, 0, 1]),
                     bytes([10, 0, 0, 2]))
    tcp = struct.pack(">HHIIBBHHH", 1234, 80, 1, 0, 5 << 4, 0x18, 65535, 0, 0)
    return b"\x08\x00" + ip + tcp


def ipv4_udp(total, sport):
    # a flow of its own per source port: netback's flow hash picks the queue by it
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total - 14, 1, 0x4000, 64, 17, 0, bytes([10, 0, 0, 1]),
                     bytes([10, 0, 0, 2]))
    return b"\x08\x00" + ip + struct.pack(">HHHH", sport, 53, total - 34, 0)


def ipv6_tcp(total):
    ip = struct.pack(">IHBB16s16s", 6 << 28, total - 54, 6, 64, bytes(15) + b"\1", bytes(15) + b"\2")
    tcp = struct.pack(">HHIIBBHHH", 1234, 80, 1, 0, 5 << 4, 0x18, 65535, 0, 0)
    return b"\x86\xdd" + ip[:40] + tcp[:22]


def tx_frame(length, dst, smax=0, flags=0, gso=0, mss=0, overlay=b"", q=0):
    # len, sel (dst + slot size index << 3), opt (flags | gso type << 4), overlay, [mss / 8]
    s = op(TX_FRAME, q) + u16(length) + bytes([dst | smax << 3, flags | gso << 4])
    s += bytes([len(overlay)]) + overlay
    if gso:
        s += bytes([mss // 8])
    return s


def peer_send(length, dst=0, flags=0, gso=0, mss=0, overlay=b""):
    s = op(PEER_SEND) + u16(length) + bytes([dst, flags | gso << 4]) + bytes([len(overlay)]) + overlay
    if gso % 3:
        s += bytes([mss // 8 - 1])
    return s


def tx_req(rid, gref, offset, flags, size, q=0):
    return op(TX_REQ, q) + u16(rid) + gref + u16(offset) + bytes([flags]) + u16(size)


def tx_extra(typ, flags, addr, q=0):
    return op(TX_EXTRA, q) + bytes([typ, flags]) + bytes(addr)


def rx_post(n, q=0):
    return op(RX_POST, q) + bytes([n - 1])


def rounds_a(n, q=0):
    return op(ROUND_A, q) + bytes([n - 1])


def gnt(sel, flags, frame, domid=None):
    s = op(GNT) + bytes([sel]) + u16(flags)
    s += bytes([0xf0]) + u16(domid) if domid is not None else b"\0"
    return s + bytes([frame])


def ctrl(typ, data0=b"\0\0\0\0", d1=0, d2=0, rid=1):
    return op(CTRL) + u16(rid) + bytes([typ]) + data0 + u16(d1) + u16(d2)


def buf_write(frame, off, data):
    # frames from A_TXBUF0 (5): the byte is frame - 5
    return op(BUF_WRITE) + bytes([frame - 5]) + u16(off) + bytes([len(data)]) + data


def xs(key, val):
    return op(XS) + bytes([key, val])


PUSH = op(TX_PUSH)
PEERS = op(ROUND_PEERS) + b"\3"
CONSUME = op(PEER_CONSUME)
LOOP_ = op(LOOP)

seeds = {}
for w in range(4):
    seeds[f"basic_w{w}"] = (bytes([w, FULL | PERSIST, 0x7e]) + rx_post(64) + tx_frame(1000, DST_B) +
                            tx_frame(6000, DST_C) + tx_frame(200, DST_BCAST) + PUSH + rounds_a(2) +
                            peer_send(3000, DST_A) + peer_send(70000 % 65536, 1) + PEERS + rounds_a(2) +
                            CONSUME + PEERS + rounds_a(2))
seeds["map_mode_sg_off"] = (bytes([0, NOTIFY, 0]) + rx_post(32) + tx_frame(9000, DST_B, smax=1) + PUSH +
                            rounds_a(1) + peer_send(9000, DST_A) + PEERS + rounds_a(3))
seeds["gso_v4_to_c"] = (bytes([0, FULL, 0]) + tx_frame(20000, DST_C, flags=CSUM, gso=1, mss=1448,
                                                        overlay=ipv4_tcp(20000)) + PUSH + rounds_a(1) + PEERS)
seeds["gso_v6_to_b"] = (bytes([2, FULL | PERSIST, 0xfe]) + tx_frame(12000, DST_B, flags=CSUM, gso=2, mss=1400,
                                                                    overlay=ipv6_tcp(12000)) + PUSH +
                        rounds_a(1) + PEERS + rounds_a(1))
seeds["peer_gso_to_plain_a"] = (bytes([1, NOTIFY, 0]) + rx_post(64) +
                                peer_send(30000, DST_A, flags=CSUM, gso=1, mss=1448, overlay=ipv4_tcp(30000)) +
                                PEERS + rounds_a(4))
# Control ring: Toeplitz with a key and a mapping table, two queues.
key = bytes(range(40))
table = b"".join(u32(i & 1) for i in range(64))
seeds["ctrl_toeplitz_2q"] = (bytes([0, FULL | CTRLRING, 1]) + buf_write(40, 0, key[:15]) +
                             buf_write(40, 15, key[15:30]) + buf_write(40, 30, key[30:]) +
                             buf_write(41, 0, table[:15]) +
                             ctrl(7, u32(1)) + ctrl(2, u32(0xf)) + ctrl(3, gref_frame(40), 40) + ctrl(5, u32(64)) +
                             ctrl(6, gref_frame(41), 4, 0) + ctrl(4) + ctrl(1) + ctrl(8) + ctrl(11) +
                             rounds_a(2) + rx_post(64) + rx_post(64, 1) +
                             peer_send(500, DST_A, overlay=ipv4_tcp(500)) + peer_send(60, DST_A) + PEERS +
                             rounds_a(2) + rounds_a(2, 1))
seeds["ctrl_mapping_overflow"] = (bytes([0, FULL | CTRLRING, 0]) + ctrl(5, u32(128)) +
                                  ctrl(6, gref_frame(41), 0xffff, 0xffff) + ctrl(6, gref_raw(0xdeadbeef), 8, 120) +
                                  ctrl(3, gref_frame(2), 2000) + rounds_a(1) +
                                  op(CTRL_PROD) + bytes([0xf0]) + u32(0x80000000) + rounds_a(1) + LOOP_)
# Hostile TX: producer far ahead, producer behind, a grant revoked between push and round.
seeds["tx_prod_far_ahead"] = (bytes([0, FULL, 0]) + tx_frame(60, DST_B) + op(TX_PROD) + bytes([0xf0]) +
                              u32(0x1000) + rounds_a(1) + LOOP_)
seeds["tx_prod_behind"] = (bytes([0, FULL | PERSIST, 0x7e]) + tx_frame(60, DST_B) * 4 + PUSH + rounds_a(1) +
                           op(TX_PROD) + bytes([0xaa]) + rounds_a(1) + LOOP_)
seeds["tx_grant_revoked"] = (bytes([2, FULL, 0]) + tx_frame(3000, DST_B) + PUSH +
                             gnt(A_GREF_TXBUF0 - 8, 0, 5) + rounds_a(1) + PEERS + rounds_a(1))
seeds["tx_grant_foreign_frame"] = (bytes([0, FULL | PERSIST, 0x7e]) + gnt(A_GREF_TXBUF0 - 8 + 1, 1, 0xff, domid=0) +
                                   b"" + tx_req(0, gref_frame(6), 0, 0, 100) + PUSH + rounds_a(1))
seeds["tx_raw_chain"] = (bytes([0, FULL, 0]) + tx_req(1, gref_frame(5), 4000, MORE | EXTRA, 9000) +
                         tx_extra(1, 0, [0xa8, 0x05, 1, 0, 0, 0]) + tx_req(2, gref_frame(6), 0, MORE, 4096) +
                         tx_req(3, gref_raw(0xffffffff), 0, 0, 4000) + PUSH + rounds_a(2) + LOOP_)
seeds["tx_mcast_ctrl"] = (bytes([0, FULL | MCAST, 0]) + tx_req(7, gref_frame(5), 0, EXTRA, 0) +
                          tx_extra(2, 0, [1, 0, 0x5e, 0, 0, 0xfb]) + tx_req(8, gref_frame(5), 0, EXTRA, 0) +
                          tx_extra(3, 0, [1, 0, 0x5e, 0, 0, 0xfb]) + PUSH + rounds_a(1) + rx_post(16) +
                          peer_send(100, DST_MCAST4) + PEERS + rounds_a(1) + xs(1, 0) + peer_send(100, DST_MCAST4) +
                          PEERS + rounds_a(1))
seeds["tx_double_fetch_header"] = (bytes([0, FULL, 0]) + tx_frame(300, DST_B) + PUSH + rounds_a(1) +
                                   buf_write(5, 0, bytes([0xff] * 6)) + PEERS + rounds_a(1))
# Hostile RX: bad grefs, ids, a producer going back, read-only buffer.
seeds["rx_bad_gref"] = (bytes([0, FULL, 0]) + op(RX_RAW) + u16(7) + gref_raw(0x7fffffff) + op(RX_RAW) +
                        u16(9) + gref_frame(6) + peer_send(100, DST_A) + peer_send(100, DST_A) + PEERS +
                        rounds_a(2) + LOOP_)
seeds["rx_prod_back"] = (bytes([0, FULL | PERSIST, 0x7e]) + rx_post(8) + peer_send(100, DST_A) + PEERS + rounds_a(1) +
                         op(RX_PROD) + bytes([0x55]) + peer_send(100, DST_A) + PEERS + rounds_a(1) + LOOP_)
seeds["rx_event_games"] = (bytes([0, FULL, 0]) + op(EVENT) + b"\2\xf0" + u32(0x80000000) + rx_post(2) +
                           peer_send(9000, DST_A) + PEERS + rounds_a(1) + op(EVENT) + b"\3\x01" + rx_post(8) +
                           rounds_a(1) + op(KICK) + b"\0")
seeds["rx_persistent_grant_swap"] = (bytes([3, FULL | PERSIST, 8]) + rx_post(4) + peer_send(100, DST_A) + PEERS +
                                     rounds_a(1) + gnt(A_GREF_TXBUF0 - 8 + 32, 1, 40) + rx_post(4) +
                                     peer_send(5000, DST_A) + PEERS + rounds_a(1))
# A guest of two queues that posts nothing, in the world whose guests may have one hold pool:
# frames of eight flows wait on both queues, each copied out at once; the queue that finds the
# guest's pool taken drops them instead (rx_hold_budget).
seeds["rx_budget_two_queues"] = (bytes([2, FULL, 1]) +
                                 b"".join(peer_send(1000, DST_A, overlay=ipv4_udp(1000, 4000 + i))
                                          for i in range(8)) +
                                 PEERS + rounds_a(2) + rounds_a(2, 1) + LOOP_ + PEERS +
                                 rounds_a(2) + rounds_a(2, 1))
# Split channels and xenstore games mid-connection.
seeds["split_reconnect"] = (bytes([0, FULL | SPLIT, 0]) + rx_post(8) + tx_frame(100, DST_B) + PUSH + rounds_a(1) +
                            xs(0, 1) + xs(0, 4) + rx_post(8) + tx_frame(100, DST_C) + PUSH + rounds_a(1) + PEERS)
seeds["xs_bad_ring_ref"] = (bytes([0, FULL, 0]) + xs(0, 1) + xs(2, 0xf1) + xs(0, 4) + LOOP_ + xs(0, 6))
seeds["xs_queues_junk"] = (bytes([1, FULL, 1]) + xs(5, 0xf0) + xs(0, 1) + xs(0, 4) + rounds_a(1))

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")
