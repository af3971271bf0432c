/*
 * test_stats - the statistics module (include/ctxmon/stats.h) against
 * SciPy: the test writes its fixed data sets and requests, runs
 * tests/unit/stats_ref.py on them (SciPy computes every expected value
 * then, none is pasted here) and compares to 1e-9 relative.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/stats.h>

#define REL 1e-9

struct ref {
	char key[96];
	double v;
};
static struct ref *refs;
static size_t nrefs;

/* Data sets, as doubles the script reads back exactly (%.17g). */
#define NMAX 64
struct set {
	const char *name;
	double v[NMAX];
	size_t n;
};
static struct set sets[8];
static size_t nsets;

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static struct set *add_set(const char *name)
{
	struct set *s = &sets[nsets++];

	s->name = name;
	return s;
}

static const struct set *find_set(const char *name)
{
	for (size_t i = 0; i < nsets; i++)
		if (!strcmp(sets[i].name, name))
			return &sets[i];
	fail_msg("no set %s", name);
	return NULL;
}

static void make_sets(void)
{
	struct set *s;

	/* run times around 12 ms with one slow run */
	s = add_set("a");
	for (size_t i = 0; i < 30; i++)
		s->v[s->n++] = 0.012 + 0.001 * uniform();
	s->v[7] = 0.031;
	/* slower condition, other size */
	s = add_set("b");
	for (size_t i = 0; i < 25; i++)
		s->v[s->n++] = 0.0125 + 0.0015 * uniform();
	/* integer counts with many ties */
	s = add_set("c");
	for (size_t i = 0; i < 20; i++)
		s->v[s->n++] = (double)(1000 + (int)(uniform() * 4));
	s = add_set("d");
	for (size_t i = 0; i < 18; i++)
		s->v[s->n++] = (double)(1001 + (int)(uniform() * 4));
	/* regression: y = 2 + 0.003 x + noise */
	s = add_set("rx");
	for (size_t i = 0; i < 40; i++)
		s->v[s->n++] = (double)(100 + (int)(uniform() * 900));
	s = add_set("ry");
	for (size_t i = 0; i < 40; i++)
		s->v[s->n++] = 2 + 0.003 * sets[nsets - 2].v[i] +
			       0.4 * (uniform() - 0.5);
	/* small and far apart: tiny p-values */
	s = add_set("e");
	for (size_t i = 0; i < 10; i++)
		s->v[s->n++] = 5 + uniform();
	s = add_set("f");
	for (size_t i = 0; i < 9; i++)
		s->v[s->n++] = 9 + uniform();
}

static const char *const requests[] = {
	"summary a", "summary b", "summary c", "summary e",
	"welch a b", "welch c d", "welch e f", "welch b a",
	"mwu a b", "mwu c d", "mwu e f", "mwu d c",
	"linreg rx ry",
	"tsf 0 5", "tsf 1.5 3", "tsf -2.2 7.5", "tsf 12 40", "tsf 40 4",
	"tsf 0.01 100000", "tsf 3 1",
	"tppf 0.975 1", "tppf 0.975 2", "tppf 0.975 29", "tppf 0.025 12",
	"tppf 0.999 3.5", "tppf 0.6 1000",
	"normsf 0", "normsf 1.96", "normsf -1", "normsf 8.5",
	"betainc 0.5 0.5 0.3", "betainc 2 3 0.9", "betainc 14.5 0.5 0.2",
	"betainc 100 0.5 0.999",
};

static double ref(const char *fmt, ...)
{
	char key[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < nrefs; i++)
		if (!strcmp(refs[i].key, key))
			return refs[i].v;
	fail_msg("SciPy gave no %s", key);
	return NAN;
}

static void near(double got, double want, const char *what)
{
	double tol = REL * fabs(want);

	/* an exact zero (or one below the smallest relative step) */
	if (tol < 1e-300)
		tol = 1e-300;
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: %.17g, SciPy %.17g (rel %.3g)", what, got, want,
			 fabs(got - want) / fabs(want));
}

static int setup(void **state)
{
	char in[] = "/tmp/ctxmon-stats-XXXXXX", cmd[512], line[256];
	const char *dir = __FILE__;
	FILE *f, *p;
	int fd;

	(void)state;
	make_sets();
	fd = mkstemp(in);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	for (size_t i = 0; i < nsets; i++) {
		fprintf(f, "x %s", sets[i].name);
		for (size_t j = 0; j < sets[i].n; j++)
			fprintf(f, " %.17g", sets[i].v[j]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < sizeof(requests) / sizeof(*requests); i++)
		fprintf(f, "%s\n", requests[i]);
	fclose(f);
	/* Debian's python3, where python3-scipy lives (PATH may hold
	 * another one); $PYTHON overrides */
	snprintf(cmd, sizeof(cmd), "%s %.*sstats_ref.py < %s",
		 getenv("PYTHON") ? getenv("PYTHON") : "/usr/bin/python3",
		 (int)(strrchr(dir, '/') ? strrchr(dir, '/') - dir + 1 : 0),
		 dir, in);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		struct ref r;

		if (sscanf(line, "%95s %lf", r.key, &r.v) != 2)
			continue;
		refs = realloc(refs, (nrefs + 1) * sizeof(*refs));
		refs[nrefs++] = r;
	}
	if (!p || pclose(p) != 0 || !nrefs) {
		fprintf(stderr, "test_stats: '%s' failed: SciPy is needed "
				"(Debian python3-scipy; make deps)\n", cmd);
		unlink(in);
		return -1;
	}
	unlink(in);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(refs);
	return 0;
}

