/*
 * test_proc.c - unit tests of the proc backend (src/capture/proc.c):
 * its parsers on /proc texts of this kernel's format (comms that hold
 * spaces and parentheses included), one live thread read against
 * getrusage(RUSAGE_THREAD), and a command followed through the "proc"
 * backend whose rows must add up to its wait4() rusage.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>

#include "capture/procfs.h"
#include "internal.h"

/* A /proc/PID/stat line with every field up to processor (39). */
static void stat_line(char *buf, size_t len, const char *comm)
{
	snprintf(buf, len,
		 "4321 (%s) S 77 4321 4321 0 -1 4194560 130 0 0 0 29 68 0 0 "
		 "20 0 3 0 123456 48095232 4110 18446744073709551615 1 1 0 0 "
		 "0 0 0 4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		 comm);
}

static void test_stat(void **state)
{
	struct procfs_task t;
	char buf[512];

	(void)state;
	memset(&t, 0, sizeof(t));
	stat_line(buf, sizeof(buf), "plain");
	assert_int_equal(procfs__parse_stat(buf, &t), 0);
	assert_int_equal(t.tid, 4321);
	assert_string_equal(t.comm, "plain");
	assert_int_equal(t.state, 'S');
	assert_int_equal(t.ppid, 77);
	assert_int_equal(t.start_ticks, 123456);
	assert_int_equal(t.cpu, 1);

	/* a comm may hold ") S 1 (" itself: only the last ')' ends it */
	memset(&t, 0, sizeof(t));
	stat_line(buf, sizeof(buf), "a) S 9 (b");
	assert_int_equal(procfs__parse_stat(buf, &t), 0);
	assert_string_equal(t.comm, "a) S 9 (b");
	assert_int_equal(t.ppid, 77);
	assert_int_equal(t.start_ticks, 123456);

	/* too long for a comm: cut at CTXMON_COMM_LEN */
	stat_line(buf, sizeof(buf), "0123456789abcdefXYZ");
	assert_int_equal(procfs__parse_stat(buf, &t), 0);
	assert_int_equal(strlen(t.comm), CTXMON_COMM_LEN);

	assert_int_equal(procfs__parse_stat("12 no parens", &t), -EINVAL);
	assert_int_equal(procfs__parse_stat("12 (x) S 1 2", &t), -EINVAL);
}

static void test_schedstat_sched_status(void **state)
{
	static const char sched[] =
		"process_api (1, #threads: 13)\n"
		"-------------------------------------------------------------------\n"
		"se.exec_start                                :       2695618.002626\n"
		"se.sum_exec_runtime                          :           176.909132\n"
		"se.nr_migrations                             :                   34\n"
		"nr_switches                                  :                  415\n"
		"nr_voluntary_switches                        :                  343\n"
		"nr_involuntary_switches                      :                   72\n"
		"se.load.weight                               :              1048576\n";
	static const char status[] = "Name:\tbash\nTgid:\t26449\nPid:\t26450\n"
				     "voluntary_ctxt_switches:\t591\n"
				     "nonvoluntary_ctxt_switches:\t826\n";
	struct procfs_task t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(
		procfs__parse_schedstat("176909132 12199457 413\n", &t), 0);
	assert_int_equal(t.run_ns, 176909132);
	assert_int_equal(t.wait_ns, 12199457);
	assert_int_equal(t.timeslices, 413);
	assert_int_equal(procfs__parse_schedstat("12\n", &t), -EINVAL);

	assert_int_equal(procfs__parse_sched(sched, &t), 0);
	assert_int_equal(t.nvcsw, 343);
	assert_int_equal(t.nivcsw, 72);
	assert_int_equal(t.migrations, 34);
	assert_true(t.has_sched);
	/* "nr_switches" alone is not enough */
	assert_int_equal(procfs__parse_sched("nr_switches : 5\n", &t), -EINVAL);

	memset(&t, 0, sizeof(t));
	assert_int_equal(procfs__parse_status(status, &t), 0);
	assert_int_equal(t.tgid, 26449);
	assert_int_equal(t.nvcsw, 591);
	assert_int_equal(t.nivcsw, 826);
	assert_int_equal(procfs__parse_status("Name:\tx\n", &t), -EINVAL);
}

/* This thread read from /proc lies between two getrusage(RUSAGE_THREAD). */
static void test_live_thread(void **state)
{
	struct rusage before, after;
	struct procfs_task t;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)state;
	/* a few real sleeps, so the counts are not all zero */
	for (int i = 0; i < 3; i++)
		usleep(1000);
	assert_int_equal(getrusage(RUSAGE_THREAD, &before), 0);
	assert_int_equal(procfs__read_task(getpid(), tid, &t), 0);
	assert_int_equal(getrusage(RUSAGE_THREAD, &after), 0);
	assert_int_equal(t.tid, tid);
	assert_int_equal(t.tgid, getpid());
	assert_true(t.nvcsw >= (uint64_t)before.ru_nvcsw);
	assert_true(t.nvcsw <= (uint64_t)after.ru_nvcsw);
	assert_true(t.nivcsw >= (uint64_t)before.ru_nivcsw);
	assert_true(t.nivcsw <= (uint64_t)after.ru_nivcsw);
	assert_true(t.nvcsw >= 3);
	assert_true(t.run_ns > 0);
	assert_int_equal(procfs__read_task(getpid(), 0x7ffffff0, &t), -ENOENT);
}

