/*
 * runs.c - a collection of runs by condition (struct ctxmon_experiment of
 * include/ctxmon/experiment.h) and the statistics made on it: summaries
 * with and without outliers, two-condition tests, regression.
 *
 * Only runs whose status is "ok" enter the statistics; failed, killed,
 * timed-out and interrupted runs are kept for the per-run rows.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/experiment.h>

struct ctxmon_experiment {
	char **names;
	size_t ncond;
	struct ctxmon_run *runs;
	size_t nruns, cap;
};

struct ctxmon_experiment *ctxmon_experiment_new(const char *const *names,
						size_t ncond)
{
	struct ctxmon_experiment *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->names = calloc(ncond ? ncond : 1, sizeof(*e->names));
	if (!e->names)
		goto fail;
	e->ncond = ncond;
	for (size_t i = 0; i < ncond; i++) {
		e->names[i] = strdup(names[i]);
		if (!e->names[i])
			goto fail;
	}
	return e;
fail:
	ctxmon_experiment_free(e);
	errno = ENOMEM;
	return NULL;
}

void ctxmon_experiment_free(struct ctxmon_experiment *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->names && i < e->ncond; i++)
		free(e->names[i]);
	free(e->names);
	free(e->runs);
	free(e);
}

int ctxmon_experiment_add(struct ctxmon_experiment *e,
			  const struct ctxmon_run *r)
{
	if (r->cond >= e->ncond)
		return -EINVAL;
	if (e->nruns == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		struct ctxmon_run *p = realloc(e->runs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->runs = p;
		e->cap = cap;
	}
	e->runs[e->nruns++] = *r;
	return 0;
}

size_t ctxmon_experiment_nconds(const struct ctxmon_experiment *e)
{
	return e->ncond;
}

const char *ctxmon_experiment_cond_name(const struct ctxmon_experiment *e,
					size_t c)
{
	return c < e->ncond ? e->names[c] : NULL;
}

const struct ctxmon_run *ctxmon_experiment_runs(
	const struct ctxmon_experiment *e, size_t *n)
{
	*n = e->nruns;
	return e->runs;
}

static bool usable(const struct ctxmon_run *r, size_t cond, unsigned m)
{
	return r->status == CTXMON_RUN_OK && r->cond == cond &&
	       isfinite(r->v[m]);
}

double *ctxmon_experiment_values(const struct ctxmon_experiment *e,
				 size_t cond, unsigned m, size_t *n,
				 size_t **run_of)
{
	double *v = NULL;
	size_t k = 0, *idx = NULL;

	*n = 0;
	if (run_of)
		*run_of = NULL;
	errno = 0;
	if (m >= CTXMON_M__MAX) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < e->nruns; i++)
		k += usable(&e->runs[i], cond, m);
	if (!k)
		return NULL;
	v = malloc(k * sizeof(*v));
	if (run_of)
		idx = malloc(k * sizeof(*idx));
	if (!v || (run_of && !idx)) {
		free(v);
		free(idx);
		errno = ENOMEM;
		return NULL;
	}
	k = 0;
	for (size_t i = 0; i < e->nruns; i++) {
		if (!usable(&e->runs[i], cond, m))
			continue;
		if (idx)
			idx[k] = i;
		v[k++] = e->runs[i].v[m];
	}
	*n = k;
	if (run_of)
		*run_of = idx;
	return v;
}

int ctxmon_experiment_summary(const struct ctxmon_experiment *e, size_t cond,
			      unsigned m, struct ctxmon_metric_summary *out)
{
	size_t n, k = 0;
	double *v = ctxmon_experiment_values(e, cond, m, &n, NULL);
	bool *o = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!v)
		return errno ? -errno : -ENODATA;
	ret = -ENOMEM;
	o = calloc(n, sizeof(*o));
	if (!o)
		goto out;
	ret = ctxmon_summary_compute(v, n, &out->all, o);
	if (ret < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!o[i])
			v[k++] = v[i];
	ret = ctxmon_summary_compute(v, k, &out->trimmed, NULL);
out:
	free(o);
	free(v);
	return ret;
}

static double mean_of(const double *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

int ctxmon_experiment_compare(const struct ctxmon_experiment *e, size_t a,
			      size_t b, unsigned m, double alpha,
			      struct ctxmon_comparison *out)
{
	size_t na, nb;
	double *x = ctxmon_experiment_values(e, a, m, &na, NULL);
	double *y = ctxmon_experiment_values(e, b, m, &nb, NULL);
	int ret = -ENODATA;

	memset(out, 0, sizeof(*out));
	if (!x || !y)
		goto out;
	out->t_ok = ctxmon_welch_test(x, na, y, nb, &out->t) == 0;
	out->u_ok = ctxmon_mannwhitney_test(x, na, y, nb, &out->u) == 0;
	/* a test that cannot be made (one run a side for Welch's) says so
	 * in NaNs, not zeros that read as a result; the difference of the
	 * means stands while there is a run a side */
	if (!out->t_ok)
		out->t = (struct ctxmon_ttest){
			.diff = na && nb ? mean_of(x, na) - mean_of(y, nb) :
					   NAN,
			.t = NAN, .df = NAN, .p = NAN, .d = NAN, .g = NAN,
		};
	if (!out->u_ok)
		out->u = (struct ctxmon_utest){ .u = NAN, .z = NAN, .p = NAN };
	out->significant = out->t_ok && out->u_ok && out->t.p < alpha &&
			   out->u.p < alpha;
	ret = out->t_ok || out->u_ok ? 0 : -EINVAL;
out:
	free(x);
	free(y);
	return ret;
}

int ctxmon_experiment_regress(const struct ctxmon_experiment *e, size_t cond,
			      unsigned y, unsigned x,
			      struct ctxmon_linreg *out)
{
	double *xs, *ys;
	size_t n = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if (x >= CTXMON_M__MAX || y >= CTXMON_M__MAX)
		return -EINVAL;
	xs = malloc((e->nruns ? e->nruns : 1) * sizeof(*xs));
	ys = malloc((e->nruns ? e->nruns : 1) * sizeof(*ys));
	ret = -ENOMEM;
	if (!xs || !ys)
		goto out;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct ctxmon_run *r = &e->runs[i];
		size_t c = cond == (size_t)-1 ? r->cond : cond;

		if (!usable(r, c, x) || !usable(r, c, y))
			continue;
		xs[n] = r->v[x];
		ys[n++] = r->v[y];
	}
	ret = ctxmon_linreg_fit(xs, ys, n, out);
out:
	free(xs);
	free(ys);
	return ret;
}
