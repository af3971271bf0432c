/*
 * verdict.c - the one place a command that read a recording tells its
 * integrity verdict (docs/integrity.md): the library's line on stderr
 * when the recording is not complete, and the exit status the verdict
 * asks for, so that report, script, latency, hist, export and diff say
 * the same of the same file and exit by the same rule.
 */
#include <stdlib.h>

#include <ctxmon/record.h>

#include "cli/cli.h"

int cli__verdict(const char *cmd, const char *path,
		 const struct ctxmon_verdict *v, bool strict)
{
	char line[1024];

	/* a reading the command stopped (its output failed) is not one on
	 * the file: the command says why it stopped */
	if (v->complete || !v->finished)
		return EXIT_OK;
	/* cut to fit: the per-CPU list is at most 8 CPUs, a path can be
	 * long, and the line stays one line either way */
	ctxmon_verdict_format(v, path, line, sizeof(line));
	cli__err(cmd, "%s", line);
	return strict ? EXIT_FAIL : EXIT_OK;
}
