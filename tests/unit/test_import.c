/*
 * test_import.c - the importers' small rules: perf script lines parse;
 * trace-cmd's sched plugin states read with the plugin's own letters (W is
 * TASK_IDLE, not unknown); a comm that ends in a dash reads back the same
 * (the input of the fuzzer's round-trip finding); files are told apart by
 * content; a damaged perf.data is an error, never a crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/import.h>
#include <ctxmon/record.h>

#include "decode/textparse.h"
#include "internal.h"
#include "textparse_fx.h"

/* `perf script` of `perf sched record`, as perf 6.1 prints it. */
static void test_perf_script(void **state)
{
	struct fx *f = *state;
	const struct ctxmon_event *ev = &f->l.ev;

	assert_int_equal(
		parse(f, "            perf  6203 [000]   517.441763:       "
			 "sched:sched_switch: prev_comm=perf prev_pid=6203 "
			 "prev_prio=120 prev_state=D ==> next_comm=migration/0 "
			 "next_pid=18 next_prio=0"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_SWITCH);
	assert_int_equal(ev->tid, 6203);
	assert_int_equal(ev->cpu, 0);
	assert_int_equal(ev->ts, 517441763000ull);
	assert_string_equal(f->l.comm, "perf");
	assert_int_equal(ev->sw.prev_state, CTXMON_STATE_D);
	assert_int_equal(ev->sw.kind, CTXMON_SW_VOLUNTARY);
	assert_int_equal(ev->sw.next_tid, 18);
	assert_string_equal(textparse__flavour(f->p), "perf script");
	/* a comm with spaces and dashes; pid/tid form */
	assert_int_equal(
		parse(f, " Web Content-x 4990/5000 [001]  5.000001: "
			 "sched:sched_waking: comm=a pid=7 prio=120 "
			 "target_cpu=001"),
		1);
	assert_int_equal(ev->type, CTXMON_EV_WAKING);
	assert_string_equal(f->l.comm, "Web Content-x");
	assert_int_equal(ev->tid, 5000);
	assert_int_equal(ev->tgid, 4990);
	/* events ctxmon does not model are skipped, not bad */
	assert_int_equal(parse(f, "perf  6203 [000]   517.441747: "
				  "sched:sched_stat_runtime: comm=perf "
				  "pid=6203 runtime=36173 [ns]"),
			 0);
	/* without the "system:" prefix a space-separated tid is no task */
	assert_int_equal(parse(f, "perf 6203 [000] 1.000000: sched_waking: "
				  "comm=a pid=7 prio=120 target_cpu=001"),
			 -EINVAL);
}

/* trace-cmd report's sched plugin: "comm:pid [prio] W ==> ..." */
static void test_plugin_states(void **state)
{
	static const struct {
		const char *st;
		uint32_t want;
		uint8_t kind;
	} cases[] = {
		{ "W", CTXMON_STATE_I, CTXMON_SW_VOLUNTARY },
		{ "S", CTXMON_STATE_S, CTXMON_SW_VOLUNTARY },
		{ "D|W", CTXMON_STATE_D | CTXMON_STATE_I, CTXMON_SW_VOLUNTARY },
		{ "x", CTXMON_STATE_P, CTXMON_SW_VOLUNTARY },
		{ "Z", CTXMON_STATE_X, CTXMON_SW_EXIT },
		{ "X", CTXMON_STATE_Z, CTXMON_SW_EXIT },
		{ "R", CTXMON_STATE_RUNNING, CTXMON_SW_INVOLUNTARY },
		{ "R+", CTXMON_STATE_RUNNING, CTXMON_SW_INVOLUNTARY },
	};
	struct fx *f = *state;
	char line[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(line, sizeof(line),
			 "rcu_preempt-15    [000]   567.470736: sched_switch: "
			 "        rcu_preempt:15 [120] %s ==> foo:28537 [130]",
			 cases[i].st);
		assert_int_equal(parse(f, line), 1);
		assert_int_equal(f->l.ev.sw.prev_state, cases[i].want);
		assert_int_equal(f->l.ev.sw.kind, cases[i].kind);
	}
	/* the key=value form keeps the kernel's letters: X is EXIT_DEAD */
	assert_int_equal(parse(f, "a-1 [000] 1.0: sched_switch: prev_comm=a "
				  "prev_pid=1 prev_prio=120 prev_state=I ==> "
				  "next_comm=b next_pid=2 next_prio=120"),
			 1);
	assert_int_equal(f->l.ev.sw.prev_state, CTXMON_STATE_I);
}

/* The fuzzer's finding: "bar<...>--42" was read as tid -42. */
static void test_dash_comm(void **state)
{
	struct fx *f = *state;
	struct ctxmon_event ev = { 0 };
	char buf[512];

	assert_int_equal(parse(f, "bar<...>--42 [001] 1234.567892: "
				  "sched_waking: comm=x pid=6 prio=120 "
				  "target_cpu=000"),
			 1);
	assert_int_equal(f->l.ev.tid, 42);
	assert_string_equal(f->l.comm, "bar<...>-");
	assert_int_equal(parse(f, "foo--7 [001] 1.000000: sched_waking: "
				  "comm=x pid=6 prio=120 target_cpu=000"),
			 1);
	assert_int_equal(f->l.ev.tid, 7);
	assert_string_equal(f->l.comm, "foo-");
	/* ctxmon's own loss lines keep their tid -1 */
	assert_int_equal(parse(f, "<...>--1 [001] 1.000030: lost_events: "
				  "count=3 start=1.000000 end=1.000030"),
			 1);
	assert_int_equal(f->l.ev.tid, -1);
	assert_null(f->l.comm);
	/* a negative tid always prints without a comm */
	ev.type = CTXMON_EV_LOST;
	ev.tid = -1;
	ev.cpu = 1;
	assert_true(textparse__format(&ev, 0, NULL, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "<...>--1 "));
}

static void test_sniff(void **state)
{
	static const uint8_t tracing[] = { 0x17, 0x08, 0x44, 't', 'r', 'a',
					   'c',	 'i',  'n',  'g', '6', 0 };
	static const char nul[] = "abc\0def";
	char blk[4096];

	(void)state;
	assert_int_equal(ctxmon_import_sniff("PERFILE2\x68", 9),
			 CTXMON_IMPORT_PERF_DATA);
	assert_int_equal(ctxmon_import_sniff(tracing, sizeof(tracing)),
			 CTXMON_IMPORT_TRACE_DAT);
	assert_int_equal(ctxmon_import_sniff(nul, sizeof(nul)),
			 CTXMON_IMPORT_BINARY);
	assert_int_equal(ctxmon_import_sniff("a-1 [000] 1.0: x: y\n", 20),
			 CTXMON_IMPORT_TEXT);
	/* one damaged byte in a text trace does not make it binary */
	assert_int_equal(ctxmon_import_sniff("a-1 [000] 1.0: x: y\n"
					     "a-1 [000] 1.1:\0x: y\n", 40),
			 CTXMON_IMPORT_TEXT);
	/* printable bytes with NULs every 16: a binary format */
	memset(blk, 'a', sizeof(blk));
	for (size_t i = 0; i < sizeof(blk); i += 16)
		blk[i] = 0;
	assert_int_equal(ctxmon_import_sniff(blk, sizeof(blk)),
			 CTXMON_IMPORT_BINARY);
	assert_int_equal(ctxmon_import_sniff("", 0), CTXMON_IMPORT_EMPTY);
}

/* A perf.data cut anywhere, or with a header pointing anywhere, is an
 * error with a message. */
static void test_perf_damaged(void **state)
{
	uint8_t buf[256];
	char err[256];
	int fd, ret;
	struct ctxmon_record *w;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, "PERFILE2", 8);
	buf[8] = 104; /* header size */
	buf[16] = 136; /* attr size */
	buf[24] = 104; /* attrs at 104, size 1 << 40 */
	buf[37] = 1;
	for (size_t len = 0; len <= sizeof(buf); len += 8) {
		fd = memfd_create("t", 0);
		w = ctxmon_record_fdopen(fd, NULL);
		assert_non_null(w);
		err[0] = '\0';
		ret = ctxmon_import_perf_mem(w, buf, len, NULL, NULL, err,
					     sizeof(err));
		assert_true(ret < 0);
		assert_true(err[0] != '\0');
		ctxmon_record_close(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_perf_script, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_plugin_states, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dash_comm, setup,
						teardown),
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_perf_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
