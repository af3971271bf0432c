/*
 * export_chrome.c - a recording in the Chrome trace event format (JSON),
 * for tools that read nothing else (chrome://tracing, older viewers;
 * Perfetto's UI opens it too).
 *
 * {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
 * - one complete event ("ph":"X") per thread state interval, on the
 *   thread's own track (pid = its process, tid = itself): "running",
 *   "runnable", "preempted by X", "blocked in read()", "sleeping (S)"...
 * - one per CPU run interval on a "CPUs" process (pid 0, tid = CPU), named
 *   after the thread that ran; idle is left out;
 * - a flow ("ph":"s" at the waker, "ph":"f" at the wakee's runnable
 *   interval) per wakeup whose waker is known;
 * - process_name / thread_name metadata ("ph":"M") at the end.
 * Timestamps are microseconds with three decimals (nanosecond precision).
 * Written as the recording is read: memory does not grow with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/causes.h>

#include "output/json_out.h"
#include "output/export.h"

struct cj {
	FILE *f;
	bool first;
	const char *arch;
	uint64_t t0;
};

static void us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static FILE *next(struct exporter *x)
{
	struct cj *c = x->priv;

	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
	return c->f;
}

static int32_t pid_of(const struct tl_thread *t)
{
	return t->tgid > 0 ? t->tgid : t->tid;
}

static void cj_span(void *ctx, const struct tl_thread *t,
		    const struct tl_span *s)
{
	struct exporter *x = ctx;
	struct cj *c = x->priv;
	const char *sys = NULL;
	char name[96];
	FILE *f;

	x->st->spans++;
	if (!strcmp(s->state, "Running"))
		snprintf(name, sizeof(name), "running");
	else if (s->preempted)
		snprintf(name, sizeof(name), "preempted by %s",
			 s->preempted_by ? s->preempted_by : "?");
	else if (!strcmp(s->state, "R"))
		snprintf(name, sizeof(name), "runnable");
	else if (s->block_sys >= 0 &&
		 (sys = ctxmon_syscall_name(c->arch, (long)s->block_sys)))
		snprintf(name, sizeof(name), "blocked in %s()", sys);
	else if (!strcmp(s->state, "S"))
		snprintf(name, sizeof(name), "sleeping (S)");
	else if (!strcmp(s->state, "D"))
		snprintf(name, sizeof(name), "blocked (D)");
	else
		snprintf(name, sizeof(name), "off CPU (%s)", s->state);
	f = next(x);
	fputs("{\"name\":", f);
	json__put_str(f, name);
	fprintf(f, ",\"cat\":\"thread_state\",\"ph\":\"X\",\"pid\":%d,"
		   "\"tid\":%d,\"ts\":",
		pid_of(t), t->tid);
	us(f, s->ts);
	fputs(",\"dur\":", f);
	us(f, s->dur);
	fprintf(f, ",\"args\":{\"state\":\"%s\"", s->state);
	if (s->cpu >= 0)
		fprintf(f, ",\"cpu\":%d", s->cpu);
	if (s->waker_tid > 0)
		fprintf(f, ",\"waker_tid\":%d", s->waker_tid);
	fputs("}}", f);
	if (s->flow && s->waker_tid > 0) {
		/* the flow ends at the start of the runnable interval */
		f = next(x);
		fprintf(f, "{\"name\":\"wakeup\",\"cat\":\"wakeup\",\"ph\":\"f\","
			   "\"bp\":\"e\",\"id\":%" PRIu64 ",\"pid\":%d,"
			   "\"tid\":%d,\"ts\":",
			s->flow, pid_of(t), t->tid);
		us(f, s->ts);
		fputc('}', f);
	}
}

static void cj_sched(void *ctx, int32_t cpu, const struct tl_thread *t,
		     uint64_t ts, uint64_t dur, const char *end_state,
		     int32_t prio)
{
	struct exporter *x = ctx;
	FILE *f;

	x->st->sched++;
	if (!t)
		return; /* idle */
	f = next(x);
	fputs("{\"name\":", f);
	json__put_str(f, t->comm ? t->comm : "?");
	fprintf(f, ",\"cat\":\"sched\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,"
		   "\"ts\":",
		cpu);
	us(f, ts);
	fputs(",\"dur\":", f);
	us(f, dur);
	fprintf(f, ",\"args\":{\"tid\":%d,\"prio\":%d", t->tid, prio);
	if (end_state)
		fprintf(f, ",\"end_state\":\"%s\"", end_state);
	fputs("}}", f);
}

