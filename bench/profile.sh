#!/bin/sh
# bench/profile.sh BUILDDIR [CTXMON ARGS...] - where ctxmon's time goes while
# it captures the benchmarks' switch-heavy workload.
#
# Runs `ctxmon ARGS` (default: stat -a --json -o BUILDDIR/bench/profile/
# stat.json, whose capture counts are printed) pinned to CPU 1 while
# `perf bench sched pipe` runs pinned to CPU 0, and profiles both sides:
#   user:   perf record -g on the ctxmon process (its CPU 1 time: reading
#           the rings, decoding, ordering, accounting, writing);
#   kernel: perf record -a -C 0 (what the tracing adds on the traced CPU:
#           tracepoint, ring buffer writes, wakeups of the reader).
# Prints the top symbols of each (self time, perf report --no-children),
# ctxmon's own CPU time per second of capture and, for the BPF programs
# ctxmon loaded, their run count and time per run (kernel.bpf_stats_enabled
# is switched on for the run and restored after).  On a VM without a PMU,
# perf samples on cpu-clock, which cannot fire while interrupts are off:
# the time of the tracepoint handlers (run inside __schedule) shows up as
# finish_task_switch / _raw_spin_unlock_irqrestore, where interrupts come
# back on.  The BPF run times are exact.  Output files stay in
# BUILDDIR/bench/profile (perf.user.data, perf.kernel.data, *.txt).
#
#   BENCH_PROFILE_LOOPS=N   pipe round trips (default 600000, ~2 s)
set -e

B=${1:-build}
[ $# -gt 0 ] && shift
CTXMON=$B/ctxmon
LOOPS=${BENCH_PROFILE_LOOPS:-600000}
D=$B/bench/profile
mkdir -p "$D"
rm -f "$D/stat.json"
[ $# -gt 0 ] || set -- stat -a --json -o "$D/stat.json"

if [ "$(id -u)" != 0 ]; then
	echo "profile: needs root" >&2
	exit 1
fi
[ -x "$CTXMON" ] || { echo "profile: no $CTXMON; run make first" >&2; exit 1; }

# Stop what this script started, by pid, however it ends.
CT=""
PU=""
BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo "")
cleanup() {
	for p in $PU $CT; do
		kill -INT "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	[ -z "$BPF_STATS" ] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS" || true
}
trap cleanup EXIT INT TERM

echo "profile: $CTXMON $* (CPU 1), perf bench sched pipe -l $LOOPS (CPU 0)"
taskset -c 1 "$CTXMON" "$@" 2>"$D/ctxmon.err" &
CT=$!
sleep 1.5
kill -0 "$CT" 2>/dev/null || { echo "profile: ctxmon exited:"; cat "$D/ctxmon.err"; exit 1; }
t0=$(awk '{print $14 + $15}' "/proc/$CT/stat")
[ -z "$BPF_STATS" ] || sysctl -qw kernel.bpf_stats_enabled=1
perf record -q -g -o "$D/perf.user.data" -p "$CT" 2>"$D/perf.user.err" &
PU=$!
perf record -q -g -a -C 0 -o "$D/perf.kernel.data" -- \
	taskset -c 0 perf bench sched pipe -l "$LOOPS" >"$D/pipe.out" 2>"$D/perf.kernel.err"
grep -h "Total time" "$D/pipe.out" || true
kill -INT "$PU"
wait "$PU" || true
PU=""
t1=$(awk '{print $14 + $15}' "/proc/$CT/stat")
bpftool prog show -j >"$D/bpf.json" 2>/dev/null || true
[ -z "$BPF_STATS" ] || sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS"
kill -INT "$CT"
wait "$CT" || true
CT=""
secs=$(awk '/Total time/ {print $3}' "$D/pipe.out")
tck=$(getconf CLK_TCK)
awk -v a="$t0" -v b="$t1" -v s="$secs" -v t="$tck" 'BEGIN {
	if (s > 0) printf "ctxmon CPU time: %.2f s over %.2f s of workload (%.0f%% of a CPU)\n",
		(b - a) / t, s, 100 * (b - a) / t / s }'
grep -i lost "$D/ctxmon.err" || true
[ -s "$D/stat.json" ] && python3 -c 'import json,sys; print("ctxmon capture:", json.load(open(sys.argv[1]))["capture"])' "$D/stat.json"

python3 - "$D/bpf.json" "$CT" <<'PY' || true
import json, sys
try:
    progs = json.load(open(sys.argv[1]))
except ValueError:
    sys.exit(0)
# bpftool names the owners only when built with that feature; else every
# program that ran is shown.
mine = [p for p in progs if p.get("run_cnt") and (
    "pids" not in p or any(x.get("pid") == int(sys.argv[2])
                           for x in p["pids"]))]
if mine:
    print("BPF programs that ran (bpf_stats; its timing adds ~20-40 ns "
          "per run):")
for p in mine:
    n, t = p.get("run_cnt", 0), p.get("run_time_ns", 0)
    print("  %-24s %-16s %10d runs %8.1f ms  %6.0f ns/run" % (
        p.get("name"), p.get("type"), n, t / 1e6, t / n if n else 0))
PY
echo
echo "== ctxmon, user + kernel, self time (top 25) =="
perf report -i "$D/perf.user.data" --no-children --percent-limit 0.5 \
	--stdio -g none --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' |
	head -n 25 | tee "$D/user.txt"
echo
echo "== CPU 0 (the traced workload), self time (top 25) =="
perf report -i "$D/perf.kernel.data" --no-children --percent-limit 0.5 \
	--stdio -g none --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' |
	head -n 25 | tee "$D/kernel.txt"
echo
echo "profile: files in $D"
