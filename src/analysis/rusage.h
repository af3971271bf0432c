/*
 * rusage.h - which traced switches the kernel folds into a command's
 * rusage (internal to the library).
 *
 * wait4() hands a parent the counters of the child it reaps: the child's
 * own threads and everything the child itself reaped before it died
 * (signal->cnvcsw).  A process whose parent dies before reaping it is
 * reparented to init or a subreaper, which reaps it: its counters never
 * reach the command; nor do those of a child of a parent that ignores
 * SIGCHLD, released unreaped.  This model replays that fold over the
 * thread rows of a command's tree (pure: rows in, sums out), so the
 * comparison with getrusage covers exactly what the kernel covers, and
 * the orphans' rows can be marked.
 */
#ifndef CTXMON_RUSAGE_H
#define CTXMON_RUSAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <ctxmon/ctxmon.h>

/* What a set of thread rows contributes to a rusage comparison. */
struct rusage_sums {
	uint64_t vol;		/* voluntary + leaders' zombie exit switches */
	uint64_t invol;		/* involuntary less the known after-fold */
	uint64_t exit_switches;	/* every last switch-out */
	uint64_t leader_exits;	/* of them, zombie leaders' (counted) */
	uint64_t leader_reaped;	/* leaders' X exits: counted or not */
	uint64_t exit_preempt;	/* exiting threads' preemptions, unknown
				 * side of the fold (tracepoint backends) */
	uint64_t after_fold;	/* known to be after the fold: left out */
	uint64_t after_fold_vol; /* the same, voluntary */
	uint64_t exit_block;	/* exiting threads' blocks, unknown side of
				 * the fold (tracepoint backends; either
				 * side on PREEMPT_RT only) */
	uint64_t shown_running;	/* involuntary shown R without preemption
				 * (a signal-cut sleep on some kernels) */
	uint64_t run_ns;	/* run time */
	uint64_t procs;		/* processes summed */
	bool io_workers;	/* an io_uring worker thread is among them
				 * (iou-wrk / iou-sqp: started with no
				 * fork event) */
	/* Without the backend's marks, the processes counted in that a
	 * parent may have left unreaped (every one but the root: nothing in
	 * the stream shows a reap).  Set by rusage__result() on @in only. */
	uint64_t unsure_procs, unsure_vol, unsure_invol;
	/* Processes given a pid that an earlier process of the model had in
	 * the capture (the pid space wrapped).  Set by rusage__result() on
	 * @in only, over every process, counted or not. */
	uint64_t reused_procs;
};

struct rusage_model;

/* New empty model for the tree of the command @root; NULL, errno set.
 * @marks: 0, or the rows come from a backend that marks every process
 * left unreaped by an exit of up to @marks children (CTXMON_CAP_ORPHANS),
 * so an unmarked child whose parent was in is in, whatever the times say;
 * UINT_MAX for rows that name the parent a process has when read (sampled
 * rows: a reparented process names its new one). */
struct rusage_model *rusage__new(pid_t root, unsigned marks);
void rusage__free(struct rusage_model *m);

/*
 * Add thread rows (whole-run rows, or one interval's: counts are summed
 * per process across calls).  Folded rows (tid 0) cannot be placed in the
 * tree and are summed as the command's own.  A leader row with ->orphaned
 * set says the backend saw its process left unreaped (an ORPHAN event):
 * it is out.  0 or -ENOMEM.
 */
int rusage__add(struct rusage_model *m, const struct ctxmon_stats *rows,
		size_t n);

/*
 * Replay the reaping: @in gets the sums of the processes whose counters
 * reach the root's rusage (the root, and each process that died while its
 * parent, itself in, was alive), @out those of the others (orphans
 * reparented away, and processes still alive when the root died).
 */
void rusage__result(struct rusage_model *m, struct rusage_sums *in,
		    struct rusage_sums *out);

/* After rusage__result: set ->orphaned on each of @rows (threads or
 * processes) whose process is not in the root's rusage. */
void rusage__mark(const struct rusage_model *m, struct ctxmon_stats *rows,
		  size_t n);

/* One thread row's contribution, as rusage__add sums it. */
void rusage__row(struct rusage_sums *s, const struct ctxmon_stats *t);

#endif
