#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# store_tools.sh - drive pvnetd's store with Xen's own clients (xenstore-utils)
# usage: store_tools.sh PVNETD PVNET
set -u
# Absolute: some checks run them from other directories (meson gives build-relative paths).
PVNETD=$(realpath -- "$1")
PVNET=$(realpath -- "$2")
. "$(dirname "$0")/lib.sh"

need_tool xenstore-read xenstore-write xenstore-ls xenstore-rm xenstore-watch xenstore-list \
	xenstore-exists xenstore-chmod

tmp=$(mktemp -d)
run="$tmp/run"
cleanup() {
	stop_pvnetd >/dev/null 2>&1
	[ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null
	rm -rf "$tmp" "$run.log"
}
trap cleanup EXIT

start_pvnetd "$run" || exit 1
check "pvnetd makes its run directory, mode 0755 (less the umask)" \
	[ "$(stat -c %a "$run")" = "$(printf %o $((0755 & ~$(umask))))" ]
export XENSTORED_PATH="$run/xenstore.sock"
T="timeout 10"

check "dom0 store socket is mode 0600" [ "$(stat -c %a "$run/xenstore.sock")" = 600 ]
check "control socket is mode 0600" [ "$(stat -c %a "$run/pvnetd.sock")" = 600 ]
check "xenstore-write two keys" $T xenstore-write /test/a hello /test/b/c world
check "xenstore-read returns the value" [ "$($T xenstore-read /test/a)" = hello ]
check "parents are created implicitly" [ "$($T xenstore-read /test/b/c)" = world ]
check "xenstore-list lists children" [ "$($T xenstore-list /test | tr '\n' ' ')" = "a b " ]
ls_out=$($T xenstore-ls /test)
check "xenstore-ls shows the tree" grep -q 'a = "hello"' <<<"$ls_out"
check "xenstore-ls shows nested keys" grep -q 'c = "world"' <<<"$ls_out"
check_fails "xenstore-read of a missing key fails" $T xenstore-read /test/missing
check "xenstore-chmod sets permissions" $T xenstore-chmod /test/a n0 r5
perms=$($T xenstore-ls -p /test)
check "xenstore-ls -p shows them" grep -qE 'a = "hello".*\(n0,r5\)' <<<"$perms"

$T xenstore-watch -n 2 /test/w >"$tmp/watch.out" 2>&1 &
WATCH_PID=$!
# The first event is the one fired on registration; wait for it before writing.
for ((i = 0; i < 100; i++)); do
	[ -s "$tmp/watch.out" ] && break
	sleep 0.05
done
check "watch fires once on registration" grep -q '^/test/w' "$tmp/watch.out"
$T xenstore-write /test/w/x 1
wait "$WATCH_PID"
wrc=$?
WATCH_PID=
check "watch fires for a write below the path and xenstore-watch exits" [ "$wrc" -eq 0 ]
check "second event names the changed node" grep -q '^/test/w/x' "$tmp/watch.out"

check "xenstore-rm removes a subtree" $T xenstore-rm /test/b
check_fails "removed node is gone" $T xenstore-exists /test/b/c
check "relative path resolves under /local/domain/0" $T xenstore-write rel/key v
check "and is found there" [ "$($T xenstore-read /local/domain/0/rel/key)" = v ]
long=$(head -c 5000 /dev/zero | tr '\0' x)
check_fails "oversized value is refused, store survives" $T xenstore-write /test/big "$long"
check "store still answers" [ "$($T xenstore-read /test/a)" = hello ]

# A child list longer than one payload (500 names of 20 characters, 10500 bytes):
# DIRECTORY answers E2BIG and libxenstore reads it with DIRECTORY_PART.
big_args=()
for ((i = 0; i < 500; i++)); do
	big_args+=("/big/$(printf 'child-name-%09d' "$i")" "v$i")
done
check "xenstore-write 500 children" $T xenstore-write "${big_args[@]}"
big_want=$(for ((i = 0; i < 500; i++)); do printf 'child-name-%09d\n' "$i"; done)
big_list=$($T xenstore-list /big)
check "xenstore-list of 500 children (past one payload) exits 0" [ $? -eq 0 ]
check "... and lists all 500, in order" [ "$big_list" = "$big_want" ]
big_ls=$($T xenstore-ls /big)
check "xenstore-ls of them exits 0" [ $? -eq 0 ]
check "... and shows all 500 with their values" \
	[ "$(grep -cE '^child-name-[0-9]{9} = "v[0-9]+"$' <<<"$big_ls")" -eq 500 ]
check "... the last one too" grep -qx 'child-name-000000499 = "v499"' <<<"$big_ls"
$T xenstore-write /after-big x
all_ls=$($T xenstore-ls /)
check "xenstore-ls / exits 0" [ $? -eq 0 ]
check "... and goes on past the big node" grep -qx 'after-big = "x"' <<<"$all_ls"
check "... with the 500 in it" [ "$(grep -cE '^ child-name-[0-9]{9} = ' <<<"$all_ls")" -eq 500 ]
check "xenstore-rm of them" $T xenstore-rm /big /after-big

check "pvnet status talks to pvnetd" $T "$PVNET" -d "$run" status
check "pvnet status --json is JSON" bash -c "$T '$PVNET' -d '$run' status --json | python3 -m json.tool >/dev/null"

# A second pvnetd on the same run directory is refused; the first keeps its sockets.
check "pvnetd.pid holds pvnetd's pid" [ "$(cat "$run/pvnetd.pid")" = "$PVNETD_PID" ]
$T "$PVNETD" --run-dir "$run" 2>"$tmp/second.err"
rc=$?
check "a second pvnetd on the run directory: exit status 1" [ $rc -eq 1 ]
check "... naming the pvnetd that has it" grep -q "in use by pvnetd pid $PVNETD_PID" "$tmp/second.err"
check "... the first keeps its sockets" test -S "$run/xenstore.sock" -a -S "$run/pvnetd.sock"
check "... and still answers" $T "$PVNET" -d "$run" status
check "... its store too" [ "$($T xenstore-read /test/a)" = hello ]

check "pvnetd exits 0 on SIGTERM" stop_pvnetd
check "pvnetd exits 0 on SIGTERM" [ $? -eq 0 ]
check "pvnetd removed its sockets and pvnetd.pid" \
	test ! -e "$run/xenstore.sock" -a ! -e "$run/pvnetd.sock" -a ! -e "$run/pvnetd.pid"

# A pvnetd killed outright leaves its files behind, but not its lock: the next one starts.
start_pvnetd "$run" || exit 1
kill -KILL "$PVNETD_PID"
wait "$PVNETD_PID" 2>/dev/null
check "a killed pvnetd leaves pvnetd.pid" test -e "$run/pvnetd.pid"
"$PVNETD" --run-dir "$run" 2>>"$run.log" &
PVNETD_PID=$!
for ((i = 0; i < 200; i++)); do
	$T "$PVNET" -d "$run" status >/dev/null 2>&1 && break
	kill -0 "$PVNETD_PID" 2>/dev/null || break
	sleep 0.05
done
check "the next pvnetd takes the directory over" $T "$PVNET" -d "$run" status
check "... with its own pid in pvnetd.pid" [ "$(cat "$run/pvnetd.pid")" = "$PVNETD_PID" ]
check "pvnetd exits 0 on SIGTERM" stop_pvnetd
check "... and stops cleanly" [ $? -eq 0 ]

# Options pvnetd cannot take: exit status 2 (usage), the reason first on stderr, and
# nothing started.
for bad in "--tx-mode foo" "--max-queues 0" "--max-queues 17" "--poll-us 1001" \
	"--mac-ageing 0" "--mac-ageing 1000001" "--vif-mac-limit 0" "--vif-mac-limit 1025" \
	"--rx-stall-timeout x" \
	"--rx-stall-timeout 3600001" "--rx-queue-kib 127" "--rx-queue-kib 65537" \
	"--rx-guest-kib 0" "--rx-guest-kib 16777217" "--rx-guest-kib 8366" \
	"--rx-queue-kib 128 --rx-guest-kib 302" \
	"--log-level loud" "--uplink bogus" "--run-dir" "extra"; do
	# shellcheck disable=SC2086 # the option and its value as words
	$T "$PVNETD" --run-dir "$tmp/bad" $bad 2>"$tmp/bad.err"
	rc=$?
	check "pvnetd $bad: exit status 2" [ $rc -eq 2 ]
	# the last option given is the one refused
	last=${bad##*--}
	check "... saying why" grep -q -- "pvnetd: .*${last%% *}" <(grep . "$tmp/bad.err" | head -n 1)
	check "... nothing started" test ! -e "$tmp/bad"
done
$T "$PVNETD" --run-dir "" 2>"$tmp/bad.err"
rc=$?
check "pvnetd --run-dir '': exit status 2" [ $rc -eq 2 ]
check "... saying why" grep -q -- "pvnetd: --run-dir: path is empty" "$tmp/bad.err"
"$PVNETD" -V >"$tmp/v.out"
rc=$?
check "pvnetd -V: exit status 0" [ $rc -eq 0 ]
check "... naming itself" grep -qx "pvnetd [0-9.]*" "$tmp/v.out"
"$PVNETD" --help >"$tmp/v.out"
rc=$?
check "pvnetd --help: exit status 0" [ $rc -eq 0 ]
check "... the usage on stdout" grep -q "^Usage: pvnetd" "$tmp/v.out"
# --log-level err: the info lines (the start, the stop) are not logged.
if start_pvnetd "$tmp/quiet" --log-level err; then
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "pvnetd --log-level err: stops cleanly" [ $? -eq 0 ]
	check "... having logged no info line" test ! -s "$tmp/quiet.log"
else
	not_ok "pvnetd starts with --log-level err"
fi
# What a guest that takes no frames can make pvnetd hold, in its log: the default (16 hold
# pools of 8192 KiB and 174 KiB of bookkeeping each), and as set.
check "pvnetd logs the RX bound per guest" grep -q \
	"guest RX: up to 8192 KiB waiting per queue, 8 queues per vif, 16 vifs per guest; copies of frames held for one guest: up to 133857 KiB (16 hold pools)" \
	"$run.log"
check "... that a pool is less than --rx-guest-kib's least" grep -q \
	"rx-guest-kib: 8366 KiB is less than one RX queue's hold pool, 8367 KiB at --rx-queue-kib 8192" \
	<($T "$PVNETD" --run-dir "$tmp/bad" --rx-guest-kib 8366 2>&1)
if start_pvnetd "$tmp/rq" --rx-queue-kib 256 --max-queues 2 --tx-mode copy; then
	check "... with --rx-queue-kib 256 --max-queues 2: 16 pools of 430 KiB" grep -q \
		"up to 256 KiB waiting per queue, 2 queues per vif, 16 vifs per guest; copies of frames held for one guest: up to 6881 KiB (16 hold pools)" \
		"$tmp/rq.log"
	check "... and --tx-mode copy, which pvnet status says" grep -q '"tx_mode": *"copy"' \
		<($T "$PVNET" -d "$tmp/rq" status --json)
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
else
	not_ok "pvnetd starts with --rx-queue-kib 256"
fi
check "a run directory it cannot make: exit status 1" bash -c \
	"$T '$PVNETD' --run-dir '$tmp/no/such/dir' 2>/dev/null; test \$? -eq 1"
$T "$PVNETD" --run-dir "$tmp/fail" --uplink tap:pvnt0@pvnet-no-such-ns 2>/dev/null
rc=$?
check "a start that fails (an uplink in no namespace): exit status 1" [ $rc -eq 1 ]
check "... leaves no pvnetd.pid" test -d "$tmp/fail" -a ! -e "$tmp/fail/pvnetd.pid"

# Numbers are decimal digits and nothing else: a blank or a sign before them is refused.
for opt in "--poll-us" "--max-queues" "--mac-ageing" "--vif-mac-limit" "--rx-stall-timeout" \
	"--rx-queue-kib" "--rx-guest-kib"; do
	for val in " +5" " 4" "+5" "5 " ""; do
		timeout 3 "$PVNETD" --run-dir "$tmp/bad" "$opt" "$val" 2>"$tmp/bad.err"
		rc=$?
		check "pvnetd $opt '$val': exit status 2" [ $rc -eq 2 ]
		check "... saying why" grep -q -- "pvnetd: $opt: '$val' is not" "$tmp/bad.err"
		check "... nothing started" test ! -e "$tmp/bad"
		rm -rf "$tmp/bad"
	done
done

# Each number's range is taken at both ends, and pvnetd then does what it says: the least
# of each, then the most, with every --tx-mode by name (map is also the default, so it is
# given with the least, where a wrong mode would show).
lim_json() { # DIR PY-EXPR: the expression of s (pvnet status --json) is true
	"$PVNET" -d "$1" status --json | python3 -c "import json, sys; s = json.load(sys.stdin); sys.exit(not ($2))"
}
if start_pvnetd "$tmp/lo" --max-queues 1 --poll-us 0 --mac-ageing 1 --vif-mac-limit 1 \
	--rx-stall-timeout 0 --rx-queue-kib 128 --rx-guest-kib 303 --tx-mode map; then
	check "pvnetd at each option's least: tx mode map, MACs forgotten after 1 s, 1 a vif" \
		lim_json "$tmp/lo" 's["tx_mode"] == "map" and s["switch"]["ageing"] == 1 and s["switch"]["fdb_max"] == 256'
	check "... 128 KiB held per queue, 1 queue a vif, one pool a guest" grep -q \
		"guest RX: up to 128 KiB waiting per queue, 1 queues per vif, 16 vifs per guest; copies of frames held for one guest: up to 302 KiB (1 hold pool)" \
		"$tmp/lo.log"
	check "... its MAC table's room in the log" grep -q \
		"switch: room for 256 MACs, 0 of them for the uplinks; up to 1 on one vif" "$tmp/lo.log"
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "... and stops cleanly" [ $? -eq 0 ]
else
	not_ok "pvnetd starts at each option's least"
fi
if start_pvnetd "$tmp/hi" --max-queues 16 --poll-us 1000 --mac-ageing 1000000 \
	--vif-mac-limit 1024 --rx-stall-timeout 3600000 --rx-queue-kib 65536 --rx-guest-kib 16777216 \
	--tx-mode persistent; then
	check "pvnetd at each option's most: tx mode persistent, ageing 1000000 s, 1024 MACs a vif" \
		lim_json "$tmp/hi" 's["tx_mode"] == "persistent" and s["switch"]["ageing"] == 1000000 and s["switch"]["fdb_max"] == 262144'
	check "... 65536 KiB held per queue, 16 queues a vif, 16 GiB a guest: 255 pools" grep -q \
		"guest RX: up to 65536 KiB waiting per queue, 16 queues per vif, 16 vifs per guest; copies of frames held for one guest: up to 16756081 KiB (255 hold pools)" \
		"$tmp/hi.log"
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "... and stops cleanly" [ $? -eq 0 ]
else
	not_ok "pvnetd starts at each option's most"
fi
# A guest's pools are also bounded by its queues: one queue a vif, 16 vifs, whatever the budget.
if start_pvnetd "$tmp/cap" --max-queues 1 --rx-guest-kib 16777216; then
	check "pvnetd --max-queues 1 --rx-guest-kib 16777216: 16 pools, one a queue" grep -q \
		"guest RX: up to 8192 KiB waiting per queue, 1 queues per vif, 16 vifs per guest; copies of frames held for one guest: up to 133857 KiB (16 hold pools)" \
		"$tmp/cap.log"
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "... and stops cleanly" [ $? -eq 0 ]
else
	not_ok "pvnetd starts with --max-queues 1 --rx-guest-kib 16777216"
fi
# SIGHUP and SIGINT stop pvnetd as SIGTERM does: exit status 0, its files removed.
for sig in HUP INT; do
	if start_pvnetd "$tmp/sig"; then
		kill -"$sig" "$PVNETD_PID"
		wait "$PVNETD_PID"
		rc=$?
		PVNETD_PID=
		check "pvnetd exits 0 on SIG$sig" [ $rc -eq 0 ]
		check "... its sockets and pvnetd.pid removed" \
			test ! -e "$tmp/sig/pvnetd.sock" -a ! -e "$tmp/sig/pvnetd.pid"
	else
		not_ok "pvnetd starts (SIG$sig)"
	fi
done

# An uplink whose switch port name another port could have is refused before anything
# starts (exit 2), the namespace not looked for yet: a TAP named as a guest's vif is
# (vif<DOMID>.<DEVID>), two uplinks of one name.  The namespaces do not exist, so an
# uplink let through fails to start (exit 1) without making anything.
nons=pvnet-no-such-ns-$$
refused_uplink() { # WHY ARGS...: exit 2, the message names WHY, no run directory
	local why=$1 rc
	shift
	$T "$PVNETD" --run-dir "$tmp/bad" "$@" 2>"$tmp/bad.err"
	rc=$?
	check "pvnetd $*: exit status 2" [ $rc -eq 2 ]
	check "... saying why" grep -q -- "pvnetd: --uplink: .*$why" "$tmp/bad.err"
	check "... nothing started" test ! -e "$tmp/bad"
	rm -rf "$tmp/bad"
}
refused_uplink "how a guest's vif is named" --uplink "tap:vif1.0@$nons"
refused_uplink "'tap:up0@$nons' is given twice" --uplink "tap:up0@$nons" --uplink "tap:up0@$nons"
nine=()
for i in 1 2 3 4 5 6 7 8 9; do nine+=(--uplink "tap:up$i@$nons"); done
refused_uplink "at most 8 uplinks" "${nine[@]}"
refused_uplink "how a guest's vif is named" --uplink "tap:vif32751.15@$nons"
refused_uplink "would be switch port up0" --uplink "tap:up0@$nons-a" --uplink "tap:up0@$nons-b"
refused_uplink "would be switch port vxlan42" --uplink "tap:vxlan42@$nons" \
	--uplink "vxlan:id=42,remote=192.0.2.1,netns=$nons"
refused_uplink "would be switch port vxlan42" \
	--uplink "vxlan:id=42,remote=192.0.2.1,netns=$nons-a" \
	--uplink "vxlan:id=42,remote=192.0.2.2,netns=$nons-b"
refused_uplink "would be switch port vxlan7:4790" \
	--uplink "vxlan:id=7,remote=192.0.2.1,dstport=4790,netns=$nons-a" \
	--uplink "vxlan:id=7,remote=192.0.2.2,dstport=4790,netns=$nons-b"
# Two uplinks whose sockets would fight over one UDP port (one VNI twice on a port they
# share, or an address's port and the wildcard's), and a namespace name `ip netns` does
# not take: refused before anything starts, as the cases above.
refused_uplink "VNI 1 is given twice on UDP port 4789" \
	--uplink "vxlan:id=1,remote=192.0.2.1,netns=$nons" \
	--uplink "vxlan:id=1,remote=192.0.2.2,netns=$nons"
refused_uplink "vxlan1, on its local address, and vxlan2, on every address, would both" \
	--uplink "vxlan:id=1,remote=192.0.2.1,local=192.0.2.9,netns=$nons" \
	--uplink "vxlan:id=2,remote=192.0.2.2,netns=$nons"
refused_uplink "the srcport range of vxlan1:47890 holds UDP port 47891" \
	--uplink "vxlan:id=1,remote=192.0.2.1,dstport=47890,srcport=47891-47898,netns=$nons" \
	--uplink "vxlan:id=2,remote=192.0.2.2,dstport=47891,netns=$nons"
refused_uplink "'..' is not a namespace name" --uplink "vxlan:id=1,remote=192.0.2.1,netns=.."
# The same tunnel twice (VNI, port, namespace and a remote): said as such, not as a clash.
refused_uplink "is a tunnel given before (same VNI, port, namespace and a remote)" \
	--uplink "vxlan:id=5,remote=192.0.2.1,netns=$nons" \
	--uplink "vxlan:id=5,remote=192.0.2.3,remote=192.0.2.1,netns=$nons"
# A TAP's name is what the kernel takes (1..15 bytes, no '/'), its namespace 1..64 bytes.
refused_uplink "is not tap:NAME" --uplink "tap:abcdefghijklmnop@$nons"
refused_uplink "is not tap:NAME" --uplink "tap:a/b@$nons"
# The kernel takes any bytes but '/', ':' and blanks in a name; `pvnet status` shows it as a
# JSON string, so it must be UTF-8 (an uplink named 0xff was left out of status).
refused_uplink "not UTF-8 text" --uplink $'tap:\xffx@'"$nons"
refused_uplink "not UTF-8 text" --uplink $'vxlan:id=1,remote=192.0.2.1,netns=\xc3'
refused_uplink "is not tap:NAME" --uplink "tap:up0@$(printf 'n%.0s' {1..65})"
for ok_up in "tap:vif1@$nons" "tap:vif1.@$nons" "tap:vifa.0@$nons" "tap:vif1.0x@$nons" \
	"tap:xvif1.0@$nons" "tap:vif.0@$nons" "tap:vix1.0@$nons"; do
	$T "$PVNETD" --run-dir "$tmp/up" --uplink "$ok_up" 2>/dev/null
	rc=$?
	check "pvnetd --uplink $ok_up is no vif's name: past the options (exit 1, no namespace)" \
		[ $rc -eq 1 ]
done
$T "$PVNETD" --run-dir "$tmp/up" --uplink "vxlan:id=42,remote=192.0.2.1,netns=$nons-a" \
	--uplink "vxlan:id=42,remote=192.0.2.2,dstport=4790,netns=$nons-b" 2>/dev/null
rc=$?
check "two VXLAN uplinks of one VNI on two ports: names differ, past the options" [ $rc -eq 1 ]
$T "$PVNETD" --run-dir "$tmp/up" --uplink "vxlan:id=1,remote=192.0.2.1,netns=$nons" \
	--uplink "vxlan:id=2,remote=192.0.2.2,netns=$nons" 2>/dev/null
rc=$?
check "two VXLAN uplinks of two VNIs on one port share it: past the options" [ $rc -eq 1 ]
rm -rf "$tmp/up"

# The run directory is made absolute, and every socket pvnetd binds in it must fit a
# sockaddr_un (107 bytes and a NUL): the longest is xenstore-domN.sock.new of the
# largest domid (32751), 26 bytes after DIR/, so DIR may have 80 bytes.  A longer
# one is refused at start-up (exit 1, saying so), not by the first domain's socket.
rtmp=$(cd "$tmp" && pwd -P)
pad_dir() { # LEN: a directory path under $rtmp of LEN bytes
	local d="$rtmp/"
	while [ ${#d} -lt "$1" ]; do d+=x; done
	printf '%s' "$d"
}
if [ ${#rtmp} -le 60 ]; then
	for len in 100 81; do
		dir=$(pad_dir "$len")
		$T "$PVNETD" --run-dir "$dir" 2>"$tmp/long.err"
		rc=$?
		check "a run directory of $len bytes: exit status 1" [ $rc -eq 1 ]
		check "... saying it is too long for its sockets" \
			grep -q "run directory $dir is too long for its sockets: .*xenstore-dom32751.sock.new would be $((len + 27)) bytes.*at most 80 bytes" \
			"$tmp/long.err"
		check "... and leaving no directory behind" test ! -e "$dir"
	done
	dir=$(pad_dir 80)
	start_pvnetd "$dir" || exit 1
	check "a run directory of 80 bytes: pvnetd starts" $T "$PVNET" -d "$dir" status
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "... and stops cleanly" [ $? -eq 0 ]
	rm -rf "$dir" "$dir.log"
	# Through a relative path the length that counts is the absolute one.
	dir=$(pad_dir 75)
	mkdir -p "$dir"
	(cd "$dir" && $T "$PVNETD" --run-dir rel12 2>"$tmp/long.err")
	rc=$?
	check "a relative run directory of 5 bytes, 81 absolute: exit status 1" [ $rc -eq 1 ]
	check "... naming its absolute path" grep -q "run directory $dir/rel12 is too long" \
		"$tmp/long.err"
	check "... and leaving no directory behind" test ! -e "$dir/rel12"
	rm -rf "$dir"
else
	skip_check "the run directory length tests: $rtmp is too long"
fi

# A relative run directory: every path pvnetd logs and hands out is absolute, so a
# frontend in another directory finds its domain's store socket.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && exec "$PVNETD" --run-dir rel --log-level debug 2>>"$tmp/rel.log") &
PVNETD_PID=$!
wait_for_file "$tmp/cwd/rel/pvnetd.sock" 10
check "pvnetd with a relative run directory logs its sockets' absolute paths" \
	grep -q "store at $rtmp/cwd/rel/xenstore.sock, control at $rtmp/cwd/rel/pvnetd.sock" \
	"$tmp/rel.log"
# A guest in Python: a domain of pvnetd at run directory argv[1], its control
# connection c and domain-create's reply msg; the tests below go on from there.
# shellcheck disable=SC2016 # Python, not shell
guest_py='
import fcntl, json, os, socket, sys, time
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.connect(sys.argv[1] + "/pvnetd.sock")
mem = os.memfd_create("guest", os.MFD_ALLOW_SEALING)
os.ftruncate(mem, 4 * 4096)
fcntl.fcntl(mem, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
socket.send_fds(c, [json.dumps({"op": "domain-create", "pages": 4}).encode()], [mem])
msg, fds, _, _ = socket.recv_fds(c, 65536, 4)
'
# A domain made from /: the store socket of the reply, connected to from there.
# shellcheck disable=SC2016 # Python, not shell
domain_py="$guest_py"'
store = json.loads(msg)["store"]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(store)
s.close()
open(sys.argv[2] + ".new", "w").write(store)
os.rename(sys.argv[2] + ".new", sys.argv[2])
while not os.path.exists(sys.argv[3]):
	time.sleep(0.05)
'
(cd / && exec timeout 20 python3 -c "$domain_py" "$tmp/cwd/rel" "$tmp/store" "$tmp/stop") &
dom_pid=$!
wait_for_file "$tmp/store" 10
store=$(cat "$tmp/store" 2>/dev/null)
check "... the store socket domain-create hands out is absolute and reachable from /" \
	[ "$store" = "$rtmp/cwd/rel/xenstore-dom1.sock" ]
check "... pvnet status shows it" grep -qF "store $rtmp/cwd/rel/xenstore-dom1.sock" \
	<($T "$PVNET" -d "$tmp/cwd/rel" status)
check "... pvnet status --json too" [ "$($T "$PVNET" -d "$tmp/cwd/rel" status --json |
	python3 -c 'import json, sys
print([d["store"] for d in json.load(sys.stdin)["domains"] if d["domid"] == 1][0])')" = \
	"$rtmp/cwd/rel/xenstore-dom1.sock" ]
touch "$tmp/stop"
wait "$dom_pid"
check "... the domain's process ends" [ $? -eq 0 ]
check "pvnetd exits 0 on SIGTERM" stop_pvnetd
check "... and it stops cleanly" [ $? -eq 0 ]
check "... removing its sockets" test ! -e "$tmp/cwd/rel/xenstore.sock" -a \
	! -e "$tmp/cwd/rel/pvnetd.sock" -a ! -e "$tmp/cwd/rel/xenstore-dom1.sock"

# Guests together get a bounded share of pvnetd's fds for event channels (four each),
# and one guest a bounded share of that.  Under an open-file limit of 4000: 744
# channels ((4000 - 1024) / 4) for all guests, 272 for one (16 vifs of 8 split queues
# and a control ring: an even share, 744 / 63, would be less).  A guest's next channel
# is refused with ENOSPC, another guest still gets its own, a third what is left and
# then ENFILE; pvnetd itself still serves new connections, and the channels come back
# when the guests go.
# shellcheck disable=SC2016 # Python, not shell
chan_py="$guest_py"'
ok, err = 0, None
for i in range(int(sys.argv[2])):
	c.send(json.dumps({"op": "evtchn-alloc-unbound", "remote": 0}).encode())
	msg, fds, _, _ = socket.recv_fds(c, 65536, 8)
	for fd in fds:
		os.close(fd)
	r = json.loads(msg)
	if "error" in r:
		err = r["errno"]
		break
	ok += 1
print(ok, err, flush=True)
sys.stdin.read()  # hold the domain until told to go
'
# chan_guest N OUT: a guest that asks for N channels, writes what it got to OUT
# and holds them until the hold fifo is closed; its pid goes to chan_pids.
chan_pids=()
chan_guest() {
	timeout 120 python3 -c "$chan_py" "$chanrun/run" "$1" <"$chanrun/hold" >"$2" {hold}>&- &
	chan_pids+=($!)
	for _ in $(seq 150); do
		[ -s "$2" ] && break
		sleep 0.1
	done
}
# (A hard open-file limit below 4000 cannot be raised to it: those checks are skipped.)
if (ulimit -n 4000) 2>/dev/null; then
	chanrun=$tmp/chan
	mkdir "$chanrun"
	(ulimit -n 4000 && exec "$PVNETD" --run-dir "$chanrun/run" 2>>"$chanrun.log") &
	PVNETD_PID=$!
	mkfifo "$chanrun/hold"
	exec {hold}<>"$chanrun/hold" # the guests hold their channels until it closes
	wait_for_file "$chanrun/run/pvnetd.sock" 10
	check "under an open-file limit of 4000, 744 event channels, 272 for one guest" \
		grep -q "event channels: at most 744 open at once, 272 per guest (open-file limit 4000)" \
		"$chanrun.log"
	chan_guest 300 "$chanrun/g1"
	g=$(cat "$chanrun/g1")
	check "a guest gets 272 channels, then ENOSPC ($g)" [ "$g" = "272 28" ]
	check "... pvnetd still takes new connections" $T "$PVNET" -d "$chanrun/run" status
	chan_guest 300 "$chanrun/g2"
	g=$(cat "$chanrun/g2")
	check "... another guest gets its own 272 ($g)" [ "$g" = "272 28" ]
	chan_guest 300 "$chanrun/g3"
	g=$(cat "$chanrun/g3")
	check "... a third what is left, 200, then ENFILE ($g)" [ "$g" = "200 23" ]
	check "... which pvnetd names" grep -q "event channels pvnetd allows all guests together" \
		<(timeout 10 python3 -c "$guest_py"'
c.send(json.dumps({"op": "evtchn-alloc-unbound", "remote": 0}).encode())
print(socket.recv_fds(c, 65536, 8)[0].decode())' "$chanrun/run")
	exec {hold}>&-
	chan_rc=0
	for pid in "${chan_pids[@]}"; do
		wait "$pid" || chan_rc=$?
	done
	check "... the guests held their channels until told to go" [ "$chan_rc" -eq 0 ]
	g=$(timeout 10 python3 -c "$chan_py" "$chanrun/run" 5 </dev/null)
	check "... until the guests go: then 5 of 5 ($g)" [ "$g" = "5 None" ]
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
	check "... and pvnetd stops cleanly" [ $? -eq 0 ]
else
	skip_check "the channel budget checks: the hard open-file limit is below 4000"
fi

# pvnetd raises its soft open-file limit to the hard one, and counts from that.
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -gt 1024 ]; then
	(ulimit -Sn 1024 && exec "$PVNETD" --run-dir "$tmp/lim" 2>"$tmp/lim.log") &
	PVNETD_PID=$!
	wait_for_file "$tmp/lim/pvnetd.sock" 10
	check "started under a soft open-file limit of 1024, pvnetd counts from the hard one ($hard)" \
		grep -q "per guest (open-file limit $hard)" "$tmp/lim.log"
	check "pvnetd exits 0 on SIGTERM" stop_pvnetd
fi

# pvnet's own usage: status 2 for what it cannot take, 0 for version and help.
check "pvnet version names itself" grep -qx "pvnet [0-9.]*" <("$PVNET" version)
check "pvnet help prints the usage" grep -q "^Usage: pvnet" <("$PVNET" help)
check "pvnet --version too" grep -qx "pvnet [0-9.]*" <("$PVNET" --version)
for sub in bench attach capture; do
	check "pvnet help $sub prints $sub's usage" grep -q "^Usage: pvnet.* $sub" \
		<("$PVNET" help "$sub")
done
for sub in status fdb; do
	check "pvnet help $sub prints the usage" grep -q "^Usage: pvnet" <("$PVNET" help "$sub")
done
# status, show and fdb: --help and -h anywhere print the usage without asking pvnetd.
for cmd in "status --help" "show -h" "status --json --help" "fdb --help" "fdb -h" \
	"fdb --json vif1.0 --help"; do
	# shellcheck disable=SC2086 # the words of the command line
	out=$("$PVNET" -d "$tmp/none" $cmd 2>/dev/null)
	rc=$?
	[[ $out == "Usage: pvnet"* ]] || rc=usage-missing
	check "pvnet $cmd: the usage, exit status 0, without asking pvnetd ($rc)" [ "$rc" = 0 ]
done
for bad in "fdb -x" "fdb --bogus vif1.0" "show -x"; do
	# shellcheck disable=SC2086 # the words of the command line
	"$PVNET" -d "$tmp/none" $bad >/dev/null 2>"$tmp/bad.err"
	rc=$?
	read -r c a _ <<<"$bad"
	check "pvnet $bad: exit status 2" [ $rc -eq 2 ]
	check "... naming the argument" grep -qx "pvnet $c: unknown argument '$a'" "$tmp/bad.err"
done
# The commands that parse options with getopt name themselves whole in its messages, as in
# their own, and print their usage after it.
for bad in "bench --bogus" "attach --bogus" "capture --bogus" "bench -s"; do
	# shellcheck disable=SC2086 # the words of the command line
	"$PVNET" -d "$tmp/none" $bad >/dev/null 2>"$tmp/bad.err"
	rc=$?
	read -r c a _ <<<"$bad"
	[ "$a" = -s ] && want="pvnet $c: option requires an argument -- 's'" ||
		want="pvnet $c: unrecognized option '$a'"
	check "pvnet $bad: exit status 2" [ $rc -eq 2 ]
	check "... its first line: $want" [ "$(head -n 1 "$tmp/bad.err")" = "$want" ]
	check "... then the usage" grep -q "^Usage: pvnet" "$tmp/bad.err"
done
# --json is the whole word, once; -d after the command, spelt either way, is said where it goes.
for bad in "status --jsonx" "status --js" "status --json --json"; do
	# shellcheck disable=SC2086 # the words of the command line
	"$PVNET" -d "$tmp/none" $bad >/dev/null 2>"$tmp/bad.err"
	rc=$?
	check "pvnet $bad: exit status 2" [ $rc -eq 2 ]
	check "... naming the argument" grep -q "pvnet status: unknown argument '--js" "$tmp/bad.err"
done
"$PVNET" status --run-dir "$tmp/none" >/dev/null 2>"$tmp/bad.err"
rc=$?
check "pvnet status --run-dir DIR: exit status 2" [ $rc -eq 2 ]
check "... saying -d DIR goes before the command" \
	grep -qx "pvnet status: -d DIR goes before the command: pvnet -d DIR status" "$tmp/bad.err"
# A run directory too long for a socket's path: exit 1, saying so.
"$PVNET" -d "/tmp/$(printf 'd%.0s' {1..120})" status >/dev/null 2>"$tmp/bad.err"
rc=$?
check "pvnet -d (a run directory of 125 bytes) status: exit status 1" [ $rc -eq 1 ]
check "... saying the path is too long" grep -qx "pvnet: run directory path too long" "$tmp/bad.err"
# No pvnetd: exit 1, saying where it was looked for and what may be wrong.
for cmd in status show fdb; do
	"$PVNET" -d "$tmp/none" "$cmd" >/dev/null 2>"$tmp/none.err"
	rc=$?
	check "pvnet $cmd without a pvnetd: exit status 1" [ $rc -eq 1 ]
	check "... saying so" grep -qx \
		"pvnet: cannot reach pvnetd at $tmp/none/pvnetd.sock: No such file or directory (is pvnetd running?)" \
		"$tmp/none.err"
done
check "pvnet attach names the option it lacks" grep -qx "pvnet attach: --netns is required" \
	<("$PVNET" attach --ifname eth0 2>&1 >/dev/null)
# A namespace name is looked up under /run/netns: no '/' (no way out of it), no blanks,
# at most 64 bytes; refused before pvnetd is asked (exit 2).
for ns in "a/b" "../../proc/1/ns/net" "a b" "$(printf 'n%.0s' {1..65})"; do
	"$PVNET" -d "$tmp/none" attach --netns "$ns" --ifname eth0 2>"$tmp/ns.err" >/dev/null
	rc=$?
	check "pvnet attach --netns '$ns': exit status 2" [ $rc -eq 2 ]
	check "... saying why" grep -q -- "--netns '$ns': not a namespace name" "$tmp/ns.err"
done
# pvnet attach's own checks, at each side of each bound, with no pvnetd at $tmp/none: what
# they refuse is exit 2, and nothing asked of pvnetd; what they take goes on to pvnetd, which
# is not there: exit 1, saying so.  Names the kernel would refuse are refused before pvnetd
# is asked for a domain, as the usage says (dev_valid_name(): no ':', blank, . or ..).
attach_none() { # pvnet attach ARGS... in namespace pvnone: its exit status, its stderr in att.err
	"$PVNET" -d "$tmp/none" attach --netns pvnone "$@" >/dev/null 2>"$tmp/att.err"
}
refused() {
	attach_none "$@"
	[ $? = 2 ] && ! grep -q "cannot become a domain" "$tmp/att.err"
}
no_pvnetd="cannot become a domain of pvnetd at $tmp/none: No such file or directory"
taken() {
	attach_none "$@"
	[ $? = 1 ] && grep -qxF "pvnet attach: $no_pvnetd (is pvnetd running?)" "$tmp/att.err"
}
for q in 0 17; do check "pvnet attach --queues $q: refused" refused --ifname eth0 --queues $q; done
for q in 1 16; do check "pvnet attach --queues $q: taken" taken --ifname eth0 --queues $q; done
for m in 67 65522; do check "pvnet attach --mtu $m: refused" refused --ifname eth0 --mtu $m; done
for m in 68 65521; do check "pvnet attach --mtu $m: taken" taken --ifname eth0 --mtu $m; done
check "pvnet attach --ifname of 15 bytes: taken" taken --ifname 0123456789abcde
for n in . .. a:b "a b" $'a\x7f'; do
	check "pvnet attach --ifname $(printf %q "$n"): refused" refused --ifname "$n"
done
check "pvnet attach with an argument after the options: refused" refused --ifname eth0 extra
check "... naming it" grep -qx "pvnet attach: unexpected argument 'extra'" "$tmp/att.err"
"$PVNET" attach --run-dir "$tmp/none" --netns pvnone --ifname eth0 >/dev/null 2>"$tmp/att.err"
check "pvnet attach --run-dir DIR looks for pvnetd in DIR" \
	grep -q "cannot become a domain of pvnetd at $tmp/none:" "$tmp/att.err"
out=$("$PVNET" -d "$tmp/none" attach --help 2>/dev/null)
rc=$?
[[ $out == "Usage: pvnet"*" attach "* ]] || rc=usage-missing
check "pvnet attach --help: the usage, exit status 0, without asking pvnetd ($rc)" [ "$rc" = 0 ]
for bad in "" "frob" "version extra" "help extra" "help status extra" "status --xml" "show a b"; do
	# shellcheck disable=SC2086 # the words of the command line
	"$PVNET" -d "$tmp/none" $bad >/dev/null 2>&1
	rc=$?
	check "pvnet $bad: exit status 2" [ $rc -eq 2 ]
done
finish
