/*
 * rec_codec_int.h - what the two files of the event codec share: its
 * state (struct codec) and the helpers both need.  rec_codec.c codes
 * events, in both directions, with its helpers forced inline (the hot
 * path of every offline analysis); rec_codec_tab.c keeps what runs once
 * a chunk or once a new task, CPU or string: the tables' growth, the
 * reset, and the parsing of a chunk's columns.  Private to src/file.
 */
#ifndef CTXMON_FILE_REC_CODEC_INT_H
#define CTXMON_FILE_REC_CODEC_INT_H

#include "file/file.h"

#define MRU_N 8 /* recently used tids per list */
#define PRIO_BASE 120 /* the prio of nearly every task */
/* Most task slots one event can add: its tid and a switch's prev and next. */
#define TASKS_PER_EVENT 3

/* Instantiated once per direction (see the top of the file). */
#define CODER static inline __attribute__((always_inline))
#define COLD static __attribute__((noinline, cold))

/* Mask bits common to every event; type-specific bits start at B_X. */
enum { B_TSBACK, B_FLAGS, B_TID, B_TGID, B_X };

struct ctask {
	int32_t tid;
	uint32_t gen; /* live in this chunk when == codec gen */
	int32_t tgid, prio, cpu;
	uint32_t comm; /* chunk string index, 0: none */
	int64_t sys; /* last syscall id entered */
};

struct ccpu {
	int32_t cur; /* task switched in last */
	/* cur's task slot, which most events need: NULL when not known,
	 * for tid 0, and after the task table moved (task_grow()). */
	struct ctask *cur_slot;
	int32_t mru[MRU_N]; /* tasks that ran or were woken here */
	int32_t irq, softirq; /* last vectors */
	struct ctask idle; /* tid 0 is one task per CPU */
};

struct codec {
	bool enc;
	bool oom;
	bool bad; /* decoder: some column in[] is bad */

	/* encoder: columns and string table being built */
	struct fbuf col[COL__N];
	struct fbuf strbuf; /* u8 length + bytes, per string */
	uint32_t *soff; /* offset of string i (1-based) in strbuf */
	uint32_t *sidx; /* hash index: string index or 0 */
	size_t scap, nstr, sslots;
	size_t nrec;

	/* decoder: the loaded chunk */
	struct cursor in[COL__N];
	const char **str; /* str[0] = NULL, str[1..nstr] */
	size_t str_cap;
	size_t left; /* records still to decode */

	/* prediction state, reset per chunk */
	uint64_t prev_ts;
	uint16_t last_flags[256];
	int32_t wmru[MRU_N]; /* tasks woken or migrated lately */
	int32_t last_child, last_task_tid;
	struct ccpu *cpus, spare;
	size_t ncpus, ncpus_used;
	struct ctask *tasks;
	size_t tcap, tcount;
	uint32_t gen;
};

/* rec_codec_tab.c */
/* The state of a CPU not seen yet in this chunk (&c->spare past
 * CPU_STATE_MAX, or when memory runs out, with ->oom). */
struct ccpu *codec__cpu_state_new(struct codec *c, int32_t cpu);
/* Double the task table; -ENOMEM.  Slots held before are stale. */
int codec__task_grow(struct codec *c);
/* What is known of @tid (defaults when nothing); tid 0 is per CPU. */
struct ctask codec__task_peek(struct codec *c, int32_t tid, int32_t cpu);
/* Encoder: index of @s in the chunk's string table, added if new (0 for
 * NULL, and when memory runs out, with ->oom). */
uint32_t codec__str_index(struct codec *c, const char *s);

static inline void task_default(struct ctask *t, int32_t tid)
{
	t->tid = tid;
	t->tgid = tid == 0 ? 0 : -1;
	t->prio = PRIO_BASE;
	t->cpu = -1;
	t->comm = 0;
	t->sys = -1;
}

CODER size_t task_hash(int32_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

/* State of @cpu; CPUs beyond CPU_STATE_MAX share one slot (identically
 * on both sides, so prediction still agrees).  A CPU seen for the first
 * time may move the others: pointers from earlier calls are then stale. */
CODER struct ccpu *cpu_state(struct codec *c, int32_t cpu)
{
	if (__builtin_expect((uint32_t)cpu < c->ncpus_used, 1))
		return &c->cpus[cpu];
	return codec__cpu_state_new(c, cpu);
}

#endif
