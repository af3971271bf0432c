/*
 * kcmp.c - the comparison of traced switches with the kernel's counters:
 * the traced side summed by the exit rule (analysis/rusage.c), the range
 * each kind may lie in on this kernel, the verdict and what explains a
 * mismatch (analysis/kcmp.h).
 */
#include <errno.h>
#include <stdio.h>

#include <ctxmon/features.h>

#include "analysis/kcmp.h"
#include "analysis/rusage.h"

void kcmp__add(struct kernel_cmp *k, const struct ctxmon_stats *rows,
			size_t n)
{
	struct rusage_sums in = { 0 };

	for (size_t i = 0; i < n; i++)
		rusage__row(&in, &rows[i]);
	k->traced_vol += in.vol;
	k->traced_invol += in.invol;
	k->traced_run_ns += in.run_ns;
	k->exit_switches += in.exit_switches;
	k->leader_exits += in.leader_exits;
	k->leader_reaped += in.leader_reaped;
	k->exit_preempt += in.exit_preempt;
	k->after_fold += in.after_fold;
	k->after_fold_vol += in.after_fold_vol;
	k->exit_block += in.exit_block;
	k->shown_running += in.shown_running;
	k->io_workers = k->io_workers || in.io_workers;
}

void kcmp__set(struct kernel_cmp *k, const struct rusage_sums *in,
			const struct rusage_sums *out)
{
	k->traced_vol = in->vol;
	k->traced_invol = in->invol;
	k->traced_run_ns = in->run_ns;
	k->exit_switches = in->exit_switches;
	k->leader_exits = in->leader_exits;
	k->leader_reaped = in->leader_reaped;
	k->exit_preempt = in->exit_preempt;
	k->after_fold = in->after_fold;
	k->after_fold_vol = in->after_fold_vol;
	k->exit_block = in->exit_block;
	k->shown_running = in->shown_running;
	k->orphan_procs = out->procs;
	k->orphan_vol = out->vol;
	k->orphan_invol = out->invol;
	k->unsure_procs = in->unsure_procs;
	k->unsure_vol = in->unsure_vol;
	k->unsure_invol = in->unsure_invol;
	k->io_workers = in->io_workers;
	k->reused_procs = in->reused_procs;
}

int kcmp__tree(struct kernel_cmp *k, pid_t root, unsigned marks,
			const struct ctxmon_stats *th, size_t nth,
			struct ctxmon_stats *mark1, size_t n1,
			struct ctxmon_stats *mark2, size_t n2)
{
	struct rusage_model *m = root > 0 ? rusage__new(root, marks) : NULL;
	struct rusage_sums in, out;

	if (!m || rusage__add(m, th, nth) < 0) {
		rusage__free(m);
		kcmp__add(k, th, nth);
		return root > 0 ? -ENOMEM : 0;
	}
	rusage__result(m, &in, &out);
	if (mark1)
		rusage__mark(m, mark1, n1);
	if (mark2)
		rusage__mark(m, mark2, n2);
	rusage__free(m);
	kcmp__set(k, &in, &out);
	return 0;
}

void kcmp__sig(struct kernel_cmp *k, bool known,
			enum ctxmon_sigsleep v, const char *why)
{
	k->sig_bound = known && k->shown_running &&
		       v != CTXMON_SIGSLEEP_SHOWN_SLEEP;
	snprintf(k->sig_why, sizeof(k->sig_why), "%s", why ? why : "");
}

void kcmp__here(struct kernel_cmp *k)
{
	/* switches classified R by their state: is a signal-cut sleep
	 * among them on this kernel? */
	if (k->shown_running) {
		char why[sizeof(k->sig_why)];
		enum ctxmon_sigsleep v = ctxmon_features_sigsleep(why,
								  sizeof(why));

		kcmp__sig(k, true, v, why);
	}
	/* exiting threads' blocks: either side of the fold on PREEMPT_RT
	 * only */
	k->preempt_rt = ctxmon_features_preempt_rt() == 1;
}

/* Involuntary switches that may be voluntary: signal-cut sleeps shown R
 * on a kernel that shows them so (features.h). */
uint64_t kcmp__sig_amb(const struct kernel_cmp *k)
{
	return k->sig_bound ? k->shown_running : 0;
}

/* Voluntary switches that may not be counted: exiting threads' blocks on
 * a PREEMPT_RT kernel, where one may come after the fold. */
uint64_t kcmp__rt_amb(const struct kernel_cmp *k)
{
	return k->preempt_rt ? k->exit_block : 0;
}

