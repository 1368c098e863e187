#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_malformed.sh - frames whose virtio-net header does not match them, sent into the TAP of
# `pvnet attach` from inside its namespace (an AF_PACKET socket with PACKET_VNET_HDR: the
# kernel passes our header to the TAP reader): each is dropped and counted by the adapter,
# which reads it straight into TX pages, and the pair still works afterwards (ping, TCP).
# A frame the kernel itself refuses is reported, not failed: the kernel's own GSO checks
# drop most such frames before the TAP (its tx_dropped counter says so), and those cases
# are then not exercised here (tests/uplink covers the validation itself, on every case).
# usage: tap_malformed.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool python3
trap tap_cleanup EXIT

A=pvma$$
B=pvmb$$
start_pvnetd "$RUN" --tx-mode map || exit 1
tap_ns "$A" && tap_ns "$B" || exit 1
tap_attach PA "$A" eth0 --queues 1 || exit 1
tap_attach PB "$B" eth0 --queues 1 || exit 1
tap_addr "$A" eth0 10.78.0.1 fd78::1 && tap_addr "$B" eth0 10.78.0.2 fd78::2
check "ping A -> B before" tap_ping "$A" 10.78.0.2
macb=$(ip -n "$B" -br link show eth0 | awk '{ print $3 }')

# Each case is named for the adapter counter it must raise (tap_rx_NAME).  The sender prints
# per case "NAME sent", "NAME refused: why" (send() failed) or "NAME dropped by the kernel"
# (eth0's tx_dropped rose: the stack's GSO checks caught it before the TAP).
sent=$(timeout 10 ip netns exec "$A" python3 - "$macb" <<'EOF'
import socket, struct, sys, time

mac_b = bytes.fromhex(sys.argv[1].replace(":", ""))
ETH_P_ALL, SOL_PACKET, PACKET_VNET_HDR = 3, 263, 15
NEEDS_CSUM, GSO_TCPV4, GSO_TCPV6 = 1, 1, 4

def ip6(proto, l4):
    h = struct.pack("!IHBB16s16s", 6 << 28, len(l4), proto, 64,
                    bytes(15) + b"\x01", bytes(15) + b"\x02")
    return h + l4

def ip4(proto, l4):
    tot = 20 + len(l4)
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, tot, 1, 0x4000, 64, proto, 0,
                    bytes([10, 78, 0, 1]), bytes([10, 78, 0, 2]))
    return h + l4

def eth(payload, etype=b"\x08\x00"):
    return mac_b + b"\x02\x00\x00\x00\x00\x01" + etype + payload

# The kernel checks a TCP header at csum_start (its data offset) before the TAP sees a
# GSO frame: payload byte doff_at gets a data offset of 5 so that a misplaced one passes.
def payload(n, doff_at):
    p = bytearray(n)
    if doff_at is not None:
        p[doff_at] = 5 << 4
    return bytes(p)

def tcp(n, doff_at=None):
    th = struct.pack("!HHIIBBHHH", 40000, 5201, 1, 1, 5 << 4, 0x18, 65535, 0, 0)
    return th + payload(n, doff_at)

def udp(n, doff_at=None):
    return struct.pack("!HHHH", 40000, 5201, 8 + n, 0) + payload(n, doff_at)

def vnet(flags, gso_type, hdr_len, gso_size, start, off):
    return struct.pack("=BBHHHH", flags, gso_type, hdr_len, gso_size, start, off)

cases = [
    # segments of 20 + 20 + 4000 bytes on a 1500-byte MTU
    ("oversize", vnet(NEEDS_CSUM, GSO_TCPV4, 54, 4000, 34, 16), eth(ip4(6, tcp(9000)))),
    ("oversize", vnet(NEEDS_CSUM, GSO_TCPV6, 74, 3000, 54, 16),
     eth(ip6(6, tcp(7000)), b"\x86\xdd")),
    # a TCPv4 GSO header on a UDP datagram
    ("bad_gso", vnet(NEEDS_CSUM, GSO_TCPV4, 54, 1000, 34, 16), eth(ip4(17, udp(3000, 4)))),
    # TSO whose checksum is not at the TCP header but 20 bytes further
    ("bad_csum", vnet(NEEDS_CSUM, GSO_TCPV4, 74, 1000, 54, 16), eth(ip4(6, tcp(3000, 12)))),
]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
s.bind(("eth0", 0))
def tx_dropped():
    with open("/sys/class/net/eth0/statistics/tx_dropped") as f:
        return int(f.read())

for name, hdr, frame in cases:
    before = tx_dropped()
    try:
        s.send(hdr + frame)
    except OSError as e:
        print(name, "refused:", e.strerror)
        continue
    time.sleep(0.05)
    print(name, "dropped by the kernel" if tx_dropped() != before else "sent")
EOF
) || not_ok "the sender ran: $sent"
echo "$sent" | sed 's/^/# /'
sleep 0.5
check "ping A -> B after" tap_ping "$A" 10.78.0.2
if r=$(tap_iperf "$B" "$A" 10.78.0.2 -t 1); then ok "iperf3 TCP A -> B after: $r"; else not_ok "iperf3 after"; fi
check "adapter A detaches cleanly" tap_stop "$PA"
check "adapter B detaches cleanly" tap_stop "$PB"
logA="$TAP_TMP/attach-$A.log"
logB="$TAP_TMP/attach-$B.log"
count() { sed -n "s/^ *$1: //p" "$2"; }
for c in oversize bad_gso bad_csum; do
	want=$(grep -c "^$c sent" <<<"$sent")
	[ "$want" -gt 0 ] ||
		{ skip_check "$c: the kernel let none reach the TAP, not exercised here"; continue; }
	n=$(count "tap_rx_$c" "$logA")
	if [ "${n:-0}" -ge "$want" ]; then ok "$c: dropped and counted (tap_rx_$c $n)"; else
		not_ok "$c: tap_rx_$c is ${n:-missing}, $want sent"; fi
done
# B saw only what crossed pvnet: no bad frame, and its own counters are clean.
grep -E 'tap_rx_(runt|oversize|bad_gso|bad_csum)|tap_tx_(dropped|bad_offload)' "$logB" |
	grep -v ': 0$' && not_ok "adapter B drop counters"
[ "$(count tap_rx_send_errors "$logA")" = 0 ] || not_ok "libpvnet refused a validated frame"
check "pvnetd stops cleanly" stop_pvnetd
finish
