/*
 * ftrace_inst.c - the private tracefs instance both ftrace backends capture
 * into (capture/ftrace.h), and the small tracefs file helpers.
 *
 * The instance.  Each session makes instances/ctxmon-<pid>, so the
 * top-level buffer and anyone else's settings are never touched: every
 * write goes to a file of that directory (tracing_on, trace_clock,
 * buffer_size_kb, buffer_percent, options/disable_on_free,
 * options/event-fork, set_event_pid, events/.../enable).  The clock is
 * "mono", the kernel's fast CLOCK_MONOTONIC, the session clock, so times
 * need no conversion.  The instance is removed when the backend closes
 * (also when opening fails half-way); one left by a ctxmon that was killed
 * is removed by the next ctxmon that starts, and meanwhile costs little:
 * the session holds free_buffer open, so the kernel stops the instance's
 * tracing and shrinks its buffer the moment the process dies
 * (disable_on_free).  When the kernel refuses a write (EPERM or EACCES;
 * this VM refuses the function-tracer files, which are not used), what is
 * optional is skipped and what is not fails the open with one line naming
 * the file.
 *
 * What is recorded.  With -a, every task.  With a command, -p or -t, only
 * events that involve the targets and what they fork (set_event_pid with
 * event-fork, as the bpf backend filters in the kernel): every switch in
 * or out of a target and every wakeup of one is kept, so the targets'
 * counts and times are complete, and a loaded machine does not flood the
 * buffers.  What the kernel's filter cannot keep is a migration of a
 * target done by another task (the migration thread after an affinity
 * change, a load balancer); per-CPU numbers cover the targets' switches
 * only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/ftrace.h"

#define INSTANCE_PREFIX "ctxmon-"
/* How many names ctxmon-<pid>-<n> one process may use at once. */
#define MAX_INSTANCES 64

/* ---- small file helpers ------------------------------------------- */

