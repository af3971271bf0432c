/*
 * test_experiment - the pure parts of experiment and diff on synthetic
 * data: which runs enter the statistics, the summaries and tests the
 * collection hands out (checked against ctxmon_summary_compute and the
 * tests called directly on the same values), the regression over all
 * conditions, the diff's matching of threads by name and rank, its sort,
 * and the plots' SVG (balanced tags, one point per ok run).
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

#include <cmocka.h>

#include <ctxmon/diff.h>
#include <ctxmon/experiment.h>

#include "file/json.h"
#include "output/exp_output.h"

static struct ctxmon_run mkrun(unsigned cond, unsigned idx, unsigned st,
			       double vol, double el)
{
	struct ctxmon_run r = { .cond = cond, .index = idx, .status = st };

	for (unsigned m = 0; m < CTXMON_M__MAX; m++)
		r.v[m] = NAN;
	r.v[CTXMON_M_VOLUNTARY] = vol;
	r.v[CTXMON_M_ELAPSED] = el;
	return r;
}

static struct ctxmon_experiment *sample(void)
{
	const char *names[] = { "a", "b" };
	struct ctxmon_experiment *e = ctxmon_experiment_new(names, 2);
	const double va[] = { 100, 104, 98, 101, 99, 250 };
	const double vb[] = { 400, 410, 395, 402, 399, 405 };

	assert_non_null(e);
	for (unsigned i = 0; i < 6; i++) {
		struct ctxmon_run a = mkrun(0, i + 1, CTXMON_RUN_OK, va[i],
					    0.01 + va[i] * 1e-4);
		struct ctxmon_run b = mkrun(1, i + 1, CTXMON_RUN_OK, vb[i],
					    0.01 + vb[i] * 1e-4);

		assert_int_equal(ctxmon_experiment_add(e, &a), 0);
		assert_int_equal(ctxmon_experiment_add(e, &b), 0);
	}
	/* a failed run with a huge count must not enter anything */
	{
		struct ctxmon_run f = mkrun(0, 7, CTXMON_RUN_FAILED, 1e6, 9);

		assert_int_equal(ctxmon_experiment_add(e, &f), 0);
	}
	return e;
}

static void test_summary_and_tests(void **state)
{
	struct ctxmon_experiment *e = sample();
	struct ctxmon_metric_summary s;
	struct ctxmon_summary ref;
	struct ctxmon_comparison k;
	struct ctxmon_ttest t;
	struct ctxmon_utest u;
	const double va[] = { 100, 104, 98, 101, 99, 250 };
	const double vb[] = { 400, 410, 395, 402, 399, 405 };
	const double trimmed[] = { 100, 104, 98, 101, 99 };
	size_t n;
	double *v;

	(void)state;
	v = ctxmon_experiment_values(e, 0, CTXMON_M_VOLUNTARY, &n, NULL);
	assert_int_equal(n, 6);
	assert_memory_equal(v, va, sizeof(va));
	free(v);
	assert_int_equal(ctxmon_experiment_summary(e, 0, CTXMON_M_VOLUNTARY, &s), 0);
	ctxmon_summary_compute(va, 6, &ref, NULL);
	assert_true(s.all.mean == ref.mean && s.all.sd == ref.sd &&
		    s.all.ci_lo == ref.ci_lo);
	/* 250 is far outside median +- 3 scaled MADs: left out */
	assert_int_equal(s.all.noutliers, 1);
	ctxmon_summary_compute(trimmed, 5, &ref, NULL);
	assert_int_equal(s.trimmed.n, 5);
	assert_true(s.trimmed.mean == ref.mean);
	/* b against a: the same numbers as the tests called directly */
	assert_int_equal(ctxmon_experiment_compare(e, 1, 0, CTXMON_M_VOLUNTARY,
						   0.05, &k), 0);
	ctxmon_welch_test(vb, 6, va, 6, &t);
	ctxmon_mannwhitney_test(vb, 6, va, 6, &u);
	assert_true(k.t.t == t.t && k.t.p == t.p && k.u.u == u.u &&
		    k.u.p == u.p);
	assert_true(k.significant);
	assert_true(k.u.u == 36);	/* every b above every a */
	/* no data: metrics never measured */
	assert_int_equal(ctxmon_experiment_summary(e, 0, CTXMON_M_IRQS, &s),
			 -ENODATA);
	ctxmon_experiment_free(e);
}

