/*
 * test_top.c - unit tests of `ctxmon top`'s view (src/cli/top_view.c,
 * linked from the CLI's objects): filtering, sorting and 80-column rows.
 * The row arithmetic is the library's, tested in test_rows.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "cli/cmd_top.h"

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

/* Sampled rows (the /proc tier): a thread read 0.2 s into one walk and
 * 0.1 s into the next had 0.9 s of the 1 s frame; its 900 switches are
 * 1000/s, not 900/s.  Other rows, or a row with no span, use the frame. */
static void test_row_spans(void **state)
{
	struct ctxmon_stats r = row(9, 9, "sampled", 900, 0, 450000000);
	struct top_frame f = { .dur_ns = 1000000000ull };
	char line[256];

	(void)state;
	r.first_ts = 5200000000ull;
	r.last_ts = 6100000000ull;
	assert_int_equal(top_view__row_dur(&f, &r), 1000000000ull);
	f.row_spans = true;
	assert_int_equal(top_view__row_dur(&f, &r), 900000000ull);
	top_view__row(line, sizeof(line), 80, &r, top_view__row_dur(&f, &r),
		      false);
	assert_non_null(strstr(line, " 1000 "));
	assert_non_null(strstr(line, "50.0"));
	r.last_ts = r.first_ts;
	assert_int_equal(top_view__row_dur(&f, &r), 1000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_row_spans),
	};

	return cmocka_run_group_tests_name("top", tests, NULL, NULL);
}
