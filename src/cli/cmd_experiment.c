/*
 * cmd_experiment.c - `ctxmon experiment`: run one or more commands N times
 * each under ctxmon's capture, interleaved run by run, and summarise:
 * per-run rows, means with confidence intervals, outliers by a stated
 * rule, tests between conditions, a regression, plots.
 *
 * Thin: options from one table, the runs by ctxmon_run_once() and the
 * statistics by include/ctxmon/experiment.h; the writing by
 * src/output/exp_output.c and svg.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/experiment.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/exp_cmds.h"
#include "output/exp_output.h"

static const char *const CMD = "experiment";

enum {
	O_RUNS = 'r', O_OUTPUT = 'o', O_HELP = 'h', O_QUIET = 'q',
	O_BUFFER = 'm',
	O_WARMUP = 0x100, O_COND, O_VS, O_PIN, O_TIMEOUT, O_REGRESS, O_ALPHA,
	O_METRICS, O_NOCAUSES, O_BACKEND, O_TRACEFS, O_JSON, O_CSV, O_PLOT,
	O_SHOWOUT, O_NICE, O_REALTIME,
};

/* "switches, voluntary, ...": the metrics --metrics and --regress name. */
static const char *exp_metrics(void)
{
	static char buf[1024];

	return cli__names(buf, sizeof(buf), ctxmon_metric_name, CTXMON_M__MAX);
}

/* The options, once (cli/opts.h): --help, man page and completion. */
static const struct cli_opt exp_opts[] = {
	{ "runs", 'r', O_RUNS, "N",
	  "runs per condition (default 10; perf stat -r's letter)" },
	{ "warmup", 0, O_WARMUP, "K",
	  "runs per condition first, not counted (default 0)" },
	{ "condition", 0, O_COND, "NAME=CMD",
	  "a condition: CMD split into words (quotes group, no shell; use "
	  "sh -c '...' for one); repeat for each condition" },
	{ "vs", 0, O_VS, "CMD",
	  "with -- CMD: a second condition, \"b\" (the first is \"a\")" },
	{ "pin", 0, O_PIN, "CPUS", "run the commands on these CPUs (0,2-3)" },
	{ "timeout", 0, O_TIMEOUT, "SEC",
	  "kill a run still going after SEC seconds; it is reported as "
	  "timeout" },
	{ "regress", 0, O_REGRESS, "Y~X",
	  "least squares of metric Y on metric X over all ok runs, e.g. "
	  "elapsed~irqs" },
	{ "alpha", 0, O_ALPHA, "A",
	  "significance level of the verdict (default 0.05)" },
	{ "metrics", 0, O_METRICS, "LIST",
	  "metrics in the tables and plots, comma-separated (default: all "
	  "measured; per run, summed over the command's threads)",
	  exp_metrics },
	{ "no-causes", 0, O_NOCAUSES, NULL,
	  "trace no irqs or syscalls: lower overhead, no causes, irqs or "
	  "latency percentiles" },
	{ "backend", 0, O_BACKEND, "NAME",
	  "capture backend (default auto; a streaming one: bpf, perf, "
	  "ftrace)", cli__backend_names },
	{ "buffer-size", 'm', O_BUFFER, "SIZE", CLI_HELP_SIZE
	  " (default 4096 KiB; perf: a share of 16 MiB if more)" },
	{ "tracefs", 0, O_TRACEFS, "DIR", "tracefs mount point", NULL, true },
	{ "nice", 0, O_NICE, "N",
	  "ctxmon's reader runs at nice N while each command runs (default "
	  "-10 from 0; the commands keep their own), so busy CPUs do not "
	  "starve it" },
	{ "realtime", 0, O_REALTIME, "PRIO",
	  "ctxmon's reader runs at real-time priority PRIO (SCHED_FIFO, 1-99; "
	  "CAP_SYS_NICE) while each command runs, which keeps its own "
	  "policy: for workloads whose real-time threads would starve it" },
	{ "json", 0, O_JSON, NULL, "JSON: runs, summaries, tests, regression" },
	{ "csv", 0, O_CSV, NULL, "CSV: one row per run" },
	{ "output", 'o', O_OUTPUT, "FILE",
	  "write the report to FILE (default stdout)", NULL, true },
	{ "plot", 0, O_PLOT, "FILE",
	  "plots: FILE.svg (one SVG) or FILE.html (a page of SVGs)", NULL,
	  true },
	{ "show-output", 0, O_SHOWOUT, NULL,
	  "let the commands write to stdout (default: discarded)" },
	{ "quiet", 'q', O_QUIET, NULL, "no progress line" },
	{ "help", 'h', O_HELP, NULL, "this help" },
	{ NULL },
};

