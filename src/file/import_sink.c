/*
 * import_sink.c - the writing side of the binary importers (perf.data,
 * trace.dat): events and task declarations into a recording, counted the
 * way `ctxmon import` reports them.  A task is declared only when the
 * recording would otherwise name it differently, as the text importer
 * does, so a recording prints back the names its input gave.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "file/file.h"
#include "file/import.h"

int import_sink__init(struct import_sink *s, struct ctxmon_record *w,
		      const struct ctxmon_import_opts *opts,
		      const char *format)
{
	memset(s, 0, sizeof(*s));
	if (opts)
		memcpy(&s->o, opts,
		       opts->sz && opts->sz < sizeof(s->o) ? opts->sz :
							     sizeof(s->o));
	s->w = w;
	s->st = &s->stats;
	s->stats.format = format;
	s->max_cpu = -1;
	s->strs = strtab__new();
	s->tasks = tasktab__new();
	return s->strs && s->tasks ? 0 : -ENOMEM;
}

void import_sink__free(struct import_sink *s)
{
	tasktab__free(s->tasks);
	strtab__free(s->strs);
	s->tasks = NULL;
	s->strs = NULL;
}

void import_sink__warn(struct import_sink *s, unsigned long where,
		       const char *msg)
{
	if (s->o.warn)
		s->o.warn(s->o.warn_ctx, where, msg);
}

/*
 * A comm may hold any byte (prctl(PR_SET_NAME)), but a newline or another
 * control character cannot go through the text form `ctxmon script`
 * prints and `ctxmon import` reads: it is stored as '?', as ps shows it.
 * NULL when out of memory.
 */
static const char *clean(struct import_sink *s, const char *comm, bool *oom)
{
	char buf[256];
	size_t n;
	bool dirty = false;
	const char *r;

	if (!comm)
		return NULL;
	for (n = 0; comm[n] && n < sizeof(buf) - 1; n++) {
		buf[n] = (unsigned char)comm[n] < 0x20 || comm[n] == 0x7f ?
				 '?' :
				 comm[n];
		dirty |= buf[n] != comm[n];
	}
	if (!dirty)
		return comm;
	r = strtab__intern(s->strs, buf, n);
	if (!r)
		*oom = true;
	return r;
}

int import_sink__task(struct import_sink *s, int32_t tid, int32_t tgid,
		      const char *comm)
{
	bool oom = false;
	int ret;

	comm = clean(s, comm, &oom);
	if (oom)
		return -ENOMEM;

	if (!comm || tid <= 0 ||
	    (tasktab__comm(s->tasks, tid) == comm &&
	     (tgid == -1 || tasktab__tgid(s->tasks, tid) == tgid)))
		return 0;
	if (tgid == -1)
		tgid = tasktab__tgid(s->tasks, tid);
	ret = ctxmon_record_add_task(s->w, tid, tgid, comm);
	if (!ret)
		ret = tasktab__set(s->tasks, tid, tgid, comm);
	if (!ret)
		s->stats.tasks++;
	return ret;
}

int import_sink__event(struct import_sink *s, const struct ctxmon_event *in)
{
	struct ctxmon_event c = *in, *ev = &c;
	bool oom = false;
	int ret;

	switch (c.type) {
	case CTXMON_EV_SWITCH:
		c.sw.prev_comm = clean(s, c.sw.prev_comm, &oom);
		c.sw.next_comm = clean(s, c.sw.next_comm, &oom);
		break;
	case CTXMON_EV_WAKING:
	case CTXMON_EV_WAKEUP:
	case CTXMON_EV_WAKEUP_NEW:
		c.wake.comm = clean(s, c.wake.comm, &oom);
		break;
	case CTXMON_EV_FORK:
		c.fork.child_comm = clean(s, c.fork.child_comm, &oom);
		break;
	case CTXMON_EV_EXEC:
		c.exec.comm = clean(s, c.exec.comm, &oom);
		break;
	case CTXMON_EV_EXIT:
		c.exit.comm = clean(s, c.exit.comm, &oom);
		break;
	default:
		break;
	}
	if (oom)
		return -ENOMEM;
	ret = ctxmon_record_write(s->w, ev);

	if (ret < 0)
		return ret;
	if (!s->stats.events)
		s->stats.first_ts = ev->ts;
	s->stats.last_ts = ev->ts;
	s->stats.events++;
	if (ev->cpu > s->max_cpu && ev->cpu < CPU_STATE_MAX)
		s->max_cpu = ev->cpu;
	return tasktab__apply(s->tasks, ev);
}

int import_sink__finish(struct import_sink *s)
{
	if (s->max_cpu + 1 > s->stats.ncpus)
		s->stats.ncpus = s->max_cpu + 1;
	return 0;
}

void import_sink__stats(const struct import_sink *s,
			struct ctxmon_import_stats *out)
{
	*out = s->stats;
}
