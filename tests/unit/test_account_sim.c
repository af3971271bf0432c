/*
 * test_account_sim.c - a scheduler simulation that decides every switch
 * itself, keeps its own books, and checks the account against them over
 * many generated events (src/analysis/account*.c), one event at a time
 * and in batches, with exited rows folded.
 */
#include "account_fx.h"

/* ---- scheduler simulation ----------------------------------------- */

#define SIM_CPUS_MAX 4
#define SIM_TIDS 48
#define SIM_TID0 1000
#define SIM_ROWS 4096

enum { S_UNBORN, S_SLEEP, S_QUEUED, S_RUN, S_DEAD };

/* What the generator decided for one task generation, and what the
 * account reported for it, summed over intervals. */
struct exp_row {
	int tid, tgid;
	uint32_t gen;
	bool seen, tgid_known;
	uint64_t vol, inv, exitsw, sin, sout, run, wait, sleep[3];
	uint64_t migr, wakeups, lat_count, lat_sum, lat_max;
	struct ctxmon_stats got;
	bool got_any;
};

struct sim_task {
	int state, cpu, sleep_class, row;
	uint64_t since, lat_ts;
	bool lat;
};

struct sim {
	struct ctxmon_account *a;
	/* the same stream into two bounded accounts: b folds exited tasks
	 * past SIM_KEEP, c forgets them after each interval */
	struct ctxmon_account *b, *c;
	/* and into d in runs (ctxmon_account_feed_batch()) of 1 to 64
	 * events, which must give a's rows exactly */
	struct ctxmon_account *d;
	struct ctxmon_event run[64];
	size_t nrun, runs;
	uint64_t folded; /* tasks seen in b's folded rows */
	uint64_t now, rng;
	int ncpus;
	int cur[SIM_CPUS_MAX];
	bool cpu_seen[SIM_CPUS_MAX];
	uint64_t cpu_since[SIM_CPUS_MAX], busy[SIM_CPUS_MAX],
		idle[SIM_CPUS_MAX];
	uint64_t switches[SIM_CPUS_MAX];
	uint64_t got_busy[SIM_CPUS_MAX], got_idle[SIM_CPUS_MAX];
	uint64_t got_switches[SIM_CPUS_MAX];
	struct sim_task t[SIM_TIDS];
	struct exp_row rows[SIM_ROWS];
	int nrows;
	uint64_t vol, inv, exits;
};

static const char *const sim_comms[] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
};

#define SIM_KEEP 2

static void sim_flush_run(struct sim *s)
{
	ctxmon_account_feed_batch(s->d, s->run, s->nrun);
	s->nrun = 0;
	s->runs++;
}

static void sim_feed(struct sim *s, const struct ctxmon_event *e)
{
	ctxmon_account_feed(s->a, e);
	ctxmon_account_feed(s->b, e);
	ctxmon_account_feed(s->c, e);
	s->run[s->nrun++] = *e;
	/* runs of every length, without touching the generator's rng */
	if (s->nrun == 1 + (s->runs * 37) % (sizeof(s->run) / sizeof(s->run[0])))
		sim_flush_run(s);
}

/* d, fed in runs, has a's rows and CPUs, field for field. */
static void check_batch_fed(struct sim *s)
{
	struct ctxmon_stats *r, *rd;
	struct ctxmon_cpu_stats *c, *cd;
	size_t n, nd;

	sim_flush_run(s);
	ctxmon_account_finish(s->d, s->now);
	for (int k = 0; k < 2; k++) {
		enum ctxmon_rows kind =
			k ? CTXMON_ROWS_PROCESSES : CTXMON_ROWS_THREADS;

		r = ctxmon_account_rows(s->a, kind, true, &n);
		rd = ctxmon_account_rows(s->d, kind, true, &nd);
		assert_non_null(r);
		assert_non_null(rd);
		assert_int_equal(nd, n);
		for (size_t i = 0; i < n; i++) {
			/* the same name, interned in each account */
			assert_string_equal(rd[i].comm, r[i].comm);
			rd[i].comm = r[i].comm;
			if (memcmp(&rd[i], &r[i], sizeof(r[i])))
				fail_msg("row %zu (tid %d) differs fed in runs",
					 i, (int)r[i].tid);
		}
		free(r);
		free(rd);
	}
	c = ctxmon_account_cpus(s->a, &n);
	cd = ctxmon_account_cpus(s->d, &nd);
	assert_non_null(c);
	assert_non_null(cd);
	assert_int_equal(nd, n);
	assert_memory_equal(cd, c, n * sizeof(*c));
	free(c);
	free(cd);
	assert_int_equal(ctxmon_account_anomalies(s->d),
			 ctxmon_account_anomalies(s->a));
}

