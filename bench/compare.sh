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
# The host moves this machine's vCPUs, and how far apart it puts the two
# decides how fast anything that passes data between them runs: memif
# 9000 B, for one, by 8x (docs/benchmarks.md, "Where the host puts the
# vCPUs").  So bench/cpurtt samples the cache-line round trip between the
# first two CPUs every 200 ms throughout, each run records its time window
# (a pvnet run its timed window, window_start_unix and window_s in its JSON;
# a memif run its process's lifetime), and each run is classed near (every sample in its window below RTT_FAR_NS),
# far (every sample at or above it) or mixed; memif's per-second figures
# are classed each by its own interval (memif-peer.sh's "intervals").  The
# summary adds the ratios of figures of one class: the median of pvnet's
# near runs over the median of memif's near figures, and so for far.
#
# Where near ends and far begins differs between machines (54-107 ns near and
# 239-375 far on one, 40-68 and 110-270 on another), so by default the
# threshold is taken from the run's own samples: the widest gap between them
# (bench/rttclass.py).
#
# Usage: bench/compare.sh BUILD_DIR [OUT_DIR]
#        bench/compare.sh --report OUT_DIR   (the summary of an earlier run again)
#   BUILD_DIR: a meson build directory with tools/pvnet/pvnet and tools/pvnetd/pvnetd
#   OUT_DIR:   where the JSON files go (default: a new /tmp/pvnet-compare.XXXXXX)
# Environment: ROUNDS (3), PVNET_DURATION (2 s), MEMIF_DURATION (4 s),
#   ONE_CPU (the CPU of the one-CPU runs; default the last one online),
#   RTT_FAR_NS (the round trip in ns from which two CPUs count as far apart;
#   default auto: from the samples, 150 when they form one group)
set -u -o pipefail
usage="usage: compare.sh BUILD_DIR [OUT_DIR] | compare.sh --report OUT_DIR"
HERE=$(cd "$(dirname "$0")" && pwd)
REPORT_ONLY=
if [ "${1:-}" = --report ]; then
	REPORT_ONLY=1
	OUT=${2:?$usage}
	BUILD=
	[ -f "$OUT/windows.txt" ] && [ -f "$OUT/cpurtt.txt" ] || {
		echo "compare.sh: $OUT holds no compare.sh run (windows.txt, cpurtt.txt)" >&2
		exit 2
	}
	ROUNDS=$(find "$OUT" -maxdepth 1 -name 'r*-memif-64-a.json' | wc -l)
	[ "$ROUNDS" -ge 1 ] || { echo "compare.sh: $OUT holds no complete round" >&2; exit 2; }
else
	BUILD=${1:?$usage}
	OUT=${2:-$(mktemp -d /tmp/pvnet-compare.XXXXXX)}
	ROUNDS=${ROUNDS:-3}
fi
PVNET_DURATION=${PVNET_DURATION:-2}
MEMIF_DURATION=${MEMIF_DURATION:-4}
ONE_CPU=${ONE_CPU:-$(($(nproc) - 1))}
RTT_FAR_NS=${RTT_FAR_NS:-auto}
if [ "$RTT_FAR_NS" != auto ] && ! [[ $RTT_FAR_NS =~ ^[1-9][0-9]{0,5}$ ]]; then
	echo "compare.sh: RTT_FAR_NS is auto or a number of ns (1-999999), not '$RTT_FAR_NS'" >&2
	exit 2
