/*
 * cmd_latency.c - `ctxmon latency`: wakeup latency (sched_waking -> on CPU)
 * per thread, process and CPU, as runqlat-style histograms with quantiles
 * and the context of each maximum, and who wakes whom.
 *
 * Captures live (a command, processes, threads or the machine) or reads a
 * recording (-i).  Either way the ordered stream goes into an account with
 * causes enabled (include/ctxmon/causes.h), which keeps the fine latency
 * histograms; this file only chooses what to show.  Only the sched events
 * are needed: the irq and softirq marks of a wakeup come with the waking
 * event itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctxmon/record.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/cmd_latency.h"

static const char *const CMD = "latency";

enum {
	OPT_PER_THREAD = CAP_OPT__END + 0x40,
	OPT_PER_PROCESS,
	OPT_PER_CPU,
	OPT_BUCKETS,
	OPT_JSON,
};

struct lat_run {
	struct capture_opts cap;
	const char *input; /* -i: a recording */
	bool per_thread, per_process, per_cpu;
	unsigned buckets;
	size_t limit;
	bool limit_set;
	enum out_format fmt;
	const char *outpath;
	struct cli_out of;	/* -o FILE */
	FILE *f;
	struct ctxmon_session *s;
	struct ctxmon_reader *rd;
	struct ctxmon_account *a;
	const char *arch; /* syscall numbering of the stream */
	const char *backend;
	struct ctxmon_session_stats st;
	uint64_t start_ts, end_ts;
	bool child_done;
	int wstatus;
	bool strict; /* --strict */
	struct ctxmon_verdict verdict; /* -i: the recording's */
	int verdict_status; /* -i: what cli__verdict() asked for */
};

static const struct cli_opt latency_in_opts[] = {
	{ "input", 'i', 'i', "FILE",
	  "read a recording (ctxmon record) instead; -a, -p and -t then "
	  "choose among its tasks", NULL, true },
	CLI_OPT_STRICT,
	{ NULL },
};

