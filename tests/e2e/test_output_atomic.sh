#!/bin/bash
# tier: both (make test: SIGKILL at the first write of one command, at the rename of the next, and so on; make check: at write, fsync and rename of each)
# test-timeout: 600
# Every command that writes a file writes it all or nothing (issue 45,
# ctxmon/outfile.h): over an existing file at the output path, a command
# that fails (an input it cannot read, a full file system) or is killed
# with SIGKILL mid-write (strace's fault injection delivers it on the
# first write(2) or pwrite(2), on fsync(2) and on rename(2), the steps of a
# commit) leaves that file byte for byte as it was and no partial file
# under the target's name; a failure that is not a kill leaves no work
# file either.  A command that succeeds replaces the file, leaving nothing
# beside it.  Needs root (a tmpfs to fill, and the capture commands:
# record, stat, latency, hist, profile, experiment).
. "$(dirname "$0")/lib.sh"
skip_unless_capture
command -v strace >/dev/null || skip "strace is not installed (apt-get install strace)"

TXT=tests/data/traces/pipe-6.18-sched.txt
REC=$T/rec.ctxm
"$CTXMON" import -q "$TXT" -o "$REC" 2>"$T/imp.err" ||
	fail "import of $TXT exited $?: $(cat "$T/imp.err")"
OLD=$T/old
head -c 3000 /dev/urandom >"$OLD"

# command templates: @OUT@ is the output, @IN@ the input (a recording, or
# the text trace for import), @CMD@ a command to run (captures)
CMDS=(
	"import @TXT@ -o @OUT@"
	"export -i @IN@ -f perfetto -o @OUT@"
	"export -i @IN@ -f sqlite -o @OUT@"
	"export -i @IN@ -f chrome-json -o @OUT@"
	"report -i @IN@ -o @OUT@"
	"report -i @IN@ --json -o @OUT@"
	"report -i @IN@ --html @OUT@"
	"script -i @IN@ -o @OUT@"
	"latency -i @IN@ -o @OUT@"
	"hist -i @IN@ hist:keys=next_pid -o @OUT@"
	"diff @IN@ @IN@ -o @OUT@"
)
CMDS+=(
	"record -q -o @OUT@ -- @CMD@"
	"stat -o @OUT@ -- @CMD@"
	"stat --html @OUT@ -- @CMD@"
	"latency -o @OUT@ -- @CMD@"
	"hist hist:keys=next_pid -o @OUT@ -- @CMD@"
	"profile -o @OUT@ -- @CMD@"
	"profile --svg @OUT@ -- @CMD@"
	"profile --pprof @OUT@ -- @CMD@"
	"experiment -r 2 -o @OUT@ -- @CMD@"
	"experiment -r 2 --plot @OUT@.svg -- @CMD@"
)

