/*
 * cmd_stat.c - `ctxmon stat`: count and time the context switches of a
 * command, of processes or threads, or of the whole machine.
 *
 * The capture is accounted as it runs (nothing is stored), optionally
 * printed every interval, and for a launched command compared at the end
 * with the kernel's own counters from wait4().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/cgroup.h>
#include <ctxmon/export.h>

#include "cli/cli.h"
#include "cli/cmd_latency.h"
#include "cli/opts.h"
#include "cli/pidcheck.h"
#include "cli/recording.h"
#include "cli/cmd_top.h"
#include "analysis/rusage.h"
#include "output/output.h"

static const char *const CMD = "stat";

enum {
	OPT_CAUSES = CAP_OPT__END + 0x40, OPT_RATES, OPT_PER_CGROUP, OPT_HTML,
	OPT_CHECK,
};

/* --check: the traced counts do not match the kernel's */
#define EXIT_MISMATCH 3

struct stat_run {
	struct capture_opts cap;
	struct output_opts out;
	bool want_threads, want_procs, limit_set;
	bool per_cgroup;	/* --per-cgroup: process rows become cgroup rows */
	bool rates;		/* --rates: per second, top's columns */
	const char *outpath;
	struct cli_out of;	/* -o FILE */
	FILE *f;		/* where the numbers go */
	struct ctxmon_session *s;
	struct ctxmon_account *a;
	uint64_t interval_ns, next_tick, start_ts;
	int index;
	int werr;		/* first write error, -errno */
	bool causes;		/* --causes */
	struct ctxmon_rowset *rows;	/* the rows of the session */
	const char *html_path;	/* --html FILE */
	struct ctxmon_html *html;
	struct rusage_model *model; /* a command: what its rusage holds */
	bool check;		/* --check: a mismatch exits EXIT_MISMATCH */
	bool mismatch;
	struct pidcheck *pc;	/* --check with -p/-t: /proc around it */
	/* -I: capture counters at the previous interval's end, so each
	 * record shows its own interval's events and losses. */
	uint64_t prev_ts, prev_events, prev_lost, prev_lost_records;
	uint64_t *prev_lost_cpu, *lost_cpu;
	bool child_done;
	int wstatus;
	struct rusage ru;
};

