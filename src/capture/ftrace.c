/*
 * ftrace.c - capture backend on a private tracefs instance, reading the
 * per-CPU ring buffers in their binary form (trace_pipe_raw).  The
 * instance (ftrace_inst.c), its loss counters (ftrace_loss.c), the page
 * walker (ftrace_pages.c) and the set-up shared with the text backend
 * (ftrace_common.c) are apart.
 *
 * Order.  With non-blocking reads the kernel hands out partial pages too
 * (the reader copies the committed part of the page being written), so a
 * CPU read until EAGAIN holds nothing older than the time taken before
 * the read, except a record reserved just before and committed just after
 * (the stream's slack covers it).  A CPU read only part-way (a round reads
 * at most a buffer's worth, so one busy CPU cannot starve the others) is
 * complete only up to its last record, and the session is then woken
 * again at once.  safe_ts is the minimum over the CPUs, less the slack.
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

/* ---- the raw backend -------------------------------------------------- */

struct rcpu {
	int cpu;
	int fd; /* per_cpu/cpuN/trace_pipe_raw */
	uint8_t *pages; /* sub-buffers read this round */
	uint32_t *lens;
	size_t npages, cap;
	uint64_t last_ts; /* newest event read */
	bool drained; /* read until the kernel had nothing */
};

struct ftrace_priv {
	struct backend_ctx *ctx;
	struct ftrace_common c;
	struct rb_layout lay;
	struct rcpu *cpus;
	size_t ncpus;
	size_t max_pages; /* per CPU per round */
	bool stopping;
	/* events queued with a tgid not known then (see retag_held) */
	uint64_t unresolved;
	/* task_newtask, read apart from the decoder */
	struct newtask_fmt nt;
};

static void ft_close(void *priv);

static int load_layout(struct ftrace_priv *p)
{
	struct backend_ctx *ctx = p->ctx;
	char buf[2048];
	size_t kb;
	ssize_t n;

	n = ftrace__get(ctx->tracefs, "events/header_page", buf, sizeof(buf));
	if (n < 0 || rb_layout__parse(buf, &p->lay) < 0) {
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot read the ring-buffer page layout "
			 "(%s/events/header_page)",
			 ctx->tracefs);
		return n < 0 ? (int)n : -EINVAL;
	}
	/* sub-buffers may be larger than a page since 6.8 */
	n = ftrace__get(ftrace_inst__path(p->c.inst), "buffer_subbuf_size_kb", buf,
		sizeof(buf));
	p->lay.subbuf = n > 0 ? (uint32_t)strtoul(buf, NULL, 10) * 1024 : 0;
	if (!p->lay.subbuf)
		p->lay.subbuf = (uint32_t)sysconf(_SC_PAGESIZE);
	if (p->lay.subbuf <= p->lay.data_off) {
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: unexpected sub-buffer size %u",
			 p->lay.subbuf);
		return -EINVAL;
	}
	/* a round reads at most a buffer's worth (and 16 MiB), so one busy
	 * CPU cannot hold up the others nor a huge buffer fill our memory */
	kb = ftrace_inst__buffer_kb(p->c.inst);
	p->max_pages = kb * 1024 / p->lay.subbuf + 16;
	if (p->max_pages > (16u << 20) / p->lay.subbuf)
		p->max_pages = (16u << 20) / p->lay.subbuf;
	return 0;
}

static int open_cpus(struct ftrace_priv *p)
{
	struct backend_ctx *ctx = p->ctx;
	char rel[64];

	p->cpus = calloc((size_t)ctx->ncpus, sizeof(*p->cpus));
	if (!p->cpus)
		return -ENOMEM;
	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		struct rcpu *c = &p->cpus[p->ncpus];
		int fd, ret;

		if (!ctx->online[cpu])
			continue;
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		fd = ftrace_inst__open(p->c.inst, rel, O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			fmt__buf(ctx->err, ctx->errlen,
				 "ftrace: cannot open %s/%s: %s",
				 ftrace_inst__path(p->c.inst), rel,
				 strerror(-fd));
			return fd;
		}
		c->cpu = cpu;
		c->fd = fd;
		p->ncpus++;
		ret = ftrace_common__poll_add(&p->c, fd, (uint32_t)cpu);
		if (ret) {
			fmt__buf(ctx->err, ctx->errlen, "ftrace: epoll_ctl: %s",
				 strerror(-ret));
			return ret;
		}
	}
	if (!p->ncpus) {
		fmt__buf(ctx->err, ctx->errlen, "ftrace: no online CPU");
		return -ENODEV;
	}
	return 0;
}

