#!/bin/bash
# tier: long (make check): 20000 processes alive at once
# runs: alone (the storm owns the machine: pids, memory, both CPUs)
# The zombies workload, mode 2 (tests/workloads/zombies.c; modes 0 and 1
# are test_stat_zombies.sh): the middle process starts 20000 children,
# alive at once, and reaps them.  Under the bpf stream the map of followed
# processes held 16384: the forks past it were seen, the children's
# switches were not (traced 34,511 voluntary against the kernel's 41,588);
# it is sized by pid_max and threads-max now.  bpf-agg's table must hold a
# row per live thread without being told.  Both must match getrusage
# (stat --check) and show a voluntary switch for each of the 20000.
. "$(dirname "$0")/lib.sh"
skip_unless_capture
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$pid_max" -ge 32768 ] || skip "pid_max $pid_max: too few pids for 20000 processes"
zstat z2 bpf 20000 2 --json
n=$(json "$T/z2.out" 'len([t for t in j["threads"] if t["tid"] == t["tgid"] and t["voluntary"] > 0 and t["comm"] == "zombies"])')
echo "mode 2: $n processes of the workload with a voluntary switch traced"
# each child blocks once on the pipe: every one of the 20000 seen
[ "$n" -ge 20000 ] || fail "mode 2: $n processes with switches, expected 20000 children"
# the same on bpf-agg, whose table needs a row per live thread: it
# must have room for 20000 at once without being told
zstat z2-agg bpf-agg 20000 2 --json
n=$(json "$T/z2-agg.out" 'len([t for t in j["threads"] if t["tid"] == t["tgid"] and t["voluntary"] > 0 and t["comm"] == "zombies"])')
echo "mode 2, bpf-agg: $n processes of the workload with a voluntary switch counted"
[ "$n" -ge 20000 ] || fail "mode 2, bpf-agg: $n processes with switches, expected 20000 children"
finish
