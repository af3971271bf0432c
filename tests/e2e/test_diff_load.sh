#!/bin/bash
# ctxmon diff of two recordings of one workload (spin2: two spinners on
# CPU 1) under different loads: the second with a CPU hog on CPU 1.  The
# diff lists the spinners first (their runnable wait grew most), and
# every number it prints equals what `ctxmon report --json` gives for the
# same thread of each recording (threads matched by name and tid order).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
PY=/usr/bin/python3
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"

"$CTXMON" record -o "$T/a.data" -- "$WL/spin2" 200 1 2>"$T/ra.err" ||
	fail "record A: $(cat "$T/ra.err")"
bg taskset -c 1 sh -c 'while :; do :; done'
"$CTXMON" record -o "$T/b.data" -- "$WL/spin2" 200 1 2>"$T/rb.err" ||
	fail "record B: $(cat "$T/rb.err")"
kill "$BG_PID"
san_check record "$T/ra.err"
san_check record "$T/rb.err"

rc=0
"$CTXMON" diff "$T/a.data" "$T/b.data" >"$T/diff.txt" 2>"$T/diff.err" || rc=$?
echo "ctxmon diff a.data b.data -> exit $rc"
sed 's/^/  | /' "$T/diff.txt" "$T/diff.err"
[ "$rc" = 0 ] || fail "diff exit $rc"
san_check diff "$T/diff.err"
"$CTXMON" diff --json --limit 0 "$T/a.data" "$T/b.data" >"$T/diff.json" 2>>"$T/diff.err" ||
	fail "diff --json"
"$CTXMON" report --json -i "$T/a.data" >"$T/a.json" 2>/dev/null || fail "report A"
"$CTXMON" report --json -i "$T/b.data" >"$T/b.json" 2>/dev/null || fail "report B"

$PY - "$T/diff.json" "$T/a.json" "$T/b.json" <<'PYEOF' || fail "diff numbers"
import json, sys
d = json.load(open(sys.argv[1]))
sides = [json.load(open(p)) for p in sys.argv[2:4]]
bad = 0
# key each report's threads as diff does: PROC/COMM#rank by (pid, tid)
ref = []
for rep in sides:
    th = rep["threads"]
    lead = {t["tid"]: t["comm"] for t in th if t["tid"] == t["tgid"]}
    keyed = sorted(th, key=lambda t: (lead.get(t["tgid"], t["comm"]), t["comm"], t["tgid"], t["tid"]))
    m, rank, prev = {}, 0, None
    for t in keyed:
        pc = (lead.get(t["tgid"], t["comm"]), t["comm"])
        rank = rank + 1 if pc == prev else 0
        prev = pc
        m["%s/%s#%d" % (pc[0], pc[1], rank)] = t
    ref.append(m)
rows = d["rows"]
if len(rows) != len(set(ref[0]) | set(ref[1])):
    print("rows %d, threads %d" % (len(rows), len(set(ref[0]) | set(ref[1])))); bad += 1
for r in rows:
    for side, s in (("a", 0), ("b", 1)):
        t = ref[s].get(r["key"])
        if t is None:
            continue
        want = {"wait": t["wait_ns"] / 1e6, "run": t["run_ns"] / 1e6,
                "voluntary": t["voluntary"], "involuntary": t["involuntary"],
                "migrations": t["migrations"]}
        for k, v in want.items():
            if abs(r[side][k] - v) > 1e-9 * max(1, abs(v)):
                print("%s %s %s: diff %r, report %r" % (r["key"], side, k, r[side][k], v)); bad += 1
ch = [abs(r["b"]["wait"] - r["a"]["wait"]) for r in rows]
if ch != sorted(ch, reverse=True):
    print("not sorted by the change of wait: %s" % ch); bad += 1
top = rows[0]
print("top: %s wait %.2f ms -> %.2f ms (%+.2f ms)" % (top["key"], top["a"]["wait"],
      top["b"]["wait"], top["b"]["wait"] - top["a"]["wait"]))
# the two spinners (ranks 1 and 2, the threads spin2 creates) come first
if sorted(r["key"] for r in rows[:2]) != ["spin2/spin2#1", "spin2/spin2#2"]:
    print("first rows are not the spinners: %s" % [r["key"] for r in rows[:2]]); bad += 1
if not top["b"]["wait"] > top["a"]["wait"]:
    print("the top thread's wait did not grow under the hog"); bad += 1
print("checked %d rows against ctxmon report --json of each recording" % len(rows))
sys.exit(1 if bad else 0)
PYEOF

# the same from the two reports' --json: stat/report JSON is a diff input
"$CTXMON" diff --json --limit 0 "$T/a.json" "$T/b.json" >"$T/diffj.json" 2>>"$T/diff.err" ||
	fail "diff of two report --json outputs"
$PY - "$T/diff.json" "$T/diffj.json" <<'PYEOF' || fail "diff of JSON outputs differs from diff of recordings"
import json, sys
a, b = (json.load(open(p))["rows"] for p in sys.argv[1:3])
keys = ("wait", "run", "sleep", "voluntary", "involuntary", "migrations", "wakeups")
ra = [(r["key"], [r[s][k] for s in "ab" for k in keys]) for r in a]
rb = [(r["key"], [r[s][k] for s in "ab" for k in keys]) for r in b]
print("diff of report --json outputs: %d rows, %s" % (len(rb), "same as the recordings'" if ra == rb else "DIFFERENT"))
sys.exit(0 if ra == rb else 1)
PYEOF
finish
