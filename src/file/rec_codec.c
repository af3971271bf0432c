/*
 * rec_codec.c - the compact event encoding of an EVENTS chunk.
 *
 * A switch-heavy stream is very repetitive: the task switched out is the
 * one switched in last on that CPU, its comm, prio and tgid were in that
 * earlier event, the task switched in is usually one of the few that ran
 * or were woken there lately.  So each field is predicted from what the
 * chunk has shown so far and only stored when the prediction fails, with
 * one bit per field in a per-event mask.  Values go to separate columns
 * (types, CPUs, timestamp deltas, masks, tids, comms, other numbers) so
 * that zstd sees homogeneous data.  The layout is in docs/file-format.md.
 *
 * The same function, code_event(), encodes and decodes: each field helper
 * either stores the value or reads it back, and the prediction state is
 * updated from the final values in both directions.  Encoder and decoder
 * therefore cannot disagree on a predictor.
 *
 * Decoding bounds the speed of every offline analysis, so the direction
 * is a constant argument and every coding helper is forced inline: the
 * compiler makes straight-line copies of that one function with no test
 * of the direction left, one for the encoder and two for the decoder (the
 * second for the common event whose fields were all predicted, its mask a
 * known 0).  Reads test only for the one-byte value inline; the checked
 * rest is out of line.  What a reader's task table needs to learn from an
 * event is told with it (TASK_NEW_*), most events bringing nothing new.
 *
 * All prediction state is reset at each chunk, so a chunk decodes on its
 * own and damage to one chunk cannot garble the next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

static const uint32_t state_list[] = {
	CTXMON_STATE_RUNNING, CTXMON_STATE_S, CTXMON_STATE_D,
	CTXMON_STATE_T,	      CTXMON_STATE_t, CTXMON_STATE_X,
	CTXMON_STATE_Z,	      CTXMON_STATE_P, CTXMON_STATE_I,
	CTXMON_STATE_OTHER,
};

/* ---- decoder reads --------------------------------------------------- */

/*
 * A read past the end of a column or a malformed varint marks the column
 * bad (as struct cursor does) and the codec with it; decoding goes on
 * with zeros and codec__next() refuses the record at its end.  The common
 * case, a value of one byte, is tested inline; the rest is out of line.
 */

COLD void rd_mark_bad(struct codec *c, int col)
{
	c->in[col].bad = true;
	c->bad = true;
}

static __attribute__((noinline)) uint64_t rd_uvar_long(struct codec *c, int col)
{
	struct cursor *k = &c->in[col];
	uint64_t v = 0;

	/* With ten bytes left no byte needs a bounds check; the tenth byte
	 * and the end of the column are left to the checked reader. */
	if (k->len - k->pos >= 10) {
		const uint8_t *p = k->p + k->pos;

		for (unsigned i = 0; i < 9; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				k->pos += i + 1;
				return v;
			}
		}
	}
	v = cursor__uvar(k);
	if (k->bad)
		c->bad = true;
	return v;
}

CODER uint64_t rd_uvar(struct codec *c, int col)
{
	struct cursor *k = &c->in[col];

	if (__builtin_expect(k->pos < k->len && k->p[k->pos] < 0x80, 1))
		return k->p[k->pos++];
	return rd_uvar_long(c, col);
}