const struct cli_doc experiment_doc = {
	.name = "experiment",
	.args = "[options] -r N -- CMD [ARGS] [--vs 'CMD ARGS']\n"
		"       (a trailing --vs ends the first command)\n"
		"       ctxmon experiment [options] -r N --condition NAME='CMD ARGS' ...",
	.description =
		"Run each condition N times under ctxmon's capture, interleaving the\n"
		"conditions run by run so that drift hits all alike. Every run's counts\n"
		"are exact and checked against its own getrusage, as 'ctxmon stat' does.\n"
		"Summaries per condition and metric: mean, sd, median, min/max, 95%\n"
		"confidence interval of the mean (Student t), outliers by the rule\n"
		"median +- 3 x 1.4826 x MAD, mean without outliers. With two or more\n"
		"conditions, each against the first: Welch's t-test, Mann-Whitney U\n"
		"(normal approximation, tie and continuity corrections), Hedges' g, and\n"
		"a verdict naming the metrics where both tests are below alpha.\n\n"
		"elapsed is the traced span from the command's fork to its last exit;\n"
		"a run counts in the statistics only when it exited 0.  The units of\n"
		"each metric are in the text table's headings and in --json.",
	.groups = (const struct cli_optgroup[]){
		{ "options", exp_opts },
		{ NULL },
	},
	/* -n is rows (--limit) in every command (docs/cli.md) */
	.retired = (const struct cli_retired[]){
		{ 'n', NULL, true,
		  "-n is --limit (rows) in every command; the runs per "
		  "condition are -r/--runs N" },
		{ 0 },
	},
	.examples = (const struct cli_example[]){
		{ "experiment -r 30 --condition a='pingpong 1000' --condition b='pingpong 4000'",
		  "two conditions, 30 runs each, tested" },
		{ "experiment -r 200 --pin 0 --regress elapsed~irqs --plot gzip.svg -- gzip -9 -k -f big.avi",
		  "elapsed time regressed on irqs, with plots" },
		{ "experiment -r 20 --csv -o runs.csv -- make -j2 --vs 'make -j1'",
		  "two builds, one CSV row per run" },
		{ "experiment -r 50 --timeout 5 --json -o out.json -- ./server-test",
		  "runs over 5 s killed and reported" },
		{ NULL },
	},
	.notes = "Exit status: 0 when every run exited 0, 1 when some did not (they are\n"
		 "listed) or nothing could be run, 2 usage, 130 interrupted (the summary\n"
		 "of the runs done is printed first).\n\n"
		 "Needs root or CAP_PERFMON (and read access to tracefs).",
	.stop_at_operand = true,
};

struct exp_run {
	unsigned long n, warmup;
	char ***argv;		/* per condition, NULL-terminated words */
	char **names, **cmdline;
	size_t ncond;
	char **tail;		/* -- CMD */
	const char *vs;
	struct ctxmon_run_opts ro;
	int nice;		/* --nice */
	bool nice_set;
	const char *outpath, *plotpath;
	enum out_format fmt;
	bool quiet;
	struct exp_report rep;
	const char *metrics;
};

