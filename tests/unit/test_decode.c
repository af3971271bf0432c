/*
 * test_decode.c - the decoder on hand-built raw records.
 *
 * Records are laid out here by hand from the offsets printed in the format
 * fixtures (tests/data/formats/6.18), so the test does not share the
 * decoder's reading of them.  Short and corrupt records must be refused
 * with -EINVAL at every length, never read past their end (ASan watches).
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

/* Ids and common_flags bits as this kernel prints / documents them. */
#define ID_SWITCH 372
#define ID_WAKING 375
#define ID_WAKEUP 374
#define ID_MIGRATE 371
#define ID_FORK 366
#define ID_EXEC 365
#define ID_EXIT 369
#define ID_SYS_EXIT 442
#define FLAG_HARDIRQ 0x08
#define FLAG_SOFTIRQ 0x10

static const char *const events[][2] = {
	{ "sched", "sched_switch" },	   { "sched", "sched_waking" },
	{ "sched", "sched_wakeup" },	   { "sched", "sched_wakeup_new" },
	{ "sched", "sched_migrate_task" }, { "sched", "sched_process_fork" },
	{ "sched", "sched_process_exec" }, { "sched", "sched_process_exit" },
	{ "irq", "irq_handler_entry" },	   { "irq", "irq_handler_exit" },
	{ "irq", "softirq_entry" },	   { "irq", "softirq_exit" },
	{ "raw_syscalls", "sys_enter" },   { "raw_syscalls", "sys_exit" },
};
#define NEVENTS (sizeof(events) / sizeof(events[0]))

struct fx {
	const char *systems[NEVENTS];
	char *texts[NEVENTS];
	struct strtab *strs;
	struct decoder *d;
	char err[256];
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	char path[256];

	assert_non_null(x);
	for (size_t i = 0; i < NEVENTS; i++) {
		snprintf(path, sizeof(path), FIXTURES "/%s/%s", events[i][0],
			 events[i][1]);
		x->systems[i] = events[i][0];
		x->texts[i] = slurp(path);
	}
	x->strs = strtab__new();
	assert_non_null(x->strs);
	x->d = decoder__new_from_texts(x->systems,
				       (const char *const *)x->texts, NEVENTS,
				       x->strs, x->err, sizeof(x->err));
	assert_non_null(x->d);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	decoder__free(x->d);
	strtab__free(x->strs);
	for (size_t i = 0; i < NEVENTS; i++)
		free(x->texts[i]);
	free(x);
	return 0;
}

/* ---- record building ---------------------------------------------- */

struct rec {
	uint8_t b[256];
	size_t len;
};

static void put(struct rec *r, size_t off, const void *v, size_t n)
{
	assert_true(off + n <= sizeof(r->b));
	memcpy(r->b + off, v, n);
	if (off + n > r->len)
		r->len = off + n;
}

static void put16(struct rec *r, size_t off, uint16_t v)
{
	put(r, off, &v, 2);
}

static void put32(struct rec *r, size_t off, uint32_t v)
{
	put(r, off, &v, 4);
}

static void put64(struct rec *r, size_t off, uint64_t v)
{
	put(r, off, &v, 8);
}

static void put_comm(struct rec *r, size_t off, const char *s)
{
	char c[16] = { 0 };

	strncpy(c, s, sizeof(c) - 1);
	put(r, off, c, sizeof(c));
}

/* __data_loc: the string at @at, its location word at @off */
static void put_loc(struct rec *r, size_t off, size_t at, const char *s)
{
	size_t n = strlen(s) + 1;

	put(r, at, s, n);
	put32(r, off, (uint32_t)(n << 16 | at));
}

static void common(struct rec *r, uint16_t id, uint8_t flags, int32_t pid)
{
	memset(r, 0, sizeof(*r));
	put16(r, 0, id);
	put(r, 2, &flags, 1);
	put32(r, 4, (uint32_t)pid);
}

/* 6.18 sched_switch: comm 8, pid 24, prio 28, state 32, next 40/56/60 */
static void switch_rec(struct rec *r, int32_t prev, int64_t state, int32_t next)
{
	common(r, ID_SWITCH, 0, prev);
	put_comm(r, 8, "bash");
	put32(r, 24, (uint32_t)prev);
	put32(r, 28, 120);
	put64(r, 32, (uint64_t)state);
	put_comm(r, 40, "swapper/1");
	put32(r, 56, (uint32_t)next);
	put32(r, 60, 139);
}

