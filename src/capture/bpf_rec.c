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
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include <bpf/bpf.h>

#include "internal.h"
#include "ctxsw.h"
#include "csw.h"
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

/* ---- switch counters by tid ------------------------------------------- */

/* Linear probing from a mixed hash (tids come in runs: their low bits
 * alone would fill neighbouring slots); deletion shifts the slots after
 * back, so no tombstones pile up in a forking system. */
static size_t csw_home(const struct bpf_csw *c, int32_t tid)
{
	uint32_t h = (uint32_t)tid;

	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return (size_t)h & (c->cap - 1);
}

static struct bpf_csw_slot *csw_find(struct bpf_csw *c, int32_t tid)
{
	if (!c->cap)
		return NULL;
	for (size_t i = csw_home(c, tid);; i = (i + 1) & (c->cap - 1)) {
		if (c->slot[i].tid == tid)
			return &c->slot[i];
		if (!c->slot[i].tid)
			return NULL;
	}
}

static int csw_grow(struct bpf_csw *c)
{
	struct bpf_csw old = *c;

	c->cap = old.cap ? old.cap * 2 : 1024;
	c->slot = calloc(c->cap, sizeof(*c->slot));
	if (!c->slot) {
		*c = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++) {
		size_t j = csw_home(c, old.slot[i].tid);

		if (!old.slot[i].tid)
			continue;
		while (c->slot[j].tid)
			j = (j + 1) & (c->cap - 1);
		c->slot[j] = old.slot[i];
	}
	free(old.slot);
	return 0;
}

static int csw_set(struct bpf_csw *c, int32_t tid, uint64_t nv, uint64_t niv)
{
	struct bpf_csw_slot *s = csw_find(c, tid);
	size_t i;

	if (!s) {
		if (2 * (c->n + 1) > c->cap && csw_grow(c) < 0)
			return -ENOMEM;
		for (i = csw_home(c, tid); c->slot[i].tid;
		     i = (i + 1) & (c->cap - 1))
			;
		s = &c->slot[i];
		s->tid = tid;
		c->n++;
	}
	s->nv = nv;
	s->niv = niv;
	return 0;
}

static void csw_del(struct bpf_csw *c, int32_t tid)
{
	struct bpf_csw_slot *s = csw_find(c, tid);
	size_t hole, i, mask = c->cap - 1;

	if (!s)
		return;
	hole = (size_t)(s - c->slot);
	c->slot[hole].tid = 0;
	c->n--;
	/* move back each slot after the hole whose home is not between
	 * the hole and it, so that every probe still finds it */
	for (i = (hole + 1) & mask; c->slot[i].tid; i = (i + 1) & mask) {
		size_t home = csw_home(c, c->slot[i].tid);

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			c->slot[hole] = c->slot[i];
			c->slot[i].tid = 0;
			hole = i;
		}
	}
}

void bpf_csw__clear(struct bpf_csw *c)
{
	free(c->slot);
	memset(c, 0, sizeof(*c));
}

/*
 * The kind of switch @r, from prev's counters against those remembered
 * (ctxsw_stream.bpf.c), and the counters remembered for the switches to
 * come, prev's even when the kind had to be guessed.  Sets
 * CTXMON_EVF_KIND_EXACT in @flags when the kernel's counters told.
 */
static int csw_classify(struct bpf_csw *c, const struct ctxsw_switch *r,
			uint8_t *kind, uint8_t *flags)
{
	int32_t prev = r->h.tid;
	struct bpf_csw_slot *old;
	int moved, ret = 0;

	if (r->kind == CTXSW_KIND_EXIT) {
		*kind = CTXSW_KIND_EXIT;
		csw_del(c, prev);
	} else {
		old = prev ? csw_find(c, prev) : NULL;
		moved = old ? csw_moved(1, old->nv, old->niv, r->prev_nvcsw,
					r->prev_nivcsw) : 0;
		if (moved) {
			*kind = moved > 0 ? CTXSW_KIND_VOLUNTARY :
					    CTXSW_KIND_INVOLUNTARY;
			*flags |= CTXSW_F_KIND_EXACT;
		} else {
			/* first sight: the tracepoint's own rule */
			*kind = r->preempt || !r->prev_state ?
					CTXSW_KIND_INVOLUNTARY :
					CTXSW_KIND_VOLUNTARY;
			if (prev)
				c->inexact++;
		}
		if (prev)
			ret = csw_set(c, prev, r->prev_nvcsw, r->prev_nivcsw);
	}
	if (r->next_tid > 0 && ret == 0)
		ret = csw_set(c, r->next_tid, r->next_nvcsw, r->next_nivcsw);
	return ret;
}

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
		ev->sw.prev_comm = comm(strs, r->prev_comm);
		ev->sw.next_comm = comm(strs, r->next_comm);
		ev->sw.prev_run_ns = r->prev_run;
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
		ev->fork.clone_parent =
			(r->flags & CTXSW_FORK_CLONE_PARENT) != 0;
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

int bpf_rec__commit(struct stream *st, struct strtab *strs,
		    struct bpf_csw *csw, const void *rec, size_t len)
{
	const struct ctxsw_hdr *h = rec;
	struct ctxmon_event *slot;
	uint8_t kind = 0, flags = h->flags;

	if (!rec_ok(rec, len, stream__ncpus(st)))
		return -EINVAL;
	if (h->type == CTXSW_SWITCH &&
	    csw_classify(csw, rec, &kind, &flags) < 0)
		return -ENOMEM;
	/* the gap ends at this record: it goes in just before it */
	if (h->lost)
		stream__lost(st, h->cpu, h->lost, h->ts);
	/* decoded in place: the slot is the stream's own memory */
	slot = stream__slot(st, h->cpu);
	if (!slot)
		return -ENOMEM;
	rec_decode(strs, rec, slot);
	if (h->type == CTXSW_SWITCH) {
		slot->sw.kind = kind;
		slot->flags = flags;
	}
	stream__commit(st, h->cpu);
	return 0;
}