/* rd_uvar() for the timestamp deltas, mostly two bytes long. */
CODER uint64_t rd_uvar2(struct codec *c, int col)
{
	struct cursor *k = &c->in[col];

	if (__builtin_expect(k->len - k->pos >= 2, 1)) {
		const uint8_t *p = k->p + k->pos;

		if (p[0] < 0x80) {
			k->pos++;
			return p[0];
		}
		if (p[1] < 0x80) {
			k->pos += 2;
			return (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
		}
	}
	return rd_uvar_long(c, col);
}

CODER uint8_t rd_u8(struct codec *c, int col)
{
	struct cursor *k = &c->in[col];

	if (__builtin_expect(k->pos < k->len, 1))
		return k->p[k->pos++];
	rd_mark_bad(c, col);
	return 0;
}

/* ---- prediction state ---------------------------------------------- */

static void task_default(struct ctask *t, int32_t tid)
{
	t->tid = tid;
	t->tgid = tid == 0 ? 0 : -1;
	t->prio = PRIO_BASE;
	t->cpu = -1;
	t->comm = 0;
	t->sys = -1;
}

static void cpu_default(struct ccpu *cc)
{
	cc->cur = -1;
	cc->cur_slot = NULL;
	for (int i = 0; i < MRU_N; i++)
		cc->mru[i] = -1;
	cc->irq = cc->softirq = -1;
	task_default(&cc->idle, 0);
}

/* cpu_state() for a CPU not seen yet in this chunk. */
static __attribute__((noinline)) struct ccpu *cpu_state_new(struct codec *c,
							    int32_t cpu)
{
	if (cpu < 0 || cpu >= CPU_STATE_MAX)
		return &c->spare;
	if ((size_t)cpu >= c->ncpus) {
		size_t n = c->ncpus ? c->ncpus : 8;
		struct ccpu *p;

		while (n <= (size_t)cpu)
			n *= 2;
		p = realloc(c->cpus, n * sizeof(*p));
		if (!p) {
			c->oom = true;
			return &c->spare;
		}
		c->cpus = p;
		c->ncpus = n;
	}
	while (c->ncpus_used <= (size_t)cpu)
		cpu_default(&c->cpus[c->ncpus_used++]);
	return &c->cpus[cpu];
}

/* State of @cpu; CPUs beyond CPU_STATE_MAX share one slot (identically
 * on both sides, so prediction still agrees).  A CPU seen for the first
 * time may move the others: pointers from earlier calls are then stale. */
CODER struct ccpu *cpu_state(struct codec *c, int32_t cpu)
{
	if (__builtin_expect((uint32_t)cpu < c->ncpus_used, 1))
		return &c->cpus[cpu];
	return cpu_state_new(c, cpu);
}

CODER size_t task_hash(int32_t tid, size_t cap)
{
	return ((uint32_t)tid * 2654435761u) & (cap - 1);
}

static struct ctask *task_find(struct codec *c, int32_t tid)
{
	if (!c->tcap)
		return NULL;
	for (size_t i = task_hash(tid, c->tcap);; i = (i + 1) & (c->tcap - 1)) {
		struct ctask *t = &c->tasks[i];

		if (t->gen != c->gen)
			return NULL;
		if (t->tid == tid)
			return t;
	}
}

static int task_grow(struct codec *c)
{
	size_t cap = c->tcap ? c->tcap * 2 : 1024;
	struct ctask *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < c->tcap; i++) {
		struct ctask *t = &c->tasks[i];
		size_t j;

		if (t->gen != c->gen)
			continue;
		j = task_hash(t->tid, cap);
		while (n[j].gen == c->gen)
			j = (j + 1) & (cap - 1);
		n[j] = *t;
	}
	free(c->tasks);
	c->tasks = n;
	c->tcap = cap;
	for (size_t i = 0; i < c->ncpus_used; i++)
		c->cpus[i].cur_slot = NULL;
	c->spare.cur_slot = NULL;
	return 0;
}

/*
 * Make room for the task slots one record may add, so that the slots it
 * holds stay put while it is coded (task_slot() never grows the table).
 * False, with ->oom, when the table cannot grow.
 */
CODER bool task_room(struct codec *c)
{
	if (__builtin_expect((c->tcount + TASKS_PER_EVENT) * 2 <= c->tcap, 1))
		return true;
	if (task_grow(c) < 0) {
		c->oom = true;
		return false;
	}
	return true;
}

/* What is known of @tid (defaults when nothing); tid 0 is per CPU. */
static struct ctask task_peek(struct codec *c, int32_t tid, int32_t cpu)
{
	struct ctask d, *t;

	if (tid == 0 && cpu >= 0)
		return cpu_state(c, cpu)->idle;
	t = task_find(c, tid);
	if (t)
		return *t;
	task_default(&d, tid);
	return d;
}

/*
 * The slot of @tid, added with the defaults when new, so reading it gives
 * what task_peek() would.  Needs task_room() first; the slot stays valid
 * until the next task_room() or cpu_state() of a CPU not seen yet.
 */
CODER struct ctask *task_slot(struct codec *c, int32_t tid, int32_t cpu)
{
	struct ctask *t;
	size_t i;

	if (tid == 0 && cpu >= 0)
		return &cpu_state(c, cpu)->idle;
	for (i = task_hash(tid, c->tcap);; i = (i + 1) & (c->tcap - 1)) {
		t = &c->tasks[i];
		if (t->gen != c->gen)
			break;
		if (t->tid == tid)
			return t;
	}
	task_default(t, tid);
	t->gen = c->gen;
	c->tcount++;
	return t;
}

/* Move @tid to the front of @mru, the others down one place up to where
 * it was (the last one drops out when it was not there).  Written as one
 * carrying loop: a search then a shift becomes a memmove() call. */
CODER void mru_touch(int32_t *mru, int32_t tid)
{
	int32_t carry = mru[0], t;

	mru[0] = tid;
	for (int i = 1; i < MRU_N && carry != tid; i++) {
		t = mru[i];
		mru[i] = carry;
		carry = t;
	}
}

static void state_reset(struct codec *c)
{
	c->prev_ts = 0;
	memset(c->last_flags, 0, sizeof(c->last_flags));
	for (int i = 0; i < MRU_N; i++)
		c->wmru[i] = -1;
	c->last_child = -1;
	c->last_task_tid = 0;
	c->ncpus_used = 0;
	cpu_default(&c->spare);
	c->tcount = 0;
	if (++c->gen == 0) {
		/* Wrapped: stale slots could look live, so clear them. */
		if (c->tasks)
			memset(c->tasks, 0, c->tcap * sizeof(*c->tasks));
		c->gen = 1;
	}
}

