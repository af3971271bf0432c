#!/bin/bash
# Every JSON document ctxmon writes carries "schema_version" (2), writes
# null, never -1, for an id nobody knows, and doctor's booleans are
# true/false (issue 45 item 6; docs/json.md).  Each command with a JSON
# output is run and its output walked by json_schema_check.py: report,
# latency, hist, diff (recordings and experiments), export's summary and
# Chrome JSON, doctor (with -v as root) on an import of perf script
# text, whose pids are unknown; as root, stat (whole and -I), record
# --stat, taskstats, experiment and profile too.  Before, no document had
# a schema_version, report wrote "tgid":-1 and doctor "btf":1.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
command -v python3 >/dev/null || skip "python3 not installed"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data" && pwd)
CHECK="$(dirname "$0")/json_schema_check.py"
NCHECKED=0

# doc NAME CMD...: run ctxmon CMD (its JSON on stdout) and check it
doc() {
	local name=$1 rc=0
	shift
	"$CTXMON" "$@" >"$T/$name.json" 2>"$T/$name.err" || rc=$?
	san_check "$name" "$T/$name.err"
	if [ $rc != 0 ]; then
		fail "$name: ctxmon $* exited $rc: $(tail -n 1 "$T/$name.err")"
		return
	fi
	python3 "$CHECK" "$name" "$T/$name.json" || fail "$name: ctxmon $* (above)"
	NCHECKED=$((NCHECKED + 1))
}

# file NAME FILE: check a JSON file a command wrote
file() {
	python3 "$CHECK" "$1" "$2" || fail "$1: $2 (above)"
	NCHECKED=$((NCHECKED + 1))
}

zcat "$D/import/perfscript/input.gz" >"$T/ps.txt"
"$CTXMON" import -q "$T/ps.txt" -o "$T/ps.data" 2>"$T/imp.err" ||
	fail "import: $(tail -n 1 "$T/imp.err")"
"$CTXMON" import -q "$D/traces/pipe-6.18-sched.txt" -o "$T/pipe.data" 2>>"$T/imp.err" ||
	fail "import: $(tail -n 1 "$T/imp.err")"
for r in ps pipe; do
	doc report-$r report -i "$T/$r.data" --json
	doc report-causes-$r report -i "$T/$r.data" --json --causes --per-thread
	doc latency-$r latency -i "$T/$r.data" --json
	doc hist-$r hist -i "$T/$r.data" --json 'hist:keys=common_pid:vals=hitcount'
	doc diff-$r diff --json -n 0 "$T/$r.data" "$T/$r.data"
	doc export-$r export -i "$T/$r.data" -o "$T/$r.pftrace" --json
	"$CTXMON" export -q -i "$T/$r.data" -o "$T/$r.chrome.json" 2>"$T/exp.err" ||
		fail "export chrome $r: $(tail -n 1 "$T/exp.err")"
	file export-chrome-$r "$T/$r.chrome.json"
done
# the rows of an import without pids: null, not -1
[ "$(json "$T/report-ps.json" 'sum(1 for t in j["threads"] if t["tgid"] is None)')" -gt 5 ] ||
	fail "report-ps: fewer than 6 threads with a null tgid"
doc doctor doctor --json

if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/events/sched/sched_switch/format ] &&
	[ -x "$WL/pingpong" ]; then
	doc doctor-verbose doctor --json -v
	doc stat stat --json -o - -- "$WL/pingpong" 2000
	doc stat-interval stat --json -I 100 -o - -- "$WL/pingpong" 20000
	"$CTXMON" record -q -o "$T/pp.data" --stat --json -- "$WL/pingpong" 2000 \
		>/dev/null 2>"$T/record-stat.json" || fail "record --stat exited $?"
	grep -v "^ctxmon" "$T/record-stat.json" >"$T/record-stat.only.json"
	file record-stat "$T/record-stat.only.json"
	doc report-live report -i "$T/pp.data" --json --causes
	doc latency-live latency -i "$T/pp.data" --json
	doc taskstats taskstats --json 1 $$
	doc taskstats-exit taskstats --json -w 0-1 -- "$WL/pingpong" 200
	doc experiment experiment -r 2 --json -- "$WL/pingpong" 200
	cp "$T/experiment.json" "$T/exp-a.json"
	doc diff-experiment diff --json "$T/exp-a.json" "$T/experiment.json"
	if "$CTXMON" profile --json -o "$T/profile.json" -- "$WL/pingpong" 2000 \
		>/dev/null 2>"$T/profile.err"; then
		file profile "$T/profile.json"
	else
		not_judged profile "$(tail -n 1 "$T/profile.err")"
	fi
else
	not_judged "stat, record, taskstats, experiment, profile" \
		"need root, tracefs and the workloads"
fi
echo "$NCHECKED JSON outputs checked"
finish
