/*
 * sys.c - the kernel interfaces the library shares: the perf_event_open()
 * system call (libc has no wrapper), the perf_event_paranoid sysctl that
 * gates it, a number read from procfs or sysfs, a whole procfs/tracefs
 * text file whose size stat() does not tell, and the mounts of
 * /proc/mounts.  One copy of each, for the backends, features, tracefs
 * and cgroups.
 */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "internal.h"

int sys__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

int sys__read_int(const char *path, int dflt)
{
	FILE *f = fopen(path, "re");
	int v = dflt;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

int sys__perf_paranoid(void)
{
	return sys__read_int(SYS_PARANOID_PATH, 2);
}

char *sys__read_text(const char *path, size_t max, size_t *lenp)
{
	size_t len = 0, cap = 8192;
	char *buf, *tmp;
	int fd, err = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf) {
		err = ENOMEM;
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= max) {
				err = EFBIG;
				goto out;
			}
			tmp = realloc(buf, cap * 2);
			if (!tmp) {
				err = ENOMEM;
				goto out;
			}
			buf = tmp;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*lenp = len;
out:
	close(fd);
	if (err) {
		free(buf);
		buf = NULL;
		errno = err;
	}
	return buf;
}

char *sys__unescape(char *s)
{
	char *o = s;

	for (const char *i = s; *i; o++) {
		if (i[0] == '\\' && i[1] >= '0' && i[1] <= '3' && i[2] >= '0' &&
		    i[2] <= '7' && i[3] >= '0' && i[3] <= '7') {
			*o = (char)((i[1] - '0') << 6 | (i[2] - '0') << 3 |
				    (i[3] - '0'));
			i += 4;
		} else {
			*o = *i++;
		}
	}
	*o = '\0';
	return s;
}

int sys__mounts(int (*fn)(const char *type, const char *dir, void *ctx),
		void *ctx)
{
	char line[4096];
	struct mntent ent, *m;
	FILE *f = setmntent("/proc/mounts", "re");
	int ret = 0;

	if (!f)
		return -errno;
	/* getmntent_r undoes the kernel's octal escapes (a space in a
	 * mount point is \040 in the file) */
	while (!ret && (m = getmntent_r(f, &ent, line, sizeof(line))))
		ret = fn(m->mnt_type, m->mnt_dir, ctx);
	endmntent(f);
	return ret;
}

struct mount_want {
	const char *type;
	char *buf;
	size_t len;
};

static int first_of_type(const char *type, const char *dir, void *ctx)
{
	struct mount_want *w = ctx;

	if (strcmp(type, w->type))
		return 0;
	if ((size_t)snprintf(w->buf, w->len, "%s", dir) >= w->len)
		return -ENAMETOOLONG;
	return 1;
}

int sys__find_mount(const char *type, char *buf, size_t len)
{
	struct mount_want w = { type, buf, len };
	int ret = sys__mounts(first_of_type, &w);

	if (ret == 1)
		return 0;
	if (len)
		buf[0] = '\0';
	return ret ? ret : -ENOENT;
}
