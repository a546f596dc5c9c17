#!/usr/bin/env bash
# tests/integration/test_ckpt_truncate.sh: checkpoint streams cut at
# random points. A relay (cutproxy.py) stands between
# the node agent and the real checkpoint server, which advertises the
# relay's address (mpiv cs --advertise), and cuts one planned stream
# after a random number of bytes:
#   down/*   the CS -> node stream of a restore (ImageInfo, ImageData...,
#            ImageEnd) cut: the node logs a failed fetch naming the CS,
#            never hands CRIU a truncated image (no "pstree.img" error),
#            fetches the image again and restores the rank from it.
#   up/*     the node -> CS stream of an upload (ImagePut, ImageData...,
#            ImageEnd) cut: the CS aborts the upload (or, when the cut
#            falls inside the ImagePut frame, as the relay's log shows,
#            never sees one begin), its current image of the rank is the
#            same file as before, no CM frees anything for it, and the
#            rank killed next is restored from that image.
#   end      the job's output equals the failure-free run's, exit 0.
#   down-every  every fetch of a restore cut: the job fails in one line
#            naming the CS (after the node's tries), not with a CRIU error.
# Cut points come from $RANDOM seeded with MPIV_TRUNC_SEED (default: the
# clock), printed first so a failure is reproducible (read in this shell
# only: bash seeds $RANDOM anew in every subshell). MPIV_TRUNC_CUTS="up/1=9
# down/2=70000" sets the cut of the cases named. Checkpoints are
# taken on demand (mpiv checkpoint), so each cut hits a known stream; the
# job is held (FLT_HOLD) until the cases are done. Exit 77 without CRIU.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init trunc
need_criu
# The relay reads the node's frames to tell a download from an upload,
# which a sealed connection hides: this test runs plaintext (a cut of a
# sealed stream ends it the same way, a record cut short: EBADMSG).
export MPIV_INSECURE_PLAINTEXT=1
SEED=${MPIV_TRUNC_SEED:-$(date +%s)}
echo "# seed $SEED (MPIV_TRUNC_SEED=$SEED repeats these cut points)"
RANDOM=$SEED
NCASES=${MPIV_TRUNC_CASES:-3}	# per direction
S=(--secret-file "$T/secret")
"$MPIV" secret new "$T/secret" > /dev/null || exit 1
"$B/bin/mpivcc" -O2 -o "$T/prog" tests/fault/progs/flt_ckpt.c || exit 1
ARGS=(100000 2 100)	# steps, MiB of incompressible ballast per rank, work
timeout 60 "$MPIV" run -n 2 "$T/prog" "${ARGS[@]}" > "$T/ref.out" 2> "$T/ref.err" ||
    { notok "failure-free run" "$T/ref.err"; exit 1; }

# rnd N: a random number in [0, N) in RND, N times a 30-bit fraction:
# with one seed, a cut of an image lands at the same place relative to
# its size, which varies by a few KiB from run to run. Never in $(...):
# a subshell would draw from a seed of its own.
rnd() { RND=$(( ((((RANDOM << 15) | RANDOM)) * $1) >> 30 )); }
# cut_point WHAT I SIZE: in CUT, where case I (named WHAT, e.g. up/1)
# cuts a stream of about SIZE bytes. Case 1 cuts within the first 4 KiB
# (frame headers, the metadata, the first chunk's start); case 2 in the
# second half, after whole ImageData frames (256 KiB each; the old
# download bug needed that); the others anywhere, past the end included
# (then the relay cuts inside ImageEnd). A number is drawn even when
# MPIV_TRUNC_CUTS sets the cut, so the other cases keep theirs.
cut_point() {
	local kv
	case $2 in
	1) rnd 4096; CUT=$RND ;;
	2) rnd $(($3 / 2)); CUT=$(($3 / 2 + RND)) ;;
	*) rnd $(($3 + 400)); CUT=$RND ;;
	esac
	for kv in ${MPIV_TRUNC_CUTS:-}; do
		[ "${kv%%=*}" = "$1" ] && CUT=${kv#*=}
	done
}

"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 --state-dir "$T/state" \
    --log-level info > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --log-level info \
    > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
# The relay first, on a port of its own that it keeps (the CS advertises
# it); it reads the CS's address from a file at each connection.
: > "$T/plan"
python3 tests/integration/cutproxy.py 127.0.0.1:0 "@$T/cs.addr" "$T/plan" \
    "$T/proxy.log" > "$T/proxy.out" 2>&1 &
