/*
 * exp_load.c - an experiment read back from its --csv or --json output
 * (ctxmon_experiment_load in include/ctxmon/experiment.h), for
 * `ctxmon diff` to test one experiment's runs against another's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/experiment.h>

#include "file/file.h"
#include "file/json.h"

/* The CSV's columns before the metrics (run identity and the kernel
 * comparison; "run" there is the run number, not the metric). */
#define CSV_FIXED_COLS 10
#define MAX_COLS 64

struct loading {
	struct ctxmon_run *runs;
	size_t nruns;
	char **names;
	size_t nnames;
};

static int cond_index(struct loading *l, const char *name)
{
	char **nn;

	for (size_t c = 0; c < l->nnames; c++)
		if (!strcmp(l->names[c], name))
			return (int)c;
	nn = realloc(l->names, (l->nnames + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	l->names = nn;
	nn[l->nnames] = strdup(name);
	if (!nn[l->nnames])
		return -ENOMEM;
	return (int)l->nnames++;
}

static int add_run(struct loading *l, const struct ctxmon_run *r)
{
	struct ctxmon_run *p = realloc(l->runs, (l->nruns + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	l->runs = p;
	l->runs[l->nruns++] = *r;
	return 0;
}

/* Split one CSV line in place (quotes as experiment writes them). */
static size_t csv_split(char *line, char **cell, size_t max)
{
	size_t n = 0;
	char *o = line, *p = line;

	while (n < max) {
		bool q = false;
		char sep;

		cell[n++] = o;
		for (; *p && *p != '\n' && (q || *p != ','); p++) {
			if (*p == '"') {
				if (q && p[1] == '"')
					*o++ = *p++;
				else
					q = !q;
				continue;
			}
			*o++ = *p;
		}
		/* the terminator may land on the delimiter: look first */
		sep = *p;
		*o++ = 0;
		if (sep != ',')
			break;
		p++;
	}
	return n;
}

/* Metric of a CSV column name ("elapsed_s" -> elapsed), or -1. */
static int csv_metric(const char *col)
{
	char name[48], *us;

	snprintf(name, sizeof(name), "%s", col);
	us = strrchr(name, '_');
	if (us && (!strcmp(us, "_s") || !strcmp(us, "_ms") ||
		   !strcmp(us, "_us")))
		*us = 0;
	return ctxmon_metric_lookup(name);
}

static unsigned status_of(const char *s)
{
	for (unsigned st = 0; st <= CTXMON_RUN_INTERRUPTED; st++)
		if (s && !strcmp(s, ctxmon_run_status_name(st)))
			return st;
	return CTXMON_RUN_ERROR;
}

static int load_csv(FILE *in, struct loading *l)
{
	char *line = NULL, *cell[MAX_COLS];
	int col[MAX_COLS], ret = -EINVAL;
	size_t cap = 0, ncol;

	if (getline(&line, &cap, in) < 0)
		goto out;
	ncol = csv_split(line, cell, MAX_COLS);
	for (size_t i = 0; i < ncol; i++)
		col[i] = i < CSV_FIXED_COLS ? -1 : csv_metric(cell[i]);
	while (getline(&line, &cap, in) > 0) {
		struct ctxmon_run r = { 0 };
		size_t nc = csv_split(line, cell, MAX_COLS);
		int c;

		if (nc != ncol || nc < 3)
			continue;	/* not a row of this table */
		for (unsigned m = 0; m < CTXMON_M__MAX; m++)
			r.v[m] = NAN;
		r.status = status_of(cell[2]);
		r.index = (unsigned)strtoul(cell[1], NULL, 10);
		c = cond_index(l, cell[0]);
		if (c < 0) {
			ret = c;
			goto out;
		}
		r.cond = (unsigned)c;
		for (size_t i = 0; i < nc; i++)
			if (col[i] >= 0 && *cell[i])
				r.v[col[i]] = strtod(cell[i], NULL);
		if (add_run(l, &r) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = 0;
out:
	free(line);
	return ret;
}

static int load_json(const char *text, size_t len, struct loading *l)
{
	char err[128];
	struct json *j = json__parse(text, len, err, sizeof(err));
	const struct json *runs;
	int ret = -EINVAL;

	if (!j) {
		err__set("not valid JSON: %s", err);
		return -EINVAL;
	}
	runs = json__get(j, "runs");
	if (!json__str(j, "ctxmon") || strcmp(json__str(j, "ctxmon"),
					       "experiment") ||
	    !runs || runs->type != JSON_ARR) {
		err__set("JSON but not ctxmon experiment's");
		goto out;
	}
	for (size_t i = 0; i < runs->n; i++) {
		const struct json *u = runs->items[i];
		const struct json *m = json__get(u, "metrics");
		const char *cn = json__str(u, "condition");
		struct ctxmon_run r = { 0 };
		int c;

		if (!cn)
			continue;
		for (unsigned k = 0; k < CTXMON_M__MAX; k++)
			r.v[k] = json__num(m, ctxmon_metric_name(k), NAN);
		r.status = status_of(json__str(u, "status"));
		r.index = (unsigned)json__num(u, "run", 0);
		r.exit_status = (int)json__num(u, "exit_status", -1);
		c = cond_index(l, cn);
		if (c < 0 || add_run(l, &r) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		l->runs[l->nruns - 1].cond = (unsigned)c;
	}
	ret = 0;
out:
	json__free(j);
	return ret;
}

/* The whole file; malloc'd, *len its length.  NULL and errno. */
static char *slurp(FILE *in, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap), *p;
	size_t got;

	while (buf && (got = fread(buf + n, 1, cap - n, in)) > 0) {
		n += got;
		if (n == cap) {
			p = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
			if (!p) {
				free(buf);
				errno = EFBIG;
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
	}
	*len = n;
	return buf;
}

struct ctxmon_experiment *ctxmon_experiment_load(const char *path)
{
	struct loading l = { 0 };
	struct ctxmon_experiment *e = NULL;
	FILE *in = fopen(path, "re");
	char head[32] = "";
	int ret = -EINVAL;

	if (!in) {
		ret = -errno;
		err__set("%s", strerror(errno));
		goto out;
	}
	if (!fgets(head, sizeof(head), in))
		head[0] = 0;
	rewind(in);
	if (!strncmp(head, "condition,run,status,", 21)) {
		ret = load_csv(in, &l);
	} else if (head[0] == '{') {
		size_t len;
		char *text = slurp(in, &len);

		ret = text ? load_json(text, len, &l) : -errno;
		free(text);
	} else {
		err__set("not an experiment's --csv or --json output");
	}
	if (ret < 0)
		goto out;
	e = ctxmon_experiment_new((const char *const *)l.names, l.nnames);
	for (size_t i = 0; e && i < l.nruns; i++) {
		if (ctxmon_experiment_add(e, &l.runs[i]) < 0) {
			ctxmon_experiment_free(e);
			e = NULL;
		}
	}
	if (!e) {
		ret = -ENOMEM;
		err__set("out of memory");
	}
out:
	if (in)
		fclose(in);
	for (size_t i = 0; i < l.nnames; i++)
		free(l.names[i]);
	free(l.names);
	free(l.runs);
	if (!e)
		errno = -ret;
	return e;
}
