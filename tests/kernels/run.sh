#!/bin/bash
# tests/kernels/run.sh [BUILD_DIR] - the kernel matrix: ctxmon on Debian's
# stock kernels, each booted under qemu.
#
# BUILD_DIR (default: build, the release build) gives the ctxmon under test
# (BUILD_DIR/ctxmon) and the workloads (BUILD_DIR/workloads), so another
# branch's binary can be tested.  For each kernel of KERNELS:
#
#   1. the newest linux-image-...-unsigned package of that flavour is found
#      with apt-cache and fetched with `apt-get download` into
#      ${CTXMON_KERNEL_CACHE:-/var/cache/ctxmon/kernels} (kept between runs;
#      only boot/vmlinuz-* and boot/config-* are extracted);
#   2. one initramfs (busybox-static, cpio) holds ctxmon, the shared
#      libraries ldd names for it and the workloads, the workloads, the
#      guest scripts and tests/kernels/init.sh as /init;
#   3. the kernel boots it with qemu-system-x86_64 -accel tcg,thread=single -smp 2 -m 1G
#      (nested KVM hangs on these VMs), with no_timer_check (the boot's
#      test of the emulated timer fails on a loaded host: a 6.1 guest beside
#      stress-ng --cpu 2 panicked with "IO-APIC + timer doesn't work!"; a
#      panic before the first script boots the guest once more); /init mounts proc, sys, tracefs,
#      debugfs, bpffs and cgroup2, prints `ctxmon doctor`, runs every guest
#      script and powers off; everything it says goes to the serial console
#      with the prefix "@@ctxmon ", which is how this script tells it from
#      the kernel's messages.
#
# Per kernel it prints `ctxmon doctor`'s report, one line per test and
# "KERNEL: N passed, N failed, N skipped"; at the end one line
# "N passed, N failed, N skipped" over all kernels, and exits 1 if anything
# failed.  A kernel that cannot be fetched, or a missing qemu / busybox /
# cpio, is one SKIP line with the reason, never a silent pass.  A guest
# kernel that panics is a FAIL of the script it was running, shown with
# its console, and the guest is booted again from the next script (see
# boot() below).
#
# Guest-test contract (tests/kernels/guest/*.sh): every executable script
# there is run inside the guest by busybox sh (POSIX sh: no bash, no
# python) with
#   CTXMON  the ctxmon binary        WL  the workloads directory
#   GUEST   the directory of the guest scripts (guest/lib.sh lives there)
# as root, with tracefs at /sys/kernel/tracing, in its own scratch
# directory (cwd, on tmpfs).  It prints one line per test on stdout:
#   PASS name | FAIL name: reason | SKIP name: reason
# and may print anything else (details, shown with V=1 or when the kernel
# has a failure).  A script that dies or hangs past GUEST_TIMEOUT is a FAIL.
#
# Environment:
#   KERNELS               flavours to boot (default "6.1-cloud 6.12-cloud
#                         6.12-rt"); a flavour is VERSION-FLAVOUR, or a
#                         full linux-image-...-unsigned package name
#   CTXMON_KERNEL_CACHE   package cache (default /var/cache/ctxmon/kernels)
#   KERNEL_TIMEOUT        seconds per guest, boot to power-off (default 1800)
#   GUEST_TIMEOUT         seconds per guest script (default 900: a hang
#                         guard; the guest runs beside the rest of the suite
#                         at its priority: niced, it got a tenth of a CPU
#                         beside stress-ng --cpu 2 and its stat script ran
#                         past 900 s)
#   GUEST_TESTS           guest scripts to run, by name (default: all of
#                         tests/kernels/guest/*.sh)
#   MAX_PANICS            reboots of a guest whose kernel panicked, to run
#                         the scripts after the one it died in (default 2)
#   QEMU_ACCEL            qemu's -accel (default "tcg,thread=single": both
#                         vCPUs on one host thread; "tcg" gives each its own)
#   V=1                   show every guest line
set -u

