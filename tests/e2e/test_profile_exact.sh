#!/bin/bash
# `ctxmon profile --off-cpu` charges each thread its exact run time: under
# kcount, a shell runs /bin/true 300 times (short processes, most of them
# never sampled at 99 Hz), and the on-CPU time of every process below
# kcount adds up to their CPU time by wait4() (kcount's cpu_us: the
# kernel's own run time of the shell and all it reaped) within 0.5% +
# 1 ms, with frame-pointer and CFI stacks; the threads' SAMPLES add up to
# the samples the BPF program took; unsampled processes are charged to
# "[on CPU: no sample]" rows.  A machine-wide profile (-a) has no row of
# ctxmon's own process.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
[ -x "$WL/kcount" ] || skip "no kcount workload in $WL"
[ -x /bin/true ] || skip "no /bin/true"

# unseen-fp: every switch from another thread to one profiled left out
# (CTXMON_PROF_UNSEEN_IN=1, as the kernel leaves out a few: test_profile_block)
for cg in fp dwarf unseen-fp; do
	unseen=0
	case $cg in unseen-*) unseen=1 ;; esac
	CTXMON_PROF_UNSEEN_IN=$unseen \
	"$CTXMON" profile --off-cpu --call-graph "${cg#unseen-}" --json -o "$T/$cg.json" \
		-- "$WL/kcount" sh -c 'for i in $(seq 300); do /bin/true; done' \
		>/dev/null 2>"$T/$cg.err" ||
		{ fail "$cg: profile failed: $(tail -n 2 "$T/$cg.err")"; continue; }
	san_check "$cg" "$T/$cg.err"
	python3 - "$cg" "$T/$cg.json" "$T/$cg.err" <<'PY' || fail "$cg: checks"
import json, re, sys
cg, pj, ej = sys.argv[1:]
p = json.load(open(pj, encoding="utf-8", errors="replace"))
m = re.search(r"^kcount: pid=(\d+) .*\bcpu_us=(\d+)", open(ej).read(), re.M)
bad = 0
def check(ok, what):
    global bad
    print(("  ok   " if ok else "  FAIL ") + cg + ": " + what)
    bad += not ok
check(m is not None, "kcount printed cpu_us")
if m is None:
    sys.exit(1)
cpu = int(m.group(2))
# kcount itself: the process whose threads are named kcount
# (the shell's row may carry the comm it had before its exec, kcount's:
# that process is below kcount all the same)
kc = {t["tgid"] for t in p["threads"] if t["comm"] == "kcount"} - {int(m.group(1))}
below = [t for t in p["threads"] if t["tgid"] not in kc]
on = sum(t["on_cpu_us"] for t in below)
check(len(below) >= 302, "%d threads below kcount (the shell, seq, 300 children)"
      % len(below))
check(abs(on - cpu) <= 0.005 * cpu + 1000,
      "on-CPU %d us, wait4() CPU time %d us (0.5%% + 1 ms)" % (on, cpu))
ns = [s for s in p["stacks"] if s["cause"] == "[on CPU: no sample]"]
check(len(ns) > 0 and all(s["kind"] == "on-cpu" and s["count"] == 0 for s in ns),
      "%d [on CPU: no sample] rows, %d us" % (len(ns), sum(s["us"] for s in ns)))
check(sum(t["samples"] for t in p["threads"]) == p["loss"]["samples"],
      "threads' samples %d = samples taken %d"
      % (sum(t["samples"] for t in p["threads"]), p["loss"]["samples"]))
check(p["on_cpu_exact"] is True, "on_cpu_exact in the JSON")
sys.exit(1 if bad else 0)
PY
done

# -a leaves ctxmon itself out (its own switch-outs would wake it to read
# their stacks, a loop): no row of its process
"$CTXMON" profile --off-cpu -a -d 1 --json -o "$T/all.json" 2>"$T/all.err" &
self=$!
wait "$self" || fail "profile -a failed: $(tail -n 2 "$T/all.err")"
san_check all "$T/all.err"
python3 - "$T/all.json" "$self" <<'PY' || fail "profile -a shows ctxmon itself"
import json, sys
p = json.load(open(sys.argv[1], encoding="utf-8", errors="replace"))
me = [t for t in p["threads"] if t["tgid"] == int(sys.argv[2])]
print("  -a: %d threads, %d of ctxmon's own process (%s)"
      % (len(p["threads"]), len(me), sys.argv[2]))
sys.exit(1 if me or not p["threads"] else 0)
PY
finish
