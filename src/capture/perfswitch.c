/*
 * perfswitch.c - the "perf-switch" backend: the unprivileged tier that
 * follows tasks instead of CPUs, with the kernel's PERF_RECORD_SWITCH.
 *
 * A software dummy event with context_switch=1 on a task makes the kernel
 * write a record each time that task is switched in or out; the switch-out
 * record carries PERF_RECORD_MISC_SWITCH_OUT_PREEMPT when the task was
 * still runnable (preempted, or yielded), which is the kernel's own rule
 * for nivcsw.  task=1 and comm=1 add fork, exit and exec records.  With
 * perf_event_paranoid <= 2 a user may open these on their own tasks (with
 * exclude_kernel), so `ctxmon stat -- CMD` gets exact per-thread voluntary
 * and involuntary counts without tracing rights.
 *
 * Children are followed with inherit=1.  The kernel refuses to mmap an
 * inherited per-task event (cpu = -1), so there is one event per CPU on
 * each task, each CPU's events writing into one ring (SET_OUTPUT), and a
 * child's records land in its parent event's ring.
 *
 * What differs from the tracepoint backends (see docs/accounting.md):
 * - only the followed tasks are seen: no wakeups (so no wakeup latency,
 *   and the time after a voluntary switch-out is all sleep), no
 *   migrations, and a CPU is "idle" whenever no followed task runs on it;
 * - a dying thread's events are removed (perf_event_exit_task) before its
 *   last switch-out, so that switch-out is never recorded: it is inferred
 *   from the exit record, which comes a little earlier in do_exit();
 * - a command is attached to after fork, while it waits to exec: the
 *   switches it made before (normally the one blocking read it waits in)
 *   are read from /proc/PID/status and put at the attach time.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"
#include "capture/perf_ring.h"

#include "capture/perfswitch.h"

/* Whether this process runs under a seccomp filter (/proc/self/status
 * "Seccomp: 2"), which can refuse perf_event_open whatever the sysctl. */
static bool under_seccomp_filter(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	bool on = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8)) {
			on = atoi(line + 8) == 2;
			break;
		}
	fclose(f);
	return on;
}

/* ---- comm of each followed tid ------------------------------------- */

static size_t comm_hash(int32_t tid, size_t cap)
{
	return (size_t)(((uint32_t)tid * 2654435761u) & (cap - 1));
}

static struct comm_slot *comm_slot(struct ps_priv *p, int32_t tid)
{
	size_t i = comm_hash(tid, p->ccap);

	while (p->comms[i].tid && p->comms[i].tid != tid)
		i = (i + 1) & (p->ccap - 1);
	return &p->comms[i];
}

static const char *comm_get(struct ps_priv *p, int32_t tid)
{
	struct comm_slot *s = comm_slot(p, tid);

	return s->tid ? s->comm : NULL;
}

/* Remember @comm (interned) for @tid; allocates only to grow. */
static void comm_set(struct ps_priv *p, int32_t tid, const char *comm)
{
	struct comm_slot *s;

	if (tid <= 0 || !comm)
		return;
	if ((p->ccount + 1) * 2 > p->ccap) {
		size_t cap = p->ccap * 2;
		struct comm_slot *old = p->comms, *n = calloc(cap, sizeof(*n));

		if (!n)
			return; /* the comm stays unknown; counts are unaffected */
		p->comms = n;
		p->ccap = cap;
		p->ccount = 0;
		for (size_t i = 0; i < cap / 2; i++) {
			if (!old[i].tid)
				continue;
			*comm_slot(p, old[i].tid) = old[i];
			p->ccount++;
		}
		free(old);
	}
	s = comm_slot(p, tid);
	if (!s->tid)
		p->ccount++;
	s->tid = tid;
	s->comm = comm;
}

static const char *intern(struct ps_priv *p, const char *s)
{
	return strtab__intern(p->ctx->strs, s, CTXMON_COMM_LEN);
}

/* /proc/PID/comm (any tid works there), interned; NULL if gone. */
static const char *proc_comm(struct ps_priv *p, pid_t tid)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return intern(p, buf);
}

/* ---- opening the events -------------------------------------------- */

