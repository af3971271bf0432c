#!/bin/bash
# What a capture that cannot start leaves behind: nothing.
#
# record writes to a new file beside -o's path until the capture has
# started, so a command that cannot run, or a backend refused, keeps an
# earlier recording at the path as it was (before: truncated to a 60-byte
# stub).  Commands that need the event stream (record, latency, hist,
# stat --html / --causes) refuse a backend that counts instead (bpf-agg,
# proc) in one line, exit 2, before the command runs (before: record wrote
# 0 events, latency and hist printed empty tables, stat --html an empty
# page that said MISMATCH; all exit 0).
. "$(dirname "$0")/lib.sh"
skip_unless_capture

F=$T/keep.ctxm
echo precious >"$F"
leftovers() { ls -A "$T" | grep -c '^\.keep\.ctxm\.\|^keep\.ctxm\.part$' || true; }

rc=0
"$CTXMON" record -o "$F" -- "$T/no-such-command" 2>"$T/e1" || rc=$?
san_check "no command" "$T/e1"
echo "record of a missing command: exit $rc, $(cat "$T/e1")"
[ "$rc" = 127 ] || fail "record of a missing command exited $rc, want 127"
[ "$(cat "$F")" = precious ] || fail "the earlier file at -o was changed by a record that never started"
[ "$(leftovers)" = 0 ] || fail "a temporary file was left beside -o"

for b in bpf-agg proc; do
	for c in "record -o $F" latency "hist hist:keys=prev_pid" \
		"stat --html $T/s.html" "stat --causes"; do
		rc=0
		# shellcheck disable=SC2086 # the command's words
		"$CTXMON" $c --backend "$b" -- sh -c "touch $T/ran" \
			>/dev/null 2>"$T/e2" || rc=$?
		san_check "$c $b" "$T/e2"
		msg=$(cat "$T/e2")
		echo "$c --backend $b: exit $rc: $msg"
		[ "$rc" = 2 ] || fail "$c --backend $b exited $rc, want 2"
		[ "$(wc -l <"$T/e2")" = 1 ] || fail "$c --backend $b: not one line: $msg"
		case $msg in
		*"needs the event stream, and the $b backend gives none"*"--backend bpf"*) ;;
		*) fail "$c --backend $b: the error does not say what to do: $msg" ;;
		esac
		[ ! -e "$T/ran" ] || fail "$c --backend $b: the command ran"
		rm -f "$T/ran"
	done
done
[ "$(cat "$F")" = precious ] || fail "a refused record changed the earlier file"
[ ! -e "$T/s.html" ] || fail "a refused stat --html wrote its page"
[ "$(leftovers)" = 0 ] || fail "a temporary file was left beside -o"

# a record that starts takes the path: a recording, private, nothing beside
rc=0
"$CTXMON" record -q -o "$F" -- true 2>"$T/e3" || rc=$?
san_check "record" "$T/e3"
[ "$rc" = 0 ] || fail "record exited $rc: $(cat "$T/e3")"
mode=$(stat -c %a "$F")
"$CTXMON" report -i "$F" -o "$T/r.txt" 2>"$T/e4" || fail "report of the new recording exited $?"
echo "record -- true: exit $rc, mode $mode, $(grep '^kernel counters' "$T/r.txt")"
[ "$mode" = 600 ] || fail "the recording's mode is $mode, want 600"
grep -q "(traced vs getrusage: match)" "$T/r.txt" || fail "the new recording does not match the kernel"
[ "$(leftovers)" = 0 ] || fail "a temporary file was left beside -o"
# a path that is not a regular file is written in place
"$CTXMON" record -q -o /dev/null -- true 2>"$T/e5" || fail "record -o /dev/null exited $?"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
finish
