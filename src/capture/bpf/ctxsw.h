/*
 * ctxsw.h - what the BPF programs (ctxsw_*.bpf.c) and their user-space loader
 * (src/capture/bpf.c) share: the ring buffer record layouts of streaming
 * mode, the per-thread table of aggregation mode, and the knobs.
 *
 * Only fixed-width __u/__s types: the BPF side
 * gets them from vmlinux.h, user space from <linux/bpf.h>.  Record types
 * use the numbers of enum ctxmon_event_type (bpf.c checks that at compile
 * time), and switch states the bits of enum ctxmon_task_state, so user
 * space copies, not maps.
 */
#ifndef CTXMON_BPF_CTXSW_H
#define CTXMON_BPF_CTXSW_H

#define CTXSW_COMM_LEN 16
#define CTXSW_HIST_BUCKETS 40	/* = CTXMON_HIST_BUCKETS */

/* Record types (= enum ctxmon_event_type). */
#define CTXSW_SWITCH 1
#define CTXSW_WAKING 2
#define CTXSW_WAKEUP 3
#define CTXSW_WAKEUP_NEW 4
#define CTXSW_MIGRATE 5
#define CTXSW_FORK 6
#define CTXSW_EXEC 7
#define CTXSW_EXIT 8
#define CTXSW_IRQ_ENTRY 9
#define CTXSW_IRQ_EXIT 10
#define CTXSW_SOFTIRQ_ENTRY 11
#define CTXSW_SOFTIRQ_EXIT 12
#define CTXSW_SYS_ENTER 13
#define CTXSW_SYS_EXIT 14
#define CTXSW_ORPHAN 16

/* Event groups (= CTXMON_EVENTS_*). */
#define CTXSW_EVENTS_SCHED (1u << 0)
#define CTXSW_EVENTS_IRQ (1u << 1)
#define CTXSW_EVENTS_SYSCALL (1u << 2)

/* Record flags (= CTXMON_EVF_*). */
#define CTXSW_F_KIND_EXACT (1u << 0)
#define CTXSW_F_IN_IRQ (1u << 1)
#define CTXSW_F_IN_SOFTIRQ (1u << 2)
#define CTXSW_F_FOLD_KNOWN (1u << 3)
#define CTXSW_F_AFTER_FOLD (1u << 4)
#define CTXSW_F_WAKE_MOVE (1u << 5) /* migrate: a wake placing the task */

/* sw.kind (= enum ctxmon_switch_kind). */
#define CTXSW_KIND_INVOLUNTARY 0
#define CTXSW_KIND_VOLUNTARY 1
#define CTXSW_KIND_EXIT 2

/* Switch states (= enum ctxmon_task_state, = the kernel's report bits). */
#define CTXSW_STATE_S (1u << 0)
#define CTXSW_STATE_D (1u << 1)
#define CTXSW_STATE_X (1u << 4)
#define CTXSW_STATE_Z (1u << 5)

/* Target filter kinds (rodata knob filter_kind). */
#define CTXSW_FILTER_NONE 0
#define CTXSW_FILTER_TIDS 1	/* targets map holds thread ids */
#define CTXSW_FILTER_TGIDS 2	/* targets map holds process ids */

/*
 * Every record starts with this header.  @lost counts records this CPU
 * could not reserve since its previous record, so user space can place
 * the gap between that record and this one.  @tid/@tgid are the task
 * current when the event fired (the tracepoint's common_pid).
 */
struct ctxsw_hdr {
	__u64 ts;
	__u32 lost;
	__u16 cpu;
	__u8 type;
	__u8 flags;
	__s32 tid;
	__s32 tgid;
};

/*
 * A switch carries both tasks' nvcsw/nivcsw, prev's with the kernel's
 * increment for this switch in: user space tells voluntary from
 * involuntary by which of prev's moved since its last switch
 * (bpf_rec.c).  Their low 32 bits do: csw_moved() only compares, and a
 * counter does not move by 2^32 between two switches of its task.  (The
 * record's size is a cost of its own: 8 bytes more made the switch
 * program 9% slower.)  @kind is CTXSW_KIND_EXIT for a dying prev, else
 * decided there; CTXSW_F_AFTER_FOLD says prev's counters were folded, so
 * rusage misses this switch, whatever its kind.
 */
