/*
 * ctxmon/ctxmon.h - public API of the ctxmon library.
 *
 * A session captures scheduler events from one kernel mechanism (a backend),
 * merges the per-CPU streams into one stream whose timestamps never go
 * backwards, and hands the events to a callback as the capture runs.  An
 * accounting object turns that stream into per-thread, per-process and
 * per-CPU numbers.  The two are independent: an embedding program may feed
 * its own events to the accounting, or consume the stream itself.
 *
 * Conventions: functions returning int give 0 (or a count) on success and a
 * negative errno on failure; constructors return NULL and set errno.  Every
 * _free()/_close() accepts NULL.  The library never prints or exits; the last
 * error of a session is readable with ctxmon_session_error().
 */
#ifndef CTXMON_CTXMON_H
#define CTXMON_CTXMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>

#include <ctxmon/event.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTXMON_VERSION "0.2.0"

#if defined(__GNUC__)
#define CTXMON_WARN_UNUSED __attribute__((warn_unused_result))
#else
#define CTXMON_WARN_UNUSED
#endif

/* ------------------------------------------------------------------ */
/* Session: capture and the ordered stream                             */
/* ------------------------------------------------------------------ */

enum ctxmon_target_kind {
	CTXMON_TARGET_ALL = 0,	/* every task on the machine */
	CTXMON_TARGET_PIDS,	/* processes (tgids) and their later children */
	CTXMON_TARGET_TIDS,	/* single threads */
	CTXMON_TARGET_CMD,	/* a command launched by the session */
};

/* Event groups to enable (bit mask).  0 means CTXMON_EVENTS_SCHED. */
#define CTXMON_EVENTS_SCHED	(1u << 0) /* switch, wakeups, migrate, fork, exec, exit */
#define CTXMON_EVENTS_IRQ	(1u << 1) /* irq and softirq entry/exit */
#define CTXMON_EVENTS_SYSCALL	(1u << 2) /* raw_syscalls enter/exit */
/*
 * Every sched_wakeup.  Without it the bpf backend keeps, unless it
 * captures only some CPUs, the sched_wakeup of a task still on its CPU
 * (woken in place, before it left) and drops the rest: they follow a
 * sched_waking of the same task and tell the accounting nothing, and
 * were a fifth of the streaming programs' time.  The accounting is the
 * same either way; ask for it where the events themselves are shown or
 * counted (hist, a recording meant for them).  Other backends keep all.
 */
#define CTXMON_EVENTS_WAKEUP_ALL (1u << 3)

struct ctxmon_session_opts {
	size_t sz;			/* sizeof(struct ctxmon_session_opts) */
	enum ctxmon_target_kind target;
	const pid_t *pids;		/* PIDS / TIDS: the ids */
	size_t npids;
	char *const *argv;		/* a command to launch (CMD, or with ALL
				 * to capture while it runs); argv[0] is
				 * looked up in PATH */
	const char *backend;		/* "auto" (NULL), "perf", ... */
	unsigned events;		/* CTXMON_EVENTS_* */
	unsigned buffer_kb;		/* per-CPU buffer, 0: backend default */
	const char *tracefs;		/* tracefs mount point, NULL: find it */
	bool mount_tracefs;		/* mount tracefs if it is not mounted */
	int verbose;			/* >0: explain choices in ctxmon_session_log */
	const char *cgroup;		/* only tasks in this cgroup v2 directory
					 * or below (absolute, or relative to
					 * the v2 mount), filtered in the
					 * kernel: bpf backends only, the
					 * others refuse; NULL: any */
};

struct ctxmon_session;

/* Called once per event, in time order.  A non-zero return stops the poll
 * early and is passed back by ctxmon_session_poll(). */
typedef int (*ctxmon_event_fn)(const struct ctxmon_event *ev, void *ctx);

/* Called with @n > 0 events in a row, in time order, where a reader can
 * hand them over together (ctxmon_reader_read_batch()): one call for
 * many saves a call and its checks per event.  A non-zero return stops
 * the reading after these @n. */
typedef int (*ctxmon_batch_fn)(const struct ctxmon_event *evs, size_t n,
			       void *ctx);

/*
 * Open a session: probe the kernel, pick the backend, open the events (not
 * yet enabled).  For CTXMON_TARGET_CMD the command is launched by
 * ctxmon_session_start(), once capture is live.  Returns NULL and sets errno on
 * failure; a description is then available from ctxmon_last_error().  The
 * caller closes the session with ctxmon_session_close().
 */
struct ctxmon_session *ctxmon_session_open(const struct ctxmon_session_opts *opts);

/*
 * Enable capture; for a command target, then fork the command (it is
 * followed from fork, so its switches before exec count too) and exec it.
 * A command that cannot be found gives -ENOENT (the CLI exits 127).
 */
