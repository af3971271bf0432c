/*
 * ctxmon/record.h - recordings: write an event stream to a file, read it
 * back, print it as ftrace text, import ftrace text traces.
 *
 * A recording holds every event of a session's ordered stream, the tasks
 * known at its start (tid, tgid, comm) and the session's metadata as
 * key/value pairs.  It is a sequence of checksummed, zstd-compressed chunks
 * (docs/file-format.md), written so that a writer killed at any moment
 * leaves a file that reads correctly up to its last complete chunk.
 *
 * Conventions as in ctxmon.h: int functions return 0 or a negative errno,
 * constructors return NULL and set errno (their error text is then in
 * ctxmon_record_last_error()), every _close() accepts NULL, and the
 * library prints nothing.
 */
#ifndef CTXMON_RECORD_H
#define CTXMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <ctxmon/ctxmon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Well-known metadata keys.  Values marked u64 are 8 bytes little-endian
 * (ctxmon_record_set_meta_u64); u64[] are arrays of those; the others
 * are strings. */
#define CTXMON_META_SOURCE	"source"	  /* "record", "import" */
#define CTXMON_META_TOOL	"tool"		  /* "ctxmon 0.2.0" */
#define CTXMON_META_CMDLINE	"cmdline"	  /* how it was recorded */
#define CTXMON_META_HOST	"host"		  /* nodename */
#define CTXMON_META_KERNEL	"kernel.release"  /* uname -r */
#define CTXMON_META_ARCH	"kernel.machine"  /* uname -m */
#define CTXMON_META_PREEMPT_RT	"kernel.preempt_rt" /* u64: 1 PREEMPT_RT, 0 not */
#define CTXMON_META_SIGSLEEP	"kernel.sigsleep" /* u64: enum ctxmon_sigsleep */
#define CTXMON_META_SIGSLEEP_WHY "kernel.sigsleep_why" /* str: how it was found */
#define CTXMON_META_NCPUS	"cpus.count"	  /* u64: possible CPUs */
#define CTXMON_META_CPUS_ONLINE "cpus.online"	  /* "0-1" */
#define CTXMON_META_CLOCK	"clock"		  /* "monotonic", ... */
#define CTXMON_META_BACKEND	"backend"	  /* "perf", "bpf", "text" */
#define CTXMON_META_BUFFER	"trace.buffer"	  /* trace-cmd buffer instance
						   * imported; absent: the top */
#define CTXMON_META_EVENTS	"events"	  /* u64: CTXMON_EVENTS_* */
/* "on-cpu" when sched_wakeup was kept only for a task still on its CPU
 * (CTXMON_EVENTS_WAKEUP_ALL); absent when every one was kept. */
#define CTXMON_META_WAKEUPS	"sched_wakeup"
/* u64: children of one exit the backend's ORPHAN events cover
 * (CTXMON_ORPHAN_WALK or CTXMON_ORPHAN_WALK_MANY); absent: the backend's
 * usual (ctxmon_backend_caps()). */
#define CTXMON_META_ORPHAN_WALK	"orphans.walk"
#define CTXMON_META_TARGET	"target"	  /* "all", "pid 42", "cmd ls" */
#define CTXMON_META_TARGET_PIDS "target.pids"	  /* u64[]: PIDS/TIDS target */
#define CTXMON_META_ROOT_PID	"target.root_pid" /* u64: launched command */
#define CTXMON_META_TIME_START	"time.start"	  /* u64: session clock, ns */
#define CTXMON_META_TIME_STOP	"time.stop"	  /* u64 */
#define CTXMON_META_WALL_START	"time.start_wall" /* u64: ns since the epoch */
#define CTXMON_META_LOST_START	"lost.start"	  /* u64[]: per-CPU counters */
#define CTXMON_META_LOST_STOP	"lost.stop"	  /* u64[] */
#define CTXMON_META_EXIT_STATUS "target.status"	  /* u64: wait status */
#define CTXMON_META_WRITE_ERROR "write.error"	  /* why the writer stopped */
/* Event format texts: "format/<system>/<name>" -> the tracefs format file. */
#define CTXMON_META_FORMAT_PREFIX "format/"
/* Names of IRQ lines for text output: "irq.name/<n>" -> "eth0". */
#define CTXMON_META_IRQ_PREFIX	"irq.name/"

/* ctxmon_last_error(), by an older name kept for its callers. */
const char *ctxmon_record_last_error(void);

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

struct ctxmon_record;

struct ctxmon_record_opts {
	size_t sz;		/* sizeof(struct ctxmon_record_opts) */
	int level;		/* zstd level, 0: default (3) */
	unsigned chunk_events;	/* records per chunk, 0: default (16384) */
};

