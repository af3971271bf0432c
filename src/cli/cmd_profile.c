/*
 * cmd_profile.c - `ctxmon profile`: a wall-clock profile of a command, of
 * processes or threads, or of the machine: on-CPU stacks from timer
 * samples, off-CPU stacks with their cause, and who woke them
 * (include/ctxmon/profile.h does the work; this parses, runs, writes).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/profile.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/cmd_profile.h"

static const char *const CMD = "profile";

enum {
	OPT_OFF_CPU = 0x100, OPT_WAKERS, OPT_FOLDED, OPT_SVG, OPT_PPROF,
	OPT_JSON, OPT_CALL_GRAPH, OPT_REALTIME,
};

static const char *call_graph_values(void)
{
	return "dwarf, fp";
}

static const struct cli_opt target_opts[] = {
	{ "all-cpus", 'a', 'a', NULL, "every thread of the machine" },
	CLI_ALIAS("all", 'a', NULL, "all-cpus"),
	{ "pid", 'p', 'p', "PID", "the process PID and the processes it forks "
				 "(repeatable)" },
	{ "tid", 't', 't', "TID", "the thread TID only (repeatable)" },
	{ "duration", 'd', 'd', "SEC",
	  "stop after SEC seconds (default: when the command ends, or at "
	  "Ctrl-C)" },
	{ NULL }
};

static const struct cli_opt profile_opts[] = {
	{ "freq", 'F', 'F', "HZ", "sample the CPUs' cpu-clock HZ times a "
				  "second (default 99)" },
	{ "off-cpu", 0, OPT_OFF_CPU, NULL,
	  "also the stacks of threads off CPU, with the cause as the leaf "
	  "frame: [blocked: SYSCALL], [runnable], [preempted by COMM/TID], "
	  "[yield]; on-CPU time is then each thread's exact run time (the "
	  "kernel's count), shared out among its sampled stacks" },
	{ "call-graph", 0, OPT_CALL_GRAPH, "HOW",
	  "user stacks: dwarf (default) copies 16 KiB of the stack per sample "
	  "and switch-out and unwinds it with the binaries' CFI (right without "
	  "frame pointers; deeper frames are cut, counted as truncated); fp "
	  "walks frame pointers in the kernel (nothing per sample to user "
	  "space; frameless functions hide their callers)", call_graph_values },
	CLI_OPT_REALTIME(OPT_REALTIME),
	{ "wakers", 0, OPT_WAKERS, NULL,
	  "join each off-CPU stack to the stack of the thread that woke it "
	  "(implies --off-cpu)" },
	{ NULL }
};

static const struct cli_opt output_opts[] = {
	{ "output", 'o', 'o', "FILE", "write the text output to FILE", NULL,
	  true },
	{ "folded", 0, OPT_FOLDED, NULL,
	  "folded stacks, 'comm;frame;...;frame us' (flamegraph.pl's input)" },
	{ "json", 0, OPT_JSON, NULL, "threads, stacks, wakers and losses as JSON" },
	{ "svg", 0, OPT_SVG, "FILE", "an interactive flame graph (click to "
				   "zoom, search) into FILE", NULL, true },
	{ "pprof", 0, OPT_PPROF, "FILE", "a gzipped pprof profile into FILE",
	  NULL, true },
	{ "help", 'h', 'h', NULL, "this help" },
	{ NULL }
};

const struct cli_doc profile_doc = {
	.name = "profile",
	.args = "[options] [-a | -p PID | -t TID | [--] CMD [ARGS]]",
	.description =
		"A wall-clock profile: where threads ran (kernel and user stacks of\n"
		"timer samples), where they waited off CPU and why, and who woke\n"
		"them.  Everything is summed in the kernel by BPF; values are\n"
		"microseconds, so per thread the on- and off-CPU stacks add up to the\n"
		"time it was watched.  User stacks are unwound with the binaries' CFI\n"
		"(.eh_frame) from a copy of the stack, so code built without frame\n"
		"pointers (Debian's) shows its callers; see docs/profile.md.",
	.groups = (const struct cli_optgroup[]){
		{ "target", target_opts },
		{ "profile", profile_opts },
		{ "output", output_opts },
		{ NULL } },
	.examples = (const struct cli_example[]){
		{ "profile --off-cpu -- ./myprog", "on- and off-CPU time of myprog" },
		{ "profile -a -d 10 --folded -o out.folded",
		  "the machine for 10 s, for flamegraph.pl" },
		{ "profile --off-cpu --svg fg.svg -p 1234 -d 5",
		  "a flame graph of process 1234" },
		{ "profile --wakers --folded -- ./server", "who wakes whom, and where" },
		{ NULL } },
	.stop_at_operand = true,
};

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

struct prof_run {
	struct ctxmon_profile_opts o;
	pid_t *ids;
	size_t n_ids;
	double duration_s;
	const char *outpath, *svg, *pprof;
	bool folded, json;
	int realtime;	/* --realtime: the reader's SCHED_FIFO priority */
	char **argv;
};

