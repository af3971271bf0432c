/*
 * stream.c - merge per-CPU event queues into one stream in time order.
 *
 * Each CPU's records arrive in time order, but CPUs are read one after the
 * other, so a record written on CPU 1 while CPU 0 is being read can carry a
 * timestamp earlier than records already read from CPU 0.  Delivering
 * everything read would then go back in time.  Instead the reader notes the
 * time before it reads (the snapshot) and only events up to a watermark a
 * little behind it are delivered; later ones wait for the next round, when
 * every CPU has been read past them.  An event that still arrives older than
 * one already delivered is delivered anyway and counted as a violation.
 *
 * Within one CPU, the one ordering policy of every source: a committed
 * event older than events of its CPU still queued is sorted in before them
 * (equal times keep their arrival order).  Across CPUs, equal times also
 * keep their arrival order (each commit is numbered): a source that
 * already reads one merged stream (ftrace's text pipe, whose times have
 * only the microseconds the kernel prints) loses nothing of its order,
 * where taking the lower CPU first put a wakeup after the switch-in it
 * caused whenever both fell in one printed microsecond.  ftrace's per-CPU
 * buffers never need the sorting in (its ring takes the time as it
 * reserves); perf's rings and a shared BPF ring do, as a record's time is
 * taken before its space is reserved and another on the same CPU (an
 * interrupt) can reserve in between, landing ahead of one stamped before
 * it.  Such a record is sorted in here, at its own time; no backend
 * reorders or clamps on its own.  Only an event older than one its CPU
 * already delivered cannot be sorted in: it is clamped to that time and
 * counted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct cpuq {
	struct ctxmon_event *ev;	/* ring of cap entries */
	uint64_t *seq;			/* each entry's commit number */
	size_t cap, head, tail;		/* head..tail queued, mod cap */
	uint64_t last_ts;		/* newest committed ts */
	uint64_t out_ts;		/* ts of the last delivered event */
	uint64_t lost;
};

struct stream {
	int ncpus;
	struct cpuq *q;
	int *heap;			/* CPUs ordered by head ts */
	uint64_t last;			/* ts of the last delivered event */
	uint64_t watermark;		/* highest watermark delivered to */
	uint64_t start;			/* capture start */
	uint64_t delivered, lost, lost_records, violations;
	uint64_t seq;			/* commits so far */
	uint64_t *lost_per_cpu;
};

struct stream *stream__new(int ncpus)
{
	struct stream *st;

	if (ncpus < 1) {
		errno = EINVAL;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->ncpus = ncpus;
	st->q = calloc((size_t)ncpus, sizeof(*st->q));
	st->heap = calloc((size_t)ncpus, sizeof(*st->heap));
	st->lost_per_cpu = calloc((size_t)ncpus, sizeof(*st->lost_per_cpu));
	if (!st->q || !st->heap || !st->lost_per_cpu) {
		stream__free(st);
		errno = ENOMEM;
		return NULL;
	}
	return st;
}

void stream__free(struct stream *st)
{
	if (!st)
		return;
	for (int i = 0; st->q && i < st->ncpus; i++) {
		free(st->q[i].ev);
		free(st->q[i].seq);
	}
	free(st->q);
	free(st->heap);
	free(st->lost_per_cpu);
	free(st);
}

int stream__ncpus(const struct stream *st)
{
	return st->ncpus;
}

static int cpuq_grow(struct cpuq *q)
{
	size_t cap = q->cap ? q->cap * 2 : 4096;
	struct ctxmon_event *ev = malloc(cap * sizeof(*ev));
	uint64_t *seq = malloc(cap * sizeof(*seq));
	size_t n = q->tail - q->head;

	if (!ev || !seq) {
		free(ev);
		free(seq);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		ev[i] = q->ev[(q->head + i) & (q->cap - 1)];
		seq[i] = q->seq[(q->head + i) & (q->cap - 1)];
	}
	free(q->ev);
	free(q->seq);
	q->ev = ev;
	q->seq = seq;
	q->cap = cap;
	q->head = 0;
	q->tail = n;
	return 0;
}

struct ctxmon_event *stream__slot(struct stream *st, int cpu)
{
	struct cpuq *q;
	struct ctxmon_event *ev;

