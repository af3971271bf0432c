#!/bin/bash
# runs: alone
# (it sets the machine-wide kernel.perf_event_paranoid, which test_doctor and
# the other unprivileged tests read)
# The unprivileged perf-switch tier: as user nobody, with
# kernel.perf_event_paranoid set to 2 (and put back after), `ctxmon stat --
# kcount pingpong` must say it uses perf-switch and give per-thread
# voluntary/involuntary whose sums equal the kernel's getrusage of
# pingpong (kcount's wait4).  Voluntary must be exact in every run.  The
# events leave a dying thread before it is done; a leader's last switches
# are read from its zombie, but pingpong's parent here is kcount, which may
# reap it first (docs/unprivileged.md): involuntary may fall short by one
# in a run, so it must be exact in at least one of up to five runs and
# never over.  Then ctxmon's own child, always settled: exact every run.
. "$(dirname "$0")/lib.sh"
skip_unless_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
PARANOID=/proc/sys/kernel/perf_event_paranoid
[ -w "$PARANOID" ] || skip "cannot set $PARANOID"

OLD=$(cat "$PARANOID")
trap 'echo "$OLD" >"$PARANOID"; _cleanup' EXIT
echo 2 >"$PARANOID"

# nobody must reach the binaries and write its output
chmod 755 "$T"
mkdir "$T/bin" "$T/out"
# ctxmon finds its shared library next to it (rpath $ORIGIN)
cp -P "$CTXMON" "$(dirname "$CTXMON")"/libctxmon.so.* "$WL/kcount" "$WL/pingpong" "$T/bin/"
chmod -R a+rx "$T/bin"
chown nobody "$T/out"

run_nobody() {
	su nobody -s /bin/sh -c "$*"
}

exact_invol=0
for run in 1 2 3 4 5; do
	out=$T/out/run$run.json
	err=$T/out/run$run.err
	rc=0
	run_nobody "cd $T/out && $T/bin/ctxmon stat --json -o $out -- \
		$T/bin/kcount $T/bin/pingpong 20000 2>$err" || rc=$?
	echo "run $run: exit $rc"
	sed 's/^/  | /' "$err"
	san_check "run $run" "$err"
	[ "$rc" = 0 ] || { fail "run $run: stat exited $rc"; continue; }
	backend=$(json "$out" 'j["backend"]')
	[ "$backend" = perf-switch ] ||
		{ fail "run $run: backend $backend, expected perf-switch"; continue; }
	grep -q "using the perf-switch tier" "$err" ||
		fail "run $run: stderr does not name the perf-switch tier"
	pid=$(kcount_get "$err" pid)
	nv=$(kcount_get "$err" nvcsw)
	niv=$(kcount_get "$err" nivcsw)
	vol=$(json "$out" "sum(t['voluntary'] for t in j['threads'] if t['tgid'] == $pid)")
	invol=$(json "$out" "sum(t['involuntary'] for t in j['threads'] if t['tgid'] == $pid)")
	threads=$(json "$out" "len([t for t in j['threads'] if t['tgid'] == $pid])")
	perthread=$(json "$out" "[(t['tid'], t['voluntary'], t['involuntary']) for t in j['threads'] if t['tgid'] == $pid]")
	lost=$(json "$out" 'j["capture"]["lost"]')
	anom=$(json "$out" 'j["capture"]["anomalies"]')
	# no wakeups in this stream: a sleeper switched in is expected
	[ "$anom" = 0 ] || fail "run $run: $anom anomalies"
	# the leader's last switch-out comes after its exit record: the
	# kernel counts it (voluntary) at reap, as with every backend
	echo "  pingpong $pid: threads $perthread; traced voluntary $vol" \
		"(+1 leader exit) involuntary $invol; getrusage $nv $niv; lost $lost"
	[ "$threads" = 2 ] || fail "run $run: $threads thread rows, expected 2"
	[ "$lost" = 0 ] || { fail "run $run: $lost events lost"; continue; }
	[ $((vol + 1)) = "$nv" ] ||
		fail "run $run: voluntary $vol + 1 leader exit != getrusage $nv"
	d=$((niv - invol))
	if [ "$d" -lt 0 ]; then
		fail "run $run: involuntary $invol exceeds getrusage $niv"
	elif [ "$d" = 0 ]; then
		exact_invol=$run
		break
	else
		echo "  involuntary $d short (preempted after an exit record)"
	fi
done
[ "$exact_invol" != 0 ] ||
	fail "involuntary never equal to getrusage in 5 runs"

# the command itself (ctxmon's child, reaped only after its zombie's last
# counters are read): exact in every run, rows against the kernel's
# rusage that ctxmon's wait4() got (the rule of docs/accounting.md)
for run in 1 2 3; do
	out=$T/out/direct$run.json
	run_nobody "cd $T/out && $T/bin/ctxmon stat --json -o $out -- \
		$T/bin/pingpong 20000 2>$T/out/direct$run.err" ||
		{ fail "direct run $run failed"; continue; }
	san_check "direct run $run" "$T/out/direct$run.err"
	got=$(json "$out" "'%d %d %d %d %s' % (sum(t['voluntary'] + t['exit_counted'] for t in j['threads']), sum(t['involuntary'] - t['after_fold'] for t in j['threads']), j['kernel']['voluntary'], j['kernel']['involuntary'], j['backend'])")
	echo "direct run $run: rows voluntary, involuntary; getrusage; backend: $got"
	set -- $got
	[ "$5" = perf-switch ] || fail "direct run $run: backend $5"
	[ "$1" = "$3" ] && [ "$2" = "$4" ] ||
		fail "direct run $run: rows $1/$2 != getrusage $3/$4"
done

# the text output names the tier and what it cannot show
run_nobody "cd $T/out && $T/bin/ctxmon stat -- $T/bin/pingpong 2000" \
	>"$T/text.out" 2>&1 || fail "text run failed"
sed 's/^/  | /' "$T/text.out"
grep -q '^tier: perf-switch' "$T/text.out" || fail "no 'tier: perf-switch' line"
grep -q 'no wakeup latency' "$T/text.out" || fail "the limits are not said"
san_check text "$T/text.out"

finish
