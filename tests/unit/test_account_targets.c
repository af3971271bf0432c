/*
 * test_account_targets.c - unit tests of what the account keeps: a
 * command's tree, -p and -t targets, intervals (a reset between
 * snapshots), garbage in (events that cannot be), and its options.
 */
#include "account_fx.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_cmd),
		cmocka_unit_test(test_target_cmd_nofork),
		cmocka_unit_test(test_target_pids),
		cmocka_unit_test(test_reset_interval),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_new_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
