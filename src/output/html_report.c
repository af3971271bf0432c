/*
 * html_report.c - the HTML report (ctxmon/export.h: ctxmon_html_*): one
 * self-contained file, inline CSS and SVG, readable without JavaScript and
 * in print, with no reference to anything outside the file.
 *
 * Plots: per-thread run / runnable / sleep (stacked bars); switch-outs by
 * cause per thread; wakeup-latency histogram per thread (log2 buckets, p50
 * p90 p99 marked); per-CPU busy share over time (heat strip); switches per
 * second over time; and, first, a status box with the kernel comparison
 * and any loss.  Every mark carries an SVG <title> (the browser's own
 * tooltip); a few lines of inline script sort the thread table.
 *
 * The per-thread numbers are the account's rows; the time series is kept
 * here, from the same stream, in at most SERIES_BINS bins per CPU: when the
 * run outgrows them, neighbours are merged and the bin width doubles.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/causes.h>
#include <ctxmon/export.h>

#include "output/output.h"
#include "output/exp_output.h"

#define SERIES_BINS 240
#define FIRST_BIN_NS 10000000ull /* 10 ms */
#define PAGE_W 1320		 /* plot width in px, fits 1400 wide */

struct series_cpu {
	int32_t cur;		/* tid on it, 0 idle, -1 unknown */
	uint64_t since;
	bool seen;
	uint64_t busy[SERIES_BINS];
	uint64_t sw[SERIES_BINS];
	uint64_t first_ts;
};

struct ctxmon_html {
	uint64_t t0, width;	/* bin 0 starts at t0 */
	bool started;
	uint64_t last_ts;
	struct series_cpu *cpu;
	size_t ncpu;
};

struct ctxmon_html *ctxmon_html_new(void)
{
	struct ctxmon_html *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->width = FIRST_BIN_NS;
	return h;
}

void ctxmon_html_free(struct ctxmon_html *h)
{
	if (!h)
		return;
	free(h->cpu);
	free(h);
}

static void rebin(struct ctxmon_html *h)
{
	for (size_t c = 0; c < h->ncpu; c++) {
		struct series_cpu *s = &h->cpu[c];

		for (size_t i = 0; i < SERIES_BINS / 2; i++) {
			s->busy[i] = s->busy[2 * i] + s->busy[2 * i + 1];
			s->sw[i] = s->sw[2 * i] + s->sw[2 * i + 1];
		}
		memset(s->busy + SERIES_BINS / 2, 0,
		       SERIES_BINS / 2 * sizeof(s->busy[0]));
		memset(s->sw + SERIES_BINS / 2, 0,
		       SERIES_BINS / 2 * sizeof(s->sw[0]));
	}
	h->width *= 2;
}

/* Bin of @ts, widening the bins until it fits. */
static size_t bin_of(struct ctxmon_html *h, uint64_t ts)
{
	if (ts < h->t0)
		return 0;
	while ((ts - h->t0) / h->width >= SERIES_BINS)
		rebin(h);
	return (size_t)((ts - h->t0) / h->width);
}

static void add_busy(struct ctxmon_html *h, struct series_cpu *s,
		     uint64_t from, uint64_t to)
{
	bin_of(h, to); /* widen first, so bins stay put below */
	while (from < to) {
		size_t b = bin_of(h, from);
		uint64_t end = h->t0 + (b + 1) * h->width;
		uint64_t d = (to < end ? to : end) - from;

		s->busy[b] += d;
		from += d;
	}
}

static struct series_cpu *series_cpu(struct ctxmon_html *h, int32_t cpu)
{
	if (cpu < 0 || cpu >= 4096)
		return NULL;
	if ((size_t)cpu >= h->ncpu) {
		size_t n = (size_t)cpu + 1;
		struct series_cpu *c = realloc(h->cpu, n * sizeof(*c));

		if (!c)
			return NULL;
		memset(c + h->ncpu, 0, (n - h->ncpu) * sizeof(*c));
		h->cpu = c;
		h->ncpu = n;
	}
	return &h->cpu[cpu];
}

void ctxmon_html_feed(struct ctxmon_html *h, const struct ctxmon_event *ev)
{
	struct series_cpu *s;
	uint64_t ts = ev->ts;

	if (!h || ev->type != CTXMON_EV_SWITCH)
		return;
	if (!h->started) {
		h->t0 = ts;
		h->started = true;
	}
	if (ts < h->last_ts)
		ts = h->last_ts;
	h->last_ts = ts;
	s = series_cpu(h, ev->cpu);
	if (!s)
		return;
	if (s->seen && s->cur != 0)
		add_busy(h, s, s->since, ts);
	if (!s->seen)
		s->first_ts = ts;
	s->sw[bin_of(h, ts)]++;
	s->seen = true;
	s->cur = ev->sw.next_tid;
	s->since = ts;
}

int ctxmon_html_feed_cb(const struct ctxmon_event *ev, void *ctx)
{
	ctxmon_html_feed(ctx, ev);
	return 0;
}

/* ---- writing helpers ------------------------------------------------- */

