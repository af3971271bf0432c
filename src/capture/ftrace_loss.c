/*
 * ftrace_loss.c - per-CPU counters of an ftrace instance and the losses
 * they tell (capture/ftrace.h).
 *
 * Loss.  The instance keeps the ring buffer's overwrite mode: when a CPU's
 * buffer is full its oldest page is overwritten, and the next page read
 * carries the missed-events flag, with the count when it fits in the page.
 * That places each loss exactly (between the CPU's last event and the
 * page's first); per_cpu/cpuN/stats gives the counts the flag could not
 * carry, and the drops of nested writers.
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

/* ---- per-CPU counters and loss -------------------------------------- */

static bool field_u64(const char *text, size_t len, const char *key,
		      uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) > klen && !memcmp(p, key, klen)) {
			char num[32];
			size_t n = (size_t)(le - p) - klen;
			char *e;

			if (n >= sizeof(num))
				n = sizeof(num) - 1;
			memcpy(num, p + klen, n);
			num[n] = '\0';
			*v = strtoull(num, &e, 10);
			return e != num;
		}
		p = le + 1;
	}
	return false;
}

int ftrace_stats__parse(const char *text, size_t len, struct ftrace_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!field_u64(text, len, "overrun:", &s->overrun))
		return -EINVAL;
	field_u64(text, len, "commit overrun:", &s->commit_overrun);
	field_u64(text, len, "dropped events:", &s->dropped);
	return 0;
}

void ftrace_loss__open(struct ftrace_loss *l, const struct ftrace_inst *in,
		       int cpu)
{
	char rel[64];

	memset(l, 0, sizeof(*l));
	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	l->fd = ftrace_inst__open(in, rel, O_RDONLY);
	if (l->fd < 0)
		l->fd = -1;
}

void ftrace_loss__close(struct ftrace_loss *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

static int read_stats(int fd, struct ftrace_stats *s)
{
	char buf[1024];
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return ftrace_stats__parse(buf, (size_t)n, s);
}

void ftrace_loss__baseline(struct ftrace_loss *l)
{
	if (read_stats(l->fd, &l->base) < 0)
		memset(&l->base, 0, sizeof(l->base));
	memset(&l->now, 0, sizeof(l->now));
}

static uint64_t since(uint64_t v, uint64_t base)
{
	return v > base ? v - base : 0;
}

int ftrace_loss__sample(struct ftrace_loss *l)
{
	struct ftrace_stats s;
	int ret = read_stats(l->fd, &s);

	if (ret)
		return ret;
	l->now.overrun = since(s.overrun, l->base.overrun);
	l->now.commit_overrun = since(s.commit_overrun, l->base.commit_overrun);
	l->now.dropped = since(s.dropped, l->base.dropped);
	return 0;
}

void ftrace_loss__add(struct ftrace_loss *l, uint64_t count)
{
	l->pending += count;
	l->has_pending = true;
}

void ftrace_loss__settle(struct ftrace_loss *l, bool final)
{
	uint64_t other = l->now.dropped + l->now.commit_overrun;

	if (other > l->other_told) {
		ftrace_loss__add(l, other - l->other_told);
		l->other_told = other;
	}
	if (final && l->now.overrun > l->overrun_told) {
		ftrace_loss__add(l, l->now.overrun - l->overrun_told);
		l->overrun_told = l->now.overrun;
	}
}

void ftrace_loss__flush(struct ftrace_loss *l, struct stream *st, int cpu,
			uint64_t ts)
{
	if (!l->has_pending)
		return;
	stream__lost(st, cpu, l->pending, ts);
	l->pending = 0;
	l->has_pending = false;
}
