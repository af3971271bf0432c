/*
 * ctxmon/import.h - read the traces people already have into a recording.
 *
 * Besides ftrace text (ctxmon_record_import_text in ctxmon/record.h),
 * ctxmon reads perf's perf.data (from `perf sched record` or `perf record
 * -e sched:*`: the tracepoint samples are decoded with the format files
 * perf stored in the file) and trace-cmd's trace.dat (through
 * libtracecmd).  Which one a file is, is told by its first bytes, never by
 * its name.
 */
#ifndef CTXMON_IMPORT_H
#define CTXMON_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include <ctxmon/record.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ctxmon_import_kind {
	CTXMON_IMPORT_TEXT = 1,	   /* ftrace text, perf script, trace-cmd report */
	CTXMON_IMPORT_PERF_DATA,   /* perf.data ("PERFILE2") */
	CTXMON_IMPORT_TRACE_DAT,   /* trace-cmd's trace.dat */
	CTXMON_IMPORT_BINARY,	   /* some other binary file */
	CTXMON_IMPORT_EMPTY,	   /* nothing to look at */
};

/* What the first @len bytes of a file say it is. */
enum ctxmon_import_kind ctxmon_import_sniff(const void *head, size_t len);

/* The formats ctxmon reads, for messages ("perf.data, trace.dat, ..."). */
const char *ctxmon_import_formats(void);

/*
 * Import the trace in the file @path ("-": standard input) into @w,
 * whatever its kind.  On failure returns a negative errno and puts one
 * line saying why (and what to do) into @err: -EMEDIUMTYPE for a binary
 * file of an unknown kind, -EPROTONOSUPPORT for a variant of a known
 * format that ctxmon does not read (a big-endian perf.data...),
 * -EBADMSG for a damaged file or too many bad lines.  @opts, @stats and
 * @err may be NULL.  The caller sets @w's metadata and closes it.
 */
int ctxmon_import_file(struct ctxmon_record *w, const char *path,
		       const struct ctxmon_import_opts *opts,
		       struct ctxmon_import_stats *stats, char *err,
		       size_t errlen);

/*
 * Import a perf.data held in memory (@buf, @len: the whole file).  The
 * samples of sched, irq and raw_syscalls tracepoints become events, in
 * time order; comm records become task declarations; lost records become
 * losses.  Same returns as ctxmon_import_file().
 */
int ctxmon_import_perf_mem(struct ctxmon_record *w, const void *buf,
			   size_t len, const struct ctxmon_import_opts *opts,
			   struct ctxmon_import_stats *stats, char *err,
			   size_t errlen);

/*
 * Import a trace.dat from the open file @fd (read from its start; not
 * closed) through libtracecmd.  Same returns as ctxmon_import_file();
 * -ENOTSUP when ctxmon was built without libtracecmd.
 */
int ctxmon_import_tracedat_fd(struct ctxmon_record *w, int fd,
			      const struct ctxmon_import_opts *opts,
			      struct ctxmon_import_stats *stats, char *err,
			      size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