int ctxmon_session_start(struct ctxmon_session *s) CTXMON_WARN_UNUSED;

/*
 * Wait up to @timeout_ms (-1: until data arrives, 0: do not wait) for
 * events, then deliver, in time order, every event that is safe to deliver
 * (see "watermark" in the README).  Returns the number delivered, a
 * callback's non-zero return, or a negative errno.  -EINTR means a signal
 * arrived; the caller decides whether to go on.
 */
int ctxmon_session_poll(struct ctxmon_session *s, int timeout_ms,
			ctxmon_event_fn fn, void *ctx);

/* Disable capture and deliver every remaining event, in order. */
int ctxmon_session_stop(struct ctxmon_session *s, ctxmon_event_fn fn, void *ctx);

struct ctxmon_session_stats {
	uint64_t events;		/* events delivered */
	uint64_t lost;			/* events reported lost, all CPUs */
	uint64_t lost_records;		/* loss reports received */
	uint64_t order_violations;	/* delivered events older than the last */
	uint64_t held;			/* events read but not yet delivered */
	uint64_t delivered_to;		/* every event up to this time has
					 * been delivered */
	int ncpus;
	const uint64_t *lost_per_cpu;	/* ncpus entries, owned by the session */
	uint64_t start_ts, stop_ts;	/* capture window, session clock */
};
int ctxmon_session_get_stats(const struct ctxmon_session *s,
			     struct ctxmon_session_stats *out);

/* Name of the backend in use ("perf", "bpf", ...). */
const char *ctxmon_session_backend(const struct ctxmon_session *s);

/* The event groups the session delivers (CTXMON_EVENTS_*), with
 * CTXMON_EVENTS_WAKEUP_ALL set when it delivers every sched_wakeup. */
unsigned ctxmon_session_events(const struct ctxmon_session *s);

/*
 * Nanoseconds the backend's own kernel-side programs have run (BPF
 * run-time statistics, turned on through a file descriptor the session
 * holds, so the system setting is left as it was).  0, -EPERM when the
 * kernel keeps no such time for us, -EOPNOTSUPP when the backend runs no
 * programs.
 */
int ctxmon_session_kernel_ns(struct ctxmon_session *s, uint64_t *ns);

/* Pid of the launched command, or -1. */
pid_t ctxmon_session_child(const struct ctxmon_session *s);

/*
 * Reap the launched command if it has exited.  Returns 1 and fills
 * @status and @ru (either may be NULL) when it has, 0 while it runs, a
 * negative errno on error.  With @block it waits.
 */
int ctxmon_session_reap_child(struct ctxmon_session *s, bool block,
			      int *status, struct rusage *ru);

/* Last error of the session as one line, or "" (owned by the session). */
const char *ctxmon_session_error(const struct ctxmon_session *s);

/* Diagnostic notes gathered while opening (backend choice...), or "". */
const char *ctxmon_session_log(const struct ctxmon_session *s);

/* Stop capture if running, kill and reap a command not yet started, and
 * free everything.  Events open in the kernel are closed. */
void ctxmon_session_close(struct ctxmon_session *s);

/*
 * One line on what the last failed constructor of this thread met, or ""
 * (owned by the library, per thread): ctxmon_session_open(),
 * ctxmon_record_create() and _fdopen(), ctxmon_reader_open*(),
 * ctxmon_export_recording(), ctxmon_metrics_open().  Each clears it when
 * called; a reader's failure to read on sets it too.
 */
const char *ctxmon_last_error(void);

/* Called for each task found by ctxmon_proc_scan(); non-zero stops it. */
typedef int (*ctxmon_task_fn)(pid_t tid, pid_t tgid, const char *comm,
			      void *ctx);

/*
 * Walk the tasks in /proc: every thread of process @pid, or of every
 * process when @pid <= 0.  Tasks that vanish during the walk are skipped.
 * Returns the number of tasks reported, a callback's non-zero return, or
 * -ESRCH when @pid does not exist.
 */
int ctxmon_proc_scan(pid_t pid, ctxmon_task_fn fn, void *ctx);

/* ------------------------------------------------------------------ */
/* Accounting: per-thread, per-process and per-CPU numbers             */
/* ------------------------------------------------------------------ */

#define CTXMON_HIST_BUCKETS 40	/* log2 buckets: [2^i, 2^(i+1)) ns */

struct ctxmon_latency {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t max_ts;		/* when the maximum ended (switch-in) */
	int32_t max_waker_tid;		/* who woke it for the maximum, -1 */
	int32_t max_cpu;		/* where it then ran */
	int32_t max_prev_tid;		/* who ran there before it, -1 */
	bool max_is_bound;		/* max_ns was not measured: it is a
					 * bound, the upper edge of the
					 * highest histogram bucket (or less),
					 * and max_ts and the context are
					 * unknown.  Set in an interval of a
					 * counting backend that could not
					 * tell the interval's own maximum;
					 * shown as "<=" (in the struct's
					 * padding: its size is as in 0.2.0) */
	uint64_t hist[CTXMON_HIST_BUCKETS];
};


