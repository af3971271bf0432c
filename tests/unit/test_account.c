/*
 * test_account.c - unit tests of the accounting (src/analysis/account.c).
 *
 * Synthetic event sequences with numbers worked out by hand in the comments,
 * and a scheduler simulation that decides every switch itself, keeps its own
 * books, and checks the account against them over many generated events.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>

#include "synth.h"

/* ---- building events (tests/unit/synth.h) ---------------------------- */

static void wake(struct ctxmon_account *a, unsigned type, uint64_t ts, int cpu,
		 int cur, int tid)
{
	struct ctxmon_event e = synth_wake(type, ts, cpu, cur, tid, cpu, 0);

	ctxmon_account_feed(a, &e);
}

static struct ctxmon_account *acc_new(enum ctxmon_target_kind k,
				      const pid_t *pids, size_t n, pid_t root)
{
	struct ctxmon_account_opts o = {
		.sz = sizeof(o),
		.target = k,
		.pids = pids,
		.npids = n,
		.root_pid = root,
	};
	struct ctxmon_account *a = ctxmon_account_new(&o);

	assert_non_null(a);
	return a;
}

/* ---- reading rows ------------------------------------------------- */

static const struct ctxmon_stats *row(const struct ctxmon_stats *r, size_t n,
				      int tid, uint32_t gen)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].tid == tid && r[i].gen == gen)
			return &r[i];
	fail_msg("no row for tid %d gen %u", tid, gen);
	return NULL;
}

static const struct ctxmon_cpu_stats *cpu_row(const struct ctxmon_cpu_stats *c,
					      size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].cpu == cpu)
			return &c[i];
	fail_msg("no row for cpu %d", cpu);
	return NULL;
}

static uint64_t sleep_sum(const struct ctxmon_stats *r)
{
	return r->sleep_ns[CTXMON_SLEEP_S] + r->sleep_ns[CTXMON_SLEEP_D] +
	       r->sleep_ns[CTXMON_SLEEP_OTHER];
}

/* The per-thread and per-CPU identities every result must satisfy. */
static void check_sums(const struct ctxmon_account *a)
{
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *c;
	size_t n;

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	for (size_t i = 0; i < n; i++) {
		assert_true(r[i].tid > 0);
		assert_true(r[i].last_ts >= r[i].first_ts);
		assert_int_equal(r[i].run_ns + r[i].wait_ns + sleep_sum(&r[i]),
				 r[i].last_ts - r[i].first_ts);
		assert_int_equal(r[i].switch_out, r[i].voluntary +
							  r[i].involuntary +
							  r[i].exit_switch);
	}
	free(r);
	c = ctxmon_account_cpus(a, &n);
	assert_non_null(c);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c[i].busy_ns + c[i].idle_ns,
				 c[i].last_ts - c[i].first_ts);
	free(c);
}

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

/* ---- exit, pid reuse, exec ---------------------------------------- */

static void test_exit_switch(void **state)
{
	static const struct who w[] = {
		{ 500, 500, "parent" },
		{ 501, 501, "child" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	const struct ctxmon_cpu_stats *c;
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *cs;
	struct ctxmon_event orphan = {
		.ts = 460, .type = CTXMON_EV_ORPHAN, .cpu = 0, .tid = 500,
		.tgid = 500, .orphan = { .parent = 500 },
	};
	size_t n;

	(void)state;
	use_whos(w, 2);
	sw(a, 50, 0, 0, "R", 500);
	fork_ev(a, 100, 0, 500, 501, 501, "child");
	wake(a, CTXMON_EV_WAKEUP_NEW, 100, 0, 500, 501);
	sw(a, 150, 1, 0, "R", 501);
	exit_ev(a, 400, 1, 501);
	sw(a, 450, 1, 501, "X", 0);
	/* the parent lets the dead child go unreaped: its row is marked,
	 * nothing else changes (an ORPHAN of an unknown tid is ignored) */
	orphan.orphan.tid = 501;
	ctxmon_account_feed(a, &orphan);
	orphan.orphan.tid = 777;
	ctxmon_account_feed(a, &orphan);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	p = row(r, n, 501, 0);
	assert_true(p->orphaned);
	assert_false(row(r, n, 500, 0)->orphaned);
	assert_true(p->exited);
	assert_int_equal(p->switch_out, 1);
	assert_int_equal(p->exit_switch, 1);
	assert_int_equal(p->voluntary, 0);
	assert_int_equal(p->involuntary, 0);
	/* The span ends at the exit switch-out, not at finish. */
	assert_int_equal(p->first_ts, 100);
	assert_int_equal(p->last_ts, 450);
	assert_int_equal(p->wait_ns, 50);
	assert_int_equal(p->run_ns, 300);
	assert_int_equal(p->wakeups, 1);
	assert_int_equal(p->lat.count, 1);
	assert_int_equal(p->lat.max_ns, 50);
	assert_int_equal(p->lat.max_waker_tid, 500);
	p = row(r, n, 500, 0);
	assert_false(p->exited);
	assert_int_equal(p->run_ns, 950);
	free(r);
	cs = ctxmon_account_cpus(a, &n);
	assert_non_null(cs);
	c = cpu_row(cs, n, 1);
	assert_int_equal(c->first_ts, 150);
	assert_int_equal(c->busy_ns, 300);
	assert_int_equal(c->idle_ns, 550);
	free(cs);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/* fsw: a switch of @prev with @flags, as a BPF backend marks it */
static void fsw(struct ctxmon_account *a, uint64_t ts, int prev,
		const char *state, int next, uint32_t flags)
{
	struct ctxmon_event e = synth_switch(ts, 0, prev, state, next);

	e.flags = flags;
	ctxmon_account_feed(a, &e);
}

/* An exiting thread's switches after the kernel folded its counters into
 * its process (CTXMON_EVF_AFTER_FOLD) are counted and also counted apart,
 * of either kind: preempted (after_fold), or blocked on a lock the
 * release takes, as on PREEMPT_RT (after_fold_vol).  Before the fold
 * (FOLD_KNOWN alone) nothing is apart; without FOLD_KNOWN (a tracepoint
 * backend) a preemption after the exit is of unknown side (exit_preempt),
 * and so is a block (exit_block; it matters on PREEMPT_RT only), but for
 * a process leader's, whose counters are read at reap. */
static void test_after_fold(void **state)
{
	static const struct who w[] = {
		{ 600, 600, "proc" },
		{ 601, 600, "worker" },
		{ 602, 600, "worker2" },
	};
	const uint32_t known = CTXMON_EVF_FOLD_KNOWN;
	const uint32_t after = known | CTXMON_EVF_AFTER_FOLD;
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 3);
	fsw(a, 50, 0, "R", 601, known);
	exit_ev(a, 100, 0, 601);
	fsw(a, 150, 601, "R+", 0, known);	/* before the fold */
	fsw(a, 200, 0, "R", 601, known);
	fsw(a, 250, 601, "R+", 0, after);	/* preempted after it */
	fsw(a, 300, 0, "R", 601, known);
	fsw(a, 350, 601, "D", 0, after);	/* blocked after it */
	fsw(a, 400, 0, "R", 601, known);
	fsw(a, 450, 601, "X", 602, 0);
	/* no flags: a tracepoint backend's; a block before the exit is
	 * before the fold, one after may not be (exit_block) */
	fsw(a, 460, 602, "S", 0, 0);
	fsw(a, 470, 0, "R", 602, 0);
	exit_ev(a, 500, 0, 602);
	fsw(a, 550, 602, "R+", 0, 0);
	fsw(a, 600, 0, "R", 602, 0);
	fsw(a, 650, 602, "D", 0, 0);
	fsw(a, 700, 0, "R", 602, 0);
	fsw(a, 750, 602, "X", 0, 0);
	/* a leader's counters are read at reap: no fold to miss */
	fsw(a, 760, 0, "R", 600, 0);
	exit_ev(a, 770, 0, 600);
	fsw(a, 780, 600, "D", 0, 0);
	fsw(a, 790, 0, "R", 600, 0);
	fsw(a, 800, 600, "Z", 0, 0);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 601, 0);
	assert_int_equal(p->involuntary, 2);
	assert_int_equal(p->after_fold, 1);
	assert_int_equal(p->voluntary, 1);
	assert_int_equal(p->after_fold_vol, 1);
	assert_int_equal(p->exit_preempt, 0);
	assert_int_equal(p->exit_block, 0);
	assert_int_equal(p->exit_switch, 1);
	p = row(r, n, 602, 0);
	assert_int_equal(p->involuntary, 1);
	assert_int_equal(p->exit_preempt, 1);
	assert_int_equal(p->after_fold, 0);
	assert_int_equal(p->voluntary, 2);
	assert_int_equal(p->exit_block, 1);
	assert_int_equal(p->after_fold_vol, 0);
	p = row(r, n, 600, 0);
	assert_int_equal(p->voluntary, 1);
	assert_int_equal(p->exit_block, 0);
	assert_int_equal(p->exit_switch, 1);
	free(r);
	/* the process row sums them */
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, true, &n);
	assert_non_null(r);
	p = row(r, n, 600, 0);
	assert_int_equal(p->after_fold, 1);
	assert_int_equal(p->after_fold_vol, 1);
	assert_int_equal(p->exit_preempt, 1);
	assert_int_equal(p->exit_block, 1);
	free(r);
	check_sums(a);
	ctxmon_account_free(a);
}