fi
RTT_PID=
if [ -z "$REPORT_ONLY" ]; then
	mkdir -p "$OUT"
	: >"$OUT/windows.txt"

	# The placement sampler, bounded by its own --duration too; ended with the script.
	if [ "$(nproc)" -ge 2 ]; then
		"$BUILD/bench/cpurtt" --interval-ms 200 --duration 7200 >"$OUT/cpurtt.txt" &
		RTT_PID=$!
	else
		: >"$OUT/cpurtt.txt"
	fi
	trap '[ -n "$RTT_PID" ] && kill "$RTT_PID" 2>/dev/null' EXIT

	# window NAME CMD...: run CMD, recording "NAME START END" (realtime seconds) for the classes.
	window() {
		local name=$1 start rc
		shift
		start=$(date +%s.%N)
		"$@"
		rc=$?
		echo "$name $start $(date +%s.%N)" >>"$OUT/windows.txt"
		return $rc
	}

	memif() { # memif SIZE NAME: $OUT/NAME.json
		window "$2" "$HERE/memif-peer.sh" --frame-size "$1" --duration "$MEMIF_DURATION" \
			--json "$OUT/$2.json" | tail -n +2
	}
	pvnet() { # pvnet SIZE NAME [split|spread|one]: $OUT/NAME-copy.json and $OUT/NAME-map.json
		local place=${3:-split} pin=() mode

		[ "$place" = one ] && pin=(taskset -c "$ONE_CPU") && place=spread
		# One mode per call, so that each run has a window of its own.
		for mode in copy map; do
			window "$2-$mode" "${pin[@]}" "$BUILD/tools/pvnet/pvnet" bench --section stream \
				--frame-size "$1" --queues 1 --tx-mode "$mode" --placement "$place" \
				--duration "$PVNET_DURATION" --pvnetd "$BUILD/tools/pvnetd/pvnetd" \
				--json "$OUT/$2-$mode.json" | tail -n +2 || return 1
		done
	}

	for r in $(seq 1 "$ROUNDS"); do
		echo "== round $r =="
		for s in 64 9000; do
			memif "$s" "r$r-memif-$s-a" || exit 1
			pvnet "$s" "r$r-pvnet-$s" || exit 1
			pvnet "$s" "r$r-pvnets-$s" spread || exit 1
			pvnet "$s" "r$r-pvnet1-$s" one || exit 1
			memif "$s" "r$r-memif-$s-b" || exit 1
		done
		pvnet 1514 "r$r-pvnet-1514" || exit 1
		pvnet 65535 "r$r-pvnet-65535" || exit 1
		pvnet 65535 "r$r-pvnets-65535" spread || exit 1
		pvnet 65535 "r$r-pvnet1-65535" one || exit 1
	done
	[ -n "$RTT_PID" ] && kill "$RTT_PID" 2>/dev/null
	RTT_PID=
fi

python3 - "$OUT" "$ROUNDS" "$RTT_FAR_NS" "$HERE" <<'EOF'
import json, statistics, sys
out, rounds, far_arg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, sys.argv[4])
import rttclass

samples = rttclass.read_samples("%s/cpurtt.txt" % out)
if far_arg == "auto":
    far_ns, far_how = rttclass.far_threshold([rtt for _, rtt in samples], 150)
else:
    far_ns, far_how = int(far_arg), "RTT_FAR_NS"
windows = {}
for line in open("%s/windows.txt" % out):
    name, start, end = line.split()
    windows[name] = (float(start), float(end))

def klass(start, end):
    """(class, median round trip ns) of a time window: near, far, mixed or '-' (no samples)."""
    rtts = [rtt for t, rtt in samples if start <= t <= end]
    if not rtts:
        return "-", None
    cls = "near" if max(rtts) < far_ns else "far" if min(rtts) >= far_ns else "mixed"
    return cls, statistics.median(rtts)

def host(name):
    """A pvnet run's class by its timed window (in its JSON), else by its process's lifetime."""
    try:
        x = load(name)["results"][0]
        start, length = x.get("window_start_unix"), x.get("window_s")
    except (OSError, ValueError, KeyError, IndexError):
        start = length = None
    if start is not None and length is not None:
        return klass(start, start + length)
    return klass(*windows[name])

def load(name):
    return json.load(open("%s/%s.json" % (out, name)))

def pv(r, size, mode, key, run="pvnet"):
    for x in load("r%d-%s-%d-%s" % (r, run, size, mode))["results"]:
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
def host_s(name):
    cls, rtt = host(name)
    return cls if rtt is None else "%s %.0f" % (cls, rtt)

print("\nper round: pvnet copy/map; memif before/after (their mean is the reference);")
print("others s: CPU-seconds other processes used during pvnet's map window;")
print("host: the class of the map run's window and of the memif runs', with the median")
print("round trip between the CPUs in ns (near below %d ns, far from it: %s)" % (
      far_ns, far_how))
