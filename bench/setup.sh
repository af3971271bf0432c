#!/bin/sh
# Install the Debian packages that only the benchmarks need (the peers ctxmon
# is measured against, and the tools that time and profile the runs).
# Idempotent and quiet when nothing is missing; needs root to install.
# bench/run.sh calls it; a peer whose package cannot be installed is skipped
# there with the reason, not treated as an error.
set -e
PKGS="linux-perf bpftrace trace-cmd hyperfine time procps util-linux"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "bench/setup: missing Debian packages:$missing; run as root or: apt-get install$missing" >&2
	exit 1
fi
echo "bench/setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