/* A zombie child whose parent's last thread exited before the child's
 * last switch-out is not reaped by that parent: marked (a tracepoint
 * backend's only sign of it); one that died while the parent lived may
 * still be reaped, and is not. */
static void zombie_parent_gone(uint64_t flags)
{
	static const struct who w[] = {
		{ 700, 700, "parent" },
		{ 701, 701, "early" },
		{ 702, 702, "late" },
	};
	struct ctxmon_account_opts o = {
		.sz = sizeof(o),
		.target = CTXMON_TARGET_ALL,
		.flags = flags,
	};
	struct ctxmon_account *a = ctxmon_account_new(&o);
	struct ctxmon_event e;
	struct ctxmon_stats *r;
	size_t n;

	assert_non_null(a);
	use_whos(w, 3);
	sw(a, 10, 0, 0, "R", 700);
	fork_ev(a, 20, 0, 700, 701, 701, "early");
	fork_ev(a, 30, 0, 700, 702, 702, "late");
	sw(a, 40, 1, 0, "R", 701);
	exit_ev(a, 50, 1, 701);
	sw(a, 60, 1, 701, "Z", 702);
	e = synth_exit(70, 0, 700);
	e.exit.group_dead = 1;
	ctxmon_account_feed(a, &e);
	sw(a, 80, 0, 700, "Z", 0);
	exit_ev(a, 90, 1, 702);
	sw(a, 100, 1, 702, "Z", 0);
	ctxmon_account_finish(a, 200);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);
	assert_false(row(r, n, 700, 0)->orphaned);
	assert_false(row(r, n, 701, 0)->orphaned);
	/* a stream that marks the unreaped itself, or reads a state before
	 * its time, is not second-guessed from the times */
	assert_int_equal(row(r, n, 702, 0)->orphaned, flags == 0);
	assert_int_equal(row(r, n, 702, 0)->exit_counted, 1);
	free(r);
	ctxmon_account_free(a);
}

static void test_zombie_parent_gone(void **state)
{
	(void)state;
	zombie_parent_gone(0);
	zombie_parent_gone(CTXMON_ACCOUNT_NO_ZOMBIE_TIMES);
}

static void test_pid_reuse(void **state)
{
	static const struct who w[] = { { 600, 600, "parent" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *g0, *g1;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 1);
	sw(a, 100, 0, 0, "R", 600);
	fork_ev(a, 200, 0, 600, 601, 601, "a");
	wake(a, CTXMON_EV_WAKEUP_NEW, 210, 0, 600, 601);
	sw(a, 300, 1, 0, "R", 601);
	exit_ev(a, 400, 1, 601);
	sw(a, 450, 1, 601, "X", 0);
	fork_ev(a, 500, 0, 600, 601, 601, "b");
	wake(a, CTXMON_EV_WAKEUP_NEW, 510, 0, 600, 601);
	sw(a, 600, 1, 0, "R", 601);
	sw(a, 700, 1, 601, "S", 0);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);
	g0 = row(r, n, 601, 0);
	g1 = row(r, n, 601, 1);
	assert_true(g0->exited);
	assert_string_equal(g0->comm, "a");
	assert_int_equal(g0->first_ts, 200);
	assert_int_equal(g0->last_ts, 450);
	assert_int_equal(g0->switch_in, 1);
	assert_int_equal(g0->exit_switch, 1);
	assert_int_equal(g0->voluntary, 0);
	assert_int_equal(g0->run_ns, 150);
	assert_int_equal(g0->wait_ns, 100);
	assert_int_equal(g0->lat.max_ns, 90);
	assert_false(g1->exited);
	assert_string_equal(g1->comm, "b");
	assert_int_equal(g1->first_ts, 500);
	assert_int_equal(g1->last_ts, 1000);
	assert_int_equal(g1->switch_in, 1);
	assert_int_equal(g1->voluntary, 1);
	assert_int_equal(g1->exit_switch, 0);
	assert_int_equal(g1->run_ns, 100);
	assert_int_equal(g1->wait_ns, 100);
	assert_int_equal(g1->sleep_ns[CTXMON_SLEEP_S], 300);
	assert_int_equal(g1->lat.max_ns, 90);
	free(r);
	/* Two processes 601, one per generation. */
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);
	assert_int_equal(row(r, n, 601, 0)->run_ns, 150);
	assert_int_equal(row(r, n, 601, 1)->run_ns, 100);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

