/*
 * live.c - the options and set-up that every capturing subcommand
 * shares: target selection, backend choice, signals, starting a session
 * and turning its failures into one line and the right exit status.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctxmon/cgroup.h>

#include "cli/cli.h"
#include "cli/recording.h"
#include "cli/opts.h"
#include "cli/cmd_top.h"
#include "output/output.h"

volatile sig_atomic_t cli_signal;
volatile sig_atomic_t cli_nsignals;

static void on_signal(int sig)
{
	cli_signal = sig;
	cli_nsignals++;
}

void cli__signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli__err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "ctxmon %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A finite number in [0, @max], 0 itself only if @zero. */
static int parse_real(const char *s, bool zero, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 ||
	    (v == 0 && !zero) || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli__parse_double(const char *s, double *out)
{
	return parse_real(s, false, HUGE_VAL, out);
}

int cli__parse_seconds(const char *s, bool zero, double *out)
{
	return parse_real(s, zero, CLI_MAX_SECONDS, out);
}

int cli__parse_kib(const char *s, unsigned long *kib)
{
	static const struct {
		const char *unit;
		unsigned long long bytes; /* 0: a page */
	} units[] = {
		{ "", 1024 },	  { "k", 1024 },      { "K", 1024 },
		{ "KiB", 1024 },  { "M", 1 << 20 },   { "MiB", 1 << 20 },
		{ "G", 1 << 30 }, { "GiB", 1 << 30 }, { "p", 0 },
		{ "pages", 0 },
	};
	unsigned long long n, bytes;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || n > 1ull << 40)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		bytes = units[i].bytes;
		if (!bytes) {
			long page = sysconf(_SC_PAGESIZE);

			if (page <= 0)
				return -1;
			bytes = (unsigned long long)page;
		}
		/* no product past 2^62; a size that is not whole KiB (3p
		 * of 512-byte pages) is refused rather than rounded */
		if (n > (1ull << 62) / bytes || (n * bytes) % 1024)
			return -1;
		*kib = (unsigned long)(n * bytes / 1024);
		return 0;
	}
	return -1;
}

pid_t cli__tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

int cli__parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (*s == '-')
		return -1;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int cli__recording_arg(const char *cmd, int argc, char **argv,
		       const char **path)
{
	if (optind < argc) {
		if (optind + 1 < argc || *path) {
			cli__err(cmd, "one recording at a time; see --help");
			return -1;
		}
		*path = argv[optind];
	}
	if (!*path)
		*path = DEFAULT_RECORDING;
	return 0;
}

int cli__each(const char *list, int (*fn)(const char *item, void *ctx),
	      void *ctx)
{
	char *copy = strdup(list), *save = NULL;
	int n = 0;

	if (!copy)
		return -1;
	for (char *t = strtok_r(copy, ",", &save); t;
	     t = strtok_r(NULL, ",", &save), n++) {
		if (fn(t, ctx)) {
			n = -1;
			break;
		}
	}
	free(copy);
	return n;
}

struct numbers {
	const char *cmd, *what;
	unsigned long max;
	bool zero_ok;
	pid_t **v;
	size_t *n;
};

static int one_number(const char *item, void *ctx)
{
	struct numbers *nb = ctx;
	unsigned long x;
	pid_t *p;

	if (cli__parse_uint(item, nb->max, &x) < 0 || (!x && !nb->zero_ok)) {
		cli__err(nb->cmd, "bad %s '%s': expected numbers%s up to %lu, "
				  "comma-separated (e.g. %s)",
			 nb->what, item, nb->zero_ok ? "" : " from 1", nb->max,
			 nb->zero_ok ? "0,2" : "1234,5678");
		return -1;
	}
	p = realloc(*nb->v, (*nb->n + 1) * sizeof(*p));
	if (!p) {
		cli__err(nb->cmd, "out of memory");
		return -1;
	}
	*nb->v = p;
	(*nb->v)[(*nb->n)++] = (pid_t)x;
	return 0;
}