static const struct cli_opt stat_opts[] = {
	{ "interval", 'I', 'I', "MS",
	  "print every MS milliseconds (counts per interval)" },
	{ "per-thread", 0, 'T', NULL,
	  "one row per thread (default for a command, -p, -t)" },
	{ "per-process", 'P', 'P', NULL, "one row per process (default with -a)" },
	{ "sort", 's', 's', "KEY", "sort rows by KEY (default switches)",
	  output__sort_keys },
	{ "limit", 'n', 'n', "N",
	  "at most N rows per table (0: all; default 25 with -a)" },
	{ "cpus", 0, 'C', NULL, "per-CPU busy/idle lines (default with -a)" },
	{ "json", 0, 'J', NULL, "JSON (one object per interval with -I)" },
	{ "csv", 0, 'V', NULL, "CSV" },
	{ "causes", 0, OPT_CAUSES, NULL,
	  "why threads were switched out: blocked in which syscall, preempted "
	  "by a woken task, slice end, yield, exit; irq time (traces syscalls "
	  "and irqs too, which costs more; docs/causes.md)" },
	{ "rates", 0, OPT_RATES, NULL,
	  "per second, with top's columns (with -I and -p: a per-thread "
	  "pidstat -w)" },
	{ "per-cgroup", 0, OPT_PER_CGROUP, NULL,
	  "one row per cgroup v2 (the threads' cgroups at the end; exited "
	  "threads as \"(exited)\")" },
	{ "html", 0, OPT_HTML, "FILE",
	  "also write an HTML page with plots to FILE", NULL, true },
	{ "check", 0, OPT_CHECK, NULL,
	  "exit 3 when the traced counts do not match the kernel's (for CI): "
	  "a command's with its rusage (the verdict line is always written to "
	  "stderr), -p/-t targets' with the /proc counters of each thread "
	  "alive throughout, read before and after the start and the stop" },
	{ "output", 'o', 'o', "FILE",
	  "write to FILE (default: stderr with a command, as perf stat does, "
	  "so the command's output stays clean; stdout otherwise)", NULL, true },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc stat_doc = {
	.name = "stat",
	.args = "[options] [-a | -p PID | -t TID | [--] CMD [ARGS]]",
	.description =
		"Count and time context switches per thread and process: voluntary\n"
		"(blocked) and involuntary (preempted), the exit switch-out, time on\n"
		"CPU, runnable wait, sleep by state, wakeup latency, migrations.\n"
		"With a command it follows the command and every descendant from fork\n"
		"to exit, compares its counts with the kernel's (getrusage) and exits\n"
		"with the command's exit status.",
	.groups = (const struct cli_optgroup[]){
		{ "target", cli_capture_opts },
		{ "output", stat_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "stat -- ./myprog arg", "every thread of myprog, vs the kernel's counts" },
		{ "stat -a -I 1000", "the machine, per process, every second" },
		{ "stat -p 1234 --duration 5 --sort involuntary",
		  "one process for 5 s, most preempted threads first" },
		{ "stat -p 1234 --duration 5 --check",
		  "the same, checked against each thread's /proc counters" },
		{ "stat --json -o out.json -- make -j2", "a build, as JSON in out.json" },
		{ "stat --check --json -o out.json -- ./test.sh",
		  "fail CI when the counts do not match the kernel's" },
		{ "stat -a --per-cgroup --duration 5", "the machine, per cgroup" },
		{ NULL },
	},
	.notes = "Needs root or CAP_PERFMON (and read access to tracefs).",
	.stop_at_operand = true,
};

/*
 * Turn the session's running counters in @c into this interval's, and
 * remember them for the next one.  0, or -ENOMEM (then @c is left whole).
 */
static int interval_deltas(struct stat_run *r, struct ctxmon_session_stats *c)
{
	size_t n = (size_t)c->ncpus;
	uint64_t ev = c->events, lost = c->lost, recs = c->lost_records;

	if (!r->lost_cpu) {
		r->lost_cpu = calloc(n, sizeof(*r->lost_cpu));
		r->prev_lost_cpu = calloc(n, sizeof(*r->prev_lost_cpu));
		if (!r->lost_cpu || !r->prev_lost_cpu)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t now = c->lost_per_cpu ? c->lost_per_cpu[i] : 0;

		r->lost_cpu[i] = now - r->prev_lost_cpu[i];
		r->prev_lost_cpu[i] = now;
	}
	c->events -= r->prev_events;
	c->lost -= r->prev_lost;
	c->lost_records -= r->prev_lost_records;
	c->lost_per_cpu = r->lost_cpu;
	r->prev_events = ev;
	r->prev_lost = lost;
	r->prev_lost_records = recs;
	return 0;
}

/* Print the numbers accumulated up to @ts. */
static int emit(struct stat_run *r, uint64_t ts, bool final)
{
	struct report rep = { .interval = -1 };
	struct causes_report cr = { 0 };
	struct ctxmon_snapshot snap = { 0 };
	int ret;

	ret = ctxmon_rowset_snapshot(r->rows, ts, &snap);
	if (ret < 0)
		goto out;
	ts = snap.ts;	/* rows counted in the kernel end at their read */
	ret = -ENOMEM;
	if (r->per_cgroup) {
		struct ctxmon_stats *cg;
		size_t ncg;

		cg = ctxmon_cgroup_rollup(snap.threads, snap.nthreads, &ncg);
		if (!cg)
			goto out;
		free(snap.procs);
		snap.procs = cg;
		snap.nprocs = ncg;
	}
	ctxmon_session_get_stats(r->s, &rep.cap);
	rep.backend = ctxmon_session_backend(r->s);
	rep.counted = ctxmon_session_caps(r->s) & CTXMON_CAP_COUNTS;
	rep.text_reader = ctxmon_session_caps(r->s) & CTXMON_CAP_TEXT;
	rep.duration_ns = ts > r->start_ts ? ts - r->start_ts : 0;
	if (r->interval_ns && interval_deltas(r, &rep.cap) == 0)
		rep.duration_ns = ts - r->prev_ts;
	rep.threads = snap.threads;
	rep.nthreads = snap.nthreads;
	rep.procs = snap.procs;
	rep.nprocs = snap.nprocs;
	rep.cpus = snap.cpus;
	rep.ncpus = snap.ncpus;
	rep.anomalies = ctxmon_account_anomalies(r->a);
	if (r->causes) {
		if (causes_report__collect(r->a, false, NULL, &cr) < 0)
			goto out;
		rep.causes = &cr;
	}
	if (r->interval_ns) {
		rep.interval = r->index;
		rep.interval_ts_ns = ts - r->start_ts;
	}
	if (r->model && rusage__add(r->model, snap.threads, snap.nthreads) < 0)
		goto out;
	pidcheck__add(r->pc, snap.threads, snap.nthreads);
	if (final && r->pc)
		pidcheck__result(r->pc, ctxmon_session_caps(r->s), &rep.live);
	if (final && r->child_done) {
		rep.has_exit = true;
		rep.exit_status = capture__exit_status(r->wstatus);
		if (r->model) {
			struct rusage_sums in, orph;
			unsigned caps = ctxmon_session_caps(r->s);

			rusage__result(r->model, &in, &orph);
			rusage__mark(r->model, snap.threads, snap.nthreads);
			rusage__mark(r->model, snap.procs, snap.nprocs);
			kcmp__set(&rep.kernel, &in, &orph);
			kcmp__caps(&rep.kernel, caps);
			rep.kernel.ru_nvcsw = (uint64_t)r->ru.ru_nvcsw;
			rep.kernel.ru_nivcsw = (uint64_t)r->ru.ru_nivcsw;
			rep.kernel.ru_cpu_ns = capture__ru_cpu_ns(&r->ru);
			rep.kernel.valid = true;
			kcmp__here(&rep.kernel);
		}
	}
	r->out.processes = r->want_procs || r->per_cgroup ||
			   (!r->want_threads && (r->cap.all || snap.nprocs > 1));
	r->out.threads = r->want_threads || (!r->want_procs && !r->cap.all);
	if (rep.kernel.valid) {
		r->mismatch = !kcmp__match(&rep.kernel);
		/* the verdict reaches a script's log whatever the output */
		if (r->f != stderr || r->out.fmt != OUT_TABLE)
			output__kernel_line(stderr, &rep.kernel);
	}
	if (rep.live.valid) {
		r->mismatch = rep.live.threads && !kcmp__live_match(&rep.live);
		if ((r->f != stdout && r->f != stderr) ||
		    r->out.fmt != OUT_TABLE)
			output__live_line(stderr, &rep.live);
	}
	/* a command's rows are kept one by one for the comparison (and in
	 * JSON); the table folds the oldest exited ones as the account would */
	if (r->model && r->out.fmt == OUT_TABLE &&
	    ctxmon_rows_fold_exited(snap.threads, &snap.nthreads, CTXMON_EXITED_KEEP) == 0 &&
	    ctxmon_rows_fold_exited(snap.procs, &snap.nprocs, CTXMON_EXITED_KEEP) == 0) {
		rep.nthreads = snap.nthreads;
		rep.nprocs = snap.nprocs;
	}
	if (r->rates && r->out.fmt == OUT_TABLE)
		ret = top_view__print_rates(r->f, &r->out, &rep);
	else
		ret = output__report(r->f, &r->out, &rep);
	/* the tier's note once, and again with the kernel's totals */
	if (ret == 0 && r->out.fmt == OUT_TABLE &&
	    (!r->index || rep.kernel.valid))
		tier__print(r->f, r->s, &rep.kernel);
	if (ret < 0 && !r->werr)
		r->werr = ret;
	if (r->interval_ns) {
		ctxmon_rowset_next(r->rows, ts);
		r->index++;
		r->prev_ts = ts;
	}
out:
	causes_report__free(&cr);
	ctxmon_snapshot_clear(&snap);
	return ret;
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct stat_run *r = ctx;

	while (r->interval_ns && ev->ts >= r->next_tick && !r->werr) {
		emit(r, r->next_tick, false);
		r->next_tick += r->interval_ns;
	}
	ctxmon_account_feed(r->a, ev);
	if (r->html)
		ctxmon_html_feed(r->html, ev);
	return r->werr;
}

static int parse(struct stat_run *r, int argc, char **argv)
{
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = capture__getopt(CMD, &stat_doc, &r->cap, argc, argv)) !=
	       -1) {
		switch (cli__table_opt(CMD, opt, optarg, &r->out,
				       &r->limit_set)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		switch (opt) {
		case CAPTURE_OPT_ERROR:
			return -1;
		case 'I':
			if (cli__parse_uint(optarg, 86400000, &v) < 0 || v < 10) {
				cli__err(CMD, "bad interval '%s': give milliseconds, "
					      "10 or more", optarg);
				return -1;
			}
			r->interval_ns = v * 1000000ull;
			break;
		case 'T':
			r->want_threads = true;
			break;
		case 'P':
			r->want_procs = true;
			break;
		case 'C':
			r->out.show_cpus = true;
			break;
		case OPT_CAUSES:
			r->causes = true;
			r->cap.events |= CTXMON_EVENTS_SCHED | CTXMON_EVENTS_IRQ |
					 CTXMON_EVENTS_SYSCALL;
			break;
		case 'o':
			r->outpath = optarg;
			break;
		case OPT_RATES:
			r->rates = true;
			break;
		case OPT_PER_CGROUP:
			r->per_cgroup = true;
			break;
		case OPT_HTML:
			/* the page splits switches by cause: trace what
			 * tells them apart, as --causes does */
			r->html_path = optarg;
			r->cap.events |= CTXMON_EVENTS_SCHED | CTXMON_EVENTS_IRQ |
					 CTXMON_EVENTS_SYSCALL;
			break;
		case OPT_CHECK:
			r->check = true;
			break;
		case 'h':
			cli__help(stdout, &stat_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon stat --help'.\n");
			return -1;
		}
	}
	if (capture__finish(CMD, &r->cap, argc, argv) < 0)
		return -1;
	if (r->html_path && r->interval_ns) {
		cli__err(CMD, "--html shows the whole run: not with -I");
		return -1;
	}
	if (r->check && r->cap.target == CTXMON_TARGET_ALL) {
		cli__err(CMD, "--check compares the counts of a command, or of "
			      "-p/-t targets, with the kernel's: give one "
			      "(ctxmon stat --check -- CMD, or -p PID)");
		return -1;
	}
	if (r->check && r->cap.target != CTXMON_TARGET_CMD && r->cap.cgroup) {
		cli__err(CMD, "--check with -p/-t compares every thread of the "
			      "targets: leave --cgroup out");
		return -1;
	}
	if (r->cap.all && !r->limit_set && r->out.fmt == OUT_TABLE)
		r->out.limit = 25;
	if (r->cap.all)
		r->out.show_cpus = true;
	return 0;
}

/* After every poll: stop on a write error; print the intervals every
 * event up to which has been delivered. */
static int stat_tick(void *ctx)
{
	struct stat_run *r = ctx;
	struct ctxmon_session_stats st;

	if (r->werr)
		return r->werr;
	if (ctxmon_session_caps(r->s) & CTXMON_CAP_COUNTS) {
		/* Counted in the kernel: the tables hold everything up to
		 * now, which no read can take back to the tick, so the
		 * interval ends now (a few ms after the tick, the loop
		 * wakes for it). */
		uint64_t now = ctxmon_clock_ns();

		if (r->interval_ns && now >= r->next_tick) {
			emit(r, now, false);
			while (r->next_tick <= now)
				r->next_tick += r->interval_ns;
		}
		return 0;
	}
	ctxmon_session_get_stats(r->s, &st);
	while (r->interval_ns && st.delivered_to >= r->next_tick && !r->werr) {
		emit(r, r->next_tick, false);
		r->next_tick += r->interval_ns;
	}
	return 0;
}

/* Runs the capture until the command ends, the duration passes, every
 * -p/-t target has exited, or a signal asks to stop; returns 0 or a
 * negative errno. */
static int capture_loop(struct stat_run *r)
{
	struct capture_loop l = {
		.s = r->s,
		.cap = &r->cap,
		.start_ts = r->start_ts,
		.fn = on_event,
		.tick = stat_tick,
		.ctx = r,
		.due = r->interval_ns ? &r->next_tick : NULL,
	};
	int ret = capture__loop(CMD, &l);

	r->child_done = l.child_done;
	r->wstatus = l.wstatus;
	r->ru = l.ru;
	return ret;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_run r = { .out = { .sort = SORT_SWITCHES } };
	struct ctxmon_session_stats st;
	int status = EXIT_FAIL, ret;
	bool done = false;
	uint64_t end;

	ret = parse(&r, argc, argv);
	if (ret) {
		capture__free(&r.cap);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (cli__out_open(CMD, &r.of, r.outpath,
			  r.cap.argv ? stderr : stdout, 0) < 0)
		goto out;
	r.f = r.of.f;
	cli__signals();
	if (r.check && r.cap.target != CTXMON_TARGET_CMD &&
	    !(r.pc = pidcheck__new(&r.cap))) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	r.cap.need_events = r.causes ? "--causes" : r.html_path ? "--html" :
							   NULL;
	/* Counting in the kernel sends nothing per event: the cheapest way
	 * to get every number stat shows but the causes. */
	r.s = capture__start_prefer(CMD, &r.cap,
				    /* the HTML page's time series needs the
				     * event stream */
				    r.causes || r.html_path ? NULL :
				    ctxmon_backend_with(CTXMON_CAP_COUNTS |
							CTXMON_CAP_EXACT),
				    &status);
	if (!r.s)
		goto out;
	if (pidcheck__read(r.pc, PIDCHECK_STARTED) < 0) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	tier__announce(CMD, r.s, r.cap.backend);
	{
		struct ctxmon_account_opts ao;
		struct ctxmon_rowset_opts ro = {
			.sz = sizeof(ro),
			.session = r.s,
			.interval = r.interval_ns > 0,
		};

		capture__account_opts(&r.cap, r.s, &ao);
		r.a = ctxmon_account_new(&ao);
		ro.account = r.a;
		if (r.a)
			r.rows = ctxmon_rowset_new(&ro);
	}
	if (r.html_path && !(r.html = ctxmon_html_new())) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	if (r.cap.target == CTXMON_TARGET_CMD) {
		unsigned caps = ctxmon_session_caps(r.s);

		r.model = rusage__new(ctxmon_session_child(r.s),
				      kcmp__live_marks(caps));
		if (!r.model) {
			cli__err(CMD, "out of memory");
			goto out;
		}
	}
	if (!r.a || !r.rows || ((r.causes || r.html) &&
				ctxmon_account_enable_causes(r.a, NULL) < 0)) {
		cli__err(CMD, "out of memory");
		goto out;
	}
	if (capture__seed(CMD, &r.cap, r.a) < 0)
		goto out;
	ctxmon_session_get_stats(r.s, &st);
	r.start_ts = st.start_ts;
	r.prev_ts = r.start_ts;
	r.next_tick = r.start_ts + r.interval_ns;

	ret = capture_loop(&r);
	if (ctxmon_session_child(r.s) > 0 && !r.child_done) {
		/* Stopped early: do not leave the command running. */
		kill(ctxmon_session_child(r.s), SIGTERM);
		if (ctxmon_session_reap_child(r.s, true, &r.wstatus, &r.ru) == 1)
			r.child_done = true;
	}
	if (pidcheck__read(r.pc, PIDCHECK_STOPPING) < 0 && !ret) {
		cli__err(CMD, "out of memory");
		ret = -ENOMEM;
	}
	if (ctxmon_session_stop(r.s, on_event, &r) < 0 && !ret) {
		cli__err(CMD, "%s", ctxmon_session_error(r.s));
		ret = -EIO;
	}
	if (pidcheck__read(r.pc, PIDCHECK_STOPPED) < 0 && !ret) {
		cli__err(CMD, "out of memory");
		ret = -ENOMEM;
	}
	ctxmon_session_get_stats(r.s, &st);
	end = st.stop_ts;
	if (!r.werr) {
		/* A last partial interval under a tenth of -I is noise from
		 * stopping, not a measurement; --check compares it too. */
		uint64_t last = r.next_tick - r.interval_ns;

		if (!r.interval_ns || r.child_done || r.pc ||
		    (end > last && (end - last) * 10 >= r.interval_ns))
			emit(&r, end, true);
	}
	if (r.werr) {
		cli__err(CMD, "writing %s: %s", r.outpath ? r.outpath : "output",
			 strerror(-r.werr));
		goto out;
	}
	if (ret < 0)
		goto out;
	if (r.html) {
		struct run_summary sum = {
			.backend = ctxmon_session_backend(r.s),
			.target = r.cap.target,
			.cap = st,
			.has_exit = r.child_done,
			.wstatus = r.wstatus,
			.has_rusage = r.child_done,
			.root = ctxmon_session_child(r.s),
			.ru_nvcsw = (uint64_t)r.ru.ru_nvcsw,
			.ru_nivcsw = (uint64_t)r.ru.ru_nivcsw,
			.ru_cpu_ns = capture__ru_cpu_ns(&r.ru),
			.marks = kcmp__live_marks(ctxmon_session_caps(r.s)),
		};

		ret = recording__html(r.html_path, r.html, r.a, &sum, NULL,
				      NULL);
		if (ret < 0) {
			cli__err(CMD, "writing %s: %s", r.html_path,
				 strerror(-ret));
			goto out;
		}
	}
	status = r.child_done ? capture__exit_status(r.wstatus) : EXIT_OK;
	if (r.check && r.mismatch)
		status = EXIT_MISMATCH;
	done = true;
out:
	/* the numbers are whole when the capture ended as it should,
	 * whatever the command's own exit status */
	if (cli__out_end(CMD, &r.of, done) < 0)
		status = EXIT_FAIL;
	free(r.lost_cpu);
	free(r.prev_lost_cpu);
	ctxmon_rowset_free(r.rows);
	ctxmon_account_free(r.a);
	ctxmon_html_free(r.html);
	rusage__free(r.model);
	pidcheck__free(r.pc);
	ctxmon_session_close(r.s);
	capture__free(&r.cap);
	return status;
}