static void decode_ok(const struct decoder *d, const struct rec *r,
		      struct ctxmon_event *ev)
{
	memset(ev, 0x5a, sizeof(*ev));
	assert_int_equal(decoder__decode(d, r->b, r->len, ev), 0);
}

/* ---- tests -------------------------------------------------------- */

static void test_events_table(void **state)
{
	struct fx *x = *state;
	const struct decoder_event *ev;
	size_t n = decoder__events(x->d, &ev);
	bool seen_switch = false;

	assert_int_equal(n, NEVENTS);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(ev[i].name, "sched_switch")) {
			seen_switch = true;
			assert_int_equal(ev[i].id, ID_SWITCH);
			assert_true(ev[i].required);
			assert_int_equal(ev[i].group, CTXMON_EVENTS_SCHED);
		}
		if (!strcmp(ev[i].name, "sched_waking"))
			assert_false(ev[i].required);
		if (!strcmp(ev[i].name, "sys_exit")) {
			assert_int_equal(ev[i].id, ID_SYS_EXIT);
			assert_int_equal(ev[i].group, CTXMON_EVENTS_SYSCALL);
		}
	}
	assert_true(seen_switch);
}

static void test_switch(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r;

	switch_rec(&r, 1234, 0x01, 0);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_SWITCH);
	assert_int_equal(ev.tid, 1234);
	assert_int_equal(ev.flags, 0);
	assert_int_equal(ev.sw.prev_tid, 1234);
	assert_int_equal(ev.sw.prev_prio, 120);
	assert_int_equal(ev.sw.next_tid, 0);
	assert_int_equal(ev.sw.next_prio, 139);
	assert_int_equal(ev.sw.prev_tgid, -1);
	assert_int_equal(ev.sw.next_tgid, -1);
	assert_string_equal(ev.sw.prev_comm, "bash");
	assert_string_equal(ev.sw.next_comm, "swapper/1");
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_S);
	assert_int_equal(ev.sw.preempt, 0);
	assert_int_equal(ev.sw.kind, CTXMON_SW_VOLUNTARY);

	/* comms are interned: the same text, the same pointer */
	{
		const char *p = ev.sw.prev_comm;

		decode_ok(x->d, &r, &ev);
		assert_ptr_equal(ev.sw.prev_comm, p);
	}

	switch_rec(&r, 7, 0x02, 8); /* D */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_D);
	assert_int_equal(ev.sw.kind, CTXMON_SW_VOLUNTARY);

	switch_rec(&r, 7, 0, 8); /* R: yield, cond_resched */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_RUNNING);
	assert_int_equal(ev.sw.preempt, 0);
	assert_int_equal(ev.sw.kind, CTXMON_SW_INVOLUNTARY);

	switch_rec(&r, 7, 0x100, 8); /* R+ */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_RUNNING);
	assert_int_equal(ev.sw.preempt, 1);
	assert_int_equal(ev.sw.kind, CTXMON_SW_INVOLUNTARY);

	switch_rec(&r, 7, 0x10, 8); /* X */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_X);
	assert_int_equal(ev.sw.kind, CTXMON_SW_EXIT);

	switch_rec(&r, 7, 0x20, 8); /* Z */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_Z);
	assert_int_equal(ev.sw.kind, CTXMON_SW_EXIT);
}

static void test_waking_flags(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r;

	/* 6.18 sched_waking: comm 8, pid 24, prio 28, target_cpu 32 */
	common(&r, ID_WAKING, FLAG_HARDIRQ, 0);
	put_comm(&r, 8, "kworker/0:1");
	put32(&r, 24, 42);
	put32(&r, 28, 120);
	put32(&r, 32, 1);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_WAKING);
	assert_int_equal(ev.tid, 0);
	assert_int_equal(ev.wake.tid, 42);
	assert_int_equal(ev.wake.prio, 120);
	assert_int_equal(ev.wake.target_cpu, 1);
	assert_string_equal(ev.wake.comm, "kworker/0:1");
	assert_int_equal(ev.flags, CTXMON_EVF_IN_IRQ);

	put(&r, 2, &(uint8_t){ FLAG_SOFTIRQ | 0x01 }, 1); /* + irqs off */
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.flags, CTXMON_EVF_IN_SOFTIRQ);

	/* same layout, other id: the type follows common_type */
	put16(&r, 0, ID_WAKEUP);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_WAKEUP);
	assert_int_equal(ev.wake.tid, 42);
}

