#!/bin/bash
# Two spinners sharing CPU 0 for 500 ms each: involuntary switches from slice
# expiry; traced counts equal the wait4() rusage exactly.
. "$(dirname "$0")/lib.sh"
skip_unless_capture

stat_kcount spin2 3 "$WL/spin2" 500

finish
