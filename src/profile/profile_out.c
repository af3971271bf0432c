/*
 * profile_out.c - `ctxmon profile`'s outputs that are text: folded stacks
 * (the flame-graph tools' "comm;frame;...;frame value" lines, values in
 * microseconds) and JSON (per-thread totals, every stack, the wakers'
 * rows, the losses).  The SVG flame graph is in profile_svg.c, pprof in
 * profile_pprof.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/profile.h>

#include "profile/profile_int.h"
#include "output/json_out.h"

/* A frame in a folded line: ';' separates frames, so it may not appear
 * in a name (the value is after the last ' ', so spaces may). */
static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s, f);
}

int ctxmon_profile_write_folded(const struct ctxmon_profile *p, FILE *f)
{
	const struct ctxmon_profile_stack *v;
	size_t n;
	int err;

	err = ctxmon_profile_stacks(p, &v, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		folded_name(f, v[i].comm);
		for (size_t j = 0; j < v[i].n_frames; j++) {
			fputc(';', f);
			folded_name(f, v[i].frames[j]);
		}
		if (v[i].cause) {
			fputc(';', f);
			folded_name(f, v[i].cause);
		}
		fprintf(f, " %" PRIu64 "\n", v[i].us);
	}
	err = ctxmon_profile_wakes(p, &v, &n);
	if (err)
		return err;
	/* offwaketime's layout: the wakee's stack root first, "--", then the
	 * waker's from its leaf back to its root and its comm, so the two
	 * stacks meet at the wakeup */
	for (size_t i = 0; i < n; i++) {
		fputs("waker:", f);
		folded_name(f, v[i].comm);
		for (size_t j = 0; j < v[i].n_frames; j++) {
			fputc(';', f);
			folded_name(f, v[i].frames[j]);
		}
		fputc(';', f);
		folded_name(f, v[i].cause);
		fputs(";--", f);
		for (size_t j = v[i].n_waker_frames; j-- > 0;) {
			fputc(';', f);
			folded_name(f, v[i].waker_frames[j]);
		}
		fputc(';', f);
		folded_name(f, v[i].waker_comm);
		fprintf(f, " %" PRIu64 "\n", v[i].us);
	}
	return ferror(f) ? -EIO : 0;
}

static const char *const kind_names[] = { "on-cpu", "sleep", "runnable",
					  "preempted", "yield" };

const char *profile__kind_name(int kind)
{
	return kind >= 0 && kind < 5 ? kind_names[kind] : "unknown";
}

