/*
 * test_causes.c - unit tests of the cause analysis (src/analysis/causes.c)
 * through the accounting API (ctxmon_account_enable_causes()).
 *
 * Hand-worked sequences, one per rule of docs/causes.md, with the numbers
 * in the comments; the fine histogram and the quantile estimator against
 * exact values; and a scheduler simulation that decides why it switches
 * every task, keeps its own books (causes, off-CPU time per cause, irq
 * time, latency per thread, per CPU and per waker) and checks the analysis
 * against them, and the per-cause sums against the account's totals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/causes.h>

#include "synth.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* x86_64 numbers; the tests name the arch explicitly. */
enum {
	NR_READ = 0,
	NR_WRITE = 1,
	NR_YIELD = 24,
	NR_NANOSLEEP = 35,
	NR_EXIT = 60,
	NR_FUTEX = 202,
	NR_EXIT_GROUP = 231,
	NR_CLOCK_NANOSLEEP = 230,
	NR_PPOLL = 271,
};

/* ---- building events (tests/unit/synth.h) ---------------------------- */

static int tgid_of(int tid)
{
	/* Tests use tids whose process is tid / 100 * 100. */
	return tid ? tid / 100 * 100 : 0;
}

static void wake(struct ctxmon_account *a, unsigned type, uint64_t ts, int cpu,
		 int cur, int tid, int target, unsigned flags)
{
	struct ctxmon_event e = synth_wake(type, ts, cpu, cur, tid, target,
					   flags);

	ctxmon_account_feed(a, &e);
}

static void sys(struct ctxmon_account *a, uint64_t ts, int cpu, int tid,
		bool enter, long id)
{
	struct ctxmon_event e = synth_sys(ts, cpu, tid, enter, id);

	ctxmon_account_feed(a, &e);
}

static void irq(struct ctxmon_account *a, uint64_t ts, int cpu, int cur,
		unsigned type)
{
	struct ctxmon_event e = synth_irq(ts, cpu, cur, type, 9);

	ctxmon_account_feed(a, &e);
}

static void lost(struct ctxmon_account *a, uint64_t ts, int cpu)
{
	struct ctxmon_event e = synth_lost(ts, cpu, 5);

	ctxmon_account_feed(a, &e);
}

static struct ctxmon_account *acc_new(void)
{
	struct ctxmon_account_opts o = { .sz = sizeof(o) };
	struct ctxmon_causes_opts co = {
		.sz = sizeof(co),
		.arch = "x86_64",
		.wakeup_window_ns = 1000,
	};
	struct ctxmon_account *a = ctxmon_account_new(&o);

	assert_non_null(a);
	assert_int_equal(ctxmon_account_enable_causes(a, &co), 0);
	return a;
}

/* ---- reading rows ------------------------------------------------- */

struct rows {
	struct ctxmon_stats *st;
	struct ctxmon_causes *cz;
	size_t n;
};

static uint64_t sum_sleep(const struct ctxmon_stats *r)
{
	return r->sleep_ns[CTXMON_SLEEP_S] + r->sleep_ns[CTXMON_SLEEP_D] +
	       r->sleep_ns[CTXMON_SLEEP_OTHER];
}

/* The identities docs/causes.md promises, for every row. */
static void check_sums(const struct rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct ctxmon_stats *s = &r->st[i];
		const struct ctxmon_causes *c = &r->cz[i];
		uint64_t inv = 0, vol = 0, ex = 0, sl = c->initial.sleep_ns,
			 wt = c->initial.wait_ns, sc = 0, ssl = 0, swt = 0;

		assert_int_equal(c->tid, s->tid);
		assert_int_equal(c->gen, s->gen);
		for (int k = 0; k < CTXMON_INVOL__MAX; k++) {
			inv += c->invol[k].count;
			sl += c->invol[k].sleep_ns;
			wt += c->invol[k].wait_ns;
		}
		for (int k = 0; k < CTXMON_VOL__MAX; k++) {
			vol += c->vol[k].count;
			sl += c->vol[k].sleep_ns;
			wt += c->vol[k].wait_ns;
		}
		for (int k = 0; k < CTXMON_EXIT__MAX; k++)
			ex += c->exit[k];
		for (size_t k = 0; k < c->nsys; k++) {
			sc += c->sys[k].count;
			ssl += c->sys[k].sleep_ns;
			swt += c->sys[k].wait_ns;
		}
		assert_int_equal(inv, s->involuntary);
		assert_int_equal(vol, s->voluntary);
		assert_int_equal(ex, s->exit_switch);
		assert_int_equal(sl, sum_sleep(s));
		assert_int_equal(wt, s->wait_ns);
		assert_int_equal(sc, c->vol[CTXMON_VOL_SYSCALL].count);
		assert_int_equal(ssl, c->vol[CTXMON_VOL_SYSCALL].sleep_ns);
		assert_int_equal(swt, c->vol[CTXMON_VOL_SYSCALL].wait_ns);
		assert_int_equal(c->lat.count, s->lat.count);
		assert_int_equal(c->lat.sum_ns, s->lat.sum_ns);
		assert_int_equal(c->lat.max_ns, s->lat.max_ns);
		for (unsigned b = 0; c->lat.fine && b < CTXMON_HIST_BUCKETS;
		     b++) {
			uint64_t lo = b ? 1ull << b : 0, hi = (2ull << b) - 1,
				 n = 0;

			for (unsigned f = ctxmon_fine_bucket(lo);
			     f <= ctxmon_fine_bucket(hi); f++)
				n += c->lat.fine[f];
			if (b < CTXMON_HIST_BUCKETS - 1)
				assert_int_equal(n, s->lat.hist[b]);
		}
	}
}

static struct rows get_rows(struct ctxmon_account *a, enum ctxmon_rows kind)
{
	struct rows r;
	size_t n2;

	ctxmon_account_finish(a, 0);
	r.st = ctxmon_account_rows(a, kind, true, &r.n);
	assert_non_null(r.st);
	r.cz = ctxmon_account_causes(a, kind, true, &n2);
	assert_non_null(r.cz);
	assert_int_equal(n2, r.n);
	check_sums(&r);
	return r;
}

static void put_rows(struct rows *r)
{
	free(r->st);
	ctxmon_causes_free(r->cz, r->n);
}

static const struct ctxmon_causes *crow(const struct rows *r, int tid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->cz[i].tid == tid)
			return &r->cz[i];
	fail_msg("no causes row for %d", tid);
	return NULL;
}

static const struct ctxmon_sys_cause *sysrow(const struct ctxmon_causes *c,
					     long id)
{
	for (size_t i = 0; i < c->nsys; i++)
		if (c->sys[i].id == id)
			return &c->sys[i];
	fail_msg("no syscall %ld in row %d", id, c->tid);
	return NULL;
}

/* ---- names and histogram -------------------------------------------- */

