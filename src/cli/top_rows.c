/*
 * top_rows.c - row arithmetic shared by `ctxmon top` and `ctxmon stat`:
 * the cumulative rows of a counting backend turned into intervals and
 * process rows, latency percentiles from the log2 histograms, and the
 * notes that name an unprivileged tier and what it cannot show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/top.h"
#include "internal.h"
#include "output/output.h"

static int cmp_tid_gen(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* @c less @p, field by field; @c becomes the interval after @p. */
static void row_sub(struct ctxmon_stats *c, const struct ctxmon_stats *p)
{
	struct ctxmon_latency *l = &c->lat;

	c->switch_in = sub(c->switch_in, p->switch_in);
	c->switch_out = sub(c->switch_out, p->switch_out);
	c->voluntary = sub(c->voluntary, p->voluntary);
	c->involuntary = sub(c->involuntary, p->involuntary);
	c->exit_switch = sub(c->exit_switch, p->exit_switch);
	c->exit_preempt = sub(c->exit_preempt, p->exit_preempt);
	c->exit_counted = sub(c->exit_counted, p->exit_counted);
	c->after_fold = sub(c->after_fold, p->after_fold);
	c->shown_running = sub(c->shown_running, p->shown_running);
	c->run_ns = sub(c->run_ns, p->run_ns);
	c->wait_ns = sub(c->wait_ns, p->wait_ns);
	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		c->sleep_ns[i] = sub(c->sleep_ns[i], p->sleep_ns[i]);
	c->migrations = sub(c->migrations, p->migrations);
	c->wakeups = sub(c->wakeups, p->wakeups);
	l->count = sub(l->count, p->lat.count);
	l->sum_ns = sub(l->sum_ns, p->lat.sum_ns);
	for (int i = 0; i < CTXMON_HIST_BUCKETS; i++)
		l->hist[i] = sub(l->hist[i], p->lat.hist[i]);
	if (!l->count) {
		l->max_ns = l->max_ts = 0;
		l->max_waker_tid = l->max_cpu = l->max_prev_tid = -1;
	} else if (p->lat.count && l->max_ts == p->lat.max_ts &&
		   l->max_ns == p->lat.max_ns) {
		/* The kernel keeps one maximum for the whole run; this one
		 * was reached in an earlier interval.  This interval's own
		 * is known only to its highest histogram bucket: report that
		 * bound (never above the old maximum), with no context. */
		uint64_t bound = 0;

		for (int i = CTXMON_HIST_BUCKETS - 1; i >= 0; i--) {
			if (l->hist[i]) {
				bound = (1ull << (i + 1)) - 1;
				break;
			}
		}
		if (bound < l->max_ns)
			l->max_ns = bound;
		l->max_ts = 0;
		l->max_waker_tid = l->max_cpu = l->max_prev_tid = -1;
	}
	if (p->last_ts > c->first_ts)
		c->first_ts = p->last_ts;
	if (c->last_ts < c->first_ts)
		c->last_ts = c->first_ts;
}

