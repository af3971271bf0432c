#!/bin/sh
# Install the Debian packages ctxmon needs that are missing; idempotent and
# quiet when nothing is missing.  Needs root when something must be installed.
set -e
PKGS="gcc make pkg-config libcmocka-dev libtraceevent-dev libtracefs-dev \
libzstd-dev libbpf-dev bpftool clang llvm libelf-dev zlib1g-dev \
libncurses-dev tmux procps util-linux python3 libclang-rt-dev \
python3-scipy chromium qemu-system-x86 busybox-static cpio \
libmicrohttpd-dev prometheus curl libsqlite3-dev sqlite3 \
protobuf-compiler tidy python3-html5lib bpftrace time stress-ng \
man-db groff-base libtracecmd-dev trace-cmd linux-perf \
libdw-dev libprotobuf-c-dev protobuf-c-compiler"
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
