/*
 * ctxmon/experiment.h - repeated runs of commands under ctxmon's capture,
 * one metric vector per run, and their statistics (seed 004's gzip
 * experiments: means, deviations, regression of elapsed time on
 * interrupts, conditions compared).
 *
 * ctxmon_run_once() runs one command under a session as `ctxmon stat`
 * does (followed from fork, every thread accounted, the counts compared
 * with the command's own rusage) and fills a struct ctxmon_run.  A
 * struct ctxmon_experiment collects runs by condition and computes the
 * summaries and tests of include/ctxmon/stats.h on them.
 * Conventions as in ctxmon.h.
 */
#ifndef CTXMON_EXPERIMENT_H
#define CTXMON_EXPERIMENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ctxmon/stats.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-run metrics.  Counts are sums over every thread of the command's
 * tree; times in the unit ctxmon_metric_unit() names. */
enum ctxmon_metric {
	CTXMON_M_ELAPSED,	/* s: fork of the command to its last exit */
	CTXMON_M_USER,		/* s: rusage user CPU */
	CTXMON_M_SYSTEM,	/* s: rusage system CPU */
	CTXMON_M_VOLUNTARY,
	CTXMON_M_INVOLUNTARY,
	CTXMON_M_EXIT,		/* exit switch-outs */
	CTXMON_M_RUN,		/* ms on CPU (traced) */
	CTXMON_M_WAIT,		/* ms runnable, not on CPU */
	CTXMON_M_SLEEP,		/* ms asleep */
	CTXMON_M_MIGRATIONS,
	CTXMON_M_INV_WAKEUP,	/* involuntary by cause (causes.h) */
	CTXMON_M_INV_WAKEUP_IRQ,
	CTXMON_M_INV_SLICE,
	CTXMON_M_INV_YIELD,
	CTXMON_M_INV_OTHER,
	CTXMON_M_VOL_SYSCALL,	/* voluntary, blocked in a syscall */
	CTXMON_M_VOL_NOSYSCALL,
	CTXMON_M_IRQS,		/* hard irqs taken while on CPU */
	CTXMON_M_SOFTIRQS,
	CTXMON_M_LAT_P50,	/* us, wakeup latency */
	CTXMON_M_LAT_P99,
	CTXMON_M_LAT_MAX,
	CTXMON_M__MAX
};

/* "elapsed", "involuntary", "irqs", ...; NULL past the end. */
const char *ctxmon_metric_name(unsigned m);
/* "s", "ms", "us" or "" for counts. */
const char *ctxmon_metric_unit(unsigned m);
/* A short description for a table or an axis ("elapsed time"). */
const char *ctxmon_metric_label(unsigned m);
/* Index of metric @name (also "invol", "vol", "irq" for short), or
 * -ENOENT. */
int ctxmon_metric_lookup(const char *name);

enum ctxmon_run_status {
	CTXMON_RUN_OK,		/* exited 0 */
	CTXMON_RUN_FAILED,	/* exited non-zero */
	CTXMON_RUN_KILLED,	/* killed by a signal not ours */
	CTXMON_RUN_TIMEOUT,	/* ran past the timeout: killed (SIGKILL) */
	CTXMON_RUN_ERROR,	/* could not be run or captured */
	CTXMON_RUN_INTERRUPTED,	/* stopped by the caller's stop flag */
};
/* "ok", "failed", "killed", "timeout", "error", "interrupted". */
const char *ctxmon_run_status_name(unsigned st);

struct ctxmon_run {
	unsigned cond;		/* condition index */
	unsigned index;		/* 1-based run number within its condition */
	unsigned status;	/* enum ctxmon_run_status */
	int exit_status;	/* 0-255, or 128 + signal */
	/* the kernel's counters and the comparison (as `ctxmon stat`) */
	bool kernel_valid, kernel_match;
	uint64_t ru_nvcsw, ru_nivcsw;
	uint64_t traced_vol, traced_invol;	/* as compared (see stat) */
	const char *backend;	/* the backend that captured it (static) */
	uint64_t lost;		/* events lost in this run's capture */
	double v[CTXMON_M__MAX];	/* NaN: not measured */
	char error[160];	/* why, for CTXMON_RUN_ERROR */
};

