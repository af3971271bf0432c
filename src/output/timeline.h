/*
 * timeline.h - the ordered stream as intervals: what each thread was doing
 * from when to when (running on a CPU, runnable, asleep in which state),
 * what each CPU ran, and who woke whom.  The exporters (Perfetto's
 * thread_state/sched shapes, SQLite, Chrome JSON) are written from these.
 *
 * The state rules are the accounting's (src/analysis/account.c): the same
 * switch-out classification, the same early-wakeup and wakeup/waking
 * pairing, the same span start (first event that shows a thread) and end
 * (its exit switch-out, or the finish time), so the sleep, runnable and
 * running time a thread's intervals add up to is the account's run_ns,
 * wait_ns and sleep_ns.  Memory grows with the number of threads, never
 * with the number of events.
 */
#ifndef CTXMON_OUTPUT_TIMELINE_H
#define CTXMON_OUTPUT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/event.h>

enum tl_state { TL_NEW, TL_RUNNING, TL_RUNNABLE, TL_SLEEP, TL_DEAD };

struct tl_thread {
	uint32_t utid;		/* 1.. in order of first sight; 0 is idle */
	int32_t tid, tgid;	/* tgid -1 until known */
	int32_t ppid;		/* forking task's process, -1 unknown */
	const char *comm;	/* last seen (the reader's string) */
	uint64_t start_ts, end_ts; /* first and last time seen */
	bool exited;
	bool migrated;		/* a migration was seen */
	bool took_over;		/* the leader's tid, taken over by an exec */
	/* state machine */
	uint8_t state;		/* enum tl_state */
	bool waked, early_wake, preempted;
	char sleep[8];		/* SLEEP: the prev_state letters */
	uint64_t state_ts;
	int32_t cpu;		/* RUNNING: where */
	int32_t waker;		/* RUNNABLE after a wakeup: who, -1 */
	int32_t early_waker;
	int32_t prio;
	int64_t sys;		/* syscall it is in (sys_enter seen), -1 */
	int64_t block_sys;	/* SLEEP: the syscall it blocked in, -1 */
	uint64_t wake_ts;	/* RUNNABLE: when the wakeup came, 0 none */
	uint64_t flow;		/* id of the wakeup that made it runnable */
};

/* One interval of a thread's state; Perfetto's thread_state row. */
struct tl_span {
	uint64_t ts, dur;
	int32_t cpu;		/* Running: the CPU; else -1 */
	const char *state;	/* "Running", "R", "R+", "S", "D", ... */
	int32_t waker_tid;	/* R after a wakeup: the waker, -1 */
	uint32_t waker_utid;	/* 0: none */
	int64_t block_sys;	/* S/D: the syscall it blocked in, -1 */
	uint64_t flow;		/* R after a wakeup: that wakeup's id, 0 */
	bool preempted;		/* R+ */
	bool cut;		/* still open when the timeline finished */
	bool ran;		/* ended by its switch-in: for R after a
				 * wakeup, dur is the wakeup latency */
	const char *preempted_by; /* R+: comm of the task that took the CPU */
};

struct tl_ops {
	/* A thread's state interval ended (or was cut at finish). */
	void (*span)(void *ctx, const struct tl_thread *t,
		     const struct tl_span *s);
	/* A CPU's run interval ended: @t ran (NULL: idle) from @ts for @dur,
	 * then switched out in @end_state (NULL: cut at finish). */
	void (*sched)(void *ctx, int32_t cpu, const struct tl_thread *t,
		      uint64_t ts, uint64_t dur, const char *end_state,
		      int32_t prio);
	/* @waker (NULL: unknown or an interrupt) woke @t at @ts; @id is
	 * the wakeup's flow id (>0). */
	void (*wake)(void *ctx, const struct tl_thread *waker,
		     const struct tl_thread *t, int32_t cpu, uint64_t ts,
		     uint64_t id);
	/* First sight of a thread. */
	void (*thread)(void *ctx, const struct tl_thread *t);
	void *ctx;
};

struct timeline;

/* NULL and errno on failure; free with timeline__free(). */
struct timeline *timeline__new(const struct tl_ops *ops);
void timeline__free(struct timeline *tl);
/* A task declared by the recording (before its events); -ENOMEM. */
int timeline__task(struct timeline *tl, int32_t tid, int32_t tgid,
		   const char *comm);
/* Feed one event (time order); -ENOMEM when a table could not grow. */
int timeline__feed(struct timeline *tl, const struct ctxmon_event *ev);
/* Close every open interval at @ts. */
void timeline__finish(struct timeline *tl, uint64_t ts);
/* Every thread seen, by utid (index i is utid i + 1). */
const struct tl_thread *timeline__threads(const struct timeline *tl,
					  size_t *n);
/* The thread known by @tid now, or NULL. */
const struct tl_thread *timeline__find(const struct timeline *tl, int32_t tid);

#endif
