#!/bin/bash
# `ctxmon stat --check` of running processes (-p) and threads (-t): the
# counts of every thread alive through the whole capture against its own
# /proc counters, which ctxmon reads before and after the capture's start
# and stop.  Checked here against reads of our own: this script reads
# each thread's /proc/TID/status before starting ctxmon and after it has
# exited, so every switch ctxmon can have seen lies within them, and the
# traced count of each thread must too; and the inner reads cannot be
# below what the capture must have seen, which the outer range contains.
# Per backend, on a ping-pong pair (2 threads alive throughout), and on a
# shell that forks a child every 10 ms (its own thread compared, the
# children shown apart).  -I sums its intervals; -t compares one thread.
# --check exits 0 on a match; -a and --cgroup are refused.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

# csw TID: "voluntary involuntary" of thread TID, from the kernel
csw() {
	awk '/^voluntary_ctxt_switches/ { v = $2 }
	     /^nonvoluntary_ctxt_switches/ { n = $2 }
	     END { print v, n }' "/proc/$1/status"
}

bg "$WL/pingpong" 500000000
pp=$BG_PID
bg bash -c 'while :; do /bin/sleep 0.01; done'
sh=$BG_PID
sleep 0.3
tids=$(ls /proc/$pp/task)
[ "$(echo $tids | wc -w)" = 2 ] || fail "pingpong has threads: $tids"

# run NAME TARGET-OPTS...: stat --check --json on the targets; before and
# after: the script's own reads of the threads given in $watch
run() {
	local name=$1 rc=0 t
	shift
	: > "$T/$name.before"
	for t in $watch; do echo "$t $(csw "$t")" >> "$T/$name.before"; done
	"$CTXMON" stat --check --json -o "$T/$name.json" "$@" \
		2> "$T/$name.err" || rc=$?
	: > "$T/$name.after"
	for t in $watch; do echo "$t $(csw "$t")" >> "$T/$name.after"; done
	sed "s/^/  $name | /" "$T/$name.err"
	san_check "$name" "$T/$name.err"
	[ "$rc" = 0 ] || fail "$name: stat --check exited $rc"
	python3 - "$T/$name" "$want" <<'PY' || fail "$name: the counts are off"
import json, sys
base, want = sys.argv[1], int(sys.argv[2])
recs = [json.loads(l) for l in open(base + ".json") if l.strip()]
def reads(path):
    return {int(a): (int(b), int(c)) for a, b, c in
            (l.split() for l in open(path) if l.strip())}
before, after = reads(base + ".before"), reads(base + ".after")
ok = True
k = recs[-1].get("kernel_threads")
if not k:
    print("  FAIL: no kernel_threads in the last record"); sys.exit(1)
if any("kernel_threads" in r for r in recs[:-1]):
    print("  FAIL: a comparison before the last record"); ok = False
print("  %d record(s); compared %d threads: voluntary %d in %d..%d, "
      "involuntary %d in %d..%d, match %s" % (
      len(recs), k["threads"], k["traced_voluntary"], k["voluntary_min"],
      k["voluntary_max"], k["traced_involuntary"], k["involuntary_min"],
      k["involuntary_max"], k["match"]))
if k["threads"] != want or not k["match"]:
    print("  FAIL: want %d threads compared, matching" % want); ok = False
vol, inv = {}, {}
for r in recs:
    for t in r["threads"]:
        vol[t["tid"]] = vol.get(t["tid"], 0) + t["voluntary"]
        inv[t["tid"]] = inv.get(t["tid"], 0) + t["involuntary"]
ov = oi = tv = ti = 0
for tid in before:
    dv = after[tid][0] - before[tid][0]
    di = after[tid][1] - before[tid][1]
    ov += dv; oi += di
    tv += vol.get(tid, 0); ti += inv.get(tid, 0)
    print("  thread %d: traced %d/%d, kernel over the whole run %d/%d" % (
          tid, vol.get(tid, 0), inv.get(tid, 0), dv, di))
    if vol.get(tid, 0) > dv or inv.get(tid, 0) > di or not vol.get(tid):
        print("  FAIL: thread %d traced outside the kernel's run" % tid)
        ok = False
if tv != k["traced_voluntary"] or ti != k["traced_involuntary"]:
    print("  FAIL: the comparison's traced %d/%d, the rows' %d/%d" % (
          k["traced_voluntary"], k["traced_involuntary"], tv, ti)); ok = False
if k["voluntary_max"] > ov or k["involuntary_max"] > oi or \
   k["voluntary_min"] > k["voluntary_max"] or \
   k["involuntary_min"] > k["involuntary_max"]:
    print("  FAIL: ctxmon's reads %d..%d/%d..%d outside the script's %d/%d"
          % (k["voluntary_min"], k["voluntary_max"], k["involuntary_min"],
             k["involuntary_max"], ov, oi)); ok = False
sys.exit(0 if ok else 1)
PY
}

watch=$tids want=2
for b in bpf-agg bpf perf ftrace; do
	run "pp-$b" --backend "$b" -p "$pp" --duration 1
done
run pp-interval -p "$pp" --duration 1 -I 300
t1=$(echo $tids | cut -d' ' -f2)
watch=$t1 want=1 run pp-tid -t "$t1" --duration 1

# the shell's forks: its thread compared, its children apart
watch=$sh want=1 run forks -p "$sh" --duration 1
grep -q "not compared: the threads and processes that started" \
	"$T/forks.err" || fail "forks: no line for the children"
[ "$(json "$T/forks.json" 'j["kernel_threads"]["started"]')" = true ] ||
	fail "forks: kernel_threads.started is not true"

# a table on stdout carries the verdict, not twice on stderr
"$CTXMON" stat --check -p "$pp" --duration 0.5 > "$T/table.out" \
	2> "$T/table.err" || fail "table: stat --check exited $?"
grep -q "^kernel counters (/proc, 2 threads alive throughout): .*match" \
	"$T/table.out" || fail "table: no verdict: $(cat "$T/table.out")"
grep -q "kernel counters" "$T/table.err" && fail "table: verdict on stderr too"

rc=0
"$CTXMON" stat --check -a --duration 0.1 > /dev/null 2> "$T/all.err" || rc=$?
[ "$rc" = 2 ] && grep -q "give one" "$T/all.err" ||
	fail "-a --check: exit $rc, $(cat "$T/all.err")"
rc=0
"$CTXMON" stat --check --cgroup / -p "$pp" --duration 0.1 > /dev/null \
	2> "$T/cg.err" || rc=$?
[ "$rc" = 2 ] && grep -q "leave --cgroup out" "$T/cg.err" ||
	fail "--cgroup --check: exit $rc, $(cat "$T/cg.err")"
finish