/*
 * Create (or truncate) @path with mode 0600 and write the file header.
 * @opts may be NULL.  Returns NULL and sets errno on failure.  Finish with
 * ctxmon_record_close().
 */
struct ctxmon_record *ctxmon_record_create(const char *path,
					   const struct ctxmon_record_opts *opts);

/* Same on an open descriptor (a pipe works); the writer closes @fd. */
struct ctxmon_record *ctxmon_record_fdopen(int fd,
					   const struct ctxmon_record_opts *opts);

/*
 * Set a metadata value (copied).  Values set before the first flush are
 * written ahead of all events; later ones go out with the next chunk, and
 * a key set again replaces its earlier value for readers.  Keys are at
 * most 255 bytes, values at most 8 MiB.
 */
int ctxmon_record_set_meta(struct ctxmon_record *w, const char *key,
			   const void *val, size_t len) CTXMON_WARN_UNUSED;
int ctxmon_record_set_meta_str(struct ctxmon_record *w, const char *key,
			       const char *val) CTXMON_WARN_UNUSED;
int ctxmon_record_set_meta_u64(struct ctxmon_record *w, const char *key,
			       uint64_t val) CTXMON_WARN_UNUSED;
int ctxmon_record_set_meta_u64s(struct ctxmon_record *w, const char *key,
				const uint64_t *val, size_t n) CTXMON_WARN_UNUSED;
/* Store the tracefs format file of an event ("sched", "sched_switch"). */
int ctxmon_record_add_format(struct ctxmon_record *w, const char *system,
			     const char *name, const char *text) CTXMON_WARN_UNUSED;
/*
 * Store the format files of every event of @groups (CTXMON_EVENTS_*) read
 * from tracefs at @tracefs (NULL: found in /proc/mounts).  Events missing
 * on this kernel, and a machine without tracefs, add nothing.  0 or -errno.
 */
int ctxmon_record_add_tracefs_formats(struct ctxmon_record *w,
				      const char *tracefs,
				      unsigned groups) CTXMON_WARN_UNUSED;

/*
 * Declare a task: from here on in the stream, @tid is named @comm and
 * belongs to @tgid (-1: unknown).  Used for the tasks that exist when the
 * capture starts; readers hand declarations to their task callback.
 */
int ctxmon_record_add_task(struct ctxmon_record *w, pid_t tid, pid_t tgid,
			   const char *comm) CTXMON_WARN_UNUSED;

/*
 * Append one event.  Every field that belongs to its type is stored
 * exactly (comm strings up to 255 bytes); fields of other union members
 * are not.  Returns 0 or a negative errno; after a write error (-ENOSPC)
 * every later call fails with the same error, and the file stays readable
 * up to the last chunk that was written whole.
 */
int ctxmon_record_write(struct ctxmon_record *w, const struct ctxmon_event *ev);

/* ctxmon_event_fn adapter, @ctx being the writer: a session can write
 * straight into a recording.  Returns ctxmon_record_write()'s result. */
int ctxmon_record_write_cb(const struct ctxmon_event *ev, void *ctx);

/* Write pending metadata and the events buffered so far as a chunk: what
 * was written survives a kill from then on. */
int ctxmon_record_flush(struct ctxmon_record *w) CTXMON_WARN_UNUSED;

struct ctxmon_record_stats {
	uint64_t events;	/* events written */
	uint64_t tasks;		/* task declarations */
	uint64_t chunks;	/* event chunks written */
	uint64_t raw_bytes;	/* encoded event bytes before compression */
	uint64_t file_bytes;	/* bytes written to the file so far */
	uint64_t event_bytes;	/* of which event chunks, with headers */
};
void ctxmon_record_get_stats(const struct ctxmon_record *w,
			     struct ctxmon_record_stats *out);

/* Last error of the writer as one line, or "". */
const char *ctxmon_record_error(const struct ctxmon_record *w);

/*
 * Flush, write the end marker, close the file and free the writer.  After
 * an earlier write error it still tries to end the file cleanly (marked as
 * cut short).  Returns 0 or the first error the writer met.
 */
int ctxmon_record_close(struct ctxmon_record *w);

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

struct ctxmon_reader;

/*
 * Open a recording and read its leading metadata.  NULL and errno on
 * failure (ENOENT, EINVAL: not a recording, EPROTONOSUPPORT: a version
 * this build cannot read, EBADMSG: damaged header), with a description
 * in ctxmon_record_last_error().  Close with ctxmon_reader_close().
 */
struct ctxmon_reader *ctxmon_reader_open(const char *path);
/* Same on an open descriptor (a pipe works); the reader closes @fd. */
struct ctxmon_reader *ctxmon_reader_fdopen(int fd);
/* Same on a buffer that must outlive the reader. */
struct ctxmon_reader *ctxmon_reader_open_mem(const void *buf, size_t len);
void ctxmon_reader_close(struct ctxmon_reader *r);

