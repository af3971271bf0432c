/*
 * perf.c - capture backend on perf_event_open tracepoint events.
 *
 * One event per CPU per tracepoint, all of a CPU's events writing into one
 * mmap ring (PERF_EVENT_IOC_SET_OUTPUT), so each CPU's records come in one
 * stream and the CPU is known from the ring.  Timestamps are taken by the
 * kernel on CLOCK_MONOTONIC (use_clockid), the session clock, so no
 * conversion is needed.  Records are decoded straight into the stream's
 * per-CPU queues; nothing is allocated per record.
 */
#include <errno.h>
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

/*
 * Without --buffer-size, each CPU's ring gets a share of DEFAULT_TOTAL_KB,
 * and never less than DEFAULT_BUFFER_KB.  A machine with few CPUs has few
 * places to run the reader while a busy workload, or a stalled virtual CPU,
 * holds it off; its rings are the ones that fill up (8 MiB each on two CPUs
 * holds about 2 s of a 40,000 switches per second program).  Many CPUs get
 * the per-CPU floor.  If the kernel refuses the default (the mlock limit of
 * an unprivileged user), the ring halves down to the floor.
 */
#define DEFAULT_BUFFER_KB 4096
#define DEFAULT_TOTAL_KB (16 * 1024)
/* a poller is woken when a ring holds a quarter of its size, or this */
#define MAX_WAKEUP_BYTES (1u << 20)
/* header.size is a u16: no record is larger */
#define MAX_RECORD 65536

/* PERF_RECORD_SAMPLE with PERF_SAMPLE_TID | TIME | RAW */
struct sample_head {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t size; /* raw bytes follow */
} __attribute__((packed));

/* PERF_RECORD_LOST with sample_id_all and PERF_SAMPLE_TID | TIME */
struct lost_rec {
	struct perf_event_header h;
	uint64_t id, lost;
	uint32_t pid, tid;
	uint64_t time;
};

struct perf_priv {
	struct backend_ctx *ctx;
	struct decoder *dec;
	int *fds;
	size_t nfds;
	struct perf_ring *rings;
	size_t nrings;
	int epfd;
	uint8_t *scratch; /* a record that wraps the ring's end */
	/* task_newtask, for a fork's CLONE_PARENT: not an event of its own.
	 * It comes just before its sched_process_fork, on the same CPU. */
	struct newtask_fmt nt;
	struct newtask_seen {
		int32_t child;
		bool clone_parent;
	} *nt_last;	/* per ring */
};

static size_t online_cpus(const struct backend_ctx *ctx)
{
	size_t n = 0;

	for (int i = 0; i < ctx->ncpus; i++)
		n += ctx->online[i];
	return n;
}

static void open_error(struct perf_priv *p, const struct decoder_event *de,
		       int cpu, size_t nev, int err)
{
	struct backend_ctx *ctx = p->ctx;

	switch (err) {
	case EACCES:
	case EPERM:
		fmt__buf(ctx->err, ctx->errlen,
			 "perf_event_open refused: run as root or grant "
			 "CAP_PERFMON (kernel.perf_event_paranoid is %d)",
			 sys__perf_paranoid());
		break;
	case ENOENT:
		fmt__buf(ctx->err, ctx->errlen,
			 "perf_event_open: this kernel has no tracepoint %s:%s "
			 "(id %d)",
			 de->system, de->name, de->id);
		break;
	case EMFILE:
	case ENFILE:
		fmt__buf(
			ctx->err, ctx->errlen,
			"perf_event_open: out of file descriptors (%zu needed, "
			"one per CPU per event): raise the open-file limit "
			"(ulimit -n)",
			online_cpus(ctx) * nev);
		break;
	default:
		fmt__buf(ctx->err, ctx->errlen,
			 "perf_event_open(%s:%s, cpu %d): %s", de->system,
			 de->name, cpu, strerror(err));
		break;
	}
}

