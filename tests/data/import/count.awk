# count.awk - the independent count behind tests/data/import/*/expected:
# per prev pid, the sched_switch lines of a text trace (perf script,
# trace-cmd report -N or its sched-plugin form, trace_pipe), split as the
# kernel counts nvcsw/nivcsw: R or R+ involuntary, X or Z exit, any other
# state voluntary.  Prints "tid switches voluntary involuntary exit".
/sched_switch: / {
	for (i = 1; i <= NF; i++)
		if ($i == "==>")
			break
	if (i > NF)
		next
	st = $(i - 1)
	if (st ~ /^prev_state=/) {
		sub(/^prev_state=/, "", st)
		for (j = 1; j < i; j++)
			if ($j ~ /^prev_pid=/)
				pid = substr($j, 10)
	} else {
		# plugin form "comm:pid [prio] S ==>"; its letters: W is
		# TASK_IDLE, Z/X/x the exit and parked bits of its own table
		pid = $(i - 3)
		sub(/.*:/, "", pid)
		if (st == "Z" || st == "X")
			st = "X"
	}
	if (pid == 0)
		next
	n[pid]++
	s = st
	sub(/\+$/, "", s)
	if (s == "X" || s == "Z")
		ex[pid]++
	else if (st == "R" || st == "R+")
		inv[pid]++
	else
		vol[pid]++
}
END {
	for (p in n)
		printf "%d %d %d %d %d\n", p, n[p], vol[p], inv[p], ex[p]
}