static void test_fork_migrate_dynamic(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r;

	/* 6.18 fork: parent_comm loc 8, parent_pid 12, child_comm loc 16,
	 * child_pid 20, strings after the fixed part */
	common(&r, ID_FORK, 0, 500);
	put_loc(&r, 8, 24, "make");
	put32(&r, 12, 500);
	put_loc(&r, 16, 29, "make-child");
	put32(&r, 20, 501);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_FORK);
	assert_int_equal(ev.tid, 500);
	assert_int_equal(ev.fork.parent_tid, 500);
	assert_int_equal(ev.fork.child_tid, 501);
	assert_int_equal(ev.fork.child_tgid, -1);
	assert_string_equal(ev.fork.child_comm, "make-child");

	/* migrate: comm loc 8, pid 12, prio 16, orig 20, dest 24 */
	common(&r, ID_MIGRATE, 0, 0);
	put_loc(&r, 8, 28, "stress");
	put32(&r, 12, 77);
	put32(&r, 16, 120);
	put32(&r, 20, 0);
	put32(&r, 24, 1);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_MIGRATE);
	assert_int_equal(ev.migrate.tid, 77);
	assert_int_equal(ev.migrate.orig_cpu, 0);
	assert_int_equal(ev.migrate.dest_cpu, 1);
}

static void exec_rec(struct rec *r, const char *file)
{
	/* filename loc 8, pid 12, old_pid 16, string at 20 */
	common(r, ID_EXEC, 0, 600);
	put_loc(r, 8, 20, file);
	put32(r, 12, 600);
	put32(r, 16, 601);
}

static void test_exec_comm(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r;

	exec_rec(&r, "/usr/bin/ls");
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_EXEC);
	assert_int_equal(ev.exec.tid, 600);
	assert_int_equal(ev.exec.old_tid, 601);
	assert_string_equal(ev.exec.comm, "ls");

	/* TASK_COMM_LEN - 1 characters, as the kernel keeps */
	exec_rec(&r, "/opt/x/a_very_long_program_name");
	decode_ok(x->d, &r, &ev);
	assert_string_equal(ev.exec.comm, "a_very_long_pro");
	exec_rec(&r, "/bin/sixteen_chars_ab");
	decode_ok(x->d, &r, &ev);
	assert_string_equal(ev.exec.comm, "sixteen_chars_a");
	exec_rec(&r, "/bin/fifteen_chars_a");
	decode_ok(x->d, &r, &ev);
	assert_string_equal(ev.exec.comm, "fifteen_chars_a");

	exec_rec(&r, "relative");
	decode_ok(x->d, &r, &ev);
	assert_string_equal(ev.exec.comm, "relative");
}

static void test_exit_sys(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r;

	/* exit: comm 8, pid 24, prio 28, group_dead 32 (bool) */
	common(&r, ID_EXIT, 0, 900);
	put_comm(&r, 8, "worker");
	put32(&r, 24, 900);
	put32(&r, 28, 120);
	put(&r, 32, &(uint8_t){ 1 }, 1);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_EXIT);
	assert_int_equal(ev.exit.tid, 900);
	assert_int_equal(ev.exit.group_dead, 1);
	assert_string_equal(ev.exit.comm, "worker");

	/* sys_exit: id 8, ret 16, both signed longs */
	common(&r, ID_SYS_EXIT, 0, 900);
	put64(&r, 8, 0);
	put64(&r, 16, (uint64_t)(int64_t)-11);
	decode_ok(x->d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_SYS_EXIT);
	assert_int_equal(ev.sys.id, 0);
	assert_true(ev.sys.ret == -11);
}

