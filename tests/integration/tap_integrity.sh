#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_integrity.sh - the bytes TCP carries through two attached namespaces arrive intact.
# With checksum offload nobody on the path verifies a TCP checksum (the sender leaves it
# blank, the receiver is told it is valid), so the content is checked end to end: 200 MB
# of pseudo-random bytes from A to B over one TCP connection, SHA-256 on both sides, with
# 1 queue and with 4.  Enough to keep the sender's TX pages in flight, so that the adapter
# reads both straight into TX pages and, when they run short, through its private buffer.
# usage: tap_integrity.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool python3
trap tap_cleanup EXIT

for q in 1 4; do
	# Names of this round's own: a namespace deleted by the last round may linger in the kernel.
	A=pvia$$-$q
	B=pvib$$-$q
	RUN="$TAP_TMP/run$q"
	start_pvnetd "$RUN" --tx-mode map || exit 1
	tap_ns "$A" && tap_ns "$B" || exit 1
	tap_attach PA "$A" eth0 --queues "$q" || exit 1
	tap_attach PB "$B" eth0 --queues "$q" || exit 1
	tap_addr "$A" eth0 10.79.0.1 fd79::1 && tap_addr "$B" eth0 10.79.0.2 fd79::2
	check "$q queue(s): ping A -> B" tap_ping "$A" 10.79.0.2
	timeout 40 ip netns exec "$B" python3 -c '
import hashlib, socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.79.0.2", 7779))
s.listen(1)
s.settimeout(30)
c, _ = s.accept()
c.settimeout(30)
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 20)
    if not b:
        break
    h.update(b)
    n += len(b)
print(n, h.hexdigest())' >"$TAP_TMP/recv" 2>&1 &
	rpid=$!
	TAP_PIDS+=("$rpid")
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$B" ss -ltnH "sport = :7779" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	sent=$(timeout 40 ip netns exec "$A" python3 -c '
import hashlib, random, socket
r = random.Random(5)
blk = bytes(r.getrandbits(8) for _ in range(1 << 20))
s = socket.create_connection(("10.79.0.2", 7779), timeout=30)
h, n = hashlib.sha256(), 0
for i in range(200):
    b = blk[i * 4099 % len(blk):] + blk[:i * 4099 % len(blk)]
    s.sendall(b)
    h.update(b)
    n += len(b)
s.close()
print(n, h.hexdigest())' 2>&1)
	wait "$rpid"
	recv=$(cat "$TAP_TMP/recv")
	if [ -n "$sent" ] && [ "$sent" = "$recv" ]; then
		ok "$q queue(s): 200 MB A -> B intact (${sent%% *} bytes)"
	else
		not_ok "$q queue(s): sent '$sent', received '$recv'"
	fi
	check "$q queue(s): adapter A detaches cleanly" tap_stop "$PA"
	check "$q queue(s): adapter B detaches cleanly" tap_stop "$PB"
	sed -n 's/^ *\(tap_rx_held\|tap_rx_linearized\): /# A: \1 /p' "$TAP_TMP/attach-$A.log"
	grep -E 'tap_rx_(runt|oversize|bad_gso|bad_csum|send_errors)|tap_tx_(dropped|bad_offload)' \
		"$TAP_TMP"/attach-*.log | grep -v ': 0$' && not_ok "$q queue(s): adapter drop counters"
	check "$q queue(s): pvnetd stops cleanly" stop_pvnetd
	ip netns del "$A" && ip netns del "$B"
	TAP_NS=()
done
finish
