#!/bin/bash
# Output that cannot be written (/dev/full): every command that writes to
# stdout or to a file it is given exits 1 with one line naming the error,
# and no sanitizer report (an export whose open failed freed what it
# made).  Before, a short output still in stdio's buffer when the command
# returned was lost at exit with exit status 0: doctor, diff, serve
# --once, --help, --version, --man, --completion.  A reader that leaves
# ('| head -1') is not an error.  Needs no privileges: the recordings are
# imported from a trace in tests/data.
. "$(dirname "$0")/lib.sh"

[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
[ -c /dev/full ] || skip "no /dev/full"
DATA=$(cd "$(dirname "$0")/../data" && pwd)

"$CTXMON" import -q "$DATA/traces/pipe-6.18-sched.txt" -o "$T/a.ctxm" ||
	fail "import of the pipe trace failed"
head -n 400 "$DATA/traces/pipe-6.18-sched.txt" >"$T/b.txt"
"$CTXMON" import -q "$T/b.txt" -o "$T/b.ctxm" ||
	fail "import of the trace's first 400 lines failed"

# full NAME ARGS...: the command's output (stdout, or -o/--svg FILE named
# /dev/full in ARGS) cannot be written: exit 1, one line on stderr
# that says why.
full() {
	local name=$1 rc=0 n
	shift
	timeout 60 "$CTXMON" "$@" >/dev/full 2>"$T/$name.err" || rc=$?
	echo "$name: ctxmon $* >/dev/full -> exit $rc: $(head -n 1 "$T/$name.err")"
	san_check "$name" "$T/$name.err"
	[ "$rc" = 1 ] || fail "$name: exit $rc, expected 1"
	n=$(grep -c . "$T/$name.err")
	[ "$n" = 1 ] || fail "$name: $n lines on stderr, expected one"
	grep -qi 'no space left' "$T/$name.err" ||
		fail "$name: stderr does not name the error"
}

full help --help
full version --version
full man --man stat
full completion --completion
full stathelp stat --help
full report report -i "$T/a.ctxm"
full reportjson report --json -i "$T/a.ctxm"
full reportfile report -i "$T/a.ctxm" -o /dev/full
full script script -i "$T/a.ctxm"
full latency latency -i "$T/a.ctxm"
full hist hist -i "$T/a.ctxm" 'hist:keys=next_pid'
full diff diff "$T/a.ctxm" "$T/b.ctxm"
full difffile diff "$T/a.ctxm" "$T/b.ctxm" -o /dev/full
full perfetto export -i "$T/a.ctxm" --format perfetto -o /dev/full
full chrome export -i "$T/a.ctxm" --format chrome-json -o /dev/full
full import import -q "$DATA/traces/pipe-6.18-sched.txt" -o /dev/full

# SQLite needs a regular file: refused in one line, nothing leaked
rc=0
"$CTXMON" export -i "$T/a.ctxm" --format sqlite -o /dev/full \
	2>"$T/sqlite.err" || rc=$?
echo "sqlite: export --format sqlite -o /dev/full -> exit $rc: $(head -n 1 "$T/sqlite.err")"
san_check sqlite "$T/sqlite.err"
[ "$rc" = 1 ] && [ "$(grep -c . "$T/sqlite.err")" = 1 ] ||
	fail "sqlite to /dev/full: exit $rc, $(grep -c . "$T/sqlite.err") lines"

# a reader that leaves early is not an error
rc=0
"$CTXMON" script -i "$T/a.ctxm" 2>"$T/head.err" | head -n 1 >/dev/null ||
	true
rc=${PIPESTATUS[0]}
echo "head: ctxmon script | head -n 1 -> exit $rc"
san_check head "$T/head.err"
[ "$rc" = 0 ] || fail "script | head -n 1: exit $rc, expected 0"
[ -s "$T/head.err" ] && fail "script | head -n 1: said $(cat "$T/head.err")"

full doctor doctor
full doctorjson doctor --json
if [ "$(id -u)" = 0 ] &&
	[ -e /sys/kernel/tracing/events/sched/sched_switch/format ]; then
	full serve serve --once --interval 100
	# stat's verdict goes to stderr too: the error is its last line
	rc=0
	"$CTXMON" stat -o /dev/full -- true 2>"$T/statfile.err" || rc=$?
	echo "statfile: stat -o /dev/full -- true -> exit $rc: $(tail -n 1 "$T/statfile.err")"
	san_check statfile "$T/statfile.err"
	[ "$rc" = 1 ] && tail -n 1 "$T/statfile.err" | grep -qi 'no space left' ||
		fail "stat -o /dev/full: exit $rc, or the error not said last"
fi

finish
