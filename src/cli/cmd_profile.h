/*
 * cmd_profile.h - `ctxmon profile` (cmd_profile.c): its entry point and doc.
 */
#ifndef CTXMON_CLI_PROFILE_H
#define CTXMON_CLI_PROFILE_H

#include "cli/opts.h"

int cmd_profile(int argc, char **argv);
extern const struct cli_doc profile_doc;

#endif
