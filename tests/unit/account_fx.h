/*
 * account_fx.h - what the account's unit tests share: building events
 * (synth.h) and reading rows, and the identities every result satisfies.
 */
#ifndef CTXMON_TEST_ACCOUNT_FX_H
#define CTXMON_TEST_ACCOUNT_FX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ctxmon/ctxmon.h>

#include "synth.h"

/* ---- building events (tests/unit/synth.h) ---------------------------- */

static inline void wake(struct ctxmon_account *a, unsigned type, uint64_t ts, int cpu,
		 int cur, int tid)
{
	struct ctxmon_event e = synth_wake(type, ts, cpu, cur, tid, cpu, 0);

	ctxmon_account_feed(a, &e);
}

static inline struct ctxmon_account *acc_new(enum ctxmon_target_kind k,
				      const pid_t *pids, size_t n, pid_t root)
{
	struct ctxmon_account_opts o = {
		.sz = sizeof(o),
		.target = k,
		.pids = pids,
		.npids = n,
		.root_pid = root,
	};
	struct ctxmon_account *a = ctxmon_account_new(&o);

	assert_non_null(a);
	return a;
}

/* ---- reading rows ------------------------------------------------- */

static inline const struct ctxmon_stats *row(const struct ctxmon_stats *r, size_t n,
				      int tid, uint32_t gen)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].tid == tid && r[i].gen == gen)
			return &r[i];
	fail_msg("no row for tid %d gen %u", tid, gen);
	return NULL;
}

static inline const struct ctxmon_cpu_stats *cpu_row(const struct ctxmon_cpu_stats *c,
					      size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].cpu == cpu)
			return &c[i];
	fail_msg("no row for cpu %d", cpu);
	return NULL;
}

static inline uint64_t sleep_sum(const struct ctxmon_stats *r)
{
	return r->sleep_ns[CTXMON_SLEEP_S] + r->sleep_ns[CTXMON_SLEEP_D] +
	       r->sleep_ns[CTXMON_SLEEP_OTHER];
}

/* The per-thread and per-CPU identities every result must satisfy. */
static inline void check_sums(const struct ctxmon_account *a)
{
	struct ctxmon_stats *r;
	struct ctxmon_cpu_stats *c;
	size_t n;

	r = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	for (size_t i = 0; i < n; i++) {
		assert_true(r[i].tid > 0);
		assert_true(r[i].last_ts >= r[i].first_ts);
		assert_int_equal(r[i].run_ns + r[i].wait_ns + sleep_sum(&r[i]),
				 r[i].last_ts - r[i].first_ts);
		assert_int_equal(r[i].switch_out, r[i].voluntary +
							  r[i].involuntary +
							  r[i].exit_switch);
	}
	free(r);
	c = ctxmon_account_cpus(a, &n);
	assert_non_null(c);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(c[i].busy_ns + c[i].idle_ns,
				 c[i].last_ts - c[i].first_ts);
	free(c);
}

#endif