/* ---- strings ------------------------------------------------------- */

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int str_grow(struct codec *c)
{
	size_t slots = c->sslots ? c->sslots * 2 : 256;
	uint32_t *idx = calloc(slots, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 1; i <= c->nstr; i++) {
		const uint8_t *p = c->strbuf.p + c->soff[i];
		size_t j = str_hash((const char *)p, p[-1]) & (slots - 1);

		while (idx[j])
			j = (j + 1) & (slots - 1);
		idx[j] = (uint32_t)i;
	}
	free(c->sidx);
	c->sidx = idx;
	c->sslots = slots;
	return 0;
}

/* Encoder: index of @s in the chunk's string table, added if new. */
static uint32_t str_index(struct codec *c, const char *s)
{
	size_t len, j;

	if (!s)
		return 0;
	len = strnlen(s, STR_MAX);
	if ((c->nstr + 1) * 2 > c->sslots && str_grow(c) < 0)
		goto oom;
	j = str_hash(s, len) & (c->sslots - 1);
	for (; c->sidx[j]; j = (j + 1) & (c->sslots - 1)) {
		const uint8_t *p = c->strbuf.p + c->soff[c->sidx[j]];

		if (p[-1] == len && memcmp(p, s, len) == 0)
			return c->sidx[j];
	}
	if (c->nstr + 2 > c->scap) {
		size_t cap = c->scap ? c->scap * 2 : 256;
		uint32_t *o = realloc(c->soff, cap * sizeof(*o));

		if (!o)
			goto oom;
		c->soff = o;
		c->scap = cap;
	}
	fbuf__put_u8(&c->strbuf, (uint8_t)len);
	fbuf__put(&c->strbuf, s, len);
	if (c->strbuf.oom)
		goto oom;
	c->nstr++;
	c->soff[c->nstr] = (uint32_t)(c->strbuf.len - len);
	c->sidx[j] = (uint32_t)c->nstr;
	return (uint32_t)c->nstr;
oom:
	c->oom = true;
	return 0;
}

/* ---- field helpers: each one encodes (@enc) or decodes ------------- */

/* Stored always, as zigzag(v - base). */
CODER int64_t val(struct codec *c, const bool enc, int64_t v, int col,
		  int64_t base)
{
	if (enc) {
		fbuf__put_svar(&c->col[col],
			       (int64_t)((uint64_t)v - (uint64_t)base));
		return v;
	}
	return (int64_t)((uint64_t)base + (uint64_t)unzigzag(rd_uvar(c, col)));
}

/* Stored only when not @pred (bit @bit of *@mask), as zigzag(v - base). */
CODER int64_t fld(struct codec *c, const bool enc, uint64_t *mask, int64_t v,
		  int64_t pred, unsigned bit, int col, int64_t base)
{
	if (enc) {
		if (v != pred) {
			*mask |= 1ull << bit;
			val(c, enc, v, col, base);
		}
		return v;
	}
	if (!(*mask & (1ull << bit)))
		return pred;
	return val(c, enc, 0, col, base);
}

CODER uint64_t uval(struct codec *c, const bool enc, uint64_t v, int col)
{
	if (enc) {
		fbuf__put_uvar(&c->col[col], v);
		return v;
	}
	return rd_uvar(c, col);
}

/* Decoder: the string of index @i, which the chunk may not have. */
CODER const char *str_at(struct codec *c, uint64_t i, uint32_t *idx)
{
	if (__builtin_expect(i > c->nstr, 0)) {
		rd_mark_bad(c, COL_STR);
		i = 0;
	}
	*idx = (uint32_t)i;
	return c->str[i];
}

/* A comm predicted as string @pred; *idx gets its string index. */
CODER const char *fld_comm(struct codec *c, const bool enc, uint64_t *mask,
			   const char *s, uint32_t pred, unsigned bit,
			   uint32_t *idx)
{
	if (enc) {
		*idx = str_index(c, s);
		if (*idx != pred) {
			*mask |= 1ull << bit;
			fbuf__put_uvar(&c->col[COL_STR], *idx);
		}
		return s;
	}
	return str_at(c, *mask & (1ull << bit) ? rd_uvar(c, COL_STR) : pred,
		      idx);
}

/* A tid coded as its position in @mru, or explicitly against @base. */
CODER int32_t fld_mru(struct codec *c, const bool enc, int32_t tid,
		      const int32_t *mru, int32_t base)
{
	uint8_t code;

	if (enc) {
		for (code = 0; code < MRU_N && mru[code] != tid; code++)
			;
		fbuf__put_u8(&c->col[COL_TIDC], code);
		if (code == MRU_N)
			val(c, enc, tid, COL_TID, base);
		return tid;
	}
	code = rd_u8(c, COL_TIDC);
	if (__builtin_expect(code < MRU_N, 1))
		return mru[code];
	if (code > MRU_N)
		rd_mark_bad(c, COL_TIDC);
	return (int32_t)val(c, enc, 0, COL_TID, base);
}

