/*
 * ctxmon/profile.h - a wall-clock profile: where threads ran (stacks of
 * timer samples), where they were off CPU and why (stacks at switch-out,
 * with the cause as the leaf), and who woke them (the waker's stack).
 *
 * Everything is aggregated in the kernel by BPF (one cpu-clock timer per
 * CPU, sched_switch, sched_waking, raw_syscalls); user space reads the maps
 * once, at the end, and symbolizes: /proc/kallsyms for the kernel, libdw
 * for user code (symtab, build-id and .gnu_debuglink debug files,
 * /usr/lib/debug).  Each process's mappings are copied from
 * /proc/PID/maps when it is first seen and at exec, so processes that exit
 * during the capture still symbolize.  Values are microseconds: an
 * on-CPU sample counts its period (1e6 / freq), or with off_cpu the
 * thread's exact run time since its previous sample; an off-CPU interval
 * counts its length, so per thread the on- and off-CPU stacks add up to
 * the time it was watched.  User stacks are unwound with the binaries'
 * CFI from a 16 KiB copy of the stack (or walked by frame pointers:
 * fp_stacks); docs/profile.md.
 *
 * Needs root (CAP_BPF + CAP_PERFMON).  Conventions as in ctxmon.h: int
 * functions return 0 or a negative errno; the library never prints.
 */
#ifndef CTXMON_PROFILE_H
#define CTXMON_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ctxmon_profile_target {
	CTXMON_PROFILE_ALL = 0,	/* every task of the machine (not idle) */
	CTXMON_PROFILE_PROCS,	/* the given processes and their children */
	CTXMON_PROFILE_THREADS,	/* the given threads only */
};

struct ctxmon_profile_opts {
	unsigned freq;		/* sampling rate in Hz, 0: 99 */
	bool off_cpu;		/* off-CPU stacks with their causes */
	bool wakers;		/* the wakers' stacks (implies off_cpu) */
	int target;		/* enum ctxmon_profile_target */
	/* User stacks: 0 (default) copies PROFILE_STACK_BYTES (16 KiB) of
	 * the user stack at each sample and switch-out to user space and
	 * unwinds it with the binaries' CFI (frame-pointer-less code too;
	 * deeper stacks end where the copy does: counted as truncated);
	 * true walks frame pointers in the kernel (no copy, nothing per
	 * sample to user space, but frameless functions hide their
	 * callers).  Wakers' stacks are always frame-pointer walks. */
	bool fp_stacks;
};

/* What a stack's time is. */
enum ctxmon_profile_kind {
	CTXMON_PROF_ON_CPU = 0,	/* running (sampled stacks) */
	CTXMON_PROF_SLEEP,	/* off CPU, asleep until woken */
	CTXMON_PROF_RUNNABLE,	/* off CPU, woken (or switched out runnable)
				 * and waiting for a CPU */
	CTXMON_PROF_PREEMPT,	/* off CPU after a preemption */
	CTXMON_PROF_YIELD,	/* off CPU after sched_yield() */
};

/*
 * One aggregated stack.  frames[] runs from the root (the user's
 * outermost caller) to the leaf: the first n_user are user frames, the
 * rest kernel frames.  The cause is the leaf ctxmon puts after the frames
 * for off-CPU time: "[blocked: read]", "[runnable]", "[preempted by
 * comm/tid]", "[yield]"...  All strings live as long as the profile.
 */
struct ctxmon_profile_stack {
	pid_t tgid, tid;
	const char *comm;
	int kind;			/* enum ctxmon_profile_kind */
	const char *cause;		/* NULL for on-CPU stacks */
	const char **frames;
	size_t n_frames, n_user;
	uint64_t us;			/* microseconds charged */
	uint64_t count;			/* samples or off-CPU intervals */
	/* --wakers rows only (ctxmon_profile_wakes()): the waker */
	pid_t waker_tid;
	const char *waker_comm;
	const char **waker_frames;	/* root first, like frames */
	size_t n_waker_frames;
};

/* Losses and sizes of a capture: nonzero loss counters mean the profile
 * misses what they count. */