static uint32_t rnd(struct sim *s, uint32_t n)
{
	/* xorshift64: reproducible, independent of libc */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (uint32_t)(s->rng % n);
}

static struct sim_task *st_of(struct sim *s, int tid)
{
	return &s->t[tid - SIM_TID0];
}

static struct exp_row *er_of(struct sim *s, int tid)
{
	return &s->rows[st_of(s, tid)->row];
}

static int sim_tgid(struct sim *s, int tid)
{
	return tid ? er_of(s, tid)->tgid : 0;
}

/* The generator's own books: charge the time in the old state. */
static void sim_state(struct sim *s, int tid, int state)
{
	struct sim_task *t = st_of(s, tid);
	struct exp_row *r = er_of(s, tid);
	uint64_t d = s->now - t->since;

	if (!r->seen) {
		r->seen = true;
	} else if (t->state == S_RUN) {
		r->run += d;
	} else if (t->state == S_QUEUED) {
		r->wait += d;
	} else if (t->state == S_SLEEP) {
		r->sleep[t->sleep_class] += d;
	}
	t->since = s->now;
	t->state = state;
}

static void sim_cpu(struct sim *s, int c, int next)
{
	uint64_t d = s->now - s->cpu_since[c];

	if (s->cpu_seen[c]) {
		if (s->cur[c])
			s->busy[c] += d;
		else
			s->idle[c] += d;
	}
	s->cpu_seen[c] = true;
	s->cpu_since[c] = s->now;
	s->cur[c] = next;
	s->switches[c]++;
}

static struct ctxmon_event sim_ev(struct sim *s, int cpu, unsigned type)
{
	struct ctxmon_event e;

	memset(&e, 0, sizeof(e));
	e.ts = s->now;
	e.cpu = cpu;
	e.type = (uint16_t)type;
	e.tid = s->cur[cpu];
	e.tgid = sim_tgid(s, e.tid);
	if (e.tid)
		er_of(s, e.tid)->tgid_known = true;
	return e;
}

static int pick(struct sim *s, int state, int except)
{
	int cand[SIM_TIDS], n = 0;

	for (int i = 0; i < SIM_TIDS; i++)
		if (s->t[i].state == state && SIM_TID0 + i != except)
			cand[n++] = SIM_TID0 + i;
	return n ? cand[rnd(s, (uint32_t)n)] : 0;
}

static int count_alive(struct sim *s)
{
	int n = 0;

	for (int i = 0; i < SIM_TIDS; i++)
		n += s->t[i].state != S_UNBORN && s->t[i].state != S_DEAD;
	return n;
}

static void sim_wake(struct sim *s, int tid, int cpu, bool waking)
{
	struct ctxmon_event e =
		sim_ev(s, cpu, waking ? CTXMON_EV_WAKING : CTXMON_EV_WAKEUP);

	e.wake.tid = tid;
	e.wake.target_cpu = cpu;
	e.wake.comm = sim_comms[tid % 7];
	sim_feed(s, &e);
}

/* A sleeper is woken by whatever runs on a random CPU. */
static void act_wake(struct sim *s)
{
	int tid = pick(s, S_SLEEP, 0), cpu = (int)rnd(s, (uint32_t)s->ncpus);
	bool waking = rnd(s, 10) != 0; /* 1 in 10: a wakeup alone */
	struct sim_task *t;

	if (!tid)
		return;
	t = st_of(s, tid);
	sim_wake(s, tid, cpu, waking);
	sim_state(s, tid, S_QUEUED);
	t->lat = true;
	t->lat_ts = s->now;
	er_of(s, tid)->wakeups++;
	if (waking && rnd(s, 4)) {
		s->now += rnd(s, 50);
		sim_wake(s, tid, cpu, false);
	}
}

static void sim_switch(struct sim *s, int c, int prev, uint32_t pstate,
		       int preempt, int kind, int next)
{
	struct ctxmon_event e = sim_ev(s, c, CTXMON_EV_SWITCH);

	e.sw.prev_tid = prev;
	e.sw.prev_tgid = sim_tgid(s, prev);
	e.sw.prev_comm = prev ? sim_comms[prev % 7] : "swapper/0";
	e.sw.prev_state = pstate;
	e.sw.next_tid = next;
	e.sw.next_tgid = -1; /* learnt from elsewhere */
	e.sw.next_comm = next ? sim_comms[next % 7] : "swapper/0";
	e.sw.preempt = (uint8_t)preempt;
	e.sw.kind = (uint8_t)kind;
	sim_feed(s, &e);
}

