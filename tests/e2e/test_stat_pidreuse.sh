#!/bin/bash
# Pids used again at once: stress-ng's vforkmany stressor (a program we did
# not write) fills the pid space with a chain of vfork()ed processes, so a
# pid freed by a reaped process goes to the next one within the RCU grace
# period before the old leader is freed.  The bpf stream's map of followed
# processes dropped a tgid at that free: the new process that had it was
# no longer followed, and its switches went unseen with nothing lost
# ('voluntary: getrusage 182435 ... traced 154364', and 65k of 143k in
# another run).  The map holds each process's start time now.
#
#   ctxmon stat --backend bpf --check -- stress-ng --vforkmany 2 -t 2
#
# must match the command's getrusage, three runs.  Only where the pid space
# is small enough to fill (pid_max <= 65536; Debian's kernel default on a
# machine of this size is 32768, systemd raises it to 4194304).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$pid_max" -le 65536 ] || skip "pid_max $pid_max: too many pids to fill here"

for r in 1 2 3; do
	rc=0
	"$CTXMON" stat --backend bpf --check -o "$T/v$r.txt" -- \
		stress-ng --vforkmany 2 -t 2 >/dev/null 2>"$T/v$r.err" || rc=$?
	san_check "run $r" "$T/v$r.err"
	grep -E '^capture|^kernel counters' "$T/v$r.txt" | sed "s/^/  run $r: /"
	grep -q '^capture: bpf backend, .* 0 lost' "$T/v$r.txt" ||
		fail "run $r: events lost or not the bpf backend: $(grep '^capture' "$T/v$r.txt")"
	[ "$rc" = 0 ] || fail "run $r: stat --check exited $rc"
done
finish
