#!/bin/bash
# Inputs that once broke `ctxmon import` (tests/data/repro/, copied from
# the team's repro folder).  Each must import without a crash or a
# sanitizer report, and the round trip must be stable: the `ctxmon script`
# text of the import, imported again, prints the same text, the same
# number of events and the same losses.  The independent counts are the
# script text's own lines: one line per event, `lost_events:` lines are
# the losses.  Needs no privileges.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
D=$(cd "$(dirname "$0")/../data/repro" && pwd)
n=0
for in in "$D"/*; do
	name=$(basename "$in")
	if ! "$CTXMON" import "$in" -o "$T/$name.1" 2>"$T/$name.err1"; then
		fail "$name: import exited: $(tail -n 1 "$T/$name.err1")"
		continue
	fi
	san_check "$name import" "$T/$name.err1"
	"$CTXMON" script -i "$T/$name.1" >"$T/$name.txt1" 2>"$T/$name.serr1" ||
		fail "$name: script of the import exited"
	san_check "$name script" "$T/$name.serr1"
	"$CTXMON" import "$T/$name.txt1" -o "$T/$name.2" 2>"$T/$name.err2" ||
		fail "$name: re-import of the script text exited: $(tail -n 1 "$T/$name.err2")"
	san_check "$name re-import" "$T/$name.err2"
	"$CTXMON" script -i "$T/$name.2" >"$T/$name.txt2" 2>/dev/null
	if ! diff "$T/$name.txt1" "$T/$name.txt2" >"$T/$name.diff"; then
		fail "$name: the round trip changed the events (< first, > second):"
		head -n 10 "$T/$name.diff" >&2
	fi
	lines=$(wc -l <"$T/$name.txt1")
	lost=$(grep -c ' lost_events: ' "$T/$name.txt1")
	[ "$lines" -gt 0 ] || fail "$name: nothing imported"
	# the summary line of each import: N events, N losses
	for k in 1 2; do
		sum=$(grep -E ' events, [0-9]+ losses' "$T/$name.err$k")
		ev=$(echo "$sum" | sed -E 's/.*: ([0-9]+) events, ([0-9]+) losses.*/\1/')
		lo=$(echo "$sum" | sed -E 's/.*: ([0-9]+) events, ([0-9]+) losses.*/\2/')
		[ "$ev" = "$lines" ] ||
			fail "$name: import $k says $ev events, the script text has $lines lines"
		[ "$lo" = "$lost" ] ||
			fail "$name: import $k says $lo losses, the script text has $lost lost_events lines"
	done
	echo "$name: $lines events, $lost losses, round trip stable"
	n=$((n + 1))
done
[ "$n" -ge 1 ] || fail "no repro input ran"

# An irq name longer than script's line buffer (the fuzzer's finding,
# tests/fuzz/corpus/import/long-irq-name.txt): script printed the line cut
# at 2047 bytes, and the round trip above stays stable on the cut text.
name=$(head -c 3000 /dev/zero | tr '\0' 'q')
printf '          <idle>-0       [000]  1234.567896: irq_handler_entry: irq=44 name=%s\n' \
	"$name" >"$T/longirq.txt"
"$CTXMON" import "$T/longirq.txt" -o "$T/longirq.ctx" 2>"$T/longirq.err" ||
	fail "long irq name: import exited: $(tail -n 1 "$T/longirq.err")"
"$CTXMON" script -i "$T/longirq.ctx" >"$T/longirq.out" 2>"$T/longirq.serr"
san_check "long irq name script" "$T/longirq.serr"
got=$(sed -n 's/.* irq_handler_entry: irq=44 name=//p' "$T/longirq.out")
echo "long irq name: ${#name} bytes in, ${#got} bytes out of script"
[ "$got" = "$name" ] ||
	fail "long irq name: script printed ${#got} of its ${#name} bytes"
finish
