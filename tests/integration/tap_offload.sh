#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tap_offload.sh - a guest without offloads beside one with them (pvnet attach --no-offload):
# TCP both ways, IPv4 and IPv6, with an attached namespace and with one on the TAP uplink
# (whose kernel is offered TSO too).  They send 64 KiB segments with blank checksums;
# pvnetd must segment them and fill the checksums in for the guest without offloads,
# whose kernel drops anything with a bad checksum, so every byte iperf3 counts proves it.
# Then one IPv6 datagram whose UDP header ends past netback's 128-byte header copy, and IPv6
# TCP both ways with destination options that push every TCP header past it.
# usage: tap_offload.sh PVNETD PVNET
set -u
PVNETD=$1
PVNET=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tap_lib.sh"
tap_require
need_tool ethtool
trap tap_cleanup EXIT

A=pvoa$$
B=pvob$$
U=pvou$$
RUN="$TAP_TMP/run"
tap_ns "$A" && tap_ns "$B" && tap_ns "$U" || exit 1
start_pvnetd "$RUN" --tx-mode map --uplink "tap:up0@$U" || exit 1
tap_attach PA "$A" eth0 || exit 1
tap_attach PB "$B" eth0 --no-offload || exit 1
tap_addr "$A" eth0 10.78.0.1 fd78::1 && tap_addr "$B" eth0 10.78.0.2 fd78::2
tap_addr "$U" up0 10.78.0.3 fd78::3
# The adapters say what they negotiated, and A's TAP validates its frames by that (a
# checksum left blank over IPv4 or IPv6 is passed on only under its family's offload).
check "A's adapter took every offload" \
	grep -q '^attached: .*, offloads csum4 csum6 tso4 tso6, mtu 1500$' "$TAP_TMP/attach-$A.log"
check "B's adapter took none" grep -q '^attached: .*, offloads, mtu 1500$' "$TAP_TMP/attach-$B.log"
check "A's TAP offers TSO to its kernel" \
	sh -c "ip netns exec $A ethtool -k eth0 | grep -q '^tcp-segmentation-offload: on'"
check "B's TAP offers none" \
	sh -c "ip netns exec $B ethtool -k eth0 | grep -q '^tcp-segmentation-offload: off'"
check "the uplink's TAP offers TSO for IPv4 and IPv6 to its kernel" \
	sh -c "ip netns exec $U ethtool -k up0 >'$TAP_TMP/up0.k' &&
	       grep -q '^	tx-tcp-segmentation: on' '$TAP_TMP/up0.k' &&
	       grep -q '^	tx-tcp6-segmentation: on' '$TAP_TMP/up0.k'"
check "ping A -> B" tap_ping "$A" 10.78.0.2
check "ping B -> A (IPv6)" tap_ping "$B" fd78::1
# From (client) A, then from the uplink's namespace, to B; "-R": B sends.
for spec in "A 10.78.0.2" "A fd78::2" "A 10.78.0.2 -R" "A fd78::2 -R" "uplink 10.78.0.2" \
	"uplink fd78::2 -R"; do
	read -r from run <<<"$spec"
	cli=$A
	[ "$from" = uplink ] && cli=$U
	what="iperf3 TCP $from -> B ${run/ -R/, reverse (B -> $from)}"
	if r=$(tap_iperf "$B" "$cli" $run -t 1); then
		ok "$what: $r"
	else
		not_ok "$what"
	fi
done
# From the uplink's namespace to B, an IPv6 UDP datagram with a 72-byte hop-by-hop header and
# its checksum left blank (an AF_PACKET socket with PACKET_VNET_HDR: NEEDS_CSUM reaches the
# uplink's TAP reader): its UDP header ends at byte 134, past the 128 bytes of a guest's
# header copy, and pvnetd must still find it to fill the checksum in for B.  B's kernel
# drops the datagram if the checksum is wrong, and skips the unknown option (type 0x1e).
if command -v python3 >/dev/null; then
	macb=$(ip -n "$B" -br link show eth0 | awk '{ print $3 }')
	ip netns exec "$B" timeout 6 python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("fd78::2", 5300))
s.settimeout(5)
print(s.recv(2000).decode())' >"$TAP_TMP/hbh.out" 2>&1 &
	rcv=$!
	sleep 0.5
	ip netns exec "$U" timeout 5 python3 - "$macb" <<'EOF2'
