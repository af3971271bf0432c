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
#include <ctxmon/ctxmon.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cgroup2__root(char *buf, size_t len)
{
	return sys__find_mount("cgroup2", buf, len);
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
	struct stat sb;
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
			 "cgroup %s: %s: %s (give a directory of the cgroup v2 "
			 "mount, or a path relative to it)",
			 arg, tmp, strerror(errno));
		return ret ? ret : -ENAMETOOLONG;
	}
	if (stat(abs, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		fmt__buf(err, errlen,
			 "cgroup %s: %s is not a directory (a cgroup is one)",
			 arg, abs);
		return -ENOTDIR;
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
	if (n->n > 1) /* no entries: e may be NULL, which qsort may not get */
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

/* ---- rows by cgroup --------------------------------------------------- */

/* The v2 path of thread @tid now ("0::PATH" of /proc/TID/cgroup). */
static int thread_cgroup(pid_t tid, char *buf, size_t len)
{
	char file[64], line[PATH_MAX];
	int ret = -ENOENT;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)tid);
	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%.*s", (int)(len - 1), line + 3);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static int cmp_switches(const void *a, const void *b)
{
	const struct ctxmon_stats *x = a, *y = b;

	return x->switch_out < y->switch_out ? 1 :
	       x->switch_out > y->switch_out ? -1 : 0;
}

struct ctxmon_stats *ctxmon_cgroup_rollup(const struct ctxmon_stats *threads,
					  size_t nthreads, size_t *n)
{
	char (*paths)[PATH_MAX] = calloc(nthreads ? nthreads : 1,
					 sizeof(*paths));
	struct ctxmon_stats *rows = calloc(nthreads ? nthreads : 1,
					   sizeof(*rows));
	struct ctxmon_stats *out = NULL;
	size_t nr = 0, strbytes = 0;
	char *sp;

	if (!paths || !rows)
		goto out;
	for (size_t i = 0; i < nthreads; i++) {
		const struct ctxmon_stats *t = &threads[i];
		char path[PATH_MAX] = "(exited)";
		size_t j;

		if (!t->folded && !t->exited && t->tid > 0)
			thread_cgroup(t->tid, path, sizeof(path));
		for (j = 0; j < nr; j++)
			if (!strcmp(paths[j], path))
				break;
		if (j == nr) {
			snprintf(paths[nr], sizeof(paths[nr]), "%s", path);
			rows[nr].tid = 0;
			rows[nr].tgid = -1;
			rows[nr].ppid = -1;
			rows[nr].first_ts = t->first_ts;
			rows[nr].target = true;
			nr++;
		}
		ctxmon_stats_add(&rows[j], t);
		rows[j].nthreads += t->folded ? t->folded : 1;
		if (t->first_ts && (!rows[j].first_ts ||
				    t->first_ts < rows[j].first_ts))
			rows[j].first_ts = t->first_ts;
		if (t->last_ts > rows[j].last_ts)
			rows[j].last_ts = t->last_ts;
	}
	for (size_t j = 0; j < nr; j++)
		strbytes += strlen(paths[j]) + 1;
	out = malloc((nr ? nr : 1) * sizeof(*out) + strbytes);
	if (!out)
		goto out;
	memcpy(out, rows, nr * sizeof(*out));
	sp = (char *)(out + (nr ? nr : 1));
	for (size_t j = 0; j < nr; j++) {
		strcpy(sp, paths[j]);
		out[j].comm = sp;
		sp += strlen(sp) + 1;
	}
	qsort(out, nr, sizeof(*out), cmp_switches);
	*n = nr;
out:
	free(paths);
	free(rows);
	return out;
}
