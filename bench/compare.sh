#!/bin/bash
# SPDX-License-Identifier: MIT
# compare.sh - pvnet bench against the memif peer, interleaved, with the issue's ratios
#
# This machine's speed drifts (and other work shares its two CPUs), so every
# ratio compares runs made next to each other in time, and the whole thing
# is repeated:
#
#   round r = 1..ROUNDS:
#     memif 64 B,   pvnet 64 B (copy, map),   memif 64 B
#     memif 9000 B, pvnet 9000 B (copy, map), memif 9000 B
#     pvnet 1514 B (copy, map), pvnet 65535 B (copy, map)
#
# Each ratio of a round uses the mean of the two memif runs around its pvnet
# run; the summary gives every round and the median.  pvnet's JSON records
# how busy the machine was besides pvnet (machine_cpu_s.others).
#
# Usage: bench/compare.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR: a meson build directory with tools/pvnet/pvnet and tools/pvnetd/pvnetd
#   OUT_DIR:   where the JSON files go (default: a new /tmp/pvnet-compare.XXXXXX)
# Environment: ROUNDS (3), PVNET_DURATION (2 s), MEMIF_DURATION (4 s)
set -u
BUILD=${1:?usage: compare.sh BUILD_DIR [OUT_DIR]}
OUT=${2:-$(mktemp -d /tmp/pvnet-compare.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-3}
PVNET_DURATION=${PVNET_DURATION:-2}
MEMIF_DURATION=${MEMIF_DURATION:-4}
mkdir -p "$OUT"

memif() { # memif SIZE FILE
	"$HERE/memif-peer.sh" --frame-size "$1" --duration "$MEMIF_DURATION" --json "$2" | tail -n +2
}
pvnet() { # pvnet SIZE FILE
	"$BUILD/tools/pvnet/pvnet" bench --section stream --frame-size "$1" --queues 1 --tx-mode copy,map \
		--duration "$PVNET_DURATION" --pvnetd "$BUILD/tools/pvnetd/pvnetd" --json "$2" |
		tail -n +2
}

for r in $(seq 1 "$ROUNDS"); do
	echo "== round $r =="
	for s in 64 9000; do
		memif "$s" "$OUT/r$r-memif-$s-a.json" || exit 1
		pvnet "$s" "$OUT/r$r-pvnet-$s.json" || exit 1
		memif "$s" "$OUT/r$r-memif-$s-b.json" || exit 1
	done
	for s in 1514 65535; do
		pvnet "$s" "$OUT/r$r-pvnet-$s.json" || exit 1
	done
done

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def load(name):
    return json.load(open("%s/%s.json" % (out, name)))

def pv(r, size, mode, key):
    for x in load("r%d-pvnet-%d" % (r, size))["results"]:
        if x["tx_mode"] == mode:
            return x[key]

def mf_ab(r, size, key):
    return [load("r%d-memif-%d-%s" % (r, size, ab))["results"][0][key] for ab in "ab"]

def mf(r, size, key):
    return sum(mf_ab(r, size, key)) / 2

ratios = {
    "64 B: pvnet map Mpps / memif Mpps (>= 0.5)":
        [pv(r, 64, "map", "mpps") / mf(r, 64, "mpps") for r in range(1, rounds + 1)],
    "9000 B: pvnet map Gbit/s / memif Gbit/s (>= 1.0)":
        [pv(r, 9000, "map", "gbit_s") / mf(r, 9000, "gbit_s") for r in range(1, rounds + 1)],
    "65535 B: map Gbit/s / copy Gbit/s (>= 1.3)":
        [pv(r, 65535, "map", "gbit_s") / pv(r, 65535, "copy", "gbit_s")
         for r in range(1, rounds + 1)],
}
print("\nper round: pvnet copy/map; memif before/after (their mean is the reference);")
print("others s: CPU-seconds other processes used during pvnet's map window")
print("%5s %6s %9s %9s %17s %7s %9s %10s %8s" % ("round", "frame", "copy", "map",
      "memif before/after", "unit", "us/KB map", "ntf/1k map", "others s"))
for r in range(1, rounds + 1):
    for size in (64, 1514, 9000, 65535):
        unit = "mpps" if size == 64 else "gbit_s"
        m = ("%8.3f/%8.3f" % tuple(mf_ab(r, size, unit)) if size in (64, 9000)
             else "%17s" % "-")
        others = pv(r, size, "map", "machine_cpu_s")["others"]
        print("%5d %6d %9.3f %9.3f %s %7s %9.4f %10.2f %8s" % (
            r, size, pv(r, size, "copy", unit), pv(r, size, "map", unit), m,
            "Mpps" if unit == "mpps" else "Gbit/s", pv(r, size, "map", "cpu_us_per_kb") or 0,
            pv(r, size, "map", "notifications_per_1000") or 0,
            "%.2f" % others if others is not None else "-"))
print("\nratios per round, and the median:")
for name, v in ratios.items():
    print("  %-50s %s  median %.3f" % (name, " ".join("%.3f" % x for x in v),
                                       statistics.median(v)))
print("JSON files in " + out)
EOF
