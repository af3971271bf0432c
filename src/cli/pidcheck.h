/*
 * pidcheck.h - stat --check for -p and -t (pidcheck.c): the switch
 * counts of the targets' threads, read from /proc around the capture.
 */
#ifndef CTXMON_CLI_PIDCHECK_H
#define CTXMON_CLI_PIDCHECK_H

#include <stddef.h>

#include <ctxmon/ctxmon.h>

struct capture_opts;
struct live_cmp;

/* The reads: before the capture opens, once it counts, before it stops,
 * after it stopped. */
enum { PIDCHECK_BEFORE, PIDCHECK_STARTED, PIDCHECK_STOPPING,
       PIDCHECK_STOPPED, PIDCHECK__READS };

struct pidcheck;

/* Read the targets of @cap (-p or -t) before the capture; NULL with
 * errno (EINVAL: another target, ENOMEM). */
struct pidcheck *pidcheck__new(const struct capture_opts *cap);
/* Read them again (@k: PIDCHECK_STARTED, ...); 0 or -ENOMEM. */
int pidcheck__read(struct pidcheck *pc, int k);
/* Add the traced rows of a snapshot (each interval's with -I). */
void pidcheck__add(struct pidcheck *pc, const struct ctxmon_stats *rows,
		   size_t n);
/* The comparison, for a backend of capabilities @caps. */
void pidcheck__result(const struct pidcheck *pc, unsigned caps,
		      struct live_cmp *out);
void pidcheck__free(struct pidcheck *pc);

#endif