/* KiB per CPU ring: what the user asked for, or the default share */
static size_t ring_kb(const struct backend_ctx *ctx)
{
	size_t n = online_cpus(ctx);

	if (ctx->buffer_kb)
		return ctx->buffer_kb;
	if (n < 1)
		n = 1;
	return DEFAULT_TOTAL_KB / n > DEFAULT_BUFFER_KB ? DEFAULT_TOTAL_KB / n :
							   DEFAULT_BUFFER_KB;
}

/* The wakeup watermark in bytes: a quarter of the smallest ring map_ring
 * may end up with, at most MAX_WAKEUP_BYTES. */
static uint32_t wakeup_bytes(const struct backend_ctx *ctx, size_t page)
{
	size_t kb = ctx->buffer_kb ? ctx->buffer_kb : DEFAULT_BUFFER_KB;
	size_t bytes = page;

	while (bytes < kb * 1024)
		bytes <<= 1;
	bytes /= 4;
	return (uint32_t)(bytes < MAX_WAKEUP_BYTES ? bytes : MAX_WAKEUP_BYTES);
}

static int map_ring(struct perf_priv *p, struct perf_ring *r, size_t page)
{
	struct backend_ctx *ctx = p->ctx;
	struct epoll_event ee = { .events = EPOLLIN };
	int ret;

	ret = perf_ring__map(r, r->fd, ring_kb(ctx),
			     ctx->buffer_kb ? 0 : DEFAULT_BUFFER_KB);
	if (ret < 0) {
		fmt__buf(ctx->err, ctx->errlen,
			 "mmap of the %zu KiB perf ring of CPU %d failed: %s%s",
			 (r->map_len - page) / 1024, r->cpu, strerror(-ret),
			 ret == -EPERM || ret == -ENOMEM ?
				 " (use a smaller buffer, or raise "
				 "kernel.perf_event_mlock_kb)" :
				 "");
		return ret;
	}
	ee.data.u64 = (uint64_t)(r - p->rings);
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, r->fd, &ee) < 0) {
		int err = errno;

		fmt__buf(ctx->err, ctx->errlen, "epoll_ctl: %s", strerror(err));
		return -err;
	}
	return 0;
}

static void perf_close(void *priv);

/* Tracepoint @id on CPU @cpu, its raw records with tid and time on the
 * session clock, disabled; an fd or -1 and errno. */
static int open_tp(int id, int cpu, uint32_t wakeup)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.config = (uint64_t)id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_RAW,
		.disabled = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = wakeup,
	};

	return sys__perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* task_newtask on @r's CPU, into its ring; without it (a kernel that
 * refuses it) forks only lack their CLONE_PARENT. */
static void open_newtask(struct perf_priv *p, struct perf_ring *r,
			 uint32_t wakeup)
{
	int fd = open_tp(p->nt.id, r->cpu, wakeup);

	if (fd < 0)
		return;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
		close(fd);
		return;
	}
	p->fds[p->nfds++] = fd;
}