int cli__parse_numbers(const char *cmd, const char *what, const char *arg,
		       unsigned long max, bool zero_ok, pid_t **v, size_t *n)
{
	struct numbers nb = { cmd, what, max, zero_ok, v, n };
	int k = cli__each(arg, one_number, &nb);

	if (k == 0)
		cli__err(cmd, "empty %s list", what);
	return k > 0 ? 0 : -1;
}

int cli__parse_cpu_set(const char *cmd, const char *arg, bool **set,
		       size_t *nset)
{
	pid_t *cpus = NULL;
	size_t n = 0;
	int ret = cli__parse_numbers(cmd, "cpu", arg, 65535, true, &cpus, &n);

	for (size_t i = 0; !ret && i < n; i++) {
		size_t c = (size_t)cpus[i];

		if (c >= *nset) {
			bool *s = realloc(*set, (c + 1) * sizeof(*s));

			if (!s) {
				cli__err(cmd, "out of memory");
				ret = -1;
				break;
			}
			memset(s + *nset, 0, (c + 1 - *nset) * sizeof(*s));
			*set = s;
			*nset = c + 1;
		}
		(*set)[c] = true;
	}
	free(cpus);
	return ret;
}

int capture__opt(const char *cmd, struct capture_opts *c, int opt,
		 const char *arg)
{
	unsigned long v;

	switch (opt) {
	case 'a':
		c->all = true;
		return 1;
	case 'p':
	case 't':
		if (c->npids && c->target != (opt == 'p' ? CTXMON_TARGET_PIDS :
							   CTXMON_TARGET_TIDS)) {
			cli__err(cmd, "-p and -t cannot be combined");
			return -1;
		}
		c->target = opt == 'p' ? CTXMON_TARGET_PIDS : CTXMON_TARGET_TIDS;
		return cli__parse_numbers(cmd, opt == 'p' ? "pid" : "tid", arg,
					  0x7fffffff, false, &c->pids,
					  &c->npids) < 0 ? -1 : 1;
	case 'm':
		if (cli__parse_kib(arg, &v) < 0 || v < 4 || v > 4u << 20) {
			cli__err(cmd, "bad buffer size '%s': give KiB per CPU "
				      "(4 to 4194304) or a size with a unit, "
				      "e.g. 512K, 4M, 1G, 64p (pages)", arg);
			return -1;
		}
		c->buffer_kb = (unsigned)v;
		return 1;
	case 'v':
		c->verbose++;
		return 1;
	case CAP_OPT_BACKEND:
		c->backend = arg;
		return 1;
	case CAP_OPT_MOUNT:
		c->mount_tracefs = true;
		return 1;
	case CAP_OPT_TRACEFS:
		c->tracefs = arg;
		return 1;
	case CAP_OPT_CGROUP:
		if (c->cgroup) {
			cli__err(cmd, "one --cgroup per capture (give their "
				      "common parent)");
			return -1;
		}
		c->cgroup = arg;
		return 1;
	case CAP_OPT_NICE:
		if (capture__parse_nice(cmd, arg, &c->nice) < 0)
			return -1;
		c->nice_set = true;
		return 1;
	case CAP_OPT_REALTIME:
		return capture__parse_realtime(cmd, arg, &c->realtime) < 0 ? -1 :
									   1;
	case 'd':
	case CAP_OPT_DURATION:
		if (cli__parse_seconds(arg, false, &c->duration_s) < 0) {
			cli__err(cmd, "bad duration '%s': give seconds up to "
				      "1e9, e.g. --duration 2.5", arg);
			return -1;
		}
		return 1;
	}
	return 0;
}

int capture__getopt(const char *cmd, const struct cli_doc *d,
		    struct capture_opts *c, int argc, char **argv)
{
	int opt, ret;

	while ((opt = cli__getopt(d, argc, argv)) != -1) {
		ret = capture__opt(cmd, c, opt, optarg);
		if (ret < 0)
			return CAPTURE_OPT_ERROR;
		if (ret == 0)
			return opt;
	}
	return -1;
}

