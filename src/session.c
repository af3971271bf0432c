/*
 * session.c - a capture session: choose and open a backend, launch the
 * command to follow, run the capture and hand out the ordered stream.
 *
 * A command is forked only once capture is enabled, and waits on a pipe
 * until it is released to exec: its first switches (under ctxmon's name)
 * are then traced too, which the kernel's own counters include.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup.h"

struct ctxmon_session {
	struct ctxmon_session_opts opts;
	pid_t *pids;
	char **argv;
	const struct backend_entry *be;
	void *priv;
	struct backend_ctx ctx;
	struct strtab *strs;
	struct stream *st;
	bool *online;
	int ncpus;
	char tracefs[PATH_MAX];
	char cgroup[PATH_MAX];	/* opts.cgroup resolved, "" if none */
	char err[512];
	char log[2048];
	bool enabled, stopped;
	pid_t child;
	bool reaped;
	uint64_t start_ts, stop_ts;
};

static void PRINTF_LIKE(2, 3) logf_(struct ctxmon_session *s, const char *fmt, ...)
{
	size_t used = strlen(s->log);
	va_list ap;

	if (used + 1 >= sizeof(s->log))
		return;
	va_start(ap, fmt);
	vsnprintf(s->log + used, sizeof(s->log) - used, fmt, ap);
	va_end(ap);
}

static int copy_opts(struct ctxmon_session *s, const struct ctxmon_session_opts *o)
{
	size_t n = 0;

	memset(&s->opts, 0, sizeof(s->opts));
	memcpy(&s->opts, o, o->sz < sizeof(s->opts) ? o->sz : sizeof(s->opts));
	if (o->npids) {
		s->pids = calloc(o->npids, sizeof(*s->pids));
		if (!s->pids)
			return -ENOMEM;
		memcpy(s->pids, o->pids, o->npids * sizeof(*s->pids));
	}
	s->opts.pids = s->pids;
	if (o->target == CTXMON_TARGET_CMD || o->argv) {
		if (!o->argv || !o->argv[0]) {
			fmt__buf(s->err, sizeof(s->err), "no command given");
			return -EINVAL;
		}
		while (o->argv[n])
			n++;
		s->argv = calloc(n + 1, sizeof(*s->argv));
		if (!s->argv)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (!(s->argv[i] = strdup(o->argv[i])))
				return -ENOMEM;
	}
	s->opts.argv = s->argv;
	if (!s->opts.events)
		s->opts.events = CTXMON_EVENTS_SCHED;
	s->opts.events |= CTXMON_EVENTS_SCHED;
	return 0;
}

/* Try one backend; on failure its reason is left in s->err. */
static int try_backend(struct ctxmon_session *s, const struct backend_entry *be,
		       const char *tracefs_err)
{
	int ret;

	s->err[0] = '\0';
	if (s->cgroup[0] && strncmp(be->ops->name, "bpf", 3)) {
		fmt__buf(s->err, sizeof(s->err),
			 "backend %s cannot filter by cgroup (--cgroup needs "
			 "the bpf or bpf-agg backend)", be->ops->name);
		return -EOPNOTSUPP;
	}
	if (be->needs_tracefs && !s->tracefs[0]) {
		fmt__buf(s->err, sizeof(s->err), "%s", tracefs_err);
		return -ENOENT;
	}
	ret = be->ops->open(&s->ctx, &s->priv);
	if (ret == 0)
		s->be = be;
	else if (!s->err[0])
		fmt__buf(s->err, sizeof(s->err), "backend %s: %s", be->ops->name,
			 strerror(-ret));
	return ret;
}

static int open_backend(struct ctxmon_session *s, const char *tracefs_err)
{
	const char *name = s->opts.backend;
	const struct backend_entry *be;
	int ret = -ENOENT;

	if (name && strcmp(name, "auto")) {
		be = backend__find(name);
		if (!be) {
			fmt__buf(s->err, sizeof(s->err),
				 "unknown backend '%s' (try --backend auto)", name);
			return -EINVAL;
		}
		return try_backend(s, be, tracefs_err);
	}
	for (size_t i = 0; i < nbackends; i++) {
		if (!backends[i].in_auto)
			continue;
		ret = try_backend(s, &backends[i], tracefs_err);
		if (ret == 0) {
			char order[128] = "";

			for (size_t j = 0; j < nbackends; j++)
				if (backends[j].in_auto)
					snprintf(order + strlen(order),
						 sizeof(order) - strlen(order),
						 "%s%s", order[0] ? ", " : "",
						 backends[j].ops->name);
			logf_(s, "backend: chose %s, the first of auto's order "
				 "(%s) that loads here\n",
			      backends[i].ops->name, order);
			return 0;
		}
		logf_(s, "backend: %s not used: %s\n", backends[i].ops->name,
		      s->err);
	}
	return ret;
}

