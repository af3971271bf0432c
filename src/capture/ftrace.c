/*
 * ftrace.c - capture backend on a private tracefs instance, reading the
 * per-CPU ring buffers in their binary form (trace_pipe_raw); and the
 * instance, loss and tgid machinery the text backend (ftrace_text.c)
 * shares.
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
 *
 * Pages.  A read() of trace_pipe_raw gives one ring-buffer sub-buffer: a
 * header (time stamp, commit word with the missed-events flags) and
 * events with compressed headers, laid out as events/header_page and
 * events/header_event say.  libtraceevent's kbuffer (linked) could walk
 * it; the walker here is ours because it is small, it works on the pages
 * in place as read (full or partial) and hands the stream exactly what it
 * needs (the flag, the stored count, the page's time), its bounds checks
 * are tested on hand-built pages under ASan, and the header layout comes
 * from this kernel's header_page rather than from a library version.
 * libtracefs is not used: its tracefs lookup mounts tracefs by itself,
 * which ctxmon must not do, and an instance is a mkdir and a few writes.
 * Each record's payload is the tracepoint entry, the bytes perf gives, so
 * the shared decoder turns it into an event.
 *
 * Order.  With non-blocking reads the kernel hands out partial pages too
 * (the reader copies the committed part of the page being written), so a
 * CPU read until EAGAIN holds nothing older than the time taken before
 * the read, except a record reserved just before and committed just after
 * (the stream's slack covers it).  A CPU read only part-way (a round reads
 * at most a buffer's worth, so one busy CPU cannot starve the others) is
 * complete only up to its last record, and the session is then woken
 * again at once.  safe_ts is the minimum over the CPUs, less the slack.
 *
 * Loss.  The instance keeps the ring buffer's overwrite mode: when a CPU's
 * buffer is full its oldest page is overwritten, and the next page read
 * carries the missed-events flag, with the count when it fits in the page.
 * That places each loss exactly (between the CPU's last event and the
 * page's first); per_cpu/cpuN/stats gives the counts the flag could not
 * carry, and the drops of nested writers.
 *
 * Tgids.  A trace record has only the tid.  The tgid of each task is
 * learnt from task_newtask (its clone flags say thread or process), read
 * from the pages of a round before the round's events are decoded, and
 * else looked up once in /proc.
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
#define CLONE_THREAD_FLAG 0x00010000ull /* <linux/sched.h> CLONE_THREAD */

/* The commit word of a sub-buffer (kernel ring_buffer.c). */
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define RB_COMMIT_MASK ((1ull << 30) - 1)
/* Compressed event header: type_len in the low 5 bits, delta above. */
#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31
#define RB_TS_SHIFT 27
/* Absolute stamps carry the low 59 bits; the rest come from the page. */
#define RB_TS_LOW ((1ull << 59) - 1)

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
static ssize_t get(const char *dir, const char *rel, char *buf, size_t len)
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
	if (get(in->path, "buffer_size_kb", buf, sizeof(buf)) > 0)
		in->buffer_kb = (unsigned)strtoul(buf, NULL, 10);
	if (!in->buffer_kb)
		in->buffer_kb = kb;
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
	char val[16];
	int fd, ok = 1;

	if (!o->npids || put(in->path, "options/event-fork", "1"))
		return;
	/* O_TRUNC clears the list; each write then adds to it */
	fd = ftrace_inst__open(in, "set_event_pid", O_WRONLY | O_TRUNC);
	if (fd < 0)
		return;
	for (size_t i = 0; i < o->npids && ok; i++) {
		int n = snprintf(val, sizeof(val), "%d", (int)o->pids[i]);

		ok = write(fd, val, (size_t)n) == n;
	}
	close(fd);
	if (ok) {
		in->filtered = true;
	} else {
		fd = ftrace_inst__open(in, "set_event_pid", O_WRONLY | O_TRUNC);
		if (fd >= 0)
			close(fd);
	}
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

/* ---- per-CPU counters and loss -------------------------------------- */

static bool field_u64(const char *text, size_t len, const char *key,
		      uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if ((size_t)(le - p) > klen && !memcmp(p, key, klen)) {
			char num[32];
			size_t n = (size_t)(le - p) - klen;
			char *e;

			if (n >= sizeof(num))
				n = sizeof(num) - 1;
			memcpy(num, p + klen, n);
			num[n] = '\0';
			*v = strtoull(num, &e, 10);
			return e != num;
		}
		p = le + 1;
	}
	return false;
}

