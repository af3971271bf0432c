/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ctxsw.bpf.h - what the two BPF objects of the bpf backends share: the
 * loader's knobs, the filter maps, kernel layouts that changed across
 * versions, the task filters and fork following.  Each object,
 * ctxsw_stream.bpf.c (records into a ring buffer) and ctxsw_agg.bpf.c
 * (per-thread tables kept in maps), includes it once; the loader
 * (src/capture/bpf.c) loads one of the two.
 */
#ifndef CTXMON_CTXSW_BPF_H
#define CTXMON_CTXSW_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ctxsw.h"
#include "kernel.bpf.h"

/* ---- knobs, set by the loader before load ------------------------ */

const volatile __u32 filter_kind = CTXSW_FILTER_NONE;
const volatile bool follow_forks = false;
const volatile bool cpu_filter = false;
const volatile __u64 cg_id = 0; /* cgroup v2 id, 0: any */
const volatile __s32 cg_level = 0; /* its depth below the root */
/* the tracepoints' arguments on this kernel (from its BTF) */
const volatile bool sw_state_arg = false; /* sched_switch's prev_state */
const volatile bool exit_group_arg = false; /* exit's group_dead */
const volatile __u64 wake_bytes = 0; /* wake the reader past this fill */
const volatile bool emit_irq = false; /* irq and softirq records wanted */
/* targets has room for every tgid (its size reaches pid_max): on_free()
 * need not delete entries that hold a start time */
const volatile bool targets_keep = false;

/* ---- maps of both objects ---------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxsw_cpu);
} cpu_state SEC(".maps");

/* CPUs to trace when cpu_filter (value 1), sized to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} cpus SEC(".maps");

/*
 * Selected tids or tgids (filter_kind); forks of selected tasks are added,
 * processes removed when their leader is freed.  Sized by the loader.
 * The value is the process's start_time (its leader's), which a task must
 * have to be selected under the tgid, or 0 for any process with the id
 * (ids from user space).  A pid is free for a new process an RCU grace
 * period before its old leader is freed: without the time, a followed
 * process that got it then lost its entry at that free, and all its
 * switches (stress-ng --vforkmany 2 on a pid_max of 32768: 28,000 of
 * 182,000 voluntary switches unseen, 0 lost).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} targets SEC(".maps");

/* Processes whose new child processes become targets, themselves not:
 * the caller of a command target not forked yet (its pid is unknown at
 * load), so the command is followed from its fork. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u8);
} fork_roots SEC(".maps");

/* (the kernel layouts that changed across versions: kernel.bpf.h) */

static const __u32 zero;

/* ---- helpers ------------------------------------------------------ */

static __always_inline struct ctxsw_cpu *this_cpu(void)
{
	return bpf_map_lookup_elem(&cpu_state, &zero);
}

static __always_inline bool cpu_selected(void)
{
	__u32 cpu;
	__u8 *on;

	if (!cpu_filter)
		return true;
	cpu = bpf_get_smp_processor_id();
	on = bpf_map_lookup_elem(&cpus, &cpu);
	return on && *on;
}

/*
 * Whether task @t passes the pid and cgroup filters.  @btf: @t is a
 * trusted BTF pointer (a tp_btf argument, or bpf_get_current_task_btf()),
 * whose ids are plain loads; a bpf_probe_read_kernel() each costs more
 * than the rest of a filtered switch's check (~30 ns here).
 */
static __always_inline bool task_selected_as(struct task_struct *t, bool btf)
{
	if (filter_kind == CTXSW_FILTER_TIDS) {
		__u32 id = btf ? t->pid : BPF_CORE_READ(t, pid);

		if (!bpf_map_lookup_elem(&targets, &id))
			return false;
	} else if (filter_kind == CTXSW_FILTER_TGIDS) {
		__u32 id = btf ? t->tgid : BPF_CORE_READ(t, tgid);
		__u64 *start = bpf_map_lookup_elem(&targets, &id);

		if (!start)
			return false;
		if (*start && *start != (btf ? t->group_leader->start_time :
					 BPF_CORE_READ(t, group_leader,
						       start_time)))
			return false;
	}
	if (cg_id) {
		struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
		__u64 id = 0;

		if (!cg || BPF_CORE_READ(cg, level) < cg_level)
			return false;
		id = cgroup_ancestor_id(cg, cg_level);
		if (id != cg_id)
			return false;
	}
	return true;
}

static __always_inline bool task_selected(struct task_struct *t)
{
	return task_selected_as(t, false);
}

static __always_inline bool filtering(void)
{
	return filter_kind != CTXSW_FILTER_NONE || cg_id;
}

static __always_inline struct task_struct *current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}

/* The same as a trusted BTF pointer (tp_btf programs, Linux 5.11+). */
static __always_inline struct task_struct *current_task_btf(void)
{
	return bpf_get_current_task_btf();
}

/* ---- fork following and the end of a process ----------------------- */