/* prev_state, preempt and kind in one small code (docs/file-format.md). */
CODER void code_state(struct codec *c, const bool enc, struct ctxmon_event *ev)
{
	uint64_t code;
	int s;

	if (enc) {
		for (s = 0; s < (int)ARRAY_SIZE(state_list); s++)
			if (state_list[s] == ev->sw.prev_state)
				break;
		if (s < (int)ARRAY_SIZE(state_list) && ev->sw.preempt <= 1 &&
		    ev->sw.kind <= 2) {
			code = 1 + ev->sw.preempt + 2u * ev->sw.kind +
			       6u * (unsigned)s;
			fbuf__put_uvar(&c->col[COL_STATE], code);
			return;
		}
		fbuf__put_uvar(&c->col[COL_STATE], 0);
		uval(c, enc, ev->sw.prev_state, COL_NUM);
		uval(c, enc, ev->sw.kind, COL_NUM);
		uval(c, enc, ev->sw.preempt, COL_NUM);
		return;
	}
	code = rd_uvar(c, COL_STATE);
	if (code == 0) {
		ev->sw.prev_state = (uint32_t)uval(c, enc, 0, COL_NUM);
		ev->sw.kind = (uint8_t)uval(c, enc, 0, COL_NUM);
		ev->sw.preempt = (uint8_t)uval(c, enc, 0, COL_NUM);
		return;
	}
	code--;
	if (code / 6 >= ARRAY_SIZE(state_list)) {
		rd_mark_bad(c, COL_STATE);
		return;
	}
	ev->sw.preempt = (uint8_t)(code % 2);
	ev->sw.kind = (uint8_t)(code / 2 % 3);
	ev->sw.prev_state = state_list[code / 6];
}

/* ---- one event, both directions ------------------------------------ */

/*
 * The type-specific parts get the CPU's state and the slot of ev->tid (@t)
 * from code_event().  Each reads a task's predictions from its slot before
 * any slot is written, and writes in the order the format gives, so a
 * record naming one task twice (prev == next) codes as specified.
 */

CODER void code_switch(struct codec *c, const bool enc, uint64_t *mask,
		       struct ctxmon_event *ev, struct ccpu *cc,
		       struct ctask *t)
{
	int32_t cpu = ev->cpu, prev, next;
	struct ctask *tp, *tn;
	uint32_t pci, nci;

	prev = (int32_t)fld(c, enc, mask, ev->sw.prev_tid, ev->tid, B_X,
			    COL_TID, ev->tid);
	/* Nearly always the task that was running: ev->tid, on this CPU. */
	tp = prev == ev->tid ? t : task_slot(c, prev, cpu);
	ev->sw.prev_tid = prev;
	ev->sw.prev_tgid = (int32_t)fld(c, enc, mask, ev->sw.prev_tgid,
					tp->tgid, B_X + 1, COL_TID, prev);
	ev->sw.prev_prio = (int32_t)fld(c, enc, mask, ev->sw.prev_prio,
					tp->prio, B_X + 2, COL_NUM, PRIO_BASE);
	ev->sw.prev_comm = fld_comm(c, enc, mask, ev->sw.prev_comm, tp->comm,
				    B_X + 3, &pci);
	code_state(c, enc, ev);

	next = fld_mru(c, enc, ev->sw.next_tid, cc->mru, prev);
	tn = task_slot(c, next, cpu);
	ev->sw.next_tid = next;
	ev->sw.next_tgid = (int32_t)fld(c, enc, mask, ev->sw.next_tgid,
					tn->tgid, B_X + 4, COL_TID, next);
	ev->sw.next_prio = (int32_t)fld(c, enc, mask, ev->sw.next_prio,
					tn->prio, B_X + 5, COL_NUM, PRIO_BASE);
	ev->sw.next_comm = fld_comm(c, enc, mask, ev->sw.next_comm, tn->comm,
				    B_X + 6, &nci);

	tp->tgid = ev->sw.prev_tgid;
	tp->prio = ev->sw.prev_prio;
	tp->comm = pci;
	tp->cpu = cpu;
	tn->tgid = ev->sw.next_tgid;
	tn->prio = ev->sw.next_prio;
	tn->comm = nci;
	tn->cpu = cpu;
	mru_touch(cc->mru, prev);
	cc->cur = next;
	/* Not tid 0: its slot depends on the CPU, and the spare state
	 * stands for many. */
	cc->cur_slot = next ? tn : NULL;
}

CODER void code_wake(struct codec *c, const bool enc, uint64_t *mask,
		     struct ctxmon_event *ev)
{
	struct ctask *t;
	int32_t w;
	uint32_t ci;

	w = fld_mru(c, enc, ev->wake.tid, c->wmru, ev->tid);
	t = task_slot(c, w, -1);
	ev->wake.tid = w;
	ev->wake.prio = (int32_t)fld(c, enc, mask, ev->wake.prio, t->prio, B_X,
				     COL_NUM, PRIO_BASE);
	ev->wake.comm =
		fld_comm(c, enc, mask, ev->wake.comm, t->comm, B_X + 1, &ci);
	ev->wake.target_cpu = (int32_t)fld(c, enc, mask, ev->wake.target_cpu,
					   t->cpu >= 0 ? t->cpu : ev->cpu,
					   B_X + 2, COL_NUM, 0);
	t->prio = ev->wake.prio;
	t->comm = ci;
	t->cpu = ev->wake.target_cpu;
	mru_touch(c->wmru, w);
	/* The next switch on the target CPU is likely to pick this task. */
	if (ev->type != CTXMON_EV_WAKING)
		mru_touch(cpu_state(c, ev->wake.target_cpu)->mru, w);
}

