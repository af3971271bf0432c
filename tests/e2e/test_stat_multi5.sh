#!/bin/bash
# The five-thread program of design.md (ping-pong pair, yield loop, two
# spinners sharing a CPU): traced counts equal the wait4() rusage exactly, and
# each of the 5 threads has its exit switch-out reported apart.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

stat_kcount multi5 5 "$WL/multi5"

finish
