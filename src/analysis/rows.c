/*
 * rows.c - per-thread, per-process and per-CPU rows, whichever backend
 * ran (include/ctxmon/rows.h).
 *
 * A streaming session's numbers come from its account; a counting one's
 * (bpf-agg, proc) from the backend, cumulative since capture start, which
 * this file turns into intervals (each row less the same thread's row in
 * the previous snapshot) and rolls up into processes by the account's rule,
 * (tgid, process generation).  The CLI, exporters and embedding programs
 * all read rows from here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include <ctxmon/rows.h>

struct ctxmon_rowset {
	struct ctxmon_session *s;
	struct ctxmon_account *a;
	bool interval;
	bool counting;
	int (*read_rows)(void *ctx, uint64_t ts, struct ctxmon_stats **rows,
			 size_t *n);
	void *read_ctx;
	struct ctxmon_stats *prev;	/* counting: last cumulative rows,
					 * sorted by (tid, gen) */
	size_t nprev;
	struct ctxmon_cpu_stats *prev_cpus;	/* counting: last cumulative */
	size_t nprev_cpus;
};

static int cmp_tid_gen(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The upper edge of @l's highest histogram bucket with a count, 0 when
 * none has. */
static uint64_t hist_bound(const struct ctxmon_latency *l)
{
	for (int i = CTXMON_HIST_BUCKETS - 1; i >= 0; i--)
		if (l->hist[i])
			return i + 1 >= 64 ? UINT64_MAX : (1ull << (i + 1)) - 1;
	return 0;
}

/* @l's maximum is not known, only that it is at most its max_ns and its
 * highest bucket's upper edge: the lower of the two, marked a bound. */
static void lat_bound(struct ctxmon_latency *l)
{
	uint64_t bound = hist_bound(l);

	if (bound < l->max_ns || !l->max_ns)
		l->max_ns = bound;
	l->max_is_bound = true;
	l->max_ts = 0;
	l->max_waker_tid = l->max_cpu = l->max_prev_tid = -1;
}

/*
 * @c less @p, field by field; @c becomes the interval after @p.  Latency
 * maxima cannot be subtracted: with @ival_max the backend gave each row
 * its maximum since the last read (bpf-agg keeps it in the kernel), or
 * said it does not know it; otherwise a row keeps its maximum when it was
 * reached in the interval.  Else, and for a row that folds exited threads
 * (the maximum of one folded in may be older), only a bound is known.
 */
static void row_sub(struct ctxmon_stats *c, const struct ctxmon_stats *p,
		    bool ival_max)
{
	struct ctxmon_latency *l = &c->lat;

	c->switch_in = sub(c->switch_in, p->switch_in);
	c->switch_out = sub(c->switch_out, p->switch_out);
	c->voluntary = sub(c->voluntary, p->voluntary);
	c->involuntary = sub(c->involuntary, p->involuntary);
	c->exit_switch = sub(c->exit_switch, p->exit_switch);
	c->exit_preempt = sub(c->exit_preempt, p->exit_preempt);
	c->exit_counted = sub(c->exit_counted, p->exit_counted);
	c->after_fold = sub(c->after_fold, p->after_fold);
	c->after_fold_vol = sub(c->after_fold_vol, p->after_fold_vol);
	c->exit_block = sub(c->exit_block, p->exit_block);
	c->shown_running = sub(c->shown_running, p->shown_running);
	c->run_ns = sub(c->run_ns, p->run_ns);
	c->wait_ns = sub(c->wait_ns, p->wait_ns);
	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		c->sleep_ns[i] = sub(c->sleep_ns[i], p->sleep_ns[i]);
	c->migrations = sub(c->migrations, p->migrations);
	c->wakeups = sub(c->wakeups, p->wakeups);
	l->count = sub(l->count, p->lat.count);
	l->sum_ns = sub(l->sum_ns, p->lat.sum_ns);
	for (int i = 0; i < CTXMON_HIST_BUCKETS; i++)
		l->hist[i] = sub(l->hist[i], p->lat.hist[i]);
	if (!l->count) {
		l->max_ns = l->max_ts = 0;
		l->max_is_bound = false;
		l->max_waker_tid = l->max_cpu = l->max_prev_tid = -1;
	} else if (c->folded ||
		   (ival_max ? l->max_is_bound :
			       p->lat.count && l->max_ts == p->lat.max_ts &&
				       l->max_ns == p->lat.max_ns)) {
		/* Without ival_max the backend keeps one maximum for the
		 * whole run, and this one was reached in an earlier
		 * interval */
		lat_bound(l);
	}
	if (p->last_ts > c->first_ts)
		c->first_ts = p->last_ts;
	if (c->last_ts < c->first_ts)
		c->last_ts = c->first_ts;
}

/* Turn @cur (cumulative, sorted in place) into the interval since the
 * previous call, keeping a copy of the cumulative rows.  0 or -ENOMEM. */
static int rows_delta(struct ctxmon_rowset *r, struct ctxmon_stats *cur,
		      size_t n, bool ival_max)
{
	struct ctxmon_stats *copy;
	size_t j = 0;

	if (n > 1)
		qsort(cur, n, sizeof(*cur), cmp_tid_gen);
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, cur, n * sizeof(*cur));
	for (size_t i = 0; i < n; i++) {
		while (j < r->nprev && cmp_tid_gen(&r->prev[j], &cur[i]) < 0)
			j++;
		if (j < r->nprev && !cmp_tid_gen(&r->prev[j], &cur[i]))
			row_sub(&cur[i], &r->prev[j], ival_max);
		else if (ival_max && cur[i].lat.count &&
			 (cur[i].folded || cur[i].lat.max_is_bound))
			lat_bound(&cur[i].lat); /* new in this interval */
	}
	free(r->prev);
	r->prev = copy;
	r->nprev = n;
	return 0;
}

