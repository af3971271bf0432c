// SPDX-License-Identifier: GPL-2.0
/*
 * ctxsw_agg.bpf.c - the aggregation object of the bpf-agg backend (tp_btf
 * only): the sched programs keep per-thread counters, times and latency
 * histograms in maps, with the state machine of src/analysis/account.c,
 * and send nothing; the loader reads the tables.  Voluntary or
 * involuntary comes from the task's own nvcsw/nivcsw, as in the streaming
 * object (ctxsw_stream.bpf.c).  What the two share is in ctxsw.bpf.h.
 * Unlike the stream it does without sched_wakeup (row_waking(), and
 * docs/accounting.md, "A wakeup while the task is still on its CPU").
 */
#include "ctxsw.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* ---- maps of this object ------------------------------------------ */

/*
 * Aggregation: the rows, in an array, so that finding one is an index
 * and not a hash lookup (the lookups were a third of these programs' time
 * in the pipe benchmark, when they were).  A live thread's tid points to
 * its row's slot (tid_slot, slot + 1, 0 for none), an array as long as
 * the tid space at load time.  The loader sizes both (bpf.c).
 *
 * Slots are handed out from the ones user space gives back (free_slots),
 * then in order (next_slot).  A dead thread's row is buried: its tid lets
 * go of the slot, user space copies the row out, and zeroes it and gives
 * the slot back once no program that found the row before it was buried
 * can still be running (bpf_agg.c).  The rows array is mmap'ed by
 * user space, which reads rows in place.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctxsw_row);
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tid_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);
	__type(value, __u32);
} free_slots SEC(".maps");

const volatile __u32 nslots = 1; /* = rows' max_entries */
__u32 next_slot;		 /* slots below it have been handed out */

/* Orphan marks (ctxsw.h), made on the exit path only.  Preallocated: one
 * exit can make thousands in one run of its program, and an allocating
 * map refills its per-CPU cache from irq_work, which PREEMPT_RT runs in a
 * thread, after the program (6.12-rt dropped 296 of an exit's 300). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ctxsw_orphan_key);
	__type(value, __u64);
} orphan_marks SEC(".maps");

/* ---- aggregation ---------------------------------------------------- */

/*
 * The per-thread state machine of src/analysis/account.c, run at the
 * tracepoints.  Events of one task can fire on two CPUs at once (a waking
 * takes only the task's pi_lock, its switch-out its rq lock), so a row is
 * written under its lock, and a waking that the lock serialises in the
 * other order than its timestamp is undone to what the time-ordered stream
 * gives.  Nothing in a locked region calls a helper: the times, comms and
 * counters are read before.
 */

/*
 * The row lock is the row's sequence number: odd while a program writes
 * the row.  It is taken with a compare-and-swap and given back with an
 * atomic add, where bpf_spin_lock() costs two helper calls and an irq
 * save and restore each time (a quarter of the programs' time in the pipe
 * benchmark, when it was).  User space keeps a copy of a row when the
 * next copy is the same, with an even number (bpf_agg.c), which
 * BPF_F_LOCK did before.
 *
 * The scheduler's programs (switch, waking, wakeup_new, migration) run
 * with interrupts off.  The others (fork, exec, exit) run with preemption
 * off, except on PREEMPT_RT, where they can be preempted anywhere; and
 * the switch-out that preempts one is its own task's, whose row the
 * switch program then locks on the same CPU.  So none of them locks the
 * current task's row: fork locks rows of the child, not woken yet, which
 * nothing else touches; exit marks the row with an atomic or
 * (row_mark_exited()); exec leaves the new comm to the task's next
 * switch-out, which writes it.  The one exception is the takeover by a
 * thread that exec'd (agg_takeover(), rare), which moves the state of
 * its old row into its new one under their locks.  A holder on another
 * CPU holds a lock for a few dozen instructions; the wait is bounded
 * anyway (its vCPU may be stopped by the host), and an event that finds
 * the row locked that long is dropped and counted as a row dropped (on
 * PREEMPT_RT the takeover's window can end so, once in a great while).
 */
#define LOCK_SPINS (1 << 20)

struct lock_wait {
	__u32 *seq;
	bool got;
};

static __always_inline bool seq_take(__u32 *seq)
{
	__u32 s = *(volatile __u32 *)seq;

	return !(s & 1) && __sync_val_compare_and_swap(seq, s, s + 1) == s;
}

static long lock_spin(__u32 i, void *ctx)
{
	struct lock_wait *w = ctx;

	(void)i;
	if (!seq_take(w->seq))
		return 0;
	w->got = true;
	return 1;
}

static __always_inline void count_dropped(void);

