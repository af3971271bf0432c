/*
 * bpf_backend.h - what the bpf backend offers beyond struct backend_ops.
 *
 * The registry sees two backends: backend_bpf (streaming) and
 * backend_bpf_agg (aggregation in the kernel, read with read_rows).  The
 * cgroup and CPU filters have no field in struct backend_ctx yet, so they
 * are reached through bpf_backend__open(), of which both backends' open
 * are special cases.  Once backend_ctx grows the fields (see the report
 * of issue 3), this part of the header goes.  The tests use the rest.
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
 * Open like backend_bpf.open, with the options above (@o may be NULL:
 * streaming, no cgroup or CPU filter).  Aggregation needs tp_btf programs
 * (plain loads of task fields), BPF atomics and bpf_loop() (its row lock,
 * ctxsw_agg.bpf.c); where they do not load it fails with
 * -EOPNOTSUPP and the caller should stream.  0, or -errno with ctx->err
 * set; close with backend_bpf.close.
 */
int bpf_backend__open(struct backend_ctx *ctx, const struct bpf_backend_opts *o,
		      void **priv);

/*
 * Aggregation mode (backend_bpf_agg.read_rows): a snapshot of every
 * thread's row since enable, the intervals still open charged up to *@now
 * (the time the caller ends the capture or the interval at; pass the
 * session's stop time for the final read).  While the programs run, the
 * rows go on counting as they are read, so *@now moves to a time after
 * the read if it was earlier: no row then holds time past it.  Rows of threads that died are
 * included (exited set); a reused tid gets gen 1, 2... oldest first.  All
 * rows are targets (only selected tasks get one); ppid is a process's
 * parent (its real_parent: the forker's parent under CLONE_PARENT), a
 * thread's forking task's tgid, -1 when the fork was not seen.  *rows is malloc'd, the
 * caller frees it; comms are interned in ctx->strs.  0, -EINVAL when not
 * in aggregation mode, or -errno.  With @interval, each row's lat.max_*
 * are its maximum since the previous read with @interval, kept by the
 * programs (*@ival_max set), or max_is_bound when that is not known
 * (bpf_row__interval_max() in bpf_agg.c).
 */
int bpf_backend__read_rows(void *priv, uint64_t *now,
			   struct ctxmon_stats **rows, size_t *n, bool interval,
			   bool *ival_max);

/* Per-CPU busy/idle time and switch counts of aggregation mode, open
 * intervals charged up to @now; for the @now a read of the rows returned,
 * the CPUs as read with the rows.  *cpus malloc'd, caller frees. */
int bpf_backend__read_cpus(void *priv, uint64_t now,
			   struct ctxmon_cpu_stats **cpus, size_t *n);

struct bpf_backend_info {
	bool tp_btf;		/* tp_btf programs (else raw_tp) */
	bool aggregate;
	uint64_t lost;		/* ring reserve failures, all CPUs */
	uint64_t inexact;	/* switches classified from the state alone */
	uint64_t rows_dropped;	/* aggregation rows that found no room */
	uint64_t missed_out;	/* aggregation: switch-outs never traced */
	uint64_t bad_records;	/* ring records that made no sense */
};

/* Counters of the programs (for logs and tests). */
int bpf_backend__info(void *priv, struct bpf_backend_info *out);

/* ---- pieces of the backend that need no kernel (unit tests) ---- */

struct ctxsw_row;

/*
 * Each thread's nvcsw/nivcsw at its last switch seen, by tid, from the
 * switch records in ring order: what tells voluntary from involuntary
 * (ctxsw_stream.bpf.c).  @inexact counts switches it could not tell,
 * classified from the state (a thread's first switch-out when it was
 * running as capture began).
 */
struct bpf_csw {
	struct bpf_csw_slot {
		int32_t tid;	/* 0: free */
		uint32_t pad;
		uint64_t nv, niv;
	} *slot;
	size_t cap, n;	/* cap: a power of two, or 0 */
	uint64_t inexact;
};

void bpf_csw__clear(struct bpf_csw *c);

/*
 * Decode one ring buffer record and commit it to @st on its CPU (the
 * stream sorts it in among that CPU's queued events), preceded by a loss
 * event when the record says records were dropped before it.  A switch is
 * classified with @csw, which records must reach in ring order.  0,
 * -EINVAL for a record that is not one (nothing committed), -ENOMEM.
 */
int bpf_rec__commit(struct stream *st, struct strtab *strs,
		    struct bpf_csw *csw, const void *rec, size_t len);

/* A thread's row as struct ctxmon_stats; the state still open is charged
 * up to @now (0: not at all).  The comm is interned in @strs. */
/* Row @r's latency maximum of the interval a read with intervals ends,
 * over @l's (bpf_agg.c); @bumped: the read moved r->ireq on before it
 * copied @r. */
void bpf_row__interval_max(const struct ctxsw_row *r, bool bumped,
			   struct ctxmon_latency *l);
void bpf_row__stats(const struct ctxsw_row *r, uint64_t now,
		    struct strtab *strs, struct ctxmon_stats *out);

/*
 * @r, a copy of the row at @src, made again once @src's seq changes,
 * waiting up to SETTLE_NS for it (busy, less than *@budget ns, which it
 * lowers by the time spent): a row the switch program is about to write.
 */
#define SETTLE_NS 200000ull
void bpf_row__settle(const struct ctxsw_row *src, struct ctxsw_row *r,
		     uint64_t *budget);

/* Bytes of the shared ring for @buffer_kb per CPU (0: the default, 4 MiB
 * per CPU up to 64 MiB) and @online CPUs: a power of two of pages, at most
 * 1 GiB. */
size_t bpf_ring__bytes(unsigned buffer_kb, int online, long page);

#endif
