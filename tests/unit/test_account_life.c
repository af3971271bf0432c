/*
 * test_account_life.c - unit tests of the account's life-cycle rules
 * (src/analysis/account.c, account_life.c): a thread's exit switch-out,
 * what comes after the fold into its process, zombies whose parent is
 * gone, pid reuse, exec and its takeover of the leader's tid.
 */
#include "account_fx.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_switch),
		cmocka_unit_test(test_after_fold),
		cmocka_unit_test(test_exec_early),
		cmocka_unit_test(test_zombie_parent_gone),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
