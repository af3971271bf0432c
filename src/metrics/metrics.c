/*
 * metrics.c - the metrics object of ctxmon/metrics.h: loads the per-cgroup
 * aggregation (src/capture/cgagg.c), and at each collection reads its
 * maps into bounded families: the top N rows by recent activity get their
 * own series, the rest is summed into "other".  Membership is sticky (a
 * member leaves only when its process exits or it has been idle for a
 * while and another row is active), and a row that joins starts counting
 * from where it was at the last collection (until then "other" held it),
 * so every exported counter, "other" included, only grows: no counter
 * reset for Prometheus' rate().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "metrics/metrics_int.h"

#define DEFAULT_TOP 20
#define IDLE_EVICT 10		/* collections without activity */
#define DEAD_GRACE_NS 1000000000ull /* a dead process's last switches */

const char *ctxmon_metrics_last_error(void)
{
	return ctxmon_last_error();
}

/* ---- bounded families -------------------------------------------------- */

int fam__init(struct fam *f, size_t w, size_t top)
{
	memset(f, 0, sizeof(*f));
	f->w = w;
	f->top = top;
	f->first = true;
	f->m = calloc(top ? top : 1, sizeof(*f->m));
	f->gone = calloc(w, sizeof(uint64_t));
	f->other = calloc(w, sizeof(uint64_t));
	if (!f->m || !f->gone || !f->other)
		return -ENOMEM;
	for (size_t i = 0; i < top; i++) {
		f->m[i].base = calloc(2 * w, sizeof(uint64_t));
		if (!f->m[i].base)
			return -ENOMEM;
		f->m[i].cur = f->m[i].base + w;
	}
	return 0;
}

void fam__fini(struct fam *f)
{
	if (f->m)
		for (size_t i = 0; i < f->top; i++)
			free(f->m[i].base);
	free(f->m);
	free(f->gone);
	free(f->other);
	free(f->prev);
	free(f->prev_v);
	memset(f, 0, sizeof(*f));
}

void fam__gone(struct fam *f, const uint64_t *v)
{
	for (size_t j = 0; j < f->w; j++)
		f->gone[j] += v[j];
}

void fam__value(const struct fam *f, size_t i, uint64_t *out)
{
	const struct fam_member *m = &f->m[i];

	for (size_t j = 0; j < f->w; j++)
		out[j] = m->cur[j] >= m->base[j] ? m->cur[j] - m->base[j] : 0;
}

static int cmp_key(uint64_t a1, uint64_t a2, uint64_t b1, uint64_t b2)
{
	if (a1 != b1)
		return a1 < b1 ? -1 : 1;
	return a2 < b2 ? -1 : a2 > b2;
}

static int cmp_row(const void *a, const void *b)
{
	const struct fam_row *x = a, *y = b;

	return cmp_key(x->k1, x->k2, y->k1, y->k2);
}

