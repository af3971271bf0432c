#!/bin/bash
# report's filters slice a recording without losing or inventing anything:
# - --time: three consecutive windows add up, per thread (tid, generation),
#   to the whole recording: switches, voluntary, involuntary, run, wait,
#   sleep and wakeup counts, to the nanosecond.  The whole is in turn the
#   kernel's (report's own comparison with the recorded rusage: match).
#   A window starting after a thread's switch-in still runs it from the
#   window's start; a process forked before the window is still the
#   command's.
# - --cpu: each CPU alone, summed over the CPUs, gives every thread its
#   whole switch counts; a thread forked on one CPU and run on another is
#   the command's on both.
# Before, a window counted only what its own events showed (a thread
# running at its start lost that run) and --cpu 1 left out the ping-pong
# thread forked on CPU 0 (10,832 of its 11,230 voluntary switches).
. "$(dirname "$0")/lib.sh"
skip_unless_capture

check() {
	name=$1 rec=$2
	rc=0
	"$CTXMON" report -i "$rec" --per-thread --json -o "$T/$name.all.json" \
		2>"$T/$name.err" || rc=$?
	san_check "report $name" "$T/$name.err"
	[ "$rc" = 0 ] && json_check "$T/$name.all.json" ||
		{ fail "$name: report exited $rc"; return; }
	grep -o '"kernel":{[^}]*"match":true' "$T/$name.all.json" >/dev/null ||
		fail "$name: the whole recording does not match the kernel: $(grep -o '"kernel":{[^}]*}' "$T/$name.all.json")"
	dur=$(sed -n 's/.*"duration_ns":\([0-9]*\).*/\1/p' "$T/$name.all.json" | head -n 1)
	a=$(python3 -c "print('%.6f' % ($dur / 3e9))")
	b=$(python3 -c "print('%.6f' % (2 * $dur / 3e9))")
	for w in ",$a" "$a,$b" "$b,"; do
		"$CTXMON" report -i "$rec" --per-thread --json --time "$w" \
			-o "$T/$name.w$w.json" 2>>"$T/$name.err" ||
			fail "$name: report --time $w exited $?"
	done
	# the CPUs the recording saw, by number: a pinned run lists only
	# the CPU it ran on, which need not be CPU 0
	cpus=$(python3 -c 'import json,sys; print(*[c["cpu"] for c in json.load(open(sys.argv[1]))["cpus"]])' "$T/$name.all.json")
	[ -n "$cpus" ] || fail "$name: the report lists no CPUs"
	for c in $cpus; do
		"$CTXMON" report -i "$rec" --per-thread --json --cpu "$c" \
			-o "$T/$name.c$c.json" 2>>"$T/$name.err" ||
			fail "$name: report --cpu $c exited $?"
	done
	san_check "report $name windows" "$T/$name.err"
	python3 - "$T/$name.all.json" "$T/$name.w,$a.json" "$T/$name.w$a,$b.json" \
		"$T/$name.w$b,.json" -- "$T/$name".c*.json <<'PY' || fail "$name: windows or CPUs do not add up"
import collections, json, sys
args = sys.argv[1:]
sep = args.index("--")
whole, wins, cpus = args[0], args[1:sep], args[sep + 1:]
TIMES = ("switch_in", "voluntary", "involuntary", "run_ns", "wait_ns")
COUNTS = ("switch_in", "voluntary", "involuntary")
def rows(f, keys):
    out = collections.defaultdict(lambda: collections.Counter())
    for t in json.load(open(f))["threads"]:
        if t["folded"]:
            continue
        c = out[(t["tid"], t["gen"], t["comm"])]
        for k in keys:
            c[k] += t[k]
        if "run_ns" in keys:
            c["sleep_ns"] += t["sleep_s_ns"] + t["sleep_d_ns"] + t["sleep_other_ns"]
            c["wakeups"] += t["wakeup_latency"]["count"]
    return out
def add(files, keys):
    tot = collections.defaultdict(lambda: collections.Counter())
    for f in files:
        for k, v in rows(f, keys).items():
            tot[k].update(v)
    return tot
bad = 0
for what, files, keys in (("--time windows", wins, TIMES), ("--cpu", cpus, COUNTS)):
    w, s = rows(whole, keys), add(files, keys)
    diff = [k for k in set(w) | set(s) if +w[k] != +s[k]]
    for k in diff[:5]:
        print("  %s: tid %d gen %d %s: whole %s, summed %s" % (what, k[0], k[1], k[2], dict(w[k]), dict(s[k])))
    tot = sum(sum(v.values()) for v in s.values())
    print("  %s: %d files, %d threads, %d differ" % (what, len(files), len(w), len(diff)))
    bad += len(diff) > 0 or tot == 0
sys.exit(1 if bad else 0)
PY
}

"$CTXMON" record -q -o "$T/pp.data" -- "$WL/pingpong" 20000 >/dev/null 2>"$T/pp.rec" ||
	fail "record pingpong exited $?"
san_check "record pingpong" "$T/pp.rec"
check pingpong "$T/pp.data"
"$CTXMON" record -q -o "$T/z.data" -- "$WL/zombies" 300 1 >/dev/null 2>"$T/z.rec" ||
	fail "record zombies exited $?"
san_check "record zombies" "$T/z.rec"
check zombies "$T/z.data"
finish
