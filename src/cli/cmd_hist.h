/*
 * cmd_hist.h - what `ctxmon hist` (cmd_hist.c) shares with its kernel
 * backend (cmd_hist_kernel.c): the trigger strings in command-line order.
 */
#ifndef CTXMON_CLI_HIST_H
#define CTXMON_CLI_HIST_H

#include <stdio.h>

#include <ctxmon/hist.h>

#include "cli/cli.h"

struct item {
	const char *event;	/* NULL: a synthetic event definition */
	const char *text;
};

/*
 * --backend kernel: install the triggers in a private tracefs instance,
 * run the target, print the kernel's hist files, remove everything.
 * Returns the exit status.
 */
int hist_kernel__run(const char *cmd, struct capture_opts *cap,
		     const struct item *items, size_t n, FILE *f, bool json);

int cmd_hist(int argc, char **argv);

#endif
