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
# Prints the top symbols of each (self time, perf report --no-children) and
# ctxmon's own CPU time per second of capture.  Output files stay in
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
cleanup() {
	for p in $PU $CT; do
		kill -INT "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

echo "profile: $CTXMON $* (CPU 1), perf bench sched pipe -l $LOOPS (CPU 0)"
taskset -c 1 "$CTXMON" "$@" 2>"$D/ctxmon.err" &
CT=$!
sleep 1.5
kill -0 "$CT" 2>/dev/null || { echo "profile: ctxmon exited:"; cat "$D/ctxmon.err"; exit 1; }
t0=$(awk '{print $14 + $15}' "/proc/$CT/stat")
perf record -q -g -o "$D/perf.user.data" -p "$CT" 2>"$D/perf.user.err" &
PU=$!
perf record -q -g -a -C 0 -o "$D/perf.kernel.data" -- \
	taskset -c 0 perf bench sched pipe -l "$LOOPS" >"$D/pipe.out" 2>"$D/perf.kernel.err"
grep -h "Total time" "$D/pipe.out" || true
kill -INT "$PU"
wait "$PU" || true
PU=""
t1=$(awk '{print $14 + $15}' "/proc/$CT/stat")
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
