#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# capture.sh - pvnet capture: a vif's and an uplink's frames into pcap files that tcpdump
# reads (both directions, in or out only, a snap length, a count, a pipe into tcpdump),
# the refusals, a capture that ends when its port goes away, a reader of its output that
# goes away, a pcap file that cannot be written (a full tmpfs), a capture socket that
# cannot be read (a fake pvnetd).
# usage: capture.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool tcpdump
# A 64 KiB tmpfs of our own for a pcap file that fills it; unmounted before tap_cleanup
# removes $TAP_TMP (lazily: a capture still writing to it must not keep it mounted).
FULL=$TAP_TMP/full
cap_cleanup() {
	mountpoint -q "$FULL" 2>/dev/null && umount -l "$FULL"
	tap_cleanup
}
trap cap_cleanup EXIT

U=pvcu$$
A=pvca$$
MAC_A=00:16:3e:5a:00:02
tap_ns "$U" && tap_ns "$A" || exit 1
start_pvnetd "$RUN" --uplink "tap:up0@$U" || exit 1
tap_attach PA "$A" eth0 --mac "$MAC_A" || exit 1
tap_addr "$U" up0 10.81.0.1 fd81::1 && tap_addr "$A" eth0 10.81.0.2 fd81::2
VIF="vif$(tap_domain "$A").0"
check "ping uplink -> vif before any capture" tap_ping "$U" 10.81.0.2

# wait_capturing ERR [PID]: until the capture whose stderr is ERR says it is capturing
# (5 s at most, or until PID, if given, has exited); false if it never did.
wait_capturing() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q '^pvnet capture: capturing' "$1" 2>/dev/null && return 0
		[ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
		sleep 0.05
	done
	return 1
}

# cap_start VAR FILE ARGS...: `pvnet capture ARGS -w FILE` in the background, VAR its pid;
# waits until it is capturing.  Its stderr goes to FILE.err.
cap_start() {
	local var=$1 file=$2 pid
	shift 2
	"$PVNET" -d "$RUN" capture "$@" -w "$file" 2>"$file.err" &
	pid=$!
	TAP_PIDS+=("$pid")
	printf -v "$var" '%s' "$pid"
	wait_capturing "$file.err" "$pid" && return 0
	cat "$file.err" >&2
	return 1
}

# count FILE PATTERN: lines of `tcpdump -r FILE` matching PATTERN.
count() {
	tcpdump -n -e -r "$1" 2>/dev/null | grep -c -- "$2"
}

# Both directions of the vif, while the uplink pings the guest three times.
F=$TAP_TMP/both.pcap
cap_start PC "$F" "$VIF" || exit 1
check "ping uplink -> vif while it is captured" tap_ping "$U" 10.81.0.2
check "SIGTERM stops the capture, exit 0" tap_stop "$PC"
check "it says what it wrote and what pvnetd dropped" \
	grep -Eq '^[1-9][0-9]* frames written' "$F.err"
check "... nothing dropped" grep -q '^0 frames dropped by pvnetd' "$F.err"
check "tcpdump reads 3 echo requests to the guest" \
	test "$(count "$F" '10.81.0.1 > 10.81.0.2: ICMP echo request')" -ge 3
check "and its 3 replies" test "$(count "$F" '10.81.0.2 > 10.81.0.1: ICMP echo reply')" -ge 3
check "nanosecond timestamps, Ethernet link type" \
	bash -c "tcpdump --time-stamp-precision=nano -r '$F' 2>&1 | head -1 |
		 grep -q 'link-type EN10MB'"
check "pvnetd logged the capture's start and stop" bash -c \
	"grep -q 'capture of $VIF started (inout' '$RUN.log' &&
	 grep -q 'capture of $VIF stopped: [1-9][0-9]* frames captured, 0 dropped' '$RUN.log'"

# Stopped with frames still in its socket: a capture held still (SIGSTOP) while the
# uplink pings, then stopped and let go at once, writes every frame pvnetd captured.
F=$TAP_TMP/late.pcap
cap_start PC "$F" "$VIF" -Q out || exit 1
kill -STOP "$PC"
timeout 10 ip netns exec "$U" ping -c 5 -i 0.05 -W 2 10.81.0.2 >/dev/null
kill -TERM "$PC"
kill -CONT "$PC"
check "a capture stopped with frames queued exits 0" tap_stop "$PC"
late_captured=$(sed -n "s/.*capture of $VIF stopped: \([0-9]*\) frames captured.*/\1/p" \
	"$RUN.log" | tail -1)