int rows__delta(struct rows_snap *prev, struct ctxmon_stats *cur, size_t n)
{
	struct ctxmon_stats *copy;
	size_t j = 0;

	if (n > 1)
		qsort(cur, n, sizeof(*cur), cmp_tid_gen);
	copy = malloc((n ? n : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, cur, n * sizeof(*cur));
	for (size_t i = 0; i < n; i++) {
		while (j < prev->n && cmp_tid_gen(&prev->rows[j], &cur[i]) < 0)
			j++;
		if (j < prev->n && !cmp_tid_gen(&prev->rows[j], &cur[i]))
			row_sub(&cur[i], &prev->rows[j]);
	}
	free(prev->rows);
	prev->rows = copy;
	prev->n = n;
	return 0;
}

void rows__snap_free(struct rows_snap *s)
{
	if (!s)
		return;
	free(s->rows);
	s->rows = NULL;
	s->n = 0;
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = *(const struct ctxmon_stats *const *)pa;
	const struct ctxmon_stats *b = *(const struct ctxmon_stats *const *)pb;
	pid_t ka = a->tgid > 0 ? a->tgid : a->tid;
	pid_t kb = b->tgid > 0 ? b->tgid : b->tid;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	/* the leader first, so it names the process */
	if ((a->tid == ka) != (b->tid == kb))
		return a->tid == ka ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

struct ctxmon_stats *rows__processes(const struct ctxmon_stats *th, size_t n,
				     size_t *np)
{
	const struct ctxmon_stats **ord;
	struct ctxmon_stats *out;
	size_t cnt = 0;

	ord = malloc((n ? n : 1) * sizeof(*ord));
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!ord || !out) {
		free(ord);
		free(out);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = &th[i];
	if (n > 1)
		qsort(ord, n, sizeof(*ord), cmp_key);
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *t = ord[i];
		pid_t key = t->tgid > 0 ? t->tgid : t->tid;
		struct ctxmon_stats *p = cnt ? &out[cnt - 1] : NULL;

		if (t->folded) {
			out[cnt++] = *t; /* a process row of its own */
			continue;
		}
		if (!p || p->folded || p->tid != key) {
			p = &out[cnt++];
			memset(p, 0, sizeof(*p));
			p->tid = key;
			p->tgid = key;
			p->ppid = t->ppid;
			p->comm = t->comm;
			p->exited = true;
			p->target = t->target;
			p->first_ts = t->first_ts;
			p->last_ts = t->last_ts;
			p->lat.max_waker_tid = p->lat.max_cpu = -1;
			p->lat.max_prev_tid = -1;
		}
		p->nthreads++;
		p->exited = p->exited && t->exited;
		p->target = p->target || t->target;
		if (t->first_ts < p->first_ts)
			p->first_ts = t->first_ts;
		if (t->last_ts > p->last_ts)
			p->last_ts = t->last_ts;
		ctxmon_stats_add(p, t);
	}
	free(ord);
	*np = cnt;
	return out;
}

uint64_t rows__percentile(const struct ctxmon_latency *l, double pct)
{
	return ctxmon_latency_quantile(l, pct / 100.0);
}

int rows__collect(struct ctxmon_session *s, struct ctxmon_account *a,
		  struct rows_snap *snap, bool interval, uint64_t ts,
		  struct ctxmon_stats **th, size_t *nth,
		  struct ctxmon_stats **pr, size_t *npr)
{
	int ret;

	*th = *pr = NULL;
	*nth = *npr = 0;
	if (!session__counting(s)) {
		ctxmon_account_finish(a, ts);
		*th = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, nth);
		*pr = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, npr);
		goto out;
	}
	ret = session__read_rows(s, ts, th, nth);
	if (ret < 0)
		return ret;
	if (interval && rows__delta(snap, *th, *nth) < 0)
		goto out;
	*pr = rows__processes(*th, *nth, npr);
out:
	/* intervals: an exited thread is shown in the one it ended in, and
	 * then forgotten, so that a long run does not grow */
	if (interval && *th && *pr) {
		if (session__counting(s))
			session__forget_exited(s);
		else
			ctxmon_account_forget_exited(a);
	}
	if (!*th || !*pr) {
		free(*th);
		free(*pr);
		*th = *pr = NULL;
		return -ENOMEM;
	}
	return 0;
}

const char *tier__limits(struct ctxmon_session *s)
{
	return session__limits(s);
}

void tier__announce(const char *cmd, struct ctxmon_session *s,
		    const char *asked)
{
	const char *line = ctxmon_session_log(s);

	if (!session__limits(s) || (asked && strcmp(asked, "auto")))
		return;
	/* why each better backend was not used, as the session noted it */
	while (line && *line) {
		int len = (int)strcspn(line, "\n");

		if (!strncmp(line, "backend: ", 9) &&
		    memmem(line, (size_t)len, " not used: ", 11))
			cli__err(cmd, "%.*s", len - 9, line + 9);
		line = line[len] ? line + len + 1 : NULL;
	}
	cli__err(cmd, "tracing is not available: using the %s tier instead",
		 ctxmon_session_backend(s));
}

void tier__print(FILE *f, struct ctxmon_session *s, const struct kernel_cmp *k)
{
	const char *limits = session__limits(s);
	long long dv, di;

	if (!limits)
		return;
	fprintf(f, "tier: %s\n", limits);
	if (!k->valid)
		return;
	dv = (long long)(k->ru_nvcsw - k->traced_vol);
	di = (long long)(k->ru_nivcsw - k->traced_invol);
	if (session__counting(s)) {
		fprintf(f,
			"  the getrusage totals are exact; the rows miss what "
			"threads did after their last sample: voluntary "
			"%lld, involuntary %lld\n",
			dv, di);
	} else if (dv == 0 && di > 0) {
		/* perf-switch: the events leave a dying thread before it
		 * is done (see docs/accounting.md) */
		fprintf(f,
			"  involuntary is %lld short: this tier does not see "
			"an exiting thread after its exit record, where it "
			"can still be preempted (%" PRIu64 " threads "
			"exited)\n",
			di, k->exit_switches);
	} else if (dv > 0 && di >= 0) {
		/* the same, and it blocked too (PREEMPT_RT: sleeping locks
		 * on the exit path), never over */
		fprintf(f,
			"  voluntary is %lld short, involuntary %lld: this "
			"tier does not see an exiting thread after its exit "
			"record, where it can still block or be preempted "
			"(%" PRIu64 " threads exited)\n",
			dv, di, k->exit_switches);
	}
}
