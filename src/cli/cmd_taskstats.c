/*
 * cmd_taskstats.c - `ctxmon taskstats`: the kernel's own counters of tasks over
 * taskstats, as seed 004's getcsw reads them: the voluntary and involuntary
 * switches of given tasks now, or (--exit-watch) the final counters of
 * every task as it exits, optionally of a command run for the purpose and
 * then compared with the getrusage() of that command.
 *
 * The kernel takes a task's exit record early in do_exit(), before the
 * task's last switch-out: for a process leader that one switch reaches
 * getrusage (the parent reaps the leader after it), so the records of a
 * command's tasks plus one voluntary switch per process give its rusage.
 * Anything the exiting task does after the record (blocking while its
 * memory or files are torn down) shows as a remainder, said so.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/taskstats.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "output/json_out.h"
#include "output/output.h"

static const char *const CMD = "taskstats";

enum { OPT_JSON = 0x100, OPT_DURATION };

/* A process leader's counters after its last switch-out, read from its
 * zombie before its parent reaped it. */
struct final {
	bool have;
	uint64_t vol, invol;
};

struct ts_run {
	bool process, json;
	const char *watch; /* --exit-watch CPUS */
	double duration_s;
	char **argv; /* command to run, or NULL */
	pid_t *pids;
	size_t npids;
	struct ctxmon_taskstats *recs; /* exit records kept for a command */
	size_t nrecs, caprecs;
	bool head_done;
	int werr;
	struct ctxmon_taskstats last; /* the record printed last */
	struct final *fin; /* per kept record: read from the zombie */
};

static const struct cli_opt taskstats_opts[] = {
	{ "per-process", 'P', 'P', NULL,
	  "PIDs are processes: the sum of their live threads (the kernel keeps "
	  "no switch counts of dead ones)" },
	CLI_ALIAS("process", 'P', NULL, "per-process"),
	{ "exit-watch", 'w', 'w', "CPUS",
	  "print each task's final counters as it exits on CPUS (\"0-3,8\" or "
	  "\"all\"); with a command, only its tasks, compared at the end with "
	  "its getrusage; a \"final\" row: a leader's counters read from its "
	  "zombie, after its last switch-out" },
	{ "duration", 0, OPT_DURATION, "SEC", "stop watching after SEC seconds" },
	{ "json", 0, OPT_JSON, NULL, "one JSON object per task and line" },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL },
};

const struct cli_doc taskstats_doc = {
	.name = "taskstats",
	.args = "[-P] [--json] PID [PID...]\n"
		"       ctxmon taskstats --exit-watch CPUS [--json] "
		"[--duration SEC] [-- CMD [ARGS]]",
	.description =
		"The kernel's own per-task counters over taskstats (generic netlink):\n"
		"voluntary and involuntary context switches, user and system time, and\n"
		"with delay accounting the time spent runnable waiting for a CPU.",
	.groups = (const struct cli_optgroup[]){
		{ "options", taskstats_opts },
		{ NULL },
	},
	.examples = (const struct cli_example[]){
		{ "taskstats 1234 1240", "two threads, now" },
		{ "taskstats -P 1234", "process 1234's live threads summed" },
		{ "taskstats -w all", "every exit on the machine until Ctrl-C" },
		{ "taskstats -w all -- make", "the final counters of make's tasks" },
		{ NULL },
	},
	.notes = "Needs CAP_NET_ADMIN (the kernel's rule for taskstats).",
	.stop_at_operand = true,
};

static void help(void)
{
	cli__help(stdout, &taskstats_doc);
}