PIDS+=($!)
PA=$(listening proxy) || { notok "cutproxy start" "$T/proxy.out"; exit 1; }
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --advertise "$PA" --store "$T/store" \
    --dispatcher "$DA" --log-level info > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
CA=$(listening cs) || { notok "cs start" "$T/cs.err"; exit 1; }
echo "$CA" > "$T/cs.addr"
FLT_HOLD=$T/hold "$MPIV" node "${S[@]}" --dispatcher "$DA" --slots 3 --name n1 \
    --cache-dir "$T/cache" --log-level info 2> "$T/n.err" &
PIDS+=($!)
wait_for 15 grep -q "dispatcher cs registered addr=$PA" "$T/d.err" &&
    ok "the CS registered with the relay's address $PA (--advertise)" ||
    { notok "no CS registered as $PA" "$T/d.err"; exit 1; }
wait_for 15 grep -q 'dispatcher node registered .*name=n1 ' "$T/d.err" || { notok "the node did not register" "$T/d.err" "$T/n.err"; exit 1; }

# count FILE PATTERN: lines of FILE matching PATTERN (grep -c, 0 if none).
count() { grep -c -- "$2" "$1" 2> /dev/null || true; }
# ckpt_now R: a checkpoint of rank R on demand; its number once durable
# (the dispatcher's line) in K, 0 or 1.
K=
ckpt_now() {
	local pat="dispatcher checkpoint durable job=$JOB rank=$1 " before
	before=$(count "$T/d.err" "$pat")
	timeout 10 "$MPIV" checkpoint "${S[@]}" --dispatcher "$DA" "$JOB" "$1" \
	    > /dev/null 2>> "$T/ck.err" || return 1
	wait_for 20 eval '[ "$(count "$T/d.err" "$pat")" -gt "$before" ]' || return 1
	K=$(grep -- "$pat" "$T/d.err" | tail -n 1 | sed 's/.* ckpt=\([0-9]*\).*/\1/')
}
# rank_img R [K]: the store's current image of rank R (or checkpoint K).
rank_img() {
	local d=$T/store/$JOB/$1 k=${2:-}
	[ -n "$k" ] || k=$(cat "$d/current" 2> /dev/null) || return 1
	echo "$d/ckpt-$k.img"
}
INC=(1 1)
# kill_rank R: mpiv kill, then waits until the node restored incarnation
# INC[R]+1 of rank R or said why not; 0 once restored.
kill_rank() {
	INC[$1]=$((INC[$1] + 1))
	timeout 10 "$MPIV" kill "${S[@]}" --dispatcher "$DA" "$JOB" "$1" \
	    > /dev/null 2>> "$T/kill.err" || return 1
	wait_for 30 grep -q "node restored job=$JOB rank=$1 incarnation=${INC[$1]} \|node job=$JOB rank=$1 incarnation=${INC[$1]} restore" "$T/n.err"
	grep -q "node restored job=$JOB rank=$1 incarnation=${INC[$1]} " "$T/n.err"
}

: > "$T/hold"
timeout 120 "$MPIV" run "${S[@]}" --dispatcher "$DA" -v -n 2 "$T/prog" "${ARGS[@]}" \
    > "$T/job.out" 2> "$T/job.err" &
RUN=$!
if ! wait_for 20 grep -qs '^mpiv: dispatcher .* job ' "$T/job.err" ||
    ! wait_for 20 grep -q "job running job=" "$T/d.err"; then
	notok "the job did not start" "$T/job.err" "$T/d.err"
	exit 1
fi
JOB=$(sed -n 's/^mpiv: dispatcher .* job \([^ ]*\)$/\1/p' "$T/job.err" | head -n 1)

# gone WHAT: the job ended before case WHAT, or the script's time is
# up (then it is not run: a stuck deployment cannot stretch the test).
gone() {
	if [ "$SECONDS" -gt 70 ]; then
		notok "$1: not run, 70 s of the script's time are gone"
	elif ! kill -0 "$RUN" 2> /dev/null; then
		notok "$1: not run, the job ended: $(tail -n 1 "$T/job.err")"
	else
		return 1
	fi
}