check "... writes every frame pvnetd captured ($late_captured)" \
	grep -qx "$late_captured frames written" "$F.err"
check "... all of them in the file, the 5 echo requests among them" bash -c \
	"test \$(tcpdump -r '$F' 2>/dev/null | wc -l) = '$late_captured' &&
	 test \$(tcpdump -n -r '$F' 2>/dev/null | grep -c 'echo request') -ge 5"

# Only what the guest sent into the switch, cut at 60 bytes, stopping by itself at 4 frames.
F=$TAP_TMP/in.pcap
cap_start PC "$F" "$VIF" -Q in -s 60 -c 4 || exit 1
timeout 10 ip netns exec "$U" ping -c 4 -i 0.2 -W 2 -s 1000 10.81.0.2 >/dev/null
check "-c 4: the capture ends by itself" tap_stop "$PC"
check "-c 4: exactly 4 frames" test "$(tcpdump -r "$F" 2>/dev/null | wc -l)" = 4
check "-Q in: every frame is from the guest's MAC" \
	test "$(count "$F" "^[0-9:.]* $MAC_A >")" = 4
check "-Q in: the echo replies, no request" bash -c \
	"test \$(tcpdump -n -r '$F' 2>/dev/null | grep -c 'echo request') = 0 &&
	 test \$(tcpdump -n -r '$F' 2>/dev/null | grep -c 'echo reply') -ge 1"
check "-s 60: 60 bytes kept of each 1042-byte reply, its length recorded whole" python3 -c "
import struct, sys
d = open('$F', 'rb').read()
magic, = struct.unpack('<I', d[:4])
assert magic == 0xa1b23c4d, hex(magic)  # nanosecond pcap
assert struct.unpack('<I', d[16:20])[0] == 60  # snap length
off, lens = 24, []
while off < len(d):
    s, ns, cap, orig = struct.unpack('<IIII', d[off:off + 16])
    assert cap <= 60 and ns < 10**9
    lens.append((cap, orig))
    off += 16 + cap
assert any(c == 60 and o == 1042 for c, o in lens), lens
"

# The uplink, out only, straight into tcpdump through a pipe.
( timeout 15 "$PVNET" -d "$RUN" capture up0 -Q out -c 3 2>"$TAP_TMP/pipe.err" |
	timeout 15 tcpdump -n -l -r - >"$TAP_TMP/pipe.txt" 2>/dev/null ) &
PP=$!
TAP_PIDS+=("$PP")
wait_capturing "$TAP_TMP/pipe.err"
timeout 10 ip netns exec "$A" ping -c 3 -i 0.2 -W 2 10.81.0.1 >/dev/null
wait "$PP"
check "a pipe into tcpdump -r -: the uplink's out frames as they come" \
	test "$(grep -c '10.81.0.2 > 10.81.0.1: ICMP echo request' "$TAP_TMP/pipe.txt")" -ge 1
check "... and only its out frames" \
	test "$(grep -c 'echo reply' "$TAP_TMP/pipe.txt")" = 0

# ms_since T0: milliseconds since T0 (a `date +%s%N`).
ms_since() {
	echo $((($(date +%s%N) - $1) / 1000000))
}

# Jumbo frames (MTU 9000, 8042-byte echo replies): a record larger than stdio's buffer is
# written inside pcap_dump(), where a failure used to go unseen (the flush after it
# succeeds with nothing left to write).
ip -n "$U" link set up0 mtu 9000 && ip -n "$A" link set eth0 mtu 9000
check "MTU 9000: an 8000-byte ping crosses the switch" bash -c \
	"timeout 10 ip netns exec '$U' ping -c 1 -W 2 -s 8000 10.81.0.2 >/dev/null"

# A full disk: exit 1 with the reason, and no frame counted that is not in the file.
mkdir -p "$FULL" && mount -t tmpfs -o size=64k pvnet-capture-test "$FULL"
timeout 20 "$PVNET" -d "$RUN" capture "$VIF" -Q in -c 20 -w "$FULL/c.pcap" \
	2>"$TAP_TMP/full.err" &
PF=$!
TAP_PIDS+=("$PF")
wait_capturing "$TAP_TMP/full.err"
timeout 15 ip netns exec "$U" ping -c 20 -i 0.1 -W 2 -s 8000 10.81.0.2 >/dev/null
wait "$PF"
check "a pcap file on a full tmpfs: exit 1" test $? = 1
check "... saying why" grep -q '^pvnet capture: writing the pcap file: No space left on device' \
	"$TAP_TMP/full.err"
