#!/bin/bash
# The thread that reads a stream runs at nice -10 once the command has
# started (the command keeps nice 0), so busy CPUs do not starve it:
# stress-ng --affinity 2 (two threads bouncing between the CPUs) kept a
# reader at nice 0 runnable but off the CPU 80% of the time, and a third
# of the runs lost events under perf, ftrace and bpf.  Checked here from
# /proc, which the command reads of itself and of ctxmon, its parent:
#   - stream backends (bpf, perf): command 0, reader -10; --nice 3: 3;
#   - bpf-agg counts in the kernel: the reader is left at 0;
#   - a nice the user gave ctxmon (nice -n 5 ctxmon ...) is kept;
#   - experiment: the same in each run, its own nice given back between
#     runs (the next command forks at 0);
#   - --nice 30 is refused in one line.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

probe='sleep 0.3; echo "cmd=$(nice) reader=$(cut -d" " -f19 /proc/$PPID/stat)"'
check() { # NAME EXPECTED ctxmon-args...
	local name=$1 want=$2 got
	shift 2
	got=$("$@" -o /dev/null -- sh -c "$probe" 2>"$T/$name.err" | tail -n 1)
	san_check "$name" "$T/$name.err"
	echo "$name: $got"
	if grep -q "not available\|cannot use" "$T/$name.err"; then
		echo "  (backend not available here)"
		return
	fi
	[ "$got" = "$want" ] || fail "$name: '$got', expected '$want'"
}
check bpf "cmd=0 reader=-10" "$CTXMON" stat --backend bpf
check perf "cmd=0 reader=-10" "$CTXMON" stat --backend perf
check nice3 "cmd=0 reader=3" "$CTXMON" stat --backend bpf --nice 3
check agg "cmd=0 reader=0" "$CTXMON" stat --backend bpf-agg
check user "cmd=5 reader=5" nice -n 5 "$CTXMON" stat --backend bpf
# experiment: the same for each run, and its nice given back between runs
# (the second command forked at 0, not at the reader's -10)
for args in "" "--nice 3"; do
	rm -f "$T/exp.out"
	# shellcheck disable=SC2086 # the options' words
	"$CTXMON" experiment -q -n 2 --no-causes --backend bpf $args -- \
		sh -c "$probe >>$T/exp.out" >/dev/null 2>"$T/exp.err" ||
		fail "experiment $args exited $?: $(tail -n 1 "$T/exp.err")"
	san_check "experiment $args" "$T/exp.err"
	want="cmd=0 reader=-10"
	[ -z "$args" ] || want="cmd=0 reader=3"
	got=$(sort -u "$T/exp.out" | tr '\n' ' ')
	echo "experiment -n 2 $args: $got"
	[ "$got" = "$want " ] && [ "$(wc -l <"$T/exp.out")" = 2 ] ||
		fail "experiment $args: '$got', expected '$want' from both runs"
done
rc=0
"$CTXMON" stat --nice 30 -- true 2>"$T/bad.err" || rc=$?
cat "$T/bad.err"
[ "$rc" = 2 ] || fail "--nice 30: exit $rc, expected 2"
[ "$(wc -l <"$T/bad.err")" = 1 ] && grep -q "give -20 to 19" "$T/bad.err" ||
	fail "--nice 30: not one line that says the range"
finish
