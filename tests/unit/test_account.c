/*
 * test_account.c - unit tests of the account's switch rules
 * (src/analysis/account.c): run, runnable wait and sleep of a ping-pong
 * and its process roll-up, preemption and yield, the waker's race, a zero
 * latency, and switches the tracepoint did not show (out or in).
 * Synthetic event sequences with the numbers worked out by hand in the
 * comments.  The life cycle, the targets and intervals, and the scheduler
 * simulation have files of their own (test_account_*.c).
 */
#include "account_fx.h"

/* ---- ping-pong ---------------------------------------------------- */

enum { PING = 100, PONG = 101, HOG = 200 };

static const struct who pp_whos[] = {
	{ PING, PING, "ping" },
	{ PONG, PING, "pong" },
	{ HOG, HOG, "hog" },
};

/*
 * ping on CPU 0 and pong on CPU 1 wake each other; hog shares CPU 1 with
 * pong, preempted (R+) once and yielding (R) once.
 *
 *   ts    cpu0                 cpu1
 *   1000  idle -> ping         idle -> pong
 *   1500                       pong S -> hog
 *   2000  ping wakes pong
 *   2100                       wakeup pong (hog current)
 *   2300                       hog R+ -> pong     pong latency 300
 *   2400  ping S -> idle
 *   2600                       pong wakes ping, 2650 wakeup
 *   3400  idle -> ping                            ping latency 800
 *   3500                       pong S -> hog
 *   4000  ping wakes pong (waking + wakeup)
 *   4050                       hog R -> pong      pong latency 50
 *   5000  finish
 */
static struct ctxmon_account *ping_pong(void)
{
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);

	use_whos(pp_whos, 3);
	sw(a, 1000, 0, 0, "R", PING);
	sw(a, 1000, 1, 0, "R", PONG);
	sw(a, 1500, 1, PONG, "S", HOG);
	wake(a, CTXMON_EV_WAKING, 2000, 0, PING, PONG);
	wake(a, CTXMON_EV_WAKEUP, 2100, 1, HOG, PONG);
	sw(a, 2300, 1, HOG, "R+", PONG);
	sw(a, 2400, 0, PING, "S", 0);
	wake(a, CTXMON_EV_WAKING, 2600, 1, PONG, PING);
	wake(a, CTXMON_EV_WAKEUP, 2650, 1, PONG, PING);
	sw(a, 3400, 0, 0, "R", PING);
	sw(a, 3500, 1, PONG, "S", HOG);
	wake(a, CTXMON_EV_WAKING, 4000, 0, PING, PONG);
	wake(a, CTXMON_EV_WAKEUP, 4000, 0, PING, PONG);
	sw(a, 4050, 1, HOG, "R", PONG);
	ctxmon_account_finish(a, 5000);
	return a;
}