struct ctxmon_session *ctxmon_session_open(const struct ctxmon_session_opts *o)
{
	struct ctxmon_session *s;
	char tferr[256] = "";
	int ret;

	err__clear();
	if (!o || o->sz < offsetof(struct ctxmon_session_opts, events)) {
		err__set("invalid options");
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err__set("out of memory");
		return NULL;
	}
	s->child = -1;
	ret = copy_opts(s, o);
	if (ret < 0)
		goto fail;
	ret = cpus__probe(&s->ncpus, &s->online);
	if (ret < 0)
		goto fail;
	s->strs = strtab__new();
	s->st = stream__new(s->ncpus);
	if (!s->strs || !s->st) {
		ret = -ENOMEM;
		goto fail;
	}
	if (o->sz >= offsetof(struct ctxmon_session_opts, cgroup) +
			     sizeof(o->cgroup) &&
	    o->cgroup) {
		ret = cgroup2__resolve(o->cgroup, s->cgroup, sizeof(s->cgroup),
				       NULL, s->err, sizeof(s->err));
		if (ret < 0)
			goto fail;
	}
	if (tracefs__find(s->opts.tracefs, s->opts.mount_tracefs, s->tracefs,
			  sizeof(s->tracefs), tferr, sizeof(tferr)) < 0)
		s->tracefs[0] = '\0';

	s->ctx = (struct backend_ctx){
		.ncpus = s->ncpus,
		.online = s->online,
		.tracefs = s->tracefs,
		.events = s->opts.events,
		.buffer_kb = s->opts.buffer_kb,
		.target = s->opts.target,
		.pids = s->pids,
		.npids = s->opts.npids,
		.root_pid = 0,
		.strs = s->strs,
		.stream = s->st,
		.verbose = s->opts.verbose,
		.cgroup = s->cgroup[0] ? s->cgroup : NULL,
		.err = s->err,
		.errlen = sizeof(s->err),
	};
	ret = open_backend(s, tferr);
	if (ret < 0)
		goto fail;
	return s;
fail:
	if (ret == -ENOMEM && !s->err[0])
		fmt__buf(s->err, sizeof(s->err), "out of memory");
	err__set("%s",
		 s->err[0] ? s->err : strerror(-ret));
	ctxmon_session_close(s);
	errno = -ret;
	return NULL;
}

/* Find @cmd like execvp would; 0, -ENOENT or -EACCES. */
static int lookup_cmd(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int ret = -ENOENT;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0 ? 0 : -errno;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		int len = (int)(end - path);

		snprintf(buf, sizeof(buf), "%.*s/%s", len ? len : 1,
			 len ? path : ".", cmd);
		if (access(buf, X_OK) == 0) {
			struct stat sb;

			if (stat(buf, &sb) == 0 && S_ISREG(sb.st_mode))
				return 0;
		} else if (errno == EACCES) {
			ret = -EACCES;
		}
		path = *end ? end + 1 : end;
	}
	return ret;
}

