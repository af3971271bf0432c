/*
 * test_ftrace.c - the parts of the ftrace backends that need no tracefs:
 * the ring-buffer sub-buffer walker on hand-built pages, the stats parser,
 * the loss bookkeeping against a real stream, the stale-instance rule on
 * a fake tracefs tree, the tid -> tgid map on a fake /proc, and the
 * trace_pipe line heads the text backend reads itself.
 *
 * Pages are laid out here from the kernel's documented format (header:
 * u64 time stamp, long commit; event header: 5-bit type_len, 27-bit time
 * delta), not from the walker's reading of it.  Every page is allocated at
 * its exact length, so a read past its end is an ASan report.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/ftrace.h"

/* events/header_page of 6.18 x86_64 */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define MISSED (1ull << 31)
#define STORED (1ull << 30)

/* ---- page building -------------------------------------------------- */

struct page {
	uint8_t b[4096];
	size_t len;	/* bytes of events after the 16-byte header */
};

static void pg_init(struct page *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->b, &ts, 8);
}

static void pg_put32(struct page *p, uint32_t v)
{
	assert_true(16 + p->len + 4 <= sizeof(p->b));
	memcpy(p->b + 16 + p->len, &v, 4);
	p->len += 4;
}

static uint32_t hdr(uint32_t type, uint32_t delta)
{
	return type | delta << 5;
}

/* A small data event: type_len = words, payload of 4 * words bytes. */
static void pg_small(struct page *p, uint32_t delta, uint32_t words,
		     uint8_t fill)
{
	pg_put32(p, hdr(words, delta));
	for (uint32_t i = 0; i < words; i++)
		pg_put32(p, 0x01010101u * fill);
}

/* A data event with its length in array[0] (large, or 8-byte aligned). */
static void pg_big(struct page *p, uint32_t delta, uint32_t bytes, uint8_t fill)
{
	pg_put32(p, hdr(0, delta));
	pg_put32(p, bytes + 4);
	for (uint32_t i = 0; i < bytes / 4; i++)
		pg_put32(p, 0x01010101u * fill);
}

static void pg_extend(struct page *p, uint64_t delta)
{
	pg_put32(p, hdr(30, (uint32_t)(delta & ((1u << 27) - 1))));
	pg_put32(p, (uint32_t)(delta >> 27));
}

static void pg_abs(struct page *p, uint64_t ts)
{
	pg_put32(p, hdr(31, (uint32_t)(ts & ((1u << 27) - 1))));
	pg_put32(p, (uint32_t)(ts >> 27));
}

/* A discarded event of @bytes after its 8-byte header. */
static void pg_discard(struct page *p, uint32_t delta, uint32_t bytes)
{
	pg_put32(p, hdr(29, delta ? delta : 1));
	pg_put32(p, bytes + 4);
	for (uint32_t i = 0; i < bytes / 4; i++)
		pg_put32(p, 0xdeadbeef);
}

/* The page as trace_pipe_raw gives it: @n bytes, a fresh allocation. */
static uint8_t *pg_out(struct page *p, uint64_t flags, size_t n)
{
	uint64_t commit = p->len | flags;
	uint8_t *buf;

	memcpy(p->b + 8, &commit, 8);
	buf = malloc(n);
	assert_non_null(buf);
	memcpy(buf, p->b, n);
	return buf;
}

static void layout(struct rb_layout *l)
{
	assert_int_equal(rb_layout__parse(header_page, l), 0);
	l->subbuf = 4096;
}

/* ---- layout and pages ------------------------------------------------ */

static void test_layout(void **state)
{
	struct rb_layout l;

	(void)state;
	assert_int_equal(rb_layout__parse(header_page, &l), 0);
	assert_int_equal(l.ts_off, 0);
	assert_int_equal(l.commit_off, 8);
	assert_int_equal(l.commit_size, 8);
	assert_int_equal(l.data_off, 16);
	/* a 32-bit kernel's local_t */
	assert_int_equal(rb_layout__parse(
				 "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
				 "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
				 "\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n",
				 &l),
			 0);
	assert_int_equal(l.commit_size, 4);
	assert_int_equal(l.data_off, 12);
	/* data overlapping the header, a field without offset */
	assert_int_equal(rb_layout__parse(
				 "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
				 "\tfield: char data;\toffset:8;\tsize:4088;\tsigned:0;\n",
				 &l),
			 -EINVAL);
	assert_int_equal(rb_layout__parse("\tfield: char data;\tsize:8;\n", &l),
			 -EINVAL);
}

