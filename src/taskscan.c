/*
 * taskscan.c - read the tasks that exist before capture from /proc
 * (ctxmon_proc_scan; the "proc" capture backend is capture/proc.c).
 *
 * The tracepoints name a task's process only when it runs; a thread that
 * sleeps through the whole capture, or is only ever switched in, would have
 * no process.  A walk of /proc at start fills that in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static void read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static int scan_process(pid_t pid, ctxmon_task_fn fn, void *ctx, int *count)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		read_comm(pid, (pid_t)tid, comm, sizeof(comm));
		(*count)++;
		ret = fn((pid_t)tid, pid, comm, ctx);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

int ctxmon_proc_scan(pid_t pid, ctxmon_task_fn fn, void *ctx)
{
	struct dirent *de;
	int count = 0, ret = 0;
	DIR *d;

	if (pid > 0) {
		ret = scan_process(pid, fn, ctx, &count);
		if (ret == -ENOENT)
			return -ESRCH;
		return ret ? ret : count;
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);

		if (*end || p <= 0)
			continue;
		ret = scan_process((pid_t)p, fn, ctx, &count);
		if (ret > 0 || (ret < 0 && ret != -ENOENT && ret != -ESRCH))
			break;
		ret = 0;
	}
	closedir(d);
	return ret ? ret : count;
}