static int push_fd(struct ps_priv *p, int fd, int cpu)
{
	if (p->nfds == p->capfds) {
		size_t cap = p->capfds ? p->capfds * 2 : 64;
		int *n = realloc(p->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->fds = n;
		n = realloc(p->fdcpu, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->fdcpu = n;
		p->capfds = cap;
	}
	p->fdcpu[p->nfds] = cpu;
	p->fds[p->nfds++] = fd;
	return 0;
}

static bool have_tid(const struct ps_priv *p, pid_t tid)
{
	for (size_t i = 0; i < p->ntids; i++)
		if (p->tids[i] == tid)
			return true;
	return false;
}

static int push_tid(struct ps_priv *p, pid_t tid)
{
	if (p->ntids == p->captids) {
		size_t cap = p->captids ? p->captids * 2 : 16;
		pid_t *n = realloc(p->tids, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->tids = n;
		p->captids = cap;
	}
	p->tids[p->ntids++] = tid;
	return 0;
}

/*
 * Map @fd as @r's ring.  An unprivileged user may lock only
 * perf_event_mlock_kb (per CPU) beyond RLIMIT_MEMLOCK, so a refused size
 * is halved down to MIN_BUFFER_KB before giving up.
 */
static int map_ring(struct ps_priv *p, struct ps_ring *r, int fd)
{
	struct backend_ctx *ctx = p->ctx;
	struct epoll_event ee = { .events = EPOLLIN };
	size_t kb = ctx->buffer_kb ? ctx->buffer_kb : DEFAULT_BUFFER_KB;
	int err;

	err = -perf_ring__map(&r->pr, fd, kb, MIN_BUFFER_KB);
	if (err) {
		fmt__buf(ctx->err, ctx->errlen,
			 "perf-switch: mmap of the ring of CPU %d failed: %s%s",
			 r->pr.cpu, strerror(err),
			 err == EPERM || err == ENOMEM ?
				 " (raise kernel.perf_event_mlock_kb or "
				 "ulimit -l)" :
				 "");
		return -err;
	}
	ee.data.u64 = (uint64_t)r->pr.cpu;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ee) < 0) {
		err = errno;
		fmt__buf(ctx->err, ctx->errlen, "epoll_ctl: %s", strerror(err));
		return -err;
	}
	return 0;
}

static void open_error(struct ps_priv *p, pid_t tid, int cpu, int err)
{
	struct backend_ctx *ctx = p->ctx;

	switch (err) {
	case EACCES:
	case EPERM:
		if (under_seccomp_filter())
			fmt__buf(ctx->err, ctx->errlen,
				 "perf-switch: perf_event_open on task %d "
				 "refused: this process runs under a seccomp "
				 "filter (kernel.perf_event_paranoid is %d)",
				 tid, sys__perf_paranoid());
		else
			fmt__buf(ctx->err, ctx->errlen,
				 "perf-switch: perf_event_open on task %d "
				 "refused (kernel.perf_event_paranoid is %d; 3 "
				 "or more forbids it to users, and only your "
				 "own tasks can be followed)",
				 tid, sys__perf_paranoid());
		break;
	case EMFILE:
	case ENFILE:
		fmt__buf(ctx->err, ctx->errlen,
			 "perf-switch: out of file descriptors (one per thread "
			 "per CPU): raise the open-file limit (ulimit -n)");
		break;
	default:
		fmt__buf(ctx->err, ctx->errlen,
			 "perf-switch: perf_event_open(task %d, cpu %d): %s",
			 tid, cpu, strerror(err));
		break;
	}
}

/* One event per online CPU on @tid.  -ESRCH when the task is gone. */
static int open_task(struct ps_priv *p, pid_t tid)
{
	struct backend_ctx *ctx = p->ctx;
	int ret = 0;

	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		struct ps_ring *r = &p->rings[cpu];
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_DUMMY,
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_CPU,
			.sample_id_all = 1,
			.context_switch = 1,
			.task = 1,
			.comm = 1,
			.inherit = p->inherit,
			/* paranoid 2 allows user-only events; the switch
			 * records are side-band and still come */
			.exclude_kernel = 1,
			.exclude_hv = 1,
			.disabled = !p->enabled,
			.use_clockid = 1,
			.clockid = CLOCK_MONOTONIC,
			.watermark = 1,
			.wakeup_watermark = 16384,
			/* a full ring drops records and says so only in
			 * the next record that fits, which may never come:
			 * the count read from the event tells */
			.read_format = p->read_lost ? PERF_FORMAT_LOST : 0,
		};
		int fd;

		if (!ctx->online[cpu])
			continue;
		fd = sys__perf_event_open(&attr, tid, cpu, -1,
					 PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == EINVAL && p->read_lost) {
			p->read_lost = false; /* before 6.0 */
			attr.read_format = 0;
			fd = sys__perf_event_open(&attr, tid, cpu, -1,
						 PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0 && errno == ENODEV)
			continue; /* the CPU went offline meanwhile */
		if (fd < 0) {
			ret = -errno;
			if (ret != -ESRCH)
				open_error(p, tid, cpu, errno);
			return ret;
		}
		ret = push_fd(p, fd, cpu);
		if (ret < 0) {
			close(fd);
			return ret;
		}
		if (r->pr.fd < 0) {
			ret = map_ring(p, r, fd);
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->pr.fd) < 0) {
			ret = -errno;
			fmt__buf(ctx->err, ctx->errlen,
				 "perf-switch: PERF_EVENT_IOC_SET_OUTPUT "
				 "(cpu %d): %s",
				 cpu, strerror(errno));
		}
		if (ret < 0)
			return ret;
	}
	comm_set(p, tid, proc_comm(p, tid));
	return push_tid(p, tid);
}

