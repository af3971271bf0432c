/*
 * capture/ftrace.h - what the two ftrace backends share (ftrace_inst.c,
 * ftrace_loss.c, ftrace_pages.c, ftrace_common.c).
 *
 * Both backends ("ftrace": per-CPU trace_pipe_raw pages; "ftrace-text":
 * the instance's trace_pipe) capture into a private tracefs instance
 * (instances/ctxmon-<pid>) so that the top-level buffer and every other
 * user's settings are never touched.  This header holds the pieces they
 * have in common, and the parsers the unit tests drive without tracefs:
 * the ring-buffer sub-buffer walker, the per-CPU stats parser, the
 * instance-name rule of the stale-instance cleaner, and the tid -> tgid
 * map (trace records carry only the tid).
 */
#ifndef CTXMON_FTRACE_H
#define CTXMON_FTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

/* Per-CPU buffer size when the session does not give one (KiB). */
#define FTRACE_DEFAULT_BUFFER_KB 4096

/* Read file @rel of tracefs directory @dir into @buf (NUL-terminated):
 * the length, or -errno. */
ssize_t ftrace__get(const char *dir, const char *rel, char *buf, size_t len);

/* ---- the private instance ----------------------------------------- */

struct ftrace_inst;

struct ftrace_inst_opts {
	unsigned buffer_kb; /* 0: FTRACE_DEFAULT_BUFFER_KB */
	/* the user asked for buffer_kb: failing to set it is an error */
	bool buffer_kb_given;
	unsigned buffer_percent; /* poll wake-up fill level, 0: leave */
	/* Record only events that involve these tasks and the tasks they
	 * fork (set_event_pid, event-fork); none: everything.  When the
	 * kernel refuses, everything is recorded. */
	const pid_t *pids;
	size_t npids;
	/* events to enable, as "system/name"; required ones fail the open */
	const char *const *events;
	const bool *required;
	size_t nevents;
};

/*
 * Remove the instances left by ctxmon processes that no longer exist
 * (instances/ctxmon-<pid>[-<n>] whose pid is dead), so a killed ctxmon
 * costs nothing after the next start.  Returns how many were removed.
 */
int ftrace_inst__clean_stale(const char *tracefs);

/* The pid an instance name belongs to, or -1 when the name is not one
 * ctxmon makes ("ctxmon-<pid>" or "ctxmon-<pid>-<n>"). */
pid_t ftrace_inst__name_pid(const char *name);

/*
 * Create and configure a private instance under @tracefs: tracing off,
 * trace_clock "mono" (the session clock, CLOCK_MONOTONIC), the buffer
 * size, the events.  Writes nothing outside the instance.  On failure
 * the half-made instance is removed, @err holds one line, and NULL is
 * returned with errno set.  Free with ftrace_inst__free().
 */
struct ftrace_inst *ftrace_inst__new(const char *tracefs,
				     const struct ftrace_inst_opts *o,
				     char *err, size_t errlen);
/* Instance directory (absolute path). */
const char *ftrace_inst__path(const struct ftrace_inst *in);
/* True when the instance records only the tasks of opts.pids. */
bool ftrace_inst__filtered(const struct ftrace_inst *in);
/* Add @tids to the tasks a filtered instance follows (set_event_pid; a
 * no-op when it records every task); 0 or -errno. */
int ftrace_inst__follow(struct ftrace_inst *in, const int32_t *tids, size_t n);
/* Buffer size per CPU that the kernel gave (KiB). */
unsigned ftrace_inst__buffer_kb(const struct ftrace_inst *in);
/* Open a file of the instance (@rel relative to it); fd or -errno. */
int ftrace_inst__open(const struct ftrace_inst *in, const char *rel, int flags);
/* tracing_on of the instance; 0 or -errno. */
int ftrace_inst__tracing(struct ftrace_inst *in, bool on);
/*
 * Turn tracing off and remove the instance.  Every file the caller
 * opened in it must be closed first (the kernel refuses to remove an
 * instance with open files).  Accepts NULL.
 */
void ftrace_inst__free(struct ftrace_inst *in);

/* ---- per-CPU ring-buffer counters (per_cpu/cpuN/stats) ------------- */

struct ftrace_stats {
	uint64_t overrun; /* events overwritten (overwrite mode) */
	uint64_t commit_overrun; /* events dropped by nested writers */
	uint64_t dropped; /* events refused (no-overwrite mode) */
};

/* Parse the text of a stats file; 0, or -EINVAL when "overrun:" is not
 * in it (the other two default to 0). */