static void test_page_walk(void **state)
{
	struct rb_layout l;
	struct page p;
	struct rb_page pg;
	const uint8_t *d;
	uint32_t len;
	uint64_t ts, t0 = 5000000000ull;
	uint8_t *buf;

	(void)state;
	layout(&l);
	pg_init(&p, t0);
	pg_small(&p, 10, 16, 0xa1);		/* t0 + 10, 64 bytes */
	pg_extend(&p, 3ull << 30);		/* a long gap */
	pg_small(&p, 0, 2, 0xa2);		/* t0 + 10 + 3 << 30 */
	pg_discard(&p, 77, 60);			/* no time of its own */
	pg_big(&p, 5, 200, 0xa3);		/* + 5 */
	pg_abs(&p, t0 + 123456789);		/* absolute */
	pg_small(&p, 1, 1, 0xa4);
	buf = pg_out(&p, 0, 16 + p.len);

	assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len), 0);
	assert_int_equal(pg.ts, t0);
	assert_false(pg.missed);

	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(ts, t0 + 10);
	assert_int_equal(len, 64);
	assert_int_equal(d[0], 0xa1);
	assert_int_equal(d[63], 0xa1);

	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(ts, t0 + 10 + (3ull << 30));
	assert_int_equal(len, 8);
	assert_int_equal(d[0], 0xa2);

	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(ts, t0 + 10 + (3ull << 30) + 5);
	assert_int_equal(len, 200);
	assert_int_equal(d[0], 0xa3);
	assert_int_equal(d[199], 0xa3);

	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(ts, t0 + 123456789 + 1);
	assert_int_equal(len, 4);
	assert_int_equal(d[0], 0xa4);

	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 0);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 0);
	free(buf);
}

/* A page read before it filled: the rest of the sub-buffer is zero, and
 * a null padding event ends the events early. */
static void test_page_partial_and_padding(void **state)
{
	struct rb_layout l;
	struct page p;
	struct rb_page pg;
	const uint8_t *d;
	uint32_t len;
	uint64_t ts;
	uint8_t *buf;

	(void)state;
	layout(&l);
	pg_init(&p, 100);
	pg_small(&p, 1, 4, 1);
	buf = pg_out(&p, 0, sizeof(p.b));
	assert_int_equal(rb_page__open(&pg, &l, buf, sizeof(p.b)), 0);
	assert_int_equal(pg.len, 20);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(ts, 101);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 0);
	free(buf);

	pg_init(&p, 100);
	pg_small(&p, 1, 4, 1);
	pg_put32(&p, hdr(29, 0)); /* end of data */
	pg_put32(&p, 0);
	pg_small(&p, 1, 4, 2);	 /* never reached */
	buf = pg_out(&p, 0, 16 + p.len);
	assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len), 0);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 0);
	free(buf);
}

static void test_page_missed(void **state)
{
	struct rb_layout l;
	struct page p;
	struct rb_page pg;
	uint64_t count = 4242;
	uint8_t *buf;

	(void)state;
	layout(&l);

	/* count stored after the events */
	pg_init(&p, 100);
	pg_small(&p, 1, 4, 1);
	memcpy(p.b + 16 + p.len, &count, 8);
	buf = pg_out(&p, MISSED | STORED, sizeof(p.b));
	assert_int_equal(rb_page__open(&pg, &l, buf, sizeof(p.b)), 0);
	assert_true(pg.missed);
	assert_true(pg.missed_known);
	assert_int_equal(pg.missed_count, 4242);
	assert_int_equal(pg.len, 20);
	free(buf);

	/* the kernel's int flag, sign-extended into the long commit */
	pg_init(&p, 100);
	pg_small(&p, 1, 4, 1);
	buf = pg_out(&p, 0xffffffff00000000ull | MISSED, sizeof(p.b));
	assert_int_equal(rb_page__open(&pg, &l, buf, sizeof(p.b)), 0);
	assert_true(pg.missed);
	assert_false(pg.missed_known);
	assert_int_equal(pg.len, 20);
	free(buf);

	/* "stored" but the page is too short to hold it: not read */
	pg_init(&p, 100);
	pg_small(&p, 1, 4, 1);
	buf = pg_out(&p, MISSED | STORED, 16 + p.len + 4);
	assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len + 4), 0);
	assert_true(pg.missed);
	assert_false(pg.missed_known);
	free(buf);
}

