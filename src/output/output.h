/*
 * output.h - format accounting results as an aligned table, JSON or CSV.
 *
 * Outputs only format: they get finished numbers (struct report) and write
 * them; every subcommand that shows accounting (stat, report, top -b) goes
 * through here so their outputs agree.
 */
#ifndef CTXMON_OUTPUT_H
#define CTXMON_OUTPUT_H

#include <limits.h>
#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/causes.h>
#include <ctxmon/features.h>
#include <ctxmon/rows.h>

struct ctxmon_verdict;

enum out_format { OUT_TABLE, OUT_JSON, OUT_CSV };

enum sort_key {
	SORT_SWITCHES, SORT_VOL, SORT_INVOL, SORT_RUN, SORT_WAIT, SORT_SLEEP,
	SORT_LAT, SORT_MAXLAT, SORT_MIGR, SORT_TID, SORT_COMM,
};

/* Comparison with the kernel's counters for a launched command. */
/*
 * The kernel's rusage counts a thread's switches until exit folds them
 * into its process: a non-leader thread's last switch-out (X) comes after
 * that and is never counted, a process leader's (Z) is counted when its
 * parent reaps it.  Preemptions of a non-leader thread after
 * sched_process_exit may fall either side of the fold (exit_preempt), and
 * on PREEMPT_RT its blocks too (exit_block).
 */
struct kernel_cmp {
	bool valid;
	uint64_t ru_nvcsw, ru_nivcsw;		/* wait4 rusage */
	uint64_t ru_cpu_ns;			/* its utime + stime, 0: not
						 * known */
	uint64_t traced_run_ns;			/* run time of the rows
						 * compared */
	uint64_t traced_vol;			/* voluntary + leader exits */
	uint64_t traced_invol;			/* involuntary */
	uint64_t exit_switches;			/* all last switch-outs */
	uint64_t leader_exits;			/* of them, process leaders' */
	uint64_t leader_reaped;			/* leaders' last switch-outs in
						 * state X: reaped as they
						 * switched, counted or not */
	uint64_t exit_preempt;			/* ambiguous involuntary */
	uint64_t after_fold;			/* involuntary rusage misses */
	uint64_t after_fold_vol;		/* voluntary rusage misses */
	uint64_t exit_block;			/* exiting threads' voluntary
						 * switches, either side of the
						 * fold on PREEMPT_RT */
	bool preempt_rt;			/* this kernel is PREEMPT_RT:
						 * up to exit_block of
						 * voluntary may be after the
						 * fold */
	uint64_t shown_running;			/* involuntary shown R without
						 * preemption, from the state */
	bool sig_bound;				/* this kernel may show a
						 * signal-cut sleep as R: up to
						 * shown_running of involuntary
						 * may be voluntary */
	char sig_why[160];			/* how that was found */
	/* descendants the kernel does not fold into the command's rusage
	 * (never reaped by their parent, or alive at its end): shown,
	 * not compared (analysis/rusage.c) */
	uint64_t orphan_procs, orphan_vol, orphan_invol;
	/* of those compared, processes that may have been left unreaped,
	 * which a backend without marks cannot tell (rusage.h) */
	uint64_t unsure_procs, unsure_vol, unsure_invol;
	/* io_uring workers ran in the command: threads the kernel starts
	 * with no fork event, which a backend following the command by its
	 * forks alone (the ftrace pid filter) sees only in part */
	bool io_workers;
	/* processes of the command given a pid an earlier one of it had
	 * (rusage_sums.reused_procs), and whether the backend follows the
	 * command through the kernel's pid filter (CTXMON_CAP_PID_FILTER),
	 * which loses such a process's switches */
	uint64_t reused_procs;
	bool pid_filter;
	/* the backend loses the tail of every exit (perf-switch: perf stops
	 * following a thread in do_exit, before its last preemptions and
	 * switch-out): the traced counts are lower bounds, compared as such,
	 * and the verdict says by how much they are short */
	bool bound;
	/* the rows are the kernel's own counters, read now and then (the
	 * proc tier): each kind is a lower bound, short by what a thread did
	 * after its last read; also sets bound */
	bool sampled;
};

