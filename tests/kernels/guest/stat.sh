# guest/stat.sh - every backend on the stat workloads, against the kernel.
#
# For each backend and workload: ctxmon stat --backend B --json -- kcount
# WORKLOAD.  kcount prints the workload's wait4() rusage; the workload's
# process row must agree with it by the host e2e tests' rules
# (tests/e2e/lib.sh, stat_kcount), and ctxmon's own comparison with its
# getrusage of kcount (the "kernel" object: match) must hold too:
#   voluntary + leader exit (exit_counted) == ru_nvcsw (the leader's exit
#     may or may not be counted when it was reaped as it switched out)
#   involuntary - after_fold in [ru_nivcsw, ru_nivcsw + exit_preempt]
#     (a bpf backend reads the task's own counters: exact)
#   nothing lost, no ordering violation, stat's exit status the workload's.
# perf-switch: per-task events leave a dying thread before its very last
# preemption, and kcount may reap the leader first (docs/unprivileged.md):
# involuntary may fall short by 1 (the leader's last preemption), and
# ctxmon's own comparison (kcount's tree) may miss the same.  proc samples: never
# above the kernel's counts.
#
# sigsleep (signals cutting sleeps short): where `ctxmon doctor` finds that
# this kernel's sched_switch shows such a switch as R, a tracepoint backend
# must say so and its voluntary count is judged against the bound it
# prints; elsewhere exact.
. "$GUEST/lib.sh"

BACKENDS=${BACKENDS:-"bpf bpf-agg perf ftrace ftrace-text perf-switch proc"}

# check NAME BACKEND WORKLOAD ARGS...
check() {
	name=$1 b=$2
	shift 2
	out=$name.json err=$name.err
	rc=0
	"$CTXMON" stat --backend "$b" --json -o "$out" -- "$WL/kcount" "$@" \
		>/dev/null 2>"$err" || rc=$?
	echo "$name: ctxmon stat --backend $b --json -- kcount $* -> exit $rc"
	show "$err"
	pid=$(kcount_get "$err" pid)
	nv=$(kcount_get "$err" nvcsw)
	niv=$(kcount_get "$err" nivcsw)
	st=$(kcount_get "$err" status)
	if [ -z "$pid" ] || [ ! -s "$out" ]; then
		fail "$name" "$(grep -v '^kcount' "$err" | head -n 1) (exit $rc)"
		return
	fi
	[ "$rc" = "$st" ] || { fail "$name" "stat exited $rc, the workload $st"; return; }
	got=$(jfirst "$out" backend)
	[ "$got" = "$b" ] || { fail "$name" "backend $got, asked for $b"; return; }
	vol=$(jrow "$out" process "$pid" voluntary)
	inv=$(jrow "$out" process "$pid" involuntary)
	if [ -z "$vol" ] || [ -z "$inv" ]; then
		fail "$name" "no process row for the workload (pid $pid)"
		return
	fi
	ec=$(jrow "$out" process "$pid" exit_counted)
	af=$(jrow "$out" process "$pid" after_fold)
	ep=$(jrow "$out" process "$pid" exit_preempt)
	nthr=$(jrow "$out" process "$pid" nthreads)
	lx=$(jrow "$out" thread "$pid" exit_switch)
	lost=$(jfirst "$out" lost)
	ov=$(jfirst "$out" order_violations)
	match=$(jfirst "$out" match)
	tv=$((vol + ${ec:-0}))
	ti=$((inv - ${af:-0}))
	reaped=$((${lx:-0} - ${ec:-0}))
	echo "  kernel (kcount): nvcsw=$nv nivcsw=$niv; traced: voluntary $vol+$ec=$tv involuntary $inv-$af=$ti (exit_preempt $ep, threads $nthr); lost=$lost order_violations=$ov kernel.match=$match"
	why=""
	case $b in
	proc)
		[ "$vol" -le "$nv" ] || why="sampled voluntary $vol > kernel $nv"
		[ "$inv" -le "$niv" ] || why="$why sampled involuntary $inv > kernel $niv"
		[ $((vol + inv)) -gt 0 ] || why="nothing sampled"
		;;
	*)
		lo=$niv hi=$niv
		case $b in
		bpf | bpf-agg) ;;
		perf-switch) lo=$((niv - 1)) ;;
		*) hi=$((niv + ${ep:-0})) ;;
		esac
		if [ "$tv" != "$nv" ] &&
			! { [ "$nv" -gt "$tv" ] && [ "$nv" -le $((tv + reaped)) ]; }; then
			why="voluntary $tv != kernel $nv (diff $((tv - nv)))"
		fi
		if [ "$ti" -lt "$lo" ] || [ "$ti" -gt "$hi" ]; then
			why="$why involuntary $ti not in kernel $lo..$hi"
		fi
		[ "$lost" = 0 ] || why="$why lost $lost"
		[ "$ov" = 0 ] || why="$why $ov order violations"
		# perf-switch: kcount, not ctxmon, reaps the workload
		[ "$match" = true ] || [ "$b" = perf-switch ] ||
			why="$why ctxmon's kernel.match $match"
		;;
	esac
	if [ -n "$why" ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
}

for b in $BACKENDS; do
	check "$b-yield" "$b" "$WL/yield" 2000
	check "$b-pingpong" "$b" "$WL/pingpong" 2000
	check "$b-spin2" "$b" "$WL/spin2" 200
	check "$b-sigsleep" "$b" "$WL/sigsleep" 2 300 100 1000
done
