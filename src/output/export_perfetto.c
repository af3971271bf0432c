/*
 * export_perfetto.c - a recording as a Perfetto trace: a file of
 * TracePacket messages (perfetto.protos.Trace), written as it is read.
 *
 * What goes in, with the field numbers of Perfetto's published protos
 * (protos/perfetto/trace/...; our own subset for the tests is
 * tests/data/perfetto/ctxmon_perfetto.proto):
 * - a ClockSnapshot (ctxmon's clock is CLOCK_MONOTONIC; the ftrace data
 *   is read as Perfetto's default BOOTTIME, so the snapshot pins the two
 *   together at the recording's start) and a SystemInfo with the
 *   recording's kernel release, which tells trace processor how to read
 *   prev_state bits;
 * - ProcessTree packets: every thread with its process and name, every
 *   process with its parent and name, as the recording declares them and
 *   as forks and execs show them;
 * - per CPU, FtraceEventBundles: sched_switch and sched_waking in the
 *   compact encoding (structure of arrays, delta timestamps, comms
 *   interned per bundle), the other events (wakeup, wakeup_new,
 *   migrate_task, process_fork/exec/exit, irq and softirq, sys_enter and
 *   sys_exit) as FtraceEvents, lost_events set on the bundle after a loss;
 * - ctxmon's own tracks, on a second packet sequence: per thread, a slice
 *   for every interval off CPU ("blocked in read()", "sleeping (S)",
 *   "preempted by X", "runnable"), and a flow from the waker (an instant
 *   "wakes X" on its track) to the wakee's "runnable" slice.
 *
 * The protobuf is written by our own small encoder (pb.c), not protobuf-c:
 * the export only writes, a few dozen fields, as a stream in bounded
 * memory; protobuf-c would need generated code for Perfetto's schema and
 * builds each message as a tree before packing it.  Memory: one bundle
 * per CPU (bundle_events events) and a few bytes per thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/causes.h>

#include "output/export.h"
#include "output/pb.h"

/* TracePacket */
#define TP_FTRACE_EVENTS 1
#define TP_PROCESS_TREE 2
#define TP_CLOCK_SNAPSHOT 6
#define TP_TIMESTAMP 8
#define TP_SEQ_ID 10
#define TP_TRACK_EVENT 11
#define TP_SEQ_FLAGS 13
#define TP_SYSTEM_INFO 45
#define TP_TRACK_DESCRIPTOR 60
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_FTRACE 1 /* our sequence ids */
#define SEQ_TRACKS 2
/* FtraceEventBundle */
#define FB_CPU 1
#define FB_EVENT 2
#define FB_LOST 3
#define FB_COMPACT 4
/* FtraceEventBundle.CompactSched */
#define CS_SWITCH_TS 1
#define CS_SWITCH_PREV_STATE 2
#define CS_SWITCH_NEXT_PID 3
#define CS_SWITCH_NEXT_PRIO 4
#define CS_INTERN 5
#define CS_SWITCH_NEXT_COMM 6
#define CS_WAKING_TS 7
#define CS_WAKING_PID 8
#define CS_WAKING_CPU 9
#define CS_WAKING_PRIO 10
#define CS_WAKING_COMM 11
#define CS_WAKING_FLAGS 12
/* FtraceEvent */
#define FE_TIMESTAMP 1
#define FE_PID 2
#define FE_SCHED_WAKEUP 17
#define FE_SOFTIRQ_ENTRY 24
#define FE_SOFTIRQ_EXIT 25
#define FE_IRQ_ENTRY 36
#define FE_IRQ_EXIT 37
#define FE_SCHED_WAKEUP_NEW 114
#define FE_TASK_NEWTASK 235
#define FE_SCHED_EXEC 237
#define FE_SCHED_EXIT 238
#define FE_SCHED_FORK 239
#define FE_SYS_ENTER 329
#define FE_SYS_EXIT 330
#define FE_SCHED_MIGRATE 491
/* ProcessTree */
#define PT_PROCESSES 1
#define PT_THREADS 2
/* TrackEvent */
#define TE_TYPE 9
#define TE_TRACK_UUID 11
#define TE_NAME 23
#define TE_FLOW_IDS 47
#define TE_TERMINATING_FLOW_IDS 48
#define TE_SLICE_BEGIN 1
#define TE_SLICE_END 2
#define TE_INSTANT 3