static __always_inline bool row_lock(struct ctxsw_row *r)
{
	struct lock_wait w = { .seq = &r->seq };

	if (seq_take(&r->seq))
		return true;
	bpf_loop(LOCK_SPINS, lock_spin, &w, 0);
	if (!w.got)
		count_dropped();
	return w.got;
}

/*
 * Only the holder writes an odd seq.  On x86, which keeps stores in
 * order and whose BPF JIT keeps them where they are, a plain store gives
 * the lock back after the row's writes without a locked instruction (a
 * third of what the lock costs); elsewhere an atomic add orders them.
 */
static __always_inline void row_unlock(struct ctxsw_row *r)
{
#if defined(__TARGET_ARCH_x86)
	__u32 s = *(volatile __u32 *)&r->seq;

	barrier();
	*(volatile __u32 *)&r->seq = s + 1;
#else
	__sync_fetch_and_add(&r->seq, 1);
#endif
}

struct task_info { /* what is read of a task before locking */
	__s32 tid, tgid;
	char comm[CTXSW_COMM_LEN];
};

static __always_inline void read_task(struct task_struct *t,
				      struct task_info *ti)
{
	ti->tid = BPF_CORE_READ(t, pid);
	ti->tgid = BPF_CORE_READ(t, tgid);
	bpf_core_read(ti->comm, sizeof(ti->comm), &t->comm);
}

/*
 * The same for the aggregation programs, which are tp_btf only: there the
 * task is a trusted BTF pointer and its fields are plain loads (with CO-RE
 * offsets), not a bpf_probe_read_kernel() call each, which is most of the
 * cost of a program this size.  The comm is read into the row only when
 * it is wanted (row_learn_btf()).
 */
static __always_inline void read_task_btf(struct task_struct *t,
					  struct task_info *ti)
{
	ti->tid = t->pid;
	ti->tgid = t->tgid;
}

static __always_inline void count_dropped(void)
{
	struct ctxsw_cpu *c = this_cpu();

	if (c)
		__sync_fetch_and_add(&c->rows_dropped, 1);
}

static __always_inline struct ctxsw_row *slot_row(__u32 s)
{
	__u32 k = s - 1;

	return bpf_map_lookup_elem(&rows, &k);
}

/*
 * A free slot (+ 1, its row all zero), or 0 when there is none.  Slots
 * given back come first, so the slots in use stay near the most threads
 * alive at once, and user space maps and walks no more than those.
 */
static __always_inline __u32 slot_alloc(void)
{
	__u32 s;

	if (bpf_map_pop_elem(&free_slots, &s) == 0 && s < nslots)
		return s + 1;
	if (next_slot < nslots) {
		s = __sync_fetch_and_add(&next_slot, 1);
		if (s < nslots)
			return s + 1;
	}
	return 0;
}

/* The live row of @tid, created (all zero, tid 0) when missing. */
static __always_inline struct ctxsw_row *row_get(__u32 tid, bool create)
{
	__u32 *ts = bpf_map_lookup_elem(&tid_slot, &tid);
	struct ctxsw_row *r;
	__u32 s, mine;

	if (!ts) { /* a tid past the table: pid_max grew since the load */
		if (create)
			count_dropped();
		return NULL;
	}
	s = *(volatile __u32 *)ts;
	if (s || !create)
		return s ? slot_row(s) : NULL;
	mine = slot_alloc();
	r = mine ? slot_row(mine) : NULL;
	if (!r) {
		count_dropped();
		return NULL;
	}
	r->slot = mine;
	s = __sync_val_compare_and_swap(ts, 0, mine);
	if (!s)
		return r;
	/* another CPU made it first: give this one back, all zero */
	r->slot = 0;
	mine -= 1;
	bpf_map_push_elem(&free_slots, &mine, 0);
	return slot_row(s);
}

/*
 * Let go of a dead row: its tid no longer finds it, so a new task with
 * the tid starts a row of its own, and user space drains it.  Its task
 * has no more events: it is marked unlocked.
 */
static __always_inline void row_bury(__u32 tid, struct ctxsw_row *r, __u64 ts)
{
	__u32 *t = bpf_map_lookup_elem(&tid_slot, &tid);

	if (t)
		__sync_val_compare_and_swap(t, r->slot, 0);
	r->bury_ts = ts;
	r->exited |= CTXSW_BURIED;
}

/*
 * The current task's exit, marked in its row without the row lock (see
 * row_lock()): an atomic or of the exited bit in the word that holds it,
 * which no write to the word's other bytes by a lock holder undoes.
 * Its comm and ids are its last switch-out's to write, as ever.
 */
