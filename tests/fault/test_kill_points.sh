#!/usr/bin/env bash
# tests/fault/test_kill_points.sh: targeted kills at named fault points
# (MPIV_FAULT=NAME:N[:RANK[:INC]], libmpi-lite/fault.c), exported to the
# ranks through mpiv run's environment. Covers kills during sends (also in
# the middle of a large payload; of a collective's 8 MiB frames, which
# in the relay are multicasts and rank 0's to gather), receives (after a post, between a
# Deliver header and its payload), non-deterministic completions,
# collectives, steps of non-blocking collectives (logged ones, and the
# unlogged ones taken in a wait for the one active schedule: nbc-wait),
# MPI_Finalize; during replay (INC 2 and 3: the restarted
# incarnation killed again); two ranks at the same point; every rank of
# the job. Each case: output and exit code equal to the failure-free run,
# MPIV_FAULT_LOG shows exactly the expected kills (point, rank,
# incarnation), the report shows at least that many restarts.
#
# Skips (77) while the library does not call the fault points yet.
. "$(dirname "$0")/common.bash"

flt_need_chaos

pf_bin=$(flt_prog flt_ring) || { flt_notok "cannot compile flt_ring"; flt_finish; }
MPIV_FAULT_LOG=$FLT_TMP/pf.log MPIV_FAULT=send:1:0 \
	flt_job "$FLT_TMP/pf" 30 -n 2 "$pf_bin" 50 100
if [ ! -s "$FLT_TMP/pf.log" ]; then
	flt_skip "fault points not called by the library yet: MPIV_FAULT=send:1:0 killed nothing (exit $FLT_RC, restarts $(flt_report "$FLT_TMP/pf.json" restarts))"
fi

# name  prog  nranks  mode  MPIV_FAULT  expected-kills(point:N/rank/inc,...)  args...
CASES=(
	"send-ring-r1        flt_ring     4 raw send:5:1                      send:5/1/1                       600 2000"
	"send-master         flt_mw       4 raw send:40:0                     send:40/0/1                      400 20000"
	"send-partial-r0     p2p_large    2 raw send-partial:1:0              send-partial:1/0/1"
	"send-partial-r1     p2p_large    2 raw send-partial:1:1              send-partial:1/1/1"
	"send-partial-coll   flt_coll     4 raw send-partial:3:0              send-partial:3/0/1               3 1048576"
	"post-stencil-r2     flt_stencil  4 tag post:30:2                     post:30/2/1                      600 2000"
	"deliver-order-r1    flt_order    3 raw deliver:50:1                  deliver:50/1/1                   60 24"
	"deliver-master      flt_mw       4 raw deliver:100:0                 deliver:100/0/1                  400 20000"
	"nd-async-r1         flt_async    3 tag nd:30:1                       nd:30/1/1                        40 40"
	"coll-r3             flt_coll     4 raw coll:40:3                     coll:40/3/1                      120 32"
	"coll-split-r0       flt_split    5 raw coll:30:0                     coll:30/0/1                      80"
	"nbc-step-r1         flt_nbc      4 raw nbc:200:1                     nbc:200/1/1                      300 48"
	"replay-nbc          flt_nbc      4 raw nbc:300:2,nbc:80:2:2          nbc:300/2/1,nbc:80/2/2           300 48"
	"nbc-wait-r1         flt_nbc      4 raw nbc-wait:100:1                nbc-wait:100/1/1                 300 48"
	"replay-nbc-wait     flt_nbc      4 raw nbc-wait:150:2,nbc-wait:30:2:2 nbc-wait:150/2/1,nbc-wait:30/2/2 300 48"
	"finalize-r1         flt_ring     4 raw finalize:1:1                  finalize:1/1/1                   600 2000"
	"finalize-exitcode   flt_exit     3 tag finalize:1:2                  finalize:1/2/1                   300 3"
	"replay-send         flt_ring     4 raw send:300:1,send:100:1:2       send:300/1/1,send:100/1/2        600 2000"
	"replay-post-x2      flt_stencil  4 tag post:200:2,post:50:2:2,post:10:2:3 post:200/2/1,post:50/2/2,post:10/2/3 600 2000"
	"replay-deliver      flt_mw       4 raw deliver:150:0,deliver:40:0:2  deliver:150/0/1,deliver:40/0/2   400 20000"
	"replay-nd           flt_async    3 tag nd:40:0,nd:10:0:2             nd:40/0/1,nd:10/0/2              40 40"
	"post-held-wildcard  flt_held     2 raw post:4:1                      post:4/1/1                       300"
	"replay-coll         flt_coll     4 raw coll:60:1,coll:20:1:2         coll:60/1/1,coll:20/1/2          120 32"
	"two-ranks-send      flt_stencil  4 tag send:100:1,send:100:2         send:100/1/1,send:100/2/1        600 2000"
	"two-ranks-deliver   flt_order    3 raw deliver:30:0,deliver:30:2     deliver:30/0/1,deliver:30/2/1    60 24"
	"all-ranks-send      flt_stencil  4 tag send:50                       send:50/0/1,send:50/1/1,send:50/2/1,send:50/3/1 600 2000"
	"all-ranks-coll      flt_coll     4 raw coll:20                       coll:20/0/1,coll:20/1/1,coll:20/2/1,coll:20/3/1 120 32"
	"all-ranks-deliver   flt_mw       3 raw deliver:30                    deliver:30/0/1,deliver:30/1/1,deliver:30/2/1 300 20000"
)

