#!/bin/bash
# tests/fuzz/run.sh - build the libFuzzer targets (recording reader, text
# importer, one EVENTS chunk's payload behind valid checksums, perf.data
# importer, the hist trigger parser and evaluator) with clang,
# ASan and UBSan, and run each for a bounded time on
# a copy of its seed corpus.  Exits non-zero when a target finds a crash,
# a leak, a timeout or runs out of memory; the reproducer is left in the
# build directory and named in the output.
#
#   tests/fuzz/run.sh [BUILD_DIR]      (default build/fuzz)
#   FUZZ_TIME=20   seconds per target (FUZZ_TIME_import=... for one target);
#                  0: replay each seed corpus once (-runs=0), a regression
#                  run of every input ever found
#   FUZZ_TARGETS="reader import chunk perfdata"   which targets
#
# The 10-minute-per-target run (issue 13):
#   FUZZ_TIME=600 tests/fuzz/run.sh build/fuzz
#
# Prints "SKIP: reason" and exits 0 when clang or libFuzzer is missing
# (Debian: libFuzzer is in libclang-rt-dev, which scripts/setup.sh installs).
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${1:-build/fuzz}
SUPP=$PWD/tests/fuzz/lsan.supp
T=${FUZZ_TIME:-20}
CC=${FUZZ_CC:-clang}
SRCS="src/file/rec_codec.c src/file/rec_codec_tab.c src/file/rec_import.c src/file/rec_reader.c src/file/rec_reader_par.c
src/file/rec_tasks.c src/file/rec_util.c src/file/rec_writer.c src/file/input.c
src/decode/textparse.c src/decode/textformat.c src/strtab.c src/util.c"
HIST_SRCS="$(echo src/analysis/hist_*.c) src/output/json_out.c src/analysis/syscalls_x86_64.c src/analysis/syscalls_aarch64.c
src/analysis/causes.c src/analysis/hist.c src/strtab.c"
# the binary importers also decode tracepoints (libtraceevent); trace.dat
# is left out: its parsing is libtracecmd's
IMPORT_SRCS="src/file/import_file.c src/file/import_perf.c
src/file/import_sink.c src/file/import_tracedat.c src/decode/decode.c
src/decode/format.c src/capture/sys.c"
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Iinclude -Isrc
$(pkg-config --cflags libtraceevent 2>/dev/null)
-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "SKIP: $CC not found (apt-get install clang)"
	exit 0
fi
mkdir -p "$B"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }' |
	"$CC" -x c -fsanitize=fuzzer -o "$B/probe" - 2>/dev/null; then
	echo "SKIP: $CC has no libFuzzer (-fsanitize=fuzzer)"
	exit 0
fi

TARGETS=${FUZZ_TARGETS:-reader import chunk perfdata hist}
# the targets build, then run, FUZZ_JOBS at a time (default: one a CPU);
# each libFuzzer run is one process on one CPU
JOBS=${FUZZ_JOBS:-$(nproc)}

# build TARGET: the target's binary and its working copy of the corpus
# obj SOURCE: its object file, compiled once for every target that links it
obj() {
	local o=${1//\//_}
	echo "$B/obj/${o%.c}.o"
}

# compile SOURCE: instrumented as the targets are, without libFuzzer's main
compile() {
	# shellcheck disable=SC2086
	"$CC" ${CFLAGS/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,} -c \
		-o "$(obj "$1")" "$1"
}

# build TARGET: the target's binary, from its own main and the objects of
# its sources, and its working copy of the corpus
build() {
	local t=$1 srcs=$SRCS libs="" objs="" src
	[ "$t" = perfdata ] && srcs="$SRCS $IMPORT_SRCS" libs=-ltraceevent
	[ "$t" = hist ] && srcs=$HIST_SRCS
	for src in $srcs; do
		objs="$objs $(obj "$src")"
	done
	# shellcheck disable=SC2086
	if ! "$CC" $CFLAGS -o "$B/fuzz_$t" "tests/fuzz/fuzz_$t.c" $objs $libs \
		-lzstd -llzma -lz -pthread >"$B/build_$t.log" 2>&1; then
		cat "$B/build_$t.log"
		echo "FAIL: building fuzz_$t"
		return 1
	fi
	rm -rf "$B/corpus_$t"
	mkdir -p "$B/corpus_$t"
	cp tests/fuzz/corpus/$t/* "$B/corpus_$t/"
}

# fuzz TARGET: replay its corpus (FUZZ_TIME 0) or fuzz it for FUZZ_TIME s;
# everything it says goes to $B/out_TARGET, shown when all have ended
fuzz() {
	local t=$1 tt bound dict=""
	[ -f "tests/fuzz/$t.dict" ] && dict="-dict=$PWD/tests/fuzz/$t.dict"
	tt=$(eval "echo \${FUZZ_TIME_$t:-$T}")
	if [ "$tt" = 0 ]; then
		bound="-runs=0"
		echo "fuzz_$t: replaying $(ls "$B/corpus_$t" | wc -l) seeds"
	else
		bound="-max_total_time=$tt"
		echo "fuzz_$t: ${tt}s on $(ls "$B/corpus_$t" | wc -l) seeds"
	fi
	# shellcheck disable=SC2086
	if ! (cd "$B" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		LSAN_OPTIONS=suppressions=$SUPP \
		"./fuzz_$t" $bound -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 $dict "corpus_$t" \
		> "fuzz_$t.log" 2>&1); then
		tail -n 40 "$B/fuzz_$t.log"
		echo "FAIL: fuzz_$t found a problem; log in $B/fuzz_$t.log"
		return 1
	fi
	grep -E 'stat::number_of_executed_units|cov:' "$B/fuzz_$t.log" | tail -n 2
}

# each ACTION TARGET... runs ACTION on every target, JOBS at a time; 1 if
# any failed, after showing what each said, in the targets' order
each() {
	local action=$1 t n=0 fail=0
	shift
	for t in "$@"; do
		if [ "$n" -ge "$JOBS" ]; then
			wait -n
			n=$((n - 1))
		fi
		( "$action" "$t" >"$B/out_${t//\//_}" 2>&1; echo $? >"$B/rc_${t//\//_}" ) &
		n=$((n + 1))
	done
	wait
	for t in "$@"; do
		t=${t//\//_}
		cat "$B/out_$t"
		[ "$(cat "$B/rc_$t" 2>/dev/null)" = 0 ] || fail=1
		rm -f "$B/out_$t" "$B/rc_$t"
	done
	return $fail
}

mkdir -p "$B/obj"
# shellcheck disable=SC2086
each compile $(for t in $TARGETS; do
	case $t in
	perfdata) echo $SRCS $IMPORT_SRCS ;;
	hist) echo $HIST_SRCS ;;
	*) echo $SRCS ;;
	esac
done | tr ' ' '\n' | sort -u) || exit 1
# shellcheck disable=SC2086
each build $TARGETS || exit 1
# shellcheck disable=SC2086
each fuzz $TARGETS