struct ctxsw_switch {
	struct ctxsw_hdr h;		/* h.tid/h.tgid: prev */
	__s32 prev_prio;
	__u32 prev_state;
	__s32 next_tid, next_tgid, next_prio;
	__u8 preempt, kind;
	__u8 pad[2];
	__u32 prev_nvcsw, prev_nivcsw, next_nvcsw, next_nivcsw;
	char prev_comm[CTXSW_COMM_LEN];
	char next_comm[CTXSW_COMM_LEN];
	/* prev's run in the slice that ends here (slice_run()), when the
	 * switch that began it was not traced on this CPU; else 0 */
	__u64 prev_run;
};

struct ctxsw_wake {
	struct ctxsw_hdr h;		/* h.tid: the waker */
	__s32 tid, prio, target_cpu;
	__u32 pad;
	char comm[CTXSW_COMM_LEN];
};

struct ctxsw_migrate {
	struct ctxsw_hdr h;
	__s32 tid, prio, orig_cpu, dest_cpu;
};

/* A new process whose parent is its forker's (CLONE_PARENT). */
#define CTXSW_FORK_CLONE_PARENT 1

struct ctxsw_fork {
	struct ctxsw_hdr h;
	__s32 parent_tid, child_tid, child_tgid;
	__u32 flags;	/* CTXSW_FORK_CLONE_PARENT */
	char child_comm[CTXSW_COMM_LEN];
};

struct ctxsw_exec {
	struct ctxsw_hdr h;
	__s32 tid, old_tid;
	char comm[CTXSW_COMM_LEN];
};

struct ctxsw_exit {
	struct ctxsw_hdr h;
	__s32 tid, prio;
	__u8 group_dead;
	__u8 pad[7];
	char comm[CTXSW_COMM_LEN];
};

/* A process its parent will not reap (h.tid: the exiting thread). */
struct ctxsw_orphan {
	struct ctxsw_hdr h;
	__s32 tid, parent;	/* the process's tgid, its parent's */
	__u8 why;		/* = enum ctxmon_orphan_why */
	__u8 pad[7];
};

struct ctxsw_irq {
	struct ctxsw_hdr h;
	__s32 vec, ret;
};

struct ctxsw_sys {
	struct ctxsw_hdr h;
	__s64 id, ret;
};

/*
 * Aggregation mode: one row per thread, in a slot of an array (rows) that
 * the thread's tid points to while it lives (tid_slot).  When it dies the
 * tid lets go of the slot, so a reused tid starts a new row, and user
 * space drains the row and gives the slot back (ctxsw_agg.bpf.c).  The
 * fields mirror struct ctxmon_stats; the in-flight state (what the thread
 * is doing and since when) follows them.  The state machine is
 * the one of src/analysis/account.c, so both modes give the same numbers.
 */
/*
 * The maximum of one interval of the rows' reads (bpf_agg.c): the
 * latencies that ended while the row's ireq was @gen, @n of them, the
 * first when the row's count was @count0.
 */
struct ctxsw_imax {
	__u64 max_ns, max_ts, n, count0;
	__s32 waker_tid, cpu, prev_tid;
	__u32 gen;
};

struct ctxsw_lat {
	__u64 count, sum_ns, max_ns, max_ts;
	__s32 max_waker_tid, max_cpu, max_prev_tid;
	__u32 pad;
	__u64 hist[CTXSW_HIST_BUCKETS];
	/* the interval's own maximum (icur), and the one of the interval
	 * before it (iprev), which a latency of a new interval moves there */
	struct ctxsw_imax icur, iprev;
};

/* row.state (account.c's enum tstate) */
#define CTXSW_ST_NEW 0		/* seen, state not known yet */
#define CTXSW_ST_RUNNING 1
#define CTXSW_ST_RUNNABLE 2
#define CTXSW_ST_SLEEP 3	/* in sleep_idx: CTXMON_SLEEP_S, _D, _OTHER */
#define CTXSW_ST_DEAD 4

/* row.flags */
#define CTXSW_RF_LAT_PENDING (1u << 0)	/* a wakeup awaits its switch-in */
#define CTXSW_RF_EARLY_WAKE (1u << 2)	/* woken while still on its CPU */
#define CTXSW_RF_MAYBE_WOKEN (1u << 3)	/* runnable, unless the next waking
					 * comes before the switch-in: then
					 * asleep (ctxsw_agg.bpf.c) */

