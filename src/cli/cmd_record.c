/*
 * cmd_record.c - `ctxmon record`: write every event of a capture to a
 * recording file (docs/file-format.md), for `report` and `script` later.
 *
 * Besides the events the file gets what a later report needs to say what
 * stat would have said: the tasks known at the start (as stat seeds its
 * account from /proc), the target, the session's loss and ordering
 * counters at start and stop, a launched command's exit status and
 * rusage, and the machine (kernel, CPUs, clock, backend, event formats).
 * The writer is flushed every second, so a killed recorder loses at most
 * about a second of events; a full disk stops the capture with a message
 * and a non-zero exit, leaving a readable file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/export.h>
#include <ctxmon/features.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/recording.h"

static const char *const CMD = "record";

#define FLUSH_NS 1000000000ull /* a killed recorder loses at most this */

struct rec_run {
	struct capture_opts cap;
	const char *path;
	int level;
	bool stat, json, quiet;
	const char *perfetto;	/* --perfetto FILE */
	struct ctxmon_record *w;
	struct cli_out of;	/* PATH.part until the capture ends */
	struct ctxmon_session *s;
	struct ctxmon_account *a; /* --stat only */
	int werr;
	bool child_done;
	uint64_t next_flush;	/* when to cut the next chunk */
	int wstatus;
	struct rusage ru;
};

static const struct cli_opt record_opts[] = {
	{ "output", 'o', 'o', "FILE",
	  "the recording (default " DEFAULT_RECORDING "), - for standard "
	  "output; written as FILE.part and renamed to FILE when the capture "
	  "ends, so a file there is replaced only then; a capture killed hard "
	  "leaves FILE.part, readable as it is", NULL, true },
	{ "events", 'e', 'e', "LIST",
	  "event groups, comma-separated: sched (default), irq, syscall, "
	  "wakeups (every sched_wakeup; by default the bpf backend keeps those "
	  "of a task woken while still on its CPU, all the numbers need), all" },
	{ "level", 'z', 'z', "N", "zstd level 1-19 (default 3)" },
	{ "stat", 0, 'S', NULL,
	  "also print stat's numbers at the end (to stderr with a command, as "
	  "stat does)" },
	{ "json", 0, 'J', NULL, "--stat as JSON" },
	{ "perfetto", 0, 'P', "FILE",
	  "also write the recording as a Perfetto trace (ctxmon export "
	  "--format perfetto)", NULL, true },
	{ "quiet", 'q', 'q', NULL, "no summary line at the end" },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc record_doc = {
	.name = "record",
	.args = "[options] [-a | -p PID | -t TID | [--] CMD [ARGS]]",
	.description =
		"Write every scheduler event of a capture, in time order, to a\n"
		"recording file, with the session's metadata (kernel, CPUs, clock,\n"
		"backend, event formats, loss counters, the tasks known at start).\n"
		"Read it with `ctxmon report` (the numbers of stat) or `ctxmon script`\n"
		"(ftrace text).  The file is compressed (a few bytes per event),\n"
		"created with mode 0600, and stays readable if the recorder is killed\n"
		"or the disk fills up.  With a command, exits with its exit status.",
	.groups = (const struct cli_optgroup[]){
		{ "target", cli_capture_opts },
		{ "recording", record_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "record -- ./myprog", "record myprog and its children" },
		{ "record -a --duration 10 -o all.data",
		  "the whole machine for 10 s" },
		{ "record -p 1234 -e sched,irq", "one process, with irqs" },
		{ "report -i all.data --per-process", "then read it back" },
		{ NULL },
	},
	.notes = "Needs root or CAP_PERFMON (and read access to tracefs).",
	.stop_at_operand = true,
};

static void help(void)
{
	cli__help(stdout, &record_doc);
}

static int one_event_group(const char *t, void *ctx)
{
	unsigned *out = ctx;

	if (!strcmp(t, "sched"))
		*out |= CTXMON_EVENTS_SCHED;
	else if (!strcmp(t, "irq"))
		*out |= CTXMON_EVENTS_IRQ;
	else if (!strcmp(t, "syscall") || !strcmp(t, "syscalls"))
		*out |= CTXMON_EVENTS_SYSCALL;
	else if (!strcmp(t, "wakeups"))
		*out |= CTXMON_EVENTS_WAKEUP_ALL;
	else if (!strcmp(t, "all"))
		*out |= CTXMON_EVENTS_SCHED | CTXMON_EVENTS_IRQ |
			CTXMON_EVENTS_SYSCALL | CTXMON_EVENTS_WAKEUP_ALL;
	else
		return -1;
	return 0;
}

static int parse_events(const char *arg, unsigned *out)
{
	*out = 0;
	if (cli__each(arg, one_event_group, out) <= 0)
		return -1;
	/* The accounting needs the scheduler events whatever else is asked. */
	*out |= CTXMON_EVENTS_SCHED;
	return 0;
}

static int parse(struct rec_run *r, int argc, char **argv)
{
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = capture__getopt(CMD, &record_doc, &r->cap, argc, argv)) !=
	       -1) {
		switch (opt) {
		case CAPTURE_OPT_ERROR:
			return -1;
		case 'o':
			r->path = optarg;
			break;
		case 'e':
			if (parse_events(optarg, &r->cap.events) < 0) {
				cli__err(
					CMD,
					"bad event list '%s': give sched, irq, "
					"syscall, wakeups or all, comma-separated",
					optarg);
				return -1;
			}
			break;
		case 'z':
			if (cli__parse_uint(optarg, 19, &v) < 0 || !v) {
				cli__err(CMD, "bad level '%s': 1 to 19",
					 optarg);
				return -1;
			}
			r->level = (int)v;
			break;
		case 'S':
			r->stat = true;
			break;
		case 'P':
			r->perfetto = optarg;
			break;
		case 'J':
			r->json = true;
			break;
		case 'q':
			r->quiet = true;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon record --help'.\n");
			return -1;
		}
	}
	if (r->json && !r->stat) {
		cli__err(CMD, "--json goes with --stat");
		return -1;
	}
	if (r->perfetto && !strcmp(r->path, "-")) {
		cli__err(CMD, "--perfetto reads the recording back: give -o "
			      "FILE, not -");
		return -1;
	}
	return capture__finish(CMD, &r->cap, argc, argv) < 0 ? -1 : 0;
}