full_written=$(sed -n 's/^\([0-9]*\) frames written$/\1/p' "$TAP_TMP/full.err")
check "... counting only frames that are in the file (${full_written:-none} written)" \
	python3 - "$FULL/c.pcap" "${full_written:-x}" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, whole = 24, 0
while off + 16 <= len(d):
    cap, = struct.unpack('<I', d[off + 8:off + 12])
    if off + 16 + cap > len(d):
        break
    whole, off = whole + 1, off + 16 + cap
n = int(sys.argv[2])
assert n < 20 and n <= whole, (n, whole)
PY
umount "$FULL"

# A reader that goes away (head): the capture ends at once, exit 0, saying why.
t0=$(date +%s%N)
timeout 15 ip netns exec "$U" ping -c 40 -i 0.1 -W 2 -s 8000 10.81.0.2 >/dev/null &
PG=$!
TAP_PIDS+=("$PG")
timeout 8 "$PVNET" -d "$RUN" capture "$VIF" -Q in 2>"$TAP_TMP/head.err" | head -c 100 >/dev/null
check "a reader that goes away (head -c 100) ends the capture of jumbo frames, exit 0" \
	test "${PIPESTATUS[0]}" = 0
head_ms=$(ms_since "$t0")
check "... within a few seconds (${head_ms} ms)" test "$head_ms" -lt 4000
check "... saying why" grep -q "the capture of $VIF ended (the reader of its output went away)" \
	"$TAP_TMP/head.err"
kill "$PG" 2>/dev/null
wait "$PG" 2>/dev/null

# SIGINT while the output is backed up (a reader slower than the frames, the capture blocked
# writing to it): the record being written is finished, the rest of the socket drained,
# exit 0, and the file holds exactly the frames the summary says, each whole.
SLOW=$TAP_TMP/slow
mkfifo "$SLOW.fifo"
python3 -c '
import os, sys, time
fd, out = os.open(sys.argv[1], os.O_RDONLY), open(sys.argv[2], "wb")
while True:
    b = os.read(fd, 3000)
    if not b:
        break
    out.write(b)
    time.sleep(0.005)
' "$SLOW.fifo" "$SLOW.pcap" &
RP=$!
TAP_PIDS+=("$RP")
cap_start PS "$SLOW.fifo" "$VIF" || not_ok "a capture into a slow reader starts"
timeout 15 ip netns exec "$U" ping -q -c 1500 -i 0.002 -s 1400 -W 1 10.81.0.2 >/dev/null 2>&1 &
PG=$!
TAP_PIDS+=("$PG")
sleep 1.5
kill -INT "$PS"
wait "$PS"
check "SIGINT with the output backed up: exit 0" test $? = 0
wait "$RP"
kill "$PG" 2>/dev/null
wait "$PG" 2>/dev/null
check "... no write interrupted" bash -c "! grep -q 'Interrupted' '$SLOW.fifo.err'"
check "... the file holds whole records, as many as it says it wrote" python3 -c "
import re, struct, sys
d = open('$SLOW.pcap', 'rb').read()
off, n = 24, 0
while off + 16 <= len(d):
    cap, = struct.unpack('<I', d[off + 8:off + 12])
    off, n = off + 16 + cap, n + 1
assert off == len(d), ('a record cut short', off, len(d))
said = int(re.search(r'^(\d+) frames written', open('$SLOW.fifo.err').read(), re.M).group(1))
assert n == said and n > 0, (n, said)
"

# A reader that goes away while the port is idle (no IPv6 to chatter): noticed within a
# poll period, and the port can be captured again at once.
ip netns exec "$U" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$A" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
t0=$(date +%s%N)
timeout 8 "$PVNET" -d "$RUN" capture "$VIF" 2>"$TAP_TMP/idle.err" | (sleep 1; exit 0)
check "a reader that goes away from an idle port's capture: it ends, exit 0" \
	test "${PIPESTATUS[0]}" = 0
idle_ms=$(ms_since "$t0")
check "... within 3 s (${idle_ms} ms)" test "$idle_ms" -lt 3000
check "... saying why" grep -q "the capture of $VIF ended (the reader of its output went away)" \
	"$TAP_TMP/idle.err"
cap_start PC "$TAP_TMP/again.pcap" "$VIF" &&
	check "... and the port can be captured again" tap_stop "$PC"

