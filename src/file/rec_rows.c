/*
 * rec_rows.c - a recording's per-thread and per-process rows, accounted
 * as `ctxmon report` accounts them (include/ctxmon/diff.h): the account is
 * set up from the recording's metadata (target kind, target pids, the
 * launched command's pid, whether wakeups were recorded), fed every task
 * declaration and event in order, and closed at the recorded stop time.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <ctxmon/diff.h>
#include <ctxmon/record.h>

#include "file/file.h"
#include "file/json.h"
#include "output/output.h"

/* Written by `ctxmon record` (src/cli/recording.h). */
#define META_TARGET_KIND "target.kind"

struct ctxmon_rowfile {
	struct ctxmon_account *a;
	struct ctxmon_stats *th, *pr;
	size_t nth, npr;
	uint64_t duration;
	char **owned;		/* comms of rows read from JSON */
	size_t nowned;
	/* the reader's verdict, its string and array copied here (the
	 * reader is closed); has_verdict false for rows from JSON */
	bool has_verdict;
	struct ctxmon_verdict verdict;
	char problem[256];
	uint64_t *lost_cpu;
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

/* Copy the reader's verdict into @r, which outlives the reader. */
static int keep_verdict(struct ctxmon_rowfile *r,
			const struct ctxmon_reader *rd)
{
	struct ctxmon_verdict *v = &r->verdict;

	ctxmon_reader_get_verdict(rd, v);
	snprintf(r->problem, sizeof(r->problem), "%s", v->problem);
	v->problem = r->problem;
	if (v->nlost_cpu) {
		r->lost_cpu = calloc(v->nlost_cpu, sizeof(*r->lost_cpu));
		if (!r->lost_cpu) {
			err__set("out of memory");
			return -ENOMEM;
		}
		memcpy(r->lost_cpu, v->lost_per_cpu,
		       v->nlost_cpu * sizeof(*r->lost_cpu));
	}
	v->lost_per_cpu = r->lost_cpu;
	r->has_verdict = true;
	return 0;
}

struct ctxmon_rowfile *ctxmon_rowfile_from_recording(const char *path, bool all)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_reader_info info;
	struct ctxmon_rowfile *r = NULL;
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
	ao.flags = kcmp__account_flags(
		be ? ctxmon_backend_caps(be) : 0,
		(unsigned)meta_u64(rd, CTXMON_META_ORPHAN_WALK, 0));
	r->a = ctxmon_account_new(&ao);
	if (!r->a)
		goto out;
	ctxmon_reader_set_task_fn(rd, on_task, r->a);
	ret = ctxmon_reader_read(rd, ctxmon_account_feed_cb, r->a);
	ctxmon_reader_get_info(rd, &info);
	if (ret < 0 && ret != -EBADMSG) {
		err__set("reading %s: %s", path, strerror(-ret));
		goto out;
	}
	ret = keep_verdict(r, rd);
	if (ret < 0)
		goto out;
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
		err__set("out of memory");
		goto out;
	}
	ret = 0;
out:
	free(tp);
	free(pids);
	ctxmon_reader_close(rd);
	if (ret < 0) {
		ctxmon_rowfile_free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}

