#!/bin/bash
# sched_yield loop with a yielding partner on the same CPU: every yield is
# an involuntary switch; traced counts equal the wait4() rusage exactly.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

stat_kcount yield 2 "$WL/yield" 20000

finish