int ftrace_stats__parse(const char *text, size_t len, struct ftrace_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!field_u64(text, len, "overrun:", &s->overrun))
		return -EINVAL;
	field_u64(text, len, "commit overrun:", &s->commit_overrun);
	field_u64(text, len, "dropped events:", &s->dropped);
	return 0;
}

void ftrace_loss__open(struct ftrace_loss *l, const struct ftrace_inst *in,
		       int cpu)
{
	char rel[64];

	memset(l, 0, sizeof(*l));
	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	l->fd = ftrace_inst__open(in, rel, O_RDONLY);
	if (l->fd < 0)
		l->fd = -1;
}

void ftrace_loss__close(struct ftrace_loss *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

static int read_stats(int fd, struct ftrace_stats *s)
{
	char buf[1024];
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	do
		n = pread(fd, buf, sizeof(buf) - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return ftrace_stats__parse(buf, (size_t)n, s);
}

void ftrace_loss__baseline(struct ftrace_loss *l)
{
	if (read_stats(l->fd, &l->base) < 0)
		memset(&l->base, 0, sizeof(l->base));
	memset(&l->now, 0, sizeof(l->now));
}

static uint64_t since(uint64_t v, uint64_t base)
{
	return v > base ? v - base : 0;
}

int ftrace_loss__sample(struct ftrace_loss *l)
{
	struct ftrace_stats s;
	int ret = read_stats(l->fd, &s);

	if (ret)
		return ret;
	l->now.overrun = since(s.overrun, l->base.overrun);
	l->now.commit_overrun = since(s.commit_overrun, l->base.commit_overrun);
	l->now.dropped = since(s.dropped, l->base.dropped);
	return 0;
}

void ftrace_loss__add(struct ftrace_loss *l, uint64_t count)
{
	l->pending += count;
	l->has_pending = true;
}

void ftrace_loss__settle(struct ftrace_loss *l, bool final)
{
	uint64_t other = l->now.dropped + l->now.commit_overrun;

	if (other > l->other_told) {
		ftrace_loss__add(l, other - l->other_told);
		l->other_told = other;
	}
	if (final && l->now.overrun > l->overrun_told) {
		ftrace_loss__add(l, l->now.overrun - l->overrun_told);
		l->overrun_told = l->now.overrun;
	}
}

void ftrace_loss__flush(struct ftrace_loss *l, struct stream *st, int cpu,
			uint64_t ts)
{
	if (!l->has_pending)
		return;
	stream__lost(st, cpu, l->pending, ts);
	l->pending = 0;
	l->has_pending = false;
}

/* ---- sub-buffers ------------------------------------------------------ */

int rb_layout__parse(const char *text, struct rb_layout *l)
{
	const char *p = text;

	l->ts_off = 0;
	l->commit_off = 8;
	l->commit_size = 8;
	l->data_off = 16;
	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';'), *name, *o, *s;
		unsigned off, size;

		if (!semi)
			return -EINVAL;
		name = semi;
		while (name > p && name[-1] != ' ' && name[-1] != '\t')
			name--;
		o = strstr(semi, "offset:");
		s = strstr(semi, "size:");
		if (!o || !s || sscanf(o, "offset:%u", &off) != 1 ||
		    sscanf(s, "size:%u", &size) != 1)
			return -EINVAL;
		if (!strncmp(name, "timestamp;", 10)) {
			l->ts_off = off;
		} else if (!strncmp(name, "commit;", 7)) {
			if (size != 4 && size != 8)
				return -EINVAL;
			l->commit_off = off;
			l->commit_size = size;
		} else if (!strncmp(name, "data;", 5)) {
			l->data_off = off;
		}
		p = semi;
	}
	if (l->data_off < l->commit_off + l->commit_size ||
	    l->data_off < l->ts_off + 8)
		return -EINVAL;
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int rb_page__open(struct rb_page *pg, const struct rb_layout *l,
		  const void *bufp, size_t n)
{
	const uint8_t *buf = bufp;
	uint64_t commit;
	size_t len;

	memset(pg, 0, sizeof(*pg));
	if (n < l->data_off || n < (size_t)l->ts_off + 8 ||
	    n < (size_t)l->commit_off + l->commit_size)
		return -EINVAL;
	pg->ts = rd64(buf + l->ts_off);
	commit = l->commit_size == 8 ? rd64(buf + l->commit_off) :
				       rd32(buf + l->commit_off);
	len = (size_t)(commit & RB_COMMIT_MASK);
	if (len > n - l->data_off)
		return -EINVAL;
	pg->data = buf + l->data_off;
	pg->len = (uint32_t)len;
	pg->cur = pg->ts;
	pg->missed = commit & RB_MISSED_EVENTS;
	/* the count is stored right after the events when it fits */
	if (pg->missed && (commit & RB_MISSED_STORED) &&
	    len + l->commit_size <= n - l->data_off) {
		pg->missed_known = true;
		pg->missed_count = l->commit_size == 8 ? rd64(pg->data + len) :
							 rd32(pg->data + len);
	}
	return 0;
}

int rb_page__next(struct rb_page *pg, const uint8_t **data, uint32_t *len,
		  uint64_t *ts)
{
	while (pg->off + 4 <= pg->len) {
		const uint8_t *e = pg->data + pg->off;
		uint32_t h = rd32(e), type = h & 0x1f, delta = h >> 5;
		uint32_t room = pg->len - pg->off, size, a0;
		uint64_t abs;

		if (type == RB_TYPE_PADDING && !delta)
			break; /* the rest of the page is unused */
		if (type == 0 || type >= RB_TYPE_PADDING) {
			if (room < 8)
				goto bad;
			a0 = rd32(e + 4);
		} else {
			a0 = 0;
		}
		switch (type) {
		case RB_TYPE_PADDING:
			/* a discarded event: array[0] is its length */
			if (a0 < 4 || a0 > room - 4)
				goto bad;
			pg->off += 4 + a0;
			continue;
		case RB_TYPE_TIME_EXTEND:
			pg->cur += ((uint64_t)a0 << RB_TS_SHIFT) + delta;
			pg->off += 8;
			continue;
		case RB_TYPE_TIME_STAMP:
			abs = ((uint64_t)a0 << RB_TS_SHIFT) + delta;
			abs |= pg->ts & ~RB_TS_LOW;
			if (abs < pg->ts && (pg->ts & ~RB_TS_LOW))
				abs += RB_TS_LOW + 1;
			pg->cur = abs;
			pg->off += 8;
			continue;
		case 0:
			/* length in array[0] (itself included), data after */
			if (a0 < 4 || a0 > room - 4)
				goto bad;
			size = 4 + a0;
			*data = e + 8;
			*len = a0 - 4;
			break;
		default:
			size = 4 + type * 4;
			if (size > room)
				goto bad;
			*data = e + 4;
			*len = type * 4;
			break;
		}
		pg->cur += delta;
		pg->off += size;
		*ts = pg->cur;
		return 1;
	}
	pg->off = pg->len;
	return 0;
bad:
	pg->off = pg->len;
	return -EINVAL;
}

/* ---- tid -> tgid ------------------------------------------------------ */

struct tgid_map {
	char proc[256];
	int32_t *keys; /* 0: empty slot */
	int32_t *vals;
	size_t cap, n;
	uint64_t lookups;
};

struct tgid_map *tgid_map__new(const char *proc)
{
	struct tgid_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	fmt__buf(m->proc, sizeof(m->proc), "%s", proc ? proc : "/proc");
	m->cap = 1024;
	m->keys = calloc(m->cap, sizeof(*m->keys));
	m->vals = calloc(m->cap, sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		tgid_map__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void tgid_map__free(struct tgid_map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	free(m);
}

static size_t map_slot(const int32_t *keys, size_t cap, int32_t tid)
{
	size_t i = ((uint32_t)tid * 2654435761u) & (cap - 1);

	while (keys[i] && keys[i] != tid)
		i = (i + 1) & (cap - 1);
	return i;
}

static int map_grow(struct tgid_map *m)
{
	size_t cap = m->cap * 2;
	int32_t *keys = calloc(cap, sizeof(*keys));
	int32_t *vals = calloc(cap, sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->keys[i])
			continue;
		j = map_slot(keys, cap, m->keys[i]);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int tgid_map__set(struct tgid_map *m, int32_t tid, int32_t tgid)
{
	size_t i;

	if (tid <= 0)
		return 0;
	if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return -ENOMEM;
	i = map_slot(m->keys, m->cap, tid);
	if (!m->keys[i]) {
		m->keys[i] = tid;
		m->n++;
	}
	m->vals[i] = tgid;
	return 0;
}

/* Tgid of @tid from <proc>/<tid>/status, -1 when the task is gone. */
static int32_t proc_tgid(struct tgid_map *m, int32_t tid)
{
	char path[320], buf[512];
	const char *t;
	int32_t tgid = -1;
	ssize_t n;
	int fd;

	m->lookups++;
	snprintf(path, sizeof(path), "%s/%d/status", m->proc, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Tgid is the fourth line, well inside the first read */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	t = strstr(buf, "\nTgid:");
	if (t && sscanf(t + 6, "%d", &tgid) != 1)
		tgid = -1;
	return tgid > 0 ? tgid : -1;
}

int32_t tgid_map__get(struct tgid_map *m, int32_t tid)
{
	int32_t tgid;
	size_t i;

	if (tid <= 0)
		return tid == 0 ? 0 : -1;
	i = map_slot(m->keys, m->cap, tid);
	if (m->keys[i])
		return m->vals[i];
	tgid = proc_tgid(m, tid);
	/* kept even when unknown: a dead tid is not looked up again (a
	 * reuse of it comes with its own task_newtask) */
	tgid_map__set(m, tid, tgid);
	return tgid;
}

int tgid_map__newtask(struct tgid_map *m, int32_t parent, int32_t child,
		      uint64_t clone_flags)
{
	int32_t tgid = child;

	if (clone_flags & CLONE_THREAD_FLAG)
		tgid = tgid_map__get(m, parent);
	return tgid_map__set(m, child, tgid);
}

uint64_t tgid_map__lookups(const struct tgid_map *m)
{
	return m->lookups;
}

/* ---- set-up shared by both backends ----------------------------------- */

void ftrace_common__close(struct ftrace_common *c)
{
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->epfd = c->wake_fd = -1;
	if (c->loss)
		for (int i = 0; i < c->ncpus; i++)
			ftrace_loss__close(&c->loss[i]);
	free(c->loss);
	c->loss = NULL;
	ftrace_inst__free(c->inst);
	c->inst = NULL;
	decoder__free(c->dec);
	c->dec = NULL;
	tgid_map__free(c->tg);
	c->tg = NULL;
}

/* Add the threads of process @pid to @list (grown); 0 or -ENOMEM. */
static int add_threads(pid_t pid, pid_t **list, size_t *n, size_t *cap)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0; /* gone: nothing to follow */
	while ((e = readdir(d)) && !ret) {
		long tid = strtol(e->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			pid_t *l = realloc(*list, ncap * sizeof(*l));

			if (!l) {
				ret = -ENOMEM;
				break;
			}
			*list = l;
			*cap = ncap;
		}
		(*list)[(*n)++] = (pid_t)tid;
	}
	closedir(d);
	return ret;
}

/*
 * The tasks to follow: for a command, the thread that opens the session
 * (it forks the command later; event-fork adds the child from its fork,
 * so its first switches, before exec, are recorded too); for -p, every
 * thread of the processes; for -t, the threads.  *@list is malloc'd.
 */
static int filter_pids(const struct backend_ctx *ctx, pid_t **list, size_t *n)
{
	size_t cap = 0;
	int ret = 0;

	*list = NULL;
	*n = 0;
	switch (ctx->target) {
	case CTXMON_TARGET_CMD:
		cap = 2;
		*list = malloc(cap * sizeof(**list));
		if (!*list)
			return -ENOMEM;
		(*list)[(*n)++] = getpid();
		if (gettid() != getpid())
			(*list)[(*n)++] = gettid();
		break;
	case CTXMON_TARGET_PIDS:
		for (size_t i = 0; i < ctx->npids && !ret; i++)
			ret = add_threads(ctx->pids[i], list, n, &cap);
		break;
	case CTXMON_TARGET_TIDS:
		if (!ctx->npids)
			break;
		*list = malloc(ctx->npids * sizeof(**list));
		if (!*list)
			return -ENOMEM;
		memcpy(*list, ctx->pids, ctx->npids * sizeof(**list));
		*n = ctx->npids;
		break;
	case CTXMON_TARGET_ALL:
		break;
	}
	return ret;
}

int ftrace_common__open(struct ftrace_common *c, struct backend_ctx *ctx,
			unsigned buffer_percent)
{
	const struct decoder_event *evs;
	struct ftrace_inst_opts o = { 0 };
	char names[32][64];
	const char *ev[32];
	bool req[32];
	pid_t *pids = NULL;
	size_t nev, n = 0, npids = 0;
	int ret = 0;

	memset(c, 0, sizeof(*c));
	c->ncpus = ctx->ncpus;
	c->epfd = c->wake_fd = -1;
	if (!ctx->tracefs || !*ctx->tracefs) {
		fmt__buf(ctx->err, ctx->errlen, "ftrace: tracefs not found");
		return -ENOENT;
	}
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->epfd < 0 || c->wake_fd < 0 ||
	    ftrace_common__poll_add(c, c->wake_fd, UINT32_MAX) < 0) {
		ret = -errno;
		fmt__buf(ctx->err, ctx->errlen, "ftrace: poll set-up: %s",
			 strerror(errno));
		goto out;
	}
	ftrace_inst__clean_stale(ctx->tracefs);
	c->dec = decoder__new(ctx->tracefs,
			      ctx->events ? ctx->events : CTXMON_EVENTS_SCHED,
			      ctx->strs, ctx->err, ctx->errlen);
	if (!c->dec) {
		ret = -errno;
		goto out;
	}
	nev = decoder__events(c->dec, &evs);
	for (size_t i = 0; i < nev && n < ARRAY_SIZE(ev) - 1; i++, n++) {
		snprintf(names[n], sizeof(names[n]), "%s/%s", evs[i].system,
			 evs[i].name);
		ev[n] = names[n];
		req[n] = evs[i].required;
	}
	/* tgids of new tasks; without it they come from /proc */
	ev[n] = "task/task_newtask";
	req[n++] = false;
	ret = filter_pids(ctx, &pids, &npids);
	if (ret) {
		fmt__buf(ctx->err, ctx->errlen, "out of memory");
		goto out;
	}
	o = (struct ftrace_inst_opts){
		.pids = pids,
		.npids = npids,
		.buffer_kb = ctx->buffer_kb,
		.buffer_kb_given = ctx->buffer_kb != 0,
		.buffer_percent = buffer_percent,
		.events = ev,
		.required = req,
		.nevents = n,
	};
	c->tg = tgid_map__new("/proc");
	c->loss = calloc((size_t)ctx->ncpus, sizeof(*c->loss));
	if (!c->tg || !c->loss) {
		ret = -ENOMEM;
		fmt__buf(ctx->err, ctx->errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < ctx->ncpus; i++)
		c->loss[i].fd = -1;
	c->inst = ftrace_inst__new(ctx->tracefs, &o, ctx->err, ctx->errlen);
	if (!c->inst) {
		ret = -errno;
		goto out;
	}
	for (int i = 0; i < ctx->ncpus; i++)
		if (ctx->online[i])
			ftrace_loss__open(&c->loss[i], c->inst, i);
out:
	free(pids);
	if (ret)
		ftrace_common__close(c);
	return ret;
}

int ftrace_common__poll_add(struct ftrace_common *c, int fd, uint32_t key)
{
	struct epoll_event ee = { .events = EPOLLIN, .data.u32 = key };

	return epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ee) < 0 ? -errno : 0;
}

void ftrace_common__behind(struct ftrace_common *c, bool behind)
{
	uint64_t v = 1;
	ssize_t n;

	/* EAGAIN is fine both ways: already signalled, or was not */
	n = behind ? write(c->wake_fd, &v, sizeof(v)) :
		     read(c->wake_fd, &v, sizeof(v));
	(void)n;
}

int ftrace_common__enable(struct ftrace_common *c, struct backend_ctx *ctx)
{
	int ret;

	for (int i = 0; i < c->ncpus; i++)
		ftrace_loss__baseline(&c->loss[i]);
	ret = ftrace_inst__tracing(c->inst, true);
	if (ret)
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot write %s/tracing_on: %s",
			 ftrace_inst__path(c->inst), strerror(-ret));
	return ret;
}

/* ---- the raw backend -------------------------------------------------- */

struct rcpu {
	int cpu;
	int fd; /* per_cpu/cpuN/trace_pipe_raw */
	uint8_t *pages; /* sub-buffers read this round */
	uint32_t *lens;
	size_t npages, cap;
	uint64_t last_ts; /* newest event read */
	bool drained; /* read until the kernel had nothing */
};

struct ftrace_priv {
	struct backend_ctx *ctx;
	struct ftrace_common c;
	struct rb_layout lay;
	struct rcpu *cpus;
	size_t ncpus;
	size_t max_pages; /* per CPU per round */
	bool stopping;
	/* task_newtask, read apart from the decoder */
	int newtask_id;
	struct tp_field f_type, f_pid, f_child, f_flags;
};

static void ft_close(void *priv);

static int load_layout(struct ftrace_priv *p)
{
	struct backend_ctx *ctx = p->ctx;
	char buf[2048];
	size_t kb;
	ssize_t n;

	n = get(ctx->tracefs, "events/header_page", buf, sizeof(buf));
	if (n < 0 || rb_layout__parse(buf, &p->lay) < 0) {
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: cannot read the ring-buffer page layout "
			 "(%s/events/header_page)",
			 ctx->tracefs);
		return n < 0 ? (int)n : -EINVAL;
	}
	/* sub-buffers may be larger than a page since 6.8 */
	n = get(ftrace_inst__path(p->c.inst), "buffer_subbuf_size_kb", buf,
		sizeof(buf));
	p->lay.subbuf = n > 0 ? (uint32_t)strtoul(buf, NULL, 10) * 1024 : 0;
	if (!p->lay.subbuf)
		p->lay.subbuf = (uint32_t)sysconf(_SC_PAGESIZE);
	if (p->lay.subbuf <= p->lay.data_off) {
		fmt__buf(ctx->err, ctx->errlen,
			 "ftrace: unexpected sub-buffer size %u",
			 p->lay.subbuf);
		return -EINVAL;
	}
	/* a round reads at most a buffer's worth (and 16 MiB), so one busy
	 * CPU cannot hold up the others nor a huge buffer fill our memory */
	kb = ftrace_inst__buffer_kb(p->c.inst);
	p->max_pages = kb * 1024 / p->lay.subbuf + 16;
	if (p->max_pages > (16u << 20) / p->lay.subbuf)
		p->max_pages = (16u << 20) / p->lay.subbuf;
	return 0;
}

static void load_newtask(struct ftrace_priv *p)
{
	struct tp_format *f;

	p->newtask_id = -1;
	f = tp_format__load(p->ctx->tracefs, "task", "task_newtask");
	if (!f)
		return;
	if (!tp_format__field(f, "common_type", &p->f_type) &&
	    !tp_format__field(f, "common_pid", &p->f_pid) &&
	    !tp_format__field(f, "pid", &p->f_child) &&
	    !tp_format__field(f, "clone_flags", &p->f_flags) &&
	    p->f_type.size == 2 && p->f_pid.size == 4 && p->f_child.size == 4 &&
	    p->f_flags.size == 8)
		p->newtask_id = tp_format__id(f);
	tp_format__free(f);
}

static int open_cpus(struct ftrace_priv *p)
{
	struct backend_ctx *ctx = p->ctx;
	char rel[64];

	p->cpus = calloc((size_t)ctx->ncpus, sizeof(*p->cpus));
	if (!p->cpus)
		return -ENOMEM;
	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		struct rcpu *c = &p->cpus[p->ncpus];
		int fd, ret;

		if (!ctx->online[cpu])
			continue;
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
		fd = ftrace_inst__open(p->c.inst, rel, O_RDONLY | O_NONBLOCK);
		if (fd < 0) {
			fmt__buf(ctx->err, ctx->errlen,
				 "ftrace: cannot open %s/%s: %s",
				 ftrace_inst__path(p->c.inst), rel,
				 strerror(-fd));
			return fd;
		}
		c->cpu = cpu;
		c->fd = fd;
		p->ncpus++;
		ret = ftrace_common__poll_add(&p->c, fd, (uint32_t)cpu);
		if (ret) {
			fmt__buf(ctx->err, ctx->errlen, "ftrace: epoll_ctl: %s",
				 strerror(-ret));
			return ret;
		}
	}
	if (!p->ncpus) {
		fmt__buf(ctx->err, ctx->errlen, "ftrace: no online CPU");
		return -ENODEV;
	}
	return 0;
}