static void test_page_corrupt(void **state)
{
	struct rb_layout l;
	struct page p;
	struct rb_page pg;
	const uint8_t *d;
	uint32_t len;
	uint64_t ts;
	uint8_t *buf;

	(void)state;
	layout(&l);

	/* shorter than the header; commit longer than the read */
	pg_init(&p, 1);
	pg_small(&p, 1, 4, 1);
	buf = pg_out(&p, 0, 12);
	assert_int_equal(rb_page__open(&pg, &l, buf, 12), -EINVAL);
	free(buf);
	buf = pg_out(&p, 0, 16 + p.len - 1);
	assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len - 1), -EINVAL);
	free(buf);

	/* an event claiming more than the page holds, at every cut */
	for (uint32_t cut = 1; cut < 40; cut++) {
		pg_init(&p, 1);
		pg_small(&p, 1, 2, 1);
		pg_big(&p, 1, 32, 2);
		p.len -= cut > 36 ? 36 : cut; /* commit says less */
		buf = pg_out(&p, 0, 16 + p.len);
		assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len), 0);
		assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 1);
		assert_int_equal(rb_page__next(&pg, &d, &len, &ts), -EINVAL);
		assert_int_equal(rb_page__next(&pg, &d, &len, &ts), 0);
		free(buf);
	}

	/* array[0] below its own size */
	pg_init(&p, 1);
	pg_put32(&p, hdr(0, 1));
	pg_put32(&p, 2);
	buf = pg_out(&p, 0, 16 + p.len);
	assert_int_equal(rb_page__open(&pg, &l, buf, 16 + p.len), 0);
	assert_int_equal(rb_page__next(&pg, &d, &len, &ts), -EINVAL);
	free(buf);
}

/* ---- stats and loss -------------------------------------------------- */

static void test_stats_parse(void **state)
{
	static const char text[] = "entries: 76\n"
				   "overrun: 40260\n"
				   "commit overrun: 3\n"
				   "bytes: 5168\n"
				   "oldest event ts:  1406.611545\n"
				   "now ts:  1406.635821\n"
				   "dropped events: 17\n"
				   "read events: 107\n";
	struct ftrace_stats s;

	(void)state;
	assert_int_equal(ftrace_stats__parse(text, strlen(text), &s), 0);
	assert_int_equal(s.overrun, 40260);
	assert_int_equal(s.commit_overrun, 3);
	assert_int_equal(s.dropped, 17);
	assert_int_equal(ftrace_stats__parse("entries: 1\n", 11, &s), -EINVAL);
}

struct sink {
	struct ctxmon_event ev[64];
	int n;
};

static int collect(const struct ctxmon_event *ev, void *ctx)
{
	struct sink *s = ctx;

	assert_true(s->n < 64);
	s->ev[s->n++] = *ev;
	return 0;
}

static void push(struct stream *st, int cpu, uint64_t ts)
{
	struct ctxmon_event *ev = stream__slot(st, cpu);

	assert_non_null(ev);
	ev->ts = ts;
	ev->type = CTXMON_EV_WAKEUP;
	stream__commit(st, cpu);
}

/* A flagged page tells its count before the page's first event, the
 * window being the CPU's last event to that one; the counters add the
 * rest at the end; the total is the counters'. */
