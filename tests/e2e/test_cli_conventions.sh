#!/bin/bash
# One set of command-line conventions (issue 45 item 6; docs/cli.md).
# - cli_conventions.py walks every command's option table, as `ctxmon
#   --option-index` writes it from the tables the commands parse with: a
#   letter or long name means one thing everywhere, one unit per option,
#   sort keys spelled one way, sizes are SIZE; and docs/cli.md holds that
#   index verbatim.
# - the spellings that changed meaning are refused for this release in
#   one line naming the new spelling, exit 2 (top -d/-n/-f, experiment -n,
#   hist -s, report --html -o FILE), and write nothing; so is a bad item
#   of a comma-separated list (pids, tids, CPUs, event groups, metrics:
#   one parser), named in the line;
# - the old names kept as aliases do what the new ones do (diff --all,
#   --sort vol/invol/maxlat in report and diff, report -H/-P), and -m takes
#   a unit (4M = 4096, 64p = 64 pages) or says what it wants;
# - report --html FILE writes the page beside the table; --html - the page
#   alone.
# Before: -d, -n, -a, -s, -f, -P, -e meant two things each, sort keys were
# vol in report and voluntary in diff, report --html took no file.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
command -v python3 >/dev/null || skip "python3 not installed"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# ---- the tables -------------------------------------------------------
rc=0
"$CTXMON" --option-index >"$T/index.md" 2>"$T/index.err" || rc=$?
[ $rc = 0 ] || fail "ctxmon --option-index exited $rc: $(head -n 1 "$T/index.err")"
python3 "$(dirname "$0")/cli_conventions.py" "$T/index.md" "$ROOT/docs/cli.md" ||
	fail "the option tables break the conventions (above)"

# ---- refused spellings: one line, exit 2, nothing written ---------------
"$CTXMON" import -q "$D/traces/pipe-6.18-sched.txt" -o "$T/a.data" 2>"$T/imp.err" ||
	fail "import: $(tail -n 1 "$T/imp.err")"
cp "$T/a.data" "$T/b.data"
# refused NAME HINT CMD...: exit 2, one line on stderr naming HINT
refused() {
	local name=$1 hint=$2 rc=0
	shift 2
	timeout 60 "$CTXMON" "$@" >"$T/r.out" 2>"$T/r.err" </dev/null || rc=$?
	san_check "$name" "$T/r.err"
	[ $rc = 2 ] || fail "$name: ctxmon $* exited $rc, not 2"
	[ "$(wc -l <"$T/r.err")" = 1 ] ||
		fail "$name: $(wc -l <"$T/r.err") lines on stderr, not 1: $(head -c 300 "$T/r.err")"
	grep -q -- "$hint" "$T/r.err" || fail "$name: the error does not name $hint: $(head -c 300 "$T/r.err")"
	echo "$name: $(head -n 1 "$T/r.err")"
}
refused "top -d" "--delay SEC" top -d 1
refused "top -n" "--iterations N" top -b -n 1
refused "top -f" "--filter TEXT" top -b -f bash
refused "experiment -n" "-r/--runs N" experiment -n 2 -- true
refused "hist -s" "--synthetic DEF" hist -s 'x u64 a' -i "$T/a.data" 'hist:keys=common_pid'
refused "report --html -o" "--html FILE" report -i "$T/a.data" --html -o "$T/page.html"
[ ! -e "$T/page.html" ] && [ ! -e "$T/-o" ] || fail "report --html -o wrote a file"
refused "-m 4X" "512K, 4M, 1G, 64p" stat -m 4X -- true
refused "-m 0p" "512K, 4M, 1G, 64p" stat -m 0p -- true
refused "-m 99999999999G" "512K, 4M, 1G, 64p" stat -m 99999999999G -- true
# a bad item of a list, through the one list parser: the item named
refused "stat -p 1,x" "bad pid 'x'" stat -p 1,x
refused "stat -t 0" "bad tid '0'" stat -t 0
refused "report -p ,," "empty pid list" report -i "$T/a.data" -p ,,
refused "report --cpu 1,zz" "bad cpu 'zz'" report -i "$T/a.data" --cpu 1,zz
refused "script --cpu 99999" "bad cpu '99999'" script -i "$T/a.data" --cpu 99999
refused "record -e sched,bogus" "sched, irq, syscall" record -e sched,bogus -o "$T/bogus.data" -- true
[ ! -e "$T/bogus.data" ] || fail "record -e sched,bogus wrote its file"
refused "experiment --metrics" "unknown metric 'nope'" experiment -r 1 --metrics nope -- true

