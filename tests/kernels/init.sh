#!/bin/busybox sh
# /init of the kernel-matrix guests (tests/kernels/run.sh builds the
# initramfs): mount what ctxmon and the tests need, print `ctxmon doctor`,
# run every executable guest script, check that tracefs is left as found,
# power off.  Every line for the host starts with "@@ctxmon " (the host
# reads the serial console, where the kernel's messages also go).
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tracefs nodev /sys/kernel/tracing
mount -t debugfs nodev /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs cgroup /sys/fs/cgroup && mkdir -p /sys/fs/cgroup/unified &&
	mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
. /ctxmon/env

export CTXMON=/ctxmon/bin/ctxmon WL=/ctxmon/wl GUEST=/ctxmon/guest
say() { echo "@@ctxmon $*"; }

say "begin $(uname -r) $(nproc) CPUs"
# doctor's report, shown by the host and read by guest/doctor.sh
"$CTXMON" doctor -v >/tmp/doctor.txt 2>&1
while IFS= read -r l; do say "doctor $l"; done </tmp/doctor.txt

# what the tests may alter in tracefs, before and after
tracefs_state() {
	t=/sys/kernel/tracing
	ls $t/instances
	for f in tracing_on current_tracer set_event buffer_size_kb trace_clock \
		events/enable events/sched/enable events/sched/sched_switch/enable \
		events/sched/sched_switch/trigger events/sched/sched_switch/filter \
		events/sched/sched_wakeup/enable events/raw_syscalls/enable \
		events/irq/enable; do
		[ -r $t/$f ] && echo "$f: $(cat $t/$f 2>&1 | head -n 5 | sed "s/ (expanded: [0-9]*)//")"
	done
}
tracefs_state >/tmp/tracefs.before

# ctxmon.from=NAME on the kernel command line (the host reboots a guest
# whose kernel panicked): start at the guest script NAME
from=$(sed -n 's/.*ctxmon\.from=\([^ ]*\).*/\1/p' /proc/cmdline)
for t in "$GUEST"/*.sh; do
	[ -x "$t" ] || continue
	n=$(basename "$t" .sh)
	[ -z "$from" ] || [ "$n" = "$from" ] || continue
	from=
	d=/tmp/run-$n
	mkdir -p "$d"
	echo "script $n"
	(cd "$d" && timeout "$GUEST_TIMEOUT" sh "$t" 2>&1)
	rc=$?
	if [ $rc = 124 ]; then
		echo "FAIL $n: timed out after $GUEST_TIMEOUT s"
	elif [ $rc != 0 ]; then
		echo "FAIL $n: script exited $rc"
	fi
done 2>&1 | while IFS= read -r l; do say "$l"; done

tracefs_state >/tmp/tracefs.after
if cmp -s /tmp/tracefs.before /tmp/tracefs.after; then
	say "PASS tracefs-left-as-found"
else
	say "FAIL tracefs-left-as-found: tracefs differs after the tests"
	diff /tmp/tracefs.before /tmp/tracefs.after | while IFS= read -r l; do say "  $l"; done
fi
say "END"
sync
poweroff -f
