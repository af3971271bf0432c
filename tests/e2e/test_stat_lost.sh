#!/bin/bash
# System-wide capture on a loaded machine, through the perf ring buffers
# (the event stream that can lose): `ctxmon stat -a -I 1000 --duration
# 10` with a pipe ping-pong running in the background.  Every interval record
# must carry the lost-event count and it must be 0 (and no ordering
# violation); the table form must show the lost count too.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
# Loss depends on how fast the reader drains the rings: measure the build
# users run, not the sanitizer build (3-5x slower per event).
[ -x "${CTXMON_REL:-}" ] && CTXMON=$CTXMON_REL
echo "using $CTXMON"

bg "$WL/pingpong" 1000000000
load=$BG_PID

out=$T/lost.json
RC=0
timeout 60 "$CTXMON" stat --backend perf -a -I 1000 --duration 10 --json -o "$out" \
	2>"$T/lost.err" || RC=$?
echo "ctxmon stat -a -I 1000 --duration 10 --json (load: pingpong pid $load) -> exit $RC"
sed 's/^/  | /' "$T/lost.err" | head -n 10
san_check json "$T/lost.err"
[ "$RC" = 0 ] || fail "stat -a -I 1000 --duration 10 --json: exit $RC"
kill -0 "$load" 2>/dev/null || fail "the background load died"

if [ ! -s "$out" ] || ! json_check "$out"; then
	fail "no valid NDJSON in $out"
else
	python3 - "$out" "$load" <<'PY' || fail "interval records (see above)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
load = int(sys.argv[2])
bad = 0
print("  %d records" % len(recs))
for r in recs:
    c = r.get("capture", {})
    pp = [p for p in r.get("processes", []) if p.get("pid") == load]
    sw = pp[0]["switches"] if pp else "-"
    print("  interval=%s duration_ns=%s events=%s lost=%s lost_per_cpu=%s "
          "order_violations=%s load_switches=%s"
          % (r.get("interval"), r.get("duration_ns"), c.get("events"),
             c.get("lost"), c.get("lost_per_cpu"), c.get("order_violations"),
             sw))
    if "interval" not in r:
        print("  record without \"interval\""); bad += 1
    if c.get("lost") != 0 or any(c.get("lost_per_cpu", [None])):
        print("  lost count missing or not 0"); bad += 1
    if c.get("order_violations") != 0:
        print("  order violations missing or not 0"); bad += 1
    if not c.get("events"):
        print("  no events"); bad += 1
if not 9 <= len(recs) <= 11:
    print("  expected about 10 interval records, got %d" % len(recs)); bad += 1
if not any(p.get("pid") == load and p.get("switches", 0) > 1000
           for r in recs for p in r.get("processes", [])):
    print("  the load (pid %d) is not seen switching" % load); bad += 1
sys.exit(1 if bad else 0)
PY
fi

# The table form says how much was lost, too.
RC=0
timeout 60 "$CTXMON" stat --backend perf -a -I 1000 --duration 3 >"$T/table.out" \
	2>"$T/table.err" || RC=$?
echo "ctxmon stat -a -I 1000 --duration 3 -> exit $RC, $(wc -l <"$T/table.out") lines"
grep -i lost "$T/table.out" | head -n 5 | sed 's/^/  > /'
san_check table "$T/table.err"
[ "$RC" = 0 ] || fail "stat -a -I 1000 --duration 3: exit $RC"
grep -qi lost "$T/table.out" || fail "the table does not show the lost count"

finish