static const char *dur(char *buf, size_t len, uint64_t ns)
{
	return output__dur(buf, len, ns);
}

static const char *comm_of(const struct ctxmon_stats *t)
{
	return t->comm && *t->comm ? t->comm : "?";
}

static const char *const css =
	"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"color:#1d2330;background:#fff;margin:16px auto;max-width:1360px;"
	"padding:0 16px}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 6px}"
	"p.meta{color:#555;margin:0 0 12px}"
	"section{margin:0 0 22px;break-inside:avoid}"
	".status{border:2px solid #2e7d32;background:#eef7ee;padding:8px 12px;"
	"border-radius:6px;font-size:15px}"
	".status.bad{border-color:#c62828;background:#fdecea}"
	".status.warn{border-color:#ef6c00;background:#fff4e5}"
	".status div{margin:2px 0}"
	".kpis{display:flex;gap:24px;flex-wrap:wrap;margin:10px 0}"
	".kpi b{display:block;font-size:20px}"
	".kpi{color:#555}"
	"svg{display:block;max-width:100%;height:auto}"
	"svg text{font:12px system-ui,sans-serif;fill:#1d2330}"
	"svg .ax{stroke:#999;stroke-width:1}"
	"svg .grid{stroke:#e3e3e3;stroke-width:1}"
	".legend span{display:inline-block;margin-right:14px}"
	".legend i{display:inline-block;width:11px;height:11px;line-height:11px;overflow:hidden;"
	"margin-right:4px;vertical-align:-1px}"
	".multi{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}"
	".multi figure{margin:0;border:1px solid #e3e3e3;padding:4px}"
	".multi figcaption{font-size:12px;color:#333}"
	"table{border-collapse:collapse;font-size:13px;width:100%}"
	"th,td{padding:3px 8px;text-align:right;border-bottom:1px solid #eee}"
	"th{background:#f3f5f8;cursor:pointer;position:sticky;top:0}"
	"td.l,th.l{text-align:left}"
	".note{color:#666;font-size:12px}"
	"@media print{body{max-width:none;margin:0}th{position:static}"
	".multi{grid-template-columns:repeat(2,1fr)}}";

/* Colours: run, runnable, sleep; causes. */
#define C_RUN "#2e7d32"
#define C_WAIT "#f9a825"
#define C_SLEEP "#90a4ae"

static uint64_t sleep_of(const struct ctxmon_stats *t)
{
	return t->sleep_ns[0] + t->sleep_ns[1] + t->sleep_ns[2];
}

static int cmp_switches(const void *a, const void *b)
{
	const struct ctxmon_stats *x = a, *y = b;
	uint64_t sx = x->switch_in + x->switch_out;
	uint64_t sy = y->switch_in + y->switch_out;

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->tid - y->tid;
}

/* ---- sections -------------------------------------------------------- */

static void status_box(FILE *f, const struct ctxmon_html_info *in,
		       const struct ctxmon_stats *th, size_t nth)
{
	struct kernel_cmp k = { 0 };
	bool bad = in->lost || in->lost_records || in->truncated;
	bool match = true;

	if (in->has_rusage) {
		pid_t root = in->sz >= offsetof(struct ctxmon_html_info,
						root_pid) + sizeof(pid_t) ?
				     in->root_pid :
				     0;
		unsigned caps = in->backend ? ctxmon_backend_caps(in->backend) :
					      0;

		unsigned marks = in->sz >= offsetof(struct ctxmon_html_info,
						    orphan_walk) +
						   sizeof(unsigned) &&
					 in->orphan_walk ?
				 in->orphan_walk :
				 kcmp__live_marks(caps);

		kcmp__tree(&k, root, marks, th, nth, NULL, 0, NULL, 0);
		kcmp__caps(&k, caps);
		k.ru_nvcsw = in->ru_nvcsw;
		k.ru_nivcsw = in->ru_nivcsw;
		k.ru_cpu_ns = in->sz >= offsetof(struct ctxmon_html_info,
						 ru_cpu_ns) +
					       sizeof(uint64_t) ?
				      in->ru_cpu_ns :
				      0;
		k.preempt_rt = in->sz >= offsetof(struct ctxmon_html_info,
						  preempt_rt) +
						 sizeof(bool) &&
			       in->preempt_rt;
		k.sig_bound = in->sz >= offsetof(struct ctxmon_html_info,
						 sig_bound) +
						sizeof(bool) &&
			      in->sig_bound && k.shown_running;
		k.valid = true;
		match = kcmp__match(&k);
		bad = bad || !match;
	}
	fprintf(f, "<section id=\"status\" class=\"status%s\">\n",
		bad ? " bad" : "");
	if (in->has_rusage)
		fprintf(f,
			"<div><b>Kernel comparison: %s.</b> Traced voluntary "
			"%" PRIu64 ", kernel (getrusage ru_nvcsw) %" PRIu64
			"; traced involuntary %" PRIu64
			", kernel (ru_nivcsw) %" PRIu64 ".</div>\n",
			!match ? "MISMATCH" : k.bound ? "within bound" : "match",
			k.traced_vol, k.ru_nvcsw,
			k.traced_invol, k.ru_nivcsw);
	if (in->has_rusage) {
		/* unequal numbers: the range that makes them match */
		if (!kcmp__equal(&k))
			output__kernel_verdict(f, &k, "<div class=\"verdict\">",
					       "</div>\n");
		output__kernel_hints(f, &k, "<div>", "</div>\n");
		output__kernel_cpu(f, &k, "<div>", ".</div>\n");
	}
	if (in->has_rusage && k.orphan_procs)
		fprintf(f,
			"<div>Left out: %" PRIu64 " orphaned processes "
			"(not reaped by their parent, or alive when the "
			"command ended, so not in its rusage), voluntary "
			"%" PRIu64 ", involuntary %" PRIu64 ".</div>\n",
			k.orphan_procs, k.orphan_vol, k.orphan_invol);
	if (!in->has_rusage)
		fprintf(f, "<div><b>Kernel comparison:</b> not available "
			   "(only for a command ctxmon launched and "
			   "reaped).</div>\n");
	if (in->lost || in->lost_records)
		fprintf(f,
			"<div><b>LOSS: %" PRIu64 " events lost</b> in %" PRIu64
			" reports; numbers of tasks that ran then are "
			"incomplete.</div>\n",
			in->lost, in->lost_records);
	else
		fprintf(f, "<div><b>No events lost.</b></div>\n");
	if (in->truncated) {
		/* cut or damaged: the problem says which */
		fprintf(f, "<div><b>INCOMPLETE:</b> ");
		svg__escape(f, in->problem ? in->problem :
					     "the recording stops early");
		fprintf(f, ". This report covers what was read.</div>\n");
	}
	fprintf(f, "</section>\n");
}

