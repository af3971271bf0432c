/*
 * test_metrics.c - the bounded families of the metrics exporter
 * (src/metrics/metrics.c) on synthetic collections: at most top members,
 * "other" is everything else, and every exported counter only grows while
 * rows come, go, exit and change rank; plus the syscall classes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/metrics_int.h"

#define W 2

/* A synthetic world: NKEYS possible rows, each with W counters. */
#define NKEYS 200
struct world {
	uint64_t v[NKEYS][W];
	bool alive[NKEYS];
	uint64_t gone[W];
};

static size_t rows_of(struct world *w, struct fam_row *rows)
{
	size_t n = 0;

	for (int k = 0; k < NKEYS; k++) {
		if (!w->alive[k])
			continue;
		rows[n].k1 = (uint64_t)k; /* key 0: the overflow row */
		rows[n].k2 = 0;
		rows[n].v = w->v[k];
		rows[n].act = w->v[k][0];
		rows[n].name = NULL;
		n++;
	}
	return n;
}

static void test_bound_and_sum(void **state)
{
	struct world w = { 0 };
	struct fam_row rows[NKEYS];
	struct fam f;
	uint64_t total[W] = { 0 }, sum[W], e[W];
	size_t n;

	(void)state;
	assert_int_equal(fam__init(&f, W, 5), 0);
	for (int k = 0; k < NKEYS; k++) {
		w.alive[k] = true;
		w.v[k][0] = (uint64_t)k * 3;
		w.v[k][1] = 7;
		total[0] += w.v[k][0];
		total[1] += 7;
	}
	n = rows_of(&w, rows);
	assert_int_equal(fam__update(&f, rows, n), 0);
	assert_int_equal(f.nm, 5);
	memcpy(sum, f.other, sizeof(sum));
	for (size_t i = 0; i < f.nm; i++) {
		assert_int_not_equal(f.m[i].k1, 0); /* overflow row stays out */
		assert_true(f.m[i].k1 >= NKEYS - 5); /* the most active */
		fam__value(&f, i, e);
		sum[0] += e[0];
		sum[1] += e[1];
	}
	/* first collection: members export everything, nothing is lost */
	assert_int_equal(sum[0], total[0]);
	assert_int_equal(sum[1], total[1]);
	fam__fini(&f);
}

static void test_monotonic_churn(void **state)
{
	struct world w = { 0 };
	struct fam_row rows[NKEYS];
	uint64_t last_other[W] = { 0 }, e[W];
	uint64_t last_member[NKEYS][W], last_v[NKEYS][W];
	bool was_member[NKEYS], was_alive[NKEYS];
	struct fam f;

	(void)state;
	srand(12345);
	assert_int_equal(fam__init(&f, W, 8), 0);
	for (int k = 0; k < 50; k++)
		w.alive[k] = true;
	for (int round = 0; round < 400; round++) {
		size_t n;

		/* activity: a few hot rows that change over time */
		for (int k = 0; k < NKEYS; k++) {
			if (!w.alive[k])
				continue;
			if (rand() % 4 == 0 || (k + round / 40) % 17 == 0) {
				w.v[k][0] += (uint64_t)(rand() % 100);
				w.v[k][1] += 1;
			}
		}
		/* processes exit (folded) and new ones appear */
		for (int k = 1; k < NKEYS; k++) {
			if (w.alive[k] && rand() % 30 == 0) {
				fam__gone(&f, w.v[k]);
				w.alive[k] = false;
				w.v[k][0] = w.v[k][1] = 0;
			} else if (!w.alive[k] && rand() % 40 == 0) {
				w.alive[k] = true;
			}
		}
		memset(was_member, 0, sizeof(was_member));
		for (size_t i = 0; i < f.nm; i++) {
			fam__value(&f, i, last_member[f.m[i].k1]);
			was_member[f.m[i].k1] = true;
		}
		n = rows_of(&w, rows);
		assert_int_equal(fam__update(&f, rows, n), 0);
		assert_true(f.nm <= 8);
		for (int j = 0; j < W; j++) {
			assert_true(f.other[j] >= last_other[j]);
			last_other[j] = f.other[j];
		}
		for (size_t i = 0; i < f.nm; i++) {
			uint64_t k = f.m[i].k1;

			fam__value(&f, i, e);
			if (was_member[k])
				for (int j = 0; j < W; j++)
					assert_true(e[j] >= last_member[k][j]);
			else if (round && was_alive[k] && w.alive[k])
				/* joined: what it did since the last one */
				for (int j = 0; j < W; j++)
					assert_int_equal(e[j],
							 w.v[k][j] - last_v[k][j]);
			else if (round)
				/* new since the last collection: all of it */
				for (int j = 0; j < W; j++)
					assert_int_equal(e[j], w.v[k][j]);
		}
		memcpy(last_v, w.v, sizeof(last_v));
		memcpy(was_alive, w.alive, sizeof(was_alive));
	}
	fam__fini(&f);
}

/* A row first seen without switches (a process forked just before a
 * collection) is not admitted then; when it becomes active it joins with
 * all it did since, as "other" never showed it. */
static void test_join_after_idle_start(void **state)
{
	struct world w = { 0 };
	struct fam_row rows[NKEYS];
	uint64_t e[W], other0;
	struct fam f;
	size_t n;

	(void)state;
	assert_int_equal(fam__init(&f, W, 4), 0);
	w.alive[1] = true;
	w.v[1][0] = 10;
	n = rows_of(&w, rows);
	assert_int_equal(fam__update(&f, rows, n), 0);
	/* appears with one wakeup and no switch */
	w.alive[7] = true;
	w.v[7][1] = 1;
	n = rows_of(&w, rows);
	assert_int_equal(fam__update(&f, rows, n), 0);
	assert_int_equal(f.nm, 1);
	other0 = f.other[1];
	assert_int_equal(other0, 1);
	/* then switches 6466 times */
	w.v[7][0] = 6466;
	w.v[7][1] = 3;
	n = rows_of(&w, rows);
	assert_int_equal(fam__update(&f, rows, n), 0);
	assert_int_equal(f.nm, 2);
	for (size_t i = 0; i < f.nm; i++) {
		if (f.m[i].k1 != 7)
			continue;
		fam__value(&f, i, e);
		assert_int_equal(e[0], 6466);
		assert_int_equal(e[1], 2);
	}
	/* "other" keeps the wakeup it showed */
	assert_int_equal(f.other[0], 0);
	assert_int_equal(f.other[1], other0);
	fam__fini(&f);
}

static void test_syscall_classes(void **state)
{
	(void)state;
	assert_int_equal(cgagg__syscall_class("futex"), CGAGG_CAUSE_FUTEX);
	assert_int_equal(cgagg__syscall_class("epoll_wait"), CGAGG_CAUSE_POLL);
	assert_int_equal(cgagg__syscall_class("read"), CGAGG_CAUSE_READ);
	assert_int_equal(cgagg__syscall_class("sendmsg"), CGAGG_CAUSE_WRITE);
	assert_int_equal(cgagg__syscall_class("clock_nanosleep"),
			 CGAGG_CAUSE_SLEEP);
	assert_int_equal(cgagg__syscall_class("wait4"), CGAGG_CAUSE_WAIT);
	assert_int_equal(cgagg__syscall_class("openat"),
			 CGAGG_CAUSE_SYSCALL_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_and_sum),
		cmocka_unit_test(test_monotonic_churn),
		cmocka_unit_test(test_join_after_idle_start),
		cmocka_unit_test(test_syscall_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
