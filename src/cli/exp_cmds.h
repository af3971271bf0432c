/*
 * exp_cmds.h - the experiment and diff subcommands (experiment.c, diff.c).
 */
#ifndef CTXMON_EXP_CMDS_H
#define CTXMON_EXP_CMDS_H

int cmd_experiment(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
