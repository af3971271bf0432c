/*
 * output.h - format accounting results as an aligned table, JSON or CSV.
 *
 * Outputs only format: they get finished numbers (struct report) and write
 * them; every subcommand that shows accounting (stat, report, top -b) goes
 * through here so their outputs agree.
 */
#ifndef CTXMON_OUTPUT_H
#define CTXMON_OUTPUT_H

#include <limits.h>
#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/causes.h>
#include <ctxmon/features.h>
#include <ctxmon/rows.h>

struct ctxmon_verdict;

enum out_format { OUT_TABLE, OUT_JSON, OUT_CSV };

enum sort_key {
	SORT_SWITCHES, SORT_VOL, SORT_INVOL, SORT_RUN, SORT_WAIT, SORT_SLEEP,
	SORT_LAT, SORT_MAXLAT, SORT_MIGR, SORT_TID, SORT_COMM,
};

#include "analysis/kcmp.h"

/* The one-line verdict ("kernel counters: ... (traced vs getrusage:
 * match)") between @pre and @post (plain text, no markup to escape). */
void output__kernel_verdict(FILE *f, const struct kernel_cmp *k,
			    const char *pre, const char *post);
/* The verdict as a line, without the detail lines; for stderr.  A
 * mismatch gets the lines of output__kernel_hints() after it. */
void output__kernel_line(FILE *f, const struct kernel_cmp *k);
/* "run time: traced X, getrusage CPU time Y" between @pre and @post (plain
 * text, no markup to escape; "Run" after a @pre), when ru_cpu_ns is
 * known. */
void output__kernel_cpu(FILE *f, const struct kernel_cmp *k, const char *pre,
			const char *post);
/* What may explain a mismatch, a sentence each, between @pre and @post
 * (plain text, no markup to escape): processes the backend cannot see
 * reaped, io_uring workers it cannot follow.  Nothing on a match. */
void output__kernel_hints(FILE *f, const struct kernel_cmp *k,
			  const char *pre, const char *post);

/* After a stream's loss: real-time threads on every CPU keep the reader
 * off them for up to 95% of each second, and so do thousands of runnable
 * ones whatever its nice; a real-time reader runs when it must. */
#define OUTPUT_RT_HINT                                                        \
	"  if the CPUs were busy with real-time threads (SCHED_FIFO, "         \
	"SCHED_RR) or with many runnable ones, they kept ctxmon's reader "      \
	"off them: read real-time, above them, with --realtime 99 (the "       \
	"command keeps its own policy)"

/* The verdict in one line, and what was not compared in another. */
void output__live_line(FILE *f, const struct live_cmp *l);

/* Causes of the rows (ctxmon_account_causes), matched by (tid, gen). */
struct causes_report {
	const struct ctxmon_causes *threads;
	size_t nthreads;
	const struct ctxmon_causes *procs;
	size_t nprocs;
	const struct ctxmon_pair *pairs;	/* most frequent first */
	size_t npairs;
	const char *arch;			/* syscall names, NULL: this build's */
};

struct report {
	const char *backend;
	uint64_t duration_ns;
	int interval;			/* -1: not periodic, else its index */
	uint64_t interval_ts_ns;	/* interval end, since capture start */
	struct ctxmon_session_stats cap;
	struct ctxmon_stats *threads;	/* sorted in place */
	size_t nthreads;
	struct ctxmon_stats *procs;	/* sorted in place */
	size_t nprocs;
	const struct ctxmon_cpu_stats *cpus;
	size_t ncpus;
	uint64_t anomalies;
	struct kernel_cmp kernel;
	struct live_cmp live;		/* -p/-t --check */
	bool has_exit;
	int exit_status;
	const char *source;		/* recording file (report), or NULL */
	bool counted;			/* numbers counted in the kernel: no
					 * events went through the stream */
	bool text_reader;		/* the backend parses text
					 * (CTXMON_CAP_TEXT): the slowest */
	const struct causes_report *causes;	/* NULL: not asked for */
	/* the recording's integrity (report), or NULL for a capture */
	const struct ctxmon_verdict *verdict;
};

