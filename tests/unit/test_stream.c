/*
 * test_stream.c - the per-CPU merge: events come out in time order, held
 * back past the watermark, with loss records in place and violations
 * counted only when ordering really broke.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "internal.h"

struct sink {
	uint64_t *ts;
	int *cpu;
	size_t n, cap;
	size_t stop_after;	/* 0: never stop */
};

static int collect(const struct ctxmon_event *ev, void *ctx)
{
	struct sink *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->ts = realloc(s->ts, s->cap * sizeof(*s->ts));
		s->cpu = realloc(s->cpu, s->cap * sizeof(*s->cpu));
		assert_non_null(s->ts);
		assert_non_null(s->cpu);
	}
	s->ts[s->n] = ev->ts;
	s->cpu[s->n] = ev->cpu;
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

static void sink_free(struct sink *s)
{
	free(s->ts);
	free(s->cpu);
}

static void push(struct stream *st, int cpu, uint64_t ts)
{
	struct ctxmon_event *ev = stream__slot(st, cpu);

	assert_non_null(ev);
	ev->ts = ts;
	ev->type = CTXMON_EV_SWITCH;
	ev->tid = (int32_t)ts;
	stream__commit(st, cpu);
}

static void assert_sorted(const struct sink *s)
{
	for (size_t i = 1; i < s->n; i++)
		assert_true(s->ts[i - 1] <= s->ts[i]);
}

static uint64_t violations(const struct stream *st)
{
	struct ctxmon_session_stats x;

	stream__stats(st, &x);
	return x.order_violations;
}

/* Four CPUs with interleaved, unevenly spaced timestamps and ties. */
static void test_interleaved(void **state)
{
	struct stream *st = stream__new(4);
	struct sink s = { 0 };
	uint64_t t[4] = { 0, 0, 0, 0 };
	size_t total = 0;

	(void)state;
	srand(42);
	for (int i = 0; i < 20000; i++) {
		int c = rand() % 4;

		t[c] += (uint64_t)(rand() % 50); /* ties included */
		push(st, c, t[c]);
		total++;
	}
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), total);
	assert_int_equal(s.n, total);
	assert_sorted(&s);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

/* Events past the watermark wait; a CPU read late still merges in order. */
static void test_watermark_holds_late_cpu(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { 0 };
	struct ctxmon_session_stats x;

	(void)state;
	for (uint64_t ts = 10; ts <= 100; ts += 10)
		push(st, 0, ts);
	push(st, 1, 15);
	push(st, 1, 35);
	/* Round 1: snapshot says nothing older than 40 can still come. */
	assert_int_equal(stream__deliver(st, 40, collect, &s), 6);
	assert_int_equal(s.ts[5], 40);
	stream__stats(st, &x);
	assert_int_equal(x.held, 6);
	assert_int_equal(x.delivered_to, 40);
	/* Round 2: CPU 1 had records written meanwhile, older than CPU 0's
	 * held ones but newer than the watermark. */
	push(st, 1, 45);
	push(st, 1, 75);
	assert_int_equal(stream__deliver(st, 80, collect, &s), 6);
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 2);
	assert_int_equal(s.n, 14);
	assert_sorted(&s);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

/* CPUs with nothing queued never block the others. */
static void test_empty_cpus(void **state)
{
	struct stream *st = stream__new(8);
	struct sink s = { 0 };

	(void)state;
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 0);
	push(st, 5, 3);
	push(st, 5, 9);
	push(st, 2, 4);
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 3);
	assert_int_equal(s.ts[0], 3);
	assert_int_equal(s.cpu[1], 2);
	assert_int_equal(s.ts[2], 9);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

/* Partial deliveries make a queue's ring wrap and grow while wrapped. */
static void test_wrapped_queue(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { 0 };
	uint64_t ts = 0, next_expected = 1;

	(void)state;
	for (int round = 0; round < 50; round++) {
		/* 3000 in, then all but the newest 500 out: the ring's
		 * head moves round it, and it grows with data wrapped. */
		for (int i = 0; i < 3000 + round * 100; i++)
			push(st, round % 2, ++ts);
		s.n = 0;
		assert_true(stream__deliver(st, ts - 500, collect, &s) > 0);
		for (size_t i = 0; i < s.n; i++)
			assert_int_equal(s.ts[i], next_expected++);
	}
	s.n = 0;
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 500);
	assert_int_equal(s.ts[s.n - 1], ts);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

