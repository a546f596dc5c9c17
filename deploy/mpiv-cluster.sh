#!/usr/bin/env bash
# deploy/mpiv-cluster.sh: start, stop or check an mpiv deployment over ssh
# from a host list. See deploy/README.md.
#
#   deploy/mpiv-cluster.sh [options] start|stop|status|logs HOSTFILE
#
# HOSTFILE, one daemon a line ('#' starts a comment):
#
#   dispatcher HOST [port=P] [addr=A]   exactly one; others reach it at A:P
#                                       (A defaults to HOST without user@)
#   cm HOST [port=P]                    Channel Memory; the k-th cm line
#                                       listens on CM_PORT+k unless port=
#   cs HOST [STORE] [port=P]            checkpoint server storing in STORE
#                                       (default STATE_DIR/csK-store); the
#                                       k-th cs line listens on CS_PORT+k
#   node HOST [slots=N] [name=NAME]     node agent (slots: default the
#                                       host's CPUs; name: default its host
#                                       name, HOST-K when HOST has several)
#
# Any line may end with "-- ARGS..." passed verbatim to that daemon.
# HOST is what the ssh command is given (user@host works). Each host needs
# a POSIX sh, and a login shell that takes a multi-line quoted argument
# (sh, bash, zsh, not csh).
#
# Options (environment variable in brackets):
#   --ssh CMD             remote shell, run as: CMD HOST COMMAND [MPIV_SSH,
#                         default ssh]; CMD may carry options
#                         ("ssh -o BatchMode=yes")
#   --mpiv PATH           mpiv on every host [MPIV_BIN; default: the path
#                         of the local mpiv (PATH, then this checkout's
#                         build/bin/mpiv)]; nothing is copied there
#   --state-dir DIR       per host: logs, pid files, secret, default CS
#                         stores [MPIV_STATE_DIR, default ~/.mpiv-cluster;
#                         a leading ~/ is the remote home]
#   --secret-file FILE    copy FILE to each host (STATE_DIR/secret, mode
#                         0600) and pass --secret-file to every daemon
#   --dispatcher-port P   default 7000   [MPIV_DISPATCHER_PORT]
#   --cm-port P           first CM port, default 7100   [MPIV_CM_PORT]
#   --cs-port P           first CS port, default 7200   [MPIV_CS_PORT]
#   --bind ADDR           address the servers listen on (default 0.0.0.0)
#   --heartbeat-timeout S passed to the dispatcher
#   --log-level LEVEL     passed to every daemon
#   --insecure-plaintext  passed to every daemon: no encryption (clients
#                         must say it too) [MPIV_INSECURE_PLAINTEXT=1]
#   --wait S              how long to wait for each daemon to come up
#                         (default 20)
#   --parallel N          ssh sessions at once (default 16)
#   -h, --help            this text
#
# start   starts the dispatcher, then the CMs and CSs, then the node agents
#         (each detached with setsid/nohup, log STATE_DIR/ID.log, pid
#         STATE_DIR/ID.pid; IDs: dispatcher, cm0.., cs0.., node0..); a daemon
#         whose pid file names a live mpiv is left alone. Exits non-zero if
#         one did not come up (the rest keep running: use stop).
# stop    stops the node agents, then the CSs and CMs, then the dispatcher
#         (SIGTERM, SIGKILL after 10 s); logs stay.
# status  each daemon's pid state, then `mpiv status` on the dispatcher
#         host when this mpiv has that command. Exit 0 when all run, 3 if not.
# logs    the last lines of every daemon's log.

set -u

PROG=${0##*/}
usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}
die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 2
}

SSH_CMD=${MPIV_SSH:-ssh}
MPIV=${MPIV_BIN:-}
STATE_DIR=${MPIV_STATE_DIR:-"~/.mpiv-cluster"}
SECRET=
DPORT=${MPIV_DISPATCHER_PORT:-7000}
CMPORT=${MPIV_CM_PORT:-7100}
CSPORT=${MPIV_CS_PORT:-7200}
BIND=0.0.0.0
HB_TIMEOUT=
LOG_LEVEL=
PLAIN=
[ "${MPIV_INSECURE_PLAINTEXT:-}" = 1 ] && PLAIN=1
WAIT=20
PARALLEL=16

