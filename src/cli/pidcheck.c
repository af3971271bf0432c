/*
 * pidcheck.c - stat --check for -p and -t: the traced counts of the
 * threads that lived through the whole capture, against the kernel's own
 * counters of each (/proc/PID/task/TID: nvcsw and nivcsw).
 *
 * A process that is already running has no rusage to wait for, but each
 * of its threads shows its switch counts.  They are read four times:
 * before the capture is opened (0), once it counts (1), before it is
 * stopped (2) and after (3).  Every switch traced happened between 0 and
 * 3, and every switch between 1 and 2 was traced, so a thread's traced
 * count lies in [c2 - c1, c3 - c0].  A thread is compared only when all
 * four reads found it, the same thread each time (its start time); one
 * that started or ended during the capture, and the processes followed
 * through their forks, are counted apart.
 *
 * The kernel counts a switch a few instructions before its tracepoint
 * fires, on the switching CPU with interrupts off.  Read 2 can see a
 * count whose tracepoint has not run yet, and a capture stopped at once
 * would miss it: read 2 therefore ends by running this thread on every
 * CPU it may use (settle()).  To run it, each CPU has finished the switch
 * it was in, tracepoint and ring-buffer commit included, so everything
 * read 2 counted is in the capture before it stops.  A CPU this thread
 * may not use (a cpuset) keeps that window of nanoseconds open.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pidcheck.h"
#include "capture/procfs.h"
#include "output/output.h"

struct pc_thread {
	pid_t tid;
	uint64_t start_ticks;
	uint64_t nv[PIDCHECK__READS], niv[PIDCHECK__READS];
	unsigned seen;			/* bit per read that found it */
	bool changed;			/* another thread had the tid */
	uint64_t vol, invol, shown_running;	/* traced */
};

struct pidcheck {
	enum ctxmon_target_kind target;
	pid_t *ids;
	size_t nids;
	struct pc_thread *t;		/* sorted by tid once read 0 is in */
	size_t n, cap;
	bool apart;			/* rows of threads not read at 0 */
};

static int cmp_tid(const void *a, const void *b)
{
	const struct pc_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct pc_thread *find(struct pidcheck *pc, pid_t tid)
{
	struct pc_thread key = { .tid = tid };

	return bsearch(&key, pc->t, pc->n, sizeof(*pc->t), cmp_tid);
}

/* Record thread @tid of @tgid (<= 0: find it by tid) at read @k. */
static int take(struct pidcheck *pc, pid_t tgid, pid_t tid, int k)
{
	struct procfs_task s;
	struct pc_thread *t;

	if (procfs__read_task(tgid, tid, &s) < 0)
		return 0;	/* gone meanwhile: not compared */
	t = k ? find(pc, tid) : NULL;
	if (!t) {
		if (k)		/* it started during the capture */
			return 0;
		if (pc->n == pc->cap) {
			size_t nc = pc->cap ? pc->cap * 2 : 64;
			struct pc_thread *v = realloc(pc->t, nc * sizeof(*v));

			if (!v)
				return -ENOMEM;
			pc->t = v;
			pc->cap = nc;
		}
		t = &pc->t[pc->n++];
		memset(t, 0, sizeof(*t));
		t->tid = tid;
		t->start_ticks = s.start_ticks;
	} else if (t->start_ticks != s.start_ticks) {
		t->changed = true;
	}
	t->nv[k] = s.nvcsw;
	t->niv[k] = s.nivcsw;
	t->seen |= 1u << k;
	return 0;
}

struct scan {
	struct pidcheck *pc;
	int k;
};

static int scan_one(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct scan *sc = ctx;

	(void)comm;
	return take(sc->pc, tgid, tid, sc->k);
}

/* Run on each CPU this thread may use, then where it was allowed. */
static void settle(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t sz;
	cpu_set_t *saved, *one;

	if (ncpu < 1)
		return;
	sz = CPU_ALLOC_SIZE(ncpu);
	saved = CPU_ALLOC(ncpu);
	one = CPU_ALLOC(ncpu);
	if (saved && one && sched_getaffinity(0, sz, saved) == 0) {
		for (long c = 0; c < ncpu; c++) {
			if (!CPU_ISSET_S(c, sz, saved))
				continue;
			CPU_ZERO_S(sz, one);
			CPU_SET_S(c, sz, one);
			/* returns once this thread runs there; an offline
			 * CPU refuses and has no switch in flight */
			(void)sched_setaffinity(0, sz, one);
		}
		(void)sched_setaffinity(0, sz, saved);
	}
	CPU_FREE(saved);
	CPU_FREE(one);
}

int pidcheck__read(struct pidcheck *pc, int k)
{
	struct scan sc = { pc, k };

	if (!pc || k < 0 || k >= PIDCHECK__READS)
		return 0;
	for (size_t i = 0; i < pc->nids; i++) {
		/* a process gone: its threads are not compared */
		int ret = pc->target == CTXMON_TARGET_PIDS ?
				  ctxmon_proc_scan(pc->ids[i], scan_one, &sc) :
				  take(pc, 0, pc->ids[i], k);

		if (ret == -ENOMEM)
			return ret;
	}
	if (k == 0 && pc->n > 1)
		qsort(pc->t, pc->n, sizeof(*pc->t), cmp_tid);
	if (k == PIDCHECK_STOPPING)
		settle();
	return 0;
}

struct pidcheck *pidcheck__new(const struct capture_opts *cap)
{
	struct pidcheck *pc;

	if (cap->target != CTXMON_TARGET_PIDS &&
	    cap->target != CTXMON_TARGET_TIDS) {
		errno = EINVAL;
		return NULL;
	}
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	pc->target = cap->target;
	pc->ids = cap->pids;
	pc->nids = cap->npids;
	if (pidcheck__read(pc, 0) < 0) {
		pidcheck__free(pc);
		errno = ENOMEM;
		return NULL;
	}
	return pc;
}

void pidcheck__add(struct pidcheck *pc, const struct ctxmon_stats *rows,
		   size_t n)
{
	if (!pc)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *r = &rows[i];
		struct pc_thread *t = r->folded ? NULL : find(pc, r->tid);

		if (!t) {	/* started during the capture */
			pc->apart = true;
			continue;
		}
		t->vol += r->voluntary;
		t->invol += r->involuntary;
		t->shown_running += r->shown_running;
	}
}

static bool compared(const struct pc_thread *t)
{
	return t->seen == (1u << PIDCHECK__READS) - 1 && !t->changed;
}

void pidcheck__result(const struct pidcheck *pc, unsigned caps,
		      struct live_cmp *out)
{
	struct kernel_cmp k = { 0 };

	memset(out, 0, sizeof(*out));
	if (!pc)
		return;
	for (size_t i = 0; i < pc->n; i++) {
		const struct pc_thread *t = &pc->t[i];

		if (!compared(t)) {
			out->others++;
			continue;
		}
		out->threads++;
		out->vol += t->vol;
		out->invol += t->invol;
		out->shown_running += t->shown_running;
		out->vol_lo += t->nv[2] - t->nv[1];
		out->vol_hi += t->nv[3] - t->nv[0];
		out->invol_lo += t->niv[2] - t->niv[1];
		out->invol_hi += t->niv[3] - t->niv[0];
	}
	out->apart = pc->apart;
	kcmp__caps(&k, caps);
	k.shown_running = out->shown_running;
	kcmp__here(&k);
	out->sig_bound = k.sig_bound;
	out->bound = k.bound;
	out->valid = true;
}

void pidcheck__free(struct pidcheck *pc)
{
	if (!pc)
		return;
	free(pc->t);
	free(pc);
}
