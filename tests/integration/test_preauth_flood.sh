#!/usr/bin/env bash
# tests/integration/test_preauth_flood.sh: unauthenticated peers cannot
# exhaust a daemon's memory. A dispatcher, a CM and a
# CS with a cluster secret and a node agent, started by hand on loopback;
# tests/integration/floodpeer.py plays the attacker from other loopback
# addresses (127.0.0.2, ...: the job's own peers are all 127.0.0.1):
#   - --max-conns, --max-unauth, --max-unauth-per-host (and
#     MPIV_MAX_CONNS) refuse bad values with exit 2 naming the option
#   - 600 connections to each daemon, each announcing a 1 MiB Hello and
#     sending all of it but the last byte: the daemon's RSS grows by less
#     than 64 MB (it grew by ~600 MB before the cap), the oversized
#     headers are closed with a line naming the size and the cap
#   - 600 connections to each daemon that send nothing: at most 256 are
#     accepted (the default per-address cap), the rest are closed at
#     accept, the daemon says so in at most two lines, RSS stays within
#     64 MB, and a job (mpiv run --dispatcher) runs to the right output
#     while they are held
#   - a CM with --max-unauth 40 --max-unauth-per-host 30 and a CS with
#     --max-conns 20: the caps hold as configured, each named in the log
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init preauth
FLOOD="$PWD/tests/integration/floodpeer.py"
N=600
RSS_MAX_KB=65536
unset MPIV_SECRET_FILE MPIV_MAX_CONNS MPIV_MAX_UNAUTH MPIV_MAX_UNAUTH_PER_HOST

# listening FILE: the address a daemon printed on stdout.
listening() { sed -n 's/^listening on //p' "$1"; }
# rss PID: VmRSS in kB.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")

"$B/bin/mpivcc" -O1 -o "$T/hi" tests/integration/hi.c || { echo "not ok - mpivcc"; exit 1; }

# ---- options: bad values exit 2 with the option named ----
for who in dispatcher cm cs; do
	extra=()
	[ "$who" = cs ] && extra=(--store "$T/optstore")
	for a in "--max-conns 0" "--max-unauth x" "--max-unauth-per-host 1000001"; do
		# shellcheck disable=SC2086
		timeout 10 "$MPIV" "$who" --listen 127.0.0.1:0 "${extra[@]}" $a \
		    > "$T/o.out" 2> "$T/o.err" < /dev/null
		rc=$?
		if [ "$rc" = 2 ] && grep -q "^mpiv $who: bad ${a%% *} \"${a#* }\"" "$T/o.err"; then
			ok "$who-usage/${a// /=}"
		else
			notok "$who-usage/${a// /=}: exit $rc (want 2 and a message naming the option)" "$T/o.err"
		fi
	done
done
MPIV_MAX_CONNS=-3 timeout 10 "$MPIV" cm --listen 127.0.0.1:0 > "$T/o.out" 2> "$T/o.err" < /dev/null
rc=$?
if [ "$rc" = 2 ] && grep -q '^mpiv cm: bad --max-conns "-3"' "$T/o.err"; then
	ok "cm-usage/MPIV_MAX_CONNS=-3"
else
	notok "cm-usage/MPIV_MAX_CONNS=-3: exit $rc" "$T/o.err"
fi

# ---- the deployment ----
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
D_PID=$!
wait_for 10 grep -qs '^listening on ' "$T/d.out" || { notok "dispatcher start" "$T/d.err"; exit 1; }
DA=$(listening "$T/d.out")
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
CM_PID=$!
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/store" \
    > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
CS_PID=$!
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 4 \
    --cache-dir "$T/cache" --name good > /dev/null 2> "$T/node.err" &
