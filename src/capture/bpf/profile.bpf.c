// SPDX-License-Identifier: GPL-2.0
/*
 * profile.bpf.c - `ctxmon profile`: a wall-clock profile aggregated in the
 * kernel.
 *
 * On CPU: a perf_event program on each CPU's cpu-clock timer charges the
 * sample period to (thread, kernel stack, user stack); with off_cpu, where
 * sched_switch is traced anyway, it charges instead the thread's exact run
 * time since its previous sample, from the kernel's count (struct
 * prof_run).  Off CPU
 * (off_cpu): at sched_switch the outgoing thread's stacks, its cause
 * (asleep in a syscall, preempted by whom, yield) and the time are kept
 * per thread; sched_waking stamps when it became runnable (and, with
 * wakers, the waker's stacks); at switch-in the interval is charged to
 * (stack, cause): the sleep until the wakeup and the runnable wait after
 * it apart.  Values are nanoseconds; nothing goes to user space per event.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "profile.h"
#include "kernel.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- knobs, set by the loader before load ------------------------ */

const volatile __u32 filter_mode = 0;	/* 0: all, 1: tgids, 2: tids */
const volatile __u64 period_ns = 10101010;
const volatile bool off_cpu = false;
const volatile bool wakers = false;
const volatile __s32 sys_yield_nr = 24;	/* x86_64 sched_yield */
const volatile bool dwarf = false;	/* user stacks copied (PROF_EV_STACK) */
/* The loader's process, never profiled: each of its switch-outs would send
 * a stack copy that wakes it to read the copy, a loop that kept it on CPU
 * (`-a --off-cpu`: 94% of a CPU, all of it its own stacks). */
const volatile __u32 self_tgid = 0;
/* Tests: every switch from a thread not profiled to one profiled is left
 * out, as the kernel leaves some out (run_begin()), so that the rules for
 * a switch-in unseen are run on any machine (CTXMON_PROF_UNSEEN_IN=1). */
const volatile bool test_unseen_in = false;

/* Set by the loader once sched_switch is traced, before the timers run. */
__u64 start_ns = 0;

/* ---- maps ---------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROF_MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct prof_key);
	__type(value, struct prof_val);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct prof_wkey);
	__type(value, struct prof_val);
} wcounts SEC(".maps");

/* A thread off CPU: since when, why, and who woke it. */
struct prof_task {
	__u64 ts, wake_ts;
	__u64 sum;		/* its run count when it left */
	struct prof_key key;
	__u64 seq;		/* dwarf: the stack copy's */
	__u32 waker_tid;
	__s32 waker_kstack, waker_ustack;
	char waker_comm[PROF_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct prof_task);
} tasks SEC(".maps");

/* off_cpu: each targeted thread's run time not yet charged. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct prof_run);
} runs SEC(".maps");

/* The syscall each thread is in (raw_syscalls), absent: none. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __s32);
} insys SEC(".maps");

/* Selected tgids or tids (filter_mode); new processes of selected ones are
 * added at fork, with their start_time, and leave when their leader is
 * freed (prof_free(); ctxsw.bpf.h's targets says why the time).  0: any
 * process with the id (ids from user space). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} targets SEC(".maps");

/* Processes seen, so the loader snapshots each one's mappings once
 * (and again at exec): their tgids go through this ring. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024);
} events SEC(".maps");

/* Sequence numbers of the off-CPU stack copies. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} seqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROF_ST__N);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* A scratch task record (too large for the BPF stack with a key). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prof_task);
} scratch SEC(".maps");

static const struct prof_val zero_val;
static const __u32 zero_key;

/* ---- helpers ------------------------------------------------------ */

static __always_inline void stat_inc(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &i);

	if (v)
		*v += 1;
}

