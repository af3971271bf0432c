#!/bin/sh
# scripts/setup.sh [build|test] - install the Debian packages ctxmon needs
# that are missing; idempotent and quiet when nothing is missing.  Needs
# root when something must be installed.
#   build  what building ctxmon and running it needs (make, make run)
#   test   that, and the tools the tests compare ctxmon with or drive it
#          by (make test, make check, make bench): browsers, qemu and the
#          stock kernels' tools, Prometheus, bpftrace, perf, trace-cmd, ...
set -e
BUILD="gcc make pkg-config libtraceevent-dev libtracefs-dev \
libzstd-dev liblzma-dev libbpf-dev bpftool clang llvm libelf-dev zlib1g-dev \
libncurses-dev libmicrohttpd-dev libsqlite3-dev protobuf-compiler \
libtracecmd-dev libdw-dev libprotobuf-c-dev protobuf-c-compiler \
procps util-linux man-db groff-base"
TEST="libcmocka-dev tmux python3 libclang-rt-dev python3-scipy chromium \
qemu-system-x86 busybox-static cpio prometheus curl sqlite3 tidy \
python3-html5lib bpftrace time stress-ng trace-cmd linux-perf strace \
gzip zstd xz-utils bzip2"
case ${1:-test} in
build) PKGS=$BUILD ;;
test) PKGS="$BUILD $TEST" ;;
*)
	echo "usage: scripts/setup.sh [build|test]" >&2
	exit 2
	;;
esac
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: missing Debian packages:$missing; run as root or: apt-get install$missing" >&2
		exit 1
	fi
	echo "setup: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
