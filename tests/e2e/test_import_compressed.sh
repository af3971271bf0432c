#!/bin/bash
# Compressed inputs (issue 45 item 6): gzip, zstd and xz files, made with
# the real tools, are read through zlib/libzstd/liblzma by `import` and by
# every command's -i, told by magic, never by name (the copies here have
# no extension).  Checked: the import of a compressed text trace, perf.data
# and trace.dat gives the same `ctxmon script` as the plain one; report,
# script, latency, hist, export and diff on a compressed recording print
# the same as on the plain one; a truncated or corrupt compressed file
# gives one line (exit 1 for import, nothing written; for -i the
# integrity verdict's rule: one line, exit 1 with --strict); ELF, PNG and
# bzip2 files are refused in one line, exit 1, nothing written.  Needs no
# privileges.
. "$(dirname "$0")/lib.sh"
[ -x "$CTXMON" ] || skip "no ctxmon binary at $CTXMON"
for t in gzip zstd xz bzip2 python3; do
	command -v $t >/dev/null || skip "$t not installed (scripts/setup.sh test)"
done
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$(cd "$(dirname "$0")/../data/import" && pwd)/lsan.supp"
D=$(cd "$(dirname "$0")/../data" && pwd)
Z="gzip zstd xz"

# compress FILE TOOL OUT: OUT is FILE compressed by TOOL
compress() {
	case $2 in
	gzip) gzip -c "$1" >"$3" ;;
	zstd) zstd -q -c "$1" >"$3" ;;
	xz) xz -c "$1" >"$3" ;;
	esac
}

# one_line NAME ERRFILE: the error is one line, without a sanitizer report
one_line() {
	san_check "$1" "$2"
	[ "$(wc -l <"$2")" -eq 1 ] ||
		fail "$1: $(wc -l <"$2") lines on stderr, not 1: $(head -c 600 "$2")"
}

# ---- import: text, perf.data, trace.dat ------------------------------
zcat "$D/import/perfdata-sched-record/input.gz" >"$T/perf.in"
cp "$D/import/tracedat/input" "$T/tdat.in"
cp "$D/traces/pipe-6.18-sched.txt" "$T/pipe.in"
for k in pipe perf tdat; do
	if ! "$CTXMON" import -q "$T/$k.in" -o "$T/$k.data" 2>"$T/$k.err"; then
		if grep -q "built without libtracecmd" "$T/$k.err"; then
			echo "$k: skipped: $(tail -n 1 "$T/$k.err")"
			continue
		fi
		fail "$k: plain import: $(tail -n 1 "$T/$k.err")"
		continue
	fi
	"$CTXMON" script -i "$T/$k.data" >"$T/$k.script" 2>/dev/null
	for z in $Z; do
		compress "$T/$k.in" $z "$T/$k-$z"
		if ! "$CTXMON" import -q "$T/$k-$z" -o "$T/$k-$z.data" 2>"$T/$k-$z.err"; then
			fail "$k.$z: import exited: $(tail -n 1 "$T/$k-$z.err")"
			continue
		fi
		san_check "$k.$z import" "$T/$k-$z.err"
		"$CTXMON" script -i "$T/$k-$z.data" >"$T/$k-$z.script" 2>"$T/$k-$z.serr"
		san_check "$k.$z script" "$T/$k-$z.serr"
		if cmp -s "$T/$k.script" "$T/$k-$z.script"; then
			echo "$k.$z: import gives the same script ($(wc -l <"$T/$k.script") lines)"
		else
			fail "$k.$z: the import's script differs from the plain one's"
		fi
	done
done
# standard input, compressed
gzip -c "$T/pipe.in" | "$CTXMON" import -q - -o "$T/stdin.data" 2>"$T/stdin.err" ||
	fail "gzip on stdin: $(tail -n 1 "$T/stdin.err")"
"$CTXMON" script -i "$T/stdin.data" 2>/dev/null | cmp -s - "$T/pipe.script" ||
	fail "gzip on stdin: the import's script differs"

# ---- -i: every command on a compressed recording ---------------------
# the same name in two directories: the outputs name their input
mkdir -p "$T/plain" "$T/zstd" "$T/gzip" "$T/xz"
cp "$T/pipe.data" "$T/plain/rec"
for z in $Z; do
	compress "$T/pipe.data" $z "$T/$z/rec"