struct ctxmon_run_opts {
	size_t sz;		/* sizeof(struct ctxmon_run_opts) */
	char *const *argv;	/* the command (argv[0] looked up in PATH) */
	const char *backend;	/* NULL: auto (a streaming backend) */
	unsigned buffer_kb;
	const char *tracefs;
	bool causes;		/* trace irqs and syscalls: causes, irq counts */
	double timeout_s;	/* 0 (or over 1e9): none */
	bool discard_stdout;	/* the command's stdout goes to /dev/null */
	const char *pin;	/* CPU list ("0", "0-1,3") for the command, or
				 * NULL */
	/* Set (by a signal handler) to stop: the command gets SIGTERM, the
	 * run ends as CTXMON_RUN_INTERRUPTED. */
	volatile sig_atomic_t *stop;
	/* With reader_nice_set: the calling thread, which reads the stream,
	 * runs at nice reader_nice while the command runs (which keeps the
	 * caller's), and is given its own back after.  A reader at the
	 * workload's weight may fall behind busy CPUs and lose events.
	 * Lowering it needs CAP_SYS_NICE; without, it is left as it is. */
	int reader_nice;
	bool reader_nice_set;
	/* 1-99: the calling thread reads the stream at SCHED_FIFO
	 * reader_rt_prio instead (reset on fork) while the command runs, and
	 * is given its own policy back after; real-time threads busy on every
	 * CPU starve a reader at any nice.  Needs CAP_SYS_NICE; without, the
	 * nice above applies.  0: none. */
	int reader_rt_prio;
};

/*
 * Run @o->argv once under a capture session and fill @out (cond and
 * index are left as they were).  Returns 0 when the run was made, whatever
 * the command did (see out->status), or a negative errno when nothing could
 * be run (then out->status is CTXMON_RUN_ERROR and out->error says why).
 * Needs the privileges of the capture backend.
 */
int ctxmon_run_once(const struct ctxmon_run_opts *o, struct ctxmon_run *out);

/* ---- a collection of runs ------------------------------------------ */

struct ctxmon_experiment;

/* New, empty, for @ncond conditions named @names (copied).  NULL and errno. */
struct ctxmon_experiment *ctxmon_experiment_new(const char *const *names,
						size_t ncond);
void ctxmon_experiment_free(struct ctxmon_experiment *e);
/* Append a copy of @r.  0 or -ENOMEM/-EINVAL. */
int ctxmon_experiment_add(struct ctxmon_experiment *e,
			  const struct ctxmon_run *r);
size_t ctxmon_experiment_nconds(const struct ctxmon_experiment *e);
const char *ctxmon_experiment_cond_name(const struct ctxmon_experiment *e,
					size_t c);
/* Every run, in the order added; *n its length.  Owned by @e. */
const struct ctxmon_run *ctxmon_experiment_runs(
	const struct ctxmon_experiment *e, size_t *n);

/*
 * The values of metric @m in condition @cond's OK runs (status ok and the
 * value measured), in run order: a malloc'd array the caller frees, *n its
 * length (may be 0; then NULL is returned with errno 0).  @run_of, if not
 * NULL, receives a malloc'd array of the run indices the values came from.
 */
double *ctxmon_experiment_values(const struct ctxmon_experiment *e,
				 size_t cond, unsigned m, size_t *n,
				 size_t **run_of);

/* One condition's summary of one metric, over its OK runs, with outliers
 * (rule of stats.h) and without them. */
struct ctxmon_metric_summary {
	struct ctxmon_summary all;
	struct ctxmon_summary trimmed;	/* outliers left out */
};
/* 0, -ENODATA (no OK run with the metric), -ENOMEM. */
int ctxmon_experiment_summary(const struct ctxmon_experiment *e, size_t cond,
			      unsigned m, struct ctxmon_metric_summary *out);

/*
 * Read an experiment back from its --csv or --json output: conditions and
 * runs (the per-run rows; the kernel comparison is not kept).  NULL and
 * errno on failure (EINVAL: neither format), with a description in
 * ctxmon_record_last_error() (record.h).  Free with
 * ctxmon_experiment_free().
 */
struct ctxmon_experiment *ctxmon_experiment_load(const char *path);

/* Condition @a against @b on metric @m (all OK runs): both tests. */
struct ctxmon_comparison {
	struct ctxmon_ttest t;
	struct ctxmon_utest u;
	bool t_ok, u_ok;	/* the test could be made */
	bool significant;	/* both tests' p below alpha */
};
int ctxmon_experiment_compare(const struct ctxmon_experiment *e, size_t a,
			      size_t b, unsigned m, double alpha,
			      struct ctxmon_comparison *out);

/* Least squares of metric @y on metric @x over condition @cond's OK runs
 * (all conditions when @cond is (size_t)-1).  0, -EINVAL, -ENOMEM. */
int ctxmon_experiment_regress(const struct ctxmon_experiment *e, size_t cond,
			      unsigned y, unsigned x,
			      struct ctxmon_linreg *out);

#ifdef __cplusplus
}
#endif
#endif