/* --perfetto: the file just written, read back and exported. */
static int export_perfetto(const struct rec_run *r)
{
	struct ctxmon_export_opts o = { .sz = sizeof(o),
					.format = CTXMON_EXPORT_PERFETTO };
	struct ctxmon_reader *rd = ctxmon_reader_open(r->path);
	int ret;

	if (!rd) {
		cli__err(CMD, "cannot read %s back: %s", r->path,
			 ctxmon_record_last_error());
		return -1;
	}
	ret = ctxmon_export_recording(rd, r->perfetto, &o, NULL);
	ctxmon_reader_close(rd);
	if (ret < 0) {
		cli__err(CMD, "%s: %s", r->perfetto,
			 ctxmon_export_last_error());
		return -1;
	}
	return 0;
}

static void write_failed(struct rec_run *r, int err)
{
	if (!r->werr)
		r->werr = err;
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct rec_run *r = ctx;
	int ret;

	if (r->a)
		ctxmon_account_feed(r->a, ev);
	if (r->werr)
		return 0; /* keep accounting; the file is done */
	ret = ctxmon_record_write(r->w, ev);
	if (ret < 0) {
		write_failed(r, ret);
		return ret;
	}
	return 0;
}

/* ---- metadata ------------------------------------------------------ */

/* Names of the irq lines, for script's irq_handler_entry lines. */
static int add_irq_names(struct rec_run *r)
{
	char line[1024], key[64];
	FILE *f = fopen("/proc/interrupts", "re");
	int ret = 0;

	if (!f)
		return 0;
	while (!ret && fgets(line, sizeof(line), f)) {
		char *end, *name;
		long irq = strtol(line, &end, 10);

		if (end == line || *end != ':')
			continue;
		/* The last column is the action's name. */
		line[strcspn(line, "\n")] = '\0';
		name = strrchr(line, ' ');
		if (!name || !name[1])
			continue;
		snprintf(key, sizeof(key), CTXMON_META_IRQ_PREFIX "%ld", irq);
		ret = ctxmon_record_set_meta_str(r->w, key, name + 1);
	}
	fclose(f);
	return ret;
}

