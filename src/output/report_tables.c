/*
 * report_tables.c - the accounting tables, as text, JSON or CSV.
 *
 * The text table is what a person reads first: one row per thread or
 * process, aligned, units on every time, sorted by what matters (switches
 * by default), then the capture's health (events, loss, ordering) and, for
 * a launched command, the comparison with the kernel's own counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/features.h>
#include <ctxmon/record.h>

#include "output/json_out.h"
#include "analysis/rusage.h"
#include "output/output.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name;
	enum sort_key key;
} sort_names[] = {
	{ "switches", SORT_SWITCHES },	{ "voluntary", SORT_VOL },
	{ "involuntary", SORT_INVOL },	{ "run", SORT_RUN },
	{ "wait", SORT_WAIT },		{ "sleep", SORT_SLEEP },
	{ "lat_avg", SORT_LAT },	{ "lat_max", SORT_MAXLAT },
	{ "migrations", SORT_MIGR },	{ "tid", SORT_TID },
	{ "pid", SORT_TID },		{ "comm", SORT_COMM },
};

/* The short spellings stat, report and top took before the names were
 * made one set with diff's; accepted by every --sort. */
static const struct {
	const char *alias, *name;
} sort_aliases[] = {
	{ "vol", "voluntary" }, { "invol", "involuntary" },
	{ "lat", "lat_avg" },	{ "maxlat", "lat_max" },
	{ "migr", "migrations" },
};

const char *output__sort_alias(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(sort_aliases); i++)
		if (!strcmp(s, sort_aliases[i].alias))
			return sort_aliases[i].name;
	return s;
}

int output__parse_sort(const char *s, enum sort_key *k)
{
	s = output__sort_alias(s);
	for (size_t i = 0; i < ARRAY_SIZE(sort_names); i++) {
		if (!strcmp(s, sort_names[i].name)) {
			*k = sort_names[i].key;
			return 0;
		}
	}
	return -EINVAL;
}

const char *output__sort_keys(void)
{
	return "switches, voluntary, involuntary, run, wait, sleep, lat_avg, "
	       "lat_max, migrations, tid, comm";
}

static uint64_t sleep_total(const struct ctxmon_stats *r)
{
	uint64_t t = 0;

	for (int i = 0; i < CTXMON_SLEEP__MAX; i++)
		t += r->sleep_ns[i];
	return t;
}

static uint64_t lat_mean(const struct ctxmon_latency *l)
{
	return l->count ? l->sum_ns / l->count : 0;
}

static uint64_t sort_value(const struct ctxmon_stats *r, enum sort_key k)
{
	switch (k) {
	case SORT_VOL: return r->voluntary;
	case SORT_INVOL: return r->involuntary;
	case SORT_RUN: return r->run_ns;
	case SORT_WAIT: return r->wait_ns;
	case SORT_SLEEP: return sleep_total(r);
	case SORT_LAT: return lat_mean(&r->lat);
	case SORT_MAXLAT: return r->lat.max_ns;
	case SORT_MIGR: return r->migrations;
	default: return r->switch_out;
	}
}

static enum sort_key cur_key;

static int cmp_rows(const void *pa, const void *pb)
{
	const struct ctxmon_stats *a = pa, *b = pb;
	uint64_t va, vb;
	int c;

	if (cur_key == SORT_COMM) {
		c = strcmp(a->comm ? a->comm : "", b->comm ? b->comm : "");
		if (c)
			return c;
	} else if (cur_key != SORT_TID) {
		va = sort_value(a, cur_key);
		vb = sort_value(b, cur_key);
		if (va != vb)
			return va < vb ? 1 : -1;
	}
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return a->gen < b->gen ? -1 : a->gen > b->gen;
}

void output__sort(struct ctxmon_stats *rows, size_t n, enum sort_key k)
{
	cur_key = k;
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp_rows);
}

char *output__lat_max(char *buf, size_t len, const struct ctxmon_latency *l,
		      int width)
{
	char d[32];
	int pad;

	if (!l->count) {
		snprintf(buf, len, "%*s", width, "-");
		return buf;
	}
	output__dur(d, sizeof(d), l->max_ns);
	/* the sign is one column of three bytes */
	pad = width - (int)strlen(d) - (l->max_is_bound ? 1 : 0);
	snprintf(buf, len, "%*s%s%s", pad > 0 ? pad : 0, "",
		 l->max_is_bound ? "\u2264" : "", d);
	return buf;
}

char *output__dur(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
	return buf;
}