static void test_truncated(void **state)
{
	struct fx *x = *state;
	struct ctxmon_event ev;
	struct rec r, recs[4];
	uint8_t *copy;

	switch_rec(&recs[0], 5, 1, 6);
	exec_rec(&recs[1], "/bin/sh");
	common(&recs[2], ID_FORK, 0, 1);
	put_loc(&recs[2], 8, 24, "a");
	put32(&recs[2], 12, 1);
	put_loc(&recs[2], 16, 26, "b");
	put32(&recs[2], 20, 2);
	common(&recs[3], ID_SYS_EXIT, 0, 1);
	put64(&recs[3], 8, 1);
	put64(&recs[3], 16, 2);

	/* every cut is refused, and nothing past the cut is read: each
	 * attempt gets an exactly sized heap copy for ASan to guard */
	for (int k = 0; k < 4; k++) {
		for (size_t len = 0; len < recs[k].len; len++) {
			copy = malloc(len ? len : 1);
			assert_non_null(copy);
			memcpy(copy, recs[k].b, len);
			assert_int_equal(decoder__decode(x->d, copy, len, &ev),
					 -EINVAL);
			free(copy);
		}
		copy = malloc(recs[k].len);
		memcpy(copy, recs[k].b, recs[k].len);
		assert_int_equal(decoder__decode(x->d, copy, recs[k].len, &ev),
				 0);
		free(copy);
	}

	/* a __data_loc pointing outside the record */
	exec_rec(&r, "/bin/sh");
	put32(&r, 8, (uint32_t)(8 << 16 | 200));
	assert_int_equal(decoder__decode(x->d, r.b, r.len, &ev), -EINVAL);
	/* or claiming more bytes than there are */
	put32(&r, 8, (uint32_t)(0xffffu << 16 | 20));
	assert_int_equal(decoder__decode(x->d, r.b, r.len, &ev), -EINVAL);

	/* an id that is not ours */
	switch_rec(&r, 1, 1, 2);
	put16(&r, 0, 9999);
	assert_int_equal(decoder__decode(x->d, r.b, r.len, &ev), -ENOENT);
	put16(&r, 0, 0);
	assert_int_equal(decoder__decode(x->d, r.b, r.len, &ev), -ENOENT);
}

static void test_variant_layout(void **state)
{
	struct fx *x = *state;
	const char *texts[NEVENTS];
	struct decoder *d;
	struct ctxmon_event ev;
	struct rec r;
	char err[256];
	char *old;

	/* the old sched_switch with the other 6.18 events */
	for (size_t i = 0; i < NEVENTS; i++)
		texts[i] = x->texts[i];
	/* sched_switch laid out as on a 4.4 kernel, with its flag table */
	old = slurp(FIXTURES_OLD "/sched/sched_switch");
	texts[0] = old;
	d = decoder__new_from_texts(x->systems, texts, NEVENTS, x->strs, err,
				    sizeof(err));
	assert_non_null(d);

	common(&r, 273, 0, 55);
	put64(&r, 8, 16); /* Z on this kernel */
	put_comm(&r, 16, "old");
	put32(&r, 32, 55);
	put32(&r, 36, 110);
	put_comm(&r, 40, "next");
	put32(&r, 56, 56);
	put32(&r, 60, 100);
	decode_ok(d, &r, &ev);
	assert_int_equal(ev.type, CTXMON_EV_SWITCH);
	assert_int_equal(ev.sw.prev_tid, 55);
	assert_int_equal(ev.sw.prev_prio, 110);
	assert_int_equal(ev.sw.next_tid, 56);
	assert_string_equal(ev.sw.prev_comm, "old");
	assert_string_equal(ev.sw.next_comm, "next");
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_Z);
	assert_int_equal(ev.sw.kind, CTXMON_SW_EXIT);

	put64(&r, 8, 2048); /* R+ */
	decode_ok(d, &r, &ev);
	assert_int_equal(ev.sw.preempt, 1);
	assert_int_equal(ev.sw.kind, CTXMON_SW_INVOLUNTARY);

	put64(&r, 8, 256); /* W: unknown, but asleep */
	decode_ok(d, &r, &ev);
	assert_int_equal(ev.sw.prev_state, CTXMON_STATE_OTHER);
	assert_int_equal(ev.sw.kind, CTXMON_SW_VOLUNTARY);

	/* a 6.18 record no longer decodes under this id */
	switch_rec(&r, 1, 1, 2);
	assert_int_equal(decoder__decode(d, r.b, r.len, &ev), -ENOENT);
	decoder__free(d);
	free(old);
}