enum ctxmon_sleep_state { CTXMON_SLEEP_S, CTXMON_SLEEP_D, CTXMON_SLEEP_OTHER,
			  CTXMON_SLEEP__MAX };

/* Numbers of one thread (or, summed, of one process). */
struct ctxmon_stats {
	pid_t tid;			/* thread id; for a process, its tgid */
	pid_t tgid;			/* -1 if never learnt */
	pid_t ppid;			/* parent (tgid of the forking task,
					 * from fork events; of a process
					 * started with CLONE_PARENT, the
					 * forker's own where the backend
					 * tells it: bpf-agg, bpf), -1
					 * unknown */
	uint32_t gen;			/* tells apart tasks that reused a tid */
	uint32_t pgen;			/* generation of its process: rows
					 * roll up by (tgid, pgen), so a reused
					 * pid is a new process */
	const char *comm;		/* last comm seen (interned) */
	uint32_t nthreads;		/* process rows: threads seen */
	bool exited;
	bool target;			/* selected by the session's target */
	bool incomplete;		/* alive during a lost-event window:
					 * its numbers may miss events */
	bool orphaned;			/* a command's descendant reparented
					 * away (or still alive when the
					 * command died): the kernel does not
					 * fold it into the command's rusage */
	uint64_t first_ts, last_ts;	/* observed span */
	uint64_t switch_in, switch_out;
	uint64_t voluntary, involuntary;
	uint64_t exit_switch;		/* last switch-out of a dying thread */
	uint64_t exit_counted;		/* of them, in state Z: a process
					 * leader not reaped yet, whose
					 * counters (this switch included)
					 * are read at reap into rusage */
	uint64_t exit_preempt;		/* involuntary switch-outs after the
					 * thread's sched_process_exit whose
					 * place against the kernel's fold of
					 * its counters is unknown (part of
					 * involuntary; tracepoint backends,
					 * and bpf ones on PREEMPT_RT inside
					 * the fold's lock, or for a process
					 * leader while its parent reaps it;
					 * see docs/accounting.md) */
	uint64_t after_fold;		/* involuntary switch-outs known to
					 * come after that fold, or after a
					 * leader's reap read its counters
					 * (bpf): part of involuntary, never
					 * in rusage */
	uint64_t run_ns, wait_ns;	/* on CPU; runnable, not on CPU */
	uint64_t sleep_ns[CTXMON_SLEEP__MAX];
	uint64_t migrations;
	uint64_t wakeups;		/* times it was woken */
	struct ctxmon_latency lat;	/* waking -> on CPU */
	uint32_t folded;		/* 0: one task.  Else this row sums
					 * that many exited tasks of this comm,
					 * folded to bound memory (tid and
					 * tgid are 0); see exited_keep */
	uint64_t shown_running;		/* involuntary switch-outs classified
					 * from a tracepoint state R without
					 * preemption: a yield, or on kernels
					 * whose sched_switch shows a
					 * signal-cut sleep as R (see
					 * ctxmon/features.h), a switch the
					 * kernel counts voluntary */
	uint64_t after_fold_vol;	/* voluntary switch-outs known to
					 * come after the fold (bpf): part of
					 * voluntary, never in rusage.  On
					 * PREEMPT_RT an exiting thread may
					 * block on a lock there */
	uint64_t exit_block;		/* voluntary switch-outs of a thread
					 * (not a process leader) after its
					 * sched_process_exit, which the
					 * backend cannot place against the
					 * fold (tracepoint backends): part
					 * of voluntary.  The kernel counts
					 * them all, but on PREEMPT_RT, where
					 * one may come after the fold */
	bool took_over;			/* a leader row begun by an exec in a
					 * non-leader thread, which took the
					 * leader's tid: the process goes on
					 * (its parent, its rusage), it is
					 * not a new one under that pid */
	uint32_t exit_lead_ns;		/* thread rows of the stream: its
					 * sched_process_exit came this long
					 * before last_ts (at least 1; up to
					 * UINT32_MAX, which says longer);
					 * 0: no exit event (in the struct's
					 * tail padding: its size is as in
					 * 0.2.0) */
};

struct ctxmon_cpu_stats {
	int cpu;
	uint64_t first_ts, last_ts;
	uint64_t busy_ns, idle_ns;
	uint64_t switches;
	uint64_t lost;
};

struct ctxmon_account;

