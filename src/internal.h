/*
 * internal.h - contracts between the library's layers.
 *
 * Data flows one way: a backend decodes kernel records into per-CPU queues
 * of the stream (stream__slot/stream__commit), the stream merges them in
 * time order up to a watermark, and the session hands them to the caller.
 * Nothing above the stream knows which backend produced an event.
 */
#ifndef CTXMON_INTERNAL_H
#define CTXMON_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ctxmon/ctxmon.h>
#include <ctxmon/rows.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* ctxmon_log2_bucket() inlined, for the accounting of every wakeup. */
static inline unsigned log2_bucket(uint64_t ns)
{
	unsigned b = ns ? 63 - (unsigned)__builtin_clzll(ns) : 0;

	return b < CTXMON_HIST_BUCKETS ? b : CTXMON_HIST_BUCKETS - 1;
}

/* ---- string interning (strtab.c) ---------------------------------- */

struct strtab;

/* New empty table; NULL and errno on failure. */
struct strtab *strtab__new(void);
void strtab__free(struct strtab *t);
/* Interned copy of the first @len bytes of @s (stops at a NUL); the pointer
 * lives as long as the table.  NULL only when out of memory. */
const char *strtab__intern(struct strtab *t, const char *s, size_t len);

/* ---- tracefs and event formats (capture/tracefs.c, decode/format.c) */

/*
 * Find the tracefs mount point through /proc/mounts (or @hint if given and
 * valid) into @buf.  With @mount, mount it at /sys/kernel/tracing when
 * absent.  Returns 0, or -errno with a one-line reason in @err.
 */
int tracefs__find(const char *hint, bool mount, char *buf, size_t len,
		  char *err, size_t errlen);

struct tp_field {
	int offset, size;
	bool is_signed;
	bool is_dynamic;	/* __data_loc: u32 = len << 16 | offset */
	bool is_array;		/* char comm[16] and the like */
};

/* Kernel prev_state encoding, read from the format's own print table. */
struct state_map {
	unsigned n;
	uint64_t mask[16];	/* kernel bit */
	uint32_t state[16];	/* enum ctxmon_task_state bit */
	uint64_t preempt_mask;	/* the "+" bit (TASK_REPORT_MAX) */
};

struct tp_format;

/*
 * Parse events/<system>/<name>/format under @tracefs.  NULL and errno on
 * failure: ENOENT when this kernel has no such event.  Free with _free().
 */
struct tp_format *tp_format__load(const char *tracefs, const char *system,
				  const char *name);
/* Whether a format text is whole enough to hand to libtraceevent (no
 * NUL, its print fmt's quotes and brackets balanced). */
bool tp_format__sane(const char *text, size_t len);
/* Same, from the text of a format file (tests, recordings). */
struct tp_format *tp_format__parse(const char *system, const char *text,
				   size_t len);
/* A view of an event another tep handle owns (libtracecmd's); freeing
 * the view leaves the event alone.  NULL and errno on failure. */
struct tep_event;
struct tp_format *tp_format__wrap(struct tep_event *ev);
void tp_format__free(struct tp_format *f);
int tp_format__id(const struct tp_format *f);
const char *tp_format__name(const struct tp_format *f);
/* 0 and *out filled, or -ENOENT when the field does not exist. */
int tp_format__field(const struct tp_format *f, const char *name,
		     struct tp_field *out);
/* The integer field @f (2, 4 or 8 bytes) of raw record @rec, @len bytes;
 * -1 when the record is too short. */
int64_t tp_field__read(const uint8_t *rec, uint32_t len,
		       const struct tp_field *f);
/* <linux/sched.h> clone flags, as task_newtask gives them */
#define CLONE_PARENT_FLAG 0x00008000ull
#define CLONE_THREAD_FLAG 0x00010000ull
#define CLONE_UNTRACED_FLAG 0x00800000ull
#define CLONE_IO_FLAG 0x80000000ull

/* A new process whose parent is its forker's (CLONE_PARENT, not a
 * thread). */
static inline bool clone_flags__parent(uint64_t fl)
{
	return (fl & CLONE_PARENT_FLAG) && !(fl & CLONE_THREAD_FLAG);
}

/*
 * task:task_newtask's fields read from raw records (ftrace, perf): its
 * type, the parent (common_pid), the child and the clone flags.  @id is
 * the event's id, -1 where the kernel has no usable event.
 */