static __always_inline void row_mark_exited(struct ctxsw_row *r)
{
	__sync_fetch_and_or(&r->marks, CTXSW_MARKS_EXITED(CTXSW_EXITED));
}

/* First use of a row created by row_get() (under its lock). */
static __always_inline void row_init(struct ctxsw_row *r,
				     const struct task_info *ti)
{
	if (r->tid)
		return;
	r->tid = ti->tid;
	r->ppid = -1;
	r->cpu = -1;
	r->lat.max_waker_tid = -1;
	r->lat.max_cpu = -1;
	r->lat.max_prev_tid = -1;
}

/* row_init() and the tgid; true for a new row. */
static __always_inline bool row_learn_ids(struct ctxsw_row *r,
					  const struct task_info *ti)
{
	bool fresh = !r->tid;

	row_init(r, ti);
	if (ti->tgid > 0)
		r->tgid = ti->tgid;
	return fresh;
}

static __always_inline void row_learn(struct ctxsw_row *r,
				      const struct task_info *ti)
{
	row_learn_ids(r, ti);
	__builtin_memcpy(r->comm, ti->comm, sizeof(r->comm));
}

/*
 * row_learn() for the tp_btf programs, with the comm read from @t itself:
 * into a new row, and when @comm.  Every task that runs switches out, and
 * those switch-outs (and exec and exit) pass @comm: a name the task gives
 * itself, or is given through /proc, is in its row by its next switch-out
 * (16 bytes read and written on 2 of the 6 events of a pipe round trip
 * instead of all 6).
 */
static __always_inline void row_learn_btf(struct ctxsw_row *r,
					  const struct task_info *ti,
					  struct task_struct *t, bool comm)
{
	if (row_learn_ids(r, ti) || comm)
		__builtin_memcpy(r->comm, t->comm, sizeof(r->comm));
}

static __always_inline bool row_alive(const struct ctxsw_row *r)
{
	return r->state != CTXSW_ST_NEW && r->state != CTXSW_ST_DEAD;
}

static __always_inline void row_start(struct ctxsw_row *r, __u8 state, __u64 ts)
{
	r->first_ts = r->last_ts = r->state_ts = ts;
	r->state = state;
}

/* Charge the time since the last change to the current state.  A time
 * older than the state (another CPU's event that lost the race for the
 * lock) charges nothing. */
static __always_inline void row_advance(struct ctxsw_row *r, __u64 ts)
{
	__u64 d;

	if (!row_alive(r))
		return;
	if (ts < r->state_ts)
		return;
	d = ts - r->state_ts;
	if (r->state == CTXSW_ST_RUNNING) {
		r->run_ns += d;
	} else if (r->state == CTXSW_ST_RUNNABLE) {
		r->wait_ns += d;
	} else {
		__u32 i = r->sleep_idx;

		if (i > 2)
			i = 2;
		/* Bound the index in the register that indexes: clang may
		 * compare a 32-bit copy, whose bounds older verifiers do not
		 * carry back (Debian's 6.1 refused exec's program: "R3 max
		 * value is outside of the allowed memory range").  The mask
		 * is opaque to clang and a no-op at run time. */
		barrier_var(i);
		i &= 3;
		r->sleep_ns[i] += d;
	}
	r->state_ts = ts;
	r->last_ts = ts;
}

static __always_inline void row_end(struct ctxsw_row *r, __u64 ts)
{
	row_advance(r, ts);
	r->state = CTXSW_ST_DEAD;
	r->exited |= CTXSW_EXITED;
	r->cpu = -1;
	r->flags = 0;
}

static __always_inline void lat_begin(struct ctxsw_row *r, __u64 ts,
				      __s32 waker)
{
	r->flags |= CTXSW_RF_LAT_PENDING;
	r->lat_ts = ts;
	r->lat_waker = waker < 0 ? -1 : waker;
}

/*
 * The maximum of the interval user space reads the rows for: each read
 * moves the row's ireq on before it copies the row, and the first latency
 * after that starts a new maximum, keeping the last one in iprev for the
 * read (bpf_row__interval_max() in bpf_agg.c).  A load and a compare more per
 * latency where the whole run's maximum alone could say only which log2
 * bucket an interval's maximum was in.
 */
static __always_inline void imax_add(struct ctxsw_row *r, __u64 d, __u64 ts,
				     __s32 cpu, __s32 prev_tid)
{
	struct ctxsw_imax *m = &r->lat.icur;
	__u32 g = *(volatile __u32 *)&r->ireq;

	if (m->gen != g || !m->n) {
		if (m->gen != g)
			r->lat.iprev = *m;
		m->gen = g;
		m->n = 0;
		m->count0 = r->lat.count - 1;
	} else if (d <= m->max_ns) {
		m->n++;
		return;
	}
	m->n++;
	m->max_ns = d;
	m->max_ts = ts;
	m->waker_tid = r->lat_waker;
	m->cpu = cpu;
	m->prev_tid = prev_tid;
}

