#!/usr/bin/env bash
# tests/integration/test_restart.sh: the launcher side of restarts
# (docs/REPLAY.md "Restart" step 1, "Output exactly once", "Fault
# injection") with plain programs, no MPI: a rank killed by SIGKILL or
# SIGTERM is relaunched with incarnation+1 and its re-executed output is
# not printed twice (even when the kill cut a line in half); other
# signals end the job; --relay-only and --max-restarts stop restarts;
# mpiv kill refuses bad requests clearly; --chaos kills and reports.
# None of this depends on MPI replay.
#
#   MPIV_BUILD  build dir (default build)
#
# Prints "ok - NAME" / "not ok - NAME"; exits non-zero on any failure.

cd "$(dirname "$0")/../.." || exit 2
B=${MPIV_BUILD:-build}
ROOT=$(pwd)
MPIV="$ROOT/$B/bin/mpiv"
if [ ! -x "$MPIV" ]; then
	echo "$MPIV not built"
	exit 1
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-restart.XXXXXX")
export TMPDIR="$W/tmp"
mkdir -p "$TMPDIR"
RUNPID=
cleanup() {
	[ -n "$RUNPID" ] && kill -TERM "$RUNPID" 2> /dev/null
	rm -rf "$W"
}
trap cleanup EXIT
cd "$W" || exit 2

FAILS=0
ok() { printf 'ok - %s\n' "$1"; }
notok() {
	FAILS=$((FAILS + 1))
	printf 'not ok - %s (%s)\n' "$1" "$2"
	[ -f out ] && sed 's/^/#   out| /' out | head -n 12
	[ -f err ] && sed 's/^/#   err| /' err | head -n 12
}

# wait_for SECS CMD...: polls CMD every 0.05 s; false after SECS.
wait_for() {
	local deadline=$(($(date +%s%N) / 1000000 + $1 * 1000))
	shift
	while ! "$@"; do
		[ $(($(date +%s%N) / 1000000)) -ge "$deadline" ] && return 1
		sleep 0.05
	done
	return 0
}
has() { grep -q -- "$2" "$1" 2> /dev/null; }

# start_job ARGS...: mpiv run in the background (stdout ./out, stderr
# ./err, exit code ./rc), then DADDR and JOB from its "dispatcher" line.
start_job() {
	rm -f out err rc started.log rep.json
	: > started.log
	( MPIV_PRINT_DISPATCHER=1 timeout -k 5 60 "$MPIV" run --tag-output "$@" \
	    < /dev/null > out 2> err; echo $? > rc ) &
	RUNPID=$!
	DADDR= JOB=
	wait_for 15 has err '^mpiv: dispatcher .* job ' || return 1
	DADDR=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job .*/\1/p' err)
	JOB=$(sed -n 's/^mpiv: dispatcher [^ ]* job \(.*\)/\1/p' err)
	[ -n "$DADDR" ] && [ -n "$JOB" ]
}
# end_job: waits for mpiv run; RC is its exit code.
end_job() {
	wait "$RUNPID" 2> /dev/null
	RUNPID=
	RC=$(cat rc 2> /dev/null || echo none)
}
# started RANK INC: that incarnation of that rank ran (and said so).
started() { grep -qx "$1 $2" started.log; }

# rtslow LINES [EXIT0_RANK [MID_MS]]: each rank appends "RANK
# INCARNATION" to started.log, then prints LINES lines "rR line I end"
# to stdout (each in two writes MID_MS apart, default 40, so a kill can
# cut one) and "rR e I" to stderr, slowly; rank EXIT0_RANK exits at once.
cat > rtslow.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *rank = getenv("MPIV_RANK");
	int lines = argc > 1 ? atoi(argv[1]) : 20;
	int exit0 = argc > 2 ? atoi(argv[2]) : -1;
	int mid_us = argc > 3 ? atoi(argv[3]) * 1000 : 40000;
	FILE *f = fopen("started.log", "a");

	fprintf(f, "%s %s\n", rank, getenv("MPIV_INCARNATION"));
	fclose(f);
	if (atoi(rank) == exit0)
		return 0;
	for (int i = 1; i <= lines; i++) {
		printf("r%s line %d", rank, i);
		fflush(stdout);
		usleep(mid_us);
		printf(" end\n");
		fflush(stdout);
		fprintf(stderr, "r%s e %d\n", rank, i);
		usleep(40000);
	}
	return 0;
}
EOF
cc -o rtslow rtslow.c || { echo "cannot compile test programs"; exit 1; }

