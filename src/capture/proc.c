/*
 * proc.c - the "proc" backend: the last tier, the kernel's own per-thread
 * counters read from /proc, where neither tracing nor perf is allowed.
 *
 * Every thread has, readable by anyone: its voluntary and involuntary
 * switch counts and migrations (/proc/PID/task/TID/sched, else status),
 * its time on CPU and runnable wait (schedstat).  Sampling them gives exact
 * numbers for the threads that live through the sample, with no events:
 * this backend counts instead of streaming (backend_ops.read_rows), and its
 * read() only samples.  What it cannot show: wakeup latency, the sleep
 * state, the cause of a switch, and the last moments of a thread that ends
 * between two samples (its row keeps its last sample).
 *
 * Counts are since the capture started: a thread that existed before has
 * its first sample subtracted, one born since counts from zero (its
 * counters started at fork).  A tid reused by a new thread is told apart by
 * its start time.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "internal.h"
#include "capture/procfs.h"

/*
 * A followed command or process is sampled this often, so that a thread
 * that ends keeps a recent last sample, but never spending more than a
 * twentieth of the time sampling; the machine is sampled only when asked.
 */
#define SAMPLE_NS (10 * 1000 * 1000ull)
#define SAMPLE_COST_SHARE 20

/* ---- the store of threads seen ------------------------------------- */

struct ptask {
	struct procfs_task base; /* counters at capture start (or zero) */
	struct procfs_task cur; /* latest sample */
	const char *comm; /* interned */
	uint64_t first_ts, last_ts;
	uint32_t gen;
	bool seen, gone;
};

struct proc_priv {
	struct backend_ctx *ctx;
	struct ptask *tasks;
	size_t ntasks, cap;
	uint32_t *hash; /* tid -> newest index + 1, open addressing */
	size_t hcap;
	pid_t *roots; /* followed processes (with their descendants) */
	size_t nroots, caproots;
	uint64_t start_ts, start_ticks, last_sample;
	uint64_t period_ns; /* between samples of followed tasks */
	pid_t cmd; /* the launched command, 0 if none */
	int tfd; /* timer that paces them, -1 for the machine */
	bool enabled;
	long hz;
};

static size_t thash(pid_t tid, size_t cap)
{
	return (size_t)(((uint32_t)tid * 2654435761u) & (cap - 1));
}

static struct ptask *tfind(struct proc_priv *p, pid_t tid)
{
	size_t i;

	if (!p->hcap)
		return NULL;
	for (i = thash(tid, p->hcap); p->hash[i]; i = (i + 1) & (p->hcap - 1))
		if (p->tasks[p->hash[i] - 1].cur.tid == tid)
			return &p->tasks[p->hash[i] - 1];
	return NULL;
}

static void hset(uint32_t *h, size_t cap, const struct ptask *tasks, pid_t tid,
		 uint32_t idx)
{
	size_t i = thash(tid, cap);

	while (h[i] && tasks[h[i] - 1].cur.tid != tid)
		i = (i + 1) & (cap - 1);
	h[i] = idx + 1;
}

static struct ptask *tnew(struct proc_priv *p, const struct procfs_task *s)
{
	struct ptask *t;

	if (p->ntasks == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct ptask *n = realloc(p->tasks, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->tasks = n;
		p->cap = cap;
	}
	if ((p->ntasks + 1) * 2 > p->hcap) {
		size_t cap = p->hcap ? p->hcap * 2 : 512;
		uint32_t *h = calloc(cap, sizeof(*h));

		if (!h)
			return NULL;
		for (size_t i = 0; i < p->ntasks; i++)
			hset(h, cap, p->tasks, p->tasks[i].cur.tid,
			     (uint32_t)i);
		free(p->hash);
		p->hash = h;
		p->hcap = cap;
	}
	t = &p->tasks[p->ntasks];
	memset(t, 0, sizeof(*t));
	t->cur = *s;
	hset(p->hash, p->hcap, p->tasks, s->tid, (uint32_t)p->ntasks);
	p->ntasks++;
	return t;
}

/* Boot-time clock in ticks, the unit of a task's start time. */
static uint64_t boot_ticks(long hz)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * (uint64_t)hz +
	       (uint64_t)ts.tv_nsec / (1000000000ull / (uint64_t)hz);
}