CODER void code_migrate(struct codec *c, const bool enc, uint64_t *mask,
			struct ctxmon_event *ev)
{
	struct ctask *t;
	int32_t m;

	m = fld_mru(c, enc, ev->migrate.tid, c->wmru, ev->tid);
	t = task_slot(c, m, -1);
	ev->migrate.tid = m;
	ev->migrate.prio = (int32_t)fld(c, enc, mask, ev->migrate.prio, t->prio,
					B_X, COL_NUM, PRIO_BASE);
	ev->migrate.orig_cpu = (int32_t)fld(c, enc, mask, ev->migrate.orig_cpu,
					    t->cpu >= 0 ? t->cpu : ev->cpu,
					    B_X + 1, COL_NUM, 0);
	ev->migrate.dest_cpu =
		(int32_t)val(c, enc, ev->migrate.dest_cpu, COL_NUM, 0);
	t->prio = ev->migrate.prio;
	t->cpu = ev->migrate.dest_cpu;
	mru_touch(c->wmru, m);
}

CODER void code_fork(struct codec *c, const bool enc, uint64_t *mask,
		     struct ctxmon_event *ev)
{
	int32_t parent, child, tgid = 0;
	struct ctask tp, *t;
	uint32_t ci;
	uint8_t code;

	parent = (int32_t)fld(c, enc, mask, ev->fork.parent_tid, ev->tid, B_X,
			      COL_TID, ev->tid);
	child = (int32_t)fld(c, enc, mask, ev->fork.child_tid,
			     (int32_t)((uint32_t)c->last_child + 1), B_X + 1,
			     COL_TID, parent);
	/* A copy: the parent keeps no state of its own from this event. */
	tp = task_peek(c, parent, ev->cpu);
	/* A new process leads its own group; a new thread joins its
	 * parent's. */
	if (enc) {
		tgid = ev->fork.child_tgid;
		code = tgid == child   ? 0 :
		       tgid == tp.tgid ? 1 :
		       tgid == -1      ? 2 :
					 3;
		fbuf__put_u8(&c->col[COL_TIDC], code);
		if (code == 3)
			val(c, enc, tgid, COL_TID, child);
	} else {
		code = rd_u8(c, COL_TIDC);
		if (code == 0)
			tgid = child;
		else if (code == 1)
			tgid = tp.tgid;
		else if (code == 2)
			tgid = -1;
		else if (code == 3)
			tgid = (int32_t)val(c, enc, 0, COL_TID, child);
		else
			rd_mark_bad(c, COL_TIDC);
	}
	ev->fork.parent_tid = parent;
	ev->fork.child_tid = child;
	ev->fork.child_tgid = tgid;
	ev->fork.child_comm = fld_comm(c, enc, mask, ev->fork.child_comm,
				       tp.comm, B_X + 2, &ci);
	c->last_child = child;
	t = task_slot(c, child, -1);
	t->tgid = tgid;
	t->comm = ci;
	t->prio = tp.prio;
	t->cpu = ev->cpu;
	mru_touch(c->wmru, child);
}

CODER void code_exec(struct codec *c, const bool enc, uint64_t *mask,
		     struct ctxmon_event *ev)
{
	struct ctask *t;
	int32_t x;
	uint32_t ci;

	x = (int32_t)fld(c, enc, mask, ev->exec.tid, ev->tid, B_X, COL_TID,
			 ev->tid);
	ev->exec.tid = x;
	ev->exec.old_tid = (int32_t)fld(c, enc, mask, ev->exec.old_tid, x,
					B_X + 1, COL_TID, x);
	t = task_slot(c, x, ev->cpu);
	ev->exec.comm =
		fld_comm(c, enc, mask, ev->exec.comm, t->comm, B_X + 2, &ci);
	t->comm = ci;
}

CODER void code_exit(struct codec *c, const bool enc, uint64_t *mask,
		     struct ctxmon_event *ev)
{
	struct ctask *t;
	int32_t x;
	uint32_t ci;

	x = (int32_t)fld(c, enc, mask, ev->exit.tid, ev->tid, B_X, COL_TID,
			 ev->tid);
	t = task_slot(c, x, ev->cpu);
	ev->exit.tid = x;
	ev->exit.prio = (int32_t)fld(c, enc, mask, ev->exit.prio, t->prio,
				     B_X + 1, COL_NUM, PRIO_BASE);
	ev->exit.comm =
		fld_comm(c, enc, mask, ev->exit.comm, t->comm, B_X + 2, &ci);
	ev->exit.group_dead =
		(uint8_t)uval(c, enc, ev->exit.group_dead, COL_NUM);
	t->prio = ev->exit.prio;
	t->comm = ci;
}

CODER void code_irq(struct codec *c, const bool enc, uint64_t *mask,
		    struct ctxmon_event *ev, struct ccpu *cc)
{
	bool soft = ev->type == CTXMON_EV_SOFTIRQ_ENTRY ||
		    ev->type == CTXMON_EV_SOFTIRQ_EXIT;

