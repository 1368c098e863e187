#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_uplink_vnet_corpus.py - write the seed corpus of uplink_vnet_fuzz: virtio-net headers and frames as a TAP delivers them.
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "uplink_vnet")
os.makedirs(out, exist_ok=True)

NEEDS_CSUM, DATA_VALID = 1, 2
GSO_NONE, GSO_TCPV4, GSO_UDP, GSO_TCPV6, GSO_ECN = 0, 1, 3, 4, 0x80
CSUM4, CSUM6, TSO4, TSO6 = 1, 2, 4, 8
ALL = CSUM4 | CSUM6 | TSO4 | TSO6
TCP, UDP = 6, 17
MAC = bytes.fromhex("020000000001") + bytes.fromhex("020000000002")


def fold(data, s=0):
    if len(data) % 2:
        data += b"\0"
    for i in range(0, len(data), 2):
        s += data[i] << 8 | data[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def l4hdr(proto, l4len_total):
    if proto == TCP:
        # ports, seq, ack, data offset 5, flags ACK|PSH, window, csum (filled later), urg
        return struct.pack(">HHIIBBHHH", 40000, 80, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
    return struct.pack(">HHHH", 40000, 53, l4len_total, 0)


def frame(l3, proto, payload, vlan=False, exthdr=False, pad=0, dstopts=0, tpid=0x8100, ext6=None):
    """Ethernet [+ 802.1Q, or the tag @tpid] + IPv4/IPv6 [+ hop-by-hop, or
    destination options of @dstopts bytes, or @ext6 = (protocol number, the
    header's bytes after its next-header byte)] + TCP/UDP + payload.

    @pad: bytes of zero payload the harness appends (its page padding); they
    count in the IP and UDP lengths but not in the pseudo-header sum we store
    (zeros add nothing to a one's complement sum)."""
    body = bytes((i * 7 + 3) & 0xFF for i in range(payload))
    l4 = l4hdr(proto, 8 + payload + pad if proto == UDP else 0)
    l4len = len(l4) + payload + pad
    eth = MAC + (struct.pack(">HH", tpid, 7) if vlan else b"") + struct.pack(">H", 0x0800 if l3 == 4 else 0x86DD)
    if l3 == 4:
        ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + l4len, 1, 0x4000, 64, proto, 0,
                                   bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
        struct.pack_into(">H", ip, 10, ~fold(bytes(ip)) & 0xFFFF)
        pseudo = fold(bytes(ip[12:20]) + struct.pack(">HH", proto, l4len))
    else:
        src, dst = bytes(15) + b"\1", bytes(15) + b"\2"
        ext = struct.pack(">BB6s", proto, 0, bytes([1, 4, 0, 0, 0, 0])) if exthdr else b""
        if dstopts:  # PadN over all of it
            ext = struct.pack(">BBBB", proto, dstopts // 8 - 1, 1, dstopts - 4) + bytes(dstopts - 4)
        first = 0 if exthdr else 60 if dstopts else proto
        if ext6:
            first, ext = ext6[0], bytes([proto]) + ext6[1]
        ip = bytearray(struct.pack(">IHBB16s16s", 6 << 28, len(ext) + l4len, first, 64, src, dst)) + ext
        pseudo = fold(src + dst + struct.pack(">IxxxB", l4len, proto))
    csum_start = len(eth) + len(ip)
    csum_off = 16 if proto == TCP else 6
    f = bytearray(eth + bytes(ip) + l4 + body)
    # A blank checksum as a TAP hands it over: the pseudo-header sum, not inverted.
    struct.pack_into(">H", f, csum_start + csum_off, pseudo)
    return bytes(f), csum_start, csum_off, csum_start + len(l4)


def seed(flags=0, gso_type=GSO_NONE, gso_size=0, csum_start=0, csum_off=0, hdr_len=0, mtu=1500, offloads=ALL,
         pad_pages=0, meta=0, body=b""):
    vh = struct.pack("<BBHHHH", flags, gso_type, hdr_len, gso_size, csum_start, csum_off)
    return vh + struct.pack("<HBB", mtu, offloads | pad_pages << 4, meta) + body


seeds = {}
f, cs, co, hl = frame(4, UDP, 32)
seeds["plain_v4_udp"] = seed(hdr_len=hl, body=f)
seeds["plain_arp"] = seed(body=MAC + b"\x08\x06" + bytes(28))
seeds["data_valid_v6_tcp"] = seed(DATA_VALID, hdr_len=frame(6, TCP, 100)[3], meta=2, body=frame(6, TCP, 100)[0])
f, cs, co, hl = frame(4, TCP, 200)
seeds["csum_v4_tcp"] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, meta=1, body=f)
seeds["csum_v4_tcp_sw"] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, offloads=0, body=f)
f, cs, co, hl = frame(6, UDP, 77)
seeds["csum_v6_udp"] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, meta=1, body=f)
seeds["csum_v6_udp_sw"] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, offloads=CSUM4, body=f)
f, cs, co, hl = frame(4, TCP, 60, vlan=True)
seeds["csum_vlan_v4_tcp"] = seed(NEEDS_CSUM | DATA_VALID, csum_start=cs, csum_off=co, hdr_len=hl, meta=3, body=f)
seeds["csum_outside_frame"] = seed(NEEDS_CSUM, csum_start=len(f) - 1, csum_off=co, body=f)
f, cs, co, hl = frame(4, TCP, 1448, pad=3 * 4096)
seeds["tso_v4"] = seed(NEEDS_CSUM, GSO_TCPV4, 1448, cs, co, hl, pad_pages=3, meta=1 | GSO_TCPV4 << 2, body=f)
seeds["tso_v4_not_offered"] = seed(NEEDS_CSUM, GSO_TCPV4, 1448, cs, co, hl, offloads=CSUM4 | CSUM6 | TSO6,
                                   pad_pages=3, body=f)
