/*
 * cmd_diff.c - `ctxmon diff A B`: two captures compared.
 *
 * Two recordings (or two `stat --json` outputs): their threads (or
 * processes) matched by name (include/ctxmon/diff.h), every count and
 * time side by side with the change, largest change of the --sort field
 * first.  Two `ctxmon experiment --csv` or `--json` outputs: for each
 * condition and metric found in both, B's runs against A's with the
 * experiment's tests.
 *
 * Thin: options from one table, the work in the library.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/diff.h>
#include <ctxmon/experiment.h>
#include <ctxmon/record.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/exp_cmds.h"
#include "output/json_out.h"
#include "output/output.h"

static const char *const CMD = "diff";

enum {
	O_OUTPUT = 'o', O_HELP = 'h', O_LIMIT = 'n', O_SORT = 's',
	O_ALL = 'a', O_JSON = 0x100, O_ALPHA,
};

/* "wait, run, ...": the fields --sort takes. */
static const char *diff_fields(void)
{
	static char buf[512];

	return cli__names(buf, sizeof(buf), ctxmon_diff_field_name, CTXMON_DF__MAX);
}

static const struct cli_opt diff_opts[] = {
	{ "sort", O_SORT, O_SORT, "KEY",
	  "order by the absolute change of KEY (default wait: runnable "
	  "wait)", diff_fields },
	{ "limit", O_LIMIT, O_LIMIT, "N", "at most N rows (default 25; 0: all)" },
	{ "per-process", 'P', 'P', NULL, "compare processes, not threads" },
	{ "all-cpus", 'a', O_ALL, NULL,
	  "every task in the recordings, not only the recorded target" },
	CLI_ALIAS("all", O_ALL, NULL, "all-cpus"),
	{ "alpha", 0, O_ALPHA, "A",
	  "significance level for experiment files (default 0.05)" },
	{ "json", 0, O_JSON, NULL, "JSON" },
	CLI_OPT_STRICT,
	{ "output", O_OUTPUT, O_OUTPUT, "FILE", "write to FILE (default stdout)",
	  NULL, true },
	{ "help", O_HELP, O_HELP, NULL, "this help" },
	{ NULL },
};

const struct cli_doc diff_doc = {
	.name = "diff",
	.args = "[options] A B",
	.description =
		"Compare two captures.\n\n"
		"Two recordings (ctxmon record), or two 'ctxmon stat --json' outputs\n"
		"(without -I): threads are matched by name, PROC/THREAD#K with K\n"
		"counting same-named threads in creation order (tids differ between\n"
		"runs); every count and time is shown for A and B with the change,\n"
		"the largest change of --sort first.  When either side knows no pid\n"
		"(an import of perf script text without them), rows are matched by\n"
		"(comm, tid) instead, COMM/TID, and the output says so.\n\n"
		"Two 'ctxmon experiment' outputs (--csv or --json): for each condition\n"
		"and metric in both, B's runs against A's with Welch's t-test,\n"
		"Mann-Whitney U and Hedges' g, as experiment does.",
	.groups = (const struct cli_optgroup[]){
		{ "options", diff_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "record -o idle.data -- ./server-test", "a quiet run" },
		{ "record -o busy.data -- ./server-test", "the same under load" },
		{ "diff idle.data busy.data", "threads whose wait grew most" },
		{ "diff --sort involuntary --per-process idle.data busy.data",
		  "processes, by the change of their preemptions" },
		{ "diff before.csv after.csv", "two experiments' runs, tested" },
		{ NULL },
	},
	.notes = CLI_NOTE_RECORDING,
};

struct diff_run {
	const char *a, *b, *outpath;
	unsigned sort;
	unsigned long limit;
	bool procs, all, json, strict;
	double alpha;
};

