/*
 * backend.h - the registry of capture backends (backend.c).
 */
#ifndef CTXMON_BACKEND_H
#define CTXMON_BACKEND_H

#include "internal.h"

struct backend_entry {
	const struct backend_ops *ops;
	bool in_auto;		/* tried by "auto", in table order */
	bool needs_tracefs;	/* reads tracepoint formats from tracefs */
};

extern const struct backend_entry backends[];
extern const size_t nbackends;

/* The entry named @name, or NULL. */
const struct backend_entry *backend__find(const char *name);

#endif