# A port name that is not UTF-8 is no port name: a usage error, not "out of memory".
"$PVNET" -d "$RUN" capture $'\xff' -w "$TAP_TMP/x" 2>"$TAP_TMP/utf8.err"
check "a port name that is not UTF-8: usage error (exit 2)" test $? = 2
check "... saying so" grep -q 'not a port name (not valid UTF-8)' "$TAP_TMP/utf8.err"

# A capture socket that cannot be read (a fake pvnetd hands out a regular file): the
# reason printed, exit 1, and pvnetd still asked to stop.
FAKE=$TAP_TMP/fake
mkdir -p "$FAKE"
timeout 20 python3 - "$FAKE/pvnetd.sock" "$FAKE/ops" "$TAP_TMP/x" <<'PY' &
import array, json, os, socket, sys
srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(sys.argv[1])
srv.listen(1)
c, _ = srv.accept()
with open(sys.argv[2], "w") as log:
    while True:
        data = c.recv(65536)
        if not data:
            break
        req = json.loads(data)
        log.write(req["op"] + "\n")
        log.flush()
        anc = []
        if req["op"] == "capture-start":
            fd = os.open(sys.argv[3], os.O_RDWR | os.O_CREAT, 0o600)
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
            rep = {"port": req["port"], "direction": req["direction"], "snaplen": req["snaplen"]}
        else:
            rep = {"port": req["port"], "captured": 0, "dropped": 0}
        c.sendmsg([json.dumps(rep).encode()], anc)
PY
PK=$!
TAP_PIDS+=("$PK")
wait_for_file "$FAKE/pvnetd.sock" 10
timeout 10 "$PVNET" -d "$FAKE" capture vif1.0 -w "$TAP_TMP/fake.pcap" 2>"$TAP_TMP/fake.err"
check "a capture socket that cannot be read: exit 1" test $? = 1
check "... saying why" grep -q \
	'^pvnet capture: reading the capture socket: Socket operation on non-socket' \
	"$TAP_TMP/fake.err"
check "... and pvnetd is asked to stop" grep -qx capture-stop "$FAKE/ops"
wait "$PK" 2>/dev/null

# A fake pvnetd whose capture socket already holds two malformed datagrams (one without a
# direction, one larger than any record, cut short by the read) and two of three records
# each when the capture starts, for three captures in turn: one it gives a snap length other
# than asked (refused), one it stops (-c counts records, not datagrams: -c 2 skips the
# malformed ones, counting them, and writes exactly 2, with their timestamps), and one it
# goes away from instead of stopping it (an error: pvnetd could not say what it dropped,
# and the capture had not ended by itself).  A fourth capture gets its frames only when it
# stops (-t 1), into a file on a full tmpfs: the error is the stop's, exit 1.
FAKE2=$TAP_TMP/fake2
mkdir -p "$FAKE2"
timeout 40 python3 - "$FAKE2/pvnetd.sock" <<'PY' &
import array, json, socket, struct, sys


def record(ts, byte):
    # struct sw_capture_hdr: ts_ns, len, dir (1: in), flags, gso_type, 0, gso_size, port,
    # caplen; then the frame, padded to 8 bytes (24 + 60 -> 88)
    return struct.pack("=QIBBBBHHI", ts, 60, 1, 0, 0, 0, 0, 1, 60) + bytes([byte]) * 60 + bytes(4)


srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
srv.bind(sys.argv[1])
srv.listen(1)
for mode in ("snaplen", "stop", "gone", "late"):
    c, _ = srv.accept()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    if mode != "late":
        ours.send(struct.pack("=QIBBBBHHI", 1, 60, 0, 0, 0, 0, 0, 1, 60) + bytes(64))
        ours.send(record(1, 0xEE) + bytes(300000))
        for d in range(2):
            ours.send(b"".join(record(10**18 + 123456789 + d * 3 + r, d * 3 + r) for r in range(3)))
    while True:
        data = c.recv(65536)
        if not data:
            break
        req = json.loads(data)
        anc = []
        if req["op"] == "capture-start":
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [theirs.fileno()]))]
            snap = req["snaplen"] - (mode == "snaplen")
            rep = {"port": req["port"], "direction": req["direction"], "snaplen": snap}
        elif mode == "gone":
            break
        else:
            rep = {"port": req["port"], "captured": 6, "dropped": 0}
            if mode == "late":
                for d in range(2):
                    ours.send(b"".join(record(10**18, 7) for r in range(30)))
        c.sendmsg([json.dumps(rep).encode()], anc)
        if req["op"] == "capture-stop":
            ours.close()
    c.close()
    ours.close()
    theirs.close()
