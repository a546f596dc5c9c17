#!/usr/bin/env bash
# tests/integration/test_stdin.sh: `mpiv run` gives its stdin to the ranks
# as mpirun does (docs/ENVIRONMENT.md, "Standard input"), and a rank that
# reads it reads the same bytes from the same place in every incarnation.
# The program is tests/integration/stdin_sum.c.
#
#   root          numbers piped in: rank 0 reads them (scanf), broadcasts,
#                 the sum and hash are the ones computed here; the other
#                 ranks see an empty stdin
#   who/*         --stdin all, none, 2 (and the default): who got how many
#                 bytes; /dev/null and a closed stdin: nobody gets any;
#                 a terminal (python's pty) without --stdin: nobody, and
#                 mpiv run does not wait for it
#   slow          a pipe silent for 6 s: one line says what mpiv run waits
#                 for, then the job runs with what came
#   usage/*       --stdin 3 with -n 3, --stdin x: exit 2, one clear line;
#                 over 64 MiB: exit 1, says so
#   big           3 MB of random bytes read with read(2) in 4 KiB pieces:
#                 size and hash equal what is computed here
#   kill/PROTO    relay and direct: --chaos kills (restarts from the
#                 beginning) while rank 0 reads: output equal to the
#                 failure-free run's
#   ckpt/PROTO/S  relay and direct, with --ckpt-interval and a restart on
#                 another node agent (MPIV_RELAUNCH_ELSEWHERE): rank 0 is
#                 restored from checkpoints taken while it reads; same
#                 output, no restore failed, and some restore of rank 0 came
#                 from a checkpoint (CRIU needed, else skipped)
#   refetch       the node's cached copy of the stdin is removed, then rank
#                 0 is killed after a durable checkpoint: the node fetches
#                 the stdin again and the restore reads on from where the
#                 image was, same output (CRIU needed)
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init stdin
"$B/bin/mpivcc" -O2 -o "$T/ss" tests/integration/stdin_sum.c || exit 1
cd "$T" || exit 2
RUN=(timeout -k 5 120 "$MPIV" run --timeout 100)

criu_ok=1
timeout 60 "${MPIV_CRIU:-/opt/mpiv/criu/criu}" check > /dev/null 2>&1 || criu_ok=0

# fnv FILE: the FNV-1a hash stdin_sum's chunks mode prints
fnv() {
	python3 -c '
import sys
h = 1469598103934665603
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 1099511628211) & (2**64 - 1)
print("%016x" % h)' "$1"
}

# --- root: scanf on rank 0, broadcast
seq 1 60 > in60
"${RUN[@]}" -n 3 ./ss root < in60 > out 2> err
rc=$?
# sum: each number times 1+2+3; the hash as stdin_sum folds it
want=$(python3 -c '
h = 0
M = 2**64 - 1
for v in range(1, 61):
    h ^= (v + 0x9e3779b97f4a7c15 + ((h << 6) & M) + (h >> 2)) & M
    h = (h * 0xff51afd7ed558ccd) & M
print("count 60 sum %d hash %016x" % (1830 * 6, h))')
want_root=$want
if [ $rc = 0 ] && [ "$(cat out)" = "$want" ]; then
	ok "root: rank 0 read 60 numbers from the pipe: $want"
else
	notok "root: exit $rc, want \"$want\"" out err
fi

# --- who got what
who() {	# who NAME EXPECTED_BYTES_PER_RANK MPIV_RUN_ARGS... (stdin given)
	local name=$1 want=$2 got
	shift 2
	"${RUN[@]}" -n 3 "$@" ./ss who > out 2> err
	got=$(sed -n 's/^rank \([0-9]\): \([0-9]*\) bytes$/\2/p' out | tr '\n' ' ')
	if [ "$got" = "$want" ]; then
		ok "who/$name: $got"
	else
		notok "who/$name: bytes per rank \"$got\", want \"$want\"" out err
	fi
}
who default "171 0 0 " < in60
who all "171 171 171 " --stdin all < in60
who none "0 0 0 " --stdin none < in60
who rank2 "0 0 171 " --stdin 2 < in60
who devnull "0 0 0 " < /dev/null
who closed "0 0 0 " <&-
who closed-all "0 0 0 " --stdin all <&-
if python3 -c 'import pty' 2> /dev/null; then
	# pty.spawn: mpiv run's stdin is a terminal (nobody types in it)
	timeout -k 5 60 python3 -c 'import pty, sys; pty.spawn(sys.argv[1:])' \
	    "$MPIV" run --timeout 50 -n 2 ./ss who < /dev/null > out 2>&1
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c ' 0 bytes' out)" = 2 ]; then
		ok "who/tty: a terminal without --stdin: no rank reads it"
	else
		notok "who/tty: exit $rc" out
	fi