/* ---- text ---------------------------------------------------------- */

static int64_t short_by(uint64_t ru, uint64_t traced)
{
	return (int64_t)ru - (int64_t)traced;
}

void output__kernel_verdict(FILE *f, const struct kernel_cmp *k,
			    const char *pre, const char *post)
{
	uint64_t amb = kcmp__sig_amb(k);

	fputs(pre, f);
	if (k->bound) {
		fprintf(f, "kernel counters: voluntary %" PRIu64 " of %" PRIu64
			   " (%" PRId64 " short), involuntary %" PRIu64
			   " of %" PRIu64 " (%" PRId64 " short): traced counts "
			   "are lower bounds, %s%s (traced vs getrusage: %s)%s",
			k->traced_vol, k->ru_nvcsw,
			short_by(k->ru_nvcsw, k->traced_vol), k->traced_invol,
			k->ru_nivcsw, short_by(k->ru_nivcsw, k->traced_invol),
			k->sampled ? "what a thread did after its last sample "
				     "is not seen" :
				     "switches late in a thread's exit are not "
				     "seen",
			!k->sampled && k->traced_invol > k->ru_nivcsw ?
				", and a sleep cut short by a signal counts "
				"involuntary, the kernel's voluntary (the sum "
				"is bound)" :
				"",
			kcmp__match(k) ? "within bound" : "MISMATCH",
			post);
		return;
	}
	if ((!k->leader_reaped && !amb && !kcmp__rt_amb(k)) ||
	    k->traced_vol == k->ru_nvcsw)
		fprintf(f, "kernel counters: voluntary %" PRIu64 " %s %" PRIu64,
			k->traced_vol, k->traced_vol == k->ru_nvcsw ? "=" : "!=",
			k->ru_nvcsw);
	else
		fprintf(f, "kernel counters: voluntary: getrusage %" PRIu64
			   " %s traced %" PRIu64 "..%" PRIu64,
			k->ru_nvcsw, kcmp__vol_in(k, 0) ? "in" : "not in",
			k->traced_vol > kcmp__rt_amb(k) ?
				k->traced_vol - kcmp__rt_amb(k) :
				0,
			k->traced_vol + k->leader_reaped + amb);
	if (amb && k->traced_invol != k->ru_nivcsw)
		fprintf(f, ", involuntary: getrusage %" PRIu64
			   " %s traced %" PRIu64 "..%" PRIu64,
			k->ru_nivcsw, kcmp__invol_in(k, 0) ? "in" : "not in",
			k->traced_invol > k->exit_preempt + amb ?
				k->traced_invol - k->exit_preempt - amb : 0,
			k->traced_invol);
	else if (!k->exit_preempt || k->traced_invol < k->exit_preempt)
		fprintf(f, ", involuntary %" PRIu64 " %s %" PRIu64, k->traced_invol,
			k->traced_invol == k->ru_nivcsw ? "=" : "!=", k->ru_nivcsw);
	else
		fprintf(f, ", involuntary: getrusage %" PRIu64
			   " %s traced %" PRIu64 "..%" PRIu64,
			k->ru_nivcsw, kcmp__invol_in(k, 0) ? "in" : "not in",
			k->traced_invol - k->exit_preempt, k->traced_invol);
	fprintf(f, " (traced vs getrusage: %s)%s",
		kcmp__match(k) ? "match" : "MISMATCH", post);
}

void output__kernel_line(FILE *f, const struct kernel_cmp *k)
{
	output__kernel_verdict(f, k, "", "\n");
	output__kernel_hints(f, k, "  ", "\n");
	output__kernel_cpu(f, k, "", "\n");
}

void output__kernel_cpu(FILE *f, const struct kernel_cmp *k, const char *pre,
			const char *post)
{
	char a[32], b[32];

	if (!k->ru_cpu_ns)
		return;
	/* a line of its own in text, a sentence in HTML */
	fprintf(f, "%s%s time: traced %s, getrusage CPU time %s", pre,
		*pre ? "Run" : "run",
		output__dur(a, sizeof(a), k->traced_run_ns),
		output__dur(b, sizeof(b), k->ru_cpu_ns));
	/* more than 1% + 1 ms short: the kernel's count starts a woken
	 * task's run at its enqueue (docs/accounting.md) */
	if (k->traced_run_ns + k->ru_cpu_ns / 100 + 1000000 < k->ru_cpu_ns)
		fputs(" (the kernel counts a woken task's run from its "
		      "enqueue, before it is switched in: docs/accounting.md)",
		      f);
	fputs(post, f);
}