static int perf_open(struct backend_ctx *ctx, void **privp)
{
	const struct decoder_event *evs;
	struct perf_priv *p;
	char tracefs[4096];
	const char *tfs = ctx->tracefs;
	size_t nev, page;
	uint32_t wakeup;
	int ret = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx = ctx;
	p->epfd = -1;

	if (!tfs || !*tfs) {
		ret = tracefs__find(NULL, false, tracefs, sizeof(tracefs),
				    ctx->err, ctx->errlen);
		if (ret)
			goto out;
		tfs = tracefs;
	}
	p->dec = decoder__new(tfs,
			      ctx->events ? ctx->events : CTXMON_EVENTS_SCHED,
			      ctx->strs, ctx->err, ctx->errlen);
	if (!p->dec) {
		ret = -errno;
		goto out;
	}
	nev = decoder__events(p->dec, &evs);
	p->nt.id = -1;
	if ((ctx->events ? ctx->events : CTXMON_EVENTS_SCHED) &
	    CTXMON_EVENTS_SCHED)
		newtask_fmt__load(&p->nt, tfs);

	page = (size_t)sysconf(_SC_PAGESIZE);
	wakeup = wakeup_bytes(ctx, page);
	p->fds = malloc((size_t)ctx->ncpus * (nev + 1) * sizeof(*p->fds));
	p->rings = calloc((size_t)ctx->ncpus, sizeof(*p->rings));
	p->nt_last = calloc((size_t)ctx->ncpus, sizeof(*p->nt_last));
	p->scratch = malloc(MAX_RECORD);
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!p->fds || !p->rings || !p->nt_last || !p->scratch ||
	    p->epfd < 0) {
		ret = p->epfd < 0 ? -errno : -ENOMEM;
		fmt__buf(ctx->err, ctx->errlen, "perf backend set-up: %s",
			 strerror(-ret));
		goto out;
	}

	for (int cpu = 0; cpu < ctx->ncpus; cpu++) {
		struct perf_ring *r = &p->rings[p->nrings];

		if (!ctx->online[cpu])
			continue;
		r->cpu = cpu;
		r->fd = -1;
		for (size_t j = 0; j < nev; j++) {
			int fd = open_tp(evs[j].id, cpu, wakeup);

			if (fd < 0 && j == 0 && errno == ENODEV)
				break; /* the CPU went offline meanwhile */
			if (fd < 0) {
				ret = -errno;
				open_error(p, &evs[j], cpu, nev, errno);
				goto out;
			}
			p->fds[p->nfds++] = fd;
			if (j == 0) {
				r->fd = fd;
				p->nrings++;
				ret = map_ring(p, r, page);
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) <
				   0) {
				ret = -errno;
				fmt__buf(ctx->err, ctx->errlen,
					 "PERF_EVENT_IOC_SET_OUTPUT (%s:%s, "
					 "cpu %d): %s",
					 evs[j].system, evs[j].name, cpu,
					 strerror(errno));
			}
			if (ret)
				goto out;
		}
		if (r->fd >= 0 && p->nt.id > 0)
			open_newtask(p, r, wakeup);
	}
	if (!p->nrings) {
		ret = -ENODEV;
		fmt__buf(ctx->err, ctx->errlen, "perf backend: no online CPU");
	}
out:
	if (ret) {
		perf_close(p);
		p = NULL;
	}
	*privp = p;
	return ret;
}

static int ioctl_all(struct perf_priv *p, unsigned long req)
{
	int ret = 0;

	for (size_t i = 0; i < p->nfds; i++) {
		if (ioctl(p->fds[i], req, 0) < 0 && !ret)
			ret = -errno;
	}
	return ret;
}

static int perf_enable(void *priv)
{
	struct perf_priv *p = priv;
	int ret = ioctl_all(p, PERF_EVENT_IOC_ENABLE);

	if (ret)
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "PERF_EVENT_IOC_ENABLE: %s", strerror(-ret));
	return ret;
}

static int perf_disable(void *priv)
{
	struct perf_priv *p = priv;
	int ret = ioctl_all(p, PERF_EVENT_IOC_DISABLE);

	if (ret)
		fmt__buf(p->ctx->err, p->ctx->errlen,
			 "PERF_EVENT_IOC_DISABLE: %s", strerror(-ret));
	return ret;
}

static int perf_poll_fd(void *priv)
{
	return ((struct perf_priv *)priv)->epfd;
}

