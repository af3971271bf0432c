// SPDX-License-Identifier: GPL-2.0
/*
 * ctxsw.bpf.c - the kernel side of the bpf backend.
 *
 * Programs on the scheduler (and optionally irq and raw_syscalls)
 * tracepoints, in two sets the loader chooses between:
 *
 * - streaming: each event becomes a compact record (ctxsw.h) in one BPF
 *   ring buffer.  Every program exists twice, as tp_btf (typed arguments)
 *   and raw_tp; the loader keeps one of each pair with
 *   bpf_program__set_autoload().  Both call the same inline bodies, which
 *   read task fields with BPF_CORE_READ so they work with either kind of
 *   argument and relocate to the running kernel's layout (CO-RE).
 * - aggregation (agg_*, tp_btf only): the sched programs keep per-thread
 *   counters, times and latency histograms in maps, with the state
 *   machine of src/analysis/account.c, and send nothing.
 *
 * Voluntary or involuntary: at sched_switch the kernel has already added
 * one to prev's nvcsw or nivcsw.  We remember both counters of a task when
 * it is switched in and after each switch-out; at its next switch-out, the
 * one that moved is the kernel's own verdict.  That stays right where the
 * tracepoint's state cannot tell (since 6.13 a task that tried to sleep
 * with a signal pending is shown as R but counted voluntary), and where a
 * switch-in goes unseen.  A task already running when capture starts has
 * no remembered counters at its first switch-out: that one switch is
 * classified from the state, without CTXSW_F_KIND_EXACT.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ctxsw.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- knobs, set by the loader before load ------------------------ */

const volatile __u32 filter_kind = CTXSW_FILTER_NONE;
const volatile bool follow_forks = false;
const volatile bool cpu_filter = false;
const volatile __u64 cg_id = 0; /* cgroup v2 id, 0: any */
const volatile __s32 cg_level = 0; /* its depth below the root */
/* the tracepoints' arguments on this kernel (from its BTF) */
const volatile bool sw_state_arg = false; /* sched_switch's prev_state */
const volatile bool exit_group_arg = false; /* exit's group_dead */
const volatile __u64 wake_bytes = 0; /* wake the reader past this fill */
const volatile bool emit_irq = false; /* irq and softirq records wanted */

/* ---- maps --------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by the loader */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxsw_cpu);
} cpu_state SEC(".maps");

/* CPUs to trace when cpu_filter (value 1), sized to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} cpus SEC(".maps");

/* Selected tids or tgids (filter_kind); forks of selected tasks are added,
 * processes removed when their leader is freed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Processes whose new child processes become targets, themselves not:
 * the caller of a command target not forked yet (its pid is unknown at
 * load), so the command is followed from its fork. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} fork_roots SEC(".maps");

/* Streaming: each task's nvcsw/nivcsw when last switched in or out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct ctxsw_csw);
} csw SEC(".maps");

/* Aggregation: live threads by tid, dead ones by (exit time, tid).  Rows
 * are big and their number unknown: allocate as they come. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct ctxsw_row);
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct ctxsw_dead_key);
	__type(value, struct ctxsw_row_blob);
} dead_rows SEC(".maps");

/* An all-zero row to create rows from (too big for the BPF stack), never
 * written, and a per-CPU one to copy a dead row into. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxsw_row_blob);
} row_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxsw_row_blob);
} row_copy SEC(".maps");

/* ---- kernel layouts that changed across versions ------------------- */

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/* task_struct.__state and exit_state bits (include/linux/sched.h) */
#define K_TASK_REPORT 0x7f
#define K_TASK_NOLOAD 0x0400
#define K_TASK_IDLE (0x0002 | K_TASK_NOLOAD)
#define K_TASK_RTLOCK_WAIT 0x1000
#define K_TASK_FROZEN 0x8000
#define K_TASK_REPORT_IDLE 0x80

static const __u32 zero;

_Static_assert(sizeof(struct ctxsw_row) % 8 == 0, "row blobs are u64s");

/* ---- helpers ------------------------------------------------------ */

static __always_inline struct ctxsw_cpu *this_cpu(void)
{
	return bpf_map_lookup_elem(&cpu_state, &zero);
}

static __always_inline bool cpu_selected(void)
{
	__u32 cpu;
	__u8 *on;

	if (!cpu_filter)
		return true;
	cpu = bpf_get_smp_processor_id();
	on = bpf_map_lookup_elem(&cpus, &cpu);
	return on && *on;
}

static __always_inline __u32 task_state_raw(struct task_struct *t)
{
	struct task_struct___pre514 *o = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ(o, state);
}

static __always_inline __s32 task_cpu(struct task_struct *t)
{
	struct task_struct___pre516 *o = (void *)t;

	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(o, cpu);
}

/* The kernel's __trace_sched_switch_state(), as enum ctxmon_task_state. */
static __always_inline __u32 report_state(__u32 state, __u32 exit_state)
{
	__u32 s = (state | exit_state) & K_TASK_REPORT;
	__u32 bit = 0;

	if ((state & K_TASK_IDLE) == K_TASK_IDLE)
		return K_TASK_REPORT_IDLE;
	if (state & (K_TASK_RTLOCK_WAIT | K_TASK_FROZEN))
		return CTXSW_STATE_D;
	/* fls(): the highest bit wins, as in the kernel */
	for (int i = 6; i >= 0; i--) {
		if (s & (1u << i)) {
			bit = 1u << i;
			break;
		}
	}
	return bit;
}

