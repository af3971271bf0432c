/*
 * rusage.c - replay the kernel's reaping over a command's rows, so the
 * comparison with getrusage counts what the kernel counts (rusage.h).
 *
 * The kernel's rule (kernel/exit.c): a thread's counters go into its
 * process when the thread is released; a process's (its live and dead
 * threads', plus what it reaped itself) go into its parent's
 * signal->cnvcsw when the parent reaps it in wait_task_zombie().  A
 * process whose parent dies first is reparented (forget_original_parent)
 * to a subreaper or init, which reaps it: its counters, and all it
 * reaped, are lost to the command.  The command ctxmon runs is reaped by
 * ctxmon.  So a process is in the command's rusage when it is the
 * command, or when it died while its parent was still alive and that
 * parent is in.  Processes still alive when the command died are out: the
 * command did not reap them.
 *
 * Identity: a tgid can be used again once its process has been reaped, so
 * a process is (tgid, incarnation); a leader row whose tgid's latest
 * process has ended starts a new one, and a non-leader thread or a child
 * belongs to the latest incarnation that started before it.
 *
 * Two cases have no tracepoint: a zombie whose parent dies without
 * reaping it (reaped by init, yet it died while its parent lived), and a
 * child of a parent that ignores SIGCHLD (released unreaped as it exits).
 * The BPF backends see both in the task structs and mark the process
 * (ORPHAN events; bpf-agg's rows): a leader row that comes in marked
 * ->orphaned is out, whatever the times say.
 *
 * With the marks, a process is out only when marked: the times (a child
 * that ended after its parent) are a guess, used without them, or past
 * the children an exit the marks cover (128, or 32768 for bpf-agg;
 * outlived()).
 *
 * Limits: without the marks (perf, ftrace, imported text) those two cases
 * are counted in; a process reparented to a subreaper inside the tree is
 * counted out.  docs/accounting.md says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/rusage.h"

struct rproc {
	pid_t tgid, ppid;
	uint64_t start, end;
	uint64_t exit_ev;	/* its last thread's sched_process_exit, 0:
				 * not known (a thread's without one) */
	bool exit_unknown;	/* a thread ended without one */
	bool ended;
	bool counted;
	bool has_leader;
	bool unreaped;	/* marked by the backend: never reaped by its parent */
	int32_t prev;	/* earlier incarnation of this tgid, -1 */
	int32_t parent;	/* resolved at result, -1 */
	uint32_t nchildren;	/* resolved at result */
	struct rusage_sums own;
};

struct rslot {
	pid_t tgid;
	int32_t idx;
};

struct rusage_model {
	pid_t root;
	struct rproc *p;
	size_t n, cap;
	struct rslot *h;	/* tgid -> latest incarnation; tgid 0: empty */
	size_t hcap;
	bool resolved;
	unsigned marks;	/* every unreaped process comes marked, up to this
			 * many children an exit (0: no marks) */
};

struct rusage_model *rusage__new(pid_t root, unsigned marks)
{
	struct rusage_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->root = root;
	m->marks = marks;
	return m;
}

void rusage__free(struct rusage_model *m)
{
	if (!m)
		return;
	free(m->p);
	free(m->h);
	free(m);
}

static size_t slot(const struct rusage_model *m, pid_t tgid)
{
	size_t i = ((uint32_t)tgid * 2654435761u) & (m->hcap - 1);

	while (m->h[i].tgid && m->h[i].tgid != tgid)
		i = (i + 1) & (m->hcap - 1);
	return i;
}

static int32_t latest(const struct rusage_model *m, pid_t tgid)
{
	size_t i;

	if (!m->hcap)
		return -1;
	i = slot(m, tgid);
	return m->h[i].tgid ? m->h[i].idx : -1;
}

/* The incarnation of @tgid that started last at or before @ts; the
 * earliest one if all started later; -1 if none. */
static int32_t find(const struct rusage_model *m, pid_t tgid, uint64_t ts)
{
	int32_t i = latest(m, tgid), last = i;

	while (i >= 0 && m->p[i].start > ts) {
		last = i;
		i = m->p[i].prev;
	}
	return i >= 0 ? i : last;
}

static int grow(struct rusage_model *m)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct rproc *p = realloc(m->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->p = p;
		m->cap = cap;
	}
	if ((m->n + 1) * 2 > m->hcap) {
		size_t cap = m->hcap ? m->hcap * 2 : 512;
		struct rslot *old = m->h;
		size_t ocap = m->hcap;

		m->h = calloc(cap, sizeof(*m->h));
		if (!m->h) {
			m->h = old;
			return -ENOMEM;
		}
		m->hcap = cap;
		for (size_t i = 0; i < ocap; i++) {
			if (old[i].tgid)
				m->h[slot(m, old[i].tgid)] = old[i];
		}
		free(old);
	}
	return 0;
}

static int32_t create(struct rusage_model *m, pid_t tgid, pid_t ppid,
		      uint64_t start)
{
	struct rproc *p;
	size_t s;

	if (grow(m) < 0)
		return -1;
	p = &m->p[m->n];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	p->ppid = ppid;
	p->start = start;
	p->parent = -1;
	p->prev = latest(m, tgid);
	s = slot(m, tgid);
	m->h[s].tgid = tgid;
	m->h[s].idx = (int32_t)m->n;
	return (int32_t)m->n++;
}

