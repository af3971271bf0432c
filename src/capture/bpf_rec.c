/*
 * bpf_rec.c - the streaming bpf backend's ring records (ctxsw.h) as
 * ctxmon events, committed to the stream on their CPU.  The ring is shared
 * by all CPUs and is only nearly in time order on one CPU: a program
 * interrupted between taking its time and reserving its record lands after
 * the interrupting ones (rec_reserve() in ctxsw_stream.bpf.c).  The stream
 * sorts each CPU's events as they are committed (stream.c), so records go
 * in as they come.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <linux/types.h>
#include <bpf/bpf.h>

#include "internal.h"
#include "ctxsw.h"
#include "bpf_backend.h"

static const char *comm(struct strtab *strs, const char *c)
{
	return strtab__intern(strs, c, CTXSW_COMM_LEN);
}

/* Bytes of each record type (0: not a type of ours). */
static const size_t rec_size[] = {
	[CTXSW_SWITCH] = sizeof(struct ctxsw_switch),
	[CTXSW_WAKING] = sizeof(struct ctxsw_wake),
	[CTXSW_WAKEUP] = sizeof(struct ctxsw_wake),
	[CTXSW_WAKEUP_NEW] = sizeof(struct ctxsw_wake),
	[CTXSW_MIGRATE] = sizeof(struct ctxsw_migrate),
	[CTXSW_FORK] = sizeof(struct ctxsw_fork),
	[CTXSW_EXEC] = sizeof(struct ctxsw_exec),
	[CTXSW_EXIT] = sizeof(struct ctxsw_exit),
	[CTXSW_IRQ_ENTRY] = sizeof(struct ctxsw_irq),
	[CTXSW_IRQ_EXIT] = sizeof(struct ctxsw_irq),
	[CTXSW_SOFTIRQ_ENTRY] = sizeof(struct ctxsw_irq),
	[CTXSW_SOFTIRQ_EXIT] = sizeof(struct ctxsw_irq),
	[CTXSW_SYS_ENTER] = sizeof(struct ctxsw_sys),
	[CTXSW_SYS_EXIT] = sizeof(struct ctxsw_sys),
	[CTXSW_ORPHAN] = sizeof(struct ctxsw_orphan),
};

/* Whether @data is one of our records, of a CPU the stream has: cannot
 * fail with our own programs; the cpu field of such a record is not to be
 * trusted either. */
static bool rec_ok(const void *data, size_t len, int ncpus)
{
	const struct ctxsw_hdr *h = data;

	return len >= sizeof(*h) && h->type < ARRAY_SIZE(rec_size) &&
	       rec_size[h->type] && len >= rec_size[h->type] &&
	       h->cpu < ncpus;
}

/* Decode a record rec_ok() accepted into @ev. */
static void rec_decode(struct strtab *strs, const void *data,
		       struct ctxmon_event *ev)
{
	const struct ctxsw_hdr *h = data;

	memset(ev, 0, sizeof(*ev));
	ev->ts = h->ts;
	ev->type = h->type;
	ev->flags = h->flags;
	ev->cpu = h->cpu;
	ev->tid = h->tid;
	ev->tgid = h->tgid;

	switch (h->type) {
	case CTXSW_SWITCH: {
		const struct ctxsw_switch *r = data;

		ev->sw.prev_tid = h->tid;
		ev->sw.prev_tgid = h->tgid;
		ev->sw.prev_prio = r->prev_prio;
		ev->sw.prev_state = r->prev_state;
		ev->sw.next_tid = r->next_tid;
		ev->sw.next_tgid = r->next_tgid;
		ev->sw.next_prio = r->next_prio;
		ev->sw.preempt = r->preempt;
		ev->sw.kind = r->kind;
		ev->sw.prev_comm = comm(strs, r->prev_comm);
		ev->sw.next_comm = comm(strs, r->next_comm);
		break;
	}
	case CTXSW_WAKING:
	case CTXSW_WAKEUP:
	case CTXSW_WAKEUP_NEW: {
		const struct ctxsw_wake *r = data;

		ev->wake.tid = r->tid;
		ev->wake.prio = r->prio;
		ev->wake.target_cpu = r->target_cpu;
		ev->wake.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_MIGRATE: {
		const struct ctxsw_migrate *r = data;

		ev->migrate.tid = r->tid;
		ev->migrate.prio = r->prio;
		ev->migrate.orig_cpu = r->orig_cpu;
		ev->migrate.dest_cpu = r->dest_cpu;
		break;
	}
	case CTXSW_FORK: {
		const struct ctxsw_fork *r = data;

		ev->fork.parent_tid = r->parent_tid;
		ev->fork.child_tid = r->child_tid;
		ev->fork.child_tgid = r->child_tgid;
		ev->fork.child_comm = comm(strs, r->child_comm);
		break;
	}
	case CTXSW_EXEC: {
		const struct ctxsw_exec *r = data;

		ev->exec.tid = r->tid;
		ev->exec.old_tid = r->old_tid;
		ev->exec.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_EXIT: {
		const struct ctxsw_exit *r = data;

		ev->exit.tid = r->tid;
		ev->exit.prio = r->prio;
		ev->exit.group_dead = r->group_dead;
		ev->exit.comm = comm(strs, r->comm);
		break;
	}
	case CTXSW_ORPHAN: {
		const struct ctxsw_orphan *r = data;

		ev->orphan.tid = r->tid;
		ev->orphan.parent = r->parent;
		ev->orphan.why = r->why;
		break;
	}
	case CTXSW_SYS_ENTER:
	case CTXSW_SYS_EXIT: {
		const struct ctxsw_sys *r = data;

		ev->sys.id = r->id;
		ev->sys.ret = r->ret;
		break;
	}
	default: {
		const struct ctxsw_irq *r = data;

		ev->irq.vec = r->vec;
		ev->irq.ret = r->ret;
		break;
	}
	}
}

int bpf_rec__commit(struct stream *st, struct strtab *strs, const void *rec,
		    size_t len)
{
	const struct ctxsw_hdr *h = rec;
	struct ctxmon_event *slot;

	if (!rec_ok(rec, len, stream__ncpus(st)))
		return -EINVAL;
	/* the gap ends at this record: it goes in just before it */
	if (h->lost)
		stream__lost(st, h->cpu, h->lost, h->ts);
	/* decoded in place: the slot is the stream's own memory */
	slot = stream__slot(st, h->cpu);
	if (!slot)
		return -ENOMEM;
	rec_decode(strs, rec, slot);
	stream__commit(st, h->cpu);
	return 0;
}