/* The comparison and its text where too few runs ended ok: one run a
 * side is no t-test (NaN, not zeros that read as t = 0), and a condition
 * whose runs all failed is not compared, which the verdict says. */
static void test_few_runs(void **state)
{
	const char *names[] = { "a", "b", "c" };
	struct ctxmon_experiment *e = ctxmon_experiment_new(names, 3);
	struct ctxmon_run a = mkrun(0, 1, CTXMON_RUN_OK, 10, 0.5);
	struct ctxmon_run b = mkrun(1, 1, CTXMON_RUN_OK, 14, 0.75);
	struct ctxmon_run c = mkrun(2, 1, CTXMON_RUN_FAILED, 99, 1);
	struct exp_report r = { .e = e, .alpha = 0.05, .n = 1 };
	const char *cmds[] = { "x", "y", "z" };
	struct ctxmon_comparison k;
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(e);
	assert_int_equal(ctxmon_experiment_add(e, &a), 0);
	assert_int_equal(ctxmon_experiment_add(e, &b), 0);
	assert_int_equal(ctxmon_experiment_add(e, &c), 0);
	assert_int_equal(ctxmon_experiment_compare(e, 1, 0, CTXMON_M_VOLUNTARY,
						   0.05, &k), 0);
	assert_false(k.t_ok);
	assert_true(k.u_ok);
	assert_true(isnan(k.t.t) && isnan(k.t.p) && isnan(k.t.g));
	assert_true(k.t.diff == 4);
	assert_true(k.u.u == 1);
	assert_false(k.significant);
	assert_int_equal(ctxmon_experiment_compare(e, 2, 0, CTXMON_M_VOLUNTARY,
						   0.05, &k), -ENODATA);

	r.cond_cmd = cmds;
	r.show[CTXMON_M_VOLUNTARY] = true;
	f = open_memstream(&buf, &len);
	assert_int_equal(output__experiment(f, OUT_TABLE, &r), 0);
	fclose(f);
	/* b against a: the difference and its change, no t-test */
	line = strstr(buf, "\nvoluntary ");
	assert_non_null(line);
	line = strstr(line + 1, "\nvoluntary ");
	assert_non_null(line);
	assert_non_null(strstr(line, "+40.0%"));
	assert_null(strstr(buf, "0.000"));
	assert_non_null(strstr(buf, "b vs a: no significant difference"));
	assert_non_null(strstr(buf, "c vs a: not compared: too few ok runs "
				    "to test (c 0, a 1)"));
	free(buf);
	ctxmon_experiment_free(e);
}

static void test_regress(void **state)
{
	struct ctxmon_experiment *e = sample();
	struct ctxmon_linreg l;

	(void)state;
	/* elapsed = 0.01 + 1e-4 vol exactly, in both conditions (the
	 * failed run, off the line, is left out) */
	assert_int_equal(ctxmon_experiment_regress(e, (size_t)-1,
						   CTXMON_M_ELAPSED,
						   CTXMON_M_VOLUNTARY, &l), 0);
	assert_int_equal(l.n, 12);
	assert_true(fabs(l.slope - 1e-4) < 1e-15);
	assert_true(fabs(l.intercept - 0.01) < 1e-12);
	assert_true(fabs(l.r2 - 1) < 1e-12);
	ctxmon_experiment_free(e);
}

static void test_metric_names(void **state)
{
	(void)state;
	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		assert_non_null(ctxmon_metric_name(m));
		assert_int_equal(ctxmon_metric_lookup(ctxmon_metric_name(m)),
				 (int)m);
	}
	assert_int_equal(ctxmon_metric_lookup("irq"), CTXMON_M_IRQS);
	assert_int_equal(ctxmon_metric_lookup("nope"), -ENOENT);
	assert_null(ctxmon_metric_name(CTXMON_M__MAX));
}

