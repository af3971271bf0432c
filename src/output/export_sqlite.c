/*
 * export_sqlite.c - a recording as a SQLite database whose tables are
 * named and shaped like those of Perfetto's trace processor, so that a
 * PerfettoSQL query on them runs as written:
 *
 *   process(upid, pid, name, start_ts, end_ts, parent_upid, uid, cmdline)
 *   thread(utid, tid, name, start_ts, end_ts, upid, is_main_thread)
 *   sched(id, ts, dur, cpu, utid, end_state, priority)
 *   thread_state(id, ts, dur, cpu, utid, state, io_wait, blocked_function,
 *                waker_utid, syscall)
 *
 * utid 0 / upid 0 are the idle task (tid 0, "swapper"), as in Perfetto;
 * state letters are Perfetto's: "Running", "R" (runnable after a wakeup),
 * "R+" (preempted), and the kernel's prev_state letters ("S", "D", ...).
 * And ctxmon's own tables:
 *
 *   wakeup(id, ts, utid, waker_utid, waker_tid, latency, cpu)
 *   switch_cause(utid, kind, cause, syscall, count, sleep_ns, wait_ns)
 *   thread_stats(utid, switch_in, switch_out, voluntary, involuntary, ...)
 *   cpu_counter(ts, dur, cpu, busy_ns, switches)   one row per 100 ms
 *   lost(ts, cpu, count, start_ts, end_ts)
 *   metadata(name, str_value, int_value)
 *
 * Rows are written as intervals close (one transaction, prepared
 * statements), so memory does not grow with the recording.  The per-thread
 * numbers of thread_stats and switch_cause come from the account (with
 * causes on), fed the same stream.  docs/sqlite.md documents every column
 * and gives example queries.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <ctxmon/causes.h>

#include "output/export.h"

#define BUCKET_NS 100000000ull /* cpu_counter rows: 100 ms */

enum { S_SCHED, S_STATE, S_WAKEUP, S_LOST, S_COUNTER, S__N };

static const char *const schema =
	"PRAGMA journal_mode=OFF;"
	"PRAGMA synchronous=OFF;"
	"CREATE TABLE process(upid INTEGER PRIMARY KEY, pid INTEGER, "
	"name TEXT, start_ts INTEGER, end_ts INTEGER, parent_upid INTEGER, "
	"uid INTEGER, android_appid INTEGER, cmdline TEXT, "
	"arg_set_id INTEGER);"
	"CREATE TABLE thread(utid INTEGER PRIMARY KEY, tid INTEGER, "
	"name TEXT, start_ts INTEGER, end_ts INTEGER, upid INTEGER, "
	"is_main_thread INTEGER);"
	"CREATE TABLE sched(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, "
	"cpu INTEGER, utid INTEGER, end_state TEXT, priority INTEGER);"
	"CREATE TABLE thread_state(id INTEGER PRIMARY KEY, ts INTEGER, "
	"dur INTEGER, cpu INTEGER, utid INTEGER, state TEXT, "
	"io_wait INTEGER, blocked_function TEXT, waker_utid INTEGER, "
	"syscall TEXT);"
	"CREATE TABLE wakeup(id INTEGER PRIMARY KEY, ts INTEGER, "
	"utid INTEGER, waker_utid INTEGER, waker_tid INTEGER, "
	"latency INTEGER, cpu INTEGER);"
	"CREATE TABLE switch_cause(utid INTEGER, kind TEXT, cause TEXT, "
	"syscall TEXT, count INTEGER, sleep_ns INTEGER, wait_ns INTEGER);"
	"CREATE TABLE thread_stats(utid INTEGER PRIMARY KEY, "
	"switch_in INTEGER, switch_out INTEGER, voluntary INTEGER, "
	"involuntary INTEGER, exit_switch INTEGER, run_ns INTEGER, "
	"wait_ns INTEGER, sleep_s_ns INTEGER, sleep_d_ns INTEGER, "
	"sleep_other_ns INTEGER, migrations INTEGER, wakeups INTEGER, "
	"latency_count INTEGER, latency_p50 INTEGER, latency_p99 INTEGER, "
	"latency_max INTEGER, incomplete INTEGER);"
	"CREATE TABLE cpu_counter(ts INTEGER, dur INTEGER, cpu INTEGER, "
	"busy_ns INTEGER, switches INTEGER);"
	"CREATE TABLE lost(ts INTEGER, cpu INTEGER, count INTEGER, "
	"start_ts INTEGER, end_ts INTEGER);"
	"CREATE TABLE metadata(name TEXT, str_value TEXT, int_value INTEGER);"
	"BEGIN;";