int capture__check_ids(const char *cmd, const pid_t *ids, size_t n,
			bool threads)
{
	for (size_t i = 0; i < n; i++) {
		pid_t tgid = cli__tgid_of(ids[i]);

		if (tgid < 0) {
			cli__err(cmd, "no such %s: %d",
				 threads ? "thread" : "process", ids[i]);
			return -1;
		}
		/* /proc shows a thread under its tid too, but a process
		 * filter never matches it: the capture would be empty */
		if (!threads && tgid != ids[i]) {
			cli__err(cmd, "%d is a thread of process %d: give -p %d "
				      "for the process or -t %d for the thread",
				 ids[i], tgid, tgid, ids[i]);
			return -1;
		}
	}
	return 0;
}

int capture__finish(const char *cmd, struct capture_opts *c, int argc,
		    char **argv)
{
	if (optind < argc)
		c->argv = argv + optind;
	if (c->all && c->npids) {
		cli__err(cmd, "-a cannot be combined with -p or -t");
		return -1;
	}
	if (c->npids && c->argv) {
		cli__err(cmd, "give either -p/-t or a command, not both");
		return -1;
	}
	if (c->cgroup && c->argv) {
		cli__err(cmd, "--cgroup watches a cgroup's tasks, not a command "
			      "(which would run in ctxmon's cgroup); start the "
			      "command in the cgroup and use --cgroup alone");
		return -1;
	}
	if (c->cgroup && !c->npids) {
		/* the cgroup's processes now, and their children, are the
		 * targets: a streaming backend also shows the other side of
		 * their switches, which must not become rows */
		char err[512];

		if (ctxmon_cgroup_pids(c->cgroup, &c->pids, &c->npids, err,
				       sizeof(err)) < 0) {
			cli__err(cmd, "%s", err);
			return -1;
		}
		if (!c->npids) {
			cli__err(cmd, "cgroup %s has no process to watch",
				 c->cgroup);
			return -1;
		}
		c->all = false;
		c->target = CTXMON_TARGET_PIDS;
		return 0;
	}
	if (c->all)
		c->target = CTXMON_TARGET_ALL;
	else if (c->argv)
		c->target = CTXMON_TARGET_CMD;
	else if (!c->npids && !c->duration_s) {
		cli__err(cmd, "nothing to watch: give a command (-- CMD), -p PID, "
			      "-t TID or -a; see --help");
		return -1;
	} else if (!c->npids) {
		/* say so: a forgotten -p must not pass for a measurement */
		cli__err(cmd, "no -p, -t or command given: capturing the whole "
			      "machine, as with -a");
		c->target = CTXMON_TARGET_ALL;
	}
	return capture__check_ids(cmd, c->pids, c->npids,
				  c->target == CTXMON_TARGET_TIDS);
}

int capture__input(const char *cmd, const struct capture_opts *c,
		   bool selects)
{
	const char *opt = c->backend		? "--backend" :
			  c->buffer_kb		? "-m/--buffer-size" :
			  c->tracefs		? "--tracefs" :
			  c->mount_tracefs	? "--mount-tracefs" :
			  c->duration_s		? "--duration" :
			  c->cgroup		? "--cgroup" :
			  c->nice_set		? "--nice" :
			  c->realtime		? "--realtime" :
			  !selects && c->npids	? "-p/-t" : NULL;

	if (!opt)
		return 0;
	cli__err(cmd, "%s is for a live capture and does nothing to a "
		      "recording (-i): drop it%s", opt,
		 opt[1] == 'p' ? "; a trigger's filter selects tasks ('if "
				 "common_pid == N')" : "");
	return -1;
}

void capture__account_opts(const struct capture_opts *c,
			   struct ctxmon_session *s,
			   struct ctxmon_account_opts *ao)
{
	unsigned caps = ctxmon_session_caps(s);

