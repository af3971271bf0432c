/*
 * exp_output.c - an experiment as text tables, JSON or CSV.
 *
 * Text: the runs that were not ok, the kernel comparison, one summary
 * line per metric and condition (with and without outliers), the tests of
 * every condition against the first, the regression, and a verdict.
 * JSON: all of that plus every run's row, numbers with 17 significant
 * digits so that a script recomputing the statistics from the rows sees
 * exactly the values ctxmon used.  CSV: one row per run (for R, pandas).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_out.h"
#include "output/exp_output.h"

#define OUTLIER_RULE "outside median +- 3 x 1.4826 x MAD (scaled median " \
		     "absolute deviation); none when MAD is 0"
#define TEST_NOTE "Welch's t-test (Welch-Satterthwaite df) and Mann-Whitney " \
		  "U (two-sided, normal approximation, tie and continuity " \
		  "corrections); effect size Hedges' g"

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.17g", v);
	else
		fputs("null", f);
}

/* A value with its unit, 4 significant digits, into @buf. */
static const char *fmt_val(char *buf, size_t len, double v, const char *unit)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (!*unit)
		snprintf(buf, len, "%.6g", v);
	else
		snprintf(buf, len, "%.4g%s", v, unit);
	return buf;
}

/* ---- text ---------------------------------------------------------- */

static void text_runs(FILE *f, const struct exp_report *r)
{
	size_t n, bad = 0, checked = 0, match = 0, lost = 0;
	const struct ctxmon_run *runs = ctxmon_experiment_runs(r->e, &n);

	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_run *u = &runs[i];

		if (u->kernel_valid) {
			checked++;
			match += u->kernel_match;
		}
		lost += u->lost > 0;
		if (u->status == CTXMON_RUN_OK)
			continue;
		if (!bad++)
			fprintf(f, "runs not summarised:\n");
		fprintf(f, "  %s run %u: %s", ctxmon_experiment_cond_name(
						     r->e, u->cond),
			u->index, ctxmon_run_status_name(u->status));
		if (u->status == CTXMON_RUN_ERROR)
			fprintf(f, " (%s)", u->error);
		else
			fprintf(f, " (exit status %d)", u->exit_status);
		fputc('\n', f);
	}
	fprintf(f, "kernel counters: %zu of %zu runs traced match getrusage "
		   "(voluntary and involuntary, as ctxmon stat checks)%s\n",
		match, checked, match == checked ? "" : "  MISMATCH");
	for (size_t i = 0; i < n; i++)
		if (runs[i].kernel_valid && !runs[i].kernel_match)
			fprintf(f, "  %s run %u: traced vol %llu invol %llu, "
				   "getrusage %llu %llu\n",
				ctxmon_experiment_cond_name(r->e, runs[i].cond),
				runs[i].index,
				(unsigned long long)runs[i].traced_vol,
				(unsigned long long)runs[i].traced_invol,
				(unsigned long long)runs[i].ru_nvcsw,
				(unsigned long long)runs[i].ru_nivcsw);
	if (lost)
		fprintf(f, "warning: %zu runs lost events; their counts are "
			   "incomplete\n", lost);
}

