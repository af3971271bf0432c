/*
 * export.h - what the exporters share: the driver (export.c) reads the
 * recording, feeds the timeline and calls one format's functions, chosen
 * from a table.  A format is one file and one table entry.
 */
#ifndef CTXMON_OUTPUT_EXPORT_H
#define CTXMON_OUTPUT_EXPORT_H

#include <ctxmon/export.h>
#include <ctxmon/outfile.h>

#include "output/timeline.h"

struct exporter {
	struct ctxmon_reader *r;
	struct timeline *tl;
	const struct ctxmon_export_opts *o;
	struct ctxmon_export_stats *st;
	const char *path;	/* the target, for messages */
	struct ctxmon_outfile *out; /* where the format writes */
	int err;		/* first error of a callback, -errno */
	uint64_t start_ts, stop_ts; /* the window (stop: set before close) */
	void *priv;		/* the format's state */
};

struct export_format {
	const char *name;
	/* Create @x->path and the format's state; fill @ops (ctx = @x). */
	int (*open)(struct exporter *x, struct tl_ops *ops);
	/* A task declared by the recording. */
	int (*task)(struct exporter *x, int32_t tid, int32_t tgid,
		    const char *comm);
	/* Every event, before the timeline sees it. */
	int (*event)(struct exporter *x, const struct ctxmon_event *ev);
	/* After the timeline's finish: write what is left, close the file.
	 * @ok false: the export failed, just free. */
	int (*close)(struct exporter *x, bool ok);
};

extern const struct export_format export__perfetto;
extern const struct export_format export__sqlite;
extern const struct export_format export__chrome;

/* Set the thread's error text (printf-style); returns @err. */
int export__fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record an error from a callback (the first one wins). */
static inline void export__err(struct exporter *x, int err)
{
	if (!x->err)
		x->err = err;
}

#endif