struct rusage_sums;
/* Fill @k's traced side from the model's sums: @in compared, @out the
 * orphans, shown apart. */
void output__kernel_set(struct kernel_cmp *k, const struct rusage_sums *in,
			const struct rusage_sums *out);
/* Set sig_bound and sig_why from how the kernel @k's run was on shows a
 * signal-cut sleep (@known false: not known, no range). */
void output__kernel_sig(struct kernel_cmp *k, bool known,
			enum ctxmon_sigsleep v, const char *why);
/* Set what the running kernel adds to @k's ranges: preempt_rt, and
 * sig_bound when the sums have switches it applies to (it runs a probe);
 * for a command run here. */
void output__kernel_here(struct kernel_cmp *k);
/* Traced and kernel counts are the same, both kinds. */
bool output__kernel_equal(const struct kernel_cmp *k);
/* The one-line verdict ("kernel counters: ... (traced vs getrusage:
 * match)") between @pre and @post (plain text, no markup to escape). */
void output__kernel_verdict(FILE *f, const struct kernel_cmp *k,
			    const char *pre, const char *post);
/* The verdict as a line, without the detail lines; for stderr.  A
 * mismatch gets the lines of output__kernel_hints() after it. */
void output__kernel_line(FILE *f, const struct kernel_cmp *k);
/* "run time: traced X, getrusage CPU time Y" between @pre and @post (plain
 * text, no markup to escape; "Run" after a @pre), when ru_cpu_ns is
 * known. */
void output__kernel_cpu(FILE *f, const struct kernel_cmp *k, const char *pre,
			const char *post);
/* What may explain a mismatch, a sentence each, between @pre and @post
 * (plain text, no markup to escape): processes the backend cannot see
 * reaped, io_uring workers it cannot follow.  Nothing on a match. */
void output__kernel_hints(FILE *f, const struct kernel_cmp *k,
			  const char *pre, const char *post);

/* Add thread rows of the command's tree to @k's traced sums (not the
 * rusage side); called once per interval with -I. */
void output__kernel_add(struct kernel_cmp *k, const struct ctxmon_stats *rows,
			size_t n);

/*
 * Fill @k's traced side from the thread rows @th of a command's whole run
 * by the exit rule: only what reaches the rusage of @root, the command
 * (analysis/rusage.c), the rest as orphans; and set ->orphaned on the
 * rows of @mark1 and @mark2 (threads or processes of the same run; NULL:
 * none).  @root <= 0 (not known): every row counts, as
 * output__kernel_add().  @marks: how many children of an exit the
 * backend's marks of processes left unreaped cover (0: no marks;
 * output__caps_marks(), rusage__new()).  0 or -ENOMEM (then @k is filled
 * that way).
 */
int output__kernel_tree(struct kernel_cmp *k, pid_t root, unsigned marks,
			const struct ctxmon_stats *th, size_t nth,
			struct ctxmon_stats *mark1, size_t n1,
			struct ctxmon_stats *mark2, size_t n2);

/* @marks of output__kernel_tree() for a backend of capabilities @caps:
 * the children an exit's marks cover, 0 without marks. */
static inline unsigned output__caps_marks(unsigned caps)
{
	if (!(caps & CTXMON_CAP_ORPHANS))
		return 0;
	return caps & CTXMON_CAP_ORPHANS_MANY ? CTXMON_ORPHAN_WALK_MANY :
						CTXMON_ORPHAN_WALK;
}

/* ctxmon_account_opts.flags for a stream of a backend of @caps with
 * @marks (output__caps_marks()): the zombie rule only where a switch's
 * time is taken before its state is read, and the unreaped are not
 * marked (the ftrace backends, imported text). */
static inline uint64_t output__account_flags(unsigned caps, unsigned marks)
{
	return marks || (caps & CTXMON_CAP_STATE_EARLY) ?
		       CTXMON_ACCOUNT_NO_ZOMBIE_TIMES :
		       0;
}

/* The same for a recording or session made by the backend named @backend
 * (NULL: unknown, no marks). */
