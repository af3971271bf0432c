#!/bin/bash
# Acceptance 5: an imported trace_pipe text reports the same per-thread
# counts as the recording of the same activity.
#
# 1. The checked-in fixture (real trace_pipe output of the development VM)
#    imported: every thread's switch-outs, voluntary (blocked), involuntary
#    (R, R+) and exit (X, Z) counts equal those counted straight from its
#    sched_switch lines.  Needs no privileges.
# 2. Live, as root: trace_pipe of a private tracefs instance and `ctxmon
#    record -a` capture a pipe ping-pong at the same time; its threads'
#    counts from the imported text equal those from the recording.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"

FIX=$(dirname "$0")/../data/traces/pipe-6.18-sched.txt
"$CTXMON" import -q "$FIX" -o "$T/fix.data" 2>"$T/imp.err" || fail "import of the fixture exited $?"
san_check import "$T/imp.err"
"$CTXMON" report --json -i "$T/fix.data" >"$T/fix.json" 2>"$T/rep.err" || fail "report exited $?"
san_check report "$T/rep.err"
python3 - "$FIX" "$T/fix.json" <<'PY' || fail "fixture: counts differ from its sched_switch lines"
import json, re, sys
pat = re.compile(r"sched_switch: prev_comm=.* prev_pid=(\d+) prev_prio=\d+ "
                 r"prev_state=(\S+) ==> ")
want = {}
for line in open(sys.argv[1]):
    m = pat.search(line)
    if not m or m.group(1) == "0":
        continue
    tid, st = int(m.group(1)), m.group(2)
    k = "exit" if st.rstrip("+") in ("X", "Z") else \
        "involuntary" if st in ("R", "R+") else "voluntary"
    c = want.setdefault(tid, {"voluntary": 0, "involuntary": 0, "exit": 0})
    c[k] += 1
got = {t["tid"]: t for t in json.load(open(sys.argv[2]))["threads"]}
bad = 0
for tid, c in sorted(want.items()):
    t = got.get(tid)
    have = t and {"voluntary": t["voluntary"], "involuntary": t["involuntary"],
                  "exit": t["exit_switch"]}
    if have != c:
        bad += 1
        print("tid %d: text %s, report %s" % (tid, c, have), file=sys.stderr)
print("fixture: %d threads compared" % len(want))
sys.exit(1 if bad or len(want) < 5 else 0)
PY

[ "$(id -u)" = 0 ] || { echo "live part skipped: needs root"; finish; }
skip_unless_tracefs
INST=/sys/kernel/tracing/instances/ctxmon-e2e-$$
mkdir "$INST" || skip "cannot create a tracefs instance"
trap 'echo 0 > "$INST/tracing_on" 2>/dev/null; rmdir "$INST" 2>/dev/null; _cleanup' EXIT
echo 0 >"$INST/tracing_on"
echo 4096 >"$INST/buffer_size_kb"
for e in sched_switch sched_waking sched_wakeup sched_wakeup_new \
	sched_migrate_task sched_process_fork sched_process_exec sched_process_exit; do
	echo 1 >"$INST/events/sched/$e/enable"
done
cat "$INST/trace_pipe" >"$T/live.txt" &
cat_pid=$!
BG_PIDS="$BG_PIDS $cat_pid"
echo 1 >"$INST/tracing_on"
"$CTXMON" record -q -a -o "$T/live.data" 2>"$T/rec.err" &
rec=$!
recording_started "$T/live.data" $rec || fail "record did not start: $(cat "$T/rec.err")"
sleep 0.2
"$WL/pingpong" 5000 >/dev/null &
pp=$!
wait $pp
sleep 0.5
kill -INT $rec
wait $rec || fail "record exited $?"
san_check record "$T/rec.err"
echo 0 >"$INST/tracing_on"
sleep 0.5
kill $cat_pid 2>/dev/null
wait $cat_pid 2>/dev/null

"$CTXMON" import -q "$T/live.txt" -o "$T/live-text.data" 2>"$T/imp.err" || fail "import exited $?"
for f in live live-text; do
	"$CTXMON" report --json --pid $pp -i "$T/$f.data" >"$T/$f.json" 2>"$T/rep.err" ||
		fail "report of $f exited $?"
done
# The text has no tgids: pick the ping-pong's threads by the recording's.
python3 - "$T/live.json" "$T/live-text.data" "$CTXMON" "$T" <<'PY' || fail "live: counts differ"
import json, subprocess, sys
rec = json.load(open(sys.argv[1]))["threads"]
tids = ",".join(str(t["tid"]) for t in rec)
out = subprocess.run([sys.argv[3], "report", "--json", "--tid", tids, "-i", sys.argv[2]],
                     capture_output=True, text=True, check=True).stdout
txt = {t["tid"]: t for t in json.loads(out)["threads"]}
keys = ("switches", "voluntary", "involuntary", "exit_switch")
bad = 0
for t in rec:
    u = txt.get(t["tid"])
    if u is None or any(t[k] != u[k] for k in keys):
        bad += 1
        print("tid %d: recording %s, text %s" % (t["tid"], [t[k] for k in keys],
              u and [u[k] for k in keys]), file=sys.stderr)
print("live: %d ping-pong threads compared" % len(rec))
sys.exit(1 if bad or len(rec) != 2 else 0)
PY
finish
