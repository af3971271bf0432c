/*
 * recording.h - what the recording subcommands (record, report, script,
 * import) share: their entry points, the metadata keys that carry a
 * capture's own counters, and the one function that turns an account
 * into stat's output, so that `record --stat` and `report` print the same
 * thing for the same events.
 */
#ifndef CTXMON_CLI_RECORDING_H
#define CTXMON_CLI_RECORDING_H

#include <stdio.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/record.h>

#include "output/output.h"

#define DEFAULT_RECORDING "ctxmon.data"

/* The session's counters at stop (u64), beyond record.h's keys. */
#define META_CAP_EVENTS "capture.events"
#define META_CAP_LOST "capture.lost"
#define META_CAP_LOST_RECORDS "capture.lost_records"
#define META_CAP_ORDER "capture.order_violations"
#define META_TARGET_KIND "target.kind"		/* u64: ctxmon_target_kind */
#define META_RUSAGE "target.rusage"		/* u64[2]: nvcsw, nivcsw */
#define META_RUSAGE_CPU "target.rusage_cpu_ns"	/* u64: utime + stime */

/* What stat knows at the end of a run besides the account. */
struct run_summary {
	const char *backend;
	enum ctxmon_target_kind target;
	struct ctxmon_session_stats cap;
	bool has_exit;
	int wstatus;
	bool has_rusage;
	uint64_t ru_nvcsw, ru_nivcsw;
	uint64_t ru_cpu_ns;	/* its utime + stime; 0: not known */
	pid_t root;		/* the command's pid; 0: unknown */
	bool preempt_rt;	/* a recording made on a PREEMPT_RT kernel
				 * (live: found by kcmp__here()) */
	/* how the recording's kernel showed a signal-cut sleep, when
	 * record probed it (live: kcmp__here()) */
	bool sig_known;
	enum ctxmon_sigsleep sigsleep;
	const char *sig_why;
	const char *source;	/* the recording, for report */
	const char *arch;	/* its machine, for syscall names; NULL:
				 * this build's */
	unsigned marks;		/* kcmp__tree()'s @marks; 0: the
				 * backend's usual (kcmp__backend_marks()) */
	/* report: the recording's integrity verdict; NULL for a capture */
	const struct ctxmon_verdict *verdict;
};

/*
 * Close the account's intervals at cap.stop_ts and print stat's final
 * output for it through the output layer.  @o's table choices are
 * completed as stat does (threads for a command or -p, processes with
 * -a).  @keep, when not NULL, filters the rows.  0 or -errno.
 */
int recording__emit(FILE *f, struct output_opts *o, bool want_threads,
		    bool want_procs, struct ctxmon_account *a,
		    const struct run_summary *s,
		    bool (*keep)(const struct ctxmon_stats *row, bool proc,
				 void *ctx),
		    void *keep_ctx);

/*
 * Finish @a at s->cap.stop_ts and write the HTML report of it and of @h's
 * time series to @path ("-" or NULL: stdout).  @r (may be NULL) gives the
 * recording's metadata; @problem, when not NULL, says why the recording
 * stops early (report: its verdict line, ctxmon_verdict_format()).
 * 0 or -errno.
 */
struct ctxmon_html;
int recording__html(const char *path, struct ctxmon_html *h,
		    struct ctxmon_account *a, const struct run_summary *s,
		    const struct ctxmon_reader *r, const char *problem);

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif
