/*
 * kernel.bpf.h - what every BPF object of ctxmon reads of the kernel the
 * same way, on old kernels and new (CO-RE): the task state (->state before
 * 5.14, ->__state since), the task's CPU (->cpu before 5.16, in
 * thread_info since), the id of a cgroup's ancestor (->ancestor_ids before
 * 6.1, ->ancestors since), the kernel's own verdict on a switch-out from
 * its nvcsw/nivcsw counters, and a loop-free log2 for histogram buckets
 * (no loop may run under a BPF spin lock).  Include after vmlinux.h and
 * the libbpf headers.
 */
#ifndef CTXMON_KERNEL_BPF_H
#define CTXMON_KERNEL_BPF_H

struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

struct task_struct___pre516 {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state_raw(struct task_struct *t)
{
	struct task_struct___pre514 *o = (void *)t;

	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return (__u32)BPF_CORE_READ(o, state);
}

static __always_inline __s32 task_cpu(struct task_struct *t)
{
	struct task_struct___pre516 *o = (void *)t;

	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ(o, cpu);
}

/* The cgroup id (kernfs node id) of @cg's ancestor at @level (@cg's own
 * level at most: the caller checks); 0 when not readable. */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	__u64 id = 0;

	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *a = NULL;

		bpf_core_read(&a, sizeof(a), &cg->ancestors[level]);
		id = a ? BPF_CORE_READ(a, kn, id) : 0;
	} else {
		struct cgroup___pre61 *o = (void *)cg;

		bpf_core_read(&id, sizeof(id), &o->ancestor_ids[level]);
	}
	return id;
}

/*
 * Voluntary or involuntary, as the kernel counted it: __schedule() adds one
 * to prev's nvcsw or nivcsw before the sched_switch tracepoint, so of the
 * counters last seen (@onv, @oniv; @have: seen at all) and now (@nv, @niv),
 * the one that moved is the verdict.  1: voluntary, -1: involuntary, 0:
 * cannot tell (never seen, or switch-outs went unseen in between).
 */
static __always_inline int csw_moved(bool have, __u64 onv, __u64 oniv,
				     __u64 nv, __u64 niv)
{
	if (!have)
		return 0;
	if (nv != onv && niv == oniv)
		return 1;
	if (niv != oniv && nv == onv)
		return -1;
	return 0;
}

/* floor(log2(d)) for d > 0, without a loop */
static __always_inline __u32 log2_u64(__u64 d)
{
	__u32 b = 0;

	if (d >> 32) {
		d >>= 32;
		b += 32;
	}
	if (d >> 16) {
		d >>= 16;
		b += 16;
	}
	if (d >> 8) {
		d >>= 8;
		b += 8;
	}
	if (d >> 4) {
		d >>= 4;
		b += 4;
	}
	if (d >> 2) {
		d >>= 2;
		b += 2;
	}
	if (d >> 1)
		b += 1;
	return b;
}

#endif
