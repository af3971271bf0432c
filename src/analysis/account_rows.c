/*
 * account_rows.c - the numbers an account hands out: thread rows, their
 * roll-up into processes by (tgid, process generation), per-CPU rows, and
 * the cause analysis' rows (include/ctxmon/ctxmon.h, causes.h).  The state
 * they read is kept by account.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/account.h"

/* @l into @p.  A maximum that is a bound stays one where it is the
 * larger: the sum's maximum is then known only to be at most it. */
static void lat_merge(struct ctxmon_latency *p, const struct ctxmon_latency *l)
{
	if (l->count && (!p->count || l->max_ns > p->max_ns)) {
		p->max_ns = l->max_ns;
		p->max_is_bound = l->max_is_bound;
		p->max_ts = l->max_ts;
		p->max_waker_tid = l->max_waker_tid;
		p->max_cpu = l->max_cpu;
		p->max_prev_tid = l->max_prev_tid;
	}
	p->count += l->count;
	p->sum_ns += l->sum_ns;
	for (unsigned i = 0; i < CTXMON_HIST_BUCKETS; i++)
		p->hist[i] += l->hist[i];
}

void ctxmon_stats_add(struct ctxmon_stats *p, const struct ctxmon_stats *s)
{
	p->incomplete = p->incomplete || s->incomplete;
	p->switch_in += s->switch_in;
	p->switch_out += s->switch_out;
	p->voluntary += s->voluntary;
	p->involuntary += s->involuntary;
	p->exit_switch += s->exit_switch;
	p->exit_preempt += s->exit_preempt;
	p->exit_counted += s->exit_counted;
	p->after_fold += s->after_fold;
	p->after_fold_vol += s->after_fold_vol;
	p->exit_block += s->exit_block;
	p->shown_running += s->shown_running;
	p->run_ns += s->run_ns;
	p->wait_ns += s->wait_ns;
	for (unsigned i = 0; i < CTXMON_SLEEP__MAX; i++)
		p->sleep_ns[i] += s->sleep_ns[i];
	p->migrations += s->migrations;
	p->wakeups += s->wakeups;
	lat_merge(&p->lat, &s->lat);
}

/* Add thread @t into process row @p; @span says whether @p has a span. */
static void proc_add(struct ctxmon_stats *p, bool *span, const struct task *t)
{
	const struct ctxmon_stats *s = &t->st;

	if (t->in_span) {
		if (!*span || s->first_ts < p->first_ts)
			p->first_ts = s->first_ts;
		if (!*span || s->last_ts > p->last_ts)
			p->last_ts = s->last_ts;
		*span = true;
	}
	if (s->tgid > 0)
		p->tgid = s->tgid;
	p->nthreads++;
	p->exited = p->exited && s->exited;
	p->target = p->target || s->target;
	ctxmon_stats_add(p, s);
}

struct proc_acc {
	bool span; /* the row has a first_ts/last_ts */
	bool leader; /* the comm is the leader's */
};

/* Roll threads up by (tgid, process generation) into @out; @proc_of, if
 * given, gets each task's process row (EMPTY: not selected). */
