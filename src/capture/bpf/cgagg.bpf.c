// SPDX-License-Identifier: GPL-2.0
/*
 * cgagg.bpf.c - per-cgroup and per-process scheduler aggregation, for
 * `ctxmon serve` (loader: src/capture/cgagg.c).
 *
 * At the sched tracepoints the programs add into bounded hash maps, keyed
 * by cgroup v2 id and by tgid: switches by kind and cause, run / runnable
 * wait / sleep time, migrations, wakeups, and a wakeup latency histogram
 * charged to the wakee (the task switched in), whatever cgroup woke it.
 * A per-CPU history of which cgroup ran (the last CGAGG_SLICES slices, one
 * per run of a cgroup's tasks) lets the
 * switch-in of a task that waited runnable charge that wait, slice by
 * slice, to the cgroups whose tasks ran on the CPU meanwhile: the noisy
 * neighbour pairs (victim, culprit).  Nothing is sent per event.
 *
 * Voluntary or involuntary: the kernel has added one to prev's nvcsw or
 * nivcsw before the tracepoint; the counter that moved since we last saw
 * the task (switch-in or previous switch-out) is the kernel's own verdict
 * (as ctxsw.bpf.c does).  A task not seen before is classified from the
 * state and counted as inexact.
 *
 * Every program exists as tp_btf and as raw_tp; both call one inline body
 * that reads the tasks with plain loads in the tp_btf set and with
 * BPF_CORE_READ in the raw_tp one (TREAD, kernel.bpf.h; a probe read
 * each cost ~25 ns, and a switch reads some fifteen fields), and the
 * loader keeps one set.  Only the tp_btf set can reach a blocked task's
 * registers (bpf_task_pt_regs) to tell which syscall it blocked in.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cgagg.h"
#include "kernel.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool sw_state_arg = false; /* sched_switch has prev_state */
const volatile __u32 nfilter = 0; /* cgroups in cg_filter, 0: any task */
/* Tests: every switch from a task not selected to one selected is left
 * out, as the kernel leaves some out (on_switch()), so that the rules for
 * a switch-in unseen run on any machine (CTXMON_CGAGG_UNSEEN_IN=1). */
const volatile bool test_unseen_in = false;

#define PF_KTHREAD 0x00200000

/* ---- maps (sizes set by the loader) ---------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct cgagg_stats);
} cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct cgagg_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cgagg_pair);
	__type(value, __u64);
} pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct cgagg_task);
} tasks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgagg_cpu);
} cpus SEC(".maps");

/* cgroup ids whose tasks (and their descendants' tasks) are selected */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u8);
} cg_filter SEC(".maps");

/* syscall number -> CGAGG_CAUSE_* of a voluntary switch inside it */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CGAGG_SYSCALLS);
	__type(key, __u32);
	__type(value, __u8);
} sysclass SEC(".maps");

/* an all-zero value to create rows from (too big for the stack) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cgagg_proc);
} zero_row SEC(".maps");

static const __u32 zero;

/* ---- helpers ----------------------------------------------------------- */

static __always_inline struct cgagg_cpu *this_cpu(void)
{
	return bpf_map_lookup_elem(&cpus, &zero);
}

