#!/usr/bin/env bash
# deploy/netns-testbed.sh: several "hosts" on one machine, made of Linux
# network namespaces, for multi-host mpiv runs and fault tests.
#
#   deploy/netns-testbed.sh [-p PREFIX] [-s SUBNET] COMMAND [ARGS...]
#
# Layout (PREFIX defaults to mpivtb, SUBNET to 10.77.0):
#
#   PREFIX-net   the "switch": bridge br0, one port v-HOST per host
#   PREFIX-srv   the stable host (dispatcher, CMs, CSs)   SUBNET.1/24
#   PREFIX-nI    volatile node hosts, I = 1..K            SUBNET.(10+I)/24
#
# Each host has lo up and eth0, one end of a veth pair whose other end
# (v-HOST) is a port of br0 in PREFIX-net. Interface names only need to be
# unique inside a namespace, so several test beds (different PREFIXes)
# live side by side, even with the same SUBNET. Node hosts get a firewall
# (nftables, else iptables) that drops every inbound connection: loopback
# and packets of established/related connections are accepted, anything
# else (a new connection, a ping) is dropped without an answer. Nodes can
# dial out; nothing can dial in. That is mpiv's design: node agents and
# ranks only ever connect to the stable side.
#
# Commands:
#   check            can a test bed be built here? (root, ip netns, veth,
#                    bridge, a firewall tool); exit 0, or 1 with the reason
#                    as the last line
#   up K             build (or complete) the test bed with K node hosts;
#                    idempotent: node hosts above K are removed
#   down             remove everything: processes left in the namespaces
#                    are SIGKILLed, namespaces (and with them the veths and
#                    the bridge) deleted
#   hosts            one line per host: HOST NAMESPACE ADDRESS STATE
#   addr HOST        the host's IPv4 address
#   ns HOST          the host's namespace name
#   exec HOST CMD... run CMD inside HOST's namespace (ip netns exec)
#   partition HOST   pull the host's cable: the bridge end of its veth goes
#                    down; the host keeps its address, packets in both
#                    directions vanish silently (no RST, no ICMP), as when
#                    a machine is unplugged or its network is cut
#   heal HOST        plug it back in
#   drops HOST       how many inbound connection attempts (TCP SYNs) the
#                    node's firewall has dropped so far
#   open HOST        the node's firewall lets in TCP connections from the
#                    other node hosts (nodes of one cluster network, whose
#                    ranks may dial each other); the server host still
#                    cannot connect in
#   close HOST       back to the firewall that lets nothing in
#   fw-check HOST    prove the firewall of a node host: a listener inside
#                    HOST is reachable from HOST itself but a connection
#                    from the server host gets no answer, while HOST can
#                    connect to a listener on the server host (needs
#                    python3 for the listeners); exit 0 when all hold
#
# HOST is srv, nI, or a full namespace name (PREFIX-srv, PREFIX-nI).
#
# Environment: MPIVTB_PREFIX, MPIVTB_SUBNET (as -p, -s), MPIVTB_FW
# (auto|nft|iptables, default auto: nft when present), MPIVTB_FWCHECK_PORT
# (port of the fw-check listeners, default 7399).
#
# Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for ip netns), iproute2, and
# nftables or iptables (deploy/install-deps.sh installs them).
set -u

PREFIX=${MPIVTB_PREFIX:-mpivtb}
SUBNET=${MPIVTB_SUBNET:-10.77.0}
FW=${MPIVTB_FW:-auto}
FWCHECK_PORT=${MPIVTB_FWCHECK_PORT:-7399}
ME=netns-testbed

die() {
	echo "$ME: $*" >&2
	exit 1
}

usage() {
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit "${1:-2}"
}

while [ $# -gt 0 ]; do
	case $1 in
	-p) PREFIX=${2:?-p needs a prefix}; shift 2 ;;
	-s) SUBNET=${2:?-s needs a subnet}; shift 2 ;;
	-h|--help) usage 0 ;;
	--) shift; break ;;
	-*) echo "$ME: unknown option $1" >&2; usage 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage 2
CMD=$1
shift

