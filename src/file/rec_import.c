/*
 * rec_import.c - turn an ftrace text trace into a recording.
 *
 * Lines are parsed one at a time (decode/textparse.c) and their events
 * written in line order.  Two things are not in the events themselves:
 *
 * - the comm a line shows for its task ("foo-42"), which `ctxmon script`
 *   takes from the task table.  When the table would name the task
 *   differently, a task declaration goes in just before the event, so
 *   the recording prints back the same line.  Migrate and fork lines
 *   name a second task the same way.
 * - a loss report ("CPU:1 [LOST 7 EVENTS]") has no time: ftrace prints
 *   it just before the next event of that CPU, so it becomes a LOST
 *   event at that event's time, covering the gap since the CPU's
 *   previous event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ctxmon/record.h>

#include "decode/textparse.h"
#include "file/file.h"

#define IRQ_NAMES_MAX 4096 /* irq lines whose name is kept */

struct cpu_state {
	uint64_t last_ts;
	bool seen;
	bool lost_pending;
	uint64_t lost_count;
};

struct import {
	struct ctxmon_record *w;
	const struct ctxmon_import_opts *o;
	struct ctxmon_import_stats *st;
	struct strtab *strs;
	struct textparse *tp;
	struct tasktab *tasks;
	struct cpu_state *cpus;
	size_t ncpus;
	const char **irq_names; /* name stored per irq number */
	uint64_t last_ts;
	char *line;
	bool oom;
	/* trace-cmd's buffer instance imported (NULL: the top buffer), the
	 * first one a line showed; lines of others are skipped */
	const char *buffer;
	bool buffer_seen, other_buffer;
};

/* State of @cpu, NULL for an impossible one or when out of memory
 * (then im->oom is set). */
static struct cpu_state *cpu_of(struct import *im, int32_t cpu)
{
	if (cpu < 0 || cpu >= CPU_STATE_MAX)
		return NULL;
	if ((size_t)cpu >= im->ncpus) {
		size_t n = (size_t)cpu + 1;
		struct cpu_state *c = realloc(im->cpus, n * sizeof(*c));

		if (!c) {
			im->oom = true;
			return NULL;
		}
		memset(c + im->ncpus, 0, (n - im->ncpus) * sizeof(*c));
		im->cpus = c;
		im->ncpus = n;
	}
	if ((int)im->ncpus > im->st->ncpus)
		im->st->ncpus = (int)im->ncpus;
	return &im->cpus[cpu];
}

static void warn(struct import *im, const char *msg)
{
	if (im->o->warn)
		im->o->warn(im->o->warn_ctx, im->st->lines, msg);
}

/* Declare @tid as @comm unless the table already names it so. */
static int name_task(struct import *im, int32_t tid, int32_t tgid,
		     const char *comm)
{
	int ret;

	if (!comm || tid == 0 || tasktab__comm(im->tasks, tid) == comm)
		return 0;
	if (tgid == -1)
		tgid = tasktab__tgid(im->tasks, tid);
	ret = ctxmon_record_add_task(im->w, tid, tgid, comm);
	if (!ret)
		ret = tasktab__set(im->tasks, tid, tgid, comm);
	if (!ret)
		im->st->tasks++;
	return ret;
}

static int irq_name(struct import *im, int32_t irq, const char *name)
{
	char key[32];
	int ret;

	/* "?" is what the formatter prints for an unknown name. */
	if (!name || !strcmp(name, "?") || irq < 0 || irq >= IRQ_NAMES_MAX)
		return 0;
	if (!im->irq_names) {
		im->irq_names = calloc(IRQ_NAMES_MAX, sizeof(*im->irq_names));
		if (!im->irq_names)
			return -ENOMEM;
	}
	if (im->irq_names[irq]) /* the first name seen stays */
		return 0;
	snprintf(key, sizeof(key), CTXMON_META_IRQ_PREFIX "%d", irq);
	ret = ctxmon_record_set_meta_str(im->w, key, name);
	if (!ret)
		im->irq_names[irq] = name;
	return ret;
}

static int write_event(struct import *im, const struct ctxmon_event *ev)
{
	int ret = ctxmon_record_write(im->w, ev);

	if (ret < 0)
		return ret;
	if (!im->st->events)
		im->st->first_ts = ev->ts;
	im->st->last_ts = ev->ts;
	im->st->events++;
	return tasktab__apply(im->tasks, ev);
}

static int write_lost(struct import *im, int32_t cpu, struct cpu_state *cs,
		      uint64_t ts)
{
	struct ctxmon_event ev = {
		.ts = ts,
		.type = CTXMON_EV_LOST,
		.cpu = cpu,
		.tid = -1,
		.tgid = -1,
	};

	ev.lost.count = cs->lost_count;
	ev.lost.start_ts = cs->seen ? cs->last_ts : ts;
	ev.lost.end_ts = ts;
	cs->lost_pending = false;
	cs->lost_count = 0;
	return write_event(im, &ev);
}

/*
 * Whether @l is of the buffer imported.  `trace-cmd report` interleaves
 * the lines of every buffer instance it recorded, and two buffers of the
 * same events would count each of them twice: the first buffer seen is
 * imported (its name kept in the recording's metadata), the others are
 * skipped, with a warning.
 */
static int buffer_of(struct import *im, const struct textparse_line *l,
		     bool *mine)
{
	*mine = true;
	if (!im->buffer_seen) {
		im->buffer_seen = true;
		im->buffer = l->instance;
		return l->instance ?
			       ctxmon_record_set_meta_str(
				       im->w, CTXMON_META_BUFFER, l->instance) :
			       0;
	}
	if (l->instance == im->buffer)
		return 0;
	*mine = false;
	if (!im->other_buffer) {
		im->other_buffer = true;
		warn(im, im->buffer ? "lines of another buffer instance than "
				      "the first one seen: skipped" :
				      "lines of a buffer instance after "
				      "the top buffer's: skipped");
	}
	return 0;
}