/* Per-CPU numbers of a counting backend, per interval when asked. */
static struct ctxmon_cpu_stats *cpus_delta(struct ctxmon_rowset *r,
					   struct ctxmon_cpu_stats *c, size_t n)
{
	struct ctxmon_cpu_stats *p;

	if (!r->interval)
		return c;
	p = calloc(n ? n : 1, sizeof(*p));
	if (!p) {
		free(c);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		p[i] = c[i];
		for (size_t j = 0; j < r->nprev_cpus; j++) {
			const struct ctxmon_cpu_stats *o = &r->prev_cpus[j];

			if (o->cpu != c[i].cpu)
				continue;
			p[i].busy_ns -= o->busy_ns;
			p[i].idle_ns -= o->idle_ns;
			p[i].switches -= o->switches;
			p[i].first_ts = o->last_ts;
		}
	}
	free(r->prev_cpus);
	r->prev_cpus = c;
	r->nprev_cpus = n;
	return p;
}

/* The row of generation @gen of @tid, or NULL. */
static const struct ctxmon_stats *row_gen(const struct ctxmon_stats *th,
					  size_t n, pid_t tid, uint32_t gen)
{
	for (size_t i = 0; i < n; i++)
		if (th[i].tid == tid && th[i].gen == gen)
			return &th[i];
	return NULL;
}

/* A leader row's process: its own generation, but where an exec in a
 * thread began it (took_over), the process of the generation before. */
static uint32_t leader_pgen(const struct ctxmon_stats *th, size_t n,
			    const struct ctxmon_stats *t)
{
	uint32_t g = t->gen;

	while (t && t->took_over && g > 0)
		t = row_gen(th, n, t->tid, --g);
	return g;
}

/*
 * Counting backends number generations per tid but do not say which
 * generation of its process a thread belongs to: take the leader row
 * (tid == tgid) that was there last when the thread was first seen.
 */
static void assign_pgen(struct ctxmon_stats *th, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ctxmon_stats *t = &th[i];

		if (t->tgid <= 0 || t->tid == t->tgid)
			t->pgen = leader_pgen(th, n, t);
	}
	for (size_t i = 0; i < n; i++) {
		struct ctxmon_stats *t = &th[i];
		uint64_t best = 0;
		bool found = false;

		if (t->tgid <= 0 || t->tid == t->tgid)
			continue;
		t->pgen = 0;
		for (size_t j = 0; j < n; j++) {
			const struct ctxmon_stats *l = &th[j];

			if (l->tid != t->tgid || l->first_ts > t->first_ts)
				continue;
			if (!found || l->first_ts >= best) {
				best = l->first_ts;
				t->pgen = l->pgen;
				found = true;
			}
		}
	}
}

static pid_t proc_key(const struct ctxmon_stats *t)
{
	return t->tgid > 0 ? t->tgid : t->tid;
}

static uint32_t proc_gen(const struct ctxmon_stats *t)
{
	return t->tgid > 0 ? t->pgen : t->gen;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = *(const struct ctxmon_stats *const *)pa;
	const struct ctxmon_stats *b = *(const struct ctxmon_stats *const *)pb;
	pid_t ka = proc_key(a), kb = proc_key(b);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (proc_gen(a) != proc_gen(b))
		return proc_gen(a) < proc_gen(b) ? -1 : 1;
	/* the leader first, so it names the process: its latest row, where
	 * an exec in a thread took the leader's place (took_over) */
	if ((a->tid == ka) != (b->tid == kb))
		return a->tid == ka ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->tid == ka)
		return a->gen > b->gen ? -1 : a->gen < b->gen;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