/* Whether task @t passes the pid and cgroup filters. */
static __always_inline bool task_selected(struct task_struct *t)
{
	if (filter_kind == CTXSW_FILTER_TIDS) {
		__u32 id = BPF_CORE_READ(t, pid);

		if (!bpf_map_lookup_elem(&targets, &id))
			return false;
	} else if (filter_kind == CTXSW_FILTER_TGIDS) {
		__u32 id = BPF_CORE_READ(t, tgid);

		if (!bpf_map_lookup_elem(&targets, &id))
			return false;
	}
	if (cg_id) {
		struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
		__u64 id = 0;

		if (!cg || BPF_CORE_READ(cg, level) < cg_level)
			return false;
		if (bpf_core_field_exists(cg->ancestors)) {
			struct cgroup *a = NULL;

			bpf_core_read(&a, sizeof(a), &cg->ancestors[cg_level]);
			id = a ? BPF_CORE_READ(a, kn, id) : 0;
		} else {
			struct cgroup___pre61 *o = (void *)cg;

			bpf_core_read(&id, sizeof(id),
				      &o->ancestor_ids[cg_level]);
		}
		if (id != cg_id)
			return false;
	}
	return true;
}

static __always_inline bool filtering(void)
{
	return filter_kind != CTXSW_FILTER_NONE || cg_id;
}

static __always_inline struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * Reserve a record and stamp its header with the time taken just before
 * the reserve: the event's own time.  A program that interrupts us in
 * between (an irq or softirq tracepoint, or a wakeup from one) reserves
 * its slot before ours with a later time, so on one CPU ring order is
 * only nearly time order.  No clamping here can fix that: with two
 * nested programs after our reserve, raising our time to the newest one
 * puts it after the first.  User space (bpf.c) therefore sorts each
 * CPU's records by time before the stream takes them, holding them until
 * nothing older can still arrive, which the stream's slack bounds anyway.
 */
static __always_inline void *rec_reserve(__u32 size, __u8 type, __u8 flags)
{
	__u64 t = bpf_ktime_get_ns(), pid_tgid, lost;
	struct ctxsw_cpu *c = this_cpu();
	struct ctxsw_hdr *h;

	if (!c)
		return NULL;
	h = bpf_ringbuf_reserve(&events, size, 0);
	if (!h) {
		__sync_fetch_and_add(&c->lost, 1);
		__sync_fetch_and_add(&c->lost_total, 1);
		return NULL;
	}
	lost = c->lost;
	if (lost) {
		if (lost > 0xffffffffu)
			lost = 0xffffffffu;
		/* subtract, not clear: a nested failure may have added one */
		__sync_fetch_and_add(&c->lost, -lost);
	}
	pid_tgid = bpf_get_current_pid_tgid();
	h->ts = t;
	h->lost = (__u32)lost;
	h->cpu = (__u16)bpf_get_smp_processor_id();
	h->type = type;
	h->flags = flags;
	h->tid = (__s32)(__u32)pid_tgid;
	h->tgid = (__s32)(pid_tgid >> 32);
	return h;
}

/*
 * Commit a record.  The reader is woken only once a quarter of the ring
 * is used (as the perf backend asks of perf): a wakeup per record would
 * cost a context switch of the reader per event, and the reader polls
 * with a timeout anyway.
 */
static __always_inline void rec_submit(void *r)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wake_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
}

/*
 * Interrupt context of a waking, as the tracepoint's common_flags tell
 * perf.  preempt_count is out of reach (a per-CPU variable whose address
 * kallsyms gives only with CONFIG_KALLSYMS_ALL), so the handlers that wake
 * tasks are counted per CPU as they nest: device irq handlers, hrtimer
 * callbacks run in hard irq (the timer interrupt's wakeups: sleeps,
 * timers), and softirqs.  Wakeups from other hard irq work (IPIs,
 * irq_work) are seen as task context.  An exit without its entry (capture
 * began inside the handler) is ignored.
 */
static __always_inline void irq_nest(bool hard, bool entry)
{
	struct ctxsw_cpu *c = this_cpu();
	__u32 *n;

	if (!c)
		return;
	n = hard ? &c->hardirq : &c->softirq;
	if (entry)
		(*n)++;
	else if (*n)
		(*n)--;
}

static __always_inline void irq_reset(void)
{
	struct ctxsw_cpu *c = this_cpu();

	if (c)
		c->hardirq = c->softirq = 0;
}

static __always_inline __u8 irq_ctx(void)
{
	struct ctxsw_cpu *c = this_cpu();

	if (!c)
		return 0;
	if (c->hardirq)
		return CTXSW_F_IN_IRQ;
	return c->softirq ? CTXSW_F_IN_SOFTIRQ : 0;
}

/* ---- event bodies -------------------------------------------------- */

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

