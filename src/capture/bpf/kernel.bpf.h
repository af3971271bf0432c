/*
 * kernel.bpf.h - what every BPF object of ctxmon reads of the kernel the
 * same way, on old kernels and new (CO-RE): the task state (->state before
 * 5.14, ->__state since), the task's CPU (->cpu before 5.16, in
 * thread_info since), the id of a cgroup's ancestor (->ancestor_ids before
 * 6.1, ->ancestors since), the kernel's own verdict on a switch-out from
 * its nvcsw/nivcsw counters (csw.h), the run of the slice a switch-out
 * ends (slice_run()), and a loop-free log2 for histogram buckets
 * (no loop in a locked region), and task fields read as plainly as the
 * program type allows (TREAD).  Include after vmlinux.h and the libbpf
 * headers.
 */
#ifndef CTXMON_KERNEL_BPF_H
#define CTXMON_KERNEL_BPF_H

#include "csw.h" /* csw_moved() */

/*
 * A field of a task: a plain load (CO-RE offset) in a tp_btf program, whose
 * task pointers are trusted BTF pointers, a bpf_probe_read_kernel() in its
 * raw_tp twin.  @btf is a constant of each twin, so the other branch is
 * compiled out of each.
 */
#define TREAD(btf, t, f) ((btf) ? (t)->f : BPF_CORE_READ(t, f))
#define TREAD_COMM(btf, dst, t)                                        \
	do {                                                           \
		if (btf)                                               \
			__builtin_memcpy(dst, (t)->comm, sizeof(dst)); \
		else                                                   \
			bpf_core_read(dst, sizeof(dst), &(t)->comm);   \
	} while (0)

/*
 * How long task @t ran in the slice a switch-out of it ends, by the
 * kernel's own count: se.sum_exec_runtime (the clock of
 * CLOCK_THREAD_CPUTIME_ID, brought up to date by __schedule() before the
 * tracepoint) less se.prev_sum_exec_runtime, which the fair class sets to
 * it when it picks the task to run.  For a switch-out whose switch-in was
 * never traced: it tells when that switch-in was.  0 where the start does
 * not hold: the idle task and real-time or deadline tasks (prio below
 * 100), whose classes never set it.  A class that does not set it either
 * (sched_ext) gives too much; user space caps it at the time since the
 * task's last known state change.
 */
static __always_inline __u64 slice_run(struct task_struct *t, bool btf)
{
	__u64 sum, start;

	if (TREAD(btf, t, pid) == 0 || TREAD(btf, t, prio) < 100)
		return 0;
	sum = TREAD(btf, t, se.sum_exec_runtime);
	start = TREAD(btf, t, se.prev_sum_exec_runtime);
	return sum > start ? sum - start : 0;
}

/* task_struct.__state and exit_state bits (include/linux/sched.h) */
#define K_TASK_REPORT 0x7f
#define K_TASK_NOLOAD 0x0400
#define K_TASK_IDLE (0x0002 | K_TASK_NOLOAD)
#define K_TASK_RTLOCK_WAIT 0x1000
#define K_TASK_FROZEN 0x8000
#define K_TASK_REPORT_IDLE 0x80
#define K_TASK_D 0x02 /* reported states */
#define K_TASK_X 0x10
#define K_TASK_Z 0x20
#define K_TASK_WAKING 0x0200 /* try_to_wake_up() under way */

/* The kernel's __trace_sched_switch_state(): the task state bit
 * sched_switch reports (S 0x1, D 0x2, ... X 0x10, Z 0x20, P 0x40, the
 * bits of enum ctxmon_task_state), or K_TASK_REPORT_IDLE. */
static __always_inline __u32 report_state(__u32 state, __u32 exit_state)
{
	__u32 s = (state | exit_state) & K_TASK_REPORT;
	__u32 bit = 0;

	if ((state & K_TASK_IDLE) == K_TASK_IDLE)
		return K_TASK_REPORT_IDLE;
	if (state & (K_TASK_RTLOCK_WAIT | K_TASK_FROZEN))
		return K_TASK_D;
	/* fls(): the highest bit wins, as in the kernel */
	for (int i = 6; i >= 0; i--) {
		if (s & (1u << i)) {
			bit = 1u << i;
			break;
		}
	}
	return bit;
}

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state_raw(struct task_struct *t)
{
	struct task_struct___pre514 *o = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ(o, state);
}

