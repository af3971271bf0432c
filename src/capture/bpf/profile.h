/* SPDX-License-Identifier: GPL-2.0 */
/*
 * profile.h - what src/capture/bpf/profile.bpf.c (the `ctxmon profile`
 * programs) and their loader (src/profile/profile_capture.c) share: the
 * keys and values of the aggregation maps.  Everything is summed in the kernel;
 * nothing is sent to user space per sample or per switch.
 */
#ifndef CTXMON_PROFILE_BPF_H
#define CTXMON_PROFILE_BPF_H

#define PROF_MAX_DEPTH 127	/* frames per stack (the stack map's) */
#define PROF_COMM_LEN 16

/* What a row of the counts map is. */
enum prof_kind {
	PROF_ON_CPU = 0,	/* timer samples (value: period in us) */
	PROF_OFF_SLEEP,		/* off CPU, asleep (until woken) */
	PROF_OFF_RUNNABLE,	/* off CPU, runnable: woken, waiting for a CPU */
	PROF_OFF_PREEMPT,	/* off CPU after a preemption (runnable) */
	PROF_OFF_YIELD,		/* off CPU after sched_yield() (runnable) */
	PROF_ON_NOSAMPLE,	/* on CPU (off_cpu: exact run time) of a
				 * thread no sample caught: no stack */
};

/* Why a thread left its CPU (the cause at switch-out). */
struct prof_key {
	__u32 tgid, tid;
	__s32 kstack, ustack;	/* stack map ids, < 0: none (-errno) */
	__u32 kind;		/* enum prof_kind */
	__s32 sysnr;		/* syscall in progress at switch-out, -1 */
	__u32 other_tid;	/* preempted by: the next task */
	char comm[PROF_COMM_LEN];
	char other_comm[PROF_COMM_LEN];
};

/* off_cpu: a thread's exact run time (the kernel's own count of it,
 * se.sum_exec_runtime, the clock of CLOCK_THREAD_CPUTIME_ID), handed to
 * its samples.  Each sample is charged the run time since the thread's
 * previous sample (or since it was first switched in, or targeted); what
 * runs after the last one is charged at its last switch-out or at the end
 * to the last sample's stack, or, never sampled, to a PROF_ON_NOSAMPLE
 * row. */
struct prof_run {
	__u64 base;		/* its sum_exec_runtime when last charged */
	__u32 sampled;		/* key holds the last sample's */
	__u32 sent;		/* dwarf: user space holds that sample's
				 * stack, where the run after it goes */
	struct prof_key key;	/* tgid, tid, comm; then the last sample */
};

/* dwarf: the seq of a thread's last on-CPU stack (user space keeps it
 * for the run after it); off-CPU copies count up from 1. */
#define PROF_ONCPU_SEQ(tid) ((1ull << 63) | (__u64)(tid))

struct prof_val {
	__u64 ns;		/* nanoseconds charged (user space shows us) */
	__u64 count;		/* samples, or off-CPU intervals */
};

/* --wakers: a wakee's off-CPU stack joined to its waker's stack. */
struct prof_wkey {
	__u32 tgid, tid;	/* the wakee */
	__s32 kstack, ustack;	/* its stacks at switch-out */
	__s32 sysnr;
	__u32 waker_tid;
	__s32 waker_kstack, waker_ustack;
	char comm[PROF_COMM_LEN];
	char waker_comm[PROF_COMM_LEN];
};

/* --user-stack dwarf: a bounded copy of the user stack per sample and per
 * switch-out goes to user space (the events ring), unwound there with the
 * binaries' CFI; off-CPU time follows as charge events of the same seq. */
#define PROF_USTK_BYTES 16384

enum prof_ev_type {
	PROF_EV_PROC = 1,	/* a process to copy the mappings of */
	PROF_EV_STACK,		/* a user stack copy (struct prof_ev_stack) */
	PROF_EV_CHARGE,		/* off-CPU time of an earlier stack */
};

struct prof_ev_proc {
	__u32 type, tgid;
	__u32 parent;		/* a fork: the parent process (its mappings
				 * are the child's until it execs), else 0 */
	__u32 pad;
};

/* x86_64 user registers CFI may need, in pt_regs' names */
struct prof_uregs {
	__u64 ip, sp, bp, bx, r12, r13, r14, r15;
};

struct prof_ev_stack {
	__u32 type;
	__u32 len;		/* bytes of data (from regs.sp) */
	__u64 seq;		/* off CPU: its charges carry it; on: 0 */
	__u64 ns;		/* on CPU: the period, or (off_cpu) the run
				 * since the previous sample; off CPU: 0 */
	__u64 ts;		/* when the copy was taken (bpf_ktime_get_ns) */
	struct prof_key key;
	struct prof_uregs regs;
	__u8 data[PROF_USTK_BYTES];
};

struct prof_ev_charge {
	__u32 type, kind;	/* enum prof_kind of this part */
	__u64 seq, ns;
	__u32 last, pad;	/* last charge of the seq */
};

/* Losses, one counter each (the stats array's indexes). */
enum prof_stat {
	PROF_ST_SAMPLES = 0,	/* samples of targeted tasks */
	PROF_ST_KSTACK_LOST,	/* bpf_get_stackid failed (map full, fault) */
	PROF_ST_USTACK_LOST,
	PROF_ST_COUNTS_FULL,	/* counts map full: the row was dropped */
	PROF_ST_TASKS_FULL,	/* task map full: an interval was dropped */
	PROF_ST_WAKES_FULL,
	PROF_ST_RING_DROPS,	/* events ring full: a stack copy lost */
	PROF_ST_USTK_SHORT,	/* user stack copies shorter than wanted */
	PROF_ST__N,
};

#endif
