/*
 * hist_out.c - print hist tables as the kernel's `hist` file prints them
 * (kernel/trace/trace_events_hist.c: hist_trigger_show), or as JSON.
 *
 * Text: a header with the trigger info line, one line per entry
 * ("{ key: value, ... } hitcount: N  val: M"), sorted on the sort keys
 * (ties broken on the keys, ascending, so the order is reproducible), the
 * onmax()/onchange() maximum and saved fields, then Totals with Hits,
 * Entries and Dropped.  .sym keys print the address with no symbol: the
 * events ctxmon decodes carry no kernel addresses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/causes.h>

#include "analysis/hist_int.h"
#include "output/json_out.h"

struct sort_ctx {
	const struct hist_trig *t;
	const struct hist_entry *ents;
};

static int cmp_u(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_key(const struct hist_expr *k, uint64_t a, uint64_t b)
{
	if (k->str)
		return strcmp((const char *)(uintptr_t)a,
			      (const char *)(uintptr_t)b);
	if (k->sgn && !(k->mods & (HM_LOG2 | HM_BUCKETS | HM_HEX)))
		return ((int64_t)a > (int64_t)b) - ((int64_t)a < (int64_t)b);
	return cmp_u(a, b);
}

static uint64_t sort_val(const struct hist_entry *e, int idx)
{
	return idx == -1 ? e->hitcount : e->sum[idx];
}

static int cmp_entries(const void *x, const void *y, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct hist_entry *a = &c->ents[*(const uint32_t *)x];
	const struct hist_entry *b = &c->ents[*(const uint32_t *)y];
	const struct hist_trig *t = c->t;
	int r;

	for (int i = 0; i < t->nsort; i++) {
		int idx = t->sort[i].idx;

		if (idx >= 100)
			r = cmp_key(t->keys[idx - 100], a->key[idx - 100],
				    b->key[idx - 100]);
		else
			r = cmp_u(sort_val(a, idx), sort_val(b, idx));
		if (r)
			return t->sort[i].desc ? -r : r;
	}
	for (int i = 0; i < t->nkeys; i++) {
		r = cmp_key(t->keys[i], a->key[i], b->key[i]);
		if (r)
			return r;
	}
	return 0;
}

static uint32_t *sorted(const struct hist_trig *t)
{
	struct sort_ctx c = { t, t->tab->ents };
	uint32_t *idx = malloc((t->tab->n + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < t->tab->n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, t->tab->n, sizeof(*idx), cmp_entries, &c);
	return idx;
}

static const char *key_name(const struct hist_expr *k)
{
	switch (k->kind) {
	case HX_FIELD:
	case HX_VARREF:
		return k->name;
	case HX_TS:
		return "common_timestamp";
	case HX_CPU:
		return "common_cpu";
	case HX_PID:
		return "common_pid";
	case HX_COMM:
		return "common_comm";
	default:
		return k->text;
	}
}

static const char *sys_name(const struct ctxmon_hist *h, uint64_t id,
			    char *buf, size_t len)
{
	const char *n = ctxmon_syscall_name(h->arch, (long)id);

	if (!n)
		return "unknown_syscall";
	snprintf(buf, len, "sys_%s", n);
	return buf;
}

static void print_key(FILE *f, const struct ctxmon_hist *h,
		      const struct hist_trig *t, const uint64_t *key,
		      const char *comm)
{
	char buf[64];

	fputs("{ ", f);
	for (int i = 0; i < t->nkeys; i++) {
		const struct hist_expr *k = t->keys[i];
		const char *n = key_name(k);
		unsigned long long v = key[i];

		if (i)
			fputs(", ", f);
		if (k->mods & HM_HEX)
			fprintf(f, "%s: %llx", n, v);
		else if (k->mods & HM_SYM)
			fprintf(f, "%s: [%llx] %-45s", n, v, "");
		else if (k->mods & HM_SYMOFF)
			fprintf(f, "%s: [%llx] %-55s", n, v, "");
		else if (k->mods & HM_EXECNAME)
			fprintf(f, "%s: %-16s[%10llu]", n, comm ? comm : "<...>",
				v);
		else if (k->mods & HM_SYSCALL)
			fprintf(f, "%s: %-30s[%3llu]", n,
				sys_name(h, v, buf, sizeof(buf)), v);
		else if (k->mods & HM_LOG2)
			fprintf(f, "%s: ~ 2^%-2llu", n, v);
		else if (k->mods & HM_BUCKETS)
			fprintf(f, "%s: ~ %llu-%llu", n, v,
				v + (unsigned long long)k->buckets - 1);
		else if (k->str)
			fprintf(f, "%s: %-50s", n, (const char *)(uintptr_t)v);
		else
			fprintf(f, "%s: %10llu", n, v);
	}
	fputs(" }", f);
}

static unsigned pct(uint64_t v, uint64_t total)
{
	if (!total)
		return v ? UINT32_MAX : 0;
	if (v < UINT64_MAX / 10000)
		return (unsigned)(v * 10000 / total);
	total /= 10000;
	return total ? (unsigned)(v / total) : UINT32_MAX;
}

static void print_val(FILE *f, const char *name, unsigned mods, uint64_t v,
		      uint64_t total, uint64_t max)
{
	if (mods & HM_PERCENT) {
		unsigned p = pct(v, total);

		if (p == UINT32_MAX)
			fprintf(f, " %s (%%):[ERROR]", name);
		else
			fprintf(f, " %s (%%): %3u.%02u", name, p / 100, p % 100);
	} else if (mods & HM_GRAPH) {
		char bar[21];
		unsigned p = pct(v, max), i;

		if (p == UINT32_MAX) {
			fprintf(f, " %s: %20s", name, "[ERROR]");
			return;
		}
		p = p * 20 / 10000;
		for (i = 0; i < p && i < 20; i++)
			bar[i] = '#';
		while (i < 20)
			bar[i++] = ' ';
		bar[20] = '\0';
		fprintf(f, " %s: %20s", name, bar);
	} else if (mods & HM_HEX) {
		fprintf(f, " %s: %10" PRIx64, name, v);
	} else {
		fprintf(f, " %s: %10" PRIu64, name, v);
	}
}

static const char *val_name(const struct hist_expr *v)
{
	return v->kind == HX_FIELD || v->kind == HX_VARREF ? v->name :
	       v->kind == HX_TS ? "common_timestamp" : v->text;
}

static const char *param_name(const char *p)
{
	return p[0] == '$' ? p + 1 : p;
}

static void print_actions(FILE *f, const struct hist_trig *t,
			  const struct hist_entry *e)
{
	for (int i = 0; i < t->nacts; i++) {
		const struct hist_action *a = &t->acts[i];

		if (a->handler == HA_ONMATCH || a->action == HA_SNAPSHOT)
			continue;
		fprintf(f, "\n\t%s: %10" PRIu64,
			a->handler == HA_ONMAX ? "max" : "changed",
			e->track[i]);
		if (a->action != HA_SAVE)
			continue;
		for (int k = 0; k < a->nparams; k++) {
			uint64_t v = e->saved[a->save_base + k];

			if (a->params[k]->str)
				fprintf(f, "  %s: %-32s", param_name(a->pstr[k]),
					v ? (const char *)(uintptr_t)v : "");
			else
				fprintf(f, "  %s: %10" PRIu64,
					param_name(a->pstr[k]), v);
		}
	}
}

static void totals(const struct hist_trig *t, uint64_t *sum, uint64_t *max)
{
	for (int i = 0; i <= t->nvals; i++)
		sum[i] = max[i] = 0;
	for (size_t k = 0; k < t->tab->n; k++) {
		const struct hist_entry *e = &t->tab->ents[k];

		for (int i = 0; i <= t->nvals; i++) {
			uint64_t v = i ? e->sum[i - 1] : e->hitcount;

			sum[i] += v;
			if (v > max[i])
				max[i] = v;
		}
	}
}

int hist__print_trig(FILE *f, const struct ctxmon_hist *h,
		     struct hist_trig *t)
{
	uint64_t sum[HIST_MAX_VALS + 1], max[HIST_MAX_VALS + 1];
	const char *info = hist__trig_info(t);
	uint32_t *idx = sorted(t);

	if (!info || !idx) {
		free(idx);
		return -ENOMEM;
	}
	totals(t, sum, max);
	fprintf(f, "# event histogram\n#\n# trigger info: %s\n#\n\n", info);
	for (size_t k = 0; k < t->tab->n; k++) {
		const struct hist_entry *e = &t->tab->ents[idx[k]];

		print_key(f, h, t, e->key, e->comm);
		if (!t->nohitcount)
			print_val(f, "hitcount", t->hc_mods, e->hitcount,
				  sum[0], max[0]);
		for (int i = 0; i < t->nvals; i++) {
			fputc(' ', f);
			print_val(f, val_name(t->vals[i]), t->vals[i]->mods,
				  e->sum[i], sum[i + 1], max[i + 1]);
		}
		print_actions(f, t, e);
		fputc('\n', f);
	}
	for (int i = 0; t->tab->snap && i < t->nacts; i++) {
		const struct hist_action *a = &t->acts[i];

		if (a->action != HA_SNAPSHOT)
			continue;
		fprintf(f, "\nSnapshot noted (ctxmon keeps no trace buffer to "
			   "copy).  Details:\n"
			   "\ttriggering value { %s(%s) }: %10" PRIu64
			   "\ttriggered by event with key: ",
			a->handler == HA_ONMAX ? "onmax" : "onchange",
			a->track_str, t->tab->snap_val);
		print_key(f, h, t, t->tab->snap_key, NULL);
		fputc('\n', f);
		break;
	}
	fprintf(f, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n"
		   "    Dropped: %" PRIu64 "\n",
		t->tab->hits, t->tab->n, t->tab->drops);
	free(idx);
	return 0;
}

/* ---- JSON ------------------------------------------------------------- */

