#!/usr/bin/env bash
# tests/integration/test_seal.sh: encryption of the daemons' connections
# (docs/CONTRACTS.md, "Encryption"). On loopback, started by hand:
#   - a deployment with a secret: the node agent, the CM, the CS and
#     `mpiv run` reach the dispatcher sealed (its log says with which
#     cipher, for each role), a job runs; the same with ChaCha20-Poly1305
#     (MPIV_SEAL_NO_AES=1 on the dialler)
#   - without a secret: still sealed (encrypted, not authenticated)
#   - a relay job over two CMs under --chaos prints what its failure-free
#     run printed (the kills, relaunches and replays driven over sealed
#     daemon links; the ranks' own links seal once their transport does)
#   - a plaintext peer (tests/integration/authpeer.py, the handshake
#     without the key exchange) is refused by an encrypting server with
#     the one clear reason, even holding the right secret
#   - an encrypting node agent refuses a dispatcher running
#     --insecure-plaintext, with the reason
#   - --insecure-plaintext on both ends works, and every daemon and
#     `mpiv run` warn that connections are not encrypted
# Every wait is bounded.
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init seal
PEER="python3 $PWD/tests/integration/authpeer.py"
unset MPIV_SECRET_FILE MPIV_INSECURE_PLAINTEXT MPIV_SEAL_NO_AES
# Every daemon here runs the strict policy: no plaintext peer let through.
TR=(env)

"$MPIV" secret new "$T/secret" > /dev/null &&
    "$MPIV" secret node-key --secret-file "$T/secret" "$T/node.key" > /dev/null ||
    { echo "not ok - mpiv secret"; exit 1; }
S=(--secret-file "$T/secret")
"$B/bin/mpivcc" -O1 -o "$T/hi" tests/integration/hi.c || { echo "not ok - mpivcc"; exit 1; }
CIPHER=aes256gcm
grep -qw aes /proc/cpuinfo && grep -qw pclmulqdq /proc/cpuinfo || CIPHER=chacha20poly1305

# deploy TAG ARGS...: a dispatcher, a CM, a CS and a node agent, each
# given ARGS (the node: the node key instead of --secret-file); their
# logs in $T/TAG-*.err, the dispatcher's address in DA.
deploy() {
	local tag=$1 nargs=()
	shift
	for a in "$@"; do
		[ "$a" = "$T/secret" ] && a=$T/node.key
		nargs+=("$a")
	done
	"$MPIV" dispatcher "$@" --listen 127.0.0.1:0 > "$T/$tag-d.out" 2> "$T/$tag-d.err" &
	PIDS+=($!)
	DA=$(listening "$tag-d") || { notok "$tag: dispatcher start" "$T/$tag-d.err"; return 1; }
	"${TR[@]}" "$MPIV" cm "$@" --listen 127.0.0.1:0 --dispatcher "$DA" > "$T/$tag-cm.out" 2> "$T/$tag-cm.err" &
	PIDS+=($!)
	"${TR[@]}" "$MPIV" cs "$@" --listen 127.0.0.1:0 --dispatcher "$DA" --store "$T/$tag-store" \
	    > "$T/$tag-cs.out" 2> "$T/$tag-cs.err" &
	PIDS+=($!)
	"${TR[@]}" "$MPIV" node "${nargs[@]}" --dispatcher "$DA" --slots 4 --cache-dir "$T/cache" \
	    --name "$tag-node" > /dev/null 2> "$T/$tag-node.err" &
	PIDS+=($!)
	listening "$tag-cm" > /dev/null && listening "$tag-cs" > /dev/null ||
	    { notok "$tag: cm/cs start" "$T/$tag-cm.err" "$T/$tag-cs.err"; return 1; }
}

# sealed_roles FILE CIPHER: the dispatcher's log has a sealed line of
# that cipher for a node (2), a client (3), a CM (4) and a CS (5).
sealed_roles() {
	local r
	for r in 2 3 4 5; do
		grep -q "sealed $2 role=$r " "$1" || return 1
	done
}

