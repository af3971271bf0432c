/*
 * causes.h - the contract between the accounting (account.c) and the cause
 * analysis (causes.c).
 *
 * The account owns task identity (tid, generation, process, comm, target)
 * and the state machine that charges every nanosecond of a task to run,
 * wait or sleep.  The cause analysis hangs one struct causes_task on each
 * account row and is called at the points where that state machine moves,
 * so its splits add up to the account's totals by construction, and both
 * agree on which row an event belongs to.  Everything else it needs
 * (syscalls, irqs, wakers) it reads from the events themselves.
 */
#ifndef CTXMON_ANALYSIS_CAUSES_H
#define CTXMON_ANALYSIS_CAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/causes.h>

struct causes;
struct causes_task;

/* A task as the account knows it, for pairs and latency contexts. */
struct causes_who {
	int32_t tid;
	const char *comm; /* interned by the account, NULL: unknown */
	bool target;
};

/* New analysis; NULL and errno on failure.  @o may be NULL. */
struct causes *causes__new(const struct ctxmon_causes_opts *o);
void causes__free(struct causes *cz);

/* State for a new account row; NULL when out of memory (the row then goes
 * untracked and the loss is counted in causes__anomalies()). */
struct causes_task *causes__task_new(struct causes *cz);
/* A thread carries on in a new row (exec by a non-leader thread): move its
 * transient state (syscall, pending wakeup, off-CPU cause), not counts. */
void causes__task_move(struct causes_task *to, struct causes_task *from);

/* @ns of off-CPU time, asleep or runnable, for the cause that began it. */
void causes__charge(struct causes_task *cx, bool asleep, uint64_t ns);

/* @cx's task migrates (@ev): where a wake queued it, without a wakeup. */
void causes__migrate(struct causes_task *cx, const struct ctxmon_event *ev);

/* @cx's task was woken while it ran and runs on: that wake ends there. */
void causes__woken_in_place(struct causes_task *cx);

/* A waking, wakeup or wakeup_new of @cx's task; @waker is the task
 * current at the event (ev->tid), as far as the account knows it. */
void causes__wake(struct causes *cz, struct causes_task *cx,
		  const struct ctxmon_event *ev,
		  const struct causes_who *waker);

/*
 * The wakeup latency of @who ended on @cpu at @ts, after @ns, when it
 * switched in after @prev_tid (-1: unknown, a switch-in the kernel never
 * traced), whom @prev_comm names; @waker_tid is the waker the account
 * holds for it.
 */
void causes__latency(struct causes *cz, struct causes_task *cx, int32_t cpu,
		     int32_t prev_tid, uint64_t ts, uint64_t ns,
		     int32_t waker_tid, const struct causes_who *who,
		     const char *prev_comm);

/*
 * Switch @ev at @ts, after the account handled it: @prev (NULL for idle or
 * untracked) switched out as @kind (enum ctxmon_switch_kind), @leader being
 * its process leader's state if known; @next switched in.
 */
void causes__switch(struct causes *cz, struct causes_task *prev,
		    struct causes_task *leader, unsigned kind,
		    struct causes_task *next, const struct ctxmon_event *ev,
		    uint64_t ts, const struct causes_who *pw,
		    const struct causes_who *nw);

/* A syscall, irq or loss event; @cur is the current task's state (NULL for
 * idle), @leader its process leader's. */
void causes__event(struct causes *cz, struct causes_task *cur,
		   struct causes_task *leader, const struct ctxmon_event *ev,
		   uint64_t ts);

/* Zero every count (a new interval); transient state is kept. */
void causes__reset(struct causes *cz);

/* Data lost to allocation failures. */
uint64_t causes__anomalies(const struct causes *cz);

/* Fill @out (zeroed by the caller, identity set) with @cx's causes; 0 or
 * -ENOMEM.  Free with ctxmon_causes_free(). */
int causes__row(const struct causes_task *cx, struct ctxmon_causes *out);
/* Add @cx's causes into the process row @p; 0 or -ENOMEM. */
int causes__row_add(struct ctxmon_causes *p, const struct causes_task *cx);
/* Sort @p's syscall table and estimate its quantiles. */
void causes__row_finish(struct ctxmon_causes *p);

struct ctxmon_cpu_latency *causes__cpu_latency(const struct causes *cz,
					       size_t *n);
struct ctxmon_pair *causes__pairs(const struct causes *cz, bool all, size_t *n);

/* ---- syscall tables (syscalls_*.c, generated) ----------------------- */

struct syscall_table {
	const char *arch;
	const char *const *names; /* by number, NULL: no such syscall */
	size_t n;
};

extern const struct syscall_table syscalls_x86_64;
extern const struct syscall_table syscalls_aarch64;

/* The table of @arch (NULL: this build's), or NULL when there is none. */
const struct syscall_table *syscall_table__find(const char *arch);

#endif