PY
PK=$!
TAP_PIDS+=("$PK")
wait_for_file "$FAKE2/pvnetd.sock" 10
timeout 10 "$PVNET" -d "$FAKE2" capture vif1.0 -s 100 -c 2 -w "$TAP_TMP/c2.pcap" \
	2>"$TAP_TMP/c2.err"
check "pvnetd taking another snap length than asked: exit 1" test $? = 1
check "... saying so" grep -q "pvnetd took snap length 99 for 100" "$TAP_TMP/c2.err"
timeout 10 "$PVNET" -d "$FAKE2" capture vif1.0 -c 2 -w "$TAP_TMP/c2.pcap" 2>"$TAP_TMP/c2.err"
check "-c 2 with 6 frames waiting in 2 datagrams: exit 0" test $? = 0
check "... saying 2 frames written" grep -qx "2 frames written" "$TAP_TMP/c2.err"
check "... and the malformed datagrams counted" \
	grep -qx "2 malformed capture datagrams skipped" "$TAP_TMP/c2.err"
check "... and 2 in the file, the first two, with their timestamps" python3 -c "
import struct
d = open('$TAP_TMP/c2.pcap', 'rb').read()
off, first = 24, []
while off + 16 <= len(d):
    s, ns, cap, orig = struct.unpack('<IIII', d[off:off + 16])
    first.append((d[off + 16], s, ns, cap, orig))
    off += 16 + cap
assert first == [(0, 10**9, 123456789, 60, 60), (1, 10**9, 123456790, 60, 60)], first
"
timeout 10 "$PVNET" -d "$FAKE2" capture vif1.0 -c 2 -w "$TAP_TMP/c3.pcap" 2>"$TAP_TMP/c3.err"
check "pvnetd gone at the stop of a capture that did not end by itself: exit 1" test $? = 1
check "... saying so" grep -q "frames written; stopping: " "$TAP_TMP/c3.err"
mkdir -p "$FULL" && mount -t tmpfs -o size=4k pvnet-capture-test "$FULL"
timeout 10 "$PVNET" -d "$FAKE2" capture vif1.0 -t 1 -w "$FULL/c4.pcap" 2>"$TAP_TMP/c4.err"
check "a file that fills up with what the stop drains: exit 1" test $? = 1
check "... saying why" grep -q '^pvnet capture: writing the pcap file: No space left on device' \
	"$TAP_TMP/c4.err"
umount "$FULL"
wait "$PK" 2>/dev/null

# Refusals: each with a reason, pvnetd unharmed.
check_fails "an unknown port is refused" "$PVNET" -d "$RUN" capture vif99.0 -w "$TAP_TMP/x"
check "... saying so" bash -c \
	"'$PVNET' -d '$RUN' capture vif99.0 -w '$TAP_TMP/x' 2>&1 | grep -q 'no port \"vif99.0\" on the switch'"
echo keep >"$TAP_TMP/keep.pcap"
"$PVNET" -d "$RUN" capture vif99.0 -w "$TAP_TMP/keep.pcap" 2>/dev/null
check "... and leaves a file of the name as it was" test "$(cat "$TAP_TMP/keep.pcap")" = keep
check "a file that cannot be written is refused, saying why" bash -c \
	"! '$PVNET' -d '$RUN' capture '$VIF' -w '$TAP_TMP/none/x.pcap' 2>'$TAP_TMP/nofile.err' &&
	 grep -q 'cannot write $TAP_TMP/none/x.pcap: No such file or directory' '$TAP_TMP/nofile.err'"
check "... before pvnetd starts a capture" bash -c \
	"'$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
