/*
 * ctxmon/outfile.h - output files written all or nothing.
 *
 * Every file ctxmon writes (a recording, an export, a report, a plot) goes
 * through one of these: the data is written to a new file beside the
 * target and renamed over it only by ctxmon_outfile_commit().  A failure
 * before that (bad input, a full disk, a signal, a crash) leaves a file
 * that was at the target byte for byte as it was, and no new file under
 * the target's name.
 *
 * Targets that are not regular files are written in place, since renaming
 * over them would replace the device or pipe itself: "-" (standard
 * output), /dev/null, a FIFO, a character device, and a symbolic link
 * (which goes on pointing where it did).  In-place targets get no such
 * guarantee; nothing can give one.
 *
 * Conventions as in ctxmon.h: constructors return NULL and set errno,
 * other calls return 0 or a negative errno.
 */
#ifndef CTXMON_OUTFILE_H
#define CTXMON_OUTFILE_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ctxmon_outfile;

enum ctxmon_outfile_flags {
	/* Mode 0600 whatever the target had: a recording shows what every
	 * process ran. */
	CTXMON_OUTFILE_PRIVATE = 1u << 0,
	/* The work file is PATH.part, a name the user can find, and it is
	 * left there when the process dies before the commit (a capture
	 * killed hard stays readable).  An existing PATH.part is never
	 * overwritten: the open fails with EEXIST. */
	CTXMON_OUTFILE_PART = 1u << 1,
	/* Refuse "-": the format needs a file it can seek in (SQLite). */
	CTXMON_OUTFILE_SEEKABLE = 1u << 2,
};

/*
 * Open an output for @path (see above for what is written in place).
 * Returns NULL and sets errno on failure (EEXIST: PATH.part exists with
 * CTXMON_OUTFILE_PART; ESPIPE: "-" with CTXMON_OUTFILE_SEEKABLE).  The
 * caller ends it with ctxmon_outfile_commit() or ctxmon_outfile_discard(),
 * which free it.
 */
struct ctxmon_outfile *ctxmon_outfile_open(const char *path, unsigned flags);

/* The stream to write to, opened on first call; owned by @o (do not
 * fclose it).  Standard output for "-".  NULL and errno on failure. */
FILE *ctxmon_outfile_stream(struct ctxmon_outfile *o);

/* The descriptor of the file being written; owned by @o.  For a writer
 * that takes ownership of a descriptor, hand it a dup(). */
int ctxmon_outfile_fd(const struct ctxmon_outfile *o);

/* The name under which the data is being written now (the work file
 * beside the target, or the target when written in place): for a library
 * that opens files by name (SQLite).  NULL for standard output. */
const char *ctxmon_outfile_work_path(const struct ctxmon_outfile *o);

/* The target's path, as given to ctxmon_outfile_open(). */
const char *ctxmon_outfile_path(const struct ctxmon_outfile *o);

/* True when the data goes to standard output. */
int ctxmon_outfile_is_stdout(const struct ctxmon_outfile *o);

/*
 * Flush, sync and rename the work file over the target; frees @o (NULL is
 * accepted and returns 0).  Returns 0, or a negative errno when anything
 * written could not reach the disk: the work file is then removed (with
 * CTXMON_OUTFILE_PART it is kept, as far as it was written) and the target
 * is as it was.
 */
int ctxmon_outfile_commit(struct ctxmon_outfile *o);

/* Give up: remove the work file (kept with CTXMON_OUTFILE_PART when
 * @keep_part is set), leave the target as it was, free @o.  NULL is
 * accepted. */
void ctxmon_outfile_discard(struct ctxmon_outfile *o, int keep_part);

/*
 * Remove every work file this process has open (not the PATH.part ones).
 * Async-signal-safe: for a handler of a fatal signal, which then re-raises
 * it.  The objects themselves are not freed.
 */
void ctxmon_outfile_unlink_all(void);

#ifdef __cplusplus
}
#endif

#endif
