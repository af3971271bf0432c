/*
 * latency_out.c - `ctxmon latency` output: wakeup latency histograms in the
 * style of bcc's runqlat (log2 buckets, or linear ones), each with its
 * quantiles and the context of its maximum, then who wakes whom.
 *
 * Histograms come from the fine histogram of each summary
 * (include/ctxmon/causes.h).  Log2 buckets are exact sums of fine buckets.
 * A linear bucket gets every fine bucket whose middle falls in it, so a
 * value within one fine bucket (3% of it) of a linear bucket's edge may be
 * counted in the neighbour; the counts still add up to the total.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/rows.h>
#include "output/json_out.h"
#include "output/output.h"

/* the one method of ctxmon_lat_quantile and ctxmon_latency_percentile */
#define PCT_METHOD                                                        \
	"nearest rank, interpolated within its histogram bucket (3% wide "  \
	"here, log2 in top and stat rows); the last rank is the maximum"

#define BAR 40
#define LOG2_BUCKETS CTXMON_HIST_BUCKETS

static void log2_hist(const struct ctxmon_lat_summary *l, uint64_t *out)
{
	memset(out, 0, LOG2_BUCKETS * sizeof(*out));
	for (unsigned i = 0; l->fine && i < CTXMON_FINE_BUCKETS; i++) {
		out[ctxmon_log2_bucket(ctxmon_fine_lo(i))] += l->fine[i];
	}
}

/* @n linear buckets of @width covering [0, max]; @out has @n entries. */
static uint64_t linear_hist(const struct ctxmon_lat_summary *l, unsigned n,
			    uint64_t *out)
{
	uint64_t width = l->max_ns / n + 1;

	memset(out, 0, n * sizeof(*out));
	for (unsigned i = 0; l->fine && i < CTXMON_FINE_BUCKETS; i++) {
		uint64_t lo = ctxmon_fine_lo(i), hi = ctxmon_fine_hi(i), b;

		if (!l->fine[i])
			continue;
		if (hi > l->max_ns)
			hi = l->max_ns;
		if (lo < l->min_ns)
			lo = l->min_ns;
		b = (lo + (hi - lo) / 2) / width;
		out[b < n ? b : n - 1] += l->fine[i];
	}
	return width;
}

static void bar(FILE *f, uint64_t v, uint64_t vmax)
{
	unsigned stars = vmax ? (unsigned)(v * BAR / vmax) : 0;

	if (v && !stars)
		stars = 1;
	fputc('|', f);
	for (unsigned i = 0; i < BAR; i++)
		fputc(i < stars ? '*' : ' ', f);
	fputs("|\n", f);
}

static void text_label(FILE *f, const struct latency_group *g)
{
	switch (g->kind) {
	case LAT_THREAD:
		/* A trace without tgids (ftrace text, trace.dat) leaves
		 * the process unknown: say so rather than "pid -1". */
		if (g->tgid >= 0)
			fprintf(f, "tid %d (%s, pid %d)", g->id,
				g->comm ? g->comm : "?", g->tgid);
		else
			fprintf(f, "tid %d (%s, pid unknown)", g->id,
				g->comm ? g->comm : "?");
		break;
	case LAT_PROCESS:
		fprintf(f, "pid %d (%s)", g->id, g->comm ? g->comm : "?");
		break;
	default:
		fprintf(f, "cpu%d", g->id);
		break;
	}
}

static void text_who(FILE *f, int tid, const char *comm)
{
	if (tid == 0)
		fprintf(f, "idle");
	else if (tid < 0)
		fprintf(f, "?");
	else
		fprintf(f, "%d (%s)", tid, comm ? comm : "?");
}

static void text_max(FILE *f, const struct ctxmon_lat_ctx *m)
{
	char d[16];

	fprintf(f, "  max %s: ", output__dur(d, sizeof(d), m->ns));
	if (m->tid > 0)
		fprintf(f, "%d (%s) ", m->tid, m->comm ? m->comm : "?");
	fprintf(f, "woken at %" PRIu64 ".%09" PRIu64 " ",
		m->wake_ts / 1000000000, m->wake_ts % 1000000000);
	switch (m->ctx) {
	case CTXMON_WAKE_IRQ:
	case CTXMON_WAKE_SOFTIRQ:
		fprintf(f, "from %s on cpu%d (interrupting ",
			m->ctx == CTXMON_WAKE_IRQ ? "a hard irq" : "a softirq",
			m->waker_cpu);
		text_who(f, m->waker_tid, m->waker_comm);
		fputc(')', f);
		break;
	case CTXMON_WAKE_TASK:
		fprintf(f, "by ");
		text_who(f, m->waker_tid, m->waker_comm);
		if (m->waker_cpu >= 0)
			fprintf(f, " on cpu%d", m->waker_cpu);
		break;
	default:
		fprintf(f, "by an unknown waker");
		break;
	}
	fprintf(f, ", ran at %" PRIu64 ".%09" PRIu64 " on cpu%d ",
		m->run_ts / 1000000000, m->run_ts % 1000000000, m->cpu);
	if (m->prev_tid < 0) {
		/* its switch-in was not traced (the record's run time placed
		 * it), or the CPU's first switch was: no task before it */
		fprintf(f, "(the task before it unknown)\n");
		return;
	}
	fprintf(f, "after ");
	text_who(f, m->prev_tid, m->prev_comm);
	fputc('\n', f);
}

