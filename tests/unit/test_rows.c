/*
 * test_rows.c - unit tests of the rows module (src/analysis/rows.c,
 * include/ctxmon/rows.h) on synthetic input: interval deltas of a counting
 * source's cumulative rows, the process roll-up, log2 percentiles, and the
 * same history given as a streaming account and as counting rows, which
 * must give the same rows, pid reuse included.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/rows.h>

#include "synth.h"

static struct ctxmon_stats row(pid_t tid, pid_t tgid, const char *comm,
			       uint64_t vol, uint64_t invol, uint64_t run)
{
	struct ctxmon_stats r;

	memset(&r, 0, sizeof(r));
	r.tid = tid;
	r.tgid = tgid;
	r.comm = comm;
	r.voluntary = vol;
	r.involuntary = invol;
	r.switch_out = vol + invol;
	r.run_ns = run;
	r.nthreads = 1;
	r.lat.max_waker_tid = r.lat.max_cpu = r.lat.max_prev_tid = -1;
	return r;
}

/* A counting source: the cumulative rows it returns next. */
struct source {
	const struct ctxmon_stats *rows;
	size_t n;
};

static int source_read(void *ctx, uint64_t ts, struct ctxmon_stats **rows,
		       size_t *n)
{
	const struct source *src = ctx;

	(void)ts;
	*rows = malloc((src->n ? src->n : 1) * sizeof(**rows));
	if (!*rows)
		return -1;
	memcpy(*rows, src->rows, src->n * sizeof(**rows));
	*n = src->n;
	return 0;
}

static struct ctxmon_rowset *source_rowset(struct source *src, bool interval)
{
	struct ctxmon_rowset_opts o = {
		.sz = sizeof(o),
		.interval = interval,
		.read_rows = source_read,
		.read_ctx = src,
	};
	struct ctxmon_rowset *r = ctxmon_rowset_new(&o);

	assert_non_null(r);
	return r;
}

static void test_delta(void **state)
{
	struct ctxmon_stats a[2], b[3];
	struct source src = { a, 2 };
	struct ctxmon_rowset *r = source_rowset(&src, true);
	struct ctxmon_snapshot s;

	(void)state;
	a[0] = row(20, 10, "w", 5, 1, 100);
	a[1] = row(10, 10, "m", 2, 0, 50);
	a[0].last_ts = a[1].last_ts = 1000;
	/* first interval: whole, sorted by tid */
	assert_int_equal(ctxmon_rowset_snapshot(r, 1000, &s), 0);
	assert_int_equal(s.nthreads, 2);
	assert_int_equal(s.threads[0].tid, 10);
	assert_int_equal(s.threads[1].voluntary, 5);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.procs[0].voluntary, 7);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_next(r, 1000);

	b[0] = row(20, 10, "w", 9, 4, 180);
	b[1] = row(10, 10, "m", 2, 0, 50);
	b[2] = row(30, 10, "new", 1, 0, 7);
	b[0].first_ts = b[1].first_ts = 0;
	b[0].last_ts = b[1].last_ts = b[2].last_ts = 2000;
	b[2].first_ts = 1500;
	src.rows = b;
	src.n = 3;
	assert_int_equal(ctxmon_rowset_snapshot(r, 2000, &s), 0);
	/* 10: nothing new; 20: 4 vol, 3 invol, 80 ns; 30: whole */
	assert_int_equal(s.threads[0].tid, 10);
	assert_int_equal(s.threads[0].voluntary, 0);
	assert_int_equal(s.threads[0].first_ts, 1000);
	assert_int_equal(s.threads[1].voluntary, 4);
	assert_int_equal(s.threads[1].involuntary, 3);
	assert_int_equal(s.threads[1].switch_out, 7);
	assert_int_equal(s.threads[1].run_ns, 80);
	assert_int_equal(s.threads[2].voluntary, 1);
	assert_int_equal(s.threads[2].first_ts, 1500);
	assert_int_equal(s.nprocs, 1);
	assert_int_equal(s.procs[0].voluntary, 5);
	assert_int_equal(s.procs[0].nthreads, 3);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_next(r, 2000);

	/* a reused tid (gen 1) is a new thread, not a decrease */
	b[1] = row(20, 10, "w2", 1, 0, 3);
	b[1].gen = 1;
	b[0] = row(10, 10, "m", 2, 0, 50);
	src.n = 2;
	assert_int_equal(ctxmon_rowset_snapshot(r, 3000, &s), 0);
	assert_int_equal(s.threads[1].tid, 20);
	assert_int_equal(s.threads[1].voluntary, 1);
	ctxmon_snapshot_clear(&s);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_free(r);
	ctxmon_rowset_free(NULL);
}