struct ctxmon_profile_loss {
	uint64_t samples;		/* timer samples of targeted tasks */
	uint64_t kstack_lost;		/* kernel stacks not taken */
	uint64_t ustack_lost;		/* user stacks not taken (map full,
					 * no frame pointer chain...) */
	uint64_t counts_full;		/* rows dropped: counts map full */
	uint64_t tasks_full;		/* off-CPU intervals dropped */
	uint64_t wakes_full;		/* waker rows dropped */
	uint64_t procs_unmapped;	/* processes whose mappings were gone
					 * before they could be read */
	uint64_t frames_unknown;	/* user frames no symbol was found for */
	uint64_t ring_drops;		/* stack copies lost: ring full */
	uint64_t ustack_truncated;	/* unwinds that reached the copy's end */
	uint64_t unwound;		/* stack copies unwound */
};

struct ctxmon_profile;

/* Load the BPF programs (nothing attached yet).  Free with
 * ctxmon_profile_free(). */
int ctxmon_profile_open(const struct ctxmon_profile_opts *o,
			struct ctxmon_profile **out);
/* Select a process (CTXMON_PROFILE_PROCS) or thread (_THREADS). */
int ctxmon_profile_add_target(struct ctxmon_profile *p, pid_t id);
/* Attach: the profile runs from here. */
int ctxmon_profile_start(struct ctxmon_profile *p);
/* Handle new processes (copy their mappings); wait up to @timeout_ms.
 * Call it often during the capture (every 100 ms or less). */
int ctxmon_profile_poll(struct ctxmon_profile *p, int timeout_ms);
/* Detach, read the maps and symbolize.  After it the results below are
 * valid. */
int ctxmon_profile_stop(struct ctxmon_profile *p);

/* The aggregated stacks, largest first; the array lives as long as @p. */
int ctxmon_profile_stacks(const struct ctxmon_profile *p,
			  const struct ctxmon_profile_stack **out, size_t *n);
/* With wakers: (waker stack, wakee off-CPU stack) rows, largest first. */
int ctxmon_profile_wakes(const struct ctxmon_profile *p,
			 const struct ctxmon_profile_stack **out, size_t *n);
void ctxmon_profile_loss(const struct ctxmon_profile *p,
			 struct ctxmon_profile_loss *out);
/* The sampling period in microseconds and the capture's length in ns. */
uint64_t ctxmon_profile_period_us(const struct ctxmon_profile *p);
/* Whether on-CPU values are each thread's exact run time (off_cpu: traced
 * at sched_switch, the samples only share it out among stacks: each one
 * is charged the thread's run since its previous sample, the run after
 * its last one goes to that stack, a thread no sample caught gets a
 * "[on CPU: no sample]" row), or sampled (one period per sample). */
bool ctxmon_profile_on_cpu_exact(const struct ctxmon_profile *p);
uint64_t ctxmon_profile_duration_ns(const struct ctxmon_profile *p);

/* Outputs (src/profile/profile_out.c).  Folded: one line per stack,
 * "comm;frame;...;frame value" (value in us), wakers' rows as
 * "comm;wakee frames;--;waker frames;waker_comm value". */
int ctxmon_profile_write_folded(const struct ctxmon_profile *p, FILE *f);
/* A readable summary: per-thread totals, the @top largest stacks and
 * wakeups, the losses. */
int ctxmon_profile_write_summary(const struct ctxmon_profile *p, FILE *f,
				 size_t top);
int ctxmon_profile_write_json(const struct ctxmon_profile *p, FILE *f);
/* A self-contained interactive SVG flame graph (on-CPU warm colours,
 * off-CPU blue, click to zoom, search). */
int ctxmon_profile_write_svg(const struct ctxmon_profile *p, FILE *f,
			     const char *title);
/* pprof: a gzipped profile.proto (sample types "wall"/"microseconds"
 * and "samples"/"count"). */
int ctxmon_profile_write_pprof(const struct ctxmon_profile *p, FILE *f);

void ctxmon_profile_free(struct ctxmon_profile *p);

#ifdef __cplusplus
}
#endif

#endif