static __always_inline void lat_end(struct ctxsw_row *r, __u64 ts, __s32 cpu,
				    __s32 prev_tid)
{
	__u64 d = ts > r->lat_ts ? ts - r->lat_ts : 0;
	__u32 b = d ? log2_u64(d) : 0;

	if (b >= CTXSW_HIST_BUCKETS)
		b = CTXSW_HIST_BUCKETS - 1;
	r->lat.count++;
	r->lat.sum_ns += d;
	r->lat.hist[b & 63]++;
	if (r->lat.count == 1 || d > r->lat.max_ns) {
		r->lat.max_ns = d;
		r->lat.max_ts = ts;
		r->lat.max_waker_tid = r->lat_waker;
		r->lat.max_cpu = cpu;
		r->lat.max_prev_tid = prev_tid;
	}
	imax_add(r, d, ts, cpu, prev_tid);
	r->flags &= ~CTXSW_RF_LAT_PENDING;
}

static __always_inline __u8 sleep_class(__u32 state)
{
	if (state & CTXSW_STATE_S)
		return 0;
	if (state & CTXSW_STATE_D)
		return 1;
	return 2;
}

struct sw_out { /* prev's side of a switch */
	__u64 ts;
	__u64 nv, niv; /* its counters, the kernel's increment in */
	__u64 run; /* its slice_run() when its switch-in was not seen */
	__u32 state; /* enum ctxmon_task_state bits */
	__s32 cpu;
	bool preempt;
	__u8 fold; /* enum fold_side of a task exiting */
};

/* A RUNNING row whose task left its CPU unseen (agg_missed_out(),
 * row_switch_in()): its run ends at its last known state change, the
 * lower bound, and it sleeps ("other") from there. */
static __always_inline void row_left_unseen(struct ctxsw_row *r)
{
	r->state = CTXSW_ST_SLEEP;
	r->sleep_idx = 2;	/* CTXMON_SLEEP_OTHER */
	r->cpu = -1;
	r->flags &= ~(CTXSW_RF_LAT_PENDING | CTXSW_RF_EARLY_WAKE |
		      CTXSW_RF_MAYBE_WOKEN);
}

/*
 * A row switched out on @o->cpu where it was not running: the CPU last
 * switched to another task, so its switch-in went unseen.  It switched
 * in @o->run (the kernel's count of the slice) before, or at its last
 * known state change if that was later: event__unseen_in() in internal.h.
 */
static __always_inline void row_unseen_in(struct ctxsw_row *r,
					  const struct sw_out *o)
{
	__u64 in;

	if (r->state == CTXSW_ST_DEAD || o->ts < r->state_ts)
		return;
	in = o->run < o->ts - r->state_ts ? o->ts - o->run : r->state_ts;
	if (r->state == CTXSW_ST_RUNNING)
		row_left_unseen(r);
	row_advance(r, in);
	if (r->flags & CTXSW_RF_LAT_PENDING)
		lat_end(r, in, o->cpu, -1);
	r->switch_in++;
	r->state = CTXSW_ST_RUNNING;
	r->flags &= ~CTXSW_RF_MAYBE_WOKEN;
	r->cpu = o->cpu;
}

