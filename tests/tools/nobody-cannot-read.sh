#!/bin/sh
# tests/tools/nobody-cannot-read.sh FILE: exits 0 when this runs as root
# and the user nobody cannot read FILE, 1 otherwise.
#
# A node agent started as root runs its ranks as nobody (mpiv node
# --user), and a checkout under root's own 0700 home (/root/mpiv, as in
# deploy/fresh-check.sh) hides the build's libmpi.so from them: the
# scripts that start such agents ask this about "$B/lib/libmpi.so" and
# then link their programs with libmpi.a or keep the agents root.
[ "$(id -u)" = 0 ] && ! runuser -u nobody -- test -r "$1" 2> /dev/null