/* ru_nvcsw in [traced - exiting threads' blocks on PREEMPT_RT - @out,
 * traced + leaders reaped as they switched out + signal-cut sleeps shown
 * R]; @out: switches that may not be in */
bool kcmp__vol_in(const struct kernel_cmp *k, uint64_t out)
{
	return k->traced_vol <= k->ru_nvcsw + kcmp__rt_amb(k) + out &&
	       k->ru_nvcsw <= k->traced_vol + k->leader_reaped + kcmp__sig_amb(k);
}

/* ru_nivcsw in [traced - exit preemptions - signal-cut sleeps - @out,
 * traced] */
bool kcmp__invol_in(const struct kernel_cmp *k, uint64_t out)
{
	return k->ru_nivcsw <= k->traced_invol &&
	       k->ru_nivcsw + k->exit_preempt + kcmp__sig_amb(k) + out >=
		       k->traced_invol;
}

bool kcmp__match(const struct kernel_cmp *k)
{
	/* a bound: never above the kernel, but for the leaders' exits it
	 * adds (their zombie switch, counted or not by the reap).  A sleep
	 * cut short by a signal is voluntary to the kernel and preempted to
	 * the bound's records (docs/unprivileged.md): it moves a switch
	 * from the voluntary side to the involuntary one, so the
	 * involuntary side may be over by as many as the other is short,
	 * and the sum is what is bound. */
	if (k->sampled)
		return k->traced_vol <= k->ru_nvcsw &&
		       k->traced_invol <= k->ru_nivcsw;
	if (k->bound)
		return k->traced_vol <= k->ru_nvcsw + k->leader_exits &&
		       k->traced_vol + k->traced_invol <=
			       k->ru_nvcsw + k->ru_nivcsw + k->leader_exits;
	return kcmp__vol_in(k, 0) && kcmp__invol_in(k, 0);
}

/*
 * A mismatch that processes left unreaped would explain: the kernel's
 * counts lie in the ranges once the unsure processes' switches may be
 * out.  Only backends without orphan marks have unsure processes.
 */
bool kcmp__unsure_explains(const struct kernel_cmp *k)
{
	struct kernel_cmp in = *k;

	if (!k->unsure_procs || kcmp__match(k))
		return false;
	if (k->bound) {
		/* a bound holds once they are out */
		in.traced_vol -= k->unsure_vol < k->traced_vol ?
					 k->unsure_vol : k->traced_vol;
		in.traced_invol -= k->unsure_invol < k->traced_invol ?
					   k->unsure_invol : k->traced_invol;
		return kcmp__match(&in);
	}
	return kcmp__vol_in(k, k->unsure_vol) &&
	       kcmp__invol_in(k, k->unsure_invol);
}

/* A mismatch with fewer switches traced than the kernel counted, which
 * an event stream's fixed blind spot may explain. */
static bool short_of_kernel(const struct kernel_cmp *k)
{
	return !k->bound && !kcmp__match(k) &&
	       (k->traced_vol < k->ru_nvcsw || k->traced_invol < k->ru_nivcsw);
}

/* A mismatch short of the kernel with io_uring workers in the command:
 * switches of theirs the backend did not see (docs/accounting.md). */
bool kcmp__io_short(const struct kernel_cmp *k)
{
	return k->io_workers && short_of_kernel(k);
}

/* A mismatch short of the kernel where the backend follows the command
 * through the kernel's pid filter and pids of the command came back:
 * switches of a process the filter dropped (docs/accounting.md). */
bool kcmp__pid_reuse_short(const struct kernel_cmp *k)
{
	return k->pid_filter && k->reused_procs && short_of_kernel(k);
}

bool kcmp__equal(const struct kernel_cmp *k)
{
	return k->traced_vol == k->ru_nvcsw && k->traced_invol == k->ru_nivcsw;
}

bool kcmp__live_match(const struct live_cmp *l)
{
	/* a sleep cut short by a signal shown R: the kernel's voluntary,
	 * traced involuntary (kcmp__match()) */
	uint64_t amb = l->sig_bound ? l->shown_running : 0;

	if (l->bound)
		return l->vol <= l->vol_hi &&
		       l->vol + l->invol <= l->vol_hi + l->invol_hi;
	return l->vol <= l->vol_hi && l->vol + amb >= l->vol_lo &&
	       l->invol >= l->invol_lo && l->invol <= l->invol_hi + amb;
}