static const struct cli_opt latency_opts[] = {
	{ "per-thread", 0, OPT_PER_THREAD, NULL,
	  "a histogram per thread (default for a command, -p, -t)" },
	{ "per-process", 0, OPT_PER_PROCESS, NULL,
	  "per process (default with -a)" },
	{ "per-cpu", 0, OPT_PER_CPU, NULL, "per CPU the woken thread ran on" },
	{ "buckets", 0, OPT_BUCKETS, "N",
	  "N linear buckets from 0 to the maximum instead of log2 ones" },
	{ "limit", 'n', 'n', "N",
	  "at most N histograms and N waker pairs (0: all; default 10 with -a)" },
	{ "json", 0, OPT_JSON, NULL, "JSON" },
	{ "output", 'o', 'o', "FILE",
	  "write to FILE (default: stderr with a command, stdout otherwise)",
	  NULL, true },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc latency_doc = {
	.name = "latency",
	.args = "[options] [-a | -p PID | -t TID | [--] CMD [ARGS] | -i FILE]",
	.description =
		"Wakeup latency: the time from a thread's wakeup (sched_waking) until it\n"
		"runs, per thread, process and CPU, as histograms with p50/p90/p99/p99.9,\n"
		"the context of each maximum (waker, its CPU, the task that ran before),\n"
		"and who wakes whom (wakeups from hard or soft irq context marked).\n\n"
		"Quantiles come from a histogram with 32 buckets per power of two: within\n"
		"3.1% of the exact value (docs/causes.md).",
	.groups = (const struct cli_optgroup[]){
		{ "target", cli_capture_opts },
		{ "input", latency_in_opts },
		{ "output", latency_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "latency -- ./server --port 8080", "a server from its start" },
		{ "latency -a --duration 10 --per-cpu",
		  "the machine for 10 s, per CPU" },
		{ "latency -p 1234 --duration 5 --buckets 20",
		  "one process, 20 linear buckets" },
		{ "latency -i trace.ctxmon --json", "a recording, as JSON" },
		{ NULL },
	},
	.notes = "Capture needs root or CAP_PERFMON (and read access to tracefs).\n\n"
		 CLI_NOTE_RECORDING,
	.stop_at_operand = true,
};

static void help(void)
{
	cli__help(stdout, &latency_doc);
}

static int parse(struct lat_run *r, int argc, char **argv)
{
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = capture__getopt(CMD, &latency_doc, &r->cap, argc, argv)) !=
	       -1) {
		switch (opt) {
		case CAPTURE_OPT_ERROR:
			return -1;
		case 'i':
			r->input = optarg;
			break;
		case CLI_KEY_STRICT:
			r->strict = true;
			break;
		case OPT_PER_THREAD:
			r->per_thread = true;
			break;
		case OPT_PER_PROCESS:
			r->per_process = true;
			break;
		case OPT_PER_CPU:
			r->per_cpu = true;
			break;
		case OPT_BUCKETS:
			if (cli__parse_uint(optarg, 1000, &v) < 0 || v < 2) {
				cli__err(CMD,
					 "bad bucket count '%s': give 2 to "
					 "1000",
					 optarg);
				return -1;
			}
			r->buckets = (unsigned)v;
			break;
		case 'n':
			if (cli__parse_uint(optarg, 1u << 30, &v) < 0) {
				cli__err(CMD, "bad limit '%s'", optarg);
				return -1;
			}
			r->limit = v;
			r->limit_set = true;
			break;
		case OPT_JSON:
			r->fmt = OUT_JSON;
			break;
		case 'o':
			r->outpath = optarg;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon latency --help'.\n");
			return -1;
		}
	}
	if (r->input) {
		if (optind < argc) {
			cli__err(CMD,
				 "-i reads a recording: no command to run");
			return -1;
		}
		if (r->cap.all && r->cap.npids) {
			cli__err(CMD, "-a cannot be combined with -p or -t");
			return -1;
		}
		if (capture__input(CMD, &r->cap, true) < 0)
			return -1;
	} else if (r->strict) {
		cli__err(CMD, "--strict is for a recording: give -i FILE");
		return -1;
	} else if (capture__finish(CMD, &r->cap, argc, argv) < 0) {
		return -1;
	}
	if (r->cap.all && !r->limit_set && r->fmt == OUT_TABLE)
		r->limit = 10;
	if (!r->per_thread && !r->per_process && !r->per_cpu) {
		if (r->cap.all)
			r->per_process = true;
		else
			r->per_thread = true;
	}
	return 0;
}

/* ---- gathering ------------------------------------------------------- */

int causes_report__collect(const struct ctxmon_account *a, bool all,
			   const char *arch, struct causes_report *cr)
{
	struct ctxmon_causes *t, *p = NULL;
	struct ctxmon_pair *pairs = NULL;
	size_t nt = 0, np = 0, npairs = 0;

	memset(cr, 0, sizeof(*cr));
	t = ctxmon_account_causes(a, CTXMON_ROWS_THREADS, all, &nt);
	if (t)
		p = ctxmon_account_causes(a, CTXMON_ROWS_PROCESSES, all, &np);
	if (p)
		pairs = ctxmon_account_pairs(a, all, &npairs);
	if (!pairs) {
		int err = errno ? -errno : -ENOMEM;

		ctxmon_causes_free(t, nt);
		ctxmon_causes_free(p, np);
		return err;
	}
	cr->threads = t;
	cr->nthreads = nt;
	cr->procs = p;
	cr->nprocs = np;
	cr->pairs = pairs;
	cr->npairs = npairs;
	cr->arch = arch;
	return 0;
}

void causes_report__free(struct causes_report *cr)
{
	ctxmon_causes_free((struct ctxmon_causes *)cr->threads, cr->nthreads);
	ctxmon_causes_free((struct ctxmon_causes *)cr->procs, cr->nprocs);
	free((void *)cr->pairs);
	memset(cr, 0, sizeof(*cr));
}

static int cmp_group(const void *x, const void *y)
{
	const struct latency_group *a = x, *b = y;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind != LAT_CPU && a->lat->count != b->lat->count)
		return a->lat->count < b->lat->count ? 1 : -1;
	return (a->id > b->id) - (a->id < b->id);
}

