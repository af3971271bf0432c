# guest/stat.sh - every backend on the stat workloads, against the kernel.
#
# For each backend and workload: ctxmon stat --backend B --json -- kcount
# WORKLOAD.  kcount prints the workload's wait4() rusage; the workload's
# process row must agree with it by the host e2e tests' rules
# (tests/e2e/lib.sh, stat_kcount), and ctxmon's own comparison with its
# getrusage of kcount (the "kernel" object: match) must hold too:
#   voluntary + leader exit (exit_counted) - after_fold_voluntary ==
#     ru_nvcsw (the leader's exit may or may not be counted when it was
#     reaped as it switched out; on PREEMPT_RT, kernel.preempt_rt, a
#     tracepoint backend's ru_nvcsw may be up to exit_block lower: exiting
#     threads' blocks it cannot place against the fold)
#   involuntary - after_fold in [ru_nivcsw, ru_nivcsw + exit_preempt]
#     (a bpf backend reads the task's own counters: exact, but for a
#     preemption inside the fold's lock on PREEMPT_RT, its exit_preempt)
#   nothing lost, no ordering violation, stat's exit status the workload's.
# Signal-cut sleeps (sigsleep): where ctxmon finds (its signal-sleep probe,
# `ctxmon doctor`) that this kernel's sched_switch shows them as R, the
# rows' shown_running switches may be voluntary: ctxmon says so
# (kernel.sigsleep_bound) and the ranges widen by that many; where the
# kernel shows them S, a tracepoint backend must be exact.
# perf-switch: its events leave a dying leader before its parent reaps it,
# and kcount reaps at once (docs/unprivileged.md), so it runs the workload
# itself and is judged by ctxmon's own getrusage comparison; a signal-cut
# sleep's record says preempted on every kernel (a documented limit), so
# sigsleep is not run with it.  proc samples /proc, also on its own child:
# never above the kernel's counts, and not nothing.
. "$GUEST/lib.sh"

BACKENDS=${BACKENDS:-"bpf bpf-agg perf ftrace ftrace-text perf-switch proc"}

# check NAME BACKEND WORKLOAD ARGS...
check() {
	name=$1 b=$2
	shift 2
	out=$name.json err=$name.err
	rc=0
	kc="$WL/kcount" fmt="--json"
	[ "$b" != perf-switch ] || { kc="" fmt="" out=$name.txt; }
	[ "$b" != proc ] || kc=""
	"$CTXMON" stat --backend "$b" $fmt -o "$out" -- $kc "$@" \
		>/dev/null 2>"$err" || rc=$?
	echo "$name: ctxmon stat --backend $b${fmt:+ $fmt} -- ${kc:+kcount }$* -> exit $rc"
	show "$err"
	if [ "$b" = proc ]; then
		sample_check "$name" "$rc"
		return
	elif [ -z "$kc" ]; then
		own_check "$name" "$b" "$rc"
		return
	fi
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
	afv=$(jrow "$out" process "$pid" after_fold_voluntary)
	ep=$(jrow "$out" process "$pid" exit_preempt)
	eb=$(jrow "$out" process "$pid" exit_block)
	rt=$(jkernel "$out" preempt_rt)
	nthr=$(jrow "$out" process "$pid" nthreads)
	lx=$(jrow "$out" thread "$pid" exit_switch)
	lost=$(jfirst "$out" lost)
	ov=$(jfirst "$out" order_violations)
	match=$(jfirst "$out" match)
	sr=$(jrow "$out" process "$pid" shown_running)
	sb=$(jfirst "$out" sigsleep_bound)
	amb=0 rta=0
	[ "$sb" != true ] || amb=${sr:-0}
	[ "$rt" != true ] || rta=${eb:-0}
	tv=$((vol + ${ec:-0} - ${afv:-0}))
	ti=$((inv - ${af:-0}))
	# lx is the first leader row's (a process may have two: threxec)
	reaped=$((${lx:-0} - ${ec:-0}))
	[ "$reaped" -ge 0 ] || reaped=0
	echo "  kernel (kcount): nvcsw=$nv nivcsw=$niv; traced: voluntary $vol+$ec-${afv:-0}=$tv involuntary $inv-$af=$ti (exit_preempt $ep, exit_block $eb, preempt_rt $rt, shown_running $sr, sigsleep_bound $sb, threads $nthr); lost=$lost order_violations=$ov kernel.match=$match"
	why=""
	case $b in
	proc)
		[ "$vol" -le "$nv" ] || why="sampled voluntary $vol > kernel $nv"
		[ "$inv" -le "$niv" ] || why="$why sampled involuntary $inv > kernel $niv"
		[ $((vol + inv)) -gt 0 ] || why="nothing sampled"
		;;
	*)
		# traced involuntary in [niv, niv + exit_preempt + amb]
		# (a bpf backend's exit_preempt: PREEMPT_RT only, a preemption
		# inside the fold's lock; 0 elsewhere)
		lo=$niv hi=$niv
		case $b in
		bpf | bpf-agg) hi=$((niv + ${ep:-0})) ;;
		*) hi=$((niv + ${ep:-0} + amb)) ;;
		esac
		# kernel nvcsw in [traced - rta, traced + reaped leader + amb]
		if [ "$nv" -lt $((tv - rta)) ] || [ "$nv" -gt $((tv + reaped + amb)) ]; then
			why="voluntary: kernel $nv not in $((tv - rta))..$((tv + reaped + amb))"
		fi
		if [ "$ti" -lt "$lo" ] || [ "$ti" -gt "$hi" ]; then
			why="$why involuntary $ti not in kernel $lo..$hi"
		fi
		[ "$lost" = 0 ] || why="$why lost $lost"
		[ "$ov" = 0 ] || why="$why $ov order violations"
		[ "$match" = true ] || why="$why ctxmon's kernel.match $match"
		;;
	esac
	if [ -n "$why" ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
}