void rusage__row(struct rusage_sums *s, const struct ctxmon_stats *t)
{
	bool leader = t->tgid <= 0 || t->tid == t->tgid;

	s->vol += t->voluntary;
	s->invol += t->involuntary;
	s->run_ns += t->run_ns;
	s->exit_switches += t->exit_switch;
	s->shown_running += t->shown_running;
	/* the kernel names them so (io_uring/io-wq.c, sqpoll.c) */
	if (!leader && t->comm &&
	    (!strncmp(t->comm, "iou-wrk-", 8) || !strncmp(t->comm, "iou-sqp-", 8)))
		s->io_workers = true;
	/* A zombie leader's last switch (state Z) is read at reap: counted.
	 * One that shows X was reaped as it switched out: the parent marks
	 * it dead, then reads its counters, and the switch's increment may
	 * fall either side of that read. */
	s->leader_exits += t->exit_counted;
	s->vol += t->exit_counted;
	if (leader && !t->folded && t->exit_switch > t->exit_counted) {
		s->leader_reaped += t->exit_switch - t->exit_counted;
		/* Reaped before its last switch: a preemption after its exit
		 * may come before the reap read its counters, or after.  A
		 * leader that ended a zombie was read after all of them. */
		s->exit_preempt += t->exit_preempt;
	}
	/* real switches, but after a thread's fold or a leader's reap read
	 * its counters (the BPF backends tell): never reported */
	s->after_fold += t->after_fold;
	s->invol -= t->after_fold;
	s->after_fold_vol += t->after_fold_vol;
	s->vol -= t->after_fold_vol;
	if (!leader) {
		s->exit_preempt += t->exit_preempt;
		s->exit_block += t->exit_block;
	}
}

static void sums_add(struct rusage_sums *to, const struct rusage_sums *f)
{
	to->vol += f->vol;
	to->invol += f->invol;
	to->exit_switches += f->exit_switches;
	to->leader_exits += f->leader_exits;
	to->leader_reaped += f->leader_reaped;
	to->exit_preempt += f->exit_preempt;
	to->after_fold += f->after_fold;
	to->after_fold_vol += f->after_fold_vol;
	to->exit_block += f->exit_block;
	to->shown_running += f->shown_running;
	to->run_ns += f->run_ns;
	to->procs += f->procs;
	to->io_workers = to->io_workers || f->io_workers;
}

static const struct ctxmon_stats *sort_rows;

static pid_t row_tgid(const struct ctxmon_stats *r)
{
	return r->tgid > 0 ? r->tgid : r->tid;
}

