/*
 * causes.c - why each switch-out happened, where the off-CPU time went, and
 * wakeup latency in detail: quantiles, per CPU, who wakes (and preempts)
 * whom.
 *
 * Pure analysis, driven by the accounting (account.c) through the hooks of
 * causes.h: the account decides which row an event belongs to and when a
 * task's state changes; this file keeps, per row, what the kernel would
 * have needed a patch to count (seed 004: nvcsw_ext, nivcsw_ext,
 * nsyscalls_schedule):
 *
 * - the syscall the task is in (sys_enter seen, no sys_exit yet), valid
 *   only once a syscall event of the task was seen since the last loss;
 * - the wakeup waiting for it (waker, the waker's CPU and context, the CPU
 *   it was queued on and when), cleared when it gets on a CPU;
 * - when it last got on a CPU, to tell a wakeup that came while it ran;
 * - the cause its current off-CPU interval is charged to.
 *
 * Per CPU it keeps the irq and softirq in progress (to time them and charge
 * them to the task they interrupted) and the latency of the wakeups that
 * ended there.  How each cause is decided: docs/causes.md.
 *
 * Allocation happens when a task, CPU, pair or (task, syscall) is seen for
 * the first time, and for a task's fine latency histogram at its first
 * latency; never otherwise on the event path.  A failed allocation loses
 * that detail, is counted (causes__anomalies) and never breaks the sums:
 * the time then goes to a bucket that exists.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "analysis/causes.h"

#include "analysis/causes_int.h"

/* ---- names ---------------------------------------------------------- */

const struct syscall_table *syscall_table__find(const char *arch)
{
	if (!arch) {
#if defined(__x86_64__)
		arch = "x86_64";
#elif defined(__aarch64__)
		arch = "aarch64";
#else
		return NULL;
#endif
	}
	if (!strcmp(arch, "x86_64") || !strcmp(arch, "amd64"))
		return &syscalls_x86_64;
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return &syscalls_aarch64;
	return NULL;
}

const char *ctxmon_syscall_arch(void)
{
	const struct syscall_table *t = syscall_table__find(NULL);

	return t ? t->arch : "unknown";
}

const char *ctxmon_syscall_name(const char *arch, long id)
{
	const struct syscall_table *t = syscall_table__find(arch);

	if (!t || id < 0 || (size_t)id >= t->n)
		return NULL;
	return t->names[id];
}

long ctxmon_syscall_id(const char *arch, const char *name)
{
	const struct syscall_table *t = syscall_table__find(arch);

	if (!t || !name)
		return -ENOENT;
	for (size_t i = 0; i < t->n; i++)
		if (t->names[i] && !strcmp(t->names[i], name))
			return (long)i;
	return -ENOENT;
}

static const char *name_of(const char *const *names, size_t n, unsigned c)
{
	return c < n ? names[c] : "?";
}

const char *ctxmon_invol_cause_name(unsigned c)
{
	static const char *const n[] = { "wakeup", "wakeup_irq", "slice",
					 "yield", "other" };

	return name_of(n, ARRAY_SIZE(n), c);
}

const char *ctxmon_vol_cause_name(unsigned c)
{
	static const char *const n[] = { "syscall", "no_syscall", "unknown" };

	return name_of(n, ARRAY_SIZE(n), c);
}

const char *ctxmon_exit_cause_name(unsigned c)
{
	static const char *const n[] = { "syscall", "group", "signal",
					 "unknown" };

	return name_of(n, ARRAY_SIZE(n), c);
}

const char *ctxmon_wake_ctx_name(unsigned c)
{
	static const char *const n[] = { "task", "irq", "softirq", "unknown" };

	return name_of(n, ARRAY_SIZE(n), c);
}

/* ---- setup -------------------------------------------------------- */

struct causes *causes__new(const struct ctxmon_causes_opts *o)
{
	struct ctxmon_causes_opts opts = { 0 };
	struct causes *cz;

	if (o) {
		size_t sz = o->sz && o->sz < sizeof(opts) ? o->sz :
							    sizeof(opts);

		memcpy(&opts, o, sz);
	}
	cz = calloc(1, sizeof(*cz));
	if (!cz)
		return NULL;
	cz->tab = syscall_table__find(opts.arch);
	cz->sys_yield =
		ctxmon_syscall_id(cz->tab ? cz->tab->arch : "", "sched_yield");
	cz->sys_exit = ctxmon_syscall_id(cz->tab ? cz->tab->arch : "", "exit");
	cz->sys_exit_group =
		ctxmon_syscall_id(cz->tab ? cz->tab->arch : "", "exit_group");
	cz->window = opts.wakeup_window_ns ? opts.wakeup_window_ns :
					     DEFAULT_WINDOW_NS;
	cz->epoch = 1;
	return cz;
}