PIDS+=($!)
wait_for 10 grep -qs '^listening on ' "$T/cm.out" || { notok "cm start" "$T/cm.err"; exit 1; }
wait_for 10 grep -qs '^listening on ' "$T/cs.out" || { notok "cs start" "$T/cs.err"; exit 1; }
CMA=$(listening "$T/cm.out")
CSA=$(listening "$T/cs.out")
status_has() { "$MPIV" status "${S[@]}" --dispatcher "$DA" 2> /dev/null | grep -q "$1"; }
wait_for 10 status_has good || { notok "node registers" "$T/node.err" "$T/d.err"; exit 1; }

NAMES=(dispatcher cm cs)
ADDRS=("$DA" "$CMA" "$CSA")
DPIDS=("$D_PID" "$CM_PID" "$CS_PID")
LOGS=("$T/d.err" "$T/cm.err" "$T/cs.err")

# flood_start TAG ADDR MODE SRC [N]: floodpeer in the background.
flood_start() {
	timeout 90 python3 "$FLOOD" "$2" "${5:-$N}" "$3" "$4" "$T/$1.state" \
	    > "$T/$1.fout" 2>&1 &
	FLOOD_PIDS+=($!)
}
# flood_wait TAG: its counts, once they are written (at most 40 s).
flood_wait() {
	wait_for 40 test -e "$T/$1.state" && cat "$T/$1.state"
}
# count KEY LINE: the value of KEY=N in LINE.
count() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" <<< "$2"; }
flood_release() {
	local t p
	for t in "$@"; do touch "$T/$t.state.release"; done
	for p in "${FLOOD_PIDS[@]}"; do wait "$p"; done
	FLOOD_PIDS=()
}
FLOOD_PIDS=()

# ---- 1: oversized pre-auth headers, all but the last byte sent ----
for i in 0 1 2; do
	name=${NAMES[$i]}
	pid=${DPIDS[$i]}
	r0=$(rss "$pid")
	flood_start "big-$name" "${ADDRS[$i]}" big 127.0.0.2
	st=$(flood_wait "big-$name")
	r1=$(rss "$pid")
	flood_release "big-$name"
	echo "# $name big flood: $st rss ${r0} -> ${r1} kB"
	if [ -z "$st" ]; then
		notok "$name: flood of 1 MiB headers did not finish" "$T/big-$name.fout"
	elif [ $((r1 - r0)) -lt "$RSS_MAX_KB" ]; then
		ok "$name: $N connections announcing 1 MiB Hellos: RSS +$((r1 - r0)) kB (< $RSS_MAX_KB)"
	else
		notok "$name: $N connections announcing 1 MiB Hellos: RSS +$((r1 - r0)) kB (>= $RSS_MAX_KB)"
	fi
	if grep -q "conn refused peer=127\\.0\\.0\\.2:[0-9]* reason=\"frame too big before authentication\" type=hello bytes=1048576 cap=4096" "${LOGS[$i]}"; then
		ok "$name: an oversized pre-auth header is logged with its size and the cap"
	else
		notok "$name: no 'frame too big before authentication' line" "${LOGS[$i]}"
	fi
	if kill -0 "$pid"; then
		ok "$name: alive after the flood"
	else
		notok "$name: died under the flood" "${LOGS[$i]}"
	fi
done

# ---- 2: idle pre-auth connections held open; a job runs meanwhile ----
declare -a R0
for i in 0 1 2; do
	R0[$i]=$(rss "${DPIDS[$i]}")
	flood_start "idle-${NAMES[$i]}" "${ADDRS[$i]}" idle 127.0.0.3
done
for i in 0 1 2; do
	name=${NAMES[$i]}
	st=$(flood_wait "idle-$name")
	r1=$(rss "${DPIDS[$i]}")
	echo "# $name idle flood: $st rss ${R0[$i]} -> $r1 kB"
	acc=$(count accepted "$st")
	ref=$(count refused "$st")
	if [ -n "$acc" ] && [ "$acc" -gt 0 ] && [ "$acc" -le 256 ] &&
	    [ "$ref" -ge $((N - 256)) ]; then
		ok "$name: $acc of $N idle connections from one address accepted, $ref refused at accept"
	else
		notok "$name: idle flood from one address: ${st:-no result} (want at most 256 accepted)" "$T/idle-$name.fout"
	fi
	if [ $((r1 - R0[i])) -lt "$RSS_MAX_KB" ]; then
		ok "$name: RSS +$((r1 - R0[i])) kB under the idle flood"
	else
		notok "$name: RSS +$((r1 - R0[i])) kB under the idle flood (>= $RSS_MAX_KB)"
	fi