static void kpis(FILE *f, const struct ctxmon_stats *th, size_t nth,
		 const struct ctxmon_html_info *in)
{
	uint64_t sw = 0, vol = 0, invol = 0, run = 0;
	double secs = in->stop_ts > in->start_ts ?
			      (double)(in->stop_ts - in->start_ts) / 1e9 :
			      0;
	char b[32];

	for (size_t i = 0; i < nth; i++) {
		sw += th[i].switch_out;
		vol += th[i].voluntary;
		invol += th[i].involuntary;
		run += th[i].run_ns;
	}
	fprintf(f, "<div class=\"kpis\">"
		   "<div class=\"kpi\"><b>%zu</b>threads</div>"
		   "<div class=\"kpi\"><b>%" PRIu64 "</b>switch-outs</div>"
		   "<div class=\"kpi\"><b>%" PRIu64 "</b>voluntary</div>"
		   "<div class=\"kpi\"><b>%" PRIu64 "</b>involuntary</div>"
		   "<div class=\"kpi\"><b>%.0f/s</b>switch rate</div>",
		nth, sw, vol, invol, secs > 0 ? (double)sw / secs : 0.0);
	fprintf(f, "<div class=\"kpi\"><b>%s</b>on CPU</div>",
		dur(b, sizeof(b), run));
	fprintf(f, "<div class=\"kpi\"><b>%s</b>window</div></div>\n",
		dur(b, sizeof(b), (uint64_t)(secs * 1e9 + 0.5)));
}

/* The smallest round step (1, 2, 2.5 or 5 times a power of ten) that
 * reaches @max in at most @n gridlines: ns read as 250 ms, 500 ms, ...,
 * counts as 5000, 10000, ... */
static double nice_step(double max, int n)
{
	static const double m[] = { 1, 2, 2.5, 5, 10 };
	double p = pow(10, floor(log10(max / n)));

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (ceil(max / (m[i] * p) - 1e-9) <= n)
			return m[i] * p;
	return 10 * p;
}

