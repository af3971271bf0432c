/*
 * test_file.c - the recording format: every event comes back exactly,
 * metadata and task declarations too; a file cut anywhere reads up to its
 * last whole chunk and says it was cut; any flipped bit, bad magic, wrong
 * version, huge length or unknown chunk is reported, never crashes; a
 * full disk leaves a readable file.  Also prints the bytes per event of a
 * switch-heavy synthetic stream.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <ctxmon/record.h>

#include "internal.h"

/* ---- helpers ------------------------------------------------------- */

struct evs {
	struct ctxmon_event *v;
	size_t n, cap;
	size_t stop_at; /* return 5 when n reaches it (0: never) */
};

static void evs_push(struct evs *e, const struct ctxmon_event *ev)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 4096;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		assert_non_null(e->v);
	}
	e->v[e->n++] = *ev;
}

static int collect(const struct ctxmon_event *ev, void *ctx)
{
	struct evs *e = ctx;

	evs_push(e, ev);
	return e->stop_at && e->n == e->stop_at ? 5 : 0;
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strncmp(a, b, 255) == 0;
}

/* Equal in every field that belongs to the event's type. */
static bool ev_eq(const struct ctxmon_event *a, const struct ctxmon_event *b)
{
	if (a->ts != b->ts || a->type != b->type || a->flags != b->flags ||
	    a->cpu != b->cpu || a->tid != b->tid || a->tgid != b->tgid)
		return false;
	switch (a->type) {
	case CTXMON_EV_SWITCH:
		return a->sw.prev_tid == b->sw.prev_tid &&
		       a->sw.prev_tgid == b->sw.prev_tgid &&
		       a->sw.prev_prio == b->sw.prev_prio &&
		       a->sw.prev_state == b->sw.prev_state &&
		       a->sw.next_tid == b->sw.next_tid &&
		       a->sw.next_tgid == b->sw.next_tgid &&
		       a->sw.next_prio == b->sw.next_prio &&
		       a->sw.preempt == b->sw.preempt &&
		       a->sw.kind == b->sw.kind &&
		       a->sw.prev_run_ns == b->sw.prev_run_ns &&
		       str_eq(a->sw.prev_comm, b->sw.prev_comm) &&
		       str_eq(a->sw.next_comm, b->sw.next_comm);
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		return a->wake.tid == b->wake.tid &&
		       a->wake.prio == b->wake.prio &&
		       a->wake.target_cpu == b->wake.target_cpu &&
		       str_eq(a->wake.comm, b->wake.comm);
	case CTXMON_EV_MIGRATE:
		return a->migrate.tid == b->migrate.tid &&
		       a->migrate.prio == b->migrate.prio &&
		       a->migrate.orig_cpu == b->migrate.orig_cpu &&
		       a->migrate.dest_cpu == b->migrate.dest_cpu;
	case CTXMON_EV_FORK:
		return a->fork.parent_tid == b->fork.parent_tid &&
		       a->fork.child_tid == b->fork.child_tid &&
		       a->fork.child_tgid == b->fork.child_tgid &&
		       a->fork.clone_parent == b->fork.clone_parent &&
		       str_eq(a->fork.child_comm, b->fork.child_comm);
	case CTXMON_EV_EXEC:
		return a->exec.tid == b->exec.tid &&
		       a->exec.old_tid == b->exec.old_tid &&
		       str_eq(a->exec.comm, b->exec.comm);
	case CTXMON_EV_EXIT:
		return a->exit.tid == b->exit.tid &&
		       a->exit.prio == b->exit.prio &&
		       a->exit.group_dead == b->exit.group_dead &&
		       str_eq(a->exit.comm, b->exit.comm);
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		return a->irq.vec == b->irq.vec && a->irq.ret == b->irq.ret;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		return a->sys.id == b->sys.id && a->sys.ret == b->sys.ret;
	case CTXMON_EV_LOST:
		return a->lost.count == b->lost.count &&
		       a->lost.start_ts == b->lost.start_ts &&
		       a->lost.end_ts == b->lost.end_ts;
	case CTXMON_EV_ORPHAN:
		return a->orphan.tid == b->orphan.tid &&
		       a->orphan.parent == b->orphan.parent &&
		       a->orphan.why == b->orphan.why;
	default:
		return true;
	}
}

static void assert_same(const struct evs *got, const struct evs *want, size_t n)
{
	assert_true(got->n >= n);
	for (size_t i = 0; i < n; i++) {
		if (!ev_eq(&got->v[i], &want->v[i]))
			fail_msg("event %zu (type %u) differs", i,
				 want->v[i].type);
	}
}

/* A recording in memory: written to a memfd, mapped back. */
struct memrec {
	int fd;
	uint8_t *p;
	size_t len;
};

static struct ctxmon_record *memrec_open(struct memrec *m,
					 unsigned chunk_events)
{
	struct ctxmon_record_opts o = { .sz = sizeof(o),
					.chunk_events = chunk_events };
	struct ctxmon_record *w;

	memset(m, 0, sizeof(*m));
	m->fd = memfd_create("ctxmon-test", 0);
	assert_true(m->fd >= 0);
	w = ctxmon_record_fdopen(dup(m->fd), &o);
	assert_non_null(w);
	return w;
}

static void memrec_load(struct memrec *m)
{
	struct stat st;

	assert_int_equal(fstat(m->fd, &st), 0);
	m->len = (size_t)st.st_size;
	m->p = malloc(m->len + 1);
	assert_non_null(m->p);
	assert_int_equal(pread(m->fd, m->p, m->len, 0), (ssize_t)m->len);
}

static void memrec_free(struct memrec *m)
{
	free(m->p);
	close(m->fd);
}

/* ---- a switch-heavy synthetic stream ------------------------------- */

/*
 * A small scheduler model: NCPU CPUs, processes of a few threads each
 * passing work to one another (pipe ping-pong), a few CPU hogs that get
 * preempted, kworkers, timer and network irqs, occasional migrations,
 * forks, execs and exits.  Times are jittered to the nanosecond like real
 * clocks.  It is not a kernel, only a stream with the shape and the
 * entropy of a real one.
 */
#define NCPU 4
#define NTASK 48

struct simtask {
	int32_t tid, tgid, prio;
	const char *comm;
	int cpu;
	bool running, runnable;
	int partner; /* index of the task it wakes */
	bool hog;
};

struct sim {
	struct strtab *strs;
	struct simtask t[NTASK];
	int cur[NCPU]; /* index of the running task, -1 idle */
	int32_t next_tid;
	uint64_t now;
	uint64_t rng;
	const char *idle_comm[NCPU];
};

static uint32_t rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng >> 11);
}

static void sim_init(struct sim *s, struct strtab *strs)
{
	static const char *const names[] = {
		"nginx",	"postgres",    "java",	      "Web Content",
		"kworker/0:1",	"ksoftirqd/1", "rcu_preempt", "gnome-shell",
		"redis-server", "node",	       "python3",     "gcc",
	};
	char buf[32];

	memset(s, 0, sizeof(*s));
	s->strs = strs;
	s->rng = 0x9e3779b97f4a7c15ull;
	s->now = 12345ull * 1000000000ull + 678901;
	s->next_tid = 5000;
	for (int i = 0; i < NTASK; i++) {
		struct simtask *t = &s->t[i];

		t->tid = 1000 + i * 7 + (int32_t)(rnd(s) % 5);
		t->tgid = i % 4 == 0 ? t->tid : s->t[i - i % 4].tid;
		t->prio = i % 11 == 0 ? 100 : 120;
		t->comm =
			strtab__intern(strs, names[i % ARRAY_SIZE(names)], 64);
		t->cpu = i % NCPU;
		t->partner = i ^ 1;
		t->hog = i % 9 == 8;
		t->runnable = t->hog;
	}
	for (int c = 0; c < NCPU; c++) {
		s->cur[c] = -1;
		snprintf(buf, sizeof(buf), "swapper/%d", c);
		s->idle_comm[c] = strtab__intern(strs, buf, 64);
	}
}

