#!/usr/bin/env bash
# tests/integration/test_mitm.sh: an attacker on the wire. A dispatcher,
# a CM and a CS with a cluster secret and a node agent with the node key,
# started by hand on loopback, each server behind a man in the middle
# (tests/tools/mitm): the CM and the CS advertise their relay's address
# (--advertise), and everyone dials the dispatcher through its relay.
#   marker/*  a relay job (tests/mpi/marker.c: payloads full of
#             "MPIV-MARKER-") with checkpoints gives the failure-free
#             output, and nothing any relay passed holds the marker, the
#             cluster secret, the node key, a rank's key or the job token
#             (tests/integration/mitm_search.py); the relays did carry
#             the job (bytes, a durable checkpoint through the CS's relay)
#             and the search does find what is in the clear (the node's
#             name in its Hello: the control)
#   replay/*  a client's recorded handshake, replayed verbatim as a new
#             connection to the CM and to the dispatcher, is refused
#             (the server's fresh nonce and ephemeral key), and the job
#             it was taken from still ends right
#   flip/*    one byte inverted after the handshake of a rank's stream to
#             the CM (c2s) or back (s2c), or of a node's image upload to
#             the CS, ends that connection with a clear error, and the job
#             either ends with the failure-free output or fails; never
#             exit 0 with other output
#   direct/*  a direct job (rank to rank, which no relay can sit in: ranks
#             learn each other's addresses from the CM) whose ranks give
#             their peers 127.0.0.7, captured with tcpdump on lo (host
#             127.0.0.7: its links only, at least the payload's bytes):
#             no marker, no key in the capture
# The test can fail: with every connection in the clear
# (MPIV_INSECURE_PLAINTEXT=1 in its environment)
# marker/secrets, marker/token, marker/live, the flips and direct/secrets
# fail: the marker, the rank keys and the job token are on the wire, and a
# flipped byte gives exit 0 with a wrong sum. Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init mitm
unset MPIV_SECRET_FILE
MITM=$B/tests/tools/mitm
PROG=$B/tests/mpi/marker
SEARCH="python3 $PWD/tests/integration/mitm_search.py"
for f in "$MITM" "$PROG"; do
	[ -x "$f" ] || { echo "not ok - $f not built (make tests-build)"; exit 1; }
done
# The wording of a record that fails to open: the CM closes the
# connection with reason="decrypt: a record failed to open (...)", a
# rank says "a sealed record failed to open (altered on the way?)".
SEAL_ERR='record failed to open'
ARGS=(300 3000)		# steps, µs between them: about 1 s of job
hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")
mkdir -p -m 777 "$T/keys"
nbad=0
for bad in nonsense 127.0.0.1:0 127.0.0.1:99999 host:; do
	timeout 10 "$MPIV" cm --listen 127.0.0.1:0 --advertise "$bad" > /dev/null 2> "$T/adv.err"
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q "^mpiv cm: bad --advertise \"$bad\" (HOST:PORT)\$" "$T/adv.err"; then
		notok "deploy/advertise: cm --advertise $bad: exit $rc" "$T/adv.err"
	else
		nbad=$((nbad + 1))
	fi
done
[ "$nbad" -eq 4 ] && ok "deploy/advertise: 4 bad cm --advertise values exit 2 naming them"

LONG=(1000 3000)	# the job a replay aims at: still running when it comes
for a in ARGS LONG; do
	eval 'timeout 60 "$MPIV" run -n 3 "$PROG" "${'$a'[@]}"' > "$T/ref-$a.out" 2> "$T/ref.err" &&
	    grep -q '^marker ok nranks=3 ' "$T/ref-$a.out" ||
	    { notok "failure-free reference run" "$T/ref.err"; exit 1; }
done
cp "$T/ref-ARGS.out" "$T/ref.out"

