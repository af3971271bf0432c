#!/bin/bash
# Acceptance 4: report of a recording equals stat of the same run (record
# --stat prints stat's numbers from the live stream; report prints them
# from the file), for a command and for the whole machine; for a command
# the counts also match the kernel's rusage (report's own comparison, and
# kcount's wait4() of the command, lib.sh kcount_judge).
. "$(dirname "$0")/lib.sh"
skip_unless_capture

# same FILE_A FILE_B WHAT: the JSON documents are equal but for what only
# a recording has: "source", and "integrity" (docs/integrity.md), which
# must say the recording is complete.
same() {
	python3 - "$1" "$2" <<'PY' || fail "$3: report differs from stat"
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for d in (a, b):
    d.pop("source", None)
    v = d.pop("integrity", {"complete": True})
    if v["complete"] is not True:
        print("integrity: %s" % v, file=sys.stderr)
        sys.exit(1)
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("%s: %.300s\n  vs %.300s" % (k, a.get(k), b.get(k)), file=sys.stderr)
    sys.exit(1)
PY
}

"$CTXMON" record -q --stat --json -o "$T/c.data" -- "$WL/kcount" "$WL/multi5" >/dev/null 2>"$T/c.err"
rc=$?
grep '^{' "$T/c.err" >"$T/c.stat.json"
grep -v '^{' "$T/c.err" >"$T/c.log"
san_check record "$T/c.log"
[ $rc = 0 ] || fail "record exited $rc: $(tail -n 3 "$T/c.log")"
[ -s "$T/c.stat.json" ] || fail "record --stat --json printed no JSON"
"$CTXMON" report --json -i "$T/c.data" >"$T/c.rep.json" 2>"$T/rep.err" || fail "report exited $?"
san_check report "$T/rep.err"
same "$T/c.stat.json" "$T/c.rep.json" command
[ "$(json "$T/c.rep.json" 'j["kernel"]["match"]')" = true ] ||
	fail "command: the report does not match the kernel's counters"
# kernel.match is ctxmon's own comparison; the command ran under kcount,
# whose wait4() rusage of it is the kernel's count without ctxmon
kcount_judge command "$T/c.rep.json" "$T/c.log" "$rc" 5

want=$("$CTXMON" doctor --json 2>/dev/null | python3 -c '
import json, sys
print("false" if json.load(sys.stdin).get("sigsleep") == "shown S" else "true")')
for b in perf ftrace; do
	n=sig-$b
	"$CTXMON" record -q --stat --json --backend $b -o "$T/$n.data" -- \
		"$WL/sigsleep" 2 200 100 1000 >/dev/null 2>"$T/$n.err"
	rc=$?
	grep '^{' "$T/$n.err" >"$T/$n.stat.json"
	grep -v '^{' "$T/$n.err" >"$T/$n.log"
	san_check "record $b" "$T/$n.log"
	[ $rc = 0 ] || { fail "$n: record exited $rc: $(tail -n 3 "$T/$n.log")"; continue; }
	"$CTXMON" report --json -i "$T/$n.data" >"$T/$n.rep.json" 2>"$T/rep.err" ||
		fail "$n: report exited $?"
	san_check report "$T/rep.err"
	same "$T/$n.stat.json" "$T/$n.rep.json" "$n"
	"$CTXMON" report -i "$T/$n.data" --html "$T/$n.html" >/dev/null 2>"$T/rep.err" ||
		fail "$n: report --html exited $?"
	k=$(json "$T/$n.rep.json" 'j["kernel"]')
	echo "$n: doctor's verdict gives sigsleep_bound $want; report: $k"
	sr=$(json "$T/$n.rep.json" 'j["kernel"]["shown_running"]')
	[ "$sr" = 0 ] && w=false || w=$want
	[ "$(json "$T/$n.rep.json" 'j["kernel"]["sigsleep_bound"]')" = "$w" ] ||
		fail "$n: report's sigsleep_bound is not $w ($sr shown R)"
	[ "$(json "$T/$n.rep.json" 'j["kernel"]["match"]')" = true ] ||
		fail "$n: the report does not match the kernel's counters"
	grep -q 'Kernel comparison: match\.' "$T/$n.html" ||
		fail "$n: the HTML page says $(grep -o 'Kernel comparison: [A-Za-z]*' "$T/$n.html")"
	# where the numbers differ, the box says the range that makes them
	# match, as the text report's verdict line does; where they are
	# equal, it does not repeat them
	txt=$("$CTXMON" report -i "$T/$n.data" 2>/dev/null | grep '^kernel counters:')
	div=$(sed -n 's/^<div class="verdict">\(.*\)<\/div>$/\1/p' "$T/$n.html")
	exact=$(json "$T/$n.rep.json" 'j["kernel"]["exact"]')
	echo "  HTML verdict: ${div:-(none)}; exact $exact"
	if [ "$exact" = True ] || [ "$exact" = true ]; then
		[ -z "$div" ] || fail "$n: equal numbers, and the HTML page repeats them: $div"
	elif [ "$div" != "$txt" ]; then
		fail "$n: the HTML verdict '$div' is not the text report's '$txt'"
	fi
done

bg "$WL/pingpong" 2000000
"$CTXMON" record -q --stat --json -a --duration 1 -o "$T/a.data" >"$T/a.stat.json" 2>"$T/a.err" ||
	fail "record -a exited $?"
san_check "record -a" "$T/a.err"
[ -s "$T/a.stat.json" ] || fail "record -a --stat --json printed no JSON"
"$CTXMON" report --json -i "$T/a.data" >"$T/a.rep.json" 2>"$T/rep.err" || fail "report exited $?"
same "$T/a.stat.json" "$T/a.rep.json" "-a"
finish