[[ $PREFIX =~ ^[A-Za-z0-9_.][A-Za-z0-9_.-]*$ ]] || die "bad prefix '$PREFIX'"
[[ $SUBNET =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
	die "bad subnet '$SUBNET' (the first three octets of a /24, e.g. 10.77.0)"

NET=$PREFIX-net
BR=br0

# ---- preconditions -------------------------------------------------------

# The firewall tool to use ("nft" or "iptables"), or fails.
fw_tool() {
	case $FW in
	nft|iptables)
		command -v "$FW" > /dev/null && { echo "$FW"; return 0; }
		echo "MPIVTB_FW=$FW but $FW is not installed" >&2
		return 1 ;;
	auto)
		if command -v nft > /dev/null; then echo nft; return 0; fi
		if command -v iptables > /dev/null; then echo iptables; return 0; fi ;;
	*) echo "MPIVTB_FW must be auto, nft or iptables (is '$FW')" >&2; return 1 ;;
	esac
	echo "no firewall tool: install nftables (or iptables): sh deploy/install-deps.sh" >&2
	return 1
}

need_root() {
	[ "$(id -u)" -eq 0 ] ||
		die "must run as root: network namespaces, veths and firewall rules need CAP_NET_ADMIN and CAP_SYS_ADMIN"
	command -v ip > /dev/null || die "no 'ip' command: install iproute2 (sh deploy/install-deps.sh)"
	ip netns list > /dev/null 2>&1 || die "'ip netns' is not available here (iproute2 too old or no netns support)"
}

# check: tries everything once in a throwaway namespace pair.
cmd_check() {
	local t=$PREFIX-chk$$ err tool
	need_root
	tool=$(fw_tool) || die "$(fw_tool 2>&1)"
	if ! err=$(ip netns add "$t-a" 2>&1); then
		die "cannot create a network namespace: $err"
	fi
	# shellcheck disable=SC2064
	trap "ip netns del '$t-a' 2>/dev/null; ip netns del '$t-b' 2>/dev/null" EXIT
	err=$( { ip netns add "$t-b" &&
		ip -n "$t-a" link add $BR type bridge &&
		ip -n "$t-a" link add v-x type veth peer name eth0 netns "$t-b" &&
		ip -n "$t-a" link set v-x master $BR; } 2>&1) ||
		die "cannot build veth/bridge links in namespaces: $err"
	if [ "$tool" = nft ]; then
		err=$(ip netns exec "$t-b" nft -f - 2>&1 <<-EOF
			table inet mpivtb_chk {
				chain input {
					type filter hook input priority 0; policy accept;
					ct state established,related accept
				}
			}
		EOF
		) || die "nft cannot load a conntrack rule in a namespace: $err"
	else
		err=$(ip netns exec "$t-b" iptables -w -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT 2>&1) ||
			die "iptables cannot load a conntrack rule in a namespace: $err"
	fi
	echo "$ME: ok: root, ip netns, veth, bridge, firewall ($tool)"
}

# ---- hosts and names -----------------------------------------------------

# Host name (srv, nI) from HOST or a namespace name; fails on others.
host_of() {
	local h=$1
	h=${h#"$PREFIX"-}
	[[ $h =~ ^(srv|n[1-9][0-9]*)$ ]] || {
		echo "$ME: unknown host '$1' (srv, n1, n2, ... or $PREFIX-HOST)" >&2
		return 1
	}
	echo "$h"
}

addr_of_host() {	# the address a host gets
	case $1 in
	srv) echo "$SUBNET.1" ;;
	n*) local i=${1#n}; [ $((10 + i)) -le 254 ] || return 1; echo "$SUBNET.$((10 + i))" ;;
	esac
}

ns_exists() {
	ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF "$1"
}

# Our namespaces, one per line (PREFIX-net, PREFIX-srv, PREFIX-nI only).
our_namespaces() {
	ip netns list 2>/dev/null | awk '{ print $1 }' |
		grep -E "^$(printf '%s' "$PREFIX" | sed 's/[.]/\\./g')-(net|srv|n[1-9][0-9]*)$"
}

need_up() {
	ns_exists "$NET" || die "test bed $PREFIX is not up (run: $0 -p $PREFIX up K)"
}