static void test_loss_flow(void **state)
{
	struct stream *st = stream__new(2);
	struct ctxmon_session_stats ss;
	struct ftrace_loss l;
	struct sink s = { 0 };

	(void)state;
	memset(&l, 0, sizeof(l));
	l.fd = -1;
	push(st, 1, 100);
	/* round 1: counters say 50 overwritten, the page says 40 */
	l.now.overrun = 50;
	l.overrun_told += 40;
	ftrace_loss__add(&l, 40);
	ftrace_loss__settle(&l, false);
	ftrace_loss__flush(&l, st, 1, 300);
	push(st, 1, 300);
	/* nothing pending: no second report */
	ftrace_loss__flush(&l, st, 1, 400);
	push(st, 1, 400);
	/* end: 60 overwritten in all, 2 dropped by nested writers */
	l.now.overrun = 60;
	l.now.commit_overrun = 2;
	ftrace_loss__settle(&l, true);
	assert_true(l.has_pending);
	assert_int_equal(l.pending, 22);
	ftrace_loss__flush(&l, st, 1, 500);
	assert_false(l.has_pending);

	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 5);
	assert_int_equal(s.ev[1].type, CTXMON_EV_LOST);
	assert_int_equal(s.ev[1].cpu, 1);
	assert_int_equal(s.ev[1].lost.count, 40);
	assert_int_equal(s.ev[1].lost.start_ts, 100);
	assert_int_equal(s.ev[1].lost.end_ts, 300);
	assert_int_equal(s.ev[2].ts, 300);
	assert_int_equal(s.ev[4].type, CTXMON_EV_LOST);
	assert_int_equal(s.ev[4].lost.count, 22);
	assert_int_equal(s.ev[4].lost.start_ts, 400);
	stream__stats(st, &ss);
	assert_int_equal(ss.lost, 62);
	assert_int_equal(ss.lost_per_cpu[1], 62);
	assert_int_equal(ss.order_violations, 0);
	stream__free(st);
}

/* ---- instances -------------------------------------------------------- */

static void test_instance_names(void **state)
{
	(void)state;
	assert_int_equal(ftrace_inst__name_pid("ctxmon-123"), 123);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-123-4"), 123);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-0"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-12a"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-12-"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-12-x"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon--1"), -1);
	assert_int_equal(ftrace_inst__name_pid("ctxmon-99999999999"), -1);
	assert_int_equal(ftrace_inst__name_pid("foo-123"), -1);
	assert_int_equal(ftrace_inst__name_pid("xctxmon-123"), -1);
}

static pid_t dead_pid(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (p == 0)
		_exit(0);
	assert_int_equal(waitpid(p, NULL, 0), p);
	return p;
}

static bool exists(const char *root, const char *name)
{
	char path[512];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/instances/%s", root, name);
	return stat(path, &sb) == 0;
}

static void test_clean_stale(void **state)
{
	char root[] = "/tmp/ctxmon-test-ftrace.XXXXXX", path[512];
	char dead[32], dead2[32], self[32], live[32];
	const char *names[] = { dead, dead2, self, live, "other",
				"ctxmon-x" };

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/instances", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(dead, sizeof(dead), "ctxmon-%d", (int)dead_pid());
	snprintf(dead2, sizeof(dead2), "ctxmon-%d-3", (int)dead_pid());
	snprintf(self, sizeof(self), "ctxmon-%d", (int)getpid());
	snprintf(live, sizeof(live), "ctxmon-%d-1", (int)getppid());
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/instances/%s", root, names[i]);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	assert_int_equal(ftrace_inst__clean_stale(root), 2);
	assert_false(exists(root, dead));
	assert_false(exists(root, dead2));
	for (size_t i = 2; i < ARRAY_SIZE(names); i++) {
		assert_true(exists(root, names[i]));
		snprintf(path, sizeof(path), "%s/instances/%s", root, names[i]);
		assert_int_equal(rmdir(path), 0);
	}
	snprintf(path, sizeof(path), "%s/instances", root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(root), 0);
	/* no instances/ at all: nothing to do */
	assert_int_equal(ftrace_inst__clean_stale("/nonexistent"), 0);
}

/* ---- tgid map ---------------------------------------------------------- */

