#!/bin/bash
# ctxmon serve when sched_switch does not fire for every switch.  On 6.18
# in a Firecracker guest it never fires for a switch away from some
# threads of PID 1, so the task switched to comes on unseen.  Here the
# exporter's BPF leaves out every switch from a task outside the filtered
# cgroup to one inside (CTXMON_CGAGG_UNSEEN_IN=1): cgroup x runs spin2
# (two spinners) on CPU 1 beside another spin2 outside it, so most of x's
# switch-ins are left out.  Over a window bounded by SIGSTOP, x's run time
# must still match the kernel's own count (cpu.stat usage_usec, 1% + 5 ms:
# each switch-out says how long its slice ran), its runnable wait
# schedstat's run_delay (10% + 5 ms), and its switches /proc's counters
# exactly.  Before the rule, x's run time was that of its few switch-ins
# seen.
. "$(dirname "$0")/lib.sh"

serve_needs "BPF programs, cgroups" curl python3
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the workloads share CPU 1)"
CHECK="python3 $(dirname "$0")/serve_check.py"

NAME=ctxmon-e2e-unseen-$$
CG=$cg2/$NAME
WPIDS=""
cleanup() {
	local p
	for p in $WPIDS; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "${SRV:-}" ] && kill -KILL "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rmdir "$CG/x" "$CG/o" "$CG" 2>/dev/null
	_cleanup
}
trap cleanup EXIT
mkdir "$CG" "$CG/x" "$CG/o" || skip "cannot create cgroups under $cg2"

CTXMON_CGAGG_UNSEEN_IN=1 serve_start "$CTXMON" --interval 100 --per-cgroup \
	--cgroup "$NAME/x" ${SERVE_ARGS:-}
sh -c "echo \$\$ > $CG/x/cgroup.procs && exec $WL/spin2 600000 1" &
WX=$!
sh -c "echo \$\$ > $CG/o/cgroup.procs && exec $WL/spin2 600000 1" &
WO=$!
WPIDS="$WX $WO"

snap() {
	$CHECK get "$URL" >"$T/m$1.json"
	$CHECK procsnap "$CG/x" >"$T/p$1.json"
}

sleep 1
kill -STOP $WX
serve_quiet "$CG/x"
snap 0
kill -CONT $WX
sleep 2
kill -STOP $WX
serve_quiet "$CG/x"
snap 1
$CHECK runwin "$T/m0.json" "$T/m1.json" "$T/p0.json" "$T/p1.json" \
	"/$NAME/x" "$CG/x" || fail "x's numbers with its switch-ins left out"
serve_stop
finish
