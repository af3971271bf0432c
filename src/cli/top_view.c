/*
 * top_view.c - what a `ctxmon top` frame looks like: which rows, in which
 * order, and the text of the header, the column titles and each row.
 *
 * Everything here is plain text for a given width, so the batch mode and
 * the ncurses screen print the same lines, and tests can read either.  The
 * columns fit 80: rates per second, run and runnable wait as a share of
 * the frame, wakeup latency p99 (interpolated in its log2 bucket, the
 * method of `ctxmon latency`) and max.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cmd_top.h"
#include "output/output.h"

static const char *const sort_names[TOP_SORT__MAX] = {
	[TOP_SORT_SWITCHES] = "switches", [TOP_SORT_VOL] = "voluntary",
	[TOP_SORT_INVOL] = "involuntary", [TOP_SORT_RUN] = "run",
	[TOP_SORT_WAIT] = "wait",	  [TOP_SORT_P99] = "p99",
	[TOP_SORT_MAXLAT] = "lat_max",	  [TOP_SORT_PID] = "pid",
	[TOP_SORT_COMM] = "comm",
};

int top_view__parse_sort(const char *s, enum top_sort *k)
{
	s = output__sort_alias(s);
	for (int i = 0; i < TOP_SORT__MAX; i++) {
		if (!strcmp(s, sort_names[i])) {
			*k = (enum top_sort)i;
			return 0;
		}
	}
	if (!strcmp(s, "tid")) {
		*k = TOP_SORT_PID;
		return 0;
	}
	return -EINVAL;
}

const char *top_view__sort_name(enum top_sort k)
{
	return k < TOP_SORT__MAX ? sort_names[k] : "?";
}

const char *top_view__sort_keys(void)
{
	return "switches, voluntary, involuntary, run, wait, p99, lat_max, pid, "
	       "comm";
}

static uint64_t key_value(const struct ctxmon_stats *r, enum top_sort k)
{
	switch (k) {
	case TOP_SORT_VOL:
		return r->voluntary;
	case TOP_SORT_INVOL:
		return r->involuntary;
	case TOP_SORT_RUN:
		return r->run_ns;
	case TOP_SORT_WAIT:
		return r->wait_ns;
	case TOP_SORT_P99:
		return ctxmon_latency_percentile(&r->lat, 99.0);
	case TOP_SORT_MAXLAT:
		return r->lat.max_ns;
	default:
		return r->voluntary + r->involuntary;
	}
}

/* qsort has no context argument: the key of the sort under way */
static enum top_sort cur_sort;

static int cmp_rows(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = *(const struct ctxmon_stats *const *)pa;
	const struct ctxmon_stats *b = *(const struct ctxmon_stats *const *)pb;

	if (cur_sort == TOP_SORT_COMM) {
		int c = strcmp(a->comm ? a->comm : "", b->comm ? b->comm : "");

		if (c)
			return c;
	} else if (cur_sort != TOP_SORT_PID) {
		uint64_t va = key_value(a, cur_sort),
			 vb = key_value(b, cur_sort);

		if (va != vb)
			return va < vb ? 1 : -1;
	}
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

/* A filter of digits names a pid or tid; anything else is a part of the
 * comm. */
static bool matches(const char *filter, const struct ctxmon_stats *r)
{
	char *end;
	long id;

	if (!filter[0])
		return true;
	id = strtol(filter, &end, 10);
	if (!*end && end != filter)
		return r->tid == id || r->tgid == id;
	return r->comm && strstr(r->comm, filter);
}

const struct ctxmon_stats **top_view__rows(const struct top_view *v,
					   const struct top_frame *f, size_t *n)
{
	const struct ctxmon_stats *rows = v->procs ? f->procs : f->threads;
	size_t nrows = v->procs ? f->nprocs : f->nthreads, cnt = 0;
	const struct ctxmon_stats **out;

	out = malloc((nrows ? nrows : 1) * sizeof(*out));
	if (!out) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < nrows; i++) {
		const struct ctxmon_stats *r = &rows[i];

		/* a row with nothing in the frame (asleep, or gone) is noise */
		if (!v->all_rows && !r->switch_out && !r->switch_in &&
		    !r->run_ns)
			continue;
		if (!matches(v->filter, r))
			continue;
		out[cnt++] = r;
	}
	cur_sort = v->sort;
	if (cnt > 1)
		qsort(out, cnt, sizeof(*out), cmp_rows);
	*n = cnt;
	return out;
}

/* A rate in at most 7 columns. */
static char *fmt_rate(char *buf, size_t len, uint64_t count, uint64_t dur_ns)
{
	double r = dur_ns ? (double)count * 1e9 / (double)dur_ns : 0;

	if (r < 10000)
		snprintf(buf, len, "%.0f", r);
	else if (r < 1e6)
		snprintf(buf, len, "%.1fk", r / 1e3);
	else
		snprintf(buf, len, "%.2fM", r / 1e6);
	return buf;
}

