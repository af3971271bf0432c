/*
 * synth.h - synthetic scheduler events for the unit tests, one builder
 * shared by every test (account, causes, rows...).
 *
 * A test names its tasks in a table (synth_use()); events about a tid not
 * in the table take their tgid and comm from the fallbacks, which a test
 * may set (e.g. "the process of tid T is T / 100 * 100").  Builders return
 * the event; the feeders hand it to an account.
 */
#ifndef CTXMON_TEST_SYNTH_H
#define CTXMON_TEST_SYNTH_H

#include <string.h>

#include <ctxmon/ctxmon.h>

struct who {
	int tid, tgid;
	const char *comm;
};

static const struct who *synth_whos;
static size_t synth_nwhos;
/* For tids not in the table: their tgid (NULL: -1) and comm (NULL). */
static int (*synth_tgid_fallback)(int tid);
static const char *synth_comm_fallback;

static inline void use_whos(const struct who *w, size_t n)
{
	synth_whos = w;
	synth_nwhos = n;
}

static inline struct who synth_who(int tid)
{
	struct who w = { tid, -1, synth_comm_fallback };

	if (tid == 0) {
		w.tgid = 0;
		w.comm = "swapper";
		return w;
	}
	for (size_t i = 0; i < synth_nwhos; i++)
		if (synth_whos[i].tid == tid)
			return synth_whos[i];
	if (synth_tgid_fallback)
		w.tgid = synth_tgid_fallback(tid);
	return w;
}

static inline struct ctxmon_event ev_at(uint64_t ts, int cpu, int cur,
					unsigned type)
{
	struct ctxmon_event e;

	memset(&e, 0, sizeof(e));
	e.ts = ts;
	e.cpu = cpu;
	e.type = (uint16_t)type;
	e.tid = cur;
	e.tgid = synth_who(cur).tgid;
	return e;
}

/* Switch on @cpu from @prev (state as the kernel prints it: R, R+, S, D,
 * I, X, Z) to @next. */
static inline struct ctxmon_event synth_switch(uint64_t ts, int cpu, int prev,
					       const char *state, int next)
{
	struct ctxmon_event e = ev_at(ts, cpu, prev, CTXMON_EV_SWITCH);

	e.sw.prev_tid = prev;
	e.sw.prev_tgid = synth_who(prev).tgid;
	e.sw.prev_comm = synth_who(prev).comm;
	e.sw.next_tid = next;
	e.sw.next_tgid = synth_who(next).tgid;
	e.sw.next_comm = synth_who(next).comm;
	e.sw.preempt = strchr(state, '+') != NULL;
	switch (state[0]) {
	case 'R':
		e.sw.prev_state = CTXMON_STATE_RUNNING;
		e.sw.kind = CTXMON_SW_INVOLUNTARY;
		break;
	case 'S':
		e.sw.prev_state = CTXMON_STATE_S;
		e.sw.kind = CTXMON_SW_VOLUNTARY;
		break;
	case 'D':
		e.sw.prev_state = CTXMON_STATE_D;
		e.sw.kind = CTXMON_SW_VOLUNTARY;
		break;
	case 'I':
		e.sw.prev_state = CTXMON_STATE_I;
		e.sw.kind = CTXMON_SW_VOLUNTARY;
		break;
	case 'X':
		e.sw.prev_state = CTXMON_STATE_X;
		e.sw.kind = CTXMON_SW_EXIT;
		break;
	case 'Z':
		e.sw.prev_state = CTXMON_STATE_Z;
		e.sw.kind = CTXMON_SW_EXIT;
		break;
	default:
		fail_msg("bad state %s", state);
	}
	return e;
}

/* @tid moved from @from to @to on @cpu while @cur ran there (@flags:
 * CTXMON_EVF_WAKE_MOVE for a wake placing it). */
