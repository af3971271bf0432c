/*
 * timeline.c - per-thread and per-CPU intervals from the ordered stream
 * (timeline.h).  The state machine follows src/analysis/account.c rule for
 * rule, so that the intervals sum to the account's times; where the
 * account counts an anomaly, this file does what the account does and
 * carries on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "output/timeline.h"

struct tl_cpu {
	bool started;
	int32_t tid;		/* running now (0: idle) */
	uint32_t utid;
	int32_t prio;
	uint64_t since;
};

struct timeline {
	struct tl_ops ops;
	struct tl_thread *th;
	size_t nth, cap;
	uint32_t *hash;		/* index + 1 of the newest thread per tid */
	size_t hcap;
	struct tl_cpu *cpus;
	size_t ncpus;
	uint64_t now;
	uint64_t next_flow;
	bool finishing;
};

#define CPU_MAX 65536

static size_t hslot(const struct timeline *tl, int32_t tid)
{
	return ((uint32_t)tid * 2654435761u) & (tl->hcap - 1);
}

static struct tl_thread *find(const struct timeline *tl, int32_t tid)
{
	for (size_t i = hslot(tl, tid);; i = (i + 1) & (tl->hcap - 1)) {
		uint32_t x = tl->hash[i];

		if (!x)
			return NULL;
		if (tl->th[x - 1].tid == tid)
			return &tl->th[x - 1];
	}
}

static void hash_put(struct timeline *tl, int32_t tid, uint32_t idx)
{
	size_t i = hslot(tl, tid);

	for (;; i = (i + 1) & (tl->hcap - 1)) {
		uint32_t x = tl->hash[i];

		if (!x || tl->th[x - 1].tid == tid)
			break;
	}
	tl->hash[i] = idx + 1;
}