/* The rows of @kind as groups appended to @g (which has room). */
static size_t add_rows(struct latency_group *g, const struct ctxmon_stats *s,
		       const struct ctxmon_causes *c, size_t n, bool procs)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		/* Rows of both calls come in the same order. */
		if (c[i].tid != s[i].tid || c[i].gen != s[i].gen)
			continue;
		g[k].kind = procs ? LAT_PROCESS : LAT_THREAD;
		g[k].id = s[i].tid;
		g[k].tgid = procs ? -1 : s[i].tgid;
		g[k].comm = s[i].comm;
		g[k].lat = &c[i].lat;
		k++;
	}
	return k;
}

static int emit(struct lat_run *r)
{
	struct ctxmon_stats *th = NULL, *pr = NULL;
	struct ctxmon_causes *cth = NULL, *cpr = NULL;
	struct ctxmon_cpu_latency *cl = NULL;
	struct ctxmon_pair *pairs = NULL;
	struct latency_group *g = NULL;
	struct latency_report rep = { 0 };
	size_t nth = 0, npr = 0, ncl = 0, npairs = 0, n1, n2, ng = 0, k = 0;
	int ret = -ENOMEM;

	ctxmon_account_finish(r->a, r->end_ts);
	th = ctxmon_account_rows(r->a, CTXMON_ROWS_THREADS, false, &nth);
	cth = ctxmon_account_causes(r->a, CTXMON_ROWS_THREADS, false, &n1);
	pr = ctxmon_account_rows(r->a, CTXMON_ROWS_PROCESSES, false, &npr);
	cpr = ctxmon_account_causes(r->a, CTXMON_ROWS_PROCESSES, false, &n2);
	cl = ctxmon_account_cpu_latency(r->a, &ncl);
	pairs = ctxmon_account_pairs(r->a, false, &npairs);
	if (!th || !cth || !pr || !cpr || !cl || !pairs || n1 != nth ||
	    n2 != npr)
		goto out;
	g = calloc(nth + npr + ncl + 1, sizeof(*g));
	if (!g)
		goto out;
	if (r->per_thread)
		ng += add_rows(g + ng, th, cth, nth, false);
	if (r->per_process)
		ng += add_rows(g + ng, pr, cpr, npr, true);
	if (r->per_cpu) {
		for (size_t i = 0; i < ncl; i++) {
			g[ng].kind = LAT_CPU;
			g[ng].id = cl[i].cpu;
			g[ng].tgid = -1;
			g[ng].lat = &cl[i].lat;
			ng++;
		}
	}
	qsort(g, ng, sizeof(*g), cmp_group);
	/* Who wakes whom; preemptions are `stat --causes` business. */
	for (size_t i = 0; i < npairs; i++)
		if (pairs[i].kind == CTXMON_PAIR_WAKE)
			pairs[k++] = pairs[i];
	rep.backend = r->backend;
	rep.source = r->input;
	rep.verdict = r->input ? &r->verdict : NULL;
	rep.duration_ns = r->end_ts > r->start_ts ? r->end_ts - r->start_ts : 0;
	rep.cap = r->st;
	rep.anomalies = ctxmon_account_anomalies(r->a);
	rep.groups = g;
	rep.ngroups = ng;
	rep.pairs = pairs;
	rep.npairs = k;
	rep.buckets = r->buckets;
	rep.limit = r->limit;
	ret = output__latency(r->f, r->fmt, &rep);
	if (ret < 0)
		cli__err(CMD, "writing %s: %s",
			 r->outpath ? r->outpath : "output", strerror(-ret));
out:
	if (ret == -ENOMEM)
		cli__err(CMD, "out of memory");
	free(g);
	free(th);
	free(pr);
	ctxmon_causes_free(cth, n1);
	ctxmon_causes_free(cpr, n2);
	ctxmon_cpu_latency_free(cl, ncl);
	free(pairs);
	return ret;
}

/* ---- a recording ------------------------------------------------------ */

