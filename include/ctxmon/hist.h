/*
 * ctxmon/hist.h - the kernel's hist-trigger language (Documentation/trace/
 * histogram.rst) evaluated in user space over ctxmon's ordered event stream.
 *
 * A hist set holds synthetic event definitions and hist triggers, each
 * attached to an event ("sched:sched_switch", "synthetic:wakeup_latency").
 * The trigger strings are the kernel's own: keys, values, sort, size,
 * modifiers, filters, pause/cont/clear, variables, common_timestamp,
 * onmatch()/onmax()/onchange() actions with save(), trace() and snapshot().
 * Feed it the stream (live or from a recording) and ask for the table in the
 * format of the kernel's `hist` file, or as JSON.
 *
 * Events known: the ones ctxmon captures (sched_switch, sched_waking,
 * sched_wakeup, sched_wakeup_new, sched_migrate_task, sched_process_fork,
 * sched_process_exec, sched_process_exit, irq_handler_entry/exit,
 * softirq_entry/exit, raw_syscalls sys_enter/sys_exit) with the fields of
 * their tracefs format that ctxmon decodes, and the synthetic events
 * defined in the set.  A trigger on any other event is refused with a
 * message that says so.
 *
 * Conventions as in ctxmon.h: int functions return 0 or a negative errno;
 * constructors return NULL and set errno; _free(NULL) is fine.
 */
#ifndef CTXMON_HIST_H
#define CTXMON_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <ctxmon/event.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ctxmon_hist;

/* A new, empty set.  NULL and errno on failure; free with ctxmon_hist_free. */
struct ctxmon_hist *ctxmon_hist_new(void);
void ctxmon_hist_free(struct ctxmon_hist *h);

/*
 * Define a synthetic event with the syntax of tracefs `synthetic_events`
 * ("wakeup_latency u64 lat; pid_t pid; int prio").  A leading '!' removes
 * the definition.  -EINVAL on a syntax error (see ctxmon_hist_error()),
 * -EEXIST if the name is taken.
 */
int ctxmon_hist_define(struct ctxmon_hist *h, const char *def);

/*
 * Add a trigger string to @event ("SYSTEM:EVENT", "SYSTEM/EVENT" or the
 * bare event name), as `echo TRIGGER >> events/SYSTEM/EVENT/trigger`
 * would: "hist:..." creates a trigger, or with :pause, :cont or :clear
 * applies that command to the existing one with the same keys, values,
 * sort and filter; "!hist:..." removes the matching trigger.  -EINVAL with
 * the kernel-style error (message and caret) in ctxmon_hist_error();
 * -ENOENT for an event this set does not know or ctxmon cannot capture.
 */
int ctxmon_hist_add(struct ctxmon_hist *h, const char *event,
		    const char *trigger);

/*
 * The last error as the kernel's error_log would show it, possibly several
 * lines ("hist:sched:sched_switch: error: Couldn't find field\n  Command:
 * hist:keys=foo\n                     ^"), or "".  Owned by the set.
 */
const char *ctxmon_hist_error(const struct ctxmon_hist *h);
/* Offset of the bad token in the command of the last error, -1: none. */
int ctxmon_hist_error_pos(const struct ctxmon_hist *h);

/* CTXMON_EVENTS_* groups the triggers need from a session. */
unsigned ctxmon_hist_events(const struct ctxmon_hist *h);

/* Number of triggers in the set. */
size_t ctxmon_hist_count(const struct ctxmon_hist *h);

/*
 * Tell the set a task's comm before its first event (for .execname and
 * the fields an event does not carry itself).  @comm is copied.
 */
int ctxmon_hist_add_task(struct ctxmon_hist *h, pid_t tid, const char *comm);

/* Syscall numbering for .syscall ("x86_64", "aarch64"; NULL: this machine). */
void ctxmon_hist_set_arch(struct ctxmon_hist *h, const char *arch);

/* Feed one event of the ordered stream.  Never fails: a table that is full
 * counts the event as dropped, as the kernel's does. */
void ctxmon_hist_feed(struct ctxmon_hist *h, const struct ctxmon_event *ev);
/* Matches ctxmon_event_fn, @ctx being the set. */
int ctxmon_hist_feed_cb(const struct ctxmon_event *ev, void *ctx);

/* Empty every table (as :clear does to each trigger). */
void ctxmon_hist_clear(struct ctxmon_hist *h);

enum ctxmon_hist_format {
	CTXMON_HIST_TEXT = 0,	/* the kernel's `hist` file */
	CTXMON_HIST_JSON,
};

/*
 * Format every trigger's table, in the order the triggers were added,
 * grouped by event.  Returns a NUL-terminated string the caller frees with
 * free(), or NULL and errno.
 */
char *ctxmon_hist_format(const struct ctxmon_hist *h,
			 enum ctxmon_hist_format fmt);

/*
 * The canonical form of one trigger (the "trigger info" line, as the
 * kernel prints it in `trigger` and `hist`), of the @i-th trigger; NULL if
 * there is none.  Owned by the set, valid until the next call.
 */
const char *ctxmon_hist_trigger_info(struct ctxmon_hist *h, size_t i);

/* ------------------------------------------------------------------ */
/* The kernel's own hist triggers (where it has them)                  */
/* ------------------------------------------------------------------ */

struct ctxmon_hist_kernel;

/*
 * Make a private tracefs instance for hist triggers under @tracefs (NULL:
 * found in /proc/mounts).  NULL with errno and a one-line reason in @err:
 * ENOTSUP when the kernel has no hist triggers (no events/.../hist files).
 * Close with ctxmon_hist_kernel_close(), which removes every trigger, the
 * instance and the synthetic events defined through it.
 */
struct ctxmon_hist_kernel *ctxmon_hist_kernel_open(const char *tracefs,
						   char *err, size_t errlen);
/* Append @def to synthetic_events; 0 or -errno (see _error()). */
int ctxmon_hist_kernel_define(struct ctxmon_hist_kernel *k, const char *def);
/* Append @trigger to the instance's events/SYS/EVENT/trigger; 0 or -errno,
 * with the kernel's error_log entry in ctxmon_hist_kernel_error(). */
int ctxmon_hist_kernel_add(struct ctxmon_hist_kernel *k, const char *event,
			   const char *trigger);
/* The last error, with the kernel's error_log entry when it wrote one. */
const char *ctxmon_hist_kernel_error(const struct ctxmon_hist_kernel *k);
/* The hist files of the events with triggers, each after a line
 * "# events/SYS/EVENT/hist"; the caller frees; NULL and errno. */
char *ctxmon_hist_kernel_read(const struct ctxmon_hist_kernel *k);
void ctxmon_hist_kernel_close(struct ctxmon_hist_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
