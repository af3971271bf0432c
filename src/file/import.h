/*
 * file/import.h - what the importers of binary traces share: writing
 * events and task declarations into a recording, with the statistics
 * and warnings `ctxmon import` shows.
 */
#ifndef CTXMON_FILE_IMPORT_H
#define CTXMON_FILE_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <ctxmon/import.h>

#include "internal.h"

struct tasktab;

struct import_sink {
	struct ctxmon_record *w;
	struct ctxmon_import_opts o;
	struct ctxmon_import_stats *st; /* = &stats */
	struct ctxmon_import_stats stats;
	struct strtab *strs;		/* comms of the import */
	struct tasktab *tasks;		/* what the recording says so far */
	int32_t max_cpu;
};

/* Set up for writing into @w; @format names the input ("perf.data").
 * 0 or -ENOMEM (then _free() still frees what was made). */
int import_sink__init(struct import_sink *s, struct ctxmon_record *w,
		      const struct ctxmon_import_opts *opts,
		      const char *format);
void import_sink__free(struct import_sink *s);
/* The caller's warning callback, if any. */
void import_sink__warn(struct import_sink *s, unsigned long where,
		       const char *msg);
/* Declare @tid as @comm (interned in s->strs) of @tgid (-1: unknown),
 * unless the recording already says so. */
int import_sink__task(struct import_sink *s, int32_t tid, int32_t tgid,
		      const char *comm);
/* Write one event (comms interned in s->strs). */
int import_sink__event(struct import_sink *s, const struct ctxmon_event *ev);
/* After the last event. */
int import_sink__finish(struct import_sink *s);
void import_sink__stats(const struct import_sink *s,
			struct ctxmon_import_stats *out);

#endif
