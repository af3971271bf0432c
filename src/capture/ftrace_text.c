/*
 * ftrace_text.c - capture backend on the text trace_pipe of a private
 * tracefs instance: seed 000's "works but not recommended" path.
 *
 * The instance is the raw backend's (ftrace.c): same events, same
 * filter on the targets, the "mono" clock, nothing written outside it.
 * The kernel formats every event as a line (at most a page of text per
 * read) and ctxmon parses it back with the shared text parser
 * (decode/textparse.c), so this path costs several times more per event than
 * trace_pipe_raw and falls behind first under a flood, and its times have
 * the microseconds the kernel prints, not nanoseconds.  It is here for
 * set-ups where only the text form can be read, and as the live twin of
 * the text importer.
 *
 * Order.  trace_pipe merges the per-CPU buffers itself, always printing
 * the oldest head, so once a line stamped at or after the time taken
 * before reading comes out, or the pipe is empty, nothing older than that
 * time is left (less the stream's slack for records committed late).  A
 * round that stops early for its byte bound is complete only up to its
 * last line.
 *
 * Loss.  The kernel prints "CPU:n [LOST m EVENTS]" before the first event
 * after an overwrite, with the exact count; it is told to the stream just
 * before that event.  The per-CPU stats add what lines cannot show and
 * settle the totals at the end, as in ftrace.c.
 *
 * Tgids.  Without record-tgid (which would turn on a machine-wide tgid
 * recorder) lines carry no tgid: task_newtask lines give the new tasks',
 * /proc the rest.  The shared parser skips events ctxmon does not model,
 * task_newtask among them, so this file reads those lines itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/ftrace.h"
#include "decode/textparse.h"

/* Bytes read per round at most, so a flood cannot hold the poll loop. */
#define ROUND_BYTES (4u << 20)
/* Asked per read (the kernel gives at most a page of text). */
#define READ_CHUNK 65536