/*
 * Follow the descendants of selected processes: the child's tgid joins
 * the targets before the child can run, whatever CPU the fork ran on.
 * Returns whether the parent passes the pid filter.
 */
static __always_inline bool fork_follow(struct task_struct *parent,
					struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u64 start;
	bool sel;

	if (filter_kind == CTXSW_FILTER_NONE)
		return true;
	sel = task_selected(parent);
	if (!follow_forks || filter_kind != CTXSW_FILTER_TGIDS)
		return sel;
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	/* a new thread is its process's: its entry stays */
	if (ctgid == ptgid)
		return sel;
	start = BPF_CORE_READ(child, start_time);
	if (sel || bpf_map_lookup_elem(&fork_roots, &ptgid))
		bpf_map_update_elem(&targets, &ctgid, &start, BPF_ANY);
	return sel;
}

/*
 * A process's tgid leaves the targets when its leader is freed: every
 * thread is released by then, so nothing of it can follow, and the tgid
 * may go to an unrelated process next.  Only its own entry: a new process
 * may have the tgid by then (see targets), selected or not.  One forked
 * between the lookup and the delete, on another CPU, would lose its
 * entry, and with it its switches and its descendants'.  Where the map
 * has room for every tgid (targets_keep), an entry with a start time is
 * left: it selects nobody else (task_selected_as() compares the times),
 * and the tgid's next followed process writes over it.  (stress-ng
 * --vforkmany 2 on a pid_max of 32768 reuses pids within the grace
 * period before the old leader's free: the window was hit about once in
 * 30 runs: a chain with 7% of the command's switches unseen, 0 lost.)
 */
static __always_inline int on_free(struct task_struct *p)
{
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	__u64 *start;

	if (filter_kind != CTXSW_FILTER_TGIDS || !follow_forks || tid != tgid)
		return 0;
	start = bpf_map_lookup_elem(&targets, &tgid);
	if (!start || (targets_keep && *start))
		return 0;
	if (!*start || *start == BPF_CORE_READ(p, start_time))
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

/*
 * The processes the exit of @p leaves unreaped (kernel.bpf.h): each child
 * the exiting thread hands away, and the process itself when its parent
 * will not wait for it.  Each goes to orphan_found(), which each object
 * defines: @c the process's task (a leader, or @p), @why =
 * enum ctxmon_orphan_why.  The children of a selected process are
 * selected (fork following), so they are not looked up again.
 */
static __always_inline void orphan_found(struct task_struct *c, __s32 tgid,
					 __s32 parent, __u8 why);

/*
 * One child per step: @pos, the child at hand, is read from the list
 * before the loop.  Verifiers before Linux 6.7 check a bpf_loop()
 * callback as if it ran once, from the caller's state: a walk that began
 * at pos 0 had the branch that steps on from @pos pruned as dead code
 * (6.1 marked the first child 32768 times and no other).
 */
struct orphan_walk {
	__u64 p, pos;	/* task pointers, read through probes only */
	__s32 tgid;
};

static long orphan_step(__u32 i, void *ctx)
{
	struct orphan_walk *w = ctx;
	struct task_struct *c = (void *)w->pos;

	(void)i;
	if (!c)
		return 1;
	if (child_unreaped(c))
		orphan_found(c, BPF_CORE_READ(c, tgid), w->tgid,
			     0 /* CTXMON_ORPHAN_PARENT_DIED */);
	w->pos = (__u64)child_next((void *)w->p, c);
	return 0;
}

/*
 * @loop: walk up to CTXSW_ORPHAN_WALK_LOOP children with bpf_loop()
 * (Linux 5.17+), else CTXSW_ORPHAN_WALK in a bounded loop.  A constant in
 * each program, so the bounded one has no bpf_loop() call to refuse.
 */
static __always_inline void orphans_of_exit(struct task_struct *p,
					    bool group_dead, const bool loop)
{
	__s32 tgid = BPF_CORE_READ(p, tgid), ptgid = 0;

	if (exit_loses_children(p, group_dead)) {
		if (loop) {
			struct orphan_walk w = {
				.p = (__u64)p,
				.pos = (__u64)child_next(p, NULL),
				.tgid = tgid,
			};

			bpf_loop(CTXSW_ORPHAN_WALK_LOOP, orphan_step, &w, 0);
		} else {
			struct task_struct *c = NULL;

			for (int i = 0; i < CTXSW_ORPHAN_WALK; i++) {
				c = child_next(p, c);
				if (!c)
					break;
				if (child_unreaped(c))
					orphan_found(
						c, BPF_CORE_READ(c, tgid), tgid,
						0 /* CTXMON_ORPHAN_PARENT_DIED */);
			}
		}
	}
	if (group_dead && exit_autoreaped(p, &ptgid))
		orphan_found(p, tgid, ptgid, 1 /* CTXMON_ORPHAN_AUTOREAP */);
}
#endif
