/*
 * cgagg_load.h - the loader of the per-cgroup / per-process aggregation
 * programs (cgagg.bpf.c): open, load, attach, and read their maps.  Used
 * by the metrics module (src/metrics/metrics.c); the structs of the maps
 * are in src/capture/bpf/cgagg.h.
 */
#ifndef CTXMON_CGAGG_LOAD_H
#define CTXMON_CGAGG_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "capture/bpf/cgagg.h"

struct cgagg_cfg {
	const uint64_t *cg_ids;	/* select tasks in these cgroups (and below) */
	size_t ncg_ids;
	uint32_t max_cgroups, max_procs, max_pairs; /* 0: defaults */
	bool force_raw_tp;
};

struct cgagg_cg_row {
	uint64_t cgid;
	struct cgagg_stats s;
};

struct cgagg_proc_row {
	uint32_t tgid;
	struct cgagg_proc p;
};

struct cgagg_pair_row {
	uint64_t victim, culprit, ns;
};

struct cgagg_cpu_row {
	uint64_t busy_ns, idle_ns, switches;
};

struct cgagg_totals {
	uint64_t cg_overflow, proc_overflow, pair_overflow;
	uint64_t inexact, wait_unattributed;
};

#define CGAGG_MAX_PROGS 8
struct cgagg_prog_stat {
	char name[32];
	uint64_t run_ns, runs;
};

struct cgagg;

/* Open, load (tp_btf, else raw_tp), fill the filter and syscall maps and
 * attach.  NULL with errno and one line in @err on failure; free with
 * cgagg__close(). */
struct cgagg *cgagg__open(const struct cgagg_cfg *cfg, char *err,
			  size_t errlen);
void cgagg__close(struct cgagg *g);
bool cgagg__tp_btf(const struct cgagg *g);
/* Bounds of the kernel maps in use. */
void cgagg__limits(const struct cgagg *g, uint32_t *cgroups, uint32_t *procs,
		   uint32_t *pairs);

/* Snapshots of the maps; arrays malloc'd, the caller frees.  0 or -errno. */
int cgagg__read_cgroups(struct cgagg *g, struct cgagg_cg_row **rows, size_t *n);
int cgagg__read_procs(struct cgagg *g, struct cgagg_proc_row **rows, size_t *n);
int cgagg__read_pairs(struct cgagg *g, struct cgagg_pair_row **rows, size_t *n);
/* Per-CPU busy/idle with the current interval charged up to @now
 * (CLOCK_MONOTONIC ns), and the counters summed over CPUs. */
int cgagg__read_cpus(struct cgagg *g, uint64_t now, struct cgagg_cpu_row **rows,
		     int *n, struct cgagg_totals *tot);
/* Forget a process row (the caller has kept its numbers). */
int cgagg__delete_proc(struct cgagg *g, uint32_t tgid);
/* Run time of the programs (kernel.bpf_stats through BPF_ENABLE_STATS,
 * held by this object); the number filled, 0 when the kernel refused. */
size_t cgagg__prog_stats(struct cgagg *g, struct cgagg_prog_stat *out,
			 size_t max);

/* Syscall class (CGAGG_CAUSE_*) of a syscall name (exposed for tests). */
unsigned cgagg__syscall_class(const char *name);

#endif
