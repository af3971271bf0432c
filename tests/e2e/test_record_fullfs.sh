#!/bin/bash
# Acceptance 3: recording onto a 2 MiB tmpfs fills it: a clear message, a
# non-zero exit status, the recording so far as FILE.part, which report
# reads (as cut short), and nothing at FILE.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

mkdir -p "$T/small"
mount -t tmpfs -o size=2m ctxmon-test "$T/small" || skip "cannot mount a tmpfs"
trap 'umount "$T/small" 2>/dev/null; _cleanup' EXIT

bg "$WL/pingpong" 2000000
"$CTXMON" record -a --duration 60 -o "$T/small/f.data" 2>"$T/rec.err" >/dev/null
rc=$?
san_check record "$T/rec.err"
[ $rc != 0 ] || fail "record exited 0 on a full file system"
grep -q "No space left on device" "$T/rec.err" ||
	fail "no clear message: $(cat "$T/rec.err")"
grep -q "report -i $T/small/f.data.part" "$T/rec.err" ||
	fail "the message does not name f.data.part: $(cat "$T/rec.err")"
[ ! -e "$T/small/f.data" ] || fail "a failed record wrote f.data"

"$CTXMON" report -i "$T/small/f.data.part" >"$T/rep.txt" 2>"$T/rep.err"
rc=$?
san_check report "$T/rep.err"
[ $rc = 0 ] || fail "report exited $rc: $(cat "$T/rep.err")"
grep -q "cut short" "$T/rep.err" || fail "report did not say the recording was cut short"
grep -q "pingpong" "$T/rep.txt" || fail "no pingpong row in the report"
finish
