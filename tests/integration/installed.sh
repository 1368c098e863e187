#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# installed.sh - pvnet as a user gets it: `meson install` into a scratch root, the example
# programs built against that tree alone (its header, its pkg-config file, its library), run
# against the installed pvnetd.
# usage: installed.sh BUILD_DIR "CC [ARGS]" B_SANITIZE PINGPONG_C ZEROCOPY_C
set -u
BUILD=$1
read -r -a CC <<<"$2"
SANITIZE=$(tr -d "[]' " <<<"$3") # a string, or a list in newer meson
PINGPONG=$4
ZEROCOPY=$5
. "$(dirname "$0")/lib.sh"

need_tool meson pkg-config

tmp=$(mktemp -d)
root=$tmp/root
run=$tmp/run
cleanup() {
	stop_pvnetd >/dev/null 2>&1
	rm -rf "$tmp" "$run.log"
}
trap cleanup EXIT

# Into the scratch root only: DESTDIR, and no rebuild (meson test has built everything).
if ! meson install -C "$BUILD" --destdir "$root" --no-rebuild >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: meson install --destdir"
	exit 1
fi
ok "meson install into a scratch root"
pc=$(find "$root" -name libpvnet.pc | head -1)
PVNETD=$(find "$root" -path '*/sbin/pvnetd' | head -1)
PVNET=$(find "$root" -path '*/bin/pvnet' | head -1)
check "the root has libpvnet.pc, pvnetd and pvnet" test -n "$pc" -a -x "$PVNETD" -a -x "$PVNET"
[ -n "$pc" ] && [ -x "$PVNETD" ] && [ -x "$PVNET" ] || { finish; exit 1; }
check "the root has both public headers" \
	test -n "$(find "$root" -path '*/include/pvnet/pvnet.h')" \
	-a -n "$(find "$root" -path '*/include/pvnet/steer.h')"
libdir=$(dirname "$(dirname "$pc")")
check "the root has libpvnet.so, a link to the versioned library" test -L "$libdir/libpvnet.so"

# pkg-config of the installed tree: its paths, with the scratch root in front.
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR=$root
if flags=$(pkg-config --cflags --libs libpvnet); then ok "pkg-config --cflags --libs libpvnet: $flags"
else not_ok "pkg-config --cflags --libs libpvnet"; fi
# Every -I and -L in the scratch root: nothing of the source or build tree is needed.
paths_in_root() {
	local w n=0
	for w in $1; do
		case $w in
		-I* | -L*)
			n=$((n + 1))
			[[ ${w:2} == "$root"/* ]] || return 1
			;;
		esac
	done
	[ $n -ge 2 ]
}
check "... its -I and -L are the installed tree's" paths_in_root "$flags"
san=()
[ -n "$SANITIZE" ] && [ "$SANITIZE" != none ] && san=(-fsanitize="$SANITIZE")
for ex in "$PINGPONG" "$ZEROCOPY"; do
	# shellcheck disable=SC2086 # the flags are words
	check "$(basename "$ex") builds against it, warning-free (${CC[*]}${san:+ ${san[*]}})" \
		"${CC[@]}" -std=gnu11 -Wall -Wextra -Werror "${san[@]}" -o "$tmp/$(basename "$ex" .c)" \
		"$ex" $flags
done
[ -x "$tmp/pingpong" ] && [ -x "$tmp/zerocopy" ] || { finish; exit 1; }

export LD_LIBRARY_PATH=$libdir
out=$("$tmp/pingpong" "$run" 2>&1)
rc=$?
check "without a pvnetd it says so and exits 1" \
	bash -c '[ "$1" = 1 ] && grep -q "A: no pvnetd at $2" <<<"$3"' _ "$rc" "$run" "$out"
"$tmp/pingpong" "$run" 12x >/dev/null 2>&1
check "a round-trip count that is not a number is refused, exit 2 (before looking for pvnetd)" \
	test $? = 2
"$tmp/pingpong" "$run" 0 >/dev/null 2>&1
check "... exit status 2, as for 0" test $? = 2

start_pvnetd "$run" || { finish; exit 1; }
ok "the installed pvnetd starts"
out=$(timeout 60 "$tmp/pingpong" "$run" 300 2>&1)
rc=$?
echo "$out"
check "300 round trips between two guests, exit 0" test "$rc" = 0
check "... each byte checked, the times printed" \
	grep -Eq '^300 round trips of 128-byte frames, every byte checked: min [0-9.]+ us' <<<"$out"
check "... two domains, each with its vif" test "$(grep -c '^[AB]: domain [0-9]*, vif mac 00:16:3e' <<<"$out")" = 2
# Zero copy: frames built in TX pages and read in RX pages; 9000 B spans three (feature-sg).
for size in 60 9000 65535; do
	out=$(timeout 60 "$tmp/zerocopy" "$run" 2000 $size 2>&1)
	rc=$?
	echo "$out"
	check "zerocopy: 2000 frames of $size bytes, in order, every byte checked, exit 0" \
		bash -c '[ "$1" = 0 ] && grep -q "^2000 frames of $2 bytes A -> B" <<<"$3"' _ "$rc" "$size" "$out"
done
"$tmp/zerocopy" "$run" 10 59 >/dev/null 2>&1
check "zerocopy: a frame size below 60 is refused, exit 2" test $? = 2
st=$("$PVNET" -d "$run" status 2>&1)
check "the installed pvnet reaches pvnetd: no domain is left" grep -q '^domains: 0' <<<"$st"
check "... and released all 8 domains whole" \
	grep -q '^destroyed domains: 8 (left in use: 0 mappings, 0 grants, 0 event channels)' <<<"$st"
stop_pvnetd
check "pvnetd exits 0 on SIGTERM" test $? = 0
# The installed pvnet's bench starts the installed pvnetd, which is in sbin, with a PATH
# that has no sbin (a user's): found beside it, ../sbin.
out=$(env PATH=/usr/bin:/bin timeout 60 "$PVNET" bench -S sizes -s 64 -t 0.2 2>&1)
rc=$?
what="the installed pvnet bench finds the installed pvnetd without sbin in PATH, exit 0"
if [ "$rc" = 0 ] && ! grep -q "cannot run pvnetd" <<<"$out"; then ok "$what"; else
	not_ok "$what (exit $rc)"
	echo "$out" | tail -20
fi
finish
