#!/bin/bash
# tier: both (make test: a pipe of 500k lines; make check: 2M)
# A shell pipeline of several processes: the traced counts summed over
# kcount's child (sh) and all its descendants equal the wait4() rusage of sh
# (which covers everything sh reaped).
. "$(dirname "$0")/lib.sh"
skip_unless_capture

# a pipe of 2M lines (make check) or 500k (make test): thousands of switches
# between the four processes either way
stat_kcount pipeline 1 sh -c "seq 1 $(long_or 500000 2000000) | gzip -1 | gzip -d | wc -l >/dev/null"
stat_kcount pipeline-sub 1 sh -c '(seq 1 300000 | sort -r | head -n 3) >/dev/null; cat /proc/self/status | grep -c ctxt >/dev/null'

finish
