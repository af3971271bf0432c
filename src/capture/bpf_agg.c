/*
 * bpf_agg.c - the bpf-agg backend's rows: the aggregation object's
 * per-thread table (ctxsw_agg.bpf.c) read into struct ctxmon_stats rows,
 * with the rows of dead threads drained from the kernel as the capture
 * goes (so its table stays small) and the oldest folded by comm, and the
 * per-CPU counters read into CPU rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "ctxsw.h"
#include "bpf_backend.h"
#include "bpf_priv.h"


void bpf_row__stats(const struct ctxsw_row *r, uint64_t now,
		    struct strtab *strs, struct ctxmon_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->tid = r->tid;
	s->tgid = r->tgid > 0 ? r->tgid : -1;
	s->ppid = r->ppid;
	s->comm = strtab__intern(strs, r->comm, CTXSW_COMM_LEN);
	s->nthreads = 1;
	s->exited = r->exited & CTXSW_EXITED;
	/* its parent will not reap it: the rusage comparison leaves it out */
	s->orphaned = r->exited & CTXSW_EXITED_ORPHAN;
	s->took_over = r->exited & CTXSW_TOOK_OVER;
	/* only selected tasks have rows */
	s->target = true;
	s->first_ts = r->first_ts;
	s->last_ts = r->last_ts;
	s->switch_in = r->switch_in;
	s->switch_out = r->switch_out;
	s->voluntary = r->voluntary;
	s->involuntary = r->involuntary;
	s->exit_switch = r->exit_switch;
	s->after_fold = r->after_fold;
	s->after_fold_vol = r->after_fold_vol;
	s->exit_preempt = r->exit_preempt;
	s->exit_counted = r->exit_counted;
	s->run_ns = r->run_ns;
	s->wait_ns = r->wait_ns;
	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		s->sleep_ns[i] = r->sleep_ns[i];
	s->migrations = r->migrations;
	s->wakeups = r->wakeups;
	s->lat.count = r->lat.count;
	s->lat.sum_ns = r->lat.sum_ns;
	s->lat.max_ns = r->lat.max_ns;
	s->lat.max_ts = r->lat.max_ts;
	s->lat.max_waker_tid = r->lat.max_waker_tid;
	s->lat.max_cpu = r->lat.max_cpu;
	s->lat.max_prev_tid = r->lat.max_prev_tid;
	memcpy(s->lat.hist, r->lat.hist, sizeof(s->lat.hist));

	/* the interval still open, charged up to @now as finish() does */
	if (r->state != CTXSW_ST_NEW && r->state != CTXSW_ST_DEAD &&
	    now > r->state_ts) {
		uint64_t d = now - r->state_ts;

		if (r->state == CTXSW_ST_RUNNING)
			s->run_ns += d;
		else if (r->state == CTXSW_ST_RUNNABLE &&
			 !(r->flags & CTXSW_RF_MAYBE_WOKEN))
			s->wait_ns += d;
		else	/* asleep; or runnable or asleep, which the next event
			 * tells (MAYBE_WOKEN), for what may be a sleep's time,
			 * so charged as one until then */
			s->sleep_ns[r->sleep_idx < 3 ? r->sleep_idx : 2] += d;
		s->last_ts = now;
	}
}

/*
 * Row @r's latency maximum of the interval this read ends, into @l over
 * the whole run's that bpf_row__stats() put there.  The programs keep a
 * maximum per value of the row's ireq (imax_add()), which each read with
 * intervals moves on, G to G + 1, just before it copies a live row
 * (@bumped; a dead row's copy drained before this read was not).  This
 * interval's latencies are those after the last read's copy: G's, less
 * the ones G had before that copy (a moment after G began), and G + 1's
 * so far.  What G had before the copy is told by the count and G's
 * maximum at it (seen_*): G's maximum is this interval's when G had
 * nothing then, or when it is no longer the one seen then.  Otherwise,
 * unless G + 1's is larger, only a bound is known: max_is_bound, with
 * max_ns the least bound known here (the caller lowers it to the
 * interval's highest bucket).
 */