/*
 * Every thread of process @pid, until a pass finds none new: a thread
 * started by one not yet followed would otherwise be missed.
 */
static int open_process(struct ps_priv *p, pid_t pid)
{
	char path[64];
	bool grew = true;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	while (grew && !ret) {
		struct dirent *de;
		DIR *d = opendir(path);

		if (!d) {
			fmt__buf(p->ctx->err, p->ctx->errlen,
				 "perf-switch: no process %d", pid);
			return -ESRCH;
		}
		grew = false;
		while ((de = readdir(d))) {
			char *end;
			long tid = strtol(de->d_name, &end, 10);

			if (*end || tid <= 0 || have_tid(p, (pid_t)tid))
				continue;
			ret = open_task(p, (pid_t)tid);
			if (ret == -ESRCH)
				ret = 0; /* it exited meanwhile */
			if (ret)
				break;
			grew = true;
		}
		closedir(d);
	}
	return ret;
}

/* Whether this process may open a switch event on itself. */
static int probe(struct ps_priv *p)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.context_switch = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.disabled = 1,
	};
	int fd = sys__perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		open_error(p, getpid(), -1, err);
		return -err;
	}
	close(fd);
	return 0;
}

static void ps_close(void *priv);

static int ps_open(struct backend_ctx *ctx, void **privp)
{
	struct ps_priv *p;
	int ret = 0;

	*privp = NULL;
	if (ctx->target == CTXMON_TARGET_ALL) {
		fmt__buf(ctx->err, ctx->errlen,
			 "perf-switch follows tasks, not the machine: give a "
			 "command, -p or -t");
		return -EOPNOTSUPP;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->read_lost = true;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	p->rings = calloc((size_t)ctx->ncpus, sizeof(*p->rings));
	p->cur = calloc((size_t)ctx->ncpus, sizeof(*p->cur));
	p->scratch = malloc(MAX_RECORD);
	p->ccap = 256;
	p->comms = calloc(p->ccap, sizeof(*p->comms));
	if (p->epfd < 0 || !p->rings || !p->cur || !p->scratch || !p->comms) {
		ret = p->epfd < 0 ? -errno : -ENOMEM;
		fmt__buf(ctx->err, ctx->errlen, "perf-switch set-up: %s",
			 strerror(-ret));
		goto out;
	}
	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		p->rings[cpu].pr.cpu = cpu;
		p->rings[cpu].pr.fd = -1;
	}
	/* -t names single threads; -p and a command take their children */
	p->inherit = ctx->target != CTXMON_TARGET_TIDS;
	if (ctx->target == CTXMON_TARGET_CMD) {
		/* the command's events come at attach: find out now whether
		 * they can be had, so that "auto" can go on to the next */
		ret = probe(p);
		if (ret)
			goto out;
	}
	for (size_t i = 0; i < ctx->npids && !ret; i++) {
		if (ctx->target == CTXMON_TARGET_TIDS) {
			ret = open_task(p, ctx->pids[i]);
			if (ret == -ESRCH)
				fmt__buf(ctx->err, ctx->errlen,
					 "perf-switch: no thread %d",
					 ctx->pids[i]);
		} else if (ctx->target == CTXMON_TARGET_PIDS) {
			ret = open_process(p, ctx->pids[i]);
		}
	}
out:
	if (ret) {
		ps_close(p);
		return ret;
	}
	*privp = p;
	return 0;
}

