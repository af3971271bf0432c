/*
 * ftrace_common.c - what both ftrace backends set up alike: the tid ->
 * tgid map, the task filter, the instance, the poll set
 * (capture/ftrace.h).
 *
 * Tgids.  A trace record has only the tid.  The tgid of each task is
 * learnt from task_newtask (its clone flags say thread or process), read
 * from the pages of a round before the round's events are decoded, and
 * else looked up once in /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/ftrace.h"


/* ---- tid -> tgid ------------------------------------------------------ */

struct tgid_map {
	char proc[256];
	int32_t *keys; /* 0: empty slot */
	int32_t *vals;
	uint64_t *born; /* task_newtask time of the entry, 0: not known */
	uint8_t *cparent; /* a process started with CLONE_PARENT */
	size_t cap, n;
	uint64_t lookups;
};

struct tgid_map *tgid_map__new(const char *proc)
{
	struct tgid_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	fmt__buf(m->proc, sizeof(m->proc), "%s", proc ? proc : "/proc");
	m->cap = 1024;
	m->keys = calloc(m->cap, sizeof(*m->keys));
	m->vals = calloc(m->cap, sizeof(*m->vals));
	m->born = calloc(m->cap, sizeof(*m->born));
	m->cparent = calloc(m->cap, sizeof(*m->cparent));
	if (!m->keys || !m->vals || !m->born || !m->cparent) {
		tgid_map__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void tgid_map__free(struct tgid_map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	free(m->born);
	free(m->cparent);
	free(m);
}

static size_t map_slot(const int32_t *keys, size_t cap, int32_t tid)
{
	size_t i = ((uint32_t)tid * 2654435761u) & (cap - 1);

	while (keys[i] && keys[i] != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

static int map_grow(struct tgid_map *m)
{
	size_t cap = m->cap * 2;
	int32_t *keys = calloc(cap, sizeof(*keys));
	int32_t *vals = calloc(cap, sizeof(*vals));
	uint64_t *born = calloc(cap, sizeof(*born));
	uint8_t *cparent = calloc(cap, sizeof(*cparent));

	if (!keys || !vals || !born || !cparent) {
		free(keys);
		free(vals);
		free(born);
		free(cparent);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		j = map_slot(keys, cap, m->keys[i]);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
		born[j] = m->born[i];
		cparent[j] = m->cparent[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->born);
	free(m->cparent);
	m->keys = keys;
	m->vals = vals;
	m->born = born;
	m->cparent = cparent;
	m->cap = cap;
	return 0;
}

static int map_put(struct tgid_map *m, int32_t tid, int32_t tgid,
		   uint64_t born, bool cparent)
{
	size_t i;

	if (tid <= 0)
		return 0;
	if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return -ENOMEM;
	i = map_slot(m->keys, m->cap, tid);
	if (!m->keys[i]) {
		m->keys[i] = tid;
		m->n++;
	}
	m->vals[i] = tgid;
	m->born[i] = born;
	m->cparent[i] = cparent;
	return 0;
}

int tgid_map__set(struct tgid_map *m, int32_t tid, int32_t tgid)
{
	return map_put(m, tid, tgid, 0, false);
}

/* Tgid of @tid from <proc>/<tid>/status, -1 when the task is gone. */
static int32_t proc_tgid(struct tgid_map *m, int32_t tid)
{
	char path[320], buf[512];
	const char *t;
	int32_t tgid = -1;
	ssize_t n;
	int fd;

	m->lookups++;
	snprintf(path, sizeof(path), "%s/%d/status", m->proc, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Tgid is the fourth line, well inside the first read */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	t = strstr(buf, "\nTgid:");
	if (t && sscanf(t + 6, "%d", &tgid) != 1)
		tgid = -1;
	return tgid > 0 ? tgid : -1;
}

int32_t tgid_map__get(struct tgid_map *m, int32_t tid)
{
	return tgid_map__get_at(m, tid, UINT64_MAX);
}

int32_t tgid_map__get_at(struct tgid_map *m, int32_t tid, uint64_t ts)
{
	int32_t tgid;
	size_t i;

	if (tid <= 0)
		return tid == 0 ? 0 : -1;
	i = map_slot(m->keys, m->cap, tid);
	if (m->keys[i])
		/* a task created after @ts took the tid of one now gone */
		return m->born[i] <= ts ? m->vals[i] : -1;
	tgid = proc_tgid(m, tid);
	/* kept even when unknown: a dead tid is not looked up again (a
	 * reuse of it comes with its own task_newtask) */
	tgid_map__set(m, tid, tgid);
	return tgid;
}

int32_t tgid_map__known(const struct tgid_map *m, int32_t tid, uint64_t ts)
{
	size_t i;

	if (tid <= 0)
		return tid == 0 ? 0 : -1;
	i = map_slot(m->keys, m->cap, tid);
	if (!m->keys[i] || m->born[i] > ts)
		return -1;
	return m->vals[i];
}

int tgid_map__newtask(struct tgid_map *m, int32_t parent, int32_t child,
		      uint64_t clone_flags, uint64_t ts)
{
	int32_t tgid = child;

	/* ts 0: time unknown (text lines): the parent as it is now */
	if (clone_flags & CLONE_THREAD_FLAG)
		tgid = tgid_map__get_at(m, parent, ts ? ts : UINT64_MAX);
	/* born at least 1: 0 means "time unknown" */
	return map_put(m, child, tgid, ts ? ts : 1,
		       clone_flags__parent(clone_flags));
}

bool tgid_map__clone_parent(const struct tgid_map *m, int32_t tid,
			    uint64_t ts)
{
	size_t i;

	if (tid <= 0)
		return false;
	i = map_slot(m->keys, m->cap, tid);
	return m->keys[i] && m->born[i] <= ts && m->cparent[i];
}

static int cmp_newtask(const void *a, const void *b)
{
	const struct tgid_newtask *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

void tgid_map__learn(struct tgid_map *m, struct tgid_newtask *nt, size_t n)
{
	if (n > 1)
		qsort(nt, n, sizeof(*nt), cmp_newtask);
	for (size_t i = 0; i < n; i++)
		tgid_map__newtask(m, nt[i].parent, nt[i].child, nt[i].flags,
				  nt[i].ts);
}

uint64_t tgid_map__lookups(const struct tgid_map *m)
{
	return m->lookups;
}

/* ---- set-up shared by both backends ----------------------------------- */

void ftrace_common__close(struct ftrace_common *c)
{
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->epfd = c->wake_fd = -1;
	if (c->loss)
		for (int i = 0; i < c->ncpus; i++)
			ftrace_loss__close(&c->loss[i]);
	free(c->loss);
	c->loss = NULL;
	ftrace_inst__free(c->inst);
	c->inst = NULL;
	decoder__free(c->dec);
	c->dec = NULL;
	tgid_map__free(c->tg);
	c->tg = NULL;
	free(c->born);
	c->born = NULL;
	c->nborn = c->born_cap = 0;
}

void ftrace_common__born(struct ftrace_common *c, int32_t child,
			 uint64_t clone_flags)
{
	/* create_io_thread() and vhost_task_create(): the three together,
	 * which a thread from clone() hardly ever asks for.  Not every new
	 * task: one that a fork event added and that is gone by the time
	 * this is read (a short-lived child) would be added back, and its
	 * tid followed when reused. */
	const uint64_t worker =
		CLONE_THREAD_FLAG | CLONE_IO_FLAG | CLONE_UNTRACED_FLAG;

	if (child <= 0 || (clone_flags & worker) != worker || !c->inst ||
	    !ftrace_inst__filtered(c->inst))
		return;
	if (c->nborn == c->born_cap) {
		size_t cap = c->born_cap ? c->born_cap * 2 : 64;
		int32_t *b = realloc(c->born, cap * sizeof(*b));

		if (!b)
			return; /* left to the other side of its switches */
		c->born = b;
		c->born_cap = cap;
	}
	c->born[c->nborn++] = child;
}

/* Once per read.  A task the fork rule added already is added again,
 * which changes nothing. */
void ftrace_common__follow_born(struct ftrace_common *c)
{
	if (!c->nborn)
		return;
	ftrace_inst__follow(c->inst, c->born, c->nborn);
	c->nborn = 0;
}

/* Add the threads of process @pid to @list (grown); 0 or -ENOMEM. */
static int add_threads(pid_t pid, pid_t **list, size_t *n, size_t *cap)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0; /* gone: nothing to follow */
	while ((e = readdir(d)) && !ret) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			pid_t *l = realloc(*list, ncap * sizeof(*l));

			if (!l) {
				ret = -ENOMEM;
				break;
			}
			*list = l;
			*cap = ncap;
		}
		(*list)[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	return ret;
}

/*
 * The tasks to follow: for a command, the thread that opens the session
 * (it forks the command later; event-fork adds the child from its fork,
 * so its first switches, before exec, are recorded too); for -p, every
 * thread of the processes; for -t, the threads.  *@list is malloc'd.
 */
static int filter_pids(const struct backend_ctx *ctx, pid_t **list, size_t *n)
{
	size_t cap = 0;
	int ret = 0;

	*list = NULL;
	*n = 0;
	switch (ctx->target) {
	case CTXMON_TARGET_CMD:
		cap = 2;
		*list = malloc(cap * sizeof(**list));
		if (!*list)
			return -ENOMEM;
		(*list)[(*n)++] = getpid();
		if (gettid() != getpid())
			(*list)[(*n)++] = gettid();
		break;
	case CTXMON_TARGET_PIDS:
		for (size_t i = 0; i < ctx->npids && !ret; i++)
			ret = add_threads(ctx->pids[i], list, n, &cap);
		break;
	case CTXMON_TARGET_TIDS:
		if (!ctx->npids)
			break;
		*list = malloc(ctx->npids * sizeof(**list));
		if (!*list)
			return -ENOMEM;
		memcpy(*list, ctx->pids, ctx->npids * sizeof(**list));
		*n = ctx->npids;
		break;
	case CTXMON_TARGET_ALL:
		break;
	}
	return ret;
}

int ftrace_common__open(struct ftrace_common *c, struct backend_ctx *ctx,
			unsigned buffer_percent)
{
	const struct decoder_event *evs;
	struct ftrace_inst_opts o = { 0 };
	char names[32][64];
	const char *ev[32];
	bool req[32];
	pid_t *pids = NULL;
	size_t nev, n = 0, npids = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->ncpus = ctx->ncpus;
	c->epfd = c->wake_fd = -1;
	if (!ctx->tracefs || !*ctx->tracefs) {
		fmt__buf(ctx->err, ctx->errlen, "ftrace: tracefs not found");
		return -ENOENT;
	}
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->epfd < 0 || c->wake_fd < 0 ||
	    ftrace_common__poll_add(c, c->wake_fd, UINT32_MAX) < 0) {
		ret = -errno;
		fmt__buf(ctx->err, ctx->errlen, "ftrace: poll set-up: %s",
			 strerror(errno));
		goto out;
	}
	ftrace_inst__clean_stale(ctx->tracefs);
	c->dec = decoder__new(ctx->tracefs,
			      ctx->events ? ctx->events : CTXMON_EVENTS_SCHED,
			      ctx->strs, ctx->err, ctx->errlen);
	if (!c->dec) {
		ret = -errno;
		goto out;
	}
	nev = decoder__events(c->dec, &evs);
	for (size_t i = 0; i < nev && n < ARRAY_SIZE(ev) - 1; i++, n++) {
		snprintf(names[n], sizeof(names[n]), "%s/%s", evs[i].system,
			 evs[i].name);
		ev[n] = names[n];
		req[n] = evs[i].required;
	}
	/* tgids of new tasks; without it they come from /proc */
	ev[n] = "task/task_newtask";
	req[n++] = false;
	ret = filter_pids(ctx, &pids, &npids);
	if (ret) {
		fmt__buf(ctx->err, ctx->errlen, "out of memory");
		goto out;
	}
	o = (struct ftrace_inst_opts){
		.pids = pids,
		.npids = npids,
		.buffer_kb = ctx->buffer_kb,
		.buffer_kb_given = ctx->buffer_kb != 0,
		.buffer_percent = buffer_percent,
		.events = ev,
		.required = req,
		.nevents = n,
	};
	c->tg = tgid_map__new("/proc");
	c->loss = calloc((size_t)ctx->ncpus, sizeof(*c->loss));
	if (!c->tg || !c->loss) {
		ret = -ENOMEM;
		fmt__buf(ctx->err, ctx->errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < ctx->ncpus; i++)
		c->loss[i].fd = -1;
	c->inst = ftrace_inst__new(ctx->tracefs, &o, ctx->err, ctx->errlen);
	if (!c->inst) {
		ret = -errno;
		goto out;
	}
	for (int i = 0; i < ctx->ncpus; i++)
		if (ctx->online[i])
			ftrace_loss__open(&c->loss[i], c->inst, i);
out:
	free(pids);
	if (ret)
		ftrace_common__close(c);
	return ret;
}

int ftrace_common__poll_add(struct ftrace_common *c, int fd, uint32_t key)
{
	struct epoll_event ee = { .events = EPOLLIN, .data.u32 = key };

	return epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ee) < 0 ? -errno : 0;
}

void ftrace_common__behind(struct ftrace_common *c, bool behind)
{
	uint64_t v = 1;
	ssize_t n;

	/* EAGAIN is fine both ways: already signalled, or was not */
	n = behind ? write(c->wake_fd, &v, sizeof(v)) :
		     read(c->wake_fd, &v, sizeof(v));
	(void)n;
}

int ftrace_common__enable(struct ftrace_common *c, struct backend_ctx *ctx)
{
	int ret;

	for (int i = 0; i < c->ncpus; i++)
		ftrace_loss__baseline(&c->loss[i]);
	ret = ftrace_inst__tracing(c->inst, true);
	if (ret)
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot write %s/tracing_on: %s",
			 ftrace_inst__path(c->inst), strerror(-ret));
	return ret;
}

int ftrace_common__disable(struct ftrace_common *c, struct backend_ctx *ctx)
{
	int ret = ftrace_inst__tracing(c->inst, false);

	if (ret)
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot write %s/tracing_on: %s",
			 ftrace_inst__path(c->inst), strerror(-ret));
	return ret;
}