# mitm NAME TARGET [OPTS...]: a relay logging to $T/NAME/log, listening
# on $PORT_NAME when set (a relay started again keeps its address).
mitm() {
	local name=$1 to=$2 port
	shift 2
	port=$(eval echo "\${PORT_$name:-0}")
	mkdir -p "$T/$name"
	rm -f "$T/$name.out"
	"$MITM" --listen "127.0.0.1:$port" --to "$to" --log "$T/$name/log" \
	    --marker "$(hex MPIV-MARKER-)" "$@" > "$T/$name.out" 2> "$T/$name.err" &
	eval "PID_$name=$!"
	PIDS+=($!)
	listening "$name" > /dev/null
}
# mitm_stop NAME: SIGTERM, and the relay must exit 0 (cleanly) in 10 s.
mitm_stop() {
	local pid
	pid=$(eval echo "\$PID_$1")
	kill -TERM "$pid" 2> /dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	wait "$pid"
}

# The node's name travels in its Hello, in the clear: the control that
# the relays' logs and searches do see what is there (marker 1).
NODE=mitm-node-n1
mitm pd "@$T/d.addr" --marker "$(hex $NODE)" || { notok "relay start" "$T/pd.err"; exit 1; }
PD=$(listening pd)
mitm pc "@$T/cm.addr" --record "$T/pc.rec" || { notok "relay start" "$T/pc.err"; exit 1; }
PC=$(listening pc)
PORT_pc=${PC##*:}
mitm ps "@$T/cs.addr" || { notok "relay start" "$T/ps.err"; exit 1; }
PS=$(listening ps)

"$MPIV" dispatcher "${S[@]}" --listen 127.0.0.1:0 > "$T/d.out" 2> "$T/d.err" &
PIDS+=($!)
DA=$(listening d) || { notok "dispatcher start" "$T/d.err"; exit 1; }
echo "$DA" > "$T/d.addr"
"$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --advertise "$PC" --dispatcher "$PD" \
    > "$T/cm.out" 2> "$T/cm.err" &
PIDS+=($!)
CMA=$(listening cm) || { notok "cm start" "$T/cm.err"; exit 1; }
echo "$CMA" > "$T/cm.addr"
"$MPIV" cs "${S[@]}" --listen 127.0.0.1:0 --advertise "$PS" --dispatcher "$PD" \
    --store "$T/store" > "$T/cs.out" 2> "$T/cs.err" &
PIDS+=($!)
CSA=$(listening cs) || { notok "cs start" "$T/cs.err"; exit 1; }
echo "$CSA" > "$T/cs.addr"
"$MPIV" node --secret-file "$T/node.key" --dispatcher "$PD" --slots 4 "${NODE_USER[@]}" \
    --cache-dir "$T/cache" --name $NODE > /dev/null 2> "$T/node.err" &
PIDS+=($!)
if wait_for 15 grep -q "dispatcher cm registered addr=$PC\$" "$T/d.err" &&
    wait_for 15 grep -q "dispatcher cs registered addr=$PS\$" "$T/d.err"; then
	ok "deploy/advertise: the CM and the CS registered their relays' addresses"
else
	notok "deploy/advertise: CM and CS registered at $PC and $PS" "$T/d.err"
	exit 1
fi
wait_for 15 grep -q "dispatcher node registered .*name=$NODE " "$T/d.err" ||
    { notok "deploy: the node registers through the relay" "$T/d.err" "$T/node.err"; exit 1; }

# job NAME [RUN OPTS...]: the marker job through the deployment (program
# arguments: PARGS), its output in $T/NAME.out, exit code in RC.
PARGS=("${ARGS[@]}")
job() {
	local name=$1
	shift
	timeout 90 "$MPIV" run "${S[@]}" --dispatcher "$PD" -n 3 "$@" \
	    "$PROG" "${PARGS[@]}" "$T/keys" > "$T/$name.out" 2> "$T/$name.err"
	RC=$?
}
# outcome NAME WHAT: the job ended with the reference output, or failed;
# exit 0 with any other output is the one failure.
outcome() {
	if [ "$RC" -eq 0 ] && cmp -s "$T/ref.out" "$T/$1.out"; then
		ok "$2: the job recovered, output right"
	elif [ "$RC" -ne 0 ] && [ "$RC" -ne 124 ]; then
		ok "$2: the job failed loudly (exit $RC: $(tail -n 1 "$T/$1.err"))"
	elif [ "$RC" -eq 124 ]; then
		notok "$2: the job hung" "$T/$1.err"
	else
		notok "$2: exit 0 with wrong output" "$T/$1.out" "$T/ref.out"
	fi
}
# bytes NAME: bytes the relay NAME passed so far (both ways, all conns).
bytes() {
	cat "$T/$1"/log.c* 2> /dev/null | wc -c
}

# ---------------- marker: nothing secret on the wire
job marker --protocol relay --ckpt-interval 0.3
if [ "$RC" -eq 0 ] && cmp -s "$T/ref.out" "$T/marker.out"; then
	ok "marker/output: the job through the relays gives the failure-free output"
else
	notok "marker/output: exit $RC, output $(cat "$T/marker.out")" "$T/marker.err" "$T/d.err"
fi
if grep -q 'dispatcher checkpoint durable job=' "$T/d.err" && [ "$(bytes ps)" -gt 100000 ]; then
	ok "marker/ckpt: a checkpoint became durable through the CS's relay ($(bytes ps) bytes)"
else
	notok "marker/ckpt: no durable checkpoint through the CS's relay ($(bytes ps) bytes)" "$T/d.err" "$T/cs.err"
fi
nbig=$(bytes pc)
if [ "$nbig" -gt 4000000 ] && [ "$(bytes pd)" -gt 1000 ]; then
	ok "marker/relayed: the relays carried the job (CM $nbig bytes, dispatcher $(bytes pd))"
else
	notok "marker/relayed: the CM's relay passed only $nbig bytes, the dispatcher's $(bytes pd)"
fi
# The needles: the marker, S (as written in its file: the HMAC key is the
# text), K_node (hex in its file, and raw), every rank key (hex, raw).
{
	echo "marker $(hex MPIV-MARKER-)"
	sec=$(tr -d ' \t\r\n' < "$T/secret")
	echo "secret $(hex "$sec")"
	nk=$(sed -n 's/^mpiv-node-key-v1 *//p' "$T/node.key" | tr -d ' \t\r\n')
	echo "node-key-hex $(hex "$nk")"
	echo "node-key $nk"
	for f in "$T"/keys/keys-*; do
		[ -f "$f" ] || continue
		while IFS== read -r name val; do
			echo "${name}@${f##*/}-hex $(hex "$val")"
			echo "${name}@${f##*/} $val"
		done < "$f"
	done
} > "$T/needles"
nkeys=$(grep -c '^MPIV_RANK_KEY@keys-[0-9]*-[0-9]* ' "$T/needles")
if [ "$nkeys" -ge 3 ] && grep -q '^node-key [0-9a-f]\{64\}$' "$T/needles"; then
	ok "marker/needles: the ranks' keys ($nkeys) and the node key to look for"
else
	notok "marker/needles: $nkeys rank keys, node key: $(grep '^node-key ' "$T/needles")" "$T/needles"
fi
# The job token T travels from the dispatcher to the CMs only: looked for
# (as the T behind each rank's key, whichever derivation: per rank or per
# incarnation) in the dispatcher relay's streams.
TOK=()
for f in "$T"/keys/keys-*; do
	[ -f "$f" ] || continue
	ri=${f##*/keys-}
	k=$(sed -n 's/^MPIV_RANK_KEY=//p' "$f")
	[ -n "$k" ] && TOK+=(--token "rank ${ri%-*}=$k" --token "rank ${ri%-*} inc ${ri#*-}=$k")
done
$SEARCH "$T/needles" -- "$T"/pc/log.c* "$T"/ps/log.c* "$T"/pd/log.c* > "$T/found" 2>&1
$SEARCH /dev/null "${TOK[@]}" -- "$T"/pd/log.c* > "$T/found-token" 2>&1
echo "node-name $(hex $NODE)" > "$T/control"
$SEARCH "$T/control" -- "$T"/pd/log.c*.c2s > "$T/found-control" 2>&1
if grep -q '^found node-name' "$T/found-control" && grep -q ' marker=1 dir=c2s ' "$T/pd/log"; then
	ok "marker/control: the relay's log and the search find what is in the clear (the node's name in its Hello)"
else
	notok "marker/control: the node's name was not seen" "$T/found-control" "$T/pd/log"
fi
if grep -q '^searched [1-9]' "$T/found" && ! grep -q '^found' "$T/found"; then
	ok "marker/secrets: no marker, secret, node key or rank key in $(sed -n 's/^searched //p' "$T/found")"
else
	notok "marker/secrets: the wire shows them: $(grep -c '^found' "$T/found") hits" "$T/found"
fi
if [ "${#TOK[@]}" -gt 0 ] && grep -q '^searched [1-9]' "$T/found-token" &&
    ! grep -q '^found' "$T/found-token"; then
	ok "marker/token: no job token in what the dispatcher's relay passed"
else
	notok "marker/token: ${#TOK[@]} token options" "$T/found-token"
fi
if grep -q ' marker=0 dir=' "$T/pc/log"; then
	notok "marker/live: the CM's relay saw the marker go by" "$T/pc/log"
else
	ok "marker/live: the CM's relay never saw the marker go by (--marker)"
fi

# ---------------- replay: a recorded handshake as a new connection
# replay NAME FILE TARGET: mitm --replay, its one line in REPLY.
replay() {
	REPLY=$(timeout 20 "$MITM" --replay "$2" --to "$3" 2> "$T/replay.err")
	case $REPLY in
	refused:*) ok "replay/$1: refused ($REPLY)" ;;
	closed) ok "replay/$1: the server hung up on it" ;;
	*) notok "replay/$1: $REPLY (exit $?)" "$T/replay.err" ;;
	esac
}
# The CM's relay recorded a rank's stream; replay it while its job runs
# (else "unknown job" would refuse it before any proof is checked).
rm -f "$T/pc.rec"
mitm_stop pc
mitm pc "@$T/cm.addr" --record "$T/pc.rec" || { notok "relay restart" "$T/pc.err"; exit 1; }
PARGS=("${LONG[@]}")
job replayjob --protocol relay &
JOBPID=$!
PARGS=("${ARGS[@]}")
if wait_for 30 test -s "$T/pc.rec"; then
	replay "cm-rank" "$T/pc.rec" "$CMA"
	if grep -Eq 'auth refused|authentication failed' "$T/cm.err"; then
		ok "replay/cm-log: the CM logs the refusal"
	else
		notok "replay/cm-log: no refusal in the CM's log" "$T/cm.err"
	fi
