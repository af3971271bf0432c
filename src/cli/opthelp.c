/*
 * opthelp.c - one --help line per option, from an option table: the
 * option on the left, its help wrapped to the terminal-friendly width on
 * the right (used by cmd_experiment.c and cmd_diff.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli/exp_cmds.h"

#define LEFT 28
#define WIDTH 47

void cli__opt_help(FILE *f, int shortopt, const char *name, const char *arg,
		   const char *help)
{
	char left[64], sh[8] = "    ";
	const char *p = help;

	if (shortopt > 0 && shortopt < 0x100)
		snprintf(sh, sizeof(sh), "-%c, ", shortopt);
	snprintf(left, sizeof(left), "%s--%s%s%s", sh, name, arg ? " " : "",
		 arg ? arg : "");
	fprintf(f, "  %-*s", LEFT, left);
	if (strlen(left) > LEFT)
		fprintf(f, "\n  %-*s", LEFT, "");
	while (*p) {
		size_t n = strlen(p), cut = n;

		if (n > WIDTH) {
			for (cut = WIDTH; cut > 0 && p[cut] != ' '; cut--)
				;
			if (!cut)
				cut = WIDTH;
		}
		fprintf(f, " %.*s\n", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "  %-*s", LEFT, "");
	}
}
