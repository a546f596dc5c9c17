# bench/lib.bash: helpers shared by the bash benchmark scripts
# (ckpt.sh, disp_load.sh, ft.sh, nodeloss.sh). Source it.

# wait_for SECONDS CMD...: 0 once CMD succeeds, 1 after SECONDS without.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.05
	done
}

# median: of the numbers on stdin, one per line ("nan" when none).
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