static __always_inline int on_switch(unsigned long long *ctx, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 prev_tid = TREAD(btf, prev, pid);
	__u32 next_tid = TREAD(btf, next, pid);
	__u64 nv = TREAD(btf, prev, nvcsw),
	      niv = TREAD(btf, prev, nivcsw);
	__u32 raw, state;
	__u8 kind, flags = 0;
	struct ctxsw_csw *old;
	struct ctxsw_switch *r;

	if (!cpu_selected())
		return 0;
	/* the tracepoint's prev_state (5.18+) is what __schedule decided;
	 * prev->__state may already read TASK_WAKING from a remote waker */
	if (sw_state_arg)
		raw = (__u32)ctx[3];
	else
		raw = task_state_raw(prev);
	state = preempt ? 0 :
			  report_state(raw, TREAD(btf, prev, exit_state));

	if (filtering() && !task_selected(prev) && !task_selected(next))
		return 0;
	/* No switch happens inside an irq handler: a nesting count left up
	 * by an entry whose exit we missed (attached in between) ends here. */
	irq_reset();

	if (state & (CTXSW_STATE_X | CTXSW_STATE_Z)) {
		kind = CTXSW_KIND_EXIT;
		bpf_map_delete_elem(&csw, &prev_tid);
	} else {
		old = prev_tid ? bpf_map_lookup_elem(&csw, &prev_tid) : NULL;
		if (old && nv != old->nvcsw && niv == old->nivcsw) {
			kind = CTXSW_KIND_VOLUNTARY;
			flags = CTXSW_F_KIND_EXACT;
		} else if (old && niv != old->nivcsw && nv == old->nvcsw) {
			kind = CTXSW_KIND_INVOLUNTARY;
			flags = CTXSW_F_KIND_EXACT;
		} else {
			/* first sight (running when capture began): the
			 * tracepoint's own rule */
			kind = preempt || !state ? CTXSW_KIND_INVOLUNTARY :
						   CTXSW_KIND_VOLUNTARY;
			if (prev_tid) {
				struct ctxsw_cpu *c = this_cpu();

				if (c)
					c->inexact++;
			}
		}
		/* exit_notify() sets exit_state as it folds a thread's
		 * counters into its process (a leader's are read at reap):
		 * rusage will not see a switch after that */
		flags |= CTXSW_F_FOLD_KNOWN;
		if (kind == CTXSW_KIND_INVOLUNTARY &&
		    TREAD(btf, prev, exit_state) &&
		    prev_tid != TREAD(btf, prev, tgid))
			flags |= CTXSW_F_AFTER_FOLD;
		/* the counters after this switch are the base for the next
		 * one, even if the switch-in between goes unseen */
		if (old) {
			old->nvcsw = nv;
			old->nivcsw = niv;
		} else if (prev_tid) {
			struct ctxsw_csw cur = { .nvcsw = nv, .nivcsw = niv };

			bpf_map_update_elem(&csw, &prev_tid, &cur, BPF_ANY);
		}
	}
	if (next_tid) {
		struct ctxsw_csw cur = {
			.nvcsw = TREAD(btf, next, nvcsw),
			.nivcsw = TREAD(btf, next, nivcsw),
		};

		old = bpf_map_lookup_elem(&csw, &next_tid);
		if (old)
			*old = cur;
		else
			bpf_map_update_elem(&csw, &next_tid, &cur, BPF_ANY);
	}

	r = rec_reserve(sizeof(*r), CTXSW_SWITCH, flags);
	if (!r)
		return 0;
	r->prev_prio = TREAD(btf, prev, prio);
	r->prev_state = state;
	r->next_tid = next_tid;
	r->next_tgid = TREAD(btf, next, tgid);
	r->next_prio = TREAD(btf, next, prio);
	r->preempt = preempt;
	r->kind = kind;
	r->pad[0] = r->pad[1] = 0;
	/* prev is current, but its tid/tgid in the header come from the
	 * helper; keep them identical to the task we read */
	r->h.tid = prev_tid;
	r->h.tgid = TREAD(btf, prev, tgid);
	TREAD_COMM(btf, r->prev_comm, prev);
	TREAD_COMM(btf, r->next_comm, next);
	rec_submit(r);
	return 0;
}

static __always_inline int on_wake(struct task_struct *p, __u8 type, bool btf)
{
	struct ctxsw_wake *r;

	if (!cpu_selected())
		return 0;
	if (filtering() && !task_selected(p) && !task_selected(current_task()))
		return 0;
	r = rec_reserve(sizeof(*r), type, type == CTXSW_WAKING ? irq_ctx() : 0);
	if (!r)
		return 0;
	r->tid = TREAD(btf, p, pid);
	r->prio = TREAD(btf, p, prio);
	r->target_cpu = task_cpu(p);
	r->pad = 0;
	TREAD_COMM(btf, r->comm, p);
	rec_submit(r);
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu)
{
	struct ctxsw_migrate *r;

	if (!cpu_selected())
		return 0;
	if (filtering() && !task_selected(p))
		return 0;
	r = rec_reserve(sizeof(*r), CTXSW_MIGRATE, 0);
	if (!r)
		return 0;
	r->tid = BPF_CORE_READ(p, pid);
	r->prio = BPF_CORE_READ(p, prio);
	r->orig_cpu = task_cpu(p);
	r->dest_cpu = dest_cpu;
	rec_submit(r);
	return 0;
}

/*
 * Follow the descendants of selected processes: the child's tgid joins
 * the targets before the child can run, whatever CPU the fork ran on.
 * Returns whether the parent passes the pid filter.
 */
static __always_inline bool fork_follow(struct task_struct *parent,
					struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;
	bool sel;

	if (filter_kind == CTXSW_FILTER_NONE)
		return true;
	sel = task_selected(parent);
	if (!follow_forks || filter_kind != CTXSW_FILTER_TGIDS)
		return sel;
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (sel || (ctgid != ptgid && bpf_map_lookup_elem(&fork_roots, &ptgid)))
		bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return sel;
}

static __always_inline int on_fork(struct task_struct *parent,
				   struct task_struct *child)
{
	struct ctxsw_fork *r;
	bool sel = fork_follow(parent, child);

	if (!cpu_selected() || !sel || (cg_id && !task_selected(parent)))
		return 0;
	r = rec_reserve(sizeof(*r), CTXSW_FORK, 0);
	if (!r)
		return 0;
	r->parent_tid = BPF_CORE_READ(parent, pid);
	r->child_tid = BPF_CORE_READ(child, pid);
	r->child_tgid = BPF_CORE_READ(child, tgid);
	r->pad = 0;
	bpf_core_read(r->child_comm, sizeof(r->child_comm), &child->comm);
	rec_submit(r);
	return 0;
}

