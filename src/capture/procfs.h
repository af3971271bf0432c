/*
 * procfs.h - parsers of the /proc files the "proc" backend (proc.c) reads, apart so
 * that unit tests can feed them text (procfs.c).
 */
#ifndef CTXMON_CAPTURE_PROC_H
#define CTXMON_CAPTURE_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ctxmon/event.h>

/* What one sample of a thread gives. */
struct procfs_task {
	pid_t tid, tgid, ppid;
	char state;			/* R, S, D, Z... */
	int cpu;			/* last CPU it ran on */
	uint64_t start_ticks;		/* start time, clock ticks since boot */
	char comm[CTXMON_COMM_LEN + 1];
	uint64_t nvcsw, nivcsw;		/* the kernel's counters */
	uint64_t run_ns;		/* on CPU (schedstat) */
	uint64_t wait_ns;		/* runnable, waiting (schedstat) */
	uint64_t timeslices;		/* times it ran (schedstat) */
	uint64_t migrations;		/* se.nr_migrations (sched) */
	bool has_sched;			/* the sched file was read */
};

/*
 * /proc/TID/stat: comm, state, ppid, start time and last CPU into @t.
 * The comm may hold spaces and ')': it ends at the last ')'.  0 or
 * -EINVAL.
 */
int procfs__parse_stat(const char *buf, struct procfs_task *t);

/* /proc/TID/schedstat: "run_ns wait_ns timeslices".  0 or -EINVAL. */
int procfs__parse_schedstat(const char *buf, struct procfs_task *t);

/*
 * /proc/TID/sched: nr_voluntary_switches, nr_involuntary_switches and
 * se.nr_migrations.  0, or -EINVAL when the switch counts are missing.
 */
int procfs__parse_sched(const char *buf, struct procfs_task *t);

/* /proc/TID/status: Tgid and the ctxt_switches lines.  0 or -EINVAL. */
int procfs__parse_status(const char *buf, struct procfs_task *t);

/*
 * Read one thread of process @tgid (tgid <= 0: find it by tid) into @t.
 * 0, or -errno (-ENOENT: it is gone).
 */
int procfs__read_task(pid_t tgid, pid_t tid, struct procfs_task *t);

/* Whole small file into @buf, NUL-terminated; bytes or -errno. */
ssize_t procfs__read_small(const char *path, char *buf, size_t len);

#endif
