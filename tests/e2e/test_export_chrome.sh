#!/bin/bash
# Issue 17, part 4: `ctxmon export --format chrome-json` writes a Chrome
# trace event file: valid JSON (python's json), every event well formed,
# every flow end has its start, the CPU tracks hold one slice per switch-in
# of a non-idle task (counted in the ftrace text / `ctxmon script`), and at
# most one more per switch-out of a task the CPU had not switched to (an
# untraced switch-in, which the bpf backend dates: docs/accounting.md), and
# per thread the "running" slices add up to report's run time.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
D=$(cd "$(dirname "$0")/../data" && pwd)

# check JSON TEXT [REPORT_JSON]
check() {
	python3 - "$@" <<'PY'
import json, re, sys, collections
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
bad = []
ev = d["traceEvents"]
starts, ends = set(), []
cpu_slices = 0
run = collections.Counter()
names = {}
for e in ev:
    ph = e.get("ph")
    if ph not in ("X", "s", "f", "M") or not isinstance(e.get("pid"), int) \
            or not isinstance(e.get("tid"), int):
        bad.append("malformed %s" % e); break
    if ph == "M":
        if e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        continue
    if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
        bad.append("bad ts %s" % e); break
    if ph == "X":
        if e.get("dur", -1) < 0:
            bad.append("bad dur %s" % e); break
        if e["cat"] == "sched":
            cpu_slices += 1
        elif e["name"] == "running":
            run[e["tid"]] += round(e["dur"] * 1000)
    elif ph == "s":
        starts.add(e["id"])
    else:
        ends.append(e["id"])
missing = [i for i in ends if i not in starts]
if missing:
    bad.append("%d flow ends without a start" % len(missing))
if not ends:
    bad.append("no flows")
want = len(re.findall(r"sched_switch: .* next_pid=(?!0 )\d+ ", text))
cur, more = {}, 0
for cpu, pv, nx in re.findall(r"\[(\d+)\].*sched_switch: .* prev_pid=(\d+) .* next_pid=(\d+) ", text):
    if cpu in cur and cur[cpu] != pv and pv != "0":
        more += 1
    cur[cpu] = nx
if not want <= cpu_slices <= want + more:
    bad.append("CPU slices %d, switch-ins of tasks %d (+ up to %d untraced)"
               % (cpu_slices, want, more))
nxt = dict((t, c) for c, t in re.findall(r"next_comm=(\S+) next_pid=(\d+)", text))
if not nxt or any(names.get(int(t)) is None for t in nxt if t != "0"):
    bad.append("thread names missing")
if len(sys.argv) > 3:
    rep = json.load(open(sys.argv[3]))
    for t in rep["threads"]:
        if run[t["tid"]] != t["run_ns"]:
            bad.append("tid %d: running %d, report %d" % (t["tid"], run[t["tid"]], t["run_ns"]))
for b in bad:
    print(b, file=sys.stderr)
print("%d events, %d CPU slices, %d flows" % (len(ev), cpu_slices, len(ends)), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

TXT=$D/traces/pipe-6.18-sched.txt
"$CTXMON" import -q "$TXT" -o "$T/imp.data" 2>/dev/null || fail "import exited $?"
"$CTXMON" export -q -f chrome-json -i "$T/imp.data" -o "$T/imp.json" 2>"$T/e1.err" ||
	fail "export exited $?: $(tail -n 2 "$T/e1.err")"
san_check export "$T/e1.err"
check "$T/imp.json" "$TXT" || fail "imported trace: chrome-json checks failed"

if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/events/sched/sched_switch/format ]; then
	"$CTXMON" record -q -o "$T/m.data" -- "$WL/multi5" >/dev/null 2>&1 ||
		fail "record exited $?"
	"$CTXMON" export -q -f chrome-json -i "$T/m.data" -o "$T/m.json" 2>"$T/e2.err" ||
		fail "export exited $?: $(tail -n 2 "$T/e2.err")"
	san_check export "$T/e2.err"
	"$CTXMON" script -i "$T/m.data" >"$T/m.txt" 2>/dev/null
	"$CTXMON" report --json --per-thread -i "$T/m.data" >"$T/r.json" 2>/dev/null
	check "$T/m.json" "$T/m.txt" "$T/r.json" || fail "live: chrome-json checks failed"
fi
finish