static void text_summary(FILE *f, const struct exp_report *r)
{
	size_t nc = ctxmon_experiment_nconds(r->e);
	char b[8][32];

	fprintf(f, "\n%-26s %-10s %4s %10s %10s %10s %10s %10s  %-25s %4s %10s\n",
		"METRIC", "CONDITION", "N", "MEAN", "SD", "MEDIAN", "MIN", "MAX",
		"95% CI OF MEAN", "OUTL", "MEAN-OUTL");
	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		char label[48];
		const char *u = ctxmon_metric_unit(m);

		if (!r->show[m])
			continue;
		snprintf(label, sizeof(label), "%s%s%s%s", ctxmon_metric_name(m),
			 *u ? " (" : "", u, *u ? ")" : "");
		for (size_t c = 0; c < nc; c++) {
			struct ctxmon_metric_summary s;
			char ci[48];

			if (ctxmon_experiment_summary(r->e, c, m, &s) < 0)
				continue;
			if (s.all.n >= 2)
				snprintf(ci, sizeof(ci), "[%s, %s]",
					 fmt_val(b[0], 32, s.all.ci_lo, ""),
					 fmt_val(b[1], 32, s.all.ci_hi, ""));
			else
				snprintf(ci, sizeof(ci), "-");
			fprintf(f, "%-26s %-10s %4zu %10s %10s %10s %10s %10s  "
				   "%-25s %4zu %10s\n",
				c ? "" : label, ctxmon_experiment_cond_name(r->e, c),
				s.all.n, fmt_val(b[2], 32, s.all.mean, ""),
				fmt_val(b[3], 32, s.all.sd, ""),
				fmt_val(b[4], 32, s.all.median, ""),
				fmt_val(b[5], 32, s.all.min, ""),
				fmt_val(b[6], 32, s.all.max, ""), ci,
				s.all.noutliers,
				fmt_val(b[7], 32, s.trimmed.mean, ""));
		}
	}
	fprintf(f, "outliers: %s\n", OUTLIER_RULE);
}

/* Relative change of @c's mean against the first condition's, in %. */
static double rel_change(const struct exp_report *r, size_t c, unsigned m)
{
	struct ctxmon_metric_summary a, b;

	if (ctxmon_experiment_summary(r->e, 0, m, &a) < 0 ||
	    ctxmon_experiment_summary(r->e, c, m, &b) < 0 || a.all.mean == 0)
		return NAN;
	return (b.all.mean - a.all.mean) / fabs(a.all.mean) * 100.0;
}

/* The most ok runs condition @c has in a metric shown. */
static size_t ok_runs(const struct exp_report *r, size_t c)
{
	size_t n = 0;

	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		struct ctxmon_metric_summary s;

		if (r->show[m] && ctxmon_experiment_summary(r->e, c, m, &s) == 0 &&
		    s.all.n > n)
			n = s.all.n;
	}
	return n;
}

/* "verdict (alpha A, both tests): b vs a: m higher (+x%), ..." */
static void verdict(FILE *f, const struct exp_report *r, size_t c)
{
	size_t nsig = 0, ncmp = 0;

	fprintf(f, "verdict (alpha %g, both tests): %s vs %s: ", r->alpha,
		ctxmon_experiment_cond_name(r->e, c),
		ctxmon_experiment_cond_name(r->e, 0));
	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		struct ctxmon_comparison k;
		double ch;

		if (!r->show[m] ||
		    ctxmon_experiment_compare(r->e, c, 0, m, r->alpha, &k) < 0)
			continue;
		ncmp++;
		if (!k.significant)
			continue;
		ch = rel_change(r, c, m);
		fprintf(f, "%s%s %s", nsig++ ? ", " : "", ctxmon_metric_name(m),
			k.t.diff > 0 ? "higher" : "lower");
		if (isfinite(ch))
			fprintf(f, " (%+.1f%%)", ch);
	}
	if (!ncmp)
		/* no test could be made: no ok run on a side (failed and
		 * timed-out runs are not summarised) */
		fprintf(f, "not compared: too few ok runs to test (%s %zu, "
			   "%s %zu)", ctxmon_experiment_cond_name(r->e, c),
			ok_runs(r, c), ctxmon_experiment_cond_name(r->e, 0),
			ok_runs(r, 0));
	else if (!nsig)
		fprintf(f, "no significant difference");
}

