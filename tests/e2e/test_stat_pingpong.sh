#!/bin/bash
# tier: both (make test: 2000 round trips; make check: 20000)
# Pipe ping-pong (unpinned, across CPUs 0/1, both on CPU 0): the traced
# voluntary/involuntary of the workload equal its wait4() rusage exactly.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

# 2000 round trips in make test, 20000 in make check: 4,000 or 40,000
# voluntary switches, each counted exactly either way
N=$(long_or 2000 20000)
stat_kcount pingpong 2 "$WL/pingpong" "$N"
stat_kcount pingpong-0-1 2 "$WL/pingpong" "$N" 0 1
stat_kcount pingpong-same 2 "$WL/pingpong" "$N" same

finish
