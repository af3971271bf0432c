#!/bin/bash
# runs: alone
# (a system-wide recording must lose nothing for
# its counts to be compared with bpftrace's)
# `ctxmon hist 'hist:keys=prev_pid:vals=hitcount if prev_comm == "W"' -- W`
# against bpftrace's @[args->prev_pid] = count() with the same filter over
# the same run (issue 15, acceptance 2), and the same spec on a recording
# of that run (`ctxmon record -a` running alongside) giving the same table
# as live (acceptance 3).
#
# W is the pingpong workload (two threads, one comm) copied under a name no
# other process on the machine has, so the comm filter picks this run only.
# bpftrace is attached before the workload starts and detached after it has
# been reaped, the recording likewise, so all three see every switch-out of
# W's threads; each per-pid count must be equal, and so must the totals.
#
# Then the same for sched_wakeup, keyed by the woken pid, on a second copy
# W2: the streaming backend keeps only some sched_wakeup unless asked, and
# hist must ask (CTXMON_EVENTS_WAKEUP_ALL) when a trigger names the event,
# as must a recording made for it (record -e sched,wakeups).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace not installed (scripts/setup.sh installs it)"
"$CTXMON" hist --help >/dev/null 2>&1 || skip "no ctxmon hist in this build"

W=hw$$
W=${W:0:15}
W2=hu$$
W2=${W2:0:15}
cp "$WL/pingpong" "$T/$W"
cp "$WL/pingpong" "$T/$W2"
spec="hist:keys=prev_pid:vals=hitcount if prev_comm == \"$W\""
wspec="hist:keys=pid:vals=hitcount if comm == \"$W2\""

bpftrace -e "tracepoint:sched:sched_switch /args->prev_comm == \"$W\"/ { @[args->prev_pid] = count(); }
tracepoint:sched:sched_wakeup /args->comm == \"$W2\"/ { @w[args->pid] = count(); }
$(bpftrace_exit_probe)" \
	>"$T/bt.out" 2>"$T/bt.err" &
bt=$!
BG_PIDS="$BG_PIDS $bt"
"$CTXMON" record -a -e sched,wakeups -o "$T/all.data" 2>"$T/rec.err" &
rec=$!
BG_PIDS="$BG_PIDS $rec"
bpftrace_attached 3
# the recording's capture is live once its metadata is written
recording_started "$T/all.data" "$rec" ||
	{ fail "record -a did not start: $(tail -n 1 "$T/rec.err")"; finish; }

"$CTXMON" hist "$spec" -o "$T/live.txt" -- "$T/$W" 3000 2>"$T/hist.err" ||
	fail "ctxmon hist failed: $(tail -n 1 "$T/hist.err")"
san_check hist "$T/hist.err"
"$CTXMON" hist -e sched:sched_wakeup "$wspec" -o "$T/wlive.txt" -- "$T/$W2" 3000 \
	2>"$T/whist.err" || fail "ctxmon hist on sched_wakeup failed: $(tail -n 1 "$T/whist.err")"
san_check hist "$T/whist.err"
kill -INT "$rec"
# each one's own exit status (one wait for both kept only the last's)
rc=0
bpftrace_stop "$bt" || rc=$?
[ "$rc" = 0 ] || fail "bpftrace exited $rc: $(tail -n 1 "$T/bt.err")"
rc=0
end_wait "$rec" || rc=$?
[ "$rc" = 0 ] || fail "ctxmon record exited $rc after SIGINT: $(tail -n 1 "$T/rec.err")"
san_check record "$T/rec.err"

"$CTXMON" hist -i "$T/all.data" "$spec" -o "$T/input.txt" 2>"$T/input.err" ||
	fail "ctxmon hist -i failed: $(tail -n 1 "$T/input.err")"
san_check "hist -i" "$T/input.err"
"$CTXMON" hist -i "$T/all.data" -e sched:sched_wakeup "$wspec" -o "$T/winput.txt" \
	2>"$T/winput.err" || fail "ctxmon hist -i on sched_wakeup failed: $(tail -n 1 "$T/winput.err")"
grep -q warning "$T/winput.err" && fail "hist -i warned on a recording with every wakeup: $(cat "$T/winput.err")"

echo "--- ctxmon hist (live)"
cat "$T/live.txt"
echo "--- bpftrace"
cat "$T/bt.out"
grep -i lost "$T/hist.err" "$T/rec.err" && fail "events were lost; the counts cannot be compared"

python3 - "$T/live.txt" "$T/bt.out" "$T/input.txt" "$T/wlive.txt" "$T/winput.txt" <<'PY' || fail "tables differ"
import re, sys
def hist(path, key="prev_pid"):
    rows = {}
    for l in open(path):
        m = re.match(r"\{ " + key + r":\s+(\d+) \} hitcount:\s+(\d+)\s*$", l)
        if m:
            rows[int(m.group(1))] = int(m.group(2))
    hits = re.search(r"Hits: (\d+)", open(path).read())
    return rows, int(hits.group(1)) if hits else -1
live, live_hits = hist(sys.argv[1])
inp, inp_hits = hist(sys.argv[3])
bt = {int(k): int(v) for k, v in re.findall(r"^@\[(\d+)\]: (\d+)", open(sys.argv[2]).read(), re.M)}
btw = {int(k): int(v) for k, v in re.findall(r"^@w\[(\d+)\]: (\d+)", open(sys.argv[2]).read(), re.M)}
wlive, wlive_hits = hist(sys.argv[4], "pid")
winp, winp_hits = hist(sys.argv[5], "pid")
bad = []
if len(live) < 2:
    bad.append("live: %d keys, expected the workload's two threads at least" % len(live))
for pid in sorted(set(live) | set(bt)):
    print("  prev_pid %d: ctxmon hist %s, bpftrace %s, hist -i %s"
          % (pid, live.get(pid), bt.get(pid), inp.get(pid)))
if live != bt:
    bad.append("ctxmon hist live and bpftrace differ")
if inp != live:
    bad.append("hist -i on the recording and live differ")
if live_hits != sum(live.values()) or inp_hits != live_hits:
    bad.append("Hits: live %d, -i %d, sum of hitcounts %d" % (live_hits, inp_hits, sum(live.values())))
for pid in sorted(set(wlive) | set(btw)):
    print("  sched_wakeup pid %d: ctxmon hist %s, bpftrace %s, hist -i %s"
          % (pid, wlive.get(pid), btw.get(pid), winp.get(pid)))
if len(wlive) < 2 or sum(wlive.values()) < 1000:
    bad.append("sched_wakeup live: %d keys, %d hits: expected the workload's wakeups" % (len(wlive), sum(wlive.values())))
if wlive != btw:
    bad.append("sched_wakeup: ctxmon hist live and bpftrace differ")
if winp != wlive:
    bad.append("sched_wakeup: hist -i on the recording and live differ")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
finish