struct text_priv {
	struct backend_ctx *ctx;
	struct ftrace_common c;
	struct textparse *tp;
	int fd; /* the instance's trace_pipe */
	int *raw_fds; /* per-CPU trace_pipe_raw, polled, not read */
	char *buf; /* a partial line carried over, then data */
	size_t cap, used;
	uint64_t *last_ts; /* per CPU: the newest event */
	uint64_t last_line_ts; /* newest line of the round */
	bool stopping;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* An unsigned decimal in [s, e); false when there is none. */
static bool scan_uint(const char *s, const char *e, uint64_t *v,
		      const char **end)
{
	const char *d = s;

	*v = 0;
	while (s < e && is_digit(*s) && *v < UINT64_MAX / 10)
		*v = *v * 10 + (uint64_t)(*s++ - '0');
	*end = s;
	return s > d;
}

/*
 * At @s: "[cpu] [flags] secs.frac: name:".  True with the cpu and the
 * name.  The comm before it may hold anything, so every '[' is tried.
 */
static bool head_at(const char *s, const char *e, int *cpu, const char **name,
		    size_t *name_len)
{
	const char *p;
	uint64_t v, t;

	if (*s != '[' || !scan_uint(s + 1, e, &v, &p) || p >= e || *p != ']')
		return false;
	*cpu = v > 1u << 20 ? -1 : (int)v;
	p++;
	while (p < e && *p == ' ')
		p++;
	/* the irq-info column ("d..2.") when the option is on */
	if (p < e && !is_digit(*p)) {
		while (p < e && *p != ' ')
			p++;
		while (p < e && *p == ' ')
			p++;
	}
	if (!scan_uint(p, e, &t, &p))
		return false;
	if (p < e && *p == '.' && !scan_uint(p + 1, e, &t, &p))
		return false;
	if (p + 2 > e || p[0] != ':' || p[1] != ' ')
		return false;
	p += 2;
	*name = p;
	while (p < e && *p != ':' && *p != ' ')
		p++;
	if (p >= e || *p != ':' || p == *name)
		return false;
	*name_len = (size_t)(p - *name);
	return *cpu >= 0;
}

int ftrace_text__head(const char *line, size_t len, int32_t *tid, int *cpu,
		      const char **event, size_t *event_len)
{
	const char *e = line + len, *s;

	for (s = line; s < e; s++) {
		const char *t;
		uint64_t v;

		if (*s != '[' || !head_at(s, e, cpu, event, event_len))
			continue;
		/* "comm-tid" then spaces, or "comm-tid (tgid)" */
		t = s;
		while (t > line && t[-1] == ' ')
			t--;
		if (t > line && t[-1] == ')') {
			while (t > line && t[-1] != '(')
				t--;
			if (t > line)
				t--;
			while (t > line && t[-1] == ' ')
				t--;
		}
		while (t > line && is_digit(t[-1]))
			t--;
		if (t == line || t[-1] != '-')
			continue;
		if (!scan_uint(t, e, &v, &t) || v > INT32_MAX)
			continue;
		*tid = (int32_t)v;
		return 0;
	}
	return -EINVAL;
}

/* The value after the last " @key" in [s, e), parsed in @base. */
static bool field_after(const char *s, const char *e, const char *key, int base,
			uint64_t *v)
{
	size_t klen = strlen(key);
	const char *hit = NULL;
	char num[32], *end;
	size_t n = 0;

	for (const char *p = s; p + klen <= e; p++)
		if (!memcmp(p, key, klen))
			hit = p + klen;
	if (!hit)
		return false;
	while (hit + n < e && n < sizeof(num) - 1 && hit[n] != ' ' &&
	       hit[n] != '\n')
		n++;
	memcpy(num, hit, n);
	num[n] = '\0';
	errno = 0;
	*v = strtoull(num, &end, base);
	return n && !*end && !errno;
}

int ftrace_text__newtask(const char *line, size_t len, int32_t *parent,
			 int32_t *child, uint64_t *clone_flags)
{
	static const char name[] = "task_newtask";
	const char *ev, *e = line + len;
	size_t elen;
	uint64_t pid;
	int cpu;

	/* every line comes here first: the cheap test before the parse */
	if (!memmem(line, len, ": task_newtask: ", 16))
		return 0;
	if (ftrace_text__head(line, len, parent, &cpu, &ev, &elen) < 0 ||
	    elen != sizeof(name) - 1 || memcmp(ev, name, elen))
		return 0;
	ev += elen + 1;
	/* "pid=%d comm=%s clone_flags=%llx oom_score_adj=%hd": the pid
	 * comes first, the flags after a comm that may hold anything */
	while (ev < e && *ev == ' ')
		ev++;
	if (e - ev < 4 || memcmp(ev, "pid=", 4) ||
	    !scan_uint(ev + 4, e, &pid, &ev) || pid == 0 || pid > INT32_MAX ||
	    !field_after(ev, e, " clone_flags=", 16, clone_flags))
		return -EINVAL;
	*child = (int32_t)pid;
	return 1;
}

static void text_close(void *priv);

/*
 * trace_pipe's own poll wakes on any event (it waits on every CPU, where
 * the kernel ignores buffer_percent), which would turn a busy machine
 * into a wake-up per event.  The per-CPU trace_pipe_raw files of the
 * same buffer wake when one is buffer_percent full; they are only polled,
 * never read.  A CPU whose file does not open is left to the timeout.
 */
static int watch_cpus(struct text_priv *p)
{
	char rel[64];
	int ret;

	for (int cpu = 0; cpu < p->ctx->ncpus; cpu++) {
		int fd;

		if (!p->ctx->online[cpu])
			continue;
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		fd = ftrace_inst__open(p->c.inst, rel, O_RDONLY | O_NONBLOCK);
		if (fd < 0)
			continue;
		p->raw_fds[cpu] = fd;
		ret = ftrace_common__poll_add(&p->c, fd, (uint32_t)cpu);
		if (ret)
			return ret;
	}
	return 0;
}

static int text_open(struct backend_ctx *ctx, void **privp)
{
	struct text_priv *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->fd = -1;
	p->c.epfd = p->c.wake_fd = -1;
	p->cap = READ_CHUNK + TEXTPARSE_LINE_MAX + 1;
	p->buf = malloc(p->cap);
	p->last_ts = calloc((size_t)ctx->ncpus, sizeof(*p->last_ts));
	p->raw_fds = malloc((size_t)ctx->ncpus * sizeof(*p->raw_fds));
	for (int i = 0; p->raw_fds && i < ctx->ncpus; i++)
		p->raw_fds[i] = -1;
	p->tp = textparse__new(ctx->strs);
	if (!p->buf || !p->last_ts || !p->raw_fds || !p->tp) {
		ret = -ENOMEM;
		fmt__buf(ctx->err, ctx->errlen, "out of memory");
		goto out;
	}
	ret = ftrace_common__open(&p->c, ctx, 25);
	if (ret)
		goto out;
	p->fd = ftrace_inst__open(p->c.inst, "trace_pipe",
				  O_RDONLY | O_NONBLOCK);
	if (p->fd < 0) {
		ret = p->fd;
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot open %s/trace_pipe: %s",
			 ftrace_inst__path(p->c.inst), strerror(-ret));
		goto out;
	}
	ret = watch_cpus(p);
	if (ret)
		fmt__buf(ctx->err, ctx->errlen, "ftrace: epoll_ctl: %s",
			 strerror(-ret));
out:
	if (ret) {
		text_close(p);
		p = NULL;
	}
	*privp = p;
	return ret;
}