/* Whether task @t (ids @tgid, @tid) is a target. */
static __always_inline bool targeted(struct task_struct *t, __u32 tgid,
				     __u32 tid)
{
	__u32 k = filter_mode == 2 ? tid : tgid;
	__u64 *start;

	if (tid == 0 || (self_tgid && tgid == self_tgid))
		return false;	/* the idle tasks, ctxmon */
	if (!filter_mode)
		return true;
	start = bpf_map_lookup_elem(&targets, &k);
	return start && (!*start ||
			 *start == BPF_CORE_READ(t, group_leader, start_time));
}

static __always_inline struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/*
 * First time a process is seen: the loader reads its mappings.  Without
 * user stacks in the ring (frame pointers), a fork's record wakes nobody:
 * the child's mappings are its parent's until it execs, and the loader
 * copies them if it has gone by then.  A wakeup per fork cost 21.5 us of
 * the program (the irq_work it raises, in a VM), 20,000 wakeups of the
 * loader, and 8% of the samples of a fork loop.  Since the ring wakes its
 * reader only for a record at the reader's position, the records after
 * an unread fork force theirs; with user stacks every record wakes as
 * the ring decides, or the stacks behind a fork would wait for the
 * loader's timeout and fill the ring.
 */
static __always_inline void note_proc2(__u32 tgid, bool force, __u32 parent)
{
	__u64 wake = dwarf ? 0 :
		     parent ? BPF_RB_NO_WAKEUP : BPF_RB_FORCE_WAKEUP;
	__u8 one = 1;
	struct prof_ev_proc *e;

	if (!force && bpf_map_lookup_elem(&seen, &tgid))
		return;
	bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return;
	e->type = PROF_EV_PROC;
	e->tgid = tgid;
	e->parent = parent;
	e->pad = 0;
	bpf_ringbuf_submit(e, wake);
}

static __always_inline void note_proc(__u32 tgid, bool force)
{
	note_proc2(tgid, force, 0);
}

/* Add @ns and @n intervals (samples) to row @k. */
static __always_inline void charge_n(struct prof_key *k, __u64 ns, __u64 n)
{
	struct prof_val *v = bpf_map_lookup_elem(&counts, k);

	if (!v) {
		if (bpf_map_update_elem(&counts, k, &zero_val, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&counts, k)) {
			stat_inc(PROF_ST_COUNTS_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&counts, k);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	if (n)
		__sync_fetch_and_add(&v->count, n);
}

static __always_inline void charge(struct prof_key *k, __u64 ns)
{
	charge_n(k, ns, 1);
}

static __always_inline void charge_waker(struct prof_task *t, __u64 ns)
{
	struct prof_wkey wk = {};
	struct prof_val *v;

	wk.tgid = t->key.tgid;
	wk.tid = t->key.tid;
	wk.kstack = t->key.kstack;
	wk.ustack = t->key.ustack;
	wk.sysnr = t->key.sysnr;
	wk.waker_tid = t->waker_tid;
	wk.waker_kstack = t->waker_kstack;
	wk.waker_ustack = t->waker_ustack;
	__builtin_memcpy(wk.comm, t->key.comm, PROF_COMM_LEN);
	__builtin_memcpy(wk.waker_comm, t->waker_comm, PROF_COMM_LEN);
	v = bpf_map_lookup_elem(&wcounts, &wk);
	if (!v) {
		if (bpf_map_update_elem(&wcounts, &wk, &zero_val, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&wcounts, &wk)) {
			stat_inc(PROF_ST_WAKES_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&wcounts, &wk);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->ns, ns);
	__sync_fetch_and_add(&v->count, 1);
}

/* Send the current task's user registers and a copy of its user stack
 * from sp (as much of PROF_USTK_BYTES as is readable); false when the
 * ring is full or the task has no user context. */
static __always_inline bool send_stack(const struct prof_key *k, __u64 seq,
				       __u64 ns)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct prof_ev_stack *e;
	struct pt_regs *r;
	__u64 sp, len;

	if (BPF_CORE_READ(task, flags) & 0x00200000)	/* PF_KTHREAD */
		return false;
	r = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!r)
		return false;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(PROF_ST_RING_DROPS);
		return false;
	}
	e->type = PROF_EV_STACK;
	e->seq = seq;
	e->ns = ns;
	e->ts = bpf_ktime_get_ns();
	__builtin_memcpy(&e->key, k, sizeof(*k));
	e->regs.ip = BPF_CORE_READ(r, ip);
	e->regs.sp = sp = BPF_CORE_READ(r, sp);
	e->regs.bp = BPF_CORE_READ(r, bp);
	e->regs.bx = BPF_CORE_READ(r, bx);
	e->regs.r12 = BPF_CORE_READ(r, r12);
	e->regs.r13 = BPF_CORE_READ(r, r13);
	e->regs.r14 = BPF_CORE_READ(r, r14);
	e->regs.r15 = BPF_CORE_READ(r, r15);
	len = PROF_USTK_BYTES;
	if (bpf_probe_read_user(e->data, PROF_USTK_BYTES, (void *)sp)) {
		/* the stack ends before: down to the end of sp's page */
		stat_inc(PROF_ST_USTK_SHORT);
		len = 4096 - (sp & 4095) + 8192;
		if (len > PROF_USTK_BYTES)
			len = PROF_USTK_BYTES;
		if (bpf_probe_read_user(e->data, len, (void *)sp)) {
			len = 4096 - (sp & 4095) + 4096;
			if (len > PROF_USTK_BYTES)
				len = PROF_USTK_BYTES;
			if (bpf_probe_read_user(e->data, len, (void *)sp)) {
				len = 4096 - (sp & 4095);
				if (len > PROF_USTK_BYTES)
					len = PROF_USTK_BYTES;
				if (bpf_probe_read_user(e->data, len, (void *)sp))
					len = 0;
			}
		}
	}
	e->len = (__u32)len;
	bpf_ringbuf_submit(e, 0);
	return true;
}