static void test_syscall_names(void **state)
{
	(void)state;
	assert_string_equal(ctxmon_syscall_name("x86_64", 0), "read");
	assert_string_equal(ctxmon_syscall_name("x86_64", 24), "sched_yield");
	assert_string_equal(ctxmon_syscall_name("x86_64", 231), "exit_group");
	assert_string_equal(ctxmon_syscall_name("aarch64", 124), "sched_yield");
	assert_string_equal(ctxmon_syscall_name("aarch64", 63), "read");
	assert_string_equal(ctxmon_syscall_name("arm64", 98), "futex");
	assert_null(ctxmon_syscall_name("x86_64", -1));
	assert_null(ctxmon_syscall_name("x86_64", 100000));
	assert_null(ctxmon_syscall_name("vax", 0));
	assert_int_equal(ctxmon_syscall_id("x86_64", "futex"), 202);
	assert_int_equal(ctxmon_syscall_id("aarch64", "exit_group"), 94);
	assert_int_equal(ctxmon_syscall_id("x86_64", "nonesuch"), -ENOENT);
#if defined(__x86_64__)
	assert_string_equal(ctxmon_syscall_arch(), "x86_64");
	assert_string_equal(ctxmon_syscall_name(NULL, 1), "write");
#endif
	assert_string_equal(ctxmon_invol_cause_name(CTXMON_INVOL_SLICE),
			    "slice");
	assert_string_equal(ctxmon_exit_cause_name(CTXMON_EXIT_GROUP), "group");
	assert_string_equal(ctxmon_wake_ctx_name(99), "?");
}

static void test_fine_buckets(void **state)
{
	(void)state;
	assert_int_equal(ctxmon_fine_lo(0), 0);
	for (unsigned i = 0; i < CTXMON_FINE_BUCKETS - 1; i++) {
		uint64_t lo = ctxmon_fine_lo(i), hi = ctxmon_fine_hi(i);
		unsigned l2lo = lo ? 63 - __builtin_clzll(lo) : 0;
		unsigned l2hi = hi ? 63 - __builtin_clzll(hi) : 0;

		assert_true(lo <= hi);
		assert_int_equal(ctxmon_fine_lo(i + 1), hi + 1);
		assert_int_equal(ctxmon_fine_bucket(lo), i);
		assert_int_equal(ctxmon_fine_bucket(hi), i);
		/* inside one log2 bucket, and at most 1/32 of its values */
		assert_int_equal(l2lo, l2hi);
		assert_true((hi - lo + 1) * 32 <= lo || hi < 64);
	}
	assert_int_equal(ctxmon_fine_bucket(1ull << 40),
			 CTXMON_FINE_BUCKETS - 1);
	assert_int_equal(ctxmon_fine_bucket(UINT64_MAX),
			 CTXMON_FINE_BUCKETS - 1);
	assert_int_equal(ctxmon_fine_hi(CTXMON_FINE_BUCKETS - 1), UINT64_MAX);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* The estimator against the exact nearest-rank quantiles of known data:
 * within one fine bucket (3.1%), and exact for small values. */
static void test_quantiles(void **state)
{
	static uint64_t v[20000];
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999, 0.0001, 1.0 };
	struct ctxmon_lat_summary l;
	uint64_t rng = 42;

	(void)state;
	for (int pass = 0; pass < 3; pass++) {
		size_t n = pass == 2 ? 7 : 20000;

		memset(&l, 0, sizeof(l));
		l.fine = calloc(CTXMON_FINE_BUCKETS, sizeof(*l.fine));
		assert_non_null(l.fine);
		for (size_t i = 0; i < n; i++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* pass 0: log-uniform 100ns..10ms; 1: small values */
			v[i] = pass == 1 ?
				       rng % 60 :
				       (uint64_t)(100 *
						  pow(1e5,
						      (double)(rng % 1000000) /
							      1e6));
			l.fine[ctxmon_fine_bucket(v[i])]++;
			l.sum_ns += v[i];
			if (!l.count || v[i] < l.min_ns)
				l.min_ns = v[i];
			if (!l.count || v[i] > l.max_ns)
				l.max_ns = v[i];
			l.count++;
		}
		qsort(v, n, sizeof(v[0]), cmp_u64);
		for (size_t k = 0; k < ARRAY_SIZE(qs); k++) {
			size_t rank = (size_t)ceil(qs[k] * (double)n);
			uint64_t exact = v[(rank ? rank : 1) - 1];
			uint64_t est = ctxmon_lat_quantile(&l, qs[k]);
			double err = fabs((double)est - (double)exact);

			if (pass == 1)
				assert_int_equal(est, exact);
			else
				assert_true(err <= (double)exact / 32 + 1);
		}
		assert_int_equal(ctxmon_lat_quantile(&l, 1.0), l.max_ns);
		free(l.fine);
	}
	memset(&l, 0, sizeof(l));
	assert_int_equal(ctxmon_lat_quantile(&l, 0.5), 0);
}

/* ---- causes of involuntary switches --------------------------------- */

enum { A = 101, B = 102, C = 103, W = 201, K = 301 };

/*
 * cpu0: A runs from 1000.  Each step ends with A back on cpu0.
 *   2000 A enters sched_yield, 2010 A R -> B            yield
 *   2100 B S -> A (no syscall event of B: unknown)      B: unknown
 *   3000 W (cpu1) wakes C onto cpu0 (waking, wakeup 3005)
 *   3200 A R -> C                                       wakeup, by C
 *   3300 C S -> A (C known: not in a syscall)            C: no_syscall
 *   4000 hard irq on cpu1 wakes B onto cpu0, 4003 wakeup
 *   4010 A R -> B                                       wakeup_irq
 *   4100 B R -> A                                       B: slice
 *   5000 W wakes C onto cpu0, 5001 wakeup; A R -> C at 7000 (past the
 *        1000 ns window)                                slice
 *   7100 C S -> A
 *   8000 W wakes C onto cpu1 (another CPU); 8010 A R -> C: slice
 *   8100 C S -> A
 *   9000 A enters futex; 9050 A R -> B (schedule() while runnable) other
 *   9100 B R -> A; 9110 A R+ -> B (in futex, preempted): slice
 *   9200 B R -> A
 */
