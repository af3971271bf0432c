/*
 * test_rec_decode.c - the fast paths of the recording decoder give what
 * the plain rules give: CRC-32C against a bit-by-bit reference at every
 * length and alignment; varints of every length, at the end of a column
 * and malformed, in hand-built chunks; and the reader's view of task names
 * (which skips the facts the codec predicted) against a task table fed
 * with every event, on random streams full of odd cases.
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/record.h>

#include "file/file.h"

/* ---- CRC-32C ------------------------------------------------------- */

static uint32_t crc_ref(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

static void test_crc32c(void **state)
{
	uint8_t buf[300];

	(void)state;
	/* The check value of the Castagnoli CRC. */
	assert_int_equal(crc32c__sum(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(crc32c__sum(0, "", 0), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t off = 0; off < 8; off++) {
		for (size_t n = 0; off + n <= 260; n++) {
			uint32_t want = crc_ref(buf + off, n);
			uint32_t part = crc32c__sum(0, buf + off, n / 3);

			assert_int_equal(crc32c__sum(0, buf + off, n), want);
			/* In two pieces, as a running sum. */
			assert_int_equal(crc32c__sum(part, buf + off + n / 3,
						     n - n / 3),
					 want);
		}
	}
}

/* ---- hand-built chunks --------------------------------------------- */

/* Events of type NONE: a type byte, a mask, a timestamp delta and a CPU,
 * everything else predicted.  @ts is the timestamp column as given. */
static void chunk_none(struct fbuf *out, size_t nrec, const uint8_t *ts,
		       size_t tslen)
{
	size_t lens[COL__N] = { 0 };

	lens[COL_TYPE] = lens[COL_MISS] = lens[COL_CPU] = nrec;
	lens[COL_TS] = tslen;
	out->len = 0;
	fbuf__put_uvar(out, nrec);
	fbuf__put_uvar(out, 0);
	fbuf__put_uvar(out, COL__N);
	for (int i = 0; i < COL__N; i++)
		fbuf__put_uvar(out, lens[i]);
	for (size_t i = 0; i < nrec; i++)
		fbuf__put_u8(out, CTXMON_EV_NONE);
	for (size_t i = 0; i < nrec; i++)
		fbuf__put_u8(out, 0);
	fbuf__put(out, ts, tslen);
	for (size_t i = 0; i < nrec; i++)
		fbuf__put_u8(out, 0);
	assert_false(out->oom);
}

/* Decode @body; the timestamps go to @ts (up to @max).  Returns the
 * number of records decoded, *ret the last codec__next() result. */
static size_t decode(const struct fbuf *body, uint64_t *ts, size_t max,
		     int *ret, const char **why)
{
	struct strtab *strs = strtab__new();
	struct codec *c = codec__new(false);
	struct ctxmon_event ev;
	uint8_t meta;
	size_t n = 0;

	assert_non_null(strs);
	assert_non_null(c);
	*why = NULL;
	*ret = codec__load(c, body->p, body->len, strs, why);
	if (*ret == 0) {
		while ((*ret = codec__next(c, &ev, &meta, why)) == 1) {
			assert_false(meta & CODEC_TASK);
			if (n < max)
				ts[n] = ev.ts;
			n++;
		}
	}
	codec__free(c);
	strtab__free(strs);
	return n;
}

static void put_delta(struct fbuf *ts, uint64_t d, uint64_t *want, size_t *n,
		      uint64_t *sum)
{
	/* Sums wrap like the decoder's. */
	*sum += d;
	want[(*n)++] = *sum;
	fbuf__put_uvar(ts, d);
}

/* Every varint length, with many bytes after it and as the column's last
 * value: the one-byte, two-byte, unchecked and checked paths. */
static void test_varint_lengths(void **state)
{
	struct fbuf ts = { 0 }, body = { 0 };
	uint64_t want[40], got[40], sum = 0;
	const char *why;
	size_t n = 0;
	int ret;

	(void)state;
	for (unsigned bits = 0; bits < 64; bits += 7)
		put_delta(&ts, bits ? (1ull << bits) - 1 : 0, want, &n, &sum);
	put_delta(&ts, UINT64_MAX, want, &n, &sum);
	/* Growing, so the longest values end the column. */
	for (unsigned bits = 0; bits < 64; bits += 7)
		put_delta(&ts, 1ull << bits, want, &n, &sum);
	chunk_none(&body, n, ts.p, ts.len);
	assert_int_equal(decode(&body, got, 40, &ret, &why), n);
	assert_int_equal(ret, 0);
	for (size_t i = 0; i < n; i++)
		assert_true(got[i] == want[i]);
	fbuf__free(&ts);
	fbuf__free(&body);
}

static void expect_ts_damage(const uint8_t *ts, size_t tslen, size_t nrec,
			     size_t good, const char *what)
{
	struct fbuf body = { 0 };
	uint64_t got[16];
	const char *why;
	int ret;

	chunk_none(&body, nrec, ts, tslen);
	assert_int_equal(decode(&body, got, 16, &ret, &why), good);
	assert_int_equal(ret, -EBADMSG);
	assert_non_null(why);
	assert_string_equal(why, what);
	fbuf__free(&body);
}

static void test_varint_damage(void **state)
{
	/* A value cut by the end of the column, after two good ones. */
	static const uint8_t cut1[] = { 5, 0x81, 0x01, 0x80 };
	static const uint8_t cut2[] = { 5, 0x81, 0x01, 0xff, 0xff };
	/* Eleven bytes: the tenth may only carry the top bit. */
	static const uint8_t ten[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0x02, 0x00 };
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x81, 0x00 };
	/* One value for two records. */
	static const uint8_t one[] = { 1 };
	/* The largest value: ten bytes, the last one 1. */
	static const uint8_t max[] = { 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x01 };
	static const char dmg[] = "damaged timestamp column";
	struct fbuf body = { 0 };
	uint64_t got[4];
	const char *why;
	int ret;

	(void)state;
	expect_ts_damage(cut1, sizeof(cut1), 3, 2, dmg);
	expect_ts_damage(cut2, sizeof(cut2), 3, 2, dmg);
	expect_ts_damage(ten, sizeof(ten), 2, 0, dmg);
	expect_ts_damage(eleven, sizeof(eleven), 2, 0, dmg);
	expect_ts_damage(one, sizeof(one), 2, 1, dmg);
	/* Two values for one record. */
	expect_ts_damage(cut1, 2, 1, 1, "data left over in a column");
	chunk_none(&body, 1, max, sizeof(max));
	assert_int_equal(decode(&body, got, 4, &ret, &why), 1);
	assert_int_equal(ret, 0);
	assert_true(got[0] == UINT64_MAX);
	chunk_none(&body, 0, NULL, 0);
	assert_int_equal(decode(&body, got, 4, &ret, &why), 0);
	assert_int_equal(ret, 0);
	fbuf__free(&body);
}

/* ---- the reader's view of tasks ------------------------------------ */

struct view {
	struct ctxmon_reader *r;
	struct tasktab *ref; /* fed with every record, as the rules say */
	struct strtab *strs;
	size_t events, checks;
};

static bool same_comm(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static void check_tid(struct view *v, int32_t tid)
{
	assert_true(same_comm(ctxmon_reader_comm(v->r, tid),
			      tasktab__comm(v->ref, tid)));
	assert_int_equal(ctxmon_reader_tgid(v->r, tid),
			 tasktab__tgid(v->ref, tid));
	v->checks++;
}

static int view_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct view *v = ctx;
	const char *s = comm ? strtab__intern(v->strs, comm, 255) : NULL;

	assert_int_equal(tasktab__set(v->ref, tid, tgid, s), 0);
	return 0;
}

/* Every tid the random streams use, before each event. */
static int view_event(const struct ctxmon_event *ev, void *ctx)
{
	struct view *v = ctx;

	for (int32_t tid = -1; tid < 8; tid++)
		check_tid(v, tid);
	check_tid(v, ev->tid);
	assert_int_equal(tasktab__apply(v->ref, ev), 0);
	v->events++;
	return 0;
}

static uint64_t rng;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static const char *const comms[] = { NULL,   "",	  "a",
				     "bash", "swapper/0", "Web Content" };

/* Few tids, tid 0 and -1 among them. */
static int32_t tid_any(void)
{
	return (int32_t)(rnd() % 9) - 1;
}

static int32_t tgid_any(int32_t tid)
{
	switch (rnd() % 4) {
	case 0:
		return tid;
	case 1:
		return -1;
	case 2:
		return 1;
	default:
		return tid_any();
	}
}

static const char *comm_any(void)
{
	return comms[rnd() % ARRAY_SIZE(comms)];
}

/* Tid 0 on several CPUs, one task as prev and next, NULL comms, unknown
 * tgids, CPUs out of range, names that change all the time. */
static void random_event(struct ctxmon_event *ev, uint64_t ts)
{
	static const uint16_t types[] = {
		CTXMON_EV_SWITCH,  CTXMON_EV_SWITCH, CTXMON_EV_SWITCH,
		CTXMON_EV_WAKING,  CTXMON_EV_WAKEUP, CTXMON_EV_WAKEUP_NEW,
		CTXMON_EV_FORK,	   CTXMON_EV_EXEC,   CTXMON_EV_EXIT,
		CTXMON_EV_MIGRATE,
	};

	memset(ev, 0, sizeof(*ev));
	ev->ts = ts;
	ev->type = types[rnd() % ARRAY_SIZE(types)];
	ev->cpu = rnd() % 16 == 0 ? -1 :
		  rnd() % 16 == 0 ? 5000 :
				    (int32_t)(rnd() % 3);
	ev->tid = tid_any();
	ev->tgid = tgid_any(ev->tid);
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		ev->sw.prev_tid = rnd() % 4 ? ev->tid : tid_any();
		ev->sw.prev_tgid = rnd() % 2 ? ev->tgid : tgid_any(ev->tid);
		ev->sw.prev_prio = 120;
		ev->sw.prev_comm = comm_any();
		ev->sw.next_tid = rnd() % 6 ? tid_any() : ev->sw.prev_tid;
		ev->sw.next_tgid = tgid_any(ev->sw.next_tid);
		ev->sw.next_prio = 120;
		ev->sw.next_comm = comm_any();
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		ev->wake.tid = tid_any();
		ev->wake.prio = 120;
		ev->wake.target_cpu = (int32_t)(rnd() % 3);
		ev->wake.comm = comm_any();
		break;
	case CTXMON_EV_FORK:
		ev->fork.parent_tid = ev->tid;
		ev->fork.child_tid = tid_any();
		ev->fork.child_tgid = tgid_any(ev->fork.child_tid);
		ev->fork.child_comm = comm_any();
		break;
	case CTXMON_EV_EXEC:
		ev->exec.tid = rnd() % 2 ? ev->tid : tid_any();
		ev->exec.old_tid = ev->exec.tid;
		ev->exec.comm = comm_any();
		break;
	case CTXMON_EV_EXIT:
		ev->exit.tid = rnd() % 2 ? ev->tid : tid_any();
		ev->exit.prio = 120;
		ev->exit.comm = comm_any();
		break;
	case CTXMON_EV_MIGRATE:
		ev->migrate.tid = tid_any();
		ev->migrate.prio = 120;
		ev->migrate.orig_cpu = 0;
		ev->migrate.dest_cpu = 1;
		break;
	}
}

/* Write a random stream in chunks of a few records (the prediction state
 * starts over in each, the task table goes on) and read it back. */
static void task_view_once(unsigned seed)
{
	struct ctxmon_record_opts o = { .sz = sizeof(o) };
	struct view v = { 0 };
	struct ctxmon_record *w;
	struct ctxmon_event ev;
	uint64_t ts = 1000;
	struct stat st;
	uint8_t *buf;
	size_t n = 0;
	int fd;

	rng = seed * 0x9e3779b97f4a7c15ull;
	o.chunk_events = 3 + seed * 7 % 60;
	fd = memfd_create("ctxmon-test", 0);
	assert_true(fd >= 0);
	w = ctxmon_record_fdopen(dup(fd), &o);
	assert_non_null(w);
	for (int i = 0; i < 600; i++) {
		if (rnd() % 40 == 0)
			assert_int_equal(ctxmon_record_add_task(w, tid_any(),
								tgid_any(3),
								comm_any()),
					 0);
		ts += rnd() % 5000;
		random_event(&ev, ts);
		assert_int_equal(ctxmon_record_write(w, &ev), 0);
		n++;
	}
	assert_int_equal(ctxmon_record_close(w), 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);

	v.r = ctxmon_reader_open_mem(buf, (size_t)st.st_size);
	v.ref = tasktab__new();
	v.strs = strtab__new();
	assert_non_null(v.r);
	assert_non_null(v.ref);
	assert_non_null(v.strs);
	ctxmon_reader_set_task_fn(v.r, view_task, &v);
	assert_int_equal(ctxmon_reader_read(v.r, view_event, &v), 0);
	assert_int_equal(v.events, n);
	for (int32_t tid = -1; tid < 8; tid++)
		check_tid(&v, tid);
	assert_true(v.checks > 10 * n);
	ctxmon_reader_close(v.r);
	tasktab__free(v.ref);
	strtab__free(v.strs);
	free(buf);
	close(fd);
}

static void test_task_view(void **state)
{
	(void)state;
	for (unsigned seed = 1; seed <= 40; seed++)
		task_view_once(seed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_varint_lengths),
		cmocka_unit_test(test_varint_damage),
		cmocka_unit_test(test_task_view),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