	memset(ao, 0, sizeof(*ao));
	ao->sz = sizeof(*ao);
	ao->target = c->target;
	ao->pids = c->pids;
	ao->npids = c->npids;
	ao->root_pid = ctxmon_session_child(s);
	/* a long -a run on a forking machine stays small; a command's rows
	 * all reach the rusage model (cmd_report.c says why) */
	ao->exited_keep = c->target == CTXMON_TARGET_CMD ? 0 :
							  CTXMON_EXITED_KEEP;
	ao->no_wakeups = !(caps & CTXMON_CAP_WAKEUPS);
	ao->flags = kcmp__account_flags(caps, kcmp__caps_marks(caps));
}

void capture__free(struct capture_opts *c)
{
	free(c->pids);
	c->pids = NULL;
}

void capture__session_opts(const struct capture_opts *c,
			   struct ctxmon_session_opts *o)
{
	*o = (struct ctxmon_session_opts){
		.sz = sizeof(*o),
		.target = c->target,
		.pids = c->pids,
		.npids = c->npids,
		.argv = c->argv,
		.backend = c->backend,
		.events = c->events,
		.buffer_kb = c->buffer_kb,
		.tracefs = c->tracefs,
		.mount_tracefs = c->mount_tracefs,
		.verbose = c->verbose,
		.cgroup = c->cgroup,
	};
}

int capture__parse_nice(const char *cmd, const char *arg, int *nice)
{
	char *end;
	long n = strtol(arg, &end, 10);

	if (!*arg || *end || n < -20 || n > 19) {
		cli__err(cmd, "bad nice value '%s': give -20 to 19, e.g. "
			      "--nice -10", arg);
		return -1;
	}
	*nice = (int)n;
	return 0;
}

bool capture__reader_nice(bool set, int nice, int *want, int *cur)
{
	errno = 0;
	*cur = getpriority(PRIO_PROCESS, 0);
	if (errno || (!set && *cur != 0))
		return false;
	*want = set ? nice : READER_NICE;
	return *want != *cur;
}

int capture__parse_realtime(const char *cmd, const char *arg, int *prio)
{
	unsigned long v;

	if (cli__parse_uint(arg, 99, &v) < 0 || v < 1) {
		cli__err(cmd, "bad real-time priority '%s': give 1 to 99, e.g. "
			      "--realtime 99", arg);
		return -1;
	}
	*prio = (int)v;
	return 0;
}

static void realtime_refused(const char *cmd, int prio, int err)
{
	cli__err(cmd, "cannot read at real-time priority %d: %s (it needs "
		      "CAP_SYS_NICE, and an RLIMIT_RTPRIO or cgroup that "
		      "allows it); reading at a nice value",
		 prio, strerror(err));
}

/* SCHED_FIFO at @prio for the calling thread (who 0 is the thread on
 * Linux), reset on fork so that nothing it starts later inherits it. */
static int fifo_on(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp);
}

bool capture__realtime_allowed(const char *cmd, int prio)
{
	struct sched_param old;
	int pol = sched_getscheduler(0);

	if (pol < 0 || sched_getparam(0, &old) < 0 || fifo_on(prio) < 0) {
		realtime_refused(cmd, prio, errno);
		return false;
	}
	sched_setscheduler(0, pol, &old);
	return true;
}

bool capture__reader_realtime(const char *cmd, int prio, bool verbose)
{
	if (fifo_on(prio) < 0) {
		realtime_refused(cmd, prio, errno);
		return false;
	}
	if (verbose)
		fprintf(stderr, "reader: SCHED_FIFO %d, the command at its "
				"own policy\n",
			prio);
	return true;
}

/*
 * Give the thread that reads a stream @c's real-time priority if asked,
 * else @c's nice value, or READER_NICE when none was asked for and it runs
 * at 0 (a nice set by the user is kept).  After the command started: it
 * keeps its own.  Per thread on Linux (who 0: the calling thread), so
 * other threads keep theirs.
 */
static void reader_priority(const char *cmd, const struct capture_opts *c,
			    struct ctxmon_session *s)
{
	int want, cur;

