/*
 * procfs.c - the /proc files of one thread (procfs.h): the parsers and the
 * read of a thread, used by the "proc" backend (proc.c) and by the tool's
 * stat --check of -p/-t targets (cli/pidcheck.c), which links this file
 * in, as it depends on nothing else of the library.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/procfs.h"

/* ---- parsers ------------------------------------------------------- */

int procfs__parse_stat(const char *buf, struct procfs_task *t)
{
	const char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	const char *p;
	size_t n;
	int field;

	if (!open || !close || close < open || close[1] != ' ')
		return -EINVAL;
	t->tid = (pid_t)strtol(buf, NULL, 10);
	n = (size_t)(close - open - 1);
	if (n > CTXMON_COMM_LEN)
		n = CTXMON_COMM_LEN;
	memcpy(t->comm, open + 1, n);
	t->comm[n] = '\0';
	t->state = close[2];
	/* fields after the comm, numbered as in proc(5): state is 3 */
	p = close + 2;
	for (field = 3; *p; field++) {
		char *end;
		unsigned long long v;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		v = strtoull(p, &end, 10);
		if (field == 4)
			t->ppid = (pid_t)v;
		else if (field == 22)
			t->start_ticks = v;
		else if (field == 39) {
			t->cpu = (int)v;
			return 0;
		}
		p = strchr(p, ' ');
		if (!p)
			break;
	}
	return field >= 22 ? 0 : -EINVAL;
}

int procfs__parse_schedstat(const char *buf, struct procfs_task *t)
{
	unsigned long long run, wait, slices;

	if (sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) != 3)
		return -EINVAL;
	t->run_ns = run;
	t->wait_ns = wait;
	t->timeslices = slices;
	return 0;
}

/* The value of "name   :   value" lines of /proc/PID/sched. */
static bool sched_value(const char *buf, const char *name, uint64_t *out)
{
	size_t len = strlen(name);
	const char *p = buf;

	while ((p = strstr(p, name))) {
		const char *q = p + len;

		/* a whole key at a line start, then spaces and ':' */
		if ((p == buf || p[-1] == '\n') && (*q == ' ' || *q == ':')) {
			while (*q == ' ')
				q++;
			if (*q == ':') {
				*out = strtoull(q + 1, NULL, 10);
				return true;
			}
		}
		p = q;
	}
	return false;
}

int procfs__parse_sched(const char *buf, struct procfs_task *t)
{
	uint64_t v;

	if (!sched_value(buf, "nr_voluntary_switches", &t->nvcsw) ||
	    !sched_value(buf, "nr_involuntary_switches", &t->nivcsw))
		return -EINVAL;
	if (sched_value(buf, "se.nr_migrations", &v))
		t->migrations = v;
	t->has_sched = true;
	return 0;
}

int procfs__parse_status(const char *buf, struct procfs_task *t)
{
	const char *p = buf;
	int got = 0;

	while (p && *p) {
		unsigned long long v;
		int tg;

		if (sscanf(p, "Tgid: %d", &tg) == 1)
			t->tgid = tg;
		else if (sscanf(p, "voluntary_ctxt_switches: %llu", &v) == 1) {
			t->nvcsw = v;
			got++;
		} else if (sscanf(p, "nonvoluntary_ctxt_switches: %llu", &v) ==
			   1) {
			t->nivcsw = v;
			got++;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return got == 2 ? 0 : -EINVAL;
}

ssize_t procfs__read_small(const char *path, char *buf, size_t len)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1) {
		n = read(fd, buf + got, len - 1 - (size_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			got = -errno;
			break;
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	if (got >= 0)
		buf[got] = '\0';
	return got;
}

int procfs__read_task(pid_t tgid, pid_t tid, struct procfs_task *t)
{
	char path[96], buf[4096];
	ssize_t n;
	int ret;

	memset(t, 0, sizeof(*t));
	t->tgid = tgid;
	if (tgid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/", tgid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/", tid);
	strcat(path, "stat");
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)(n == -ESRCH ? -ENOENT : n);
	ret = procfs__parse_stat(buf, t);
	if (ret < 0)
		return ret;
	strcpy(strrchr(path, '/') + 1, "schedstat");
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n >= 0)
		procfs__parse_schedstat(buf, t);
	/* sched (CONFIG_SCHED_DEBUG) has the migrations too; status is the
	 * fallback, and tells the tgid of a bare tid */
	strcpy(strrchr(path, '/') + 1, "sched");
	n = tgid > 0 ? procfs__read_small(path, buf, sizeof(buf)) : -ENOENT;
	if (n >= 0 && procfs__parse_sched(buf, t) == 0)
		return 0;
	strcpy(strrchr(path, '/') + 1, "status");
	n = procfs__read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)(n == -ESRCH ? -ENOENT : n);
	return procfs__parse_status(buf, t);
}
