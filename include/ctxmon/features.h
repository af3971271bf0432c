/*
 * ctxmon/features.h - what the running kernel offers ctxmon, found at run
 * time (never from its version number): BTF, the BPF program and map
 * types the bpf backends use, ftrace hist triggers, perf_event_paranoid,
 * tracefs and cgroup v2 mounts, and how sched_switch shows a task that
 * tried to sleep with a signal pending.
 *
 * Conventions as in ctxmon.h: 0 or -errno, nothing is printed.
 */
#ifndef CTXMON_FEATURES_H
#define CTXMON_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the sched_switch tracepoint shows a switch the kernel counts
 * voluntary although the task stays runnable (it tried to sleep with a
 * signal pending). */
enum ctxmon_sigsleep {
	CTXMON_SIGSLEEP_UNKNOWN = 0,	/* could not be probed (why: .sigsleep_why) */
	CTXMON_SIGSLEEP_SHOWN_SLEEP,	/* as the sleep state (S): a tracer
					 * that judges by the state is exact */
	CTXMON_SIGSLEEP_SHOWN_RUNNING,	/* as R, like a yield: by the state,
					 * it looks involuntary */
};

/* Feature values: 1 yes, 0 no, -1 not known (probing failed). */
struct ctxmon_features {
	char release[65];		/* uname -r */
	char btf_path[256];		/* the kernel BTF ctxmon uses */
	int btf;			/* that file is there and parses */
	int tp_btf;			/* BTF-typed tracepoint programs */
	int ringbuf;			/* BPF ring buffer map */
	int task_storage;		/* BPF task-local storage map */
	int hist_triggers;		/* ftrace hist triggers
					 * (events/sched/sched_switch/hist) */
	int perf_event_paranoid;	/* the sysctl, or -100: unreadable */
	char tracefs[256];		/* tracefs mount point, "" none */
	char cgroup2[256];		/* cgroup v2 mount point, "" none */
	enum ctxmon_sigsleep sigsleep;	/* only with CTXMON_PROBE_SIGSLEEP */
	char sigsleep_why[160];		/* how it was found, or why not */
	int preempt_rt;			/* a PREEMPT_RT kernel: its spinlocks
					 * sleep, so an exiting thread may
					 * block after exit folded its
					 * counters into its process */
};

/* ctxmon_features_probe() flags */
#define CTXMON_PROBE_SIGSLEEP (1u << 0) /* run the signal-sleep probe (forks
					 * two short-lived processes, about
					 * 10 ms; needs BPF with BTF) */

/*
 * Fill @f.  The kernel BTF is CTXMON_BTF from the environment when set
 * (a way to try what a kernel without BTF does), else
 * /sys/kernel/btf/vmlinux.  Returns 0; -EINVAL if @f is NULL.
 */
int ctxmon_features_probe(struct ctxmon_features *f, unsigned flags);

/*
 * The signal-sleep probe alone, run once per process and remembered.
 * @why (may be NULL) gets how it was found or why it could not be.
 */
enum ctxmon_sigsleep ctxmon_features_sigsleep(char *why, size_t len);

/*
 * Whether the running kernel is PREEMPT_RT: 1 yes, 0 no, -1 not known.
 * Read from /sys/kernel/realtime (present on such kernels only), else from
 * the "PREEMPT_RT" in uname's version string.
 */
int ctxmon_features_preempt_rt(void);

/* The kernel BTF path ctxmon uses (see above); a static string. */
const char *ctxmon_features_btf_path(void);

#ifdef __cplusplus
}
#endif

#endif