import socket, struct, sys
SOL_PACKET, PACKET_VNET_HDR, NEEDS_CSUM = 263, 15, 1
dst = socket.inet_pton(socket.AF_INET6, "fd78::2")
src = socket.inet_pton(socket.AF_INET6, "fd78::3")
data = b"hop-by-hop " * 8
udp_len = 8 + len(data)
# the pseudo-header's sum, folded, not complemented: what a blank checksum field holds
words = src + dst + struct.pack("!IxxxB", udp_len, 17)
s = sum(struct.unpack("!%dH" % (len(words) // 2), words))
while s >> 16:
    s = (s & 0xffff) + (s >> 16)
udp = struct.pack("!HHHH", 40000, 5300, udp_len, s) + data
hbh = bytes([17, 8, 0x1e, 66]) + bytes(66) + bytes([1, 0])  # 72 bytes
ip6 = struct.pack("!IHBB", 6 << 28, len(hbh) + udp_len, 0, 64) + src + dst
frame = bytes.fromhex(sys.argv[1].replace(":", "")) + bytes.fromhex("020000000003") + \
    b"\x86\xdd" + ip6 + hbh + udp
start = 14 + 40 + len(hbh)
vnet = struct.pack("=BBHHHH", NEEDS_CSUM, 0, 0, 0, start, 6)
p = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
p.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
p.bind(("up0", 0))
p.send(vnet + frame)
EOF2
	wait "$rcv"
	check "IPv6 UDP with a 72-byte hop-by-hop header, checksum blank, uplink -> B: arrives" \
		grep -q "^hop-by-hop" "$TAP_TMP/hbh.out"
fi
# IPv6 TCP with 152 bytes of destination options, both ways between A (attached) and the
# uplink's namespace: every segment's TCP header ends between byte 226 and 266, past the
# 128 bytes netback copies of every frame, within the 270 where Linux looks for it.  Both
# kernels send TSO frames with blank checksums; A's adapter, netback (which copies more
# header for them), the uplink and A's adapter again must take them as they are.  The
# option is one of unknown type 0x1e, which a receiver skips (PadN may not be over 7 bytes).
if command -v python3 >/dev/null; then
	port=$((5400 + RANDOM % 500))
	cat >"$TAP_TMP/dstopts.py" <<'EOF2'
import hashlib, socket, sys
IPV6_DSTOPTS, N = 59, 8 << 20
opts = bytes([6, 152 // 8 - 1, 0x1E, 148]) + bytes(148)  # next header TCP (the kernel sets it)
data = bytes(range(251)) * (N // 251 + 1)
data = data[:N]
def recv_all(c, n):
    h, got = hashlib.sha256(), 0
    while got < n:
        b = c.recv(min(65536, n - got))
        if not b:
            break
        h.update(b)
        got += len(b)
    return got, h.hexdigest()
role, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
want = hashlib.sha256(data).hexdigest()
if role == "server":
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, IPV6_DSTOPTS, opts)  # the accepted socket's too
    s.bind((addr, port))
    s.listen(1)
    s.settimeout(10)
    c, _ = s.accept()
    c.settimeout(10)
    got, h = recv_all(c, N)
    c.sendall(("%d %s\n" % (got, h)).encode())
    c.sendall(data)
    c.close()
else:
    c = socket.socket(socket.AF_INET6)
    c.settimeout(10)
    c.setsockopt(socket.IPPROTO_IPV6, IPV6_DSTOPTS, opts)
    c.connect((addr, port))
    c.sendall(data)
    line = b""
    while not line.endswith(b"\n"):
        b = c.recv(1)
        if not b:
            break
        line += b
    got, h = recv_all(c, N)
    there = line.decode().split()
    print("to server: %s bytes %s; from server: %d bytes %s" %
          (there[0] if there else "?", "intact" if there[1:] == [want] else "CORRUPT",
           got, "intact" if got == N and h == want else "CORRUPT"))
EOF2
	timeout 20 ip netns exec "$U" python3 "$TAP_TMP/dstopts.py" server fd78::3 "$port" \
		>"$TAP_TMP/dstopts.srv" 2>&1 &
	srv=$!
	for ((i = 0; i < 100; i++)); do
		ip netns exec "$U" ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	r=$(timeout 20 ip netns exec "$A" python3 "$TAP_TMP/dstopts.py" client fd78::3 "$port" 2>&1)
	wait "$srv" || r="$r (server: $(tail -c 300 "$TAP_TMP/dstopts.srv"))"
	check "IPv6 TCP with 152 bytes of destination options, A <-> uplink: $r" \
		grep -qx "to server: 8388608 bytes intact; from server: 8388608 bytes intact" <<<"$r"
	va="vif$(tap_domain "$A").0"
	check "$va refused no offloaded frame of it (tx_bad_offload 0)" \
		awk '$1 == "tx_bad_offload:" { n++; s += $2 } END { exit !(n > 0 && s == 0) }' \
		<<<"$("$PVNET" -d "$RUN" show "$va" 2>&1)"
	check "the uplink refused no TSO frame of it (rx_bad_gso 0)" bash -c \
		"'$PVNET' -d '$RUN' status --json | python3 -c '
import json, sys
ups = json.load(sys.stdin)[\"uplinks\"]
sys.exit(any(u[\"counters\"][\"rx_bad_gso\"] for u in ups))'"
fi
# pvnet show: B's vif did the work (the first vif of domain B's adapter).
vb="vif$(tap_domain "$B").0"
show=$("$PVNET" -d "$RUN" show "$vb" 2>&1)
gso=$(awk '$1 == "rx_sw_gso:" { s += $2 } END { print s + 0 }' <<<"$show")
segs=$(awk '$1 == "rx_sw_gso_segs:" { s += $2 } END { print s + 0 }' <<<"$show")
bad=$(awk '$1 == "rx_sw_bad:" || $1 == "rx_oversize:" { s += $2 } END { print s + 0 }' <<<"$show")
check "$vb segmented GSO frames for B ($gso frames, $segs segments)" test "$gso" -gt 0 -a "$segs" -gt "$gso"
check "$vb found none it could not segment or deliver (rx_sw_bad, rx_oversize)" test "$bad" -eq 0
# ... and says what it negotiated: B took no offload, A took them all.
va="vif$(tap_domain "$A").0"
check "pvnet show: $vb negotiated no checksum offload and no GSO" \
	grep -qx '  features: sg rx-notify[a-z -]*' <<<"$show"
check "pvnet show: $va negotiated TSO and checksum offload" \
	grep -q '^  features: sg gso-tcpv4 gso-tcpv6 csum-ipv4 csum-ipv6 rx-notify' \
	<<<"$("$PVNET" -d "$RUN" show "$va" 2>&1)"
check "adapter A detaches cleanly" tap_stop "$PA"
check "adapter B detaches cleanly" tap_stop "$PB"
check "pvnetd stops cleanly" stop_pvnetd
finish