/* Returns the switch kind used, +8 when it had to be guessed. */
static __always_inline __u32 row_switch_out(struct ctxsw_row *r,
					    const struct sw_out *o)
{
	__u64 ts = o->ts;
	__u32 kind, guessed = 0;
	int moved;

	if (o->state & (CTXSW_STATE_X | CTXSW_STATE_Z)) {
		kind = CTXSW_KIND_EXIT;
	} else if ((moved = csw_moved(r->csw_valid, r->nvcsw, r->nivcsw,
				      o->nv, o->niv))) {
		kind = moved > 0 ? CTXSW_KIND_VOLUNTARY :
				   CTXSW_KIND_INVOLUNTARY;
	} else {
		kind = o->preempt || !o->state ? CTXSW_KIND_INVOLUNTARY :
						 CTXSW_KIND_VOLUNTARY;
		guessed = 8;
	}
	/* the counters after this switch are the base for the next one,
	 * even if its switch-in goes unseen */
	r->nvcsw = o->nv;
	r->nivcsw = o->niv;
	r->csw_valid = 1;

	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNING, ts);
	} else {
		if (o->run && (r->state != CTXSW_ST_RUNNING || r->cpu != o->cpu))
			row_unseen_in(r, o);
		row_advance(r, ts);
	}
	r->switch_out++;
	if (kind == CTXSW_KIND_VOLUNTARY) {
		r->voluntary++;
		if (o->fold == FOLD_AFTER)
			r->after_fold_vol++;
	} else if (kind == CTXSW_KIND_INVOLUNTARY) {
		r->involuntary++;
		if (o->fold == FOLD_AFTER)
			r->after_fold++;
		else if (o->fold == FOLD_UNSURE)
			r->exit_preempt++;
	} else {
		r->exit_switch++;
		if (o->state & CTXSW_STATE_Z)
			r->exit_counted++;
	}
	if (kind == CTXSW_KIND_EXIT) {
		row_end(r, ts);
		return kind | guessed;
	}
	r->cpu = -1;
	r->flags &= ~(CTXSW_RF_LAT_PENDING | CTXSW_RF_MAYBE_WOKEN);
	if (kind == CTXSW_KIND_VOLUNTARY && !o->preempt && o->state) {
		if (!(r->flags & CTXSW_RF_EARLY_WAKE)) {
			r->state = CTXSW_ST_SLEEP;
			r->sleep_idx = sleep_class(o->state);
		} else if (r->early_ts > ts) {
			/* the waking came after this switch-out in time: it
			 * slept until then, as the ordered stream says */
			r->state = CTXSW_ST_SLEEP;
			r->sleep_idx = sleep_class(o->state);
			row_advance(r, r->early_ts);
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, r->early_ts, r->early_waker);
		} else {
			/* woken before it left, or the waking was one the
			 * kernel found it still queued for (it ran on, and
			 * this is a later sleep): row_waking() tells */
			r->state = CTXSW_ST_RUNNABLE;
			r->sleep_idx = sleep_class(o->state);
			r->flags |= CTXSW_RF_MAYBE_WOKEN;
			lat_begin(r, ts, r->early_waker);
		}
	} else {
		r->state = CTXSW_ST_RUNNABLE;
	}
	r->flags &= ~CTXSW_RF_EARLY_WAKE;
	return kind | guessed;
}

static __always_inline void row_switch_in(struct ctxsw_row *r, __u64 ts,
					  __s32 cpu, __s32 prev_tid, __u64 nv,
					  __u64 niv)
{
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNING, ts);
	} else {
		/* still on another CPU, which has not switched since: it
		 * left that CPU unseen (the account's switch_in()) */
		if (r->state == CTXSW_ST_RUNNING && r->cpu != cpu) {
			struct ctxsw_cpu *c = this_cpu();

			row_left_unseen(r);
			if (c)
				c->missed_out++;
		}
		row_advance(r, ts);
	}
	if (r->flags & CTXSW_RF_LAT_PENDING)
		lat_end(r, ts, cpu, prev_tid);
	r->switch_in++;
	r->state = CTXSW_ST_RUNNING;
	r->flags &= ~CTXSW_RF_MAYBE_WOKEN; /* it was woken, as it seemed */
	r->cpu = cpu;
	r->nvcsw = nv;
	r->nivcsw = niv;
	r->csw_valid = 1;
}

static __always_inline void row_waking(struct ctxsw_row *r, __u64 ts,
				       __s32 waker)
{
	r->wakeups++;
	if (r->state == CTXSW_ST_RUNNABLE &&
	    (r->flags & CTXSW_RF_MAYBE_WOKEN)) {
		/* A waking before the switch-in: the one seen while it ran
		 * was not for this sleep (the kernel found the task still
		 * queued, set it running and let it go on), so it slept
		 * from its switch-out (state_ts, sleep_idx) to this one. */
		r->flags &= ~(CTXSW_RF_MAYBE_WOKEN | CTXSW_RF_LAT_PENDING);
		r->state = CTXSW_ST_SLEEP;
	}
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNABLE, ts);
		lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_SLEEP) {
		if (ts < r->state_ts) {
			/* it fired before the switch-out that put the task
			 * to sleep (that CPU won the lock): in time order it
			 * was an early wake, waiting from the switch-out */
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, r->state_ts, waker);
		} else {
			row_advance(r, ts);
			r->state = CTXSW_ST_RUNNABLE;
			lat_begin(r, ts, waker);
		}
	} else if (r->state == CTXSW_ST_RUNNING && ts >= r->state_ts) {
		/* it is woken before it left, or the kernel finds it still
		 * queued and lets it run on: its next switch-out and what
		 * follows it tell which (row_switch_out()) */
		r->flags |= CTXSW_RF_EARLY_WAKE;
		r->early_waker = waker < 0 ? -1 : waker;
		r->early_ts = ts;
	}
}