/* One sample of a thread into the store.  @s was just read: its counters
 * hold now, not at the walk's start (a walk of many threads, or one that
 * stalls, takes a while). */
static void take(struct proc_priv *p, const struct procfs_task *s)
{
	struct ptask *t = tfind(p, s->tid);
	uint64_t now = clock__now_ns();
	uint32_t gen = 0;

	if (t && t->cur.start_ticks != s->start_ticks) {
		/* the tid was reused: the old thread ended unseen */
		if (!t->gone) {
			t->gone = true;
			t->cur.state = 'X';
		}
		gen = t->gen + 1;
		t = NULL;
	}
	if (!t) {
		t = tnew(p, s);
		if (!t)
			return; /* out of memory: this thread is not shown */
		t->gen = gen;
		if (s->start_ticks < p->start_ticks) {
			/* existed before the capture: count from here */
			t->base = *s;
			t->first_ts = now;
		} else {
			/* born since: its counters started at fork, at most
			 * one sample ago */
			t->first_ts = p->last_sample > p->start_ts ?
					      p->last_sample :
					      p->start_ts;
		}
	}
	t->cur = *s;
	t->seen = true;
	t->gone = false;
	t->last_ts = now;
	if (!t->comm || strcmp(t->comm, s->comm))
		t->comm =
			strtab__intern(p->ctx->strs, s->comm, CTXMON_COMM_LEN);
}

static bool is_root(const struct proc_priv *p, pid_t pid)
{
	for (size_t i = 0; i < p->nroots; i++)
		if (p->roots[i] == pid)
			return true;
	return false;
}

static int add_root(struct proc_priv *p, pid_t pid)
{
	if (is_root(p, pid))
		return 0;
	if (p->nroots == p->caproots) {
		size_t cap = p->caproots ? p->caproots * 2 : 16;
		pid_t *n = realloc(p->roots, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->roots = n;
		p->caproots = cap;
	}
	p->roots[p->nroots++] = pid;
	return 0;
}

static void sample_process(struct proc_priv *p, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct procfs_task s;
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (procfs__read_task(pid, (pid_t)tid, &s) == 0) {
			s.tgid = pid;
			take(p, &s);
		}
	}
	closedir(d);
}

/* Add the children of every thread of @pid (/proc/PID/task/TID/children)
 * to the followed processes. */
static void add_children(struct proc_priv *p, pid_t pid)
{
	char path[96], buf[4096];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *q, *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/children", pid,
			 tid);
		if (procfs__read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		for (q = buf;; q = end) {
			long c = strtol(q, &end, 10);

			if (end == q || c <= 0)
				break;
			add_root(p, (pid_t)c);
		}
	}
	closedir(d);
}

/* Every process in /proc; malloc'd, NULL when out of memory. */
static pid_t *list_processes(size_t *n)
{
	pid_t *pids = NULL, *np;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	*n = 0;
	if (!d)
		return calloc(1, sizeof(*pids));
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 512;
			np = realloc(pids, cap * sizeof(*np));
			if (!np) {
				free(pids);
				pids = NULL;
				break;
			}
			pids = np;
		}
		pids[cnt++] = (pid_t)pid;
	}
	closedir(d);
	*n = cnt;
	return pids ? pids : calloc(1, sizeof(*pids));
}

/*
 * Sample the threads followed: every one on the machine, or the followed
 * processes and the children they forked (through their threads'
 * children files; a process once followed stays followed when it is
 * reparented, until it is gone).
 */