static void test_ping_pong(void **state)
{
	struct ctxmon_account *a = ping_pong();
	const struct ctxmon_stats *p;
	const struct ctxmon_cpu_stats *c;
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *cs;
	size_t n;

	(void)state;
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);

	/* ping: runs 1000-2400 and 3400-5000, sleeps 2400-2600, waits
	 * 2600-3400 for CPU 0. */
	p = row(r, n, PING, 0);
	assert_string_equal(p->comm, "ping");
	assert_int_equal(p->tgid, PING);
	assert_int_equal(p->first_ts, 1000);
	assert_int_equal(p->last_ts, 5000);
	assert_int_equal(p->switch_in, 2);
	assert_int_equal(p->switch_out, 1);
	assert_int_equal(p->voluntary, 1);
	assert_int_equal(p->involuntary, 0);
	assert_int_equal(p->run_ns, 3000);
	assert_int_equal(p->wait_ns, 800);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 200);
	assert_int_equal(p->wakeups, 1);
	assert_int_equal(p->lat.count, 1);
	assert_int_equal(p->lat.sum_ns, 800);
	assert_int_equal(p->lat.max_ns, 800);
	assert_int_equal(p->lat.max_ts, 3400);
	assert_int_equal(p->lat.max_waker_tid, PONG);
	assert_int_equal(p->lat.max_cpu, 0);
	assert_int_equal(p->lat.max_prev_tid, 0);
	assert_int_equal(p->lat.hist[9], 1); /* 800 in [512, 1024) */

	/* pong: runs 1000-1500, 2300-3500, 4050-5000; sleeps 1500-2000,
	 * 3500-4000; waits 300 + 50. */
	p = row(r, n, PONG, 0);
	assert_string_equal(p->comm, "pong");
	assert_int_equal(p->tgid, PING);
	assert_int_equal(p->switch_in, 3);
	assert_int_equal(p->switch_out, 2);
	assert_int_equal(p->voluntary, 2);
	assert_int_equal(p->involuntary, 0);
	assert_int_equal(p->run_ns, 2650);
	assert_int_equal(p->wait_ns, 350);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 1000);
	assert_int_equal(p->wakeups, 2);
	assert_int_equal(p->lat.count, 2);
	assert_int_equal(p->lat.sum_ns, 350);
	assert_int_equal(p->lat.max_ns, 300);
	assert_int_equal(p->lat.max_ts, 2300);
	assert_int_equal(p->lat.max_waker_tid, PING);
	assert_int_equal(p->lat.max_cpu, 1);
	assert_int_equal(p->lat.max_prev_tid, HOG);
	assert_int_equal(p->lat.hist[8], 1); /* 300 in [256, 512) */
	assert_int_equal(p->lat.hist[5], 1); /* 50 in [32, 64) */

	/* hog: runs 1500-2300 and 3500-4050, waits 2300-3500, 4050-5000. */
	p = row(r, n, HOG, 0);
	assert_int_equal(p->first_ts, 1500);
	assert_int_equal(p->switch_in, 2);
	assert_int_equal(p->switch_out, 2);
	assert_int_equal(p->voluntary, 0);
	assert_int_equal(p->involuntary, 2);
	assert_int_equal(p->run_ns, 1350);
	assert_int_equal(p->wait_ns, 2150);
	assert_int_equal(sleep_sum(p), 0);
	assert_int_equal(p->wakeups, 0);
	assert_int_equal(p->lat.count, 0);
	assert_int_equal(p->lat.max_waker_tid, -1);
	free(r);

	cs = ctxmon_account_cpus(a, &n);
	assert_non_null(cs);
	assert_int_equal(n, 2);
	c = cpu_row(cs, n, 0);
	assert_int_equal(c->first_ts, 1000);
	assert_int_equal(c->last_ts, 5000);
	assert_int_equal(c->busy_ns, 3000);
	assert_int_equal(c->idle_ns, 1000);
	assert_int_equal(c->switches, 3);
	c = cpu_row(cs, n, 1);
	assert_int_equal(c->busy_ns, 4000);
	assert_int_equal(c->idle_ns, 0);
	assert_int_equal(c->switches, 5);
	free(cs);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

static void test_process_rollup(void **state)
{
	struct ctxmon_account *a = ping_pong();
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	/* ping + pong, from the thread numbers of test_ping_pong. */
	p = row(r, n, PING, 0);
	assert_int_equal(p->tgid, PING);
	assert_string_equal(p->comm, "ping");
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->first_ts, 1000);
	assert_int_equal(p->last_ts, 5000);
	assert_int_equal(p->switch_in, 5);
	assert_int_equal(p->switch_out, 3);
	assert_int_equal(p->voluntary, 3);
	assert_int_equal(p->involuntary, 0);
	assert_int_equal(p->run_ns, 5650);
	assert_int_equal(p->wait_ns, 1150);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 1200);
	assert_int_equal(p->wakeups, 3);
	assert_int_equal(p->lat.count, 3);
	assert_int_equal(p->lat.sum_ns, 1150);
	assert_int_equal(p->lat.max_ns, 800);
	assert_int_equal(p->lat.max_ts, 3400);
	assert_int_equal(p->lat.max_waker_tid, PONG);
	assert_int_equal(p->lat.max_cpu, 0);
	assert_int_equal(p->lat.max_prev_tid, 0);
	assert_int_equal(p->lat.hist[9], 1);
	assert_int_equal(p->lat.hist[8], 1);
	assert_int_equal(p->lat.hist[5], 1);
	assert_false(p->exited);
	p = row(r, n, HOG, 0);
	assert_int_equal(p->nthreads, 1);
	assert_string_equal(p->comm, "hog");
	assert_int_equal(p->involuntary, 2);
	assert_int_equal(p->run_ns, 1350);
	assert_int_equal(p->wait_ns, 2150);
	free(r);
	ctxmon_account_free(a);
}