struct newtask_fmt {
	int id;
	struct tp_field type, parent, child, flags;
};
void newtask_fmt__load(struct newtask_fmt *n, const char *tracefs);
/* Whether raw record @rec is a task_newtask of @n. */
bool newtask_fmt__is(const struct newtask_fmt *n, const uint8_t *rec,
		     uint32_t len);
/* Build the prev_state map from the print fmt's __print_flags table. */
int tp_format__state_map(const struct tp_format *f, const char *field,
			 struct state_map *m);
uint32_t state_map__decode(const struct state_map *m, uint64_t raw,
			   int *preempt);

/*
 * A decoder turns raw tracepoint records (the bytes starting with
 * common_type, as PERF_SAMPLE_RAW and trace_pipe_raw give them) into
 * ctxmon events, using offsets read from the format files.
 */
struct decoder;

struct decoder_event {		/* one tracepoint the decoder knows */
	const char *system, *name;
	int id;			/* tracepoint id on this kernel */
	unsigned group;		/* CTXMON_EVENTS_* group */
	bool required;		/* fail when missing */
};

/*
 * Load the formats of every event in @groups.  A missing optional event
 * is skipped; a missing required one fails with -ENOENT and its name in
 * @err.  NULL and errno on failure.
 */
struct decoder *decoder__new(const char *tracefs, unsigned groups,
			     struct strtab *strs, char *err, size_t errlen);
/* Same, from format texts already read (NUL-terminated, any order). */
struct decoder *decoder__new_from_texts(const char *const *systems,
					const char *const *texts, size_t n,
					struct strtab *strs, char *err,
					size_t errlen);
/* Whether @system:@name (@len bytes, not terminated) is an event the
 * decoder reads. */
bool decoder__models(const char *system, const char *name, size_t len);
/* Same, from the events a tep handle already parsed (a trace.dat's, read
 * by libtracecmd); the handle must outlive the decoder's use. */
struct tep_handle;
struct decoder *decoder__new_from_tep(struct tep_handle *tep,
				      struct strtab *strs, char *err,
				      size_t errlen);
void decoder__free(struct decoder *d);
/* Events the decoder will handle (for the backend to open). */
size_t decoder__events(const struct decoder *d, const struct decoder_event **ev);
/*
 * Decode one raw record into @ev (type, tid from common_pid and the union;
 * ts, cpu and tgid are the caller's).  Returns 0, or -ENOENT for a record
 * of an id the decoder does not know, -EINVAL when it is too short.
 */
int decoder__decode(const struct decoder *d, const void *raw, size_t len,
		    struct ctxmon_event *ev);
/* Format file text of each loaded event, for recordings. */
size_t decoder__formats(const struct decoder *d, const char *const **systems,
			const char *const **texts);

/*
 * When a task switched in whose switch-in was never traced, from its
 * switch-out @ev at @ts: the slice's run before (sw.prev_run_ns, given by
 * the bpf backend), and no earlier than its last known state change
 * @since.  False when that is not known (no run given, or @ts before
 * @since); the account and the timeline then leave the task as it was.
 */
static inline bool event__unseen_in(const struct ctxmon_event *ev,
				    uint64_t ts, uint64_t since, uint64_t *in)
{
	uint64_t run = ev->sw.prev_run_ns;

	if (!run || ts < since)
		return false;
	*in = run < ts - since ? ts - run : since;
	return true;
}

/* ---- ordered stream (stream.c) ------------------------------------ */

struct stream;

/* Default slack behind the snapshot time before an event is delivered.
 * An event can reach its buffer this long after its timestamp when the
 * CPU that writes it stalls in between: on a loaded virtual machine a
 * vCPU is descheduled by the host for milliseconds while the guest's
 * clock runs on (2 ms gave an ordering violation under qemu TCG). */
#define STREAM_SLACK_NS (10 * 1000 * 1000ull)

struct stream *stream__new(int ncpus);
void stream__free(struct stream *st);
int stream__ncpus(const struct stream *st);
/* Next free slot in @cpu's queue (grown as needed), NULL when out of
 * memory.  Fill it, then stream__commit(), which sorts it in among the
 * CPU's queued events (an event older than one its CPU delivered is
 * clamped to that time and counted as a violation). */
struct ctxmon_event *stream__slot(struct stream *st, int cpu);
void stream__commit(struct stream *st, int cpu);
/* Record a loss on @cpu: @count events (0 if unknown) dropped between the
 * CPU's last event and @ts.  Emitted as a CTXMON_EV_LOST in the stream. */
void stream__lost(struct stream *st, int cpu, uint64_t count, uint64_t ts);
/*
 * Deliver, in time order, every queued event with ts <= @watermark
 * (UINT64_MAX: all).  Returns the count delivered or a callback's
 * non-zero return (then delivery stops after that event).
 */
