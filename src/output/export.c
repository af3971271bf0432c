/*
 * export.c - ctxmon_export_recording(): read a recording once, feed the
 * timeline, hand events and intervals to the chosen format (export.h).
 * A damaged or truncated recording is refused with the reader's own
 * words, or exported as far as it reads when the caller asks for that.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "output/export.h"

static const struct export_format *const formats[] = {
	[CTXMON_EXPORT_PERFETTO] = &export__perfetto,
	[CTXMON_EXPORT_SQLITE] = &export__sqlite,
	[CTXMON_EXPORT_CHROME_JSON] = &export__chrome,
};
#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const char *ctxmon_export_last_error(void)
{
	return ctxmon_last_error();
}

int export__fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err__vset(fmt, ap);
	va_end(ap);
	return err;
}

const char *ctxmon_export_format_name(unsigned format)
{
	return format < NFORMATS ? formats[format]->name : NULL;
}

int ctxmon_export_format_parse(const char *name)
{
	for (unsigned i = 0; name && i < NFORMATS; i++)
		if (!strcmp(name, formats[i]->name))
			return (int)i;
	return -EINVAL;
}

static int on_task(pid_t tid, pid_t tgid, const char *comm, void *ctx)
{
	struct exporter *x = ctx;
	int ret = timeline__task(x->tl, tid, tgid, comm);

	if (!ret && x->o->format < NFORMATS && formats[x->o->format]->task)
		ret = formats[x->o->format]->task(x, tid, tgid, comm);
	return ret;
}

static int on_event(const struct ctxmon_event *ev, void *ctx)
{
	struct exporter *x = ctx;
	const struct export_format *f = formats[x->o->format];
	int ret = 0;

	x->st->events++;
	if (ev->type == CTXMON_EV_LOST)
		x->st->lost += ev->lost.count;
	/* intervals that this event closes first, then the event */
	ret = timeline__feed(x->tl, ev);
	if (!ret && f->event)
		ret = f->event(x, ev);
	return ret ? ret : x->err;
}

int ctxmon_export_recording(struct ctxmon_reader *r, const char *path,
			    const struct ctxmon_export_opts *o,
			    struct ctxmon_export_stats *st)
{
	struct ctxmon_export_stats dummy;
	struct exporter x = { .r = r, .o = o, .path = path };
	struct ctxmon_reader_info info;
	const struct export_format *f;
	struct tl_ops ops = { 0 };
	bool opened = false;
	uint64_t stop;
	int ret;

	err__clear();
	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	x.st = st;
	if (!r || !path || !o || o->format >= NFORMATS)
		return export__fail(-EINVAL, "bad arguments");
	f = formats[o->format];
	/* all or nothing: a failed export leaves an earlier file as it was
	 * (SQLite writes a database by name, so not to standard output) */
	x.out = ctxmon_outfile_open(path, o->format == CTXMON_EXPORT_SQLITE ?
						  CTXMON_OUTFILE_SEEKABLE :
						  0);
	if (!x.out)
		return export__fail(-errno, errno == ESPIPE ?
					   "SQLite cannot write to standard "
					   "output: give a file name" :
					   "cannot write %s: %s",
				    path, strerror(errno));
	if (ctxmon_reader_meta_u64(r, CTXMON_META_TIME_START, &x.start_ts) < 0)
		x.start_ts = 0;
	ret = f->open(&x, &ops);
	if (ret < 0) {
		f->close(&x, false); /* what the open made before it failed */
		ctxmon_outfile_discard(x.out, 0);
		if (!err__buf()[0])
			export__fail(ret, "cannot write %s: %s", path,
				     strerror(-ret));
		return ret;
	}
	opened = true;
	x.tl = timeline__new(&ops);
	if (!x.tl) {
		ret = export__fail(-ENOMEM, "out of memory");
		goto out;
	}
	ctxmon_reader_set_task_fn(r, on_task, &x);
	ret = ctxmon_reader_read(r, on_event, &x);
	ctxmon_reader_get_info(r, &info);
	if (ret < 0 && ret != -EBADMSG) {
		if (!err__buf()[0])
			export__fail(ret, "%s", strerror(-ret));
		goto out;
	}
	if (info.damaged || info.truncated || ret == -EBADMSG) {
		st->partial = true;
		if (!o->partial) {
			ret = export__fail(-EBADMSG,
					   "the recording is %s (%s); nothing "
					   "exported (--partial exports the %" PRIu64
					   " events before that)",
					   info.damaged ? "damaged" :
							  "truncated",
					   ctxmon_reader_error(r), info.events);
			goto out;
		}
	}
	/* The window closes where report closes it. */
	if (ctxmon_reader_meta_u64(r, CTXMON_META_TIME_STOP, &stop) < 0 ||
	    !info.complete || stop < info.last_ts)
		stop = info.last_ts;
	x.stop_ts = stop;
	timeline__finish(x.tl, stop);
	if (x.err) {
		ret = x.err;
		goto out;
	}
	{
		size_t n;
		const struct tl_thread *th = timeline__threads(x.tl, &n);

		st->threads = n;
		for (size_t i = 0; i < n; i++)
			if (th[i].tgid == th[i].tid)
				st->processes++;
	}
	opened = false;
	ret = f->close(&x, true);
	if (!ret) {
		ret = ctxmon_outfile_commit(x.out);
		x.out = NULL;
	}
	if (ret < 0 && !err__buf()[0])
		export__fail(ret, "writing %s: %s", path, strerror(-ret));
out:
	if (opened)
		f->close(&x, false);
	ctxmon_outfile_discard(x.out, 0);
	timeline__free(x.tl);
	return ret < 0 ? ret : 0;
}
