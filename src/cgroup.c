/*
 * cgroup.c - cgroup v2 paths and ids: the v2 mount found through
 * /proc/mounts (a hybrid layout has it at /sys/fs/cgroup/unified, a
 * unified one at /sys/fs/cgroup), a --cgroup argument resolved to an
 * absolute directory and its id (the kernfs node id that BPF programs read
 * as cgroup->kn->id), and ids turned back into paths for labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "internal.h"
#include "cgroup.h"
#include <ctxmon/cgroup.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cgroup2__root(char *buf, size_t len)
{
	char dev[256], mnt[PATH_MAX], type[64];
	int ret = -ENOENT;
	FILE *f = fopen("/proc/mounts", "re");

	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, mnt, type) == 3) {
		if (strcmp(type, "cgroup2"))
			continue;
		if ((size_t)snprintf(buf, len, "%s", mnt) >= len)
			ret = -ENAMETOOLONG;
		else
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int cgroup2__id(const char *dir, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	int mnt_id;

	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mnt_id, 0) < 0)
		return -errno;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

int cgroup2__resolve(const char *arg, char *abs, size_t len, uint64_t *id,
		     char *err, size_t errlen)
{
	char root[PATH_MAX], tmp[PATH_MAX * 2];
	struct statfs sfs;
	int ret;

	if (!arg || !*arg) {
		fmt__buf(err, errlen, "empty cgroup path");
		return -EINVAL;
	}
	/* an absolute path inside a cgroup2 mount is taken as it is;
	 * anything else is relative to the v2 root */
	if (arg[0] == '/' && !statfs(arg, &sfs) &&
	    sfs.f_type == CGROUP2_SUPER_MAGIC) {
		snprintf(tmp, sizeof(tmp), "%s", arg);
	} else {
		ret = cgroup2__root(root, sizeof(root));
		if (ret < 0) {
			fmt__buf(err, errlen,
				 "cgroup %s: no cgroup2 mount in /proc/mounts",
				 arg);
			return ret;
		}
		snprintf(tmp, sizeof(tmp), "%s/%s", root,
			 arg + (arg[0] == '/'));
	}
	if (!realpath(tmp, abs) || strlen(abs) >= len) {
		ret = -errno;
		fmt__buf(err, errlen,
			 "cgroup %s: %s (give a directory of the cgroup v2 "
			 "mount, or a path relative to it)",
			 arg, strerror(errno));
		return ret ? ret : -ENAMETOOLONG;
	}
	if (statfs(abs, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		fmt__buf(err, errlen, "cgroup %s: %s is not in a cgroup v2 mount",
			 arg, abs);
		return -EINVAL;
	}
	ret = id ? cgroup2__id(abs, id) : 0;
	if (ret < 0)
		fmt__buf(err, errlen, "cgroup %s: no file handle: %s", arg,
			 strerror(-ret));
	return ret;
}

/* ---- id -> path ----------------------------------------------------- */

static struct cgroup_names *walk_names; /* nftw has no context argument */
static size_t walk_rootlen;

static int walk_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	struct cgroup_names *n = walk_names;
	const char *rel = path + walk_rootlen;
	uint64_t id = 0;

	(void)st;
	(void)ftw;
	if (flag != FTW_D)
		return 0;
	if (cgroup2__id(path, &id) < 0)
		return 0;
	if (n->n == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 64;
		struct cgroup_name *e = realloc(n->e, cap * sizeof(*e));

		if (!e)
			return -1;
		n->e = e;
		n->cap = cap;
	}
	n->e[n->n].id = id;
	n->e[n->n].path = strdup(*rel ? rel : "/");
	if (!n->e[n->n].path)
		return -1;
	n->n++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	const struct cgroup_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

void cgroup_names__clear(struct cgroup_names *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->e[i].path);
	free(n->e);
	n->e = NULL;
	n->n = n->cap = 0;
}

int cgroup_names__scan(struct cgroup_names *n)
{
	char root[PATH_MAX];
	int ret = cgroup2__root(root, sizeof(root));

	if (ret < 0)
		return ret;
	cgroup_names__clear(n);
	walk_names = n;
	walk_rootlen = strlen(root);
	if (nftw(root, walk_one, 16, FTW_PHYS | FTW_MOUNT) < 0)
		ret = -ENOMEM;
	walk_names = NULL;
	qsort(n->e, n->n, sizeof(*n->e), cmp_name);
	return ret;
}

const char *cgroup_names__find(const struct cgroup_names *n, uint64_t id)
{
	size_t lo = 0, hi = n->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (n->e[mid].id == id)
			return n->e[mid].path;
		if (n->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- processes of a subtree ---------------------------------------------- */

struct pid_walk {
	pid_t *pids;
	size_t n, cap;
	int err;
};

static struct pid_walk *pid_walk; /* nftw has no context argument */

static int pids_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	struct pid_walk *w = pid_walk;
	char file[PATH_MAX + 16];
	FILE *f;
	long v;

	(void)st;
	(void)ftw;
	if (flag != FTW_D)
		return 0;
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "re");
	if (!f)
		return 0; /* removed meanwhile */
	while (fscanf(f, "%ld", &v) == 1) {
		if (w->n == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 64;
			pid_t *p = realloc(w->pids, cap * sizeof(*p));

			if (!p) {
				w->err = -ENOMEM;
				break;
			}
			w->pids = p;
			w->cap = cap;
		}
		w->pids[w->n++] = (pid_t)v;
	}
	fclose(f);
	return w->err ? -1 : 0;
}

int ctxmon_cgroup_pids(const char *path, pid_t **pids, size_t *n, char *err,
		       size_t errlen)
{
	struct pid_walk w = { 0 };
	char abs[PATH_MAX];
	int ret = cgroup2__resolve(path, abs, sizeof(abs), NULL, err, errlen);

	if (ret < 0)
		return ret;
	pid_walk = &w;
	if (nftw(abs, pids_one, 16, FTW_PHYS | FTW_MOUNT) < 0 && !w.err)
		w.err = -errno;
	pid_walk = NULL;
	if (w.err) {
		free(w.pids);
		fmt__buf(err, errlen, "cgroup %s: %s", path, strerror(-w.err));
		return w.err;
	}
	*pids = w.pids;
	*n = w.n;
	return 0;
}