static int text_group(FILE *f, const struct latency_group *g, unsigned buckets)
{
	const struct ctxmon_lat_summary *l = g->lat;
	char a[16], b[16], c[16], d[16], e[16], m[16];
	uint64_t h2[LOG2_BUCKETS], *h = h2, vmax = 0, width = 0;
	unsigned n = LOG2_BUCKETS, first = 0, last = 0;

	if (buckets) {
		h = calloc(buckets, sizeof(*h));
		if (!h)
			return -ENOMEM;
		n = buckets;
		width = linear_hist(l, n, h);
	} else {
		log2_hist(l, h);
	}
	text_label(f, g);
	fprintf(f,
		": %" PRIu64 " wakeups; min %s p50 %s p90 %s p99 %s "
		"p99.9 %s max %s\n",
		l->count, output__dur(a, sizeof(a), l->min_ns),
		output__dur(b, sizeof(b), l->p50_ns),
		output__dur(c, sizeof(c), l->p90_ns),
		output__dur(d, sizeof(d), l->p99_ns),
		output__dur(e, sizeof(e), l->p999_ns),
		output__dur(m, sizeof(m), l->max_ns));
	fprintf(f,
		"  woken by a task %" PRIu64 ", from irq %" PRIu64
		", from softirq %" PRIu64 ", unknown %" PRIu64 "\n",
		l->ctx_count[CTXMON_WAKE_TASK], l->ctx_count[CTXMON_WAKE_IRQ],
		l->ctx_count[CTXMON_WAKE_SOFTIRQ],
		l->ctx_count[CTXMON_WAKE_UNKNOWN]);
	for (unsigned i = 0, any = 0; i < n; i++) {
		if (h[i] > vmax)
			vmax = h[i];
		if (h[i] && !any++)
			first = i;
		if (h[i])
			last = i;
	}
	if (buckets) {
		first = 0;
		last = n - 1;
	}
	fprintf(f, "  %21s : %-8s %s\n", "nsecs", "count", "distribution");
	for (unsigned i = first; i <= last; i++) {
		uint64_t lo = buckets ? i * width : (i ? 1ull << i : 0);
		uint64_t hi = buckets ? lo + width - 1 : (2ull << i) - 1;

		fprintf(f, "  %10" PRIu64 " -> %-10" PRIu64 ": %-8" PRIu64 " ",
			lo, hi, h[i]);
		bar(f, h[i], vmax);
	}
	text_max(f, &l->max);
	fputc('\n', f);
	if (h != h2)
		free(h);
	return 0;
}

static void text_pairs(FILE *f, const struct latency_report *r)
{
	size_t shown = r->limit && r->limit < r->npairs ? r->limit : r->npairs;
	char a[16], b[16], w[48], t[48];

	if (!r->npairs)
		return;
	fprintf(f, "who wakes whom (wakeups that ended a wait; latency of "
		   "the woken):\n");
	fprintf(f, "  %-30s %-30s %9s %9s %9s\n", "WAKER", "WOKEN", "COUNT",
		"LAT-AVG", "LAT-MAX");
	for (size_t i = 0; i < shown; i++) {
		const struct ctxmon_pair *p = &r->pairs[i];

		if (p->ctx == CTXMON_WAKE_IRQ || p->ctx == CTXMON_WAKE_SOFTIRQ)
			snprintf(w, sizeof(w), "[%s]",
				 ctxmon_wake_ctx_name(p->ctx));
		else if (p->from_tid < 0)
			snprintf(w, sizeof(w), "[unknown]");
		else
			snprintf(w, sizeof(w), "%d %s", p->from_tid,
				 p->from_comm ? p->from_comm : "?");
		snprintf(t, sizeof(t), "%d %s", p->to_tid,
			 p->to_comm ? p->to_comm : "?");
		fprintf(f, "  %-30s %-30s %9" PRIu64 " %9s %9s\n", w, t,
			p->count,
			output__dur(a, sizeof(a),
				    p->count ? p->lat_sum_ns / p->count : 0),
			output__dur(b, sizeof(b), p->lat_max_ns));
	}
	if (shown < r->npairs)
		fprintf(f, "  (%zu more pairs)\n", r->npairs - shown);
	fputc('\n', f);
}