static int ioctl_all(struct ps_priv *p, unsigned long req)
{
	int ret = 0;

	for (size_t i = 0; i < p->nfds; i++)
		if (ioctl(p->fds[i], req, 0) < 0 && !ret)
			ret = -errno;
	return ret;
}

static int ps_enable(void *priv)
{
	struct ps_priv *p = priv;
	int ret = ioctl_all(p, PERF_EVENT_IOC_ENABLE);

	if (ret)
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "perf-switch: PERF_EVENT_IOC_ENABLE: %s",
			 strerror(-ret));
	p->enabled = !ret;
	return ret;
}

static int ps_disable(void *priv)
{
	struct ps_priv *p = priv;

	p->enabled = false;
	return ioctl_all(p, PERF_EVENT_IOC_DISABLE);
}

static int ps_poll_fd(void *priv)
{
	return ((struct ps_priv *)priv)->epfd;
}

/* ---- records -> events --------------------------------------------- */

static struct ctxmon_event *slot(struct ps_priv *p, int cpu, uint64_t ts,
				 unsigned type, int32_t tid, int32_t tgid)
{
	struct ctxmon_event *ev = stream__slot(p->ctx->stream, cpu);

	if (!ev) {
		stream__lost(p->ctx->stream, cpu, 1, ts);
		return NULL;
	}
	memset(ev, 0, sizeof(*ev));
	ev->ts = ts;
	ev->cpu = cpu;
	ev->type = (uint16_t)type;
	ev->tid = tid;
	ev->tgid = tgid;
	return ev;
}

/*
 * A switch-out of @tid.  Only the followed task is known: the CPU goes to
 * "nobody we follow" (0).  A voluntary one has no known sleep state.
 */
static void emit_out(struct ps_priv *p, int cpu, uint64_t ts, int32_t tid,
		     int32_t tgid, unsigned kind, uint32_t state)
{
	struct ctxmon_event *ev = slot(p, cpu, ts, CTXMON_EV_SWITCH, tid, tgid);
	struct comm_slot *c = tid > 0 ? comm_slot(p, tid) : NULL;

	if (!ev)
		return;
	if (c && c->tid && kind != CTXMON_SW_EXIT)
		c->outs[kind == CTXMON_SW_VOLUNTARY]++;
	ev->sw.prev_tid = tid;
	ev->sw.prev_tgid = tgid;
	ev->sw.prev_comm = c && c->tid ? c->comm : NULL;
	ev->sw.prev_state = state;
	ev->sw.preempt = kind == CTXMON_SW_INVOLUNTARY;
	ev->sw.kind = (uint8_t)kind;
	ev->sw.next_tid = 0;
	ev->sw.next_tgid = 0;
	stream__commit(p->ctx->stream, cpu);
}

static void emit_in(struct ps_priv *p, int cpu, uint64_t ts, int32_t tid,
		    int32_t tgid)
{
	struct ctxmon_event *ev = slot(p, cpu, ts, CTXMON_EV_SWITCH, tid, tgid);

	if (!ev)
		return;
	ev->tid = 0;
	ev->tgid = 0;
	ev->sw.prev_tid = 0;
	ev->sw.prev_tgid = 0;
	ev->sw.next_tid = tid;
	ev->sw.next_tgid = tgid;
	ev->sw.next_comm = comm_get(p, tid);
	stream__commit(p->ctx->stream, cpu);
}