/*
 * A command through the "proc" backend: sampled last while a zombie
 * (the session is stopped before the reap), its one thread's row is its
 * whole rusage.
 */
static void test_backend_command(void **state)
{
	char *argv[] = { "sleep", "0.1", NULL };
	struct ctxmon_session_opts o = {
		.sz = sizeof(o),
		.target = CTXMON_TARGET_CMD,
		.argv = argv,
		.backend = "proc",
	};
	struct ctxmon_session *s;
	struct ctxmon_stats *rows = NULL;
	struct rusage ru;
	siginfo_t si;
	size_t n = 0;
	bool ival;
	uint64_t vol = 0, invol = 0, now;
	int st;

	(void)state;
	s = ctxmon_session_open(&o);
	assert_non_null(s);
	assert_string_equal(ctxmon_session_backend(s), "proc");
	assert_true(ctxmon_session_caps(s) & CTXMON_CAP_COUNTS);
	assert_non_null(ctxmon_session_limits(s));
	assert_int_equal(ctxmon_session_start(s), 0);
	for (;;) {
		memset(&si, 0, sizeof(si));
		assert_true(ctxmon_session_poll(s, 20, NULL, NULL) >= 0);
		if (waitid(P_PID, (id_t)ctxmon_session_child(s), &si,
			   WEXITED | WNOWAIT | WNOHANG) == 0 &&
		    si.si_pid)
			break;
	}
	usleep(5000); /* the zombie's last switch-out */
	assert_int_equal(ctxmon_session_stop(s, NULL, NULL), 0);
	now = clock__now_ns();
	assert_int_equal(session__read_rows(s, &now, &rows, &n, false, &ival),
			 0);
	assert_int_equal(ctxmon_session_reap_child(s, true, &st, &ru), 1);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].tgid != ctxmon_session_child(s))
			continue;
		vol += rows[i].voluntary;
		invol += rows[i].involuntary;
		assert_string_equal(rows[i].comm, "sleep");
		assert_true(rows[i].run_ns > 0);
	}
	print_message("proc rows: voluntary %llu involuntary %llu; rusage %ld "
		      "%ld\n",
		      (unsigned long long)vol, (unsigned long long)invol,
		      ru.ru_nvcsw, ru.ru_nivcsw);
	assert_int_equal(vol, (uint64_t)ru.ru_nvcsw);
	assert_int_equal(invol, (uint64_t)ru.ru_nivcsw);
	free(rows);
	ctxmon_session_close(s);
}

static void test_backend_refuses(void **state)
{
	pid_t none = 0x7ffffff0;
	struct ctxmon_session_opts o = {
		.sz = sizeof(o),
		.target = CTXMON_TARGET_PIDS,
		.pids = &none,
		.npids = 1,
		.backend = "proc",
	};

	(void)state;
	assert_null(ctxmon_session_open(&o));
	assert_non_null(strstr(ctxmon_last_error(), "no such process"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_schedstat_sched_status),
		cmocka_unit_test(test_live_thread),
		cmocka_unit_test(test_backend_command),
		cmocka_unit_test(test_backend_refuses),
	};

	return cmocka_run_group_tests_name("procfs", tests, NULL, NULL);
}
