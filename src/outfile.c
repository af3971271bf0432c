/*
 * outfile.c - output files written all or nothing (ctxmon/outfile.h).
 *
 * The data goes to a work file in the target's directory (so the final
 * rename(2) is atomic, never a copy across file systems) and replaces the
 * target only at the commit, after fsync(2): a reader of the target sees
 * the old file or the whole new one, and a crash or a full disk leaves the
 * old one.  Work files of this process are listed in a fixed table that a
 * fatal signal's handler can walk without locks or allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ctxmon/outfile.h>

struct ctxmon_outfile {
	char *path;	/* the target, as given */
	char *dest;	/* what the work file is renamed to (a link resolved) */
	char *work;	/* the work file; NULL when written in place */
	int fd;
	FILE *f;
	unsigned flags;
	bool std;	/* standard output */
	int slot;	/* in work_files[], or -1 */
};

/* The work files a signal handler removes (CTXMON_OUTFILE_PART's are
 * meant to outlive the process and are not listed). */
#define MAX_WORK_FILES 64
static char *volatile work_files[MAX_WORK_FILES];

static int list_work(char *name)
{
	for (int i = 0; i < MAX_WORK_FILES; i++) {
		char *none = NULL;

		if (__atomic_compare_exchange_n(&work_files[i], &none, name,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return i;
	}
	return -1; /* not listed: only a signal's clean-up misses it */
}

static void unlist_work(struct ctxmon_outfile *o)
{
	if (o->slot >= 0)
		__atomic_store_n(&work_files[o->slot], NULL, __ATOMIC_SEQ_CST);
	o->slot = -1;
}

void ctxmon_outfile_unlink_all(void)
{
	for (int i = 0; i < MAX_WORK_FILES; i++) {
		char *name = __atomic_load_n(&work_files[i], __ATOMIC_SEQ_CST);

		if (name)
			unlink(name);
	}
}

/* A new file beside @dest: "DIR/.NAME.PID.N.tmp", created with O_EXCL so
 * that the umask applies as for any new file (mkstemp would give 0600). */
static int create_work(struct ctxmon_outfile *o, mode_t mode)
{
	static unsigned long seq;
	const char *slash = strrchr(o->dest, '/');
	int dlen = slash ? (int)(slash - o->dest + 1) : 0;
	const char *base = slash ? slash + 1 : o->dest;

	if (o->flags & CTXMON_OUTFILE_PART) {
		if (asprintf(&o->work, "%s.part", o->dest) < 0) {
			o->work = NULL;
			return -ENOMEM;
		}
		o->fd = open(o->work, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			     mode);
		return o->fd < 0 ? -errno : 0;
	}
	for (int tries = 0; tries < 100; tries++) {
		unsigned long n = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

		free(o->work);
		if (asprintf(&o->work, "%.*s.%s.%d.%lu.tmp", dlen, o->dest,
			     base, (int)getpid(), n) < 0) {
			o->work = NULL;
			return -ENOMEM;
		}
		o->fd = open(o->work, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			     mode);
		if (o->fd >= 0) {
			o->slot = list_work(o->work);
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Write @o->path itself: a device, a pipe, or a directory that takes no
 * new name. */
static int open_in_place(struct ctxmon_outfile *o, mode_t mode)
{
	free(o->work);
	o->work = NULL;
	o->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	return o->fd < 0 ? -errno : 0;
}

static void outfile_free(struct ctxmon_outfile *o)
{
	unlist_work(o);
	if (o->dest != o->path)
		free(o->dest);
	free(o->path);
	free(o->work);
	free(o);
}

struct ctxmon_outfile *ctxmon_outfile_open(const char *path, unsigned flags)
{
	struct ctxmon_outfile *o;
	mode_t mode = flags & CTXMON_OUTFILE_PRIVATE ? 0600 : 0666;
	struct stat sb;
	bool exists, regular;
	int ret;

	if (!path || !*path) {
		errno = EINVAL;
		return NULL;
	}
	if (!strcmp(path, "-") && (flags & CTXMON_OUTFILE_SEEKABLE)) {
		errno = ESPIPE;
		return NULL;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path))) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->dest = o->path;
	o->fd = -1;
	o->slot = -1;
	o->flags = flags;
	if (!strcmp(path, "-")) {
		o->std = true;
		o->fd = STDOUT_FILENO;
		o->f = stdout;
		return o;
	}
	/* A link is replaced at its end, so it goes on pointing there. */
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		char *real = realpath(path, NULL);

		if (real)
			o->dest = real;
	}
	exists = stat(o->dest, &sb) == 0;
	regular = !exists || S_ISREG(sb.st_mode);
	if (!regular) {
		ret = open_in_place(o, mode);
		goto done;
	}
	ret = create_work(o, mode);
	if ((ret == -EACCES || ret == -EPERM) && exists &&
	    !(flags & CTXMON_OUTFILE_PART)) {
		/* a file one may write in a directory one may not: the
		 * only way to write it at all */
		ret = open_in_place(o, mode);
		goto done;
	}
	/* The new file takes the old one's place with its mode and, where
	 * we may, its owner. */
	if (!ret && exists && !(flags & CTXMON_OUTFILE_PRIVATE)) {
		if (fchmod(o->fd, sb.st_mode & 07777) < 0 ||
		    (fchown(o->fd, sb.st_uid, sb.st_gid) < 0 && errno != EPERM))
			ret = -errno;
	}
done:
	if (ret < 0) {
		/* only a file we made is removed: never an earlier PATH.part */
		if (o->fd >= 0) {
			close(o->fd);
			if (o->work)
				unlink(o->work);
		}
		outfile_free(o);
		errno = -ret;
		return NULL;
	}
	return o;
}

FILE *ctxmon_outfile_stream(struct ctxmon_outfile *o)
{
	if (!o->f)
		o->f = fdopen(o->fd, "w");
	return o->f;
}

int ctxmon_outfile_fd(const struct ctxmon_outfile *o)
{
	return o->fd;
}

const char *ctxmon_outfile_work_path(const struct ctxmon_outfile *o)
{
	return o->std ? NULL : o->work ? o->work : o->dest;
}

const char *ctxmon_outfile_path(const struct ctxmon_outfile *o)
{
	return o->path;
}

int ctxmon_outfile_is_stdout(const struct ctxmon_outfile *o)
{
	return o->std;
}

/* Close what @o has open; 0 or the first error. */
static int close_all(struct ctxmon_outfile *o, bool sync)
{
	int ret = 0;

	if (o->std)
		return fflush(stdout) == EOF ? -errno : 0;
	if (o->f && (fflush(o->f) == EOF || ferror(o->f)))
		ret = -(errno ? errno : EIO);
	/* a device or a pipe may refuse fsync: only files are synced */
	if (sync && !ret && o->work && fsync(o->fd) < 0)
		ret = -errno;
	if (o->f) {
		if (fclose(o->f) == EOF && !ret)
			ret = -(errno ? errno : EIO);
	} else if (o->fd >= 0 && close(o->fd) < 0 && !ret) {
		ret = -errno;
	}
	o->f = NULL;
	o->fd = -1;
	return ret;
}

int ctxmon_outfile_commit(struct ctxmon_outfile *o)
{
	int ret;

	if (!o)
		return 0;
	ret = close_all(o, true);
	if (!ret && o->work && rename(o->work, o->dest) < 0)
		ret = -errno;
	if (ret < 0 && o->work && !(o->flags & CTXMON_OUTFILE_PART))
		unlink(o->work);
	outfile_free(o);
	return ret;
}

void ctxmon_outfile_discard(struct ctxmon_outfile *o, int keep_part)
{
	if (!o)
		return;
	close_all(o, false);
	if (o->work && !(keep_part && (o->flags & CTXMON_OUTFILE_PART)))
		unlink(o->work);
	outfile_free(o);
}