/* Room for a few more threads, so pointers stay valid for one event. */
static int reserve(struct timeline *tl)
{
	if (tl->nth + 4 > tl->cap) {
		size_t cap = tl->cap ? tl->cap * 2 : 256;
		struct tl_thread *t = realloc(tl->th, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		tl->th = t;
		tl->cap = cap;
	}
	if (2 * (tl->nth + 4) > tl->hcap) {
		size_t hcap = tl->hcap ? tl->hcap * 2 : 1024;
		uint32_t *h = calloc(hcap, sizeof(*h));

		if (!h)
			return -ENOMEM;
		free(tl->hash);
		tl->hash = h;
		tl->hcap = hcap;
		/* newest generation last, so it wins */
		for (size_t i = 0; i < tl->nth; i++)
			hash_put(tl, tl->th[i].tid, (uint32_t)i);
	}
	return 0;
}

static struct tl_thread *create(struct timeline *tl, int32_t tid, uint64_t ts)
{
	struct tl_thread *t = &tl->th[tl->nth];

	memset(t, 0, sizeof(*t));
	t->utid = (uint32_t)tl->nth + 1;
	t->tid = tid;
	t->tgid = -1;
	t->ppid = -1;
	t->cpu = -1;
	t->waker = -1;
	t->sys = t->block_sys = -1;
	t->start_ts = t->end_ts = ts;
	t->state = TL_NEW;
	hash_put(tl, tid, (uint32_t)tl->nth);
	tl->nth++;
	if (tl->ops.thread)
		tl->ops.thread(tl->ops.ctx, t);
	return t;
}

static bool alive(const struct tl_thread *t)
{
	return t->state != TL_NEW && t->state != TL_DEAD;
}

static struct tl_thread *live(struct timeline *tl, int32_t tid, uint64_t ts)
{
	struct tl_thread *t = find(tl, tid);

	if (!t || t->state == TL_DEAD)
		return create(tl, tid, ts);
	return t;
}

static void set_comm(struct tl_thread *t, const char *comm)
{
	if (comm && *comm)
		t->comm = comm;
}

static void set_tgid(struct tl_thread *t, int32_t tgid)
{
	if (tgid > 0)
		t->tgid = tgid;
}

static void start(struct tl_thread *t, enum tl_state s, uint64_t ts)
{
	t->start_ts = t->end_ts = t->state_ts = ts;
	t->state = (uint8_t)s;
}

/* Close the current state's interval at @ts. */
static void advance_in(struct timeline *tl, struct tl_thread *t, uint64_t ts,
		       const char *by, bool in)
{
	struct tl_span s = { .ts = t->state_ts, .cpu = -1, .waker_tid = -1,
			     .block_sys = -1 };
	const struct tl_thread *w;

	if (!alive(t))
		return;
	s.dur = ts - t->state_ts;
	s.cut = tl->finishing;
	s.ran = in;
	switch (t->state) {
	case TL_RUNNING:
		s.state = "Running";
		s.cpu = t->cpu;
		break;
	case TL_RUNNABLE:
		s.state = t->preempted ? "R+" : "R";
		s.preempted = t->preempted;
		s.preempted_by = by;
		s.waker_tid = t->waker;
		s.flow = t->flow;
		if (t->waker > 0 && (w = find(tl, t->waker)))
			s.waker_utid = w->utid;
		break;
	default:
		s.state = t->sleep;
		s.block_sys = t->block_sys;
		break;
	}
	if (s.dur && tl->ops.span)
		tl->ops.span(tl->ops.ctx, t, &s);
	t->state_ts = ts;
	t->end_ts = ts;
}

static void advance(struct timeline *tl, struct tl_thread *t, uint64_t ts,
		    const char *by)
{
	advance_in(tl, t, ts, by, false);
}

static void end(struct timeline *tl, struct tl_thread *t, uint64_t ts)
{
	advance(tl, t, ts, NULL);
	t->state = TL_DEAD;
	t->exited = true;
	t->cpu = -1;
	t->waked = t->early_wake = false;
}

static void runnable(struct tl_thread *t, int32_t waker, bool preempted)
{
	t->state = TL_RUNNABLE;
	t->waker = waker < 0 ? -1 : waker;
	t->preempted = preempted;
	t->flow = 0;
}

/* A wakeup edge: the sleeper becomes runnable; tell the exporter. */
static void woken(struct timeline *tl, struct tl_thread *t, int32_t waker,
		  int32_t cpu, uint64_t ts)
{
	struct tl_thread *w = NULL;

	/* the waker is a thread too, seen first here maybe (room for it was
	 * reserved for this event) */
	if (waker > 0) {
		w = find(tl, waker);
		if (!w) {
			int32_t tid = t->tid;

			w = create(tl, waker, ts);
			t = find(tl, tid);
		}
	}
	runnable(t, waker, false);
	t->flow = ++tl->next_flow;
	if (tl->ops.wake)
		tl->ops.wake(tl->ops.ctx, w, t, cpu, ts, t->flow);
}

static unsigned switch_kind(const struct ctxmon_event *ev)
{
	uint32_t st = ev->sw.prev_state;

	if (ev->sw.kind <= CTXMON_SW_EXIT)
		return ev->sw.kind;
	if (st & (CTXMON_STATE_X | CTXMON_STATE_Z))
		return CTXMON_SW_EXIT;
	return ev->sw.preempt || !st ? CTXMON_SW_INVOLUNTARY :
				       CTXMON_SW_VOLUNTARY;
}

static void switch_out(struct timeline *tl, struct tl_thread *t,
		       const struct ctxmon_event *ev, uint64_t ts)
{
	uint32_t st = ev->sw.prev_state;
	unsigned kind = switch_kind(ev);

	if (t->state == TL_NEW)
		start(t, TL_RUNNING, ts);
	else
		advance(tl, t, ts, NULL);
	t->prio = ev->sw.prev_prio;
	if (kind == CTXMON_SW_EXIT ||
	    (st & (CTXMON_STATE_X | CTXMON_STATE_Z))) {
		end(tl, t, ts);
		return;
	}
	t->cpu = -1;
	if (kind == CTXMON_SW_VOLUNTARY && !ev->sw.preempt && st) {
		if (t->early_wake) {
			/* woken before it got off the CPU: its wakeup latency
			 * starts now, as the account counts it */
			woken(tl, t, t->early_waker, ev->cpu, ts);
		} else {
			t->state = TL_SLEEP;
			ctxmon_state_str(st, 0, t->sleep, sizeof(t->sleep));
			t->block_sys = t->sys;
		}
	} else {
		runnable(t, -1, ev->sw.preempt != 0);
	}
	t->early_wake = false;
}

/*
 * @t, RUNNING, left its CPU unseen: its switch-out was never traced.  As
 * the account does (its left_unseen()), its run ends at its last known
 * state change, the lower bound: from there it is a sleep of unknown
 * state, never more run time than it had.
 */
static void left_unseen(struct tl_thread *t)
{
	t->state = TL_SLEEP;
	snprintf(t->sleep, sizeof(t->sleep), "?");
	t->block_sys = -1;
	t->cpu = -1;
	t->waked = t->early_wake = false;
}

/* @cpu switched from another task than @cur, the one it last switched
 * to: @cur's switch-out was never traced (the account's missed_out()) */
static void missed_out(struct timeline *tl, int32_t cur, int32_t cpu)
{
	struct tl_thread *t = cur > 0 ? find(tl, cur) : NULL;

	if (t && t->state == TL_RUNNING && t->cpu == cpu)
		left_unseen(t);
}

static void switch_in(struct timeline *tl, struct tl_thread *t,
		      const struct ctxmon_event *ev, uint64_t ts)
{
	if (t->state == TL_NEW) {
		start(t, TL_RUNNING, ts);
	} else {
		/* still on another CPU, which has not switched since: it
		 * left that CPU unseen (the account's switch_in()) */
		if (t->state == TL_RUNNING && t->cpu != ev->cpu)
			left_unseen(t);
		advance_in(tl, t, ts, ev->sw.next_comm, true);
	}
	t->waked = false;
	t->state = TL_RUNNING;
	t->cpu = ev->cpu;
	t->prio = ev->sw.next_prio;
}

static struct tl_cpu *cpu_get(struct timeline *tl, int32_t cpu)
{
	if (cpu < 0 || cpu >= CPU_MAX)
		return NULL;
	if ((size_t)cpu >= tl->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct tl_cpu *c = realloc(tl->cpus, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + tl->ncpus, 0, (n - tl->ncpus) * sizeof(*c));
		tl->cpus = c;
		tl->ncpus = n;
	}
	return &tl->cpus[cpu];
}

/*
 * Thread @old exec'd and took over its leader's tid @tid (de_thread()): it
 * goes on as a new thread of that tid, in the state it was in; the CPU it
 * runs on now runs @tid (the account's exec_takeover()).
 */
static void takeover(struct timeline *tl, int32_t tid, int32_t old,
		     uint64_t ts)
{
	struct tl_thread *o = find(tl, old), *l = find(tl, tid), *n;
	struct tl_cpu *c;

	if (l && alive(l))
		end(tl, l, ts);
	n = create(tl, tid, ts);
	n->tgid = tid;
	n->took_over = true;
	if (!o)
		return;
	n->comm = o->comm;
	if (alive(o)) {
		struct tl_thread keep;

		advance(tl, o, ts, NULL);
		keep = *o;
		n->state = keep.state;
		n->state_ts = ts;
		n->cpu = keep.cpu;
		memcpy(n->sleep, keep.sleep, sizeof(n->sleep));
		n->waked = keep.waked;
		n->early_wake = keep.early_wake;
		n->early_waker = keep.early_waker;
		n->waker = keep.waker;
		n->preempted = keep.preempted;
		n->block_sys = keep.block_sys;
		o->state = TL_RUNNING; /* ended below */
		if (keep.state == TL_RUNNING &&
		    (c = cpu_get(tl, keep.cpu)) && c->tid == old)
			c->tid = tid;
	}
	end(tl, o, ts);
}

/*
 * This CPU's current task @cur switches out as @tid: if @cur is a running
 * thread of process @tid whose leader is gone, an exec in @cur made it
 * the leader and its exec event is still to come: taken over here (the
 * account's exec_early()).
 */
static void exec_early(struct timeline *tl, int32_t cur, int32_t tid,
		       uint64_t ts)
{
	struct tl_thread *o = cur > 0 ? find(tl, cur) : NULL, *l;

	if (!o || cur == tid || o->tgid != tid || o->state != TL_RUNNING)
		return;
	l = find(tl, tid);
	if (!l || !alive(l))
		takeover(tl, tid, cur, ts);
}

static void learn_current(struct timeline *tl, const struct ctxmon_event *ev)
{
	struct tl_thread *t;

	if (ev->tid <= 0 || ev->tgid <= 0)
		return;
	t = find(tl, ev->tid);
	if (!t)
		t = create(tl, ev->tid, ev->ts);
	else if (t->state == TL_DEAD)
		return;
	set_tgid(t, ev->tgid);
}

/*
 * @p switches out on CPU @c, which last switched to another task: its
 * switch-in went unseen.  With its run in this slice (sw.prev_run_ns, the
 * bpf backend) it switched in that long ago, at its last known state
 * change at the earliest (the account's unseen_in()): the CPU ran what
 * it last switched to until then, how that left unknown, and @p since.
 */
static void unseen_in(struct timeline *tl, struct tl_cpu *c,
		      struct tl_thread *p, const struct ctxmon_event *ev,
		      uint64_t ts)
{
	uint64_t in, cin;

	if (!alive(p) || !event__unseen_in(ev, ts, p->state_ts, &in))
		return;
	cin = in > c->since ? in : c->since;
	if (tl->ops.sched && cin > c->since)
		tl->ops.sched(tl->ops.ctx, ev->cpu,
			      c->utid ? &tl->th[c->utid - 1] : NULL, c->since,
			      cin - c->since, NULL, c->prio);
	missed_out(tl, c->tid, ev->cpu);
	if (p->state == TL_RUNNING)
		missed_out(tl, ev->sw.prev_tid, p->cpu);
	advance_in(tl, p, in, NULL, true);
	p->waked = false;
	p->state = TL_RUNNING;
	p->cpu = ev->cpu;
	c->tid = ev->sw.prev_tid;
	c->utid = p->utid;
	c->prio = ev->sw.prev_prio;
	c->since = cin;
}

static void on_switch(struct timeline *tl, const struct ctxmon_event *ev,
		      uint64_t ts)
{
	int32_t prev = ev->sw.prev_tid, next = ev->sw.next_tid;
	struct tl_cpu *c = cpu_get(tl, ev->cpu);
	struct tl_thread *p = NULL, *n;
	char st[8];

	if (ev->tid != prev)
		learn_current(tl, ev);
	if (c && c->started && c->tid != prev)
		exec_early(tl, c->tid, prev, ts);
	if (prev > 0) {
		p = live(tl, prev, ts);
		set_tgid(p, ev->sw.prev_tgid);
		if (ev->tid == prev)
			set_tgid(p, ev->tgid);
		set_comm(p, ev->sw.prev_comm);
	}
	if (c && c->started && c->tid != prev && p)
		unseen_in(tl, c, p, ev, ts);
	/* The CPU's run interval is the switched-in task's, as Perfetto's
	 * sched table has it: one row per switch-in. */
	if (c && c->started && tl->ops.sched) {
		/* A recording of some tasks only has gaps: when the task
		 * switched out is not the one last switched in, how that one
		 * left the CPU is not known. */
		ctxmon_state_str(ev->sw.prev_state, ev->sw.preempt, st,
				 sizeof(st));
		tl->ops.sched(tl->ops.ctx, ev->cpu,
			      c->utid ? &tl->th[c->utid - 1] : NULL, c->since,
			      ts - c->since, c->tid == prev ? st : NULL,
			      c->prio);
	}
	if (c && c->started && c->tid != prev)
		missed_out(tl, c->tid, ev->cpu);
	if (p)
		switch_out(tl, p, ev, ts);
	n = NULL;
	if (next > 0) {
		n = live(tl, next, ts);
		set_tgid(n, ev->sw.next_tgid);
		set_comm(n, ev->sw.next_comm);
		switch_in(tl, n, ev, ts);
	}
	if (c) {
		c->started = true;
		c->tid = next;
		c->utid = n ? n->utid : 0;
		c->prio = ev->sw.next_prio;
		c->since = ts;
	}
}

static struct tl_thread *woken_task(struct timeline *tl,
				    const struct ctxmon_event *ev)
{
	struct tl_thread *t;

	learn_current(tl, ev);
	if (ev->wake.tid <= 0)
		return NULL;
	t = live(tl, ev->wake.tid, ev->ts);
	set_comm(t, ev->wake.comm);
	return t;
}

static void on_waking(struct timeline *tl, const struct ctxmon_event *ev,
		      uint64_t ts)
{
	struct tl_thread *t = woken_task(tl, ev);

	if (!t)
		return;
	t->waked = true;
	switch (t->state) {
	case TL_NEW:
		start(t, TL_RUNNABLE, ts);
		woken(tl, t, ev->tid, ev->cpu, ts);
		break;
	case TL_SLEEP:
		advance(tl, t, ts, NULL);
		woken(tl, t, ev->tid, ev->cpu, ts);
		break;
	case TL_RUNNING:
		t->early_wake = true;
		t->early_waker = ev->tid < 0 ? -1 : ev->tid;
		break;
	default:
		break;
	}
}

static void on_wakeup(struct timeline *tl, const struct ctxmon_event *ev,
		      uint64_t ts)
{
	struct tl_thread *t = woken_task(tl, ev);

	if (!t)
		return;
	if (t->waked) {
		t->waked = false;
		if (t->state == TL_RUNNING)
			t->early_wake = false;
		return;
	}
	switch (t->state) {
	case TL_NEW:
		start(t, TL_RUNNABLE, ts);
		woken(tl, t, -1, ev->cpu, ts);
		break;
	case TL_SLEEP:
		advance(tl, t, ts, NULL);
		woken(tl, t, -1, ev->cpu, ts);
		break;
	default:
		break;
	}
}

static void on_wakeup_new(struct timeline *tl, const struct ctxmon_event *ev,
			  uint64_t ts)
{
	struct tl_thread *t = woken_task(tl, ev);

	if (!t)
		return;
	switch (t->state) {
	case TL_NEW:
		start(t, TL_RUNNABLE, ts);
		woken(tl, t, ev->tid, ev->cpu, ts);
		break;
	case TL_RUNNABLE:
		/* forked: waiting since the fork, its latency starts here;
		 * the runnable interval is cut in two at the wakeup */
		if (!t->flow) {
			advance(tl, t, ts, NULL);
			woken(tl, t, ev->tid, ev->cpu, ts);
		}
		break;
	case TL_SLEEP:
		advance(tl, t, ts, NULL);
		woken(tl, t, ev->tid, ev->cpu, ts);
		break;
	default:
		break;
	}
}

static void on_fork(struct timeline *tl, const struct ctxmon_event *ev,
		    uint64_t ts)
{
	int32_t ptid = ev->fork.parent_tid, ctid = ev->fork.child_tid;
	struct tl_thread *p = NULL, *c, *old;

	learn_current(tl, ev);
	if (ptid > 0)
		p = live(tl, ptid, ts);
	if (ctid <= 0)
		return;
	old = find(tl, ctid);
	if (old && old->state == TL_NEW && !old->exited && !old->migrated) {
		c = old;
		if (ev->fork.child_tgid > 0)
			c->tgid = -1;
	} else {
		if (old && alive(old))
			end(tl, old, ts);
		c = create(tl, ctid, ts);
	}
	set_tgid(c, ev->fork.child_tgid);
	set_comm(c, ev->fork.child_comm);
	c->ppid = ev->tgid >= 0 ? ev->tgid : p ? p->tgid : -1;
	start(c, TL_RUNNABLE, ts);
	runnable(c, -1, false);
}

static void on_exec(struct timeline *tl, const struct ctxmon_event *ev,
		    uint64_t ts)
{
	int32_t tid = ev->exec.tid, old = ev->exec.old_tid;
	struct tl_thread *t, *o, *l;

	if (tid > 0) {
		if (old > 0 && old != tid) {
			o = find(tl, old);
			l = find(tl, tid);
			/* not when taken over at its first switch as @tid */
			if (!(l && l->took_over && alive(l) &&
			      (!o || !alive(o))))
				takeover(tl, tid, old, ts);
		}
		t = live(tl, tid, ts);
		set_comm(t, ev->exec.comm);
	}
	learn_current(tl, ev);
}

int timeline__feed(struct timeline *tl, const struct ctxmon_event *ev)
{
	struct tl_thread *t;
	uint64_t ts = ev->ts;

	if (reserve(tl) < 0)
		return -ENOMEM;
	if (ts < tl->now)
		ts = tl->now;
	tl->now = ts;
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		on_switch(tl, ev, ts);
		break;
	case CTXMON_EV_WAKING:
		on_waking(tl, ev, ts);
		break;
	case CTXMON_EV_WAKEUP:
		on_wakeup(tl, ev, ts);
		break;
	case CTXMON_EV_WAKEUP_NEW:
		on_wakeup_new(tl, ev, ts);
		break;
	case CTXMON_EV_FORK:
		on_fork(tl, ev, ts);
		break;
	case CTXMON_EV_EXEC:
		on_exec(tl, ev, ts);
		break;
	case CTXMON_EV_EXIT:
		learn_current(tl, ev);
		if (ev->exit.tid > 0) {
			t = live(tl, ev->exit.tid, ts);
			set_comm(t, ev->exit.comm);
			t->exited = true;
		}
		break;
	case CTXMON_EV_MIGRATE:
		learn_current(tl, ev);
		if (ev->migrate.tid > 0)
			live(tl, ev->migrate.tid, ts)->migrated = true;
		break;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		learn_current(tl, ev);
		if (ev->tid > 0 && (t = find(tl, ev->tid)))
			t->sys = ev->type == CTXMON_EV_SYS_ENTER ? ev->sys.id :
								  -1;
		break;
	default:
		if (ev->type != CTXMON_EV_LOST)
			learn_current(tl, ev);
		break;
	}
	return 0;
}