static void base(struct sim *s, struct ctxmon_event *ev, int type, int cpu)
{
	int cur = s->cur[cpu];

	memset(ev, 0, sizeof(*ev));
	s->now += 300 + rnd(s) % 6000;
	ev->ts = s->now;
	ev->type = (uint16_t)type;
	ev->cpu = cpu;
	ev->tid = cur < 0 ? 0 : s->t[cur].tid;
	ev->tgid = cur < 0 ? 0 : s->t[cur].tgid;
}

static void emit_switch(struct sim *s, struct evs *out, int cpu, int next,
			uint32_t state, int preempt)
{
	struct ctxmon_event ev;
	int prev = s->cur[cpu];

	base(s, &ev, CTXMON_EV_SWITCH, cpu);
	ev.sw.prev_tid = prev < 0 ? 0 : s->t[prev].tid;
	ev.sw.prev_tgid = prev < 0 ? 0 : s->t[prev].tgid;
	ev.sw.prev_prio = prev < 0 ? 120 : s->t[prev].prio;
	ev.sw.prev_comm = prev < 0 ? s->idle_comm[cpu] : s->t[prev].comm;
	ev.sw.prev_state = state;
	ev.sw.preempt = (uint8_t)preempt;
	ev.sw.kind = preempt || !state ? CTXMON_SW_INVOLUNTARY :
					 CTXMON_SW_VOLUNTARY;
	ev.sw.next_tid = next < 0 ? 0 : s->t[next].tid;
	ev.sw.next_tgid = next < 0 ? 0 : s->t[next].tgid;
	ev.sw.next_prio = next < 0 ? 120 : s->t[next].prio;
	ev.sw.next_comm = next < 0 ? s->idle_comm[cpu] : s->t[next].comm;
	/* now and then the run of a slice whose switch-in went unseen */
	ev.sw.prev_run_ns = prev >= 0 && ev.ts % 61 == 0 ? ev.ts % 100003 : 0;
	if (prev >= 0) {
		s->t[prev].running = false;
		s->t[prev].runnable = state == 0;
	}
	if (next >= 0) {
		s->t[next].running = true;
		s->t[next].runnable = false;
		s->t[next].cpu = cpu;
	}
	s->cur[cpu] = next;
	evs_push(out, &ev);
}

static void emit_wake(struct sim *s, struct evs *out, int cpu, int who)
{
	struct ctxmon_event ev;
	int type;

	for (type = CTXMON_EV_WAKING; type <= CTXMON_EV_WAKEUP; type++) {
		base(s, &ev, type, cpu);
		ev.wake.tid = s->t[who].tid;
		ev.wake.prio = s->t[who].prio;
		ev.wake.comm = s->t[who].comm;
		ev.wake.target_cpu = s->t[who].cpu;
		if (type == CTXMON_EV_WAKING && s->cur[cpu] < 0)
			ev.flags = CTXMON_EVF_IN_IRQ;
		evs_push(out, &ev);
	}
	s->t[who].runnable = true;
}

/* A runnable task for @cpu, or -1. */
static int pick(struct sim *s, int cpu)
{
	int start = (int)(rnd(s) % NTASK);

	for (int k = 0; k < NTASK; k++) {
		int i = (start + k) % NTASK;

		if (s->t[i].runnable && !s->t[i].running && s->t[i].cpu == cpu)
			return i;
	}
	return -1;
}

static void sim_step(struct sim *s, struct evs *out)
{
	int cpu = (int)(rnd(s) % NCPU), cur = s->cur[cpu], next;
	uint32_t r = rnd(s) % 1000;
	struct ctxmon_event ev;

	if (r < 20) { /* timer or network irq */
		base(s, &ev, CTXMON_EV_IRQ_ENTRY, cpu);
		ev.irq.vec = r < 15 ? 0 : 24 + cpu;
		evs_push(out, &ev);
		base(s, &ev, CTXMON_EV_IRQ_EXIT, cpu);
		ev.irq.vec = r < 15 ? 0 : 24 + cpu;
		ev.irq.ret = 1;
		evs_push(out, &ev);
		return;
	}
	if (r < 30) { /* migration of a sleeping task */
		int i = (int)(rnd(s) % NTASK);

		if (s->t[i].running || s->t[i].runnable)
			return;
		base(s, &ev, CTXMON_EV_MIGRATE, cpu);
		ev.migrate.tid = s->t[i].tid;
		ev.migrate.prio = s->t[i].prio;
		ev.migrate.orig_cpu = s->t[i].cpu;
		s->t[i].cpu = (s->t[i].cpu + 1) % NCPU;
		ev.migrate.dest_cpu = s->t[i].cpu;
		evs_push(out, &ev);
		return;
	}
	if (r < 32 && cur >= 0) { /* a thread comes and goes */
		int i = (int)(rnd(s) % NTASK);
		const char *comm = s->t[cur].comm;

		if (s->t[i].running || s->t[i].runnable || s->t[i].hog)
			return;
		base(s, &ev, CTXMON_EV_FORK, cpu);
		ev.fork.parent_tid = s->t[cur].tid;
		ev.fork.child_tid = s->next_tid++;
		ev.fork.child_tgid = r % 2 ? ev.fork.child_tid : s->t[cur].tgid;
		/* a new process of CLONE_PARENT now and then (format 1.3) */
		ev.fork.clone_parent = r % 2 && r % 3 == 0;
		ev.fork.child_comm = comm;
		evs_push(out, &ev);
		base(s, &ev, CTXMON_EV_WAKEUP_NEW, cpu);
		ev.wake.tid = s->next_tid - 1;
		ev.wake.prio = 120;
		ev.wake.comm = comm;
		ev.wake.target_cpu = cpu;
		evs_push(out, &ev);
		/* The slot is reused by the new task, the old one exits. */
		base(s, &ev, CTXMON_EV_EXIT, cpu);
		ev.exit.tid = s->t[i].tid;
		ev.exit.prio = s->t[i].prio;
		ev.exit.comm = s->t[i].comm;
		ev.exit.group_dead = 0;
		evs_push(out, &ev);
		s->t[i].tid = s->next_tid - 1;
		if (r % 2) {
			s->t[i].tgid = s->t[i].tid;
			base(s, &ev, CTXMON_EV_EXEC, cpu);
			ev.exec.tid = ev.exec.old_tid = s->t[cur].tid;
			ev.exec.comm = strtab__intern(s->strs, "sh", 8);
			evs_push(out, &ev);
		}
		return;
	}
	if (cur < 0) { /* idle: someone's wakeup lands here */
		next = pick(s, cpu);
		if (next < 0) {
			int i = (int)(rnd(s) % NTASK);

			if (s->t[i].running || s->t[i].runnable)
				return;
			s->t[i].cpu = cpu;
			emit_wake(s, out, cpu, i);
			next = i;
		}
		emit_switch(s, out, cpu, next, CTXMON_STATE_RUNNING, 0);
		return;
	}
	if (s->t[cur].hog || r > 900) { /* slice over, or preempted */
		next = pick(s, cpu);
		if (next >= 0)
			emit_switch(s, out, cpu, next, CTXMON_STATE_RUNNING,
				    r % 3 != 0);
		return;
	}
	if (r % 16 == 0) { /* a syscall that does not block */
		base(s, &ev, CTXMON_EV_SYS_ENTER, cpu);
		ev.sys.id = r % 3 ? 0 : 232;
		evs_push(out, &ev);
		base(s, &ev, CTXMON_EV_SYS_EXIT, cpu);
		ev.sys.id = r % 3 ? 0 : 232;
		ev.sys.ret = 64;
		evs_push(out, &ev);
	}
	/* Pass the work on and block. */
	{
		int p = s->t[cur].partner;

		if (!s->t[p].running && !s->t[p].runnable)
			emit_wake(s, out, cpu, p);
		next = pick(s, cpu);
		emit_switch(s, out, cpu, next,
			    r % 50 == 0 ? CTXMON_STATE_D :
			    r % 23 == 0 ? CTXMON_STATE_I :
					  CTXMON_STATE_S,
			    0);
	}
}