	if (!(ctxmon_session_caps(s) & CTXMON_CAP_EVENTS)) {
		/* counted in the kernel: nothing to keep up with */
		if (c->realtime && c->verbose)
			fprintf(stderr, "reader: --realtime left unused: the %s "
					"backend reads no stream\n",
				ctxmon_session_backend(s));
		return;
	}
	if (c->realtime && capture__reader_realtime(cmd, c->realtime,
						    c->verbose))
		return;
	if (!capture__reader_nice(c->nice_set, c->nice, &want, &cur))
		return;
	if (setpriority(PRIO_PROCESS, 0, want) < 0) {
		if (c->nice_set)
			cli__err(cmd, "cannot set nice %d: %s (it needs "
				      "CAP_SYS_NICE); reading at nice %d",
				 want, strerror(errno), cur);
		else if (c->verbose)
			fprintf(stderr, "reader: left at nice %d (nice %d: "
					"%s)\n",
				cur, want, strerror(errno));
		return;
	}
	if (c->verbose)
		fprintf(stderr, "reader: nice %d, the command at %d\n", want,
			cur);
}

struct ctxmon_session *capture__start(const char *cmd,
				      const struct capture_opts *c, int *status)
{
	return capture__start_prefer(cmd, c, NULL, status);
}

struct ctxmon_session *capture__start_prefer(const char *cmd,
					     const struct capture_opts *c,
					     const char *prefer, int *status)
{
	struct ctxmon_session_opts o;
	struct ctxmon_session *s = NULL;
	char why[512] = "";
	const char *log;
	int ret;

	capture__session_opts(c, &o);
	*status = EXIT_FAIL;
	if (prefer && !c->backend) {
		/* The preferred backend is tried quietly: where it does not
		 * load, the usual choice follows, and -v says why. */
		o.backend = prefer;
		s = ctxmon_session_open(&o);
		if (!s) {
			snprintf(why, sizeof(why), "%s not used: %s", prefer,
				 ctxmon_last_error());
			if (c->verbose)
				fprintf(stderr, "backend: %s\n", why);
		}
		o.backend = c->backend;
	}
	if (!s)
		s = ctxmon_session_open(&o);
	if (!s) {
		cli__err(cmd, "%s", ctxmon_last_error());
		return NULL;
	}
	if (c->need_events && !(ctxmon_session_caps(s) & CTXMON_CAP_EVENTS)) {
		const char *b = ctxmon_session_backend(s);
		bool asked = c->backend && strcmp(c->backend, "auto");

		cli__err(cmd, "%s needs the event stream, and the %s backend "
			      "gives none (it %s): %s",
			 c->need_events, b,
			 ctxmon_session_caps(s) & CTXMON_CAP_SAMPLED ?
				 "samples /proc" :
				 "counts in the kernel",
			 asked ? "use --backend bpf, perf or ftrace, or leave "
				 "--backend out" :
				 "no backend that streams loads here; "
				 "'ctxmon doctor' says why");
		if (asked)
			*status = EXIT_USAGE;
		ctxmon_session_close(s);
		return NULL;
	}
	log = ctxmon_session_log(s);
	if (c->verbose && prefer && !c->backend && !why[0])
		fprintf(stderr, "backend: chose %s, %s's preference where it "
				"loads (else auto's choice)\n", prefer, cmd);
	if (c->verbose) {
		fprintf(stderr, "%s", log);
	} else if (!c->backend || !strcmp(c->backend, "auto")) {
		/* A fallback is said in one line; the unprivileged tiers say
		 * more (tier__announce). */
		const char *nu = strstr(log, " not used: ");

		while (!why[0] && nu && nu > log && nu[-1] != '\n')
			nu--;
		if (!why[0] && nu && !strncmp(nu, "backend: ", 9))
			snprintf(why, sizeof(why), "%.*s",
				 (int)strcspn(nu + 9, "\n"), nu + 9);
		if (why[0] && !tier__limits(s))
			cli__err(cmd, "using the %s backend: %s",
				 ctxmon_session_backend(s), why);
	}
	ret = ctxmon_session_start(s);
	if (ret < 0) {
		cli__err(cmd, "%s", ctxmon_session_error(s));
		if (c->argv)
			*status = ret == -ENOENT ? 127 : 126;
		ctxmon_session_close(s);
		return NULL;
	}
	reader_priority(cmd, c, s);
	return s;
}