int timeline__task(struct timeline *tl, int32_t tid, int32_t tgid,
		   const char *comm)
{
	struct tl_thread *t;

	if (tid <= 0)
		return 0;
	if (reserve(tl) < 0)
		return -ENOMEM;
	t = find(tl, tid);
	if (!t)
		t = create(tl, tid, tl->now);
	set_tgid(t, tgid);
	set_comm(t, comm);
	return 0;
}

void timeline__finish(struct timeline *tl, uint64_t ts)
{
	if (ts < tl->now)
		ts = tl->now;
	tl->now = ts;
	tl->finishing = true;
	for (size_t i = 0; i < tl->nth; i++)
		advance(tl, &tl->th[i], ts, NULL);
	tl->finishing = false;
	for (size_t i = 0; i < tl->ncpus; i++) {
		struct tl_cpu *c = &tl->cpus[i];

		if (!c->started || !tl->ops.sched)
			continue;
		tl->ops.sched(tl->ops.ctx, (int32_t)i,
			      c->utid ? &tl->th[c->utid - 1] : NULL, c->since,
			      ts - c->since, NULL, c->prio);
		c->since = ts;
	}
}

struct timeline *timeline__new(const struct tl_ops *ops)
{
	struct timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	if (ops)
		tl->ops = *ops;
	if (reserve(tl) < 0) {
		timeline__free(tl);
		errno = ENOMEM;
		return NULL;
	}
	return tl;
}

void timeline__free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->th);
	free(tl->hash);
	free(tl->cpus);
	free(tl);
}

const struct tl_thread *timeline__threads(const struct timeline *tl, size_t *n)
{
	*n = tl->nth;
	return tl->th;
}

const struct tl_thread *timeline__find(const struct timeline *tl, int32_t tid)
{
	return find(tl, tid);
}