static void test_invol(void **state)
{
	struct ctxmon_account *a = acc_new();
	const struct ctxmon_causes *ca, *cb;
	struct ctxmon_pair *p;
	struct rows r;
	size_t n;
	bool seen_c = false, seen_b = false;

	(void)state;
	sw(a, 1000, 0, 0, "R", A);
	sw(a, 1000, 1, 0, "R", W);
	sys(a, 1001, 0, A, false, NR_READ); /* A: out of a syscall */
	sys(a, 1002, 1, W, false, NR_READ);
	sys(a, 2000, 0, A, true, NR_YIELD);
	sw(a, 2010, 0, A, "R", B);
	sw(a, 2100, 0, B, "S", A);
	sys(a, 2101, 0, A, false, NR_YIELD);
	wake(a, CTXMON_EV_WAKING, 3000, 1, W, C, 1, 0);
	wake(a, CTXMON_EV_WAKEUP, 3005, 1, W, C, 0, 0);
	sw(a, 3200, 0, A, "R", C);
	sys(a, 3250, 0, C, false, NR_READ);
	sw(a, 3300, 0, C, "S", A);
	wake(a, CTXMON_EV_WAKING, 4000, 1, W, B, 0, CTXMON_EVF_IN_IRQ);
	wake(a, CTXMON_EV_WAKEUP, 4003, 1, W, B, 0, CTXMON_EVF_IN_IRQ);
	sw(a, 4010, 0, A, "R", B);
	sw(a, 4100, 0, B, "R", A);
	wake(a, CTXMON_EV_WAKING, 5000, 1, W, C, 0, 0);
	wake(a, CTXMON_EV_WAKEUP, 5001, 1, W, C, 0, 0);
	sw(a, 7000, 0, A, "R", C);
	sw(a, 7100, 0, C, "S", A);
	wake(a, CTXMON_EV_WAKING, 8000, 1, W, C, 1, 0);
	wake(a, CTXMON_EV_WAKEUP, 8001, 1, W, C, 1, 0);
	sw(a, 8010, 0, A, "R", C);
	sw(a, 8100, 0, C, "S", A);
	sys(a, 9000, 0, A, true, NR_FUTEX);
	sw(a, 9050, 0, A, "R", B);
	sw(a, 9100, 0, B, "R", A);
	sw(a, 9110, 0, A, "R+", B);
	sw(a, 9200, 0, B, "R", A);

	r = get_rows(a, CTXMON_ROWS_THREADS);
	ca = crow(&r, A);
	assert_int_equal(ca->invol[CTXMON_INVOL_YIELD].count, 1);
	assert_int_equal(ca->invol[CTXMON_INVOL_WAKEUP].count, 1);
	assert_int_equal(ca->invol[CTXMON_INVOL_WAKEUP_IRQ].count, 1);
	assert_int_equal(ca->invol[CTXMON_INVOL_SLICE].count, 3);
	assert_int_equal(ca->invol[CTXMON_INVOL_OTHER].count, 1);
	/* runnable after each: yield 2010..2100, wakeup 3200..3300 */
	assert_int_equal(ca->invol[CTXMON_INVOL_YIELD].wait_ns, 90);
	assert_int_equal(ca->invol[CTXMON_INVOL_WAKEUP].wait_ns, 100);
	assert_int_equal(ca->invol[CTXMON_INVOL_WAKEUP_IRQ].wait_ns, 90);
	assert_int_equal(ca->invol[CTXMON_INVOL_SLICE].wait_ns, 100 + 90 + 90);
	cb = crow(&r, B);
	assert_int_equal(cb->invol[CTXMON_INVOL_SLICE].count, 3);
	assert_int_equal(cb->vol[CTXMON_VOL_UNKNOWN].count, 1);
	/* B: the irq wakeup's latency, 4000 -> 4010, from irq context */
	assert_int_equal(cb->lat.count, 1);
	assert_int_equal(cb->lat.max_ns, 10);
	assert_int_equal(cb->lat.ctx_count[CTXMON_WAKE_IRQ], 1);
	assert_int_equal(cb->lat.max.waker_cpu, 1);
	assert_int_equal(cb->lat.max.prev_tid, A);
	assert_int_equal(crow(&r, C)->vol[CTXMON_VOL_NOSYSCALL].count, 3);
	/* C's latencies: 3000->3200, 5000->7000, 8000->8010 */
	assert_int_equal(crow(&r, C)->lat.count, 3);
	assert_int_equal(crow(&r, C)->lat.max_ns, 2000);
	assert_int_equal(crow(&r, C)->lat.max.wake_ts, 5000);
	assert_int_equal(crow(&r, C)->lat.max.run_ts, 7000);
	assert_int_equal(crow(&r, C)->lat.max.waker_tid, W);
	assert_int_equal(crow(&r, C)->lat.max.cpu, 0);
	assert_int_equal(crow(&r, C)->lat.min_ns, 10);
	put_rows(&r);

	p = ctxmon_account_pairs(a, true, &n);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		if (p[i].kind == CTXMON_PAIR_PREEMPT && p[i].to_tid == A &&
		    p[i].from_tid == C) {
			assert_int_equal(p[i].count, 1);
			assert_int_equal(p[i].ctx, CTXMON_WAKE_TASK);
			seen_c = true;
		}
		if (p[i].kind == CTXMON_PAIR_PREEMPT && p[i].from_tid == B) {
			assert_int_equal(p[i].ctx, CTXMON_WAKE_IRQ);
			seen_b = true;
		}
		if (p[i].kind == CTXMON_PAIR_WAKE && p[i].to_tid == C) {
			assert_int_equal(p[i].from_tid, W);
			assert_int_equal(p[i].count, 3);
			assert_int_equal(p[i].lat_sum_ns, 200 + 2000 + 10);
			assert_int_equal(p[i].lat_max_ns, 2000);
		}
		if (p[i].kind == CTXMON_PAIR_WAKE && p[i].to_tid == B) {
			/* from an interrupt: no waker task */
			assert_int_equal(p[i].from_tid, -1);
			assert_int_equal(p[i].ctx, CTXMON_WAKE_IRQ);
		}
	}
	assert_true(seen_c && seen_b);
	free(p);
	ctxmon_account_free(a);
}

/* ---- voluntary: the syscall table ------------------------------------- */

/*
 * A blocks in read twice (asleep 1000 and 3000 ns, then runnable 50 and
 * 20), once in a page fault (known, no syscall), once in futex in D.  B has
 * no syscall event at all: unknown.  After a loss, A's state is unknown
 * until its next syscall event.
 */
static void test_vol(void **state)
{
	struct ctxmon_account *a = acc_new();
	const struct ctxmon_causes *ca;
	const struct ctxmon_sys_cause *rd;
	struct rows r;

	(void)state;
	sw(a, 1000, 0, 0, "R", A);
	sys(a, 1100, 0, A, true, NR_READ);
	sw(a, 1200, 0, A, "S", 0);
	wake(a, CTXMON_EV_WAKING, 2200, 1, 0, A, 0, CTXMON_EVF_IN_SOFTIRQ);
	sw(a, 2250, 0, 0, "R", A);
	sys(a, 2260, 0, A, false, NR_READ);
	sys(a, 2300, 0, A, true, NR_READ);
	sw(a, 2400, 0, A, "S", 0);
	wake(a, CTXMON_EV_WAKING, 5400, 1, B, A, 0, 0);
	sw(a, 5420, 0, 0, "R", A);
	sys(a, 5430, 0, A, false, NR_READ);
	sw(a, 5500, 0, A, "D", 0); /* page fault */
	wake(a, CTXMON_EV_WAKEUP, 5600, 0, 0, A, 0, 0);
	sw(a, 5610, 0, 0, "R", A);
	sys(a, 5620, 0, A, true, NR_FUTEX);
	sw(a, 5700, 0, A, "D", 0);
	wake(a, CTXMON_EV_WAKING, 5800, 1, B, A, 0, 0);
	sw(a, 5900, 0, 0, "R", A);
	lost(a, 6000, 1);
	sw(a, 6100, 0, A, "S", 0); /* unknown: after the loss */
	sw(a, 1000, 1, 0, "R", B); /* (time held at 6100) */
	sw(a, 6200, 1, B, "S", 0);

	r = get_rows(a, CTXMON_ROWS_THREADS);
	ca = crow(&r, A);
	rd = sysrow(ca, NR_READ);
	assert_int_equal(rd->count, 2);
	assert_int_equal(rd->sleep_ns, 1000 + 3000);
	assert_int_equal(rd->wait_ns, 50 + 20);
	assert_int_equal(rd->max_ns, 3020);
	assert_int_equal(sysrow(ca, NR_FUTEX)->count, 1);
	assert_int_equal(sysrow(ca, NR_FUTEX)->sleep_ns, 100);
	assert_int_equal(ca->vol[CTXMON_VOL_SYSCALL].count, 3);
	assert_int_equal(ca->vol[CTXMON_VOL_NOSYSCALL].count, 1);
	assert_int_equal(ca->vol[CTXMON_VOL_NOSYSCALL].sleep_ns, 100);
	assert_int_equal(ca->vol[CTXMON_VOL_UNKNOWN].count, 1);
	assert_string_equal(ctxmon_syscall_name("x86_64", ca->sys[0].id),
			    "read");
	assert_int_equal(ca->lat.ctx_count[CTXMON_WAKE_SOFTIRQ], 1);
	assert_int_equal(ca->lat.ctx_count[CTXMON_WAKE_TASK], 2);
	assert_int_equal(ca->lat.ctx_count[CTXMON_WAKE_UNKNOWN], 1);
	assert_int_equal(crow(&r, B)->vol[CTXMON_VOL_UNKNOWN].count, 1);
	put_rows(&r);
	ctxmon_account_free(a);
}