static __always_inline bool send_charge(__u64 seq, __u32 kind, __u64 ns,
					bool last)
{
	struct prof_ev_charge *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_inc(PROF_ST_RING_DROPS);
		return false;
	}
	e->type = PROF_EV_CHARGE;
	e->kind = kind;
	e->seq = seq;
	e->ns = ns;
	e->last = last;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return true;
}

/* ---- on CPU ---------------------------------------------------------- */

/* The kernel's count of @t's run time: exact at a switch; on CPU, as of
 * its last update (a tick at most before), the rest counts at the next
 * reading. */
static __always_inline __u64 run_ns(struct task_struct *t)
{
	return BPF_CORE_READ(t, se.sum_exec_runtime);
}

/* off_cpu: thread @t's run counts from its run count now, into its
 * own row until a sample catches it. */
static __always_inline void run_begin(struct task_struct *t, __u32 tgid,
				      __u32 tid, __u64 flags)
{
	struct prof_run nr = {};

	nr.base = run_ns(t);
	nr.key.tgid = tgid;
	nr.key.tid = tid;
	BPF_CORE_READ_STR_INTO(&nr.key.comm, t, comm);
	if (bpf_map_update_elem(&runs, &tid, &nr, flags) &&
	    !bpf_map_lookup_elem(&runs, &tid))
		stat_inc(PROF_ST_TASKS_FULL);
}

/* off_cpu: the run time sample @k of the current thread @tid is charged:
 * its run since its previous sample, or since it was first switched in
 * (or, by the loader, targeted).  A thread without an entry has been on
 * CPU since before sched_switch was traced: its first sample is charged
 * the time since then, at most the period. */