/*
 * A record of @tid, a leader's tid (@tid == @pid), on @cpu, whose current
 * task is another thread of that process: that thread exec'd, and
 * de_thread() gave it the leader's tid (the leader's exit came first).
 * The slot of @tid counts its switch-outs from now on, so that a zombie
 * read under @tid (perfswitch__settle_leader()) is held against what this
 * task made.  Returns the thread's tid before, or @tid.
 */
static int32_t took_pid(struct ps_priv *p, int cpu, int32_t tid, int32_t pid)
{
	struct ps_ring *r = &p->rings[cpu];
	struct comm_slot *t, *l;
	int32_t old = r->cur_tid;

	if (tid != pid || old <= 0 || old == tid || r->cur_pid != pid)
		return tid;
	t = comm_slot(p, old);
	l = comm_slot(p, tid);
	if (t->tid && l->tid) {
		l->outs[0] = t->outs[0];
		l->outs[1] = t->outs[1];
	}
	r->cur_tid = tid;
	return old;
}

static void on_switch(struct ps_priv *p, int cpu, uint64_t ts,
		      const struct perf_event_header *h, const struct sid *s)
{
	bool preempt;

	if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT)) {
		p->rings[cpu].cur_tid = (int32_t)s->tid;
		p->rings[cpu].cur_pid = (int32_t)s->pid;
		emit_in(p, cpu, ts, (int32_t)s->tid, (int32_t)s->pid);
		return;
	}
	took_pid(p, cpu, (int32_t)s->tid, (int32_t)s->pid);
	p->rings[cpu].cur_tid = 0;
	/* still runnable when it left: the kernel's nivcsw */
	preempt = h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
	p->outs[!preempt]++;
	emit_out(p, cpu, ts, (int32_t)s->tid, (int32_t)s->pid,
		 preempt ? CTXMON_SW_INVOLUNTARY : CTXMON_SW_VOLUNTARY,
		 preempt ? CTXMON_STATE_RUNNING : CTXMON_STATE_OTHER);
}

/* PERF_RECORD_FORK and _EXIT: { pid, ppid, tid, ptid, time } */
static void on_task(struct ps_priv *p, int cpu, uint64_t ts,
		    const struct perf_event_header *h, const uint8_t *body)
{
	uint32_t pid, ppid, tid, ptid;
	struct ctxmon_event *ev;

	memcpy(&pid, body, 4);
	memcpy(&ppid, body + 4, 4);
	memcpy(&tid, body + 8, 4);
	memcpy(&ptid, body + 12, 4);
	if (h->type == PERF_RECORD_FORK) {
		const char *c = comm_get(p, (int32_t)ptid);

		comm_set(p, (int32_t)tid, c);
		ev = slot(p, cpu, ts, CTXMON_EV_FORK, (int32_t)ptid,
			  (int32_t)ppid);
		if (!ev)
			return;
		ev->fork.parent_tid = (int32_t)ptid;
		ev->fork.child_tid = (int32_t)tid;
		ev->fork.child_tgid = (int32_t)pid;
		ev->fork.child_comm = c;
		stream__commit(p->ctx->stream, cpu);
		return;
	}
	/* its last switch-out is never recorded: the CPU is nobody's now */
	if (p->rings[cpu].cur_tid == (int32_t)tid)
		p->rings[cpu].cur_tid = 0;
	ev = slot(p, cpu, ts, CTXMON_EV_EXIT, (int32_t)tid, (int32_t)pid);
	if (!ev)
		return;
	ev->exit.tid = (int32_t)tid;
	ev->exit.prio = -1;
	ev->exit.comm = comm_get(p, (int32_t)tid);
	stream__commit(p->ctx->stream, cpu);
	if (pid == tid)
		perfswitch__settle_leader(p, cpu, ts, (int32_t)pid, (int32_t)ppid);
	/* The events leave the task here, before its last switch-out (see
	 * the top of the file): that one is stated, not recorded. */
	emit_out(p, cpu, ts, (int32_t)tid, (int32_t)pid, CTXMON_SW_EXIT,
		 pid == tid ? CTXMON_STATE_Z : CTXMON_STATE_X);
}