static void fake_status(const char *root, int tid, int tgid)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, tid);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/%d/status", root, tid);
	f = fopen(path, "w");
	assert_non_null(f);
	/* a comm that says "Tgid:" must not fool the reader */
	fprintf(f, "Name:\tTgid: 5\nUmask:\t0022\nState:\tS (sleeping)\n"
		   "Tgid:\t%d\nNgid:\t0\nPid:\t%d\n", tgid, tid);
	fclose(f);
}

static void rm_status(const char *root, int tid)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%d/status", root, tid);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/%d", root, tid);
	assert_int_equal(rmdir(path), 0);
}

static void test_tgid_map(void **state)
{
	char root[] = "/tmp/ctxmon-test-proc.XXXXXX";
	struct tgid_map *m;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_status(root, 101, 100);
	fake_status(root, 100, 100);
	m = tgid_map__new(root);
	assert_non_null(m);

	assert_int_equal(tgid_map__get(m, 0), 0);
	assert_int_equal(tgid_map__get(m, -3), -1);
	assert_int_equal(tgid_map__lookups(m), 0);
	assert_int_equal(tgid_map__get(m, 101), 100);
	assert_int_equal(tgid_map__get(m, 101), 100);
	assert_int_equal(tgid_map__lookups(m), 1);
	/* gone: -1, and not looked up again */
	assert_int_equal(tgid_map__get(m, 555), -1);
	assert_int_equal(tgid_map__get(m, 555), -1);
	assert_int_equal(tgid_map__lookups(m), 2);

	/* a thread of 101's process, a new process, a reused tid */
	assert_int_equal(tgid_map__newtask(m, 101, 102, 0x3d0f00, 0), 0);
	assert_int_equal(tgid_map__get(m, 102), 100);
	assert_int_equal(tgid_map__newtask(m, 101, 200, 0x1200011, 0), 0);
	assert_int_equal(tgid_map__get(m, 200), 200);
	assert_int_equal(tgid_map__newtask(m, 200, 555, 0x10000, 0), 0);
	assert_int_equal(tgid_map__get(m, 555), 200);
	assert_int_equal(tgid_map__lookups(m), 2);
	/* CLONE_PARENT (0x8000): a process whose parent is its forker's;
	 * with CLONE_THREAD it is a thread, and a tid set from /proc or
	 * reused by a plain fork says nothing */
	assert_false(tgid_map__clone_parent(m, 200, 10));
	assert_int_equal(tgid_map__newtask(m, 200, 600, 0x8011, 0), 0);
	assert_true(tgid_map__clone_parent(m, 600, 10));
	assert_int_equal(tgid_map__get(m, 600), 600);
	assert_int_equal(tgid_map__newtask(m, 200, 601, 0x18000, 0), 0);
	assert_false(tgid_map__clone_parent(m, 601, 10));
	assert_int_equal(tgid_map__newtask(m, 200, 600, 0x11, 0), 0);
	assert_false(tgid_map__clone_parent(m, 600, 10));
	assert_false(tgid_map__clone_parent(m, 777, 10));

	/* growth keeps every entry */
	for (int32_t t = 1000; t < 5000; t++)
		assert_int_equal(tgid_map__set(m, t, t / 10), 0);
	for (int32_t t = 1000; t < 5000; t++)
		assert_int_equal(tgid_map__get(m, t), t / 10);
	assert_int_equal(tgid_map__get(m, 102), 100);
	assert_int_equal(tgid_map__newtask(m, 200, 602, 0x8011, 0), 0);
	for (int32_t t = 5000; t < 9000; t++)
		assert_int_equal(tgid_map__set(m, t, t / 10), 0);
	assert_true(tgid_map__clone_parent(m, 602, 10));
	assert_int_equal(tgid_map__lookups(m), 2);

	tgid_map__free(m);
	tgid_map__free(NULL);
	rm_status(root, 101);
	rm_status(root, 100);
	assert_int_equal(rmdir(root), 0);
}

/* The race the kernel matrix found: a thread's events decoded before its
 * task_newtask was read (its parent's CPU read first, the record written
 * after), the thread gone from /proc by then.  The map must not answer
 * for it until the task_newtask is learnt, then answer with the parent's
 * process for events from the record's time on, and a reused tid's
 * earlier events must not take the new task's process. */
