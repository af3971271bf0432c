/*
 * hist_events.c - the events a hist trigger can attach to, and their
 * fields by name: ctxmon's decoded events under the names and types of
 * their tracefs format files, plus the synthetic events a set defines.
 *
 * The field list of each built-in event is the part of the kernel's format
 * that ctxmon's event carries (struct ctxmon_event); a field the kernel has
 * but ctxmon does not decode (sched_process_exec's filename, sys_enter's
 * args, irq_handler_entry's name) is absent, so a trigger naming it gets
 * "Couldn't find field".  Comms the event does not carry (a migrated task,
 * a fork's parent) come from the tid -> comm map the stream keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hist_int.h"

struct bfield {
	const char *name, *type;
	uint8_t kind;
};

struct bevent {
	const char *system, *name;
	int type;
	struct bfield f[8];
};

static const struct bevent builtin[] = {
	{ "sched", "sched_switch", CTXMON_EV_SWITCH,
	  { { "prev_comm", "char[16]", HF_STR }, { "prev_pid", "pid_t", HF_S },
	    { "prev_prio", "int", HF_S }, { "prev_state", "long", HF_S },
	    { "next_comm", "char[16]", HF_STR }, { "next_pid", "pid_t", HF_S },
	    { "next_prio", "int", HF_S } } },
	{ "sched", "sched_waking", CTXMON_EV_WAKING,
	  { { "comm", "char[16]", HF_STR }, { "pid", "pid_t", HF_S },
	    { "prio", "int", HF_S }, { "target_cpu", "int", HF_S } } },
	{ "sched", "sched_wakeup", CTXMON_EV_WAKEUP,
	  { { "comm", "char[16]", HF_STR }, { "pid", "pid_t", HF_S },
	    { "prio", "int", HF_S }, { "target_cpu", "int", HF_S } } },
	{ "sched", "sched_wakeup_new", CTXMON_EV_WAKEUP_NEW,
	  { { "comm", "char[16]", HF_STR }, { "pid", "pid_t", HF_S },
	    { "prio", "int", HF_S }, { "target_cpu", "int", HF_S } } },
	{ "sched", "sched_migrate_task", CTXMON_EV_MIGRATE,
	  { { "comm", "char[16]", HF_STR }, { "pid", "pid_t", HF_S },
	    { "prio", "int", HF_S }, { "orig_cpu", "int", HF_S },
	    { "dest_cpu", "int", HF_S } } },
	{ "sched", "sched_process_fork", CTXMON_EV_FORK,
	  { { "parent_comm", "char[16]", HF_STR },
	    { "parent_pid", "pid_t", HF_S },
	    { "child_comm", "char[16]", HF_STR },
	    { "child_pid", "pid_t", HF_S } } },
	{ "sched", "sched_process_exec", CTXMON_EV_EXEC,
	  { { "pid", "pid_t", HF_S }, { "old_pid", "pid_t", HF_S } } },
	{ "sched", "sched_process_exit", CTXMON_EV_EXIT,
	  { { "comm", "char[16]", HF_STR }, { "pid", "pid_t", HF_S },
	    { "prio", "int", HF_S } } },
	{ "irq", "irq_handler_entry", CTXMON_EV_IRQ_ENTRY,
	  { { "irq", "int", HF_S } } },
	{ "irq", "irq_handler_exit", CTXMON_EV_IRQ_EXIT,
	  { { "irq", "int", HF_S }, { "ret", "int", HF_S } } },
	{ "irq", "softirq_entry", CTXMON_EV_SOFTIRQ_ENTRY,
	  { { "vec", "unsigned int", HF_U } } },
	{ "irq", "softirq_exit", CTXMON_EV_SOFTIRQ_EXIT,
	  { { "vec", "unsigned int", HF_U } } },
	{ "raw_syscalls", "sys_enter", CTXMON_EV_SYS_ENTER,
	  { { "id", "long", HF_S } } },
	{ "raw_syscalls", "sys_exit", CTXMON_EV_SYS_EXIT,
	  { { "id", "long", HF_S }, { "ret", "long", HF_S } } },
};

void hist__evdef_free(struct hist_evdef *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nfields; i++) {
		free(d->fields[i].name);
		free(d->fields[i].type);
	}
	free(d->fields);
	free(d->trigs);
	free(d->system);
	free(d->name);
	free(d);
}

int hist__builtin_events(struct ctxmon_hist *h)
{
	size_t n = sizeof(builtin) / sizeof(builtin[0]);

	h->evs = calloc(n, sizeof(*h->evs));
	if (!h->evs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct bevent *b = &builtin[i];
		struct hist_evdef *d = calloc(1, sizeof(*d));
		int nf = 0;

		if (!d)
			return -ENOMEM;
		h->evs[h->nevs++] = d;
		while (nf < 8 && b->f[nf].name)
			nf++;
		d->system = strdup(b->system);
		d->name = strdup(b->name);
		d->fields = calloc(nf, sizeof(*d->fields));
		if (!d->system || !d->name || !d->fields)
			return -ENOMEM;
		d->type = b->type;
		d->defined = true;
		for (int k = 0; k < nf; k++) {
			d->fields[k].name = strdup(b->f[k].name);
			d->fields[k].type = strdup(b->f[k].type);
			if (!d->fields[k].name || !d->fields[k].type)
				return -ENOMEM;
			d->fields[k].kind = b->f[k].kind;
			d->fields[k].id = (uint8_t)k;
			d->nfields++;
		}
	}
	return 0;
}

/* "sched:sched_switch", "sched/sched_switch", "sched.sched_switch" or
 * "sched_switch". */
struct hist_evdef *hist__find_event(struct ctxmon_hist *h, const char *spec)
{
	const char *sep = strpbrk(spec, ":/.");
	size_t sl = sep ? (size_t)(sep - spec) : 0;
	const char *name = sep ? sep + 1 : spec;