void bpf_row__interval_max(const struct ctxsw_row *r, bool bumped,
			   struct ctxmon_latency *l)
{
	uint32_t g = bumped ? r->ireq - 1 : r->ireq;
	const struct ctxsw_imax *c = &r->lat.icur, *pv = &r->lat.iprev;
	const struct ctxsw_imax *tail = NULL, *win = NULL, *best = NULL;
	bool tail_known = true;

	if (c->n && c->gen == g)
		tail = c;
	else if (pv->n && pv->gen == g)
		tail = pv;
	if (bumped && c->n && c->gen == g + 1)
		win = c;
	if (tail && tail->count0 < r->seen_count &&
	    tail->max_ns == r->seen_max_ns && tail->max_ts == r->seen_max_ts)
		tail_known = false;
	if (tail && tail_known)
		best = tail;
	if (win && (!best || win->max_ns > best->max_ns))
		best = win;
	if (tail && !tail_known && best && best->max_ns < tail->max_ns)
		best = NULL; /* the part of G not known may hold more */
	if (best) {
		l->max_ns = best->max_ns;
		l->max_ts = best->max_ts;
		l->max_waker_tid = best->waker_tid;
		l->max_cpu = best->cpu;
		l->max_prev_tid = best->prev_tid;
		l->max_is_bound = false;
		return;
	}
	/* none known: at most G's maximum, which holds the part of G in
	 * this interval, or the whole run's */
	l->max_is_bound = r->lat.count > r->seen_count;
	if (tail && (!win || win->max_ns <= tail->max_ns))
		l->max_ns = tail->max_ns;
	l->max_ts = 0;
	l->max_waker_tid = l->max_cpu = l->max_prev_tid = -1;
	if (!l->max_is_bound)
		l->max_ns = 0;
}

static int fold_dead(struct bpf_priv *p, size_t k);

/* Room for element @n of the array *@v of *@cap elements of @sz bytes
 * (@first at the start); 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t sz, size_t first)
{
	size_t nc;
	void *m;

	if (n < *cap)
		return 0;
	nc = *cap ? *cap * 2 : first;
	m = realloc(*v, nc * sz);
	if (!m)
		return -ENOMEM;
	*v = m;
	*cap = nc;
	return 0;
}

/* Whether mark @m is for row @r: its tid, and the row began at or
 * after the process started and before the mark (a later process with
 * the tid starts only after this one is reaped, after the mark). */
static bool mark_fits(const struct bpf_orphan_mark *m,
		      const struct ctxsw_row *r)
{
	return r->tid == m->k.tid && r->first_ts >= m->k.start &&
	       r->first_ts <= m->ts;
}

/*
 * Take the orphan marks out of the kernel's map and set them on the dead
 * rows they are for: all rows for a new mark, only those drained since
 * (from index @from) for one kept from before.  A mark whose row has not
 * died yet waits, and is set on each copy of the live row read meanwhile
 * (bpf_backend__read_rows()); most leave with their row.
 */
static int apply_marks(struct bpf_priv *p, size_t from)
{
	int fd = bpf_map__fd(p->maps.orphan_marks);
	struct ctxsw_orphan_key key, next;
	size_t old = p->nmarks, k = 0;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (grow((void **)&p->marks, &p->marks_cap, p->nmarks,
			 sizeof(*p->marks), 64) < 0)
			return -ENOMEM;
		p->marks[p->nmarks].k = next;
		if (bpf_map_lookup_elem(fd, &next, &p->marks[p->nmarks].ts) == 0)
			p->nmarks++;
		key = next;
		prev = &key;
	}
	for (size_t i = old; i < p->nmarks; i++)
		bpf_map_delete_elem(fd, &p->marks[i].k);
	for (size_t i = 0; i < p->nmarks; i++) {
		bool hit = false;

		for (size_t j = i < old ? from : 0; j < p->ndead; j++) {
			if (mark_fits(&p->marks[i], &p->dead[j])) {
				p->dead[j].exited |= CTXSW_EXITED_ORPHAN;
				hit = true;
			}
		}
		if (!hit)
			p->marks[k++] = p->marks[i];
	}
	p->nmarks = k;
	return 0;
}

/* The row in slot @i of the mapped array. */
static struct ctxsw_row *slot_at(const struct bpf_priv *p, uint32_t i)
{
	return (struct ctxsw_row *)(p->rows_mem + (size_t)i * p->row_sz);
}

