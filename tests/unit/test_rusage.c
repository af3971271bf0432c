/*
 * test_rusage - the replay of the kernel's reaping over a command's rows
 * (analysis/rusage.c): which processes' counters reach the command's
 * rusage, on synthetic trees: children reaped by a live parent, orphans
 * whose parent died first (and what they reaped), processes alive at the
 * end, a tgid used again after a reap, rows split over intervals, the
 * display fold keeping orphans apart, and processes a backend marked as
 * left unreaped (a zombie whose parent died, a child of a parent that
 * ignores SIGCHLD) out even though they died while their parent lived.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "internal.h"
#include "analysis/rusage.h"

#define ROOT 100

/* A process leader (one thread) with @vol voluntary, @invol involuntary,
 * born at @t0 from @ppid and, if @t1, ended (Z) at @t1. */
static struct ctxmon_stats proc(pid_t pid, pid_t ppid, uint64_t t0,
				uint64_t t1, uint64_t vol, uint64_t invol)
{
	struct ctxmon_stats r = {
		.tid = pid, .tgid = pid, .ppid = ppid, .first_ts = t0,
		.last_ts = t1 ? t1 : 1000, .exited = t1 != 0,
		.voluntary = vol, .involuntary = invol,
		.exit_switch = t1 != 0, .exit_counted = t1 != 0,
	};
	return r;
}

static void result_by(unsigned marks, struct ctxmon_stats *rows, size_t n,
		      struct rusage_sums *in, struct rusage_sums *out)
{
	struct rusage_model *m = rusage__new(ROOT, marks);

	assert_non_null(m);
	assert_int_equal(rusage__add(m, rows, n), 0);
	rusage__result(m, in, out);
	rusage__mark(m, rows, n);
	rusage__free(m);
}

/* Without the backend's marks: the times decide who outlived its parent. */
static void result(struct ctxmon_stats *rows, size_t n,
		   struct rusage_sums *in, struct rusage_sums *out)
{
	result_by(0, rows, n, in, out);
}

/* `sh -c '(sleep 0.1 &); sleep 0.3'`: the subshell 102 dies at once, its
 * child 103 outlives it (orphan); 104 is reaped by the root. */
static void test_orphan(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 400, 3, 1),
		proc(102, ROOT, 10, 20, 1, 0),
		proc(103, 102, 15, 110, 7, 2),	/* parent died at 20 */
		proc(104, ROOT, 12, 310, 5, 1),
	};
	struct rusage_sums in, out;

	(void)state;
	result(rows, 4, &in, &out);
	/* vol: voluntary + the zombie exit switch each */
	assert_int_equal(in.vol, 3 + 1 + 1 + 1 + 5 + 1);
	assert_int_equal(in.invol, 1 + 0 + 1);
	assert_int_equal(in.procs, 3);
	assert_int_equal(out.vol, 8);
	assert_int_equal(out.invol, 2);
	assert_int_equal(out.procs, 1);
	assert_false(rows[0].orphaned);
	assert_false(rows[1].orphaned);
	assert_true(rows[2].orphaned);
	assert_false(rows[3].orphaned);
}

/* With exit events (the stream's rows), those decide, not the last
 * switches: a vfork()ed child 111 whose parent 110, woken as it exits,
 * reaps it and exits while the child still switches out for the last time
 * on the other CPU (last switch 52, after its parent's 50; exit events 40
 * and 48) was reaped: in.  112 began its exit after its parent did (exit
 * event 49), so its parent did not reap it: out, though its last switch
 * came no later than its parent's.  A row without its exit event (113)
 * falls back to the last switches: 51 after 50, out. */
static void test_exit_events(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 400, 3, 1),
		proc(110, ROOT, 10, 50, 2, 0),
		proc(111, 110, 20, 52, 4, 1),
		proc(112, 110, 21, 50, 8, 0),
		proc(113, 110, 22, 51, 16, 0),
	};
	struct rusage_sums in, out;

	(void)state;
	rows[1].exit_lead_ns = 50 - 48;
	rows[2].exit_lead_ns = 52 - 40;
	rows[3].exit_lead_ns = 50 - 49;
	result(rows, 5, &in, &out);
	assert_false(rows[2].orphaned);
	assert_true(rows[3].orphaned);
	assert_true(rows[4].orphaned);
	assert_int_equal(in.procs, 3);
	assert_int_equal(in.vol, 3 + 1 + 2 + 1 + 4 + 1);
	assert_int_equal(out.vol, 8 + 1 + 16 + 1);
	/* without the events, 111 is out and 112 in, by the last switches */
	rows[1].exit_lead_ns = rows[2].exit_lead_ns = rows[3].exit_lead_ns = 0;
	rows[2].orphaned = rows[3].orphaned = rows[4].orphaned = false;
	result(rows, 5, &in, &out);
	assert_true(rows[2].orphaned);
	assert_false(rows[3].orphaned);
}