while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--ssh) SSH_CMD=${2:?--ssh needs a command}; shift 2 ;;
	--mpiv) MPIV=${2:?--mpiv needs a path}; shift 2 ;;
	--state-dir) STATE_DIR=${2:?--state-dir needs a directory}; shift 2 ;;
	--secret-file) SECRET=${2:?--secret-file needs a file}; shift 2 ;;
	--dispatcher-port) DPORT=${2:?--dispatcher-port needs a port}; shift 2 ;;
	--cm-port) CMPORT=${2:?--cm-port needs a port}; shift 2 ;;
	--cs-port) CSPORT=${2:?--cs-port needs a port}; shift 2 ;;
	--bind) BIND=${2:?--bind needs an address}; shift 2 ;;
	--heartbeat-timeout) HB_TIMEOUT=${2:?--heartbeat-timeout needs seconds}; shift 2 ;;
	--log-level) LOG_LEVEL=${2:?--log-level needs a level}; shift 2 ;;
	--insecure-plaintext) PLAIN=1; shift ;;
	--wait) WAIT=${2:?--wait needs seconds}; shift 2 ;;
	--parallel) PARALLEL=${2:?--parallel needs a number}; shift 2 ;;
	--) shift; break ;;
	-*) die "unknown option $1 (see $PROG -h)" ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || { echo "usage: $PROG [options] start|stop|status|logs HOSTFILE (-h for help)" >&2; exit 2; }
ACTION=$1
HOSTFILE=$2
case $ACTION in start | stop | status | logs) ;; *) die "unknown action '$ACTION' (start, stop, status or logs)" ;; esac
[ -r "$HOSTFILE" ] || die "cannot read host list $HOSTFILE"
for p in "$DPORT" "$CMPORT" "$CSPORT" "$WAIT" "$PARALLEL"; do
	[[ $p =~ ^[0-9]+$ ]] || die "not a number: $p"
