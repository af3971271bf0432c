#!/bin/bash
# runs: alone
# (stress-ng --mutex 2 runs SCHED_FIFO threads on both CPUs for
# 2 s, which would starve a test run beside it)
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
# And --realtime PRIO: the reader at SCHED_FIFO PRIO, the command at its
# own policy (SCHED_OTHER), read from /proc the same way, for stat,
# record, hist, profile and each run of experiment; bpf-agg's left alone; 0, 100 and a
# word refused in one line; without CAP_SYS_NICE one line says so and the
# capture goes on; and stress-ng --mutex 2, whose
# threads run SCHED_FIFO on both CPUs (a stream reader at nice -10 lost
# 620,855 of 742,153 events), read at --realtime 99 loses nothing and
# equals the command's wait4() rusage (stat_kcount).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
# The expected values are those of a ctxmon started at nice 0; a run of
# the suite under `nice -n 5` would make every one the "nice the user
# gave" case.  Root may take this shell back to 0.
[ "$(nice)" = 0 ] || renice -n 0 -p $$ >/dev/null ||
	skip "started at nice $(nice), and cannot go back to 0"

probe='sleep 0.3; echo "cmd=$(nice) reader=$(cut -d" " -f19 /proc/$PPID/stat)"'
check() { # NAME EXPECTED ctxmon-args...
	local name=$1 want=$2 got rc=0
	shift 2
	# the probe's line is the command's last line of output; ctxmon's
	# exit status is kept apart (a pipe into tail lost it)
	"$@" -o /dev/null -- sh -c "${PROBE:-$probe}" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	got=$(tail -n 1 "$T/$name.out")
	san_check "$name" "$T/$name.err"
	echo "$name: $got (exit $rc)"
	if [ "$rc" != 0 ] && grep -q "not available\|cannot use" "$T/$name.err"; then
		not_judged "$name" "$(grep -m 1 "not available\|cannot use" "$T/$name.err")"
		return
	fi
	[ "$rc" = 0 ] || fail "$name: ctxmon exited $rc: $(tail -n 1 "$T/$name.err")"
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
	"$CTXMON" experiment -q -r 2 --no-causes --backend bpf $args -- \
		sh -c "$probe >>$T/exp.out" >/dev/null 2>"$T/exp.err" ||
		fail "experiment $args exited $?: $(tail -n 1 "$T/exp.err")"
	san_check "experiment $args" "$T/exp.err"
	want="cmd=0 reader=-10"
	[ -z "$args" ] || want="cmd=0 reader=3"
	got=$(sort -u "$T/exp.out" | tr '\n' ' ')
	echo "experiment -r 2 $args: $got"
	[ "$got" = "$want " ] && [ "$(wc -l <"$T/exp.out")" = 2 ] ||
		fail "experiment $args: '$got', expected '$want' from both runs"
done
bad() { # OPTION VALUE TEXT: refused with exit 2 in one line with TEXT
	local rc=0
	"$CTXMON" stat "$1" "$2" -- true 2>"$T/bad.err" || rc=$?
	cat "$T/bad.err"
	[ "$rc" = 2 ] || fail "$1 $2: exit $rc, expected 2"
	[ "$(wc -l <"$T/bad.err")" = 1 ] && grep -q "$3" "$T/bad.err" ||
		fail "$1 $2: not one line that says the range"
}
bad --nice 30 "give -20 to 19"
for v in 0 100 high; do
	bad --realtime "$v" "give 1 to 99"
done

# /proc/PID/stat fields 40 and 41: rt_priority and policy (1: SCHED_FIFO)
PROBE='sleep 0.3; set -- $(cut -d" " -f40,41 /proc/$$/stat) $(cut -d" " -f40,41 /proc/$PPID/stat); echo "cmd=$1/$2 reader=$3/$4"'
check rt-bpf "cmd=0/0 reader=99/1" "$CTXMON" stat --backend bpf --realtime 99
check rt-record "cmd=0/0 reader=7/1" "$CTXMON" record --realtime 7
check rt-agg "cmd=0/0 reader=0/0" "$CTXMON" stat --backend bpf-agg --realtime 99
# the commands with option tables of their own: hist reads the stream as
# stat does, profile its samples' ring
check rt-hist "cmd=0/0 reader=8/1" "$CTXMON" hist --backend bpf --realtime 8 'hist:keys=prev_pid'
check rt-profile "cmd=0/0 reader=5/1" "$CTXMON" profile --realtime 5
# experiment: each run's reader, and each command at its own policy
rm -f "$T/exp.out"
"$CTXMON" experiment -q -r 2 --no-causes --backend bpf --realtime 9 -- \
	sh -c "$PROBE >>$T/exp.out" >/dev/null 2>"$T/exp.err" ||
	fail "experiment --realtime 9 exited $?: $(tail -n 1 "$T/exp.err")"
san_check "experiment --realtime" "$T/exp.err"
got=$(sort -u "$T/exp.out" | tr '\n' ' ')
echo "experiment -r 2 --realtime 9: $got"
[ "$got" = "cmd=0/0 reader=9/1 " ] && [ "$(wc -l <"$T/exp.out")" = 2 ] ||
	fail "experiment --realtime 9: '$got', expected 'cmd=0/0 reader=9/1' from both runs"
# without CAP_SYS_NICE: one line says so, and it reads at its nice
rc=0
setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice "$CTXMON" experiment \
	-q -r 2 --no-causes --backend bpf --realtime 9 -- \
	true >/dev/null 2>"$T/nocap-exp.err" || rc=$?
cat "$T/nocap-exp.err"
[ "$rc" = 0 ] || fail "experiment --realtime without CAP_SYS_NICE: exit $rc, expected 0"
[ "$(grep -c "real-time" "$T/nocap-exp.err")" = 1 ] &&
	grep -q "^ctxmon experiment: cannot read at real-time priority 9: Operation not permitted" "$T/nocap-exp.err" ||
	fail "experiment --realtime without CAP_SYS_NICE: not one line that says why"
rc=0
setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice "$CTXMON" stat \
	--backend bpf --realtime 99 -o "$T/nocap.out" -- true 2>"$T/nocap.err" || rc=$?
cat "$T/nocap.err"
[ "$rc" = 0 ] || fail "--realtime without CAP_SYS_NICE: exit $rc, expected 0"
[ "$(grep -c "real-time" "$T/nocap.err")" = 1 ] &&
	grep -q "^ctxmon stat: cannot read at real-time priority 99: Operation not permitted (it needs CAP_SYS_NICE" "$T/nocap.err" ||
	fail "--realtime without CAP_SYS_NICE: not one line that says why"
grep -q "^kernel counters: .*match" "$T/nocap.err" ||
	fail "--realtime without CAP_SYS_NICE: no capture"

if command -v stress-ng >/dev/null; then
	STAT_OPTS="--realtime 99" STAT_BACKENDS=bpf \
		stat_kcount rt-mutex - stress-ng --mutex 2 -t 2
else
	not_judged "rt-mutex" "stress-ng not installed: the real-time load was not run"
fi
finish
