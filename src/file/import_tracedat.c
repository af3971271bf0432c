/*
 * import_tracedat.c - trace-cmd's trace.dat into a recording, through
 * libtracecmd.
 *
 * libtracecmd reads the file (its versions, compressed sections, buffer
 * instances) and hands back the raw ring-buffer records of all CPUs in
 * time order, with the event formats the file carries parsed into a tep
 * handle.  The records' payloads are the tracepoints' entry structs, the
 * same bytes trace_pipe_raw gives, so ctxmon's own decoder reads them with
 * the file's formats, and the prev_state letters come from the file's
 * print fmt: a trace.dat from any kernel decodes as that kernel meant it.
 *
 * A file made with `trace-cmd record -B name` or `trace-cmd extract -B`
 * keeps its events in a buffer instance: when the top buffer holds no
 * event ctxmon models, the first instance that does is read.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file/file.h"
#include "file/import.h"

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	PRINTF_LIKE(4, 5);

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

#ifndef HAVE_LIBTRACECMD

int ctxmon_import_tracedat_fd(struct ctxmon_record *w, int fd,
			      const struct ctxmon_import_opts *opts,
			      struct ctxmon_import_stats *stats, char *err,
			      size_t errlen)
{
	(void)w;
	(void)fd;
	(void)opts;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	return fail(err, errlen, -ENOTSUP,
		    "this ctxmon was built without libtracecmd: convert the "
		    "file with `trace-cmd report -i FILE > FILE.txt` and "
		    "import that");
}

#else

#include <trace-cmd.h>

struct tdimport {
	struct import_sink *sink;
	struct decoder *dec;
	struct tep_handle *tep;
	int ret;
};

static int on_record(struct tracecmd_input *h, struct tep_record *rec,
		     int cpu, void *data)
{
	struct tdimport *t = data;
	struct import_sink *s = t->sink;
	struct ctxmon_event ev;
	int ret;

	(void)h;
	s->st->lines++;
	if (cpu < 0 || cpu >= CPU_STATE_MAX || rec->size < 0) {
		s->st->bad++;
		return 0;
	}
	if (rec->missed_events) {
		/* the ring buffer dropped events before this one; -1: it
		 * could not tell how many */
		memset(&ev, 0, sizeof(ev));
		ev.type = CTXMON_EV_LOST;
		ev.ts = rec->ts;
		ev.cpu = cpu;
		ev.tid = -1;
		ev.tgid = -1;
		ev.lost.count = rec->missed_events > 0 ?
					(uint64_t)rec->missed_events :
					0;
		ev.lost.start_ts = rec->ts;
		ev.lost.end_ts = rec->ts;
		s->st->lost++;
		ret = import_sink__event(s, &ev);
		if (ret < 0)
			goto stop;
	}
	memset(&ev, 0, sizeof(ev));
	ret = decoder__decode(t->dec, rec->data, (size_t)rec->size, &ev);
	if (ret == -ENOENT) {
		s->st->skipped++;
		return 0;
	}
	if (ret < 0) {
		s->st->bad++;
		import_sink__warn(s, s->st->lines,
				  "a record whose payload does not decode");
		return 0;
	}
	ev.ts = rec->ts;
	ev.cpu = cpu;
	ev.tgid = ev.tid == 0 ? 0 : -1;
	if (ev.type == CTXMON_EV_SWITCH) {
		ev.sw.prev_tgid = ev.sw.prev_tid == 0 ? 0 : -1;
		ev.sw.next_tgid = ev.sw.next_tid == 0 ? 0 : -1;
	}
	ret = import_sink__event(s, &ev);
	if (ret < 0)
		goto stop;
	return 0;
stop:
	t->ret = ret;
	return 1; /* stops the iteration */
}

/* Import one buffer of the file; 0 with no event is not an error. */
static int import_buffer(struct import_sink *s, struct tracecmd_input *h,
			 char *err, size_t errlen)
{
	struct tdimport t = { .sink = s };
	char derr[256] = "";

	t.tep = tracecmd_get_tep(h);
	if (!t.tep)
		return fail(err, errlen, -EBADMSG,
			    "trace.dat: its event formats cannot be read");
	t.dec = decoder__new_from_tep(t.tep, s->strs, derr, sizeof(derr));
	if (!t.dec) {
		if (errno == ENOMEM)
			return fail(err, errlen, -ENOMEM, "out of memory");
		/* no sched event in this buffer: maybe in another one */
		return 0;
	}
	if (tracecmd_iterate_events(h, NULL, 0, on_record, &t) < 0 && !t.ret)
		t.ret = fail(err, errlen, -EBADMSG,
			     "trace.dat: its data cannot be read to the end");
	decoder__free(t.dec);
	return t.ret;
}

int ctxmon_import_tracedat_fd(struct ctxmon_record *w, int fd,
			      const struct ctxmon_import_opts *opts,
			      struct ctxmon_import_stats *stats, char *err,
			      size_t errlen)
{
	struct tracecmd_input *h = NULL;
	struct import_sink sink;
	int ret, dfd = -1, n;

	if (err && errlen)
		err[0] = '\0';
	ret = import_sink__init(&sink, w, opts, "trace.dat");
	if (ret < 0)
		goto out;
	/* libtracecmd keeps and closes the fd it is given */
	dfd = dup(fd);
	if (dfd < 0 || lseek(dfd, 0, SEEK_SET) < 0) {
		ret = fail(err, errlen, -errno, "trace.dat: %s",
			   strerror(errno));
		goto out;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	h = tracecmd_open_fd(dfd, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!h) {
		ret = fail(err, errlen, -EBADMSG,
			   "trace.dat: libtracecmd cannot open it (damaged, "
			   "or a version libtracecmd does not read)");
		goto out;
	}
	dfd = -1;
	ret = import_buffer(&sink, h, err, errlen);
	n = tracecmd_buffer_instances(h);
	for (int i = 0; i < n && !ret && !sink.st->events; i++) {
		struct tracecmd_input *b = tracecmd_buffer_instance_handle(h, i);

		if (!b)
			continue;
		ret = import_buffer(&sink, b, err, errlen);
		if (!ret && sink.st->events) {
			char msg[160];

			snprintf(msg, sizeof(msg),
				 "trace.dat: read buffer instance \"%s\" "
				 "(the top buffer has no scheduler event)",
				 tracecmd_buffer_instance_name(h, i));
			import_sink__warn(&sink, 0, msg);
		}
		tracecmd_close(b);
	}
	if (!ret && !sink.st->events)
		ret = fail(err, errlen, -ENODATA,
			   "trace.dat holds no scheduler event; record with "
			   "trace-cmd record -e sched");
	if (!ret)
		ret = import_sink__finish(&sink);
out:
	if (stats)
		import_sink__stats(&sink, stats);
	import_sink__free(&sink);
	tracecmd_close(h);
	if (dfd >= 0)
		close(dfd);
	return ret;
}

#endif