/* PERF_RECORD_COMM: { pid, tid, comm[] } */
static void on_comm(struct ps_priv *p, int cpu, uint64_t ts,
		    const struct perf_event_header *h, const uint8_t *body,
		    size_t len)
{
	char buf[CTXMON_COMM_LEN + 1];
	uint32_t pid, tid;
	struct ctxmon_event *ev;
	const char *c;
	size_t n;

	if (len < 9)
		return;
	memcpy(&pid, body, 4);
	memcpy(&tid, body + 4, 4);
	n = strnlen((const char *)body + 8, len - 8);
	if (n > CTXMON_COMM_LEN)
		n = CTXMON_COMM_LEN;
	memcpy(buf, body + 8, n);
	buf[n] = '\0';
	c = intern(p, buf);
	comm_set(p, (int32_t)tid, c);
	if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
		return; /* a rename: later switches carry the new name */
	ev = slot(p, cpu, ts, CTXMON_EV_EXEC, (int32_t)tid, (int32_t)pid);
	if (!ev)
		return;
	ev->exec.tid = (int32_t)tid;
	ev->exec.old_tid = took_pid(p, cpu, (int32_t)tid, (int32_t)pid);
	ev->exec.comm = c;
	stream__commit(p->ctx->stream, cpu);
}

static void on_record(struct ps_priv *p, struct ps_ring *r, const uint8_t *rec,
		      const struct perf_event_header *h)
{
	const uint8_t *body = rec + sizeof(*h);
	size_t blen;
	struct sid s;
	uint64_t ts;

	if (h->size < sizeof(*h) + SID_LEN)
		goto bad;
	blen = h->size - sizeof(*h) - SID_LEN;
	memcpy(&s, rec + h->size - SID_LEN, sizeof(s));
	ts = perf_ring__time(&r->pr, s.time);
	switch (h->type) {
	case PERF_RECORD_SWITCH:
		on_switch(p, r->pr.cpu, ts, h, &s);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (blen < 24)
			goto bad;
		on_task(p, r->pr.cpu, ts, h, body);
		break;
	case PERF_RECORD_COMM:
		on_comm(p, r->pr.cpu, ts, h, body, blen);
		break;
	case PERF_RECORD_LOST: {
		uint64_t lost;

		if (blen < 16)
			goto bad;
		memcpy(&lost, body + 8, sizeof(lost));
		r->lost_records += lost;
		if (r->lost_records > r->lost) {
			stream__lost(p->ctx->stream, r->pr.cpu,
				     r->lost_records - r->lost, ts);
			r->lost = r->lost_records;
		}
		break;
	}
	default:
		break; /* throttling and the like: nothing for us */
	}
	return;
bad:
	stream__lost(p->ctx->stream, r->pr.cpu, 1, r->pr.last_ts);
}

static void check_lost(struct ps_priv *p);

/*
 * Look at the next record of @r: its header and time.  False at the end,
 * or at a corrupt record (said, and the rest of the ring dropped).
 */
static bool peek(struct ps_priv *p, struct ps_ring *r, struct ps_cursor *c)
{
	int ret = perf_ring__peek(&r->pr, &c->h);

	if (ret < 0)
		stream__lost(p->ctx->stream, r->pr.cpu, 0, r->pr.last_ts);
	if (ret <= 0)
		return false;
	c->ts = r->pr.last_ts;
	if (c->h.size >= sizeof(c->h) + SID_LEN)
		perf_ring__copy(&r->pr, c->h.size - SID_LEN + 8, &c->ts,
				sizeof(c->ts));
	return true;
}

/*
 * Every CPU's ring, merged by time: a task's fork and exec records may
 * sit in different rings, and the comm a fork hands on must be the one
 * the parent had then.
 */