static int parse(struct ts_run *r, int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&taskstats_doc, argc, argv)) != -1) {
		switch (opt) {
		case 'P':
			r->process = true;
			break;
		case 'w':
			r->watch = optarg;
			break;
		case OPT_DURATION:
			if (cli__parse_seconds(optarg, false,
					       &r->duration_s) < 0) {
				cli__err(CMD, "bad duration '%s': give seconds "
					      "up to 1e9", optarg);
				return -1;
			}
			break;
		case OPT_JSON:
			r->json = true;
			break;
		case 'h':
			help();
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon taskstats --help'.\n");
			return -1;
		}
	}
	if (r->watch) {
		if (optind < argc)
			r->argv = argv + optind;
		return 0;
	}
	if (optind >= argc) {
		cli__err(CMD, "give PIDs, or --exit-watch CPUS; see --help");
		return -1;
	}
	r->pids = calloc((size_t)(argc - optind), sizeof(*r->pids));
	if (!r->pids)
		return -1;
	for (int i = optind; i < argc; i++) {
		unsigned long v;

		if (cli__parse_uint(argv[i], 0x7fffffff, &v) < 0 || !v) {
			cli__err(CMD, "bad pid '%s'", argv[i]);
			return -1;
		}
		r->pids[r->npids++] = (pid_t)v;
	}
	return 0;
}

static void print_head(struct ts_run *r)
{
	if (r->json || r->head_done)
		return;
	printf("%-5s %8s %8s %8s %-16s %10s %11s %9s %9s %9s %8s\n", "", "PID",
	       "TGID", "PPID", "COMM", "VOLUNTARY", "INVOLUNTARY", "USER",
	       "SYS", "CPU-WAIT", "WAITS");
	r->head_done = true;
}

/* One record; @f: the task's final counters, caught from its zombie, or
 * NULL. */
static void print_one(struct ts_run *r, const struct ctxmon_taskstats *in,
		      const struct final *f)
{
	struct ctxmon_taskstats tc = *in;
	const struct ctxmon_taskstats *t = &tc;
	char u[16], s[16], w[16];

	/* a process total comes without a name: its leader's, if known */
	if (tc.process && !tc.comm[0]) {
		char path[64];
		FILE *fp;

		if (r->last.pid == tc.pid && !r->last.process) {
			memcpy(tc.comm, r->last.comm, sizeof(tc.comm));
		} else if (!tc.exit) {
			snprintf(path, sizeof(path), "/proc/%d/comm", tc.pid);
			fp = fopen(path, "re");
			if (fp) {
				if (fgets(tc.comm, sizeof(tc.comm), fp))
					tc.comm[strcspn(tc.comm, "\n")] = '\0';
				fclose(fp);
			}
		}
		if (!tc.ppid && !r->last.process && r->last.pid == tc.pid)
			tc.ppid = r->last.ppid;
	}
	r->last = tc;

	if (r->json) {
		printf("{" CTXMON_JSON_SCHEMA ",\"kind\":\"%s\",\"process\":%s,"
		       "\"pid\":",
		       t->exit ? "exit" : "now", t->process ? "true" : "false");
		json__put_id(stdout, t->pid);
		fputs(",\"tgid\":", stdout);
		json__put_id(stdout, t->tgid);
		fputs(",\"ppid\":", stdout);
		json__put_id(stdout, t->ppid);
		fputs(",\"comm\":", stdout);
		json__put_str(stdout, t->comm);
		printf(",\"version\":%u,\"size\":%u", t->version, t->size);
		if (t->have & CTXMON_TS_CSW)
			printf(",\"voluntary\":%" PRIu64
			       ",\"involuntary\":%" PRIu64,
			       t->nvcsw, t->nivcsw);
		if (t->have & CTXMON_TS_BASIC)
			printf(",\"utime_us\":%" PRIu64 ",\"stime_us\":%" PRIu64
			       ",\"elapsed_us\":%" PRIu64,
			       t->utime_us, t->stime_us, t->elapsed_us);
		if (t->have & CTXMON_TS_DELAY)
			printf(",\"cpu_delay_ns\":%" PRIu64
			       ",\"cpu_delay_count\":%" PRIu64
			       ",\"cpu_run_ns\":%" PRIu64,
			       t->cpu_delay_ns, t->cpu_count, t->cpu_run_ns);
		if (t->exit)
			printf(",\"exitcode\":%u", t->exitcode);
		if (f && f->have)
			printf(",\"final_voluntary\":%" PRIu64
			       ",\"final_involuntary\":%" PRIu64,
			       f->vol, f->invol);
		printf("}\n");
	} else {
		print_head(r);
		printf("%-5s %8d %8d %8d %-16.16s %10" PRIu64 " %11" PRIu64
		       " %9s %9s %9s %8" PRIu64 "\n",
		       t->exit ? (t->process ? "exitP" : "exit") :
				 (t->process ? "proc" : "task"),
		       t->pid, t->tgid, t->ppid, t->comm[0] ? t->comm : "?",
		       t->nvcsw, t->nivcsw,
		       output__dur(u, sizeof(u), t->utime_us * 1000),
		       output__dur(s, sizeof(s), t->stime_us * 1000),
		       t->have & CTXMON_TS_DELAY ?
			       output__dur(w, sizeof(w), t->cpu_delay_ns) :
			       "-",
		       t->cpu_count);
		if (f && f->have)
			printf("%-5s %8d %8d %8d %-16.16s %10" PRIu64
			       " %11" PRIu64 "\n",
			       "final", t->pid, t->tgid, t->ppid,
			       t->comm[0] ? t->comm : "?", f->vol, f->invol);
	}
	if (fflush(stdout) == EOF && !r->werr)
		r->werr = -errno;
}