/* The exit rule alone counts in a child that died while its parent
 * lived; a backend that saw no reap would come (ORPHAN events: 105 a
 * zombie when its parent 102 exited, 106 released unreaped) marks the
 * leader row on input, and it is out with what it reaped itself (107). */
static void test_unreaped(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 400, 3, 1),
		proc(102, ROOT, 10, 90, 1, 0),
		proc(105, 102, 15, 30, 4, 2),	/* died before 102 did */
		proc(106, ROOT, 40, 60, 6, 1),
		proc(107, 106, 45, 50, 2, 2),	/* reaped by 106 */
		proc(108, ROOT, 70, 80, 1, 1),	/* reaped by the root */
	};
	struct rusage_sums in, out;

	(void)state;
	result(rows, 6, &in, &out);
	assert_int_equal(in.procs, 6);	/* no marks: every one in */
	/* and every one but the root may have been left unreaped */
	assert_int_equal(in.unsure_procs, 5);
	assert_int_equal(in.unsure_vol, 2 + 5 + 7 + 3 + 2);
	assert_int_equal(in.unsure_invol, 0 + 2 + 1 + 2 + 1);
	rows[2].orphaned = true;
	rows[3].orphaned = true;
	result_by(CTXMON_ORPHAN_WALK, rows, 6, &in, &out);
	assert_int_equal(in.procs, 3);
	assert_int_equal(in.unsure_procs, 0); /* the marks tell */
	result(rows, 6, &in, &out);
	assert_int_equal(in.procs, 3);
	assert_int_equal(in.unsure_procs, 2);
	assert_int_equal(in.unsure_vol, 2 + 2);
	assert_int_equal(in.unsure_invol, 0 + 1);
	assert_int_equal(in.vol, 3 + 1 + 1 + 1 + 1 + 1);
	assert_int_equal(in.invol, 1 + 0 + 1);
	assert_int_equal(out.procs, 3);
	assert_int_equal(out.vol, 4 + 1 + 6 + 1 + 2 + 1);
	assert_int_equal(out.invol, 2 + 1 + 2);
	assert_false(rows[1].orphaned);
	assert_true(rows[2].orphaned);
	assert_true(rows[3].orphaned);
	assert_true(rows[4].orphaned);
	assert_false(rows[5].orphaned);
}

/* A double-forking daemon: what the orphan reaped goes with it; a
 * process alive when the capture ends is out too. */
static void test_daemon(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 100, 2, 0),
		proc(201, ROOT, 5, 8, 1, 0),	/* first fork, exits */
		proc(202, 201, 6, 90, 4, 0),	/* daemon, orphaned at 8 */
		proc(203, 202, 30, 40, 6, 0),	/* reaped by the daemon */
		proc(204, ROOT, 50, 0, 9, 0),	/* still alive */
	};
	struct rusage_sums in, out;

	(void)state;
	result(rows, 5, &in, &out);
	assert_int_equal(in.procs, 2);
	assert_int_equal(in.vol, 3 + 2);
	assert_int_equal(out.procs, 3);
	assert_int_equal(out.vol, 5 + 7 + 9);
	assert_true(rows[3].orphaned);
	assert_true(rows[4].orphaned);
}

/* pid_max wraps under a fork storm: the second 300 is a new process
 * (the first was reaped), child of the root, while the first's child 301
 * was orphaned.  Non-leader threads join the incarnation they were born
 * in. */
static void test_tgid_reuse(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 1000, 1, 0),
		proc(300, ROOT, 10, 20, 1, 0),
		proc(301, 300, 12, 30, 10, 0),	/* outlives the first 300 */
		proc(300, ROOT, 40, 50, 100, 0),
		proc(302, 300, 42, 45, 1000, 0), /* reaped by the second */
		{ .tid = 305, .tgid = 300, .first_ts = 41, .last_ts = 44,
		  .exited = true, .voluntary = 10000, .exit_switch = 1 },
	};
	struct rusage_sums in, out;

	(void)state;
	result(rows, 6, &in, &out);
	/* in: root 1+1, first 300 1+1, second 300 100+1, 302 1000+1, and
	 * the thread's 10000 (its X exit never counted) */
	assert_int_equal(in.vol, 2 + 2 + 101 + 1001 + 10000);
	assert_int_equal(in.exit_switches, 5);
	assert_int_equal(out.vol, 11);
	assert_true(rows[2].orphaned);
	assert_false(rows[3].orphaned);
	assert_false(rows[5].orphaned);
	/* the second 300 got a pid the first had: one process, counted or
	 * not, whatever its threads */
	assert_int_equal(in.reused_procs, 1);
	assert_int_equal(out.reused_procs, 0);
	result(rows, 3, &in, &out);
	assert_int_equal(in.reused_procs, 0);
}