static int add_id(struct prof_run *r, const char *s, int kind)
{
	unsigned long v;
	pid_t *n;

	if (r->o.target && r->o.target != kind) {
		cli__err(CMD, "give processes (-p) or threads (-t), not both");
		return -1;
	}
	if (cli__parse_uint(s, 4194304, &v) < 0 || !v) {
		cli__err(CMD, "bad id '%s': give a positive number", s);
		return -1;
	}
	n = realloc(r->ids, (r->n_ids + 1) * sizeof(*n));
	if (!n)
		return -1;
	r->ids = n;
	r->ids[r->n_ids++] = (pid_t)v;
	r->o.target = kind;
	return 0;
}

static int parse(struct prof_run *r, int argc, char **argv)
{
	bool all = false;
	unsigned long v;
	int opt;

	optind = 1;
	while ((opt = cli__getopt(&profile_doc, argc, argv)) != -1) {
		switch (opt) {
		case 'a':
			all = true;
			break;
		case 'p':
			if (add_id(r, optarg, CTXMON_PROFILE_PROCS) < 0)
				return -1;
			break;
		case 't':
			if (add_id(r, optarg, CTXMON_PROFILE_THREADS) < 0)
				return -1;
			break;
		case 'd':
			if (cli__parse_seconds(optarg, false,
					       &r->duration_s) < 0) {
				cli__err(CMD, "bad duration '%s': give seconds "
					      "up to 1e9", optarg);
				return -1;
			}
			break;
		case 'F':
			if (cli__parse_uint(optarg, 100000, &v) < 0 || !v) {
				cli__err(CMD, "bad frequency '%s': give 1 to 100000 Hz",
					 optarg);
				return -1;
			}
			r->o.freq = (unsigned)v;
			break;
		case OPT_OFF_CPU:
			r->o.off_cpu = true;
			break;
		case OPT_CALL_GRAPH:
			if (!strcmp(optarg, "fp")) {
				r->o.fp_stacks = true;
			} else if (!strcmp(optarg, "dwarf")) {
				r->o.fp_stacks = false;
			} else {
				cli__err(CMD, "bad --call-graph '%s': give dwarf or fp",
					 optarg);
				return -1;
			}
			break;
		case OPT_WAKERS:
			r->o.wakers = r->o.off_cpu = true;
			break;
		case OPT_REALTIME:
			if (capture__parse_realtime(CMD, optarg,
						    &r->realtime) < 0)
				return -1;
			break;
		case 'o':
			r->outpath = optarg;
			break;
		case OPT_FOLDED:
			r->folded = true;
			break;
		case OPT_JSON:
			r->json = true;
			break;
		case OPT_SVG:
			r->svg = optarg;
			break;
		case OPT_PPROF:
			r->pprof = optarg;
			break;
		case 'h':
			cli__help(stdout, &profile_doc);
			return 1;
		default:
			fprintf(stderr, "Try 'ctxmon profile --help'.\n");
			return -1;
		}
	}
	if (r->folded && r->json) {
		cli__err(CMD, "--folded or --json, not both");
		return -1;
	}
	if (optind < argc)
		r->argv = &argv[optind];
	if ((all ? 1 : 0) + (r->n_ids ? 1 : 0) + (r->argv ? 1 : 0) != 1) {
		cli__err(CMD, "give one target: -a, -p PID, -t TID or a command "
			      "(see --help)");
		return -1;
	}
	return capture__check_ids(CMD, r->ids, r->n_ids,
				  r->o.target == CTXMON_PROFILE_THREADS);
}

/* Fork the command stopped on a pipe, so it is a target before it runs. */
/* The command, waiting for a byte on *go_fd to exec; *exec_fd reads the
 * errno of an exec that failed (EOF: it ran). */
static pid_t spawn(char **argv, int *go_fd, int *exec_fd)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe(go) < 0)
		return -1;
	if (pipe2(ex, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(ex[0]);
		close(ex[1]);
		return -1;
	}
	if (!pid) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "ctxmon profile: cannot run %s: %s\n", argv[0],
			strerror(e));
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	*go_fd = go[1];
	*exec_fd = ex[0];
	return pid;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static bool all_gone(const struct prof_run *r)
{
	for (size_t i = 0; i < r->n_ids; i++)
		if (!kill(r->ids[i], 0) || errno != ESRCH)
			return false;
	return true;
}

/* The outputs asked for, each all or nothing: none of them replaces its
 * file unless every one was written. */
