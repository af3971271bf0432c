#!/bin/bash
# -p on a process of many threads under the ftrace backends.  They list
# every thread in the instance's set_event_pid, and the kernel syncs its
# tracepoints at each write (~30 ms on these VMs): one write per thread
# kept `stat --backend ftrace -p` of a process of 900 threads (stress-ng
# --pthread) starting for 30 s, and the process had ended by then
# ('capture: ftrace backend, 2 CPUs, 0.100 s, 0 events', "nothing
# compared", exit 0).  The threads are written a page at a time now.
#
# A process of 600 threads that each sleep 50 ms at a time for 12 s
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
for b in ftrace ftrace-text; do
	bg python3 -c "
import threading, time
def f():
    end = time.monotonic() + 12
    while time.monotonic() < end:
        time.sleep(0.05)
ts = [threading.Thread(target=f) for _ in range($N)]
for t in ts: t.start()
for t in ts: t.join()
"
	pid=$BG_PID
	# wait until all threads are there (python's main + N)
	for _ in $(seq 100); do
		n=$(ls "/proc/$pid/task" 2>/dev/null | wc -l)
		[ "$n" -ge $((N + 1)) ] && break
		sleep 0.1
	done
	[ "$n" -ge $((N + 1)) ] || { fail "$b: the load started $n threads of $((N + 1))"; continue; }
	rc=0
	"$CTXMON" stat --backend "$b" -p "$pid" --duration 1 --check \
		-o "$T/$b.txt" 2>"$T/$b.err" || rc=$?
	san_check "$b" "$T/$b.err"
	grep -hE '^capture|^kernel counters' "$T/$b.txt" | sed "s/^/  $b: /"
	[ "$rc" = 0 ] || fail "$b: stat exited $rc: $(tail -n 3 "$T/$b.err")"
	grep -qE "^capture: $b backend, [0-9]+ CPUs, 1\.[0-9]+ s, [1-9][0-9,]* events, 0 lost" "$T/$b.txt" ||
		fail "$b: the capture did not last its second with events: $(grep '^capture' "$T/$b.txt")"
	grep -qE "^kernel counters \(/proc, $((N + 1)) threads alive throughout\): .*: match\)" "$T/$b.err" ||
		fail "$b: not every thread compared, or a mismatch: $(grep '^kernel counters' "$T/$b.err")"
	seen=$(awk -v p="$pid" '$2 == p && $4 > 0 { n++ } END { print n + 0 }' "$T/$b.txt")
	[ "$seen" -ge "$N" ] || fail "$b: $seen threads switched in the table, of $N"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
done
finish