/* A gridline's time, as short as a round step allows: "250ms", "1.5s". */
static void tick_dur(char *buf, size_t len, double ns)
{
	static const struct {
		double scale;
		const char *unit;
	} u[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" } };
	size_t i = 0;

	while (i + 1 < sizeof(u) / sizeof(u[0]) && ns < u[i].scale)
		i++;
	snprintf(buf, len, "%g%s", ns / u[i].scale, u[i].unit);
}

struct stack_part {
	const char *name, *colour;
};

/* Horizontal stacked bars, one row per thread: the first @limit of the
 * @nth rows that have something to show (a thread seen only by name, or
 * for an instant, would be an empty row). */
static void stacked_bars(FILE *f, const char *id, const char *unit_note,
			 const struct stack_part *parts, size_t nparts,
			 const struct ctxmon_stats *th, size_t nth,
			 const double *vals /* nth * nparts */, size_t limit,
			 bool as_time)
{
	const int label_w = 230, row_h = 20, top = 24;
	const int plot_w = PAGE_W - label_w - 90;
	double max = 0, step;
	size_t *rows = calloc(limit ? limit : 1, sizeof(*rows)), n = 0, empty = 0;
	int ngrid;
	char b[32];

	if (!rows)
		return;
	for (size_t i = 0; i < nth; i++) {
		double s = 0;

		for (size_t p = 0; p < nparts; p++)
			s += vals[i * nparts + p];
		if (s <= 0) {
			empty++;
			continue;
		}
		if (n < limit)
			rows[n++] = i;
		if (s > max)
			max = s;
	}
	if (max <= 0)
		max = 1;
	/* the scale ends at a round value, with a gridline at every step */
	step = nice_step(max, 6);
	/* counts: whole steps (a step of 2.5 labelled its lines 2, 5, 8) */
	if (!as_time)
		step = step < 1 ? 1 : ceil(step);
	ngrid = (int)ceil(max / step - 1e-9);
	max = step * ngrid;
	fprintf(f, "<p class=\"legend\">");
	for (size_t p = 0; p < nparts; p++)
		fprintf(f, "<span><i style=\"background:%s\">&nbsp;</i>%s</span>",
			parts[p].colour, parts[p].name);
	fprintf(f, "<span class=\"note\">%s", unit_note);
	if (empty)
		fprintf(f, "; %zu thread%s with nothing to show left out", empty,
			empty == 1 ? "" : "s");
	fprintf(f, "</span></p>\n");
	fprintf(f,
		"<svg id=\"%s\" class=\"plot\" width=\"%d\" height=\"%zu\" "
		"viewBox=\"0 0 %d %zu\" role=\"img\">\n",
		id, PAGE_W, top + n * row_h + 8, PAGE_W, top + n * row_h + 8);
	for (int g = 0; g <= ngrid; g++) {
		int x = label_w + plot_w * g / ngrid;
		double v = step * g;

		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
			   "y2=\"%zu\"/>",
			x, top - 4, x, top + n * row_h);
		if (!g)
			snprintf(b, sizeof(b), "0");
		else if (as_time)
			tick_dur(b, sizeof(b), v);
		else
			snprintf(b, sizeof(b), "%.0f", v);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\">%s"
			   "</text>\n",
			x, top - 8, g == ngrid ? "end" : "middle", b);
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = rows[k];
		double x = label_w;
		int y = top + (int)k * row_h;

		fprintf(f, "<g><text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
			label_w - 6, y + 14);
		svg__escape(f, comm_of(&th[i]));
		fprintf(f, " %d</text>", th[i].tid);
		for (size_t p = 0; p < nparts; p++) {
			double v = vals[i * nparts + p];
			double w = v / max * plot_w;

			if (v <= 0)
				continue;
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				   "height=\"%d\" fill=\"%s\"><title>",
				x, y + 2, w < 0.5 ? 0.5 : w, row_h - 4,
				parts[p].colour);
			svg__escape(f, comm_of(&th[i]));
			if (as_time)
				fprintf(f, " %d: %s %s</title></rect>",
					th[i].tid, parts[p].name,
					dur(b, sizeof(b), (uint64_t)v));
			else
				fprintf(f, " %d: %s %.0f</title></rect>",
					th[i].tid, parts[p].name, v);
			x += w;
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
	free(rows);
}

static void states_section(FILE *f, const struct ctxmon_stats *th, size_t n,
			   size_t limit)
{
	static const struct stack_part parts[] = {
		{ "running", C_RUN },
		{ "runnable (waiting for a CPU)", C_WAIT },
		{ "asleep (S, D, other)", C_SLEEP },
	};
	double *v = calloc(n ? n * 3 : 1, sizeof(*v));

	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		v[i * 3] = (double)th[i].run_ns;
		v[i * 3 + 1] = (double)th[i].wait_ns;
		v[i * 3 + 2] = (double)sleep_of(&th[i]);
	}
	fprintf(f, "<section id=\"states\"><h2>Where each thread's time "
		   "went</h2>\n");
	stacked_bars(f, "plot-states",
		     "(time over the thread's observed span; hover for values)",
		     parts, 3, th, n, v, limit, true);
	fprintf(f, "</section>\n");
	free(v);
}

