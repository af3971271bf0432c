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

/* A fact an event tells of a task: its tgid (-1: not told), its comm
 * (NULL: not told). */
struct fact {
	int32_t tid, tgid;
	const char *comm;
};

/* The facts @news says event @ev tells, into @f (3 at most); how many. */
static size_t news_facts(const struct ctxmon_event *ev, unsigned news,
			 struct fact *f)
{
	size_t n = 0;
	int32_t tgid = -1;

	if (news & TASK_NEW_TGID)
		f[n++] = (struct fact){ ev->tid, ev->tgid, NULL };
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		f[n++] = (struct fact){
			ev->sw.prev_tid,
			news & TASK_NEW_A_TGID ? ev->sw.prev_tgid : -1,
			news & TASK_NEW_A_COMM ? ev->sw.prev_comm : NULL
		};
		f[n++] = (struct fact){
			ev->sw.next_tid,
			news & TASK_NEW_B_TGID ? ev->sw.next_tgid : -1,
			news & TASK_NEW_B_COMM ? ev->sw.next_comm : NULL
		};
		return n;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		f[n] = (struct fact){ ev->wake.tid, -1, ev->wake.comm };
		break;
	case CTXMON_EV_FORK:
		tgid = ev->fork.child_tgid;
		f[n] = (struct fact){ ev->fork.child_tid, -1,
				      ev->fork.child_comm };
		break;
	case CTXMON_EV_EXEC:
		f[n] = (struct fact){ ev->exec.tid, -1, ev->exec.comm };
		break;
	case CTXMON_EV_EXIT:
		f[n] = (struct fact){ ev->exit.tid, -1, ev->exit.comm };
		break;
	default:
		return n;
	}
	f[n].tgid = news & TASK_NEW_A_TGID ? tgid : -1;
	if (!(news & TASK_NEW_A_COMM))
		f[n].comm = NULL;
	return n + 1;
}

int tasktab__apply_new(struct tasktab *t, const struct ctxmon_event *ev,
		       unsigned news)
{
	struct fact f[3];
	size_t n;

	if (!news)
		return 0;
	/* At most three tids per event. */
	if (!room(t, 3))
		return -ENOMEM;
	n = news_facts(ev, news, f);
	for (size_t i = 0; i < n; i++)
		set_fact(t, f[i].tid, f[i].tgid, f[i].comm);
	return 0;
}

bool tasktab__changes(const struct tasktab *t, const struct ctxmon_event *ev,
		      unsigned news)
{
	struct fact f[3];
	size_t n = news ? news_facts(ev, news, f) : 0;

	for (size_t i = 0; i < n; i++) {
		const struct tslot *s;

		if (!f[i].comm && f[i].tgid == -1)
			continue;
		s = find(t, f[i].tid);
		if (!s || (f[i].comm && s->comm != f[i].comm) ||
		    (f[i].tgid != -1 && s->tgid != f[i].tgid))
			return true;
	}
	return false;
}

int tasktab__apply(struct tasktab *t, const struct ctxmon_event *ev)
{
	return tasktab__apply_new(t, ev, TASK_NEW_ALL);
}