/*
 * Rows mapped at first, and the step they grow by (doubling).  The
 * kernel maps an mmapable array's pages in at mmap(), so a mapping of
 * the whole table (36,864 rows, 22 MiB, on a machine of pid_max 32768)
 * would be resident in the reader however few threads it holds.
 */
#define ROWS_MAP_FIRST 8192

/*
 * Map the rows array's first rows, at least @used of them (the first
 * ROWS_MAP_FIRST, doubled as needed, at most all nslots); 0, or -errno.
 * A larger mapping replaces the last one, which no pointer outlives.
 */
int bpf_agg__map_rows(struct bpf_priv *p, uint32_t used)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t want = p->rows_mapped ? p->rows_mapped : ROWS_MAP_FIRST;
	size_t len;
	void *m;

	while (want < used && want < p->nslots)
		want = want > p->nslots / 2 ? p->nslots : want * 2;
	if (want > p->nslots)
		want = p->nslots;
	if (p->rows_mem && want <= p->rows_mapped)
		return 0;
	len = (p->row_sz * want + (size_t)page - 1) & ~((size_t)page - 1);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(p->maps.rows), 0);
	if (m == MAP_FAILED)
		return -errno;
	if (p->rows_mem)
		munmap(p->rows_mem, p->rows_len);
	p->rows_mem = m;
	p->rows_len = len;
	p->rows_mapped = want;
	return 0;
}

/* The slots handed out so far in @used (no row lies past them), mapped;
 * 0, or -errno. */
static int slots_used(struct bpf_priv *p, uint32_t *used)
{
	uint32_t n = __atomic_load_n(p->next_slot, __ATOMIC_ACQUIRE);

	*used = n < p->nslots ? n : p->nslots;
	return bpf_agg__map_rows(p, *used);
}

/*
 * A consistent copy of row @src: one no program wrote while it was
 * copied.  A program's write makes the row's seq odd and then even again
 * (ctxsw_agg.bpf.c's row_lock()).  A copy's loads need not go in address
 * order (x86's fast string moves), so the seq of one copy does not date
 * its other words: a copy is kept when the next one is the same, bytes and
 * even seq, which no write in between can give.  A row written without
 * pause (a thread switching a million times a second) may take a few
 * tries; after ROW_READ_TRIES the last copy is used, at most one event
 * off.
 */
#define ROW_READ_TRIES 64

static void read_row(const struct ctxsw_row *src, struct ctxsw_row *r)
{
	struct ctxsw_row again;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	memcpy(r, src, sizeof(*r));
	for (int i = 0; i < ROW_READ_TRIES; i++) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		memcpy(&again, src, sizeof(again));
		if (!(again.seq & 1) && !memcmp(r, &again, sizeof(again)))
			return;
		*r = again;
	}
}

static bool row_buried(const struct ctxsw_row *src)
{
	return __atomic_load_n(&src->exited, __ATOMIC_ACQUIRE) & CTXSW_BURIED;
}

/*
 * How long a drained row's slot is kept from the programs after its
 * burial: longer than a program that found the row just before could
 * still be running (microseconds, or a few milliseconds if the host
 * stopped its vCPU meanwhile).
 */
#define SLOT_GRACE_NS 10000000ull

/* Zero the drained rows buried SLOT_GRACE_NS before @now or earlier and
 * give their slots back to the programs. */
static int free_drained(struct bpf_priv *p, uint64_t now)
{
	int fd = bpf_map__fd(p->maps.free_slots), ret = 0;
	size_t k = 0, i;

	for (i = 0; i < p->ndrained; i++) {
		const struct bpf_drained *d = &p->drained_rows[i];

		if (d->bury_ts + SLOT_GRACE_NS > now) {
			p->drained_rows[k++] = *d;
			continue;
		}
		memset(slot_at(p, d->slot), 0, sizeof(struct ctxsw_row));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		if (bpf_map_update_elem(fd, NULL, &d->slot, BPF_ANY) < 0) {
			ret = -errno;
			break;
		}
	}
	for (; i < p->ndrained; i++)	/* the rest, after an error */
		p->drained_rows[k++] = p->drained_rows[i];
	p->ndrained = k;
	return ret;
}