static void causes_section(FILE *f, const struct ctxmon_account *a,
			   const struct ctxmon_stats *th, size_t n,
			   size_t limit, const struct ctxmon_causes *cz,
			   size_t ncz)
{
	static const struct stack_part basic[] = {
		{ "voluntary (blocked)", "#1565c0" },
		{ "involuntary (preempted)", "#c62828" },
		{ "exit", "#6d4c41" },
	};
	static const struct stack_part full[] = {
		{ "blocked in a syscall", "#1565c0" },
		{ "blocked, no syscall / unknown", "#64b5f6" },
		{ "preempted by a woken task", "#c62828" },
		{ "preempted (wakeup from irq)", "#ef9a9a" },
		{ "slice end", "#8e24aa" },
		{ "yield", "#f57c00" },
		{ "other", "#bdbdbd" },
		{ "exit", "#6d4c41" },
	};
	struct causes_index ix = { 0 };
	bool have = cz && output__causes_index(&ix, cz, ncz) == 0;
	size_t np = have ? 8 : 3;
	double *v = calloc(n ? n * np : 1, sizeof(*v));

	(void)a;
	if (!v)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_causes *c =
			have ? output__causes_find(&ix, th[i].tid, th[i].gen) :
			       NULL;
		double *r = v + i * np;

		if (!have || !c) {
			if (have) {
				r[0] = (double)th[i].voluntary;
				r[2] = (double)th[i].involuntary;
				r[7] = (double)th[i].exit_switch;
			} else {
				r[0] = (double)th[i].voluntary;
				r[1] = (double)th[i].involuntary;
				r[2] = (double)th[i].exit_switch;
			}
			continue;
		}
		r[0] = (double)c->vol[CTXMON_VOL_SYSCALL].count;
		r[1] = (double)(c->vol[CTXMON_VOL_NOSYSCALL].count +
				c->vol[CTXMON_VOL_UNKNOWN].count);
		r[2] = (double)c->invol[CTXMON_INVOL_WAKEUP].count;
		r[3] = (double)c->invol[CTXMON_INVOL_WAKEUP_IRQ].count;
		r[4] = (double)c->invol[CTXMON_INVOL_SLICE].count;
		r[5] = (double)c->invol[CTXMON_INVOL_YIELD].count;
		r[6] = (double)c->invol[CTXMON_INVOL_OTHER].count;
		for (unsigned k = 0; k < CTXMON_EXIT__MAX; k++)
			r[7] += (double)c->exit[k];
	}
	fprintf(f, "<section id=\"causes\"><h2>Switch-outs by cause</h2>\n");
	stacked_bars(f, "plot-causes",
		     have ? "(counts; causes as in docs/causes.md)" :
			    "(counts; record with -e all and use --causes "
			    "for causes)",
		     have ? full : basic, np, th, n, v, limit, false);
	fprintf(f, "</section>\n");
out:
	free(v);
	output__causes_index_free(&ix);
}

/* log2 bucket -> estimated quantile, when no fine summary exists */
static uint64_t log2_quantile(const struct ctxmon_latency *l, double q)
{
	uint64_t want = (uint64_t)ceil(q * (double)l->count), seen = 0;

	for (unsigned i = 0; i < CTXMON_HIST_BUCKETS; i++) {
		seen += l->hist[i];
		if (seen >= want && l->hist[i]) {
			uint64_t hi = i ? (2ull << i) - 1 : 1;

			return hi < l->max_ns ? hi : l->max_ns;
		}
	}
	return l->max_ns;
}

static void latency_plot(FILE *f, const struct ctxmon_stats *t,
			 const struct ctxmon_causes *c)
{
	const struct ctxmon_latency *l = &t->lat;
	const int w = 420, h = 150, left = 40, bottom = 28, top = 10;
	unsigned lo = CTXMON_HIST_BUCKETS, hi = 0;
	uint64_t maxc = 0, p[3];
	static const double qs[3] = { 0.5, 0.9, 0.99 };
	static const char *const qn[3] = { "p50", "p90", "p99" };
	static const char *const qc[3] = { "#1565c0", "#ef6c00", "#c62828" };
	char b[32];
	double bw;

	for (unsigned i = 0; i < CTXMON_HIST_BUCKETS; i++)
		if (l->hist[i]) {
			if (i < lo)
				lo = i;
			hi = i;
			if (l->hist[i] > maxc)
				maxc = l->hist[i];
		}
	if (lo > 0)
		lo--;
	if (hi + 1 < CTXMON_HIST_BUCKETS)
		hi++;
	bw = (double)(w - left - 8) / (hi - lo + 1);
	for (int k = 0; k < 3; k++)
		p[k] = c && c->lat.count ? ctxmon_lat_quantile(&c->lat, qs[k]) :
					   log2_quantile(l, qs[k]);
	/* the percentiles are named in the caption, in their lines'
	 * colours: labels on the plot collide when they are close */
	fprintf(f, "<figure><figcaption><b>");
	svg__escape(f, comm_of(t));
	fprintf(f, " %d</b>: %" PRIu64 " wakeups", t->tid, l->count);
	for (int k = 0; k < 3; k++)
		fprintf(f, ", <span style=\"color:%s\">%s %s</span>", qc[k],
			qn[k], dur(b, sizeof(b), p[k]));
	fprintf(f, ", max %s%s</figcaption>\n", l->max_is_bound ? "&le;" : "",
		dur(b, sizeof(b), l->max_ns));
	fprintf(f, "<svg class=\"plot lat\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\">",
		w, h, w, h);
	fprintf(f, "<line class=\"ax\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
		left, h - bottom, w - 8, h - bottom);
	fprintf(f, "<text x=\"4\" y=\"%d\">%" PRIu64 "</text>", top + 10, maxc);
	for (unsigned i = lo; i <= hi; i++) {
		double x = left + (i - lo) * bw;
		double bh = maxc ? (double)l->hist[i] / (double)maxc *
					   (h - bottom - top) :
				   0;

		if (l->hist[i]) {
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				   "height=\"%.1f\" fill=\"#78909c\"><title>",
				x + 1, h - bottom - bh, bw - 2, bh);
			fprintf(f, "%s", dur(b, sizeof(b), 1ull << i));
			fprintf(f, " to %s: %" PRIu64 "</title></rect>",
				dur(b, sizeof(b), 2ull << i), l->hist[i]);
		}
		if ((i - lo) % 3 == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" "
				   "text-anchor=\"middle\">%s</text>",
				x, h - bottom + 14,
				dur(b, sizeof(b), 1ull << i));
	}
	for (int k = 0; k < 3; k++) {
		double lg = p[k] ? log2((double)p[k]) : 0;
		double x = left + (lg - lo) * bw;

		if (x < left)
			x = left;
		if (x > w - 8)
			x = w - 8;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			   "stroke=\"%s\" stroke-width=\"2\" "
			   "stroke-dasharray=\"4 2\"><title>%s %s</title></line>",
			x, top, x, h - bottom, qc[k], qn[k],
			dur(b, sizeof(b), p[k]));
	}
	fprintf(f, "</svg></figure>\n");
}