static int find_lost(const struct ctxmon_event *ev, void *ctx)
{
	struct ctxmon_event *out = ctx;

	if (ev->type == CTXMON_EV_LOST)
		*out = *ev;
	return 0;
}

/* A loss becomes an event at its place in the CPU's stream, located. */
static void test_lost_record(void **state)
{
	struct stream *st = stream__new(2);
	struct ctxmon_event lost = { 0 };
	struct ctxmon_session_stats x;

	(void)state;
	push(st, 1, 100);
	push(st, 1, 200);
	stream__lost(st, 1, 37, 250);
	push(st, 1, 300);
	push(st, 0, 260);
	assert_int_equal(stream__deliver(st, UINT64_MAX, find_lost, &lost), 5);
	assert_int_equal(lost.type, CTXMON_EV_LOST);
	assert_int_equal(lost.cpu, 1);
	assert_int_equal(lost.lost.count, 37);
	assert_int_equal(lost.lost.start_ts, 200);
	assert_int_equal(lost.lost.end_ts, 250);
	stream__stats(st, &x);
	assert_int_equal(x.lost, 37);
	assert_int_equal(x.lost_per_cpu[1], 37);
	assert_int_equal(x.lost_per_cpu[0], 0);
	assert_int_equal(x.order_violations, 0);
	stream__free(st);
}

/* A record older than what was delivered still comes out, and counts. */
static void test_violation_counted(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { 0 };

	(void)state;
	push(st, 0, 100);
	assert_int_equal(stream__deliver(st, 150, collect, &s), 1);
	push(st, 1, 50);
	assert_int_equal(stream__deliver(st, 150, collect, &s), 1);
	assert_int_equal(violations(st), 1);
	/* On one CPU, a record older than its queued predecessor is sorted
	 * in before it; one older than what the CPU delivered is clamped. */
	push(st, 0, 400);
	push(st, 0, 300);
	push(st, 0, 90);
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 3);
	assert_int_equal(s.ts[2], 100);
	assert_int_equal(s.ts[3], 300);
	assert_int_equal(s.ts[4], 400);
	assert_int_equal(violations(st), 2);
	stream__free(st);
	sink_free(&s);
}

/* Records of one CPU out of order by a few places (a shared ring), over
 * many wraps of the CPU's queue, delivered in rounds that stop behind the
 * newest: all come out in time order, none clamped. */
static void test_sorted_in_over_wraps(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { 0 };
	unsigned seed = 12345;
	uint64_t newest = 0, n = 0;

	(void)state;
	for (uint64_t i = 0; i < 40000; i += 4) {
		/* four records of one CPU in a random order */
		uint64_t b[4] = { i, i + 1, i + 2, i + 3 };
		int c = (int)((i / 4) % 2);

		for (int k = 3; k > 0; k--) {
			int j;
			uint64_t t;

			seed = seed * 1103515245u + 12345u;
			j = (int)((seed >> 16) % (unsigned)(k + 1));
			t = b[k];
			b[k] = b[j];
			b[j] = t;
		}
		for (int k = 0; k < 4; k++) {
			push(st, c, 1000 + b[k] * 10);
			newest = 1000 + (i + 3) * 10;
			n++;
		}
		if (i % 1000 == 0)
			assert_true(stream__deliver(st, newest - 100, collect, &s) >= 0);
	}
	assert_true(stream__deliver(st, UINT64_MAX, collect, &s) >= 0);
	assert_int_equal(s.n, n);
	assert_sorted(&s);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

/* A callback's non-zero return stops delivery; the rest comes next time. */
static void test_callback_stops(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { .stop_after = 3 };

	(void)state;
	for (uint64_t i = 1; i <= 10; i++)
		push(st, (int)(i % 2), i);
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 7);
	assert_int_equal(s.n, 3);
	s.stop_after = 0;
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 7);
	assert_int_equal(s.n, 10);
	assert_sorted(&s);
	assert_int_equal(violations(st), 0);
	stream__free(st);
	sink_free(&s);
}

/* A CPU's first loss, before any event of it, starts at capture start. */
static void test_lost_before_any_event(void **state)
{
	struct stream *st = stream__new(2);
	struct ctxmon_event lost = { 0 };

	(void)state;
	stream__set_start(st, 1000);
	stream__lost(st, 0, 5, 1500);
	assert_int_equal(stream__deliver(st, UINT64_MAX, find_lost, &lost), 1);
	assert_int_equal(lost.lost.start_ts, 1000);
	assert_int_equal(lost.lost.end_ts, 1500);
	stream__free(st);
}

