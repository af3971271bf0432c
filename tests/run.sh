#!/bin/bash
# tests/run.sh BUILDDIR - run the unit and end-to-end tests of a test build.
#
# BUILDDIR is a build made with `make O=BUILDDIR SAN=1 all unit-bins` (make
# test uses build/test): unit tests are BUILDDIR/tests/*, the ctxmon under
# test is BUILDDIR/ctxmon, the workloads are in BUILDDIR/workloads.
#
# Runs every unit test binary (cmocka prints its own summary; a case that
# called skip() counts as a skip), then the tests/e2e/test_*.sh with CTXMON
# and WL set, TEST_JOBS (default 2) at a time; an e2e test exits 0 (pass),
# 77 (skip, its reason on its last line) or anything else (fail).  A line
# "NOT JUDGED: CHECK: REASON" of a test (lib.sh's not_judged) is a check it
# could not make: it counts as a skip and is printed whatever the verdict.
# A failing or skipped e2e test's output is shown; V=1 shows every test's
# output.  Ends with the reasons of every skip, and one line
# "N passed, N failed, N skipped"; exits 1 if anything failed.
#
# How a test shares the machine, from a line near its top:
#   # runs: alone   it measures the whole machine or time (loss, run time,
#                   a storm of processes): it runs after the others, with
#                   nothing of the suite beside it
#   # runs: early   a long one (the kernel matrix, one CPU under qemu):
#                   started first, the others fill the other slot
# and any other test shares the machine with one more.  The suite must hold
# under load (a test's truth is the kernel's counters, not time), which is
# also what running two at a time keeps checking.
#
# Two tiers.  `make test` runs the unit tests and the e2e tests of the
# short tier; `make check` (CTXMON_LONG=1) runs the long tier: the tests
# marked "# tier: long" (slow storms) and, with their long budgets, those
# marked "# tier: both" (bounded fuzzing instead of a corpus replay, every
# kernel of the matrix instead of one).  The short run names the tests it
# leaves to the long tier, and both end with their ten slowest tests.
#
# T=PATTERN (make test T=PATTERN) runs only the tests whose name (e.g.
# unit/test_file, e2e/test_record_kill) matches the extended regular
# expression PATTERN.
#
# The capture tests need tracefs: when it is not mounted and we are root, it
# is mounted here, saying so (ctxmon itself never mounts it unasked).
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: tests/run.sh BUILDDIR" >&2
	exit 2
fi
B=$(cd "$1" && pwd)
ONLY=${T:-}
unset T # the e2e tests' own temporary directory
cd "$(dirname "$0")/.." || exit 2

TRACEFS=/sys/kernel/tracing
if [ ! -e "$TRACEFS/events" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "run.sh: tracefs is not mounted; mounting it: mount -t tracefs nodev $TRACEFS"
		mount -t tracefs nodev "$TRACEFS" ||
			echo "run.sh: mounting tracefs failed; capture tests will skip"
	else
		echo "run.sh: tracefs is not mounted and we are not root; capture tests will skip"
	fi
fi

pass=0 failed=0 skipped=0
failures=""
TIMEOUT=${TEST_TIMEOUT:-300}

LONG=${CTXMON_LONG:-0}
export CTXMON_LONG=$LONG
JOBS=${TEST_JOBS:-2}
# The tests start python3 hundreds of times: the interpreter's own
# directory goes first on PATH, so that a version manager's shim (pyenv's
# takes 0.38 s a start here, the interpreter 0.07 s) is not run each time
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
	export PATH="${py%/*}:$PATH"
fi
W=$(mktemp -d /tmp/ctxmon-run.XXXXXX)
trap 'rm -rf "$W"' EXIT
# an interrupted run takes its tests down with it
trap 'kill $(jobs -p) 2>/dev/null; wait; exit 130' INT TERM
long_left=""
notjudged=""

# --- end-to-end tests, JOBS at a time.  A test marked "# runs: alone"
# (it measures the whole machine, or time) runs with nothing else of the
# suite beside it, after the others; one marked "# runs: early" (the long
# ones: the kernel matrix) starts first so that the rest fill the other
# slots while it runs.
early="" shared="" alone=""
for t in tests/e2e/test_*.sh; do
	[ -f "$t" ] || continue
	name=e2e/$(basename "$t" .sh)
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	tier=$(sed -n 's/^# tier: \([a-z]*\).*/\1/p' "$t" | head -n 1)
	if [ "$LONG" = 0 ] && [ "$tier" = long ]; then
		long_left="$long_left ${name#e2e/}"
		continue
	fi
	[ "$LONG" = 0 ] || [ "$tier" = long ] || [ "$tier" = both ] || continue
	case $(sed -n 's/^# runs: \([a-z]*\).*/\1/p' "$t" | head -n 1) in
	alone) alone="$alone $t" ;;
	early) early="$early $t" ;;
	*) shared="$shared $t" ;;
	esac
done

declare -A NAME START
running=0

