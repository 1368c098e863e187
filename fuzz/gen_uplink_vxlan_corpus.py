#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_uplink_vxlan_corpus.py - write the seed corpus of uplink_vxlan_fuzz: VXLAN datagrams as a
# remote VTEP sends them (good and bad), and --uplink vxlan:... specifications.
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "uplink_vxlan")
os.makedirs(out, exist_ok=True)
MAC = bytes.fromhex("020000000002") + bytes.fromhex("020000000001")


def frame(payload, vlan=False):
    eth = MAC + (struct.pack(">HH", 0x8100, 7) if vlan else b"") + struct.pack(">H", 0x0800)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + payload, 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    udp = struct.pack(">HHHH", 1234, 53, 8 + payload, 0)
    return eth + ip + udp + bytes(i * 7 & 0xFF for i in range(payload))


def hdr(vni, flags=0x08, rsv=(0, 0, 0, 0)):
    return bytes([flags, rsv[0], rsv[1], rsv[2]]) + vni.to_bytes(3, "big") + bytes([rsv[3]])


def datagram(name, vni, mtu, payload):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\0" + vni.to_bytes(3, "big") + struct.pack("<H", mtu) + payload)


datagram("dg-ok", 42, 1500, hdr(42) + frame(100))
datagram("dg-ok-vni0", 0, 1500, hdr(0) + frame(10))
datagram("dg-ok-max-vni", 0xFFFFFF, 1500, hdr(0xFFFFFF) + frame(10))
datagram("dg-at-mtu", 42, 1500, hdr(42) + frame(1500 - 28))
datagram("dg-over-mtu", 42, 1500, hdr(42) + frame(1500 - 28 + 1))
datagram("dg-vlan-at-mtu", 42, 1500, hdr(42) + frame(1500 - 28, vlan=True))
datagram("dg-jumbo", 42, 9000, hdr(42) + frame(9000 - 28))
datagram("dg-bare-eth", 42, 1500, hdr(42) + MAC + b"\x08\x00")
datagram("dg-runt", 42, 1500, hdr(42) + MAC + b"\x08")
datagram("dg-header-only", 42, 1500, hdr(42))
datagram("dg-empty", 42, 1500, b"")
datagram("dg-other-vni", 42, 1500, hdr(43) + frame(100))
datagram("dg-no-i-flag", 42, 1500, hdr(42, flags=0) + frame(100))
datagram("dg-gbp-flag", 42, 1500, hdr(42, flags=0x88) + frame(100))
datagram("dg-reserved1", 42, 1500, hdr(42, rsv=(1, 0, 0, 0)) + frame(100))
datagram("dg-reserved7", 42, 1500, hdr(42, rsv=(0, 0, 0, 1)) + frame(100))

specs = [
    "vxlan:id=42,remote=192.0.2.1",
    "vxlan:id=16777215,remote=2001:db8::1,local=2001:db8::2,dstport=8472,mtu=9000,netns=red",
    "vxlan:id=0,remote=10.0.0.1,mtu=68,dstport=1",
    "vxlan:id=1,remote=10.0.0.1,mtu=65501,dstport=65535",
    "vxlan:remote=10.0.0.1,id=5,mtu=9000",
    "vxlan:id=16777216,remote=10.0.0.1",
    "vxlan:id=1,remote=239.1.1.1",
    "vxlan:id=1,remote=ff02::1",
    "vxlan:id=1,remote=10.0.0.1,local=::1",
    "vxlan:id=1,id=2,remote=10.0.0.1",
    "vxlan:id=1,remote=10.0.0.1,",
    "vxlan:id=1,remote=10.0.0.1,netns=a/b",
    "vxlan:id=99999999999,remote=10.0.0.1",
    "tap:eth0",
    "vxlan:id=7,remote=10.0.0.1,remote=10.0.0.2,remote=10.0.0.3",
    "vxlan:id=7,remote=2001:db8::1,remote=2001:db8::2,local=2001:db8::9",
    "vxlan:id=7,remote=10.0.0.1,remote=10.0.0.1",
    "vxlan:id=7,remote=10.0.0.1,remote=2001:db8::1",
    "vxlan:id=7," + ",".join("remote=10.0.0.%d" % i for i in range(1, 10)),
    "vxlan:id=7,remote=10.0.0.1,srcport=49152-65535",
    "vxlan:id=7,remote=10.0.0.1,srcport=4789-4789",
    "vxlan:id=7,remote=10.0.0.1,srcport=10-5",
]
for i, s in enumerate(specs):
    with open(os.path.join(out, "spec-%02d" % i), "wb") as f:
        f.write(b"\x01" + s.encode())