static void text_compare(FILE *f, const struct exp_report *r)
{
	size_t nc = ctxmon_experiment_nconds(r->e);
	char b[4][32];

	for (size_t c = 1; c < nc; c++) {
		const char *an = ctxmon_experiment_cond_name(r->e, 0);
		const char *bn = ctxmon_experiment_cond_name(r->e, c);

		fprintf(f, "\n%s vs %s: %s\n", bn, an, TEST_NOTE);
		fprintf(f, "%-16s %12s %8s %9s %7s %10s %9s %10s %7s  %s\n",
			"METRIC", "DIFF", "CHANGE", "WELCH-T", "DF", "P(T)", "U",
			"P(U)", "G", "");
		for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
			struct ctxmon_comparison k;
			double ch;

			if (!r->show[m] ||
			    ctxmon_experiment_compare(r->e, c, 0, m, r->alpha,
						      &k) < 0)
				continue;
			ch = rel_change(r, c, m);
			snprintf(b[1], 32, "-");
			if (isfinite(ch))
				snprintf(b[1], 32, "%+.1f%%", ch);
			if (!isfinite(k.t.t)) {
				/* constant in both, or one run a side: no
				 * t-test; Mann-Whitney's where it was made */
				char u[2][32] = { "-", "-" };

				if (k.u_ok) {
					snprintf(u[0], 32, "%.1f", k.u.u);
					snprintf(u[1], 32, "%.3g", k.u.p);
				}
				fprintf(f, "%-16s %12s %8s %9s %7s %10s %9s "
					   "%10s %7s\n", ctxmon_metric_name(m),
					isfinite(k.t.diff) ?
						fmt_val(b[0], 32, k.t.diff,
							ctxmon_metric_unit(m)) :
						"-",
					b[1], "-", "-", "-", u[0], u[1], "-");
				continue;
			}
			fprintf(f, "%-16s %12s %8s %9.3f %7.1f %10.3g %9.1f "
				   "%10.3g %7.2f  %s\n",
				ctxmon_metric_name(m),
				fmt_val(b[0], 32, k.t.diff, ctxmon_metric_unit(m)),
				b[1], k.t.t, k.t.df, k.t.p, k.u.u, k.u.p, k.t.g,
				k.significant ? "*" : "");
		}
		verdict(f, r, c);
		fputc('\n', f);
	}
}

static void text_regress(FILE *f, const struct exp_report *r)
{
	struct ctxmon_linreg l;
	const char *yn = ctxmon_metric_name(r->ry), *xn = ctxmon_metric_name(r->rx);
	int ret = ctxmon_experiment_regress(r->e, (size_t)-1, r->ry, r->rx, &l);

	if (ret < 0) {
		fprintf(f, "\nregression %s~%s: not enough ok runs with "
			   "distinct %s values\n", yn, xn, xn);
		return;
	}
	fprintf(f, "\nregression %s~%s (least squares over %zu ok runs, all "
		   "conditions):\n  %s = %.6g %c %.6g x %s   r = %.4f, r^2 = "
		   "%.4f, p(slope = 0) = %.3g, slope se %.3g\n",
		yn, xn, l.n, yn, l.intercept, l.slope < 0 ? '-' : '+',
		fabs(l.slope), xn, l.r, l.r2, l.p,
		l.slope_se);
}