void output__kernel_hints(FILE *f, const struct kernel_cmp *k,
			  const char *pre, const char *post)
{
	if (kcmp__unsure_explains(k))
		fprintf(f, "%sthe difference fits %" PRIu64 " processes that "
			   "may never have been reaped (voluntary %" PRIu64
			   ", involuntary %" PRIu64 "): a child whose parent "
			   "exits without waiting for it, or ignores SIGCHLD, "
			   "is not in the command's rusage, and this backend "
			   "cannot see a reap; --backend bpf can%s",
			pre, k->unsure_procs, k->unsure_vol, k->unsure_invol,
			post);
	if (kcmp__io_short(k))
		fprintf(f, "%sio_uring workers (iou-wrk) ran in the command: "
			   "the kernel starts them with no fork event, and a "
			   "backend that follows the command by its forks "
			   "(ftrace, ftrace-text) follows them only once it "
			   "has read their task_newtask, missing their first "
			   "switches; --backend bpf or perf counts them%s",
			pre, post);
	if (kcmp__pid_reuse_short(k))
		fprintf(f, "%s%" PRIu64 " processes of the command got a pid "
			   "that an earlier one of it had (the pid space "
			   "wrapped): this backend follows the command through "
			   "the kernel's pid filter, which drops a pid when its "
			   "old task is freed, an RCU grace period after the pid "
			   "is given again, and the new process's switches from "
			   "then on are missed with nothing lost; --backend bpf "
			   "or perf counts them%s",
			pre, k->reused_procs, post);
}

void output__live_line(FILE *f, const struct live_cmp *l)
{
	if (!l->threads) {
		fprintf(f, "kernel counters: no thread of the targets lived "
			   "through the whole capture: nothing compared\n");
		return;
	}
	fprintf(f, "kernel counters (/proc, %" PRIu64 " thread%s alive "
		   "throughout): voluntary %" PRIu64 " %s %" PRIu64
		   "..%" PRIu64 ", involuntary %" PRIu64 " %s %" PRIu64
		   "..%" PRIu64 " (traced vs /proc, read before and after the "
		   "start and the stop: %s%s)\n",
		l->threads, l->threads == 1 ? "" : "s", l->vol,
		l->vol <= l->vol_hi && l->vol >= l->vol_lo ? "in" : "not in",
		l->vol_lo, l->vol_hi, l->invol,
		l->invol <= l->invol_hi && l->invol >= l->invol_lo ? "in" :
								      "not in",
		l->invol_lo, l->invol_hi,
		kcmp__live_match(l) ? "match" : "MISMATCH",
		l->bound ? ", the traced counts being lower bounds" : "");
	if (l->others)
		fprintf(f, "  not compared: %" PRIu64 " thread%s that ended "
			   "during the capture\n",
			l->others, l->others == 1 ? "" : "s");
	if (l->apart)
		fprintf(f, "  not compared: the threads and processes that "
			   "started during the capture (in the tables)\n");
}

static void text_kernel(FILE *f, const struct kernel_cmp *k)
{
	uint64_t amb = kcmp__sig_amb(k);

	output__kernel_verdict(f, k, "", "\n");
	output__kernel_hints(f, k, "  ", "\n");
	if (!k->sampled) /* counters read: no switch-outs seen */
		fprintf(f, "  %" PRIu64 " exit switch-outs reported apart (%" PRIu64
			   " of process leaders, which the kernel counts at "
			   "reap)\n",
			k->exit_switches, k->leader_exits);
	if (k->leader_reaped)
		fprintf(f, "  %" PRIu64 " process leaders reaped as they switched "
			   "out: the kernel may or may not count that last "
			   "switch\n",
			k->leader_reaped);
	if (k->after_fold)
		fprintf(f, "  %" PRIu64 " preemptions of exiting threads after "
			   "the kernel folded their counters (a leader's: after "
			   "its reap read them), left out as the kernel does\n",
			k->after_fold);
	if (k->after_fold_vol)
		fprintf(f, "  %" PRIu64 " voluntary switch-outs of exiting "
			   "threads after the kernel folded their counters "
			   "(blocked on a lock the release takes, PREEMPT_RT), "
			   "left out as the kernel does\n",
			k->after_fold_vol);
	if (amb)
		fprintf(f, "  %" PRIu64 " involuntary switch-outs showed R "
			   "without preemption: a yield, or a sleep cut short "
			   "by a signal, which the kernel counts voluntary and "
			   "this kernel shows as R (%s)\n",
			amb, k->sig_why);
	if (k->exit_preempt)
		fprintf(f, "  %" PRIu64 " preemptions of exiting threads: the "
			   "kernel counts those before exit folds the thread's "
			   "counters, which tracepoints cannot see\n",
			k->exit_preempt);
	if (kcmp__rt_amb(k))
		fprintf(f, "  %" PRIu64 " voluntary switch-outs of exiting "
			   "threads on a PREEMPT_RT kernel: one may block on a "
			   "lock after exit folds the thread's counters, which "
			   "tracepoints cannot see\n",
			kcmp__rt_amb(k));
	if (k->orphan_procs)
		fprintf(f, "  %" PRIu64 " orphaned processes (rows marked ~: "
			   "never reaped by their parent, which died first or "
			   "ignores SIGCHLD, or alive when the command ended), "
			   "voluntary %" PRIu64
			   ", involuntary %" PRIu64 ": not in the command's "
			   "rusage, left out of the comparison\n",
			k->orphan_procs, k->orphan_vol, k->orphan_invol);
	output__kernel_cpu(f, k, "", "\n");
}


