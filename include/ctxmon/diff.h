/*
 * ctxmon/diff.h - two captures compared thread by thread: a recording's
 * rows (accounted as `ctxmon report` does), matched with another's, and
 * the differences of every count and time, largest change first.
 *
 * Thread ids differ between two runs of the same workload, so threads are
 * matched by name: the key of a thread is "PROC/THREAD#K", PROC the comm
 * of its process' leader, THREAD its own comm and K its rank among the
 * threads with the same PROC and THREAD names, by (pid, tid).  Processes
 * are matched by "PROC#K" likewise.
 * Conventions as in ctxmon.h.
 */
#ifndef CTXMON_DIFF_H
#define CTXMON_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/record.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rows of a recording, and the account that owns their comms. */
struct ctxmon_rowfile;

/*
 * Read recording @path through an account set up from its metadata (the
 * recorded target, the command's root pid) and keep its thread and
 * process rows (the target's only unless @all).  NULL and errno on
 * failure, with a description in ctxmon_record_last_error() (record.h).
 * A truncated recording gives the rows of the events before the cut.
 * Free with ctxmon_rowfile_free().
 */
struct ctxmon_rowfile *ctxmon_rowfile_from_recording(const char *path,
						   bool all);
/*
 * The same from the --json output of `ctxmon stat` or `ctxmon report` (its
 * first line: with -I, the first interval).  Latency maxima and means are
 * kept, histograms are not.  NULL and errno, with a description in
 * ctxmon_record_last_error().
 */
struct ctxmon_rowfile *ctxmon_rowfile_from_stat_json(const char *path);
void ctxmon_rowfile_free(struct ctxmon_rowfile *r);
/* Rows owned by @r; *n their number. */
const struct ctxmon_stats *ctxmon_rowfile_rows(const struct ctxmon_rowfile *r,
					      enum ctxmon_rows kind, size_t *n);
/* The capture window of the recording (stop - start), ns. */
uint64_t ctxmon_rowfile_duration(const struct ctxmon_rowfile *r);
/*
 * The integrity verdict of the recording @r was read from (record.h); its
 * strings and array are @r's, valid until it is freed.  0, or -ENOENT
 * for rows read from a JSON output, which has none.
 */
int ctxmon_rowfile_get_verdict(const struct ctxmon_rowfile *r,
			       struct ctxmon_verdict *out);

/* Fields compared. */
enum ctxmon_diff_field {
	CTXMON_DF_SWITCHES,	/* switch-outs */
	CTXMON_DF_VOLUNTARY,
	CTXMON_DF_INVOLUNTARY,
	CTXMON_DF_RUN,		/* ms on CPU */
	CTXMON_DF_WAIT,		/* ms runnable, not on CPU */
	CTXMON_DF_SLEEP,	/* ms asleep */
	CTXMON_DF_MIGRATIONS,
	CTXMON_DF_WAKEUPS,
	CTXMON_DF_LAT_AVG,	/* us, wakeup latency */
	CTXMON_DF_LAT_MAX,	/* us */
	CTXMON_DF__MAX
};
/* "switches", "voluntary", "involuntary", "run", "wait", "sleep",
 * "migrations", "wakeups", "lat_avg", "lat_max"; NULL past the end. */
const char *ctxmon_diff_field_name(unsigned f);
/* "ms", "us" or "". */
const char *ctxmon_diff_field_unit(unsigned f);
/* Index of field @name, or -ENOENT. */
int ctxmon_diff_field_lookup(const char *name);

/* How ctxmon_diff_rows() pairs the rows of A with those of B. */
enum ctxmon_diff_match {
	/* "PROC/THREAD#K", "PROC#K": by name, K the rank among same-named
	 * tasks (two runs of a workload have different tids) */
	CTXMON_DIFF_BY_NAME,
	/* "COMM/TID": a side whose pids are all unknown (an import of
	 * `perf script` text without them) has no process to name a
	 * thread by nor an order to rank it in: its tids are the
	 * trace's own, and the same trace gives the same rows */
	CTXMON_DIFF_BY_COMM_TID,
};

/* The pairing ctxmon_diff_rows() chooses for these rows (by comm and tid
 * when either side knows no pid). */
enum ctxmon_diff_match ctxmon_diff_match_of(const struct ctxmon_stats *ra,
					    size_t na,
					    const struct ctxmon_stats *rb,
					    size_t nb);

struct ctxmon_diff_row {
	char key[80];	/* "PROC/THREAD#K", "PROC#K" or "COMM/TID" */
	bool in_a, in_b;		/* present on each side */
	double a[CTXMON_DF__MAX];	/* 0 where absent */
	double b[CTXMON_DF__MAX];
};

/*
 * Match rows @ra[@na] with @rb[@nb] (both threads, or both processes,
 * as @kind says; a thread's process name is its leader's comm when the
 * leader is among the rows, else its own; by comm and tid as
 * ctxmon_diff_match_of() says) and return one row per key,
 * sorted by
 * the absolute change of field @sort, largest first (ties: by key).
 * malloc'd, the caller frees; *n its length.  NULL and errno on failure.
 */
struct ctxmon_diff_row *ctxmon_diff_rows(const struct ctxmon_stats *ra,
					 size_t na,
					 const struct ctxmon_stats *rb,
					 size_t nb, enum ctxmon_rows kind,
					 unsigned sort, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