int stream__deliver(struct stream *st, uint64_t watermark,
		    ctxmon_event_fn fn, void *ctx);
void stream__stats(const struct stream *st, struct ctxmon_session_stats *out);
/* Call @fn on every event queued and not yet delivered, in each CPU's
 * order (a backend fills in what it learnt after queueing them). */
void stream__for_each_held(struct stream *st,
			   void (*fn)(struct ctxmon_event *ev, void *ctx),
			   void *ctx);
/* Capture start: a loss on a CPU that has no event yet begins there. */
void stream__set_start(struct stream *st, uint64_t ts);

/* ---- backends ----------------------------------------------------- */

struct backend_ctx {		/* what a backend may read of the session */
	int ncpus;		/* possible CPUs (ids 0..ncpus-1) */
	const bool *online;	/* ncpus entries */
	const char *tracefs;	/* mount point, "" if none */
	unsigned events;	/* CTXMON_EVENTS_* */
	unsigned buffer_kb;	/* 0: backend default */
	enum ctxmon_target_kind target;
	const pid_t *pids;
	size_t npids;
	pid_t root_pid;		/* CMD target: the command, known at open */
	struct strtab *strs;
	struct stream *stream;
	int verbose;
	const char *cgroup;	/* absolute cgroup v2 directory to keep,
				 * NULL: any (only bpf backends filter) */
	bool wakeups_thinned;	/* set by the backend at open: it drops the
				 * sched_wakeup of tasks no longer on their
				 * CPU (CTXMON_EVENTS_WAKEUP_ALL) */
	unsigned caps_more;	/* set by the backend at open: CTXMON_CAP_*
				 * this kernel gave it beyond its ops->caps */
	char *err;		/* one line of error text, errlen bytes */
	size_t errlen;
};

struct backend_ops {
	const char *name;
	/* Open and prepare, not enabled.  0, or -errno with ctx->err set. */
	int (*open)(struct backend_ctx *ctx, void **priv);
	int (*enable)(void *priv);
	int (*disable)(void *priv);
	/* fd that becomes readable when data waits, or -1 (then poll by time). */
	int (*poll_fd)(void *priv);
	/*
	 * Move every readable record into the stream's queues.  *safe_ts is
	 * set to a time before which no record can still arrive (usually
	 * the time taken before reading, less the backend's slack).
	 */
	int (*read)(void *priv, uint64_t *safe_ts);
	void (*close)(void *priv);
	/*
	 * Optional.  The launched command has been forked (ctx->root_pid)
	 * and waits to exec: a backend that follows tasks rather than CPUs
	 * attaches to it here.  0, or -errno with ctx->err set (the command
	 * is then killed).
	 */
	int (*attach)(void *priv, pid_t pid);
	/*
	 * Optional, for backends that count instead of streaming events
	 * (/proc): every thread's numbers since capture start, open
	 * intervals charged up to *@now; rows of threads that ended are kept
	 * (exited set).  Where the kernel goes on counting while the rows
	 * are read, *@now is moved to a time after the read, the one the
	 * rows end at.  *rows is malloc'd, the caller frees it; comms are
	 * interned in ctx->strs.  0 or -errno.  With @interval, the rows'
	 * lat.max_* may instead be each row's maximum since the previous
	 * read with @interval (*@ival_max then true): max_is_bound when the
	 * backend cannot tell it, and the caller, which knows the
	 * interval's histogram, gives the bound.
	 */
	int (*read_rows)(void *priv, uint64_t *now, struct ctxmon_stats **rows,
			 size_t *n, bool interval, bool *ival_max);
	/* Optional, counting backends: forget the rows of exited threads
	 * that read_rows has returned (their caller reports intervals). */
	void (*forget_exited)(void *priv);
	/* What the backend cannot show, one line for the output, or NULL. */
	const char *limits;
	/* Optional: ns its own kernel-side programs have run (BPF run-time
	 * stats, turned on by the first call).  0, or -errno (-EPERM: the
	 * kernel keeps no such time for us). */
	int (*kernel_ns)(void *priv, uint64_t *ns);
	/* What it can show: CTXMON_CAP_* of <ctxmon/rows.h>. */
	unsigned caps;
	/* Optional, counting backends: per-CPU busy/idle since capture
	 * start, charged up to @now; *cpus malloc'd, caller frees.  0 or
	 * -errno. */
	int (*read_cpus)(void *priv, uint64_t now, struct ctxmon_cpu_stats **cpus,
			 size_t *n);
};

