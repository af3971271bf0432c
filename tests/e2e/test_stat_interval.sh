#!/bin/bash
# `ctxmon stat -I` with a command: one JSON record per interval, each with
# that interval's own counts; summed over the intervals they must equal the
# kernel's counts for the whole run (kcount's wait4 rusage), and the last
# record must carry the comparison, matching.  Intervals must tile the run:
# each record's duration is its own, and they add up to the capture.  And
# no thread has more time in an interval (run + wait + sleep) than the
# interval lasted, to the nanosecond: bpf-agg's rows, read up to 100 ms
# after the tick, once showed 600 ms of sleep in an interval of 500, and
# later 1.2 ms more than the interval (the interval ended before its rows
# were read), or 20 us (a thread that switched out between the CPUs' read
# and the rows' was taken for one whose switch-out was missed).  No thread
# of this workload misses a switch-out: none may be marked incomplete.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

out=$T/interval.json
err=$T/interval.err
rc=0
"$CTXMON" stat -I 50 --json -o "$out" -- "$WL/kcount" "$WL/pingpong" 30000 \
	2>"$err" || rc=$?
sed 's/^/  | /' "$err"
san_check interval "$err"
[ "$rc" = 0 ] || fail "stat exited $rc"
nv=$(kcount_get "$err" nvcsw)
niv=$(kcount_get "$err" nivcsw)
pid=$(kcount_get "$err" pid)
[ -n "$nv" ] || { fail "no kcount line"; finish; }

python3 - "$out" "$pid" "$nv" "$niv" <<'PY' || fail "interval sums do not match the kernel"
import json, sys
path, pid, nv, niv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
recs = [json.loads(l) for l in open(path) if l.strip()]
print("  %d interval records" % len(recs))
ok = len(recs) >= 2
vol = inv = 0
for r in recs:
    for t in r["threads"]:
        if t["tgid"] == pid:
            vol += (t["voluntary"] + t.get("exit_counted", 0) -
                    t.get("after_fold_voluntary", 0))
            inv += t["involuntary"] - t.get("after_fold", 0)
    if [r2["interval"] for r2 in recs] != list(range(len(recs))):
        ok = False
    for t in r["threads"]:
        life = t["run_ns"] + t["wait_ns"] + t["sleep_s_ns"] + \
            t["sleep_d_ns"] + t["sleep_other_ns"]
        if life > r["duration_ns"]:
            print("  FAIL: interval %d lasted %d ns, thread %d has %d ns" % (
                r["interval"], r["duration_ns"], t["tid"], life))
            ok = False
        if t["incomplete"]:
            print("  FAIL: interval %d: thread %d marked incomplete" % (
                r["interval"], t["tid"]))
            ok = False
last = recs[-1]
k = last.get("kernel")
print("  summed over intervals (workload): voluntary %d, involuntary %d;"
      " kernel: nvcsw %d, nivcsw %d" % (vol, inv, nv, niv))
if vol != nv or inv != niv:
    print("  FAIL: interval sums differ from the kernel"); ok = False
if not k or not k["match"]:
    print("  FAIL: last record has no matching kernel comparison: %s" % k); ok = False
if any("kernel" in r for r in recs[:-1]):
    print("  FAIL: kernel comparison before the last record"); ok = False
sys.exit(0 if ok else 1)
PY
finish
