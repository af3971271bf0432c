#!/bin/bash
# tier: long (make check): a storm of tens of thousands of tasks
# runs: alone (the storm owns the machine: pids, memory, both CPUs)
# The fork/exec/exit storm against the kernel's rusage, 20 runs per
# backend: bpf-agg bpf (forkstorm_lib.sh says what is checked), with the
# processes left unreaped (STORM_MODES=6), which these backends see.
STORM_BACKENDS="bpf-agg bpf"
STORM_MODES=6
STORM_PERFSWITCH=0
. "$(dirname "$0")/forkstorm_lib.sh"
