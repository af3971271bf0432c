/*
 * ctxmon/cgroup.h - cgroup v2 directories as capture targets.
 *
 * The v2 hierarchy is found through /proc/mounts (on a hybrid layout it is
 * /sys/fs/cgroup/unified).  A cgroup is named by an absolute directory in
 * it, or by a path relative to its root.
 */
#ifndef CTXMON_CGROUP_H_PUBLIC
#define CTXMON_CGROUP_H_PUBLIC

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The processes (tgids) in cgroup @path and every cgroup below it, from
 * their cgroup.procs files.  *@pids is malloc'd (the caller frees it), *@n
 * its length (0 for an empty cgroup).  0, or a negative errno with one
 * line of explanation in @err (@errlen bytes).  Walks the directories with
 * nftw(): not to be called from two threads at once.
 */
int ctxmon_cgroup_pids(const char *path, pid_t **pids, size_t *n, char *err,
		       size_t errlen);

struct ctxmon_stats;

/*
 * Roll thread rows up by cgroup: one row per cgroup v2 the threads are in
 * now (read from /proc/TID/cgroup at this call), summed with
 * ctxmon_stats_add(); threads gone by then (and folded rows of exited
 * threads) go to a row named "(exited)".  A cgroup row has tid 0, tgid -1,
 * nthreads the threads summed, comm the cgroup's path below the v2 root.
 * Returns a malloc'd array (*@n rows, most switches first) whose comm
 * strings live in the same allocation: one free() releases all.  NULL and
 * errno on failure.
 */
struct ctxmon_stats *ctxmon_cgroup_rollup(const struct ctxmon_stats *threads,
					  size_t nthreads, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