/* ---- preemption, yield and the waker's race ----------------------- */

static void test_preempt_yield(void **state)
{
	static const struct who w[] = { { 300, 300, "x" }, { 301, 301, "y" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *x, *y;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 2);
	/* x runs 100-200, is preempted (R+) by y, and is woken at 300
	 * while queued (it had set its sleep state): that wait stays a
	 * runnable wait.  y yields (R) at 500, x sleeps at 700. */
	sw(a, 100, 0, 0, "R", 300);
	sw(a, 200, 0, 300, "R+", 301);
	wake(a, CTXMON_EV_WAKING, 300, 0, 301, 300);
	wake(a, CTXMON_EV_WAKEUP, 300, 0, 301, 300);
	sw(a, 500, 0, 301, "R", 300);
	sw(a, 700, 0, 300, "S", 301);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	x = row(r, n, 300, 0);
	y = row(r, n, 301, 0);
	assert_int_equal(x->involuntary, 1);
	assert_int_equal(x->voluntary, 1);
	assert_int_equal(x->switch_in, 2);
	assert_int_equal(x->switch_out, 2);
	assert_int_equal(x->run_ns, 300);
	assert_int_equal(x->wait_ns, 300);
	assert_int_equal(x->sleep_ns[CTXMON_SLEEP_S], 300);
	assert_int_equal(x->wakeups, 1);
	assert_int_equal(x->lat.count, 0);
	assert_int_equal(y->involuntary, 1);
	assert_int_equal(y->voluntary, 0);
	assert_int_equal(y->switch_in, 2);
	assert_int_equal(y->switch_out, 1);
	assert_int_equal(y->run_ns, 600);
	assert_int_equal(y->wait_ns, 200);
	assert_int_equal(y->first_ts, 200);
	assert_int_equal(y->lat.count, 0);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

static void test_waking_race(void **state)
{
	static const struct who w[] = { { 400, 400, "p" }, { 401, 401, "q" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 2);
	sw(a, 100, 0, 0, "R", 400);
	sw(a, 100, 1, 0, "R", 401);
	/* q wakes p before p has left CPU 0: p never sleeps, it waits
	 * from its switch-out (210) to its switch-in (300). */
	wake(a, CTXMON_EV_WAKING, 200, 1, 401, 400);
	sw(a, 210, 0, 400, "S", 0);
	wake(a, CTXMON_EV_WAKEUP, 220, 1, 401, 400);
	sw(a, 300, 0, 0, "R", 400);
	/* Woken in place while running (waking + wakeup before any
	 * switch-out): the later real sleep 500-600 is a sleep. */
	wake(a, CTXMON_EV_WAKING, 400, 1, 401, 400);
	wake(a, CTXMON_EV_WAKEUP, 410, 1, 401, 400);
	sw(a, 500, 0, 400, "D", 0);
	wake(a, CTXMON_EV_WAKING, 600, 1, 401, 400);
	wake(a, CTXMON_EV_WAKEUP, 650, 1, 401, 400);
	sw(a, 700, 0, 0, "R", 400);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 400, 0);
	assert_int_equal(p->voluntary, 2);
	assert_int_equal(p->wakeups, 3);
	assert_int_equal(p->run_ns, 110 + 200 + 300);
	assert_int_equal(p->wait_ns, 90 + 100);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 0);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_D], 100);
	assert_int_equal(p->lat.count, 2);
	assert_int_equal(p->lat.sum_ns, 190);
	assert_int_equal(p->lat.max_ns, 100);
	assert_int_equal(p->lat.max_ts, 700);
	assert_int_equal(p->lat.max_waker_tid, 401);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

