/*
 * bpf_check.c - driver of the tests/e2e/test_bpf_*.sh scripts.
 *
 * Runs a command under a capture backend the way a session does (forked
 * and held before exec, so the backend knows its pid at open and filters
 * in the kernel), accounts the stream, and prints key=value lines the
 * scripts check: the kernel's getrusage of the command, the traced counts
 * of its threads, losses with their CPU and window, and ordering.
 *
 *   bpf_check [-b bpf|bpf-raw|perf] [-k KB] [-S MS] [-e irq,syscall]
 *             [-A] [-T] -- CMD [ARGS]
 *
 *   -b  backend (bpf-raw: the raw_tp programs even where tp_btf loads)
 *   -k  ring buffer size per CPU in KB
 *   -S  stall: read nothing for the first MS milliseconds
 *   -e  event groups besides sched
 *   -A  also run the bpf aggregation mode over the same run and compare
 *       its rows with the accounted stream (exit 1 on a difference)
 *   -T  print one line per traced thread
 *   -P  fork the command before opening the backend (its pid is known at
 *       open; by default it is forked after enable, as the session does,
 *       and the backend follows it from its fork)
 *   -a  capture every task (no pid filter)
 *   -C  capture on these CPUs only (a list: 0,2-3)
 *   -G  only tasks in this cgroup v2 directory; the command is moved
 *       into it before it execs
 *
 * Exit status: 0 when it ran (the scripts judge the numbers), 1 when -A
 * found a difference, 2 on a set-up error, 77 when the backend cannot run
 * here (with the reason).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "bpf_backend.h"

struct checker {
	struct ctxmon_account *a;
	int ncpus;
	uint64_t last_ts;
	uint64_t *cpu_last;
	uint64_t events, violations, cpu_violations, lost_events, lost;
	uint64_t exact, inexact; /* switch-outs of target threads */
	pid_t root;
	FILE *lostlog;
	/* what getrusage cannot see: switch-outs after a thread's exit
	 * event (its counters may already be folded into the process) and
	 * the exit switch-outs of group leaders (reaped after it or not) */
	pid_t tgids[4096]; /* target processes */
	size_t ntgids;
	uint8_t *exited; /* by tid */
	/* By tid of a target thread: asleep by its last switch-out with no
	 * wakeup since, and its gaps: switches in that no program saw,
	 * told by a switch-out with prev_run_ns or by a switch-in while
	 * asleep (the kernel traced neither; on the VMs here, a CPU's
	 * switch away from a thread of PID 1 goes untraced). */
	uint8_t *asleep;
	uint32_t *gaps;
	long pid_max;
	uint64_t post_vol, post_invol, leader_exits;
	uint64_t foreign_switches; /* neither side a target process */
	uint64_t *cpu_events;
	uint64_t types[CTXMON_EV__MAX];
	uint64_t waking_irq, waking_softirq; /* wakings by context */
};

static bool is_target(const struct checker *c, int32_t tgid)
{
	for (size_t i = 0; i < c->ntgids; i++)
		if (c->tgids[i] == tgid)
			return true;
	return false;
}