static __always_inline __u64 run_sample(__u32 tid, const struct prof_key *k)
{
	__u64 sum = run_ns(bpf_get_current_task_btf()), ns = 0, now;
	struct prof_run *r = bpf_map_lookup_elem(&runs, &tid);

	if (!r) {
		struct prof_run nr = {};

		nr.base = sum;
		nr.sampled = 1;
		__builtin_memcpy(&nr.key, k, sizeof(*k));
		if (bpf_map_update_elem(&runs, &tid, &nr, BPF_ANY))
			stat_inc(PROF_ST_TASKS_FULL);
		now = bpf_ktime_get_ns();
		return start_ns && now > start_ns && now - start_ns < period_ns ?
			       now - start_ns : period_ns;
	}
	if (sum > r->base)
		ns = sum - r->base;
	r->base = sum;
	r->sampled = 1;
	__builtin_memcpy(&r->key, k, sizeof(*k));
	return ns;
}

/* off_cpu: the run of @r not yet charged, up to the run count @sum, goes
 * to its last sample's stack (dwarf: user space holds it), or to a row of
 * its own when no sample caught the thread. */
static __always_inline void run_flush(struct prof_run *r, __u64 sum)
{
	__u64 ns = sum > r->base ? sum - r->base : 0;

	r->base = sum;
	/* sent even when 0: user space lets the stack go.  Where it has no
	 * stack (the sample's copy did not fit in the ring) or this does
	 * not fit, the time is charged here, to the sample's frame-pointer
	 * stacks: user space had dropped it (spinfork's 20,000 processes
	 * under --off-cpu: a sixth of their run time) */
	if (r->sampled && dwarf && r->sent &&
	    send_charge(PROF_ONCPU_SEQ(r->key.tid), PROF_ON_CPU, ns, true))
		return;
	if (!ns)
		return;
	if (!r->sampled) {
		r->key.kind = PROF_ON_NOSAMPLE;
		r->key.kstack = r->key.ustack = -1;
	}
	charge_n(&r->key, ns, 0);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct prof_key k = {};
	bool sent;
	__u64 ns;

	if (!targeted(current_task(), tgid, tid))
		return 0;
	stat_inc(PROF_ST_SAMPLES);
	note_proc(tgid, false);
	k.tgid = tgid;
	k.tid = tid;
	k.kind = PROF_ON_CPU;
	k.sysnr = -1;
	k.kstack = bpf_get_stackid(ctx, &stacks, 0);
	k.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	/* a user-mode sample has no kernel stack: not a loss */
	if (k.kstack < 0 && k.kstack != -14 /* -EFAULT */)
		stat_inc(PROF_ST_KSTACK_LOST);
	if (k.ustack < 0 && k.ustack != -14 && tgid != 0)
		stat_inc(PROF_ST_USTACK_LOST);
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	/* (0 when the kernel's count has not moved since the previous
	 * reading: the sample still says where the thread is, and the run
	 * after it goes to its stack) */
	ns = off_cpu ? run_sample(tid, &k) : period_ns;
	sent = dwarf && send_stack(&k, 0, ns);
	if (dwarf && off_cpu) {
		struct prof_run *r = bpf_map_lookup_elem(&runs, &tid);

		if (r)
			r->sent = sent;
	}
	if (!sent)
		charge(&k, ns);
	return 0;
}

/* Thread @tid's time off CPU (@t) ends at @now: charged to its stacks,
 * split at its waking.  dwarf (t->seq): user space holds the stack,
 * charged there; with the ring full, here (run_flush()). */
static __always_inline void off_end(struct prof_task *t, __u32 tid, __u64 now)
{
	if (t->key.kind == PROF_OFF_SLEEP && t->wake_ts >= t->ts &&
	    t->wake_ts <= now) {
		if (!t->seq || !send_charge(t->seq, PROF_OFF_SLEEP,
					    t->wake_ts - t->ts, false))
			charge(&t->key, t->wake_ts - t->ts);
		t->key.kind = PROF_OFF_RUNNABLE;
		if (!t->seq || !send_charge(t->seq, PROF_OFF_RUNNABLE,
					    now - t->wake_ts, true))
			charge(&t->key, now - t->wake_ts);
		t->key.kind = PROF_OFF_SLEEP;
	} else if (now > t->ts) {
		if (!t->seq ||
		    !send_charge(t->seq, t->key.kind, now - t->ts, true))
			charge(&t->key, now - t->ts);
	}
	if (wakers && t->waker_tid && now > t->ts)
		charge_waker(t, now - t->ts);
	bpf_map_delete_elem(&tasks, &tid);
}

