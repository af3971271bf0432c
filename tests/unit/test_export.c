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
#include "synth.h"

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

static void finish_compare(struct ctxmon_account *a, struct timeline *tl,
			   struct sums *m, uint64_t ts);

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
	finish_compare(a, tl, m, ts);
}

/* Finish @a and @tl at @ts: each thread's spans (summed in @m) must give
 * the account's row times, wakeup latencies and switch-ins; frees all. */
static void finish_compare(struct ctxmon_account *a, struct timeline *tl,
			   struct sums *m, uint64_t ts)
{
	struct ctxmon_stats *rows;
	const struct tl_thread *th;
	size_t n, nth;

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

/*
 * A thread that is not the leader execs and takes over the leader's tid
 * (de_thread()): 801 of process 800 runs on cpu1 from 100; the leader
 * exits at 240.  @early: 801 switches under 800 before the exec event (at
 * 270, preempted, and back at 280); else the exec event (300) comes
 * first.  800 then blocks at 400.  The bpf backend puts a run in the
 * slice in a switch whose CPU last switched to another tid (prev_run_ns,
 * 10 ns): the CPU ran the same thread all along, so neither the account
 * nor the timeline may take it for a switch-in never traced.
 */
static void exec_stream(bool early)
{
	static const struct who w[] = {
		{ 700, 700, "sh" }, { 800, 800, "main" }, { 801, 800, "worker" },
	};
	struct ctxmon_account_opts ao = { .sz = sizeof(ao) };
	struct sums *m = calloc(1, sizeof(*m));
	struct tl_ops ops = { .span = on_span, .sched = on_sched, .ctx = m };
	struct ctxmon_account *a = ctxmon_account_new(&ao);
	struct timeline *tl = timeline__new(&ops);
	struct ctxmon_event ev[12];
	size_t n = 0;

	assert_non_null(m);
	assert_non_null(a);
	assert_non_null(tl);
	use_whos(w, 3);
	ev[n++] = synth_fork(50, 0, 700, 800, 800, "main");
	ev[n++] = synth_switch(60, 0, 700, "S", 800);
	ev[n++] = synth_fork(80, 0, 800, 801, 800, "worker");
	ev[n++] = synth_switch(100, 1, 0, "R", 801);
	ev[n++] = synth_exit(240, 0, 800);
	ev[n++] = synth_switch(250, 0, 800, "Z", 0);
	if (early) {
		ev[n] = synth_switch(270, 1, 800, "R+", 0);
		ev[n++].sw.prev_run_ns = 10;
		ev[n++] = synth_switch(280, 1, 0, "R", 800);
	}
	ev[n++] = synth_exec(300, 1, 800, 801, "newprog");
	ev[n] = synth_switch(400, 1, 800, "S", 0);
	ev[n++].sw.prev_run_ns = 10;
	for (size_t i = 0; i < n; i++) {
		ctxmon_account_feed(a, &ev[i]);
		assert_int_equal(timeline__feed(tl, &ev[i]), 0);
	}
	finish_compare(a, tl, m, 1000);
	use_whos(NULL, 0);
}

static void test_timeline_exec(void **state)
{
	(void)state;
	exec_stream(false);
	exec_stream(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pb),
		cmocka_unit_test(test_timeline_vs_account),
		cmocka_unit_test(test_timeline_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