# ---------------- downloads cut once: fetched again, restored
for i in $(seq 1 "$NCASES"); do
	r=$((i % 2))
	what="down/$i (rank $r)"
	gone "$what" && continue
	if ! ckpt_now "$r" || ! img=$(rank_img "$r" "$K") || [ ! -s "$img" ]; then
		notok "$what: no durable checkpoint of rank $r" "$T/d.err" "$T/n.err" "$T/ck.err"
		continue
	fi
	size=$(stat -c %s "$img")
	cut_point "down/$i" "$i" "$size"
	n=$CUT
	echo "# $what: checkpoint $K, image $size bytes, cut the download after $n bytes"
	echo "down $n" >> "$T/plan"
	kill_rank "$r"
	inc=${INC[$r]}
	fetch=$(grep "node restore fetch failed job=$JOB rank=$r incarnation=$inc " "$T/n.err" | head -n 1)
	if [ -z "$fetch" ]; then
		notok "$what: no failed fetch logged for incarnation $inc" "$T/n.err" "$T/proxy.log"
	elif ! echo "$fetch" | grep -q "cs=$PA try=1/3 error=\".*$PA"; then
		notok "$what: the failed fetch does not name the CS $PA: $fetch"
	else
		ok "$what: the cut fetch failed, naming the CS: ${fetch#*error=}"
	fi
	if grep -q "rank=$r incarnation=$inc .*pstree" "$T/n.err" "$T/d.err"; then
		notok "$what: a truncated image reached CRIU" "$T/n.err"
	fi
	if grep -q "node restored job=$JOB rank=$r incarnation=$inc ckpt=$K " "$T/n.err"; then
		ok "$what: rank $r restored from checkpoint $K on the next fetch"
	else
		notok "$what: rank $r not restored from checkpoint $K" "$T/n.err" "$T/d.err"
	fi
	grep -q "kind=down plan=$n cut=" "$T/proxy.log" ||
	    notok "$what: the relay cut no download at $n" "$T/proxy.log"
done

# ---------------- uploads cut: the current image stays
for i in $(seq 1 "$NCASES"); do
	r=$((i % 2))
	what="up/$i (rank $r)"
	gone "$what" && continue
	cur=$(cat "$T/store/$JOB/$r/current" 2> /dev/null)
	if [ -z "$cur" ] || ! img=$(rank_img "$r"); then
		notok "$what: rank $r has no current image" "$T/cs.err"
		continue
	fi
	sum0=$(sha256sum < "$img")
	size=$(stat -c %s "$img")
	cut_point "up/$i" "$i" "$size"
	n=$CUT
	echo "# $what: current image $cur ($size bytes), cut the next upload after $n bytes"
	echo "up $n" >> "$T/plan"
	pat="node checkpoint failed job=$JOB rank=$r "
	before=$(count "$T/n.err" "$pat")
	# what the CS and the CM log from here on (numbers repeat: a
	# restored rank counts on from its image's)
	cs0=$(($(wc -l < "$T/cs.err") + 1))
	cm0=$(($(wc -l < "$T/cm.err") + 1))
	cs_new() { tail -n +"$cs0" "$T/cs.err"; }
	timeout 10 "$MPIV" checkpoint "${S[@]}" --dispatcher "$DA" "$JOB" "$r" > /dev/null 2>> "$T/ck.err"
	if ! wait_for 20 eval '[ "$(count "$T/n.err" "$pat")" -gt "$before" ]'; then
		notok "$what: the node did not report the upload failed" "$T/n.err" "$T/cs.err" "$T/proxy.log"
		continue
	fi
	line=$(grep -- "$pat" "$T/n.err" | tail -n 1)
	k=$(echo "$line" | sed 's/.* k=\([0-9]*\) .*/\1/')
	echo "# ${line#*node }"
	abort="cs upload aborted job=$JOB rank=$r ckpt=$k "
	# Where the relay cut, and how long the ImagePut frame was: a cut
	# inside it leaves the CS a truncated frame and no upload at all.
	wait_for 5 grep -q "kind=up plan=$n cut=[0-9]" "$T/proxy.log"
	plog=$(grep "kind=up plan=$n cut=[0-9]" "$T/proxy.log" | tail -n 1)
	cut=$(echo "$plog" | sed -n 's/.* cut=\([0-9]*\) .*/\1/p')
	head=$(echo "$plog" | sed -n 's/.* head=\([0-9]*\)$/\1/p')
	if [ -z "$cut" ] || [ -z "$head" ] || [ "$head" = 0 ]; then
		notok "$what: the relay logged no cut of an upload at $n" "$T/proxy.log"
	elif [ "$cut" -ge "$head" ]; then
		if wait_for 5 eval 'cs_new | grep -q "$abort"'; then
			ok "$what: cut after $cut bytes (ImagePut is $head), the CS aborted checkpoint $k: $(cs_new | grep "$abort" | sed 's/.*reason=//' | head -n 1)"
		else
			notok "$what: cut after $cut bytes, past the $head-byte ImagePut, but no abort of checkpoint $k in the CS log" "$T/cs.err"
		fi
	else
		# as long as an abort could take to show up
		sleep 1
		if cs_new | grep -q "cs upload begins job=$JOB rank=$r ckpt=$k \|$abort"; then
			notok "$what: cut after $cut bytes, inside the $head-byte ImagePut, yet the CS began checkpoint $k" "$T/cs.err"
		else
			ok "$what: cut after $cut bytes, inside the $head-byte ImagePut: the CS saw no upload of checkpoint $k"
		fi
	fi
	now=$(cat "$T/store/$JOB/$r/current" 2> /dev/null)
	if [ "$now" = "$cur" ] && [ "$(sha256sum < "$img")" = "$sum0" ] &&
	    [ ! -e "$T/store/$JOB/$r/ckpt-$k.img" ] &&
	    [ -z "$(find "$T/store/$JOB/$r" -name 'tmp-*')" ] &&
	    ! cs_new | grep -q "cs image durable job=$JOB rank=$r " &&
	    ! tail -n +"$cm0" "$T/cm.err" | grep -q "cm log freed job=$JOB rank=$r "; then
		ok "$what: the current image is still checkpoint $cur, unchanged; no temp file left, nothing freed"
	else
		notok "$what: store after the cut: current '$now' (was $cur), $(ls "$T/store/$JOB/$r" | tr '\n' ' ')" "$T/cs.err" "$T/cm.err"
	fi
	# The good image still restores.
	if kill_rank "$r" && grep -q "node restored job=$JOB rank=$r incarnation=${INC[$r]} ckpt=$cur " "$T/n.err"; then
		ok "$what: rank $r killed, restored from checkpoint $cur"
	else
		notok "$what: rank $r not restored from checkpoint $cur" "$T/n.err" "$T/d.err"
	fi
