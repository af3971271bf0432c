#!/bin/bash
# Acceptance 2: a recorder killed with SIGKILL mid-capture leaves its
# recording as FILE.part (the name the capture writes to until it ends),
# which reads as truncated, and report and script work on it; an earlier
# file at FILE is as it was.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

bg "$WL/pingpong" 2000000
echo earlier >"$T/k.data"
"$CTXMON" record -a -o "$T/k.data" 2>"$T/rec.err" &
rec=$!
recording_started "$T/k.data" $rec || fail "record did not start: $(cat "$T/rec.err")"
# kill it once events are in the file (a fixed 1.5 s before): 256 KiB of
# records is some thousands of switches
part_holds() {
	[ "$(stat -c %s "$T/k.data.part" 2>/dev/null || echo 0)" -gt 262144 ]
}
wait_for 60 part_holds || fail "record wrote under 256 KiB in 60 s"
kill -KILL $rec
wait $rec 2>/dev/null
[ "$(cat "$T/k.data")" = earlier ] || fail "the killed record changed the file at -o"
[ -s "$T/k.data.part" ] || { fail "nothing recorded before the kill"; finish; }
mv "$T/k.data.part" "$T/k.data"

"$CTXMON" report -i "$T/k.data" >"$T/rep.txt" 2>"$T/rep.err"
rc=$?
san_check report "$T/rep.err"
[ $rc = 0 ] || fail "report on the killed recording exited $rc: $(cat "$T/rep.err")"
grep -q "truncated" "$T/rep.err" || fail "report did not say the file is truncated: $(cat "$T/rep.err")"
grep -q "pingpong" "$T/rep.txt" || fail "the report has no pingpong row"
events=$(sed -n 's/.* \([0-9]*\) events, .*/\1/p' "$T/rep.txt" | head -n 1)
[ "${events:-0}" -gt 1000 ] || fail "only ${events:-0} events read back"

"$CTXMON" script -i "$T/k.data" >"$T/k.txt" 2>"$T/script.err"
rc=$?
san_check script "$T/script.err"
[ $rc = 0 ] || fail "script exited $rc"
[ "$(wc -l <"$T/k.txt")" = "${events:-0}" ] ||
	fail "script printed $(wc -l <"$T/k.txt") lines for ${events:-0} events"
finish