/* Split @s into words: whitespace separates, '...' and "..." group. */
static char **split_words(const char *s)
{
	size_t len = strlen(s), nw = 0;
	char **w = calloc(len / 2 + 2, sizeof(*w));
	char *buf = malloc(len + 1), *o = buf;

	if (!w || !buf)
		goto fail;
	while (*s) {
		char q = 0;

		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		w[nw++] = o;
		for (; *s && (q || (*s != ' ' && *s != '\t' && *s != '\n')); s++) {
			if (!q && (*s == '\'' || *s == '"'))
				q = *s;
			else if (q && *s == q)
				q = 0;
			else
				*o++ = *s;
		}
		*o++ = 0;
		if (q)
			goto fail;	/* unbalanced quote */
	}
	if (!nw)
		goto fail;
	return w;
fail:
	free(w);
	free(buf);
	return NULL;
}

/* The same layout from an argv: w[0] owns one buffer of all words. */
static char **dup_words(char **argv)
{
	size_t n = 0, len = 0;
	char **w, *o;

	for (; argv[n]; n++)
		len += strlen(argv[n]) + 1;
	w = calloc(n + 1, sizeof(*w));
	o = malloc(len ? len : 1);
	if (!w || !o) {
		free(w);
		free(o);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		w[i] = o;
		o = stpcpy(o, argv[i]) + 1;
	}
	return w;
}

static void free_words(char **w)
{
	if (w)
		free(w[0]);
	free(w);
}

static int add_cond(struct exp_run *x, const char *name, char **words,
		    const char *line)
{
	size_t n = x->ncond + 1;
	char ***a = realloc(x->argv, n * sizeof(*a));
	char **nm, **cl;

	if (!a)
		return -1;
	x->argv = a;
	nm = realloc(x->names, n * sizeof(*nm));
	if (!nm)
		return -1;
	x->names = nm;
	cl = realloc(x->cmdline, n * sizeof(*cl));
	if (!cl)
		return -1;
	x->cmdline = cl;
	x->argv[x->ncond] = words;
	x->names[x->ncond] = strdup(name);
	x->cmdline[x->ncond] = strdup(line);
	x->ncond++;
	return x->names[x->ncond - 1] && x->cmdline[x->ncond - 1] ? 0 : -1;
}

static int cond_opt(struct exp_run *x, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[64], **w;

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name)) {
		cli__err(CMD, "bad condition '%s': give NAME='CMD ARGS'", arg);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	for (size_t i = 0; i < x->ncond; i++) {
		if (!strcmp(x->names[i], name)) {
			cli__err(CMD, "condition '%s' given twice", name);
			return -1;
		}
	}
	w = split_words(eq + 1);
	if (!w) {
		cli__err(CMD, "bad command in condition '%s': empty or an "
			      "unbalanced quote", name);
		return -1;
	}
	if (add_cond(x, name, w, eq + 1) < 0) {
		free_words(w);
		cli__err(CMD, "out of memory");
		return -1;
	}
	return 0;
}

static int parse_regress(struct exp_run *x, const char *arg)
{
	char y[64];
	const char *t = strchr(arg, '~');
	int my, mx;

	if (!t || t == arg || (size_t)(t - arg) >= sizeof(y))
		goto bad;
	snprintf(y, sizeof(y), "%.*s", (int)(t - arg), arg);
	my = ctxmon_metric_lookup(y);
	mx = ctxmon_metric_lookup(t + 1);
	if (my < 0 || mx < 0)
		goto bad;
	x->rep.regress = true;
	x->rep.ry = (unsigned)my;
	x->rep.rx = (unsigned)mx;
	return 0;
bad:
	cli__err(CMD, "bad --regress '%s': give Y~X with two metric names "
		      "(see --help), e.g. elapsed~irqs", arg);
	return -1;
}

static int one_metric(const char *t, void *ctx)
{
	struct exp_run *x = ctx;
	int m = ctxmon_metric_lookup(t);

	if (m < 0) {
		cli__err(CMD, "unknown metric '%s'; --help lists them", t);
		return -1;
	}
	x->rep.show[m] = true;
	return 0;
}

