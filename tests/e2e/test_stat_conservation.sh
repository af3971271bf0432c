#!/bin/bash
# tier: both (make test: one round a backend; make check: three)
# Machine-wide time conservation, against the kernel's own clock of each
# thread: /proc/<pid>/task/<tid>/schedstat's first field (ns on a CPU,
# kept by the scheduler itself).  Snapshots taken just before `ctxmon stat
# -a` starts and just after it ends bound every thread's real run time in
# the capture window from above, so for every thread in both snapshots
# ctxmon's run_ns may not exceed the schedstat delta by more than the
# time the scheduler's task clock leaves out (steal, irq and softirq time,
# /proc/stat's delta over the window: with PARAVIRT_TIME_ACCOUNTING a
# vCPU's stolen time is not the task's exec time) plus two ticks (a running
# task's sum is brought up to date at ticks) and /proc/stat's 10 ms
# rounding; and the threads' run time summed may not exceed the CPUs' busy
# time, which needs no other clock.  A thread charged for time it did not run (a missed
# switch-out, a stale "on CPU" at the end) fails here.  Under load (a
# ping-pong and a spinner), 3 rounds per backend.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
[ -r /proc/self/schedstat ] || skip "no /proc/PID/schedstat (CONFIG_SCHED_INFO)"
PY=/usr/bin/python3
snap() {
	"$PY" -c '
import glob, json, sys
out = {}
# /proc/stat: the summed irq, softirq and steal columns, in ns
f = open("/proc/stat").readline().split()
out["lost_ns"] = (int(f[6]) + int(f[7]) + int(f[8])) * 10_000_000
for p in glob.glob("/proc/[0-9]*/task/[0-9]*/schedstat"):
    try:
        out[p.split("/")[4]] = int(open(p).read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
json.dump(out, open(sys.argv[1], "w"))' "$1"
}
"$WL/pingpong" 1000000000 >/dev/null 2>&1 &
LOAD1=$!
"$WL/spin2" 1000000 1 >/dev/null 2>&1 &
LOAD2=$!
trap 'kill $LOAD1 $LOAD2 2>/dev/null; wait 2>/dev/null; _cleanup' EXIT
judged=0
for b in bpf-agg bpf perf ftrace; do
	backend_runs "conservation-$b" "$b" || continue
	judged=$((judged + 1))
	for r in $(seq "$(long_or 1 3)"); do
		snap "$T/before.json"
		if ! "$CTXMON" stat -a --backend "$b" --json -o "$T/s.json" -- sleep 0.7 \
			2>"$T/s.err"; then
			fail "$b: stat exited: $(tail -n 1 "$T/s.err")"
			break
		fi
		snap "$T/after.json"
		san_check "$b stat" "$T/s.err"
		"$PY" - "$T/s.json" "$T/before.json" "$T/after.json" "$b.$r" "$LOAD1" "$LOAD2" <<'PYEOF' || fail "$b round $r: time not conserved"
import json, sys
d = json.load(open(sys.argv[1]))
before = json.load(open(sys.argv[2]))
after = json.load(open(sys.argv[3]))
tag = sys.argv[4]
loads = {int(sys.argv[5]), int(sys.argv[6])}
slack = after["lost_ns"] - before["lost_ns"] + 2 * 4_000_000 + 10_000_000
bad = []
checked = 0
# the load's threads ran all through the window: each must be checked
load_checked = set()
for t in d["threads"]:
    k = str(t["tid"])
    if t["tid"] <= 0 or k not in after or t.get("exited"):
        continue
    delta = after[k] - before.get(k, 0)
    checked += 1
    if t["tgid"] in loads:
        load_checked.add(t["tgid"])
    if t["run_ns"] > delta + slack:
        bad.append((t["tid"], t["comm"], t["run_ns"], delta))
run = sum(t["run_ns"] for t in d["threads"] if t["tid"] > 0)
busy = sum(c["busy_ns"] for c in d["cpus"])
span = max(c["span_ns"] for c in d["cpus"])
print(f"{tag}: {checked} threads checked against schedstat, "
      f"run {run / 1e9:.3f} s, CPUs busy {busy / 1e9:.3f} s, span {span / 1e9:.3f} s, "
      f"slack {slack / 1e6:.0f} ms")
for tid, comm, got, want in bad[:10]:
    print(f"  tid {tid} ({comm}): ctxmon run {got / 1e6:.3f} ms > schedstat {want / 1e6:.3f} ms")
ok = not bad and run <= busy * 1.01 + 2_000_000
if load_checked != loads:
    print(f"  the load's processes {sorted(loads - load_checked)} have no row checked")
    ok = False
for c in d["cpus"]:
    if c["busy_ns"] > c["span_ns"] + 1_000_000:
        print(f"  cpu {c['cpu']}: busy {c['busy_ns']} > span {c['span_ns']}")
        ok = False
if run > busy * 1.01 + 2_000_000:
    print(f"  threads' run {run} > CPUs' busy {busy}")
sys.exit(0 if ok else 1)
PYEOF
	done
done
[ "$judged" -gt 0 ] || skip "none of bpf-agg, bpf, perf, ftrace runs here"
kill -0 $LOAD1 $LOAD2 || fail "a load process ended before the last round"
finish
