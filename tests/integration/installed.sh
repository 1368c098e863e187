#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# installed.sh - pvnet as a user gets it: `meson install` into a scratch root, the example
# program built against that tree alone (its header, its pkg-config file, its library), run
# against the installed pvnetd.
# usage: installed.sh BUILD_DIR EXAMPLE_C "CC [ARGS]" B_SANITIZE
set -u
BUILD=$1
EXAMPLE=$2
read -r -a CC <<<"$3"
SANITIZE=$(tr -d "[]' " <<<"$4") # a string, or a list in newer meson
. "$(dirname "$0")/lib.sh"

for t in meson pkg-config; do
	command -v "$t" >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done

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
# shellcheck disable=SC2086 # the flags are words
check "the example builds against it, warning-free (${CC[*]}${san:+ ${san[*]}})" \
	"${CC[@]}" -std=gnu11 -Wall -Wextra -Werror "${san[@]}" -o "$tmp/pingpong" "$EXAMPLE" $flags
[ -x "$tmp/pingpong" ] || { finish; exit 1; }

export LD_LIBRARY_PATH=$libdir
out=$("$tmp/pingpong" "$run" 2>&1)
rc=$?
check "without a pvnetd it says so and exits 1" \
	bash -c '[ "$1" = 1 ] && grep -q "A: no pvnetd at $2" <<<"$3"' _ "$rc" "$run" "$out"
check_fails "a round-trip count that is not a number is refused" "$tmp/pingpong" "$run" 12x
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
st=$("$PVNET" -d "$run" status 2>&1)
check "the installed pvnet reaches pvnetd: no domain is left" grep -q '^domains: 0' <<<"$st"
check "... and released both domains whole" \
	grep -q '^destroyed domains: 2 (left in use: 0 mappings, 0 grants, 0 event channels)' <<<"$st"
stop_pvnetd
check "pvnetd exits 0 on SIGTERM" test $? = 0
finish