/* A duration in at most 6 columns. */
static char *fmt_short_dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 100000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000)
		snprintf(buf, len, "%.0fus", ns / 1e3);
	else if (ns < 100000000)
		snprintf(buf, len, "%.1fms", ns / 1e6);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.0fms", ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
	return buf;
}

static char *fmt_pct(char *buf, size_t len, uint64_t ns, uint64_t dur_ns)
{
	double p = dur_ns ? 100.0 * (double)ns / (double)dur_ns : 0;

	snprintf(buf, len, p < 999.5 ? "%.1f" : "%.0f", p);
	return buf;
}

/* COMM gets what the width leaves over 80, up to a full comm. */
static int comm_width(int width)
{
	int w = 12 + (width > 80 ? width - 80 : 0);

	return w > CTXMON_COMM_LEN ? CTXMON_COMM_LEN : w;
}

void top_view__title(char *buf, size_t len, int width, bool procs)
{
	snprintf(buf, len, "%7s %7s %-*s %7s %7s %7s %5s %5s %6s %6s",
		 procs ? "PID" : "TID", procs ? "THR" : "PID",
		 comm_width(width), "COMM", "SW/s", "VOL/s", "INV/s", "RUN%",
		 "WAIT%", "P99LAT", "MAXLAT");
	if (width > 0 && (size_t)width < len)
		buf[width] = '\0';
}

uint64_t top_view__row_dur(const struct top_frame *f,
			   const struct ctxmon_stats *r)
{
	if (f->row_spans && r->last_ts > r->first_ts)
		return r->last_ts - r->first_ts;
	return f->dur_ns;
}

void top_view__row(char *buf, size_t len, int width,
		   const struct ctxmon_stats *r, uint64_t dur_ns, bool procs)
{
	char sw[16], vol[16], inv[16], run[16], wait[16], p99[16], mx[24];
	char d[16];
	char comm[CTXMON_COMM_LEN + 1], id[32];
	const char *c = r->comm && r->comm[0] ? r->comm : "?";
	size_t i;

	/* a comm may hold any byte: keep the columns */
	for (i = 0; c[i] && i < CTXMON_COMM_LEN; i++)
		comm[i] = (c[i] < 0x20 || c[i] == 0x7f) ? '?' : c[i];
	comm[i] = '\0';
	fmt_rate(sw, sizeof(sw), r->voluntary + r->involuntary, dur_ns);
	fmt_rate(vol, sizeof(vol), r->voluntary, dur_ns);
	fmt_rate(inv, sizeof(inv), r->involuntary, dur_ns);
	fmt_pct(run, sizeof(run), r->run_ns, dur_ns);
	fmt_pct(wait, sizeof(wait), r->wait_ns, dur_ns);
	if (r->lat.count) {
		fmt_short_dur(p99, sizeof(p99),
			      ctxmon_latency_percentile(&r->lat, 99.0));
		fmt_short_dur(d, sizeof(d), r->lat.max_ns);
		/* a bound, not a measured maximum: the sign is one column
		 * of three bytes */
		snprintf(mx, sizeof(mx), "%*s%s%s",
			 (int)(6 - strlen(d) - r->lat.max_is_bound) > 0 ?
				 (int)(6 - strlen(d) - r->lat.max_is_bound) :
				 0,
			 "", r->lat.max_is_bound ? "\u2264" : "", d);
	} else {
		strcpy(p99, "-");
		strcpy(mx, "     -");
	}
	if (r->folded) /* exited tasks summed by name: how many */
		snprintf(id, sizeof(id), "%7s %7u", "exited", r->folded);
	else
		snprintf(id, sizeof(id), "%7d %7d", r->tid,
			 procs ? (int)r->nthreads : r->tgid);
	snprintf(buf, len, "%s %-*.*s %7s %7s %7s %5s %5s %6s %s", id,
		 comm_width(width), comm_width(width), comm, sw, vol, inv, run,
		 wait, p99, mx);
	if (width > 0 && (size_t)width < len)
		buf[width] = '\0';
}

/* Append a line to @buf (at most @width columns); returns 1. */
static int add_line(char *buf, size_t len, int width, const char *line)
{
	size_t used = strlen(buf);

	if (used + 1 >= len)
		return 0;
	snprintf(buf + used, len - used, "%.*s\n", width > 0 ? width : 1024,
		 line);
	return 1;
}