static void test_exec(void **state)
{
	static const struct who w[] = {
		{ 700, 700, "sh" },
		{ 800, 800, "main" },
		{ 801, 800, "worker" },
	};
	static const struct who after[] = {
		{ 700, 700, NULL },
		{ 800, 800, "newprog" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *cs;
	char ls[CTXMON_COMM_LEN] = "ls";
	size_t n;

	(void)state;
	use_whos(w, 3);
	/* 700 execs in place; the comm of the event is a buffer the test
	 * clobbers afterwards: the account must keep its own copy. */
	sw(a, 100, 0, 0, "R", 700);
	sw(a, 100, 1, 0, "R", 801);
	exec_ev(a, 150, 0, 700, 700, ls);
	/* 801, a non-leader thread of 800, execs: the leader dies (Z),
	 * then 801 goes on as 800. */
	sw(a, 200, 2, 0, "R", 800);
	exit_ev(a, 240, 2, 800);
	sw(a, 250, 2, 800, "Z", 0);
	exec_ev(a, 300, 1, 800, 801, "newprog");
	use_whos(after, 2);
	sw(a, 350, 0, 700, "S", 0);
	sw(a, 400, 1, 800, "S", 0);
	memcpy(ls, "zz", 3);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 4);
	p = row(r, n, 700, 0);
	assert_string_equal(p->comm, "ls");
	assert_int_equal(p->run_ns, 250);
	assert_int_equal(p->voluntary, 1);

	p = row(r, n, 801, 0); /* the thread as it was, until exec */
	assert_true(p->exited);
	assert_string_equal(p->comm, "worker");
	assert_int_equal(p->tgid, 800);
	assert_int_equal(p->first_ts, 100);
	assert_int_equal(p->last_ts, 300);
	assert_int_equal(p->run_ns, 200);
	assert_int_equal(p->switch_in, 1);
	assert_int_equal(p->switch_out, 0);

	p = row(r, n, 800, 0); /* the old leader */
	assert_true(p->exited);
	assert_string_equal(p->comm, "main");
	assert_int_equal(p->exit_switch, 1);
	assert_int_equal(p->run_ns, 50);
	assert_int_equal(p->last_ts, 250);

	p = row(r, n, 800, 1); /* the thread after exec, as 800 */
	assert_false(p->exited);
	assert_string_equal(p->comm, "newprog");
	assert_int_equal(p->tgid, 800);
	assert_int_equal(p->first_ts, 300);
	assert_int_equal(p->last_ts, 1000);
	assert_int_equal(p->run_ns, 100);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 600);
	assert_int_equal(p->switch_in, 0);
	assert_int_equal(p->switch_out, 1);
	assert_int_equal(p->voluntary, 1);
	free(r);

	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	p = row(r, n, 800, 0);
	assert_int_equal(p->nthreads, 3);
	assert_string_equal(p->comm, "newprog");
	assert_int_equal(p->run_ns, 350);
	assert_int_equal(p->first_ts, 100);
	assert_int_equal(p->last_ts, 1000);
	free(r);

	/* CPU 1 followed 801 into 800: 100-400 busy, no anomaly. */
	cs = ctxmon_account_cpus(a, &n);
	assert_non_null(cs);
	assert_int_equal(cpu_row(cs, n, 1)->busy_ns, 300);
	assert_int_equal(cpu_row(cs, n, 1)->idle_ns, 600);
	free(cs);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/*
 * The kernel gives an exec'ing thread its leader's tid in de_thread(),
 * before the exec event: the thread may switch under the new tid first.
 * Those switches are the thread's, in the same process: one row goes on
 * (took_over, its parent the old leader's), not a new process under the
 * leader's pid that no parent would reap.
 */
static void test_exec_early(void **state)
{
	static const struct who w[] = {
		{ 700, 700, "sh" },
		{ 800, 800, "main" },
		{ 801, 800, "worker" },
	};
	static const struct who after[] = {
		{ 700, 700, NULL },
		{ 800, 800, "newprog" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 3);
	fork_ev(a, 50, 0, 700, 800, 800, "main");
	sw(a, 60, 0, 700, "S", 800);
	fork_ev(a, 80, 0, 800, 801, 800, "worker");
	sw(a, 100, 1, 0, "R", 801);
	exit_ev(a, 240, 0, 800);
	sw(a, 250, 0, 800, "Z", 0);
	/* 801 is 800 now, and is preempted before the exec event */
	sw(a, 270, 1, 800, "R+", 0);
	sw(a, 280, 1, 0, "R", 800);
	exec_ev(a, 300, 1, 800, 801, "newprog");
	use_whos(after, 2);
	sw(a, 400, 1, 800, "S", 0);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 4);
	p = row(r, n, 801, 0); /* until the tid changed hands */
	assert_true(p->exited);
	assert_int_equal(p->last_ts, 270);
	assert_int_equal(p->run_ns, 170);
	assert_int_equal(p->switch_out, 0);
	p = row(r, n, 800, 0); /* the old leader */
	assert_false(p->took_over);
	assert_int_equal(p->ppid, 700);
	assert_int_equal(p->exit_counted, 1);
	p = row(r, n, 800, 1); /* the thread from then on */
	assert_true(p->took_over);
	assert_int_equal(p->ppid, 700);
	assert_int_equal(p->tgid, 800);
	assert_string_equal(p->comm, "newprog");
	assert_int_equal(p->first_ts, 270);
	assert_int_equal(p->involuntary, 1);
	assert_int_equal(p->voluntary, 1);
	assert_int_equal(p->run_ns, 120);
	free(r);

	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, true, &n);
	assert_non_null(r);
	p = row(r, n, 800, 0);
	assert_int_equal(p->nthreads, 3);
	assert_int_equal(p->ppid, 700);
	assert_int_equal(p->involuntary, 1);
	assert_int_equal(p->voluntary, 1);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/* ---- targets ------------------------------------------------------ */

static void test_target_cmd(void **state)
{
	static const struct who w[] = {
		{ 999, 999, "ctxmon" },	 { 1000, 1000, "ctxmon" },
		{ 1001, 1000, "prog" },	 { 1002, 1002, "prog" },
		{ 2000, 2000, "other" }, { 2001, 2001, "other" },
	};
	static const struct who after[] = {
		{ 999, 999, "ctxmon" },	 { 1000, 1000, "prog" },
		{ 1001, 1000, "prog" },	 { 1002, 1002, "prog" },
		{ 2000, 2000, "other" }, { 2001, 2001, "other" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_CMD, NULL, 0, 1000);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 6);
	/* ctxmon forks the command, which waits on a pipe (a voluntary
	 * switch under ctxmon's name) before it execs. */
	sw(a, 100, 0, 0, "R", 999);
	fork_ev(a, 110, 0, 999, 1000, 1000, "ctxmon");
	wake(a, CTXMON_EV_WAKEUP_NEW, 111, 0, 999, 1000);
	sw(a, 200, 1, 0, "R", 1000);
	sw(a, 250, 1, 1000, "S", 0);
	wake(a, CTXMON_EV_WAKING, 300, 0, 999, 1000);
	sw(a, 350, 1, 0, "R", 1000);
	exec_ev(a, 360, 1, 1000, 1000, "prog");
	use_whos(after, 6);
	fork_ev(a, 400, 1, 1000, 1001, 1000, "prog"); /* a thread */
	wake(a, CTXMON_EV_WAKEUP_NEW, 401, 1, 1000, 1001);
	sw(a, 450, 0, 999, "S", 1001);
	fork_ev(a, 500, 0, 1001, 1002, -1, "prog"); /* a process */
	sw(a, 600, 0, 1001, "S", 2000);
	fork_ev(a, 650, 0, 2000, 2001, 2001, "other");
	/* The root exits and an unrelated fork reuses its tid. */
	exit_ev(a, 700, 1, 1000);
	sw(a, 710, 1, 1000, "Z", 0);
	fork_ev(a, 800, 0, 2000, 1000, 1000, "other2");
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);
	p = row(r, n, 1000, 0);
	assert_true(p->target);
	assert_string_equal(p->comm, "prog");
	assert_int_equal(p->voluntary, 1); /* the one before exec */
	assert_int_equal(p->exit_switch, 1);
	assert_true(row(r, n, 1001, 0)->target);
	p = row(r, n, 1002, 0);
	assert_true(p->target);
	assert_int_equal(p->tgid, -1); /* never learnt */
	free(r);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 7);
	assert_false(row(r, n, 999, 0)->target);
	assert_false(row(r, n, 2000, 0)->target);
	assert_false(row(r, n, 2001, 0)->target);
	p = row(r, n, 1000, 1);
	assert_false(p->target);
	assert_string_equal(p->comm, "other2");
	free(r);

	/* Processes of the target: 1000 (root + thread 1001) and 1002,
	 * whose tgid is unknown, as its own row. */
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	p = row(r, n, 1000, 0);
	assert_int_equal(p->nthreads, 2);
	assert_int_equal(p->voluntary, 2);
	p = row(r, n, 1002, 0);
	assert_int_equal(p->nthreads, 1);
	assert_int_equal(p->tgid, -1);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/*
 * A thread the kernel starts inside a process with no fork event (an
 * io_uring worker, create_io_thread()) is its process's: a thread of the
 * command's process is the command's, seen first as a switch's next or
 * prev.  Not once that process has ended: its tgid may be reused.
 */
