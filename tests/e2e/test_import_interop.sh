#!/bin/bash
# runs: alone
# (three system-wide tracers (perf, a tracefs instance,
# ctxmon record -a) must each see every switch of the run)
# Issue 13, acceptance 3: the traces people already have, of one run,
# import to the per-thread counts of a live ctxmon capture of that run.
#
# As root, one pipe ping-pong runs while four tracers watch it at once:
# `ctxmon record -a` (live), `perf sched record` (perf.data), and a private
# tracefs instance saved by `trace-cmd extract` (trace.dat).  Then, for each
# ping-pong thread, switches / voluntary / involuntary / exit from
#   - the live recording,
#   - perf.data imported directly, and its `perf script` text imported,
#   - trace.dat imported directly, and its `trace-cmd report` text imported
# must be equal, and the switch-outs must equal an independent awk count
# of sched_switch lines (prev_pid=) of `perf script` and of `trace-cmd
# report -N`.  KEEP=DIR keeps the traces (how tests/data/import-* were made).
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
# a leak inside libtracecmd/libtraceevent is theirs (see the file)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
[ "$(id -u)" = 0 ] || skip "needs root (perf sched record, tracefs)"
command -v perf >/dev/null || skip "perf not installed (Debian: linux-perf)"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed"
skip_unless_tracefs
TR=/sys/kernel/tracing
[ -d "$TR/instances" ] || skip "no tracefs instances"

INST=ctxmon-interop-$$
cleanup_inst() {
	[ -d "$TR/instances/$INST" ] && echo 0 >"$TR/instances/$INST/tracing_on"
	rmdir "$TR/instances/$INST" 2>/dev/null
	_cleanup
}
trap cleanup_inst EXIT
mkdir "$TR/instances/$INST" || skip "cannot create a tracefs instance"
echo 8192 >"$TR/instances/$INST/buffer_size_kb"
for e in sched_switch sched_waking sched_wakeup sched_wakeup_new \
	sched_migrate_task sched_process_fork sched_process_exec sched_process_exit; do
	echo 1 >"$TR/instances/$INST/events/sched/$e/enable"
done

N=${PINGPONG_N:-3000}
# perf starts disabled and is enabled through its control fifo: its "ack"
# says it records (it may take seconds to list the machine's tasks first)
mkfifo "$T/ctl" "$T/ack"
perf sched record -m 16M -D -1 --control "fifo:$T/ctl,$T/ack" -o "$T/perf.data" >"$T/perf.log" 2>&1 &
perf_pid=$!
BG_PIDS="$BG_PIDS $perf_pid"
exec 8<>"$T/ack"
echo enable >"$T/ctl"
read -r -t 60 -u 8 ack || skip "perf sched record did not start in 60s: $(tail -n 1 "$T/perf.log")"
"$CTXMON" record -q -a -o "$T/live.data" 2>"$T/rec.err" &
rec=$!
BG_PIDS="$BG_PIDS $rec"
echo 1 >"$TR/instances/$INST/tracing_on"
# ctxmon's capture is live once its recording has its metadata (the
# instance and perf are on already: the write and the ack above)
recording_started "$T/live.data" "$rec" ||
	{ fail "ctxmon record -a did not start: $(tail -n 1 "$T/rec.err")"; finish; }
"$WL/pingpong" "$N" >/dev/null &
pp=$!
wait $pp
sleep 0.3
echo 0 >"$TR/instances/$INST/tracing_on"
kill -INT $rec $perf_pid
wait $rec || fail "ctxmon record exited $?"
wait $perf_pid
san_check record "$T/rec.err"
grep -q 'Captured and wrote' "$T/perf.log" || skip "perf sched record wrote nothing: $(tail -n 1 "$T/perf.log")"
# trace-cmd extract reads the instance's buffers into a trace.dat (it may
# exit 1 over ftrace files this VM refuses; the file is what counts)
(cd "$T" && trace-cmd extract -B "$INST" -o "$T/trace.dat" >"$T/extract.log" 2>&1)
[ -s "$T/trace.dat" ] || skip "trace-cmd extract wrote no trace.dat: $(tail -n 1 "$T/extract.log")"

perf script -i "$T/perf.data" >"$T/perf.txt" 2>/dev/null || fail "perf script exited $?"
trace-cmd report -i "$T/trace.dat" >"$T/tc.txt" 2>/dev/null || fail "trace-cmd report exited $?"
trace-cmd report -N -i "$T/trace.dat" >"$T/tc-raw.txt" 2>/dev/null || fail "trace-cmd report -N exited $?"

for f in perf.data perf.txt trace.dat tc.txt; do
	"$CTXMON" import "$T/$f" -o "$T/$f.rec" 2>"$T/imp.err" || fail "import of $f exited $?: $(tail -n 1 "$T/imp.err")"
	san_check "import $f" "$T/imp.err"
	grep -h "ctxmon import: " "$T/imp.err" | tail -n 1
done
"$CTXMON" report --json --pid $pp -i "$T/live.data" >"$T/live.json" 2>"$T/rep.err" || fail "report exited $?"
tids=$(python3 -c 'import json,sys; print(",".join(str(t["tid"]) for t in json.load(open(sys.argv[1]))["threads"]))' "$T/live.json")
[ -n "$tids" ] || fail "the live recording has no ping-pong thread"
for f in perf.data perf.txt trace.dat tc.txt; do
	"$CTXMON" report --json --tid "$tids" -i "$T/$f.rec" >"$T/$f.json" 2>"$T/rep.err" ||
		fail "report of $f exited $?"
	san_check "report $f" "$T/rep.err"
done

# Independent truth: switch-outs per prev_pid, counted by awk.
count='/ sched_switch: / || /:sched_switch: / { for (i = 1; i <= NF; i++) if ($i ~ /^prev_pid=/) { split($i, a, "="); n[a[2]]++ } }
END { for (p in n) print p, n[p] }'
awk "$count" "$T/perf.txt" >"$T/awk-perf.txt"
awk "$count" "$T/tc-raw.txt" >"$T/awk-tc.txt"

python3 - "$T" "$tids" <<'PY' || fail "imported counts differ from the live capture or from awk"
import json, sys
d, tids = sys.argv[1], [int(t) for t in sys.argv[2].split(",")]
keys = ("switches", "voluntary", "involuntary", "exit_switch")
def rows(f):
    return {t["tid"]: [t[k] for k in keys] for t in json.load(open(f))["threads"]}
live = rows(d + "/live.json")
awk = {n: {int(l.split()[0]): int(l.split()[1]) for l in open(d + "/awk-%s.txt" % n)}
       for n in ("perf", "tc")}
bad = 0
for f, truth in (("perf.data", "perf"), ("perf.txt", "perf"), ("trace.dat", "tc"),
                 ("tc.txt", "tc")):
    got = rows(d + "/" + f + ".json")
    for tid in tids:
        ok = got.get(tid) == live[tid] and awk[truth].get(tid) == live[tid][0]
        print("%-9s tid %d: live %s, import %s, awk switch-outs %s%s" % (
            f, tid, live[tid], got.get(tid), awk[truth].get(tid), "" if ok else "  <-- differs"))
        bad += not ok
sys.exit(1 if bad or len(tids) != 2 else 0)
PY
if [ -n "${KEEP:-}" ]; then
	mkdir -p "$KEEP" && cp "$T"/perf.data "$T"/perf.txt "$T"/trace.dat "$T"/tc.txt "$T"/tc-raw.txt "$T"/live.json "$KEEP"/
	echo "kept in $KEEP (ping-pong tids $tids)"
fi
finish
