/*
 * cmd_hist.c - `ctxmon hist`: the kernel's hist-trigger language over ctxmon's
 * event stream (include/ctxmon/hist.h), live or on a recording, printed as
 * the kernel's `hist` file or JSON; or, with --backend kernel, installed
 * as real triggers in a private tracefs instance (cmd_hist_kernel.c).
 *
 * Arguments keep their order: -e EVENT names the event the trigger
 * strings after it attach to (as echo TRIGGER >> events/EVENT/trigger),
 * --synthetic DEF defines a synthetic event; the first argument that is neither an
 * option nor a trigger starts the command to run.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/causes.h>
#include <ctxmon/hist.h>
#include <ctxmon/record.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/cmd_hist.h"
#include "output/output.h"

static const char *const CMD = "hist";

enum {
	O_EVENT = 'e', O_INPUT = 'i', O_INTERVAL = 'I',
	O_OUTPUT = 'o', O_HELP = 'h',
	O_JSON = CAP_OPT__END + 0x50, O_CHECK, O_SYNTH,
};

/* The backends --backend takes here: the capture ones, and the kernel's
 * own hist triggers. */
static const char *hist_backends(void)
{
	static char buf[300];

	if (!buf[0])
		snprintf(buf, sizeof(buf), "%s, kernel", cli__backend_names());
	return buf;
}

/* The one table of options (cli/opts.h): --help, man page, completion. */
static const struct cli_opt hist_opts[] = {
	{ "events", 'e', O_EVENT, "SYS:EVENT",
	  "attach the triggers after it to this event (default "
	  "sched:sched_switch); may repeat" },
	CLI_ALIAS("event", O_EVENT, "SYS:EVENT", "events"),
	{ "synthetic", 0, O_SYNTH, "DEF",
	  "define a synthetic event as tracefs synthetic_events takes it "
	  "('wakeup_latency u64 lat; pid_t pid')" },
	{ "all-cpus", 'a', 'a', NULL, "every task on the machine" },
	{ "pid", 'p', 'p', "PID[,PID]", "these processes (and their children)" },
	{ "tid", 't', 't', "TID[,TID]", "these threads" },
	{ "input", 'i', O_INPUT, "FILE",
	  "evaluate over a recording (ctxmon record) instead", NULL, true },
	CLI_OPT_STRICT,
	{ "duration", 'd', 'd', "SEC", "stop after SEC seconds" },
	{ "interval", 'I', O_INTERVAL, "MS",
	  "print the tables every MS milliseconds, then clear them (live "
	  "only)" },
	{ "json", 0, O_JSON, NULL, "JSON instead of the hist file format" },
	{ "output", 'o', O_OUTPUT, "FILE",
	  "write to FILE (default: stderr with a command, stdout otherwise)",
	  NULL, true },
	{ "check", 0, O_CHECK, NULL,
	  "parse only: print each trigger's canonical form" },
	{ "backend", 0, CAP_OPT_BACKEND, "NAME",
	  "capture backend, or 'kernel': the kernel's own hist triggers in a "
	  "private tracefs instance, where the kernel has them",
	  hist_backends },
	{ "buffer-size", 'm', 'm', "SIZE", CLI_HELP_SIZE },
	{ "tracefs", 0, CAP_OPT_TRACEFS, "DIR", "tracefs mount point", NULL,
	  true },
	{ "mount-tracefs", 0, CAP_OPT_MOUNT, NULL,
	  "mount tracefs if it is not mounted" },
	CLI_OPT_NICE(CAP_OPT_NICE),
	CLI_OPT_REALTIME(CAP_OPT_REALTIME),
	{ "verbose", 'v', 'v', NULL, "say which backend was chosen and why" },
	{ "help", 'h', O_HELP, NULL, "this help" },
	{ NULL },
};

