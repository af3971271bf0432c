/*
 * diff.c - rows of two captures matched by name and compared
 * (include/ctxmon/diff.h).
 *
 * Keys: a thread is "PROC/THREAD#K" (K its rank among same-named threads
 * of same-named processes, ordered by pid then tid), a process "PROC#K".
 * Two runs of one workload give the same keys as long as their threads
 * are created in the same order, which is what makes "the second worker
 * waited longer" comparable across runs whose tids differ.  Without pids
 * (perf script text) there is neither a process name nor a creation
 * order to rank by, so the key is "COMM/TID": two traces of one run
 * pair up exactly, two runs do not pair at all (and say so).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/diff.h>

static const struct {
	const char *name, *unit;
} fields[CTXMON_DF__MAX] = {
	[CTXMON_DF_SWITCHES] = { "switches", "" },
	[CTXMON_DF_VOLUNTARY] = { "voluntary", "" },
	[CTXMON_DF_INVOLUNTARY] = { "involuntary", "" },
	[CTXMON_DF_RUN] = { "run", "ms" },
	[CTXMON_DF_WAIT] = { "wait", "ms" },
	[CTXMON_DF_SLEEP] = { "sleep", "ms" },
	[CTXMON_DF_MIGRATIONS] = { "migrations", "" },
	[CTXMON_DF_WAKEUPS] = { "wakeups", "" },
	[CTXMON_DF_LAT_AVG] = { "lat_avg", "us" },
	[CTXMON_DF_LAT_MAX] = { "lat_max", "us" },
};

const char *ctxmon_diff_field_name(unsigned f)
{
	return f < CTXMON_DF__MAX ? fields[f].name : NULL;
}

const char *ctxmon_diff_field_unit(unsigned f)
{
	return f < CTXMON_DF__MAX ? fields[f].unit : NULL;
}

int ctxmon_diff_field_lookup(const char *name)
{
	for (unsigned f = 0; f < CTXMON_DF__MAX; f++)
		if (!strcmp(name, fields[f].name))
			return (int)f;
	return -ENOENT;
}

static void values(const struct ctxmon_stats *s, double *v)
{
	double sleep = 0;

	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		sleep += (double)s->sleep_ns[i];
	v[CTXMON_DF_SWITCHES] = (double)s->switch_out;
	v[CTXMON_DF_VOLUNTARY] = (double)s->voluntary;
	v[CTXMON_DF_INVOLUNTARY] = (double)s->involuntary;
	v[CTXMON_DF_RUN] = (double)s->run_ns / 1e6;
	v[CTXMON_DF_WAIT] = (double)s->wait_ns / 1e6;
	v[CTXMON_DF_SLEEP] = sleep / 1e6;
	v[CTXMON_DF_MIGRATIONS] = (double)s->migrations;
	v[CTXMON_DF_WAKEUPS] = (double)s->wakeups;
	v[CTXMON_DF_LAT_AVG] = s->lat.count ? (double)s->lat.sum_ns /
						      (double)s->lat.count / 1e3 :
					      0;
	v[CTXMON_DF_LAT_MAX] = (double)s->lat.max_ns / 1e3;
}

struct keyed {
	char proc[20], comm[20];
	pid_t tgid, tid;
	const struct ctxmon_stats *s;
	char key[80];
};

static void clean(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (src[i] < 0x20 || src[i] == 0x7f || src[i] == '/' ||
			  src[i] == '#') ? '?' : src[i];
	dst[i] = 0;
	if (!i)
		snprintf(dst, len, "?");
}

static int cmp_keyed(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	int c = strcmp(a->proc, b->proc);

	if (!c)
		c = strcmp(a->comm, b->comm);
	if (!c)
		c = (a->tgid > b->tgid) - (a->tgid < b->tgid);
	if (!c)
		c = (a->tid > b->tid) - (a->tid < b->tid);
	return c;
}

static int cmp_key(const void *x, const void *y)
{
	return strcmp(((const struct keyed *)x)->key,
		      ((const struct keyed *)y)->key);
}

static bool pids_known(const struct ctxmon_stats *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].tgid > 0)
			return true;
	return !n;
}

enum ctxmon_diff_match ctxmon_diff_match_of(const struct ctxmon_stats *ra,
					    size_t na,
					    const struct ctxmon_stats *rb,
					    size_t nb)
{
	return pids_known(ra, na) && pids_known(rb, nb) ?
		       CTXMON_DIFF_BY_NAME :
		       CTXMON_DIFF_BY_COMM_TID;
}

/* Keys for rows @r[@n]; malloc'd array in key order. */
static struct keyed *make_keys(const struct ctxmon_stats *r, size_t n,
			       enum ctxmon_rows kind,
			       enum ctxmon_diff_match match)
{
	struct keyed *k = calloc(n ? n : 1, sizeof(*k));
	size_t rank = 0;