# words of template $1 with output $2, input $3 (text trace $4), command $5
words() {
	local w=$1
	w=${w//@OUT@/$2}
	w=${w//@IN@/$3}
	w=${w//@TXT@/$4}
	w=${w//@CMD@/$5}
	echo "$w"
}

# the output path of template $1 in directory $2
target() {
	case $1 in
	*"@OUT@.svg"*) echo "$2/out.svg" ;;
	*) echo "$2/out" ;;
	esac
}

# check DIR TARGET WHAT ALLOW: TARGET is still the old file, and DIR holds
# nothing else but work files matching the glob ALLOW (none if empty)
check_left() {
	local dir=$1 tgt=$2 what=$3 allow=$4 f g ok
	cmp -s "$tgt" "$OLD" || fail "$what: the file at the output path changed"
	for f in "$dir"/* "$dir"/.[!.]*; do
		[ -e "$f" ] || continue
		[ "$f" = "$tgt" ] && continue
		[ "${f##*/}" = fill ] && continue
		ok=0
		for g in $allow; do
			# shellcheck disable=SC2053 # a glob
			[[ ${f##*/} == $g ]] && ok=1
		done
		[ $ok = 1 ] || fail "$what: left ${f##*/} beside the output"
	done
}

n=0
for tpl in "${CMDS[@]}"; do
	name=${tpl%% -*}
	name=${name%% @*}
	d=$T/w$n
	n=$((n + 1))
	mkdir -p "$d"
	tgt=$(target "$tpl" "$d")

	# 1. it works: the file is replaced, nothing is left beside it
	cp "$OLD" "$tgt"
	rc=0
	# shellcheck disable=SC2046 # the command's words
	"$CTXMON" $(words "$tpl" "${tgt%.svg}" "$REC" "$TXT" true) \
		>"$d.out" 2>"$d.err" || rc=$?
	san_check "$tpl" "$d.err"
	if [ "$rc" != 0 ]; then
		fail "$tpl: exited $rc where it should work: $(head -n 3 "$d.err")"
		continue
	fi
	cmp -s "$tgt" "$OLD" && fail "$tpl: the output was not replaced"
	left=$(ls -A "$d" | grep -vx "${tgt##*/}")
	[ -z "$left" ] || fail "$tpl: left $left beside the output"
	echo "ok      $tpl: $(stat -c %s "$tgt") bytes"

	# 2. an input it cannot read (a command that does not exist)
	rm -rf "$d" && mkdir -p "$d" && cp "$OLD" "$tgt"
	rc=0
	# shellcheck disable=SC2046
	"$CTXMON" $(words "$tpl" "${tgt%.svg}" "$T/no-such.ctxm" "$T/no-such.txt" \
		"$T/no-such-command") >/dev/null 2>"$d.err" || rc=$?
	san_check "$tpl: bad input" "$d.err"
	[ "$rc" != 0 ] || fail "$tpl: exit 0 on an input it cannot read"
	check_left "$d" "$tgt" "$tpl: bad input" ""
	echo "input   $tpl: exit $rc, $(head -n 1 "$d.err")"

	# 3. a full file system
	rm -rf "$d" && mkdir -p "$d"
	mount -t tmpfs -o size=256k ctxmon-test "$d" || skip "cannot mount a tmpfs"
	cp "$OLD" "$tgt"
	dd if=/dev/zero of="$d/fill" bs=4k 2>/dev/null
	rc=0
	# shellcheck disable=SC2046
	"$CTXMON" $(words "$tpl" "${tgt%.svg}" "$REC" "$TXT" true) \
		>/dev/null 2>"$d.err" || rc=$?
	san_check "$tpl: full" "$d.err"
	[ "$rc" != 0 ] || fail "$tpl: exit 0 on a full file system"
	grep -q "No space left on device\|disk is full" "$d.err" ||
		fail "$tpl: full file system: the error does not say so: $(head -n 2 "$d.err")"
	check_left "$d" "$tgt" "$tpl: full" ""
	echo "full    $tpl: exit $rc, $(grep -m1 'No space\|disk is full' "$d.err")"
	umount "$d"

	# 4. killed mid-write, at each step of the commit
	steps="write,pwrite64 rename"
	[ $((n % 2)) = 0 ] && steps="rename write,pwrite64"
	for sc in $(long_or "${steps%% *}" "write,pwrite64 fsync rename"); do
		rm -rf "$d" && mkdir -p "$d" && cp "$OLD" "$tgt"
		rc=0
		# shellcheck disable=SC2046
		strace -f -qq -o /dev/null -e trace=$sc -e inject=$sc:signal=KILL \
			"$CTXMON" $(words "$tpl" "${tgt%.svg}" "$REC" "$TXT" true) \
			>/dev/null 2>"$d.err" || rc=$?
		[ "$rc" = 137 ] || fail "$tpl: strace's SIGKILL on $sc: exit $rc, not 137"
		# a killed capture keeps what it wrote as OUT.part (documented);
		# others leave their work file .OUT.PID.N.tmp, not the target
		check_left "$d" "$tgt" "$tpl: SIGKILL at $sc" \
			".${tgt##*/}.*.tmp ${tgt##*/}.part"
	done
	echo "killed  $tpl: at $(long_or "${steps%% *}" "write, fsync and rename"): $(cmp -s "$tgt" "$OLD" && echo "file as it was")"
	rm -rf "$d" "$d.out" "$d.err"
done
echo "$n commands swept"
finish
