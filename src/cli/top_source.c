/*
 * top_source.c - where the numbers of a `ctxmon top` frame come from.
 *
 * Two kinds of session feed top, behind one interface so that either can
 * be swapped in: a streaming backend (perf, bpf) whose events go into an
 * accounting, and a counting backend (in-kernel aggregation, or /proc
 * samples); the library's rows (include/ctxmon/rows.h) cut either into
 * one interval per frame.  The second is cheaper: nothing crosses to user
 * space per switch.
 *
 * Also the machine-wide numbers of the header, from /proc/stat and our own
 * rusage, which do not depend on the backend.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli.h"
#include "cli/cmd_top.h"

struct top_source {
	struct ctxmon_session *s;
	struct ctxmon_account *a; /* streaming sessions only */
	struct ctxmon_rowset *rows; /* the session's rows, per frame */
	uint64_t last_ts; /* end of the previous frame */
	uint64_t prev_events, prev_lost;
};

void top_frame__clear(struct top_frame *f)
{
	free(f->threads);
	free(f->procs);
	memset(f, 0, sizeof(*f));
}

static int seed_one(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	return ctxmon_account_add_task(ctx, tid, tgid, comm) < 0 ? -ENOMEM : 0;
}

struct top_source *top_source__new(const struct top_source_opts *o)
{
	struct top_source *src = calloc(1, sizeof(*src));
	struct ctxmon_session_stats st;
	int err = ENOMEM;

	if (!src)
		goto fail;
	src->s = o->s;
	if (ctxmon_session_caps(o->s) & CTXMON_CAP_EVENTS) {
		struct ctxmon_account_opts ao = {
			.sz = sizeof(ao),
			.target = o->target,
			.pids = o->pids,
			.npids = o->npids,
			.no_wakeups = !(ctxmon_session_caps(o->s) &
					CTXMON_CAP_WAKEUPS),
		};

		src->a = ctxmon_account_new(&ao);
		if (!src->a)
			goto fail;
		/* tasks that sleep through a frame still get their names */
		if (o->target == CTXMON_TARGET_ALL) {
			if (ctxmon_proc_scan(0, seed_one, src->a) < 0)
				goto fail;
		} else {
			for (size_t i = 0; i < o->npids; i++)
				if (ctxmon_proc_scan(o->pids[i], seed_one,
						     src->a) == -ENOMEM)
					goto fail;
		}
	}
	{
		struct ctxmon_rowset_opts ro = {
			.sz = sizeof(ro),
			.session = o->s,
			.account = src->a,
			.interval = true,
		};

		src->rows = ctxmon_rowset_new(&ro);
		if (!src->rows) {
			err = errno;
			goto fail;
		}
	}
	ctxmon_session_get_stats(o->s, &st);
	src->last_ts = st.start_ts;
	return src;
fail:
	top_source__free(src);
	errno = err;
	return NULL;
}

void top_source__free(struct top_source *src)
{
	if (!src)
		return;
	ctxmon_rowset_free(src->rows);
	ctxmon_account_free(src->a);
	free(src);
}

int top_source__pump(struct top_source *src, int timeout_ms)
{
	int ret = ctxmon_session_poll(src->s, timeout_ms,
				      ctxmon_account_feed_cb, src->a);

	return ret < 0 ? ret : 0;
}

int top_source__frame(struct top_source *src, struct top_frame *f)
{
	struct ctxmon_snapshot snap;
	struct ctxmon_session_stats st;
	uint64_t ts;
	int ret;

	memset(f, 0, sizeof(*f));
	ctxmon_session_get_stats(src->s, &st);
	/* A streaming frame ends where the stream has been delivered up
	 * to: every event before is in, every later one goes to the next. */
	ts = src->a ? st.delivered_to : ctxmon_clock_ns();
	if (ts < src->last_ts)
		ts = src->last_ts;
	ret = ctxmon_rowset_snapshot(src->rows, ts, &snap);
	if (ret < 0)
		return ret;
	ts = snap.ts;	/* rows counted in the kernel end at their read */
	ctxmon_rowset_next(src->rows, ts);
	f->threads = snap.threads;
	f->nthreads = snap.nthreads;
	f->procs = snap.procs;
	f->nprocs = snap.nprocs;
	free(snap.cpus);
	f->ts = ts;
	f->dur_ns = ts - src->last_ts;
	f->events = st.events - src->prev_events;
	f->lost = st.lost - src->prev_lost;
	f->lost_total = st.lost;
	f->backend = ctxmon_session_backend(src->s);
	f->row_spans = ctxmon_session_caps(src->s) & CTXMON_CAP_SAMPLED;
	src->last_ts = ts;
	src->prev_events = st.events;
	src->prev_lost = st.lost;
	return 0;
}

int sys_sample__read(struct sys_sample *s)
{
	struct rusage ru;
	char line[512];
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->ts = ctxmon_clock_ns();
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		s->self_cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 +
				 (uint64_t)ru.ru_utime.tv_usec +
				 (uint64_t)ru.ru_stime.tv_sec * 1000000 +
				 (uint64_t)ru.ru_stime.tv_usec;
	f = fopen("/proc/stat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[10] = { 0 };
		int cpu;

		if (sscanf(line, "ctxt %llu", &v[0]) == 1) {
			s->ctxt = v[0];
		} else if (sscanf(line,
				  "cpu%d %llu %llu %llu %llu %llu %llu %llu "
				  "%llu",
				  &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
				  &v[5], &v[6], &v[7]) == 9 &&
			   cpu >= 0 && cpu < TOP_MAX_CPUS) {
			/* user nice system idle iowait irq softirq steal */
			s->busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
			s->total[cpu] = s->busy[cpu] + v[3] + v[4];
			if (cpu + 1 > s->ncpus)
				s->ncpus = cpu + 1;
		}
	}
	fclose(f);
	return 0;
}
