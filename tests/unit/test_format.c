/*
 * test_format.c - tracepoint formats: fields are found by name wherever a
 * kernel puts them, and prev_state is decoded by the kernel's own table,
 * read from the print fmt, never by compiled-in bit values.
 *
 * Fixtures: tests/data/formats/6.18/<system>/<event> are the format files
 * of the 6.18 kernel this was developed on, copied verbatim; the variants
 * below are written by hand in the style of older kernels.  Paths are
 * relative to the repository root, where the tests run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"

#define FIXTURES "tests/data/formats/6.18"
#define FIXTURES_OLD "tests/data/formats/4.4"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static struct tp_format *fixture(const char *system, const char *name)
{
	char path[256];
	struct tp_format *f;
	char *text;

	snprintf(path, sizeof(path), FIXTURES "/%s/%s", system, name);
	text = slurp(path);
	f = tp_format__parse(system, text, strlen(text));
	free(text);
	assert_non_null(f);
	return f;
}

static struct tp_format *parse(const char *text)
{
	struct tp_format *f = tp_format__parse("sched", text, strlen(text));

	assert_non_null(f);
	return f;
}

static void expect_field(const struct tp_format *f, const char *name, int off,
			 int size, bool sign, bool dyn, bool array)
{
	struct tp_field fl;

	assert_int_equal(tp_format__field(f, name, &fl), 0);
	assert_int_equal(fl.offset, off);
	assert_int_equal(fl.size, size);
	assert_int_equal(fl.is_signed, sign);
	assert_int_equal(fl.is_dynamic, dyn);
	assert_int_equal(fl.is_array, array);
}

/* ---- hand-written formats ----------------------------------------- */

/*
 * sched_switch as a 4.4 kernel printed it (tests/data/formats/4.4, shared
 * with test_decode.c): prev_state before prev_prio's usual neighbour
 * moved, a different flag table (Z below X, and letters that no longer
 * exist), and TASK_STATE_MAX written as a plain number.
 */
static struct tp_format *old_switch(void)
{
	char *text = slurp(FIXTURES_OLD "/sched/sched_switch");
	struct tp_format *f = parse(text);

	free(text);
	return f;
}

/* A table with no "+" condition at all: the fallback must be used. */
static const char no_plus_switch[] =
	"name: sched_switch\n"
	"ID: 300\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:long prev_state;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_state=%s\", REC->prev_state ? "
	"__print_flags(REC->prev_state, \"|\", { 0x01, \"S\" }, "
	"{ 0x02, \"D\" }, { 0x40, \"I\" }) : \"R\"\n";

/* The "+" bit far from the table, behind a cast and arithmetic: only
 * evaluating the expression gets it right. */
static const char odd_plus_switch[] =
	"name: sched_switch\n"
	"ID: 301\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned int prev_state;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\n"
	"print fmt: \"prev_state=%s%s\", REC->prev_state & 3 ? "
	"__print_flags(REC->prev_state & 3, \"|\", { 1, \"S\" }, "
	"{ 2, \"D\" }) : \"R\", "
	"((unsigned long)REC->prev_state) & ((0x3 | 0x4) << (2 * 2)) ? "
	"\"+\" : \"\"\n";

/* ---- fields ------------------------------------------------------- */

static void test_fields_6_18(void **state)
{
	struct tp_format *f;
	struct tp_field fl;

	(void)state;
	f = fixture("sched", "sched_switch");
	assert_string_equal(tp_format__name(f), "sched_switch");
	assert_int_equal(tp_format__id(f), 372);
	expect_field(f, "common_type", 0, 2, false, false, false);
	expect_field(f, "common_pid", 4, 4, true, false, false);
	expect_field(f, "prev_comm", 8, 16, false, false, true);
	expect_field(f, "prev_pid", 24, 4, true, false, false);
	expect_field(f, "prev_state", 32, 8, true, false, false);
	expect_field(f, "next_comm", 40, 16, false, false, true);
	expect_field(f, "next_prio", 60, 4, true, false, false);
	assert_int_equal(tp_format__field(f, "prev_tgid", &fl), -ENOENT);
	tp_format__free(f);

	/* the same kernel writes comms both ways */
	f = fixture("sched", "sched_process_fork");
	assert_int_equal(tp_format__id(f), 366);
	expect_field(f, "parent_comm", 8, 4, false, true, false);
	expect_field(f, "child_comm", 16, 4, false, true, false);
	expect_field(f, "child_pid", 20, 4, true, false, false);
	tp_format__free(f);

	f = fixture("sched", "sched_migrate_task");
	expect_field(f, "comm", 8, 4, false, true, false);
	expect_field(f, "dest_cpu", 24, 4, true, false, false);
	tp_format__free(f);

	f = fixture("sched", "sched_process_exec");
	expect_field(f, "filename", 8, 4, false, true, false);
	expect_field(f, "old_pid", 16, 4, true, false, false);
	tp_format__free(f);

	f = fixture("raw_syscalls", "sys_enter");
	expect_field(f, "args", 16, 48, false, false, true);
	tp_format__free(f);
}