static int seed_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	return ctxmon_account_add_task(ctx, tid, tgid, comm) < 0 ? -ENOMEM : 0;
}

/* The recording's own target, unless -a, -p or -t chose another. */
static void input_target(struct lat_run *r, struct ctxmon_account_opts *ao,
			 uint64_t *ids, size_t max, pid_t *pids)
{
	const char *t = ctxmon_reader_meta_str(r->rd, CTXMON_META_TARGET);
	uint64_t root;
	size_t n;

	if (r->cap.all || r->cap.npids) {
		ao->target = r->cap.all ? CTXMON_TARGET_ALL : r->cap.target;
		ao->pids = r->cap.pids;
		ao->npids = r->cap.npids;
		return;
	}
	if (t && !strncmp(t, "cmd", 3) &&
	    !ctxmon_reader_meta_u64(r->rd, CTXMON_META_ROOT_PID, &root)) {
		ao->target = CTXMON_TARGET_CMD;
		ao->root_pid = (pid_t)root;
		return;
	}
	n = ctxmon_reader_meta_u64s(r->rd, CTXMON_META_TARGET_PIDS, ids, max);
	if (t && n && n <= max &&
	    (!strncmp(t, "pid", 3) || !strncmp(t, "tid", 3))) {
		for (size_t i = 0; i < n; i++)
			pids[i] = (pid_t)ids[i];
		ao->target = t[0] == 'p' ? CTXMON_TARGET_PIDS :
					   CTXMON_TARGET_TIDS;
		ao->pids = pids;
		ao->npids = n;
		return;
	}
	ao->target = CTXMON_TARGET_ALL;
	r->cap.all = true;
}

static int run_input(struct lat_run *r)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_causes_opts co = { .sz = sizeof(co) };
	struct ctxmon_reader_info info;
	uint64_t ids[256], v;
	pid_t pids[256];
	int ret;

	r->rd = ctxmon_reader_open(r->input);
	if (!r->rd) {
		cli__err(CMD, "cannot read %s: %s", r->input,
			 ctxmon_record_last_error());
		return -1;
	}
	input_target(r, &ao, ids, ARRAY_SIZE(ids), pids);
	r->a = ctxmon_account_new(&ao);
	co.arch = r->arch = ctxmon_reader_meta_str(r->rd, CTXMON_META_ARCH);
	if (!r->a || ctxmon_account_enable_causes(r->a, &co) < 0) {
		cli__err(CMD, "out of memory");
		return -1;
	}
	ctxmon_reader_set_task_fn(r->rd, seed_task, r->a);
	ret = ctxmon_reader_read_batch(r->rd, ctxmon_account_feed_batch_cb,
				       r->a);
	ctxmon_reader_get_verdict(r->rd, &r->verdict);
	if (ret == -EBADMSG || ret == 0) {
		r->verdict_status =
			cli__verdict(CMD, r->input, &r->verdict, r->strict);
	} else if (ret < 0) {
		cli__err(CMD, "%s: %s", r->input,
			 ctxmon_reader_error(r->rd)[0] ?
				 ctxmon_reader_error(r->rd) :
				 strerror(-ret));
		return -1;
	}
	ctxmon_reader_get_info(r->rd, &info);
	r->backend = ctxmon_reader_meta_str(r->rd, CTXMON_META_BACKEND);
	r->start_ts = info.first_ts;
	r->end_ts = info.last_ts;
	if (!ctxmon_reader_meta_u64(r->rd, CTXMON_META_TIME_START, &v))
		r->start_ts = v;
	if (!ctxmon_reader_meta_u64(r->rd, CTXMON_META_TIME_STOP, &v) &&
	    v > r->end_ts)
		r->end_ts = v;
	r->st.events = info.events;
	/* the capture's losses, as the recording's records count them */
	r->st.lost = r->verdict.lost;
	r->st.lost_records = r->verdict.lost_records;
	return 0;
}

/* ---- a live capture ----------------------------------------------------- */