else
	notok "replay/cm-rank: nothing recorded" "$T/pc/log"
fi
wait "$JOBPID"
RC=$?
[ "$RC" -eq 0 ] && cmp -s "$T/ref-LONG.out" "$T/replayjob.out" &&
    ok "replay/job: the job the handshake came from ends right" ||
    notok "replay/job: exit $RC" "$T/replayjob.err"
# The dispatcher's relay recorded the first client (the CM registering).
mitm_stop pd
PORT_pd=${PD##*:}
rm -f "$T/pd.rec"
mitm pd "@$T/d.addr" --record "$T/pd.rec" || { notok "relay restart" "$T/pd.err"; exit 1; }
timeout 20 "$MPIV" status "${S[@]}" --dispatcher "$PD" > /dev/null 2>&1
if wait_for 10 test -s "$T/pd.rec"; then
	replay "dispatcher-client" "$T/pd.rec" "$DA"
else
	notok "replay/dispatcher-client: nothing recorded" "$T/pd/log"
fi

# ---------------- flip: one byte changed after the handshake
# flip RELAY DIR OFFSET [RUN OPTS...]: the relay RELAY (pc: the CM's, ps:
# the CS's) inverts byte OFFSET after the handshake of the first stream
# in direction DIR that gets that far (pc: a rank's, ps: a node's image
# upload), during a job; its server's log is cm.err or cs.err.
flip() {
	local relay=$1 dir=$2 off=$3 srv name log before line
	shift 3
	case $relay in pc) srv=cm ;; *) srv=cs ;; esac
	name=flip-$srv-$dir
	log=$T/$srv.err
	mitm_stop "$relay"
	mitm "$relay" "@$T/$srv.addr" --flip "$off" --flip-dir "$dir" ||
	    { notok "relay restart" "$T/$relay.err"; return; }
	before=$(wc -l < "$log")
	job "$name" --protocol relay "$@"
	if grep -q " flip dir=$dir " "$T/$relay/log"; then
		ok "flip/$srv-$dir: the relay inverted byte $off after the handshake"
	else
		notok "flip/$srv-$dir: no flip happened" "$T/$relay/log"
	fi
	outcome "$name" "flip/$srv-$dir"
	line=$(tail -n "+$((before + 1))" "$log" |
	    cat - "$T/$name.err" "$T/node.err" "$T/d.err" | grep -Em 1 "$SEAL_ERR")
	if [ -n "$line" ]; then
		ok "flip/$srv-$dir: the connection ended with a clear error: ${line#* info: }"
	else
		notok "flip/$srv-$dir: no record error in the logs" "$log" "$T/$name.err"
	fi
}
flip pc c2s 3000
flip pc s2c 3000
PORT_ps=${PS##*:}
flip ps c2s 20000 --ckpt-interval 0.3

# ---------------- direct: rank to rank, captured on lo
if ! command -v tcpdump > /dev/null; then
	echo "ok - direct: skipped, no tcpdump (deploy/install-deps.sh installs it)"
else
	rm -f "$T"/keys/*
	# The ranks give their peers 127.0.0.7 (they listen on every
	# address): the capture holds their links and nothing else.
	tcpdump -i lo -s 0 -U -w "$T/direct.pcap" tcp and host 127.0.0.7 \
	    > /dev/null 2> "$T/tcpdump.err" &
	TD=$!
	PIDS+=($TD)
	wait_for 10 grep -q 'listening on' "$T/tcpdump.err"
	job direct --protocol direct -x MPIV_LISTEN_HOST=127.0.0.7
	sleep 0.5
	kill -INT "$TD" 2> /dev/null
	wait "$TD"
	if [ "$RC" -eq 0 ] && cmp -s "$T/ref.out" "$T/direct.out" &&
	    grep -q 'protocol=direct\|protocol direct' "$T/direct.err" "$T/d.err"; then
		ok "direct/output: the direct job gives the failure-free output"
	else
		notok "direct/output: exit $RC" "$T/direct.err"
	fi
	{
		echo "marker $(hex MPIV-MARKER-)"
		for f in "$T"/keys/keys-*; do
			[ -f "$f" ] || continue
			while IFS== read -r name val; do
				echo "${name}@${f##*/}-hex $(hex "$val")"
				echo "${name}@${f##*/} $val"
			done < "$f"
		done
	} > "$T/needles2"
	$SEARCH "$T/needles2" -- "$T/direct.pcap" > "$T/found2" 2>&1
	size=$(stat -c %s "$T/direct.pcap" 2> /dev/null || echo 0)
	# 3 ranks each send 30 x 70000 + 270 x 256 payload bytes
	if [ "$size" -gt 6000000 ] && ! grep -q '^found' "$T/found2"; then
		ok "direct/secrets: no marker or rank key in the links' capture ($size bytes)"
	else
		notok "direct/secrets: capture of $size bytes, $(grep -c '^found' "$T/found2") hits" "$T/found2"
	fi
fi

for r in pd pc ps; do
	if mitm_stop "$r"; then
		ok "mitm/$r: exits 0 on SIGTERM"
	else
		notok "mitm/$r: exit on SIGTERM" "$T/$r.err"
	fi
done
exit $fail
