/*
 * ctxmon/export.h - a recording as a timeline for other tools: a Perfetto
 * trace (protobuf), a SQLite database with the tables of Perfetto's trace
 * processor, or a Chrome JSON trace.  Also the self-contained HTML report.
 *
 * Exports are outputs: they read a recording through the reader
 * (record.h) and never touch a capture backend.  They stream: memory grows
 * with the number of threads and CPUs, not with the number of events.
 * The formats and their tables: docs/export.md, docs/sqlite.md.
 *
 * Conventions as in ctxmon.h: 0 or a negative errno; the text of the last
 * error of this thread is in ctxmon_export_last_error().
 */
#ifndef CTXMON_EXPORT_H
#define CTXMON_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/record.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ctxmon_export_format {
	CTXMON_EXPORT_PERFETTO,		/* Perfetto protobuf trace */
	CTXMON_EXPORT_SQLITE,		/* SQLite, trace processor's tables */
	CTXMON_EXPORT_CHROME_JSON,	/* Chrome JSON trace event format */
};

struct ctxmon_export_opts {
	size_t sz;		/* sizeof(struct ctxmon_export_opts) */
	unsigned format;	/* enum ctxmon_export_format */
	/* A damaged or truncated recording fails with -EBADMSG (and no
	 * output file) unless this is set: then what the readable part
	 * holds is exported, and stats.partial says so. */
	bool partial;
	/* Perfetto: events per CPU bundle (0: 4096). */
	unsigned bundle_events;
	/* Perfetto: leave out ctxmon's own tracks (slices and flows). */
	bool no_tracks;
};

struct ctxmon_export_stats {
	uint64_t events;	/* events read */
	uint64_t switches;	/* sched_switch events written */
	uint64_t wakings;	/* sched_waking events written */
	uint64_t threads;	/* threads seen */
	uint64_t processes;	/* processes seen */
	uint64_t spans;		/* thread state intervals */
	uint64_t sched;		/* CPU run intervals */
	uint64_t wakeups;	/* wakeup edges (flows) */
	uint64_t lost;		/* events the recording says were lost */
	uint64_t bytes;		/* output size */
	bool partial;		/* the recording stops early; what was
				 * readable was exported */
};

/* Short name of a format ("perfetto", "sqlite", "chrome-json"), and back
 * (-EINVAL for an unknown name). */
const char *ctxmon_export_format_name(unsigned format);
int ctxmon_export_format_parse(const char *name);

/*
 * Export the recording @r (just opened, nothing read yet; it is read to
 * its end) to @path ("-": standard output, but for SQLite), all or
 * nothing (ctxmon/outfile.h): on failure a file at @path is as it was.
 * @st may be NULL.  Returns 0, -EBADMSG when the recording is damaged or
 * cut short and @o->partial is not set, or another negative errno.  On
 * failure ctxmon_export_last_error() says why in one line.
 */
int ctxmon_export_recording(struct ctxmon_reader *r, const char *path,
			    const struct ctxmon_export_opts *o,
			    struct ctxmon_export_stats *st) CTXMON_WARN_UNUSED;

/* ctxmon_last_error(), by an older name kept for its callers. */
const char *ctxmon_export_last_error(void);

/* ------------------------------------------------------------------ */
/* HTML report                                                         */
/* ------------------------------------------------------------------ */

/*
 * The plots of the HTML report need a time series (per-CPU busy time and
 * switches over time) that the account does not keep: an html object
 * watches the same stream as the account, in bounded memory (the series
 * is re-binned coarser as it grows).
 */
struct ctxmon_html;

struct ctxmon_html_info {
	size_t sz;			/* sizeof(struct ctxmon_html_info) */
	const char *title;		/* "ctxmon report: pingpong" */
	const char *source;		/* recording path or "live" */
	const char *backend, *kernel, *host, *cmdline;
	uint64_t start_ts, stop_ts;	/* the window shown */
	uint64_t lost, lost_records;	/* loss reported by the capture */
	bool truncated;			/* the recording stops early (cut or
					 * damaged) */
	const char *problem;		/* why, when truncated: report gives
					 * its verdict line */
	/* The kernel's own counters of a launched command, when known. */
	bool has_rusage;
	uint64_t ru_nvcsw, ru_nivcsw;
	int ncpus;
	unsigned max_threads;		/* rows of the bar plots, of the
					 * threads with something to draw
					 * (0: 40) */
	pid_t root_pid;			/* the command: its descendants that
					 * it does not reap are left out of
					 * the comparison; 0: unknown */
	bool preempt_rt;		/* it ran on a PREEMPT_RT kernel: an
					 * exiting thread's block may come
					 * after the kernel folded its
					 * counters (docs/accounting.md) */
	bool sig_bound;			/* a backend judging switch kinds by
					 * the state shown, on a kernel that
					 * may show a signal-cut sleep as R
					 * (ctxmon/features.h): switches
					 * shown R without preemption may be
					 * voluntary */
	unsigned orphan_walk;		/* children of one exit the
					 * backend's marks of processes left
					 * unreaped cover (record's
					 * CTXMON_META_ORPHAN_WALK, the
					 * session's caps); 0: the backend's
					 * usual */
	uint64_t ru_cpu_ns;		/* the command's CPU time by its
					 * rusage (user + system), shown
					 * beside its traced run time; 0:
					 * not known */
};

/* NULL and errno on failure; free with ctxmon_html_free(). */
struct ctxmon_html *ctxmon_html_new(void);
void ctxmon_html_free(struct ctxmon_html *h);
/* Watch one event of the stream (any order-respecting stream). */
void ctxmon_html_feed(struct ctxmon_html *h, const struct ctxmon_event *ev);
int ctxmon_html_feed_cb(const struct ctxmon_event *ev, void *ctx);
/*
 * Write the report of @a (finished: ctxmon_account_finish() called) to
 * @f: one HTML file with inline CSS and SVG, no external reference.  With
 * causes enabled on @a, switches are split by cause.  0 or -errno.
 */
int ctxmon_html_write(struct ctxmon_html *h, FILE *f,
		      const struct ctxmon_account *a,
		      const struct ctxmon_html_info *info) CTXMON_WARN_UNUSED;

#ifdef __cplusplus
}
#endif
#endif