static int text(FILE *f, const struct exp_report *r)
{
	size_t nc = ctxmon_experiment_nconds(r->e), nruns;

	ctxmon_experiment_runs(r->e, &nruns);
	fprintf(f, "experiment: %zu condition%s x %u runs (%u warm-up), "
		   "interleaved, backend %s%s\n", nc, nc > 1 ? "s" : "", r->n,
		r->warmup, r->backend ? r->backend : "?",
		r->interrupted ? "; INTERRUPTED: summary of the runs done" :
				 "");
	for (size_t c = 0; c < nc; c++)
		fprintf(f, "  %-10s %s\n", ctxmon_experiment_cond_name(r->e, c),
			r->cond_cmd[c]);
	text_runs(f, r);
	text_summary(f, r);
	if (nc > 1)
		text_compare(f, r);
	if (r->regress)
		text_regress(f, r);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---------------------------------------------------------- */

static void json_summary(FILE *f, const struct ctxmon_summary *s)
{
	fprintf(f, "{\"n\":%zu,\"mean\":", s->n);
	json_num(f, s->mean);
	fputs(",\"sd\":", f);
	json_num(f, s->sd);
	fputs(",\"median\":", f);
	json_num(f, s->median);
	fputs(",\"min\":", f);
	json_num(f, s->min);
	fputs(",\"max\":", f);
	json_num(f, s->max);
	fputs(",\"ci95\":[", f);
	json_num(f, s->ci_lo);
	fputc(',', f);
	json_num(f, s->ci_hi);
	fputs("],\"mad\":", f);
	json_num(f, s->mad);
	fprintf(f, ",\"outliers\":%zu}", s->noutliers);
}

static void json_runs(FILE *f, const struct exp_report *r)
{
	size_t n;
	const struct ctxmon_run *runs = ctxmon_experiment_runs(r->e, &n);

	fputs(",\"runs\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_run *u = &runs[i];

		fprintf(f, "%s\n{\"condition\":", i ? "," : "");
		json__put_str(f, ctxmon_experiment_cond_name(r->e, u->cond));
		fprintf(f, ",\"run\":%u,\"status\":\"%s\",\"exit_status\":",
			u->index, ctxmon_run_status_name(u->status));
		json__put_id(f, u->exit_status); /* null: did not start */
		if (u->error[0]) {
			fputs(",\"error\":", f);
			json__put_str(f, u->error);
		}
		if (u->kernel_valid)
			fprintf(f, ",\"kernel\":{\"ru_nvcsw\":%llu,\"ru_nivcsw\":"
				   "%llu,\"traced_vol\":%llu,\"traced_invol\":"
				   "%llu,\"match\":%s}",
				(unsigned long long)u->ru_nvcsw,
				(unsigned long long)u->ru_nivcsw,
				(unsigned long long)u->traced_vol,
				(unsigned long long)u->traced_invol,
				u->kernel_match ? "true" : "false");
		fprintf(f, ",\"lost\":%llu,\"metrics\":{",
			(unsigned long long)u->lost);
		for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
			fprintf(f, "%s\"%s\":", m ? "," : "", ctxmon_metric_name(m));
			json_num(f, u->v[m]);
		}
		fputs("}}", f);
	}
	fputs("]", f);
}

static void json_compare(FILE *f, const struct exp_report *r)
{
	size_t nc = ctxmon_experiment_nconds(r->e);
	bool first = true;

	fputs(",\"comparisons\":[", f);
	for (size_t c = 1; c < nc; c++) {
		for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
			struct ctxmon_comparison k;

			if (ctxmon_experiment_compare(r->e, c, 0, m, r->alpha,
						      &k) < 0)
				continue;
			fprintf(f, "%s\n{\"condition\":", first ? "" : ",");
			first = false;
			json__put_str(f, ctxmon_experiment_cond_name(r->e, c));
			fputs(",\"baseline\":", f);
			json__put_str(f, ctxmon_experiment_cond_name(r->e, 0));
			fprintf(f, ",\"metric\":\"%s\",\"diff\":",
				ctxmon_metric_name(m));
			json_num(f, k.t.diff);
			fputs(",\"welch\":{\"t\":", f);
			json_num(f, k.t.t);
			fputs(",\"df\":", f);
			json_num(f, k.t.df);
			fputs(",\"p\":", f);
			json_num(f, k.t.p);
			fputs("},\"mannwhitney\":{\"u\":", f);
			json_num(f, k.u.u);
			fputs(",\"z\":", f);
			json_num(f, k.u.z);
			fputs(",\"p\":", f);
			json_num(f, k.u.p);
			fputs("},\"cohen_d\":", f);
			json_num(f, k.t.d);
			fputs(",\"hedges_g\":", f);
			json_num(f, k.t.g);
			fprintf(f, ",\"significant\":%s}",
				k.significant ? "true" : "false");
		}
	}
	fputs("]", f);
}

