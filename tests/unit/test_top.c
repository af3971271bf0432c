/*
 * test_top.c - unit tests of `ctxmon top`'s row arithmetic and view
 * (src/cli/top_rows.c, src/cli/top_view.c; the CLI is not in the library,
 * so they are built into this test): interval deltas of cumulative rows,
 * the process rollup, percentiles of log2 histograms, filtering, sorting
 * and 80-column rows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/top_rows.c"
#include "cli/top_view.c"

/* the CLI's error printer, which top_rows.c may call */
void cli__err(const char *cmd, const char *fmt, ...)
{
	(void)cmd;
	(void)fmt;
}

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

static void test_delta(void **state)
{
	struct rows_snap snap = { 0 };
	struct ctxmon_stats a[2], b[3];

	(void)state;
	a[0] = row(20, 10, "w", 5, 1, 100);
	a[1] = row(10, 10, "m", 2, 0, 50);
	a[0].last_ts = a[1].last_ts = 1000;
	/* first frame: whole, sorted by tid */
	assert_int_equal(rows__delta(&snap, a, 2), 0);
	assert_int_equal(a[0].tid, 10);
	assert_int_equal(a[1].voluntary, 5);

	b[0] = row(20, 10, "w", 9, 4, 180);
	b[1] = row(10, 10, "m", 2, 0, 50);
	b[2] = row(30, 10, "new", 1, 0, 7);
	b[0].first_ts = b[1].first_ts = 0;
	b[0].last_ts = b[1].last_ts = b[2].last_ts = 2000;
	b[2].first_ts = 1500;
	assert_int_equal(rows__delta(&snap, b, 3), 0);
	/* 10: nothing new; 20: 4 vol, 3 invol, 80 ns; 30: whole */
	assert_int_equal(b[0].tid, 10);
	assert_int_equal(b[0].voluntary, 0);
	assert_int_equal(b[0].first_ts, 1000);
	assert_int_equal(b[1].voluntary, 4);
	assert_int_equal(b[1].involuntary, 3);
	assert_int_equal(b[1].switch_out, 7);
	assert_int_equal(b[1].run_ns, 80);
	assert_int_equal(b[2].voluntary, 1);
	assert_int_equal(b[2].first_ts, 1500);
	/* the snapshot kept is cumulative */
	assert_int_equal(snap.rows[1].voluntary, 9);

	/* a reused tid (gen 1) is a new thread, not a decrease */
	b[1] = row(20, 10, "w2", 1, 0, 3);
	b[1].gen = 1;
	b[0] = row(10, 10, "m", 2, 0, 50);
	assert_int_equal(rows__delta(&snap, b, 2), 0);
	assert_int_equal(b[1].voluntary, 1);
	rows__snap_free(&snap);
	rows__snap_free(&snap);
}

/* A counting backend keeps one maximum for the run: an interval whose
 * samples did not beat it must not show it (issue 13, defect 3). */
static void test_delta_max(void **state)
{
	struct rows_snap snap = { 0 };
	struct ctxmon_stats a, b, c;

	(void)state;
	a = row(20, 20, "w", 5, 0, 100);
	a.last_ts = 1000;
	a.lat.count = 3;
	a.lat.hist[20] = 3;	/* about 1 ms */
	a.lat.max_ns = 1500000;
	a.lat.max_ts = 900;
	a.lat.max_waker_tid = 7;
	assert_int_equal(rows__delta(&snap, &a, 1), 0);
	assert_int_equal(a.lat.max_ns, 1500000);

	/* two new samples near 3 us; the run's maximum is still the old */
	b = a;
	b.last_ts = 2000;
	b.lat.count = 5;
	b.lat.hist[11] = 2;
	assert_int_equal(rows__delta(&snap, &b, 1), 0);
	assert_int_equal(b.lat.count, 2);
	assert_true(b.lat.max_ns <= 4095);	/* within the interval's bucket */
	assert_true(b.lat.max_ts == 0 || b.lat.max_ts > 1000);
	assert_int_equal(b.lat.max_waker_tid, -1);

	/* a new maximum in the next interval is the interval's own */
	c = b;
	c = a;
	c.last_ts = 3000;
	c.lat.count = 6;
	c.lat.hist[11] = 2;
	c.lat.hist[22] = 1;
	c.lat.max_ns = 5000000;
	c.lat.max_ts = 2500;
	c.lat.max_waker_tid = 9;
	assert_int_equal(rows__delta(&snap, &c, 1), 0);
	assert_int_equal(c.lat.count, 1);
	assert_int_equal(c.lat.max_ns, 5000000);
	assert_int_equal(c.lat.max_ts, 2500);
	assert_int_equal(c.lat.max_waker_tid, 9);
	rows__snap_free(&snap);
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
	p = rows__processes(th, 4, &n);
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
	assert_false(p[0].exited);
	assert_int_equal(p[1].tid, 30);
	assert_int_equal(p[1].nthreads, 1);
	free(p);
	p = rows__processes(th, 0, &n);
	assert_non_null(p);
	assert_int_equal(n, 0);
	free(p);
}