#define CLONE_THREAD 0x00010000
#define TRACE_FLAG_HARDIRQ 0x08 /* waking_common_flags, as the kernel's */
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACK_UUID_BASE 0x6374786d00000000ull /* "ctxm" */
#define INTERN_SLOTS 2048
#define INTERN_MAX 1024
#define TREE_MAX 512

struct pf_cpu {
	struct pb sw_ts, sw_state, sw_pid, sw_prio, sw_comm;
	struct pb wk_ts, wk_pid, wk_cpu, wk_prio, wk_comm, wk_flags;
	struct pb events;
	unsigned n;
	uint64_t sw_last, wk_last;
	bool has_sw, has_wk, lost;
	const char *strs[INTERN_MAX];
	unsigned nstrs;
	uint16_t slot[INTERN_SLOTS]; /* index + 1 into strs */
};

struct pf {
	FILE *f;
	struct pb pkt, tree;
	unsigned ntree;
	struct pf_cpu **cpus;
	size_t ncpus;
	unsigned bundle_max;
	bool tracks;
	bool seq2_started;
	bool *described; /* by utid */
	size_t ndescribed;
	const char *arch;
	uint64_t bytes;
};

/* ---- output -------------------------------------------------------- */

static int emit(struct exporter *x, struct pb *pkt)
{
	struct pf *p = x->priv;
	uint8_t head[11];
	size_t n = 0, len = pkt->buf.len;
	int ret = 0;

	if (pkt->buf.oom)
		return -ENOMEM;
	/* Trace.packet (field 1, length-delimited), then the length: no
	 * allocation per packet */
	head[n++] = (1 << 3) | PB_LEN;
	do {
		head[n++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
		len >>= 7;
	} while (len);
	if (fwrite(head, 1, n, p->f) != n ||
	    fwrite(pkt->buf.p, 1, pkt->buf.len, p->f) != pkt->buf.len)
		ret = -(errno ? errno : EIO);
	p->bytes += n + pkt->buf.len;
	pb__reset(pkt);
	if (ret)
		export__err(x, ret);
	return ret;
}

static int flush_tree(struct exporter *x, uint64_t ts)
{
	struct pf *p = x->priv;
	size_t m;

	if (!p->ntree)
		return 0;
	pb__u(&p->pkt, TP_TIMESTAMP, ts);
	pb__u(&p->pkt, TP_SEQ_ID, SEQ_FTRACE);
	m = pb__begin(&p->pkt, TP_PROCESS_TREE);
	pb__raw(&p->pkt, p->tree.buf.p, p->tree.buf.len);
	pb__end(&p->pkt, m);
	pb__reset(&p->tree);
	p->ntree = 0;
	return emit(x, &p->pkt);
}

static void tree_thread(struct exporter *x, int32_t tid, int32_t tgid,
			const char *comm)
{
	struct pf *p = x->priv;
	size_t m = pb__begin(&p->tree, PT_THREADS);

	pb__i(&p->tree, 1, tid);
	if (comm)
		pb__str(&p->tree, 2, comm);
	if (tgid > 0)
		pb__i(&p->tree, 3, tgid);
	pb__end(&p->tree, m);
	p->ntree++;
}

static void tree_process(struct exporter *x, int32_t pid, int32_t ppid,
			 const char *comm)
{
	struct pf *p = x->priv;
	size_t m = pb__begin(&p->tree, PT_PROCESSES);

	pb__i(&p->tree, 1, pid);
	if (ppid >= 0)
		pb__i(&p->tree, 2, ppid);
	if (comm) {
		pb__str(&p->tree, 3, comm);
		pb__u(&p->tree, 9, 1); /* cmdline_is_comm */
	}
	pb__end(&p->tree, m);
	p->ntree++;
}

static unsigned intern(struct pf_cpu *c, const char *s)
{
	uint32_t h = 2166136261u;
	size_t i;

	if (!s)
		s = "";
	for (const char *q = s; *q; q++)
		h = (h ^ (uint8_t)*q) * 16777619u;
	for (i = h & (INTERN_SLOTS - 1);; i = (i + 1) & (INTERN_SLOTS - 1)) {
		unsigned k = c->slot[i];

		if (!k)
			break;
		if (c->strs[k - 1] == s || !strcmp(c->strs[k - 1], s))
			return k - 1;
	}
	c->strs[c->nstrs] = s;
	c->slot[i] = (uint16_t)(++c->nstrs);
	return c->nstrs - 1;
}

static int flush_cpu(struct exporter *x, size_t cpu)
{
	struct pf *p = x->priv;
	struct pf_cpu *c = p->cpus[cpu];
	struct pb *k = &p->pkt;
	size_t mb, mc;
	bool oom;

	if (!c || !c->n)
		return 0;
	/* names first, so the viewer knows the threads of this bundle */
	if (flush_tree(x, c->has_sw ? c->sw_last : c->wk_last) < 0)
		return x->err;
	pb__u(k, TP_SEQ_ID, SEQ_FTRACE);
	mb = pb__begin(k, TP_FTRACE_EVENTS);
	pb__u(k, FB_CPU, cpu);
	pb__raw(k, c->events.buf.p, c->events.buf.len);
	if (c->lost)
		pb__u(k, FB_LOST, 1);
	if (c->has_sw || c->has_wk) {
		mc = pb__begin(k, FB_COMPACT);
		pb__packed(k, CS_SWITCH_TS, &c->sw_ts);
		pb__packed(k, CS_SWITCH_PREV_STATE, &c->sw_state);
		pb__packed(k, CS_SWITCH_NEXT_PID, &c->sw_pid);
		pb__packed(k, CS_SWITCH_NEXT_PRIO, &c->sw_prio);
		for (unsigned i = 0; i < c->nstrs; i++)
			pb__str(k, CS_INTERN, c->strs[i]);
		pb__packed(k, CS_SWITCH_NEXT_COMM, &c->sw_comm);
		pb__packed(k, CS_WAKING_TS, &c->wk_ts);
		pb__packed(k, CS_WAKING_PID, &c->wk_pid);
		pb__packed(k, CS_WAKING_CPU, &c->wk_cpu);
		pb__packed(k, CS_WAKING_PRIO, &c->wk_prio);
		pb__packed(k, CS_WAKING_COMM, &c->wk_comm);
		pb__packed(k, CS_WAKING_FLAGS, &c->wk_flags);
		pb__end(k, mc);
	}
	pb__end(k, mb);
	oom = c->sw_ts.buf.oom || c->sw_state.buf.oom || c->sw_pid.buf.oom ||
	      c->sw_prio.buf.oom || c->sw_comm.buf.oom || c->wk_ts.buf.oom ||
	      c->wk_pid.buf.oom || c->wk_cpu.buf.oom || c->wk_prio.buf.oom ||
	      c->wk_comm.buf.oom || c->wk_flags.buf.oom || c->events.buf.oom;
	if (oom) {
		export__err(x, -ENOMEM);
		return -ENOMEM;
	}
	struct pb *bufs[] = { &c->sw_ts,   &c->sw_state, &c->sw_pid,
			      &c->sw_prio, &c->sw_comm,	 &c->wk_ts,
			      &c->wk_pid,  &c->wk_cpu,	 &c->wk_prio,
			      &c->wk_comm, &c->wk_flags, &c->events };
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		pb__reset(bufs[i]);
	c->n = 0;
	c->has_sw = c->has_wk = c->lost = false;
	c->nstrs = 0;
	memset(c->slot, 0, sizeof(c->slot));
	return emit(x, k);
}

static struct pf_cpu *cpu_get(struct exporter *x, int32_t cpu)
{
	struct pf *p = x->priv;

	if (cpu < 0 || cpu >= 65536)
		cpu = 0; /* not told: keep the event, on CPU 0 */
	if ((size_t)cpu >= p->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct pf_cpu **v = realloc(p->cpus, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + p->ncpus, 0, (n - p->ncpus) * sizeof(*v));
		p->cpus = v;
		p->ncpus = n;
	}
	if (!p->cpus[cpu])
		p->cpus[cpu] = calloc(1, sizeof(struct pf_cpu));
	return p->cpus[cpu];
}

/* ---- events ---------------------------------------------------------- */

static int64_t raw_prev_state(const struct ctxmon_event *ev)
{
	/* ctxmon's state bits are the kernel's TASK_REPORT bits (4.14+);
	 * preemption is reported as TASK_REPORT_MAX, 0x100. */
	int64_t s = ev->sw.prev_state & 0xff;

	if (ev->sw.preempt)
		s |= 0x100;
	return s;
}

static void ftrace_event(struct pf_cpu *c, const struct ctxmon_event *ev,
			 size_t *inner, unsigned field)
{
	size_t m = pb__begin(&c->events, FB_EVENT);

	pb__u(&c->events, FE_TIMESTAMP, ev->ts);
	if (ev->tid >= 0)
		pb__u(&c->events, FE_PID, (uint32_t)ev->tid);
	*inner = pb__begin(&c->events, field);
	/* the caller writes the event's fields, then ends both */
	inner[1] = m;
}

static void ftrace_end(struct pf_cpu *c, size_t *inner)
{
	pb__end(&c->events, inner[0]);
	pb__end(&c->events, inner[1]);
}

static const char *comm_of(struct exporter *x, int32_t tid)
{
	const struct tl_thread *t = timeline__find(x->tl, tid);

	if (t && t->comm)
		return t->comm;
	return ctxmon_reader_comm(x->r, tid);
}

static int pf_event(struct exporter *x, const struct ctxmon_event *ev)
{
	struct pf *p = x->priv;
	struct pf_cpu *c = cpu_get(x, ev->cpu);
	struct pb *e;
	size_t in[2];
	uint32_t flags = 0;
	const char *comm;

	if (!c)
		return -ENOMEM;
	e = &c->events;
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		pb__varint(&c->sw_ts, c->has_sw ? ev->ts - c->sw_last : ev->ts);
		c->sw_last = ev->ts;
		c->has_sw = true;
		pb__varint(&c->sw_state, (uint64_t)raw_prev_state(ev));
		pb__varint(&c->sw_pid, (uint64_t)(int64_t)ev->sw.next_tid);
		pb__varint(&c->sw_prio, (uint64_t)(int64_t)ev->sw.next_prio);
		pb__varint(&c->sw_comm, intern(c, ev->sw.next_comm));
		x->st->switches++;
		break;
	case CTXMON_EV_WAKING:
		pb__varint(&c->wk_ts, c->has_wk ? ev->ts - c->wk_last : ev->ts);
		c->wk_last = ev->ts;
		c->has_wk = true;
		pb__varint(&c->wk_pid, (uint64_t)(int64_t)ev->wake.tid);
		pb__varint(&c->wk_cpu, (uint64_t)(int64_t)ev->wake.target_cpu);
		pb__varint(&c->wk_prio, (uint64_t)(int64_t)ev->wake.prio);
		pb__varint(&c->wk_comm, intern(c, ev->wake.comm));
		if (ev->flags & CTXMON_EVF_IN_IRQ)
			flags |= TRACE_FLAG_HARDIRQ;
		if (ev->flags & CTXMON_EVF_IN_SOFTIRQ)
			flags |= TRACE_FLAG_SOFTIRQ;
		pb__varint(&c->wk_flags, flags);
		x->st->wakings++;
		break;
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		ftrace_event(c, ev, in,
			     ev->type == CTXMON_EV_WAKEUP ? FE_SCHED_WAKEUP :
							    FE_SCHED_WAKEUP_NEW);
		if (ev->wake.comm)
			pb__str(e, 1, ev->wake.comm);
		pb__i(e, 2, ev->wake.tid);
		pb__i(e, 3, ev->wake.prio);
		pb__i(e, 4, 1);
		pb__i(e, 5, ev->wake.target_cpu);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_MIGRATE:
		ftrace_event(c, ev, in, FE_SCHED_MIGRATE);
		comm = comm_of(x, ev->migrate.tid);
		if (comm)
			pb__str(e, 1, comm);
		pb__i(e, 2, ev->migrate.tid);
		pb__i(e, 3, ev->migrate.prio);
		pb__i(e, 4, ev->migrate.orig_cpu);
		pb__i(e, 5, ev->migrate.dest_cpu);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_FORK: {
		bool thread = ev->fork.child_tgid > 0 &&
			      ev->fork.child_tgid != ev->fork.child_tid;

		ftrace_event(c, ev, in, FE_TASK_NEWTASK);
		pb__i(e, 1, ev->fork.child_tid);
		if (ev->fork.child_comm)
			pb__str(e, 2, ev->fork.child_comm);
		pb__u(e, 3, thread ? CLONE_THREAD : 0);
		ftrace_end(c, in);
		ftrace_event(c, ev, in, FE_SCHED_FORK);
		comm = comm_of(x, ev->fork.parent_tid);
		if (comm)
			pb__str(e, 1, comm);
		pb__i(e, 2, ev->fork.parent_tid);
		if (ev->fork.child_comm)
			pb__str(e, 3, ev->fork.child_comm);
		pb__i(e, 4, ev->fork.child_tid);
		ftrace_end(c, in);
		if (ev->fork.child_tgid > 0)
			tree_thread(x, ev->fork.child_tid, ev->fork.child_tgid,
				    ev->fork.child_comm);
		if (ev->fork.child_tgid == ev->fork.child_tid)
			tree_process(x, ev->fork.child_tid, ev->tgid,
				     ev->fork.child_comm);
		break;
	}
	case CTXMON_EV_EXEC:
		ftrace_event(c, ev, in, FE_SCHED_EXEC);
		if (ev->exec.comm)
			pb__str(e, 1, ev->exec.comm);
		pb__i(e, 2, ev->exec.tid);
		pb__i(e, 3, ev->exec.old_tid);
		ftrace_end(c, in);
		tree_thread(x, ev->exec.tid, ev->exec.tid, ev->exec.comm);
		break;
	case CTXMON_EV_EXIT:
		ftrace_event(c, ev, in, FE_SCHED_EXIT);
		if (ev->exit.comm)
			pb__str(e, 1, ev->exit.comm);
		pb__i(e, 2, ev->exit.tid);
		if (ev->tgid > 0 && ev->tid == ev->exit.tid)
			pb__i(e, 3, ev->tgid);
		pb__i(e, 4, ev->exit.prio);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
		ftrace_event(c, ev, in,
			     ev->type == CTXMON_EV_IRQ_ENTRY ? FE_IRQ_ENTRY :
							       FE_IRQ_EXIT);
		pb__i(e, 1, ev->irq.vec);
		if (ev->type == CTXMON_EV_IRQ_EXIT)
			pb__i(e, 2, ev->irq.ret);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		ftrace_event(c, ev, in,
			     ev->type == CTXMON_EV_SOFTIRQ_ENTRY ?
				     FE_SOFTIRQ_ENTRY :
				     FE_SOFTIRQ_EXIT);
		pb__u(e, 1, (uint32_t)ev->irq.vec);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		ftrace_event(c, ev, in,
			     ev->type == CTXMON_EV_SYS_ENTER ? FE_SYS_ENTER :
							       FE_SYS_EXIT);
		pb__i(e, 1, ev->sys.id);
		if (ev->type == CTXMON_EV_SYS_EXIT)
			pb__i(e, 2, ev->sys.ret);
		ftrace_end(c, in);
		break;
	case CTXMON_EV_LOST:
		c->lost = true;
		return 0;
	default:
		return 0;
	}
	if (p->ntree >= TREE_MAX && flush_tree(x, ev->ts) < 0)
		return x->err;
	if (++c->n >= p->bundle_max || c->nstrs >= INTERN_MAX - 2)
		return flush_cpu(x, ev->cpu < 0 || ev->cpu >= 65536 ?
					    0 :
					    (size_t)ev->cpu);
	return 0;
}

