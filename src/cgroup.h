/*
 * cgroup.h - cgroup v2 paths and ids (cgroup.c), for the capture filters
 * and the per-cgroup metrics.
 */
#ifndef CTXMON_CGROUP_H
#define CTXMON_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* Mount point of the cgroup v2 hierarchy, from /proc/mounts; 0 or
 * -ENOENT when there is none. */
int cgroup2__root(char *buf, size_t len);

/* Id of cgroup directory @dir (its file handle: the kernfs node id). */
int cgroup2__id(const char *dir, uint64_t *id);

/*
 * Resolve a --cgroup argument: an absolute directory in a cgroup2 mount,
 * or a path relative to the v2 root ("/" alone is the root).  @abs gets
 * the absolute path, *@id (if @id) its id.  0, or -errno with one line in
 * @err.
 */
int cgroup2__resolve(const char *arg, char *abs, size_t len, uint64_t *id,
		     char *err, size_t errlen);

/* Id -> path (relative to the v2 root, "/" for the root) of every cgroup
 * found by the last scan.  Not thread-safe (nftw). */
struct cgroup_name {
	uint64_t id;
	char *path;
};
struct cgroup_names {
	struct cgroup_name *e;
	size_t n, cap;
};
int cgroup_names__scan(struct cgroup_names *n);
const char *cgroup_names__find(const struct cgroup_names *n, uint64_t id);
void cgroup_names__clear(struct cgroup_names *n);

#endif