/* Call @fn (ctxmon.h's ctxmon_task_fn) for each task declaration, in
 * stream order; a non-zero return stops ctxmon_reader_read() and is passed
 * back by it. */
void ctxmon_reader_set_task_fn(struct ctxmon_reader *r, ctxmon_task_fn fn,
			       void *ctx);

/*
 * Deliver every event, in file order (the stream's order), to @fn; comm
 * pointers stay valid until the reader is closed.  Returns 0 when the
 * file was read to its end or to where it stops (see
 * ctxmon_reader_get_verdict(): a cut-short file is not an error here), a
 * callback's non-zero return,
 * -EBADMSG when damaged data stopped the reading (events before it were
 * delivered), or another negative errno.  Reads the file once.
 *
 * From a file or memory, helper threads check, decompress and decode the
 * chunks ahead, one per CPU this thread may run on beyond its own (at
 * most three; CTXMON_READ_THREADS=N sets the threads in all, 1 for none).
 * The callbacks still run on the calling thread, in the same order, with
 * the same records and the same stop as with none.  The helpers end when
 * the reading does, and with ctxmon_reader_close().  A pipe is read on
 * the calling thread only: a chunk's events come as soon as it has.
 */
int ctxmon_reader_read(struct ctxmon_reader *r, ctxmon_event_fn fn, void *ctx);

/*
 * The same, handing the events to @fn in runs of consecutive events (from
 * the helpers' decoded arrays in place, or up to 256 decoded at a time on
 * the calling thread).  The records, their order, the task declarations
 * between them, the end and its message are read()'s.  A run ends where
 * ctxmon_reader_comm() changes: each event of it sees the names as read()
 * would show them at that event.  A non-zero return stops the reading
 * after the run; the next read() or read_batch() goes on from there.
 */
int ctxmon_reader_read_batch(struct ctxmon_reader *r, ctxmon_batch_fn fn,
			     void *ctx);

struct ctxmon_reader_info {
	unsigned version_major, version_minor;
	bool complete;		/* the end marker was read */
	bool truncated;		/* the file stops early: no end marker, a
				 * partial last chunk, or a writer error */
	bool damaged;		/* a checksum or a structure was wrong */
	uint64_t events;	/* events delivered so far */
	uint64_t tasks;		/* task declarations so far */
	uint64_t chunks;	/* chunks read */
	uint64_t bytes;		/* file bytes consumed */
	uint64_t first_ts, last_ts;	/* of the events delivered */
	uint64_t problem_offset;	/* file offset of the cut or damage */
};
void ctxmon_reader_get_info(const struct ctxmon_reader *r,
			    struct ctxmon_reader_info *out);

/* What stopped the reading, with the file offset ("chunk at offset 123:
 * checksum mismatch"), or "" when nothing did. */
const char *ctxmon_reader_error(const struct ctxmon_reader *r);

/*
 * The integrity verdict of a recording: what a reader got of it, given
 * the same way by every command that reads one (docs/integrity.md).
 * Complete means every event the capture saw is in the file and was
 * read: the end marker was reached, nothing was cut or damaged, and the
 * capture lost nothing.
 */
struct ctxmon_verdict {
	bool complete;
	/* The reading went to the end of the data or to the problem that
	 * stopped it.  False when the caller stopped it (a callback's
	 * non-zero return) or it failed (memory, I/O): what follows is then
	 * unread, not missing, and the verdict is not one on the file. */
	bool finished;
	bool truncated;		/* the file stops early (no end marker, a
				 * partial last chunk, a writer error): read
				 * up to there */
	bool damaged;		/* a checksum or a structure was wrong: not
				 * read past it */
	uint64_t problem_offset;	/* file offset of the cut or damage */
	const char *problem;	/* ctxmon_reader_error(): "offset N: why",
				 * "" when nothing stopped the reading */
	/* Chunks that failed their checksum.  The reading stops at the
	 * first (what follows it cannot be trusted to be in order), so
	 * 0 or 1; damage of another kind counts 0. */
	unsigned checksum_failures;
	uint64_t events;	/* events read */
	uint64_t bytes;		/* file bytes read whole */
	uint64_t lost;		/* events the capture lost, as its loss
				 * records count them */
	uint64_t lost_records;	/* loss records read */
	uint64_t lost_unknown;	/* of which with no count: an unknown
				 * number lost */
	/* Events lost per CPU, @nlost_cpu entries (CPUs past them lost
	 * none); the array belongs to whoever filled the verdict. */
	const uint64_t *lost_per_cpu;
	size_t nlost_cpu;
	unsigned ncpus;		/* CPUs of the recording ("cpus.count", or
				 * the highest that lost events + 1) */
};