static int ft_open(struct backend_ctx *ctx, void **privp)
{
	struct ftrace_priv *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->c.epfd = p->c.wake_fd = -1;
	/* wake the poller when a CPU's buffer is a quarter full */
	ret = ftrace_common__open(&p->c, ctx, 25);
	if (ret)
		goto out;
	ret = load_layout(p);
	if (ret)
		goto out;
	newtask_fmt__load(&p->nt, p->ctx->tracefs);
	ret = open_cpus(p);
out:
	if (ret) {
		ft_close(p);
		p = NULL;
	}
	*privp = p;
	return ret;
}

static int ft_enable(void *priv)
{
	struct ftrace_priv *p = priv;

	return ftrace_common__enable(&p->c, p->ctx);
}

static int ft_disable(void *priv)
{
	struct ftrace_priv *p = priv;

	/* the next read drains what is left and settles the counts */
	p->stopping = true;
	return ftrace_common__disable(&p->c, p->ctx);
}

static int ft_poll_fd(void *priv)
{
	return ((struct ftrace_priv *)priv)->c.epfd;
}

static int grow_pages(struct ftrace_priv *p, struct rcpu *c)
{
	size_t cap = c->cap ? c->cap * 2 : 16;
	uint8_t *pages;
	uint32_t *lens;

	if (cap > p->max_pages)
		cap = p->max_pages;
	pages = realloc(c->pages, cap * p->lay.subbuf);
	if (!pages)
		return -ENOMEM;
	c->pages = pages;
	lens = realloc(c->lens, cap * sizeof(*lens));
	if (!lens)
		return -ENOMEM;
	c->lens = lens;
	c->cap = cap;
	return 0;
}

/* Read the CPU's sub-buffers until the kernel has none (or the bound). */
static int drain(struct ftrace_priv *p, struct rcpu *c)
{
	c->npages = 0;
	c->drained = false;
	while (c->npages < p->max_pages) {
		ssize_t n;
		int ret;

		if (c->npages == c->cap) {
			ret = grow_pages(p, c);
			if (ret)
				return ret;
		}
		n = read(c->fd, c->pages + c->npages * p->lay.subbuf,
			 p->lay.subbuf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->drained = true;
			break;
		}
		if (n < 0)
			return -errno;
		if (n == 0) {
			c->drained = true;
			break;
		}
		c->lens[c->npages++] = (uint32_t)n;
	}
	return 0;
}

/* Every CPU's task_newtask records of the round, before any event of the
 * round is decoded: a child can run on another CPU than its parent, and
 * that CPU may be decoded first.  They are learnt in time order, not CPU
 * by CPU: a thread's task_newtask needs its process's, which may be on a
 * CPU read later in the round (and /proc no longer knows a process that
 * has exited since).  Returns how many were learnt. */
static size_t learn_tasks(struct ftrace_priv *p)
{
	struct tgid_newtask *nt = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < p->ncpus && p->nt.id > 0; i++) {
		struct rcpu *c = &p->cpus[i];

		for (size_t k = 0; k < c->npages; k++) {
			const uint8_t *rec;
			struct rb_page pg;
			uint32_t len;
			uint64_t ts;

			if (rb_page__open(&pg, &p->lay,
					  c->pages + k * p->lay.subbuf,
					  c->lens[k]) < 0)
				continue;
			while (rb_page__next(&pg, &rec, &len, &ts) > 0) {
				if (!newtask_fmt__is(&p->nt, rec, len))
					continue;
				if (n == cap) {
					size_t nc = cap ? cap * 2 : 64;
					struct tgid_newtask *g =
						realloc(nt, nc * sizeof(*nt));

					if (!g)
						break; /* learnt from /proc */
					nt = g;
					cap = nc;
				}
				nt[n++] = (struct tgid_newtask){
					.ts = ts,
					.flags = (uint64_t)tp_field__read(
						rec, len, &p->nt.flags),
					.parent = (int32_t)tp_field__read(
						rec, len, &p->nt.parent),
					.child = (int32_t)tp_field__read(
						rec, len, &p->nt.child),
				};
				ftrace_common__born(&p->c, nt[n - 1].child,
						    nt[n - 1].flags);
			}
		}
	}
	tgid_map__learn(p->c.tg, nt, n);
	free(nt);
	ftrace_common__follow_born(&p->c);
	return n;
}

