#!/bin/bash
# SPDX-License-Identifier: MIT
# compare.sh - pvnet bench against the memif peer, interleaved, with the issue's ratios
#
# This machine's speed drifts (and other work shares its two CPUs), so every
# ratio compares runs made next to each other in time, and the whole thing
# is repeated:
#
#   round r = 1..ROUNDS:
#     memif 64 B,   pvnet 64 B (copy, map) split, spread and on one CPU,   memif 64 B
#     memif 9000 B, pvnet 9000 B (copy, map) split, spread and on one CPU, memif 9000 B
#     pvnet 1514 B (copy, map), pvnet 65535 B (copy, map) split, spread and on one CPU
#
# Each ratio of a round uses the mean of the two memif runs around its pvnet
# run; the summary gives every round and the median.  pvnet's JSON records
# how busy the machine was besides pvnet (machine_cpu_s.others).
#
# Three placements of pvnet (docs/benchmarks.md, "Placement"): split, the
# bench's default and the one the issue's ratios use (pvnetd on a CPU of its
# own, the two frontend domains on the other, as the memif peer has one CPU
# per dpdk-testpmd); spread (--placement spread: the scheduler places the
# three busy threads); and on one CPU (`taskset -c ONE_CPU`: pvnetd and both
# frontends share it).
#
# Usage: bench/compare.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR: a meson build directory with tools/pvnet/pvnet and tools/pvnetd/pvnetd
#   OUT_DIR:   where the JSON files go (default: a new /tmp/pvnet-compare.XXXXXX)
# Environment: ROUNDS (3), PVNET_DURATION (2 s), MEMIF_DURATION (4 s),
#   ONE_CPU (the CPU of the one-CPU runs; default the last one online)
set -u -o pipefail
BUILD=${1:?usage: compare.sh BUILD_DIR [OUT_DIR]}
OUT=${2:-$(mktemp -d /tmp/pvnet-compare.XXXXXX)}
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-3}
PVNET_DURATION=${PVNET_DURATION:-2}
MEMIF_DURATION=${MEMIF_DURATION:-4}
ONE_CPU=${ONE_CPU:-$(($(nproc) - 1))}
mkdir -p "$OUT"

memif() { # memif SIZE FILE
	"$HERE/memif-peer.sh" --frame-size "$1" --duration "$MEMIF_DURATION" --json "$2" | tail -n +2
}
pvnet() { # pvnet SIZE FILE [split|spread|one]
	local place=${3:-split} pin=()

	[ "$place" = one ] && pin=(taskset -c "$ONE_CPU") && place=spread
	"${pin[@]}" "$BUILD/tools/pvnet/pvnet" bench --section stream --frame-size "$1" --queues 1 \
		--tx-mode copy,map --placement "$place" --duration "$PVNET_DURATION" \
		--pvnetd "$BUILD/tools/pvnetd/pvnetd" --json "$2" | tail -n +2
}

for r in $(seq 1 "$ROUNDS"); do
	echo "== round $r =="
	for s in 64 9000; do
		memif "$s" "$OUT/r$r-memif-$s-a.json" || exit 1
		pvnet "$s" "$OUT/r$r-pvnet-$s.json" || exit 1
		pvnet "$s" "$OUT/r$r-pvnets-$s.json" spread || exit 1
		pvnet "$s" "$OUT/r$r-pvnet1-$s.json" one || exit 1
		memif "$s" "$OUT/r$r-memif-$s-b.json" || exit 1
	done
	pvnet 1514 "$OUT/r$r-pvnet-1514.json" || exit 1
	pvnet 65535 "$OUT/r$r-pvnet-65535.json" || exit 1
	pvnet 65535 "$OUT/r$r-pvnets-65535.json" spread || exit 1
	pvnet 65535 "$OUT/r$r-pvnet1-65535.json" one || exit 1
done

python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def load(name):
    return json.load(open("%s/%s.json" % (out, name)))

def pv(r, size, mode, key, run="pvnet"):
    for x in load("r%d-%s-%d" % (r, run, size))["results"]:
        if x["tx_mode"] == mode:
            if "error" in x:
                sys.exit("round %d, %d B, %s%s: the run failed: %s" % (
                    r, size, mode, PLACES[run], x["error"]))
            return x[key]
    sys.exit("round %d, %d B: no %s run in %s" % (r, size, mode, run))

PLACES = {"pvnet": " (split)", "pvnets": " (spread)", "pvnet1": " (one CPU)"}

def num(v, fmt):
    return fmt % v if v is not None else "-"

def mf_ab(r, size, key):
    return [load("r%d-memif-%d-%s" % (r, size, ab))["results"][0][key] for ab in "ab"]

def mf(r, size, key):
    return sum(mf_ab(r, size, key)) / 2

ratios = {}
for run, where in (("pvnet", ""), ("pvnets", "spread, "), ("pvnet1", "one CPU, ")):
    rs = range(1, rounds + 1)
    ratios[where + "64 B: pvnet map Mpps / memif Mpps (>= 0.5)"] = [
        pv(r, 64, "map", "mpps", run) / mf(r, 64, "mpps") for r in rs]
    ratios[where + "9000 B: pvnet map Gbit/s / memif Gbit/s (>= 1.0)"] = [
        pv(r, 9000, "map", "gbit_s", run) / mf(r, 9000, "gbit_s") for r in rs]
    ratios[where + "65535 B: map Gbit/s / copy Gbit/s (>= 1.3)"] = [
        pv(r, 65535, "map", "gbit_s", run) / pv(r, 65535, "copy", "gbit_s", run) for r in rs]
print("\nper round: pvnet copy/map; memif before/after (their mean is the reference);")
print("others s: CPU-seconds other processes used during pvnet's map window")
print("%5s %6s %6s %9s %9s %17s %7s %9s %10s %8s" % ("round", "frame", "place", "copy", "map",
      "memif before/after", "unit", "us/KB map", "ntf/1k map", "others s"))
# Unknown figures (JSON null) print as "-", never as a made-up 0.
for r in range(1, rounds + 1):
    for size, run in ((64, "pvnet"), (64, "pvnets"), (64, "pvnet1"), (1514, "pvnet"),
                      (9000, "pvnet"), (9000, "pvnets"), (9000, "pvnet1"), (65535, "pvnet"),
                      (65535, "pvnets"), (65535, "pvnet1")):
        unit = "mpps" if size == 64 else "gbit_s"
        m = ("%8.3f/%8.3f" % tuple(mf_ab(r, size, unit)) if size in (64, 9000)
             else "%17s" % "-")
        others = pv(r, size, "map", "machine_cpu_s", run)["others"]
        print("%5d %6d %6s %9.3f %9.3f %s %7s %9s %10s %8s" % (
            r, size, {"pvnet": "split", "pvnets": "spread", "pvnet1": "one"}[run],
            pv(r, size, "copy", unit, run),
            pv(r, size, "map", unit, run), m, "Mpps" if unit == "mpps" else "Gbit/s",
            num(pv(r, size, "map", "cpu_us_per_kb", run), "%.4f"),
            num(pv(r, size, "map", "notifications_per_1000", run), "%.2f"),
            num(others, "%.2f")))
print("\nratios per round, and the median:")
for name, v in ratios.items():
    print("  %-60s %s  median %.3f" % (name, " ".join("%.3f" % x for x in v),
                                       statistics.median(v)))
print("JSON files in " + out)
EOF
