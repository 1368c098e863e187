#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_ctl_corpus.py - write the seed corpus of ctl_fuzz: clients' sessions on pvnetd's control socket.
import json
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "ctl")
os.makedirs(out, exist_ok=True)

# Header byte: client (bits 0-1), what (bits 2-4: 0 raw, 1 template, 2 close), descriptors (bits 5-7).
RAW, TEMPLATE, CLOSE = 0, 1, 2
NONE, MEMFD, MEMFD_UNSEALED, EVENTFD, MEMFD_EVENTFD, NINE, MEMFD_2 = range(7)
# Template ops and string choices, in ctl_fuzz.c's order.
(DOMAIN_CREATE, DOMAIN_NAME, EVTCHN_ALLOC, EVTCHN_CLOSE, VIF_CREATE, VIF_DESTROY, STATUS, FDB,
 CAPTURE_START, CAPTURE_STOP, OTHER_OP) = range(11)
S_EMPTY, S_UP0, S_UP1, S_VIF10, S_IN, S_OUT, S_INOUT, S_MAC, S_MCAST, S_BCAST, S_NAME, S_SPACES, \
    S_UTF8, S_DOM0, S_LONG = range(15)
S_LEARNT = 0x80  # a vif name a reply gave
NUM_AS_STRING, FLIP_MAIN, OPT, BIT3, CURSOR, ANY_CURSOR = 1, 2, 4, 8, 16, 32
DIR_IN, DIR_OUT, DIR_INOUT, DIR_BAD = 0x00, 0x40, 0x80, 0xc0


def hdr(client, what, fds):
    return bytes([client | what << 2 | fds << 5])


def raw(client, data, fds=NONE):
    if isinstance(data, (dict, list, int)):
        data = json.dumps(data, separators=(",", ":"))
    if isinstance(data, str):
        data = data.encode()
    return hdr(client, RAW, fds) + struct.pack("<H", len(data)) + data


def tpl(client, op, n=0, s=0, f=0, fds=NONE):
    return hdr(client, TEMPLATE, fds) + struct.pack("<BBHB", op, s, n, f)


def close(client):
    return hdr(client, CLOSE, NONE)


def guest(client, devids=(0,), name=S_NAME):
    """A frontend's start: its domain (one page), a name, vifs."""
    d = tpl(client, DOMAIN_CREATE, n=1, fds=MEMFD) + tpl(client, DOMAIN_NAME, s=name)
    for devid in devids:
        d += tpl(client, VIF_CREATE, n=devid)
    return d


