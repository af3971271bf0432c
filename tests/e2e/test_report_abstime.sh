#!/bin/bash
# report --time @START,@END: a window given by timestamps as `ctxmon
# script` prints them (issue 45 item 6; before, --time took only seconds
# from the start and refused '@').  The events report counts in the window
# are counted again, independently, by awk over script's lines of the same
# recording: t >= START and t < END, compared in integer nanoseconds.
# Windows: two inner timestamps copied from script's lines, one side left
# out either way, bounds between two events, with --cpu 0 and 1 (awk keeps the
# CPU's lines and the forks, execs and exits of any CPU, which report
# keeps too).  A mix of the two forms (@1232.6,5 or 1,@1232.7) and bad
# timestamps are refused in one line, exit 2.  On an imported ftrace text
# trace (no privileges) and, as root, a recording of this machine.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
command -v python3 >/dev/null || skip "python3 not installed"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data" && pwd)

# count SCRIPT START END [CPU]: events of script --ns output SCRIPT with
# START <= t < END (decimal seconds; empty: unbounded), on CPU or
# structural when CPU is given
count() {
	awk -v a="$2" -v b="$3" -v cpu="${4:-}" '
	function ns(s,   p, f) {
		p = index(s, ".")
		if (!p) return s * 1000000000
		f = substr(s, p + 1) "000000000"
		return substr(s, 1, p - 1) * 1000000000 + substr(f, 1, 9)
	}
	BEGIN { lo = a == "" ? -1 : ns(a); hi = b == "" ? -1 : ns(b) }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) break
		if (i > NF) next
		t = ns(substr($i, 1, length($i) - 1))
		if (t < lo || (hi >= 0 && t >= hi)) next
		if (cpu != "" && $(i - 1) != sprintf("[%03d]", cpu) &&
		    $(i + 1) !~ /^sched_process_(fork|exec|exit):$/) next
		n++
	}
	END { print n + 0 }' "$1"
}

# window NAME REC SCRIPT ARG START END [CPU]: report --time ARG counts
# what awk counts from START to END
window() {
	local name=$1 rec=$2 scr=$3 arg=$4 a=$5 b=$6 cpu=${7:-} want got rc=0
	want=$(count "$scr" "$a" "$b" "$cpu")
	"$CTXMON" report -i "$rec" --time "$arg" ${cpu:+--cpu $cpu} --json \
		>"$T/$name.json" 2>"$T/$name.err" || rc=$?
	san_check "$name" "$T/$name.err"
	if [ $rc != 0 ]; then
		fail "$name: report --time $arg exited $rc: $(tail -n 1 "$T/$name.err")"
		return
	fi
	got=$(json "$T/$name.json" 'j["capture"]["events"]')
	[ "$got" = "$want" ] ||
		fail "$name: report --time $arg ${cpu:+--cpu $cpu }counts $got events, script's lines $want"
	echo "$name: --time $arg ${cpu:+--cpu $cpu }: $got events (script: $want)"
}

# windows NAME REC: every window on recording REC
windows() {
	local name=$1 rec=$2 n a b mid
	"$CTXMON" script --ns -i "$rec" >"$T/$name.script" 2>"$T/$name.serr" ||
		{ fail "$name: script exited: $(tail -n 1 "$T/$name.serr")"; return; }
	"$CTXMON" script -i "$rec" >"$T/$name.us" 2>/dev/null
	n=$(wc -l <"$T/$name.us")
	[ "$n" -gt 100 ] || { fail "$name: only $n events"; return; }
	# timestamps as script prints them by default (microseconds)
	ts() { sed -n "$1p" "$T/$name.us" | grep -oE '[0-9]+\.[0-9]+:' | head -n 1 | tr -d :; }
	a=$(ts $((n / 5)))
	b=$(ts $((n * 3 / 5)))
	window "$name-inner" "$rec" "$T/$name.script" "@$a,@$b" "$a" "$b"
	window "$name-from" "$rec" "$T/$name.script" "@$a," "$a" ""
	window "$name-to" "$rec" "$T/$name.script" ",@$b" "" "$b"
	window "$name-cpu0" "$rec" "$T/$name.script" "@$a,@$b" "$a" "$b" 0
	window "$name-cpu1" "$rec" "$T/$name.script" "@$a,@$b" "$a" "$b" 1
	# between two events: the midpoint, in ns
	mid=$(python3 -c "
a, b = '$a', '$b'
ns = lambda s: int(s.split('.')[0]) * 10**9 + int((s.split('.')[1] + '0' * 9)[:9])
m = (ns(a) + ns(b)) // 2 + 1
print('%d.%09d' % (m // 10**9, m % 10**9))")
	window "$name-mid" "$rec" "$T/$name.script" "@$a,@$mid" "$a" "$mid"
	# the two forms mixed, and bad timestamps: refused, exit 2, one line
	for bad in "@$a,1" "1,@$b" "@$a" "@,@$b" "@x,@$b" "@$a.5,@$b" "@$b,@$a" "@-1,@$b" \
		"@99999999999999999999,"; do
		local rc=0
		"$CTXMON" report -i "$rec" --time "$bad" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
		san_check "$name --time $bad" "$T/bad.err"
		[ $rc = 2 ] || fail "$name: --time '$bad' exited $rc, not 2"
		[ "$(wc -l <"$T/bad.err")" = 1 ] ||
			fail "$name: --time '$bad': $(wc -l <"$T/bad.err") lines on stderr: $(head -c 300 "$T/bad.err")"
	done
	"$CTXMON" report -i "$rec" --time "@$a,1" 2>&1 >/dev/null | grep -q "mixes" ||
		fail "$name: a mixed --time does not say it mixes the two forms"
}

"$CTXMON" import -q "$D/traces/pipe-6.18-sched.txt" -o "$T/pipe.data" 2>"$T/imp.err" ||
	fail "import: $(tail -n 1 "$T/imp.err")"
windows pipe "$T/pipe.data"

if [ "$(id -u)" = 0 ] && [ -e /sys/kernel/tracing/events/sched/sched_switch/format ] &&
	[ -x "$WL/pingpong" ]; then
	"$CTXMON" record -q -o "$T/pp.data" -- "$WL/pingpong" 5000 >/dev/null 2>"$T/rec.err" ||
		fail "record pingpong: $(tail -n 1 "$T/rec.err")"
	san_check "record" "$T/rec.err"
	windows live "$T/pp.data"
else
	not_judged "a live recording" "needs root, tracefs and the workloads"
fi
finish