fi

# a pipe that stays open: mpiv run says what it waits for, then runs
(sleep 6; echo 5) | "${RUN[@]}" -n 2 ./ss root > out 2> err
rc=$?
if [ $rc = 0 ] && grep -q '^count 1 sum 15 ' out &&
    [ "$(cat err)" = "mpiv: waiting for the end of stdin to give it to rank 0 (--stdin none if the program does not read it)" ]; then
	ok "slow: a pipe silent for 5 s: one line says why we wait, then the job runs"
else
	notok "slow: exit $rc" out err
fi

# --- usage errors
"${RUN[@]}" -n 3 --stdin 3 ./ss who < in60 > out 2> err
rc=$?
if [ $rc = 2 ] && grep -q '^mpiv run: --stdin 3: the job has 3 ranks (0..2)$' err; then
	ok "usage/rank: --stdin 3 with -n 3: exit 2, names the ranks"
else
	notok "usage/rank: exit $rc" err
fi
"${RUN[@]}" -n 3 --stdin x ./ss who < in60 > out 2> err
rc=$?
if [ $rc = 2 ] && grep -q '^mpiv run: bad --stdin "x" (a rank, all or none)$' err; then
	ok "usage/bad: --stdin x: exit 2"
else
	notok "usage/bad: exit $rc" err
fi
head -c $((64 * 1048576 + 1)) /dev/zero | "${RUN[@]}" -n 1 ./ss who > out 2> err
rc=$?
if [ $rc = 1 ] && grep -q '^mpiv: stdin is over 64 MiB' err && [ ! -s out ]; then
	ok "usage/toobig: 64 MiB + 1 byte of stdin: exit 1, says so"
else
	notok "usage/toobig: exit $rc" err out
fi

# --- big: 3 MB read in 4 KiB pieces
head -c 3000000 /dev/urandom > big
want="bytes 3000000 hash $(fnv big)"
"${RUN[@]}" -n 2 ./ss chunks < big > ref.big 2> err
rc=$?
if [ $rc = 0 ] && [ "$(cat ref.big)" = "$want" ]; then
	ok "big: 3 MB through stdin, size and hash right"
else
	notok "big: exit $rc, want \"$want\"" ref.big err
fi

# --- kills: restarts from the beginning (no checkpoints)
for proto in relay direct; do
	"${RUN[@]}" -n 3 --protocol "$proto" --chaos 400ms --chaos-max 4 \
	    --chaos-seed 4 --report r.json ./ss root 20000 2 < in60 > out 2> err
	rc=$?
	kills=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kills"])' r.json 2> /dev/null)
	if [ $rc = 0 ] && [ "$(cat out)" = "$want_root" ] && [ "${kills:-0}" -gt 0 ]; then
		ok "kill/$proto: $kills kills while rank 0 reads, same output"
	else
		notok "kill/$proto: exit $rc, kills ${kills:-?}" out err
	fi
done