static void sim_run(struct sim *s, struct evs *out, size_t n)
{
	while (out->n < n)
		sim_step(s, out);
}

/* ---- tests --------------------------------------------------------- */

static void write_all_events(struct ctxmon_record *w, const struct evs *e)
{
	for (size_t i = 0; i < e->n; i++)
		assert_int_equal(ctxmon_record_write(w, &e->v[i]), 0);
}

static void test_roundtrip_synthetic(void **state)
{
	struct strtab *strs = strtab__new();
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_record_stats ws;
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct memrec m;
	struct sim s;
	size_t nsw = 0;

	(void)state;
	assert_non_null(strs);
	sim_init(&s, strs);
	sim_run(&s, &in, 400000);
	for (size_t i = 0; i < in.n; i++)
		nsw += in.v[i].type == CTXMON_EV_SWITCH;

	w = memrec_open(&m, 0);
	for (int i = 0; i < NTASK; i++)
		assert_int_equal(ctxmon_record_add_task(w, s.t[i].tid,
							s.t[i].tgid,
							s.t[i].comm),
				 0);
	write_all_events(w, &in);
	ctxmon_record_get_stats(w, &ws);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);

	r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	ctxmon_reader_get_info(r, &info);
	assert_true(info.complete);
	assert_false(info.truncated);
	assert_false(info.damaged);
	assert_int_equal(info.events, in.n);
	assert_int_equal(info.tasks, NTASK);
	assert_int_equal(out.n, in.n);
	assert_same(&out, &in, in.n);
	assert_string_equal(ctxmon_reader_error(r), "");

	printf("synthetic switch-heavy stream: %zu events (%.0f%% switches), "
	       "%zu bytes: %.2f bytes/event (%.2f before zstd)\n",
	       in.n, 100.0 * (double)nsw / (double)in.n, m.len,
	       (double)m.len / (double)in.n,
	       (double)ws.raw_bytes / (double)in.n);
	/* The goal is <= 5 bytes per event; keep a margin from regressions. */
	assert_true((double)m.len / (double)in.n < 5.0);

	ctxmon_reader_close(r);
	memrec_free(&m);
	free(in.v);
	free(out.v);
	strtab__free(strs);
}

/* Values at the edges of every field, across chunk boundaries. */
static void test_roundtrip_edges(void **state)
{
	static const int32_t i32[] = { 0,	  1,	     -1,     120,
				       INT32_MAX, INT32_MIN, 4194304 };
	static const uint64_t u64[] = { 0, 1, UINT64_MAX, 1ull << 63, 999 };
	static const char *const comms[] = {
		NULL,
		"",
		"a",
		"Web Content",
		"x-y:z [1] 2.5:",
		"0123456789abcde",
	};
	char longc[300];
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct memrec m;
	unsigned k = 0;

	(void)state;
	memset(longc, 'L', sizeof(longc) - 1);
	longc[sizeof(longc) - 1] = '\0';
	for (unsigned type = 0; type < CTXMON_EV__MAX; type++) {
		for (unsigned rep = 0; rep < 40; rep++, k++) {
			struct ctxmon_event ev;
			const char *c1 = comms[k % ARRAY_SIZE(comms)];
			const char *c2 =
				k % 13 == 0 ?
					longc :
					comms[(k / 3) % ARRAY_SIZE(comms)];
			int32_t a = i32[k % ARRAY_SIZE(i32)];
			int32_t b = i32[(k / 2) % ARRAY_SIZE(i32)];

			memset(&ev, 0, sizeof(ev));
			ev.ts = u64[(k / 5) % ARRAY_SIZE(u64)] + k;
			ev.type = (uint16_t)type;
			ev.flags = (uint16_t)(k % 7 == 0 ? 0xffff : k % 3);
			ev.cpu = k % 11 == 0 ? -1 :
				 k % 17 == 0 ? 100000 :
					       (int32_t)(k % 3);
			ev.tid = a;
			ev.tgid = b;
			switch (type) {
			case CTXMON_EV_SWITCH:
				ev.sw.prev_tid = b;
				ev.sw.prev_tgid = a;
				ev.sw.prev_prio = a;
				ev.sw.prev_state =
					k % 5 == 0 ? 0xffffffffu :
					k % 5 == 1 ? (CTXMON_STATE_S |
						      CTXMON_STATE_D) :
						     (1u << (k % 10)) >> 1;
				ev.sw.next_tid = a ^ b;
				ev.sw.next_tgid = b;
				ev.sw.next_prio = b;
				ev.sw.preempt = (uint8_t)(k % 4);
				ev.sw.kind = (uint8_t)(k % 5);
				ev.sw.prev_comm = c1;
				ev.sw.next_comm = c2;
				ev.sw.prev_run_ns =
					k % 3 ? u64[k % ARRAY_SIZE(u64)] : 0;
				break;
			case CTXMON_EV_WAKING:
			case CTXMON_EV_WAKEUP:
			case CTXMON_EV_WAKEUP_NEW:
				ev.wake.tid = b;
				ev.wake.prio = a;
				ev.wake.target_cpu = b;
				ev.wake.comm = c2;
				break;
			case CTXMON_EV_MIGRATE:
				ev.migrate.tid = b;
				ev.migrate.prio = a;
				ev.migrate.orig_cpu = a;
				ev.migrate.dest_cpu = b;
				break;
			case CTXMON_EV_FORK:
				ev.fork.parent_tid = b;
				ev.fork.child_tid = a;
				ev.fork.child_tgid = k % 3 ? a : b;
				ev.fork.child_comm = c1;
				break;
			case CTXMON_EV_EXEC:
				ev.exec.tid = a;
				ev.exec.old_tid = b;
				ev.exec.comm = c2;
				break;
			case CTXMON_EV_EXIT:
				ev.exit.tid = b;
				ev.exit.prio = a;
				ev.exit.group_dead = (uint8_t)(k * 37);
				ev.exit.comm = c1;
				break;
			case CTXMON_EV_IRQ_ENTRY:
			case CTXMON_EV_IRQ_EXIT:
			case CTXMON_EV_SOFTIRQ_ENTRY:
			case CTXMON_EV_SOFTIRQ_EXIT:
				ev.irq.vec = a;
				ev.irq.ret = b;
				break;
			case CTXMON_EV_SYS_ENTER:
			case CTXMON_EV_SYS_EXIT:
				ev.sys.id = (int64_t)u64[k % ARRAY_SIZE(u64)];
				ev.sys.ret = -(int64_t)k;
				break;
			case CTXMON_EV_LOST:
				ev.lost.count = u64[k % ARRAY_SIZE(u64)];
				ev.lost.start_ts =
					u64[(k + 1) % ARRAY_SIZE(u64)];
				ev.lost.end_ts = u64[(k + 2) % ARRAY_SIZE(u64)];
				break;
			case CTXMON_EV_ORPHAN:
				ev.orphan.tid = a;
				ev.orphan.parent = b;
				ev.orphan.why = (uint8_t)(k * 37);
				break;
			}
			evs_push(&in, &ev);
		}
	}
	w = memrec_open(&m, 7);
	assert_int_equal(ctxmon_record_add_task(w, INT32_MIN, INT32_MAX, longc),
			 0);
	write_all_events(w, &in);
	/* An unknown type is refused and nothing of it is written. */
	{
		struct ctxmon_event bad = { .type = CTXMON_EV__MAX };

		assert_int_equal(ctxmon_record_write(w, &bad), -EINVAL);
	}
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);
	r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	assert_int_equal(out.n, in.n);
	assert_same(&out, &in, in.n);
	ctxmon_reader_close(r);
	memrec_free(&m);
	free(in.v);
	free(out.v);
}