static void json_key(FILE *f, const struct ctxmon_hist *h,
		     const struct hist_trig *t, const struct hist_entry *e)
{
	char buf[64];

	fputs("{", f);
	for (int i = 0; i < t->nkeys; i++) {
		const struct hist_expr *k = t->keys[i];
		uint64_t v = e->key[i];

		if (i)
			fputc(',', f);
		json__put_str(f, key_name(k));
		fputc(':', f);
		if (k->str)
			json__put_str(f, (const char *)(uintptr_t)v);
		else if (k->mods & HM_EXECNAME) {
			fprintf(f, "{\"value\":%" PRIu64 ",\"execname\":", v);
			json__put_str(f, e->comm ? e->comm : "<...>");
			fputc('}', f);
		} else if (k->mods & HM_SYSCALL) {
			fprintf(f, "{\"value\":%" PRIu64 ",\"syscall\":", v);
			json__put_str(f, sys_name(h, v, buf, sizeof(buf)));
			fputc('}', f);
		} else if (k->mods & HM_LOG2)
			fprintf(f, "{\"log2\":%" PRIu64 "}", v);
		else if (k->mods & HM_BUCKETS)
			fprintf(f, "{\"from\":%" PRIu64 ",\"to\":%" PRIu64 "}",
				v, v + k->buckets - 1);
		else if (k->sgn)
			fprintf(f, "%" PRId64, (int64_t)v);
		else
			fprintf(f, "%" PRIu64, v);
	}
	fputs("}", f);
}

