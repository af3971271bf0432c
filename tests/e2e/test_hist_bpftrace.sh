#!/bin/bash
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
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace not installed (scripts/setup.sh installs it)"
"$CTXMON" hist --help >/dev/null 2>&1 || skip "no ctxmon hist in this build"

W=hw$$
W=${W:0:15}
cp "$WL/pingpong" "$T/$W"
spec="hist:keys=prev_pid:vals=hitcount if prev_comm == \"$W\""

bpftrace -e "tracepoint:sched:sched_switch /args->prev_comm == \"$W\"/ { @[args->prev_pid] = count(); }" \
	>"$T/bt.out" 2>"$T/bt.err" &
bt=$!
BG_PIDS="$BG_PIDS $bt"
"$CTXMON" record -a -o "$T/all.data" 2>"$T/rec.err" &
rec=$!
BG_PIDS="$BG_PIDS $rec"
for _ in $(seq 100); do
	grep -q "Attaching" "$T/bt.out" "$T/bt.err" 2>/dev/null && break
	sleep 0.2
done
grep -q "Attaching" "$T/bt.out" "$T/bt.err" 2>/dev/null ||
	skip "bpftrace did not attach: $(tail -n 1 "$T/bt.err")"
sleep 1 # the recording's session is live by now (it opens in well under 1 s)

"$CTXMON" hist "$spec" -o "$T/live.txt" -- "$T/$W" 3000 2>"$T/hist.err" ||
	fail "ctxmon hist failed: $(tail -n 1 "$T/hist.err")"
san_check hist "$T/hist.err"
sleep 0.5
kill -INT "$bt" "$rec"
wait "$bt" "$rec" 2>/dev/null
san_check record "$T/rec.err"

"$CTXMON" hist -i "$T/all.data" "$spec" -o "$T/input.txt" 2>"$T/input.err" ||
	fail "ctxmon hist -i failed: $(tail -n 1 "$T/input.err")"
san_check "hist -i" "$T/input.err"

echo "--- ctxmon hist (live)"
cat "$T/live.txt"
echo "--- bpftrace"
cat "$T/bt.out"
grep -i lost "$T/hist.err" "$T/rec.err" && fail "events were lost; the counts cannot be compared"

python3 - "$T/live.txt" "$T/bt.out" "$T/input.txt" <<'PY' || fail "tables differ"
import re, sys
def hist(path):
    rows = {}
    for l in open(path):
        m = re.match(r"\{ prev_pid:\s+(\d+) \} hitcount:\s+(\d+)\s*$", l)
        if m:
            rows[int(m.group(1))] = int(m.group(2))
    hits = re.search(r"Hits: (\d+)", open(path).read())
    return rows, int(hits.group(1)) if hits else -1
live, live_hits = hist(sys.argv[1])
inp, inp_hits = hist(sys.argv[3])
bt = {int(k): int(v) for k, v in re.findall(r"@\[(\d+)\]: (\d+)", open(sys.argv[2]).read())}
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
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
finish
