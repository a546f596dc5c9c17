#!/usr/bin/env bash
# tests/fault/test_direct_log.sh: the direct protocol's logs of sent
# messages stay bounded. tests/fault/progs/flt_bigring.c passes 1 MiB
# messages around a ring of 3 ranks: 300 rounds put ~300 MiB in each
# sender's log; MPIV_SENDLOG_MAX caps each log at 48 MiB.
#   nockpt   no CRIU: no checkpoint can free a log, so a sender fails
#            with one error naming MPIV_SENDLOG_MAX (never a hang until
#            --timeout, never a wrong output), after MPIV_SENDLOG_WAIT
#            (3 s here, 10 by default)
#   bad-settings  MPIV_SENDLOG_WAIT or MPIV_SENDLOG_MAX that is no number:
#            the job fails at MPI_Init saying which (it said "out of
#            memory" before)
#   ckpt     CRIU, no --ckpt-interval: a sender with a full log asks its
#            receivers for checkpoints (DCkptAsk) and waits for their
#            durability to free it (DTrim); the failure-free output
#   chaos    the same while ranks are killed at random (restores from
#            those checkpoints, resends from trimmed logs): same output
#   rerun-covered  2 ranks, rank 0 only sends (flt_bigring ONEWAY): its
#            log is trimmed by rank 1's checkpoints, it takes none itself,
#            and it is killed entering MPI_Finalize, while rank 1 waits in
#            its own MPI_Finalize (where no checkpoint is taken). Its
#            relaunch sends all ~300 MiB again; what rank 1's checkpoint
#            holds takes no room in its log (it used to: the log filled
#            with those, rank 1 could free nothing, and the job failed
#            after 10 s saying the log was full: seen once in chaos);
#            rerun-covered-ssend the same with MPI_Ssend (ONEWAY=2), whose
#            covered messages are acknowledged again from frames without
#            their bytes; rerun-covered-relink also kills rank 1 while
#            they come, so a pending one is asked for again on a new link
# The send log spills to an unlinked file in MPIV_SENDLOG_DIR past
# MPIV_SENDLOG_MEM (libmpi-lite/dp_spill.c); a watcher reads the ranks'
# open files in /proc to see it (unlinked, it is nowhere else):
#   nodir    MPIV_SENDLOG_DIR that does not exist: one warning per rank,
#            the log stays in memory, the job ends well
#   spill-relaunch  no CRIU, MPIV_SENDLOG_MEM 8M under a cap the job never
#            reaches, kills: relaunched ranks get their messages again from
#            logs mostly on disk: same output
#   spill    CRIU, MPIV_SENDLOG_MEM 8M, MPIV_SENDLOG_MAX 96M, checkpoints
#            every 0.5 s and kills: ranks are restored from images that
#            carry their spill file (a restored rank holds a file of its
#            ancestor's name on another inode: CRIU's copy): same output,
#            nothing left in the directory
. "$(dirname "$0")/common.bash"

flt_need_chaos
ring=$(flt_prog flt_bigring) || { flt_notok "cannot compile flt_bigring"; flt_finish; }
ARGS=(300 1024)
CAP=48M
D=(--protocol direct)

flt_job "$FLT_TMP/ref" 90 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
[ "$FLT_RC" = 0 ] || { flt_notok "failure-free run: exit $FLT_RC" "$FLT_TMP/ref.err"; flt_finish; }

t0=$(date +%s)
MPIV_CRIU=/nonexistent MPIV_SENDLOG_MAX=$CAP MPIV_SENDLOG_WAIT=3 flt_job "$FLT_TMP/nockpt" 90 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
secs=$(( $(date +%s) - t0 ))
if [ "$FLT_RC" = 0 ] || [ "$FLT_RC" = 124 ]; then
	flt_notok "nockpt: exit $FLT_RC after $secs s (want a failure)" "$FLT_TMP/nockpt.err"
elif ! grep -q 'the log of sent messages is full .*within 3 s (MPIV_SENDLOG_WAIT).*MPIV_SENDLOG_MAX' "$FLT_TMP/nockpt.err"; then
	flt_notok "nockpt: no error naming MPIV_SENDLOG_MAX and a 3 s MPIV_SENDLOG_WAIT" "$FLT_TMP/nockpt.err"
elif [ "$secs" -gt 30 ]; then
	flt_notok "nockpt: failed only after $secs s" "$FLT_TMP/nockpt.err"