/* One CPU schedules: its task leaves (sleeps, is preempted, yields or
 * dies) and a queued task, or idle, comes in. */
static void act_schedule(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), prev = s->cur[c], next;
	uint32_t pstate = CTXMON_STATE_RUNNING;
	int kind = CTXMON_SW_INVOLUNTARY, preempt = 0, to = S_QUEUED;
	bool race = false;

	next = pick(s, S_QUEUED, prev);
	if (!prev && !next)
		return;
	if (prev) {
		struct exp_row *r = er_of(s, prev);
		uint32_t what = rnd(s, 10);

		if (what < 5) {
			pstate = rnd(s, 3) ? CTXMON_STATE_S : CTXMON_STATE_D;
			kind = CTXMON_SW_VOLUNTARY;
			to = S_SLEEP;
			race = rnd(s, 8) == 0;
		} else if (what < 9 || count_alive(s) <= 4) {
			preempt = rnd(s, 2);
		} else {
			struct ctxmon_event e = sim_ev(s, c, CTXMON_EV_EXIT);

			e.exit.tid = prev;
			sim_feed(s, &e);
			s->now += rnd(s, 20);
			pstate = CTXMON_STATE_X;
			kind = CTXMON_SW_EXIT;
			to = S_DEAD;
		}
		if (race) {
			/* Woken by another CPU just before it leaves. */
			sim_wake(s, prev, (c + 1) % s->ncpus, true);
			s->now += rnd(s, 30);
		}
		r->sout++;
		if (kind == CTXMON_SW_VOLUNTARY) {
			r->vol++;
			s->vol++;
		} else if (kind == CTXMON_SW_INVOLUNTARY) {
			r->inv++;
			s->inv++;
		} else {
			r->exitsw++;
			s->exits++;
		}
	}
	sim_switch(s, c, prev, pstate, preempt, kind, next);
	sim_cpu(s, c, next);
	if (prev) {
		struct sim_task *t = st_of(s, prev);

		t->sleep_class = pstate == CTXMON_STATE_S ? CTXMON_SLEEP_S :
							    CTXMON_SLEEP_D;
		if (race) {
			sim_state(s, prev, S_QUEUED);
			t->lat = true;
			t->lat_ts = s->now;
			er_of(s, prev)->wakeups++;
		} else {
			sim_state(s, prev, to);
		}
	}
	if (next) {
		struct sim_task *t = st_of(s, next);
		struct exp_row *r = er_of(s, next);

		sim_state(s, next, S_RUN);
		t->cpu = c;
		r->sin++;
		if (t->lat) {
			uint64_t d = s->now - t->lat_ts;

			r->lat_count++;
			r->lat_sum += d;
			if (d > r->lat_max)
				r->lat_max = d;
			t->lat = false;
		}
	}
	if (race) {
		/* Its wakeup comes once it is off the CPU. */
		s->now += rnd(s, 30);
		sim_wake(s, prev, (c + 1) % s->ncpus, false);
	}
}

static int new_row(struct sim *s, int tid, uint32_t gen, int tgid)
{
	struct exp_row *r = &s->rows[s->nrows];

	assert_true(s->nrows < SIM_ROWS);
	memset(r, 0, sizeof(*r));
	r->tid = tid;
	r->gen = gen;
	r->tgid = tgid;
	return s->nrows++;
}

/* A running task forks a thread or a process onto a free (maybe reused)
 * tid; the child is then woken for the first time. */
