#!/bin/sh
# scripts/run-demo.sh BUILDDIR - the demo job of `make run`.
#
# Runs `ctxmon stat` on the five-thread workload (pipe ping-pong pair, a
# sched_yield loop, two spinners sharing a CPU) and lets its table show.
# Capture needs root and tracefs: tracefs is mounted here when it is not,
# saying so (ctxmon itself never mounts it unasked).
set -e

B=${1:-build}
if [ ! -x "$B/ctxmon" ] || [ ! -x "$B/workloads/multi5" ]; then
	echo "run-demo: $B/ctxmon or $B/workloads/multi5 missing; run make first" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "run-demo: capturing scheduler events needs root; run: sudo make run" >&2
	exit 1
fi

TRACEFS=/sys/kernel/tracing
if [ ! -e "$TRACEFS/events" ]; then
	echo "run-demo: tracefs is not mounted; mounting it: mount -t tracefs nodev $TRACEFS"
	mount -t tracefs nodev "$TRACEFS"
fi

echo "run-demo: $B/ctxmon stat -- $B/workloads/multi5"
exec "$B/ctxmon" stat -- "$B/workloads/multi5"
