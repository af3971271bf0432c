#!/bin/sh
# bench/run.sh BUILDDIR - the `make bench` job: ctxmon against perf,
# trace-cmd and bpftrace on the same pinned workloads (BENCHMARKS.md).
#
# It installs the peers (bench/setup.sh), mounts tracefs when it is missing
# (saying so), builds the two helpers of the benchmarks into BUILDDIR/bench
# and runs bench/bench.py, which prints the tables and writes
# BUILDDIR/bench/results.{json,md}.  Settings come from the environment:
#
#   BENCH_QUICK=1        a ~2-minute smoke run (short workloads, 3 runs)
#   BENCH_RUNS=N         workload runs per measurement (default 5, quick 3)
#   BENCH_BPFCOST_ROUNDS=N  interleaved rounds of the in-kernel timing (default
#                        3, quick 1); the median round is kept
#   BENCH_ONLY=LIST      sections: overhead,loss,bpfcost,analysis,rss
#                        (default all);
#                        "saturation" runs only the saturated part of loss
#   BENCH_TRACERS=REGEX  only the tracers whose key matches (and untraced)
#   BENCH_OUT=DIR        where results go (default BUILDDIR/bench)
#   BENCH_QUIET_WAIT=S   first wait up to S seconds for the 1-minute load
#                        average to drop below BENCH_QUIET_LOAD (0.3)
#   BENCH_KEEP=1         keep the recordings (BENCH_OUT/tmp)
set -e

B=${1:-build}
HERE=$(dirname "$0")

if [ "$(id -u)" != 0 ]; then
	echo "bench: tracing the scheduler needs root; run: sudo make bench" >&2
	exit 1
fi
if [ ! -x "$B/ctxmon" ]; then
	echo "bench: no $B/ctxmon; run make first" >&2
	exit 1
fi
"$HERE/setup.sh" || echo "bench: bench/setup.sh failed; the missing peers are skipped" >&2

TRACEFS=/sys/kernel/tracing
if [ ! -e "$TRACEFS/events" ]; then
	echo "bench: tracefs is not mounted; mounting it: mount -t tracefs nodev $TRACEFS"
	mount -t tracefs nodev "$TRACEFS"
fi

# The helpers: the mixed workload, and recinfo (reads a ctxmon recording
# through the public API).  recinfo links the library the way an embedding
# program does; when the tree is mid-change and it does not build, the
# measures that need it say so and are skipped.
mkdir -p "$B/bench"
CC=${CC:-gcc}
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -o "$B/bench/mixed" \
	"$HERE/mixed.c" -pthread
# against the shared library, as an embedding program links it (the static
# one needs every library the tool uses: libdw, sqlite, microhttpd, ...)
$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Iinclude -o "$B/bench/recinfo" \
	"$HERE/recinfo.c" -L"$B" -lctxmon -Wl,-rpath,"$(cd "$B" && pwd)" \
	2>"$B/bench/recinfo.err" ||
	{ rm -f "$B/bench/recinfo"; echo "bench: bench/recinfo.c does not build (see $B/bench/recinfo.err)" >&2; }

# The floors (bench/floor.bpf.c): the least a BPF counter and a BPF ring
# streamer cost, measured beside ctxmon in every run.
if clang -g -O2 -target bpf -D__TARGET_ARCH_"$(uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')" \
	-Isrc/capture/bpf -Wall -c -o "$B/bench/floor.bpf.o" "$HERE/floor.bpf.c" \
	2>"$B/bench/floor.err" &&
	$CC -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -o "$B/bench/floor" \
		"$HERE/floor.c" $(pkg-config --libs libbpf 2>/dev/null || echo -lbpf) -lelf -lz \
		2>>"$B/bench/floor.err"; then
	:
else
	rm -f "$B/bench/floor"
	echo "bench: the floor tracers do not build (see $B/bench/floor.err)" >&2
fi

exec python3 "$HERE/bench.py" "$B"