static void test_zero_latency(void **state)
{
	static const struct who w[] = { { 410, 410, "z" }, { 411, 411, "w" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 2);
	/* Woken and run in the same nanosecond: a latency of 0 is still
	 * a latency, and the maximum, with its context. */
	sw(a, 100, 0, 411, "S", 410);
	sw(a, 200, 0, 410, "S", 0);
	wake(a, CTXMON_EV_WAKING, 300, 1, 0, 410);
	sw(a, 300, 0, 0, "R", 410);
	ctxmon_account_finish(a, 400);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 410, 0);
	assert_int_equal(p->lat.count, 1);
	assert_int_equal(p->lat.max_ns, 0);
	assert_int_equal(p->lat.hist[0], 1);
	assert_int_equal(p->lat.max_ts, 300);
	assert_int_equal(p->lat.max_waker_tid, 0);
	assert_int_equal(p->lat.max_cpu, 0);
	assert_int_equal(p->lat.max_prev_tid, 0);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

static uint64_t run_of(struct ctxmon_account *a, int32_t tid)
{
	struct ctxmon_stats *rows;
	uint64_t run = 0;
	size_t n;

	rows = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(rows);
	for (size_t i = 0; i < n; i++)
		if (rows[i].tid == tid)
			run += rows[i].run_ns;
	free(rows);
	return run;
}

/*
 * A switch-out never traced (PID 1's threads on some kernels): cpu0 ran
 * 700 from 1000, then switches out of 701.  When 700 left is unknown, so
 * its run ends at its switch-in, the lower bound (it sleeps from there),
 * rather than taking the CPU's whole busy time; 701, woken or not, runs
 * only from what is traced of it.  No thread has more run time than the
 * CPU was busy, and an anomaly is counted.
 */
static void test_missed_switch_out(void **state)
{
	static const struct who w[] = {
		{ 700, 700, "init" }, { 701, 701, "other" },
	};
	struct ctxmon_account_opts o = { .sz = sizeof(o) };
	struct ctxmon_cpu_stats *cpus;
	size_t ncpu;

	(void)state;
	use_whos(w, 2);
	for (int woken = 0; woken <= 1; woken++) {
		struct ctxmon_account *a = ctxmon_account_new(&o);

		assert_non_null(a);
		sw(a, 1000, 0, 0, "R", 700);		/* 700 in ... */
		if (woken)
			wake(a, CTXMON_EV_WAKEUP, 1500, 1, 0, 701);
		/* ... its switch-out lost: cpu0 next switches out of 701 */
		sw(a, 2000, 0, 701, "S", 0);
		sw(a, 3000, 0, 0, "R", 701);
		sw(a, 4000, 0, 701, "S", 0);
		ctxmon_account_finish(a, 100000);
		cpus = ctxmon_account_cpus(a, &ncpu);
		assert_non_null(cpus);
		assert_int_equal(run_of(a, 700), 0);
		assert_int_equal(run_of(a, 701), 1000);
		assert_true(run_of(a, 700) + run_of(a, 701) <=
			    cpus[0].busy_ns);
		assert_true(ctxmon_account_anomalies(a) > 0);
		free(cpus);
		ctxmon_account_free(a);
	}
}

/*
 * The same, seen from the task's side first: 700's switch-out on cpu0 is
 * never traced and cpu0 then runs one task without a switch (700 -> 702
 * lost), so nothing on cpu0 tells; 700 is woken and switches in on cpu1.
 * It left cpu0 unseen: its run there ends at its switch-in (the lower
 * bound), it sleeps ("other") until cpu1 takes it, and it runs 1000 on
 * cpu1, not 5000.
 */
static void test_missed_switch_out_elsewhere(void **state)
{
	static const struct who w[] = {
		{ 700, 700, "init" }, { 701, 701, "waker" }, { 702, 702, "spin" },
	};
	struct ctxmon_account_opts o = { .sz = sizeof(o) };
	struct ctxmon_account *a = ctxmon_account_new(&o);
	struct ctxmon_stats *r;
	const struct ctxmon_stats *p;
	size_t n;

	(void)state;
	assert_non_null(a);
	use_whos(w, 3);
	sw(a, 1000, 0, 0, "R", 700);
	sw(a, 1100, 1, 0, "R", 701);
	wake(a, CTXMON_EV_WAKING, 1500, 1, 701, 700);
	sw(a, 5000, 1, 701, "S", 700);
	sw(a, 6000, 1, 700, "S", 0);
	ctxmon_account_finish(a, 10000);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 700, 0);
	assert_int_equal(p->run_ns, 1000);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_OTHER], 4000);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 4000);
	assert_int_equal(p->switch_in, 2);
	assert_int_equal(p->voluntary, 1);
	free(r);
	assert_true(ctxmon_account_anomalies(a) > 0);
	ctxmon_account_free(a);
}

/* A switch whose prev's switch-in was never traced, with prev's run in
 * the slice (sw.prev_run_ns), as the bpf backend reports it. */