/* The tgids an event names: the current task's, a switch's next, a
 * fork's child; -1 where not known yet.  @lookup: may read /proc.
 * Returns how many are still unknown. */
static unsigned resolve(struct tgid_map *tg, struct ctxmon_event *ev,
			bool lookup)
{
	unsigned unknown = 0;
	int32_t *f[2] = { NULL, NULL };
	int32_t t[2] = { 0, 0 };

	if (ev->type == CTXMON_EV_SWITCH) {
		f[0] = &ev->sw.next_tgid;
		t[0] = ev->sw.next_tid;
	} else if (ev->type == CTXMON_EV_FORK) {
		f[0] = &ev->fork.child_tgid;
		t[0] = ev->fork.child_tid;
		/* its task_newtask, read before the round's events */
		ev->fork.clone_parent =
			tgid_map__clone_parent(tg, ev->fork.child_tid, ev->ts);
	}
	f[1] = &ev->tgid;
	t[1] = ev->tid;
	for (int i = 0; i < 2; i++) {
		if (!f[i] || *f[i] >= 0 || t[i] <= 0)
			continue;
		*f[i] = lookup ? tgid_map__get_at(tg, t[i], ev->ts) :
				 tgid_map__known(tg, t[i], ev->ts);
		unknown += *f[i] < 0;
	}
	/* the current task of a switch is prev */
	if (ev->type == CTXMON_EV_SWITCH)
		ev->sw.prev_tgid = ev->tgid;
	return unknown;
}

static void retag_one(struct ctxmon_event *ev, void *ctx)
{
	struct ftrace_priv *p = ctx;

	if (ev->type != CTXMON_EV_LOST)
		p->unresolved += resolve(p->c.tg, ev, false) > 0;
}

/*
 * A task's events can be read a round before its task_newtask: a round
 * reads the CPUs one after the other, so the parent's CPU can be read
 * just before the record is written and the child's CPU after the child
 * ran.  If the task was gone when its events were decoded, /proc could
 * not tell its process.  Such events still wait in the stream (the
 * parent's CPU was complete only up to before the task_newtask, so the
 * watermark is behind it); once the task_newtask is learnt they get
 * their tgid here, before they are delivered.
 */
static void retag_held(struct ftrace_priv *p)
{
	p->unresolved = 0;
	stream__for_each_held(p->ctx->stream, retag_one, p);
}

static void on_record(struct ftrace_priv *p, struct rcpu *c, const uint8_t *rec,
		      uint32_t len, uint64_t ts)
{
	struct stream *st = p->ctx->stream;
	struct ftrace_loss *l = &p->c.loss[c->cpu];
	struct ctxmon_event *ev;
	int ret;

	if (newtask_fmt__is(&p->nt, rec, len))
		return;
	ftrace_loss__flush(l, st, c->cpu, ts);
	ev = stream__slot(st, c->cpu);
	if (!ev) {
		stream__lost(st, c->cpu, 1, ts);
		return;
	}
	ret = decoder__decode(p->c.dec, rec, len, ev);
	if (ret == -ENOENT)
		return; /* not an event ctxmon decodes */
	if (ret < 0) {
		/* a record we cannot read is an event lost, said so */
		stream__lost(st, c->cpu, 1, ts);
		return;
	}
	ev->ts = ts;
	ev->cpu = c->cpu;
	ev->tgid = -1;
	if (ev->type == CTXMON_EV_SWITCH)
		ev->sw.next_tgid = -1;
	else if (ev->type == CTXMON_EV_FORK)
		ev->fork.child_tgid = -1;
	p->unresolved += resolve(p->c.tg, ev, true) > 0;
	stream__commit(st, c->cpu);
	c->last_ts = ts;
}