static __always_inline void row_wakeup_new(struct ctxsw_row *r, __u64 ts,
					   __s32 waker)
{
	r->wakeups++;
	if (r->state == CTXSW_ST_NEW) {
		row_start(r, CTXSW_ST_RUNNABLE, ts);
		lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_RUNNABLE) {
		if (!(r->flags & CTXSW_RF_LAT_PENDING))
			lat_begin(r, ts, waker);
	} else if (r->state == CTXSW_ST_SLEEP) {
		row_advance(r, ts);
		r->state = CTXSW_ST_RUNNABLE;
		lat_begin(r, ts, waker);
	}
}

/* The CPU's busy/idle time up to @ts; returns the tid it last switched
 * to (-1 before its first switch). */
static __always_inline __s32 agg_cpu_switch(__u64 ts, __s32 next_tid)
{
	struct ctxsw_cpu *c = this_cpu();
	struct ctxsw_cpu_agg *a;
	__s32 cur = -1;

	if (!c)
		return -1;
	a = &c->agg;
	if (a->in_span) {
		__u64 d = ts > a->state_ts ? ts - a->state_ts : 0;

		if (a->cur == 0)
			a->idle_ns += d;
		else
			a->busy_ns += d;
		a->state_ts = a->last_ts = ts;
		cur = a->cur;
	} else {
		a->in_span = 1;
		a->first_ts = a->last_ts = a->state_ts = ts;
	}
	a->cur = next_tid;
	a->switches++;
	return cur;
}

/*
 * This CPU switched from another task than @cur, the one it last switched
 * to: @cur's switch-out was never traced (seen for threads of PID 1 on some
 * kernels).  The account's missed_out() rule: when it left is unknown, so
 * its run ends at its last known state change (the lower bound) and it
 * sleeps ("other") from there.  Left running, it would be charged run time
 * to the end of the capture, more than any CPU had.
 */
static __always_inline void agg_missed_out(__s32 cur, __s32 cpu)
{
	struct ctxsw_row *r = row_get(cur, false);
	struct ctxsw_cpu *c = this_cpu();

	if (c)
		c->missed_out++;
	if (!r || !row_lock(r))
		return;
	if (r->state == CTXSW_ST_RUNNING && r->cpu == cpu)
		row_left_unseen(r);
	row_unlock(r);
}

/*
 * The row of task @t (@ti read from it) when the filters let it in, made
 * if missing; NULL otherwise.  Under a pid filter a live row of the same
 * process is one they let in already: an index away, where the filter is
 * a hash lookup (a third of what a switch cost under `stat -- CMD`).  A
 * thread can leave a cgroup, so that filter is asked every time.
 */
static __always_inline struct ctxsw_row *row_of(struct task_struct *t,
						const struct task_info *ti)
{
	struct ctxsw_row *r;

	if (!filtering())
		return row_get(ti->tid, true);
	if (!cg_id) {
		r = row_get(ti->tid, false);
		if (r && r->tgid == ti->tgid)
			return r;
	}
	return task_selected_as(t, true) ? row_get(ti->tid, true) : NULL;
}

struct inflight { /* the part of a row that says what it does */
	__u64 lat_ts, early_ts, nvcsw, nivcsw;
	__s32 lat_waker, early_waker, cpu;
	__u32 csw_valid;
	__u8 state, sleep_idx, flags;
};

/*
 * A non-leader thread @old_pid exec'd: the kernel gave it the leader's tid
 * in de_thread(), after the leader died and before the exec event.  It
 * goes on under that tid, in the same process (CTXSW_TOOK_OVER: its
 * parent @ppid, the leader's), in the state it was in; its old row ends
 * (account.c's exec_takeover()).  Its row under the tid may be there
 * already, alive where the leader's died: made at its first switch
 * (agg_exec_early()), or by another event of it; that row goes on, and
 * the old one ends where it began.
 */