static struct ctxmon_stats th(pid_t tid, pid_t tgid, const char *comm,
			      uint64_t wait_ms)
{
	struct ctxmon_stats s = { .tid = tid, .tgid = tgid, .comm = comm,
				  .wait_ns = wait_ms * 1000000ull,
				  .voluntary = (uint64_t)tid };
	return s;
}

static void test_diff_match(void **state)
{
	/* same program twice, other tids; B has one more worker */
	struct ctxmon_stats a[] = {
		th(100, 100, "srv", 5), th(102, 100, "worker", 10),
		th(101, 100, "worker", 20), th(300, 300, "sh", 1),
	};
	struct ctxmon_stats b[] = {
		th(500, 500, "srv", 6), th(501, 500, "worker", 90),
		th(502, 500, "worker", 25), th(503, 500, "worker", 7),
	};
	struct ctxmon_diff_row *d;
	size_t n;

	(void)state;
	d = ctxmon_diff_rows(a, 4, b, 4, CTXMON_ROWS_THREADS, CTXMON_DF_WAIT,
			     &n);
	assert_non_null(d);
	assert_int_equal(n, 5);
	/* worker#0 is the first-created worker on each side: 101 and 501 */
	assert_string_equal(d[0].key, "srv/worker#0");
	assert_true(d[0].a[CTXMON_DF_WAIT] == 20 && d[0].b[CTXMON_DF_WAIT] == 90);
	assert_true(d[0].a[CTXMON_DF_VOLUNTARY] == 101);
	assert_string_equal(d[1].key, "srv/worker#1");
	assert_true(d[1].a[CTXMON_DF_WAIT] == 10 && d[1].b[CTXMON_DF_WAIT] == 25);
	assert_string_equal(d[2].key, "srv/worker#2");
	assert_true(!d[2].in_a && d[2].in_b);
	/* then the 1 ms changes, by key */
	assert_string_equal(d[3].key, "sh/sh#0");
	assert_true(d[3].in_a && !d[3].in_b);
	assert_string_equal(d[4].key, "srv/srv#0");
	for (size_t i = 1; i < n; i++)
		assert_true(fabs(d[i - 1].b[CTXMON_DF_WAIT] - d[i - 1].a[CTXMON_DF_WAIT]) >=
			    fabs(d[i].b[CTXMON_DF_WAIT] - d[i].a[CTXMON_DF_WAIT]));
	free(d);
	assert_null(ctxmon_diff_rows(a, 4, b, 4, CTXMON_ROWS_THREADS,
				     CTXMON_DF__MAX, &n));
}

static void test_diff_match_nopids(void **state)
{
	/* perf script text: no pids; B has one more "worker", tid lower
	 * than A's (by name it would take rank 0 and shift the others) */
	struct ctxmon_stats a[] = {
		th(102, -1, "worker", 10), th(101, -1, "worker", 20),
	};
	struct ctxmon_stats b[] = {
		th(102, -1, "worker", 10), th(101, -1, "worker", 20),
		th(50, -1, "worker", 3),
	};
	struct ctxmon_diff_row *d;
	size_t n;

	(void)state;
	assert_int_equal(ctxmon_diff_match_of(a, 2, b, 3),
			 CTXMON_DIFF_BY_COMM_TID);
	/* one side with pids is not enough: the other cannot be ranked */
	b[0].tgid = 100;
	assert_int_equal(ctxmon_diff_match_of(a, 2, b, 3),
			 CTXMON_DIFF_BY_COMM_TID);
	assert_int_equal(ctxmon_diff_match_of(b, 3, b, 3), CTXMON_DIFF_BY_NAME);
	b[0].tgid = -1;
	d = ctxmon_diff_rows(a, 2, b, 3, CTXMON_ROWS_THREADS, CTXMON_DF_WAIT,
			     &n);
	assert_non_null(d);
	assert_int_equal(n, 3);
	assert_string_equal(d[0].key, "worker/50");
	assert_true(!d[0].in_a && d[0].in_b);
	for (size_t i = 1; i < n; i++) {
		assert_true(d[i].in_a && d[i].in_b);
		assert_memory_equal(d[i].a, d[i].b, sizeof(d[i].a));
	}
	assert_string_equal(d[1].key, "worker/101");
	assert_string_equal(d[2].key, "worker/102");
	free(d);
}