done
read -r -a SSH <<< "$SSH_CMD"
[ ${#SSH[@]} -gt 0 ] || die "--ssh is empty"
if [ -n "$SECRET" ]; then
	[ -r "$SECRET" ] || die "cannot read secret file $SECRET"
fi

if [ -z "$MPIV" ]; then
	if MPIV=$(command -v mpiv 2> /dev/null) && [ -n "$MPIV" ]; then
		:
	else
		MPIV=$(cd "$(dirname "$0")/.." && pwd)/build/bin/mpiv
		[ -x "$MPIV" ] || die "no local mpiv to take the path from: give --mpiv PATH (or MPIV_BIN)"
	fi
fi

# q STRING: STRING quoted for any POSIX shell.
q() {
	local s=${1//\'/\'\\\'\'}
	printf "'%s'" "$s"
}

# ---- the host list -----------------------------------------------------
# One entry per daemon: ID, ROLE, HOST, and the daemon's argument words
# (already quoted for the remote shell).
IDS=() ROLES=() HOSTS=() ARGV=()
DADDR=
ncm=0 ncs=0 nnode=0 ndisp=0
declare -A NODES_ON=()
lineno=0
# first pass: node agents per host (for default names)
while IFS= read -r line || [ -n "$line" ]; do
	line=${line%%#*}
	read -r -a w <<< "$line"
	[ ${#w[@]} -ge 2 ] && [ "${w[0]}" = node ] && NODES_ON[${w[1]}]=$((${NODES_ON[${w[1]}]:-0} + 1))
done < "$HOSTFILE"

while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	line=${line%%#*}
	read -r -a w <<< "$line"
	[ ${#w[@]} -eq 0 ] && continue
	[ ${#w[@]} -ge 2 ] || die "$HOSTFILE:$lineno: want 'ROLE HOST [options]'"
	role=${w[0]} host=${w[1]}
	port= addr= slots= name= store= extra=()
	for ((i = 2; i < ${#w[@]}; i++)); do
		case ${w[i]} in
		--) extra=("${w[@]:i+1}"); break ;;
		port=*) port=${w[i]#port=} ;;
		addr=*) addr=${w[i]#addr=} ;;
		slots=*) slots=${w[i]#slots=} ;;
		name=*) name=${w[i]#name=} ;;
		*=*) die "$HOSTFILE:$lineno: unknown option ${w[i]}" ;;
		*)
			[ "$role" = cs ] && [ -z "$store" ] || die "$HOSTFILE:$lineno: unexpected '${w[i]}'"
			store=${w[i]} ;;
		esac
	done
	[ -z "$port" ] || [[ $port =~ ^[0-9]+$ ]] || die "$HOSTFILE:$lineno: bad port $port"
	[ -z "$slots" ] || [[ $slots =~ ^[0-9]+$ ]] || die "$HOSTFILE:$lineno: bad slots $slots"
	args=()
	case $role in
	dispatcher)
		ndisp=$((ndisp + 1))
		[ $ndisp -eq 1 ] || die "$HOSTFILE:$lineno: a second dispatcher line"
		port=${port:-$DPORT}
		addr=${addr:-${host#*@}}
		DADDR=$addr:$port
		id=dispatcher
		args=(dispatcher --listen "$BIND:$port")
		[ -n "$HB_TIMEOUT" ] && args+=(--heartbeat-timeout "$HB_TIMEOUT")
		;;
	cm)
		port=${port:-$((CMPORT + ncm))}
		id=cm$ncm
		ncm=$((ncm + 1))
		args=(cm --listen "$BIND:$port")
		;;
	cs)
		port=${port:-$((CSPORT + ncs))}
		id=cs$ncs
		ncs=$((ncs + 1))
		args=(cs --listen "$BIND:$port")
		;;
	node)
		id=node$nnode
		nnode=$((nnode + 1))
		if [ -z "$name" ] && [ "${NODES_ON[$host]}" -gt 1 ]; then
			name=${host#*@}-$((nnode - 1))
		fi
		args=(node)
		[ -n "$slots" ] && args+=(--slots "$slots")
		[ -n "$name" ] && args+=(--name "$name")
		;;
	*) die "$HOSTFILE:$lineno: unknown role '$role' (dispatcher, cm, cs or node)" ;;
	esac
	[ -n "$LOG_LEVEL" ] && args+=(--log-level "$LOG_LEVEL")
	[ -n "$PLAIN" ] && args+=(--insecure-plaintext)
	qa=
	for a in "${args[@]}" "${extra[@]}"; do
		qa="$qa $(q "$a")"
	done
	# the CS store may be relative to the state dir (resolved remotely)
	if [ "$role" = cs ]; then
		if [ -n "$store" ]; then
			qa="$qa --store $(q "$store")"
		else
			qa="$qa --store \"\$S/$id-store\""
		fi
	fi
	[ "$role" = dispatcher ] || qa="$qa --dispatcher \"\$D\""
	IDS+=("$id") ROLES+=("$role") HOSTS+=("$host") ARGV+=("$qa")
done < "$HOSTFILE"

[ ${#IDS[@]} -gt 0 ] || die "$HOSTFILE lists no daemon"
if [ -z "$DADDR" ]; then
	die "$HOSTFILE has no 'dispatcher HOST' line"
fi
[ "$ACTION" = start ] && [ "$ncm" -eq 0 ] &&
	echo "$PROG: warning: no 'cm' line: jobs cannot run without a Channel Memory" >&2

# ---- what runs on each host (POSIX sh) ---------------------------------
# Variables set before it: H (host label), S (state dir), M (mpiv),
# SEC (1: pass --secret-file $S/secret), D (dispatcher address).
REMOTE_LIB='
case $S in "~") S=$HOME ;; "~/"*) S=$HOME/${S#"~/"} ;; esac
fail() { echo "$H: $*" >&2; exit 1; }
# alive ID: its pid file names a live mpiv process
alive() {
	[ -f "$S/$1.pid" ] || return 1
	p=$(cat "$S/$1.pid" 2>/dev/null)
	[ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
	if [ -r "/proc/$p/cmdline" ]; then
		tr "\000" " " < "/proc/$p/cmdline" | grep -qF -- "$M" || return 1
	fi
	return 0
}
has_opt() { "$M" "$1" -h 2>&1 | grep -q -- "$2"; }
# start ID PATTERN ARGS...: start "$M" ARGS detached; wait for PATTERN
# in its log (empty: only check it stays up for a moment)
start() {
	id=$1 pat=$2
	shift 2
	if alive "$id"; then
		echo "$H: $id already running (pid $(cat "$S/$id.pid"))"
		return 0
	fi
	command -v "$M" >/dev/null 2>&1 || fail "mpiv not found at $M (install it there, or give --mpiv PATH)"
	mkdir -p "$S" || fail "cannot create $S"
	if [ "$SEC" = 1 ]; then
		has_opt "$1" --secret-file || fail "$M $1 has no --secret-file option (too old?)"
		set -- "$@" --secret-file "$S/secret"
	fi
	case $1 in dispatcher | node)
		has_opt "$1" --state-dir && set -- "$@" --state-dir "$S/$id-state" ;;
	esac
	# One cache for the node agents of a host, at the same path on every
	# host: a checkpoint image maps the shipped program and opens the
	# stdin of the job from there, and must find them on the node it is
	# restored on (content-addressed, so agents share it safely).
	[ "$1" = node ] && has_opt node --cache-dir && set -- "$@" --cache-dir "$S/cache"
	# Ranks run as the user who deployed, as under mpirun (a node agent
	# started as root would otherwise run them as nobody).
	[ "$1" = node ] && has_opt node --user && set -- "$@" --user "$(id -un)"
	log=$S/$id.log
	[ -f "$log" ] && mv -f "$log" "$log.old"
	rm -f "$S/$id.pid"
	echo "# $(date "+%F %T") $M $*" > "$log"
	if command -v setsid >/dev/null 2>&1; then
		setsid sh -c "echo \$\$ > \"\$0\"; exec nohup \"\$@\"" "$S/$id.pid" "$M" "$@" \
		    < /dev/null >> "$log" 2>&1 &
	else
		sh -c "echo \$\$ > \"\$0\"; exec nohup \"\$@\"" "$S/$id.pid" "$M" "$@" \
		    < /dev/null >> "$log" 2>&1 &
	fi
	i=0
	while [ $i -lt $((W * 10)) ]; do
		if [ -s "$S/$id.pid" ]; then
			if ! alive "$id"; then
				sleep 0.2
				echo "$H: $id exited at once; its log ($log):" >&2
				tail -n 15 "$log" | sed "s/^/$H: | /" >&2
				return 1
			fi
			if [ -z "$pat" ] && [ $i -ge 5 ]; then
				break
			fi
			if [ -n "$pat" ] && grep -q -- "$pat" "$log"; then
				break
			fi
		fi
		sleep 0.1
		i=$((i + 1))
	done
	if [ $i -ge $((W * 10)) ]; then
		echo "$H: $id not up after ${W}s (still running: $(alive "$id" && echo yes || echo no)); its log ($log):" >&2
		tail -n 15 "$log" | sed "s/^/$H: | /" >&2
		return 1
	fi
	l=$(grep -m1 "^listening on" "$log")
	echo "$H: $id started, pid $(cat "$S/$id.pid")${l:+, $l}, log $log"
}
stop() {
	id=$1
	if ! [ -f "$S/$id.pid" ]; then
		echo "$H: $id not running (no pid file)"
		return 0
	fi
	if alive "$id"; then
		p=$(cat "$S/$id.pid")
		kill -TERM "$p" 2>/dev/null
		i=0
		while alive "$id" && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if alive "$id"; then
			kill -KILL "$p" 2>/dev/null
			echo "$H: $id (pid $p) ignored SIGTERM for 10 s: killed"
		else
			echo "$H: $id stopped (pid $p)"
		fi
	else
		echo "$H: $id was not running (stale pid file)"
	fi
	rm -f "$S/$id.pid"
}
status() {
	if alive "$1"; then
		echo "$H: $1 running, pid $(cat "$S/$1.pid")"
	elif [ -f "$S/$1.pid" ]; then
		echo "$H: $1 DEAD (pid file left, log $S/$1.log)"
		return 1
	else
		echo "$H: $1 stopped"
		return 1
	fi
}
logs() {
	echo "==> $H: $S/$1.log"
	tail -n "${LOG_LINES:-20}" "$S/$1.log" 2>/dev/null || echo "(no log)"
}
'

# remote HOST BODY: run BODY (after REMOTE_LIB) on HOST with sh.
remote() {
	local host=$1 body=$2 pre
	pre="H=$(q "${host#*@}"); S=$(q "$STATE_DIR"); M=$(q "$MPIV"); SEC=$([ -n "$SECRET" ] && echo 1 || echo 0); W=$WAIT; D=$(q "$DADDR")"
	"${SSH[@]}" "$host" "sh -c $(q "$pre
$REMOTE_LIB
$body")"
}

# on_each ROLE-REGEX FUNC: FUNC ID for every daemon whose role matches, in
# parallel (one ssh each, at most PARALLEL at once); non-zero if any failed.
on_each() {
	local re=$1 fn=$2 i pids=() rc=0 p
	for i in "${!IDS[@]}"; do
		[[ ${ROLES[i]} =~ ^($re)$ ]] || continue
		if [ ${#pids[@]} -ge "$PARALLEL" ]; then
			wait "${pids[0]}" || rc=1
			pids=("${pids[@]:1}")
		fi
		case $fn in
		start)
			pat='^listening on'
			[ "${ROLES[i]}" = node ] && pat=' registered '
			remote "${HOSTS[i]}" "start ${IDS[i]} $(q "$pat") ${ARGV[i]}" < /dev/null &
			;;
		*) remote "${HOSTS[i]}" "$fn ${IDS[i]}" < /dev/null & ;;
		esac
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	return $rc
}

copy_secret() {
	local h rc=0
	declare -A done_h=()
	for h in "${HOSTS[@]}"; do
		[ -n "${done_h[$h]:-}" ] && continue
		done_h[$h]=1
		remote "$h" 'umask 077; mkdir -p "$S" || fail "cannot create $S"
cat > "$S/secret.new" && chmod 600 "$S/secret.new" && mv -f "$S/secret.new" "$S/secret" || fail "cannot write $S/secret"' < "$SECRET" ||
			{ echo "$PROG: could not copy the secret to $h" >&2; rc=1; }
	done
	return $rc
}

case $ACTION in
start)
	if [ -n "$SECRET" ]; then
		copy_secret || exit 1
	fi
	on_each dispatcher start || { echo "$PROG: the dispatcher did not start" >&2; exit 1; }
	rc=0
	on_each 'cm|cs' start || rc=1
	on_each node start || rc=1
	if [ $rc -ne 0 ]; then
		echo "$PROG: some daemons did not start (see above); '$PROG stop' stops the rest" >&2
		exit 1
	fi
	echo "dispatcher at $DADDR: mpiv run --dispatcher $DADDR${SECRET:+ --secret-file $SECRET} -n N ./app"
	;;
stop)
	rc=0
	on_each node stop || rc=1
	on_each 'cs|cm' stop || rc=1
	on_each dispatcher stop || rc=1
	exit $rc
	;;
status)
	rc=0
	for r in dispatcher cm cs node; do
		for i in "${!IDS[@]}"; do
			[ "${ROLES[i]}" = "$r" ] || continue
			remote "${HOSTS[i]}" "status ${IDS[i]}" < /dev/null || rc=3
		done
	done
	for i in "${!IDS[@]}"; do
		[ "${ROLES[i]}" = dispatcher ] || continue
		remote "${HOSTS[i]}" 'if alive dispatcher && "$M" help 2>&1 | grep -q "^ *status"; then
	[ -f "$S/secret" ] && MPIV_SECRET_FILE=$S/secret && export MPIV_SECRET_FILE
	'"${PLAIN:+MPIV_INSECURE_PLAINTEXT=1 && export MPIV_INSECURE_PLAINTEXT}"'
	set -- status --dispatcher "$D"
	[ -f "$S/secret" ] && "$M" status -h 2>&1 | grep -q -- --secret-file && set -- "$@" --secret-file "$S/secret"
	"$M" "$@"
fi' < /dev/null || rc=3
	done
	exit $rc
	;;
logs)
	for r in dispatcher cm cs node; do
		for i in "${!IDS[@]}"; do
			[ "${ROLES[i]}" = "$r" ] && remote "${HOSTS[i]}" "logs ${IDS[i]}" < /dev/null
		done
	done
	exit 0
	;;
esac
