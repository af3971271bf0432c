#!/bin/bash
# `ctxmon profile --wakers` on a pipe ping-pong (profblock pingpong: two
# processes pass a byte back and forth 20000 times): the reader's read()
# stack, off CPU in [blocked: read], is joined to the other process's
# write() stack as its waker, as many times as the exchange makes it block
# (100 or more); the same pairs are in the folded output.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
[ -x "$WL/profblock" ] || skip "no profblock workload in $WL"

"$CTXMON" profile --wakers --json -o "$T/w.json" -- "$WL/profblock" pingpong 20000 \
	2>"$T/w.err" || fail "profile --wakers failed: $(tail -n 2 "$T/w.err")"
san_check wakers "$T/w.err"
python3 "$(dirname "$0")/profile_check.py" wakers "$T/w.json" || fail "wakers checks"
"$CTXMON" profile --wakers --folded -o "$T/w.folded" -- "$WL/profblock" pingpong 2000 \
	2>>"$T/w.err" || fail "profile --wakers --folded failed"
grep -E '^waker:profblock;.*read;.*\[blocked: read\];--;.*write.*;profblock ' "$T/w.folded" |
	head -n 2 | cut -c1-300
grep -Eq '^waker:profblock;.*read;.*\[blocked: read\];--;.*write.*;profblock ' "$T/w.folded" ||
	fail "no folded waker line with read woken by write"
finish
