#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# main.sh - pvnet's main job: build, then run `pvnet bench` with its embedded defaults:
# the field reports' experiments (docs/field-reports.md), each with pvnet's answer and a one-line
# verdict - frame sizes 64 B..64 KiB, 1/2/4/8 queues, copy vs map (vs persistent) TX,
# TX steering with migrating senders, and (as root, with iperf3) TCP through pvnet vs a
# veth pair.  About 80 seconds on 2 CPUs; pvnetd, namespaces and iperf3 are started and
# stopped by the benchmark itself.  The tables go to stdout, every figure as JSON to
# out/bench.json, charts to out/plot/ (docs/benchmarks.md).  Extra arguments are passed
# to `pvnet bench` (e.g. --repeat 3, --peers, --section sizes).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null

mkdir -p out
build/tools/pvnet/pvnet bench --json out/bench.json --plot out/plot "$@"
echo "JSON: out/bench.json; charts: out/plot/"