static struct fam_row *find_row(struct fam_row *rows, size_t n, uint64_t k1,
				uint64_t k2)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_key(rows[mid].k1, rows[mid].k2, k1, k2);

		if (!c)
			return &rows[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static const struct fam_prev *find_prev(const struct fam *f, uint64_t k1,
					uint64_t k2)
{
	size_t lo = 0, hi = f->nprev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_key(f->prev[mid].k1, f->prev[mid].k2, k1, k2);

		if (!c)
			return &f->prev[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct cand {
	struct fam_row *r;
	uint64_t recent;
	const uint64_t *was;	/* its values in "other" at the last
				 * collection, NULL: none */
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->recent < y->recent ? 1 : x->recent > y->recent ? -1 : 0;
}

static void member_set(struct fam_member *m, const struct fam_row *r)
{
	if (r->name)
		snprintf(m->name, sizeof(m->name), "%s", r->name);
}

int fam__update(struct fam *f, struct fam_row *rows, size_t n)
{
	struct cand *c = NULL;
	struct fam_prev *np = NULL;
	uint64_t *nv = NULL;
	size_t nc = 0, ci = 0, w = f->w;
	bool any_active = false;
	int ret = 0;

	qsort(rows, n, sizeof(*rows), cmp_row);
	/* members: follow their rows; a member whose row left is gone */
	for (size_t i = 0; i < f->nm;) {
		struct fam_member *m = &f->m[i];
		struct fam_row *r = find_row(rows, n, m->k1, m->k2);

		if (!r) {
			uint64_t *b = m->base;

			/* keep the buffers: swap with the last member */
			*m = f->m[--f->nm];
			f->m[f->nm].base = b;
			f->m[f->nm].cur = b + w;
			continue;
		}
		memcpy(m->cur, r->v, w * sizeof(uint64_t));
		m->idle = r->act != m->last_act ? 0 : m->idle + 1;
		m->last_act = r->act;
		member_set(m, r);
		r->act |= 1ull << 63;
		i++;
	}
	c = calloc(n ? n : 1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct fam_prev *p;

		if (rows[i].act >> 63 || !rows[i].k1)
			continue;
		p = find_prev(f, rows[i].k1, rows[i].k2);
		c[nc].r = &rows[i];
		c[nc].was = p && !f->first ? p->v : NULL;
		c[nc].recent = p && rows[i].act >= p->act ?
				       rows[i].act - p->act :
				       rows[i].act;
		if (f->first)
			c[nc].recent = rows[i].act;
		if (c[nc].recent)
			any_active = true;
		nc++;
	}
	qsort(c, nc, sizeof(*c), cmp_cand);
	/* idle members give way to active rows */
	if (any_active) {
		size_t want = 0, free_slots = f->top - f->nm;

		for (size_t i = 0; i < nc && c[i].recent; i++)
			want++;
		for (size_t i = 0; i < f->nm && want > free_slots;) {
			if (f->m[i].idle >= IDLE_EVICT) {
				uint64_t *b = f->m[i].base;

				f->m[i] = f->m[--f->nm];
				f->m[f->nm].base = b;
				f->m[f->nm].cur = b + w;
				free_slots++;
				continue;
			}
			i++;
		}
	}
	for (; ci < nc && f->nm < f->top; ci++) {
		struct fam_member *m = &f->m[f->nm];

		if (!c[ci].recent && !f->first)
			break;
		m->k1 = c[ci].r->k1;
		m->k2 = c[ci].r->k2;
		memcpy(m->cur, c[ci].r->v, w * sizeof(uint64_t));
		/* a row summed in "other" until now leaves its past there:
		 * what "other" held at the last collection, so the series
		 * starts with what the row did since (a row first seen
		 * idle, say a process forked just before a collection,
		 * joins with everything it did after) */
		if (c[ci].was)
			memcpy(m->base, c[ci].was, w * sizeof(uint64_t));
		else
			memset(m->base, 0, w * sizeof(uint64_t));
		m->last_act = c[ci].r->act;
		m->idle = 0;
		m->name[0] = '\0';
		member_set(m, c[ci].r);
		f->nm++;
	}
	/* other = everything ever counted - what the members export */
	memcpy(f->other, f->gone, w * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < w; j++)
			f->other[j] += rows[i].v[j];
	for (size_t i = 0; i < f->nm; i++)
		for (size_t j = 0; j < w; j++) {
			uint64_t e = f->m[i].cur[j] >= f->m[i].base[j] ?
					     f->m[i].cur[j] - f->m[i].base[j] :
					     0;

			f->other[j] = f->other[j] >= e ? f->other[j] - e : 0;
		}
	np = malloc((n ? n : 1) * sizeof(*np));
	nv = malloc((n ? n : 1) * w * sizeof(*nv));
	if (!np || !nv) {
		free(np);
		free(nv);
		ret = -ENOMEM;
		goto out;
	}
	/* mark the members as they are now (some left, some joined) */
	for (size_t i = 0; i < n; i++)
		rows[i].act &= ~(1ull << 63);
	for (size_t i = 0; i < f->nm; i++) {
		struct fam_row *r = find_row(rows, n, f->m[i].k1, f->m[i].k2);

		if (r)
			r->act |= 1ull << 63;
	}
	for (size_t i = 0; i < n; i++) {
		np[i].k1 = rows[i].k1;
		np[i].k2 = rows[i].k2;
		np[i].act = rows[i].act & ~(1ull << 63);
		np[i].v = NULL;
		if (!(rows[i].act >> 63)) {
			np[i].v = nv + i * w;
			memcpy(nv + i * w, rows[i].v, w * sizeof(uint64_t));
		}
		rows[i].act = np[i].act;
	}
	free(f->prev);
	free(f->prev_v);
	f->prev = np;
	f->prev_v = nv;
	f->nprev = n;
	f->first = false;
out:
	free(c);
	return ret;
}

/* ---- the object ---------------------------------------------------------- */

struct ctxmon_metrics *ctxmon_metrics_open(const struct ctxmon_metrics_opts *o)
{
	struct ctxmon_metrics *m = NULL;
	struct cgagg_cfg cfg = { 0 };
	uint64_t *ids = NULL;
	size_t top;
	int ret = 0;

	err__clear();
	if (!o || o->sz < sizeof(*o)) {
		err__set("invalid options");
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	ids = calloc(o->ncgroups ? o->ncgroups : 1, sizeof(*ids));
	if (!m || !ids) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < o->ncgroups; i++) {
		char abs[4096];

		ret = cgroup2__resolve(o->cgroups[i], abs, sizeof(abs), &ids[i],
				       err__buf(), ERR__LEN);
		if (ret < 0)
			goto out;
	}
	m->per_cgroup = o->per_cgroup || !o->per_process;
	m->per_process = o->per_process || !o->per_cgroup;
	top = o->top ? o->top : DEFAULT_TOP;
	if (fam__init(&m->cg, STAT_WORDS, top) < 0 ||
	    fam__init(&m->proc, STAT_WORDS, top) < 0 ||
	    fam__init(&m->pair, 1, top) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	cfg.cg_ids = ids;
	cfg.ncg_ids = o->ncgroups;
	cfg.max_cgroups = o->max_cgroups;
	cfg.max_procs = o->max_processes;
	cfg.max_pairs = o->max_pairs;
	cfg.force_raw_tp = o->force_raw_tp;
	m->g = cgagg__open(&cfg, err__buf(), ERR__LEN);
	if (!m->g) {
		ret = -errno;
		goto out;
	}
	cgagg__limits(m->g, &m->max_cg, &m->max_proc, &m->max_pair);
out:
	free(ids);
	if (ret < 0) {
		if (ret == -ENOMEM && !err__buf()[0])
			err__set("out of memory");
		ctxmon_metrics_close(m);
		errno = -ret;
		return NULL;
	}
	return m;
}

void ctxmon_metrics_close(struct ctxmon_metrics *m)
{
	if (!m)
		return;
	cgagg__close(m->g);
	fam__fini(&m->cg);
	fam__fini(&m->proc);
	fam__fini(&m->pair);
	cgroup_names__clear(&m->names);
	free(m->cpus);
	free(m->cpu_busy);
	free(m->cpu_idle);
	free(m);
}

void ctxmon_metrics_forget_names(struct ctxmon_metrics *m)
{
	cgroup_names__clear(&m->names);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rss_bytes(void)
{
	unsigned long size, res;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &res);
	fclose(f);
	return n == 2 ? (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static uint64_t switches(const struct cgagg_stats *s)
{
	return s->sw[CGAGG_VOLUNTARY] + s->sw[CGAGG_INVOLUNTARY] +
	       s->sw[CGAGG_EXIT];
}

/* The path of cgroup @id, scanning the hierarchy again (once per
 * collection) for an id not known yet. */
static const char *cg_name(struct ctxmon_metrics *m, uint64_t id)
{
	const char *p;

	if (!id)
		return "other";
	p = cgroup_names__find(&m->names, id);
	if (!p && !m->names_scanned) {
		m->names_scanned = true;
		cgroup_names__scan(&m->names);
		p = cgroup_names__find(&m->names, id);
	}
	return p;
}

static int collect_cgroups(struct ctxmon_metrics *m)
{
	struct cgagg_cg_row *cg = NULL;
	struct fam_row *rows = NULL;
	size_t n = 0;
	int ret = cgagg__read_cgroups(m->g, &cg, &n);

	if (ret < 0)
		return ret;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		ret = -ENOMEM;
		goto out;
	}
	/* a name not known yet re-reads the names, which frees the old
	 * ones: look every id up first, keep pointers only after that */
	for (size_t i = 0; i < n; i++)
		(void)cg_name(m, cg[i].cgid);
	for (size_t i = 0; i < n; i++) {
		rows[i].k1 = cg[i].cgid;
		rows[i].v = (const uint64_t *)&cg[i].s;
		rows[i].act = switches(&cg[i].s);
		rows[i].name = cg_name(m, cg[i].cgid);
	}
	m->ncg_seen = n;
	ret = fam__update(&m->cg, rows, n);
out:
	free(rows);
	free(cg);
	return ret;
}

static int collect_procs(struct ctxmon_metrics *m, uint64_t now)
{
	struct cgagg_proc_row *pr = NULL;
	struct fam_row *rows = NULL;
	size_t n = 0, k = 0;
	int ret = cgagg__read_procs(m->g, &pr, &n);

	if (ret < 0)
		return ret;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct cgagg_proc *p = &pr[i].p;

		p->comm[sizeof(p->comm) - 1] = '\0';
		if (pr[i].tgid && p->dead_ts && now > p->dead_ts &&
		    now - p->dead_ts > DEAD_GRACE_NS) {
			/* exited: its numbers stay, in "other" */
			fam__gone(&m->proc, (const uint64_t *)&p->s);
			cgagg__delete_proc(m->g, pr[i].tgid);
			m->procs_folded++;
			continue;
		}
		rows[k].k1 = pr[i].tgid;
		rows[k].v = (const uint64_t *)&p->s;
		rows[k].act = switches(&p->s);
		rows[k].name = p->comm;
		k++;
	}
	m->nproc_seen = k;
	ret = fam__update(&m->proc, rows, k);
out:
	free(rows);
	free(pr);
	return ret;
}

static int collect_pairs(struct ctxmon_metrics *m)
{
	struct cgagg_pair_row *pr = NULL;
	struct fam_row *rows = NULL;
	size_t n = 0;
	int ret = cgagg__read_pairs(m->g, &pr, &n);

	if (ret < 0)
		return ret;
	rows = calloc(n ? n : 1, sizeof(*rows));
	if (!rows) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		/* both ids non-zero, but never admit the overflow row */
		rows[i].k1 = pr[i].victim;
		rows[i].k2 = pr[i].culprit;
		rows[i].v = &pr[i].ns;
		rows[i].act = pr[i].ns;
		/* names are looked up when rendering */
		cg_name(m, pr[i].victim);
		cg_name(m, pr[i].culprit);
	}
	m->npair_seen = n;
	ret = fam__update(&m->pair, rows, n);
out:
	free(rows);
	free(pr);
	return ret;
}

static int collect_cpus(struct ctxmon_metrics *m, uint64_t now)
{
	struct cgagg_cpu_row *c = NULL;
	int n = 0, ret = cgagg__read_cpus(m->g, now, &c, &n, &m->tot);

	if (ret < 0)
		return ret;
	if (!m->cpu_busy) {
		m->cpu_busy = calloc((size_t)n, sizeof(uint64_t));
		m->cpu_idle = calloc((size_t)n, sizeof(uint64_t));
		if (!m->cpu_busy || !m->cpu_idle) {
			free(c);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < n; i++) {
		/* the open interval is read racily with its closing: never
		 * let the exported counters go back */
		if (c[i].busy_ns > m->cpu_busy[i])
			m->cpu_busy[i] = c[i].busy_ns;
		if (c[i].idle_ns > m->cpu_idle[i])
			m->cpu_idle[i] = c[i].idle_ns;
	}
	free(m->cpus);
	m->cpus = c;
	m->ncpus = n;
	return 0;
}

int ctxmon_metrics_collect(struct ctxmon_metrics *m)
{
	uint64_t now = mono_ns();
	struct timespec wall;
	int ret;

	m->names_scanned = false;
	if (!m->names.n) {
		m->names_scanned = true;
		cgroup_names__scan(&m->names);
	}
	ret = collect_cgroups(m);
	if (!ret)
		ret = collect_procs(m, now);
	if (!ret)
		ret = collect_pairs(m);
	if (!ret)
		ret = collect_cpus(m, now);
	if (ret < 0)
		return ret;
	m->nprogs = cgagg__prog_stats(m->g, m->progs, CGAGG_MAX_PROGS);
	m->rss_bytes = rss_bytes();
	clock_gettime(CLOCK_REALTIME, &wall);
	m->collect_wall = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
	m->collections++;
	return 0;
}

int ctxmon_metrics_get_info(const struct ctxmon_metrics *m,
			    struct ctxmon_metrics_info *out)
{
	memset(out, 0, sizeof(*out));
	out->tp_btf = cgagg__tp_btf(m->g);
	out->collections = m->collections;
	out->cgroups_seen = m->ncg_seen;
	out->processes_seen = m->nproc_seen;
	out->pairs_seen = m->npair_seen;
	out->samples = m->samples;
	return 0;
}