static void lat_acc_free(struct lat_acc *l)
{
	free(l->fine);
	l->fine = NULL;
}

void causes__free(struct causes *cz)
{
	if (!cz)
		return;
	for (size_t i = 0; i < cz->used; i++) {
		struct causes_task *cx = &cz->slabs[i / SLAB][i % SLAB];

		free(cx->sys);
		lat_acc_free(&cx->lat);
	}
	for (size_t i = 0; i < cz->nslabs; i++)
		free(cz->slabs[i]);
	free(cz->slabs);
	for (size_t i = 0; i < cz->ncpus; i++)
		lat_acc_free(&cz->cpus[i].lat);
	free(cz->cpus);
	free(cz->pairs);
	free(cz->phash);
	free(cz);
}

uint64_t causes__anomalies(const struct causes *cz)
{
	return cz ? cz->anomalies : 0;
}

struct causes_task *causes__task_new(struct causes *cz)
{
	struct causes_task *cx;

	if (cz->used == cz->nslabs * SLAB) {
		struct causes_task **s, *slab;

		s = realloc(cz->slabs, (cz->nslabs + 1) * sizeof(*s));
		if (!s)
			goto fail;
		cz->slabs = s;
		slab = calloc(SLAB, sizeof(*slab));
		if (!slab)
			goto fail;
		cz->slabs[cz->nslabs++] = slab;
	}
	cx = &cz->slabs[cz->used / SLAB][cz->used % SLAB];
	cz->used++;
	memset(cx, 0, sizeof(*cx));
	cx->cur_sys = SYS_NONE;
	cx->bucket = B_INITIAL;
	cx->wk.waker = cx->wk.waker_cpu = cx->wk.cpu = -1;
	return cx;
fail:
	cz->anomalies++;
	return NULL;
}

void causes__task_move(struct causes_task *to, struct causes_task *from)
{
	if (!to || !from)
		return;
	to->run_since = from->run_since;
	to->off_ns = from->off_ns;
	to->cur_sys = from->cur_sys;
	to->sys_epoch = from->sys_epoch;
	to->wk = from->wk;
	/* A sys[] index means nothing in the new row; the thread that calls
	 * exec is running anyway. */
	to->bucket = from->bucket == B_SYS ? B_INITIAL : from->bucket;
	to->bucket_idx = from->bucket_idx;
	from->bucket = B_DEAD;
}

static struct cpu_state *cpu_get(struct causes *cz, int32_t cpu)
{
	if (cpu < 0 || cpu >= CPU_MAX)
		return NULL;
	if ((size_t)cpu >= cz->ncpus) {
		size_t n = cz->ncpus ? cz->ncpus * 2 : 8;
		struct cpu_state *c;

		while (n <= (size_t)cpu)
			n *= 2;
		c = realloc(cz->cpus, n * sizeof(*c));
		if (!c) {
			cz->anomalies++;
			return NULL;
		}
		memset(c + cz->ncpus, 0, (n - cz->ncpus) * sizeof(*c));
		cz->cpus = c;
		cz->ncpus = n;
	}
	cz->cpus[cpu].seen = true;
	return &cz->cpus[cpu];
}

/* ---- off-CPU time ----------------------------------------------------- */

void causes__charge(struct causes_task *cx, bool asleep, uint64_t ns)
{
	struct ctxmon_offcpu *o;

	switch (cx->bucket) {
	case B_INVOL:
		o = &cx->invol[cx->bucket_idx];
		break;
	case B_SYS: {
		struct ctxmon_sys_cause *s = &cx->sys[cx->bucket_idx];

		if (asleep)
			s->sleep_ns += ns;
		else
			s->wait_ns += ns;
		/* The interval so far, so one still open counts too. */
		cx->off_ns += ns;
		if (cx->off_ns > s->max_ns)
			s->max_ns = cx->off_ns;
		o = &cx->vol[CTXMON_VOL_SYSCALL];
		break;
	}
	case B_VOL:
		o = &cx->vol[cx->bucket_idx];
		break;
	default:
		/* Off CPU with no switch-out seen to explain it: since
		 * before the capture, new, or after lost events. */
		o = &cx->initial;
		break;
	}
	if (asleep)
		o->sleep_ns += ns;
	else
		o->wait_ns += ns;
}