static __always_inline __s32 task_cpu(struct task_struct *t, bool btf)
{
	struct task_struct___pre516 *o = (void *)t;

	/* @btf: @t is a trusted BTF pointer, read with plain loads (the
	 * branch for the field this kernel lacks is dead after CO-RE) */
	if (bpf_core_field_exists(t->thread_info.cpu))
		return btf ? t->thread_info.cpu :
			     BPF_CORE_READ(t, thread_info.cpu);
	return btf ? o->cpu : BPF_CORE_READ(o, cpu);
}

/* The cgroup id (kernfs node id) of @cg's ancestor at @level (@cg's own
 * level at most: the caller checks); 0 when not readable. */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	__u64 id = 0;

	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *a = NULL;

		bpf_core_read(&a, sizeof(a), &cg->ancestors[level]);
		id = a ? BPF_CORE_READ(a, kn, id) : 0;
	} else {
		struct cgroup___pre61 *o = (void *)cg;

		bpf_core_read(&id, sizeof(id), &o->ancestor_ids[level]);
	}
	return id;
}

/*
 * A child's counters reach its parent's rusage only when the parent reaps
 * it with wait() (kernel/exit.c, wait_task_zombie).  Two exits decide
 * that no reap will come; no tracepoint says so, the task structs do.
 *
 * 1. The parent's threads are all exiting: each child still on the
 *    exiting thread's children list, alive or a zombie, is handed to a
 *    subreaper or init by forget_original_parent(), after the
 *    sched_process_exit tracepoint.  A thread that exits while a sibling
 *    lives hands its children to that sibling instead, so only the last
 *    thread (signal->live is 0), or any thread once the whole group is
 *    exiting (SIGNAL_GROUP_EXIT), loses them.  A child already reaped is
 *    off the list.
 * 2. The parent ignores SIGCHLD or set SA_NOCLDWAIT: do_notify_parent()
 *    releases the child as it exits, unreaped.
 */
#define KERNEL_SIGNAL_GROUP_EXIT 0x4	/* include/linux/sched/signal.h */
#define KERNEL_EXIT_DEAD 0x10
#define KERNEL_SIGCHLD 17
#define KERNEL_SIG_IGN 1
#define KERNEL_SA_NOCLDWAIT 2

static __always_inline bool exit_loses_children(struct task_struct *p,
						bool group_dead)
{
	return group_dead ||
	       (BPF_CORE_READ(p, signal, flags) & KERNEL_SIGNAL_GROUP_EXIT);
}

/* The child of @p after @pos on its children list (@pos NULL: the
 * first); NULL at the end. */
static __always_inline struct task_struct *child_next(struct task_struct *p,
						      struct task_struct *pos)
{
	__u64 head = (__u64)&p->children;
	struct list_head *n;

	if (pos)
		n = BPF_CORE_READ(pos, sibling.next);
	else
		n = BPF_CORE_READ(p, children.next);
	if (!n || (__u64)n == head)
		return NULL;
	return (void *)((__u64)n -
			bpf_core_field_offset(struct task_struct, sibling));
}

/* A child on the list that nobody is reaping right now. */
static __always_inline bool child_unreaped(struct task_struct *c)
{
	return !(BPF_CORE_READ(c, exit_state) & KERNEL_EXIT_DEAD);
}

/* Case 2 for the process of @p, whose last thread is exiting: its leader
 * will be released unreaped.  @ptgid gets the parent's tgid. */
static __always_inline bool exit_autoreaped(struct task_struct *p,
					    __s32 *ptgid)
{
	struct task_struct *l = BPF_CORE_READ(p, group_leader), *par;
	struct sighand_struct *sh;
	struct k_sigaction *act;
	unsigned long h = 0, fl = 0;

	if (!l || BPF_CORE_READ(l, ptrace) ||
	    BPF_CORE_READ(l, exit_signal) != KERNEL_SIGCHLD)
		return false;
	par = BPF_CORE_READ(l, parent);
	sh = par ? BPF_CORE_READ(par, sighand) : NULL;
	if (!sh)
		return false;
	act = &sh->action[KERNEL_SIGCHLD - 1];
	bpf_core_read(&h, sizeof(h), &act->sa.sa_handler);
	bpf_core_read(&fl, sizeof(fl), &act->sa.sa_flags);
	*ptgid = BPF_CORE_READ(par, tgid);
	return h == KERNEL_SIG_IGN || (fl & KERNEL_SA_NOCLDWAIT);
}