/* ---- exits ------------------------------------------------------------- */

/*
 * Process 100: 101 calls exit() (pthread_exit), then the leader 100 calls
 * exit_group(): 102 dies for the group.  Process 200: 201 is killed by a
 * signal (out of its syscall).  Process 300: no syscall events: unknown.
 */
static void test_exits(void **state)
{
	struct ctxmon_account *a = acc_new();
	struct rows r;

	(void)state;
	sw(a, 1000, 0, 0, "R", 101);
	sys(a, 1010, 0, 101, true, NR_EXIT);
	sw(a, 1020, 0, 101, "X", 100);
	sys(a, 1030, 0, 100, true, NR_EXIT_GROUP);
	sw(a, 1040, 0, 100, "Z", 102);
	sw(a, 1050, 0, 102, "X", 201);
	sys(a, 1060, 0, 201, true, NR_READ);
	sys(a, 1070, 0, 201, false, NR_READ);
	sw(a, 1080, 0, 201, "X", 301);
	sw(a, 1090, 0, 301, "X", 0);

	r = get_rows(a, CTXMON_ROWS_THREADS);
	assert_int_equal(crow(&r, 101)->exit[CTXMON_EXIT_SYSCALL], 1);
	assert_int_equal(crow(&r, 100)->exit[CTXMON_EXIT_SYSCALL], 1);
	assert_int_equal(crow(&r, 102)->exit[CTXMON_EXIT_GROUP], 1);
	assert_int_equal(crow(&r, 201)->exit[CTXMON_EXIT_SIGNAL], 1);
	assert_int_equal(crow(&r, 301)->exit[CTXMON_EXIT_UNKNOWN], 1);
	put_rows(&r);
	ctxmon_account_free(a);
}

/* ---- irqs --------------------------------------------------------------- */

/*
 * A on cpu0: hard irq 1000..1300 (300); softirq 2000..3000 with a hard irq
 * 2200..2300 inside (softirq 900, irq 100).  An irq exit with no entry
 * (began before the capture) is not timed.  Idle takes one too.
 */
static void test_irqs(void **state)
{
	struct ctxmon_account *a = acc_new();
	const struct ctxmon_causes *ca;
	struct rows r;

	(void)state;
	sw(a, 500, 0, 0, "R", A);
	irq(a, 600, 0, A, CTXMON_EV_IRQ_EXIT);
	irq(a, 1000, 0, A, CTXMON_EV_IRQ_ENTRY);
	irq(a, 1300, 0, A, CTXMON_EV_IRQ_EXIT);
	irq(a, 2000, 0, A, CTXMON_EV_SOFTIRQ_ENTRY);
	irq(a, 2200, 0, A, CTXMON_EV_IRQ_ENTRY);
	irq(a, 2300, 0, A, CTXMON_EV_IRQ_EXIT);
	irq(a, 3000, 0, A, CTXMON_EV_SOFTIRQ_EXIT);
	sw(a, 3100, 0, A, "S", 0);
	irq(a, 3200, 0, 0, CTXMON_EV_IRQ_ENTRY);
	irq(a, 3300, 0, 0, CTXMON_EV_IRQ_EXIT);

	r = get_rows(a, CTXMON_ROWS_THREADS);
	ca = crow(&r, A);
	assert_int_equal(ca->irq_count, 2);
	assert_int_equal(ca->irq_ns, 400);
	assert_int_equal(ca->softirq_count, 1);
	assert_int_equal(ca->softirq_ns, 900);
	put_rows(&r);
	ctxmon_account_free(a);
}

/* ---- processes, intervals, API ------------------------------------------ */

