#!/bin/bash
# SPDX-License-Identifier: MIT
# veth-peer.sh - the kernel's answer at pvnet bench's frame sizes: iperf3 UDP between two
# network namespaces joined by a veth pair
#
# For each frame size F: iperf3 -u -b 0 -l (F - 42) for DURATION seconds from one namespace
# to the other (42 = Ethernet 14 + IPv4 20 + UDP 8 bytes, so that a datagram is one frame
# of F bytes, counted as pvnet bench counts: Ethernet header included, no FCS).  The veth
# MTU is 65521, so that the 65535-byte frame fits unfragmented.  What the receiver got
# (packets - lost_packets, iperf3's own accounting) over the test's seconds gives Mpps and
# Gbit/s.  Everything it creates (two namespaces, iperf3 processes) is removed on exit,
# also on a signal.
#
# Usage: bench/veth-peer.sh [--frame-size LIST] [--duration SECS] [--json FILE]   (root; iperf3, ip, python3)
set -u

SIZES=64,1514,9000,65535
DURATION=3
JSON=
COMMAND="$0 $*"

while [ $# -gt 0 ]; do
	case $1 in
	--frame-size | -s) SIZES=$2; shift 2 ;;
	--duration | -t) DURATION=$2; shift 2 ;;
	--json | -j) JSON=$2; shift 2 ;;
	-h | --help) sed -n 's/^# Usage: //p' "$0"; exit 0 ;;
	*) echo "veth-peer.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case $DURATION in '' | *[!0-9]*) echo "veth-peer.sh: --duration takes whole seconds" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "veth-peer.sh: needs root (network namespaces)" >&2; exit 77; }
for t in iperf3 ip python3; do
	command -v $t >/dev/null || { echo "veth-peer.sh: needs $t" >&2; exit 77; }
done

TMP=$(mktemp -d /tmp/veth-peer.XXXXXX)
NS=(vpeer-a$$ vpeer-b$$)
SPID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	[ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
	for n in "${NS[@]}"; do
		for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

for n in "${NS[@]}"; do ip netns add "$n" && ip -n "$n" link set lo up || exit 1; done
ip link add veth0 netns "${NS[0]}" mtu 65521 type veth peer name veth1 netns "${NS[1]}" mtu 65521 || exit 1
ip -n "${NS[0]}" addr add 10.92.0.1/24 dev veth0
ip -n "${NS[1]}" addr add 10.92.0.2/24 dev veth1
ip -n "${NS[0]}" link set veth0 up
ip -n "${NS[1]}" link set veth1 up

printf "%6s %8s %8s %10s\n" frame Mpps Gbit/s received
results=()
rc=0
IFS=, read -r -a size_list <<<"$SIZES"
for len in "${size_list[@]}"; do
	case $len in '' | *[!0-9]*) echo "veth-peer.sh: bad frame size '$len'" >&2; exit 2 ;; esac
	if [ "$len" -lt 60 ] || [ "$len" -gt 65535 ]; then
		echo "veth-peer.sh: frame size $len outside 60..65535" >&2
		exit 2
	fi
	port=$((5400 + RANDOM % 500))
	timeout -s KILL $((DURATION + 15)) ip netns exec "${NS[1]}" iperf3 -s -1 -p $port >/dev/null 2>&1 &
	SPID=$!
	sleep 0.3
	# In the background and waited for, so that a signal's trap runs at once.
	timeout -s KILL $((DURATION + 10)) ip netns exec "${NS[0]}" iperf3 -c 10.92.0.2 -p $port -u \
		-b 0 -l $((len - 42)) -t "$DURATION" -J >"$TMP/$len.json" 2>"$TMP/$len.err" &
	wait $!
	wait "$SPID" 2>/dev/null
	SPID=
	if r=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["end"]["sum"]
got = s["packets"] - s["lost_packets"]
pps = got / s["seconds"]
print("%.4f %.4f %d" % (pps / 1e6, pps * int(sys.argv[2]) * 8 / 1e9, got))' "$TMP/$len.json" "$len" 2>/dev/null); then
		read -r mpps gbit got <<<"$r"
		printf "%6s %8s %8s %10s\n" "$len" "$mpps" "$gbit" "$got"
		results+=("$len $mpps $gbit $got")
	else
		printf "%6s failed\n" "$len"
		head -c 300 "$TMP/$len.json" >&2
		rc=1
	fi
done

if [ -n "$JSON" ]; then
	python3 -c 'import json, sys
res = []
for r in sys.argv[3:]:
    size, mpps, gbit, got = r.split()
    res.append({"frame_size": int(size), "mpps": float(mpps), "gbit_s": float(gbit),
                "received": int(got)})
json.dump({"peer": "veth", "tool": "iperf3 UDP", "command": sys.argv[2], "results": res},
          open(sys.argv[1], "w"), indent=2)' "$JSON" "$COMMAND" "${results[@]}" || rc=1
fi
exit $rc