static __always_inline __u64 task_cgid(struct task_struct *t, bool btf)
{
	/* tp_btf: pointer loads past the trusted task are checked loads
	 * (a NULL or bad pointer reads 0), as a probe read would */
	if (btf)
		return t->cgroups->dfl_cgrp->kn->id;
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* Whether @t is in one of the --cgroup directories or below. */
static __always_inline bool selected(struct task_struct *t)
{
	struct cgroup *cg;
	int level;

	if (!nfilter)
		return true;
	cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	if (!cg)
		return false;
	level = BPF_CORE_READ(cg, level);
	for (int i = 0; i < 32; i++) {
		__u64 id;

		if (i > level)
			break;
		id = cgroup_ancestor_id(cg, i);
		if (id && bpf_map_lookup_elem(&cg_filter, &id))
			return true;
	}
	return false;
}

/* The bucket whose inclusive upper bound 2^i ns holds @d. */
static __always_inline __u32 lat_bucket(__u64 d)
{
	__u32 b = d <= 1 ? 0 : log2_u64(d - 1) + 1;

	return b < CGAGG_HIST ? b : CGAGG_HIST - 1;
}

static __always_inline struct cgagg_stats *cg_row(__u64 cgid)
{
	struct cgagg_stats *s = bpf_map_lookup_elem(&cgroups, &cgid);
	const struct cgagg_proc *z;
	struct cgagg_cpu *c;
	__u64 over = 0;

	if (s)
		return s;
	z = bpf_map_lookup_elem(&zero_row, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&cgroups, &cgid, z, BPF_NOEXIST);
	s = bpf_map_lookup_elem(&cgroups, &cgid);
	if (s)
		return s;
	c = this_cpu();
	if (c)
		c->cg_overflow++;
	return bpf_map_lookup_elem(&cgroups, &over);
}

static __always_inline struct cgagg_proc *proc_row(__u32 tgid)
{
	struct cgagg_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	const struct cgagg_proc *z;
	struct cgagg_cpu *c;
	__u32 over = 0;

	if (p)
		return p;
	z = bpf_map_lookup_elem(&zero_row, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&procs, &tgid, z, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		return p;
	c = this_cpu();
	if (c)
		c->proc_overflow++;
	return bpf_map_lookup_elem(&procs, &over);
}

/*
 * The accounting itself is in global (__noinline, non-static) functions
 * with scalar arguments: the verifier checks each once, instead of once
 * per combination of constants (switch kind, cause) along the callers'
 * paths, which would exceed its budget.
 */
struct rows {
	struct cgagg_stats *cg;
	struct cgagg_stats *proc;
};

static __always_inline void rows_get(__u64 cgid, __u32 tgid, struct rows *r)
{
	struct cgagg_proc *p;

	r->cg = cg_row(cgid);
	p = proc_row(tgid);
	r->proc = p ? &p->s : NULL;
	if (p && !p->comm[0])
		bpf_get_current_comm(p->comm, sizeof(p->comm));
	if (p)
		p->cgid = cgid;
}

#define ADD(field, v)                                                  \
	do {                                                           \
		if (r.cg)                                              \
			__sync_fetch_and_add(&r.cg->field, (v));       \
		if (r.proc)                                            \
			__sync_fetch_and_add(&r.proc->field, (v));     \
	} while (0)

/* A switch-out of a task of @cgid / @tgid; current is that task. */
__noinline int acct_out(__u64 cgid, __u32 tgid, __u32 kind, __u32 cause,
			__u64 run_ns)
{
	struct rows r;

	rows_get(cgid, tgid, &r);
	if (kind < CGAGG_KINDS)
		ADD(sw[kind], 1);
	if (cause < CGAGG_CAUSES)
		ADD(cause[cause], 1);
	if (run_ns)
		ADD(run_ns, run_ns);
	return 0;
}

/* A switch-in after @wait_ns runnable (or @sleep_ns asleep, its waking
 * unseen), ending a wakeup latency of @lat1 - 1 ns (0: none). */
__noinline int acct_in(__u64 cgid, __u32 tgid, __u64 wait_ns, __u64 sleep_ns,
		       __u64 lat1)
{
	__u64 lat_ns = lat1 - 1;
	struct rows r = {};
	__u32 b;

	r.cg = cg_row(cgid);
	{
		struct cgagg_proc *p = proc_row(tgid);

		r.proc = p ? &p->s : NULL;
	}
	if (wait_ns)
		ADD(wait_ns, wait_ns);
	if (sleep_ns)
		ADD(sleep_ns, sleep_ns);
	if (lat1) {
		b = lat_bucket(lat_ns);
		ADD(lat_count, 1);
		ADD(lat_sum_ns, lat_ns);
		if (b < CGAGG_HIST)
			ADD(lat_hist[b], 1);
	}
	return 0;
}

/* A waking (after @sleep_ns asleep) or a migration. */
__noinline int acct_wake(__u64 cgid, __u32 tgid, __u64 sleep_ns,
			 __u32 migrate)
{
	struct rows r = {};

	r.cg = cg_row(cgid);
	{
		struct cgagg_proc *p = proc_row(tgid);

		r.proc = p ? &p->s : NULL;
	}
	if (migrate) {
		ADD(migrations, 1);
		return 0;
	}
	ADD(wakeups, 1);
	if (sleep_ns)
		ADD(sleep_ns, sleep_ns);
	return 0;
}

static __always_inline struct cgagg_task *task_get(__u32 tid, bool create)
{
	struct cgagg_task *tk = bpf_map_lookup_elem(&tasks, &tid);
	struct cgagg_task z = {};

	if (tk || !create)
		return tk;
	bpf_map_update_elem(&tasks, &tid, &z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&tasks, &tid);
}

/* Class of the syscall @t blocked in (tp_btf: its registers are reachable). */
static __always_inline __u32 block_cause(struct task_struct *t, bool btf)
{
	long nr = -1;
	__u32 key;
	__u8 *cls;

	if (TREAD(btf, t, flags) & PF_KTHREAD)
		return CGAGG_CAUSE_KTHREAD;
	if (!btf)
		return CGAGG_CAUSE_BLOCKED;
	{
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

		if (!regs)
			return CGAGG_CAUSE_BLOCKED;
#if defined(__TARGET_ARCH_x86)
		nr = regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
		nr = regs->syscallno;
#endif
	}
	if (nr < 0 || nr >= CGAGG_SYSCALLS)
		return CGAGG_CAUSE_BLOCKED;
	key = (__u32)nr;
	cls = bpf_map_lookup_elem(&sysclass, &key);
	return cls ? *cls : CGAGG_CAUSE_SYSCALL_OTHER;
}

static __always_inline void pair_add(__u64 victim, __u64 culprit, __u64 ns,
				     struct cgagg_cpu *c)
{
	struct cgagg_pair k = { .victim = victim, .culprit = culprit };
	__u64 *v = bpf_map_lookup_elem(&pairs, &k), nil = 0;

	if (!v) {
		bpf_map_update_elem(&pairs, &k, &nil, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&pairs, &k);
		if (!v) {
			c->pair_overflow++;
			k.victim = k.culprit = 0;
			v = bpf_map_lookup_elem(&pairs, &k);
		}
	}
	if (v)
		__sync_fetch_and_add(v, ns);
}

/* Charge the wait [from, to] of a task of @victim on this CPU to the
 * cgroups of the run slices that overlap it, newest first. */
__noinline int charge_wait(__u64 victim, __u64 from, __u64 to)
{
	struct cgagg_cpu *c = this_cpu();
	__u64 covered = from;
	__u32 head;

	if (!c)
		return 0;
	head = c->head;

	for (int i = 0; i < CGAGG_SLICES; i++) {
		struct cgagg_slice *s;
		__u64 a, b;

		s = &c->slices[(head - 1 - i) & (CGAGG_SLICES - 1)];
		if (!s->end || s->end <= from)
			break;
		a = s->start > from ? s->start : from;
		b = s->end < to ? s->end : to;
		if (s->cgid && b > a)
			pair_add(victim, s->cgid, b - a, c);
		covered = s->start;
		if (s->start <= from)
			break;
	}
	if (covered > from)
		c->wait_unattributed += covered - from;
	return 0;
}

/* ---- bodies ---------------------------------------------------------- */

/* The CPU ran cgroup @cg (@idle: nothing) from @from to @to. */
static __always_inline void slice_close(struct cgagg_cpu *c, __u64 cg,
					__u32 idle, __u64 from, __u64 to)
{
	__u32 h = c->head & (CGAGG_SLICES - 1);
	__u32 last = (c->head - 1) & (CGAGG_SLICES - 1);

	if (idle)
		c->idle_ns += to - from;
	else
		c->busy_ns += to - from;
	/* consecutive runs of one cgroup are one slice: the history then
	 * spans many switches among a cgroup's own tasks */
	if (c->slices[last].end == from && c->slices[last].cgid == cg &&
	    c->slices[last].end) {
		c->slices[last].end = to;
	} else {
		c->slices[h].cgid = cg;
		c->slices[h].start = from;
		c->slices[h].end = to;
		c->head = h + 1;
	}
}

/* Task @tk of cgroup @cg, process @tgid, switched in at @ts: its runnable
 * wait (or its sleep, its waking unseen) and wakeup latency end there. */
static __always_inline void task_in(struct cgagg_task *tk, __u64 cg,
				    __u32 tgid, __u64 ts)
{
	__u64 wait = 0, sleep = 0, lat = 0;
	__u32 has_lat = 0;

	if (tk->state == CGAGG_T_RUNNABLE && ts > tk->state_ts) {
		wait = ts - tk->state_ts;
		charge_wait(cg, tk->state_ts, ts);
	} else if (tk->state == CGAGG_T_SLEEPING && ts > tk->state_ts) {
		/* its waking went unseen */
		sleep = ts - tk->state_ts;
	}
	if (tk->wake_ts && ts >= tk->wake_ts) {
		lat = ts - tk->wake_ts;
		has_lat = 1;
	}
	acct_in(cg, tgid, wait, sleep, has_lat ? lat + 1 : 0);
	tk->state = CGAGG_T_RUNNING;
	tk->state_ts = ts;
	tk->wake_ts = 0;
	tk->early_wake = 0;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, __u32 prev_state,
				     bool btf)
{
	__u64 ts = bpf_ktime_get_ns();
	struct cgagg_cpu *c = this_cpu();
	__u32 ptid = TREAD(btf, prev, pid);
	__u32 ntid = TREAD(btf, next, pid);
	__u64 ncg = ntid ? task_cgid(next, btf) : 0;
	struct cgagg_task *tk, *ntk = NULL;
	bool next_woken = false;

	if (test_unseen_in && !(ptid && selected(prev)) && ntid &&
	    selected(next))
		return 0;
	if (!c)
		return 0;
	/*
	 * Close the run slice of prev on this CPU.  sched_switch does not
	 * fire for every switch: on 6.18 in a Firecracker guest, never for
	 * one away from some threads of PID 1, so those seem to run on and
	 * the task switched to comes on unseen.  When prev is not the task
	 * this CPU last switched to, prev came on unseen, its run in this
	 * slice ago by the kernel's count: the slice is split there.
	 */
	if (c->cur_ts && ts > c->cur_ts) {
		__u64 from = c->cur_ts;
		__u64 s = c->cur_tid != ptid && ptid ? slice_run(prev, btf) : 0;

		if (s) { /* (0: not known, the slice stays the old task's) */
			if (s < ts - from) {
				slice_close(c, c->cur_idle ? 0 : c->cur_cgid,
					    c->cur_idle, from, ts - s);
				from = ts - s;
			}
			c->cur_idle = 0;
			c->cur_cgid = task_cgid(prev, btf);
		}
		slice_close(c, c->cur_idle ? 0 : c->cur_cgid, c->cur_idle,
			    from, ts);
	}
	c->cur_ts = ts;
	c->cur_idle = ntid == 0;
	c->cur_cgid = ncg;
	c->cur_tid = ntid;
	c->switches++;

	if (ntid && selected(next)) {
		ntk = task_get(ntid, true);
		next_woken = ntk && ntk->wake_ts;
	}

	if (ptid && selected(prev)) {
		__u64 nv = TREAD(btf, prev, nvcsw);
		__u64 niv = TREAD(btf, prev, nivcsw);
		__u64 run = 0;
		__u32 kind, cause;
		int moved;

		tk = task_get(ptid, true);
		moved = tk ? csw_moved(tk->csw_valid, tk->nvcsw, tk->nivcsw,
				       nv, niv) : 0;
		/* the last switch-out of a dying task (X, or Z for a leader)
		 * as sched_switch reports it: not any switch once exit_state
		 * is set (on PREEMPT_RT a task is preempted in exit_notify(),
		 * and the kernel counts that switch) */
		if (!preempt &&
		    (report_state(prev_state, TREAD(btf, prev, exit_state)) &
		     (K_TASK_X | K_TASK_Z))) {
			kind = CGAGG_EXIT;
		} else if (moved) {
			kind = moved > 0 ? CGAGG_VOLUNTARY : CGAGG_INVOLUNTARY;
		} else {
			kind = preempt || !(prev_state & 0xff) ?
				       CGAGG_INVOLUNTARY :
				       CGAGG_VOLUNTARY;
			c->inexact++;
		}
		cause = kind == CGAGG_EXIT ? CGAGG_CAUSE_EXIT :
					     block_cause(prev, btf);
		/* involuntary: the preempt flag does not tell a yield (a
		 * task preempted on its way back to user space switches in
		 * schedule() too); its syscall does */
		if (kind == CGAGG_INVOLUNTARY && cause != CGAGG_CAUSE_YIELD)
			cause = next_woken ? CGAGG_CAUSE_WAKEUP_PREEMPT :
					     CGAGG_CAUSE_SLICE;
		if (tk && (tk->state == CGAGG_T_RUNNABLE ||
			   tk->state == CGAGG_T_SLEEPING) && ts > tk->state_ts) {
			/* its switch-in went unseen (on_switch()): it came on
			 * its run in this slice ago, by the kernel's count */
			__u64 s = slice_run(prev, btf);

			if (s > ts - tk->state_ts)
				s = ts - tk->state_ts;
			task_in(tk, task_cgid(prev, btf),
				TREAD(btf, prev, tgid), ts - s);
		}
		if (tk && tk->state == CGAGG_T_RUNNING && ts > tk->state_ts)
			run = ts - tk->state_ts;
		acct_out(task_cgid(prev, btf), TREAD(btf, prev, tgid), kind,
			 cause, run);
		if (tk) {
			if (kind == CGAGG_EXIT) {
				bpf_map_delete_elem(&tasks, &ptid);
			} else {
				tk->state = kind == CGAGG_VOLUNTARY ?
						    CGAGG_T_SLEEPING :
						    CGAGG_T_RUNNABLE;
				tk->wake_ts = 0;
				if (tk->early_wake && kind == CGAGG_VOLUNTARY) {
					/* woken before it got off the CPU */
					tk->state = CGAGG_T_RUNNABLE;
					tk->wake_ts = ts;
				}
				tk->early_wake = 0;
				tk->state_ts = ts;
				tk->nvcsw = nv;
				tk->nivcsw = niv;
				tk->csw_valid = 1;
			}
		}
	}

	if (ntk) {
		task_in(ntk, ncg, TREAD(btf, next, tgid), ts);
		ntk->nvcsw = TREAD(btf, next, nvcsw);
		ntk->nivcsw = TREAD(btf, next, nivcsw);
		ntk->csw_valid = 1;
	}
	return 0;
}

/*
 * A waking (in the waker's context, before the enqueue) starts the wakeup
 * latency; the wakeup (after the enqueue, on the wakee's CPU, perhaps later
 * from an IPI) ends the sleep and starts the runnable wait, where the
 * kernel's own schedstat run_delay starts it too.
 */
static __always_inline int on_waking(struct task_struct *p, bool new_task,
				     bool btf)
{
	__u64 ts = bpf_ktime_get_ns();
	__u32 tid = TREAD(btf, p, pid);
	struct cgagg_task *tk;

	if (!tid || !selected(p))
		return 0;
	tk = task_get(tid, true);
	if (tk) {
		if (new_task || tk->state == CGAGG_T_UNKNOWN) {
			tk->state = CGAGG_T_RUNNABLE;
			tk->state_ts = ts;
			tk->wake_ts = ts;
		} else if (tk->state == CGAGG_T_SLEEPING) {
			tk->wake_ts = ts;
		} else if (tk->state == CGAGG_T_RUNNING) {
			tk->early_wake = 1; /* about to sleep, already woken */
		}
	}
	acct_wake(task_cgid(p, btf), TREAD(btf, p, tgid), 0, 0);
	return 0;
}

static __always_inline int on_wakeup(struct task_struct *p, bool btf)
{
	__u64 ts = bpf_ktime_get_ns(), sleep;
	__u32 tid = TREAD(btf, p, pid);
	struct cgagg_task *tk;

	if (!tid || !selected(p))
		return 0;
	tk = bpf_map_lookup_elem(&tasks, &tid);
	if (!tk || tk->state != CGAGG_T_SLEEPING)
		return 0;
	sleep = ts > tk->state_ts ? ts - tk->state_ts : 0;
	tk->state = CGAGG_T_RUNNABLE;
	tk->state_ts = ts;
	if (!tk->wake_ts)
		tk->wake_ts = ts;
	if (sleep)
		acct_in(task_cgid(p, btf), TREAD(btf, p, tgid), 0, sleep, 0);
	return 0;
}

static __always_inline int on_migrate(struct task_struct *p, bool btf)
{
	if (!TREAD(btf, p, pid) || !selected(p))
		return 0;
	acct_wake(task_cgid(p, btf), TREAD(btf, p, tgid), 0, 1);
	return 0;
}

static __always_inline int on_exit(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct cgagg_proc *row;

	/* do_exit() has dropped signal->live before this tracepoint */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	row = bpf_map_lookup_elem(&procs, &tgid);
	if (row && tgid)
		row->dead_ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_exec(struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct cgagg_proc *row = bpf_map_lookup_elem(&procs, &tgid);

	if (row && tgid)
		bpf_core_read(row->comm, sizeof(row->comm), &p->comm);
	return 0;
}

static __always_inline __u32 state_of(struct task_struct *prev,
				      unsigned long long arg)
{
	if (sw_state_arg)
		return (__u32)arg;
	return task_state_raw(prev);
}

/* ---- tp_btf set -------------------------------------------------------- */

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(preempt, prev, next, state_of(prev, ctx[3]), true);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(btf_waking, struct task_struct *p)
{
	return on_waking(p, false, true);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_wakeup, struct task_struct *p)
{
	return on_wakeup(p, true);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_wakeup_new, struct task_struct *p)
{
	return on_waking(p, true, true);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(btf_migrate, struct task_struct *p)
{
	return on_migrate(p, true);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(btf_exit, struct task_struct *p)
{
	return on_exit(p);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(btf_exec, struct task_struct *p)
{
	return on_exec(p);
}

/* ---- raw_tp set -------------------------------------------------------- */

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(preempt, prev, next, state_of(prev, ctx[3]), false);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(raw_waking, struct task_struct *p)
{
	return on_waking(p, false, false);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p)
{
	return on_wakeup(p, false);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	return on_waking(p, true, false);
}

SEC("raw_tp/sched_migrate_task")
int BPF_PROG(raw_migrate, struct task_struct *p)
{
	return on_migrate(p, false);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(raw_exit, struct task_struct *p)
{
	return on_exit(p);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(raw_exec, struct task_struct *p)
{
	return on_exec(p);
}