static int seed_one(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	return ctxmon_account_add_task(ctx, tid, tgid, comm) < 0 ? -ENOMEM : 0;
}

int capture__scan(const struct capture_opts *c, ctxmon_task_fn fn, void *ctx)
{
	int ret = 0;

	if (c->target == CTXMON_TARGET_CMD)
		return 0;
	if (c->target == CTXMON_TARGET_ALL)
		return ctxmon_proc_scan(0, fn, ctx);
	for (size_t i = 0; i < c->npids && ret >= 0; i++) {
		pid_t p = c->pids[i];

		/* For -t, /proc/TID/status names the process. */
		if (c->target == CTXMON_TARGET_TIDS) {
			pid_t tgid = cli__tgid_of(p);

			if (tgid > 0)
				p = tgid;
		}
		ret = ctxmon_proc_scan(p, fn, ctx);
		if (ret == -ESRCH)
			ret = 0; /* exited meanwhile: nothing to tell */
	}
	return ret < 0 ? ret : 0;
}

int capture__seed(const char *cmd, const struct capture_opts *c,
		  struct ctxmon_account *a)
{
	int ret = capture__scan(c, seed_one, a);

	if (ret < 0) {
		cli__err(cmd, "reading /proc: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/* True while at least one -p/-t target still exists. */
static bool targets_alive(const struct capture_opts *c)
{
	for (size_t i = 0; i < c->npids; i++)
		if (kill(c->pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* How long after a tick (capture_loop.due) the loop wakes: the stream's
 * reading slack (STREAM_SLACK_NS, 10 ms), after which every event up to
 * the tick has been delivered, and a millisecond. */
#define TICK_LATE_NS 11000000ull

int capture__loop(const char *cmd, struct capture_loop *l)
{
	const struct capture_opts *c = l->cap;
	pid_t child = ctxmon_session_child(l->s);
	uint64_t deadline = c->duration_s ?
		l->start_ts + (uint64_t)(c->duration_s * 1e9) : 0;
	bool forwarded = false;
	int ret, t;

	for (;;) {
		int wait_ms = 100;

		if (l->due) {
			uint64_t at = *l->due + TICK_LATE_NS,
				 now = ctxmon_clock_ns();

			if (at <= now)
				wait_ms = 0;
			else if (at - now < 100000000ull)
				wait_ms = (int)((at - now + 999999) / 1000000);
		}
		ret = ctxmon_session_poll(l->s, wait_ms, l->fn, l->ctx);
		/* the command's own failure (a write error...) first: a
		 * callback's return is its, not the session's */
		if (l->tick && (t = l->tick(l->ctx)) != 0)
			return t;
		if (ret < 0 && ret != -EINTR) {
			cli__err(cmd, "%s", ctxmon_session_error(l->s));
			return ret;
		}
		if (cli_signal) {
			if (child > 0 && !l->child_done && !forwarded) {
				kill(child, cli_signal);
				forwarded = true;
				cli_signal = 0;
			} else {
				return 0;
			}
		}
		if (child > 0 && !l->child_done &&
		    ctxmon_session_reap_child(l->s, false, &l->wstatus,
					      &l->ru) == 1) {
			l->child_done = true;
			/* Let the last switch-outs of its threads land. */
			usleep(10000);
			return 0;
		}
		if (deadline && ctxmon_clock_ns() >= deadline)
			return 0;
		if (c->npids && !targets_alive(c)) {
			if (c->verbose)
				fprintf(stderr, "ctxmon %s: every target has "
						"exited\n", cmd);
			return 0;
		}
	}
}

uint64_t capture__ru_cpu_ns(const struct rusage *ru)
{
	return (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) *
		       1000000000ull +
	       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000;
}

int capture__exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return EXIT_FAIL;
}