static void test_processes(void **state)
{
	struct ctxmon_stats th[4], *p;
	size_t n;

	(void)state;
	th[0] = row(21, 20, "worker", 3, 1, 10);
	th[1] = row(20, 20, "leader", 1, 2, 20);
	th[2] = row(30, -1, "lone", 7, 0, 5);
	th[3] = row(22, 20, "worker", 0, 4, 1);
	th[1].ppid = 1;
	th[0].lat.count = 2;
	th[0].lat.max_ns = 500;
	th[3].lat.count = 1;
	th[3].lat.max_ns = 900;
	th[3].exited = true;
	p = ctxmon_rows_processes(th, 4, &n);
	assert_non_null(p);
	assert_int_equal(n, 2);
	assert_int_equal(p[0].tid, 20);
	assert_string_equal(p[0].comm, "leader");
	assert_int_equal(p[0].ppid, 1);
	assert_int_equal(p[0].nthreads, 3);
	assert_int_equal(p[0].voluntary, 4);
	assert_int_equal(p[0].involuntary, 7);
	assert_int_equal(p[0].run_ns, 31);
	assert_int_equal(p[0].lat.count, 3);
	assert_int_equal(p[0].lat.max_ns, 900);
	assert_false(p[0].lat.max_is_bound);
	assert_false(p[0].exited);
	assert_int_equal(p[1].tid, 30);
	assert_int_equal(p[1].nthreads, 1);
	free(p);
	/* a bound above the measured maxima: the process's is a bound */
	th[0].lat.max_ns = 1023;
	th[0].lat.max_is_bound = true;
	p = ctxmon_rows_processes(th, 4, &n);
	assert_int_equal(p[0].lat.max_ns, 1023);
	assert_true(p[0].lat.max_is_bound);
	free(p);
	/* ... and one below them is no more than they */
	th[0].lat.max_ns = 511;
	p = ctxmon_rows_processes(th, 4, &n);
	assert_int_equal(p[0].lat.max_ns, 900);
	assert_false(p[0].lat.max_is_bound);
	free(p);
	p = ctxmon_rows_processes(th, 0, &n);
	assert_non_null(p);
	assert_int_equal(n, 0);
	free(p);
}

static void test_percentile(void **state)
{
	struct ctxmon_latency l;

	(void)state;
	memset(&l, 0, sizeof(l));
	assert_int_equal(ctxmon_latency_percentile(&l, 99), 0);
	/* 98 samples in [1024, 2048), 2 in [65536, 131072), max 70000: one
	 * method with `latency` (ctxmon_lat_quantile): nearest rank, spread
	 * evenly in its bucket, the last rank the maximum */
	l.count = 100;
	l.hist[10] = 98;
	l.hist[16] = 2;
	l.max_ns = 70000;
	/* rank 50 of 98 in [1024, 2047]: 1024 + 1023 * 49.5 / 98 */
	assert_int_equal(ctxmon_latency_percentile(&l, 50),
			 1024 + (uint64_t)(1023 * 49.5 / 98));
	assert_int_equal(ctxmon_latency_percentile(&l, 98),
			 1024 + (uint64_t)(1023 * 97.5 / 98));
	/* rank 99: first of the 2 in [65536, 70000] */
	assert_int_equal(ctxmon_latency_percentile(&l, 99),
			 65536 + (uint64_t)(4464 * 0.5 / 2));
	assert_int_equal(ctxmon_latency_percentile(&l, 100), 70000);
	l.hist[16] = 1;
	l.hist[10] = 99;
	assert_int_equal(ctxmon_latency_percentile(&l, 99),
			 1024 + (uint64_t)(1023 * 98.5 / 99));
}

/* A counting backend keeps one maximum for the run: an interval whose
 * samples did not beat it must not show it (issue 13, defect 3). */
