#!/bin/bash
# Four threads contending on a pthread mutex (futex waits): traced counts
# equal the wait4() rusage exactly.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

stat_kcount mutex 5 "$WL/mutex" 4 100000

finish