/* spinlock_t on PREEMPT_RT: an rt_mutex, which knows its owner */
struct rt_mutex_base___rt {
	struct task_struct *owner; /* bit 0: has waiters */
} __attribute__((preserve_access_index));

struct spinlock___rt {
	struct rt_mutex_base___rt lock;
} __attribute__((preserve_access_index));

enum fold_side { FOLD_BEFORE, FOLD_AFTER, FOLD_UNSURE };

/*
 * Where a switch of the exiting task @t (exit_state @es) stands against
 * the moment its counters reach its process's rusage: a switch after it
 * is not counted there.
 *
 * A process leader's counters are read when its parent reaps it, and a
 * leader can still be preempted between exit_notify() and its last switch
 * (any preemptible kernel, more often on PREEMPT_RT): wait_task_zombie()
 * first moves exit_state from EXIT_ZOMBIE to EXIT_DEAD (EXIT_TRACE under
 * a tracer), then reads the counters, then releases the task.  Still a
 * zombie: read later.  Released: read before.  In between: either.
 *
 * A thread's are folded into its process by __exit_signal(), in a write
 * section of the process's stats_lock, which also unhashes the pid.
 * Without PREEMPT_RT all of that runs with interrupts off, under the
 * tasklist lock, and nothing comes between.  On PREEMPT_RT those locks
 * sleep and the task may be preempted, or block, anywhere in it.  Inside
 * the section (sequence odd, @t the lock's owner: not another thread of
 * the process reaping a child) the fold may be done or not: a few stores
 * precede it, and an interrupt can land anywhere.  No lock is taken in the
 * section before thread_pid is cleared, so only a preemption can be
 * unsure, never a block.
 *
 * Either way the release clears thread_pid, then sighand: gone, the
 * counters were taken.
 */
static __always_inline enum fold_side exit_side(struct task_struct *t,
						__u32 tid, __u32 tgid,
						__u32 es, bool btf)
{
	struct signal_struct *sig;
	struct spinlock___rt *l;
	unsigned long owner;
	__u32 seq;

	if (!es || (tid == tgid && !(es & KERNEL_EXIT_DEAD)))
		return FOLD_BEFORE;
	if (!TREAD(btf, t, sighand) || !TREAD(btf, t, thread_pid))
		return FOLD_AFTER;
	if (tid == tgid)
		return FOLD_UNSURE;
	sig = TREAD(btf, t, signal);
	if (!sig)
		return FOLD_BEFORE;
	l = (void *)&sig->stats_lock.lock;
	if (!bpf_core_field_exists(l->lock.owner) ||
	    !bpf_core_field_exists(sig->stats_lock.seqcount.seqcount))
		return FOLD_BEFORE; /* not PREEMPT_RT */
	owner = (unsigned long)BPF_CORE_READ(l, lock.owner);
	seq = BPF_CORE_READ(sig, stats_lock.seqcount.seqcount.sequence);
	return (owner & ~1ul) == (unsigned long)t && (seq & 1) ? FOLD_UNSURE :
								 FOLD_BEFORE;
}

/* floor(log2(d)) for d > 0, without a loop */
static __always_inline __u32 log2_u64(__u64 d)
{
	__u32 b = 0;

	if (d >> 32) {
		d >>= 32;
		b += 32;
	}
	if (d >> 16) {
		d >>= 16;
		b += 16;
	}
	if (d >> 8) {
		d >>= 8;
		b += 8;
	}
	if (d >> 4) {
		d >>= 4;
		b += 4;
	}
	if (d >> 2) {
		d >>= 2;
		b += 2;
	}
	if (d >> 1)
		b += 1;
	return b;
}

#endif