static int text_enable(void *priv)
{
	struct text_priv *p = priv;

	return ftrace_common__enable(&p->c, p->ctx);
}

static int text_disable(void *priv)
{
	struct text_priv *p = priv;

	p->stopping = true;
	return ftrace_common__disable(&p->c, p->ctx);
}

static int text_poll_fd(void *priv)
{
	return ((struct text_priv *)priv)->c.epfd;
}

static bool cpu_ok(const struct text_priv *p, int cpu)
{
	return cpu >= 0 && cpu < p->ctx->ncpus;
}

/* A line that does not parse is an event lost on its CPU.  (One whose
 * head does not parse either has no CPU to tell it on: trace_pipe only
 * prints such lines for events ctxmon does not enable.) */
static void bad_line(struct text_priv *p, const char *line, size_t len)
{
	const char *ev;
	size_t elen;
	int32_t tid;
	int cpu;

	if (ftrace_text__head(line, len, &tid, &cpu, &ev, &elen) == 0 &&
	    cpu_ok(p, cpu))
		ftrace_loss__add(&p->c.loss[cpu], 1);
}

static void on_event(struct text_priv *p, const struct ctxmon_event *src)
{
	struct stream *st = p->ctx->stream;
	struct tgid_map *tg = p->c.tg;
	struct ctxmon_event *ev;
	int cpu = src->cpu;

	if (!cpu_ok(p, cpu) || src->type == CTXMON_EV_LOST)
		return;
	if (src->ts > p->last_line_ts)
		p->last_line_ts = src->ts;
	ftrace_loss__flush(&p->c.loss[cpu], st, cpu, src->ts);
	ev = stream__slot(st, cpu);
	if (!ev) {
		stream__lost(st, cpu, 1, src->ts);
		return;
	}
	*ev = *src;
	if (ev->tgid <= 0 && ev->tid >= 0)
		ev->tgid = tgid_map__get(tg, ev->tid);
	if (ev->type == CTXMON_EV_SWITCH) {
		ev->sw.prev_tgid = ev->tgid;
		ev->sw.next_tgid = tgid_map__get(tg, ev->sw.next_tid);
	} else if (ev->type == CTXMON_EV_FORK) {
		ev->fork.child_tgid = tgid_map__get(tg, ev->fork.child_tid);
		ev->fork.clone_parent =
			tgid_map__clone_parent(tg, ev->fork.child_tid, ev->ts);
	}
	stream__commit(st, cpu);
	p->last_ts[cpu] = ev->ts;
}

static void on_line(struct text_priv *p, const char *line, size_t len)
{
	struct textparse_line out;
	int32_t parent, child;
	uint64_t flags;
	const char *why = "";
	int ret;

	/* trace_pipe is one merged stream: the new task is learnt before
	 * any line of it */
	ret = ftrace_text__newtask(line, len, &parent, &child, &flags);
	if (ret == 1) {
		tgid_map__newtask(p->c.tg, parent, child, flags, 0);
		ftrace_common__born(&p->c, child, flags);
		return;
	}
	ret = textparse__line(p->tp, line, len, &out, &why);
	if (ret == 0)
		return;
	if (ret < 0) {
		bad_line(p, line, len);
		return;
	}
	if (out.kind == TP_LOST) {
		if (cpu_ok(p, out.lost_cpu)) {
			struct ftrace_loss *l = &p->c.loss[out.lost_cpu];

			l->overrun_told += out.lost_count;
			ftrace_loss__add(l, out.lost_count);
		}
		return;
	}
	on_event(p, &out.ev);
}

