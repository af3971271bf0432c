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
#   3. the kernel boots it with qemu-system-x86_64 -accel tcg -smp 2 -m 1G
#      (nested KVM hangs on these VMs); /init mounts proc, sys, tracefs,
#      debugfs, bpffs and cgroup2, prints `ctxmon doctor`, runs every guest
#      script and powers off; everything it says goes to the serial console
#      with the prefix "@@ctxmon ", which is how this script tells it from
#      the kernel's messages.
#
# Per kernel it prints `ctxmon doctor`'s report, one line per test and
# "KERNEL: N passed, N failed, N skipped"; at the end one line
# "N passed, N failed, N skipped" over all kernels, and exits 1 if anything
# failed.  A kernel that cannot be fetched, or a missing qemu / busybox /
# cpio, is one SKIP line with the reason, never a silent pass.
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
#   KERNEL_TIMEOUT        seconds per guest, boot to power-off (default 900)
#   GUEST_TIMEOUT         seconds per guest script (default 600)
#   GUEST_TESTS           guest scripts to run, by name (default: all of
#                         tests/kernels/guest/*.sh)
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
KTIMEOUT=${KERNEL_TIMEOUT:-900}
GTIMEOUT=${GUEST_TIMEOUT:-600}

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
# library ldd names for it at its own path.
ROOT=$WORK/root
copy_with_libs() {
	local lib
	install -D -m 755 "$1" "$ROOT/$2"
	for lib in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do
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
# lib64 for the dynamic loader's canonical path
[ -e "$ROOT/lib64/ld-linux-x86-64.so.2" ] ||
	skip_all "ldd named no /lib64/ld-linux-x86-64.so.2 for $B/ctxmon"
echo "GUEST_TIMEOUT=$GTIMEOUT" >"$ROOT/ctxmon/env"
INITRD=$WORK/initrd.gz
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD" ||
	skip_all "cannot build the initramfs"
echo "initramfs: $(du -k "$INITRD" | cut -f1) KiB (ctxmon from $B)"

# ---- one guest ----------------------------------------------------------

# boot NAME: boot $VMLINUZ with the initramfs and judge its serial output.
boot() {
	local name=$1 log=$WORK/$1.log start secs rc=0 p=0 f=0 s=0 line v rest
	local ended=0 out=$WORK/$1.out
	start=$SECONDS
	# in the background, so that a signal to this script stops it too
	timeout -k 10 "$KTIMEOUT" "$QEMU" -accel tcg -smp 2 -m 1G -nographic \
		-no-reboot -kernel "$VMLINUZ" -initrd "$INITRD" \
		-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init" \
		</dev/null >"$log" 2>&1 &
	QPID=$!
	wait "$QPID" || rc=$?
	QPID=""
	secs=$((SECONDS - start))
	tr -d '\r' <"$log" | sed -n 's/^.*@@ctxmon //p' >"$out"
	while IFS= read -r line; do
		v=${line%% *}
		rest=${line#* }
		case $v in
		PASS) p=$((p + 1)); echo "  PASS $rest" ;;
		FAIL) f=$((f + 1)); echo "  FAIL $rest" ;;
		SKIP) s=$((s + 1)); echo "  SKIP $rest" ;;
		doctor) echo "  | $rest" ;;
		END) ended=1 ;;
		*) [ "${V:-0}" = 0 ] || echo "    $line" ;;
		esac
	done <"$out"
	if [ "$ended" = 0 ]; then
		f=$((f + 1))
		if [ "$rc" = 124 ]; then
			echo "  FAIL guest: no END after $KTIMEOUT s (KERNEL_TIMEOUT)"
		else
			echo "  FAIL guest: stopped before END (qemu exit $rc)"
		fi
		echo "  serial console, last lines:"
		tr -d '\r' <"$log" | tail -n 25 | sed 's/^/    /'
	elif [ "$f" != 0 ] && [ "${V:-0}" = 0 ]; then
		echo "  guest details:"
		grep -v '^\(PASS\|SKIP\|doctor\) ' "$out" | sed 's/^/    /' | tail -n 200
	fi
	echo "$name: $p passed, $f failed, $s skipped (${secs} s)"
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