static void track(struct checker *c, const struct ctxmon_event *ev)
{
	int32_t t;

	switch (ev->type) {
	case CTXMON_EV_FORK:
		if (ev->fork.child_tgid > 0 && c->ntgids < 4096 &&
		    is_target(c, ev->tgid) &&
		    !is_target(c, ev->fork.child_tgid))
			c->tgids[c->ntgids++] = ev->fork.child_tgid;
		break;
	case CTXMON_EV_EXIT:
		t = ev->exit.tid;
		if (t > 0 && t < c->pid_max)
			c->exited[t] = 1;
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		t = ev->wake.tid;
		if (t > 0 && t < c->pid_max)
			c->asleep[t] = 0;
		break;
	case CTXMON_EV_SWITCH:
		t = ev->sw.next_tid;
		if (t > 0 && t < c->pid_max) {
			c->gaps[t] += c->asleep[t];
			c->asleep[t] = 0;
		}
		t = ev->sw.prev_tid;
		if (t <= 0 || t >= c->pid_max ||
		    !is_target(c, ev->sw.prev_tgid))
			break;
		c->gaps[t] += ev->sw.prev_run_ns != 0;
		c->asleep[t] = ev->sw.kind == CTXMON_SW_VOLUNTARY &&
			       !ev->sw.preempt && ev->sw.prev_state;
		if (ev->sw.kind == CTXMON_SW_EXIT) {
			if (t == ev->sw.prev_tgid)
				c->leader_exits++;
			c->exited[t] = 0; /* the tid may come back */
		} else if (c->exited[t]) {
			if (ev->sw.kind == CTXMON_SW_VOLUNTARY)
				c->post_vol++;
			else
				c->post_invol++;
		}
		break;
	default:
		break;
	}
}

static int on_event(const struct ctxmon_event *ev, void *arg)
{
	struct checker *c = arg;

	c->events++;
	if (ev->type < CTXMON_EV__MAX)
		c->types[ev->type]++;
	if (ev->type == CTXMON_EV_WAKING) {
		c->waking_irq += !!(ev->flags & CTXMON_EVF_IN_IRQ);
		c->waking_softirq += !!(ev->flags & CTXMON_EVF_IN_SOFTIRQ);
	}
	if (ev->ts < c->last_ts)
		c->violations++;
	else
		c->last_ts = ev->ts;
	if (ev->type == CTXMON_EV_SWITCH && !is_target(c, ev->sw.prev_tgid) &&
	    !is_target(c, ev->sw.next_tgid))
		c->foreign_switches++;
	if (ev->cpu >= 0 && ev->cpu < c->ncpus) {
		c->cpu_events[ev->cpu]++;
		if (ev->ts < c->cpu_last[ev->cpu])
			c->cpu_violations++;
		else
			c->cpu_last[ev->cpu] = ev->ts;
	}
	if (ev->type == CTXMON_EV_LOST) {
		c->lost_events++;
		c->lost += ev->lost.count;
		fprintf(c->lostlog,
			"lost cpu=%d count=%" PRIu64 " start=%" PRIu64
			" end=%" PRIu64 "\n",
			ev->cpu, ev->lost.count, ev->lost.start_ts,
			ev->lost.end_ts);
	}
	if (ev->type == CTXMON_EV_SWITCH && ev->sw.kind != CTXMON_SW_EXIT &&
	    ev->sw.prev_tid > 0) {
		if (ev->flags & CTXMON_EVF_KIND_EXACT)
			c->exact++;
		else
			c->inexact++;
	}
	track(c, ev);
	ctxmon_account_feed(c->a, ev);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bpf_check [-b bpf|bpf-raw|perf] [-k KB] [-S MS] "
		"[-e irq,syscall] [-A] [-T] [-P] [-a] [-C CPUS] [-G CGROUP] -- CMD [ARGS]\n");
	exit(2);
}

/* Fork @argv held before exec on a pipe; returns the pid, *go the pipe. */
static pid_t spawn(char **argv, int *go)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;

		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

struct diffs {
	unsigned counts, times, rows;
	unsigned gap_lat; /* latency counts apart, as gaps explain */
	const uint32_t *gaps; /* by tid, struct checker's */
	long pid_max;
	bool verbose;
};

/*
 * Across a switch-in that neither set of programs saw, each decides by
 * its own rule whether a wakeup latency ended there.  A waking seen while
 * the thread still ran either woke it in place (it never slept: its next
 * sleep is ended by a later waking) or ended the sleep its switch-out
 * began; the stream tells which from sched_wakeup, the aggregation, which
 * does not attach sched_wakeup, takes the second until a later waking
 * says otherwise (row_waking() in ctxsw_agg.bpf.c), and a gap leaves no
 * later waking.  So their latency counts may be apart by at most one per
 * gap of the thread, and nothing else may.
 */