/* Parse the complete lines of the buffer, keep the rest. */
static void parse_lines(struct text_priv *p, bool all)
{
	char *s = p->buf, *e = p->buf + p->used;

	for (;;) {
		char *nl = memchr(s, '\n', (size_t)(e - s));

		if (!nl)
			break;
		on_line(p, s, (size_t)(nl - s));
		s = nl + 1;
	}
	if (all && s < e) {
		on_line(p, s, (size_t)(e - s));
		s = e;
	}
	/* a line longer than the parser takes is cut, and reported bad */
	if (s == p->buf && (size_t)(e - s) > TEXTPARSE_LINE_MAX) {
		bad_line(p, s, (size_t)(e - s));
		s = e;
	}
	p->used = (size_t)(e - s);
	memmove(p->buf, s, p->used);
}

static int text_read(void *priv, uint64_t *safe_ts)
{
	struct text_priv *p = priv;
	struct stream *st = p->ctx->stream;
	uint64_t now = clock__now_ns(), done;
	bool final = p->stopping, empty = false;
	size_t bytes = 0, reads = 0;

	p->last_line_ts = 0;
	ftrace_common__behind(&p->c, false);
	/* After disable, everything: tracing is off, so it ends (the bound
	 * is for a tracing_on that could not be written). */
	while (final ? reads++ < (1u << 22) : bytes < ROUND_BYTES) {
		size_t room = p->cap - p->used - 1;
		ssize_t n;

		n = read(p->fd, p->buf + p->used,
			 room > READ_CHUNK ? READ_CHUNK : room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			empty = true;
			break;
		}
		if (n < 0) {
			int err = errno;

			fmt__buf(p->ctx->err, p->ctx->errlen,
				 "ftrace: reading %s/trace_pipe: %s",
				 ftrace_inst__path(p->c.inst), strerror(err));
			return -err;
		}
		if (n == 0) {
			empty = true;
			break;
		}
		p->used += (size_t)n;
		bytes += (size_t)n;
		parse_lines(p, false);
		/* merged in time order: every CPU is read past now */
		if (!final && p->last_line_ts >= now)
			break;
	}
	if (final)
		parse_lines(p, true);
	ftrace_common__follow_born(&p->c);
	for (int cpu = 0; cpu < p->ctx->ncpus; cpu++) {
		struct ftrace_loss *l = &p->c.loss[cpu];

		ftrace_loss__sample(l);
		ftrace_loss__settle(l, final && empty);
		if (final)
			ftrace_loss__flush(
				l, st, cpu,
				p->last_ts[cpu] > now ? p->last_ts[cpu] : now);
	}
	done = empty || p->last_line_ts >= now ? now : p->last_line_ts;
	ftrace_common__behind(&p->c, done < now);
	*safe_ts = done > STREAM_SLACK_NS ? done - STREAM_SLACK_NS : 0;
	return 0;
}

static void text_close(void *priv)
{
	struct text_priv *p = priv;

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	for (int i = 0; p->raw_fds && i < p->ctx->ncpus; i++)
		if (p->raw_fds[i] >= 0)
			close(p->raw_fds[i]);
	free(p->raw_fds);
	ftrace_common__close(&p->c);
	textparse__free(p->tp);
	free(p->last_ts);
	free(p->buf);
	free(p);
}

const struct backend_ops backend_ftrace_text = {
	.name = "ftrace-text",
	.open = text_open,
	.enable = text_enable,
	.disable = text_disable,
	.poll_fd = text_poll_fd,
	.read = text_read,
	.close = text_close,
	.caps = CTXMON_CAP_TEXT | CTXMON_CAP_EVENTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS |
		CTXMON_CAP_PID_FILTER,
};
