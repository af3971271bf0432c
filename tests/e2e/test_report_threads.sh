#!/bin/bash
# report of a command that starts and ends thousands of threads:
# stress-ng's pthread stressor (a program we did not write), two workers
# each running some 8,000 threads through their lives in 2 s.
#
#   ctxmon record -o R -- stress-ng --pthread 2 -t 2; ctxmon report -i R
#
# must match the command's getrusage, three runs out of three.  report
# folded exited threads past 1024 into rows without a process, as stat
# does for -a; a worker's leader folded away left its other threads
# without a parent, taken for an orphan's: 'voluntary 31254 != 31392' (the
# 138 of a worker marked ~), 4 runs of 6.  Like stat, report keeps a
# command's rows whole for the comparison and folds them in the table only.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"

for r in 1 2 3; do
	rc=0
	"$CTXMON" record -q -o "$T/p$r.ctxm" -- stress-ng --pthread 2 -t 2 \
		>/dev/null 2>"$T/p$r.rerr" || rc=$?
	san_check "record $r" "$T/p$r.rerr"
	[ "$rc" = 0 ] || { fail "run $r: record exited $rc"; continue; }
	rc=0
	"$CTXMON" report -i "$T/p$r.ctxm" -o "$T/p$r.txt" 2>"$T/p$r.err" || rc=$?
	san_check "report $r" "$T/p$r.err"
	grep -E '^capture|^kernel counters|^exited:' "$T/p$r.txt" | sed "s/^/  run $r: /"
	[ "$rc" = 0 ] || fail "run $r: report exited $rc"
	grep -q '^capture: .* 0 lost' "$T/p$r.txt" ||
		{ echo "  run $r: events lost, not judged"; continue; }
	grep -q "(traced vs getrusage: match)" "$T/p$r.txt" ||
		fail "run $r: the report does not match getrusage"
	# the table still folds: a thousand rows, not one per thread
	n=$(wc -l <"$T/p$r.txt")
	[ "$n" -lt 3000 ] || fail "run $r: $n lines of table, the exited threads not folded"
done
finish