static void child_run(struct ctxmon_session *s, int go_fd, int err_fd)
{
	sigset_t none;
	char c;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* Blocks until capture is live; this read is the command's first
	 * voluntary switch, and it is traced. */
	while (read(go_fd, &c, 1) < 0 && errno == EINTR)
		;
	close(go_fd);
	execvp(s->argv[0], s->argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

static int launch(struct ctxmon_session *s)
{
	int go[2] = { -1, -1 }, ep[2] = { -1, -1 };
	int ret, e = 0;
	ssize_t n;

	ret = lookup_cmd(s->argv[0]);
	if (ret < 0) {
		fmt__buf(s->err, sizeof(s->err), "%s: %s", s->argv[0],
			 ret == -ENOENT ? "command not found" : strerror(-ret));
		return ret;
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		ret = -errno;
		goto out;
	}
	fflush(NULL);
	s->child = fork();
	if (s->child < 0) {
		ret = -errno;
		goto out;
	}
	if (s->child == 0) {
		close(go[1]);
		close(ep[0]);
		child_run(s, go[0], ep[1]);
	}
	close(go[0]);
	close(ep[1]);
	go[0] = ep[1] = -1;
	s->ctx.root_pid = s->child;
	if (s->be->ops->attach) {
		/* The child waits on the pipe: a backend that follows tasks
		 * attaches before it runs the command. */
		ret = s->be->ops->attach(s->priv, s->child);
		if (ret < 0) {
			kill(s->child, SIGKILL);
			waitpid(s->child, NULL, 0);
			s->reaped = true;
			goto out;
		}
	}
	if (write(go[1], "g", 1) != 1) {
		ret = -errno;
		goto out;
	}
	close(go[1]);
	go[1] = -1;
	/* EOF: exec succeeded (the pipe is close-on-exec). */
	do
		n = read(ep[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(e)) {
		fmt__buf(s->err, sizeof(s->err), "%s: %s", s->argv[0],
			 e == ENOENT ? "command not found" : strerror(e));
		waitpid(s->child, NULL, 0);
		s->reaped = true;
		ret = -e;
	}
out:
	if (ret < 0 && !s->err[0])
		fmt__buf(s->err, sizeof(s->err), "cannot start %s: %s",
			 s->argv[0], strerror(-ret));
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ep[i] >= 0)
			close(ep[i]);
	}
	return ret;
}

int ctxmon_session_start(struct ctxmon_session *s)
{
	int ret;

	if (s->enabled)
		return -EALREADY;
	s->start_ts = clock__now_ns();
	stream__set_start(s->st, s->start_ts);
	ret = s->be->ops->enable(s->priv);
	if (ret < 0) {
		if (!s->err[0])
			fmt__buf(s->err, sizeof(s->err), "cannot enable events: %s",
				 strerror(-ret));
		return ret;
	}
	s->enabled = true;
	if (s->argv)
		return launch(s);
	return 0;
}

static int deliver(struct ctxmon_session *s, ctxmon_event_fn fn, void *ctx,
		   bool all)
{
	uint64_t safe = 0;
	int ret = s->be->ops->read(s->priv, &safe);

	if (ret < 0) {
		fmt__buf(s->err, sizeof(s->err), "reading events: %s",
			 strerror(-ret));
		return ret;
	}
	return stream__deliver(s->st, all ? UINT64_MAX : safe, fn, ctx);
}

int ctxmon_session_poll(struct ctxmon_session *s, int timeout_ms,
			ctxmon_event_fn fn, void *ctx)
{
	int fd = s->be->ops->poll_fd ? s->be->ops->poll_fd(s->priv) : -1;

	if (s->stopped)
		return 0;
	if (timeout_ms != 0) {
		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			if (poll(&p, 1, timeout_ms) < 0)
				return -errno;
		} else {
			struct timespec ts = { timeout_ms / 1000,
					       (timeout_ms % 1000) * 1000000L };

			if (timeout_ms > 0 && nanosleep(&ts, NULL) < 0)
				return -errno;
		}
	}
	return deliver(s, fn, ctx, false);
}

int ctxmon_session_stop(struct ctxmon_session *s, ctxmon_event_fn fn, void *ctx)
{
	int ret;

	if (s->stopped)
		return 0;
	if (s->enabled)
		s->be->ops->disable(s->priv);
	s->stop_ts = clock__now_ns();
	s->stopped = true;
	ret = deliver(s, fn, ctx, true);
	return ret < 0 ? ret : 0;
}

int ctxmon_session_get_stats(const struct ctxmon_session *s,
			     struct ctxmon_session_stats *out)
{
	memset(out, 0, sizeof(*out));
	stream__stats(s->st, out);
	out->start_ts = s->start_ts;
	out->stop_ts = s->stop_ts;
	return 0;
}

const char *ctxmon_session_backend(const struct ctxmon_session *s)
{
	return s->be ? s->be->ops->name : "none";
}

unsigned ctxmon_session_events(const struct ctxmon_session *s)
{
	unsigned ev = s->opts.events | CTXMON_EVENTS_WAKEUP_ALL;

	return s->ctx.wakeups_thinned ? ev & ~CTXMON_EVENTS_WAKEUP_ALL : ev;
}

pid_t ctxmon_session_child(const struct ctxmon_session *s)
{
	return s->child;
}

