#!/usr/bin/env bash
# tests/integration/test_cluster_ssh.sh: deploy/mpiv-cluster.sh on loopback
# through a fake ssh (drops the host, runs the command here): start a
# dispatcher, a CM, a CS and two node agents, run app_ring with 4 ranks on
# them (stdout must equal the embedded run's), check status, stop, and
# check that no daemon the script started is left. When every daemon and
# mpiv run know --secret-file, the deployment also uses a shared secret
# (copied with mode 0600).
#
#   MPIV_BUILD  build dir (default build)
#
# Prints "ok - NAME" / "not ok - NAME"; exits non-zero on any failure.

set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
B=${MPIV_BUILD:-build}
MPIV=$ROOT/$B/bin/mpiv
APP=$ROOT/$B/tests/mpi/app_ring
CLUSTER=$ROOT/deploy/mpiv-cluster.sh
for f in "$MPIV" "$APP"; do
	[ -x "$f" ] || { echo "$f not built"; exit 1; }
done

W=$(mktemp -d "${TMPDIR:-/tmp}/mpiv-cluster.XXXXXX")
STATE=$W/state
FAILS=0
CL=()

ok() { printf 'ok - %s\n' "$1"; }
notok() {
	FAILS=$((FAILS + 1))
	printf 'not ok - %s (%s)\n' "$1" "$2"
	shift 2
	local f
	for f in "$@"; do
		[ -f "$f" ] && tail -n 15 "$f" | sed "s/^/#   ${f##*/}| /"
	done
}
show_logs() {
	local f
	for f in "$STATE"/*.log; do
		[ -f "$f" ] && { echo "# --- $f"; tail -n 10 "$f" | sed 's/^/#   /'; }
	done
}
# pids of the daemons (from their pid files), and of any process still
# talking to our dispatcher port
our_pids() {
	cat "$STATE"/*.pid 2> /dev/null
	[ -n "${DP:-}" ] && pgrep -f -- "127.0.0.1:$DP( |\$)" 2> /dev/null
}
cleanup() {
	if [ ${#CL[@]} -gt 0 ]; then
		timeout -k 2 20 "${CL[@]}" stop "$W/hosts" > /dev/null 2>&1
	fi
	local p
	for p in $(our_pids); do
		kill -KILL "$p" 2> /dev/null
	done
	rm -rf "$W"
}
trap cleanup EXIT

# The fake ssh: skips ssh options, drops the host, runs the command with
# sh here (as sshd hands it to the login shell).
cat > "$W/fake-ssh" << 'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "fake-ssh: want HOST COMMAND" >&2; exit 255; }
shift
exec sh -c "$*"
EOF
chmod +x "$W/fake-ssh"

# three free loopback ports in a row (nothing accepts on them), below
# the kernel's ephemeral range (from 32768): a port there can be taken
# by any outgoing connection between this check and the daemon's bind
port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
DP=
for try in 1 2 3 4 5 6 7 8 9 10; do
	base=$((20000 + (RANDOM % 1200) * 10))
	free=1
	for p in 0 1 2; do
		port_free $((base + p)) || { free=0; break; }
	done
	[ $free = 1 ] && { DP=$base; break; }
done
[ -n "$DP" ] || { echo "no free loopback ports found"; exit 1; }

cat > "$W/hosts" << EOF
# test deployment: everything on loopback
dispatcher 127.0.0.1        # the dispatcher
cm  127.0.0.1
cs  127.0.0.1 $STATE/store
node 127.0.0.1 slots=2
node 127.0.0.1 slots=2
EOF

CL=(timeout -k 5 60 "$CLUSTER" --ssh "$W/fake-ssh" --mpiv "$MPIV" --state-dir "$STATE"
	--bind 127.0.0.1 --dispatcher-port "$DP" --cm-port $((DP + 1)) --cs-port $((DP + 2))
	--wait 20)
RUN_SECRET=()
secret_ok=1
for c in dispatcher cm cs node run; do
	"$MPIV" $c -h 2>&1 | grep -q -- --secret-file || secret_ok=0
done
if [ $secret_ok = 1 ]; then
	if ! "$MPIV" secret new "$W/secret" > /dev/null 2>&1; then
		(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$W/secret")
	fi
	CL+=(--secret-file "$W/secret")
	RUN_SECRET=(--secret-file "$W/secret")
	echo "# with a shared secret"
else
	echo "# without a shared secret: not every mpiv command has --secret-file yet"
fi

# the reference: the embedded run
timeout -k 5 60 "$MPIV" run -n 4 --timeout 50 "$APP" > "$W/ref" 2> "$W/ref.err"
rc=$?
if [ $rc -ne 0 ]; then
	notok "embedded reference run" "exit $rc" "$W/ref.err"
	exit 1
fi

# usage errors are clear
"$CLUSTER" start > "$W/u.out" 2>&1
if [ $? -eq 2 ] && grep -q usage "$W/u.out"; then ok "usage error"; else notok "usage error" "no usage line or exit != 2" "$W/u.out"; fi
printf 'dispatcher h\nbogus h\n' > "$W/bad"
"$CLUSTER" --ssh false status "$W/bad" > "$W/b.out" 2>&1
if [ $? -eq 2 ] && grep -q "bad:2: unknown role 'bogus'" "$W/b.out"; then ok "bad host list"; else notok "bad host list" "want a line-numbered error" "$W/b.out"; fi

if "${CL[@]}" start "$W/hosts" > "$W/start.out" 2>&1; then
	ok "start"
else
	notok "start" "exit $?" "$W/start.out"
	show_logs
	exit 1
fi
n=$(ls "$STATE"/*.pid 2> /dev/null | wc -l)
[ "$n" -eq 5 ] && ok "five pid files" || notok "five pid files" "found $n" "$W/start.out"
if [ $secret_ok = 1 ]; then
	m=$(stat -c %a "$STATE/secret" 2> /dev/null)
	if [ "$m" = 600 ] && cmp -s "$W/secret" "$STATE/secret"; then ok "secret copied, mode 0600"; else notok "secret copied, mode 0600" "mode '$m'"; fi
fi

# a second start leaves the running daemons alone
if "${CL[@]}" start "$W/hosts" > "$W/start2.out" 2>&1 && [ "$(grep -c 'already running' "$W/start2.out")" -eq 5 ]; then
	ok "start again: already running"
else
	notok "start again: already running" "want 5 'already running' lines" "$W/start2.out"
fi

if timeout -k 5 60 "$MPIV" run --dispatcher "127.0.0.1:$DP" "${RUN_SECRET[@]}" -n 4 --timeout 50 "$APP" \
    > "$W/out" 2> "$W/err"; then
	if cmp -s "$W/ref" "$W/out"; then
		ok "app_ring -n 4 on the deployment, same output as embedded"
	else
		diff "$W/ref" "$W/out" > "$W/diff"
		notok "app_ring -n 4 on the deployment, same output as embedded" "output differs" "$W/diff"
	fi
else
	notok "app_ring -n 4 on the deployment" "exit $?" "$W/err" "$W/out"
	show_logs
fi

if "${CL[@]}" status "$W/hosts" > "$W/status.out" 2>&1 && [ "$(grep -c ' running, pid ' "$W/status.out")" -eq 5 ]; then
	ok "status: all running"
else
	notok "status: all running" "exit or lines wrong" "$W/status.out"
fi

PIDS=$(cat "$STATE"/*.pid)
if "${CL[@]}" stop "$W/hosts" > "$W/stop.out" 2>&1; then
	ok "stop"
else
	notok "stop" "exit $?" "$W/stop.out"
fi
left=
for i in $(seq 1 50); do	# up to 5 s for the kernel to reap
	left=
	for p in $PIDS $(our_pids); do
		[ -r "/proc/$p/cmdline" ] && tr '\0' ' ' < "/proc/$p/cmdline" | grep -q mpiv && left="$left $p"
	done
	[ -z "$left" ] && break
	sleep 0.1
done
if [ -z "$left" ]; then
	ok "no daemon left after stop"
else
	ps -o pid,args -p ${left// /,} > "$W/left" 2>&1
	notok "no daemon left after stop" "still running:$left" "$W/left"
fi
"${CL[@]}" status "$W/hosts" > "$W/status2.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && [ "$(grep -c ' stopped$' "$W/status2.out")" -eq 5 ]; then
	ok "status after stop: exit 3, all stopped"
else
	notok "status after stop: exit 3, all stopped" "exit $rc" "$W/status2.out"
fi
# stop twice is harmless
"${CL[@]}" stop "$W/hosts" > "$W/stop2.out" 2>&1 && ok "stop again" || notok "stop again" "exit $?" "$W/stop2.out"

[ "$FAILS" -eq 0 ]
