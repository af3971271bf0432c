#!/bin/bash
# tier: both (make test: one judged run; make check: three)
# report of a command that starts and ends thousands of threads:
# stress-ng's pthread stressor (a program we did not write), two workers
# each running some 8,000 threads through their lives in 2 s.
#
#   ctxmon record -o R -- kcount stress-ng --pthread 2 -t 2; ctxmon report -i R
#
# must match the command's rusage, three runs out of three: report's own
# comparison (kernel.match, which once said 'voluntary 31254 != 31392' when
# report folded exited threads past 1024 into rows without a process and
# took a worker's other threads for an orphan's, 4 runs of 6), and,
# independently of ctxmon, the rows of kcount's child's tree in report's
# JSON against kcount's own wait4() rusage (kcount_judge, the rules of
# stat_kcount).  Like stat, report keeps a command's rows whole for the
# comparison and folds them in the table only.  A run whose recording
# lost events proves nothing about the counts: it is made again, up to 6
# attempts for the 3 judged runs; runs short of 3 are reported not judged.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"

want=$(long_or 1 3)
judged=0
for r in 1 2 3 4 5 6; do
	[ "$judged" -lt "$want" ] || break
	rc=0
	"$CTXMON" record -q -o "$T/p$r.ctxm" -- "$WL/kcount" stress-ng --pthread 2 -t 2 \
		>/dev/null 2>"$T/p$r.rerr" || rc=$?
	san_check "record $r" "$T/p$r.rerr"
	[ "$rc" = 0 ] || { fail "run $r: record exited $rc"; continue; }
	rc=0
	"$CTXMON" report -i "$T/p$r.ctxm" -o "$T/p$r.txt" 2>"$T/p$r.err" || rc=$?
	san_check "report $r" "$T/p$r.err"
	grep -E '^capture|^kernel counters|^exited:' "$T/p$r.txt" | sed "s/^/  run $r: /"
	[ "$rc" = 0 ] || fail "run $r: report exited $rc"
	if ! grep -q '^capture: .* 0 lost' "$T/p$r.txt"; then
		echo "  run $r: events lost, made again"
		continue
	fi
	judged=$((judged + 1))
	grep -q "(traced vs getrusage: match)" "$T/p$r.txt" ||
		fail "run $r: the report does not match getrusage"
	# the table still folds: a thousand rows, not one per thread
	n=$(wc -l <"$T/p$r.txt")
	[ "$n" -lt 3000 ] || fail "run $r: $n lines of table, the exited threads not folded"
	rc=0
	"$CTXMON" report -i "$T/p$r.ctxm" --json -o "$T/p$r.json" 2>"$T/p$r.jerr" || rc=$?
	san_check "report --json $r" "$T/p$r.jerr"
	[ "$rc" = 0 ] || fail "run $r: report --json exited $rc"
	# stress-ng's worker count per process is not fixed: "-" for threads
	kcount_judge "run-$r" "$T/p$r.json" "$T/p$r.rerr" - -
done
[ "$judged" -gt 0 ] || skip "every recording lost events (machine busy)"
[ "$judged" -ge "$want" ] || not_judged "runs $((judged + 1))..$want" "only $judged of 6 recordings lost nothing"
finish