static void test_meta(void **state)
{
	static const uint64_t lost[3] = { 0, 7, UINT64_MAX };
	uint64_t v, got[4] = { 0 };
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct memrec m;
	struct ctxmon_event ev = { .ts = 5, .type = CTXMON_EV_SWITCH };
	size_t len;
	bool seen_format = false;

	(void)state;
	w = memrec_open(&m, 0);
	assert_int_equal(ctxmon_record_set_meta_str(w, CTXMON_META_KERNEL,
						    "6.18.44-fc"),
			 0);
	assert_int_equal(ctxmon_record_set_meta_u64(w, CTXMON_META_NCPUS, 2),
			 0);
	assert_int_equal(ctxmon_record_set_meta_u64s(w, CTXMON_META_LOST_START,
						     lost, 3),
			 0);
	assert_int_equal(
		ctxmon_record_add_format(w, "sched", "sched_switch",
					 "name: sched_switch\nID: 372\n"),
		0);
	assert_int_equal(ctxmon_record_set_meta(w, "blob", "\0\1\2", 3), 0);
	assert_int_equal(
		ctxmon_record_set_meta_str(w, CTXMON_META_BACKEND, "perf"), 0);
	assert_int_equal(ctxmon_record_set_meta(w, "", "x", 1), -EINVAL);
	assert_int_equal(ctxmon_record_write(w, &ev), 0);
	assert_int_equal(ctxmon_record_flush(w), 0);
	/* Set after the events: visible once the reading is done. */
	assert_int_equal(
		ctxmon_record_set_meta_u64(w, CTXMON_META_TIME_STOP, 99), 0);
	assert_int_equal(
		ctxmon_record_set_meta_str(w, CTXMON_META_BACKEND, "bpf"), 0);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);

	r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(r);
	assert_string_equal(ctxmon_reader_meta_str(r, CTXMON_META_KERNEL),
			    "6.18.44-fc");
	assert_int_equal(ctxmon_reader_meta_u64(r, CTXMON_META_NCPUS, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(
		ctxmon_reader_meta_u64s(r, CTXMON_META_LOST_START, got, 4), 3);
	assert_memory_equal(got, lost, sizeof(lost));
	assert_string_equal(ctxmon_reader_meta_str(r,
						   "format/sched/sched_switch"),
			    "name: sched_switch\nID: 372\n");
	assert_memory_equal(ctxmon_reader_meta(r, "blob", &len), "\0\1\2", 3);
	assert_int_equal(len, 3);
	assert_null(ctxmon_reader_meta_str(r, "blob")); /* not a string */
	assert_int_equal(ctxmon_reader_meta_u64(r, CTXMON_META_KERNEL, &v),
			 -EINVAL);
	assert_int_equal(ctxmon_reader_meta_u64(r, "nope", &v), -ENOENT);
	assert_null(ctxmon_reader_meta(r, CTXMON_META_TIME_STOP, NULL));
	assert_string_equal(ctxmon_reader_meta_str(r, CTXMON_META_BACKEND),
			    "perf");

	assert_int_equal(ctxmon_reader_read(r, NULL, NULL), 0);
	assert_int_equal(ctxmon_reader_meta_u64(r, CTXMON_META_TIME_STOP, &v),
			 0);
	assert_int_equal(v, 99);
	assert_string_equal(ctxmon_reader_meta_str(r, CTXMON_META_BACKEND),
			    "bpf");
	for (size_t i = 0; ctxmon_reader_meta_key(r, i); i++)
		seen_format |= !strcmp(ctxmon_reader_meta_key(r, i),
				       "format/sched/sched_switch");
	assert_true(seen_format);
	ctxmon_reader_close(r);
	memrec_free(&m);
}

struct taskseen {
	int n;
	pid_t tid[4];
	const struct ctxmon_reader *r;
	const char *comm_at_event;
	int events;
};

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct taskseen *t = ctx;

	(void)tgid;
	(void)comm;
	if (t->n < 4)
		t->tid[t->n] = tid;
	t->n++;
	return 0;
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct taskseen *t = ctx;

	(void)ev;
	if (t->events++ == 0)
		t->comm_at_event = ctxmon_reader_comm(t->r, 42);
	return 0;
}

static void test_tasks(void **state)
{
	struct ctxmon_event ev = {
		.ts = 10,
		.type = CTXMON_EV_SWITCH,
		.tid = 42,
		.tgid = 40,
	};
	struct taskseen seen = { 0 };
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct memrec m;

	(void)state;
	ev.sw.prev_tid = 42;
	ev.sw.prev_tgid = 40;
	ev.sw.prev_comm = "renamed";
	ev.sw.next_tid = 0;
	ev.sw.next_comm = "swapper/0";
	w = memrec_open(&m, 0);
	assert_int_equal(ctxmon_record_add_task(w, 1, 1, "systemd"), 0);
	assert_int_equal(ctxmon_record_add_task(w, 42, 40, "worker"), 0);
	assert_int_equal(ctxmon_record_write(w, &ev), 0);
	assert_int_equal(ctxmon_record_add_task(w, 43, -1, "late"), 0);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);

	r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(r);
	seen.r = r;
	ctxmon_reader_set_task_fn(r, on_task, &seen);
	assert_int_equal(ctxmon_reader_read(r, on_event, &seen), 0);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.tid[0], 1);
	assert_int_equal(seen.tid[1], 42);
	assert_int_equal(seen.tid[2], 43);
	/* During the event, the name before it; after, the event's. */
	assert_string_equal(seen.comm_at_event, "worker");
	assert_string_equal(ctxmon_reader_comm(r, 42), "renamed");
	assert_int_equal(ctxmon_reader_tgid(r, 42), 40);
	assert_string_equal(ctxmon_reader_comm(r, 43), "late");
	assert_int_equal(ctxmon_reader_tgid(r, 43), -1);
	assert_null(ctxmon_reader_comm(r, 7));
	ctxmon_reader_close(r);
	memrec_free(&m);
}

static void test_stop_and_resume(void **state)
{
	struct strtab *strs = strtab__new();
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct memrec m;
	struct sim s;

	(void)state;
	sim_init(&s, strs);
	sim_run(&s, &in, 5000);
	w = memrec_open(&m, 1000);
	write_all_events(w, &in);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);
	r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(r);
	out.stop_at = 1500;
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 5);
	assert_int_equal(out.n, 1500);
	out.stop_at = 0;
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	assert_int_equal(out.n, in.n);
	assert_same(&out, &in, in.n);
	ctxmon_reader_close(r);
	memrec_free(&m);
	free(in.v);
	free(out.v);
	strtab__free(strs);
}

/* A small file with several chunks and its events, whose comms live in
 * the returned table. */
static struct strtab *small_file(struct memrec *m, struct evs *in, unsigned n,
				 unsigned chunk)
{
	struct strtab *strs = strtab__new();
	struct ctxmon_record *w;
	struct sim s;

	sim_init(&s, strs);
	sim_run(&s, in, n);
	w = memrec_open(m, chunk);
	assert_int_equal(
		ctxmon_record_set_meta_str(w, CTXMON_META_KERNEL, "6.18"), 0);
	assert_int_equal(ctxmon_record_add_task(w, 77, 77, "init"), 0);
	write_all_events(w, in);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(m);
	return strs;
}

/* Cut the file at every length: never an error, never a wrong event. */
static void test_truncated_everywhere(void **state)
{
	struct evs in = { 0 };
	struct strtab *strs;
	struct memrec m;
	size_t prev_events = 0;

	(void)state;
	strs = small_file(&m, &in, 600, 100);
	for (size_t cut = 0; cut < m.len; cut++) {
		struct evs out = { 0 };
		struct ctxmon_reader_info info;
		struct ctxmon_reader *r = ctxmon_reader_open_mem(m.p, cut);

		if (cut < 32) {
			assert_null(r);
			assert_true(errno == EINVAL || errno == EBADMSG);
			assert_true(strlen(ctxmon_record_last_error()) > 0);
			continue;
		}
		assert_non_null(r);
		assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
		ctxmon_reader_get_info(r, &info);
		assert_true(info.truncated);
		assert_false(info.damaged);
		assert_false(info.complete);
		assert_non_null(strstr(ctxmon_reader_error(r), "offset"));
		assert_true(out.n >= prev_events);
		/* Whole chunks of 100 records, the first with the task. */
		assert_true(out.n == 0 || (out.n + 1) % 100 == 0 ||
			    out.n == in.n);
		assert_same(&out, &in, out.n);
		prev_events = out.n;
		ctxmon_reader_close(r);
		free(out.v);
	}
	assert_int_equal(prev_events, in.n);
	memrec_free(&m);
	free(in.v);
	strtab__free(strs);
}

