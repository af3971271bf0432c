/*
 * fold.c - rows of exited tasks summed by comm.
 *
 * A machine that forks all day makes threads without end; keeping a row
 * for each one that has exited makes a long capture grow with its
 * duration.  Past a bound, the accounting and the in-kernel counting fold
 * the oldest exited rows here: one row per comm, with every count, time
 * and the latency histogram summed (ctxmon_stats_add), and `folded`
 * saying how many tasks it holds.  Sums over all rows are unchanged.
 * Comms are interned, so a pointer names one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int fold__add(struct fold *f, const struct ctxmon_stats *row)
{
	struct ctxmon_stats *r = NULL;

	for (size_t i = 0; i < f->n && !r; i++)
		if (f->rows[i].comm == row->comm &&
		    f->rows[i].orphaned == row->orphaned)
			r = &f->rows[i];
	if (!r) {
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 64;
			struct ctxmon_stats *n =
				realloc(f->rows, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			f->rows = n;
			f->cap = cap;
		}
		r = &f->rows[f->n++];
		memset(r, 0, sizeof(*r));
		r->ppid = -1;
		r->comm = row->comm;
		r->orphaned = row->orphaned;
		r->exited = true;
		r->first_ts = row->first_ts;
		r->last_ts = row->last_ts;
		r->lat.max_waker_tid = r->lat.max_cpu = -1;
		r->lat.max_prev_tid = -1;
	}
	if (row->first_ts && (!r->first_ts || row->first_ts < r->first_ts))
		r->first_ts = row->first_ts;
	if (row->last_ts > r->last_ts)
		r->last_ts = row->last_ts;
	r->target = r->target || row->target;
	r->folded += row->folded ? row->folded : 1;
	r->nthreads = r->folded;
	ctxmon_stats_add(r, row);
	return 0;
}

size_t fold__copy(const struct fold *f, struct ctxmon_stats *out)
{
	if (f->n)
		memcpy(out, f->rows, f->n * sizeof(*out));
	return f->n;
}

void fold__clear(struct fold *f)
{
	free(f->rows);
	memset(f, 0, sizeof(*f));
}

static int cmp_last(const void *a, const void *b)
{
	const struct ctxmon_stats *x = a, *y = b;

	/* live rows last, exited ones oldest first */
	if (x->exited != y->exited)
		return x->exited ? -1 : 1;
	if (x->folded != y->folded)
		return x->folded ? 1 : -1;
	return (x->last_ts > y->last_ts) - (x->last_ts < y->last_ts);
}

int fold__rows(struct ctxmon_stats *rows, size_t *n, size_t keep)
{
	struct fold f = { 0 };
	size_t nexit = 0, k, j = 0;
	int ret = 0;

	for (size_t i = 0; i < *n; i++)
		nexit += rows[i].exited && !rows[i].folded;
	if (nexit <= 2 * keep)
		return 0;
	qsort(rows, *n, sizeof(*rows), cmp_last);
	/* exited rows now come first, oldest first */
	k = nexit - keep;
	for (size_t i = 0; i < k; i++) {
		if (fold__add(&f, &rows[i]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	memmove(rows, rows + k, (*n - k) * sizeof(*rows));
	j = *n - k;
	/* the folded rows take no more room than the rows they sum */
	j += fold__copy(&f, rows + j);
	*n = j;
out:
	fold__clear(&f);
	return ret;
}

int ctxmon_rows_fold_exited(struct ctxmon_stats *rows, size_t *n,
			    size_t keep)
{
	if (!n || (*n && !rows))
		return -EINVAL;
	return fold__rows(rows, n, keep);
}