int bpf_agg__drain_dead(struct bpf_priv *p, uint64_t now)
{
	size_t n = 0, before = p->ndead;
	uint32_t used;
	int ret = 0;

	if (!p->rows_mem)
		return 0;
	ret = slots_used(p, &used);
	if (ret < 0)
		return ret;
	for (uint32_t i = 0; i < used; i++) {
		struct ctxsw_row *src = slot_at(p, i);
		struct ctxsw_row *r;

		/* buried, and not drained yet */
		if ((__atomic_load_n(&src->exited, __ATOMIC_ACQUIRE) &
		     (CTXSW_BURIED | CTXSW_DRAINED)) != CTXSW_BURIED)
			continue;
		ret = grow((void **)&p->dead, &p->dead_cap, p->ndead,
			   sizeof(*p->dead), 256);
		if (!ret)
			ret = grow((void **)&p->drained_rows, &p->drained_cap,
				   p->ndrained, sizeof(*p->drained_rows), 256);
		if (ret)
			break;
		r = &p->dead[p->ndead++];
		read_row(src, r);
		/* no program writes it any more (it is buried), and its slot
		 * goes back once the grace is over */
		__atomic_fetch_or(&src->exited, CTXSW_DRAINED,
				  __ATOMIC_RELAXED);
		p->drained_rows[p->ndrained].slot = i;
		p->drained_rows[p->ndrained++].bury_ts = r->bury_ts;
		n++;
	}
	if (!ret)
		ret = free_drained(p, now);
	if (ret < 0)
		return ret;
	ret = apply_marks(p, before);
	if (ret < 0)
		return ret;
	/* a command's rows are all kept: its rusage comparison needs each
	 * process (analysis/rusage.c); stat folds them for display */
	if (p->ndead >= 2 * CTXMON_EXITED_KEEP &&
	    p->ctx->target != CTXMON_TARGET_CMD)
		ret = fold_dead(p, p->ndead - n < p->ndead - CTXMON_EXITED_KEEP ?
					   p->ndead - n :
					   p->ndead - CTXMON_EXITED_KEEP);
	return ret;
}

/* A forking machine makes dead rows without end: fold the oldest @k by
 * comm.  Not the ones this read drained: their live copies may be in
 * the rows being built, which are dropped by tid and start time. */
static int fold_dead(struct bpf_priv *p, size_t k)
{
	for (size_t i = 0; i < k; i++) {
		struct ctxmon_stats st;

		bpf_row__stats(&p->dead[i], 0, p->ctx->strs, &st);
		if (fold__add(&p->fold, &st) < 0)
			return -ENOMEM;
	}
	memmove(p->dead, p->dead + k, (p->ndead - k) * sizeof(*p->dead));
	p->ndead -= k;
	return 0;
}

void bpf_agg__forget_exited(void *priv)
{
	struct bpf_priv *p = priv;

	p->ndead = 0;
	fold__clear(&p->fold);
}

static int cmp_stats(const void *a, const void *b)
{
	const struct ctxmon_stats *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	return 0;
}

/*
 * A row RUNNING on a CPU which, after the row's switch-in, switched to
 * another task: its switch-out was never traced (seen for threads of PID
 * 1 on some kernels).  Charged to now it would run longer than its CPU
 * was busy.  The CPUs are read before the rows: a row that switched out
 * and in again on the CPU after that read began running after the CPU's
 * last switch seen, and is not taken for one.  (The other order took a
 * row that switched out between the two reads for one: its run up to
 * the read was then left to the next interval, longer than it lasted.)
 */
static bool missed_out(const struct bpf_priv *p, const struct ctxsw_row *r,
		       bool cpus_ok)
{
	const struct ctxsw_cpu_agg *c;

	if (!cpus_ok || r->state != CTXSW_ST_RUNNING || r->cpu < 0 ||
	    r->cpu >= p->nposs)
		return false;
	c = &p->cpubuf[r->cpu].agg;
	return c->in_span && c->cur != (__s32)r->tid &&
	       c->state_ts > r->state_ts;
}

