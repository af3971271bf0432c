/*
 * ctxmon/causes.h - why threads were switched out, and what it cost them.
 *
 * An extension of the accounting (ctxmon.h): enabled on an account with
 * ctxmon_account_enable_causes(), it watches the same ordered stream and
 * splits every switch-out of a thread by cause, every off-CPU interval by
 * the cause that began it, and every wakeup latency by where it ran and who
 * caused it.  Causes need the irq and raw_syscalls events
 * (CTXMON_EVENTS_IRQ | CTXMON_EVENTS_SYSCALL) in the stream; without them
 * what cannot be told is reported as unknown, never guessed.  How each
 * cause is decided, and its limits: docs/causes.md.
 *
 * Per thread, the parts always add up: the involuntary causes sum to
 * ctxmon_stats.involuntary, the voluntary ones (the syscall table plus
 * "no syscall" and "unknown") to .voluntary, the exit ones to .exit_switch,
 * and the off-CPU time of every bucket (plus "initial") to .wait_ns plus
 * the .sleep_ns states.
 *
 * Conventions as in ctxmon.h.  Arrays returned here are freed with the
 * _free function named in their comment; comm pointers in them live as long
 * as the account.
 */
#ifndef CTXMON_CAUSES_H
#define CTXMON_CAUSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ctxmon/ctxmon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Syscall names                                                       */
/* ------------------------------------------------------------------ */

/*
 * Name of syscall @id on @arch ("x86_64", "aarch64"; NULL: the architecture
 * this library was built for), or NULL when the table has no such number
 * or @arch is unknown.  The raw_syscalls events give the numbers of the
 * traced task's ABI: a 32-bit process on a 64-bit kernel has other numbers.
 */
const char *ctxmon_syscall_name(const char *arch, long id);
/* Number of syscall @name on @arch, or -ENOENT. */
long ctxmon_syscall_id(const char *arch, const char *name);
/* The architecture the library was built for ("x86_64", ...). */
const char *ctxmon_syscall_arch(void);

/* ------------------------------------------------------------------ */
/* Latency summaries                                                   */
/* ------------------------------------------------------------------ */

/*
 * A fine histogram: values below 2^(CTXMON_FINE_BITS + 1) ns have one
 * bucket per nanosecond; above, every power of two is cut into
 * 2^CTXMON_FINE_BITS equal buckets, so a bucket is never wider than 1/32
 * of its values (3.1%).  Values of 2^40 ns (18 min) and more share the
 * last bucket.  Each bucket lies inside one log2 bucket of ctxmon_latency,
 * so the log2 histogram is a sum of fine buckets.
 */
#define CTXMON_FINE_BITS 5
#define CTXMON_FINE_BUCKETS ((40 - CTXMON_FINE_BITS + 1) << CTXMON_FINE_BITS)

/* Bucket of @ns, and the smallest and largest value of bucket @i. */
unsigned ctxmon_fine_bucket(uint64_t ns);
uint64_t ctxmon_fine_lo(unsigned i);
uint64_t ctxmon_fine_hi(unsigned i);

/* Where a wakeup was raised (from the waking event's context flags). */
enum ctxmon_wake_ctx {
	CTXMON_WAKE_TASK = 0,	/* by a task (the waker) */
	CTXMON_WAKE_IRQ,	/* from a hard interrupt handler */
	CTXMON_WAKE_SOFTIRQ,	/* from a softirq */
	CTXMON_WAKE_UNKNOWN,	/* no sched_waking seen for it */
};

/* The context of a latency, kept for the maximum (ftrace's onmax().save()). */
struct ctxmon_lat_ctx {
	uint64_t ns;			/* the latency */
	uint64_t wake_ts;		/* when it was woken (or, woken before it
					 * had switched out, when it did) */
	uint64_t run_ts;		/* when it got on a CPU */
	int32_t tid;			/* the woken thread */
	int32_t waker_tid;		/* the waker; with an irq context, the
					 * task the interrupt hit; -1 unknown */
	int32_t waker_cpu;		/* where the wakeup was raised, -1 */
	int32_t cpu;			/* where it then ran */
	int32_t prev_tid;		/* who ran there just before it (0: idle) */
	uint8_t ctx;			/* enum ctxmon_wake_ctx */
	const char *comm, *waker_comm, *prev_comm;	/* NULL: unknown */
};