static int ft_open(struct backend_ctx *ctx, void **privp)
{
	struct ftrace_priv *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->c.epfd = p->c.wake_fd = -1;
	/* wake the poller when a CPU's buffer is a quarter full */
	ret = ftrace_common__open(&p->c, ctx, 25);
	if (ret)
		goto out;
	ret = load_layout(p);
	if (ret)
		goto out;
	load_newtask(p);
	ret = open_cpus(p);
out:
	if (ret) {
		ft_close(p);
		p = NULL;
	}
	*privp = p;
	return ret;
}

static int ft_enable(void *priv)
{
	struct ftrace_priv *p = priv;

	return ftrace_common__enable(&p->c, p->ctx);
}

static int ft_disable(void *priv)
{
	struct ftrace_priv *p = priv;
	int ret = ftrace_inst__tracing(p->c.inst, false);

	/* the next read drains what is left and settles the counts */
	p->stopping = true;
	if (ret)
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "ftrace: cannot write %s/tracing_on: %s",
			 ftrace_inst__path(p->c.inst), strerror(-ret));
	return ret;
}

static int ft_poll_fd(void *priv)
{
	return ((struct ftrace_priv *)priv)->c.epfd;
}

static int grow_pages(struct ftrace_priv *p, struct rcpu *c)
{
	size_t cap = c->cap ? c->cap * 2 : 16;
	uint8_t *pages;
	uint32_t *lens;

	if (cap > p->max_pages)
		cap = p->max_pages;
	pages = realloc(c->pages, cap * p->lay.subbuf);
	if (!pages)
		return -ENOMEM;
	c->pages = pages;
	lens = realloc(c->lens, cap * sizeof(*lens));
	if (!lens)
		return -ENOMEM;
	c->lens = lens;
	c->cap = cap;
	return 0;
}