static void act_fork(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), parent = s->cur[c];
	int child = pick(s, S_UNBORN, 0), tgid, row;
	uint32_t gen = 0;
	struct ctxmon_event e;
	struct sim_task *t;

	if (!child)
		child = pick(s, S_DEAD, 0);
	if (!parent || !child)
		return;
	t = st_of(s, child);
	if (t->row >= 0)
		gen = s->rows[t->row].gen + 1;
	tgid = rnd(s, 2) ? sim_tgid(s, parent) : child;
	row = new_row(s, child, gen, tgid);
	t->row = row;
	t->state = S_UNBORN;
	t->lat = false;
	e = sim_ev(s, c, CTXMON_EV_FORK);
	e.fork.parent_tid = parent;
	e.fork.child_tid = child;
	e.fork.child_tgid = rnd(s, 3) ? tgid : -1;
	e.fork.child_comm = sim_comms[child % 7];
	s->rows[row].tgid_known = e.fork.child_tgid >= 0;
	sim_feed(s, &e);
	sim_state(s, child, S_QUEUED);
	s->now += rnd(s, 40);
	e = sim_ev(s, c, CTXMON_EV_WAKEUP_NEW);
	e.wake.tid = child;
	e.wake.comm = sim_comms[child % 7];
	sim_feed(s, &e);
	t->lat = true;
	t->lat_ts = s->now;
	s->rows[row].wakeups++;
}

static void act_migrate(struct sim *s)
{
	int tid = pick(s, S_QUEUED, 0), c = (int)rnd(s, (uint32_t)s->ncpus);
	struct ctxmon_event e;

	if (!tid)
		return;
	e = sim_ev(s, c, CTXMON_EV_MIGRATE);
	e.migrate.tid = tid;
	e.migrate.dest_cpu = c;
	sim_feed(s, &e);
	er_of(s, tid)->migr++;
}

/* A running task is woken in place (waking then wakeup): it runs on. */
static void act_wake_running(struct sim *s)
{
	int c = (int)rnd(s, (uint32_t)s->ncpus), tid = s->cur[c];

	if (!tid)
		return;
	sim_wake(s, tid, (c + 1) % s->ncpus, true);
	sim_wake(s, tid, (c + 1) % s->ncpus, false);
	er_of(s, tid)->wakeups++;
}

static struct exp_row *find_exp(struct sim *s, int tid, uint32_t gen)
{
	for (int i = 0; i < s->nrows; i++)
		if (s->rows[i].tid == tid && s->rows[i].gen == gen)
			return &s->rows[i];
	fail_msg("account has a row %d/%u the generator never made", tid, gen);
	return NULL;
}

/* Close an interval: check it adds up on its own, add it to the totals. */
/* Everything a row counts, summed over @r. */
static void row_sums(const struct ctxmon_stats *r, size_t n, uint64_t *v)
{
	memset(v, 0, 12 * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[0] += r[i].voluntary;
		v[1] += r[i].involuntary;
		v[2] += r[i].exit_switch;
		v[3] += r[i].switch_in;
		v[4] += r[i].run_ns;
		v[5] += r[i].wait_ns;
		v[6] += r[i].sleep_ns[0] + r[i].sleep_ns[1] + r[i].sleep_ns[2];
		v[7] += r[i].migrations;
		v[8] += r[i].wakeups;
		v[9] += r[i].lat.count;
		v[10] += r[i].lat.sum_ns;
		v[11] += r[i].folded ? r[i].folded : 1;
	}
}

/*
 * The bounded account @x against the full one: the same sums over threads
 * and over processes, every live thread's row the same, and at most
 * twice @keep exited rows kept one by one (@keep 0: no bound, the exited
 * rows of earlier intervals were forgotten instead).
 */
static void check_bounded(struct sim *s, struct ctxmon_account *x, size_t keep)
{
	struct ctxmon_stats *r, *xr, *pr, *xpr;
	uint64_t va[12], vx[12];
	size_t n, xn, np, xnp, exited = 0;

	ctxmon_account_finish(x, s->now);
	r = ctxmon_account_rows(s->a, CTXMON_ROWS_THREADS, true, &n);
	xr = ctxmon_account_rows(x, CTXMON_ROWS_THREADS, true, &xn);
	pr = ctxmon_account_rows(s->a, CTXMON_ROWS_PROCESSES, true, &np);
	xpr = ctxmon_account_rows(x, CTXMON_ROWS_PROCESSES, true, &xnp);
	assert_true(r && xr && pr && xpr);
	row_sums(r, n, va);
	row_sums(xr, xn, vx);
	for (int i = 0; i < 11; i++)
		assert_int_equal(vx[i], va[i]);
	/* tasks: fewer, those of earlier intervals are gone (folded rows
	 * are cleared with the interval; c forgets) */
	assert_true(vx[11] <= va[11]);
	row_sums(xpr, xnp, vx);
	for (int i = 0; i < 11; i++)
		assert_int_equal(vx[i], va[i]);
	for (size_t i = 0; i < xn; i++) {
		const struct ctxmon_stats *g = &xr[i];
		bool found = false;

		exited += g->exited && !g->folded;
		if (keep)
			s->folded += g->folded;
		if (g->exited)
			continue;
		for (size_t j = 0; j < n && !found; j++) {
			if (r[j].tid != g->tid || r[j].exited)
				continue;
			found = true;
			assert_int_equal(g->voluntary, r[j].voluntary);
			assert_int_equal(g->involuntary, r[j].involuntary);
			assert_int_equal(g->run_ns, r[j].run_ns);
			assert_int_equal(g->wait_ns, r[j].wait_ns);
			assert_int_equal(g->lat.sum_ns, r[j].lat.sum_ns);
		}
		assert_true(found);
	}
	if (keep) /* folded at the next event past the bound */
		assert_true(exited <= 2 * keep);
	assert_true(ctxmon_account_anomalies(x) <=
		    ctxmon_account_anomalies(s->a));
	free(r);
	free(xr);
	free(pr);
	free(xpr);
}

