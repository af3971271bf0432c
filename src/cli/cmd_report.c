/*
 * cmd_report.c - `ctxmon report`: stat's numbers, from a recording.
 *
 * The recording's events go through the same accounting (ctxmon_account)
 * and the same output code as a live `ctxmon stat`, seeded with the tasks
 * the recorder declared and marked with the recorder's target, so a
 * report of a whole recording prints what stat printed for that run.
 * Filters narrow the events (--time, --cpu) or the rows (--pid, --tid,
 * --comm).  Losses are listed where they happened; a recording cut short
 * or damaged is reported on stderr and read up to where it stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/cmd_latency.h"
#include "cli/recording.h"
#include <ctxmon/causes.h>
#include <ctxmon/export.h>

static const char *const CMD = "report";

#define MAX_SHOWN_LOSSES 20

/* ---- stat's final output, shared with record --stat ---------------- */

static size_t
filter_rows(struct ctxmon_stats *rows, size_t n, bool proc,
	    bool (*keep)(const struct ctxmon_stats *, bool, void *), void *ctx)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		if (keep(&rows[i], proc, ctx))
			rows[o++] = rows[i];
	return o;
}

static int exit_status(int wstatus)
{
	return capture__exit_status(wstatus);
}

int recording__emit(FILE *f, struct output_opts *o, bool want_threads,
		    bool want_procs, struct ctxmon_account *a,
		    const struct run_summary *s,
		    bool (*keep)(const struct ctxmon_stats *row, bool proc,
				 void *ctx),
		    void *keep_ctx)
{
	struct report rep = { .interval = -1 };
	struct causes_report cr = { 0 };
	struct ctxmon_cpu_stats *cpus = NULL;
	struct ctxmon_stats *th = NULL, *pr = NULL;
	size_t nth = 0, npr = 0, ncpu = 0;
	bool all = s->target == CTXMON_TARGET_ALL;
	int ret = -ENOMEM;

	ctxmon_account_finish(a, s->cap.stop_ts);
	th = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &nth);
	pr = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &npr);
	cpus = ctxmon_account_cpus(a, &ncpu);
	if (!th || !pr || !cpus)
		goto out;
	rep.cap = s->cap;
	rep.backend = s->backend;
	rep.text_reader = s->backend &&
			  (ctxmon_backend_caps(s->backend) & CTXMON_CAP_TEXT);
	rep.source = s->source;
	rep.verdict = s->verdict;
	rep.duration_ns = s->cap.stop_ts > s->cap.start_ts ?
				  s->cap.stop_ts - s->cap.start_ts :
				  0;
	rep.anomalies = ctxmon_account_anomalies(a);
	/* Causes are shown when the account was asked for them (-EINVAL
	 * otherwise); rows filtered below keep theirs by tid. */
	if (causes_report__collect(a, false, s->arch, &cr) == 0)
		rep.causes = &cr;
	if (s->has_exit) {
		rep.has_exit = true;
		rep.exit_status = exit_status(s->wstatus);
		/* Against the kernel only when every row is there. */
		if (s->target == CTXMON_TARGET_CMD && s->has_rusage && !keep) {
			if (kcmp__tree(&rep.kernel, s->root,
						s->marks ? s->marks :
						kcmp__backend_marks(s->backend),
						th, nth, th, nth, pr, npr) < 0)
				goto out;
			rep.kernel.ru_nvcsw = s->ru_nvcsw;
			rep.kernel.ru_nivcsw = s->ru_nivcsw;
			rep.kernel.ru_cpu_ns = s->ru_cpu_ns;
			if (s->backend)
				kcmp__caps(&rep.kernel,
						    ctxmon_backend_caps(s->backend));
			/* record --stat: this kernel; report: the
			 * recording's */
			if (!s->source) {
				kcmp__here(&rep.kernel);
			} else {
				rep.kernel.preempt_rt = s->preempt_rt;
				kcmp__sig(&rep.kernel, s->sig_known,
						   s->sigsleep, s->sig_why);
			}
			rep.kernel.valid = true;
		}
	}
	if (keep) {
		nth = filter_rows(th, nth, false, keep, keep_ctx);
		npr = filter_rows(pr, npr, true, keep, keep_ctx);
	}
	/* a command's rows are kept one by one for the comparison (and in
	 * JSON); the table folds the oldest exited ones, as stat's does */
	if (s->target == CTXMON_TARGET_CMD && o->fmt == OUT_TABLE &&
	    (ctxmon_rows_fold_exited(th, &nth, CTXMON_EXITED_KEEP) < 0 ||
	     ctxmon_rows_fold_exited(pr, &npr, CTXMON_EXITED_KEEP) < 0))
		goto out;
	rep.threads = th;
	rep.nthreads = nth;
	rep.procs = pr;
	rep.nprocs = npr;
	rep.cpus = cpus;
	rep.ncpus = ncpu;
	o->processes = want_procs || (!want_threads && (all || npr > 1));
	o->threads = want_threads || (!want_procs && !all);
	ret = output__report(f, o, &rep);