seeds = {
    # A guest's whole life, and what a guest may not do.
    "guest_life": guest(0) + tpl(0, EVTCHN_ALLOC, n=0) + tpl(0, EVTCHN_ALLOC, n=0)
    + tpl(0, EVTCHN_CLOSE, n=1) + tpl(0, EVTCHN_CLOSE, n=1)
    + tpl(0, VIF_CREATE, n=1, s=S_MAC, f=OPT) + tpl(0, VIF_CREATE, n=1)
    + tpl(0, STATUS) + tpl(0, STATUS, s=S_LEARNT, f=FLIP_MAIN) + tpl(0, VIF_DESTROY, n=1)
    + tpl(0, VIF_DESTROY, n=1) + tpl(0, FDB) + tpl(0, CAPTURE_START, s=S_UP0)
    + tpl(0, DOMAIN_CREATE, n=1, fds=MEMFD) + close(0) + tpl(0, STATUS),
    # pvnet's requests: status, the MAC table, captures.
    "tool": tpl(1, STATUS) + tpl(1, STATUS, f=OPT) + tpl(1, STATUS, f=OPT | BIT3)
    + tpl(1, FDB) + tpl(1, FDB, s=S_UP0, f=FLIP_MAIN) + tpl(1, FDB, n=2, f=OPT)
    + tpl(1, FDB, n=9999, f=OPT) + tpl(1, FDB, s=S_VIF10, f=FLIP_MAIN)
    + tpl(1, CAPTURE_START, s=S_UP0 | DIR_IN, f=OPT) + tpl(1, CAPTURE_START, s=S_UP0)
    + tpl(1, CAPTURE_START, s=S_UP1 | DIR_BAD, f=OPT) + tpl(1, CAPTURE_START, n=96, s=S_UP1, f=BIT3)
    + tpl(1, STATUS) + tpl(1, DOMAIN_CREATE, n=1, fds=MEMFD) + tpl(1, CAPTURE_STOP, s=S_UP0)
    + tpl(1, CAPTURE_STOP, s=S_UP0) + tpl(1, CAPTURE_STOP, s=S_UP1)
    + tpl(1, DOMAIN_CREATE, n=1, fds=MEMFD) + tpl(1, FDB),
    # Datagrams that are no request.
    "malformed": raw(2, b"") + raw(2, "not json") + raw(2, [1]) + raw(2, {"op": 1}) + raw(2, {})
    + raw(2, {"op": "x"}) + raw(2, '{"op":"status","op":"status"}') + raw(2, '{"op":"status"} x')
    + raw(2, {"op": "status"}, fds=NINE) + raw(2, b'{"op":"st\x00atus"}')
    + raw(2, '{"op":"\\u0000"}') + raw(2, "{" * 300) + tpl(2, OTHER_OP, s=S_UTF8)
    + tpl(2, OTHER_OP, s=S_LONG) + raw(2, {"op": "status", "vif": 1}) + raw(2, {"op": "status", "vifs": 0}),
    # domain-create with everything it may be sent.
    "domain_create": tpl(0, DOMAIN_CREATE, n=1) + tpl(0, DOMAIN_CREATE, n=1, fds=MEMFD_UNSEALED)
    + tpl(0, DOMAIN_CREATE, n=1, fds=EVENTFD) + tpl(0, DOMAIN_CREATE, n=1, fds=MEMFD_EVENTFD)
    + tpl(0, DOMAIN_CREATE, n=1, fds=MEMFD_2) + tpl(0, DOMAIN_CREATE, n=0, fds=MEMFD)
    + tpl(0, DOMAIN_CREATE, n=1, f=NUM_AS_STRING, fds=MEMFD) + tpl(0, DOMAIN_CREATE, f=FLIP_MAIN, fds=MEMFD)
    + raw(0, {"op": "domain-create", "pages": -1}, fds=MEMFD)
    + raw(0, {"op": "domain-create", "pages": 1 << 40}, fds=MEMFD)
    + tpl(0, DOMAIN_CREATE, n=2, fds=MEMFD_2) + tpl(0, DOMAIN_NAME, s=S_SPACES)
    + tpl(0, DOMAIN_NAME, s=S_LONG) + tpl(0, DOMAIN_NAME, s=S_EMPTY) + tpl(0, DOMAIN_NAME, f=FLIP_MAIN)
    + tpl(0, DOMAIN_NAME, s=S_NAME) + tpl(0, DOMAIN_NAME, s=S_UP0) + tpl(0, DOMAIN_NAME, s=S_DOM0),
    # Two guests and a tool: names taken, each one's vifs, status as they come and go.
    "two_guests": guest(0) + guest(1, devids=(0, 3)) + tpl(2, STATUS) + tpl(2, STATUS, f=OPT)
    + tpl(2, STATUS, s=S_LEARNT | 1, f=FLIP_MAIN) + close(0) + tpl(2, STATUS)
    + tpl(2, CAPTURE_START, s=S_LEARNT) + guest(0, name=S_NAME) + tpl(2, STATUS),
    # Status a page at a time: two guests' vifs, then a tool's captures, from every cursor.
    "status_pages": guest(0, devids=(0, 1)) + guest(1) + tpl(2, CAPTURE_START, s=S_UP0)
    + tpl(2, CAPTURE_START, s=S_UP1) + b"".join(tpl(2, STATUS, n=k, f=CURSOR) for k in range(4))
    + tpl(2, STATUS, n=4, f=CURSOR | ANY_CURSOR) + tpl(2, STATUS, n=5, f=CURSOR | ANY_CURSOR | OPT)
    + tpl(2, STATUS, n=9999, f=CURSOR | ANY_CURSOR) + tpl(2, STATUS, n=1, f=CURSOR | NUM_AS_STRING)
    + tpl(2, STATUS, s=S_LEARNT, f=CURSOR | FLIP_MAIN) + tpl(2, STATUS, s=S_UP0, f=FLIP_MAIN)
    + raw(2, {"op": "status", "cursor": -1}) + raw(2, {"op": "status", "cursor": 1 << 32})
    + raw(2, {"op": "status", "vifs": False, "cursor": 1.5}) + close(0) + tpl(2, STATUS, n=2, f=CURSOR),
    # Limits: the vifs of one domain, event channels, odd numbers.
    "limits": guest(0, devids=range(17)) + tpl(0, VIF_CREATE, n=65535)
    + raw(0, {"op": "vif-create", "devid": 65536}) + tpl(0, VIF_CREATE, n=5, s=S_MCAST, f=OPT)
    + tpl(0, VIF_CREATE, n=5, s=S_BCAST, f=OPT) + tpl(0, VIF_CREATE, n=5, f=NUM_AS_STRING)
    + tpl(0, VIF_DESTROY, n=16) + tpl(0, VIF_DESTROY, f=FLIP_MAIN)
    + tpl(0, EVTCHN_ALLOC, n=0x7ff0) + tpl(0, EVTCHN_ALLOC, n=0xffff) + tpl(0, EVTCHN_CLOSE, n=0xffff)
    + raw(0, {"op": "evtchn-close", "port": 1 << 33}) + tpl(0, EVTCHN_ALLOC, n=1) * 20,
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
