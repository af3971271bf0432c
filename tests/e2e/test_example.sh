#!/bin/bash
# The embedding examples against the INSTALLED library: `make install` into
# a temporary prefix, copy examples/ there and build them with only that
# prefix's headers and pkg-config file (pkg-config --cflags --libs ctxmon).
#  - stream: run it for 1 s system-wide (with a ping-pong load) and check it
#    printed sched_switch lines, with timestamps that never go backwards,
#    and no ordering violation.
#  - count: a counting session (in-kernel aggregation where BPF loads, the
#    proc tier under a seccomp filter that refuses perf and bpf) following
#    the ping-pong process; the voluntary and involuntary switches its rows
#    report over two intervals add up to at most what /proc/PID/task/*/status
#    says happened around the run, and to more than nothing.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$T/prefix

# make runs in the source tree, whose build/ a test run beside this one
# (test_install, test_example) may be making too: one at a time (flock on
# the Makefile, which every checkout has)
if ! flock "$ROOT/Makefile" make -s -C "$ROOT" install PREFIX="$P" >"$T/install.log" 2>&1; then
	cat "$T/install.log" >&2
	fail "make install PREFIX=$P failed"
	finish
fi
echo "installed: $(cd "$P" && find . -type f | sort | tr '\n' ' ')"

cp -r "$ROOT/examples" "$T/ex"
if ! make -C "$T/ex" PREFIX="$P" CFLAGS="-O2 -g -Werror" >"$T/build.log" 2>&1; then
	cat "$T/build.log" >&2
	fail "building the example against $P failed"
	finish
fi
sed 's/^/  | /' "$T/build.log"
grep -q -- "-I$P/include" "$T/build.log" ||
	fail "the example was not compiled with -I$P/include"

bg "$WL/pingpong" 1000000000

RC=0
timeout 30 "$T/ex/stream" -d 1 >"$T/stream.out" 2>"$T/stream.err" || RC=$?
echo "stream -d 1 -> exit $RC, $(wc -l <"$T/stream.out") lines"
head -n 5 "$T/stream.out" | sed 's/^/  > /'
sed 's/^/  | /' "$T/stream.err"
[ "$RC" = 0 ] || fail "stream -d 1: exit $RC"

awk '
	$3 == "sched_switch" { sw++ }
	NF < 3 || $1 !~ /^[0-9]+$/ { bad++; if (bad < 4) print "  bad line: " $0; next }
	n && $1 + 0 < last + 0 {
		back++
		if (back < 4) print "  line " NR ": " $1 " after " last
	}
	{ last = $1; n++ }
	END {
		printf "  %d lines, %d sched_switch, %d unparsable, %d out of order\n", \
			n, sw, bad, back
		exit (sw > 0 && !bad && !back) ? 0 : 1
	}' "$T/stream.out" ||
	fail "stream output: need sched_switch lines, all parsable, time never going back"

grep -q ' 0 order violations' "$T/stream.err" ||
	fail "stream: summary does not say 0 order violations"

# --- count ------------------------------------------------------------------
# proc_switches PID: voluntary + involuntary switches of PID's threads
proc_switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s + 0 }'
}

# count_run NAME [WRAPPER]: run count on the ping-pong and check its rows.
# The two reads of /proc bracket the run, so the rows (two intervals of
# 0.5 s inside it) can hold no more than their difference.  From below:
# the ping-pong switches at a steady rate, so the rows' 1 s holds about
# (1 s / the run's wall time) of the difference; the rate of a pipe
# ping-pong on a shared 2-CPU VM varies, so at least half of that share.
# A count that dropped an interval, or a CPU's events, falls under it.
count_run() {
	local name=$1 before after sum rc=0 t0 t1 d share
	shift
	t0=$(date +%s%N)
	before=$(proc_switches "$PP")
	timeout 30 "$@" "$T/ex/count" -p "$PP" -n 2 -d 0.5 >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	after=$(proc_switches "$PP")
	t1=$(date +%s%N)
	sed 's/^/  | /' "$T/$name.err"
	[ "$rc" = 0 ] || { fail "count ($name): exit $rc"; return; }
	sum=$(awk -v p="$PP" '$1 !~ /^#/ && $3 == p { s += $5 + $6 } END { print s + 0 }' "$T/$name.out")
	d=$((after - before))
	# the rows' share of the difference: 1 s of the run's wall time (ns)
	share=$((d * 1000000000 / (t1 - t0)))
	echo "count ($name): rows sum $sum switches of pid $PP; /proc: $d over the run" \
		"of $(((t1 - t0) / 1000000)) ms, $share in 1 s of it"
	[ "$(grep -c '^# interval' "$T/$name.out")" = 2 ] || fail "count ($name): not 2 intervals"
	[ "$sum" -le "$d" ] ||
		fail "count ($name): rows count $sum switches, more than /proc's $d"
	[ $((sum * 2)) -ge "$share" ] && [ "$sum" -gt 0 ] ||
		fail "count ($name): rows count $sum switches, under half of /proc's $share in the rows' 1 s"
}

bg "$WL/pingpong" 1000000000
PP=$BG_PID
sleep 0.2
count_run agg
grep -q 'backend' "$T/agg.err" || fail "count: does not say its backend"
if [ -x "$WL/noperf" ]; then
	count_run proc "$WL/noperf"
	grep -q 'backend proc' "$T/proc.err" ||
		fail "count under noperf: the proc tier was not used"
fi

finish