static void test_rollup_reset(void **state)
{
	struct ctxmon_account *a = acc_new();
	struct ctxmon_cpu_latency *cl;
	const struct ctxmon_causes *p;
	struct rows r;
	size_t n;

	(void)state;
	/* 101 and 102 (process 100) each block in read once, 102 in futex. */
	sw(a, 1000, 0, 0, "R", 101);
	sw(a, 1000, 1, 0, "R", 102);
	sys(a, 1010, 0, 101, true, NR_READ);
	sys(a, 1010, 1, 102, true, NR_READ);
	sw(a, 1100, 0, 101, "S", 0);
	sw(a, 1100, 1, 102, "S", 0);
	wake(a, CTXMON_EV_WAKING, 1500, 1, 0, 101, 0, CTXMON_EVF_IN_IRQ);
	wake(a, CTXMON_EV_WAKING, 1600, 0, 0, 102, 1, 0);
	sw(a, 1700, 0, 0, "R", 101); /* 200 */
	sw(a, 1700, 1, 0, "R", 102); /* 100 */
	sys(a, 1710, 1, 102, false, NR_READ);
	sys(a, 1720, 1, 102, true, NR_FUTEX);
	sw(a, 1800, 1, 102, "S", 0);

	r = get_rows(a, CTXMON_ROWS_PROCESSES);
	assert_int_equal(r.n, 1);
	p = crow(&r, 100);
	assert_int_equal(p->nsys, 2);
	assert_int_equal(p->sys[0].id, NR_READ); /* most switches first */
	assert_int_equal(p->sys[0].count, 2);
	assert_int_equal(p->sys[0].sleep_ns, 400 + 500);
	assert_int_equal(p->lat.count, 2);
	assert_int_equal(p->lat.max_ns, 200);
	assert_int_equal(p->lat.max.tid, 101);
	assert_int_equal(p->lat.ctx_count[CTXMON_WAKE_IRQ], 1);
	assert_int_equal(p->lat.p50_ns, 100);
	assert_int_equal(p->lat.p99_ns, 200);
	put_rows(&r);

	cl = ctxmon_account_cpu_latency(a, &n);
	assert_non_null(cl);
	assert_int_equal(n, 2);
	assert_int_equal(cl[0].cpu, 0);
	assert_int_equal(cl[0].lat.count, 1);
	assert_int_equal(cl[0].lat.max_ns, 200);
	assert_int_equal(cl[1].lat.max_ns, 100);
	ctxmon_cpu_latency_free(cl, n);

	/* A new interval: counts restart, the open sleep in futex goes on. */
	ctxmon_account_reset_interval(a, 2000);
	wake(a, CTXMON_EV_WAKING, 2500, 0, 101, 102, 1, 0);
	sw(a, 2600, 1, 0, "R", 102);
	r = get_rows(a, CTXMON_ROWS_THREADS);
	p = crow(&r, 102);
	assert_int_equal(p->vol[CTXMON_VOL_SYSCALL].count, 0);
	assert_int_equal(sysrow(p, NR_FUTEX)->count, 0);
	assert_int_equal(sysrow(p, NR_FUTEX)->sleep_ns, 500);
	assert_int_equal(sysrow(p, NR_FUTEX)->wait_ns, 100);
	assert_int_equal(p->nsys, 1); /* read: nothing this interval */
	assert_int_equal(p->lat.count, 1);
	put_rows(&r);

	/* Too late to enable twice, or after events. */
	assert_int_equal(ctxmon_account_enable_causes(a, NULL), -EBUSY);
	ctxmon_account_free(a);
	{
		struct ctxmon_account_opts o = { .sz = sizeof(o) };
		struct ctxmon_account *b = ctxmon_account_new(&o);

		assert_non_null(b);
		assert_null(ctxmon_account_causes(b, CTXMON_ROWS_THREADS, true,
						  &n));
		assert_int_equal(errno, EINVAL);
		assert_null(ctxmon_account_pairs(b, true, &n));
		/* tasks declared first get causes too */
		assert_int_equal(ctxmon_account_add_task(b, 7, 7, "seven"), 0);
		assert_int_equal(ctxmon_account_enable_causes(b, NULL), 0);
		sw(b, 100, 0, 7, "S", 0);
		r = get_rows(b, CTXMON_ROWS_THREADS);
		assert_int_equal(crow(&r, 7)->vol[CTXMON_VOL_UNKNOWN].count, 1);
		put_rows(&r);
		ctxmon_account_free(b);
	}
	ctxmon_causes_free(NULL, 3);
	ctxmon_cpu_latency_free(NULL, 3);
}


/*
 * A switch-in the kernel never traced (docs/accounting.md): C sleeps on
 * cpu1 at 1100, W wakes it at 1500 and switches at 1600 to K, whose
 * switch to C is not traced.  C switches out at 3000 after 500 ns of run
 * (sw.prev_run_ns): it switched in at 2500, so its latency is 1000, after
 * a task unknown, and the causes count it as the account does (it was
 * left out before).
 */
static void test_unseen_switch_in(void **state)
{
	struct ctxmon_account *a = acc_new();
	struct ctxmon_event e;
	const struct ctxmon_causes *cc;
	struct rows r;

	(void)state;
	sw(a, 1000, 1, 0, "R", C);
	sw(a, 1100, 1, C, "S", W);
	wake(a, CTXMON_EV_WAKING, 1500, 1, W, C, 1, 0);
	sw(a, 1600, 1, W, "S", K);
	e = synth_switch(3000, 1, C, "S", 0);
	e.sw.prev_run_ns = 500;
	ctxmon_account_feed(a, &e);
	r = get_rows(a, CTXMON_ROWS_THREADS); /* check_sums(): lat too */
	cc = crow(&r, C);
	assert_int_equal(cc->lat.count, 1);
	assert_int_equal(cc->lat.max_ns, 1000);
	assert_int_equal(cc->lat.max.wake_ts, 1500);
	assert_int_equal(cc->lat.max.run_ts, 2500);
	assert_int_equal(cc->lat.max.cpu, 1);
	assert_int_equal(cc->lat.max.prev_tid, -1);
	assert_int_equal(cc->lat.max.waker_tid, W);
	put_rows(&r);
	ctxmon_account_free(a);
}
/* Pairs filter by target: only pairs touching a target task. */
static void test_pair_targets(void **state)
{
	pid_t pids[] = { 100 };
	struct ctxmon_account_opts o = { .sz = sizeof(o),
					 .target = CTXMON_TARGET_PIDS,
					 .pids = pids,
					 .npids = 1 };
	struct ctxmon_account *a = ctxmon_account_new(&o);
	struct ctxmon_pair *p;
	size_t n, nall;

	(void)state;
	assert_non_null(a);
	assert_int_equal(ctxmon_account_enable_causes(a, NULL), 0);
	sw(a, 1000, 0, 0, "R", 101);
	sw(a, 1000, 1, 0, "R", 201);
	sw(a, 1100, 0, 101, "S", 301);
	sw(a, 1200, 1, 201, "S", 0);
	wake(a, CTXMON_EV_WAKING, 1300, 0, 301, 101, 0, 0); /* 301->101 */
	wake(a, CTXMON_EV_WAKING, 1300, 0, 301, 201, 1, 0); /* 301->201 */
	sw(a, 1400, 0, 301, "R", 101);
	sw(a, 1400, 1, 0, "R", 201);
	/* 301 -> 101 woken, 101 preempting 301; not 301 -> 201 */
	p = ctxmon_account_pairs(a, false, &n);
	assert_non_null(p);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_true(p[i].target);
		assert_int_not_equal(p[i].to_tid, 201);
		if (p[i].kind == CTXMON_PAIR_WAKE) {
			assert_int_equal(p[i].from_tid, 301);
			assert_int_equal(p[i].to_tid, 101);
		} else {
			assert_int_equal(p[i].from_tid, 101);
			assert_int_equal(p[i].to_tid, 301);
		}
	}
	free(p);
	p = ctxmon_account_pairs(a, true, &nall);
	assert_non_null(p);
	assert_int_equal(nall, 3);
	free(p);
	ctxmon_account_free(a);
}

/* ---- simulation ------------------------------------------------------------ */

#define SIM_CPUS 3
#define SIM_T 12
#define WINDOW 1000
#define NSYS 9

static const long sim_sys[NSYS] = {
	NR_READ,  NR_WRITE,	NR_FUTEX,
	NR_PPOLL, NR_NANOSLEEP, NR_CLOCK_NANOSLEEP,
	NR_YIELD, NR_EXIT,	NR_EXIT_GROUP,
};

enum { T_NEW, T_RUN, T_RQ, T_SLEEP, T_DEAD };
enum { K_ONCPU, K_INITIAL, K_INVOL, K_VOL, K_SYS };

struct truth {
	uint64_t invol[CTXMON_INVOL__MAX], vol[CTXMON_VOL__MAX];
	uint64_t exit[CTXMON_EXIT__MAX];
	uint64_t sleep[5][8], wait[5][8]; /* [K_*][idx] */
	uint64_t sys_count[NSYS], sys_sleep[NSYS], sys_wait[NSYS];
	uint64_t irq_count, irq_ns, sirq_count, sirq_ns;
	uint64_t lat_count, lat_sum, lat_max, lat_ctx[4];
};

