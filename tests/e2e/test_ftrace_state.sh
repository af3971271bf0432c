#!/bin/bash
# runs: alone
# (it compares the machine-wide top-level tracefs state before and
# after, and counts the instances of dead ctxmons, which another test's
# killed capture (test_record_kill) or tracer would change)
# The ftrace backends work in a private instance (instances/ctxmon-<pid>)
# and must leave the top-level tracefs state exactly as they found it:
# tracing_on, current_tracer, set_event, buffer sizes, trace_clock,
# trace_options and options/*, and every events/.../enable, filter and
# trigger are read before and after, and must not differ:
#   - after a capture of a command,
#   - after SIGINT of a system-wide capture,
#   - after SIGKILL (the instance is then left behind, its tracing stopped
#     by the kernel when the process died; the next ctxmon removes it),
#   - after captures that fail half-way (fewer file descriptors than the
#     set-up needs: every failure point after the instance exists), and
#     without root.
# No instance of a dead ctxmon may be left in the end.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

TFS=/sys/kernel/tracing

# state FILE: dump the top-level state into FILE.
state() {
	python3 - "$TFS" >"$1" <<'PY'
import glob, sys
r = sys.argv[1]
names = ["tracing_on", "current_tracer", "set_event", "buffer_size_kb",
         "buffer_total_size_kb", "buffer_percent", "buffer_subbuf_size_kb",
         "trace_clock", "trace_options", "tracing_cpumask", "set_event_pid",
         "set_event_notrace_pid", "timestamp_mode", "saved_cmdlines_size"]
files = ["%s/%s" % (r, n) for n in names]
for pat in ("options/*", "per_cpu/cpu*/buffer_size_kb", "events/enable",
            "events/*/enable", "events/*/*/enable", "events/*/*/filter",
            "events/*/*/trigger"):
    files += sorted(glob.glob("%s/%s" % (r, pat)))
for f in files:
    try:
        v = open(f).read()
    except OSError as e:
        v = "<%s>" % e.strerror
    print("%s: %s" % (f[len(r) + 1:], v.replace("\n", "\\n")))
PY
}

# same_state WHAT BEFORE: compare the state now with BEFORE.
same_state() {
	state "$T/after"
	if cmp -s "$2" "$T/after"; then
		echo "  top-level state unchanged ($(wc -l <"$2") files)"
	else
		fail "$1: the top-level tracefs state changed:"
		diff "$2" "$T/after" | head -n 20 >&2
	fi
}