static const char *perm_hint(int err)
{
	return err == -EPERM || err == -EACCES ?
		       " (taskstats needs CAP_NET_ADMIN: run as root)" :
		       "";
}

static int run_get(struct ts_run *r, struct ctxmon_taskstats_conn *c)
{
	int status = EXIT_OK;

	for (size_t i = 0; i < r->npids; i++) {
		struct ctxmon_taskstats t;
		int ret = ctxmon_taskstats_get(c, r->pids[i], r->process, &t);

		if (ret < 0) {
			cli__err(CMD, "%s %d: %s%s",
				 r->process ? "process" : "task", r->pids[i],
				 ret == -ESRCH ? "no such task" :
						 strerror(-ret),
				 perm_hint(ret));
			status = EXIT_FAIL;
			continue;
		}
		print_one(r, &t, NULL);
	}
	return status;
}

/* "all": the CPUs online now, as the kernel lists them. */
static int cpu_list(const char *arg, char *buf, size_t len)
{
	int fd;
	ssize_t n;

	if (strcmp(arg, "all")) {
		snprintf(buf, len, "%s", arg);
		return 0;
	}
	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The counters of zombie @pid, child of @ppid, once it has made its last
 * switch-out (more voluntary switches than its exit record's @nvcsw):
 * 1 with @f filled, 0 not yet, -1 gone or not that zombie.
 */
static int zombie_counts(pid_t pid, pid_t ppid, uint64_t nvcsw,
			 struct final *f)
{
	char path[64], line[256], state = 0;
	unsigned long long v;
	int got = 0, pp = -1;
	FILE *file;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	file = fopen(path, "re");
	if (!file)
		return -1;
	while (fgets(line, sizeof(line), file)) {
		if (sscanf(line, "State: %c", &state) == 1 ||
		    sscanf(line, "PPid: %d", &pp) == 1)
			continue;
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
			f->vol = v;
			got++;
		} else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu",
				  &v) == 1) {
			f->invol = v;
			got++;
		}
	}
	fclose(file);
	if (got != 2 || pp != ppid || (state != 'Z' && state != 'X'))
		return state ? 0 : -1; /* still exiting, or another task */
	if (f->vol <= nvcsw)
		return 0;
	f->have = true;
	return 1;
}

/*
 * A leader's exit record comes before its last switch-out, and it may
 * still be preempted in between; its parent's reap counts both.  Its
 * zombie shows them until then: poll it a little while (@us), and keep
 * the final counters if it is caught.
 */