/* Read the CPU's sub-buffers until the kernel has none (or the bound). */
static int drain(struct ftrace_priv *p, struct rcpu *c)
{
	c->npages = 0;
	c->drained = false;
	while (c->npages < p->max_pages) {
		ssize_t n;
		int ret;

		if (c->npages == c->cap) {
			ret = grow_pages(p, c);
			if (ret)
				return ret;
		}
		n = read(c->fd, c->pages + c->npages * p->lay.subbuf,
			 p->lay.subbuf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->drained = true;
			break;
		}
		if (n < 0)
			return -errno;
		if (n == 0) {
			c->drained = true;
			break;
		}
		c->lens[c->npages++] = (uint32_t)n;
	}
	return 0;
}

static int64_t rd_field(const uint8_t *rec, uint32_t len,
			const struct tp_field *f)
{
	int32_t v32;
	uint64_t v64;
	uint16_t v16;

	if ((size_t)f->offset + (size_t)f->size > len)
		return -1;
	switch (f->size) {
	case 2:
		memcpy(&v16, rec + f->offset, 2);
		return v16;
	case 4:
		memcpy(&v32, rec + f->offset, 4);
		return v32;
	default:
		memcpy(&v64, rec + f->offset, 8);
		return (int64_t)v64;
	}
}

