/*
 * backend.c - the table of capture backends and the "auto" choice.
 *
 * Adding a backend is one file with its struct backend_ops and one line
 * here.  "auto" tries the entries marked for it, in order, and keeps the
 * first that opens; the reasons the others failed go to the session log.
 */
#include <string.h>

#include "backend.h"

const struct backend_entry backends[] = {
	/* bpf first: "auto" takes it wherever it loads, perf otherwise.
	 * bpf-agg counts in the kernel (read_rows): chosen by name only. */
	{ &backend_bpf, true, false },
	{ &backend_perf, true, true },
	{ &backend_bpf_agg, false, false },
	{ &backend_ftrace, false, true },
	{ &backend_ftrace_text, false, true },
	/* The unprivileged tiers, last: what they cannot show is said in
	 * their .limits, and auto uses them only when tracing failed. */
	{ &backend_perfswitch, true, false },
	{ &backend_proc, true, false },
};
const size_t nbackends = ARRAY_SIZE(backends);

const struct backend_entry *backend__find(const char *name)
{
	for (size_t i = 0; i < nbackends; i++)
		if (!strcmp(backends[i].ops->name, name))
			return &backends[i];
	return NULL;
}