struct stask {
	int tid, state, cpu;
	int sys; /* index into sim_sys, -1: none */
	bool known;
	uint64_t run_since, since;
	bool asleep;
	int bk, bidx;
	uint64_t wake_ts, lat_start;
	int wake_cpu, waker;
	uint8_t wctx;
	bool wpending, lat;
	struct truth tr;
};

struct sim {
	uint64_t rng, now;
	struct ctxmon_account *a;
	struct stask t[SIM_T];
	int cur[SIM_CPUS];
	uint64_t cpu_lat_count[SIM_CPUS], cpu_lat_sum[SIM_CPUS];
	/* pairs: wakes[waker slot][wakee], slot SIM_T = from an irq */
	uint64_t wakes[SIM_T + 1][SIM_T];
	uint64_t preempts[SIM_T][SIM_T]; /* [preempter][victim] */
	/* no sched_wakeup after a waking: the bpf backend's default, where
	 * the wake's move (a migrate event) tells where the task is queued */
	bool thin;
};

static uint32_t rnd(struct sim *s, uint32_t n)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng % n);
}

static int tid_at(int i)
{
	/* two processes: 100.. and 200.., leaders 100 and 200 */
	return i < SIM_T / 2 ? 100 + i : 200 + i - SIM_T / 2;
}

static struct stask *by_tid(struct sim *s, int tid)
{
	for (int i = 0; i < SIM_T; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	return NULL;
}

static int idx_of(struct sim *s, const struct stask *t)
{
	return (int)(t - s->t);
}

/* Charge the time since the last change to the task's off-CPU bucket. */
static void sim_charge(struct sim *s, struct stask *t)
{
	uint64_t d = s->now - t->since;

	if (t->state == T_RQ || t->state == T_SLEEP) {
		int k = t->bk == K_ONCPU ? K_INITIAL : t->bk;

		if (t->state == T_SLEEP)
			t->tr.sleep[k][t->bidx] += d;
		else
			t->tr.wait[k][t->bidx] += d;
		if (k == K_SYS) {
			if (t->state == T_SLEEP)
				t->tr.sys_sleep[t->bidx] += d;
			else
				t->tr.sys_wait[t->bidx] += d;
		}
	}
	t->since = s->now;
}

static void sim_sys_ev(struct sim *s, struct stask *t, bool enter, int k)
{
	sys(s->a, s->now, t->cpu, t->tid, enter, sim_sys[k]);
	t->sys = enter ? k : -1;
	t->known = true;
}

static int rq_pick(struct sim *s, int cpu, bool tick, const struct stask *prev)
{
	int cand[SIM_T], n = 0;

	for (int i = 0; i < SIM_T; i++) {
		const struct stask *q = &s->t[i];

		if (q->state != T_RQ || q->cpu != cpu)
			continue;
		/* A tick never comes within the window of a wakeup that
		 * happened while prev ran (the kernel would have preempted
		 * at once); the simulation keeps to that. */
		if (tick && q->wpending && q->wake_cpu == cpu &&
		    q->wake_ts >= prev->run_since &&
		    s->now - q->wake_ts <= WINDOW)
			continue;
		cand[n++] = i;
	}
	return n ? cand[rnd(s, (uint32_t)n)] : -1;
}

/* Switch on @cpu from its current task (out as @state, counted in truth
 * by the caller) to task index @ni (-1: idle). */
static void sim_switch(struct sim *s, int cpu, const char *state, int ni)
{
	int prev = s->cur[cpu];
	struct stask *n = ni >= 0 ? &s->t[ni] : NULL;

	sw(s->a, s->now, cpu, prev, state, n ? n->tid : 0);
	s->cur[cpu] = n ? n->tid : 0;
	if (!n)
		return;
	sim_charge(s, n);
	if (n->lat) {
		uint64_t d = s->now - n->lat_start;
		int w = n->wctx == CTXMON_WAKE_TASK && by_tid(s, n->waker) ?
				idx_of(s, by_tid(s, n->waker)) :
				SIM_T;

		n->tr.lat_count++;
		n->tr.lat_sum += d;
		if (d > n->tr.lat_max)
			n->tr.lat_max = d;
		n->tr.lat_ctx[n->wctx]++;
		s->cpu_lat_count[cpu]++;
		s->cpu_lat_sum[cpu] += d;
		s->wakes[w][ni]++;
		n->lat = false;
	}
	n->state = T_RUN;
	n->cpu = cpu;
	n->run_since = s->now;
	n->bk = K_ONCPU;
	n->wpending = false;
	/* Back from sched_yield() once it runs again. */
	if (n->sys >= 0 && sim_sys[n->sys] == NR_YIELD) {
		s->now += 1;
		sim_sys_ev(s, n, false, n->sys);
	}
}

/* The current task of @cpu goes off CPU into bucket (@bk, @bidx). */
static void sim_out(struct sim *s, int cpu, int state, int bk, int bidx)
{
	struct stask *p = by_tid(s, s->cur[cpu]);

	p->state = state;
	p->since = s->now;
	p->bk = bk;
	p->bidx = bidx;
	p->cpu = cpu;
}

static void act_block(struct sim *s, int cpu)
{
	struct stask *p = by_tid(s, s->cur[cpu]);
	int ni = rq_pick(s, cpu, false, p);

	if (!p->known) {
		p->tr.vol[CTXMON_VOL_UNKNOWN]++;
		sim_out(s, cpu, T_SLEEP, K_VOL, CTXMON_VOL_UNKNOWN);
	} else if (p->sys < 0) {
		p->tr.vol[CTXMON_VOL_NOSYSCALL]++;
		sim_out(s, cpu, T_SLEEP, K_VOL, CTXMON_VOL_NOSYSCALL);
	} else {
		p->tr.vol[CTXMON_VOL_SYSCALL]++;
		p->tr.sys_count[p->sys]++;
		sim_out(s, cpu, T_SLEEP, K_SYS, p->sys);
	}
	sim_switch(s, cpu, rnd(s, 2) ? "S" : "D", ni);
}

/* Involuntary switch of @cpu's task with @cause, to @ni. */
static void act_invol(struct sim *s, int cpu, int cause, int ni)
{
	struct stask *p = by_tid(s, s->cur[cpu]);
	const char *st = "R";

	/* Preempted inside a syscall is shown R+ (kernel preemption). */
	if (p->sys >= 0 && cause != CTXMON_INVOL_YIELD &&
	    cause != CTXMON_INVOL_OTHER)
		st = "R+";
	p->tr.invol[cause]++;
	if (cause == CTXMON_INVOL_WAKEUP || cause == CTXMON_INVOL_WAKEUP_IRQ)
		s->preempts[ni][idx_of(s, p)]++;
	sim_out(s, cpu, T_RQ, K_INVOL, cause);
	sim_switch(s, cpu, st, ni);
}

/* Wake a sleeper (or a new task) onto a CPU, maybe preempting. */
static void act_wake(struct sim *s)
{
	int i = (int)rnd(s, SIM_T), c = (int)rnd(s, SIM_CPUS);
	int wc = (int)rnd(s, SIM_CPUS);
	struct stask *t = &s->t[i], *p;
	unsigned flags = 0;
	int prev;

	if (t->state != T_SLEEP && t->state != T_NEW)
		return;
	t->wctx = (uint8_t)rnd(s, 3);
	if (t->wctx == CTXMON_WAKE_IRQ) {
		flags = CTXMON_EVF_IN_IRQ;
		wc = c;
	} else if (t->wctx == CTXMON_WAKE_SOFTIRQ) {
		flags = CTXMON_EVF_IN_SOFTIRQ;
	} else if (!s->cur[wc]) {
		return; /* a task wakes it: one must run there */
	}
	sim_charge(s, t);
	/* as the kernel does: the waking names the CPU it last ran on; if
	 * the wake puts it elsewhere, it moves it (in TASK_WAKING) before
	 * the wakeup, which names the CPU it is queued on */
	prev = t->cpu >= 0 ? t->cpu : c;
	wake(s->a, CTXMON_EV_WAKING, s->now, wc, s->cur[wc], t->tid, prev,
	     flags);
	if (prev != c) {
		struct ctxmon_event m = synth_migrate(s->now, wc, s->cur[wc],
						      t->tid, prev, c,
						      CTXMON_EVF_WAKE_MOVE);

		ctxmon_account_feed(s->a, &m);
	}
	t->waker = s->cur[wc];
	t->lat = true;
	t->lat_start = s->now;
	if (t->state == T_NEW)
		t->bk = K_INITIAL;
	t->state = T_RQ;
	t->cpu = c;
	s->now += 1 + rnd(s, 3);
	if (!s->thin)
		wake(s->a, CTXMON_EV_WAKEUP, s->now, wc, s->cur[wc], t->tid, c,
		     flags);
	t->wake_ts = s->now;
	t->wake_cpu = c;
	t->wpending = true;
	s->now += 1 + rnd(s, 5);
	if (!s->cur[c]) {
		sim_switch(s, c, "R", i);
		return;
	}
	p = by_tid(s, s->cur[c]);
	/* A yielding or otherwise self-switching task is not preempted. */
	if (rnd(s, 2) && p->run_since <= t->wake_ts)
		act_invol(s, c,
			  t->wctx == CTXMON_WAKE_TASK ? CTXMON_INVOL_WAKEUP :
							CTXMON_INVOL_WAKEUP_IRQ,
			  i);
}

static void act_irq(struct sim *s, int cpu)
{
	struct stask *p = s->cur[cpu] ? by_tid(s, s->cur[cpu]) : NULL;
	uint64_t d = 1 + rnd(s, 100), d2 = 1 + rnd(s, 30);

	if (rnd(s, 2)) {
		irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_IRQ_ENTRY);
		s->now += d;
		irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_IRQ_EXIT);
		if (p) {
			p->tr.irq_count++;
			p->tr.irq_ns += d;
		}
		return;
	}
	irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_SOFTIRQ_ENTRY);
	s->now += d;
	irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_IRQ_ENTRY);
	s->now += d2;
	irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_IRQ_EXIT);
	s->now += d;
	irq(s->a, s->now, cpu, s->cur[cpu], CTXMON_EV_SOFTIRQ_EXIT);
	if (p) {
		p->tr.sirq_count++;
		p->tr.sirq_ns += 2 * d;
		p->tr.irq_count++;
		p->tr.irq_ns += d2;
	}
}