static size_t count(const char *s, const char *pat)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, pat)); p++)
		n++;
	return n;
}

static void test_svg(void **state)
{
	struct ctxmon_experiment *e = sample();
	struct exp_report r = { .e = e, .alpha = 0.05, .regress = true,
				.ry = CTXMON_M_ELAPSED,
				.rx = CTXMON_M_VOLUNTARY };
	const char *cmds[] = { "w 1", "w 4 <&>" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	r.cond_cmd = cmds;
	r.show[CTXMON_M_VOLUNTARY] = true;
	assert_int_equal(output__experiment_plot(f, &r, true), 0);
	fclose(f);
	/* a page with the scatter and the voluntary strip plot */
	assert_int_equal(count(buf, "<svg "), 2);
	assert_int_equal(count(buf, "</svg>"), 2);
	assert_int_equal(count(buf, "<g "), count(buf, "</g>"));
	/* 12 ok runs in the scatter, 12 in the strip plot; the legend
	 * adds one circle per condition */
	assert_int_equal(count(buf, "<circle"), 12 + 12 + 2);
	assert_non_null(strstr(buf, "w 4 &lt;&amp;&gt;"));
	assert_null(strstr(buf, "<&>"));
	assert_non_null(strstr(buf, "voluntary switches"));
	assert_non_null(strstr(buf, "elapsed time (s)"));
	free(buf);
	ctxmon_experiment_free(e);
}

static void test_json(void **state)
{
	const char *doc = " {\"a\": [1, -2.5e3, true, false, null],"
			  " \"s\": \"x\\\"y\\u00e9\\n\", \"o\": {}} ";
	const char *bad[] = { "", "{", "[1,]", "{\"a\" 1}", "\"abc", "tru",
			      "[1] x", "{\"a\":1,}", "\"\\u12\"", "-",
			      "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			      "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
			      "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]" };
	char err[96];
	struct json *j;
	const struct json *a;

	(void)state;
	j = json__parse(doc, strlen(doc), err, sizeof(err));
	assert_non_null(j);
	a = json__get(j, "a");
	assert_non_null(a);
	assert_int_equal(a->type, JSON_ARR);
	assert_int_equal(a->n, 5);
	assert_true(a->items[1]->num == -2500);
	assert_true(a->items[2]->b && !a->items[3]->b);
	assert_int_equal(a->items[4]->type, JSON_NULL);
	assert_string_equal(json__str(j, "s"), "x\"y\xc3\xa9\n");
	assert_int_equal(json__get(j, "o")->n, 0);
	assert_true(json__num(j, "missing", 7) == 7);
	json__free(j);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		j = json__parse(bad[i], strlen(bad[i]), err, sizeof(err));
		if (j)
			fail_msg("parsed bad JSON %zu: %s", i, bad[i]);
		assert_true(err[0] != 0);
	}
	/* 64 levels are fine, 65 are not */
	{
		char deep[200];
		size_t n = 0;

		for (int i = 0; i < 64; i++)
			deep[n++] = '[';
		for (int i = 0; i < 64; i++)
			deep[n++] = ']';
		j = json__parse(deep, n, err, sizeof(err));
		assert_non_null(j);
		json__free(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_and_tests),
		cmocka_unit_test(test_few_runs),
		cmocka_unit_test(test_regress),
		cmocka_unit_test(test_metric_names),
		cmocka_unit_test(test_diff_match),
		cmocka_unit_test(test_diff_match_nopids),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