static void test_delta_max(void **state)
{
	struct ctxmon_stats a, b, c;
	struct source src = { &a, 1 };
	struct ctxmon_rowset *r = source_rowset(&src, true);
	struct ctxmon_snapshot s;

	(void)state;
	a = row(20, 20, "w", 5, 0, 100);
	a.last_ts = 1000;
	a.lat.count = 3;
	a.lat.hist[20] = 3;	/* about 1 ms */
	a.lat.max_ns = 1500000;
	a.lat.max_ts = 900;
	a.lat.max_waker_tid = 7;
	assert_int_equal(ctxmon_rowset_snapshot(r, 1000, &s), 0);
	assert_int_equal(s.threads[0].lat.max_ns, 1500000);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_next(r, 1000);

	/* two new samples near 3 us; the run's maximum is still the old */
	b = a;
	b.last_ts = 2000;
	b.lat.count = 5;
	b.lat.hist[11] = 2;
	src.rows = &b;
	assert_int_equal(ctxmon_rowset_snapshot(r, 2000, &s), 0);
	assert_int_equal(s.threads[0].lat.count, 2);
	assert_true(s.threads[0].lat.max_ns <= 4095); /* the interval's bucket */
	assert_true(s.threads[0].lat.max_ts == 0 ||
		    s.threads[0].lat.max_ts > 1000);
	assert_int_equal(s.threads[0].lat.max_waker_tid, -1);
	/* and says it is a bound, not a measurement (issue 45, item 4) */
	assert_true(s.threads[0].lat.max_is_bound);
	assert_int_equal(s.threads[0].lat.max_ns, 4095);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_next(r, 2000);

	/* a new maximum in the next interval is the interval's own */
	c = b;
	c.last_ts = 3000;
	c.lat.count = 6;
	c.lat.hist[22] = 1;
	c.lat.max_ns = 5000000;
	c.lat.max_ts = 2500;
	c.lat.max_waker_tid = 9;
	src.rows = &c;
	assert_int_equal(ctxmon_rowset_snapshot(r, 3000, &s), 0);
	assert_int_equal(s.threads[0].lat.count, 1);
	assert_int_equal(s.threads[0].lat.max_ns, 5000000);
	assert_int_equal(s.threads[0].lat.max_ts, 2500);
	assert_int_equal(s.threads[0].lat.max_waker_tid, 9);
	assert_false(s.threads[0].lat.max_is_bound);
	ctxmon_snapshot_clear(&s);
	ctxmon_rowset_free(r);
}

/*
 * Process 100 (leader 100, thread 101) runs and exits; pid 100 is then
 * reused by a new process forked by 50, which runs too.  CPU 0 only.
 */
enum { SH = 50, P = 100, T = 101 };

static const struct who reuse_whos[] = {
	{ SH, SH, "sh" },
	{ P, P, "old" },
	{ T, P, "old" },
};

static void reuse_history(struct ctxmon_account *a)
{
	use_whos(reuse_whos, sizeof(reuse_whos) / sizeof(reuse_whos[0]));
	ctxmon_account_add_task(a, SH, SH, "sh");
	ctxmon_account_add_task(a, P, P, "old");
	ctxmon_account_add_task(a, T, P, "old");
	sw(a, 1000, 0, 0, "R", P);
	sw(a, 2000, 0, P, "S", T);
	sw(a, 3000, 0, T, "R", P);
	sw(a, 4000, 0, P, "R+", T);
	exit_ev(a, 4500, 0, T);
	sw(a, 5000, 0, T, "X", P);
	exit_ev(a, 5500, 0, P);
	sw(a, 6000, 0, P, "Z", SH);
	/* the new process 100 */
	fork_ev(a, 7000, 0, SH, P, P, "new");
	sw(a, 8000, 0, SH, "S", P);
	sw(a, 9000, 0, P, "S", 0);
	sw(a, 10000, 0, 0, "R", P);
	sw(a, 11000, 0, P, "R", 0);
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

static void same_procs(struct ctxmon_stats *x, size_t nx,
		       struct ctxmon_stats *y, size_t ny)
{
	assert_int_equal(nx, ny);
	qsort(x, nx, sizeof(*x), cmp_rows);
	qsort(y, ny, sizeof(*y), cmp_rows);
	for (size_t i = 0; i < nx; i++) {
		assert_int_equal(x[i].tid, y[i].tid);
		assert_int_equal(x[i].gen, y[i].gen);
		assert_int_equal(x[i].nthreads, y[i].nthreads);
		assert_int_equal(x[i].voluntary, y[i].voluntary);
		assert_int_equal(x[i].involuntary, y[i].involuntary);
		assert_int_equal(x[i].exit_switch, y[i].exit_switch);
		assert_int_equal(x[i].run_ns, y[i].run_ns);
		assert_int_equal(x[i].wait_ns, y[i].wait_ns);
		assert_string_equal(x[i].comm, y[i].comm);
	}
}

static void test_pid_reuse(void **state)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct ctxmon_account *a = ctxmon_account_new(&ao);
	struct ctxmon_stats *th, *pr, *rolled;
	size_t nth, npr, nrolled;
	struct ctxmon_rowset_opts so = { .sz = sizeof(so) };
	struct ctxmon_rowset *stream, *count;
	struct ctxmon_snapshot ss, cs;
	struct source src;

	(void)state;
	assert_non_null(a);
	reuse_history(a);
	ctxmon_account_finish(a, 12000);
	th = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &nth);
	pr = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &npr);
	assert_non_null(th);
	assert_non_null(pr);
	/* sh, the old 100, the new 100: two processes with pid 100 */
	assert_int_equal(npr, 3);

	/* the library's roll-up of the same thread rows agrees */
	rolled = ctxmon_rows_processes(th, nth, &nrolled);
	assert_non_null(rolled);
	same_procs(pr, npr, rolled, nrolled);
	free(rolled);

	/* a streaming rowset over the account, and a counting one over the
	 * same thread rows without their process generation (a counting
	 * backend does not know it), give the same process rows */
	so.account = a;
	stream = ctxmon_rowset_new(&so);
	assert_non_null(stream);
	for (size_t i = 0; i < nth; i++)
		th[i].pgen = 0;
	src.rows = th;
	src.n = nth;
	count = source_rowset(&src, false);
	assert_int_equal(ctxmon_rowset_snapshot(stream, 12000, &ss), 0);
	assert_int_equal(ctxmon_rowset_snapshot(count, 12000, &cs), 0);
	assert_int_equal(ss.nthreads, cs.nthreads);
	same_procs(ss.procs, ss.nprocs, cs.procs, cs.nprocs);
	same_procs(ss.procs, ss.nprocs, pr, npr);
	for (size_t i = 0; i < cs.nprocs; i++)
		if (cs.procs[i].tid == P)
			assert_int_equal(cs.procs[i].nthreads,
					 cs.procs[i].gen ? 1 : 2);
	ctxmon_snapshot_clear(&ss);
	ctxmon_snapshot_clear(&cs);
	ctxmon_rowset_free(stream);
	ctxmon_rowset_free(count);
	free(th);
	free(pr);
	ctxmon_account_free(a);
}