# start TEST: run it in the background, its output in $W/NAME.log and its
# exit status in $W/NAME.rc
start() {
	local t=$1 base tt
	base=$(basename "$t" .sh)
	# a test may ask for more time: "# test-timeout: SECONDS"
	tt=$(sed -n 's/^# test-timeout: \([0-9]*\)$/\1/p' "$t" | head -n 1)
	echo "${tt:-$TIMEOUT}" >"$W/$base.limit"
	(
		rc=0
		CTXMON=$B/ctxmon CTXMON_REL=$(pwd)/build/ctxmon WL=$B/workloads \
			/usr/bin/time -f '%U %S' -o "$W/$base.cpu" \
			timeout "${tt:-$TIMEOUT}" bash "$t" \
			>"$W/$base.log" 2>&1 </dev/null || rc=$?
		echo "$rc" >"$W/$base.rc"
	) &
	NAME[$!]=$base
	START[$!]=${EPOCHREALTIME/./}
	running=$((running + 1))
}

# collect: wait for one running test to end and report it
collect() {
	local pid base name rc ds secs log cpu
	wait -n -p pid
	running=$((running - 1))
	base=${NAME[$pid]}
	name=e2e/$base
	log=$W/$base.log
	ds=$(((${EPOCHREALTIME/./} - START[$pid]) / 100000))
	secs=$((ds / 10)).$((ds % 10))
	# CPU seconds of the test and the processes it waited for: what
	# the budget is made of when two run at a time
	cpu=$(awk 'END { printf "%.1f", $1 + $2 }' "$W/$base.cpu" 2>/dev/null)
	echo "$ds $name ${cpu:-?}" >>"$W/times"
	rc=$(cat "$W/$base.rc" 2>/dev/null || echo 255)
	case $rc in
	0)
		pass=$((pass + 1))
		echo "PASS $name (${secs} s)"
		[ "${V:-0}" = 0 ] || sed 's/^/    /' "$log"
		;;
	77)
		skipped=$((skipped + 1))
		echo "SKIP $name: $(tail -n 1 "$log" | sed 's/^SKIP: //')"
		notjudged="$notjudged
  $name: $(tail -n 1 "$log" | sed 's/^SKIP: //')"
		;;
	*)
		failed=$((failed + 1))
		failures="$failures $name"
		if [ "$rc" = 124 ]; then
			echo "FAIL $name: timed out after $(cat "$W/$base.limit") s"
		else
			echo "FAIL $name (exit $rc, ${secs} s)"
		fi
		sed 's/^/    /' "$log"
		{
			echo "$name:"
			grep -E '^(FAIL|.*MISMATCH|.*timed out|.*ERROR: AddressSanitizer|.*runtime error)' "$log" |
				head -n 12 | sed 's/^/    /'
		} >>"$W/digest"
		;;
	esac
	# a check the test could not make is a skip, whatever its verdict
	while IFS= read -r line; do
		skipped=$((skipped + 1))
		echo "  ${line}"
		notjudged="$notjudged
  $name: ${line#NOT JUDGED: }"
	done < <(grep '^NOT JUDGED: ' "$log")
	unset "NAME[$pid]" "START[$pid]"
}

# the long ones start first, and the unit tests run beside them
for t in $early; do
	[ "$running" -lt "$JOBS" ] || collect
	start "$t"
done

# --- unit tests, one after another (half a minute in all); cmocka prints
# its own summary, and a case that called skip() is a skip here
for t in "$B"/tests/*; do
	[ "$LONG" = 0 ] || break
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=unit/$(basename "$t")
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	echo "--- $name"
	rc=0
	timeout "$TIMEOUT" "$t" >"$W/unit.log" 2>&1 || rc=$?
	cat "$W/unit.log"
	# a skipped case is named while running and again in the summary
	cases=$(grep -E '^\[  SKIPPED \] ' "$W/unit.log" | grep -v 'test(s)' |
		sed 's/^\[  SKIPPED \] //' | sort -u)
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
	else
		failed=$((failed + 1))
		failures="$failures $name"
		echo "FAIL $name (exit $rc)"
	fi
	for c in $cases; do
		skipped=$((skipped + 1))
		echo "SKIP $name: case $c called skip()"
		notjudged="$notjudged
  $name: case $c called skip()"
	done
done

for t in $shared; do
	[ "$running" -lt "$JOBS" ] || collect
	start "$t"
done
for t in $alone; do
	while [ "$running" -gt 0 ]; do collect; done
	start "$t"
done
while [ "$running" -gt 0 ]; do collect; done

if [ -s "$W/digest" ]; then
	echo "--- why the failed e2e tests failed (their FAIL lines)"
	cat "$W/digest"
fi

if [ -s "$W/times" ]; then
	echo "--- the ten slowest e2e tests (wall clock, and CPU time user+system)"
	sort -rn "$W/times" | head -n 10 |
		while read -r ds name cpu; do
			printf '%7s s  %7s CPU-s  %s\n' "$((ds / 10)).$((ds % 10))" "$cpu" "$name"
		done
	awk '{ w += $1 / 10; c += $3 } END { printf "e2e in all: %.0f s of test time, %.0f CPU-s\n", w, c }' "$W/times"
	# every test's, for the budget: tenths of a second, name, CPU-s
	sort -rn "$W/times" >"$B/test-times.txt" 2>/dev/null &&
		echo "(every test's times: $B/test-times.txt)"
fi
if [ -n "$notjudged" ]; then
	echo "--- not judged (each counts as a skip)$notjudged"
fi
[ -z "$long_left" ] ||
	echo "long tier (make check) runs$long_left and the long budgets of test_fuzz, test_kernels"
[ -z "$failures" ] || echo "failed:$failures"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