# rep_check NAME BACKEND WORKLOAD ARGS...: the same run recorded
# (ctxmon record --backend B -- WORKLOAD) and reported: report's own
# comparison with the rusage the recording keeps must hold
# (kernel.match), and it must know the kernel it was made on: on Debian's
# PREEMPT_RT flavour ("-rt-"), kernel.preempt_rt true, elsewhere false.
rep_check() {
	name=$1 b=$2
	shift 2
	rc=0
	"$CTXMON" record --backend "$b" -o "$name.ctx" -- "$@" \
		>/dev/null 2>"$name.err" || rc=$?
	"$CTXMON" report -i "$name.ctx" --json -o "$name.json" \
		2>>"$name.err" || rc=$?
	echo "$name: ctxmon record --backend $b -- $*; ctxmon report --json -> exit $rc"
	show "$name.err"
	[ -s "$name.json" ] || { fail "$name" "no report (exit $rc)"; return; }
	echo "  $(grep -o '"kernel":{[^}]*}' "$name.json")"
	match=$(jkernel "$name.json" match)
	eb=$(jkernel "$name.json" exit_block)
	rt=$(jkernel "$name.json" preempt_rt)
	want=false
	case $(uname -r) in
	*-rt-*) want=true ;;
	esac
	if [ "$rc" != 0 ]; then
		fail "$name" "exit $rc"
	elif [ "$match" != true ]; then
		fail "$name" "report's kernel.match $match"
	elif [ "$rt" != "$want" ]; then
		fail "$name" "kernel.preempt_rt $rt with exit_block $eb on $(uname -r)"
	else
		pass "$name"
	fi
}

