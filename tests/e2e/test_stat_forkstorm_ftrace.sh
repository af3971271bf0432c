#!/bin/bash
# tier: long (make check): a storm of tens of thousands of tasks
# runs: alone (the storm owns the machine: pids, memory, both CPUs)
# The fork/exec/exit storm against the kernel's rusage, 20 runs per
# backend: ftrace ftrace-text (forkstorm_lib.sh says what is checked).
STORM_BACKENDS="ftrace ftrace-text"
STORM_PERFSWITCH=0
. "$(dirname "$0")/forkstorm_lib.sh"
