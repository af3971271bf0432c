/*
 * exp_cmds.h - the experiment and diff subcommands (cmd_experiment.c,
 * cmd_diff.c).
 */
#ifndef CTXMON_EXP_CMDS_H
#define CTXMON_EXP_CMDS_H

#include <stdio.h>

int cmd_experiment(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* One option's --help entry: "-x, --name ARG" and @help wrapped. */
void cli__opt_help(FILE *f, int shortopt, const char *name, const char *arg,
		   const char *help);

#endif
