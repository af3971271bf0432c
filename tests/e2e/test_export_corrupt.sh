#!/bin/bash
# Issue 17, acceptance 4: a truncated or damaged recording is refused by
# `export` with the recording's verdict (the line `script` prints, issue
# 45), and no output file is left; with --partial, what the readable part
# holds is exported (with the same line): as many switches as `script`
# prints from the same file.
# `report --html` shows the cut prominently.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v protoc >/dev/null || skip "protoc not installed (Debian: protobuf-compiler)"
D=$(cd "$(dirname "$0")/../data" && pwd)

"$CTXMON" record -q -o "$T/ok.data" -- "$WL/pingpong" 100000 >/dev/null 2>&1 ||
	fail "record exited $?"
size=$(stat -c %s "$T/ok.data")
[ "$size" -gt 200000 ] || fail "recording of $size bytes: too small to cut"
head -c $((size * 2 / 3)) "$T/ok.data" >"$T/cut.data"
cp "$T/ok.data" "$T/bad.data"
printf '\377\377\377\377\377\377\377\377' |
	dd of="$T/bad.data" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
head -c 10 "$T/ok.data" >"$T/tiny.data"

for k in cut bad; do
	"$CTXMON" script -i "$T/$k.data" >"$T/$k.txt" 2>"$T/$k.script.err"
	# the recording's verdict, as script gives it (docs/integrity.md):
	# "ctxmon script: FILE: incomplete: truncated at offset N: why; ..."
	why=$(sed -n 's/^ctxmon script: \(.*: incomplete: .* at offset [0-9]*: .*\)/\1/p' "$T/$k.script.err" | head -n 1)
	[ -n "$why" ] || { fail "$k: script names no problem: $(cat "$T/$k.script.err")"; continue; }
	for fmt in perfetto sqlite chrome-json; do
		rc=0
		"$CTXMON" export -f $fmt -i "$T/$k.data" -o "$T/$k.$fmt" >/dev/null 2>"$T/$k.err" || rc=$?
		san_check "export $k $fmt" "$T/$k.err"
		[ "$rc" = 1 ] || fail "$k $fmt: export exited $rc, expected 1"
		grep -qF "$why" "$T/$k.err" ||
			fail "$k $fmt: export does not give the reader's error '$why': $(cat "$T/$k.err")"
		[ -e "$T/$k.$fmt" ] && fail "$k $fmt: an output file was left behind"
	done
	sw=$(grep -c ' sched_switch: ' "$T/$k.txt")
	[ "$sw" -gt 1000 ] || fail "$k: only $sw switches readable"
	# --partial: the readable part
	"$CTXMON" export --partial -i "$T/$k.data" -o "$T/$k.pftrace" >/dev/null 2>"$T/$k.p.err" ||
		fail "$k: export --partial exited $?"
	grep -qxF "ctxmon export: $why" "$T/$k.p.err" || fail "$k: --partial gives not the verdict: $(cat "$T/$k.p.err")"
	protoc --decode=perfetto.protos.Trace -I "$D/perfetto" ctxmon_perfetto.proto \
		<"$T/$k.pftrace" >"$T/$k.dec" 2>"$T/$k.perr" || fail "$k: protoc cannot decode the partial export"
	got=$(grep -c 'switch_timestamp:' "$T/$k.dec")
	[ "$got" = "$sw" ] || fail "$k: partial export has $got switches, script prints $sw"
	"$CTXMON" export --partial -f sqlite -i "$T/$k.data" -o "$T/$k.db" >/dev/null 2>&1 ||
		fail "$k: sqlite --partial exited $?"
	ins=$(grep -c ' sched_switch: .* next_pid=' "$T/$k.txt")
	# and at most one more row per switch-out of a task the CPU had not
	# switched to: an untraced switch-in the bpf backend dates
	# (docs/accounting.md), which the text cannot show
	more=$(sed -n 's/.*\[\([0-9]*\)\].* sched_switch: .* prev_pid=\([0-9]*\) .* next_pid=\([0-9]*\) .*/\1 \2 \3/p' "$T/$k.txt" |
		awk '($1 in cur) && cur[$1] != $2 && $2 != 0 { n++ } { cur[$1] = $3 } END { print n + 0 }')
	got=$(sqlite3 "$T/$k.db" 'select count(*) from sched' 2>/dev/null)
	[ -n "$got" ] && [ "$got" -ge "$ins" ] && [ "$got" -le $((ins + more)) ] ||
		fail "$k: partial sqlite has $got sched rows, script $ins switch-ins (+ up to $more untraced)"
done

# a failed export removes only a regular file it wrote, never what the
# name points to otherwise (here a symlink; /dev/full was the case found)
: >"$T/target"
ln -s "$T/target" "$T/link"
"$CTXMON" export -f perfetto -i "$T/cut.data" -o "$T/link" >/dev/null 2>&1 &&
	fail "export of the cut recording to a symlink succeeded"
[ -L "$T/link" ] || fail "a failed export removed the symlink it was given"

rc=0
"$CTXMON" export -i "$T/tiny.data" -o "$T/tiny.pftrace" >/dev/null 2>"$T/tiny.err" || rc=$?
[ "$rc" = 1 ] && grep -q "cannot read .*header" "$T/tiny.err" ||
	fail "a 10-byte file: exit $rc, $(cat "$T/tiny.err")"

"$CTXMON" report -i "$T/cut.data" --html "$T/cut.html" >/dev/null 2>/dev/null ||
	fail "report --html of the cut recording exited $?"
grep -q "INCOMPLETE:" "$T/cut.html" || fail "the HTML page of a cut recording does not say so"
# in the words of every other reader (docs/integrity.md)
grep -qF "$(sed -n 's/^ctxmon script: //p' "$T/cut.script.err" | head -n 1)" "$T/cut.html" ||
	fail "the HTML page does not give the recording's verdict line"
finish
