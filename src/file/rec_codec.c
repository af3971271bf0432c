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
 * own and damage to one chunk cannot garble the next.  The tables behind
 * the predictions (tasks, CPUs, strings), the reset and the parsing of a
 * loaded chunk are in rec_codec_tab.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file/rec_codec_int.h"

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

/*
 * Make room for the task slots one record may add, so that the slots it
 * holds stay put while it is coded (task_slot() never grows the table).
 * False, with ->oom, when the table cannot grow.
 */
CODER bool task_room(struct codec *c)
{
	if (__builtin_expect((c->tcount + TASKS_PER_EVENT) * 2 <= c->tcap, 1))
		return true;
	if (codec__task_grow(c) < 0) {
		c->oom = true;
		return false;
	}
	return true;
}

/*
 * The slot of @tid, added with the defaults when new, so reading it gives
 * what codec__task_peek() would.  Needs task_room() first; the slot stays valid
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
		*idx = codec__str_index(c, s);
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
	/* nearly always 0: only a switch-in never traced sets it */
	ev->sw.prev_run_ns = (uint64_t)fld(c, enc, mask,
					   (int64_t)ev->sw.prev_run_ns, 0,
					   B_X + 7, COL_RUN, 0);

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
	tp = codec__task_peek(c, parent, ev->cpu);
	/* A new process leads its own group; a new thread joins its
	 * parent's. */
	if (enc) {
		tgid = ev->fork.child_tgid;
		/* 4 (1.3): a new process of CLONE_PARENT */
		code = tgid == child   ? (ev->fork.clone_parent ? 4 : 0) :
		       tgid == tp.tgid ? 1 :
		       tgid == -1      ? 2 :
					 3;
		fbuf__put_u8(&c->col[COL_TIDC], code);
		if (code == 3)
			val(c, enc, tgid, COL_TID, child);
	} else {
		code = rd_u8(c, COL_TIDC);
		if (code == 0 || code == 4)
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
	ev->fork.clone_parent = code == 4;
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

CODER void code_orphan(struct codec *c, const bool enc, struct ctxmon_event *ev)
{
	ev->orphan.tid = (int32_t)val(c, enc, ev->orphan.tid, COL_TID, ev->tid);
	ev->orphan.parent =
		(int32_t)val(c, enc, ev->orphan.parent, COL_TID, ev->tid);
	ev->orphan.why = (uint8_t)uval(c, enc, ev->orphan.why, COL_NUM);
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
	case CTXMON_EV_ORPHAN:
		code_orphan(c, enc, ev);
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
		ci = codec__str_index(c, *comm);
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

size_t codec__left(const struct codec *c)
{
	return c->left;
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

static const char *const col_damage[COL__N] = {
	"damaged type column",	    "damaged cpu column",
	"damaged timestamp column", "damaged mask column",
	"damaged state column",	    "damaged tid code column",
	"damaged tid column",	    "damaged string column",
	"damaged number column",    "damaged run time column",
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

int codec__next(struct codec *c, struct ctxmon_event *ev, uint8_t *meta,
		const char **why)
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
	memset(ev, 0, sizeof(*ev));
	*meta = 0;
	type = rd_u8(c, COL_TYPE);
	if (type == REC_TASK) {
		*meta = CODEC_TASK;
		code_task(c, false, &ev->tid, &ev->tgid, &ev->sw.prev_comm);
	} else if (type < CTXMON_EV__MAX) {
		mask = rd_uvar(c, COL_MISS);
		ev->type = type;
		if (mask == 0) {
			/* Every field as predicted, as in most events: the
			 * same code with the mask a known constant, so that
			 * the compiler drops the tests of its bits. */
			uint64_t none = 0;

			code_event(c, false, &none, ev);
			*meta = (uint8_t)dec_news(ev, none);
		} else {
			code_event(c, false, &mask, ev);
			*meta = (uint8_t)dec_news(ev, mask);
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