/* Metadata setters that keep the first error, so a list of them reads
 * as a list. */
struct meta {
	struct ctxmon_record *w;
	int err;
};

static void m_str(struct meta *m, const char *key, const char *val)
{
	if (!m->err)
		m->err = ctxmon_record_set_meta_str(m->w, key, val);
}

static void m_u64(struct meta *m, const char *key, uint64_t val)
{
	if (!m->err)
		m->err = ctxmon_record_set_meta_u64(m->w, key, val);
}

static void m_u64s(struct meta *m, const char *key, const uint64_t *val,
		   size_t n)
{
	if (!m->err && val && n)
		m->err = ctxmon_record_set_meta_u64s(m->w, key, val, n);
}

static const char *target_kind(enum ctxmon_target_kind k)
{
	return k == CTXMON_TARGET_ALL  ? "all" :
	       k == CTXMON_TARGET_PIDS ? "pid" :
	       k == CTXMON_TARGET_TIDS ? "tid" :
					 "cmd";
}

static void target_meta(struct rec_run *r, struct meta *m)
{
	char buf[4096];
	size_t o;

	o = (size_t)snprintf(buf, sizeof(buf), "%s",
			     target_kind(r->cap.target));
	for (size_t i = 0; i < r->cap.npids && o < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%d",
				      i ? "," : " ", r->cap.pids[i]);
	for (char *const *a = r->cap.argv; a && *a && o < sizeof(buf); a++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, " %s", *a);
	m_str(m, CTXMON_META_TARGET, buf);
	m_u64(m, META_TARGET_KIND, r->cap.target);
	if (r->cap.npids) {
		uint64_t *p = calloc(r->cap.npids, sizeof(*p));

		if (!p && !m->err)
			m->err = -ENOMEM;
		for (size_t i = 0; p && i < r->cap.npids; i++)
			p[i] = (uint64_t)r->cap.pids[i];
		m_u64s(m, CTXMON_META_TARGET_PIDS, p, r->cap.npids);
		free(p);
	}
	if (ctxmon_session_child(r->s) > 0)
		m_u64(m, CTXMON_META_ROOT_PID,
		      (uint64_t)ctxmon_session_child(r->s));
}