static void test_fields_by_name(void **state)
{
	struct tp_format *f = old_switch();

	(void)state;
	assert_int_equal(tp_format__id(f), 273);
	expect_field(f, "prev_state", 8, 8, true, false, false);
	expect_field(f, "prev_comm", 16, 16, true, false, true);
	expect_field(f, "prev_pid", 32, 4, true, false, false);
	tp_format__free(f);
}

static void test_parse_errors(void **state)
{
	static const char no_id[] =
		"name: sched_switch\nformat:\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";
	struct tp_format *f;

	(void)state;
	errno = 0;
	f = tp_format__parse("sched", "this is not a format", 20);
	assert_null(f);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(tp_format__parse("sched", no_id, strlen(no_id)));
	assert_int_equal(errno, EINVAL);
	/* a missing event is ENOENT, so callers can tell it from a bad one */
	errno = 0;
	assert_null(
		tp_format__load(FIXTURES "/nowhere", "sched", "sched_switch"));
	assert_int_equal(errno, ENOENT);
	tp_format__free(NULL);
}

/* ---- prev_state --------------------------------------------------- */

static uint32_t dec(const struct state_map *m, uint64_t raw, int *preempt)
{
	*preempt = -1;
	return state_map__decode(m, raw, preempt);
}

static void test_state_map_6_18(void **state)
{
	struct tp_format *f = fixture("sched", "sched_switch");
	struct state_map m;
	int p;

	(void)state;
	assert_int_equal(tp_format__state_map(f, "prev_state", &m), 0);
	/* the values printed in the fixture's table */
	assert_int_equal(m.n, 8);
	assert_int_equal(m.mask[0], 0x01);
	assert_int_equal(m.state[0], CTXMON_STATE_S);
	assert_int_equal(m.mask[4], 0x10);
	assert_int_equal(m.state[4], CTXMON_STATE_X);
	assert_int_equal(m.mask[7], 0x80);
	assert_int_equal(m.state[7], CTXMON_STATE_I);
	/* ((0x7f + 1) << 1): TASK_REPORT_MAX */
	assert_int_equal(m.preempt_mask, 0x100);

	assert_int_equal(dec(&m, 0, &p), CTXMON_STATE_RUNNING); /* R */
	assert_int_equal(p, 0);
	assert_int_equal(dec(&m, 0x100, &p), CTXMON_STATE_RUNNING); /* R+ */
	assert_int_equal(p, 1);
	assert_int_equal(dec(&m, 0x01, &p), CTXMON_STATE_S);
	assert_int_equal(p, 0);
	assert_int_equal(dec(&m, 0x02, &p), CTXMON_STATE_D);
	assert_int_equal(dec(&m, 0x04, &p), CTXMON_STATE_T);
	assert_int_equal(dec(&m, 0x08, &p), CTXMON_STATE_t);
	assert_int_equal(dec(&m, 0x10, &p), CTXMON_STATE_X);
	assert_int_equal(dec(&m, 0x20, &p), CTXMON_STATE_Z);
	assert_int_equal(dec(&m, 0x40, &p), CTXMON_STATE_P);
	assert_int_equal(dec(&m, 0x80, &p), CTXMON_STATE_I);
	assert_int_equal(p, 0);
	/* a bit the table does not name */
	assert_int_equal(dec(&m, 0x200, &p), CTXMON_STATE_OTHER);
	assert_int_equal(dec(&m, 0x202, &p),
			 CTXMON_STATE_D | CTXMON_STATE_OTHER);
	tp_format__free(f);
}