static void test_tgid_map_learn_order(void **state)
{
	char root[] = "/tmp/ctxmon-test-proc.XXXXXX";
	struct tgid_map *m;

	(void)state;
	assert_non_null(mkdtemp(root));
	fake_status(root, 300, 300);
	m = tgid_map__new(root);
	assert_non_null(m);

	/* thread 301's switch at 1000, decoded first: /proc has no 301 */
	assert_int_equal(tgid_map__get_at(m, 301, 1000), -1);
	assert_int_equal(tgid_map__known(m, 301, 1000), -1);
	/* its task_newtask (at 900, CLONE_THREAD) learnt in the next round:
	 * a held event re-resolved from the map alone gets 300 */
	assert_int_equal(tgid_map__newtask(m, 300, 301, 0x3d0f00, 900), 0);
	assert_int_equal(tgid_map__known(m, 301, 1000), 300);
	assert_int_equal(tgid_map__known(m, 301, 900), 300);
	assert_int_equal(tgid_map__get_at(m, 301, 1000), 300);
	/* an event of that tid before 900 was an earlier task's */
	assert_int_equal(tgid_map__known(m, 301, 899), -1);
	assert_int_equal(tgid_map__get_at(m, 301, 899), -1);
	/* the tid reused by a new process at 5000 */
	assert_int_equal(tgid_map__newtask(m, 300, 301, 0x1200011, 5000), 0);
	assert_int_equal(tgid_map__known(m, 301, 4999), -1);
	assert_int_equal(tgid_map__known(m, 301, 5000), 301);
	/* a CLONE_THREAD child takes its parent's process as of its own
	 * time; a parent not in the map then is looked up in /proc */
	assert_int_equal(tgid_map__newtask(m, 301, 302, 0x10000, 6000), 0);
	assert_int_equal(tgid_map__known(m, 302, 6000), 301);
	assert_int_equal(tgid_map__known(m, 0, 1), 0);
	assert_int_equal(tgid_map__known(m, -1, 1), -1);
	/* time unknown (text lines): from the start */
	assert_int_equal(tgid_map__newtask(m, 300, 400, 0x10000, 0), 0);
	assert_int_equal(tgid_map__known(m, 400, 1), 300);
	/* /proc read twice: 301 (gone), 300 (the first thread's parent) */
	assert_int_equal(tgid_map__lookups(m), 2);

	tgid_map__free(m);
	rm_status(root, 300);
	assert_int_equal(rmdir(root), 0);
}

/* The kernel matrix's other race (Debian 6.1 under load): one round holds
 * a process's task_newtask on one CPU and, on a CPU read before it, the
 * task_newtask of a thread that process made.  Learnt CPU by CPU, the
 * thread's came first, its parent was looked up in /proc, already gone,
 * and the thread was left without a process (ftrace-yield: "threads 1").
 * Learnt in time order, the thread joins the process. */
static void test_tgid_map_learn_cpus(void **state)
{
	char root[] = "/tmp/ctxmon-test-proc.XXXXXX";
	struct tgid_newtask nt[] = {
		/* CPU 0: the thread, made by 300 at 2000 */
		{ .ts = 2000, .flags = 0x3d0f00, .parent = 300, .child = 301 },
		/* CPU 1: process 300, forked by 299 at 1000 */
		{ .ts = 1000, .flags = 0x1200011, .parent = 299, .child = 300 },
	};
	struct tgid_map *m;

	(void)state;
	assert_non_null(mkdtemp(root)); /* /proc knows neither */
	m = tgid_map__new(root);
	assert_non_null(m);
	tgid_map__learn(m, nt, 2);
	assert_int_equal(tgid_map__known(m, 300, 1500), 300);
	assert_int_equal(tgid_map__known(m, 301, 2500), 300);
	assert_int_equal(tgid_map__known(m, 301, 1999), -1);
	/* no /proc look-up was needed */
	assert_int_equal(tgid_map__lookups(m), 0);
	tgid_map__learn(m, NULL, 0);
	tgid_map__free(m);
	assert_int_equal(rmdir(root), 0);
}

/* ---- text heads ------------------------------------------------------ */