/* leaders first, each group by first appearance */
static int cmp_idx(const void *a, const void *b)
{
	const struct ctxmon_stats *x = &sort_rows[*(const size_t *)a];
	const struct ctxmon_stats *y = &sort_rows[*(const size_t *)b];
	bool lx = x->tid == row_tgid(x), ly = y->tid == row_tgid(y);

	if (lx != ly)
		return lx ? -1 : 1;
	if (x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	return 0;
}

/* The exit event of an ended thread row @r, for its process @p. */
static void exit_event(struct rproc *p, const struct ctxmon_stats *r)
{
	uint64_t ev;

	if (!r->exit_lead_ns || r->exit_lead_ns == UINT32_MAX ||
	    r->last_ts < r->exit_lead_ns) {
		p->exit_unknown = true;
		return;
	}
	ev = r->last_ts - r->exit_lead_ns;
	if (ev > p->exit_ev)
		p->exit_ev = ev;
}

static int add_one(struct rusage_model *m, const struct ctxmon_stats *r,
		   struct rusage_sums *folded)
{
	pid_t tgid = row_tgid(r);
	int32_t i;
	struct rproc *p;

	if (r->folded || tgid <= 0) {
		rusage__row(folded, r);
		return 0;
	}
	if (r->tid == tgid) {
		i = latest(m, tgid);
		/* a tgid is used again only after its process was reaped;
		 * a thread that exec'd takes its dead leader's place in the
		 * same process */
		if (i >= 0 && r->took_over)
			m->p[i].ended = false;
		else if (i < 0 || m->p[i].ended)
			i = create(m, tgid, r->ppid, r->first_ts);
		if (i < 0)
			return -ENOMEM;
		p = &m->p[i];
		p->has_leader = true;
		if (r->orphaned)
			p->unreaped = true;
		if (r->first_ts && (!p->start || r->first_ts < p->start))
			p->start = r->first_ts;
		if (r->ppid > 0)
			p->ppid = r->ppid;
		if (r->exited) {
			p->ended = true;
			if (r->last_ts > p->end)
				p->end = r->last_ts;
			exit_event(p, r);
		}
	} else {
		i = find(m, tgid, r->first_ts);
		if (i < 0)
			i = create(m, tgid, -1, r->first_ts);
		if (i < 0)
			return -ENOMEM;
		p = &m->p[i];
		/* the process ends with its last thread */
		if (r->exited && r->last_ts > p->end)
			p->end = r->last_ts;
		if (r->exited)
			exit_event(p, r);
	}
	rusage__row(&p->own, r);
	return 0;
}

int rusage__add(struct rusage_model *m, const struct ctxmon_stats *rows,
		size_t n)
{
	struct rusage_sums folded = { 0 };
	size_t *ix;
	int ret = 0;

	if (!n)
		return 0;
	ix = malloc(n * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ix[i] = i;
	sort_rows = rows;
	qsort(ix, n, sizeof(*ix), cmp_idx);
	for (size_t i = 0; i < n && !ret; i++)
		ret = add_one(m, &rows[ix[i]], &folded);
	free(ix);
	if (folded.exit_switches || folded.vol || folded.invol) {
		/* no place in the tree: the command's own */
		int32_t r = find(m, m->root, 0);

		if (r < 0)
			r = create(m, m->root, -1, 0);
		if (r < 0)
			return -ENOMEM;
		sums_add(&m->p[r].own, &folded);
	}
	m->resolved = false;
	return ret;
}

/*
 * Whether @p, which ended, was handed away by its parent @r, by the
 * times: @r began its exit before @p did.  A parent reaps a child after
 * the child's sched_process_exit and before its own, so a child whose
 * exit event came after its parent's was not reaped by it.  Where the
 * events are not there (rows of bpf-agg, proc), the last switches are
 * compared: a guess, since a child its parent reaps can still switch out
 * for the last time after the parent's own last switch (preempted on its
 * way out while the parent, woken by its exit, reaps it, exits and leaves
 * the CPU; stress-ng --vforkmany's chains on two CPUs, 10,000 processes
 * of 60,000 under perf).  The other way, a child that exits just before
 * its parent may be left a zombie: counted in, one of the unsure ones.
 * Where the backend marks every process left unreaped, an unmarked one
 * was reaped, unless its parent had more children than the marks cover.
 */
static bool outlived(const struct rusage_model *m, const struct rproc *p,
		     const struct rproc *r)
{
	if (!r->ended)
		return false;
	if (p->exit_ev && r->exit_ev && !p->exit_unknown &&
	    !r->exit_unknown) {
		if (r->exit_ev >= p->exit_ev)
			return false;
	} else if (r->end >= p->end) {
		return false;
	}
	return !m->marks || r->nchildren > m->marks;
}

static int cmp_start(const void *a, const void *b)
{
	const struct rproc *x = *(const struct rproc *const *)a;
	const struct rproc *y = *(const struct rproc *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

void rusage__result(struct rusage_model *m, struct rusage_sums *in,
		    struct rusage_sums *out)
{
	struct rproc **order;
	int32_t root = find(m, m->root, 0);

	memset(in, 0, sizeof(*in));
	memset(out, 0, sizeof(*out));
	order = malloc((m->n ? m->n : 1) * sizeof(*order));
	for (size_t i = 0; i < m->n; i++) {
		struct rproc *p = &m->p[i];

		p->parent = p->ppid > 0 ? find(m, p->ppid, p->start) : -1;
		if (p->parent == (int32_t)i)
			p->parent = -1;
		p->counted = false;
		p->nchildren = 0;
		if (order)
			order[i] = p;
	}
	for (size_t i = 0; i < m->n; i++)
		if (m->p[i].parent >= 0)
			m->p[m->p[i].parent].nchildren++;
	/* parents start before their children: decide in start order */
	if (order)
		qsort(order, m->n, sizeof(*order), cmp_start);
	for (size_t k = 0; k < m->n; k++) {
		struct rproc *p = order ? order[k] : &m->p[k];
		const struct rproc *r = p->parent >= 0 ? &m->p[p->parent] : NULL;

		if (p == &m->p[root >= 0 ? root : 0] && root >= 0)
			p->counted = true;
		else
			p->counted = p->ended && !p->unreaped && r &&
				     r->counted && !outlived(m, p, r);
	}
	for (size_t i = 0; i < m->n; i++) {
		struct rproc *p = &m->p[i];

		p->own.procs = 1;
		sums_add(p->counted ? in : out, &p->own);
		if (p->prev >= 0)
			in->reused_procs++;
		/* Without marks nothing shows a reap: any descendant counted
		 * in (it died while its parent lived) may have been left a
		 * zombie when that parent exited, or released unreaped by a
		 * parent ignoring SIGCHLD. */
		if (!m->marks && p->counted && (int32_t)i != root) {
			in->unsure_procs++;
			in->unsure_vol += p->own.vol;
			in->unsure_invol += p->own.invol;
		}
	}
	free(order);
	m->resolved = true;
}

void rusage__mark(const struct rusage_model *m, struct ctxmon_stats *rows,
		  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ctxmon_stats *r = &rows[i];
		int32_t k;

		r->orphaned = false;
		if (!m->resolved || r->folded || row_tgid(r) <= 0)
			continue;
		k = find(m, row_tgid(r), r->first_ts);
		r->orphaned = k >= 0 && !m->p[k].counted;
	}
}