static void catch_zombie(const struct ctxmon_taskstats *t, struct final *f,
			 unsigned us)
{
	for (unsigned waited = 0; waited <= us; waited += 100) {
		int ret = zombie_counts(t->pid, t->ppid, t->nvcsw, f);

		if (ret)
			return;
		usleep(100);
	}
}

static int on_exit_rec(const struct ctxmon_taskstats *t, void *ctx)
{
	struct ts_run *r = ctx;

	if (!r->argv) {
		print_one(r, t, NULL);
		return r->werr;
	}
	/* a command's tasks are known only once its tree is: kept */
	if (r->nrecs == r->caprecs) {
		size_t cap = r->caprecs ? r->caprecs * 2 : 64;
		struct ctxmon_taskstats *n = realloc(r->recs, cap * sizeof(*n));
		struct final *f;

		if (!n)
			return -ENOMEM;
		r->recs = n;
		f = realloc(r->fin, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		r->fin = f;
		r->caprecs = cap;
	}
	r->fin[r->nrecs] = (struct final){ 0 };
	/* a leader: its final counters while its parent has not reaped it
	 * (the command itself is ours, and waits for them when reaped) */
	if (!t->process && t->pid == t->tgid)
		catch_zombie(t, &r->fin[r->nrecs], 2000);
	r->recs[r->nrecs++] = *t;
	return 0;
}

static pid_t start_cmd(char **argv, int *go_fd)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "ctxmon taskstats: %s: %s\n", argv[0],
			strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		return -1;
	}
	*go_fd = go[1];
	return pid;
}

static pid_t rec_tgid(const struct ctxmon_taskstats *t)
{
	return t->process ? t->pid : t->tgid;
}

/*
 * The processes of @root's tree among the exit records: the command, and
 * those whose parent is in it, at any depth.  A byte per pid (NULL and
 * errno on failure): walked from the root through an index of the records
 * by parent, so a chain of thousands of vforks takes one pass, where a
 * search to a fixed point took a pass per level over every record (an
 * hour for stress-ng --vforkmany's 1.9 s).
 */
static unsigned char *tree_of(const struct ts_run *r, pid_t root,
			      pid_t *npid)
{
	pid_t top = root;
	size_t *first = NULL, *by_parent = NULL, nq = 0;
	pid_t *queue = NULL;
	unsigned char *in = NULL;

	for (size_t i = 0; i < r->nrecs; i++) {
		if (rec_tgid(&r->recs[i]) > top)
			top = rec_tgid(&r->recs[i]);
		if (r->recs[i].ppid > top)
			top = r->recs[i].ppid;
	}
	*npid = top + 1;
	in = calloc((size_t)top + 1, 1);
	first = calloc((size_t)top + 2, sizeof(*first));
	by_parent = malloc((r->nrecs + 1) * sizeof(*by_parent));
	queue = malloc((r->nrecs + 1) * sizeof(*queue));
	if (!in || !first || !by_parent || !queue || root <= 0)
		goto fail;
	/* records by their parent's pid: those of parent p are
	 * by_parent[first[p]..first[p + 1]) */
	for (size_t i = 0; i < r->nrecs; i++)
		if (r->recs[i].ppid > 0)
			first[r->recs[i].ppid + 1]++;
	for (pid_t p = 1; p <= top; p++)
		first[p + 1] += first[p];
	for (size_t i = 0; i < r->nrecs; i++)
		if (r->recs[i].ppid > 0)
			by_parent[first[r->recs[i].ppid]++] = i;
	for (pid_t p = top; p > 0; p--)
		first[p] = first[p - 1];
	first[0] = 0;
	in[root] = 1;
	queue[nq++] = root;
	for (size_t q = 0; q < nq; q++) {
		pid_t p = queue[q];

		for (size_t k = first[p]; k < first[p + 1]; k++) {
			pid_t tg = rec_tgid(&r->recs[by_parent[k]]);

			if (tg > 0 && !in[tg] && nq <= r->nrecs) {
				in[tg] = 1;
				queue[nq++] = tg;
			}
		}
	}
	free(first);
	free(by_parent);
	free(queue);
	return in;
fail:
	free(in);
	free(first);
	free(by_parent);
	free(queue);
	errno = ENOMEM;
	return NULL;
}