# ---- aliases: the old names do what the new ones do ----------------------
# same NAME CMD1 -- CMD2: both exit 0 with the same stdout
same() {
	local name=$1 a=() b=() rc1=0 rc2=0
	shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	"$CTXMON" "${a[@]}" >"$T/s1.out" 2>"$T/s1.err" || rc1=$?
	"$CTXMON" "${b[@]}" >"$T/s2.out" 2>"$T/s2.err" || rc2=$?
	san_check "$name" "$T/s1.err"
	san_check "$name" "$T/s2.err"
	if [ $rc1 != 0 ] || [ $rc2 != 0 ]; then
		fail "$name: exit $rc1 ($(head -n 1 "$T/s1.err")) and $rc2 ($(head -n 1 "$T/s2.err"))"
	elif ! cmp -s "$T/s1.out" "$T/s2.out"; then
		fail "$name: ctxmon ${a[*]} and ctxmon ${b[*]} differ"
	elif [ ! -s "$T/s1.out" ]; then
		fail "$name: no output"
	fi
}
for k in "vol voluntary" "invol involuntary" "maxlat lat_max" "lat lat_avg" "migr migrations"; do
	set -- $k
	same "report --sort $1" report -i "$T/a.data" -H -n 0 --sort "$1" -- \
		report -i "$T/a.data" --per-thread -n 0 --sort "$2"
done
for k in "vol voluntary" "invol involuntary" "maxlat lat_max" "lat lat_avg" "migr migrations"; do
	set -- $k
	same "diff --sort $1" diff -n 0 --sort "$1" "$T/a.data" "$T/b.data" -- \
		diff -n 0 --sort "$2" "$T/a.data" "$T/b.data"
done
same "diff --all" diff --all "$T/a.data" "$T/b.data" -- diff -a "$T/a.data" "$T/b.data"
same "report -P" report -i "$T/a.data" -P -- report -i "$T/a.data" --per-process
# the sort changes something: voluntary and involuntary orders differ
"$CTXMON" report -i "$T/a.data" -H -n 0 --sort voluntary 2>/dev/null >"$T/v.out"
"$CTXMON" report -i "$T/a.data" -H -n 0 --sort involuntary 2>/dev/null >"$T/i.out"
cmp -s "$T/v.out" "$T/i.out" && fail "report --sort voluntary and involuntary give the same table"

# ---- report --html FILE -----------------------------------------------------
rc=0
"$CTXMON" report -i "$T/a.data" --html "$T/r.html" >"$T/r.txt" 2>"$T/r.err" || rc=$?
san_check "report --html" "$T/r.err"
[ $rc = 0 ] || fail "report --html FILE exited $rc: $(head -n 1 "$T/r.err")"
grep -q "<html" "$T/r.html" 2>/dev/null || fail "report --html FILE wrote no page"
# the page has the causes, so the table has them too
"$CTXMON" report -i "$T/a.data" --causes >"$T/plain.txt" 2>/dev/null
cmp -s "$T/r.txt" "$T/plain.txt" || fail "report --html FILE: the table differs from report --causes's"
"$CTXMON" report -i "$T/a.data" --html - >"$T/o.html" 2>/dev/null || fail "report --html - exited $?"
head -c 200 "$T/o.html" | grep -qi "<!doctype html\|<html" || fail "report --html -: stdout is not the page"

# ---- sizes and the capture letters (root) ---------------------------------
if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/events/sched/sched_switch/format ]; then
	for m in 4096 4M 4MiB 1024p; do
		rc=0
		"$CTXMON" stat -m "$m" --backend perf -o /dev/null -- true 2>"$T/m.err" || rc=$?
		[ $rc = 0 ] || fail "stat -m $m exited $rc: $(head -n 1 "$T/m.err")"
	done
	rc=0
	"$CTXMON" stat -a -d 0.2 -o /dev/null 2>"$T/d.err" || rc=$?
	[ $rc = 0 ] || fail "stat -a -d 0.2 exited $rc: $(head -n 1 "$T/d.err")"
	for s in vol voluntary; do
		rc=0
		"$CTXMON" top -b --iterations 1 --delay 0.2 -s $s -l 5 >/dev/null 2>"$T/top.err" || rc=$?
		[ $rc = 0 ] || fail "top -s $s exited $rc: $(head -n 1 "$T/top.err")"
	done
else
	not_judged "-m with a unit, -d, top --sort" "need root and tracefs"
fi

# The README's command table names every command `ctxmon --help` lists
# (it once listed 8 of 15), and no other.
"$CTXMON" --help 2>&1 | sed -n '/^commands:/,/^$/p' | awk 'NF && !/:$/ { print $1 }' |
	sort >"$T/cmds.help"
sed -n 's/^| `\([a-z]*\)[ `].*/\1/p' "$(dirname "$0")/../../README.md" | sort >"$T/cmds.readme"
n=$(wc -l <"$T/cmds.help")
echo "README's command table: $(wc -l <"$T/cmds.readme") commands, ctxmon --help: $n"
[ "$n" -ge 15 ] || fail "ctxmon --help lists $n commands"
cmp -s "$T/cmds.help" "$T/cmds.readme" ||
	fail "README's command table differs from ctxmon --help: $(diff "$T/cmds.help" "$T/cmds.readme" | grep '^[<>]' | tr '\n' ' ')"
finish
