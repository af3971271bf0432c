/*
 * account.c - per-thread, per-process and per-CPU accounting of the stream.
 *
 * Pure analysis: the ordered event stream comes in, a small state machine per
 * task and per CPU turns it into counts and times.  No I/O, no locks, and no
 * allocation per event except when a task (or a CPU, or a comm) is seen for
 * the first time.
 *
 * A task is in one of: NEW (nothing about its state seen yet), RUNNING (on a
 * CPU), RUNNABLE (queued, waiting for a CPU), SLEEP (blocked, by class S, D
 * or other) and DEAD (after its exit switch-out).  Every state change first
 * charges the time since the previous change to the state being left, so
 * run + wait + sleep always equals last_ts - first_ts.  CPUs do the same with
 * busy and idle.
 *
 * Tasks live in one array in creation order (rows keep that order) and are
 * found by tid through an open-addressing hash that points at the newest
 * generation of each tid: a tid reused by a new fork gets a new row, the old
 * one is kept.  Capacity for a few new rows is reserved before each event,
 * so pointers to rows stay valid while one event is handled.
 *
 * Choices where the stream leaves room:
 * - A waking seen while the sleeper is still on its CPU (the waker raced its
 *   switch-out) makes that switch-out go straight to runnable; the wakeup
 *   latency then counts from the switch-out, when it really starts waiting.
 * - sched_wakeup_new is a wakeup: it counts in wakeups and starts a latency
 *   (fork -> first run).  Between fork and wakeup_new the child waits.
 * - A voluntary switch-out in state R (the kernel counted a sleep that a
 *   pending signal cut short) leaves the task runnable, not asleep.
 * - After exec by a non-leader thread, the thread carries on in a new
 *   generation of the leader's tid, from the exec on; the old row ends there.
 * - finish() is a checkpoint: events may follow it.
 *
 * With causes enabled (causes.c), each row also carries a struct
 * causes_task, and the few points where a row's state moves call into it;
 * see src/analysis/causes.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "analysis/causes.h"
#include "analysis/account.h"

#define CPU_MAX 65536 /* larger ids are taken as garbage */
#define EVENT_ROWS 3 /* most rows one event can create */
/* A step of every switch or waking, inlined into feed_one(): left to the
 * compiler, these stayed calls, and a fifth of the accounting's
 * instructions (callgrind, a pipe recording: 251 an event, 200 inlined)
 * went to calls, returns and saved registers. */
#define PER_EVENT static inline __attribute__((always_inline))