static bool is_newtask(const struct ftrace_priv *p, const uint8_t *rec,
		       uint32_t len)
{
	return p->newtask_id > 0 &&
	       rd_field(rec, len, &p->f_type) == (int64_t)p->newtask_id;
}

/* Every CPU's task_newtask records of the round, before any event of the
 * round is decoded: a child can run on another CPU than its parent, and
 * that CPU may be decoded first. */
static void learn_tasks(struct ftrace_priv *p)
{
	for (size_t i = 0; i < p->ncpus && p->newtask_id > 0; i++) {
		struct rcpu *c = &p->cpus[i];

		for (size_t k = 0; k < c->npages; k++) {
			const uint8_t *rec;
			struct rb_page pg;
			uint32_t len;
			uint64_t ts;

			if (rb_page__open(&pg, &p->lay,
					  c->pages + k * p->lay.subbuf,
					  c->lens[k]) < 0)
				continue;
			while (rb_page__next(&pg, &rec, &len, &ts) > 0) {
				if (!is_newtask(p, rec, len))
					continue;
				tgid_map__newtask(
					p->c.tg,
					(int32_t)rd_field(rec, len, &p->f_pid),
					(int32_t)rd_field(rec, len,
							  &p->f_child),
					(uint64_t)rd_field(rec, len,
							   &p->f_flags));
			}
		}
	}
}