static const char *const inserts[S__N] = {
	[S_SCHED] = "INSERT INTO sched(ts, dur, cpu, utid, end_state, "
		    "priority) VALUES (?,?,?,?,?,?)",
	[S_STATE] = "INSERT INTO thread_state(ts, dur, cpu, utid, state, "
		    "io_wait, blocked_function, waker_utid, syscall) VALUES "
		    "(?,?,?,?,?,NULL,NULL,?,?)",
	[S_WAKEUP] = "INSERT INTO wakeup(ts, utid, waker_utid, waker_tid, "
		     "latency, cpu) VALUES (?,?,?,?,?,?)",
	[S_LOST] = "INSERT INTO lost(ts, cpu, count, start_ts, end_ts) "
		   "VALUES (?,?,?,?,?)",
	[S_COUNTER] = "INSERT INTO cpu_counter(ts, dur, cpu, busy_ns, "
		      "switches) VALUES (?,?,?,?,?)",
};

struct bucket {
	bool used;
	uint64_t idx;		/* bucket number from the start */
	uint64_t busy, switches;
};

struct sq {
	sqlite3 *db;
	sqlite3_stmt *st[S__N];
	struct ctxmon_account *a;
	const char *arch;
	struct bucket *b;
	size_t nb;
	uint64_t t0;
	bool t0_set;
};

static int sq_err(struct exporter *x, int rc)
{
	struct sq *q = x->priv;

	if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	if (!x->err)
		export__fail(-EIO, "sqlite: %s", sqlite3_errmsg(q->db));
	export__err(x, rc == SQLITE_NOMEM ? -ENOMEM :
		    rc == SQLITE_FULL	  ? -ENOSPC :
					    -EIO);
	return x->err;
}