/*
 * The switch program writes the CPU's state first and the rows after
 * it, some hundred ns later: a row read in between looks as if its
 * switch-out went unseen, and its run up to the read would go to the
 * next interval (test_stat_interval fails on the mark it gets).  Such
 * a row changes within microseconds; one whose switch-out was really
 * missed does not.  So a row that looks missed is watched for a change
 * (its seq) up to SETTLE_NS, and read again if it changes
 * (bpf_row__settle()); at most SETTLE_BUDGET_NS in all per read, and a
 * row taken for missed is not waited for again while it stays as it
 * was (bpf_priv.unseen).  This runs before the read's time is taken:
 * the row's events stay before it.
 */
#define SETTLE_BUDGET_NS 1000000ull

void bpf_row__settle(const struct ctxsw_row *src, struct ctxsw_row *r,
		     uint64_t *budget)
{
	uint64_t start = clock__now_ns(), t = start, wait = SETTLE_NS;

	if (wait > *budget)
		wait = *budget;
	for (;;) { /* the seq is looked at after the last clock read */
		if (__atomic_load_n(&src->seq, __ATOMIC_ACQUIRE) != r->seq) {
			read_row(src, r);
			break;
		}
		if (t - start >= wait)
			break;
		t = clock__now_ns();
	}
	*budget -= t - start < *budget ? t - start : *budget;
}

/* Whether the last read took @r, unchanged since, for a missed
 * switch-out already. */
static bool known_unseen(const struct bpf_priv *p, const struct ctxsw_row *r)
{
	for (size_t i = 0; i < p->nunseen; i++)
		if (p->unseen[i].tid == (int32_t)r->tid &&
		    p->unseen[i].state_ts == r->state_ts)
			return true;
	return false;
}

/* What this read saw of live row @r, for the next (bpf_row__interval_max()): in
 * the row itself, if its slot still holds it. */
static void seen(struct bpf_priv *p, const struct ctxsw_row *r)
{
	const struct ctxsw_imax *c = &r->lat.icur;
	struct ctxsw_row *src;

	if (!r->slot || r->slot > p->rows_mapped)
		return;
	src = slot_at(p, r->slot - 1);
	if (src->tid != r->tid || src->first_ts != r->first_ts)
		return;
	src->seen_count = r->lat.count;
	if (c->n && c->gen == r->ireq) {
		src->seen_max_ns = c->max_ns;
		src->seen_max_ts = c->max_ts;
	} else {
		src->seen_max_ns = src->seen_max_ts = 0;
	}
}

