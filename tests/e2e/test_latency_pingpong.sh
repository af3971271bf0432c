#!/bin/bash
# `ctxmon latency` on a ping-pong pair (workload pingpong): each thread is
# woken by its partner, the histograms are not empty and agree with the
# counts, the quantiles are ordered, and the maximum comes with its
# context; text, linear buckets and `stat --causes` agree on the rest.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/causes_lib.sh"
skip_unless_capture

N=5000
out=$T/lat.json
rc=0
"$CTXMON" latency --json --buckets 12 -o "$out" -- "$WL/pingpong" "$N" 2>"$T/lat.err" || rc=$?
echo "latency --json -- pingpong $N -> exit $rc"
sed 's/^/  | /' "$T/lat.err"
san_check latency "$T/lat.err"
[ "$rc" = 0 ] || fail "ctxmon latency exited $rc"
if [ ! -s "$out" ] || ! json_check "$out"; then
	fail "no valid JSON"
	finish
fi
python3 - "$out" "$N" <<'PY' || fail "latency JSON checks"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
bad = []
th = [g for g in j["groups"] if g["kind"] == "thread" and g["comm"] == "pingpong"]
if len(th) != 2:
    sys.exit("expected 2 pingpong threads, got %d" % len(th))
for g in th:
    l, me = g["latency"], g["id"]
    other = [x["id"] for x in th if x["id"] != me][0]
    from_partner = sum(p["count"] for p in j["pairs"] if p["kind"] == "wake"
                       and p["to_tid"] == me and p["from_tid"] == other
                       and p["ctx"] == "task")
    from_irq = l["from"]["irq"] + l["from"]["softirq"]
    m = l.get("max", {})
    print("  tid %d: %d wakeups, %d by %d; min %d p50 %d p90 %d p99 %d p99.9 %d max %d ns"
          % (me, l["count"], from_partner, other, l["min_ns"], l["p50_ns"],
             l["p90_ns"], l["p99_ns"], l["p999_ns"], l["max_ns"]))
    print("    max: woken at %s by %s (%s) on cpu%s [%s], ran at %s on cpu%s after %s (%s)"
          % (m.get("wake_ts_ns"), m.get("waker_tid"), m.get("waker_comm"),
             m.get("waker_cpu"), m.get("waker_ctx"), m.get("run_ts_ns"),
             m.get("cpu"), m.get("prev_tid"), m.get("prev_comm")))
    # A round trip wakes a thread only when it got to sleep before the
    # byte came (on one CPU the partner often preempts it first).
    if l["count"] < n // 10:
        bad.append("tid %d: %d wakeups for %d round trips" % (me, l["count"], n))
    if from_irq > l["count"] // 10:
        bad.append("tid %d: %d of its wakeups marked as raised in irq context: "
                   "the backend's context flags are wrong" % (me, from_irq))
    if from_partner < l["count"] * 0.95:
        bad.append("tid %d: only %d of %d wakeups by its partner %d"
                   % (me, from_partner, l["count"], other))
    if sum(b["count"] for b in g["hist"]) != l["count"]:
        bad.append("tid %d: log2 histogram does not add up to the count" % me)
    if sum(b["count"] for b in g["linear"]) != l["count"] or len(g["linear"]) != 12:
        bad.append("tid %d: linear histogram (12 buckets) does not add up" % me)
    if not (l["min_ns"] <= l["p50_ns"] <= l["p90_ns"] <= l["p99_ns"] <= l["p999_ns"] <= l["max_ns"]):
        bad.append("tid %d: quantiles out of order" % me)
    # The task before it on that CPU is unknown (null) only where the
    # kernel reported no switch-in (seen for the threads of this VM's
    # PID 1): the switch-out then gives the time it ran from, and the
    # account counts an anomaly.
    unseen = m.get("prev_tid", 0) is None and j["capture"].get("anomalies", 0) > 0
    if unseen:
        print("    max: its switch-in was not reported (%d anomalies): "
              "the task before it is unknown" % j["capture"]["anomalies"])
    if not m or m["tid"] != me or m["ns"] != l["max_ns"] or \
       m["run_ts_ns"] - m["wake_ts_ns"] != m["ns"] or m["cpu"] is None or \
       (m["prev_tid"] is None and not unseen) or m["waker_tid"] is None:
        bad.append("tid %d: maximum without its context: %s" % (me, m))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY

# The text form shows the histograms and the maximum's context.
"$CTXMON" latency -o "$T/lat.txt" -- "$WL/pingpong" 500 2>"$T/lat2.err" ||
	fail "ctxmon latency (text) failed"
san_check latency-text "$T/lat2.err"
grep -q 'nsecs.*count.*distribution' "$T/lat.txt" || fail "text: no histogram"
grep -q '^  max .* woken at .* ran at ' "$T/lat.txt" || fail "text: no maximum context"
grep -q '^who wakes whom' "$T/lat.txt" || fail "text: no waker table"
sed -n '1,12p' "$T/lat.txt" | sed 's/^/  | /'

# And stat --causes: the same pairs, and the parts add up.
causes_stat pp -- "$WL/pingpong" 2000 || finish
causes_sums "$T/pp.json"
finish