out:
	causes_report__free(&cr);
	free(th);
	free(pr);
	free(cpus);
	return ret;
}

/* ---- report -------------------------------------------------------- */

struct loss {
	int32_t cpu;
	uint64_t count, start_ts, end_ts;
};

struct rep_run {
	const char *path, *outpath, *comm;
	const char *html_path; /* --html FILE */
	struct output_opts out;
	bool want_threads, want_procs, limit_set;
	pid_t *pids, *tids;
	size_t npids, ntids;
	bool *cpu_set; /* --cpu */
	size_t ncpu_set;
	bool has_time;
	bool causes; /* --causes */
	bool strict; /* --strict */
	struct ctxmon_html *html; /* --html */
	double t0, t1; /* --time, seconds from the start */
	bool abs_time;	/* --time @START,@END: on the session clock */
	uint64_t abs0, abs1;
	uint64_t from_ts, to_ts; /* the window on the session clock */
	bool window_open;	/* the account was reset at from_ts */
	struct ctxmon_reader *r;
	struct ctxmon_account *a;
	uint64_t events, last_ts, first_ts;
	uint64_t order_violations;
	struct loss *losses;
	size_t nlosses, loss_cap;
	uint64_t *lost_cpu;
	size_t nlost_cpu;
	bool oom;
};

static const struct cli_opt report_in_opts[] = {
	{ "input", 'i', 'i', "FILE",
	  "the recording (default " DEFAULT_RECORDING ")", NULL, true },
	CLI_OPT_STRICT,
	{ NULL },
};

static const struct cli_opt report_filter_opts[] = {
	{ "pid", 'p', 'p', "PID[,PID..]", "rows of these processes" },
	{ "tid", 't', 't', "TID[,TID..]", "rows of these threads" },
	{ "comm", 0, 'c', "NAME", "rows whose comm is NAME" },
	{ "cpu", 0, 'C', "CPU[,CPU..]",
	  "only switches and wakeups on these CPUs (forks, execs and exits "
	  "on any: they say whose a thread is)" },
	{ "time", 0, 'T', "START,END",
	  "what happened from START to END seconds after the start, or, "
	  "written @START,@END, between two timestamps as script prints "
	  "them (either side may be left out; the two forms do not mix); "
	  "consecutive windows add up to the whole" },
	{ NULL },
};