static int start_meta(struct rec_run *r, int argc, char **argv)
{
	unsigned groups = r->cap.events ? r->cap.events : CTXMON_EVENTS_SCHED;
	struct meta m = { .w = r->w };
	struct ctxmon_session_stats st;
	char buf[4096], host[256] = "";
	struct timespec now;
	struct utsname u;
	size_t o = 0;
	int rt;

	ctxmon_session_get_stats(r->s, &st);
	for (int i = 0; i < argc && o < sizeof(buf); i++) {
		int n = snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? " " : "",
				 i == 0 ? "ctxmon record" : argv[i]);

		if (n > 0)
			o += (size_t)n;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	gethostname(host, sizeof(host) - 1);
	m_str(&m, CTXMON_META_SOURCE, "record");
	m_str(&m, CTXMON_META_TOOL, "ctxmon " CTXMON_VERSION);
	m_str(&m, CTXMON_META_CMDLINE, buf);
	m_str(&m, CTXMON_META_HOST, host);
	if (uname(&u) == 0) {
		m_str(&m, CTXMON_META_KERNEL, u.release);
		m_str(&m, CTXMON_META_ARCH, u.machine);
	}
	rt = ctxmon_features_preempt_rt();
	if (rt >= 0)
		m_u64(&m, CTXMON_META_PREEMPT_RT, (uint64_t)rt);
	m_u64(&m, CTXMON_META_NCPUS, (uint64_t)st.ncpus);
	m_str(&m, CTXMON_META_CLOCK, "monotonic");
	m_str(&m, CTXMON_META_BACKEND, ctxmon_session_backend(r->s));
	m_u64(&m, CTXMON_META_EVENTS, groups);
	if (!(ctxmon_session_events(r->s) & CTXMON_EVENTS_WAKEUP_ALL))
		m_str(&m, CTXMON_META_WAKEUPS, "on-cpu");
	if (ctxmon_session_caps(r->s) & CTXMON_CAP_ORPHANS)
		m_u64(&m, CTXMON_META_ORPHAN_WALK,
		      kcmp__caps_marks(ctxmon_session_caps(r->s)));
	target_meta(r, &m);
	m_u64(&m, CTXMON_META_TIME_START, st.start_ts);
	m_u64(&m, CTXMON_META_WALL_START,
	      (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
	m_u64s(&m, CTXMON_META_LOST_START, st.lost_per_cpu, (size_t)st.ncpus);
	if (!m.err)
		m.err = ctxmon_record_add_tracefs_formats(r->w, r->cap.tracefs,
							  groups);
	if (!m.err)
		m.err = add_irq_names(r);
	return m.err;
}

static int stop_meta(struct rec_run *r, const struct ctxmon_session_stats *st)
{
	struct meta m = { .w = r->w };

	m_u64(&m, CTXMON_META_TIME_STOP, st->stop_ts);
	m_u64s(&m, CTXMON_META_LOST_STOP, st->lost_per_cpu, (size_t)st->ncpus);
	m_u64(&m, META_CAP_EVENTS, st->events);
	m_u64(&m, META_CAP_LOST, st->lost);
	m_u64(&m, META_CAP_LOST_RECORDS, st->lost_records);
	m_u64(&m, META_CAP_ORDER, st->order_violations);
	if (r->child_done) {
		uint64_t ru[2] = { (uint64_t)r->ru.ru_nvcsw,
				   (uint64_t)r->ru.ru_nivcsw };

		m_u64(&m, CTXMON_META_EXIT_STATUS, (uint64_t)r->wstatus);
		m_u64s(&m, META_RUSAGE, ru, 2);
		m_u64(&m, META_RUSAGE_CPU, capture__ru_cpu_ns(&r->ru));
		/* a backend judging kinds by the state shown: how this
		 * kernel shows a signal-cut sleep, for report's comparison
		 * (the probe takes some 80 ms) */
		if (!(ctxmon_session_caps(r->s) & CTXMON_CAP_KINDS)) {
			char why[160];
			enum ctxmon_sigsleep v =
				ctxmon_features_sigsleep(why, sizeof(why));

			m_u64(&m, CTXMON_META_SIGSLEEP, (uint64_t)v);
			m_str(&m, CTXMON_META_SIGSLEEP_WHY, why);
		}
	}
	return m.err;
}

/* ---- tasks at start ------------------------------------------------ */

static int declare(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct rec_run *r = ctx;
	int ret = ctxmon_record_add_task(r->w, tid, tgid, comm);

	if (!ret && r->a)
		ret = ctxmon_account_add_task(r->a, tid, tgid, comm);
	return ret;
}

/* The tasks stat would seed its account with, declared in the file so
 * that report seeds its account the same way. */
static int declare_tasks(struct rec_run *r)
{
	int ret = capture__scan(&r->cap, declare, r);

	return ret < 0 && r->cap.target == CTXMON_TARGET_ALL ? -EIO : ret;
}

/* ---- capture loop -------------------------------------------------- */

/* After every poll: stop on a write error; flush a chunk every second so
 * a crash loses at most that much. */
static int rec_tick(void *ctx)
{
	struct rec_run *r = ctx;
	int ret;

	if (r->werr)
		return r->werr;
	if (ctxmon_clock_ns() < r->next_flush)
		return 0;
	ret = ctxmon_record_flush(r->w);
	if (ret < 0) {
		write_failed(r, ret);
		return ret;
	}
	r->next_flush = ctxmon_clock_ns() + FLUSH_NS;
	return 0;
}

static int capture_loop(struct rec_run *r, uint64_t start_ts)
{
	struct capture_loop l = {
		.s = r->s,
		.cap = &r->cap,
		.start_ts = start_ts,
		.fn = on_event,
		.tick = rec_tick,
		.ctx = r,
	};
	int ret;

	r->next_flush = ctxmon_clock_ns() + FLUSH_NS;
	ret = capture__loop(CMD, &l);
	r->child_done = l.child_done;
	r->wstatus = l.wstatus;
	r->ru = l.ru;
	return ret;
}

static void summary(const struct rec_run *r,
		    const struct ctxmon_record_stats *ws,
		    const struct ctxmon_session_stats *st)
{
	fprintf(stderr, "ctxmon record: %" PRIu64 " events", ws->events);
	if (st->lost)
		fprintf(stderr, " (%" PRIu64 " lost)", st->lost);
	fprintf(stderr, " written to %s: %.2f MiB, %.2f bytes/event\n", r->path,
		(double)ws->file_bytes / (1 << 20),
		ws->events ? (double)ws->event_bytes / (double)ws->events :
			     0.0);
	if (st->lost)
		fprintf(stderr, "  to lose less: larger per-CPU buffers (-m KB)"
				"\n" OUTPUT_RT_HINT "\n");
}

static int print_stat(struct rec_run *r, const struct ctxmon_session_stats *st)
{
	struct output_opts o = { .fmt = r->json ? OUT_JSON : OUT_TABLE,
				 .sort = SORT_SWITCHES };
	struct run_summary s = {
		.backend = ctxmon_session_backend(r->s),
		.target = r->cap.target,
		.cap = *st,
		.has_exit = r->child_done,
		.wstatus = r->wstatus,
		.has_rusage = r->child_done,
		.root = ctxmon_session_child(r->s),
		.ru_nvcsw = (uint64_t)r->ru.ru_nvcsw,
		.ru_nivcsw = (uint64_t)r->ru.ru_nivcsw,
		.ru_cpu_ns = capture__ru_cpu_ns(&r->ru),
		.marks = kcmp__live_marks(ctxmon_session_caps(r->s)),
	};

	if (r->cap.all) {
		o.show_cpus = true;
		if (o.fmt == OUT_TABLE)
			o.limit = 25;
	}
	/* standard output may be the recording itself (-o -) */
	return recording__emit(r->cap.argv || !strcmp(r->path, "-") ? stderr :
								     stdout,
			       &o, false, false,
			       r->a, &s, NULL, NULL);
}

/*
 * The recording is written to PATH.part (ctxmon/outfile.h) and renamed
 * to PATH when the capture has ended well: a command that cannot run, a
 * backend refused or a write that fails leaves an earlier recording at
 * PATH as it was.  A capture killed hard, or one whose disk filled, stays
 * readable as PATH.part.
 */
static struct ctxmon_record *create_beside(struct rec_run *r,
					   const struct ctxmon_record_opts *wo)
{
	struct ctxmon_record *w;
	int fd;

	if (cli__out_open(CMD, &r->of, r->path, NULL,
			  CTXMON_OUTFILE_PRIVATE | CTXMON_OUTFILE_PART) < 0)
		return NULL;
	/* the writer owns a descriptor of its own; ours syncs and renames */
	fd = dup(ctxmon_outfile_fd(r->of.o));
	w = fd < 0 ? NULL : ctxmon_record_fdopen(fd, wo);
	/* -o -: the writer has the standard output; what else would go
	 * there (the command's output) goes to stderr instead */
	if (w && ctxmon_outfile_is_stdout(r->of.o) &&
	    dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		ctxmon_record_close(w);
		w = NULL;
	}
	if (!w) {
		cli__err(CMD, "cannot create the recording: %s",
			 ctxmon_record_last_error()[0] ?
				 ctxmon_record_last_error() :
				 strerror(errno));
		if (fd >= 0)
			close(fd);
		cli__out_end(CMD, &r->of, false);
	}
	return w;
}

/* The name the data is in now: PATH.part, or PATH written in place. */
static const char *part_name(const struct rec_run *r)
{
	const char *p = r->of.o ? ctxmon_outfile_work_path(r->of.o) : NULL;

	return p ? p : r->path;
}

int cmd_record(int argc, char **argv)
{
	struct rec_run r = { .path = DEFAULT_RECORDING };
	struct ctxmon_record_opts wo = { .sz = sizeof(wo) };
	struct ctxmon_session_stats st = { 0 };
	struct ctxmon_record_stats ws;
	int status = EXIT_FAIL, ret, cerr = 0;
	bool started = false;

	ret = parse(&r, argc, argv);
	if (ret) {
		capture__free(&r.cap);
		return ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	wo.level = r.level;
	r.w = create_beside(&r, &wo);
	if (!r.w)
		goto out;
	cli__signals();
	r.cap.need_events = "a recording";
	r.s = capture__start(CMD, &r.cap, &status);
	if (!r.s)
		goto out;
	started = true;
	if (r.stat) {
		struct ctxmon_account_opts ao;

		capture__account_opts(&r.cap, r.s, &ao);
		r.a = ctxmon_account_new(&ao);
		if (!r.a) {
			cli__err(CMD, "out of memory");
			goto out;
		}
	}
	ret = start_meta(&r, argc, argv);
	if (!ret)
		ret = declare_tasks(&r);
	/* What identifies the recording is on disk before any event. */
	if (!ret)
		ret = ctxmon_record_flush(r.w);
	if (ret < 0) {
		write_failed(&r, ret);
	} else {
		ctxmon_session_get_stats(r.s, &st);
		cerr = capture_loop(&r, st.start_ts);
	}
	if (ctxmon_session_child(r.s) > 0 && !r.child_done) {
		kill(ctxmon_session_child(r.s), SIGTERM);
		if (ctxmon_session_reap_child(r.s, true, &r.wstatus, &r.ru) ==
		    1)
			r.child_done = true;
	}
	if (ctxmon_session_stop(r.s, on_event, &r) < 0 && !r.werr && !cerr) {
		cli__err(CMD, "%s", ctxmon_session_error(r.s));
		cerr = -EIO;
	}
	ctxmon_session_get_stats(r.s, &st);
	if (stop_meta(&r, &st) < 0 && !r.werr)
		write_failed(&r, -ENOMEM);
	if (!r.werr) {
		ret = ctxmon_record_flush(r.w);
		if (ret < 0)
			write_failed(&r, ret);
	}
	ctxmon_record_get_stats(r.w, &ws);
	if (r.werr)
		cli__err(CMD,
			 "%s: %s; the recording stops there and stays "
			 "readable (ctxmon report -i %s)%s",
			 part_name(&r),
			 ctxmon_record_error(r.w)[0] ?
				 ctxmon_record_error(r.w) :
				 strerror(-r.werr),
			 part_name(&r),
			 strcmp(part_name(&r), r.path) ?
				 "; the file at the path given is as it was" :
				 "");
	ret = ctxmon_record_close(r.w);
	r.w = NULL;
	if (ret < 0 && !r.werr) {
		cli__err(CMD, "%s: %s", part_name(&r), strerror(-ret));
		r.werr = ret;
	}
	if (r.werr)
		goto out;
	/* the recording is whole, even if the capture failed after */
	if (cli__out_end(CMD, &r.of, true) < 0)
		goto out;
	if (!r.quiet)
		summary(&r, &ws, &st);
	if (cerr < 0 && !r.werr)
		goto out; /* the file is whole, but the capture failed */
	if (r.stat && print_stat(&r, &st) < 0) {
		cli__err(CMD, "writing the numbers failed");
		goto out;
	}
	if (r.perfetto && export_perfetto(&r) < 0)
		goto out;
	status = r.child_done ? capture__exit_status(r.wstatus) : EXIT_OK;
out:
	ctxmon_record_close(r.w);
	/* what a started capture wrote stays readable as PATH.part */
	if (r.of.o)
		ctxmon_outfile_discard(r.of.o, started);
	ctxmon_account_free(r.a);
	ctxmon_session_close(r.s);
	capture__free(&r.cap);
	return status;
}