B=${1:-build}
if [ ! -x "$B/ctxmon" ] || [ ! -d "$B/workloads" ]; then
	echo "usage: tests/kernels/run.sh [BUILD_DIR]  (BUILD_DIR/ctxmon and BUILD_DIR/workloads must exist: make O=BUILD_DIR)" >&2
	exit 2
fi
B=$(cd "$B" && pwd)
cd "$(dirname "$0")" || exit 2
HERE=$(pwd)

KERNELS=${KERNELS:-"6.1-cloud 6.12-cloud 6.12-rt"}
CACHE=${CTXMON_KERNEL_CACHE:-/var/cache/ctxmon/kernels}
KTIMEOUT=${KERNEL_TIMEOUT:-1800}
GTIMEOUT=${GUEST_TIMEOUT:-900}

pass=0 failed=0 skipped=0
total() {
	echo "kernels: $pass passed, $failed failed, $skipped skipped"
	[ "$failed" = 0 ]
	exit
}
skip_all() {
	echo "SKIP kernels: $*"
	skipped=$((skipped + 1))
	total
}

QEMU=$(command -v qemu-system-x86_64) ||
	skip_all "no qemu-system-x86_64 (Debian: qemu-system-x86; scripts/setup.sh installs it)"
BUSYBOX=/bin/busybox
if [ ! -x "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	skip_all "no static busybox at $BUSYBOX (Debian: busybox-static)"
fi
command -v cpio >/dev/null || skip_all "no cpio (Debian: cpio)"
[ "$(uname -m)" = x86_64 ] || skip_all "the guests are x86-64 and this is $(uname -m)"

WORK=$(mktemp -d /tmp/ctxmon-kernels.XXXXXX)
QPID=""
cleanup() {
	[ -z "$QPID" ] || kill "$QPID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- kernels ------------------------------------------------------------

# pkg_for FLAVOUR: the newest linux-image-...-unsigned package of FLAVOUR
# ("6.1-cloud": the metapackage linux-image-cloud-amd64, whose dependency
# is Debian 12's 6.1; "6.12-rt": linux-image-6.12-rt-amd64), on stdout.
pkg_for() {
	local f=$1 meta dep
	case $f in
	linux-image-*) echo "$f"; return 0 ;;
	6.1-*) meta=linux-image-${f#6.1-}-amd64 ;;
	*-*) meta=linux-image-${f%%-*}-${f#*-}-amd64 ;;
	*) return 1 ;;
	esac
	dep=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	[ -n "$dep" ] || return 1
	echo "$dep-unsigned"
}

# fetch FLAVOUR: sets KVER and VMLINUZ, or prints why not and fails.
fetch() {
	local f=$1 pkg deb
	KVER="" VMLINUZ=""
	mkdir -p "$CACHE" || { WHY="cannot create $CACHE"; return 1; }
	if pkg=$(pkg_for "$f"); then
		deb=$(ls "$CACHE/${pkg}"_*.deb 2>/dev/null | sort -V | tail -n 1)
		if [ -z "$deb" ]; then
			echo "fetching $pkg into $CACHE"
			(cd "$CACHE" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2)
			deb=$(ls "$CACHE/${pkg}"_*.deb 2>/dev/null | sort -V | tail -n 1)
		fi
	else
		# apt knows nothing (no `apt-get update`, offline): the newest
		# package of that flavour already in the cache will do
		deb=$(ls "$CACHE"/linux-image-"${f%%-*}"*-"${f#*-}"-amd64-unsigned_*.deb \
			2>/dev/null | sort -V | tail -n 1)
	fi
	if [ -z "$deb" ]; then
		WHY="no Debian package for $f (apt-cache knows none: run apt-get update; or apt-get download failed)"
		return 1
	fi
	KVER=$(dpkg-deb --fsys-tarfile "$deb" | tar -t 2>/dev/null |
		sed -n 's|^\./boot/vmlinuz-||p' | head -n 1)
	[ -n "$KVER" ] || { WHY="no boot/vmlinuz-* in $deb"; return 1; }
	VMLINUZ=$CACHE/vmlinuz-$KVER
	if [ ! -s "$VMLINUZ" ]; then
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -O "./boot/vmlinuz-$KVER" >"$VMLINUZ.tmp" &&
			mv "$VMLINUZ.tmp" "$VMLINUZ" ||
			{ WHY="cannot extract vmlinuz from $deb"; return 1; }
	fi
	PKGINFO="$(basename "$deb" .deb)"
	return 0
}

