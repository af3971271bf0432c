/*
 * causes_rows.c - the rows of the cause analysis: a task's causes as a
 * struct ctxmon_causes (summed per process by row_add), the latency of each
 * CPU, and the wakeup/preemption pairs, sorted.  Quantiles come from the
 * fine latency histograms; see causes.c for how the state is kept.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/causes_int.h"

/* ---- rows ----------------------------------------------------------------- */

static int lat_fill(struct ctxmon_lat_summary *s, const struct lat_acc *l)
{
	memset(s, 0, sizeof(*s));
	s->count = l->count;
	s->sum_ns = l->sum;
	s->min_ns = l->min;
	s->max_ns = l->max;
	memcpy(s->ctx_count, l->ctx_count, sizeof(s->ctx_count));
	s->max = l->max_ctx;
	if (!l->count || !l->fine)
		return 0;
	s->fine = malloc(CTXMON_FINE_BUCKETS * sizeof(*s->fine));
	if (!s->fine)
		return -ENOMEM;
	memcpy(s->fine, l->fine, CTXMON_FINE_BUCKETS * sizeof(*s->fine));
	return 0;
}

static void lat_quantiles(struct ctxmon_lat_summary *s)
{
	s->p50_ns = ctxmon_lat_quantile(s, 0.50);
	s->p90_ns = ctxmon_lat_quantile(s, 0.90);
	s->p99_ns = ctxmon_lat_quantile(s, 0.99);
	s->p999_ns = ctxmon_lat_quantile(s, 0.999);
}

static int cmp_sys(const void *x, const void *y)
{
	const struct ctxmon_sys_cause *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->sleep_ns + a->wait_ns != b->sleep_ns + b->wait_ns)
		return a->sleep_ns + a->wait_ns < b->sleep_ns + b->wait_ns ? 1 :
									     -1;
	return (a->id > b->id) - (a->id < b->id);
}

static bool sys_empty(const struct ctxmon_sys_cause *s)
{
	return !s->count && !s->sleep_ns && !s->wait_ns;
}

int causes__row(const struct causes_task *cx, struct ctxmon_causes *out)
{
	size_t n = 0;

	memcpy(out->invol, cx->invol, sizeof(out->invol));
	memcpy(out->vol, cx->vol, sizeof(out->vol));
	memcpy(out->exit, cx->exit, sizeof(out->exit));
	out->initial = cx->initial;
	out->irq_count = cx->irq_count;
	out->irq_ns = cx->irq_ns;
	out->softirq_count = cx->softirq_count;
	out->softirq_ns = cx->softirq_ns;
	for (uint32_t i = 0; i < cx->nsys; i++)
		n += !sys_empty(&cx->sys[i]);
	if (n) {
		out->sys = malloc(n * sizeof(*out->sys));
		if (!out->sys)
			return -ENOMEM;
		for (uint32_t i = 0; i < cx->nsys; i++)
			if (!sys_empty(&cx->sys[i]))
				out->sys[out->nsys++] = cx->sys[i];
		qsort(out->sys, out->nsys, sizeof(*out->sys), cmp_sys);
	}
	if (lat_fill(&out->lat, &cx->lat) < 0)
		return -ENOMEM;
	lat_quantiles(&out->lat);
	return 0;
}

static void offcpu_add(struct ctxmon_offcpu *a, const struct ctxmon_offcpu *b)
{
	a->count += b->count;
	a->sleep_ns += b->sleep_ns;
	a->wait_ns += b->wait_ns;
}