static int by_tid(const void *a, const void *b)
{
	const struct profile_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int profile__threads(const struct ctxmon_profile *p,
		     struct profile_thread **out, size_t *n_out)
{
	const struct ctxmon_profile_stack *v;
	struct profile_thread *t = NULL;
	size_t n, nt = 0;
	int err;

	*out = NULL;
	*n_out = 0;
	err = ctxmon_profile_stacks(p, &v, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct profile_thread *r = NULL;

		for (size_t j = 0; j < nt; j++)
			if (t[j].tid == v[i].tid) {
				r = &t[j];
				break;
			}
		if (!r) {
			struct profile_thread *nv =
				realloc(t, (nt + 1) * sizeof(*nv));

			if (!nv) {
				free(t);
				return -ENOMEM;
			}
			t = nv;
			r = &t[nt++];
			memset(r, 0, sizeof(*r));
			r->tgid = v[i].tgid;
			r->tid = v[i].tid;
			r->comm = v[i].comm;
		}
		if (v[i].kind == CTXMON_PROF_ON_CPU) {
			r->on_us += v[i].us;
			r->samples += v[i].count;
		} else if (v[i].kind == CTXMON_PROF_SLEEP) {
			r->sleep_us += v[i].us;
		} else {
			r->wait_us += v[i].us;
		}
	}
	if (nt)
		qsort(t, nt, sizeof(*t), by_tid);
	*out = t;
	*n_out = nt;
	return 0;
}

static void json_frames(FILE *f, const char *const *fr, size_t n)
{
	fputc('[', f);
	for (size_t j = 0; j < n; j++) {
		if (j)
			fputc(',', f);
		json__put_str(f, fr[j]);
	}
	fputc(']', f);
}

int ctxmon_profile_write_json(const struct ctxmon_profile *p, FILE *f)
{
	const struct ctxmon_profile_stack *v;
	struct ctxmon_profile_loss l;
	struct profile_thread *t;
	size_t n, nt;
	int err;

	err = profile__threads(p, &t, &nt);
	if (err)
		return err;
	ctxmon_profile_loss(p, &l);
	fprintf(f, "{" CTXMON_JSON_SCHEMA ",\"duration_us\":%" PRIu64 ",\"period_us\":%" PRIu64
		   ",\"on_cpu_exact\":%s,\n\"threads\":[",
		ctxmon_profile_duration_ns(p) / 1000,
		ctxmon_profile_period_us(p),
		ctxmon_profile_on_cpu_exact(p) ? "true" : "false");
	for (size_t i = 0; i < nt; i++) {
		fprintf(f, "%s\n{\"tgid\":", i ? "," : "");
		json__put_id(f, t[i].tgid);
		fputs(",\"tid\":", f);
		json__put_id(f, t[i].tid);
		fputs(",\"comm\":", f);
		json__put_str(f, t[i].comm);
		fprintf(f, ",\"on_cpu_us\":%" PRIu64 ",\"samples\":%" PRIu64
			   ",\"sleep_us\":%" PRIu64 ",\"wait_us\":%" PRIu64
			   ",\"total_us\":%" PRIu64 "}",
			t[i].on_us, t[i].samples, t[i].sleep_us, t[i].wait_us,
			t[i].on_us + t[i].sleep_us + t[i].wait_us);
	}
	free(t);
	fputs("],\n\"stacks\":[", f);
	ctxmon_profile_stacks(p, &v, &n);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n{\"tgid\":", i ? "," : "");
		json__put_id(f, v[i].tgid);
		fputs(",\"tid\":", f);
		json__put_id(f, v[i].tid);
		fputs(",\"comm\":", f);
		json__put_str(f, v[i].comm);
		fprintf(f, ",\"kind\":\"%s\",\"cause\":",
			profile__kind_name(v[i].kind));
		if (v[i].cause)
			json__put_str(f, v[i].cause);
		else
			fputs("null", f);
		fprintf(f, ",\"us\":%" PRIu64 ",\"count\":%" PRIu64
			   ",\"n_user\":%zu,\"frames\":",
			v[i].us, v[i].count, v[i].n_user);
		json_frames(f, v[i].frames, v[i].n_frames);
		fputc('}', f);
	}
	fputs("],\n\"wakes\":[", f);
	ctxmon_profile_wakes(p, &v, &n);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n{\"tgid\":", i ? "," : "");
		json__put_id(f, v[i].tgid);
		fputs(",\"tid\":", f);
		json__put_id(f, v[i].tid);
		fputs(",\"comm\":", f);
		json__put_str(f, v[i].comm);
		fputs(",\"cause\":", f);
		json__put_str(f, v[i].cause);
		fprintf(f, ",\"us\":%" PRIu64 ",\"count\":%" PRIu64
			   ",\"frames\":", v[i].us, v[i].count);
		json_frames(f, v[i].frames, v[i].n_frames);
		fputs(",\"waker_tid\":", f);
		json__put_id(f, v[i].waker_tid);
		fputs(",\"waker_comm\":", f);
		json__put_str(f, v[i].waker_comm);
		fputs(",\"waker_frames\":", f);
		json_frames(f, v[i].waker_frames, v[i].n_waker_frames);
		fputc('}', f);
	}
	fprintf(f, "],\n\"loss\":{\"samples\":%" PRIu64
		   ",\"kstack_lost\":%" PRIu64 ",\"ustack_lost\":%" PRIu64
		   ",\"counts_full\":%" PRIu64 ",\"tasks_full\":%" PRIu64
		   ",\"wakes_full\":%" PRIu64 ",\"procs_unmapped\":%" PRIu64
		   ",\"frames_unknown\":%" PRIu64 ",\"ring_drops\":%" PRIu64
		   ",\"unwound\":%" PRIu64 ",\"ustack_truncated\":%" PRIu64
		   "}}\n",
		l.samples, l.kstack_lost, l.ustack_lost, l.counts_full,
		l.tasks_full, l.wakes_full, l.procs_unmapped, l.frames_unknown,
		l.ring_drops, l.unwound, l.ustack_truncated);
	return ferror(f) ? -EIO : 0;
}