	if (cpu < 0 || cpu >= st->ncpus)
		return NULL;
	q = &st->q[cpu];
	if (q->tail - q->head == q->cap && cpuq_grow(q) < 0)
		return NULL;
	ev = &q->ev[q->tail & (q->cap - 1)];
	ev->flags = 0;
	ev->cpu = cpu;
	ev->tgid = -1;
	return ev;
}

void stream__commit(struct stream *st, int cpu)
{
	struct cpuq *q = &st->q[cpu];
	size_t mask = q->cap - 1, i = q->tail;
	struct ctxmon_event *slot = &q->ev[i & mask], ev;
	uint64_t seq = st->seq++;

	q->seq[i & mask] = seq;
	/* A CPU's queue must stay sorted for the merge to be correct */
	if (slot->ts < q->out_ts) {
		st->violations++;
		slot->ts = q->out_ts;
	}
	q->tail++;
	if (slot->ts >= q->last_ts) {	/* in order: the common case */
		q->last_ts = slot->ts;
		return;
	}
	ev = *slot;
	while (i != q->head && q->ev[(i - 1) & mask].ts > ev.ts) {
		q->ev[i & mask] = q->ev[(i - 1) & mask];
		q->seq[i & mask] = q->seq[(i - 1) & mask];
		i--;
	}
	q->ev[i & mask] = ev;
	q->seq[i & mask] = seq;
}

void stream__lost(struct stream *st, int cpu, uint64_t count, uint64_t ts)
{
	struct ctxmon_event *ev;
	uint64_t start;

	if (cpu < 0 || cpu >= st->ncpus)
		return;
	start = st->q[cpu].last_ts ? st->q[cpu].last_ts : st->start;
	st->lost += count;
	st->lost_records++;
	st->lost_per_cpu[cpu] += count;
	ev = stream__slot(st, cpu);
	if (!ev)
		return;
	ev->ts = ts > start ? ts : start;
	ev->type = CTXMON_EV_LOST;
	ev->tid = -1;
	ev->lost.count = count;
	ev->lost.start_ts = start;
	ev->lost.end_ts = ev->ts;
	stream__commit(st, cpu);
}

static uint64_t head_ts(const struct stream *st, int cpu)
{
	const struct cpuq *q = &st->q[cpu];

	return q->ev[q->head & (q->cap - 1)].ts;
}

/* CPU @a's head comes before CPU @b's: older, or as old and committed
 * first. */
static bool head_before(const struct stream *st, int a, int b)
{
	const struct cpuq *qa = &st->q[a], *qb = &st->q[b];
	uint64_t ta = head_ts(st, a), tb = head_ts(st, b);

	if (ta != tb)
		return ta < tb;
	return qa->seq[qa->head & (qa->cap - 1)] <
	       qb->seq[qb->head & (qb->cap - 1)];
}

static void heap_down(struct stream *st, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < n && head_before(st, st->heap[l], st->heap[m]))
			m = l;
		if (r < n && head_before(st, st->heap[r], st->heap[m]))
			m = r;
		if (m == i)
			return;
		t = st->heap[i];
		st->heap[i] = st->heap[m];
		st->heap[m] = t;
		i = m;
	}
}

int stream__deliver(struct stream *st, uint64_t watermark, ctxmon_event_fn fn,
		    void *ctx)
{
	int n = 0, count = 0, ret = 0;

	for (int c = 0; c < st->ncpus; c++) {
		const struct cpuq *q = &st->q[c];

		if (q->tail != q->head && head_ts(st, c) <= watermark)
			st->heap[n++] = c;
	}
	for (int i = n / 2 - 1; i >= 0; i--)
		heap_down(st, n, i);

	while (n > 0) {
		int c = st->heap[0];
		struct cpuq *q = &st->q[c];
		const struct ctxmon_event *ev = &q->ev[q->head & (q->cap - 1)];

		if (ev->ts < st->last)
			st->violations++;
		else
			st->last = ev->ts;
		q->out_ts = ev->ts;
		q->head++;
		st->delivered++;
		count++;
		ret = fn ? fn(ev, ctx) : 0;
		if (q->head == q->tail || head_ts(st, c) > watermark)
			st->heap[0] = st->heap[--n];
		heap_down(st, n, 0);
		if (ret)
			break;
	}
	if (!ret && watermark > st->watermark)
		st->watermark = watermark;
	return ret ? ret : count;
}

void stream__for_each_held(struct stream *st,
			   void (*fn)(struct ctxmon_event *ev, void *ctx),
			   void *ctx)
{
	for (int c = 0; c < st->ncpus; c++) {
		struct cpuq *q = &st->q[c];

		for (size_t i = q->head; i != q->tail; i++)
			fn(&q->ev[i & (q->cap - 1)], ctx);
	}
}

void stream__set_start(struct stream *st, uint64_t ts)
{
	st->start = ts;
}

void stream__stats(const struct stream *st, struct ctxmon_session_stats *out)
{
	uint64_t held = 0;

	for (int c = 0; c < st->ncpus; c++)
		held += st->q[c].tail - st->q[c].head;
	out->events = st->delivered;
	out->lost = st->lost;
	out->lost_records = st->lost_records;
	out->order_violations = st->violations;
	out->held = held;
	out->ncpus = st->ncpus;
	out->lost_per_cpu = st->lost_per_cpu;
	out->delivered_to = st->watermark;
}
