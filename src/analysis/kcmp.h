/*
 * analysis/kcmp.h - the comparison of a run's traced switches with the
 * kernel's own counters: getrusage of a launched command (struct
 * kernel_cmp) and /proc of threads followed by -p/-t (struct live_cmp).
 * The ranges each kind may lie in, and which fixed blind spot of a backend
 * explains a mismatch, are decided here; output/ only words the verdict.
 */
#ifndef CTXMON_ANALYSIS_KCMP_H
#define CTXMON_ANALYSIS_KCMP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/features.h>
#include <ctxmon/rows.h>

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
void kcmp__set(struct kernel_cmp *k, const struct rusage_sums *in,
			const struct rusage_sums *out);
/* Set sig_bound and sig_why from how the kernel @k's run was on shows a
 * signal-cut sleep (@known false: not known, no range). */
void kcmp__sig(struct kernel_cmp *k, bool known,
			enum ctxmon_sigsleep v, const char *why);
/* Set what the running kernel adds to @k's ranges: preempt_rt, and
 * sig_bound when the sums have switches it applies to (it runs a probe);
 * for a command run here. */
void kcmp__here(struct kernel_cmp *k);
/* Traced and kernel counts are the same, both kinds. */
bool kcmp__equal(const struct kernel_cmp *k);
/* Add thread rows of the command's tree to @k's traced sums (not the
 * rusage side); called once per interval with -I. */
void kcmp__add(struct kernel_cmp *k, const struct ctxmon_stats *rows,
			size_t n);

/*
 * Fill @k's traced side from the thread rows @th of a command's whole run
 * by the exit rule: only what reaches the rusage of @root, the command
 * (analysis/rusage.c), the rest as orphans; and set ->orphaned on the
 * rows of @mark1 and @mark2 (threads or processes of the same run; NULL:
 * none).  @root <= 0 (not known): every row counts, as
 * kcmp__add().  @marks: how many children of an exit the
 * backend's marks of processes left unreaped cover (0: no marks;
 * kcmp__caps_marks(), rusage__new()).  0 or -ENOMEM (then @k is filled
 * that way).
 */
int kcmp__tree(struct kernel_cmp *k, pid_t root, unsigned marks,
			const struct ctxmon_stats *th, size_t nth,
			struct ctxmon_stats *mark1, size_t n1,
			struct ctxmon_stats *mark2, size_t n2);

/* @marks of kcmp__tree() for a backend of capabilities @caps:
 * the children an exit's marks cover, 0 without marks. */
static inline unsigned kcmp__caps_marks(unsigned caps)
{
	if (!(caps & CTXMON_CAP_ORPHANS))
		return 0;
	return caps & CTXMON_CAP_ORPHANS_MANY ? CTXMON_ORPHAN_WALK_MANY :
						CTXMON_ORPHAN_WALK;
}

/* ctxmon_account_opts.flags for a stream of a backend of @caps with
 * @marks (kcmp__caps_marks()): the zombie rule only where a switch's
 * time is taken before its state is read, and the unreaped are not
 * marked (the ftrace backends, imported text). */
static inline uint64_t kcmp__account_flags(unsigned caps, unsigned marks)
{
	return marks || (caps & CTXMON_CAP_STATE_EARLY) ?
		       CTXMON_ACCOUNT_NO_ZOMBIE_TIMES :
		       0;
}

/* The same for a recording or session made by the backend named @backend
 * (NULL: unknown, no marks). */
static inline unsigned kcmp__backend_marks(const char *backend)
{
	return backend ? kcmp__caps_marks(ctxmon_backend_caps(backend)) : 0;
}

/* @marks for a command's rows read live from a backend of @caps: sampled
 * rows name the parent a process has at its last read, so a reparented
 * one names its new one and no time rule is needed (UINT_MAX). */
static inline unsigned kcmp__live_marks(unsigned caps)
{
	return caps & CTXMON_CAP_SAMPLED ? UINT_MAX : kcmp__caps_marks(caps);
}

/* How a backend of @caps compares: the sampled rows and the streams that
 * lose the tail of every exit give lower bounds. */
static inline void kcmp__caps(struct kernel_cmp *k, unsigned caps)
{
	k->sampled = caps & CTXMON_CAP_SAMPLED;
	k->pid_filter = caps & CTXMON_CAP_PID_FILTER;
	k->bound = k->sampled || ((caps & CTXMON_CAP_EVENTS) &&
				  !(caps & CTXMON_CAP_EXIT_TAIL));
}

/* Voluntary and involuntary each equal, or within their ambiguous range. */
bool kcmp__match(const struct kernel_cmp *k);

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

bool kcmp__live_match(const struct live_cmp *l);

/* The ranges' parts, for the words of a verdict: involuntary switches
 * that may be voluntary (signal-cut sleeps shown R where this kernel shows
 * them so); voluntary ones that may not be counted (exiting threads'
 * blocks on PREEMPT_RT); the kernel's voluntary and involuntary counts
 * within their ranges with @out more switches that may not be in. */
uint64_t kcmp__sig_amb(const struct kernel_cmp *k);
uint64_t kcmp__rt_amb(const struct kernel_cmp *k);
bool kcmp__vol_in(const struct kernel_cmp *k, uint64_t out);
bool kcmp__invol_in(const struct kernel_cmp *k, uint64_t out);

/* What explains a mismatch: processes left unreaped that a backend
 * without marks cannot tell (the counts in range once theirs may be out);
 * io_uring workers a fork-following backend sees only in part; processes
 * given a reused pid that the kernel's pid filter dropped. */
bool kcmp__unsure_explains(const struct kernel_cmp *k);
bool kcmp__io_short(const struct kernel_cmp *k);
bool kcmp__pid_reuse_short(const struct kernel_cmp *k);

#endif
