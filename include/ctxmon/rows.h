/*
 * ctxmon/rows.h - per-thread, per-process and per-CPU rows, whichever
 * backend ran, and what a backend can show.
 *
 * A streaming backend delivers events that an account (ctxmon_account_*)
 * turns into numbers; a counting backend (in-kernel aggregation, /proc
 * sampling) reads finished numbers from the kernel.  A rows object hides
 * the difference: it hands back snapshots of the whole run or of the
 * interval since the previous snapshot, with the process roll-up, the
 * folding of exited threads and the per-CPU numbers computed here, once.
 * Outputs ask a session for its capabilities (CTXMON_CAP_*), never for a
 * backend's name.
 *
 * Conventions as in ctxmon.h: 0 or a negative errno; constructors return
 * NULL and set errno; every _free()/_clear() accepts NULL.
 */
#ifndef CTXMON_ROWS_H
#define CTXMON_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/ctxmon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Capabilities of a backend                                           */
/* ------------------------------------------------------------------ */

#define CTXMON_CAP_EVENTS	(1u << 0) /* delivers events to the poll
					   * callback (feed an account) */
#define CTXMON_CAP_COUNTS	(1u << 1) /* counts in the kernel or samples:
					   * rows are read, no events */
#define CTXMON_CAP_WAKEUPS	(1u << 2) /* sees wakeups: wakeup latency,
					   * sleep apart from runnable wait */
#define CTXMON_CAP_EXACT	(1u << 3) /* every switch counted, none
					   * sampled away */
#define CTXMON_CAP_EXIT_TAIL	(1u << 4) /* sees a dying thread's switches
					   * after its exit event */
#define CTXMON_CAP_CPUS		(1u << 5) /* per-CPU busy and idle time */
#define CTXMON_CAP_MIGRATIONS	(1u << 6) /* counts migrations */
#define CTXMON_CAP_TEXT		(1u << 7) /* parses the kernel's text output:
					   * the slowest reader, the first to
					   * lose events */
#define CTXMON_CAP_SAMPLED	(1u << 8) /* rows are counters read one
					   * thread at a time: a row's
					   * last_ts is when its counters
					   * were read, so an interval's rate
					   * is its count over its own span
					   * (last_ts - first_ts), not over
					   * the interval's length */

#define CTXMON_CAP_ORPHANS	(1u << 9) /* marks every process its parent
					   * will not reap (ORPHAN events or
					   * row marks): the comparison with
					   * the kernel needs no guess by the
					   * times */
#define CTXMON_CAP_KINDS	(1u << 10) /* tells voluntary from
					   * involuntary by the task's own
					   * counters, as the kernel counts
					   * them, not by the state the
					   * tracepoint shows (a signal-cut
					   * sleep, ctxmon/features.h) */
#define CTXMON_CAP_ORPHANS_MANY	(1u << 11) /* with CTXMON_CAP_ORPHANS:
					   * an exit's marks cover up to
					   * CTXMON_ORPHAN_WALK_MANY children,
					   * not CTXMON_ORPHAN_WALK */
#define CTXMON_CAP_STATE_EARLY	(1u << 12) /* reads a switch's state before
					   * it takes the switch's time (perf
					   * samples, bpf records; the ftrace
					   * ring stamps first): a CPU held
					   * up between the two shows a state
					   * older than the time
					   * (CTXMON_ACCOUNT_NO_ZOMBIE_TIMES) */
#define CTXMON_CAP_PID_FILTER	(1u << 13) /* follows a command through the
					   * kernel's pid filter (ftrace's
					   * set_event_pid with event-fork),
					   * which drops a pid when the task
					   * that had it before is freed: a
					   * process given the pid by then
					   * loses its switches, with nothing
					   * lost (a full pid space) */

/* Children of one exiting process whose marks a CTXMON_CAP_ORPHANS backend
 * sets; past them, the comparison with the kernel guesses by the times. */
#define CTXMON_ORPHAN_WALK	128
#define CTXMON_ORPHAN_WALK_MANY	32768

/* What the session's backend can show (CTXMON_CAP_* bits) on this
 * kernel, which can be more than ctxmon_backend_caps() says (bpf:
 * CTXMON_CAP_ORPHANS_MANY where the kernel has bpf_loop(), 5.17+). */
unsigned ctxmon_session_caps(const struct ctxmon_session *s);

/*
 * What the backend cannot show, as one line for an output, or NULL for a
 * backend that misses nothing stat shows (owned by the library).
 */
const char *ctxmon_session_limits(const struct ctxmon_session *s);

/* Capabilities of the backend named @name on any kernel, 0 when there
 * is none. */
unsigned ctxmon_backend_caps(const char *name);

/*
 * The @i-th backend of the library's table (0, 1, ...), NULL past the
 * last: for help texts and completion.  Owned by the library.
 */
const char *ctxmon_backend_name(size_t i);

