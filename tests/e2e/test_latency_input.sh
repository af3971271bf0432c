#!/bin/bash
# `ctxmon latency -i FILE` on a recording of a ping-pong pair: the same
# threads as the recording's target, each woken by its partner, and the
# same wakeup counts, sums and maxima as `ctxmon report` finds in the file.
# A live capture's options given with -i are refused.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
"$CTXMON" record --help >/dev/null 2>&1 || skip "no ctxmon record in this build"
"$CTXMON" report --help >/dev/null 2>&1 || skip "no ctxmon report in this build"

rec=$T/pp.data
"$CTXMON" record -o "$rec" -- "$WL/pingpong" 2000 2>"$T/rec.err" ||
	fail "ctxmon record failed: $(tail -n 1 "$T/rec.err")"
san_check record "$T/rec.err"
"$CTXMON" latency -i "$rec" --json -o "$T/lat.json" 2>"$T/lat.err" ||
	fail "ctxmon latency -i failed: $(tail -n 1 "$T/lat.err")"
san_check latency "$T/lat.err"
"$CTXMON" report -i "$rec" --per-thread --json -o "$T/rep.json" 2>"$T/rep.err" ||
	fail "ctxmon report failed: $(tail -n 1 "$T/rep.err")"
for f in lat rep; do
	[ -s "$T/$f.json" ] && json_check "$T/$f.json" || { fail "$f: no valid JSON"; finish; }
done

python3 - "$T/lat.json" "$T/rep.json" <<'PY' || fail "latency -i vs report"
import json, sys
lat, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = []
groups = {g["id"]: g for g in lat["groups"] if g["kind"] == "thread"}
rows = {r["tid"]: r for r in rep["threads"] if r["comm"] == "pingpong"}
if len(rows) != 2:
    sys.exit("report: expected 2 pingpong threads, got %d" % len(rows))
for tid, r in rows.items():
    g = groups.get(tid)
    if not g:
        bad.append("tid %d: no histogram" % tid)
        continue
    l, w = g["latency"], r["wakeup_latency"]
    other = [t for t in rows if t != tid][0]
    partner = sum(p["count"] for p in lat["pairs"] if p["to_tid"] == tid
                  and p["from_tid"] == other)
    print("  tid %d: latency -i: %d wakeups, max %d ns, %d by %d; report: %d, max %d ns"
          % (tid, l["count"], l["max_ns"], partner, other, w["count"], w["max_ns"]))
    if (l["count"], l["max_ns"]) != (w["count"], w["max_ns"]) or \
       l["mean_ns"] != w["mean_ns"]:
        bad.append("tid %d: latency -i and report disagree" % tid)
    if not l["count"] or partner < l["count"] * 0.95:
        bad.append("tid %d: %d of %d wakeups by its partner" % (tid, partner, l["count"]))
extra = [g["id"] for g in lat["groups"] if g["kind"] == "thread" and g["id"] not in rows
         and g["comm"] not in ("pingpong", "ctxmon")]
if extra:
    bad.append("threads outside the recorded command: %s" % extra)
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY

# a live capture's options with -i do nothing to the recording: refused
# in one line, exit 2, nothing written
for o in "--backend bpf" "--duration 2" "-m 64" "--cgroup /" "--nice 5"; do
	rc=0
	"$CTXMON" latency -i "$rec" $o -o "$T/opt.txt" 2>"$T/opt.err" || rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l < "$T/opt.err")" = 1 ] &&
		grep -q "^ctxmon latency: ${o%% *}.* is for a live capture" "$T/opt.err" &&
		[ ! -e "$T/opt.txt" ] ||
		fail "latency -i $o: exit $rc, $(cat "$T/opt.err")"
done
finish