static void read_rings(struct ps_priv *p)
{
	int n = p->ctx->ncpus;

	for (int i = 0; i < n; i++) {
		struct ps_ring *r = &p->rings[i];
		struct ps_cursor *c = &p->cur[i];

		c->more = false;
		if (!r->pr.meta)
			continue;
		perf_ring__begin(&r->pr);
		c->more = peek(p, r, c);
	}
	for (;;) {
		struct ps_ring *r;
		struct ps_cursor *c;
		int best = -1;

		for (int i = 0; i < n; i++)
			if (p->cur[i].more &&
			    (best < 0 || p->cur[i].ts < p->cur[best].ts))
				best = i;
		if (best < 0)
			break;
		r = &p->rings[best];
		c = &p->cur[best];
		on_record(p, r, perf_ring__record(&r->pr, &c->h, p->scratch),
			  &c->h);
		perf_ring__consume(&r->pr, &c->h);
		c->more = peek(p, r, c);
	}
	for (int i = 0; i < n; i++)
		if (p->rings[i].pr.meta)
			perf_ring__end(&p->rings[i].pr);
	check_lost(p);
}

/*
 * Drops the records have not told yet.  Both counts grow at the same
 * drop (rb->lost and the writing event's lost_samples), the record later,
 * so the stream gets the larger one.
 */
static void check_lost(struct ps_priv *p)
{
	struct backend_ctx *ctx = p->ctx;

	if (!p->read_lost)
		return;
	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		struct ps_ring *r = &p->rings[cpu];
		uint64_t sum = 0;

		if (!r->pr.meta)
			continue;
		for (size_t i = 0; i < p->nfds; i++) {
			uint64_t v[2];

			if (p->fdcpu[i] == cpu &&
			    read(p->fds[i], v, sizeof(v)) == sizeof(v))
				sum += v[1];
		}
		if (sum > r->lost) {
			stream__lost(ctx->stream, cpu, sum - r->lost,
				     r->pr.last_ts);
			r->lost = sum;
		}
	}
}

static int ps_read(void *priv, uint64_t *safe_ts)
{
	struct ps_priv *p = priv;
	uint64_t now = clock__now_ns();

	read_rings(p);
	*safe_ts = now > STREAM_SLACK_NS ? now - STREAM_SLACK_NS : 0;
	return 0;
}

static void ps_close(void *priv)
{
	struct ps_priv *p = priv;

	if (!p)
		return;
	for (size_t i = 0; i < p->nfds; i++)
		ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; p->rings && i < p->ctx->ncpus; i++)
		perf_ring__unmap(&p->rings[i].pr);
	for (size_t i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	if (p->epfd >= 0)
		close(p->epfd);
	free(p->comms);
	free(p->scratch);
	free(p->rings);
	free(p->cur);
	free(p->tids);
	free(p->fdcpu);
	free(p->fds);
	free(p);
}

/* ---- for perfswitch_attach.c ------------------------------------------ */

struct comm_slot *perfswitch__comm_slot(struct ps_priv *p, int32_t tid)
{
	return comm_slot(p, tid);
}

int perfswitch__open_task(struct ps_priv *p, pid_t tid)
{
	return open_task(p, tid);
}

void perfswitch__emit_out(struct ps_priv *p, int cpu, uint64_t ts,
			  int32_t tid, int32_t tgid, unsigned kind,
			  uint32_t state)
{
	emit_out(p, cpu, ts, tid, tgid, kind, state);
}

void perfswitch__emit_in(struct ps_priv *p, int cpu, uint64_t ts,
			 int32_t tid, int32_t tgid)
{
	emit_in(p, cpu, ts, tid, tgid);
}

void perfswitch__read_rings(struct ps_priv *p)
{
	read_rings(p);
}

const struct backend_ops backend_perfswitch = {
	.name = "perf-switch",
	.open = ps_open,
	.enable = ps_enable,
	.disable = ps_disable,
	.poll_fd = ps_poll_fd,
	.read = ps_read,
	.close = ps_close,
	.attach = perfswitch__attach,
	.limits =
		"perf-switch tier (PERF_RECORD_SWITCH of the followed tasks): "
		"voluntary/involuntary and run time per thread, lower bounds "
		"(perf stops following a thread part way through its exit, "
		"so its last preemptions are not seen; exact for threads "
		"that do not exit); signal-interrupted sleeps count as "
		"involuntary; no "
		"wakeups (no wakeup latency, sleep includes the wait for a "
		"CPU after a wakeup), no migrations, CPU busy means a "
		"followed task ran",

	.caps = CTXMON_CAP_EVENTS | CTXMON_CAP_CPUS,
};