/* A crash can leave zeros after the last written chunk. */
static void test_zero_tail(void **state)
{
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	struct strtab *strs;
	struct memrec m;
	uint8_t *buf;
	size_t keep;

	(void)state;
	strs = small_file(&m, &in, 300, 100);
	/* Drop the end marker (the last chunk: 24 + a few bytes). */
	for (keep = m.len - 24; keep > 32; keep--)
		if (!memcmp(m.p + keep, "CHNK", 4) && m.p[keep + 4] == 3)
			break;
	buf = calloc(1, keep + 8192);
	memcpy(buf, m.p, keep);
	r = ctxmon_reader_open_mem(buf, keep + 8192);
	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	ctxmon_reader_get_info(r, &info);
	assert_true(info.truncated);
	assert_false(info.damaged);
	assert_int_equal(out.n, in.n);
	assert_non_null(strstr(ctxmon_reader_error(r), "zeros"));
	ctxmon_reader_close(r);
	free(buf);
	free(out.v);
	free(in.v);
	memrec_free(&m);
	strtab__free(strs);
}

/* Every single flipped bit is noticed. */
/* ---- the integrity verdict ------------------------------------------ */

static int collect_batch(const struct ctxmon_event *evs, size_t n, void *ctx)
{
	for (size_t i = 0; i < n; i++)
		evs_push(ctx, &evs[i]);
	return 0;
}

/* @v as JSON, in a buffer the caller frees. */
static char *verdict_json(const struct ctxmon_verdict *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ctxmon_verdict_write_json(v, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Read @buf whole by @batch or one event at a time, with @threads
 * helpers, and return its verdict's line and JSON. */
static void verdict_of(const uint8_t *buf, size_t len, bool batch,
		       int threads, struct ctxmon_verdict *v, char *line,
		       size_t linelen, char **json)
{
	static char problem[256];
	static uint64_t lost[64];
	struct ctxmon_reader *r;
	struct evs out = { 0 };
	char n[16];

	snprintf(n, sizeof(n), "%d", threads);
	setenv("CTXMON_READ_THREADS", n, 1);
	r = ctxmon_reader_open_mem(buf, len);
	assert_non_null(r);
	if (batch)
		(void)ctxmon_reader_read_batch(r, collect_batch, &out);
	else
		(void)ctxmon_reader_read(r, collect, &out);
	ctxmon_reader_get_verdict(r, v);
	ctxmon_verdict_format(v, "f.data", line, linelen);
	*json = verdict_json(v);
	/* the verdict's events are what the callbacks got */
	assert_int_equal(v->events, out.n);
	/* what the verdict points to is the reader's: kept past its close
	 * for the caller's checks */
	snprintf(problem, sizeof(problem), "%s", v->problem);
	v->problem = problem;
	assert_true(v->nlost_cpu <= 64);
	if (v->nlost_cpu)
		memcpy(lost, v->lost_per_cpu, v->nlost_cpu * sizeof(*lost));
	v->lost_per_cpu = lost;
	ctxmon_reader_close(r);
	unsetenv("CTXMON_READ_THREADS");
	free(out.v);
}

/*
 * Issue 45, item 3: every reader gives one verdict.  A whole file is
 * complete; a cut anywhere after the header is truncated at the offset
 * the reader names, a flipped byte in an events chunk is damaged with one
 * checksum failure; the line and the JSON say so, the same whether the
 * events came one at a time or in runs, with helper threads or none.
 */
static void test_verdict(void **state)
{
	struct ctxmon_verdict v, w;
	struct evs in = { 0 };
	struct strtab *strs;
	struct memrec m;
	char line[512], line2[512], *json, *json2, want[128];
	uint8_t *buf;
	size_t evchunk = 0;

	(void)state;
	strs = small_file(&m, &in, 600, 100);
	verdict_of(m.p, m.len, false, 1, &v, line, sizeof(line), &json);
	assert_true(v.complete);
	assert_true(v.finished);
	assert_false(v.truncated || v.damaged);
	assert_int_equal(v.checksum_failures, 0);
	assert_int_equal(v.events, in.n);
	assert_int_equal(v.lost_records, 0);
	assert_string_equal(v.problem, "");
	snprintf(want, sizeof(want), "f.data: complete: read to its end; %zu "
				     "events read; 0 checksum failures; nothing "
				     "lost", in.n);
	assert_string_equal(line, want);
	assert_non_null(strstr(json, "{\"complete\":true,\"truncated_at\":null,"
				     "\"damaged_at\":null,\"problem\":null,"
				     "\"checksum_failures\":0,"));
	free(json);

	for (size_t cut = 40; cut < m.len; cut += 7) {
		verdict_of(m.p, cut, cut % 2, 1 + (int)(cut % 3), &v, line,
			   sizeof(line), &json);
		verdict_of(m.p, cut, !(cut % 2), 1, &w, line2, sizeof(line2),
			   &json2);
		assert_false(v.complete);
		assert_true(v.finished);
		assert_true(v.truncated);
		assert_false(v.damaged);
		assert_true(v.problem_offset <= cut);
		snprintf(want, sizeof(want),
			 "f.data: incomplete: truncated at offset %" PRIu64
			 ": ", v.problem_offset);
		assert_memory_equal(line, want, strlen(want));
		snprintf(want, sizeof(want), "\"truncated_at\":%" PRIu64
					     ",\"damaged_at\":null",
			 v.problem_offset);
		assert_non_null(strstr(json, want));
		assert_non_null(strstr(json, "\"complete\":false"));
		assert_string_equal(line, line2);
		assert_string_equal(json, json2);
		free(json);
		free(json2);
	}

	/* a byte in the middle of the second events chunk */
	for (size_t o = 32, k = 0; o + 24 <= m.len; k++) {
		uint32_t stored;

		memcpy(&stored, m.p + o + 8, 4);
		if (k == 2) {
			evchunk = o;
			break;
		}
		o += 24 + stored;
	}
	assert_true(evchunk > 0);
	buf = malloc(m.len);
	memcpy(buf, m.p, m.len);
	buf[evchunk + 24 + 10] ^= 0x20;
	verdict_of(buf, m.len, true, 3, &v, line, sizeof(line), &json);
	verdict_of(buf, m.len, false, 1, &w, line2, sizeof(line2), &json2);
	assert_false(v.complete);
	assert_true(v.finished);
	assert_true(v.damaged);
	assert_int_equal(v.checksum_failures, 1);
	assert_int_equal(v.problem_offset, evchunk);
	snprintf(want, sizeof(want),
		 "f.data: incomplete: damaged at offset %zu: chunk checksum "
		 "mismatch, not read past it; ", evchunk);
	assert_memory_equal(line, want, strlen(want));
	assert_non_null(strstr(line, "; 1 checksum failure; nothing lost"));
	snprintf(want, sizeof(want), "\"truncated_at\":null,\"damaged_at\":%zu",
		 evchunk);
	assert_non_null(strstr(json, want));
	assert_non_null(strstr(json, "\"checksum_failures\":1,"));
	assert_string_equal(line, line2);
	assert_string_equal(json, json2);
	free(json);
	free(json2);

	/* a reading its caller stopped is not a verdict on the file */
	{
		struct ctxmon_reader *r = ctxmon_reader_open_mem(m.p, m.len);
		struct evs out = { .stop_at = 10 };

		assert_non_null(r);
		assert_int_equal(ctxmon_reader_read(r, collect, &out), 5);
		ctxmon_reader_get_verdict(r, &v);
		assert_false(v.finished);
		assert_false(v.complete);
		assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
		ctxmon_reader_get_verdict(r, &v);
		assert_true(v.finished);
		assert_true(v.complete);
		ctxmon_reader_close(r);
		free(out.v);
	}

	/* the line is cut to fit, its length told as snprintf() tells it */
	assert_int_equal(ctxmon_verdict_format(&w, "f.data", line2, 10),
			 (int)strlen(line));
	assert_int_equal(strlen(line2), 9);
	free(buf);
	free(in.v);
	memrec_free(&m);
	strtab__free(strs);
}

/* Losses, per CPU: a file read whole is not complete when the capture
 * lost events, and a loss without a count makes the total a bound. */
static void test_verdict_lost(void **state)
{
	struct ctxmon_event ev = { .type = CTXMON_EV_LOST };
	struct ctxmon_record *w;
	struct ctxmon_verdict v;
	struct memrec m;
	char line[512], *json;

	(void)state;
	w = memrec_open(&m, 0);
	assert_int_equal(ctxmon_record_set_meta_u64(w, CTXMON_META_NCPUS, 4),
			 0);
	ev.ts = 100;
	ev.cpu = 1;
	ev.lost.count = 5;
	assert_int_equal(ctxmon_record_write(w, &ev), 0);
	ev.ts = 200;
	ev.cpu = 2;
	ev.lost.count = 0;
	assert_int_equal(ctxmon_record_write(w, &ev), 0);
	ev.ts = 300;
	ev.cpu = 1;
	ev.lost.count = 7;
	assert_int_equal(ctxmon_record_write(w, &ev), 0);
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);
	verdict_of(m.p, m.len, true, 1, &v, line, sizeof(line), &json);
	assert_false(v.complete);
	assert_false(v.truncated || v.damaged);
	assert_int_equal(v.lost, 12);
	assert_int_equal(v.lost_records, 3);
	assert_int_equal(v.lost_unknown, 1);
	assert_int_equal(v.ncpus, 4);
	assert_string_equal(line, "f.data: incomplete: read to its end; 3 "
				  "events read; 0 checksum failures; lost at "
				  "least 12 events in 3 records (1 without a "
				  "count); CPU 1: 12");
	assert_non_null(strstr(json, "\"lost\":12,\"lost_records\":3,"
				     "\"lost_unknown\":1,\"lost_per_cpu\":"
				     "[0,12,0,0]}"));
	free(json);
	memrec_free(&m);
}

static void test_bitflips(void **state)
{
	struct evs in = { 0 };
	struct strtab *strs;
	struct memrec m;
	uint8_t *buf;

	(void)state;
	strs = small_file(&m, &in, 120, 50);
	buf = malloc(m.len);
	for (size_t bit = 0; bit < m.len * 8; bit++) {
		struct ctxmon_reader_info info;
		struct ctxmon_reader *r;
		struct evs out = { 0 };
		int ret;

		memcpy(buf, m.p, m.len);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		r = ctxmon_reader_open_mem(buf, m.len);
		if (!r)
			continue;
		ret = ctxmon_reader_read(r, collect, &out);
		ctxmon_reader_get_info(r, &info);
		if (!info.damaged)
			fail_msg("flip of bit %zu (byte %zu) not noticed", bit,
				 bit / 8);
		assert_int_equal(ret, -EBADMSG);
		assert_true(strlen(ctxmon_reader_error(r)) > 0);
		/* What was delivered before the damage is right. */
		for (size_t i = 0; i < out.n; i++)
			if (!ev_eq(&out.v[i], &in.v[i]))
				fail_msg(
					"flip of bit %zu (byte %zu): event %zu "
					"differs, reader: %s",
					bit, bit / 8, i,
					ctxmon_reader_error(r));
		ctxmon_reader_close(r);
		free(out.v);
	}
	free(buf);
	free(in.v);
	memrec_free(&m);
	strtab__free(strs);
}

/* The reader's CRC-32C, to forge chunks that pass the checksums. */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A valid file header followed by one forged chunk. */
static size_t forge(uint8_t *buf, uint16_t type, uint16_t flags,
		    uint32_t stored, uint32_t raw, const void *payload,
		    size_t plen)
{
	uint8_t *h = buf + 32;

	memset(buf, 0, 32);
	memcpy(buf,
	       "\x89"
	       "CTXMON\n",
	       8);
	buf[8] = 1;
	buf[12] = 32;
	put32(buf + 28, crc32c(buf, 28));
	put32(h, 0x4b4e4843u);
	h[4] = (uint8_t)type;
	h[5] = (uint8_t)(type >> 8);
	h[6] = (uint8_t)flags;
	h[7] = 0;
	put32(h + 8, stored);
	put32(h + 12, raw);
	memcpy(h + 24, payload, plen);
	put32(h + 16, crc32c(h + 24, plen));
	put32(h + 20, crc32c(h, 20));
	return 32 + 24 + plen;
}

static void expect_damage(const uint8_t *buf, size_t len, const char *what)
{
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r = ctxmon_reader_open_mem(buf, len);

	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, NULL, NULL), -EBADMSG);
	ctxmon_reader_get_info(r, &info);
	assert_true(info.damaged);
	if (!strstr(ctxmon_reader_error(r), what))
		fail_msg("error \"%s\" does not say \"%s\"",
			 ctxmon_reader_error(r), what);
	assert_non_null(strstr(ctxmon_reader_error(r), "offset 32"));
	ctxmon_reader_close(r);
}

