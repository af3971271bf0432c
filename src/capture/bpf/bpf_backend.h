/*
 * bpf_backend.h - what the bpf backend offers beyond struct backend_ops.
 *
 * Aggregation mode and the cgroup and CPU filters have no field in struct
 * backend_ctx yet, so they are reached through bpf_backend__open(); the
 * plain backend_bpf.open is bpf_backend__open() with @o NULL.  Once
 * backend_ctx and backend_ops grow the fields (see the report of issue 3),
 * this header shrinks to nothing.
 */
#ifndef CTXMON_BPF_BACKEND_H
#define CTXMON_BPF_BACKEND_H

#include "internal.h"

struct bpf_backend_opts {
	size_t sz;		/* sizeof(struct bpf_backend_opts) */
	/* Keep per-thread counters, times and latency histograms in BPF
	 * maps and send no events; read them with bpf_backend__read_rows().
	 * read() then moves nothing into the stream. */
	bool aggregate;
	/* Only tasks in this cgroup v2 directory or below it (a path in a
	 * cgroup2 mount); NULL: any. */
	const char *cgroup;
	/* ctx->ncpus entries: capture on these CPUs only; NULL: all. */
	const bool *cpus;
	/* Force the raw_tp programs even where tp_btf loads (tests). */
	bool force_raw_tp;
};

/*
 * Open like backend_bpf.open, with the options above (@o may be NULL).
 * Aggregation needs tp_btf programs (a per-row spin lock); where only
 * raw_tp loads it fails with -EOPNOTSUPP and the caller should stream.
 */
int bpf_backend__open(struct backend_ctx *ctx, const struct bpf_backend_opts *o,
		      void **priv);

/*
 * Aggregation mode: a snapshot of every thread's row, the intervals still
 * open charged up to @now (the time the caller ends the capture or the
 * interval at; pass the session's stop time for the final read).  Rows of
 * threads that died are included (exited set).  *rows is malloc'd, the
 * caller frees it; comms are interned in ctx->strs.  0 or -errno.
 */
int bpf_backend__read_rows(void *priv, uint64_t now, struct ctxmon_stats **rows,
			   size_t *n);

/* Per-CPU busy/idle time and switch counts of aggregation mode, open
 * intervals charged up to @now.  *cpus malloc'd, caller frees. */
int bpf_backend__read_cpus(void *priv, uint64_t now,
			   struct ctxmon_cpu_stats **cpus, size_t *n);

struct bpf_backend_info {
	bool tp_btf;		/* tp_btf programs (else raw_tp) */
	bool aggregate;
	uint64_t lost;		/* ring reserve failures, all CPUs */
	uint64_t inexact;	/* switches classified from the state alone */
	uint64_t rows_dropped;	/* aggregation rows that found no room */
};

/* Counters of the programs (for logs and tests). */
int bpf_backend__info(void *priv, struct bpf_backend_info *out);

#endif