static void on_record(struct ftrace_priv *p, struct rcpu *c, const uint8_t *rec,
		      uint32_t len, uint64_t ts)
{
	struct stream *st = p->ctx->stream;
	struct ftrace_loss *l = &p->c.loss[c->cpu];
	struct ctxmon_event *ev;
	int ret;

	if (is_newtask(p, rec, len))
		return;
	ftrace_loss__flush(l, st, c->cpu, ts);
	ev = stream__slot(st, c->cpu);
	if (!ev) {
		stream__lost(st, c->cpu, 1, ts);
		return;
	}
	ret = decoder__decode(p->c.dec, rec, len, ev);
	if (ret == -ENOENT)
		return; /* not an event ctxmon decodes */
	if (ret < 0) {
		/* a record we cannot read is an event lost, said so */
		stream__lost(st, c->cpu, 1, ts);
		return;
	}
	ev->ts = ts;
	ev->cpu = c->cpu;
	ev->tgid = tgid_map__get(p->c.tg, ev->tid);
	if (ev->type == CTXMON_EV_SWITCH) {
		/* the current task of a switch is prev */
		ev->sw.prev_tgid = ev->tgid;
		ev->sw.next_tgid = tgid_map__get(p->c.tg, ev->sw.next_tid);
	} else if (ev->type == CTXMON_EV_FORK) {
		ev->fork.child_tgid =
			tgid_map__get(p->c.tg, ev->fork.child_tid);
	}
	stream__commit(st, c->cpu);
	c->last_ts = ts;
}

