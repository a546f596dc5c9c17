#!/usr/bin/env bash
# tests/integration/test_state_modes.sh: what the daemons write is their
# user's alone (checkpoint images were 0644 in 0755
# directories, so any local user could read every rank's memory). A
# deployment started under umask 000 (dispatcher --state-dir, CM, CS
# --store, node --cache-dir) runs a shipped program with checkpoints and a
# restore; then `stat -c %a` of everything under the CS store (while the
# job runs: its images go when it ends), the state dir and the node's
# cache must show no group or other bit (files 0600, programs and
# directories 0700). A job directory an older CS left 0755
# in the store is made 0700 when the CS starts. Exit 77 without CRIU.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init modes
need_criu
S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ckpt.c || exit 1
ARGS=(100000 1 100)
timeout 60 "$MPIV" run -n 2 "$T/prog" "${ARGS[@]}" > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free run" "$T/ref.err"; exit 1; }
# An older CS's leftovers: a world-readable job directory.
mkdir -p "$T/store/old/0"
chmod 755 "$T/store" "$T/store/old" "$T/store/old/0"

# daemon NAME ARGS...: mpiv ARGS under umask 000, stdout/stderr in T.
daemon() {
	local name=$1
	shift
	(umask 000 && exec "$MPIV" "$@" > "$T/$name.out" 2> "$T/$name.err") &
	PIDS+=($!)
}
daemon d dispatcher "${S[@]}" --listen 127.0.0.1:0 --state-dir "$T/state" --log-level info
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
daemon cm cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA"
daemon cs cs "${S[@]}" --listen 127.0.0.1:0 --store "$T/store" --dispatcher "$DA" --log-level info
FLT_HOLD=$T/hold daemon n node "${S[@]}" --dispatcher "$DA" --slots 3 --name n1 \
    --cache-dir "$T/cache" --log-level info
wait_for 15 grep -q 'dispatcher node registered .*name=n1 ' "$T/d.err" &&
    wait_for 15 grep -q 'dispatcher cs registered' "$T/d.err" ||
    { notok "the deployment did not come up" "$T/d.err"; exit 1; }

: > "$T/hold"
timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -v -n 2 --ckpt-interval 0.3 \
    "$T/prog" "${ARGS[@]}" > "$T/job.out" 2> "$T/job.err" &
RUN=$!
wait_for 20 grep -qs '^mpiv: dispatcher .* job ' "$T/job.err"
JOB=$(sed -n 's/^mpiv: dispatcher .* job \([^ ]*\)$/\1/p' "$T/job.err" | head -n 1)
# Both ranks checkpointed; rank 1 killed and restored (a restore writes
# in /dev/shm; the node's cache holds the shipped program).
if wait_for 20 eval '[ -s "$T/store/$JOB/0/current" ] && [ -s "$T/store/$JOB/1/current" ]'; then
	timeout 10 "$MPIV" kill "${S[@]}" --dispatcher "$DA" "$JOB" 1 > /dev/null 2>> "$T/kill.err"
	wait_for 20 grep -q "node restored job=$JOB rank=1 " "$T/n.err" ||
	    notok "rank 1 not restored" "$T/n.err"
else
	notok "no checkpoint of both ranks in the store" "$T/d.err" "$T/cs.err"
fi

# wide DIR: every entry under DIR (DIR too) with a group or other bit.
wide() { find "$1" -exec stat -c '%a %n' {} + | awk '$1 !~ /^[0-7]00$/'; }
# mode_check NAME DIR MUST: ok when DIR holds a MUST and nothing wide.
mode_check() {
	local name=$1 dir=$2 must=$3 n w
	n=$(find "$dir" -name "$must" 2> /dev/null | wc -l)
	w=$(wide "$dir" | grep -v "^755 $T/store$")
	if [ "$n" = 0 ]; then
		notok "$name: nothing named $must under $dir"
	elif [ -n "$w" ]; then
		notok "$name: group/world bits under umask 000: $(echo "$w" | sed "s|$T/||" | tr '\n' ' ')"
	else
		ok "$name: $(find "$dir" | wc -l) entries, none group/world accessible ($(find "$dir" -name "$must" -exec stat -c %a {} + | sort -u | tr '\n' ' ')$must)"
	fi
}
# the store while the job still runs (its images go when it ends)
mode_check store "$T/store" "*.img"
rm -f "$T/hold"
wait_for 40 eval '! kill -0 "$RUN" 2> /dev/null'
wait "$RUN"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/job.out" "$T/ref.out" &&
    ok "job with checkpoints and a restore: output identical, exit 0" ||
    notok "job: rc $rc" "$T/job.err"

for what in "state dir:$T/state:next_job" "program cache:$T/cache:prog"; do
	IFS=: read -r name dir must <<< "$what"
	mode_check "$name" "$dir" "$must"
done
m=$(stat -c %a "$T/store/old" "$T/store/old/0" | tr '\n' ' ')
[ "$m" = "700 700 " ] && ok "an older CS's 0755 job and rank directories made 0700 at start" ||
    notok "old job dirs: $m" "$T/cs.err"
[ "$(stat -c %a "$T/store")" = 755 ] && ok "the operator's existing store root is left as it was (0755)" ||
    notok "store root mode changed to $(stat -c %a "$T/store")"
[ "$fail" = 0 ]
