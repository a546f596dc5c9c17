#!/usr/bin/env bash
# tests/integration/test_run_hosts.sh: `mpiv run --hostfile FILE` and
# `-H HOST[:SLOTS],...` (docs/ENVIRONMENT.md, "Running on several hosts")
# on loopback through a fake ssh (MPIV_SSH: drops the host, runs the
# command here), as tests/integration/test_cluster_ssh.sh does.
#
#   hostfile    two hosts (127.0.0.1 slots=2, localhost slots=2, comments,
#               a blank line): -n 4 with numbers piped to rank 0, output
#               equal to the embedded run's; both hosts reached over ssh;
#               no daemon of the run left, its state directory removed
#   host-list   -H 127.0.0.1:2,localhost with --chaos kills: same output
#   plaintext   --insecure-plaintext through an ssh that passes no
#               environment: the daemons run plaintext too, same output
#   errors/*    unreadable hostfile, a bad slots=, an unknown word, a bad
#               host name, an empty hostfile, -H with an empty host or
#               :0, more ranks than slots, with --dispatcher: exit 2 and
#               one clear line; ssh that fails: exit 1, says the daemons
#               did not start, nothing left
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/common.bash
common_init run-hosts
"$B/bin/mpivcc" -O2 -o "$T/ss" tests/integration/stdin_sum.c || exit 1
cd "$T" || exit 2
RUN=(timeout -k 5 120 "$MPIV" run --timeout 100)