static void latency_section(FILE *f, const struct ctxmon_stats *th, size_t n,
			    const struct ctxmon_causes *cz, size_t ncz)
{
	struct causes_index ix = { 0 };
	bool have = cz && output__causes_index(&ix, cz, ncz) == 0;
	size_t shown = 0;

	fprintf(f, "<section id=\"latency\"><h2>Wakeup latency (wakeup to "
		   "running), per thread</h2>\n<p class=\"note\">log2 buckets; "
		   "dashed lines: p50, p90, p99%s</p>\n<div class=\"multi\">\n",
		have ? "" : " (estimated from the log2 buckets)");
	for (size_t i = 0; i < n && shown < 12; i++) {
		if (!th[i].lat.count)
			continue;
		latency_plot(f, &th[i],
			     have ? output__causes_find(&ix, th[i].tid,
							th[i].gen) :
				    NULL);
		shown++;
	}
	if (!shown)
		fprintf(f, "<p>No wakeups were seen.</p>\n");
	fprintf(f, "</div></section>\n");
	output__causes_index_free(&ix);
}

static size_t series_bins(const struct ctxmon_html *h, uint64_t stop)
{
	size_t nb;

	if (!h->started || stop <= h->t0)
		return 0;
	nb = (size_t)((stop - h->t0 + h->width - 1) / h->width);
	return nb > SERIES_BINS ? SERIES_BINS : nb;
}

static void cpu_section(FILE *f, struct ctxmon_html *h, uint64_t stop)
{
	const int label_w = 70, row_h = 22, top = 8;
	size_t nb, ncpu = 0;
	double bw;

	for (size_t c = 0; c < h->ncpu; c++) {
		struct series_cpu *s = &h->cpu[c];

		if (s->seen && s->cur != 0 && stop > s->since) {
			add_busy(h, s, s->since, stop);
			s->since = stop;
		}
		if (s->seen)
			ncpu = c + 1;
	}
	nb = series_bins(h, stop);
	fprintf(f, "<section id=\"cpus\"><h2>CPU busy over time</h2>\n"
		   "<p class=\"legend\"><span><i style=\"background:#fff;"
		   "border:1px solid #ccc\">&nbsp;</i>idle</span><span><i "
		   "style=\"background:#1b5e20\">&nbsp;</i>busy</span><span "
		   "class=\"note\">(one strip per CPU, bins of %.1f ms)</span>"
		   "</p>\n",
		(double)h->width / 1e6);
	if (!nb || !ncpu) {
		fprintf(f, "<p>No switches were seen.</p></section>\n");
		return;
	}
	bw = (double)(PAGE_W - label_w - 10) / nb;
	fprintf(f, "<svg id=\"plot-cpus\" class=\"plot\" width=\"%d\" "
		   "height=\"%zu\" viewBox=\"0 0 %d %zu\" role=\"img\">\n",
		PAGE_W, top + ncpu * row_h + 22, PAGE_W,
		top + ncpu * row_h + 22);
	for (size_t c = 0; c < ncpu; c++) {
		struct series_cpu *s = &h->cpu[c];
		int y = top + (int)c * row_h;

		fprintf(f, "<text x=\"4\" y=\"%d\">CPU %zu</text>", y + 15, c);
		for (size_t b = 0; b < nb && s->seen; b++) {
			uint64_t b0 = h->t0 + b * h->width;
			uint64_t b1 = b0 + h->width;
			double span, frac, t;

			if (b1 > stop)
				b1 = stop;
			if (b0 < s->first_ts)
				b0 = s->first_ts < b1 ? s->first_ts : b1;
			span = (double)(b1 - b0);
			if (span <= 0)
				continue;
			frac = (double)s->busy[b] / span;
			if (frac > 1)
				frac = 1;
			/* from the legend's busy #1b5e20 to its idle white */
			t = 1 - frac;
			fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
				   "height=\"%d\" fill=\"rgb(%d,%d,%d)\">"
				   "<title>CPU %zu at +%.2f s: %.0f%% busy, %"
				   PRIu64 " switches</title></rect>",
				label_w + b * bw, y + 2, bw + 0.3, row_h - 4,
				27 + (int)(228 * t), 94 + (int)(161 * t),
				32 + (int)(223 * t), c,
				(double)(b * h->width) / 1e9, frac * 100,
				s->sw[b]);
		}
		/* the strip's edge, as the legend's idle box has one */
		if (s->seen)
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" "
				   "height=\"%d\" fill=\"none\" "
				   "stroke=\"#ccc\"/>",
				label_w, y + 2, nb * bw + 0.3, row_h - 4);
		fputc('\n', f);
	}
	for (int t = 0; t <= 4; t++) {
		double x = label_w + (PAGE_W - label_w - 10) * t / 4.0;

		fprintf(f, "<text x=\"%.1f\" y=\"%zu\" text-anchor=\"%s\">"
			   "+%.2f s</text>",
			x, top + ncpu * row_h + 16, t == 4 ? "end" : "middle",
			(double)nb * h->width / 1e9 * t / 4);
	}
	fprintf(f, "</svg></section>\n");
}