static size_t rows_processes(const struct ctxmon_account *a, bool all,
			     struct ctxmon_stats *out, struct proc_acc *acc,
			     uint32_t *index, size_t icap, uint32_t *proc_of)
{
	size_t n = 0;

	for (size_t i = 0; i < icap; i++)
		index[i] = EMPTY;
	for (size_t i = 0; i < a->ntasks; i++) {
		const struct task *t = &a->tasks[i];
		int32_t key = t->st.tgid > 0 ? t->st.tgid : t->st.tid;
		uint32_t pgen = t->st.tgid > 0 ? t->pgen : t->st.gen;
		size_t j = hash_tid(key, icap);
		struct ctxmon_stats *p;

		if (!all && !t->st.target) {
			if (proc_of)
				proc_of[i] = EMPTY;
			continue;
		}
		while (index[j] != EMPTY &&
		       (out[index[j]].tid != key || out[index[j]].gen != pgen))
			j = (j + 1) & (icap - 1);
		if (index[j] == EMPTY) {
			index[j] = (uint32_t)n;
			p = &out[n];
			memset(p, 0, sizeof(*p));
			p->tid = key;
			p->tgid = -1;
			p->ppid = -1;
			p->gen = pgen;
			p->pgen = pgen;
			p->comm = t->st.comm;
			p->exited = true;
			stats_init(p);
			acc[n].span = acc[n].leader = false;
			n++;
		}
		p = &out[index[j]];
		if (proc_of)
			proc_of[i] = index[j];
		if (t->st.tid == key) {
			p->comm = t->st.comm;
			p->ppid = t->st.ppid;
			acc[index[j]].leader = true;
		}
		proc_add(p, &acc[index[j]].span, t);
	}
	/* A leader that is not in the selection still names its process. */
	for (size_t i = 0; i < n; i++) {
		const struct task *l = task_find(a, out[i].tid);

		if (!acc[i].leader && l && l->st.tgid == out[i].tid &&
		    l->pgen == out[i].gen)
			out[i].comm = l->st.comm;
	}
	return n;
}

/* exit_lead_ns went into the tail padding: arrays of rows keep their
 * stride (where uint64_t is 8-aligned, as on every 64-bit ABI) */
_Static_assert(__alignof__(uint64_t) != 8 ||
		       sizeof(struct ctxmon_stats) ==
			       offsetof(struct ctxmon_stats, took_over) + 8,
	       "struct ctxmon_stats keeps its size");

/* ctxmon_stats.exit_lead_ns of @t */
static uint32_t exit_lead(const struct task *t)
{
	uint64_t d;

	if (!t->exit_ts || t->st.last_ts < t->exit_ts)
		return 0;
	d = t->st.last_ts - t->exit_ts;
	return d >= UINT32_MAX ? UINT32_MAX : d ? (uint32_t)d : 1;
}

struct ctxmon_stats *ctxmon_account_rows(const struct ctxmon_account *a,
					 enum ctxmon_rows kind, bool all,
					 size_t *n)
{
	struct ctxmon_stats *out = NULL;
	struct proc_acc *acc = NULL;
	uint32_t *index = NULL;
	size_t cnt = 0, icap = 16;
	int err = -EINVAL;

	if (!a || !n ||
	    (kind != CTXMON_ROWS_THREADS && kind != CTXMON_ROWS_PROCESSES))
		goto out;
	err = -ENOMEM;
	out = malloc((a->ntasks + a->fold.n + 1) * sizeof(*out));
	if (!out)
		goto out;
	if (kind == CTXMON_ROWS_THREADS) {
		for (size_t i = 0; i < a->ntasks; i++)
			if (all || a->tasks[i].st.target) {
				const struct task *t = &a->tasks[i];

				out[cnt] = t->st;
				out[cnt].exit_lead_ns = exit_lead(t);
				out[cnt++].pgen =
					t->st.tgid > 0 ? t->pgen : t->st.gen;
			}
		for (size_t i = 0; i < a->fold.n; i++)
			if (all || a->fold.rows[i].target)
				out[cnt++] = a->fold.rows[i];
		err = 0;
		goto out;
	}
	while (icap < a->ntasks * 2)
		icap *= 2;
	acc = malloc((a->ntasks ? a->ntasks : 1) * sizeof(*acc));
	index = malloc(icap * sizeof(*index));
	if (!acc || !index)
		goto out;
	cnt = rows_processes(a, all, out, acc, index, icap, NULL);
	/* a folded row is a process row of its own */
	for (size_t i = 0; i < a->fold.n; i++)
		if (all || a->fold.rows[i].target)
			out[cnt++] = a->fold.rows[i];
	err = 0;
out:
	free(acc);
	free(index);
	if (err) {
		free(out);
		errno = -err;
		return NULL;
	}
	*n = cnt;
	return out;
}

struct ctxmon_cpu_stats *ctxmon_account_cpus(const struct ctxmon_account *a,
					     size_t *n)
{
	struct ctxmon_cpu_stats *out;
	size_t cnt = 0;

	if (!a || !n) {
		errno = EINVAL;
		return NULL;
	}
	out = malloc((a->ncpus ? a->ncpus : 1) * sizeof(*out));
	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < a->ncpus; i++)
		if (a->cpus[i].seen)
			out[cnt++] = a->cpus[i].st;
	*n = cnt;
	return out;
}