static void test_distributions(void **state)
{
	double a, b, x;

	(void)state;
	for (size_t i = 0; i < sizeof(requests) / sizeof(*requests); i++) {
		const char *q = requests[i];
		char w1[32], w2[32], w3[32];

		if (sscanf(q, "tsf %31s %31s", w1, w2) == 2)
			near(ctxmon_t_sf(atof(w1), atof(w2)),
			     ref("tsf.%s.%s", w1, w2), q);
		else if (sscanf(q, "tppf %31s %31s", w1, w2) == 2)
			near(ctxmon_t_ppf(atof(w1), atof(w2)),
			     ref("tppf.%s.%s", w1, w2), q);
		else if (sscanf(q, "normsf %31s", w1) == 1)
			near(ctxmon_norm_sf(atof(w1)), ref("normsf.%s", w1), q);
		else if (sscanf(q, "betainc %31s %31s %31s", w1, w2, w3) == 3) {
			a = atof(w1);
			b = atof(w2);
			x = atof(w3);
			near(ctxmon_betainc(a, b, x),
			     ref("betainc.%s.%s.%s", w1, w2, w3), q);
		}
	}
	/* the two tails add up, and the quantile inverts the tail */
	near(ctxmon_t_cdf(1.3, 6) + ctxmon_t_sf(1.3, 6), 1.0, "cdf + sf");
	near(ctxmon_t_sf(ctxmon_t_ppf(0.9, 4.2), 4.2), 0.1, "sf(ppf)");
	near(ctxmon_norm_cdf(0.7) + ctxmon_norm_sf(0.7), 1.0, "norm cdf + sf");
	assert_true(isnan(ctxmon_t_ppf(1.0, 3)));
	assert_true(isnan(ctxmon_betainc(-1, 2, 0.5)));
}

static void test_summary(void **state)
{
	const char *names[] = { "a", "b", "c", "e" };

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		const struct set *s = find_set(names[i]);
		struct ctxmon_summary m;
		bool out[NMAX];
		size_t nout = 0;

		assert_int_equal(ctxmon_summary_compute(s->v, s->n, &m, out), 0);
		near(m.mean, ref("summary.%s.mean", s->name), "mean");
		near(m.sd, ref("summary.%s.sd", s->name), "sd");
		near(m.median, ref("summary.%s.median", s->name), "median");
		near(m.min, ref("summary.%s.min", s->name), "min");
		near(m.max, ref("summary.%s.max", s->name), "max");
		near(m.ci_lo, ref("summary.%s.ci_lo", s->name), "ci_lo");
		near(m.ci_hi, ref("summary.%s.ci_hi", s->name), "ci_hi");
		near(m.mad, ref("summary.%s.mad", s->name), "mad");
		near((double)m.noutliers, ref("summary.%s.noutliers", s->name),
		     "outliers");
		for (size_t j = 0; j < s->n; j++)
			nout += out[j];
		assert_int_equal(nout, m.noutliers);
	}
	/* the slow run planted in "a" is the one flagged */
	{
		const struct set *s = find_set("a");
		struct ctxmon_summary m;
		bool out[NMAX];

		assert_int_equal(ctxmon_summary_compute(s->v, s->n, &m, out), 0);
		assert_true(out[7]);
	}
	{
		struct ctxmon_summary m;
		double one = 3.5;

		assert_int_equal(ctxmon_summary_compute(&one, 1, &m, NULL), 0);
		assert_true(isnan(m.ci_lo));
		assert_int_equal(ctxmon_summary_compute(&one, 0, &m, NULL),
				 -EINVAL);
	}
}

static void test_two_samples(void **state)
{
	const char *pairs[][2] = { { "a", "b" }, { "c", "d" }, { "e", "f" },
				   { "b", "a" }, { "d", "c" } };

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		const struct set *x = find_set(pairs[i][0]);
		const struct set *y = find_set(pairs[i][1]);
		struct ctxmon_ttest t;
		struct ctxmon_utest u;
		char k[32];

		snprintf(k, sizeof(k), "%s.%s", x->name, y->name);
		if (i != 4) {
			assert_int_equal(ctxmon_welch_test(x->v, x->n, y->v, y->n,
							   &t), 0);
			near(t.t, ref("welch.%s.t", k), "welch t");
			near(t.df, ref("welch.%s.df", k), "welch df");
			near(t.p, ref("welch.%s.p", k), "welch p");
			near(t.g, ref("welch.%s.g", k), "hedges g");
		}
		if (i != 3) {
			assert_int_equal(ctxmon_mannwhitney_test(x->v, x->n, y->v,
								 y->n, &u), 0);
			near(u.u, ref("mwu.%s.u", k), "U");
			near(u.p, ref("mwu.%s.p", k), "U p");
		}
	}
}

static void test_linreg(void **state)
{
	const struct set *x = find_set("rx"), *y = find_set("ry");
	struct ctxmon_linreg r;
	double flat[3] = { 1, 1, 1 };

	(void)state;
	assert_int_equal(ctxmon_linreg_fit(x->v, y->v, x->n, &r), 0);
	near(r.slope, ref("linreg.rx.ry.slope"), "slope");
	near(r.intercept, ref("linreg.rx.ry.intercept"), "intercept");
	near(r.r, ref("linreg.rx.ry.r"), "r");
	near(r.r2, ref("linreg.rx.ry.r2"), "r2");
	near(r.p, ref("linreg.rx.ry.p"), "p");
	near(r.slope_se, ref("linreg.rx.ry.slope_se"), "slope se");
	near(r.intercept_se, ref("linreg.rx.ry.intercept_se"), "intercept se");
	assert_int_equal(ctxmon_linreg_fit(flat, y->v, 3, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distributions),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_two_samples),
		cmocka_unit_test(test_linreg),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