static void test_caps(void **state)
{
	size_t i;

	(void)state;
	/* every backend either streams or counts, never both */
	for (i = 0; ctxmon_backend_name(i); i++) {
		unsigned c = ctxmon_backend_caps(ctxmon_backend_name(i));

		assert_true(!!(c & CTXMON_CAP_EVENTS) !=
			    !!(c & CTXMON_CAP_COUNTS));
	}
	assert_true(i >= 2);
	assert_int_equal(ctxmon_backend_caps("no-such-backend"), 0);
	assert_null(ctxmon_backend_with(~0u));
	assert_non_null(ctxmon_backend_with(CTXMON_CAP_COUNTS));
}

/*
 * ctxmon_rows_fold_exited: 6 exited rows of one comm and a live one, keep
 * 2: more than 2 x 2 have exited, so the 4 oldest become one folded row;
 * the 2 newest and the live one stay; the sums are those of the input.
 */
static void test_fold_exited(void **state)
{
	struct ctxmon_stats rows[7];
	uint64_t vol = 0, run = 0, v2 = 0, r2 = 0;
	size_t n = 7, nfold = 0, nexit = 0;

	(void)state;
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < 7; i++) {
		rows[i].tid = 100 + i;
		rows[i].tgid = 100;
		rows[i].comm = "w";
		rows[i].nthreads = 1;
		rows[i].voluntary = 10u * (unsigned)(i + 1);
		rows[i].run_ns = 1000u * (unsigned)(i + 1);
		rows[i].last_ts = 100u * (unsigned)(i + 1);
		rows[i].exited = i < 6;
		vol += rows[i].voluntary;
		run += rows[i].run_ns;
	}
	assert_int_equal(ctxmon_rows_fold_exited(NULL, &n, 2), -EINVAL);
	assert_int_equal(ctxmon_rows_fold_exited(rows, NULL, 2), -EINVAL);
	/* not more than twice @keep exited: nothing changes */
	assert_int_equal(ctxmon_rows_fold_exited(rows, &n, 3), 0);
	assert_int_equal(n, 7);
	assert_int_equal(ctxmon_rows_fold_exited(rows, &n, 2), 0);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++) {
		v2 += rows[i].voluntary;
		r2 += rows[i].run_ns;
		nfold += rows[i].folded != 0;
		nexit += rows[i].exited && !rows[i].folded;
		/* the two kept are the newest exited (tids 104, 105) */
		if (rows[i].exited && !rows[i].folded)
			assert_true(rows[i].tid == 104 || rows[i].tid == 105);
	}
	assert_int_equal(nfold, 1);
	assert_int_equal(nexit, 2);
	assert_int_equal(v2, vol);
	assert_int_equal(r2, run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_delta_max),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_fold_exited),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