static __always_inline void agg_takeover(struct task_info *ti, __u32 old_pid,
					 __s32 ppid, __u64 ts)
{
	__u32 tid = ti->tid;
	struct ctxsw_row *o, *l = row_get(tid, false), *n;
	struct inflight st = {};
	bool alive = false, early = false;
	__u64 end = ts;

	if (l && row_lock(l)) {
		early = row_alive(l);
		if (early && l->first_ts < end)
			end = l->first_ts;
		row_unlock(l);
		if (!early)
			row_bury(tid, l, ts);
	}
	o = row_get(old_pid, false);
	if (o && row_lock(o)) {
		alive = row_alive(o) && !early;
		if (o->tgid <= 0)
			o->tgid = tid;
		if (alive) {
			row_advance(o, ts);
			st.state = o->state;
			st.sleep_idx = o->sleep_idx;
			st.flags = o->flags;
			st.cpu = o->cpu;
			st.lat_ts = o->lat_ts;
			st.lat_waker = o->lat_waker;
			st.early_ts = o->early_ts;
			st.early_waker = o->early_waker;
			st.csw_valid = o->csw_valid;
			st.nvcsw = o->nvcsw;
			st.nivcsw = o->nivcsw;
		}
		row_end(o, end > o->state_ts ? end : o->state_ts);
		row_unlock(o);
		row_bury(old_pid, o, ts);
	}
	n = early ? l : row_get(tid, true);
	if (!n || !row_lock(n))
		return;
	row_learn(n, ti);
	n->tgid = tid;
	n->exited |= CTXSW_TOOK_OVER;
	if (ppid > 0)
		n->ppid = ppid;
	if (alive) {
		row_start(n, st.state, ts);
		n->sleep_idx = st.sleep_idx;
		n->flags = st.flags;
		n->cpu = st.cpu;
		n->lat_ts = st.lat_ts;
		n->lat_waker = st.lat_waker;
		n->early_ts = st.early_ts;
		n->early_waker = st.early_waker;
		n->csw_valid = st.csw_valid;
		n->nvcsw = st.nvcsw;
		n->nivcsw = st.nivcsw;
	}
	row_unlock(n);
}

/*
 * This CPU's current task @cur switches out as @prev: if @cur is a thread
 * of process @prev (its row's tgid), running, and no live row has the
 * tid, an exec in @cur made it the leader (de_thread()), and the exec
 * event is still to come: the row is taken over here.  True if so.
 */
static __always_inline bool agg_exec_early(__s32 cur, struct task_info *pi,
					   struct task_struct *prev, __u64 ts)
{
	struct ctxsw_row *o = row_get(cur, false), *l;
	bool yes = false;