cat > fake-ssh << EOF
#!/bin/sh
while [ \$# -gt 0 ]; do
	case \$1 in
	-[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
[ \$# -ge 2 ] || { echo "fake-ssh: want HOST COMMAND" >&2; exit 255; }
echo "\$1" >> "$T/ssh.log"
shift
exec sh -c "\$*"
EOF
chmod +x fake-ssh
export MPIV_SSH=$T/fake-ssh

# left PATTERN: pids of our mpiv daemons whose command line has PATTERN
left() { pgrep -f -- "$MPIV (dispatcher|cm|cs|node) .*$1" 2> /dev/null; }
# state dirs the runs made (~/.mpiv-run/ID)
states() { ls -d "$HOME"/.mpiv-run/*/ 2> /dev/null; }
before=$(states)

seq 1 40 > in40
"${RUN[@]}" -n 4 ./ss root < in40 > ref 2> err || { notok "embedded reference run" err; exit 1; }

# --- hostfile
cat > hosts << 'EOF'
# two "hosts" on loopback
127.0.0.1 slots=2   # the first: dispatcher, CM, CS too

localhost slots=2
EOF
: > ssh.log
"${RUN[@]}" --hostfile hosts -n 4 ./ss root < in40 > out 2> err
rc=$?
if [ $rc = 0 ] && cmp -s out ref; then
	ok "hostfile: -n 4 on two hosts, stdin to rank 0, same output as embedded"
else
	notok "hostfile: exit $rc" out err
fi
if grep -qx 127.0.0.1 ssh.log && grep -qx localhost ssh.log; then
	ok "hostfile: both hosts reached over ssh"
else
	notok "hostfile: ssh went to $(sort -u ssh.log | tr '\n' ' ')"
fi
# the run's daemons (their command lines name its state dir) are gone
wait_for 5 test -z "$(left '\.mpiv-run/')"
if [ -z "$(left '\.mpiv-run/')" ] && [ "$(states)" = "$before" ]; then
	ok "hostfile: no daemon left, the state directory removed"
else
	notok "hostfile: left: $(left '\.mpiv-run/' | tr '\n' ' '), states: $(states)"
fi

# --- -H, with kills
"${RUN[@]}" -H 127.0.0.1:2,localhost --chaos 300ms --chaos-max 2 --chaos-seed 5 \
    --report r.json -n 3 ./ss root 20000 < in40 > out3 2> err
rc=$?
"${RUN[@]}" -n 3 ./ss root < in40 > ref3 2> /dev/null
kills=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kills"])' r.json 2> /dev/null)
if [ $rc = 0 ] && cmp -s out3 ref3 && [ "${kills:-0}" -gt 0 ]; then
	ok "host-list: -H 127.0.0.1:2,localhost, $kills kills, same output"
else
	notok "host-list: exit $rc, kills ${kills:-?}" out3 err
fi

# --- plaintext: ssh passes no environment (as a real one), so the
# daemons learn --insecure-plaintext from their command lines
sed 's|^exec sh -c|exec env -i HOME="$HOME" PATH="$PATH" sh -c|' fake-ssh > clean-ssh
chmod +x clean-ssh
MPIV_SSH=$T/clean-ssh "${RUN[@]}" --insecure-plaintext -H 127.0.0.1:2,localhost:2 \
    -n 4 ./ss root < in40 > outp 2> err
rc=$?
if [ $rc = 0 ] && cmp -s outp ref && grep -q "env -i" clean-ssh; then
	ok "plaintext: --insecure-plaintext reaches the hosts' daemons, same output"
else
	notok "plaintext: exit $rc" outp err
fi

# --- errors
err_case() {	# err_case NAME RC LINE MPIV_RUN_ARGS...
	local name=$1 want=$2 line=$3
	shift 3
	"${RUN[@]}" "$@" ./ss root < /dev/null > out 2> err
	local rc=$?
	if [ $rc = "$want" ] && grep -qxF -- "$line" err && [ ! -s out ]; then
		ok "errors/$name: exit $want, \"$line\""
	else
		notok "errors/$name: exit $rc, want $want and \"$line\"" err
	fi
}
err_case unreadable 2 "mpiv run: cannot read hostfile nosuch: No such file or directory" \
    --hostfile nosuch -n 1
printf 'a slots=2\nb slots=x\n' > bad1
err_case slots 2 'mpiv run: bad1:2: unknown or bad "slots=x" (want HOST [slots=N] [max_slots=N])' \
    --hostfile bad1 -n 1
printf 'a cpus=2\n' > bad2
err_case word 2 'mpiv run: bad2:1: unknown or bad "cpus=2" (want HOST [slots=N] [max_slots=N])' \
    --hostfile bad2 -n 1
printf 'a\nno/such:host\n' > bad3
err_case host 2 'mpiv run: bad3:2: bad host "no/such:host" (want a host name or IPv4 address, [user@]HOST)' \
    --hostfile bad3 -n 1
printf '# nothing\n\n' > empty
err_case empty 2 "mpiv run: empty lists no host" --hostfile empty -n 1
err_case list-empty 2 'mpiv run: -H a,,b: bad host "" (want a host name or IPv4 address, [user@]HOST[:SLOTS])' \
    -H a,,b -n 1
err_case list-zero 2 'mpiv run: -H a:0: bad slot count in "a:0" (want HOST or HOST:SLOTS)' \
    -H a:0 -n 1
err_case slots-short 2 "mpiv run: -n 5 but the hosts have 4 slots (give more hosts or slots)" \
    --hostfile hosts -n 5
err_case with-dispatcher 2 "mpiv run: --hostfile and -H start a deployment on the hosts: not with --dispatcher, --nodes or --cm-store" \
    -H a --dispatcher 127.0.0.1:1 -n 1
MPIV_SSH=false err_case ssh-fails 1 "mpiv: the daemons did not all start on the hosts (mpiv-cluster.sh start: exit 1):" \
    -H 127.0.0.1 -n 1
if [ -z "$(left '\.mpiv-run/')" ]; then
	ok "errors: no daemon left"
else
	notok "errors: left: $(left '\.mpiv-run/' | tr '\n' ' ')"
fi
# a failed run keeps the daemons' logs (there were none here): clean up
for d in $(states); do
	case " $before " in *" $d "*) ;; *) rm -rf "$d" ;; esac
done
[ "$fail" = 0 ]