static void rate_section(FILE *f, const struct ctxmon_html *h, uint64_t stop)
{
	const int left = 70, top = 10, ph = 200, bottom = 24;
	size_t nb = series_bins(h, stop);
	double maxr = 0, bw, *rate;

	fprintf(f, "<section id=\"rate\"><h2>Switches per second</h2>\n");
	rate = calloc(nb ? nb : 1, sizeof(*rate));
	if (!nb || !rate) {
		fprintf(f, "<p>No switches were seen.</p></section>\n");
		free(rate);
		return;
	}
	for (size_t b = 0; b < nb; b++) {
		uint64_t n = 0;
		uint64_t b1 = h->t0 + (b + 1) * h->width;
		double span = (double)h->width;

		for (size_t c = 0; c < h->ncpu; c++)
			n += h->cpu[c].sw[b];
		if (b1 > stop)
			span -= (double)(b1 - stop);
		rate[b] = span > 0 ? (double)n / (span / 1e9) : 0;
		if (rate[b] > maxr)
			maxr = rate[b];
	}
	if (maxr <= 0)
		maxr = 1;
	bw = (double)(PAGE_W - left - 10) / nb;
	fprintf(f, "<svg id=\"plot-rate\" class=\"plot\" width=\"%d\" "
		   "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n",
		PAGE_W, top + ph + bottom, PAGE_W, top + ph + bottom);
	for (int g = 0; g <= 4; g++) {
		int y = top + ph - ph * g / 4;

		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
			   "y2=\"%d\"/><text x=\"%d\" y=\"%d\" "
			   "text-anchor=\"end\">%.0f</text>",
			left, y, PAGE_W - 10, y, left - 6, y + 4,
			maxr * g / 4);
	}
	fprintf(f, "<polyline fill=\"none\" stroke=\"#c62828\" "
		   "stroke-width=\"1.5\" points=\"");
	for (size_t b = 0; b < nb; b++)
		fprintf(f, "%.1f,%.1f ", left + (b + 0.5) * bw,
			top + ph - rate[b] / maxr * ph);
	fprintf(f, "\"/>\n");
	for (size_t b = 0; b < nb; b++)
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			   "height=\"%d\" fill=\"transparent\"><title>+%.2f s: "
			   "%.0f switches/s</title></rect>",
			left + b * bw, top, bw, ph,
			(double)(b * h->width) / 1e9, rate[b]);
	for (int t = 0; t <= 4; t++)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">"
			   "+%.2f s</text>",
			left + (PAGE_W - left - 10) * t / 4.0, top + ph + 18,
			t == 4 ? "end" : "middle",
			(double)nb * h->width / 1e9 * t / 4);
	fprintf(f, "\n</svg></section>\n");
	free(rate);
}

static void table_section(FILE *f, const struct ctxmon_stats *th, size_t n)
{
	char b[4][32];

	fprintf(f, "<section id=\"threads\"><h2>Threads</h2>\n"
		   "<p class=\"note\">Click a column to sort (with "
		   "JavaScript).</p>\n<table id=\"thread-table\"><thead><tr>"
		   "<th class=\"l\">comm</th><th>tid</th><th>pid</th>"
		   "<th>switches</th><th>voluntary</th><th>involuntary</th>"
		   "<th>run</th><th>runnable</th><th>sleep</th>"
		   "<th>wakeups</th><th>max latency</th></tr></thead>"
		   "<tbody>\n");
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *t = &th[i];

		fprintf(f, "<tr><td class=\"l\">");
		svg__escape(f, comm_of(t));
		fprintf(f,
			"</td><td>%d</td><td>%d</td><td>%" PRIu64
			"</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td>"
			"<td data-v=\"%" PRIu64 "\">%s</td>"
			"<td data-v=\"%" PRIu64 "\">%s</td>"
			"<td data-v=\"%" PRIu64 "\">%s</td><td>%" PRIu64
			"</td><td data-v=\"%" PRIu64 "\">%s%s</td></tr>\n",
			t->tid, t->tgid, t->switch_out, t->voluntary,
			t->involuntary, t->run_ns,
			dur(b[0], sizeof(b[0]), t->run_ns), t->wait_ns,
			dur(b[1], sizeof(b[1]), t->wait_ns), sleep_of(t),
			dur(b[2], sizeof(b[2]), sleep_of(t)), t->wakeups,
			t->lat.max_ns, t->lat.max_is_bound ? "&le;" : "",
			dur(b[3], sizeof(b[3]), t->lat.max_ns));
	}
	fprintf(f, "</tbody></table></section>\n");
}

