/*
 * test_taskstats.c - unit tests of the taskstats client
 * (src/capture/taskstats.c): decoding records of other struct versions
 * than the headers', and, where CAP_NET_ADMIN allows, the live answers
 * against getrusage(): our own thread now, and a child's exit record
 * against what wait4() returns for it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/taskstats.h>
#include <cmocka.h>

#include <ctxmon/taskstats.h>

static void fill(struct taskstats *t)
{
	memset(t, 0, sizeof(*t));
	t->version = 13;
	t->ac_exitcode = 256;
	strcpy(t->ac_comm, "worker");
	t->ac_pid = 1234;
	t->ac_ppid = 1000;
	t->ac_utime = 11;
	t->ac_stime = 22;
	t->nvcsw = 333;
	t->nivcsw = 44;
	t->cpu_count = 5;
	t->cpu_delay_total = 6000;
	t->cpu_run_real_total = 7000;
	t->ac_tgid = 1200;
}

static void test_decode_versions(void **state)
{
	struct ctxmon_taskstats out;
	struct taskstats t;
	uint8_t big[sizeof(t) + 64];

	(void)state;
	fill(&t);
	assert_int_equal(ctxmon_taskstats_decode(&t, sizeof(t), &out), 0);
	assert_int_equal(out.version, 13);
	assert_int_equal(out.have, CTXMON_TS_BASIC | CTXMON_TS_CSW |
					   CTXMON_TS_DELAY | CTXMON_TS_TGID);
	assert_int_equal(out.pid, 1234);
	assert_int_equal(out.tgid, 1200);
	assert_int_equal(out.ppid, 1000);
	assert_string_equal(out.comm, "worker");
	assert_int_equal(out.nvcsw, 333);
	assert_int_equal(out.nivcsw, 44);
	assert_int_equal(out.cpu_delay_ns, 6000);
	assert_int_equal(out.exitcode, 256);

	/* a newer kernel's longer struct: the known fields, the rest
	 * ignored */
	memset(big, 0xee, sizeof(big));
	memcpy(big, &t, sizeof(t));
	assert_int_equal(ctxmon_taskstats_decode(big, sizeof(big), &out), 0);
	assert_int_equal(out.nvcsw, 333);
	assert_int_equal(out.size, sizeof(big));

	/* an old kernel that stops before the switch counts (version 6
	 * ended there): none read, nothing beyond the payload touched */
	assert_int_equal(ctxmon_taskstats_decode(
				 &t, offsetof(struct taskstats, nvcsw), &out),
			 0);
	assert_false(out.have & CTXMON_TS_CSW);
	assert_true(out.have & CTXMON_TS_BASIC);
	assert_int_equal(out.nvcsw, 0);
	assert_false(out.have & CTXMON_TS_TGID);

	/* version 11 and before: no tgid even when the bytes are there */
	t.version = 11;
	assert_int_equal(ctxmon_taskstats_decode(&t, sizeof(t), &out), 0);
	assert_false(out.have & CTXMON_TS_TGID);

	assert_int_equal(ctxmon_taskstats_decode(&t, 1, &out), -EINVAL);
}

/* the live tests' connection, closed by close_conn() even when an
 * assertion ends the test early */
static struct ctxmon_taskstats_conn *live_conn;

static int close_conn(void **state)
{
	(void)state;
	ctxmon_taskstats_close(live_conn);
	live_conn = NULL;
	return 0;
}

static struct ctxmon_taskstats_conn *open_or_skip(void)
{
	struct ctxmon_taskstats_conn *c = ctxmon_taskstats_open();

	live_conn = c;
	if (!c && (errno == EPERM || errno == EACCES || errno == ENOENT ||
		   errno == EPROTONOSUPPORT)) {
		int err = errno;

		print_message("taskstats: not judged: no connection (%s: %s)\n",
			      strerror(err),
			      err == ENOENT || err == EPROTONOSUPPORT ?
				      "kernel without CONFIG_TASKSTATS" :
				      "needs CAP_NET_ADMIN");
		skip();
	}
	assert_non_null(c);
	return c;
}

