// SPDX-License-Identifier: GPL-2.0
/*
 * ctxsw_stream.bpf.c - the streaming object of the bpf backend: each
 * scheduler (and optionally irq and raw_syscalls) event becomes a compact
 * record (ctxsw.h) in one BPF ring buffer.  Every program exists twice, as
 * tp_btf (typed arguments) and raw_tp; the loader keeps one of each pair
 * with bpf_program__set_autoload().  Both call the same inline bodies,
 * which read task fields with BPF_CORE_READ (or plain loads where the
 * pointer is a trusted BTF one) so they relocate to the running kernel's
 * layout (CO-RE).  What it shares with the aggregation object
 * (ctxsw_agg.bpf.c) is in ctxsw.bpf.h.
 *
 * Voluntary or involuntary: at sched_switch the kernel has already added
 * one to prev's nvcsw or nivcsw.  Each switch record carries both tasks'
 * counters, and user space (bpf_rec.c) remembers a task's from its switch
 * in and each switch out; at its next switch-out, the one that moved is
 * the kernel's own verdict.  That stays right where the tracepoint's state
 * cannot tell (a task that tried to sleep with a signal pending is counted
 * voluntary, and newer kernels show it as R).  Remembering them here
 * instead cost two hash map operations per switch, a third of the
 * program's time.
 */
#include "ctxsw.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- maps of this object ------------------------------------------ */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20); /* resized by the loader */
} events SEC(".maps");

/* ---- records ------------------------------------------------------ */

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
static __always_inline void *rec_reserve_on(struct ctxsw_cpu *c, __u32 size,
					    __u8 type, __u8 flags)
{
	__u64 t = bpf_ktime_get_ns(), pid_tgid, lost;
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

/* The same, for a handler that has not looked up its CPU's state (the
 * switch and wakeup handlers look it up once and pass it around). */
static __always_inline void *rec_reserve(__u32 size, __u8 type, __u8 flags)
{
	return rec_reserve_on(this_cpu(), size, type, flags);
}

/*
 * Commit a record.  The reader is woken only once a quarter of the ring
 * is used (as the perf backend asks of perf): a wakeup per record would
 * cost a context switch of the reader per event, and the reader polls
 * with a timeout anyway.  The fill is read every QUERY_EVERY records of
 * a CPU, not each time: bpf_ringbuf_query() cost ~35 ns a record, a sixth
 * of a recording's in-kernel time (pipe benchmark), and 64 records
 * (~5 KiB) are nothing against a quarter of the ring.
 */
#define QUERY_EVERY 64

static __always_inline void rec_submit_on(struct ctxsw_cpu *c, void *r)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (c && ++c->since_query >= QUERY_EVERY) {
		c->since_query = 0;
		if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >=
		    wake_bytes)
			flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(r, flags);
}