/* The first backend of the table that has every bit of @caps, or NULL. */
const char *ctxmon_backend_with(unsigned caps);

/* The session clock (CLOCK_MONOTONIC), in ns. */
uint64_t ctxmon_clock_ns(void);

/* ------------------------------------------------------------------ */
/* Rows                                                                */
/* ------------------------------------------------------------------ */

/* How many exited threads' rows an account keeps one by one before it
 * folds older ones by comm (ctxmon_account_opts.exited_keep). */
#define CTXMON_EXITED_KEEP 1024

struct ctxmon_rowset_opts {
	size_t sz;			/* sizeof(struct ctxmon_rowset_opts) */
	struct ctxmon_session *session;	/* a counting session's rows are
					 * read from it; NULL: offline */
	struct ctxmon_account *account;	/* a streaming session's (or a
					 * recording's) account; may be
					 * NULL for a counting session */
	bool interval;			/* each snapshot covers the time
					 * since the previous one */
	/*
	 * Optional counting source in place of a session's: every thread's
	 * cumulative numbers up to @ts, rows of exited threads kept, *rows
	 * malloc'd (the rows object frees it), comms owned by the caller.
	 * 0 or -errno.  For a program with counters of its own, and tests.
	 */
	int (*read_rows)(void *ctx, uint64_t ts, struct ctxmon_stats **rows,
			 size_t *n);
	void *read_ctx;
};

struct ctxmon_rowset;

/*
 * New rows object over @o's session and account (both borrowed: they must
 * outlive it).  NULL and errno (EINVAL when it has neither).  Free with
 * ctxmon_rowset_free().
 */
struct ctxmon_rowset *ctxmon_rowset_new(const struct ctxmon_rowset_opts *o);
void ctxmon_rowset_free(struct ctxmon_rowset *r);

struct ctxmon_snapshot {
	uint64_t ts;			/* end of the snapshot, session clock:
					 * the @ts asked for, or for rows
					 * counted in the kernel while they
					 * are read, a time after the read */
	struct ctxmon_stats *threads;	/* target threads (and folded rows) */
	size_t nthreads;
	struct ctxmon_stats *procs;	/* their processes */
	size_t nprocs;
	struct ctxmon_cpu_stats *cpus;
	size_t ncpus;
};

/*
 * The rows up to @ts into @out (its arrays malloc'd, freed with
 * ctxmon_snapshot_clear()): the whole run, or with opts.interval the time
 * since the previous ctxmon_rowset_next().  A streaming account's open
 * intervals are closed at @ts.  Rows the kernel counts cannot be taken
 * back to a time before they are read: for those the snapshot ends when
 * the read did, out->ts, so use out->ts as the interval's end and for
 * ctxmon_rowset_next().  0 or -errno (then @out is empty).
 */
int ctxmon_rowset_snapshot(struct ctxmon_rowset *r, uint64_t ts,
			 struct ctxmon_snapshot *out) CTXMON_WARN_UNUSED;

/*
 * Interval mode: start the next interval at @ts, after the snapshot that
 * ends the current one has been used.  Rows of threads that exited are
 * dropped then (shown once, in the interval they ended in), so a long run
 * does not grow.  A no-op without opts.interval.
 */
void ctxmon_rowset_next(struct ctxmon_rowset *r, uint64_t ts);

void ctxmon_snapshot_clear(struct ctxmon_snapshot *s);

/*
 * Roll thread rows up into process rows, by the rule of the account:
 * (tgid, process generation), so a reused pid is a new process; a row
 * without a tgid is its own process; a folded row stays a row of its own;
 * the leader names the process.  malloc'd array, *np its length; NULL and
 * errno.
 */
struct ctxmon_stats *ctxmon_rows_processes(const struct ctxmon_stats *th,
					   size_t n, size_t *np);

/*
 * For display: fold in place all but the @keep most recent exited rows of
 * @rows into rows by comm, once more than twice @keep have exited (sums are
 * unchanged; live rows stay as they are); *n shrinks.  0, or -EINVAL, or
 * -ENOMEM (then @rows may be reordered, none is lost).  Nothing to free.
 */
int ctxmon_rows_fold_exited(struct ctxmon_stats *rows, size_t *n,
			    size_t keep);

/* The log2 bucket of @ns in ctxmon_latency.hist: [2^i, 2^(i+1)) ns, the
 * last one open-ended. */
unsigned ctxmon_log2_bucket(uint64_t ns);

/*
 * The @pct (0..100) percentile of a row's log2 latency histogram, by the
 * one method ctxmon uses for every histogram (ctxmon_lat_quantile of
 * `latency`): nearest rank, interpolated inside the bucket that holds it
 * (cut to the maximum), the last rank being the exact maximum.  0 when
 * there is no sample.
 */
uint64_t ctxmon_latency_percentile(const struct ctxmon_latency *l,
				   double pct);

#ifdef __cplusplus
}
#endif
#endif