static void test_formats_roundtrip(void **state)
{
	struct fx *x = *state;
	const char *const *sys, *const *texts;
	const struct decoder_event *a, *b;
	struct decoder *d;
	size_t n;

	n = decoder__formats(x->d, &sys, &texts);
	assert_int_equal(n, NEVENTS);
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < NEVENTS; k++)
			if (!strcmp(texts[i], x->texts[k]))
				break;
		assert_true(k < NEVENTS);
		assert_string_equal(sys[i], events[k][0]);
	}
	d = decoder__new_from_texts(sys, texts, n, x->strs, NULL, 0);
	assert_non_null(d);
	assert_int_equal(decoder__events(d, &a), decoder__events(x->d, &b));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i].id, b[i].id);
	decoder__free(d);
	decoder__free(NULL);
}

static void test_bad_texts(void **state)
{
	static const char no_state[] =
		"name: sched_switch\nID: 5\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		"\tfield:pid_t prev_pid;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\nprint fmt: \"x\"\n";
	struct fx *x = *state;
	const char *texts[NEVENTS];
	char err[256] = "";

	for (size_t i = 0; i < NEVENTS; i++)
		texts[i] = x->texts[i];
	texts[0] = no_state;
	errno = 0;
	assert_null(decoder__new_from_texts(x->systems, texts, NEVENTS, x->strs,
					    err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "tracepoint sched:sched_switch has no field "
				 "prev_comm");

	/* a group present without its required switch */
	errno = 0;
	assert_null(decoder__new_from_texts(x->systems + 1, texts + 1, 7,
					    x->strs, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	assert_string_equal(err,
			    "this kernel has no tracepoint sched:sched_switch");
}

/* decoder__new on a tracefs-like tree made from the fixtures */
static void make_tree(const char *root, const struct fx *x, const char *skip)
{
	char path[512];

	for (size_t i = 0; i < NEVENTS; i++) {
		FILE *f;

		if (skip && !strcmp(events[i][1], skip))
			continue;
		snprintf(path, sizeof(path), "%s/events", root);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/events/%s", root,
			 events[i][0]);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/events/%s/%s", root,
			 events[i][0], events[i][1]);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/events/%s/%s/format", root,
			 events[i][0], events[i][1]);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(x->texts[i], f);
		fclose(f);
	}
}

static void rm_tree(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void new_root(char root[64])
{
	strcpy(root, "/tmp/ctxmon-decode-XXXXXX");
	assert_non_null(mkdtemp(root));
}

static void test_new_from_tracefs(void **state)
{
	struct fx *x = *state;
	const struct decoder_event *ev;
	struct decoder *d;
	char root[64], err[256] = "";

	new_root(root);
	make_tree(root, x, NULL);
	d = decoder__new(root, CTXMON_EVENTS_SCHED, x->strs, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(decoder__events(d, &ev), 8);
	decoder__free(d);
	d = decoder__new(root, CTXMON_EVENTS_SCHED | CTXMON_EVENTS_IRQ, x->strs,
			 err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(decoder__events(d, &ev), 12);
	decoder__free(d);
	rm_tree(root);

	/* sched_waking is optional (kernels before 4.3) */
	new_root(root);
	make_tree(root, x, "sched_waking");
	d = decoder__new(root, 0, x->strs, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(decoder__events(d, &ev), 7);
	decoder__free(d);
	rm_tree(root);

	/* sched_process_exec is not */
	new_root(root);
	make_tree(root, x, "sched_process_exec");
	errno = 0;
	assert_null(decoder__new(root, 0, x->strs, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	assert_string_equal(
		err, "this kernel has no tracepoint sched:sched_process_exec");
	rm_tree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_table),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_waking_flags),
		cmocka_unit_test(test_fork_migrate_dynamic),
		cmocka_unit_test(test_exec_comm),
		cmocka_unit_test(test_exit_sys),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_variant_layout),
		cmocka_unit_test(test_formats_roundtrip),
		cmocka_unit_test(test_bad_texts),
		cmocka_unit_test(test_new_from_tracefs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