int bpf_backend__read_rows(void *priv, uint64_t *nowp,
			   struct ctxmon_stats **rows, size_t *n, bool interval,
			   bool *ival_max)
{
	struct bpf_priv *p = priv;
	uint64_t now = *nowp;
	struct ctxsw_row *live = NULL;
	struct ctxmon_stats *out = NULL;
	size_t nlive = 0, cap = 0, cnt = 0;
	uint64_t budget = SETTLE_BUDGET_NS;
	uint32_t used;
	int ret = 0;
	bool cpus_ok;

	if (!p->aggregate || !p->rows_mem)
		return -EINVAL;
	ret = slots_used(p, &used);
	if (ret < 0)
		return ret;
	*ival_max = interval;
	if (interval)
		p->ireads++;
	cpus_ok = bpf__read_cpu_state(p) == 0;	/* before the rows */
	for (uint32_t i = 0; i < used; i++) {
		struct ctxsw_row *src = slot_at(p, i);

		/* free, created and not yet filled in, or dead (drained
		 * below) */
		if (!__atomic_load_n(&src->tid, __ATOMIC_RELAXED) ||
		    row_buried(src))
			continue;
		ret = grow((void **)&live, &cap, nlive, sizeof(*live), 256);
		if (ret < 0)
			goto out;
		if (interval) {
			/* a new interval for the programs' maxima, before the
			 * copy (bpf_row__interval_max()); a full barrier, so that no
			 * program that locks the row after the copy still
			 * sees the old one */
			src->iread = p->ireads;
			__atomic_fetch_add(&src->ireq, 1, __ATOMIC_SEQ_CST);
		}
		read_row(src, &live[nlive]);
		if (budget && missed_out(p, &live[nlive], cpus_ok) &&
		    !known_unseen(p, &live[nlive]))
			bpf_row__settle(src, &live[nlive], &budget);
		if (live[nlive].tid && !(live[nlive].exited & CTXSW_BURIED))
			nlive++;
	}
	/* after the live walk: a thread that died meanwhile is found here,
	 * and its stale live copy dropped below */
	ret = bpf_agg__drain_dead(p, now);
	if (ret < 0)
		goto out;
	if (p->enabled) {
		/* every row and CPU read holds time up to its last event,
		 * before this: charged to an earlier @now, a thread that
		 * switched since would have more time than the span */
		uint64_t t = clock__now_ns();

		if (t > now)
			now = t;
	}
	p->cpus_read_at = cpus_ok ? now : 0;

	out = malloc((p->ndead + nlive + p->fold.n + 1) * sizeof(*out));
	if (!out) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->ndead; i++) {
		bpf_row__stats(&p->dead[i], 0, p->ctx->strs, &out[cnt]);
		if (interval)
			bpf_row__interval_max(&p->dead[i],
					      p->dead[i].iread == p->ireads,
					      &out[cnt].lat);
		cnt++;
	}
	p->nunseen = 0;
	for (size_t i = 0; i < nlive; i++) {
		bool stale = false;

		for (size_t j = 0; j < p->ndead && !stale; j++)
			stale = p->dead[j].tid == live[i].tid &&
				p->dead[j].first_ts == live[i].first_ts;
		if (stale)
			continue;
		for (size_t j = 0; j < p->nmarks; j++)
			if (mark_fits(&p->marks[j], &live[i]))
				live[i].exited |= CTXSW_EXITED_ORPHAN;
		if (missed_out(p, &live[i], cpus_ok)) {
			/* its CPU went on without it: its switch-out was not
			 * traced, so do not charge it run time up to now */
			if (grow((void **)&p->unseen, &p->unseen_cap, p->nunseen,
				 sizeof(*p->unseen), 16) == 0)
				p->unseen[p->nunseen++] = (struct bpf_unseen){
					.tid = (int32_t)live[i].tid,
					.state_ts = live[i].state_ts,
				};
			bpf_row__stats(&live[i], 0, p->ctx->strs, &out[cnt]);
			out[cnt].incomplete = true;
		} else {
			bpf_row__stats(&live[i], now, p->ctx->strs, &out[cnt]);
		}
		if (interval) {
			bpf_row__interval_max(&live[i], true, &out[cnt].lat);
			seen(p, &live[i]);
		}
		cnt++;
	}
	qsort(out, cnt, sizeof(*out), cmp_stats);
	/* generations of a reused tid, oldest first */
	for (size_t i = 1; i < cnt; i++)
		if (out[i].tid == out[i - 1].tid)
			out[i].gen = out[i - 1].gen + 1;
	cnt += fold__copy(&p->fold, out + cnt);
out:
	free(live);
	if (ret < 0) {
		free(out);
		return ret;
	}
	*rows = out;
	*n = cnt;
	*nowp = now;
	return 0;
}

int bpf_backend__read_cpus(void *priv, uint64_t now,
			   struct ctxmon_cpu_stats **cpus, size_t *n)
{
	struct bpf_priv *p = priv;
	struct ctxmon_cpu_stats *out;
	size_t cnt = 0;
	int ret;

	if (!p->aggregate)
		return -EINVAL;
	/* the CPUs of the rows' read, of the same instant, or read now */
	if (!now || now != p->cpus_read_at) {
		ret = bpf__read_cpu_state(p);
		if (ret < 0)
			return ret;
	}
	out = calloc((size_t)p->nposs, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (int c = 0; c < p->nposs; c++) {
		const struct ctxsw_cpu_agg *a = &p->cpubuf[c].agg;
		struct ctxmon_cpu_stats *s;

		if (!a->in_span)
			continue;
		s = &out[cnt++];
		s->cpu = c;
		s->first_ts = a->first_ts;
		s->last_ts = a->last_ts;
		s->busy_ns = a->busy_ns;
		s->idle_ns = a->idle_ns;
		s->switches = a->switches;
		s->lost = p->cpubuf[c].rows_dropped;
		if (now > a->state_ts) {
			if (a->cur == 0)
				s->idle_ns += now - a->state_ts;
			else
				s->busy_ns += now - a->state_ts;
			s->last_ts = now;
		}
	}
	*cpus = out;
	*n = cnt;
	return 0;
}
