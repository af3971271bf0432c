#!/bin/bash
# `ctxmon hist` as a command: usage errors exit 2 with the kernel-style
# message and the caret under the bad token; --check prints the canonical
# trigger; -i refuses a live capture's options; --json is valid JSON whose totals add up; -I prints one table
# per interval; the per-thread hitcounts of a yield loop's switch-outs
# equal the kernel's own count (nvcsw + nivcsw of the child from wait4,
# printed by the kcount workload); and
# --backend kernel says in one line why it cannot run where the kernel has
# no hist triggers.
. "$(dirname "$0")/lib.sh"
"$CTXMON" hist --help >/dev/null 2>&1 || skip "no ctxmon hist in this build"

# usage errors
rc=0
"$CTXMON" hist 'hist:keys=prev_pid.nosuch' -a 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "bad modifier: exit $rc, want 2"
grep -q "error: Invalid field modifier" "$T/err" || fail "bad modifier: message: $(cat "$T/err")"
caret=$(grep -n '\^' "$T/err" | head -n 1)
cmdline=$(grep 'Command:' "$T/err")
[ "$(awk '/\^/ { print index($0, "^") }' "$T/err")" = "$(( $(echo "$cmdline" | awk '{ print index($0, ".nosuch") }') + 1 ))" ] ||
	fail "caret not under the modifier: $cmdline / $caret"
rc=0
"$CTXMON" hist -e kmem:kmalloc 'hist:keys=call_site' -a 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "does not capture this event" "$T/err" || fail "uncaptured event: exit $rc: $(cat "$T/err")"
rc=0
"$CTXMON" hist -a 2>"$T/err" || rc=$?
[ "$rc" = 2 ] || fail "no trigger: exit $rc"
# with -i, a live capture's options and -p/-t are refused: they would do
# nothing to the recording
for o in "--backend bpf" "--duration 2" "--tracefs /sys/kernel/tracing" "-p 1"; do
	rc=0
	"$CTXMON" hist -i "$T/none.ctxmon" $o 'hist:keys=prev_pid' 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] && grep -q "^ctxmon hist: ${o%% *}.* is for a live capture" "$T/err" ||
		fail "hist -i $o: exit $rc, $(cat "$T/err")"
done
out=$("$CTXMON" hist --check 'hist:key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount if id == 16' -e raw_syscalls:sys_enter 'hist:key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount if id == 16' 2>&1)
# the first is on the default event, sched_switch, which has no field "id"
echo "$out" | grep -q "error: Field not found" || fail "--check on sched_switch: $out"
out=$("$CTXMON" hist --check -e raw_syscalls:sys_enter 'hist:key=id.syscall,common_pid.execname:val=hitcount:sort=id,hitcount if id == 16')
# seed 001 prints this trigger as:
want='hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=id.syscall,hitcount:size=2048 if id == 16 [active]'
[ "$out" = "$want" ] || fail "--check: '$out', want '$want'"

skip_unless_capture
# a yield loop (under a name of its own, so the filter picks this run
# only): every switch-out of its threads, counted by the kernel too.  The
# child runs kcount's code until its exec, under kcount's comm: the
# filter takes that comm too and the key has the pid, so its switches
# before the exec (voluntary in fork or exec, or preempted there on a
# loaded machine: a make test once came 2 short without them) are counted
# as the kernel counts them
Y=hy$$
Y=${Y:0:15}
cp "$WL/yield" "$T/$Y"
"$CTXMON" hist --json -o "$T/h.json" \
	"hist:keys=prev_pid,prev_comm:vals=hitcount if prev_comm == \"$Y\" || prev_comm == \"kcount\"" \
	-- "$WL/kcount" "$T/$Y" 3000 2>"$T/run.err" || fail "hist -- kcount failed: $(tail -n 1 "$T/run.err")"
san_check hist "$T/run.err"
json_check "$T/h.json" || fail "invalid JSON"
line=$(grep '^kcount:' "$T/run.err" | tail -n 1)
echo "kcount: $line"
python3 - "$T/h.json" "$line" "$Y" <<'PY' || fail "JSON vs kcount's rusage"
import json, re, sys
j = json.load(open(sys.argv[1]))
h = j["histograms"][0]
tot = sum(e["hitcount"] for e in h["entries"])
if tot != h["totals"]["hits"] or len(h["entries"]) != h["totals"]["entries"]:
    sys.exit("totals do not add up: %d %s" % (tot, h["totals"]))
m = dict(re.findall(r"(\w+)=(-?\d+)", sys.argv[2]))
pid = int(m["pid"])
# the child's rows: its pid under either comm, its thread under yield's
rows = [e for e in h["entries"]
        if e["key"]["prev_pid"] == pid or e["key"]["prev_comm"] == sys.argv[3]]
# yield has two threads, both counted in the child's rusage; a thread's last
# switch-out at exit is not in rusage, except the leader's when it switched
# out a zombie (Z) before kcount reaped it, whose counters the reap reads
# after that switch (docs/accounting.md: exit_counted)
n = sum(e["hitcount"] for e in rows)
ru = int(m["nvcsw"]) + int(m["nivcsw"])
tids = {e["key"]["prev_pid"] for e in rows}
print("  hist: %d switch-outs of %d threads in %d rows; rusage nvcsw+nivcsw %d"
      % (n, len(tids), len(rows), ru))
if len(tids) != 2:
    sys.exit("%d threads, want yield's 2" % len(tids))
if not ru - 1 <= n - 2 <= ru:
    sys.exit("hitcounts %d vs rusage %d (+ 2 exit switch-outs, - 0 or 1 "
             "counted at the leader's reap)" % (n, ru))
PY

# -I: one table per interval, then the last one
"$CTXMON" hist -I 300 -a --duration 1.1 'hist:keys=common_cpu' -o "$T/int.txt" 2>"$T/int.err" ||
	fail "hist -I failed: $(tail -n 1 "$T/int.err")"
n=$(grep -c '^Totals:' "$T/int.txt")
[ "$n" -ge 3 ] && [ "$n" -le 5 ] || fail "-I 300 over 1.1 s: $n tables"

# --backend kernel where the kernel has no hist triggers: one line, exit 1
if [ ! -e /sys/kernel/tracing/events/sched/sched_switch/hist ]; then
	rc=0
	# in the background for its pid: its instance is ctxmon-PID (other
	# tests' captures beside this one have their own)
	"$CTXMON" hist --backend kernel -a --duration 0.2 'hist:keys=prev_pid' 2>"$T/k.err" &
	kpid=$!
	wait "$kpid" || rc=$?
	[ "$rc" = 1 ] && grep -q "no hist triggers" "$T/k.err" ||
		fail "--backend kernel without hist triggers: exit $rc: $(cat "$T/k.err")"
	ls -d /sys/kernel/tracing/instances/ctxmon-"$kpid" \
		/sys/kernel/tracing/instances/ctxmon-"$kpid"-* 2>/dev/null | grep -q . &&
		fail "its instance ctxmon-$kpid was left behind"
fi
finish