	if (!o || pi->tid != pi->tgid || !row_lock(o))
		return false;
	yes = o->tgid == pi->tid && o->state == CTXSW_ST_RUNNING;
	row_unlock(o);
	if (!yes)
		return false;
	l = row_get(pi->tid, false);
	if (l && row_alive(l))
		return false;
	agg_takeover(pi, cur, BPF_CORE_READ(prev, real_parent, tgid), ts);
	return true;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(agg_sched_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct sw_out o = { .preempt = preempt };
	struct task_info pi, ni;
	struct ctxsw_row *r;
	__s32 cpu, cur;
	__u64 nnv, nniv;
	__u32 raw, kind = 0;

	if (!cpu_selected())
		return 0;
	o.ts = bpf_ktime_get_ns();
	cpu = bpf_get_smp_processor_id();
	if (sw_state_arg)
		raw = (__u32)ctx[3];
	else
		raw = task_state_raw(prev);
	o.state = preempt ? 0 : report_state(raw, prev->exit_state);
	read_task_btf(prev, &pi);
	read_task_btf(next, &ni);
	cur = agg_cpu_switch(o.ts, ni.tid);
	o.cpu = cpu;
	if (cur >= 0 && cur != pi.tid)
		o.run = slice_run(prev, true);
	if (cur > 0 && cur != pi.tid && !agg_exec_early(cur, &pi, prev, o.ts))
		agg_missed_out(cur, cpu);
	/* a switch after __exit_signal() folded the thread's counters into
	 * its process, or after a leader's reap read them, is not in
	 * rusage; exit_state is set earlier, in exit_notify(), and a switch
	 * before is counted: exit_side() */
	o.fold = exit_side(prev, pi.tid, pi.tgid, prev->exit_state, true);

	if (pi.tid > 0 && (r = row_of(prev, &pi))) {
		o.nv = prev->nvcsw;
		o.niv = prev->nivcsw;
		if (row_lock(r)) {
			row_learn_btf(r, &pi, prev, true);
			kind = row_switch_out(r, &o);
			row_unlock(r);
			if ((kind & 7) == CTXSW_KIND_EXIT)
				row_bury(pi.tid, r, o.ts);
			if (kind & 8) {
				struct ctxsw_cpu *c = this_cpu();

				if (c)
					c->inexact++;
			}
		}
	}
	if (ni.tid > 0 && (r = row_of(next, &ni))) {
		nnv = next->nvcsw;
		nniv = next->nivcsw;
		if (row_lock(r)) {
			row_learn_btf(r, &ni, next, false);
			row_switch_in(r, o.ts, cpu, pi.tid, nnv, nniv);
			row_unlock(r);
		}
	}
	return 0;
}

/* The row of @p for an event, after the filters; NULL to ignore it. */
static __always_inline struct ctxsw_row *agg_row(struct task_struct *p,
						 struct task_info *ti)
{
	if (!cpu_selected())
		return NULL;
	read_task_btf(p, ti);
	if (ti->tid <= 0)
		return NULL;
	return row_of(p, ti);
}

static __always_inline int agg_wake(struct task_struct *p, __u8 type)
{
	__u64 ts = bpf_ktime_get_ns();
	__s32 waker = (__s32)(__u32)bpf_get_current_pid_tgid();
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (!r || !row_lock(r))
		return 0;
	row_learn_btf(r, &ti, p, false);
	if (type == CTXSW_WAKING)
		row_waking(r, ts, waker);
	else
		row_wakeup_new(r, ts, waker);
	row_unlock(r);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(agg_sched_waking, struct task_struct *p)
{
	return agg_wake(p, CTXSW_WAKING);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(agg_sched_wakeup_new, struct task_struct *p)
{
	return agg_wake(p, CTXSW_WAKEUP_NEW);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(agg_sched_migrate_task, struct task_struct *p, int dest_cpu)
{
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (!r || !row_lock(r))
		return 0;
	row_learn_btf(r, &ti, p, false);
	r->migrations++;
	row_unlock(r);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(agg_sched_process_fork, struct task_struct *parent,
	     struct task_struct *child)
{
	__u64 ts = bpf_ktime_get_ns();
	bool sel = fork_follow(parent, child);
	__s32 ppid = BPF_CORE_READ(parent, tgid);
	struct task_info ti;
	struct ctxsw_row *r;
	bool reuse = false;

	if (!cpu_selected() || !sel || (cg_id && !task_selected(child)))
		return 0;
	read_task(child, &ti);
	if (ti.tid <= 0)
		return 0;
	r = row_get(ti.tid, false);
	if (r) {
		/* a row only declared (state never seen) is this child;
		 * anything else had this tid before and died unseen */
		if (row_lock(r)) {
			if (r->state == CTXSW_ST_NEW && !r->exited &&
			    !r->migrations)
				reuse = true;
			else if (row_alive(r))
				row_end(r, ts);
			row_unlock(r);
		}
		if (!reuse)
			row_bury(ti.tid, r, ts);
	}
	r = row_get(ti.tid, true);
	if (!r || !row_lock(r))
		return 0;
	row_learn(r, &ti);
	/* a process's parent is the one that reaps it: the forker's own
	 * parent under CLONE_PARENT; a thread's, its forker's process */
	r->ppid = ti.tid == ti.tgid ? BPF_CORE_READ(child, real_parent, tgid) :
				      ppid;
	row_start(r, CTXSW_ST_RUNNABLE, ts);
	row_unlock(r);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(agg_sched_process_exec, struct task_struct *p, int old_pid)
{
	struct task_info ti;
	__u64 ts;

	/* A leader's exec writes nothing: its new comm is in its row from
	 * its next switch-out on, which always copies the comm (the row
	 * lock is not the current task's to take here, see row_lock()).
	 * Told first, before the clock and the filters. */
	if (old_pid <= 0 || old_pid == p->pid)
		return 0;
	ts = bpf_ktime_get_ns();
	if (!cpu_selected() || (filtering() && !task_selected(p)))
		return 0;
	read_task(p, &ti);
	if (ti.tid <= 0)
		return 0;
	agg_takeover(&ti, old_pid, BPF_CORE_READ(p, real_parent, tgid), ts);
	return 0;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(agg_sched_process_free, struct task_struct *p)
{
	return on_free(p);
}

/* A process left unreaped (ctxsw.bpf.h): a mark user space sets on the
 * process's row wherever it is by then, live or buried (bpf_agg.c).  The
 * row is not written here: this runs with interrupts on, and a wakeup of
 * the child from an interrupt on this CPU would wait for a lock held by
 * the code it interrupted. */
static __always_inline void orphan_found(struct task_struct *c, __s32 tgid,
					 __s32 parent, __u8 why)
{
	struct ctxsw_orphan_key k = { .tid = tgid };
	__u64 ts = bpf_ktime_get_ns();

	(void)parent;
	(void)why;
	if (k.tid <= 0)
		return;
	k.start = BPF_CORE_READ(c, group_leader, start_time);
	if (bpf_map_update_elem(&orphan_marks, &k, &ts, BPF_ANY))
		count_dropped();
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(agg_sched_process_exit, struct task_struct *p)
{
	struct task_info ti;
	struct ctxsw_row *r = agg_row(p, &ti);

	if (r)
		row_mark_exited(r);
	/* do_exit() has decremented signal->live before the event */
	/* it needs bpf_loop() anyway (row_lock()) */
	orphans_of_exit(p, BPF_CORE_READ(p, signal, live.counter) == 0, true);
	return 0;
}