uint64_t ctxmon_account_anomalies(const struct ctxmon_account *a)
{
	return a ? a->anomalies + causes__anomalies(a->cz) : 0;
}

/* ---- causes (include/ctxmon/causes.h) ------------------------------ */

int ctxmon_account_enable_causes(struct ctxmon_account *a,
				 const struct ctxmon_causes_opts *o)
{
	if (!a)
		return -EINVAL;
	if (a->cz || a->fed)
		return -EBUSY;
	a->cz = causes__new(o);
	if (!a->cz)
		return -ENOMEM;
	/* Rows declared before (ctxmon_account_add_task). */
	for (size_t i = 0; i < a->ntasks; i++)
		a->tasks[i].cx = causes__task_new(a->cz);
	return 0;
}

struct ctxmon_causes *ctxmon_account_causes(const struct ctxmon_account *a,
					    enum ctxmon_rows kind, bool all,
					    size_t *n)
{
	struct ctxmon_causes *out = NULL;
	struct ctxmon_stats *procs = NULL;
	struct proc_acc *acc = NULL;
	uint32_t *index = NULL, *proc_of = NULL;
	size_t cnt = 0, icap = 16, rows;
	int err = -EINVAL;

	if (!a || !n || !a->cz ||
	    (kind != CTXMON_ROWS_THREADS && kind != CTXMON_ROWS_PROCESSES))
		goto out;
	err = -ENOMEM;
	rows = a->ntasks ? a->ntasks : 1;
	out = calloc(rows, sizeof(*out));
	if (!out)
		goto out;
	if (kind == CTXMON_ROWS_THREADS) {
		for (size_t i = 0; i < a->ntasks; i++) {
			const struct task *t = &a->tasks[i];
			struct ctxmon_causes *c = &out[cnt];

			if (!all && !t->st.target)
				continue;
			c->tid = t->st.tid;
			c->gen = t->st.gen;
			cnt++;
			if (t->cx && causes__row(t->cx, c) < 0)
				goto out;
		}
		err = 0;
		goto out;
	}
	/* The same rollup as ctxmon_account_rows(), so rows match. */
	while (icap < a->ntasks * 2)
		icap *= 2;
	procs = malloc(rows * sizeof(*procs));
	acc = malloc(rows * sizeof(*acc));
	index = malloc(icap * sizeof(*index));
	proc_of = malloc(rows * sizeof(*proc_of));
	if (!procs || !acc || !index || !proc_of)
		goto out;
	cnt = rows_processes(a, all, procs, acc, index, icap, proc_of);
	for (size_t i = 0; i < cnt; i++) {
		out[i].tid = procs[i].tid;
		out[i].gen = procs[i].gen;
	}
	for (size_t i = 0; i < a->ntasks; i++)
		if (proc_of[i] != EMPTY && a->tasks[i].cx &&
		    causes__row_add(&out[proc_of[i]], a->tasks[i].cx) < 0)
			goto out;
	for (size_t i = 0; i < cnt; i++)
		causes__row_finish(&out[i]);
	err = 0;
out:
	free(procs);
	free(acc);
	free(index);
	free(proc_of);
	if (err) {
		ctxmon_causes_free(out, out ? a->ntasks : 0);
		errno = -err;
		return NULL;
	}
	*n = cnt;
	return out;
}

struct ctxmon_cpu_latency *ctxmon_account_cpu_latency(
	const struct ctxmon_account *a, size_t *n)
{
	if (!a || !n || !a->cz) {
		errno = EINVAL;
		return NULL;
	}
	return causes__cpu_latency(a->cz, n);
}

struct ctxmon_pair *ctxmon_account_pairs(const struct ctxmon_account *a,
					 bool all, size_t *n)
{
	if (!a || !n || !a->cz) {
		errno = EINVAL;
		return NULL;
	}
	return causes__pairs(a->cz, all, n);
}