/*
 * The verdict on what @r has read so far: call it once
 * ctxmon_reader_read() (or read_batch()) returned, stopping where it did.
 * The strings and the array in @out are @r's, valid until it is closed.
 */
void ctxmon_reader_get_verdict(const struct ctxmon_reader *r,
			       struct ctxmon_verdict *out);

/*
 * The verdict as the one line every command prints (no newline, no
 * command prefix), @name being the file as the user named it:
 * "run.data: incomplete: truncated at offset 81920 (file ends inside a
 * chunk (512 of 4096 bytes)); 12345 events read; 0 checksum failures;
 * nothing lost".  Written into @buf (NUL terminated, cut to fit @len);
 * returns the length of the whole line, as snprintf() does.
 */
int ctxmon_verdict_format(const struct ctxmon_verdict *v, const char *name,
			  char *buf, size_t len);

/*
 * Write the verdict to @f as one JSON object (docs/integrity.md lists
 * its fields): {"complete":false,"truncated_at":81920,...}.  0, or a
 * negative errno when @f failed.
 */
int ctxmon_verdict_write_json(const struct ctxmon_verdict *v, FILE *f);

/* Metadata read so far (all of it once ctxmon_reader_read() returned).
 * NULL when absent; the pointer is the reader's. */
const void *ctxmon_reader_meta(const struct ctxmon_reader *r, const char *key,
			       size_t *len);
/* NULL when absent or not a string. */
const char *ctxmon_reader_meta_str(const struct ctxmon_reader *r,
				   const char *key);
/* 0, or -ENOENT when absent, -EINVAL when not a u64. */
int ctxmon_reader_meta_u64(const struct ctxmon_reader *r, const char *key,
			   uint64_t *val);
/* Copies up to @n values into @out; returns how many the value holds
 * (0 when absent). */
size_t ctxmon_reader_meta_u64s(const struct ctxmon_reader *r, const char *key,
			       uint64_t *out, size_t n);
/* The @i-th key (insertion order) or NULL past the end. */
const char *ctxmon_reader_meta_key(const struct ctxmon_reader *r, size_t i);

/* Comm (NULL: unknown) and tgid (-1) of @tid as the stream has shown them
 * up to the event being delivered, not including it. */
const char *ctxmon_reader_comm(const struct ctxmon_reader *r, pid_t tid);
pid_t ctxmon_reader_tgid(const struct ctxmon_reader *r, pid_t tid);

/* ------------------------------------------------------------------ */
/* ftrace text                                                          */
/* ------------------------------------------------------------------ */

#define CTXMON_TEXT_NS (1u << 0)	/* timestamps with 9 decimals */

/*
 * Format @ev as one trace_pipe line (no newline) in this kernel's print
 * formats: "comm-tid [cpu] secs.usecs: event: fields", the comm of the
 * line being the one ctxmon_reader_comm() gives.  Call it from the read
 * callback.  Returns the length of the whole line, or a negative errno;
 * the text is cut to fit @len (NUL terminated), so a return of @len or
 * more asks for a buffer of that length + 1 (a long irq name or path).
 */
int ctxmon_reader_format_event(const struct ctxmon_reader *r,
			       const struct ctxmon_event *ev, unsigned flags,
			       char *buf, size_t len);

struct ctxmon_import_opts {
	size_t sz;		/* sizeof(struct ctxmon_import_opts) */
	/* Called for each line that cannot be used, with its number (from
	 * 1) and the reason; may be NULL. */
	void (*warn)(void *ctx, unsigned long line, const char *msg);
	void *warn_ctx;
	/* Stop with -EBADMSG after this many bad lines (0: never). */
	unsigned long max_bad;
};

struct ctxmon_import_stats {
	unsigned long lines;	/* lines read */
	uint64_t events;	/* events written */
	unsigned long skipped;	/* comments, headers, events ctxmon does
				 * not model (tracing_mark_write, ...) */
	unsigned long bad;	/* lines that did not parse */
	unsigned long lost;	/* loss reports ("[LOST n EVENTS]") */
	unsigned long tasks;	/* task declarations written */
	int ncpus;		/* highest CPU seen + 1 */
	uint64_t first_ts, last_ts;
	const char *format;	/* "trace_pipe", "trace-cmd", "systrace"... */
};

/*
 * Read an ftrace text trace (trace_pipe or trace output, `trace-cmd
 * report` output, Android systrace/atrace text or HTML) from @in and
 * write its events, with task declarations for the comms the lines show,
 * into @w.  The caller sets @w's metadata and closes it.  Returns 0, or a
 * negative errno (-EBADMSG: too many bad lines, -ENOSPC from the
 * writer...).  @opts and @stats may be NULL.
 */
int ctxmon_record_import_text(struct ctxmon_record *w, FILE *in,
			      const struct ctxmon_import_opts *opts,
			      struct ctxmon_import_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