/*
 * Current thread @p (@tid) is on CPU but still has a time off CPU open:
 * its switch-in was not traced (run_begin() says when that happens).  It
 * came back at the latest its run since it left before @now, and the
 * off-CPU time ends there (the stream's rule for a switch-in unseen,
 * event__unseen_in()).
 */
static __always_inline void off_unseen_in(struct task_struct *p, __u32 tid,
					  __u64 now)
{
	struct prof_task *t = bpf_map_lookup_elem(&tasks, &tid);
	__u64 sum, in;

	if (!t)
		return;
	sum = run_ns(p);
	in = sum > t->sum && sum - t->sum < now ? now - (sum - t->sum) : now;
	off_end(t, tid, in > t->ts ? in : t->ts);
}

/* ---- off CPU --------------------------------------------------------- */

static __always_inline void switch_out(void *ctx, bool preempt,
				       struct task_struct *prev,
				       struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	__u32 state = task_state_raw(prev);
	struct prof_run *r;
	struct prof_task *t;
	__s32 *nr;

	if (!targeted(prev, tgid, tid))
		return;
	off_unseen_in(prev, tid, now);
	if (state & 0x80) {	/* TASK_DEAD: its last switch-out */
		r = bpf_map_lookup_elem(&runs, &tid);
		if (r) {
			/* its run since its last sample, exit included */
			if (!r->sampled)
				BPF_CORE_READ_STR_INTO(&r->key.comm, prev, comm);
			run_flush(r, run_ns(prev));
			bpf_map_delete_elem(&runs, &tid);
		}
		return;
	}
	t = bpf_map_lookup_elem(&scratch, &zero_key);
	if (!t)
		return;
	__builtin_memset(t, 0, sizeof(*t));
	note_proc(tgid, false);
	t->ts = now;
	t->sum = run_ns(prev);
	t->key.tgid = tgid;
	t->key.tid = tid;
	t->key.kstack = bpf_get_stackid(ctx, &stacks, 0);
	t->key.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (t->key.kstack < 0)
		stat_inc(PROF_ST_KSTACK_LOST);
	if (t->key.ustack < 0 && t->key.ustack != -14)
		stat_inc(PROF_ST_USTACK_LOST);
	nr = bpf_map_lookup_elem(&insys, &tid);
	t->key.sysnr = nr ? *nr : -1;
	bpf_get_current_comm(t->key.comm, sizeof(t->key.comm));
	t->waker_tid = 0;
	t->waker_kstack = t->waker_ustack = -1;
	if (state & 0xff) {
		t->key.kind = PROF_OFF_SLEEP;
	} else if (nr && *nr == sys_yield_nr && !preempt) {
		t->key.kind = PROF_OFF_YIELD;
	} else {
		/* runnable at switch-out: involuntary, whether through
		 * preempt_schedule or a schedule() on the way back to user
		 * mode with need_resched set (ctxmon's accounting rule) */
		t->key.kind = PROF_OFF_PREEMPT;
		t->key.other_tid = BPF_CORE_READ(next, pid);
		BPF_CORE_READ_STR_INTO(&t->key.other_comm, next, comm);
	}
	t->seq = 0;
	if (dwarf) {
		__u64 *sq = bpf_map_lookup_elem(&seqs, &zero_key);

		if (sq) {
			t->seq = __sync_fetch_and_add(sq, 1) + 1;
			if (!send_stack(&t->key, t->seq, 0))
				t->seq = 0;
		}
	}
	if (bpf_map_update_elem(&tasks, &tid, t, BPF_ANY))
		stat_inc(PROF_ST_TASKS_FULL);
}

