#!/bin/bash
# Debian's gzip and sort are built without frame pointers and stripped:
# `ctxmon profile` (user stacks unwound with their .eh_frame from a copy of
# the stack) reaches main in 90% or more of their on-CPU samples.  main has
# no symbol in a stripped binary, so a stack reaches it when it holds
# __libc_start_call_main (main's only caller, in libc) and a frame below
# it.  The frame-pointer walk (--call-graph fp) is shown for comparison,
# not checked.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v gzip >/dev/null && command -v sort >/dev/null || skip "no gzip or sort"

seq 1 2000000 | awk '{ print ($1 * 7919) % 1000003, $1 }' >"$T/in.txt"
for mode in dwarf fp; do
	echo "== --call-graph $mode"
	"$CTXMON" profile --call-graph "$mode" --json -o "$T/gzip.$mode.json" -- \
		gzip -9 -c "$T/in.txt" >/dev/null 2>"$T/gzip.$mode.err" ||
		fail "profile of gzip failed: $(tail -n 2 "$T/gzip.$mode.err")"
	"$CTXMON" profile --call-graph "$mode" --json -o "$T/sort.$mode.json" -- \
		sort --parallel=1 -o "$T/out.txt" "$T/in.txt" 2>"$T/sort.$mode.err" ||
		fail "profile of sort failed: $(tail -n 2 "$T/sort.$mode.err")"
	san_check gzip "$T/gzip.$mode.err"
	san_check sort "$T/sort.$mode.err"
	for c in gzip sort; do
		if [ "$mode" = dwarf ]; then
			python3 "$(dirname "$0")/profile_check.py" main \
				"$T/$c.$mode.json" "$c" || fail "$c: stacks do not reach main"
		else
			python3 "$(dirname "$0")/profile_check.py" main \
				"$T/$c.$mode.json" "$c" | sed 's/FAIL/(fp)/'
		fi
	done
done
finish