struct output_opts {
	enum out_format fmt;
	bool threads, processes;	/* which tables to show */
	enum sort_key sort;
	bool show_cpus;
	size_t limit;			/* rows per table, 0: all */
};

/* Parse a --sort key; 0 or -EINVAL. */
int output__parse_sort(const char *s, enum sort_key *k);
/* The name a --sort spelling stands for: "voluntary" for "vol" (also
 * invol, lat, maxlat, migr), @s itself otherwise.  Every command's
 * --sort reads its key through this one table (docs/cli.md). */
const char *output__sort_alias(const char *s);
/* The accepted --sort keys, for help text. */
const char *output__sort_keys(void);
/* Sort rows by @k, largest first (tid and comm: ascending). */
void output__sort(struct ctxmon_stats *rows, size_t n, enum sort_key k);
/* Write @r; 0, or -errno when writing failed (e.g. -ENOSPC). */
int output__report(FILE *f, const struct output_opts *o, struct report *r);
/* ',"integrity":{...}' (ctxmon_verdict_write_json()) when @v is not NULL:
 * the one way every command's JSON carries a recording's verdict. */
void output__verdict_json(FILE *f, const struct ctxmon_verdict *v);
/* Human duration in a fixed-width-friendly form ("12.3ms"); returns buf. */
char *output__dur(char *buf, size_t len, uint64_t ns);
/* @l's maximum as output__dur() gives it, right-aligned to @width
 * columns, after "\u2264" (<=) when it is a bound (max_is_bound); "-"
 * when @l has no latency. */
char *output__lat_max(char *buf, size_t len, const struct ctxmon_latency *l,
		      int width);

/* ---- causes (causes_out.c) and latency (latency_out.c) ------------ */

/* Cause rows sorted by (tid, gen) for lookup; free with _free(). */
struct causes_index {
	const struct ctxmon_causes **p;
	size_t n;
};
int output__causes_index(struct causes_index *ix,
			 const struct ctxmon_causes *rows, size_t n);
void output__causes_index_free(struct causes_index *ix);
/* The causes of row (@tid, @gen), or NULL. */
const struct ctxmon_causes *output__causes_find(const struct causes_index *ix,
						pid_t tid, uint32_t gen);
/* Name of syscall @id, or "syscall_<id>" written into @buf. */
const char *output__sys_name(const char *arch, long id, char *buf,
			     size_t len);
/* The causes tables for the rows of @r shown by @o; 0 or -ENOMEM. */
int output__causes_text(FILE *f, const struct output_opts *o,
			const struct report *r);
/* One row's causes as a JSON object. */
void output__causes_json(FILE *f, const struct ctxmon_causes *c,
			 const char *arch);
void output__json_lat_summary(FILE *f, const struct ctxmon_lat_summary *l);
void output__pair_json(FILE *f, const struct ctxmon_pair *p);
/* ',"pairs":[...]' */
void output__pairs_json(FILE *f, const struct ctxmon_pair *p, size_t n);

/* One latency histogram of `ctxmon latency`. */
struct latency_group {
	enum { LAT_THREAD, LAT_PROCESS, LAT_CPU } kind;
	int id;				/* tid, pid or cpu */
	int tgid;			/* threads: their process, else -1 */
	const char *comm;
	const struct ctxmon_lat_summary *lat;
};

struct latency_report {
	const char *backend;
	const char *source;		/* recording read (-i), or NULL */
	uint64_t duration_ns;
	struct ctxmon_session_stats cap;
	uint64_t anomalies;
	const struct latency_group *groups;
	size_t ngroups;
	const struct ctxmon_pair *pairs;	/* wake pairs shown */
	size_t npairs;
	unsigned buckets;		/* 0: log2 histograms, else linear */
	size_t limit;			/* groups and pairs shown, 0: all */
	/* the recording's integrity (-i), or NULL for a capture */
	const struct ctxmon_verdict *verdict;
};

/* Write @r as text (runqlat-style histograms) or JSON; 0 or -errno. */
int output__latency(FILE *f, enum out_format fmt,
		    const struct latency_report *r);

#endif