struct ctxmon_lat_summary {
	uint64_t count, sum_ns, min_ns, max_ns;
	/* Quantiles estimated from the fine histogram (see docs/causes.md):
	 * within one bucket width (3.1%) of the true value, and never
	 * outside [min_ns, max_ns]. */
	uint64_t p50_ns, p90_ns, p99_ns, p999_ns;
	uint64_t ctx_count[4];		/* by enum ctxmon_wake_ctx */
	struct ctxmon_lat_ctx max;
	uint64_t *fine;			/* CTXMON_FINE_BUCKETS counts, NULL when
					 * count is 0; freed with its row */
};

/* Estimate quantile @q (0..1) of a summary from its fine histogram. */
uint64_t ctxmon_lat_quantile(const struct ctxmon_lat_summary *l, double q);

/* ------------------------------------------------------------------ */
/* Causes                                                              */
/* ------------------------------------------------------------------ */

enum ctxmon_invol_cause {
	CTXMON_INVOL_WAKEUP,	/* the next task was woken onto this CPU by a
				 * task while it ran, just before (wakeup
				 * preemption) */
	CTXMON_INVOL_WAKEUP_IRQ,/* same, woken from irq or softirq context */
	CTXMON_INVOL_SLICE,	/* no such wakeup: its slice ended (tick) */
	CTXMON_INVOL_YIELD,	/* it called sched_yield() */
	CTXMON_INVOL_OTHER,	/* runnable, it called schedule() inside
				 * another syscall */
	CTXMON_INVOL__MAX
};

enum ctxmon_vol_cause {
	CTXMON_VOL_SYSCALL,	/* blocked in a syscall: the sum of the table */
	CTXMON_VOL_NOSYSCALL,	/* blocked outside any syscall (page fault) */
	CTXMON_VOL_UNKNOWN,	/* no syscall event seen for the thread yet
				 * (kernel threads, or syscalls not traced) */
	CTXMON_VOL__MAX
};

enum ctxmon_exit_cause {
	CTXMON_EXIT_SYSCALL,	/* it called exit() or exit_group() */
	CTXMON_EXIT_GROUP,	/* another thread of its process called
				 * exit_group() */
	CTXMON_EXIT_SIGNAL,	/* neither: a fatal signal */
	CTXMON_EXIT_UNKNOWN,	/* syscalls not traced for it */
	CTXMON_EXIT__MAX
};

/* Switch-outs of one cause and the off-CPU time that followed them. */
struct ctxmon_offcpu {
	uint64_t count;
	uint64_t sleep_ns;	/* asleep (S, D, other), until woken */
	uint64_t wait_ns;	/* runnable, until back on a CPU */
};

/* One row of the per-syscall table of voluntary switches. */
struct ctxmon_sys_cause {
	long id;
	uint64_t count;		/* voluntary switch-outs in it */
	uint64_t sleep_ns, wait_ns;
	uint64_t max_ns;	/* longest off-CPU interval in it (one still
				 * open counts as far as it went) */
};

/* Causes of one thread or process, matching the ctxmon_stats row with the
 * same tid and gen. */