static int sample(struct proc_priv *p)
{
	struct backend_ctx *ctx = p->ctx;
	uint64_t now = clock__now_ns();
	int ret = 0;

	for (size_t i = 0; i < p->ntasks; i++)
		p->tasks[i].seen = false;
	if (ctx->target == CTXMON_TARGET_TIDS) {
		for (size_t i = 0; i < ctx->npids; i++) {
			struct procfs_task s;

			if (procfs__read_task(-1, ctx->pids[i], &s) == 0)
				take(p, &s);
		}
	} else if (ctx->target == CTXMON_TARGET_ALL) {
		size_t n;
		pid_t *pids = list_processes(&n);

		if (!pids)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			sample_process(p, pids[i]);
		free(pids);
	} else {
		/* the list grows while walked: children are walked too */
		for (size_t i = 0; i < p->nroots; i++)
			add_children(p, p->roots[i]);
		for (size_t i = 0; i < p->nroots; i++) {
			char path[64];

			snprintf(path, sizeof(path), "/proc/%d", p->roots[i]);
			if (access(path, F_OK) < 0) {
				/* gone: a later process with its pid is
				 * someone else unless a followed one forks it */
				p->roots[i--] = p->roots[--p->nroots];
				continue;
			}
			sample_process(p, p->roots[i]);
		}
	}
	for (size_t i = 0; i < p->ntasks; i++) {
		struct ptask *t = &p->tasks[i];

		if (!t->seen && !t->gone) {
			t->gone = true; /* ended: keeps its last sample */
			t->cur.state = 'X';
		}
	}
	p->last_sample = now;
	/* pace the next ones by what this one cost */
	now = clock__now_ns() - now;
	p->period_ns = now * SAMPLE_COST_SHARE > SAMPLE_NS ?
			       now * SAMPLE_COST_SHARE :
			       SAMPLE_NS;
	return ret;
}

/* ---- backend ------------------------------------------------------- */

static void proc_close(void *priv);

