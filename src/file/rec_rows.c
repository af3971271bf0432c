/*
 * rec_rows.c - a recording's per-thread and per-process rows, accounted
 * as `ctxmon report` accounts them (include/ctxmon/diff.h): the account is
 * set up from the recording's metadata (target kind, target pids, the
 * launched command's pid, whether wakeups were recorded), fed every task
 * declaration and event in order, and closed at the recorded stop time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/diff.h>
#include <ctxmon/record.h>

#include "file/file.h"

/* Written by `ctxmon record` (src/cli/recording.h). */
#define META_TARGET_KIND "target.kind"

struct ctxmon_rowset {
	struct ctxmon_account *a;
	struct ctxmon_stats *th, *pr;
	size_t nth, npr;
	uint64_t duration;
};

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	return ctxmon_account_add_task(ctx, tid, tgid, comm) < 0 ? -ENOMEM : 0;
}

static uint64_t meta_u64(const struct ctxmon_reader *rd, const char *key,
			 uint64_t dflt)
{
	uint64_t v;

	return ctxmon_reader_meta_u64(rd, key, &v) == 0 ? v : dflt;
}

struct ctxmon_rowset *ctxmon_rowset_from_recording(const char *path, bool all)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_reader_info info;
	struct ctxmon_rowset *r = NULL;
	struct ctxmon_reader *rd;
	uint64_t *tp = NULL, start, stop;
	pid_t *pids = NULL;
	const char *be;
	int ret = -ENOMEM;
	size_t n;

	rd = ctxmon_reader_open(path);
	if (!rd)
		return NULL;	/* errno and the text set by the reader */
	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	ao.target = (enum ctxmon_target_kind)meta_u64(rd, META_TARGET_KIND,
						      CTXMON_TARGET_ALL);
	n = ctxmon_reader_meta_u64s(rd, CTXMON_META_TARGET_PIDS, NULL, 0);
	if (n) {
		tp = calloc(n, sizeof(*tp));
		pids = calloc(n, sizeof(*pids));
		if (!tp || !pids)
			goto out;
		ctxmon_reader_meta_u64s(rd, CTXMON_META_TARGET_PIDS, tp, n);
		for (size_t i = 0; i < n; i++)
			pids[i] = (pid_t)tp[i];
		ao.pids = pids;
		ao.npids = n;
	}
	ao.root_pid = (pid_t)meta_u64(rd, CTXMON_META_ROOT_PID, (uint64_t)-1);
	be = ctxmon_reader_meta_str(rd, CTXMON_META_BACKEND);
	ao.no_wakeups = be && !strcmp(be, "perf-switch");
	r->a = ctxmon_account_new(&ao);
	if (!r->a)
		goto out;
	ctxmon_reader_set_task_fn(rd, on_task, r->a);
	ret = ctxmon_reader_read(rd, ctxmon_account_feed_cb, r->a);
	ctxmon_reader_get_info(rd, &info);
	if (ret < 0 && ret != -EBADMSG) {
		file__set_error("reading %s: %s", path, strerror(-ret));
		goto out;
	}
	start = meta_u64(rd, CTXMON_META_TIME_START, info.first_ts);
	stop = meta_u64(rd, CTXMON_META_TIME_STOP, 0);
	if (!stop || !info.complete)
		stop = info.last_ts;
	ctxmon_account_finish(r->a, stop);
	r->duration = stop > start ? stop - start : 0;
	ret = -ENOMEM;
	r->th = ctxmon_account_rows(r->a, CTXMON_ROWS_THREADS, all, &r->nth);
	r->pr = ctxmon_account_rows(r->a, CTXMON_ROWS_PROCESSES, all, &r->npr);
	if (!r->th || !r->pr) {
		file__set_error("out of memory");
		goto out;
	}
	ret = 0;
out:
	free(tp);
	free(pids);
	ctxmon_reader_close(rd);
	if (ret < 0) {
		ctxmon_rowset_free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

void ctxmon_rowset_free(struct ctxmon_rowset *r)
{
	if (!r)
		return;
	free(r->th);
	free(r->pr);
	ctxmon_account_free(r->a);
	free(r);
}

const struct ctxmon_stats *ctxmon_rowset_rows(const struct ctxmon_rowset *r,
					      enum ctxmon_rows kind, size_t *n)
{
	*n = kind == CTXMON_ROWS_THREADS ? r->nth : r->npr;
	return kind == CTXMON_ROWS_THREADS ? r->th : r->pr;
}

uint64_t ctxmon_rowset_duration(const struct ctxmon_rowset *r)
{
	return r->duration;
}