declare -A REF_DONE=()

# prog_bin NAME: a tests/fault/progs program, or a tests/mpi one.
prog_bin() {
	if [ -f "$FLT_ROOT/tests/fault/progs/$1.c" ]; then
		flt_prog "$1"
	elif [ -x "$FLT_B/tests/mpi/$1" ]; then
		printf '%s\n' "$FLT_B/tests/mpi/$1"
	else
		return 1
	fi
}

start=$(date +%s)
for line in "${CASES[@]}"; do
	read -r -a w <<< "$line"
	name=${w[0]} prog=${w[1]} n=${w[2]} mode=${w[3]} spec=${w[4]} want=${w[5]}
	args=("${w[@]:6}")
	if [ -n "${FLT_ONLY:-}" ] && ! [[ $name =~ $FLT_ONLY ]]; then
		continue
	fi
	if ! bin=$(prog_bin "$prog"); then
		flt_notok "$name: program $prog not available (make tests-build?)"
		continue
	fi
	tagopt=()
	[ "$mode" = tag ] && tagopt=(--tag-output)
	key="$prog $n $mode ${args[*]}"
	ref=$FLT_TMP/ref.$(printf '%s' "$key" | md5sum | cut -c1-12)
	if [ -z "${REF_DONE[$key]:-}" ]; then
		flt_job "$ref" 120 -n "$n" "${tagopt[@]}" "$bin" "${args[@]}"
		echo "$FLT_RC" > "$ref.rc"
		if [ "$mode" = tag ]; then flt_norm "$ref.out" "$ref.err" > "$ref.cmp"; else cp "$ref.out" "$ref.cmp"; fi
		REF_DONE[$key]=1
	fi
	ref_rc=$(cat "$ref.rc")
	out=$FLT_TMP/$name
	rm -f "$out.log"
	what="$name (MPIV_FAULT=$spec $prog -n $n ${args[*]})"
	MPIV_FAULT_LOG=$out.log MPIV_FAULT=$spec \
		flt_job "$out" 90 -n "$n" "${tagopt[@]}" "$bin" "${args[@]}"
	rc=$FLT_RC
	# which kills happened: "point:N/rank/inc", sorted
	got=$(sed -n 's/^fault \([^ ]*\) rank \([0-9]*\) inc \([0-9]*\) .*/\1\/\2\/\3/p' "$out.log" 2>/dev/null | sort | paste -sd, -)
	wantsorted=$(tr ',' '\n' <<< "$want" | sort | paste -sd, -)
	if [ "$got" = "$wantsorted" ]; then
		flt_ok "$what: killed at $got"
	else
		flt_notok "$what: kills seen '${got}', want '$wantsorted'"
	fi
	if [ "$rc" != "$ref_rc" ]; then
		flt_notok "$what: exit $rc, failure-free $ref_rc" "$out.err" "$out.out"
		continue
	fi
	if [ "$mode" = tag ]; then flt_norm "$out.out" "$out.err" > "$out.cmp"; else cp "$out.out" "$out.cmp"; fi
	flt_same "$what: output and exit $rc" "$ref.cmp" "$out.cmp" ||
		tail -n 5 "$out.err" | sed 's/^/#   err| /'
	nwant=$(tr ',' '\n' <<< "$want" | wc -l)
	restarts=$(flt_report "$out.json" restarts)
	if [ -n "$restarts" ] && [ "$restarts" -ge "$nwant" ]; then
		flt_ok "$what: report shows $restarts restarts"
	else
		flt_notok "$what: report shows ${restarts:-no} restarts, want >= $nwant" "$out.json"
	fi
done
echo "# took $(( $(date +%s) - start ))s"
flt_finish
