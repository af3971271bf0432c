/*
 * cgagg.h - what the per-cgroup / per-process aggregation programs
 * (cgagg.bpf.c) and their loader (src/capture/cgagg.c) share.
 *
 * The programs keep counters, times and a wakeup latency histogram per
 * cgroup v2 (by its id) and per process (by tgid), plus runnable-wait time
 * per (victim cgroup, culprit cgroup) pair, in bounded hash maps.  Nothing
 * is sent per event: user space reads the maps at its own pace.  Only
 * fixed-width __u/__s types: the BPF side gets them from vmlinux.h, user
 * space from <linux/types.h>.
 */
#ifndef CTXMON_BPF_CGAGG_H
#define CTXMON_BPF_CGAGG_H

#define CGAGG_COMM_LEN 16
/* latency buckets: bucket i counts d with 2^(i-1) < d <= 2^i ns (bucket 0:
 * d <= 1 ns), so 2^i ns is an inclusive upper bound, as Prometheus' le */
#define CGAGG_HIST 40
#define CGAGG_SLICES 64	/* per-CPU history of which cgroup ran, for culprits */

/* Switch kinds. */
#define CGAGG_VOLUNTARY 0
#define CGAGG_INVOLUNTARY 1
#define CGAGG_EXIT 2
#define CGAGG_KINDS 3

/* Causes of a switch-out: voluntary ones by the class of the syscall the
 * task blocked in (tp_btf only; raw_tp gives CAUSE_BLOCKED), involuntary
 * ones by how the CPU was taken: in sched_yield (tp_btf only), to a task
 * woken while it ran, else slice (tick, slice end, migration). */
#define CGAGG_CAUSE_FUTEX 0
#define CGAGG_CAUSE_POLL 1
#define CGAGG_CAUSE_READ 2
#define CGAGG_CAUSE_WRITE 3
#define CGAGG_CAUSE_SLEEP 4
#define CGAGG_CAUSE_WAIT 5
#define CGAGG_CAUSE_SYSCALL_OTHER 6
#define CGAGG_CAUSE_BLOCKED 7	/* syscall not known (raw_tp, fault) */
#define CGAGG_CAUSE_KTHREAD 8	/* a kernel thread went to sleep */
#define CGAGG_CAUSE_YIELD 9
#define CGAGG_CAUSE_WAKEUP_PREEMPT 10
#define CGAGG_CAUSE_SLICE 11
#define CGAGG_CAUSE_EXIT 12
#define CGAGG_CAUSES 13

#define CGAGG_SYSCALLS 512	/* entries of the syscall class table */

struct cgagg_stats {
	__u64 sw[CGAGG_KINDS];
	__u64 cause[CGAGG_CAUSES];
	__u64 run_ns, wait_ns, sleep_ns;
	__u64 migrations;
	__u64 wakeups;
	__u64 lat_count, lat_sum_ns;
	__u64 lat_hist[CGAGG_HIST];
};

/* Value of the per-process map. */
struct cgagg_proc {
	struct cgagg_stats s;
	__u64 cgid;		/* cgroup of its last switch-out */
	__u64 dead_ts;		/* whole process exited at (0: alive) */
	char comm[CGAGG_COMM_LEN];
};

/* Key of the noisy-neighbour map: @victim waited runnable on a CPU while
 * a task of @culprit ran there.  {0, 0} is the overflow row. */
struct cgagg_pair {
	__u64 victim, culprit;
};

/* Per-task state (LRU by tid): what closes the task's next interval. */
#define CGAGG_T_UNKNOWN 0
#define CGAGG_T_RUNNING 1
#define CGAGG_T_RUNNABLE 2
#define CGAGG_T_SLEEPING 3
struct cgagg_task {
	__u64 state_ts;		/* the current state began */
	__u64 wake_ts;		/* woken at (latency pending when set) */
	__u64 nvcsw, nivcsw;	/* the kernel's counters, last seen */
	__u8 state;
	__u8 csw_valid;
	__u8 early_wake;	/* woken while still on its CPU */
	__u8 pad[5];
};

struct cgagg_slice {
	__u64 cgid;		/* 0: idle */
	__u64 start, end;
};

/* Per-CPU state and counters (per-CPU array, one entry). */
struct cgagg_cpu {
	__u64 busy_ns, idle_ns;	/* closed intervals */
	__u64 cur_ts;		/* the current task began, 0: not seen */
	__u64 cur_cgid;		/* its cgroup, 0 for idle */
	__u32 cur_idle;
	__u32 head;		/* next slot of slices */
	__u32 cur_tid;		/* the task it switched to */
	__u32 pad;
	__u64 switches;
	struct cgagg_slice slices[CGAGG_SLICES];
	/* bounds reached (events folded into the overflow rows) */
	__u64 cg_overflow, proc_overflow, pair_overflow;
	__u64 inexact;		/* switch kinds guessed from the state */
	__u64 wait_unattributed; /* waits older than the slice history */
};

#endif