static void table_head(FILE *f, bool procs)
{
	fprintf(f, "%8s %8s %-16s %9s %9s %9s %4s %9s %9s %9s %9s %9s %6s\n",
		procs ? "PID" : "TID", procs ? "THREADS" : "PID", "COMM",
		"SWITCHES", "VOLUNTARY", "INVOLUNT", "EXIT", "RUN", "WAIT",
		"SLEEP", "LAT-AVG", "LAT-MAX", "MIGR");
}

static void table_row(FILE *f, const struct ctxmon_stats *r, bool procs)
{
	char run[16], wait[16], slp[16], lavg[16], lmax[24], comm[24];
	char id[32];
	const char *c = r->comm ? r->comm : "?";
	size_t i;

	/* A comm can hold any byte; keep the table's columns intact. */
	for (i = 0; c[i] && i < sizeof(comm) - 2; i++)
		comm[i] = (c[i] < 0x20 || c[i] == 0x7f) ? '?' : c[i];
	if (r->incomplete)
		comm[i++] = '*';
	if (r->orphaned && i < sizeof(comm) - 1)
		comm[i++] = '~';
	comm[i] = '\0';
	if (r->folded) /* many exited tasks: "exited", then how many */
		snprintf(id, sizeof(id), "%8s %8u", "exited", r->folded);
	else if (procs && !r->tid && r->tgid < 0) /* stat --per-cgroup */
		snprintf(id, sizeof(id), "%8s %8u", "cgroup", r->nthreads);
	else if (!procs && r->tgid < 0) /* perf script text: no pid */
		snprintf(id, sizeof(id), "%8d %8s", r->tid, "-");
	else
		snprintf(id, sizeof(id), "%8d %8d", r->tid,
			 procs ? (int)r->nthreads : r->tgid);
	fprintf(f,
		"%s %-16s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %4" PRIu64
		" %9s %9s %9s %9s %s %6" PRIu64 "\n",
		id, comm, r->switch_out, r->voluntary, r->involuntary,
		r->exit_switch, output__dur(run, sizeof(run), r->run_ns),
		output__dur(wait, sizeof(wait), r->wait_ns),
		output__dur(slp, sizeof(slp), sleep_total(r)),
		r->lat.count ?
			output__dur(lavg, sizeof(lavg), lat_mean(&r->lat)) :
			"-",
		output__lat_max(lmax, sizeof(lmax), &r->lat, 9), r->migrations);
}

static void table_rows(FILE *f, const struct output_opts *o,
		       const struct ctxmon_stats *rows, size_t n, bool procs)
{
	size_t shown = o->limit && o->limit < n ? o->limit : n;

	table_head(f, procs);
	for (size_t i = 0; i < shown; i++)
		table_row(f, &rows[i], procs);
	if (shown < n)
		fprintf(f, "%8s (%zu more %s)\n", "...", n - shown,
			procs ? "processes" : "threads");
	if (!n)
		fprintf(f, "%8s (no %s seen)\n", "", procs ? "process" : "thread");
}

static bool any_incomplete(const struct report *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].incomplete)
			return true;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].incomplete)
			return true;
	return false;
}

static bool any_orphaned(const struct report *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].orphaned)
			return true;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].orphaned)
			return true;
	return false;
}

static bool any_folded(const struct report *r)
{
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].folded)
			return true;
	return false;
}