int causes__row_add(struct ctxmon_causes *p, const struct causes_task *cx)
{
	const struct lat_acc *l = &cx->lat;
	struct ctxmon_lat_summary *s = &p->lat;

	for (unsigned i = 0; i < CTXMON_INVOL__MAX; i++)
		offcpu_add(&p->invol[i], &cx->invol[i]);
	for (unsigned i = 0; i < CTXMON_VOL__MAX; i++)
		offcpu_add(&p->vol[i], &cx->vol[i]);
	for (unsigned i = 0; i < CTXMON_EXIT__MAX; i++)
		p->exit[i] += cx->exit[i];
	offcpu_add(&p->initial, &cx->initial);
	p->irq_count += cx->irq_count;
	p->irq_ns += cx->irq_ns;
	p->softirq_count += cx->softirq_count;
	p->softirq_ns += cx->softirq_ns;
	for (uint32_t i = 0; i < cx->nsys; i++) {
		const struct ctxmon_sys_cause *t = &cx->sys[i];
		struct ctxmon_sys_cause *q = NULL;

		if (sys_empty(t))
			continue;
		for (size_t j = 0; j < p->nsys && !q; j++)
			if (p->sys[j].id == t->id)
				q = &p->sys[j];
		if (!q) {
			q = realloc(p->sys, (p->nsys + 1) * sizeof(*q));
			if (!q)
				return -ENOMEM;
			p->sys = q;
			q = &p->sys[p->nsys++];
			memset(q, 0, sizeof(*q));
			q->id = t->id;
		}
		q->count += t->count;
		q->sleep_ns += t->sleep_ns;
		q->wait_ns += t->wait_ns;
		if (t->max_ns > q->max_ns)
			q->max_ns = t->max_ns;
	}
	if (!l->count)
		return 0;
	if (l->fine) {
		if (!s->fine) {
			s->fine = calloc(CTXMON_FINE_BUCKETS, sizeof(*s->fine));
			if (!s->fine)
				return -ENOMEM;
		}
		for (unsigned i = 0; i < CTXMON_FINE_BUCKETS; i++)
			s->fine[i] += l->fine[i];
	}
	if (!s->count || l->min < s->min_ns)
		s->min_ns = l->min;
	if (!s->count || l->max > s->max_ns) {
		s->max_ns = l->max;
		s->max = l->max_ctx;
	}
	s->count += l->count;
	s->sum_ns += l->sum;
	for (unsigned i = 0; i < 4; i++)
		s->ctx_count[i] += l->ctx_count[i];
	return 0;
}

void causes__row_finish(struct ctxmon_causes *p)
{
	if (p->nsys > 1)
		qsort(p->sys, p->nsys, sizeof(*p->sys), cmp_sys);
	lat_quantiles(&p->lat);
}

void ctxmon_causes_free(struct ctxmon_causes *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++) {
		free(rows[i].sys);
		free(rows[i].lat.fine);
	}
	free(rows);
}

struct ctxmon_cpu_latency *causes__cpu_latency(const struct causes *cz,
					       size_t *n)
{
	struct ctxmon_cpu_latency *out;
	size_t k = 0;

	out = calloc(cz->ncpus ? cz->ncpus : 1, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < cz->ncpus; i++) {
		if (!cz->cpus[i].seen)
			continue;
		out[k].cpu = (int)i;
		if (lat_fill(&out[k].lat, &cz->cpus[i].lat) < 0) {
			ctxmon_cpu_latency_free(out, k);
			errno = ENOMEM;
			return NULL;
		}
		lat_quantiles(&out[k].lat);
		k++;
	}
	*n = k;
	return out;
}

void ctxmon_cpu_latency_free(struct ctxmon_cpu_latency *c, size_t n)
{
	if (!c)
		return;
	for (size_t i = 0; i < n; i++)
		free(c[i].lat.fine);
	free(c);
}

static int cmp_pair(const void *x, const void *y)
{
	const struct ctxmon_pair *a = x, *b = y;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->to_tid != b->to_tid)
		return a->to_tid < b->to_tid ? -1 : 1;
	if (a->from_tid != b->from_tid)
		return a->from_tid < b->from_tid ? -1 : 1;
	return a->ctx - b->ctx;
}

struct ctxmon_pair *causes__pairs(const struct causes *cz, bool all, size_t *n)
{
	struct ctxmon_pair *out;
	size_t k = 0;

	out = malloc((cz->npairs ? cz->npairs : 1) * sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < cz->npairs; i++)
		if (all || cz->pairs[i].target)
			out[k++] = cz->pairs[i];
	if (k > 1)
		qsort(out, k, sizeof(*out), cmp_pair);
	*n = k;
	return out;
}
