/*
 * test_export.c - unit tests of the exporters' building blocks: the
 * protobuf writer (src/output/pb.c) against encodings worked out by hand
 * from the protobuf wire format, and the timeline (src/output/timeline.c)
 * against the account: on generated event streams, every thread's
 * intervals must add up to the account's run, wait and sleep time, its
 * wakeup rows to its latency count and maximum, and its CPU rows to its
 * switch-ins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>

#include "output/pb.h"
#include "output/timeline.h"

/* ---- pb -------------------------------------------------------------- */

static void test_pb(void **state)
{
	struct pb b = { 0 };
	size_t m;

	(void)state;
	/* field 1, varint 150: the protobuf documentation's own example */
	pb__u(&b, 1, 150);
	assert_int_equal(b.buf.len, 3);
	assert_memory_equal(b.buf.p, "\x08\x96\x01", 3);
	pb__reset(&b);
	/* int32 -1 is ten bytes, sign extended */
	pb__i(&b, 2, -1);
	assert_int_equal(b.buf.len, 11);
	assert_int_equal(b.buf.p[0], 0x10);
	assert_int_equal(b.buf.p[10], 0x01);
	pb__reset(&b);
	/* string "testing" in field 2 */
	pb__str(&b, 2, "testing");
	assert_memory_equal(b.buf.p, "\x12\x07testing", 9);
	pb__reset(&b);
	/* nested: field 3 { field 1: 150 }, length in 4 redundant bytes */
	m = pb__begin(&b, 3);
	pb__u(&b, 1, 150);
	pb__end(&b, m);
	assert_int_equal(b.buf.len, 1 + 4 + 3);
	assert_memory_equal(b.buf.p, "\x1a\x83\x80\x80\x00\x08\x96\x01", 8);
	pb__reset(&b);
	/* fixed64 in field 47: tag (47 << 3 | 1) = 377 = 0xf9 0x02 */
	pb__fixed64(&b, 47, 0x0102030405060708ull);
	assert_memory_equal(b.buf.p, "\xf9\x02\x08\x07\x06\x05\x04\x03\x02\x01",
			    10);
	pb__free(&b);
	pb__free(NULL);
}

/* ---- timeline vs account --------------------------------------------- */

#define NT 12
#define MAXU 4096

struct sums {
	uint64_t run[MAXU], wait[MAXU], sleep[MAXU];
	uint64_t lat_n[MAXU], lat_max[MAXU], sched[MAXU];
};

static void on_span(void *ctx, const struct tl_thread *t,
		    const struct tl_span *s)
{
	struct sums *m = ctx;

	assert_true(t->utid < MAXU);
	if (!strcmp(s->state, "Running"))
		m->run[t->utid] += s->dur;
	else if (!strcmp(s->state, "R") || !strcmp(s->state, "R+"))
		m->wait[t->utid] += s->dur;
	else
		m->sleep[t->utid] += s->dur;
	if (s->flow && !strcmp(s->state, "R") && s->ran) {
		m->lat_n[t->utid]++;
		if (s->dur > m->lat_max[t->utid])
			m->lat_max[t->utid] = s->dur;
	}
}

static void on_sched(void *ctx, int32_t cpu, const struct tl_thread *t,
		     uint64_t ts, uint64_t dur, const char *end, int32_t prio)
{
	struct sums *m = ctx;

	(void)cpu, (void)ts, (void)dur, (void)end, (void)prio;
	if (t)
		m->sched[t->utid]++;
}

static uint32_t rnd(uint64_t *s, uint32_t n)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)((*s >> 33) % n);
}

static const char *const comms[NT + 1] = { "swapper", "a", "b", "c", "d",
					    "e", "f", "g", "h", "i", "j", "k",
					    "l" };

/* A plausible stream: per CPU a current task; tasks run, block, get
 * woken (waking + wakeup, sometimes early, sometimes only one of the two),
 * get preempted, yield, fork and exit, now and then leave a CPU unseen;
 * a few events are plain wrong. */