static void test_text_head(void **state)
{
	static const char l1[] =
		"            bash-22501   [001] .....  1563.564699: task_newtask: "
		"pid=22503 comm=bash clone_flags=1200000 oom_score_adj=0";
	static const char l2[] =
		"  my [0] -x-12   [000] d..2.  1.000001: sched_switch: prev_comm=a";
	static const char l3[] =
		" <...>-42    (  40) [003] 17.5: task_newtask: pid=43 "
		"comm=a clone_flags=5 clone_flags=3d0f00 oom_score_adj=0";
	static const char l4[] =
		" kworker/u8:2-9 (-----) [000] 2.000000: sched_wakeup: comm=x";
	const char *ev;
	size_t elen;
	int32_t tid, parent, child;
	uint64_t flags;
	int cpu;

	(void)state;
	assert_int_equal(ftrace_text__head(l1, strlen(l1), &tid, &cpu, &ev,
					   &elen),
			 0);
	assert_int_equal(tid, 22501);
	assert_int_equal(cpu, 1);
	assert_int_equal(elen, 12);
	assert_memory_equal(ev, "task_newtask", 12);
	assert_int_equal(ftrace_text__newtask(l1, strlen(l1), &parent, &child,
					      &flags),
			 1);
	assert_int_equal(parent, 22501);
	assert_int_equal(child, 22503);
	assert_int_equal(flags, 0x1200000);

	/* a comm with brackets and dashes; the irq-info column */
	assert_int_equal(ftrace_text__head(l2, strlen(l2), &tid, &cpu, &ev,
					   &elen),
			 0);
	assert_int_equal(tid, 12);
	assert_int_equal(cpu, 0);
	assert_memory_equal(ev, "sched_switch", 12);
	assert_int_equal(ftrace_text__newtask(l2, strlen(l2), &parent, &child,
					      &flags),
			 0);

	/* the tgid column; the last clone_flags= wins (a comm may hold one) */
	assert_int_equal(ftrace_text__newtask(l3, strlen(l3), &parent, &child,
					      &flags),
			 1);
	assert_int_equal(parent, 42);
	assert_int_equal(child, 43);
	assert_int_equal(flags, 0x3d0f00);
	assert_int_equal(ftrace_text__head(l4, strlen(l4), &tid, &cpu, &ev,
					   &elen),
			 0);
	assert_int_equal(tid, 9);

	/* not lines: no head, a malformed newtask, a cut line */
	assert_int_equal(ftrace_text__head("hello [1] x", 11, &tid, &cpu, &ev,
					   &elen),
			 -EINVAL);
	assert_int_equal(ftrace_text__head("CPU:1 [LOST 5 EVENTS]", 21, &tid,
					   &cpu, &ev, &elen),
			 -EINVAL);
	assert_int_equal(ftrace_text__newtask(
				 " a-1 [000] 1.0: task_newtask: pid=x", 35,
				 &parent, &child, &flags),
			 -EINVAL);
	/* cut anywhere: never a read past the cut (ASan), never a crash */
	for (size_t n = 1; n < strlen(l1); n++) {
		char *cut = malloc(n);
		int r;

		assert_non_null(cut);
		memcpy(cut, l1, n);
		r = ftrace_text__newtask(cut, n, &parent, &child, &flags);
		assert_true(r == 0 || r == 1 || r == -EINVAL);
		r = ftrace_text__head(cut, n, &tid, &cpu, &ev, &elen);
		assert_true(r == 0 || r == -EINVAL);
		free(cut);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_page_walk),
		cmocka_unit_test(test_page_partial_and_padding),
		cmocka_unit_test(test_page_missed),
		cmocka_unit_test(test_page_corrupt),
		cmocka_unit_test(test_stats_parse),
		cmocka_unit_test(test_loss_flow),
		cmocka_unit_test(test_instance_names),
		cmocka_unit_test(test_clean_stale),
		cmocka_unit_test(test_tgid_map),
		cmocka_unit_test(test_tgid_map_learn_order),
		cmocka_unit_test(test_tgid_map_learn_cpus),
		cmocka_unit_test(test_text_head),
	};

	return cmocka_run_group_tests_name("ftrace", tests, NULL, NULL);
}