static void sw_unseen(struct ctxmon_account *a, uint64_t ts, int cpu,
		      int prev, const char *st, int next, uint64_t run)
{
	struct ctxmon_event e = synth_switch(ts, cpu, prev, st, next);

	e.sw.prev_run_ns = run;
	ctxmon_account_feed(a, &e);
}

/*
 * A switch-in never traced: cpu0 preempts 700 at 2000 for 702, whose
 * switch-out is lost, and next switches out of 700 at 5000.  With the
 * kernel's run of that slice (1200) 700 switched in at 3800: it waited
 * 1800 and ran 1000 + 1200 (then 100 more after waiting 1300, and waits
 * 1600 to the end).  Without
 * it (other backends), the whole 3000 stays waiting.  701 sleeps at 1000 on cpu1, is woken at 1500 and
 * switches out at 6000 with a slice of 500: it waited 4000 (its wakeup
 * latency, after a task unknown) and ran 500.  A slice longer than the
 * time since the last known state change is capped there.
 */
static void test_missed_switch_in(void **state)
{
	static const struct who w[] = {
		{ 700, 700, "burn" }, { 701, 701, "sleeper" },
		{ 702, 702, "init" }, { 703, 703, "waker" },
	};
	struct ctxmon_account_opts o = { .sz = sizeof(o) };
	struct ctxmon_stats *r;
	const struct ctxmon_stats *p;
	size_t n;

	(void)state;
	use_whos(w, 4);
	for (int known = 0; known <= 1; known++) {
		struct ctxmon_account *a = ctxmon_account_new(&o);

		assert_non_null(a);
		sw(a, 900, 1, 0, "R", 701);
		sw(a, 1000, 0, 0, "R", 700);
		sw(a, 1000, 1, 701, "S", 703);
		wake(a, CTXMON_EV_WAKING, 1500, 1, 703, 701);
		sw(a, 2000, 0, 700, "R+", 702);
		sw_unseen(a, 5000, 0, 700, "R+", 0, known ? 1200 : 0);
		sw(a, 5500, 1, 703, "S", 0);
		sw_unseen(a, 6000, 1, 701, "S", 0, known ? 500 : 0);
		/* 702 again: a slice longer than its wait (from 2000) */
		sw(a, 6100, 0, 0, "R", 702);
		sw(a, 6200, 0, 702, "R+", 0);
		sw(a, 6300, 0, 0, "R", 700);
		sw(a, 6400, 0, 700, "R+", 0);
		sw_unseen(a, 7000, 0, 702, "S", 0, known ? 100000 : 0);
		ctxmon_account_finish(a, 8000);
		r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
		assert_non_null(r);
		p = row(r, n, 700, 0);
		assert_int_equal(p->run_ns, known ? 2300 : 1100);
		assert_int_equal(p->wait_ns,
				 (known ? 1800 : 3000) + 1300 + 1600);
		assert_int_equal(p->switch_in, known ? 3 : 2);
		p = row(r, n, 701, 0);
		assert_int_equal(p->run_ns, known ? 100 + 500 : 100);
		if (known) {
			assert_int_equal(p->wait_ns, 4000);
			assert_int_equal(p->lat.count, 1);
			assert_int_equal(p->lat.max_ns, 4000);
			assert_int_equal(p->lat.max_ts, 5500);
			assert_int_equal(p->lat.max_cpu, 1);
			assert_int_equal(p->lat.max_prev_tid, -1);
			assert_int_equal(p->lat.max_waker_tid, 703);
		} else {
			assert_int_equal(p->wait_ns, 4500);
			assert_int_equal(p->lat.count, 0);
		}
		/* 702: from 6200 waiting; its slice is capped at that */
		p = row(r, n, 702, 0);
		assert_int_equal(p->run_ns, known ? 100 + 800 : 100);
		assert_int_equal(p->wait_ns, known ? 0 : 800);
		assert_true(ctxmon_account_anomalies(a) > 0);
		free(r);
		ctxmon_account_free(a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_pong),
		cmocka_unit_test(test_process_rollup),
		cmocka_unit_test(test_preempt_yield),
		cmocka_unit_test(test_waking_race),
		cmocka_unit_test(test_zero_latency),
		cmocka_unit_test(test_missed_switch_out),
		cmocka_unit_test(test_missed_switch_out_elsewhere),
		cmocka_unit_test(test_missed_switch_in),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
