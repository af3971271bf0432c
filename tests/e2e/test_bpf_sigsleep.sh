#!/bin/bash
# Issue 3, acceptance 2: threads sleeping in nanosleep, cut short by a
# per-thread timer signal every 50 us.  When the signal lands after the
# thread set its sleep state, __schedule() keeps it runnable but counts
# the switch voluntary, and sched_switch shows "R" (6.13+).  The bpf
# backend classifies from the task's own nvcsw/nivcsw and must equal the
# kernel exactly; the perf backend (tracepoint state) is run for the
# record: its difference is printed, not judged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bpf_lib.sh"
skip_unless_bpf_check

for b in bpf bpf-raw; do
	name=$b-sigsleep
	run_check "$name" -b "$b" -- "$WL/sigsleep" 4 1500 50 1000
	[ "$RUN_RC" = 0 ] || { fail "$name: bpf_check exit $RUN_RC"; continue; }
	grep '^sigsleep:' "$T/$name.err" | sed 's/^/  | /'
	kernel_exact "$name"
	stream_clean "$name"
	sig=$(sed -n 's/.*signals=\([0-9]*\).*/\1/p' "$T/$name.err")
	[ -n "$sig" ] && [ "$sig" -gt 1000 ] ||
		fail "$name: the workload saw only '$sig' signals"
done

if [ -e /sys/kernel/tracing/events ]; then
	run_check perf-sigsleep -b perf -- "$WL/sigsleep" 4 1500 50 1000
	f=$T/perf-sigsleep.out
	echo "  perf (tracepoint state): traced vol=$(kv "$f" traced_vol) kernel nvcsw=$(kv "$f" rusage_nvcsw);" \
		"traced invol=$(kv "$f" traced_invol) kernel nivcsw=$(kv "$f" rusage_nivcsw)" \
		"(a signal-cut sleep shows R: counted involuntary there)"
fi
finish