static void text_report(FILE *f, const struct output_opts *o, struct report *r)
{
	const struct ctxmon_session_stats *c = &r->cap;

	if (r->interval >= 0)
		fprintf(f, "--- interval %d, %.3f s ---\n", r->interval,
			r->interval_ts_ns / 1e9);
	if (o->processes) {
		table_rows(f, o, r->procs, r->nprocs, true);
		if (o->threads)
			fputc('\n', f);
	}
	if (o->threads)
		table_rows(f, o, r->threads, r->nthreads, false);
	if (any_incomplete(r))
		fprintf(f, "* alive while events were lost: its numbers may "
			   "be short\n");
	if (any_orphaned(r))
		fprintf(f, "~ orphaned: not reaped by its parent (or alive "
			   "when the command ended), so not in its rusage\n");
	if (any_folded(r))
		fprintf(f, "exited: the oldest exited threads, summed by name "
			   "(how many in the next column)\n");
	if (r->causes)
		output__causes_text(f, o, r);
	fputc('\n', f);
	if (o->show_cpus) {
		for (size_t i = 0; i < r->ncpus; i++) {
			const struct ctxmon_cpu_stats *p = &r->cpus[i];
			uint64_t span = p->busy_ns + p->idle_ns;

			if (!span && !p->switches)
				continue;
			fprintf(f,
				"cpu%-3d busy %5.1f%%  idle %5.1f%%  %" PRIu64
				" switches\n",
				p->cpu, span ? 100.0 * p->busy_ns / span : 0.0,
				span ? 100.0 * p->idle_ns / span : 0.0,
				p->switches);
		}
	}
	if (r->counted)
		fprintf(f,
			"capture: %s backend, %d CPUs, %.3f s, counted in the "
			"kernel, %" PRIu64 " lost\n",
			r->backend ? r->backend : "?", c->ncpus,
			r->duration_ns / 1e9, c->lost);
	else
		fprintf(f,
			"capture: %s backend, %d CPUs, %.3f s, %" PRIu64
			" events, %" PRIu64 " lost, %" PRIu64
			" order violations\n",
			r->backend ? r->backend : "?", c->ncpus,
			r->duration_ns / 1e9, c->events, c->lost,
			c->order_violations);
	if (r->source)
		fprintf(f, "source: %s\n", r->source);
	if (c->lost && c->lost_per_cpu) {
		fprintf(f, "lost events:");
		for (int i = 0; i < c->ncpus; i++)
			if (c->lost_per_cpu[i])
				fprintf(f, " cpu%d %" PRIu64, i,
					c->lost_per_cpu[i]);
		fprintf(f, " (numbers above may be incomplete)\n");
		/* what to do about it; text parsing is the slowest reader */
		if (r->counted)
			fprintf(f, "  to lose less: more rows in the kernel's "
				   "table (CTXMON_BPF_ROWS=N, by default room "
				   "for the threads the machine can hold, up "
				   "to 32768, and 4096 more), or "
				   "--backend bpf, which streams and needs no "
				   "row per thread\n");
		else if (!r->source && r->text_reader)
			fprintf(f, "  to lose less: larger per-CPU buffers "
				   "(-m KB), or a binary backend (--backend "
				   "ftrace or bpf), which reads faster\n");
		else if (!r->source)
			fprintf(f, "  to lose less: larger per-CPU buffers "
				   "(-m KB)\n");
		if (!r->source && !r->counted)
			fputs(OUTPUT_RT_HINT "\n", f);
	}
	if (r->kernel.valid)
		text_kernel(f, &r->kernel);
	if (r->live.valid)
		output__live_line(f, &r->live);
}

/* ---- JSON ---------------------------------------------------------- */