else
	flt_ok "nockpt: exit $FLT_RC after $secs s: $(grep -m1 'MPIV_SENDLOG_MAX' "$FLT_TMP/nockpt.err" | cut -c1-140)..."
fi

# spill_watch DIR OUT: until DIR/.stop exists (or this script is gone),
# every 0.05 s one line per file unlinked from DIR (a spill file) that a
# process running $ring holds (not criu, which reads it through /proc):
# "PID PATH DEV:INODE SIZE BYTES_HELD". A checkpoint's clone holds its
# rank's file too (the same inode); a restored rank, CRIU's copy.
spill_watch() {
	local dir=$1 out=$2 l t s n=0 p fds
	while [ ! -e "$dir/.stop" ] && kill -0 $$ 2>/dev/null && [ $n -lt 6000 ]; do
		# only the ring's processes are looked at: a pass over every
		# process's descriptors took long enough on a loaded machine to
		# miss a restored rank's whole life (seen once)
		fds=()
		for p in $(pgrep -f "^$ring( |\$)"); do
			fds+=("/proc/$p/fd")
		done
		[ ${#fds[@]} -gt 0 ] &&
		find "${fds[@]}" -maxdepth 1 -lname "$dir/* (deleted)" \
		    -printf '%p\t%l\n' 2>/dev/null |
		while IFS=$'\t' read -r l t; do
			l=${l#/proc/}
			[ "$(readlink "/proc/${l%%/*}/exe")" = "$ring" ] || continue
			s=$(stat -L -c '%d:%i %s %b' "/proc/$l" 2>/dev/null) || continue
			set -- $s
			echo "${l%%/*} ${t% (deleted)} $1 $2 $(( $3 * 512 ))"
		done >> "$out"
		sleep 0.05
		n=$((n + 1))
	done
}

# spill_run NAME VAR=VALUE... -- SECS MPIV_RUN_ARGS...: flt_job NAME
# with those variables and a spill directory of its own, watched (its
# samples in NAME.files).
spill_run() {
	local name=$1 dir=$FLT_TMP/$1.dir w
	shift
	while [ "$1" != -- ]; do
		local -x "$1"
		shift
	done
	shift
	local -x MPIV_SENDLOG_DIR="$dir"
	mkdir -m 1777 "$dir"
	: > "$FLT_TMP/$name.files"
	spill_watch "$dir" "$FLT_TMP/$name.files" &
	w=$!
	flt_job "$FLT_TMP/$name" "$@"
	touch "$dir/.stop"
	wait "$w"
	rm -f "$dir/.stop"
}

# The most bytes one file held; the restored ranks' files: the name of an
# earlier file (a relaunched rank makes a new one) on another inode (CRIU's
# copy), and how many of them held bytes when first seen.
spill_held() { awk '$5 > m { m = $5 } END { print m + 0 }' "$1"; }
spill_restored() {
	awk '!($2 in first) { first[$2] = $3 }
	    first[$2] != $3 && !(($2, $3) in seen) { seen[$2, $3] = 1; n++; if ($5 > 0) full++ }
	    END { printf "%d %d\n", n, full }' "$1"
}

for c in "MPIV_SENDLOG_WAIT=soon:MPIV_SENDLOG_WAIT is not a number of seconds" \
    "MPIV_SENDLOG_WAIT=0:MPIV_SENDLOG_WAIT is not a number of seconds" \
    "MPIV_SENDLOG_MAX=lots:MPIV_SENDLOG_MAX is not a byte count"; do
	set=${c%%:*} want=${c#*:} o=$FLT_TMP/bad-${set%%=*}-${set#*=}
	export "$set"
	flt_job "$o" 60 -n 2 "${D[@]}" "$ring" 2 16
	unset "${set%%=*}"
	if [ "$FLT_RC" = 0 ] || [ "$FLT_RC" = 124 ]; then
		flt_notok "bad-settings $set: exit $FLT_RC" "$o.err"
	elif ! grep -q "$want" "$o.err"; then
		flt_notok "bad-settings $set: no \"$want\"" "$o.err"
	else
		flt_ok "bad-settings $set: exit $FLT_RC, $(grep -m1 "$want" "$o.err" | cut -c1-120)"
	fi
done

MPIV_SENDLOG_DIR=$FLT_TMP/no/such/dir MPIV_SENDLOG_MEM=1M \
	flt_job "$FLT_TMP/nodir" 60 -n 3 "${D[@]}" "$ring" 20 1024
nw=$(grep -c "cannot spill the send log to $FLT_TMP/no/such/dir: No such file or directory; it stays in memory (MPIV_SENDLOG_MAX bounds it)" "$FLT_TMP/nodir.err")
if [ "$FLT_RC" != 0 ]; then
	flt_notok "nodir: exit $FLT_RC" "$FLT_TMP/nodir.err"
elif [ "$nw" != 3 ]; then
	flt_notok "nodir: $nw warnings for 3 ranks" "$FLT_TMP/nodir.err"
else
	flt_ok "nodir: exit 0, one warning per rank: $(grep -m1 'cannot spill' "$FLT_TMP/nodir.err" | cut -c1-150)"
fi

spill_run spill-relaunch MPIV_CRIU=/nonexistent MPIV_SENDLOG_MEM=8M MPIV_SENDLOG_MAX=400M -- \
	90 -n 3 "${D[@]}" --chaos 700ms --chaos-seed 5 --chaos-max 4 "$ring" "${ARGS[@]}"
held=$(spill_held "$FLT_TMP/spill-relaunch.files")
kills=$(flt_report "$FLT_TMP/spill-relaunch.json" kills)
if [ "$FLT_RC" != 0 ]; then
	flt_notok "spill-relaunch: exit $FLT_RC" "$FLT_TMP/spill-relaunch.err"
elif [ "${kills:-0}" -lt 1 ]; then
	flt_notok "spill-relaunch: no kill happened" "$FLT_TMP/spill-relaunch.err"
elif [ "$held" -lt $((64 << 20)) ]; then
	flt_notok "spill-relaunch: no spill file held 64 MiB (at most $held bytes)" "$FLT_TMP/spill-relaunch.files"
else
	flt_same "spill-relaunch: $kills kills, relaunched ranks resent logs spilled up to $((held >> 20)) MiB a file" \
		"$FLT_TMP/ref.out" "$FLT_TMP/spill-relaunch.out"
fi

CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if timeout 60 "$CRIU" check > /dev/null 2>&1; then
	MPIV_SENDLOG_MAX=$CAP flt_job "$FLT_TMP/ckpt" 120 -n 3 "${D[@]}" "$ring" "${ARGS[@]}"
	ck=$(flt_report "$FLT_TMP/ckpt.json" checkpoints)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "ckpt: exit $FLT_RC" "$FLT_TMP/ckpt.err"
	elif [ "${ck:-0}" -lt 3 ]; then
		flt_notok "ckpt: only ${ck:-0} checkpoints for ~900 MiB sent under a $CAP log cap" "$FLT_TMP/ckpt.err"
	else
		flt_same "ckpt: ~300 MiB per sender under a $CAP log cap, $ck checkpoints asked by full logs" \
			"$FLT_TMP/ref.out" "$FLT_TMP/ckpt.out"
	fi

	MPIV_SENDLOG_MAX=$CAP flt_job "$FLT_TMP/chaos" 150 -n 3 "${D[@]}" --chaos 700ms --chaos-seed 7 \
		--chaos-max 6 "$ring" "${ARGS[@]}"
	kills=$(flt_report "$FLT_TMP/chaos.json" kills)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "chaos: exit $FLT_RC" "$FLT_TMP/chaos.err"
	elif [ "${kills:-0}" -lt 1 ]; then
		flt_notok "chaos: no kill happened" "$FLT_TMP/chaos.err"
	else
		flt_same "chaos: $kills kills under the $CAP log cap, $(flt_report "$FLT_TMP/chaos.json" checkpoints) checkpoints" \
			"$FLT_TMP/ref.out" "$FLT_TMP/chaos.out"
	fi

	flt_job "$FLT_TMP/ow-ref" 90 -n 2 "${D[@]}" "$ring" "${ARGS[@]}" 1
	owref=$FLT_RC
	# rerun-covered, and the same with MPI_Ssend (ONEWAY=2): a covered
	# synchronous send keeps nothing either; rank 1 acknowledges it again
	# from a frame without its payload
	for c in rerun-covered:ow:1:"" rerun-covered-ssend:ows:2:" by MPI_Ssend"; do
		IFS=: read -r name o mode how <<< "$c"
		MPIV_SENDLOG_MAX=$CAP MPIV_FAULT=finalize:1:0 MPIV_FAULT_LOG=$FLT_TMP/$o.flog \
			flt_job "$FLT_TMP/$o" 90 -n 2 "${D[@]}" "$ring" "${ARGS[@]}" "$mode"
		ck=$(flt_report "$FLT_TMP/$o.json" checkpoints)
		if [ "$owref" != 0 ]; then
			flt_notok "$name: failure-free run failed" "$FLT_TMP/ow-ref.err"
		elif [ "$FLT_RC" != 0 ]; then
			flt_notok "$name: exit $FLT_RC" "$FLT_TMP/$o.err"
		elif ! grep -q "^fault finalize:" "$FLT_TMP/$o.flog" 2>/dev/null; then
			flt_notok "$name: the fault point never fired" "$FLT_TMP/$o.err"
		elif [ "${ck:-0}" -lt 1 ]; then
			flt_notok "$name: no checkpoint of rank 1 trimmed rank 0's log" "$FLT_TMP/$o.err"
		else
			flt_same "$name: rank 0 relaunched, sent ~300 MiB again$how under the $CAP cap, $ck checkpoints" \
				"$FLT_TMP/ow-ref.out" "$FLT_TMP/$o.out"
		fi
	done

	# ... and rank 1 killed at the 5th message rank 0's relaunch sends
	# again (the 300 of the first run, then those): restored from its
	# checkpoint, it gets the pending MPI_Ssend's request again on the
	# new link, still without the bytes
	MPIV_SENDLOG_MAX=$CAP MPIV_FAULT=finalize:1:0,deliver:305:1:1 MPIV_FAULT_LOG=$FLT_TMP/owr.flog \
		flt_job "$FLT_TMP/owr" 90 -n 2 "${D[@]}" "$ring" "${ARGS[@]}" 2
	fromck=$(jq -r '[.restart_log[]? | select(.rank == 1 and .from_ckpt > 0)] | length' "$FLT_TMP/owr.json" 2>/dev/null)
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "rerun-covered-relink: exit $FLT_RC" "$FLT_TMP/owr.err"
	elif ! grep -q "^fault deliver:305 rank 1" "$FLT_TMP/owr.flog" 2>/dev/null; then
		flt_notok "rerun-covered-relink: rank 1 was not killed at its 305th message" "$FLT_TMP/owr.err"
	elif [ "${fromck:-0}" -lt 1 ]; then
		flt_notok "rerun-covered-relink: rank 1 was not restored from a checkpoint" "$FLT_TMP/owr.err"
	else
		flt_same "rerun-covered-relink: rank 1 killed while rank 0 re-sent by MPI_Ssend, restored from its checkpoint" \
			"$FLT_TMP/ow-ref.out" "$FLT_TMP/owr.out"
	fi

	spill_run spill MPIV_SENDLOG_MEM=8M MPIV_SENDLOG_MAX=96M -- \
		150 -n 3 "${D[@]}" --ckpt-interval 0.5 --chaos 800ms --chaos-seed 12 \
		--chaos-max 6 "$ring" "${ARGS[@]}"
	held=$(spill_held "$FLT_TMP/spill.files")
	read -r nres nfull <<< "$(spill_restored "$FLT_TMP/spill.files")"
	fromck=$(jq -r '[.restart_log[]? | select(.from_ckpt > 0)] | length' "$FLT_TMP/spill.json" 2>/dev/null)
	left=$(ls -A "$FLT_TMP/spill.dir")
	if [ "$FLT_RC" != 0 ]; then
		flt_notok "spill: exit $FLT_RC" "$FLT_TMP/spill.err"
	elif [ "${fromck:-0}" -lt 1 ]; then
		flt_notok "spill: no rank restored from a checkpoint" "$FLT_TMP/spill.err"
	elif [ "$held" -lt $((32 << 20)) ]; then
		flt_notok "spill: no spill file held 32 MiB (at most $held bytes)" "$FLT_TMP/spill.files"
	elif [ "${nres:-0}" -lt 1 ]; then
		flt_notok "spill: no restored rank seen holding CRIU's copy of its spill file ($fromck restores)" \
			"$FLT_TMP/spill.files"
	elif [ -n "$left" ]; then
		flt_notok "spill: files left in MPIV_SENDLOG_DIR: $left"
	else
		flt_same "spill: $fromck restores from checkpoints, $nres restored ranks seen with their image's spill file ($nfull holding bytes when first seen), up to $((held >> 20)) MiB a file" \
			"$FLT_TMP/ref.out" "$FLT_TMP/spill.out"
	fi
else
	echo "# ckpt, chaos and spill cases skipped: $CRIU check fails here"
fi
flt_finish