static void test_percentile(void **state)
{
	struct ctxmon_latency l;

	(void)state;
	memset(&l, 0, sizeof(l));
	assert_int_equal(rows__percentile(&l, 99), 0);
	/* 98 samples in [1024, 2048), 2 in [65536, 131072), max 70000: one
	 * method with `latency` (ctxmon_lat_quantile): nearest rank, spread
	 * evenly in its bucket, the last rank the maximum */
	l.count = 100;
	l.hist[10] = 98;
	l.hist[16] = 2;
	l.max_ns = 70000;
	/* rank 50 of 98 in [1024, 2047]: 1024 + 1023 * 49.5 / 98 */
	assert_int_equal(rows__percentile(&l, 50), 1024 + (uint64_t)(1023 * 49.5 / 98));
	assert_int_equal(rows__percentile(&l, 98), 1024 + (uint64_t)(1023 * 97.5 / 98));
	/* rank 99: first of the 2 in [65536, 70000] */
	assert_int_equal(rows__percentile(&l, 99), 65536 + (uint64_t)(4464 * 0.5 / 2));
	assert_int_equal(rows__percentile(&l, 100), 70000);
	l.hist[16] = 1;
	l.hist[10] = 99;
	assert_int_equal(rows__percentile(&l, 99), 1024 + (uint64_t)(1023 * 98.5 / 99));
}

static void test_view(void **state)
{
	struct ctxmon_stats th[4];
	struct top_frame f = { .threads = th,
			       .nthreads = 4,
			       .dur_ns = 1000000000ull };
	struct top_view v = { .sort = TOP_SORT_SWITCHES };
	const struct ctxmon_stats **rows;
	char line[256];
	size_t n;

	(void)state;
	th[0] = row(5, 5, "idle", 0, 0, 0);
	th[1] = row(6, 6, "pingpong", 1000, 10, 500);
	th[2] = row(7, 7, "spin", 1, 900, 900000000);
	th[3] = row(8, 6, "pingpong", 990, 10, 400);
	rows = top_view__rows(&v, &f, &n);
	assert_int_equal(n, 3); /* the idle row is left out */
	assert_int_equal(rows[0]->tid, 6);
	assert_int_equal(rows[1]->tid, 8);
	assert_int_equal(rows[2]->tid, 7);
	free(rows);

	v.sort = TOP_SORT_INVOL;
	rows = top_view__rows(&v, &f, &n);
	assert_int_equal(rows[0]->tid, 7);
	free(rows);

	/* a name part, then a pid: the process's threads */
	strcpy(v.filter, "spi");
	rows = top_view__rows(&v, &f, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0]->tid, 7);
	free(rows);
	strcpy(v.filter, "6");
	rows = top_view__rows(&v, &f, &n);
	assert_int_equal(n, 2);
	free(rows);
	v.all_rows = true;
	v.filter[0] = '\0';
	rows = top_view__rows(&v, &f, &n);
	assert_int_equal(n, 4);
	free(rows);

	assert_int_equal(top_view__parse_sort("maxlat", &v.sort), 0);
	assert_int_equal(v.sort, TOP_SORT_MAXLAT);
	assert_int_equal(top_view__parse_sort("nope", &v.sort), -EINVAL);

	/* 80 columns at most, rates per second and shares of the frame */
	top_view__title(line, sizeof(line), 80, false);
	assert_true(strlen(line) <= 80);
	top_view__row(line, sizeof(line), 80, &th[2], f.dur_ns, false);
	assert_true(strlen(line) <= 80);
	assert_non_null(strstr(line, " 901 "));
	assert_non_null(strstr(line, "90.0"));
	th[1].voluntary = 123456789;
	top_view__row(line, sizeof(line), 80, &th[1], f.dur_ns, false);
	assert_true(strlen(line) <= 80);
	assert_non_null(strstr(line, "123.46M"));
	top_view__row(line, sizeof(line), 40, &th[1], f.dur_ns, false);
	assert_int_equal(strlen(line), 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_delta_max),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_view),
	};

	return cmocka_run_group_tests_name("top", tests, NULL, NULL);
}