# expect_out NRANKS LINES: with --tag-output, each rank's stdout and
# stderr are exactly the failure-free ones (between ranks the
# interleaving is free, docs/REPLAY.md), and nothing else is on stdout.
expect_out() {
	local n=$1 lines=$2 r
	for ((r = 0; r < n; r++)); do
		seq 1 "$lines" | sed "s/.*/r$r line & end/" > want.o
		sed -n "s/^\[[^],]*,$r\]<stdout>: //p" out > got.o
		cmp -s want.o got.o || { WHY="rank $r stdout differs"; return 1; }
		seq 1 "$lines" | sed "s/.*/r$r e &/" > want.e
		sed -n "s/^\[[^],]*,$r\]<stderr>: //p" err > got.e
		cmp -s want.e got.e || { WHY="rank $r stderr differs"; return 1; }
	done
	[ "$(wc -l < out)" -eq $((n * lines)) ] || { WHY="extra stdout"; return 1; }
	return 0
}

# report PYTHON-ASSERTIONS: checks rep.json (bound to r).
report() {
	python3 -c "
import json
r = json.load(open('rep.json'))
$1
" 2> pyerr || { WHY="report: $(tail -n 1 pyerr)"; return 1; }
}

# ---- help ----
"$MPIV" run --help > out 2> err
for o in --chaos --chaos-seed --chaos-max --max-restarts --relay-only --verbose; do
	grep -q -- "$o" out || { notok help "--help lacks $o"; continue 2; }
done
ok help
"$MPIV" kill --help > out 2>&1 && grep -q '^usage: mpiv kill' out &&
    ok kill/help || notok kill/help "no usage"

# ---- one kill: restarted, output exactly once ----
if start_job -n 2 --report rep.json ./rtslow 20; then
	wait_for 15 has out 'r1 line 4' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" 1 > kill.out 2>&1
	krc=$?
	end_job
	if [ "$krc" != 0 ]; then
		notok restart/kill "mpiv kill failed: $(cat kill.out)"
	elif [ "$RC" != 0 ]; then
		notok restart/kill "exit $RC, expected 0"
	elif ! started 1 2; then
		notok restart/kill "rank 1 incarnation 2 never ran"
	elif ! expect_out 2 20; then
		notok restart/kill "$WHY"
	elif ! grep -Eqx 'mpiv: 1 kill, 1 restart, relaunch median [0-9.]+ ms, replayed 0 events' err; then
		notok restart/kill "no summary line"
	elif ! report '
assert r["exit_code"] == 0 and r["mode"] == "logging", r
assert r["kills"] == 1 and r["restarts"] == 1, r
p = r["per_rank"]
assert p[0]["incarnations"] == 1 and p[0]["restarts"] == 0, p
assert p[1]["incarnations"] == 2 and p[1]["restarts"] == 1, p
l = r["restart_log"]
assert len(l) == 1 and l[0]["rank"] == 1 and l[0]["incarnation"] == 2, l
assert l[0]["relaunch_ms"] >= 0 and l[0]["replayed_events"] == 0, l
assert r["chaos_seed"] is None, r
'; then
		notok restart/kill "$WHY"
	else
		ok restart/kill
	fi
else
	notok restart/kill "no dispatcher line"; end_job
fi

