/*
 * cmd_latency.h - `ctxmon latency`, and the gathering of cause rows that
 * `ctxmon stat --causes` shares with it.
 */
#ifndef CTXMON_CLI_LATENCY_H
#define CTXMON_CLI_LATENCY_H

#include <stdbool.h>

#include <ctxmon/ctxmon.h>
#include "output/output.h"

int cmd_latency(int argc, char **argv);

/*
 * Fill @cr with the causes of @a's rows (target rows only unless @all),
 * threads and processes, and its pairs; @arch names syscalls (NULL: this
 * build's).  0 or a negative errno; free with causes_report__free(), which
 * accepts a zeroed @cr.
 */
int causes_report__collect(const struct ctxmon_account *a, bool all,
			   const char *arch, struct causes_report *cr);
void causes_report__free(struct causes_report *cr);

#endif