static void json_latency(FILE *f, const struct ctxmon_latency *l)
{
	bool first = true;

	if (l->max_is_bound) { /* not measured: at most max_bound_ns */
		fprintf(f,
			"{\"count\":%" PRIu64 ",\"mean_ns\":%" PRIu64
			",\"max_ns\":null,\"max_bound_ns\":%" PRIu64
			",\"max_ts_ns\":null,\"max_waker_tid\":null"
			",\"max_cpu\":null,\"max_prev_tid\":null,\"hist\":[",
			l->count, lat_mean(l), l->max_ns);
	} else {
		/* no wakeup measured: no maximum to say when and whose */
		bool none = !l->count;

		fprintf(f,
			"{\"count\":%" PRIu64 ",\"mean_ns\":%" PRIu64
			",\"max_ns\":%" PRIu64 ",\"max_bound_ns\":null"
			",\"max_ts_ns\":",
			l->count, lat_mean(l), l->max_ns);
		json__put_id(f, none ? -1 : (long long)l->max_ts);
		fputs(",\"max_waker_tid\":", f);
		json__put_id(f, none ? -1 : l->max_waker_tid);
		fputs(",\"max_cpu\":", f);
		json__put_id(f, none ? -1 : l->max_cpu);
		fputs(",\"max_prev_tid\":", f);
		json__put_id(f, none ? -1 : l->max_prev_tid);
		fputs(",\"hist\":[", f);
	}
	for (int i = 0; i < CTXMON_HIST_BUCKETS; i++) {
		if (!l->hist[i])
			continue;
		fprintf(f, "%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64
			   ",\"count\":%" PRIu64 "}",
			first ? "" : ",", (uint64_t)(i ? 1ull << i : 0),
			(uint64_t)((1ull << (i + 1)) - 1),
			l->hist[i]);
		first = false;
	}
	fprintf(f, "]}");
}

static void json_row(FILE *f, const struct ctxmon_stats *r, bool procs,
		     const struct ctxmon_causes *causes, const char *arch)
{
	fprintf(f, "{\"%s\":", procs ? "pid" : "tid");
	json__put_id(f, r->tid);
	fputs(",\"tgid\":", f);
	json__put_id(f, r->tgid);
	fputs(",\"ppid\":", f);
	json__put_id(f, r->ppid);
	fprintf(f, ",\"gen\":%u,\"comm\":", r->gen);
	json__put_str(f, r->comm);
	if (procs)
		fprintf(f, ",\"nthreads\":%u", r->nthreads);
	fprintf(f, ",\"folded\":%u", r->folded);
	fprintf(f,
		",\"exited\":%s,\"incomplete\":%s,\"orphaned\":%s"
		",\"took_over\":%s"
		",\"switches\":%" PRIu64
		",\"switch_in\":%" PRIu64
		",\"voluntary\":%" PRIu64 ",\"involuntary\":%" PRIu64
		",\"exit_switch\":%" PRIu64 ",\"exit_counted\":%" PRIu64
		",\"exit_preempt\":%" PRIu64 ",\"after_fold\":%" PRIu64
		",\"after_fold_voluntary\":%" PRIu64
		",\"exit_block\":%" PRIu64
		",\"shown_running\":%" PRIu64
		",\"run_ns\":%" PRIu64
		",\"wait_ns\":%" PRIu64 ",\"sleep_s_ns\":%" PRIu64
		",\"sleep_d_ns\":%" PRIu64 ",\"sleep_other_ns\":%" PRIu64
		",\"span_ns\":%" PRIu64 ",\"first_ts_ns\":%" PRIu64
		",\"migrations\":%" PRIu64 ",\"wakeups\":%" PRIu64
		",\"wakeup_latency\":",
		r->exited ? "true" : "false", r->incomplete ? "true" : "false",
		r->orphaned ? "true" : "false", r->took_over ? "true" : "false",
		r->switch_out, r->switch_in,
		r->voluntary, r->involuntary, r->exit_switch, r->exit_counted,
		r->exit_preempt, r->after_fold, r->after_fold_vol,
		r->exit_block, r->shown_running,
		r->run_ns, r->wait_ns, r->sleep_ns[CTXMON_SLEEP_S],
		r->sleep_ns[CTXMON_SLEEP_D], r->sleep_ns[CTXMON_SLEEP_OTHER],
		r->last_ts - r->first_ts, r->first_ts, r->migrations,
		r->wakeups);
	json_latency(f, &r->lat);
	if (causes) {
		fprintf(f, ",\"causes\":");
		output__causes_json(f, causes, arch);
	}
	fputc('}', f);
}

static void json_rows(FILE *f, const char *name, const struct ctxmon_stats *rows,
		      size_t n, bool procs, const struct causes_report *cr)
{
	struct causes_index ix = { 0 };

	/* Out of memory, rows go without their causes. */
	if (cr)
		output__causes_index(&ix, procs ? cr->procs : cr->threads,
				     procs ? cr->nprocs : cr->nthreads);
	fprintf(f, ",\"%s\":[", name);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_row(f, &rows[i], procs,
			 output__causes_find(&ix, rows[i].tid, rows[i].gen),
			 cr ? cr->arch : NULL);
	}
	fputc(']', f);
	output__causes_index_free(&ix);
}

