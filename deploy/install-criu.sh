#!/bin/sh
# Installs a private CRIU (Debian 13 "trixie" packages) under /opt/mpiv/criu
# without touching the system: a private apt configuration (its own
# sources.list, lists, cache and an empty dpkg status) downloads criu and
# the recursive closure of its Depends, `dpkg -x` unpacks each .deb into
# /opt/mpiv/criu/root, and /opt/mpiv/criu/criu is a wrapper that runs the
# unpacked criu through the prefix's own dynamic loader and libraries
# (trixie's criu needs a newer glibc than Debian 12 has).
#
# Why: CRIU 3.17 from Debian 12 fails on kernels >= 6.13 ("vdso: Unexpected
# rt vDSO area bounds"); CRIU 4.1 works (docs/CHECKPOINT.md, DESIGN.md).
#
#   sh deploy/install-criu.sh [--strict] [--force]
#
#   --strict  exit 1 when CRIU cannot work here (default: explain, exit 0)
#   --force   reinstall even when the installed wrapper already passes
#
# Environment: MPIV_CRIU_PREFIX (default /opt/mpiv/criu),
#              MPIV_CRIU_MIRROR (default http://deb.debian.org/debian),
#              MPIV_CRIU_SUITE  (default trixie).
# Idempotent: does nothing when "$PREFIX/criu check" already passes.
# Never writes outside $PREFIX; never changes /etc/apt or the dpkg database.
set -eu

PREFIX=${MPIV_CRIU_PREFIX:-/opt/mpiv/criu}
MIRROR=${MPIV_CRIU_MIRROR:-http://deb.debian.org/debian}
SUITE=${MPIV_CRIU_SUITE:-trixie}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
STRICT=0
FORCE=0

for a in "$@"; do
	case "$a" in
	--strict) STRICT=1 ;;
	--force) FORCE=1 ;;
	-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
	*) echo "install-criu: unknown option: $a" >&2; exit 2 ;;
	esac
done

say() { echo "install-criu: $*"; }

# Ends the script when CRIU cannot be made to work: a plain reason, and
# exit 0 unless --strict (mpiv then runs without checkpoints).
give_up() {
	say "CRIU does NOT work here: $*"
	say "mpiv will run without checkpoints (restarts replay from the beginning)"
	[ "$STRICT" = 1 ] && exit 1
	exit 0
}

WRAPPER=$PREFIX/criu
ROOT=$PREFIX/root
APTDIR=$PREFIX/apt

if [ "$FORCE" = 0 ] && [ -x "$WRAPPER" ] && "$WRAPPER" check >/dev/null 2>&1; then
	say "CRIU works: $WRAPPER ($("$WRAPPER" --version 2>/dev/null | head -1))"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	give_up "not root (CRIU needs root to install and to run)"
fi
for t in apt-get apt-cache dpkg-deb unshare; do
	command -v "$t" >/dev/null 2>&1 || give_up "missing tool: $t"
done
[ -r "$KEYRING" ] || give_up "missing $KEYRING (package debian-archive-keyring)"

mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" \
	"$APTDIR/etc/preferences.d" "$APTDIR/debs"
echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main" > "$APTDIR/etc/sources.list"

# The private apt: nothing from /etc/apt/sources.list*, preferences or the
# system's dpkg status takes part; downloads run as root (no _apt sandbox
# user, which could not write into $PREFIX).
apt_private() {
	tool=$1
	shift
	"$tool" \
		-o Dir::Etc::sourcelist="$APTDIR/etc/sources.list" \
		-o Dir::Etc::sourceparts=- \
		-o Dir::Etc::preferences="$APTDIR/etc/preferences" \
		-o Dir::Etc::preferencesparts="$APTDIR/etc/preferences.d" \
		-o Dir::State::Lists="$APTDIR/lists" \
		-o Dir::State::status=/dev/null \
		-o Dir::Cache="$APTDIR/cache" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
		-o APT::Sandbox::User=root \
		-o Acquire::Languages=none \
		-o Debug::NoLocking=1 \
		"$@"
}

say "fetching the $SUITE package lists from $MIRROR (private apt state in $APTDIR)"
apt_private apt-get -qq update || give_up "apt-get update of $SUITE failed (no network to $MIRROR?)"

# criu and the recursive closure of its Depends/PreDepends; virtual
# packages (<name>) and the indented relation lines are dropped.
PKGS=$(apt_private apt-cache depends --recurse --no-recommends --no-suggests \
	--no-conflicts --no-breaks --no-replaces --no-enhances criu 2>/dev/null |
	grep -E '^[a-z0-9][a-z0-9.+-]*$' | sort -u) || true
case " $(echo $PKGS) " in
*" criu "*) ;;
*) give_up "package criu not found in $SUITE" ;;
esac
say "packages: $(echo $PKGS)"

(cd "$APTDIR/debs" && rm -f ./*.deb && apt_private apt-get -qq download $PKGS) ||
	give_up "apt-get download failed"

# Unpack into a fresh root, then swap it in: a half-done unpack never
# replaces a working one.
rm -rf "$ROOT.new"
mkdir -p "$ROOT.new"
for d in "$APTDIR"/debs/*.deb; do
	dpkg-deb -x "$d" "$ROOT.new" || give_up "dpkg-deb -x $d failed"
done
rm -rf "$ROOT.old"
[ -d "$ROOT" ] && mv "$ROOT" "$ROOT.old"
mv "$ROOT.new" "$ROOT"
rm -rf "$ROOT.old" "$APTDIR"/debs/*.deb "$APTDIR"/cache/archives/*.deb

# Debian 13 is merged-/usr: /lib64 is a symlink to usr/lib64 inside the
# package, so look for the real files.
LDSO=""
for c in "$ROOT/usr/lib64/ld-linux-x86-64.so.2" "$ROOT/lib64/ld-linux-x86-64.so.2" \
	"$ROOT/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"; do
	if [ -e "$c" ]; then LDSO=$c; break; fi
done
[ -n "$LDSO" ] || give_up "no ld-linux-x86-64.so.2 in the unpacked libc6"
CRIU_BIN=""
for c in "$ROOT/usr/sbin/criu" "$ROOT/sbin/criu"; do
	if [ -x "$c" ]; then CRIU_BIN=$c; break; fi
done
[ -n "$CRIU_BIN" ] || give_up "no criu binary in the unpacked package"
LIBPATH="$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu"

# The wrapper. PATH puts the prefix's tools (if any) after the system's:
# criu execs helpers such as iptables/nft only for network locking, which
# mpiv does not use (no TCP sockets in a dumped clone).
cat > "$WRAPPER.tmp" <<EOF
#!/bin/sh
# Generated by deploy/install-criu.sh: CRIU from Debian $SUITE, run through
# its own dynamic loader and libraries under $ROOT.
exec "$LDSO" --library-path "$LIBPATH" "$CRIU_BIN" "\$@"
EOF
chmod 755 "$WRAPPER.tmp"
mv "$WRAPPER.tmp" "$WRAPPER"

VERSION=$("$WRAPPER" --version 2>&1 | head -1) || give_up "the wrapper does not run: $VERSION"
say "installed $VERSION as $WRAPPER"

# criu check: the final word on whether this kernel and these rights suffice.
if out=$("$WRAPPER" check 2>&1); then
	say "CRIU works: \"$WRAPPER check\" passed"
	exit 0
fi
give_up "\"$WRAPPER check\" failed: $(printf '%s\n' "$out" | grep -v 'RLIMIT_NOFILE' | tail -3 | tr '\n' ' ')"