static __always_inline int on_exec(struct task_struct *p, int old_pid)
{
	struct ctxsw_exec *r;

	if (!cpu_selected())
		return 0;
	if (filtering() && !task_selected(p))
		return 0;
	r = rec_reserve(sizeof(*r), CTXSW_EXEC, 0);
	if (!r)
		return 0;
	r->tid = BPF_CORE_READ(p, pid);
	r->old_tid = old_pid;
	/* begin_new_exec() has set the new comm by now */
	bpf_core_read(r->comm, sizeof(r->comm), &p->comm);
	rec_submit(r);
	return 0;
}

static __always_inline int on_exit(unsigned long long *ctx,
				   struct task_struct *p)
{
	struct ctxsw_exit *r;
	bool group_dead;

	if (!cpu_selected())
		return 0;
	if (exit_group_arg)
		group_dead = (bool)ctx[1];
	else
		/* do_exit() has decremented signal->live before the event */
		group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	if (filtering() && !task_selected(p))
		return 0;
	r = rec_reserve(sizeof(*r), CTXSW_EXIT, 0);
	if (!r)
		return 0;
	r->tid = BPF_CORE_READ(p, pid);
	r->prio = BPF_CORE_READ(p, prio);
	r->group_dead = group_dead;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	bpf_core_read(r->comm, sizeof(r->comm), &p->comm);
	rec_submit(r);
	return 0;
}

/*
 * A process's tgid leaves the targets when its leader is freed: every
 * thread is released by then, so nothing of it can follow, and the tgid
 * may go to an unrelated process next.  (The pid is freed an RCU grace
 * period earlier; a process that gets it within that window is seen as a
 * target until now.)
 */
static __always_inline int on_free(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);

	if (filter_kind == CTXSW_FILTER_TGIDS && follow_forks && tid == tgid)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/* irq, softirq and syscall events concern the current task */
static __always_inline bool current_selected(void)
{
	return cpu_selected() &&
	       (!filtering() || task_selected(current_task()));
}

static __always_inline int on_irq(__u8 type, int vec, int ret)
{
	struct ctxsw_irq *r;

	irq_nest(type == CTXSW_IRQ_ENTRY || type == CTXSW_IRQ_EXIT,
		 type == CTXSW_IRQ_ENTRY || type == CTXSW_SOFTIRQ_ENTRY);
	if (!emit_irq || !current_selected())
		return 0;
	r = rec_reserve(sizeof(*r), type, 0);
	if (!r)
		return 0;
	r->vec = vec;
	r->ret = ret;
	rec_submit(r);
	return 0;
}

static __always_inline int on_hrtimer(struct hrtimer *t, bool entry)
{
	/* soft hrtimers run in the hrtimer softirq, counted there */
	if (!BPF_CORE_READ(t, is_soft))
		irq_nest(true, entry);
	return 0;
}

static __always_inline long syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ((struct pt_regs *)regs, syscallno);
#else
	return -1;
#endif
}

static __always_inline int on_sys(__u8 type, long id, long ret)
{
	struct ctxsw_sys *r;

	if (!current_selected())
		return 0;
	r = rec_reserve(sizeof(*r), type, 0);
	if (!r)
		return 0;
	r->id = id;
	r->ret = ret;
	rec_submit(r);
	return 0;
}

/* ---- the programs: tp_btf and raw_tp twins ------------------------- */