static int parse(struct diff_run *d, int argc, char **argv)
{
	unsigned long v;
	int opt, f;

	optind = 1;
	while ((opt = cli__getopt(&diff_doc, argc, argv)) != -1) {
		switch (opt) {
		case O_SORT:
			f = ctxmon_diff_field_lookup(output__sort_alias(optarg));
			if (f < 0) {
				cli__err(CMD, "unknown field '%s'; --help lists "
					      "them", optarg);
				return -1;
			}
			d->sort = (unsigned)f;
			break;
		case O_LIMIT:
			if (cli__parse_uint(optarg, 1u << 30, &v) < 0) {
				cli__err(CMD, "bad limit '%s'", optarg);
				return -1;
			}
			d->limit = v;
			break;
		case 'P':
			d->procs = true;
			break;
		case O_ALL:
			d->all = true;
			break;
		case O_ALPHA:
			if (cli__parse_double(optarg, &d->alpha) < 0 ||
			    d->alpha >= 1) {
				cli__err(CMD, "bad --alpha '%s'", optarg);
				return -1;
			}
			break;
		case O_JSON:
			d->json = true;
			break;
		case CLI_KEY_STRICT:
			d->strict = true;
			break;
		case O_OUTPUT:
			d->outpath = optarg;
			break;
		case O_HELP:
			cli__help(stdout, &diff_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon diff --help'.\n");
			return -1;
		}
	}
	if (argc - optind != 2) {
		cli__err(CMD, "give two files to compare: ctxmon diff A B");
		return -1;
	}
	d->a = argv[optind];
	d->b = argv[optind + 1];
	return 0;
}

/* ---- recordings ---------------------------------------------------- */

static void json_row(FILE *f, const struct ctxmon_diff_row *r)
{
	fputs("{\"key\":", f);
	json__put_str(f, r->key);
	fprintf(f, ",\"in_a\":%s,\"in_b\":%s", r->in_a ? "true" : "false",
		r->in_b ? "true" : "false");
	for (int side = 0; side < 2; side++) {
		const double *v = side ? r->b : r->a;

		fprintf(f, ",\"%s\":{", side ? "b" : "a");
		for (unsigned k = 0; k < CTXMON_DF__MAX; k++)
			fprintf(f, "%s\"%s\":%.17g", k ? "," : "",
				ctxmon_diff_field_name(k), v[k]);
		fputc('}', f);
	}
	fputc('}', f);
}

static void text_val(char *buf, size_t len, double v, const char *unit)
{
	if (*unit)
		snprintf(buf, len, "%.2f%s", v, unit);
	else
		snprintf(buf, len, "%.0f", v);
}

/* A recording's rows, or a stat --json output's. */
static struct ctxmon_rowfile *load_rows(const struct diff_run *d,
				       const char *path, bool json)
{
	struct ctxmon_rowfile *r = json ? ctxmon_rowfile_from_stat_json(path) :
				  ctxmon_rowfile_from_recording(path, d->all);

	if (!r)
		cli__err(CMD, "cannot read %s: %s", path,
			 ctxmon_record_last_error());
	return r;
}

/* EXIT_OK when what was written to @f reached it, said otherwise. */
static int written(FILE *f, const struct diff_run *d)
{
	errno = 0;
	if (fflush(f) != EOF && !ferror(f))
		return EXIT_OK;
	cli__err(CMD, "writing %s: %s", d->outpath ? d->outpath : "the output",
		 strerror(errno ? errno : EIO));
	return EXIT_FAIL;
}

static int diff_rows(FILE *f, const struct diff_run *d, bool ja, bool jb)
{
	struct ctxmon_rowfile *ra = NULL, *rb = NULL;
	struct ctxmon_diff_row *rows = NULL;
	enum ctxmon_rows kind = d->procs ? CTXMON_ROWS_PROCESSES :
					   CTXMON_ROWS_THREADS;
	const struct ctxmon_stats *sa, *sb;
	size_t na, nb, n, shown;
	unsigned s = d->sort;
	struct ctxmon_verdict verd_a, verd_b;
	bool has_va = false, has_vb = false;
	int status = EXIT_FAIL, verdict_status = EXIT_OK;
	enum ctxmon_diff_match match;

	ra = load_rows(d, d->a, ja);
	rb = ra ? load_rows(d, d->b, jb) : NULL;
	if (!ra || !rb)
		goto out;
	/* each recording's verdict, as every reader gives it */
	if (!ctxmon_rowfile_get_verdict(ra, &verd_a)) {
		has_va = true;
		if (cli__verdict(CMD, d->a, &verd_a, d->strict) != EXIT_OK)
			verdict_status = EXIT_FAIL;
	}
	if (!ctxmon_rowfile_get_verdict(rb, &verd_b)) {
		has_vb = true;
		if (cli__verdict(CMD, d->b, &verd_b, d->strict) != EXIT_OK)
			verdict_status = EXIT_FAIL;
	}
	sa = ctxmon_rowfile_rows(ra, kind, &na);
	sb = ctxmon_rowfile_rows(rb, kind, &nb);
	match = ctxmon_diff_match_of(sa, na, sb, nb);
	rows = ctxmon_diff_rows(sa, na, sb, nb, kind, s, &n);
	if (!rows) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	shown = d->limit && d->limit < n ? d->limit : n;
	if (d->json) {
		fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"diff\",\"a\":");
		json__put_str(f, d->a);
		fputs(",\"b\":", f);
		json__put_str(f, d->b);
		fprintf(f, ",\"kind\":\"%s\",\"matched_by\":\"%s\",\"sort\":\"%s\","
			   "\"duration_a_ns\":%llu,\"duration_b_ns\":%llu,"
			   "\"rows\":[",
			d->procs ? "processes" : "threads",
			match == CTXMON_DIFF_BY_COMM_TID ? "comm_tid" : "name",
			ctxmon_diff_field_name(s),
			(unsigned long long)ctxmon_rowfile_duration(ra),
			(unsigned long long)ctxmon_rowfile_duration(rb));
		for (size_t i = 0; i < shown; i++) {
			fputs(i ? ",\n" : "\n", f);
			json_row(f, &rows[i]);
		}
		fputc(']', f);
		/* null for a stat --json input, which has no verdict */
		fputs(",\"integrity_a\":", f);
		if (has_va)
			(void)ctxmon_verdict_write_json(&verd_a, f);
		else
			fputs("null", f);
		fputs(",\"integrity_b\":", f);
		if (has_vb)
			(void)ctxmon_verdict_write_json(&verd_b, f);
		else
			fputs("null", f);
		fputs("}\n", f);
	} else {
		const char *u = ctxmon_diff_field_unit(s);

		fprintf(f, "A: %s (%.3f s)\nB: %s (%.3f s)\n%zu %s matched by "
			   "%s, sorted by the change of %s%s%s%s\n\n",
			d->a, (double)ctxmon_rowfile_duration(ra) / 1e9, d->b,
			(double)ctxmon_rowfile_duration(rb) / 1e9, n,
			d->procs ? "processes" : "threads",
			match == CTXMON_DIFF_BY_COMM_TID ?
				"(comm, tid): pids unknown" :
				"name",
			ctxmon_diff_field_name(s), *u ? " (" : "", u, *u ? ")" : "");
		fprintf(f, "%-28s %12s %12s %12s %8s   %s\n",
			d->procs ? "PROCESS" : "THREAD",
			"A", "B", "CHANGE", "CHANGE%", "OTHER CHANGES (B-A)");
		for (size_t i = 0; i < shown; i++) {
			const struct ctxmon_diff_row *r = &rows[i];
			char va[32], vb[32], dv[32];
			double ch = r->b[s] - r->a[s];

			text_val(va, sizeof(va), r->a[s], u);
			text_val(vb, sizeof(vb), r->b[s], u);
			text_val(dv, sizeof(dv), ch, u);
			fprintf(f, "%-28s %12s %12s %12s ", r->key,
				r->in_a ? va : "-", r->in_b ? vb : "-", dv);
			if (r->in_a && r->in_b && r->a[s] != 0)
				fprintf(f, "%+7.0f%%   ", ch / fabs(r->a[s]) * 100);
			else
				fprintf(f, "%8s   ", "-");
			for (unsigned k = 0; k < CTXMON_DF__MAX; k++) {
				double c = r->b[k] - r->a[k];

				if (k == s || c == 0)
					continue;
				text_val(dv, sizeof(dv), c, ctxmon_diff_field_unit(k));
				fprintf(f, " %s %s%s", ctxmon_diff_field_name(k),
					c > 0 ? "+" : "", dv);
			}
			fputc('\n', f);
		}
		if (shown < n)
			fprintf(f, "(%zu more; --limit 0 shows all)\n", n - shown);
	}
	status = written(f, d);
	if (status == EXIT_OK)
		status = verdict_status;
out:
	free(rows);
	ctxmon_rowfile_free(ra);
	ctxmon_rowfile_free(rb);
	return status;
}

