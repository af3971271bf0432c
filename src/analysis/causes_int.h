/*
 * causes_int.h - the private state of the cause analysis (causes.c keeps
 * it on the event path, causes_rows.c turns it into rows).  Internal to
 * the library.
 */
#ifndef CTXMON_ANALYSIS_CAUSES_INT_H
#define CTXMON_ANALYSIS_CAUSES_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"
#include "analysis/causes.h"

#define DEFAULT_WINDOW_NS UINT64_MAX
#define SLAB 256 /* task states per allocation */
#define CPU_MAX 65536 /* larger ids are taken as garbage */
#define SYS_NONE (-1L) /* not in a syscall */

/* Where the current off-CPU time of a task is charged. */
enum bucket { B_ONCPU, B_INITIAL, B_INVOL, B_VOL, B_SYS, B_DEAD };

struct wake_rec {
	uint64_t ts; /* the waking's time, else the lone wakeup's */
	int32_t waker; /* ev->tid of the waking, -1 unknown */
	int32_t waker_cpu;
	int32_t cpu; /* run queue it was put on: the wakeup's, or the
		      * CPU the wake moved it to, else where it last ran */
	const char *waker_comm;
	uint8_t ctx; /* enum ctxmon_wake_ctx */
	bool pending; /* not yet on a CPU since */
	bool from_waking; /* waker known from a waking/wakeup_new */
	bool waker_target;
};

struct lat_acc {
	uint64_t count, sum, min, max;
	uint64_t ctx_count[4];
	struct ctxmon_lat_ctx max_ctx;
	uint64_t *fine; /* CTXMON_FINE_BUCKETS, allocated at first use */
};

struct causes_task {
	struct ctxmon_offcpu invol[CTXMON_INVOL__MAX];
	struct ctxmon_offcpu vol[CTXMON_VOL__MAX];
	struct ctxmon_offcpu initial;
	uint64_t exit[CTXMON_EXIT__MAX];
	struct ctxmon_sys_cause *sys;
	uint32_t nsys, syscap;
	uint64_t irq_count, irq_ns, softirq_count, softirq_ns;
	struct lat_acc lat;

	uint64_t run_since; /* last switch-in */
	uint64_t off_ns; /* off CPU since the last switch-out */
	long cur_sys; /* SYS_NONE or the syscall it is in */
	uint64_t sys_epoch; /* causes.epoch when cur_sys was learnt */
	uint32_t bucket_idx; /* cause index or sys[] index */
	uint8_t bucket; /* enum bucket */
	bool group_exit; /* a leader: exit_group() was called in its
				 * process */
	struct wake_rec wk;
};

struct cpu_state {
	uint64_t hard_ts, soft_ts, hard_in_soft;
	bool in_hard, in_soft, seen;
	struct lat_acc lat;
};

struct causes {
	const struct syscall_table *tab;
	long sys_yield, sys_exit, sys_exit_group;
	uint64_t window;
	uint64_t epoch; /* bumped at each loss: syscall states
				 * learnt before it are stale */
	struct causes_task **slabs;
	size_t nslabs, used;
	struct cpu_state *cpus;
	size_t ncpus;
	struct ctxmon_pair *pairs;
	size_t npairs, pcap;
	uint32_t *phash; /* indexes into pairs, EMPTY when free */
	size_t phcap; /* power of two */
	uint64_t anomalies;
};

#define EMPTY UINT32_MAX

#endif