need_host() {	# need_host HOST -> prints its host name; the ns must exist
	local h
	h=$(host_of "$1") || exit 2
	need_up
	ns_exists "$PREFIX-$h" || die "no host $h in test bed $PREFIX"
	echo "$h"
}

# Live address of a host (from its eth0).
live_addr() {
	ip -n "$PREFIX-$1" -4 -o addr show dev eth0 2>/dev/null |
		awk '{ sub(/\/.*/, "", $4); print $4; exit }'
}

# ---- up / down -----------------------------------------------------------

ensure_ns() {
	ns_exists "$1" && return 0
	ip netns add "$1" || die "cannot create namespace $1"
}

# ensure_host HOST: namespace, veth to the bridge, address, loopback.
ensure_host() {
	local h=$1 ns=$PREFIX-$1 a
	a=$(addr_of_host "$h") || die "no address for host $h (too many nodes for a /24)"
	ensure_ns "$ns"
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
	ip -n "$ns" link set lo up || die "cannot bring lo up in $ns"
	if ! ip -n "$NET" link show "v-$h" > /dev/null 2>&1; then
		# a half-built host (eth0 without its peer) is rebuilt
		ip -n "$ns" link del eth0 2>/dev/null
		ip -n "$NET" link add "v-$h" type veth peer name eth0 netns "$ns" ||
			die "cannot create the veth pair of $h"
	fi
	ip -n "$NET" link set "v-$h" master $BR || die "cannot attach v-$h to $BR"
	ip -n "$NET" link set "v-$h" up || die "cannot bring v-$h up"
	ip -n "$ns" addr replace "$a/24" dev eth0 || die "cannot set $a on $h"
	ip -n "$ns" link set eth0 up || die "cannot bring eth0 of $h up"
}

# fw_node HOST [open]: replaces the node's firewall (atomically with nft);
# with "open", TCP connections from the other node hosts are let in too.
fw_node() {
	local ns=$PREFIX-$1 tool peers_nft="" peers_ipt=""
	tool=$(fw_tool) || exit 1
	if [ "${2:-}" = open ]; then
		peers_nft="ip saddr $SUBNET.11-$SUBNET.254 tcp flags & (fin | syn | rst | ack) == syn counter accept comment \"a peer node connects\""
		peers_ipt=1
	fi
	if [ "$tool" = nft ]; then
		ip netns exec "$ns" nft -f - <<-EOF || die "cannot load the nftables firewall of $1"
			table inet mpivtb_fw
			delete table inet mpivtb_fw
			table inet mpivtb_fw {
				chain input {
					type filter hook input priority 0; policy drop;
					iif "lo" accept
					ct state established,related accept
					$peers_nft
					tcp flags & (fin | syn | rst | ack) == syn counter drop comment "inbound connection attempt"
					ct state new counter drop comment "nothing connects to a node"
					counter drop
				}
			}
		EOF
	else
		local t
		for t in iptables ip6tables; do
			command -v $t > /dev/null || continue
			ip netns exec "$ns" $t -w -F INPUT &&
			ip netns exec "$ns" $t -w -P INPUT DROP &&
			ip netns exec "$ns" $t -w -A INPUT -i lo -j ACCEPT &&
			ip netns exec "$ns" $t -w -A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT &&
			{ [ -z "$peers_ipt" ] || [ $t = ip6tables ] ||
			  ip netns exec "$ns" $t -w -A INPUT -p tcp --syn -m iprange --src-range "$SUBNET.11-$SUBNET.254" -j ACCEPT; } &&
			ip netns exec "$ns" $t -w -A INPUT -p tcp --syn -m comment --comment "inbound connection attempt" -j DROP &&
			ip netns exec "$ns" $t -w -A INPUT -m conntrack --ctstate NEW -j DROP &&
			ip netns exec "$ns" $t -w -A INPUT -j DROP ||
				die "cannot load the $t firewall of $1"
		done
	fi
}