# own_check NAME BACKEND RC: ctxmon ran the workload itself, table form
# (NAME.txt).  perf-switch loses the tail of every exit, so stat prints
# its counts as lower bounds (src/output/report_tables.c, output__kernel_line):
#   kernel counters: voluntary V of KV (S short), involuntary I of KI
#   (S short): traced counts are lower bounds, ... (traced vs getrusage:
#   within bound)
# The verdict must be "within bound", and the numbers it prints must obey
# the bound again here: V <= KV + 1 (the leader's zombie switch, counted
# by the kernel at the reap or not; one process) and V + I <= KV + KI + 1
# (a sleep cut short by a signal is voluntary to the kernel and preempted
# to perf's record: it moves a switch from V to I; docs/unprivileged.md).
# A backend that is not a bound must print "match".
own_check() {
	out=$1.txt
	[ -s "$out" ] || { fail "$1" "no output (exit $3)"; return; }
	show "$out" | grep -E 'capture:|kernel counters|tier:'
	kl=$(grep '^kernel counters:' "$out" | head -n 1)
	if [ "$3" != 0 ]; then
		fail "$1" "stat exited $3"
	elif ! grep -q "^capture: $2 backend" "$out"; then
		fail "$1" "not the $2 backend: $(grep '^capture:' "$out")"
	elif ! grep -q "^capture: .* 0 lost" "$out"; then
		fail "$1" "events lost: $(grep '^capture:' "$out")"
	elif [ -z "$kl" ]; then
		fail "$1" "no kernel counters line"
	elif echo "$kl" | grep -q "traced vs getrusage: match)"; then
		pass "$1"
	elif echo "$kl" | grep -q "lower bounds.*(traced vs getrusage: within bound)$"; then
		set -- "$1" $(echo "$kl" | sed -n 's/^kernel counters: voluntary \([0-9]*\) of \([0-9]*\) ([-0-9]* short), involuntary \([0-9]*\) of \([0-9]*\) .*/\1 \2 \3 \4/p')
		if [ $# != 5 ]; then
			fail "$1" "cannot read the bound line: $kl"
		elif [ "$2" -le $(($3 + 1)) ] && [ $(($2 + $4)) -le $(($3 + $5 + 1)) ]; then
			echo "  within the printed bound: voluntary $2 of $3, involuntary $4 of $5"
			pass "$1"
		else
			fail "$1" "stat says within bound but voluntary $2 of $3, involuntary $4 of $5"
		fi
	else
		fail "$1" "$kl"
	fi
}

# own_run NAME BACKEND WORKLOAD ARGS...: ctxmon stat runs the workload
# itself (table form), judged by own_check.
own_run() {
	name=$1 b=$2
	shift 2
	rc=0
	"$CTXMON" stat --backend "$b" -o "$name.txt" -- "$@" >/dev/null 2>&1 ||
		rc=$?
	echo "$name: ctxmon stat --backend $b -- $* -> exit $rc"
	own_check "$name" "$b" "$rc"
}

# sample_check NAME RC: the proc tier ran the workload itself (NAME.json):
# its rows are samples of /proc, so their sums are never above the
# kernel's getrusage totals of the command, and not nothing.
sample_check() {
	out=$1.json
	[ -s "$out" ] || { fail "$1" "no JSON (exit $2)"; return; }
	got=$(jfirst "$out" backend)
	kv=$(jkernel "$out" voluntary) kiv=$(jkernel "$out" involuntary)
	tv=$(jkernel "$out" traced_voluntary) tiv=$(jkernel "$out" traced_involuntary)
	echo "  $(grep -o '"kernel":{[^}]*}' "$out")"
	if [ "$2" != 0 ] || [ "$got" != proc ]; then
		fail "$1" "exit $2, backend $got"
	elif [ -z "$tv" ] || [ "$tv" -gt "$kv" ] || [ "$tiv" -gt "$kiv" ]; then
		fail "$1" "sampled $tv/$tiv above the kernel's $kv/$kiv"
	elif [ $((tv + tiv)) = 0 ]; then
		fail "$1" "nothing sampled (kernel $kv/$kiv)"
	else
		pass "$1"
	fi
}

# csw_sum PID: the sum of voluntary and of involuntary switches of PID's
# threads, from the kernel ("V I")
csw_sum() {
	v=0 n=0
	for s in /proc/$1/task/*/status; do
		v=$((v + $(sed -n 's/^voluntary_ctxt_switches:[^0-9]*//p' "$s")))
		n=$((n + $(sed -n 's/^nonvoluntary_ctxt_switches:[^0-9]*//p' "$s")))
	done
	echo "$v $n"
}

# pid_check NAME BACKEND: stat --check -p of a running ping-pong pair: its
# two threads compared with their /proc counters by ctxmon (kernel_threads:
# match), and the traced sums within this script's own reads before
# ctxmon started and after it exited.
pid_check() {
	pn=$1 pb=$2
	"$WL/pingpong" 1000000000 >/dev/null &
	pp=$!
	sleep 0.3
	set -- $(csw_sum $pp)
	v0=$1 n0=$2
	rc=0
	"$CTXMON" stat --backend "$pb" --check --json -o "$pn.json" -p $pp \
		--duration 0.5 >/dev/null 2>"$pn.err" || rc=$?
	set -- $(csw_sum $pp)
	v3=$1 n3=$2
	kill $pp
	wait $pp 2>/dev/null
	echo "$pn: ctxmon stat --backend $pb --check -p PINGPONG --duration 0.5 -> exit $rc"
	show "$pn.err"
	k=$(grep -o '"kernel_threads":{[^}]*}' "$pn.json")
	echo "  $k; this script's reads: voluntary $((v3 - v0)), involuntary $((n3 - n0))"
	kv=$(echo "$k" | grep -o '"traced_voluntary":[0-9]*' | sed 's/.*://')
	ki=$(echo "$k" | grep -o '"traced_involuntary":[0-9]*' | sed 's/.*://')
	if [ "$rc" != 0 ] || [ -z "$kv" ]; then
		fail "$pn" "exit $rc, $(tail -n 1 "$pn.err")"
	elif ! echo "$k" | grep -q '"threads":2,.*"match":true'; then
		fail "$pn" "not 2 threads compared and matching"
	elif [ "$kv" -gt $((v3 - v0)) ] || [ "$ki" -gt $((n3 - n0)) ] ||
	     [ $((kv + ki)) = 0 ]; then
		fail "$pn" "traced $kv/$ki outside the script's $((v3 - v0))/$((n3 - n0))"
	else
		pass "$pn"
	fi
}

for b in $BACKENDS; do
	pid_check "$b-pidcheck" "$b"
	case $b in
	proc)
		check "$b-spin2" "$b" "$WL/spin2" 300
		check "$b-sigsleep" "$b" "$WL/sigsleep" 2 300 100 1000
		continue
		;;
	esac
	check "$b-yield" "$b" "$WL/yield" 500
	check "$b-pingpong" "$b" "$WL/pingpong" 500
	check "$b-spin2" "$b" "$WL/spin2" 100
	# a thread that is not the leader execs: the process goes on under
	# the leader's pid (de_thread()), in two leader rows (no children:
	# check() compares one process row); perf-switch runs it directly, and
	# must not take the exec'd thread's zombie for the old leader's
	check "$b-threxec" "$b" "$WL/threxec" 3 0
	# 40 threads exiting on one busy CPU: switches on both sides of the
	# fold, which a BPF backend must tell apart (docs/accounting.md); on
	# PREEMPT_RT, 3 runs of 30 were off by one reading sighand alone, and
	# 4 of 75 with a tracepoint backend before exit_block (3 runs a
	# backend in make check, 1 in make test)
	case $b in
	bpf | bpf-agg | perf | ftrace | ftrace-text)
		for r in $(seq 1 "$(long_or 1 3)"); do
			check "$b-exitspin$r" "$b" "$WL/exitspin" 40 4
		done
		case $b in
		perf | ftrace | ftrace-text)
			rep_check "$b-exitspin-report" "$b" "$WL/exitspin" 40 4
			;;
		esac
		;;
	esac
	# a parent leaving 300 zombies to init: the BPF backends mark each
	# (an exit's walk of its children with bpf_loop(), 5.17+), so
	# none is taken for reaped.  300 children started with
	# clone(CLONE_PARENT): the command's, not their forker's (the BPF
	# objects read it; perf and ftrace from task_newtask's clone flags)
	case $b in
	bpf | bpf-agg) own_run "$b-zombies" "$b" "$WL/zombies" 300 0 ;;
	esac
	case $b in
	bpf) rep_check "$b-zombies-report" "$b" "$WL/zombies" 300 0 ;;
	esac
	case $b in
	bpf | bpf-agg | perf | ftrace | ftrace-text)
		own_run "$b-cparent" "$b" "$WL/zombies" 300 1
		;;
	esac
	if [ "$b" = perf-switch ]; then
		skip "$b-sigsleep" "a signal-cut sleep's switch record says preempted on every kernel: counted involuntary (docs/unprivileged.md)"
	else
		check "$b-sigsleep" "$b" "$WL/sigsleep" 2 200 100 1000
	fi
done