static void frame_line(FILE *f, const struct ctxmon_profile_stack *s)
{
	/* the leaf side is what tells: the last frames, leaf last */
	size_t from = s->n_frames > 6 ? s->n_frames - 6 : 0;

	fprintf(f, "    %s%s", s->comm, from ? ";..." : "");
	for (size_t j = from; j < s->n_frames; j++)
		fprintf(f, ";%s", s->frames[j]);
	if (s->cause)
		fprintf(f, ";%s", s->cause);
	fputc('\n', f);
}

int ctxmon_profile_write_summary(const struct ctxmon_profile *p, FILE *f,
				 size_t top)
{
	const struct ctxmon_profile_stack *v;
	struct ctxmon_profile_loss l;
	struct profile_thread *t;
	size_t n, nt;
	int err;

	err = profile__threads(p, &t, &nt);
	if (err)
		return err;
	ctxmon_profile_loss(p, &l);
	fprintf(f, "profile of %.3f s, one sample per %" PRIu64 " us per CPU%s\n\n",
		(double)ctxmon_profile_duration_ns(p) / 1e9,
		ctxmon_profile_period_us(p),
		ctxmon_profile_on_cpu_exact(p) ?
			" (on-CPU time exact, from sched_switch)" : "");
	fprintf(f, "%8s %8s %-16s %12s %8s %12s %12s %12s\n", "PID", "TID",
		"COMM", "ON-CPU ms", "SAMPLES", "SLEEP ms", "RUNNABLE ms",
		"TOTAL ms");
	for (size_t i = 0; i < nt; i++)
		fprintf(f, "%8d %8d %-16s %12.3f %8" PRIu64 " %12.3f %12.3f "
			   "%12.3f\n",
			(int)t[i].tgid, (int)t[i].tid, t[i].comm,
			(double)t[i].on_us / 1e3, t[i].samples,
			(double)t[i].sleep_us / 1e3, (double)t[i].wait_us / 1e3,
			(double)(t[i].on_us + t[i].sleep_us + t[i].wait_us) /
				1e3);
	free(t);
	ctxmon_profile_stacks(p, &v, &n);
	fprintf(f, "\ntop stacks (of %zu):\n", n);
	for (size_t i = 0; i < n && i < top; i++) {
		fprintf(f, "  %12.3f ms  %-9s %s/%d\n", (double)v[i].us / 1e3,
			profile__kind_name(v[i].kind), v[i].comm, (int)v[i].tid);
		frame_line(f, &v[i]);
	}
	ctxmon_profile_wakes(p, &v, &n);
	if (n)
		fprintf(f, "\ntop wakeups (of %zu):\n", n);
	for (size_t i = 0; i < n && i < top; i++) {
		size_t from = v[i].n_waker_frames > 6 ? v[i].n_waker_frames - 6 : 0;

		fprintf(f, "  %12.3f ms  %s/%d woken by %s/%d\n",
			(double)v[i].us / 1e3, v[i].comm, (int)v[i].tid,
			v[i].waker_comm, (int)v[i].waker_tid);
		frame_line(f, &v[i]);
		fprintf(f, "    waker: %s%s", v[i].waker_comm, from ? ";..." : "");
		for (size_t j = from; j < v[i].n_waker_frames; j++)
			fprintf(f, ";%s", v[i].waker_frames[j]);
		fputc('\n', f);
	}
	fprintf(f, "\nloss: %" PRIu64 " samples, %" PRIu64 " kernel and %" PRIu64
		   " user stacks not taken, %" PRIu64 " rows and %" PRIu64
		   " off-CPU intervals dropped (maps full), %" PRIu64
		   " processes without mappings, %" PRIu64
		   " user frames without symbol; %" PRIu64 " stack copies unwound, %"
		   PRIu64 " of them past the copy's end (truncated), %" PRIu64
		   " lost (ring full)\n",
		l.samples, l.kstack_lost, l.ustack_lost,
		l.counts_full + l.wakes_full, l.tasks_full, l.procs_unmapped,
		l.frames_unknown, l.unwound, l.ustack_truncated, l.ring_drops);
	return ferror(f) ? -EIO : 0;
}
