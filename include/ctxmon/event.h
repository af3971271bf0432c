/*
 * ctxmon/event.h - the decoded scheduler event, as every backend hands it up.
 *
 * One struct for every event type, so a consumer can keep events in flat
 * arrays and a backend can decode straight into a caller's slot.  All
 * timestamps are nanoseconds on the session clock (CLOCK_MONOTONIC unless the
 * session says otherwise).  Comm strings are interned by the session: the
 * pointers stay valid until the session (or the string table that made them)
 * is freed, and two equal comms share one pointer.
 */
#ifndef CTXMON_EVENT_H
#define CTXMON_EVENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ctxmon_event_type {
	CTXMON_EV_NONE = 0,
	CTXMON_EV_SWITCH,	/* sched_switch */
	CTXMON_EV_WAKING,	/* sched_waking: the wakeup was requested */
	CTXMON_EV_WAKEUP,	/* sched_wakeup: the task is on a run queue */
	CTXMON_EV_WAKEUP_NEW,	/* sched_wakeup_new: a new task's first wakeup */
	CTXMON_EV_MIGRATE,	/* sched_migrate_task */
	CTXMON_EV_FORK,		/* sched_process_fork (process or thread) */
	CTXMON_EV_EXEC,		/* sched_process_exec */
	CTXMON_EV_EXIT,		/* sched_process_exit */
	CTXMON_EV_IRQ_ENTRY,	/* irq_handler_entry */
	CTXMON_EV_IRQ_EXIT,	/* irq_handler_exit */
	CTXMON_EV_SOFTIRQ_ENTRY,/* softirq_entry */
	CTXMON_EV_SOFTIRQ_EXIT,	/* softirq_exit */
	CTXMON_EV_SYS_ENTER,	/* raw_syscalls:sys_enter */
	CTXMON_EV_SYS_EXIT,	/* raw_syscalls:sys_exit */
	CTXMON_EV_LOST,		/* events were dropped on one CPU */
	CTXMON_EV_ORPHAN,	/* a process will not be reaped by its parent
				 * (no tracepoint: BPF backends only) */
	CTXMON_EV__MAX
};

/* Bit set for a switch's prev_state, independent of the kernel's values. */
enum ctxmon_task_state {
	CTXMON_STATE_RUNNING = 0,	 /* "R": switched out while runnable */
	CTXMON_STATE_S = 1u << 0,	 /* interruptible sleep */
	CTXMON_STATE_D = 1u << 1,	 /* uninterruptible sleep */
	CTXMON_STATE_T = 1u << 2,	 /* stopped */
	CTXMON_STATE_t = 1u << 3,	 /* traced */
	CTXMON_STATE_X = 1u << 4,	 /* EXIT_DEAD */
	CTXMON_STATE_Z = 1u << 5,	 /* EXIT_ZOMBIE */
	CTXMON_STATE_P = 1u << 6,	 /* parked */
	CTXMON_STATE_I = 1u << 7,	 /* idle (TASK_IDLE kernel thread) */
	CTXMON_STATE_OTHER = 1u << 8,	 /* a flag this build does not know */
};

/* sw.vol values: how the switch-out of prev is counted. */
enum ctxmon_switch_kind {
	CTXMON_SW_INVOLUNTARY = 0,	/* preempted or switched out runnable */
	CTXMON_SW_VOLUNTARY = 1,	/* blocked: the kernel's nvcsw */
	CTXMON_SW_EXIT = 2,		/* last switch-out of a dying task */
};

/*
 * orphan.why: how a process's counters come to miss its parent's rusage.
 * The kernel folds a child into its parent's rusage only when the parent
 * reaps it with wait().  Neither case below has a tracepoint of its own;
 * the BPF backends read them from the task structs at sched_process_exit.
 */
enum ctxmon_orphan_why {
	/* the parent's last thread is exiting: the child, alive or a zombie,
	 * goes to a subreaper or init, which reaps it */
	CTXMON_ORPHAN_PARENT_DIED = 0,
	/* the parent ignores SIGCHLD (or set SA_NOCLDWAIT): the child is
	 * released as it exits, unreaped */
	CTXMON_ORPHAN_AUTOREAP = 1,
};