static inline unsigned output__backend_marks(const char *backend)
{
	return backend ? output__caps_marks(ctxmon_backend_caps(backend)) : 0;
}

/* @marks for a command's rows read live from a backend of @caps: sampled
 * rows name the parent a process has at its last read, so a reparented
 * one names its new one and no time rule is needed (UINT_MAX). */
static inline unsigned output__live_marks(unsigned caps)
{
	return caps & CTXMON_CAP_SAMPLED ? UINT_MAX : output__caps_marks(caps);
}

/* How a backend of @caps compares: the sampled rows and the streams that
 * lose the tail of every exit give lower bounds. */
static inline void output__kernel_caps(struct kernel_cmp *k, unsigned caps)
{
	k->sampled = caps & CTXMON_CAP_SAMPLED;
	k->pid_filter = caps & CTXMON_CAP_PID_FILTER;
	k->bound = k->sampled || ((caps & CTXMON_CAP_EVENTS) &&
				  !(caps & CTXMON_CAP_EXIT_TAIL));
}

/* After a stream's loss: real-time threads on every CPU keep the reader
 * off them for up to 95% of each second, and so do thousands of runnable
 * ones whatever its nice; a real-time reader runs when it must. */
#define OUTPUT_RT_HINT                                                        \
	"  if the CPUs were busy with real-time threads (SCHED_FIFO, "         \
	"SCHED_RR) or with many runnable ones, they kept ctxmon's reader "      \
	"off them: read real-time, above them, with --realtime 99 (the "       \
	"command keeps its own policy)"

/* Voluntary and involuntary each equal, or within their ambiguous range. */
bool output__kernel_match(const struct kernel_cmp *k);

/*
 * stat --check with -p or -t (cli/pidcheck.c): the traced counts of the
 * threads alive through the whole capture against the kernel's counters
 * of each, read before and after its start and its stop, which bracket
 * what the capture can have seen.
 */
struct live_cmp {
	bool valid;
	uint64_t threads;		/* compared */
	uint64_t others;		/* of those at the start, ended or
					 * replaced before the end */
	bool apart;			/* rows of threads started meanwhile
					 * (new processes too): shown, not
					 * compared */
	uint64_t vol, invol;		/* traced */
	uint64_t vol_lo, vol_hi;	/* the kernel's, inner and outer */
	uint64_t invol_lo, invol_hi;
	uint64_t shown_running;		/* as kernel_cmp's */
	bool sig_bound, bound;		/* as kernel_cmp's */
};

bool output__live_match(const struct live_cmp *l);
/* The verdict in one line, and what was not compared in another. */
void output__live_line(FILE *f, const struct live_cmp *l);

/* Causes of the rows (ctxmon_account_causes), matched by (tid, gen). */
struct causes_report {
	const struct ctxmon_causes *threads;
	size_t nthreads;
	const struct ctxmon_causes *procs;
	size_t nprocs;
	const struct ctxmon_pair *pairs;	/* most frequent first */
	size_t npairs;
	const char *arch;			/* syscall names, NULL: this build's */
};

struct report {
	const char *backend;
	uint64_t duration_ns;
	int interval;			/* -1: not periodic, else its index */
	uint64_t interval_ts_ns;	/* interval end, since capture start */
	struct ctxmon_session_stats cap;
	struct ctxmon_stats *threads;	/* sorted in place */
	size_t nthreads;
	struct ctxmon_stats *procs;	/* sorted in place */
	size_t nprocs;
	const struct ctxmon_cpu_stats *cpus;
	size_t ncpus;
	uint64_t anomalies;
	struct kernel_cmp kernel;
	struct live_cmp live;		/* -p/-t --check */
	bool has_exit;
	int exit_status;
	const char *source;		/* recording file (report), or NULL */
	bool counted;			/* numbers counted in the kernel: no
					 * events went through the stream */
	bool text_reader;		/* the backend parses text
					 * (CTXMON_CAP_TEXT): the slowest */
	const struct causes_report *causes;	/* NULL: not asked for */
	/* the recording's integrity (report), or NULL for a capture */
	const struct ctxmon_verdict *verdict;
};