/* The command's exit records, then their sums against its rusage. */
static void report_cmd(struct ts_run *r, pid_t root, const struct rusage *ru)
{
	pid_t npid = 0;
	unsigned char *in = tree_of(r, root, &npid);
	uint64_t vol = 0, invol = 0, procs = 0, tasks = 0;
	uint64_t fvol = 0, finvol = 0, zombies = 0;

	if (!in) {
		r->werr = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < r->nrecs; i++) {
		const struct ctxmon_taskstats *t = &r->recs[i];
		pid_t tg = rec_tgid(t);

		if (tg <= 0 || tg >= npid || !in[tg])
			continue;
		print_one(r, t, &r->fin[i]);
		if (t->process)
			continue; /* its live threads again: not added */
		tasks++;
		vol += t->nvcsw;
		invol += t->nivcsw;
		procs += t->pid == t->tgid;
		if (r->fin[i].have) {
			fvol += r->fin[i].vol;
			finvol += r->fin[i].invol;
			zombies++;
		} else {
			/* a leader's last switch-out, which its parent's
			 * reap counts, comes after its record */
			fvol += t->nvcsw + (t->pid == t->tgid);
			finvol += t->nivcsw;
		}
	}
	if (r->json) {
		printf("{" CTXMON_JSON_SCHEMA ",\"kind\":\"summary\",\"pid\":%d,\"tasks\":%" PRIu64
		       ",\"processes\":%" PRIu64 ",\"voluntary\":%" PRIu64
		       ",\"involuntary\":%" PRIu64 ",\"final_voluntary\":%" PRIu64
		       ",\"final_involuntary\":%" PRIu64
		       ",\"from_zombie\":%" PRIu64 ",\"ru_nvcsw\":%ld"
		       ",\"ru_nivcsw\":%ld,\"dropped\":%s}\n",
		       root, tasks, procs, vol, invol, fvol, finvol,
		       zombies, ru->ru_nvcsw,
		       ru->ru_nivcsw, "null");
	} else {
		bool eq = fvol == (uint64_t)ru->ru_nvcsw &&
			  finvol == (uint64_t)ru->ru_nivcsw;

		printf("command %d: %" PRIu64 " tasks in %" PRIu64
		       " processes; exit records: voluntary %" PRIu64
		       ", involuntary %" PRIu64 "\n",
		       root, tasks, procs, vol, invol);
		printf("final counters: voluntary %" PRIu64 " %s %ld, "
		       "involuntary %" PRIu64 " %s %ld getrusage (%s)\n",
		       fvol, fvol == (uint64_t)ru->ru_nvcsw ? "=" : "!=",
		       ru->ru_nvcsw, finvol,
		       finvol == (uint64_t)ru->ru_nivcsw ? "=" : "!=",
		       ru->ru_nivcsw, eq ? "equal" : "differs");
		printf("  (%" PRIu64 " of %" PRIu64 " processes' final counters "
		       "read from their zombies before the reap; the others' "
		       "records + 1 for the last switch-out, which comes after "
		       "the record)\n",
		       zombies, procs);
		if (!eq)
			printf("  a task blocked or preempted after its exit "
			       "record reaches getrusage only\n");
	}
	free(in);
}

/* Whether the command has exited, without reaping it. */
static bool exited(pid_t child)
{
	siginfo_t si = { 0 };

	return waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT | WNOHANG) ==
		       0 &&
	       si.si_pid == child;
}

/*
 * Reap the exited command once it has left its CPU for the last time:
 * reaping at once would race that switch, which then never reaches the
 * rusage.  Without its record, wait a millisecond as the sessions do.
 */
