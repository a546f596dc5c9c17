# tests/integration/strays.bash: sourced by the integration scripts that
# check that they left no process behind (not a test itself).
#
# own_strays PATTERN: "PID ARGS" of each process matching PATTERN
# (pgrep -f) that this script started: the ones whose environment has a
# TMPDIR under $W (the script exports TMPDIR=$W/tmp, and every daemon
# and rank it starts inherits a TMPDIR under it), so the processes of
# other tests running beside it do not count.
own_strays() {
	local p
	for p in $(pgrep -f "$1"); do
		tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qF "TMPDIR=$W/" &&
			ps -o pid=,args= -p "$p"
	done
}
