#!/bin/bash
# `ctxmon stat -I --backend bpf-agg`: each interval's LAT-MAX is that
# interval's own maximum wakeup latency, measured, not the upper edge of
# its log2 bucket.  Issue 45 item 4: every interval after the first printed
# a bound (JSON max_ns 65535, max_ts_ns 0, waker -1) as if it were a
# measurement wherever the whole run's maximum came earlier.
#
# The truth is bpftrace over the same run: per thread of W (the pingpong
# workload under a name no other process has) and per millisecond, the
# largest latency from sched_waking to the sched_switch that runs it, by
# the account's rule for a task woken before it left its CPU: from its
# switch-out if it went to sleep, none if it was preempted.  A thread's
# interval is [first_ts_ns, first_ts_ns + span_ns] of its row, on the same
# clock as bpftrace's nsecs, to the few ms a read of the rows takes (E):
# its maximum must lie between the largest of the milliseconds wholly
# inside it less E at each end and the largest of those it touches with E
# more (each program reads the clock where it runs: 2 us + 5% apart), in 3
# thread intervals of 4 at least (measured: 83-100%).  The vCPU can stall
# between the two programs' reads of one event (test_latency_bpftrace:
# bpftrace stamped a sched_waking 73.5 us before ctxmon did), most often
# in the longest wakeups; beside stress-ng --cpu 1, 2 runs of 20 failed,
# one with 14 of 42 intervals off, so a run with too many is measured
# again, 3 runs at most.  The account's rules and bpftrace's still differ
# on a few latencies (an unseen switch-in, which ctxmon places from the
# kernel's run time of the slice; a waking that another CPU's lock ordered
# after the switch-out): `report --time` over a streaming recording of the
# same run gave bpf-agg's maxima, to the clock reads, in all but those.  In
# every interval a measured maximum lies in its interval's highest
# histogram bucket, ends inside the interval, and has its waker.  In the
# first interval ctxmon also has the wakeups before the exec, which
# bpftrace (keyed on the comm) has not.  A maximum still known only as a
# bound must say so: max_ns null, with max_bound_ns no less than the
# truth.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v bpftrace >/dev/null 2>&1 || skip "bpftrace not installed (scripts/setup.sh installs it)"

W=lm$$
W=${W:0:15}
cp "$WL/pingpong" "$T/$W"
N=${LATMAX_ROUNDS:-150000}

# attempt: one run of W under bpftrace and stat -I; the comparison's status
# (0 agree, 2 only too many maxima off bpftrace's, else a failure)
attempt() {
	BPFTRACE_MAP_KEYS_MAX=200000 bpftrace -e "
tracepoint:sched:sched_waking { @w[args->pid] = nsecs; }
tracepoint:sched:sched_switch /@w[args->prev_pid]/ {
	if (args->prev_state == 0) {
		delete(@w[args->prev_pid]);
	} else {
		@w[args->prev_pid] = nsecs;
	}
}
tracepoint:sched:sched_switch /@w[args->next_pid]/ {
	if (args->next_comm == \"$W\") {
		@m[args->next_pid, nsecs / 1000000] =
			max(nsecs - @w[args->next_pid]);
	}
	delete(@w[args->next_pid]);
}
$(bpftrace_exit_probe)" >"$T/bt.out" 2>"$T/bt.err" &
	bt=$!
	BG_PIDS="$BG_PIDS $bt"
	bpftrace_attached 4

	local rc=0
	"$CTXMON" stat -I 100 --backend bpf-agg --json -o "$T/iv.json" -- "$T/$W" "$N" \
		2>"$T/iv.err" || rc=$?
	san_check stat "$T/iv.err"
	if [ "$rc" != 0 ] && grep -qi "bpf-agg.*\(cannot\|not\)" "$T/iv.err"; then
		bpftrace_stop "$bt"
		skip "bpf-agg cannot run here: $(tail -n 1 "$T/iv.err")"
	fi
	[ "$rc" = 0 ] || fail "stat exited $rc: $(tail -n 1 "$T/iv.err")"
	sleep 0.5
	bpftrace_stop "$bt" || fail "bpftrace exited $?: $(tail -n 1 "$T/bt.err")"
	grep -q "Lost" "$T/bt.err" "$T/bt.out" && skip "bpftrace lost events"

	python3 - "$T/iv.json" "$T/bt.out" "$W" <<'PY'
import json, re, sys
bt = {}
for line in open(sys.argv[2]):
    m = re.match(r"@m\[(\d+), (\d+)\]: (\d+)", line)
    if m:
        bt.setdefault(int(m.group(1)), {})[int(m.group(2))] = int(m.group(3))
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
E = 3000000
n = bad = later = off = 0
for r in recs:
    for t in r["threads"]:
        l = t["wakeup_latency"]
        if t["comm"] != sys.argv[3] or not l["count"]:
            continue
        a = t["first_ts_ns"]
        b = a + t["span_ns"]
        ms = bt.get(t["tid"], {})
        # the row is read up to a few ms before the interval's end
        inner = max([v for k, v in ms.items()
                     if k * 1000000 >= a + E and (k + 1) * 1000000 <= b - E] or [0])
        outer = max([v for k, v in ms.items()
                     if (k + 1) * 1000000 > a - E and k * 1000000 <= b + E] or [0])
        if r["interval"] == 0:
            inner = 0  # wakeups before the exec, under another comm
        tol = 2000 + 0.05 * outer
        n += 1
        later += r["interval"] > 0
        what = "interval %d tid %d [%d, %d]" % (r["interval"], t["tid"], a, b)
        if l["max_ns"] is None:
            # not measured: allowed only as a bound that says so
            if l.get("max_bound_ns") is None or l["max_bound_ns"] + tol < inner:
                print("%s: max_ns null, max_bound_ns %s, bpftrace at least %d"
                      % (what, l.get("max_bound_ns"), inner))
                bad += 1
            else:
                print("%s: a bound, <= %d (bpftrace %d..%d)"
                      % (what, l["max_bound_ns"], inner, outer))
            continue
        mx = l["max_ns"]
        why = []
        top = max(h["lo_ns"] for h in l["hist"])
        if not top <= mx <= 2 * max(top, 1) - 1:
            why.append("max %d outside the highest bucket [%d, %d]"
                       % (mx, top, 2 * max(top, 1) - 1))
        if not a - E <= l["max_ts_ns"] <= b + E:
            why.append("max_ts_ns %d outside" % l["max_ts_ns"])
        if l["max_waker_tid"] is None or l["max_waker_tid"] < 0:
            why.append("waker %s" % l["max_waker_tid"])
        if why:
            bad += 1
            print("%s: %s" % (what, "; ".join(why)))
        if not inner - tol <= mx <= outer + tol and not (r["interval"] == 0 and mx > outer):
            off += 1
            print("%s: max %d, bpftrace %d..%d" % (what, mx, inner, outer))
print("%d thread intervals compared (%d after the first), %d not measured, "
      "%d off bpftrace's" % (n, later, bad, off))
sys.exit(1 if bad or later < 6 else 2 if off > n // 4 else 0)
PY
}

measure_again attempt "more than a quarter of the interval maxima off bpftrace's" \
	"interval maxima disagree with bpftrace"

finish