	ev->irq.vec = (int32_t)fld(c, enc, mask, ev->irq.vec,
				   soft ? cc->softirq : cc->irq, B_X, COL_NUM,
				   0);
	ev->irq.ret = (int32_t)fld(c, enc, mask, ev->irq.ret,
				   ev->type == CTXMON_EV_IRQ_EXIT ? 1 : 0,
				   B_X + 1, COL_NUM, 0);
	if (soft)
		cc->softirq = ev->irq.vec;
	else
		cc->irq = ev->irq.vec;
}

/* @t: the slot of ev->tid. */
CODER void code_sys(struct codec *c, const bool enc, uint64_t *mask,
		    struct ctxmon_event *ev, struct ctask *t)
{
	ev->sys.id = fld(c, enc, mask, ev->sys.id, t->sys, B_X, COL_NUM, 0);
	ev->sys.ret = fld(c, enc, mask, ev->sys.ret, 0, B_X + 1, COL_NUM, 0);
	t->sys = ev->sys.id;
}

CODER void code_lost(struct codec *c, const bool enc, struct ctxmon_event *ev)
{
	ev->lost.count =
		(uint64_t)val(c, enc, (int64_t)ev->lost.count, COL_NUM, 0);
	ev->lost.start_ts = (uint64_t)val(c, enc, (int64_t)ev->lost.start_ts,
					  COL_NUM, (int64_t)ev->ts);
	ev->lost.end_ts = (uint64_t)val(c, enc, (int64_t)ev->lost.end_ts,
					COL_NUM, (int64_t)ev->ts);
}

/*
 * Everything after the type byte and the mask: the encoder fills *@mask,
 * the decoder reads it.  Stops early only when out of memory (->oom).
 */
CODER void code_event(struct codec *c, const bool enc, uint64_t *mask,
		      struct ctxmon_event *ev)
{
	struct ccpu *cc;
	struct ctask *t;
	uint64_t d;
	int32_t cur;

	if (enc) {
		if (ev->ts >= c->prev_ts) {
			fbuf__put_uvar(&c->col[COL_TS], ev->ts - c->prev_ts);
		} else {
			*mask |= 1ull << B_TSBACK;
			fbuf__put_uvar(&c->col[COL_TS], c->prev_ts - ev->ts);
		}
	} else {
		d = rd_uvar2(c, COL_TS);
		ev->ts = *mask & (1ull << B_TSBACK) ? c->prev_ts - d :
						      c->prev_ts + d;
	}
	c->prev_ts = ev->ts;
	ev->cpu = (int32_t)val(c, enc, ev->cpu, COL_CPU, 0);
	ev->flags = (uint16_t)fld(c, enc, mask, ev->flags,
				  c->last_flags[ev->type & 0xff], B_FLAGS,
				  COL_NUM, 0);
	c->last_flags[ev->type & 0xff] = ev->flags;
	if (!task_room(c))
		return;
	/* Past this point the only CPU whose state is taken is the event's
	 * own, except for a wakeup's target CPU at the very end. */
	cc = cpu_state(c, ev->cpu);
	cur = cc->cur;
	ev->tid = (int32_t)fld(c, enc, mask, ev->tid, cur, B_TID, COL_TID, cur);
	t = ev->tid == cur && cc->cur_slot ? cc->cur_slot :
					     task_slot(c, ev->tid, ev->cpu);
	ev->tgid = (int32_t)fld(c, enc, mask, ev->tgid, t->tgid, B_TGID,
				COL_TID, ev->tid);
	t->tgid = ev->tgid;

	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		code_switch(c, enc, mask, ev, cc, t);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		code_wake(c, enc, mask, ev);
		break;
	case CTXMON_EV_MIGRATE:
		code_migrate(c, enc, mask, ev);
		break;
	case CTXMON_EV_FORK:
		code_fork(c, enc, mask, ev);
		break;
	case CTXMON_EV_EXEC:
		code_exec(c, enc, mask, ev);
		break;
	case CTXMON_EV_EXIT:
		code_exit(c, enc, mask, ev);
		break;
	case CTXMON_EV_IRQ_ENTRY:
	case CTXMON_EV_IRQ_EXIT:
	case CTXMON_EV_SOFTIRQ_ENTRY:
	case CTXMON_EV_SOFTIRQ_EXIT:
		code_irq(c, enc, mask, ev, cc);
		break;
	case CTXMON_EV_SYS_ENTER:
	case CTXMON_EV_SYS_EXIT:
		code_sys(c, enc, mask, ev, t);
		break;
	case CTXMON_EV_LOST:
		code_lost(c, enc, ev);
		break;
	default: /* CTXMON_EV_NONE: the common fields only */
		break;
	}
}