static void cj_wake(void *ctx, const struct tl_thread *waker,
		    const struct tl_thread *t, int32_t cpu, uint64_t ts,
		    uint64_t id)
{
	struct exporter *x = ctx;
	FILE *f;

	(void)cpu;
	x->st->wakeups++;
	if (!waker)
		return;
	f = next(x);
	fputs("{\"name\":\"wakeup\",\"cat\":\"wakeup\",\"ph\":\"s\",", f);
	fprintf(f, "\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":", id,
		pid_of(waker), waker->tid);
	us(f, ts);
	fputs(",\"args\":{\"wakee\":", f);
	json__put_str(f, t->comm ? t->comm : "?");
	fprintf(f, ",\"wakee_tid\":%d}}", t->tid);
}

static int cj_event(struct exporter *x, const struct ctxmon_event *ev)
{
	if (ev->type == CTXMON_EV_SWITCH)
		x->st->switches++;
	else if (ev->type == CTXMON_EV_WAKING)
		x->st->wakings++;
	return 0;
}

static int cj_open(struct exporter *x, struct tl_ops *ops)
{
	struct cj *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	x->priv = c;
	c->first = true;
	c->arch = ctxmon_reader_meta_str(x->r, CTXMON_META_ARCH);
	c->f = ctxmon_outfile_stream(x->out);
	if (!c->f)
		return -errno;
	fputs("{" CTXMON_JSON_SCHEMA ",\"displayTimeUnit\":\"ns\",\"traceEvents\":[", c->f);
	*ops = (struct tl_ops){ .span = cj_span, .sched = cj_sched,
				.wake = cj_wake, .ctx = x };
	return 0;
}

static void meta(struct exporter *x, const char *what, int32_t pid,
		 int32_t tid, const char *name)
{
	FILE *f = next(x);

	fprintf(f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
		   "\"args\":{\"name\":",
		what, pid, tid);
	json__put_str(f, name);
	fputs("}}", f);
}

static int cj_close(struct exporter *x, bool ok)
{
	struct cj *c = x->priv;
	int ret = 0;

	if (!c)
		return 0;
	if (ok && c->f) {
		size_t n;
		uint64_t ncpu = 0;
		const struct tl_thread *th = timeline__threads(x->tl, &n);
		const char *v;

		meta(x, "process_name", 0, 0, "CPUs");
		for (size_t i = 0; i < n; i++)
			if (th[i].tid == th[i].tgid)
				meta(x, "process_name", th[i].tid, th[i].tid,
				     th[i].comm ? th[i].comm : "?");
		for (size_t i = 0; i < n; i++)
			meta(x, "thread_name", pid_of(&th[i]), th[i].tid,
			     th[i].comm ? th[i].comm : "?");
		if (ctxmon_reader_meta_u64(x->r, CTXMON_META_NCPUS, &ncpu) < 0)
			ncpu = 0;
		for (size_t i = 0; i < ncpu && i < 4096; i++) {
			char nm[32];

			snprintf(nm, sizeof(nm), "CPU %zu", i);
			meta(x, "thread_name", 0, (int32_t)i, nm);
		}
		fputs("\n],\"otherData\":{\"tool\":\"ctxmon " CTXMON_VERSION
		      "\"",
		      c->f);
		if ((v = ctxmon_reader_meta_str(x->r, CTXMON_META_KERNEL))) {
			fputs(",\"kernel\":", c->f);
			json__put_str(c->f, v);
		}
		if ((v = ctxmon_reader_meta_str(x->r, CTXMON_META_CMDLINE))) {
			fputs(",\"cmdline\":", c->f);
			json__put_str(c->f, v);
		}
		fprintf(c->f, ",\"lost_events\":%" PRIu64 "}}\n", x->st->lost);
		if (fflush(c->f) == EOF || ferror(c->f))
			ret = -(errno ? errno : EIO);
		x->st->bytes = (uint64_t)ftell(c->f);
	}
	free(c); /* the stream is the outfile's */
	x->priv = NULL;
	return ret;
}

const struct export_format export__chrome = {
	.name = "chrome-json",
	.open = cj_open,
	.event = cj_event,
	.close = cj_close,
};