static bool gap_explains(const struct ctxmon_stats *x,
			 const struct ctxmon_stats *y, const struct diffs *d)
{
	uint64_t apart = x->lat.count > y->lat.count ?
				 x->lat.count - y->lat.count :
				 y->lat.count - x->lat.count;

	return x->switch_in == y->switch_in && x->switch_out == y->switch_out &&
	       x->voluntary == y->voluntary &&
	       x->involuntary == y->involuntary &&
	       x->exit_switch == y->exit_switch &&
	       x->migrations == y->migrations && x->wakeups == y->wakeups &&
	       x->tid > 0 && x->tid < d->pid_max && apart <= d->gaps[x->tid];
}

static bool near(uint64_t a, uint64_t b, uint64_t tol)
{
	return a > b ? a - b <= tol : b - a <= tol;
}

/* The tolerance of a time sum of a and b: the per-event bound tol, but
 * no more than 5% of the larger, plus 200 us (see compare()). */
static uint64_t cap(uint64_t tol, uint64_t a, uint64_t b)
{
	uint64_t pct = (a > b ? a : b) / 20;

	return (tol < pct ? tol : pct) + 200000;
}

/*
 * Same per-thread numbers from both modes: counts exactly, times within
 * a tolerance, because the two sets of programs each take their own clock
 * reading at every event (a few hundred ns apart, summed over switches).
 */