static void on_sample(struct perf_priv *p, struct perf_ring *r, const uint8_t *rec,
		      size_t len)
{
	struct stream *st = p->ctx->stream;
	struct sample_head sh;
	struct ctxmon_event *ev;
	uint64_t ts;

	if (len < sizeof(sh))
		goto bad;
	memcpy(&sh, rec, sizeof(sh));
	if (sizeof(sh) + sh.size > len)
		goto bad;
	if (newtask_fmt__is(&p->nt, rec + sizeof(sh), sh.size)) {
		struct newtask_seen *n = &p->nt_last[r - p->rings];
		uint64_t fl = (uint64_t)tp_field__read(rec + sizeof(sh),
						       sh.size, &p->nt.flags);

		n->child = (int32_t)tp_field__read(rec + sizeof(sh), sh.size,
						   &p->nt.child);
		n->clone_parent = clone_flags__parent(fl);
		return;
	}
	ts = perf_ring__time(r, sh.time);
	ev = stream__slot(st, r->cpu);
	if (!ev) {
		stream__lost(st, r->cpu, 1, ts);
		return;
	}
	if (decoder__decode(p->dec, rec + sizeof(sh), sh.size, ev) < 0) {
		/* a record we cannot read is an event lost, said so */
		stream__lost(st, r->cpu, 1, ts);
		return;
	}
	ev->ts = ts;
	ev->cpu = r->cpu;
	ev->tgid = (int32_t)sh.pid;
	/* sched_switch runs in prev's context: the sample's pid is its tgid */
	if (ev->type == CTXMON_EV_SWITCH) {
		ev->sw.prev_tgid = (int32_t)sh.pid;
		ev->sw.next_tgid = -1;
	} else if (ev->type == CTXMON_EV_FORK) {
		struct newtask_seen *n = &p->nt_last[r - p->rings];

		ev->fork.clone_parent = n->child == ev->fork.child_tid &&
					n->clone_parent;
	}
	stream__commit(st, r->cpu);
	return;
bad:
	stream__lost(st, r->cpu, 1, r->last_ts);
}

static void on_lost(struct perf_priv *p, struct perf_ring *r, const uint8_t *rec,
		    size_t len)
{
	struct lost_rec lr;

	if (len < sizeof(lr)) {
		stream__lost(p->ctx->stream, r->cpu, 0, r->last_ts);
		return;
	}
	memcpy(&lr, rec, sizeof(lr));
	stream__lost(p->ctx->stream, r->cpu, lr.lost,
		     perf_ring__time(r, lr.time));
}

static void read_ring(struct perf_priv *p, struct perf_ring *r)
{
	struct perf_event_header h;
	int ret;

	perf_ring__begin(r);
	while ((ret = perf_ring__peek(r, &h)) > 0) {
		const uint8_t *rec = perf_ring__record(r, &h, p->scratch);

		if (h.type == PERF_RECORD_SAMPLE)
			on_sample(p, r, rec, h.size);
		else if (h.type == PERF_RECORD_LOST)
			on_lost(p, r, rec, h.size);
		perf_ring__consume(r, &h);
	}
	if (ret < 0) /* a corrupt ring: what was there is dropped, said so */
		stream__lost(p->ctx->stream, r->cpu, 0, r->last_ts);
	perf_ring__end(r);
}

static int perf_read(void *priv, uint64_t *safe_ts)
{
	struct perf_priv *p = priv;
	/* before any head is read: whatever is stamped earlier than this
	 * (less the slack) is in a ring by the time we look */
	uint64_t now = clock__now_ns();

	for (size_t i = 0; i < p->nrings; i++)
		read_ring(p, &p->rings[i]);
	*safe_ts = now > STREAM_SLACK_NS ? now - STREAM_SLACK_NS : 0;
	return 0;
}

static void perf_close(void *priv)
{
	struct perf_priv *p = priv;

	if (!p)
		return;
	for (size_t i = 0; i < p->nfds; i++)
		ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < p->nrings; i++)
		perf_ring__unmap(&p->rings[i]);
	for (size_t i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	if (p->epfd >= 0)
		close(p->epfd);
	decoder__free(p->dec);
	free(p->scratch);
	free(p->rings);
	free(p->nt_last);
	free(p->fds);
	free(p);
}

const struct backend_ops backend_perf = {
	.name = "perf",
	.open = perf_open,
	.enable = perf_enable,
	.disable = perf_disable,
	.poll_fd = perf_poll_fd,
	.read = perf_read,
	.close = perf_close,
	.caps = CTXMON_CAP_EVENTS | CTXMON_CAP_WAKEUPS | CTXMON_CAP_EXACT |
		CTXMON_CAP_EXIT_TAIL | CTXMON_CAP_CPUS | CTXMON_CAP_MIGRATIONS |
		CTXMON_CAP_STATE_EARLY,
};