#define CTXMON_COMM_LEN 16

struct ctxmon_event {
	uint64_t ts;		/* ns, session clock */
	uint16_t type;		/* enum ctxmon_event_type */
	uint16_t flags;		/* CTXMON_EVF_* */
	int32_t cpu;		/* CPU the event was recorded on */
	int32_t tid;		/* task current when recorded (common_pid) */
	int32_t tgid;		/* its process, or -1 when the backend cannot tell */
	union {
		struct {
			int32_t prev_tid, prev_tgid, prev_prio;
			uint32_t prev_state;	/* enum ctxmon_task_state bits */
			int32_t next_tid, next_tgid, next_prio;
			uint8_t preempt;	/* "R+": prev was preempted */
			uint8_t kind;		/* enum ctxmon_switch_kind */
			const char *prev_comm, *next_comm;
			/* When prev's switch-in was never traced (the CPU
			 * last switched to another task): how long prev ran
			 * in the slice this switch ends, by the kernel's own
			 * count (the bpf backend only); 0 otherwise. */
			uint64_t prev_run_ns;
		} sw;
		struct {	/* WAKING, WAKEUP, WAKEUP_NEW; the waker is ev.tid */
			int32_t tid, prio, target_cpu;
			const char *comm;
		} wake;
		struct {
			int32_t tid, prio, orig_cpu, dest_cpu;
		} migrate;
		struct {
			int32_t parent_tid, child_tid;
			int32_t child_tgid;	/* -1 when unknown */
			uint8_t clone_parent;	/* a new process started with
						 * CLONE_PARENT: its parent is
						 * the forker's (in padding:
						 * child_comm keeps its
						 * offset) */
			const char *child_comm;
		} fork;
		struct {
			int32_t tid, old_tid;
			const char *comm;	/* the new comm (basename of file) */
		} exec;
		struct {
			int32_t tid, prio;
			uint8_t group_dead;
			const char *comm;
		} exit;
		struct {
			int32_t vec;	/* irq number or softirq vector */
			int32_t ret;	/* irq_handler_exit's ret */
		} irq;
		struct {
			int64_t id;	/* syscall number */
			int64_t ret;	/* sys_exit's return value */
		} sys;
		struct {	/* ORPHAN; ev.tid: the thread that saw it */
			int32_t tid;		/* the process (its tgid) */
			int32_t parent;		/* the parent that lets it go */
			uint8_t why;		/* enum ctxmon_orphan_why */
		} orphan;
		struct {
			uint64_t count;		/* events dropped (0: unknown) */
			uint64_t start_ts;	/* last event seen before the gap */
			uint64_t end_ts;	/* first time known after it */
		} lost;
	};
};

/* ctxmon_event.flags */
#define CTXMON_EVF_KIND_EXACT	(1u << 0) /* sw.kind read from task counters */
#define CTXMON_EVF_IN_IRQ	(1u << 1) /* waking raised from hard irq */
#define CTXMON_EVF_IN_SOFTIRQ	(1u << 2) /* waking raised from softirq */
#define CTXMON_EVF_FOLD_KNOWN	(1u << 3) /* switch: the backend read whether
					   * prev's counters were folded */
#define CTXMON_EVF_AFTER_FOLD	(1u << 4) /* switch: prev, a non-leader
					   * thread, had already had its counters
					   * folded into its process at exit, so
					   * rusage will not see this switch */
#define CTXMON_EVF_WAKE_MOVE	(1u << 5) /* migrate: a wake moving the task
					   * it wakes to the CPU that will run
					   * it (the task was TASK_WAKING), not
					   * a balancing move */

/* A short name for an event type ("switch", "waking", ...). */
const char *ctxmon_event_type_name(unsigned type);

/*
 * Format a state bit set the way the kernel prints prev_state ("S", "D",
 * "R", "R+" with preempt); writes at most @len bytes including the NUL and
 * returns @buf.
 */
char *ctxmon_state_str(uint32_t state, int preempt, char *buf, unsigned len);

#ifdef __cplusplus
}
#endif
#endif