int ftrace_stats__parse(const char *text, size_t len, struct ftrace_stats *s);

/*
 * Loss bookkeeping of one CPU.  The ring buffer tells a loss two ways:
 * a flag on the next sub-buffer read (with the count when it fits in the
 * page) and the running counters of the stats file.  The flags place a
 * loss exactly in the stream; the counters give totals.  Counts told so
 * far never exceed what the kernel had counted when it set the flag, and
 * at the end the remainder is told, so the per-CPU total is exact.
 */
struct ftrace_loss {
	int fd; /* per_cpu/cpuN/stats, -1 when unreadable */
	struct ftrace_stats base; /* at enable */
	struct ftrace_stats now; /* last read, less base */
	uint64_t overrun_told; /* overwrites reported so far */
	uint64_t other_told; /* dropped + commit overruns reported */
	uint64_t pending; /* to report before the CPU's next event */
	bool has_pending;
};

/* Open the stats file of @cpu (a failure only disables the counters). */
void ftrace_loss__open(struct ftrace_loss *l, const struct ftrace_inst *in,
		       int cpu);
void ftrace_loss__close(struct ftrace_loss *l);
/* Take the counters as the zero point. */
void ftrace_loss__baseline(struct ftrace_loss *l);
/* Read the counters into l->now; 0 or -errno (counters unchanged). */
int ftrace_loss__sample(struct ftrace_loss *l);
/* A loss of @count events (0: unknown) to tell before the next event. */
void ftrace_loss__add(struct ftrace_loss *l, uint64_t count);
/* Drops the flags cannot show (dropped, commit overrun) and, with
 * @final, every overwrite not told yet, become pending. */
void ftrace_loss__settle(struct ftrace_loss *l, bool final);
/* Tell a pending loss to the stream at @ts (the next event's time). */
void ftrace_loss__flush(struct ftrace_loss *l, struct stream *st, int cpu,
			uint64_t ts);

/* ---- ring-buffer sub-buffers (trace_pipe_raw) ---------------------- */

/* Where the sub-buffer header keeps its fields (events/header_page). */
struct rb_layout {
	uint32_t ts_off;
	uint32_t commit_off, commit_size;
	uint32_t data_off;
	uint32_t subbuf; /* bytes per sub-buffer read */
};

/* Parse events/header_page text; fields missing keep the 64-bit
 * defaults (ts 0, commit 8/8, data 16).  0 or -EINVAL. */
int rb_layout__parse(const char *text, struct rb_layout *l);

struct rb_page {
	const uint8_t *data; /* the events */
	uint32_t len; /* bytes of events */
	uint64_t ts; /* time of the sub-buffer's first event */
	bool missed; /* events were lost before this page */
	bool missed_known; /* ... and missed_count says how many */
	uint64_t missed_count;
	/* iteration state */
	uint32_t off;
	uint64_t cur;
};

/* Open one sub-buffer of @n bytes as read from trace_pipe_raw.  0, or
 * -EINVAL when the header does not fit or the length is impossible. */
int rb_page__open(struct rb_page *pg, const struct rb_layout *l,
		  const void *buf, size_t n);

/*
 * Next data record: 1 with *@data/@len (the tracepoint entry, starting
 * with common_type) and *@ts (ns), 0 at the end of the page, -EINVAL for
 * a record that runs past the page (the rest is then unreadable).
 */
int rb_page__next(struct rb_page *pg, const uint8_t **data, uint32_t *len,
		  uint64_t *ts);

/* ---- tid -> tgid ---------------------------------------------------- */

struct tgid_map;

/* A task_newtask record: parent (the creating task), child, clone flags
 * and time. */
struct tgid_newtask {
	uint64_t ts, flags;
	int32_t parent, child;
};

/* Learn @n records gathered from every CPU, in time order (sorts @nt): a
 * thread's record needs its process's, which another CPU may hold. */
void tgid_map__learn(struct tgid_map *m, struct tgid_newtask *nt, size_t n);

/* Empty map looking up unknown tids in @proc ("/proc"; tests pass a
 * fake tree).  NULL and errno on failure. */
struct tgid_map *tgid_map__new(const char *proc);
void tgid_map__free(struct tgid_map *m);
/* Learn @tid's tgid; 0 or -ENOMEM. */
int tgid_map__set(struct tgid_map *m, int32_t tid, int32_t tgid);
/* A task was created (task_newtask at @ts, 0 if not known): a
 * CLONE_THREAD child joins the parent's process, anything else starts its
 * own.  The entry holds from @ts on: an event of that tid before @ts was a
 * previous task's. */