/* ---- experiments --------------------------------------------------- */

enum kind { KIND_RECORDING, KIND_EXPERIMENT, KIND_STAT_JSON };

/* What @path holds, from its first bytes. */
static enum kind file_kind(const char *path)
{
	char head[64] = "";
	FILE *in = fopen(path, "re");

	if (in) {
		size_t n = fread(head, 1, sizeof(head) - 1, in);

		head[n] = 0;
		fclose(in);
	}
	if (!strncmp(head, "condition,run,status,", 21) ||
	    strstr(head, "\"ctxmon\":\"experiment\""))
		return KIND_EXPERIMENT;
	if (head[0] == '{')
		return KIND_STAT_JSON;
	return KIND_RECORDING;
}

static int diff_experiments(FILE *f, const struct diff_run *d)
{
	struct ctxmon_experiment *xa = NULL, *xb = NULL, *e = NULL;
	char **names = NULL;
	size_t nnames = 0, na = 0, nb = 0, nra, nrb, shown = 0;
	const struct ctxmon_run *ra, *rb;
	int status = EXIT_FAIL;

	xa = ctxmon_experiment_load(d->a);
	if (!xa) {
		cli__err(CMD, "cannot read %s: %s", d->a, ctxmon_record_last_error());
		goto out;
	}
	xb = ctxmon_experiment_load(d->b);
	if (!xb) {
		cli__err(CMD, "cannot read %s: %s", d->b, ctxmon_record_last_error());
		goto out;
	}
	/* one collection, A's conditions then B's, named "A:x" and "B:x" */
	na = ctxmon_experiment_nconds(xa);
	nb = ctxmon_experiment_nconds(xb);
	names = calloc(na + nb + 1, sizeof(*names));
	if (!names)
		goto oom;
	for (size_t i = 0; i < na + nb; i++) {
		const char *n = i < na ? ctxmon_experiment_cond_name(xa, i) :
					 ctxmon_experiment_cond_name(xb, i - na);

		if (asprintf(&names[i], "%c:%s", i < na ? 'A' : 'B', n) < 0) {
			names[i] = NULL;
			goto oom;
		}
		nnames++;
	}
	e = ctxmon_experiment_new((const char *const *)names, nnames);
	if (!e)
		goto oom;
	ra = ctxmon_experiment_runs(xa, &nra);
	rb = ctxmon_experiment_runs(xb, &nrb);
	for (size_t i = 0; i < nra + nrb; i++) {
		struct ctxmon_run r = i < nra ? ra[i] : rb[i - nra];

		if (i >= nra)
			r.cond += (unsigned)na;
		if (ctxmon_experiment_add(e, &r) < 0)
			goto oom;
	}
	if (d->json)
		fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"diff\",\"alpha\":%g,\"comparisons\":[",
			d->alpha);
	else
		fprintf(f, "A: %s\nB: %s\nB's runs against A's: Welch's t-test, "
			   "Mann-Whitney U (normal approximation, tie and "
			   "continuity corrections), Hedges' g; * both p < %g\n\n"
			   "%-12s %-16s %12s %12s %8s %10s %10s %7s\n",
			d->a, d->b, d->alpha, "CONDITION", "METRIC", "MEAN-A",
			"MEAN-B", "CHANGE%", "P(T)", "P(U)", "G");
	for (size_t ca = 0, first = 1; ca < na; ca++) {
		size_t cb;

		for (cb = na; cb < na + nb; cb++)
			if (!strcmp(names[cb] + 2, names[ca] + 2))
				break;
		if (cb == na + nb)
			continue;
		for (unsigned m = 0; m < CTXMON_M__MAX; m++) {
			struct ctxmon_metric_summary sa, sb;
			struct ctxmon_comparison k;
			char ch[32];

			if (ctxmon_experiment_summary(e, ca, m, &sa) < 0 ||
			    ctxmon_experiment_summary(e, cb, m, &sb) < 0 ||
			    ctxmon_experiment_compare(e, cb, ca, m, d->alpha,
						      &k) < 0 ||
			    !isfinite(k.t.t))
				continue;
			if (d->json) {
				fprintf(f, "%s\n{\"condition\":", first ? "" : ",");
				json__put_str(f, names[ca] + 2);
				fprintf(f, ",\"metric\":\"%s\",\"mean_a\":%.17g,"
					   "\"mean_b\":%.17g,\"welch_t\":%.17g,"
					   "\"welch_p\":%.17g,\"u\":%.17g,"
					   "\"u_p\":%.17g,\"hedges_g\":%.17g,"
					   "\"significant\":%s}",
					ctxmon_metric_name(m), sa.all.mean,
					sb.all.mean, k.t.t, k.t.p, k.u.u, k.u.p,
					k.t.g, k.significant ? "true" : "false");
				first = 0;
				shown++;
				continue;
			}
			if (sa.all.mean)
				snprintf(ch, sizeof(ch), "%+.1f%%",
					 (sb.all.mean - sa.all.mean) /
						 fabs(sa.all.mean) * 100);
			else
				snprintf(ch, sizeof(ch), "-");
			fprintf(f, "%-12s %-16s %12.6g %12.6g %8s %10.3g "
				   "%10.3g %7.2f %s\n",
				names[ca] + 2, ctxmon_metric_name(m), sa.all.mean,
				sb.all.mean, ch, k.t.p, k.u.p, k.t.g,
				k.significant ? "*" : "");
			shown++;
		}
	}
	if (d->json)
		fputs("]}\n", f);
	else if (!shown)
		fprintf(f, "(nothing to test: a condition needs 2 ok runs in "
			   "each file, and a metric that is not constant in "
			   "both)\n");
	status = written(f, d);
	goto out;