static void decode_cpu(struct ftrace_priv *p, struct rcpu *c)
{
	struct ftrace_loss *l = &p->c.loss[c->cpu];

	for (size_t k = 0; k < c->npages; k++) {
		const uint8_t *rec;
		struct rb_page pg;
		uint32_t len;
		uint64_t ts;
		int r;

		if (rb_page__open(&pg, &p->lay, c->pages + k * p->lay.subbuf,
				  c->lens[k]) < 0) {
			ftrace_loss__add(l, 0); /* a page we cannot read */
			continue;
		}
		if (pg.missed) {
			uint64_t n = pg.missed_count;

			/* Count not stored: the overwrites counted before
			 * this round's read, never more than the kernel had
			 * when it flagged the page; the rest is told at the
			 * end. */
			if (!pg.missed_known)
				n = l->now.overrun > l->overrun_told ?
					    l->now.overrun - l->overrun_told :
					    0;
			l->overrun_told += n;
			ftrace_loss__add(l, n);
		}
		while ((r = rb_page__next(&pg, &rec, &len, &ts)) > 0)
			on_record(p, c, rec, len, ts);
		if (r < 0)
			ftrace_loss__add(l, 0); /* the rest of the page */
	}
}

/*
 * One round: read every CPU (at most a bound each), learn the new tasks,
 * decode.  *@safe: the time up to which every CPU is complete; *@behind:
 * a CPU was left with data.
 */
static int ft_round(struct ftrace_priv *p, uint64_t now, uint64_t *safe,
		    bool *behind)
{
	int ret = 0;

	*safe = UINT64_MAX;
	*behind = false;
	for (size_t i = 0; i < p->ncpus && !ret; i++) {
		struct rcpu *c = &p->cpus[i];

		ftrace_loss__sample(&p->c.loss[c->cpu]);
		ret = drain(p, c);
	}
	if (ret) {
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "ftrace: reading trace_pipe_raw: %s", strerror(-ret));
		return ret;
	}
	if (learn_tasks(p) && p->unresolved)
		retag_held(p);
	for (size_t i = 0; i < p->ncpus; i++) {
		struct rcpu *c = &p->cpus[i];
		uint64_t done;

		decode_cpu(p, c);
		ftrace_loss__settle(&p->c.loss[c->cpu], false);
		done = c->drained ? now : c->last_ts;
		if (done < *safe)
			*safe = done;
		*behind |= !c->drained;
	}
	return 0;
}

static int ft_read(void *priv, uint64_t *safe_ts)
{
	struct ftrace_priv *p = priv;
	struct stream *st = p->ctx->stream;
	/* taken before any CPU is read: a CPU read until the kernel had
	 * nothing holds nothing older (less the slack) */
	uint64_t now = clock__now_ns(), safe;
	unsigned rounds = 1;
	bool behind;
	int ret;

	ftrace_common__behind(&p->c, false);
	ret = ft_round(p, now, &safe, &behind);
	/* after disable: everything, however many rounds it takes (tracing
	 * is off, so it ends; the bound is for a tracing_on that could not
	 * be written) */
	while (!ret && p->stopping && behind && rounds++ < 4096)
		ret = ft_round(p, now, &safe, &behind);
	if (ret)
		return ret;
	if (p->stopping) {
		/* the counts the flags could not carry, at the end */
		for (size_t i = 0; i < p->ncpus; i++) {
			struct rcpu *c = &p->cpus[i];
			struct ftrace_loss *l = &p->c.loss[c->cpu];

			ftrace_loss__sample(l);
			ftrace_loss__settle(l, true);
			ftrace_loss__flush(l, st, c->cpu,
					   c->last_ts > now ? c->last_ts : now);
		}
	}
	ftrace_common__behind(&p->c, behind);
	*safe_ts = safe > STREAM_SLACK_NS ? safe - STREAM_SLACK_NS : 0;
	return 0;
}

static void ft_close(void *priv)
{
	struct ftrace_priv *p = priv;

	if (!p)
		return;
	for (size_t i = 0; p->cpus && i < p->ncpus; i++) {
		close(p->cpus[i].fd);
		free(p->cpus[i].pages);
		free(p->cpus[i].lens);
	}
	free(p->cpus);
	/* after every file of the instance is closed: it removes it */
	ftrace_common__close(&p->c);
	free(p);
}

const struct backend_ops backend_ftrace = {
	.name = "ftrace",
	.open = ft_open,
	.enable = ft_enable,
	.disable = ft_disable,
	.poll_fd = ft_poll_fd,
	.read = ft_read,
	.close = ft_close,
	.caps = CTXMON_CAP_EVENTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS |
		CTXMON_CAP_PID_FILTER,
};