static void sim_interval(struct sim *s)
{
	struct ctxmon_stats *r, *pr;
	struct ctxmon_cpu_stats *cs;
	uint64_t run = 0, prun = 0, nthreads = 0;
	size_t n, np;

	ctxmon_account_finish(s->a, s->now);
	check_sums(s->a);
	check_batch_fed(s);
	r = ctxmon_account_rows(s->a, CTXMON_ROWS_THREADS, true, &n);
	assert_non_null(r);
	for (size_t i = 0; i < n; i++) {
		struct exp_row *e = find_exp(s, r[i].tid, r[i].gen);
		struct ctxmon_stats *g = &e->got;

		run += r[i].run_ns;
		e->got_any = true;
		g->tgid = r[i].tgid;
		g->voluntary += r[i].voluntary;
		g->involuntary += r[i].involuntary;
		g->exit_switch += r[i].exit_switch;
		g->switch_in += r[i].switch_in;
		g->switch_out += r[i].switch_out;
		g->run_ns += r[i].run_ns;
		g->wait_ns += r[i].wait_ns;
		for (int k = 0; k < 3; k++)
			g->sleep_ns[k] += r[i].sleep_ns[k];
		g->migrations += r[i].migrations;
		g->wakeups += r[i].wakeups;
		g->lat.count += r[i].lat.count;
		g->lat.sum_ns += r[i].lat.sum_ns;
		if (r[i].lat.max_ns > g->lat.max_ns)
			g->lat.max_ns = r[i].lat.max_ns;
	}
	/* The process rollup redistributes the same threads. */
	pr = ctxmon_account_rows(s->a, CTXMON_ROWS_PROCESSES, true, &np);
	assert_non_null(pr);
	for (size_t i = 0; i < np; i++) {
		prun += pr[i].run_ns;
		nthreads += pr[i].nthreads;
	}
	assert_int_equal(prun, run);
	assert_int_equal(nthreads, n);
	free(pr);
	free(r);
	cs = ctxmon_account_cpus(s->a, &n);
	assert_non_null(cs);
	for (size_t i = 0; i < n; i++) {
		s->got_busy[cs[i].cpu] += cs[i].busy_ns;
		s->got_idle[cs[i].cpu] += cs[i].idle_ns;
		s->got_switches[cs[i].cpu] += cs[i].switches;
	}
	free(cs);
	check_bounded(s, s->b, SIM_KEEP);
	check_bounded(s, s->c, 0);
	ctxmon_account_reset_interval(s->a, s->now);
	ctxmon_account_reset_interval(s->d, s->now);
	ctxmon_account_reset_interval(s->b, s->now);
	ctxmon_account_forget_exited(s->c);
	ctxmon_account_reset_interval(s->c, s->now);
}

