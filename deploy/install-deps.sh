#!/bin/sh
# Installs every Debian package mpiv needs to build, test and benchmark.
# Idempotent: with --if-missing it does nothing when all are present.
#
#   sh deploy/install-deps.sh [--if-missing]
set -eu

# clang's runtime (libclang-rt-dev: libFuzzer, ASan for clang) is only a
# Recommends of clang, and this script installs without Recommends: it is
# named here, or the fuzz targets do not link on a fresh machine.
# tmux and chromium: the tests look at what a person sees (mpiv run's
# status line on a terminal, the timeline and sweep pages in a browser).
# tcpdump: tests/integration/test_mitm.sh captures rank-to-rank traffic.
# python3-cryptography: tests/integration/authpeer.py (a hostile peer)
# seals its records like a real one.
PKGS="gcc make pkg-config libev-dev libsodium-dev libssl-dev libzstd-dev zstd libprotobuf-c-dev
protobuf-c-compiler libcmocka-dev clang libclang-rt-dev gfortran python3 jq procps psmisc
iproute2 nftables openmpi-bin libopenmpi-dev tmux chromium tcpdump
python3-cryptography"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ "$(id -u)" -ne 0 ] || sh "$(dirname "$0")/install-criu.sh" || true
if [ -z "$missing" ]; then
	[ "${1:-}" = "--if-missing" ] || echo "install-deps: all packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing" >&2
	echo "install-deps: run as root (or: sudo sh deploy/install-deps.sh)" >&2
	exit 1
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
echo "install-deps: done"