static void decode_cpu(struct ftrace_priv *p, struct rcpu *c)
{
	struct ftrace_loss *l = &p->c.loss[c->cpu];

	for (size_t k = 0; k < c->npages; k++) {
		const uint8_t *rec;
		struct rb_page pg;
		uint32_t len;
		uint64_t ts;
		int r;

		if (rb_page__open(&pg, &p->lay, c->pages + k * p->lay.subbuf,
				  c->lens[k]) < 0) {
			ftrace_loss__add(l, 0); /* a page we cannot read */
			continue;
		}
		if (pg.missed) {
			uint64_t n = pg.missed_count;

			/* Count not stored: the overwrites counted before
			 * this round's read, never more than the kernel had
			 * when it flagged the page; the rest is told at the
			 * end. */
			if (!pg.missed_known)
				n = l->now.overrun > l->overrun_told ?
					    l->now.overrun - l->overrun_told :
					    0;
			l->overrun_told += n;
			ftrace_loss__add(l, n);
		}
		while ((r = rb_page__next(&pg, &rec, &len, &ts)) > 0)
			on_record(p, c, rec, len, ts);
		if (r < 0)
			ftrace_loss__add(l, 0); /* the rest of the page */
	}
}

/*
 * One round: read every CPU (at most a bound each), learn the new tasks,
 * decode.  *@safe: the time up to which every CPU is complete; *@behind:
 * a CPU was left with data.
 */
