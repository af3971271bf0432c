#!/bin/sh
# guest/hist.sh - ctxmon hist's user-space evaluator against the kernel's
# own hist triggers on the same events (issue 15, acceptance 1).
#
# For each spec, `ctxmon hist --backend kernel SPEC -a` installs the
# trigger in a private instance and stays until SIGINT; meanwhile
# `ctxmon hist SPEC -- W` runs the workload W (pingpong, copied under a name
# of its own so the comm filter selects this run only) and evaluates the
# spec in user space.  Every switch of W happens while both watch, so the
# rows must be the same set (spaces normalised).  For the wakeup-latency
# chain (synthetic event, onmatch, onmax().save()) the triggers ask for
# clock=mono, ctxmon's clock; the keys, the hitcounts and the number of
# saved maxima are compared, the maxima themselves only shown (the two
# read the clock at different points of an event).
# Then: the instance and the synthetic event are gone.
# POSIX sh (busybox).
. "$GUEST/lib.sh"

TRACEFS=/sys/kernel/tracing
if [ ! -e $TRACEFS/events/sched/sched_switch/hist ]; then
	skip hist "this kernel has no hist triggers (no events/sched/sched_switch/hist)"
	exit 0
fi
"$CTXMON" hist --help >/dev/null 2>&1 || { skip hist "no ctxmon hist in this build"; exit 0; }

W=hw$$
cp "$WL/pingpong" "./$W"

# rows FILE SECTION: the "{ ... }" lines of the hist table of SECTION
# ("events/sched/sched_switch/hist"), spaces squeezed, sorted.
rows() {
	sed -n "\\|^# $2\$|,\\|^# events/|p" "$1" | grep '^{' |
		sed 's/[[:space:]][[:space:]]*/ /g; s/ $//' | sort
}

# kernel_start SPEC...: start the kernel backend in the background and wait
# until its triggers are installed; KPID is its pid.
kernel_start() {
	"$CTXMON" hist --backend kernel "$@" -a -o kernel.txt 2>kernel.err &
	KPID=$!
	i=0
	while [ $i -lt 100 ]; do
		if grep -q '^hist:' $TRACEFS/instances/ctxmon-$KPID/events/sched/sched_switch/trigger 2>/dev/null; then
			return 0
		fi
		kill -0 $KPID 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

kernel_stop() {
	kill -INT $KPID
	wait $KPID
}

# compare NAME SPEC: one spec on sched_switch, rows compared as sets.
compare() {
	name=$1
	shift
	if ! kernel_start "$@"; then
		fail "$name" "kernel backend did not start: $(tail -n 3 kernel.err | tr '\n' ' ')"
		kill $KPID 2>/dev/null
		return
	fi
	"$CTXMON" hist "$@" -o user.txt -- "./$W" 2000 2>user.err
	rc=$?
	kernel_stop
	if [ $rc != 0 ]; then
		fail "$name" "ctxmon hist failed: $(tail -n 1 user.err)"
		return
	fi
	rows kernel.txt events/sched/sched_switch/hist >k.rows
	rows user.txt events/sched/sched_switch/hist >u.rows
	echo "  $name: kernel's hist file:"
	show k.rows
	echo "  $name: ctxmon hist:"
	show u.rows
	if [ ! -s k.rows ]; then
		fail "$name" "the kernel's table is empty"
	elif cmp -s k.rows u.rows; then
		pass "$name"
	else
		fail "$name" "rows differ ($(wc -l <k.rows) kernel, $(wc -l <u.rows) ctxmon)"
	fi
}

F="if prev_comm == \"$W\""
compare hist_keys_vals_filter "hist:keys=prev_pid,prev_state:vals=hitcount,prev_prio $F"
compare hist_log2 "hist:keys=prev_pid,prev_prio.log2:vals=hitcount $F"
compare hist_execname "hist:keys=common_pid.execname:vals=hitcount,next_prio $F"
compare hist_sort_size "hist:keys=prev_pid,next_comm:vals=hitcount:sort=hitcount.descending:size=256 $F"

# the sort order: hitcounts non-increasing in both files
for fl in kernel.txt user.txt; do
	sed -n 's/.*} hitcount: *\([0-9]*\).*/\1/p' $fl >hc.$fl
	sort -rn hc.$fl >hc.sorted
	cmp -s hc.$fl hc.sorted || fail hist_sort_order "$fl: hitcounts not descending"
done

# wakeup latency: synthetic event, onmatch(), onmax().save()
SYN='wakeup_latency u64 lat; pid_t pid; int prio'
T1="hist:keys=pid:ts0=common_timestamp.usecs:clock=mono if comm==\"$W\""
T2="hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-\$ts0:clock=mono:onmax(\$wakeup_lat).save(next_comm,prev_pid):onmatch(sched.sched_waking).wakeup_latency(\$wakeup_lat,next_pid,next_prio) if next_comm==\"$W\""
T3='hist:keys=pid,prio:vals=hitcount'
if kernel_start --synthetic "$SYN" -e sched:sched_waking "$T1" -e sched:sched_switch "$T2" -e synthetic:wakeup_latency "$T3"; then
	"$CTXMON" hist --synthetic "$SYN" -e sched:sched_waking "$T1" -e sched:sched_switch "$T2" \
		-e synthetic:wakeup_latency "$T3" -o user.txt -- "./$W" 2000 2>user.err
	kernel_stop
	for fl in kernel user; do
		rows $fl.txt events/sched/sched_switch/hist | sed 's/^\(.*hitcount: [0-9]*\).*/\1/' >$fl.sw
		rows $fl.txt events/synthetic/wakeup_latency/hist >$fl.syn
		grep -c 'max: .*next_comm: ' $fl.txt >$fl.saved
		grep 'max: .*next_comm: ' $fl.txt | sed 's/[[:space:]][[:space:]]*/ /g' | sort >$fl.max
	done
	echo "  wakeup latency: kernel's hist file:"
	show kernel.txt
	echo "  wakeup latency: ctxmon hist:"
	show user.txt
	if [ ! -s kernel.sw ]; then
		fail hist_wakeup_latency "the kernel's table is empty"
	elif cmp -s kernel.sw user.sw && cmp -s kernel.syn user.syn &&
		cmp -s kernel.saved user.saved; then
		pass hist_wakeup_latency
	else
		fail hist_wakeup_latency "keys, hitcounts or saved fields differ"
	fi
	# with clock=mono both read CLOCK_MONOTONIC, but at different points
	# of each event (the kernel's ring-buffer reserve, ctxmon's backend),
	# so a latency can differ by what lies between those reads: shown,
	# not judged
	echo "  maxima, kernel: $(tr '\n' ' ' <kernel.max)"
	echo "  maxima, ctxmon: $(tr '\n' ' ' <user.max)"
else
	fail hist_wakeup_latency "kernel backend did not start: $(tail -n 3 kernel.err | tr '\n' ' ')"
	kill $KPID 2>/dev/null
fi

# nothing left behind
if ls -d $TRACEFS/instances/ctxmon-* >/dev/null 2>&1; then
	fail hist_cleanup "an instance is left: $(ls -d $TRACEFS/instances/ctxmon-*)"
elif grep -q wakeup_latency $TRACEFS/synthetic_events; then
	fail hist_cleanup "synthetic event wakeup_latency left defined"
else
	pass hist_cleanup
fi