static void test_target_cmd_nofork(void **state)
{
	static const struct who w[] = {
		{ 999, 999, "ctxmon" },	     { 1000, 1000, "prog" },
		{ 1005, 1000, "iou-wrk-1000" }, { 1006, 1000, "iou-wrk-1000" },
		{ 1007, 1000, "late" },	     { 2000, 2000, "other" },
		{ 2005, 2000, "iou-wrk-2000" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_CMD, NULL, 0, 1000);
	struct ctxmon_event e;
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	size_t n;

	(void)state;
	use_whos(w, 7);
	sw(a, 100, 0, 999, "S", 1000);
	/* 1005 first as a switch's next, 1006 first as its prev (the
	 * current task): no fork of either */
	sw(a, 200, 0, 1000, "S", 1005);
	sw(a, 250, 0, 1005, "S", 1000);
	sw(a, 300, 1, 1006, "S", 2000);
	sw(a, 350, 1, 2000, "S", 2005);
	sw(a, 400, 1, 2005, "S", 0);
	/* the process ends (its last thread, group_dead), and a thread of a
	 * new process reusing the tgid turns up without a fork */
	e = synth_exit(500, 0, 1000);
	e.exit.group_dead = 1;
	ctxmon_account_feed(a, &e);
	sw(a, 510, 0, 1000, "Z", 0);
	sw(a, 600, 0, 0, "R", 1007);
	sw(a, 650, 0, 1007, "S", 0);
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_true(row(r, n, 1000, 0)->target);
	p = row(r, n, 1005, 0);
	assert_true(p->target);
	assert_int_equal(p->voluntary, 1);
	assert_true(row(r, n, 1006, 0)->target);
	assert_false(row(r, n, 999, 0)->target);
	assert_false(row(r, n, 2000, 0)->target);
	assert_false(row(r, n, 2005, 0)->target);
	assert_false(row(r, n, 1007, 0)->target);
	free(r);
	/* the command's process: its leader and both workers */
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 1);
	p = row(r, n, 1000, 0);
	assert_int_equal(p->nthreads, 3);
	assert_int_equal(p->voluntary, 3);
	free(r);
	ctxmon_account_free(a);
}

static void test_target_pids(void **state)
{
	static const pid_t pids[] = { 400 };
	static const struct who w[] = {
		{ 400, 400, "srv" },
		{ 403, 400, "srv-io" },
		{ 500, 500, "other" },
	};
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_PIDS, pids, 1, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	struct ctxmon_event e;
	size_t n;

	(void)state;
	use_whos(w, 3);
	assert_int_equal(ctxmon_account_add_task(a, 0, 0, "x"), -EINVAL);
	assert_int_equal(ctxmon_account_add_task(a, 400, 400, "srv"), 0);
	assert_int_equal(ctxmon_account_add_task(a, 401, 400, "srv-worker"), 0);
	assert_int_equal(ctxmon_account_add_task(a, 500, 500, "other"), 0);

	sw(a, 100, 0, 0, "R", 400);
	/* 403 switches in with no tgid, then an irq tells it. */
	e = ev_at(100, 1, 0, CTXMON_EV_SWITCH);
	e.sw.next_tid = 403;
	e.sw.next_tgid = -1;
	e.sw.prev_state = CTXMON_STATE_RUNNING;
	ctxmon_account_feed(a, &e);
	fork_ev(a, 200, 0, 400, 402, -1, "srv"); /* by a target */
	fork_ev(a, 210, 0, 400, 600, 600, "helper"); /* new process */
	e = ev_at(300, 1, 403, CTXMON_EV_IRQ_ENTRY);
	ctxmon_account_feed(a, &e);
	sw(a, 400, 0, 400, "S", 500);
	fork_ev(a, 450, 0, 500, 700, 700, "other");
	ctxmon_account_finish(a, 1000);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 5);
	p = row(r, n, 401, 0); /* never switched: known from add_task */
	assert_string_equal(p->comm, "srv-worker");
	assert_int_equal(p->tgid, 400);
	assert_int_equal(p->first_ts, 0);
	assert_int_equal(p->last_ts, 0);
	assert_int_equal(row(r, n, 402, 0)->tgid, -1);
	assert_int_equal(row(r, n, 403, 0)->tgid, 400);
	assert_string_equal(row(r, n, 600, 0)->comm, "helper");
	p = row(r, n, 400, 0);
	assert_string_equal(p->comm, "srv");
	assert_int_equal(p->run_ns, 300);
	free(r);

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 7);
	assert_false(row(r, n, 500, 0)->target);
	assert_false(row(r, n, 700, 0)->target);
	free(r);

	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 3);
	p = row(r, n, 400, 0);
	assert_int_equal(p->nthreads, 3); /* 400, 401, 403 */
	assert_string_equal(p->comm, "srv");
	assert_int_equal(p->first_ts, 100);
	assert_int_equal(p->run_ns, 300 + 900);
	assert_int_equal(row(r, n, 402, 0)->tgid, -1);
	assert_int_equal(row(r, n, 600, 0)->nthreads, 1);
	free(r);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/* ---- intervals ---------------------------------------------------- */

static void test_reset_interval(void **state)
{
	static const struct who w[] = { { 900, 900, "t" }, { 901, 901, "u" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	const struct ctxmon_stats *p;
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *cs;
	size_t n;

	(void)state;
	use_whos(w, 2);
	sw(a, 100, 0, 0, "R", 900);
	sw(a, 400, 0, 900, "S", 0);
	sw(a, 420, 1, 0, "R", 901);
	sw(a, 450, 1, 901, "X", 0);
	ctxmon_account_finish(a, 500);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 900, 0);
	assert_int_equal(p->run_ns, 300);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 100);
	assert_int_equal(p->voluntary, 1);
	free(r);
	check_sums(a);

	/* Interval 2, 500-1200: asleep until 700, waits to 900, runs. */
	ctxmon_account_reset_interval(a, 500);
	wake(a, CTXMON_EV_WAKING, 700, 0, 0, 900);
	sw(a, 900, 0, 0, "R", 900);
	ctxmon_account_finish(a, 1200);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 2);
	p = row(r, n, 900, 0);
	assert_int_equal(p->first_ts, 500);
	assert_int_equal(p->last_ts, 1200);
	assert_int_equal(p->sleep_ns[CTXMON_SLEEP_S], 200);
	assert_int_equal(p->wait_ns, 200);
	assert_int_equal(p->run_ns, 300);
	assert_int_equal(p->voluntary, 0);
	assert_int_equal(p->switch_in, 1);
	assert_int_equal(p->switch_out, 0);
	assert_int_equal(p->lat.count, 1);
	assert_int_equal(p->lat.max_ns, 200);
	assert_int_equal(p->lat.max_waker_tid, 0);
	p = row(r, n, 901, 0); /* died in interval 1 */
	assert_true(p->exited);
	assert_int_equal(p->exit_switch, 0);
	assert_int_equal(p->run_ns, 0);
	assert_int_equal(p->last_ts - p->first_ts, 0);
	free(r);
	cs = ctxmon_account_cpus(a, &n);
	assert_non_null(cs);
	assert_int_equal(cpu_row(cs, n, 0)->first_ts, 500);
	assert_int_equal(cpu_row(cs, n, 0)->idle_ns, 400);
	assert_int_equal(cpu_row(cs, n, 0)->busy_ns, 300);
	assert_int_equal(cpu_row(cs, n, 0)->switches, 1);
	assert_int_equal(cpu_row(cs, n, 1)->idle_ns, 700);
	assert_int_equal(cpu_row(cs, n, 1)->switches, 0);
	free(cs);
	check_sums(a);

	/* Interval 3: it just runs. */
	ctxmon_account_reset_interval(a, 1200);
	ctxmon_account_finish(a, 1300);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 900, 0);
	assert_int_equal(p->run_ns, 100);
	assert_int_equal(p->lat.count, 0);
	assert_int_equal(p->switch_in, 0);
	free(r);
	check_sums(a);

	/* A reset with no finish before it still starts the interval at
	 * its own time: 1300-1500 belongs to no interval. */
	ctxmon_account_reset_interval(a, 1500);
	ctxmon_account_finish(a, 1800);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	p = row(r, n, 900, 0);
	assert_int_equal(p->first_ts, 1500);
	assert_int_equal(p->run_ns, 300);
	free(r);
	cs = ctxmon_account_cpus(a, &n);
	assert_non_null(cs);
	assert_int_equal(cpu_row(cs, n, 0)->busy_ns, 300);
	assert_int_equal(cpu_row(cs, n, 1)->idle_ns, 300);
	free(cs);
	check_sums(a);
	assert_int_equal(ctxmon_account_anomalies(a), 0);
	ctxmon_account_free(a);
}