static void act_exit(struct sim *s, int cpu)
{
	struct stask *p = by_tid(s, s->cur[cpu]);
	int ni = rq_pick(s, cpu, false, p);
	int cause;

	if (p->tid % 100 == 0)
		return; /* leaders stay: no zombies, no group exits here */
	if (p->known && p->sys < 0 && rnd(s, 2)) {
		sim_sys_ev(s, p, true, 7); /* exit() */
		s->now += 1;
	}
	if (!p->known)
		cause = CTXMON_EXIT_UNKNOWN;
	else if (p->sys >= 0 && sim_sys[p->sys] == NR_EXIT)
		cause = CTXMON_EXIT_SYSCALL;
	else
		cause = CTXMON_EXIT_SIGNAL;
	p->tr.exit[cause]++;
	sim_out(s, cpu, T_DEAD, K_ONCPU, 0);
	sim_switch(s, cpu, "X", ni);
}

static void step(struct sim *s)
{
	int cpu = (int)rnd(s, SIM_CPUS);
	struct stask *p = s->cur[cpu] ? by_tid(s, s->cur[cpu]) : NULL;
	int ni;

	/* Mostly short steps, sometimes past the wakeup window. */
	s->now += rnd(s, 8) ? 1 + rnd(s, 200) : WINDOW + rnd(s, 3000);
	switch (rnd(s, 12)) {
	case 0:
	case 1:
		act_wake(s);
		break;
	case 2: /* syscall in or out (not yield/exit, which have actions) */
		if (!p)
			break;
		if (p->sys < 0)
			sim_sys_ev(s, p, true, (int)rnd(s, 6));
		else
			sim_sys_ev(s, p, false, p->sys);
		break;
	case 3:
	case 4:
		if (p)
			act_block(s, cpu);
		break;
	case 5: /* yield, with company */
		if (!p || (p->known && p->sys >= 0) ||
		    (ni = rq_pick(s, cpu, false, p)) < 0)
			break;
		sim_sys_ev(s, p, true, 6);
		s->now += 1;
		act_invol(s, cpu, CTXMON_INVOL_YIELD, ni);
		break;
	case 6:
	case 7: /* tick */
		if (p && (ni = rq_pick(s, cpu, true, p)) >= 0)
			act_invol(s, cpu, CTXMON_INVOL_SLICE, ni);
		break;
	case 8: /* schedule() while runnable inside a syscall */
		if (p && p->known && p->sys >= 0 &&
		    (ni = rq_pick(s, cpu, false, p)) >= 0)
			act_invol(s, cpu, CTXMON_INVOL_OTHER, ni);
		break;
	case 9:
	case 10:
		act_irq(s, cpu);
		break;
	case 11:
		if (p && !rnd(s, 8))
			act_exit(s, cpu);
		break;
	}
}