seeds["tso_v4_segment_over_mtu"] = seed(NEEDS_CSUM, GSO_TCPV4, 1461, cs, co, hl, pad_pages=3, body=f)
seeds["tso_v4_ecn"] = seed(NEEDS_CSUM, GSO_TCPV4 | GSO_ECN, 1448, cs, co, hl, pad_pages=3, body=f)
seeds["tso_v4_15_pages"] = seed(NEEDS_CSUM, GSO_TCPV4, 1448, cs, co, hl, pad_pages=15, body=f)
f, cs, co, hl = frame(4, TCP, 0)
seeds["tso_v4_no_payload"] = seed(NEEDS_CSUM, GSO_TCPV4, 1448, cs, co, hl, body=f)
f, cs, co, hl = frame(6, TCP, 1428, pad=8 * 4096)
seeds["tso_v6"] = seed(NEEDS_CSUM, GSO_TCPV6, 1428, cs, co, hl, pad_pages=8, meta=1 | 2 << 2, body=f)
seeds["tso_v6_as_v4"] = seed(NEEDS_CSUM, GSO_TCPV4, 1428, cs, co, hl, pad_pages=8, body=f)
f, cs, co, hl = frame(6, TCP, 1420, exthdr=True, pad=4096)
seeds["tso_v6_hopopts"] = seed(NEEDS_CSUM, GSO_TCPV6, 1420, cs, co, hl, mtu=9000, pad_pages=1, body=f)
# Transport headers past the 128 bytes every receiver copies: computed here, or (TSO) dropped.
# TCP ending past the first 128 bytes but within SW_PKT_OFFLOAD_HDR_MAX (270), then past that.
for name, opts in (("in_copy", 80), ("past_copy", 208)):
    f, cs, co, hl = frame(6, TCP, 300, dstopts=opts)
    seeds["csum_v6_tcp_dstopts_" + name] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, body=f)
    f, cs, co, hl = frame(6, TCP, 1300, dstopts=opts, pad=4096)
    seeds["tso_v6_dstopts_" + name] = seed(NEEDS_CSUM, GSO_TCPV6, 1300, cs, co, hl, mtu=9000, pad_pages=1, body=f)
# IPv6 headers Linux's checksum set-up walks besides options: an atomic fragment
# (offset 0, M 0) and AH; TSO over them is dropped. A type 2 routing header with a
# segment left: TSO is cut, the segments summed over the home address it holds.
for name, ext6 in (("atomic_frag", (44, bytes(7))), ("ah", (51, bytes([2]) + bytes(5) + b"\0\0\0\1" + bytes(4))),
                   ("rthdr2", (43, bytes([2, 2, 1]) + bytes(4) + bytes([0x20, 1, 0xD, 0xB8]) + bytes(11) + b"\xaa"))):
    f, cs, co, hl = frame(6, TCP, 300, ext6=ext6)
    seeds["csum_v6_tcp_" + name] = seed(NEEDS_CSUM, csum_start=cs, csum_off=co, hdr_len=hl, body=f)
    f, cs, co, hl = frame(6, TCP, 1300, ext6=ext6, pad=4096)
    seeds["tso_v6_" + name] = seed(NEEDS_CSUM, GSO_TCPV6, 1300, cs, co, hl, mtu=9000, pad_pages=1, body=f)
# A service (802.1ad) tag allows one tag past the MTU, as an 802.1Q one does.
seeds["stag_1518_at_mtu_1500"] = seed(body=frame(4, UDP, 1472, vlan=True, tpid=0x88A8)[0], mtu=1500)
f, cs, co, hl = frame(4, UDP, 1000, pad=4096)
seeds["gso_udp"] = seed(NEEDS_CSUM, GSO_UDP, 1000, cs, co, hl, pad_pages=1, body=f)
f, cs, co, hl = frame(4, UDP, 1480)
seeds["oversize_mtu"] = seed(hdr_len=hl, mtu=1500, body=f)
seeds["oversize_frame"] = seed(body=frame(4, UDP, 5000)[0], mtu=65535, pad_pages=15)
seeds["runt"] = seed(body=MAC[:10])

for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)
