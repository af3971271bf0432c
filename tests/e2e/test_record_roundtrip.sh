#!/bin/bash
# Acceptance 1: record -> script -> import -> script gives identical lines,
# in microseconds (trace_pipe's precision) and with --ns; the imported
# recording reports the same per-thread counts as the original.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

"$CTXMON" record -q -o "$T/a.data" -- "$WL/pingpong" 5000 >/dev/null 2>"$T/rec.err" ||
	fail "record exited $?: $(tail -n 3 "$T/rec.err")"
san_check record "$T/rec.err"
[ -s "$T/a.data" ] || { fail "no recording"; finish; }
[ "$(stat -c %a "$T/a.data")" = 600 ] || fail "recording mode is $(stat -c %a "$T/a.data"), not 600"

for prec in us ns; do
	opt=""
	[ $prec = ns ] && opt=--ns
	"$CTXMON" script $opt -i "$T/a.data" >"$T/a.$prec.txt" 2>"$T/s1.err" ||
		fail "script ($prec) exited $?"
	"$CTXMON" import -q "$T/a.$prec.txt" -o "$T/b.$prec.data" 2>"$T/imp.err" ||
		fail "import ($prec) exited $?: $(tail -n 3 "$T/imp.err")"
	"$CTXMON" script $opt -i "$T/b.$prec.data" >"$T/b.$prec.txt" 2>"$T/s2.err" ||
		fail "script of the import ($prec) exited $?"
	for f in s1 imp s2; do san_check "$f ($prec)" "$T/$f.err"; done
	n=$(wc -l <"$T/a.$prec.txt")
	[ "$n" -gt 10000 ] || fail "only $n lines printed ($prec)"
	if ! cmp -s "$T/a.$prec.txt" "$T/b.$prec.txt"; then
		fail "script -> import -> script differs ($prec):"
		diff "$T/a.$prec.txt" "$T/b.$prec.txt" | head -n 6 >&2
	fi
done

# Same per-thread counts from the imported text as from the recording.
"$CTXMON" report --json -i "$T/a.data" >"$T/a.json" 2>/dev/null || fail "report exited $?"
"$CTXMON" report --json -i "$T/b.ns.data" >"$T/b.json" 2>/dev/null || fail "report of the import exited $?"
python3 - "$T/a.json" "$T/b.json" <<'PY' || fail "per-thread counts differ after import"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
rows = {t["tid"]: t for t in b["threads"]}
bad = 0
for t in a["threads"]:
    u = rows.get(t["tid"])
    keys = ("switches", "voluntary", "involuntary", "exit_switch", "wakeups")
    if u is None or any(t[k] != u[k] for k in keys):
        bad += 1
        print("tid %d: %s vs %s" % (t["tid"], [t[k] for k in keys],
              u and [u[k] for k in keys]), file=sys.stderr)
sys.exit(1 if bad or not a["threads"] else 0)
PY
# Input that holds no event is refused, empty or not; a --cpu past the
# recording's CPUs is named.
: >"$T/empty.txt"
rc=0
"$CTXMON" import "$T/empty.txt" -o "$T/e.data" 2>"$T/e.err" || rc=$?
[ "$rc" = 1 ] && grep -q "no event found" "$T/e.err" ||
	fail "import of an empty file: exit $rc, $(tail -n 1 "$T/e.err")"
"$CTXMON" report -i "$T/a.data" --cpu 60000 >/dev/null 2>"$T/c.err" ||
	fail "report --cpu past the CPUs exited $?"
grep -q "select nothing" "$T/c.err" ||
	fail "report --cpu 60000: no warning that it selects nothing"
finish