/* ---- wakeups and latency ---------------------------------------------- */

static uint8_t wake_ctx(const struct ctxmon_event *ev)
{
	if (ev->flags & CTXMON_EVF_IN_IRQ)
		return CTXMON_WAKE_IRQ;
	if (ev->flags & CTXMON_EVF_IN_SOFTIRQ)
		return CTXMON_WAKE_SOFTIRQ;
	return CTXMON_WAKE_TASK;
}

/*
 * @cx's task moves to @ev's migrate.dest_cpu.  A wake that puts the task
 * on another CPU moves it before the sched_wakeup (the bpf backend marks
 * that move, CTXMON_EVF_WAKE_MOVE): it tells where the task was queued
 * when the wakeup is not in the stream.  A wake makes at most one such
 * move (the task is queued after it, and a queued task is woken in
 * place), and with the wakeup in the stream both name the same CPU.
 * Balancing moves do not count, as they do not where the wakeup is.
 */
void causes__migrate(struct causes_task *cx, const struct ctxmon_event *ev)
{
	struct wake_rec *w = &cx->wk;

	if (w->pending && w->from_waking && (ev->flags & CTXMON_EVF_WAKE_MOVE))
		w->cpu = ev->migrate.dest_cpu;
}

void causes__woken_in_place(struct causes_task *cx)
{
	cx->wk.pending = false;
}

void causes__wake(struct causes *cz, struct causes_task *cx,
		  const struct ctxmon_event *ev, const struct causes_who *waker)
{
	struct wake_rec *w = &cx->wk;

	(void)cz;
	if (ev->type == CTXMON_EV_WAKEUP && w->pending && w->from_waking) {
		/* The waking named the waker and the time; the wakeup says
		 * where the task was queued (a waking gives the CPU it last
		 * ran on).  Its time is left alone, so a stream without it
		 * (CTXMON_EVENTS_WAKEUP_ALL) gives the same causes. */
		w->cpu = ev->wake.target_cpu;
		return;
	}
	/* A second waking before it ran keeps the first: that is when the
	 * account's latency began. */
	if (w->pending && w->from_waking)
		return;
	w->pending = true;
	w->ts = ev->ts;
	w->cpu = ev->wake.target_cpu;
	if (ev->type == CTXMON_EV_WAKEUP) {
		/* A lone wakeup may be recorded on the target CPU, from the
		 * wake list interrupt: neither its task nor its context is
		 * the waker's. */
		w->from_waking = false;
		w->waker = w->waker_cpu = -1;
		w->waker_comm = NULL;
		w->ctx = CTXMON_WAKE_UNKNOWN;
		w->waker_target = false;
		return;
	}
	w->from_waking = true;
	w->waker = ev->tid;
	w->waker_cpu = ev->cpu;
	w->ctx = wake_ctx(ev);
	w->waker_comm = waker ? waker->comm : NULL;
	w->waker_target = waker && waker->target;
}

static void lat_add(struct causes *cz, struct lat_acc *l,
		    const struct ctxmon_lat_ctx *c)
{
	if (!l->fine) {
		l->fine = calloc(CTXMON_FINE_BUCKETS, sizeof(*l->fine));
		if (!l->fine)
			cz->anomalies++;
	}
	if (l->fine)
		l->fine[ctxmon_fine_bucket(c->ns)]++;
	l->count++;
	l->sum += c->ns;
	if (l->count == 1 || c->ns < l->min)
		l->min = c->ns;
	if (l->count == 1 || c->ns > l->max) {
		l->max = c->ns;
		l->max_ctx = *c;
	}
	l->ctx_count[c->ctx & 3]++;
}

static uint32_t pair_hash(uint8_t kind, uint8_t ctx, int32_t from, int32_t to)
{
	uint32_t h = (uint32_t)from * 2654435761u;

	h ^= ((uint32_t)to + 0x9e3779b9u + (h << 6) + (h >> 2));
	h ^= (uint32_t)kind << 28 ^ (uint32_t)ctx << 24;
	return h * 2246822519u;
}

