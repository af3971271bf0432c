/*
 * causes_out.c - the causes of switch-outs (include/ctxmon/causes.h) as text
 * and JSON, next to the accounting tables of report_tables.c.
 *
 * Cause rows are matched to the accounting rows by (tid, gen), since the
 * tables are sorted for display; a row without causes prints dashes.  The
 * text shows, for the rows of the main table and in its order, the split of
 * voluntary and involuntary switches, the exit, irq time, then one line per
 * blocking syscall and the tasks that preempted it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/json_out.h"
#include "output/output.h"

#define SYS_LINES 5 /* syscalls shown per row in the text */
#define PREEMPT_LINES 3

static int cmp_causes_ptr(const void *x, const void *y)
{
	const struct ctxmon_causes *a = *(const struct ctxmon_causes *const *)x;
	const struct ctxmon_causes *b = *(const struct ctxmon_causes *const *)y;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (a->gen > b->gen) - (a->gen < b->gen);
}

int output__causes_index(struct causes_index *ix,
			 const struct ctxmon_causes *rows, size_t n)
{
	ix->p = NULL;
	ix->n = 0;
	if (!n)
		return 0;
	ix->p = malloc(n * sizeof(*ix->p));
	if (!ix->p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ix->p[i] = &rows[i];
	qsort(ix->p, n, sizeof(*ix->p), cmp_causes_ptr);
	ix->n = n;
	return 0;
}

void output__causes_index_free(struct causes_index *ix)
{
	free(ix->p);
	ix->p = NULL;
	ix->n = 0;
}

const struct ctxmon_causes *output__causes_find(const struct causes_index *ix,
						pid_t tid, uint32_t gen)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ctxmon_causes *c = ix->p[mid];

		if (c->tid == tid && c->gen == gen)
			return c;
		if (c->tid < tid || (c->tid == tid && c->gen < gen))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *output__sys_name(const char *arch, long id, char *buf, size_t len)
{
	const char *n = ctxmon_syscall_name(arch, id);

	if (n)
		return n;
	snprintf(buf, len, "syscall_%ld", id);
	return buf;
}

static const char *comm_or(const char *c, const char *dflt)
{
	return c && *c ? c : dflt;
}

/* ---- text ---------------------------------------------------------- */

static void text_head(FILE *f, bool procs)
{
	fprintf(f,
		"%8s %-16s %8s %8s %7s %7s %9s %7s %7s %7s %7s %7s %-8s %7s %9s %7s %9s\n",
		procs ? "PID" : "TID", "COMM", "VOLUNT", "SYSCALL", "NO-SYS",
		"UNKNOWN", "INVOLUNT", "WAKEUP", "WK-IRQ", "SLICE", "YIELD",
		"OTHER", "EXIT", "IRQS", "IRQ-TIME", "SOFTIRQ", "SIRQ-TIME");
}

static const char *exit_str(const struct ctxmon_causes *c)
{
	int n = 0, last = -1;

	for (int i = 0; i < CTXMON_EXIT__MAX; i++)
		if (c->exit[i]) {
			n++;
			last = i;
		}
	if (!n)
		return "-";
	return n > 1 ? "mixed" : ctxmon_exit_cause_name((unsigned)last);
}

static void text_preempters(FILE *f, const struct report *r, pid_t tid)
{
	const struct causes_report *cr = r->causes;
	int shown = 0;

	for (size_t i = 0; i < cr->npairs && shown < PREEMPT_LINES; i++) {
		const struct ctxmon_pair *p = &cr->pairs[i];

		if (p->kind != CTXMON_PAIR_PREEMPT || p->to_tid != tid)
			continue;
		if (!shown)
			fprintf(f, "%26s %-16s ", "", "preempted by");
		fprintf(f, "%s%d (%s) x%" PRIu64 "%s", shown ? ", " : "",
			p->from_tid, comm_or(p->from_comm, "?"), p->count,
			p->ctx == CTXMON_WAKE_IRQ     ? " woken by irq" :
			p->ctx == CTXMON_WAKE_SOFTIRQ ? " woken by softirq" :
							"");
		shown++;
	}
	if (shown)
		fputc('\n', f);
}

static void text_row(FILE *f, const struct report *r,
		     const struct ctxmon_stats *s,
		     const struct ctxmon_causes *c, bool procs)
{
	char a[16], b[16], d[16], comm[24], nb[32];
	const char *cm = comm_or(s->comm, "?");
	size_t i;

	for (i = 0; cm[i] && i < sizeof(comm) - 1; i++)
		comm[i] = (cm[i] < 0x20 || cm[i] == 0x7f) ? '?' : cm[i];
	comm[i] = '\0';
	if (!c) {
		fprintf(f, "%8d %-16s %8s\n", s->tid, comm, "-");
		return;
	}
	fprintf(f,
		"%8d %-16s %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %7" PRIu64
		" %9" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
		" %7" PRIu64 " %-8s %7" PRIu64 " %9s %7" PRIu64 " %9s\n",
		s->tid, comm, s->voluntary, c->vol[CTXMON_VOL_SYSCALL].count,
		c->vol[CTXMON_VOL_NOSYSCALL].count,
		c->vol[CTXMON_VOL_UNKNOWN].count, s->involuntary,
		c->invol[CTXMON_INVOL_WAKEUP].count,
		c->invol[CTXMON_INVOL_WAKEUP_IRQ].count,
		c->invol[CTXMON_INVOL_SLICE].count,
		c->invol[CTXMON_INVOL_YIELD].count,
		c->invol[CTXMON_INVOL_OTHER].count, exit_str(c), c->irq_count,
		output__dur(a, sizeof(a), c->irq_ns), c->softirq_count,
		output__dur(b, sizeof(b), c->softirq_ns));
	for (i = 0; i < c->nsys && i < SYS_LINES; i++) {
		const struct ctxmon_sys_cause *y = &c->sys[i];

		fprintf(f,
			"%26s %-16s %8" PRIu64 " blocked: asleep %s, "
			"runnable %s, longest %s\n",
			"",
			output__sys_name(r->causes->arch, y->id, nb,
					 sizeof(nb)),
			y->count, output__dur(a, sizeof(a), y->sleep_ns),
			output__dur(b, sizeof(b), y->wait_ns),
			output__dur(d, sizeof(d), y->max_ns));
	}
	if (c->nsys > SYS_LINES)
		fprintf(f, "%26s (%zu more syscalls)\n", "",
			c->nsys - SYS_LINES);
	if (!procs && (c->invol[CTXMON_INVOL_WAKEUP].count ||
		       c->invol[CTXMON_INVOL_WAKEUP_IRQ].count))
		text_preempters(f, r, s->tid);
}

static void text_table(FILE *f, const struct output_opts *o,
		       const struct report *r, const struct ctxmon_stats *rows,
		       size_t n, const struct causes_index *ix, bool procs)
{
	size_t shown = o->limit && o->limit < n ? o->limit : n;

	fprintf(f, "\nwhy they were switched out (per %s):\n",
		procs ? "process" : "thread");
	text_head(f, procs);
	for (size_t i = 0; i < shown; i++)
		text_row(f, r, &rows[i],
			 output__causes_find(ix, rows[i].tid, rows[i].gen),
			 procs);
	if (shown < n)
		fprintf(f, "%8s (%zu more)\n", "...", n - shown);
}

int output__causes_text(FILE *f, const struct output_opts *o,
			const struct report *r)
{
	const struct causes_report *cr = r->causes;
	struct causes_index ti, pi;
	int ret = -ENOMEM;

	if (output__causes_index(&ti, cr->threads, cr->nthreads) < 0)
		return ret;
	if (output__causes_index(&pi, cr->procs, cr->nprocs) < 0)
		goto out;
	if (o->processes)
		text_table(f, o, r, r->procs, r->nprocs, &pi, true);
	if (o->threads)
		text_table(f, o, r, r->threads, r->nthreads, &ti, false);
	ret = 0;
out:
	output__causes_index_free(&ti);
	output__causes_index_free(&pi);
	return ret;
}

/* ---- JSON ---------------------------------------------------------- */

static void json_offcpu(FILE *f, const char *name,
			const struct ctxmon_offcpu *o, bool first)
{
	fprintf(f,
		"%s\"%s\":{\"count\":%" PRIu64 ",\"sleep_ns\":%" PRIu64
		",\"wait_ns\":%" PRIu64 "}",
		first ? "" : ",", name, o->count, o->sleep_ns, o->wait_ns);
}

static void json_ctx(FILE *f, const struct ctxmon_lat_ctx *c)
{
	fprintf(f,
		"{\"ns\":%" PRIu64 ",\"wake_ts_ns\":%" PRIu64
		",\"run_ts_ns\":%" PRIu64 ",\"tid\":",
		c->ns, c->wake_ts, c->run_ts);
	json__put_id(f, c->tid);
	fputs(",\"comm\":", f);
	json__put_str(f, c->comm);
	fputs(",\"waker_tid\":", f);
	json__put_id(f, c->waker_tid);
	fputs(",\"waker_comm\":", f);
	json__put_str(f, c->waker_comm);
	fputs(",\"waker_cpu\":", f);
	json__put_id(f, c->waker_cpu);
	fprintf(f, ",\"waker_ctx\":\"%s\",\"cpu\":",
		ctxmon_wake_ctx_name(c->ctx));
	json__put_id(f, c->cpu);
	fputs(",\"prev_tid\":", f);
	json__put_id(f, c->prev_tid);
	fputs(",\"prev_comm\":", f);
	json__put_str(f, c->prev_tid ? c->prev_comm : "idle");
	fputc('}', f);
}

void output__json_lat_summary(FILE *f, const struct ctxmon_lat_summary *l)
{
	fprintf(f,
		"{\"count\":%" PRIu64 ",\"sum_ns\":%" PRIu64
		",\"mean_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
		",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64
		",\"p99_ns\":%" PRIu64 ",\"p999_ns\":%" PRIu64
		",\"max_ns\":%" PRIu64 ",\"from\":{",
		l->count, l->sum_ns, l->count ? l->sum_ns / l->count : 0,
		l->min_ns, l->p50_ns, l->p90_ns, l->p99_ns, l->p999_ns,
		l->max_ns);
	for (unsigned i = 0; i < 4; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "",
			ctxmon_wake_ctx_name(i), l->ctx_count[i]);
	fputc('}', f);
	if (l->count) {
		fprintf(f, ",\"max\":");
		json_ctx(f, &l->max);
	}
	fputc('}', f);
}

void output__causes_json(FILE *f, const struct ctxmon_causes *c,
			 const char *arch)
{
	uint64_t off = c->initial.sleep_ns + c->initial.wait_ns;
	char nb[32];

	fprintf(f, "{\"involuntary\":{");
	for (unsigned i = 0; i < CTXMON_INVOL__MAX; i++) {
		json_offcpu(f, ctxmon_invol_cause_name(i), &c->invol[i], !i);
		off += c->invol[i].sleep_ns + c->invol[i].wait_ns;
	}
	fprintf(f, "},\"voluntary\":{");
	for (unsigned i = 0; i < CTXMON_VOL__MAX; i++) {
		json_offcpu(f, ctxmon_vol_cause_name(i), &c->vol[i], !i);
		off += c->vol[i].sleep_ns + c->vol[i].wait_ns;
	}
	fprintf(f, ",\"syscalls\":[");
	for (size_t i = 0; i < c->nsys; i++) {
		const struct ctxmon_sys_cause *s = &c->sys[i];

		fprintf(f, "%s{\"id\":", i ? "," : "");
		json__put_id(f, s->id);
		fputs(",\"name\":", f);
		json__put_str(f,
				 output__sys_name(arch, s->id, nb, sizeof(nb)));
		fprintf(f,
			",\"count\":%" PRIu64 ",\"sleep_ns\":%" PRIu64
			",\"wait_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}",
			s->count, s->sleep_ns, s->wait_ns, s->max_ns);
	}
	fprintf(f, "]},\"exit\":{");
	for (unsigned i = 0; i < CTXMON_EXIT__MAX; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "",
			ctxmon_exit_cause_name(i), c->exit[i]);
	fprintf(f,
		"},\"initial\":{\"sleep_ns\":%" PRIu64 ",\"wait_ns\":%" PRIu64
		"},\"offcpu_ns\":%" PRIu64 ",\"irq\":{\"count\":%" PRIu64
		",\"ns\":%" PRIu64 "},\"softirq\":{\"count\":%" PRIu64
		",\"ns\":%" PRIu64 "},\"latency\":",
		c->initial.sleep_ns, c->initial.wait_ns, off, c->irq_count,
		c->irq_ns, c->softirq_count, c->softirq_ns);
	output__json_lat_summary(f, &c->lat);
	fputc('}', f);
}

void output__pair_json(FILE *f, const struct ctxmon_pair *p)
{
	fprintf(f, "{\"kind\":\"%s\",\"ctx\":\"%s\",\"from_tid\":",
		p->kind == CTXMON_PAIR_WAKE ? "wake" : "preempt",
		ctxmon_wake_ctx_name(p->ctx));
	json__put_id(f, p->from_tid);
	fputs(",\"from_comm\":", f);
	json__put_str(f, p->from_comm);
	fputs(",\"to_tid\":", f);
	json__put_id(f, p->to_tid);
	fputs(",\"to_comm\":", f);
	json__put_str(f, p->to_comm);
	fprintf(f, ",\"count\":%" PRIu64, p->count);
	if (p->kind == CTXMON_PAIR_WAKE)
		fprintf(f,
			",\"lat_mean_ns\":%" PRIu64 ",\"lat_max_ns\":%" PRIu64,
			p->count ? p->lat_sum_ns / p->count : 0, p->lat_max_ns);
	fputc('}', f);
}

void output__pairs_json(FILE *f, const struct ctxmon_pair *p, size_t n)
{
	fprintf(f, ",\"pairs\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		output__pair_json(f, &p[i]);
	}
	fputc(']', f);
}
