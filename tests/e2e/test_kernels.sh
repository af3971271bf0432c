#!/bin/bash
# test-timeout: 3000
# tier: both
# runs: early
# `make test` boots one stock kernel (6.1 cloud, the oldest of the
# matrix); `make check` (CTXMON_LONG=1) all three.  KERNELS overrides.
# The qemu kernel matrix (issue 12) as part of `make test`: Debian's stock
# 6.1 cloud, 6.12 cloud and 6.12 PREEMPT_RT kernels boot under qemu (TCG)
# with the release ctxmon in an initramfs and run tests/kernels/guest/*.sh:
# every backend on the stat workloads against kcount's rusage, loss, the
# no-BTF fallback, doctor, hist against the kernel's own triggers, tracefs
# left as found.  tests/kernels/run.sh says everything; this test passes
# when it does, prints its per-kernel lines, and is a SKIP (with run.sh's
# reason) only when no kernel could be booted at all (no qemu, no
# busybox-static, no package to fetch).
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "the guests' initramfs and the package cache need root"
REL=$(dirname "${CTXMON_REL:-}")
[ -x "$REL/ctxmon" ] && [ -d "$REL/workloads" ] ||
	skip "no release build with workloads at '$REL' (make all)"
[ "${CTXMON_LONG:-0}" = 1 ] || export KERNELS=${KERNELS:-6.1-cloud}
rc=0
"$(dirname "$0")/../kernels/run.sh" "$REL" >"$T/kernels.log" 2>&1 || rc=$?
grep -E '^(=== |SKIP |[^ ]+: [0-9]+ passed)|^  (FAIL|RETRIED|guest kernel panic)' \
	"$T/kernels.log"
if ! grep -E '^[^ ]+: [0-9]+ passed' "$T/kernels.log" | grep -qv '^kernels:'; then
	why=$(grep -m1 '^SKIP' "$T/kernels.log")
	[ -n "$why" ] && skip "${why#SKIP }"
	sed 's/^/  | /' "$T/kernels.log" | tail -n 40
	fail "tests/kernels/run.sh booted no kernel (exit $rc)"
fi
# every kernel named must have booted and run: one that could not be
# fetched or booted is a failure, not a pass with fewer kernels
if grep -E '^SKIP [^ ]+: ' "$T/kernels.log" | grep -v '^SKIP kernels:' >"$T/kskip"; then
	fail "not every kernel of the matrix ran: $(tr '\n' ';' <"$T/kskip")"
fi
if [ "$rc" != 0 ]; then
	sed -n '/guest details:/,/^[^ ]/p' "$T/kernels.log" | sed 's/^/  | /' | tail -n 120
	fail "the kernel matrix failed (exit $rc): $(grep '^kernels:' "$T/kernels.log")"
fi
finish