static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid), tgid = BPF_CORE_READ(next, tgid);
	struct prof_task *t;

	/* first seen (a thread there before the capture): its run counts
	 * from here */
	if (targeted(next, tgid, tid) && !bpf_map_lookup_elem(&runs, &tid))
		run_begin(next, tgid, tid, BPF_NOEXIST);
	t = bpf_map_lookup_elem(&tasks, &tid);
	if (t)
		off_end(t, tid, now);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(prof_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 now;

	if (test_unseen_in &&
	    !targeted(prev, BPF_CORE_READ(prev, tgid), BPF_CORE_READ(prev, pid)) &&
	    targeted(next, BPF_CORE_READ(next, tgid), BPF_CORE_READ(next, pid)))
		return 0;
	now = bpf_ktime_get_ns(); /* one reading for both sides */
	switch_out(ctx, preempt, prev, next, now);
	switch_in(next, now);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(prof_waking, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);
	struct prof_task *t;
	__u64 id;

	t = bpf_map_lookup_elem(&tasks, &tid);
	if (!t || t->wake_ts)
		return 0;
	t->wake_ts = bpf_ktime_get_ns();
	if (!wakers)
		return 0;
	id = bpf_get_current_pid_tgid();
	t->waker_tid = (__u32)id;
	t->waker_kstack = bpf_get_stackid(ctx, &stacks, 0);
	t->waker_ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	bpf_get_current_comm(t->waker_comm, sizeof(t->waker_comm));
	if (t->waker_tid)
		note_proc(id >> 32, false);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(prof_sys_enter, struct pt_regs *regs, long nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	__s32 v = (__s32)nr;

	if (!targeted(current_task(), id >> 32, tid))
		return 0;
	bpf_map_update_elem(&insys, &tid, &v, BPF_ANY);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(prof_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&insys, &tid);
	return 0;
}

/* ---- processes --------------------------------------------------------- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(prof_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 ctid = BPF_CORE_READ(child, pid);
	__u64 start = BPF_CORE_READ(child, start_time);
	bool is_target;

	if (ptgid != ctgid && filter_mode == 1 &&
	    targeted(parent, ptgid, BPF_CORE_READ(parent, pid)))
		bpf_map_update_elem(&targets, &ctgid, &start, BPF_ANY);
	is_target = targeted(child, ctgid, ctid);
	/* off_cpu: its run counts from its birth, not from its first
	 * switch-in, which is not always traced: a CPU's switch from some
	 * threads (of PID 1 in a Firecracker guest on 6.18) fires no
	 * sched_switch, and the task it switched to starts unseen.  A
	 * new task's tid has no live entry: one there is a dead task's
	 * whose last switch-out went unseen */
	if (off_cpu && is_target)
		run_begin(child, ctgid, ctid, BPF_ANY);
	/* a new process: its mappings are its parent's until it execs,
	 * which a short-lived child may not outlive the reading of */
	if (ptgid != ctgid && is_target)
		note_proc2(ctgid, false, ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(prof_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);

	if (targeted(p, tgid, tid))
		note_proc(tgid, true);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(prof_exit, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid);

	/* (its runs entry goes at its last switch-out, after its exit's
	 * own run) */
	bpf_map_delete_elem(&insys, &tid);
	off_unseen_in(p, tid, bpf_ktime_get_ns());
	return 0;
}

/* A process's entry leaves with its leader, if it is its own: a new
 * process may have the tgid by then (ctxsw.bpf.h's on_free()). */
SEC("tp_btf/sched_process_free")
int BPF_PROG(prof_free, struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	__u64 *start;

	if (filter_mode != 1 || tid != tgid)
		return 0;
	start = bpf_map_lookup_elem(&targets, &tgid);
	if (start && (!*start || *start == BPF_CORE_READ(p, start_time)))
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}