static const struct cli_opt report_opts[] = {
	{ "per-thread", 'H', 'H', NULL, "one row per thread" },
	{ "per-process", 'P', 'P', NULL, "one row per process" },
	{ "sort", 's', 's', "KEY", "sort rows by KEY (default switches)",
	  output__sort_keys },
	{ "limit", 'n', 'n', "N", "at most N rows per table (0: all)" },
	{ "cpus", 0, 'U', NULL, "per-CPU busy/idle lines" },
	{ "causes", 0, 'K', NULL,
	  "why threads were switched out (record with -e all for syscalls and "
	  "irqs; docs/causes.md)" },
	{ "json", 0, 'J', NULL, "JSON" },
	{ "csv", 0, 'V', NULL, "CSV" },
	{ "html", 0, 'W', "FILE",
	  "also one self-contained HTML page with plots, written to FILE, "
	  "as stat --html FILE; causes included, in the table too (- alone: "
	  "the page on stdout instead of the table)", NULL, true },
	{ "output", 'o', 'o', "FILE", "write to FILE instead of stdout", NULL,
	  true },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc report_doc = {
	.name = "report",
	.args = "[options] [-i FILE]",
	.description =
		"Show what `ctxmon stat` shows, from a recording made by `ctxmon\n"
		"record` or `ctxmon import`: per-thread and per-process switches,\n"
		"voluntary and involuntary, run / wait / sleep time, wakeup latency,\n"
		"migrations, per-CPU busy time, and where events were lost.  A\n"
		"recording cut short (killed recorder, full disk) or damaged is read\n"
		"up to where it stops, and one line on stderr says so; the JSON's\n"
		"\"integrity\" object carries the same (docs/integrity.md).",
	.groups = (const struct cli_optgroup[]){
		{ "input", report_in_opts },
		{ "filters", report_filter_opts },
		{ "output", report_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "report", "the numbers of " DEFAULT_RECORDING },
		{ "report -i all.data --per-process --sort involuntary",
		  "processes, most preempted first" },
		{ "report -i run.data --html run.html",
		  "the table, and a page with plots in run.html" },
		{ "report --comm nginx --time 2,5 --json",
		  "nginx's threads from 2 s to 5 s, as JSON" },
		{ "report --time @1194.093,@1194.1",
		  "between two timestamps of ctxmon script's lines" },
		{ NULL },
	},
	.notes = CLI_NOTE_RECORDING,
};

static void help(void)
{
	cli__help(stdout, &report_doc);
}

/*
 * "@SEC[.FRACTION]": a timestamp of the session clock as `script` prints
 * it, read digit by digit into ns so that @1194.092750 is the event
 * script printed as 1194.092750, with no rounding of a double in between.
 */
static int parse_abs(const char *s, size_t len, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000;
	size_t i = 1, digits = 0;

	if (len < 2 || s[0] != '@')
		return -1;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (sec > (UINT64_MAX / 1000000000 - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
			if (scale == 1)
				return -1; /* finer than a nanosecond */
			scale /= 10;
			frac += (uint64_t)(s[i] - '0') * scale;
		}
	}
	if (i != len || !digits)
		return -1;
	*ns = sec * 1000000000 + frac;
	return 0;
}

/*
 * --time START,END: seconds from the start ("1.5,3"), or timestamps as
 * `script` prints them, each marked by '@' ("@1194.093,@1194.1").  Either
 * side may be left out; one side of each kind is refused, since "@1194,5"
 * is more likely a typo than a window of its own.
 */
static int parse_time(struct rep_run *r, const char *arg)
{
	const char *comma = strchr(arg, ',');
	size_t l0;

	if (!comma)
		goto bad;
	l0 = (size_t)(comma - arg);
	r->abs_time = arg[0] == '@' || comma[1] == '@';
	if (r->abs_time) {
		if ((l0 && arg[0] != '@') || (comma[1] && comma[1] != '@')) {
			cli__err(CMD,
				 "--time '%s' mixes a timestamp (@) with seconds "
				 "from the start: give both as @SEC (e.g. "
				 "@1194.093,@1194.1) or neither (e.g. 1.5,3)",
				 arg);
			return -1;
		}
		r->abs0 = 0;
		r->abs1 = UINT64_MAX;
		if ((l0 && parse_abs(arg, l0, &r->abs0) < 0) ||
		    (comma[1] &&
		     parse_abs(comma + 1, strlen(comma + 1), &r->abs1) < 0) ||
		    r->abs1 < r->abs0)
			goto bad;
		r->has_time = true;
		return 0;
	}
	r->t0 = 0;
	r->t1 = -1;
	if (l0) {
		char *start = strndup(arg, l0);
		int ret = start ? cli__parse_seconds(start, true, &r->t0) : -1;

		free(start);
		if (ret < 0)
			goto bad;
	}
	if (comma[1] && (cli__parse_seconds(comma + 1, true, &r->t1) < 0 ||
			 r->t1 < r->t0))
		goto bad;
	r->has_time = true;
	return 0;
bad:
	cli__err(CMD,
		 "bad time window '%s': give START,END in seconds from the "
		 "start (up to 1e9), e.g. --time 1.5,3 or --time ,2, or as "
		 "timestamps script prints, e.g. --time @1194.093,@1194.1",
		 arg);
	return -1;
}

static int parse(struct rep_run *r, int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&report_doc, argc, argv)) != -1) {
		switch (cli__table_opt(CMD, opt, optarg, &r->out,
				       &r->limit_set)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		switch (opt) {
		case 'i':
			r->path = optarg;
			break;
		case CLI_KEY_STRICT:
			r->strict = true;
			break;
		case 'p':
			if (cli__parse_numbers(CMD, "pid", optarg, 0x7fffffff,
					       false, &r->pids, &r->npids) < 0)
				return -1;
			break;
		case 't':
			if (cli__parse_numbers(CMD, "tid", optarg, 0x7fffffff,
					       false, &r->tids, &r->ntids) < 0)
				return -1;
			break;
		case 'c':
			r->comm = optarg;
			break;
		case 'C':
			if (cli__parse_cpu_set(CMD, optarg, &r->cpu_set,
					       &r->ncpu_set) < 0)
				return -1;
			break;
		case 'T':
			if (parse_time(r, optarg) < 0)
				return -1;
			break;
		case 'H':
			r->want_threads = true;
			break;
		case 'P':
			r->want_procs = true;
			break;
		case 'U':
			r->out.show_cpus = true;
			break;
		case 'K':
			r->causes = true;
			break;
		case 'W':
			/* before, --html was a flag and -o its file: that
			 * spelling would now name the page "-o" */
			if (optarg[0] == '-' && optarg[1]) {
				cli__err(CMD,
					 "--html takes its file now: --html "
					 "FILE, as stat (not --html -o FILE)");
				return -1;
			}
			r->html_path = optarg;
			if (r->html)
				break;
			r->html = ctxmon_html_new();
			r->causes = true;
			if (!r->html)
				return -1;
			break;
		case 'o':
			r->outpath = optarg;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon report --help'.\n");
			return -1;
		}
	}
	if (cli__recording_arg(CMD, argc, argv, &r->path) < 0)
		return -1;
	return 0;
}