static void reap_after_last_switch(struct ts_run *r, pid_t child,
				   int *wstatus, struct rusage *ru)
{
	size_t i;

	for (i = 0; i < r->nrecs; i++)
		if (!r->recs[i].process && r->recs[i].pid == child)
			break;
	if (i == r->nrecs)
		usleep(1000);
	else if (!r->fin[i].have)
		catch_zombie(&r->recs[i], &r->fin[i], 100000);
	while (wait4(child, wstatus, 0, ru) < 0 && errno == EINTR)
		;
}

static int run_watch(struct ts_run *r, struct ctxmon_taskstats_conn *c)
{
	uint64_t deadline =
		r->duration_s ?
			ctxmon_clock_ns() + (uint64_t)(r->duration_s * 1e9) :
			0;
	char cpus[256];
	struct rusage ru = { 0 };
	int ret, go = -1, wstatus = 0, status = EXIT_OK;
	pid_t child = -1;

	ret = cpu_list(r->watch, cpus, sizeof(cpus));
	if (ret == 0)
		ret = ctxmon_taskstats_watch(c, cpus);
	if (ret < 0) {
		cli__err(CMD, "cannot watch exits on CPUs '%s': %s%s", r->watch,
			 ret == -EINVAL ? "not a CPU list this kernel knows" :
			 ret == -ERANGE ? "a CPU past the last one this kernel "
					  "has (see /sys/devices/system/cpu/"
					  "possible, or say 'all')" :
					  strerror(-ret),
			 perm_hint(ret));
		return EXIT_FAIL;
	}
	if (r->argv) {
		child = start_cmd(r->argv, &go);
		if (child < 0) {
			cli__err(CMD, "cannot start %s: %s", r->argv[0],
				 strerror(errno));
			return EXIT_FAIL;
		}
		/* registered before it runs: none of its exits is missed */
		if (write(go, "g", 1) != 1)
			status = EXIT_FAIL;
		close(go);
	} else if (!r->json) {
		print_head(r);
	}
	while (!cli_signal && !r->werr) {
		ret = ctxmon_taskstats_read(c, 100, on_exit_rec, r);
		if (ret < 0 && ret != -EINTR) {
			cli__err(CMD, "reading exit records: %s",
				 strerror(-ret));
			status = EXIT_FAIL;
			break;
		}
		if (child > 0 && exited(child)) {
			/* every record of its tasks was sent before it could
			 * be reaped: take what is queued, then reap */
			ctxmon_taskstats_read(c, 0, on_exit_rec, r);
			reap_after_last_switch(r, child, &wstatus, &ru);
			report_cmd(r, child, &ru);
			status = capture__exit_status(wstatus);
			child = -1;
			break;
		}
		if (deadline && ctxmon_clock_ns() >= deadline)
			break;
	}
	if (child > 0) {
		kill(child, SIGTERM);
		waitpid(child, &wstatus, 0);
		status = capture__exit_status(wstatus);
	}
	if (ctxmon_taskstats_dropped(c))
		cli__err(CMD,
			 "the socket overflowed %" PRIu64 " times: exit "
			 "records were lost",
			 ctxmon_taskstats_dropped(c));
	return status;
}

int cmd_taskstats(int argc, char **argv)
{
	struct ts_run r = { 0 };
	struct ctxmon_taskstats_conn *c = NULL;
	int status = EXIT_FAIL, ret;

	ret = parse(&r, argc, argv);
	if (ret) {
		status = ret > 0 ? EXIT_OK : EXIT_USAGE;
		goto out;
	}
	cli__signals();
	c = ctxmon_taskstats_open();
	if (!c) {
		cli__err(CMD, "cannot open taskstats: %s%s",
			 errno == ENOENT ? "this kernel has no taskstats" :
					   strerror(errno),
			 perm_hint(-errno));
		goto out;
	}
	status = r.watch ? run_watch(&r, c) : run_get(&r, c);
	if (r.werr) {
		cli__err(CMD, "writing output: %s", strerror(-r.werr));
		status = EXIT_FAIL;
	}
out:
	ctxmon_taskstats_close(c);
	free(r.recs);
	free(r.fin);
	free(r.pids);
	return status;
}