oom:
	cli__err(CMD, "out of memory");
out:
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	ctxmon_experiment_free(e);
	ctxmon_experiment_free(xa);
	ctxmon_experiment_free(xb);
	return status;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_run d = { .sort = CTXMON_DF_WAIT, .limit = 25,
			      .alpha = 0.05 };
	enum kind ka, kb;
	struct cli_out of;
	int status, ret;

	ret = parse(&d, argc, argv);
	if (ret)
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	ka = file_kind(d.a);
	kb = file_kind(d.b);
	if ((ka == KIND_EXPERIMENT) != (kb == KIND_EXPERIMENT)) {
		cli__err(CMD, "%s and %s are not of one kind: give two "
			      "experiment outputs, or two recordings or stat "
			      "--json outputs", d.a, d.b);
		return EXIT_USAGE;
	}
	if (cli__out_open(CMD, &of, d.outpath, stdout, 0) < 0)
		return EXIT_FAIL;
	if (ka == KIND_EXPERIMENT)
		status = diff_experiments(of.f, &d);
	else
		status = diff_rows(of.f, &d, ka == KIND_STAT_JSON,
				   kb == KIND_STAT_JSON);
	if (cli__out_end(CMD, &of, status == EXIT_OK) < 0)
		status = EXIT_FAIL;
	return status;
}
