#!/bin/bash
# tests/run.sh BUILDDIR - run the unit and end-to-end tests of a test build.
#
# BUILDDIR is a build made with `make O=BUILDDIR SAN=1 all unit-bins` (make
# test uses build/test): unit tests are BUILDDIR/tests/*, the ctxmon under
# test is BUILDDIR/ctxmon, the workloads are in BUILDDIR/workloads.
#
# Runs every unit test binary (cmocka prints its own summary), then every
# tests/e2e/test_*.sh with CTXMON and WL set; an e2e test exits 0 (pass), 77
# (skip) or anything else (fail).  A failing or skipped e2e test's output is
# shown; V=1 shows every test's output.  Ends with one line
# "N passed, N failed, N skipped" and exits 1 if anything failed.
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
times=$(mktemp /tmp/ctxmon-times.XXXXXX)
long_left=""
for t in "$B"/tests/*; do
	[ "$LONG" = 0 ] || break
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=unit/$(basename "$t")
	[ -z "$ONLY" ] || echo "$name" | grep -Eq -- "$ONLY" || continue
	echo "--- $name"
	rc=0
	timeout "$TIMEOUT" "$t" || rc=$?
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
	else
		failed=$((failed + 1))
		failures="$failures $name"
		echo "FAIL $name (exit $rc)"
	fi
done

log=$(mktemp /tmp/ctxmon-test.XXXXXX)
# the FAIL lines of every failed e2e test, repeated at the end: a long
# run's log is often read from its tail only
digest=$(mktemp /tmp/ctxmon-digest.XXXXXX)
trap 'rm -f "$log" "$digest" "$times"' EXIT
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
	start=${EPOCHREALTIME/./}
	rc=0
	# a test may ask for more time: "# test-timeout: SECONDS"
	tt=$(sed -n 's/^# test-timeout: \([0-9]*\)$/\1/p' "$t" | head -n 1)
	CTXMON=$B/ctxmon CTXMON_REL=$(pwd)/build/ctxmon WL=$B/workloads \
		timeout "${tt:-$TIMEOUT}" bash "$t" \
		>"$log" 2>&1 </dev/null || rc=$?
	ds=$(((${EPOCHREALTIME/./} - start) / 100000))
	secs=$((ds / 10)).$((ds % 10))
	echo "$ds $name" >>"$times"
	case $rc in
	0)
		pass=$((pass + 1))
		echo "PASS $name (${secs} s)"
		[ "${V:-0}" = 0 ] || sed 's/^/    /' "$log"
		;;
	77)
		skipped=$((skipped + 1))
		echo "SKIP $name: $(tail -n 1 "$log" | sed 's/^SKIP: //')"
		;;
	*)
		failed=$((failed + 1))
		failures="$failures $name"
		[ "$rc" = 124 ] && echo "FAIL $name: timed out after ${tt:-$TIMEOUT} s" ||
			echo "FAIL $name (exit $rc, ${secs} s)"
		sed 's/^/    /' "$log"
		{
			echo "$name:"
			grep -E '^(FAIL|.*MISMATCH|.*timed out|.*ERROR: AddressSanitizer|.*runtime error)' "$log" |
				head -n 12 | sed 's/^/    /'
		} >>"$digest"
		;;
	esac
done

if [ -s "$digest" ]; then
	echo "--- why the failed e2e tests failed (their FAIL lines)"
	cat "$digest"
fi

if [ -s "$times" ]; then
	echo "--- the ten slowest e2e tests"
	sort -rn "$times" | head -n 10 |
		while read -r ds name; do
			printf '%7s s  %s\n' "$((ds / 10)).$((ds % 10))" "$name"
		done
fi
[ -z "$long_left" ] ||
	echo "long tier (make check) runs$long_left and the long budgets of test_fuzz, test_kernels"
[ -z "$failures" ] || echo "failed:$failures"
echo "$pass passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