/* BTF in body_args is true in the tp_btf twin, false in the raw_tp one */
#define TWIN(tp, body_args, ...)                                \
	SEC("tp_btf/" #tp)                                      \
	int BPF_PROG(btf_##tp, ##__VA_ARGS__)                   \
	{                                                       \
		const bool BTF __attribute__((unused)) = true;  \
		return body_args;                               \
	}                                                       \
	SEC("raw_tp/" #tp)                                      \
	int BPF_PROG(raw_##tp, ##__VA_ARGS__)                   \
	{                                                       \
		const bool BTF __attribute__((unused)) = false; \
		return body_args;                               \
	}

TWIN(sched_switch, on_switch(ctx, preempt, prev, next, BTF), bool preempt,
     struct task_struct *prev, struct task_struct *next)
TWIN(sched_waking, on_wake(p, CTXSW_WAKING, BTF), struct task_struct *p)
TWIN(sched_wakeup, on_wake(p, CTXSW_WAKEUP, BTF), struct task_struct *p)
TWIN(sched_wakeup_new, on_wake(p, CTXSW_WAKEUP_NEW, BTF),
     struct task_struct *p)
TWIN(sched_migrate_task, on_migrate(p, dest_cpu), struct task_struct *p,
     int dest_cpu)
TWIN(sched_process_fork, on_fork(parent, child), struct task_struct *parent,
     struct task_struct *child)
TWIN(sched_process_exec, on_exec(p, old_pid), struct task_struct *p,
     int old_pid)
TWIN(sched_process_exit, on_exit(ctx, p), struct task_struct *p)
TWIN(sched_process_free, on_free(p), struct task_struct *p)
TWIN(irq_handler_entry, on_irq(CTXSW_IRQ_ENTRY, irq, 0), int irq)
TWIN(irq_handler_exit, on_irq(CTXSW_IRQ_EXIT, irq, ret), int irq, void *action,
     int ret)
TWIN(softirq_entry, on_irq(CTXSW_SOFTIRQ_ENTRY, (int)vec, 0), unsigned int vec)
TWIN(softirq_exit, on_irq(CTXSW_SOFTIRQ_EXIT, (int)vec, 0), unsigned int vec)
TWIN(hrtimer_expire_entry, on_hrtimer(t, true), struct hrtimer *t)
TWIN(hrtimer_expire_exit, on_hrtimer(t, false), struct hrtimer *t)
TWIN(sys_enter, on_sys(CTXSW_SYS_ENTER, id, 0), struct pt_regs *regs, long id)
TWIN(sys_exit, on_sys(CTXSW_SYS_EXIT, syscall_nr(regs), ret),
     struct pt_regs *regs, long ret)

/* ---- aggregation ---------------------------------------------------- */

/*
 * The per-thread state machine of src/analysis/account.c, run at the
 * tracepoints.  Events of one task can fire on two CPUs at once (a waking
 * takes only the task's pi_lock, its switch-out its rq lock), so every row
 * has a spin lock, and a waking that the lock serialises in the other order
 * than its timestamp is undone to what the time-ordered stream gives.
 * Nothing in a locked region calls a helper: the times, comms and counters
 * are read before.
 */

struct task_info { /* what is read of a task before locking */
	__s32 tid, tgid;
	char comm[CTXSW_COMM_LEN];
};

static __always_inline void read_task(struct task_struct *t,
				      struct task_info *ti)
{
	ti->tid = BPF_CORE_READ(t, pid);
	ti->tgid = BPF_CORE_READ(t, tgid);
	bpf_core_read(ti->comm, sizeof(ti->comm), &t->comm);
}

/*
 * The same for the aggregation programs, which are tp_btf only: there the
 * task is a trusted BTF pointer and its fields are plain loads (with CO-RE
 * offsets), not a bpf_probe_read_kernel() call each, which is most of the
 * cost of a program this size.
 */
static __always_inline void read_task_btf(struct task_struct *t,
					  struct task_info *ti)
{
	ti->tid = t->pid;
	ti->tgid = t->tgid;
	__builtin_memcpy(ti->comm, t->comm, sizeof(ti->comm));
}

static __always_inline void count_dropped(void)
{
	struct ctxsw_cpu *c = this_cpu();

	if (c)
		__sync_fetch_and_add(&c->rows_dropped, 1);
}

/* The live row of @tid, created (all zero, tid 0) when missing. */
static __always_inline struct ctxsw_row *row_get(__u32 tid, bool create)
{
	struct ctxsw_row *r = bpf_map_lookup_elem(&rows, &tid);
	const struct ctxsw_row_blob *z;

	if (r || !create)
		return r;
	z = bpf_map_lookup_elem(&row_zero, &zero);
	if (!z)
		return NULL;
	/* -EEXIST: another CPU created it first, fine */
	bpf_map_update_elem(&rows, &tid, z, BPF_NOEXIST);
	r = bpf_map_lookup_elem(&rows, &tid);
	if (!r)
		count_dropped();
	return r;
}

/*
 * Move a dead row to dead_rows, where a new task with its tid cannot touch
 * it.  Copied by hand past the lock into a blob: no helper may read a
 * value that holds a spin lock.  Only sched_switch (irqs off), fork and
 * exec bury, and none of them nests in another on one CPU, so one per-CPU
 * copy buffer is enough.
 */
static __always_inline void row_bury(__u32 tid, struct ctxsw_row *r, __u64 ts)
{
	struct ctxsw_dead_key k = { .ts = ts, .tid = tid };
	struct ctxsw_row_blob *b = bpf_map_lookup_elem(&row_copy, &zero);

	if (b) {
		b->w[0] = 0;
		for (int i = 1; i < sizeof(b->w) / sizeof(b->w[0]); i++)
			b->w[i] = ((__u64 *)r)[i];
		if (bpf_map_update_elem(&dead_rows, &k, b, BPF_NOEXIST))
			count_dropped();
	} else {
		count_dropped();
	}
	bpf_map_delete_elem(&rows, &tid);
}

/* First use of a row created by row_get() (under its lock). */
static __always_inline void row_init(struct ctxsw_row *r,
				     const struct task_info *ti)
{
	if (r->tid)
		return;
	r->tid = ti->tid;
	r->ppid = -1;
	r->cpu = -1;
	r->lat.max_waker_tid = -1;
	r->lat.max_cpu = -1;
	r->lat.max_prev_tid = -1;
}

static __always_inline void row_learn(struct ctxsw_row *r,
				      const struct task_info *ti)
{
	row_init(r, ti);
	if (ti->tgid > 0)
		r->tgid = ti->tgid;
	__builtin_memcpy(r->comm, ti->comm, sizeof(r->comm));
}

static __always_inline bool row_alive(const struct ctxsw_row *r)
{
	return r->state != CTXSW_ST_NEW && r->state != CTXSW_ST_DEAD;
}

static __always_inline void row_start(struct ctxsw_row *r, __u8 state, __u64 ts)
{
	r->first_ts = r->last_ts = r->state_ts = ts;
	r->state = state;
}

/* Charge the time since the last change to the current state.  A time
 * older than the state (another CPU's event that lost the race for the
 * lock) charges nothing. */
static __always_inline void row_advance(struct ctxsw_row *r, __u64 ts)
{
	__u64 d;

	if (!row_alive(r))
		return;
	if (ts < r->state_ts)
		return;
	d = ts - r->state_ts;
	if (r->state == CTXSW_ST_RUNNING) {
		r->run_ns += d;
	} else if (r->state == CTXSW_ST_RUNNABLE) {
		r->wait_ns += d;
	} else {
		__u32 i = r->sleep_idx;

		if (i > 2)
			i = 2;
		/* Bound the index in the register that indexes: clang may
		 * compare a 32-bit copy, whose bounds older verifiers do not
		 * carry back (Debian's 6.1 refused exec's program: "R3 max
		 * value is outside of the allowed memory range").  The mask
		 * is opaque to clang and a no-op at run time. */
		barrier_var(i);
		i &= 3;
		r->sleep_ns[i] += d;
	}
	r->state_ts = ts;
	r->last_ts = ts;
}

static __always_inline void row_end(struct ctxsw_row *r, __u64 ts)
{
	row_advance(r, ts);
	r->state = CTXSW_ST_DEAD;
	r->exited = 1;
	r->cpu = -1;
	r->flags = 0;
}

static __always_inline void lat_begin(struct ctxsw_row *r, __u64 ts,
				      __s32 waker)
{
	r->flags |= CTXSW_RF_LAT_PENDING;
	r->lat_ts = ts;
	r->lat_waker = waker < 0 ? -1 : waker;
}

/* floor(log2(d)) for d > 0, without a loop (none in a locked region) */
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

static __always_inline void lat_end(struct ctxsw_row *r, __u64 ts, __s32 cpu,
				    __s32 prev_tid)
{
	__u64 d = ts > r->lat_ts ? ts - r->lat_ts : 0;
	__u32 b = d ? log2_u64(d) : 0;

	if (b >= CTXSW_HIST_BUCKETS)
		b = CTXSW_HIST_BUCKETS - 1;
	r->lat.count++;
	r->lat.sum_ns += d;
	r->lat.hist[b & 63]++;
	if (r->lat.count == 1 || d > r->lat.max_ns) {
		r->lat.max_ns = d;
		r->lat.max_ts = ts;
		r->lat.max_waker_tid = r->lat_waker;
		r->lat.max_cpu = cpu;
		r->lat.max_prev_tid = prev_tid;
	}
	r->flags &= ~CTXSW_RF_LAT_PENDING;
}

static __always_inline __u8 sleep_class(__u32 state)
{
	if (state & CTXSW_STATE_S)
		return 0;
	if (state & CTXSW_STATE_D)
		return 1;
	return 2;
}

struct sw_out { /* prev's side of a switch */
	__u64 ts;
	__u64 nv, niv; /* its counters, the kernel's increment in */
	__u32 state; /* enum ctxmon_task_state bits */
	bool preempt;
	bool after_fold; /* a non-leader whose counters exit has folded */
};

/* Returns the switch kind used, +8 when it had to be guessed. */
static __always_inline __u32 row_switch_out(struct ctxsw_row *r,
					    const struct sw_out *o)
{
	__u64 ts = o->ts;
	__u32 kind, guessed = 0;

	if (o->state & (CTXSW_STATE_X | CTXSW_STATE_Z)) {
		kind = CTXSW_KIND_EXIT;
	} else if (r->csw_valid && o->nv != r->nvcsw && o->niv == r->nivcsw) {
		kind = CTXSW_KIND_VOLUNTARY;
	} else if (r->csw_valid && o->niv != r->nivcsw && o->nv == r->nvcsw) {
		kind = CTXSW_KIND_INVOLUNTARY;
	} else {
		kind = o->preempt || !o->state ? CTXSW_KIND_INVOLUNTARY :
						 CTXSW_KIND_VOLUNTARY;
		guessed = 8;
	}
	/* the counters after this switch are the base for the next one,
	 * even if its switch-in goes unseen */
	r->nvcsw = o->nv;
	r->nivcsw = o->niv;
	r->csw_valid = 1;

	if (r->state == CTXSW_ST_NEW)
		row_start(r, CTXSW_ST_RUNNING, ts);
	else
		row_advance(r, ts);
	r->switch_out++;
	if (kind == CTXSW_KIND_VOLUNTARY) {
		r->voluntary++;
	} else if (kind == CTXSW_KIND_INVOLUNTARY) {
		r->involuntary++;
		if (o->after_fold)
			r->after_fold++;
	} else {
		r->exit_switch++;
		if (o->state & CTXSW_STATE_Z)
			r->exit_counted++;
	}
	if (kind == CTXSW_KIND_EXIT) {
		row_end(r, ts);
		return kind | guessed;
	}
	r->cpu = -1;
	r->flags &= ~CTXSW_RF_LAT_PENDING;
	if (kind == CTXSW_KIND_VOLUNTARY && !o->preempt && o->state) {
		if (!(r->flags & CTXSW_RF_EARLY_WAKE)) {
			r->state = CTXSW_ST_SLEEP;
			r->sleep_idx = sleep_class(o->state);
		} else if (r->early_ts > ts) {
			/* the waking came after this switch-out in time: it
			 * slept until then, as the ordered stream says */
			r->state = CTXSW_ST_SLEEP;
			r->sleep_idx = sleep_class(o->state);
			row_advance(r, r->early_ts);
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, r->early_ts, r->early_waker);
		} else {
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, ts, r->early_waker);
		}
	} else {
		r->state = CTXSW_ST_RUNNABLE;
	}
	r->flags &= ~CTXSW_RF_EARLY_WAKE;
	return kind | guessed;
}

static __always_inline void row_switch_in(struct ctxsw_row *r, __u64 ts,
					  __s32 cpu, __s32 prev_tid, __u64 nv,
					  __u64 niv)
{
	if (r->state == CTXSW_ST_NEW)
		row_start(r, CTXSW_ST_RUNNING, ts);
	else
		row_advance(r, ts);
	if (r->flags & CTXSW_RF_LAT_PENDING)
		lat_end(r, ts, cpu, prev_tid);
	r->switch_in++;
	r->state = CTXSW_ST_RUNNING;
	r->cpu = cpu;
	r->nvcsw = nv;
	r->nivcsw = niv;
	r->csw_valid = 1;
}

static __always_inline void row_waking(struct ctxsw_row *r, __u64 ts,
				       __s32 waker)
{
	r->wakeups++;
	r->flags |= CTXSW_RF_WAKED;
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNABLE, ts);
		lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_SLEEP) {
		if (ts < r->state_ts) {
			/* it fired before the switch-out that put the task
			 * to sleep (that CPU won the lock): in time order it
			 * was an early wake, waiting from the switch-out */
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, r->state_ts, waker);
		} else {
			row_advance(r, ts);
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, ts, waker);
		}
	} else if (r->state == CTXSW_ST_RUNNING && ts >= r->state_ts) {
		/* it will sleep at once, already woken, or it is woken
		 * before it left: the wakeup that follows tells which */
		r->flags |= CTXSW_RF_EARLY_WAKE;
		r->early_waker = waker < 0 ? -1 : waker;
		r->early_ts = ts;
	}
}