	if (!k)
		return NULL;
	if (match == CTXMON_DIFF_BY_COMM_TID) {
		for (size_t i = 0; i < n; i++) {
			clean(k[i].comm, sizeof(k[i].comm), r[i].comm);
			k[i].tgid = r[i].tgid;
			k[i].tid = r[i].tid;
			k[i].s = &r[i];
			snprintf(k[i].key, sizeof(k[i].key), "%s/%d",
				 k[i].comm, (int)r[i].tid);
		}
		qsort(k, n, sizeof(*k), cmp_key);
		return k;
	}
	for (size_t i = 0; i < n; i++) {
		const char *proc = r[i].comm;

		/* a thread's process is named by its leader, when seen */
		for (size_t j = 0; kind == CTXMON_ROWS_THREADS && j < n; j++) {
			if (r[j].tid == r[i].tgid && r[j].tgid == r[i].tgid) {
				proc = r[j].comm;
				break;
			}
		}
		clean(k[i].proc, sizeof(k[i].proc), proc);
		clean(k[i].comm, sizeof(k[i].comm), r[i].comm);
		k[i].tgid = r[i].tgid;
		k[i].tid = r[i].tid;
		k[i].s = &r[i];
	}
	qsort(k, n, sizeof(*k), cmp_keyed);
	for (size_t i = 0; i < n; i++) {
		if (i && (strcmp(k[i].proc, k[i - 1].proc) ||
			  strcmp(k[i].comm, k[i - 1].comm)))
			rank = 0;
		if (kind == CTXMON_ROWS_THREADS)
			snprintf(k[i].key, sizeof(k[i].key), "%s/%s#%zu",
				 k[i].proc, k[i].comm, rank);
		else
			snprintf(k[i].key, sizeof(k[i].key), "%s#%zu", k[i].comm,
				 rank);
		rank++;
	}
	/* the merge below walks both sides in key order */
	qsort(k, n, sizeof(*k), cmp_key);
	return k;
}

static int cmp_change(const void *x, const void *y, void *ctx)
{
	const struct ctxmon_diff_row *a = x, *b = y;
	unsigned f = *(const unsigned *)ctx;
	double da = fabs(a->b[f] - a->a[f]);
	double db = fabs(b->b[f] - b->a[f]);

	if (da != db)
		return da < db ? 1 : -1;
	return strcmp(a->key, b->key);
}

struct ctxmon_diff_row *ctxmon_diff_rows(const struct ctxmon_stats *ra,
					 size_t na,
					 const struct ctxmon_stats *rb,
					 size_t nb, enum ctxmon_rows kind,
					 unsigned sort, size_t *n)
{
	enum ctxmon_diff_match match = ctxmon_diff_match_of(ra, na, rb, nb);
	struct keyed *ka = make_keys(ra, na, kind, match);
	struct keyed *kb = make_keys(rb, nb, kind, match);
	struct ctxmon_diff_row *out = calloc(na + nb + 1, sizeof(*out));
	size_t i = 0, j = 0, o = 0;

	*n = 0;
	if (!ka || !kb || !out || sort >= CTXMON_DF__MAX) {
		free(ka);
		free(kb);
		free(out);
		errno = sort >= CTXMON_DF__MAX ? EINVAL : ENOMEM;
		return NULL;
	}
	/* both key lists are sorted by the same order: merge them */
	while (i < na || j < nb) {
		int c = i >= na ? 1 : j >= nb ? -1 : strcmp(ka[i].key, kb[j].key);
		struct ctxmon_diff_row *d = &out[o++];

		if (c <= 0) {
			snprintf(d->key, sizeof(d->key), "%s", ka[i].key);
			d->in_a = true;
			values(ka[i++].s, d->a);
		}
		if (c >= 0) {
			snprintf(d->key, sizeof(d->key), "%s", kb[j].key);
			d->in_b = true;
			values(kb[j++].s, d->b);
		}
	}
	free(ka);
	free(kb);
	qsort_r(out, o, sizeof(*out), cmp_change, &sort);
	*n = o;
	return out;
}