# --- checkpoints: rank 0 restored, elsewhere, while it reads 4 KiB pieces
if [ $criu_ok = 0 ]; then
	echo "# ckpt/* and refetch skipped: CRIU does not work here"
	[ "$fail" = 0 ]
	exit
fi
for proto in relay direct; do
	from=0
	for seed in 1 2; do
		MPIV_RELAUNCH_ELSEWHERE=1 "${RUN[@]}" -n 2 --nodes 4 --protocol "$proto" \
		    --ckpt-interval 0.2 --chaos 700ms --chaos-max 3 --chaos-seed "$seed" \
		    --log-level info ./ss chunks 3000 < big > out 2> err
		rc=$?
		n=$(grep -cE 'node restored job=[0-9]+ rank=0 ' err)
		from=$((from + n))
		if [ $rc = 0 ] && cmp -s out ref.big && ! grep -q 'restore failed' err; then
			ok "ckpt/$proto/$seed: same output ($n restore(s) of rank 0 from a checkpoint)"
		else
			notok "ckpt/$proto/$seed: exit $rc, output $(cmp -s out ref.big && echo same || echo different)" out err
		fi
	done
	[ "$from" -gt 0 ] && ok "ckpt/$proto: rank 0 restored from a checkpoint $from time(s)" ||
	    notok "ckpt/$proto: rank 0 never restored from a checkpoint: this tested nothing"
done

# --- refetch: the node's copy is gone when rank 0 is restored
head -c 1500000 /dev/urandom > fresh	# a hash no cache has yet
want="bytes 1500000 hash $(fnv fresh)"
hash=$(sha256sum fresh | cut -d' ' -f1)
rm -f rf.out rf.err	# not an older file, while the job starts
"${RUN[@]}" -n 2 --nodes 2 --ckpt-interval 0.2 --log-level info -v \
    ./ss chunks 4000 < fresh > rf.out 2> rf.err &
job=$!
PIDS+=("$job")
if ! wait_for 30 grep -qsE 'dispatcher checkpoint durable job=[0-9]+ rank=0 ' rf.err ||
    ! wait_for 10 grep -qs 'node stdin cached hash=' rf.err ||
    ! wait_for 10 grep -qs '^mpiv: dispatcher ' rf.err; then
	notok "refetch: no durable checkpoint of rank 0, no cached stdin or no job line" rf.err
else
	cached=$(sed -n 's/.*node stdin cached hash=[0-9a-f]* size=[0-9]* path=\(.*\)$/\1/p' rf.err | head -n 1)
	addr=$(sed -n 's/^mpiv: dispatcher \([^ ]*\) job \([0-9]*\)$/\1 \2/p' rf.err | head -n 1)
	if [ -n "$cached" ] && [ "${cached%/stdin}" != "$cached" ] &&
	    [ "$(basename "$(dirname "$cached")")" = "$hash" ] && rm -f "$cached" &&
	    "$MPIV" kill --dispatcher ${addr% *} ${addr#* } 0 > kill.out 2>&1; then
		:
	else
		notok "refetch: cannot remove \"$cached\" or kill rank 0 of \"$addr\"" rf.err kill.out
	fi
fi
wait "$job"
rc=$?
fetches=$(grep -c "node fetching stdin hash=${hash:0:16}" rf.err)
if [ $rc = 0 ] && [ "$(cat rf.out)" = "$want" ] && [ "$fetches" -ge 2 ] &&
    grep -qE 'node restored job=[0-9]+ rank=0 ' rf.err && ! grep -q 'restore failed' rf.err; then
	ok "refetch: fetched again ($fetches fetches), rank 0 restored from a checkpoint, same output"
else
	notok "refetch: exit $rc, $fetches fetch(es), output \"$(cat rf.out)\" want \"$want\""
	grep -E 'restore|relaunch|stdin|kill' rf.err | tail -n 12 | sed 's/^/#   /'
fi
[ "$fail" = 0 ]