# ---- a kill between the two halves of a line: the rerun completes it ----
# (one rank, untagged: the half line is on our stdout when the kill goes)
half_line() { [ "$(tail -c 9 out 2> /dev/null)" = "r0 line 5" ]; }
rm -f out err rc started.log
: > started.log
( MPIV_PRINT_DISPATCHER=1 timeout -k 5 60 "$MPIV" run -n 1 ./rtslow 10 -1 400 \
    < /dev/null > out 2> err; echo $? > rc ) &
RUNPID=$!
if wait_for 15 has err '^mpiv: dispatcher .* job ' && wait_for 15 half_line; then
	DADDR=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job .*/\1/p' err)
	JOB=$(sed -n 's/^mpiv: dispatcher [^ ]* job \(.*\)/\1/p' err)
	"$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 > kill.out 2>&1
	krc=$?
	end_job
	seq 1 10 | sed 's/.*/r0 line & end/' > want.o
	if [ "$krc" != 0 ] || [ "$RC" != 0 ]; then
		notok restart/mid-line "kill rc $krc, exit $RC"
	elif ! started 0 2; then
		notok restart/mid-line "no second incarnation"
	elif ! cmp -s want.o out; then
		notok restart/mid-line "stdout is not the failure-free one"
	else
		ok restart/mid-line
	fi
else
	notok restart/mid-line "never saw the half line"; end_job
fi

# ---- the same rank twice (SIGTERM, then SIGKILL during the rerun),
# ---- then every rank at once ----
if start_job -n 3 --report rep.json ./rtslow 24; then
	wait_for 15 has out 'r2 line 3' &&
	    "$MPIV" kill --dispatcher "$DADDR" --signal 15 "$JOB" 2 > kill.out 2>&1 &&
	    wait_for 10 started 2 2 && wait_for 10 has out 'r2 line 6 end' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" 2 >> kill.out 2>&1 &&
	    wait_for 10 started 2 3 && wait_for 10 has out 'r0 line 9 end' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" all >> kill.out 2>&1
	krc=$?
	end_job
	if [ "$krc" != 0 ]; then
		notok restart/again-and-all "kills failed: $(tr '\n' ';' < kill.out)"
	elif [ "$RC" != 0 ]; then
		notok restart/again-and-all "exit $RC, expected 0"
	elif ! started 2 4 || ! started 0 2 || ! started 1 2; then
		notok restart/again-and-all "missing incarnations: $(tr '\n' ' ' < started.log)"
	elif ! expect_out 3 24; then
		notok restart/again-and-all "$WHY"
	elif ! report '
assert r["kills"] == 5 and r["restarts"] == 5, r
assert [p["incarnations"] for p in r["per_rank"]] == [2, 2, 4], r["per_rank"]
assert sorted((e["rank"], e["incarnation"]) for e in r["restart_log"]) == \
    [(0, 2), (1, 2), (2, 2), (2, 3), (2, 4)], r["restart_log"]
'; then
		notok restart/again-and-all "$WHY"
	elif ! grep -Eqx 'mpiv: 5 kills, 5 restarts, .*' err; then
		notok restart/again-and-all "no summary line"
	else
		ok restart/again-and-all
	fi
else
	notok restart/again-and-all "no dispatcher line"; end_job
fi

# ---- a rank that exited 0 is never restarted (nor killable) ----
if start_job -n 2 ./rtslow 10 0; then
	wait_for 15 has out 'r1 line 2'
	"$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 > kill.out 2>&1
	krc=$?
	end_job
	if [ "$krc" != 1 ] || ! grep -qx "mpiv kill: rank 0 of job $JOB has already exited" kill.out; then
		notok restart/exited-stays "kill: rc $krc, $(cat kill.out)"
	elif [ "$RC" != 0 ] || started 0 2; then
		notok restart/exited-stays "exit $RC or rank 0 restarted"
	else
		ok restart/exited-stays
	fi
else
	notok restart/exited-stays "no dispatcher line"; end_job
