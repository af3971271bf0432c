#!/bin/bash
# The last tier, /proc: as user nobody with perf_event_open() and bpf()
# refused by a seccomp filter (the noperf workload, as a kernel with
# perf_event_paranoid 3 would), ctxmon must fall back to the proc backend
# and say so.
#  1. `stat -- kcount pingpong`: stderr names the proc tier, the table's
#     "tier:" line says what it cannot show; the rows are samples, so each
#     thread's counts are at most its share of the kernel's getrusage, and
#     the rows add up to most of it.
#  2. `stat -p PID -I 200` on a running pingpong of another user (root):
#     per-thread counts per interval, whose sum over the intervals lies
#     within what /proc/PID/task/*/status says happened over the run; and
#     with --rates, per second.
. "$(dirname "$0")/lib.sh"
skip_unless_root
id nobody >/dev/null 2>&1 || skip "no user nobody"
[ -x "$WL/noperf" ] || skip "no noperf workload in $WL"

chmod 755 "$T"
mkdir "$T/bin" "$T/out"
# ctxmon finds its shared library next to it (rpath $ORIGIN)
cp -P "$CTXMON" "$(dirname "$CTXMON")"/libctxmon.so.* "$WL/kcount" "$WL/pingpong" "$WL/noperf" "$T/bin/"
chmod -R a+rx "$T/bin"
chown nobody "$T/out"
B=$T/bin

run_nobody() {
	su nobody -s /bin/sh -c "$*"
}

# --- 1. a command --------------------------------------------------------
out=$T/out/cmd.json
err=$T/out/cmd.err
rc=0
run_nobody "cd $T/out && $B/noperf $B/ctxmon stat --json -o $out -- \
	$B/kcount $B/pingpong 20000 2>$err" || rc=$?
echo "command: exit $rc"
sed 's/^/  | /' "$err"
san_check command "$err"
[ "$rc" = 0 ] || fail "stat exited $rc"
grep -q "perf-switch not used: .*refused" "$err" ||
	fail "stderr does not say why perf-switch was not used"
grep -q "using the proc tier instead" "$err" ||
	fail "stderr does not say the proc tier is used"
backend=$(json "$out" 'j["backend"]')
[ "$backend" = proc ] || fail "backend $backend, expected proc"
pid=$(kcount_get "$err" pid)
nv=$(kcount_get "$err" nvcsw)
niv=$(kcount_get "$err" nivcsw)
if [ -n "$pid" ] && [ "$backend" = proc ]; then
	vol=$(json "$out" "sum(t['voluntary'] for t in j['threads'] if t['tgid'] == $pid)")
	invol=$(json "$out" "sum(t['involuntary'] for t in j['threads'] if t['tgid'] == $pid)")
	n=$(json "$out" "len([t for t in j['threads'] if t['tgid'] == $pid])")
	echo "  pingpong $pid: $n threads, sampled voluntary $vol involuntary" \
		"$invol; getrusage $nv $niv"
	[ "$n" = 2 ] || fail "$n thread rows for pingpong, expected 2"
	# a sample is never ahead of the kernel's count...
	[ "$vol" -le "$nv" ] || fail "sampled voluntary $vol > getrusage $nv"
	[ "$invol" -le "$niv" ] || fail "sampled involuntary $invol > getrusage $niv"
	# ...and a run of ~0.2 s sampled every 10 ms or so misses little:
	# only what came after the last sample.  The same holds for both
	# kinds; involuntary counts are small (a few dozen), so one more
	# sample period's worth (a few switches) is allowed besides half.
	[ $((vol * 2)) -ge "$nv" ] ||
		fail "sampled voluntary $vol is under half of getrusage $nv"
	[ $((invol * 2 + 4)) -ge "$niv" ] ||
		fail "sampled involuntary $invol is under half of getrusage $niv (+4)"
fi
run_nobody "cd $T/out && $B/noperf $B/ctxmon stat -- $B/pingpong 2000" \
	>"$T/text.out" 2>&1 || fail "text run failed"