int tgid_map__newtask(struct tgid_map *m, int32_t parent, int32_t child,
		      uint64_t clone_flags, uint64_t ts);
/* @tid's tgid: known, else read from <proc>/<tid>/status (the answer,
 * or -1 when the task is gone, is kept).  0 for the idle task. */
int32_t tgid_map__get(struct tgid_map *m, int32_t tid);
/* The same for an event at @ts: -1 when the entry was born after @ts
 * (the tid was reused; the earlier task is gone). */
int32_t tgid_map__get_at(struct tgid_map *m, int32_t tid, uint64_t ts);
/* What the map knows of @tid at @ts, never reading /proc: -1 when
 * nothing (or only a later task of that tid). */
int32_t tgid_map__known(const struct tgid_map *m, int32_t tid, uint64_t ts);
/* Whether @tid, at @ts, is a process started with CLONE_PARENT (its
 * task_newtask said so): its parent is its forker's. */
bool tgid_map__clone_parent(const struct tgid_map *m, int32_t tid,
			    uint64_t ts);
/* /proc look-ups done so far (for tests and diagnostics). */
uint64_t tgid_map__lookups(const struct tgid_map *m);

/* ---- what both backends hold ---------------------------------------- */

struct ftrace_common {
	struct ftrace_inst *inst;
	struct decoder *dec; /* the event list; the raw backend decodes */
	struct tgid_map *tg;
	struct ftrace_loss *loss; /* ncpus entries, by CPU id */
	int ncpus;
	int epfd; /* the session polls this */
	int wake_fd; /* eventfd in epfd: "a round fell behind" */
	/* new tasks read from task_newtask, to add to the pid filter */
	int32_t *born;
	size_t nborn, born_cap;
};

/*
 * Remove stale instances, load the formats of ctx->events, make and
 * configure the instance (and task_newtask, optional), open the per-CPU
 * stats.  @buffer_percent: poll wake-up level, 0 to leave it.  0, or
 * -errno with ctx->err set and nothing left behind.
 */
int ftrace_common__open(struct ftrace_common *c, struct backend_ctx *ctx,
			unsigned buffer_percent);
/* Watch @fd (readable when data waits) in the poll set; 0 or -errno. */
int ftrace_common__poll_add(struct ftrace_common *c, int fd, uint32_t key);
/*
 * At the start of a round (@behind false) clear the wake-up; at its end,
 * @behind true when the round stopped at its bound with data left, so
 * that the session's next poll returns at once instead of sleeping while
 * the buffers fill.
 */
void ftrace_common__behind(struct ftrace_common *c, bool behind);
/* Counters' zero point, then tracing on; 0 or -errno with ctx->err. */
int ftrace_common__enable(struct ftrace_common *c, struct backend_ctx *ctx);
/* Turn the instance's tracing off (the next reads drain what is left);
 * 0, or -errno with ctx->err set. */
int ftrace_common__disable(struct ftrace_common *c, struct backend_ctx *ctx);
/* Close the stats files and remove the instance: the caller closes its
 * own files of the instance first.  Safe on a zeroed or closed one. */
void ftrace_common__close(struct ftrace_common *c);
/*
 * A task_newtask was read: the kernel's pid filter adds a followed task's
 * children at sched_process_fork, which threads started inside a process
 * by create_io_thread() (io_uring's workers) and vhost never fire.  Note
 * @child when @clone_flags are theirs; ftrace_common__follow_born() adds
 * the noted ones to the filter.
 */
void ftrace_common__born(struct ftrace_common *c, int32_t child,
			 uint64_t clone_flags);
void ftrace_common__follow_born(struct ftrace_common *c);

/* ---- the text form --------------------------------------------------- */

/*
 * Head of a trace_pipe line: the current task's tid and the CPU, and the
 * event name (not NUL-terminated).  0, or -EINVAL when the line has no
 * "<comm>-<tid> [cpu] ... <ts>: <event>:" head.
 */
int ftrace_text__head(const char *line, size_t len, int32_t *tid, int *cpu,
		      const char **event, size_t *event_len);

/*
 * A task_newtask line ("pid=%d comm=%s clone_flags=%llx ..."): 1 with
 * the parent (the line's task), the child and the clone flags, 0 for a
 * line of another event, -EINVAL when malformed.  (The shared text
 * parser skips events ctxmon does not model; this one it needs.)
 */
int ftrace_text__newtask(const char *line, size_t len, int32_t *parent,
			 int32_t *child, uint64_t *clone_flags);

#endif