fi

# ---- other signals end the job: no restart ----
if start_job -n 2 --report rep.json ./rtslow 40; then
	wait_for 15 has out 'r0 line 2' &&
	    "$MPIV" kill --dispatcher "$DADDR" --signal 11 "$JOB" 0 > kill.out 2>&1
	end_job
	if [ "$RC" != 139 ]; then
		notok restart/segv-not-restarted "exit $RC, expected 139"
	elif started 0 2; then
		notok restart/segv-not-restarted "rank 0 was restarted"
	elif ! grep -qx 'mpiv: rank 0 killed by signal 11 (Segmentation fault)' err; then
		notok restart/segv-not-restarted "no reason line"
	elif ! report 'assert r["restarts"] == 0 and r["kills"] == 1, r'; then
		notok restart/segv-not-restarted "$WHY"
	else
		ok restart/segv-not-restarted
	fi
else
	notok restart/segv-not-restarted "no dispatcher line"; end_job
fi

# ---- --relay-only: a killed rank fails the job ----
if start_job -n 2 --relay-only --report rep.json ./rtslow 40; then
	wait_for 15 has out 'r1 line 2' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" 1 > kill.out 2>&1
	end_job
	if [ "$RC" != 137 ]; then
		notok restart/relay-only "exit $RC, expected 137"
	elif started 1 2; then
		notok restart/relay-only "rank 1 was restarted"
	elif ! grep -qx 'mpiv: rank 1 killed by signal 9 (Killed)' err; then
		notok restart/relay-only "no reason line"
	elif ! report 'assert r["mode"] == "relay" and r["restarts"] == 0 and r["kills"] == 1, r'; then
		notok restart/relay-only "$WHY"
	else
		ok restart/relay-only
	fi
else
	notok restart/relay-only "no dispatcher line"; end_job
fi

# ---- --max-restarts 1: the second kill ends the job ----
if start_job -n 1 --max-restarts 1 ./rtslow 40; then
	wait_for 15 has out 'r0 line 2' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 > kill.out 2>&1 &&
	    wait_for 10 started 0 2 && wait_for 10 has out 'r0 line 3 end' &&
	    "$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 >> kill.out 2>&1
	end_job
	if [ "$RC" != 137 ]; then
		notok restart/max-restarts "exit $RC, expected 137"
	elif ! grep -qx 'mpiv: rank 0 killed by signal 9 (Killed) after 1 restarts (the limit)' err; then
		notok restart/max-restarts "no reason line"
	else
		ok restart/max-restarts
	fi
else
	notok restart/max-restarts "no dispatcher line"; end_job
fi

# ---- mpiv kill refuses clearly ----
# (long enough that the job is still running after the refusals, even on
# a loaded machine: the last kill ends it)
if start_job -n 2 ./rtslow 300; then
	"$MPIV" kill --dispatcher "$DADDR" 9999 0 > kill.out 2>&1
	krc=$?
	[ "$krc" = 1 ] && grep -qx 'mpiv kill: unknown job 9999' kill.out &&
	    ok kill/unknown-job || notok kill/unknown-job "rc $krc: $(cat kill.out)"
	"$MPIV" kill --dispatcher "$DADDR" "$JOB" 2 > kill.out 2>&1
	krc=$?
	[ "$krc" = 1 ] && grep -qx "mpiv kill: rank 2 out of range (job $JOB has 2 ranks)" kill.out &&
	    ok kill/rank-out-of-range || notok kill/rank-out-of-range "rc $krc: $(cat kill.out)"
	"$MPIV" kill --dispatcher "$DADDR" "$JOB" x > kill.out 2>&1
	krc=$?
	[ "$krc" = 2 ] && grep -q 'bad rank "x"' kill.out &&
	    ok kill/bad-rank || notok kill/bad-rank "rc $krc: $(cat kill.out)"
	"$MPIV" kill "$JOB" 0 > kill.out 2>&1
	[ $? = 2 ] && grep -q 'missing --dispatcher' kill.out &&
	    ok kill/usage || notok kill/usage "$(cat kill.out)"
	# A signal other than KILL/TERM to every rank ends the job (once
	# both ranks run: before that the job is not running yet).
	wait_for 20 started 0 1
	wait_for 20 started 1 1
	"$MPIV" kill --dispatcher "$DADDR" --signal 10 "$JOB" all > kill.out 2>&1
	krc=$?
	end_job
	[ "$krc" = 0 ] && [ "$RC" = 138 ] && ! started 0 2 && ! started 1 2 &&
	    ok kill/all-other-signal || notok kill/all-other-signal "kill rc $krc, exit $RC"
else
	notok kill/errors "no dispatcher line"; end_job
fi
"$MPIV" kill --dispatcher 127.0.0.1:1 1 0 > kill.out 2>&1
krc=$?
[ "$krc" = 1 ] && grep -q 'cannot reach the dispatcher' kill.out &&
    ok kill/unreachable || notok kill/unreachable "rc $krc: $(cat kill.out)"

# ---- --chaos: seeded kills, restarts, exactly-once output ----
rm -f out err rep.json
: > started.log
timeout -k 5 90 "$MPIV" run --tag-output -n 2 --chaos 300ms --chaos-seed 42 --chaos-max 3 \
    --report rep.json ./rtslow 20 < /dev/null > out 2> err
RC=$?
if [ "$RC" != 0 ]; then
	notok chaos/seeded "exit $RC, expected 0"
elif ! expect_out 2 20; then
	notok chaos/seeded "$WHY"
elif ! report '
assert r["kills"] == 3 and r["restarts"] == 3, r
assert r["chaos_seed"] == 42 and len(r["restart_log"]) == 3, r
assert sum(p["restarts"] for p in r["per_rank"]) == 3, r
'; then
	notok chaos/seeded "$WHY"
elif ! grep -Eqx 'mpiv: 3 kills, 3 restarts, relaunch median [0-9.]+ ms, replayed [0-9]+ events?' err; then
	notok chaos/seeded "no summary line"
else
	ok chaos/seeded
fi
run_usage() { "$MPIV" run "$@" < /dev/null > out 2> err; }
run_usage -n 1 --chaos 0 ./rtslow; [ $? = 2 ] && ok chaos/bad-mtbf || notok chaos/bad-mtbf "accepted 0"
run_usage -n 1 --chaos 2x ./rtslow; [ $? = 2 ] && ok chaos/bad-unit || notok chaos/bad-unit "accepted 2x"
run_usage -n 1 --chaos-seed 3 ./rtslow; [ $? = 2 ] && grep -q 'need --chaos' err &&
    ok chaos/seed-needs-chaos || notok chaos/seed-needs-chaos "accepted"
# Without --chaos-seed the seed used is reported.
timeout -k 5 60 "$MPIV" run -n 1 --chaos 10s --report rep.json ./rtslow 2 < /dev/null > out 2> err
if [ $? = 0 ] && report 'assert isinstance(r["chaos_seed"], int), r'; then
	ok chaos/seed-reported
else
	notok chaos/seed-reported "${WHY:-failed}"
fi

# ---- nothing left behind ----
sleep 0.3
# (this script's own: tests/integration/strays.bash)
. "$ROOT/tests/integration/strays.bash"
own_strays "$ROOT/$B/bin/mpiv" > strays
if [ -s strays ]; then
	notok cleanup/processes "stray processes: $(tr '\n' ';' < strays)"
else
	ok cleanup/processes
fi
if pgrep -x rtslow > strays; then
	notok cleanup/ranks "stray ranks: $(tr '\n' ';' < strays)"
else
	ok cleanup/ranks
fi

if [ "$FAILS" -gt 0 ]; then
	echo "$FAILS failed"
	exit 1
fi
echo "all passed"
exit 0