static void test_bad_files(void **state)
{
	uint8_t buf[4096], junk[64];
	struct ctxmon_reader *r;
	size_t n;

	(void)state;
	r = ctxmon_reader_open_mem("", 0);
	assert_null(r);
	assert_int_equal(errno, EINVAL);
	r = ctxmon_reader_open_mem("PERFILE2hello world, not ours at all", 36);
	assert_null(r);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(ctxmon_record_last_error(), "magic"));

	/* A future major version. */
	n = forge(buf, 1, 0, 0, 0, "", 0);
	buf[8] = 2;
	put32(buf + 28, crc32c(buf, 28));
	r = ctxmon_reader_open_mem(buf, n);
	assert_null(r);
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_non_null(strstr(ctxmon_record_last_error(), "version 2.0"));

	/* Lengths far beyond the limit: refused before any allocation. */
	n = forge(buf, 2, 1, 0xffffffffu, 0xfffffff0u, "", 0);
	expect_damage(buf, n, "limit");
	n = forge(buf, 2, 0, 10, 20, "0123456789", 10);
	expect_damage(buf, n, "two different sizes");

	/* Unknown chunk types: an error unless marked skippable. */
	n = forge(buf, 77, 0, 4, 4, "abcd", 4);
	expect_damage(buf, n, "unknown chunk type 77");
	{
		struct ctxmon_reader_info info;

		n = forge(buf, 77, 2, 4, 4, "abcd", 4);
		r = ctxmon_reader_open_mem(buf, n);
		assert_non_null(r);
		assert_int_equal(ctxmon_reader_read(r, NULL, NULL), 0);
		ctxmon_reader_get_info(r, &info);
		assert_true(info.truncated); /* no end marker */
		assert_false(info.damaged);
		ctxmon_reader_close(r);
	}

	/* Checksums right, contents wrong. */
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 151 + 7);
	n = forge(buf, 2, 0, sizeof(junk), sizeof(junk), junk, sizeof(junk));
	expect_damage(buf, n, "event chunk");
	n = forge(buf, 1, 0, 3, 3,
		  "\x05"
		  "ab",
		  3);
	expect_damage(buf, n, "metadata");
	n = forge(buf, 2, 1, 8, 100, "garbage!", 8);
	expect_damage(buf, n, "decompress");
	n = forge(buf, 3, 0, 4, 4, "\x05\x00\x00\x00", 4);
	expect_damage(buf, n, "end marker counts 5 events");
	/* An EVENTS chunk claiming many records with few bytes. */
	n = forge(buf, 2, 0, 12, 12,
		  "\xff\xff\x03\x00\x09\x00\x00\x00\x00\x00\x00\x00", 12);
	expect_damage(buf, n, "event chunk");
}