static int json(FILE *f, const struct exp_report *r)
{
	size_t nc = ctxmon_experiment_nconds(r->e);
	bool first = true;

	fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"experiment\",\"backend\":");
	json__put_str(f, r->backend ? r->backend : "");
	fprintf(f, ",\"runs_per_condition\":%u,\"warmup\":%u,\"interrupted\":%s,"
		   "\"alpha\":%g,\"outlier_rule\":\"%s\",\"tests\":\"%s\","
		   "\"conditions\":[",
		r->n, r->warmup, r->interrupted ? "true" : "false", r->alpha,
		OUTLIER_RULE, TEST_NOTE);
	for (size_t c = 0; c < nc; c++) {
		fprintf(f, "%s{\"name\":", c ? "," : "");
		json__put_str(f, ctxmon_experiment_cond_name(r->e, c));
		fputs(",\"command\":", f);
		json__put_str(f, r->cond_cmd[c]);
		fputc('}', f);
	}
	fputs("],\"units\":{", f);
	for (unsigned m = 0; m < CTXMON_M__MAX; m++)
		fprintf(f, "%s\"%s\":\"%s\"", m ? "," : "", ctxmon_metric_name(m),
			ctxmon_metric_unit(m));
	fputc('}', f);
	json_runs(f, r);
	fputs(",\"summary\":[", f);
	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		for (size_t c = 0; c < nc; c++) {
			struct ctxmon_metric_summary s;

			if (ctxmon_experiment_summary(r->e, c, m, &s) < 0)
				continue;
			fprintf(f, "%s\n{\"condition\":", first ? "" : ",");
			first = false;
			json__put_str(f, ctxmon_experiment_cond_name(r->e, c));
			fprintf(f, ",\"metric\":\"%s\",\"all\":",
				ctxmon_metric_name(m));
			json_summary(f, &s.all);
			fputs(",\"without_outliers\":", f);
			json_summary(f, &s.trimmed);
			fputc('}', f);
		}
	}
	fputc(']', f);
	json_compare(f, r);
	fputs(",\"verdicts\":[", f);
	for (size_t c = 1; c < nc; c++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (!m)
			return -ENOMEM;
		verdict(m, r, c);
		fclose(m);
		fputs(c > 1 ? "," : "", f);
		json__put_str(f, buf);
		free(buf);
	}
	fputc(']', f);
	if (r->regress) {
		struct ctxmon_linreg l;

		fprintf(f, ",\"regression\":{\"y\":\"%s\",\"x\":\"%s\"",
			ctxmon_metric_name(r->ry), ctxmon_metric_name(r->rx));
		if (ctxmon_experiment_regress(r->e, (size_t)-1, r->ry, r->rx,
					      &l) == 0) {
			fprintf(f, ",\"n\":%zu,\"slope\":", l.n);
			json_num(f, l.slope);
			fputs(",\"intercept\":", f);
			json_num(f, l.intercept);
			fputs(",\"r\":", f);
			json_num(f, l.r);
			fputs(",\"r2\":", f);
			json_num(f, l.r2);
			fputs(",\"p\":", f);
			json_num(f, l.p);
			fputs(",\"slope_se\":", f);
			json_num(f, l.slope_se);
			fputs(",\"intercept_se\":", f);
			json_num(f, l.intercept_se);
		}
		fputc('}', f);
	}
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- CSV ----------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static int csv(FILE *f, const struct exp_report *r)
{
	size_t n;
	const struct ctxmon_run *runs = ctxmon_experiment_runs(r->e, &n);

	fputs("condition,run,status,exit_status,kernel_match,ru_nvcsw,"
	      "ru_nivcsw,traced_vol,traced_invol,lost", f);
	for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
		const char *u = ctxmon_metric_unit(m);

		fprintf(f, ",%s%s%s", ctxmon_metric_name(m), *u ? "_" : "", u);
	}
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_run *u = &runs[i];

		csv_str(f, ctxmon_experiment_cond_name(r->e, u->cond));
		fprintf(f, ",%u,%s,%d,%s,%llu,%llu,%llu,%llu,%llu", u->index,
			ctxmon_run_status_name(u->status), u->exit_status,
			!u->kernel_valid ? "" : u->kernel_match ? "1" : "0",
			(unsigned long long)u->ru_nvcsw,
			(unsigned long long)u->ru_nivcsw,
			(unsigned long long)u->traced_vol,
			(unsigned long long)u->traced_invol,
			(unsigned long long)u->lost);
		for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
			fputc(',', f);
			if (isfinite(u->v[m]))
				fprintf(f, "%.17g", u->v[m]);
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

int output__experiment(FILE *f, enum out_format fmt,
		       const struct exp_report *r)
{
	switch (fmt) {
	case OUT_JSON:
		return json(f, r);
	case OUT_CSV:
		return csv(f, r);
	default:
		return text(f, r);
	}
}