static void run_stream(uint64_t seed, int ncpu, int nev)
{
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct sums *m = calloc(1, sizeof(*m));
	struct tl_ops ops = { .span = on_span, .sched = on_sched, .ctx = m };
	struct ctxmon_account *a = ctxmon_account_new(&ao);
	struct timeline *tl = timeline__new(&ops);
	int cur[4] = { 0 }, state[NT + 1] = { 0 }; /* 0 runnable 1 running 2 asleep */
	uint64_t ts = 1000;
	struct ctxmon_stats *rows;
	const struct tl_thread *th;
	size_t n, nth;

	assert_non_null(m);
	assert_non_null(a);
	assert_non_null(tl);
	for (int i = 0; i < nev; i++) {
		struct ctxmon_event e;
		int c = (int)rnd(&seed, (uint32_t)ncpu), k = (int)rnd(&seed, 100);
		int t = 1 + (int)rnd(&seed, NT);

		memset(&e, 0, sizeof(e));
		ts += 1 + rnd(&seed, 5000);
		e.ts = ts;
		e.cpu = c;
		e.tid = cur[c];
		e.tgid = cur[c] ? cur[c] : 0;
		if (k < 45) {
			/* switch: cur out (blocked, preempted, yield), a
			 * runnable task (or idle) in */
			int next = 0, prev = cur[c];
			int how = (int)rnd(&seed, 4);

			for (int j = 0; j < NT; j++) {
				int u = 1 + (int)((j + rnd(&seed, NT)) % NT);

				if (state[u] == 0) {
					next = u;
					break;
				}
			}
			/* now and then the task another CPU runs: its
			 * switch-out there was never traced (PID 1's threads
			 * on some kernels), and that CPU's next switch is
			 * from another task */
			if (ncpu > 1 && !rnd(&seed, 25)) {
				int o = (c + 1 + (int)rnd(&seed,
						(uint32_t)ncpu - 1)) % ncpu;

				if (cur[o] && cur[o] != cur[c]) {
					next = cur[o];
					cur[o] = 0;
				}
			}
			e.type = CTXMON_EV_SWITCH;
			e.sw.prev_tid = prev;
			e.sw.prev_tgid = prev ? prev : 0;
			e.sw.prev_comm = comms[prev];
			e.sw.next_tid = next;
			e.sw.next_tgid = next;
			e.sw.next_comm = comms[next];
			e.sw.prev_prio = e.sw.next_prio = 120;
			if (prev && how == 0) {
				e.sw.prev_state = CTXMON_STATE_S;
				e.sw.kind = CTXMON_SW_VOLUNTARY;
				state[prev] = 2;
			} else if (prev && how == 1) {
				e.sw.prev_state = CTXMON_STATE_D;
				e.sw.kind = CTXMON_SW_VOLUNTARY;
				state[prev] = 2;
			} else {
				e.sw.preempt = how == 2;
				e.sw.kind = CTXMON_SW_INVOLUNTARY;
				if (prev)
					state[prev] = 0;
			}
			if (next)
				state[next] = 1;
			cur[c] = next;
		} else if (k < 85) {
			/* wake a sleeper (or, at times, anybody) */
			e.type = rnd(&seed, 4) ? CTXMON_EV_WAKING :
						 CTXMON_EV_WAKEUP;
			e.wake.tid = t;
			e.wake.comm = comms[t];
			e.wake.target_cpu = c;
			if (state[t] == 2)
				state[t] = 0;
		} else if (k < 90) {
			e.type = CTXMON_EV_WAKEUP_NEW;
			e.wake.tid = t;
			e.wake.comm = comms[t];
		} else if (k < 93 && cur[c]) {
			e.type = CTXMON_EV_FORK;
			e.fork.parent_tid = cur[c];
			e.fork.child_tid = t;
			e.fork.child_tgid = t;
			e.fork.child_comm = comms[t];
			if (state[t] != 1)
				state[t] = 0;
		} else if (k < 95) {
			e.type = CTXMON_EV_MIGRATE;
			e.migrate.tid = t;
		} else if (k < 97) {
			e.type = CTXMON_EV_SYS_ENTER;
			e.sys.id = 0;
		} else {
			e.type = CTXMON_EV_EXIT;
			e.exit.tid = t;
			e.exit.comm = comms[t];
		}
		ctxmon_account_feed(a, &e);
		assert_int_equal(timeline__feed(tl, &e), 0);
	}
	ts += 1234;
	ctxmon_account_finish(a, ts);
	timeline__finish(tl, ts);
	rows = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(rows);
	th = timeline__threads(tl, &nth);
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *r = &rows[i];
		uint32_t seen = 0, u = 0;

		for (size_t j = 0; j < nth; j++)
			if (th[j].tid == r->tid && seen++ == r->gen) {
				u = th[j].utid;
				break;
			}
		assert_int_not_equal(u, 0);
		assert_int_equal(m->run[u], r->run_ns);
		assert_int_equal(m->wait[u], r->wait_ns);
		assert_int_equal(m->sleep[u], r->sleep_ns[0] + r->sleep_ns[1] +
						      r->sleep_ns[2]);
		assert_int_equal(m->lat_n[u], r->lat.count);
		if (r->lat.count)
			assert_int_equal(m->lat_max[u], r->lat.max_ns);
		assert_int_equal(m->sched[u], r->switch_in);
	}
	free(rows);
	timeline__free(tl);
	ctxmon_account_free(a);
	free(m);
}

static void test_timeline_vs_account(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++)
		run_stream(seed, 1 + (int)(seed % 4), 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pb),
		cmocka_unit_test(test_timeline_vs_account),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
