/*
 * sys.c - the kernel interfaces the backends share: the perf_event_open()
 * system call (libc has no wrapper), the perf_event_paranoid sysctl that
 * gates it, and reading a whole procfs/tracefs text file whose size stat()
 * does not tell.  One copy of each, for perf, perf-switch and tracefs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "internal.h"

int sys__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			 int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

int sys__perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
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
