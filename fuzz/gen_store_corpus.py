#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# gen_store_corpus.py - write the seed corpus of store_msg_fuzz (see its input layout)
import os
import struct
import sys

# xs_wire.h message types (enum xsd_sockmsg_type)
(CONTROL, DIRECTORY, READ, GET_PERMS, WATCH, UNWATCH, TXN_START, TXN_END, INTRODUCE, RELEASE,
 GET_DOMAIN_PATH, WRITE, MKDIR, RM, SET_PERMS, WATCH_EVENT, ERROR, IS_DOMAIN_INTRODUCED, RESUME,
 SET_TARGET) = range(20)
RESET_WATCHES, DIRECTORY_PART = 21, 22


def msg(t, *strs, tx=0, req=1, raw=None):
    body = raw if raw is not None else b"".join(s.encode() + b"\0" for s in strs)
    return struct.pack("<IIII", t, req, tx, len(body)) + body


def write(path, val, tx=0):
    return msg(WRITE, raw=path.encode() + b"\0" + val.encode(), tx=tx)


# mode byte: bit0 guest, bits1-6 chunk-1, bit7 slow reader
DOM0, GUEST = 0x7e, 0x7f
seeds = {
    "read_write": (DOM0, write("/a/b", "v") + msg(READ, "/a/b") + msg(READ, "/a/x")),
    "mkdir_dir": (DOM0, msg(MKDIR, "/d/e") + msg(MKDIR, "/d/f") + msg(DIRECTORY, "/d")),
    "rm": (DOM0, write("/r/a/b", "1") + msg(RM, "/r/a") + msg(RM, "/r/a") + msg(RM, "/")),
    "perms": (DOM0, write("/p", "") + msg(SET_PERMS, "/p", "n5", "r6") + msg(GET_PERMS, "/p")),
    "guest_perms": (GUEST, msg(SET_PERMS, "x", "n6") + write("x", "1") +
                    msg(SET_PERMS, "x", "n5", "b6") + msg(READ, "/")),
    "guest_relative": (GUEST, write("device/vif/0/state", "4") + msg(READ, "device/vif/0/state") +
                       msg(DIRECTORY, "device/vif")),
    "watch": (DOM0, msg(WATCH, "/w", "t") + write("/w/x", "1") + msg(RM, "/w") +
              msg(UNWATCH, "/w", "t")),
    "guest_watch": (GUEST, msg(WATCH, "device", "t") + msg(WATCH, "/local", "u") +
                    msg(WATCH, "@releaseDomain", "r") + write("device/a", "1") +
                    msg(RESET_WATCHES)),
    "txn_commit": (DOM0, msg(TXN_START, "") + write("/t/a", "1", tx=1) + msg(READ, "/t/a", tx=1) +
                   msg(TXN_END, "T", tx=1)),
    "txn_abort": (GUEST, msg(TXN_START, "") + write("k", "1", tx=1) + msg(RM, "k", tx=1) +
                  msg(TXN_END, "F", tx=1)),
    "txn_conflict": (DOM0, write("/c", "0") + msg(TXN_START, "") + msg(READ, "/c", tx=1) +
                     write("/c", "1") + write("/c", "2", tx=1) + msg(TXN_END, "T", tx=1)),
    "txn_flood": (GUEST, msg(TXN_START, "") * 12 + msg(TXN_START, "", tx=3)),
    "domain_path": (GUEST, msg(GET_DOMAIN_PATH, "7") + msg(GET_DOMAIN_PATH, "x")),
    "privileged": (GUEST, b"".join(msg(t, "5") for t in (CONTROL, INTRODUCE, RELEASE,
                                                         IS_DOMAIN_INTRODUCED, RESUME,
                                                         SET_TARGET, DIRECTORY_PART, 20, 99))),
    "dom0_privileged": (DOM0, msg(IS_DOMAIN_INTRODUCED, "5") + msg(INTRODUCE, "5", "1", "2")),
    "missing_nul": (GUEST, msg(READ, raw=b"/local") + msg(WRITE, raw=b"abc") +
                    msg(WATCH, raw=b"a\0b")),
    "bad_paths": (GUEST, msg(READ, "/a//b") + msg(READ, "a/") + msg(READ, "/a b") +
                  msg(READ, "x" * 2100)),
    "oversized": (GUEST, struct.pack("<IIII", READ, 1, 0, 4097) + b"/"),
    "split_header": (0x00, msg(WRITE, raw=b"/s\0v") + msg(READ, "/s")),
    "slow_reader": (0x80 | DOM0, msg(WATCH, "/", "t") +
                    b"".join(write("/f", str(i)) for i in range(40))),
    "bad_perms": (DOM0, write("/q", "") + msg(SET_PERMS, "/q", "x0") +
                  msg(SET_PERMS, "/q", "r99999") + msg(SET_PERMS, "/q") +
                  msg(SET_PERMS, raw=b"/q\0r0")),
    "watch_flood": (GUEST, b"".join(msg(WATCH, "w", "t%d" % i) for i in range(130))),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "corpus", "store")
    os.makedirs(out, exist_ok=True)
    for name, (mode, body) in seeds.items():
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(bytes([mode]) + body)


if __name__ == "__main__":
    main()