CODER void code_task(struct codec *c, const bool enc, int32_t *tid,
		     int32_t *tgid, const char **comm)
{
	uint32_t ci = 0;
	uint8_t code;
	struct ctask *t;

	*tid = (int32_t)val(c, enc, *tid, COL_TID, c->last_task_tid);
	if (enc) {
		code = *tgid == *tid ? 0 : *tgid == -1 ? 1 : 2;
		fbuf__put_u8(&c->col[COL_TIDC], code);
		if (code == 2)
			val(c, enc, *tgid, COL_TID, *tid);
		ci = str_index(c, *comm);
		fbuf__put_uvar(&c->col[COL_STR], ci);
	} else {
		code = rd_u8(c, COL_TIDC);
		if (code == 0)
			*tgid = *tid;
		else if (code == 1)
			*tgid = -1;
		else if (code == 2)
			*tgid = (int32_t)val(c, enc, 0, COL_TID, *tid);
		else
			rd_mark_bad(c, COL_TIDC);
		*comm = str_at(c, rd_uvar(c, COL_STR), &ci);
	}
	c->last_task_tid = *tid;
	if (!task_room(c))
		return;
	t = task_slot(c, *tid, -1);
	t->tgid = *tgid;
	t->comm = ci;
}

/* ---- public (internal) entry points -------------------------------- */

struct codec *codec__new(bool enc)
{
	struct codec *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->enc = enc;
	codec__reset(c);
	return c;
}

void codec__free(struct codec *c)
{
	if (!c)
		return;
	for (int i = 0; i < COL__N; i++)
		fbuf__free(&c->col[i]);
	fbuf__free(&c->strbuf);
	free(c->soff);
	free(c->sidx);
	free(c->str);
	free(c->cpus);
	free(c->tasks);
	free(c);
}

void codec__reset(struct codec *c)
{
	for (int i = 0; i < COL__N; i++) {
		c->col[i].len = 0;
		c->col[i].oom = false;
	}
	c->strbuf.len = 0;
	c->strbuf.oom = false;
	c->nstr = 0;
	if (c->sidx)
		memset(c->sidx, 0, c->sslots * sizeof(*c->sidx));
	c->nrec = 0;
	c->left = 0;
	c->oom = false;
	c->bad = false;
	state_reset(c);
}

static int enc_done(struct codec *c)
{
	bool oom = c->oom || c->strbuf.oom;

	for (int i = 0; i < COL__N; i++)
		oom |= c->col[i].oom;
	if (oom)
		return -ENOMEM;
	c->nrec++;
	return 0;
}

int codec__put_event(struct codec *c, const struct ctxmon_event *ev)
{
	struct ctxmon_event e = *ev;
	uint64_t mask = 0;

	if (!c->enc || ev->type >= CTXMON_EV__MAX)
		return -EINVAL;
	fbuf__put_u8(&c->col[COL_TYPE], (uint8_t)ev->type);
	code_event(c, true, &mask, &e);
	fbuf__put_uvar(&c->col[COL_MISS], mask);
	return enc_done(c);
}

int codec__put_task(struct codec *c, int32_t tid, int32_t tgid,
		    const char *comm)
{
	if (!c->enc)
		return -EINVAL;
	fbuf__put_u8(&c->col[COL_TYPE], REC_TASK);
	code_task(c, true, &tid, &tgid, &comm);
	return enc_done(c);
}

size_t codec__records(const struct codec *c)
{
	return c->nrec;
}

size_t codec__raw_size(const struct codec *c)
{
	size_t n = c->strbuf.len + 16 + 10 * COL__N;

	for (int i = 0; i < COL__N; i++)
		n += c->col[i].len;
	return n;
}

int codec__finish(struct codec *c, struct fbuf *out)
{
	fbuf__put_uvar(out, c->nrec);
	fbuf__put_uvar(out, c->nstr);
	fbuf__put(out, c->strbuf.p, c->strbuf.len);
	fbuf__put_uvar(out, COL__N);
	for (int i = 0; i < COL__N; i++)
		fbuf__put_uvar(out, c->col[i].len);
	for (int i = 0; i < COL__N; i++)
		fbuf__put(out, c->col[i].p, c->col[i].len);
	return out->oom ? -ENOMEM : 0;
}

int codec__load(struct codec *c, const uint8_t *p, size_t len,
		struct strtab *strs, const char **why)
{
	struct cursor cur = { .p = p, .len = len };
	uint64_t nrec, nstr, ncol, total = 0;
	uint64_t lens[64];