	for (int i = 0; i < h->nevs; i++) {
		struct hist_evdef *d = h->evs[i];

		if (!d->defined || strcmp(d->name, name))
			continue;
		if (sep && (strlen(d->system) != sl ||
			    strncmp(d->system, spec, sl)))
			continue;
		return d;
	}
	return NULL;
}

int hist__field_index(const struct hist_evdef *d, const char *name)
{
	for (int i = 0; i < d->nfields; i++)
		if (!strcmp(d->fields[i].name, name))
			return i;
	return -1;
}

const struct hist_evdef *hist__event_def(const struct ctxmon_hist *h,
					 unsigned type)
{
	for (int i = 0; i < h->nevs; i++)
		if (h->evs[i]->type == (int)type)
			return h->evs[i];
	return NULL;
}

static uint64_t sx(int64_t v)
{
	return (uint64_t)v;
}

static uint64_t str_or_empty(const char *s)
{
	return (uint64_t)(uintptr_t)(s ? s : "");
}

/* The kernel's prev_state value: the TASK_REPORT bit (S 1, D 2, T 4, t 8,
 * X 16, Z 32, P 64, I 128) and TASK_REPORT_MAX (256) for a preemption.
 * ctxmon's state bits are laid out the same way. */
static uint64_t kstate(const struct ctxmon_event *ev)
{
	if (ev->sw.preempt)
		return 256;
	return ev->sw.prev_state & 0xffu;
}

uint64_t hist__field_value(const struct hist_rec *r, int idx)
{
	const struct ctxmon_event *ev = r->ev;
	const struct hist_evdef *d = r->def;

	if (d->synthetic || !ev)
		return r->svals ? r->svals[idx] : 0;
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		switch (idx) {
		case 0: return str_or_empty(ev->sw.prev_comm);
		case 1: return sx(ev->sw.prev_tid);
		case 2: return sx(ev->sw.prev_prio);
		case 3: return kstate(ev);
		case 4: return str_or_empty(ev->sw.next_comm);
		case 5: return sx(ev->sw.next_tid);
		case 6: return sx(ev->sw.next_prio);
		}
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		switch (idx) {
		case 0: return str_or_empty(ev->wake.comm);
		case 1: return sx(ev->wake.tid);
		case 2: return sx(ev->wake.prio);
		case 3: return sx(ev->wake.target_cpu);
		}
		break;
	case CTXMON_EV_MIGRATE:
		switch (idx) {
		case 0: return 0; /* filled by the caller from the comm map */
		case 1: return sx(ev->migrate.tid);
		case 2: return sx(ev->migrate.prio);
		case 3: return sx(ev->migrate.orig_cpu);
		case 4: return sx(ev->migrate.dest_cpu);
		}
		break;
	case CTXMON_EV_FORK:
		switch (idx) {
		case 0: return 0; /* comm map */
		case 1: return sx(ev->fork.parent_tid);
		case 2: return str_or_empty(ev->fork.child_comm);
		case 3: return sx(ev->fork.child_tid);
		}
		break;
	case CTXMON_EV_EXEC:
		return sx(idx == 0 ? ev->exec.tid : ev->exec.old_tid);
	case CTXMON_EV_EXIT:
		switch (idx) {
		case 0: return str_or_empty(ev->exit.comm);
		case 1: return sx(ev->exit.tid);
		case 2: return sx(ev->exit.prio);
		}
		break;
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
		return sx(idx == 0 ? ev->irq.vec : ev->irq.ret);
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		return (uint64_t)(uint32_t)ev->irq.vec;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		return sx(idx == 0 ? ev->sys.id : ev->sys.ret);
	}
	return 0;
}

/* ---- tid -> comm ------------------------------------------------------- */

static size_t comm_slot(uint32_t tid, size_t cap)
{
	return (tid * 2654435761u) & (cap - 1);
}

const char *hist__comm(const struct ctxmon_hist *h, int32_t tid)
{
	if (!h->capcomms)
		return NULL;
	for (size_t i = comm_slot((uint32_t)tid, h->capcomms);;
	     i = (i + 1) & (h->capcomms - 1)) {
		if (!h->comms[i].comm)
			return NULL;
		if (h->comms[i].tid == tid)
			return h->comms[i].comm;
	}
}

static int comm_grow(struct ctxmon_hist *h)
{
	size_t cap = h->capcomms ? h->capcomms * 2 : 1024;
	struct hist_comm *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < h->capcomms; i++) {
		size_t k;

		if (!h->comms[i].comm)
			continue;
		k = comm_slot((uint32_t)h->comms[i].tid, cap);
		while (n[k].comm)
			k = (k + 1) & (cap - 1);
		n[k] = h->comms[i];
	}
	free(h->comms);
	h->comms = n;
	h->capcomms = cap;
	return 0;
}

int hist__set_comm(struct ctxmon_hist *h, int32_t tid, const char *comm)
{
	const char *c;
	size_t i;

	if (!comm || tid < 0)
		return 0;
	if ((h->ncomms + 1) * 2 > h->capcomms && comm_grow(h) < 0)
		return -ENOMEM;
	c = strtab__intern(h->strs, comm, strnlen(comm, HIST_COMM_LEN - 1));
	if (!c)
		return -ENOMEM;
	for (i = comm_slot((uint32_t)tid, h->capcomms); h->comms[i].comm;
	     i = (i + 1) & (h->capcomms - 1)) {
		if (h->comms[i].tid == tid) {
			h->comms[i].comm = c;
			return 0;
		}
	}
	h->comms[i].tid = tid;
	h->comms[i].comm = c;
	h->ncomms++;
	return 0;
}
