/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csw.h - the kernel's own verdict on a switch-out, from the task's
 * nvcsw/nivcsw, for the BPF programs (through kernel.bpf.h) and for user
 * space (bpf_rec.c classifies the streaming backend's switches).  Fixed
 * width types only: the BPF side has them from vmlinux.h, user space from
 * <linux/types.h>.
 */
#ifndef CTXMON_CSW_H
#define CTXMON_CSW_H

/*
 * Voluntary or involuntary, as the kernel counted it: __schedule() adds one
 * to prev's nvcsw or nivcsw before the sched_switch tracepoint, so of the
 * counters last seen (@onv, @oniv; @have: seen at all) and now (@nv, @niv),
 * the one that moved is the verdict.  1: voluntary, -1: involuntary, 0:
 * cannot tell (never seen, or switch-outs went unseen in between).
 */
static inline __attribute__((always_inline)) int
csw_moved(int have, __u64 onv, __u64 oniv, __u64 nv, __u64 niv)
{
	if (!have)
		return 0;
	if (nv != onv && niv == oniv)
		return 1;
	if (niv != oniv && nv == onv)
		return -1;
	return 0;
}

#endif