int top_view__header(char *buf, size_t len, int width,
		     const struct top_frame *f, const struct sys_sample *a,
		     const struct sys_sample *b, const struct top_view *v)
{
	double dt = b->ts > a->ts ? (b->ts - a->ts) / 1e9 : 0;
	/* both ends sampled the programs' run time, the first one after
	 * the stats were on */
	bool bpf_known = !a->bpf_err && !b->bpf_err && b->bpf_ns >= a->bpf_ns &&
			 a->ts;
	char line[512], clock[16], r1[16], r2[16];
	struct tm tm;
	time_t now = time(NULL);
	int lines = 0;
	size_t used;

	buf[0] = '\0';
	localtime_r(&now, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	snprintf(line, sizeof(line),
		 "ctxmon top - %s  %s backend  frame %.2fs  %s by %s%s%s",
		 clock, f->backend ? f->backend : "?", f->dur_ns / 1e9,
		 v->procs ? "processes" : "threads",
		 top_view__sort_name(v->sort), v->filter[0] ? "  filter " : "",
		 v->filter);
	lines += add_line(buf, len, width, line);
	snprintf(
		line, sizeof(line),
		"system switches/s %s  ctxmon cpu %.1f%%%s  events %s  lost %" PRIu64
		" (%" PRIu64 " total)",
		fmt_rate(r1, sizeof(r1), b->ctxt - a->ctxt,
			 b->ts > a->ts ? b->ts - a->ts : 0),
		dt > 0 ? ((double)(b->self_cpu_us - a->self_cpu_us) +
			  (bpf_known ? (double)(b->bpf_ns - a->bpf_ns) / 1e3 :
				       0.0)) / 1e4 / dt :
			 0.0,
		bpf_known ? " (BPF incl.)" :
		b->bpf_err && b->bpf_err != -EOPNOTSUPP ? " (BPF not incl.)" :
							  "",
		fmt_rate(r2, sizeof(r2), f->events, 1000000000ull), f->lost,
		f->lost_total);
	lines += add_line(buf, len, width, line);
	/* per CPU when they fit two lines, else a summary */
	line[0] = '\0';
	used = 0;
	if (b->ncpus * 14 <= 2 * (width > 0 ? width : 80)) {
		for (int c = 0; c < b->ncpus; c++) {
			uint64_t tot = b->total[c] - a->total[c];
			uint64_t busy = b->busy[c] - a->busy[c];
			char cell[32];

			snprintf(cell, sizeof(cell), "cpu%d %3.0f%% busy  ", c,
				 tot ? 100.0 * (double)busy / (double)tot :
				       0.0);
			if (width > 0 && used + strlen(cell) > (size_t)width) {
				lines += add_line(buf, len, width, line);
				line[0] = '\0';
				used = 0;
			}
			strcat(line, cell);
			used += strlen(cell);
		}
	} else {
		double lo = 100, hi = 0, sum = 0;

		for (int c = 0; c < b->ncpus; c++) {
			uint64_t tot = b->total[c] - a->total[c];
			double p = tot ? 100.0 *
						   (double)(b->busy[c] -
							    a->busy[c]) /
						   (double)tot :
					 0;

			sum += p;
			lo = p < lo ? p : lo;
			hi = p > hi ? p : hi;
		}
		snprintf(line, sizeof(line),
			 "%d cpus busy: mean %.0f%%, min %.0f%%, max %.0f%%",
			 b->ncpus, b->ncpus ? sum / b->ncpus : 0.0, lo, hi);
	}
	if (line[0])
		lines += add_line(buf, len, width, line);
	return lines;
}

static void rates_table(FILE *f, const struct ctxmon_stats *rows, size_t n,
			uint64_t dur_ns, bool procs, size_t limit)
{
	struct top_frame fr = { .dur_ns = dur_ns };
	struct top_view v = { .sort = TOP_SORT_SWITCHES,
			      .procs = procs,
			      .all_rows = true };
	const struct ctxmon_stats **sorted;
	char line[256];
	size_t cnt, shown;

	if (procs) {
		fr.procs = (struct ctxmon_stats *)rows;
		fr.nprocs = n;
	} else {
		fr.threads = (struct ctxmon_stats *)rows;
		fr.nthreads = n;
	}
	sorted = top_view__rows(&v, &fr, &cnt);
	if (!sorted)
		return;
	top_view__title(line, sizeof(line), 80, procs);
	fprintf(f, "%s\n", line);
	shown = limit && limit < cnt ? limit : cnt;
	for (size_t i = 0; i < shown; i++) {
		top_view__row(line, sizeof(line), 80, sorted[i], dur_ns, procs);
		fprintf(f, "%s\n", line);
	}
	if (shown < cnt)
		fprintf(f, "%7s (%zu more)\n", "...", cnt - shown);
	free(sorted);
}

int top_view__print_rates(FILE *f, const struct output_opts *o,
			  const struct report *r)
{
	if (r->interval >= 0)
		fprintf(f, "--- interval %d, %.3f s ---\n", r->interval,
			r->interval_ts_ns / 1e9);
	if (o->processes)
		rates_table(f, r->procs, r->nprocs, r->duration_ns, true,
			    o->limit);
	if (o->processes && o->threads)
		fputc('\n', f);
	if (o->threads)
		rates_table(f, r->threads, r->nthreads, r->duration_ns, false,
			    o->limit);
	fprintf(f,
		"capture: %s backend, %.3f s, %" PRIu64 " events, %" PRIu64
		" lost\n",
		r->backend ? r->backend : "?", r->duration_ns / 1e9,
		r->cap.events, r->cap.lost);
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