static int hash_grow(struct ctxmon_account *a, size_t cap)
{
	struct slot *h = malloc(cap * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		h[i].idx = EMPTY;
	for (size_t i = 0; i < a->hcap; i++)
		if (a->hash[i].idx != EMPTY)
			hash_set(h, cap, a->hash[i].tid, a->hash[i].idx);
	free(a->hash);
	a->hash = h;
	a->hcap = cap;
	return 0;
}

static int reserve_slow(struct ctxmon_account *a, size_t k);

/* Room for @k more rows, so that no row moves while an event is handled. */
static inline int reserve(struct ctxmon_account *a, size_t k)
{
	return a->ntasks + k <= a->rows_max ? 0 : reserve_slow(a, k);
}

static int reserve_slow(struct ctxmon_account *a, size_t k)
{
	size_t need = a->ntasks + k;

	if (need >= EMPTY)
		return -ENOMEM;
	if (need > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 256;
		struct task *t;

		while (cap < need)
			cap *= 2;
		t = realloc(a->tasks, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		a->tasks = t;
		a->cap = cap;
	}
	if (need * 2 > a->hcap) {
		size_t cap = a->hcap ? a->hcap * 2 : 512;

		while (need * 2 > cap)
			cap *= 2;
		if (hash_grow(a, cap) < 0)
			return -ENOMEM;
	}
	a->rows_max = a->cap < a->hcap / 2 ? a->cap : a->hcap / 2;
	return 0;
}

static bool has_pid(const struct ctxmon_account *a, pid_t id)
{
	size_t lo = 0, hi = a->opts.npids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->pids[mid] == id)
			return true;
		if (a->pids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * Target by the task's own identity.  A TIDS or CMD id names the task that
 * exists when the session starts, so a later reuse of the tid (gen > 0) is
 * someone else; a PIDS target goes by tgid, learnt whenever it comes.
 */
static bool own_target(const struct ctxmon_account *a, const struct task *t)
{
	switch (a->opts.target) {
	case CTXMON_TARGET_ALL:
		return true;
	case CTXMON_TARGET_PIDS:
		return t->st.tgid > 0 && has_pid(a, t->st.tgid);
	case CTXMON_TARGET_TIDS:
		return t->st.gen == 0 && has_pid(a, t->st.tid);
	case CTXMON_TARGET_CMD:
		return t->st.gen == 0 && t->st.tid == a->opts.root_pid;
	}
	return false;
}

/* New row for @tid, made the one the hash finds.  Capacity is reserved. */
static struct task *task_create(struct ctxmon_account *a, int32_t tid,
				uint32_t gen)
{
	struct task *t = &a->tasks[a->ntasks];

	memset(t, 0, sizeof(*t));
	t->st.tid = tid;
	t->st.tgid = -1;
	t->st.ppid = -1;
	t->st.gen = gen;
	t->st.comm = a->empty;
	t->st.nthreads = 1;
	stats_init(&t->st);
	t->cpu = -1;
	t->pgen = gen;
	t->state = T_NEW;
	t->st.target = own_target(a, t);
	t->cx = a->cz ? causes__task_new(a->cz) : NULL;
	hash_set(a->hash, a->hcap, tid, (uint32_t)a->ntasks);
	a->ntasks++;
	return t;
}

/* Generation of the process @tgid as its leader's row @l tells it. */
static uint32_t row_pgen(const struct task *l, int32_t tgid)
{
	if (!l)
		return 0;
	if (l->st.tgid == tgid)
		return l->pgen;
	return l->st.tgid < 0 ? l->st.gen : 0;
}

/* The same, from the latest row of @tgid. */
static uint32_t proc_gen(const struct ctxmon_account *a, int32_t tgid)
{
	return row_pgen(task_find(a, tgid), tgid);
}

static void set_tgid_slow(struct ctxmon_account *a, struct task *t,
			  int32_t tgid);

static inline void set_tgid(struct ctxmon_account *a, struct task *t,
			    int32_t tgid)
{
	if (tgid > 0 && t->st.tgid != tgid)
		set_tgid_slow(a, t, tgid);
}

/*
 * A thread of a command's process is the command's, fork seen or not: the
 * kernel starts some threads inside a process with no fork event
 * (io_uring's iou-wrk workers, create_io_thread()), and their switches
 * are in the process's rusage.  Its leader's row tells, unless that
 * process has ended (its tgid may then be another process's).
 */
static bool process_target(const struct ctxmon_account *a,
			   const struct task *t)
{
	const struct task *l;

	if (a->opts.target != CTXMON_TARGET_CMD || t->st.tid == t->st.tgid)
		return false;
	l = task_find(a, t->st.tgid);
	return l && l->st.tgid == t->st.tgid && l->st.target && !l->group_gone;
}

static void set_tgid_slow(struct ctxmon_account *a, struct task *t,
			  int32_t tgid)
{
	/* A tid never changes process; the event wins, but say so. */
	if (t->st.tgid > 0)
		a->anomalies++;
	t->st.tgid = tgid;
	t->pgen = tgid == t->st.tid ? t->st.gen : proc_gen(a, tgid);
	if (!t->st.target)
		t->st.target = own_target(a, t) || process_target(a, t);
}

static void set_comm(struct ctxmon_account *a, struct task *t, const char *comm)
{
	const char *s;

	if (!comm || comm == t->ev_comm)
		return;
	if (comm == a->last_ev_comm) {
		s = a->last_comm;
	} else {
		s = strtab__intern(a->strs, comm, CTXMON_COMM_LEN);
		if (!s)
			return; /* out of memory: keep the old name */
		a->last_ev_comm = comm;
		a->last_comm = s;
	}
	t->ev_comm = comm;
	t->st.comm = s;
}

/* The row for a live task @tid: a new one if unknown or dead (a dead tid
 * used again without its fork seen). */
static inline struct task *task_live(struct ctxmon_account *a, int32_t tid)
{
	struct task *t = task_find(a, tid);

	if (!t)
		return task_create(a, tid, 0);
	if (t->state == T_DEAD) {
		a->anomalies++;
		return task_create(a, tid, t->st.gen + 1);
	}
	return t;
}

static void task_start(struct task *t, enum tstate s, uint64_t ts)
{
	t->in_span = true;
	t->st.first_ts = t->st.last_ts = t->state_ts = ts;
	t->state = s;
}

/* Charge the time since the last change to the current state. */
PER_EVENT void task_advance(struct task *t, uint64_t ts)
{
	uint64_t d = ts - t->state_ts;

	switch (t->state) {
	case T_RUNNING:
		t->st.run_ns += d;
		break;
	case T_RUNNABLE:
		t->st.wait_ns += d;
		if (t->cx)
			causes__charge(t->cx, false, d);
		break;
	case T_SLEEP:
		t->st.sleep_ns[t->sleep] += d;
		if (t->cx)
			causes__charge(t->cx, true, d);
		break;
	default:
		return;
	}
	t->state_ts = ts;
	t->st.last_ts = ts;
}

static void task_end(struct ctxmon_account *a, struct task *t, uint64_t ts)
{
	task_advance(t, ts);
	if (t->state != T_DEAD)
		a->ndead++;
	t->state = T_DEAD;
	t->st.exited = true;
	t->cpu = -1;
	t->lat_pending = t->early_wake = t->waked = false;
}

static void lat_begin(struct task *t, uint64_t ts, int32_t waker)
{
	t->lat_pending = true;
	t->lat_ts = ts;
	t->lat_waker = waker < 0 ? -1 : waker;
}

/* @t's wakeup latency ends at @ts, on @cpu, after @prev_tid ran there
 * (-1: unknown). */
PER_EVENT void lat_end_at(struct task *t, uint64_t ts, int32_t cpu,
			      int32_t prev_tid)
{
	struct ctxmon_latency *l = &t->st.lat;
	uint64_t d = ts > t->lat_ts ? ts - t->lat_ts : 0;

	l->count++;
	l->sum_ns += d;
	l->hist[log2_bucket(d)]++;
	if (l->count == 1 || d > l->max_ns) {
		l->max_ns = d;
		l->max_ts = ts;
		l->max_waker_tid = t->lat_waker;
		l->max_cpu = cpu;
		l->max_prev_tid = prev_tid;
	}
	t->lat_pending = false;
}

PER_EVENT void lat_end(struct task *t, const struct ctxmon_event *ev,
		       uint64_t ts)
{
	lat_end_at(t, ts, ev->cpu, ev->sw.prev_tid);
}

static struct cpu *cpu_get_slow(struct ctxmon_account *a, int32_t cpu);

static inline struct cpu *cpu_get(struct ctxmon_account *a, int32_t cpu)
{
	if (cpu >= 0 && (size_t)cpu < a->ncpus) {
		a->cpus[cpu].seen = true;
		return &a->cpus[cpu];
	}
	return cpu_get_slow(a, cpu);
}

static struct cpu *cpu_get_slow(struct ctxmon_account *a, int32_t cpu)
{
	struct cpu *c;

	if (cpu < 0 || cpu >= CPU_MAX) {
		a->anomalies++;
		return NULL;
	}
	if ((size_t)cpu >= a->ncpus) {
		size_t n = a->ncpus ? a->ncpus * 2 : 8;

		while (n <= (size_t)cpu)
			n *= 2;
		c = realloc(a->cpus, n * sizeof(*c));
		if (!c) {
			a->anomalies++;
			return NULL;
		}
		memset(c + a->ncpus, 0, (n - a->ncpus) * sizeof(*c));
		for (size_t i = a->ncpus; i < n; i++) {
			c[i].st.cpu = (int)i;
			c[i].cur = -1;
		}
		a->cpus = c;
		a->ncpus = n;
	}
	c = &a->cpus[cpu];
	c->seen = true;
	return c;
}

/* The task current at @ev tells its tgid, when the backend knows it. */
PER_EVENT void learn_current(struct ctxmon_account *a,
			     const struct ctxmon_event *ev)
{
	struct task *t;

	if (ev->tid <= 0 || ev->tgid <= 0)
		return;
	t = task_find(a, ev->tid);
	if (!t)
		t = task_create(a, ev->tid, 0);
	else if (t->state == T_DEAD)
		return;
	set_tgid(a, t, ev->tgid);
}

/* A valid task id in an event's payload; 0 (idle) and garbage are not. */
static bool tid_ok(struct ctxmon_account *a, int32_t tid)
{
	if (tid > 0)
		return true;
	a->anomalies++;
	return false;
}

/* ---- glue to the cause analysis (causes.c) ------------------------- */

static struct causes_who who_of(const struct task *t)
{
	return (struct causes_who){ .tid = t->st.tid,
				    .comm = t->st.comm,
				    .target = t->st.target };
}

/* Cause state of @t's process leader, when its row is known. */
static struct causes_task *leader_cx(const struct ctxmon_account *a,
				     const struct task *t)
{
	const struct task *l;

	if (t->st.tgid <= 0)
		return NULL;
	l = task_find(a, t->st.tgid);
	return l && (l->st.tgid == t->st.tgid || l->st.tgid < 0) ? l->cx : NULL;
}

static void wake_causes(struct ctxmon_account *a, struct task *t,
			const struct ctxmon_event *ev)
{
	const struct task *w = ev->tid > 0 ? task_find(a, ev->tid) : NULL;
	struct causes_who ww = { .tid = ev->tid,
				 .comm = w ? w->st.comm : NULL,
				 .target = w && w->st.target };

	causes__wake(a->cz, t->cx, ev, &ww);
}

/* @t's wakeup latency ends on @cpu at @ts, after @prev_tid ran there (-1:
 * unknown), for the causes. */
static void lat_causes(struct ctxmon_account *a, struct task *t, int32_t cpu,
		       int32_t prev_tid, uint64_t ts)
{
	const struct task *p = prev_tid > 0 ? task_find(a, prev_tid) : NULL;
	struct causes_who w = who_of(t);

	causes__latency(a->cz, t->cx, cpu, prev_tid, ts,
			ts > t->lat_ts ? ts - t->lat_ts : 0, t->lat_waker, &w,
			p ? p->st.comm : NULL);
}

static void switch_causes(struct ctxmon_account *a, struct task *p,
			  unsigned kind, struct task *n,
			  const struct ctxmon_event *ev, uint64_t ts)
{
	struct causes_who pw = { .tid = -1 }, nw = { .tid = -1 };

	if (p)
		pw = who_of(p);
	if (n)
		nw = who_of(n);
	causes__switch(a->cz, p ? p->cx : NULL, p ? leader_cx(a, p) : NULL,
		       kind, n ? n->cx : NULL, ev, ts, &pw, &nw);
}

/* A syscall, irq or loss event: its current task is ev->tid. */
static void event_causes(struct ctxmon_account *a,
			 const struct ctxmon_event *ev, uint64_t ts)
{
	struct task *t = NULL;

	if (ev->type != CTXMON_EV_LOST && ev->tid > 0)
		t = task_live(a, ev->tid);
	causes__event(a->cz, t ? t->cx : NULL, t ? leader_cx(a, t) : NULL, ev,
		      ts);
}

static unsigned switch_kind(struct ctxmon_account *a,
			    const struct ctxmon_event *ev)
{
	uint32_t st = ev->sw.prev_state;

	if (ev->sw.kind <= CTXMON_SW_EXIT)
		return ev->sw.kind;
	a->anomalies++;
	if (st & (CTXMON_STATE_X | CTXMON_STATE_Z))
		return CTXMON_SW_EXIT;
	return ev->sw.preempt || !st ? CTXMON_SW_INVOLUNTARY :
				       CTXMON_SW_VOLUNTARY;
}

static enum ctxmon_sleep_state sleep_class(uint32_t st)
{
	if (st & CTXMON_STATE_S)
		return CTXMON_SLEEP_S;
	if (st & CTXMON_STATE_D)
		return CTXMON_SLEEP_D;
	return CTXMON_SLEEP_OTHER;
}

/*
 * A process leader @t switched out for the last time as a zombie (Z: not
 * reaped yet).  If its parent's last thread has exited already (an exit
 * event with group_dead seen), nobody in the tree will wait for it: its
 * parent hands it to init, so its counters miss the command's rusage.
 * Marked as the BPF backends' ORPHAN events mark it (rusage.c); without
 * this, a tracepoint backend went by the times of the two last switches,
 * which a child that outlives its parent's exit_notify() but not its last
 * switch gets wrong.  A zombie that died before its parent began to exit
 * may still be reaped by it, or not: no tracepoint tells (accounting.md).
 */
static void zombie_unreaped(struct ctxmon_account *a, struct task *t)
{
	struct task *p;

	/* Unsound where the stream reads the state before the time
	 * (CTXMON_ACCOUNT_NO_ZOMBIE_TIMES): it took chains of 7,150 (bpf)
	 * and 20,664 (perf) reaped processes of stress-ng --vforkmany for
	 * unreaped, about 1 run in 15. */
	if ((a->opts.flags & CTXMON_ACCOUNT_NO_ZOMBIE_TIMES) ||
	    t->st.tid != t->st.tgid || t->st.ppid <= 0)
		return;
	p = task_find(a, t->st.ppid);
	if (p && p->group_gone && p->st.first_ts <= t->st.first_ts)
		t->st.orphaned = true;
}

static void left_unseen(struct task *t);

/*
 * @t switches out on ev->cpu but was not running there: its switch-in was
 * never traced.  The bpf backend tells how long it ran in the slice that
 * ends here (sw.prev_run_ns, the kernel's own count since it was picked),
 * so it switched in that long before, or at its last known state change
 * if that was later.  Until then it was in the state it was in (waiting,
 * if it was woken); its wakeup latency ends there, after a task unknown.
 * Without the number (other backends, real-time tasks) it stays as it
 * was: the whole time since goes to that state, its run to none.
 */
static void unseen_in(struct ctxmon_account *a, struct task *t,
		      const struct ctxmon_event *ev, uint64_t ts)
{
	uint64_t in;

	if (t->state == T_DEAD || !event__unseen_in(ev, ts, t->state_ts, &in))
		return;
	/* still running on another CPU: it left that one unseen first */
	if (t->state == T_RUNNING)
		left_unseen(t);
	task_advance(t, in);
	if (t->lat_pending) {
		if (t->cx)
			lat_causes(a, t, ev->cpu, -1, in);
		lat_end_at(t, in, ev->cpu, -1);
	}
	t->waked = false;
	t->st.switch_in++;
	t->state = T_RUNNING;
	t->cpu = ev->cpu;
}

/* Returns how the switch-out was counted (enum ctxmon_switch_kind). */
PER_EVENT unsigned switch_out(struct ctxmon_account *a, struct task *t,
			      const struct ctxmon_event *ev, uint64_t ts)
{
	uint32_t st = ev->sw.prev_state;
	unsigned kind = switch_kind(a, ev);

	if (t->state == T_NEW) {
		task_start(t, T_RUNNING, ts);
	} else {
		if (t->state != T_RUNNING || t->cpu != ev->cpu) {
			a->anomalies++;
			unseen_in(a, t, ev, ts);
		}
		task_advance(t, ts);
	}
	t->st.switch_out++;
	switch (kind) {
	case CTXMON_SW_VOLUNTARY:
		t->st.voluntary++;
		/* blocked after the fold (PREEMPT_RT: on a lock the
		 * release takes): never in rusage */
		if (ev->flags & CTXMON_EVF_AFTER_FOLD)
			t->st.after_fold_vol++;
		else if (t->st.exited && t->st.tid != t->st.tgid &&
			 !(ev->flags & CTXMON_EVF_FOLD_KNOWN))
			t->st.exit_block++;
		break;
	case CTXMON_SW_INVOLUNTARY:
		t->st.involuntary++;
		if (!st && !ev->sw.preempt &&
		    !(ev->flags & CTXMON_EVF_KIND_EXACT))
			t->st.shown_running++;
		/* Preempted while exiting: the kernel folds a thread's counters
		 * into its process part way through exit, so rusage may or may
		 * not include this one; counted apart so a comparison can say. */
		if (ev->flags & CTXMON_EVF_AFTER_FOLD)
			t->st.after_fold++;
		else if (t->st.exited && !(ev->flags & CTXMON_EVF_FOLD_KNOWN))
			t->st.exit_preempt++;
		break;
	default:
		t->st.exit_switch++;
		/* Z: not reaped yet, so the parent reads its counters later;
		 * X: a thread, or a leader reaped before it switched out. */
		if (st & CTXMON_STATE_Z) {
			t->st.exit_counted++;
			zombie_unreaped(a, t);
		}
		break;
	}
	/* A zombie or dead task never runs again, whatever the kind says. */
	if (kind == CTXMON_SW_EXIT ||
	    (st & (CTXMON_STATE_X | CTXMON_STATE_Z))) {
		task_end(a, t, ts);
		return kind;
	}
	t->cpu = -1;
	t->lat_pending = false;
	if (kind == CTXMON_SW_VOLUNTARY && !ev->sw.preempt && st) {
		if (t->early_wake) {
			t->state = T_RUNNABLE;
			lat_begin(t, ts, t->early_waker);
		} else {
			t->state = T_SLEEP;
			t->sleep = (uint8_t)sleep_class(st);
		}
	} else {
		t->state = T_RUNNABLE;
	}
	t->early_wake = false;
	return kind;
}

/*
 * @t, RUNNING, left its CPU unseen: its switch-out was never traced
 * (missed_out(), switch_in()).  When it left is unknown: anywhere since
 * its switch-in, so its run ends at its last known state change, the
 * lower bound, and it sleeps ("other") from there.
 */
static void left_unseen(struct task *t)
{
	t->state = T_SLEEP;
	t->sleep = CTXMON_SLEEP_OTHER;
	t->cpu = -1;
	t->lat_pending = t->early_wake = false;
}

PER_EVENT void switch_in(struct ctxmon_account *a, struct task *t,
			 const struct ctxmon_event *ev, uint64_t ts)
{
	if (t->state == T_NEW) {
		task_start(t, T_RUNNING, ts);
	} else {
		/* Running elsewhere, or asleep with no wakeup seen (as
		 * every sleeper is in a stream without wakeups). */
		if (t->state != T_RUNNABLE &&
		    !(t->state == T_SLEEP && a->opts.no_wakeups))
			a->anomalies++;
		/* Still on another CPU, which has not switched since: it
		 * left that CPU unseen.  Charged as running up to now, it
		 * would get all the time that CPU then spent on one task
		 * without a switch. */
		if (t->state == T_RUNNING && t->cpu != ev->cpu)
			left_unseen(t);
		task_advance(t, ts);
	}
	if (t->lat_pending) {
		if (t->cx)
			lat_causes(a, t, ev->cpu, ev->sw.prev_tid, ts);
		lat_end(t, ev, ts);
	}
	/* Its wakeup cannot still be to come: a waking left unmatched
	 * (events lost) must not swallow a later wakeup. */
	t->waked = false;
	t->st.switch_in++;
	t->state = T_RUNNING;
	t->cpu = ev->cpu;
}

/*
 * @cpu switched from @prev, not from @cur, the task it last switched to:
 * @cur's switch-out was never traced (seen for threads of PID 1 on some
 * kernels, or lost).  When it left is unknown: anywhere between its
 * switch-in and now.  Charging it up to now gave it the CPU's whole busy
 * time since (up to 100x its real run time against schedstat), so its run
 * ends at its last known state change, the lower bound, and it sleeps
 * ("other") from there; what ran meanwhile is the CPU's busy time,
 * charged to no thread.  bpf-agg applies the same rule.
 */
static void missed_out(struct ctxmon_account *a, int32_t cur, int cpu)
{
	struct task *t = cur > 0 ? task_find(a, cur) : NULL;

	if (t && t->state == T_RUNNING && t->cpu == cpu)
		left_unseen(t);
}

static bool exec_early(struct ctxmon_account *a, int32_t cur, int32_t tid,
		       uint64_t ts);

PER_EVENT void on_switch(struct ctxmon_account *a,
			 const struct ctxmon_event *ev, uint64_t ts)
{
	int32_t prev = ev->sw.prev_tid, next = ev->sw.next_tid;
	struct cpu *c = cpu_get(a, ev->cpu);
	struct task *t, *p = NULL, *n = NULL;
	unsigned kind = CTXMON_SW_INVOLUNTARY;

	/* The current task of a switch is prev: its tgid is read below. */
	if (ev->tid != prev)
		learn_current(a, ev);
	if (c) {
		if (c->in_span) {
			cpu_advance(c, ts);
			if (c->cur != prev && !exec_early(a, c->cur, prev, ts)) {
				a->anomalies++;
				missed_out(a, c->cur, ev->cpu);
			}
		} else {
			c->in_span = true;
			c->st.first_ts = c->st.last_ts = c->state_ts = ts;
		}
		c->cur = next;
		c->st.switches++;
	}
	if (prev > 0) {
		t = task_live(a, prev);
		set_tgid(a, t, ev->sw.prev_tgid);
		if (ev->tid == prev)
			set_tgid(a, t, ev->tgid);
		set_comm(a, t, ev->sw.prev_comm);
		kind = switch_out(a, t, ev, ts);
		p = t;
	} else if (prev < 0) {
		a->anomalies++;
	}
	if (next > 0) {
		t = task_live(a, next);
		set_tgid(a, t, ev->sw.next_tgid);
		set_comm(a, t, ev->sw.next_comm);
		switch_in(a, t, ev, ts);
		n = t;
	} else if (next < 0) {
		a->anomalies++;
	}
	if (a->cz)
		switch_causes(a, p, kind, n, ev, ts);
}

PER_EVENT struct task *woken_task(struct ctxmon_account *a,
				  const struct ctxmon_event *ev)
{
	struct task *t;

	learn_current(a, ev);
	if (!tid_ok(a, ev->wake.tid))
		return NULL;
	t = task_live(a, ev->wake.tid);
	set_comm(a, t, ev->wake.comm);
	return t;
}

PER_EVENT void on_waking(struct ctxmon_account *a,
			 const struct ctxmon_event *ev, uint64_t ts)
{
	struct task *t = woken_task(a, ev);

	if (!t)
		return;
	if (t->cx)
		wake_causes(a, t, ev);
	t->st.wakeups++;
	t->waked = true;
	switch (t->state) {
	case T_NEW:
		task_start(t, T_RUNNABLE, ts);
		lat_begin(t, ts, ev->tid);
		break;
	case T_SLEEP:
		task_advance(t, ts);
		t->state = T_RUNNABLE;
		lat_begin(t, ts, ev->tid);
		break;
	case T_RUNNING:
		/* Either it will sleep at once, already woken, or it set
		 * its sleep state and is woken before it left: the wakeup
		 * that follows tells which. */
		t->early_wake = true;
		t->early_waker = ev->tid < 0 ? -1 : ev->tid;
		break;
	default:
		/* Preempted after it set its sleep state: its wait is a
		 * runnable wait, not wakeup latency. */
		break;
	}
}

static void on_wakeup(struct ctxmon_account *a, const struct ctxmon_event *ev,
		      uint64_t ts)
{
	struct task *t = woken_task(a, ev);

	if (!t)
		return;
	if (t->cx)
		wake_causes(a, t, ev);
	if (t->waked) {
		t->waked = false;
		/* Woken in place, before it got to sleep: it runs on, and
		 * the wake is spent (the next one will be another). */
		if (t->state == T_RUNNING) {
			t->early_wake = false;
			if (t->cx)
				causes__woken_in_place(t->cx);
		}
		return;
	}
	t->st.wakeups++;
	switch (t->state) {
	case T_NEW:
		task_start(t, T_RUNNABLE, ts);
		lat_begin(t, ts, -1);
		break;
	case T_SLEEP:
		task_advance(t, ts);
		t->state = T_RUNNABLE;
		lat_begin(t, ts, -1);
		break;
	default:
		break;
	}
}

static void on_wakeup_new(struct ctxmon_account *a,
			  const struct ctxmon_event *ev, uint64_t ts)
{
	struct task *t = woken_task(a, ev);

	if (!t)
		return;
	if (t->cx)
		wake_causes(a, t, ev);
	t->st.wakeups++;
	switch (t->state) {
	case T_NEW:
		task_start(t, T_RUNNABLE, ts);
		lat_begin(t, ts, ev->tid);
		break;
	case T_RUNNABLE:
		if (!t->lat_pending)
			lat_begin(t, ts, ev->tid);
		break;
	default:
		/* A new task cannot have run or slept yet. */
		a->anomalies++;
		if (t->state == T_SLEEP) {
			task_advance(t, ts);
			t->state = T_RUNNABLE;
			lat_begin(t, ts, ev->tid);
		}
		break;
	}
}

/* The parent of process @tgid, from its leader's row; -1 when unknown. */
static int32_t forker_parent(struct ctxmon_account *a, int32_t tgid)
{
	struct task *l = tgid > 0 ? task_find(a, tgid) : NULL;

	return l && l->st.ppid > 0 ? l->st.ppid : -1;
}

static void on_fork(struct ctxmon_account *a, const struct ctxmon_event *ev,
		    uint64_t ts)
{
	int32_t ptid = ev->fork.parent_tid, ctid = ev->fork.child_tid;
	struct task *p = NULL, *c, *old;

	learn_current(a, ev);
	if (ptid > 0)
		p = task_live(a, ptid);
	else if (ptid < 0)
		a->anomalies++;
	if (!tid_ok(a, ctid))
		return;
	old = task_find(a, ctid);
	if (old && old->state == T_NEW && !old->st.exited &&
	    !old->st.migrations) {
		/* Only declared (a /proc scan that raced the fork): the
		 * fork is the truth about it. */
		c = old;
		if (ev->fork.child_tgid > 0)
			c->st.tgid = -1;
	} else {
		if (old && alive(old)) {
			/* The tid was freed: its old task died unseen. */
			a->anomalies++;
			task_end(a, old, ts);
		}
		c = task_create(a, ctid, old ? old->st.gen + 1 : 0);
	}
	set_tgid(a, c, ev->fork.child_tgid);
	set_comm(a, c, ev->fork.child_comm);
	/* The forking task's process is the parent of a new process; for a
	 * new thread it is its own process, and rollups take the leader's.
	 * Under CLONE_PARENT the forker's own parent is (when known). */
	c->st.ppid = ev->tgid >= 0 ? ev->tgid : p ? p->st.tgid : -1;
	if (ev->fork.clone_parent)
		c->st.ppid = forker_parent(a, c->st.ppid);
	if (p && p->st.target)
		c->st.target = true;
	task_start(c, T_RUNNABLE, ts);
}

/* The row of @tid's generation @gen, or NULL; a linear search, for the
 * rare exec of a non-leader thread. */
static struct task *task_find_gen(struct ctxmon_account *a, int32_t tid,
				  uint32_t gen)
{
	for (size_t i = a->ntasks; i-- > 0;)
		if (a->tasks[i].st.tid == tid && a->tasks[i].st.gen == gen)
			return &a->tasks[i];
	return NULL;
}

/*
 * A non-leader thread @old exec'd: the kernel killed the leader and gave
 * the thread the leader's tid, in de_thread(), before the exec event.
 * The thread goes on under @tid, in the same process (took_over: its
 * parent and rusage are the dead leader's), in the state it was in; its
 * old row ends.  Its events under @tid may come before the exec event,
 * in a row begun for them (alive, where the leader's row is dead): that
 * row is the thread from then on, and the old one ends where it began.
 */
static void exec_takeover(struct ctxmon_account *a, int32_t tid, int32_t old,
			  uint64_t ts)
{
	struct task *o = task_find(a, old), *l = task_find(a, tid), *d = l, *n;
	uint64_t end = ts;
	struct cpu *c;

	/* taken over at its first switch under @tid (exec_early()) */
	if (l && l->st.took_over && alive(l) && (!o || !alive(o)))
		return;
	if (l && alive(l) && l->st.gen) {
		/* task_live() counted it an anomaly: it was none */
		if (a->anomalies)
			a->anomalies--;
		n = l;
		d = task_find_gen(a, tid, l->st.gen - 1);
		if (l->st.first_ts < end)
			end = l->st.first_ts;
	} else {
		if (l && alive(l)) {
			a->anomalies++; /* the leader must have died first */
			task_end(a, l, ts);
		}
		n = task_create(a, tid, l ? l->st.gen + 1 : 0);
	}
	n->st.tgid = tid;
	n->st.took_over = true;
	if (d && d != n) {
		n->st.ppid = d->st.ppid;
		n->pgen = row_pgen(d, tid);
	} else if (o && o->st.tgid == tid) {
		n->pgen = o->pgen;
	}
	n->st.target = n->st.target || own_target(a, n) ||
		       (d && d != n && d->st.target) || (o && o->st.target);
	if (!o)
		return;
	if (o->st.tgid < 0) {
		o->st.tgid = tid;
		o->pgen = n->pgen;
	}
	if (n->st.comm == a->empty) {
		n->st.comm = o->st.comm;
		n->ev_comm = o->ev_comm;
	}
	if (n == l || !alive(o)) {
		task_end(a, o, end > o->state_ts ? end : o->state_ts);
		return;
	}
	task_advance(o, ts);
	task_start(n, (enum tstate)o->state, ts);
	causes__task_move(n->cx, o->cx);
	n->cpu = o->cpu;
	n->sleep = o->sleep;
	n->lat_pending = o->lat_pending;
	n->lat_ts = o->lat_ts;
	n->lat_waker = o->lat_waker;
	n->waked = o->waked;
	n->early_wake = o->early_wake;
	n->early_waker = o->early_waker;
	if (o->state == T_RUNNING && o->cpu >= 0 && (size_t)o->cpu < a->ncpus) {
		c = &a->cpus[o->cpu];
		if (c->cur == old)
			c->cur = tid;
	}
	task_end(a, o, ts);
}

/*
 * This CPU's current task @cur switches out as @tid: if @cur is a thread
 * of process @tid, running, and the leader's row is dead, an exec in @cur
 * made it the leader (de_thread()) and its exec event is still to come.
 * It is taken over here, where its tid changed at the latest; true if so.
 */
static bool exec_early(struct ctxmon_account *a, int32_t cur, int32_t tid,
		       uint64_t ts)
{
	struct task *o = cur > 0 ? task_find(a, cur) : NULL, *l;

	if (!o || cur == tid || o->st.tgid != tid || o->state != T_RUNNING)
		return false;
	l = task_find(a, tid);
	if (l && alive(l))
		return false;
	exec_takeover(a, tid, cur, ts);
	return true;
}

static void on_exec(struct ctxmon_account *a, const struct ctxmon_event *ev,
		    uint64_t ts)
{
	int32_t tid = ev->exec.tid, old = ev->exec.old_tid;
	struct task *t;

	if (tid_ok(a, tid)) {
		if (old > 0 && old != tid)
			exec_takeover(a, tid, old, ts);
		t = task_live(a, tid);
		set_comm(a, t, ev->exec.comm);
	}
	learn_current(a, ev);
}

static void on_task_exit(struct ctxmon_account *a,
			 const struct ctxmon_event *ev)
{
	struct task *t;

	learn_current(a, ev);
	if (!tid_ok(a, ev->exit.tid))
		return;
	t = task_live(a, ev->exit.tid);
	set_comm(a, t, ev->exit.comm);
	t->st.exited = true;
	t->exit_ts = ev->ts;
	if (ev->exit.group_dead) {
		struct task *l = t->st.tgid > 0 ? task_find(a, t->st.tgid) : t;

		if (l)
			l->group_gone = true;
	}
}

/* A process its parent will not reap: its latest incarnation is marked,
 * which the rusage comparison takes as said (rusage.c).  Its threads
 * follow their leader there. */
static void on_orphan(struct ctxmon_account *a, const struct ctxmon_event *ev)
{
	struct task *t;

	learn_current(a, ev);
	if (!tid_ok(a, ev->orphan.tid))
		return;
	t = task_find(a, ev->orphan.tid);
	if (t)
		t->st.orphaned = true;
}

static void on_migrate(struct ctxmon_account *a, const struct ctxmon_event *ev)
{
	struct task *t;

	learn_current(a, ev);
	if (!tid_ok(a, ev->migrate.tid))
		return;
	t = task_live(a, ev->migrate.tid);
	t->st.migrations++;
	if (t->cx)
		causes__migrate(t->cx, ev);
}

static void on_lost(struct ctxmon_account *a, const struct ctxmon_event *ev)
{
	struct cpu *c = cpu_get(a, ev->cpu);

	if (c)
		c->st.lost += ev->lost.count;
	learn_current(a, ev);
	/* Which tasks the dropped events were about is unknown: any task
	 * alive in the window may miss some, so its numbers are marked. */
	for (size_t i = 0; i < a->ntasks; i++)
		if (alive(&a->tasks[i]) || a->tasks[i].state == T_NEW)
			a->tasks[i].st.incomplete = true;
}

/* One event into the account: ctxmon_account_feed() and, in a loop with
 * no call per event, ctxmon_account_feed_batch(). */
PER_EVENT void feed_one(struct ctxmon_account *a,
			const struct ctxmon_event *ev)
{
	uint64_t ts;

	/* a bounded table: fold the oldest exited tasks, half at a time */
	if (a->ndead >= a->compact_at)
		account__compact(a, a->ndead - a->opts.exited_keep, true);
	if (reserve(a, EVENT_ROWS) < 0) {
		a->anomalies++; /* the event cannot be accounted */
		return;
	}
	a->fed = true;
	ts = ev->ts;
	if (ts < a->now) {
		a->anomalies++; /* time went back: hold it at the last time */
		ts = a->now;
	}
	a->now = ts;
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		on_switch(a, ev, ts);
		break;
	case CTXMON_EV_WAKING:
		on_waking(a, ev, ts);
		break;
	case CTXMON_EV_WAKEUP:
		on_wakeup(a, ev, ts);
		break;
	case CTXMON_EV_WAKEUP_NEW:
		on_wakeup_new(a, ev, ts);
		break;
	case CTXMON_EV_MIGRATE:
		on_migrate(a, ev);
		break;
	case CTXMON_EV_FORK:
		on_fork(a, ev, ts);
		break;
	case CTXMON_EV_EXEC:
		on_exec(a, ev, ts);
		break;
	case CTXMON_EV_EXIT:
		on_task_exit(a, ev);
		break;
	case CTXMON_EV_ORPHAN:
		on_orphan(a, ev);
		break;
	case CTXMON_EV_LOST:
		on_lost(a, ev);
		if (a->cz)
			event_causes(a, ev, ts);
		break;
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		learn_current(a, ev);
		if (a->cz)
			event_causes(a, ev, ts);
		break;
	default:
		a->anomalies++;
		break;
	}
}

void ctxmon_account_feed(struct ctxmon_account *a,
			 const struct ctxmon_event *ev)
{
	if (a && ev)
		feed_one(a, ev);
}

int ctxmon_account_feed_cb(const struct ctxmon_event *ev, void *ctx)
{
	ctxmon_account_feed(ctx, ev);
	return 0;
}

void ctxmon_account_feed_batch(struct ctxmon_account *a,
			       const struct ctxmon_event *evs, size_t n)
{
	if (!a || !evs)
		return;
	for (size_t i = 0; i < n; i++)
		feed_one(a, &evs[i]);
}

int ctxmon_account_feed_batch_cb(const struct ctxmon_event *evs, size_t n,
				 void *ctx)
{
	ctxmon_account_feed_batch(ctx, evs, n);
	return 0;
}

/* ---- for account_life.c ---------------------------------------------- */

int account__reserve(struct ctxmon_account *a, size_t k)
{
	return reserve(a, k);
}

struct task *account__task_create(struct ctxmon_account *a, int32_t tid,
				  uint32_t gen)
{
	return task_create(a, tid, gen);
}

void account__set_tgid(struct ctxmon_account *a, struct task *t,
		       int32_t tgid)
{
	set_tgid(a, t, tgid);
}

void account__task_advance(struct task *t, uint64_t ts)
{
	task_advance(t, ts);
}
