#!/bin/bash
# SPDX-License-Identifier: MIT
# smoke.sh - a short `pvnet bench` through a real pvnetd: runs, stops everything, writes valid JSON
#
# Usage: smoke.sh PVNET PVNETD
# Skips (77) only when pvnet bench says the vifs never connected (exit 3).
set -u
PVNET=$1
PVNETD=$2
TMP=$(mktemp -d /tmp/pvnet-bench-smoke.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# pvnet bench makes its private directory in TMPDIR: ours, so that other
# benchmarks running on the machine do not confuse the checks below.
mkdir "$TMP/tmp"
# The run itself is bounded by pvnet bench; timeout only ends a hang (a bug).
TMPDIR=$TMP/tmp timeout -s KILL 100 "$PVNET" bench --duration 0.3 --frame-size 64,9000 --queues 1 \
	--tx-mode copy,map --json "$TMP/out.json" --pvnetd "$PVNETD" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
cat "$TMP/out.txt"
cat "$TMP/err.txt" >&2
if [ $rc -eq 3 ]; then
	echo "SKIP: the vifs never connected (data path not there yet)"
	exit 77
fi
if [ $rc -ne 0 ]; then
	echo "FAIL: pvnet bench exited with $rc"
	exit 1
fi
left=$(find "$TMP/tmp" -mindepth 1 -maxdepth 1)
if [ -n "$left" ]; then
	echo "FAIL: pvnet bench left its temporary directory: $left"
	exit 1
fi
if pgrep -f -- "--run-dir $TMP/tmp/" >/dev/null; then
	echo "FAIL: pvnet bench left a pvnetd running: $(pgrep -af -- "--run-dir $TMP/tmp/")"
	exit 1
fi

python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
for k in ("machine", "command", "results"):
    assert k in doc, "no top-level " + k
for k in ("cpu", "cores", "kernel"):
    assert k in doc["machine"], "machine lacks " + k
res = doc["results"]
assert len(res) == 4, "expected 4 runs (2 sizes x 2 modes), got %d" % len(res)
need = ("frame_size", "queues", "tx_mode", "tx_frames", "rx_frames", "dropped", "corrupt",
        "out_of_order", "gbit_s", "mpps", "cpu_us_per_kb", "notifications_per_1000")
seen = set()
for r in res:
    for k in need:
        assert k in r, "run lacks " + k
    assert "error" not in r, "run failed: " + r["error"]
    assert r["rx_frames"] > 0, "no frame received: %r" % r
    assert r["corrupt"] == 0, "corrupt frames: %r" % r
    assert r["out_of_order"] == 0, "out-of-order frames: %r" % r
    assert r["queues"] == 1
    assert r["steering"] == "queue" and r["migrate"] is False, r
    assert r["gbit_s"] > 0 and r["mpps"] > 0 and r["cpu_us_per_kb"] > 0
    seen.add((r["frame_size"], r["tx_mode"]))
assert seen == {(64, "copy"), (9000, "copy"), (64, "map"), (9000, "map")}, seen
print("ok: %d runs, JSON shape valid" % len(res))
' "$TMP/out.json" || exit 1

# The other API, every payload byte checked, two queues (flows), one mode.
TMPDIR=$TMP/tmp timeout -s KILL 60 "$PVNET" bench --duration 0.2 --frame-size 1514,4097 --queues 2 \
	--tx-mode map --api copy --verify full --json "$TMP/copy.json" --pvnetd "$PVNETD" ||
	{ echo "FAIL: pvnet bench --api copy --verify full"; exit 1; }
python3 -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
assert len(res) == 2, res
for r in res:
    assert "error" not in r, r["error"]
    assert r["api"] == "copy" and r["verify"] == "full" and r["queues"] == 2, r
    assert r["rx_frames"] > 0 and r["corrupt"] == 0 and r["out_of_order"] == 0, r
print("ok: copying API, full verification, 2 queues")
' "$TMP/copy.json" || exit 1

# Steering and migration: one short run per policy, 2 queues, senders hopping CPUs.
# hash and xps-safe never move a flow while it has frames in flight: zero out of order.
# (xps may reorder; that is what it demonstrates, so it is not checked here.)
TMPDIR=$TMP/tmp timeout -s KILL 60 "$PVNET" bench --duration 0.3 --frame-size 1514 --queues 2 \
	--tx-mode map --steering hash,xps-safe --migrate --json "$TMP/steer.json" \
	--pvnetd "$PVNETD" ||
	{ echo "FAIL: pvnet bench --steering hash,xps-safe --migrate"; exit 1; }
python3 -c '
import json, sys
res = json.load(open(sys.argv[1]))["results"]
assert len(res) == 2, res
assert [r["steering"] for r in res] == ["hash", "xps-safe"], [r["steering"] for r in res]
for r in res:
    assert "error" not in r, r["error"]
    assert r["migrate"] is True and r["queues"] == 2, r
    assert r["rx_frames"] > 0 and r["corrupt"] == 0, r
    assert r["out_of_order"] == 0, "%s reordered: %r" % (r["steering"], r)
    assert r["run_totals"]["corrupt"] == 0 and r["run_totals"]["out_of_order"] == 0, r
print("ok: steering hash and xps-safe with migrating senders: zero out of order")
' "$TMP/steer.json" || exit 1