/* ---- garbage ------------------------------------------------------ */

static void test_garbage(void **state)
{
	static const struct who w[] = { { 50, 50, "g" }, { 51, 51, "h" } };
	struct ctxmon_account *a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	struct ctxmon_event e;
	struct ctxmon_stats *r;
	uint64_t before;
	size_t n;

	(void)state;
	use_whos(w, 2);
	ctxmon_account_free(NULL);
	ctxmon_account_feed(a, NULL);

	/* A task switched in with nothing known of it is fine. */
	sw(a, 100, 0, 0, "R", 50);
	assert_int_equal(ctxmon_account_anomalies(a), 0);

	/* Switched out on CPU 1 while believed on CPU 0: one for the task;
	 * CPU 1 had no previous task, so nothing for the CPU. */
	sw(a, 200, 1, 50, "S", 0);
	assert_int_equal(ctxmon_account_anomalies(a), 1);
	/* CPU 0 still holds 50: switching out 51 there is one for the
	 * CPU; 51 itself was unknown, so that is where it starts. */
	sw(a, 250, 0, 51, "R", 0);
	assert_int_equal(ctxmon_account_anomalies(a), 2);
	/* 51 exits, then is switched in with no fork seen: a new
	 * generation, counted. */
	sw(a, 260, 0, 0, "R", 51);
	sw(a, 270, 0, 51, "X", 0);
	sw(a, 280, 0, 0, "R", 51);
	assert_int_equal(ctxmon_account_anomalies(a), 3);

	/* Unknown types, the idle task where a task must be, bad ids. */
	before = ctxmon_account_anomalies(a);
	e = ev_at(300, 0, 51, 999);
	ctxmon_account_feed(a, &e);
	e = ev_at(300, 0, 51, CTXMON_EV_NONE);
	ctxmon_account_feed(a, &e);
	wake(a, CTXMON_EV_WAKING, 300, 0, 51, 0);
	wake(a, CTXMON_EV_WAKEUP, 300, 0, 51, -7);
	e = ev_at(300, 0, 0, CTXMON_EV_MIGRATE);
	ctxmon_account_feed(a, &e);
	fork_ev(a, 300, 0, 0, 0, 0, NULL);
	exec_ev(a, 300, 0, 0, 0, NULL);
	exit_ev(a, 300, 0, 0);
	e = ev_at(300, -1, 51, CTXMON_EV_SWITCH); /* bad CPU */
	e.sw.prev_tid = -3;
	e.sw.next_tid = -4;
	ctxmon_account_feed(a, &e);
	e = ev_at(300, 1 << 30, 0, CTXMON_EV_LOST); /* absurd CPU */
	ctxmon_account_feed(a, &e);
	e = ev_at(300, 0, 51, CTXMON_EV_SWITCH); /* bad kind */
	e.sw.prev_tid = 51;
	e.sw.next_tid = 0;
	e.sw.kind = 77;
	ctxmon_account_feed(a, &e);
	/* Time went back (one), and 50, asleep, runs with no wakeup
	 * (one). */
	sw(a, 10, 0, 0, "R", 50);
	/* One each: 999, NONE, waking 0, wakeup -7, migrate 0, fork of 0,
	 * exec 0, exit 0, CPU -1, prev -3, next -4, CPU 2^30, kind 77. */
	assert_int_equal(ctxmon_account_anomalies(a), before + 15);

	/* Lost events are counted for their CPU. */
	e = ev_at(400, 1, -1, CTXMON_EV_LOST);
	e.lost.count = 42;
	ctxmon_account_feed(a, &e);
	ctxmon_account_finish(a, 500);
	check_sums(a);
	{
		struct ctxmon_cpu_stats *cs = ctxmon_account_cpus(a, &n);

		assert_non_null(cs);
		assert_int_equal(cpu_row(cs, n, 1)->lost, 42);
		free(cs);
	}
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	assert_int_equal(n, 3); /* 50, 51 gen 0 and gen 1 */
	assert_int_equal(row(r, n, 51, 1)->switch_in, 1);
	free(r);
	r = ctxmon_account_rows(a, (enum ctxmon_rows)9, true, &n);
	assert_null(r);
	ctxmon_account_free(a);
}

static void test_new_opts(void **state)
{
	struct ctxmon_account_opts o = { .sz = sizeof(o) };
	struct ctxmon_account *a;
	struct ctxmon_stats *r;
	struct ctxmon_event e;
	size_t n = 99;

	(void)state;
	a = ctxmon_account_new(NULL);
	assert_non_null(a);
	r = ctxmon_account_rows(a, CTXMON_ROWS_PROCESSES, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 0);
	free(r);
	/* The callback form feeds the same way and never stops a poll. */
	e = ev_at(5, 0, 0, CTXMON_EV_SWITCH);
	e.sw.next_tid = 77;
	assert_int_equal(ctxmon_account_feed_cb(&e, a), 0);
	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &n);
	assert_non_null(r);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].switch_in, 1);
	free(r);
	ctxmon_account_free(a);

	o.target = (enum ctxmon_target_kind)42;
	assert_null(ctxmon_account_new(&o));
	assert_int_equal(errno, EINVAL);
	o.target = CTXMON_TARGET_PIDS;
	o.npids = 2;
	assert_null(ctxmon_account_new(&o));
	assert_int_equal(errno, EINVAL);
}

/* ---- scheduler simulation ----------------------------------------- */

#define SIM_CPUS_MAX 4
#define SIM_TIDS 48
#define SIM_TID0 1000
#define SIM_ROWS 4096

enum { S_UNBORN, S_SLEEP, S_QUEUED, S_RUN, S_DEAD };

/* What the generator decided for one task generation, and what the
 * account reported for it, summed over intervals. */
struct exp_row {
	int tid, tgid;
	uint32_t gen;
	bool seen, tgid_known;
	uint64_t vol, inv, exitsw, sin, sout, run, wait, sleep[3];
	uint64_t migr, wakeups, lat_count, lat_sum, lat_max;
	struct ctxmon_stats got;
	bool got_any;
};

struct sim_task {
	int state, cpu, sleep_class, row;
	uint64_t since, lat_ts;
	bool lat;
};

struct sim {
	struct ctxmon_account *a;
	/* the same stream into two bounded accounts: b folds exited tasks
	 * past SIM_KEEP, c forgets them after each interval */
	struct ctxmon_account *b, *c;
	/* and into d in runs (ctxmon_account_feed_batch()) of 1 to 64
	 * events, which must give a's rows exactly */
	struct ctxmon_account *d;
	struct ctxmon_event run[64];
	size_t nrun, runs;
	uint64_t folded; /* tasks seen in b's folded rows */
	uint64_t now, rng;
	int ncpus;
	int cur[SIM_CPUS_MAX];
	bool cpu_seen[SIM_CPUS_MAX];
	uint64_t cpu_since[SIM_CPUS_MAX], busy[SIM_CPUS_MAX],
		idle[SIM_CPUS_MAX];
	uint64_t switches[SIM_CPUS_MAX];
	uint64_t got_busy[SIM_CPUS_MAX], got_idle[SIM_CPUS_MAX];
	uint64_t got_switches[SIM_CPUS_MAX];
	struct sim_task t[SIM_TIDS];
	struct exp_row rows[SIM_ROWS];
	int nrows;
	uint64_t vol, inv, exits;
};

static const char *const sim_comms[] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
};

#define SIM_KEEP 2

static void sim_flush_run(struct sim *s)
{
	ctxmon_account_feed_batch(s->d, s->run, s->nrun);
	s->nrun = 0;
	s->runs++;
}