done
views() {
	(
		cd "$1" || exit 1
		"$CTXMON" report -i rec >report.out 2>report.err
		"$CTXMON" script -i rec >script.out 2>script.err
		"$CTXMON" latency -i rec >latency.out 2>latency.err
		"$CTXMON" hist -i rec 'hist:keys=next_comm:vals=hitcount' \
			>hist.out 2>hist.err
		"$CTXMON" export -o export.json -i rec >export.out 2>export.err
		"$CTXMON" diff rec rec >diff.out 2>diff.err
	)
}
views "$T/plain"
for v in report script latency hist export diff; do
	[ -s "$T/plain/$v.out" ] || fail "plain $v printed nothing: $(head -n 2 "$T/plain/$v.err")"
done
for z in $Z; do
	views "$T/$z"
	for v in report script latency hist export diff; do
		san_check "$z $v" "$T/$z/$v.err"
		cmp -s "$T/plain/$v.out" "$T/$z/$v.out" ||
			fail "$z: $v -i differs from the plain recording's: $(head -n 2 "$T/$z/$v.err")"
	done
	cmp -s "$T/plain/export.json" "$T/$z/export.json" ||
		fail "$z: export -i wrote another file"
	echo "$z: report, script, latency, hist, export, diff on the recording: same output"
done

# ---- truncated and corrupt compressed files --------------------------
for z in $Z; do
	sz=$(stat -c %s "$T/pipe-$z")
	head -c $((sz / 2)) "$T/pipe-$z" >"$T/cut-$z"
	rm -f "$T/cut.data"
	"$CTXMON" import -q "$T/cut-$z" -o "$T/cut.data" 2>"$T/cut.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$z: truncated import exited $rc, not 1"
	[ -e "$T/cut.data" ] && fail "$z: truncated import wrote its output"
	one_line "$z truncated import" "$T/cut.err"
	grep -q "ends early" "$T/cut.err" ||
		fail "$z: truncated import does not say so: $(cat "$T/cut.err")"
	echo "$z truncated import: $(cat "$T/cut.err")"

	sz=$(stat -c %s "$T/$z/rec")
	head -c $((sz - 20)) "$T/$z/rec" >"$T/rcut-$z"
	"$CTXMON" report --strict -i "$T/rcut-$z" >/dev/null 2>"$T/rcut.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$z: report --strict on a truncated recording exited $rc, not 1"
	one_line "$z truncated -i" "$T/rcut.err"
	grep -q "incomplete" "$T/rcut.err" ||
		fail "$z: truncated -i: $(cat "$T/rcut.err")"
	echo "$z truncated -i: $(cat "$T/rcut.err")"
done
# a flipped byte: zlib's CRC-32 at the end of the member catches it
cp "$T/pipe-gzip" "$T/flip-gzip"
printf '\377' | dd of="$T/flip-gzip" bs=1 seek=3000 conv=notrunc 2>/dev/null
rm -f "$T/flip.data"
"$CTXMON" import -q "$T/flip-gzip" -o "$T/flip.data" 2>"$T/flip.err"
rc=$?
[ $rc -eq 1 ] || fail "corrupt gzip import exited $rc, not 1"
[ -e "$T/flip.data" ] && fail "corrupt gzip import wrote its output"
san_check "corrupt gzip" "$T/flip.err"
grep -q "gzip: corrupt data" "$T/flip.err" ||
	fail "corrupt gzip import: $(tail -n 2 "$T/flip.err")"
echo "corrupt gzip import: $(tail -n 1 "$T/flip.err")"

# ---- other binary files: refused by their magic ----------------------
python3 -c '
import struct, sys, zlib
def chunk(t, d):
    c = t + d
    return struct.pack(">I", len(d)) + c + struct.pack(">I", zlib.crc32(c))
raw = b"".join(b"\0" + b"\xff\x00\x00" * 4 for _ in range(4))
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" +
    chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)) +
    chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))' >"$T/img"
bzip2 -c "$T/pipe.in" >"$T/bz"
cp /bin/true "$T/elf"
for f in elf img bz; do
	rm -f "$T/ref.data"
	"$CTXMON" import "$T/$f" -o "$T/ref.data" 2>"$T/ref.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$f: import exited $rc, not 1"
	[ -e "$T/ref.data" ] && fail "$f: import wrote its output"
	one_line "$f import" "$T/ref.err"
	echo "$f: $(cut -c 1-110 "$T/ref.err")"
	"$CTXMON" report -i "$T/$f" >/dev/null 2>"$T/ref.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$f: report -i exited $rc, not 1"
	one_line "$f report -i" "$T/ref.err"
done
grep -q "bzip2-compressed.*decompress it first" "$T/ref.err" ||
	fail "bzip2: report -i does not say what it is: $(cat "$T/ref.err")"
finish