static void check_task(const struct stask *t, const struct ctxmon_causes *c)
{
	const struct truth *tr = &t->tr;

	for (int k = 0; k < CTXMON_INVOL__MAX; k++) {
		assert_int_equal(c->invol[k].count, tr->invol[k]);
		assert_int_equal(c->invol[k].wait_ns, tr->wait[K_INVOL][k]);
		assert_int_equal(c->invol[k].sleep_ns, 0);
	}
	for (int k = 0; k < CTXMON_VOL__MAX; k++)
		assert_int_equal(c->vol[k].count, tr->vol[k]);
	for (int k = 1; k < CTXMON_VOL__MAX; k++) {
		assert_int_equal(c->vol[k].sleep_ns, tr->sleep[K_VOL][k]);
		assert_int_equal(c->vol[k].wait_ns, tr->wait[K_VOL][k]);
	}
	for (int k = 0; k < CTXMON_EXIT__MAX; k++)
		assert_int_equal(c->exit[k], tr->exit[k]);
	assert_int_equal(c->initial.sleep_ns, tr->sleep[K_INITIAL][0]);
	assert_int_equal(c->initial.wait_ns, tr->wait[K_INITIAL][0]);
	for (int k = 0; k < NSYS; k++) {
		uint64_t cnt = 0, sl = 0, wt = 0;

		for (size_t j = 0; j < c->nsys; j++) {
			if (c->sys[j].id != sim_sys[k])
				continue;
			cnt = c->sys[j].count;
			sl = c->sys[j].sleep_ns;
			wt = c->sys[j].wait_ns;
		}
		assert_int_equal(cnt, tr->sys_count[k]);
		assert_int_equal(sl, tr->sys_sleep[k]);
		assert_int_equal(wt, tr->sys_wait[k]);
	}
	assert_int_equal(c->irq_count, tr->irq_count);
	assert_int_equal(c->irq_ns, tr->irq_ns);
	assert_int_equal(c->softirq_count, tr->sirq_count);
	assert_int_equal(c->softirq_ns, tr->sirq_ns);
	assert_int_equal(c->lat.count, tr->lat_count);
	assert_int_equal(c->lat.sum_ns, tr->lat_sum);
	assert_int_equal(c->lat.max_ns, tr->lat_max);
	for (int k = 0; k < 4; k++)
		assert_int_equal(c->lat.ctx_count[k], tr->lat_ctx[k]);
}

static void check_pairs(struct sim *s)
{
	static uint64_t got[SIM_T + 1][SIM_T], gotp[SIM_T][SIM_T];
	struct ctxmon_pair *p;
	size_t n;
	uint64_t wakes = 0, preempts = 0, got_w = 0, got_p = 0;

	memset(got, 0, sizeof(got));
	memset(gotp, 0, sizeof(gotp));
	p = ctxmon_account_pairs(s->a, true, &n);
	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		struct stask *to = by_tid(s, p[i].to_tid);
		struct stask *from = by_tid(s, p[i].from_tid);

		assert_non_null(to);
		if (p[i].kind == CTXMON_PAIR_PREEMPT) {
			assert_non_null(from);
			gotp[idx_of(s, from)][idx_of(s, to)] += p[i].count;
			got_p += p[i].count;
		} else {
			int w = from ? idx_of(s, from) : SIM_T;

			/* irq and softirq wakeups are apart in the pairs */
			got[w][idx_of(s, to)] += p[i].count;
			got_w += p[i].count;
		}
	}
	for (int i = 0; i <= SIM_T; i++)
		for (int j = 0; j < SIM_T; j++)
			assert_int_equal(got[i][j], s->wakes[i][j]);
	for (int i = 0; i < SIM_T; i++)
		for (int j = 0; j < SIM_T; j++)
			assert_int_equal(gotp[i][j], s->preempts[i][j]);
	for (int i = 0; i < SIM_T; i++)
		for (int j = 0; j < SIM_T; j++) {
			preempts += s->preempts[i][j];
			wakes += s->wakes[i][j];
		}
	for (int j = 0; j < SIM_T; j++)
		wakes += s->wakes[SIM_T][j];
	/* every pair in the books was reported */
	assert_int_equal(got_p, preempts);
	assert_int_equal(got_w, wakes);
	free(p);
}

static void run_sim(uint64_t seed, int steps, bool thin)
{
	struct sim s;
	struct ctxmon_cpu_latency *cl;
	struct rows r;
	size_t n;

	memset(&s, 0, sizeof(s));
	s.rng = seed;
	s.thin = thin;
	s.a = acc_new();
	s.now = 1000;
	for (int i = 0; i < SIM_T; i++) {
		s.t[i].tid = tid_at(i);
		s.t[i].state = T_NEW;
		s.t[i].sys = -1;
		s.t[i].bk = K_INITIAL;
		s.t[i].cpu = -1;
	}
	/* one task on each CPU to begin with */
	for (int c = 0; c < SIM_CPUS; c++) {
		struct stask *t = &s.t[c * 4];

		sw(s.a, s.now, c, 0, "R", t->tid);
		s.cur[c] = t->tid;
		t->state = T_RUN;
		t->cpu = c;
		t->run_since = s.now;
		t->since = s.now;
		t->bk = K_ONCPU;
	}
	for (int i = 0; i < steps; i++)
		step(&s);
	for (int i = 0; i < SIM_T; i++)
		sim_charge(&s, &s.t[i]);
	ctxmon_account_finish(s.a, s.now);

	r = get_rows(s.a, CTXMON_ROWS_THREADS);
	assert_int_equal(r.n, SIM_T);
	for (int i = 0; i < SIM_T; i++)
		check_task(&s.t[i], crow(&r, s.t[i].tid));
	put_rows(&r);
	/* The run met every cause it can make, so the checks meant something. */
	{
		uint64_t inv[CTXMON_INVOL__MAX] = { 0 },
			 vol[CTXMON_VOL__MAX] = { 0 };
		uint64_t irqs = 0, lats = 0;

		for (int i = 0; i < SIM_T; i++) {
			for (int k = 0; k < CTXMON_INVOL__MAX; k++)
				inv[k] += s.t[i].tr.invol[k];
			for (int k = 0; k < CTXMON_VOL__MAX; k++)
				vol[k] += s.t[i].tr.vol[k];
			irqs += s.t[i].tr.irq_count + s.t[i].tr.sirq_count;
			lats += s.t[i].tr.lat_count;
		}
		for (int k = 0; k < CTXMON_INVOL__MAX; k++)
			assert_true(inv[k] > 0);
		assert_true(vol[CTXMON_VOL_SYSCALL] > 0);
		assert_true(vol[CTXMON_VOL_NOSYSCALL] > 0);
		assert_true(irqs > 0 && lats > 0);
	}
	r = get_rows(s.a, CTXMON_ROWS_PROCESSES);
	assert_int_equal(r.n, 2);
	put_rows(&r);
	check_pairs(&s);
	cl = ctxmon_account_cpu_latency(s.a, &n);
	assert_non_null(cl);
	assert_int_equal(n, SIM_CPUS);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(cl[i].lat.count, s.cpu_lat_count[cl[i].cpu]);
		assert_int_equal(cl[i].lat.sum_ns, s.cpu_lat_sum[cl[i].cpu]);
	}
	ctxmon_cpu_latency_free(cl, n);
	assert_int_equal(ctxmon_account_anomalies(s.a), 0);
	ctxmon_account_free(s.a);
}

static void test_simulation(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		run_sim(seed * 0x9e3779b97f4a7c15ull, 4000, false);
		run_sim(seed * 0x9e3779b97f4a7c15ull, 4000, true);
	}
}

int main(void)
{
	synth_tgid_fallback = tgid_of;
	synth_comm_fallback = "t";
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscall_names),
		cmocka_unit_test(test_fine_buckets),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_invol),
		cmocka_unit_test(test_vol),
		cmocka_unit_test(test_exits),
		cmocka_unit_test(test_irqs),
		cmocka_unit_test(test_rollup_reset),
		cmocka_unit_test(test_pair_targets),
		cmocka_unit_test(test_unseen_switch_in),
		cmocka_unit_test(test_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