	codec__reset(c);
	nrec = cursor__uvar(&cur);
	nstr = cursor__uvar(&cur);
	/* Each string takes at least its length byte. */
	if (cur.bad || nstr > len - cur.pos) {
		*why = "bad string table size";
		return -EBADMSG;
	}
	if (nstr + 1 > c->str_cap) {
		const char **s = realloc(c->str, (nstr + 1) * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->str = s;
		c->str_cap = nstr + 1;
	}
	c->str[0] = NULL;
	for (uint64_t i = 1; i <= nstr; i++) {
		uint8_t l = cursor__u8(&cur);
		const uint8_t *b = cursor__bytes(&cur, l);

		if (!b) {
			*why = "string table runs past the chunk";
			return -EBADMSG;
		}
		c->str[i] = strtab__intern(strs, (const char *)b, l);
		if (!c->str[i])
			return -ENOMEM;
	}
	c->nstr = nstr;
	ncol = cursor__uvar(&cur);
	/* A newer writer may add columns this reader does not use, but not
	 * drop any. */
	if (cur.bad || ncol < COL__N || ncol > ARRAY_SIZE(lens)) {
		*why = "bad column count";
		return -EBADMSG;
	}
	for (uint64_t i = 0; i < ncol; i++) {
		lens[i] = cursor__uvar(&cur);
		if (lens[i] > len)
			cur.bad = true;
		total += lens[i];
	}
	if (cur.bad || total != len - cur.pos) {
		*why = "column sizes do not add up to the chunk size";
		return -EBADMSG;
	}
	for (uint64_t i = 0; i < ncol; i++) {
		const uint8_t *b = cursor__bytes(&cur, lens[i]);

		if (i < COL__N)
			c->in[i] = (struct cursor){ .p = b, .len = lens[i] };
	}
	/* Every record has its type byte. */
	if (nrec != c->in[COL_TYPE].len) {
		*why = "record count does not match the type column";
		return -EBADMSG;
	}
	c->left = nrec;
	return 0;
}

static const char *const col_damage[COL__N] = {
	"damaged type column",	    "damaged cpu column",
	"damaged timestamp column", "damaged mask column",
	"damaged state column",	    "damaged tid code column",
	"damaged tid column",	    "damaged string column",
	"damaged number column",
};

/* The TASK_NEW_* facts of decoded event @ev, @mask its miss mask: those
 * not predicted from the slot of the same tid (see file.h).  Where a
 * switch names one task as prev and next, next's predictions were read
 * before prev's facts were stored, so they count as new. */
CODER unsigned dec_news(const struct ctxmon_event *ev, uint64_t mask)
{
	unsigned n = 0;

#define MISSED(b) (mask & (1ull << (b)))
	if (ev->tid == 0 || MISSED(B_TGID))
		n |= TASK_NEW_TGID;
	switch (ev->type) {
	case CTXMON_EV_SWITCH:
		if (ev->sw.prev_tid == 0 || MISSED(B_X + 1))
			n |= TASK_NEW_A_TGID;
		if (ev->sw.prev_tid == 0 || MISSED(B_X + 3))
			n |= TASK_NEW_A_COMM;
		if (ev->sw.next_tid == 0 || ev->sw.next_tid == ev->sw.prev_tid)
			n |= TASK_NEW_B_TGID | TASK_NEW_B_COMM;
		if (MISSED(B_X + 4))
			n |= TASK_NEW_B_TGID;
		if (MISSED(B_X + 6))
			n |= TASK_NEW_B_COMM;
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		if (ev->wake.tid == 0 || MISSED(B_X + 1))
			n |= TASK_NEW_A_COMM;
		break;
	case CTXMON_EV_FORK:
		/* Predicted from the parent, not from the child's slot. */
		n |= TASK_NEW_A_TGID | TASK_NEW_A_COMM;
		break;
	case CTXMON_EV_EXEC:
		if (ev->exec.tid == 0 || MISSED(B_X + 2))
			n |= TASK_NEW_A_COMM;
		break;
	case CTXMON_EV_EXIT:
		if (ev->exit.tid == 0 || MISSED(B_X + 2))
			n |= TASK_NEW_A_COMM;
		break;
	default:
		break;
	}
#undef MISSED
	return n;
}

/* The first damaged column, as a reason. */
COLD const char *dec_damage(const struct codec *c)
{
	for (int i = 0; i < COL__N; i++)
		if (c->in[i].bad)
			return col_damage[i];
	return "damaged chunk";
}

int codec__next(struct codec *c, struct codec_rec *r, const char **why)
{
	uint64_t mask;
	uint8_t type;

	if (c->enc)
		return -EINVAL;
	if (!c->left) {
		for (int i = 0; i < COL__N; i++) {
			if (c->in[i].pos != c->in[i].len) {
				*why = "data left over in a column";
				return -EBADMSG;
			}
		}
		return 0;
	}
	c->left--;
	/* In parts: GCC makes one memset of the whole record a slow string
	 * instruction (rep stos) on x86-64. */
	memset(&r->ev, 0, sizeof(r->ev));
	r->is_task = false;
	r->news = 0;
	r->tid = r->tgid = 0;
	r->comm = NULL;
	type = rd_u8(c, COL_TYPE);
	if (type == REC_TASK) {
		r->is_task = true;
		code_task(c, false, &r->tid, &r->tgid, &r->comm);
	} else if (type < CTXMON_EV__MAX) {
		mask = rd_uvar(c, COL_MISS);
		r->ev.type = type;
		if (mask == 0) {
			/* Every field as predicted, as in most events: the
			 * same code with the mask a known constant, so that
			 * the compiler drops the tests of its bits. */
			uint64_t none = 0;

			code_event(c, false, &none, &r->ev);
			r->news = dec_news(&r->ev, none);
		} else {
			code_event(c, false, &mask, &r->ev);
			r->news = dec_news(&r->ev, mask);
		}
	} else {
		*why = "unknown record type (written by a newer ctxmon?)";
		return -EBADMSG;
	}
	if (__builtin_expect(c->oom || c->bad, 0)) {
		if (c->oom)
			return -ENOMEM;
		*why = dec_damage(c);
		return -EBADMSG;
	}
	return 1;
}