static int pf_task(struct exporter *x, int32_t tid, int32_t tgid,
		   const char *comm)
{
	struct pf *p = x->priv;

	tree_thread(x, tid, tgid, comm);
	if (tid == tgid)
		tree_process(x, tid, -1, comm);
	if (p->ntree >= TREE_MAX)
		return flush_tree(x, 0);
	return 0;
}

/* ---- ctxmon's tracks --------------------------------------------------- */

static uint64_t track_uuid(const struct tl_thread *t)
{
	return TRACK_UUID_BASE + t->utid;
}

/* Start a packet of the track sequence, describing @t's track first. */
static void track_packet(struct exporter *x, const struct tl_thread *t,
			 uint64_t ts)
{
	struct pf *p = x->priv;
	struct pb *k = &p->pkt;
	size_t m, n;

	if (t->utid >= p->ndescribed) {
		size_t cap = p->ndescribed ? p->ndescribed : 1024;
		bool *d;

		while (cap <= t->utid)
			cap *= 2;
		d = realloc(p->described, cap * sizeof(*d));
		if (!d) {
			export__err(x, -ENOMEM);
			return;
		}
		memset(d + p->ndescribed, 0,
		       (cap - p->ndescribed) * sizeof(*d));
		p->described = d;
		p->ndescribed = cap;
	}
	if (!p->described[t->utid]) {
		p->described[t->utid] = true;
		pb__u(k, TP_TIMESTAMP, ts);
		pb__u(k, TP_SEQ_ID, SEQ_TRACKS);
		if (!p->seq2_started) {
			pb__u(k, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
			p->seq2_started = true;
		}
		m = pb__begin(k, TP_TRACK_DESCRIPTOR);
		pb__u(k, 1, track_uuid(t));
		n = pb__begin(k, 4); /* thread */
		pb__i(k, 1, t->tgid > 0 ? t->tgid : t->tid);
		pb__i(k, 2, t->tid);
		if (t->comm)
			pb__str(k, 5, t->comm);
		pb__end(k, n);
		pb__end(k, m);
		emit(x, k);
	}
	pb__u(k, TP_TIMESTAMP, ts);
	pb__u(k, TP_SEQ_ID, SEQ_TRACKS);
}

static void track_event(struct exporter *x, const struct tl_thread *t,
			uint64_t ts, unsigned type, const char *name,
			uint64_t flow, uint64_t end_flow)
{
	struct pf *p = x->priv;
	struct pb *k = &p->pkt;
	size_t m;

	track_packet(x, t, ts);
	m = pb__begin(k, TP_TRACK_EVENT);
	pb__u(k, TE_TYPE, type);
	pb__u(k, TE_TRACK_UUID, track_uuid(t));
	if (name)
		pb__str(k, TE_NAME, name);
	if (flow)
		pb__fixed64(k, TE_FLOW_IDS, flow);
	if (end_flow)
		pb__fixed64(k, TE_TERMINATING_FLOW_IDS, end_flow);
	pb__end(k, m);
	emit(x, k);
}

static void pf_span(void *ctx, const struct tl_thread *t,
		    const struct tl_span *s)
{
	struct exporter *x = ctx;
	struct pf *p = x->priv;
	char name[96];
	const char *sys;

	x->st->spans++;
	if (!p->tracks || !strcmp(s->state, "Running"))
		return;
	if (s->preempted)
		snprintf(name, sizeof(name), "preempted by %s",
			 s->preempted_by ? s->preempted_by : "?");
	else if (!strcmp(s->state, "R"))
		snprintf(name, sizeof(name), "runnable");
	else if (s->block_sys >= 0 &&
		 (sys = ctxmon_syscall_name(p->arch, (long)s->block_sys)))
		snprintf(name, sizeof(name), "blocked in %s()", sys);
	else if (!strcmp(s->state, "S"))
		snprintf(name, sizeof(name), "sleeping (S)");
	else if (!strcmp(s->state, "D"))
		snprintf(name, sizeof(name), "blocked (D)");
	else
		snprintf(name, sizeof(name), "off CPU (%s)", s->state);
	track_event(x, t, s->ts, TE_SLICE_BEGIN, name, 0,
		    s->waker_tid > 0 ? s->flow : 0);
	track_event(x, t, s->ts + s->dur, TE_SLICE_END, NULL, 0, 0);
}

static void pf_wake(void *ctx, const struct tl_thread *waker,
		    const struct tl_thread *t, int32_t cpu, uint64_t ts,
		    uint64_t id)
{
	struct exporter *x = ctx;
	struct pf *p = x->priv;
	char name[64];

	(void)cpu;
	x->st->wakeups++;
	if (!p->tracks || !waker)
		return;
	snprintf(name, sizeof(name), "wakes %s", t->comm ? t->comm : "?");
	track_event(x, waker, ts, TE_INSTANT, name, id, 0);
}

static void pf_sched(void *ctx, int32_t cpu, const struct tl_thread *t,
		     uint64_t ts, uint64_t dur, const char *end_state,
		     int32_t prio)
{
	struct exporter *x = ctx;

	(void)cpu, (void)t, (void)ts, (void)dur, (void)end_state, (void)prio;
	x->st->sched++;
}

/* ---- open / close ------------------------------------------------------ */

static int header(struct exporter *x)
{
	struct pf *p = x->priv;
	struct pb *k = &p->pkt;
	uint64_t t0 = 0;
	const char *rel = ctxmon_reader_meta_str(x->r, CTXMON_META_KERNEL);
	const char *mach = ctxmon_reader_meta_str(x->r, CTXMON_META_ARCH);
	size_t m, n;

	ctxmon_reader_meta_u64(x->r, CTXMON_META_TIME_START, &t0);
	/* CLOCK_MONOTONIC and BOOTTIME differ by the time the machine
	 * was suspended; the recording does not keep that, so they are
	 * taken as equal (docs/export.md). */
	pb__u(k, TP_TIMESTAMP, t0);
	pb__u(k, TP_SEQ_ID, SEQ_FTRACE);
	pb__u(k, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	m = pb__begin(k, TP_CLOCK_SNAPSHOT);
	n = pb__begin(k, 1);
	pb__u(k, 1, 6); /* BOOTTIME */
	pb__u(k, 2, t0);
	pb__end(k, n);
	n = pb__begin(k, 1);
	pb__u(k, 1, 3); /* MONOTONIC */
	pb__u(k, 2, t0);
	pb__end(k, n);
	pb__u(k, 2, 6); /* primary_trace_clock */
	pb__end(k, m);
	if (emit(x, k) < 0)
		return x->err;
	pb__u(k, TP_SEQ_ID, SEQ_FTRACE);
	m = pb__begin(k, TP_SYSTEM_INFO);
	n = pb__begin(k, 1); /* utsname */
	pb__str(k, 1, "Linux");
	if (rel)
		pb__str(k, 3, rel);
	if (mach)
		pb__str(k, 4, mach);
	pb__end(k, n);
	pb__end(k, m);
	return emit(x, k);
}

static int pf_open(struct exporter *x, struct tl_ops *ops)
{
	struct pf *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	x->priv = p;
	p->bundle_max = x->o->bundle_events ? x->o->bundle_events : 4096;
	p->tracks = !x->o->no_tracks;
	p->arch = ctxmon_reader_meta_str(x->r, CTXMON_META_ARCH);
	p->f = ctxmon_outfile_stream(x->out);
	if (!p->f) {
		int err = -errno;

		free(p);
		x->priv = NULL;
		return err;
	}
	*ops = (struct tl_ops){ .span = pf_span, .wake = pf_wake,
				.sched = pf_sched, .ctx = x };
	return header(x);
}

static int pf_close(struct exporter *x, bool ok)
{
	struct pf *p = x->priv;
	int ret = 0;

	if (!p)
		return 0;
	if (ok) {
		size_t n;
		const struct tl_thread *th = timeline__threads(x->tl, &n);

		for (size_t i = 0; i < p->ncpus && !ret; i++)
			ret = flush_cpu(x, i);
		/* every thread seen, with its last name and its process */
		for (size_t i = 0; i < n && !ret; i++) {
			tree_thread(x, th[i].tid, th[i].tgid, th[i].comm);
			if (th[i].tid == th[i].tgid)
				tree_process(x, th[i].tid, th[i].ppid,
					     th[i].comm);
			if (p->ntree >= TREE_MAX)
				ret = flush_tree(x, x->stop_ts);
		}
		if (!ret)
			ret = flush_tree(x, x->stop_ts);
		if (!ret)
			ret = x->err;
		if (!ret && fflush(p->f) == EOF)
			ret = -(errno ? errno : EIO);
	}
	x->st->bytes = p->bytes;
	for (size_t i = 0; i < p->ncpus; i++) {
		struct pf_cpu *c = p->cpus[i];

		if (!c)
			continue;
		struct pb *bufs[] = { &c->sw_ts,   &c->sw_state, &c->sw_pid,
				      &c->sw_prio, &c->sw_comm,	 &c->wk_ts,
				      &c->wk_pid,  &c->wk_cpu,	 &c->wk_prio,
				      &c->wk_comm, &c->wk_flags, &c->events };
		for (size_t j = 0; j < sizeof(bufs) / sizeof(bufs[0]); j++)
			pb__free(bufs[j]);
		free(c);
	}
	free(p->cpus);
	free(p->described);
	pb__free(&p->pkt);
	pb__free(&p->tree);
	free(p);
	x->priv = NULL;
	return ret;
}

const struct export_format export__perfetto = {
	.name = "perfetto",
	.open = pf_open,
	.task = pf_task,
	.event = pf_event,
	.close = pf_close,
};