static bool has_filters(const struct rep_run *r)
{
	return r->npids || r->ntids || r->comm || r->cpu_set || r->has_time;
}

static bool in_list(const pid_t *v, size_t n, pid_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool keep_row(const struct ctxmon_stats *row, bool proc, void *ctx)
{
	const struct rep_run *r = ctx;

	if (r->npids &&
	    !in_list(r->pids, r->npids, proc ? row->tid : row->tgid))
		return false;
	/* A thread filter shows threads: no process row is "that thread". */
	if (r->ntids && (proc || !in_list(r->tids, r->ntids, row->tid)))
		return false;
	if (r->comm && (!row->comm || strcmp(row->comm, r->comm)))
		return false;
	/* ended before the --time window: nothing in it (kept, zeroed, by
	 * an account with causes) */
	if (r->has_time && !row->first_ts && !row->switch_in &&
	    !row->switch_out)
		return false;
	return true;
}

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct rep_run *r = ctx;

	return ctxmon_account_add_task(r->a, tid, tgid, comm) < 0 ? -ENOMEM : 0;
}

static void add_loss(struct rep_run *r, const struct ctxmon_event *ev)
{
	if (ev->cpu >= 0 && ev->cpu < 65536) {
		size_t c = (size_t)ev->cpu;

		if (c >= r->nlost_cpu) {
			uint64_t *l =
				realloc(r->lost_cpu, (c + 1) * sizeof(*l));

			if (!l) {
				r->oom = true;
				return;
			}
			memset(l + r->nlost_cpu, 0,
			       (c + 1 - r->nlost_cpu) * sizeof(*l));
			r->lost_cpu = l;
			r->nlost_cpu = c + 1;
		}
		r->lost_cpu[c] += ev->lost.count;
	}
	if (r->nlosses == r->loss_cap) {
		size_t cap = r->loss_cap ? r->loss_cap * 2 : 16;
		struct loss *l = realloc(r->losses, cap * sizeof(*l));

		if (!l) {
			r->oom = true;
			return;
		}
		r->losses = l;
		r->loss_cap = cap;
	}
	r->losses[r->nlosses++] = (struct loss){
		.cpu = ev->cpu,
		.count = ev->lost.count,
		.start_ts = ev->lost.start_ts,
		.end_ts = ev->lost.end_ts,
	};
}