struct output_opts {
	enum out_format fmt;
	bool threads, processes;	/* which tables to show */
	enum sort_key sort;
	bool show_cpus;
	size_t limit;			/* rows per table, 0: all */
};

/* Parse a --sort key; 0 or -EINVAL. */
int output__parse_sort(const char *s, enum sort_key *k);
/* The name a --sort spelling stands for: "voluntary" for "vol" (also
 * invol, lat, maxlat, migr), @s itself otherwise.  Every command's
 * --sort reads its key through this one table (docs/cli.md). */
const char *output__sort_alias(const char *s);
/* The accepted --sort keys, for help text. */
const char *output__sort_keys(void);
/* Sort rows by @k, largest first (tid and comm: ascending). */
void output__sort(struct ctxmon_stats *rows, size_t n, enum sort_key k);
/* Write @r; 0, or -errno when writing failed (e.g. -ENOSPC). */
int output__report(FILE *f, const struct output_opts *o, struct report *r);
/* ',"integrity":{...}' (ctxmon_verdict_write_json()) when @v is not NULL:
 * the one way every command's JSON carries a recording's verdict. */
void output__verdict_json(FILE *f, const struct ctxmon_verdict *v);
/* Human duration in a fixed-width-friendly form ("12.3ms"); returns buf. */
char *output__dur(char *buf, size_t len, uint64_t ns);
/* @l's maximum as output__dur() gives it, right-aligned to @width
 * columns, after "\u2264" (<=) when it is a bound (max_is_bound); "-"
 * when @l has no latency. */
char *output__lat_max(char *buf, size_t len, const struct ctxmon_latency *l,
		      int width);

/* ---- causes (causes_out.c) and latency (latency_out.c) ------------ */

/* Cause rows sorted by (tid, gen) for lookup; free with _free(). */
struct causes_index {
	const struct ctxmon_causes **p;
	size_t n;
};
int output__causes_index(struct causes_index *ix,
			 const struct ctxmon_causes *rows, size_t n);
void output__causes_index_free(struct causes_index *ix);
/* The causes of row (@tid, @gen), or NULL. */
const struct ctxmon_causes *output__causes_find(const struct causes_index *ix,
						pid_t tid, uint32_t gen);
/* Name of syscall @id, or "syscall_<id>" written into @buf. */
const char *output__sys_name(const char *arch, long id, char *buf,
			     size_t len);
/* The causes tables for the rows of @r shown by @o; 0 or -ENOMEM. */
int output__causes_text(FILE *f, const struct output_opts *o,
			const struct report *r);
/* One row's causes as a JSON object. */
void output__causes_json(FILE *f, const struct ctxmon_causes *c,
			 const char *arch);
void output__json_lat_summary(FILE *f, const struct ctxmon_lat_summary *l);
void output__pair_json(FILE *f, const struct ctxmon_pair *p);
/* ',"pairs":[...]' */
void output__pairs_json(FILE *f, const struct ctxmon_pair *p, size_t n);

/* One latency histogram of `ctxmon latency`. */
struct latency_group {
	enum { LAT_THREAD, LAT_PROCESS, LAT_CPU } kind;
	int id;				/* tid, pid or cpu */
	int tgid;			/* threads: their process, else -1 */
	const char *comm;
	const struct ctxmon_lat_summary *lat;
};

struct latency_report {
	const char *backend;
	const char *source;		/* recording read (-i), or NULL */
	uint64_t duration_ns;
	struct ctxmon_session_stats cap;
	uint64_t anomalies;
	const struct latency_group *groups;
	size_t ngroups;
	const struct ctxmon_pair *pairs;	/* wake pairs shown */
	size_t npairs;
	unsigned buckets;		/* 0: log2 histograms, else linear */
	size_t limit;			/* groups and pairs shown, 0: all */
	/* the recording's integrity (-i), or NULL for a capture */
	const struct ctxmon_verdict *verdict;
};

/* Write @r as text (runqlat-style histograms) or JSON; 0 or -errno. */
int output__latency(FILE *f, enum out_format fmt,
		    const struct latency_report *r);

#endif
