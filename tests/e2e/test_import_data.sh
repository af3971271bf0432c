#!/bin/bash
# Data-driven importer cases: tests/data/import/<case>/ holds a trace
# (input, or input.gz), the per-thread counts an independent awk count of
# its sched_switch lines gives (expected: "tid switches voluntary
# involuntary exit", made by count.awk) and the command that turns the
# input into the text awk read (truth: perf script, trace-cmd report -N,
# cat).  Each input is imported with `ctxmon import`, whatever its kind,
# and every thread with switch-outs must report exactly the expected
# counts.  Where the truth tool is installed, the expected file is also
# recomputed from the input, so it cannot drift from what the input
# holds.  Needs no privileges.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
# a leak inside libtracecmd/libtraceevent is theirs (see the file)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data/import" && pwd)
ncase=0
for c in "$D"/*/; do
	c=${c%/}
	name=$(basename "$c")
	in=$c/input
	if [ -f "$in.gz" ]; then
		in=$T/$name.input
		zcat "$c/input.gz" >"$in" || { fail "$name: zcat"; continue; }
	fi
	[ -f "$in" ] || { fail "$name: no input"; continue; }
	# the importer tells the kind from the content: no extension helps it
	if ! "$CTXMON" import -q "$in" -o "$T/$name.data" 2>"$T/$name.err"; then
		if grep -q "built without libtracecmd" "$T/$name.err"; then
			echo "$name: skipped: $(tail -n 1 "$T/$name.err")"
			continue
		fi
		fail "$name: import exited: $(tail -n 1 "$T/$name.err")"
		continue
	fi
	san_check "$name import" "$T/$name.err"
	"$CTXMON" report --per-thread --csv -n 0 -i "$T/$name.data" 2>"$T/$name.rerr" |
		awk -F, 'NR > 1 && $2 == "thread" && $6 > 0 { print $3, $6, $7, $8, $9 }' |
		sort -n >"$T/$name.got"
	san_check "$name report" "$T/$name.rerr"
	if ! diff "$c/expected" "$T/$name.got" >"$T/$name.diff"; then
		fail "$name: ctxmon's per-thread counts differ from awk's (< awk, > ctxmon):"
		head -n 20 "$T/$name.diff" >&2
	else
		echo "$name: $(wc -l <"$c/expected") threads, $(awk '{ s += $2 } END { print s }' "$c/expected") switch-outs: equal"
	fi
	tool=$(awk '{ print $1 }' "$c/truth")
	if command -v "$tool" >/dev/null 2>&1; then
		cmd=$(sed "s|INPUT|$in|" "$c/truth")
		sh -c "$cmd" 2>/dev/null | awk -f "$D/count.awk" | sort -n >"$T/$name.truth"
		diff -q "$c/expected" "$T/$name.truth" >/dev/null ||
			fail "$name: expected no longer equals count.awk over '$cmd'"
	else
		echo "$name: $tool not installed: expected not recomputed"
	fi
	ncase=$((ncase + 1))
done
[ "$ncase" -ge 5 ] || fail "only $ncase cases ran"
finish