/* What the report keeps of every event it takes, besides its account:
 * the span, the order, the losses. */
static inline void note_event(struct rep_run *r, const struct ctxmon_event *ev)
{
	if (r->events && ev->ts < r->last_ts)
		r->order_violations++;
	if (!r->events)
		r->first_ts = ev->ts;
	r->last_ts = ev->ts;
	r->events++;
	if (ev->type == CTXMON_EV_LOST)
		add_loss(r, ev);
}

/* A process's fork, exec and exit, and an orphan mark, hold wherever they
 * happened: which process a thread is in, and whose it is, comes from them
 * on any CPU. */
static bool structural(const struct ctxmon_event *ev)
{
	return ev->type == CTXMON_EV_FORK || ev->type == CTXMON_EV_EXEC ||
	       ev->type == CTXMON_EV_EXIT || ev->type == CTXMON_EV_ORPHAN;
}

/*
 * --time START,END: the window is [START, END).  The account takes every
 * event before it too, so each task's state at START is known (a thread
 * running then runs on in the window, a process forked before is still
 * the command's), and its counters are reset at START: the window's rows
 * are what happened in it, and consecutive windows add up to the whole.
 */
static void open_window(struct rep_run *r)
{
	if (r->window_open)
		return;
	r->window_open = true;
	ctxmon_account_forget_exited(r->a);
	ctxmon_account_reset_interval(r->a, r->from_ts);
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct rep_run *r = ctx;
	bool before = false;

	if (r->has_time) {
		if (ev->ts >= r->to_ts)
			return 0;
		if (ev->ts < r->from_ts)
			before = true;
		else
			open_window(r);
	}
	if (r->cpu_set && !structural(ev) &&
	    (ev->cpu < 0 || (size_t)ev->cpu >= r->ncpu_set ||
	     !r->cpu_set[ev->cpu]))
		return 0;
	if (before) {
		ctxmon_account_feed(r->a, ev);
		return r->oom ? -ENOMEM : 0;
	}
	note_event(r, ev);
	ctxmon_account_feed(r->a, ev);
	if (r->html) /* a library call per event otherwise (3% of report) */
		ctxmon_html_feed(r->html, ev);
	return r->oom ? -ENOMEM : 0;
}

/* A run of events: on_event() on each, or, with nothing to filter or
 * draw, note_event() on each and the run accounted whole. */
static int on_batch(const struct ctxmon_event *evs, size_t n, void *ctx)
{
	struct rep_run *r = ctx;
	int ret = 0;

	if (r->has_time || r->cpu_set || r->html) {
		for (size_t i = 0; i < n && !ret; i++)
			ret = on_event(&evs[i], r);
		return ret;
	}
	for (size_t i = 0; i < n; i++)
		note_event(r, &evs[i]);
	ctxmon_account_feed_batch(r->a, evs, n);
	return r->oom ? -ENOMEM : 0;
}

static uint64_t meta_u64(const struct ctxmon_reader *rd, const char *key,
			 uint64_t dflt)
{
	uint64_t v;

	return ctxmon_reader_meta_u64(rd, key, &v) == 0 ? v : dflt;
}