static void test_bad_cpu(void **state)
{
	struct stream *st = stream__new(2);

	(void)state;
	assert_null(stream__slot(st, 2));
	assert_null(stream__slot(st, -1));
	stream__lost(st, 9, 1, 1);
	assert_null(stream__new(0));
	stream__free(st);
	stream__free(NULL);
}

/* Held events are visited (only those not yet delivered, in each CPU's
 * order) and what the visitor fills in is what is delivered: the ftrace
 * backend tags a task's events with a tgid learnt a round later. */
static void tag_held(struct ctxmon_event *ev, void *ctx)
{
	int *n = ctx;

	ev->tgid = 4242 + *n;
	(*n)++;
}

static int tgids(const struct ctxmon_event *ev, void *ctx)
{
	struct sink *s = ctx;

	s->ts[s->n++] = (uint64_t)ev->tgid;
	return 0;
}

static void test_for_each_held(void **state)
{
	struct stream *st = stream__new(2);
	struct sink s = { 0 };
	int n = 0;

	(void)state;
	s.ts = calloc(16, sizeof(*s.ts));
	assert_non_null(s.ts);
	push(st, 0, 10);
	push(st, 0, 30);
	push(st, 1, 20);
	/* 10 delivered; 20 and 30 held */
	assert_int_equal(stream__deliver(st, 15, tgids, &s), 1);
	stream__for_each_held(st, tag_held, &n);
	assert_int_equal(n, 2);
	assert_int_equal(stream__deliver(st, UINT64_MAX, tgids, &s), 2);
	assert_int_equal(s.n, 3);
	/* the delivered one untouched (push leaves tgid as the slot had
	 * it), then CPU 1's 20 visited second, CPU 0's 30 first */
	assert_int_equal(s.ts[1], 4243);
	assert_int_equal(s.ts[2], 4242);
	n = 0;
	stream__for_each_held(st, tag_held, &n);
	assert_int_equal(n, 0);
	free(s.ts);
	stream__free(st);
}

/* Equal times on two CPUs come out in the order they were committed
 * (a merged source's own order: ftrace's text pipe prints microseconds,
 * so a wakeup and the switch-in it causes often share one), also when an
 * event of that time was sorted in behind a newer one of its CPU, and
 * when the queue grows mid-way. */
static void test_equal_times_keep_arrival(void **state)
{
	struct stream *st = stream__new(3);
	struct sink s = { 0 };
	/* cpu, ts, in commit order */
	static const int cpu[] = { 2, 0, 1, 0, 2, 1, 0 };
	static const uint64_t ts[] = { 100, 100, 100, 100, 200, 100, 150 };
	static const int want_cpu[] = { 2, 0, 1, 0, 1, 0, 2 };
	static const uint64_t want_ts[] = { 100, 100, 100, 100, 100, 150, 200 };

	(void)state;
	assert_non_null(st);
	/* one CPU's queue grows while holding equal times */
	for (int i = 0; i < 5000; i++)
		push(st, 1, 50);
	for (size_t i = 0; i < sizeof(cpu) / sizeof(cpu[0]); i++)
		push(st, cpu[i], ts[i]);
	assert_int_equal(stream__deliver(st, UINT64_MAX, collect, &s), 5007);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(s.cpu[i], 1);
	for (size_t i = 0; i < sizeof(want_cpu) / sizeof(want_cpu[0]); i++) {
		assert_int_equal(s.ts[5000 + i], want_ts[i]);
		assert_int_equal(s.cpu[5000 + i], want_cpu[i]);
	}
	sink_free(&s);
	stream__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_watermark_holds_late_cpu),
		cmocka_unit_test(test_empty_cpus),
		cmocka_unit_test(test_wrapped_queue),
		cmocka_unit_test(test_lost_record),
		cmocka_unit_test(test_violation_counted),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_lost_before_any_event),
		cmocka_unit_test(test_bad_cpu),
		cmocka_unit_test(test_for_each_held),
		cmocka_unit_test(test_sorted_in_over_wraps),
		cmocka_unit_test(test_equal_times_keep_arrival),
	};

	return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