int ctxmon_session_reap_child(struct ctxmon_session *s, bool block,
			      int *status, struct rusage *ru)
{
	struct rusage r;
	int st = 0;
	pid_t p;

	if (s->child < 0 || s->reaped)
		return -ECHILD;
	/*
	 * The parent can reap a zombie between exit_notify() and its last
	 * switch-out, and that switch then never reaches the rusage (seen
	 * about once in 50 runs of a busy two-thread command).  So look
	 * first, without reaping, and give it a moment to leave its CPU.
	 */
	do {
		siginfo_t si = { 0 };

		p = waitid(P_PID, (id_t)s->child, &si,
			   WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
		if (p == 0 && !si.si_pid)
			return 0;
	} while (p < 0 && errno == EINTR && block);
	if (p == 0) {
		usleep(1000);
		/* a counting backend takes its last look at the zombie, and
		 * perf-switch settles its last switches with it */
		if (s->be && s->enabled && !s->stopped) {
			uint64_t safe;

			s->be->ops->read(s->priv, &safe);
		}
	}
	do
		p = wait4(s->child, &st, block ? 0 : WNOHANG, &r);
	while (p < 0 && errno == EINTR && block);
	if (p < 0)
		return -errno;
	if (p == 0)
		return 0;
	s->reaped = true;
	if (status)
		*status = st;
	if (ru)
		*ru = r;
	return 1;
}

void session__forget_exited(struct ctxmon_session *s)
{
	if (s->be && s->be->ops->forget_exited)
		s->be->ops->forget_exited(s->priv);
}

int ctxmon_session_kernel_ns(struct ctxmon_session *s, uint64_t *ns)
{
	if (!s || !ns || !s->be || !s->be->ops->kernel_ns || !s->priv)
		return -EOPNOTSUPP;
	return s->be->ops->kernel_ns(s->priv, ns);
}

unsigned ctxmon_session_caps(const struct ctxmon_session *s)
{
	return s && s->be ? s->be->ops->caps | s->ctx.caps_more : 0;
}

unsigned ctxmon_backend_caps(const char *name)
{
	const struct backend_entry *e = name ? backend__find(name) : NULL;

	return e ? e->ops->caps : 0;
}

const char *ctxmon_backend_name(size_t i)
{
	return i < nbackends ? backends[i].ops->name : NULL;
}

const char *ctxmon_backend_with(unsigned caps)
{
	for (size_t i = 0; i < nbackends; i++)
		if ((backends[i].ops->caps & caps) == caps)
			return backends[i].ops->name;
	return NULL;
}

uint64_t ctxmon_clock_ns(void)
{
	return clock__now_ns();
}

static bool session_counting(const struct ctxmon_session *s)
{
	return s->be && s->be->ops->read_rows;
}

int session__read_rows(struct ctxmon_session *s, uint64_t *now,
		       struct ctxmon_stats **rows, size_t *n, bool interval,
		       bool *ival_max)
{
	int ret;

	*ival_max = false;
	if (!session_counting(s))
		return -EOPNOTSUPP;
	ret = s->be->ops->read_rows(s->priv, now, rows, n, interval, ival_max);
	if (ret < 0 && !s->err[0])
		fmt__buf(s->err, sizeof(s->err), "reading counters: %s",
			 strerror(-ret));
	return ret;
}

int session__read_cpus(struct ctxmon_session *s, uint64_t now,
		       struct ctxmon_cpu_stats **cpus, size_t *n)
{
	if (!s->be || !s->be->ops->read_cpus)
		return -EOPNOTSUPP;
	return s->be->ops->read_cpus(s->priv, now, cpus, n);
}

const char *ctxmon_session_limits(const struct ctxmon_session *s)
{
	return s && s->be ? s->be->ops->limits : NULL;
}

const char *ctxmon_session_error(const struct ctxmon_session *s)
{
	return s->err;
}

const char *ctxmon_session_log(const struct ctxmon_session *s)
{
	return s->log;
}

void ctxmon_session_close(struct ctxmon_session *s)
{
	if (!s)
		return;
	if (s->be) {
		if (s->enabled && !s->stopped)
			s->be->ops->disable(s->priv);
		s->be->ops->close(s->priv);
	}
	if (s->argv)
		for (char **a = s->argv; *a; a++)
			free(*a);
	free(s->argv);
	free(s->pids);
	free(s->online);
	stream__free(s->st);
	strtab__free(s->strs);
	free(s);
}