static void sim_feed(struct sim *s, const struct ctxmon_event *e)
{
	ctxmon_account_feed(s->a, e);
	ctxmon_account_feed(s->b, e);
	ctxmon_account_feed(s->c, e);
	s->run[s->nrun++] = *e;
	/* runs of every length, without touching the generator's rng */
	if (s->nrun == 1 + (s->runs * 37) % (sizeof(s->run) / sizeof(s->run[0])))
		sim_flush_run(s);
}

/* d, fed in runs, has a's rows and CPUs, field for field. */
static void check_batch_fed(struct sim *s)
{
	struct ctxmon_stats *r, *rd;
	struct ctxmon_cpu_stats *c, *cd;
	size_t n, nd;

	sim_flush_run(s);
	ctxmon_account_finish(s->d, s->now);
	for (int k = 0; k < 2; k++) {
		enum ctxmon_rows kind =
			k ? CTXMON_ROWS_PROCESSES : CTXMON_ROWS_THREADS;

		r = ctxmon_account_rows(s->a, kind, true, &n);
		rd = ctxmon_account_rows(s->d, kind, true, &nd);
		assert_non_null(r);
		assert_non_null(rd);
		assert_int_equal(nd, n);
		for (size_t i = 0; i < n; i++) {
			/* the same name, interned in each account */
			assert_string_equal(rd[i].comm, r[i].comm);
			rd[i].comm = r[i].comm;
			if (memcmp(&rd[i], &r[i], sizeof(r[i])))
				fail_msg("row %zu (tid %d) differs fed in runs",
					 i, (int)r[i].tid);
		}
		free(r);
		free(rd);
	}
	c = ctxmon_account_cpus(s->a, &n);
	cd = ctxmon_account_cpus(s->d, &nd);
	assert_non_null(c);
	assert_non_null(cd);
	assert_int_equal(nd, n);
	assert_memory_equal(cd, c, n * sizeof(*c));
	free(c);
	free(cd);
	assert_int_equal(ctxmon_account_anomalies(s->d),
			 ctxmon_account_anomalies(s->a));
}

static uint32_t rnd(struct sim *s, uint32_t n)
{
	/* xorshift64: reproducible, independent of libc */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng % n);
}

static struct sim_task *st_of(struct sim *s, int tid)
{
	return &s->t[tid - SIM_TID0];
}

static struct exp_row *er_of(struct sim *s, int tid)
{
	return &s->rows[st_of(s, tid)->row];
}

static int sim_tgid(struct sim *s, int tid)
{
	return tid ? er_of(s, tid)->tgid : 0;
}

/* The generator's own books: charge the time in the old state. */
static void sim_state(struct sim *s, int tid, int state)
{
	struct sim_task *t = st_of(s, tid);
	struct exp_row *r = er_of(s, tid);
	uint64_t d = s->now - t->since;

	if (!r->seen) {
		r->seen = true;
	} else if (t->state == S_RUN) {
		r->run += d;
	} else if (t->state == S_QUEUED) {
		r->wait += d;
	} else if (t->state == S_SLEEP) {
		r->sleep[t->sleep_class] += d;
	}
	t->since = s->now;
	t->state = state;
}

static void sim_cpu(struct sim *s, int c, int next)
{
	uint64_t d = s->now - s->cpu_since[c];

	if (s->cpu_seen[c]) {
		if (s->cur[c])
			s->busy[c] += d;
		else
			s->idle[c] += d;
	}
	s->cpu_seen[c] = true;
	s->cpu_since[c] = s->now;
	s->cur[c] = next;
	s->switches[c]++;
}

static struct ctxmon_event sim_ev(struct sim *s, int cpu, unsigned type)
{
	struct ctxmon_event e;

	memset(&e, 0, sizeof(e));
	e.ts = s->now;
	e.cpu = cpu;
	e.type = (uint16_t)type;
	e.tid = s->cur[cpu];
	e.tgid = sim_tgid(s, e.tid);
	if (e.tid)
		er_of(s, e.tid)->tgid_known = true;
	return e;
}

static int pick(struct sim *s, int state, int except)
{
	int cand[SIM_TIDS], n = 0;

	for (int i = 0; i < SIM_TIDS; i++)
		if (s->t[i].state == state && SIM_TID0 + i != except)
			cand[n++] = SIM_TID0 + i;
	return n ? cand[rnd(s, (uint32_t)n)] : 0;
}

static int count_alive(struct sim *s)
{
	int n = 0;

	for (int i = 0; i < SIM_TIDS; i++)
		n += s->t[i].state != S_UNBORN && s->t[i].state != S_DEAD;
	return n;
}

static void sim_wake(struct sim *s, int tid, int cpu, bool waking)
{
	struct ctxmon_event e =
		sim_ev(s, cpu, waking ? CTXMON_EV_WAKING : CTXMON_EV_WAKEUP);

	e.wake.tid = tid;
	e.wake.target_cpu = cpu;
	e.wake.comm = sim_comms[tid % 7];
	sim_feed(s, &e);
}

/* A sleeper is woken by whatever runs on a random CPU. */
static void act_wake(struct sim *s)
{
	int tid = pick(s, S_SLEEP, 0), cpu = (int)rnd(s, (uint32_t)s->ncpus);
	bool waking = rnd(s, 10) != 0; /* 1 in 10: a wakeup alone */
	struct sim_task *t;

	if (!tid)
		return;
	t = st_of(s, tid);
	sim_wake(s, tid, cpu, waking);
	sim_state(s, tid, S_QUEUED);
	t->lat = true;
	t->lat_ts = s->now;
	er_of(s, tid)->wakeups++;
	if (waking && rnd(s, 4)) {
		s->now += rnd(s, 50);
		sim_wake(s, tid, cpu, false);
	}
}

static void sim_switch(struct sim *s, int c, int prev, uint32_t pstate,
		       int preempt, int kind, int next)
{
	struct ctxmon_event e = sim_ev(s, c, CTXMON_EV_SWITCH);

	e.sw.prev_tid = prev;
	e.sw.prev_tgid = sim_tgid(s, prev);
	e.sw.prev_comm = prev ? sim_comms[prev % 7] : "swapper/0";
	e.sw.prev_state = pstate;
	e.sw.next_tid = next;
	e.sw.next_tgid = -1; /* learnt from elsewhere */
	e.sw.next_comm = next ? sim_comms[next % 7] : "swapper/0";
	e.sw.preempt = (uint8_t)preempt;
	e.sw.kind = (uint8_t)kind;
	sim_feed(s, &e);
}

/* One CPU schedules: its task leaves (sleeps, is preempted, yields or
 * dies) and a queued task, or idle, comes in. */
static void act_schedule(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), prev = s->cur[c], next;
	uint32_t pstate = CTXMON_STATE_RUNNING;
	int kind = CTXMON_SW_INVOLUNTARY, preempt = 0, to = S_QUEUED;
	bool race = false;

	next = pick(s, S_QUEUED, prev);
	if (!prev && !next)
		return;
	if (prev) {
		struct exp_row *r = er_of(s, prev);
		uint32_t what = rnd(s, 10);

		if (what < 5) {
			pstate = rnd(s, 3) ? CTXMON_STATE_S : CTXMON_STATE_D;
			kind = CTXMON_SW_VOLUNTARY;
			to = S_SLEEP;
			race = rnd(s, 8) == 0;
		} else if (what < 9 || count_alive(s) <= 4) {
			preempt = rnd(s, 2);
		} else {
			struct ctxmon_event e = sim_ev(s, c, CTXMON_EV_EXIT);

			e.exit.tid = prev;
			sim_feed(s, &e);
			s->now += rnd(s, 20);
			pstate = CTXMON_STATE_X;
			kind = CTXMON_SW_EXIT;
			to = S_DEAD;
		}
		if (race) {
			/* Woken by another CPU just before it leaves. */
			sim_wake(s, prev, (c + 1) % s->ncpus, true);
			s->now += rnd(s, 30);
		}
		r->sout++;
		if (kind == CTXMON_SW_VOLUNTARY) {
			r->vol++;
			s->vol++;
		} else if (kind == CTXMON_SW_INVOLUNTARY) {
			r->inv++;
			s->inv++;
		} else {
			r->exitsw++;
			s->exits++;
		}
	}
	sim_switch(s, c, prev, pstate, preempt, kind, next);
	sim_cpu(s, c, next);
	if (prev) {
		struct sim_task *t = st_of(s, prev);

		t->sleep_class = pstate == CTXMON_STATE_S ? CTXMON_SLEEP_S :
							    CTXMON_SLEEP_D;
		if (race) {
			sim_state(s, prev, S_QUEUED);
			t->lat = true;
			t->lat_ts = s->now;
			er_of(s, prev)->wakeups++;
		} else {
			sim_state(s, prev, to);
		}
	}
	if (next) {
		struct sim_task *t = st_of(s, next);
		struct exp_row *r = er_of(s, next);

		sim_state(s, next, S_RUN);
		t->cpu = c;
		r->sin++;
		if (t->lat) {
			uint64_t d = s->now - t->lat_ts;

			r->lat_count++;
			r->lat_sum += d;
			if (d > r->lat_max)
				r->lat_max = d;
			t->lat = false;
		}
	}
	if (race) {
		/* Its wakeup comes once it is off the CPU. */
		s->now += rnd(s, 30);
		sim_wake(s, prev, (c + 1) % s->ncpus, false);
	}
}