void ctxmon_rowfile_free(struct ctxmon_rowfile *r)
{
	if (!r)
		return;
	free(r->th);
	free(r->pr);
	for (size_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	free(r->lost_cpu);
	ctxmon_account_free(r->a);
	free(r);
}

const struct ctxmon_stats *ctxmon_rowfile_rows(const struct ctxmon_rowfile *r,
					      enum ctxmon_rows kind, size_t *n)
{
	*n = kind == CTXMON_ROWS_THREADS ? r->nth : r->npr;
	return kind == CTXMON_ROWS_THREADS ? r->th : r->pr;
}

uint64_t ctxmon_rowfile_duration(const struct ctxmon_rowfile *r)
{
	return r->duration;
}

int ctxmon_rowfile_get_verdict(const struct ctxmon_rowfile *r,
			       struct ctxmon_verdict *out)
{
	if (!r->has_verdict)
		return -ENOENT;
	*out = r->verdict;
	return 0;
}

/* ---- from `ctxmon stat --json` -------------------------------------- */

static uint64_t u64(const struct json *o, const char *key)
{
	double v = json__num(o, key, 0);

	return v > 0 && v < 1.8e19 ? (uint64_t)v : 0;
}

/* Rows of JSON array @arr (stat's "threads" or "processes"). */
static int json_rows(struct ctxmon_rowfile *r, const struct json *arr,
		     bool procs, struct ctxmon_stats **out, size_t *n)
{
	char **ow;

	*out = calloc(arr && arr->n ? arr->n : 1, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	if (!arr || arr->type != JSON_ARR)
		return 0;
	ow = realloc(r->owned, (r->nowned + arr->n) * sizeof(*ow));
	if (!ow)
		return -ENOMEM;
	r->owned = ow;
	for (size_t i = 0; i < arr->n; i++) {
		const struct json *t = arr->items[i];
		const struct json *lat = json__get(t, "wakeup_latency");
		struct ctxmon_stats *s = &(*out)[(*n)++];
		const char *comm = json__str(t, "comm");

		s->tid = (pid_t)json__num(t, procs ? "pid" : "tid", -1);
		s->tgid = (pid_t)json__num(t, "tgid", -1);
		if (procs)
			s->tgid = s->tid;
		s->comm = r->owned[r->nowned] = strdup(comm ? comm : "?");
		if (!s->comm)
			return -ENOMEM;
		r->nowned++;
		s->switch_out = u64(t, "switches");
		s->switch_in = u64(t, "switch_in");
		s->voluntary = u64(t, "voluntary");
		s->involuntary = u64(t, "involuntary");
		s->exit_switch = u64(t, "exit_switch");
		s->run_ns = u64(t, "run_ns");
		s->wait_ns = u64(t, "wait_ns");
		s->sleep_ns[CTXMON_SLEEP_S] = u64(t, "sleep_s_ns");
		s->sleep_ns[CTXMON_SLEEP_D] = u64(t, "sleep_d_ns");
		s->sleep_ns[CTXMON_SLEEP_OTHER] = u64(t, "sleep_other_ns");
		s->migrations = u64(t, "migrations");
		s->wakeups = u64(t, "wakeups");
		s->lat.count = u64(lat, "count");
		s->lat.sum_ns = u64(lat, "mean_ns") * s->lat.count;
		s->lat.max_ns = u64(lat, "max_ns");
		/* an interval's bound (stat -I of bpf-agg): kept a bound */
		if (!s->lat.max_ns && u64(lat, "max_bound_ns")) {
			s->lat.max_ns = u64(lat, "max_bound_ns");
			s->lat.max_is_bound = true;
		}
	}
	return 0;
}

struct ctxmon_rowfile *ctxmon_rowfile_from_stat_json(const char *path)
{
	struct ctxmon_rowfile *r = calloc(1, sizeof(*r));
	struct json *j = NULL;
	char *text = NULL, err[128];
	size_t len = 0, cap = 0;
	FILE *in = fopen(path, "re");
	int ret = -ENOMEM;

	if (!in) {
		ret = -errno;
		err__set("%s", strerror(errno));
		goto out;
	}
	/* the first line: stat -I writes one object per interval */
	if (!r || getline(&text, &cap, in) < 0)
		goto out;
	len = strlen(text);
	j = json__parse(text, len, err, sizeof(err));
	ret = -EINVAL;
	if (!j) {
		err__set("not valid JSON: %s", err);
		goto out;
	}
	if (!json__get(j, "threads")) {
		err__set("JSON without \"threads\": not ctxmon "
				"stat's or report's --json output");
		goto out;
	}
	r->duration = u64(j, "duration_ns");
	ret = json_rows(r, json__get(j, "threads"), false, &r->th, &r->nth);
	if (ret == 0)
		ret = json_rows(r, json__get(j, "processes"), true, &r->pr,
				&r->npr);
	if (ret == -ENOMEM)
		err__set("out of memory");
out:
	if (in)
		fclose(in);
	free(text);
	json__free(j);
	if (ret < 0) {
		ctxmon_rowfile_free(r);
		errno = -ret;
		return NULL;
	}
	return r;
}