const struct cli_doc hist_doc = {
	.name = "hist",
	.args = "[--synthetic DEF]... [-e SYS:EVENT] 'hist:...' [...]\n"
		"       [-a | -p PID | -t TID | [--] CMD [ARGS] | -i FILE]",
	.description =
		"Histogram triggers in the kernel's syntax (Documentation/trace/\n"
		"histogram.rst): keys, vals, sort, size, modifiers (.hex .sym .execname\n"
		".syscall .log2 .buckets=N .usecs .percent .graph), filters ('if ...'),\n"
		"pause/cont/clear, name=, variables, common_timestamp, synthetic events,\n"
		"onmatch().trace(), onmax()/onchange() with save(), trace(), snapshot().\n"
		"Evaluated in user space over ctxmon's ordered event stream, so they run\n"
		"on kernels without hist triggers and on recordings; printed as the\n"
		"kernel's hist file.  Events: sched_switch, sched_waking, sched_wakeup,\n"
		"sched_wakeup_new, sched_migrate_task, sched_process_fork/exec/exit,\n"
		"irq_handler_entry/exit, softirq_entry/exit, raw_syscalls sys_enter/exit.",
	.groups = (const struct cli_optgroup[]){
		{ "options", hist_opts },
		{ NULL },
	},
	/* -s is --sort in every command (docs/cli.md) */
	.retired = (const struct cli_retired[]){
		{ 's', NULL, true,
		  "-s is --sort in every command; define a synthetic event "
		  "with --synthetic DEF" },
		{ 0 },
	},
	.examples = (const struct cli_example[]){
		{ "hist 'hist:keys=prev_pid:vals=hitcount if prev_comm == \"myprog\"' -- ./myprog",
		  "switch-outs of myprog's threads" },
		{ "hist -a --duration 5 'hist:keys=prev_pid,prev_state:vals=hitcount,prev_prio:sort=hitcount.descending:size=256'",
		  "every switch-out on the machine for 5 s, by thread and state" },
		{ "hist -e raw_syscalls:sys_enter 'hist:keys=id.syscall,common_pid.execname' -p 1234 --duration 2",
		  "the syscalls of process 1234" },
		{ "hist --synthetic 'wakeup_latency u64 lat; pid_t pid; int prio' "
		  "-e sched:sched_waking 'hist:keys=pid:ts0=common_timestamp.usecs' "
		  "-e sched:sched_switch 'hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_prio)' "
		  "-e synthetic:wakeup_latency 'hist:keys=pid,lat.log2:sort=lat' -a --duration 3",
		  "wakeup latency through a synthetic event" },
		{ "hist -i trace.ctxmon 'hist:keys=next_comm:vals=hitcount:sort=hitcount.descending'",
		  "over a recording" },
		{ NULL },
	},
	.notes = "Errors in a trigger are reported as the kernel's error_log does, with a\n"
		 "caret under the bad token (exit 2).  Capture needs root or CAP_PERFMON.\n\n"
		 CLI_NOTE_RECORDING,
	.operands_in_order = true,
};

struct hist_run {
	struct capture_opts cap;
	struct item *items;
	size_t nitems;
	const char *input, *outpath;
	unsigned interval_ms;
	bool json, check, kernel;
	struct cli_out of;	/* -o FILE */
	bool strict; /* --strict */
	const struct ctxmon_verdict *verdict; /* -i: the recording's */
	FILE *f;
	bool whole;		/* the last table was written in full */
	struct ctxmon_hist *h;
	uint64_t next_print;
	int err;
};

static bool is_trigger(const char *s)
{
	while (*s == ' ' || *s == '!')
		s++;
	return !strncmp(s, "hist", 4) || !strncmp(s, "enable_hist:", 12) ||
	       !strncmp(s, "disable_hist:", 13);
}

static int push(struct hist_run *r, const char *event, const char *text)
{
	struct item *n = realloc(r->items, (r->nitems + 1) * sizeof(*n));

	if (!n) {
		cli__err(CMD, "out of memory");
		return -1;
	}
	r->items = n;
	n[r->nitems].event = event;
	n[r->nitems++].text = text;
	return 0;
}