void output__verdict_json(FILE *f, const struct ctxmon_verdict *v)
{
	if (!v)
		return;
	fputs(",\"integrity\":", f);
	/* @f's error is the caller's to check, with the rest */
	(void)ctxmon_verdict_write_json(v, f);
}

static void json_report(FILE *f, struct report *r)
{
	const struct ctxmon_session_stats *c = &r->cap;

	fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"ctxmon\":\"%s\",\"backend\":",
		CTXMON_VERSION);
	json__put_str(f, r->backend);
	if (r->interval >= 0)
		fprintf(f, ",\"interval\":%d,\"interval_end_ns\":%" PRIu64,
			r->interval, r->interval_ts_ns);
	if (r->source) {
		fprintf(f, ",\"source\":");
		json__put_str(f, r->source);
	}
	fprintf(f,
		",\"duration_ns\":%" PRIu64 ",\"capture\":{\"events\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"lost_records\":%" PRIu64
		",\"order_violations\":%" PRIu64 ",\"anomalies\":%" PRIu64
		",\"complete\":%s,\"lost_per_cpu\":[",
		r->duration_ns, c->events, c->lost, c->lost_records,
		c->order_violations, r->anomalies,
		c->lost_records || (r->verdict && !r->verdict->complete) ?
			"false" :
			"true");
	for (int i = 0; c->lost_per_cpu && i < c->ncpus; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", c->lost_per_cpu[i]);
	fprintf(f, "]}");
	output__verdict_json(f, r->verdict);
	json_rows(f, "threads", r->threads, r->nthreads, false, r->causes);
	json_rows(f, "processes", r->procs, r->nprocs, true, r->causes);
	fprintf(f, ",\"cpus\":[");
	for (size_t i = 0; i < r->ncpus; i++) {
		const struct ctxmon_cpu_stats *p = &r->cpus[i];

		fprintf(f,
			"%s{\"cpu\":%d,\"busy_ns\":%" PRIu64
			",\"idle_ns\":%" PRIu64 ",\"span_ns\":%" PRIu64
			",\"switches\":%" PRIu64 ",\"lost\":%" PRIu64 "}",
			i ? "," : "", p->cpu, p->busy_ns, p->idle_ns,
			p->last_ts - p->first_ts, p->switches, p->lost);
	}
	fputc(']', f);
	if (r->causes)
		output__pairs_json(f, r->causes->pairs, r->causes->npairs);
	if (r->kernel.valid) {
		const struct kernel_cmp *k = &r->kernel;

		fprintf(f,
			",\"kernel\":{\"voluntary\":%" PRIu64
			",\"involuntary\":%" PRIu64
			",\"traced_voluntary\":%" PRIu64
			",\"traced_involuntary\":%" PRIu64
			",\"exit_switches\":%" PRIu64
			",\"leader_exit_switches\":%" PRIu64
			",\"leader_reaped\":%" PRIu64
			",\"exit_preempt\":%" PRIu64 ",\"after_fold\":%" PRIu64
			",\"after_fold_voluntary\":%" PRIu64
			",\"exit_block\":%" PRIu64 ",\"preempt_rt\":%s"
			",\"shown_running\":%" PRIu64 ",\"sigsleep_bound\":%s"
			",\"orphan_processes\":%" PRIu64
			",\"orphan_voluntary\":%" PRIu64
			",\"orphan_involuntary\":%" PRIu64
			",\"unsure_processes\":%" PRIu64
			",\"unsure_voluntary\":%" PRIu64
			",\"unsure_involuntary\":%" PRIu64
			",\"unsure_explains\":%s"
			",\"io_workers\":%s,\"io_workers_explain\":%s"
			",\"reused_processes\":%" PRIu64
			",\"pid_reuse_explains\":%s"
			",\"bound\":%s,\"short_voluntary\":%" PRId64
			",\"short_involuntary\":%" PRId64
			",\"match\":%s"
			",\"exact\":%s",
			k->ru_nvcsw, k->ru_nivcsw, k->traced_vol,
			k->traced_invol, k->exit_switches, k->leader_exits,
			k->leader_reaped, k->exit_preempt, k->after_fold,
			k->after_fold_vol, k->exit_block,
			k->preempt_rt ? "true" : "false", k->shown_running,
			k->sig_bound ? "true" : "false",
			k->orphan_procs, k->orphan_vol, k->orphan_invol,
			k->unsure_procs, k->unsure_vol, k->unsure_invol,
			kcmp__unsure_explains(k) ? "true" : "false",
			k->io_workers ? "true" : "false",
			kcmp__io_short(k) ? "true" : "false",
			k->reused_procs,
			kcmp__pid_reuse_short(k) ? "true" : "false",
			k->bound ? "true" : "false",
			short_by(k->ru_nvcsw, k->traced_vol),
			short_by(k->ru_nivcsw, k->traced_invol),
			kcmp__match(k) ? "true" : "false",
			(!k->bound || k->sampled) && kcmp__equal(k) ?
				"true" :
				"false");
		fprintf(f, ",\"traced_run_ns\":%" PRIu64, k->traced_run_ns);
		if (k->ru_cpu_ns)
			fprintf(f, ",\"ru_cpu_ns\":%" PRIu64, k->ru_cpu_ns);
		fputc('}', f);
	}
	if (r->live.valid) {
		const struct live_cmp *l = &r->live;

		fprintf(f,
			",\"kernel_threads\":{\"threads\":%" PRIu64
			",\"ended\":%" PRIu64 ",\"started\":%s"
			",\"traced_voluntary\":%" PRIu64
			",\"traced_involuntary\":%" PRIu64
			",\"voluntary_min\":%" PRIu64 ",\"voluntary_max\":%" PRIu64
			",\"involuntary_min\":%" PRIu64
			",\"involuntary_max\":%" PRIu64
			",\"shown_running\":%" PRIu64 ",\"sigsleep_bound\":%s"
			",\"bound\":%s,\"match\":%s}",
			l->threads, l->others, l->apart ? "true" : "false",
			l->vol, l->invol, l->vol_lo,
			l->vol_hi, l->invol_lo, l->invol_hi, l->shown_running,
			l->sig_bound ? "true" : "false",
			l->bound ? "true" : "false",
			kcmp__live_match(l) ? "true" : "false");
	}
	if (r->has_exit)
		fprintf(f, ",\"exit_status\":%d", r->exit_status);
	fprintf(f, "}\n");
}

