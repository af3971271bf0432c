/*
 * test_kernel_cmp - the comparison of traced sums with a command's
 * getrusage (kcmp__add / kcmp__match): which exit
 * switch-outs the kernel counts, and the ranges left where it may or may
 * not (docs/accounting.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "output/output.h"

static struct ctxmon_stats row(pid_t tid, pid_t tgid, uint64_t vol,
			       uint64_t invol, uint64_t exit_sw,
			       uint64_t exit_counted)
{
	struct ctxmon_stats r = {
		.tid = tid, .tgid = tgid, .voluntary = vol,
		.involuntary = invol, .exit_switch = exit_sw,
		.exit_counted = exit_counted,
	};
	return r;
}

/* kcmp__match() holds for *field (ru_nvcsw or ru_nivcsw) from lo
 * to hi, and fails just below and just above; *field is left at lo. */
static void check_window(struct kernel_cmp *k, uint64_t *field, uint64_t lo,
			 uint64_t hi)
{
	for (uint64_t v = lo - 1; v <= hi + 1; v++) {
		*field = v;
		if (v >= lo && v <= hi)
			assert_true(kcmp__match(k));
		else
			assert_false(kcmp__match(k));
	}
	*field = lo;
}

/* A leader that ended in Z is counted; a thread's X never is. */
static void test_exact(void **state)
{
	struct ctxmon_stats rows[] = {
		row(100, 100, 10, 3, 1, 1),	/* leader, zombie */
		row(101, 100, 5, 2, 1, 0),	/* thread, X */
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	kcmp__add(&k, rows, 2);
	assert_int_equal(k.traced_vol, 16);
	assert_int_equal(k.traced_invol, 5);
	assert_int_equal(k.exit_switches, 2);
	assert_int_equal(k.leader_exits, 1);
	assert_int_equal(k.leader_reaped, 0);
	k.ru_nivcsw = 5;
	check_window(&k, &k.ru_nvcsw, 16, 16);
}

/* A leader reaped as it switched out (X) may be counted or not: the
 * voluntary side becomes a range one wide per such leader. */
static void test_leader_reaped(void **state)
{
	struct ctxmon_stats rows[] = {
		row(200, 200, 10, 0, 1, 1),
		row(300, 300, 20, 0, 1, 0),	/* leader, X */
		row(301, 300, 4, 0, 1, 0),	/* its thread, X: never */
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	kcmp__add(&k, rows, 3);
	assert_int_equal(k.traced_vol, 35);
	assert_int_equal(k.leader_reaped, 1);
	check_window(&k, &k.ru_nvcsw, 35, 36);
}

/* Folded rows (many exited tasks of one comm) say nothing of leaders. */
static void test_folded(void **state)
{
	struct ctxmon_stats r = row(0, 0, 50, 5, 8, 3);
	struct kernel_cmp k = { .valid = true };

	(void)state;
	r.folded = 8;
	kcmp__add(&k, &r, 1);
	assert_int_equal(k.traced_vol, 53);
	assert_int_equal(k.leader_reaped, 0);
}

/* Tracepoint backends: involuntary within [traced - exit_preempt, traced];
 * preemptions known to follow the fold are left out (non-leaders). */
static void test_involuntary(void **state)
{
	struct ctxmon_stats rows[] = {
		row(400, 400, 1, 10, 1, 1),
		row(401, 400, 1, 6, 1, 0),
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	rows[1].exit_preempt = 2;
	rows[1].after_fold = 1;
	kcmp__add(&k, rows, 2);
	assert_int_equal(k.traced_invol, 15);
	assert_int_equal(k.after_fold, 1);
	assert_int_equal(k.exit_preempt, 2);
	k.ru_nvcsw = k.traced_vol;
	check_window(&k, &k.ru_nivcsw, 13, 15);
}

/* A non-leader that blocked after the fold (PREEMPT_RT: a lock its
 * release takes), or a leader after its release by the reap, switched out
 * voluntarily where rusage does not see it: left out of voluntary,
 * exactly. */
static void test_voluntary_after_fold(void **state)
{
	struct ctxmon_stats rows[] = {
		row(400, 400, 1, 10, 1, 1),
		row(401, 400, 1, 6, 1, 0),
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	rows[0].voluntary = 7;
	rows[0].after_fold_vol = 3;
	rows[1].voluntary = 5;
	rows[1].after_fold_vol = 2;
	kcmp__add(&k, rows, 2);
	assert_int_equal(k.after_fold_vol, 5);
	assert_int_equal(k.traced_vol, 7 + 1 - 3 + 5 - 2);
	k.ru_nivcsw = k.traced_invol;
	check_window(&k, &k.ru_nvcsw, 8, 8);
}

/* A process leader preempted in its exit while its parent reaps it (the
 * BPF backends read where the reap stands, docs/accounting.md): after the
 * release, left out; between the reap's start and its read, a range; a
 * leader that ended a zombie was read after all of its switches.  Figures
 * of a 6.12 rt guest's zombies 300 1 run that counted one too many. */
static void test_leader_after_reap(void **state)
{
	struct ctxmon_stats rows[] = {
		row(500, 500, 81, 11, 1, 1),	/* zombie at the end */
		row(501, 501, 4, 1, 1, 0),	/* released, then preempted */
		row(502, 502, 3, 2, 1, 0),	/* preempted in the reap */
		row(503, 503, 2, 1, 1, 1),	/* zombie at the end */
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	rows[1].after_fold = 1;
	rows[2].exit_preempt = 1;
	rows[3].exit_preempt = 1; /* a tracepoint backend's: read after */
	kcmp__add(&k, rows, 4);
	assert_int_equal(k.after_fold, 1);
	assert_int_equal(k.exit_preempt, 1);
	assert_int_equal(k.leader_reaped, 2);
	assert_int_equal(k.traced_invol, 11 + 0 + 2 + 1);
	k.ru_nvcsw = k.traced_vol;
	check_window(&k, &k.ru_nivcsw, 13, 14);
}

/* Switches shown R without preemption: where the kernel shows a signal-cut
 * sleep as R (sig_bound), up to that many involuntary may be voluntary;
 * where it shows S, they do not widen anything. */
static void test_sigsleep_bound(void **state)
{
	struct ctxmon_stats rows[] = {
		row(500, 500, 20, 7, 1, 1),
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	rows[0].shown_running = 3;
	kcmp__add(&k, rows, 1);
	assert_int_equal(k.shown_running, 3);
	assert_int_equal(k.traced_vol, 21);
	k.ru_nivcsw = 7;
	check_window(&k, &k.ru_nvcsw, 21, 21);
	k.sig_bound = true;
	check_window(&k, &k.ru_nvcsw, 21, 24);
	k.ru_nvcsw = 21;
	check_window(&k, &k.ru_nivcsw, 4, 7);
}

/* Whether the verdict of @k has the line saying that processes left
 * unreaped fit the difference. */
static bool line_has(const struct kernel_cmp *k, const char *what);

static bool hint_shown(const struct kernel_cmp *k)
{
	return line_has(k, "may never have been reaped");
}

/* Without orphan marks, a mismatch that the switches of the processes the
 * backend cannot see reaped cover says so; no other verdict does. */
static void test_unsure_hint(void **state)
{
	struct kernel_cmp k = {
		.valid = true, .traced_vol = 30, .traced_invol = 10,
		.unsure_procs = 2, .unsure_vol = 8, .unsure_invol = 3,
	};

	(void)state;
	k.ru_nvcsw = 30;
	k.ru_nivcsw = 10;
	assert_true(kcmp__match(&k));
	assert_false(hint_shown(&k));	/* a match needs no excuse */
	for (uint64_t v = 20; v <= 31; v++) {
		for (uint64_t i = 5; i <= 11; i++) {
			k.ru_nvcsw = v;
			k.ru_nivcsw = i;
			assert_int_equal(hint_shown(&k),
					 !kcmp__match(&k) && v >= 22 &&
						 v <= 30 && i >= 7 && i <= 10);
		}
	}
	k.ru_nvcsw = 25;
	k.ru_nivcsw = 8;
	k.unsure_procs = 0;	/* a backend with marks has none */
	assert_false(hint_shown(&k));
}

/* A bound (perf-switch) over the kernel by no more than the processes it
 * cannot see reaped says so too. */
static void test_unsure_hint_bound(void **state)
{
	struct kernel_cmp k = {
		.valid = true, .bound = true, .traced_vol = 30,
		.traced_invol = 10, .unsure_procs = 2, .unsure_vol = 8,
		.unsure_invol = 3,
	};

	(void)state;
	for (uint64_t v = 18; v <= 32; v++) {
		for (uint64_t i = 4; i <= 12; i++) {
			k.ru_nvcsw = v;
			k.ru_nivcsw = i;
			/* out: 22 voluntary, 7 involuntary, the sum 29 */
			assert_int_equal(hint_shown(&k),
					 !kcmp__match(&k) && v >= 22 &&
						 v + i >= 29);
		}
	}
}

/* A backend following the command through the kernel's pid filter, short
 * of the kernel with pids of the command given again, says why; not when
 * it matches, is over, has no reuse, or follows it otherwise. */
static void test_pid_reuse_hint(void **state)
{
	struct kernel_cmp k = {
		.valid = true, .traced_vol = 65144, .traced_invol = 3000,
		.ru_nvcsw = 130629, .ru_nivcsw = 3000, .reused_procs = 32440,
	};

	(void)state;
	kcmp__caps(&k, CTXMON_CAP_EVENTS | CTXMON_CAP_EXIT_TAIL |
					CTXMON_CAP_PID_FILTER);
	assert_true(k.pid_filter);
	assert_true(line_has(&k, "32440 processes of the command got a pid"));
	k.ru_nvcsw = 65144;	/* a match needs no excuse */
	assert_false(line_has(&k, "got a pid"));
	k.ru_nvcsw = 60000;	/* over the kernel: not this */
	assert_false(line_has(&k, "got a pid"));
	k.ru_nvcsw = 130629;
	k.reused_procs = 0;
	assert_false(line_has(&k, "got a pid"));
	k.reused_procs = 32440;
	kcmp__caps(&k, CTXMON_CAP_EVENTS | CTXMON_CAP_EXIT_TAIL);
	assert_false(k.pid_filter);
	assert_false(line_has(&k, "got a pid"));
}

/*
 * Sampled rows (the proc tier) are the kernel's own counters read before
 * the end: each kind is a lower bound, with no slack, and the verdict says
 * why they are short.
 */
static void test_sampled(void **state)
{
	struct kernel_cmp k = {
		.valid = true, .bound = true, .sampled = true,
		.traced_vol = 30, .traced_invol = 10,
	};

	(void)state;
	for (uint64_t v = 28; v <= 32; v++) {
		for (uint64_t i = 8; i <= 12; i++) {
			k.ru_nvcsw = v;
			k.ru_nivcsw = i;
			assert_int_equal(kcmp__match(&k),
					 v >= 30 && i >= 10);
		}
	}
	k.ru_nvcsw = 35;
	k.ru_nivcsw = 10;
	assert_true(line_has(&k, "voluntary 30 of 35 (5 short)"));
	assert_true(line_has(&k, "after its last sample"));
	assert_true(line_has(&k, "within bound"));
	assert_false(line_has(&k, "signal"));
	k.ru_nivcsw = 9;	/* a sample above the kernel: wrong */
	assert_true(line_has(&k, "MISMATCH"));
	assert_false(line_has(&k, "signal"));
}

/* What output__kernel_hints() writes for @k between @pre and @post, or
 * (@pre NULL) the whole verdict of output__kernel_line(); malloc'd. */
static char *verdict(const struct kernel_cmp *k, const char *pre,
		     const char *post, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	if (pre)
		output__kernel_hints(f, k, pre, post);
	else
		output__kernel_line(f, k);
	fclose(f);
	return buf;
}

/* The verdict of @k contains @what. */
static bool line_has(const struct kernel_cmp *k, const char *what)
{
	size_t len;
	char *buf = verdict(k, NULL, NULL, &len);
	bool has = strstr(buf, what) != NULL;

	free(buf);
	return has;
}

/* Exiting threads' blocks seen by a tracepoint backend: on PREEMPT_RT up
 * to that many voluntary may come after the fold, so the kernel's count
 * may be that much lower; elsewhere the kernel counts them all.  The
 * verdict line prints the range and says why. */
static void test_exit_block_rt(void **state)
{
	struct ctxmon_stats rows[] = {
		row(410, 410, 4, 9, 1, 1),
		row(411, 410, 3, 2, 1, 0),
		row(412, 410, 2, 2, 1, 0),
	};
	struct kernel_cmp k = { .valid = true };

	(void)state;
	rows[0].exit_block = 5; /* a leader's: not summed */
	rows[1].exit_block = 1;
	rows[2].exit_block = 1;
	kcmp__add(&k, rows, 3);
	assert_int_equal(k.exit_block, 2);
	assert_int_equal(k.traced_vol, 4 + 1 + 3 + 2);
	k.ru_nivcsw = k.traced_invol;
	check_window(&k, &k.ru_nvcsw, 10, 10);
	assert_true(line_has(&k, "voluntary 10 = 10"));
	k.preempt_rt = true;
	check_window(&k, &k.ru_nvcsw, 8, 10);
	k.ru_nvcsw = 9;
	assert_true(line_has(&k, "voluntary: getrusage 9 in traced 8..10"));
	k.ru_nvcsw = 7;
	assert_true(line_has(&k, "voluntary: getrusage 7 not in traced 8..10"));
}

/* Each side of a range verdict says whether its own count is in its own
 * range, traced first in the verdict's words: the involuntary side said
 * "not in" for a count inside its range when the voluntary one failed
 * ("getrusage 12 not in traced 3..24"). */
static void test_range_sides(void **state)
{
	struct kernel_cmp k = {
		.valid = true, .traced_vol = 10, .ru_nvcsw = 20,
		.leader_reaped = 1, .traced_invol = 5, .exit_preempt = 3,
		.ru_nivcsw = 3,
	};

	(void)state;
	assert_false(kcmp__match(&k));
	assert_true(line_has(&k, "voluntary: getrusage 20 not in traced 10..11"));
	assert_true(line_has(&k, "involuntary: getrusage 3 in traced 2..5"));
	k.ru_nvcsw = 11;
	k.ru_nivcsw = 1;
	assert_false(kcmp__match(&k));
	assert_true(line_has(&k, "voluntary: getrusage 11 in traced 10..11"));
	assert_true(line_has(&k, "involuntary: getrusage 1 not in traced 2..5"));
	k.ru_nivcsw = 2;
	assert_true(kcmp__match(&k));
	assert_true(line_has(&k, "(traced vs getrusage: match)"));
}

/* io_uring workers in the command's rows (named by the kernel, not the
 * leader): a mismatch short of the kernel says a backend following forks
 * misses them; a match, a count over the kernel's, or no worker, not. */
static void test_io_workers_hint(void **state)
{
	struct ctxmon_stats rows[3] = {
		{ .tid = 500, .tgid = 500, .ppid = 1, .comm = "prog",
		  .voluntary = 10, .involuntary = 2, .target = true },
		{ .tid = 501, .tgid = 500, .comm = "iou-wrk-500",
		  .voluntary = 20, .involuntary = 1, .target = true },
		{ .tid = 502, .tgid = 500, .comm = "iou-wrk-5000",
		  .voluntary = 5, .target = true },
	};
	struct kernel_cmp k = { .valid = true };
	const char *hint = "io_uring workers (iou-wrk) ran in the command";

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		rows[i].first_ts = 100 + i;
		rows[i].last_ts = 1000;
		rows[i].lat.max_waker_tid = rows[i].lat.max_cpu = -1;
		rows[i].lat.max_prev_tid = -1;
	}
	assert_int_equal(kcmp__tree(&k, 500, CTXMON_ORPHAN_WALK, rows, 3, NULL, 0,
					     NULL, 0), 0);
	assert_true(k.io_workers);
	k.ru_nvcsw = 35;
	k.ru_nivcsw = 3;
	assert_true(kcmp__match(&k));
	assert_false(line_has(&k, hint));
	k.ru_nvcsw = 90; /* the kernel counted more: switches not seen */
	assert_false(kcmp__match(&k));
	assert_true(line_has(&k, hint));
	{	/* the same sentence, in the HTML status box's markup */
		size_t len;
		char *buf = verdict(&k, "<div>", "</div>\n", &len);

		assert_true(strncmp(buf, "<div>", 5) == 0);
		assert_non_null(strstr(buf, hint));
		assert_true(len > 7 && strcmp(buf + len - 7, "</div>\n") == 0);
		free(buf);
	}
	k.ru_nvcsw = 30; /* fewer: not what missed workers do */
	assert_false(kcmp__match(&k));
	assert_false(line_has(&k, hint));
	/* no worker: the same shortfall says nothing of io_uring */
	memset(&k, 0, sizeof(k));
	rows[1].comm = rows[2].comm = "worker";
	assert_int_equal(kcmp__tree(&k, 500, CTXMON_ORPHAN_WALK, rows, 3, NULL, 0,
					     NULL, 0), 0);
	assert_false(k.io_workers);
	k.ru_nvcsw = 90;
	k.ru_nivcsw = 3;
	assert_false(line_has(&k, hint));
}

/* -p/-t: the traced counts within the /proc reads' inner and outer
 * differences, each side to the unit; a sleep cut short by a signal
 * moves up to shown_running from voluntary to involuntary; a lower
 * bound is held to the outer end only. */
static void test_live(void **state)
{
	struct live_cmp l = {
		.valid = true, .threads = 2, .vol = 100, .invol = 50,
		.vol_lo = 100, .vol_hi = 120, .invol_lo = 50, .invol_hi = 60,
	};

	(void)state;
	assert_true(kcmp__live_match(&l));
	l.vol = 99;
	assert_false(kcmp__live_match(&l));
	l.vol = 121;
	assert_false(kcmp__live_match(&l));
	l.vol = 120;
	l.invol = 49;
	assert_false(kcmp__live_match(&l));
	l.invol = 61;
	assert_false(kcmp__live_match(&l));
	/* three voluntary switches shown R: counted involuntary */
	l.vol = 97;
	l.invol = 63;
	l.shown_running = 3;
	assert_false(kcmp__live_match(&l));
	l.sig_bound = true;
	assert_true(kcmp__live_match(&l));
	l.invol = 64;
	assert_false(kcmp__live_match(&l));
	/* lower bounds: anything up to the outer reads */
	l = (struct live_cmp){ .valid = true, .threads = 1, .bound = true,
			       .vol = 5, .invol = 70, .vol_lo = 100,
			       .vol_hi = 120, .invol_lo = 50, .invol_hi = 60 };
	assert_true(kcmp__live_match(&l));
	l.invol = 176;
	assert_false(kcmp__live_match(&l));
	l.invol = 0;
	l.vol = 121;
	assert_false(kcmp__live_match(&l));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigsleep_bound),
		cmocka_unit_test(test_unsure_hint),
		cmocka_unit_test(test_unsure_hint_bound),
		cmocka_unit_test(test_pid_reuse_hint),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_io_workers_hint),
		cmocka_unit_test(test_range_sides),
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_leader_reaped),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_involuntary),
		cmocka_unit_test(test_voluntary_after_fold),
		cmocka_unit_test(test_leader_after_reap),
		cmocka_unit_test(test_exit_block_rt),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
