#!/bin/bash
# Issue 3, in-kernel filters and optional events: a CPU list keeps every
# event on those CPUs; a cgroup v2 directory keeps only switches of its
# tasks (capturing the whole machine otherwise); the irq and syscall
# groups flow, through tp_btf and raw_tp alike, in order.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bpf_lib.sh"
skip_unless_bpf_check

ncpus=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpus" -ge 2 ]; then
	run_check cpu1 -C 1 -- "$WL/multi5" 5000 5000 200
	f=$T/cpu1.out
	grep '^cpu_events' "$f" | sed 's/^/  | /'
	[ "$(sed -n 's/^cpu_events cpu=1 count=//p' "$f")" -gt 0 ] ||
		fail "cpu1: no events on CPU 1"
	other=$(grep '^cpu_events' "$f" | grep -v 'cpu=1 ' |
		awk -F'count=' '{ s += $2 } END { print s + 0 }')
	[ "$other" = 0 ] || fail "cpu1: $other events on other CPUs"
	stream_clean cpu1
else
	echo "one CPU: CPU filter not checked"
fi

cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/ctxmon-test-$$" 2>/dev/null; then
	cg=$cg2/ctxmon-test-$$
	run_check cgroup -a -G "$cg" -- "$WL/pingpong" 5000
	rmdir "$cg" 2>/dev/null
	f=$T/cgroup.out
	[ "$(kv "$f" foreign_switches)" = 0 ] ||
		fail "cgroup: $(kv "$f" foreign_switches) switches of tasks outside $cg"
	[ "$(kv "$f" traced_vol)" -gt 1000 ] ||
		fail "cgroup: the workload's switches are missing"
	stream_clean cgroup
	run_check all -a -- "$WL/pingpong" 5000
	echo "  without the cgroup: $(kv "$T/all.out" foreign_switches) other switches"
else
	echo "no writable cgroup2 mount: cgroup filter not checked"
fi

for b in bpf bpf-raw; do
	run_check "$b-events" -b "$b" -e irq,syscall -- "$WL/sigsleep" 2 300
	f=$T/$b-events.out
	grep '^types' "$f" | sed 's/^/  | /'
	for t in sys_enter sys_exit sched_waking sched_process_exit; do
		[ "$(kv "$f" $t)" -gt 0 ] || fail "$b-events: no $t events"
	done
	stream_clean "$b-events"
	kernel_exact "$b-events"
done
finish
