#!/bin/bash
# Pipe ping-pong (unpinned, across CPUs 0/1, both on CPU 0): the traced
# voluntary/involuntary of the workload equal its wait4() rusage exactly.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

stat_kcount pingpong 2 "$WL/pingpong" 20000
stat_kcount pingpong-0-1 2 "$WL/pingpong" 20000 0 1
stat_kcount pingpong-same 2 "$WL/pingpong" 20000 same

finish
