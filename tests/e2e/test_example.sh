#!/bin/bash
# The embedding example against the INSTALLED library: `make install` into a
# temporary prefix, copy examples/ there and build it with only that
# prefix's headers and pkg-config file, run it for 1 s system-wide (with a
# ping-pong load) and check it printed sched_switch lines, with timestamps
# that never go backwards, and no ordering violation.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$T/prefix

if ! make -s -C "$ROOT" install PREFIX="$P" >"$T/install.log" 2>&1; then
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

finish