static int text_latency(FILE *f, const struct latency_report *r)
{
	const struct ctxmon_session_stats *c = &r->cap;
	size_t shown = 0;

	fprintf(f, "wakeup latency (sched_waking -> on CPU):\n\n");
	for (size_t i = 0; i < r->ngroups; i++) {
		if (!r->groups[i].lat->count)
			continue;
		if (r->limit && shown == r->limit) {
			fprintf(f, "(more not shown; --limit 0 shows all)\n\n");
			break;
		}
		if (text_group(f, &r->groups[i], r->buckets) < 0)
			return -ENOMEM;
		shown++;
	}
	if (!shown)
		fprintf(f, "(no wakeup latency seen)\n\n");
	else
		fprintf(f, "percentiles: %s\n\n", PCT_METHOD);
	text_pairs(f, r);
	fprintf(f,
		"capture: %s, %.3f s, %" PRIu64 " events, %" PRIu64
		" lost, %" PRIu64 " anomalies\n",
		r->backend ? r->backend : "?", r->duration_ns / 1e9, c->events,
		c->lost, r->anomalies);
	if (r->source)
		fprintf(f, "source: %s\n", r->source);
	return 0;
}

/* ---- JSON ---------------------------------------------------------- */

static int json_group(FILE *f, const struct latency_group *g, unsigned buckets)
{
	static const char *const kinds[] = { "thread", "process", "cpu" };
	uint64_t h[LOG2_BUCKETS];
	bool first = true;

	fprintf(f, "{\"kind\":\"%s\",\"id\":", kinds[g->kind]);
	json__put_id(f, g->id);
	fputs(",\"tgid\":", f);
	if (g->tgid >= 0)
		fprintf(f, "%d,\"comm\":", g->tgid);
	else
		fputs("null,\"comm\":", f); /* unknown or not a thread */
	json__put_str(f, g->comm);
	fprintf(f, ",\"latency\":");
	output__json_lat_summary(f, g->lat);
	log2_hist(g->lat, h);
	fprintf(f, ",\"hist\":[");
	for (unsigned i = 0; i < LOG2_BUCKETS; i++) {
		if (!h[i])
			continue;
		fprintf(f,
			"%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64
			",\"count\":%" PRIu64 "}",
			first ? "" : ",", (uint64_t)(i ? 1ull << i : 0),
			(uint64_t)((2ull << i) - 1), h[i]);
		first = false;
	}
	fputc(']', f);
	if (buckets && g->lat->count) {
		uint64_t *lh = calloc(buckets, sizeof(*lh)), w;

		if (!lh)
			return -ENOMEM;
		w = linear_hist(g->lat, buckets, lh);
		fprintf(f, ",\"linear\":[");
		for (unsigned i = 0; i < buckets; i++)
			fprintf(f,
				"%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64
				",\"count\":%" PRIu64 "}",
				i ? "," : "", i * w, i * w + w - 1, lh[i]);
		fputc(']', f);
		free(lh);
	}
	fputc('}', f);
	return 0;
}

static int json_latency(FILE *f, const struct latency_report *r)
{
	const struct ctxmon_session_stats *c = &r->cap;

	fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"%s\",\"backend\":",
		CTXMON_VERSION);
	json__put_str(f, r->backend);
	if (r->source) {
		fprintf(f, ",\"source\":");
		json__put_str(f, r->source);
	}
	fprintf(f,
		",\"duration_ns\":%" PRIu64 ",\"capture\":{\"events\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"order_violations\":%" PRIu64
		",\"anomalies\":%" PRIu64 "},\"percentile_method\":\"%s\""
		",\"buckets\":%u,\"groups\":[",
		r->duration_ns, c->events, c->lost, c->order_violations,
		r->anomalies, PCT_METHOD, r->buckets);
	for (size_t i = 0; i < r->ngroups; i++) {
		if (i)
			fputc(',', f);
		if (json_group(f, &r->groups[i], r->buckets) < 0)
			return -ENOMEM;
	}
	fputc(']', f);
	output__pairs_json(f, r->pairs, r->npairs);
	output__verdict_json(f, r->verdict);
	fprintf(f, "}\n");
	return 0;
}

int output__latency(FILE *f, enum out_format fmt,
		    const struct latency_report *r)
{
	int ret = fmt == OUT_JSON ? json_latency(f, r) : text_latency(f, r);

	if (ret < 0)
		return ret;
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
