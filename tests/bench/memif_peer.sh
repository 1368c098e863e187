#!/bin/bash
# SPDX-License-Identifier: MIT
# memif_peer.sh - bench/memif-peer.sh gives a figure only for a whole window
#
# A stand-in testpmd (this script, called with FAKE_TESTPMD set) prints what
# the peer script reads: the server "forwards packets on", then an Rx-pps
# line a second; the client just runs.  FAKE_MODE picks a run: "ok", a server
# that prints a line every 2 s instead ("slow", as testpmd on some hosts), a
# client that dies two seconds in, a server whose traffic stops after two seconds.
# Each peer run takes its duration (2 s; 4 s for the stall, 6 for the slow one) and about
# two more.
#
# Usage: memif_peer.sh MEMIF_PEER_SH
set -u

if [ -n "${FAKE_TESTPMD:-}" ]; then
	case "$*" in
	*role=server*)
		echo "Logical Core 1 (socket 0) forwards packets on 1 streams"
		for i in $(seq 1 30); do
			pps=1234567
			[ "$FAKE_MODE" = stall ] && [ "$i" -gt 2 ] && pps=0
			echo "  Rx-pps:      $pps          Rx-bps:   0"
			if [ "$FAKE_MODE" = slow ]; then sleep 2; else sleep 1; fi
		done
		;;
	*role=client*)
		if [ "$FAKE_MODE" = client-dies ]; then
			sleep 2
			exit 139
		fi
		sleep 30
		;;
	esac
	exit 0
fi

PEER=$1
SELF=$(realpath "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# peer MODE [SECS]: run the peer at 64 bytes for SECS (2) with the stand-in; sets rc, out, err.
peer() {
	out=$(FAKE_TESTPMD=1 FAKE_MODE=$1 TESTPMD=$SELF timeout -s KILL 60 bash "$PEER" -s 64 \
		-t "${2:-2}" \
		-j "$tmp/$1.json" 2>"$tmp/$1.err")
	rc=$?
	err=$(cat "$tmp/$1.err")
}

peer ok
[ $rc -eq 0 ] || fail "a whole window: exit $rc, $err"
python3 - "$tmp/ok.json" <<'EOF' || fail "a whole window's JSON: $(cat "$tmp/ok.json")"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["frame_size"] == 64, r
assert r["mpps"] == 1.234567, r            # six decimals, not three
assert abs(r["gbit_s"] - 1.234567 * 64 * 8 / 1e3) < 1e-5, r
assert r["samples"] >= 1, r
EOF
[[ $out == *"1.235"* ]] || fail "the table's figure: $out"

# Fewer figures than seconds, covering the window all the same: a figure.
peer slow 6
[ $rc -eq 0 ] || fail "figures every 2 s over the window: exit $rc, $err"
[[ $out == *"1.235"* ]] || fail "the table's figure, figures every 2 s: $out"

peer client-dies
[ $rc -ne 0 ] || fail "a client that died in the window gave a figure: $out"
[[ $err == *"memif client exited during the 64-byte window"* ]] || fail "not said why: $err"
[[ $out == *"failed"* ]] || fail "the table does not say failed: $out"
[ ! -s "$tmp/client-dies.json" ] ||
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["results"] == []' \
		"$tmp/client-dies.json" || fail "the JSON holds a figure: $(cat "$tmp/client-dies.json")"

peer stall 4
[ $rc -ne 0 ] || fail "a window mostly without traffic gave a figure: $out"
[[ $err == *"only 1 of 4 seconds at 64 bytes had traffic"* ]] || fail "not said why: $err"
echo "memif-peer: ok"
