#!/bin/sh
# Proves the README's two commands on a fresh Debian 12 machine: builds a
# minimal Debian 12 root with debootstrap (minbase plus make, gcc, git,
# python3, iproute2 and procps: nothing mpiv installs for itself), clones
# this repository's committed HEAD into it, and runs `make demo` and
# `make test` there as root, as a new user would.
#
#   sh deploy/fresh-check.sh [options] [TARGET ...]
#
#   TARGET        make targets to run in order (default: demo test)
#   --dir DIR     where the root is built (default /var/tmp/mpiv-fresh);
#                 an existing DIR is removed first
#   --keep        leave DIR in place afterwards (default: removed when
#                 every target passed)
#   --mirror URL  Debian mirror (default http://deb.debian.org/debian)
#   --worktree    copy the working tree (uncommitted changes included)
#                 instead of cloning HEAD
#
# The root runs in its own mount and PID namespaces (unshare), so /proc,
# /sys, /dev and /dev/shm are mounted only for it and every process it
# started dies with it. Logs: DIR.logs/TARGET.log (kept). Each target's
# last lines (the test summary) are printed; the exit status is 0 only
# when every target exited 0.
#
# What the root has that a fresh machine has too: the host's kernel (so
# CRIU, network namespaces and veths work as on the host), its own /proc
# and /dev. What it lacks: systemd (nothing in mpiv needs it).
set -eu

DIR=/var/tmp/mpiv-fresh
MIRROR=http://deb.debian.org/debian
KEEP=0
WORKTREE=0
TARGETS=""

while [ $# -gt 0 ]; do
	case "$1" in
	--dir) DIR=${2:?--dir needs a path}; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--mirror) MIRROR=${2:?--mirror needs a URL}; shift 2 ;;
	--worktree) WORKTREE=1; shift ;;
	-h|--help) sed -n '2,27p' "$0"; exit 0 ;;
	-*) echo "fresh-check: unknown option: $1" >&2; exit 2 ;;
	*) TARGETS="$TARGETS $1"; shift ;;
	esac
done
[ -n "$TARGETS" ] || TARGETS="demo test"

say() { echo "fresh-check: $*"; }
die() { echo "fresh-check: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mounts)"
case "$DIR" in
/|/usr|/var|/tmp|/root|/home|"") die "refusing --dir $DIR" ;;
esac
REPO=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$REPO/.git" ] || die "$REPO is not a git checkout"

for t in debootstrap unshare pivot_root git; do
	if ! command -v "$t" >/dev/null 2>&1; then
		[ "$t" = debootstrap ] || die "missing tool: $t"
		say "installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
			die "apt-get install debootstrap failed"
	fi
done

LOGS=$DIR.logs
rm -rf "$DIR" "$LOGS"
mkdir -p "$DIR" "$LOGS"

say "debootstrap bookworm (minbase) into $DIR from $MIRROR"
t0=$(date +%s)
debootstrap --variant=minbase --include=make,gcc,git,python3,iproute2,procps \
	bookworm "$DIR" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
	{ tail -5 "$LOGS/debootstrap.log" >&2; die "debootstrap failed (log: $LOGS/debootstrap.log)"; }
say "root ready in $(( $(date +%s) - t0 )) s"

# What a fresh machine would have besides: name resolution and the
# distribution's security updates in its sources.
cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null || true
cat > "$DIR/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF

mkdir -p "$DIR/root/mpiv"
if [ "$WORKTREE" = 1 ]; then
	say "copying the working tree of $REPO"
	(cd "$REPO" && git ls-files -co --exclude-standard -z |
		tar --null -T - -cf -) | tar -xf - -C "$DIR/root/mpiv"
	cp -a "$REPO/.git" "$DIR/root/mpiv/.git"
else
	say "cloning $REPO at $(git -C "$REPO" rev-parse --short HEAD)"
	git clone -q "$REPO" "$DIR/root/mpiv"
fi

# run_in_root TARGET: make TARGET inside the root, in fresh mount and PID
# namespaces; the namespace (and all it started) ends with the make. The
# root becomes "/" by pivot_root, not chroot, and the host's mounts are
# detached: CRIU reads the mount table and refuses mounts whose parent it
# cannot see, as a chroot shows them.
run_in_root() {
	unshare --mount --pid --fork --propagation private /bin/sh -eu -c '
		R=$1 T=$2
		mount --bind "$R" "$R"
		mount -t proc proc "$R/proc"
		mount --rbind /sys "$R/sys"
		mount --rbind /dev "$R/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
		mount -t tmpfs -o mode=755 tmpfs "$R/run"
		mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
		mkdir -p "$R/.oldroot"
		cd "$R"
		pivot_root . .oldroot
		exec /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			/bin/sh -c "umount -l /.oldroot && rmdir /.oldroot &&
				cd /root/mpiv && exec make $T"
	' fresh-check "$DIR" "$1"
}

status=0
for t in $TARGETS; do
	say "make $t (log: $LOGS/$t.log)"
	t0=$(date +%s)
	if run_in_root "$t" < /dev/null >"$LOGS/$t.log" 2>&1; then
		rc=0
	else
		rc=$?
		status=1
	fi
	say "make $t: exit $rc after $(( $(date +%s) - t0 )) s; its last lines:"
	tail -n 8 "$LOGS/$t.log" | sed 's/^/  | /'
done

if [ "$status" = 0 ] && [ "$KEEP" = 0 ]; then
	rm -rf "$DIR"
	say "all targets passed; removed $DIR (logs kept in $LOGS)"
else
	say "root kept in $DIR"
fi
exit $status