# ---- a deployment with a secret ----
if deploy sec "${S[@]}"; then
	if timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 3 "$T/hi" \
	    > "$T/run.out" 2> "$T/run.err" && grep -q 'hi size=3 sum=3' "$T/run.out"; then
		ok "a job runs through sealed daemon connections"
	else
		notok "a job runs through sealed daemon connections" "$T/run.out" "$T/run.err"
	fi
	if wait_for 10 sealed_roles "$T/sec-d.err" "$CIPHER"; then
		ok "node, client, CM and CS reach the dispatcher sealed ($CIPHER)"
	else
		notok "node, client, CM and CS sealed ($CIPHER)" "$T/sec-d.err"
	fi
	if grep -q "sealed $CIPHER" "$T/sec-node.err" && grep -q "sealed $CIPHER" "$T/sec-cm.err"; then
		ok "the diallers log their side sealed"
	else
		notok "the diallers log their side sealed" "$T/sec-node.err" "$T/sec-cm.err"
	fi
	if grep -q "NOT encrypted" "$T"/sec-*.err "$T/run.err"; then
		notok "no plaintext warning when encrypting"
	else
		ok "no plaintext warning when encrypting"
	fi
	# Kills over sealed links: a relay job over two CMs under --chaos
	# prints what its failure-free run printed (6000 rounds: about 1.5 s
	# on a quiet machine, where 600 ended before the first 300 ms kill).
	"${TR[@]}" "$MPIV" cm "${S[@]}" --listen 127.0.0.1:0 --dispatcher "$DA" \
	    > "$T/sec-cm2.out" 2> "$T/sec-cm2.err" &
	PIDS+=($!)
	listening sec-cm2 > /dev/null || notok "second cm start" "$T/sec-cm2.err"
	"$B/bin/mpivcc" -O1 -Itests/fault/progs -o "$T/ring" tests/fault/progs/flt_ring.c ||
	    notok "mpivcc flt_ring"
	R=("$MPIV" run "${S[@]}" --dispatcher "$DA" --protocol relay --cms 2 -n 4)
	if timeout 120 "${R[@]}" "$T/ring" 6000 3000 > "$T/ref.out" 2> "$T/ref.err" &&
	    timeout 120 "${R[@]}" --chaos 300ms --chaos-seed 7 --chaos-max 4 "$T/ring" 6000 3000 \
	    > "$T/chaos.out" 2> "$T/chaos.err" && cmp -s "$T/ref.out" "$T/chaos.out" &&
	    [ -s "$T/ref.out" ]; then
		kills=$(grep 'job done' "$T/sec-d.err" | tail -n 1 | sed -n 's/.* kills=\([0-9]*\).*/\1/p')
		if [ "${kills:-0}" -gt 0 ]; then
			ok "--chaos over sealed daemon links: output equals the failure-free run ($kills kills)"
		else
			notok "--chaos over sealed daemon links: no kill happened" "$T/sec-d.err"
		fi
	else
		notok "--chaos over sealed daemon links: output equals the failure-free run" \
		    "$T/ref.err" "$T/chaos.err"
	fi
	# ChaCha20-Poly1305: the dialler hides AES-256-GCM, the server
	# offers both, the pick is the one they share.
	if MPIV_SEAL_NO_AES=1 timeout 60 "$MPIV" run "${S[@]}" --dispatcher "$DA" -n 2 "$T/hi" \
	    > "$T/run2.out" 2> "$T/run2.err" && grep -q 'hi size=2 sum=2' "$T/run2.out" &&
	    wait_for 10 grep -q "sealed chacha20poly1305 role=3 " "$T/sec-d.err"; then
		ok "a client without AES-GCM gets ChaCha20-Poly1305"
	else
		notok "a client without AES-GCM gets ChaCha20-Poly1305" "$T/run2.err" "$T/sec-d.err"
	fi
	# A plaintext peer holding the right secret is refused, with why.
	KEY=$(od -An -tx1 -v < <(tr -d '\n' < "$T/secret") | tr -d ' \n')
	r=$(AUTHPEER_PLAIN=1 timeout 15 $PEER "$DA" hello client "" -1 0 "$KEY" 2>&1)
	case $r in
	"refused: encryption required; the peer is an old build or runs --insecure-plaintext")
		ok "a plaintext client is refused: encryption required" ;;
	*) notok "a plaintext client is refused: encryption required ($r)" ;;
	esac
	if grep -q 'auth refused.*reason="encryption required' "$T/sec-d.err"; then
		ok "the dispatcher logs the plaintext peer it refused"
	else
		notok "the dispatcher logs the plaintext peer it refused" "$T/sec-d.err"
	fi
	# An encrypting node refuses a server that runs plaintext.
	"$MPIV" dispatcher "${S[@]}" --insecure-plaintext --listen 127.0.0.1:0 \
	    > "$T/pd.out" 2> "$T/pd.err" &
	PIDS+=($!)
	PDA=$(listening pd)
	timeout 20 "$MPIV" node --secret-file "$T/node.key" --dispatcher "$PDA" \
	    --slots 1 --name lured > /dev/null 2> "$T/lured.err" &
	LURED=$!
	if wait_for 15 grep -q "encryption required; the server is an old build or runs --insecure-plaintext" \
	    "$T/lured.err"; then
		ok "an encrypting node refuses an --insecure-plaintext dispatcher"
	else
		notok "an encrypting node refuses an --insecure-plaintext dispatcher" "$T/lured.err"
	fi
	kill "$LURED" 2> /dev/null
	wait "$LURED" 2> /dev/null