static void test_state_map_old_table(void **state)
{
	struct tp_format *f = old_switch();
	struct state_map m;
	int p;

	(void)state;
	assert_int_equal(tp_format__state_map(f, "prev_state", &m), 0);
	assert_int_equal(m.n, 11);
	assert_int_equal(m.preempt_mask, 2048);

	assert_int_equal(dec(&m, 0, &p), CTXMON_STATE_RUNNING);
	assert_int_equal(p, 0);
	assert_int_equal(dec(&m, 2048, &p), CTXMON_STATE_RUNNING);
	assert_int_equal(p, 1);
	assert_int_equal(dec(&m, 1, &p), CTXMON_STATE_S);
	assert_int_equal(dec(&m, 2, &p), CTXMON_STATE_D);
	/* on this kernel 16 is Z and 32 is X: the reverse of 6.18 */
	assert_int_equal(dec(&m, 16, &p), CTXMON_STATE_Z);
	assert_int_equal(dec(&m, 32, &p), CTXMON_STATE_X);
	/* TASK_DEAD, the old kernels' last switch of a dying task */
	assert_int_equal(dec(&m, 64, &p), CTXMON_STATE_X);
	/* letters ctxmon does not know */
	assert_int_equal(dec(&m, 128, &p), CTXMON_STATE_OTHER); /* K */
	assert_int_equal(dec(&m, 256, &p), CTXMON_STATE_OTHER); /* W */
	assert_int_equal(dec(&m, 1024, &p), CTXMON_STATE_OTHER); /* N */
	assert_int_equal(dec(&m, 512, &p), CTXMON_STATE_P);
	/* TASK_KILLABLE prints "D|K" */
	assert_int_equal(dec(&m, 130, &p), CTXMON_STATE_D | CTXMON_STATE_OTHER);
	assert_int_equal(p, 0);
	/* a kernel bit that means X on 6.18 means something else here */
	assert_int_equal(dec(&m, 0x100, &p), CTXMON_STATE_OTHER);
	tp_format__free(f);
}

static void test_state_map_preempt_expr(void **state)
{
	struct tp_format *f;
	struct state_map m;
	int p;

	(void)state;
	/* no "+" anywhere: one bit above the highest flag */
	f = parse(no_plus_switch);
	assert_int_equal(tp_format__state_map(f, "prev_state", &m), 0);
	assert_int_equal(m.n, 3);
	assert_int_equal(m.preempt_mask, 0x80);
	assert_int_equal(dec(&m, 0x40, &p), CTXMON_STATE_I);
	assert_int_equal(dec(&m, 0x80, &p), CTXMON_STATE_RUNNING);
	assert_int_equal(p, 1);
	tp_format__free(f);

	/* (0x3 | 0x4) << 4 = 0x70, not the fallback 0x4 */
	f = parse(odd_plus_switch);
	assert_int_equal(tp_format__state_map(f, "prev_state", &m), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.preempt_mask, 0x70);
	assert_int_equal(dec(&m, 0x10, &p), CTXMON_STATE_RUNNING);
	assert_int_equal(p, 1);
	assert_int_equal(dec(&m, 0x4, &p), CTXMON_STATE_OTHER);
	assert_int_equal(p, 0);
	tp_format__free(f);
}

static void test_state_map_missing(void **state)
{
	struct tp_format *f;
	struct state_map m;

	(void)state;
	/* sched_waking has no flag table, and no prev_state */
	f = fixture("sched", "sched_waking");
	assert_int_equal(tp_format__state_map(f, "prev_state", &m), -ENOENT);
	assert_int_equal(tp_format__state_map(f, "pid", &m), -ENOENT);
	tp_format__free(f);
}

/* ---- tracefs ------------------------------------------------------ */

static void test_tracefs_hint(void **state)
{
	char dir[] = "/tmp/ctxmon-tracefs-XXXXXX", sub[64], buf[64], err[256];

	(void)state;
	assert_non_null(mkdtemp(dir));
	err[0] = '\0';
	assert_int_equal(tracefs__find(dir, false, buf, sizeof(buf), err,
				       sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no events/"));
	snprintf(sub, sizeof(sub), "%s/events", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(tracefs__find(dir, false, buf, sizeof(buf), err,
				       sizeof(err)),
			 0);
	assert_string_equal(buf, dir);
	/* a buffer too small is an error, not a truncated path */
	assert_int_equal(tracefs__find(dir, false, buf, 8, err, sizeof(err)),
			 -ENAMETOOLONG);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_6_18),
		cmocka_unit_test(test_fields_by_name),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_state_map_6_18),
		cmocka_unit_test(test_state_map_old_table),
		cmocka_unit_test(test_state_map_preempt_expr),
		cmocka_unit_test(test_state_map_missing),
		cmocka_unit_test(test_tracefs_hint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