static int handle(struct import *im, struct textparse_line *l)
{
	struct ctxmon_event *ev = &l->ev;
	struct cpu_state *cs;
	int ret;

	if (l->kind == TP_LOST) {
		cs = cpu_of(im, l->lost_cpu);
		im->st->lost++;
		if (im->oom)
			return -ENOMEM;
		if (!cs) {
			warn(im, "loss report for an impossible CPU");
			return 0;
		}
		cs->lost_pending = true;
		cs->lost_count += l->lost_count;
		return 0;
	}
	cs = cpu_of(im, ev->cpu);
	if (im->oom)
		return -ENOMEM;
	if (cs && cs->lost_pending) {
		ret = write_lost(im, ev->cpu, cs, ev->ts);
		if (ret < 0)
			return ret;
	}
	ret = name_task(im, ev->tid, ev->tgid, l->comm);
	if (!ret && ev->type == CTXMON_EV_MIGRATE)
		ret = name_task(im, ev->migrate.tid, -1, l->aux_comm);
	if (!ret && ev->type == CTXMON_EV_FORK)
		ret = name_task(im, ev->fork.parent_tid, -1, l->aux_comm);
	if (!ret && ev->type == CTXMON_EV_IRQ_ENTRY)
		ret = irq_name(im, ev->irq.vec, l->irq_name);
	if (!ret)
		ret = write_event(im, ev);
	if (ret < 0)
		return ret;
	if (ev->type == CTXMON_EV_LOST)	/* `ctxmon script`'s lost_events */
		im->st->lost++;
	if (cs) {
		cs->seen = true;
		cs->last_ts = ev->ts;
	}
	if (ev->ts > im->last_ts)
		im->last_ts = ev->ts;
	return 0;
}

/* Losses reported after a CPU's last event still go in, at the end. */
static int flush_lost(struct import *im)
{
	for (size_t i = 0; i < im->ncpus; i++) {
		struct cpu_state *cs = &im->cpus[i];
		int ret;

		if (!cs->lost_pending)
			continue;
		ret = write_lost(im, (int32_t)i, cs,
				 cs->seen ? cs->last_ts : im->last_ts);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * Next line into im->line (NUL terminated, newline kept).  1: a line,
 * 0: end of input, -E2BIG: a line longer than the limit (skipped),
 * -EILSEQ: a line holding a NUL byte (damaged; fgets would have cut it
 * there and parsed the rest as a shorter line).
 */
static int next_line(struct import *im, FILE *in, size_t *len)
{
	size_t n = 0;
	bool nul = false;
	int ch;

	while ((ch = getc_unlocked(in)) != EOF) {
		if (n <= TEXTPARSE_LINE_MAX)
			im->line[n] = (char)ch;
		n++;
		nul |= !ch;
		if (ch == '\n')
			break;
	}
	/* a line cut by a read error (a truncated .gz) is not a line */
	if (ch == EOF && ferror(in))
		return -EIO;
	if (!n)
		return 0;
	if (n > TEXTPARSE_LINE_MAX + 1 ||
	    (n == TEXTPARSE_LINE_MAX + 1 && ch != '\n'))
		return -E2BIG;
	im->line[n] = '\0';
	*len = n;
	return nul ? -EILSEQ : 1;
}

int ctxmon_record_import_text(struct ctxmon_record *w, FILE *in,
			      const struct ctxmon_import_opts *opts,
			      struct ctxmon_import_stats *stats)
{
	struct ctxmon_import_opts o = { 0 };
	struct ctxmon_import_stats st = { 0 };
	struct import im = { .w = w, .o = &o, .st = &st };
	struct textparse_line l;
	const char *why;
	size_t len;
	int ret = -ENOMEM;

	if (opts)
		memcpy(&o, opts,
		       opts->sz && opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	im.strs = strtab__new();
	im.tasks = tasktab__new();
	im.line = malloc(TEXTPARSE_LINE_MAX + 2);
	if (!im.strs || !im.tasks || !im.line)
		goto out;
	im.tp = textparse__new(im.strs);
	if (!im.tp)
		goto out;
	for (;;) {
		ret = next_line(&im, in, &len);
		if (ret == 0)
			break;
		if (ret == -EIO)
			goto out;
		st.lines++;
		if (ret == -E2BIG) {
			why = "line too long";
		} else if (ret == -EILSEQ) {
			why = "a NUL byte in the line (damaged text)";
		} else {
			ret = textparse__line(im.tp, im.line, len, &l, &why);
			if (ret == 0) {
				st.skipped++;
				continue;
			}
			if (ret == -ENOMEM)
				goto out;
			if (ret > 0) {
				bool mine;

				ret = buffer_of(&im, &l, &mine);
				if (ret < 0)
					goto out;
				if (!mine) {
					st.skipped++;
					continue;
				}
				ret = handle(&im, &l);
				if (ret < 0)
					goto out;
				continue;
			}
		}
		st.bad++;
		warn(&im, why);
		if (o.max_bad && st.bad >= o.max_bad) {
			ret = -EBADMSG;
			goto out;
		}
	}
	if (ferror(in)) {
		ret = -EIO;
		goto out;
	}
	ret = flush_lost(&im);
out:
	if (im.tp)
		st.format = textparse__flavour(im.tp);
	if (stats)
		*stats = st;
	textparse__free(im.tp);
	tasktab__free(im.tasks);
	strtab__free(im.strs);
	free(im.irq_names);
	free(im.line);
	free(im.cpus);
	return ret;
}