static int ft_round(struct ftrace_priv *p, uint64_t now, uint64_t *safe,
		    bool *behind)
{
	int ret = 0;

	*safe = UINT64_MAX;
	*behind = false;
	for (size_t i = 0; i < p->ncpus && !ret; i++) {
		struct rcpu *c = &p->cpus[i];

		ftrace_loss__sample(&p->c.loss[c->cpu]);
		ret = drain(p, c);
	}
	if (ret) {
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "ftrace: reading trace_pipe_raw: %s", strerror(-ret));
		return ret;
	}
	learn_tasks(p);
	for (size_t i = 0; i < p->ncpus; i++) {
		struct rcpu *c = &p->cpus[i];
		uint64_t done;

		decode_cpu(p, c);
		ftrace_loss__settle(&p->c.loss[c->cpu], false);
		done = c->drained ? now : c->last_ts;
		if (done < *safe)
			*safe = done;
		*behind |= !c->drained;
	}
	return 0;
}

static int ft_read(void *priv, uint64_t *safe_ts)
{
	struct ftrace_priv *p = priv;
	struct stream *st = p->ctx->stream;
	/* taken before any CPU is read: a CPU read until the kernel had
	 * nothing holds nothing older (less the slack) */
	uint64_t now = clock__now_ns(), safe;
	unsigned rounds = 1;
	bool behind;
	int ret;

	ftrace_common__behind(&p->c, false);
	ret = ft_round(p, now, &safe, &behind);
	/* after disable: everything, however many rounds it takes (tracing
	 * is off, so it ends; the bound is for a tracing_on that could not
	 * be written) */
	while (!ret && p->stopping && behind && rounds++ < 4096)
		ret = ft_round(p, now, &safe, &behind);
	if (ret)
		return ret;
	if (p->stopping) {
		/* the counts the flags could not carry, at the end */
		for (size_t i = 0; i < p->ncpus; i++) {
			struct rcpu *c = &p->cpus[i];
			struct ftrace_loss *l = &p->c.loss[c->cpu];

			ftrace_loss__sample(l);
			ftrace_loss__settle(l, true);
			ftrace_loss__flush(l, st, c->cpu,
					   c->last_ts > now ? c->last_ts : now);
		}
	}
	ftrace_common__behind(&p->c, behind);
	*safe_ts = safe > STREAM_SLACK_NS ? safe - STREAM_SLACK_NS : 0;
	return 0;
}

static void ft_close(void *priv)
{
	struct ftrace_priv *p = priv;

	if (!p)
		return;
	for (size_t i = 0; p->cpus && i < p->ncpus; i++) {
		close(p->cpus[i].fd);
		free(p->cpus[i].pages);
		free(p->cpus[i].lens);
	}
	free(p->cpus);
	/* after every file of the instance is closed: it removes it */
	ftrace_common__close(&p->c);
	free(p);
}

const struct backend_ops backend_ftrace = {
	.name = "ftrace",
	.open = ft_open,
	.enable = ft_enable,
	.disable = ft_disable,
	.poll_fd = ft_poll_fd,
	.read = ft_read,
	.close = ft_close,
	.caps = CTXMON_CAP_EVENTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS,
};
