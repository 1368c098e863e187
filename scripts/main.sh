#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# main.sh - pvnet's main job: build, start pvnetd with embedded defaults in a private
# run directory, show the xenstore protocol and the control socket working, stop it.
# (The stream benchmark takes this place once it lands.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null

run=$(mktemp -d /tmp/pvnet-main-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$run"
}
trap cleanup EXIT INT TERM

build/tools/pvnetd/pvnetd --run-dir "$run" --log-level warn &
pid=$!
for _ in $(seq 100); do [ -S "$run/pvnetd.sock" ] && break; sleep 0.05; done

export XENSTORED_PATH="$run/xenstore.sock"
echo "== pvnetd is running; its store speaks the xenstore protocol to Xen's own tools:"
xenstore-write /local/domain/0/name pvnetd /vm/demo/name demo
xenstore-chmod /vm/demo n0 r1
echo "\$ xenstore-ls -p /"
xenstore-ls -p /
echo
echo "== pvnet status"
build/tools/pvnet/pvnet -d "$run" status