assert json.load(sys.stdin)[\"captures\"] == []
'"
# -s 0 is "all of it", as tcpdump's: the largest snap length (the status below shows it).
cap_start PC "$TAP_TMP/busy.pcap" "$VIF" -s 0 || exit 1
check "pvnet status lists the capture running" bash -c \
	"'$PVNET' -d '$RUN' status | grep -Eq '^  $VIF \\(inout, snap length 262144\\): [0-9]+ frames captured, 0 dropped'"
check "... and so does its JSON" bash -c \
	"'$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
c = json.load(sys.stdin)[\"captures\"]
assert [(x[\"port\"], x[\"direction\"], x[\"snaplen\"]) for x in c] == [(\"$VIF\", \"inout\", 262144)], c
'"
check "a port being captured is refused a second capture" bash -c \
	"! '$PVNET' -d '$RUN' capture '$VIF' -w '$TAP_TMP/x' 2>'$TAP_TMP/busy.err' &&
	 grep -q 'being captured already' '$TAP_TMP/busy.err'"
for bad in "-Q sideways" "-s 262145" "-c 0" "-t x" "-t 0" "extra"; do
	check "bad option $bad: usage error (exit 2)" bash -c \
		"'$PVNET' -d '$RUN' capture '$VIF' $bad -w '$TAP_TMP/x' 2>/dev/null; test \$? = 2"
done
check "no port: usage error (exit 2)" bash -c \
	"'$PVNET' -d '$RUN' capture -w '$TAP_TMP/x' 2>/dev/null; test \$? = 2"
check "stdout a terminal: usage error (exit 2), saying so" python3 -c "
import os, subprocess
m, s = os.openpty()
p = subprocess.run(['$PVNET', '-d', '$RUN', 'capture', '$VIF'], stdout=s, stderr=subprocess.PIPE,
                   timeout=10)
assert p.returncode == 2 and b'stdout is a terminal' in p.stderr, (p.returncode, p.stderr)
"
# -t: whole seconds.
t0=$(date +%s%N)
timeout 10 "$PVNET" -d "$RUN" capture up0 -t 1 -w "$TAP_TMP/t1.pcap" 2>/dev/null
check "-t 1: exit 0" test $? = 0
t1_ms=$(ms_since "$t0")
check "... after a second (${t1_ms} ms)" test "$t1_ms" -ge 1000 -a "$t1_ms" -lt 4000
# A socket for the output whose reader goes away (POLLHUP, not POLLERR as for a pipe), the
# port idle: noticed within a poll period.
check "a socket reader that goes away from an idle port's capture: it ends, exit 0" python3 -c "
import socket, subprocess, time
a, b = socket.socketpair()
p = subprocess.Popen(['$PVNET', '-d', '$RUN', 'capture', 'up0'], stdout=a, stderr=subprocess.PIPE)
a.close()
time.sleep(1)
assert len(b.recv(4096)) == 24  # the pcap header: nothing unread to make it an error (POLLERR)
b.close()
t = time.monotonic()
try:
    err = p.communicate(timeout=8)[1]
finally:
    p.kill()
assert p.returncode == 0 and time.monotonic() - t < 3, (p.returncode, err)
assert b'the reader of its output went away' in err, err
"

# The port goes away under its capture: the capture ends and says so.
# ends_by_itself PID WHAT: the capture PID ends within 5 s, exit 0 (else it is killed).
ends_by_itself() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		not_ok "$2"
		kill -KILL "$1"
	else
		check "$2, exit 0" wait "$1"
	fi
}
check "the guest detaches" tap_stop "$PA"
ends_by_itself "$PC" "the capture of a vif that went away ends by itself"
check "... saying so" grep -q 'ended (the port or pvnetd went away)' "$TAP_TMP/busy.pcap.err"
check "pvnetd still answers, and lists no capture any more" bash -c \
	"'$PVNET' -d '$RUN' status | grep -q '^captures: 0'"
# pvnetd stops under a capture (of the uplink): the capture ends as when its port goes, exit
# 0 with its summary, and pvnetd's log says it stopped the capture, not that a client left.
"$PVNET" -d "$RUN" capture up0 -w "$TAP_TMP/last.pcap" 2>"$TAP_TMP/last.err" &
PC=$!
timeout 10 bash -c "until '$PVNET' -d '$RUN' status | grep -q '^captures: 1'; do sleep 0.1; done"
check "pvnetd stops cleanly" stop_pvnetd
ends_by_itself "$PC" "the capture ends when pvnetd stops"
check "... saying so, with what it wrote" bash -c \
	"grep -q 'ended (the port or pvnetd went away)' '$TAP_TMP/last.err' &&
	 grep -Eq '^[0-9]+ frames written' '$TAP_TMP/last.err' &&
	 grep -q 'pvnetd went away: its count of frames dropped is not known' '$TAP_TMP/last.err'"
check "pvnetd's log: the capture stopped because pvnetd stops" \
	grep -q 'capture of up0 stopped: pvnetd stops' "$RUN.log"
finish