static int capture_loop(struct lat_run *r)
{
	pid_t child = ctxmon_session_child(r->s);
	uint64_t deadline =
		r->cap.duration_s ?
			r->start_ts + (uint64_t)(r->cap.duration_s * 1e9) :
			0;
	bool forwarded = false;
	int ret;

	for (;;) {
		ret = ctxmon_session_poll(r->s, 100, ctxmon_account_feed_cb,
					  r->a);
		if (ret < 0 && ret != -EINTR) {
			cli__err(CMD, "%s", ctxmon_session_error(r->s));
			return ret;
		}
		if (cli_signal) {
			/* The first signal goes to the command; a second one
			 * (or any, without a command) stops. */
			if (child > 0 && !r->child_done && !forwarded) {
				kill(child, cli_signal);
				forwarded = true;
				cli_signal = 0;
			} else {
				return 0;
			}
		}
		if (child > 0 && !r->child_done &&
		    ctxmon_session_reap_child(r->s, false, &r->wstatus, NULL) ==
			    1) {
			r->child_done = true;
			usleep(10000); /* let its last switch-outs land */
			return 0;
		}
		if (deadline && ctxmon_clock_ns() >= deadline)
			return 0;
	}
}

static int run_capture(struct lat_run *r)
{
	struct ctxmon_account_opts ao = {
		.sz = sizeof(ao),
		.target = r->cap.target,
		.pids = r->cap.pids,
		.npids = r->cap.npids,
	};
	int status = EXIT_FAIL, ret;

	cli__signals();
	r->cap.need_events = "wakeup latency";
	r->s = capture__start(CMD, &r->cap, &status);
	if (!r->s)
		return status;
	ao.root_pid = ctxmon_session_child(r->s);
	r->a = ctxmon_account_new(&ao);
	if (!r->a || ctxmon_account_enable_causes(r->a, NULL) < 0) {
		cli__err(CMD, "out of memory");
		return EXIT_FAIL;
	}
	if (capture__seed(CMD, &r->cap, r->a) < 0)
		return EXIT_FAIL;
	ctxmon_session_get_stats(r->s, &r->st);
	r->start_ts = r->st.start_ts;
	ret = capture_loop(r);
	if (ctxmon_session_child(r->s) > 0 && !r->child_done) {
		kill(ctxmon_session_child(r->s), SIGTERM);
		if (ctxmon_session_reap_child(r->s, true, &r->wstatus, NULL) ==
		    1)
			r->child_done = true;
	}
	if (ctxmon_session_stop(r->s, ctxmon_account_feed_cb, r->a) < 0 &&
	    !ret) {
		cli__err(CMD, "%s", ctxmon_session_error(r->s));
		ret = -EIO;
	}
	ctxmon_session_get_stats(r->s, &r->st);
	r->end_ts = r->st.stop_ts;
	r->backend = ctxmon_session_backend(r->s);
	if (ret < 0)
		return EXIT_FAIL;
	return EXIT_OK;
}

int cmd_latency(int argc, char **argv)
{
	struct lat_run r = { .fmt = OUT_TABLE };
	int status = EXIT_FAIL, ret;

	ret = parse(&r, argc, argv);
	if (ret) {
		capture__free(&r.cap);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (cli__out_open(CMD, &r.of, r.outpath,
			  r.cap.argv && !r.input ? stderr : stdout, 0) < 0)
		goto out;
	r.f = r.of.f;
	if (r.input)
		status = run_input(&r) < 0 ? EXIT_FAIL : EXIT_OK;
	else
		status = run_capture(&r);
	if (status != EXIT_OK)
		goto out;
	if (emit(&r) < 0) {
		status = EXIT_FAIL;
		goto out;
	}
	if (r.child_done)
		status = capture__exit_status(r.wstatus);
	if (r.input)
		status = r.verdict_status;
	/* --strict makes an incomplete input a failure: nothing written */
	if (cli__out_end(CMD, &r.of, !r.input || status == EXIT_OK) < 0)
		status = EXIT_FAIL;
out:
	cli__out_end(CMD, &r.of, false);
	ctxmon_account_free(r.a);
	ctxmon_session_close(r.s);
	ctxmon_reader_close(r.rd);
	capture__free(&r.cap);
	return status;
}