struct ctxmon_causes {
	pid_t tid;		/* as in ctxmon_stats: tid, or a process' tgid */
	uint32_t gen;
	struct ctxmon_offcpu invol[CTXMON_INVOL__MAX];
	struct ctxmon_offcpu vol[CTXMON_VOL__MAX];
	uint64_t exit[CTXMON_EXIT__MAX];
	struct ctxmon_offcpu initial;	/* off CPU since before its first
					 * switch-out was seen (asleep when
					 * capture began, or new); count 0 */
	struct ctxmon_sys_cause *sys;	/* nsys rows, most switches first */
	size_t nsys;
	uint64_t irq_count, irq_ns;	/* hard irq handlers run while it was
					 * on CPU (irq_handler_entry/exit) */
	uint64_t softirq_count, softirq_ns;	/* softirqs, less the hard
						 * irqs nested in them */
	struct ctxmon_lat_summary lat;	/* wakeup latency, in detail */
};

struct ctxmon_causes_opts {
	size_t sz;			/* sizeof(struct ctxmon_causes_opts) */
	const char *arch;		/* syscall numbering, NULL: this build's */
	/* A switch counts as a wakeup preemption when the next task was woken
	 * onto the CPU at most this long before it (0: 1 ms). */
	uint64_t wakeup_window_ns;
};

/*
 * Turn cause analysis on for @a, before its first event.  @o may be NULL.
 * An @arch without a syscall table leaves syscalls unnamed and yield and
 * exit() untold (counted as unknown).  Returns 0, -EBUSY when events were
 * already fed or causes are already on, -EINVAL, -ENOMEM.
 */
int ctxmon_account_enable_causes(struct ctxmon_account *a,
				 const struct ctxmon_causes_opts *o);

/*
 * Causes of the rows ctxmon_account_rows(@a, @kind, @all) gives at the
 * same point, in the same order.  NULL and errno on failure (EINVAL: causes
 * not enabled).  Free with ctxmon_causes_free(rows, *n).
 */
struct ctxmon_causes *ctxmon_account_causes(const struct ctxmon_account *a,
					    enum ctxmon_rows kind, bool all,
					    size_t *n);
void ctxmon_causes_free(struct ctxmon_causes *rows, size_t n);

/* Wakeup latency of the threads that ran on each CPU, by CPU. */
struct ctxmon_cpu_latency {
	int cpu;
	struct ctxmon_lat_summary lat;
};
/* NULL and errno on failure; free with ctxmon_cpu_latency_free(). */
struct ctxmon_cpu_latency *ctxmon_account_cpu_latency(
	const struct ctxmon_account *a, size_t *n);
void ctxmon_cpu_latency_free(struct ctxmon_cpu_latency *c, size_t n);

enum ctxmon_pair_kind {
	CTXMON_PAIR_WAKE,	/* from woke to: count, latency of to */
	CTXMON_PAIR_PREEMPT,	/* from, just woken, preempted to */
};

/* Who wakes whom, and who preempts whom. */
struct ctxmon_pair {
	uint8_t kind;		/* enum ctxmon_pair_kind */
	uint8_t ctx;		/* enum ctxmon_wake_ctx of the wakeups */
	int32_t from_tid;	/* -1: an interrupt (ctx) or unknown */
	int32_t to_tid;
	const char *from_comm, *to_comm;	/* NULL: unknown */
	bool target;		/* one side was a target task */
	uint64_t count;
	uint64_t lat_sum_ns, lat_max_ns;	/* WAKE: wakeup latency of to */
};

/*
 * Every pair seen (only those with a target side unless @all), most
 * frequent first.  A pair is keyed by tids: a reused tid shares its pairs.
 * NULL and errno on failure; free with free().
 */
struct ctxmon_pair *ctxmon_account_pairs(const struct ctxmon_account *a,
					 bool all, size_t *n);

/* Short names: "wakeup", "wakeup_irq", "slice", "yield", "other";
 * "syscall", "no_syscall", "unknown"; "syscall", "group", "signal",
 * "unknown"; "task", "irq", "softirq", "unknown". */
const char *ctxmon_invol_cause_name(unsigned c);
const char *ctxmon_vol_cause_name(unsigned c);
const char *ctxmon_exit_cause_name(unsigned c);
const char *ctxmon_wake_ctx_name(unsigned c);

#ifdef __cplusplus
}
#endif
#endif