/* -I: a process's rows come in several calls; its end in a later one. */
static void test_intervals(void **state)
{
	struct ctxmon_stats a[] = {
		proc(ROOT, 1, 1, 0, 1, 0),
		proc(401, ROOT, 5, 0, 2, 0),
		proc(402, 401, 6, 0, 4, 0),
	};
	struct ctxmon_stats b[] = {
		proc(ROOT, 1, 1, 300, 10, 0),
		proc(401, ROOT, 5, 100, 20, 0),	/* dies first */
		proc(402, 401, 6, 200, 40, 0),	/* orphaned */
	};
	struct rusage_model *m = rusage__new(ROOT, 0);
	struct rusage_sums in, out;

	(void)state;
	assert_non_null(m);
	assert_int_equal(rusage__add(m, a, 3), 0);
	assert_int_equal(rusage__add(m, b, 3), 0);
	rusage__result(m, &in, &out);
	assert_int_equal(in.procs, 2);
	assert_int_equal(in.vol, 1 + 10 + 1 + 2 + 20 + 1);
	assert_int_equal(out.vol, 4 + 40 + 1);
	rusage__free(m);
}

/*
 * With the marks (bpf, bpf-agg), an unmarked child of a counted parent is
 * in whatever the times: the root reaps 202, exits and switches out at
 * 300, before 202, preempted on its way out, switches out at 305 (seen
 * once in test_stat_interval: one voluntary switch short).  Without the
 * marks the times put it out.  A marked one is out either way, and past
 * the children one exit's marks cover (128; bpf-agg's walk 32768) the
 * times decide again.
 */
static void test_marks_trust(void **state)
{
	struct ctxmon_stats rows[] = {
		proc(ROOT, 1, 1, 300, 3, 1),
		proc(202, ROOT, 10, 305, 7, 2),	/* reaped, last switch late */
		proc(203, ROOT, 12, 320, 5, 1),	/* handed away: marked */
	};
	struct ctxmon_stats many[1 + 130];
	struct rusage_sums in, out;

	(void)state;
	rows[2].orphaned = true;
	result_by(CTXMON_ORPHAN_WALK, rows, 3, &in, &out);
	assert_int_equal(in.procs, 2);
	assert_int_equal(in.vol, 3 + 1 + 7 + 1);
	assert_int_equal(out.procs, 1);
	assert_int_equal(out.vol, 5 + 1);
	assert_false(rows[1].orphaned);
	assert_true(rows[2].orphaned);

	rows[2].orphaned = true;
	result_by(0, rows, 3, &in, &out);
	assert_int_equal(in.procs, 1);
	assert_int_equal(out.procs, 2);
	assert_true(rows[1].orphaned);

	/* 130 children: the marks may have missed some, times decide */
	many[0] = proc(ROOT, 1, 1, 300, 3, 1);
	for (int i = 1; i <= 130; i++)
		many[i] = proc(1000 + i, ROOT, 10 + (uint64_t)i,
			       i == 1 ? 305 : 200, 1, 0);
	result_by(CTXMON_ORPHAN_WALK, many, 131, &in, &out);
	assert_int_equal(in.procs, 130);
	assert_int_equal(out.procs, 1);
	assert_true(many[1].orphaned);
	/* a walk of 32768 covers them: the marks are trusted */
	for (int i = 0; i <= 130; i++)
		many[i].orphaned = false;
	result_by(CTXMON_ORPHAN_WALK_MANY, many, 131, &in, &out);
	assert_int_equal(in.procs, 131);
	assert_int_equal(out.procs, 0);
	assert_false(many[1].orphaned);
	/* sampled rows (UINT_MAX): their ends are reads, never a guess */
	rows[1].orphaned = false;
	rows[2].orphaned = true;
	result_by(UINT_MAX, rows, 3, &in, &out);
	assert_int_equal(in.procs, 2);
	assert_false(rows[1].orphaned);
	assert_true(rows[2].orphaned);
}

/* The display fold keeps orphans apart and every sum whole. */
static void test_fold_rows(void **state)
{
	size_t n = 40, keep = 5;
	struct ctxmon_stats *rows = calloc(n, sizeof(*rows));
	uint64_t vol = 0, vol2 = 0, orph = 0, orph2 = 0;

	(void)state;
	assert_non_null(rows);
	for (size_t i = 0; i < n; i++) {
		rows[i] = proc((pid_t)(500 + i), ROOT, i, i < 35 ? 100 + i : 0,
			       i + 1, 0);
		rows[i].comm = "w";
		rows[i].orphaned = i % 3 == 0;
		vol += rows[i].voluntary;
		orph += rows[i].orphaned ? rows[i].voluntary : 0;
	}
	assert_int_equal(fold__rows(rows, &n, keep), 0);
	/* 5 live + 5 exited kept + 2 folded rows (orphans, others) */
	assert_int_equal(n, 12);
	for (size_t i = 0; i < n; i++) {
		vol2 += rows[i].voluntary;
		orph2 += rows[i].orphaned ? rows[i].voluntary : 0;
	}
	assert_int_equal(vol, vol2);
	assert_int_equal(orph, orph2);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orphan),
		cmocka_unit_test(test_daemon),
		cmocka_unit_test(test_unreaped),
		cmocka_unit_test(test_exit_events),
		cmocka_unit_test(test_tgid_reuse),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_marks_trust),
		cmocka_unit_test(test_fold_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