done

rm -f "$T/hold"
wait_for 60 eval '! kill -0 "$RUN" 2> /dev/null'
wait "$RUN"
rc=$?
[ "$rc" = 0 ] && cmp -s "$T/job.out" "$T/ref.out" &&
    ok "end: output identical to the failure-free run, exit 0 ($(grep -c 'node restored' "$T/n.err") restores)" ||
    notok "end: rc $rc, output $(cmp -s "$T/job.out" "$T/ref.out" && echo same || echo different)" "$T/job.err" "$T/d.err"
leftover=$(grep -v '^$' "$T/plan")
[ -z "$leftover" ] && ok "every planned cut was used" ||
    notok "planned cuts never used: $leftover" "$T/proxy.log"

# ---------------- every fetch cut: the job fails in one clear line
what="down-every"
: > "$T/hold"
timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -v -n 2 "$T/prog" "${ARGS[@]}" \
    > "$T/job2.out" 2> "$T/job2.err" &
RUN=$!
JOB=
wait_for 20 grep -qs '^mpiv: dispatcher .* job ' "$T/job2.err" &&
    JOB=$(sed -n 's/^mpiv: dispatcher .* job \([^ ]*\)$/\1/p' "$T/job2.err" | head -n 1)
INC=(1 1)
if [ -z "$JOB" ] || ! wait_for 20 grep -q "job running job=$JOB" "$T/d.err" || ! ckpt_now 0; then
	notok "$what: no durable checkpoint in job 2" "$T/job2.err" "$T/d.err"
else
	size=$(stat -c %s "$(rank_img 0 "$K")")
	for t in 1 2 3; do
		rnd $((size + 400))
		echo "down $RND" >> "$T/plan"
	done
	echo "# $what: cuts $(grep -o '[0-9]*' "$T/plan" | tr '\n' ' ')of checkpoint $K ($size bytes)"
	kill_rank 0
fi
rm -f "$T/hold"
wait_for 30 eval '! kill -0 "$RUN" 2> /dev/null'
wait "$RUN"
rc=$?
last=$(grep -v '^mpiv: dispatcher ' "$T/job2.err" | tail -n 1)
if [ "$rc" = 1 ] && echo "$last" | grep -q "rank 0: .*$PA.* (3 tries)" &&
    ! grep -q pstree "$T/job2.err"; then
	ok "$what: exit 1, one line naming the CS: $last"
else
	notok "$what: rc $rc, last line: $last" "$T/job2.err" "$T/n.err"
fi
echo "# relay: $(grep -c 'cut=[0-9]' "$T/proxy.log") streams cut of $(wc -l < "$T/proxy.log") connections"
[ "$fail" = 0 ]
