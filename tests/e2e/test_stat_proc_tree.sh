#!/bin/bash
# The proc tier on a command whose processes fork, kill and reap children
# within a sample period.  stress-ng's futex stressor (a program we did not
# write) forks a waiter per worker; the worker kills and reaps it and exits
# right after.  The rows are the kernel's counters as last read, so they
# are lower bounds: under
#
#   ctxmon stat --backend proc --check --json -o out.json -- kcount stress-ng --futex 1 -t 1
#
# the traced counts of the processes the command reaped must be at most
# getrusage's, each kind (stat's own reading, and kcount's wait4() of
# stress-ng, which ctxmon did not read), and hold most of it (the waiter lives the whole
# run); no waiter may be taken for an orphan (it was reaped: its counts
# are in the rusage), and the verdict is "within bound".  Before the rows'
# ends were taken for read times, the waiters were orphans by the order of
# two reads in one sample, and the verdict read "voluntary 5 != 88434".
# The same for the clone stressor, whose children outlive their parents:
# there the orphans are those /proc shows reparented.
. "$(dirname "$0")/lib.sh"
skip_unless_root
command -v stress-ng >/dev/null || skip "stress-ng not installed (Debian package stress-ng)"

for s in futex clone; do
	rc=0
	"$CTXMON" stat --backend proc --check --json -o "$T/$s.json" -- \
		"$WL/kcount" stress-ng --"$s" 1 -t 1 >/dev/null 2>"$T/$s.err" || rc=$?
	san_check "$s" "$T/$s.err"
	sed 's/^/  | /' "$T/$s.err" | grep -v "stress-ng:" | cut -c1-240
	[ "$rc" = 0 ] || fail "$s: stat --check exited $rc"
	grep -q "within bound" "$T/$s.err" || fail "$s: the verdict is not 'within bound'"
	read -r rv ri tv ti bound <<<"$(json "$T/$s.json" \
		'" ".join(str(j["kernel"][x]) for x in ("voluntary", "involuntary", "traced_voluntary", "traced_involuntary", "bound"))')"
	# the rows, summed here, not by the comparison: reaped processes only
	read -r sv si <<<"$(json "$T/$s.json" \
		'" ".join(str(sum(t[x] for t in j["threads"] if not t["orphaned"])) for x in ("voluntary", "involuntary"))')"
	echo "$s: getrusage $rv $ri; rows of reaped processes $sv $si (comparison $tv $ti, bound $bound)"
	[ "$bound" = True ] || fail "$s: not compared as a bound"
	[ "$sv" = "$tv" ] && [ "$si" = "$ti" ] ||
		fail "$s: the rows sum to $sv $si, the comparison says $tv $ti"
	[ "$sv" -le "$rv" ] || fail "$s: voluntary $sv above getrusage $rv"
	[ "$si" -le "$ri" ] || fail "$s: involuntary $si above getrusage $ri"
	# the same bounds against the kernel's count read without ctxmon:
	# kcount's wait4() rusage of stress-ng, against the rows of stress-ng's
	# tree (kcount's own switches left out)
	kpid=$(kcount_get "$T/$s.err" pid)
	kv=$(kcount_get "$T/$s.err" nvcsw)
	ki=$(kcount_get "$T/$s.err" nivcsw)
	if [ -z "$kpid" ] || [ -z "$kv" ] || [ -z "$ki" ]; then
		fail "$s: no kcount line"
		continue
	fi
	eval "$(tree_sums "$T/$s.json" "$kpid")"
	echo "$s: kcount (wait4) $kv $ki; rows of stress-ng's tree $voluntary $involuntary"
	[ "$found" = 1 ] || fail "$s: no row for stress-ng ($kpid)"
	[ "$voluntary" -le "$kv" ] || fail "$s: voluntary $voluntary above kcount's $kv"
	[ "$involuntary" -le "$ki" ] || fail "$s: involuntary $involuntary above kcount's $ki"
	if [ "$s" = futex ]; then
		[ $((sv * 10)) -ge $((rv * 8)) ] ||
			fail "futex: rows hold $sv of getrusage's $rv voluntary, under 80%"
		[ $((voluntary * 10)) -ge $((kv * 8)) ] ||
			fail "futex: stress-ng's rows hold $voluntary of kcount's $kv voluntary, under 80%"
		n=$(json "$T/$s.json" 'len([t for t in j["threads"] if t["orphaned"]])')
		[ "$n" = 0 ] || fail "futex: $n rows taken for orphans"
	fi
done
finish