static const char *const sort_js =
	"<script>\n"
	"(function(){var t=document.getElementById('thread-table');"
	"if(!t)return;var hs=t.tHead.rows[0].cells;"
	"for(var i=0;i<hs.length;i++)(function(c){var asc=false;"
	"hs[c].addEventListener('click',function(){asc=!asc;"
	"var b=t.tBodies[0],r=Array.prototype.slice.call(b.rows);"
	"r.sort(function(x,y){var a=x.cells[c],d=y.cells[c];"
	"var u=a.getAttribute('data-v')||a.textContent,"
	"v=d.getAttribute('data-v')||d.textContent;"
	"var p=parseFloat(u),q=parseFloat(v);"
	"var k=(isNaN(p)||isNaN(q))?u.localeCompare(v):p-q;"
	"return asc?k:-k;});"
	"r.forEach(function(e){b.appendChild(e);});});})(i);})();\n"
	"</script>\n";

int ctxmon_html_write(struct ctxmon_html *h, FILE *f,
		      const struct ctxmon_account *a,
		      const struct ctxmon_html_info *in)
{
	struct ctxmon_stats *th = NULL;
	struct ctxmon_causes *cz = NULL;
	size_t nth = 0, ncz = 0, shown;
	char b[64];
	int ret = 0;

	if (!h || !f || !a || !in)
		return -EINVAL;
	th = ctxmon_account_rows(a, CTXMON_ROWS_THREADS, false, &nth);
	if (!th)
		return -ENOMEM;
	cz = ctxmon_account_causes(a, CTXMON_ROWS_THREADS, false, &ncz);
	qsort(th, nth, sizeof(*th), cmp_switches);
	shown = in->max_threads ? in->max_threads : 40;
	if (shown > nth)
		shown = nth;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
		   "<meta charset=\"utf-8\">\n<title>");
	svg__escape(f, in->title ? in->title : "ctxmon report");
	fprintf(f, "</title>\n<meta name=\"viewport\" "
		   "content=\"width=device-width, initial-scale=1\">\n"
		   "<style>%s</style>\n</head>\n<body>\n<header><h1>",
		css);
	svg__escape(f, in->title ? in->title : "ctxmon report");
	fprintf(f, "</h1>\n<p class=\"meta\">");
	if (in->source) {
		fprintf(f, "source ");
		svg__escape(f, in->source);
	}
	if (in->cmdline) {
		fprintf(f, " &middot; recorded as <code>");
		svg__escape(f, in->cmdline);
		fprintf(f, "</code>");
	}
	if (in->backend) {
		fprintf(f, " &middot; backend ");
		svg__escape(f, in->backend);
	}
	if (in->kernel) {
		fprintf(f, " &middot; kernel ");
		svg__escape(f, in->kernel);
	}
	if (in->host) {
		fprintf(f, " &middot; host ");
		svg__escape(f, in->host);
	}
	if (in->ncpus > 0)
		fprintf(f, " &middot; %d CPUs", in->ncpus);
	fprintf(f, " &middot; %s</p></header>\n",
		dur(b, sizeof(b), in->stop_ts > in->start_ts ?
					  in->stop_ts - in->start_ts :
					  0));
	status_box(f, in, th, nth);
	kpis(f, th, nth, in);
	if (shown < nth)
		fprintf(f, "<p class=\"note\">Each plot shows at most %zu of "
			   "the %zu threads, those with the most switches; "
			   "the table lists all (past 1024 exited ones, the "
			   "oldest summed by name).</p>\n",
			shown, nth);
	states_section(f, th, nth, shown);
	causes_section(f, a, th, nth, shown, cz, ncz);
	latency_section(f, th, shown, cz, ncz);
	cpu_section(f, h, in->stop_ts);
	rate_section(f, h, in->stop_ts);
	/* a command's rows come whole, for the comparison: the table
	 * folds the oldest exited ones, as the text table does (15,000
	 * threads of stress-ng --pthread made a 4 MB page); without
	 * memory for it, they stay whole */
	(void)ctxmon_rows_fold_exited(th, &nth, CTXMON_EXITED_KEEP);
	table_section(f, th, nth);
	fprintf(f, "<footer class=\"note\">ctxmon %s</footer>\n%s</body>\n"
		   "</html>\n",
		CTXMON_VERSION, sort_js);
	if (ferror(f))
		ret = -EIO;
	ctxmon_causes_free(cz, ncz);
	free(th);
	return ret;
}