static int parse(struct hist_run *r, int argc, char **argv)
{
	const char *event = "sched:sched_switch";
	unsigned long v;
	int opt, c;
	bool any = false;

	optind = 1;
	while ((opt = cli__getopt(&hist_doc, argc, argv)) != -1) {
		if (opt == 1) {
			if (!is_trigger(optarg)) {
				optind--; /* the command starts here */
				break;
			}
			if (push(r, event, optarg) < 0)
				return -1;
			any = true;
			continue;
		}
		c = capture__opt(CMD, &r->cap, opt, optarg);
		if (c < 0)
			return -1;
		if (c > 0)
			continue;
		switch (opt) {
		case O_EVENT:
			event = optarg;
			break;
		case O_SYNTH:
			if (push(r, NULL, optarg) < 0)
				return -1;
			break;
		case O_INPUT:
			r->input = optarg;
			break;
		case CLI_KEY_STRICT:
			r->strict = true;
			break;
		case O_INTERVAL:
			if (cli__parse_uint(optarg, 86400000, &v) < 0 || !v) {
				cli__err(CMD, "bad interval '%s': give "
					      "milliseconds", optarg);
				return -1;
			}
			r->interval_ms = (unsigned)v;
			break;
		case O_JSON:
			r->json = true;
			break;
		case O_OUTPUT:
			r->outpath = optarg;
			break;
		case O_CHECK:
			r->check = true;
			break;
		case O_HELP:
			cli__help(stdout, &hist_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon hist --help'.\n");
			return -1;
		}
	}
	if (!any) {
		cli__err(CMD, "no trigger: give one such as 'hist:keys=prev_pid' "
			      "(see --help)");
		return -1;
	}
	if (r->check)
		return 0;
	if (r->input) {
		if (optind < argc) {
			cli__err(CMD, "-i reads a recording: no command to run");
			return -1;
		}
		if (r->interval_ms) {
			cli__err(CMD, "-I needs a live capture, not -i");
			return -1;
		}
		return capture__input(CMD, &r->cap, false);
	}
	if (r->strict) {
		cli__err(CMD, "--strict is for a recording: give -i FILE");
		return -1;
	}
	return capture__finish(CMD, &r->cap, argc, argv);
}

/* Build the set; kernel-style errors are printed; 0 or -1. */
static int build(struct hist_run *r)
{
	int ret = 0;

	r->h = ctxmon_hist_new();
	if (!r->h) {
		cli__err(CMD, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->nitems && !ret; i++)
		if (!r->items[i].event)
			ret = ctxmon_hist_define(r->h, r->items[i].text);
	for (size_t i = 0; i < r->nitems && !ret; i++)
		if (r->items[i].event)
			ret = ctxmon_hist_add(r->h, r->items[i].event,
					      r->items[i].text);
	if (ret < 0) {
		fprintf(stderr, "ctxmon hist: %s\n", ctxmon_hist_error(r->h));
		return -1;
	}
	return 0;
}

static int emit(struct hist_run *r)
{
	char *s = ctxmon_hist_format(r->h, r->json ? CTXMON_HIST_JSON :
						    CTXMON_HIST_TEXT);
	size_t n;

	if (!s) {
		cli__err(CMD, "out of memory");
		return -1;
	}
	n = strlen(s);
	if (r->json && r->verdict && n >= 2 && !strcmp(s + n - 2, "}\n")) {
		/* the recording's verdict in the document, as every command
		 * that reads one has it */
		fwrite(s, 1, n - 2, r->f);
		output__verdict_json(r->f, r->verdict);
		fputs("}\n", r->f);
	} else {
		fputs(s, r->f);
	}
	free(s);
	r->whole = fflush(r->f) != EOF;
	if (!r->whole) {
		cli__err(CMD, "writing %s: %s",
			 r->outpath ? r->outpath : "output", strerror(errno));
		return -1;
	}
	return 0;
}

static int add_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	(void)tgid;
	return ctxmon_hist_add_task(ctx, tid, comm) < 0 ? -ENOMEM : 0;
}

/* A trigger on sched_wakeup over a recording that kept only some. */
static void warn_thinned(const struct hist_run *r,
			 const struct ctxmon_reader *rd)
{
	const char *wk = ctxmon_reader_meta_str(rd, CTXMON_META_WAKEUPS);

	if (wk && !strcmp(wk, "on-cpu") &&
	    (ctxmon_hist_events(r->h) & CTXMON_EVENTS_WAKEUP_ALL))
		fprintf(stderr,
			"ctxmon hist: warning: %s has sched_wakeup only for "
			"tasks woken while on their CPU; for every one, record "
			"with -e sched,wakeups\n",
			r->input);
}

/* A run of the recording's events (ctxmon_reader_read_batch()). */
static int feed_run(const struct ctxmon_event *evs, size_t n, void *ctx)
{
	for (size_t i = 0; i < n; i++)
		ctxmon_hist_feed(ctx, &evs[i]);
	return 0;
}

static int run_input(struct hist_run *r)
{
	struct ctxmon_reader *rd = ctxmon_reader_open(r->input);
	struct ctxmon_verdict verdict;
	int ret, status;

	if (!rd) {
		cli__err(CMD, "cannot read %s: %s", r->input,
			 ctxmon_record_last_error());
		return EXIT_FAIL;
	}
	ctxmon_hist_set_arch(r->h, ctxmon_reader_meta_str(rd, CTXMON_META_ARCH));
	warn_thinned(r, rd);
	ctxmon_reader_set_task_fn(rd, add_task, r->h);
	ret = ctxmon_reader_read_batch(rd, feed_run, r->h);
	ctxmon_reader_get_verdict(rd, &verdict);
	r->verdict = &verdict;
	if (ret == -EBADMSG || ret == 0) {
		status = cli__verdict(CMD, r->input, &verdict, r->strict);
	} else {
		cli__err(CMD, "%s: %s", r->input,
			 ctxmon_reader_error(rd)[0] ? ctxmon_reader_error(rd) :
						      strerror(-ret));
		ctxmon_reader_close(rd);
		return EXIT_FAIL;
	}
	/* comm pointers of the recording live as long as the reader */
	ret = emit(r) < 0 ? EXIT_FAIL : status;
	r->verdict = NULL;
	ctxmon_reader_close(rd);
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int feed(const struct ctxmon_event *ev, void *ctx)
{
	struct hist_run *r = ctx;

	ctxmon_hist_feed(r->h, ev);
	return 0;
}

static int tick(void *ctx)
{
	struct hist_run *r = ctx;
	uint64_t now = now_ns();

	if (!r->interval_ms || now < r->next_print)
		return 0;
	r->next_print = now + (uint64_t)r->interval_ms * 1000000;
	if (emit(r) < 0)
		return -EIO;
	fputc('\n', r->f);
	ctxmon_hist_clear(r->h);
	return 0;
}

static int run_capture(struct hist_run *r)
{
	struct capture_loop l = { 0 };
	struct ctxmon_session_stats st;
	struct ctxmon_session *s;
	int status = EXIT_FAIL, ret;

	cli__signals();
	r->cap.events = ctxmon_hist_events(r->h);
	if (ctxmon_proc_scan(0, add_task, r->h) < 0)
		cli__err(CMD, "reading /proc: comms of running tasks unknown");
	r->cap.need_events = "a histogram of events";
	s = capture__start(CMD, &r->cap, &status);
	if (!s)
		return status;
	ctxmon_session_get_stats(s, &st);
	r->next_print = now_ns() + (uint64_t)r->interval_ms * 1000000;
	l.s = s;
	l.cap = &r->cap;
	l.start_ts = st.start_ts;
	l.fn = feed;
	l.ctx = r;
	l.tick = tick;
	ret = capture__loop(CMD, &l);
	if (ctxmon_session_child(s) > 0 && !l.child_done) {
		kill(ctxmon_session_child(s), SIGTERM);
		if (ctxmon_session_reap_child(s, true, &l.wstatus, NULL) == 1)
			l.child_done = true;
	}
	if (ctxmon_session_stop(s, ctxmon_hist_feed_cb, r->h) < 0 && !ret) {
		cli__err(CMD, "%s", ctxmon_session_error(s));
		ret = -EIO;
	}
	ctxmon_session_get_stats(s, &st);
	if (st.lost)
		fprintf(stderr, "ctxmon hist: %llu events lost: the tables miss "
				"them (try -m)\n", (unsigned long long)st.lost);
	status = ret < 0 ? EXIT_FAIL : EXIT_OK;
	if (ret < 0)
		r->whole = false; /* the tables of the ticks are not all */
	if (status == EXIT_OK && emit(r) < 0)
		status = EXIT_FAIL;
	if (status == EXIT_OK && l.child_done)
		status = capture__exit_status(l.wstatus);
	ctxmon_session_close(s);
	return status;
}

int cmd_hist(int argc, char **argv)
{
	struct hist_run r = { 0 };
	int status = EXIT_FAIL, ret;

	ret = parse(&r, argc, argv);
	if (ret) {
		status = ret > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	r.kernel = r.cap.backend && !strcmp(r.cap.backend, "kernel");
	/* the kernel judges its own triggers (events ctxmon does not
	 * capture included) */
	if (!r.kernel && build(&r) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (cli__out_open(CMD, &r.of, r.outpath,
			  r.cap.argv && !r.input && !r.check ? stderr : stdout,
			  0) < 0)
		goto out;
	r.f = r.of.f;
	if (r.check && r.kernel) {
		cli__err(CMD, "--check uses ctxmon's parser: drop --backend kernel");
		status = EXIT_USAGE;
	} else if (r.check) {
		for (size_t i = 0; i < ctxmon_hist_count(r.h); i++)
			fprintf(r.f, "%s\n", ctxmon_hist_trigger_info(r.h, i));
		status = EXIT_OK;
		r.whole = true;
	} else if (r.kernel) {
		status = hist_kernel__run(CMD, &r.cap, r.items, r.nitems, r.f,
					  r.json);
		r.whole = status != EXIT_FAIL && status != EXIT_USAGE;
	} else if (r.input) {
		status = run_input(&r);
	} else {
		status = run_capture(&r);
	}
out:
	if (cli__out_end(CMD, &r.of, r.whole) < 0)
		status = EXIT_FAIL;
	ctxmon_hist_free(r.h);
	free(r.items);
	capture__free(&r.cap);
	return status;
}