# Instances named (as ctxmon names them: ctxmon-<pid>[-<n>]) for a ctxmon
# whose process is gone.  Other names are someone else's.
stale() {
	local d n p
	for d in "$TFS"/instances/ctxmon-*; do
		[ -d "$d" ] || continue
		n=${d##*/}
		[[ $n =~ ^ctxmon-([0-9]+)(-[0-9]+)?$ ]] || continue
		p=${BASH_REMATCH[1]}
		kill -0 "$p" 2>/dev/null || echo "$n"
	done
}

# wait_live PID: until instances/ctxmon-PID traces (10 s at most).
wait_live() {
	local i
	for i in $(seq 100); do
		[ "$(cat "$TFS/instances/ctxmon-$1/tracing_on" 2>/dev/null)" = 1 ] &&
			return 0
		sleep 0.1
	done
	return 1
}

state "$T/before0"
if [ -n "$(stale)" ]; then
	echo "stale instances before the test (a ctxmon was killed earlier): $(stale | tr '\n' ' ')"
fi

for be in ftrace ftrace-text; do
	echo "== $be"

	# 1. a command
	state "$T/before"
	"$CTXMON" stat --backend "$be" --json -o "$T/cmd.json" -- \
		"$WL/pingpong" 2000 2>"$T/cmd.err" &
	pid=$!
	rc=0
	wait "$pid" || rc=$?
	echo "capture of a command: exit $rc"
	san_check "$be cmd" "$T/cmd.err"
	[ "$rc" = 0 ] || fail "$be: stat -- pingpong exited $rc: $(tail -n 1 "$T/cmd.err")"
	[ -e "$TFS/instances/ctxmon-$pid" ] && fail "$be: instance ctxmon-$pid left behind"
	same_state "$be: capture" "$T/before"

	# 2. SIGINT
	state "$T/before"
	"$CTXMON" stat --backend "$be" -a --duration 60 --json -o "$T/int.json" \
		2>"$T/int.err" &
	pid=$!
	if ! wait_live "$pid"; then
		fail "$be: instance ctxmon-$pid never started tracing"
	else
		sleep 0.5
	fi
	kill -INT "$pid"
	rc=0
	wait "$pid" || rc=$?
	echo "SIGINT of stat -a: exit $rc"
	san_check "$be int" "$T/int.err"
	[ "$rc" = 0 ] || fail "$be: stat -a after SIGINT exited $rc: $(tail -n 1 "$T/int.err")"
	json_check "$T/int.json" || fail "$be: no valid JSON after SIGINT"
	[ -e "$TFS/instances/ctxmon-$pid" ] && fail "$be: instance ctxmon-$pid left behind after SIGINT"
	same_state "$be: SIGINT" "$T/before"

	# 3. SIGKILL, then the next start cleans up
	state "$T/before"
	"$CTXMON" stat --backend "$be" -a --duration 60 --json -o "$T/kill.json" \
		2>/dev/null &
	pid=$!
	wait_live "$pid" || fail "$be: instance ctxmon-$pid never started tracing"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	inst=$TFS/instances/ctxmon-$pid
	if [ -d "$inst" ]; then
		on=$(cat "$inst/tracing_on")
		echo "SIGKILL: ctxmon-$pid left behind, its tracing_on $on, buffer $(cat "$inst/buffer_total_size_kb") KiB in all"
		# free_buffer was held open with disable_on_free set
		[ "$on" = 0 ] || fail "$be: the killed ctxmon's instance still traces"
	else
		fail "$be: no instance after SIGKILL (was it ever made?)"
	fi
	same_state "$be: SIGKILL" "$T/before"
	rc=0
	"$CTXMON" stat --backend "$be" -- true 2>"$T/next.err" || rc=$?
	[ "$rc" = 0 ] || fail "$be: the run after SIGKILL exited $rc: $(tail -n 1 "$T/next.err")"
	[ -d "$inst" ] && fail "$be: the next start did not remove ctxmon-$pid"
	left=$(stale)
	[ -z "$left" ] || fail "$be: stale instances remain: $left"
	echo "next start: ctxmon-$pid removed; stale instances: ${left:-none}"
	same_state "$be: after cleanup" "$T/before"

	# 4. failing half-way: too few file descriptors, at every count
	state "$T/before"
	halfway=0 ok=0 failed=0
	for n in $(seq 4 24); do
		rc=0
		(ulimit -n "$n" && exec "$CTXMON" stat --backend "$be" -- true) \
			>/dev/null 2>"$T/fd.err" || rc=$?
		if [ "$rc" = 0 ]; then
			ok=$((ok + 1))
		else
			failed=$((failed + 1))
			grep -q "instances/ctxmon-" "$T/fd.err" && halfway=$((halfway + 1))
		fi
	done
	left=$(stale)
	echo "fd limits 4..24: $ok ran, $failed failed ($halfway after the instance was made); stale instances: ${left:-none}"
	[ -z "$left" ] || fail "$be: failed starts left instances: $left"
	[ "$halfway" -gt 0 ] || fail "$be: no start failed after making its instance: the half-way path was not exercised"
	[ "$ok" -gt 0 ] || fail "$be: no run succeeded even with 24 descriptors"
	same_state "$be: failed starts" "$T/before"
done

# 5. not root: one clear line, nothing made
if ! command -v setpriv >/dev/null; then
	not_judged "ftrace as nobody" "setpriv not installed (util-linux)"
else
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CTXMON" stat --backend ftrace -- true >/dev/null 2>"$T/user.err" || rc=$?
	echo "as nobody: exit $rc: $(cat "$T/user.err")"
	if grep -q "Permission denied" "$T/user.err" && ! grep -q "^ctxmon" "$T/user.err"; then
		not_judged "ftrace as nobody" "the binary is not runnable as nobody here"
	else
		[ "$rc" != 0 ] || fail "ftrace as nobody: exit 0"
		[ "$(wc -l <"$T/user.err")" = 1 ] || fail "ftrace as nobody: expected one line of error"
	fi
	[ -z "$(stale)" ] || fail "as nobody: instances left"
fi

same_state "the whole test" "$T/before0"
finish
