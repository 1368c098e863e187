#!/bin/bash
# SPDX-License-Identifier: MIT
# ab.sh - one pvnet bench command with two builds, alternating: new over old, pair by pair
#
# How the changes in docs/ were measured ("the old and the new pvnetd
# alternating"): this machine's speed drifts by up to 3x over minutes, so
# the old and the new build run one after the other, PAIRS times, and only
# the two runs of a pair are compared (bench/abreport.py).  Each build runs
# its own pvnet and pvnetd, so a change on either side of the ring counts.
#
# Usage: bench/ab.sh OLD_BUILD NEW_BUILD PAIRS OUT_DIR [pvnet bench options...]
#        bench/ab.sh --report OUT_DIR   (the summary of an earlier run again)
#   OLD_BUILD, NEW_BUILD: meson build directories (tools/pvnet/pvnet, tools/pvnetd/pvnetd);
#     an old one comes from `git worktree add DIR COMMIT` and `meson setup DIR/b DIR`
#   PAIRS: 1..50
#   options: as for pvnet bench, e.g. -S stream -s 64,9000 -q 1 -m map -t 2
#     (not --json or --pvnetd, which ab.sh sets)
set -u -o pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
usage="usage: ab.sh OLD_BUILD NEW_BUILD PAIRS OUT_DIR [pvnet bench options...] | ab.sh --report OUT_DIR"
if [ "${1:-}" = --report ]; then
	[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
	exec python3 "$HERE/abreport.py" "$2"
fi
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
OLD=$1 NEW=$2 PAIRS=$3 OUT=$4
shift 4
if ! [[ $PAIRS =~ ^[1-9][0-9]?$ ]] || [ "$PAIRS" -gt 50 ]; then
	echo "ab.sh: PAIRS is 1..50, not '$PAIRS'" >&2
	exit 2
fi
for b in "$OLD" "$NEW"; do
	for t in tools/pvnet/pvnet tools/pvnetd/pvnetd; do
		[ -x "$b/$t" ] || { echo "ab.sh: $b/$t is missing: not a built meson build directory" >&2; exit 2; }
	done
done
for a in "$@"; do
	case $a in
	--json | --json=* | -j | --pvnetd | --pvnetd=*)
		echo "ab.sh: $a is set by ab.sh itself" >&2
		exit 2
		;;
	esac
done
mkdir -p "$OUT" || exit 2

for i in $(seq 1 "$PAIRS"); do
	for side in old new; do
		b=$OLD
		[ $side = new ] && b=$NEW
		echo "== pair $i, $side ($b) =="
		"$b/tools/pvnet/pvnet" bench --pvnetd "$b/tools/pvnetd/pvnetd" "$@" \
			--json "$OUT/p$i-$side.json" | tail -n +2 || {
			echo "ab.sh: pair $i, $side: pvnet bench failed" >&2
			exit 1
		}
	done
done
echo
python3 "$HERE/abreport.py" "$OUT"