# ---- initramfs ----------------------------------------------------------

# copy_with_libs FILE DEST: FILE to DEST in the root, and every shared
# library ldd names for it at its own path; a library of the build itself
# (libctxmon.so.N, found through the tool's RUNPATH $ORIGIN) goes next to
# DEST, where $ORIGIN points in the guest.
ROOT=$WORK/root
copy_with_libs() {
	local lib bdir
	bdir=$(cd "$(dirname "$1")" && pwd)
	install -D -m 755 "$1" "$ROOT/$2"
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
		if [ "$(cd "$(dirname "$lib")" && pwd)" = "$bdir" ]; then
			install -D -m 755 "$(readlink -f "$lib")" \
				"$ROOT$(dirname "$2")/$(basename "$lib")"
			continue
		fi
		[ -e "$ROOT$lib" ] || install -D -m 755 "$(readlink -f "$lib")" "$ROOT$lib"
	done
}

mkdir -p "$ROOT"/{bin,sbin,proc,sys,dev,tmp,run,ctxmon/guest,ctxmon/wl}
cp "$BUSYBOX" "$ROOT/bin/busybox"
install -m 755 "$HERE/init.sh" "$ROOT/init"
copy_with_libs "$B/ctxmon" /ctxmon/bin/ctxmon
for w in "$B"/workloads/*; do
	[ -x "$w" ] && copy_with_libs "$w" "/ctxmon/wl/$(basename "$w")"
done
cp "$HERE"/guest/lib.sh "$ROOT/ctxmon/guest/"
for g in ${GUEST_TESTS:-$(cd "$HERE/guest" && ls *.sh | sed 's/\.sh$//')}; do
	[ -f "$HERE/guest/$g.sh" ] || skip_all "no guest script $HERE/guest/$g.sh"
	cp -p "$HERE/guest/$g.sh" "$ROOT/ctxmon/guest/"
done
# in the order the guest's /init runs them (its glob's)
SCRIPTS=$(cd "$ROOT/ctxmon/guest" && ls *.sh | grep -vx lib.sh | sed 's/\.sh$//')
# lib64 for the dynamic loader's canonical path
[ -e "$ROOT/lib64/ld-linux-x86-64.so.2" ] ||
	skip_all "ldd named no /lib64/ld-linux-x86-64.so.2 for $B/ctxmon"
{
	echo "GUEST_TIMEOUT=$GTIMEOUT"
	# the tier: make check repeats some guest checks (guest/lib.sh long_or)
	echo "export CTXMON_LONG=${CTXMON_LONG:-0}"
} >"$ROOT/ctxmon/env"
INITRD=$WORK/initrd.gz
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD" ||
	skip_all "cannot build the initramfs"
echo "initramfs: $(du -k "$INITRD" | cut -f1) KiB (ctxmon from $B)"

# ---- one guest ----------------------------------------------------------

# boot NAME: boot $VMLINUZ with the initramfs and judge its serial output.
#
# The rule for a guest that panics or hangs (TCG runs these kernels much
# slower than hardware, and some of their races only show there):
#   - A panic or fatal oops is found on the console (qemu exits on it:
#     -no-reboot; softlockup_panic=1 and hung_task_panic=1 turn a CPU or a
#     task stuck in the kernel into a panic with its stack, instead of a
#     guest that hangs until KERNEL_TIMEOUT).  The script it ran is run
#     again once, in a new boot (ctxmon.from=NAME); what it printed before
#     the panic is not counted.
#   - If the retry passes, the script's results are the retry's and the
#     panic is still shown ("RETRIED ..." and its stack).
#   - If it panics again: when the stack names one of ctxmon's own kernel
#     code paths (a BPF program, bpf_prog_*), it is a FAIL.  Otherwise it
#     is "SKIP NAME: the guest kernel panicked in FUNCTION under TCG, twice"
#     with the console from the first oops line: a kernel or emulator bug,
#     not a ctxmon failure, and never a pass; the tests the script printed
#     before the second panic count as they came.  The guest then boots
#     again from the next script, at most MAX_PANICS panics per kernel;
#     scripts never reached are each a FAIL ("not run").
#   - A guest that stops without END and without a panic (qemu killed at
#     KERNEL_TIMEOUT, or exiting) gets the same one retry; a second time
#     is a FAIL with the last console lines: no stack, nothing to blame.
MAXP=${MAX_PANICS:-3}
boot() {
	local name=$1 log out start secs rc p=0 f=0 s=0 line v rest
	local ended from="" panics=0 cur next panic n=0 retried="" skip_cur
	local stack func hangs=0 ts
	start=$SECONDS
	while :; do
		n=$((n + 1))
		log=$WORK/$name.$n.log out=$WORK/$name.$n.out rc=0 ended=0 cur=""
		# in the background, so that a signal to this script stops it too
		timeout -k 10 "$KTIMEOUT" "$QEMU" -accel "${QEMU_ACCEL:-tcg,thread=single}" -smp 2 -m 1G \
			-nographic -no-reboot -kernel "$VMLINUZ" -initrd "$INITRD" \
			-append "console=ttyS0 no_timer_check quiet loglevel=3 panic=-1 softlockup_panic=1 hung_task_panic=1 rdinit=/init${from:+ ctxmon.from=$from}" \
			</dev/null >"$log" 2>&1 &
		QPID=$!
		wait "$QPID" || rc=$?
		QPID=""
		tr -d '\r' <"$log" | sed -n 's/^.*@@ctxmon //p' >"$out"
		grep -q '^END$' "$out" && ended=1
		cur=$(sed -n 's/^script //p' "$out" | tail -n 1)
		panic=""
		[ "$ended" = 1 ] ||
			panic=$(tr -d '\r' <"$log" | grep -m 1 -E 'Kernel panic - not syncing|Fatal exception|^\[ *[0-9.]*\] (BUG|Oops|general protection fault)' |
				sed 's/^\[ *[0-9.]*\] //')
		# a first failure of this script: retried, its lines of this
		# boot not counted
		skip_cur=""
		if [ "$ended" = 0 ] && [ -n "$cur" ] && [ "$retried" != "$cur" ]; then
			skip_cur=$cur
		fi
		ts=""
		while IFS= read -r line; do
			v=${line%% *}
			rest=${line#* }
			case $v in
			script) ts=$rest; [ "${V:-0}" = 0 ] || echo "    $line"; continue ;;
			esac
			if [ -n "$skip_cur" ] && [ "$ts" = "$skip_cur" ]; then
				case $v in
				PASS | FAIL | SKIP) echo "  (not counted, retried) $line" ;;
				esac
				continue
			fi
			case $v in
			PASS) p=$((p + 1)); echo "  PASS $rest" ;;
			FAIL) f=$((f + 1)); echo "  FAIL $rest" ;;
			SKIP) s=$((s + 1)); echo "  SKIP $rest" ;;
			doctor) [ "$n" != 1 ] || echo "  | $rest" ;;
			END) ;;
			*) [ "${V:-0}" = 0 ] || echo "    $line" ;;
			esac
		done <"$out"
		[ "$ended" = 0 ] || break
		next=""
		[ -z "$cur" ] || next=$(echo "$SCRIPTS" | sed -n "/^$cur\$/{n;p;}")
		if [ -n "$panic" ]; then
			panics=$((panics + 1))
			stack=$WORK/$name.$n.stack
			tr -d '\r' <"$log" | grep -v '@@ctxmon ' |
				sed -n '/\] \(BUG\|Oops\|general protection\|Kernel panic\|watchdog: BUG\|INFO: task\)/,$p' |
				head -n 60 >"$stack"
			func=$(sed -n 's/.*RIP: 0010:\([A-Za-z0-9_.]*\).*/\1/p' "$stack" | head -n 1)
			[ -n "$func" ] || func=$(sed -n 's/.*\] \(BUG\|Oops\)[^:]*: .* at \([A-Za-z0-9_.]*\).*/\2/p' "$stack" | head -n 1)
			[ -n "$func" ] || func="(no RIP on the console)"
			echo "  guest kernel panic $panics in ${cur:-boot}: \"$panic\" (RIP $func); console from the first oops line:"
			sed 's/^/    /' "$stack" | head -n 40
			# a panic before the first script (a boot-time check of
			# the emulated hardware under a loaded host): once more
			if [ -z "$cur" ] && [ "$retried" != "(boot)" ] && [ "$panics" -le "$MAXP" ]; then
				echo "  RETRIED boot: booting $name again (panic $panics of at most $MAXP)"
				retried="(boot)"
				continue
			fi
			if [ -n "$skip_cur" ] && [ "$panics" -le "$MAXP" ]; then
				echo "  RETRIED $cur: booting $name again from $cur (panic $panics of at most $MAXP)"
				retried=$cur from=$cur
				continue
			fi
			if grep -q 'bpf_prog_' "$stack"; then
				f=$((f + 1))
				echo "  FAIL ${cur:-boot}: the guest kernel panicked in $func with one of ctxmon's BPF programs on the stack"
			elif [ -n "$cur" ]; then
				s=$((s + 1))
				echo "  SKIP $cur: the guest kernel panicked in $func under TCG, twice (\"$panic\"; stack outside ctxmon's BPF programs: a kernel or emulator bug)"
			else
				f=$((f + 1))
				echo "  FAIL boot: the guest kernel panicked before any script (\"$panic\")"
			fi
			if [ -n "$next" ] && [ "$panics" -le "$MAXP" ]; then
				echo "  booting $name again from the next script, $next"
				from=$next
				continue
			fi
			if [ -n "$next" ]; then
				for g in $(echo "$SCRIPTS" | sed -n "/^$next\$/,\$p"); do
					f=$((f + 1))
					echo "  FAIL $g: not run (the guest kernel panicked $panics times)"
				done
			fi
			break
		fi
		hangs=$((hangs + 1))
		if [ "$rc" = 124 ]; then
			why="no END after $KTIMEOUT s (KERNEL_TIMEOUT)"
		else
			why="stopped before END (qemu exit $rc)"
		fi
		echo "  serial console, last lines:"
		tr -d '\r' <"$log" | tail -n 25 | sed 's/^/    /'
		if [ -n "$skip_cur" ] && [ "$hangs" = 1 ]; then
			echo "  RETRIED ${cur}: the guest $why, in $cur; booting $name again from $cur"
			retried=$cur from=$cur
			continue
		fi
		f=$((f + 1))
		echo "  FAIL ${cur:-guest}: $why"
		break
	done
	if [ "$f" != 0 ] && [ "${V:-0}" = 0 ]; then
		echo "  guest details:"
		cat "$WORK/$name".*.out | grep -v '^\(PASS\|SKIP\|doctor\) ' |
			sed 's/^/    /' | tail -n 200
	fi
	secs=$((SECONDS - start))
	[ "$panics" = 0 ] && panic="" || panic=", $panics kernel panic(s)"
	[ "$n" = 1 ] || panic="$panic, $n boots"
	echo "$name: $p passed, $f failed, $s skipped (${secs} s$panic)"
	pass=$((pass + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

for k in $KERNELS; do
	WHY=""
	echo "=== $k"
	if ! fetch "$k"; then
		echo "SKIP $k: $WHY"
		skipped=$((skipped + 1))
		continue
	fi
	echo "booting $KVER ($PKGINFO)"
	boot "$KVER"
done
total