static __always_inline void rec_submit(void *r)
{
	rec_submit_on(this_cpu(), r);
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

static __always_inline __u8 irq_ctx(struct ctxsw_cpu *c)
{
	if (!c)
		return 0;
	if (c->hardirq)
		return CTXSW_F_IN_IRQ;
	return c->softirq ? CTXSW_F_IN_SOFTIRQ : 0;
}

/* ---- event bodies -------------------------------------------------- */

static __always_inline int on_switch(unsigned long long *ctx, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 prev_tid = TREAD(btf, prev, pid);
	__u32 prev_tgid = TREAD(btf, prev, tgid);
	__u32 exit_state = TREAD(btf, prev, exit_state);
	__u32 next_tid = TREAD(btf, next, pid);
	__u32 raw, state;
	__u8 kind = CTXSW_KIND_INVOLUNTARY, flags = 0;
	struct ctxsw_switch *r;
	struct ctxsw_cpu *c;
	__u64 prev_run = 0;

	if (!cpu_selected())
		return 0;
	/* This CPU last switched to another task than prev: prev's
	 * switch-in was never traced (seen on some VMs' kernels after their
	 * init's threads run), and its run since goes in the record.  Kept
	 * up to date ahead of the filters, so that it holds for every
	 * switch they let through. */
	c = this_cpu();
	if (!c)
		return 0;
	if (c->cur_in && c->cur_in != prev_tid + 1)
		prev_run = slice_run(prev, btf);
	c->cur_in = next_tid + 1;
	/* the tracepoint's prev_state (5.18+) is what __schedule decided;
	 * prev->__state may already read TASK_WAKING from a remote waker */
	if (sw_state_arg)
		raw = (__u32)ctx[3];
	else
		raw = task_state_raw(prev);
	state = preempt ? 0 : report_state(raw, exit_state);

	if (filtering() && !task_selected_as(prev, btf) &&
	    !task_selected_as(next, btf))
		return 0;
	/* No switch happens inside an irq handler: a nesting count left up
	 * by an entry whose exit we missed (attached in between) ends here. */
	c->hardirq = c->softirq = 0;

	if (state & (CTXSW_STATE_X | CTXSW_STATE_Z)) {
		kind = CTXSW_KIND_EXIT;
	} else {
		/* rusage will not see a switch after __exit_signal() folded
		 * a thread's counters into its process, or after a leader's
		 * reap read them: exit_side().  User space counts such
		 * switches apart, of either kind, and an unsure one as
		 * exit_preempt. */
		int side = exit_side(prev, prev_tid, prev_tgid, exit_state,
				     btf);

		if (side == FOLD_AFTER)
			flags = CTXSW_F_FOLD_KNOWN | CTXSW_F_AFTER_FOLD;
		else if (side == FOLD_BEFORE)
			flags = CTXSW_F_FOLD_KNOWN;
	}

	r = rec_reserve_on(c, sizeof(*r), CTXSW_SWITCH, flags);
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
	/* the counters, for user space to classify the switch: the
	 * kernel has counted it in prev's already */
	r->prev_nvcsw = TREAD(btf, prev, nvcsw);
	r->prev_nivcsw = TREAD(btf, prev, nivcsw);
	r->next_nvcsw = TREAD(btf, next, nvcsw);
	r->next_nivcsw = TREAD(btf, next, nivcsw);
	/* prev is current, but its tid/tgid in the header come from the
	 * helper; keep them identical to the task we read */
	r->h.tid = prev_tid;
	r->h.tgid = prev_tgid;
	TREAD_COMM(btf, r->prev_comm, prev);
	TREAD_COMM(btf, r->next_comm, next);
	r->prev_run = prev_run;
	rec_submit_on(c, r);
	return 0;
}

const volatile bool wakeup_on_cpu_only = false;

static __always_inline bool woken_on_cpu(struct task_struct *p, bool btf)
{
	if (!bpf_core_field_exists(p->on_cpu))
		return true;
	return TREAD(btf, p, on_cpu) != 0;
}

static __always_inline int on_wake(struct task_struct *p, __u8 type, bool btf)
{
	struct ctxsw_wake *r;
	struct ctxsw_cpu *c;

	if (!cpu_selected())
		return 0;
	if (type == CTXSW_WAKEUP && wakeup_on_cpu_only && !woken_on_cpu(p, btf))
		return 0;
	if (filtering() && !task_selected_as(p, btf) &&
	    !(btf ? task_selected_as(current_task_btf(), true) :
		    task_selected(current_task())))
		return 0;
	c = this_cpu();
	r = rec_reserve_on(c, sizeof(*r), type,
			   type == CTXSW_WAKING ? irq_ctx(c) : 0);
	if (!r)
		return 0;
	r->tid = TREAD(btf, p, pid);
	r->prio = TREAD(btf, p, prio);
	r->target_cpu = task_cpu(p, btf);
	r->pad = 0;
	TREAD_COMM(btf, r->comm, p);
	rec_submit_on(c, r);
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, int dest_cpu)
{
	struct ctxsw_migrate *r;

	if (!cpu_selected())
		return 0;
	if (filtering() && !task_selected(p))
		return 0;
	/* A wake moves its task while the task reads TASK_WAKING: where
	 * it is queued, which sched_wakeup, when not kept, would tell. */
	r = rec_reserve(sizeof(*r), CTXSW_MIGRATE,
			task_state_raw(p) == K_TASK_WAKING ? CTXSW_F_WAKE_MOVE :
							     0);
	if (!r)
		return 0;
	r->tid = BPF_CORE_READ(p, pid);
	r->prio = BPF_CORE_READ(p, prio);
	r->orig_cpu = task_cpu(p, false);
	r->dest_cpu = dest_cpu;
	rec_submit(r);
	return 0;
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
	/* a new process reaped by the forker's parent, not the forker */
	r->flags = r->child_tid == r->child_tgid &&
				   BPF_CORE_READ(child, real_parent, tgid) !=
					   BPF_CORE_READ(parent, tgid) ?
			   CTXSW_FORK_CLONE_PARENT :
			   0;
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

/* A process left unreaped (ctxsw.bpf.h): an ORPHAN record. */
static __always_inline void orphan_found(struct task_struct *c, __s32 tgid,
					 __s32 parent, __u8 why)
{
	struct ctxsw_orphan *r = rec_reserve(sizeof(*r), CTXSW_ORPHAN, 0);

	(void)c;
	if (!r)
		return;
	r->tid = tgid;
	r->parent = parent;
	r->why = why;
	__builtin_memset(r->pad, 0, sizeof(r->pad));
	rec_submit(r);
}

static __always_inline int on_exit(unsigned long long *ctx,
				   struct task_struct *p, const bool loop)
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
	orphans_of_exit(p, group_dead, loop);
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

/* BTF in body_args is true in the tp_btf twin, false in the raw_tp one;
 * programs btf_<name> and raw_<name> */
#define TWIN_AS(name, tp, body_args, ...)                       \
	SEC("tp_btf/" #tp)                                      \
	int BPF_PROG(btf_##name, ##__VA_ARGS__)                 \
	{                                                       \
		const bool BTF __attribute__((unused)) = true;  \
		return body_args;                               \
	}                                                       \
	SEC("raw_tp/" #tp)                                      \
	int BPF_PROG(raw_##name, ##__VA_ARGS__)                 \
	{                                                       \
		const bool BTF __attribute__((unused)) = false; \
		return body_args;                               \
	}
#define TWIN(tp, body_args, ...) TWIN_AS(tp, tp, body_args, ##__VA_ARGS__)

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
/* the loader attaches one of the two: bpf_loop() where the kernel has it
 * (ctxsw.bpf.h, orphans_of_exit()) */
TWIN(sched_process_exit, on_exit(ctx, p, true), struct task_struct *p)
TWIN_AS(sched_process_exit_bounded, sched_process_exit,
	on_exit(ctx, p, false), struct task_struct *p)
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
