#!/bin/bash
# export takes its format from -o's name when --format is not given
# (issue 45, item 6): run.db was written as a Perfetto protobuf that
# sqlite3 could not open.  .pftrace/.perfetto-trace are Perfetto (the
# first byte is Trace's packet field tag; test_export_perfetto decodes
# them with the published schema), .db/.sqlite SQLite (sqlite3 reads one
# sched row per switch script prints), .json Chrome JSON (python's json
# loads it);
# a name that says nothing, or another format than --format, or .html, is
# refused in one line, exit 2, nothing written.  -o - is standard output
# (Perfetto by default), refused for SQLite.  --json with --csv is refused
# by every command that has both (the last one used to win).  Needs no
# privileges: the recording is imported from tests/data.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || skip "sqlite3 not installed (scripts/setup.sh installs it)"

REC=$T/rec.ctxm
"$CTXMON" import -q tests/data/traces/pipe-6.18-sched.txt -o "$REC" 2>"$T/imp.err" ||
	fail "import exited $?: $(cat "$T/imp.err")"
n=$("$CTXMON" script -i "$REC" | grep -c ' sched_switch:')
echo "recording: $n sched_switch events"

for name in a.db b.sqlite; do
	"$CTXMON" export -q -i "$REC" -o "$T/$name" 2>"$T/e" || fail "export -o $name exited $?: $(cat "$T/e")"
	got=$(sqlite3 "$T/$name" 'select count(*) from sched' 2>&1)
	echo "-o $name: sqlite3 reads $got sched rows"
	[ "$got" = "$n" ] || fail "-o $name: not a SQLite database with $n sched rows: $got"
done
"$CTXMON" export -q -i "$REC" -o "$T/c.json" 2>"$T/e" || fail "export -o c.json exited $?: $(cat "$T/e")"
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for e in d["traceEvents"] if e.get("ph") == "X"))' "$T/c.json" 2>&1)
echo "-o c.json: Chrome JSON with $got complete events"
[ "$got" -gt 0 ] 2>/dev/null || fail "-o c.json is not a Chrome JSON trace: $got"
for name in d.pftrace e.perfetto-trace; do
	"$CTXMON" export -q -i "$REC" -o "$T/$name" 2>"$T/e" || fail "export -o $name exited $?"
	# field 1 of Trace, length-delimited: the tag byte 0x0a
	tag=$(head -c 1 "$T/$name" | od -An -tx1 | tr -d ' ')
	[ "$tag" = 0a ] || fail "-o $name does not start as a Perfetto trace (first byte $tag)"
done
(cd "$T" && "$CTXMON" export -q -i "$REC" -o - >"$T/stdout.pb" 2>"$T/e") || fail "export -o - exited $?"
cmp -s "$T/stdout.pb" "$T/d.pftrace" || fail "export -o - differs from the .pftrace file"
"$CTXMON" export -q -f chrome-json -i "$REC" -o - 2>"$T/e" | python3 -c 'import json,sys; json.load(sys.stdin)' ||
	fail "export -f chrome-json -o - is not JSON on standard output"
[ ! -e "$T/-" ] || fail "export -o - created a file named -"

refused() { # WHAT WORDS...: exit 2, one line, no output file
	local what=$1 rc=0
	shift
	"$CTXMON" "$@" >/dev/null 2>"$T/r.err" || rc=$?
	echo "$what: exit $rc: $(cat "$T/r.err")"
	[ "$rc" = 2 ] || fail "$what: exit $rc, want 2"
	[ "$(wc -l <"$T/r.err")" = 1 ] || fail "$what: not one line"
}
refused "a name with no format" export -i "$REC" -o "$T/f.txt"
[ ! -e "$T/f.txt" ] || fail "f.txt written"
refused "a name of another format" export -f perfetto -i "$REC" -o "$T/g.db"
[ ! -e "$T/g.db" ] || fail "g.db written"
refused "an HTML name" export -i "$REC" -o "$T/h.html"
grep -q "report --html" "$T/r.err" || fail "the .html refusal does not name report --html"
refused "SQLite to standard output" export -f sqlite -i "$REC" -o -
refused "report --json --csv" report -i "$REC" --json --csv
refused "stat --csv --json" stat --csv --json -- true
refused "experiment --json --csv" experiment -r 1 --json --csv -- true
finish
