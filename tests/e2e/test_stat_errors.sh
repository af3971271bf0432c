#!/bin/bash
# Error handling of `ctxmon stat`: a bad option exits 2 with a usage hint, a
# value out of range (of stat and the other commands) in one line; an
# unknown pid exits non-zero with a one-line error; a command that is not
# found exits 127; the command's exit status is passed on; SIGINT during
# `stat -a` ends the capture cleanly (exit 0) with the table printed.
. "$(dirname "$0")/lib.sh"

[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"

# run NAME CMD...: run with a 30 s limit, stdout/stderr in $T/NAME.{out,err},
# exit status in RC.
run() {
	local name=$1
	shift
	RC=0
	timeout 30 "$@" >"$T/$name.out" 2>"$T/$name.err" || RC=$?
	echo "$name: $* -> exit $RC"
	sed 's/^/  | /' "$T/$name.err" | head -n 10
	san_check "$name" "$T/$name.err"
}

# A bad option needs no privileges.
run badopt "$CTXMON" stat --no-such-option
[ "$RC" = 2 ] || fail "bad option: exit $RC, expected 2"
grep -Eqi 'usage|--help' "$T/badopt.err" ||
	fail "bad option: no usage hint on stderr"

# Values out of range are refused at parse time, in one line, exit 2 (no
# privileges needed).  Seconds past 1e9 do not fit a nanosecond clock:
# before, 'stat -a --duration 1e11' captured 0.5 s and exited 0, and
# 'report --time 1e300,' showed the whole recording.
while IFS= read -r args; do
	# shellcheck disable=SC2086 # the line is the argument list
	run badval "$CTXMON" $args
	[ "$RC" = 2 ] || fail "$args: exit $RC, expected 2"
	n=$(grep -c . "$T/badval.err")
	[ "$n" = 1 ] || fail "$args: $n lines on stderr, expected one"
done <<EOT
stat --duration 1e11 -a
stat --duration nan -a
latency --duration 1e308 -a
record --duration 2e9 -a -o $T/x.ctxm
hist --duration 1e11 -a hist:keys=cpu
profile --duration 1e12 -a
taskstats --duration 1e10 1
experiment --timeout 1e308 -r 1 -- true
report --time 1e300, -i $T/none.ctxm
report --time 0,nan -i $T/none.ctxm
report --time ,inf -i $T/none.ctxm
script --cpu , -i $T/none.ctxm
record -e , -o $T/x.ctxm -- true
experiment --metrics , -r 1 -- true
EOT

# A thread's id given as a process (/proc shows threads too, and the
# process filter never matched one: stat, latency, hist, profile and top
# captured nothing and exited 0), and a process that does not exist given
# to profile or top (also an empty capture before).
bg python3 -c 'import threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
time.sleep(60)'
py=$BG_PID
for _ in $(seq 50); do
	[ "$(ls "/proc/$py/task" 2>/dev/null | wc -l)" -ge 2 ] && break
	sleep 0.1
done
thr=$(ls "/proc/$py/task" | grep -vx "$py" | head -n 1)
[ -n "$thr" ] || fail "the python3 thread did not start"
gone=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$gone" ]; do gone=$((gone - 1)); done
while IFS= read -r args; do
	# shellcheck disable=SC2086 # the line is the argument list
	run badid "$CTXMON" $args
	[ "$RC" = 2 ] || fail "$args: exit $RC, expected 2"
	[ "$(grep -c . "$T/badid.err")" = 1 ] ||
		fail "$args: not one line on stderr"
	case $args in
	*" $thr "*) grep -q "is a thread of process $py" "$T/badid.err" ||
		fail "$args: does not name the thread's process" ;;
	esac
done <<EOT
stat -p $thr --duration 1
latency -p $thr --duration 1
hist -p $thr --duration 1 hist:keys=cpu
profile -p $thr --duration 1
top --batch --iterations 1 -p $thr -l 5
profile -p $gone --duration 1
top --batch --iterations 1 -t $gone -l 5
EOT
kill "$py" 2>/dev/null

skip_unless_capture

# A pid that does not exist: the highest free one below pid_max.
pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$pid" ]; do pid=$((pid - 1)); done
run badpid "$CTXMON" stat -p "$pid"
if [ "$RC" = 0 ] || [ "$RC" = 124 ]; then
	fail "unknown pid $pid: exit $RC, expected an error exit"
fi
n=$(grep -c . "$T/badpid.err")
[ "$n" = 1 ] || fail "unknown pid: $n lines on stderr, expected one"

run nocmd "$CTXMON" stat -- ctxmon-no-such-command-xyz
[ "$RC" = 127 ] || fail "command not in PATH: exit $RC, expected 127"
run nopath "$CTXMON" stat -- /nonexistent/dir/cmd
[ "$RC" = 127 ] || fail "command path not found: exit $RC, expected 127"

run status3 "$CTXMON" stat -- sh -c 'exit 3'
[ "$RC" = 3 ] || fail "command exiting 3: stat exit $RC, expected 3"
# With a command, the table goes to stderr (as perf stat does).
[ "$(cat "$T/status3.out" "$T/status3.err" | grep -c .)" -ge 3 ] ||
	fail "command exiting 3: no table printed"

# SIGINT ends a system-wide capture.  Job control gives the background job
# the default SIGINT disposition (a non-interactive shell ignores it for
# background jobs otherwise).
set -m
"$CTXMON" stat -a >"$T/int.out" 2>"$T/int.err" &
pid=$!
set +m
sleep 2
kill -INT "$pid" 2>/dev/null || fail "stat -a ended before SIGINT"
for _ in $(seq 100); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	fail "stat -a still running 10 s after SIGINT"
	kill -KILL "$pid"
fi
RC=0
wait "$pid" || RC=$?
echo "sigint: ctxmon stat -a, SIGINT after 2 s -> exit $RC," \
	"$(wc -l <"$T/int.out") lines on stdout"
head -n 12 "$T/int.out" | sed 's/^/  > /'
sed 's/^/  | /' "$T/int.err" | head -n 10
san_check sigint "$T/int.err"
[ "$RC" = 0 ] || fail "SIGINT: exit $RC, expected 0"
[ "$(grep -c . "$T/int.out")" -ge 3 ] || fail "SIGINT: no table on stdout"

# no target: the machine is captured, and stat says so (issue 13)
RC=0
"$CTXMON" stat --duration 1 -o "$T/nt.out" 2>"$T/nt.err" || RC=$?
echo "no target: ctxmon stat --duration 1 -> exit $RC"
sed 's/^/  | /' "$T/nt.err" | head -n 5
[ "$RC" = 0 ] || fail "no target: exit $RC"
grep -q 'capturing the whole machine' "$T/nt.err" ||
	fail "no target: stat did not say it captures the whole machine"

finish