extern const struct backend_ops backend_perf;
extern const struct backend_ops backend_ftrace;
extern const struct backend_ops backend_ftrace_text;
extern const struct backend_ops backend_bpf;
extern const struct backend_ops backend_bpf_agg;
extern const struct backend_ops backend_perfswitch;
extern const struct backend_ops backend_proc;

/* ---- session internals (session.c) -------------------------------- */

/* Rows of a counting backend, see backend_ops.read_rows; -EOPNOTSUPP
 * for a streaming one.  *@now may move later (the time the rows end). */
int session__read_rows(struct ctxmon_session *s, uint64_t *now,
		       struct ctxmon_stats **rows, size_t *n, bool interval,
		       bool *ival_max);
/* Per-CPU numbers of a counting backend, see backend_ops.read_cpus;
 * -EOPNOTSUPP when it has none. */
int session__read_cpus(struct ctxmon_session *s, uint64_t now,
		       struct ctxmon_cpu_stats **cpus, size_t *n);

/* ---- rows of exited tasks, folded by comm (analysis/fold.c) -------- */

/* Rows summing exited tasks, one per comm (ctxmon_stats.folded > 0). */
struct fold {
	struct ctxmon_stats *rows;
	size_t n, cap;
};

/* Add the row of an exited task (or a folded row) to its comm's row.
 * 0 or -ENOMEM. */
int fold__add(struct fold *f, const struct ctxmon_stats *row);
/* Append the folded rows to @out (room for f->n more). */
size_t fold__copy(const struct fold *f, struct ctxmon_stats *out);
void fold__clear(struct fold *f);
/* Fold in place all but the @keep most recent exited rows of @rows when
 * more than twice that many have exited (for display: sums unchanged);
 * *n shrinks.  0 or -ENOMEM (then @rows may be reordered, not lost). */
int fold__rows(struct ctxmon_stats *rows, size_t *n, size_t keep);

/* Drop what the last read_rows returned of exited threads: for interval
 * consumers, which have shown them (no-op for a backend without it). */
void session__forget_exited(struct ctxmon_session *s);

/* ---- kernel interfaces (capture/sys.c) ----------------------------- */

struct perf_event_attr;
/* The perf_event_open() system call: an fd, or -1 and errno. */
int sys__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group, unsigned long flags);
#define SYS_PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"
/* The first number of the file @path (procfs, sysfs), or @dflt. */
int sys__read_int(const char *path, int dflt);
/* kernel.perf_event_paranoid (2, the default, if it cannot be read). */
int sys__perf_paranoid(void);
/* Each mount of /proc/mounts in order, its type and mount point (escapes
 * undone) to @fn until it returns non-zero, which is returned; 0 after
 * the last; -errno when the file cannot be read. */
int sys__mounts(int (*fn)(const char *type, const char *dir, void *ctx),
		void *ctx);
/* Undo in place the octal escapes (\040 for a space, \011, \012, \134)
 * of a path in /proc/mounts or /proc/PID/mountinfo; returns @s. */
char *sys__unescape(char *s);
/* The mount point of the first mount of file system type @type, in @buf
 * (empty on failure): 0, -ENOENT, -ENAMETOOLONG or -errno. */
int sys__find_mount(const char *type, char *buf, size_t len);
/* A whole text file of unknown size (procfs, tracefs), NUL-terminated,
 * *lenp its length; at most @max bytes.  malloc'd, the caller frees it;
 * NULL and errno (EFBIG past @max). */
char *sys__read_text(const char *path, size_t max, size_t *lenp);

/* ---- misc (util.c) ------------------------------------------------ */

uint64_t clock__now_ns(void);	/* CLOCK_MONOTONIC */
/* Possible CPUs and which are online; 0 or -errno. Caller frees *online. */
int cpus__probe(int *ncpus, bool **online);
/* Format into a fixed buffer (truncating); returns @buf. */
char *fmt__buf(char *buf, size_t len, const char *fmt, ...) PRINTF_LIKE(3, 4);

/* The one error text of the library, per thread, that a public
 * constructor clears when called and sets when it fails, and
 * ctxmon_last_error() returns (and the older *_last_error() names).
 * err__buf() is ERR__LEN bytes, for a callee that writes an error into a
 * buffer it is given. */
#define ERR__LEN 512
char *err__buf(void);
void err__clear(void);
void err__set(const char *fmt, ...) PRINTF_LIKE(1, 2);
void err__vset(const char *fmt, va_list ap);

#endif