/* Where the events were lost, relative to the start. */
static void print_losses(FILE *f, const struct rep_run *r, uint64_t start)
{
	for (size_t i = 0; i < r->nlosses && i < MAX_SHOWN_LOSSES; i++) {
		const struct loss *l = &r->losses[i];
		double a = l->start_ts >= start ?
				   (double)(l->start_ts - start) / 1e9 :
				   0;
		double b = l->end_ts >= start ?
				   (double)(l->end_ts - start) / 1e9 :
				   0;

		fprintf(f, "lost on CPU %d between +%.6fs and +%.6fs: ", l->cpu,
			a, b);
		if (l->count)
			fprintf(f, "%" PRIu64 " events\n", l->count);
		else
			fprintf(f, "an unknown number of events\n");
	}
	if (r->nlosses > MAX_SHOWN_LOSSES)
		fprintf(f, "... and %zu more losses\n",
			r->nlosses - MAX_SHOWN_LOSSES);
	if (r->nlosses)
		fprintf(f,
			"numbers of tasks that ran on those CPUs in those windows "
			"are incomplete\n");
}

int cmd_report(int argc, char **argv)
{
	struct rep_run r = { .out = { .sort = SORT_SWITCHES } };
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_reader_info info;
	struct ctxmon_verdict verdict;
	struct run_summary s = { 0 };
	uint64_t *tpids = NULL, start, stop, ws, v;
	const char *backend;
	struct cli_out of = { .f = stdout };
	FILE *f = stdout;
	int status = EXIT_FAIL, done = EXIT_OK, ret;
	size_t n;

	ret = parse(&r, argc, argv);
	if (ret)
		goto out_args;
	r.r = ctxmon_reader_open(r.path);
	if (!r.r) {
		cli__err(CMD, "cannot read %s: %s", r.path,
			 ctxmon_record_last_error());
		goto out;
	}
	ao.target = (enum ctxmon_target_kind)meta_u64(r.r, META_TARGET_KIND,
						      CTXMON_TARGET_ALL);
	n = ctxmon_reader_meta_u64s(r.r, CTXMON_META_TARGET_PIDS, NULL, 0);
	if (n) {
		tpids = calloc(n, sizeof(*tpids));
		ao.pids = calloc(n, sizeof(*ao.pids));
		if (!tpids || !ao.pids)
			goto oom;
		ctxmon_reader_meta_u64s(r.r, CTXMON_META_TARGET_PIDS, tpids, n);
		for (size_t i = 0; i < n; i++)
			((pid_t *)ao.pids)[i] = (pid_t)tpids[i];
		ao.npids = n;
	}
	ao.root_pid = (pid_t)meta_u64(r.r, CTXMON_META_ROOT_PID, (uint64_t)-1);
	if (r.cpu_set) {
		/* a --cpu list past the recording's CPUs is a typo, most
		 * likely: say so rather than print an empty table only */
		uint64_t nc = meta_u64(r.r, CTXMON_META_NCPUS, 0);

		if (nc && r.ncpu_set > nc)
			cli__err(CMD, "warning: %s was recorded on %" PRIu64
				 " CPUs (0-%" PRIu64 "); --cpu %zu and above "
				 "select nothing",
				 r.path, nc, nc - 1, (size_t)nc);
	}
	/* as stat does, unless a filter picks rows by tid or name: a
	 * command's rows all reach the comparison with its rusage (folded
	 * ones have no process: a leader folded away left its threads
	 * without a parent, taken for an orphan's, 138 switches short on
	 * stress-ng --pthread 2) */
	if (!has_filters(&r) && ao.target != CTXMON_TARGET_CMD)
		ao.exited_keep = CTXMON_EXITED_KEEP;
	{
		const char *be = ctxmon_reader_meta_str(r.r,
							CTXMON_META_BACKEND);

		unsigned caps = ctxmon_backend_caps(be);

		/* recorded without wakeups: sleepers just switch in */
		ao.no_wakeups = caps && !(caps & CTXMON_CAP_WAKEUPS);
	}
	/* the marks as the rusage model below takes them */
	ao.flags = kcmp__account_flags(
		ctxmon_backend_caps(
			ctxmon_reader_meta_str(r.r, CTXMON_META_BACKEND)),
		(unsigned)meta_u64(r.r, CTXMON_META_ORPHAN_WALK, 0));
	r.a = ctxmon_account_new(&ao);
	if (!r.a)
		goto oom;
	if (r.causes) {
		struct ctxmon_causes_opts co = {
			.sz = sizeof(co),
			.arch = ctxmon_reader_meta_str(r.r, CTXMON_META_ARCH),
		};

		if (ctxmon_account_enable_causes(r.a, &co) < 0)
			goto oom;
	}
	start = meta_u64(r.r, CTXMON_META_TIME_START, 0);
	if (r.abs_time) {
		r.from_ts = r.abs0;
		r.to_ts = r.abs1;
	} else {
		r.from_ts = start + (uint64_t)(r.t0 * 1e9);
		r.to_ts = r.t1 < 0 ? UINT64_MAX :
				     start + (uint64_t)(r.t1 * 1e9);
	}
	ctxmon_reader_set_task_fn(r.r, on_task, &r);

	ret = ctxmon_reader_read_batch(r.r, on_batch, &r);
	if (ret == -ENOMEM || r.oom)
		goto oom;
	if (r.has_time)
		open_window(&r); /* none of the events was in it */
	ctxmon_reader_get_info(r.r, &info);
	ctxmon_reader_get_verdict(r.r, &verdict);
	s.verdict = &verdict;
	done = cli__verdict(CMD, r.path, &verdict, r.strict);
	if (ret < 0 && !info.damaged && !info.truncated) {
		cli__err(CMD, "reading %s: %s", r.path, strerror(-ret));
		done = EXIT_FAIL;
	}

	/* The capture window: the recorder's, cut to the events kept. */
	if (!start)
		start = info.first_ts;
	stop = meta_u64(r.r, CTXMON_META_TIME_STOP, 0);
	if (!stop || !info.complete)
		stop = info.last_ts > start ? info.last_ts : start;
	if (r.has_time && !r.abs_time && r.from_ts > stop && info.events)
		/* as --cpu past the CPUs: a typo, most likely */
		cli__err(CMD, "warning: %s spans %.3f s; --time from %g s "
			      "selects nothing",
			 r.path, (double)(stop - start) / 1e9, r.t0);
	if (r.has_time && r.abs_time && info.events &&
	    (r.from_ts > stop || r.to_ts <= start))
		cli__err(CMD, "warning: %s spans @%.6f to @%.6f; --time "
			      "selects nothing",
			 r.path, (double)start / 1e9, (double)stop / 1e9);
	if (r.has_time) {
		start = r.from_ts > start ? r.from_ts : start;
		stop = r.to_ts < stop ? r.to_ts : stop;
		if (stop < start)
			stop = start;
	}
	backend = ctxmon_reader_meta_str(r.r, CTXMON_META_BACKEND);
	s.backend = backend ? backend : "?";
	s.target = ao.target;
	s.source = r.path;
	s.arch = ctxmon_reader_meta_str(r.r, CTXMON_META_ARCH);
	s.preempt_rt = meta_u64(r.r, CTXMON_META_PREEMPT_RT, 0) == 1;
	s.marks = (unsigned)meta_u64(r.r, CTXMON_META_ORPHAN_WALK, 0);
	if (ctxmon_reader_meta_u64(r.r, CTXMON_META_SIGSLEEP, &v) == 0) {
		s.sig_known = true;
		s.sigsleep = (enum ctxmon_sigsleep)v;
		s.sig_why = ctxmon_reader_meta_str(r.r,
						   CTXMON_META_SIGSLEEP_WHY);
	}
	s.cap.events = r.events;
	s.cap.ncpus = (int)meta_u64(r.r, CTXMON_META_NCPUS, r.nlost_cpu);
	s.cap.start_ts = start;
	s.cap.stop_ts = stop;
	s.cap.delivered_to = stop;
	s.cap.order_violations = r.order_violations;
	s.cap.lost_records = r.nlosses;
	for (size_t i = 0; i < r.nlosses; i++)
		s.cap.lost += r.losses[i].count;
	if ((size_t)s.cap.ncpus < r.nlost_cpu)
		s.cap.ncpus = (int)r.nlost_cpu;
	if (r.nlost_cpu < (size_t)s.cap.ncpus) {
		uint64_t *l =
			realloc(r.lost_cpu, (size_t)s.cap.ncpus * sizeof(*l));

		if (!l)
			goto oom;
		memset(l + r.nlost_cpu, 0,
		       ((size_t)s.cap.ncpus - r.nlost_cpu) * sizeof(*l));
		r.lost_cpu = l;
		r.nlost_cpu = (size_t)s.cap.ncpus;
	}
	s.cap.lost_per_cpu = r.lost_cpu;
	if (!has_filters(&r) && info.complete && !info.truncated) {
		/* The recorder's own counters, as stat showed them. */
		s.cap.order_violations =
			meta_u64(r.r, META_CAP_ORDER, s.cap.order_violations);
	}
	if (!has_filters(&r) && info.complete &&
	    ctxmon_reader_meta_u64(r.r, CTXMON_META_EXIT_STATUS, &ws) == 0) {
		uint64_t ru[2];

		s.has_exit = true;
		s.wstatus = (int)ws;
		if (ctxmon_reader_meta_u64s(r.r, META_RUSAGE, ru, 2) == 2) {
			s.has_rusage = true;
			s.root = ao.root_pid > 0 ? ao.root_pid : 0;
			s.ru_nvcsw = ru[0];
			s.ru_nivcsw = ru[1];
			s.ru_cpu_ns = meta_u64(r.r, META_RUSAGE_CPU, 0);
		}
	}
	if (ao.target == CTXMON_TARGET_ALL) {
		r.out.show_cpus = true;
		if (!r.limit_set && r.out.fmt == OUT_TABLE)
			r.out.limit = 25;
	}
	if (r.html) {
		char line[1024];

		/* the page says what stderr says */
		ctxmon_verdict_format(&verdict, r.path, line, sizeof(line));
		bool out_only = !strcmp(r.html_path, "-");

		ret = recording__html(out_only ? NULL : r.html_path, r.html,
				      r.a, &s, r.r,
				      info.damaged || info.truncated ? line :
								       NULL);
		if (ret < 0) {
			cli__err(CMD, "writing %s: %s",
				 out_only ? "the page" : r.html_path,
				 strerror(-ret));
			goto out;
		}
		if (out_only) {
			status = done;
			goto out;
		}
	}
	if (cli__out_open(CMD, &of, r.outpath, stdout, 0) < 0)
		goto out;
	f = of.f;
	ret = recording__emit(f, &r.out, r.want_threads, r.want_procs, r.a, &s,
			      has_filters(&r) ? keep_row : NULL, &r);
	if (!ret && r.out.fmt == OUT_TABLE)
		print_losses(f, &r, start);
	if (ret < 0 || ferror(f)) {
		cli__err(CMD, "writing %s: %s",
			 r.outpath ? r.outpath : "the report",
			 strerror(ret < 0 ? -ret : EIO));
		goto out;
	}
	status = done;
	/* the report of an incomplete recording is whole: it says so; with
	 * --strict it is a failure, which writes nothing */
	if (cli__out_end(CMD, &of, status == EXIT_OK) < 0)
		status = EXIT_FAIL;
	goto out;
oom:
	cli__err(CMD, "out of memory");
out:
	cli__out_end(CMD, &of, false);
	free(tpids);
	free((void *)ao.pids);
	free(r.losses);
	free(r.lost_cpu);
	ctxmon_account_free(r.a);
	ctxmon_html_free(r.html);
	ctxmon_reader_close(r.r);
	free(r.pids);
	free(r.tids);
	free(r.cpu_set);
	return status;
out_args:
	ctxmon_html_free(r.html);
	free(r.pids);
	free(r.tids);
	free(r.cpu_set);
	return ret > 0 ? EXIT_OK : EXIT_USAGE;
}