static void compare(const struct ctxmon_stats *s, size_t ns,
		    const struct ctxmon_stats *g, size_t ng, struct diffs *d)
{
	for (size_t i = 0; i < ns; i++) {
		const struct ctxmon_stats *x = &s[i], *y = NULL;
		uint64_t tol;

		if (!x->switch_in && !x->switch_out && !x->wakeups &&
		    !x->migrations)
			continue; /* a row the stream only named */
		for (size_t j = 0; j < ng && !y; j++)
			if (g[j].tid == x->tid && g[j].gen == x->gen)
				y = &g[j];
		if (!y) {
			printf("agg_missing tid=%d gen=%u\n", x->tid, x->gen);
			d->rows++;
			continue;
		}
		if (x->switch_in != y->switch_in ||
		    x->switch_out != y->switch_out ||
		    x->voluntary != y->voluntary ||
		    x->involuntary != y->involuntary ||
		    x->exit_switch != y->exit_switch ||
		    x->migrations != y->migrations ||
		    x->wakeups != y->wakeups || x->lat.count != y->lat.count) {
			if (gap_explains(x, y, d)) {
				printf("agg_gap_lat tid=%d lat=%" PRIu64
				       "/%" PRIu64 " gaps=%u\n",
				       x->tid, x->lat.count, y->lat.count,
				       d->gaps[x->tid]);
				d->gap_lat++;
			} else {
				printf("agg_count_diff tid=%d in=%" PRIu64
				       "/%" PRIu64 " out=%" PRIu64 "/%" PRIu64
				       " vol=%" PRIu64 "/%" PRIu64
				       " invol=%" PRIu64 "/%" PRIu64
				       " exit=%" PRIu64 "/%" PRIu64
				       " migr=%" PRIu64 "/%" PRIu64
				       " wake=%" PRIu64 "/%" PRIu64
				       " lat=%" PRIu64 "/%" PRIu64 "\n",
				       x->tid, x->switch_in, y->switch_in,
				       x->switch_out, y->switch_out,
				       x->voluntary, y->voluntary,
				       x->involuntary, y->involuntary,
				       x->exit_switch, y->exit_switch,
				       x->migrations, y->migrations, x->wakeups,
				       y->wakeups, x->lat.count, y->lat.count);
				d->counts++;
			}
		}
		if (d->verbose)
			printf("agg_row tid=%d run=%" PRIu64 "/%" PRIu64
			       " wait=%" PRIu64 "/%" PRIu64 " sleep=%" PRIu64
			       "/%" PRIu64 " lat=%" PRIu64 "/%" PRIu64
			       " latmax=%" PRIu64 "/%" PRIu64 "\n",
			       x->tid, x->run_ns, y->run_ns, x->wait_ns,
			       y->wait_ns,
			       x->sleep_ns[0] + x->sleep_ns[1] + x->sleep_ns[2],
			       y->sleep_ns[0] + y->sleep_ns[1] + y->sleep_ns[2],
			       x->lat.sum_ns, y->lat.sum_ns, x->lat.max_ns,
			       y->lat.max_ns);
		/*
		 * Each event's time is read twice, once by each program,
		 * back to back in the same tracepoint call with interrupts
		 * off: the readings are apart by at most one program's run,
		 * under 1 us.  A sum of intervals is off by at most that
		 * for each event that bounds one of its intervals: 1 us per
		 * switch in, switch out and wakeup.  Over a busy thread that
		 * is a large part of the sum (some 50 ms of a ping-pong
		 * thread's 140 ms run), where the readings' offsets mostly
		 * cancel: the error stays under 2% (1.7% the most seen, a
		 * sigsleep thread's sleep), so no more than 5% of the sum is
		 * allowed either.  And 200 us once, for a vCPU the host held
		 * up between the two readings of one event.
		 */
		tol = 1000 * (x->switch_in + x->switch_out + x->wakeups + 2);
		if (!near(x->run_ns, y->run_ns, cap(tol, x->run_ns, y->run_ns)) ||
		    !near(x->wait_ns, y->wait_ns,
			  cap(tol, x->wait_ns, y->wait_ns)) ||
		    !near(x->sleep_ns[0] + x->sleep_ns[1] + x->sleep_ns[2],
			  y->sleep_ns[0] + y->sleep_ns[1] + y->sleep_ns[2],
			  cap(tol,
			      x->sleep_ns[0] + x->sleep_ns[1] + x->sleep_ns[2],
			      y->sleep_ns[0] + y->sleep_ns[1] +
				      y->sleep_ns[2])) ||
		    !near(x->lat.sum_ns, y->lat.sum_ns,
			  cap(tol, x->lat.sum_ns, y->lat.sum_ns))) {
			printf("agg_time_diff tid=%d run=%" PRIu64 "/%" PRIu64
			       " wait=%" PRIu64 "/%" PRIu64 " sleepS=%" PRIu64
			       "/%" PRIu64 " latsum=%" PRIu64 "/%" PRIu64
			       " tol=%" PRIu64 "\n",
			       x->tid, x->run_ns, y->run_ns, x->wait_ns,
			       y->wait_ns, x->sleep_ns[0], y->sleep_ns[0],
			       x->lat.sum_ns, y->lat.sum_ns, tol);
			d->times++;
		}
	}
}

