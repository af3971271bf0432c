#!/bin/bash
# tier: long (make check): a storm of tens of thousands of tasks
# runs: alone (the storm owns the machine: pids, memory, both CPUs)
# Pids used again at once: stress-ng's vforkmany stressor (a program we did
# not write) fills the pid space with a chain of vfork()ed processes, so a
# pid freed by a reaped process goes to the next one within the RCU grace
# period before the old leader is freed.  The bpf stream's map of followed
# processes dropped a tgid at that free: the new process that had it was
# no longer followed, and its switches went unseen with nothing lost
# ('voluntary: getrusage 182435 ... traced 154364', and 65k of 143k in
# another run).  The map holds each process's start time now.
#
#   ctxmon stat --backend bpf --check -- kcount stress-ng --vforkmany 2 -t 2
#
# must match the command's getrusage, three runs, and two more under
# bpf-agg.  Each vforkmany process is reaped by its parent (stress-ng
# waits for its vfork child), so no backend may take one for unreaped:
# the account once took reaped chains of 7,150 (bpf) and 20,664 (perf)
# processes for unreaped from the times of a zombie's switch-out and its
# parent's exit (a vCPU held up between the state's read and the time's),
# and a free of a pid's old holder once deleted the bpf entry of the
# process forked with it (a chain unseen, 0 lost).  Each about 1 run in
# 15-30.  perf follows the
# processes in user space and needs no map; without orphan marks it
# decides who outlived whom by the exit events, where the last switches
# took 10,000 of 60,000 processes for orphans (one run, with perf).  Only where the pid space
# is small enough to fill (pid_max <= 65536; Debian's kernel default on a
# machine of this size is 32768, systemd raises it to 4194304).  Then once
# under ftrace, whose kernel pid filter ctxmon cannot mend: a shortfall
# must come with the verdict's line on reused pids.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$pid_max" -le 65536 ] || skip "pid_max $pid_max: too many pids to fill here"

# Under kcount: its wait4() rusage of stress-ng (the kernel's counters,
# read by a program that is not ctxmon) is the truth the rows of
# stress-ng's tree are summed against (lib.sh's kcount_judge; its walk
# keys rows by (pid, generation): a wrapped pid space gave one run 36,737
# processes over 32,439 pids), stat's own --check must agree, and no row
# may be marked orphaned.
for r in bpf-1 bpf-2 bpf-3 bpf-agg-1 bpf-agg-2 perf-1; do
	b=${r%-*}
	rc=0
	"$CTXMON" stat --backend "$b" --check --json -o "$T/$r.json" -- \
		"$WL/kcount" stress-ng --vforkmany 2 -t 2 >/dev/null 2>"$T/$r.err" || rc=$?
	san_check "$r" "$T/$r.err"
	grep -E '^kernel counters' "$T/$r.err" | sed "s/^/  $r: /"
	read -r be lost orph <<<"$(json "$T/$r.json" '" ".join(str(x) for x in (j["backend"], j["capture"]["lost"], sum(1 for p in j["processes"] if p.get("orphaned"))))' 2>/dev/null)"
	echo "  $r: backend ${be:-?}, ${lost:-?} lost, ${orph:-?} orphaned processes"
	if [ "${be:-}" != "$b" ]; then
		fail "$r: no JSON of the $b backend (exit $rc)"
		continue
	fi
	if [ "$lost" != 0 ]; then
		# perf reads every CPU's ring: a busy machine may overrun it
		[ "$b" = perf ] && { not_judged "$r" "perf lost events (it reads every CPU's ring)"; continue; }
		fail "$r: $lost events lost"
	fi
	[ "$rc" = 0 ] || fail "$r: stat --check exited $rc"
	[ "$orph" = 0 ] ||
		fail "$r: $orph processes taken for unreaped, which their parents reaped"
	kcount_judge "$r" "$T/$r.json" "$T/$r.err" "$rc" -
done

# The ftrace backend follows the command through the kernel's pid filter,
# which drops a pid at its old holder's free as the bpf map did: where
# that leaves it short of getrusage (15-50% here), the verdict names the
# reused pids and the backends that count them; it matches or says so.
rc=0
"$CTXMON" stat --backend ftrace --check -o "$T/ftrace.txt" -- \
	stress-ng --vforkmany 2 -t 2 >/dev/null 2>"$T/ftrace.err" || rc=$?
san_check ftrace "$T/ftrace.err"
grep -E '^capture|^kernel counters|got a pid' "$T/ftrace.txt" | sed "s/^/  ftrace: /"
if grep -q '^capture: ftrace backend, .* 0 lost' "$T/ftrace.txt"; then
	if [ "$rc" = 3 ]; then
		grep -q '^kernel counters: voluntary: getrusage [0-9]* not in traced' "$T/ftrace.txt" ||
			grep -q 'involuntary: getrusage [0-9]* not in traced' "$T/ftrace.txt" ||
			fail "ftrace: a mismatch, but not the range form: $(grep '^kernel counters' "$T/ftrace.txt")"
		grep -qE '^  [1-9][0-9]* processes of the command got a pid that an earlier one of it had .*--backend bpf or perf counts them' "$T/ftrace.txt" ||
			fail "ftrace: short of getrusage with no word of the reused pids: $(grep -A3 '^kernel counters' "$T/ftrace.txt" | tr '\n' ' ')"
	elif [ "$rc" = 0 ]; then
		! grep -q 'got a pid' "$T/ftrace.txt" || fail "ftrace: a match with the reuse hint"
	else
		fail "ftrace: stat --check exited $rc"
	fi
else
	not_judged ftrace "the ftrace capture lost events"
fi
finish