static void bind_opt(sqlite3_stmt *s, int i, bool have, int64_t v)
{
	if (have)
		sqlite3_bind_int64(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

static void step(struct exporter *x, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	sq_err(x, rc);
}

/* ---- per-CPU counters ------------------------------------------------ */

static struct bucket *bucket_cpu(struct sq *q, int32_t cpu)
{
	if (cpu < 0 || cpu >= 65536)
		return NULL;
	if ((size_t)cpu >= q->nb) {
		size_t n = (size_t)cpu + 1;
		struct bucket *b = realloc(q->b, n * sizeof(*b));

		if (!b)
			return NULL;
		memset(b + q->nb, 0, (n - q->nb) * sizeof(*b));
		q->b = b;
		q->nb = n;
	}
	return &q->b[cpu];
}

static void bucket_flush(struct exporter *x, int32_t cpu, struct bucket *b)
{
	struct sq *q = x->priv;
	sqlite3_stmt *s = q->st[S_COUNTER];

	sqlite3_bind_int64(s, 1, (int64_t)(q->t0 + b->idx * BUCKET_NS));
	sqlite3_bind_int64(s, 2, (int64_t)BUCKET_NS);
	sqlite3_bind_int64(s, 3, cpu);
	sqlite3_bind_int64(s, 4, (int64_t)b->busy);
	sqlite3_bind_int64(s, 5, (int64_t)b->switches);
	step(x, s);
	b->busy = b->switches = 0;
}

/* Move @cpu's bucket to the one holding @ts, writing the ones passed. */
static struct bucket *bucket_at(struct exporter *x, int32_t cpu, uint64_t ts)
{
	struct sq *q = x->priv;
	struct bucket *b = bucket_cpu(q, cpu);
	uint64_t idx;

	if (!b)
		return NULL;
	if (!q->t0_set) {
		q->t0 = x->start_ts && x->start_ts <= ts ? x->start_ts : ts;
		q->t0_set = true;
	}
	idx = ts >= q->t0 ? (ts - q->t0) / BUCKET_NS : 0;
	if (!b->used) {
		b->used = true;
		b->idx = idx;
	}
	while (b->idx < idx) {
		bucket_flush(x, cpu, b);
		b->idx++;
	}
	return b;
}

static void count_busy(struct exporter *x, int32_t cpu, uint64_t ts,
		       uint64_t dur, bool busy)
{
	struct sq *q = x->priv;
	uint64_t end = ts + dur;

	while (ts < end) {
		struct bucket *b = bucket_at(x, cpu, ts);
		uint64_t bend, d;

		if (!b)
			return;
		bend = q->t0 + (b->idx + 1) * BUCKET_NS;
		d = (end < bend ? end : bend) - ts;
		if (busy)
			b->busy += d;
		ts += d;
	}
}

/* ---- timeline callbacks ---------------------------------------------- */

static void sq_sched(void *ctx, int32_t cpu, const struct tl_thread *t,
		     uint64_t ts, uint64_t dur, const char *end_state,
		     int32_t prio)
{
	struct exporter *x = ctx;
	struct sq *q = x->priv;
	sqlite3_stmt *s = q->st[S_SCHED];

	x->st->sched++;
	sqlite3_bind_int64(s, 1, (int64_t)ts);
	sqlite3_bind_int64(s, 2, (int64_t)dur);
	sqlite3_bind_int64(s, 3, cpu);
	sqlite3_bind_int64(s, 4, t ? t->utid : 0);
	if (end_state)
		sqlite3_bind_text(s, 5, end_state, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int64(s, 6, prio);
	step(x, s);
	count_busy(x, cpu, ts, dur, t != NULL);
}

static void sq_span(void *ctx, const struct tl_thread *t,
		    const struct tl_span *sp)
{
	struct exporter *x = ctx;
	struct sq *q = x->priv;
	sqlite3_stmt *s = q->st[S_STATE];
	const char *sys = NULL;

	x->st->spans++;
	sqlite3_bind_int64(s, 1, (int64_t)sp->ts);
	sqlite3_bind_int64(s, 2, (int64_t)sp->dur);
	bind_opt(s, 3, sp->cpu >= 0, sp->cpu);
	sqlite3_bind_int64(s, 4, t->utid);
	sqlite3_bind_text(s, 5, sp->state, -1, SQLITE_TRANSIENT);
	bind_opt(s, 6, sp->waker_utid > 0, sp->waker_utid);
	if (sp->block_sys >= 0)
		sys = ctxmon_syscall_name(q->arch, (long)sp->block_sys);
	if (sys)
		sqlite3_bind_text(s, 7, sys, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 7);
	step(x, s);
	if (sp->flow && !strcmp(sp->state, "R")) {
		/* the runnable interval after a wakeup: its latency */
		s = q->st[S_WAKEUP];
		sqlite3_bind_int64(s, 1, (int64_t)sp->ts);
		sqlite3_bind_int64(s, 2, t->utid);
		bind_opt(s, 3, sp->waker_utid > 0, sp->waker_utid);
		bind_opt(s, 4, sp->waker_tid > 0, sp->waker_tid);
		bind_opt(s, 5, sp->ran, (int64_t)sp->dur);
		sqlite3_bind_null(s, 6);
		step(x, s);
	}
}

static void sq_wake(void *ctx, const struct tl_thread *waker,
		    const struct tl_thread *t, int32_t cpu, uint64_t ts,
		    uint64_t id)
{
	struct exporter *x = ctx;

	(void)waker, (void)t, (void)cpu, (void)ts, (void)id;
	x->st->wakeups++;
}

static int sq_event(struct exporter *x, const struct ctxmon_event *ev)
{
	struct sq *q = x->priv;
	sqlite3_stmt *s;

	ctxmon_account_feed(q->a, ev);
	if (ev->type == CTXMON_EV_SWITCH) {
		struct bucket *b = bucket_at(x, ev->cpu, ev->ts);

		if (b)
			b->switches++;
		x->st->switches++;
	}
	else if (ev->type == CTXMON_EV_WAKING)
		x->st->wakings++;
	if (ev->type != CTXMON_EV_LOST)
		return 0;
	s = q->st[S_LOST];
	sqlite3_bind_int64(s, 1, (int64_t)ev->ts);
	sqlite3_bind_int64(s, 2, ev->cpu);
	bind_opt(s, 3, ev->lost.count > 0, (int64_t)ev->lost.count);
	sqlite3_bind_int64(s, 4, (int64_t)ev->lost.start_ts);
	sqlite3_bind_int64(s, 5, (int64_t)ev->lost.end_ts);
	step(x, s);
	return x->err;
}

static int sq_task(struct exporter *x, int32_t tid, int32_t tgid,
		   const char *comm)
{
	struct sq *q = x->priv;

	return ctxmon_account_add_task(q->a, tid, tgid, comm);
}

/* ---- the tables written at the end ------------------------------------ */

static int exec_sql(struct exporter *x, const char *sql)
{
	struct sq *q = x->priv;

	return sq_err(x, sqlite3_exec(q->db, sql, NULL, NULL, NULL));
}

static int prepare(struct exporter *x, const char *sql, sqlite3_stmt **s)
{
	struct sq *q = x->priv;

	return sq_err(x, sqlite3_prepare_v2(q->db, sql, -1, s, NULL));
}

/* upid of each thread: its process leader's (the newest thread whose tid
 * is the tgid), numbered in order of first sight from 1. */
static int write_threads(struct exporter *x, const struct tl_thread *th,
			 size_t n, uint32_t *upid_of)
{
	sqlite3_stmt *ps = NULL, *ts = NULL;
	uint32_t nup = 0;
	int ret;

	ret = prepare(x, "INSERT INTO process(upid, pid, name, start_ts, "
			 "end_ts, parent_upid, cmdline) VALUES "
			 "(?,?,?,?,?,?,?)", &ps);
	if (!ret)
		ret = prepare(x, "INSERT INTO thread(utid, tid, name, start_ts, "
				 "end_ts, upid, is_main_thread) VALUES "
				 "(?,?,?,?,?,?,?)", &ts);
	if (ret)
		goto out;
	exec_sql(x, "INSERT INTO process(upid, pid, name) VALUES (0, 0, NULL);"
		    "INSERT INTO thread(utid, tid, name, upid, is_main_thread) "
		    "VALUES (0, 0, 'swapper', 0, 1);");
	/* processes: one per leader thread (tid == tgid) */
	for (size_t i = 0; i < n; i++) {
		upid_of[i] = 0;
		if (th[i].tgid == th[i].tid)
			upid_of[i] = ++nup;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tl_thread *t = &th[i];
		uint32_t parent = 0;

		if (!upid_of[i] || th[i].tgid != th[i].tid)
			continue;
		/* parent: the newest leader of ppid seen before it */
		for (size_t j = i; t->ppid > 0 && j-- > 0;)
			if (th[j].tid == t->ppid && th[j].tgid == t->ppid) {
				parent = upid_of[j];
				break;
			}
		sqlite3_bind_int64(ps, 1, upid_of[i]);
		sqlite3_bind_int64(ps, 2, t->tid);
		sqlite3_bind_text(ps, 3, t->comm ? t->comm : "", -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int64(ps, 4, (int64_t)t->start_ts);
		bind_opt(ps, 5, t->exited, (int64_t)t->end_ts);
		bind_opt(ps, 6, parent > 0, parent);
		sqlite3_bind_text(ps, 7, t->comm ? t->comm : "", -1,
				  SQLITE_TRANSIENT);
		step(x, ps);
		x->st->processes++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tl_thread *t = &th[i];
		uint32_t up = 0;

		if (t->tgid > 0) {
			/* its leader: the newest one before or at it, else
			 * the first one after (a leader declared late) */
			for (size_t j = i + 1; j-- > 0;)
				if (th[j].tid == t->tgid && upid_of[j]) {
					up = upid_of[j];
					break;
				}
			for (size_t j = i + 1; !up && j < n; j++)
				if (th[j].tid == t->tgid && upid_of[j])
					up = upid_of[j];
		}
		sqlite3_bind_int64(ts, 1, t->utid);
		sqlite3_bind_int64(ts, 2, t->tid);
		if (t->comm)
			sqlite3_bind_text(ts, 3, t->comm, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(ts, 3);
		sqlite3_bind_int64(ts, 4, (int64_t)t->start_ts);
		bind_opt(ts, 5, t->exited, (int64_t)t->end_ts);
		bind_opt(ts, 6, up > 0, up);
		bind_opt(ts, 7, t->tgid > 0, t->tgid == t->tid);
		step(x, ts);
	}
out:
	sqlite3_finalize(ps);
	sqlite3_finalize(ts);
	return x->err;
}

/* utid of account row (tid, gen): the gen-th thread of that tid. */
static uint32_t utid_of(const struct tl_thread *th, size_t n, int32_t tid,
			uint32_t gen)
{
	uint32_t seen = 0, last = 0;

	for (size_t i = 0; i < n; i++)
		if (th[i].tid == tid) {
			last = th[i].utid;
			if (seen++ == gen)
				return last;
		}
	return last;
}

static void cause_row(struct exporter *x, sqlite3_stmt *s, uint32_t utid,
		      const char *kind, const char *cause, const char *sys,
		      uint64_t count, uint64_t sleep, uint64_t wait)
{
	if (!count && !sleep && !wait)
		return;
	sqlite3_bind_int64(s, 1, utid);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, cause, -1, SQLITE_STATIC);
	if (sys)
		sqlite3_bind_text(s, 4, sys, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 4);
	sqlite3_bind_int64(s, 5, (int64_t)count);
	sqlite3_bind_int64(s, 6, (int64_t)sleep);
	sqlite3_bind_int64(s, 7, (int64_t)wait);
	step(x, s);
}

static int write_stats(struct exporter *x, const struct tl_thread *th,
		       size_t n)
{
	struct sq *q = x->priv;
	struct ctxmon_stats *rows = NULL;
	struct ctxmon_causes *cz = NULL;
	sqlite3_stmt *ss = NULL, *cs = NULL;
	size_t nr = 0, nc = 0;
	int ret;

	ctxmon_account_finish(q->a, x->stop_ts);
	rows = ctxmon_account_rows(q->a, CTXMON_ROWS_THREADS, true, &nr);
	cz = ctxmon_account_causes(q->a, CTXMON_ROWS_THREADS, true, &nc);
	if (!rows || !cz || nc != nr) {
		ret = export__fail(-ENOMEM, "out of memory");
		export__err(x, ret);
		goto out;
	}
	ret = prepare(x, "INSERT OR REPLACE INTO thread_stats VALUES "
			 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &ss);
	if (!ret)
		ret = prepare(x, "INSERT INTO switch_cause VALUES "
				 "(?,?,?,?,?,?,?)", &cs);
	if (ret)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		const struct ctxmon_stats *r = &rows[i];
		const struct ctxmon_causes *c = &cz[i];
		uint32_t u = utid_of(th, n, r->tid, r->gen);
		int64_t v[18];

		if (!u || r->folded)
			continue;
		v[0] = u;
		v[1] = (int64_t)r->switch_in;
		v[2] = (int64_t)r->switch_out;
		v[3] = (int64_t)r->voluntary;
		v[4] = (int64_t)r->involuntary;
		v[5] = (int64_t)r->exit_switch;
		v[6] = (int64_t)r->run_ns;
		v[7] = (int64_t)r->wait_ns;
		v[8] = (int64_t)r->sleep_ns[CTXMON_SLEEP_S];
		v[9] = (int64_t)r->sleep_ns[CTXMON_SLEEP_D];
		v[10] = (int64_t)r->sleep_ns[CTXMON_SLEEP_OTHER];
		v[11] = (int64_t)r->migrations;
		v[12] = (int64_t)r->wakeups;
		v[13] = (int64_t)c->lat.count;
		v[14] = (int64_t)c->lat.p50_ns;
		v[15] = (int64_t)c->lat.p99_ns;
		v[16] = (int64_t)c->lat.max_ns;
		v[17] = r->incomplete;
		for (int k = 0; k < 18; k++)
			sqlite3_bind_int64(ss, k + 1, v[k]);
		step(x, ss);
		for (unsigned k = 0; k < CTXMON_INVOL__MAX; k++)
			cause_row(x, cs, u, "involuntary",
				  ctxmon_invol_cause_name(k), NULL,
				  c->invol[k].count, c->invol[k].sleep_ns,
				  c->invol[k].wait_ns);
		for (unsigned k = 0; k < CTXMON_VOL__MAX; k++) {
			if (k == CTXMON_VOL_SYSCALL)
				continue; /* by syscall, below */
			cause_row(x, cs, u, "voluntary",
				  ctxmon_vol_cause_name(k), NULL,
				  c->vol[k].count, c->vol[k].sleep_ns,
				  c->vol[k].wait_ns);
		}
		for (size_t k = 0; k < c->nsys; k++) {
			const char *nm = ctxmon_syscall_name(q->arch,
							     c->sys[k].id);
			char buf[32];

			if (!nm) {
				snprintf(buf, sizeof(buf), "syscall_%ld",
					 c->sys[k].id);
				nm = buf;
			}
			cause_row(x, cs, u, "voluntary", "syscall", nm,
				  c->sys[k].count, c->sys[k].sleep_ns,
				  c->sys[k].wait_ns);
		}
		for (unsigned k = 0; k < CTXMON_EXIT__MAX; k++)
			cause_row(x, cs, u, "exit", ctxmon_exit_cause_name(k),
				  NULL, c->exit[k], 0, 0);
		cause_row(x, cs, u, "initial", "initial", NULL, 0,
			  c->initial.sleep_ns, c->initial.wait_ns);
	}
out:
	sqlite3_finalize(ss);
	sqlite3_finalize(cs);
	ctxmon_causes_free(cz, nc);
	free(rows);
	return x->err;
}

/* A metadata value of several numbers as "1,2,3" (the caller frees), or
 * NULL when it is not one or on no memory. */
static char *meta_list(const struct ctxmon_reader *r, const char *k)
{
	size_t n = ctxmon_reader_meta_u64s(r, k, NULL, 0), len = 0;
	uint64_t *u;
	char *out = NULL;

	if (n < 2)
		return NULL;
	u = calloc(n, sizeof(*u));
	out = u ? malloc(n * 21) : NULL;
	if (!out)
		goto out;
	ctxmon_reader_meta_u64s(r, k, u, n);
	for (size_t j = 0; j < n; j++)
		len += (size_t)sprintf(out + len, "%s%" PRIu64, j ? "," : "",
				       u[j]);
out:
	free(u);
	return out;
}

/*
 * One row per metadata key, as `script --header` shows it: a string in
 * str_value, a number in int_value, a list of numbers in str_value as
 * "1,2".  A string of 7 characters is 8 bytes, as a number is: a string
 * is never also read as one.
 */
static int write_meta(struct exporter *x)
{
	sqlite3_stmt *s = NULL;
	const char *k;
	char *list = NULL;
	int ret = prepare(x, "INSERT INTO metadata VALUES (?,?,?)", &s);

	for (size_t i = 0; !ret && (k = ctxmon_reader_meta_key(x->r, i)); i++) {
		const char *v = ctxmon_reader_meta_str(x->r, k);
		uint64_t u = 0;
		bool num = false;

		if (!strncmp(k, CTXMON_META_FORMAT_PREFIX,
			     strlen(CTXMON_META_FORMAT_PREFIX)))
			continue;
		/* read before anything is bound with it: as an argument of
		 * the same call its value was the previous key's */
		if (!v)
			num = ctxmon_reader_meta_u64(x->r, k, &u) == 0;
		if (!v && !num)
			v = list = meta_list(x->r, k);
		sqlite3_bind_text(s, 1, k, -1, SQLITE_TRANSIENT);
		if (v)
			sqlite3_bind_text(s, 2, v, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(s, 2);
		bind_opt(s, 3, num, (int64_t)u);
		step(x, s);
		free(list);
		list = NULL;
	}
	sqlite3_finalize(s);
	return x->err;
}

/* ---- open / close ---------------------------------------------------- */

static int sq_open(struct exporter *x, struct tl_ops *ops)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_causes_opts co = { .sz = sizeof(co) };
	struct sq *q = calloc(1, sizeof(*q));
	const char *work;
	struct stat sb;
	int rc;

	if (!q)
		return -ENOMEM;
	x->priv = q;
	q->arch = ctxmon_reader_meta_str(x->r, CTXMON_META_ARCH);
	co.arch = q->arch;
	q->a = ctxmon_account_new(&ao);
	if (!q->a || ctxmon_account_enable_causes(q->a, &co) < 0)
		return -ENOMEM;
	/* a new empty file beside the target (the outfile's), never the
	 * old database, which SQLite would add to; and only ever a regular
	 * file */
	work = ctxmon_outfile_work_path(x->out);
	if (!work || lstat(work, &sb) < 0 || !S_ISREG(sb.st_mode))
		return export__fail(-EINVAL,
				    "%s is not a regular file: SQLite needs one",
				    x->path);
	rc = sqlite3_open_v2(work, &q->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK)
		return export__fail(-EIO, "cannot create %s: %s", x->path,
				    q->db ? sqlite3_errmsg(q->db) :
					    "out of memory");
	if (exec_sql(x, schema))
		return x->err;
	for (int i = 0; i < S__N; i++)
		if (prepare(x, inserts[i], &q->st[i]))
			return x->err;
	*ops = (struct tl_ops){ .span = sq_span, .sched = sq_sched,
				.wake = sq_wake, .ctx = x };
	return 0;
}

static int sq_close(struct exporter *x, bool ok)
{
	struct sq *q = x->priv;
	uint32_t *upid_of = NULL;
	int ret = 0;

	if (!q)
		return 0;
	if (ok && q->db && !x->err) {
		size_t n;
		const struct tl_thread *th = timeline__threads(x->tl, &n);

		for (size_t i = 0; i < q->nb; i++)
			if (q->b[i].used)
				bucket_flush(x, (int32_t)i, &q->b[i]);
		x->st->processes = 0;
		upid_of = calloc(n + 1, sizeof(*upid_of));
		if (!upid_of)
			export__err(x, -ENOMEM);
		if (!x->err)
			write_threads(x, th, n, upid_of);
		if (!x->err)
			write_stats(x, th, n);
		if (!x->err)
			write_meta(x);
		if (!x->err)
			exec_sql(x,
				 "COMMIT;"
				 "CREATE INDEX sched_utid ON sched(utid);"
				 "CREATE INDEX sched_ts ON sched(ts);"
				 "CREATE INDEX thread_state_utid ON "
				 "thread_state(utid);"
				 "CREATE INDEX wakeup_utid ON wakeup(utid);");
		ret = x->err;
	}
	for (int i = 0; i < S__N; i++)
		sqlite3_finalize(q->st[i]);
	if (q->db && sqlite3_close(q->db) != SQLITE_OK && ok && !ret)
		ret = export__fail(-EIO, "closing %s failed", x->path);
	if (ok && !ret) {
		struct stat sb;

		if (stat(ctxmon_outfile_work_path(x->out), &sb) == 0)
			x->st->bytes = (uint64_t)sb.st_size;
	}
	free(upid_of);
	free(q->b);
	ctxmon_account_free(q->a);
	free(q);
	x->priv = NULL;
	return ret;
}

const struct export_format export__sqlite = {
	.name = "sqlite",
	.open = sq_open,
	.task = sq_task,
	.event = sq_event,
	.close = sq_close,
};