done
if timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 "$T/hi" \
    > "$T/run.out" 2> "$T/run.err" && grep -q '^hi size=3 sum=3$' "$T/run.out"; then
	ok "a job runs while the floods are held"
else
	notok "a job runs while the floods are held" "$T/run.out" "$T/run.err" "$T/d.err"
fi
# Still held after the job (released by the test, not by a timeout)?
held=1
for i in 0 1 2; do
	[ -e "$T/idle-${NAMES[$i]}.state.release" ] && held=0
done
flood_release idle-dispatcher idle-cm idle-cs
# 2 x 344 refusals within seconds: one line per 5 s, not one each.
for i in 0 1 2; do
	name=${NAMES[$i]}
	n=$(grep -c "$name refused connection peer=127\\.0\\.0\\.[23] limit=max-unauth-per-host max=256" "${LOGS[$i]}")
	all=$(grep -c "refused connection" "${LOGS[$i]}")
	if [ "$n" -ge 1 ] && [ "$all" -le 3 ]; then
		ok "$name: $((2 * (N - 256))) refusals logged in $all line(s), naming the address and the cap"
	else
		notok "$name: refusal lines: $n naming the cap, $all in all (want 1 to 3)" "${LOGS[$i]}"
	fi
done
[ "$held" = 1 ] || notok "the idle floods were released before the job ran"

# ---- 3: the caps as configured ----
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --max-unauth 40 --max-unauth-per-host 30 \
    > "$T/cm2.out" 2> "$T/cm2.err" &
PIDS+=($!)
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --store "$T/store2" --max-conns 20 \
    > "$T/cs2.out" 2> "$T/cs2.err" &
PIDS+=($!)
wait_for 10 grep -qs '^listening on ' "$T/cm2.out" || notok "small cm start" "$T/cm2.err"
wait_for 10 grep -qs '^listening on ' "$T/cs2.out" || notok "small cs start" "$T/cs2.err"
flood_start cm2-a "$(listening "$T/cm2.out")" idle 127.0.0.4 50
a=$(flood_wait cm2-a)
flood_start cm2-b "$(listening "$T/cm2.out")" idle 127.0.0.5 50
b=$(flood_wait cm2-b)
flood_start cs2 "$(listening "$T/cs2.out")" idle 127.0.0.6 50
c=$(flood_wait cs2)
flood_release cm2-a cm2-b cs2
echo "# small cm: $a / $b; small cs: $c"
if [ "$(count accepted "$a")" = 30 ] && [ "$(count accepted "$b")" = 10 ] &&
    grep -q "cm refused connection peer=127\\.0\\.0\\.4 limit=max-unauth-per-host max=30" "$T/cm2.err"; then
	ok "cm --max-unauth-per-host 30: 30 of 50 from one address"
else
	notok "cm --max-unauth-per-host 30: $a" "$T/cm2.err"
fi
if [ "$(count accepted "$b")" = 10 ] && grep -q "limit=max-unauth max=40" "$T/cm2.err"; then
	ok "cm --max-unauth 40: 10 more from another address"
else
	notok "cm --max-unauth 40: $b" "$T/cm2.err"
fi
if [ "$(count accepted "$c")" = 20 ] && grep -q "cs refused connection peer=127\\.0\\.0\\.6 limit=max-conns max=20" "$T/cs2.err"; then
	ok "cs --max-conns 20: 20 of 50"
else
	notok "cs --max-conns 20: $c" "$T/cs2.err"
fi

[ "$fail" = 0 ]
