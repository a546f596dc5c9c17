#!/usr/bin/env bash
# tests/integration/test_checkpoint.sh: checkpoints end to end
# (docs/CHECKPOINT.md) as the launcher sees them.
#
#   fake/*  a plain C program that speaks the rank side of the ctrl pipes
#           itself (ckpt-sync, go, double fork, SIGSTOP, ckpt-clone, inc)
#           without MPI: the node's drain/dump/upload, the CS, CkptTaken,
#           the report, restore (under the pid the rank was launched with),
#           exactly-once output from out_base, `mpiv checkpoint` on demand.
#   mpi/*   tests/demo/heat.c with --ckpt-interval: checkpoints taken,
#           `mpiv kill` after the first one restores from it, output
#           byte-identical to failure-free. mpi/restore-twice (flt_ckpt): rank 1
#           killed after a checkpoint, restored, takes a new checkpoint
#           as its restored incarnation (dumped again from inside its
#           pid namespace), is killed again and comes back from that
#           newer checkpoint, every time under the pid its launch had
#           (the node's own child, same pid, without pid namespaces). Skipped (reason printed)
#           while the rank/CM side of checkpoints has not landed (a run
#           with --ckpt-interval that produces no checkpoint).
#   nocriu  MPIV_CRIU=/nonexistent: one "checkpoints disabled" line,
#           restarts from the beginning, identical output.
#
# Exit 77 (skip) when CRIU does not work here. MPIV_BUILD: build dir.

cd "$(dirname "$0")/../.." || exit 2
B=${MPIV_BUILD:-build}
ROOT=$(pwd)
MPIV="$ROOT/$B/bin/mpiv"
MPIVCC="$ROOT/$B/bin/mpivcc"
CRIU=${MPIV_CRIU:-/opt/mpiv/criu/criu}
if [ ! -x "$MPIV" ]; then
	echo "$MPIV not built"
	exit 1
fi
if ! "$CRIU" check > /dev/null 2>&1; then
	echo "skip: $CRIU check fails (run deploy/install-criu.sh as root)"
	exit 77
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-ckpt.XXXXXX")
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
SKIPS=0
ok() { printf 'ok - %s\n' "$1"; }
skip() {
	SKIPS=$((SKIPS + 1))
	printf 'ok - %s # SKIP %s\n' "$1" "$2"
}
notok() {
	FAILS=$((FAILS + 1))
	printf 'not ok - %s (%s)\n' "$1" "$2"
	[ -f err ] && grep -v '^$' err | sed 's/^/#   err| /' | tail -n 15
}

wait_for() {
	local deadline=$(($(date +%s%N) / 1000000 + $1 * 1000))
	shift
	while ! "$@"; do
		[ $(($(date +%s%N) / 1000000)) -ge "$deadline" ] && return 1
		sleep 0.05
	done
	return 0
}
# A committed image in some embedded CS store under $TMPDIR.
# (store layout: <store>/<job>/<rank>/ckpt-K.img)
have_image() {
	[ -n "$(find "$TMPDIR" -path "*/$JOB/${1:-0}/ckpt-*.img" 2> /dev/null)" ]
}
jnum() { grep -o "\"$2\":[0-9]*" "$1" | head -n 1 | cut -d: -f2; }

# start_job ARGS...: mpiv run in the background (./out, ./err, ./rc),
# then DADDR and JOB from its "dispatcher" line.
start_job() {
	rm -f out err rc rep.json
	rm -rf "$TMPDIR"/mpiv-run.*
	(
		MPIV_PRINT_DISPATCHER=1 "$MPIV" run "$@" > out 2> err
		echo $? > rc
	) &
	RUNPID=$!
	if ! wait_for 20 grep -q '^mpiv: dispatcher ' err; then
		DADDR= JOB=
		return 1
	fi
	set -- $(grep -m1 '^mpiv: dispatcher ' err)
	DADDR=$3 JOB=$5
}
finish_job() {
	wait "$RUNPID"
	RUNPID=
}

