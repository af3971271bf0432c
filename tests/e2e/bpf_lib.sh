# tests/e2e/bpf_lib.sh - helpers of the test_bpf_*.sh scripts (sourced after
# lib.sh).  They drive $BPF_CHECK (tests/e2e/bpf_check.c, built next to
# ctxmon as e2e/bpf_check), which runs a workload under a backend the way a
# session does and prints key=value lines.

BPF_CHECK=$(dirname "$CTXMON")/e2e/bpf_check

skip_unless_bpf_check() {
	skip_unless_root
	[ -x "$BPF_CHECK" ] || skip "no bpf_check at $BPF_CHECK (make unit-bins)"
}

# kv FILE KEY: the value of the first KEY=value in FILE ("" if none).
kv() {
	grep -o "\(^\| \)$2=[^ ]*" "$1" | head -n 1 | sed "s/^ *$2=//"
}

# run_check NAME ARGS...: run bpf_check ARGS into $T/NAME.out; a backend
# that cannot run here skips the whole test, with its reason.
run_check() {
	local name=$1 rc=0
	shift
	timeout 120 "$BPF_CHECK" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	echo "$name: bpf_check $* -> exit $rc"
	grep -v '^cpu_events\|^lost cpu\|^agg_row\|^thread ' "$T/$name.out" |
		sed 's/^/  | /'
	san_check "$name" "$T/$name.err"
	if [ "$rc" = 77 ]; then
		skip "$(grep '^SKIP:' "$T/$name.out" | head -n 1 | sed 's/^SKIP: //')"
	fi
	RUN_RC=$rc
}

# kernel_exact NAME: the traced counts against the command's getrusage.
# A dying thread's counters are folded into its process before its exit
# switch-out, and a switch-out after sched_process_exit may come after that
# fold too; a group leader's exit switch-out reaches rusage when the parent
# reaps it later.  Where no thread switched after its exit event the match
# must be exact; otherwise within what those switches explain.
kernel_exact() {
	local f=$T/$1.out nv niv tv ti pv pi le
	nv=$(kv "$f" rusage_nvcsw)
	niv=$(kv "$f" rusage_nivcsw)
	tv=$(kv "$f" traced_vol)
	ti=$(kv "$f" traced_invol)
	pv=$(kv "$f" post_exit_vol)
	pi=$(kv "$f" post_exit_invol)
	le=$(kv "$f" leader_exits)
	if [ -z "$nv" ] || [ -z "$tv" ]; then
		fail "$1: no counts in the output"
		return
	fi
	echo "  $1: kernel nvcsw=$nv nivcsw=$niv; traced vol=$tv (+$le leader exits) invol=$ti; after exit: vol=$pv invol=$pi"
	if [ "$pv" = 0 ]; then
		[ "$nv" = "$((tv + le))" ] || [ "$nv" = "$tv" ] ||
			fail "$1: voluntary: traced $tv (+$le leader exits), kernel $nv"
	else
		[ "$(kv "$f" vol_ok)" = 1 ] ||
			fail "$1: voluntary: traced $tv, kernel $nv, $pv switched after exit"
	fi
	if [ "$pi" = 0 ]; then
		[ "$niv" = "$ti" ] ||
			fail "$1: involuntary: traced $ti, kernel $niv"
	else
		[ "$(kv "$f" invol_ok)" = 1 ] ||
			fail "$1: involuntary: traced $ti, kernel $niv, $pi preempted after exit"
	fi
}

# stream_clean NAME: nothing lost, nothing out of order.
stream_clean() {
	local f=$T/$1.out
	[ "$(kv "$f" lost)" = 0 ] || fail "$1: lost $(kv "$f" lost) events"
	[ "$(kv "$f" order_violations)" = 0 ] ||
		fail "$1: $(kv "$f" order_violations) events out of order"
	[ "$(kv "$f" stream_violations)" = 0 ] ||
		fail "$1: the stream counted $(kv "$f" stream_violations) violations"
	[ "$(kv "$f" cpu_violations)" = 0 ] ||
		fail "$1: $(kv "$f" cpu_violations) events out of order on their CPU"
}
