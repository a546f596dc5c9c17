#!/usr/bin/env bash
# tests/integration/test_files.sh: where MPI-IO files go and who may
# write them (README "Files through MPI-IO", docs/CONTRACTS.md "Files").
#   - mpiv run (embedded CMs, --files any): a relative path lands in mpiv
#     run's working directory, an absolute one where it says; both
#     protocols; the journal is gone once the job ended
#   - a standalone deployment whose CM was started without --files: the
#     job's MPI_File_open fails with "serves no files" (exit 3 of the
#     program, which checks), no file is made
#   - the CM started again with --files DIR: a path beneath DIR is
#     written; one outside it, and a symlink beneath DIR that leads out,
#     fail with MPI_ERR_ACCESS and write nothing
#   - mpiv cm --files with a relative directory: usage error, exit 2
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init files

"$B/bin/mpivcc" -O1 -o "$T/fileprobe" tests/integration/fileprobe.c ||
    { echo "not ok - mpivcc"; exit 1; }

# ---- embedded ----
mkdir -p "$T/wd" "$T/jr"
for proto in direct relay; do
	rm -f "$T/wd/rel.txt" "$T/abs-$proto.txt"
	(cd "$T/wd" && timeout 60 "$MPIV" run --protocol "$proto" -n 2 "$T/fileprobe" rel.txt "rel $proto" \
	    > "$T/e.out" 2> "$T/e.err")
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/wd/rel.txt" 2>/dev/null)" = "rel $proto" ]; then
		ok "$proto: a relative path is written in mpiv run's directory"
	else
		notok "$proto: relative path (exit $rc)" "$T/e.out" "$T/e.err"
	fi
	(cd / && timeout 60 "$MPIV" run --protocol "$proto" -n 2 "$T/fileprobe" "$T/abs-$proto.txt" \
	    > "$T/e.out" 2> "$T/e.err")
	rc=$?
	if [ "$rc" = 0 ] && [ "$(cat "$T/abs-$proto.txt" 2>/dev/null)" = hello ]; then
		ok "$proto: an absolute path is written where it says"
	else
		notok "$proto: absolute path (exit $rc)" "$T/e.out" "$T/e.err"
	fi
done

# ---- a standalone deployment ----
"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")
"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$DA" --slots 4 \
    "${NODE_USER[@]}" --cache-dir "$T/cache" > /dev/null 2> "$T/node.err" &
PIDS+=($!)
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/csstore" \
    > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)

# start_cm NAME ARGS...: a CM registered with the dispatcher
start_cm() {
	local name=$1
	shift
	"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" "$@" \
	    > "$T/$name.out" 2> "$T/$name.err" &
	CM_PID=$!
	PIDS+=($CM_PID)
	listening "$name" > /dev/null || { notok "$name start" "$T/$name.err"; exit 1; }
}
# class_of NAME: the value of an MPI error class in this build's mpi.h
class_of() { sed -n "s/^#define $1[[:space:]]*\([0-9]*\).*/\1/p" libmpi-lite/mpi.h; }
# probe PATH: runs fileprobe on the deployment; exit code in rc
probe() {
	timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" ${PROBE_ENV:+--env "$PROBE_ENV"} \
	    -n 2 "$T/fileprobe" "$1" \
	    > "$T/p.out" 2> "$T/p.err"
	rc=$?
}

start_cm cm1
probe "$T/off.txt"
if [ "$rc" = 3 ] && grep -q "MPI_File_open: .*(class $(class_of MPI_ERR_UNSUPPORTED_OPERATION))" "$T/p.out" &&
    [ ! -e "$T/off.txt" ]; then
	ok "a CM without --files: MPI_File_open returns MPI_ERR_UNSUPPORTED_OPERATION, no file made"
else
	notok "CM without --files (exit $rc)" "$T/p.out" "$T/p.err"
fi
PROBE_ENV=FILEPROBE_FATAL=1 probe "$T/off.txt"
if [ "$rc" != 0 ] && grep -q "serves no files (mpiv cm --files)" "$T/p.err"; then
	ok "a CM without --files, errors fatal: the job ends saying the CM serves no files"
else
	notok "CM without --files, fatal (exit $rc)" "$T/p.out" "$T/p.err"
fi
kill "$CM_PID"
wait "$CM_PID" 2> /dev/null

mkdir -p "$T/allowed/sub" "$T/outside"
ln -s "$T/outside" "$T/allowed/escape"
start_cm cm2 --files "$T/allowed" --files-journal "$T/jr"
probe "$T/allowed/sub/in.txt"
if [ "$rc" = 0 ] && [ "$(cat "$T/allowed/sub/in.txt" 2>/dev/null)" = hello ]; then
	ok "--files DIR: a path beneath DIR is written"
else
	notok "--files DIR: beneath (exit $rc)" "$T/p.out" "$T/p.err"
fi
for bad in "$T/outside/x.txt" "$T/allowed/escape/y.txt" "$T/allowed/../outside/z.txt"; do
	probe "$bad"
	if [ "$rc" = 3 ] && grep -q "MPI_File_open: .*(class $(class_of MPI_ERR_ACCESS))" "$T/p.out" &&
	    [ -z "$(ls "$T/outside")" ]; then
		ok "--files DIR: ${bad#"$T"/} refused with MPI_ERR_ACCESS"
	else
		notok "--files DIR: ${bad#"$T"/} (exit $rc)" "$T/p.out" "$T/p.err"
	fi
done
if [ -z "$(ls -A "$T/jr")" ]; then
	ok "the journal of ended jobs is gone"
else
	notok "journal left: $(ls "$T/jr")"
fi

timeout 10 "$MPIV" cm --files relative/dir --listen 127.0.0.1:0 > /dev/null 2> "$T/bad.err"
rc=$?
if [ "$rc" = 2 ] && grep -q 'bad --files' "$T/bad.err"; then
	ok "mpiv cm --files relative/dir: usage error"
else
	notok "--files relative (exit $rc)" "$T/bad.err"
fi
[ "$fail" = 0 ]