/* A disk that fills up: simulated with RLIMIT_FSIZE (no privileges). */
static void test_disk_full(void **state)
{
	char path[] = "/tmp/ctxmon-test-full.XXXXXX";
	struct strtab *strs = strtab__new();
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_record_opts o = { .sz = sizeof(o), .chunk_events = 2000 };
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct rlimit old, lim;
	struct sim s;
	struct stat st;
	size_t i;
	int fd, ret = 0;

	(void)state;
	sim_init(&s, strs);
	sim_run(&s, &in, 200000);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 64 * 1024;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);

	w = ctxmon_record_create(path, &o);
	assert_non_null(w);
	assert_int_equal(
		ctxmon_record_set_meta_str(w, CTXMON_META_KERNEL, "6.18"), 0);
	for (i = 0; i < in.n && ret == 0; i++)
		ret = ctxmon_record_write(w, &in.v[i]);
	assert_int_equal(ret, -EFBIG);
	/* Sticky: later writes fail at once. */
	assert_int_equal(ctxmon_record_write(w, &in.v[0]), -EFBIG);
	assert_non_null(strstr(ctxmon_record_error(w), "File too large"));
	assert_int_equal(
		ctxmon_record_set_meta_u64(w, CTXMON_META_TIME_STOP, 1), 0);
	assert_int_equal(ctxmon_record_close(w), -EFBIG);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size <= 64 * 1024);
	r = ctxmon_reader_open(path);
	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	ctxmon_reader_get_info(r, &info);
	assert_true(info.truncated);
	assert_false(info.damaged);
	assert_true(out.n > 0 && out.n < i);
	assert_same(&out, &in, out.n);
	printf("full disk: %zu of %zu events kept; reader says: %s\n", out.n, i,
	       ctxmon_reader_error(r));
	ctxmon_reader_close(r);
	unlink(path);
	free(in.v);
	free(out.v);
	strtab__free(strs);
}

static void test_mode_0600(void **state)
{
	char path[] = "/tmp/ctxmon-test-mode.XXXXXX";
	struct ctxmon_record *w;
	struct stat st;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(write(fd, "old contents", 12), 12);
	close(fd);
	w = ctxmon_record_create(path, NULL);
	assert_non_null(w);
	assert_int_equal(ctxmon_record_close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	unlink(path);
	assert_int_equal(stat(path, &st), -1);
	w = ctxmon_record_create(path, NULL);
	assert_non_null(w);
	assert_int_equal(ctxmon_record_close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	unlink(path);

	assert_null(ctxmon_record_create("/nonexistent/dir/x.data", NULL));
	assert_int_equal(errno, ENOENT);
	assert_non_null(
		strstr(ctxmon_record_last_error(), "/nonexistent/dir/x.data"));
	assert_null(ctxmon_reader_open("/nonexistent/x.data"));
	assert_int_equal(errno, ENOENT);
}

/* Written to a pipe and read from one: nothing needs to seek. */
static void test_pipe(void **state)
{
	struct strtab *strs = strtab__new();
	struct evs in = { 0 }, out = { 0 };
	struct ctxmon_reader_info info;
	struct ctxmon_reader *r;
	struct ctxmon_record *w;
	struct sim s;
	int p[2];
	pid_t pid;

	(void)state;
	sim_init(&s, strs);
	sim_run(&s, &in, 20000);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		w = ctxmon_record_fdopen(p[1], NULL);
		for (size_t i = 0; w && i < in.n; i++)
			if (ctxmon_record_write(w, &in.v[i]))
				_exit(1);
		_exit(w && ctxmon_record_close(w) == 0 ? 0 : 1);
	}
	close(p[1]);
	r = ctxmon_reader_fdopen(p[0]);
	assert_non_null(r);
	assert_int_equal(ctxmon_reader_read(r, collect, &out), 0);
	ctxmon_reader_get_info(r, &info);
	assert_true(info.complete);
	assert_int_equal(out.n, in.n);
	assert_same(&out, &in, in.n);
	ctxmon_reader_close(r);
	{
		int status;

		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	free(in.v);
	free(out.v);
	strtab__free(strs);
}

struct live_read {
	struct evs evs;
	int go; /* told when the first chunk's records have come */
};

static int tell_after_first_chunk(const struct ctxmon_event *ev, void *ctx)
{
	struct live_read *l = ctx;

	if (l->evs.n == 999)
		assert_int_equal(write(l->go, "g", 1), 1);
	return collect(ev, &l->evs);
}

/*
 * A pipe from a recording still being written: the records of a chunk
 * come as soon as the chunk has, not when more chunks follow.  The writer
 * waits (10 s at most) for the reader to have the first chunk's records
 * before it writes the rest; a reader that read ahead first would wait
 * for it in turn, and the writer would give up.
 */
static void test_pipe_live(void **state)
{
	struct ctxmon_record_opts o = { .sz = sizeof(o),
					.chunk_events = 1000 };
	struct strtab *strs = strtab__new();
	struct live_read l = { .evs = { 0 } };
	struct evs in = { 0 };
	struct ctxmon_record *w;
	int p[2], go[2], status;
	struct sim s;
	pid_t pid;

	(void)state;
	sim_init(&s, strs);
	sim_run(&s, &in, 5000);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pollfd pf = { .fd = go[0], .events = POLLIN };

		close(p[0]);
		close(go[1]);
		w = ctxmon_record_fdopen(p[1], &o);
		for (size_t i = 0; w && i < in.n; i++) {
			/* 1000 written: the first chunk is in the pipe */
			if (i == 1500 && poll(&pf, 1, 10000) != 1)
				_exit(2);
			if (ctxmon_record_write(w, &in.v[i]))
				_exit(1);
		}
		_exit(w && ctxmon_record_close(w) == 0 ? 0 : 1);
	}
	close(p[1]);
	close(go[0]);
	l.go = go[1];
	{
		struct ctxmon_reader *r = ctxmon_reader_fdopen(p[0]);

		assert_non_null(r);
		assert_int_equal(ctxmon_reader_read(r, tell_after_first_chunk,
						    &l),
				 0);
		assert_int_equal(l.evs.n, in.n);
		assert_same(&l.evs, &in, in.n);
		ctxmon_reader_close(r);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go[1]);
	free(in.v);
	free(l.evs.v);
	strtab__free(strs);
}

/* Threads of this process, as the kernel lists them. */
static int nthreads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

struct thread_watch {
	struct evs evs;
	int most; /* threads seen at most while events were handed over */
};

static int watch_threads(const struct ctxmon_event *ev, void *ctx)
{
	struct thread_watch *w = ctx;

	if (w->evs.n % 512 == 0) {
		int n = nthreads();

		if (n > w->most)
			w->most = n;
	}
	return collect(ev, &w->evs);
}

/* Read @m with @threads threads in all (CTXMON_READ_THREADS): every
 * record is the one written, the kernel lists the helpers while the
 * records come in, and they are gone when the reading ends. */
static void read_with_threads(const struct memrec *m, const struct evs *in,
			      int threads, size_t stop_every)
{
	struct thread_watch w = { .most = 0 };
	struct ctxmon_reader *r;
	int before = nthreads(), ret;
	char v[16];

	snprintf(v, sizeof(v), "%d", threads);
	setenv("CTXMON_READ_THREADS", v, 1);
	r = ctxmon_reader_open_mem(m->p, m->len);
	assert_non_null(r);
	do {
		w.evs.stop_at = stop_every ? w.evs.n + stop_every : 0;
		ret = ctxmon_reader_read(r, watch_threads, &w);
	} while (ret == 5);
	assert_int_equal(ret, 0);
	assert_int_equal(w.evs.n, in->n);
	assert_same(&w.evs, in, in->n);
	/* ended with the reading, before close() */
	assert_int_equal(nthreads(), before);
	assert_int_equal(w.most, before + threads - 1);
	ctxmon_reader_close(r);
	free(w.evs.v);
}

/*
 * The helpers are asked for by CTXMON_READ_THREADS (1: none), decode
 * chunks of the usual size, leave larger ones (another writer's) to the
 * caller's thread, and a reading stopped by its callback goes on where it
 * stopped.
 */
static void test_helper_threads(void **state)
{
	const char *saved = getenv("CTXMON_READ_THREADS");
	char *keep = saved ? strdup(saved) : NULL;
	static const struct {
		unsigned events, chunk;
		size_t stop_every;
	} files[] = {
		{ 40000, 2000, 0 },
		{ 40000, 2000, 777 },
		/* past the 64 Ki records a helper holds */
		{ 150000, 70000, 0 },
		{ 150000, 70000, 30001 },
	};

	(void)state;
	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		struct evs in = { 0 };
		struct strtab *strs;
		struct memrec m;

		strs = small_file(&m, &in, files[f].events, files[f].chunk);
		for (int threads = 1; threads <= 3; threads++)
			read_with_threads(&m, &in, threads,
					  files[f].stop_every);
		memrec_free(&m);
		free(in.v);
		strtab__free(strs);
	}
	if (keep)
		setenv("CTXMON_READ_THREADS", keep, 1);
	else
		unsetenv("CTXMON_READ_THREADS");
	free(keep);
}

