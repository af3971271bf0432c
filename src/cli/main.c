/*
 * main.c - the ctxmon command: dispatch to a subcommand through a table.
 */
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exp_cmds.h"
#include "cli/hist.h"
#include "cli/opts.h"
#include "cli/latency.h"
#include "cli/profile.h"
#include "cli/recording.h"

static const struct cli_cmd commands[] = {
	{ "stat", cmd_stat, "count and time the context switches of a command, "
			    "processes or the machine",
	  &stat_doc },
	{ "top", cmd_top, "live view of the switches of the machine's threads "
			  "and processes",
	  &top_doc },
	{ "taskstats", cmd_taskstats, "the kernel's per-task counters over "
				      "taskstats, and tasks' final counters "
				      "at exit",
	  &taskstats_doc },
	{ "latency", cmd_latency, "wakeup latency histograms per thread, process "
				  "and CPU, and who wakes whom",
	  &latency_doc },
	{ "record", cmd_record, "write a capture's events to a file",
	  &record_doc },
	{ "report", cmd_report, "stat's numbers from a recording",
	  &report_doc },
	{ "script", cmd_script, "a recording as ftrace text, one line per event",
	  &script_doc },
	{ "import", cmd_import, "an ftrace text trace into a recording",
	  &import_doc },
	{ "hist", cmd_hist, "the kernel's hist-trigger language over the "
			    "event stream, live or on a recording" },
	{ "diff", cmd_diff, "two recordings or experiments compared, largest change first" },
	{ "experiment", cmd_experiment, "run commands N times each: statistics, tests, regression, plots" },
	{ "doctor", cmd_doctor, "what this kernel offers and which backends load" },
	{ "serve", cmd_serve, "per-cgroup and per-process metrics for Prometheus" },
	{ "profile", cmd_profile, "on- and off-CPU stacks, their causes and wakers", &profile_doc },
	{ "export", cmd_export, "a recording as a Perfetto trace, SQLite or Chrome JSON" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ctxmon [--version] [--help] COMMAND [ARGS]\n\n"
		   "ctxmon monitors and accounts context switches: how often "
		   "threads were\nswitched out, why, and what it cost them.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nexamples:\n"
		   "  ctxmon stat -- ./myprog        every thread of myprog, "
		   "checked against the kernel\n"
		   "  ctxmon stat -a -I 1000         the whole machine, once a "
		   "second\n"
		   "  ctxmon stat -p 1234 --json     one process, as JSON\n\n"
		   "'ctxmon COMMAND --help' describes a command's options; "
		   "'ctxmon --man\n[COMMAND]' writes a man page, "
		   "'ctxmon --completion' the bash completion.\n");
}

/*
 * The man page of a command that has no option table yet (cli_doc): its
 * own --help text, verbatim, so the page still says what --help says.
 * 0, or -1 when the text could not be captured.
 */
static int man_from_help(FILE *f, const struct cli_cmd *c)
{
	char name[64], help[] = "--help", line[1024];
	char *argv[] = { name, help, NULL };
	FILE *tmp = tmpfile();
	int ret = -1, st;
	pid_t pid;

	if (!tmp)
		return -1;
	snprintf(name, sizeof(name), "ctxmon %s", c->name);
	fflush(NULL);
	/* in a child: a command's --help may end the process */
	pid = fork();
	if (pid < 0)
		goto out;
	if (pid == 0) {
		if (dup2(fileno(tmp), STDOUT_FILENO) < 0)
			_exit(1);
		c->run(2, argv);
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		goto out;
	rewind(tmp);
	fputs(".TH \"CTXMON-", f);
	for (const char *p = c->name; *p; p++)
		fputc(toupper((unsigned char)*p), f);
	fprintf(f, "\" 1 \"\" \"ctxmon %s\" \"ctxmon manual\"\n"
		   ".SH NAME\nctxmon\\-%s \\- %s\n.SH DESCRIPTION\n.nf\n",
		CTXMON_VERSION, c->name, c->summary);
	while (fgets(line, sizeof(line), tmp)) {
		if (!strncasecmp(line, "examples:", 9)) {
			fputs(".fi\n.SH EXAMPLES\n.nf\n", f);
			continue;
		}
		/* a line roff would take as a request; backslashes; '-' as
		 * a minus sign, so options read as typed */
		if (line[0] == '.' || line[0] == '\'')
			fputs("\\&", f);
		for (const char *p = line; *p; p++) {
			if (*p == '\\')
				fputs("\\e", f);
			else if (*p == '-')
				fputs("\\-", f);
			else
				fputc(*p, f);
		}
	}
	fputs(".fi\n", f);
	ret = 0;
out:
	fclose(tmp);
	return ret;
}

/* ctxmon.1 and ctxmon-CMD.1 of every command, into @dir. */
static int man_pages(const char *dir)
{
	char path[4096];
	FILE *f;

	for (size_t i = 0; i <= ARRAY_SIZE(commands); i++) {
		const struct cli_cmd *c = i ? &commands[i - 1] : NULL;

		snprintf(path, sizeof(path), "%s/ctxmon%s%s.1", dir,
			 c ? "-" : "", c ? c->name : "");
		f = fopen(path, "we");
		if (!f) {
			fprintf(stderr, "ctxmon: cannot write %s: %m\n", path);
			return EXIT_FAIL;
		}
		if (c && c->doc)
			cli__man(f, c);
		else if (c && man_from_help(f, c) < 0)
			fprintf(stderr, "ctxmon: no help text of %s for its man "
					"page\n", c->name);
		else if (!c)
			cli__man_main(f, commands, ARRAY_SIZE(commands));
		if (fclose(f) == EOF) {
			fprintf(stderr, "ctxmon: writing %s: %m\n", path);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	/* the documentation the build installs, written from the tables */
	if (!strcmp(argv[1], "--completion")) {
		cli__completion(stdout, commands, ARRAY_SIZE(commands));
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--man-pages") && argc == 3)
		return man_pages(argv[2]);
	if (!strcmp(argv[1], "--man")) {
		for (size_t i = 0; argc > 2 && i < ARRAY_SIZE(commands); i++) {
			if (!strcmp(argv[2], commands[i].name)) {
				if (commands[i].doc)
					cli__man(stdout, &commands[i]);
				else if (man_from_help(stdout, &commands[i]) < 0)
					return EXIT_FAIL;
				return EXIT_OK;
			}
		}
		if (argc > 2) {
			fprintf(stderr, "ctxmon: no man page for '%s'; 'ctxmon "
					"--help' lists the commands\n", argv[2]);
			return EXIT_USAGE;
		}
		cli__man_main(stdout, commands, ARRAY_SIZE(commands));
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ctxmon %s\n", CTXMON_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name)) {
			/* getopt names the program in its messages. */
			static char name[64];

			snprintf(name, sizeof(name), "ctxmon %s", argv[1]);
			argv[1] = name;
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "ctxmon: unknown command '%s'; 'ctxmon --help' lists "
			"the commands\n", argv[1]);
	return EXIT_USAGE;
}
