/*
 * ctxmon/taskstats.h - the kernel's own per-task counters over taskstats
 * (generic netlink "TASKSTATS"): any task's counters on request, and the
 * final counters of every task that exits on chosen CPUs, as the kernel
 * sends them from do_exit().
 *
 * The kernel lets only CAP_NET_ADMIN use this family: without it every
 * call gives -EPERM.  The kernel's struct taskstats grows with versions;
 * only the fields listed here are read, each only when the record is long
 * enough to hold it (see .have), so a newer or older kernel is fine.
 *
 * Conventions as in ctxmon.h: 0 or -errno, constructors NULL and errno,
 * _close() accepts NULL, nothing is printed.
 */
#ifndef CTXMON_TASKSTATS_H
#define CTXMON_TASKSTATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ctxmon_taskstats.have: which groups of fields the kernel sent */
#define CTXMON_TS_BASIC	  (1u << 0) /* comm, pid, ppid, uid, times */
#define CTXMON_TS_CSW	  (1u << 1) /* nvcsw, nivcsw */
#define CTXMON_TS_DELAY	  (1u << 2) /* cpu_count, cpu_delay_ns, cpu_run_ns */
#define CTXMON_TS_TGID	  (1u << 3) /* tgid (struct version 12 and later) */

struct ctxmon_taskstats {
	unsigned have;		/* CTXMON_TS_* */
	uint16_t version;	/* the kernel's struct version */
	uint32_t size;		/* bytes of struct the kernel sent */
	bool exit;		/* an exit record (else an answer) */
	bool process;		/* a process (tgid) total, else one task */
	pid_t pid;		/* the task, or the process for a total */
	pid_t tgid;		/* its process, 0 if not told */
	pid_t ppid;		/* parent process, 0 if not told */
	uint32_t uid, gid;
	uint32_t exitcode;	/* wait status of an exit record */
	char comm[33];
	uint64_t nvcsw;		/* voluntary context switches */
	uint64_t nivcsw;	/* involuntary context switches */
	uint64_t utime_us, stime_us;
	uint64_t elapsed_us;	/* since the task started */
	uint64_t start_s;	/* start, seconds since the epoch */
	uint64_t cpu_count;	/* delay accounting: times it waited to run, */
	uint64_t cpu_delay_ns;	/* runnable wait in total */
	uint64_t cpu_run_ns;	/* on CPU (wall clock) */
};

struct ctxmon_taskstats_conn;

/*
 * Open a generic netlink socket and look up the TASKSTATS family.  NULL
 * and errno on failure (ENOENT: no taskstats in this kernel).  Close it
 * with ctxmon_taskstats_close().
 */
struct ctxmon_taskstats_conn *ctxmon_taskstats_open(void);

/*
 * The counters of task @pid (a thread), or with @process of the whole
 * process @pid (its live threads summed; the kernel keeps no switch counts
 * for its dead threads), into @out.  -ESRCH: no such task; -EPERM: not
 * allowed (CAP_NET_ADMIN).
 */
int ctxmon_taskstats_get(struct ctxmon_taskstats_conn *c, pid_t pid,
			 bool process, struct ctxmon_taskstats *out);

/*
 * Ask for the exit records of the tasks that exit on the CPUs of
 * @cpulist ("0-3,8", the kernel's format).  Stays registered until
 * close.  -EINVAL: a CPU the kernel does not know.
 */
int ctxmon_taskstats_watch(struct ctxmon_taskstats_conn *c,
			   const char *cpulist);

/* The socket, to poll for exit records. */
int ctxmon_taskstats_fd(const struct ctxmon_taskstats_conn *c);

/* Called once per exit record; a non-zero return stops the reading and
 * is passed back. */
typedef int (*ctxmon_taskstats_fn)(const struct ctxmon_taskstats *ts,
				   void *ctx);

/*
 * Wait up to @timeout_ms (-1: forever, 0: not at all) for exit records,
 * then hand each one that has arrived to @fn.  Returns the count
 * handed, a callback's return, or -errno (-EINTR: a signal).  Records
 * the socket had no room for are counted in ctxmon_taskstats_dropped().
 */
int ctxmon_taskstats_read(struct ctxmon_taskstats_conn *c, int timeout_ms,
			  ctxmon_taskstats_fn fn, void *ctx);

/* Times the socket overflowed (ENOBUFS): exit records were lost. */
uint64_t ctxmon_taskstats_dropped(const struct ctxmon_taskstats_conn *c);

/*
 * Decode one TASKSTATS_TYPE_STATS payload of @len bytes (exported for
 * tests and for programs that read the socket themselves).  0, or
 * -EINVAL when too short for even the version.
 */
int ctxmon_taskstats_decode(const void *payload, size_t len,
			    struct ctxmon_taskstats *out);

/* Deregister (if watching), close the socket, free.  Accepts NULL. */
void ctxmon_taskstats_close(struct ctxmon_taskstats_conn *c);

#ifdef __cplusplus
}
#endif
#endif