static void test_live_get(void **state)
{
	struct ctxmon_taskstats_conn *c;
	struct ctxmon_taskstats t;
	struct rusage before, after;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int ret;

	(void)state;
	c = open_or_skip();
	assert_int_equal(getrusage(RUSAGE_THREAD, &before), 0);
	ret = ctxmon_taskstats_get(c, tid, false, &t);
	assert_int_equal(getrusage(RUSAGE_THREAD, &after), 0);
	if (ret == -EPERM) {
		print_message("taskstats get: not judged: the kernel refused "
			      "the query (EPERM: needs CAP_NET_ADMIN)\n");
		skip();
	}
	assert_int_equal(ret, 0);
	assert_int_equal(t.pid, tid);
	assert_true(t.have & CTXMON_TS_CSW);
	/* asking blocks on the socket: the count lies between the two */
	assert_true(t.nvcsw >= (uint64_t)before.ru_nvcsw);
	assert_true(t.nvcsw <= (uint64_t)after.ru_nvcsw);
	assert_true(t.nivcsw >= (uint64_t)before.ru_nivcsw);
	assert_true(t.nivcsw <= (uint64_t)after.ru_nivcsw);
	assert_int_equal(ctxmon_taskstats_get(c, 0x7ffffff0, false, &t),
			 -ESRCH);
}

struct want {
	pid_t pid;
	struct ctxmon_taskstats rec;
	bool found;
};

static int on_rec(const struct ctxmon_taskstats *t, void *ctx)
{
	struct want *w = ctx;

	if (!t->process && t->pid == w->pid) {
		w->rec = *t;
		w->found = true;
	}
	return 0;
}

/* voluntary_ctxt_switches of a (zombie) task, or 0 */
static uint64_t zombie_nvcsw(pid_t pid)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* A child sleeps a few times and exits: its exit record plus its last
 * switch-out (after the record) is what wait4 says. */
static void test_live_exit(void **state)
{
	struct ctxmon_taskstats_conn *c;
	struct want w = { 0 };
	struct rusage ru;
	char cpus[256] = "0";
	int fd, st, ret;
	ssize_t n;

	(void)state;
	c = open_or_skip();
	fd = open("/sys/devices/system/cpu/online", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, cpus, sizeof(cpus) - 1);
		cpus[n > 0 ? n : 0] = '\0';
		cpus[strcspn(cpus, "\n")] = '\0';
		close(fd);
	}
	ret = ctxmon_taskstats_watch(c, cpus);
	if (ret == -EPERM) {
		print_message("taskstats watch: not judged: the kernel refused "
			      "to register for exit records of CPUs %s "
			      "(EPERM: needs CAP_NET_ADMIN)\n",
			      cpus);
		skip();
	}
	assert_int_equal(ret, 0);
	w.pid = fork();
	assert_true(w.pid >= 0);
	if (w.pid == 0) {
		for (int i = 0; i < 5; i++)
			usleep(2000);
		_exit(3);
	}
	/* the record comes before the zombie's last switch-out, and a
	 * leader's counters are read at reap: take the record, wait for
	 * that switch-out in the zombie's own counters, then reap */
	for (int i = 0; i < 100 && !w.found; i++)
		assert_true(ctxmon_taskstats_read(c, 20, on_rec, &w) >= 0);
	assert_true(w.found);
	for (int i = 0; i < 1000 && zombie_nvcsw(w.pid) <= w.rec.nvcsw; i++)
		usleep(1000);
	assert_int_equal(wait4(w.pid, &st, 0, &ru), w.pid);
	assert_true(w.rec.exit);
	assert_int_equal(w.rec.exitcode, (uint32_t)st);
	print_message("exit record: nvcsw %llu nivcsw %llu; rusage %ld %ld\n",
		      (unsigned long long)w.rec.nvcsw,
		      (unsigned long long)w.rec.nivcsw, ru.ru_nvcsw,
		      ru.ru_nivcsw);
	assert_true(w.rec.nvcsw >= 5);
	assert_int_equal(w.rec.nvcsw + 1, (uint64_t)ru.ru_nvcsw);
	assert_true(w.rec.nivcsw <= (uint64_t)ru.ru_nivcsw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_versions),
		cmocka_unit_test_teardown(test_live_get, close_conn),
		cmocka_unit_test_teardown(test_live_exit, close_conn),
	};

	return cmocka_run_group_tests_name("taskstats", tests, NULL, NULL);
}