# ---------------- the fake rank ----------------
cat > fake_rank.c << 'EOF'
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cfd = -1, ifd = -1;

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int
in_line(char *buf, size_t n, int timeout_ms)
{
	size_t len = 0;
	while (len + 1 < n) {
		struct pollfd p = { ifd, POLLIN, 0 };
		if (poll(&p, 1, timeout_ms) <= 0)
			return -1;
		ssize_t r = read(ifd, buf + len, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (buf[len] == '\n') {
			buf[len] = 0;
			return 0;
		}
		len++;
	}
	return -1;
}

int
main(int argc, char **argv)
{
	int n = atoi(argv[1]), ms = atoi(argv[2]);
	const char *e;
	int rank = (e = getenv("MPIV_RANK")) ? atoi(e) : 0;
	double ival = (e = getenv("MPIV_CKPT_INTERVAL")) ? atof(e) : 0, next;
	unsigned long long k = 0;
	char line[128];

	if ((e = getenv("MPIV_CTRL_FD")))
		cfd = atoi(e);
	if ((e = getenv("MPIV_CTRL_IN_FD")))
		ifd = atoi(e);
	if (ifd >= 0)
		fcntl(ifd, F_SETFL, fcntl(ifd, F_GETFL) | O_NONBLOCK);
	next = ival > 0 ? now() + ival * (0.5 + 0.1 * rank) : 1e300;
	for (int i = 0; i < n; i++) {
		int want = now() >= next, p[2], l;
		char out[64];
		pid_t mid, clone = -1;

		while (ifd >= 0 && in_line(line, sizeof(line), 0) == 0)
			want |= strcmp(line, "ckpt") == 0;
		if (want && cfd >= 0 && ifd >= 0) {
			k++;
			l = snprintf(line, sizeof(line), "ckpt-sync %llu\n", k);
			(void)!write(cfd, line, l);
			if (in_line(line, sizeof(line), 10000) < 0)
				return 3;
			(void)!pipe(p);
			if ((mid = fork()) == 0) {
				pid_t c = fork();
				if (c == 0) {
					close(p[0]);
					close(p[1]);
					setsid();
					raise(SIGSTOP);
					/* "key HEX" (its new credential),
					   then "inc n" */
					while (in_line(line, sizeof(line), 10000) == 0)
						if (strncmp(line, "key ", 4) != 0) {
							fprintf(stderr, "restored rank %d "
							    "step %d %s\n", rank, i, line);
							break;
						}
					goto go_on;
				}
				(void)!write(p[1], &c, sizeof(c));
				_exit(0);
			}
			close(p[1]);
			(void)!read(p[0], &clone, sizeof(clone));
			close(p[0]);
			waitpid(mid, NULL, 0);
			l = snprintf(line, sizeof(line), "ckpt-clone %llu %d %d "
			    "0 0\n", k, (int)clone, i);
			(void)!write(cfd, line, l);
go_on:
			next = ival > 0 ? now() + ival : 1e300;
		}
		l = snprintf(out, sizeof(out), "rank %d step %d\n", rank, i);
		(void)!write(1, out, l);
		usleep(ms * 1000);
	}
	return 0;
}
EOF
if ! cc -O1 -o fake_rank fake_rank.c 2> cc.err; then
	echo "not ok - fake/build (cc failed)"
	sed 's/^/#   /' cc.err
	exit 1
fi
# The failure-free output, per rank (ranks interleave).
expect_fake() {
	for r in $(seq 0 $(($1 - 1))); do
		for i in $(seq 0 $(($2 - 1))); do
			echo "rank $r step $i"
		done
	done | sort
}
expect_fake 2 60 > fake_ref

# fake/periodic: checkpoints taken, counted, output intact.
start_job -n 2 --ckpt-interval 0.4 --report rep.json ./fake_rank 60 30
finish_job
if [ "$(cat rc)" != 0 ]; then
	notok fake/periodic "exit $(cat rc)"
elif ! sort out | cmp -s - fake_ref; then
	notok fake/periodic "output differs"
elif [ "$(jnum rep.json checkpoints)" -lt 2 ] 2> /dev/null ||
    ! grep -q '"mode":"checkpoint"' rep.json; then
	notok fake/periodic "report: $(cat rep.json)"
else
	ok fake/periodic
fi

# fake/kill-restore: killed after its first checkpoint, rank 0 comes back
# from it (under the pid it was launched with), prints
# nothing twice, nothing lost.
start_job -n 2 --ckpt-interval 0.4 --report rep.json ./fake_rank 60 30
if ! wait_for 15 have_image; then
	notok fake/kill-restore "no image appeared"
else
	sleep 0.3
	"$MPIV" kill --dispatcher "$DADDR" "$JOB" 0 > /dev/null 2>> err
fi
finish_job
from=$(grep -o '"from_ckpt":[0-9]*' rep.json 2> /dev/null | head -n 1 |
    cut -d: -f2)
if [ "$(cat rc)" != 0 ]; then
	notok fake/kill-restore "exit $(cat rc)"
elif ! sort out | cmp -s - fake_ref; then
	notok fake/kill-restore "output differs"
elif [ -z "$from" ] || [ "$from" -lt 1 ]; then
	notok fake/kill-restore "no restart from a checkpoint: $(cat rep.json)"
elif ! grep -q '^restored rank 0 .* inc 2$' err; then
	notok fake/kill-restore "the restored clone did not read 'inc 2'"
elif ! grep -Eq '^mpiv: 1 kill, 1 restart, .*, 1 from a checkpoint$' err; then
	notok fake/kill-restore "no summary line"
else
	ok fake/kill-restore
fi

# fake/on-demand: no interval; mpiv checkpoint makes one of rank 1.
start_job -n 2 --report rep.json ./fake_rank 60 30
sleep 0.5
if ! "$MPIV" checkpoint --dispatcher "$DADDR" "$JOB" 1 > ck.out 2>> err; then
	notok fake/on-demand "mpiv checkpoint failed"
	finish_job
else
	finish_job
	if [ "$(cat rc)" != 0 ] || ! sort out | cmp -s - fake_ref; then
		notok fake/on-demand "exit $(cat rc) or output differs"
	elif ! grep -q '"rank":1,"incarnations":1,"restarts":0,"checkpoints":1' \
	    rep.json; then
		notok fake/on-demand "report: $(cat rep.json)"
	else
		ok fake/on-demand
	fi
fi

# checkpoint/usage: bad requests are refused clearly.
if "$MPIV" checkpoint > /dev/null 2> u.err; [ $? -ne 2 ]; then
	notok checkpoint/usage "no usage error without --dispatcher"
else
	ok checkpoint/usage
fi

# ---------------- MPI ----------------
HEAT="$W/heat" FCK="$W/flt_ckpt"
# restore-twice runs tests/fault/progs/flt_ckpt (12000 steps, 1 MiB of
# ballast a rank: a few seconds) held by FLT_HOLD until its second kill,
# so it neither ends before it on a fast machine nor runs long after.
FCK_ARGS=(12000 1 2000)
if ! "$MPIVCC" -O2 -o "$HEAT" "$ROOT/tests/demo/heat.c" 2> cc.err ||
    ! "$MPIVCC" -O2 -o "$FCK" "$ROOT/tests/fault/progs/flt_ckpt.c" 2>> cc.err; then
	notok mpi/build "mpivcc heat.c or flt_ckpt.c failed"
else
	# Each case in both protocols, heat's steps scaled to about the same
	# wall time, about 3 s (a direct job's messages are faster).
	for PROTO in direct relay; do
		MPI_SKIP=
		if [ "$PROTO" = direct ]; then S1=50000; else S1=20000; fi
		"$MPIV" run --protocol "$PROTO" -n 4 "$HEAT" "$S1" > heat_ref 2> /dev/null
		start_job --protocol "$PROTO" -n 4 --ckpt-interval 0.5 --report rep.json "$HEAT" "$S1"
		finish_job
		n=$(jnum rep.json checkpoints)
		if [ "$(cat rc)" = 0 ] && [ "${n:-0}" = 0 ]; then
			skip mpi/$PROTO/periodic "no checkpoint taken: the rank/CM side of\
 checkpoints has not landed"
			MPI_SKIP=1
		elif [ "$(cat rc)" != 0 ] || ! cmp -s out heat_ref; then
			if [ "${n:-0}" = 0 ]; then
				skip mpi/$PROTO/periodic "no checkpoint taken (exit $(cat rc)):\
 the rank/CM side of checkpoints has not landed"
				MPI_SKIP=1
			else
				notok mpi/$PROTO/periodic "exit $(cat rc) or output differs"
			fi
		else
			ok mpi/$PROTO/periodic
		fi
		if [ -z "${MPI_SKIP:-}" ]; then
			start_job --protocol "$PROTO" -n 4 --ckpt-interval 0.5 --report rep.json "$HEAT" \
			    "$S1"
			if wait_for 20 have_image 1; then
				sleep 0.2
				"$MPIV" kill --dispatcher "$DADDR" "$JOB" 1 > /dev/null \
				    2>> err
			fi
			finish_job
			from=$(grep -o '"from_ckpt":[0-9]*' rep.json 2> /dev/null |
			    head -n 1 | cut -d: -f2)
			if [ "$(cat rc)" != 0 ] || ! cmp -s out heat_ref; then
				notok mpi/$PROTO/kill-restore "exit $(cat rc) or output differs"
			elif [ -z "$from" ] || [ "$from" -lt 1 ]; then
				notok mpi/$PROTO/kill-restore "not from a checkpoint:\
 $(cat rep.json)"
			else
				ok mpi/$PROTO/kill-restore
			fi
			start_job --protocol "$PROTO" -n 4 --report rep.json "$HEAT" "$S1"
			sleep 0.5
			"$MPIV" checkpoint --dispatcher "$DADDR" "$JOB" > /dev/null \
			    2>> err
			finish_job
			n=$(jnum rep.json checkpoints)
			if [ "$(cat rc)" != 0 ] || ! cmp -s out heat_ref ||
			    [ "${n:-0}" -lt 1 ]; then
				notok mpi/$PROTO/on-demand "exit $(cat rc), $n checkpoints"
			else
				ok mpi/$PROTO/on-demand
			fi
		fi

		# mpi/$PROTO/restore-twice: a restored rank checkpoints again and is
		# restored from that newer checkpoint (daemons log at info into err).
		if [ -z "${MPI_SKIP:-}" ]; then
			"$MPIV" run --protocol "$PROTO" -n 4 "$FCK" "${FCK_ARGS[@]}" > fck_ref 2> /dev/null
			# durable_after LINE INC: the number of the first rank-1 image
			# stored by incarnation INC after line LINE of err that the
			# dispatcher took as durable too.
			durable_after() {
				local k
				for k in $(tail -n +"$1" err | sed -n "s/.*cs image durable\
 job=$JOB rank=1 ckpt=\([0-9]*\) incarnation=$2 .*/\1/p"); do
					if grep -q "dispatcher checkpoint durable job=$JOB\
 rank=1 ckpt=$k " err; then
						echo "$k"
						return 0
					fi
				done
				return 1
			}
			restored_line() {
				grep -n "node restored job=$JOB rank=1 incarnation=$1 " \
				    err | head -n 1
			}
			have_durable() { [ -n "$(durable_after "$1" "$2")" ]; }
			have_restored() { [ -n "$(restored_line "$1")" ]; }
			why= f1= k2=
			touch "$W/hold"
			FLT_HOLD=$W/hold MPIV_LOG=info start_job --protocol "$PROTO" -n 4 \
			    --ckpt-interval 0.5 --report rep.json "$FCK" "${FCK_ARGS[@]}"
			if ! wait_for 20 have_durable 1 1; then
				why="no first checkpoint of rank 1"
			else
				sleep 0.2
				"$MPIV" kill --dispatcher "$DADDR" "$JOB" 1 > /dev/null \
				    2>> err
				if ! wait_for 20 have_restored 2; then
					why="rank 1 not restored after the first kill"
				fi
			fi
			if [ -z "$why" ]; then
				l2=$(restored_line 2 | cut -d: -f1)
				f1=$(restored_line 2 | sed 's/.* ckpt=\([0-9]*\) .*/\1/')
				if ! wait_for 20 have_durable "$l2" 2; then
					why="the restored rank 1 took no checkpoint:\
 $(grep -m1 'checkpoint failed job=.* rank=1 ' err)"
				else
					k2=$(durable_after "$l2" 2)
					sleep 0.2
					"$MPIV" kill --dispatcher "$DADDR" "$JOB" 1 \
					    > /dev/null 2>> err
				fi
			fi
			# held until the second restore (or a failure)
			[ -n "$why" ] || wait_for 20 have_restored 3
			rm -f "$W/hold"
			finish_job
			gp=$(sed -n "s/.*node launched job=$JOB rank=1 incarnation=1 .*\
 getpid=\([0-9]*\).*/\1/p" err | head -n 1)
			rl=$(grep -o '"rank":1,"incarnation":[0-9]*,[^}]*"from_ckpt":[0-9]*' \
			    rep.json 2> /dev/null | sed 's/.*"from_ckpt"://' | tr '\n' ' ')
			set -- $rl
			if [ -n "$why" ]; then
				notok mpi/$PROTO/restore-twice "$why"
			elif [ "$(cat rc)" != 0 ] || ! cmp -s out fck_ref; then
				notok mpi/$PROTO/restore-twice "exit $(cat rc) or output differs"
			elif [ $# -ne 2 ] || [ "$1" -lt 1 ] || [ "$2" -le "$1" ] ||
			    [ "$2" -lt "$k2" ] || [ "$1" != "$f1" ]; then
				notok mpi/$PROTO/restore-twice "from_ckpt of rank 1's restarts:\
 '$rl' (first restore from $f1, new checkpoint $k2): $(cat rep.json)"
			elif ! have_restored 3; then
				notok mpi/$PROTO/restore-twice "no second restore of rank 1"
			elif grep -q 'node pid namespaces ok' err &&
			    { [ -z "$gp" ] ||
			    ! restored_line 2 | grep -q " getpid=$gp " ||
			    ! restored_line 3 | grep -q " getpid=$gp "; }; then
				notok mpi/$PROTO/restore-twice "not restored under the pid of\
 its launch ($gp): $(restored_line 2) $(restored_line 3)"
			elif ! grep -q 'node pid namespaces ok' err &&
			    { ! restored_line 2 | grep -Eq ' pid=([0-9]+) handle=\1 ' ||
			    ! restored_line 3 | grep -Eq ' pid=([0-9]+) handle=\1 '; }; then
				notok mpi/$PROTO/restore-twice "not restored as the node's own\
 child: $(restored_line 2) $(restored_line 3)"
			elif grep -q "pid namespace without the process init" err; then
				notok mpi/$PROTO/restore-twice "a dump hit the pid namespace"
			else
				echo "# rank 1 restored from checkpoint $1, then from $2"
				ok mpi/$PROTO/restore-twice
			fi
		fi

		# nocriu: CRIU unavailable; one line, full replay, same output.
		export MPIV_CRIU=/nonexistent
		start_job --protocol "$PROTO" -n 4 --ckpt-interval 0.5 --report rep.json "$HEAT" "$S1"
		sleep 0.5
		"$MPIV" kill --dispatcher "$DADDR" "$JOB" 2 > /dev/null 2>> err
		finish_job
		unset MPIV_CRIU
		from=$(grep -o '"from_ckpt":[0-9]*' rep.json 2> /dev/null | head -n 1 |
		    cut -d: -f2)
		if [ "$(grep -c 'checkpoints disabled' err)" != 1 ] ||
		    ! grep -q '^mpiv: checkpoints disabled: .*; restarts replay from the beginning$' err; then
			notok nocriu/$PROTO "not exactly one 'checkpoints disabled' line"
		elif [ "$(cat rc)" != 0 ] || ! cmp -s out heat_ref; then
			notok nocriu/$PROTO "exit $(cat rc) or output differs"
		elif [ "${from:-x}" != 0 ] || ! grep -q '"mode":"logging"' rep.json; then
			notok nocriu/$PROTO "report: $(cat rep.json)"
		else
			ok nocriu/$PROTO
		fi
	done
fi

[ "$FAILS" -eq 0 ]
