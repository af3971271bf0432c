/*
 * cmd_top.h - what `ctxmon top` is made of, and the pieces `ctxmon stat`
 * shares with it: the unprivileged tiers' notes and one frame of numbers.
 *
 * tier.c       what an unprivileged tier cannot show, said once
 * top_source.c a frame's numbers: the library's rows of the session
 *              (include/ctxmon/rows.h), one interval per frame
 * top_view.c   formatting a frame: batch text and the rows of the TUI
 * cmd_top.c    the command: options, batch loop, ncurses loop, keys
 */
#ifndef CTXMON_CLI_TOP_H
#define CTXMON_CLI_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/rows.h>

/* ---- the unprivileged tiers' notes (tier.c) ------------------------- */

/*
 * For the unprivileged tiers: say on stderr that tracing was not
 * available and which tier is used instead (when the tier was not asked
 * for by name), as "ctxmon CMD: ...".  Nothing for the tracing backends.
 */
void tier__announce(const char *cmd, struct ctxmon_session *s,
		    const char *asked);
/* The tier's one-line "what it cannot show", or NULL. */
const char *tier__limits(struct ctxmon_session *s);
struct kernel_cmp;
/*
 * Under stat's table: the tier and what it cannot show, and how its
 * comparison with the kernel's counters @k (if valid) is to be read.
 * Nothing for the tracing backends.
 */
void tier__print(FILE *f, struct ctxmon_session *s,
		 const struct kernel_cmp *k);

/* ---- a frame of numbers (top_source.c) ------------------------------ */

struct top_frame {
	uint64_t ts;			/* end of the frame, session clock */
	uint64_t dur_ns;		/* its length */
	struct ctxmon_stats *threads;	/* numbers within the frame */
	size_t nthreads;
	struct ctxmon_stats *procs;
	size_t nprocs;
	uint64_t events, lost;		/* in the frame */
	uint64_t lost_total;		/* since start */
	const char *backend;
	bool row_spans;			/* rates over each row's own span
					 * (CTXMON_CAP_SAMPLED) */
};

void top_frame__clear(struct top_frame *f);

struct top_source;

struct top_source_opts {
	struct ctxmon_session *s;	/* started, owned by the caller */
	enum ctxmon_target_kind target;
	const pid_t *pids;
	size_t npids;
};

/*
 * A source of frames for a running session: events fed into an
 * accounting that is reset at each frame, or the snapshots of a counting
 * backend.  NULL and errno on failure; free with _free().
 */
struct top_source *top_source__new(const struct top_source_opts *o);
void top_source__free(struct top_source *src);
/*
 * Pump the session for at most @timeout_ms.  Returns 0, or -errno;
 * -EINTR when a signal arrived.
 */
int top_source__pump(struct top_source *src, int timeout_ms);
/* The numbers since the previous frame, up to now, into @f (cleared
 * first; the caller clears it with top_frame__clear()).  0 or -errno. */
int top_source__frame(struct top_source *src, struct top_frame *f);

/* ---- machine-wide numbers from /proc (top_source.c) ----------------- */

#define TOP_MAX_CPUS 1024

struct sys_sample {
	uint64_t ctxt;			/* /proc/stat ctxt */
	int ncpus;
	uint64_t busy[TOP_MAX_CPUS], total[TOP_MAX_CPUS]; /* jiffies */
	uint64_t self_cpu_us;		/* ctxmon's own user+system time */
	uint64_t bpf_ns;		/* its BPF programs' run time */
	int bpf_err;			/* 0: bpf_ns is known; -EOPNOTSUPP:
					 * no programs; else not kept */
	uint64_t ts;			/* CLOCK_MONOTONIC, ns */
};

/* Read /proc/stat and our own rusage; 0 or -errno. */
int sys_sample__read(struct sys_sample *s);

/* ---- formatting (top_view.c) ----------------------------------------- */

enum top_sort {
	TOP_SORT_SWITCHES, TOP_SORT_VOL, TOP_SORT_INVOL, TOP_SORT_RUN,
	TOP_SORT_WAIT, TOP_SORT_P99, TOP_SORT_MAXLAT, TOP_SORT_PID,
	TOP_SORT_COMM, TOP_SORT__MAX,
};

struct top_view {
	enum top_sort sort;
	bool procs;			/* process rows, else thread rows */
	char filter[64];		/* comm substring or a pid; "" none */
	bool all_rows;			/* also rows with no switch */
};

/* Parse a sort key name; 0 or -EINVAL. */
int top_view__parse_sort(const char *s, enum top_sort *k);
const char *top_view__sort_name(enum top_sort k);
const char *top_view__sort_keys(void);

/*
 * The rows of @f that @v shows, sorted: an array of pointers into the
 * frame's rows, *n its length; NULL and errno (an empty result is a
 * non-NULL array).  The caller frees the array.
 */
const struct ctxmon_stats **top_view__rows(const struct top_view *v,
					   const struct top_frame *f,
					   size_t *n);

/* Header lines (machine, CPUs, ctxmon itself) into @buf, at most @width
 * columns each, '\n' separated; returns the number of lines. */
int top_view__header(char *buf, size_t len, int width,
		     const struct top_frame *f, const struct sys_sample *a,
		     const struct sys_sample *b, const struct top_view *v);
struct report;
struct output_opts;
/*
 * stat --rates: @r's tables (those @o asks for, at most o->limit rows)
 * with top's per-second columns over r->duration_ns, then the capture
 * line.  0 or -errno when writing failed.
 */
int top_view__print_rates(FILE *f, const struct output_opts *o,
			  const struct report *r);

/* The column titles, and one row, @width columns at most. */
void top_view__title(char *buf, size_t len, int width, bool procs);
void top_view__row(char *buf, size_t len, int width,
		   const struct ctxmon_stats *r, uint64_t dur_ns, bool procs);
/* What @r's rates and shares are over in frame @f: the frame's length,
 * or with sampled rows the row's own span within it (a thread read late
 * in one walk and early in the next has less time than the frame). */
uint64_t top_view__row_dur(const struct top_frame *f,
			   const struct ctxmon_stats *r);

#endif