sed 's/^/  | /' "$T/text.out"
grep -q '^tier: proc' "$T/text.out" || fail "no 'tier: proc' line"
grep -q 'no wakeup latency' "$T/text.out" || fail "the limits are not said"
grep -q 'getrusage totals are exact' "$T/text.out" ||
	fail "the comparison with getrusage is not explained"

# --- 2. an existing process of another user, per interval ------------------
bg "$WL/pingpong" 1000000000
PP=$BG_PID
sleep 0.2
# switches of the whole process so far, from the kernel's own counters
task_sums() {
	cat /proc/"$PP"/task/*/status 2>/dev/null |
		awk '/^voluntary_ctxt/ { v += $2 } /^nonvoluntary_ctxt/ { i += $2 }
		     END { print v + 0, i + 0 }'
}
read -r v0 i0 <<<"$(task_sums)"
out=$T/out/pid.json
rc=0
run_nobody "cd $T/out && $B/noperf $B/ctxmon stat -p $PP -I 200 --duration 1 \
	--json -o $out 2>$T/out/pid.err" || rc=$?
read -r v1 i1 <<<"$(task_sums)"
sed 's/^/  | /' "$T/out/pid.err"
san_check pid "$T/out/pid.err"
[ "$rc" = 0 ] || fail "stat -p exited $rc"
python3 - "$out" "$PP" $((v1 - v0)) $((i1 - i0)) <<'PY' || fail "stat -p -I output"
import json, sys
path, pid, dv, di = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
recs = [json.loads(l) for l in open(path) if l.strip()]
ok = True
def bad(msg):
    global ok
    print("FAIL: " + msg, file=sys.stderr)
    ok = False
print("  %d intervals; /proc over the run: voluntary %d involuntary %d" % (len(recs), dv, di))
if len(recs) < 4:
    bad("%d intervals in 1 s at 200 ms" % len(recs))
sv = si = 0
for r in recs:
    rows = [t for t in r["threads"] if t["tgid"] == pid]
    dur = r["duration_ns"] / 1e9
    line = ", ".join("%d: %d vol %d invol (%.0f/s)" % (t["tid"], t["voluntary"],
                     t["involuntary"], (t["voluntary"] + t["involuntary"]) / dur)
                     for t in rows)
    print("  interval %s (%.3f s): %s" % (r.get("interval"), dur, line))
    if r["backend"] != "proc":
        bad("interval backend %s" % r["backend"])
    if len(rows) != 2:
        bad("%d thread rows, expected 2" % len(rows))
    if r.get("interval", 0) > 0 and not all(t["voluntary"] > 0 for t in rows):
        bad("a thread with no voluntary switch in an interval")
    sv += sum(t["voluntary"] for t in rows)
    si += sum(t["involuntary"] for t in rows)
print("  sum over intervals: voluntary %d involuntary %d" % (sv, si))
# the intervals lie inside the window the two /proc reads bound
if not (0 < sv <= dv and 0 < si <= di):
    bad("interval sums %d/%d not within /proc's %d/%d" % (sv, si, dv, di))
# the outer window also holds su, exec and set-up: most, not all
if sv < 0.4 * dv:
    bad("interval sums cover under 40%% of the run (%d of %d)" % (sv, dv))
sys.exit(0 if ok else 1)
PY

# the same as rates (a per-thread pidstat -w): two rows per interval
run_nobody "cd $T/out && $B/noperf $B/ctxmon stat -p $PP -I 200 --duration 0.6 \
	--rates" >"$T/rates.out" 2>&1 || fail "stat -p --rates failed"
sed 's/^/  | /' "$T/rates.out"
n=$(grep -c "^ *[0-9]* *$PP pingpong" "$T/rates.out")
[ "$n" -ge 4 ] || fail "--rates: $n ping-pong rows, expected 2 per interval"
grep -q "SW/s *VOL/s *INV/s" "$T/rates.out" || fail "--rates: no rate columns"

finish