# Prints how many inbound connection attempts (TCP SYNs) the node's
# firewall dropped.
fw_drops() {
	local ns=$PREFIX-$1 t n=0 c
	if ip netns exec "$ns" nft list table inet mpivtb_fw > /dev/null 2>&1; then
		ip netns exec "$ns" nft list table inet mpivtb_fw |
			sed -n '/inbound connection attempt/s/.*counter packets \([0-9]*\) .*/\1/p' | head -n 1
	else
		for t in iptables ip6tables; do
			command -v $t > /dev/null || continue
			c=$(ip netns exec "$ns" $t -w -L INPUT -v -n -x 2>/dev/null |
				awk '/inbound connection attempt/ { print $1; exit }')
			n=$((n + ${c:-0}))
		done
		echo "$n"
	fi
}

cmd_up() {
	local k=${1:-}
	[[ $k =~ ^[0-9]+$ ]] || die "usage: up K (K node hosts)"
	[ "$k" -le 244 ] || die "at most 244 node hosts in a /24"
	need_root
	fw_tool > /dev/null || exit 1
	ensure_ns "$NET"
	ip -n "$NET" link set lo up
	ip -n "$NET" link show $BR > /dev/null 2>&1 ||
		ip -n "$NET" link add $BR type bridge || die "cannot create bridge $BR in $NET"
	ip -n "$NET" link set $BR up || die "cannot bring $BR up"
	ensure_host srv
	local i ns h
	for ((i = 1; i <= k; i++)); do
		ensure_host "n$i"
		fw_node "n$i"
	done
	# declarative: node hosts above K go away
	for ns in $(our_namespaces); do
		h=${ns#"$PREFIX"-}
		[[ $h =~ ^n([0-9]+)$ ]] || continue
		[ "${BASH_REMATCH[1]}" -le "$k" ] && continue
		del_ns "$ns"
		ip -n "$NET" link del "v-$h" 2>/dev/null
	done
	echo "$ME: $PREFIX up: srv $SUBNET.1, $k node host(s) behind a firewall ($(fw_tool))"
}

# del_ns NS: SIGKILLs what still runs inside, then deletes it.
del_ns() {
	local ns=$1 pids tries=0
	pids=$(ip netns pids "$ns" 2>/dev/null)
	if [ -n "$pids" ]; then
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		while [ -n "$(ip netns pids "$ns" 2>/dev/null)" ] && [ $tries -lt 50 ]; do
			sleep 0.1
			tries=$((tries + 1))
		done
	fi
	ip netns del "$ns" 2>/dev/null || { ns_exists "$ns" && echo "$ME: cannot delete $ns" >&2; }
}

cmd_down() {
	need_root
	local ns n=0
	for ns in $(our_namespaces); do
		[ "$ns" = "$NET" ] && continue
		del_ns "$ns"
		n=$((n + 1))
	done
	ns_exists "$NET" && { del_ns "$NET"; n=$((n + 1)); }
	if [ -n "$(our_namespaces)" ]; then
		die "some namespaces of $PREFIX are left: $(our_namespaces | tr '\n' ' ')"
	fi
	echo "$ME: $PREFIX down ($n namespace(s) removed)"
}

cmd_hosts() {
	need_root
	need_up
	local ns h st
	# srv first, then the nodes in order
	for ns in $(our_namespaces | sed 's/-srv$/-0srv/' | sort -V | sed 's/-0srv$/-srv/'); do
		h=${ns#"$PREFIX"-}
		[ "$h" = net ] && continue
		st=up
		ip -n "$NET" link show "v-$h" 2>/dev/null | grep -q 'state DOWN' && st=partitioned
		printf '%s %s %s %s\n' "$h" "$ns" "$(live_addr "$h")" "$st"
	done
}

# ---- partition / heal ----------------------------------------------------

cmd_partition() {
	need_root
	local h
	h=$(need_host "${1:?usage: partition HOST}") || exit $?
	ip -n "$NET" link set "v-$h" down || die "cannot bring v-$h down"
	echo "$ME: $h partitioned"
}

cmd_heal() {
	need_root
	local h
	h=$(need_host "${1:?usage: heal HOST}") || exit $?
	ip -n "$NET" link set "v-$h" up || die "cannot bring v-$h up"
	echo "$ME: $h healed"
}

# ---- fw-check ------------------------------------------------------------

# Listener: accepts and closes connections until killed.
LISTENER='import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.close()'

# try_connect NS ADDR PORT SECS: 0 connected, 124 no answer, else refused.
try_connect() {
	timeout "$4" ip netns exec "$1" bash -c 'exec 3<> "/dev/tcp/$0/$1"' "$2" "$3" 2>/dev/null
}

cmd_fwcheck() {
	need_root
	local h na sa port=$FWCHECK_PORT lpid spid rc fail=0 before after
	h=$(need_host "${1:?usage: fw-check HOST}") || exit $?
	[ "$h" != srv ] || die "fw-check is for node hosts (srv has no firewall)"
	command -v python3 > /dev/null || die "fw-check needs python3 for its listeners"
	na=$(live_addr "$h") sa=$(live_addr srv)
	[ -n "$na" ] && [ -n "$sa" ] || die "no address on $h or srv"
	ip netns exec "$PREFIX-$h" python3 -c "$LISTENER" "$na" "$port" > /dev/null 2>&1 &
	lpid=$!
	ip netns exec "$PREFIX-srv" python3 -c "$LISTENER" "$sa" "$port" > /dev/null 2>&1 &
	spid=$!
	# shellcheck disable=SC2064
	trap "kill $lpid $spid 2>/dev/null" EXIT
	# both listeners up (a local connection passes the firewall via lo)
	local i
	for ((i = 0; i < 50; i++)); do
		try_connect "$PREFIX-$h" "$na" "$port" 2 && try_connect "$PREFIX-srv" "$sa" "$port" 2 && break
		sleep 0.1
	done
	if [ $i -ge 50 ]; then
		die "fw-check: the listeners on $h ($na:$port) or srv ($sa:$port) did not come up"
	fi
	echo "fw-check $h: listener $na:$port answers inside $h"
	before=$(fw_drops "$h")
	try_connect "$PREFIX-srv" "$na" "$port" 3
	rc=$?
	after=$(fw_drops "$h")
	if [ $rc -eq 124 ]; then
		echo "fw-check $h: ok: srv -> $na:$port gets no answer (inbound SYNs dropped: ${before:-?} -> ${after:-?})"
	elif [ $rc -eq 0 ]; then
		echo "fw-check $h: FAIL: srv connected to $na:$port (the firewall lets inbound connections in)"
		fail=1
	else
		echo "fw-check $h: FAIL: srv -> $na:$port was refused, not dropped (an RST came back: no firewall drop)"
		fail=1
	fi
	if try_connect "$PREFIX-$h" "$sa" "$port" 3; then
		echo "fw-check $h: ok: $h -> srv $sa:$port connects (outbound and its replies pass)"
	else
		echo "fw-check $h: FAIL: $h cannot connect out to srv $sa:$port"
		fail=1
	fi
	return $fail
}

case $CMD in
check) cmd_check ;;
up) cmd_up "$@" ;;
down) cmd_down ;;
hosts) cmd_hosts ;;
addr)
	need_root
	h=$(need_host "${1:?usage: addr HOST}") || exit $?
	live_addr "$h" ;;
ns)
	h=$(host_of "${1:?usage: ns HOST}") || exit 2
	echo "$PREFIX-$h" ;;
exec)
	need_root
	h=$(need_host "${1:?usage: exec HOST CMD...}") || exit $?
	shift
	[ $# -ge 1 ] || die "usage: exec HOST CMD..."
	exec ip netns exec "$PREFIX-$h" "$@" ;;
partition) cmd_partition "$@" ;;
heal) cmd_heal "$@" ;;
fw-check) cmd_fwcheck "$@" ;;
open|close)
	need_root
	h=$(need_host "${1:?usage: $CMD HOST}") || exit $?
	[ "$h" != srv ] || die "srv has no firewall"
	if [ "$CMD" = open ]; then fw_node "$h" open; else fw_node "$h"; fi ;;
drops)
	need_root
	h=$(need_host "${1:?usage: drops HOST}") || exit $?
	[ "$h" != srv ] || die "srv has no firewall"
	fw_drops "$h" ;;
*) echo "$ME: unknown command '$CMD'" >&2; usage 2 ;;
esac