static __always_inline void row_wakeup(struct ctxsw_row *r, __u64 ts)
{
	if (r->flags & CTXSW_RF_WAKED) {
		r->flags &= ~CTXSW_RF_WAKED;
		if (r->state == CTXSW_ST_RUNNING)
			r->flags &= ~CTXSW_RF_EARLY_WAKE;
		return;
	}
	r->wakeups++;
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNABLE, ts);
		lat_begin(r, ts, -1);
	} else if (r->state == CTXSW_ST_SLEEP) {
		row_advance(r, ts);
		r->state = CTXSW_ST_RUNNABLE;
		lat_begin(r, ts, -1);
	}
}

static __always_inline void row_wakeup_new(struct ctxsw_row *r, __u64 ts,
					   __s32 waker)
{
	r->wakeups++;
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNABLE, ts);
		lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_RUNNABLE) {
		if (!(r->flags & CTXSW_RF_LAT_PENDING))
			lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_SLEEP) {
		row_advance(r, ts);
		r->state = CTXSW_ST_RUNNABLE;
		lat_begin(r, ts, waker);
	}
}

static __always_inline void agg_cpu_switch(__u64 ts, __s32 next_tid)
{
	struct ctxsw_cpu *c = this_cpu();
	struct ctxsw_cpu_agg *a;

	if (!c)
		return;
	a = &c->agg;
	if (a->in_span) {
		__u64 d = ts > a->state_ts ? ts - a->state_ts : 0;

		if (a->cur == 0)
			a->idle_ns += d;
		else
			a->busy_ns += d;
		a->state_ts = a->last_ts = ts;
	} else {
		a->in_span = 1;
		a->first_ts = a->last_ts = a->state_ts = ts;
	}
	a->cur = next_tid;
	a->switches++;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(agg_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct sw_out o = { .preempt = preempt };
	struct task_info pi, ni;
	struct ctxsw_row *r;
	__s32 cpu;
	__u64 nnv, nniv;
	__u32 raw, kind = 0;

	if (!cpu_selected())
		return 0;
	o.ts = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	if (sw_state_arg)
		raw = (__u32)ctx[3];
	else
		raw = task_state_raw(prev);
	o.state = preempt ? 0 : report_state(raw, prev->exit_state);
	read_task_btf(prev, &pi);
	read_task_btf(next, &ni);
	agg_cpu_switch(o.ts, ni.tid);
	irq_reset();
	o.after_fold = prev->exit_state && pi.tid != pi.tgid;

	if (pi.tid > 0 && (!filtering() || task_selected(prev))) {
		o.nv = prev->nvcsw;
		o.niv = prev->nivcsw;
		r = row_get(pi.tid, true);
		if (r) {
			bpf_spin_lock(&r->lock);
			row_learn(r, &pi);
			kind = row_switch_out(r, &o);
			bpf_spin_unlock(&r->lock);
			if ((kind & 7) == CTXSW_KIND_EXIT)
				row_bury(pi.tid, r, o.ts);
			if (kind & 8) {
				struct ctxsw_cpu *c = this_cpu();

				if (c)
					c->inexact++;
			}
		}
	}
	if (ni.tid > 0 && (!filtering() || task_selected(next))) {
		nnv = next->nvcsw;
		nniv = next->nivcsw;
		r = row_get(ni.tid, true);
		if (r) {
			bpf_spin_lock(&r->lock);
			row_learn(r, &ni);
			row_switch_in(r, o.ts, cpu, pi.tid, nnv, nniv);
			bpf_spin_unlock(&r->lock);
		}
	}
	return 0;
}

/* The row of @p for an event, after the filters; NULL to ignore it. */
static __always_inline struct ctxsw_row *agg_row(struct task_struct *p,
						 struct task_info *ti)
{
	if (!cpu_selected())
		return NULL;
	if (filtering() && !task_selected(p))
		return NULL;
	read_task_btf(p, ti);
	if (ti->tid <= 0)
		return NULL;
	return row_get(ti->tid, true);
}

static __always_inline int agg_wake(struct task_struct *p, __u8 type)
{
	__u64 ts = bpf_ktime_get_ns();
	__s32 waker = (__s32)(__u32)bpf_get_current_pid_tgid();
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (!r)
		return 0;
	bpf_spin_lock(&r->lock);
	row_learn(r, &ti);
	if (type == CTXSW_WAKING)
		row_waking(r, ts, waker);
	else if (type == CTXSW_WAKEUP)
		row_wakeup(r, ts);
	else
		row_wakeup_new(r, ts, waker);
	bpf_spin_unlock(&r->lock);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(agg_sched_waking, struct task_struct *p)
{
	return agg_wake(p, CTXSW_WAKING);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(agg_sched_wakeup, struct task_struct *p)
{
	return agg_wake(p, CTXSW_WAKEUP);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(agg_sched_wakeup_new, struct task_struct *p)
{
	return agg_wake(p, CTXSW_WAKEUP_NEW);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(agg_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (!r)
		return 0;
	bpf_spin_lock(&r->lock);
	row_learn(r, &ti);
	r->migrations++;
	bpf_spin_unlock(&r->lock);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(agg_sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	__u64 ts = bpf_ktime_get_ns();
	bool sel = fork_follow(parent, child);
	__s32 ppid = BPF_CORE_READ(parent, tgid);
	struct task_info ti;
	struct ctxsw_row *r;
	bool reuse = false;

	if (!cpu_selected() || !sel || (cg_id && !task_selected(child)))
		return 0;
	read_task(child, &ti);
	if (ti.tid <= 0)
		return 0;
	r = row_get(ti.tid, false);
	if (r) {
		/* a row only declared (state never seen) is this child;
		 * anything else had this tid before and died unseen */
		bpf_spin_lock(&r->lock);
		if (r->state == CTXSW_ST_NEW && !r->exited && !r->migrations)
			reuse = true;
		else if (row_alive(r))
			row_end(r, ts);
		bpf_spin_unlock(&r->lock);
		if (!reuse)
			row_bury(ti.tid, r, ts);
	}
	r = row_get(ti.tid, true);
	if (!r)
		return 0;
	bpf_spin_lock(&r->lock);
	row_learn(r, &ti);
	r->ppid = ppid;
	row_start(r, CTXSW_ST_RUNNABLE, ts);
	bpf_spin_unlock(&r->lock);
	return 0;
}

struct inflight { /* the part of a row that says what it does */
	__u64 lat_ts, early_ts, nvcsw, nivcsw;
	__s32 lat_waker, early_waker, cpu;
	__u32 csw_valid;
	__u8 state, sleep_idx, flags;
};

/*
 * A non-leader thread exec'd: the kernel gave it the leader's tid.  It
 * goes on as a new row under that tid, from now on, in the state it was
 * in; its old row ends here (account.c's exec_takeover()).
 */
static __always_inline void agg_takeover(struct task_info *ti, __u32 old_pid,
					 __u64 ts)
{
	struct ctxsw_row *o = row_get(old_pid, false), *l, *n;
	struct inflight st = {};
	bool alive = false;
	__u32 tid = ti->tid;

	if (o) {
		bpf_spin_lock(&o->lock);
		alive = row_alive(o);
		if (o->tgid <= 0)
			o->tgid = tid;
		if (alive) {
			row_advance(o, ts);
			st.state = o->state;
			st.sleep_idx = o->sleep_idx;
			st.flags = o->flags;
			st.cpu = o->cpu;
			st.lat_ts = o->lat_ts;
			st.lat_waker = o->lat_waker;
			st.early_ts = o->early_ts;
			st.early_waker = o->early_waker;
			st.csw_valid = o->csw_valid;
			st.nvcsw = o->nvcsw;
			st.nivcsw = o->nivcsw;
		}
		row_end(o, ts);
		bpf_spin_unlock(&o->lock);
		row_bury(old_pid, o, ts);
	}
	l = row_get(tid, false);
	if (l) {
		bpf_spin_lock(&l->lock);
		if (row_alive(l))
			row_end(l, ts);
		bpf_spin_unlock(&l->lock);
		row_bury(tid, l, ts);
	}
	n = row_get(tid, true);
	if (!n)
		return;
	bpf_spin_lock(&n->lock);
	row_learn(n, ti);
	n->tgid = tid;
	if (alive) {
		row_start(n, st.state, ts);
		n->sleep_idx = st.sleep_idx;
		n->flags = st.flags;
		n->cpu = st.cpu;
		n->lat_ts = st.lat_ts;
		n->lat_waker = st.lat_waker;
		n->early_ts = st.early_ts;
		n->early_waker = st.early_waker;
		n->csw_valid = st.csw_valid;
		n->nvcsw = st.nvcsw;
		n->nivcsw = st.nivcsw;
	}
	bpf_spin_unlock(&n->lock);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(agg_sched_process_exec, struct task_struct *p, int old_pid)
{
	__u64 ts = bpf_ktime_get_ns();
	struct task_info ti;
	struct ctxsw_row *r;

	if (!cpu_selected() || (filtering() && !task_selected(p)))
		return 0;
	read_task(p, &ti);
	if (ti.tid <= 0)
		return 0;
	if (old_pid > 0 && old_pid != ti.tid)
		agg_takeover(&ti, old_pid, ts);
	r = row_get(ti.tid, true);
	if (!r)
		return 0;
	bpf_spin_lock(&r->lock);
	row_learn(r, &ti);
	bpf_spin_unlock(&r->lock);
	return 0;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(agg_sched_process_free, struct task_struct *p)
{
	return on_free(p);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(agg_sched_process_exit, struct task_struct *p)
{
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (!r)
		return 0;
	bpf_spin_lock(&r->lock);
	row_learn(r, &ti);
	r->exited = 1;
	bpf_spin_unlock(&r->lock);
	return 0;
}