fi

# ---- no secret: encrypted, not authenticated ----
if deploy open; then
	if timeout 60 "$MPIV" run --dispatcher "$DA" -n 2 "$T/hi" \
	    > "$T/run3.out" 2> "$T/run3.err" && grep -q 'hi size=2 sum=2' "$T/run3.out" &&
	    wait_for 10 sealed_roles "$T/open-d.err" "$CIPHER"; then
		ok "without a secret the connections are still sealed"
	else
		notok "without a secret the connections are still sealed" "$T/run3.err" "$T/open-d.err"
	fi
fi

# ---- --insecure-plaintext on both ends ----
if deploy plain "${S[@]}" --insecure-plaintext; then
	if timeout 60 "$MPIV" run "${S[@]}" --insecure-plaintext --dispatcher "$DA" -n 2 "$T/hi" \
	    > "$T/run4.out" 2> "$T/run4.err" && grep -q 'hi size=2 sum=2' "$T/run4.out"; then
		ok "--insecure-plaintext on both ends: the job runs"
	else
		notok "--insecure-plaintext on both ends: the job runs" "$T/run4.out" "$T/run4.err"
	fi
	n=0
	for f in "$T"/plain-d.err "$T"/plain-cm.err "$T"/plain-cs.err "$T"/plain-node.err "$T/run4.err"; do
		[ "$(grep -c 'connections are NOT encrypted' "$f")" = 1 ] && n=$((n + 1))
	done
	if [ "$n" = 5 ]; then
		ok "each daemon and mpiv run warn once: NOT encrypted"
	else
		notok "each daemon and mpiv run warn once ($n of 5)" "$T/plain-d.err" "$T/run4.err"
	fi
	if grep -q "sealed" "$T"/plain-*.err; then
		notok "nothing sealed under --insecure-plaintext" "$T/plain-d.err"
	else
		ok "nothing sealed under --insecure-plaintext"
	fi
fi

# ---- the embedded deployment passes --insecure-plaintext down ----
if timeout 60 "$MPIV" run --insecure-plaintext -n 2 "$T/hi" > "$T/run5.out" 2> "$T/run5.err" &&
    grep -q 'hi size=2 sum=2' "$T/run5.out" && grep -q 'NOT encrypted' "$T/run5.err"; then
	ok "mpiv run --insecure-plaintext (embedded) runs and warns"
else
	notok "mpiv run --insecure-plaintext (embedded) runs and warns" "$T/run5.out" "$T/run5.err"
fi
[ "$fail" = 0 ]
