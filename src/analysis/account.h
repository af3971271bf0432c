/*
 * analysis/account.h - the account's state, shared by its two halves:
 * account.c (events in: the per-task and per-CPU state machine) and
 * account_rows.c (numbers out: rows, process roll-up, causes).
 */
#ifndef CTXMON_ANALYSIS_ACCOUNT_H
#define CTXMON_ANALYSIS_ACCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "analysis/causes.h"

enum tstate { T_NEW, T_RUNNING, T_RUNNABLE, T_SLEEP, T_DEAD };

struct task {
	struct ctxmon_stats st;
	const char *ev_comm; /* event pointer st.comm was interned from */
	uint64_t state_ts; /* when the current state began */
	uint64_t lat_ts; /* start of the pending wakeup latency */
	int32_t lat_waker;
	int32_t early_waker;
	int32_t cpu; /* RUNNING: where */
	uint32_t pgen; /* generation of its process, for rollups */
	uint8_t state; /* enum tstate */
	uint8_t sleep; /* SLEEP: enum ctxmon_sleep_state */
	bool in_span; /* first_ts is valid in this interval */
	bool lat_pending; /* a wakeup awaits its switch-in */
	bool waked; /* a waking not yet followed by its wakeup */
	bool early_wake; /* woken while still on its CPU */
	bool group_gone; /* a leader: its process's last thread exited, so
			  * it reaps no child from then on */
	uint64_t exit_ts; /* its sched_process_exit, 0: none seen */
	struct causes_task *cx; /* cause analysis, NULL when off */
};

struct cpu {
	struct ctxmon_cpu_stats st;
	uint64_t state_ts;
	int32_t cur; /* tid on it since its last switch */
	bool seen, in_span;
};

struct slot {
	int32_t tid;
	uint32_t idx; /* into tasks[], EMPTY when free */
};

#define EMPTY UINT32_MAX

struct ctxmon_account {
	struct ctxmon_account_opts opts;
	pid_t *pids; /* sorted copy of opts.pids */
	struct task *tasks;
	size_t ntasks, cap;
	struct slot *hash;
	size_t hcap; /* power of two */
	struct cpu *cpus;
	size_t ncpus;
	struct strtab *strs;
	const char *empty; /* comm of a task whose comm was never seen */
	const char *last_ev_comm, *last_comm; /* one-entry intern cache */
	uint64_t now; /* latest time seen, events never go below */
	uint64_t anomalies;
	struct causes *cz; /* cause analysis, NULL when off */
	bool fed; /* an event was fed */
	size_t ndead; /* tasks in T_DEAD in tasks[] */
	size_t compact_at; /* ndead that folds: 2 x opts.exited_keep, or
			    * SIZE_MAX (never) */
	size_t rows_max; /* rows that fit without growing tasks[] or the hash */
	struct fold fold; /* exited tasks folded past opts.exited_keep */
};

static inline size_t hash_tid(int32_t tid, size_t cap)
{
	return (size_t)(((uint32_t)tid * 2654435761u) & (cap - 1));
}

static inline struct task *task_find(const struct ctxmon_account *a,
				     int32_t tid)
{
	size_t i = hash_tid(tid, a->hcap);

	for (;;) {
		const struct slot *s = &a->hash[i];

		if (s->idx == EMPTY)
			return NULL;
		if (s->tid == tid)
			return &a->tasks[s->idx];
		i = (i + 1) & (a->hcap - 1);
	}
}


static inline void stats_init(struct ctxmon_stats *st)
{
	st->lat.max_waker_tid = -1;
	st->lat.max_cpu = -1;
	st->lat.max_prev_tid = -1;
}

/* Row and CPU helpers both files use. */
static inline void hash_set(struct slot *h, size_t cap, int32_t tid, uint32_t idx)
{
	size_t i = hash_tid(tid, cap);

	while (h[i].idx != EMPTY && h[i].tid != tid)
		i = (i + 1) & (cap - 1);
	h[i].tid = tid;
	h[i].idx = idx;
}

static inline bool alive(const struct task *t)
{
	return t->state != T_NEW && t->state != T_DEAD;
}

static inline void cpu_advance(struct cpu *c, uint64_t ts)
{
	uint64_t d = ts - c->state_ts;

	if (c->cur == 0)
		c->st.idle_ns += d;
	else
		c->st.busy_ns += d;
	c->state_ts = ts;
	c->st.last_ts = ts;
}

/* Shared by account.c (the event state machine) and account_life.c (the
 * life cycle): room for @k more rows; a new row for @tid (room reserved);
 * set a row's tgid; charge the time up to @ts to a task's state; take the
 * oldest @k exited rows out, folded by comm into a->fold when @fold
 * (between events only, never with causes on). */
int account__reserve(struct ctxmon_account *a, size_t k);
struct task *account__task_create(struct ctxmon_account *a, int32_t tid,
				  uint32_t gen);
void account__set_tgid(struct ctxmon_account *a, struct task *t,
		       int32_t tgid);
void account__task_advance(struct task *t, uint64_t ts);
void account__compact(struct ctxmon_account *a, size_t k, bool fold);

#endif