struct ctxmon_account_opts {
	size_t sz;
	enum ctxmon_target_kind target;	/* which tasks are marked target */
	const pid_t *pids;
	size_t npids;
	pid_t root_pid;			/* CMD: the command's pid, followed
					 * with all its descendants */
	size_t exited_keep;		/* 0 keeps a row for every task ever
					 * seen.  Else at most about this many
					 * rows of exited threads are kept one
					 * by one; older ones are folded into
					 * one row per comm (folded > 0), so a
					 * long run on a forking machine does
					 * not grow.  Not with causes on. */
	bool no_wakeups;		/* the stream has no wakeup events
					 * (perf-switch): a sleeper switched
					 * in is no anomaly */
	uint64_t flags;			/* CTXMON_ACCOUNT_*, below; 0: none
					 * (at the end: the struct of 0.2.0
					 * stops before it) */
};

/*
 * ctxmon_account_opts.flags.  NO_ZOMBIE_TIMES: do not take a process for
 * unreaped because its leader's last switch-out shows a zombie (Z) after
 * its parent's last thread exited.  Set it where the stream marks the
 * unreaped itself (ORPHAN events: bpf), or reads a switch's state before
 * it takes the switch's time (CTXMON_CAP_STATE_EARLY: perf, bpf): a CPU
 * held up between the two (a VM's vCPU) puts the parent's reap and exit
 * before a switch-out that still read Z, and a reaped child is left out
 * of the command's rusage.  Where the time comes first (ftrace), the rule
 * is sound.
 */
#define CTXMON_ACCOUNT_NO_ZOMBIE_TIMES (1ull << 0)

/* New accounting state; NULL and errno on failure; free with _free(). */
struct ctxmon_account *ctxmon_account_new(const struct ctxmon_account_opts *o);
void ctxmon_account_free(struct ctxmon_account *a);

/*
 * Declare a task that exists before capture (read from /proc), so rows get
 * its tgid and comm and target marking works for threads that never switch
 * out during the capture.  @comm is copied.  0 or -ENOMEM.
 */
int ctxmon_account_add_task(struct ctxmon_account *a, pid_t tid, pid_t tgid,
			    const char *comm);

/* Feed one event.  Events must come in time order.  Never fails: an event
 * that makes no sense for the current state is counted as an anomaly. */
void ctxmon_account_feed(struct ctxmon_account *a, const struct ctxmon_event *ev);

/* Matches the ctxmon_event_fn signature, @ctx being the account. */
int ctxmon_account_feed_cb(const struct ctxmon_event *ev, void *ctx);

/* Feed @n events in a row, as ctxmon_account_feed() on each would (the
 * same rows, with less work per event); and its ctxmon_batch_fn adapter,
 * @ctx being the account. */
void ctxmon_account_feed_batch(struct ctxmon_account *a,
			       const struct ctxmon_event *evs, size_t n);
int ctxmon_account_feed_batch_cb(const struct ctxmon_event *evs, size_t n,
				 void *ctx);

/* Close every open interval at @ts (end of capture) so spans add up. */
void ctxmon_account_finish(struct ctxmon_account *a, uint64_t ts);

/* Reset counters (not the task table) to start a new interval at @ts. */
void ctxmon_account_reset_interval(struct ctxmon_account *a, uint64_t ts);

enum ctxmon_rows { CTXMON_ROWS_THREADS, CTXMON_ROWS_PROCESSES };

/*
 * Snapshot of the rows: an array the caller frees with free(), *n set to
 * its length; only target tasks unless @all.  Returns NULL and sets errno
 * on failure (an empty result is a non-NULL array with *n = 0).  Comm
 * pointers stay valid while the account lives.
 */
struct ctxmon_stats *ctxmon_account_rows(const struct ctxmon_account *a,
					 enum ctxmon_rows kind, bool all,
					 size_t *n);

/* Per-CPU numbers; caller frees with free(); NULL and errno on failure. */
struct ctxmon_cpu_stats *ctxmon_account_cpus(const struct ctxmon_account *a,
					     size_t *n);

/*
 * Add the counters and times of row @from (a thread) into @to (its
 * process, or any sum): every count and time, the latency histogram, the
 * maximum with its context, and the incomplete flag.  Identity (tid, comm,
 * nthreads, exited, target) and the span are left to the caller.
 */
void ctxmon_stats_add(struct ctxmon_stats *to, const struct ctxmon_stats *from);

/*
 * Drop the rows of threads that have exited (and their folded rows): for
 * a caller that has shown them already and reports intervals, as top
 * does.  Nothing is dropped while causes are on.
 */
void ctxmon_account_forget_exited(struct ctxmon_account *a);

/* Anomalies: events that did not fit the tracked state (e.g. a switch-in
 * of a task the account believed running elsewhere). */
uint64_t ctxmon_account_anomalies(const struct ctxmon_account *a);

#ifdef __cplusplus
}
#endif
#endif