static int new_row(struct sim *s, int tid, uint32_t gen, int tgid)
{
	struct exp_row *r = &s->rows[s->nrows];

	assert_true(s->nrows < SIM_ROWS);
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	r->gen = gen;
	r->tgid = tgid;
	return s->nrows++;
}

/* A running task forks a thread or a process onto a free (maybe reused)
 * tid; the child is then woken for the first time. */
static void act_fork(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), parent = s->cur[c];
	int child = pick(s, S_UNBORN, 0), tgid, row;
	uint32_t gen = 0;
	struct ctxmon_event e;
	struct sim_task *t;

	if (!child)
		child = pick(s, S_DEAD, 0);
	if (!parent || !child)
		return;
	t = st_of(s, child);
	if (t->row >= 0)
		gen = s->rows[t->row].gen + 1;
	tgid = rnd(s, 2) ? sim_tgid(s, parent) : child;
	row = new_row(s, child, gen, tgid);
	t->row = row;
	t->state = S_UNBORN;
	t->lat = false;
	e = sim_ev(s, c, CTXMON_EV_FORK);
	e.fork.parent_tid = parent;
	e.fork.child_tid = child;
	e.fork.child_tgid = rnd(s, 3) ? tgid : -1;
	e.fork.child_comm = sim_comms[child % 7];
	s->rows[row].tgid_known = e.fork.child_tgid >= 0;
	sim_feed(s, &e);
	sim_state(s, child, S_QUEUED);
	s->now += rnd(s, 40);
	e = sim_ev(s, c, CTXMON_EV_WAKEUP_NEW);
	e.wake.tid = child;
	e.wake.comm = sim_comms[child % 7];
	sim_feed(s, &e);
	t->lat = true;
	t->lat_ts = s->now;
	s->rows[row].wakeups++;
}

static void act_migrate(struct sim *s)
{
	int tid = pick(s, S_QUEUED, 0), c = (int)rnd(s, (uint32_t)s->ncpus);
	struct ctxmon_event e;

	if (!tid)
		return;
	e = sim_ev(s, c, CTXMON_EV_MIGRATE);
	e.migrate.tid = tid;
	e.migrate.dest_cpu = c;
	sim_feed(s, &e);
	er_of(s, tid)->migr++;
}

/* A running task is woken in place (waking then wakeup): it runs on. */
static void act_wake_running(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), tid = s->cur[c];

	if (!tid)
		return;
	sim_wake(s, tid, (c + 1) % s->ncpus, true);
	sim_wake(s, tid, (c + 1) % s->ncpus, false);
	er_of(s, tid)->wakeups++;
}

static struct exp_row *find_exp(struct sim *s, int tid, uint32_t gen)
{
	for (int i = 0; i < s->nrows; i++)
		if (s->rows[i].tid == tid && s->rows[i].gen == gen)
			return &s->rows[i];
	fail_msg("account has a row %d/%u the generator never made", tid, gen);
	return NULL;
}

/* Close an interval: check it adds up on its own, add it to the totals. */
/* Everything a row counts, summed over @r. */
static void row_sums(const struct ctxmon_stats *r, size_t n, uint64_t *v)
{
	memset(v, 0, 12 * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[0] += r[i].voluntary;
		v[1] += r[i].involuntary;
		v[2] += r[i].exit_switch;
		v[3] += r[i].switch_in;
		v[4] += r[i].run_ns;
		v[5] += r[i].wait_ns;
		v[6] += r[i].sleep_ns[0] + r[i].sleep_ns[1] + r[i].sleep_ns[2];
		v[7] += r[i].migrations;
		v[8] += r[i].wakeups;
		v[9] += r[i].lat.count;
		v[10] += r[i].lat.sum_ns;
		v[11] += r[i].folded ? r[i].folded : 1;
	}
}

/*
 * The bounded account @x against the full one: the same sums over threads
 * and over processes, every live thread's row the same, and at most
 * twice @keep exited rows kept one by one (@keep 0: no bound, the exited
 * rows of earlier intervals were forgotten instead).
 */
static void check_bounded(struct sim *s, struct ctxmon_account *x, size_t keep)
{
	struct ctxmon_stats *r, *xr, *pr, *xpr;
	uint64_t va[12], vx[12];
	size_t n, xn, np, xnp, exited = 0;

	ctxmon_account_finish(x, s->now);
	r = ctxmon_account_rows(s->a, CTXMON_ROWS_THREADS, true, &n);
	xr = ctxmon_account_rows(x, CTXMON_ROWS_THREADS, true, &xn);
	pr = ctxmon_account_rows(s->a, CTXMON_ROWS_PROCESSES, true, &np);
	xpr = ctxmon_account_rows(x, CTXMON_ROWS_PROCESSES, true, &xnp);
	assert_true(r && xr && pr && xpr);
	row_sums(r, n, va);
	row_sums(xr, xn, vx);
	for (int i = 0; i < 11; i++)
		assert_int_equal(vx[i], va[i]);
	/* tasks: fewer, those of earlier intervals are gone (folded rows
	 * are cleared with the interval; c forgets) */
	assert_true(vx[11] <= va[11]);
	row_sums(xpr, xnp, vx);
	for (int i = 0; i < 11; i++)
		assert_int_equal(vx[i], va[i]);
	for (size_t i = 0; i < xn; i++) {
		const struct ctxmon_stats *g = &xr[i];
		bool found = false;

		exited += g->exited && !g->folded;
		if (keep)
			s->folded += g->folded;
		if (g->exited)
			continue;
		for (size_t j = 0; j < n && !found; j++) {
			if (r[j].tid != g->tid || r[j].exited)
				continue;
			found = true;
			assert_int_equal(g->voluntary, r[j].voluntary);
			assert_int_equal(g->involuntary, r[j].involuntary);
			assert_int_equal(g->run_ns, r[j].run_ns);
			assert_int_equal(g->wait_ns, r[j].wait_ns);
			assert_int_equal(g->lat.sum_ns, r[j].lat.sum_ns);
		}
		assert_true(found);
	}
	if (keep) /* folded at the next event past the bound */
		assert_true(exited <= 2 * keep);
	assert_true(ctxmon_account_anomalies(x) <=
		    ctxmon_account_anomalies(s->a));
	free(r);
	free(xr);
	free(pr);
	free(xpr);
}