static int write_outputs(const struct prof_run *r, struct ctxmon_profile *p)
{
	struct cli_out svg = { 0 }, pprof = { 0 }, out = { 0 };
	int err = 0, ret = -1;

	if (cli__out_open(CMD, &svg, r->svg, NULL, 0) < 0 ||
	    cli__out_open(CMD, &pprof, r->pprof, NULL, 0) < 0 ||
	    cli__out_open(CMD, &out, r->outpath, stdout, 0) < 0)
		goto out;
	if (svg.f)
		err = ctxmon_profile_write_svg(p, svg.f, "ctxmon profile");
	if (!err && pprof.f)
		err = ctxmon_profile_write_pprof(p, pprof.f);
	if (!err && r->folded)
		err = ctxmon_profile_write_folded(p, out.f);
	else if (!err && r->json)
		err = ctxmon_profile_write_json(p, out.f);
	else if (!err)
		err = ctxmon_profile_write_summary(p, out.f, 10);
	if (!err && !out.o && fflush(out.f))
		err = -errno;
	if (err) {
		struct cli_out *bad = svg.f && ferror(svg.f) ? &svg :
				      pprof.f && ferror(pprof.f) ? &pprof :
								     &out;

		cli__err(CMD, "writing %s: %s",
			 bad->path ? bad->path : "the output",
			 strerror(cli__out_errno(bad, err)));
		goto out;
	}
	if (cli__out_end(CMD, &svg, true) < 0 ||
	    cli__out_end(CMD, &pprof, true) < 0 ||
	    cli__out_end(CMD, &out, true) < 0)
		goto out;
	if (r->svg)
		fprintf(stderr, "ctxmon %s: flame graph written to %s\n", CMD,
			r->svg);
	if (r->pprof)
		fprintf(stderr, "ctxmon %s: pprof profile written to %s\n",
			CMD, r->pprof);
	ret = 0;
out:
	cli__out_end(CMD, &svg, false);
	cli__out_end(CMD, &pprof, false);
	cli__out_end(CMD, &out, false);
	return ret;
}

static int run(struct prof_run *r)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct ctxmon_profile *p = NULL;
	int go_fd = -1, exec_fd = -1, wstatus = 0, ret = 1, err, e;
	bool reaped = false;
	pid_t child = -1;
	uint64_t end = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (r->argv)
		r->o.target = CTXMON_PROFILE_PROCS;
	err = ctxmon_profile_open(&r->o, &p);
	if (err) {
		cli__err(CMD, "cannot load the BPF profiler: %s (needs root, "
			      "a kernel with BTF and BPF; try 'ctxmon doctor')",
			 strerror(-err));
		goto out;
	}
	for (size_t i = 0; !err && i < r->n_ids; i++)
		err = ctxmon_profile_add_target(p, r->ids[i]);
	if (!err)
		err = ctxmon_profile_start(p);
	if (err) {
		cli__err(CMD, "cannot start the profile: %s", strerror(-err));
		goto out;
	}
	/* the command is forked once the programs run, so its time from
	 * fork on is in the profile (it waits on a pipe until targeted) */
	if (r->argv) {
		child = spawn(r->argv, &go_fd, &exec_fd);
		if (child < 0) {
			cli__err(CMD, "cannot fork: %s", strerror(errno));
			goto out;
		}
		err = ctxmon_profile_add_target(p, child);
		if (err) {
			cli__err(CMD, "cannot select the command: %s",
				 strerror(-err));
			goto out;
		}
	}
	if (r->duration_s)
		end = now_ns() + (uint64_t)(r->duration_s * 1e9);
	if (go_fd >= 0) {
		if (write(go_fd, "g", 1) != 1) {
			cli__err(CMD, "cannot start the command");
			goto out;
		}
		close(go_fd);
		go_fd = -1;
	}
	/* after the command started, which keeps its own policy */
	if (r->realtime)
		capture__reader_realtime(CMD, r->realtime, false);
	while (!stop_sig) {
		ctxmon_profile_poll(p, 50);
		if (child > 0 && waitpid(child, &wstatus, WNOHANG) == child) {
			reaped = true;
			break;
		}
		if (end && now_ns() >= end)
			break;
		if (r->n_ids && all_gone(r))
			break;
	}
	err = ctxmon_profile_stop(p);
	if (err) {
		cli__err(CMD, "cannot read the profile: %s", strerror(-err));
		goto out;
	}
	/* a command that never ran has no profile to write (said) */
	if (reaped && exec_fd >= 0 && read(exec_fd, &e, sizeof(e)) == sizeof(e)) {
		ret = 127;
		goto out;
	}
	if (write_outputs(r, p) < 0)
		goto out;
	ret = 0;
	if (child > 0 && reaped)
		ret = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
					   128 + WTERMSIG(wstatus);
out:
	if (go_fd >= 0)
		close(go_fd);	/* an unstarted command exits at EOF */
	if (exec_fd >= 0)
		close(exec_fd);
	if (child > 0 && !reaped) {
		if (stop_sig)
			kill(child, stop_sig);
		if (waitpid(child, &wstatus, 0) == child && ret == 0)
			ret = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) :
						   128 + WTERMSIG(wstatus);
	}
	ctxmon_profile_free(p);
	return ret;
}

int cmd_profile(int argc, char **argv)
{
	struct prof_run r = { 0 };
	int ret;

	ret = parse(&r, argc, argv);
	if (ret) {
		free(r.ids);
		return ret < 0 ? 2 : 0;
	}
	ret = run(&r);
	free(r.ids);
	return ret;
}
