/*
 * account_life.c - the account's life cycle: creating and freeing it, tasks
 * known before the stream (add_task), taking exited rows out (compact,
 * forget_exited), and the checkpoints that close a whole run (finish) or an
 * interval (reset_interval).  The event state machine is account.c; this
 * file reaches it through the account__* calls of account.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "analysis/causes.h"
#include "analysis/account.h"

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return (a > b) - (a < b);
}

struct ctxmon_account *ctxmon_account_new(const struct ctxmon_account_opts *o)
{
	struct ctxmon_account *a = calloc(1, sizeof(*a));
	int err = -ENOMEM;

	if (!a)
		goto out;
	if (o) {
		size_t sz = o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o);

		memcpy(&a->opts, o, sz);
	}
	a->opts.sz = sizeof(a->opts);
	err = -EINVAL;
	if ((unsigned)a->opts.target > CTXMON_TARGET_CMD ||
	    (a->opts.npids && !a->opts.pids))
		goto out;
	err = -ENOMEM;
	if (a->opts.npids) {
		a->pids = malloc(a->opts.npids * sizeof(*a->pids));
		if (!a->pids)
			goto out;
		memcpy(a->pids, a->opts.pids, a->opts.npids * sizeof(*a->pids));
		qsort(a->pids, a->opts.npids, sizeof(*a->pids), cmp_pid);
	}
	a->opts.pids = a->pids;
	a->compact_at =
		a->opts.exited_keep ? 2 * a->opts.exited_keep : SIZE_MAX;
	a->strs = strtab__new();
	if (!a->strs)
		goto out;
	a->empty = strtab__intern(a->strs, "", 0);
	if (!a->empty || account__reserve(a, 1) < 0)
		goto out;
	err = 0;
out:
	if (err) {
		ctxmon_account_free(a);
		errno = -err;
		return NULL;
	}
	return a;
}

void ctxmon_account_free(struct ctxmon_account *a)
{
	if (!a)
		return;
	causes__free(a->cz);
	strtab__free(a->strs);
	free(a->pids);
	free(a->tasks);
	free(a->hash);
	free(a->cpus);
	fold__clear(&a->fold);
	free(a);
}

int ctxmon_account_add_task(struct ctxmon_account *a, pid_t tid, pid_t tgid,
			    const char *comm)
{
	struct task *t;
	const char *s = NULL;

	if (!a || tid <= 0)
		return -EINVAL;
	if (account__reserve(a, 1) < 0)
		return -ENOMEM;
	if (comm) {
		s = strtab__intern(a->strs, comm, CTXMON_COMM_LEN);
		if (!s)
			return -ENOMEM;
	}
	t = task_find(a, tid);
	if (!t || t->state == T_DEAD)
		t = account__task_create(a, tid, t ? t->st.gen + 1 : 0);
	account__set_tgid(a, t, tgid);
	if (s) {
		t->st.comm = s;
		t->ev_comm = NULL;
	}
	return 0;
}

/*
 * Take exited tasks out of tasks[]: the oldest @k of them, folded by comm
 * into a->fold (@fold), or just dropped.  The hash is rebuilt over what
 * stays, each tid pointing where it pointed before.  Not with causes on:
 * their per-task tables cannot be folded.  Between events only.
 */
void account__compact(struct ctxmon_account *a, size_t k, bool fold)
{
	size_t j = 0, done = 0;
	bool *hashed;

	if (a->cz || !k)
		return;
	hashed = malloc((a->ntasks ? a->ntasks : 1) * sizeof(*hashed));
	if (!hashed)
		return;
	for (size_t i = 0; i < a->ntasks; i++) {
		struct task *t = &a->tasks[i];
		bool hashed_here = task_find(a, t->st.tid) == t;

		if (done < k && t->state == T_DEAD &&
		    (!fold || fold__add(&a->fold, &t->st) == 0)) {
			done++;
			continue;
		}
		if (j != i)
			a->tasks[j] = *t;
		hashed[j++] = hashed_here;
	}
	a->ntasks = j;
	a->ndead -= done;
	for (size_t i = 0; i < a->hcap; i++)
		a->hash[i].idx = EMPTY;
	for (size_t i = 0; i < j; i++)
		if (hashed[i])
			hash_set(a->hash, a->hcap, a->tasks[i].st.tid,
				 (uint32_t)i);
	free(hashed);
}

void ctxmon_account_forget_exited(struct ctxmon_account *a)
{
	if (!a || a->cz)
		return;
	account__compact(a, a->ndead, false);
	fold__clear(&a->fold);
}

/* Times given by the caller may not go below what the events reached. */
static uint64_t clamp_now(struct ctxmon_account *a, uint64_t ts)
{
	if (ts < a->now)
		ts = a->now;
	a->now = ts;
	return ts;
}

void ctxmon_account_finish(struct ctxmon_account *a, uint64_t ts)
{
	if (!a)
		return;
	ts = clamp_now(a, ts);
	for (size_t i = 0; i < a->ntasks; i++)
		if (alive(&a->tasks[i]))
			account__task_advance(&a->tasks[i], ts);
	for (size_t i = 0; i < a->ncpus; i++)
		if (a->cpus[i].in_span)
			cpu_advance(&a->cpus[i], ts);
}

void ctxmon_account_reset_interval(struct ctxmon_account *a, uint64_t ts)
{
	if (!a)
		return;
	ts = clamp_now(a, ts);
	for (size_t i = 0; i < a->ntasks; i++) {
		struct task *t = &a->tasks[i];
		struct ctxmon_stats id = t->st;

		memset(&t->st, 0, sizeof(t->st));
		t->st.tid = id.tid;
		t->st.tgid = id.tgid;
		t->st.ppid = id.ppid;
		t->st.gen = id.gen;
		t->st.comm = id.comm;
		t->st.nthreads = id.nthreads;
		t->st.exited = id.exited;
		t->st.target = id.target;
		stats_init(&t->st);
		t->in_span = alive(t);
		if (t->in_span)
			t->st.first_ts = t->st.last_ts = t->state_ts = ts;
	}
	for (size_t i = 0; i < a->ncpus; i++) {
		struct cpu *c = &a->cpus[i];

		c->st.busy_ns = c->st.idle_ns = 0;
		c->st.switches = c->st.lost = 0;
		c->st.first_ts = c->st.last_ts = 0;
		if (c->in_span)
			c->st.first_ts = c->st.last_ts = c->state_ts = ts;
	}
	/* exited tasks do nothing more: their folded sums are done with */
	fold__clear(&a->fold);
	if (a->cz)
		causes__reset(a->cz);
}