print("%5s %6s %6s %9s %9s %17s %7s %9s %10s %8s %9s %19s" % (
      "round", "frame", "place", "copy", "map", "memif before/after", "unit", "us/KB map",
      "ntf/1k map", "others s", "host map", "host memif"))
# Unknown figures (JSON null) print as "-", never as a made-up 0.
for r in range(1, rounds + 1):
    for size, run in ((64, "pvnet"), (64, "pvnets"), (64, "pvnet1"), (1514, "pvnet"),
                      (9000, "pvnet"), (9000, "pvnets"), (9000, "pvnet1"), (65535, "pvnet"),
                      (65535, "pvnets"), (65535, "pvnet1")):
        unit = "mpps" if size == 64 else "gbit_s"
        peer = size in (64, 9000)
        m = "%8.3f/%8.3f" % tuple(mf_ab(r, size, unit)) if peer else "%17s" % "-"
        hm = ("%s/%s" % tuple(host_s("r%d-memif-%d-%s" % (r, size, ab)) for ab in "ab")
              if peer else "-")
        others = pv(r, size, "map", "machine_cpu_s", run)["others"]
        print("%5d %6d %6s %9.3f %9.3f %s %7s %9s %10s %8s %9s %19s" % (
            r, size, {"pvnet": "split", "pvnets": "spread", "pvnet1": "one"}[run],
            pv(r, size, "copy", unit, run),
            pv(r, size, "map", unit, run), m, "Mpps" if unit == "mpps" else "Gbit/s",
            num(pv(r, size, "map", "cpu_us_per_kb", run), "%.4f"),
            num(pv(r, size, "map", "notifications_per_1000", run), "%.2f"),
            num(others, "%.2f"), host_s("r%d-%s-%d-map" % (r, run, size)), hm))
print("\nratios per round, and the median:")
for name, v in ratios.items():
    print("  %-60s %s  median %.3f" % (name, " ".join("%.3f" % x for x in v),
                                       statistics.median(v)))

# The same ratios from runs of one host class only: medians over every round.  A pvnet
# run is classed by its window; memif's figures each by their own interval.
def pooled(cls, nums, dens):
    n = [v for c, v in nums if c == cls]
    d = [v for c, v in dens if c == cls]
    if not n or not d:
        return "no figures of both sides (%d/%d)" % (len(n), len(d))
    return "%.3f  (%d/%d)" % (statistics.median(n) / statistics.median(d), len(n), len(d))

def memif_intervals(size, unit):
    out_ = []
    for r in range(1, rounds + 1):
        for ab in "ab":
            for start, end, mpps in load("r%d-memif-%d-%s" % (r, size, ab))["results"][0].get(
                    "intervals", []):
                v = mpps if unit == "mpps" else mpps * size * 8 / 1e3
                out_.append((klass(start, end)[0], v))
    return out_

rs = range(1, rounds + 1)
print("\nratios from figures of one host class: the median of pvnet's runs of the class over")
print("the median of the reference's (memif: each per-second figure classed by its own")
print("interval); in brackets how many figures each side had:")
for run, where in (("pvnet", ""), ("pvnets", "spread, "), ("pvnet1", "one CPU, ")):
    for size, unit, goal in ((64, "mpps", "0.5"), (9000, "gbit_s", "1.0")):
        nums = [(host("r%d-%s-%d-map" % (r, run, size))[0], pv(r, size, "map", unit, run))
                for r in rs]
        dens = memif_intervals(size, unit)
        for cls in ("near", "far"):
            print("  %-60s %s" % ("%s%d B, %s: pvnet map / memif (>= %s)" % (
                where, size, cls, goal), pooled(cls, nums, dens)))
    maps = [(host("r%d-%s-65535-map" % (r, run))[0], pv(r, 65535, "map", "gbit_s", run))
            for r in rs]
    copies = [(host("r%d-%s-65535-copy" % (r, run))[0], pv(r, 65535, "copy", "gbit_s", run))
              for r in rs]
    for cls in ("near", "far"):
        print("  %-60s %s" % ("%s65535 B, %s: map / copy (>= 1.3)" % (where, cls),
                              pooled(cls, maps, copies)))
print("JSON files in " + out)
EOF
