/*
 * rec_tasks.c - the comm and tgid each tid has shown so far in a stream.
 *
 * Text traces name the current task of every line ("comm-tid"), but events
 * carry only tids there, so the name comes from what the stream said
 * before: task declarations and the comm fields of switches, wakeups,
 * forks, execs and exits.  The reader, the text formatter and the importer
 * apply the same rules through this one table, which is what makes a
 * printed and re-imported trace print identically.
 */
#include <errno.h>
#include <stdlib.h>

#include "file/file.h"

struct tslot {
	int32_t tid;
	int32_t tgid;
	const char *comm;
	bool used;
};

struct tasktab {
	struct tslot *slots;
	size_t cap, count; /* cap is a power of two */
};

static size_t slot_of(int32_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

struct tasktab *tasktab__new(void)
{
	struct tasktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 1024;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void tasktab__free(struct tasktab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static const struct tslot *find(const struct tasktab *t, int32_t tid)
{
	for (size_t i = slot_of(tid, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slots[i].used)
			return NULL;
		if (t->slots[i].tid == tid)
			return &t->slots[i];
	}
}

const char *tasktab__comm(const struct tasktab *t, int32_t tid)
{
	const struct tslot *s = find(t, tid);

	return s ? s->comm : NULL;
}

int32_t tasktab__tgid(const struct tasktab *t, int32_t tid)
{
	const struct tslot *s = find(t, tid);

	return s ? s->tgid : -1;
}

static int grow(struct tasktab *t)
{
	size_t cap = t->cap * 2;
	struct tslot *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].used)
			continue;
		j = slot_of(t->slots[i].tid, cap);
		while (n[j].used)
			j = (j + 1) & (cap - 1);
		n[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = n;
	t->cap = cap;
	return 0;
}

/* Make room for @n more tids, so that slots stay put while they are set. */
static inline bool room(struct tasktab *t, size_t n)
{
	return (t->count + n) * 2 <= t->cap || grow(t) == 0;
}

/* The slot of @tid, added (no comm, tgid -1) when new; needs room(). */
static inline struct tslot *slot(struct tasktab *t, int32_t tid)
{
	size_t i;

	for (i = slot_of(tid, t->cap); t->slots[i].used;
	     i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].tid == tid)
			return &t->slots[i];
	}
	t->slots[i] = (struct tslot){ .tid = tid, .tgid = -1, .used = true };
	t->count++;
	return &t->slots[i];
}

/* tasktab__set() once room() was made. */
static inline void set_fact(struct tasktab *t, int32_t tid, int32_t tgid,
			    const char *comm)
{
	struct tslot *s;

	if (!comm && tgid == -1)
		return;
	s = slot(t, tid);
	if (comm)
		s->comm = comm;
	if (tgid != -1)
		s->tgid = tgid;
}

int tasktab__set(struct tasktab *t, int32_t tid, int32_t tgid, const char *comm)
{
	if (!comm && tgid == -1)
		return 0;
	if (!room(t, 1))
		return -ENOMEM;
	set_fact(t, tid, tgid, comm);
	return 0;
}

int tasktab__apply_new(struct tasktab *t, const struct ctxmon_event *ev,
		       unsigned news)
{
	int32_t tid = -1, tgid = -1;
	const char *comm = NULL;

	if (!news)
		return 0;
	/* At most three tids per event. */
	if (!room(t, 3))
		return -ENOMEM;
	if (news & TASK_NEW_TGID)
		set_fact(t, ev->tid, ev->tgid, NULL);
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		set_fact(t, ev->sw.prev_tid,
			 news & TASK_NEW_A_TGID ? ev->sw.prev_tgid : -1,
			 news & TASK_NEW_A_COMM ? ev->sw.prev_comm : NULL);
		set_fact(t, ev->sw.next_tid,
			 news & TASK_NEW_B_TGID ? ev->sw.next_tgid : -1,
			 news & TASK_NEW_B_COMM ? ev->sw.next_comm : NULL);
		return 0;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		tid = ev->wake.tid;
		comm = ev->wake.comm;
		break;
	case CTXMON_EV_FORK:
		tid = ev->fork.child_tid;
		tgid = ev->fork.child_tgid;
		comm = ev->fork.child_comm;
		break;
	case CTXMON_EV_EXEC:
		tid = ev->exec.tid;
		comm = ev->exec.comm;
		break;
	case CTXMON_EV_EXIT:
		tid = ev->exit.tid;
		comm = ev->exit.comm;
		break;
	default:
		return 0;
	}
	set_fact(t, tid, news & TASK_NEW_A_TGID ? tgid : -1,
		 news & TASK_NEW_A_COMM ? comm : NULL);
	return 0;
}

int tasktab__apply(struct tasktab *t, const struct ctxmon_event *ev)
{
	return tasktab__apply_new(t, ev, TASK_NEW_ALL);
}