static int join(char *buf, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(buf, len, "%s/%s", dir, rel);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Write @val to @dir/@rel; 0 or -errno. */
static int put(const char *dir, const char *rel, const char *val)
{
	char path[PATH_MAX];
	size_t n = strlen(val);
	ssize_t w;
	int fd, ret;

	ret = join(path, sizeof(path), dir, rel);
	if (ret)
		return ret;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		w = write(fd, val, n);
	while (w < 0 && errno == EINTR);
	ret = w < 0 ? -errno : (size_t)w != n ? -EIO : 0;
	close(fd);
	return ret;
}

/* Read @dir/@rel into @buf (NUL-terminated); length or -errno. */
ssize_t ftrace__get(const char *dir, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, ret;

	ret = join(path, sizeof(path), dir, rel);
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* ---- the instance -------------------------------------------------- */

struct ftrace_inst {
	char path[PATH_MAX];
	int free_fd; /* free_buffer, held open, see the top */
	unsigned buffer_kb;
	bool filtered;
};

pid_t ftrace_inst__name_pid(const char *name)
{
	const char *s;
	char *end;
	long pid;

	if (strncmp(name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
		return -1;
	s = name + strlen(INSTANCE_PREFIX);
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	pid = strtol(s, &end, 10);
	if (errno || pid <= 0 || pid > INT_MAX)
		return -1;
	if (*end == '-') {
		s = end + 1;
		if (*s < '0' || *s > '9')
			return -1;
		strtoul(s, &end, 10);
	}
	return *end ? -1 : (pid_t)pid;
}

int ftrace_inst__clean_stale(const char *tracefs)
{
	char dir[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (join(dir, sizeof(dir), tracefs, "instances"))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		pid_t pid = ftrace_inst__name_pid(e->d_name);

		/* A live pid keeps its instance, even when the pid was
		 * reused by another program: removing is only for what is
		 * surely dead.  The kernel refuses to remove an instance
		 * whose files are open, which guards a live ctxmon in
		 * another pid namespace. */
		if (pid <= 0 || pid == getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
			n++;
	}
	closedir(d);
	return n;
}

const char *ftrace_inst__path(const struct ftrace_inst *in)
{
	return in->path;
}

bool ftrace_inst__filtered(const struct ftrace_inst *in)
{
	return in->filtered;
}

unsigned ftrace_inst__buffer_kb(const struct ftrace_inst *in)
{
	return in->buffer_kb;
}

int ftrace_inst__open(const struct ftrace_inst *in, const char *rel, int flags)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = join(path, sizeof(path), in->path, rel);
	if (ret)
		return ret;
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int ftrace_inst__tracing(struct ftrace_inst *in, bool on)
{
	return put(in->path, "tracing_on", on ? "1" : "0");
}

static const char *perm_hint(int err)
{
	return err == EPERM || err == EACCES ?
		       " (refused by the kernel: needs root, and a tracefs "
		       "that allows it)" :
		       "";
}

/* mkdir instances/ctxmon-<pid>[-<n>]; 0 or -errno with @err set. */
static int make_dir(struct ftrace_inst *in, const char *tracefs, char *err,
		    size_t errlen)
{
	char name[64];
	int ret = 0;

	for (unsigned i = 0; i < MAX_INSTANCES; i++) {
		if (i)
			snprintf(name, sizeof(name),
				 "instances/" INSTANCE_PREFIX "%d-%u",
				 (int)getpid(), i);
		else
			snprintf(name, sizeof(name),
				 "instances/" INSTANCE_PREFIX "%d",
				 (int)getpid());
		ret = join(in->path, sizeof(in->path), tracefs, name);
		if (ret)
			break;
		if (mkdir(in->path, 0700) == 0)
			return 0;
		ret = -errno;
		if (errno != EEXIST)
			break;
	}
	if (ret == -ENOENT)
		fmt__buf(err, errlen,
			 "ftrace: %s/instances does not exist: this kernel "
			 "has no tracefs instances",
			 tracefs);
	else
		fmt__buf(err, errlen,
			 "ftrace: cannot create a tracefs instance in "
			 "%s/instances: %s%s",
			 tracefs, strerror(-ret), perm_hint(-ret));
	in->path[0] = '\0';
	return ret;
}

static int set_buffer(struct ftrace_inst *in, const struct ftrace_inst_opts *o,
		      char *err, size_t errlen)
{
	unsigned kb = o->buffer_kb ? o->buffer_kb : FTRACE_DEFAULT_BUFFER_KB;
	char val[32], buf[64];
	int ret;

	snprintf(val, sizeof(val), "%u", kb);
	ret = put(in->path, "buffer_size_kb", val);
	if (ret && o->buffer_kb_given) {
		fmt__buf(err, errlen,
			 "ftrace: cannot set the instance's buffer to %u KiB "
			 "per CPU: %s%s",
			 kb, strerror(-ret), perm_hint(-ret));
		return ret;
	}
	/* Without an explicit size the instance's default will do. */
	if (ftrace__get(in->path, "buffer_size_kb", buf, sizeof(buf)) > 0)
		in->buffer_kb = (unsigned)strtoul(buf, NULL, 10);
	if (!in->buffer_kb)
		in->buffer_kb = kb;
	return 0;
}

/*
 * Add @n pids to the pid list open on @fd, as few writes as fit in a
 * page: each write to set_event_pid waits for the tracepoints to sync
 * (~30 ms on a 2-vCPU VM), so one per pid made `stat -p` of a process of
 * 900 threads spend 30 s starting, past the end of what it watched.  Each
 * write ends at a separator, so no number is cut.  0 or -errno.
 */
static int write_pids(int fd, const int32_t *pids, size_t n)
{
	char buf[4096];
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%d ",
					 (int)pids[i]);
		if (i + 1 == n || used > sizeof(buf) - 16) {
			if (write(fd, buf, used) != (ssize_t)used)
				return -errno;
			used = 0;
		}
	}
	return 0;
}

/*
 * Follow only @pids and what they fork.  The kernel keeps a sched_switch
 * when prev or next is listed, a wakeup when the woken task is, any other
 * event when the current task is; event-fork adds a listed task's
 * children at fork, before their first wakeup, and drops a task at
 * sched_process_free, after its last switch-out.  (Kernels that dropped
 * it at sched_process_exit lose that switch-out when the next task is not
 * followed; the e2e tests count one exit switch-out per thread.)  A
 * refusal leaves the instance recording everything, which is correct,
 * only heavier.
 */
static void set_filter(struct ftrace_inst *in, const struct ftrace_inst_opts *o)
{
	int fd, ret;

	if (!o->npids || put(in->path, "options/event-fork", "1"))
		return;
	/* O_TRUNC clears the list; each write then adds to it */
	fd = ftrace_inst__open(in, "set_event_pid", O_WRONLY | O_TRUNC);
	if (fd < 0)
		return;
	ret = write_pids(fd, o->pids, o->npids);
	close(fd);
	if (!ret) {
		in->filtered = true;
	} else {
		fd = ftrace_inst__open(in, "set_event_pid", O_WRONLY | O_TRUNC);
		if (fd >= 0)
			close(fd);
	}
}

int ftrace_inst__follow(struct ftrace_inst *in, const int32_t *tids, size_t n)
{
	int fd, ret;

	if (!in->filtered || !n)
		return 0;
	/* without O_TRUNC a write adds to the list */
	fd = ftrace_inst__open(in, "set_event_pid", O_WRONLY);
	if (fd < 0)
		return fd;
	ret = write_pids(fd, tids, n);
	close(fd);
	return ret;
}

static int enable_events(struct ftrace_inst *in,
			 const struct ftrace_inst_opts *o, char *err,
			 size_t errlen)
{
	char rel[256];
	int ret;

	for (size_t i = 0; i < o->nevents; i++) {
		snprintf(rel, sizeof(rel), "events/%s/enable", o->events[i]);
		ret = put(in->path, rel, "1");
		if (!ret || !o->required[i])
			continue;
		fmt__buf(err, errlen, "ftrace: cannot enable %s in %s: %s%s",
			 o->events[i], in->path, strerror(-ret),
			 perm_hint(-ret));
		return ret;
	}
	return 0;
}

struct ftrace_inst *ftrace_inst__new(const char *tracefs,
				     const struct ftrace_inst_opts *o,
				     char *err, size_t errlen)
{
	struct ftrace_inst *in;
	char val[32];
	int ret;

	in = calloc(1, sizeof(*in));
	if (!in) {
		fmt__buf(err, errlen, "out of memory");
		return NULL;
	}
	in->free_fd = -1;
	ret = make_dir(in, tracefs, err, errlen);
	if (ret)
		goto out;
	/* A new instance traces (no event yet): off before any event is
	 * enabled, so nothing lands before the session enables it. */
	ret = ftrace_inst__tracing(in, false);
	if (ret) {
		fmt__buf(err, errlen,
			 "ftrace: cannot write %s/tracing_on: %s%s", in->path,
			 strerror(-ret), perm_hint(-ret));
		goto out;
	}
	ret = put(in->path, "trace_clock", "mono");
	if (ret) {
		fmt__buf(err, errlen,
			 "ftrace: cannot set trace_clock 'mono' in %s: %s%s; "
			 "the session clock is CLOCK_MONOTONIC",
			 in->path, strerror(-ret), perm_hint(-ret));
		goto out;
	}
	ret = set_buffer(in, o, err, errlen);
	if (ret)
		goto out;
	if (o->buffer_percent) {
		/* optional: the default (50) only wakes the poller later */
		snprintf(val, sizeof(val), "%u", o->buffer_percent);
		put(in->path, "buffer_percent", val);
	}
	/* Optional too: if the kernel refuses, a killed ctxmon's instance
	 * keeps tracing until the next start removes it. */
	if (put(in->path, "options/disable_on_free", "1") == 0) {
		in->free_fd = ftrace_inst__open(in, "free_buffer", O_WRONLY);
		if (in->free_fd < 0)
			in->free_fd = -1;
	}
	set_filter(in, o);
	ret = enable_events(in, o, err, errlen);
out:
	if (ret) {
		ftrace_inst__free(in);
		errno = -ret;
		return NULL;
	}
	return in;
}

void ftrace_inst__free(struct ftrace_inst *in)
{
	if (!in)
		return;
	if (in->path[0])
		ftrace_inst__tracing(in, false);
	if (in->free_fd >= 0)
		close(in->free_fd);
	/* Removing the directory disables its events and frees its
	 * buffer; it fails only while someone holds one of its files. */
	if (in->path[0])
		rmdir(in->path);
	free(in);
}
