#!/bin/bash
# tier: both (make test: ftrace; make check: ftrace-text too)
# -p on a process of many threads under the ftrace backends.  They list
# every thread in the instance's set_event_pid, and the kernel syncs its
# tracepoints at each write (~30 ms on these VMs): one write per thread
# kept `stat --backend ftrace -p` of a process of 900 threads (stress-ng
# --pthread) starting for 30 s, and the process had ended by then
# ('capture: ftrace backend, 2 CPUs, 0.100 s, 0 events', "nothing
# compared", exit 0).  The threads are written a page at a time now.
#
# A process of 600 threads that each sleep 50 ms at a time until told to stop
# (python3's threads: a program we did not write), then
#
#   ctxmon stat --backend B -p PID --duration 1 --check
#
# for B = ftrace, ftrace-text: the capture lasts its second, every thread
# is alive throughout and compared with /proc (voluntary in the range the
# kernel's counters read before and after give), and each has switched.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v python3 >/dev/null || skip "python3 not installed"

N=600
# proc_vol PID: "TID VOLUNTARY" for each thread of PID, from /proc
proc_vol() {
	local f
	for f in /proc/"$1"/task/*/status; do
		awk '/^Pid:/ { t = $2 } /^voluntary_ctxt_switches:/ { print t, $2 }' "$f" 2>/dev/null
	done
}

# all_threads PID N: PID has N threads or more
all_threads() {
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]
}
for b in $(long_or ftrace "ftrace ftrace-text"); do
	# the threads run until the test says stop ($T/stop-$b), not for a
	# fixed 12 s that a slow start of stat on a loaded machine could use up
	bg python3 -c "
import os, threading, time
def f():
    end = time.monotonic() + 120
    while time.monotonic() < end and not os.path.exists('$T/stop-$b'):
        time.sleep(0.05)
ts = [threading.Thread(target=f) for _ in range($N)]
for t in ts: t.start()
for t in ts: t.join()
"
	pid=$BG_PID
	# wait until all threads are there (python's main + N)
	wait_for 60 all_threads "$pid" $((N + 1)) ||
		{ fail "$b: the load started $(ls "/proc/$pid/task" | wc -l) threads of $((N + 1)) in 60 s"; continue; }
	rc=0
	# the kernel's counters of each thread, read here before and after
	# (stat's --check reads /proc itself: this is the same truth without
	# ctxmon)
	proc_vol "$pid" >"$T/$b.before"
	t0=$(date +%s%N)
	"$CTXMON" stat --backend "$b" -p "$pid" --duration 1 --check \
		-o "$T/$b.txt" 2>"$T/$b.err" || rc=$?
	t1=$(date +%s%N)
	proc_vol "$pid" >"$T/$b.after"
	san_check "$b" "$T/$b.err"
	grep -hE '^capture|^kernel counters' "$T/$b.txt" | sed "s/^/  $b: /"
	[ "$rc" = 0 ] || fail "$b: stat exited $rc: $(tail -n 3 "$T/$b.err")"
	grep -qE "^capture: $b backend, [0-9]+ CPUs, 1\.[0-9]+ s, [1-9][0-9,]* events, 0 lost" "$T/$b.txt" ||
		fail "$b: the capture did not last its second with events: $(grep '^capture' "$T/$b.txt")"
	grep -qE "^kernel counters \(/proc, $((N + 1)) threads alive throughout\): .*: match\)" "$T/$b.err" ||
		fail "$b: not every thread compared, or a mismatch: $(grep '^kernel counters' "$T/$b.err")"
	seen=$(awk -v p="$pid" '$2 == p && $4 > 0 { n++ } END { print n + 0 }' "$T/$b.txt")
	[ "$seen" -ge "$N" ] || fail "$b: $seen threads switched in the table, of $N"
	# Each thread's voluntary in the table lies inside the window of the
	# two reads, so it is at most their difference; and a thread that
	# sleeps every 50 ms (or blocks on python's lock) cannot go through
	# the capture's second without one: at least 1 (the main thread, in
	# join() throughout, may have 0).  (Not a share of the
	# rate: the threads switch some 4 times faster while stat sets up.)
	python3 - "$T/$b.txt" "$pid" "$T/$b.before" "$T/$b.after" $(((t1 - t0) / 1000000)) <<'PY' ||
import sys
table, pid, before, after, ms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def counts(path):
    return {int(a): int(b) for a, b in (l.split() for l in open(path) if l.strip())}
b0, b1 = counts(before), counts(after)
traced = {}
for l in open(table):
    f = l.split()
    if len(f) > 5 and f[1] == pid and f[0].isdigit():
        traced[int(f[0])] = int(f[4].replace(",", ""))
both = [t for t in traced if t in b0 and t in b1]
# (the main thread waits in join() throughout: 0 is right for it)
bad = [(t, traced[t], b1[t] - b0[t]) for t in both
       if not (t != int(pid)) <= traced[t] <= b1[t] - b0[t]]
d = sum(b1[t] - b0[t] for t in both)
print("  /proc: %d voluntary over %d ms; the table: %d in %d threads (%d read"
      " twice in /proc), %d not in 1..their /proc difference"
      % (d, ms, sum(traced.values()), len(traced), len(both), len(bad)))
for t, v, w in bad[:5]:
    print("  tid %d: traced %d voluntary, /proc %d" % (t, v, w))
sys.exit(0 if not bad and len(both) == len(traced) > 0 else 1)
PY
		fail "$b: the table's voluntary against /proc read before and after"
	touch "$T/stop-$b"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done
finish