static inline struct ctxmon_event synth_migrate(uint64_t ts, int cpu, int cur,
						int tid, int from, int to,
						unsigned flags)
{
	struct ctxmon_event e = ev_at(ts, cpu, cur, CTXMON_EV_MIGRATE);

	e.flags = (uint16_t)flags;
	e.migrate.tid = tid;
	e.migrate.orig_cpu = from;
	e.migrate.dest_cpu = to;
	return e;
}

/* A waking (or wakeup, wakeup_new) of @tid queued on @target, raised on
 * @cpu while @cur ran there, with context @flags. */
static inline struct ctxmon_event synth_wake(unsigned type, uint64_t ts,
					     int cpu, int cur, int tid,
					     int target, unsigned flags)
{
	struct ctxmon_event e = ev_at(ts, cpu, cur, type);

	e.flags = (uint16_t)flags;
	e.wake.tid = tid;
	e.wake.target_cpu = target;
	e.wake.comm = synth_who(tid).comm;
	return e;
}

static inline struct ctxmon_event synth_fork(uint64_t ts, int cpu, int parent,
					     int child, int child_tgid,
					     const char *comm)
{
	struct ctxmon_event e = ev_at(ts, cpu, parent, CTXMON_EV_FORK);

	e.fork.parent_tid = parent;
	e.fork.child_tid = child;
	e.fork.child_tgid = child_tgid;
	e.fork.child_comm = comm;
	return e;
}

static inline struct ctxmon_event synth_exec(uint64_t ts, int cpu, int tid,
					     int old_tid, const char *comm)
{
	struct ctxmon_event e = ev_at(ts, cpu, tid, CTXMON_EV_EXEC);

	e.exec.tid = tid;
	e.exec.old_tid = old_tid;
	e.exec.comm = comm;
	return e;
}

static inline struct ctxmon_event synth_exit(uint64_t ts, int cpu, int tid)
{
	struct ctxmon_event e = ev_at(ts, cpu, tid, CTXMON_EV_EXIT);

	e.exit.tid = tid;
	e.exit.comm = synth_who(tid).comm;
	return e;
}

static inline struct ctxmon_event synth_sys(uint64_t ts, int cpu, int tid,
					    bool enter, long id)
{
	struct ctxmon_event e = ev_at(
		ts, cpu, tid, enter ? CTXMON_EV_SYS_ENTER : CTXMON_EV_SYS_EXIT);

	e.sys.id = id;
	return e;
}

static inline struct ctxmon_event synth_irq(uint64_t ts, int cpu, int cur,
					    unsigned type, int vec)
{
	struct ctxmon_event e = ev_at(ts, cpu, cur, type);

	e.irq.vec = vec;
	return e;
}

static inline struct ctxmon_event synth_lost(uint64_t ts, int cpu,
					     uint64_t count)
{
	struct ctxmon_event e = ev_at(ts, cpu, 0, CTXMON_EV_LOST);

	e.lost.count = count;
	e.lost.start_ts = e.lost.end_ts = ts;
	return e;
}

/* ---- feeding an account -------------------------------------------- */

static inline void sw(struct ctxmon_account *a, uint64_t ts, int cpu, int prev,
		      const char *state, int next)
{
	struct ctxmon_event e = synth_switch(ts, cpu, prev, state, next);

	ctxmon_account_feed(a, &e);
}

static inline void fork_ev(struct ctxmon_account *a, uint64_t ts, int cpu,
			   int parent, int child, int child_tgid,
			   const char *comm)
{
	struct ctxmon_event e = synth_fork(ts, cpu, parent, child, child_tgid,
					   comm);

	ctxmon_account_feed(a, &e);
}

static inline void exec_ev(struct ctxmon_account *a, uint64_t ts, int cpu,
			   int tid, int old_tid, const char *comm)
{
	struct ctxmon_event e = synth_exec(ts, cpu, tid, old_tid, comm);

	ctxmon_account_feed(a, &e);
}

static inline void exit_ev(struct ctxmon_account *a, uint64_t ts, int cpu,
			   int tid)
{
	struct ctxmon_event e = synth_exit(ts, cpu, tid);

	ctxmon_account_feed(a, &e);
}

#endif