int main(int argc, char **argv)
{
	const char *backend = "bpf", *events = "";
	unsigned buffer_kb = 0, stall_ms = 0;
	bool agg = false, per_thread = false, early = false, all = false;
	const char *cpulist = NULL, *cgroup = NULL;
	bool *cpuset = NULL;
	struct bpf_backend_opts bo = { .sz = sizeof(bo) };
	struct checker c = { 0 };
	struct backend_ctx ctx = { 0 }, actx;
	const struct backend_ops *ops = &backend_bpf;
	void *priv = NULL, *apriv = NULL;
	char err[512] = "", aerr[512] = "", tracefs[PATH_MAX] = "";
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct stream *st = NULL;
	struct strtab *strs = NULL;
	bool *online = NULL;
	struct rusage ru;
	int opt, ncpus, go = -1, wst = 0, ret, rc = 2;
	uint64_t start_ts, stop_ts, safe;
	pid_t child = -1;

	while ((opt = getopt(argc, argv, "b:k:S:e:ATPaC:G:")) != -1) {
		switch (opt) {
		case 'b':
			backend = optarg;
			break;
		case 'k':
			buffer_kb = (unsigned)atoi(optarg);
			break;
		case 'S':
			stall_ms = (unsigned)atoi(optarg);
			break;
		case 'e':
			events = optarg;
			break;
		case 'A':
			agg = true;
			break;
		case 'T':
			per_thread = true;
			break;
		case 'P':
			early = true;
			break;
		case 'a':
			all = true;
			break;
		case 'C':
			cpulist = optarg;
			break;
		case 'G':
			cgroup = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind >= argc)
		usage();
	if (!strcmp(backend, "perf"))
		ops = &backend_perf;
	else if (!strcmp(backend, "bpf-raw"))
		bo.force_raw_tp = true;
	else if (strcmp(backend, "bpf"))
		usage();

	if (cpus__probe(&ncpus, &online) < 0)
		return 2;
	strs = strtab__new();
	st = stream__new(ncpus);
	c.cpu_last = calloc((size_t)ncpus, sizeof(*c.cpu_last));
	c.cpu_events = calloc((size_t)ncpus, sizeof(*c.cpu_events));
	if (!strs || !st || !c.cpu_last || !c.cpu_events)
		return 2;
	if (cpulist) {
		const char *q = cpulist;

		cpuset = calloc((size_t)ncpus, sizeof(*cpuset));
		if (!cpuset)
			return 2;
		while (*q) {
			char *end;
			long a = strtol(q, &end, 10), b = a;

			if (*end == '-')
				b = strtol(end + 1, &end, 10);
			for (long i = a; i <= b && i < ncpus; i++)
				if (i >= 0)
					cpuset[i] = true;
			q = *end == ',' ? end + 1 : end;
			if (*end && *end != ',')
				usage();
		}
		bo.cpus = cpuset;
	}
	bo.cgroup = cgroup;
	c.ncpus = ncpus;
	c.lostlog = stdout;
	{
		FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

		if (!f || fscanf(f, "%ld", &c.pid_max) != 1)
			c.pid_max = 1 << 22;
		if (f)
			fclose(f);
		c.exited = calloc((size_t)c.pid_max, 1);
		c.asleep = calloc((size_t)c.pid_max, 1);
		c.gaps = calloc((size_t)c.pid_max, sizeof(*c.gaps));
		if (!c.exited || !c.asleep || !c.gaps)
			return 2;
	}
	if (tracefs__find(NULL, false, tracefs, sizeof(tracefs), err,
			  sizeof(err)) < 0)
		tracefs[0] = '\0';

	signal(SIGPIPE, SIG_IGN);
	if (early) {
		child = spawn(argv + optind, &go);
		if (child < 0) {
			perror("fork");
			return 2;
		}
	}
	ctx = (struct backend_ctx){
		.ncpus = ncpus,
		.online = online,
		.tracefs = tracefs,
		.events = CTXMON_EVENTS_SCHED |
			  (strstr(events, "irq") ? CTXMON_EVENTS_IRQ : 0) |
			  (strstr(events, "sys") ? CTXMON_EVENTS_SYSCALL : 0),
		.buffer_kb = buffer_kb,
		.target = all ? CTXMON_TARGET_ALL : CTXMON_TARGET_CMD,
		.root_pid = early ? child : 0,
		.strs = strs,
		.stream = st,
		.err = err,
		.errlen = sizeof(err),
	};
	err[0] = '\0';
	if (ops == &backend_bpf)
		ret = bpf_backend__open(&ctx, &bo, &priv);
	else
		ret = ops->open(&ctx, &priv);
	if (ret < 0) {
		printf("SKIP: backend %s: %s\n", backend, err);
		rc = 77;
		goto out;
	}
	if (agg) {
		struct bpf_backend_opts ab = { .sz = sizeof(ab),
					       .aggregate = true };

		actx = ctx;
		actx.err = aerr;
		actx.errlen = sizeof(aerr);
		ret = bpf_backend__open(&actx, &ab, &apriv);
		if (ret < 0) {
			printf("SKIP: aggregation: %s\n", aerr);
			rc = 77;
			goto out;
		}
	}
	start_ts = clock__now_ns();
	if (apriv && backend_bpf.enable(apriv) < 0) {
		printf("SKIP: aggregation attach: %s\n", aerr);
		rc = 77;
		goto out;
	}
	if (ops->enable(priv) < 0) {
		printf("SKIP: attach: %s\n", err);
		rc = 77;
		goto out;
	}
	if (!early) {
		child = spawn(argv + optind, &go);
		if (child < 0) {
			perror("fork");
			goto out;
		}
	}
	c.tgids[c.ntgids++] = child;
	if (cgroup) {
		char path[PATH_MAX];
		FILE *f;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		f = fopen(path, "we");
		if (!f || fprintf(f, "%d\n", (int)child) < 0 || fclose(f)) {
			perror(path);
			goto out;
		}
	}
	ao.target = CTXMON_TARGET_CMD;
	ao.root_pid = child;
	c.a = ctxmon_account_new(&ao);
	if (!c.a)
		goto out;
	if (write(go, "g", 1) != 1)
		goto out;
	close(go);
	go = -1;

	if (stall_ms)
		usleep(stall_ms * 1000u);
	for (;;) {
		int fd = ops->poll_fd ? ops->poll_fd(priv) : -1;
		pid_t p;

		if (fd >= 0) {
			struct pollfd pf = { .fd = fd, .events = POLLIN };

			poll(&pf, 1, 100);
		} else {
			usleep(100000);
		}
		if (ops->read(priv, &safe) < 0) {
			fprintf(stderr, "read failed\n");
			goto out;
		}
		stream__deliver(st, safe, on_event, &c);
		p = wait4(child, &wst, WNOHANG, &ru);
		if (p == child)
			break;
	}
	child = -1;
	ops->disable(priv);
	if (apriv)
		backend_bpf.disable(apriv);
	stop_ts = clock__now_ns();
	if (ops->read(priv, &safe) < 0)
		goto out;
	stream__deliver(st, UINT64_MAX, on_event, &c);
	ctxmon_account_finish(c.a, stop_ts);

	{
		struct ctxmon_session_stats ss = { 0 };
		struct ctxmon_stats *rows;
		uint64_t vol = 0, invol = 0, ex = 0;
		size_t n;

		stream__stats(st, &ss);
		printf("backend=%s\n", backend);
		if (ops == &backend_bpf) {
			struct bpf_backend_info bi;

			if (bpf_backend__info(priv, &bi) == 0)
				printf("tp_btf=%d bpf_lost=%" PRIu64
				       " bpf_inexact=%" PRIu64 "\n",
				       bi.tp_btf, bi.lost, bi.inexact);
		}
		printf("events=%" PRIu64 " lost=%" PRIu64
		       " lost_records=%" PRIu64 " order_violations=%" PRIu64
		       " stream_violations=%" PRIu64 " cpu_violations=%" PRIu64
		       "\n",
		       c.events, c.lost, c.lost_events, c.violations,
		       ss.order_violations, c.cpu_violations);
		printf("foreign_switches=%" PRIu64 "\n", c.foreign_switches);
		printf("waking_irq=%" PRIu64 " waking_softirq=%" PRIu64 "\n",
		       c.waking_irq, c.waking_softirq);
		printf("types");
		for (unsigned i = 1; i < CTXMON_EV__MAX; i++)
			printf(" %s=%" PRIu64, ctxmon_event_type_name(i),
			       c.types[i]);
		printf("\n");
		for (int i = 0; i < ncpus; i++)
			printf("cpu_events cpu=%d count=%" PRIu64 "\n", i,
			       c.cpu_events[i]);
		printf("window start=%" PRIu64 " stop=%" PRIu64 "\n", start_ts,
		       stop_ts);
		printf("exit_status=%d\n",
		       WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst));
		printf("rusage_nvcsw=%ld rusage_nivcsw=%ld\n", ru.ru_nvcsw,
		       ru.ru_nivcsw);
		rows = ctxmon_account_rows(c.a, CTXMON_ROWS_THREADS, false, &n);
		if (!rows)
			goto out;
		for (size_t i = 0; i < n; i++) {
			vol += rows[i].voluntary;
			invol += rows[i].involuntary;
			ex += rows[i].exit_switch;
			if (per_thread)
				printf("thread tid=%d gen=%u comm=%s vol=%" PRIu64
				       " invol=%" PRIu64 " exit=%" PRIu64
				       " run=%" PRIu64 " wait=%" PRIu64
				       " lat=%" PRIu64 "\n",
				       rows[i].tid, rows[i].gen, rows[i].comm,
				       rows[i].voluntary, rows[i].involuntary,
				       rows[i].exit_switch, rows[i].run_ns,
				       rows[i].wait_ns, rows[i].lat.count);
		}
		/* the kernel's counts, bounded by what it cannot see */
		printf("kernel_check vol_ok=%d invol_ok=%d post_exit_vol=%" PRIu64
		       " post_exit_invol=%" PRIu64 " leader_exits=%" PRIu64
		       "\n",
		       (uint64_t)ru.ru_nvcsw + c.post_vol >= vol &&
			       (uint64_t)ru.ru_nvcsw <= vol + c.leader_exits,
		       (uint64_t)ru.ru_nivcsw + c.post_invol >= invol &&
			       (uint64_t)ru.ru_nivcsw <= invol,
		       c.post_vol, c.post_invol, c.leader_exits);
		printf("threads=%zu traced_vol=%" PRIu64
		       " traced_invol=%" PRIu64 " traced_exit=%" PRIu64
		       " exact=%" PRIu64 " inexact=%" PRIu64
		       " anomalies=%" PRIu64 "\n",
		       n, vol, invol, ex, c.exact, c.inexact,
		       ctxmon_account_anomalies(c.a));
		rc = 0;
		if (apriv) {
			struct ctxmon_stats *g;
			struct diffs d = { .verbose = per_thread,
					   .gaps = c.gaps,
					   .pid_max = c.pid_max };
			uint64_t gv = 0, gi = 0, ge = 0;
			size_t ng;
			bool ival;

			/* disabled: the rows end at stop_ts, as asked */
			if (bpf_backend__read_rows(apriv, &stop_ts, &g, &ng,
						   false, &ival) < 0) {
				free(rows);
				rc = 2;
				goto out;
			}
			for (size_t i = 0; i < ng; i++) {
				gv += g[i].voluntary;
				gi += g[i].involuntary;
				ge += g[i].exit_switch;
			}
			compare(rows, n, g, ng, &d);
			{
				struct bpf_backend_info bi;

				if (bpf_backend__info(apriv, &bi) == 0)
					printf("agg_inexact=%" PRIu64
					       " agg_rows_dropped=%" PRIu64
					       "\n",
					       bi.inexact, bi.rows_dropped);
			}
			printf("agg_threads=%zu agg_vol=%" PRIu64
			       " agg_invol=%" PRIu64 " agg_exit=%" PRIu64
			       " agg_count_diffs=%u agg_time_diffs=%u"
			       " agg_missing=%u agg_gap_lat=%u\n",
			       ng, gv, gi, ge, d.counts, d.times, d.rows,
			       d.gap_lat);
			if (d.counts || d.times || d.rows)
				rc = 1;
			free(g);
		}
		free(rows);
	}
out:
	if (go >= 0)
		close(go);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (priv)
		ops->close(priv);
	if (apriv)
		backend_bpf.close(apriv);
	ctxmon_account_free(c.a);
	stream__free(st);
	strtab__free(strs);
	free(c.cpu_last);
	free(c.exited);
	free(c.asleep);
	free(c.gaps);
	free(c.cpu_events);
	free(cpuset);
	free(online);
	return rc;
}