int hist__print_trig_json(FILE *f, const struct ctxmon_hist *h,
			  struct hist_trig *t)
{
	const char *info = hist__trig_info(t);
	uint32_t *idx = sorted(t);

	if (!info || !idx) {
		free(idx);
		return -ENOMEM;
	}
	fprintf(f, "{\"event\":\"%s:%s\",\"trigger\":", t->ev->system,
		t->ev->name);
	json__put_str(f, info);
	fprintf(f, ",\"paused\":%s,\"entries\":[", t->paused ? "true" : "false");
	for (size_t k = 0; k < t->tab->n; k++) {
		const struct hist_entry *e = &t->tab->ents[idx[k]];

		fprintf(f, "%s{\"key\":", k ? "," : "");
		json_key(f, h, t, e);
		fprintf(f, ",\"hitcount\":%" PRIu64 ",\"vals\":{", e->hitcount);
		for (int i = 0; i < t->nvals; i++) {
			fputs(i ? "," : "", f);
			json__put_str(f, val_name(t->vals[i]));
			fprintf(f, ":%" PRIu64, e->sum[i]);
		}
		fputc('}', f);
		for (int i = 0; i < t->nacts; i++) {
			const struct hist_action *a = &t->acts[i];

			if (a->handler == HA_ONMATCH ||
			    !(e->track_set & (1u << i)))
				continue;
			fprintf(f, ",\"%s\":%" PRIu64,
				a->handler == HA_ONMAX ? "max" : "changed",
				e->track[i]);
			if (a->action != HA_SAVE)
				continue;
			fputs(",\"saved\":{", f);
			for (int p = 0; p < a->nparams; p++) {
				uint64_t v = e->saved[a->save_base + p];

				fputs(p ? "," : "", f);
				json__put_str(f, param_name(a->pstr[p]));
				fputc(':', f);
				if (a->params[p]->str)
					json__put_str(f, (const char *)(uintptr_t)v);
				else
					fprintf(f, "%" PRIu64, v);
			}
			fputc('}', f);
		}
		fputc('}', f);
	}
	fprintf(f, "],\"totals\":{\"hits\":%" PRIu64 ",\"entries\":%zu,"
		   "\"dropped\":%" PRIu64 "}}",
		t->tab->hits, t->tab->n, t->tab->drops);
	free(idx);
	return 0;
}

char *ctxmon_hist_format(const struct ctxmon_hist *h,
			 enum ctxmon_hist_format fmt)
{
	struct hist_evdef *last = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err = 0, n = 0;

	if (!f)
		return NULL;
	if (fmt == CTXMON_HIST_JSON)
		fputs("{" CTXMON_JSON_SCHEMA ",\"histograms\":[", f);
	for (size_t i = 0; i < h->ntrigs && !err; i++) {
		struct hist_trig *t = h->trigs[i];

		if (t->ctl)
			continue;
		if (fmt == CTXMON_HIST_JSON) {
			fputs(n++ ? "," : "", f);
			err = hist__print_trig_json(f, h, t);
			continue;
		}
		if (t->ev != last)
			fprintf(f, "%s# events/%s/%s/hist\n", n ? "\n" : "",
				t->ev->system, t->ev->name);
		else
			fputs("\n\n", f);
		last = t->ev;
		n++;
		err = hist__print_trig(f, h, t);
	}
	if (fmt == CTXMON_HIST_JSON)
		fputs("]}\n", f);
	if (fclose(f) != 0 || err) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}