/* ---- CSV ----------------------------------------------------------- */

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_rows(FILE *f, struct report *r, const struct ctxmon_stats *rows,
		     size_t n, bool procs)
{
	for (size_t i = 0; i < n; i++) {
		const struct ctxmon_stats *x = &rows[i];

		/* an unknown tgid is an empty field, NA to R and pandas */
		fprintf(f, "%d,%s,%d,", r->interval,
			procs ? "process" : "thread", x->tid);
		if (x->tgid >= 0)
			fprintf(f, "%d", x->tgid);
		fputc(',', f);
		csv_str(f, x->comm);
		fprintf(f,
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",",
			x->switch_out, x->voluntary, x->involuntary,
			x->exit_switch, x->run_ns, x->wait_ns,
			x->sleep_ns[CTXMON_SLEEP_S],
			x->sleep_ns[CTXMON_SLEEP_D],
			x->sleep_ns[CTXMON_SLEEP_OTHER],
			x->last_ts - x->first_ts, x->migrations, x->wakeups,
			x->lat.count, lat_mean(&x->lat));
		/* a bound is not a maximum: its own column */
		if (x->lat.max_is_bound)
			fprintf(f, ",%" PRIu64 "\n", x->lat.max_ns);
		else
			fprintf(f, "%" PRIu64 ",\n", x->lat.max_ns);
	}
}

static void csv_report(FILE *f, const struct output_opts *o, struct report *r)
{
	if (r->interval <= 0)
		fprintf(f, "interval,level,id,tgid,comm,switches,voluntary,"
			   "involuntary,exit_switch,run_ns,wait_ns,sleep_s_ns,"
			   "sleep_d_ns,sleep_other_ns,span_ns,migrations,"
			   "wakeups,lat_count,lat_mean_ns,lat_max_ns,"
			   "lat_max_bound_ns\n");
	if (o->processes)
		csv_rows(f, r, r->procs, r->nprocs, true);
	if (o->threads)
		csv_rows(f, r, r->threads, r->nthreads, false);
}

int output__report(FILE *f, const struct output_opts *o, struct report *r)
{
	output__sort(r->threads, r->nthreads, o->sort);
	output__sort(r->procs, r->nprocs, o->sort);
	switch (o->fmt) {
	case OUT_JSON:
		json_report(f, r);
		break;
	case OUT_CSV:
		csv_report(f, o, r);
		break;
	default:
		text_report(f, o, r);
		break;
	}
	if (fflush(f) == EOF || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}