static int parse_metrics(struct exp_run *x, const char *arg)
{
	int n;

	memset(x->rep.show, 0, sizeof(x->rep.show));
	n = cli__each(arg, one_metric, x);
	if (n == 0)
		cli__err(CMD, "empty --metrics list; --help lists the metrics");
	return n > 0 ? 0 : -1;
}

static int parse(struct exp_run *x, int argc, char **argv)
{
	unsigned long v;
	double d;
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&experiment_doc, argc, argv)) != -1) {
		switch (opt) {
		case O_RUNS:
			if (cli__parse_uint(optarg, 1000000, &x->n) < 0 || !x->n) {
				cli__err(CMD, "bad -n '%s': give a number of runs, "
					      "1 or more", optarg);
				return -1;
			}
			break;
		case O_WARMUP:
			if (cli__parse_uint(optarg, 1000000, &x->warmup) < 0) {
				cli__err(CMD, "bad --warmup '%s'", optarg);
				return -1;
			}
			break;
		case O_COND:
			if (cond_opt(x, optarg) < 0)
				return -1;
			break;
		case O_VS:
			x->vs = optarg;
			break;
		case O_PIN:
			x->ro.pin = optarg;
			break;
		case O_TIMEOUT:
			if (cli__parse_seconds(optarg, false,
					       &x->ro.timeout_s) < 0) {
				cli__err(CMD, "bad --timeout '%s': give seconds "
					      "up to 1e9",
					 optarg);
				return -1;
			}
			break;
		case O_REGRESS:
			if (parse_regress(x, optarg) < 0)
				return -1;
			break;
		case O_ALPHA:
			if (cli__parse_double(optarg, &d) < 0 || d >= 1) {
				cli__err(CMD, "bad --alpha '%s': give a level in "
					      "(0,1), e.g. 0.01", optarg);
				return -1;
			}
			x->rep.alpha = d;
			break;
		case O_METRICS:
			x->metrics = optarg;
			break;
		case O_NOCAUSES:
			x->ro.causes = false;
			break;
		case O_BACKEND:
			x->ro.backend = optarg;
			break;
		case O_BUFFER:
			if (cli__parse_kib(optarg, &v) < 0 || v < 4 ||
			    v > 4u << 20) {
				cli__err(CMD, "bad buffer size '%s': give KiB per "
					      "CPU (4 to 4194304) or a size with "
					      "a unit, e.g. 4M", optarg);
				return -1;
			}
			x->ro.buffer_kb = (unsigned)v;
			break;
		case O_TRACEFS:
			x->ro.tracefs = optarg;
			break;
		case O_JSON:
		case O_CSV:
			if (cli__out_format(CMD, &x->fmt, opt == O_JSON ?
								  OUT_JSON :
								  OUT_CSV) < 0)
				return -1;
			break;
		case O_OUTPUT:
			x->outpath = optarg;
			break;
		case O_PLOT:
			x->plotpath = optarg;
			break;
		case O_SHOWOUT:
			x->ro.discard_stdout = false;
			break;
		case O_NICE:
			if (capture__parse_nice(CMD, optarg, &x->nice) < 0)
				return -1;
			x->nice_set = true;
			break;
		case O_REALTIME:
			if (capture__parse_realtime(CMD, optarg,
						    &x->ro.reader_rt_prio) < 0)
				return -1;
			break;
		case O_QUIET:
			x->quiet = true;
			break;
		case O_HELP:
			cli__help(stdout, &experiment_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon experiment --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		x->tail = argv + optind;
		/* "-- CMD ARGS --vs 'CMD2 ARGS'", as the synopsis reads: the
		 * last "--vs X" of the command line ends the first command */
		for (int i = argc - 2; i > optind; i--) {
			if (!strcmp(argv[i], "--vs") && i == argc - 2) {
				x->vs = argv[i + 1];
				argv[i] = NULL;
				break;
			}
		}
	}
	if (x->tail && x->ncond) {
		cli__err(CMD, "give either -- CMD or --condition, not both");
		return -1;
	}
	if (x->vs && !x->tail) {
		cli__err(CMD, "--vs compares with the command after --; give one");
		return -1;
	}
	if (x->tail) {
		char line[1024] = "";
		char **w = dup_words(x->tail);

		for (char **a = x->tail; *a; a++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 "%s%s", a == x->tail ? "" : " ", *a);
		if (!w || add_cond(x, "a", w, line) < 0) {
			free_words(w);
			cli__err(CMD, "out of memory");
			return -1;
		}
		if (x->vs) {
			w = split_words(x->vs);
			if (!w || add_cond(x, "b", w, x->vs) < 0) {
				cli__err(CMD, "bad --vs command '%s'", x->vs);
				return -1;
			}
		}
	}
	if (!x->ncond) {
		cli__err(CMD, "nothing to run: give -- CMD or --condition "
			      "NAME='CMD'; see --help");
		return -1;
	}
	if (x->plotpath) {
		size_t l = strlen(x->plotpath);

		if (!(l > 4 && !strcmp(x->plotpath + l - 4, ".svg")) &&
		    !(l > 5 && !strcmp(x->plotpath + l - 5, ".html"))) {
			cli__err(CMD, "bad --plot '%s': the name must end in .svg "
				      "or .html", x->plotpath);
			return -1;
		}
	}
	if (x->metrics && parse_metrics(x, x->metrics) < 0)
		return -1;
	if (x->rep.regress) {
		x->rep.show[x->rep.rx] = true;
		x->rep.show[x->rep.ry] = true;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Show every metric some run measured (unless --metrics chose). */
static void default_show(struct exp_run *x, const struct ctxmon_experiment *e)
{
	size_t n;
	const struct ctxmon_run *runs = ctxmon_experiment_runs(e, &n);

	if (x->metrics)
		return;
	for (size_t i = 0; i < n; i++)
		for (unsigned m = 0; m < CTXMON_M__MAX; m++)
			if (isfinite(runs[i].v[m]))
				x->rep.show[m] = true;
}

static int write_plot(struct exp_run *x)
{
	size_t l = strlen(x->plotpath);
	struct cli_out po;
	int ret;

	if (cli__out_open(CMD, &po, x->plotpath, NULL, 0) < 0)
		return -1;
	ret = output__experiment_plot(po.f, &x->rep,
				      l >= 5 &&
					      !strcmp(x->plotpath + l - 5,
						      ".html"));
	if (ret < 0 || ferror(po.f)) {
		cli__err(CMD, "writing %s: %s", x->plotpath,
			 strerror(cli__out_errno(&po, 0)));
		cli__out_end(CMD, &po, false);
		return -1;
	}
	return cli__out_end(CMD, &po, true);
}

/* All the runs, interleaved; 0, or -1 when nothing could be run.
 * @nbad: how many of the runs counted did not end ok. */
static int run_all(struct exp_run *x, struct ctxmon_experiment *e,
		   unsigned long *nbad)
{
	unsigned long rounds = x->warmup + x->n, total = rounds * x->ncond,
		      done = 0;
	bool tty = !x->quiet && isatty(STDERR_FILENO);
	double t0 = now_s();
	bool any_run = false;

	for (unsigned long k = 0; k < rounds && !cli_signal; k++) {
		for (size_t c = 0; c < x->ncond && !cli_signal; c++) {
			struct ctxmon_run r = { .cond = (unsigned)c };
			int ret;

			if (tty) {
				double el = now_s() - t0;
				double eta = done ? el / (double)done *
							    (double)(total - done) :
						    0;

				fprintf(stderr, "\rctxmon experiment: run %lu of %lu "
						"(%s%s), ETA %.0f s   ",
					k + 1, rounds, x->names[c],
					k < x->warmup ? ", warm-up" : "", eta);
			}
			x->ro.argv = x->argv[c];
			ret = ctxmon_run_once(&x->ro, &r);
			done++;
			if (ret == 0) {
				any_run = true;
				x->rep.backend = r.backend;
			} else if (!any_run) {
				/* nothing has run yet: a setup problem, not a
				 * property of the command */
				if (tty)
					fputc('\n', stderr);
				cli__err(CMD, "condition %s: %s", x->names[c],
					 r.error);
				return -1;
			}
			if (k < x->warmup)
				continue;
			r.index = (unsigned)(k - x->warmup + 1);
			if (r.status != CTXMON_RUN_OK &&
			    r.status != CTXMON_RUN_INTERRUPTED)
				(*nbad)++;
			if (r.status == CTXMON_RUN_INTERRUPTED || cli_signal)
				x->rep.interrupted = true;
			if (ctxmon_experiment_add(e, &r) < 0) {
				cli__err(CMD, "out of memory");
				return -1;
			}
		}
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	if (cli_signal)
		x->rep.interrupted = true;
	return 0;
}

int cmd_experiment(int argc, char **argv)
{
	struct exp_run x = {
		.n = 10,
		.ro = { .sz = sizeof(x.ro), .causes = true,
			.discard_stdout = true, .stop = &cli_signal },
		.rep = { .alpha = 0.05 },
	};
	struct ctxmon_experiment *e = NULL;
	struct cli_out of = { .f = stdout };
	FILE *f = stdout;
	unsigned long nbad = 0;
	int status = EXIT_FAIL, ret;

	ret = parse(&x, argc, argv);
	if (ret) {
		status = ret > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	{
		int cur;

		x.ro.reader_nice_set = capture__reader_nice(
			x.nice_set, x.nice, &x.ro.reader_nice, &cur);
		/* said once here; each run then reads at its nice */
		if (x.ro.reader_rt_prio &&
		    !capture__realtime_allowed(CMD, x.ro.reader_rt_prio))
			x.ro.reader_rt_prio = 0;
	}
	e = ctxmon_experiment_new((const char *const *)x.names, x.ncond);
	if (!e) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	if (cli__out_open(CMD, &of, x.outpath, stdout, 0) < 0)
		goto out;
	f = of.f;
	cli__signals();
	if (run_all(&x, e, &nbad) < 0)
		goto out;
	default_show(&x, e);
	x.rep.e = e;
	x.rep.cond_cmd = (const char *const *)x.cmdline;
	x.rep.n = (unsigned)x.n;
	x.rep.warmup = (unsigned)x.warmup;
	ret = output__experiment(f, x.fmt, &x.rep);
	if (ret < 0 || fflush(f) == EOF) {
		cli__err(CMD, "writing %s: %s",
			 x.outpath ? x.outpath : "the report",
			 strerror(cli__out_errno(&of, 0)));
		goto out;
	}
	if (x.plotpath && write_plot(&x) < 0)
		goto out;
	/* said where a script's log sees it, the report going elsewhere */
	if (nbad) {
		size_t nruns;

		ctxmon_experiment_runs(e, &nruns);
		cli__err(CMD, "%lu of %zu runs did not exit 0 (the report "
			      "lists them; they are not in the statistics)",
			 nbad, nruns);
	}
	status = x.rep.interrupted ? 130 : nbad ? EXIT_FAIL : EXIT_OK;
	/* a report of failed or interrupted runs is whole: it lists them */
	if (cli__out_end(CMD, &of, true) < 0)
		status = EXIT_FAIL;
out:
	cli__out_end(CMD, &of, false);
	for (size_t i = 0; i < x.ncond; i++) {
		free_words(x.argv[i]);
		free(x.names[i]);
		free(x.cmdline[i]);
	}
	free(x.argv);
	free(x.names);
	free(x.cmdline);
	ctxmon_experiment_free(e);
	return status;
}