static void run_sim(uint64_t seed, int ncpus, int steps)
{
	struct sim *s = calloc(1, sizeof(*s));
	uint64_t vol = 0, inv = 0, exits = 0;
	int initial = 16, seen = 0, got = 0;

	assert_non_null(s);
	s->a = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
	{
		struct ctxmon_account_opts o = {
			.sz = sizeof(o),
			.target = CTXMON_TARGET_ALL,
			.exited_keep = SIM_KEEP,
		};

		s->b = ctxmon_account_new(&o);
		s->c = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
		s->d = acc_new(CTXMON_TARGET_ALL, NULL, 0, 0);
		assert_non_null(s->b);
	}
	s->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	s->ncpus = ncpus;
	s->now = 1000;
	/* Tasks that exist before capture, asleep: the account learns
	 * each one at its first wakeup. */
	for (int i = 0; i < SIM_TIDS; i++) {
		int tid = SIM_TID0 + i;

		s->t[i].state = i < initial ? S_SLEEP : S_UNBORN;
		s->t[i].row = i < initial ?
				      new_row(s, tid, 0, SIM_TID0 + (i & ~3)) :
				      -1;
		s->t[i].sleep_class = CTXMON_SLEEP_S;
	}
	for (int i = 0; i < steps; i++) {
		uint32_t what = rnd(s, 100);

		s->now += rnd(s, 4) ? rnd(s, 1000) : 0;
		if (what < 30)
			act_wake(s);
		else if (what < 80)
			act_schedule(s);
		else if (what < 86)
			act_fork(s);
		else if (what < 92)
			act_migrate(s);
		else if (what < 95)
			act_wake_running(s);
		else if (what < 97)
			sim_interval(s);
		else {
			struct ctxmon_event e =
				sim_ev(s, (int)rnd(s, 2), CTXMON_EV_IRQ_ENTRY);

			sim_feed(s, &e);
		}
	}
	s->now += 1000;
	/* The generator closes its books where the account finishes. */
	for (int i = 0; i < SIM_TIDS; i++) {
		int st = s->t[i].state;

		if (st != S_UNBORN && st != S_DEAD && s->rows[s->t[i].row].seen)
			sim_state(s, SIM_TID0 + i, st);
	}
	for (int c = 0; c < ncpus; c++) {
		if (s->cpu_seen[c]) {
			sim_cpu(s, c, s->cur[c]);
			s->switches[c]--;
		}
	}
	sim_interval(s);
	assert_int_equal(ctxmon_account_anomalies(s->a), 0);

	for (int i = 0; i < s->nrows; i++) {
		struct exp_row *e = &s->rows[i];
		struct ctxmon_stats *g = &e->got;

		if (!e->seen) {
			assert_false(e->got_any);
			continue;
		}
		seen++;
		assert_true(e->got_any);
		assert_int_equal(g->tgid, e->tgid_known ? e->tgid : -1);
		assert_int_equal(g->voluntary, e->vol);
		assert_int_equal(g->involuntary, e->inv);
		assert_int_equal(g->exit_switch, e->exitsw);
		assert_int_equal(g->switch_in, e->sin);
		assert_int_equal(g->switch_out, e->sout);
		assert_int_equal(g->run_ns, e->run);
		assert_int_equal(g->wait_ns, e->wait);
		for (int k = 0; k < 3; k++)
			assert_int_equal(g->sleep_ns[k], e->sleep[k]);
		assert_int_equal(g->migrations, e->migr);
		assert_int_equal(g->wakeups, e->wakeups);
		assert_int_equal(g->lat.count, e->lat_count);
		assert_int_equal(g->lat.sum_ns, e->lat_sum);
		assert_int_equal(g->lat.max_ns, e->lat_max);
		vol += g->voluntary;
		inv += g->involuntary;
		exits += g->exit_switch;
	}
	for (int i = 0; i < s->nrows; i++)
		got += s->rows[i].got_any;
	assert_int_equal(got, seen);
	assert_int_equal(vol, s->vol);
	assert_int_equal(inv, s->inv);
	assert_int_equal(exits, s->exits);
	/* Enough happened for the test to mean something. */
	assert_true(s->vol > (uint64_t)steps / 20);
	assert_true(s->inv > (uint64_t)steps / 20);
	assert_true(s->exits > 5);
	assert_true(s->folded > 0);
	for (int c = 0; c < ncpus; c++) {
		assert_int_equal(s->got_busy[c], s->busy[c]);
		assert_int_equal(s->got_idle[c], s->idle[c]);
		assert_int_equal(s->got_switches[c], s->switches[c]);
	}
	ctxmon_account_free(s->a);
	ctxmon_account_free(s->b);
	ctxmon_account_free(s->c);
	ctxmon_account_free(s->d);
	free(s);
}

static void test_simulation(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 24; seed++)
		run_sim(seed, 2 + (int)(seed % 3), 6000);
}

/* A thread whose switch-out is never traced (issue 13, defect 5): its
 * CPU switches from another task.  Its run ends there, never more than
 * the CPU's busy time, and the account counts an anomaly. */
/* The run of @tid in @a's thread rows (0 if none). */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