static int proc_open(struct backend_ctx *ctx, void **privp)
{
	struct proc_priv *p = calloc(1, sizeof(*p));
	int ret = 0;

	*privp = NULL;
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->tfd = -1;
	p->period_ns = SAMPLE_NS;
	p->hz = sysconf(_SC_CLK_TCK);
	if (p->hz <= 0)
		p->hz = 100;
	if (access("/proc/self/schedstat", R_OK) < 0) {
		ret = -errno;
		fmt__buf(ctx->err, ctx->errlen,
			 "proc backend: /proc/self/schedstat: %s",
			 strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < ctx->npids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/stat", ctx->pids[i]);
		if (access(path, R_OK) < 0) {
			ret = -ESRCH;
			fmt__buf(ctx->err, ctx->errlen,
				 "proc backend: no such %s: %d",
				 ctx->target == CTXMON_TARGET_TIDS ? "thread" :
								     "process",
				 ctx->pids[i]);
			goto out;
		}
		if (ctx->target == CTXMON_TARGET_PIDS) {
			ret = add_root(p, ctx->pids[i]);
			if (ret < 0)
				goto out;
		}
	}
	if (ctx->target != CTXMON_TARGET_ALL) {
		p->tfd = timerfd_create(CLOCK_MONOTONIC,
					TFD_NONBLOCK | TFD_CLOEXEC);
		if (p->tfd < 0) {
			ret = -errno;
			fmt__buf(ctx->err, ctx->errlen,
				 "proc backend: timerfd: %s", strerror(errno));
		}
	}
out:
	if (ret) {
		proc_close(p);
		return ret;
	}
	*privp = p;
	return 0;
}

static int proc_enable(void *priv)
{
	struct proc_priv *p = priv;

	p->start_ts = clock__now_ns();
	p->start_ticks = boot_ticks(p->hz);
	p->enabled = true;
	if (p->tfd >= 0) {
		struct itimerspec it = {
			.it_interval = { 0, (long)SAMPLE_NS },
			.it_value = { 0, (long)SAMPLE_NS },
		};

		if (timerfd_settime(p->tfd, 0, &it, NULL) < 0)
			return -errno;
	}
	/* the first sample is the base of the threads that exist now */
	return sample(p);
}

static int proc_disable(void *priv)
{
	struct proc_priv *p = priv;

	if (p->enabled && p->ctx->target != CTXMON_TARGET_ALL)
		sample(p);
	p->enabled = false;
	return 0;
}

static int proc_poll_fd(void *priv)
{
	return ((struct proc_priv *)priv)->tfd;
}

/* The command is a zombie: its last counters are there to read, once. */
static bool cmd_ended(struct proc_priv *p)
{
	struct procfs_task s = { 0 };
	char path[64], buf[1024];

	if (p->cmd <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", p->cmd);
	if (procfs__read_small(path, buf, sizeof(buf)) < 0 ||
	    procfs__parse_stat(buf, &s) < 0 || s.state != 'Z')
		return false;
	p->cmd = 0;
	return true;
}

static int proc_read(void *priv, uint64_t *safe_ts)
{
	struct proc_priv *p = priv;
	uint64_t now = clock__now_ns();

	uint64_t ticks;

	/* nothing is ever queued: the stream may deliver up to now */
	*safe_ts = now;
	if (p->tfd >= 0 && read(p->tfd, &ticks, sizeof(ticks)) < 0 &&
	    errno != EAGAIN)
		return -errno;
	if (!p->enabled || p->ctx->target == CTXMON_TARGET_ALL)
		return 0;
	if (now - p->last_sample < p->period_ns && !cmd_ended(p))
		return 0;
	return sample(p);
}

static int proc_attach(void *priv, pid_t pid)
{
	struct proc_priv *p = priv;

	p->cmd = pid;
	return add_root(p, pid);
}

static void to_stats(const struct proc_priv *p, const struct ptask *t,
		     struct ctxmon_stats *s)
{
	const struct procfs_task *c = &t->cur, *b = &t->base;
	/* its counters as of its last read (CTXMON_CAP_SAMPLED) */
	uint64_t last = t->last_ts, span;

	memset(s, 0, sizeof(*s));
	s->tid = c->tid;
	s->tgid = c->tgid > 0 ? c->tgid : -1;
	s->ppid = -1;
	s->gen = t->gen;
	s->comm = t->comm;
	s->nthreads = 1;
	s->exited = t->gone;
	s->target = true;
	s->first_ts = t->first_ts;
	s->last_ts = last > t->first_ts ? last : t->first_ts;
	s->voluntary = c->nvcsw - (b->nvcsw < c->nvcsw ? b->nvcsw : c->nvcsw);
	s->involuntary =
		c->nivcsw - (b->nivcsw < c->nivcsw ? b->nivcsw : c->nivcsw);
	s->switch_out = s->voluntary + s->involuntary;
	s->switch_in =
		c->timeslices -
		(b->timeslices < c->timeslices ? b->timeslices : c->timeslices);
	s->run_ns = c->run_ns - (b->run_ns < c->run_ns ? b->run_ns : c->run_ns);
	s->wait_ns = c->wait_ns -
		     (b->wait_ns < c->wait_ns ? b->wait_ns : c->wait_ns);
	s->migrations =
		c->migrations -
		(b->migrations < c->migrations ? b->migrations : c->migrations);
	/* the rest of its time it slept, in a state no sample tells */
	span = s->last_ts - s->first_ts;
	if (span > s->run_ns + s->wait_ns)
		s->sleep_ns[CTXMON_SLEEP_OTHER] = span - s->run_ns - s->wait_ns;
	(void)p;
}

static int proc_read_rows(void *priv, uint64_t *now, struct ctxmon_stats **rows,
			  size_t *n, bool interval, bool *ival_max)
{
	struct proc_priv *p = priv;
	struct ctxmon_stats *out;
	int ret = 0;

	(void)now;	/* each row ends at its own read */
	(void)interval;	/* no latencies */
	*ival_max = false;
	if (p->enabled)
		ret = sample(p);
	if (ret < 0)
		return ret;
	out = malloc((p->ntasks ? p->ntasks : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < p->ntasks; i++) {
		const struct ptask *t = &p->tasks[i];

		to_stats(p, t, &out[i]);
		/* a process row names its parent through the leader */
		if (t->cur.tid == t->cur.tgid)
			out[i].ppid = t->cur.ppid;
	}
	*rows = out;
	*n = p->ntasks;
	return 0;
}

static void proc_close(void *priv)
{
	struct proc_priv *p = priv;

	if (!p)
		return;
	if (p->tfd >= 0)
		close(p->tfd);
	free(p->tasks);
	free(p->hash);
	free(p->roots);
	free(p);
}

const struct backend_ops backend_proc = {
	.name = "proc",
	.open = proc_open,
	.enable = proc_enable,
	.disable = proc_disable,
	.poll_fd = proc_poll_fd,
	.read = proc_read,
	.close = proc_close,
	.attach = proc_attach,
	.read_rows = proc_read_rows,
	.limits = "proc tier (/proc counters, sampled): exact voluntary/"
		  "involuntary, run and runnable wait of live threads; a "
		  "thread that ends keeps its last sample; no wakeup "
		  "latency, no sleep states, no exit switch-outs",
	.caps = CTXMON_CAP_COUNTS | CTXMON_CAP_SAMPLED,
};