struct ctxmon_stats *ctxmon_rows_processes(const struct ctxmon_stats *th,
					   size_t n, size_t *np)
{
	const struct ctxmon_stats **ord;
	struct ctxmon_stats *out;
	size_t cnt = 0;

	if (!np || (n && !th)) {
		errno = EINVAL;
		return NULL;
	}
	ord = malloc((n ? n : 1) * sizeof(*ord));
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!ord || !out) {
		free(ord);
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = &th[i];
	if (n > 1)
		qsort(ord, n, sizeof(*ord), cmp_proc);
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *t = ord[i];
		pid_t key = proc_key(t);
		uint32_t pgen = proc_gen(t);
		struct ctxmon_stats *p = cnt ? &out[cnt - 1] : NULL;

		if (t->folded) {
			out[cnt++] = *t; /* a process row of its own */
			continue;
		}
		if (!p || p->folded || p->tid != key || p->gen != pgen) {
			p = &out[cnt++];
			memset(p, 0, sizeof(*p));
			p->tid = key;
			p->tgid = key;
			p->gen = p->pgen = pgen;
			p->ppid = t->ppid;
			p->comm = t->comm;
			p->exited = true;
			p->target = t->target;
			p->first_ts = t->first_ts;
			p->last_ts = t->last_ts;
			p->lat.max_waker_tid = p->lat.max_cpu = -1;
			p->lat.max_prev_tid = -1;
		}
		p->nthreads++;
		p->exited = p->exited && t->exited;
		p->target = p->target || t->target;
		if (t->first_ts < p->first_ts)
			p->first_ts = t->first_ts;
		if (t->last_ts > p->last_ts)
			p->last_ts = t->last_ts;
		ctxmon_stats_add(p, t);
	}
	free(ord);
	*np = cnt;
	return out;
}

struct ctxmon_rowset *ctxmon_rowset_new(const struct ctxmon_rowset_opts *o)
{
	struct ctxmon_rowset *r;

	if (!o || o->sz < sizeof(*o) ||
	    (!o->session && !o->account && !o->read_rows)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->s = o->session;
	r->a = o->account;
	r->interval = o->interval;
	r->read_rows = o->read_rows;
	r->read_ctx = o->read_ctx;
	r->counting = o->read_rows ||
		      (r->s && (ctxmon_session_caps(r->s) & CTXMON_CAP_COUNTS));
	if (!r->counting && !r->a) {
		free(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

void ctxmon_rowset_free(struct ctxmon_rowset *r)
{
	if (!r)
		return;
	free(r->prev);
	free(r->prev_cpus);
	free(r);
}

void ctxmon_snapshot_clear(struct ctxmon_snapshot *s)
{
	if (!s)
		return;
	free(s->threads);
	free(s->procs);
	free(s->cpus);
	memset(s, 0, sizeof(*s));
}

static int snapshot_counting(struct ctxmon_rowset *r, uint64_t ts,
			     struct ctxmon_snapshot *out)
{
	struct ctxmon_cpu_stats *c = NULL;
	bool ival_max = false;
	int ret;

	if (r->read_rows)
		ret = r->read_rows(r->read_ctx, ts, &out->threads,
				   &out->nthreads);
	else
		ret = session__read_rows(r->s, &ts, &out->threads,
					 &out->nthreads, r->interval,
					 &ival_max);
	if (ret < 0)
		return ret;
	out->ts = ts;
	assign_pgen(out->threads, out->nthreads);
	if (r->interval) {
		ret = rows_delta(r, out->threads, out->nthreads, ival_max);
		if (ret < 0)
			return ret;
	}
	out->procs = ctxmon_rows_processes(out->threads, out->nthreads,
					   &out->nprocs);
	if (!out->procs)
		return -errno;
	if (r->s && session__read_cpus(r->s, ts, &c, &out->ncpus) == 0) {
		out->cpus = cpus_delta(r, c, out->ncpus);
	} else if (r->a) {
		out->cpus = ctxmon_account_cpus(r->a, &out->ncpus);
	} else {
		out->ncpus = 0;
		out->cpus = calloc(1, sizeof(*out->cpus));
	}
	return out->cpus ? 0 : -ENOMEM;
}

int ctxmon_rowset_snapshot(struct ctxmon_rowset *r, uint64_t ts,
			 struct ctxmon_snapshot *out)
{
	int ret = -ENOMEM;

	if (!r || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->ts = ts;
	if (r->counting) {
		ret = snapshot_counting(r, ts, out);
		goto out;
	}
	ctxmon_account_finish(r->a, ts);
	out->threads = ctxmon_account_rows(r->a, CTXMON_ROWS_THREADS, false,
					   &out->nthreads);
	out->procs = ctxmon_account_rows(r->a, CTXMON_ROWS_PROCESSES, false,
					 &out->nprocs);
	out->cpus = ctxmon_account_cpus(r->a, &out->ncpus);
	if (out->threads && out->procs && out->cpus)
		ret = 0;
out:
	if (ret < 0) {
		ctxmon_snapshot_clear(out);
		out->ts = ts;
	}
	return ret;
}

void ctxmon_rowset_next(struct ctxmon_rowset *r, uint64_t ts)
{
	if (!r || !r->interval)
		return;
	/* an exited thread is shown in the interval it ended in, and then
	 * forgotten, so that a long run does not grow */
	if (r->counting && r->s)
		session__forget_exited(r->s);
	if (r->a) {
		ctxmon_account_forget_exited(r->a);
		ctxmon_account_reset_interval(r->a, ts);
	}
}