/* What a reading saw: each event's time and tid 42's name at it (an
 * index into rename_comms, -1: none), and the task declarations. */
struct batch_seen {
	struct ctxmon_reader *r;
	int *comm_at;
	uint64_t *ts;
	size_t n, cap, ntasks, runs, stop_every, next_stop;
};

static const char *const rename_comms[] = { "alpha", "beta", "gamma" };

static void seen_push(struct batch_seen *b, const struct ctxmon_event *ev)
{
	const char *c = ctxmon_reader_comm(b->r, 42);
	int k = -1;

	for (size_t i = 0; c && i < ARRAY_SIZE(rename_comms); i++)
		if (!strcmp(c, rename_comms[i]))
			k = (int)i;
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 1024;
		b->comm_at = realloc(b->comm_at, b->cap * sizeof(*b->comm_at));
		b->ts = realloc(b->ts, b->cap * sizeof(*b->ts));
		assert_non_null(b->comm_at);
		assert_non_null(b->ts);
	}
	b->comm_at[b->n] = k;
	b->ts[b->n++] = ev->ts;
}

static int seen_one(const struct ctxmon_event *ev, void *ctx)
{
	seen_push(ctx, ev);
	return 0;
}

static int seen_run(const struct ctxmon_event *evs, size_t n, void *ctx)
{
	struct batch_seen *b = ctx;

	assert_true(n > 0);
	b->runs++;
	for (size_t i = 0; i < n; i++)
		seen_push(b, &evs[i]);
	if (b->stop_every && b->n >= b->next_stop) {
		b->next_stop = b->n + b->stop_every;
		return 6;
	}
	return 0;
}

static int seen_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	(void)tid;
	(void)tgid;
	(void)comm;
	((struct batch_seen *)ctx)->ntasks++;
	return 0;
}

/* Read @m with @threads threads, in runs (stopped every @stop_every
 * events or so, going on with read() every other time when @mixed). */
static void read_runs(const struct memrec *m, int threads, size_t stop_every,
		      bool mixed, struct batch_seen *b)
{
	char v[16];
	int ret, k = 0;

	snprintf(v, sizeof(v), "%d", threads);
	setenv("CTXMON_READ_THREADS", v, 1);
	b->r = ctxmon_reader_open_mem(m->p, m->len);
	assert_non_null(b->r);
	ctxmon_reader_set_task_fn(b->r, seen_task, b);
	b->stop_every = stop_every;
	b->next_stop = stop_every;
	do
		ret = mixed && k++ % 2 ?
			      ctxmon_reader_read(b->r, seen_one, b) :
			      ctxmon_reader_read_batch(b->r, seen_run, b);
	while (ret == 6);
	assert_int_equal(ret, 0);
	ctxmon_reader_close(b->r);
}

/*
 * ctxmon_reader_read_batch() hands over the records read() does, in
 * runs: the same events in the same order, the same task declarations,
 * with one thread or helpers, stopped and resumed (by either call); and
 * at each event of a run, a task's name (ctxmon_reader_comm()) is the
 * one read() shows at that event, while the task is renamed every few
 * events.
 */
static void test_read_batch(void **state)
{
	const char *saved = getenv("CTXMON_READ_THREADS");
	char *keep = saved ? strdup(saved) : NULL;
	struct batch_seen want = { 0 };
	struct ctxmon_record *w;
	struct memrec m;

	(void)state;
	w = memrec_open(&m, 300);
	for (int i = 0, name = 0; i < 5000; i++) {
		struct ctxmon_event ev = { .ts = 1000 + (uint64_t)i * 10,
					   .type = CTXMON_EV_SWITCH,
					   .tid = 42,
					   .tgid = 42 };

		if (i % 7 == 3)
			name = (name + 1) % (int)ARRAY_SIZE(rename_comms);
		if (i % 500 == 250)
			assert_int_equal(ctxmon_record_add_task(
						 w, 100 + i, 100 + i, "decl"),
					 0);
		ev.sw.prev_tid = ev.sw.prev_tgid = 42;
		ev.sw.prev_comm = rename_comms[name];
		ev.sw.next_comm = "swapper/0";
		assert_int_equal(ctxmon_record_write(w, &ev), 0);
	}
	assert_int_equal(ctxmon_record_close(w), 0);
	memrec_load(&m);

	setenv("CTXMON_READ_THREADS", "1", 1);
	want.r = ctxmon_reader_open_mem(m.p, m.len);
	assert_non_null(want.r);
	ctxmon_reader_set_task_fn(want.r, seen_task, &want);
	assert_int_equal(ctxmon_reader_read(want.r, seen_one, &want), 0);
	ctxmon_reader_close(want.r);
	assert_int_equal(want.n, 5000);
	assert_int_equal(want.ntasks, 10);
	for (int threads = 1; threads <= 3; threads += 2) {
		for (int how = 0; how < 3; how++) {
			struct batch_seen got = { 0 };

			read_runs(&m, threads, how ? 333 : 0, how == 2, &got);
			assert_int_equal(got.n, want.n);
			assert_int_equal(got.ntasks, want.ntasks);
			/* runs, not one event at a time */
			assert_true(got.runs < got.n / 2);
			for (size_t i = 0; i < want.n; i++) {
				if (got.ts[i] != want.ts[i] ||
				    got.comm_at[i] != want.comm_at[i])
					fail_msg("threads %d, way %d: event %zu: "
						 "ts %" PRIu64 "/%" PRIu64
						 ", name %d/%d",
						 threads, how, i, got.ts[i],
						 want.ts[i], got.comm_at[i],
						 want.comm_at[i]);
			}
			free(got.comm_at);
			free(got.ts);
		}
	}
	free(want.comm_at);
	free(want.ts);
	memrec_free(&m);
	if (keep)
		setenv("CTXMON_READ_THREADS", keep, 1);
	else
		unsetenv("CTXMON_READ_THREADS");
	free(keep);
}

static int one_thread(void **state)
{
	(void)state;
	return setenv("CTXMON_READ_THREADS", "1", 1);
}

static int helpers(void **state)
{
	(void)state;
	return setenv("CTXMON_READ_THREADS", "3", 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_synthetic),
		cmocka_unit_test(test_roundtrip_edges),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_tasks),
		cmocka_unit_test(test_stop_and_resume),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_zero_tail),
		cmocka_unit_test(test_bitflips),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_mode_0600),
		cmocka_unit_test(test_pipe),
		cmocka_unit_test(test_pipe_live),
		cmocka_unit_test(test_helper_threads),
		cmocka_unit_test(test_read_batch),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_verdict_lost),
	};

	/* Every test on one thread, then with two helper threads decoding
	 * ahead, whatever the CPUs of the machine running them. */
	return cmocka_run_group_tests_name("read on one thread", tests,
					   one_thread, NULL) |
	       cmocka_run_group_tests_name("read with helper threads", tests,
					   helpers, NULL);
}