struct ctxsw_row {
	__u32 seq;		/* odd while a program writes (row_lock()) */
	__u32 slot;		/* its own index + 1, 0 in a free slot */
	__s32 tid, tgid, ppid;
	union {
		struct {
			__u8 exited, state, sleep_idx, flags;
		};
		__u32 marks; /* the four, for an atomic or of exited bits */
	};
	char comm[CTXSW_COMM_LEN];
	__u64 first_ts, last_ts;
	__u64 switch_in, switch_out;
	__u64 voluntary, involuntary, exit_switch;
	__u64 run_ns, wait_ns;
	__u64 sleep_ns[3];
	__u64 migrations, wakeups;
	struct ctxsw_lat lat;
	/* in-flight state */
	__u64 state_ts;		/* when the current state began */
	__u64 lat_ts;		/* start of the pending wakeup latency */
	__u64 early_ts;		/* time of the waking seen while running */
	__s32 lat_waker, early_waker;
	__s32 cpu;		/* RUNNING: where */
	__u32 csw_valid;	/* nvcsw/nivcsw below were read */
	__u64 nvcsw, nivcsw;	/* counters at the last switch in or out */
	__u64 after_fold;	/* involuntary, after exit folded counters */
	__u64 after_fold_vol;	/* voluntary, the same (PREEMPT_RT) */
	__u64 exit_preempt;	/* involuntary, either side of it (RT) */
	__u64 exit_counted;	/* exit switch-out in state Z */
	__u64 bury_ts;		/* when it was buried (CTXSW_BURIED) */
	/*
	 * User space's part, which the programs only read (ireq): the
	 * interval latencies go to (struct ctxsw_imax), moved on before
	 * each read of the row; and, of that read, the read's number, the
	 * latency count and the maximum of the latencies already in the
	 * new interval (bpf_row__interval_max() in bpf_agg.c).
	 */
	__u32 ireq, iread;
	__u64 seen_count, seen_max_ns, seen_max_ts;
};

/* ctxsw_row.exited bits */
#define CTXSW_EXITED 1		/* sched_process_exit seen */
#define CTXSW_EXITED_ORPHAN 2	/* its parent will not reap it */

/* Children an exit's walk for orphans looks at (ctxsw.bpf.h): a bounded
 * loop where bpf_loop() is missing (the stream before Linux 5.17),
 * bpf_loop() elsewhere.  Past them, user space guesses by the times
 * (analysis/rusage.c). */
#define CTXSW_ORPHAN_WALK 128
#define CTXSW_ORPHAN_WALK_LOOP 32768
#define CTXSW_BURIED 4		/* dead, its tid let go: for user space */
#define CTXSW_DRAINED 8		/* copied out by user space (bpf_agg.c) */
#define CTXSW_TOOK_OVER 16	/* a thread that exec'd, under its leader's
				 * tid: the process goes on (de_thread) */
/* exited bits @b in ctxsw_row.marks, where exited is the first byte */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CTXSW_MARKS_EXITED(b) ((__u32)(b))
#else
#define CTXSW_MARKS_EXITED(b) ((__u32)(b) << 24)
#endif

/*
 * Aggregation: a process its parent will not reap (kernel.bpf.h), for
 * user space to mark the row of, by tid and a start no later than the
 * row's first time: the row may be buried already, in a slot the
 * program cannot find.  The value is the time of the mark.
 */
struct ctxsw_orphan_key {
	__s32 tid;
	__u32 pad;
	__u64 start;	/* task->start_time, on the programs' clock */
};

/* Per-CPU numbers of aggregation mode (account.c's struct cpu). */
struct ctxsw_cpu_agg {
	__u64 first_ts, last_ts, state_ts;
	__u64 busy_ns, idle_ns, switches;
	__s32 cur;		/* tid on it since its last switch */
	__u32 in_span;
};

/* Per-CPU bookkeeping of the programs (one PERCPU_ARRAY entry). */
struct ctxsw_cpu {
	__u64 lost;		/* reserve failures not yet told in a record */
	__u64 lost_total;	/* all reserve failures */
	__u64 inexact;		/* switches classified from the state alone */
	__u64 rows_dropped;	/* aggregation: rows that found no room */
	__u64 missed_out;	/* aggregation: switch-outs never traced */
	__u32 hardirq, softirq;	/* interrupt handlers running (nesting) */
	__u32 since_query;	/* records since the ring's fill was read */
	__u32 cur_in;		/* stream: 1 + the tid last switched to */
	struct ctxsw_cpu_agg agg;
};

#endif
