#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-deps.sh - install the Debian packages pvnet needs to build, test and benchmark.
# Installs only what is missing; needs root (or sudo) when something is missing.
set -euo pipefail

pkgs=(
	build-essential pkgconf meson ninja-build clang clang-format
	libclang-rt-dev     # libFuzzer's runtime: the clang build in test.sh links the fuzz harnesses
	libxen-dev          # Xen public headers (netif.h, ring.h, grant_table.h, xs_wire.h) and libxenstore
	xenstore-utils      # xenstore-read/-write/-ls/-rm/-watch for the integration tests
	libcmocka-dev       # unit test framework
	libjansson-dev      # JSON for the control socket and bench output
	libsodium-dev       # keyed hashing for tables a guest can fill
	uthash-dev          # hash tables for the control plane
	libmnl-dev          # netlink (link setup of TAP devices)
	libpcap-dev         # pcap files written by pvnet capture
	tcpdump             # reads pvnet capture's files in the capture test
	python3             # test-result summary in scripts/test.sh
	iproute2            # network namespaces for the integration tests
	iputils-ping        # ping across pvnet in the TAP tests
	iperf3              # TCP through pvnet in the TAP tests and the benchmark
	jq                  # the benchmark's tcp section reads iperf3's JSON with it
	ethtool             # the TAP devices' offloads, checked in the TAP tests
	strace              # holds a system call of pvnet attach in a TAP test (a race made wide)
	gnuplot-nox         # pvnet bench --plot: PNG charts of the sweeps
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
