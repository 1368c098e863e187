#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# main.sh - pvnet's main job: build, then run the stream benchmark with its embedded
# defaults (frame sizes 64, 1514, 9000 and 65535 bytes, copy and map TX, one queue;
# pvnetd is started and stopped by the benchmark itself).  The figures go to stdout
# and, as JSON, to out/bench.json.  Extra arguments are passed to `pvnet bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null

mkdir -p out
build/tools/pvnet/pvnet bench --json out/bench.json "$@"
echo "JSON: out/bench.json"