static void sim_interval(struct sim *s)
{
	struct ctxmon_stats *r, *pr;
	struct ctxmon_cpu_stats *cs;
	uint64_t run = 0, prun = 0, nthreads = 0;
	size_t n, np;

	ctxmon_account_finish(s->a, s->now);
	check_sums(s->a);
	check_batch_fed(s);
	r = ctxmon_account_rows(s->a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	for (size_t i = 0; i < n; i++) {
		struct exp_row *e = find_exp(s, r[i].tid, r[i].gen);
		struct ctxmon_stats *g = &e->got;

		run += r[i].run_ns;
		e->got_any = true;
		g->tgid = r[i].tgid;
		g->voluntary += r[i].voluntary;
		g->involuntary += r[i].involuntary;
		g->exit_switch += r[i].exit_switch;
		g->switch_in += r[i].switch_in;
		g->switch_out += r[i].switch_out;
		g->run_ns += r[i].run_ns;
		g->wait_ns += r[i].wait_ns;
		for (int k = 0; k < 3; k++)
			g->sleep_ns[k] += r[i].sleep_ns[k];
		g->migrations += r[i].migrations;
		g->wakeups += r[i].wakeups;
		g->lat.count += r[i].lat.count;
		g->lat.sum_ns += r[i].lat.sum_ns;
		if (r[i].lat.max_ns > g->lat.max_ns)
			g->lat.max_ns = r[i].lat.max_ns;
	}
	/* The process rollup redistributes the same threads. */
	pr = ctxmon_account_rows(s->a, CTXMON_ROWS_PROCESSES, true, &np);
	assert_non_null(pr);
	for (size_t i = 0; i < np; i++) {
		prun += pr[i].run_ns;
		nthreads += pr[i].nthreads;
	}
	assert_int_equal(prun, run);
	assert_int_equal(nthreads, n);
	free(pr);
	free(r);
	cs = ctxmon_account_cpus(s->a, &n);
	assert_non_null(cs);
	for (size_t i = 0; i < n; i++) {
		s->got_busy[cs[i].cpu] += cs[i].busy_ns;
		s->got_idle[cs[i].cpu] += cs[i].idle_ns;
		s->got_switches[cs[i].cpu] += cs[i].switches;
	}
	free(cs);
	check_bounded(s, s->b, SIM_KEEP);
	check_bounded(s, s->c, 0);
	ctxmon_account_reset_interval(s->a, s->now);
	ctxmon_account_reset_interval(s->d, s->now);
	ctxmon_account_reset_interval(s->b, s->now);
	ctxmon_account_forget_exited(s->c);
	ctxmon_account_reset_interval(s->c, s->now);
}

static void run_sim(uint64_t seed, int ncpus, int steps)
{
	struct sim *s = calloc(1, sizeof(*s));
	uint64_t vol = 0, inv = 0, exits = 0;
	int initial = 16, seen = 0, got = 0;

	assert_non_null(s);
	s->a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	{
		struct ctxmon_account_opts o = {
			.sz = sizeof(o),
			.target = CTXMON_TARGET_ALL,
			.exited_keep = SIM_KEEP,
		};

		s->b = ctxmon_account_new(&o);
		s->c = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
		s->d = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
		assert_non_null(s->b);
	}
	s->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	s->ncpus = ncpus;
	s->now = 1000;
	/* Tasks that exist before capture, asleep: the account learns
	 * each one at its first wakeup. */
	for (int i = 0; i < SIM_TIDS; i++) {
		int tid = SIM_TID0 + i;

		s->t[i].state = i < initial ? S_SLEEP : S_UNBORN;
		s->t[i].row = i < initial ?
				      new_row(s, tid, 0, SIM_TID0 + (i & ~3)) :
				      -1;
		s->t[i].sleep_class = CTXMON_SLEEP_S;
	}
	for (int i = 0; i < steps; i++) {
		uint32_t what = rnd(s, 100);

		s->now += rnd(s, 4) ? rnd(s, 1000) : 0;
		if (what < 30)
			act_wake(s);
		else if (what < 80)
			act_schedule(s);
		else if (what < 86)
			act_fork(s);
		else if (what < 92)
			act_migrate(s);
		else if (what < 95)
			act_wake_running(s);
		else if (what < 97)
			sim_interval(s);
		else {
			struct ctxmon_event e =
				sim_ev(s, (int)rnd(s, 2), CTXMON_EV_IRQ_ENTRY);

			sim_feed(s, &e);
		}
	}
	s->now += 1000;
	/* The generator closes its books where the account finishes. */
	for (int i = 0; i < SIM_TIDS; i++) {
		int st = s->t[i].state;

		if (st != S_UNBORN && st != S_DEAD && s->rows[s->t[i].row].seen)
			sim_state(s, SIM_TID0 + i, st);
	}
	for (int c = 0; c < ncpus; c++) {
		if (s->cpu_seen[c]) {
			sim_cpu(s, c, s->cur[c]);
			s->switches[c]--;
		}
	}
	sim_interval(s);
	assert_int_equal(ctxmon_account_anomalies(s->a), 0);

	for (int i = 0; i < s->nrows; i++) {
		struct exp_row *e = &s->rows[i];
		struct ctxmon_stats *g = &e->got;

		if (!e->seen) {
			assert_false(e->got_any);
			continue;
		}
		seen++;
		assert_true(e->got_any);
		assert_int_equal(g->tgid, e->tgid_known ? e->tgid : -1);
		assert_int_equal(g->voluntary, e->vol);
		assert_int_equal(g->involuntary, e->inv);
		assert_int_equal(g->exit_switch, e->exitsw);
		assert_int_equal(g->switch_in, e->sin);
		assert_int_equal(g->switch_out, e->sout);
		assert_int_equal(g->run_ns, e->run);
		assert_int_equal(g->wait_ns, e->wait);
		for (int k = 0; k < 3; k++)
			assert_int_equal(g->sleep_ns[k], e->sleep[k]);
		assert_int_equal(g->migrations, e->migr);
		assert_int_equal(g->wakeups, e->wakeups);
		assert_int_equal(g->lat.count, e->lat_count);
		assert_int_equal(g->lat.sum_ns, e->lat_sum);
		assert_int_equal(g->lat.max_ns, e->lat_max);
		vol += g->voluntary;
		inv += g->involuntary;
		exits += g->exit_switch;
	}
	for (int i = 0; i < s->nrows; i++)
		got += s->rows[i].got_any;
	assert_int_equal(got, seen);
	assert_int_equal(vol, s->vol);
	assert_int_equal(inv, s->inv);
	assert_int_equal(exits, s->exits);
	/* Enough happened for the test to mean something. */
	assert_true(s->vol > (uint64_t)steps / 20);
	assert_true(s->inv > (uint64_t)steps / 20);
	assert_true(s->exits > 5);
	assert_true(s->folded > 0);
	for (int c = 0; c < ncpus; c++) {
		assert_int_equal(s->got_busy[c], s->busy[c]);
		assert_int_equal(s->got_idle[c], s->idle[c]);
		assert_int_equal(s->got_switches[c], s->switches[c]);
	}
	ctxmon_account_free(s->a);
	ctxmon_account_free(s->b);
	ctxmon_account_free(s->c);
	ctxmon_account_free(s->d);
	free(s);
}

static void test_simulation(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++)
		run_sim(seed, 2 + (int)(seed % 3), 6000);
}

/* A thread whose switch-out is never traced (issue 13, defect 5): its
 * CPU switches from another task.  Its run ends there, never more than
 * the CPU's busy time, and the account counts an anomaly. */
/* The run of @tid in @a's thread rows (0 if none). */
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
		cmocka_unit_test(test_exit_switch),
		cmocka_unit_test(test_after_fold),
		cmocka_unit_test(test_exec_early),
		cmocka_unit_test(test_zombie_parent_gone),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_target_cmd),
		cmocka_unit_test(test_target_cmd_nofork),
		cmocka_unit_test(test_target_pids),
		cmocka_unit_test(test_reset_interval),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_new_opts),
		cmocka_unit_test(test_simulation),
		cmocka_unit_test(test_missed_switch_out),
		cmocka_unit_test(test_missed_switch_out_elsewhere),
		cmocka_unit_test(test_missed_switch_in),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