static int pairs_rehash(struct causes *cz, size_t cap)
{
	uint32_t *h = malloc(cap * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		h[i] = EMPTY;
	for (size_t i = 0; i < cz->npairs; i++) {
		const struct ctxmon_pair *p = &cz->pairs[i];
		size_t j = pair_hash(p->kind, p->ctx, p->from_tid, p->to_tid) &
			   (cap - 1);

		while (h[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i;
	}
	free(cz->phash);
	cz->phash = h;
	cz->phcap = cap;
	return 0;
}

/* The pair's entry, created if new; NULL when out of memory. */
static struct ctxmon_pair *pair_get(struct causes *cz, uint8_t kind,
				    uint8_t ctx, int32_t from, int32_t to)
{
	struct ctxmon_pair *p;
	size_t j;

	if ((cz->npairs + 1) * 2 > cz->phcap &&
	    pairs_rehash(cz, cz->phcap ? cz->phcap * 2 : 256) < 0)
		goto fail;
	j = pair_hash(kind, ctx, from, to) & (cz->phcap - 1);
	while (cz->phash[j] != EMPTY) {
		p = &cz->pairs[cz->phash[j]];
		if (p->kind == kind && p->ctx == ctx && p->from_tid == from &&
		    p->to_tid == to)
			return p;
		j = (j + 1) & (cz->phcap - 1);
	}
	if (cz->npairs == cz->pcap) {
		size_t cap = cz->pcap ? cz->pcap * 2 : 128;

		p = realloc(cz->pairs, cap * sizeof(*p));
		if (!p)
			goto fail;
		cz->pairs = p;
		cz->pcap = cap;
	}
	p = &cz->pairs[cz->npairs];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->ctx = ctx;
	p->from_tid = from;
	p->to_tid = to;
	cz->phash[j] = (uint32_t)cz->npairs++;
	return p;
fail:
	cz->anomalies++;
	return NULL;
}

void causes__latency(struct causes *cz, struct causes_task *cx, int32_t cpu,
		     int32_t prev_tid, uint64_t ts, uint64_t ns,
		     int32_t waker_tid, const struct causes_who *who,
		     const char *prev_comm)
{
	const struct wake_rec *w = &cx->wk;
	struct ctxmon_lat_ctx c = {
		.ns = ns,
		.wake_ts = ts - ns,
		.run_ts = ts,
		.tid = who->tid,
		.waker_tid = waker_tid,
		.waker_cpu = -1,
		.cpu = cpu,
		.prev_tid = prev_tid,
		.ctx = waker_tid >= 0 ? CTXMON_WAKE_TASK : CTXMON_WAKE_UNKNOWN,
		.comm = who->comm,
		.prev_comm = prev_comm,
	};
	struct cpu_state *cs = cpu_get(cz, cpu);
	struct ctxmon_pair *p;
	bool wtarget = false;
	int32_t from;

	/* The account started this latency at the waking recorded here
	 * unless events were lost in between. */
	if (w->pending && w->from_waking && w->waker == waker_tid) {
		c.waker_cpu = w->waker_cpu;
		c.ctx = w->ctx;
		c.waker_comm = w->waker_comm;
		wtarget = w->waker_target;
	}
	lat_add(cz, &cx->lat, &c);
	if (cs)
		lat_add(cz, &cs->lat, &c);
	/* From an interrupt, the task it hit is not the waker. */
	from = c.ctx == CTXMON_WAKE_IRQ || c.ctx == CTXMON_WAKE_SOFTIRQ ?
		       -1 :
		       waker_tid;
	p = pair_get(cz, CTXMON_PAIR_WAKE, c.ctx, from, who->tid);
	if (!p)
		return;
	p->count++;
	p->lat_sum_ns += ns;
	if (ns > p->lat_max_ns)
		p->lat_max_ns = ns;
	if (from >= 0 && c.waker_comm)
		p->from_comm = c.waker_comm;
	if (who->comm)
		p->to_comm = who->comm;
	p->target = p->target || who->target || (from >= 0 && wtarget);
}

/* ---- switch-outs --------------------------------------------------------- */

static bool sys_known(const struct causes *cz, const struct causes_task *cx)
{
	return cx->sys_epoch == cz->epoch;
}

/* Index of @id in @cx's syscall table, added if new; -1 when out of
 * memory. */
static int sys_slot(struct causes *cz, struct causes_task *cx, long id)
{
	struct ctxmon_sys_cause *s;

	for (uint32_t i = 0; i < cx->nsys; i++)
		if (cx->sys[i].id == id)
			return (int)i;
	if (cx->nsys == cx->syscap) {
		uint32_t cap = cx->syscap ? cx->syscap * 2 : 4;

		s = realloc(cx->sys, cap * sizeof(*s));
		if (!s) {
			cz->anomalies++;
			return -1;
		}
		cx->sys = s;
		cx->syscap = cap;
	}
	s = &cx->sys[cx->nsys];
	memset(s, 0, sizeof(*s));
	s->id = id;
	return (int)cx->nsys++;
}

static unsigned exit_cause(const struct causes *cz, const struct causes_task *p,
			   const struct causes_task *leader)
{
	bool known = sys_known(cz, p);

	if (known && p->cur_sys >= 0 &&
	    (p->cur_sys == cz->sys_exit || p->cur_sys == cz->sys_exit_group))
		return CTXMON_EXIT_SYSCALL;
	if (leader && leader->group_exit)
		return CTXMON_EXIT_GROUP;
	return known && cz->sys_exit >= 0 ? CTXMON_EXIT_SIGNAL :
					    CTXMON_EXIT_UNKNOWN;
}

/*
 * An involuntary switch of @p for @n.  The order matters: a thread that
 * called schedule() itself while runnable (yield, or inside another
 * syscall) did so whoever was waiting; otherwise a task woken onto this CPU
 * while @p ran, and switched in right after, is why @p had to go; with no
 * such wakeup its slice ended.
 */
static unsigned invol_cause(const struct causes *cz,
			    const struct causes_task *p,
			    const struct causes_task *n,
			    const struct ctxmon_event *ev, uint64_t ts)
{
	bool known = sys_known(cz, p);

	if (known && !ev->sw.preempt && p->cur_sys != SYS_NONE) {
		if (p->cur_sys == cz->sys_yield)
			return CTXMON_INVOL_YIELD;
		return CTXMON_INVOL_OTHER;
	}
	if (n && n->wk.pending && n->wk.cpu == ev->cpu &&
	    n->wk.ts >= p->run_since && ts - n->wk.ts <= cz->window)
		return n->wk.ctx == CTXMON_WAKE_IRQ ||
				       n->wk.ctx == CTXMON_WAKE_SOFTIRQ ?
			       CTXMON_INVOL_WAKEUP_IRQ :
			       CTXMON_INVOL_WAKEUP;
	return CTXMON_INVOL_SLICE;
}

static void switch_out(struct causes *cz, struct causes_task *p,
		       struct causes_task *leader, unsigned kind,
		       const struct causes_task *n,
		       const struct ctxmon_event *ev, uint64_t ts,
		       const struct causes_who *pw, const struct causes_who *nw)
{
	unsigned c;
	int i;

	p->off_ns = 0;
	switch (kind) {
	case CTXMON_SW_EXIT:
		p->exit[exit_cause(cz, p, leader)]++;
		p->bucket = B_DEAD;
		return;
	case CTXMON_SW_VOLUNTARY:
		c = CTXMON_VOL_UNKNOWN;
		if (sys_known(cz, p))
			c = p->cur_sys == SYS_NONE ? CTXMON_VOL_NOSYSCALL :
						     CTXMON_VOL_SYSCALL;
		i = c == CTXMON_VOL_SYSCALL ? sys_slot(cz, p, p->cur_sys) : -1;
		if (c == CTXMON_VOL_SYSCALL && i < 0)
			c = CTXMON_VOL_UNKNOWN;
		p->vol[c].count++;
		if (i >= 0) {
			p->sys[i].count++;
			p->bucket = B_SYS;
			p->bucket_idx = (uint32_t)i;
		} else {
			p->bucket = B_VOL;
			p->bucket_idx = c;
		}
		return;
	default:
		c = invol_cause(cz, p, n, ev, ts);
		p->invol[c].count++;
		p->bucket = B_INVOL;
		p->bucket_idx = c;
		if (c == CTXMON_INVOL_WAKEUP || c == CTXMON_INVOL_WAKEUP_IRQ) {
			struct ctxmon_pair *pr;

			pr = pair_get(cz, CTXMON_PAIR_PREEMPT, n->wk.ctx,
				      nw->tid, pw->tid);
			if (pr) {
				pr->count++;
				pr->from_comm = nw->comm ? nw->comm :
							   pr->from_comm;
				pr->to_comm = pw->comm ? pw->comm : pr->to_comm;
				pr->target = pr->target || pw->target ||
					     nw->target;
			}
		}
		return;
	}
}

void causes__switch(struct causes *cz, struct causes_task *prev,
		    struct causes_task *leader, unsigned kind,
		    struct causes_task *next, const struct ctxmon_event *ev,
		    uint64_t ts, const struct causes_who *pw,
		    const struct causes_who *nw)
{
	if (prev)
		switch_out(cz, prev, leader, kind, next, ev, ts, pw, nw);
	if (!next)
		return;
	next->bucket = B_ONCPU;
	next->run_since = ts;
	next->wk.pending = false;
}

/* ---- syscalls, irqs, loss ------------------------------------------------ */

void causes__event(struct causes *cz, struct causes_task *cur,
		   struct causes_task *leader, const struct ctxmon_event *ev,
		   uint64_t ts)
{
	struct cpu_state *c;
	uint64_t d;

	switch (ev->type) {
	case CTXMON_EV_SYS_ENTER:
		if (!cur)
			return;
		cur->cur_sys = ev->sys.id < 0 ? SYS_NONE : (long)ev->sys.id;
		cur->sys_epoch = cz->epoch;
		if (cz->sys_exit_group >= 0 && ev->sys.id == cz->sys_exit_group)
			(leader ? leader : cur)->group_exit = true;
		return;
	case CTXMON_EV_SYS_EXIT:
		if (!cur)
			return;
		cur->cur_sys = SYS_NONE;
		cur->sys_epoch = cz->epoch;
		return;
	case CTXMON_EV_LOST:
		/* Any task may have entered or left a syscall unseen. */
		cz->epoch++;
		c = cpu_get(cz, ev->cpu);
		if (c)
			c->in_hard = c->in_soft = false;
		return;
	default:
		break;
	}
	c = cpu_get(cz, ev->cpu);
	if (!c)
		return;
	switch (ev->type) {
	case CTXMON_EV_IRQ_ENTRY:
		c->in_hard = true;
		c->hard_ts = ts;
		if (cur)
			cur->irq_count++;
		break;
	case CTXMON_EV_IRQ_EXIT:
		if (!c->in_hard)
			break; /* began before the capture */
		c->in_hard = false;
		d = ts - c->hard_ts;
		if (c->in_soft)
			c->hard_in_soft += d;
		if (cur)
			cur->irq_ns += d;
		break;
	case CTXMON_EV_SOFTIRQ_ENTRY:
		c->in_soft = true;
		c->soft_ts = ts;
		c->hard_in_soft = 0;
		if (cur)
			cur->softirq_count++;
		break;
	case CTXMON_EV_SOFTIRQ_EXIT:
		if (!c->in_soft)
			break;
		c->in_soft = false;
		d = ts - c->soft_ts;
		d -= d < c->hard_in_soft ? d : c->hard_in_soft;
		if (cur)
			cur->softirq_ns += d;
		break;
	default:
		break;
	}
}

/* ---- intervals ---------------------------------------------------------- */

static void lat_acc_zero(struct lat_acc *l)
{
	uint64_t *fine = l->fine;

	memset(l, 0, sizeof(*l));
	l->fine = fine;
	if (fine)
		memset(fine, 0, CTXMON_FINE_BUCKETS * sizeof(*fine));
}

void causes__reset(struct causes *cz)
{
	for (size_t i = 0; i < cz->used; i++) {
		struct causes_task *cx = &cz->slabs[i / SLAB][i % SLAB];

		memset(cx->invol, 0, sizeof(cx->invol));
		memset(cx->vol, 0, sizeof(cx->vol));
		memset(cx->exit, 0, sizeof(cx->exit));
		memset(&cx->initial, 0, sizeof(cx->initial));
		/* Entries stay: an off-CPU interval may still be charged to
		 * one. */
		for (uint32_t j = 0; j < cx->nsys; j++) {
			long id = cx->sys[j].id;

			memset(&cx->sys[j], 0, sizeof(cx->sys[j]));
			cx->sys[j].id = id;
		}
		cx->irq_count = cx->irq_ns = 0;
		cx->softirq_count = cx->softirq_ns = 0;
		lat_acc_zero(&cx->lat);
	}
	for (size_t i = 0; i < cz->ncpus; i++)
		lat_acc_zero(&cz->cpus[i].lat);
	cz->npairs = 0;
	for (size_t i = 0; i < cz->phcap; i++)
		cz->phash[i] = EMPTY;
}
